"""Conditional search spaces (SPEC §12): a `choice` or `grid` in tune.space whose options are mappings holding
distributions. An option stands for the whole section at its path (training.optimizer: an optimizer), so each
option is validated as that section, its distributions sampled only when it is chosen, and the trial's config
gets the option whole: an adam trial has no momentum.

`compiled_options` gives each option as the trial receives it: the section's own fields in their order, its
defaults filled in, the option's distributions (as `Distribution` objects) where it samples them. The compiler
writes it as code; `specc plan` samples it in the order Ray does (the compiled dict's order).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pydantic import TypeAdapter, ValidationError

from specc.check.fields import Locator
from specc.read.document import Path
from specc.spec.errors import Problem, excerpt
from specc.spec.experiment import Experiment
from specc.spec.search import SUPPORTED_DISTRIBUTIONS
from specc.spec.space import DISTRIBUTION_NAMES, AnyDistribution, Distribution

# Sections whose type the compiled script handles one branch per type: the options may choose among types.
TYPES_CHOSEN = ("training.optimizer",)
_DISTRIBUTION = TypeAdapter(AnyDistribution)
EXTRA = "extra fields not permitted"


def is_distribution(value: Any) -> bool:
    """A one-key mapping whose key names a distribution: {loguniform: [1e-4, 1e-2]}."""
    return isinstance(value, dict) and len(value) == 1 and next(iter(value)) in DISTRIBUTION_NAMES


def nested(value: Any, at: tuple = ()) -> Iterator[tuple[tuple, Any]]:
    """(path inside the option, the distribution's raw mapping) for each distribution an option holds."""
    if is_distribution(value):
        yield at, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from nested(item, (*at, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from nested(item, (*at, index))


def is_conditional(entry: Any) -> bool:
    """A choice or grid with at least one option that is a mapping holding a distribution."""
    if not isinstance(entry, Distribution) or entry.kind not in ("choice", "grid"):
        return False
    return any(isinstance(option, dict) and any(nested(option)) for option in entry.args)


def conditional_entries(e: Experiment) -> Iterator[tuple[str, Distribution]]:
    if e.tune:
        for key, entry in e.tune.space.items():
            if is_conditional(entry):
                yield key, entry


def mapping_entries(e: Experiment) -> Iterator[tuple[str, Distribution]]:
    """tune.space choices and grids with a mapping among their options: each option is a whole section, which the
    script holds with its defaults filled in (compiled_options)."""
    if e.tune:
        for key, entry in e.tune.space.items():
            if entry.kind in ("choice", "grid") and any(isinstance(option, dict) for option in entry.args):
                yield key, entry


def parsed(raw: dict) -> Distribution | None:
    try:
        return _DISTRIBUTION.validate_python(raw)
    except ValidationError:
        return None


def parse_error(raw: dict) -> str:
    try:
        _DISTRIBUTION.validate_python(raw)
    except ValidationError as error:
        first = error.errors(include_url=False)[0]
        return first["msg"]
    return ""


def option_label(options: list, index: int) -> str:
    """An option's name in the plan, Optuna's categorical and HyperOpt's labels: its type when the options have
    distinct types, else its index."""
    types = [option.get("type") if isinstance(option, dict) else None for option in options]
    unique = all(isinstance(t, str) for t in types) and len(set(types)) == len(types)
    return types[index] if unique else str(index)


def _put(node: Any, path: tuple, value: Any) -> Any:
    """A copy of `node` with `value` at `path` (dict keys and list indexes)."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(node, dict):
        return {**node, head: _put(node[head], rest, value)}
    copied = list(node)
    copied[head] = _put(copied[head], rest, value)
    return copied


def _get(node: Any, path: tuple) -> Any:
    for part in path:
        node = node[part]
    return node


def with_values(option: Any, pick) -> Any:
    """The option with each of its distributions replaced by pick(path, Distribution)."""
    for path, raw in list(nested(option)):
        option = _put(option, path, pick(path, parsed(raw)))
    return option


def compiled_options(e: Experiment, key: str, entry: Distribution) -> list:
    """Each option as the trial's config receives it: a mapping validated as the section at `key` (defaults filled,
    the section's field order), Distribution objects where the option samples. Other options are as written."""
    from specc.check.search_space import field_adapter

    adapter = field_adapter(e, key.split(".")) if e.objective is None else None
    options = []
    for option in entry.args:
        if not isinstance(option, dict):
            options.append(option)
            continue
        distributions = {path: parsed(raw) for path, raw in nested(option)}
        if adapter is None:  # an objective's params are free-form: the option as written
            options.append(with_values(option, lambda path, d: d))
            continue
        probe = with_values(option, lambda path, d: d.probes()[0])
        full = adapter.dump_python(adapter.validate_python(probe), mode="python")
        for path, distribution in distributions.items():
            full = _put(full, path, distribution)
        options.append(full)
    return options


# -- checks -----------------------------------------------------------------------------------------------------
def options_valid(e: Experiment, at: Locator) -> Iterator[Problem]:
    """Every reachable combination is a valid spec: each option's distributions parse, each value they can produce
    fits its field (E203, like tune.space values), and the option is valid as the section it stands for (E232)."""
    from specc.check.search_space import _path_problem, field_adapter

    resolved = None
    for key, entry in conditional_entries(e):
        resolved = resolved if resolved is not None else e.model_dump()
        if _path_problem(resolved, key.split(".")):
            continue  # reported by space_paths
        adapter = field_adapter(e, key.split("."))
        for index, option in enumerate(entry.args):
            where = ("tune", "space", key, entry.kind, index)
            if not isinstance(option, dict):
                continue
            raws = list(nested(option))
            broken = [(path, raw) for path, raw in raws if parsed(raw) is None]
            for path, raw in broken:
                shown = ".".join(str(part) for part in (key, *path))
                yield at("E203", f"{shown}: {parse_error(raw)}", (*where, *path, next(iter(raw))))
            if broken or not raws:
                continue
            if any(parsed(raw).kind == "grid" for _path, raw in raws):
                continue  # conditional_searchable reports it
            yield from _option_fits(option, raws, adapter, key, where, at)


def _option_fits(option: dict, raws: list, adapter: TypeAdapter, key: str, where: Path, at: Locator):
    sampled = {path for path, _raw in raws}
    middle = with_values(option, lambda path, d: d.probes()[len(d.probes()) // 2])
    for loc, message in _errors(adapter, middle):
        inner = _inside(option, loc)
        if inner in sampled and message != EXTRA:
            continue  # a value a distribution produces: E203 below
        shown = ".".join(str(part) for part in (key, *inner))
        yield at(
            "E232",
            f"option {where[-1]} of {key} is not a valid {_section_word(key)}: {shown}: {message}",
            (*where, *inner),
            _option_hint(option, key, message),
            key=bool(inner) and loc[-1] == inner[-1] and message == EXTRA,
        )
        return
    for path, raw in raws:
        distribution = parsed(raw)
        for value in distribution.probes():
            wrong = [
                message for loc, message in _errors(adapter, _put(middle, path, value)) if _inside(option, loc) == path
            ]
            if wrong:
                shown = ".".join(str(part) for part in (key, *path))
                yield at(
                    "E203",
                    f"{distribution.kind} can produce {excerpt(value)}, which {shown} does not accept: {wrong[0]}",
                    (*where, *path, distribution.kind),
                )
                break


def _errors(adapter: TypeAdapter, value: Any) -> list[tuple[tuple, str]]:
    """(location, message) of each error validating `value` ([] when it is valid)."""
    try:
        adapter.validate_python(value)
    except ValidationError as error:
        found = []
        for item in error.errors(include_url=False):
            message = item["msg"][0].lower() + item["msg"][1:]
            found.append((tuple(item["loc"]), EXTRA if item["type"] == "extra_forbidden" else message))
        return found
    return []


def _inside(option: Any, loc: tuple) -> tuple:
    """The part of a pydantic error location that is a path inside the option (a union's tag is skipped)."""
    path: list = []
    node = option
    for part in loc:
        inside = part in node if isinstance(node, dict) else isinstance(part, int) and part < len(node)
        if isinstance(node, dict | list) and inside:
            path.append(part)
            node = node[part]
    return tuple(path)


def _section_word(key: str) -> str:
    return key.split(".")[-1]


def _option_hint(option: dict, key: str, message: str) -> str | None:
    kind = option.get("type")
    if message == EXTRA and isinstance(kind, str):
        return f"each option is a whole {_section_word(key)} of its type: give it only the fields {kind} takes"
    return None


def conditional_searchable(e: Experiment, at: Locator) -> Iterator[Problem]:
    """What can sample a conditional space (E233): random, grid, optuna, hyperopt in tune.space; not bayesopt, not
    a grid inside an option, not pbt mutations. A section's type can vary only where the script has one branch per
    type (E234). An option's distributions must be ones the searcher samples (E204)."""
    search = e.tune.search.type if e.tune else None
    for key, entry in conditional_entries(e):
        where = ("tune", "space", key, entry.kind)
        if search in ("bayesopt", "bohb", "nevergrad", "zoopt", "ax"):  # Ray converts their space to a fixed one
            yield at(
                "E233",
                f"{search} cannot search {key}'s options: it samples a fixed set of parameters, not parameters that "
                "exist only in some trials",
                where,
                "use search type optuna (define-by-run) or hyperopt (nested hp.choice), or random",
            )
            continue
        supported = SUPPORTED_DISTRIBUTIONS[search]
        for index, option in enumerate(entry.args):
            for path, raw in nested(option) if isinstance(option, dict) else ():
                kind = next(iter(raw))
                if kind == "grid":
                    yield at(
                        "E233",
                        f"a grid inside an option of {key} would multiply only the trials that choose it",
                        (*where, index, *path, kind),
                        "use choice inside an option; grid the option itself or another path",
                    )
                elif supported is not None and kind not in supported:
                    hint = "supported: " + ", ".join(supported)
                    if search == "grid":
                        hint = "search type random combines grid entries with sampled ones"
                    yield at("E204", f"search type {search} cannot sample {kind}", (*where, index, *path, kind), hint)
        yield from _types_vary(e, key, entry, where, at)
        if search in ("optuna", "hyperopt") and e.tune.search.points_to_evaluate:
            yield at(
                "E233",
                f"points_to_evaluate cannot preset {key}'s options: {search} names an option's parameters by "
                "option, which a point's values do not give",
                ("tune", "search", "points_to_evaluate"),
                "leave points_to_evaluate out, or use search type random",
            )
    if e.scheduler is not None and e.scheduler.type == "pbt":
        for key, entry in e.scheduler.mutations.items():
            if is_conditional(entry):
                yield at(
                    "E233",
                    "pbt cannot perturb an option's distributions: it resamples or shifts one value per path",
                    ("scheduler", "mutations", key, entry.kind),
                    "mutate each field of the option by its own path",
                )


def _types_vary(e: Experiment, key: str, entry: Distribution, where: Path, at: Locator) -> Iterator[Problem]:
    if key in TYPES_CHOSEN or e.objective is not None:
        return
    node: Any = e.model_dump()
    for part in key.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    base = node.get("type") if isinstance(node, dict) else None
    for index, option in enumerate(entry.args):
        other = option.get("type") if isinstance(option, dict) else None
        if base is not None and other is not None and other != base:
            yield at(
                "E234",
                f"{key}'s type is compiled into the script ({base}): an option of type {other} cannot run",
                (*where, index, "type"),
                f"the options may vary {key}'s fields, not its type; compare types with two specs",
            )


def conditional_problems(e: Experiment, at: Locator) -> Iterator[Problem]:
    yield from conditional_searchable(e, at)
    yield from options_valid(e, at)
