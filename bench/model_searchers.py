"""A small model search per searcher against a grid measured in the same run (SPEC §13, issue 51): each
`tune.search.type` tunes SGD's learning rate (momentum 0.9) of an MLP [16] on scikit-learn's digits, 4 epochs a
trial, over lr in [1e-4, 1] (loguniform, or uniform for the searchers that cannot sample a log scale: bayesopt and
zoopt). Far too small an lr barely trains in 4 epochs, far too large a one diverges. The metric is val_accuracy
(max), each trial's best epoch, as best.json reports it. bohb runs with hyperband_for_bohb (reduction_factor 2: rungs
at epochs 1, 2 and 4), the others with fifo. nevergrad and zoopt are not seeded: their figures vary from run to run;
the others are seeded (--seed), though bohb's vary a little too (which trial a rung stops depends on the order the
trials report in).

First a grid over the same range (--grid points, log-spaced) maps val_accuracy against lr: the neighbourhood of the
optimum is the grid's lrs within --within of its best, and a random config lands in it with the probability printed.
Then per searcher: the best val_accuracy found, its lr, its ratio to the grid's best, whether it is within --within
of it, the trials, how many of them sampled an lr in the neighbourhood, and the wall time (--rounds N: each searcher
N times, seeds --seed, --seed + 1, ...). tests/e2e/test_model_searchers.py runs the same search (24 trials) and takes
its bound from these figures.

Each trial trains in its trial's own process (scaling.num_workers 1: shape "tune", no Train worker group). One local
Ray (2 CPUs) for every run, in this process, through specc.api (as `specc run` does).

Run:  .venv/bin/python bench/model_searchers.py [--samples N] [--rounds N] [--seed N] [--only NAME ...]
      (about 25 s a searcher at 32 trials, and the grid of 25 as long, on a quiet machine)
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import shutil
import tempfile
import time
from pathlib import Path

LOW, HIGH = 1.0e-4, 1.0
# name -> (search, scheduler, how lr is sampled): another searcher is one more entry
SEARCHES = {
    "random": ("{{type: random, seed: {seed}}}", "{type: fifo}", "loguniform"),
    "optuna": ("{{type: optuna, seed: {seed}}}", "{type: fifo}", "loguniform"),
    "hyperopt": ("{{type: hyperopt, seed: {seed}, n_initial_points: 5}}", "{type: fifo}", "loguniform"),
    "bayesopt": ("{{type: bayesopt, seed: {seed}, random_search_steps: 5}}", "{type: fifo}", "uniform"),
    "bohb": (
        "{{type: bohb, seed: {seed}, bohb_config: {{min_points_in_model: 3}}}}",
        "{type: hyperband_for_bohb, reduction_factor: 2}",
        "loguniform",
    ),
    "nevergrad": ("{{type: nevergrad, optimizer: OnePlusOne}}", "{type: fifo}", "loguniform"),
    "zoopt": ("{{type: zoopt, algo: asracos}}", "{type: fifo}", "uniform"),
    "ax": ("{{type: ax, seed: {seed}}}", "{type: fifo}", "loguniform"),
}
SPEC = """\
specc: 1
name: {name}
framework: torch
model: {{type: mlp, hidden_sizes: [16]}}
dataset: {{type: digits}}
training:
  epochs: 4
  optimizer: {{type: sgd, lr: 1.0e-3, momentum: 0.9}}
  checkpoint_every: never
scaling: {{num_workers: 1}}
tune:
  metric: val_accuracy
  mode: max
  num_samples: {samples}
  max_concurrent_trials: 2
  search: {search}
  space:
    training.optimizer.lr: {space}
