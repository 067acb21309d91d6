"""What `specc submit --wait` costs over submitting the same compiled script by hand with `ray job submit`.

(a) `ray job submit --address URL --working-dir DIR -- python digits_mlp.py --storage-path S`   the yardstick
(b) `specc submit DIR/digits_mlp.yaml --address URL --wait --storage-path S`                    goal: (b) / (a) <= 1.1

Both against the same running cluster: a head and a second node started with `ray start` on this machine
(tests/e2e/cluster.py: 1 CPU each, token auth), stopped by pid at the end. The spec is specs/digits_mlp.yaml
(digits MLP, 5 epochs, 2 Ray Train workers: one per node) copied into a project directory of its own; for
(a) the script `specc compile` writes into that directory beforehand (untimed) is what a user would submit,
so both ship the same directory and run the same program. Both wait for the job to end and follow its
logs. Each run writes into a fresh storage directory; the two alternate which goes first; figures are
medians, and each run's final val_accuracy is read from its results.csv.

Run:  .venv/bin/python bench/submit_overhead.py [--quick] [--repetitions N] [--json]   (README.md: what it prints)
"""

from __future__ import annotations

import argparse
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
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
from cluster import LocalCluster  # noqa: E402 - the tests' two-node cluster, from the repository

BIN = Path(sys.executable).parent
SPEC = ROOT / "specs" / "digits_mlp.yaml"
GOAL = 1.1


def prepare(workdir: Path) -> Path:
    """The project directory: the spec and, for the hand-made submission, its compiled script."""
    project = workdir / "project"
    project.mkdir()
    shutil.copyfile(SPEC, project / "digits_mlp.yaml")
    done = subprocess.run(
        [str(BIN / "specc"), "compile", "digits_mlp.yaml", "-o", "digits_mlp.py"], cwd=project, capture_output=True
    )
    if done.returncode:
        sys.exit(f"specc compile failed: {done.stderr.decode()}")
    return project


def commands(cluster: LocalCluster, project: Path) -> dict:
    return {
        "hand": (
            "ray job submit (by hand)",
            lambda storage: [
                str(BIN / "ray"), "job", "submit", "--address", cluster.dashboard, "--working-dir", str(project),
                "--", "python", "digits_mlp.py", "--storage-path", str(storage),
            ],
        ),
        "specc": (
            "specc submit --wait",
            lambda storage: [
                str(BIN / "specc"), "submit", str(project / "digits_mlp.yaml"), "--address", cluster.dashboard,
                "--wait", "--storage-path", str(storage),
            ],
        ),
    }  # fmt: skip


def final_accuracy(storage: Path) -> float:
    with open(storage / "digits-mlp" / "results.csv", newline="") as handle:
        return float(list(csv.DictReader(handle))[-1]["val_accuracy"])


def measure(cluster: LocalCluster, project: Path, workdir: Path, warmups: int, repetitions: int) -> dict:
    table = commands(cluster, project)
    times: dict[str, list[float]] = {key: [] for key in table}
    accuracy: dict[str, list[float]] = {key: [] for key in table}
    keys = list(table)
    for round_ in range(warmups + repetitions):
        for key in keys if round_ % 2 == 0 else keys[::-1]:
            label, command = table[key]
            storage = workdir / f"{key}-{round_}"
            warm = round_ < warmups
            print(f"  round {round_ + 1}/{warmups + repetitions}{' (warm-up)' if warm else ''}: {label} ...", end="")
            sys.stdout.flush()
            started = time.perf_counter()
            done = subprocess.run(command(storage), cwd=workdir, env=cluster.env, capture_output=True, text=True)
            seconds = time.perf_counter() - started
            if done.returncode:
                sys.exit(f"{label}: exit {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
            print(f" {seconds:.1f}s, val_accuracy {final_accuracy(storage):.4f}", flush=True)
            if not warm:
                times[key].append(seconds)
                accuracy[key].append(final_accuracy(storage))
            shutil.rmtree(storage, ignore_errors=True)
    return {"seconds": times, "final_val_accuracy": accuracy, "labels": {key: table[key][0] for key in table}}


def report(figures: dict) -> dict:
    seconds, labels = figures["seconds"], figures["labels"]
    print()
    print(f"{'command':<28}{'runs':>5}{'median':>10}{'min':>10}{'max':>10}   final val_accuracy (each run)")
    for key in ("hand", "specc"):
        values = seconds[key]
        accuracies = " ".join(f"{value:.4f}" for value in figures["final_val_accuracy"][key])
        print(
            f"{labels[key]:<28}{len(values):>5}{statistics.median(values):>9.2f}s{min(values):>9.2f}s"
            f"{max(values):>9.2f}s   {accuracies}"
        )
    ratio = statistics.median(seconds["specc"]) / statistics.median(seconds["hand"])
    difference = statistics.median(seconds["specc"]) - statistics.median(seconds["hand"])
    print()
    print(
        f"specc submit --wait / ray job submit: {ratio:.3f}x (goal <= {GOAL}: {'met' if ratio <= GOAL else 'MISSED'})"
    )
    print(f"difference of medians: {difference:+.2f}s per job (specc: load, validate, compile, measure the directory)")
    return {**figures, "ratio": ratio, "goal": GOAL}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1 run each, no warm-up (about 2 minutes)")
    parser.add_argument("--repetitions", type=int, help="measured rounds (default 3, --quick 1)")
    parser.add_argument("--json", action="store_true", help="every figure as one JSON object at the end")
    args = parser.parse_args(argv)
    warmups, repetitions = (0, 1) if args.quick else (1, 3)
    repetitions = args.repetitions or repetitions

    from importlib.metadata import version

    print(f"Python {platform.python_version()}, ray {version('ray')}, torch {version('torch')}; {os.cpu_count()} CPUs")
    print(f"spec {SPEC.relative_to(ROOT)}; {warmups} warm-up round(s), {repetitions} measured, alternating")
    workdir = Path(tempfile.mkdtemp(prefix="specc-bench-submit-"))
    cluster = LocalCluster(workdir / "cluster")
    try:
        started = time.perf_counter()
        cluster.start()
        print(f"cluster up in {time.perf_counter() - started:.1f}s: {cluster.dashboard} (2 nodes, 1 CPU each)")
        figures = report(measure(cluster, prepare(workdir), workdir, warmups, repetitions))
    finally:
        cluster.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    if args.json:
        print(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
