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

from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

from specc.check.fields import Locator, did_you_mean
from specc.read.document import Path
from specc.spec.dataset import FILE_TYPES
from specc.spec.errors import Problem, excerpt
from specc.spec.experiment import Experiment
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
            problem = _path_problem(resolved, parts)
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
                yield from _probe_values(value, adapter, key, entry_path, at, "bounds")


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
            if not part.isdigit() or int(part) >= len(node):
                return f"{part} is not an index of {here}, a list of {len(node)} item(s)", None
            node = node[int(part)]
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
    for index, value in enumerate(values):
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
        if isinstance(node, BaseModel):
            field = type(node).model_fields[part]
            annotation = Annotated[(field.annotation, *field.metadata)] if field.metadata else field.annotation
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
