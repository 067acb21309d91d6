"""tune.search type ax (Ray's AxSearch, issue 51): what AxClient refuses when the search starts is a located problem
at validate time, and what specc accepts, Ax accepts. parameter_constraints name tune.space paths and reach Ax by the
names Ray's AxSearch gives the parameters; points_to_evaluate reach it naming every parameter, as Ax's trials do.
Checked against the installed Ax through Ray's own AxSearch (no Ray is started)."""

from __future__ import annotations

import importlib.util
import math
import sys

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from specc import api

FUNCTION = """\
from ray import tune


def bowl(config):
    tune.report({"loss": (config["a"] - 0.3) ** 2, "size": config["b"]})
"""
# one entry of each kind Ray's AxSearch converts: a linear float and int range, a log scale, numeric and text choices
SPACE = {
    "objective.params.a": {"uniform": [0, 1]},
    "objective.params.b": {"randint": [0, 10]},
    "objective.params.c": {"loguniform": [0.1, 10]},
    "objective.params.d": {"choice": [1, 2, 4]},
    "objective.params.e": {"choice": ["x", "y"]},
}


def spec(search: dict | None = None, space: dict | None = None, params: dict | None = None, **tune) -> dict:
    return {
        "specc": 1,
        "name": "ax",
        "objective": {
            "function": "bowl:bowl",
            "params": params if params is not None else {"a": 0.0, "b": 0, "c": 1.0, "d": 1, "e": "x"},
            "metrics": ["loss", "size"],
            "max_steps": 2,
        },
        "tune": {
            "metric": "loss",
            "mode": "min",
            "num_samples": 4,
            "search": {"type": "ax", **(search or {})},
            "space": space if space is not None else SPACE,
            **tune,
        },
    }


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


def script(write, tmp_path, data: dict):
    """The compiled script, imported (its search_space() and make_searcher(); no Ray is started)."""
    output = tmp_path / "ax_script.py"
    for path, text in api.compiled_files(api.load(write(data)), str(output)).items():
        (tmp_path / path).write_text(text, encoding="utf-8")
    sys.path.insert(0, str(tmp_path))
    try:
        loader = importlib.util.spec_from_file_location(f"ax_script_{id(data)}", output)
        module = importlib.util.module_from_spec(loader)
        loader.loader.exec_module(module)
    finally:
        sys.path.remove(str(tmp_path))
    return module


def started(module):
    """The compiled searcher as Tune starts it: given the metric, mode and param_space (Ray's converter to Ax)."""
    searcher = module.make_searcher()
    searcher.set_search_properties(module.METRIC, module.MODE, module.search_space())
    return searcher


# -- parameter_constraints: specc's verdict is Ax's -------------------------------------------------------------------

NAMES = [*SPACE, "objective.params.z", "a"]  # z: no such path; a: the Ax name, not the path
WEIGHTS = ["", "", "2*", "-", "0.5*", "-1.5*", "*", "2**"]


@st.composite
def constraints(draw) -> str:
    if draw(st.integers(0, 4)) == 0:  # an order constraint
        return f"{draw(st.sampled_from(NAMES))} {draw(st.sampled_from(['<=', '>=']))} {draw(st.sampled_from(NAMES))}"
    terms = [draw(st.sampled_from(WEIGHTS)) + draw(st.sampled_from(NAMES)) for _ in range(draw(st.integers(1, 3)))]
    joined = terms[0]
    for term in terms[1:]:
        joined += f" {draw(st.sampled_from(['+', '-', '+', '*']))} {term}"
    op = draw(st.sampled_from(["<=", ">=", "<=", "<", "="]))
    return f"{joined} {op} {draw(st.sampled_from(['1', '0.5', '-5', '30', '2.0', 'x']))}"


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=constraints())
def test_a_parameter_constraint_specc_accepts_is_one_ax_accepts(write, tmp_path, text):
    pytest.importorskip("ax")
    from ray import tune
    from ray.tune.search.ax import AxSearch

    from specc.check.ax_search import ax_constraint, parse_parameter_constraint

    data = spec({"parameter_constraints": [text]})
    refused = [p for p in api.validate([write(data)]) if p.path.startswith("tune.search.parameter_constraints")]
    assert all(p.path == "tune.search.parameter_constraints.0" and p.line and p.hint for p in refused), refused
    ray_space = {
        "a": tune.uniform(0, 1),
        "b": tune.randint(0, 10),
        "c": tune.loguniform(0.1, 10),
        "d": tune.choice([1, 2, 4]),
        "e": tune.choice(["x", "y"]),
    }
    experiment = api.load(write(spec()))  # the names of the space, as the script gives them to Ax
    try:
        ax = AxSearch(parameter_constraints=[ax_constraint(experiment, text)], verbose_logging=False)
        ax.set_search_properties("loss", "min", ray_space)
        ax.suggest("first")  # an empty constraint polytope is refused here (InfeasibilityError)
        ax_accepts = True
    except Exception:
        ax_accepts = False
    parsed = parse_parameter_constraint(text)
    names = [] if isinstance(parsed, str) else [name for _, name in parsed.terms]
    if "a" in names:  # Ax's own name of objective.params.a: specc takes one spelling, the path
        assert refused, text
        if next(name for name in names if name not in SPACE) == "a":
            assert refused[0].hint == "by its tune.space path: objective.params.a", refused
        return
    if not isinstance(parsed, str) and parsed.bound is not None and len(set(names)) < len(names):
        assert refused, text  # Ax would read 'a + a <= 1' as 'a <= 1' (one weight a name, the last)
        return
    assert ax_accepts == (not refused), (text, refused)


