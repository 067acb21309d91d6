"""Ray Tune's searchers and schedulers by their own names (SPEC §13, issue 51): bohb, nevergrad, zoopt and ax validate
and compile to the constructor a person would write from Ray's examples (ax's own checks: test_ax_search.py); every
searcher's and scheduler's keys past its own fields are its Ray class's keyword arguments (inputs generated over
specc's catalog: a name the class does not take, or a value of a type it does not take, is a located problem); bohb
and hyperband_for_bohb need each other; hebo says why it cannot run; tune.repeat is Ray's Repeater; run.fail_fast is
ray.tune's FailureConfig; and what Ray runs with only a warning is a located warning, not an error."""

from __future__ import annotations

import typing

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from specc import api, catalog
from specc.check.nevergrad_names import NEVERGRAD_VERSION, OPTIMIZERS
from specc.check.ray_classes import WRITTEN_AS, catalog_name
from specc.spec import scheduler as scheduler_sections
from specc.spec import search as search_sections
from specc.spec.named import types_of

FUNCTION = """\
from ray import tune


def bowl(config):
    tune.get_checkpoint()  # pbt and pb2 need a function that can start from one
    tune.report({"loss": (config["x"] - 3) ** 2})
"""
SEARCHERS = ("random", "grid", "optuna", "hyperopt", "bayesopt", "bohb", "nevergrad", "zoopt", "ax")
SCHEDULERS = ("fifo", "asha", "hyperband", "median_stopping", "pbt", "pb2")


def spec(search: dict | None = None, scheduler: dict | None = None, tune: dict | None = None, run=None) -> dict:
    search = search or {"type": "random"}
    if scheduler is None and search["type"] == "bohb":
        scheduler = {"type": "hyperband_for_bohb"}
    space = {"objective.params.x": {"grid": [0, 3, 6]} if search["type"] == "grid" else {"uniform": [0, 6]}}
    data = {
        "specc": 1,
        "name": "searchers",
        "objective": {"function": "bowl:bowl", "params": {"x": 0.0}, "metrics": ["loss"], "max_steps": 4},
        "tune": {"metric": "loss", "mode": "min", "num_samples": 4, "search": search, "space": space, **(tune or {})},
    }
    if scheduler is not None:
        data["scheduler"] = scheduler
    if run is not None:
        data["run"] = run
    return data


@pytest.fixture
def write(tmp_path):
    (tmp_path / "bowl.py").write_text(FUNCTION, encoding="utf-8")

    def write(data: dict):
        path = tmp_path / "spec.yaml"
        path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
        return path

    return write


def problems(write, data: dict) -> list[tuple[str, str]]:
    return [(p.code, p.path) for p in api.validate([write(data)])]


def compiled(write, data: dict) -> str:
    return api.compile(api.load(write(data)))


# -- the new searchers ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("search", "expected"),
    [
        (
            {"type": "bohb", "seed": 3, "bohb_config": {"min_points_in_model": 4}},
            'TuneBOHB(\n        seed=3,\n        bohb_config={"min_points_in_model": 4},\n    )',
        ),
        (
            {"type": "nevergrad", "optimizer": "CMA", "budget": 16},
            'NevergradSearch(\n        optimizer=ng.optimizers.registry["CMA"],\n'
            '        optimizer_kwargs={"budget": 16},\n    )',
        ),
        (
            {"type": "zoopt", "parallel_num": 2},
            'ZOOptSearch(\n        algo="asracos",\n        budget=4,\n        parallel_num=2,\n    )',
        ),
        (
            {"type": "ax", "seed": 3, "parameter_constraints": ["objective.params.x <= 5"]},
            "AxSearch(\n        parameter_constraints=[\"x <= 5\"],  # by Ax's names: the params' keys\n"
            "        random_seed=3,  # AxClient's seed\n        verbose_logging=False,",
        ),
    ],
)
def test_a_new_searcher_compiles_to_its_ray_class(write, search, expected):
    data = spec(search)
    assert [p for p in problems(write, data) if p[0].startswith("E")] == []
    source = compiled(write, data)
    assert expected in source
    module = {
        "bohb": "bohb import TuneBOHB",
        "nevergrad": "nevergrad import NevergradSearch",
        "zoopt": "zoopt import ZOOptSearch",
        "ax": "ax import AxSearch",
    }
    assert f"from ray.tune.search.{module[search['type']]}" in source
    assert ("import nevergrad as ng" in source) == (search["type"] == "nevergrad")
    assert ("HyperBandForBOHB(" in source) == (search["type"] == "bohb")
    compile(source, "searchers.py", "exec")


