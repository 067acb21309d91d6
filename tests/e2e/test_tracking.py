"""run.callbacks on a real local Ray (issue 7): what each tracker received is read back with its own reader and
compared with what the run reported (results.csv, Ray Tune's result.json). Offline throughout: MLflow logs
into an SQLite store in the run directory, W&B in offline mode."""

from __future__ import annotations

import csv
import json

import pytest

from specc.results.run_dir import read_run
from specc.results.summary import summary

from .conftest import read_results, run_spec
from .trackers import mlflow_runs, tensorboard_scalars, wandb_runs

# CI runs this module in turn (share 2, tests/e2e/conftest.py): every tracker on a Train run and a search
pytestmark = [pytest.mark.slow, pytest.mark.in_turn(2)]

TRAIN = """\
specc: 1
name: tracked
framework: torch
model: {{type: mlp, hidden_sizes: [16]}}
dataset: {{type: iris, batch_size: 16}}
training: {{epochs: 3, metrics: [accuracy], optimizer: {{type: adam, lr: 0.01}}}}
scaling: {{num_workers: {workers}}}
run: {{callbacks: [csv, json, tensorboard, mlflow, wandb]}}
"""

SEARCH = """\
specc: 1
name: tracked-search
framework: torch
model: {{type: mlp, hidden_sizes: [16]}}
dataset: {{type: iris, batch_size: 16}}
training: {{epochs: 2, metrics: [accuracy], optimizer: {{type: adam, lr: 0.01}}}}
scaling: {{num_workers: 1}}
tune:
  metric: val_accuracy
  mode: max
  num_samples: 2
  search: {{type: random, seed: 3}}
  space: {{training.optimizer.lr: {{loguniform: [0.001, 0.1]}}}}
run: {{callbacks: {callbacks}}}
"""


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    """Neither a tracking server nor W&B's cloud: the scripts' defaults (a store in the run directory, offline)."""
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.delenv("WANDB_MODE", raising=False)
    monkeypatch.setenv("WANDB_SILENT", "true")


def numbers(row: dict) -> dict:
    return {name: float(value) for name, value in row.items()}


@pytest.mark.parametrize("workers", [0, 1], ids=["local-mode", "one-worker"])
def test_a_training_run_logs_every_epoch_to_each_tracker(tmp_path, local_ray, spec_file, workers):
    """One worker: Ray Train's controller calls the script's UserCallback; no workers (local mode, which calls
    no callbacks): the script's report() logs itself. Either way every tracker holds every epoch."""
    run_dir = tmp_path / "runs" / "tracked"
    run_spec(spec_file(TRAIN.format(workers=workers)), storage_path=tmp_path / "runs", echo=False)
    _, epochs = read_results(run_dir)
    assert [row["epoch"] for row in epochs] == [1, 2, 3]
    reported = [numbers(row) for row in epochs]

    with open(run_dir / "progress.csv", encoding="utf-8") as f:
        assert [numbers(row) for row in csv.DictReader(f)] == reported
    lines = (run_dir / "result.json").read_text(encoding="utf-8").splitlines()
    assert [numbers(json.loads(line)) for line in lines] == reported

    scalars = tensorboard_scalars(run_dir)
    for name in ("train_loss", "val_loss", "val_accuracy"):
        steps = scalars[f"ray/tune/{name}"]
        assert [step for step, _ in steps] == [1, 2, 3]  # as Tune's training_iteration counts
        assert [value for _, value in steps] == pytest.approx([row[name] for row in reported], rel=1e-6)

    (run,) = mlflow_runs(f"sqlite:///{run_dir}/mlflow.db", "tracked")
    assert run["name"] == "tracked" and run["status"] == "FINISHED"
    assert run["params"]["training.optimizer.lr"] == "0.01" and run["params"]["dataset.type"] == "iris"
    assert run["metrics"]["val_accuracy"] == [
        (i + 1, pytest.approx(row["val_accuracy"])) for i, row in enumerate(reported)
    ]

    (logged,) = wandb_runs(run_dir)
    assert logged["project"] == "tracked" and logged["exit_code"] == 0
    assert logged["config"]["training"]["optimizer"]["lr"] == 0.01
    assert [row["_step"] for row in logged["history"]] == [1, 2, 3]
    assert [row["val_loss"] for row in logged["history"]] == pytest.approx([row["val_loss"] for row in reported])

    shown = summary(read_run(run_dir), 1.0)  # specc run's last screen says how to open each
    assert f"  tensorboard tensorboard --logdir {run_dir}\n" in shown
    assert f"  mlflow      mlflow ui --backend-store-uri sqlite:///{run_dir}/mlflow.db\n" in shown
    assert f"  wandb       wandb sync {run_dir}/wandb/offline-run-*\n" in shown


