"""Conditional spaces over objective.params (SPEC §13) compiled for optuna (define-by-run) and hyperopt (nested
hp.choice): the compiled script's own functions, run against the real searchers. Each trial's config, as Tune
builds it (the param space merged with the searcher's sample), holds exactly its option's fields, every sampled value
inside its distribution, the params nothing searches as written, and none of Optuna's own parameter names."""

from __future__ import annotations

import ast
import math

import pytest
import yaml

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


def compiled(tmp_path, search: dict) -> str:
    (tmp_path / "shapes_objective.py").write_text("def shapes(config):\n    pass\n", encoding="utf-8")
    spec = {**SPEC, "tune": {**SPEC["tune"], "search": search}}
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
