"""The command line as users and CI call it: exit codes, output formats, no tracebacks."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from specc.cli import Exit, main
from tests.conftest import MINIMAL

BAD = MINIMAL.replace("{type: mlp, hidden_sizes: [16]}", "{type: mlp, hiden_sizes: [16]}")


def run_cli(*args, cwd=None):
    env = {**os.environ, "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "specc", *args], capture_output=True, text=True, cwd=cwd, env=env)


def test_valid_spec_exits_0(write_spec, capsys):
    assert main(["validate", str(write_spec(MINIMAL))]) == Exit.OK
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "1 spec file valid" in captured.err


def test_invalid_spec_exits_1_with_located_text(write_spec, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_spec(BAD)
    assert main(["validate", "spec.yaml"]) == Exit.PROBLEMS
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "spec.yaml:4:20: error[E101]: model.hiden_sizes: unknown key 'hiden_sizes' in model"
    assert out[1] == "  hint: did you mean 'hidden_sizes'?"


def test_directories_are_searched_recursively_and_all_files_reported(write_spec, tmp_path, capsys):
    write_spec(MINIMAL, "a/good.yaml")
    write_spec(BAD, "a/b/bad.yml")
    write_spec("not a spec", "a/notes.txt")
    assert main(["validate", str(tmp_path / "a"), "--format", "json"]) == Exit.PROBLEMS
    rows = json.loads(capsys.readouterr().out)
    assert [row["file"].endswith("bad.yml") for row in rows] == [True]


def test_json_rows_have_the_documented_keys(write_spec, capsys):
    main(["validate", "--format", "json", str(write_spec(BAD))])
    (row,) = json.loads(capsys.readouterr().out)
    assert {"file", "line", "column", "code", "path", "message", "hint"} <= set(row)
    assert (row["line"], row["column"], row["code"], row["path"]) == (4, 20, "E101", "model.hiden_sizes")


def test_github_format_is_a_workflow_command(write_spec, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_spec(BAD)
    main(["validate", "--format", "github", "spec.yaml"])
    line = capsys.readouterr().out.splitlines()[0]
    assert line.startswith("::error file=spec.yaml,line=4,col=20,title=specc E101 unknown-key::model.hiden_sizes: ")
    assert "%0Ahint: did you mean 'hidden_sizes'?" in line  # newlines escaped: one command per line


def test_github_escapes_properties_and_data():
    from specc.output import github
    from specc.spec.errors import Problem

    problem = Problem("E101", "bad: 100%\nnext", "dir,x/a:b.yaml", 1, 2, "p")
    assert github([problem]).startswith("::error file=dir%2Cx/a%3Ab.yaml,line=1,col=2,")
    # A newline in a problem is shown as \n before any format sees it, so it can never start a forged `::` line.
    assert github([problem]).rstrip("\n").endswith("::p: bad: 100%25\\nnext")


def test_sarif_is_2_1_0_with_rules_and_regions(write_spec, capsys):
    main(["validate", "--format", "sarif", str(write_spec(BAD))])
    log = json.loads(capsys.readouterr().out)
    assert log["version"] == "2.1.0"
    run = log["runs"][0]
    assert run["tool"]["driver"]["name"] == "specc"
    assert [rule["id"] for rule in run["tool"]["driver"]["rules"]] == ["E101"]
    (result,) = run["results"]
    assert result["ruleId"] == "E101" and result["ruleIndex"] == 0 and result["level"] == "error"
    region = result["locations"][0]["physicalLocation"]["region"]
    assert (region["startLine"], region["startColumn"]) == (4, 20)


def test_missing_path_is_a_usage_error(capsys):
    assert main(["validate", "/no/such/spec.yaml"]) == Exit.USAGE
    assert "no such file or directory" in capsys.readouterr().err


def test_glob_matching_nothing_is_a_usage_error(tmp_path, capsys):
    assert main(["validate", str(tmp_path / "*.yaml")]) == Exit.USAGE


def test_bad_flag_is_exit_2():
    result = run_cli("validate", "--format", "xml", "x.yaml")
    assert result.returncode == 2
    assert "invalid choice" in result.stderr


def test_no_traceback_for_user_errors(write_spec, tmp_path):
    (tmp_path / "binary.yaml").write_bytes(b"\x00\xff\xfe garbage")
    for args in (
        ["validate", str(tmp_path / "binary.yaml")],
        ["show", str(write_spec(BAD))],
        ["show", str(tmp_path / "missing.yaml")],
        ["validate", str(write_spec("- a\n- b\n", "list.yaml"))],
    ):
        result = run_cli(*args)
        assert result.returncode in (1, 2), args
        assert "Traceback" not in result.stderr + result.stdout, args


def test_show_prints_resolved_spec_that_round_trips(write_spec, tmp_path):
    result = run_cli("show", str(write_spec(MINIMAL)), "--set", "training.epochs=4")
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert text.startswith("specc: 1\nname: tiny\n")
    assert "  epochs: 4\n" in text
    assert "  optimizer:\n    type: adam\n    lr: 0.001\n" in text  # defaults filled in, type first
    assert "  metrics: [accuracy]\n" in text  # task-derived default
    shown = tmp_path / "shown.yaml"
    shown.write_text(text)
    again = run_cli("show", str(shown))
    assert again.stdout == text


def test_warnings_do_not_fail(write_spec, capsys):
    spec = MINIMAL + "tune: {metric: val_loss, mode: max}\n"
    assert main(["validate", str(write_spec(spec))]) == Exit.OK
    out = capsys.readouterr().out
    assert "warning[W301]" in out


@pytest.mark.parametrize("fmt", ["text", "json", "github", "sarif"])
def test_every_format_prints_nothing_alarming_for_valid_specs(write_spec, capsys, fmt):
    assert main(["validate", "--format", fmt, str(write_spec(MINIMAL))]) == Exit.OK
    out = capsys.readouterr().out
    if fmt == "json":
        assert json.loads(out) == []
    elif fmt == "sarif":
        assert json.loads(out)["runs"][0]["results"] == []
    else:
        assert out == ""


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o077, 0o600)])
def test_written_files_get_the_permissions_of_any_new_file(write_spec, tmp_path, umask, mode):
    """Compiled scripts (and reports) are written atomically through a temporary file, which mkstemp makes 0600;
    the result must be what the user's umask gives any file, so a reviewed script can be read by the team."""
    spec = write_spec(MINIMAL)
    previous = os.umask(umask)
    try:
        assert main(["compile", str(spec), "-o", str(tmp_path / "script.py")]) == Exit.OK
    finally:
        os.umask(previous)
    assert (tmp_path / "script.py").stat().st_mode & 0o777 == mode
