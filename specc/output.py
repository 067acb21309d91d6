"""Problems as text, JSON, GitHub workflow commands or SARIF 2.1.0.

What each returns is printed through the print gate (specc/read/terminal.py): text and github escape their data
line by line first and are then `Styled` (their colours, their workflow commands are specc's own); json and sarif
spell what the gate would escape as JSON escapes.
"""

from __future__ import annotations

import urllib.parse

from specc.read.terminal import Styled, json_text, one_line
from specc.spec.errors import CODES, Problem
from specc.spec.version import __version__

FORMATS = ("text", "json", "github", "sarif")
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def render(problems: list[Problem], fmt: str, color: bool = False) -> str:
    return {"text": text, "json": as_json, "github": github, "sarif": sarif}[fmt](problems, color)


def text(problems: list[Problem], color: bool = False) -> str:
    lines = []
    for problem in problems:
        line = one_line(problem)
        if color:
            tone = "\033[31m" if problem.severity == "error" else "\033[33m"
            label = f"{problem.severity}[{problem.code}]"
            line = line.replace(label, f"{tone}\033[1m{label}\033[0m", 1)
        lines.append(line)
        if problem.hint:
            lines.append(one_line(f"  hint: {problem.hint}"))
    return Styled("\n".join(lines) + ("\n" if lines else ""))


def as_json(problems: list[Problem], color: bool = False) -> str:
    keys = ("file", "line", "column", "code", "path", "message", "hint", "severity", "origin")
    rows = [{key: problem.to_dict()[key] for key in keys} for problem in problems]
    return json_text(rows, indent=2) + "\n"


def _escape_data(value: str) -> str:
    """A workflow command's data as GitHub spells it; a Problem's fields are printable already (errors.printable)."""
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(value: str) -> str:
    return _escape_data(value).replace(":", "%3A").replace(",", "%2C")


def github(problems: list[Problem], color: bool = False) -> str:
    """GitHub Actions workflow commands: `::error file=F,line=L,col=C,title=T::message` (annotations)."""
    lines = []
    for problem in problems:
        props = []
        if problem.file:
            props.append(f"file={_escape_property(problem.file)}")
        if problem.line is not None:
            props.append(f"line={problem.line}")
            if problem.column is not None:
                props.append(f"col={problem.column}")
        props.append(f"title={_escape_property(f'specc {problem.code} {problem.name}')}")
        message = f"{problem.path}: {problem.message}" if problem.path else problem.message
        if problem.origin:
            message += f" ({problem.origin})"
        if problem.hint:
            message += f"\nhint: {problem.hint}"
        lines.append(f"::{problem.severity} {','.join(props)}::{_escape_data(message)}")
    return Styled("\n".join(lines) + ("\n" if lines else ""))


def sarif(problems: list[Problem], color: bool = False) -> str:
    codes = sorted({problem.code for problem in problems})
    index = {code: i for i, code in enumerate(codes)}
    rules = [
        {
            "id": code,
            "name": CODES[code][0],
            "shortDescription": {"text": CODES[code][1]},
            "defaultConfiguration": {"level": "warning" if code.startswith("W") else "error"},
        }
        for code in codes
    ]
    results = [_sarif_result(problem, index[problem.code]) for problem in problems]
    log = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{"tool": {"driver": {"name": "specc", "version": __version__, "rules": rules}}, "results": results}],
    }
    return json_text(log, indent=2) + "\n"


def _sarif_result(problem: Problem, rule_index: int) -> dict:
    message = f"{problem.path}: {problem.message}" if problem.path else problem.message
    if problem.origin:
        message += f" ({problem.origin})"
    if problem.hint:
        message += f" Hint: {problem.hint}"
    result = {"ruleId": problem.code, "ruleIndex": rule_index, "level": problem.severity, "message": {"text": message}}
    if problem.file:
        uri = urllib.parse.quote(problem.file.replace("\\", "/"), safe="/")  # a URI reference: spaces, %, : encoded
        location: dict = {"artifactLocation": {"uri": uri}}
        if problem.line is not None:
            location["region"] = {"startLine": problem.line}
            if problem.column is not None:
                location["region"]["startColumn"] = problem.column
        result["locations"] = [{"physicalLocation": location}]
    return result
