"""Another Ray already running on the machine (issue 48): a run given no address starts a Ray of its own, says so
in its first line, names the other Ray and how to join it, and does not end when that Ray does; `--address auto`
joins the other Ray, as Ray's own scripts do, and says so.

The other Ray is started as users start one, `ray start --head`, in a Ray temp directory of this module's
(RAY_TMPDIR, for it and for the runs here): it records its address where `ray.init()` with no address looks, as a
`ray start` in /tmp/ray does for every script on a user's machine, without touching /tmp/ray. It is stopped by
its pid."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from .cluster import BIN, free_port
from .conftest import PYTHON, read_results, run_process, subprocess_env

pytestmark = pytest.mark.slow

SPEC = """\
specc: 1
name: which-ray
framework: torch
model: {type: mlp, hidden_sizes: [16]}
dataset: {type: iris, batch_size: 16}
training: {epochs: 2}
scaling: {num_workers: 1}
"""


@pytest.fixture(scope="module")
def ray_tmpdir():
    """A short Ray temp root of this module's (Ray's Unix sockets live below it: at most 107 bytes a path)."""
    root = tempfile.mkdtemp(prefix="rw-", dir="/tmp")
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def spec(tmp_path) -> Path:
    path = tmp_path / "which_ray.yaml"
    path.write_text(SPEC, encoding="utf-8")
    return path


class OtherRay:
    """`ray start --head --block` with 1 CPU, in a process group of its own, recorded in RAY_TMPDIR."""

    def __init__(self, tmpdir: str, log: Path):
        self.port = free_port()
        self.env = {key: value for key, value in os.environ.items() if key != "RAY_ADDRESS"}
        self.env.update(RAY_TMPDIR=tmpdir, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
        command = [
            str(BIN / "ray"), "start", "--head", "--block", "--num-cpus=1", "--node-ip-address=127.0.0.1",
            f"--port={self.port}", "--include-dashboard=false", "--disable-usage-stats",
            f"--ray-client-server-port={free_port()}", f"--node-manager-port={free_port()}",
            f"--object-manager-port={free_port()}", f"--metrics-export-port={free_port()}",
            f"--runtime-env-agent-port={free_port()}", f"--dashboard-agent-grpc-port={free_port()}",
            f"--dashboard-agent-listen-port={free_port()}",
        ]  # fmt: skip
        self.log = log
        with open(log, "wb") as out:
            self.process = subprocess.Popen(
                command, env=self.env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )
        self.address = ""
        self.recorded = Path(tmpdir) / "ray" / "ray_current_cluster"

    def wait(self) -> OtherRay:
        """Until `ray start` has recorded its address (host:port, the host as Ray names this node)."""
        log, recorded = self.log, self.recorded
        deadline = time.monotonic() + 90
        while not (recorded.exists() and recorded.read_text().strip().endswith(f":{self.port}")):
            assert self.process.poll() is None, log.read_text(errors="replace")[-3000:]
            assert time.monotonic() < deadline, f"no address recorded: {log.read_text(errors='replace')[-3000:]}"
            time.sleep(0.3)
        self.address = recorded.read_text().strip()
        return self

    def stop(self) -> None:
        """SIGTERM to `ray start --block`, then SIGKILL to what is left of its group: Ray's processes on this node."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=5)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()


@pytest.fixture(scope="module")
def other_ray(ray_tmpdir, tmp_path_factory):
    ray = OtherRay(ray_tmpdir, tmp_path_factory.mktemp("other-ray") / "ray-start.log")
    try:
        yield ray.wait()
    finally:
        ray.stop()


def specc_run(spec: Path, tmpdir: str, *args: str, timeout: float = 300):
    """`specc run SPEC --smoke` with this module's Ray temp root and no RAY_ADDRESS, as on a user's machine."""
    command = [PYTHON, "-m", "specc", "run", str(spec), "--smoke", "--storage-path", str(spec.parent / "runs"), *args]
    return run_process(command, spec.parent, timeout, {"RAY_TMPDIR": tmpdir})


OWN = re.compile(r"^Ray: a local Ray of this run's own, 2 CPUs; dashboard http://127\.0\.0\.1:\d+")


def test_with_no_other_ray_the_first_line_says_the_run_started_its_own(spec, ray_tmpdir):
    done = specc_run(spec, ray_tmpdir)
    assert done.returncode == 0, done.stderr[-3000:]
    first = done.stdout.splitlines()[0]
    assert OWN.match(first) and "another Ray" not in first, done.stdout


def test_address_auto_joins_the_other_ray_and_says_so(spec, ray_tmpdir, other_ray):
    done = specc_run(spec, ray_tmpdir, "--address", "auto")
    assert done.returncode == 0, done.stderr[-3000:]
    first = done.stdout.splitlines()[0]
    assert first == f"Ray: joined the cluster at {other_ray.address}, 1 node, 1 CPU", done.stdout


def test_a_run_outlives_the_other_ray_it_did_not_join(spec, ray_tmpdir, other_ray):
    """The issue's failure: with another Ray on the machine that ended mid-way, runs joined it and died with it
    ("The actor never ran - it was cancelled before it started running")."""
    env = {**subprocess_env(), "RAY_TMPDIR": ray_tmpdir}
    command = [PYTHON, "-m", "specc", "run", str(spec), "--smoke", "--storage-path", str(spec.parent / "runs")]
    run = subprocess.Popen(command, cwd=spec.parent, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = run.stdout.readline()  # Ray has started (or been joined): the other Ray ends now, mid-run
        other_ray.stop()
        rest, err = run.communicate(timeout=300)
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
    assert run.returncode == 0, err[-3000:]
    assert OWN.match(first), first + rest
    assert first.rstrip().endswith(
        f" (another Ray runs on this machine, at {other_ray.address}: --address auto joins it)"
    )
    _, rows = read_results(spec.parent / "runs" / "which-ray")
    assert rows, rest
