"""`specc results` and `specc report` on a run directory that someone else made (issue 15, class 8).

A run directory comes from a shared cluster or a colleague: any file in it can hold anything. Each named test
below is one shape of hostile file, put into an otherwise good run directory (written here directly, as the
compiled scripts and Ray leave one; no Ray is needed): the readers never raise, never hang, never read past a
bound or out of the run directory, and say in one line per file what they left out (W307, W308) or found
contradicting (W309), still showing the rest of the run. A run they cannot read at all is one line and exit 2.
Then hypothesis writes arbitrary bytes, JSON and CSV into each file the readers read, and `specc results` and
`specc report` (the library functions, and the CLI's main in this process) exit 0 or 2, with no exception.
"""

from __future__ import annotations

import collections
import contextlib
import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from specc.cli import Exit, main
from specc.results.history import curves, parallel
from specc.results.run_dir import FORMATS, format_text, read_run, render
from specc.spec.errors import UsageError
from tests.hostile.cli_worker import Worker, failures
from tests.hostile.spec_strategies import EXTREME_FLOATS, EXTREME_INTS, odd_strings, yaml_text

EXAMPLES = int(os.environ.get("SPECC_FUZZ_EXAMPLES", "30"))  # an example that writes a report takes about 0.4 s
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
FUZZ_RUNS = settings(  # four commands a case in a process of their own: about 1.2 s
    max_examples=max(EXAMPLES * 2 // 3, 1),
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

SPACE = {"training.optimizer.lr": {"loguniform": [1.0e-4, 0.1]}, "model.activation": {"choice": ["relu", "gelu"]}}
HEADER = ["trial_id", "status", "epochs", *SPACE, "best_val_accuracy", "last_val_loss", "last_val_accuracy"]
TRIALS = [  # trial_id, status, lr, activation, val_accuracy per epoch
    ("a_00000", "completed", 0.012, "relu", [0.5, 0.8, 0.9]),
    ("a_00001", "stopped", 0.0002, "gelu", [0.2]),
    ("a_00002", "completed", 0.003, "gelu", [0.6, 0.85, 0.97]),
]
BEST_ID = "a_00002"


def csv_text(header, rows) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue()


def epoch(trial_id: str, number: int, accuracy: float) -> dict:
    """A trial's report of epoch `number` (from 1, as its training_iteration)."""
    return {"epoch": number, "val_loss": round(2 * (1 - accuracy), 6), "val_accuracy": accuracy,
            "training_iteration": number, "trial_id": trial_id, "done": False}  # fmt: skip


def good_files() -> dict[str, str]:
    """A finished ASHA search's run directory, file name -> text: trial a_00000 keeps result.json, a_00001
    progress.csv only, a_00002 (the best) result.json."""
    rows, files = [], {}
    for trial_id, status, lr, activation, history in TRIALS:
        last = epoch(trial_id, len(history), history[-1])
        rows.append([trial_id, status, len(history), lr, activation, max(history), last["val_loss"], history[-1]])
        epochs = [epoch(trial_id, number, accuracy) for number, accuracy in enumerate(history, 1)]
        if trial_id == "a_00001":
            files[f"trial_{trial_id}/progress.csv"] = csv_text(list(epochs[0]), [list(e.values()) for e in epochs])
        else:
            files[f"trial_{trial_id}/result.json"] = "".join(json.dumps(e) + "\n" for e in epochs)
    best = {
        "trial_id": BEST_ID,
        "metric": "val_accuracy",
        "mode": "max",
        "config": {"training.optimizer.lr": 0.003, "model.activation": "gelu"},
        "metrics": {"epoch": 3, "val_loss": 0.06, "val_accuracy": 0.97},
        "checkpoint": "trial_a_00002/checkpoint_000002",
        "epochs_counted_from": 1,
    }
    spec = {"specc": 1, "name": "asha", "tune": {"metric": "val_accuracy", "mode": "max", "space": SPACE}}
    files["results.csv"] = csv_text(HEADER, rows)
    files["best.json"] = json.dumps(best, indent=2) + "\n"
    files["best.yaml"] = "specc: 1\nname: best\n"
    files["spec.resolved.yaml"] = json.dumps(spec, indent=2) + "\n"  # JSON is YAML
    return files


def write_run(run_dir: Path, files: dict | None = None) -> Path:
    """The good run directory with `files` (name -> text) in place of its own: None leaves a file out, bytes are
    written as they are."""
    files = {**good_files(), **(files or {})}
    for name, content in files.items():
        if content is None:
            continue
        path = run_dir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return run_dir


def cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """specc in a process of its own: a crash of the interpreter (a segfault) or a hang fails the test, not the
    suite."""
    env = {**os.environ, "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "specc", *args], capture_output=True, text=True, env=env, timeout=timeout
    )


def warnings_of(results) -> list[str]:
    return [str(problem) for problem in results.warnings]


def one_warning(stderr: str, code: str, file: Path) -> str:
    """The one line of `stderr`, which must be a warning `code` about `file`."""
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith(f"{file}") and f": warning[{code}]: " in lines[0], lines[0]
    assert "Traceback" not in stderr
    return lines[0]


def report_in(run_dir: Path, tmp_path: Path) -> tuple[int, str]:
    pytest.importorskip("plotly")
    out = tmp_path / "report.html"
    return main(["report", str(run_dir), "-o", str(out)]), out.read_text(encoding="utf-8") if out.exists() else ""


# One test per hostile shape


def test_a_deeply_nested_spec_resolved_yaml_is_left_out_with_a_warning(tmp_path):
    """specc's own YAML reader, with its 64-level bound, reads it: yaml.load's composer recursed in C and a
    libyaml without a depth limit crashed the interpreter; the one in use now stopped silently."""
    run_dir = write_run(tmp_path / "run", {"best.json": None, "spec.resolved.yaml": "a: " + "[" * 100_000})
    result = cli("results", str(run_dir))
    assert result.returncode == Exit.OK, result.stderr
    line = one_warning(result.stderr, "W308", run_dir / "spec.resolved.yaml")
    assert "nests more than 64 levels deep" in line
    assert result.stdout.startswith(f"{run_dir}: 3 trials")


def test_a_malformed_best_json_is_a_warning_and_the_table_is_still_shown(tmp_path, capsys):
    run_dir = write_run(tmp_path / "run", {"best.json": '{\n  "trial_id": "a_00002",\n  "metrics": {,\n}'})
    assert main(["results", str(run_dir)]) == Exit.OK
    out, err = capsys.readouterr()
    line = one_warning(err, "W308", run_dir / "best.json")
    assert line.startswith(f"{run_dir / 'best.json'}:3: warning[W308]: not valid JSON: ")
    assert "* a_00002" in out  # the best trial, from results.csv and the spec's metric


def test_nan_in_best_json_is_shown_as_nan_with_a_warning(tmp_path, capsys):
    best = json.loads(good_files()["best.json"])
    best["metrics"]["val_loss"] = float("nan")
    run_dir = write_run(tmp_path / "run", {"best.json": json.dumps(best)})  # Python's json writes NaN
    assert main(["results", str(run_dir)]) == Exit.OK
    out, err = capsys.readouterr()
    line = one_warning(err, "W308", run_dir / "best.json")
    assert "holds nan at metrics.val_loss" in line and "shown as nan" in line
    assert "  metrics: val_loss nan, val_accuracy 0.97" in out.splitlines()


def test_nan_in_a_trials_result_json_is_a_gap_in_its_curve_with_one_warning(tmp_path):
    text = good_files()["trial_a_00000/result.json"].replace('"val_loss": 0.4', '"val_loss": NaN')
    run_dir = write_run(tmp_path / "run", {"trial_a_00000/result.json": text})
    results = read_run(run_dir)
    line = next(line for line in curves(results) if line.name == "a_00000")
    assert line.points("val_loss") == ([1, 3], [1.0, 0.2])
    (warning,) = warnings_of(results)
    assert warning.startswith(f"{run_dir / 'trial_a_00000' / 'result.json'}: warning[W308]: holds NaN or Infinity")


def test_a_results_csv_with_a_byte_order_mark_reads_its_first_column(tmp_path, capsys):
    run_dir = write_run(tmp_path / "run", {"results.csv": "\ufeff" + good_files()["results.csv"]})
    results = read_run(run_dir)
    assert results.columns[0] == "trial_id" and results.kind == "tune" and results.warnings == []
    assert main(["results", str(run_dir)]) == Exit.OK
    assert capsys.readouterr().out.startswith(f"{run_dir}: 3 trials")


@pytest.mark.parametrize(
    ("cut", "rows", "message"),
    [
        (-10, 2, "the last row has no line end and 7 of 8 cells: it was cut off; left out"),
        (-2, 3, "the last row has no line end: it may be cut off, and is shown as read"),  # 0.97 cut to 0.9
    ],
    ids=["in-a-row", "in-a-number"],
)
def test_a_truncated_results_csv_warns_of_its_cut_off_last_row(tmp_path, capsys, cut, rows, message):
    run_dir = write_run(tmp_path / "run", {"results.csv": good_files()["results.csv"][:cut]})
    results = read_run(run_dir)
    assert len(results.rows) == rows
    assert f"{run_dir / 'results.csv'}:4: warning[W308]: line 4: {message}" in warnings_of(results)
    assert main(["results", str(run_dir)]) == Exit.OK


def test_a_fifo_in_place_of_best_json_is_left_out_at_once(tmp_path):
    run_dir = write_run(tmp_path / "run", {"best.json": None})
    os.mkfifo(run_dir / "best.json")
    result = cli("results", str(run_dir), timeout=60)
    assert result.returncode == Exit.OK
    line = one_warning(result.stderr, "W307", run_dir / "best.json")
    assert "it is a FIFO, not a regular file" in line


def test_a_fifo_in_place_of_a_trials_result_json_does_not_hang_the_report(tmp_path):
    pytest.importorskip("plotly")
    run_dir = write_run(tmp_path / "run", {"trial_a_00000/result.json": None})
    (run_dir / "trial_a_00000").mkdir()
    os.mkfifo(run_dir / "trial_a_00000" / "result.json")
    try:
        result = cli("report", str(run_dir), "-o", str(tmp_path / "report.html"), timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("specc report waited on a FIFO with no writer")
    assert result.returncode == Exit.OK, result.stderr
    line = one_warning(result.stderr, "W307", run_dir / "trial_a_00000" / "result.json")
    assert "it is a FIFO" in line


def test_results_csv_linked_to_etc_passwd_is_not_read(tmp_path):
    run_dir = write_run(tmp_path / "run", {"results.csv": None})
    os.symlink("/etc/passwd", run_dir / "results.csv")
    result = cli("results", str(run_dir))
    assert result.returncode == Exit.USAGE
    assert result.stderr == (
        f"specc results: error: {run_dir / 'results.csv'}: a symbolic link out of the run directory (to /etc/passwd)\n"
    )
    assert result.stdout == "" and "root:" not in result.stderr


def test_a_file_linked_out_of_the_run_is_never_shown(tmp_path, capsys):
    """A results.csv that today's readers would have printed, row by row, from outside the run directory."""
    secret = tmp_path / "elsewhere" / "secret.csv"
    secret.parent.mkdir()
    secret.write_text("trial_id,status\nSECRET-TOKEN-1234,completed\n", encoding="utf-8")
    run_dir = write_run(tmp_path / "run", {"results.csv": None})
    os.symlink(secret, run_dir / "results.csv")
    assert main(["results", str(run_dir)]) == Exit.USAGE
    out, err = capsys.readouterr()
    assert "SECRET" not in out + err and "a symbolic link out of the run directory" in err


def test_a_trial_id_that_climbs_out_of_the_run_reads_nothing_there(tmp_path):
    """trial_<id>/result.json for an id `/../../elsewhere` is a file outside the run: it is not read."""
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "result.json").write_text(json.dumps({"epoch": 0, "secret_metric": 1.0}) + "\n", encoding="utf-8")
    header = [name for name in HEADER if not name.startswith("last_")]  # the curves' metrics: what trials reported
    rows = [["/../../elsewhere", "completed", 1, 0.01, "relu", 0.9]]
    run_dir = write_run(tmp_path / "run", {"results.csv": csv_text(header, rows), "best.json": None})
    (run_dir / "trial_").mkdir()
    (line,) = curves(read_run(run_dir))
    assert line.epochs == ()


@pytest.mark.parametrize(
    ("name", "size", "code", "message"),
    [
        ("best.json", 16 << 20, Exit.OK, "{file}: warning[W307]: larger than 4,194,304 bytes; left out"),
        ("results.csv", 80 << 20, Exit.USAGE, "specc results: error: {file}: larger than 67,108,864 bytes"),
    ],
)
def test_a_huge_file_is_not_read(tmp_path, capsys, name, size, code, message):
    """Only the bound and one byte more are read (sparse files: huge to read, nothing on disk)."""
    run_dir = write_run(tmp_path / "run")
    with open(run_dir / name, "r+b") as handle:
        handle.truncate(size)
    assert main(["results", str(run_dir)]) == code
    assert capsys.readouterr().err.splitlines() == [message.format(file=run_dir / name)]


@pytest.mark.parametrize(
    ("best", "message"),
    [
        ([1, 2], "holds a list, not a JSON object; left out"),
        ("best", "holds best, not a JSON object; left out"),
        ({"trial_id": "a_00002", "metric": ["val_accuracy", 2]},
         '"metric" holds a list, not a string or a list of strings; left out'),
        ({"trial_id": 2}, '"trial_id" holds 2, not a string; left out'),
        ({"trial_id": "a_00002", "mode": "up"}, '"mode" holds up, not "min", "max" or a list of them; left out'),
        ({"trial_id": "a_00002", "config": "lr=1"}, '"config" holds lr=1, not an object; left out'),
        ({"trial_id": "a_00002", "metrics": [0.9]}, '"metrics" holds a list, not an object; left out'),
        ({"trial_id": "a_00002", "checkpoint": {"path": 1}},
         '"checkpoint" holds an object, not a path or null; left out'),
    ],
    ids=["list", "string", "metric-list", "trial-id-number", "mode", "config-string", "metrics-list", "checkpoint"],
)  # fmt: skip
def test_best_json_of_the_wrong_types_is_left_out_in_part(tmp_path, capsys, best, message):
    run_dir = write_run(tmp_path / "run", {"best.json": json.dumps(best)})
    assert main(["results", str(run_dir)]) == Exit.OK
    out, err = capsys.readouterr()
    assert one_warning(err, "W308", run_dir / "best.json").endswith(message)
    assert "* a_00002" in out
    code, page = report_in(run_dir, tmp_path)
    assert code == Exit.OK and "Read in part" in page


def test_results_csv_and_best_json_that_disagree_are_both_named(tmp_path, capsys):
    best = json.loads(good_files()["best.json"])
    best.update(trial_id="a_00000", metrics={"epoch": 3, "val_loss": 0.2, "val_accuracy": 0.95})
    run_dir = write_run(tmp_path / "run", {"best.json": json.dumps(best)})
    assert main(["results", str(run_dir)]) == Exit.OK
    out, err = capsys.readouterr()
    where = f"{run_dir / 'best.json'}: warning[W309]: "
    assert err.splitlines() == [
        f"{where}best.json gives trial a_00000 val_accuracy 0.95, but results.csv's best_val_accuracy is 0.9",
        f"{where}best.json names trial a_00000 (best_val_accuracy 0.9) as the best, but results.csv has trial "
        "a_00002 better (0.97, mode max)",
    ]
    assert "* a_00000" in out  # best.json's pick stays marked: it is the trial whose checkpoint the run kept


def test_best_json_naming_a_trial_results_csv_lacks_is_a_warning(tmp_path, capsys):
    best = json.loads(good_files()["best.json"])
    best["trial_id"] = "z_99999"
    run_dir = write_run(tmp_path / "run", {"best.json": json.dumps(best)})
    assert main(["results", str(run_dir)]) == Exit.OK
    out, err = capsys.readouterr()
    line = one_warning(err, "W309", run_dir / "best.json")
    assert line.endswith("best.json names trial z_99999 as the best, but results.csv has no such trial")
    assert "* a_00002" in out


def test_a_json_cell_nested_past_the_recursion_limit_is_text(tmp_path, capsys):
    rows = [[BEST_ID, "completed", 3, "[" * 100_000, "gelu", 0.97, 0.06, 0.97]]
    run_dir = write_run(tmp_path / "run", {"results.csv": csv_text(HEADER, rows)})
    assert main(["results", str(run_dir)]) == Exit.OK
    assert read_run(run_dir).rows[0]["training.optimizer.lr"] == "[" * 100_000
    code, _ = report_in(run_dir, tmp_path)
    assert code == Exit.OK


def test_a_nul_in_a_trial_id_is_shown_escaped_and_names_no_file(tmp_path, capsys):
    rows = [["a_0\x000002", "completed", 3, 0.003, "gelu", 0.97, 0.06, 0.97]]
    run_dir = write_run(tmp_path / "run", {"results.csv": csv_text(HEADER, rows), "best.json": None})
    code, page = report_in(run_dir, tmp_path)
    assert code == Exit.OK and "a_0\\x000002" in page
    assert main(["results", str(run_dir)]) == Exit.OK
    assert "a_0\\x000002" in capsys.readouterr().out


def test_terminal_escapes_in_a_run_reach_no_terminal(tmp_path, capsys):
    escape = "\x1b]0;owned\x07\x1b[2J"
    rows = [[BEST_ID, f"completed{escape}", 3, 0.003, "gelu", 0.97, 0.06, 0.97]]
    header = [*HEADER[:-1], f"last_{escape}"]
    best = {"trial_id": BEST_ID, "metric": f"val{escape}", "config": {f"lr{escape}": 1}, "checkpoint": escape}
    run_dir = write_run(
        tmp_path / "run",
        {"results.csv": csv_text(header, rows), "best.json": json.dumps(best), "spec.resolved.yaml": f"x: [{escape}"},
    )
    assert main(["results", str(run_dir)]) == Exit.OK
    out, err = capsys.readouterr()
    assert "\x1b" not in out + err and "\x07" not in out + err
    assert "\\x1b]0;owned\\x07" in out


def test_a_report_html_linked_out_of_the_run_is_not_written_through(tmp_path, capsys):
    pytest.importorskip("plotly")
    victim = tmp_path / "yours.txt"
    victim.write_text("keep me\n", encoding="utf-8")
    run_dir = write_run(tmp_path / "run")
    os.symlink(victim, run_dir / "report.html")
    assert main(["report", str(run_dir)]) == Exit.USAGE
    assert victim.read_text(encoding="utf-8") == "keep me\n"
    assert "a symbolic link in the run directory" in capsys.readouterr().err


# Any content, any file: hypothesis


FILES = ("results.csv", "best.json", "spec.resolved.yaml", "trial_a_00000/result.json", "trial_a_00001/progress.csv")
NAMES = ["trial_id", "status", "epoch", "epochs", "best_val_accuracy", "last_val_loss", "val_accuracy", "val_loss",
         "training_iteration", *SPACE]  # fmt: skip
ODD = [  # values a file may hold that have broken a reader, or could
    0.5, 1e308, -1e308, 5e-324, 10**400, "a_00002", "max", "min", "relu", "\x1b[31m", "$\\frac{$", "NaN", "nan",
    "\x00", "[" * 5000, "9" * 400, "1e999", "", "/../..", "trial_id", "val_accuracy",
]  # fmt: skip
scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=12), st.sampled_from(ODD)
)  # st.floats(): nan and infinities too, which Python's json writes
json_values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.one_of(st.text(max_size=8), st.sampled_from(NAMES)), children, max_size=5),
    ),
    max_leaves=16,
)
cells = st.one_of(st.text(max_size=10), json_values.map(json.dumps), st.sampled_from([str(odd) for odd in ODD]))


