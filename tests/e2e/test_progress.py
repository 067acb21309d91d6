"""Progress a person can follow (issue 16, item 4), for real: a Ray Train run prints one line per epoch as it ends,
with the metrics results.csv keeps (here in local mode; on 2 workers, test_distributed_digits' run); a search prints
one line per trial event (started, a report at a rung, stopped early, finished) that agrees with results.csv's
statuses; --quiet prints none of them; on a terminal, a tqdm bar. specc run in this process on the session Ray (its
stdout captured), and one compiled script under a pty.
"""

from __future__ import annotations

import csv
import fcntl
import json
import os
import re
import select
import struct
import subprocess
import termios
import time
from pathlib import Path

import pytest

from specc.cli import main

from .conftest import PYTHON, compile_spec, read_best, read_results, run_spec, subprocess_env

pytestmark = pytest.mark.slow

TRAIN = """\
specc: 1
name: {name}
framework: torch
model: {{type: mlp, hidden_sizes: [16]}}
dataset: {{type: {dataset}, batch_size: 32}}
training: {{epochs: 3, metrics: [accuracy], checkpoint_every: 1, optimizer: {{type: sgd, lr: 0.1}}}}
scaling: {{num_workers: {workers}, resources_per_worker: {{CPU: 1}}}}
"""
SEARCH = """\
specc: 1
name: asha-lines
framework: torch
model: {type: mlp, hidden_sizes: [16]}
dataset: {type: digits, batch_size: 64}
training: {epochs: 4, metrics: [accuracy], checkpoint_every: 0, optimizer: {type: sgd, lr: 0.05}}
scaling: {num_workers: 1, resources_per_worker: {CPU: 1}}
tune:
  metric: val_accuracy
  mode: max
  num_samples: 4
  max_concurrent_trials: 2
  search: {type: random, seed: 3}
  space: {training.optimizer.lr: {loguniform: [1.0e-4, 1.0e-1]}}
scheduler: {type: asha, grace_period: 1, reduction_factor: 2}
"""
EPOCH = re.compile(r"^(?P<name>\S+): epoch (?P<done>\d+)/(?P<of>\d+)  (?P<metrics>.*)  elapsed \S+  eta \S+$")
TRIAL = re.compile(r"^asha-lines: \[\d+/4\] trial (?P<id>\S+) (?P<event>.*?)(  (?P<details>.*))?  elapsed \S+$")


def epoch_lines(out: str, name: str) -> list[dict]:
    """Each `NAME: epoch i/N ...` line: its epoch (1-based), N and its metrics as printed."""
    lines = [EPOCH.match(line) for line in out.splitlines()]
    found = [m for m in lines if m and m["name"] == name]
    pairs = [m["metrics"].split("  ") for m in found]
    return [
        {"done": int(m["done"]), "of": int(m["of"]), "metrics": dict(pair.split(" ") for pair in metrics)}
        for m, metrics in zip(found, pairs, strict=True)
    ]


def assert_lines_match_results(out: str, name: str, run_dir, epochs: int = 3) -> None:
    """One line per epoch, in order, whose metrics are results.csv's rounded as the line rounds them."""
    _, rows = read_results(run_dir)
    lines = epoch_lines(out, name)
    assert [line["done"] for line in lines] == [row["epoch"] for row in rows] == list(range(1, epochs + 1)), out
    assert all(line["of"] == epochs for line in lines)
    for line, row in zip(lines, rows, strict=True):
        assert line["metrics"] == {
            key: f"{value:.4g}" for key, value in row.items() if key not in ("epoch", "num_parameters")
        }
    assert f"{name}: the model has " in out  # num_parameters: once, on its own line


@pytest.mark.parametrize("quiet", [False, True], ids=["lines", "quiet"])
def test_a_train_run_in_local_mode_prints_each_epoch_unless_quiet(local_ray, spec_file, tmp_path, capsys, quiet):
    spec = spec_file(TRAIN.format(name="epochs-local", dataset="iris", workers=0))

    result = run_spec(spec, storage_path=tmp_path / "runs", echo=False, quiet=quiet)

    out = capsys.readouterr().out
    if quiet:
        assert epoch_lines(out, "epochs-local") == [] and "epochs-local:" not in out
    else:
        assert_lines_match_results(out, "epochs-local", result.run_dir)


def test_a_search_prints_each_trial_event_as_results_csv_records_it(local_ray, spec_file, tmp_path, capsys):
    """Every trial started once and ended once (finished, or stopped early at the epoch results.csv records);
    each report at an ASHA rung (epochs 1 and 2 of 4) before its end has a line."""
    spec = spec_file(SEARCH)

    result = run_spec(spec, storage_path=tmp_path / "runs", echo=False)

    with open(os.path.join(result.run_dir, "results.csv"), newline="", encoding="utf-8") as handle:
        trials = {row["trial_id"]: row for row in csv.DictReader(handle)}
    events: dict[str, list[str]] = {trial: [] for trial in trials}
    for line in capsys.readouterr().out.splitlines():
        match = TRIAL.match(line)
        if match:
            events[match["id"]].append(match["event"])
    assert len(trials) == 4 and {row["status"] for row in trials.values()} <= {"completed", "stopped"}
    for trial, row in trials.items():
        ran = int(row["epochs"])
        ended = "finished" if row["status"] == "completed" else "stopped early"
        rungs = [f"epoch {rung}/4 (rung)" for rung in (1, 2) if rung <= ran]
        assert events[trial] == ["started", *rungs, f"{ended} at epoch {ran}/4"], (trial, row)
        # Tune's own record of the trial's reports: the epoch each names is its training_iteration
        lines = (Path(result.run_dir) / f"trial_{trial}" / "result.json").read_text(encoding="utf-8").splitlines()
        reports = [json.loads(line) for line in lines if line.strip()]
        assert [r["epoch"] for r in reports] == [r["training_iteration"] for r in reports] == list(range(1, ran + 1))
    best = read_best(result.run_dir)
    assert best["epochs_counted_from"] == 1 and 1 <= best["metrics"]["epoch"] <= int(trials[best["trial_id"]]["epochs"])


