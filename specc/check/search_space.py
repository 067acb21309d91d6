"""Rules on the search space (SPEC §7): tune.space, pbt mutations and pb2 bounds name fields of the spec, and
every value a distribution can produce is valid for its field — checked through that field's own pydantic
type (`field_adapter`); search algorithm x distribution; points_to_evaluate.
"""

from __future__ import annotations

import functools
import types
import typing
from collections.abc import Iterator
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError
from pydantic.errors import PydanticInvalidForJsonSchema

from specc.check.fields import Locator, did_you_mean
from specc.check.named import annotation as annotation_of
from specc.check.named import named_entry
from specc.read.document import Path
from specc.read.loader import list_index
from specc.spec.dataset import FILE_TYPES
from specc.spec.errors import Problem, excerpt
from specc.spec.experiment import Experiment
from specc.spec.named import NamedClass
from specc.spec.schedule import LEFT_OUT
from specc.spec.search import SUPPORTED_DISTRIBUTIONS
from specc.spec.space import Distribution, has_ray_directive

SEARCHABLE = ("model", "dataset", "training")
# With these loaders the data is prepared once by the driver, before any trial samples its config.
DRIVER_DATA = {"ray_data": "loader ray_data", "files": "file datasets"}


def space_entries(e: Experiment) -> Iterator[tuple[str, Path, dict]]:
    """(kind, where, entries): tune.space, pbt mutations, pb2 bounds."""
    if e.tune:
        yield "space", ("tune", "space"), e.tune.space
    if e.scheduler is not None and e.scheduler.type == "pbt":
        yield "mutations", ("scheduler", "mutations"), e.scheduler.mutations
    if e.scheduler is not None and e.scheduler.type == "pb2":
        yield "bounds", ("scheduler", "bounds"), e.scheduler.bounds


def space_paths(e: Experiment, at: Locator) -> Iterator[Problem]:
    resolved = None
    for _kind, where, entries in space_entries(e):
        resolved = resolved if resolved is not None else e.model_dump()
        keys = list(entries)
        for key in keys:
            entry_path = (*where, key)
            parts = key.split(".")
            problem = None if _named_argument(e, parts) else _path_problem(resolved, parts)
            if parts[:2] == ["training", "lr_schedule"] and parts[2:] and parts[2] in LEFT_OUT:
                problem = None  # a field every schedule has, left out of the dump when not given (compiled_in)
            entry = named_entry(e, parts[1]) if problem and parts[0] == "training" and len(parts) > 1 else None
            if entry is not None:  # the class's own arguments, which the spec need not have given
                listed = f"{entry.class_name}'s arguments: {', '.join(entry.settable)}"
                problem = (
                    f"{entry.path} takes no argument {excerpt(parts[-1])}",
                    did_you_mean(parts[-1], entry.settable) or listed,
                )
            if problem:
                yield at("E202", problem[0], entry_path, problem[1], key=True)
                continue
            overlapping = [other for other in keys if other != key and other.startswith(key + ".")]
            if overlapping:
                yield at(
                    "E202",
                    f"{key} and {overlapping[0]} overlap: sample a value or its parts, not both",
                    entry_path,
                    key=True,
                )
                continue
            adapter = field_adapter(e, parts)
            value = entries[key]
            if isinstance(value, Distribution):
                yield from _probe(value, adapter, key, (*entry_path, value.kind), at)
            else:
                name = "bounds" if _kind == "bounds" else "mutation"
                yield from _probe_values(value, adapter, key, entry_path, at, name)


def _named_argument(e: Experiment, parts: list[str]) -> bool:
    """An argument of the class a training section names (training.optimizer.rho, training.lr_schedule.max_lr,
    training.loss.label_smoothing), which the spec need not give to search it."""
    entry = named_entry(e, parts[1]) if parts[0] == "training" and len(parts) == 3 else None
    return entry is not None and parts[2] in entry.settable


def _path_problem(resolved: dict, parts: list[str]) -> tuple[str, str | None] | None:
    if resolved.get("objective") is not None:
        return _objective_path_problem(resolved["objective"]["params"], parts)
    if parts[0] == "scaling":
        return "scaling cannot be searched over: Ray reserves a trial's resources before it samples", None
    if parts[0] not in SEARCHABLE:
        return f"'{parts[0]}' cannot be searched over", "search paths start with " + ", ".join(SEARCHABLE)
    node: Any = resolved
    for depth, part in enumerate(parts):
        here = ".".join(parts[:depth]) or "the spec"
        if isinstance(node, dict):
            if part not in node:
                kind = f"{node['type']} " if "type" in node else ""
                hint = did_you_mean(part, list(node)) or "fields here: " + ", ".join(node)
                return f"{here} ({kind.strip() or 'section'}) has no field '{part}'", hint
            node = node[part]
        elif isinstance(node, list):
            index = list_index(part)  # `¹` is a digit to str.isdigit, not to int(): one rule for every key path
            if index is None or index >= len(node):
                return f"{excerpt(part)} is not an index of {here}, a list of {len(node)} item(s)", None
            node = node[index]
        elif node is None:
            return f"{here} is not set (null), so it has no '{part}'", f"give {here} a value in the spec first"
        else:
            return f"{here} is a value, not a section: '{part}' cannot be inside it", None
    return None


