"""The project's default job for real: digits MLP data-parallel on 2 Ray Train workers (SPEC §2, §6, §8)."""

from __future__ import annotations

import contextlib
import io

import pytest

from specc.cli import main

from .conftest import read_best, read_results, run_spec
from .test_progress import assert_lines_match_results

pytestmark = pytest.mark.slow

SPEC = """\
specc: 1
name: digits-ddp
description: specs/digits_mlp.yaml in a temporary directory
framework: torch
model: {type: mlp, hidden_sizes: [64], activation: relu, dropout: 0.0}
dataset: {type: digits, validation_fraction: 0.2, batch_size: 64, shuffle_seed: 0}
training:
  epochs: 5
  loss: cross_entropy
  optimizer: {type: sgd, lr: 0.1, momentum: 0.9, weight_decay: 0.0}
  metrics: [accuracy]
  seed: 0
  checkpoint_every: 1
scaling: {num_workers: 2, use_gpu: false, resources_per_worker: {CPU: 1}, backend: gloo}
run:
  storage_path: ./runs
  checkpoints_to_keep: 2
  checkpoint_score: {metric: val_accuracy, mode: max}
  max_failures: 0
"""


@pytest.fixture(scope="module")
def digits_run(tmp_path_factory, local_ray):
    root = tmp_path_factory.mktemp("ddp")
    spec = root / "digits_ddp.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        result = run_spec(spec, storage_path=str(root / "runs"))
    return spec, root / "runs" / "digits-ddp", result, printed.getvalue()


def test_each_epoch_is_printed_as_it_ends(digits_run):
    """From Train's controller, through the driver's queue, with results.csv's metrics (tests/e2e/test_progress.py)."""
    _, run_dir, _, printed = digits_run
    assert_lines_match_results(printed, "digits-ddp", run_dir, epochs=5)


def test_two_workers_learn_digits(digits_run):
    _, run_dir, result, _ = digits_run
    best = read_best(run_dir)
    assert best["metrics"]["val_accuracy"] >= 0.9
    assert best["metrics"] == pytest.approx(result.metrics)
    assert best["run_dir"] == result.run_dir == str(run_dir)


def test_results_csv_has_one_row_per_epoch(digits_run):
    _, run_dir, _, _ = digits_run
    header, rows = read_results(run_dir)
    assert header == ["epoch", "train_loss", "val_loss", "val_accuracy", "num_parameters"]
    assert [row["epoch"] for row in rows] == [1, 2, 3, 4, 5]
    assert all(0.0 <= row["val_accuracy"] <= 1.0 and row["train_loss"] > 0 for row in rows)
    assert rows[-1]["train_loss"] < rows[0]["train_loss"]
    best = read_best(run_dir)["metrics"]
    assert best["val_accuracy"] == max(row["val_accuracy"] for row in rows)  # checkpoint_score: val_accuracy, max


def test_best_checkpoint_is_kept_in_the_run_directory(digits_run):
    import torch

    _, run_dir, result, _ = digits_run
    checkpoint = read_best(run_dir)["checkpoint"]
    assert checkpoint == result.checkpoint
    assert checkpoint is not None and checkpoint.startswith(str(run_dir))
    state = torch.load(f"{checkpoint}/state.pt", map_location="cpu", weights_only=False)
    assert state["epoch"] == read_best(run_dir)["metrics"]["epoch"]
    assert state["model"]["1.weight"].shape == (64, 64)  # Flatten, Linear(64 pixels -> 64 hidden), ...


def test_run_directory_keeps_the_compiled_source(digits_run, capsys):
    spec, run_dir, _, _ = digits_run
    capsys.readouterr()
    assert main(["compile", str(spec), "-o", "-"]) == 0
    compiled = capsys.readouterr().out
    assert compiled.startswith('"""digits-ddp:')
    assert (run_dir / "script.py").read_text(encoding="utf-8") == compiled


def test_run_directory_keeps_a_valid_resolved_spec(digits_run, capsys):
    _, run_dir, _, _ = digits_run
    resolved = run_dir / "spec.resolved.yaml"
    capsys.readouterr()
    assert main(["validate", str(resolved)]) == 0, capsys.readouterr()
    from specc.api import load

    experiment = load(resolved)
    assert experiment.name == "digits-ddp"
    assert experiment.scaling.num_workers == 2
    assert experiment.training.epochs == 5
