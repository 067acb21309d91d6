"""Per-trial wall of specc's lean Tune shape against the same trial wrapped in a TorchTrainer, in one run.

(a) lean:    the spec as specc compiles it (`scaling.num_workers: 1`, Plan.shape "tune"): each trial is a
             plain Tune function trainable that trains in the trial's own process
(b) wrapped: the same Plan with shape "tune_train" (`dataclasses.replace(plan, shape="tune_train")`): each
             trial builds a TorchTrainer with 1 worker and forwards its reports to Tune (TuneReportCallback)
                                                   goal: per-trial wall (a) / (b) <= 0.5  (issue 4)

Both scripts come from one Plan through the same templates, so they differ only where the shape decides:
the trial function (train_func in the trial's process, or a TorchTrainer around it), the trial's
resources (1 CPU, or 0.1 CPU for the trial's driver plus the worker's 1 CPU) and `ray.init` (the
tune_train script starts the dashboard, which Ray Train needs to free a stopped trial's workers).
The search: digits MLP, a seeded random search of lr and momentum, 1 trial at a time by default, a
checkpoint every epoch. Each run is a fresh subprocess that starts and stops its own local Ray in a
fresh storage directory; the variants run interleaved (a, b, b, a, ...), figures are medians.

Run:  .venv/bin/python bench/tune_shapes.py [--rounds N] [--samples N] [--epochs N] [--at-once N]
      (bench/README.md: what it prints)
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml
from tune_runs import (
    Child,
    Variant,
    between_results,
    load_line,
    measure,
    print_setting,
    read_results,
    result_files,
    scratch,
    trial_results,
    write_scripts,
)

GOAL = 0.5
RUN_NAME = "digits-tune-shapes"
METRIC = "val_accuracy"


def spec_text(samples: int, epochs: int, at_once: int) -> str:
    """The experiment: what the lean shape is for (one process per trial), small enough to run many times."""
    spec = {
        "specc": 1,
        "name": RUN_NAME,
        "description": "bench/tune_shapes.py: digits MLP, a seeded random search, one worker per trial",
        "framework": "torch",
        "model": {"type": "mlp", "hidden_sizes": [64], "activation": "relu", "dropout": 0.0},
        "dataset": {"type": "digits", "validation_fraction": 0.2, "batch_size": 64, "shuffle_seed": 0},
        "training": {
            "epochs": epochs,
            "loss": "cross_entropy",
            "optimizer": {"type": "sgd", "lr": 0.05, "momentum": 0.9},
            "metrics": ["accuracy"],
            "seed": 0,
            "checkpoint_every": 1,
        },
        "scaling": {"num_workers": 1, "resources_per_worker": {"CPU": 1}},
        "tune": {
            "metric": METRIC,
            "mode": "max",
            "num_samples": samples,
            "max_concurrent_trials": at_once,
            "search": {"type": "random", "seed": 7},
            "space": {
                "training.optimizer.lr": {"loguniform": [1.0e-3, 3.0e-1]},
                "training.optimizer.momentum": {"uniform": [0.5, 0.95]},
            },
        },
        "run": {"storage_path": "./runs", "checkpoints_to_keep": 2},
        "cluster": {"runtime_env": {"env_vars": {"OMP_NUM_THREADS": "1"}}},
    }
    return yaml.safe_dump(spec, sort_keys=False)


def compile_both(spec_path: Path, workdir: Path) -> dict[str, Path]:
    """The lean script as specc compiles the spec, and the same Plan rendered with shape "tune_train"."""
    from specc.api import load
    from specc.compiler.fragments import context
    from specc.compiler.render import render
    from specc.compiler.resolve import plan as make_plan

    plan = make_plan(load(spec_path), str(workdir))
    if plan.shape != "tune":
        sys.exit(f"expected specc to compile the spec to the lean shape 'tune', got {plan.shape!r}")

    def shaped(shape: str):
        def source(path: Path) -> str:
            return render("torch/script.py.j2", context(dataclasses.replace(plan, shape=shape), path.name), None)

        return source

    return write_scripts(workdir, {"lean": shaped("tune"), "wrapped": shaped("tune_train")})


def differing_lines(a: Path, b: Path) -> int:
    import difflib

    diff = difflib.unified_diff(a.read_text().splitlines(), b.read_text().splitlines(), n=0)
    return sum(1 for line in diff if line[:1] in "+-" and line[:3] not in ("+++", "---"))


# -- what a run left -----------------------------------------------------------------------------
@dataclass
class Run:
    wall: float
    trials: int
    to_last: list[float]  # per trial: time_total_s of its last result (the trial's start to its last report)
    to_first: list[float]  # per trial: time_total_s of its first result (start to the first epoch's report)
    per_epoch: list[float]  # per trial: mean time between its reports after the first
    span: float  # the first trial's start to the last trial's last result (estimated wall-clock times)
    best: float  # the best trial's best val_accuracy (results.csv)
    load: float  # 1-minute load average as the run started

    def per_trial(self, name: str) -> float:
        """The median over this run's trials of one per-trial figure."""
        values = getattr(self, name)
        return statistics.median(values) if values else float("nan")


