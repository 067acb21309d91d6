"""Lines that reach a terminal or a CI log (issue 53, class 4): every line specc prints goes through its print gate
(specc/read/terminal.py), so what a stranger put in a spec, a file name or a run directory is shown, never acted on.

Before the gate, ESC, BEL, U+202E and a forged `::error file=...` line (a line end in a value, then a workflow
command) came through in the path `compile` prints, `compile --check`'s message, `compile -o -`, `plan`'s text,
`run --dry-run`, `submit --dry-run`'s file names and `results --format csv`; a raw U+202E in `results --format json`
and `show`. One named case per command below, then hypothesis: generated hostile strings in a spec's description,
storage path, a sampled value and its file name, and in every cell of a run directory, through each command; no
line printed holds a character a terminal acts on, none opens a workflow command, and JSON, SARIF and CSV still
parse. The CLI's main runs in this process (capsys); nothing here starts Ray.
"""

from __future__ import annotations

import ast
import contextlib
import csv
import io
import json
import os
import re
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from specc.cli import main
from specc.output import FORMATS
from tests.conftest import MINIMAL

EXAMPLES = int(os.environ.get("SPECC_FUZZ_EXAMPLES", "20"))  # a spec case runs 10 commands: about 1.5 s
EVIL = "\x1b[31m\x07\u202e\n::error file=x::y"  # colour, bell, right-to-left override, a forged annotation
BIDI = set("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")
GITHUB_LINE = re.compile(r"^::(error|warning) [^:]*::")  # specc's own annotations: properties hold no colon


def unsafe(text: str) -> list[str]:
    """What in `text` a terminal or a CI log would act on: a raw control (but tab and the line ends), a bidi control,
    a surrogate or any other unprintable character; a line that opens a workflow command; a legacy command."""
    found = []
    for number, line in enumerate(text.split("\n"), 1):
        raw = sorted({repr(char) for char in line if not char.isprintable() and char != "\t"})
        if raw:
            found.append(f"line {number}: raw {', '.join(raw)}")
        if line.lstrip(" \t").startswith("::") and not GITHUB_LINE.match(line):
            found.append(f"line {number} opens a workflow command: {line[:60]!r}")
        if "##[" in line and not GITHUB_LINE.match(line):
            found.append(f"line {number} holds a legacy workflow command: {line[:60]!r}")
    return found


def printed(capsys, *args: str) -> tuple[int, str, str]:
    """`specc ARGS` in this process: (exit code, stdout, stderr); argparse's exit is its code."""
    try:
        code = main(list(args))
    except SystemExit as stop:
        code = stop.code
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return code, captured.out, captured.err


def shown_safely(capsys, *args: str, codes=(0, 1, 2), generated=False) -> tuple[str, str]:
    """`specc ARGS`'s (stdout, stderr), once its exit code is one of `codes` and nothing printed is unsafe; a
    `generated` case counts its exit codes in hypothesis' statistics (--hypothesis-show-statistics)."""
    code, out, err = printed(capsys, *args)
    if generated:
        event(f"{' '.join(arg for arg in args if arg.startswith('-') or arg.isalpha())}: exit {int(code)}")
    assert code in codes, (code, out, err)
    assert unsafe(out) == [] and unsafe(err) == [], (args, out, err)
    return out, err


def file_name(text: str) -> str:
    """A name the file system takes: no `/`, no NUL; a surrogate only as argv can hold one (undecodable bytes)."""
    name = "".join(char for char in text if char not in "/\0" and not "\ud800" <= char < "\udc80")
    return name[:80] or "x"


# -- a spec that holds hostile strings where they reach the console ---------------------------------------------

FACTORY = "def build(act='relu', **kwargs):\n    return None\n"


