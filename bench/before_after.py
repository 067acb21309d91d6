"""Wall time of `specc run` on the same specs with specc as it was at an earlier commit and as it is now.

For each case, `python -m specc run SPEC --storage-path <fresh dir> [--set ...]` runs once with this checkout's
specc and once with the checkout of --before (a temporary `git worktree`, removed at the end) on PYTHONPATH,
interleaved, alternating which goes first; each run is a fresh process that starts and stops its own local Ray.
Printed per case: the median wall time of each, their ratio, and the best trial's (or epoch's) metric of each
run, to show that both searched the same way to the same place.

Cases (issue 16): the lean Tune shape (specs/digits_asha.yaml: 16 trials, 8 samples x 2 batch sizes, of one
process each, ASHA) and a search whose trials each drive a 2-worker Ray Train run (the same spec with 2 workers
at 0.5 CPU each, 2 trials of 10 epochs).

Run:  .venv/bin/python bench/before_after.py [--before REV] [--repetitions N] [--case lean|train_in_tune]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BEFORE = "3687458"  # main before issue 16
CASES = {
    "lean": ("specs/digits_asha.yaml", []),
    "train_in_tune": (
        "specs/digits_asha.yaml",
        [
            "scaling.num_workers=2",
            "scaling.resources_per_worker={CPU: 0.5}",
            "tune.num_samples=1",
            "training.epochs=10",
        ],
    ),
}


def run(tree: Path, spec: str, overrides: list[str], storage: Path, log: Path) -> tuple[float, float | None]:
    """(wall seconds, the run's best metric from best.json) of `specc run` with specc from `tree`."""
    sets = [arg for override in overrides for arg in ("--set", override)]
    command = [sys.executable, "-m", "specc", "run", str(ROOT / spec), "--storage-path", str(storage), *sets]
    env = {**os.environ, "PYTHONPATH": str(tree), "RAY_ADDRESS": "local"}
    env.pop("RAY_TRAIN_HEALTH_CHECK_INTERVAL_S", None)  # each specc as it ships
    started = time.perf_counter()
    with open(log, "wb") as out:
        status = subprocess.run(command, cwd=storage, env=env, stdout=out, stderr=subprocess.STDOUT).returncode
    seconds = time.perf_counter() - started
    if status != 0:
        sys.exit(f"{' '.join(command)} (PYTHONPATH={tree}): exit {status}; see {log}")
    best = next(storage.glob("*/best.json"), None)
    metrics = json.loads(best.read_text())["metrics"] if best else {}
    return seconds, metrics.get("val_accuracy")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default=BEFORE, help=f"the earlier commit (default {BEFORE})")
    parser.add_argument("--repetitions", type=int, default=2)
    parser.add_argument("--case", choices=sorted(CASES), action="append", help="default: every case")
    parser.add_argument("--keep-logs", action="store_true")
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="specc-bench-before-after-"))
    before = workdir / "before"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(before), args.before], check=True)
    trees = {"before": before, "now": ROOT}
    print(f"specc at {args.before} (before) and this checkout (now); {os.cpu_count()} CPUs")
    try:
        for case in args.case or list(CASES):
            spec, overrides = CASES[case]
            walls: dict[str, list[float]] = {"before": [], "now": []}
            for round_ in range(args.repetitions):
                for key in ("before", "now") if round_ % 2 == 0 else ("now", "before"):
                    storage = workdir / f"{case}-{key}-{round_}"
                    storage.mkdir()
                    load = os.getloadavg()[0]
                    seconds, best = run(trees[key], spec, overrides, storage, workdir / f"{storage.name}.log")
                    walls[key].append(seconds)
                    print(f"  {case} {key:<6} round {round_ + 1}: {seconds:6.1f}s, best {best} (load {load:.2f})")
                    if not args.keep_logs:
                        shutil.rmtree(storage)
            b, n = statistics.median(walls["before"]), statistics.median(walls["now"])
            print(f"{case}: {spec} {' '.join(overrides)}")
            print(f"  median wall: before {b:.1f}s, now {n:.1f}s, now/before {n / b:.3f}x")
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(before)], check=False)
        if args.keep_logs:
            print(f"logs kept in {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
