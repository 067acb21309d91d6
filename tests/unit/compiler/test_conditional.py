"""Conditional spaces compiled (SPEC §12): the compiled script's own functions, run against the real searchers.

Each searcher is asked for many trials: every trial's optimizer holds exactly its option's fields (an adam trial
has no momentum) with each sampled value inside its distribution, and the script's make_optimizer builds it.
"""

from __future__ import annotations

import ast
import math

import pytest
import specc_runtime
import yaml

from specc import api
from tests.conftest import ROOT

SPEC = ROOT / "specs" / "digits_conditional.yaml"
SGD_FIELDS = {"type", "lr", "momentum", "weight_decay", "nesterov"}
ADAM_FIELDS = {"type", "lr", "betas", "eps", "weight_decay", "amsgrad"}
DRAWS = 150


def experiment_for(tmp_path, search: str):
    spec = yaml.safe_load(SPEC.read_text())
    spec["tune"]["search"] = {"type": search, "seed": 5}
    path = tmp_path / f"{search}.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return api.load(path)


def script_functions(source: str, names: tuple[str, ...], scope: dict) -> dict:
    """The named top-level functions of a compiled script, defined in `scope` (its imports)."""
    wanted = [n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and n.name in names]
    assert {n.name for n in wanted} == set(names)
    exec(compile(ast.Module(wanted, []), "<script>", "exec"), scope)
    return scope


def check_trial(sample: dict, script: dict) -> str:
    """The trial's config as run_trial builds it (specc_runtime.with_sample): its optimizer is exactly its option,
    values in range."""
    config = script["with_sample"](BASE_CONFIG, sample)
    optimizer = config["training"]["optimizer"]
    if optimizer["type"] == "sgd":
        assert set(optimizer) == SGD_FIELDS
        assert 1e-3 <= optimizer["lr"] <= 1e-1 and 0.5 <= optimizer["momentum"] <= 0.99
    else:
        assert optimizer["type"] == "adam" and set(optimizer) == ADAM_FIELDS  # no momentum
        assert 1e-4 <= optimizer["lr"] <= 1e-2
    assert 0.0 <= config["model"]["dropout"] <= 0.3
    assert BASE_CONFIG["training"]["optimizer"] == {"type": "adam", "lr": 0.001}  # CONFIG itself stays as it is
    return optimizer["type"]


BASE_CONFIG = {"model": {"dropout": 0.0}, "training": {"optimizer": {"type": "adam", "lr": 0.001}}}


def test_random_is_nested_ray_domains(tmp_path):
    source = api.compile(experiment_for(tmp_path, "random"))
    assert '"lr": tune.loguniform(0.001, 0.1),' in source  # visible: the option's own domains inside it
    assert "param_space=search_space()" in source
    assert "define_space" not in source and "hyperopt_space" not in source


def test_optuna_define_by_run_gives_each_trial_only_its_option(tmp_path):
    optuna_search = pytest.importorskip("ray.tune.search.optuna")
    import optuna

    source = api.compile(experiment_for(tmp_path, "optuna"))
    assert "space=define_space," in source and "param_space=" not in source
    assert "sample = {path: sample[path] for path in search_space()}" in source  # run_trial drops Optuna's names
    script = script_functions(source, ("define_space", "search_space"), {"with_sample": specc_runtime.with_sample})
    script["tune"] = pytest.importorskip("ray.tune")
    searcher = optuna_search.OptunaSearch(
        space=script["define_space"], metric="val_accuracy", mode="max", sampler=optuna.samplers.TPESampler(seed=5)
    )
    seen = []
    for index in range(DRAWS):
        suggested = searcher.suggest(f"t{index}")
        sample = {path: suggested[path] for path in script["search_space"]()}  # as run_trial does
        seen.append(check_trial(sample, script))
        searcher.on_trial_complete(f"t{index}", {"val_accuracy": index % 7 / 7})
    assert {"sgd", "adam"} == set(seen)


def test_hyperopt_nested_choice_gives_each_trial_only_its_option(tmp_path):
    hyperopt_search = pytest.importorskip("ray.tune.search.hyperopt")
    from hyperopt import hp

    source = api.compile(experiment_for(tmp_path, "hyperopt"))
    assert "space=hyperopt_space()," in source and "param_space=" not in source
    assert 'hp.choice(\n            "training.optimizer",' in source
    scope = {"math": math, "hp": hp, "with_sample": specc_runtime.with_sample}
    script = script_functions(source, ("hyperopt_space",), scope)
    searcher = hyperopt_search.HyperOptSearch(
        space=script["hyperopt_space"](), metric="val_accuracy", mode="max", random_state_seed=5, n_initial_points=20
    )
    seen = []
    for index in range(DRAWS):
        sample = searcher.suggest(f"t{index}")
        assert set(sample) == {"training.optimizer", "model.dropout"}
        seen.append(check_trial(sample, script))
        searcher.on_trial_complete(f"t{index}", {"val_accuracy": index % 7 / 7})
    assert {"sgd", "adam"} == set(seen)


