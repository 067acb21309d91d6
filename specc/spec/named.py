"""What a named class's section shares (SPEC §13): a section of the spec that names one of its framework's classes
by `type` and gives its keyword arguments beside it, and the union that tells it from the sections specc documents
field by field (the curated names, which keep their fields)."""

from __future__ import annotations

from typing import Annotated, ClassVar, get_args

from pydantic import BaseModel, ConfigDict, StringConstraints, WithJsonSchema

from specc.spec.base import IDENTIFIER_PATTERN, Section


class NamedClass(Section):
    """A class of the framework's, by `type`; its other keys are the class's keyword arguments, checked against its
    own signature from specc's catalog (specc/catalog, specc.check.named)."""

    model_config = ConfigDict(**{**Section.model_config, "extra": "allow"})  # past `type`: the class's arguments
    family: ClassVar[str]  # the catalog's family: optimizers, lr_schedules, losses

    def arguments(self) -> dict:
        """The class's keyword arguments as the spec gives them."""
        return dict(self.model_extra or {})


def named_type(curated):
    """The `type` of a named class: an identifier, none of the curated names (which their own sections take)."""
    schema = {"type": "string", "pattern": IDENTIFIER_PATTERN, "not": {"enum": list(curated)}}
    return Annotated[str, StringConstraints(pattern=IDENTIFIER_PATTERN), WithJsonSchema(schema)]


def tagger(curated):
    """The discriminator of a union of curated sections and a named one: a mapping's `type` when it is a curated
    name, else "named"; None for what is not a mapping (pydantic says so, at the field)."""

    def tag(value) -> str | None:
        if not isinstance(value, dict | BaseModel):
            return None
        kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
        return kind if isinstance(kind, str) and kind in curated else "named"

    return tag


def spelling(by_class_name: dict[str, str]):
    """A curated class named as its class is (Adam, StepLR): the curated section, under its snake_case name."""

    def spelled(value):
        kind = value.get("type") if isinstance(value, dict) else None
        if isinstance(kind, str) and kind in by_class_name:
            return {**value, "type": by_class_name[kind]}
        return value

    return spelled


def types_of(sections) -> tuple[str, ...]:
    """The `type` each section of a union is chosen by (its Literal)."""
    return tuple(get_args(section.model_fields["type"].annotation)[0] for section in sections)


def class_spelling(family: str, types: tuple[str, ...]):
    """A section that names its class as the library does (OptunaSearch, ASHAScheduler, TuneBOHB): the section under
    specc's name for that class. The check stage passes what the catalog knows in the validation context
    (`class_names(family, name)`: every name of the class `name` finds); the spec stage reads no catalog itself. Any
    other `type` is left for the union to refuse."""

    def spelled(value, info):
        kind = value.get("type") if isinstance(value, dict) else None
        class_names = (info.context or {}).get("class_names")
        if not isinstance(kind, str) or kind in types or class_names is None:
            return value
        own = [name for name in class_names(family, kind) if name in types]
        return {**value, "type": own[0]} if own else value

    return spelled
