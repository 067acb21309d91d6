"""End-to-end fixtures: one real local Ray shared by the in-process tests, spec files in tmp_path, helpers
that read a run directory, and subprocess runners for the CLI and compiled scripts.

Nothing here mocks Ray or torch. The session Ray is started by the first test that asks for it and shut
down at the end of the session; subprocesses start (and stop) their own Ray.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures"
PYTHON = sys.executable  # the venv's interpreter: specc, ray and torch are installed there
TRACE = os.environ.get("SPECC_TESTS_TRACE")  # tests/run.py reads there how far this session got, should it end early


def trace(line: str) -> None:
    """A line for tests/run.py (see TRACE), on disk at once: the process may end before pytest's summary."""
    if TRACE:
        with open(TRACE, "a", encoding="utf-8") as handle:
            handle.write(line + "\n")


def pytest_runtest_logstart(nodeid, location):
    trace(f"test {nodeid}")


# Tests of capabilities that few changes touch and that cost minutes each (a two-node cluster of their own, PBT over
# Train runs, data larger than the object store) are marked `in_turn(K)`: share K of SHARES. CI runs one share,
# picked by the commit under test (tests/run.py sets SPECC_E2E_TURN to its id), so over CI runs each share runs about
# one time in SHARES, and the rest of the suite every time. Unset or "all": every test runs.
SHARES = 4
MARKS = {(share,) for share in range(1, SHARES + 1)}  # in_turn's arguments
TURN = "SPECC_E2E_TURN"


def share_this_turn() -> int | None:
    """The share of the in-turn tests to run (1..SHARES), or None for all of them."""
    turn = os.environ.get(TURN, "all").strip()
    if turn == "all":
        return None
    try:
        return int(turn, 16) % SHARES + 1
    except ValueError:
        raise pytest.UsageError(f'{TURN}={turn!r}: expected a commit id, or "all"') from None


LEFT_FOR_LATER = pytest.StashKey[int]()


def pytest_collection_modifyitems(config, items):
    share = share_this_turn()
    kept, later = [], []
    for item in items:
        mark = item.get_closest_marker("in_turn")
        if mark and mark.args not in MARKS:
            raise pytest.UsageError(f"{item.nodeid}: in_turn{mark.args}, expected in_turn(K) for K in 1..{SHARES}")
        (later if mark and share is not None and mark.args[0] != share else kept).append(item)
    config.stash[LEFT_FOR_LATER] = len(later)
    if later:
        config.hook.pytest_deselected(items=later)
        items[:] = kept


def pytest_report_collectionfinish(config, start_path, items):
    """Which share runs, after the collection line (shown with -q too, unlike pytest's header)."""
    share = share_this_turn()
    if share is None:
        return f"in-turn tests: all {SHARES} shares"
    commit = os.environ[TURN].strip()[:12]
    later = config.stash.get(LEFT_FOR_LATER, 0)
    return (
        f"in-turn tests: share {share} of {SHARES}, picked by commit {commit}; {later} tests of the other shares left "
        "for other commits (every share: tests/run.py --all)"
    )


def pytest_sessionfinish(session, exitstatus):
    trace("finished")


def start_local_ray():
    """A new local Ray of 2 CPUs in this process, with the dashboard: trials that drive a Ray Train run need its
    state API (see the compiled start_ray)."""
    import ray

    # As the compiled scripts start theirs (local_ray() in templates/run/run_dir.py.j2): the dashboard on a port
    # known before it starts, so that Ray Train's placement-group cleaner finds its state API through
    # RAY_API_SERVER_ADDRESS. On its own the cleaner looks for "the" Ray of this machine; with another Ray running
    # here (a developer's, another test session's) it fails, and a stopped trial's Train workers keep their CPUs:
    # the next trial that drives a Trainer then waits for them forever.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {"RAY_API_SERVER_ADDRESS": f"http://127.0.0.1:{port}", "RAY_TRAIN_ENABLE_PREEMPTION_WATCHER": "0"}
    added = {name: value for name, value in env.items() if name not in os.environ}
    os.environ.update(added)  # for the local Ray's processes, which inherit it as they start
    try:
        # "local": always a new Ray of our own, never a cluster someone else started with `ray start` here
        context = ray.init(
            address="local", include_dashboard=True, dashboard_host="127.0.0.1", dashboard_port=port, num_cpus=2
        )
        trace(f"ray {context.address_info['session_dir']}")
    finally:
        for name in added:  # not for this process: `ray job` clients take RAY_API_SERVER_ADDRESS as their address
            del os.environ[name]
    return ray


SETTLE_S = 60  # how long a module's runs may take to give their CPUs back


@pytest.fixture(scope="session")
def session_ray():
    """The session's local Ray, started by the first test that asks for it and shut down at the end."""
    import ray

    if ray.is_initialized():  # pragma: no cover - someone else's Ray: do not take it over
        pytest.skip("a Ray is already initialised in this process")
    try:
        yield start_local_ray()
    finally:
        ray.shutdown()


@pytest.fixture(scope="module")
def local_ray(request, session_ray):
    """The session's real local Ray (2 CPUs), for one module's tests.

    The compiled script's main() and specc.execute.run.run join an initialised Ray and leave it running. After the
    module every CPU must be free again within SETTLE_S: a run that kept some (a Train run whose Tune trial was
    stopped, and whose controller outlived it) would make the next module's runs wait for them forever. Then the
    Ray is started anew, with a warning that names the module, instead of hanging the rest of the session."""
    yield session_ray
    deadline = time.monotonic() + SETTLE_S
    while (held := cpus_held(session_ray)) > 1e-6:
        if time.monotonic() > deadline:
            warnings.warn(
                f"{request.module.__name__} left {held:g} CPU of the session's Ray held {SETTLE_S} s after its runs "
                "ended: Ray started anew for the next module",
                stacklevel=1,
            )
            session_ray.shutdown()
            start_local_ray()
            return
        time.sleep(0.5)


