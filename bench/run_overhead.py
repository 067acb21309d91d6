"""What `specc run` costs over the same experiment written by hand as a Ray Train script, in one run.

(a) `python bench/handwritten_digits_mlp.py --storage-path <fresh dir>`   the yardstick
(b) `specc run specs/digits_mlp.yaml --storage-path <fresh dir>`          goal: (b) / (a) <= 1.0
(c) `specc run --dry-run specs/digits_mlp.yaml`: specc's own work before Ray starts (load, validate,
    compile, print the plan)

Both (a) and (b) train the digits MLP [64] with SGD (lr 0.1, momentum 0.9), batch 64, 5 epochs on 2
Ray Train workers, a checkpoint every epoch, 2 kept; each is a fresh subprocess that starts (and stops)
its own local Ray, writing into its own fresh storage directory. They run interleaved, alternating
which goes first; figures are medians. Each run's final val_accuracy (the last epoch's) is shown to
check that both train the same model to the same place.

Run:  .venv/bin/python bench/run_overhead.py [--quick] [--json] [--keep-logs]   (README.md: what it prints)
"""

from __future__ import annotations

import argparse
import ast
import csv
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

BIN = Path(sys.executable).parent
SPECC = str(BIN / "specc")
ROOT = Path(__file__).resolve().parents[1]
SPEC = "specs/digits_mlp.yaml"
HANDWRITTEN = "bench/handwritten_digits_mlp.py"
GOAL = 1.0


@dataclass(frozen=True)
class Settings:
    warmups: int  # unmeasured rounds of (a) and (b) first
    repetitions: int
    dry_warmups: int
    dry_runs: int


FULL = Settings(warmups=1, repetitions=3, dry_warmups=2, dry_runs=10)
QUICK = Settings(warmups=0, repetitions=1, dry_warmups=1, dry_runs=3)


@dataclass
class Timing:
    label: str
    seconds: list[float] = field(default_factory=list)
    final_accuracy: list[float] = field(default_factory=list)
    checkpoints: list[int] = field(default_factory=list)
    phases: list[dict[str, float]] = field(default_factory=list)
    loads: list[float] = field(default_factory=list)  # 1-minute load average as each run starts

    def phase_median(self, name: str) -> float | None:
        values = [run[name] for run in self.phases if name in run]
        return statistics.median(values) if values else None

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    def figures(self) -> dict:
        return {
            "label": self.label,
            "runs": len(self.seconds),
            "median_s": self.median,
            "min_s": min(self.seconds),
            "max_s": max(self.seconds),
            "seconds": self.seconds,
            "final_val_accuracy": self.final_accuracy,
            "checkpoints_kept": self.checkpoints,
            "phases_s": self.phases,
            "load_average_at_start": self.loads,
        }


# Lines both runs print (Ray's own log lines) that mark the end of a phase, and whether the first or the
# last such line counts; the parent notes when each arrives. Workers' lines reach the driver through
# Ray's log monitor, in batches: a phase boundary is good to a few tenths of a second.
MARKERS = {
    "ray_up": ("Started a local Ray instance", "first"),
    "workers_up": ("Setting up process group", "first"),  # the first line a training worker prints
    "first_epoch": ("Reporting training result", "first"),  # epoch 0 reported
    "trained": ("Reporting training result", "last"),  # the last epoch reported (both ranks)
}
PHASES = (  # (name, from marker, to marker); None is the process's start or exit
    ("start, imports, ray.init", None, "ray_up"),
    ("Train controller, worker group", "ray_up", "workers_up"),
    ("process group, data, epoch 0", "workers_up", "first_epoch"),
    ("epochs 1-4 + checkpoints", "first_epoch", "trained"),
    ("results, ray.shutdown, exit", "trained", None),
)


def run_logged(command: list[str], log: Path) -> tuple[float, int, dict[str, float]]:
    """(wall seconds, exit status, {marker: seconds since start of its last line}) of one child; its
    stdout and stderr go to `log`, each line prefixed with the seconds since the start when it arrived."""
    seen: dict[str, float] = {}
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    with open(log, "wb") as out:
        start = time.perf_counter()
        child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=ROOT, env=env)
        for line in child.stdout:
            now = time.perf_counter() - start
            out.write(f"[{now:8.3f}s] ".encode() + line)
            for key, (text, which) in MARKERS.items():
                if text.encode() in line and (which == "last" or key not in seen):
                    seen[key] = now
        status = child.wait()
        return time.perf_counter() - start, status, seen


