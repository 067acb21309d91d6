"""`scheduler` (SPEC §7): Ray Tune's trial schedulers, their defaults and constraints."""

from __future__ import annotations

import pytest

TUNE = "tune: {metric: val_accuracy, mode: max}\ntraining: {epochs: 10}\n"
MUTATIONS = "mutations: {training.optimizer.lr: {loguniform: [0.001, 0.1]}}"
BOUNDS = "bounds: {training.optimizer.lr: [0.001, 0.1]}"


def scheduler(fields: str) -> str:
    return f"{TUNE}scheduler: {{type: {fields}}}"


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ("fifo", {"type": "fifo"}),
        ("asha", {"type": "asha", "max_t": 10, "grace_period": 1, "reduction_factor": 4.0, "brackets": 1}),
        ("hyperband", {"type": "hyperband", "max_t": 10, "reduction_factor": 3.0, "stop_last_trials": True}),
        (
            "median_stopping",
            {"type": "median_stopping", "grace_period": 1, "min_samples_required": 3, "hard_stop": True},
        ),
        (
            f"pbt, {MUTATIONS}",
            {
                "type": "pbt",
                "perturbation_interval": 2,
                "mutations": {"training.optimizer.lr": {"loguniform": [0.001, 0.1]}},
                "quantile_fraction": 0.25,
                "resample_probability": 0.25,
                "perturbation_factors": [1.2, 0.8],
                "burn_in_period": 0,
                "synch": False,
            },
        ),
        (
            f"pb2, {BOUNDS}",
            {
                "type": "pb2",
                "perturbation_interval": 2,
                "bounds": {"training.optimizer.lr": [0.001, 0.1]},
                "quantile_fraction": 0.25,
                "synch": False,
            },
        ),
    ],
    ids=["fifo", "asha", "hyperband", "median_stopping", "pbt", "pb2"],
)
def test_defaults_of_each_type(shown, fields, expected):
    assert shown(scheduler(fields))["scheduler"] == expected


