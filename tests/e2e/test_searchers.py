"""Ray Tune's searchers and schedulers by their own names (SPEC §13, issue 51) on the session Ray, over the objective
with a known optimum of test_objective.py (a bowl around x = 3, y = -1; fixtures/objective_bowl.py): TuneBOHB with
HyperBandForBOHB, NevergradSearch, ZOOptSearch and AxSearch (under a parameter constraint it keeps) each find the
bowl's neighbourhood; tune.repeat (Ray's Repeater) runs each config twice and tells the searcher the mean, and a small
model search repeats each config from its own seed; a small model search with ax keeps its constraints, written by
spec path; run.fail_fast ends the search at the first failed trial. Each searcher's figure (best found against the
optimum) is printed for the team's note."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest
import yaml

from .conftest import read_best, run_spec

pytestmark = [pytest.mark.slow, pytest.mark.in_turn(1)]  # in turn (tests/e2e/conftest.py): test_objective every time

STEPS = 4
SPEC = """\
specc: 1
name: {name}
objective:
  function: bowl_objective:bowl
  params: {{steps: {steps}, x: 0.0, y: 0.0, label: kept}}
  metrics: [step, loss]
  max_steps: {steps}
tune:
  metric: loss
  mode: min
  num_samples: {samples}
  max_concurrent_trials: 2
  repeat: {repeat}
  search: {search}
  space: {{objective.params.x: {{uniform: [1, 10]}}, objective.params.y: {{uniform: [-2, 3]}}}}
