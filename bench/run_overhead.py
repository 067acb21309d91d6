"""What `specc run` costs over the same experiment written by hand as a Ray Train script, in one run.

(a) `python bench/handwritten_digits_mlp.py --storage-path <fresh dir> --epochs N`   the yardstick
(b) `specc run specs/digits_mlp.yaml --storage-path <fresh dir> --set training.epochs=N`
    goal: (b) / (a) <= 0.5 for 5 epochs, <= 0.4 for 20 (issue 16)
(c) `specc run --dry-run specs/digits_mlp.yaml`: specc's own work before Ray starts (load, validate,
    compile, print the plan)

Both (a) and (b) train the digits MLP [64] with SGD (lr 0.1, momentum 0.9), batch 64, N epochs on 2
Ray Train workers, a checkpoint every epoch, 2 kept; each is a fresh subprocess that starts (and stops)
its own local Ray, writing into its own fresh storage directory. They run interleaved, alternating
which goes first; figures are medians. Each run's final val_accuracy (the last epoch's) is shown to
check that both train the same model to the same place. The hand-written script is left as a Ray user
writes it: Ray Train's default controller poll (2 s) is what each of its epochs waits for.

For each N it prints the timeline of a run, phase by phase, for both: Ray up, the Train controller, the
worker group, data and model, epoch 0, each later epoch, results written, shutdown.

--before DIR adds a third run to every round: the same `specc run` with another specc tree (DIR, e.g. a
`git worktree` of an earlier commit) on PYTHONPATH, so that a change to specc is measured against the same
hand-written runs, interleaved, on the same machine's load.

Run:  .venv/bin/python bench/run_overhead.py [--quick] [--json] [--keep-logs] [--epochs 5 20] [--before DIR]
"""

from __future__ import annotations

import argparse
import ast
import csv
import itertools
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

BIN = Path(sys.executable).parent
SPECC = str(BIN / "specc")
ROOT = Path(__file__).resolve().parents[1]
SPEC = "specs/digits_mlp.yaml"
HANDWRITTEN = "bench/handwritten_digits_mlp.py"
GOALS = {5: 0.5, 20: 0.4}  # specc run / hand-written, by epochs (issue 16)


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


# Lines both runs print (Ray's own log lines; specc's with --verbose) that mark a moment of the run; the first
# such line counts. Workers' lines reach the driver through Ray's log monitor, in batches: a moment is good to a
# few tenths of a second. "Reporting training result N" marks epoch N-1's report (both ranks print it).
MARKERS = {
    "ray_up": ("Started a local Ray instance", "Ray dashboard"),
    "controller": ("Requesting resources",),  # the Train controller's first line
    "workers_up": ("Started training worker group",),
    "loop": ("Wrapping provided model in DistributedDataParallel",),  # data loaded, model built: epoch 0 begins
    "fit_returned": ("final metrics:",),  # the hand-written script; specc: best.json written (see run_logged)
}
REPORT = re.compile(rb"Reporting training result (\d+):")
TIMELINE = (  # (phase, from moment, to moment); None is the process's start or exit
    ("start, imports, ray.init", None, "ray_up"),
    ("Train controller up", "ray_up", "controller"),
    ("worker group (processes, process group)", "controller", "workers_up"),
    ("data, model, DDP", "workers_up", "loop"),
    ("epoch 0 incl. first batch + checkpoint", "loop", "report 1"),
    ("later epochs (each, median)", "report 1", "epochs"),
    ("last report -> results written", "last report", "fit_returned"),
    ("ray.shutdown, exit", "fit_returned", None),
)


