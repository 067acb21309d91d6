"""Diverged runs for real (issue 15, class 6): a learning rate that makes the loss NaN ends a Ray Train run with
status `diverged`, exit 1 and E415 naming the epoch and the loss; a search goes on with its other trials and
picks its best among them (W310, exit 0); best.json stays strict JSON. `specc run` in this process on the
session Ray, real torch and tf_keras training on scikit-learn's digits.

The learning rate jumps after the first epoch: a cosine schedule with t_max 1 "anneals" towards an eta_min of 1e12,
so epoch 1 trains (and is checkpointed) and epoch 2 diverges (epochs count from 1, as the progress lines do).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from specc.cli import main
from specc.results.history import RAY_KEYS

pytestmark = pytest.mark.slow

TRAIN = """\
specc: 1
name: {name}
framework: {framework}
model: {{type: mlp, hidden_sizes: [32]}}
dataset: {{type: digits, batch_size: 64}}
training:
  epochs: 3
  optimizer: {{type: sgd, lr: 0.05}}
  lr_schedule: {{type: cosine, t_max: 1, eta_min: 1.0e+12}}
  checkpoint_every: 1
  metrics: [accuracy, top5_accuracy]
  train_metrics: true
scaling: {{num_workers: {workers}, resources_per_worker: {{CPU: 1}}}}
run: {{checkpoint_score: {{metric: val_accuracy, mode: max}}, callbacks: [json]}}
"""
# Every metric a Train run reports, one set of names on both frameworks (SPEC §12; §13's lr, with a schedule): what
# results.csv holds, and what Ray's controller received from the worker (run.callbacks json writes each report as it
# arrives)
NAMES = {
    "epoch",
    "train_loss",
    "train_accuracy",
    "train_top5_accuracy",
    "val_loss",
    "val_accuracy",
    "val_top5_accuracy",
    "num_parameters",
    "lr",  # the epoch's learning rate, which the cosine schedule sets
}
MLP_32 = 64 * 32 + 32 + 32 * 10 + 10  # Linear/Dense 64 -> 32 -> 10 with biases, counted by hand: num_parameters
SEARCH = """\
specc: 1
name: nan-search
framework: torch
model: {type: mlp, hidden_sizes: [32]}
dataset: {type: digits, batch_size: 64}
training: {epochs: 2, optimizer: {type: sgd, lr: 0.05, momentum: 0.9}, checkpoint_every: 1}
scaling: {num_workers: 1, resources_per_worker: {CPU: 1}}
tune:
  metric: val_accuracy
  mode: max
  space: {training.optimizer.lr: {grid: [1.0e+12, 0.05, 1.0e+10]}}
"""


def strict_json(path: Path):
    """best.json read as JSON is defined: NaN, Infinity and -Infinity are refused."""

    def refuse(constant):
        raise ValueError(f"{path} holds {constant}, which is not JSON")

    return json.loads(path.read_text(encoding="utf-8"), parse_constant=refuse)


def rows(run_dir: Path) -> list[dict]:
    with open(run_dir / "results.csv", newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def specc_run(spec: Path, storage: Path, capsys) -> tuple[int, str, str]:
    code = main(["run", str(spec), "--storage-path", str(storage), "--quiet"])
    out, err = capsys.readouterr()
    return code, out, err


# Keras' in turn (tests/e2e/conftest.py): torch's runs every time, and so does the search past its diverged trials
@pytest.mark.parametrize(
    ("framework", "workers"), [("torch", 2), pytest.param("tensorflow", 1, marks=pytest.mark.in_turn(4))]
)
def test_a_train_run_that_diverges_exits_1_with_status_diverged(tmp_path, local_ray, capsys, framework, workers):
    name = f"nan-{framework}"
    spec = tmp_path / f"{name}.yaml"
    spec.write_text(TRAIN.format(name=name, framework=framework, workers=workers), encoding="utf-8")
    run_dir = tmp_path / "runs" / name

    code, out, err = specc_run(spec, tmp_path / "runs", capsys)

    assert code == 1, err[-3000:]
    assert f"error[E415]: {name} diverged: train_loss is NaN or infinite at epoch 2" in err
    assert "hint: lower the learning rate (training.optimizer.lr, now 0.05) or clip gradients" in err
    assert f"{name}: diverged after " in out and "  diverged    at epoch 2: train_loss is NaN or infinite" in out
    best = strict_json(run_dir / "best.json")
    assert (best["status"], best["diverged"]) == ("diverged", {"epoch": 2, "metric": "train_loss"})
    assert best["metrics"]["epoch"] == 1  # the best epoch before the loss became NaN, with its checkpoint
    assert best["checkpoint"] and Path(best["checkpoint"]).is_dir()
    assert [row["epoch"] for row in rows(run_dir)] == ["1", "2"]  # stopped at the diverged epoch
    assert rows(run_dir)[1]["train_loss"] == "nan"

    # Epoch 1 trained as any run does: its metric names and num_parameters (tests/e2e/test_num_parameters.py)
    first = {name: float(value) for name, value in rows(run_dir)[0].items()}
    assert set(first) == NAMES
    assert 0 <= first["train_accuracy"] <= first["train_top5_accuracy"] <= 1
    assert 0 <= first["val_accuracy"] <= first["val_top5_accuracy"] <= 1
    reported = [json.loads(line) for line in (run_dir / "result.json").read_text(encoding="utf-8").splitlines()]
    assert [report["num_parameters"] for report in reported] == [MLP_32] * 2 == [2410] * 2
    assert set(reported[0]) - RAY_KEYS | {"epoch"} == NAMES
    assert best["metrics"]["num_parameters"] == 2410

    assert main(["results", str(run_dir)]) == 0
    shown = capsys.readouterr().out
    assert "2 epochs (diverged at epoch 2)" in shown and "best epoch: 1" in shown
    assert main(["report", str(run_dir), "-o", str(tmp_path / "report.html")]) == 0
    assert "diverged at epoch 2" in (tmp_path / "report.html").read_text(encoding="utf-8")


def test_a_search_goes_on_past_its_diverged_trials(tmp_path, local_ray, capsys):
    spec = tmp_path / "nan-search.yaml"
    spec.write_text(SEARCH, encoding="utf-8")
    run_dir = tmp_path / "runs" / "nan-search"

    code, out, err = specc_run(spec, tmp_path / "runs", capsys)

    assert code == 0, err[-3000:]
    trials = {float(row["training.optimizer.lr"]): row for row in rows(run_dir)}
    assert {lr: row["status"] for lr, row in trials.items()} == {1e12: "diverged", 0.05: "completed", 1e10: "diverged"}
    assert trials[1e12]["epochs"] == "1"  # stopped after its first epoch, not trained on in NaN
    best = strict_json(run_dir / "best.json")
    assert (best["status"], best["trial_id"]) == ("completed", trials[0.05]["trial_id"])
    assert best["config"] == {"training.optimizer.lr": 0.05}
    diverged = {trial["trial_id"] for trial in best["diverged"]}
    assert diverged == {trials[1e12]["trial_id"], trials[1e10]["trial_id"]}
    assert "warning[W310]: 2 trial(s) diverged" in err and "error[" not in err
    assert "  trials      3 (1 completed, 2 diverged)" in out
    assert f"  best trial  {trials[0.05]['trial_id']} (training.optimizer.lr=0.05)" in out
