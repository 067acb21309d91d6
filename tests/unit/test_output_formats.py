"""`specc validate --format sarif` against the SARIF 2.1.0 JSON Schema (tests/formats/), and `--format github`
against GitHub's workflow-command grammar, for problems of every shape: located or not, errors and warnings,
hints, origins, and text that needs escaping."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest

from specc.cli import main
from specc.output import github, sarif
from specc.spec.errors import Problem

SCHEMA = json.loads((Path(__file__).parents[1] / "formats" / "sarif-2.1.0-rtm.5.json").read_text(encoding="utf-8"))
INVALID = Path(__file__).parents[1] / "invalid"

PROBLEMS = [
    Problem("E106", "must be > 0, got 0", "specs/a.yaml", 6, 20, "training.epochs", "use 1 or more"),
    Problem("W301", "optimising a loss upwards", "specs/a.yaml", 9, 3, "tune.mode", None, "extended by specs/b.yaml"),
    Problem("E001", "cannot read the file: No such file", "specs/missing, 100%: odd.yaml"),
    Problem("E022", "bad override: a=b\nsecond line", None, path=""),
]


def test_sarif_of_every_shape_is_valid_sarif_2_1_0():
    log = json.loads(sarif(PROBLEMS))
    jsonschema.Draft4Validator(SCHEMA).validate(log)
    results = log["runs"][0]["results"]
    assert [result["level"] for result in results] == ["error", "warning", "error", "error"]
    region = results[0]["locations"][0]["physicalLocation"]["region"]
    assert (region["startLine"], region["startColumn"]) == (6, 20)
    # artifactLocation.uri is a URI reference (the schema's "format", which its validator does not check itself)
    uri = results[2]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == "specs/missing%2C%20100%25%3A%20odd.yaml"


def test_sarif_of_the_whole_invalid_corpus_is_valid(capsys):
    main(["validate", "--format", "sarif", str(INVALID)])
    log = json.loads(capsys.readouterr().out)
    jsonschema.Draft4Validator(SCHEMA).validate(log)
    assert len(log["runs"][0]["results"]) >= len(list(INVALID.glob("*.yaml")))
    assert len(log["runs"][0]["tool"]["driver"]["rules"]) >= 30


# ::error file=F,line=L,col=C,title=T::message -- property values escape % \r \n : , and data escapes % \r \n
PROPERTY = r"(?:file|line|col|endLine|endColumn|title)=(?:[^%\r\n:,]|%25|%0D|%0A|%3A|%2C)*"
COMMAND = re.compile(rf"^::(error|warning|notice)(?: {PROPERTY}(?:,{PROPERTY})*)?::(?:[^%\r\n]|%25|%0D|%0A)*$")


@pytest.mark.parametrize("problem", PROBLEMS, ids=lambda problem: problem.code)
def test_github_lines_follow_the_workflow_command_grammar(problem):
    (line,) = github([problem]).splitlines()
    assert COMMAND.match(line), line


def test_github_escapes_the_file_property():
    (line,) = github([PROBLEMS[2]]).splitlines()
    title = "title=specc E001 file-unreadable"
    assert line == f"::error file=specs/missing%2C 100%25%3A odd.yaml,{title}::cannot read the file: No such file"


def test_github_for_the_whole_invalid_corpus(capsys):
    main(["validate", "--format", "github", str(INVALID)])
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) >= len(list(INVALID.glob("*.yaml")))
    assert all(COMMAND.match(line) for line in lines), [line for line in lines if not COMMAND.match(line)][:3]