def run_logged(
    command: list[str], log: Path, results: Path | None = None, tree: Path | None = None
) -> tuple[float, int, dict[str, float]]:
    """(wall seconds, exit status, {moment: seconds since start}) of one child; its stdout and stderr go to `log`,
    each line prefixed with the seconds since the start when it arrived. `results`: a file whose modification
    time marks fit_returned (specc writes best.json when fit() has returned). `tree`: the specc tree the child
    imports (PYTHONPATH), None for this interpreter's own."""
    seen: dict[str, float] = {}
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "RAY_ADDRESS": "local"}  # a Ray of its own, never a cluster here
    env |= tree_env(tree)
    with open(log, "wb") as out:
        wall, start = time.time(), time.perf_counter()
        child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=ROOT, env=env)
        for line in child.stdout:
            now = time.perf_counter() - start
            out.write(f"[{now:8.3f}s] ".encode() + line)
            for key, texts in MARKERS.items():
                if key not in seen and any(text.encode() in line for text in texts):
                    seen[key] = now
            report = REPORT.search(line)
            if report and f"report {int(report[1])}" not in seen:
                seen[f"report {int(report[1])}"] = now
        status = child.wait()
        if results is not None and results.is_file():
            seen["fit_returned"] = results.stat().st_mtime - wall
        return time.perf_counter() - start, status, seen


def phases(seen: dict[str, float], total: float) -> dict[str, float]:
    """Seconds per phase of TIMELINE, from the moments seen; a phase whose moments were not seen is left out.
    "later epochs" is the median time between consecutive reports after the first."""
    reports = sorted((int(key.split()[1]), at) for key, at in seen.items() if key.startswith("report "))
    at = {None: 0.0, **seen}
    if reports:
        at["last report"] = reports[-1][1]
    gaps = [later - earlier for (_, earlier), (_, later) in itertools.pairwise(reports)]
    out = {}
    for name, begin, end in TIMELINE:
        if end == "epochs":
            if gaps:
                out[name] = statistics.median(gaps)
        elif begin in at and (end is None or end in at):
            out[name] = (total if end is None else at[end]) - at[begin]
    return out


def fail(what: str, status: int, log: Path) -> None:
    tail = log.read_text(errors="replace").splitlines()[-40:]
    sys.exit(f"{what}: exit {status}, expected 0 (last lines of {log}):\n" + "\n".join(tail))


# -- the runs ------------------------------------------------------------------------------------
def tree_env(tree: Path | None) -> dict[str, str]:
    """The environment that makes the `specc` command import the specc of `tree` (None: its own)."""
    return {} if tree is None else {"PYTHONPATH": str(tree)}


def handwritten(storage: Path, epochs: int, tree: Path | None = None) -> list[str]:
    return [sys.executable, HANDWRITTEN, "--storage-path", str(storage), "--epochs", str(epochs)]


def specc_run(storage: Path, epochs: int, tree: Path | None = None) -> list[str]:
    """`specc run`, with Ray's lines shown (--verbose, where specc has it) so that the timeline can be read."""
    env = {**os.environ, **tree_env(tree)}
    help_text = subprocess.run([SPECC, "run", "--help"], capture_output=True, text=True, env=env).stdout
    shown = ["--verbose"] if "--verbose" in help_text else []
    return [SPECC, "run", SPEC, "--storage-path", str(storage), "--set", f"training.epochs={epochs}", *shown]


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


@dataclass(frozen=True)
class Run:
    label: str
    command: Callable[[Path, int, Path | None], list[str]]  # (storage, epochs, tree) -> argv
    outcome: Callable[[Path, Path], tuple[float, int]]  # (storage, log) -> (final val_accuracy, checkpoints kept)
    results: str | None  # the file whose writing marks "results written"
    tree: Path | None = None  # the specc tree on PYTHONPATH (None: this interpreter's own)


def runs(before: Path | None) -> dict[str, Run]:
    found = {
        "hand": Run("hand-written Ray Train script", handwritten, handwritten_outcome, None),
        "specc": Run("specc run", specc_run, specc_outcome, "digits-mlp/best.json"),
    }
    if before is not None:
        found["before"] = Run("specc run, --before's specc", specc_run, specc_outcome, "digits-mlp/best.json", before)
    return found


