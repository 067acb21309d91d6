"""SPEC §12's training additions on a real local Ray: steps_per_epoch and validation_steps bound the batches each
Ray Train worker reads (counted by the model itself), train_metrics reports train_accuracy beside val_accuracy,
and checkpoint_every: never writes no checkpoint, after which --resume says why it cannot."""

from __future__ import annotations

from collections import Counter

import pytest

from specc.spec.errors import SpecError

from .conftest import read_best, read_results, run_spec
from .fixtures.recording_models import read_records

# CI runs this module in turn (share 4, tests/e2e/conftest.py): extra training options, both frameworks
pytestmark = [pytest.mark.slow, pytest.mark.in_turn(4)]

SPEC = """\
specc: 1
name: partial-epochs
framework: torch
model:
  type: custom
  factory: "e2e_recording_models:make"
  kwargs: {{log: "{log}"}}
dataset: {{type: digits, batch_size: 16}}
training:
  epochs: 2
  optimizer: {{type: sgd, lr: 0.1, momentum: 0.9}}
  metrics: [accuracy]
  steps_per_epoch: 3
  validation_steps: 2
  train_metrics: true
  checkpoint_every: never
scaling: {{num_workers: 2}}
"""


def test_steps_per_epoch_bound_each_workers_batches_without_checkpoints(tmp_path, spec_file, factory_module, local_ray):
    factory_module("recording_models.py", "e2e_recording_models")
    log = tmp_path / "batches.log"
    spec = spec_file(SPEC.format(log=log))
    storage = tmp_path / "runs"

    result = run_spec(spec, storage_path=storage, quiet=True)

    calls = [(record["mode"], record["pid"], record["batch"]) for record in read_records(log)]
    per_worker = Counter((kind, pid) for kind, pid, _size in calls)
    pids = {pid for _kind, pid, _size in calls}
    assert len(pids) == 2  # both Ray Train workers
    # 2 epochs x 3 training batches and 2 x 2 validation batches, on each worker; digits has 90 batches of 16 a worker
    assert per_worker == {**{("train", pid): 6 for pid in pids}, **{("eval", pid): 4 for pid in pids}}
    assert {size for _kind, _pid, size in calls} == {16}

    header, rows = read_results(result.run_dir)
    assert header == ["epoch", "train_loss", "train_accuracy", "val_loss", "val_accuracy", "num_parameters"]
    assert [row["epoch"] for row in rows] == [1, 2] and all(0 <= row["train_accuracy"] <= 1 for row in rows)

    assert result.checkpoint is None and read_best(result.run_dir)["checkpoint"] is None
    assert not list(storage.rglob("checkpoint_*"))  # no checkpoint written anywhere
    with pytest.raises(SpecError) as refused:
        run_spec(spec, storage_path=storage, resume=True, quiet=True)
    assert [problem.code for problem in refused.value.problems] == ["E401"]
    assert "cannot be resumed: training.checkpoint_every is never" in str(refused.value)


KERAS_SPEC = """\
specc: 1
name: keras-partial-epochs
framework: tensorflow
model:
  type: custom
  factory: "e2e_keras_counting_models:make"
  kwargs: {{log: "{log}"}}
dataset: {{type: digits, batch_size: 16}}
training:
  epochs: 2
  optimizer: {{type: sgd, lr: 0.1, momentum: 0.9}}
  metrics: [accuracy]
  steps_per_epoch: {steps}
  validation_steps: 2
  train_metrics: true
  checkpoint_every: never
scaling: {{num_workers: 2}}
"""


@pytest.mark.parametrize("steps", [4])  # a multiple of num_workers (E207 otherwise)
def test_keras_steps_per_epoch_bound_each_workers_steps(tmp_path, spec_file, factory_module, local_ray, steps):
    factory_module("keras_counting_models.py", "e2e_keras_counting_models")
    log = tmp_path / "steps.log"
    spec = spec_file(KERAS_SPEC.format(log=log, steps=steps))

    result = run_spec(spec, storage_path=tmp_path / "runs", quiet=True)

    calls = [line.split() for line in log.read_text(encoding="utf-8").splitlines()]  # kind, pid, epoch
    per_worker_epoch = Counter(tuple(call) for call in calls)
    pids = {pid for _kind, pid, _epoch in calls}
    assert len(pids) == 2  # both Ray Train workers
    expected = {(kind, pid, epoch): n for pid in pids for epoch in "01" for kind, n in (("train", steps), ("eval", 2))}
    assert per_worker_epoch == expected
    header, _rows = read_results(result.run_dir)
    # torch's names
    assert header == ["epoch", "train_loss", "train_accuracy", "val_loss", "val_accuracy", "num_parameters"]


ASHA_SPEC = """\
specc: 1
name: train-accuracy-asha
framework: torch
model: {type: mlp, hidden_sizes: [32]}
dataset: {type: digits, batch_size: 32}
training:
  epochs: 4
  optimizer: {type: sgd, lr: 0.05, momentum: 0.9}
  metrics: [accuracy]
  steps_per_epoch: 10
  train_metrics: true
  checkpoint_every: never
scaling: {num_workers: 1}
tune:
  metric: train_accuracy
  mode: max
  num_samples: 1
  max_concurrent_trials: 2
  space:
    training.optimizer.lr: {grid: [0.1, 0.05, 1.0e-6, 1.0e-6]}
scheduler: {type: asha, grace_period: 1, reduction_factor: 2}
"""


def test_train_accuracy_drives_asha(tmp_path, spec_file, local_ray):
    import csv
    import json

    spec = spec_file(ASHA_SPEC)
    result = run_spec(spec, storage_path=tmp_path / "runs", quiet=True)

    with open(f"{result.run_dir}/results.csv", newline="", encoding="utf-8") as handle:
        trials = list(csv.DictReader(handle))
    histories = {}
    for trial in trials:
        lines = (tmp_path / "runs" / "train-accuracy-asha" / f"trial_{trial['trial_id']}" / "result.json").read_text()
        histories[trial["trial_id"]] = [json.loads(line) for line in lines.splitlines() if line.strip()]
    lr = {trial["trial_id"]: float(trial["training.optimizer.lr"]) for trial in trials}
    assert all("train_accuracy" in epoch for history in histories.values() for epoch in history)
    # The two untrainable trials (lr 1e-6) start after the two good ones recorded their rungs: ASHA, comparing
    # train_accuracy, stops them before the last epoch; only good ones run all 4.
    finished = [t for t, history in histories.items() if len(history) == 4]
    assert finished and all(lr[t] > 1e-3 for t in finished)
    assert all(len(histories[t]) < 4 for t in lr if lr[t] < 1e-3)
    assert read_best(result.run_dir)["metrics"]["train_accuracy"] == max(
        history[-1]["train_accuracy"] for history in histories.values()
    )