def objects(keys: list[str], values=json_values):
    """JSON objects whose keys are mostly the ones a reader looks up, with any values."""
    return st.fixed_dictionaries({}, optional={key: values for key in keys}) | st.dictionaries(
        st.sampled_from(keys) | st.text(max_size=8), values, max_size=6
    )


@st.composite
def csv_tables(draw, names: list[str]) -> str:
    """A CSV table with a header of mostly `names`, rows of about its width, now and then cut off anywhere."""
    header = draw(st.lists(st.sampled_from(names) | st.text(max_size=8), min_size=1, max_size=8))
    rows = draw(st.lists(st.lists(cells, min_size=len(header) - 1, max_size=len(header) + 1), max_size=5))
    text = csv_text(header, rows)
    return text[: draw(st.integers(0, len(text)))] if draw(st.booleans()) else text


distributions = st.dictionaries(
    st.sampled_from(["loguniform", "uniform", "choice", "grid", "randint", "qloguniform", "randn"])
    | st.text(max_size=6),
    json_values,
    min_size=1,
    max_size=1,
)
specs = objects(["specc", "name", "tune", "run"]) | st.fixed_dictionaries(
    {
        "tune": objects(["metric", "mode", "space"])
        | st.fixed_dictionaries(
            {
                "metric": scalars,
                "mode": scalars,
                "space": st.dictionaries(st.sampled_from([*SPACE, "x"]), distributions),
            }
        ),
        "run": st.fixed_dictionaries({"checkpoint_score": objects(["metric", "mode"])}),
    }
)
SHAPED = {
    "results.csv": csv_tables(NAMES),
    "best.json": (objects(["trial_id", "metric", "mode", "config", "metrics", "checkpoint"]) | json_values).map(
        lambda best: json.dumps(best, indent=1)
    ),
    "spec.resolved.yaml": specs.map(json.dumps) | st.text(max_size=200),  # JSON is YAML
    "trial_a_00000/result.json": st.lists(
        objects(["epoch", "training_iteration", "val_accuracy", "val_loss"], scalars) | json_values, max_size=6
    ).map(lambda lines: "".join(json.dumps(line) + "\n" for line in lines)),
    "trial_a_00001/progress.csv": csv_tables(["epoch", "training_iteration", "val_accuracy", "val_loss"]),
}