def _objective_path_problem(params: dict, parts: list[str]) -> tuple[str, str | None] | None:
    """objective.params.<name> (free-form: a name params does not hold yet is added to the trial's config; a
    nested one goes inside a mapping of params)."""
    hint = "an objective's search paths are objective.params.<name>"
    if parts[:2] != ["objective", "params"] or len(parts) < 3:
        what = ".".join(parts[:2])
        if parts[0] in SEARCHABLE:
            return f"the spec has no {parts[0]}: its trainable is the objective function", hint
        return f"{what} cannot be searched over: only the objective's params reach the function", hint
    node: Any = params
    for depth, part in enumerate(parts[2:-1], start=3):
        node = node.get(part) if isinstance(node, dict) else None
        if isinstance(node, list):
            here = ".".join(parts[:depth])
            return f"{here} is a list: search it whole (a choice of lists), not an item", None
        if node is not None and not isinstance(node, dict):
            here = ".".join(parts[:depth])
            return f"{here} is a value, not a mapping: '{parts[depth]}' cannot be inside it", None
    return None


def _probe(distribution: Distribution, adapter: TypeAdapter, key: str, path: Path, at: Locator):
    name = distribution.kind
    if name in ("choice", "grid"):
        yield from _probe_values(distribution.args, adapter, key, path, at, name)
        return
    for value in distribution.probes():
        error = _rejects(adapter, value)
        if error:
            yield at(
                "E203",
                f"{name} can produce {excerpt(value)}, which {key} does not accept: {error}",
                path,
                _int_hint(adapter, value),
            )
            return


def _probe_values(values, adapter, key, path, at, name):
    from specc.check.conditional import nested

    for index, value in enumerate(values):
        if isinstance(value, dict) and any(nested(value)):
            continue  # an option holding distributions: specc.check.conditional checks it
        error = _rejects(adapter, value)
        if error:
            yield at("E203", f"{name} value {excerpt(value)} is not valid for {key}: {error}", (*path, index))


def _int_hint(adapter: TypeAdapter, value) -> str | None:
    """A hint when the field wants integers and the distribution gives floats."""
    try:
        adapter.validate_python(value)
    except ValidationError as error:
        if error.errors(include_url=False)[0]["type"] in ("int_type", "int_from_float"):
            return "for integer fields use randint, qrandint or lograndint"
    return None


def _rejects(adapter: TypeAdapter, value) -> str | None:
    try:
        adapter.validate_python(value)
    except ValidationError as error:
        first = error.errors(include_url=False)[0]
        return first["msg"][0].lower() + first["msg"][1:]
    return None


def field_adapter(e: Experiment, parts: list[str]) -> TypeAdapter:
    """A validator for the field at `parts`, built from that field's own annotation and constraints."""
    if parts[:2] == ["objective", "params"]:
        return _cached_adapter(("objective.params",), Any)  # free-form: the function takes what it is given
    node: Any = e
    annotation: Any = None
    route = []  # the models and field names passed through: what the annotation depends on
    for part in parts:
        route.append((type(node), part if isinstance(node, BaseModel) else None))
        if isinstance(node, NamedClass) and part not in type(node).model_fields:
            entry = named_entry(e, parts[1])  # the class's own argument
            return _cached_adapter((*route, entry and entry.name), annotation_of(entry, part))
        if isinstance(node, BaseModel):
            field = type(node).model_fields[part]
            metadata = [*field.metadata, *([Field(discriminator=field.discriminator)] if field.discriminator else [])]
            annotation = Annotated[(field.annotation, *metadata)] if metadata else field.annotation  # type: ignore[misc]
            node = getattr(node, part)
        elif isinstance(node, list):
            annotation = _item_type(annotation)
            node = node[int(part)]
        elif isinstance(node, dict):
            annotation = typing.get_args(_strip(annotation))[1]
            node = node[part]
    return _adapter(tuple(route), annotation)