def test_make_optimizer_builds_each_option(tmp_path):
    torch = pytest.importorskip("torch")
    source = api.compile(experiment_for(tmp_path, "random"))
    script = script_functions(source, ("make_optimizer", "search_space"), {"torch": torch})
    script["tune"] = pytest.importorskip("ray.tune")
    choice = script["search_space"]()["training.optimizer"]
    parameters = [torch.nn.Parameter(torch.zeros(2))]
    built = []
    for option in choice.categories:
        resolved = {key: value.sample() if hasattr(value, "sample") else value for key, value in option.items()}
        optimizer = script["make_optimizer"](parameters, resolved)
        built.append(type(optimizer).__name__)
        assert optimizer.param_groups[0]["lr"] == resolved["lr"]
    assert built == ["SGD", "Adam"]


def test_bayesopt_is_refused_at_the_option(tmp_path):
    spec = yaml.safe_load(SPEC.read_text())
    spec["tune"]["search"] = {"type": "bayesopt", "seed": 5}
    path = tmp_path / "bayes.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    problems = api.validate([path])
    assert any(p.code == "E233" for p in problems)


def test_plain_mapping_options_get_their_sections_defaults(tmp_path):
    spec = yaml.safe_load(SPEC.read_text())
    spec["tune"]["space"] = {"training.optimizer": {"choice": [{"type": "sgd", "lr": 0.1}, {"type": "adam"}]}}
    path = tmp_path / "plain.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    source = api.compile(api.load(path))
    assert '{"type": "sgd", "lr": 0.1, "momentum": 0.0, "weight_decay": 0.0, "nesterov": False}' in source
    assert 'if cfg["type"] == "adam":' in source and 'elif cfg["type"] == "sgd":' in source


@pytest.mark.parametrize(
    ("options", "codes"),
    [
        # rmsprop takes momentum: every reachable combination valid
        (
            [
                {"type": "rmsprop", "momentum": {"uniform": [0.0, 0.9]}},
                {"type": "adam", "lr": {"uniform": [0.001, 0.01]}},
            ],
            [],
        ),
        ([{"type": "adam", "momentum": {"uniform": [0.0, 0.9]}}, {"type": "sgd"}], ["E232"]),
        ([{"type": "sgd", "lr": {"uniform": [-0.1, 0.1]}}, {"type": "adam"}], ["E203"]),  # lr > 0
        ([{"type": "sgd", "lr": {"choice": [0.1, 0]}}, {"type": "adam"}], ["E203"]),
        ([{"type": "sgd", "nesterov": "yes", "lr": {"uniform": [0.01, 0.1]}}, {"type": "adam"}], ["E232"]),
    ],
)
def test_every_reachable_combination_is_checked(tmp_path, options, codes):
    spec = yaml.safe_load(SPEC.read_text())
    spec["tune"]["space"] = {"training.optimizer": {"choice": options}}
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    problems = api.validate([path])
    assert [p.code for p in problems if p.code.startswith("E")] == codes, problems
    for problem in problems:
        assert problem.line is not None and problem.path.startswith("tune.space[training.optimizer].choice.0")


def test_progress_lines_and_results_show_a_trials_option_by_its_own_parameters(tmp_path):
    """The script's table of a conditional entry's options goes to its progress lines (specc_runtime.TrialProgress
    shows `optimizer.type=sgd  optimizer.lr=...`: tests/unit/runtime/test_progress.py) and to results.csv's
    columns (RUN["search"])."""
    source = api.compile(experiment_for(tmp_path, "random"))
    assert "\nOPTION_PARAMS = {" in source
    assigned = [n for n in ast.parse(source).body if isinstance(n, ast.Assign)]
    (table,) = [n for n in assigned if ast.unparse(n.targets[0]) == "OPTION_PARAMS"]
    # the options' type and the parameters the spec samples (sgd's lr and momentum, adam's lr): a column each
    assert set(ast.literal_eval(table.value)["training.optimizer"]) == {"type", "lr", "momentum"}
    assert '"option_params": OPTION_PARAMS' in source  # results.csv's columns, and Run.show_trials' progress lines
