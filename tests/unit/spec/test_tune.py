"""`tune` (SPEC §7): the section's defaults, search algorithms, and the eleven search-space distributions."""

from __future__ import annotations

import math

import pytest

from specc.spec.space import (
    Choice,
    Grid,
    LogRandInt,
    LogUniform,
    QRandInt,
    QRandN,
    QUniform,
    RandInt,
    RandN,
    Uniform,
)


def tune(space: str = "", search: str = "{type: random}", extra: str = "") -> str:
    """A tune section; `space` is 'path: {distribution}' entries separated by ', '."""
    return f"tune: {{metric: val_accuracy, mode: max, search: {search}, space: {{{space}}}{extra}}}"


def test_defaults(shown):
    assert shown("tune: {metric: val_accuracy, mode: max}")["tune"] == {
        "metric": "val_accuracy",
        "mode": "max",
        "num_samples": 1,
        "max_concurrent_trials": None,
        "search": {"type": "random", "seed": None, "points_to_evaluate": []},
        "space": {},
        "repeat": 1,
    }


@pytest.mark.parametrize(
    ("tune_section", "expected"),
    [
        ("{mode: max}", [("E102", "tune.metric")]),
        ("{metric: val_accuracy}", [("E102", "tune.mode")]),
        ("{metric: val_accuracy, mode: maximize}", [("E104", "tune.mode")]),
        ("{metric: 'val accuracy', mode: max}", [("E107", "tune.metric")]),
        ("{metric: val_accuracy, mode: max, num_samples: 0}", [("E106", "tune.num_samples")]),
        ("{metric: val_accuracy, mode: max, num_samples: '4'}", [("E103", "tune.num_samples")]),
        ("{metric: val_accuracy, mode: max, max_concurrent_trials: 0}", [("E106", "tune.max_concurrent_trials")]),
        (
            "{metric: val_accuracy, mode: max, space: {'model dropout': {uniform: [0, 0.5]}}}",
            [("E107", "tune.space.model dropout")],
        ),
    ],
)
def test_tune_constraints(problems, tune_section, expected):
    assert problems(f"tune: {tune_section}") == expected


# -- distributions ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "entry",
    [
        "model.dropout: {uniform: [0.0, 0.5]}",
        "model.dropout: {quniform: [0.0, 0.5, 0.1]}",
        "training.optimizer.lr: {loguniform: [1.0e-4, 1.0e-1]}",
        "training.optimizer.lr: {qloguniform: [0.001, 0.1, 0.001]}",
        "dataset.batch_size: {randint: [16, 129]}",
        "dataset.batch_size: {qrandint: [16, 128, 16]}",
        "dataset.batch_size: {lograndint: [16, 257]}",
        "training.optimizer.lr: {randn: [0.01, 0.001]}",
        "training.optimizer.lr: {qrandn: [0.01, 0.001, 0.001]}",
        "model.activation: {choice: [relu, gelu]}",
        "dataset.batch_size: {grid: [32, 64]}",
        "model.hidden_sizes: {choice: [[64], [128, 64]]}",
        "model.hidden_sizes.0: {randint: [8, 65]}",
        "training.optimizer.lr: {uniform: [1, 2]}",  # ints are numbers
    ],
)
def test_valid_distributions(problems, entry):
    assert problems(tune(entry)) == []


