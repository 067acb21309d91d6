"""Running compiled search scripts as child processes and reading their trials' results.

Shared by bench/tune_shapes.py and bench/asha_vs_fifo.py, which import it as a sibling module: run as
`python bench/<name>.py`, Python puts bench/ first on sys.path.
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path


# -- the scripts ---------------------------------------------------------------------------------
def write_scripts(workdir: Path, sources: dict[str, Callable[[Path], str]]) -> dict[str, Path]:
    """{key: workdir/<key>.py}, each file holding `source(path)` of its entry in `sources`."""
    scripts = {}
    for key, source in sources.items():
        path = workdir / f"{key}.py"
        path.write_text(source(path))
        scripts[key] = path
    return scripts


# -- running a compiled script -------------------------------------------------------------------
def child_env(ray_tmp: Path) -> dict[str, str]:
    """A local Ray of the child's own (never one RAY_ADDRESS points at), its session files under `ray_tmp`."""
    env = {key: value for key, value in os.environ.items() if key != "RAY_ADDRESS"}
    return {**env, "PYTHONUNBUFFERED": "1", "RAY_TMPDIR": str(ray_tmp)}


def run_script(script: Path, storage: Path, log: Path, ray_tmp: Path) -> tuple[float, float, int]:
    """(launch time as time.time(), wall seconds, exit status) of `python script --storage-path storage`.
    Interrupted, the child gets SIGINT (its `finally` shuts its Ray down), then SIGKILL after 30 s."""
    with open(log, "wb") as out:
        launched, start = time.time(), time.perf_counter()
        child = subprocess.Popen(
            [sys.executable, str(script), "--storage-path", str(storage)],
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=script.parent,
            env=child_env(ray_tmp),
            start_new_session=True,
        )
        try:
            status = child.wait()
        except BaseException:
            stop_child(child)
            raise
        return launched, time.perf_counter() - start, status


def stop_child(child: subprocess.Popen) -> None:
    for sig, grace in ((signal.SIGINT, 30), (signal.SIGKILL, 10)):
        if child.poll() is not None:
            return
        try:
            os.killpg(child.pid, sig)  # the child's own process group (start_new_session)
        except ProcessLookupError:
            return
        with contextlib.suppress(subprocess.TimeoutExpired):
            child.wait(timeout=grace)


def fail(what: str, status: int, log: Path) -> None:
    tail = log.read_text(errors="replace").splitlines()[-40:]
    sys.exit(f"{what}: exit {status}, expected 0 (last lines of {log}):\n" + "\n".join(tail))


# -- what a run left -----------------------------------------------------------------------------
@dataclass
class Child:
    """One finished run of a script."""

    storage: Path  # its --storage-path
    log: Path  # its output
    launched: float  # time.time() at launch
    wall: float  # launch to exit, seconds
    load: float  # 1-minute load average as it started


def read_results(run_dir: Path, log: Path) -> list[dict[str, str]]:
    """The rows of the run's results.csv, one per trial."""
    results = run_dir / "results.csv"
    if not results.is_file():
        sys.exit(f"no results.csv in {run_dir} (log: {log})")
    with open(results, newline="") as handle:
        return list(csv.DictReader(handle))


def result_files(run_dir: Path, rows: list[dict[str, str]], log: Path) -> list[Path]:
    """Each trial's result.json (Tune's, in trial_*: the tune_train runs' train-trial_* hold none)."""
    paths = sorted(run_dir.glob("trial_*/result.json"))
    if len(paths) != len(rows):
        sys.exit(f"{run_dir}: {len(rows)} trials in results.csv, {len(paths)} result.json files (log: {log})")
    return paths


def trial_results(path: Path) -> tuple[float, list[tuple[float, dict]]]:
    """(estimated start, [(estimated wall-clock time, result) per result]) of one trial's result.json.

    Ray stamps each result with `timestamp`, whole seconds (floor of time.time()), and `time_total_s`, the
    seconds since the trial's first training call as a float. Each `timestamp - time_total_s` is at most
    1 s before the start, never after it (give or take Tune's own gaps between calls, milliseconds): their
    maximum is the start to within a second (closer the more results there are); start + time_total_s,
    kept within its whole second, is each result's time.
    """
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    start = max(row["timestamp"] - row["time_total_s"] for row in rows)
    times = []
    for row in rows:
        at = min(max(start + row["time_total_s"], row["timestamp"]), row["timestamp"] + 1)
        times.append((at, row))
    return start, times


def between_results(times: list[tuple[float, dict]]) -> float:
    """The mean time_total_s between a trial's results after the first (an epoch and its report); 2 or more."""
    return (times[-1][1]["time_total_s"] - times[0][1]["time_total_s"]) / (len(times) - 1)


# -- the rounds ----------------------------------------------------------------------------------
@dataclass
class Variant:
    key: str
    label: str
    script: Path
    runs: list = field(default_factory=list)  # what the bench read from each of its runs

    def median(self, figure) -> float:
        """The median over runs of `figure(run)` (inf, as in never reached, sorts last)."""
        return statistics.median(figure(run) for run in self.runs)


def measure(variants: list[Variant], rounds: int, workdir: Path, keep: bool, read, summary) -> None:
    """Round-robin, alternating which goes first; each run into its own fresh storage and Ray directory.
    `read(child)` is what a run left, kept in its variant's runs; `summary(run)` ends its progress line."""
    for round_ in range(rounds):
        for variant in variants if round_ % 2 == 0 else variants[::-1]:
            storage = workdir / f"{variant.key}-{round_}"
            log = workdir / f"{variant.key}-{round_}.log"
            load = os.getloadavg()[0]
            print(f"  round {round_ + 1}/{rounds}: {variant.label} (load {load:.2f}) ...", end="", flush=True)
            run = read(run_once(variant, storage, log, load))
            variant.runs.append(run)
            print(f" {summary(run)}", flush=True)
            if not keep:
                shutil.rmtree(storage)
                log.unlink()


def run_once(variant: Variant, storage: Path, log: Path, load: float) -> Child:
    """Run the variant's script into `storage`, its output into `log`; a failed run stops the bench."""
    ray_tmp = Path(tempfile.mkdtemp(prefix="ray-"))  # short: Ray's socket paths live under it
    try:
        launched, wall, status = run_script(variant.script, storage, log, ray_tmp)
    finally:
        shutil.rmtree(ray_tmp, ignore_errors=True)
    if status != 0:
        fail(variant.label, status, log)
    return Child(storage, log, launched, wall, load)


# -- the setting ---------------------------------------------------------------------------------
def versions() -> str:
    from importlib.metadata import version

    return ", ".join(f"{name} {version(name)}" for name in ("specc", "ray", "torch"))


def print_setting() -> None:
    print(f"Python {platform.python_version()} ({sys.executable}), {versions()}")
    print(f"{os.cpu_count()} CPUs, {platform.platform()}")


def load_line(loads: list[float]) -> str:
    cpus = os.cpu_count() or 1
    return f"load average (1 min) as runs started: {min(loads):.2f} to {max(loads):.2f} on {cpus} CPUs" + (
        " - a busy machine: expect noise of 10% or more" if max(loads) > 0.5 * cpus else ""
    )


@contextlib.contextmanager
def scratch(prefix: str, keep: bool) -> Iterator[Path]:
    """A fresh temporary directory for the scripts, logs and runs: removed after, unless `keep`."""
    workdir = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield workdir
    finally:
        if keep:
            print(f"logs, scripts and run directories kept in {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
