"""Compiled scripts carry only what the spec uses (SPEC §11), also in the shapes no example spec compiles to:
a search whose trials each drive a Trainer, and --smoke's changes to the workers."""

from __future__ import annotations

import types

import pytest
import specc_runtime

from specc import api
from tests.conftest import MINIMAL, ROOT


def compiled(spec: str, *overrides: str) -> str:
    return api.compile(api.load(ROOT / spec, list(overrides)))


def module_of(source: str) -> types.ModuleType:
    module = types.ModuleType("lean_script")
    module.__file__ = str(ROOT / "build" / "lean_script.py")
    exec(compile(source, module.__file__, "exec"), module.__dict__)
    return module


def test_trials_that_drive_a_trainer_pass_it_nothing_unused():
    source = compiled("specs/digits_asha.yaml", "scaling.num_workers=2")
    assert "def make_trainer(config, scaling, name, storage_path, callbacks):" in source
    assert "trainer = make_trainer(config, scaling, name, storage_path, [relay])" in source
    assert "callbacks=callbacks,  # each report goes on to the Tune trial (ReportToTrial)" in source
    assert "failure_config=ray.train.FailureConfig" not in source  # Tune retries the trial, not Train
    for unused in ("scaler.", "datasets=", ", datasets", "WORKING_DIR", "SPEC_DIR_SHIPPED"):  # nothing shipped
        assert unused not in source, unused


def test_trials_that_drive_a_trainer_over_ray_data_pass_the_datasets():
    source = compiled("specs/digits_ray_data.yaml", "tune={metric: val_accuracy, mode: max}")
    assert "def run_trial(sample, config, scaling, storage_path, datasets):" in source
    assert "make_trainer(config, scaling, name, storage_path, datasets, [relay])" in source
    assert "datasets=datasets" in source


def test_a_search_retries_its_trials_only_when_asked():
    assert "tune.FailureConfig" not in compiled("specs/digits_asha.yaml", "run.max_failures=0")
    assert "tune.FailureConfig(max_failures=2)" in compiled("specs/digits_asha.yaml")  # run.max_failures: 2


class Built(Exception):
    """main() got as far as building its Trainer."""


def trainer_of(source: str, tmp_path, monkeypatch, *argv: str, **resources: float) -> dict:
    """What main() builds its Trainer with (config, scaling, the rest of make_trainer's arguments) and what Ray
    Train's local mode would hand each epoch to (IN_PROCESS_CALLBACKS): main() runs in this process up to that point,
    --quiet, its run directory claimed and written in tmp_path as a real run's, with Ray's start and its cluster
    (`resources`; 8 CPUs unless given) stood in for."""
    path = tmp_path / "lean_script.py"
    tmp_path.mkdir(parents=True, exist_ok=True)
    path.write_text(source, encoding="utf-8")  # a run keeps the file it runs
    module = types.ModuleType("lean_script")
    module.__file__ = str(path)
    exec(compile(source, module.__file__, "exec"), module.__dict__)

    def make_trainer(config, scaling, *rest):
        in_process = [type(callback).__name__ for callback in specc_runtime.IN_PROCESS_CALLBACKS]
        raise Built({"config": config, "scaling": scaling, "rest": rest, "in_process": in_process})

    module.make_trainer = make_trainer
    monkeypatch.setattr(specc_runtime, "start_ray", lambda *args: False)
    monkeypatch.setattr(specc_runtime.ray, "cluster_resources", lambda: dict(resources or {"CPU": 8.0}))
    with pytest.raises(Built) as built:
        module.main(["--quiet", "--storage-path", str(tmp_path / "runs"), *argv])
    assert specc_runtime.IN_PROCESS_CALLBACKS == []  # emptied when the run ends
    return built.value.args[0]


def test_local_mode_hands_the_trainer_no_callbacks_it_would_never_call(tmp_path, monkeypatch):
    """Ray Train's local mode calls no callbacks: run.callbacks' tracker gets each epoch from report() instead."""
    source = compiled("specs/iris_local.yaml", "run.callbacks=[csv]")
    assert "callbacks=" not in source
    built = trainer_of(source, tmp_path, monkeypatch)
    assert len(built["rest"]) == 2  # name and storage_path: no callbacks
    assert built["in_process"] == ["Tracking"]  # --quiet: no progress lines


@pytest.mark.parametrize(
    ("workers", "gpu", "smoke_scaling"),
    [(2, False, {"num_workers": 2, "use_gpu": False}), (4, False, {"num_workers": 2, "use_gpu": False}),
     (4, True, {"num_workers": 2, "use_gpu": False}), (1, True, {"num_workers": 1, "use_gpu": False})],
)  # fmt: skip
def test_smoke_runs_at_most_two_workers_on_cpu(tmp_path, monkeypatch, workers, gpu, smoke_scaling):
    source = compiled("specs/digits_mlp.yaml", f"scaling.num_workers={workers}", f"scaling.use_gpu={str(gpu).lower()}")
    smoke = trainer_of(source, tmp_path / "smoke", monkeypatch, "--smoke", CPU=8.0)
    assert {name: smoke["scaling"][name] for name in smoke_scaling} == smoke_scaling
    assert smoke["config"]["training"]["epochs"] == 1 and smoke["config"]["training"]["max_batches"] == 3
    full = trainer_of(source, tmp_path / "full", monkeypatch, CPU=8.0, GPU=8.0)
    assert (full["scaling"]["num_workers"], full["scaling"]["use_gpu"]) == (workers, gpu)
    assert full["config"]["training"]["epochs"] == 5 and "max_batches" not in full["config"]["training"]


def test_gradients_are_clipped_only_where_the_spec_or_its_search_says_so():
    assert "global_clipnorm" not in compiled("specs/digits_tf_cnn.yaml")
    assert "global_clipnorm=clip_norm" in compiled("specs/digits_tf_cnn.yaml", "training.grad_clip_norm=1.0")
    torch = compiled("specs/digits_mlp.yaml", "training.grad_clip_norm=1.0")
    assert 'nn.utils.clip_grad_norm_(model.parameters(), training["grad_clip_norm"])' in torch
    assert 'if training["grad_clip_norm"] is not None' not in torch


@pytest.mark.parametrize("framework", ["torch", "tensorflow"])
def test_a_searched_clip_norm_reaches_the_trials_even_when_the_spec_sets_none(write_spec, framework):
    """training.grad_clip_norm in tune.space: each trial clips with its own value (null: not at all)."""
    spec = write_spec(
        MINIMAL.replace("framework: torch", f"framework: {framework}")
        + "tune:\n  metric: val_accuracy\n  mode: max\n  space:\n    training.grad_clip_norm: {choice: [null, 0.5]}\n"
    )
    source = api.compile(api.load(spec))
    if framework == "tensorflow":
        assert 'make_optimizer(training["optimizer"], training["grad_clip_norm"])' in source
    else:
        assert 'if training["grad_clip_norm"] is not None:  # the trial\'s value' in source


def test_a_script_carries_cluster_init_timeout_s_only_when_the_spec_changes_it():
    assert '"init_timeout_s"' not in compiled("specs/digits_mlp.yaml")
    for spec in ("specs/digits_mlp.yaml", "specs/digits_asha.yaml", "specs/objective_optuna.yaml"):
        source = compiled(spec, "cluster.init_timeout_s=15")
        assert '    "init_timeout_s": 15,  # cluster.init_timeout_s' in source
        assert module_of(source).RUN["init_timeout_s"] == 15
