"""A search survives its driver being killed and its trials failing (SPEC §8, run.max_failures / --resume):
resuming finishes every trial without running a finished one again; a failed trial is retried from its
last checkpoint instead of starting over."""

from __future__ import annotations

import csv
import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from .conftest import PYTHON, compile_spec, run_spec, subprocess_env

# CI runs this module in turn (share 2, tests/e2e/conftest.py): searches killed and resumed
pytestmark = [pytest.mark.slow, pytest.mark.in_turn(2)]

SEARCH = """\
specc: 1
name: {name}
framework: torch
model:
  type: custom
  factory: "e2e_crash_models:make"
  kwargs: {{crash_at_epoch: 1, armed: "{armed}", log: "{log}", hidden: 16, delay: {delay}}}
dataset: {{type: digits, batch_size: 128}}
training:
  epochs: {epochs}
  optimizer: {{type: sgd, lr: 0.05, momentum: 0.9}}
  metrics: [accuracy]
  checkpoint_every: 1
scaling: {{num_workers: 1}}
tune:
  metric: val_accuracy
  mode: max
  num_samples: {samples}
  max_concurrent_trials: 1
  search: {{type: random, seed: 5}}
  space:
    training.optimizer.lr: {{loguniform: [0.01, 0.2]}}
run: {{checkpoints_to_keep: 2, max_failures: {max_failures}}}
"""


def epoch_starts(log: Path) -> list[str]:
    """The pid of the process that started each epoch, in order (written by the crash model)."""
    return log.read_text(encoding="utf-8").split() if log.exists() else []


