"""A real two-node Ray cluster on this machine, as users start one: `ray start --head` and `ray start --address`.

Each node has its own (short) temp dir and 1 CPU, its own ports (free ones, picked here), and the node IP 127.0.0.1; the
cluster uses token auth (RAY_AUTH_MODE=token with a fresh RAY_AUTH_TOKEN, which every client here is given).
Each `ray start` runs with --block in a process group of its own, so the cluster is stopped by those pids alone:
SIGTERM (Ray drains and stops the node's processes), then SIGKILL for whatever of the group is left.

Used by tests/e2e/test_cluster.py and bench/submit_overhead.py.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIN = Path(sys.executable).parent  # the venv's ray, specc and python


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class LocalCluster:
    """start() a head and a worker node; `env` is what a client needs (token, PATH, no RAY_ADDRESS)."""

    def __init__(self, root: Path, cpus_per_node: int = 1):
        self.root = Path(root)  # the nodes' logs
        self.root.mkdir(parents=True, exist_ok=True)
        self.cpus = cpus_per_node
        self.gcs_port, self.dashboard_port, self.client_port = free_port(), free_port(), free_port()
        # Without RAY_ADDRESS, and without the Train poll interval an in-process run of this session may have set
        # (the compiled make_trainer sets it in its process): what reaches the cluster's processes is the script's.
        dropped = ("RAY_ADDRESS", "RAY_TRAIN_HEALTH_CHECK_INTERVAL_S")
        self.env = {key: value for key, value in os.environ.items() if key not in dropped}
        self.env.update(
            RAY_AUTH_MODE="token",
            RAY_AUTH_TOKEN=secrets.token_hex(32),
            PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
            PYTHONUNBUFFERED="1",
        )
        self.processes: list[subprocess.Popen] = []
        self.temp_dirs: list[str] = []

    @property
    def address(self) -> str:
        """The Ray (GCS) address, for `--address` on `specc run` and on compiled scripts."""
        return f"127.0.0.1:{self.gcs_port}"

    @property
    def dashboard(self) -> str:
        """The Jobs API address, for `specc submit --address`."""
        return f"http://127.0.0.1:{self.dashboard_port}"

    def start(self, timeout: float = 90) -> LocalCluster:
        self._ray_start(
            "head",
            "--head",
            f"--port={self.gcs_port}",
            f"--dashboard-port={self.dashboard_port}",
            "--dashboard-host=127.0.0.1",
            f"--ray-client-server-port={self.client_port}",
        )
        self._wait_for_port(self.gcs_port, timeout)
        self._ray_start("worker", f"--address={self.address}")
        self._wait_for_port(self.dashboard_port, timeout)
        self._wait_for_nodes(2, timeout)
        return self

    def _ray_start(self, name: str, *args: str) -> None:
        # A short temp dir of its own: Ray's Unix sockets live below it, and a socket path is at most 107 bytes.
        temp_dir = tempfile.mkdtemp(prefix=f"ray-{name}-", dir="/tmp")
        self.temp_dirs.append(temp_dir)
        # Worker ports below Linux's ephemeral range (32768 and up), where free_port() picks: no clash with them.
        workers = 10000 + 1000 * len(self.processes) + (os.getpid() % 10) * 2000
        command = [
            str(BIN / "ray"),
            "start",
            *args,
            f"--num-cpus={self.cpus}",
            "--node-ip-address=127.0.0.1",
            f"--temp-dir={temp_dir}",
            "--disable-usage-stats",
            "--block",
            f"--node-manager-port={free_port()}",
            f"--object-manager-port={free_port()}",
            f"--metrics-export-port={free_port()}",
            f"--runtime-env-agent-port={free_port()}",
            f"--dashboard-agent-grpc-port={free_port()}",
            f"--dashboard-agent-listen-port={free_port()}",
            f"--min-worker-port={workers}",
            f"--max-worker-port={workers + 999}",
        ]
        log = open(self.root / f"{name}.log", "wb")  # noqa: SIM115 - open for the life of the node
        self.processes.append(
            subprocess.Popen(command, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        )

    def _wait_for_port(self, port: int, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self._check_alive()
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.3)
        raise TimeoutError(f"nothing listens on port {port} after {timeout} s: {self.logs()}")

    def _wait_for_nodes(self, count: int, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self._check_alive()
            status = subprocess.run(
                [str(BIN / "ray"), "status", f"--address={self.address}"],
                env=self.env,
                capture_output=True,
                text=True,
                timeout=60,
            )
            active = status.stdout.split("Pending:")[0].count(" node_")
            if active >= count:
                return
            time.sleep(1)
        raise TimeoutError(f"fewer than {count} nodes after {timeout} s: {self.logs()}")

    def _check_alive(self) -> None:
        for process in self.processes:
            if process.poll() is not None:
                raise RuntimeError(f"`ray start` exited with {process.returncode}: {self.logs()}")

    def logs(self) -> str:
        return "\n".join(
            f"--- {path.name}\n{path.read_text(errors='replace')[-2000:]}" for path in sorted(self.root.glob("*.log"))
        )

    def stop(self) -> None:
        """The worker node, then the head: SIGTERM to each `ray start --block`, then SIGKILL to its group."""
        for process in reversed(self.processes):
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 5  # `ray start --block` rarely exits on SIGTERM alone: its group is killed next
        for process in reversed(self.processes):
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)  # the node's processes share the group of its `ray start`
            process.wait()
        for temp_dir in self.temp_dirs:
            shutil.rmtree(temp_dir, ignore_errors=True)

    def run(self, *args, cwd, timeout: float = 300) -> subprocess.CompletedProcess:
        """A client command (specc, python, ray) with the cluster's token in its environment."""
        try:
            return subprocess.run(
                list(map(str, args)), cwd=cwd, env=self.env, capture_output=True, text=True, timeout=timeout
            )
        except subprocess.TimeoutExpired as expired:
            raise AssertionError(
                f"{args} did not finish within {timeout} s:\n{expired.stdout}\n{expired.stderr}"
            ) from None
