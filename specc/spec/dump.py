"""A resolved Experiment as YAML in the spec format's key order (`type` first in every section)."""

from __future__ import annotations

import yaml

from specc.spec import Experiment
from specc.spec.scalars import needs_quotes


class _Dumper(yaml.SafeDumper):
    pass


def _represent_list(dumper: yaml.SafeDumper, items: list):
    flow = all(not isinstance(item, dict | list) for item in items)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", items, flow_style=flow)


_BREAKS = frozenset("\x85\u2028\u2029")


def _represent_str(dumper: yaml.SafeDumper, text: str):
    """Quoted when a spec reader would read it plain as something else (`1e5` is a float in YAML 1.2); in double
    quotes, which escape them, when it holds a line break other than \\n (PyYAML writes NEL and U+2028 raw)."""
    style = '"' if _BREAKS.intersection(text) else "'" if needs_quotes(text) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


_Dumper.add_representer(list, _represent_list)
_Dumper.add_representer(str, _represent_str)


def _type_first(value):
    if isinstance(value, dict):
        ordered = {"type": value["type"]} if "type" in value else {}
        ordered.update((key, _type_first(item)) for key, item in value.items() if key != "type")
        return ordered
    if isinstance(value, list):
        return [_type_first(item) for item in value]
    return value


# Fields of the format's second release (SPEC §12), by section and, where only some types gained them, type.
# While they hold their defaults they are left out of the resolved spec a run records (`specc show` lists them):
# a spec that uses none of them records the text it did before, so it keeps its sha256 and runs started by an
# earlier specc still --resume (the compiled script compares spec.resolved.yaml by text).
LATER_FIELDS = {
    ("dataset", None): (
        "global_batch_size",
        "shuffle",
        "standardize",
        "subset",
        "augment",
        "loader_workers",
        "validation_from",  # torchvision and keras_dataset only
        "categorical",  # csv, parquet, jsonl
        "missing",
    ),
    ("scaling", None): ("data_cpus",),
    ("training", None): ("steps_per_epoch", "validation_steps", "train_metrics"),
    ("model", "cnn"): ("pool", "padding", "batch_norm"),
    ("stop", None): ("all_when",),
}


def _later_defaults(experiment: Experiment) -> dict[str, set[str]]:
    left_out: dict[str, set[str]] = {}
    for (section, kind), names in LATER_FIELDS.items():
        values = getattr(experiment, section)
        if values is None:
            continue  # an objective spec has no model, dataset or training
        if kind is not None and getattr(values, "type", None) != kind:
            continue
        fields = type(values).model_fields
        defaults = {name: fields[name].get_default(call_default_factory=True) for name in names if name in fields}
        left_out[section] = {name for name, default in defaults.items() if getattr(values, name) == default}
    return left_out


# Top-level sections one of the two forms of a spec leaves out (objective, or model + dataset + training): absent,
# never null, so that a spec of either form records what it did before objective existed.
EITHER_FORM = ("framework", "objective", "model", "dataset", "training")


def spec_data(experiment: Experiment, *, every_default: bool = True) -> dict:
    exclude = {"extends": True} if every_default else {"extends": True, **_later_defaults(experiment)}
    exclude.update({name: True for name in EITHER_FORM if getattr(experiment, name) is None})
    return _type_first(experiment.model_dump(mode="json", exclude=exclude))


def dump_yaml(data) -> str:
    """Plain data as spec YAML that specc reads back exactly as it was (strings that look like numbers quoted)."""
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)


def dump_spec(experiment: Experiment) -> str:
    """The resolved spec as `specc show` prints it: every default filled in."""
    return dump_yaml(spec_data(experiment))


def dump_recorded(experiment: Experiment) -> str:
    """The resolved spec a compiled script records as spec.resolved.yaml and names by its sha256."""
    return dump_yaml(spec_data(experiment, every_default=False))