@pytest.mark.parametrize(
    ("entry", "path", "message"),
    [
        (
            "model.dropout: {uniform: [0.5, 0.5]}",
            "model.dropout].uniform",
            "lower bound 0.5 must be below upper bound 0.5",
        ),
        ("model.dropout: {uniform: [0.5, 0.1]}", "model.dropout].uniform", "lower bound"),
        ("model.dropout: {quniform: [0.5, 0.1, 0.1]}", "model.dropout].quniform", "lower bound"),
        ("model.dropout: {quniform: [0.0, 0.5, 0]}", "model.dropout].quniform", "q must be > 0"),
        ("model.dropout: {quniform: [0.0, 0.5, -0.1]}", "model.dropout].quniform", "q must be > 0"),
        (
            "training.optimizer.lr: {loguniform: [0, 0.1]}",
            "training.optimizer.lr].loguniform",
            "a log scale needs bounds > 0",
        ),
        ("training.optimizer.lr: {loguniform: [-1, 0.1]}", "training.optimizer.lr].loguniform", "bounds > 0"),
        ("training.optimizer.lr: {loguniform: [0.1, 0.01]}", "training.optimizer.lr].loguniform", "lower bound"),
        ("training.optimizer.lr: {qloguniform: [0, 0.1, 0.01]}", "training.optimizer.lr].qloguniform", "bounds > 0"),
        ("training.optimizer.lr: {qloguniform: [0.01, 0.1, 0]}", "training.optimizer.lr].qloguniform", "q must be > 0"),
        ("dataset.batch_size: {randint: [16, 16]}", "dataset.batch_size].randint", "lower bound"),
        ("dataset.batch_size: {qrandint: [128, 16, 16]}", "dataset.batch_size].qrandint", "lower bound"),
        ("dataset.batch_size: {qrandint: [16, 128, 0]}", "dataset.batch_size].qrandint", "q must be > 0"),
        ("dataset.batch_size: {lograndint: [0, 128]}", "dataset.batch_size].lograndint", "bounds > 0"),
        ("dataset.batch_size: {lograndint: [128, 16]}", "dataset.batch_size].lograndint", "lower bound"),
        ("training.optimizer.lr: {randn: [0.01, 0]}", "training.optimizer.lr].randn", "standard deviation must be > 0"),
        ("training.optimizer.lr: {qrandn: [0.01, 0.001, 0]}", "training.optimizer.lr].qrandn", "q must be > 0"),
        ("training.optimizer.lr: {qrandn: [0.01, -1, 0.001]}", "training.optimizer.lr].qrandn", "standard deviation"),
        ("model.activation: {choice: []}", "model.activation].choice", "at least one value"),
        ("model.activation: {grid: []}", "model.activation].grid", "at least one value"),
        ("model.dropout: {uniform: [0.1]}", "model.dropout].uniform", "uniform takes [lo, hi), got 1 value"),
        (
            "model.dropout: {quniform: [0.1, 0.5]}",
            "model.dropout].quniform",
            "quniform takes [lo, hi, q], got 2 values",
        ),
        ("model.dropout: {randn: [0, 1, 2]}", "model.dropout].randn", "randn takes [mean, sd], got 3 values"),
        ("model.dropout: {uniform: [0.1], choice: [0.2]}", "model.dropout]", "exactly one key, got 2"),
        ("model.dropout: 0.5", "model.dropout]", "expected a one-key mapping"),
        ("model.dropout: {}", "model.dropout]", "expected a one-key mapping"),
    ],
)
def test_malformed_distributions(report, entry, path, message):
    (problem,) = report(tune(entry)).problems
    assert (problem.code, problem.path) == ("E110", f"tune.space[{path}")
    assert message in problem.message


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ("model.dropout: {uniform: ['0.1', 0.5]}", ("E103", "tune.space[model.dropout].uniform.0")),
        ("dataset.batch_size: {randint: [16.0, 32]}", ("E103", "tune.space[dataset.batch_size].randint.0")),
        ("dataset.batch_size: {qrandint: [16, 128, 8.5]}", ("E103", "tune.space[dataset.batch_size].qrandint.2")),
        ("model.activation: {choice: relu}", ("E103", "tune.space[model.activation].choice")),
    ],
)
def test_bounds_have_strict_types(problems, entry, expected):
    assert problems(tune(entry)) == [expected]


def test_unknown_distribution_suggests_the_closest(report):
    (problem,) = report(tune("model.activation: {choise: [relu]}")).problems
    assert (problem.code, problem.path) == ("E105", "tune.space[model.activation].choise")
    assert problem.hint == "did you mean 'choice'?"