def test_asracos_proposes_for_as_many_trials_as_run_at_once(write):
    """Ray's ZOOptSearch keeps one asracos trial live unless told its parallel_num: the script gives it
    tune.max_concurrent_trials; a parallel_num the spec writes, or sracos, is left as written."""
    at_once = compiled(write, spec({"type": "zoopt"}, tune={"max_concurrent_trials": 3}))
    assert "        budget=4,\n        parallel_num=3,  # tune.max_concurrent_trials" in at_once
    assert "parallel_num" not in compiled(write, spec({"type": "zoopt"}))  # no limit given: Ray's default
    assert "parallel_num" not in compiled(
        write, spec({"type": "zoopt", "algo": "sracos"}, tune={"max_concurrent_trials": 3})
    )
    written = compiled(write, spec({"type": "zoopt", "parallel_num": 2}, tune={"max_concurrent_trials": 3}))
    assert written.count("parallel_num=") == 1 and "parallel_num=2," in written


def test_bohb_and_hyperband_for_bohb_need_each_other(write):
    alone = spec({"type": "bohb"}, scheduler={"type": "asha"})
    assert ("E100", "scheduler.type") in problems(write, alone)
    without = spec({"type": "bohb"})
    del without["scheduler"]
    assert ("E100", "tune.search.type") in problems(write, without)
    other = spec({"type": "optuna"}, scheduler={"type": "hyperband_for_bohb"})
    assert ("E100", "scheduler.type") in problems(write, other)


def test_a_searcher_that_cannot_run_here_says_why(write):
    (problem,) = [p for p in api.validate([write(spec({"type": "hebo"}))]) if p.code.startswith("E")]
    assert (problem.code, problem.path) == ("E238", "tune.search.type")
    assert "HEBO (0.3.6, its latest) needs numpy < 1.25" in problem.message
    assert problem.hint == "use ax, bohb, nevergrad, zoopt, optuna or hyperopt"


def test_a_nevergrad_optimizer_is_a_name_of_its_registry(write):
    (problem,) = [p for p in api.validate([write(spec({"type": "nevergrad", "optimizer": "OnePlusOen"}))])]
    assert (problem.code, problem.path, problem.hint) == ("E104", "tune.search.optimizer", "did you mean 'OnePlusOne'?")


def test_the_nevergrad_names_are_the_installed_registry():
    ng = pytest.importorskip("nevergrad")
    if ng.__version__ != NEVERGRAD_VERSION:
        pytest.skip(f"nevergrad {ng.__version__} installed, the names are of {NEVERGRAD_VERSION}")
    assert tuple(sorted(ng.optimizers.registry)) == OPTIMIZERS


@pytest.mark.parametrize("name", ["nevergrad", "zoopt"])
def test_a_seed_an_unseeded_searcher_cannot_take_is_a_warning(write, name):
    found = problems(write, spec({"type": name, "seed": 3}))
    assert found == [("W320", "tune.search.seed")]


@pytest.mark.parametrize(("name", "kind"), [("bohb", "quniform"), ("nevergrad", "qloguniform"), ("ax", "quniform")])
def test_a_quantization_ray_drops_is_a_warning(write, name, kind):
    data = spec({"type": name})
    data["tune"]["space"] = {"objective.params.x": {kind: [0.5, 6, 0.5]}}
    assert ("W322", f"tune.space[objective.params.x].{kind}") in problems(write, data)


