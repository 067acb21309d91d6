"""`specc check-compiled` and `specc validate --skip-non-specs` (what the pre-commit hooks run), and the light
core install: running without Ray's extra is a clear message."""

from __future__ import annotations

import subprocess
import sys

import pytest

from specc import runtime
from specc.cli import main
from specc.compiler.stale import compiled_from
from specc.spec.version import __version__

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


def test_the_runtime_beside_a_script_is_checked_too(repo, capsys):
    runtime_file = repo / "build" / "specc_runtime.py"
    remedy = "run `specc compile specs/small.yaml -o build/small.py`"
    runtime_file.unlink()
    assert main(["check-compiled"]) == 1
    err = capsys.readouterr().err
    assert f"build/specc_runtime.py: missing: the runtime build/small.py imports; {remedy}" in err
    assert "build/small.py:" not in err  # the experiment file itself is current

    runtime_file.write_text(runtime.source() + "# edited\n", encoding="utf-8")
    assert main(["check-compiled"]) == 1
    err = capsys.readouterr().err
    stale = f"build/specc_runtime.py: stale: differs from the runtime specc {__version__} writes beside build/small.py"
    assert f"{stale}; {remedy}" in err and "written by" not in err

    runtime_file.write_text(runtime.source().replace(f'VERSION = "{__version__}"', 'VERSION = "0.0.1"'))
    assert main(["check-compiled"]) == 1
    assert "(it was written by specc 0.0.1)" in capsys.readouterr().err

    assert main(["compile", "specs/small.yaml", "-o", "build/small.py"]) == 0
    assert main(["check-compiled"]) == 0
    assert "1 compiled script, 0 out of date" in capsys.readouterr().err  # the runtime is no compiled script


def test_scripts_sharing_a_directory_share_one_runtime_finding(repo, capsys):
    (repo / "specs" / "other.yaml").write_text(SPEC.replace("name: small", "name: other"), encoding="utf-8")
    assert main(["compile", "specs/other.yaml", "-o", "build/other.py"]) == 0
    assert compiled_from("build/specc_runtime.py") is None
    subprocess.run(["git", "add", "-A"], check=True)
    (repo / "build" / "specc_runtime.py").unlink()
    capsys.readouterr()
    assert main(["check-compiled"]) == 1
    err = capsys.readouterr().err
    assert err.count("build/specc_runtime.py: missing") == 1 and "2 compiled scripts, 1 out of date" in err


def test_a_runtime_file_is_not_taken_for_a_compiled_script(repo, capsys):
    """Even one whose docstring reads like a compiled script's: it is checked beside the scripts, never as one."""
    fake = '"""Compiled by specc 0.1.0 for Ray 2.60.0 from specs/small.yaml"""\n'
    (repo / "elsewhere").mkdir()
    (repo / "elsewhere" / "specc_runtime.py").write_text(fake, encoding="utf-8")
    assert compiled_from(str(repo / "build" / "specc_runtime.py")) is None
    assert compiled_from(str(repo / "elsewhere" / "specc_runtime.py")) is None
    assert main(["check-compiled", "build/specc_runtime.py", "elsewhere/specc_runtime.py"]) == 0
    assert "0 compiled scripts, 0 out of date" in capsys.readouterr().err


def test_a_script_that_imports_no_runtime_needs_none_beside_it(repo, capsys):
    """An earlier specc's script (the plumbing inside it) is stale, and compiling it again writes both files; nothing
    asks for a runtime it never imports (nor beside a run's predict.py, which is a compiled script too)."""
    (repo / "old").mkdir()
    text = (repo / "build" / "small.py").read_text(encoding="utf-8").replace("\nimport specc_runtime\n", "\n")
    (repo / "old" / "small.py").write_text(text, encoding="utf-8")
    assert main(["check-compiled", "old/small.py"]) == 1
    err = capsys.readouterr().err
    assert "old/small.py: stale" in err and "specc_runtime.py" not in err and "1 out of date" in err


def test_a_single_file_script_is_checked_as_one_file(repo, capsys):
    assert main(["compile", "specs/small.yaml", "-o", "one/small.py", "--single-file"]) == 0
    assert main(["check-compiled", "one/small.py"]) == 0  # no runtime beside it, none wanted
    assert "1 compiled script, 0 out of date" in capsys.readouterr().err
    (repo / "specs" / "small.yaml").write_text(SPEC.replace("epochs: 2", "epochs: 3"), encoding="utf-8")
    assert main(["check-compiled", "one/small.py"]) == 1
    err = capsys.readouterr().err
    assert "one/small.py: stale" in err and "run `specc compile specs/small.yaml -o one/small.py --single-file`" in err
    assert "specc_runtime.py" not in err


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


def test_a_script_written_into_a_run_directory_is_no_compiled_script_to_check():
    """predict.py names the spec.resolved.yaml beside it in its run directory: nothing to compile it from again."""
    from specc.compiler.stale import compiled_from
    from tests.conftest import ROOT

    assert compiled_from(str(ROOT / "tests" / "golden" / "predict" / "csv_regression.py"), ROOT) is None
    assert compiled_from(str(ROOT / "tests" / "golden" / "csv_regression.py"), ROOT) == "specs/csv_regression.yaml"
