"""specc_runtime's run directory and resume helpers, called as a module (no Ray is started): a run directory is held
by one run at a time, a lock a killed run left is taken over, a start that failed before its first result does not
demand --resume, a run is resumed only from the spec that started it, and an unreadable checkpoint is passed over
for an earlier one, named. (tests/unit/compiler/test_run_dir_claims.py: the compiled scripts' runs use them.)"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import pytest
import specc_runtime

SPEC = "specc: 1\nname: claimed\n"


def test_a_claim_writes_who_holds_the_run_directory_and_release_removes_it(tmp_path):
    run_dir = tmp_path / "runs" / "claimed"
    lock = specc_runtime.claim(str(run_dir))  # the directory need not exist yet
    holder = json.loads((run_dir / ".specc.lock").read_text())
    assert holder["pid"] == os.getpid() and holder["host"] == socket.gethostname() and holder["started"]
    specc_runtime.release(lock)
    assert not run_dir.exists()  # nothing else was written: no empty run directory is left behind
    (run_dir / "checkpoint_0").mkdir(parents=True)
    specc_runtime.release(specc_runtime.claim(str(run_dir)))
    assert os.listdir(run_dir) == ["checkpoint_0"]  # a run's files stay, the lock goes


def test_a_held_run_directory_is_refused_naming_its_holder(tmp_path):
    run_dir = str(tmp_path / "claimed")
    lock = specc_runtime.claim(run_dir)
    try:
        with pytest.raises(SystemExit) as refused:
            specc_runtime.claim(run_dir)  # even from this process: the lock belongs to the claim, not the process
        message = str(refused.value.code)
        assert f"{run_dir} is in use by the run of pid {os.getpid()} on {socket.gethostname()}, started " in message
        assert "--storage-path" in message
    finally:
        specc_runtime.release(lock)
    specc_runtime.release(specc_runtime.claim(run_dir))  # free again


def test_another_process_is_refused_while_the_holder_lives(tmp_path):
    run_dir = str(tmp_path / "claimed")
    lock = specc_runtime.claim(run_dir)
    try:
        probe = (
            "import fcntl, sys\n"
            "lock = open(sys.argv[1], 'a+')\n"
            "try:\n    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)\nexcept BlockingIOError:\n    sys.exit(3)\n"
        )
        done = subprocess.run([sys.executable, "-c", probe, os.path.join(run_dir, ".specc.lock")], check=False)
        assert done.returncode == 3
    finally:
        specc_runtime.release(lock)


def test_a_lock_left_by_a_killed_run_is_taken_over_and_named(tmp_path, capsys):
    run_dir = tmp_path / "claimed"
    run_dir.mkdir()
    left = {"pid": 999999, "host": socket.gethostname(), "started": "2026-01-02 03:04:05 +0000"}
    (run_dir / ".specc.lock").write_text(json.dumps(left))  # nobody holds it: its process was killed

    lock = specc_runtime.claim(str(run_dir))

    err = capsys.readouterr().err
    assert f"{run_dir} was held by the run of pid 999999 on {socket.gethostname()}, started 2026-01-02" in err
    assert "which is gone: this run takes it over" in err
    assert json.loads((run_dir / ".specc.lock").read_text())["pid"] == os.getpid()
    specc_runtime.release(lock)


def test_a_lock_file_that_names_no_run_is_a_run_starting():
    assert specc_runtime.holder_of("") == "another run, which is starting"  # created, not yet written
    assert specc_runtime.holder_of('{"pid": 1}') == "another run, which is starting"


def test_run_directories_in_remote_storage_are_not_claimed():
    assert specc_runtime.claim("s3://bucket/runs/claimed") is None
    specc_runtime.release(None)


def test_a_path_below_a_file_is_a_message(tmp_path):
    (tmp_path / "runs").write_text("a file")
    with pytest.raises(SystemExit, match=r"cannot claim the run directory .*runs/claimed"):
        specc_runtime.claim(str(tmp_path / "runs" / "claimed"))


def test_local_run_directories_are_absolute_and_uris_kept(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert specc_runtime.run_location("runs", "x") == (str(tmp_path / "runs"), str(tmp_path / "runs" / "x"))
    assert specc_runtime.run_location("s3://bucket/runs", "x") == ("s3://bucket/runs", "s3://bucket/runs/x")


def test_a_start_that_failed_before_its_first_result_does_not_demand_resume(tmp_path):
    run_dir = tmp_path / "claimed"
    run_dir.mkdir()
    for name in ("script.py", "specc_runtime.py", "spec.resolved.yaml", ".specc.lock"):
        (run_dir / name).write_text("from the start that failed")
    specc_runtime.check_resumable(str(run_dir), False, False, SPEC)  # no refusal: a corrected run starts afresh

    (run_dir / "checkpoint_manager_snapshot.json").write_text("{}")  # Ray Train recorded a checkpoint
    with pytest.raises(SystemExit, match="pass --resume"):
        specc_runtime.check_resumable(str(run_dir), False, False, SPEC)


def test_a_run_directory_that_does_not_exist_is_a_fresh_run(tmp_path):
    specc_runtime.check_resumable(str(tmp_path / "never"), False, False, SPEC)
    specc_runtime.check_resumable(str(tmp_path / "never"), False, False, SPEC, search=True)


@pytest.mark.parametrize("finished", ["results.csv", "best.json"])
def test_a_finished_run_demands_resume(tmp_path, finished):
    (tmp_path / finished).write_text("epoch\n0\n")
    with pytest.raises(SystemExit, match="pass --resume"):
        specc_runtime.check_resumable(str(tmp_path), False, False, SPEC)


def test_a_search_demands_resume_once_a_trial_reported(tmp_path):
    trial = tmp_path / "trial_00001"
    trial.mkdir(parents=True)
    (trial / "result.json").write_text("")  # Tune opens it when the trial starts
    (tmp_path / "experiment_state-2026.json").write_text("{}")
    specc_runtime.check_resumable(str(tmp_path), False, False, SPEC, search=True)

    (trial / "result.json").write_text('{"epoch": 0}\n')
    with pytest.raises(SystemExit, match="pass --resume"):
        specc_runtime.check_resumable(str(tmp_path), False, False, SPEC, search=True)


def test_a_finished_search_demands_resume(tmp_path):
    (tmp_path / "best.json").write_text("{}")
    with pytest.raises(SystemExit, match="pass --resume"):
        specc_runtime.check_resumable(str(tmp_path), False, False, SPEC, search=True)


def test_a_run_is_resumed_only_from_the_spec_that_started_it_unless_forced(tmp_path):
    (tmp_path / "results.csv").write_text("epoch\n1\n")
    (tmp_path / "spec.resolved.yaml").write_text(SPEC)
    specc_runtime.check_resumable(str(tmp_path), True, False, SPEC)  # the same spec: it goes on

    changed = SPEC + "description: changed since\n"
    with pytest.raises(SystemExit) as refused:
        specc_runtime.check_resumable(str(tmp_path), True, False, changed)
    assert str(refused.value) == (
        f"{tmp_path} was started from another spec (its spec.resolved.yaml differs from this one): "
        "pass --force to resume it with this spec anyway"
    )
    specc_runtime.check_resumable(str(tmp_path), True, True, changed)  # --force
    (tmp_path / "spec.resolved.yaml").unlink()
    specc_runtime.check_resumable(str(tmp_path), True, False, changed)  # nothing to compare with


def test_a_run_that_can_never_be_resumed_says_why(tmp_path):
    (tmp_path / "best.json").write_text('{"status": "completed"}')
    refusal = "exists and run.resume is never: remove it to start again"
    with pytest.raises(SystemExit) as refused:
        specc_runtime.check_resumable(str(tmp_path), True, False, SPEC, refusal=refusal)
    assert str(refused.value) == f"{tmp_path} {refusal}"
    with pytest.raises(SystemExit, match="pass --resume"):  # without --resume: the usual message comes first
        specc_runtime.check_resumable(str(tmp_path), False, False, SPEC, refusal=refusal)


def test_results_are_read_through_uris_too(tmp_path):
    (tmp_path / "results.csv").write_text("epoch\n1\n")
    with pytest.raises(SystemExit, match="pass --resume"):
        specc_runtime.check_resumable(f"file://{tmp_path}", False, False, SPEC)


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


def test_the_latest_checkpoint_is_read_when_it_can_be(tmp_path, capsys):
    latest = checkpoints(tmp_path, "epoch 0", "epoch 1")[-1]
    assert specc_runtime.readable_checkpoint(latest, read) == (latest, "epoch 1")
    assert capsys.readouterr().err == ""


def test_an_unreadable_checkpoint_falls_back_to_the_newest_earlier_one_named(tmp_path, capsys):
    made = checkpoints(tmp_path, "epoch 0", "epoch 1", "", "epoch 3 (never registered)")
    checkpoint, state = specc_runtime.readable_checkpoint(made[2], read)
    assert (checkpoint.path, state) == (made[1].path, "epoch 1")  # not the later, unregistered one
    warning = f"warning: resuming from {made[1].path}: cannot read {made[2].path} (EOFError: state.txt is cut short)"
    assert warning in capsys.readouterr().err


def test_no_readable_checkpoint_stops_naming_each_and_the_way_out(tmp_path):
    made = checkpoints(tmp_path, "", "")
    with pytest.raises(specc_runtime.CheckpointUnreadable) as stopped:
        specc_runtime.readable_checkpoint(made[1], read)
    message = str(stopped.value)
    assert made[0].path in message and made[1].path in message
    assert "Remove the run directory" in message


def test_nothing_to_resume_from():
    assert specc_runtime.readable_checkpoint(None, read) == (None, None)


class Trainer:
    def __init__(self, error):
        self.error = error

    def fit(self):
        raise self.error


def test_a_run_none_of_whose_checkpoints_can_be_read_stops_with_the_message():
    """fit(): from this process (Ray Train's local mode) or from a worker, a message, not a traceback."""
    import ray.train

    unreadable = specc_runtime.CheckpointUnreadable("cannot resume: no checkpoint of this run can be read: x")
    with pytest.raises(SystemExit, match="cannot resume: no checkpoint"):
        specc_runtime.fit(Trainer(unreadable))
    from_a_worker = ray.train.WorkerGroupError("Training failed", {0: unreadable})
    with pytest.raises(SystemExit, match="cannot resume: no checkpoint"):
        specc_runtime.fit(Trainer(from_a_worker))
    other = ray.train.WorkerGroupError("Training failed", {0: ValueError("a bug")})
    with pytest.raises(ray.train.WorkerGroupError):
        specc_runtime.fit(Trainer(other))


def test_a_run_that_fits_returns_its_result():
    trainer = type("Fits", (), {"fit": lambda self: "the result"})()
    assert specc_runtime.fit(trainer) == "the result"
