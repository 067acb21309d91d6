"""The JSON Schema: generated from the models, committed, documented, and usable by editors."""

from __future__ import annotations

import json

import jsonschema
import yaml

from specc import api
from specc.cli import Exit, main
from tests.conftest import ROOT

SCHEMA_FILE = ROOT / "schemas" / "experiment.schema.json"


def test_committed_schema_is_not_stale():
    assert SCHEMA_FILE.read_text(encoding="utf-8") == api.schema_text(), "run `specc schema` and commit the file"


def test_schema_check_flag(tmp_path, capsys):
    assert main(["schema", "-o", str(tmp_path)]) == Exit.OK
    assert main(["schema", "-o", str(tmp_path), "--check"]) == Exit.OK
    (tmp_path / "experiment.schema.json").write_text("{}")
    assert main(["schema", "-o", str(tmp_path), "--check"]) == Exit.PROBLEMS


def test_schema_has_id_title_and_a_description_on_every_property():
    schema = api.schema()
    assert schema["$id"] and schema["title"] and schema["$schema"].endswith("2020-12/schema")
    missing = []

    def visit(node, where):
        if isinstance(node, dict):
            for name, prop in (node.get("properties") or {}).items():
                if "description" not in prop:
                    missing.append(f"{where}.{name}")
            for key, value in node.items():
                visit(value, f"{where}/{key}")
        elif isinstance(node, list):
            for index, item in enumerate(node):
                visit(item, f"{where}[{index}]")

    visit(schema, "#")
    assert missing == []


def test_example_specs_are_valid_against_the_schema():
    validator = jsonschema.Draft202012Validator(json.loads(SCHEMA_FILE.read_text()))
    specs = sorted((ROOT / "specs").rglob("*.yaml"))
    assert specs
    for path in specs:
        errors = list(validator.iter_errors(yaml.safe_load(path.read_text())))
        assert errors == [], f"{path}: {errors[0].message}"


def test_every_example_spec_points_editors_at_the_schema():
    for path in sorted((ROOT / "specs").rglob("*.yaml")):
        first = path.read_text().splitlines()[0]
        relative = "../" * (len(path.relative_to(ROOT / "specs").parts)) + "schemas/experiment.schema.json"
        assert first == f"# yaml-language-server: $schema={relative}", path


def test_partial_specs_with_extends_validate_but_unknown_keys_do_not():
    validator = jsonschema.Draft202012Validator(api.schema())
    assert not list(validator.iter_errors({"extends": "base.yaml", "model": {"dropout": 0.5}}))
    assert list(validator.iter_errors({"extends": "base.yaml", "model": {"dropot": 0.5}}))
    assert list(validator.iter_errors({"specc": 1, "name": "x", "model": {"type": "mlp"}}))  # no extends: complete
