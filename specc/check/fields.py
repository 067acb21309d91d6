"""pydantic's ValidationError -> located Problems with stable codes, plain messages and did-you-mean hints.

pydantic reports a `loc` through the models (tagged unions add the tag: `model.mlp.hidden_sizes`); the
spec's data path drops those tags, and the SourceMap turns the data path into file:line:col. The
allowed keys and choices for hints come from the models themselves (`spec_type_at`), not from lists
kept by hand.
"""

from __future__ import annotations

import difflib
from typing import Any

from pydantic import BaseModel

from specc.read.document import Path, SourceMap, dotted
from specc.spec.augment import AUGMENTATION_NAMES
from specc.spec.base import PATTERN_MEANINGS
from specc.spec.errors import Problem, excerpt
from specc.spec.scheduler import MUTATION_TAGS
from specc.spec.space import DISTRIBUTION_NAMES, DISTRIBUTIONS
from specc.spec.walk import allowed_keys, choices, field_description, is_distribution, tags

WRONG_TYPE = {
    "int_type": "an integer",
    "int_from_float": "an integer",
    "int_parsing": "an integer",
    "float_type": "a number",
    "float_parsing": "a number",
    "string_type": "a string",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "list_type": "a list",
    "tuple_type": "a list",
    "dict_type": "a mapping",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
    "none_required": "null",
}
RANGE = {"greater_than": ">", "greater_than_equal": ">=", "less_than": "<", "less_than_equal": "<="}
CUSTOM = {
    "unsupported_version": "E108",
    "bad_distribution": "E110",
    "stop_condition": "E111",
    "bad_address": "E107",
    "pip_form": "E103",
    "length_mismatch": "E109",
    "not_increasing": "E100",
}
# uniform -> "[lo, hi)": the shape each distribution takes, from its field's description
DISTRIBUTION_SHAPES = {
    cls.kind: cls.model_fields[cls.kind].description.split(":")[0]
    for cls in DISTRIBUTIONS
    if cls.model_fields[cls.kind].description.startswith("[")
}
# Keys users reach for that live elsewhere in the spec.
# Keys of some types of a section only: what to say when another type is given one.
OTHER_TYPES_KEYS = {
    "validation_from": "only data sets with a test split (torchvision, keras_dataset), file tables and image folders "
    "choose where validation comes from; this one holds validation_fraction of its examples out",
}
MOVED_KEYS = {
    "working_dir": "the job's working directory is cluster.working_dir",
    "excludes": "files left out of the job are cluster.excludes",
    "metric": "metric and mode live in the tune section",
    "mode": "metric and mode live in the tune section",
    "num_gpus": "use scaling.use_gpu and scaling.resources_per_worker",
    "gpu": "use scaling.use_gpu",
    "lr": "the learning rate is training.optimizer.lr",
    "learning_rate": "the learning rate is training.optimizer.lr",
    "batch_size": "the batch size is dataset.batch_size",
    "epochs": "the epoch count is training.epochs",
}


def from_validation_error(error, data: dict, source: SourceMap, root: type[BaseModel]) -> list[Problem]:
    problems = []
    for item in error.errors(include_url=False):
        problems.append(translate(item, data, source, root))
    return problems