def contents(name: str):
    """What hypothesis writes into the file `name`: any bytes, or text of its own format (any JSON, CSV or
    YAML, shaped like what the readers look for), with or without a byte-order mark."""
    shaped = SHAPED[name]
    return st.one_of(st.binary(max_size=300), shaped, shaped.map(lambda text: "\ufeff" + text))


def exercise(run_dir: Path) -> None:
    """Everything `specc results` and `specc report` do with a run directory: the library, then the CLI."""
    try:
        results = read_run(run_dir)
    except UsageError as error:  # a run that cannot be read at all: one line
        assert "\n" not in str(error) and "\x1b" not in str(error)
    else:
        for fmt in FORMATS:
            render(results, fmt)
        format_text(results, max_rows=1)
        curves(results)
        parallel(results)
        for problem in getattr(results, "warnings", []):
            assert "\n" not in str(problem) and "\x1b" not in str(problem)
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        for fmt in FORMATS:
            assert main(["results", str(run_dir), "--format", fmt]) in (Exit.OK, Exit.USAGE)
        with tempfile.TemporaryDirectory() as out:
            if _has("plotly"):
                assert main(["report", str(run_dir), "-o", os.path.join(out, "r.html")]) in (Exit.OK, Exit.USAGE)


def _has(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


@pytest.mark.parametrize("name", FILES)
@FUZZ
@given(data=st.data())
def test_any_content_of_any_file_the_readers_read(name, data):
    content = data.draw(contents(name), label=name)
    with tempfile.TemporaryDirectory() as directory:
        exercise(write_run(Path(directory) / "run", {name: content}))


@FUZZ
@given(files=st.fixed_dictionaries({}, optional={name: st.one_of(st.none(), contents(name)) for name in FILES}))
def test_any_content_of_every_file_at_once(files):
    with tempfile.TemporaryDirectory() as directory:
        exercise(write_run(Path(directory) / "run", files))


def test_the_plots_survive_hostile_names(tmp_path, capsys):
    """matplotlib reads `$...$` as mathtext (a parse error when saved): names from the files are drawn as text."""
    pytest.importorskip("matplotlib")
    header = [*HEADER[:-1], "last_$\\frac{$"]
    rows = [[t, s, len(h), lr, act, max(h), 0.1, h[-1]] for t, s, lr, act, h in TRIALS]
    text = good_files()["trial_a_00000/result.json"].replace('"val_accuracy"', '"$\\\\frac{$"')
    run_dir = write_run(tmp_path / "run", {"results.csv": csv_text(header, rows), "trial_a_00000/result.json": text})
    assert main(["results", str(run_dir), "--plot", str(tmp_path / "plots")]) == Exit.OK


# Generated run directories through specc's CLI in a bounded process (issue 53, deliverable 4)
#
# The same files with hostile values (odd strings, numbers past int64 and float, nan) and odd shapes: a directory,
# a link out of the run, a link inside it, a link loop, a dangling link, an empty file, in place of any file; trial
# directories whose names hold escapes; many rows. `specc results --format text|csv|json` and `specc report -o`
# run in cli_worker.py's process (10 s a command, 3 GiB): exit 0, 1 or 2, nothing escaping main, no traceback and
# no raw control, escape or bidi character printed.

hostile_scalars = st.one_of(scalars, st.sampled_from(EXTREME_INTS + EXTREME_FLOATS), odd_strings)
hostile_values = st.recursive(
    hostile_scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.one_of(odd_strings, st.sampled_from(NAMES)), children, max_size=5),
    ),
    max_leaves=12,
)
hostile_cells = st.one_of(cells, hostile_scalars.map(str), hostile_values.map(json.dumps))
trial_ids = st.one_of(st.sampled_from([t[0] for t in TRIALS]), odd_strings.filter(lambda s: "/" not in s and s != ""))


