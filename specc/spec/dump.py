"""A resolved Experiment as YAML in the spec format's key order (`type` first in every section)."""

from __future__ import annotations

import yaml

from specc.spec import Experiment


class _Dumper(yaml.SafeDumper):
    pass


def _represent_list(dumper: yaml.SafeDumper, items: list):
    flow = all(not isinstance(item, dict | list) for item in items)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", items, flow_style=flow)


_Dumper.add_representer(list, _represent_list)


def _type_first(value):
    if isinstance(value, dict):
        ordered = {"type": value["type"]} if "type" in value else {}
        ordered.update((key, _type_first(item)) for key, item in value.items() if key != "type")
        return ordered
    if isinstance(value, list):
        return [_type_first(item) for item in value]
    return value


def spec_data(experiment: Experiment) -> dict:
    return _type_first(experiment.model_dump(mode="json", exclude={"extends"}))


def dump_spec(experiment: Experiment) -> str:
    return yaml.dump(spec_data(experiment), Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)
