"""SPEC §12's training additions in the compiled torch and tensorflow code: steps_per_epoch and validation_steps
bound the batches an epoch reads (and compose with --smoke's few), train_metrics reports train_<metric>,
checkpoint_every: never writes no checkpoint and refuses --resume. The scripts' own functions run on real torch
(and TensorFlow) with Ray's session replaced by a recorder: no Ray is started."""

from __future__ import annotations

import os
import re
import types

import pytest
import specc_runtime

from specc import api
from tests.unit.compiler.test_diverged import Session, script_of

SPEC = """\
specc: 1
name: partial
framework: {framework}
model: {{type: mlp, hidden_sizes: [16]}}
dataset: {{type: digits, batch_size: 16}}
training: {{epochs: 2, metrics: [accuracy, top5_accuracy]{training}}}
scaling: {{num_workers: 1}}
"""
TUNE = "tune: {metric: val_accuracy, mode: max, num_samples: 1, space: {training.seed: {grid: [0]}}}\n"


class Counted:
    """Batches of (x, y) that count how many were read."""

    def __init__(self, count, torch):
        self.read = 0
        generator = torch.Generator().manual_seed(0)
        self.batches = [(torch.randn(8, 64, generator=generator), torch.arange(8) % 10) for _ in range(count)]

    def __iter__(self):
        for batch in self.batches:
            self.read += 1
            yield batch


def torch_parts(script, torch):
    model = script.build_model(script.CONFIG["model"], [64], 10)
    optimizer = script.make_optimizer(model.parameters(), script.CONFIG["training"]["optimizer"])
    return model, optimizer, torch.nn.CrossEntropyLoss(), torch.device("cpu")


@pytest.mark.parametrize(
    ("steps", "smoke", "read"),
    [(None, None, 20), (5, None, 5), (5, 3, 3), (2, 3, 2), (50, None, 20)],
    ids=["full pass", "steps_per_epoch 5", "smoke's 3 fewer", "steps_per_epoch 2 fewer than smoke's", "past the end"],
)
def test_torch_steps_per_epoch_bounds_the_training_batches(write_spec, steps, smoke, read):
    torch = pytest.importorskip("torch")
    training = ", steps_per_epoch: 7" if steps is None else f", steps_per_epoch: {steps}"
    script = script_of(write_spec, SPEC.format(framework="torch", training=training))
    model, optimizer, loss_fn, device = torch_parts(script, torch)
    config = {**script.CONFIG["training"], "steps_per_epoch": steps}
    if smoke:
        config["max_batches"] = smoke
    batches = Counted(20, torch)
    script.train_one_epoch(model, optimizer, loss_fn, batches, config, device)
    assert batches.read == read + (read < 20)  # reading stops at the first batch past the bound


def test_torch_validation_steps_bound_the_validation_batches_only(write_spec):
    torch = pytest.importorskip("torch")
    script = script_of(write_spec, SPEC.format(framework="torch", training=", validation_steps: 4"))
    model, _optimizer, loss_fn, device = torch_parts(script, torch)
    batches = Counted(20, torch)
    metrics = script.evaluate(model, loss_fn, batches, device, script.CONFIG["training"]["validation_steps"])
    assert batches.read == 5 and set(metrics) == {"val_loss", "val_accuracy", "val_top5_accuracy"}
    full = Counted(20, torch)
    script.evaluate(model, loss_fn, full, device, None)  # a searched validation_steps may be null: a full pass
    assert full.read == 20


def test_the_compiled_code_has_the_bounds_only_when_the_spec_sets_them(write_spec):
    plain = api.compile(api.load(write_spec(SPEC.format(framework="torch", training=""))))
    assert "steps_per_epoch" not in plain.split("CONFIG =")[0] and 'training["steps_per_epoch"]' not in plain
    assert 'training["validation_steps"]' not in plain and "train_accuracy" not in plain
    assert "specc_runtime.restore_torch(" in plain and "cannot be resumed" not in plain