# -- the compiled script gives Ax its own names ---------------------------------------------------------------------


def test_constraints_and_points_reach_ax_by_the_names_ray_gives_the_parameters(write, tmp_path):
    pytest.importorskip("ax")
    params = {"x": 0.0, "opt": {"lr": 0.1, "name": "sgd"}, "layers": [16, 8], "steps": 2}
    space = {"objective.params.x": {"uniform": [0, 4]}, "objective.params.opt.lr": {"uniform": [0.01, 1]}}
    point = {"objective.params.x": 1, "objective.params.opt.lr": 0.5}  # 1: an int, where Ax's range takes floats
    search = {"seed": 7, "parameter_constraints": ["objective.params.x + -2*objective.params.opt.lr >= 0"]}
    data = spec({**search, "points_to_evaluate": [point]}, space=space, params=params)
    assert problems(write, data) == []
    module = script(write, tmp_path, data)
    source = (tmp_path / "ax_script.py").read_text(encoding="utf-8")
    assert "parameter_constraints=[\"x + -2*opt/lr >= 0\"],  # by Ax's names: the params' keys" in source
    assert "random_seed=7,  # AxClient's seed" in source
    searcher = started(module)
    constraint = searcher._ax.experiment.search_space.parameter_constraints[0]
    assert constraint.constraint_dict == {"x": -1.0, "opt/lr": 2.0} and constraint.bound == 0.0  # as >= reads
    first = searcher.suggest("first")  # the point, with the params it leaves fixed, as the trial's config
    assert first == {"x": 1.0, "opt": {"lr": 0.5, "name": "sgd"}, "layers": [16, 8], "steps": 2}
    for index in range(4):  # then Sobol's configs, each inside the constraint
        config = searcher.suggest(f"t{index}")
        assert config["x"] - 2 * config["opt"]["lr"] >= -1e-9, config


def test_a_model_spec_constrains_its_paths_as_written(write, tmp_path):
    data = spec({"parameter_constraints": ["objective.params.a <= objective.params.b"]})
    assert 'parameter_constraints=["a <= b"],' in api.compile(api.load(write(data)))
    from specc.check.ax_search import ax_constraint

    experiment = api.load(write(spec()))
    model = experiment.model_copy(update={"objective": None})  # a model spec's param_space keys are its paths
    assert ax_constraint(model, "2*objective.params.a - objective.params.b <= 1") == (
        "2*objective.params.a - objective.params.b <= 1"
    )


def test_the_same_seed_proposes_the_same_configs(write, tmp_path):
    pytest.importorskip("ax")
    data = spec(
        {"seed": 3},
        space={"objective.params.a": {"uniform": [0, 1]}, "objective.params.b": SPACE["objective.params.b"]},
    )
    first, second = started(script(write, tmp_path, data)), started(script(write, tmp_path, data))
    proposed = [[searcher.suggest(f"t{i}") for i in range(3)] for searcher in (first, second)]
    assert proposed[0] == proposed[1]


