"""run.callbacks in the compiled scripts (issue 7): which of Ray's logger callbacks a search hands Tune, the
UserCallback a training run gets, and a tracker whose package is missing as a located problem (a warning from
validate, an error before a run). The runs themselves are in tests/e2e/test_tracking.py."""

from __future__ import annotations

import importlib.util
import json
import os
import types
from pathlib import Path

import pyarrow.fs
import pytest

from specc import api
from specc.execute.run import run
from specc.spec.errors import SpecError
from tests.conftest import located

TRAIN = """\
specc: 1
name: tracked
framework: {framework}
model: {{type: mlp, hidden_sizes: [8]}}
dataset: {{type: iris}}
training: {{epochs: 3}}
scaling: {{num_workers: {workers}}}
run:
  callbacks: {callbacks}
"""
SEARCH = """\
specc: 1
name: searched
framework: torch
model: {{type: mlp, hidden_sizes: [8]}}
dataset: {{type: iris}}
training: {{epochs: 3}}
scaling: {{num_workers: 1}}
tune:
  metric: val_loss
  mode: min
  num_samples: 2
  space: {{training.optimizer.lr: {{loguniform: [0.001, 0.1]}}}}
run: {{callbacks: {callbacks}}}
"""


def source(write_spec, text: str) -> str:
    return api.compile(api.load(write_spec(text)))


@pytest.fixture
def without(monkeypatch):
    """without(*modules): find_spec answers None for them, as where they are not installed."""

    def hide(*modules):
        real = importlib.util.find_spec
        monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name in modules else real(name, *a))

    return hide


@pytest.fixture
def no_ray(monkeypatch):
    """A run that gets as far as starting Ray fails the test at once (instead of training into tmp_path)."""
    monkeypatch.setattr("specc.execute.run._start_ray", lambda *args, **kwargs: pytest.fail("Ray was started"))


@pytest.mark.parametrize(
    ("callbacks", "loggers"),
    [
        ("[]", ["KeptCsv", "KeptJson"]),
        ("[csv, json]", ["KeptCsv", "KeptJson"]),
        ("[tensorboard]", ["KeptCsv", "KeptJson", "TBXLoggerCallback"]),
        ("[mlflow, wandb]", ["KeptCsv", "KeptJson", "MLflowLoggerCallback", "WandbLogger"]),
    ],
)
def test_a_search_hands_tune_exactly_the_loggers_named(write_spec, callbacks, loggers, tmp_path, monkeypatch):
    """csv and json always (Ray's record of each trial, which the results are read from); the others only when
    named; Tune's own automatic loggers switched off so that nothing else writes."""
    monkeypatch.setenv("TUNE_DISABLE_AUTO_CALLBACK_LOGGERS", "0")  # trackers() sets it: restored afterwards
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    script = script_of(write_spec, SEARCH.format(callbacks=callbacks))
    run = script.specc_runtime.Run(script.__file__, "a search", ["--quiet"], script.RESOLVED_SPEC, script.RUN)
    run.run_dir = str(tmp_path / "run")
    run.show_trials()  # --quiet: the trackers alone
    assert [type(callback).__name__ for callback in run.callbacks] == loggers
    assert os.environ["TUNE_DISABLE_AUTO_CALLBACK_LOGGERS"] == "1"
    text = source(write_spec, SEARCH.format(callbacks=callbacks))
    assert "callbacks=run.callbacks," in text and "Tracking" not in text and "def trackers" not in text


@pytest.mark.parametrize("framework", ["torch", "tensorflow"])
def test_a_training_run_gets_a_ray_train_user_callback(write_spec, framework, tmp_path):
    text = source(write_spec, TRAIN.format(framework=framework, workers=2, callbacks="[csv, tensorboard]"))
    # specc_runtime.Run makes its Tracking the Trainer's callback, which Ray Train's controller calls
    assert '"callbacks": ["csv", "tensorboard"],' in text and "class Tracking" not in text
    assert "import tensorboardX" not in text and "import mlflow" not in text and "import wandb" not in text
    script = script_of(write_spec, TRAIN.format(framework=framework, workers=2, callbacks="[csv, tensorboard]"))
    run = script.specc_runtime.Run(script.__file__, "a run", ["--quiet"], script.RESOLVED_SPEC, script.RUN)
    run.run_dir = str(tmp_path / "run")
    run.show_epochs()  # --quiet: no progress lines, so Ray's queue for them is not needed here
    assert [type(callback).__name__ for callback in run.callbacks] == ["Tracking"]
    assert run.callbacks[0].failures_left == 0  # run.max_failures


def test_a_training_run_without_callbacks_has_no_tracking(write_spec):
    text = source(write_spec, TRAIN.format(framework="torch", workers=2, callbacks="[]"))
    assert "Tracking" not in text and "def trackers" not in text and '"callbacks":' not in text
    assert "run.callbacks)" in text  # the progress's callback only, which specc_runtime.Run adds