def measure_runs(
    settings: Settings, workdir: Path, keep_logs: bool, epochs: int, before: Path | None = None
) -> dict[str, Timing]:
    """Round-robin, alternating which goes first; each run into its own fresh storage directory."""
    which = runs(before)
    timings = {key: Timing(run.label) for key, run in which.items()}
    keys = list(which)
    total = settings.warmups + settings.repetitions
    for round_ in range(total):
        for key in keys if round_ % 2 == 0 else keys[::-1]:
            run = which[key]
            label, outcome, results = run.label, run.outcome, run.results
            storage, log = workdir / f"{key}-{epochs}-{round_}", workdir / f"{key}-{epochs}-{round_}.log"
            storage.mkdir()
            warm = round_ < settings.warmups
            load = os.getloadavg()[0]
            print(
                f"  {epochs} epochs, round {round_ + 1}/{total}{' (warm-up)' if warm else ''}: {label}"
                f" (load {load:.2f}) ...",
                end="",
                flush=True,
            )
            command = run.command(storage, epochs, run.tree)
            seconds, status, seen = run_logged(command, log, results and storage / results, run.tree)
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


def measure_dry_run(settings: Settings, workdir: Path, tree: Path | None = None) -> Timing:
    timing = Timing("specc run --dry-run" + (", --before's specc" if tree else ""))
    log = workdir / "dry-run.log"
    for index in range(settings.dry_warmups + settings.dry_runs):
        seconds, status, _ = run_logged([SPECC, "run", "--dry-run", SPEC], log, tree=tree)
        if status != 0:
            fail(timing.label, status, log)
        if index >= settings.dry_warmups:
            timing.seconds.append(seconds)
    return timing