def test_show_fills_asha_max_t_with_the_epochs(shown):
    assert shown(scheduler("asha"))["scheduler"]["max_t"] == 10


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ("asha, reduction_factor: 1.5, grace_period: 2, max_t: 10, brackets: 3", []),
        ("asha, reduction_factor: 1", [("E106", "scheduler.reduction_factor")]),
        ("asha, reduction_factor: 0.5", [("E106", "scheduler.reduction_factor")]),
        ("asha, reduction_factor: '3'", [("E103", "scheduler.reduction_factor")]),
        ("asha, grace_period: 0", [("E106", "scheduler.grace_period")]),
        ("asha, brackets: 0", [("E106", "scheduler.brackets")]),
        ("asha, max_t: 0", [("E106", "scheduler.max_t")]),
        ("hyperband, reduction_factor: 1", [("E106", "scheduler.reduction_factor")]),
        ("median_stopping, min_samples_required: 0", [("E106", "scheduler.min_samples_required")]),
        ("median_stopping, hard_stop: 'no'", [("E103", "scheduler.hard_stop")]),
        (f"pbt, {MUTATIONS}, perturbation_interval: 0", [("E106", "scheduler.perturbation_interval")]),
        (f"pbt, {MUTATIONS}, quantile_fraction: 0", [("E106", "scheduler.quantile_fraction")]),
        (f"pbt, {MUTATIONS}, quantile_fraction: 0.6", [("E106", "scheduler.quantile_fraction")]),
        (f"pbt, {MUTATIONS}, resample_probability: 1.5", [("E106", "scheduler.resample_probability")]),
        (f"pbt, {MUTATIONS}, perturbation_factors: [1.2]", [("E109", "scheduler.perturbation_factors")]),
        (f"pbt, {MUTATIONS}, burn_in_period: -1", [("E106", "scheduler.burn_in_period")]),
        (f"pb2, {BOUNDS}, quantile_fraction: 0.75", [("E106", "scheduler.quantile_fraction")]),
    ],
)
def test_constraints(problems, fields, expected):
    assert problems(scheduler(fields)) == expected


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ("pbt", [("E102", "scheduler.mutations")]),
        ("pbt, mutations: {}", [("E109", "scheduler.mutations")]),
        (
            "pbt, mutations: {training.optimizer.lr: {loguniform: [0.1, 0.001]}}",
            [("E110", "scheduler.mutations[training.optimizer.lr].loguniform")],
        ),
        (
            "pbt, mutations: {model.activation: {choice: [relu, tanh]}, model.dropout: {uniform: [0, 0.5]}}",
            [],
        ),
        ("pbt, mutations: {nope.lr: {choice: [0.1]}}", [("E202", "scheduler.mutations[nope.lr]")]),
        # a plain list: categorical, as Ray's PBT treats lists; each value must fit the field
        ("pbt, mutations: {model.activation: [relu, tanh], training.optimizer.lr: [0.01, 0.1]}", []),
        ("pbt, mutations: {model.dropout: [0.1, 1.5]}", [("E203", "scheduler.mutations[model.dropout].1")]),
        ("pbt, mutations: {model.dropout: []}", [("E109", "scheduler.mutations[model.dropout]")]),
        ("pbt, mutations: {model.dropout: 0.1}", [("E110", "scheduler.mutations[model.dropout]")]),
        ("pbt, mutations: {model.dropout: {grid: [0.1, 0.2]}}", [("E204", "scheduler.mutations[model.dropout].grid")]),
    ],
)
def test_pbt_needs_valid_mutations(problems, fields, expected):
    assert problems(scheduler(fields)) == expected


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ("pb2", [("E102", "scheduler.bounds")]),
        ("pb2, bounds: {}", [("E109", "scheduler.bounds")]),
        ("pb2, bounds: {training.optimizer.lr: [0.1, 0.001]}", [("E110", "scheduler.bounds[training.optimizer.lr]")]),
        ("pb2, bounds: {training.optimizer.lr: [0.1, 0.1]}", [("E110", "scheduler.bounds[training.optimizer.lr]")]),
        ("pb2, bounds: {training.optimizer.lr: [0.1]}", [("E109", "scheduler.bounds[training.optimizer.lr]")]),
        (
            "pb2, bounds: {training.optimizer.lr: {uniform: [0.001, 0.1]}}",
            [("E103", "scheduler.bounds[training.optimizer.lr]")],
        ),
        ("pb2, bounds: {training.optimizer.lr: [0.001, 0.1], model.dropout: [0, 0.5]}", []),
    ],
)
def test_pb2_bounds_are_lo_below_hi(problems, fields, expected):
    assert problems(scheduler(fields)) == expected


def test_pb2_bounds_message(report):
    (problem,) = report(scheduler("pb2, bounds: {training.optimizer.lr: [0.1, 0.001]}")).problems
    assert problem.message == "lower bound 0.1 must be below upper bound 0.001"


@pytest.mark.parametrize("key", ["metric", "mode"])
def test_metric_and_mode_live_in_tune(report, key):
    (problem,) = report(scheduler(f"asha, {key}: max")).problems
    assert (problem.code, problem.path) == ("E101", f"scheduler.{key}")
    assert problem.hint == "metric and mode live in the tune section"


@pytest.mark.parametrize(
    ("fields", "key"), [("fifo, grace_period: 1", "grace_period"), ("hyperband, grace_period: 2", "grace_period")]
)
def test_field_of_another_type_is_an_unknown_key_of_the_section(report, fields, key):
    (problem,) = report(scheduler(fields)).problems
    assert (problem.code, problem.path) == ("E101", f"scheduler.{key}")
    assert f"unknown key '{key}' in scheduler" in problem.message


def test_unknown_type_suggests_the_closest(report):
    (problem,) = report(scheduler("ashaa")).problems
    assert (problem.code, problem.path, problem.hint) == ("E105", "scheduler.type", "did you mean 'asha'?")
    assert "fifo, asha, hyperband, hyperband_for_bohb, median_stopping, pbt, pb2" in problem.message


def test_missing_type(report):
    (problem,) = report(f"{TUNE}scheduler: {{grace_period: 2}}").problems
    assert (problem.code, problem.path) == ("E102", "scheduler.type")
    assert problem.hint == "one of: fifo, asha, hyperband, hyperband_for_bohb, median_stopping, pbt, pb2"


def test_scheduler_needs_tune(problems):
    assert problems("scheduler: {type: asha}") == [("E205", "scheduler")]
