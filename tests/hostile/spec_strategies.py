"""Hypothesis strategies that build specs from the JSON Schema (issue 53, "tests that generate, not list").

Two ways in, both from `schemas/experiment.schema.json` (generated from the pydantic models, so a new field is
generated as soon as the schema has it):

- `mutated_specs()`: one of the example specs in specs/*.yaml, with one to three of its values (a leaf, a list, a
  whole section) replaced by a `hostile` value for the schema at that place: a number at or past the field's
  bounds (0, -1, int64's edges, ints past them, 1e308, 5e-324, nan, inf), an odd string (control characters, ESC,
  BEL, U+202E, a forged `::error` line, very long, non-BMP, a lone surrogate), null, an empty list or map, a
  value of the wrong type, or a fresh schema-generated value for the place (another variant of a section, whose
  own leaves may be extreme). Mostly valid-shaped, so the runs go deep into check, plan and compile.
- `schema_specs()`: a whole spec generated from the schema's `Experiment`: `properties`, `anyOf`/`oneOf` with
  their discriminators, `enum`/`const`, `$ref`/`$defs`, `minimum`/`maximum` (exclusive too), `pattern`,
  `minItems`/`maxItems`, `patternProperties` (tune.space keys are paths of the spec), leaves now and then hostile.

`yaml_text(spec)` writes one as YAML the way a person could: nan and inf as `.nan`/`.inf`, characters YAML
cannot hold raw as escapes in double quotes (so a lone surrogate is the YAML text "\\ud800").
"""

from __future__ import annotations

import json
import math
import re
from functools import cache
from pathlib import Path

import yaml
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "schemas" / "experiment.schema.json").read_text(encoding="utf-8"))
DEFS = SCHEMA["$defs"]

INT64 = 2**63
EXTREME_INTS = [0, -1, 1, 2, INT64 - 1, INT64, -INT64, -INT64 - 1, 2**64, 2**31, 2**53 + 1, 10**40, 10**320, -(10**400)]
EXTREME_FLOATS = [0.0, -0.0, 1e308, -1e308, 1.7976931348623157e308, 5e-324, -5e-324, 1e-300, 1.0000001,
                  math.nan, math.inf, -math.inf, 0.5, 2.5e15]  # fmt: skip
ODD_STRINGS = [
    "",
    " ",
    "\x1b[31mred\x1b[0m",
    "\x1b]0;owned\x07",
    "\x07",
    "\x00",
    "\x7f",
    "\x9b2J",
    "\r",
    "a\rb",
    "\t",
    "\u202eevil",
    "\u2066x\u2069",
    "\u200f",
    "\u2028",
    "\ufeff",
    "\n::error file=x::y",
    "::error file=x::y",
    "x" * 100_000,
    "a." * 2000,
    "😀" * 3,
    "\U0010ffff",
    "\ud800",
    "\udfff",
    "{{ 7 * 7 }}",
    "'\"",
    "val_loss >= 1e999",
    "val_accuracy >= nan",
    "training_iteration > -1",
    "../../etc/passwd",
    "/dev/zero",
    "%s%n",
    "1e-4",
    "0x1F",
    "1:30",
    "null",
    "~",
    ".nan",
]
ESCAPED = set(ODD_STRINGS) - {"", " ", "{{ 7 * 7 }}", "'\"", "1e-4", "0x1F", "1:30", "null", "~", ".nan"}

# Dotted paths tune.space, PBT mutations and --set may name (with the seed spec's own paths added where known).
SPEC_PATHS = [
    "training.optimizer.lr", "training.optimizer.momentum", "training.optimizer.weight_decay", "training.epochs",
    "training.seed", "training.steps_per_epoch", "training.optimizer", "training.lr_schedule.gamma",
    "model.hidden_sizes", "model.hidden_sizes.0", "model.dropout", "model.activation", "model.channels.0",
    "model.kernel_size", "model", "dataset.batch_size", "dataset.validation_fraction", "dataset.shuffle_seed",
    "scaling.num_workers", "objective.params.x", "objective.params.lr", "model.kwargs.width", "run.max_failures",
    "scheduler.grace_period", "tune.num_samples", "training.optimizer.betas.0",
]  # fmt: skip


