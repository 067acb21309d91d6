"""`stop` (SPEC §7): early-stopping conditions, their grammar, time limits and the plateau rule."""

from __future__ import annotations

import pytest
from pydantic_core import PydanticCustomError

from specc.spec.stop import parse_condition

TUNE = "tune: {metric: val_accuracy, mode: max}\n"


def stop(fields: str) -> str:
    return f"{TUNE}stop: {{{fields}}}"


def test_defaults(shown):
    assert shown(stop(""))["stop"] == {
        "when": [],
        "all_when": [],
        "max_trial_time_s": None,
        "time_budget_s": None,
        "plateau": None,
    }


def test_plateau_defaults(shown):
    assert shown(stop("plateau: {metric: val_loss}"))["stop"]["plateau"] == {
        "metric": "val_loss",
        "std": 0.01,
        "num_results": 4,
        "grace_period": 4,
        "metric_threshold": None,
    }


@pytest.mark.parametrize(
    ("when", "expected"),
    [
        ("'val_accuracy >= 0.99'", ["val_accuracy >= 0.99"]),  # a single string is a list of one
        ("['val_accuracy >= 0.99', 'val_loss < 0.01']", ["val_accuracy >= 0.99", "val_loss < 0.01"]),
        ("[]", []),
    ],
)
def test_when_takes_a_string_or_a_list(shown, when, expected):
    assert shown(stop(f"when: {when}"))["stop"]["when"] == expected


@pytest.mark.parametrize(
    "condition",
    [
        "val_accuracy >= 0.99",
        "val_accuracy > 0.99",
        "val_loss <= 0.01",
        "val_loss < 0.01",
        "val_loss<=1e-3",
        "val_loss <= -1.5",
        "val_loss <= +2",
        "val_loss <= .5",
        "val_loss <= 5.",
        "val_loss <= 1E+2",
        "val_loss <= -.5e-3",
        "  val_loss <= 1  ",
        "epoch >= 5",
        "train_loss < 10",
    ],
)
def test_accepted_conditions(problems, condition):
    assert problems(stop(f"when: '{condition}'")) == []


@pytest.mark.parametrize(
    "condition",
    [
        "",
        "val_accuracy",
        ">= 0.9",
        "val_accuracy >=",
        "val_accuracy == 0.9",
        "val_accuracy != 1",
        "val_accuracy => 0.9",
        "val_accuracy >= high",
        "val_accuracy >= 0.9 and val_loss < 1",
        "val accuracy >= 0.9",
        "val_accuracy >= 1e",
        "val_accuracy >= nan",
        "val_accuracy >= inf",
        "val_accuracy >= 0x10",
        "val_accuracy >= 1_000",
        "val_accuracy >= --1",
        "1val >= 1",
    ],
)
def test_rejected_conditions(report, condition):
    (problem,) = report(stop(f"when: '{condition}'")).problems
    assert (problem.code, problem.path) == ("E111", "stop.when.0")
    assert "'<metric> <op> <number>' with op one of >= > <= <" in problem.message


def test_each_bad_condition_is_reported_at_its_index(problems):
    spec = stop("when: ['val_accuracy >= 0.9', 'val_loss = 1', 'val_loss <']")
    assert problems(spec) == [("E111", "stop.when.1"), ("E111", "stop.when.2")]


@pytest.mark.parametrize(
    ("when", "expected"),
    [("0.9", [("E103", "stop.when")]), ("[0.9]", [("E103", "stop.when.0")]), ("{a: 1}", [("E103", "stop.when")])],
)
def test_when_holds_strings(problems, when, expected):
    assert problems(stop(f"when: {when}")) == expected


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("val_accuracy >= 0.99", ("val_accuracy", ">=", 0.99)),
        ("val_loss<0.5", ("val_loss", "<", 0.5)),
        ("  epoch > 3 ", ("epoch", ">", 3.0)),
        ("val_mse <= -2.5e-3", ("val_mse", "<=", -0.0025)),
        ("val_mae <= +1E2", ("val_mae", "<=", 100.0)),
        ("val_loss <= .5", ("val_loss", "<=", 0.5)),
    ],
)
def test_parse_condition(text, parsed):
    assert parse_condition(text) == parsed


def test_parse_condition_returns_a_float():
    assert isinstance(parse_condition("epoch >= 5")[2], float)


