"""`specc results RUN_DIR`: a finished run read back from its directory (SPEC §8, §9).

The run directories here are written the way the compiled scripts write them: results.csv by Python's csv
module (lists as JSON, numbers as Python writes them, empty cells for what a trial never reported), best.json,
best.yaml and spec.resolved.yaml.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import pytest

from specc.cli import Exit, main
from specc.results.run_dir import decode_cell, format_csv, format_text, read_run, render, short_names
from specc.spec.errors import UsageError

TUNE_CSV = """\
trial_id,status,epochs,training.optimizer.lr,model.activation,model.hidden_sizes,best_val_accuracy,last_train_loss,last_val_loss,last_val_accuracy
3f2a1_00000,completed,20,0.012345678901234,relu,"[128, 64]",0.9582172632217407,0.2266233265399933,0.19716046750545502,0.9554317548746518
3f2a1_00001,stopped,2,0.00011,gelu,[64],0.4122562674094708,2.1034,2.0021,0.4122562674094708
3f2a1_00002,error,0,0.05,relu,"[256, 128]",,,,
3f2a1_00003,completed,20,0.002,gelu,"[256, 128]",0.9721448467966574,0.1102,0.0881,0.9693593314763231
"""  # noqa: E501

TRAIN_CSV = """\
epoch,train_loss,val_loss,val_accuracy
1,2.2102344036102295,1.9742552042007446,0.7437325716018677
2,1.5220340490341187,0.8738235831260681,0.8635097742080688
3,0.5751001238822937,0.39451298117637634,0.9052924513816833
4,0.30786609649658203,0.24623218178749084,0.9610027855153204
5,0.2266233265399933,0.19716046750545502,0.9582172632217407
"""
OLD_TRAIN_CSV = """\
epoch,train_loss,val_loss,val_accuracy
0,2.2102344036102295,1.9742552042007446,0.7437325716018677
1,1.5220340490341187,0.8738235831260681,0.8635097742080688
2,0.5751001238822937,0.39451298117637634,0.9052924513816833
3,0.30786609649658203,0.24623218178749084,0.9610027855153204
4,0.2266233265399933,0.19716046750545502,0.9582172632217407
"""  # TRAIN_CSV as a specc before issue 48 wrote it: its epochs from 0

TRAIN_SPEC = """\
specc: 1
name: digits-mlp
framework: torch
tune: null
run:
  storage_path: ./runs
  name: digits-mlp
  checkpoint_score: {metric: val_accuracy, mode: max}
