"""Run directories are claimed (issue 15, class 7), on a real local Ray with real training on digits.

Two runs of one name at once: one runs, the other is refused naming it. A run killed with SIGKILL leaves its
lock behind: --resume takes it over and loses no epoch. A start that failed before its first epoch does not
block the corrected re-run. A truncated checkpoint on --resume is passed over for the previous one, named; with
none readable the run stops with a message naming them, not a traceback.

The session's Ray (tests/e2e/conftest.py), which the compiled scripts run as subprocesses join. (This module
lived in tests/hostile/ with a Ray of its own, which it skipped when the e2e session's was up: in CI, always.)
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from specc.cli import main

from .conftest import PYTHON, compile_spec, own_lines, read_results, run_spec, subprocess_env

# CI runs this module in turn (share 1, tests/e2e/conftest.py): each run is killed or broken on purpose
pytestmark = [pytest.mark.slow, pytest.mark.in_turn(1)]

SPEC = """\
specc: 1
name: claimed
framework: torch
model:
  type: custom
  factory: "claims_models:make"
  kwargs: {{crash_at_epoch: {crash_at}, armed: "{armed}", log: "{log}", delay: {delay}}}
dataset: {{type: digits, batch_size: 64}}
training:
  epochs: {epochs}
  optimizer: {{type: sgd, lr: 0.05, momentum: 0.9}}
  metrics: [accuracy]
  checkpoint_every: 1
scaling: {{num_workers: {workers}}}
run: {{checkpoints_to_keep: 4, max_failures: 0}}
"""


@pytest.fixture
def claimed(tmp_path, spec_file, factory_module):
    """claimed(**settings) -> (spec, storage, run_dir, epoch log): the crash model's spec in tmp_path."""
    factory_module("crash_models.py", "claims_models")
    log = tmp_path / "epochs.log"

    def make(epochs=3, crash_at=99, delay=0.0, workers=1, armed=True):
        if armed:
            (tmp_path / "armed").touch()
        text = SPEC.format(
            crash_at=crash_at, armed=tmp_path / "armed", log=log, delay=delay, epochs=epochs, workers=workers
        )
        return spec_file(text), tmp_path / "runs", tmp_path / "runs" / "claimed", log

    return make


def started_epochs(log: Path) -> int:
    return len(log.read_text(encoding="utf-8").split()) if log.exists() else 0