def test_parse_condition_refuses_malformed_text():
    with pytest.raises(PydanticCustomError, match="is not a condition"):
        parse_condition("val_accuracy == 1")


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ("max_trial_time_s: 600, time_budget_s: 3600", []),
        ("max_trial_time_s: 1.5", []),
        ("max_trial_time_s: 0", [("E106", "stop.max_trial_time_s")]),
        ("time_budget_s: -1", [("E106", "stop.time_budget_s")]),
        ("time_budget_s: '1h'", [("E103", "stop.time_budget_s")]),
        ("plateau: {metric: val_loss, std: 0, num_results: 2, grace_period: 1, metric_threshold: 0.5}", []),
        ("plateau: {}", [("E102", "stop.plateau.metric")]),
        ("plateau: {metric: val_loss, std: -1}", [("E106", "stop.plateau.std")]),
        ("plateau: {metric: val_loss, num_results: 1}", [("E106", "stop.plateau.num_results")]),
        ("plateau: {metric: val_loss, grace_period: 0}", [("E106", "stop.plateau.grace_period")]),
        ("plateau: {metric: 'val loss'}", [("E107", "stop.plateau.metric")]),
        ("max_t: 5", [("E101", "stop.max_t")]),
    ],
)
def test_limits_and_plateau(problems, fields, expected):
    assert problems(stop(fields)) == expected


@pytest.mark.parametrize(
    ("fields", "path"),
    [("when: 'val_acc >= 0.9'", "stop.when.0"), ("plateau: {metric: val_mse}", "stop.plateau.metric")],
)
def test_metrics_must_be_reported(problems, fields, path):
    assert problems(stop(fields)) == [("E201", path)]


def test_stop_needs_tune(problems):
    assert problems("stop: {when: 'val_accuracy >= 0.9'}") == [("E205", "stop")]


# -- stop.all_when, and Ray's own result keys (SPEC §12) -------------------------------------------------------------
def test_all_when_takes_a_string_or_a_list(shown):
    assert shown(stop("all_when: 'val_accuracy >= 0.99'"))["stop"]["all_when"] == ["val_accuracy >= 0.99"]
    assert shown(stop("all_when: ['val_loss < 0.1', 'epoch >= 3']"))["stop"]["all_when"] == [
        "val_loss < 0.1",
        "epoch >= 3",
    ]


def test_all_when_conditions_are_parsed_like_when(report):
    (problem,) = report(stop("all_when: ['val_loss < 1', 'val_loss == 1']")).problems
    assert (problem.code, problem.path) == ("E111", "stop.all_when.1")


def test_all_when_metrics_must_be_reported(report):
    (problem,) = report(stop("all_when: ['val_acc >= 0.9']")).problems
    assert (problem.code, problem.path, problem.hint) == ("E201", "stop.all_when.0", "did you mean 'val_accuracy'?")
    assert problem.line is not None


def test_all_when_needs_tune(problems):
    assert problems("stop: {all_when: 'val_accuracy >= 0.9'}") == [("E205", "stop")]


@pytest.mark.parametrize("field", ["when", "all_when"])
@pytest.mark.parametrize(
    "condition", ["training_iteration >= 2", "training_iteration > 1", "time_total_s >= 30", "time_total_s > 0.5"]
)
def test_ray_result_keys_may_be_named(problems, field, condition):
    """Ray adds training_iteration and time_total_s to every result: no E201 for them, in when or all_when."""
    assert problems(stop(f"{field}: '{condition}'")) == []


def test_ray_result_keys_are_stop_only(problems):
    assert problems("tune: {metric: training_iteration, mode: max}") == [("E201", "tune.metric")]
    assert problems(stop("plateau: {metric: time_total_s}")) == [("E201", "stop.plateau.metric")]


@pytest.mark.parametrize(
    ("field", "condition", "expected", "said"),
    [
        ("when", "training_iteration < 3", "E231", "every trial would stop after one epoch"),
        ("when", "training_iteration <= 1", "E231", "every trial would stop after one epoch"),
        ("when", "training_iteration >= 1", "E231", "every trial would stop after one epoch"),
        ("when", "training_iteration > 0.5", "E231", "is not a whole number"),
        ("when", "training_iteration >= 1.5", "E231", "is not a whole number"),
        ("all_when", "training_iteration >= 1", "E231", "the search would end after one epoch"),
        ("when", "training_iteration >= 3", "W330", "never holds: training.epochs 2 ends every trial first"),
        ("when", "training_iteration > 2", "W330", "never holds"),
        ("when", "training_iteration < 1", "W330", "never holds"),
        ("when", "time_total_s < 60", "E231", "every trial would stop there"),
        ("when", "time_total_s <= 60", "E231", "holds at the first report (or never"),
        ("when", "time_total_s >= 0", "E231", "holds at the first report"),
        ("when", "time_total_s > 0", "E231", "holds at the first report"),
        ("all_when", "time_total_s < 5", "E231", "the search would end there"),
    ],
)
def test_conditions_on_ray_keys_that_cannot_mean_what_they_say(report, field, condition, expected, said):
    """MINIMAL trains 2 epochs: training_iteration is 1 after the first report, 2 after the last."""
    (problem,) = report(stop(f"{field}: '{condition}'")).problems
    assert (problem.code, problem.path) == (expected, f"stop.{field}.0")
    assert said in problem.message
    assert problem.line is not None and problem.hint


def test_the_last_epoch_is_a_reachable_training_iteration(problems):
    assert problems(stop("when: 'training_iteration >= 2'")) == []
    assert problems(stop("when: 'training_iteration > 1'")) == []