@functools.lru_cache(maxsize=512)
def _cached_adapter(route: tuple, annotation) -> TypeAdapter:
    config = None if isinstance(annotation, type) and issubclass(annotation, BaseModel) else ConfigDict(strict=True)
    return TypeAdapter(annotation, config=config)


def _adapter(route: tuple, annotation) -> TypeAdapter:
    """Building a TypeAdapter costs ~1 ms; the same route through the models always gives the same one."""
    try:
        return _cached_adapter(route, annotation)
    except TypeError:  # an unhashable annotation
        return _cached_adapter.__wrapped__(route, annotation)


def _strip(annotation):
    """The list/dict type inside Optional[...] and Annotated[...]."""
    while True:
        origin = typing.get_origin(annotation)
        if origin is Annotated:
            annotation = typing.get_args(annotation)[0]
        elif origin in (typing.Union, types.UnionType):
            annotation = next(a for a in typing.get_args(annotation) if a is not type(None))
        else:
            return annotation


def _item_type(annotation):
    return typing.get_args(_strip(annotation))[0]


# -- pbt: what its explore step can produce ---------------------------------------------------------------------
class Clip(typing.NamedTuple):
    """Bounds a pbt-perturbed value is kept inside (None: no limit on that side), as the script's keep_in_bounds
    applies them after Ray's explore step."""

    path: str
    low: float | int | None
    high: float | int | None
    integer: bool
    why: str  # the field's constraint, e.g. "0 <= momentum < 1"


def perturbed(e: Experiment) -> Iterator[tuple[str, Distribution, TypeAdapter]]:
    """(path, distribution, field validator) for each pbt mutation PBT perturbs as a number: a distribution other
    than choice (a plain list or a choice is categorical: its values are checked as they are)."""
    if e.scheduler is None or e.scheduler.type != "pbt":
        return
    resolved = e.model_dump()
    for key, entry in e.scheduler.mutations.items():
        numeric = isinstance(entry, Distribution) and entry.kind not in ("choice", "grid")
        if numeric and _path_problem(resolved, key.split(".")) is None:
            yield key, entry, field_adapter(e, key.split("."))


def donors_kept(e: Experiment, at: Locator) -> Iterator[Problem]:
    """pbt/pb2 (e.scheduler) restore trials from other trials' checkpoints: enough of them must be kept."""
    keep = e.run.checkpoints_to_keep
    if keep is not None and keep < 3:
        yield at(  # a warning, as Ray's: PBT runs, and a trial whose donor's checkpoint is gone fails to restore
            "W322",
            f"{e.scheduler.type} restores trials from other trials' checkpoints, which checkpoints_to_keep {keep} "
            "may delete before they are read (Ray warns: num_to_keep <= 2 with PBT can lead to restoration problems "
            "when checkpoints are deleted too early for other trials to exploit them)",
            ("run", "checkpoints_to_keep"),
            "keep at least 3, or null to keep all",
        )


def pbt_clips(e: Experiment) -> list[Clip]:
    """The bounds PBT's perturbation can cross. It multiplies the current value by a perturbation factor (x1.2,
    x0.8) at every explore step, again and again: a value can grow past any upper bound and shrink past any lower
    bound, except that with positive factors it never changes sign (a bound at 0 holds)."""
    clips = []
    factors = e.scheduler.perturbation_factors if e.scheduler is not None and e.scheduler.type == "pbt" else []
    for key, distribution, adapter in perturbed(e):
        number = _number_schema(adapter)
        if number is None or not all(isinstance(v, int | float) for v in _start_values(e, key, distribution)):
            continue  # not a number: E203 reports the distribution's own values
        values = _start_values(e, key, distribution)
        signs_kept = all(f > 0 for f in factors)
        integer = number.get("type") == "integer"
        low = high = None
        parts = key.split(".")
        shown = ".".join(parts[-2:]) if parts[-1].isdigit() else parts[-1]  # momentum, hidden_sizes.0
        low_text = high_text = ""
        edges = []  # where an exclusive float bound is kept: the edge of the mutation's range
        if "minimum" in number or "exclusiveMinimum" in number:
            inclusive = "minimum" in number
            bound = number["minimum"] if inclusive else number["exclusiveMinimum"]
            # an integer is rounded after each perturbation (Ray's PBT): x0.5 or less can round 1 down to 0
            rounds_to_zero = integer and not inclusive and bound == 0 and min(factors, default=1) <= 0.5
            if not (signs_kept and min(values) >= 0 and bound <= 0) or rounds_to_zero:
                low = bound if inclusive else _inside(distribution, adapter, bound, integer, lower=True)
                edges += [] if inclusive or integer else [f"at least {low}, the bottom of its range"]
            low_text = f"{bound} {'<=' if inclusive else '<'} "
        if "maximum" in number or "exclusiveMaximum" in number:
            inclusive = "maximum" in number
            bound = number["maximum"] if inclusive else number["exclusiveMaximum"]
            rounds_to_zero = integer and not inclusive and bound == 0 and min(factors, default=1) <= 0.5
            if not (signs_kept and max(values) <= 0 and bound >= 0) or rounds_to_zero:
                high = bound if inclusive else _inside(distribution, adapter, bound, integer, lower=False)
                edges += [] if inclusive or integer else [f"at most {high}, the top of its range"]
            high_text = f" {'<=' if inclusive else '<'} {bound}"
        if low is None and high is None:
            continue
        cast = int if integer else float
        low, high = (None if b is None else cast(b) for b in (low, high))
        why = f"{low_text}{shown}{high_text}" + "".join(f": {edge}" for edge in edges)
        clips.append(Clip(key, low, high, integer, why))
    return clips