def test_a_search_logs_each_trial_through_rays_logger_callbacks(tmp_path, local_ray, spec_file):
    run_dir = tmp_path / "runs" / "tracked-search"
    spec = spec_file(SEARCH.format(callbacks="[csv, json, tensorboard, mlflow, wandb]"))
    run_spec(spec, storage_path=tmp_path / "runs", echo=False)
    trials = read_run(run_dir).rows
    assert len(trials) == 2

    runs = mlflow_runs(f"sqlite:///{run_dir}/mlflow.db", "tracked-search")
    assert sorted(run["name"] for run in runs) == sorted(f"trial_{row['trial_id']}" for row in trials)
    logged = wandb_runs(run_dir)
    assert sorted(run["name"] for run in logged) == sorted(f"trial_{row['trial_id']}" for row in trials)
    for row in trials:
        trial_dir = run_dir / f"trial_{row['trial_id']}"
        results = [json.loads(line) for line in (trial_dir / "result.json").read_text(encoding="utf-8").splitlines()]
        assert [r["epoch"] for r in results] == [1, 2]
        assert (trial_dir / "progress.csv").is_file()

        accuracy = tensorboard_scalars(trial_dir)["ray/tune/val_accuracy"]
        assert accuracy == [(r["training_iteration"], pytest.approx(r["val_accuracy"])) for r in results]

        (run,) = [run for run in runs if run["name"] == f"trial_{row['trial_id']}"]
        assert run["status"] == "FINISHED"
        assert float(run["params"]["training.optimizer.lr"]) == pytest.approx(row["training.optimizer.lr"])
        assert [value for _, value in run["metrics"]["val_accuracy"]] == pytest.approx(
            [r["val_accuracy"] for r in results]
        )

        (wb,) = [wb for wb in logged if wb["name"] == f"trial_{row['trial_id']}"]
        assert wb["config"]["training.optimizer.lr"] == pytest.approx(row["training.optimizer.lr"])
        assert [r["val_accuracy"] for r in wb["history"]] == pytest.approx([r["val_accuracy"] for r in results])
    assert f"  tensorboard tensorboard --logdir {run_dir}\n" in summary(read_run(run_dir), 1.0)


def test_a_search_writes_only_the_trackers_it_names(tmp_path, local_ray, spec_file):
    """Tune would add its TensorBoard logger by itself; a spec without `tensorboard` gets no event files (its
    trials still keep Ray's progress.csv and result.json, which the results are read from)."""
    run_dir = tmp_path / "runs" / "tracked-search"
    run_spec(spec_file(SEARCH.format(callbacks="[csv]")), storage_path=tmp_path / "runs", echo=False)
    trials = read_run(run_dir).rows
    assert len(trials) == 2
    assert not list(run_dir.rglob("events.out.tfevents*"))
    assert not (run_dir / "mlflow.db").exists() and not (run_dir / "wandb").exists()
    for row in trials:
        assert (run_dir / f"trial_{row['trial_id']}" / "result.json").is_file()
    shown = summary(read_run(run_dir), 1.0)
    assert "tensorboard --logdir" not in shown and "mlflow ui" not in shown and "wandb sync" not in shown