scheduler: {scheduler}
run: {{callbacks: [csv]}}
"""
# name -> (search, num_samples, repeat, scheduler, the bowl's value (x - 3)^2 + (y + 1)^2 the best must be below).
# The box is off-centre: Nevergrad's OnePlusOne starts at its centre (5.5, 0.5), whose value is 8.5.
SEARCHES = {
    "bohb": (
        "{type: bohb, seed: 5, bohb_config: {min_points_in_model: 3}}",
        10,
        1,
        "{type: hyperband_for_bohb, reduction_factor: 2}",
        8.5,
    ),
    "nevergrad": ("{type: nevergrad, optimizer: OnePlusOne}", 8, 1, "{type: fifo}", 17.3),
    "zoopt": ("{type: zoopt, algo: asracos}", 8, 1, "{type: fifo}", 17.3),
    # Ax under a constraint the optimum meets (y <= x - 3 holds there with 0.71 to spare): Sobol's 5, then BoTorch's
    "ax": (
        "{type: ax, seed: 5, parameter_constraints: ['objective.params.y - objective.params.x <= -3']}",
        10,
        1,
        "{type: fifo}",
        0.5,
    ),
    "repeat": ("{type: hyperopt, seed: 5, n_initial_points: 2}", 6, 2, "{type: fifo}", 65.0),  # 3 configs: the mean
}
# The box's worst bowl value is 7^2 + 4^2 = 65 and a random point's 17.3 on average. Seeded bohb's ten trials must
# come below the value at the box's centre (8.5); unseeded nevergrad's and zoopt's eight below an average random
# point's (with ten trials they came to 0.00-4.35 and 0.05-13.98 over five runs here). Seeded ax's ten must come within
# 0.5 of the optimum (0.71 away), which ten random points of the constrained box reach 4 times in 10; it came to 0.25,
# 0.0016 and 0.074 with seeds 5, 1 and 2 here. The figures printed say how close each came; bench/searchers.py measures
# them at 20 trials.


def bowl(x: float, y: float) -> float:
    return (x - 3) ** 2 + (y + 1) ** 2


@pytest.fixture(scope="module")
def searches(tmp_path_factory, local_ray):
    """Every search run once on the session Ray: name -> (run directory, RunResult)."""
    fixture = Path(__file__).parent / "fixtures" / "objective_bowl.py"
    done = {}
    for name, (search, samples, repeat, scheduler, _) in SEARCHES.items():
        root = tmp_path_factory.mktemp(f"searcher-{name}")
        (root / "bowl_objective.py").write_text(fixture.read_text(encoding="utf-8"), encoding="utf-8")
        spec = root / f"{name}.yaml"
        text = SPEC.format(
            name=f"bowl-{name}", steps=STEPS, samples=samples, repeat=repeat, search=search, scheduler=scheduler
        )
        spec.write_text(text, encoding="utf-8")
        done[name] = (root / "runs" / f"bowl-{name}", run_spec(spec, storage_path=root / "runs", quiet=True))
    return done


def rows_of(run_dir) -> list[dict]:
    with open(Path(run_dir) / "results.csv", newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


@pytest.mark.parametrize("name", list(SEARCHES))
def test_each_searcher_finds_the_neighbourhood_of_a_known_optimum(searches, name):
    run_dir, result = searches[name]
    rows = rows_of(run_dir)
    _, samples, repeat, _, within = SEARCHES[name]
    assert len(rows) == samples, rows
    for row in rows:  # the function saw the sampled params
        x, y, steps = float(row["objective.params.x"]), float(row["objective.params.y"]), int(row["steps"])
        assert math.isclose(float(row["last_loss"]), bowl(x, y) + 1 / steps, rel_tol=1e-9)
    best = read_best(run_dir)
    x, y = best["config"]["objective.params.x"], best["config"]["objective.params.y"]
    print(f"\n{name}: best bowl value {bowl(x, y):.4f} at x={x:.3f}, y={y:.3f} (optimum 0 at x=3, y=-1)")
    assert bowl(x, y) < within
    assert result.metrics == best["metrics"]
    if name == "ax":  # Ax proposed only configs inside parameter_constraints, given in Ax's names (x, y)
        assert all(float(r["objective.params.y"]) - float(r["objective.params.x"]) <= -3 + 1e-9 for r in rows), rows
    if name == "bohb":  # HyperBandForBOHB stopped some trials at a rung before the last step
        assert {row["status"] for row in rows} <= {"completed", "stopped"}
    if repeat > 1:  # Ray's Repeater: each config the searcher suggests is run `repeat` times in a row
        configs = [(row["objective.params.x"], row["objective.params.y"]) for row in rows]
        assert len(set(configs)) == samples // repeat, configs
        assert all(configs.count(config) == repeat for config in configs)


FAILS = """\
specc: 1
name: fails-fast
objective:
  function: failing:objective
  params: {x: 0.0}
  metrics: [loss]
  max_steps: 2
tune:
  metric: loss
  mode: min
  num_samples: 6
  max_concurrent_trials: 1
  search: {type: random, seed: 1}
  space: {objective.params.x: {uniform: [0, 1]}}
run: {fail_fast: true}
"""
FAILING = """\
from ray import tune


def objective(config):
    tune.report({"loss": config["x"]})
    raise RuntimeError("this trial fails")
"""


def test_fail_fast_ends_the_search_at_the_first_failed_trial(tmp_path, local_ray):
    (tmp_path / "failing.py").write_text(FAILING, encoding="utf-8")
    spec = tmp_path / "fails.yaml"
    spec.write_text(FAILS, encoding="utf-8")
    result = run_spec(spec, storage_path=tmp_path / "runs", quiet=True)
    rows = rows_of(result.run_dir)
    # one trial at a time: the first fails, and Ray's fail_fast starts none of the other five
    assert [row["status"] for row in rows] == ["error"], rows


MODEL = """\
specc: 1
name: repeat-iris
framework: torch
model: {type: mlp, hidden_sizes: [16]}
dataset: {type: iris}
training:
  epochs: 2
  seed: 11
  optimizer: {type: sgd, lr: 0.01, momentum: 0.9}
scaling: {num_workers: 1}
tune:
  metric: val_accuracy
  mode: max
  num_samples: 4
  repeat: 2
  search: %s
  space:
    %s