def test_a_distribution_zoopt_cannot_sample_is_refused(write):
    data = spec({"type": "zoopt"})
    data["tune"]["space"] = {"objective.params.x": {"loguniform": [0.5, 6]}}
    assert ("E204", "tune.space[objective.params.x].loguniform") in problems(write, data)


# -- every searcher's and scheduler's Ray keyword arguments, from the catalog ---------------------------------------


def scheduler_section(name: str) -> dict:
    if name == "pbt":
        return {"type": "pbt", "perturbation_interval": 1, "mutations": {"objective.params.x": {"uniform": [0, 6]}}}
    if name == "pb2":
        return {"type": "pb2", "perturbation_interval": 1, "bounds": {"objective.params.x": [0, 6]}}
    return {"type": name}


def own_fields(family: str, name: str) -> set[str]:
    from specc.spec.scheduler import Scheduler
    from specc.spec.search import Search

    union = Search if family == "searchers" else Scheduler
    for member in typing.get_args(typing.get_args(union)[0]):
        if member.model_fields["type"].annotation.__args__ == (name,):
            return set(member.model_fields)
    raise AssertionError(name)


KEYS = st.from_regex(r"[a-z][a-z_]{0,12}", fullmatch=True)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(family=st.sampled_from(["searchers", "schedulers"]), data=st.data(), key=KEYS)
def test_a_key_neither_the_section_nor_its_ray_class_has_is_an_unknown_key(write, family, data, key):
    name = data.draw(st.sampled_from(SEARCHERS if family == "searchers" else SCHEDULERS))
    entry = catalog.lookup("ray_tune", family, catalog_name(name))
    if key in entry.params or key in own_fields(family, name) or key in WRITTEN_AS[family].get(name, {}):
        return
    if family == "searchers":
        found = problems(write, spec({"type": name, key: 1}))
        where = f"tune.search.{key}"
    else:
        found = problems(write, spec(scheduler={**scheduler_section(name), key: 1}))
        where = f"scheduler.{key}"
    assert ("E101", where) in found


WRONG = {"int": "three", "float": "big", "bool": "yes", "str": 3, "dict": [1], "list": "x"}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(family=st.sampled_from(["searchers", "schedulers"]), data=st.data())
def test_a_ray_argument_of_a_type_its_class_does_not_take_is_located(write, family, data):
    name = data.draw(st.sampled_from(SEARCHERS if family == "searchers" else SCHEDULERS))
    entry = catalog.lookup("ray_tune", family, catalog_name(name))
    written, own = WRITTEN_AS[family].get(name, {}), own_fields(family, name)
    typed = [
        key
        for key in entry.settable
        if key not in written
        and key not in own
        and entry.params[key].types & set(WRONG)
        and not entry.params[key].types & {"any", "object"}
    ]
    if not typed:
        return
    key = data.draw(st.sampled_from(typed))
    tags = sorted(entry.params[key].types & set(WRONG))
    value = WRONG[tags[0]]
    if any(tag in entry.params[key].types for tag in ("str",)) and isinstance(value, str):
        return  # a string a str-taking argument accepts
    if family == "searchers":
        found = problems(write, spec({"type": name, key: value}))
        where = f"tune.search.{key}"
    else:
        found = problems(write, spec(scheduler={**scheduler_section(name), key: value}))
        where = f"scheduler.{key}"
    assert ("E103", where) in found, (name, key, value, found)


@pytest.mark.parametrize(
    ("family", "name", "key"),
    [(family, name, key) for family, table in WRITTEN_AS.items() for name, keys in table.items() for key in keys],
)
def test_an_argument_the_script_writes_from_a_field_is_that_fields(write, family, name, key):
    if family == "searchers":
        found = problems(write, spec({"type": name, key: 1}))
        assert ("E101", f"tune.search.{key}") in found
    else:
        found = problems(write, spec(scheduler={**scheduler_section(name), key: 1}))
        assert ("E101", f"scheduler.{key}") in found


