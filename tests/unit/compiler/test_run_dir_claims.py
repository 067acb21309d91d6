"""The compiled scripts' run directory, main() run in this process up to where Ray would start (no Ray is started):
a script claims its run directory before anything else, refuses one that holds a run needing --resume (a training
run's results or checkpoints, a search's reported trial) and one started from another spec. The rules themselves are
specc_runtime's (tests/unit/runtime/test_run_dir.py)."""

from __future__ import annotations

import types

import pytest
import specc_runtime

from specc import api

TRAIN = """\
specc: 1
name: claimed
framework: torch
model: {type: mlp, hidden_sizes: [8]}
dataset: {type: digits}
training: {epochs: 2}
"""
SEARCH = TRAIN + "tune: {metric: val_loss, mode: min, space: {training.optimizer.lr: {uniform: [0.01, 0.1]}}}\n"


class RayStarted(Exception):
    """Where the run would start Ray: every check before it passed."""


def script(spec_dir, text=TRAIN):
    """The compiled script of `text`, executed as a module (its imports only: main() is not called)."""
    spec = spec_dir / "spec.yaml"
    spec.write_text(text, encoding="utf-8")
    source = api.compile(api.load(spec))
    module = types.ModuleType("claimed_script")
    module.__file__ = str(spec_dir / "claimed.py")
    exec(compile(source, module.__file__, "exec"), module.__dict__)
    return module


@pytest.fixture(scope="module")
def train(tmp_path_factory):
    return script(tmp_path_factory.mktemp("train"))


@pytest.fixture(scope="module")
def search(tmp_path_factory):
    return script(tmp_path_factory.mktemp("search"), SEARCH)


@pytest.fixture(autouse=True)
def no_ray(monkeypatch):
    def start_ray(*args, **kwargs):
        raise RayStarted

    monkeypatch.setattr(specc_runtime, "start_ray", start_ray)


def run(module, tmp_path, *args):
    return module.main(["--storage-path", str(tmp_path / "runs"), *args])


def test_a_fresh_run_claims_its_directory_and_gets_as_far_as_starting_ray(train, tmp_path):
    with pytest.raises(RayStarted):
        run(train, tmp_path)
    assert not (tmp_path / "runs" / "claimed").exists()  # the claim was released, leaving no empty directory


def test_a_run_directory_another_run_holds_is_refused_before_anything(train, tmp_path):
    run_dir = tmp_path / "runs" / "claimed"
    lock = specc_runtime.claim(str(run_dir))
    try:
        with pytest.raises(SystemExit, match=f"{run_dir} is in use by the run of pid"):
            run(train, tmp_path)
    finally:
        specc_runtime.release(lock)


@pytest.mark.parametrize("finished", ["results.csv", "best.json", "checkpoint_manager_snapshot.json"])
def test_a_training_run_with_results_or_checkpoints_demands_resume(train, tmp_path, finished):
    run_dir = tmp_path / "runs" / "claimed"
    run_dir.mkdir(parents=True)
    (run_dir / finished).write_text("{}")
    with pytest.raises(SystemExit, match="pass --resume to continue that run"):
        run(train, tmp_path)
    assert not (run_dir / ".specc.lock").exists()  # released however the run ends


def test_a_start_that_failed_before_its_first_result_starts_afresh(train, tmp_path):
    run_dir = tmp_path / "runs" / "claimed"
    run_dir.mkdir(parents=True)
    for name in ("script.py", "specc_runtime.py", "spec.resolved.yaml"):
        (run_dir / name).write_text("from the start that failed")
    with pytest.raises(RayStarted):
        run(train, tmp_path)


def test_a_search_demands_resume_once_a_trial_reported(search, tmp_path):
    trial = tmp_path / "runs" / "claimed" / "trial_00001"
    trial.mkdir(parents=True)
    (trial / "result.json").write_text("")  # Tune opens it when the trial starts
    with pytest.raises(RayStarted):
        run(search, tmp_path)
    (trial / "result.json").write_text('{"epoch": 1}\n')  # a training run would not look here: a search does
    with pytest.raises(SystemExit, match="pass --resume to continue that run"):
        run(search, tmp_path)


def test_a_run_is_resumed_only_from_the_spec_that_started_it(train, tmp_path):
    run_dir = tmp_path / "runs" / "claimed"
    run_dir.mkdir(parents=True)
    (run_dir / "results.csv").write_text("epoch\n1\n")
    (run_dir / "spec.resolved.yaml").write_text(train.RESOLVED_SPEC)
    with pytest.raises(RayStarted):
        run(train, tmp_path, "--resume")
    (run_dir / "spec.resolved.yaml").write_text(train.RESOLVED_SPEC.replace("epochs: 2", "epochs: 3"))
    with pytest.raises(SystemExit, match="was started from another spec"):
        run(train, tmp_path, "--resume")
    with pytest.raises(RayStarted):
        run(train, tmp_path, "--resume", "--force")


def test_run_resume_never_refuses_to_continue(tmp_path):
    module = script(tmp_path, TRAIN + "run: {resume: never}\n")
    run_dir = tmp_path / "runs" / "claimed"
    run_dir.mkdir(parents=True)
    (run_dir / "best.json").write_text("{}")
    with pytest.raises(SystemExit) as refused:
        run(module, tmp_path, "--resume")
    assert str(refused.value) == f"{run_dir} exists and run.resume is never: remove it to start again"