"""


def write_run(directory, files: dict) -> str:
    os.makedirs(directory, exist_ok=True)
    for name, text in files.items():
        with open(os.path.join(directory, name), "w", encoding="utf-8", newline="") as handle:
            handle.write(text if isinstance(text, str) else json.dumps(text, indent=2))
    return str(directory)


@pytest.fixture
def tune_run(tmp_path):
    run_dir = tmp_path / "runs" / "digits-asha"
    checkpoint = str(run_dir / "3f2a1_00003" / "checkpoint_000017")
    best = {
        "trial_id": "3f2a1_00003",
        "metric": "val_accuracy",
        "mode": "max",
        "config": {"training.optimizer.lr": 0.002, "model.activation": "gelu", "model.hidden_sizes": [256, 128]},
        "metrics": {"epoch": 17, "train_loss": 0.1203, "val_loss": 0.0853, "val_accuracy": 0.9721448467966574},
        "checkpoint": checkpoint,
        "epochs_counted_from": 1,
        "run_dir": str(run_dir),
    }
    return write_run(run_dir, {"results.csv": TUNE_CSV, "best.json": best, "best.yaml": "specc: 1\nname: x\n"})


@pytest.fixture
def train_run(tmp_path):
    run_dir = tmp_path / "runs" / "digits-mlp"
    best = {
        "metrics": {"epoch": 4, "train_loss": 0.30786609649658203, "val_loss": 0.24623218178749084,
                    "val_accuracy": 0.9610027855153204},
        "checkpoint": None,
        "epochs_counted_from": 1,
        "run_dir": str(run_dir),
    }  # fmt: skip
    return write_run(run_dir, {"results.csv": TRAIN_CSV, "best.json": best, "spec.resolved.yaml": TRAIN_SPEC})


# Reading


def test_a_tune_run_reads_as_one_decoded_row_per_trial(tune_run):
    results = read_run(tune_run)
    assert (results.kind, results.metric, results.mode, results.best_row) == ("tune", "val_accuracy", "max", 3)
    assert results.space == ("training.optimizer.lr", "model.activation", "model.hidden_sizes")
    first, stopped, errored, _ = results.rows
    assert (first["trial_id"], first["epochs"], first["model.hidden_sizes"]) == ("3f2a1_00000", 20, [128, 64])
    assert (stopped["status"], stopped["model.hidden_sizes"], stopped["model.activation"]) == ("stopped", [64], "gelu")
    assert errored["status"] == "error" and errored["best_val_accuracy"] is None and errored["last_val_loss"] is None
    assert results.best_spec == os.path.join(tune_run, "best.yaml")


def test_a_training_run_reads_as_one_row_per_epoch_best_by_checkpoint_score(train_run):
    results = read_run(train_run)
    assert (results.kind, results.metric, results.mode, results.best_row) == ("train", "val_accuracy", "max", 3)
    assert [row["epoch"] for row in results.rows] == [1, 2, 3, 4, 5]
    assert results.best_spec is None and results.epoch_shift == 0


@pytest.mark.parametrize(
    ("cell", "value"),
    [
        ("", None),
        ("0.5", 0.5),
        ("12", 12),
        ("[128, 64]", [128, 64]),
        ('{"lr": 0.1}', {"lr": 0.1}),
        ('"relu"', "relu"),
        ("relu", "relu"),  # unquoted text is kept as it is
        ("True", True),
        ("false", False),
        ("None", None),
        ("inf", math.inf),
        ("NaN", "nan"),  # compared below
    ],
)
def test_cells_decode_as_json_else_python_spellings_else_text(cell, value):
    decoded = decode_cell(cell)
    assert (str(decoded) == value) if value == "nan" else (decoded == value and type(decoded) is type(value))


def test_trial_ids_and_statuses_stay_text(tmp_path):
    run_dir = write_run(tmp_path / "r", {"results.csv": "trial_id,status,epochs,best_loss\n00012,true,1,0.5\n"})
    (row,) = read_run(run_dir).rows
    assert (row["trial_id"], row["status"]) == ("00012", "true")


def test_without_best_json_the_best_trial_comes_from_the_resolved_spec(tmp_path):
    spec = "specc: 1\ntune: {metric: val_loss, mode: min}\n"
    run_dir = write_run(
        tmp_path / "r", {"results.csv": TUNE_CSV.replace("val_accuracy", "val_loss"), "spec.resolved.yaml": spec}
    )
    results = read_run(run_dir)
    assert (results.metric, results.mode, results.best_row) == ("val_loss", "min", 1)
    assert results.best == {}


def test_a_run_whose_trials_all_failed_has_no_best_trial(tmp_path):
    header, _, _, errored, _ = TUNE_CSV.splitlines()
    failed = f"{header}\n{errored}\n"
    spec = "specc: 1\ntune: {metric: val_accuracy, mode: max}\n"
    results = read_run(write_run(tmp_path / "r", {"results.csv": failed, "spec.resolved.yaml": spec}))
    assert results.best_row is None
    text = format_text(results)
    assert text.splitlines()[0].endswith(": 1 trial (1 error)")
    assert text.endswith("\nno best trial: none reported val_accuracy\n") and "*" not in text


def test_a_training_run_without_checkpoint_score_keeps_its_last_epoch(tmp_path):
    run_dir = write_run(
        tmp_path / "r", {"results.csv": TRAIN_CSV, "best.json": {"metrics": {"epoch": 5}, "checkpoint": None}}
    )
    results = read_run(run_dir)
    assert (results.metric, results.best_row) == (None, 4)
    assert format_text(results).splitlines()[-3].startswith("last epoch: 5 (no run.checkpoint_score")


# The table


TUNE_TABLE = """\
  trial_id     status     epochs       lr  activation  hidden_sizes  best_val_accuracy  last_train_loss  last_val_loss  last_val_accuracy
  -----------  ---------  ------  -------  ----------  ------------  -----------------  ---------------  -------------  -----------------
  3f2a1_00000  completed      20  0.01235  relu        [128, 64]                0.9582           0.2266         0.1972             0.9554
  3f2a1_00001  stopped         2  0.00011  gelu        [64]                     0.4123            2.103          2.002             0.4123
  3f2a1_00002  error           0     0.05  relu        [256, 128]                    -                -              -                  -