def test_a_scheduler_takes_the_rest_of_its_ray_keyword_arguments(write):
    data = spec(scheduler={"type": "asha", "stop_last_trials": False, "time_attr": "training_iteration"})
    assert problems(write, data) == []
    source = compiled(write, data)
    assert "stop_last_trials=False," in source and source.count("time_attr=") == 1
    pbt = spec(scheduler={**scheduler_section("pbt"), "log_config": False})
    assert "log_config=False," in compiled(write, pbt)


def test_hyperband_for_bohb_compiles_as_ray_builds_it(write):
    source = compiled(write, spec({"type": "bohb"}, scheduler={"type": "hyperband_for_bohb", "reduction_factor": 2}))
    assert "from ray.tune.schedulers import HyperBandForBOHB" in source
    assert (
        'HyperBandForBOHB(\n        time_attr="training_iteration",\n        max_t=4,\n        reduction_factor=2.0,'
        in source
    )


def test_plan_describes_the_searcher(write):
    text = api.describe_plan(api.load(write(spec({"type": "zoopt"}))))
    assert "Ray's ZOOptSearch" in text and "not seeded" in text
    text = api.describe_plan(api.load(write(spec({"type": "ax", "seed": 2}))))
    assert "ax, seed 2" in text and "Ray's AxSearch: Sobol configs, then Ax's BoTorch model" in text


# -- tune.repeat ------------------------------------------------------------------------------------------------------


def test_repeat_wraps_the_searcher_in_ray_repeater(write):
    data = spec({"type": "hyperopt", "seed": 1}, tune={"repeat": 2})
    assert problems(write, data) == []
    source = compiled(write, data)
    assert "searcher = HyperOptSearch(" in source
    assert "return Repeater(searcher, repeat=2)" in source and "from ray.tune.search import Repeater" in source
    assert "Repeater" not in compiled(write, spec({"type": "hyperopt", "seed": 1}))


@pytest.mark.parametrize(
    ("search", "tune", "scheduler", "expected"),
    [
        ({"type": "random"}, {"repeat": 2}, None, ("E100", "tune.repeat")),
        ({"type": "bohb"}, {"repeat": 2}, None, ("E100", "tune.repeat")),
        ({"type": "optuna"}, {"repeat": 3}, None, ("W322", "tune.num_samples")),  # 4 trials, 3 repeats: 1 left over
        ({"type": "optuna"}, {"repeat": 2}, {"type": "asha"}, ("W322", "tune.repeat")),
    ],
)
def test_repeat_problems(write, search, tune, scheduler, expected):
    assert expected in problems(write, spec(search, scheduler=scheduler, tune=tune))


MODEL_SPEC = """\
specc: 1
name: repeated
framework: torch
model: {type: mlp, hidden_sizes: [8]}
dataset: {type: iris}
training: {epochs: 2, optimizer: {type: sgd, lr: 0.1}}
tune:
  metric: val_loss
  mode: min
  num_samples: 4
  repeat: %d
  search: {type: optuna, seed: 1}
  space: {training.optimizer.lr: {loguniform: [0.001, 0.1]}, training.seed: {randint: [0, 100]}}
"""


def test_a_searched_seed_beside_repeat_is_a_warning_at_the_space_entry(tmp_path):
    path = tmp_path / "spec.yaml"
    path.write_text(MODEL_SPEC % 2, encoding="utf-8")
    found = [(p.code, p.path, p.line) for p in api.validate([path])]
    assert found == [("W323", "tune.space[training.seed]", 13)], found
    path.write_text(MODEL_SPEC % 1, encoding="utf-8")  # a seed sweep without repeats is a seed sweep
    assert api.validate([path]) == []


# -- Ray's own class names ------------------------------------------------------------------------------------------