def test_torch_train_metrics_report_train_metric_on_the_training_batches(write_spec):
    pytest.importorskip("torch")
    training = ", train_metrics: true, steps_per_epoch: 5"
    script = script_of(write_spec, SPEC.format(framework="torch", training=training) + TUNE)  # lean: one process
    script.tune, script.ray = Session(), types.SimpleNamespace(get_gpu_ids=lambda: [])
    script.train_func(script.CONFIG)
    names = [list(metrics) for metrics, _ in script.tune.reports]
    assert names == [script.REPORTED] * 2
    assert script.REPORTED == [
        "epoch",
        "train_loss",
        "train_accuracy",
        "train_top5_accuracy",
        "val_loss",
        "val_accuracy",
        "val_top5_accuracy",
        "num_parameters",
    ]
    for metrics, _ in script.tune.reports:
        assert 0 <= metrics["train_accuracy"] <= metrics["train_top5_accuracy"] <= 1


def test_torch_checkpoint_every_never_reports_without_checkpoints(write_spec):
    pytest.importorskip("torch")
    training = ", checkpoint_every: never, steps_per_epoch: 2"
    script = script_of(write_spec, SPEC.format(framework="torch", training=training) + TUNE)
    script.tune, script.ray = Session(), types.SimpleNamespace(get_gpu_ids=lambda: [])
    script.train_func(script.CONFIG)
    assert [(metrics["epoch"], saved) for metrics, saved in script.tune.reports] == [(1, False), (2, False)]
    assert not hasattr(script, "restore")


@pytest.mark.parametrize("framework", ["torch", "tensorflow"])
def test_resume_of_a_run_without_checkpoints_says_why_it_cannot(write_spec, tmp_path, monkeypatch, framework):
    """main() refuses before Ray starts (specc_runtime.Run's check of the run directory, given the script's refusal)."""
    for name in ("TF_USE_LEGACY_KERAS", "TF_CPP_MIN_LOG_LEVEL"):  # a TensorFlow run sets them: put back after
        monkeypatch.setenv(name, os.environ.get(name, "1" if name == "TF_USE_LEGACY_KERAS" else "2"))
    monkeypatch.setattr(specc_runtime, "start_ray", lambda *args: pytest.fail("Ray was started"))
    training = ", checkpoint_every: never"
    script = script_of(write_spec, SPEC.format(framework=framework, training=training))
    run_dir = tmp_path / "runs" / "partial"
    run_dir.mkdir(parents=True)
    (run_dir / "best.json").write_text('{"status": "completed"}')
    with pytest.raises(SystemExit) as refused:
        script.main(["--storage-path", str(tmp_path / "runs"), "--resume"])
    assert str(refused.value) == (
        f"{run_dir} cannot be resumed: training.checkpoint_every is never, so the run wrote no checkpoint to "
        "continue from; remove it (or pick another run.name) to start again"
    )


@pytest.mark.parametrize(("steps", "smoke", "batches"), [(5, None, 5), (None, None, 90), (5, 3, 3)])
def test_keras_steps_per_epoch_bound_each_epoch_to_a_new_pass(write_spec, steps, smoke, batches):
    pytest.importorskip("tensorflow")
    training = ", validation_steps: 2" + (f", steps_per_epoch: {steps}" if steps else "")
    script = script_of(write_spec, SPEC.format(framework="tensorflow", training=training) + TUNE)  # lean: one process
    config = {**script.CONFIG, "training": {**script.CONFIG["training"], **({"max_batches": smoke} if smoke else {})}}
    train, val, _shape, _outputs = script.make_loaders(config, 0, 1, 0)
    first, second = [y.numpy() for _x, y in train], [y.numpy() for _x, y in train]
    assert len(first) == len(second) == batches and all(len(y) == 16 for y in first[:-1])
    assert any((a != b).any() for a, b in zip(first, second, strict=True))  # each epoch: a new order
    assert len(list(val)) == min(2, smoke or 2)


