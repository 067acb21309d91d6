"""`run` (SPEC §8): storage, checkpoints kept, retries, callbacks and the resume policy."""

from __future__ import annotations

import pytest


def test_defaults(shown):
    assert shown("")["run"] == {
        "storage_path": "./runs",
        "name": "tiny",  # the spec's name
        "checkpoints_to_keep": 2,
        "checkpoint_score": None,
        "max_failures": 0,
        "fail_fast": False,
        "callbacks": [],
        "resume": "auto",
    }


def test_show_fills_run_name_with_the_spec_name(shown):
    assert shown("")["run"]["name"] == "tiny"


@pytest.mark.parametrize(
    "run",
    [
        "{callbacks: [csv, json, tensorboard, mlflow, wandb]}",
        "{max_failures: -1}",  # retry forever
        "{max_failures: 3}",
        "{resume: auto}",
        "{resume: never}",
        "{resume: errored_only}",
        "{checkpoints_to_keep: null}",  # keep all
        "{storage_path: 's3://bucket/runs', name: digits-asha_2}",
        "{checkpoint_score: {metric: val_loss, mode: min}}",
    ],
)
def test_accepted(problems, run):
    assert problems(f"run: {run}") == []


@pytest.mark.parametrize(
    ("run", "expected"),
    [
        ("{callbacks: [csv, comet]}", [("E104", "run.callbacks.1")]),
        ("{callbacks: csv}", [("E103", "run.callbacks")]),
        ("{max_failures: -2}", [("E106", "run.max_failures")]),
        ("{max_failures: 1.5}", [("E103", "run.max_failures")]),
        ("{resume: always}", [("E104", "run.resume")]),
        ("{resume: true}", [("E104", "run.resume")]),
        ("{checkpoints_to_keep: 0}", [("E106", "run.checkpoints_to_keep")]),
        ("{storage_path: ''}", [("E107", "run.storage_path")]),
        ("{name: My-Run}", [("E107", "run.name")]),
        ("{checkpoint_score: {metric: val_loss}}", [("E102", "run.checkpoint_score.mode")]),
        ("{checkpoint_score: {metric: val_loss, mode: lowest}}", [("E104", "run.checkpoint_score.mode")]),
        ("{checkpoint_score: {metric: val_acc, mode: max}}", [("E201", "run.checkpoint_score.metric")]),
        ("{working_dir: .}", [("E101", "run.working_dir")]),
    ],
)
def test_rejected(problems, run, expected):
    assert problems(f"run: {run}") == expected


def test_callbacks_choices_are_listed(report):
    (problem,) = report("run: {callbacks: [comet]}").problems
    assert problem.message == "'comet' is not one of: csv, json, tensorboard, mlflow, wandb"


def test_resume_choices_are_listed(report):
    (problem,) = report("run: {resume: errored}").problems
    assert problem.message == "'errored' is not one of: auto, never, errored_only"
    assert problem.hint == "did you mean 'errored_only'?"


def test_max_failures_bound_is_named(report):
    (problem,) = report("run: {max_failures: -2}").problems
    assert problem.message == "must be >= -1, got -2"
