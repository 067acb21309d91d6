"""Classes a spec names from its framework (SPEC §13): an optimizer torch.optim or Keras offers beyond the ones
specc documents field by field, checked against specc's catalog (specc/catalog), which is generated from the pinned
packages: the name is one of the framework's, the compiled loop can drive the class, and each argument the spec
gives is one of the class's keyword arguments, of a type it takes. The same catalog types a searched argument
(`annotation`), so that tune.space checks its values as it checks any field's.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any, Literal, Union

from specc import catalog
from specc.check.fields import Locator, _describe, did_you_mean
from specc.read.document import Path
from specc.spec.errors import Problem, excerpt
from specc.spec.experiment import Experiment
from specc.spec.loss import CURATED_LOSSES, KERAS_NAMES
from specc.spec.model import NEUTRAL_ACTIVATIONS
from specc.spec.named import NamedClass
from specc.spec.schedule import CURATED_SCHEDULES
from specc.spec.training import NamedOptimizer
from specc.spec.training import _optimizer_tag as _tag

LIBRARY = {"torch": "torch.optim", "keras": "Keras", "ray_tune": "Ray Tune"}  # whose optimizers, schedules, searchers
FRAMEWORK = {"torch": "torch.nn", "keras": "Keras"}
KINDS = {"lr_schedules": "learning-rate schedule", "losses": "loss"}
KERAS_CLIPPING = ("global_clipnorm", "clipnorm", "clipvalue")  # a Keras optimizer's own gradient clipping
# What a YAML value can be for each of the catalog's type tags; the other tags (a callable, a tensor, a class) take
# Python objects no spec can write.
TAKES = {
    "float": lambda v: isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v),
    "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "bool": lambda v: isinstance(v, bool),
    "str": lambda v: isinstance(v, str),
    "none": lambda v: v is None,
    "list": lambda v: isinstance(v, list),
    "tuple": lambda v: isinstance(v, list),
    "dict": lambda v: isinstance(v, dict),
    "any": lambda v: True,
    "object": lambda v: True,
}
WORDS = {
    "float": "a number",
    "int": "an integer",
    "bool": "true or false",
    "str": "a string",
    "none": "null",
    "list": "a list",
    "tuple": "a list",
    "dict": "a mapping",
}
ANNOTATIONS = {"float": float, "int": int, "bool": bool, "str": str, "none": None, "list": list, "tuple": list}


def framework_of(e: Experiment) -> str:
    """The catalog a spec's classes come from: torch's, or Keras' for tensorflow."""
    return "keras" if e.framework == "tensorflow" else "torch"


def named_entry(e: Experiment, field: str) -> catalog.Entry | None:
    """The catalog's entry for training.<field> (optimizer, lr_schedule, loss) when it names a class of the
    framework's: None for one of specc's curated names, or a name the catalog lacks. A curated loss name under a
    Keras loss's `type` is the class specc compiles it to."""
    section = getattr(e.training, field, None) if e.training is not None else None
    if not isinstance(section, NamedClass):
        return None
    framework, name = framework_of(e), section.type
    if field == "loss" and framework == "keras":
        name = KERAS_NAMES.get(name, name)
    return catalog.lookup(framework, section.family, name)


def named_optimizer(e: Experiment) -> catalog.Entry | None:
    """The catalog's entry for a spec's named optimizer (None for a curated one, or a name the catalog lacks)."""
    return named_entry(e, "optimizer")


def named_classes(e: Experiment, at: Locator) -> Iterator[Problem]:
    """model.activation and training.optimizer, when they name a class of the framework's rather than one specc
    documents."""
    if e.framework is None or e.objective is not None:
        return
    yield from activation_problems(e, at)
    if e.training is None:
        return
    framework, optimizer = framework_of(e), e.training.optimizer
    for field in ("lr_schedule", "loss"):  # a schedule or loss of the framework's, by name
        section = getattr(e.training, field)
        if isinstance(section, NamedClass):
            name = (
                KERAS_NAMES.get(section.type, section.type)
                if field == "loss" and framework == "keras"
                else section.type
            )
            curated = tuple(CURATED_SCHEDULES if field == "lr_schedule" else CURATED_LOSSES)
            yield from named_problems(
                framework, section.family, name, section.arguments(), ("training", field), at, curated
            )
    if isinstance(optimizer, NamedOptimizer):
        given = optimizer.model_extra or {}
        yield from named_problems(framework, "optimizers", optimizer.type, given, ("training", "optimizer"), at)
        clips = [key for key in KERAS_CLIPPING if key in given] if framework == "keras" else []
        if clips and e.training.grad_clip_norm is not None:  # the script passes grad_clip_norm as global_clipnorm
            message = f"training.grad_clip_norm and the optimizer's {clips[0]} would both clip the gradients"
            hint = "give one: training.grad_clip_norm (as torch's loop clips) or the Keras argument"
            yield at("E100", message, ("training", "optimizer", clips[0]), hint, also=("training", "grad_clip_norm"))
    entry = e.tune.space.get("training.optimizer") if e.tune else None
    for index, option in enumerate(entry.args if entry is not None and entry.kind in ("choice", "grid") else ()):
        # an option of a searched optimizer (its curated types' fields are checked like the section's)
        kind = option.get("type") if isinstance(option, dict) else None
        if isinstance(kind, str) and _tag(option) == "named":
            given = {key: value for key, value in option.items() if key != "type"}
            where = ("tune", "space", "training.optimizer", entry.kind, index)
            yield from named_problems(framework, "optimizers", kind, given, where, at)


