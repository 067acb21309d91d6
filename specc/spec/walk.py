"""Following a path through the spec's models: which type, keys, choices and defaults live there.

Used to word problems (allowed keys, choices, a field's description) and to fill a section's defaults
when `--set` creates it. The models are the only source: nothing here is a list kept by hand.
"""

from __future__ import annotations

import copy
import types
import typing
from typing import Any, Literal, Union

from pydantic import BaseModel

from specc.spec.space import Distribution


def spec_type_at(root: Any, loc: tuple) -> Any:
    """The annotation at a pydantic loc (tags pick union members), or None when it cannot be followed."""
    current = root
    for part in loc:
        current = _step(current, part)
        if current is None:
            return None
    return current


def _members(annotation) -> list:
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _members(typing.get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        out = []
        for arg in typing.get_args(annotation):
            out.extend(_members(arg))
        return out
    return [annotation]


def _step(annotation, part):
    for member in _members(annotation):
        if isinstance(member, type) and issubclass(member, BaseModel):
            if part in member.model_fields:
                return member.model_fields[part].annotation
            continue
        origin = typing.get_origin(member)
        args = typing.get_args(member)
        if origin is list and isinstance(part, int):
            return args[0]
        if origin is dict and isinstance(part, str):
            return args[1]
    # a union tag: pick the member whose `type` (or distribution key) is `part`
    for member in _members(annotation):
        if isinstance(member, type) and issubclass(member, BaseModel) and _tag_of(member) == part:
            return member
    return None


def _tag_of(model: type[BaseModel]) -> str | None:
    if issubclass(model, Distribution):
        return model.kind
    field = model.model_fields.get("type")
    if field and typing.get_origin(field.annotation) is Literal:
        return typing.get_args(field.annotation)[0]
    return None


def allowed_keys(root, loc: tuple) -> list[str]:
    for member in _members(spec_type_at(root, loc)):
        if isinstance(member, type) and issubclass(member, BaseModel):
            return list(member.model_fields)
    return []


def tags(root, loc: tuple) -> list[str]:
    models = [m for m in _members(spec_type_at(root, loc)) if isinstance(m, type) and issubclass(m, BaseModel)]
    return [tag for tag in map(_tag_of, models) if tag]


def is_distribution(root, loc: tuple) -> bool:
    members = _members(spec_type_at(root, loc))
    return any(isinstance(m, type) and issubclass(m, Distribution) for m in members)


def choices(root, loc: tuple) -> list:
    for member in _members(spec_type_at(root, loc)):
        if typing.get_origin(member) is Literal:
            return list(typing.get_args(member))
    return []


def field_description(root, loc: tuple) -> str | None:
    parent = [m for m in _members(spec_type_at(root, loc[:-1])) if isinstance(m, type) and issubclass(m, BaseModel)]
    if parent and loc[-1] in parent[0].model_fields:
        return parent[0].model_fields[loc[-1]].description
    return None


def section_default(root: type[BaseModel], path: tuple, data: dict) -> dict | list | None:
    """The default of the section or list at `path` as spec data (training.optimizer -> {type: adam}), or None.

    Sections already present in `data` pick their union member by their `type`.
    """
    current: Any = root
    node: Any = data
    for index, part in enumerate(path):
        models = [m for m in _members(current) if isinstance(m, type) and issubclass(m, BaseModel)]
        if isinstance(node, dict) and "type" in node:
            models = [m for m in models if _tag_of(m) == node["type"]] or models
        if len(models) != 1 or part not in models[0].model_fields:
            return None
        field = models[0].model_fields[part]
        node = node.get(part) if isinstance(node, dict) else None
        if index == len(path) - 1:
            default = field.default
            if isinstance(default, BaseModel):
                return default.model_dump(exclude_unset=True)
            return copy.deepcopy(default) if isinstance(default, list | dict) else None
        current = type(field.default) if isinstance(field.default, BaseModel) and node is None else field.annotation
    return None
