"""SPEC §12's multi-objective search on the session Ray: specs/digits_multi_objective.yaml as users run it, Optuna
over an MLP's width and learning rate for val_accuracy (max) against num_parameters (min).

The witnesses are Ray's own per-trial files (result.json, one line per report; params.json, the sampled config)
beside specc's results.csv: best.json's front must be exactly the trials no other trial beats on both objectives'
last values, computed here from results.csv with a definition of dominance written out in the test. An objective
spec (the user's own function, fixtures/objective_two_losses.py) searches a front the same way.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from specc.api import check_file, load
from specc.cli import main
from tests.conftest import ROOT

from .conftest import read_best, run_spec
from .test_tune import by_id, ray_history, ray_params, trial_rows

pytestmark = pytest.mark.slow

SPEC = ROOT / "specs" / "digits_multi_objective.yaml"
OBJECTIVES = (("val_accuracy", "max"), ("num_parameters", "min"))


@pytest.fixture(scope="module")
def searched(tmp_path_factory, local_ray):
    pytest.importorskip("optuna")
    root = tmp_path_factory.mktemp("multi-objective")
    spec = shutil.copy(SPEC, root / SPEC.name)
    result = run_spec(spec, storage_path=root / "runs", quiet=True)
    return spec, root / "runs" / "digits-multi-objective", result


def better_or_equal(a: dict, b: dict, objectives=OBJECTIVES) -> bool:
    """a is at least as good as b on every objective."""
    return all(a[m] >= b[m] if mode == "max" else a[m] <= b[m] for m, mode in objectives)


def non_dominated(rows: list[dict], objectives=OBJECTIVES) -> set[str]:
    last = {row["trial_id"]: {m: row[f"last_{m}"] for m, _ in objectives} for row in rows}
    return {
        trial
        for trial, values in last.items()
        if not any(
            better_or_equal(other, values, objectives) and other != values for o, other in last.items() if o != trial
        )
    }


def test_the_spec_is_what_the_test_relies_on():
    experiment = load(SPEC)
    assert experiment.tune.metric == ["val_accuracy", "num_parameters"] and experiment.tune.mode == ["max", "min"]
    assert experiment.tune.search.type == "optuna" and experiment.scheduler is None


def test_best_json_holds_exactly_the_non_dominated_trials_of_results_csv(searched):
    _spec, run_dir, _ = searched
    rows = trial_rows(run_dir)
    assert len(rows) == 8 and {row["status"] for row in rows} == {"completed"}
    assert len({row["last_num_parameters"] for row in rows}) > 1  # the widths differ: two objectives to trade
    best = read_best(run_dir)
    front = [member["trial_id"] for member in best["front"]]
    assert len(front) == len(set(front)) and set(front) == non_dominated(rows)
    assert {row["trial_id"] for row in rows if row["pareto"] in (True, "True")} == set(front)
    assert best["metric"] == ["val_accuracy", "num_parameters"] and best["mode"] == ["max", "min"]
    accuracies = [member["metrics"]["val_accuracy"] for member in best["front"]]
    assert accuracies == sorted(accuracies, reverse=True)  # best first by the first metric
    assert best["trial_id"] == front[0] and best["config"] == best["front"][0]["config"]


def test_each_member_is_its_trial_s_last_result_config_and_checkpoint(searched):
    """By the trial's last report (what Ray's OptunaSearch tells Optuna), as Ray recorded it."""
    _spec, run_dir, _ = searched
    rows = by_id(trial_rows(run_dir))
    for member in read_best(run_dir)["front"]:
        trial = member["trial_id"]
        last = ray_history(run_dir, trial)[-1]
        for name, _ in OBJECTIVES:
            assert member["metrics"][name] == last[name] == rows[trial][f"last_{name}"]
        assert member["config"] == {path: ray_params(run_dir, trial)[path] for path in member["config"]}
        assert member["checkpoint"] and (run_dir / f"trial_{trial}").as_posix() in member["checkpoint"]
        width = member["config"]["model.hidden_sizes.0"]
        assert member["metrics"]["num_parameters"] == 64 * width + width + width * 10 + 10  # digits: 64 in, 10 out


def test_best_yaml_is_the_front_s_first_member_as_a_valid_spec(searched):
    _spec, run_dir, _ = searched
    best = read_best(run_dir)
    spec = yaml.safe_load((run_dir / "best.yaml").read_text(encoding="utf-8"))
    assert "tune" not in spec and spec["model"]["hidden_sizes"] == [best["config"]["model.hidden_sizes.0"]]
    assert spec["training"]["optimizer"]["lr"] == best["config"]["training.optimizer.lr"]
    assert check_file(run_dir / "best.yaml").problems == []


def test_results_and_report_show_the_front(searched, capsys, tmp_path):
    _spec, run_dir, _ = searched
    front = read_best(run_dir)["front"]
    assert main(["results", str(run_dir)]) == 0
    shown = capsys.readouterr().out
    assert f"Pareto front: {len(front)} trial" in shown and "warning" not in shown
    assert all(f"trial {member['trial_id']}:" in shown for member in front)
    report = tmp_path / "report.html"
    assert main(["report", str(run_dir), "-o", str(report)]) == 0
    assert 'id="pareto-front"' in report.read_text(encoding="utf-8")


def test_resume_keeps_the_finished_search_and_its_front(searched):
    spec, run_dir, _ = searched
    before = read_best(run_dir)["front"]
    run_spec(spec, storage_path=run_dir.parent, quiet=True, resume=True)
    assert read_best(run_dir)["front"] == before


OBJECTIVE_SPEC = """\
specc: 1
name: two-losses
objective:
  function: two_losses_objective:two_losses
  params: {steps: 3, x: 0.0}
  metrics: [loss1, loss2]
  max_steps: 3
tune:
  metric: [loss1, loss2]
  mode: [min, min]
  num_samples: 6
  max_concurrent_trials: 2
  search: {type: optuna, seed: 1}
  space: {objective.params.x: {uniform: [-2, 2]}}
"""


def test_an_objective_function_s_front_is_its_non_dominated_trials(tmp_path, local_ray):
    pytest.importorskip("optuna")
    fixture = Path(__file__).parent / "fixtures" / "objective_two_losses.py"
    shutil.copyfile(fixture, tmp_path / "two_losses_objective.py")
    spec = tmp_path / "two_losses.yaml"
    spec.write_text(OBJECTIVE_SPEC, encoding="utf-8")
    run_spec(spec, storage_path=tmp_path / "runs", quiet=True)
    run_dir = tmp_path / "runs" / "two-losses"
    rows = trial_rows(run_dir)
    objectives = (("loss1", "min"), ("loss2", "min"))
    front = read_best(run_dir)["front"]
    assert len(rows) == 6 and {member["trial_id"] for member in front} == non_dominated(rows, objectives)
    for member in front:
        x = member["config"]["objective.params.x"]
        assert member["metrics"]["loss2"] == ray_history(run_dir, member["trial_id"])[-1]["loss2"] == (x + 1) ** 2
        assert member["step"] == 3
    # the trade-off lies in [-1, 1]: a trial outside it is beaten by the one at the nearer end, if it ran
    inside = [row for row in rows if -1 <= row["objective.params.x"] <= 1]
    assert all(row["pareto"] in (True, "True") for row in inside)
