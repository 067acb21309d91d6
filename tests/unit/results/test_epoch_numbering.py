"""One epoch numbering everywhere (issue 48, item 3): epochs count from 1, as the progress lines (`epoch 1/5`) and
Ray's training_iteration do, in results.csv, best.json, `specc results`, the last screen of a run and the report.

A run directory a specc before that wrote counted them from 0: its best.json has no `epochs_counted_from` and a
training run's results.csv starts at epoch 0. Every command reads such a run renumbered, so that it shows the same
number for the same epoch whichever specc wrote the run. (What a compiled script writes: tests/e2e/test_progress.py.)
"""

from __future__ import annotations

import json

import pytest

from specc.results.history import curves
from specc.results.run_dir import format_csv, format_text, read_run, render
from specc.results.summary import summary

from .test_report import figures, report_of, table_rows, write_train_run, write_tune_run
from .test_results import OLD_TRAIN_CSV, TRAIN_CSV, TRAIN_SPEC, write_run

pytest.importorskip("plotly")

OLD_BEST = {  # best.json as a specc before issue 48 wrote it: epoch 3 is the fourth, as results.csv counted
    "metrics": {"epoch": 3, "train_loss": 0.30786609649658203, "val_loss": 0.24623218178749084,
                "val_accuracy": 0.9610027855153204},
    "checkpoint": None,
    "diverged": None,
}  # fmt: skip


def table_epochs(text: str) -> list[tuple[str, str]]:
    """(mark, epoch) of each row of a training run's table in `specc results`' text."""
    rows = text.split("  -----  ", 1)[1].split("\n\n", 1)[0].splitlines()[1:]
    return [(line[0], line[1:].split()[0]) for line in rows]


def test_a_training_run_an_earlier_specc_wrote_is_shown_counting_from_1(tmp_path):
    files = {"results.csv": OLD_TRAIN_CSV, "best.json": OLD_BEST, "spec.resolved.yaml": TRAIN_SPEC}
    results = read_run(write_run(tmp_path / "digits-mlp", files))

    assert results.epoch_shift == 1 and results.warnings == []  # best.json and results.csv still agree
    assert [row["epoch"] for row in results.rows] == [1, 2, 3, 4, 5] and results.best_row == 3
    text = format_text(results)
    assert table_epochs(text) == [(" ", "1"), (" ", "2"), (" ", "3"), ("*", "4"), (" ", "5")]
    assert "best epoch: 4, val_accuracy 0.961 (max)" in text
    document = json.loads(render(results, "json"))
    assert [row["epoch"] for row in document["rows"]] == [1, 2, 3, 4, 5]
    assert document["best"]["metrics"]["epoch"] == 4 and document["best"]["epochs_counted_from"] == 1
    assert [line.split(",")[0] for line in format_csv(results).splitlines()[1:]] == ["1", "2", "3", "4", "5"]
    assert "  best epoch  4 by val_accuracy\n" in summary(results, 1.0)  # the last screen of a run
    (curve,) = curves(results)
    assert curve.points("val_accuracy")[0] == [1, 2, 3, 4, 5]


def test_a_training_run_this_specc_wrote_is_shown_as_written(tmp_path):
    best = {**OLD_BEST, "metrics": {**OLD_BEST["metrics"], "epoch": 4}, "epochs_counted_from": 1}
    files = {"results.csv": TRAIN_CSV, "best.json": best, "spec.resolved.yaml": TRAIN_SPEC}
    results = read_run(write_run(tmp_path / "digits-mlp", files))

    assert results.epoch_shift == 0 and results.warnings == []
    assert [row["epoch"] for row in results.rows] == [1, 2, 3, 4, 5] and results.best_row == 3
    assert "best epoch: 4, val_accuracy 0.961 (max)" in format_text(results)