@st.composite
def hostile_tables(draw) -> str:
    """results.csv: the good header with hostile names mixed in, rows of hostile cells, sometimes many of them."""
    header = draw(st.lists(st.sampled_from(HEADER) | odd_strings, min_size=1, max_size=10))
    row = st.lists(hostile_cells, min_size=len(header), max_size=len(header))
    rows = draw(st.lists(row, max_size=4))
    rows = [[draw(trial_ids), *r[1:]] for r in rows]
    if draw(st.integers(0, 9)) == 0:  # many rows: work must scale with them, not blow up
        rows = rows * draw(st.sampled_from([200, 2000]))
    return csv_text(header, rows)


HOSTILE = {
    "results.csv": hostile_tables(),
    "best.json": objects(["trial_id", "metric", "mode", "config", "metrics", "checkpoint"], hostile_values).map(
        lambda best: json.dumps(best, indent=1)
    ),
    "spec.resolved.yaml": st.fixed_dictionaries(
        {
            "specc": st.just(1),
            "name": st.just("r"),
            "tune": st.fixed_dictionaries(
                {"metric": hostile_scalars, "mode": hostile_scalars},
                optional={"space": st.dictionaries(odd_strings | st.sampled_from(list(SPACE)), hostile_values)},
            ),
        }
    ).map(yaml_text),
    "best.yaml": hostile_values.map(yaml_text),
    "trial_a_00000/result.json": st.lists(
        objects(["epoch", "training_iteration", "val_accuracy", "val_loss", "trial_id"], hostile_scalars), max_size=6
    ).map(lambda lines: "".join(json.dumps(line) + "\n" for line in lines)),
    "trial_a_00001/progress.csv": hostile_tables(),
}
SHAPES = ["dir", "link-out", "link-in", "loop", "dangling", "empty"]