def launch(args, cwd) -> subprocess.Popen:
    """A compiled script joining the session's Ray (a Ray of its own costs half a minute on a busy machine), output
    captured."""
    import ray

    address = ray.get_runtime_context().gcs_address
    return subprocess.Popen(
        [PYTHON, *map(str, args), "--address", address],
        cwd=cwd,
        env=subprocess_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(process: subprocess.Popen, timeout: float = 150) -> tuple[int, str, str]:
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()  # the process this test started
        out, err = process.communicate()
        pytest.fail(f"the run did not finish within {timeout} s\n{err[-3000:]}")
    return process.returncode, out, err


def wait_for(condition, what: str, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"waited {timeout} s for {what}")
        time.sleep(0.2)


def live_actors(class_name: str) -> list:
    """The session Ray's actors of this class that are alive (its state API), asked of that Ray by its address: without
    one, Ray's state API looks for the machine's Rays and refuses when it finds several (a fast test's own, beside)."""
    import ray
    from ray.util.state import list_actors

    address = ray.get_runtime_context().gcs_address
    return list_actors(address=address, filters=[("class_name", "=", class_name), ("state", "=", "ALIVE")])


def stderr_with(capfd, text: str, timeout: float = 10) -> str:
    """What was written to stderr until `text` was (a worker's lines reach the driver through Ray's log monitor)."""
    seen, deadline = capfd.readouterr().err, time.monotonic() + timeout
    while text not in seen and time.monotonic() < deadline:
        time.sleep(0.2)
        seen += capfd.readouterr().err
    return seen


def epochs_in(run_dir: Path) -> list[int]:
    return [row["epoch"] for row in read_results(run_dir)[1]]


def test_two_runs_of_one_name_at_once_one_runs_the_other_is_refused_naming_it(tmp_path, claimed, local_ray, capsys):
    spec, storage, run_dir, log = claimed(epochs=3, delay=0.5, armed=False)
    script = compile_spec(spec, tmp_path / "claimed.py")

    first, second = (launch([script, "--storage-path", storage], tmp_path) for _ in range(2))
    # `specc run` beside the live run of the same name: refused too, before Ray or the directory is touched.
    claim = run_dir / ".specc.lock"
    wait_for(lambda: (claim.exists() and claim.read_text()) or None not in (first.poll(), second.poll()), "a claim")
    capsys.readouterr()
    code = main(["run", str(spec), "--resume", "--storage-path", str(storage)])
    err = capsys.readouterr().err
    (code_1, _, err_1), (code_2, _, err_2) = finish(first), finish(second)

    assert sorted([code_1, code_2]) == [0, 1], f"exit codes {code_1}, {code_2}\n{err_1[-2000:]}\n{err_2[-2000:]}"
    winner, refusal = (first, err_2) if code_1 == 0 else (second, err_1)
    assert f"{run_dir} is in use by the run of pid {winner.pid} on {socket.gethostname()}, started " in refusal
    assert "Traceback" not in refusal, refusal[-3000:]
    assert code == 1 and "E401" in err and f"pid {winner.pid}" in err and "Traceback" not in err, err
    assert epochs_in(run_dir) == [1, 2, 3]  # the winner's run, whole
    assert started_epochs(log) == 3  # the refused runs trained nothing
    assert not claim.exists()


def test_a_killed_run_is_resumed_from_its_stale_lock_without_losing_an_epoch(tmp_path, claimed, local_ray, capsys):
    spec, storage, run_dir, log = claimed(epochs=3, delay=0.5, armed=False)
    script = compile_spec(spec, tmp_path / "claimed.py")
    run = launch([script, "--storage-path", storage], tmp_path)
    try:
        snapshot = run_dir / "checkpoint_manager_snapshot.json"  # where Train V2 lists the checkpoints it kept
        wait_for(lambda: (snapshot.exists() and snapshot.stat().st_size) or run.poll() is not None, "a checkpoint")
        time.sleep(0.3)  # epoch 1 is checkpointed, 2 is under way
    finally:
        os.kill(run.pid, signal.SIGKILL)  # the script this test started; Ray ends the job's workers with it
        _, err = run.communicate()
    assert run.returncode == -signal.SIGKILL, err[-3000:]
    killed = set(log.read_text(encoding="utf-8").split())  # the pids of the killed run's workers
    assert json.loads((run_dir / ".specc.lock").read_text())["pid"] == run.pid  # left behind

    capsys.readouterr()
    code = main(["run", str(spec), "--resume", "--storage-path", str(storage)])
    err = capsys.readouterr().err

    assert code == 0, err[-3000:]
    assert f"{run_dir} was held by the run of pid {run.pid}" in err and "this run takes it over" in err
    assert epochs_in(run_dir) == [1, 2, 3]  # every epoch exactly once
    # Resumed from its last checkpoint, not from the start. (Counted by worker pid: the killed run's worker may
    # start one more epoch before Ray ends it.)
    resumed = [pid for pid in log.read_text(encoding="utf-8").split() if pid not in killed]
    assert 0 < len(resumed) < 3, log.read_text()
    assert not (run_dir / ".specc.lock").exists()


def test_a_start_that_failed_before_its_first_epoch_does_not_block_the_corrected_run(
    tmp_path, claimed, local_ray, capsys
):
    spec, storage, run_dir, _ = claimed(epochs=2, crash_at=0, workers=0)  # the first epoch fails
    with pytest.raises(Exception, match="simulated crash"):
        run_spec(spec, storage_path=storage)
    assert (run_dir / "spec.resolved.yaml").exists() and not (run_dir / ".specc.lock").exists()

    capsys.readouterr()
    code = main(["run", str(spec), "--storage-path", str(storage), "--set", "training.epochs=3"])  # corrected
    err = capsys.readouterr().err

    assert code == 0, err[-3000:]
    assert epochs_in(run_dir) == [1, 2, 3]
    assert "epochs: 3" in (run_dir / "spec.resolved.yaml").read_text()


def test_a_truncated_checkpoint_is_passed_over_for_the_previous_one_named(tmp_path, claimed, local_ray, capfd):
    spec, storage, run_dir, log = claimed(epochs=4, crash_at=2)  # checkpoints of epochs 1 and 2, then a crash
    with pytest.raises(Exception, match="simulated crash"):
        run_spec(spec, storage_path=storage)
    saved = sorted(p for p in run_dir.iterdir() if p.name.startswith("checkpoint_") and p.is_dir())
    assert len(saved) == 2
    good = (saved[0] / "state.pt").read_bytes()
    for checkpoint in saved:  # cut short, as a full disk leaves them
        state = checkpoint / "state.pt"
        state.write_bytes(state.read_bytes()[:100])

    # None readable: the run stops naming each and the way out (E411), not a traceback.
    capfd.readouterr()
    assert main(["run", str(spec), "--resume", "--storage-path", str(storage)]) == 1
    err = capfd.readouterr().err
    assert "E411" in err and str(saved[0]) in err and str(saved[1]) in err and "Remove the run directory" in err
    assert "Traceback" not in own_lines(err), err[-3000:]

    # The earlier one whole again: the run resumes from it, naming the one passed over, and loses nothing more.
    (saved[0] / "state.pt").write_bytes(good)
    before = started_epochs(log)
    interrupt = signal.getsignal(signal.SIGINT)
    assert main(["run", str(spec), "--resume", "--storage-path", str(storage)]) == 0
    warning = f"warning: resuming from {saved[0]}: cannot read {saved[1]} ("
    assert warning in stderr_with(capfd, warning)
    assert epochs_in(run_dir) == [1, 2, 3, 4]  # epoch 2 again from epoch 1's checkpoint, then 3 and 4
    assert started_epochs(log) - before == 3

    # Nothing of the run outlives it in this process: Ctrl-C is handled as before (Ray Train's fit() leaves a
    # handler that aborts its controller), and so the finished run's controller, which that handler held, ends.
    assert signal.getsignal(signal.SIGINT) is interrupt
    wait_for(lambda: not live_actors("TrainController"), "the finished run's TrainController to end", 30)