def _start_values(e: Experiment, key: str, distribution: Distribution) -> list:
    """Values a perturbed path can start from: its mutation's, and its tune.space entry's when it has one."""
    values = list(distribution.probes())
    entry = e.tune.space.get(key) if e.tune else None
    if entry is not None:
        values += list(entry.probes())
    return values


def _inside(distribution: Distribution, adapter: TypeAdapter, bound, integer: bool, lower: bool):
    """Where to stop before an exclusive bound: the next integer, or the edge of the mutation's own range (its
    lowest or highest value) when the field takes it."""
    if integer:
        return bound + 1 if lower else bound - 1
    edge = distribution.args[0 if lower else 1] if distribution.ranged else None
    if edge is not None and _rejects(adapter, float(edge)) is None:
        return edge
    probes = distribution.probes()
    return min(probes) if lower else max(probes)


def _number_schema(adapter: TypeAdapter) -> dict | None:
    """The JSON schema of a number field (its bounds), or None when the field is not a number."""
    try:
        schema = adapter.json_schema()
    except PydanticInvalidForJsonSchema:  # a field without a JSON schema is no number
        return None
    for member in [schema, *schema.get("anyOf", [])]:
        if member.get("type") in ("number", "integer"):
            return member
    return None


def perturbations_fit(e: Experiment, at: Locator) -> Iterator[Problem]:
    """Each value PBT's explore step can produce, kept inside its field's bounds by keep_in_bounds, is valid for
    its field; what clipping cannot fix is a problem (a constraint other than bounds)."""
    if e.scheduler is None or e.scheduler.type != "pbt":
        return
    clips = {clip.path: clip for clip in pbt_clips(e)}
    for key, distribution, adapter in perturbed(e):
        if _number_schema(adapter) is None:
            continue
        for start in distribution.probes():
            for factor in e.scheduler.perturbation_factors:
                value = start * factor
                value = round(value) if isinstance(start, int) and not isinstance(start, bool) else value
                clip = clips.get(key)
                if clip is not None:
                    value = min(value, clip.high) if clip.high is not None else value
                    value = max(value, clip.low) if clip.low is not None else value
                error = _rejects(adapter, value)
                if error:
                    yield at(
                        "E203",
                        f"pbt perturbs {key} by x{factor}: {excerpt(start)} becomes {excerpt(value)}, which {key} "
                        f"does not accept: {error}",
                        ("scheduler", "mutations", key, distribution.kind),
                        "mutate it with a plain list of valid values (categorical)",
                    )
                    return


def pbt_grid(e: Experiment, at: Locator) -> Iterator[Problem]:
    if e.scheduler is None or e.scheduler.type != "pbt":
        return
    for key, entry in e.scheduler.mutations.items():
        if isinstance(entry, Distribution) and entry.kind == "grid":
            yield at(
                "E204",
                "pbt cannot perturb a grid: Ray's PBT would read {grid_search: [...]} as nested mutations",
                ("scheduler", "mutations", key, "grid"),
                "write the values as a plain list (categorical)",
                key=True,
            )


def search_supports(e: Experiment, at: Locator) -> Iterator[Problem]:
    if not e.tune:
        return
    search = e.tune.search.type
    supported = SUPPORTED_DISTRIBUTIONS[search]
    if supported is None:
        return
    for key, distribution in e.tune.space.items():
        if distribution.kind not in supported:
            hint = (
                "grid search tries every value of {grid: [...]} entries"
                if search == "grid"
                else "supported: " + ", ".join(supported)
            )
            if distribution.kind == "grid":
                hint = "grid entries need search type random or grid; use choice with " + search
            yield at(
                "E204",
                f"search type {search} cannot sample {distribution.kind}",
                ("tune", "space", key, distribution.kind),
                hint,
                key=True,
            )