def run_files(name: str):
    """What a file of a generated run directory is: hostile text, the earlier fuzz's content, absent, or a shape."""
    content = HOSTILE[name] | contents(name) if name in SHAPED else HOSTILE[name]
    return st.one_of(content, content, st.none(), st.sampled_from(SHAPES))


def write_generated(run_dir: Path, files: dict, trials: list) -> None:
    """The good run directory, then each generated file (text, None: removed, or one of SHAPES) and extra trial
    directories named by `trials` (hostile ids), each with a result.json."""
    write_run(run_dir)
    for name, content in files.items():
        path = run_dir / name
        if path.exists():
            path.unlink()
        if content is None:
            continue
        if isinstance(content, str) and content in SHAPES:
            _shape(path, content, run_dir)
        else:
            path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8", "surrogatepass"))
    for trial in trials:
        with contextlib.suppress(OSError, ValueError):  # a name no file system takes (NUL, too long): left out
            (run_dir / f"trial_{trial}").mkdir(exist_ok=True)
            (run_dir / f"trial_{trial}" / "result.json").write_text(json.dumps(epoch(trial, 1, 0.5)) + "\n")


def _shape(path: Path, shape: str, run_dir: Path) -> None:
    if shape == "dir":
        path.mkdir()
    elif shape == "link-out":
        path.symlink_to("/etc/passwd")
    elif shape == "link-in":
        path.symlink_to(run_dir / "best.yaml")
    elif shape == "loop":
        path.symlink_to(path)
    elif shape == "dangling":
        path.symlink_to(run_dir / "no-such-file")
    else:
        path.write_bytes(b"")