def resolve(node: dict) -> dict:
    while "$ref" in node:
        node = DEFS[node["$ref"].rsplit("/", 1)[1]]
    return node


def branches(node: dict) -> list[dict]:
    """The alternatives of a schema node, flattened through nested anyOf/oneOf and $ref."""
    node = resolve(node)
    alternatives = node.get("anyOf") or node.get("oneOf")
    if not alternatives:
        return [node]
    return [leaf for alternative in alternatives for leaf in branches(alternative)]


def _kind(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def branch_for(node: dict, value) -> dict | None:
    """The alternative of `node` that `value` stands for: by discriminator (`type`), then by JSON type."""
    options = branches(node)
    if isinstance(value, dict) and "type" in value:
        for option in options:
            if option.get("properties", {}).get("type", {}).get("const") == value["type"]:
                return option
    kind = _kind(value)
    for option in options:
        types = option.get("type")
        if types == kind or (isinstance(types, list) and kind in types) or (types == "number" and kind == "integer"):
            return option
        if types is None and ("enum" in option or "const" in option or not option):
            return option
    return None


def child_schema(node: dict, value, key) -> dict | None:
    """The schema of `value[key]`, where `node` is the schema of `value`."""
    node = branch_for(node, value)
    if node is None:
        return None
    if isinstance(key, int):
        items = node.get("items")
        prefix = node.get("prefixItems")
        if prefix and key < len(prefix):
            return prefix[key]
        return items if isinstance(items, dict) else {}
    if key in node.get("properties", {}):
        return node["properties"][key]
    for pattern, schema in node.get("patternProperties", {}).items():
        if re.search(pattern, key):
            return schema
    extra = node.get("additionalProperties")
    return extra if isinstance(extra, dict) else {}


def places(value, schema: dict, path=()):
    """Every (path, schema) in a spec: the places a mutation may hit."""
    yield path, schema
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return
    for key, child in items:
        sub = child_schema(schema, value, key)
        if sub is not None:
            yield from places(child, sub, (*path, key))


def set_at(spec, path, new):
    if not path:
        return new
    copy = dict(spec) if isinstance(spec, dict) else list(spec)
    copy[path[0]] = set_at(spec[path[0]], path[1:], new) if len(path) > 1 else new
    return copy


def dotted(spec, prefix="") -> list[str]:
    """The dotted paths of a spec's values, as tune.space and --set name them."""
    out = []
    items = spec.items() if isinstance(spec, dict) else enumerate(spec) if isinstance(spec, list) else ()
    for key, value in items:
        path = f"{prefix}{key}"
        out.append(path)
        out.extend(dotted(value, path + "."))
    return out


# Values


odd_strings = st.sampled_from(ODD_STRINGS) | st.text(
    st.characters(codec=None, exclude_categories=()), max_size=8
)  # any code point, surrogates included
extreme_numbers = st.sampled_from(EXTREME_INTS) | st.sampled_from(EXTREME_FLOATS)
wrong_types = st.sampled_from([None, [], {}, True, False, "1", [None], {"": None}, [[[]]], {"type": None}])


def _bounds(node: dict) -> list:
    """Numbers at and just past a numeric schema's bounds."""
    out = []
    for key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        if key in node:
            bound = node[key]
            out += [bound, bound - 1, bound + 1]
            if isinstance(bound, float) or node.get("type") == "number":
                out += [math.nextafter(bound, math.inf), math.nextafter(bound, -math.inf)]
    return out


def hostile(node: dict, paths: list[str] | None = None) -> st.SearchStrategy:
    """A value that is wrong, extreme or odd for the schema `node`, or a fresh valid-shaped one."""
    options = branches(node)
    near = [bound for option in options for bound in _bounds(option)]
    enums = [value for option in options for value in option.get("enum", [option.get("const")]) if value is not None]
    choices = [extreme_numbers, odd_strings, wrong_types]
    if near:
        choices.append(st.sampled_from(near))
    if enums:
        choices.append(st.sampled_from([str(e) + suffix for e in enums for suffix in ("\x1b[2J", "\u202e", " ")]))
    strategy = st.one_of(choices)
    inside = in_bounds_extremes(node)
    fresh = valid(node, paths=paths, hostility=0.3)
    return st.one_of(strategy, fresh, inside, inside) if inside is not None else st.one_of(strategy, strategy, fresh)


def in_bounds_extremes(node: dict) -> st.SearchStrategy | None:
    """Numbers the schema accepts that are extreme all the same (int64's edge and past it, 1e308, 5e-324, a
    reduction factor a hair above 1): they pass validation and reach plan and compile. None: not a number."""
    values = []
    for option in branches(node):
        kind = option.get("type")
        if kind not in ("integer", "number"):
            continue
        pool = IN_BOUNDS_INTS if kind == "integer" else IN_BOUNDS_INTS + IN_BOUNDS_FLOATS
        values += [value for value in pool if _accepts(option, value)]
    return st.sampled_from(values) if values else None


IN_BOUNDS_INTS = [0, 1, 2, 2**31 - 1, 2**31, 2**53 + 1, INT64 - 1, INT64, 2**64, 10**18, 10**40, 10**320]
IN_BOUNDS_FLOATS = [5e-324, 1e-300, 1e-30, 1.0000001, 1.0000000000000002, 0.9999999999999999, 0.5, 1e15, 1e30,
                    1e308, 1.7976931348623157e308]  # fmt: skip


def _accepts(node: dict, value) -> bool:
    return not (
        ("minimum" in node and value < node["minimum"])
        or ("maximum" in node and value > node["maximum"])
        or ("exclusiveMinimum" in node and value <= node["exclusiveMinimum"])
        or ("exclusiveMaximum" in node and value >= node["exclusiveMaximum"])
    )


def valid(node: dict, *, paths=None, hostility: float = 0.05, depth: int = 0) -> st.SearchStrategy:
    """A value of the schema `node`'s shape (every alternative, property and bound honoured), whose leaves are
    hostile with probability `hostility`: generated lazily, so recursive schemas stay finite."""
    return st.deferred(lambda: _valid(resolve(node), paths or SPEC_PATHS, hostility, depth))


def _valid(node, paths, hostility, depth):
    if depth > 6:
        return st.none()
    alternatives = node.get("anyOf") or node.get("oneOf")
    if alternatives and "properties" in node:  # constraints only: which keys are required together
        plain = {k: v for k, v in node.items() if k not in ("anyOf", "oneOf")}
        return st.one_of([_valid({**plain, "required": [*plain.get("required", []), *a.get("required", [])]},
                                 paths, hostility, depth) for a in alternatives])  # fmt: skip
    if alternatives:
        real = [a for a in alternatives if resolve(a).get("type") != "null"] or alternatives
        return st.one_of([valid(a, paths=paths, hostility=hostility, depth=depth) for a in real])
    leaf = _leaf(node, paths, depth, hostility)
    if leaf is None:
        return _container(node, paths, hostility, depth)
    if hostility <= 0:
        return leaf
    return st.integers(0, 99).flatmap(lambda roll: hostile_leaf(node) if roll < hostility * 100 else leaf)


def hostile_leaf(node: dict) -> st.SearchStrategy:
    near = _bounds(node)
    options = [extreme_numbers, odd_strings, wrong_types]
    if near:
        options.append(st.sampled_from(near))
    return st.one_of(options)


def _leaf(node, paths, depth, hostility):
    if "const" in node:
        return st.just(node["const"])
    if "enum" in node:
        return st.sampled_from(node["enum"])
    kind = node.get("type")
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    if kind == "integer":
        low = node.get("minimum", node.get("exclusiveMinimum", -1) + 1 if "exclusiveMinimum" in node else None)
        high = node.get("maximum", node.get("exclusiveMaximum", 0) - 1 if "exclusiveMaximum" in node else None)
        small = st.integers(max(low if low is not None else -3, -3), min(high if high is not None else 64, 64))
        edges = [v for v in (low, high, INT64 - 1, 10**30) if v is not None and (low is None or v >= low)]
        edges = [v for v in edges if high is None or v <= high]
        return st.one_of(small, small, st.sampled_from(edges)) if edges else small
    if kind == "number":
        low = node.get("minimum", node.get("exclusiveMinimum"))
        high = node.get("maximum", node.get("exclusiveMaximum"))
        exclude = {"exclude_min": "exclusiveMinimum" in node, "exclude_max": "exclusiveMaximum" in node}
        near_low, near_high = max(low if low is not None else -10, -10), min(high if high is not None else 10, 10)
        usual = st.floats(near_low, max(near_low, near_high), **exclude) if near_low < near_high else st.nothing()
        return usual | usual | st.floats(low, high, allow_nan=False, allow_infinity=False, **exclude)
    if kind == "string":
        if "pattern" in node:
            return st.from_regex(node["pattern"], fullmatch=True).filter(lambda s: len(s) < 80)
        return st.text(min_size=node.get("minLength", 0), max_size=12) | st.sampled_from(ODD_STRINGS)
    if not kind and not node.get("properties") and not node.get("patternProperties"):
        return st.one_of(st.integers(-3, 300), st.floats(-10, 10), st.text(max_size=6), st.none())  # any value
    return None


def _container(node, paths, hostility, depth):
    child = {"paths": paths, "hostility": hostility, "depth": depth + 1}
    if node.get("type") == "array":
        items = node.get("items") if isinstance(node.get("items"), dict) else {}
        low, high = node.get("minItems", 0), min(node.get("maxItems", 4), node.get("minItems", 0) + 4)
        if "prefixItems" in node:
            return st.tuples(*(valid(item, **child) for item in node["prefixItems"])).map(list)
        return st.lists(valid(items, **child), min_size=low, max_size=high)
    properties = node.get("properties", {})
    required = set(node.get("required", ()))
    fixed = {key: valid(properties[key], **child) for key in properties if key in required}
    optional = {key: valid(properties[key], **child) for key in properties if key not in required}
    mapping = st.fixed_dictionaries(fixed, optional=optional)
    extras = []
    for pattern, schema in node.get("patternProperties", {}).items():
        keys = st.sampled_from(paths) if "\\." in pattern else st.from_regex(pattern, fullmatch=True)
        extras.append(st.dictionaries(keys.filter(lambda k: len(k) < 60), valid(schema, **child), max_size=3))
    if isinstance(node.get("additionalProperties"), dict) or node.get("additionalProperties") is True:
        extra = node["additionalProperties"] if isinstance(node["additionalProperties"], dict) else {}
        extras.append(st.dictionaries(st.text(max_size=8), valid(extra, **child), max_size=3))
    if extras:
        mapping = st.tuples(mapping, *extras).map(lambda parts: {k: v for part in parts[::-1] for k, v in part.items()})
    return mapping


# Specs


@cache
def seeds() -> dict[str, dict]:
    """The example specs, by file name: every one validates, so a mutation of one goes as deep as it can."""
    return {
        path.name: yaml.safe_load(path.read_text(encoding="utf-8")) for path in sorted((ROOT / "specs").glob("*.yaml"))
    }


def root_schema(spec: dict) -> dict:
    return DEFS["PartialExperiment" if "extends" in spec else "Experiment"]


@st.composite
def mutated_specs(draw, max_mutations: int = 3) -> dict:
    """An example spec with one to `max_mutations` places (leaves, lists, sections, new keys) made hostile."""
    name = draw(st.sampled_from(sorted(seeds())), label="seed")
    spec = seeds()[name]
    for _ in range(draw(st.integers(1, max_mutations))):
        spots = list(places(spec, root_schema(spec)))
        if len(spots) < 2:
            break
        numeric = [spot for spot in spots if in_bounds_extremes(spot[1]) is not None]
        sections = [spot for spot in spots if len(spot[0]) == 1]
        kind = draw(st.sampled_from(["any", "number", "number", "section", "space", "scheduler", "text"]))
        if kind in ("space", "scheduler"):
            spec = draw(searched(spec) if kind == "space" else scheduled(spec))
            continue
        texts = [spot for spot in spots if _free_text(spot[1])]
        if kind == "text" and texts:  # free text (description, paths, kwargs, env values) that echoes
            path, _ = draw(st.sampled_from(texts))
            spec = set_at(spec, path, draw(odd_strings))
            continue
        pool = {"number": numeric, "section": sections}.get(kind) or spots[1:]
        path, node = draw(st.sampled_from(pool))
        parent = _get(spec, path[:-1])
        if isinstance(parent, dict) and draw(st.integers(0, 9)) == 0:  # a key of its own beside this one
            key = draw(st.sampled_from(["typo", "tpye", "\x1b[2Jx", "\u202ekey", "a.b", "", "type"]) | odd_strings)
            spec = set_at(spec, (*path[:-1], key), draw(hostile({})))
            continue
        if draw(st.integers(0, 7)) == 0:  # a section the example lacks, generated from the schema
            section = draw(st.sampled_from(["tune", "scheduler", "stop", "objective", "cluster", "run", "scaling"]))
            node, path = root_schema(spec)["properties"][section], (section,)
        spec = set_at(spec, path, draw(hostile(node, dotted(spec) + SPEC_PATHS), label="/".join(map(str, path))))
    return spec


def _free_text(node: dict) -> bool:
    return any(
        option.get("type") == "string" and not {"pattern", "enum", "const"} & set(option) for option in branches(node)
    )


def _numeric_paths(spec, prefix="") -> list[str]:
    """The dotted paths of a spec's numbers, outside the sections that hold searches themselves."""
    out = []
    items = spec.items() if isinstance(spec, dict) else enumerate(spec) if isinstance(spec, list) else ()
    for key, value in items:
        if (str(key) in ("tune", "scheduler", "stop", "specc") and not prefix) or "." in str(key):
            continue
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            out.append(f"{prefix}{key}")
        out += _numeric_paths(value, f"{prefix}{key}.")
    return out or (["training.epochs"] if not prefix else [])


EDGES = [0, 1, -1, 2**63 - 1, 2**63, 10**40, 10**320, 5e-324, 1e-300, 1e308, 1.7976931348623157e308, -1e308, 0.5]
edge = st.sampled_from(EDGES) | st.sampled_from([math.nan, math.inf, -math.inf])
low_ends = st.sampled_from([0, 1, 2, 0.5, 1e-4, 5e-324, -(10**320), -(2**63) - 1])
high_ends = st.sampled_from([2, 10, 2**63 - 1, 2**63, 2**64, 10**40, 10**320, 1e308, 1.7976931348623157e308])
steps = st.sampled_from([1, 2, 0.5, 1e-300, 5e-324, 1e-30, 2**63, 10**40])
bounds = st.tuples(low_ends, high_ends) | st.tuples(edge, edge)  # mostly lo < hi, so the entry validates
distributions = st.one_of(
    st.tuples(st.sampled_from(["uniform", "loguniform", "randint", "lograndint", "randn"]), bounds).map(
        lambda t: {t[0]: list(t[1])}
    ),
    st.tuples(st.sampled_from(["quniform", "qloguniform", "qrandint", "qrandn"]), bounds, steps | edge).map(
        lambda t: {t[0]: [*t[1], t[2]]}
    ),
    st.tuples(st.sampled_from(["choice", "grid"]), st.lists(edge | odd_strings, min_size=1, max_size=4)).map(
        lambda t: {t[0]: t[1]}
    ),
    st.tuples(st.sampled_from(["grid"]), st.integers(100, 5000)).map(lambda t: {"grid": list(range(1, t[1]))}),
)


def _with_tune(spec: dict) -> dict:
    if isinstance(spec.get("tune"), dict):
        return spec
    return {**spec, "tune": {"metric": "val_loss", "mode": "min", "num_samples": 2}}


@st.composite
def searched(draw, spec: dict) -> dict:
    """The spec with a search over one of its own numbers (a tune section added if it has none), the
    distribution's bounds at the edges of what a float or an int64 holds."""
    spec = _with_tune(spec)
    space = dict(spec["tune"].get("space") or {}) if isinstance(spec["tune"].get("space"), dict) else {}
    space[draw(st.sampled_from(_numeric_paths(spec)))] = draw(distributions)
    tune = {**spec["tune"], "space": space}
    if draw(st.booleans()):
        tune["num_samples"] = draw(st.sampled_from([1, 10**6, 10**9, 2**63, 10**40]))
    return {**spec, "tune": tune}


@st.composite
def scheduled(draw, spec: dict) -> dict:
    """The spec with a scheduler generated from the schema, its numbers extreme but within their bounds, and
    as many epochs (or steps) as a trial may take."""
    spec = _with_tune(spec)
    scheduler = draw(valid(experiment_property("scheduler"), hostility=0))
    if isinstance(scheduler, dict):
        for key, value in list(scheduler.items()):
            bounded = in_bounds_extremes(DEFS_BY_TYPE.get(scheduler.get("type"), {}).get("properties", {}).get(key, {}))
            if (
                isinstance(value, (int, float))
                and not isinstance(value, bool)
                and bounded is not None
                and draw(st.booleans())
            ):
                scheduler[key] = draw(bounded)
    spec = {**spec, "scheduler": scheduler}
    epochs = draw(st.sampled_from([10**6, 2**63, 10**40, 1, None]))
    if epochs is not None and isinstance(spec.get("objective"), dict):
        spec = {**spec, "objective": {**spec["objective"], "max_steps": epochs}}
    elif epochs is not None and isinstance(spec.get("training", {}), dict):  # absent under extends: a part of it
        spec = {**spec, "training": {**spec.get("training", {}), "epochs": epochs}}
    return spec


def experiment_property(name: str) -> dict:
    return DEFS["Experiment"]["properties"][name]


DEFS_BY_TYPE = {
    node["properties"]["type"]["const"]: node
    for key, node in DEFS.items()
    if "const" in node.get("properties", {}).get("type", {}) and not key.startswith("Partial")
}


def _get(spec, path):
    for key in path:
        spec = spec[key]
    return spec


@st.composite
def schema_specs(draw) -> dict:
    """A whole spec from the schema's Experiment, its leaves now and then hostile; made coherent where one
    field decides another (format 1, a name, one of objective or model + dataset + training) most of the time."""
    spec = draw(valid(DEFS["Experiment"], hostility=0.03))
    if not isinstance(spec, dict) or draw(st.integers(0, 9)) == 0:
        return spec if isinstance(spec, dict) else {}
    spec.update(specc=1, name="generated")
    spec.pop("extends", None)
    if "objective" in spec and "model" in spec:
        for key in ("objective",) if draw(st.booleans()) else ("model", "dataset", "training"):
            spec.pop(key, None)
    if isinstance(spec.get("model"), dict):
        kind = spec["model"].get("type")  # a hostile leaf may stand there: a list, a mapping
        frameworks = {"torchvision": "torch", "keras_application": "tensorflow"}
        if isinstance(kind, str) and kind in frameworks:
            spec["framework"] = frameworks[kind]
    return spec


def specs() -> st.SearchStrategy:
    return st.one_of(mutated_specs(), mutated_specs(), mutated_specs(), schema_specs())


# YAML


def _printable_in_yaml(char: str) -> bool:
    code = ord(char)
    return (
        char in "\t\n"
        or 0x20 <= code <= 0x7E
        or code == 0x85
        or 0xA0 <= code <= 0xD7FF
        or 0xE000 <= code <= 0xFFFD
        or 0x10000 <= code <= 0x10FFFF
    ) and char not in "\ufeff"


def quote(text: str) -> str:
    """A double-quoted YAML scalar: what YAML cannot hold raw (controls, surrogates, BOM) escaped."""
    body = json.dumps(text, ensure_ascii=False)[1:-1]
    return '"' + "".join(c if _printable_in_yaml(c) else f"\\u{ord(c):04x}" for c in body) + '"'


def scalar(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return ".nan"
        if math.isinf(value):
            return ".inf" if value > 0 else "-.inf"
        return repr(value)
    return quote(str(value))


def flow(value) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{quote(str(k))}: {flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(flow(v) for v in value) + "]"
    return scalar(value)


def yaml_text(spec) -> str:
    """The spec as YAML: one top-level key a line, each value in flow style."""
    if not isinstance(spec, dict):
        return flow(spec) + "\n"
    return "".join(f"{quote(str(key))}: {flow(value)}\n" for key, value in spec.items())
