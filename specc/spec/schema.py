"""The JSON Schema of the spec format, generated from the models (never written by hand).

A spec with `extends` is partial: its parents supply the rest. So the schema has two roots: the full
`Experiment`, and `PartialExperiment`, in which no section requires anything (editors must not flag a child
spec for keys its parent has). `if extends then partial else full` picks between them. Search-space
distributions stay whole in both: a child writes an entry completely or not at all.
"""

from __future__ import annotations

import json

from specc.spec import Experiment
from specc.spec.space import DISTRIBUTIONS

SCHEMA_ID = "urn:specc:schema:experiment:1"
DRAFT = "https://json-schema.org/draft/2020-12/schema"
_WHOLE = {cls.__name__ for cls in DISTRIBUTIONS}


def schema() -> dict:
    generated = Experiment.model_json_schema()
    defs = generated.pop("$defs")
    root = {key: value for key, value in generated.items() if key != "title"}
    # Either form of a spec (SPEC §12): an objective function, or a model trained on a data set.
    root["anyOf"] = [{"required": ["objective"]}, {"required": ["framework", "model", "dataset", "training"]}]
    defs["Experiment"] = root
    partial = {f"Partial{name}": _relaxed(body) for name, body in defs.items() if name not in _WHOLE}
    # An objective's trainable is a function or a class (SPEC §13): exactly one of the two keys.
    defs["Objective"]["oneOf"] = [{"required": ["function"]}, {"required": ["trainable"]}]
    return {
        "$schema": DRAFT,
        "$id": SCHEMA_ID,
        "title": "specc experiment spec, format 1",
        "description": generated.get("description", ""),
        "if": {"required": ["extends"]},
        "then": {"$ref": "#/$defs/PartialExperiment"},
        "else": {"$ref": "#/$defs/Experiment"},
        "$defs": dict(sorted({**defs, **partial}.items())),
    }


def schema_text() -> str:
    return json.dumps(schema(), indent=2, ensure_ascii=False) + "\n"


def _relaxed(node):
    """A copy with no `required` and refs pointing at the partial definitions; discriminated unions become anyOf."""
    if isinstance(node, list):
        return [_relaxed(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if key == "required" or key == "discriminator":
            continue
        if key == "$ref" and value.rsplit("/", 1)[-1] not in _WHOLE:
            value = value.replace("#/$defs/", "#/$defs/Partial")
        out["anyOf" if key == "oneOf" and "discriminator" in node else key] = _relaxed(value)
    return out
