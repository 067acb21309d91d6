"""Learning-rate schedules and losses a spec names from its framework (SPEC §13, issue 50) on a real local Ray, on
both frameworks: the learning rate each epoch reports (`lr`) is the class's own formula, after the warm-up; a loss's
argument changes the loss (the same seed, label_smoothing 0 and 0.1 give different train_loss); a OneCycleLR stepped
per optimizer step runs its whole cycle; Keras lowers the rate on a plateau with its callback."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from .conftest import read_best, read_results, run_spec

pytestmark = [pytest.mark.slow, pytest.mark.in_turn(4)]  # in turn (tests/e2e/conftest.py): few changes touch them

TORCH_SCHEDULE = """\
specc: 1
name: torch-schedule
framework: torch
model: {type: mlp, hidden_sizes: [16]}
dataset: {type: digits, batch_size: 64}
training:
  epochs: 5
  optimizer: {type: sgd, lr: 0.1}
  lr_schedule: {type: PolynomialLR, total_iters: 3, power: 2.0, warmup: {epochs: 2, start_factor: 0.5}}
scaling: {num_workers: 1}
"""
TORCH_LOSS = """\
specc: 1
name: torch-loss
framework: torch
model: {type: mlp, hidden_sizes: [16]}
dataset: {type: digits, batch_size: 64}
training:
  epochs: 2
  loss: {type: cross_entropy, label_smoothing: 0.0}
  optimizer: {type: sgd, lr: 0.05}
  lr_schedule: {type: one_cycle, max_lr: 0.2}
scaling: {num_workers: 1}
tune:
  metric: val_loss
  mode: min
  space:
    training.loss.label_smoothing: {grid: [0.0, 0.1]}
"""
KERAS_SCHEDULE = """\
specc: 1
name: keras-schedule
framework: tensorflow
model: {type: mlp, hidden_sizes: [16]}
dataset: {type: digits, batch_size: 64}
training:
  epochs: 4
  optimizer: {type: sgd, lr: 0.1}
  lr_schedule: {type: exponential_decay, decay_steps: 1, decay_rate: 0.5, warmup: {epochs: 1, start_factor: 0.5}}
scaling: {num_workers: 1}
"""
KERAS_LOSS = """\
specc: 1
name: keras-loss
framework: tensorflow
model: {type: mlp, hidden_sizes: [16]}
dataset: {type: breast_cancer, batch_size: 64}
training:
  epochs: 3
  loss: {type: binary_crossentropy, label_smoothing: 0.0}
  optimizer: {type: sgd, lr: 0.01}
  lr_schedule: {type: reduce_on_plateau, metric: train_loss, patience: 0, factor: 0.5, min_delta: 10}
scaling: {num_workers: 1}
tune:
  metric: val_loss
  mode: min
  space:
    training.loss.label_smoothing: {grid: [0.0, 0.1]}
"""


def trials(run_dir) -> dict[float, dict]:
    """results.csv of a search over training.loss.label_smoothing: each trial's last result, by its smoothing."""
    with open(Path(run_dir) / "results.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    return {float(row["training.loss.label_smoothing"]): row for row in rows}


def test_a_torch_schedule_after_its_warmup_sets_each_epochs_rate_by_its_formula(tmp_path, spec_file, local_ray):
    torch = pytest.importorskip("torch")
    result = run_spec(spec_file(TORCH_SCHEDULE), storage_path=tmp_path / "runs", quiet=True)
    _, rows = read_results(result.run_dir)
    # LinearLR from 0.5 x 0.1 over 2 epochs, then PolynomialLR: 0.1 * (1 - t / 3) ** 2 for t = 0, 1, 2
    expected = [0.05, 0.075, 0.1, 0.1 * (2 / 3) ** 2, 0.1 * (1 / 3) ** 2]
    assert [row["lr"] for row in rows] == pytest.approx(expected)
    script = (Path(result.run_dir) / "script.py").read_text(encoding="utf-8")
    assert 'PolynomialLR(optimizer, total_iters=cfg["total_iters"], power=cfg["power"])' in script
    state = torch.load(Path(read_best(result.run_dir)["checkpoint"], "state.pt"), weights_only=True)
    assert len(state["lr_schedule"]["_schedulers"]) == 2  # the SequentialLR's state: resume goes on where it was


def test_a_torch_loss_argument_changes_the_loss_and_one_cycle_steps_per_batch(tmp_path, spec_file, local_ray):
    result = run_spec(spec_file(TORCH_LOSS), storage_path=tmp_path / "runs", quiet=True)
    by_smoothing = trials(result.run_dir)
    assert set(by_smoothing) == {0.0, 0.1}
    losses = [float(by_smoothing[smoothing]["last_train_loss"]) for smoothing in (0.0, 0.1)]
    assert losses[0] != pytest.approx(losses[1], rel=1e-3)
    # the cycle ran over every batch of both epochs: it ends far below where it started, max_lr / 25
    assert all(float(row["last_lr"]) < 0.2 / 25 / 10 for row in by_smoothing.values())
    script = (Path(result.run_dir) / "script.py").read_text(encoding="utf-8")
    assert 'nn.CrossEntropyLoss(label_smoothing=training["loss"]["label_smoothing"])' in script


def test_a_keras_schedule_counting_epochs_after_its_warmup(tmp_path, spec_file, local_ray):
    pytest.importorskip("tf_keras")
    result = run_spec(spec_file(KERAS_SCHEDULE), storage_path=tmp_path / "runs", quiet=True)
    _, rows = read_results(result.run_dir)
    # 0.5 x 0.1 in the warm-up's one epoch, then ExponentialDecay(0.1, decay_steps=1, decay_rate=0.5) of epochs 0..2
    assert [row["lr"] for row in rows] == pytest.approx([0.05, 0.1, 0.05, 0.025])


def test_a_keras_loss_argument_changes_the_loss_and_a_plateau_lowers_the_rate(tmp_path, spec_file, local_ray):
    pytest.importorskip("tf_keras")
    result = run_spec(spec_file(KERAS_LOSS), storage_path=tmp_path / "runs", quiet=True)
    by_smoothing = trials(result.run_dir)
    assert set(by_smoothing) == {0.0, 0.1}
    losses = [float(by_smoothing[smoothing]["last_train_loss"]) for smoothing in (0.0, 0.1)]
    assert losses[0] != pytest.approx(losses[1], rel=1e-3)
    # no epoch improves train_loss by min_delta 10 on the first: the rate halves after the second epoch, so the
    # third (the last result) trains at half the optimizer's 0.01
    assert [float(row["last_lr"]) for row in by_smoothing.values()] == pytest.approx([0.005, 0.005])