def trial_history(trial_dir: Path) -> list[int]:
    """The epochs a trial reported, in order, from Tune's own result log."""
    path = trial_dir / "result.json"
    if not path.exists():
        return []
    return [json.loads(line)["epoch"] for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def results(run_dir: Path) -> list[dict]:
    with open(run_dir / "results.csv", newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def finished_trials(run_dir: Path, epochs: int) -> dict[str, list[int]]:
    if not run_dir.is_dir():
        return {}
    histories = {p.name: trial_history(p) for p in run_dir.iterdir() if p.name.startswith("trial_")}
    return {name: history for name, history in histories.items() if len(history) == epochs}


def test_killed_search_resumes_without_rerunning_finished_trials(tmp_path, spec_file, factory_module):
    factory_module("crash_models.py", "e2e_crash_models")
    log, epochs, samples = tmp_path / "epochs.log", 4, 4
    spec = spec_file(
        SEARCH.format(
            name="killed", armed=tmp_path / "never", log=log, epochs=epochs, samples=samples, max_failures=0, delay=0.5
        )
    )  # half a second per epoch: slow enough to be killed mid-search (trials reuse one process and are quick)
    script = compile_spec(spec, tmp_path / "killed.py")
    storage, run_dir = tmp_path / "runs", tmp_path / "runs" / "killed"

    # 1. The driver is SIGKILLed once two trials have finished and the third has started an epoch.
    process = subprocess.Popen(
        [PYTHON, str(script), "--storage-path", str(storage)],
        cwd=tmp_path,
        env=subprocess_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # its Ray processes share its session: cleaned up by process group below
    )
    try:
        deadline = time.monotonic() + 240
        while len(finished_trials(run_dir, epochs)) < 2 or len(epoch_starts(log)) <= 2 * epochs:
            assert process.poll() is None, "the search ended before it could be interrupted"
            assert time.monotonic() < deadline, "two trials did not finish within 240 s"
            time.sleep(0.2)
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
    finally:
        with_group_gone(process.pid)
    before = finished_trials(run_dir, epochs)
    assert len(before) >= 2
    assert not (run_dir / "results.csv").exists()  # the killed run never got to write its results
    starts_before = len(epoch_starts(log))

    # 2. --resume: the remaining trials run, the finished ones do not start a single epoch again. --quiet holds for
    # the resumed search too, though Tune restores the progress callback the killed one started with.
    done = subprocess.run(
        [PYTHON, str(script), "--storage-path", str(storage), "--resume", "--quiet"],
        cwd=tmp_path,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    assert not re.search(r"^killed: \[\d+/\d+\] trial ", done.stdout, re.M), done.stdout
    rows = results(run_dir)
    assert len(rows) == samples
    assert {row["status"] for row in rows} == {"completed"}
    assert all(int(row["epochs"]) == epochs for row in rows)
    for name, history in before.items():
        assert trial_history(run_dir / name) == history == list(range(1, epochs + 1))  # nothing appended
    for row in rows:  # every trial reported each epoch exactly once, the interrupted one included
        assert trial_history(run_dir / f"trial_{row['trial_id']}") == list(range(1, epochs + 1))
    started_again = len(epoch_starts(log)) - starts_before
    unfinished = samples - len(before)
    # Each unfinished trial trains at most its `epochs` epochs: the interrupted one resumes from the last checkpoint
    # Tune recorded (its experiment state is saved every few seconds, so an epoch or two may be trained again).
    assert started_again <= unfinished * epochs, f"{started_again} epochs started after the resume"


def with_group_gone(pid: int) -> None:
    """Kills what is left of the process group the test started (the killed driver's Ray), by its id."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        return
    time.sleep(1)


def test_failed_trial_is_retried_from_its_last_checkpoint(tmp_path, spec_file, factory_module, local_ray):
    """run.max_failures: Tune restarts the trial in a new process from its last checkpoint."""
    factory_module("crash_models.py", "e2e_crash_models")
    armed, log = tmp_path / "armed", tmp_path / "epochs.log"
    armed.touch()
    spec = spec_file(SEARCH.format(name="retried", armed=armed, log=log, epochs=3, samples=1, max_failures=1, delay=0))

    result = run_spec(spec, storage_path=tmp_path / "runs")

    pids = epoch_starts(log)
    assert not armed.exists()  # it did crash
    assert len(pids) == 4, pids  # epoch 1, the crash as epoch 2 starts; after the retry epochs 2 and 3 only
    assert pids[0] == pids[1] != pids[2] == pids[3]
    (row,) = results(Path(result.run_dir))
    assert row["status"] == "completed" and row["epochs"] == "3"
    (trial,) = [p for p in Path(result.run_dir).iterdir() if p.name.startswith("trial_")]
    assert trial_history(trial) == [1, 2, 3]  # from 1, as the trial's training_iteration
    assert result.metrics["epoch"] == 3


def test_failed_trial_on_two_workers_resumes_its_train_run(tmp_path, spec_file, factory_module, local_ray):
    """A trial that drives a TorchTrainer: its worker crashes once; Tune reruns the trial and the Train run of the
    same name continues from its checkpoint (epoch 1 is reported once)."""
    factory_module("crash_models.py", "e2e_crash_models")
    armed, log = tmp_path / "armed", tmp_path / "epochs.log"
    armed.touch()
    text = SEARCH.format(name="retried2", armed=armed, log=log, epochs=3, samples=1, max_failures=1, delay=0)
    spec = spec_file(
        text.replace("scaling: {num_workers: 1}", "scaling: {num_workers: 2, resources_per_worker: {CPU: 0.5}}")
    )

    result = run_spec(spec, storage_path=tmp_path / "runs")

    assert not armed.exists()  # a worker did crash
    run_dir = Path(result.run_dir)
    (row,) = results(run_dir)
    assert row["status"] == "completed" and row["epochs"] == "3"
    (trial,) = [p for p in run_dir.iterdir() if p.name.startswith("trial_")]
    assert trial_history(trial)[-1] == 3
    # Epoch starts, both workers: 2 (epoch 1) + 1-2 (epoch 2, where one crashed) + 4 (epochs 2 and 3 after the
    # retry) = 7-8. Starting over would add epoch 1 again: 9-10.
    assert 7 <= len(epoch_starts(log)) <= 8, epoch_starts(log)
    (train_run,) = [p for p in run_dir.iterdir() if p.name.startswith("train-trial_id=")]  # the same Train run
    assert result.checkpoint and result.checkpoint.startswith(str(train_run))