def activation_problems(e: Experiment, at: Locator) -> Iterator[Problem]:
    """model.activation, and each value a search draws for it, beyond the names specc writes the same on both
    frameworks: an activation of the spec's framework."""
    from specc.check.search_space import space_entries

    if getattr(e.model, "activation", None) is None:
        return
    drawn = [(e.model.activation, ("model", "activation"))]
    for _kind, where, entries in space_entries(e):
        distribution = entries.get("model.activation")
        values = getattr(distribution, "args", distribution) if distribution is not None else None
        if isinstance(values, list):
            kind = getattr(distribution, "kind", None)
            drawn += [
                (value, (*where, "model.activation", *((kind,) if kind else ()), index))
                for index, value in enumerate(values)
            ]
    framework = framework_of(e)
    for name, path in drawn:
        if not isinstance(name, str) or name in NEUTRAL_ACTIVATIONS:
            continue
        entry = catalog.lookup(framework, "activations", name)
        searched = path[0] != "model"  # a value a search draws (E203), or the field's own (E104)
        if entry is None:
            family = catalog.family(framework, "activations").values()
            own = sorted(option.name for option in family if not option.not_drivable)
            hint = did_you_mean(name, [*NEUTRAL_ACTIVATIONS, *catalog.spellings(framework, "activations")])
            hint = (
                hint
                or f"on both frameworks: {', '.join(NEUTRAL_ACTIVATIONS)}; {FRAMEWORK[framework]}'s: {', '.join(own)}"
            )
            message = f"{excerpt(name)} is not an activation of {FRAMEWORK[framework]}"
            yield at("E203" if searched else "E104", f"choice value {message}" if searched else message, path, hint)
        elif entry.not_drivable or needs_arguments(entry):
            why = (
                entry.not_drivable
                or f"it needs {', '.join(needs_arguments(entry))}, which an activation's name cannot give"
            )
            yield at("E260", f"{entry.path} cannot be the model's activation: {why}", path)


def needs_arguments(entry: catalog.Entry) -> list[str]:
    """The arguments a class cannot be built without (torch's Threshold: threshold and value)."""
    return [param.name for param in entry.params.values() if param.required and not param.supplied]


def named_problems(
    framework: str, family: str, name: str, given: dict, where: Path, at: Locator, curated: tuple[str, ...] = ()
) -> Iterator[Problem]:
    """The name is one of the family's (or close to one of it or of specc's `curated` names), the class can be
    driven, and each given argument is one of its keyword arguments, of a type and value it takes."""
    kind = KINDS.get(family, family.removesuffix("s"))
    entry = catalog.lookup(framework, family, name)
    if entry is None:
        library = (FRAMEWORK if family == "losses" else LIBRARY)[framework]
        close = catalog.did_you_mean(framework, family, name)
        names = [entry.name for entry in catalog.family(framework, family).values() if not entry.not_drivable]
        hint = did_you_mean(name, list(curated)) or (f"did you mean '{close[0]}'?" if close else None)
        hint = hint or f"{library}'s: " + ", ".join(sorted(names))
        yield at("E105", f"{library} has no {kind} {excerpt(name)}", (*where, "type"), hint)
        return
    if entry.not_drivable:
        yield at("E260", f"{entry.path} cannot be the {kind} here: {entry.not_drivable}", (*where, "type"))
        return
    settable = entry.settable
    listed = f"{entry.class_name}'s arguments: {', '.join(settable) or 'none'}"
    for key, value in given.items():
        if key not in settable:
            supplied = key in entry.params
            message = f"{entry.path} takes no argument {excerpt(key)}" + (" from a spec" if supplied else "")
            hint = "the compiled code passes it" if supplied else did_you_mean(str(key), settable) or listed
            if key == "lr" and "learning_rate" in settable:
                hint = f"Keras calls it learning_rate: {entry.class_name}(learning_rate=...)"
            yield at("E101", message, (*where, key), hint, key=True)
            continue
        param = entry.params[key]
        if not any(TAKES.get(tag, lambda v: False)(value) for tag in param.types):
            wanted = " or ".join(dict.fromkeys(WORDS[tag] for tag in sorted(_said(param.types)) if tag in WORDS))
            message = f"{entry.class_name}'s {key} is {wanted or 'a Python object a spec cannot write'}"
            yield at("E103", f"{message}, got {_describe(value)}", (*where, key), listed)
        elif param.choices and value not in param.choices:
            allowed = [str(choice) for choice in param.choices]
            hint = did_you_mean(str(value), allowed)  # the closest choice, not a letter of the list
            yield at("E104", f"{excerpt(value)} is not one of: {', '.join(allowed)}", (*where, key), hint)
    missing = [p.name for p in entry.params.values() if p.required and not p.supplied and p.name not in given]
    if missing:
        yield at("E102", f"{entry.path} needs {', '.join(missing)}", where, listed)


def _said(types) -> set[str]:
    """The type tags as a problem names them: a float takes integers too, so "a number" says both."""
    return types - {"int"} if "float" in types else types


def annotation(entry: catalog.Entry, key: str) -> Any:
    """The type of the argument `key` as a search's values are checked against it (Any where the catalog cannot
    say more); None for an argument the class does not take."""
    param = entry.params.get(key)
    if param is None or key not in entry.settable:
        return None
    if param.choices:
        return Literal[tuple(param.choices)]
    types = [ANNOTATIONS[tag] for tag in sorted(param.types) if tag in ANNOTATIONS]
    if not types or param.types - set(ANNOTATIONS):
        return Any
    return Union[tuple(types)] if len(types) > 1 else types[0]