# -- reporting -----------------------------------------------------------------------------------
def specc_tree(tree: Path | None = None) -> str:
    """Which specc the `specc` command runs: its package directory and that tree's commit. PYTHONPATH points it at
    another tree (--before, or the environment's); -P keeps the cwd off the probe's path, as the console script
    has it."""
    probe = "import specc; print(specc.__file__)"
    env = {**os.environ, **tree_env(tree)}
    where = subprocess.run([sys.executable, "-P", "-c", probe], capture_output=True, text=True, env=env).stdout.strip()
    package = Path(where).parent
    commit = subprocess.run(
        ["git", "-C", str(package), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    return f"{package} ({'commit ' + commit if commit else 'not a git tree'})"


def versions() -> str:
    from importlib.metadata import version

    return ", ".join(f"{name} {version(name)}" for name in ("ray", "torch", "scikit-learn"))


def report(timings: dict[str, Timing], epochs: int) -> dict:
    hand, specc, before = timings["hand"], timings["specc"], timings.get("before")
    ratio, goal = specc.median / hand.median, GOALS[epochs]
    print()
    print(f"{epochs} epochs")
    print(f"{'command':<32}{'runs':>5}{'median':>10}{'min':>10}{'max':>10}   final val_accuracy (each run)")
    for timing in timings.values():
        accuracies = " ".join(f"{value:.4f}" for value in timing.final_accuracy)
        print(
            f"{timing.label:<32}{len(timing.seconds):>5}{timing.median:>9.2f}s{min(timing.seconds):>9.2f}s"
            f"{max(timing.seconds):>9.2f}s   {accuracies}"
        )
    print()
    print("timeline (medians; moments are Ray's log lines as the parent receives them, and specc's best.json):")
    extra = f"{'before':>10}{'specc-before':>14}" if before else ""
    print(f"{'phase':<42}{'hand':>8}{'specc':>10}{'specc-hand':>12}{extra}")
    for name, _, _ in TIMELINE:
        a, b = hand.phase_median(name), specc.phase_median(name)
        if a is not None and b is not None:
            c = before.phase_median(name) if before else None
            extra = f"{c:>9.2f}s{b - c:>+13.2f}s" if c is not None else ""
            print(f"{name:<42}{a:>7.2f}s{b:>9.2f}s{b - a:>+11.2f}s{extra}")
    verdict = "met" if ratio <= goal else "MISSED"
    print(f"specc run / hand-written, {epochs} epochs: {ratio:.3f}x (goal <= {goal}: {verdict})")
    print(f"difference of medians: {specc.median - hand.median:+.2f}s per run")
    if before:
        print(f"--before's specc run / hand-written: {before.median / hand.median:.3f}x")
        print(
            f"specc run / --before's: {specc.median / before.median:.3f}x"
            f" ({specc.median - before.median:+.2f}s per run; per round: "
            + ", ".join(f"{now / then:.3f}x" for now, then in zip(specc.seconds, before.seconds, strict=True))
            + ")"
        )
    loads = [load for timing in timings.values() for load in timing.loads]
    print(
        f"load average (1 min) as measured runs started: {min(loads):.2f} to {max(loads):.2f} on {os.cpu_count()} CPUs"
        + (" - a busy machine: expect noise of 10% or more" if max(loads) > 0.5 * (os.cpu_count() or 1) else "")
    )
    print(
        f"checkpoints kept: hand-written {sorted(set(hand.checkpoints))}, specc {sorted(set(specc.checkpoints))}"
        " (the same for both: Ray keeps the 2 best and the latest)"
    )
    return {
        "epochs": epochs,
        "ratio": ratio,
        "goal": goal,
        **(
            {"ratio_before": before.median / hand.median, "specc_over_before": specc.median / before.median}
            if before
            else {}
        ),
        "timings": {key: timing.figures() for key, timing in timings.items()},
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1 run each, no warm-up (about 3 minutes)")
    parser.add_argument("--json", action="store_true", help="every figure as one JSON object at the end")
    parser.add_argument("--keep-logs", action="store_true", help="keep each run's output and storage directory")
    parser.add_argument("--repetitions", type=int, help="measured rounds (default: 3, --quick: 1)")
    parser.add_argument("--epochs", type=int, nargs="+", choices=sorted(GOALS), default=sorted(GOALS))
    parser.add_argument(
        "--before",
        type=Path,
        metavar="DIR",
        help="another specc tree (e.g. a git worktree of an earlier commit): its specc run joins every round",
    )
    args = parser.parse_args(argv)
    settings = QUICK if args.quick else FULL
    if args.repetitions:
        settings = Settings(settings.warmups, args.repetitions, settings.dry_warmups, settings.dry_runs)

    print(f"Python {platform.python_version()} ({sys.executable}), {versions()}")
    print(f"{os.cpu_count()} CPUs, {platform.platform()}")
    before = args.before.resolve() if args.before else None
    if before and not (before / "specc" / "__init__.py").is_file():
        parser.error(f"--before {args.before}: no specc package there (expected {before / 'specc' / '__init__.py'})")
    tree = specc_tree()
    print(f"specc: {tree}")
    if before:
        print(f"--before's specc: {specc_tree(before)}")
    print(
        f"spec {SPEC} vs {HANDWRITTEN}: {settings.warmups} warm-up round(s), {settings.repetitions} measured, "
        "interleaved; each run a fresh process, local Ray, fresh storage directory"
    )
    workdir = Path(tempfile.mkdtemp(prefix="specc-bench-run-"))
    figures = {"settings": settings.__dict__, "specc": tree, **({"before": specc_tree(before)} if before else {})}
    try:
        dry = measure_dry_run(settings, workdir)
        figures["dry_run"] = dry.figures()
        dry_before = measure_dry_run(settings, workdir, before) if before else None
        if dry_before:
            figures["dry_run_before"] = dry_before.figures()
        for epochs in args.epochs:
            timings = measure_runs(settings, workdir, args.keep_logs, epochs, before)
            figures[f"{epochs}_epochs"] = report(timings, epochs)
        print(f"\nspecc before Ray (dry run, median of {len(dry.seconds)}): {dry.median * 1000:.0f} ms")
        if dry_before:
            print(f"--before's specc before Ray (dry run): {dry_before.median * 1000:.0f} ms")
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
