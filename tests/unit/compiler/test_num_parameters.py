"""num_parameters (SPEC §12): every model run reports the model's trainable parameters with each epoch, so that
Tune's last result holds it (tune.metric, stop rules, results.csv); the console shows it once, not on every epoch
line (tests/unit/runtime/test_progress.py). The scripts' own functions run on real torch and TensorFlow with Ray's
session replaced by a recorder: no Ray is started here (tests/e2e/test_num_parameters.py runs them on a real Ray)."""

from __future__ import annotations

import types

import pytest
import specc_runtime

from specc import api
from tests.unit.compiler.test_diverged import Session, script_of

SPEC = """\
specc: 1
name: sized
framework: {framework}
model: {model}
dataset: {{type: digits, batch_size: 16}}
training: {{epochs: 2, steps_per_epoch: 2, validation_steps: 1}}
scaling: {{num_workers: 1}}
tune: {{metric: num_parameters, mode: min, num_samples: 1, space: {{training.seed: {{grid: [0]}}}}}}
stop: {{when: ["num_parameters < 100000"]}}
"""
MLP = "{type: mlp, hidden_sizes: [16]}"
BY_HAND = 64 * 16 + 16 + 16 * 10 + 10  # digits: 64 inputs, 10 classes


def test_a_search_may_rank_and_stop_by_num_parameters(write_spec):
    report = api.check_file(write_spec(SPEC.format(framework="torch", model=MLP)))
    assert report.problems == []
    assert api.load(write_spec(SPEC.format(framework="torch", model=MLP))).reported_metrics()[-1] == "num_parameters"


def test_torch_reports_the_trainable_parameters_with_every_epoch(write_spec):
    pytest.importorskip("torch")
    script = script_of(write_spec, SPEC.format(framework="torch", model=MLP))  # lean: one process
    script.tune, script.ray = Session(), types.SimpleNamespace(get_gpu_ids=lambda: [])
    script.train_func(script.CONFIG)
    assert [metrics["num_parameters"] for metrics, _ in script.tune.reports] == [BY_HAND, BY_HAND]
    assert [list(metrics) for metrics, _ in script.tune.reports] == [script.REPORTED] * 2


def test_keras_reports_the_trainable_parameters_only(write_spec):
    pytest.importorskip("tensorflow")
    model = "{type: mlp, hidden_sizes: [16], batch_norm: true}"  # moving mean and variance: not trainable
    script = script_of(write_spec, SPEC.format(framework="tensorflow", model=model))
    script.tune = Session()
    callback = script.ReportEpoch([], script.CONFIG["training"], 0)
    callback.set_model(script.build_model(script.CONFIG["model"], [1, 8, 8], 10))
    callback.on_epoch_end(0, {"loss": 2.0, "val_loss": 2.1, "val_accuracy": 0.3})
    ((metrics, _saved),) = script.tune.reports
    assert metrics["num_parameters"] == BY_HAND + 2 * 16  # gamma and beta
    assert callback.model.count_params() == BY_HAND + 4 * 16  # what Keras' own count would have said
    assert list(metrics) == script.REPORTED


@pytest.mark.parametrize(
    "model",
    [
        "{type: mlp, hidden_sizes: [32, 16], batch_norm: true, dropout: 0.1}",
        "{type: cnn, channels: [4, 8], kernel_size: 3, hidden_sizes: [16]}",
        "{type: cnn, channels: [4], kernel_size: 3, hidden_sizes: [], padding: valid, pool: null, batch_norm: true}",
    ],
    ids=["mlp with batch norm", "cnn", "cnn valid unpooled batch norm"],
)
def test_torch_and_keras_count_the_same_parameters_for_a_built_in_model(write_spec, model):
    torch = pytest.importorskip("torch")
    pytest.importorskip("tensorflow")
    torch_script = script_of(write_spec, SPEC.format(framework="torch", model=model))
    keras_script = script_of(write_spec, SPEC.format(framework="tensorflow", model=model))
    built = torch_script.build_model(torch_script.CONFIG["model"], [1, 8, 8], 10)
    torch_count = sum(p.numel() for p in built.parameters() if p.requires_grad)
    assert isinstance(built, torch.nn.Module) and torch_count > 0
    script = keras_script
    script.tune = Session()
    callback = script.ReportEpoch([], script.CONFIG["training"], 0)
    callback.set_model(script.build_model(script.CONFIG["model"], [8, 8, 1], 10))  # Keras: channels last
    callback.on_epoch_end(0, {"loss": 2.0, "val_loss": 2.1, "val_accuracy": 0.3})
    ((metrics, _saved),) = script.tune.reports
    assert metrics["num_parameters"] == torch_count


def test_a_torch_model_with_lazy_layers_is_counted_once_they_exist(write_spec):
    torch = pytest.importorskip("torch")
    script = script_of(write_spec, SPEC.format(framework="torch", model=MLP))
    script.tune, script.ray = Session(), types.SimpleNamespace(get_gpu_ids=lambda: [])
    script.build_model = lambda cfg, shape, outputs: torch.nn.Sequential(torch.nn.Flatten(), torch.nn.LazyLinear(10))
    script.train_func(script.CONFIG)
    assert [metrics["num_parameters"] for metrics, _ in script.tune.reports] == [64 * 10 + 10] * 2


@pytest.mark.parametrize("workers", [1, 2], ids=["tune lean", "tune driving trainers"])
def test_ranking_by_num_parameters_keeps_and_picks_the_latest_checkpoints(write_spec, tmp_path, workers):
    """num_parameters is the same at every epoch of a trial: ranking its checkpoints or epochs by it would keep and
    pick arbitrary (the first) ones; the latest are kept and the last epoch is the trial's best."""
    pandas = pytest.importorskip("pandas")
    spec = SPEC.format(framework="torch", model=MLP).replace("num_workers: 1", f"num_workers: {workers}")
    source = api.compile(api.load(write_spec(spec)))
    assert "checkpoint_score_attribute" not in source  # Tune keeps a trial's latest checkpoints
    ranked = api.compile(
        api.load(write_spec(spec.replace("metric: num_parameters, mode: min", "metric: val_loss, mode: min")))
    )
    assert 'checkpoint_score_attribute="val_loss"' in ranked or "checkpoint_score_attribute='val_loss'" in ranked
    script = script_of(write_spec, spec)
    history = pandas.DataFrame(
        {
            "epoch": [1, 2, 3],
            "training_iteration": [1, 2, 3],
            "val_loss": [2.0, 1.0, 1.5],
            "num_parameters": [BY_HAND] * 3,
            **({"checkpoint_path": ["/c/1", None, "/c/3"]} if workers == 2 else {}),  # the Train runs' checkpoints
        }
    )
    checkpoints = [(types.SimpleNamespace(path=f"/c/{n}"), {"num_parameters": BY_HAND}) for n in (1, 2, 3)]
    trial = types.SimpleNamespace(
        path="/runs/sized/trial_a",
        config={"training.seed": 0},
        metrics=history.iloc[-1].to_dict(),
        metrics_dataframe=history,
        error=None,
        best_checkpoints=checkpoints,  # ranked by num_parameters, all equal: the first would be picked
        checkpoint=types.SimpleNamespace(path="/c/3"),
    )
    summary, _ = specc_runtime.write_search_results(
        str(tmp_path), [trial], script.CONFIG, script.RUN["search"], script.RESOLVED_SPEC
    )
    assert (summary["metrics"]["epoch"], summary["checkpoint"]) == (3, "/c/3")  # the last epoch, the latest