def phases(seen: dict[str, float], total: float) -> dict[str, float]:
    """Seconds per phase, from the marker times; a phase whose marker was not seen is left out."""
    at = {None: 0.0, **seen}
    out = {}
    for name, begin, end in PHASES:
        if begin in at and (end is None or end in at):
            out[name] = (total if end is None else at[end]) - at[begin]
    return out


def fail(what: str, status: int, log: Path) -> None:
    tail = log.read_text(errors="replace").splitlines()[-40:]
    sys.exit(f"{what}: exit {status}, expected 0 (last lines of {log}):\n" + "\n".join(tail))


# -- the two runs --------------------------------------------------------------------------------
def handwritten(storage: Path) -> list[str]:
    return [sys.executable, HANDWRITTEN, "--storage-path", str(storage)]


def specc_run(storage: Path) -> list[str]:
    return [SPECC, "run", SPEC, "--storage-path", str(storage)]


def handwritten_outcome(storage: Path, log: Path) -> tuple[float, int]:
    """(final val_accuracy from the script's `final metrics: {...}` line, checkpoints kept)."""
    marker = "] final metrics: "  # after the arrival time run_logged puts before each line
    lines = [line for line in log.read_text(errors="replace").splitlines() if marker in line]
    if not lines:
        sys.exit(f"no 'final metrics:' line in {log}")
    metrics = ast.literal_eval(lines[-1].split(marker, 1)[1])
    return float(metrics["val_accuracy"]), kept(storage / "digits-mlp-handwritten")


