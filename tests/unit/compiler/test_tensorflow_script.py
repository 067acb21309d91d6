"""The tensorflow scripts: what each shape and setting generates, and their pure functions called directly
(data sharing between workers, the per-epoch learning rate against torch's own schedulers). No Ray started."""

from __future__ import annotations

import types

import numpy as np
import pytest

from specc import api
from specc.compiler.keras_fragments import METRICS
from tests.conftest import ROOT

SPEC = """\
specc: 1
name: tiny-tf
framework: tensorflow
model: {type: mlp, hidden_sizes: [16]}
dataset: {type: digits, batch_size: 32}
training: {epochs: 12, optimizer: {type: sgd, lr: 0.1, momentum: 0.9}}
scaling: {num_workers: 2}
"""
SEARCH = """\
tune:
  metric: val_accuracy
  mode: max
  num_samples: 2
  space: {training.optimizer.lr: {loguniform: [1.0e-3, 0.1]}}
"""


def source_of(write_spec, text: str, *overrides: str) -> str:
    return api.compile(api.load(write_spec(text), list(overrides)))


def script_of(write_spec, text: str, *overrides: str) -> types.ModuleType:
    source = source_of(write_spec, text, *overrides)
    script = types.ModuleType("compiled_tf")
    script.__file__ = str(ROOT / "build" / "compiled_tf.py")
    exec(compile(source, script.__file__, "exec"), script.__dict__)
    return script


def test_each_shape_uses_its_session_and_strategy(write_spec):
    train = source_of(write_spec, SPEC)
    assert "ray.train.tensorflow.TensorflowTrainer(" in train and "tf.distribute.MultiWorkerMirroredStrategy()" in train
    assert "specc_runtime.report(ray.train, metrics, checkpoint)" in train and "from ray import tune" not in train
    assert "ray.train.tensorflow.prepare_dataset_shard(dataset)" in train
    lean = source_of(write_spec, SPEC + SEARCH, "scaling.num_workers=1")
    assert "TensorflowTrainer" not in lean and "MultiWorkerMirroredStrategy" not in lean
    assert "specc_runtime.report(tune, metrics, checkpoint)" in lean and "tune.get_checkpoint()" in lean
    assert "tf.distribute.get_strategy()" in lean and "prepare_dataset_shard" not in lean
    per_trial = source_of(write_spec, SPEC + SEARCH)
    assert "callbacks=callbacks,  # each report goes on to the Tune trial (ReportToTrial)" in per_trial
    assert "ray.train.tensorflow.TensorflowTrainer(" in per_trial


def test_gpu_paths_are_generated_as_ray_and_tensorflow_document_them(write_spec):
    cpu = source_of(write_spec, SPEC)
    assert "NCCL" not in cpu and "mixed_float16" not in cpu
    gpu = source_of(write_spec, SPEC, "scaling.use_gpu=true", "training.mixed_precision=true")
    assert "implementation=tf.distribute.experimental.CommunicationImplementation.NCCL" in gpu
    assert 'keras.mixed_precision.set_global_policy("mixed_float16")' in gpu
    assert 'keras.layers.Dense(num_outputs, dtype="float32")' in gpu  # float32 logits under mixed precision


def test_every_job_process_gets_tf_keras_as_tf_keras(write_spec):
    source = source_of(write_spec, SPEC + "cluster: {runtime_env: {env_vars: {A: b}}}\n")
    assert 'RUNTIME_ENV = {"env_vars": {"TF_USE_LEGACY_KERAS": "1", "A": "b"}}' in source
    own = source_of(write_spec, SPEC + "cluster: {runtime_env: {env_vars: {TF_USE_LEGACY_KERAS: '0'}}}\n")
    assert 'RUNTIME_ENV = {"env_vars": {"TF_USE_LEGACY_KERAS": "0"}}' in own  # the spec's own value wins


@pytest.mark.parametrize("metric", sorted(METRICS))
def test_keras_metrics_are_named_as_the_reports_name_them(metric):
    """Keras reports validation metrics as val_<name>: each name= is the spec's metric name."""
    assert f'name="{"accuracy" if metric == "binary_accuracy" else metric}"' in METRICS[metric]


def test_torch_and_tensorflow_scripts_report_the_same_names(write_spec):
    for extra in ("", "training.metrics=[accuracy, top5_accuracy]"):
        overrides = [extra] if extra else []
        tf_plan = api.load(write_spec(SPEC), overrides).reported_metrics()
        torch_plan = api.load(write_spec(SPEC.replace("tensorflow", "torch")), overrides).reported_metrics()
        assert tf_plan == torch_plan


def test_every_worker_gets_as_many_rows_and_all_rows_are_used(write_spec):
    script = script_of(write_spec, SPEC)
    for count, world in ((10, 3), (1437, 2), (7, 7), (5, 1)):
        shares = [script.share(count, rank, world) for rank in range(world)]
        assert len({len(rows) for rows in shares}) == 1
        assert set(np.concatenate(shares)) == set(range(count))


def test_batches_reshuffle_per_epoch_and_a_resumed_run_sees_the_same_order(write_spec):
    script = script_of(write_spec, SPEC)
    x, y = np.arange(20, dtype=np.float32).reshape(-1, 1), np.arange(20)
    rows = script.share(20, 0, 2)

    def epochs(first, count):
        dataset = script.tf_batches(x, y, rows, 4, None, seed=3, first_epoch=first)
        return [[int(v) for batch, _ in dataset for v in batch.numpy().ravel()] for _ in range(count)]

    fresh = epochs(0, 3)
    assert all(sorted(order) == list(range(0, 20, 2)) for order in fresh)
    assert fresh[0] != fresh[1] != fresh[2]
    assert epochs(2, 1) == fresh[2:]  # resumed at epoch 2: epoch 2's order
    assert epochs(0, 1) == fresh[:1]  # the same seed gives the same order


@pytest.mark.parametrize(
    ("schedule", "torch_scheduler"),
    [
        ("{type: step, step_size: 3, gamma: 0.5}", "StepLR(optimizer, step_size=3, gamma=0.5)"),
        (
            "{type: multistep, milestones: [2, 5, 9], gamma: 0.3}",
            "MultiStepLR(optimizer, milestones=[2, 5, 9], gamma=0.3)",
        ),
        ("{type: cosine, t_max: 12, eta_min: 0.001}", "CosineAnnealingLR(optimizer, T_max=12, eta_min=0.001)"),
        ("{type: exponential, gamma: 0.8}", "ExponentialLR(optimizer, gamma=0.8)"),
    ],
)
def test_learning_rate_per_epoch_matches_torchs_scheduler(write_spec, schedule, torch_scheduler):
    import torch

    script = script_of(write_spec, SPEC.replace("training: {", f"training: {{lr_schedule: {schedule}, "))
    training = script.CONFIG["training"]
    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.1)
    scheduler = eval(f"torch.optim.lr_scheduler.{torch_scheduler}")
    for epoch in range(training["epochs"]):
        expected = optimizer.param_groups[0]["lr"]
        assert script.learning_rate(epoch, 0.1, training["lr_schedule"]) == pytest.approx(expected, rel=1e-9), epoch
        optimizer.step()
        scheduler.step()