def translate(item: dict, data: dict, source: SourceMap, root: type[BaseModel]) -> Problem:
    loc = _without_mutation_tag(tuple(item["loc"]))
    at_key = bool(loc) and loc[-1] == "[key]"  # a mapping's key is wrong, not its value
    if at_key:
        loc = loc[:-1]
    path = data_path(loc, data)
    kind, ctx = item["type"], item.get("ctx") or {}
    value = item.get("input")
    hint = None
    if kind == "extra_forbidden":
        code, at_key = "E101", True
        key = path[-1]
        allowed = allowed_keys(root, loc[:-1])
        message = f"unknown key {excerpt(key)}"
        if allowed:
            message += f" in {dotted(path[:-1]) or 'the top level'}"
        hint = OTHER_TYPES_KEYS.get(str(key)) or did_you_mean(str(key), allowed) or MOVED_KEYS.get(str(key))
        if not hint and allowed:
            hint = "allowed keys: " + ", ".join(allowed)
    elif kind == "missing":
        code = "E102"
        message = f"missing required key '{path[-1]}'"
        hint = field_description(root, loc)
        return _located(code, message, path, source, hint, anchor=path[:-1], at_key=True)
    elif kind == "union_tag_not_found":
        return _tag_not_found(loc, path, value, source, root)
    elif kind == "union_tag_invalid":
        code = "E105"
        expected = _split_expected(ctx.get("expected_tags", ""))
        if is_distribution(root, loc):
            tag = ctx.get("tag")
            message = f"unknown distribution {excerpt(tag)}"
            hint = did_you_mean(str(tag), DISTRIBUTION_NAMES) or "one of: " + ", ".join(DISTRIBUTION_NAMES)
            return _located(code, message, (*path, tag), source, hint, at_key=True)
        ray = _ray_class_not_offered(path, ctx.get("tag"))
        if ray is not None:
            return _located("E260", ray, (*path, "type"), source, "one of: " + ", ".join(expected))
        message = f"unknown type {excerpt(ctx.get('tag'))}; expected one of: {', '.join(expected)}"
        hint = did_you_mean(str(ctx.get("tag")), expected)
        path = (*path, "type")
    elif kind in ("literal_error", "enum"):
        code = "E104"
        expected = choices(root, loc) or _split_expected(ctx.get("expected", ""))
        message = f"{_show(value)} is not one of: {', '.join(str(e) for e in expected)}"
        hint = did_you_mean(str(value), [str(e) for e in expected])
    elif kind in WRONG_TYPE:
        code = "E103"
        message = f"expected {WRONG_TYPE[kind]}, got {_describe(value)}"
        hint = _type_hint(kind, value)
    elif kind == "finite_number":
        code = "E106"
        message = f"must be a finite number, got {_show(value)}"
    elif kind in RANGE:
        code = "E106"
        bound = next(iter(ctx.values()), None)
        message = f"must be {RANGE[kind]} {bound}, got {_show(value)}"
    elif kind == "string_pattern_mismatch":
        code = "E107"
        pattern = ctx.get("pattern", "")
        message = f"{_show(value)} is not {PATTERN_MEANINGS.get(pattern, 'of the form ' + pattern)}"
    elif kind in ("too_short", "too_long") and is_distribution(root, loc[:-2]):
        code = "E110"
        shape = DISTRIBUTION_SHAPES.get(loc[-1])
        got = f"{len(value)} value{'s' * (len(value) != 1)}" if isinstance(value, list) else _describe(value)
        message = f"{loc[-1]} takes {shape}, got {got}" if shape else "needs at least one value"
    elif kind in ("too_short", "too_long"):
        code = "E109"
        message = _length_message(kind, ctx, value)
    elif kind == "string_too_short":
        code = "E107"
        message = "must not be empty"
    elif kind in CUSTOM:
        code = CUSTOM[kind]
        message = item["msg"]
    else:
        code = "E100"
        message = item["msg"]
    return _located(code, message, path, source, hint, at_key=at_key)


RAY_FAMILIES = {("tune", "search"): "searchers", ("scheduler",): "schedulers"}


def _ray_class_not_offered(path: tuple, tag) -> str | None:
    """A searcher or scheduler `type` that names a class of Ray Tune's which specc does not offer (Repeater,
    ResourceChangingScheduler, PopulationBasedTrainingReplay): why not, from the catalog; None for any other."""
    family = RAY_FAMILIES.get(tuple(path))
    if family is None or not isinstance(tag, str):
        return None
    from specc import catalog

    entry = catalog.lookup("ray_tune", family, tag)
    if entry is None or not entry.not_drivable:
        return None
    return f"Ray's {entry.class_name} cannot be the {family[:-1]} a spec names: {entry.not_drivable}"


def _without_mutation_tag(loc: tuple) -> tuple:
    """A pbt mutation is a distribution or a plain list: pydantic names the member it tried after the key."""
    if loc[:1] == ("scheduler",) and "mutations" in loc[:3]:
        tag = loc.index("mutations") + 2  # (scheduler, pbt, mutations, key, tag, ...)
        if len(loc) > tag and loc[tag] in MUTATION_TAGS:
            return loc[:tag] + loc[tag + 1 :]
    return loc


def _located(code, message, path, source, hint, *, anchor=None, at_key=False, key_of=None) -> Problem:
    if anchor == ():  # a key missing at the top level: the start of the file
        file = source.locate(())
        return Problem(code, message, file.file if file else None, 1, 1, dotted(path), hint)
    mark = source.locate(key_of or (anchor if anchor is not None else path), key=at_key)
    if mark is None:
        return Problem(code, message, path=dotted(path), hint=hint)
    return Problem(code, message, mark.file, mark.line, mark.column, dotted(path), hint, mark.origin)