def write_spec(directory: Path, value: str, name: str = "spec") -> Path:
    """A spec whose description, storage path and one sampled value hold `value`, written to `name`.yaml."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "models.py").write_text(FACTORY, encoding="utf-8")
    quoted = json.dumps(value)  # a JSON string is a YAML double-quoted scalar
    text = MINIMAL.replace(
        "{type: mlp, hidden_sizes: [16]}", '{type: custom, factory: "models:build", kwargs: {act: relu}}'
    )
    text += f"description: {quoted}\nrun: {{storage_path: {json.dumps('runs' + value)}}}\n"
    text += "tune:\n  metric: val_loss\n  mode: min\n  num_samples: 2\n  search: {type: random, seed: 1}\n"
    text += f"  space:\n    model.kwargs.act: {{choice: [{quoted}, relu]}}\n"
    path = directory / f"{file_name(name)}.yaml"
    path.write_bytes(text.encode("utf-8", "surrogateescape"))
    return path


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".git").mkdir()  # the project's root: nothing above it is read
    return tmp_path


# -- a run directory whose files hold hostile strings -----------------------------------------------------------


def write_run(directory: Path, value: str) -> Path:
    """A Tune run directory with `value` in a trial id, a status, a column name, a sampled value, best.json's
    config and checkpoint, and a trial id that opens a line with a workflow command."""
    directory.mkdir(parents=True)
    rows = [
        ["trial_id", "status", "epochs", f"model.kwargs.{value}", "best_val_loss"],
        [f"t1{value}", f"completed{value}", "1", value, "0.5"],
        ["  ::warning::z", "stopped", "1", "relu", "0.7"],
    ]
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    (directory / "results.csv").write_bytes(out.getvalue().encode("utf-8", "surrogateescape"))
    best = {"trial_id": f"t1{value}", "metric": "val_loss", "mode": "min", "config": {value: value}}
    best["checkpoint"] = f"ckpt{value}"
    (directory / "best.json").write_text(json.dumps(best), encoding="utf-8")
    return directory


# -- one named case per command ---------------------------------------------------------------------------------


def test_compile_prints_the_path_it_wrote_escaped(project, capsys):
    spec = write_spec(project, "x", name=f"ev{EVIL}")
    out, _ = shown_safely(capsys, "compile", str(spec), codes=(0,))
    # before: raw, and a second line; the runtime written beside it is named on its own line after it
    assert out == "build/ev\\x1b[31m\\x07\\u202e\\n::error file=x::y.py\nbuild/specc_runtime.py\n"


def test_compile_check_says_stale_on_one_escaped_line(project, capsys):
    spec = write_spec(project, "x")
    _, err = shown_safely(capsys, "compile", str(spec), "-o", f"out{EVIL}.py", "--check", codes=(1,))
    assert err.count("\n") == 1 and err.startswith("out\\x1b[31m\\x07\\u202e\\n::error file=x::y.py is missing")


def test_compile_to_stdout_escapes_the_source_it_prints(project, capsys):
    out, _ = shown_safely(capsys, "compile", str(write_spec(project, EVIL)), "-o", "-", codes=(0,))
    assert "\\x3a:error file=x::y" in out  # the description's own line, in the docstring: the same string to Python
    assert 'STORAGE_PATH = "runs\\x1b[31m\\x07\\u202e\\n::error file=x::y"' in out


def test_the_compiled_file_itself_opens_no_workflow_command(project, capsys):
    """`cat build/x.py` or a diff of it in a CI log: the description's forged line is an escape in the docstring,
    which Python reads back as the description was written."""
    shown_safely(capsys, "compile", str(write_spec(project, EVIL + "\n##[stop-commands]")), "-o", "x.py", codes=(0,))
    source = (project / "x.py").read_text(encoding="utf-8")
    assert unsafe(source) == []
    assert EVIL + "\n##[stop-commands]" in ast.get_docstring(ast.parse(source))


def test_plan_shows_a_sampled_string_on_its_row(project, capsys):
    out, _ = shown_safely(capsys, "plan", str(write_spec(project, EVIL)), codes=(0,))
    assert "  1  \\x1b[31m\\x07\\u202e\\n::error file=x::y\n" in out  # before: the row broke in two


def test_run_dry_run_escapes_the_run_directory(project, capsys):
    out, _ = shown_safely(capsys, "run", str(write_spec(project, EVIL)), "--dry-run", codes=(0,))
    assert "runs\\x1b[31m\\x07\\u202e" in out


def test_show_writes_no_raw_bidi_control(project, capsys):
    shown_safely(capsys, "show", str(write_spec(project, "abc\u202edef")), codes=(0,))


@pytest.mark.parametrize("fmt", ["text", "github", "json", "sarif"])
def test_validate_problems_about_a_hostile_file_name(project, capsys, fmt):
    path = write_spec(project, EVIL, name=f"ev{EVIL}")
    path.write_text(path.read_text(encoding="utf-8").replace("epochs: 2", "epochs: 0"), encoding="utf-8")
    out, _ = shown_safely(capsys, "validate", str(path), "--format", fmt, codes=(1,))
    if fmt in ("json", "sarif"):
        document = json.loads(out)
    if fmt == "json":  # a Problem's fields are printable from the start (errors.printable)
        assert document[0]["file"] == "ev\\x1b[31m\\x07\\u202e\\n::error file=x::y.yaml"
    if fmt == "github":
        assert len(out.splitlines()) == 1 and GITHUB_LINE.match(out)


def test_submit_dry_run_lists_file_names_escaped(project, capsys, monkeypatch):
    pytest.importorskip("ray")
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    spec = write_spec(project, "x")
    spec.write_text(spec.read_text(encoding="utf-8") + "cluster: {working_dir: .}\n", encoding="utf-8")
    (project / f"f{EVIL}.txt").write_text("x")
    out, _ = shown_safely(capsys, "submit", str(spec), "--dry-run", codes=(0,))
    assert "f\\x1b[31m\\x07\\u202e" in out


@pytest.mark.parametrize("fmt", ["text", "csv", "json"])
def test_results_of_a_hostile_run_directory(project, capsys, fmt):
    run = write_run(project / "run", EVIL)
    out, _ = shown_safely(capsys, "results", str(run), "--format", fmt, codes=(0,))
    if fmt == "csv":
        rows = list(csv.reader(io.StringIO(out)))
        assert [len(row) for row in rows] == [5, 5, 5]
        assert rows[2][0] == "  ::warning::z"  # quoted in the file, so that its line opens with `"`: read back as is
        assert rows[1][0] == "t1\\x1b[31m\\x07\\u202e\\n::error file=x::y"
    if fmt == "json":
        document = json.loads(out)
        assert document["rows"][0]["trial_id"] == f"t1{EVIL}"  # every character kept, as a JSON escape
        assert document["best"]["config"] == {EVIL: EVIL}


def test_check_compiled_names_a_script_whose_name_opens_a_workflow_command(project, capsys):
    spec = write_spec(project, "x")
    out, _ = shown_safely(capsys, "compile", str(spec), "-o", "::warning file=a::forged.py", codes=(0,))
    assert out == "\\x3a:warning file=a::forged.py\nspecc_runtime.py\n"
    spec.write_text(spec.read_text(encoding="utf-8").replace("epochs: 2", "epochs: 3"), encoding="utf-8")
    _, err = shown_safely(capsys, "check-compiled", "::warning file=a::forged.py", codes=(1,))
    assert err.startswith("\\x3a:warning file=a::forged.py: ")


def test_argparse_quotes_what_was_typed_escaped(capsys):
    _, err = shown_safely(capsys, "validate", "x.yaml", "--bogus\x1b[31m\u202e", codes=(2,))  # no space: an option
    assert "--bogus\\x1b[31m" in err


def test_jobs_logs_relay_the_log_escaped(capsys, monkeypatch):
    pytest.importorskip("ray")
    from specc.execute import submit

    class Jobs:  # JobSubmissionClient's answers, for a job whose log a stranger's script wrote
        def get_job_info(self, job_id):
            return object()

        def get_job_logs(self, job_id):
            return f"epoch 1\n{EVIL}\n##[error]x\n"

    monkeypatch.setattr(submit, "client", lambda address, timeout_s=None: Jobs())
    out, _ = shown_safely(capsys, "jobs", "logs", "j1", "--address", "http://head:8265", codes=(0,))
    assert out == "epoch 1\n\\x1b[31m\\x07\\u202e\n\\x3a:error file=x::y\n##\\x5berror]x\n"


# -- generated: hostile strings through every command -----------------------------------------------------------

PAYLOADS = [
    *(chr(code) for code in range(0x20)),
    "\x7f",
    "\x85",
    "\x9b",
    "\x9d",
    *sorted(BIDI),
    "\u2028",
    "\ufeff",
    "\u200b",
    "\udc80",
    "\udcff",
    "\n::error file=x::y",
    "\n  ::warning::y",
    "\r::error::y",
    "##[error]y",
    "##vso[task.setvariable variable=a]b",
    "\x1b]0;title\x07",
    "\x1b[2J",
    "é😀",
    "'",
    '"',
    "\\",
    ": ",
    "# ",
]
hostile = st.lists(st.one_of(st.sampled_from(PAYLOADS), st.text(max_size=3)), min_size=1, max_size=6).map("".join)
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@contextlib.contextmanager
def a_project():
    with tempfile.TemporaryDirectory() as directory:
        previous = os.getcwd()
        os.chdir(directory)
        try:
            (Path(directory) / ".git").mkdir()
            yield Path(directory)
        finally:
            os.chdir(previous)


def structured_output_parses(fmt: str, out: str) -> None:
    if fmt in ("json", "sarif") and out:
        json.loads(out)


@FUZZ
@given(value=hostile, name=hostile)
def test_generated_strings_in_a_spec_never_reach_the_console_raw(capsys, value, name):
    with a_project() as project:
        spec = str(write_spec(project, value, name=name))
        shown_safely(capsys, "compile", spec, generated=True)
        shown_safely(capsys, "compile", spec, "-o", "-", generated=True)
        shown_safely(capsys, "compile", spec, "-o", file_name(f"o{name}.py"), "--check", generated=True)
        shown_safely(capsys, "show", spec, generated=True)
        shown_safely(capsys, "plan", spec, generated=True)
        shown_safely(capsys, "run", spec, "--dry-run", generated=True)
        for fmt in FORMATS:
            out, _ = shown_safely(capsys, "validate", spec, "--format", fmt, generated=True)
            structured_output_parses(fmt, out)


@FUZZ
@given(value=hostile)
def test_generated_strings_in_a_run_directory_never_reach_the_console_raw(capsys, value):
    with a_project() as project:
        run = str(write_run(project / "run", value))
        shown_safely(capsys, "results", run, generated=True)
        out, _ = shown_safely(capsys, "results", run, "--format", "json", generated=True)
        assert out == "" or json.loads(out)["kind"] == "tune"
        out, _ = shown_safely(capsys, "results", run, "--format", "csv", generated=True)
        rows = list(csv.reader(io.StringIO(out)))
        assert len({len(row) for row in rows}) <= 1 and len(out.splitlines()) == len(rows)
