"""Multi-objective search (SPEC §12, tune.metric a list): the compiled script hands the metric and mode lists to
OptunaSearch, as Ray's own multi-objective example does, and none to TuneConfig; it keeps the latest checkpoints
(no one metric ranks them) and never asks Ray for one best result. tests/e2e/test_multi_objective.py runs it."""

from __future__ import annotations

import ast

import pytest
import yaml

from specc import api
from tests.unit.compiler.test_diverged import script_of

SPEC = """\
specc: 1
name: two-goals
framework: {framework}
model: {{type: mlp, hidden_sizes: [16]}}
dataset: {{type: digits, batch_size: 16}}
training: {{epochs: 2, metrics: [accuracy], checkpoint_every: 1}}
scaling: {{num_workers: {workers}}}
tune:
  metric: {metric}
  mode: {mode}
  num_samples: 4
  search: {{type: optuna, seed: 3}}
  space: {{model.hidden_sizes.0: {{lograndint: [2, 65]}}}}
run: {{checkpoints_to_keep: 2}}
"""
MULTI = {"metric": "[val_accuracy, num_parameters]", "mode": "[max, min]"}


def calls(source: str, name: str) -> list[ast.Call]:
    """Every call of `name` (a plain name or an attribute's last part) in the script."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            called = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
            if called == name:
                found.append(node)
    return found


def keywords(call: ast.Call) -> dict[str, str]:
    return {keyword.arg: ast.unparse(keyword.value) for keyword in call.keywords}


@pytest.mark.parametrize(("framework", "workers"), [("torch", 0), ("torch", 2), ("tensorflow", 1)])
def test_optuna_takes_the_lists_and_tune_config_no_metric(write_spec, framework, workers):
    source = api.compile(api.load(write_spec(SPEC.format(framework=framework, workers=workers, **MULTI))))
    assert 'METRIC, MODE = ["val_accuracy", "num_parameters"], ["max", "min"]' in source
    (optuna,) = calls(source, "OptunaSearch")
    assert keywords(optuna)["metric"] == "METRIC" and keywords(optuna)["mode"] == "MODE"
    (tune_config,) = calls(source, "TuneConfig")
    assert "metric" not in keywords(tune_config) and "mode" not in keywords(tune_config)
    assert "get_best_result" not in source and '"pareto": True,' in source  # specc_runtime ranks the front
    for checkpoint_config in calls(source, "CheckpointConfig"):  # the latest checkpoints: no one metric ranks them
        assert keywords(checkpoint_config) == {"num_to_keep": "2"}


def test_a_single_metric_search_is_compiled_as_before(write_spec):
    source = api.compile(
        api.load(write_spec(SPEC.format(framework="torch", workers=0, metric="val_accuracy", mode="max")))
    )
    (optuna,) = calls(source, "OptunaSearch")
    assert "metric" not in keywords(optuna)
    assert keywords(calls(source, "TuneConfig")[0])["metric"] == "METRIC"
    assert "pareto" not in source


def test_the_searcher_is_ray_s_optuna_search_with_both_objectives(write_spec):
    pytest.importorskip("optuna")
    script = script_of(write_spec, SPEC.format(framework="torch", workers=0, **MULTI))
    searcher = script.make_searcher()
    assert type(searcher).__module__ == "ray.tune.search.optuna.optuna_search"
    assert searcher.metric == ["val_accuracy", "num_parameters"] and searcher.mode == ["max", "min"]


def test_best_yaml_retrains_the_front_s_first_member_and_is_a_valid_spec(write_spec, tmp_path):
    script = script_of(write_spec, SPEC.format(framework="torch", workers=0, **MULTI))
    member = {"trial_id": "b1", "config": {"model.hidden_sizes.0": 7}, "checkpoint": None,
              "metrics": {"val_accuracy": 0.9, "num_parameters": 535}}  # fmt: skip
    other = {**member, "trial_id": "b2", "metrics": {"val_accuracy": 0.5, "num_parameters": 150}}
    summary = {"status": "completed", **member, "metric": script.METRIC, "mode": script.MODE, "front": [member, other]}
    text = script.specc_runtime.best_spec(script.CONFIG, summary, script.RUN["search"], script.RESOLVED_SPEC)
    assert text.startswith(
        "# The Pareto front of two-goals holds 2 trials (best.json lists each); this is its first by val_accuracy, "
        "trial b1 (val_accuracy 0.9, num_parameters 535), as a spec of its own:\n#   specc run best.yaml\n"
        "# The front's others (b2): their config in best.json.\n"
    )
    spec = yaml.safe_load(text)
    assert "tune" not in spec and spec["model"]["hidden_sizes"] == [7]
    assert spec["run"]["checkpoint_score"] == {"metric": "val_accuracy", "mode": "max"}
    path = tmp_path / "best.yaml"
    path.write_text(text, encoding="utf-8")
    assert api.check_file(path).problems == []


OBJECTIVE = """\
specc: 1
name: two-losses
objective:
  function: objectives:two_losses
  params: {steps: 3, x: 0.0}
  metrics: [loss1, loss2]
tune:
  metric: [loss1, loss2]
  mode: [min, min]
  search: {type: optuna}
  space: {objective.params.x: {uniform: [-2, 2]}}
"""


def test_an_objective_spec_s_search_is_multi_objective_the_same_way(write_spec):
    write_spec("import ray.tune\n\n\ndef two_losses(config): ...\n", "objectives.py")
    source = api.compile(api.load(write_spec(OBJECTIVE)))
    assert 'METRIC, MODE = ["loss1", "loss2"], ["min", "min"]' in source
    (optuna,) = calls(source, "OptunaSearch")
    assert keywords(optuna)["metric"] == "METRIC" and keywords(optuna)["mode"] == "MODE"
    (tune_config,) = calls(source, "TuneConfig")
    assert "metric" not in keywords(tune_config) and "mode" not in keywords(tune_config)
    (checkpoint_config,) = calls(source, "CheckpointConfig")
    assert "checkpoint_score_attribute" not in keywords(checkpoint_config)
    assert '"pareto": True,' in source and "best_{METRIC}" not in source
