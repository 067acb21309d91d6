"""tune.search type ax (SPEC §13): Ray's AxSearch over Ax's AxClient (ax-platform 1.2.4, the `ax` extra).

Ray's AxSearch converts the Tuner's param_space into Ax parameters (ray.tune.search.ax: a range per uniform, loguniform,
randint and lograndint, their q dropped; a choice per choice; a fixed parameter per value an objective's params leave
unsearched), and AxClient refuses, when the search starts, what it cannot hold: a choice of lists or of mixed types, a
range with one integer, a null fixed value. Those are found here, located, before Ray starts.

`parameter_constraints` and `outcome_constraints` are Ax's strings (Ax's `constraint_from_str` and
`outcome_constraint_from_str` grammar: tokens split on spaces, `<=` or `>=`, weights as `2*name`). A parameter
constraint names tune.space paths, as points_to_evaluate does; the compiled script gives Ax the names Ray's AxSearch
gives the parameters (`ax_name`): a model spec's path as it is, an objective's param name with `/` between nested keys.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from specc.check.fields import Locator, did_you_mean
from specc.spec.errors import Problem, excerpt
from specc.spec.experiment import Experiment

OPS = ("<=", ">=")
FLOAT_RANGES = ("uniform", "quniform", "loguniform", "qloguniform")
INT_RANGES = ("randint", "qrandint", "lograndint")
LINEAR = ("uniform", "quniform", "randint", "qrandint")  # what Ax constrains: ranges, not on a log scale
FORMS = "'a + 2*b <= 1.5', 'a - b >= 0' or 'a <= b', with a space around each operator"
SCALARS = (bool, int, float, str)


@dataclass(frozen=True)
class Constraint:
    """A parameter constraint as Ax reads it: (weight, name) terms, `<=` or `>=`, and a bound (None: the order
    constraint 'a <= b', two terms)."""

    terms: tuple[tuple[float, str], ...]
    op: str
    bound: float | None


def _number(token: str) -> float | None:
    try:
        value = float(token)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def parse_parameter_constraint(text: str) -> Constraint | str:
    """A constraint, or why Ax would refuse its form (Ax 1.2.4's `constraint_from_str`)."""
    tokens = text.split()
    if len(tokens) == 3 and tokens[1] in OPS and _number(tokens[2]) is None and "*" not in text:
        return Constraint(((1.0, tokens[0]), (1.0, tokens[2])), tokens[1], None)
    if len(tokens) < 3 or len(tokens) % 2 == 0 or tokens[-2] not in OPS:
        return f"not one of Ax's forms: {FORMS}"
    bound = _number(tokens[-1])
    if bound is None:
        return f"the bound {excerpt(tokens[-1])} is not a finite number"
    terms, sign = [], 1.0
    for index, token in enumerate(tokens[:-2]):
        if index % 2:
            if token not in ("+", "-"):
                return f"{excerpt(token)} between terms: Ax takes + or - there ({FORMS})"
            sign = 1.0 if token == "+" else -1.0
            continue
        weight, star, name = token.rpartition("*")
        if star and (_number(weight) is None or not name):
            return f"{excerpt(token)} is not weight*name (no spaces around *)"
        if star:
            terms.append((sign * _number(weight), name))
        else:  # Ax reads a leading '-' as the weight -1
            terms.append((-sign if name.startswith("-") else sign, name.removeprefix("-")))
        if not terms[-1][1]:
            return f"{excerpt(token)} names no parameter"
    return Constraint(tuple(terms), tokens[-2], bound)


def parse_outcome_constraint(text: str) -> tuple[str, str, float] | str:
    """(metric, op, bound), or why Ax would refuse it (Ax 1.2.4's `outcome_constraint_from_str`)."""
    tokens = text.split()
    if len(tokens) != 3 or tokens[1] not in OPS:
        return "not Ax's form 'metric <= bound' or 'metric >= bound'"
    if tokens[2].endswith("%"):
        return "a relative bound (%) is relative to a status quo config, which Ray's AxSearch does not give Ax"
    bound = _number(tokens[2])
    if bound is None:
        return f"the bound {excerpt(tokens[2])} is not a finite number"
    return tokens[0], tokens[1], bound


def outcome_metrics(e: Experiment) -> Iterator[tuple[str, tuple]]:
    """(metric, path) of each outcome constraint that parses: checked as every metric a spec names (E201)."""
    search = e.tune.search if e.tune is not None else None
    for index, text in enumerate(getattr(search, "outcome_constraints", [])):
        parsed = parse_outcome_constraint(text)
        if not isinstance(parsed, str):
            yield parsed[0], ("tune", "search", "outcome_constraints", index)


def ax_name(e: Experiment, path: str) -> str:
    """The name Ray's AxSearch gives a tune.space path's parameter: the param_space key, nested keys joined by `/`
    (a model spec's keys are its dotted paths, an objective's its params, nested where the path is)."""
    if e.objective is None:
        return path
    return path.removeprefix("objective.params.").replace(".", "/")


def ax_constraint(e: Experiment, text: str) -> str:
    """A parameter constraint as written, each tune.space path in it replaced by its Ax name."""
    tokens = text.split()
    for index, token in enumerate(tokens):
        weight, star, name = token.rpartition("*")
        sign = "-" if not star and name.startswith("-") and name[1:] in e.tune.space else ""
        if name.removeprefix(sign) in e.tune.space:
            tokens[index] = weight + star + sign + ax_name(e, name.removeprefix(sign))
    return " ".join(tokens)


def ax_value(distribution, value: Any) -> Any:
    """A point's value as Ax's parameter takes it: a float range's (or a choice of floats') a float, an integer
    range's an int; Ax refuses 2 where it expects 2.0."""
    number = isinstance(value, int | float) and not isinstance(value, bool)
    floats = distribution.kind in FLOAT_RANGES or (
        distribution.kind == "choice" and all(type(v) is float for v in distribution.args)
    )
    if number and floats:
        return float(value)
    if distribution.kind in INT_RANGES and isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def ax_point(e: Experiment, point: dict) -> dict:
    """A points_to_evaluate entry as AxSearch hands it to AxClient.attach_trial: every Ax parameter by name, the
    values an objective's params fix included (Ax's trial names them all)."""
    if e.objective is None:
        return {path: ax_value(e.tune.space[path], point[path]) for path in e.tune.space}
    values = {ax_name(e, path): ax_value(e.tune.space[path], value) for path, value in point.items()}
    fixed = {"/".join(map(str, at)): value for at, value in _leaves(e.objective.params) if not _searched(e, at)}
    return {**fixed, **values}


def _leaves(value: Any, at: tuple = ()) -> Iterator[tuple[tuple, Any]]:
    """(path, value) of each value in nested mappings and lists, as Ray's parse_spec_vars resolves them."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, (*at, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _leaves(item, (*at, index))
    else:
        yield at, value


def _searched(e: Experiment, at: tuple) -> bool:
    """Whether tune.space samples this param value (its path or a path above it)."""
    return any(".".join(("objective", "params", *map(str, at[:n]))) in e.tune.space for n in range(1, len(at) + 1))


def _bounds(distribution) -> tuple[float, float]:
    """The lowest and highest value of a linear range as Ax takes it (its q dropped, an integer's upper bound in)."""
    lo, hi = distribution.args[0], distribution.args[1]
    return (lo, hi) if distribution.kind in ("uniform", "quniform") else (lo, hi - 1)


def ax_problems(e: Experiment, at: Locator) -> Iterator[Problem]:
    """Every check of this module, for a spec whose tune.search.type is ax."""
    if e.tune is None or e.tune.search.type != "ax":
        return
    yield from _parameters(e, at)
    yield from _parameter_constraints(e, at)
    yield from _outcome_constraints(e, at)
    yield from _points(e, at)


def _parameters(e: Experiment, at: Locator) -> Iterator[Problem]:
    """What AxClient refuses in the parameters Ray's AxSearch makes of the param_space."""
    for path, distribution in e.tune.space.items():
        where = ("tune", "space", path, distribution.kind)
        args = distribution.args
        if distribution.kind in INT_RANGES and args[1] - args[0] < 2:
            message = (
                f"Ray's AxSearch gives Ax the integers {args[0]} to {args[1] - 1}, and Ax's range needs two values "
                "at least"
            )
            yield at("E204", message, where, f"a wider range, or set {path} outside the search", key=True)
        if distribution.kind != "choice" or any(isinstance(v, dict) for v in args):
            continue  # a conditional choice: E233
        if any(not isinstance(v, SCALARS) for v in args):
            value = next(v for v in args if not isinstance(v, SCALARS))
            message = f"Ax's choice takes numbers, strings or booleans, not {excerpt(value)}"
            yield at("E204", message, where, "search type optuna or hyperopt samples any value", key=True)
        elif len({type(v) for v in args}) > 1:
            kinds = ", ".join(dict.fromkeys(type(v).__name__ for v in args))
            message = f"Ax's choice takes values of one type; these are {kinds}"
            yield at("E204", message, where, "write each the same way, e.g. 1.0 beside 0.5", key=True)
    if e.objective is None:
        return
    for place, value in _leaves(e.objective.params):
        names = [str(key) for key in place if isinstance(key, str)]
        if _searched(e, place):
            continue
        where = ("objective", "params", *place)
        if value is None:
            message = "Ray's AxSearch gives Ax each param the search leaves fixed, and Ax's fixed value cannot be null"
            yield at("E100", message, where, "a value, or leave the param out and default it in the function")
        elif any(" " in name or "/" in name for name in names):
            message = "Ray's AxSearch names Ax's parameters by the params' keys: Ax takes no space, Ray no '/' in one"
            yield at("E100", message, where, "a key without spaces or '/'", key=True)


def _parameter_constraints(e: Experiment, at: Locator) -> Iterator[Problem]:
    space = e.tune.space
    for index, text in enumerate(e.tune.search.parameter_constraints):
        where = ("tune", "search", "parameter_constraints", index)
        parsed = parse_parameter_constraint(text)
        if isinstance(parsed, str):
            yield at("E107", f"Ax cannot read {excerpt(text)}: {parsed}", where, f"e.g. {FORMS}")
            continue
        names = [name for _, name in parsed.terms]
        unknown = [name for name in names if name not in space]
        if unknown:
            message = f"{excerpt(unknown[0])} is not a tune.space path (a constraint names the sampled values)"
            by_ax_name = {ax_name(e, path): path for path in space}
            hint = f"by its tune.space path: {by_ax_name[unknown[0]]}" if unknown[0] in by_ax_name else None
            yield at(
                "E104", message, where, hint or did_you_mean(unknown[0], list(space)) or "one of: " + ", ".join(space)
            )
            continue
        if len(set(names)) < len(names):
            message = f"Ax refuses a parameter named twice in one constraint: {excerpt(text)}"
            yield at("E100", message, where, "name each path once, its weights summed")
            continue
        refused = [name for name in names if space[name].kind not in LINEAR]
        if refused:
            entry = space[refused[0]]
            why = "on a log scale" if entry.log else f"a {entry.kind} (Ax infers an order and a scale for its values)"
            message = f"Ax constrains only ranges on a linear scale: {refused[0]} is {why}"
            yield at("E100", message, where, "constrain uniform, quniform, randint or qrandint paths")
            continue
        yield from _feasible(parsed, space, where, at)


def _feasible(parsed: Constraint, space: dict, where: tuple, at: Locator) -> Iterator[Problem]:
    """A constraint no config of the space meets on its own: Ax would find no point to propose (InfeasibilityError)."""
    bound = 0.0 if parsed.bound is None else parsed.bound
    terms = parsed.terms if parsed.bound is not None else ((1.0, parsed.terms[0][1]), (-1.0, parsed.terms[1][1]))
    sign = 1.0 if parsed.op == "<=" else -1.0  # as <=: sign * sum(w x) <= sign * bound
    lowest = sum(min(sign * w * lo, sign * w * hi) for w, name in terms for lo, hi in [_bounds(space[name])])
    if lowest > sign * bound:
        reach = "smallest" if parsed.op == "<=" else "largest"
        message = f"no config of tune.space meets it: the {reach} the left side reaches is {sign * lowest:g}"
        yield at("E100", message, where, "check the bound against the ranges it names")


def _outcome_constraints(e: Experiment, at: Locator) -> Iterator[Problem]:
    metrics = [metric for metric, _ in e.tune.objectives]
    for index, text in enumerate(e.tune.search.outcome_constraints):
        where = ("tune", "search", "outcome_constraints", index)
        parsed = parse_outcome_constraint(text)
        if isinstance(parsed, str):
            yield at("E107", f"Ax cannot read {excerpt(text)}: {parsed}", where, "e.g. 'num_parameters <= 50000'")
        elif parsed[0] in metrics:
            message = f"Ax optimises {parsed[0]} (tune.metric) and cannot also constrain it"
            yield at("E100", message, where, "constrain another reported metric; stop.when stops on this one")
    if e.tune.search.outcome_constraints and e.tune.repeat > 1:
        message = (
            "Ray's Repeater tells the searcher only the mean of tune.metric, and AxSearch reads each outcome "
            "constraint's metric from it too: the run would fail when the first config's repeats end (KeyError)"
        )
        yield at("E100", message, ("tune", "repeat"), "repeat: 1 with outcome_constraints", also=where[:3])


def _points(e: Experiment, at: Locator) -> Iterator[Problem]:
    """A point AxClient.attach_trial refuses: a value outside its range or not among its choice's values (the values
    are as the search samples them; E212 checks them against the fields)."""
    for index, point in enumerate(e.tune.search.points_to_evaluate):
        for path, value in point.items():
            distribution = e.tune.space.get(path)
            if distribution is None:
                continue
            where = ("tune", "search", "points_to_evaluate", index, path)
            args, value = distribution.args, ax_value(distribution, value)
            if distribution.kind == "choice":
                if not any(value == v and type(value) is type(v) for v in args):
                    message = f"{excerpt(value)} is not one of {path}'s choices, as Ax requires"
                    yield at("E212", message, where, "one of: " + ", ".join(excerpt(v) for v in args))
            elif distribution.kind in (*FLOAT_RANGES, *INT_RANGES) and isinstance(value, int | float):
                lo, hi = (args[0], args[1]) if distribution.kind in FLOAT_RANGES else (args[0], args[1] - 1)
                if not lo <= value <= hi:
                    message = f"{value!r} is outside {path}'s range [{lo:g}, {hi:g}] in Ax"
                    yield at("E212", message, where, f"a value from {lo:g} to {hi:g}")