def read_run(child: Child) -> Run:
    run_dir = child.storage / RUN_NAME
    rows = read_results(run_dir, child.log)
    bad = [row["trial_id"] for row in rows if row["status"] != "completed"]
    if not rows or bad:
        sys.exit(f"{run_dir}: trials not completed: {bad or 'none ran'} (log: {child.log})")
    to_last, to_first, per_epoch, starts, ends = [], [], [], [], []
    for path in result_files(run_dir, rows, child.log):
        start, times = trial_results(path)
        starts.append(start)
        ends.append(times[-1][0])
        to_first.append(times[0][1]["time_total_s"])
        to_last.append(times[-1][1]["time_total_s"])
        if len(times) > 1:
            per_epoch.append(between_results(times))
    best = max(float(row[f"best_{METRIC}"]) for row in rows)
    return Run(child.wall, len(rows), to_last, to_first, per_epoch, max(ends) - min(starts), best, child.load)


def summary(run: Run) -> str:
    return (
        f"{run.wall:.1f}s, {run.trials} trials in {run.span:.1f}s, trial start to last result"
        f" {run.per_trial('to_last'):.2f}s (median), best {METRIC} {run.best:.4f}"
    )


FIGURES = (  # (name, figure of a run, unit); per-trial figures are the median over the run's trials
    ("total wall (launch to exit)", lambda run: run.wall, "s"),
    ("total wall / trials", lambda run: run.wall / run.trials, "s"),
    ("search span / trials", lambda run: run.span / run.trials, "s"),
    ("per trial: start -> last result", lambda run: run.per_trial("to_last"), "s"),
    ("per trial: start -> first result", lambda run: run.per_trial("to_first"), "s"),
    ("per trial: between later results", lambda run: run.per_trial("per_epoch"), "s"),
    (f"best {METRIC}", lambda run: run.best, ""),
)
RATIOS = (  # (what, figure name in FIGURES, whether it carries the goal)
    ("per-trial wall (trial start -> last result)", "per trial: start -> last result", True),
    ("search span / trials (first start -> last result)", "search span / trials", False),
    ("total wall / trials", "total wall / trials", False),
)


def report(lean: Variant, wrapped: Variant) -> None:
    medians = {name: (lean.median(figure), wrapped.median(figure), unit) for name, figure, unit in FIGURES}
    print()
    print(f"{'median over runs':<36}{'lean':>10}{'wrapped':>10}{'lean/wrapped':>14}")
    print(f"{'runs':<36}{len(lean.runs):>10}{len(wrapped.runs):>10}")
    for name, (a, b, unit) in medians.items():
        if unit:
            print(f"{name:<36}{a:>9.2f}{unit}{b:>9.2f}{unit}{a / b:>13.3f}x")
        else:
            print(f"{name:<36}{a:>10.4f}{b:>10.4f}")
    print()
    for what, name, goal in RATIOS:
        a, b, _ = medians[name]
        verdict = f" (goal <= {GOAL}: {'met' if a / b <= GOAL else 'MISSED'})" if goal else ""
        print(f"{what}, lean / wrapped: {a / b:.3f}x{verdict}")
    bests = {f"{run.best:.4f}" for run in lean.runs + wrapped.runs}
    same = "the same in every run of both" if len(bests) == 1 else "DIFFER: " + ", ".join(sorted(bests))
    print(f"best trial's {METRIC}: {same}")
    print(load_line([run.load for run in lean.runs + wrapped.runs]))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="measured runs of each variant (default 3)")
    parser.add_argument("--samples", type=int, default=4, help="trials per run (tune.num_samples, default 4)")
    parser.add_argument("--epochs", type=int, default=3, help="epochs per trial (default 3)")
    parser.add_argument(
        "--at-once",
        type=int,
        default=1,
        help="tune.max_concurrent_trials (default 1; the wrapped script caps it at what fits: 1 on 2 CPUs)",
    )
    parser.add_argument("--keep-logs", action="store_true", help="keep each run's output and storage directory")
    args = parser.parse_args(argv)
    if min(args.rounds, args.samples, args.epochs, args.at_once) < 1:
        parser.error("--rounds, --samples, --epochs and --at-once must be at least 1")

    print_setting()
    with scratch("specc-bench-shapes-", args.keep_logs) as workdir:
        spec = workdir / "spec.yaml"
        spec.write_text(spec_text(args.samples, args.epochs, args.at_once))
        scripts = compile_both(spec, workdir)
        print(
            f"digits MLP [64], {args.samples} trials (random search, seed 7) x {args.epochs} epochs, "
            f"{args.at_once} at a time; {args.rounds} round(s), interleaved; each run a fresh process and local Ray"
        )
        changed = differing_lines(scripts["lean"], scripts["wrapped"])
        print(f"the two scripts differ in {changed} lines (one Plan, rendered with shape tune and tune_train)")
        lean = Variant("lean", "lean (shape tune)", scripts["lean"])
        wrapped = Variant("wrapped", "wrapped (shape tune_train)", scripts["wrapped"])
        measure([lean, wrapped], args.rounds, workdir, args.keep_logs, read_run, summary)
        report(lean, wrapped)
    return 0


if __name__ == "__main__":
    sys.exit(main())