NUMBERED = """\
specc: 1
name: numbered
framework: torch
model: {type: mlp, hidden_sizes: [16]}
dataset: {type: iris, batch_size: 16}
training: {epochs: 3, metrics: [accuracy], checkpoint_every: 1, optimizer: {type: sgd, lr: 0.05}}
scaling: {num_workers: 1, resources_per_worker: {CPU: 1}}
run: {checkpoint_score: {metric: val_loss, mode: min}, checkpoints_to_keep: 3}
"""


def test_every_output_numbers_an_epoch_as_the_console_does(local_ray, spec_file, tmp_path, capsys):
    """Issue 48, item 3: one epoch numbering everywhere, from 1 as the console's `epoch i/N` and Ray's
    training_iteration count. `specc run` on a worker: its epoch lines, results.csv, best.json, the checkpoint the
    best epoch left (state.pt), the last screen's `best epoch`, and `specc results` as text, csv and json all give the
    same number to the same epoch; the report's curves too."""
    import torch

    from specc.results.history import curves
    from specc.results.run_dir import read_run

    spec, storage = spec_file(NUMBERED), tmp_path / "runs"
    assert main(["run", str(spec), "--storage-path", str(storage)]) == 0
    out, run_dir = capsys.readouterr().out, storage / "numbered"

    assert_lines_match_results(out, "numbered", run_dir)  # console and results.csv: epochs 1, 2, 3
    _, rows = read_results(run_dir)
    best = read_best(run_dir)
    top = min(rows, key=lambda row: row["val_loss"])
    assert best["metrics"]["epoch"] == top["epoch"] and best["metrics"]["val_loss"] == top["val_loss"]
    assert best["epochs_counted_from"] == 1  # how a reader tells this run directory from one an earlier specc wrote
    kept = torch.load(Path(best["checkpoint"]) / "state.pt", weights_only=False)
    assert kept["epoch"] == top["epoch"]  # the checkpoint the best epoch left says which epoch it is
    assert [row["epoch"] for row in kept["history"]] == list(range(1, top["epoch"] + 1))
    assert f"  best epoch  {top['epoch']} by val_loss" in out.splitlines()  # the last screen

    assert main(["results", str(run_dir)]) == 0
    text = capsys.readouterr().out
    assert f"best epoch: {top['epoch']}, val_loss " in text, text
    table = text.split("  -----  ", 1)[1].split("\n\n", 1)[0].splitlines()[1:]  # the rows below the dashes
    assert [(line[0], line[1:].split()[0]) for line in table] == [
        ("*" if epoch == top["epoch"] else " ", str(epoch)) for epoch in (1, 2, 3)
    ], text
    assert main(["results", str(run_dir), "--format", "json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert [row["epoch"] for row in shown["rows"]] == [1, 2, 3], shown
    assert main(["results", str(run_dir), "--format", "csv"]) == 0
    assert [line.split(",")[0] for line in capsys.readouterr().out.splitlines()[1:]] == ["1", "2", "3"]
    (curve,) = curves(read_run(run_dir))
    assert curve.points("val_accuracy")[0] == [1, 2, 3]  # the report's and the plots' x axis


@pytest.mark.in_turn(4)  # in turn (tests/e2e/conftest.py): a run of its own in a terminal; the lines run every time
def test_a_terminal_gets_a_tqdm_bar_instead_of_lines(spec_file, tmp_path):
    """The compiled script, run by hand with its stdout on a pseudo-terminal: a tqdm bar over the epochs."""
    spec = spec_file(TRAIN.format(name="epochs-bar", dataset="iris", workers=0))
    script = compile_spec(spec, tmp_path / "script.py")
    leader, follower = os.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 160, 0, 0))  # 0 columns: tqdm draws nothing
    process = subprocess.Popen(
        [PYTHON, str(script), "--storage-path", str(tmp_path / "runs")],
        cwd=tmp_path,
        env=subprocess_env(),
        stdout=follower,
        stderr=subprocess.DEVNULL,
    )
    os.close(follower)
    shown = b""
    deadline = time.monotonic() + 180
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([leader], [], [], 1)
            if ready:
                try:
                    chunk = os.read(leader, 65536)
                except OSError:  # the child closed the terminal
                    break
                if not chunk:
                    break
                shown += chunk
            elif process.poll() is not None:
                break
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
        os.close(leader)
    text = shown.decode(errors="replace")
    assert process.returncode == 0, text[-3000:]
    assert re.search(r"epochs-bar: 100%\|.*\| 3/3 \[", text), text[-3000:]  # tqdm's bar, finished
    assert "val_accuracy=" not in text and "val_accuracy " in text  # our metrics in the bar's postfix
    assert not re.search(r"^epochs-bar: epoch \d/3 ", text, re.MULTILINE)  # no lines: the bar shows them