scheduler: {scheduler}
"""


def grid_lrs(points: int) -> list[float]:
    step = (math.log10(HIGH) - math.log10(LOW)) / (points - 1)
    return [float(f"{10 ** (math.log10(LOW) + i * step):.6g}") for i in range(points)]


def band_edges(band: list[float], points: int) -> tuple[float, float]:
    """The lrs of the neighbourhood: its grid points widened by half a grid step each way (an estimate: the grid does
    not see the band's true edges)."""
    half = 10 ** ((math.log10(HIGH) - math.log10(LOW)) / (points - 1) / 2)
    return max(LOW, min(band) / half), min(HIGH, max(band) * half)


def trial_lrs(run_dir: Path) -> list[float]:
    with open(run_dir / "results.csv", newline="", encoding="utf-8") as handle:
        return [float(row["training.optimizer.lr"]) for row in csv.DictReader(handle)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=32, help="trials per searcher")
    parser.add_argument("--rounds", type=int, default=1, help="runs per searcher (seeds --seed, --seed + 1, ...)")
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--grid", type=int, default=25, help="log-spaced grid points over [1e-4, 1]")
    parser.add_argument(
        "--within", type=float, default=0.05, help="the neighbourhood: val_accuracy within this of the grid's best"
    )
    parser.add_argument("--only", nargs="*", default=list(SEARCHES), choices=list(SEARCHES))
    args = parser.parse_args()

    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    root = Path(tempfile.mkdtemp(prefix="specc-bench-model-searchers-"))
    try:
        best, band = grid_baseline(root, args.grid, args.within)
        print(f"{'searcher':<10} {'lr as':<10} {'best':>6} {'lr':>9} {'/ grid':>6} {'in':>3} {'trials':>6} ", end="")
        print(f"{'lr in band':>10} {'wall s':>6}")
        for name in args.only:
            template, scheduler, kind = SEARCHES[name]
            hits = 0
            for round_ in range(args.rounds):
                search = template.format(seed=args.seed + round_)
                space = f"{{{kind}: [{LOW}, {HIGH}]}}"
                run_dir, wall = run_search(root, f"{name}-{round_}", args.samples, search, scheduler, space)
                found = json.loads((run_dir / "best.json").read_text(encoding="utf-8"))
                accuracy, lr = found["metrics"]["val_accuracy"], found["config"]["training.optimizer.lr"]
                inside = accuracy >= best - args.within
                near = sum(band[0] <= value <= band[1] for value in trial_lrs(run_dir))
                hits += inside
                print(
                    f"{name:<10} {kind:<10} {accuracy:6.4f} {lr:9.4g} {accuracy / best:6.3f} "
                    f"{'yes' if inside else 'no':>3} {args.samples:6d} {near:10d} {wall:6.1f}",
                    flush=True,
                )
            if args.rounds > 1:
                print(f"{name:<10} within {args.within} of the grid's best in {hits} of {args.rounds} runs", flush=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def run_search(root: Path, name: str, samples: int, search: str, scheduler: str, space: str) -> tuple[Path, float]:
    """One search through specc.api, as `specc run` runs it: (its run directory, wall seconds)."""
    from specc.api import load
    from specc.execute.run import run

    spec = root / f"{name}.yaml"
    text = SPEC.format(name=name, samples=samples, search=search, scheduler=scheduler, space=space)
    spec.write_text(text, encoding="utf-8")
    started = time.monotonic()
    result = run(load(spec, []), storage_path=str(root / "runs"), quiet=True, echo=False)
    return Path(result.run_dir), time.monotonic() - started


def grid_baseline(root: Path, points: int, within: float) -> tuple[float, tuple[float, float]]:
    """The grid's run, printed: (its best val_accuracy, the lrs of the neighbourhood, about)."""
    lrs = grid_lrs(points)
    run_dir, wall = run_search(root, "grid", 1, "{type: grid}", "{type: fifo}", f"{{grid: {json.dumps(lrs)}}}")
    with open(run_dir / "results.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    grid = sorted((float(row["training.optimizer.lr"]), float(row["best_val_accuracy"])) for row in rows)
    best_lr, best = max(grid, key=lambda pair: pair[1])
    band = [lr for lr, accuracy in grid if accuracy >= best - within]
    lo, hi = band_edges(band, points)
    print(f"grid: {len(grid)} trials, {wall:.1f} s")
    for lr, accuracy in grid:
        print(f"  lr {lr:<9.4g} val_accuracy {accuracy:.4f}{'  *' if lr in band else ''}")
    contiguous = band == [lr for lr, _ in grid if min(band) <= lr <= max(band)]
    below = max((lr for lr, _ in grid if lr < min(band)), default=LOW)
    above = min((lr for lr, _ in grid if lr > max(band)), default=HIGH)
    print(
        f"grid best {best:.4f} at lr {best_lr:.4g}; neighbourhood (val_accuracy >= {best - within:.4f}): "
        f"lr {min(band):.4g} .. {max(band):.4g} of the grid, {below:.4g} and {above:.4g} either side; "
        f"about {lo:.4g} .. {hi:.4g}" + ("" if contiguous else " (not contiguous)")
    )
    log_share, uniform_share = math.log(hi / lo) / math.log(HIGH / LOW), (hi - lo) / (HIGH - LOW)
    print(f"a random config lands in it with p ~ {log_share:.2f} (loguniform), {uniform_share:.2f} (uniform); ", end="")
    print(
        "N random configs all miss it with ~ "
        + ", ".join(f"{(1 - log_share) ** n:.3f} and {(1 - uniform_share) ** n:.3f} (N={n})" for n in (10, 16, 24, 32))
    )
    print()
    return best, (lo, hi)


if __name__ == "__main__":
    main()
