"""Diverged training (issue 15, class 6): the compiled loops stop at the first NaN or infinite loss after
reporting it, a search's results (specc_runtime.write_search_results, given the script's RUN["search"]) say
`diverged` in strict JSON, and specc run turns that into E415 or W310. The scripts' functions are called directly
with Ray's session replaced by a recorder: no Ray is started. (A training run's results.csv and best.json:
tests/unit/runtime/test_results.py.)"""

from __future__ import annotations

import contextlib
import io
import json
import math
import types
from pathlib import Path

import pandas as pd
import pytest
import specc_runtime

from specc import api
from specc.execute.run import diverged_problems
from tests.conftest import ROOT

SPEC = """\
specc: 1
name: boom
framework: {framework}
model: {{type: mlp, hidden_sizes: [16]}}
dataset: {{type: digits, batch_size: 64}}
training: {{epochs: 4, optimizer: {{type: sgd, lr: 1.0e+12}}, checkpoint_every: 1}}
scaling: {{num_workers: {workers}}}
"""
SEARCH = """\
tune:
  metric: val_accuracy
  mode: max
  num_samples: 1
  space: {training.optimizer.lr: {grid: [0.05, 1.0e+12]}}
"""


def strict(text: str):
    """json.loads that refuses NaN and Infinity, which Python's json writes but JSON does not have."""

    def refuse(constant):
        raise ValueError(f"not JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


def script_of(write_spec, text: str) -> types.ModuleType:
    path = write_spec(text)
    script = types.ModuleType("diverging")
    script.__file__ = str(path.parent / "script.py")
    exec(compile(api.compile(api.load(path)), script.__file__, "exec"), script.__dict__)
    return script


class Session:
    """Stands in for ray.train / ray.tune in a script: records each report and whether it carried a checkpoint."""

    def __init__(self):
        self.reports = []
        self.Checkpoint = types.SimpleNamespace(from_directory=lambda directory: "a checkpoint")

    def report(self, metrics, checkpoint=None):
        self.reports.append((dict(metrics), checkpoint is not None))

    def get_checkpoint(self):
        return None


@pytest.mark.parametrize("diverging", [True, False], ids=["lr 1e12", "lr 0.05"])
def test_the_torch_loop_reports_the_first_nan_epoch_then_stops(write_spec, diverging):
    script = script_of(write_spec, SPEC.format(framework="torch", workers=1) + SEARCH)  # lean: one process
    script.tune, script.ray = Session(), types.SimpleNamespace(get_gpu_ids=lambda: [])
    lr = 1e12 if diverging else 0.05
    config = specc_runtime.with_sample(script.CONFIG, {"training.optimizer.lr": lr, "training.max_batches": 5})
    history = script.train_func(config)

    reports = script.tune.reports
    if not diverging:
        assert len(reports) == 4 and all(math.isfinite(m["train_loss"]) for m, _ in reports)
        return
    *before, (last, checkpointed) = reports
    assert specc_runtime.diverged(last) == "train_loss" and not checkpointed  # reported, with no NaN checkpoint
    assert all(specc_runtime.diverged(metrics) is None and saved for metrics, saved in before)
    assert len(reports) < 4 and history == [metrics for metrics, _ in reports]


def test_the_keras_callback_reports_the_nan_epoch_and_stops_fit(write_spec):
    script = script_of(write_spec, SPEC.format(framework="tensorflow", workers=2))
    script.ray = types.SimpleNamespace(train=Session())
    saved = []
    callback = script.ReportEpoch([], script.CONFIG["training"], rank=0)
    callback.model = types.SimpleNamespace(
        stop_training=False, save=lambda path, save_format: saved.append(path), trainable_weights=[]
    )

    callback.on_epoch_end(0, {"loss": 2.3, "val_loss": 2.2, "val_accuracy": 0.1})
    assert callback.model.stop_training is False and len(saved) == 1
    callback.on_epoch_end(1, {"loss": float("nan"), "val_loss": float("nan"), "val_accuracy": 0.1})
    assert callback.model.stop_training is True and len(saved) == 1  # no checkpoint of NaN weights
    assert [(m["epoch"], c) for m, c in script.ray.train.reports] == [(1, True), (2, False)]  # counted from 1


def epoch(n, loss, accuracy=0.5):
    return {"epoch": n, "train_loss": loss, "val_loss": loss, "val_accuracy": accuracy}


def trial(trial_id, lr, history, error=None):
    frame = pd.DataFrame(history)
    return types.SimpleNamespace(
        path=f"/runs/boom/trial_{trial_id}",
        config={"training.optimizer.lr": lr},
        metrics=history[-1] if history else {},
        metrics_dataframe=frame,
        error=error,
        best_checkpoints=[],
        checkpoint=types.SimpleNamespace(path=f"/runs/boom/trial_{trial_id}/checkpoint_000001"),
    )


def search_results(script, run_dir, trials):
    """The search's results.csv, best.json and best.yaml as its run writes them: the runtime's, by its RUN["search"]."""
    search = script.RUN["search"]
    return specc_runtime.write_search_results(str(run_dir), trials, script.CONFIG, search, script.RESOLVED_SPEC)


def said(script, run_dir, summary, table) -> list[str]:
    """What the script prints at the end of the search, as lines."""
    run = specc_runtime.Run(script.__file__, "a search", [], script.RESOLVED_SPEC, script.RUN)
    run.run_dir = str(run_dir)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            run.say_search(summary, table)
        except SystemExit as stopped:
            print(f"exit: {stopped}")
    return out.getvalue().splitlines()


def test_a_search_picks_its_best_among_the_trials_whose_loss_stayed_finite(write_spec, tmp_path):
    script = script_of(write_spec, SPEC.format(framework="torch", workers=1) + SEARCH)
    trials = [
        trial("a", 1e12, [epoch(1, 2.0, 0.99), epoch(2, math.nan, 0.1)]),  # the best accuracy, then NaN
        trial("b", 0.05, [epoch(1, 1.0, 0.7), epoch(2, 0.5, 0.8), epoch(3, 0.4, 0.85), epoch(4, 0.3, 0.9)]),
    ]

    summary, table = search_results(script, tmp_path, trials)

    best = strict((tmp_path / "best.json").read_text(encoding="utf-8"))
    assert (best["status"], best["trial_id"], best["metrics"]["val_accuracy"]) == ("completed", "b", 0.9)
    assert said(script, tmp_path, summary, table)[:3] == [  # what the script run by hand ends with
        "trial_id  status     epochs  best_val_accuracy",
        "a         diverged   2       0.99",
        "b         completed  4       0.9",
    ]
    assert best["diverged"] == summary["diverged"] == [{"trial_id": "a", "epoch": 2, "metric": "train_loss"}]
    rows = (tmp_path / "results.csv").read_text().splitlines()
    assert rows[1].startswith("a,diverged,2,") and rows[2].startswith("b,completed,4,")
    assert (tmp_path / "best.yaml").exists()


def test_a_trial_whose_history_tune_lost_is_ranked_by_its_last_result(write_spec, tmp_path):
    """Tune's history of a trial (result.json) can be empty though the trial reported every epoch: PBT restarted it
    after its last result (seen in CI). It is a completed trial with its last value, not a diverged search."""
    script = script_of(write_spec, SPEC.format(framework="torch", workers=1) + SEARCH)
    lost = trial("a", 0.05, [epoch(1, 1.0, 0.7), epoch(2, 0.5, 0.8)])
    lost.metrics_dataframe = pd.DataFrame()
    kept = trial("b", 0.01, [epoch(1, 1.0, 0.75), epoch(2, 0.6, 0.6)])

    summary, table = search_results(script, tmp_path, [lost, kept])

    assert (summary["status"], summary["trial_id"]) == ("completed", "a")
    assert [row["best_val_accuracy"] for row in table] == [0.8, 0.75]


def test_a_search_whose_every_trial_diverged_has_no_best(write_spec, tmp_path):
    script = script_of(write_spec, SPEC.format(framework="torch", workers=1) + SEARCH)
    trials = [trial("a", 1e12, [epoch(1, math.inf, 0.1)]), trial("b", 1e11, [epoch(1, 2.0), epoch(2, math.nan)])]

    summary, table = search_results(script, tmp_path, trials)

    best = strict((tmp_path / "best.json").read_text(encoding="utf-8"))
    assert (best["status"], best["trial_id"], best["metrics"]) == ("diverged", None, {})
    assert [d["trial_id"] for d in summary["diverged"]] == ["a", "b"]
    assert not (tmp_path / "best.yaml").exists()  # no trial to retrain
    assert said(script, tmp_path, summary, table)[-2:] == [
        "diverged (NaN or infinite loss): a, b",
        "exit: boom diverged: every trial's loss became NaN or infinite; lower the learning rate "
        "(training.optimizer.lr) or clip gradients (training.grad_clip_norm)",
    ]


def test_a_diverged_run_is_e415_with_the_fields_that_tame_it(write_spec):
    experiment = api.load(write_spec(SPEC.format(framework="torch", workers=2)))
    summary = {"status": "diverged", "diverged": {"epoch": 3, "metric": "train_loss"}}

    (problem,) = diverged_problems(experiment, summary, "boom.yaml")

    assert str(problem) == "boom.yaml: error[E415]: boom diverged: train_loss is NaN or infinite at epoch 3"
    assert problem.hint == (
        "lower the learning rate (training.optimizer.lr, now 1e+12) "
        "or clip gradients (training.grad_clip_norm, e.g. 1.0)"
    )
    assert diverged_problems(experiment, {"status": "completed", "diverged": None}, "boom.yaml") == ()


def test_a_search_with_diverged_trials_warns_and_one_with_only_those_fails(write_spec):
    experiment = api.load(write_spec(SPEC.format(framework="torch", workers=1) + SEARCH))
    trials = [{"trial_id": "a", "epoch": 1, "metric": "train_loss"}]

    (warning,) = diverged_problems(experiment, {"status": "completed", "diverged": trials}, "boom.yaml")
    (error,) = diverged_problems(experiment, {"status": "diverged", "diverged": trials}, "boom.yaml")

    assert warning.code == "W310" and "a (train_loss at epoch 1)" in warning.message
    assert error.code == "E415" and "every trial" in error.message
    assert "training.optimizer.lr, searched in tune.space" in error.hint


@pytest.mark.parametrize("framework", ["torch", "tensorflow"])
@pytest.mark.parametrize("workers", [0, 1, 2])
@pytest.mark.parametrize("search", [False, True], ids=["train", "tune"])
def test_every_shape_checks_each_epoch_loss(write_spec, framework, workers, search):
    """Local mode, lean trials, Train workers and trials that drive a Trainer all run the same loop."""
    source = api.compile(api.load(write_spec(SPEC.format(framework=framework, workers=workers) + SEARCH * search)))
    assert "diverging = specc_runtime.diverged(metrics)" in source and "not diverging and" in source
    assert ("self.model.stop_training = True" if framework == "tensorflow" else "            break") in source


def test_every_golden_stops_at_a_diverged_loss():
    for golden in sorted(Path(ROOT / "tests" / "golden").glob("*.py")):
        source = golden.read_text(encoding="utf-8")
        if golden.name == "specc_runtime.py":  # the runtime every golden imports: its results are strict JSON
            assert "allow_nan=False" in source.split("\ndef strict_json(", 1)[1].split("\n\n\n", 1)[0]
            continue
        written = ("run.finish(", "run.finish_search(", "specc_runtime.strict_json(")
        assert any(call in source for call in written), golden.name  # results go through the runtime's JSON
        if "\nOBJECTIVE = " in source or "\nTRAINABLE = " in source:  # the user's own function or Trainable class:
            # specc knows no loss of it to watch
            assert "diverged(" not in source, golden.name
            continue
        assert "specc_runtime.diverged(metrics)" in source and "def diverged(" not in source, golden.name
