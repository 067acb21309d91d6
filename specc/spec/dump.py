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
# a spec that uses none of them records the data it did before, so runs started by an earlier specc still --resume
# (the runtime compares spec.resolved.yaml's data, whichever layout wrote it).
LATER_FIELDS = {
    ("dataset", None): (
        "global_batch_size",
        "shuffle",
        "standardize",
        "subset",
        "augment",
        "loader_workers",
        "validation_from",  # torchvision, keras_dataset, file tables and image folders
        "shuffle_validation",
        "categorical",  # csv, parquet, jsonl
        "missing",
    ),
    ("scaling", None): ("data_cpus",),
    ("training", None): ("steps_per_epoch", "validation_steps", "train_metrics"),
    ("model", "cnn"): ("pool", "padding", "batch_norm"),
    ("stop", None): ("all_when",),
    # the third release (SPEC §13); objective: a Trainable class instead of a function, and its checkpoint settings
    ("tune", None): ("repeat",),
    ("run", None): ("fail_fast",),
    ("objective", None): ("function", "trainable", "checkpoint_every", "checkpoint_at_end"),
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
    """The resolved spec a compiled script records as spec.resolved.yaml and names by its sha256, compact: the
    experiment file carries it as its record, not for reading (its CONFIG and Trainer say the same in code)."""
    return dump_compact(spec_data(experiment, every_default=False))


RECORD_WIDTH = 110  # the experiment file holds these lines inside a string (ruff's 120 columns)


def dump_compact(data: dict, indent: int = 0) -> str:
    """Plain data as YAML that reads back exactly as dump_yaml's does, an entry to a line: a mapping's entries in
    flow style, wrapped between entries onto lines indented under it; a mapping with an entry too long for that, one
    entry a line by the same rule; an entry too long on its own (a long string) as dump_yaml writes it."""
    return "".join(_compact_entry(key, value, " " * indent) for key, value in data.items())


def _compact_entry(key, value, indent: str) -> str:
    line = indent + _flow({key: value})
    if len(line) <= RECORD_WIDTH or not isinstance(value, dict) or not value:
        if len(line) <= RECORD_WIDTH:
            return line + "\n"
        return "".join(indent + row for row in dump_yaml({key: value}).splitlines(True))
    items = [_flow({name: item}) for name, item in value.items()]
    lines, line = [], indent + _flow({key: {}}).removesuffix("{}") + "{"
    for index, item in enumerate(items):
        item += "}" if index == len(items) - 1 else ","
        if len(line) + 1 + len(item) > RECORD_WIDTH and not line.endswith("{"):
            lines.append(line)
            line = indent + "  " + item
        else:
            line += ("" if line.endswith("{") else " ") + item
    lines.append(line)
    if max(map(len, lines)) > RECORD_WIDTH:  # an entry too long to share a line: one entry a line
        return indent + _flow({key: {}}).removesuffix(" {}") + "\n" + dump_compact(value, len(indent) + 2)
    return "\n".join(lines) + "\n"


def _flow(entry: dict) -> str:
    """One mapping entry in YAML flow style on one line, without the braces around it."""
    text = yaml.dump(entry, Dumper=_Dumper, sort_keys=False, allow_unicode=True, default_flow_style=True, width=1 << 30)
    return text.strip()[1:-1]
