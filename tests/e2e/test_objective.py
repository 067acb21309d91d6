"""An objective spec (SPEC §12: the user's own Ray Tune function) searched for real by each of the five searchers,
each with a scheduler, on the session Ray: results.csv and best.json hold the declared metrics, the function saw
the sampled params, and the best trial is the right one for a function whose optimum is known (a bowl around
x = 3, y = -1; fixtures/objective_bowl.py). Then `specc results`/`report` read one of the runs, `specc plan`'s
seeded configs are the ones the random search ran, and best.yaml runs the best params once."""

from __future__ import annotations

import csv
import json
import math
import shutil
from pathlib import Path

import pytest
import yaml

from specc.cli import main

from .conftest import compile_spec, python_script, read_best, run_spec

pytestmark = pytest.mark.slow

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
  search: {search}
  space: {space}
scheduler: {scheduler}
run: {{callbacks: [csv, json]}}
"""
BOX = "{objective.params.x: {uniform: [0, 6]}, objective.params.y: {uniform: [-3, 1]}}"
SEARCHES = {
    "random": ("{type: random, seed: 5}", 4, BOX, "{type: asha, grace_period: 1, reduction_factor: 2}"),
    "grid": (
        "{type: grid}",
        1,
        "{objective.params.x: {grid: [0, 3, 6]}, objective.params.y: {grid: [-1, 1]}}",
        "{type: median_stopping, grace_period: 2, min_samples_required: 2}",
    ),
    "optuna": ("{type: optuna, seed: 5}", 4, BOX, "{type: asha, grace_period: 1, reduction_factor: 2}"),
    "hyperopt": ("{type: hyperopt, seed: 5, n_initial_points: 2}", 4, BOX, "{type: hyperband, reduction_factor: 2}"),
    "bayesopt": ("{type: bayesopt, seed: 5, random_search_steps: 2}", 4, BOX, "{type: asha, grace_period: 2}"),
}


def loss_at(x, y, step):
    return (x - 3) ** 2 + (y + 1) ** 2 + 1 / step


@pytest.fixture(scope="module")
def searches(tmp_path_factory, local_ray):
    """Every search run once on the session Ray: name -> (spec path, run directory, RunResult)."""
    fixture = Path(__file__).parent / "fixtures" / "objective_bowl.py"
    done = {}
    for name, (search, samples, space, scheduler) in SEARCHES.items():
        root = tmp_path_factory.mktemp(f"objective-{name}")
        (root / "bowl_objective.py").write_text(fixture.read_text(encoding="utf-8"), encoding="utf-8")
        spec = root / f"{name}.yaml"
        text = SPEC.format(
            name=f"bowl-{name}", steps=STEPS, samples=samples, search=search, space=space, scheduler=scheduler
        )
        spec.write_text(text, encoding="utf-8")
        done[name] = (spec, root / "runs" / f"bowl-{name}", run_spec(spec, storage_path=root / "runs", quiet=True))
    return done


def rows_of(run_dir) -> list[dict]:
    with open(Path(run_dir) / "results.csv", newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


@pytest.mark.parametrize("name", list(SEARCHES))
def test_each_searcher_finds_the_best_trial_of_a_known_function(searches, name):
    _spec, run_dir, result = searches[name]
    rows = rows_of(run_dir)
    expected_trials = 6 if name == "grid" else 4
    assert len(rows) == expected_trials, rows
    assert set(rows[0]) == {
        "trial_id",
        "status",
        "steps",
        "objective.params.x",
        "objective.params.y",
        "best_loss",
        "last_step",
        "last_loss",
    }
    for row in rows:
        x, y, steps = float(row["objective.params.x"]), float(row["objective.params.y"]), int(row["steps"])
        assert row["status"] in ("completed", "stopped") and 1 <= steps <= STEPS
        assert row["status"] == ("completed" if steps == STEPS else "stopped")
        # the function saw the sampled params: its last report is the bowl at (x, y) after `steps` reports
        assert int(row["last_step"]) == steps
        assert math.isclose(float(row["last_loss"]), loss_at(x, y, steps), rel_tol=1e-9)
        assert math.isclose(float(row["best_loss"]), loss_at(x, y, steps), rel_tol=1e-9)  # the loss only falls
    best = read_best(run_dir)
    winner = min(rows, key=lambda row: float(row["best_loss"]))
    assert best["trial_id"] == winner["trial_id"] and best["metric"] == "loss" and best["mode"] == "min"
    x, y = best["config"]["objective.params.x"], best["config"]["objective.params.y"]
    assert set(best["metrics"]) == {"step", "loss"}
    assert math.isclose(best["metrics"]["loss"], loss_at(x, y, best["metrics"]["step"]), rel_tol=1e-9)
    assert best["step"] == best["metrics"]["step"]
    assert result.metrics == best["metrics"]
    # the known optimum: no trial's bowl value is below the winner's (the winner ran to the end: nothing stops the
    # trial that leads at every step)
    assert all(
        (x - 3) ** 2 + (y + 1) ** 2
        <= (float(r["objective.params.x"]) - 3) ** 2 + (float(r["objective.params.y"]) + 1) ** 2 + 1e-9
        for r in rows
    )
    if name == "grid":  # the grid holds the optimum itself
        assert (x, y) == (3, -1) and best["metrics"]["loss"] == pytest.approx(1 / STEPS)
        # median_stopping lets a trial run on while too few others have reached its step: none was paused for the
        # waiting ones, which would have started it again from step 1 (the bowl keeps no checkpoint)
        for row in rows:
            lines = (Path(run_dir) / f"trial_{row['trial_id']}" / "result.json").read_text(encoding="utf-8")
            reported = [json.loads(line)["training_iteration"] for line in lines.splitlines()]
            assert reported == list(range(1, int(row["steps"]) + 1)), row


def test_best_yaml_runs_the_best_params_once(searches, tmp_path, local_ray):
    spec, run_dir, _ = searches["grid"]
    best_spec = Path(run_dir) / "best.yaml"
    text = yaml.safe_load(best_spec.read_text(encoding="utf-8"))
    assert text["objective"]["params"] == {"steps": STEPS, "x": 3, "y": -1, "label": "kept"}
    copy = spec.parent / "best.yaml"  # beside the function's module, as its header says
    copy.write_text(best_spec.read_text(encoding="utf-8"), encoding="utf-8")
    result = run_spec(copy, storage_path=tmp_path, quiet=True)
    assert result.metrics == {"step": STEPS, "loss": pytest.approx(1 / STEPS)}
    assert len(rows_of(tmp_path / "bowl-grid-best")) == 1


def test_plan_shows_the_configs_the_random_search_ran(searches, capsys):
    spec, run_dir, _ = searches["random"]
    assert main(["plan", str(spec), "--format", "json", "--configs", "4"]) == 0
    planned = json.loads(capsys.readouterr().out)["configs"]["values"]
    ran = [{key: float(row[key]) for key in ("objective.params.x", "objective.params.y")} for row in rows_of(run_dir)]
    key = lambda config: (round(config["objective.params.x"], 9), round(config["objective.params.y"], 9))  # noqa: E731
    assert sorted(map(key, planned)) == sorted(map(key, ran))


def test_results_and_report_read_an_objective_run(searches, capsys, tmp_path):
    _spec, run_dir, _ = searches["optuna"]
    assert main(["results", str(run_dir)]) == 0
    shown = capsys.readouterr().out
    assert "objective.params.x" in shown or "x" in shown
    assert read_best(run_dir)["trial_id"] in shown
    report = tmp_path / "report.html"
    assert main(["report", str(run_dir), "-o", str(report)]) == 0
    assert read_best(run_dir)["trial_id"] in report.read_text(encoding="utf-8")


def test_resume_continues_the_finished_search_without_rerunning_it(searches):
    spec, run_dir, _ = searches["hyperopt"]
    before = rows_of(run_dir)
    result = run_spec(spec, storage_path=run_dir.parent, quiet=True, resume=True)
    after = rows_of(run_dir)
    ordered = lambda rows: sorted(rows, key=lambda row: row["trial_id"])  # noqa: E731
    assert ordered(after) == ordered(before)  # Tuner.restore: the finished trials, none rerun or added
    assert result.metrics == read_best(run_dir)["metrics"]


def test_the_compiled_script_runs_on_its_own(searches, tmp_path):
    """`specc compile` then `python script.py --smoke` in a fresh interpreter that starts its own Ray: the script
    imports the function from the spec's directory (relative to the script), not from specc."""
    spec, _run_dir, _ = searches["optuna"]
    script = compile_spec(spec, tmp_path / "scripts" / "bowl.py")
    done = python_script(script, "--smoke", "--quiet", "--storage-path", tmp_path / "runs", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = rows_of(tmp_path / "runs" / "bowl-optuna")
    assert len(rows) == 1 and rows[0]["steps"] == "1" and rows[0]["last_step"] == "1"
    assert set(read_best(tmp_path / "runs" / "bowl-optuna")["metrics"]) == {"step", "loss"}


def test_pbt_over_the_example_function_copies_checkpoints_and_perturbs_lr(tmp_path, local_ray):
    """specs/objective_pbt.yaml as users run it: 4 trials of Ray's pbt_function, perturbed every 4 steps. A trial
    that exploits goes on from the donor's checkpoint (its accuracy jumps to the donor's, more than a step of its
    own can add) with a new lr, and every trial reaches step 20, no step repeated. (Seen here: each of the 4 trials
    exploited once, at steps 4, 8, 12 and 16.)"""
    root = Path(__file__).parents[2]
    (tmp_path / "factories").mkdir()
    shutil.copy(root / "specs" / "factories" / "objectives.py", tmp_path / "factories" / "objectives.py")
    spec = shutil.copy(root / "specs" / "objective_pbt.yaml", tmp_path / "objective_pbt.yaml")
    run_spec(spec, storage_path=tmp_path / "runs", quiet=True)
    run_dir = tmp_path / "runs" / "objective-pbt"
    rows = rows_of(run_dir)
    assert len(rows) == 4 and {row["status"] for row in rows} == {"completed"}, rows
    assert {row["steps"] for row in rows} == {"20"}
    exploited, copied = [], []
    for row in rows:
        lines = (run_dir / f"trial_{row['trial_id']}" / "result.json").read_text(encoding="utf-8").splitlines()
        reports = [json.loads(line) for line in lines]
        steps = [report["training_iteration"] for report in reports]
        assert steps == sorted(set(steps)) and steps[-1] == 20, steps  # none redone (a paused trial's last reports
        # before its checkpoint may be missing: Tune drops the results a function reports while it is being paused)
        lrs = [report["lr"] for report in reports]
        exploited += [lrs[i] != lrs[i - 1] for i in range(1, len(lrs))]
        accuracy = [report["mean_accuracy"] for report in reports]
        # one step of its own adds at most 0.2 * (1 - accuracy): a bigger rise is the donor's checkpoint
        copied += [accuracy[i] - accuracy[i - 1] > 0.2 * (1 - accuracy[i - 1]) for i in range(1, len(accuracy))]
        assert all(1.0e-3 * 0.8**5 <= lr <= 1.2**5 for lr in lrs), lrs  # explored from the loguniform's range
    assert sum(exploited) >= 1 and sum(copied) >= 1  # PBT gave some trial a new lr and a donor's state
    best = read_best(run_dir)
    assert best["metrics"]["mean_accuracy"] == max(float(row["best_mean_accuracy"]) for row in rows)
