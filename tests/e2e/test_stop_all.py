"""SPEC §12's stop additions on the session Ray: `stop.all_when` ends the whole search, and `stop.when` on Ray's
own `training_iteration` stops each trial after that many reports (specs/digits_stop_all.yaml as users run it).

The witnesses are Ray's own per-trial result.json files (one line per report) beside specc's results.csv.
"""

from __future__ import annotations

import json
import shutil

import pytest

from specc.api import load
from specc.results.run_dir import read_run
from specc.results.summary import summary
from tests.conftest import ROOT

from .conftest import run_spec
from .test_tune import by_id, ray_history, trial_index, trial_rows

pytestmark = pytest.mark.slow

SPEC = ROOT / "specs" / "digits_stop_all.yaml"


@pytest.fixture(scope="module")
def stopped_search(tmp_path_factory, local_ray):
    root = tmp_path_factory.mktemp("stop-all")
    spec = shutil.copy(SPEC, root / SPEC.name)
    result = run_spec(spec, storage_path=root / "runs")
    return root / "runs" / "digits-stop-all", result


def history(run_dir, trial_id) -> list[dict]:
    path = run_dir / f"trial_{trial_id}" / "result.json"
    return ray_history(run_dir, trial_id) if path.exists() else []


def test_the_spec_is_what_the_test_relies_on():
    experiment = load(SPEC)
    assert experiment.stop.when == ["training_iteration >= 2"] and experiment.stop.all_when == ["val_accuracy >= 0.8"]
    assert experiment.tune.space["training.optimizer.lr"].args == [1.0e-4, 2.0e-4, 0.1, 3.0e-4]
    assert experiment.tune.max_concurrent_trials == 1 and experiment.training.epochs == 6


def test_training_iteration_stops_each_trial_after_two_reports(stopped_search):
    """The two small learning rates never reach 0.8: Ray's training_iteration (not an epoch count of specc's)
    stops them after their second report, of 6 epochs."""
    run_dir, _ = stopped_search
    rows = sorted(trial_rows(run_dir), key=lambda row: trial_index(row["trial_id"]))
    for row in rows[:2]:
        reports = history(run_dir, row["trial_id"])
        assert [report["training_iteration"] for report in reports] == [1, 2], row
        assert row["status"] == "stopped" and row["epochs"] == 2, row
        assert all(report["val_accuracy"] < 0.8 for report in reports), reports


def test_all_when_ends_the_search_at_the_first_trial_that_meets_it(stopped_search):
    """lr 0.1 (the third trial) reaches val_accuracy 0.8: the search ends there, and the fourth trial, next in
    line with one trial at a time, never trains."""
    run_dir, _ = stopped_search
    rows = sorted(trial_rows(run_dir), key=lambda row: trial_index(row["trial_id"]))
    by_lr = {row["training.optimizer.lr"]: row for row in rows}
    winner = by_lr[0.1]
    reports = history(run_dir, winner["trial_id"])
    assert reports and reports[-1]["val_accuracy"] >= 0.8, reports
    assert all(report["val_accuracy"] < 0.8 for report in reports[:-1]), reports  # it ended at the first one
    assert winner["status"] == "stopped" and winner["epochs"] == len(reports) <= 2
    assert not any(
        report["val_accuracy"] >= 0.8
        for row in rows
        if row is not winner
        for report in history(run_dir, row["trial_id"])
    )
    last = [row for row in rows if row["training.optimizer.lr"] == 3.0e-4]
    assert all(history(run_dir, row["trial_id"]) == [] and not row["epochs"] for row in last), last
    assert sum(len(history(run_dir, row["trial_id"])) for row in rows) == 2 + 2 + len(reports)
    assert by_id(rows)  # results.csv holds the search's trials


def test_best_json_and_the_summary_say_the_search_was_ended_by_all_when(stopped_search):
    run_dir, _ = stopped_search
    rows = {row["training.optimizer.lr"]: row for row in trial_rows(run_dir)}
    best = json.loads((run_dir / "best.json").read_text())
    ended = {"condition": "val_accuracy >= 0.8", "trial_id": rows[0.1]["trial_id"], "training_iteration": 0}
    ended["training_iteration"] = len(history(run_dir, rows[0.1]["trial_id"]))
    assert best["ended_by"] == ended
    text = summary(read_run(str(run_dir)), 1.0)
    assert (
        f"ended by    stop.all_when val_accuracy >= 0.8: trial {ended['trial_id']} met it at training_iteration" in text
    )
