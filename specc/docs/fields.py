"""Every mapping of the spec format and its fields, read from the models' JSON Schema, in the order a reader meets them.

A `Block` is one mapping as a spec writes it: a section (`training`), a variant of a section chosen by `type`
(`training.optimizer` with `type: sgd`), a distribution (`{uniform: [lo, hi]}`) or a nested mapping (`model.pool`).
Each model of `specc/spec/` is one block, placed where the spec first reaches it; its fields are `Field`s. Paths
read as a spec writes them: `dataset.augment[]` is an item of a list, `tune.space[PATH]` the value of a key.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

from specc.spec.base import PATTERN_MEANINGS, SPACE_PATH_PATTERN

ROOT = "Experiment"
TOP = "top-level"  # the page of the root's own fields (specc, name, framework, ...)
OTHER = "other"  # the variant whose `type` is any name but the others' (a class of the catalog)


@dataclass
class Field:
    name: str
    path: str  # training.optimizer.lr
    schema: dict  # the property's JSON Schema
    required: bool
    block: Block = field(repr=False)

    @property
    def anchor(self) -> str:
        """The field's id on its page; a one-key block (a distribution) is its field."""
        if self.block.single:
            return self.block.anchor
        return f"{self.block.anchor}.{self.name}" if self.block.path else self.name

    @property
    def key(self) -> str:
        """`SGD.lr`: the model and the field, as terms.py names it."""
        return f"{self.block.definition}.{self.name}"

    @property
    def generic_path(self) -> str:
        """The path without list or key markers: `dataset.augment.random_crop.size`."""
        return _plain(self.path)

    @property
    def description(self) -> str:
        return clean(self.schema.get("description", ""))


@dataclass
class Block:
    definition: str  # the model's name: SGD
    path: str  # where a spec writes it: training.optimizer ("" for the root)
    doc: str
    variant: str | None = None  # the value of its `type` (sgd), or its one key (uniform)
    union: tuple[str, ...] = ()  # the models of the union it is a variant of, itself included, in order
    fields: list[Field] = field(default_factory=list)
    also: list[str] = field(default_factory=list)  # other paths that reach the same model
    parent: Field | None = field(default=None, repr=False)  # the field that first reaches it

    @property
    def page(self) -> str:
        """The section it belongs to: the path's first key."""
        return _plain(self.path).split(".")[0] if self.path else TOP

    @property
    def single(self) -> bool:
        """A one-key mapping whose key names it: `{uniform: [lo, hi]}`, `{random_crop: {...}}`."""
        return len(self.fields) == 1 and self.fields[0].name == self.variant

    @property
    def tagged(self) -> bool:
        """A variant chosen by its `type` field."""
        return any(f.name == "type" for f in self.fields) and self.variant is not None

    @property
    def anchor(self) -> str:
        base = _plain(self.path) or TOP
        if self.variant and self.variant not in base.split("."):
            return f"{base}.{self.variant}"
        return base


def clean(text: str) -> str:
    """A description on one line: docstrings keep their line breaks in the schema."""
    return " ".join(text.split())


def _plain(path: str) -> str:
    return path.replace("[]", "").replace("[PATH]", "").replace("[NAME]", "")


def definitions(schema: dict) -> dict[str, dict]:
    """The full models' schemas (the partial ones, for specs with `extends`, repeat them without `required`)."""
    return {name: body for name, body in schema["$defs"].items() if not name.startswith("Partial")}


@functools.cache
def _schema() -> dict:
    from specc.spec.schema import schema

    return schema()


def blocks(schema: dict | None = None) -> list[Block]:
    """Every model reachable from the root, once each, in a depth-first walk of the fields in their order."""
    defs = definitions(schema or _schema())
    found: dict[str, Block] = {}
    order: list[Block] = []

    def visit(name: str, path: str, variant: str | None, union: tuple[str, ...], parent: Field | None) -> None:
        if name in found:
            if path != found[name].path and path not in found[name].also:
                found[name].also.append(path)
            return
        body = defs[name]
        block = Block(name, path, clean(body.get("description", "")), variant, union, parent=parent)
        found[name] = block
        order.append(block)
        required = set(body.get("required", ()))
        for key, prop in body.get("properties", {}).items():
            where = f"{path}.{key}" if path else key
            block.fields.append(Field(key, where, prop, key in required, block))
            for child, suffix, tag, members in children(prop, defs):
                visit(child, where + suffix, tag, members, block.fields[-1])

    visit(ROOT, "", None, (), None)
    return order


def children(node: dict, defs: dict[str, dict], suffix: str = "") -> list[tuple[str, str, str | None, tuple]]:
    """(model, path suffix, variant tag, union members) for each model a property's schema refers to."""
    found = []
    if "$ref" in node:
        found.append((ref_name(node), suffix, None, ()))
    for key in ("oneOf", "anyOf"):
        members = [ref_name(item) for item in node.get(key, ()) if "$ref" in item]
        union = tuple(members) if len(members) > 1 else ()
        for item in node.get(key, ()):
            for name, more, tag, inner in children(item, defs, suffix):
                if union and name in union:
                    tag, inner = variant_tag(defs[name], name), union
                found.append((name, more, tag, inner))
    if isinstance(node.get("items"), dict):
        found += children(node["items"], defs, suffix + "[]")
    for pattern, value in node.get("patternProperties", {}).items():
        found += children(value, defs, suffix + ("[PATH]" if pattern == SPACE_PATH_PATTERN else "[NAME]"))
    if isinstance(node.get("additionalProperties"), dict):
        found += children(node["additionalProperties"], defs, suffix + "[NAME]")
    return found


def ref_name(node: dict) -> str:
    return node["$ref"].rsplit("/", 1)[-1]


def variant_tag(body: dict, name: str) -> str:
    """How a spec picks this variant: its `type` value, its one key, or (a `type` of any other name) the model's."""
    properties = body.get("properties", {})
    if "type" in properties:
        kind = properties["type"]
        if "const" in kind:
            return str(kind["const"])
        return str(kind["enum"][0]) if len(kind.get("enum", ())) == 1 else OTHER
    return next(iter(properties)) if len(properties) == 1 else name.lower()


def key_meaning(pattern: str) -> str:
    """What a mapping's keys must be, in words."""
    return PATTERN_MEANINGS.get(pattern, f"a key matching {pattern}")