# -- what each distribution can produce (Ray Tune's semantics) ----------------------------------
@pytest.mark.parametrize(
    ("distribution", "low", "high"),
    [
        (Uniform(uniform=[0.1, 0.9]), 0.1, math.nextafter(0.9, 0)),  # upper bound exclusive
        (LogUniform(loguniform=[1e-4, 1e-1]), 1e-4, math.nextafter(1e-1, 0)),
        (RandInt(randint=[1, 10]), 1, 9),  # upper bound exclusive
        (LogRandInt(lograndint=[1, 100]), 1, 99),
        (QRandInt(qrandint=[0, 10, 5]), 0, 10),  # quantizing makes the upper bound inclusive
        (QUniform(quniform=[0.0, 1.0, 0.25]), 0.0, 1.0),
    ],
    ids=lambda v: getattr(v, "kind", None),
)
def test_probes_reach_the_extremes_ray_can_produce(distribution, low, high):
    probes = distribution.probes()
    assert (min(probes), max(probes)) == (low, high)


def test_randint_never_probes_its_exclusive_upper_bound():
    probes = RandInt(randint=[1, 10]).probes()
    assert 9 in probes
    assert 10 not in probes


def test_uniform_upper_probe_is_just_below_hi():
    high = max(Uniform(uniform=[0.0, 1.0]).probes())
    assert high < 1.0
    assert high == math.nextafter(1.0, 0.0)


def test_normal_probes_go_well_into_both_tails():
    probes = RandN(randn=[10.0, 2.0]).probes()
    assert min(probes) <= 10.0 - 3 * 2.0
    assert max(probes) >= 10.0 + 3 * 2.0


def test_quantized_normal_probes_are_multiples_of_q():
    for value in QRandN(qrandn=[0.0, 1.0, 0.5]).probes():
        assert value / 0.5 == round(value / 0.5)


@pytest.mark.parametrize("cls", [Choice, Grid])
def test_choice_and_grid_probe_every_value(cls):
    values = [1, "two", [3], None]
    assert cls(**{cls.kind: values}).probes() == values


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ("model.dropout: {uniform: [0.0, 1.0]}", []),  # 1.0 is never sampled
        ("model.dropout: {quniform: [0.0, 1.0, 0.25]}", [("E203", "tune.space[model.dropout].quniform")]),
        ("dataset.batch_size: {randint: [1, 2]}", []),
        ("dataset.batch_size: {randint: [0, 10]}", [("E203", "tune.space[dataset.batch_size].randint")]),
        ("dataset.batch_size: {uniform: [16, 64]}", [("E203", "tune.space[dataset.batch_size].uniform")]),
    ],
)
def test_probes_decide_what_a_field_accepts(problems, entry, expected):
    assert problems(tune(entry)) == expected


@pytest.mark.parametrize(("args", "low", "high"), [([1, 10, 3], 3, 9), ([8, 100, 16], 16, 96), ([0, 11, 4], 0, 8)])
def test_qrandint_probes_match_rays_quantized_bounds(args, low, high):
    probes = QRandInt(qrandint=args).probes()
    assert (min(probes), max(probes)) == (low, high)


def test_qrandint_with_unaligned_lower_bound_fits_a_positive_field(problems):
    assert problems(tune("dataset.batch_size: {qrandint: [8, 100, 16]}")) == []


@pytest.mark.parametrize(
    ("entry", "path"),
    [
        ("model.dropout: {quniform: [0.0, 0.5, 0.2]}", "tune.space[model.dropout].quniform"),
        (
            "training.optimizer.weight_decay: {qloguniform: [0.5, 5.0, 2.0]}",
            "tune.space[training.optimizer.weight_decay].qloguniform",
        ),
    ],
)
def test_quantized_float_bounds_must_be_multiples_of_q(problems, entry, path):
    assert problems(tune(entry)) == [("E110", path)]