def data_fixed(e: Experiment, at: Locator) -> Iterator[Problem]:
    """File datasets and loader ray_data are read once by the driver, for every trial: only the batch size varies."""
    reader = DRIVER_DATA.get(e.dataset.loader) or (DRIVER_DATA["files"] if e.dataset.type in FILE_TYPES else None)
    reader = "image_folder" if e.dataset.type == "image_folder" else reader
    if reader is None:
        return
    for _kind, where, entries in space_entries(e):
        for key in entries:
            if key.startswith("dataset.") and key not in ("dataset.batch_size", "dataset.global_batch_size"):
                yield at(
                    "E213",
                    f"{key} is fixed before trials start: with {reader} the driver prepares the data once",
                    (*where, key),
                    "search dataset.batch_size (or global_batch_size) only, or run one spec per data setting",
                    key=True,
                )


# Fields that decide which code the script holds: every trial runs the same script, so a search cannot vary them.
COMPILED_IN = {
    "training.train_metrics": "whether the script computes metrics on the training batches",
    "training.mixed_precision": "whether the script trains under autocast with a gradient scaler",
    "training.loss": "the script's loss function and the form of its targets",
    "training.lr_schedule.per": "where the script's loop steps the schedule",
    "training.lr_schedule.warmup": "whether the script builds a warm-up before the schedule",
    "training.lr_schedule.metric": "which reported metric the script steps the schedule on, in which direction",
}


def compiled_in(e: Experiment, at: Locator) -> Iterator[Problem]:
    for _kind, where, entries in space_entries(e):
        for key in entries:
            if key in COMPILED_IN:
                yield at(
                    "E213",
                    f"{key} is fixed before trials start: it decides {COMPILED_IN[key]}",
                    (*where, key),
                    f"set {key} outside the search; compare both settings with two specs",
                    key=True,
                )


def points_fit(e: Experiment, at: Locator) -> Iterator[Problem]:
    if not e.tune:
        return
    space = e.tune.space
    for index, point in enumerate(e.tune.search.points_to_evaluate):
        missing = [key for key in space if key not in point]
        if missing and e.tune.search.type not in ("random", "grid"):
            yield at(
                "E212",
                f"{e.tune.search.type} needs a value for every search-space path in each point; missing: "
                + ", ".join(missing),
                ("tune", "search", "points_to_evaluate", index),
                "only random and grid search sample the paths a point leaves out",
            )
        for key, value in point.items():
            path = ("tune", "search", "points_to_evaluate", index, key)
            if key not in space:
                yield at("E212", f"{key} is not in tune.space", path, did_you_mean(key, list(space)), key=True)
                continue
            if _path_problem(e.model_dump(), key.split(".")):
                continue  # reported by space_paths
            error = _rejects(field_adapter(e, key.split(".")), value)
            if error:
                yield at("E212", f"{excerpt(value)} is not valid for {key}: {error}", path)
            elif isinstance(value, list | dict) and e.tune.search.type in ("random", "grid"):
                yield at(
                    "E212",
                    f"{key} is a list or mapping, which Ray's BasicVariantGenerator cannot preset "
                    "(the run would fail when it starts)",
                    path,
                    "leave this path out of the point (it is then sampled), or use search type optuna or hyperopt",
                )


def ray_interpreted(e: Experiment, at: Locator) -> Iterator[Problem]:
    """A one-key mapping {eval: ...} or {grid_search: ...} anywhere in a value Tune resolves would be evaluated as
    Python or expanded into trials by Ray, not passed on: refused, so no spec text can become code."""
    values: list[tuple[Path, Any]] = []
    for _kind, where, entries in space_entries(e):
        for key, entry in entries.items():
            if isinstance(entry, Distribution) and entry.kind in ("choice", "grid"):
                values += [((*where, key, entry.kind, index), value) for index, value in enumerate(entry.args)]
            elif isinstance(entry, list) and _kind == "mutations":
                values += [((*where, key, index), value) for index, value in enumerate(entry)]
    if e.tune:
        for index, point in enumerate(e.tune.search.points_to_evaluate):
            values += [(("tune", "search", "points_to_evaluate", index, key), v) for key, v in point.items()]
    for path, value in values:
        if has_ray_directive(value):
            yield at(
                "E203",
                "a mapping whose only key is 'eval' or 'grid_search' is run or expanded by Ray Tune, not passed on",
                path,
                "rename the key or add a second one",
            )