def test_local_mode_logs_from_report(write_spec, tmp_path):
    """Ray Train's local mode (num_workers: 0) calls no callbacks: the script reports each epoch through
    specc_runtime's report, which logs it to the in-process callbacks the run sets up."""
    text = source(write_spec, TRAIN.format(framework="torch", workers=0, callbacks="[json]"))
    assert "specc_runtime.report_torch(ray.train, metrics, history" in text
    script = script_of(write_spec, TRAIN.format(framework="torch", workers=0, callbacks="[json]"))
    run = script.specc_runtime.Run(script.__file__, "a run", [], script.RESOLVED_SPEC, script.RUN)
    run.run_dir = str(tmp_path / "run")
    run.show_epochs()
    callbacks = script.specc_runtime.IN_PROCESS_CALLBACKS
    assert [type(callback).__name__ for callback in callbacks] == ["Tracking", "EpochProgress"]
    run.__exit__(None, None, None)
    assert callbacks == []


def script_of(write_spec, text) -> types.ModuleType:
    spec = write_spec(text)
    script = types.ModuleType("compiled_tracking")
    script.__file__ = str(spec.parent / "script.py")
    exec(compile(api.compile(api.load(spec)), script.__file__, "exec"), script.__dict__)
    return script


def test_tracking_closes_its_mlflow_run_failed_when_retries_are_used_up(write_spec, tmp_path, monkeypatch):
    """After run.max_failures worker-group failures the next one ends the run: its MLflow run is FAILED, not
    left RUNNING; epochs logged before stay logged, in progress.csv and in MLflow."""
    import mlflow

    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    text = TRAIN.format(framework="torch", workers=1, callbacks="[csv, mlflow]").replace(
        "run:\n", "run:\n  max_failures: 1\n"
    )
    script = script_of(write_spec, text)
    run_dir = str(tmp_path / "run")
    assert (script.RUN["callbacks"], script.RUN["max_failures"]) == (["csv", "mlflow"], 1)
    tracking = script.specc_runtime.Tracking(["csv", "mlflow"], run_dir, script.CONFIG, "tracked", 1)
    tracking.after_report(None, [{"epoch": 1, "train_loss": 1.0, "val_loss": 0.9}], None)
    tracking.after_exception(None, {0: RuntimeError("worker died")})  # retried: the run goes on
    tracking.after_report(None, [{"epoch": 2, "train_loss": 0.8, "val_loss": 0.7}], None)
    client = mlflow.MlflowClient(script.specc_runtime.mlflow_uri(run_dir))
    (found,) = client.search_runs([client.get_experiment_by_name("tracked").experiment_id])
    assert found.info.status == "RUNNING"
    tracking.after_exception(None, {0: RuntimeError("worker died again")})  # no retries left

    found = client.get_run(found.info.run_id)
    assert found.info.status == "FAILED"
    assert [(m.step, m.value) for m in client.get_metric_history(found.info.run_id, "val_loss")] == [(1, 0.9), (2, 0.7)]
    assert found.data.params["training.epochs"] == "3"
    with open(f"{run_dir}/progress.csv", encoding="utf-8") as f:
        assert f.read().splitlines() == ["epoch,train_loss,val_loss", "1,1.0,0.9", "2,0.8,0.7"]


class Trial:
    """What Ray Tune's logger callbacks use of a trial: the files it writes on the driver (`local_path`), the
    trial's directory in the run directory, and its checkpoint (Tune restores the files only for a trial that
    has one)."""

    def __init__(self, local_path, stored):
        self.local_path, self.config, self.checkpoint = str(local_path), {"lr": 0.01}, object()
        self.storage = types.SimpleNamespace(trial_fs_path=str(stored), storage_filesystem=pyarrow.fs.LocalFileSystem())

    def init_local_path(self):
        os.makedirs(self.local_path, exist_ok=True)


def test_a_retried_trial_keeps_the_epochs_logged_before_its_failure(write_spec, tmp_path, monkeypatch):
    """Tune restarts a failed trial (run.max_failures) with its files copied back from the run directory, which it
    updates in the background: the copy there may lack the last epoch. The loggers keep what they wrote (Ray's own
    would lose epoch 2 here), and a resumed run, which has written nothing yet, starts from the run directory's."""
    monkeypatch.setenv("TUNE_DISABLE_AUTO_CALLBACK_LOGGERS", "0")  # trackers() sets it: restored afterwards
    script = script_of(write_spec, SEARCH.format(callbacks="[]"))
    stored = tmp_path / "run" / "trial_0"
    stored.mkdir(parents=True)
    (stored / "result.json").write_text('{"epoch": 1}\n', encoding="utf-8")  # a resumed run's epoch 1
    (stored / "progress.csv").write_text("epoch\n1\n", encoding="utf-8")
    trial = Trial(tmp_path / "driver" / "trial_0", stored)
    loggers = script.specc_runtime.trackers(script.RUN.get("callbacks", []), str(tmp_path / "run"), "searched")

    for logger in loggers:
        logger.on_trial_start(0, [trial], trial)  # resumed: the run directory's epochs are taken
        logger.on_trial_result(1, [trial], trial, {"epoch": 2})
        logger.on_trial_recover(2, [trial], trial)  # failed; Tune's background copy has not caught up
        logger.on_trial_start(3, [trial], trial)  # retried
        logger.on_trial_result(4, [trial], trial, {"epoch": 3})
        logger.on_trial_complete(5, [trial], trial)

    written = Path(trial.local_path)
    lines = (written / "result.json").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["epoch"] for line in lines] == [1, 2, 3]
    assert (written / "progress.csv").read_text(encoding="utf-8").splitlines() == ["epoch", "1", "2", "3"]