# -- search algorithms --------------------------------------------------------------------------
BASE = {"seed": None, "points_to_evaluate": []}


@pytest.mark.parametrize(
    ("kind", "specific"),
    [
        ("random", {}),
        ("grid", {}),
        ("optuna", {"sampler": "tpe"}),
        ("hyperopt", {"n_initial_points": 20}),
        ("bayesopt", {"utility": "ucb", "kappa": 2.576, "xi": 0.0, "random_search_steps": 10}),
    ],
)
def test_search_defaults(shown, kind, specific):
    search = shown(tune(search=f"{{type: {kind}}}"))["tune"]["search"]
    assert search == {"type": kind, **BASE, **specific}


@pytest.mark.parametrize(
    ("search", "expected"),
    [
        ("{type: random, seed: 7}", []),
        ("{type: optuna, sampler: random}", []),
        ("{type: bayesopt, utility: ei, kappa: 1, xi: 0.01, random_search_steps: 5}", []),
        ("{type: random, seed: -1}", [("E106", "tune.search.seed")]),
        ("{type: optuna, sampler: cmaes}", [("E104", "tune.search.sampler")]),
        ("{type: hyperopt, n_initial_points: 0}", [("E106", "tune.search.n_initial_points")]),
        ("{type: bayesopt, utility: pi}", [("E104", "tune.search.utility")]),
        ("{type: bayesopt, kappa: 0}", [("E106", "tune.search.kappa")]),
        ("{type: bayesopt, xi: -0.1}", [("E106", "tune.search.xi")]),
        ("{type: random, sampler: tpe}", [("E101", "tune.search.sampler")]),
        ("{seed: 1}", [("E102", "tune.search.type")]),
    ],
)
def test_search_fields(problems, search, expected):
    assert problems(tune(search=search)) == expected


def test_unknown_search_type_suggests_the_closest(report):
    (problem,) = report(tune(search="{type: randomm}")).problems
    assert (problem.code, problem.path, problem.hint) == ("E105", "tune.search.type", "did you mean 'random'?")


@pytest.mark.parametrize(
    ("search", "entry", "expected"),
    [
        ("random", "dataset.batch_size: {grid: [16, 32]}, training.optimizer.lr: {randn: [0.01, 0.001]}", []),
        ("grid", "dataset.batch_size: {grid: [16, 32]}", []),
        ("grid", "model.activation: {choice: [relu]}", [("E204", "tune.space[model.activation].choice")]),
        ("optuna", "dataset.batch_size: {grid: [16, 32]}", [("E204", "tune.space[dataset.batch_size].grid")]),
        (
            "optuna",
            "training.optimizer.lr: {randn: [0.01, 0.001]}",
            [("E204", "tune.space[training.optimizer.lr].randn")],
        ),
        ("hyperopt", "training.optimizer.lr: {randn: [0.01, 0.001]}", []),
        ("bayesopt", "training.optimizer.lr: {uniform: [0.001, 0.01]}", []),
        ("bayesopt", "model.activation: {choice: [relu]}", [("E204", "tune.space[model.activation].choice")]),
    ],
)
def test_search_supports_distribution(problems, search, entry, expected):
    assert problems(tune(entry, search=f"{{type: {search}}}")) == expected


@pytest.mark.parametrize(
    ("point", "expected"),
    [
        ("{training.optimizer.lr: 0.01}", []),
        ("{training.optimizer.lr: 0}", [("E212", "tune.search.points_to_evaluate.0[training.optimizer.lr]")]),
        ("{model.dropout: 0.1}", [("E212", "tune.search.points_to_evaluate.0[model.dropout]")]),
    ],
)
def test_points_to_evaluate(problems, point, expected):
    search = f"{{type: random, points_to_evaluate: [{point}]}}"
    assert problems(tune("training.optimizer.lr: {loguniform: [0.001, 0.1]}", search=search)) == expected
