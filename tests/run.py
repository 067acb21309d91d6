"""The whole test suite, as CI runs it (the README's test command): `python tests/run.py [PYTEST ARGS]`.

The end-to-end tests run one at a time in the foreground (each module's Ray takes every CPU). Beside them, at a
lower CPU priority, the fast tests (unit, hostile) run spread over the cores: the end-to-end tests leave 15-40% of
the CPU idle while Ray starts processes and Train's controller polls, and the fast tests, which need about 10
CPU-minutes, fit in that time instead of running before it. Their output is kept and shown once the end-to-end
tests end. The exit status is the worse of the two runs'.

Should the end-to-end run end before pytest's summary, the last thing printed says in which test, with the last lines
of its Ray's logs: a process whose local Ray dies exits at once (status 1), and Ray's last words go to the test's
captured output, which ends with it.

Of the end-to-end tests marked `in_turn` (capabilities few changes touch, minutes each: tests/e2e/conftest.py), one
share runs, picked by the checkout's commit; `--all` runs every one, and so does a checkout without git.

PYTEST ARGS (for example -x or -k NAME) are given to both runs.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FAST = ["tests/unit", "tests/hostile"]
END_TO_END = ["tests/e2e"]
# The lowest priority nice gives: Ray runs its worker processes (the Train workers, Ray Data's tasks) at nice 15, and
# beside 2 busy processes at nice 15, 2 at nice 10 took 8.9 CPU-seconds of 12 (6 s, 2 cores); at 19, 3.6. Their
# share kept the fast tests' subprocess timeouts (30-60 s for a `specc` command): 2,253 passed beside the e2e phase.
NICENESS = 19
TURN = "SPECC_E2E_TURN"  # which share of the in-turn end-to-end tests runs (tests/e2e/conftest.py)
TRACE = "SPECC_TESTS_TRACE"  # the file the end-to-end session names its tests and its Ray in
ENDS_SHOWN = ("raylet.out", "gcs_server.out")  # with the drivers' core-worker logs, of a run that ended early
LOG_LINES = 25


def fast_tests(args: list[str], output) -> subprocess.Popen:
    """The fast tests, spread over the cores, in the background (into `output`)."""
    env = dict(os.environ)
    # A Ray that a fast test starts without an address must be its own, never the end-to-end tests' cluster
    # (tests/e2e/test_cluster.py starts one with `ray start`, which `ray.init()` would join).
    env["RAY_ADDRESS"] = "local"
    # And only where a test means to: a Ray API called before ray.init (ray.put in a Ray Data datasource's
    # constructor) otherwise starts one unasked, which under the end-to-end tests' load can time out starting.
    env["RAY_ENABLE_AUTO_CONNECT"] = "0"
    return background(
        [sys.executable, "-m", "pytest", "-q", "-n", "auto", "-p", "no:cacheprovider", *FAST, *args], output, env
    )


def background(command: list[str], output, env: dict | None = None) -> subprocess.Popen:
    """`command` started in a process group of its own (stopped as a whole if the run is interrupted) in this
    session, at NICENESS, its output into `output`. Not in a session of its own: with the kernel's autogroups (on by
    default, and on this machine) a new session is a scheduling group of its own, which gets an equal share of the CPU
    whatever its nice value. Measured here, 2 busy processes on each side for 6 s: in a new session at nice 10 the
    background took 7.9 CPU-seconds to the foreground's 4.0 (at nice 0); in this session, 1.2 to 10.8."""

    def lowered():  # in the child, before it starts `command`
        os.setpgid(0, 0)
        os.nice(NICENESS)

    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT, preexec_fn=lowered)


def turn(args: list[str], root: Path = ROOT) -> str:
    """SPECC_E2E_TURN for the end-to-end run: "all" with --all, else the id of the commit checked out in `root` (the
    same share for the same commit; over many commits each share about as often), else "all" (no git there)."""
    if "--all" in args:
        return "all"
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--verify", "HEAD"], cwd=root, capture_output=True, text=True, timeout=30, check=True
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "all"
    return head if re.fullmatch(r"[0-9a-f]{40,64}", head) else "all"


def main(args: list[str]) -> int:
    in_turn = turn(args)
    args = [arg for arg in args if arg != "--all"]
    with tempfile.TemporaryFile("w+", encoding="utf-8") as output, tempfile.TemporaryDirectory() as scratch:
        fast = fast_tests(args, output)
        trace = Path(scratch) / "end-to-end"
        try:
            end_to_end = subprocess.call(
                [sys.executable, "-m", "pytest", "-q", *END_TO_END, *args],
                cwd=ROOT,
                env={**os.environ, TRACE: str(trace), TURN: in_turn},
            )
            cut_short = unfinished(trace, end_to_end)
            fast_status = fast.wait()
        finally:
            if fast.poll() is None:  # interrupted: the fast tests' group goes too
                os.killpg(fast.pid, signal.SIGTERM)
                fast.wait()
        output.seek(0)
        print(f"\n===== {' and '.join(FAST)}, run beside the end-to-end tests (exit status {fast_status}) =====")
        sys.stdout.write(output.read())
    print(f"end-to-end tests: exit status {end_to_end}; fast tests: exit status {fast_status}")
    if cut_short:
        print(cut_short)
    return end_to_end or fast_status


def unfinished(trace: Path, status: int) -> str | None:
    """What to say of an end-to-end run that ended before its session did (None if it finished): the test it was
    in and the ends of its local Ray's logs, from `trace`, the lines tests/e2e/conftest.py writes there."""
    lines = trace.read_text(encoding="utf-8").splitlines() if trace.exists() else []
    if "finished" in lines:
        return None
    tests = [line.removeprefix("test ") for line in lines if line.startswith("test ")]
    sessions = [Path(line.removeprefix("ray ")) for line in lines if line.startswith("ray ")]
    where = f"during {tests[-1]}" if tests else "before its first test"
    told = [f"\n===== the end-to-end tests ended {where}, before pytest's summary (exit status {status}) ====="]
    for session in sessions[-1:]:
        for log in sorted((session / "logs").glob("*")):
            if log.name in ENDS_SHOWN or log.name.startswith("python-core-driver-"):
                told.append(f"--- the end of {log}")
                told.extend(log.read_text(encoding="utf-8", errors="replace").splitlines()[-LOG_LINES:])
    return "\n".join(told)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
