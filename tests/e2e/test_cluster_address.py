"""A cluster address where no Ray listens is a clean problem within seconds, not a hang or a traceback
(SPEC §6, §10). Each case runs in a fresh interpreter: Ray must not be initialised there already."""

from __future__ import annotations

import socket

import pytest

from .conftest import compile_spec, python_script, specc_cli

pytestmark = pytest.mark.slow

SPEC = """\
specc: 1
name: nowhere
framework: torch
model: {type: mlp, hidden_sizes: [8]}
dataset: {type: iris}
training: {epochs: 1}
scaling: {num_workers: 0}
"""

BOUND_S = 60


def closed_port() -> int:
    """A local TCP port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# A refused connection (a port nothing listens on; the compiled script's test below takes port 1) and a name no
# resolver knows
@pytest.mark.parametrize("address", ["closed-port", "nosuchhost.invalid:6379"])
def test_specc_run_with_an_unreachable_address(tmp_path, spec_file, address):
    address = f"127.0.0.1:{closed_port()}" if address == "closed-port" else address
    spec = spec_file(SPEC)

    done = specc_cli(
        "run",
        spec,
        "--smoke",
        "--address",
        address,
        "--storage-path",
        tmp_path / "runs",
        cwd=tmp_path,
        timeout=BOUND_S + 30,
    )

    assert done.seconds < BOUND_S, f"took {done.seconds:.0f} s"
    assert done.returncode == 1, done.stderr[-3000:]
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    assert "E402" in done.stderr and address in done.stderr
    assert not (tmp_path / "runs" / "nowhere").exists()  # nothing left that would need --resume next time


def test_compiled_script_with_an_unreachable_address(tmp_path, spec_file):
    spec = spec_file(SPEC)
    script = compile_spec(spec, tmp_path / "nowhere.py")

    done = python_script(
        script,
        "--smoke",
        "--address",
        "127.0.0.1:1",
        "--storage-path",
        tmp_path / "runs",
        cwd=tmp_path,
        timeout=BOUND_S + 30,
    )

    assert done.seconds < BOUND_S, f"took {done.seconds:.0f} s"
    assert done.returncode != 0
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    assert "127.0.0.1:1" in done.stderr
    assert not (tmp_path / "runs" / "nowhere").exists()
