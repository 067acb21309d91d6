"""`specc check-compiled` and `specc validate --skip-non-specs` (what the pre-commit hooks run), and the light
core install: running without Ray's extra is a clear message."""

from __future__ import annotations

import subprocess
import sys

import pytest

from specc.cli import main

SPEC = """\
specc: 1
name: small
framework: torch
model: {type: mlp, hidden_sizes: [16]}
dataset: {type: iris}
training: {epochs: 2}
"""


@pytest.fixture
def repo(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    subprocess.run(["git", "init", "-q"], check=True)
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "small.yaml").write_text(SPEC, encoding="utf-8")
    assert main(["compile", "specs/small.yaml", "-o", "build/small.py"]) == 0
    (tmp_path / "tool.py").write_text('"""Not compiled by specc."""\n')
    subprocess.run(["git", "add", "-A"], check=True)
    capsys.readouterr()
    return tmp_path


def test_fresh_scripts_pass(repo, capsys):
    assert main(["check-compiled"]) == 0
    assert "1 compiled script, 0 out of date" in capsys.readouterr().err


def test_a_spec_change_makes_its_script_stale(repo, capsys):
    (repo / "specs" / "small.yaml").write_text(SPEC.replace("epochs: 2", "epochs: 3"), encoding="utf-8")
    assert main(["check-compiled"]) == 1
    err = capsys.readouterr().err
    assert "build/small.py: stale" in err and "run `specc compile specs/small.yaml -o build/small.py`" in err
    assert main(["compile", "specs/small.yaml", "-o", "build/small.py"]) == 0
    assert main(["check-compiled", "build/small.py"]) == 0


def test_a_script_whose_spec_is_gone_or_broken(repo, capsys):
    (repo / "specs" / "small.yaml").write_text(SPEC.replace("epochs: 2", "epochs: zero"), encoding="utf-8")
    assert main(["check-compiled"]) == 1
    assert "its spec specs/small.yaml has problems" in capsys.readouterr().err
    (repo / "specs" / "small.yaml").unlink()
    assert main(["check-compiled"]) == 1
    assert "compiled from specs/small.yaml, which does not exist" in capsys.readouterr().err


def test_outside_git_the_scripts_must_be_named(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    assert main(["check-compiled"]) == 2
    assert "name the compiled scripts" in capsys.readouterr().err


def test_validate_skips_yaml_that_is_not_a_spec(tmp_path, capsys):
    (tmp_path / "workflow.yml").write_text("on: push\njobs: {}\n")
    (tmp_path / "spec.yaml").write_text(SPEC)
    assert main(["validate", "--skip-non-specs", str(tmp_path)]) == 0
    assert "1 spec file valid" in capsys.readouterr().err
    assert main(["validate", str(tmp_path / "workflow.yml")]) == 1  # named without the flag, it is checked


def test_running_without_the_run_extra_says_what_to_install(tmp_path, monkeypatch, capsys):
    (tmp_path / "spec.yaml").write_text(SPEC)
    monkeypatch.setitem(sys.modules, "ray", None)  # as if Ray were not installed
    for command in (["run", str(tmp_path / "spec.yaml")], ["submit", str(tmp_path / "spec.yaml"), "--address", "h"]):
        assert main(command) == 2
        assert "pip install 'specc[run]'" in capsys.readouterr().err
    assert main(["run", str(tmp_path / "spec.yaml"), "--dry-run"]) == 0  # compiling needs no Ray
