"""Conditional spaces over objective.params (SPEC §13) compiled for optuna (define-by-run) and hyperopt (nested
hp.choice): the compiled script's own functions, run against the real searchers. Each trial's config, as Tune
builds it (the param space merged with the searcher's sample), holds exactly its option's fields, every sampled value
inside its distribution, the params nothing searches as written, and none of Optuna's own parameter names."""

from __future__ import annotations

import ast
import math

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from specc import api

SPEC = {
    "specc": 1,
    "name": "shapes",
    "objective": {
        "function": "shapes_objective:shapes",
        "params": {"steps": 3, "shape": {"kind": "plane", "level": 0.0}, "label": "kept", "nested": {"a": 1, "b": 2}},
        "metrics": ["step", "loss"],
        "max_steps": 3,
    },
    "tune": {
        "metric": "loss",
        "mode": "min",
        "num_samples": 8,
        "search": {"type": "optuna", "seed": 3},
        "space": {
            "objective.params.shape": {
                "choice": [{"kind": "bowl", "x": {"uniform": [0, 6]}}, {"kind": "plane", "level": {"uniform": [0, 1]}}]
            },
            "objective.params.nested.b": {"randint": [0, 5]},
        },
    },
}
DRAWS = 60


def compiled(tmp_path, search: dict, spec: dict = SPEC) -> str:
    (tmp_path / "shapes_objective.py").write_text("def shapes(config):\n    pass\n", encoding="utf-8")
    spec = {**spec, "tune": {**spec["tune"], "search": search}}
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    assert api.validate([path]) == []
    return api.compile(api.load(path))


def script_parts(source: str, names: tuple[str, ...], scope: dict) -> dict:
    """The named top-level functions, classes and assignments of a compiled script, run in `scope`."""

    def named(node):
        if isinstance(node, ast.Assign):
            return {name.id for name in ast.walk(node.targets[0]) if isinstance(name, ast.Name)} & set(names)
        return getattr(node, "name", None) in names

    wanted = [node for node in ast.parse(source).body if named(node)]
    exec(compile(ast.Module(wanted, []), "<script>", "exec"), scope)
    return scope


def check_trial(config: dict) -> str:
    shape = config["shape"]
    if shape["kind"] == "bowl":
        assert set(shape) == {"kind", "x"} and 0 <= shape["x"] <= 6
    else:
        assert set(shape) == {"kind", "level"} and 0 <= shape["level"] <= 1
    assert set(config) == {"steps", "shape", "label", "nested"}  # no parameter by Optuna's own name
    assert config["nested"]["a"] == 1 and config["nested"]["b"] in range(5)
    assert (config["steps"], config["label"]) == (3, "kept")
    return shape["kind"]


def test_optuna_define_by_run_gives_each_trial_only_its_option(tmp_path):
    optuna_search = pytest.importorskip("ray.tune.search.optuna")
    from ray.tune.utils.util import merge_dicts

    source = compiled(tmp_path, {"type": "optuna", "seed": 3})
    assert "space=define_space," in source and "return OptunaParams(" in source
    assert "param_space=search_space()" in source
    scope = {"OptunaSearch": optuna_search.OptunaSearch, "optuna": pytest.importorskip("optuna")}
    script = script_parts(
        source, ("define_space", "OptunaParams", "SEARCHED", "search_space", "make_searcher", "METRIC", "MODE"), scope
    )
    assert script["search_space"]() == {"steps": 3, "label": "kept", "nested": {"a": 1}}  # the sampled left out
    searcher = script["make_searcher"]()
    seen = []
    for index in range(DRAWS):
        sample = searcher.suggest(f"t{index}")
        seen.append(check_trial(merge_dicts(script["search_space"](), sample)))  # as Tune's SearchGenerator does
        searcher.on_trial_complete(f"t{index}", {"loss": index % 7 / 7})
    assert set(seen) == {"bowl", "plane"}


def test_hyperopt_nested_choice_gives_each_trial_only_its_option(tmp_path):
    hyperopt_search = pytest.importorskip("ray.tune.search.hyperopt")
    from hyperopt import hp
    from ray.tune.utils.util import merge_dicts

    source = compiled(tmp_path, {"type": "hyperopt", "seed": 3, "n_initial_points": 5})
    assert "space=hyperopt_space()," in source and 'hp.choice(\n            "objective.params.shape",' in source
    scope = {"math": math, "hp": hp, "HyperOptSearch": hyperopt_search.HyperOptSearch}
    script = script_parts(source, ("hyperopt_space", "search_space", "make_searcher", "METRIC", "MODE"), scope)
    searcher = script["make_searcher"]()
    seen = []
    for index in range(DRAWS):
        sample = searcher.suggest(f"t{index}")
        assert set(sample) == {"shape", "nested"}
        seen.append(check_trial(merge_dicts(script["search_space"](), sample)))
        searcher.on_trial_complete(f"t{index}", {"loss": index % 7 / 7})
    assert set(seen) == {"bowl", "plane"}