# -- what AxClient would refuse when the search starts ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ({"choice": [[16], [32, 16]]}, "not [16]"),
        ({"choice": [1, 2.5]}, "one type; these are int, float"),
        ({"choice": ["a", None]}, "not None"),
        ({"randint": [3, 4]}, "integers 3 to 3"),
        ({"qrandint": [2, 3, 1]}, "integers 2 to 2"),
        ({"randn": [0, 1]}, "cannot sample randn"),
        ({"grid": [1, 2]}, "cannot sample grid"),
    ],
)
def test_a_space_ax_cannot_hold_is_refused_at_its_entry(write, entry, expected):
    kind = next(iter(entry))
    data = spec(space={"objective.params.a": entry})
    (problem,) = [p for p in api.validate([write(data)]) if p.code.startswith("E")]
    assert (problem.code, problem.path) == ("E204", f"tune.space[objective.params.a].{kind}")
    assert expected in problem.message and problem.line is not None


@pytest.mark.parametrize("entry", [{"choice": [1, 2, 4]}, {"choice": [True, False]}, {"randint": [3, 5]}])
def test_a_space_ax_holds_is_accepted(write, entry):
    assert problems(write, spec(space={"objective.params.a": entry})) == []


def test_a_param_ax_would_get_as_a_fixed_value_must_be_one_it_takes(write):
    found = problems(write, spec(params={"a": 0.0, "unset": None, "my key": 1, "nested": {"off": None}}))
    assert ("E100", "objective.params.unset") in found and ("E100", "objective.params.nested.off") in found
    assert ("E100", "objective.params.my key") in found
    searched = spec(space={"objective.params.a": {"uniform": [0, 1]}}, params={"a": None})
    assert problems(write, searched) == []  # the search gives it a value


@pytest.mark.parametrize(
    ("outcome", "tune", "expected"),
    [
        ("size <= 3", {}, None),
        ("size < 3", {}, ("E107", "tune.search.outcome_constraints.0")),
        ("size <= 5%", {}, ("E107", "tune.search.outcome_constraints.0")),
        ("sise <= 3", {}, ("E201", "tune.search.outcome_constraints.0")),
        ("loss <= 3", {}, ("E100", "tune.search.outcome_constraints.0")),
        ("size <= 3", {"repeat": 2}, ("E100", "tune.repeat")),
    ],
)
def test_an_outcome_constraint_is_on_another_reported_metric(write, outcome, tune, expected):
    found = problems(write, spec({"outcome_constraints": [outcome]}, **tune))
    assert found == ([expected] if expected else [])


def test_repeat_wraps_ax_in_rays_repeater(write):
    data = spec(repeat=2)
    assert problems(write, data) == []
    source = api.compile(api.load(write(data)))
    assert "searcher = AxSearch(" in source and "return Repeater(searcher, repeat=2)" in source


@pytest.mark.parametrize(
    ("value", "expected"),
    [(1.5, "outside objective.params.a's range [0, 1]"), (10, "outside objective.params.b's range [0, 9]")],
)
def test_a_point_outside_a_range_is_refused(write, value, expected):
    path = "objective.params.a" if isinstance(value, float) else "objective.params.b"
    point = {
        "objective.params.a": 0.5,
        "objective.params.b": 3,
        "objective.params.c": 1.0,
        "objective.params.d": 2,
        "objective.params.e": "x",
        path: value,
    }
    (problem,) = [p for p in api.validate([write(spec({"points_to_evaluate": [point]}))])]
    assert (problem.code, problem.path) == ("E212", f"tune.search.points_to_evaluate.0[{path}]")
    assert expected in problem.message


def test_a_point_outside_a_choice_is_refused(write):
    point = {
        "objective.params.a": 0.5,
        "objective.params.b": 3,
        "objective.params.c": 1.0,
        "objective.params.d": 3,
        "objective.params.e": "x",
    }
    found = problems(write, spec({"points_to_evaluate": [point]}))
    assert found == [("E212", "tune.search.points_to_evaluate.0[objective.params.d]")]


@settings(max_examples=200, deadline=None)
@given(text=st.text(alphabet=st.sampled_from(list("ab.* +-<=>0123456789e%n\t")), max_size=30))
def test_any_constraint_text_is_read_or_refused_with_a_reason(text):
    from specc.check.ax_search import parse_outcome_constraint, parse_parameter_constraint

    parsed = parse_parameter_constraint(text)  # a reason (str) or the terms Ax would read
    if not isinstance(parsed, str):
        assert parsed.op in ("<=", ">=") and all(
            name and "*" not in name and " " not in name for _, name in parsed.terms
        )
        assert parsed.bound is not None or len(parsed.terms) == 2
    outcome = parse_outcome_constraint(text)
    assert isinstance(outcome, str) or (outcome[0] and outcome[1] in ("<=", ">=") and math.isfinite(outcome[2]))