"""
REPEATED = {  # Nevergrad over a plain space; Optuna define-by-run over a conditional one (the sample is filtered)
    "nevergrad": ("{type: nevergrad, optimizer: OnePlusOne}", "training.optimizer.lr: {uniform: [0.001, 0.3]}"),
    "optuna-conditional": (
        "{type: optuna, seed: 3}",
        "training.optimizer: {choice: [{type: sgd, lr: {uniform: [0.001, 0.3]}}, "
        "{type: adam, lr: {loguniform: [0.001, 0.1]}}]}",
    ),
}


@pytest.mark.parametrize("name", list(REPEATED))
def test_a_small_model_search_repeats_each_config_from_its_own_seed(tmp_path, local_ray, name):
    spec = tmp_path / "model.yaml"
    spec.write_text(MODEL % REPEATED[name], encoding="utf-8")
    result = run_spec(spec, storage_path=tmp_path / "runs", quiet=True)
    rows = rows_of(result.run_dir)
    assert [row["status"] for row in rows] == ["completed"] * 4, rows
    by_config: dict[str, list[dict]] = {}
    for row in rows:  # a config: its sampled values (the conditional's option and its lr, or the lr)
        config = tuple(value for key, value in row.items() if key.startswith("training.optimizer"))
        by_config.setdefault(config, []).append(row)
    assert len(by_config) == 2 and all(len(repeats) == 2 for repeats in by_config.values()), by_config
    for repeats in by_config.values():
        # the two repeats of a config train from training.seed and training.seed + 1, which results.csv names
        assert sorted(int(row["training.seed"]) for row in repeats) == [11, 12], repeats
        assert repeats[0]["last_val_loss"] != repeats[1]["last_val_loss"], repeats
    best = read_best(result.run_dir)
    best_row = next(row for row in rows if row["trial_id"] == best["trial_id"])
    retrained = yaml.safe_load((Path(result.run_dir) / "best.yaml").read_text(encoding="utf-8"))
    assert retrained["training"]["seed"] == int(best_row["training.seed"])  # best.yaml retrains that repeat


AX_MODEL = """\
specc: 1
name: ax-iris
framework: torch
model: {type: mlp, hidden_sizes: [16], dropout: 0.1}
dataset: {type: iris}
training:
  epochs: 2
  optimizer: {type: sgd, lr: 0.05, momentum: 0.5}
scaling: {num_workers: 0}
tune:
  metric: val_accuracy
  mode: max
  num_samples: 4
  search:
    type: ax
    seed: 3
    points_to_evaluate: [{model.dropout: 0, training.optimizer.momentum: 0.9, model.hidden_sizes.0: 8}]
    parameter_constraints: ["model.dropout + training.optimizer.momentum <= 0.9"]
    outcome_constraints: ["num_parameters <= 2000"]  # never binding: AxSearch reads it from each last result
  space:
    model.dropout: {uniform: [0.0, 0.5]}
    training.optimizer.momentum: {uniform: [0.0, 0.9]}
    model.hidden_sizes.0: {randint: [4, 33]}
"""


def test_a_small_model_search_with_ax_keeps_its_constraints_by_spec_path(tmp_path, local_ray):
    spec = tmp_path / "ax.yaml"
    spec.write_text(AX_MODEL, encoding="utf-8")
    result = run_spec(spec, storage_path=tmp_path / "runs", quiet=True)
    rows = rows_of(result.run_dir)
    assert [row["status"] for row in rows] == ["completed"] * 4, rows
    first = rows[0]  # the point, tried first; Ax's parameter names are the spec's dotted paths
    assert (float(first["model.dropout"]), float(first["training.optimizer.momentum"])) == (0.0, 0.9), first
    assert first["model.hidden_sizes.0"] == "8", first
    for row in rows:
        assert float(row["model.dropout"]) + float(row["training.optimizer.momentum"]) <= 0.9 + 1e-9, row
        assert int(row["last_num_parameters"]) > 0