@pytest.mark.parametrize("search", ["random", "optuna", "hyperopt"])
def test_a_conditional_objective_space_validates_with_each_searcher_that_samples_it(tmp_path, search):
    compiled(tmp_path, {"type": search, "seed": 3})


def test_bayesopt_still_cannot_search_it(tmp_path):
    (tmp_path / "shapes_objective.py").write_text("def shapes(config):\n    pass\n", encoding="utf-8")
    spec = {**SPEC, "tune": {**SPEC["tune"], "search": {"type": "bayesopt", "seed": 3}}}
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    assert "E233" in {problem.code for problem in api.validate([path])}


# -- any conditional param, any searcher that samples it --------------------------------------------------------------
NAMES = st.sampled_from(["alpha", "beta", "kind", "width", "rate"])
SCALARS = st.one_of(st.integers(-5, 5), st.sampled_from(["a", "b", "long name"]), st.booleans())
RANGES = {"uniform": (-2.0, 3.0), "loguniform": (1.0e-4, 1.0e-1), "randint": (0, 7)}
DISTRIBUTIONS = st.one_of(
    st.sampled_from([{kind: list(bounds)} for kind, bounds in RANGES.items()]),
    st.lists(SCALARS, min_size=1, max_size=3, unique=True).map(lambda values: {"choice": values}),
)


@st.composite
def options(draw):
    """2-3 options: mappings of constants and at least one distribution (some nested one level down)."""
    made = []
    for _ in range(draw(st.integers(2, 3))):
        sampled = draw(st.dictionaries(NAMES, DISTRIBUTIONS, min_size=1, max_size=2))
        constants = draw(st.dictionaries(NAMES, SCALARS, max_size=2))
        option = {**{k: v for k, v in constants.items() if k not in sampled}, **sampled}
        if draw(st.booleans()):
            option["inner"] = {"depth": draw(DISTRIBUTIONS)}
        made.append(option)
    return made


def drawn_from(value, written) -> bool:
    """Whether `value` is what option mapping `written` can give: its constants as written, each distribution's value
    inside it."""
    if isinstance(written, dict) and len(written) == 1 and next(iter(written)) in (*RANGES, "choice"):
        kind, args = next(iter(written.items()))
        if kind == "choice":
            return value in args
        low, high = RANGES[kind]
        return low <= value <= high and (kind != "randint" or isinstance(value, int))
    if isinstance(written, dict):
        return (
            isinstance(value, dict)
            and set(value) == set(written)
            and all(drawn_from(value[key], item) for key, item in written.items())
        )
    return value == written


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(written=options(), nested=st.booleans(), search=st.sampled_from(["optuna", "hyperopt"]))
def test_any_conditional_param_gives_each_trial_one_option_whole(tmp_path_factory, written, nested, search):
    """Whatever the options hold (constants, choices of scalars, numbers, a nested mapping) and wherever the param
    sits (top level or inside a mapping of params), every trial's config holds exactly one option, its distributions
    drawn inside their ranges, the other params as written and nothing by a searcher's own name."""
    from ray.tune.utils.util import merge_dicts

    tmp_path = tmp_path_factory.mktemp("conditional")
    path = "objective.params.net.choice" if nested else "objective.params.choice"
    params = {"steps": 2, "net": {"depth": 3}}
    spec = {
        **SPEC,
        "objective": {**SPEC["objective"], "params": params},
        "tune": {**SPEC["tune"], "space": {path: {"choice": written}}},
    }
    source = compiled(tmp_path, {"type": search, "seed": 1}, spec)
    scope = {"math": math}
    if search == "optuna":
        scope.update(
            OptunaSearch=pytest.importorskip("ray.tune.search.optuna").OptunaSearch, optuna=__import__("optuna")
        )
        names = ("define_space", "OptunaParams", "SEARCHED")
    else:
        from hyperopt import hp
        from hyperopt.pyll import scope as pyll_scope

        scope.update(
            hp=hp, scope=pyll_scope, HyperOptSearch=pytest.importorskip("ray.tune.search.hyperopt").HyperOptSearch
        )
        names = ("hyperopt_space",)
    script = script_parts(source, (*names, "search_space", "make_searcher", "METRIC", "MODE"), scope)
    searcher = script["make_searcher"]()
    for index in range(6):
        config = merge_dicts(script["search_space"](), searcher.suggest(f"t{index}"))
        got = config["net"]["choice"] if nested else config["choice"]
        assert set(config) == ({"steps", "net"} if nested else {"steps", "net", "choice"})
        assert config["steps"] == 2 and config["net"]["depth"] == 3
        assert any(drawn_from(got, option) for option in written), (got, written)
        searcher.on_trial_complete(f"t{index}", {"loss": float(index)})
