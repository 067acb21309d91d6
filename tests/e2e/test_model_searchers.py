"""Ray Tune's new searchers on a small model search (SPEC §13, issue 51), on the session Ray: TuneBOHB with
HyperBandForBOHB, NevergradSearch, ZOOptSearch and AxSearch each tune SGD's learning rate (momentum 0.9) of an MLP
[16] on scikit-learn's digits, 4 epochs a trial, over lr in [1e-4, 1], and find the neighbourhood of the optimum that
a grid measured (bench/model_searchers.py: the same search, its grid, more trials). Each trial trains in its own
process (scaling.num_workers 1: shape "tune", no Train worker group). The best trial's best.json and best.yaml say
what its row of results.csv says. Each searcher's figure (best found against the grid's) is printed for the team's
note.

What the bound catches: a searcher whose lr does not reach the optimizer (every trial then trains at the spec's lr
1e-3: val_accuracy 0.35), or one stuck where it starts (the box's centre: lr 1e-2 on the log scale, 0.81; lr 0.5 on
the linear one, between 0.69 and 0.47) or at an end (0.14, 0.35), fails it every time. A searcher no better than
random sampling passes it: 24 random lrs all miss the neighbourhood about 3 times in 10,000 on the log scale, 14 on
the linear one (the bench prints the odds). On this one-dimensional search the searchers do little better than random
sampling at 24 trials (the bench's figures), so the test tells a working searcher from a broken one, not a good one
from a blind one."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest
import yaml

from .conftest import read_best, run_spec

pytestmark = [pytest.mark.slow, pytest.mark.in_turn(3)]  # in turn (tests/e2e/conftest.py): test_searchers has share 1

SAMPLES = 24
LOW, HIGH = 1.0e-4, 1.0
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
    training.optimizer.lr: {{{distribution}: [{low}, {high}]}}
scheduler: {scheduler}
"""
# name -> (search, scheduler, how lr is sampled): zoopt cannot sample a log scale (E204), so it searches the same
# range linearly. bohb's rungs (reduction_factor 2) are at epochs 1, 2 and 4, the last one the trials' end.
SEARCHES = {
    "bohb": (
        "{type: bohb, seed: 5, bohb_config: {min_points_in_model: 3}}",
        "{type: hyperband_for_bohb, reduction_factor: 2}",
        "loguniform",
    ),
    "nevergrad": ("{type: nevergrad, optimizer: OnePlusOne}", "{type: fifo}", "loguniform"),
    "zoopt": ("{type: zoopt, algo: asracos}", "{type: fifo}", "uniform"),
    "ax": ("{type: ax, seed: 5}", "{type: fifo}", "loguniform"),
}
# bench/model_searchers.py's grid of 25 lrs (2026-12-07): best val_accuracy 0.9582 (lr 0.1 and 0.1468); within 0.05
# of it, lr 0.02154 .. 0.2154, past which val_accuracy falls off steeply: 0.8969 at lr 0.01468, 0.7326 at 0.3162, the
# grid's lrs either side. The best trial must lie between those two and come within 0.05 of the grid's best. zoopt,
# which samples lr linearly, now and then settles near the upper edge (0.9359 at lr 0.245 in 16 trials, 0.9136 at
# 0.2905 in 32): inside the neighbourhood, not within 0.02 of the best. In 66 runs of the bench (bohb, nevergrad and
# zoopt at 16, 24 and 32 trials) and the test's own, every searcher came within this bound.
GRID_BEST, WITHIN = 0.9582, 0.05
OUTSIDE = (0.01468, 0.3162)


def spec_text(name: str) -> str:
    search, scheduler, distribution = SEARCHES[name]
    return SPEC.format(
        name=f"lr-{name}",
        samples=SAMPLES,
        search=search,
        scheduler=scheduler,
        distribution=distribution,
        low=LOW,
        high=HIGH,
    )


@pytest.fixture(scope="module")
def searches(tmp_path_factory, local_ray):
    """Every search run once on the session Ray: name -> (run directory, RunResult)."""
    done = {}
    for name in SEARCHES:
        root = tmp_path_factory.mktemp(f"model-searcher-{name}")
        spec = root / f"{name}.yaml"
        spec.write_text(spec_text(name), encoding="utf-8")
        result = run_spec(spec, storage_path=root / "runs", quiet=True)
        done[name] = (Path(result.run_dir), result)
    return done


