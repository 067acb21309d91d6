"""`specc plan` stays exact for conditional spaces: the configs it samples equal what Ray's BasicVariantGenerator
draws from the compiled script's own search_space() (nested domains inside the chosen option), seed for seed."""

from __future__ import annotations

import ast
import logging
import shutil

import pytest
import yaml

from specc import api
from specc.check.conditional import compiled_options, mapping_entries
from specc.plan.sampling import sample_configs, trial_count
from tests.conftest import ROOT

tune = pytest.importorskip("ray.tune")
logging.getLogger("ray.tune.search.variant_generator").setLevel(logging.ERROR)

OPTIMIZER = {
    "choice": [
        {"type": "sgd", "lr": {"loguniform": [1.0e-3, 1.0e-1]}, "momentum": {"uniform": [0.5, 0.99]}},
        {"type": "adam", "lr": {"loguniform": [1.0e-4, 1.0e-2]}},
        {"type": "rmsprop", "lr": 0.01},  # an option without distributions beside them
    ]
}


def spec_file(tmp_path, space: dict, seed: int, num_samples: int = 7):
    spec = yaml.safe_load((ROOT / "specs" / "digits_conditional.yaml").read_text())
    spec["tune"]["space"] = space
    spec["tune"]["search"] = {"type": "random", "seed": seed}
    spec["tune"]["num_samples"] = num_samples
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return api.load(path)


def compiled_space(experiment) -> dict:
    """search_space() exactly as the compiled script defines it, run."""
    source = api.compile(experiment)
    function = next(n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and n.name == "search_space")
    scope = {"tune": tune}
    exec(compile(ast.Module([function], []), "<script>", "exec"), scope)
    return scope["search_space"]()


def ray_configs(experiment) -> list[dict]:
    from ray.tune.experiment import Experiment
    from ray.tune.search import BasicVariantGenerator

    t = experiment.tune
    run = Experiment("plan", run=lambda config: None, config=compiled_space(experiment), num_samples=t.num_samples)
    generator = BasicVariantGenerator(random_state=t.search.seed)
    generator.add_configurations([run])
    configs = []
    while (trial := generator.next_trial()) is not None:
        configs.append(trial.config)
    return configs


def planned(experiment, n: int) -> list[dict]:
    options = {path: compiled_options(experiment, path, entry) for path, entry in mapping_entries(experiment)}
    return sample_configs(experiment.tune, n, options)


def exact(value):
    if isinstance(value, dict):
        return {key: exact(item) for key, item in value.items()}
    if isinstance(value, list):
        return [exact(item) for item in value]
    return (type(value).__name__, value)


SPACES = {
    "choice-first": {"training.optimizer": OPTIMIZER, "model.dropout": {"uniform": [0.0, 0.3]}},
    "choice-last": {"model.dropout": {"uniform": [0.0, 0.3]}, "training.optimizer": OPTIMIZER},
    "grid-of-options": {
        "training.optimizer": {"grid": OPTIMIZER["choice"]},
        "dataset.batch_size": {"grid": [32, 64]},
        "model.dropout": {"uniform": [0.0, 0.3]},
    },
    "nested-choice": {
        "training.optimizer": {
            "choice": [
                {
                    "type": "adam",
                    "lr": {"loguniform": [1.0e-4, 1.0e-2]},
                    "betas": {"choice": [[0.9, 0.999], [0.8, 0.99]]},
                },
                {
                    "type": "sgd",
                    "lr": {"qloguniform": [1.0e-3, 1.0e-1, 1.0e-3]},
                    "nesterov": {"choice": [True, False]},
                    "momentum": {"quniform": [0.5, 0.95, 0.05]},
                },
            ]
        },
        "model.hidden_sizes.0": {"randint": [8, 64]},
    },
}


@pytest.mark.parametrize("seed", [0, 3, 12345])
@pytest.mark.parametrize("name", list(SPACES))
def test_plan_samples_what_ray_draws(tmp_path, name, seed):
    experiment = spec_file(tmp_path, SPACES[name], seed)
    expected = ray_configs(experiment)
    assert trial_count(experiment.tune) == len(expected)
    got = planned(experiment, len(expected) + 2)
    assert [exact(c) for c in got] == [exact(c) for c in expected]
    chosen = {config["training.optimizer"]["type"] for config in got}
    assert len(chosen) > 1  # the draws really cover several options
    for config in got:  # each trial's optimizer holds only its own option's fields
        optimizer = config["training.optimizer"]
        assert ("momentum" in optimizer) == (optimizer["type"] in ("sgd", "rmsprop"))
        assert "betas" not in optimizer or optimizer["type"] == "adam"


def test_example_spec_matches_ray_and_the_plan_shows_the_tree():
    experiment = api.load(ROOT / "specs" / "digits_conditional.yaml")
    expected = ray_configs(experiment)
    assert [exact(c) for c in planned(experiment, 10)] == [exact(c) for c in expected]
    text = api.format_plan(api.plan_report(experiment, configs=6))
    assert "training.optimizer: one of 2 options, each sampling only its own parameters:" in text
    assert "sgd: lr loguniform [0.001, 0.1], momentum uniform [0.5, 0.99]" in text
    assert "adam: lr loguniform [0.0001, 0.01]" in text
    rows = [line.split() for line in text.splitlines() if line.strip()[:1].isdigit() and "adam" in line]
    assert rows and all(len(row) == 4 for row in rows)  # an adam row: #, option, lr, dropout; momentum blank


def test_an_objectives_conditional_param_matches_ray(tmp_path):
    """objective.params.<name> as a conditional choice: the option as written (free-form params), its domains
    sampled in Ray's second pass over the nested config."""
    shutil.copytree(ROOT / "specs" / "factories", tmp_path / "factories")
    spec = {
        "specc": 1,
        "name": "objective-conditional",
        "objective": {
            "function": "factories.objectives:easy_objective",
            "params": {"steps": 5, "width": 10, "height": 0, "sleep": 0.0},
            "metrics": ["iterations", "mean_loss"],
        },
        "tune": {
            "metric": "mean_loss",
            "mode": "min",
            "num_samples": 8,
            "search": {"type": "random", "seed": 4},
            "space": {
                "objective.params.width": {"uniform": [0, 20]},
                "objective.params.shape": {
                    "choice": [
                        {"kind": "wide", "scale": {"uniform": [1, 2]}},
                        {"kind": "tall", "depth": {"randint": [1, 5]}},
                    ]
                },
            },
        },
    }
    path = tmp_path / "objective.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    experiment = api.load(path)
    expected = [
        {"objective.params.width": c["width"], "objective.params.shape": c["shape"]} for c in ray_configs(experiment)
    ]
    got = api.plan_report(experiment, configs=8)["configs"]["values"]
    assert [exact(c) for c in got] == [exact(c) for c in expected]
    assert {c["objective.params.shape"]["kind"] for c in got} == {"wide", "tall"}
    assert all(set(c["objective.params.shape"]) in ({"kind", "scale"}, {"kind", "depth"}) for c in got)
