"""The functions of a compiled search script, called directly (no Ray started): how sampled values reach the
config, what the stop rules decide, what --smoke searches, what best.yaml says."""

from __future__ import annotations

import types
from pathlib import Path

import pytest
import yaml

from specc import api
from tests.conftest import ROOT

SPEC = """\
specc: 1
name: tiny-search
framework: torch
model: {type: mlp, hidden_sizes: [32, 16]}
dataset: {type: digits, batch_size: 64}
training: {epochs: 6, optimizer: {type: sgd, lr: 0.05, momentum: 0.9}, checkpoint_every: 1}
scaling: {num_workers: 1}
tune:
  metric: val_accuracy
  mode: max
  num_samples: 3
  search: {type: random, seed: 1}
  space:
    training.optimizer.lr: {loguniform: [1.0e-3, 0.1]}
    model.hidden_sizes.1: {randint: [4, 33]}
    dataset.batch_size: {grid: [32, 64]}
stop:
  when: ["val_accuracy >= 0.97", "val_loss < 0.05"]
  max_trial_time_s: 60
"""


def script_of(spec_path, *overrides) -> types.ModuleType:
    script = types.ModuleType("compiled_search")
    script.__file__ = str(spec_path.parent / "search.py")
    source = api.compile(api.load(spec_path, list(overrides)))
    exec(compile(source, script.__file__, "exec"), script.__dict__)
    return script


@pytest.fixture(scope="module")
def script(tmp_path_factory):
    path = tmp_path_factory.mktemp("search") / "search.yaml"
    path.write_text(SPEC, encoding="utf-8")
    return script_of(path)


def test_sampled_values_land_at_their_paths_and_config_stays_as_compiled(script):
    sample = {"training.optimizer.lr": 0.01, "model.hidden_sizes.1": 8, "dataset.batch_size": 32}
    config = script.specc_runtime.with_sample(script.CONFIG, sample)
    assert config["training"]["optimizer"]["lr"] == 0.01
    assert config["model"]["hidden_sizes"] == [32, 8]
    assert config["dataset"]["batch_size"] == 32
    assert config["training"]["optimizer"]["momentum"] == 0.9  # untouched neighbours kept
    assert script.CONFIG["model"]["hidden_sizes"] == [32, 16]  # the compiled CONFIG is not changed
    assert script.CONFIG["training"]["optimizer"]["lr"] == 0.05


@pytest.mark.parametrize(
    ("result", "stops"),
    [
        ({"val_accuracy": 0.97, "val_loss": 0.2, "time_total_s": 1.0}, True),  # >= holds at equality
        ({"val_accuracy": 0.96, "val_loss": 0.2, "time_total_s": 1.0}, False),
        ({"val_accuracy": 0.5, "val_loss": 0.049, "time_total_s": 1.0}, True),  # the loss falls below
        ({"val_accuracy": 0.5, "val_loss": 0.05, "time_total_s": 1.0}, False),  # < is strict
        ({"val_accuracy": 0.5, "val_loss": 0.2, "time_total_s": 60.0}, True),  # max_trial_time_s
    ],
)
def test_stop_rules_are_direction_aware(script, result, stops):
    assert script.StopRules()("trial", result) is stops
    assert script.StopRules().stop_all() is False


ALL_WHEN = """\
stop:
  when: ["training_iteration >= 2"]
  all_when: ["val_accuracy >= 0.97", "val_loss < 0.05"]
  plateau: {metric: val_loss}
"""


@pytest.fixture(scope="module")
def ending_script(tmp_path_factory):
    path = tmp_path_factory.mktemp("ending") / "search.yaml"
    path.write_text(SPEC[: SPEC.index("stop:")] + ALL_WHEN, encoding="utf-8")
    return script_of(path)


def test_all_when_ends_the_whole_search_through_ray_s_combined_stopper(ending_script):
    """stop.all_when: the first result that meets a condition stops its trial and, through stop_all(), the
    search; Ray's CombinedStopper (what the script builds with when and plateau) passes stop_all() on."""
    from ray.tune.stopper import CombinedStopper

    stopper = ending_script.make_stopper()
    assert isinstance(stopper, CombinedStopper)
    assert stopper("a", {"training_iteration": 1, "val_accuracy": 0.9, "val_loss": 0.3}) is False
    assert stopper.stop_all() is False
    assert stopper("b", {"training_iteration": 1, "val_accuracy": 0.5, "val_loss": 0.049}) is True  # < is strict
    assert stopper.stop_all() is True
    assert stopper("a", {"training_iteration": 1, "val_accuracy": 0.9, "val_loss": 0.3}) is True  # the rest stop