def rows_of(run_dir: Path) -> list[dict]:
    with open(run_dir / "results.csv", newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


@pytest.mark.parametrize("name", list(SEARCHES))
def test_each_trial_trains_in_its_own_process(tmp_path, name):
    from specc.api import load, plan_report

    spec = tmp_path / "spec.yaml"
    spec.write_text(spec_text(name), encoding="utf-8")
    report = plan_report(load(spec, []))
    assert report["shape"] == "tune", report  # a Tune function trainable: no Train worker group to start
    assert report["resources"]["processes"] == 1 and report["trials"]["count"] == SAMPLES, report


@pytest.mark.parametrize("name", list(SEARCHES))
def test_each_searcher_samples_inside_the_space(searches, name):
    run_dir, _ = searches[name]
    rows = rows_of(run_dir)
    assert len(rows) == SAMPLES, rows
    lrs = [float(row["training.optimizer.lr"]) for row in rows]
    assert all(LOW <= lr <= HIGH for lr in lrs), lrs
    assert len(set(lrs)) > SAMPLES // 2, lrs  # the searcher proposes lrs of its own, not one over and over
    statuses = [row["status"] for row in rows]
    if name == "bohb":  # HyperBandForBOHB stopped some trials at a rung: those that ran on trained all 4 epochs
        assert "stopped" in statuses and set(statuses) <= {"completed", "stopped"}, statuses
    else:
        assert set(statuses) == {"completed"}, statuses
    assert all(int(row["epochs"]) == 4 for row in rows if row["status"] == "completed"), rows


@pytest.mark.parametrize("name", list(SEARCHES))
def test_each_searcher_finds_the_neighbourhood_of_the_grids_best(searches, name):
    run_dir, _ = searches[name]
    best = read_best(run_dir)
    accuracy, lr = best["metrics"]["val_accuracy"], best["config"]["training.optimizer.lr"]
    print(f"\n{name}: best val_accuracy {accuracy:.4f} at lr {lr:.4g} ({accuracy / GRID_BEST:.3f} of the grid's best)")
    assert accuracy >= GRID_BEST - WITHIN, best
    assert OUTSIDE[0] < lr < OUTSIDE[1], best


@pytest.mark.parametrize("name", list(SEARCHES))
def test_the_best_trials_files_say_what_its_row_says(searches, name):
    run_dir, result = searches[name]
    rows = rows_of(run_dir)
    best = read_best(run_dir)
    assert (best["metric"], best["mode"]) == ("val_accuracy", "max")
    (row,) = [row for row in rows if row["trial_id"] == best["trial_id"]]
    # the best trial is a trial with the highest val_accuracy of the search (its best epoch's, as the row's)
    top = max(float(other["best_val_accuracy"]) for other in rows)
    assert math.isclose(float(row["best_val_accuracy"]), top, rel_tol=1e-9), (row, top)
    assert math.isclose(best["metrics"]["val_accuracy"], top, rel_tol=1e-9), (best, top)
    assert best["config"] == {"training.optimizer.lr": float(row["training.optimizer.lr"])}, (best, row)
    assert result.metrics == best["metrics"]
    # best.yaml: the search's spec with the best trial's lr, a training run of its own (no tune section)
    text = (run_dir / "best.yaml").read_text(encoding="utf-8")
    assert best["trial_id"] in text.splitlines()[0], text
    retrain = yaml.safe_load(text)
    searched = yaml.safe_load(spec_text(name))
    assert "tune" not in retrain and "scheduler" not in retrain, retrain
    assert retrain["training"]["optimizer"]["lr"] == best["config"]["training.optimizer.lr"], retrain
    for section, key in [
        ("training", "epochs"),
        ("model", "hidden_sizes"),
        ("dataset", "type"),
        ("scaling", "num_workers"),
    ]:
        assert retrain[section][key] == searched[section][key], (section, key, retrain)
    assert retrain["training"]["optimizer"]["momentum"] == 0.9, retrain
    from specc.api import load

    assert load(run_dir / "best.yaml", []).training.optimizer.lr == best["config"]["training.optimizer.lr"]