def ray_names(family: str):
    """(name, entry) for every spelling of every class of the family in the catalog: snake_case, class, alias."""
    return [(name, entry) for entry in catalog.family("ray_tune", family).values() for name in entry.names]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_every_ray_class_name_is_its_specc_type_or_says_why_not(write, data):
    """A searcher or scheduler named as Ray names it (OptunaSearch, ASHAScheduler, PB2) validates as specc's type
    for that class; a class specc does not offer is E260 with the catalog's reason, at the `type`."""
    family = data.draw(st.sampled_from(["searchers", "schedulers"]))
    name, entry = data.draw(st.sampled_from(ray_names(family)))
    own = types_of(search_sections.SEARCHES if family == "searchers" else scheduler_sections.SCHEDULERS)
    specc_type = next((alias for alias in entry.names if alias in own), None)
    if family == "searchers":
        search = {"type": name}
        scheduler = {"type": "hyperband_for_bohb"} if specc_type == "bohb" else None
        where = "tune.search.type"
    else:
        search = {"type": "bohb"} if specc_type == "hyperband_for_bohb" else None
        scheduler = {**(scheduler_section(specc_type) if specc_type else {}), "type": name}
        where = "scheduler.type"
    found = api.validate([write(spec(search, scheduler=scheduler))])
    if specc_type is None:
        assert entry.not_drivable
        assert [(p.code, p.path) for p in found if p.code == "E260"] == [("E260", where)], found
        assert entry.not_drivable in found[0].message
    else:
        assert not any(p.code in ("E105", "E260") for p in found), found
        if not any(p.severity == "error" for p in found):  # what the compiled script builds: that class
            e = api.load(write(spec(search, scheduler=scheduler)))
            assert (e.tune.search if family == "searchers" else e.scheduler).type == specc_type


# -- run.fail_fast ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("value", "code"), [(True, "fail_fast=True"), ("raise", 'fail_fast="raise"')])
def test_fail_fast_is_ray_tunes_failure_config(write, value, code):
    data = spec(run={"fail_fast": value})
    assert problems(write, data) == []
    assert f"failure_config=tune.FailureConfig({code})," in compiled(write, data)
    assert "FailureConfig" not in compiled(write, spec())


def test_fail_fast_with_retries_is_refused_as_ray_refuses_it(write):
    found = problems(write, spec(run={"fail_fast": True, "max_failures": 2}))
    assert ("E100", "run.fail_fast") in found


@pytest.mark.parametrize("value", ["yes", 1, "RAISE"])
def test_fail_fast_is_a_bool_or_raise(write, value):
    (found,) = problems(write, spec(run={"fail_fast": value}))
    assert found[1] == "run.fail_fast" and found[0] in ("E103", "E104")


# -- where Ray only warns, warn ---------------------------------------------------------------------------------------


def test_a_hyperband_max_t_beyond_max_steps_is_a_warning(write):
    found = problems(write, spec(scheduler={"type": "hyperband", "max_t": 9}))
    assert found == [("W330", "scheduler.max_t")]


def test_a_time_attr_other_than_training_iteration_needs_its_own_max_t(write):
    data = spec(scheduler={"type": "asha", "time_attr": "time_total_s"})
    assert ("E102", "scheduler") in problems(write, data)
    data["scheduler"]["max_t"] = 30
    assert problems(write, data) == []
    source = compiled(write, data)
    assert 'time_attr="time_total_s",' in source and "max_t=30," in source


@pytest.mark.parametrize("name", ["bohb", "nevergrad", "zoopt", "ax"])
def test_a_searcher_of_a_fixed_space_cannot_search_options(write, name):
    data = spec({"type": name})
    data["tune"]["space"] = {"objective.params.x": {"choice": [{"a": {"uniform": [0, 1]}}, {"a": 2}]}}
    assert "E233" in [code for code, _ in problems(write, data)]


def test_zoopt_needs_a_budget_of_three(write):
    assert ("E106", "tune.search.budget") in problems(write, spec({"type": "zoopt", "budget": 2}))
    few = spec({"type": "zoopt"}, tune={"num_samples": 4, "repeat": 2})
    assert ("E106", "tune.num_samples") in problems(write, few)
    assert problems(write, spec({"type": "zoopt"}, tune={"num_samples": 6, "repeat": 2})) == []