def test_all_when_is_seen_on_the_report_that_also_ends_its_trial(ending_script):
    """Ray's CombinedStopper stops asking at the first stopper that says stop (`any` over a generator): a report
    that meets stop.when (training_iteration >= 2) and all_when at once must still end the search."""
    stopper = ending_script.make_stopper()
    assert stopper("c", {"training_iteration": 2, "val_accuracy": 0.98, "val_loss": 0.3}) is True
    assert stopper.stop_all() is True


@pytest.mark.parametrize(
    ("result", "ends"),
    [
        ({"val_accuracy": 0.97, "val_loss": 0.2}, True),  # >= holds at equality
        ({"val_accuracy": 0.969, "val_loss": 0.2}, False),
        ({"val_accuracy": 0.5, "val_loss": 0.05}, False),
        ({"val_accuracy": 0.5, "val_loss": 0.0499}, True),
    ],
)
def test_stop_search_conditions(ending_script, result, ends):
    stopper = ending_script.StopSearch()
    assert stopper("trial", result) is ends
    assert stopper.stop_all() is ends


def test_training_iteration_stops_a_trial_after_that_many_reports(ending_script):
    """Ray's own training_iteration, compared as the whole number it is (no E201: Ray adds it to every result)."""
    rules = ending_script.StopRules()
    assert rules("t", {"training_iteration": 1}) is False
    assert rules("t", {"training_iteration": 2}) is True
    assert rules.stop_all() is False
    source = api.compile(api.load(Path(ending_script.__file__).with_suffix(".yaml")))
    assert 'result["training_iteration"] >= 2\n' in source


def test_stop_search_is_only_there_when_all_when_is(script):
    assert not hasattr(script, "StopSearch")


def test_smoke_searches_one_trial_with_each_grid_first_value(script):
    space = script.search_space(smoke=True)
    assert space["dataset.batch_size"] == 32
    assert "grid_search" in script.search_space()["dataset.batch_size"]
    assert type(space["training.optimizer.lr"]).__name__ == "Float"  # still sampled


def test_best_yaml_is_a_spec_of_the_winner_without_the_search(script, tmp_path):
    summary = {
        "trial_id": "abc_00001",
        "config": {"training.optimizer.lr": 0.02, "model.hidden_sizes.1": 9, "dataset.batch_size": 64},
        "metrics": {"val_accuracy": 0.95},
    }
    text = script.specc_runtime.best_spec(script.CONFIG, summary, script.RUN["search"], script.RESOLVED_SPEC)
    assert text.startswith("# The best trial of tiny-search (abc_00001, val_accuracy 0.95)")
    best = yaml.safe_load(text)
    assert "tune" not in best and "stop" not in best and "scheduler" not in best
    assert best["name"] == best["run"]["name"] == "tiny-search-best"
    assert best["run"]["checkpoint_score"] == {"metric": "val_accuracy", "mode": "max"}
    (tmp_path / "best.yaml").write_text(text, encoding="utf-8")
    experiment = api.load(tmp_path / "best.yaml")
    assert experiment.training.optimizer.lr == 0.02
    assert experiment.model.hidden_sizes == [32, 9]
    assert experiment.dataset.batch_size == 64


def test_results_csv_cells(script):
    rows = [
        {"trial_id": "a", "status": "completed", "model.hidden_sizes": [64, 32], "act": "relu", "best": None},
        {"trial_id": "b", "status": "error", "model.hidden_sizes": [8], "act": "tanh", "best": 0.5},
    ]
    assert script.specc_runtime.csv_text(rows).splitlines() == [
        "trial_id,status,model.hidden_sizes,act,best",
        'a,completed,"[64, 32]",relu,',
        "b,error,[8],tanh,0.5",
    ]


def test_pbt_reapplies_the_trial_hyperparameters_after_a_restore(tmp_path):
    import torch

    script = script_of(ROOT / "specs" / "digits_pbt.yaml")
    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.3, momentum=0.5)
    script.use_hyperparameters(optimizer, {"type": "sgd", "lr": 0.01, "momentum": 0.9, "weight_decay": 0.0})
    (group,) = optimizer.param_groups
    assert (group["lr"], group["momentum"], group["weight_decay"]) == (0.01, 0.9, 0.0)