def test_keras_reports_train_metrics_under_the_torch_names_and_no_checkpoint(write_spec):
    pytest.importorskip("tensorflow")
    training = ", train_metrics: true, checkpoint_every: never"
    script = script_of(write_spec, SPEC.format(framework="tensorflow", training=training) + TUNE)
    script.tune = Session()
    callback = script.ReportEpoch([])
    callback.model = types.SimpleNamespace(stop_training=False, trainable_weights=[])
    logs = {"loss": 2.0, "accuracy": 0.4, "top5_accuracy": 0.7, "val_loss": 2.1, "val_accuracy": 0.3}
    callback.on_epoch_end(0, {**logs, "val_top5_accuracy": 0.6})
    ((metrics, saved),) = script.tune.reports
    assert list(metrics) == script.REPORTED and not saved
    assert (metrics["train_accuracy"], metrics["train_top5_accuracy"]) == (0.4, 0.7)


class Shard:
    """Batches as a Ray Dataset shard's iter_tf_batches gives them (a stand-in for the data only)."""

    def __init__(self, rows, np):
        self.x, self.y = np.random.default_rng(0).normal(size=(rows, 4)).astype("float32"), np.arange(rows) % 2

    def iter_tf_batches(self, batch_size, local_shuffle_buffer_size=None):
        for start in range(0, len(self.y), batch_size):
            yield {"x": self.x[start : start + batch_size], "y": self.y[start : start + batch_size]}


@pytest.mark.parametrize(("epoch_rows", "max_batches", "rows"), [(48, None, 48), (None, None, 100), (48, 1, 32)])
def test_keras_ray_data_batches_stop_after_the_epochs_rows(write_spec, epoch_rows, max_batches, rows):
    np = pytest.importorskip("numpy")
    pytest.importorskip("tensorflow")
    spec = SPEC.format(framework="tensorflow", training=", steps_per_epoch: 3").replace(
        "dataset: {type: digits, batch_size: 16}", "dataset: {type: digits, batch_size: 16, loader: ray_data}"
    )
    script = script_of(write_spec, spec + TUNE)  # lean: the pipeline itself, no shard of this worker's
    batches = script.tf_batches(Shard(100, np), 32, max_batches, [4], shuffle_buffer=False, epoch_rows=epoch_rows)
    assert sum(len(y) for _x, y in batches) == rows


@pytest.mark.parametrize("framework", ["torch", "tensorflow"])
@pytest.mark.parametrize("training", ["", ", steps_per_epoch: 3"])
def test_ray_data_training_batches_pass_a_shuffle_buffer_only_when_the_data_set_shuffles(
    write_spec, framework, training
):
    """A table's rows come in their files' order: a shuffle buffer of four batches mixes them, unless
    dataset.shuffle is false (a partial epoch of Keras' too: it once buffered whatever the spec said)."""
    spec = SPEC.format(framework=framework, training=training)
    for shuffle, buffered in (("", "True"), (", shuffle: false", "False")):
        dataset = f"dataset: {{type: digits, batch_size: 16, loader: ray_data{shuffle}}}"
        source = api.compile(api.load(write_spec(spec.replace("dataset: {type: digits, batch_size: 16}", dataset))))
        call = r"\b(train|val),\s+(?:global_batch,\s+max_batches,\s+input_shape,\s+)?shuffle_buffer=(\w+)"
        passes = dict(re.findall(call, source))
        assert passes == {"train": buffered, "val": "False"}, (shuffle, passes)


@pytest.mark.parametrize("framework", ["torch", "tensorflow"])
@pytest.mark.parametrize("workers", [0, 1, 2], ids=["train local", "tune lean", "tune driving trainers"])
def test_without_checkpoints_no_checkpoint_config_is_written(write_spec, framework, workers):
    training = ", checkpoint_every: never"
    spec = SPEC.format(framework=framework, training=training).replace("num_workers: 1", f"num_workers: {workers}")
    source = api.compile(api.load(write_spec(spec + (TUNE if workers else ""))))
    assert "CheckpointConfig" not in source and "num_to_keep" not in source
    with_checkpoints = api.compile(api.load(write_spec(spec.replace(training, "") + (TUNE if workers else ""))))
    assert "CheckpointConfig(" in with_checkpoints and "num_to_keep=2" in with_checkpoints