def test_the_epoch_an_earlier_training_run_diverged_at_is_renumbered_too(tmp_path):
    best = {"status": "diverged", "diverged": {"epoch": 1, "metric": "train_loss"},
            "metrics": {"epoch": 0, "train_loss": 1.2, "val_loss": 1.0}, "checkpoint": None}  # fmt: skip
    results_csv = "epoch,train_loss,val_loss\n0,1.2,1.0\n1,nan,nan\n"
    run_dir = write_run(tmp_path / "diverging", {"results.csv": results_csv, "best.json": best})
    results = read_run(run_dir)

    assert format_text(results).splitlines()[0] == f"{run_dir}: 2 epochs (diverged at epoch 2)"
    assert "  diverged    at epoch 2: train_loss is NaN or infinite" in summary(results, 1.0)
    assert "diverged at epoch 2" in report_of(run_dir, tmp_path)


def test_a_training_run_an_earlier_specc_wrote_has_its_report_counting_from_1(tmp_path):
    page = report_of(write_train_run(tmp_path / "runs", counted_from=0), tmp_path)

    line, star = figures(page)["curves-0"][0]
    assert line["x"] == [1, 2, 3, 4] and star["x"] == [3]
    rows = table_rows(page)
    assert rows[2].startswith('<tr class="best">') and "★ 3" in rows[2]


def test_a_search_an_earlier_specc_wrote_is_shown_counting_from_1(tmp_path):
    run_dir = write_tune_run(tmp_path / "runs", progress_csv=("ab12c_00001",), counted_from=0)
    best = json.loads((run_dir / "best.json").read_text(encoding="utf-8"))
    best["diverged"] = [{"trial_id": "ab12c_00001", "epoch": 0, "metric": "train_loss"}]
    (run_dir / "best.json").write_text(json.dumps(best), encoding="utf-8")
    results = read_run(run_dir)

    assert results.epoch_shift == 1
    assert results.best["metrics"]["epoch"] == 4 and results.best["diverged"][0]["epoch"] == 1
    assert "(max, at epoch 4)" in format_text(results)
    lines = {line.name: line for line in curves(results)}
    assert lines["ab12c_00003"].points("val_accuracy")[0] == [1, 2, 3, 4]  # from its result.json
    assert lines["ab12c_00001"].points("val_accuracy")[0] == [1]  # from its progress.csv
    assert "at epoch 4" in report_of(run_dir, tmp_path)


@pytest.mark.parametrize("counted_from", [0, 1], ids=["earlier", "this"])
def test_a_search_without_best_json_is_numbered_by_what_its_trials_reported(tmp_path, counted_from):
    """Every trial of a search errored (results.csv alone): a trial that reported an epoch 0 counted from 0."""
    run_dir = write_tune_run(tmp_path / "runs", counted_from=counted_from)
    (run_dir / "best.json").unlink()
    results = read_run(run_dir)

    assert results.epoch_shift is None
    lines = {line.name: line for line in curves(results)}
    assert lines["ab12c_00003"].points("val_accuracy")[0] == [1, 2, 3, 4]


def test_a_search_this_specc_wrote_is_shown_as_written(tmp_path):
    results = read_run(write_tune_run(tmp_path / "runs"))

    assert results.epoch_shift == 0 and results.best["metrics"]["epoch"] == 4
    (best,) = [line for line in curves(results) if line.best]
    assert best.points("val_accuracy")[0] == [1, 2, 3, 4]


def test_an_objectives_own_epoch_is_never_renumbered(tmp_path):
    """An objective search reports steps (training_iteration); an `epoch` it reports is its own number."""
    run_dir = write_run(
        tmp_path / "objective",
        {"results.csv": "trial_id,status,steps,x,best_loss\nt_00000,completed,2,0.5,0.25\n",
         "best.json": {"trial_id": "t_00000", "metric": "loss", "mode": "min", "config": {"x": 0.5},
                       "metrics": {"loss": 0.25, "epoch": 0}, "step": 2, "checkpoint": None}},
    )  # fmt: skip
    reports = [{"epoch": 0, "loss": 0.5, "training_iteration": 1}, {"epoch": 1, "loss": 0.25, "training_iteration": 2}]
    (tmp_path / "objective" / "trial_t_00000").mkdir()
    text = "".join(json.dumps(report) + "\n" for report in reports)
    (tmp_path / "objective" / "trial_t_00000" / "result.json").write_text(text, encoding="utf-8")
    results = read_run(run_dir)

    assert results.epoch_shift == 0 and results.best["metrics"]["epoch"] == 0
    (line,) = curves(results)
    assert line.points("loss")[0] == [0, 1]