def test_a_missing_tracker_package_is_a_located_warning_from_validate(write_spec, without):
    without("mlflow", "wandb")
    spec = write_spec(TRAIN.format(framework="torch", workers=1, callbacks="\n    - csv\n    - mlflow\n    - wandb"))
    problems = api.validate([spec])
    assert located(problems) == [("W302", 11, 7, "run.callbacks.1"), ("W302", 12, 7, "run.callbacks.2")]
    assert problems[0].severity == "warning"
    assert problems[0].message == "callback mlflow needs the mlflow package, which is not installed here"
    assert [p.hint for p in problems] == ["pip install 'specc[mlflow]'", "pip install 'specc[wandb]'"]


def test_a_missing_tracker_package_stops_a_run_before_ray_starts(write_spec, without, tmp_path, no_ray):
    without("tensorboardX")
    experiment = api.load(write_spec(TRAIN.format(framework="torch", workers=1, callbacks="[json, tensorboard]")))
    with pytest.raises(SpecError) as raised:
        run(experiment, storage_path=str(tmp_path / "runs"))
    assert located(raised.value.problems) == [("E401", 9, 21, "run.callbacks.1")]
    assert raised.value.problems[0].hint == "pip install 'specc[run]'"


def test_the_validate_cli_warns_and_still_passes(write_spec, without, capsys):
    from specc.cli import main

    without("wandb")
    spec = write_spec(TRAIN.format(framework="torch", workers=1, callbacks="[wandb]"))
    assert main(["validate", str(spec), "--format", "json"]) == 0
    (problem,) = json.loads(capsys.readouterr().out)
    assert (problem["code"], problem["line"], problem["column"]) == ("W302", 9, 15)


def test_a_uri_storage_path_is_refused_before_a_training_run_writes_local_files(write_spec, monkeypatch):
    """Tune moves a search's logger files to a URI storage_path itself; a Ray Train run's tracker writes plain
    files, so it says so up front instead of failing in Ray's controller at the first epoch."""
    script = script_of(write_spec, TRAIN.format(framework="torch", workers=1, callbacks="[json, mlflow]"))
    runtime = script.specc_runtime
    with pytest.raises(SystemExit, match=r"local or mounted path, not s3://bucket/runs/tracked$"):
        runtime.Tracking(script.RUN["callbacks"], "s3://bucket/runs/tracked", script.CONFIG, "tracked")
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    with pytest.raises(SystemExit, match="set MLFLOW_TRACKING_URI"):
        runtime.mlflow_uri("s3://bucket/runs/tracked")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "http://mlflow.internal:5000")
    assert runtime.mlflow_uri("s3://bucket/runs/tracked") == "http://mlflow.internal:5000"
    assert runtime.mlflow_uri("/runs/tracked") == "http://mlflow.internal:5000"


def test_remote_trackers_alone_take_a_uri_storage_path(write_spec, monkeypatch):
    script = script_of(write_spec, TRAIN.format(framework="torch", workers=1, callbacks="[wandb]"))
    runtime, names = script.specc_runtime, script.RUN["callbacks"]
    assert runtime.Tracking(names, "s3://bucket/runs/tracked", script.CONFIG, "tracked").run_dir.startswith("s3://")
    monkeypatch.delenv("WANDB_MODE", raising=False)
    assert runtime.wandb_options("s3://bucket/runs/tracked") == {"mode": "offline", "dir": None}  # wandb's ./wandb
    monkeypatch.setenv("WANDB_MODE", "online")  # the user's choice stands
    assert runtime.wandb_options("/runs/tracked") == {"mode": "online", "dir": "/runs/tracked"}


def test_a_missing_searcher_package_is_located_like_a_trackers(write_spec, without, tmp_path, no_ray):
    """tune.search.type optuna|hyperopt|bayesopt needs its extra: the same warning from validate, and the same
    error before a run, at the search type."""
    without("optuna")
    spec = write_spec(SEARCH.format(callbacks="[]").replace("  space:", "  search: {type: optuna}\n  space:"))
    (warning,) = api.validate([spec])
    assert (warning.code, warning.path, warning.hint) == ("W302", "tune.search.type", "pip install 'specc[optuna]'")
    assert (warning.line, warning.column) == (12, 18)
    assert warning.message == "search type optuna needs the optuna package, which is not installed here"
    with pytest.raises(SpecError) as raised:
        run(api.load(spec), storage_path=str(tmp_path / "runs"))
    assert located(raised.value.problems) == [("E401", 12, 18, "tune.search.type")]