def _tag_not_found(loc, path, value, source, root) -> Problem:
    if is_distribution(root, loc):
        if isinstance(value, dict) and len(value) > 1:
            message = f"a search-space entry has exactly one key, got {len(value)}: {', '.join(map(str, value))}"
        else:
            message = f"expected a one-key mapping such as {{uniform: [lo, hi]}}, got {_describe(value)}"
            if "mutations" in loc[:3]:
                message = message.replace("expected", "expected a plain list of values or", 1)
        return _located("E110", message, path, source, "distributions: " + ", ".join(DISTRIBUTION_NAMES))
    if not isinstance(value, dict):  # a section given as a word or a number: not a mapping to look a type up in
        return _located(
            "E103", f"expected a mapping, got {_describe(value)}", path, source, _type_hint("dict_type", value)
        )
    types_ = tags(root, loc)
    message = "missing required key 'type'"
    hint = "one of: " + ", ".join(types_) if types_ else None
    return _located("E102", message, (*path, "type"), source, hint, anchor=path, at_key=True)


def data_path(loc: tuple, data: Any) -> Path:
    """pydantic's loc without the union tags and type labels it inserts, i.e. a path into the data."""
    path: list = []
    node = data
    # a distribution's (or augmentation's) loc repeats its name: (..., 'uniform' as the union tag, 'uniform' as the
    # field)
    repeated = (*DISTRIBUTION_NAMES, *AUGMENTATION_NAMES)
    loc = tuple(p for i, p in enumerate(loc) if not (i and p == loc[i - 1] and p in repeated))
    last = len(loc) - 1
    for index, part in enumerate(loc):
        if (isinstance(node, dict) and part in node) or (
            isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
        ):
            path.append(part)
            node = node[part]
        elif (index < last and node is not None) or _is_label(part, node):
            continue  # pydantic's name for a union member, not a key of the data
        else:
            path.append(part)
            node = None
    return tuple(path)


def _is_label(part, node) -> bool:
    """A type label like 'list[str]' or 'str' that pydantic puts after a value of a plain union."""
    if not isinstance(part, str) or (isinstance(node, dict) and part in node):
        return False
    return "[" in part or part in ("str", "int", "float", "bool", "dict", "list", "none", "named")


# -- wording ------------------------------------------------------------------------------------
def did_you_mean(word: str, candidates) -> str | None:
    """The closest candidate, ignoring case ('Relu' -> 'relu', 'mnist' -> 'MNIST')."""
    by_lower = {str(c).lower(): str(c) for c in candidates}
    matches = difflib.get_close_matches(word.lower(), list(by_lower), n=1, cutoff=0.6)
    return f"did you mean '{by_lower[matches[0]]}'?" if matches else None


def _split_expected(text: str) -> list[str]:
    parts = text.replace(" or ", ", ").split(", ")
    return [part.strip().strip("'") for part in parts if part.strip()]


def _show(value) -> str:
    if isinstance(value, str):
        return excerpt(value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value) if isinstance(value, int | float) else _describe(value)


def _describe(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f"the string {excerpt(value)}"
    if isinstance(value, int | float):
        return f"the number {value}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def _type_hint(kind: str, value) -> str | None:
    if isinstance(value, str) and kind in ("int_type", "float_type", "int_parsing", "float_parsing"):
        return "remove the quotes: numbers are written bare"
    if isinstance(value, str) and kind in ("bool_type", "bool_parsing"):
        return "write true or false without quotes"
    if kind == "int_from_float" or (kind == "int_type" and isinstance(value, float)):
        return "write a whole number without a decimal point"
    if kind == "string_type" and isinstance(value, int | float | bool):
        return "quote it to make it a string"
    return None


def _length_message(kind: str, ctx: dict, value) -> str:
    got = len(value) if hasattr(value, "__len__") else ctx.get("actual_length")
    if kind == "too_short":
        need = ctx.get("min_length")
        return "must not be empty" if need == 1 else f"needs at least {need} items, got {got}"
    return f"takes at most {ctx.get('max_length')} items, got {got}"


class Locator:
    """Makes Problems located at a data path through the SourceMap."""

    def __init__(self, source: SourceMap):
        self.source = source

    def __call__(
        self, code: str, message: str, path: Path, hint: str | None = None, *, key: bool = False, also: Path = ()
    ) -> Problem:
        """`also`: the other field of a contradiction; when a --set gave it, the problem says so."""
        path = self._as_written(tuple(path))
        mark = self.source.locate(path, key=key)
        if mark is None:
            return Problem(code, message, path=dotted(path), hint=hint)
        origin = mark.origin
        if also and origin is None and (other := self.source.locate(also)) and other in self.source.overrides.values():
            origin = f"with {other.origin}"
        return Problem(code, message, mark.file, mark.line, mark.column, dotted(path), hint, origin)

    def _as_written(self, path: Path) -> Path:
        """A class's `type` that the spec gave as a bare name (`loss: smooth_l1`, read as {type: smooth_l1}) is named
        as the spec wrote it: the field, not a `type` key the file does not have."""
        if path and path[-1] == "type" and path not in self.source.values and path[:-1] in self.source.values:
            return path[:-1]
        return path