def specc_outcome(storage: Path, log: Path) -> tuple[float, int]:
    """(final val_accuracy: the last row of results.csv, checkpoints kept). best.json holds the best epoch."""
    run_dir = storage / "digits-mlp"
    with open(run_dir / "results.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    if not rows or not (run_dir / "best.json").is_file():
        sys.exit(f"specc run left no results in {run_dir} (log: {log})")
    return float(rows[-1]["val_accuracy"]), kept(run_dir)


def kept(run_dir: Path) -> int:
    return sum(1 for path in run_dir.glob("checkpoint_*") if path.is_dir())


RUNS = {
    "hand": ("hand-written Ray Train script", handwritten, handwritten_outcome),
    "specc": ("specc run", specc_run, specc_outcome),
}


def measure_runs(settings: Settings, workdir: Path, keep_logs: bool) -> dict[str, Timing]:
    """Round-robin, alternating which goes first; each run into its own fresh storage directory."""
    timings = {key: Timing(label) for key, (label, _, _) in RUNS.items()}
    keys = list(RUNS)
    total = settings.warmups + settings.repetitions
    for round_ in range(total):
        for key in keys if round_ % 2 == 0 else keys[::-1]:
            label, command, outcome = RUNS[key]
            storage, log = workdir / f"{key}-{round_}", workdir / f"{key}-{round_}.log"
            storage.mkdir()
            warm = round_ < settings.warmups
            load = os.getloadavg()[0]
            print(
                f"  round {round_ + 1}/{total}{' (warm-up)' if warm else ''}: {label} (load {load:.2f}) ...",
                end="",
                flush=True,
            )
            seconds, status, seen = run_logged(command(storage), log)
            if status != 0:
                fail(label, status, log)
            accuracy, checkpoints = outcome(storage, log)
            print(f" {seconds:.1f}s, val_accuracy {accuracy:.4f}", flush=True)
            if not warm:
                timings[key].seconds.append(seconds)
                timings[key].final_accuracy.append(accuracy)
                timings[key].checkpoints.append(checkpoints)
                timings[key].phases.append(phases(seen, seconds))
                timings[key].loads.append(load)
            if not keep_logs:
                shutil.rmtree(storage)
                log.unlink()
    return timings


def measure_dry_run(settings: Settings, workdir: Path) -> Timing:
    timing = Timing("specc run --dry-run")
    log = workdir / "dry-run.log"
    for index in range(settings.dry_warmups + settings.dry_runs):
        seconds, status, _ = run_logged([SPECC, "run", "--dry-run", SPEC], log)
        if status != 0:
            fail(timing.label, status, log)
        if index >= settings.dry_warmups:
            timing.seconds.append(seconds)
    return timing


# -- reporting -----------------------------------------------------------------------------------
def versions() -> str:
    from importlib.metadata import version

    return ", ".join(f"{name} {version(name)}" for name in ("ray", "torch", "scikit-learn"))


def report(timings: dict[str, Timing], dry: Timing, settings: Settings) -> dict:
    hand, specc = timings["hand"], timings["specc"]
    ratio = specc.median / hand.median
    print()
    print(f"{'command':<32}{'runs':>5}{'median':>10}{'min':>10}{'max':>10}   final val_accuracy (each run)")
    for timing in (hand, specc):
        accuracies = " ".join(f"{value:.4f}" for value in timing.final_accuracy)
        print(
            f"{timing.label:<32}{len(timing.seconds):>5}{timing.median:>9.2f}s{min(timing.seconds):>9.2f}s"
            f"{max(timing.seconds):>9.2f}s   {accuracies}"
        )
    print(f"{dry.label:<32}{len(dry.seconds):>5}{dry.median:>9.3f}s{min(dry.seconds):>9.3f}s{max(dry.seconds):>9.3f}s")
    print()
    print("where the time goes (medians; phase ends are Ray log lines as the parent receives them):")
    print(f"{'phase':<34}{'hand':>8}{'specc':>10}{'specc-hand':>12}")
    for name, _, _ in PHASES:
        a, b = hand.phase_median(name), specc.phase_median(name)
        if a is not None and b is not None:
            print(f"{name:<34}{a:>7.2f}s{b:>9.2f}s{b - a:>+11.2f}s")
    print()
    verdict = "met" if ratio <= GOAL else "MISSED"
    print(f"specc run / hand-written: {ratio:.3f}x (goal <= {GOAL}: {verdict})")
    print(f"difference of medians: {specc.median - hand.median:+.2f}s per run")
    print(f"specc before Ray (dry run): {dry.median * 1000:.0f} ms, {dry.median / specc.median:.1%} of a specc run")
    loads = hand.loads + specc.loads
    print(
        f"load average (1 min) as measured runs started: {min(loads):.2f} to {max(loads):.2f} on {os.cpu_count()} CPUs"
        + (" - a busy machine: expect noise of 10% or more" if max(loads) > 0.5 * (os.cpu_count() or 1) else "")
    )
    print(
        f"checkpoints kept: hand-written {sorted(set(hand.checkpoints))}, specc {sorted(set(specc.checkpoints))}"
        " (goal: 2 each)"
    )
    return {
        "ratio": ratio,
        "goal": GOAL,
        "settings": settings.__dict__,
        "timings": {"hand": hand.figures(), "specc": specc.figures(), "dry_run": dry.figures()},
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1 run each, no warm-up (about 1.5 minutes)")
    parser.add_argument("--json", action="store_true", help="every figure as one JSON object at the end")
    parser.add_argument("--keep-logs", action="store_true", help="keep each run's output and storage directory")
    parser.add_argument("--repetitions", type=int, help="measured rounds (default: 3, --quick: 1)")
    args = parser.parse_args(argv)
    settings = QUICK if args.quick else FULL
    if args.repetitions:
        settings = Settings(settings.warmups, args.repetitions, settings.dry_warmups, settings.dry_runs)

    print(f"Python {platform.python_version()} ({sys.executable}), {versions()}")
    print(f"{os.cpu_count()} CPUs, {platform.platform()}")
    print(
        f"spec {SPEC} vs {HANDWRITTEN}: {settings.warmups} warm-up round(s), {settings.repetitions} measured, "
        "interleaved; each run a fresh process, local Ray, fresh storage directory"
    )
    workdir = Path(tempfile.mkdtemp(prefix="specc-bench-run-"))
    try:
        dry = measure_dry_run(settings, workdir)
        timings = measure_runs(settings, workdir, args.keep_logs)
        figures = report(timings, dry, settings)
    finally:
        if args.keep_logs:
            print(f"logs and run directories kept in {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    if args.json:
        print(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
