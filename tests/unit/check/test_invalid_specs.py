"""The corpus of invalid specs in tests/invalid/: every case reports exactly the problems it declares.

Each case file states what specc must report in leading comment lines, one per problem, in file order:

    # expect: CODE LINE:COL PATH [file=REL] [origin~TEXT] [message~TEXT] [| HINT TEXT]

- PATH is the dotted path as specc prints it; `-` for none. LINE:COL is 1-based; `-:-` for none.
- `file=` (relative to the case file) when the problem lies in another file (reached through `extends`);
  otherwise the problem must be in the case file itself.
- `origin~`, `message~` and `| hint` are substrings the problem's origin, message and hint must contain.

`# expect: none` marks a positive control: a file that must load without any problem. Files without an
`# expect:` line (the helpers under tests/invalid/extends/) are not cases. Inputs that cannot carry a
comment (empty, non-UTF-8, too large, missing) and `--set` overrides are built here, in the test code.
The positions were written by hand from the files; a case marked xfail is one where specc disagrees and
SPEC.md ("point at the offending key or value") says specc is wrong.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from specc import cli
from specc.api import check_file

ROOT = Path(__file__).resolve().parents[3]
CORPUS = ROOT / "tests" / "invalid"
EXPECT = re.compile(r"^#\s*expect:\s*(?P<body>.*?)\s*$")

# Cases where specc disagrees with the hand-written expectation and specc is the one that is wrong.
# file name -> why (what specc prints vs what it should print).
SPECC_BUGS: dict[str, str] = {}


@dataclass(frozen=True)
class Expected:
    code: str
    line: int | None
    column: int | None
    path: str
    file: str  # absolute
    origin: str | None = None
    message: str | None = None
    hint: str | None = None

    def key(self) -> tuple:
        return (self.code, self.line, self.column, self.path, self.file)


def _position(text: str) -> tuple[int | None, int | None]:
    line, _, column = text.partition(":")
    return (None if line == "-" else int(line)), (None if column == "-" else int(column))


def parse_expectations(path: Path) -> list[Expected] | None:
    """The `# expect:` lines of a case; [] for a positive control; None when the file is not a case."""
    found: list[Expected] = []
    control = False
    for line in path.read_text(encoding="utf-8-sig").splitlines():
        if not line.startswith("#"):
            if line.strip():
                break  # only leading comment lines carry expectations
            continue
        match = EXPECT.match(line)
        if not match:
            continue
        body, _, hint = match["body"].partition(" | ")
        if body.strip() == "none":
            control = True
            continue
        code, position, dotted, *extras = body.split()
        line_no, column = _position(position)
        fields = {"file": str(path.resolve()), "origin": None, "message": None}
        for extra in extras:
            if extra.startswith("file="):
                fields["file"] = str((path.parent / extra[5:]).resolve())
            elif extra.startswith("origin~"):
                fields["origin"] = extra[7:]
            elif extra.startswith("message~"):
                fields["message"] = extra[8:]
            else:
                raise ValueError(f"{path.name}: cannot read {extra!r} in {line!r}")
        found.append(
            Expected(code, line_no, column, "" if dotted == "-" else dotted, hint=hint.strip() or None, **fields)
        )
    if found and control:
        raise ValueError(f"{path.name}: `# expect: none` with other expectations")
    return found if found or control else None


def _corpus() -> tuple[list[Path], list[Path]]:
    cases, controls = [], []
    for path in sorted(CORPUS.rglob("*.yaml")):
        expected = parse_expectations(path)
        if expected is None:
            continue
        (cases if expected else controls).append(path)
    return cases, controls


CASES, CONTROLS = _corpus()


def _param(path: Path):
    name = str(path.relative_to(CORPUS))
    marks = [pytest.mark.xfail(strict=True, reason=SPECC_BUGS[name])] if name in SPECC_BUGS else []
    return pytest.param(path, id=name, marks=marks)


def _actual(problem) -> tuple:
    file = str(Path(problem.file).resolve()) if problem.file else None
    return (problem.code, problem.line, problem.column, problem.path, file)


def assert_problems(problems, expected: list[Expected]) -> None:
    """The exact list (code, line, column, path, file) in order, then the substrings each one declares."""
    assert [_actual(p) for p in problems] == [e.key() for e in expected], "\n".join(map(str, problems))
    for problem, want in zip(problems, expected, strict=True):
        if want.origin is not None:
            assert want.origin in (problem.origin or ""), problem
        if want.message is not None:
            assert want.message in problem.message, problem
        if want.hint is not None:
            assert want.hint in (problem.hint or ""), (problem, problem.hint)
        if want.file == _actual(problem)[4] and want.origin is None:
            assert problem.origin is None, problem  # a problem in the case file itself names no other origin


def test_corpus_is_large_enough():
    assert len(CASES) >= 45
    assert len(CONTROLS) >= 2
    codes = {e.code for path in CASES for e in parse_expectations(path)}
    assert codes >= {f"E{n:03d}" for n in (4, 5, 6, 7, 8, 9, 10, 11, 12, 20, 21)}


@pytest.mark.parametrize("path", [_param(p) for p in CASES])
def test_invalid_spec(path: Path):
    report = check_file(path)
    assert_problems(report.problems, parse_expectations(path))
    if any(e.code.startswith("E") for e in parse_expectations(path)):
        assert not report.ok


@pytest.mark.parametrize("path", [_param(p) for p in CONTROLS])
def test_positive_control(path: Path):
    report = check_file(path)
    assert report.problems == []
    assert report.ok and report.experiment is not None


def test_bom_control_really_has_a_bom():
    assert (CORPUS / "valid_bom.yaml").read_bytes().startswith(b"\xef\xbb\xbf")


def test_billion_laughs_is_refused_quickly():
    start = time.process_time()
    report = check_file(CORPUS / "billion_laughs.yaml")
    elapsed = time.process_time() - start
    assert [p.code for p in report.problems] == ["E009"]
    # expanded, the document holds 10**9 values: hours and gigabytes. Refused, it takes milliseconds. CPU seconds:
    # a loaded CI machine stretches wall time (1 s failed there once, at 1.08 s, beside a Ray run)
    assert elapsed < 10.0, f"took {elapsed:.2f} s"


# -- inputs that cannot carry a comment ---------------------------------------------------------
GENERATED = {
    # name: (bytes, [(code, line, column, path)])
    "empty.yaml": (b"", [("E005", 1, 1, "")]),
    "whitespace_only.yaml": (b"   \n\n    \n  \n", [("E005", 1, 1, "")]),
    "not_utf8.yaml": (b"specc: 1\nname: caf\xe9\nframework: torch\n", [("E003", 2, 10, "")]),
    "not_utf8_after_multibyte.yaml": (
        # the bad byte is the 16th character of line 2 (but its 18th byte): columns count characters
        "specc: 1\ndescription: ét\xe9 x\n".encode().replace(b"\xc3\xa9 x", b"\xff x"),
        [("E003", 2, 16, "")],
    ),
    "not_utf8_after_bom.yaml": (b"\xef\xbb\xbfname: \xff\n", [("E003", 1, 7, "")]),
    # byte 10 is a newline: 0x80 (offset 128) is on line 2, which starts at offset 11
    "binary.yaml": (bytes(range(256)), [("E003", 2, 118, "")]),
    "too_large.yaml": (b"specc: 1\n" + b"# padding\n" * 110_000, [("E002", 1, 1, "")]),
}


BAD_BYTES = {
    "not_utf8.yaml": 0xE9,
    "not_utf8_after_multibyte.yaml": 0xFF,
    "not_utf8_after_bom.yaml": 0xFF,
    "binary.yaml": 0x80,
}
GENERATED_BUGS: dict[str, str] = {}  # name -> why specc is wrong (xfail, strict)


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(name, marks=[pytest.mark.xfail(strict=True, reason=GENERATED_BUGS[name])])
        if name in GENERATED_BUGS
        else name
        for name in sorted(GENERATED)
    ],
)
def test_generated_input(tmp_path: Path, name: str):
    content, expected = GENERATED[name]
    path = tmp_path / name
    path.write_bytes(content)
    problems = check_file(path).problems
    assert [(p.code, p.line, p.column, p.path) for p in problems] == expected, problems
    assert all(Path(p.file).resolve() == path.resolve() for p in problems)
    if expected[0][0] == "E003":  # the message names the byte that is not UTF-8
        assert f"0x{BAD_BYTES[name]:02x}" in problems[0].message


def test_missing_file(tmp_path: Path):
    problems = check_file(tmp_path / "nope.yaml").problems
    assert [(p.code, p.line, p.column) for p in problems] == [("E001", None, None)]
    assert Path(problems[0].file).resolve() == (tmp_path / "nope.yaml").resolve()


def test_directory_named_like_a_spec(tmp_path: Path):
    (tmp_path / "dir.yaml").mkdir()
    assert [p.code for p in check_file(tmp_path / "dir.yaml").problems] == ["E001"]


# -- --set overrides ----------------------------------------------------------------------------
BASE = CORPUS / "valid_minimal.yaml"
OVERRIDES = {
    # override: [(code, line, column, path)] -- an override has no position in the file
    "training.epochs": [("E022", None, None, "")],
    "=5": [("E022", None, None, "")],
    "model..dropout=0.1": [("E022", None, None, "")],
    "model.dropout=2": [("E106", None, None, "model.dropout")],
    "training.epochs=five": [("E103", None, None, "training.epochs")],
    "model.activaton=relu": [("E101", None, None, "model.activaton")],
    "name.first=x": [("E022", None, None, "name")],
}


@pytest.mark.parametrize("override", sorted(OVERRIDES))
def test_bad_override(override: str):
    problems = check_file(BASE, overrides=[override]).problems
    assert [(p.code, p.line, p.column, p.path) for p in problems] == OVERRIDES[override], problems
    for problem in problems:
        assert "--set" in (problem.origin or ""), problem
        assert Path(problem.file).resolve() == BASE.resolve()


@pytest.mark.parametrize(
    ("override", "expected"),
    [
        ("model.hidden_sizes.5=3", [("E022", None, None, "model.hidden_sizes")]),
        ("model.hidden_sizes.x=3", [("E022", None, None, "model.hidden_sizes")]),
        ("model.hidden_sizes.1=0", [("E106", None, None, "model.hidden_sizes.1")]),
        ("training.epochs.x=1", [("E022", None, None, "training.epochs")]),
        ("tune.num_samples=0", [("E106", None, None, "tune.num_samples")]),
    ],
)
def test_bad_override_into_a_list(override: str, expected: list):
    """valid_full.yaml writes model.hidden_sizes: [128, 64]: only indices 0 and 1 can be set."""
    problems = check_file(CORPUS / "valid_full.yaml", overrides=[override]).problems
    assert [(p.code, p.line, p.column, p.path) for p in problems] == expected, problems
    assert all("--set" in (p.origin or "") for p in problems), problems


def test_bad_override_into_a_default_list():
    """model.hidden_sizes is not written in valid_minimal.yaml: its default list has 2 items."""
    problems = check_file(BASE, overrides=["model.hidden_sizes.5=3"]).problems
    assert [(p.code, p.line, p.column, p.path) for p in problems] == [("E022", None, None, "model.hidden_sizes")]
    assert all("--set" in (p.origin or "") for p in problems), problems


def test_override_hint_for_missing_equals():
    (problem,) = check_file(BASE, overrides=["training.epochs"]).problems
    assert problem.hint and "=" in problem.hint


def test_override_problems_with_file_problems():
    """A problem in the file keeps its position; the one from --set names the override."""
    problems = check_file(CORPUS / "unknown_key_in_model.yaml", overrides=["model.dropout=1.5"]).problems
    by_code = {p.code: p for p in problems}
    assert sorted((p.code, p.line, p.column, p.path) for p in problems) == [
        ("E101", 7, 3, "model.activaton"),
        ("E106", None, None, "model.dropout"),
    ]
    assert by_code["E101"].origin is None
    assert by_code["E106"].origin == "--set model.dropout=1.5"


# -- hints and messages, spelled out ------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "hint"),
    [
        ("unknown_key_in_model.yaml", "did you mean 'activation'?"),
        ("unknown_key_top.yaml", "did you mean 'description'?"),
        ("unknown_type.yaml", "did you mean 'mlp'?"),
        ("invalid_choice.yaml", "did you mean 'torch'?"),
    ],
)
def test_did_you_mean(name: str, hint: str):
    assert check_file(CORPUS / name).problems[0].hint == hint


def test_unsupported_version_names_the_supported_ones():
    (problem,) = check_file(CORPUS / "unsupported_version.yaml").problems
    assert "2" in problem.message and "1" in problem.message


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("bad_address.yaml", "'localhost'"),
        ("stop_when_grammar.yaml", "'val_loss ~ 3'"),
        ("unknown_type.yaml", "'mlpp'"),
        ("invalid_choice.yaml", "'pytorch'"),
        ("unknown_metric.yaml", "'val_acc'"),
    ],
)
def test_message_quotes_the_offending_value(name: str, text: str):
    assert text in check_file(CORPUS / name).problems[0].message


def test_no_integer_hint_for_a_float_field():
    (problem,) = check_file(CORPUS / "space_randn_on_bounded.yaml").problems
    assert "integer" not in (problem.hint or "")


def test_integer_hint_for_an_integer_field():
    (problem,) = check_file(CORPUS / "space_uniform_on_int.yaml").problems
    assert "randint" in (problem.hint or "")


def test_messages_are_filled_in():
    """No message shows a template placeholder instead of a value."""
    unfilled = [
        str(problem)
        for path in CASES
        if path.name not in ("bad_address.yaml", "stop_when_grammar.yaml")  # known: see the test above
        for problem in check_file(path).problems
        if re.search(r"\{[a-z_]+(![rs])?\}", problem.message)
    ]
    assert unfilled == []


def test_extends_cycle_names_the_chain():
    (problem,) = check_file(CORPUS / "extends_cycle.yaml").problems
    assert "extends_cycle.yaml" in problem.message and "cycle_b.yaml" in problem.message


# -- the command line ---------------------------------------------------------------------------
JSON_KEYS = {"file", "line", "column", "code", "path", "message", "hint"}
CLI_SAMPLE = ["out_of_range.yaml", "duplicate_key_nested.yaml", "extends_parent_problem.yaml", "tab_indentation.yaml"]


def _run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "specc", "validate", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "NO_COLOR": "1"},
    )


def test_cli_json():
    files = [CORPUS / name for name in CLI_SAMPLE]
    done = _run_cli("--format", "json", *map(str, files))
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    rows = json.loads(done.stdout)
    assert all(set(row) >= JSON_KEYS for row in rows), rows
    want = [e for path in files for e in parse_expectations(path)]
    got = [(row["code"], row["line"], row["column"], row["path"], str((ROOT / row["file"]).resolve())) for row in rows]
    assert sorted(got) == sorted(e.key() for e in want)
    assert all(isinstance(row["message"], str) and row["message"] for row in rows)


def test_cli_text_has_no_traceback_for_any_case(tmp_path: Path):
    generated = []
    for name, (content, _) in GENERATED.items():
        (tmp_path / name).write_bytes(content)
        generated.append(str(tmp_path / name))
    done = _run_cli("--format", "text", *map(str, CASES), *generated)
    assert done.returncode == 1
    output = done.stdout + done.stderr
    assert "Traceback" not in output
    for path in CASES:  # every case shows up with a located problem
        name = Path(parse_expectations(path)[0].file).name
        assert re.search(rf"{re.escape(name)}:[\d:]*:? (error|warning)\[[EW]\d{{3}}\]", output), path.name


@pytest.mark.parametrize("path", [pytest.param(p, id=str(p.relative_to(CORPUS))) for p in CASES])
def test_cli_in_process(path: Path, capsys):
    errors = any(e.code.startswith("E") for e in parse_expectations(path))
    assert cli.main(["validate", "--format", "text", str(path)]) == (1 if errors else 0)
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err