GENERATED_FILES = [*FILES, "best.yaml"]
COLLECT = os.environ.get("SPECC_FUZZ_COLLECT") == "1"  # hard runs: gather every kind of failure, then fail once


@pytest.fixture(scope="module")
def worker():
    worker = Worker()
    yield worker
    worker.close()


def test_generated_run_directories_through_results_and_report(worker, tmp_path_factory):
    root = tmp_path_factory.mktemp("generated-runs")
    commands = [["results", "--format", fmt] for fmt in ("text", "csv", "json")]
    if _has("plotly"):
        commands.append(["report", "-o", str(root / "report.html")])
    count = collections.Counter()

    @FUZZ_RUNS
    @given(
        files=st.fixed_dictionaries({}, optional={name: run_files(name) for name in GENERATED_FILES}),
        trials=st.lists(trial_ids, max_size=3, unique=True),
        linked=st.booleans(),
    )
    def case(files, trials, linked):
        run_dir = root / "run"
        shutil.rmtree(run_dir, ignore_errors=True)
        write_generated(run_dir, files, trials)
        given_as = run_dir
        if linked:  # the run directory named through a link to it
            given_as = root / "link-to-run"
            given_as.unlink(missing_ok=True)
            given_as.symlink_to(run_dir)
        found = []
        for command in commands:
            reply = worker.run([command[0], str(given_as), *command[1:]], str(root))
            count[command[0], reply["code"]] += 1
            found += [(signature, reply) for signature in failures(" ".join(command[:3]), reply)]
        count["cases"] += 1
        message = (
            "\n".join(f"- {signature}\n{(reply['error'] or reply['stderr'])[-2000:]}" for signature, reply in found)
            + f"\nfiles: {files!r}\ntrials: {trials!r}, linked: {linked}"
        )
        for signature, _ in found if COLLECT else ():
            met.setdefault(re.sub(r"\d+", "N", signature), message)
        assert COLLECT or not found, message

    met: dict[str, str] = {}
    case()
    print(f"run directories: {count.pop('cases')} generated cases ({dict(sorted(count.items(), key=str))})")
    for signature, message in sorted(met.items()):
        print(f"\n== {signature}\n{message[-5000:]}")
    assert not met, f"{len(met)} kinds of failure (listed above)"
