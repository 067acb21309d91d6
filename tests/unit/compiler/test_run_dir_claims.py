"""The compiled script's run-directory claim and its resume helpers, run as compiled (no Ray is started): a run
directory is held by one run at a time, a lock a killed run left is taken over, a start that failed before its
first result does not demand --resume, and an unreadable checkpoint is passed over for an earlier one, named."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import types

import pytest

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


def test_a_claim_writes_who_holds_the_run_directory_and_release_removes_it(train, tmp_path):
    run_dir = tmp_path / "runs" / "claimed"
    lock = train.claim(str(run_dir))  # the directory need not exist yet
    holder = json.loads((run_dir / ".specc.lock").read_text())
    assert holder["pid"] == os.getpid() and holder["host"] == socket.gethostname() and holder["started"]
    train.release(lock)
    assert not run_dir.exists()  # nothing else was written: no empty run directory is left behind
    (run_dir / "checkpoint_0").mkdir(parents=True)
    train.release(train.claim(str(run_dir)))
    assert os.listdir(run_dir) == ["checkpoint_0"]  # a run's files stay, the lock goes


def test_a_held_run_directory_is_refused_naming_its_holder(train, tmp_path):
    run_dir = str(tmp_path / "claimed")
    lock = train.claim(run_dir)
    try:
        with pytest.raises(SystemExit) as refused:
            train.claim(run_dir)  # even from this process: the lock belongs to the claim, not the process
        message = str(refused.value.code)
        assert f"{run_dir} is in use by the run of pid {os.getpid()} on {socket.gethostname()}, started " in message
        assert "--storage-path" in message
    finally:
        train.release(lock)
    train.release(train.claim(run_dir))  # free again


def test_another_process_is_refused_while_the_holder_lives(train, tmp_path):
    run_dir = str(tmp_path / "claimed")
    lock = train.claim(run_dir)
    try:
        probe = (
            "import fcntl, sys\n"
            "lock = open(sys.argv[1], 'a+')\n"
            "try:\n    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)\nexcept BlockingIOError:\n    sys.exit(3)\n"
        )
        done = subprocess.run([sys.executable, "-c", probe, os.path.join(run_dir, ".specc.lock")], check=False)
        assert done.returncode == 3
    finally:
        train.release(lock)


def test_a_lock_left_by_a_killed_run_is_taken_over_and_named(train, tmp_path, capsys):
    run_dir = tmp_path / "claimed"
    run_dir.mkdir()
    left = {"pid": 999999, "host": socket.gethostname(), "started": "2026-01-02 03:04:05 +0000"}
    (run_dir / ".specc.lock").write_text(json.dumps(left))  # nobody holds it: its process was killed

    lock = train.claim(str(run_dir))

    err = capsys.readouterr().err
    assert f"{run_dir} was held by the run of pid 999999 on {socket.gethostname()}, started 2026-01-02" in err
    assert "which is gone: this run takes it over" in err
    assert json.loads((run_dir / ".specc.lock").read_text())["pid"] == os.getpid()
    train.release(lock)


def test_run_directories_in_remote_storage_are_not_claimed(train):
    assert train.claim("s3://bucket/runs/claimed") is None
    train.release(None)


def test_a_path_below_a_file_is_a_message(train, tmp_path):
    (tmp_path / "runs").write_text("a file")
    with pytest.raises(SystemExit, match=r"cannot claim the run directory .*runs/claimed"):
        train.claim(str(tmp_path / "runs" / "claimed"))


def test_a_start_that_failed_before_its_first_result_does_not_demand_resume(train, tmp_path):
    run_dir = tmp_path / "claimed"
    run_dir.mkdir()
    for name in ("script.py", "spec.resolved.yaml", ".specc.lock"):
        (run_dir / name).write_text("from the start that failed")
    train.check_resumable(str(run_dir), resume=False, force=False)  # no refusal: a corrected run starts afresh

    (run_dir / "checkpoint_manager_snapshot.json").write_text("{}")  # Ray Train recorded a checkpoint
    with pytest.raises(SystemExit, match="pass --resume"):
        train.check_resumable(str(run_dir), resume=False, force=False)


@pytest.mark.parametrize("finished", ["results.csv", "best.json"])
def test_a_finished_run_demands_resume(train, tmp_path, finished):
    (tmp_path / finished).write_text("epoch\n0\n")
    with pytest.raises(SystemExit, match="pass --resume"):
        train.check_resumable(str(tmp_path), resume=False, force=False)


def test_a_search_demands_resume_once_a_trial_reported(search, tmp_path):
    trial = tmp_path / "trial_00001"
    trial.mkdir(parents=True)
    (trial / "result.json").write_text("")  # Tune opens it when the trial starts
    (tmp_path / "experiment_state-2026.json").write_text("{}")
    search.check_resumable(str(tmp_path), resume=False, force=False)

    (trial / "result.json").write_text('{"epoch": 0}\n')
    with pytest.raises(SystemExit, match="pass --resume"):
        search.check_resumable(str(tmp_path), resume=False, force=False)


def checkpoints(root, *states):
    """checkpoint_00000N directories, each with a state.txt holding its state ('' for a truncated one)."""
    import ray.train

    made = []
    for index, state in enumerate(states):
        folder = root / f"checkpoint_{index:06d}"
        folder.mkdir(parents=True)
        (folder / "state.txt").write_text(state)
        made.append(ray.train.Checkpoint(str(folder)))
    return made


def read(directory):
    with open(os.path.join(directory, "state.txt"), encoding="utf-8") as handle:
        text = handle.read()
    if not text:
        raise EOFError("state.txt is cut short")
    return text


def test_the_latest_checkpoint_is_read_when_it_can_be(train, tmp_path, capsys):
    latest = checkpoints(tmp_path, "epoch 0", "epoch 1")[-1]
    assert train.readable_checkpoint(latest, read) == (latest, "epoch 1")
    assert capsys.readouterr().err == ""


def test_an_unreadable_checkpoint_falls_back_to_the_newest_earlier_one_named(train, tmp_path, capsys):
    made = checkpoints(tmp_path, "epoch 0", "epoch 1", "", "epoch 3 (never registered)")
    checkpoint, state = train.readable_checkpoint(made[2], read)
    assert (checkpoint.path, state) == (made[1].path, "epoch 1")  # not the later, unregistered one
    warning = f"warning: resuming from {made[1].path}: cannot read {made[2].path} (EOFError: state.txt is cut short)"
    assert warning in capsys.readouterr().err


def test_no_readable_checkpoint_stops_naming_each_and_the_way_out(train, tmp_path):
    made = checkpoints(tmp_path, "", "")
    with pytest.raises(train.CheckpointUnreadable) as stopped:
        train.readable_checkpoint(made[1], read)
    message = str(stopped.value)
    assert made[0].path in message and made[1].path in message
    assert "Remove the run directory" in message


def test_nothing_to_resume_from(train):
    assert train.readable_checkpoint(None, read) == (None, None)
