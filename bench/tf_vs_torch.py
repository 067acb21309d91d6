"""The same spec on each framework, and specc's tensorflow run against the same experiment written by hand.

(a) `specc run digits-mlp.yaml` with `framework: torch`                   TorchTrainer, DDP over gloo
(b) the same spec with `framework: tensorflow`                           TensorflowTrainer, MultiWorkerMirroredStrategy
(c) `python bench/handwritten_tf_digits_mlp.py`                           the yardstick of (b): goal (b) / (c) <= 1.05

The spec is specs/digits_mlp.yaml (digits MLP [64], SGD lr 0.1 momentum 0.9, batch 64 per worker, 5 epochs,
2 Ray Train workers with 1 CPU each, a checkpoint every epoch, 2 kept) with only `framework` changed (and the
torch-only `scaling.backend` dropped). Each run is a fresh subprocess that starts (and stops) its own local Ray,
writing into its own fresh storage directory; the three run interleaved, rotating which goes first; figures
are medians. Each run's final val_accuracy (the last epoch's, over the same 359 validation digits) is shown
beside its time: both frameworks should land in the same place.

Run:  .venv/bin/python bench/tf_vs_torch.py [--quick] [--json] [--keep-logs]   (README.md: what it prints)
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

import yaml
from run_overhead import ROOT, SPECC, Timing, fail, handwritten_outcome, kept, run_logged

SPEC = ROOT / "specs" / "digits_mlp.yaml"
HANDWRITTEN = "bench/handwritten_tf_digits_mlp.py"
HAND_RUN = "digits-mlp-tf-handwritten"
GOAL = 1.05
WARMUPS, REPETITIONS = 1, 3


def write_spec(directory: Path, framework: str) -> Path:
    """specs/digits_mlp.yaml for `framework`, named after it, in `directory`."""
    spec = yaml.safe_load(SPEC.read_text(encoding="utf-8"))
    spec["framework"] = framework
    spec["name"] = f"digits-mlp-{framework}"
    if framework == "tensorflow":
        del spec["scaling"]["backend"]  # torch.distributed's; MultiWorkerMirroredStrategy picks its own
    path = directory / f"digits-mlp-{framework}.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    return path


def specc_outcome(run_dir: Path, log: Path) -> tuple[float, int]:
    """(final val_accuracy: the last row of results.csv, checkpoints kept)."""
    with open(run_dir / "results.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    if not rows or not (run_dir / "best.json").is_file():
        sys.exit(f"specc run left no results in {run_dir} (log: {log})")
    return float(rows[-1]["val_accuracy"]), kept(run_dir)


def runs(workdir: Path) -> dict:
    """key -> (label, command(storage), outcome(storage, log))."""
    specs = {framework: write_spec(workdir, framework) for framework in ("torch", "tensorflow")}

    def specc(framework):
        command = lambda storage: [SPECC, "run", str(specs[framework]), "--storage-path", str(storage)]  # noqa: E731
        outcome = lambda storage, log: specc_outcome(storage / f"digits-mlp-{framework}", log)  # noqa: E731
        return (f"specc run, {framework}", command, outcome)

    def hand_outcome(storage, log):
        accuracy, _ = handwritten_outcome(storage, log)
        return accuracy, kept(storage / HAND_RUN)

    return {
        "torch": specc("torch"),
        "tensorflow": specc("tensorflow"),
        "hand": (
            "hand-written TensorflowTrainer",
            lambda storage: [sys.executable, HANDWRITTEN, "--storage-path", str(storage)],
            hand_outcome,
        ),
    }


def measure(workdir: Path, warmups: int, repetitions: int, keep_logs: bool) -> dict[str, Timing]:
    table = runs(workdir)
    timings = {key: Timing(label) for key, (label, _, _) in table.items()}
    keys = list(table)
    total = warmups + repetitions
    for round_ in range(total):
        order = keys[round_ % len(keys) :] + keys[: round_ % len(keys)]  # each goes first in turn
        for key in order:
            label, command, outcome = table[key]
            storage, log = workdir / f"{key}-{round_}", workdir / f"{key}-{round_}.log"
            storage.mkdir()
            warm = round_ < warmups
            load = os.getloadavg()[0]
            print(f"  round {round_ + 1}/{total}{' (warm-up)' if warm else ''}: {label} (load {load:.2f}) ...", end="")
            sys.stdout.flush()
            seconds, status, _ = run_logged(command(storage), log)
            if status != 0:
                fail(label, status, log)
            accuracy, checkpoints = outcome(storage, log)
            print(f" {seconds:.1f}s, val_accuracy {accuracy:.4f}, {checkpoints} checkpoints", flush=True)
            if not warm:
                timings[key].seconds.append(seconds)
                timings[key].final_accuracy.append(accuracy)
                timings[key].checkpoints.append(checkpoints)
                timings[key].loads.append(load)
            if not keep_logs:
                shutil.rmtree(storage)
                log.unlink()
    return timings


def versions() -> str:
    from importlib.metadata import version

    return ", ".join(f"{name} {version(name)}" for name in ("ray", "torch", "tensorflow", "tf-keras"))


def report(timings: dict[str, Timing]) -> dict:
    torch, tf, hand = timings["torch"], timings["tensorflow"], timings["hand"]
    print()
    print(f"{'command':<34}{'runs':>5}{'median':>10}{'min':>10}{'max':>10}   final val_accuracy (each run)")
    for timing in (torch, tf, hand):
        accuracies = " ".join(f"{value:.4f}" for value in timing.final_accuracy)
        print(
            f"{timing.label:<34}{len(timing.seconds):>5}{timing.median:>9.2f}s{min(timing.seconds):>9.2f}s"
            f"{max(timing.seconds):>9.2f}s   {accuracies}"
        )
    print()
    ratio = tf.median / hand.median
    print(
        f"specc tensorflow / hand-written TensorflowTrainer: {ratio:.3f}x (goal <= {GOAL}: "
        f"{'met' if ratio <= GOAL else 'MISSED'}), {tf.median - hand.median:+.2f}s per run"
    )
    print(f"tensorflow / torch, same spec: {tf.median / torch.median:.3f}x, {tf.median - torch.median:+.2f}s per run")
    gap = statistics.median(tf.final_accuracy) - statistics.median(torch.final_accuracy)
    print(f"final val_accuracy, tensorflow - torch (medians): {gap:+.4f}")
    loads = [load for timing in timings.values() for load in timing.loads]
    print(
        f"load average (1 min) as measured runs started: {min(loads):.2f} to {max(loads):.2f} on {os.cpu_count()} CPUs"
        + (" - a busy machine: expect noise of 10% or more" if max(loads) > 0.5 * (os.cpu_count() or 1) else "")
    )
    return {
        "ratio_tensorflow_vs_handwritten": ratio,
        "goal": GOAL,
        "ratio_tensorflow_vs_torch": tf.median / torch.median,
        "timings": {key: timing.figures() for key, timing in timings.items()},
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1 run each, no warm-up (about 3 minutes)")
    parser.add_argument("--json", action="store_true", help="every figure as one JSON object at the end")
    parser.add_argument("--keep-logs", action="store_true", help="keep each run's output and storage directory")
    parser.add_argument("--repetitions", type=int, help=f"measured rounds (default: {REPETITIONS}, --quick: 1)")
    args = parser.parse_args(argv)
    warmups, repetitions = (0, 1) if args.quick else (WARMUPS, REPETITIONS)
    repetitions = args.repetitions or repetitions

    print(f"Python {platform.python_version()} ({sys.executable}), {versions()}")
    print(f"{os.cpu_count()} CPUs, {platform.platform()}")
    print(
        f"spec {SPEC.relative_to(ROOT)} as torch and as tensorflow, vs {HANDWRITTEN}: {warmups} warm-up round(s), "
        f"{repetitions} measured, interleaved; each run a fresh process, local Ray, fresh storage directory"
    )
    workdir = Path(tempfile.mkdtemp(prefix="specc-bench-tf-"))
    try:
        figures = report(measure(workdir, warmups, repetitions, args.keep_logs))
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