def cpus_held(ray) -> float:
    """The CPUs of the local Ray that something holds."""
    return ray.cluster_resources().get("CPU", 0.0) - ray.available_resources().get("CPU", 0.0)


@pytest.fixture
def spec_file(write_spec):
    """spec_file(text, name="spec.yaml") -> Path: dedented YAML written into tmp_path (tests/conftest.py)."""
    return write_spec


@pytest.fixture
def factory_module(tmp_path):
    """factory_module(fixture_name, as_name) -> Path: a module of tests/e2e/fixtures copied next to the spec.

    Afterwards sys.path loses tmp_path again and the modules imported from tmp_path are forgotten: in local
    mode (num_workers 0) specc imports the factory into this process.
    """

    def copy(fixture_name: str, as_name: str) -> Path:
        target = tmp_path / f"{as_name}.py"
        shutil.copyfile(FIXTURES / fixture_name, target)
        return target

    yield copy
    here = str(tmp_path)
    sys.path[:] = [entry for entry in sys.path if not entry.startswith(here)]
    for name, module in list(sys.modules.items()):
        if str(getattr(module, "__file__", None) or "").startswith(here):
            del sys.modules[name]


# A line Ray forwards to the driver from one of its processes: "(RayTrainWorker pid=123) ...", coloured on a terminal,
# "(pid=123)" for a nameless task, ", ip=..." from another node
RAY_FORWARDED = re.compile(r"^(\x1b\[[0-9;]*m)*\((\S+ )?pid=\d+(, ip=\S+)?\)")


def own_lines(err: str) -> str:
    """stderr less the lines Ray forwards from its processes: those of the session's Ray come whenever its log
    deduplication lets them out, also an earlier test's (a controller's traceback 4 minutes late)."""
    return "\n".join(line for line in err.splitlines() if not RAY_FORWARDED.match(line))


def read_results(run_dir) -> tuple[list[str], list[dict]]:
    """results.csv of a run directory: (header, rows with float values and an int epoch)."""
    with open(Path(run_dir) / "results.csv", newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        rows = [{k: int(v) if k == "epoch" else float(v) for k, v in row.items()} for row in reader]
        return list(reader.fieldnames or []), rows


def read_best(run_dir) -> dict:
    return json.loads((Path(run_dir) / "best.json").read_text(encoding="utf-8"))


def snapshot(directory) -> dict:
    """Every file below `directory`: relative path -> (bytes, mtime_ns)."""
    root = Path(directory)
    return {
        str(p.relative_to(root)): (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(root.rglob("*")) if p.is_file()
    }


@dataclass
class Done:
    returncode: int
    stdout: str
    stderr: str
    seconds: float


def subprocess_env() -> dict:
    """This environment without RAY_ADDRESS: a child given no address starts a Ray of its own, as specc's runs do
    on a user's machine, whatever Ray runs here already (tests/e2e/test_which_ray.py); an explicit --address
    joins one."""
    env = {key: value for key, value in os.environ.items() if key != "RAY_ADDRESS"}
    env["PYTHONUNBUFFERED"] = "1"
    return env


def run_process(args: list[str], cwd, timeout: float, env: dict | None = None) -> Done:
    """Runs `args` in `cwd` (`env`: variables added to subprocess_env()); on timeout the child (the one process
    started here) is killed by its pid."""
    started = time.monotonic()
    process = subprocess.Popen(
        args,
        cwd=cwd,
        env={**subprocess_env(), **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        stdout, stderr = process.communicate()
        pytest.fail(
            f"{' '.join(map(str, args))} did not finish within {timeout} s\n"
            f"--- stdout\n{stdout[-3000:]}\n--- stderr\n{stderr[-3000:]}"
        )
    return Done(process.returncode, stdout, stderr, time.monotonic() - started)


def specc_cli(*args, cwd, timeout: float = 120) -> Done:
    """`specc ARGS` in a fresh interpreter (`python -m specc`)."""
    return run_process([PYTHON, "-m", "specc", *map(str, args)], cwd, timeout)


def python_script(script, *args, cwd, timeout: float = 180, env: dict | None = None) -> Done:
    """`python SCRIPT ARGS`: a compiled script run as users run it (`env`: variables added to its environment)."""
    return run_process([PYTHON, str(script), *map(str, args)], cwd, timeout, env)


def compile_spec(spec, output, *overrides) -> Path:
    """`specc compile SPEC -o OUTPUT` through the CLI entry point (in-process: it starts nothing)."""
    from specc.cli import main

    sets = [arg for override in overrides for arg in ("--set", override)]
    assert main(["compile", str(spec), "-o", str(output), *sets]) == 0
    return Path(output)


def run_spec(spec, *overrides, storage_path, **options):
    """specc.run's path in-process: load (with --set overrides) then specc.execute.run.run.

    `storage_path` is required: a spec's relative run.storage_path is relative to the working directory
    (the repository root under pytest), and tests never write there.
    """
    from specc.api import load
    from specc.execute.run import run

    return run(load(spec, list(overrides)), storage_path=str(storage_path), **options)