* 3f2a1_00003  completed      20    0.002  gelu        [256, 128]               0.9721           0.1102         0.0881             0.9694
"""  # noqa: E501


def test_the_table_lists_trials_in_order_and_marks_the_best(tune_run):
    title, blank, *table = format_text(read_run(tune_run)).splitlines()[:8]
    assert title == f"{tune_run}: 4 trials (2 completed, 1 stopped, 1 error)"
    assert blank == ""
    assert table == TUNE_TABLE.splitlines()


def test_the_best_trial_block_has_config_metrics_checkpoint_and_how_to_retrain(tune_run):
    text = format_text(read_run(tune_run))
    best = text.split("\n\n")[-1].splitlines()
    assert best == [
        "best trial: 3f2a1_00003, val_accuracy 0.9721 (max, at epoch 17)",
        "  training.optimizer.lr: 0.002",
        "  model.activation: gelu",
        "  model.hidden_sizes: [256, 128]",
        "  metrics: train_loss 0.1203, val_loss 0.0853, val_accuracy 0.9721",
        f"  checkpoint: {os.path.join(tune_run, '3f2a1_00003', 'checkpoint_000017')}",
        f"  retrain it: specc run {os.path.join(tune_run, 'best.yaml')}",
    ]


def test_a_training_run_table_marks_the_best_epoch(train_run):
    lines = format_text(read_run(train_run)).splitlines()
    assert lines[0] == f"{train_run}: 5 epochs"
    assert lines[2:4] == ["  epoch  train_loss  val_loss  val_accuracy", "  -----  ----------  --------  ------------"]
    assert [line[0] for line in lines[4:9]] == [" ", " ", " ", "*", " "]
    assert lines[7] == "*     4      0.3079    0.2462         0.961"
    assert lines[10:] == [
        "best epoch: 4, val_accuracy 0.961 (max)",
        "  metrics: train_loss 0.3079, val_loss 0.2462, val_accuracy 0.961",
        "  checkpoint: none kept",
    ]


def test_long_values_are_shortened_and_control_characters_escaped(tmp_path):
    csv_text = 'trial_id,status,epochs,model.name,best_loss\nt_0,completed,1,"""' + "x" * 40 + '\\nrm"""' + ",0.5\n"
    text = format_text(read_run(write_run(tmp_path / "r", {"results.csv": csv_text})))
    row = text.splitlines()[4]
    assert "x" * 21 + "..." in row and "\n" not in row.strip()


def test_a_summary_shows_the_best_trials_in_their_own_order(tune_run):
    lines = format_text(read_run(tune_run), max_rows=2).splitlines()
    assert [line[:13] for line in lines[4:6]] == ["  3f2a1_00000", "* 3f2a1_00003"]
    assert lines[6] == f"(2 of 4 trials shown; all of them: specc results {tune_run})"


def test_a_summary_of_epochs_shows_the_last_ones_and_the_best(tmp_path):
    best = {"metrics": {"epoch": 2}, "checkpoint": None, "epochs_counted_from": 1}
    run_dir = write_run(tmp_path / "r", {"results.csv": TRAIN_CSV, "best.json": best, "spec.resolved.yaml": TRAIN_SPEC})
    lines = format_text(read_run(run_dir), max_rows=2).splitlines()
    assert [line[:7] for line in lines[4:6]] == ["*     2", "      5"]


def test_short_names_are_the_shortest_distinct_tails():
    paths = ["training.optimizer.lr", "scheduler.lr", "model.hidden_sizes.0", "model.dropout"]
    assert short_names(paths) == ["optimizer.lr", "scheduler.lr", "hidden_sizes.0", "dropout"]


def test_the_text_is_deterministic(tune_run):
    assert format_text(read_run(tune_run)) == format_text(read_run(tune_run))


# csv and json


def test_csv_format_is_the_file_as_the_script_wrote_it(tune_run):
    assert format_csv(read_run(tune_run)) == TUNE_CSV


def test_csv_format_normalises_quoting_and_line_ends_and_reads_back_the_same(tmp_path):
    written = (
        'trial_id,status,epochs,model.activation,model.batch_norm,best_loss\r\nt_0,completed,2,"""gelu""",true,0.50\r\n'
    )
    results = read_run(write_run(tmp_path / "r", {"results.csv": written}))
    text = format_csv(results)
    assert text == "trial_id,status,epochs,model.activation,model.batch_norm,best_loss\nt_0,completed,2,gelu,True,0.5\n"
    assert read_run(write_run(tmp_path / "again", {"results.csv": text})).rows == results.rows


def test_json_format_has_rows_and_best(tune_run):
    document = json.loads(render(read_run(tune_run), "json"))
    assert document["kind"] == "tune" and document["best_row"] == 3
    assert document["best"]["trial_id"] == "3f2a1_00003" and document["best"]["config"]["model.hidden_sizes"] == [
        256,
        128,
    ]
    assert document["rows"][2] == {
        "trial_id": "3f2a1_00002", "status": "error", "epochs": 0, "training.optimizer.lr": 0.05,
        "model.activation": "relu", "model.hidden_sizes": [256, 128], "best_val_accuracy": None,
        "last_train_loss": None, "last_val_loss": None, "last_val_accuracy": None,
    }  # fmt: skip


def test_json_format_is_strict_json_when_a_loss_diverged(tmp_path):
    run_dir = write_run(tmp_path / "r", {"results.csv": "epoch,train_loss,val_loss\n1,nan,inf\n"})
    text = render(read_run(run_dir), "json")
    assert json.loads(text)["rows"] == [{"epoch": 1, "train_loss": "nan", "val_loss": "inf"}]
    assert "NaN" not in text and "Infinity" not in text


# The command


def run_cli(*args):
    env = {**os.environ, "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "specc", *args], capture_output=True, text=True, env=env)


def test_specc_results_prints_the_table(tune_run, capsys):
    assert main(["results", tune_run]) == Exit.OK
    out = capsys.readouterr().out
    assert out.startswith(f"{tune_run}: 4 trials") and "* 3f2a1_00003" in out


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_specc_results_formats(tune_run, capsys, fmt):
    assert main(["results", tune_run, "--format", fmt]) == Exit.OK
    assert capsys.readouterr().out == render(read_run(tune_run), fmt)


def test_a_missing_run_directory_is_a_usage_error(tmp_path):
    result = run_cli("results", str(tmp_path / "nope"))
    assert result.returncode == Exit.USAGE
    assert result.stderr == f"specc results: error: {tmp_path / 'nope'}: no such run directory\n"
    assert result.stdout == ""


def test_a_directory_without_results_is_a_usage_error(tmp_path):
    result = run_cli("results", str(tmp_path))
    assert result.returncode == Exit.USAGE
    assert result.stderr.splitlines() == [
        f"specc results: error: {tmp_path}: no results.csv: the run has not finished, or this is not a run directory"
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "results.csv:1: no header row"),
        ("a,b\n1,2\n", "results.csv:1: the header names neither trial_id (a Tune run) nor epoch (a training run)"),
        (b"epoch,loss\n0,\xff\n", "results.csv:2: not UTF-8 text (byte 0xff)"),
    ],
)
def test_a_results_csv_that_cannot_be_read_names_the_file_and_why(tmp_path, text, message):
    (tmp_path / "results.csv").write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(UsageError) as error:
        read_run(tmp_path)
    assert str(error.value) == f"{tmp_path / message}"
    result = run_cli("results", str(tmp_path))
    assert (result.returncode, result.stderr) == (Exit.USAGE, f"specc results: error: {tmp_path / message}\n")


@pytest.mark.parametrize(
    ("text", "message", "rows"),
    [
        ("epoch,train_loss\n1,1.5\n2\n3,0.5\n", "results.csv:3: warning[W308]: line 3: 1 cells, but the header "
         "names 2 columns; left out", [1, 3]),
        ('trial_id,status,epochs\nt,done,1\nt2,"completed,1\n', "results.csv:3: warning[W308]: line 3: cut off "
         "inside a quoted cell; it and any line after it are left out", ["t"]),
    ],
)  # fmt: skip
def test_a_broken_row_of_results_csv_is_a_warning_and_the_other_rows_are_shown(tmp_path, capsys, text, message, rows):
    (tmp_path / "results.csv").write_text(text, encoding="utf-8")
    results = read_run(tmp_path)
    assert [row.get("epoch", row.get("trial_id")) for row in results.rows] == rows
    assert [str(problem) for problem in results.warnings] == [f"{tmp_path / message}"]
    assert main(["results", str(tmp_path)]) == Exit.OK
    assert capsys.readouterr().err == f"{tmp_path / message}\n"


def test_a_malformed_best_json_is_a_warning_naming_its_line(tmp_path):
    write_run(tmp_path, {"results.csv": TRAIN_CSV, "best.json": '{\n  "metrics": {,\n}'})
    result = run_cli("results", str(tmp_path))
    assert result.returncode == Exit.OK
    assert result.stderr.startswith(f"{tmp_path / 'best.json'}:2: warning[W308]: not valid JSON: ")
    assert result.stdout.startswith(f"{tmp_path}: 5 epochs") and "Traceback" not in result.stderr


def test_csv_output_writes_a_tab_or_a_line_end_in_a_cell_escaped(tmp_path):
    """A header or value holding a tab (from a results.csv of any origin) is not printed raw: every printed cell is
    plain text a terminal or a CI log takes as it is (found by tests/hostile/test_run_dir_readers.py's generator)."""
    from specc.results.run_dir import format_csv

    text = format_csv(read_run(write_run(tmp_path / "r", {"results.csv": 'trial_id,"\t"\na,"x\ty\nz"\n'})))
    assert text == "trial_id,\\t\na,x\\ty\\nz\n"
