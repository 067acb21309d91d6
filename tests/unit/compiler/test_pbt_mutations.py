"""pbt mutations through Ray's own explore step (ray.tune.schedulers.pbt._explore, what PopulationBasedTraining
calls when a trial exploits another): plain lists and choices stay inside their sets, and every value a chain
of explore steps produces is valid for its field, kept inside its bounds by the script's keep_in_bounds."""

from __future__ import annotations

import random
import types

import numpy as np
import pytest
import specc_runtime
from ray import tune
from ray.tune.schedulers import pbt

from specc import api
from specc.check.search_space import field_adapter

SPEC = """\
specc: 1
name: pbt-draws
framework: torch
model: {{type: mlp, hidden_sizes: [32, 16], dropout: 0.1}}
dataset: {{type: digits, batch_size: 64}}
training: {{epochs: 8, optimizer: {{type: sgd, lr: 0.05, momentum: 0.9}}, checkpoint_every: 1}}
scaling: {{num_workers: 1}}
tune:
  metric: val_accuracy
  mode: max
  num_samples: 4
  space:
    training.optimizer.momentum: {{uniform: [0.5, 0.95]}}
scheduler:
  type: pbt
  perturbation_interval: 2
  perturbation_factors: {factors}
  mutations:
    training.optimizer.momentum: {momentum}
    training.optimizer.lr: {{loguniform: [1.0e-3, 0.3]}}
    model.dropout: {{uniform: [0.0, 0.5]}}
    model.hidden_sizes.0: {{randint: [1, 5]}}
"""
MOMENTA = [0.8, 0.9, 0.99]
DRAWS = 2000


def compiled(tmp_path, momentum="{choice: [0.8, 0.9, 0.99]}", factors="[1.2, 0.8]"):
    path = tmp_path / "pbt.yaml"
    path.write_text(SPEC.format(momentum=momentum, factors=factors), encoding="utf-8")
    experiment = api.load(path)
    source = api.compile(experiment)
    script = types.ModuleType("compiled_pbt")
    script.__file__ = str(tmp_path / "pbt.py")
    exec(compile(source, script.__file__, "exec"), script.__dict__)
    return experiment, source, script


def explore_chain(scheduler, config, seed=18):
    """DRAWS explore steps, each from the last one's config (a trial perturbed again and again): the configs.

    Both of the random number generators Ray's explore draws from are seeded: `random` for the perturbations and
    numpy's global one for a resample of a search-space domain (Domain.sample). With numpy's left as earlier tests in
    the process left it, 4 of 40 states gave a chain whose dropout never reached 1."""
    rng_state, numpy_state = random.getstate(), np.random.get_state()
    random.seed(seed)
    np.random.seed(seed)
    try:
        configs = []
        for _ in range(DRAWS):
            config, _operations = pbt._explore(
                config,
                scheduler._hyperparam_mutations,
                scheduler._resample_probability,
                scheduler._perturbation_factors,
                scheduler._custom_explore_fn,
            )
            configs.append(config)
        return configs
    finally:
        random.setstate(rng_state)
        np.random.set_state(numpy_state)


START = {
    "training.optimizer.momentum": 0.93,  # sampled by tune.space: not in the mutation's set
    "training.optimizer.lr": 0.05,
    "model.dropout": 0.1,
    "model.hidden_sizes.0": 3,
}


@pytest.mark.parametrize("momentum", ["{choice: [0.8, 0.9, 0.99]}", "[0.8, 0.9, 0.99]"])
def test_choice_and_plain_list_stay_in_their_set_through_rays_explore(tmp_path, momentum):
    _experiment, source, script = compiled(tmp_path, momentum)
    assert '"training.optimizer.momentum": [0.8, 0.9, 0.99],' in source  # a plain list, as Ray's examples write
    assert "tune.choice" not in source
    configs = explore_chain(script.make_scheduler(), dict(START))
    drawn = {config["training.optimizer.momentum"] for config in configs}
    assert drawn == set(MOMENTA)  # every value of the set is reached, and nothing else


def test_rays_explore_takes_tune_choice_out_of_its_set():
    """Why a choice is compiled to a list: Ray perturbs a Domain as a number (this fails if Ray changes that)."""
    scheduler = pbt.PopulationBasedTraining(hyperparam_mutations={"m": tune.choice(MOMENTA)})
    drawn = {config["m"] for config in explore_chain(scheduler, {"m": 0.99})}
    assert max(drawn) > 1  # 0.99 x 1.2 = 1.188: outside the set and outside momentum's constraint
    assert not drawn <= set(MOMENTA)


def test_every_explored_value_is_valid_for_its_field(tmp_path):
    experiment, source, script = compiled(tmp_path)
    clip = 'config["model.dropout"] = min(config["model.dropout"], 0.5)'
    assert f"{clip}  # 0 <= dropout < 1: at most 0.5, the top of its range" in source
    assert "custom_explore_fn=keep_in_bounds," in source
    # lr (> 0) and hidden sizes (> 0) cannot cross 0 by x1.2 / x0.8: no line for them
    assert 'config["training.optimizer.lr"] =' not in source
    assert 'config["model.hidden_sizes.0"] =' not in source
    adapters = {path: field_adapter(experiment, path.split(".")) for path in START}
    configs = explore_chain(script.make_scheduler(), dict(START))
    for config in configs:
        for path, adapter in adapters.items():
            adapter.validate_python(config[path])  # raises on the first value the field does not accept
        assert isinstance(config["model.hidden_sizes.0"], int)  # Ray rounds a value that started as an int
    dropouts = [config["model.dropout"] for config in configs]
    assert max(dropouts) == 0.5  # perturbed past its range again and again, stopped at the top of it
    assert max(config["training.optimizer.lr"] for config in configs) > 0.3  # PBT explores beyond the range


def test_without_keep_in_bounds_the_same_draws_leave_the_field(tmp_path):
    """The draws of the test above reach values the field refuses when nothing clips them."""
    _experiment, _source, script = compiled(tmp_path)
    scheduler = script.make_scheduler()
    scheduler._custom_explore_fn = None
    dropouts = [config["model.dropout"] for config in explore_chain(scheduler, dict(START))]
    assert max(dropouts) >= 1


def test_integers_are_clipped_as_integers(tmp_path):
    """x0.4 rounds a hidden size of 1 down to 0: keep_in_bounds stops at 1 and keeps an int."""
    _experiment, source, script = compiled(tmp_path, factors="[1.2, 0.4]")
    line = 'config["model.hidden_sizes.0"] = int(max(config["model.hidden_sizes.0"], 1))  # 0 < hidden_sizes.0'
    assert line in source
    configs = explore_chain(script.make_scheduler(), dict(START))
    sizes = [config["model.hidden_sizes.0"] for config in configs]
    assert min(sizes) == 1 and all(isinstance(size, int) for size in sizes)


TWO_WORKERS = """\
specc: 1
name: pbt-train
framework: {framework}
model: {{type: mlp, hidden_sizes: [32]}}
dataset: {{type: digits, batch_size: 64}}
training: {{epochs: 4, optimizer: {{type: sgd, lr: 0.05}}, checkpoint_every: 1}}
scaling: {{num_workers: 2, resources_per_worker: {{CPU: 0.4}}}}
run: {{checkpoints_to_keep: 4}}
tune:
  metric: val_accuracy
  mode: max
  space:
    training.optimizer.lr: {{grid: [0.002, 0.2]}}
{scheduler}
"""
PBT_SCHEDULER = """\
scheduler:
  type: pbt
  perturbation_interval: 1
  mutations:
    training.optimizer.lr: {loguniform: [1.0e-3, 0.3]}
"""


def test_pbt_over_train_runs_passes_train_checkpoints_through_tune(write_spec):
    """A trial that drives a 2-worker Train run reports each Train checkpoint to Tune (for PBT to copy) and starts
    a new Train run from the Tune checkpoint it is given; without pbt, it reports the metrics alone and always
    starts its Train run from that run's own checkpoints."""
    spec = write_spec(TWO_WORKERS.format(framework="torch", scheduler=PBT_SCHEDULER))
    source = api.compile(api.load(spec))
    compile(source, "pbt_train.py", "exec")
    assert "class ReportToTrial(ray.train.UserCallback):" in source
    assert "tune.report(metrics, checkpoint=checkpoint)" in source
    metadata = 'checkpoint.set_metadata({"epoch": metrics["epoch"], "epochs_counted_from": 1})'
    assert metadata in source  # a trial given it after the last epoch ends at once:
    held = 'held = specc_runtime.epochs_held(start.get_metadata()) if start and "epoch" in start.get_metadata() else 0'
    assert held in source
    assert 'if held >= config["training"]["epochs"]:\n        return' in source
    assert 'config["start_from"] = start.path' in source
    assert 'specc_runtime.restore_torch(ray.train, held, device, config.get("start_from"))' in source
    assert "TuneReportCallback()" not in source and "import TuneReportCallback" not in source
    assert source.count("checkpoint_config=") == 2  # Train's checkpoints, and Tune's copies (run.checkpoints_to_keep)
    fifo = api.compile(api.load(write_spec(TWO_WORKERS.format(framework="torch", scheduler=""), "fifo.yaml")))
    assert "for metrics in relay.each_report(trainer):\n        tune.report(metrics)  #" in fifo
    assert "start_from" not in fifo and "tune.Checkpoint(" not in fifo and "hashlib" not in fifo


PB2_SCHEDULER = """\
scheduler:
  type: pb2
  perturbation_interval: 1
  bounds:
    training.optimizer.lr: [1.0e-3, 0.3]
"""


@pytest.mark.parametrize("framework", ["torch", "tensorflow"])
@pytest.mark.parametrize("scheduler", [PBT_SCHEDULER, PB2_SCHEDULER], ids=["pbt", "pb2"])
def test_pbt_and_pb2_over_train_runs_are_valid_in_both_frameworks(write_spec, framework, scheduler):
    """Each framework's train_func starts from config["start_from"] (once E206 for num_workers > 1). Torch's is
    checked end to end by tests/e2e/test_pbt_train.py; Keras' two lines run in the local-mode test below."""
    from specc.check.validate import check_file

    spec = write_spec(TWO_WORKERS.format(framework=framework, scheduler=scheduler))
    assert check_file(spec).problems == []
    source = api.compile(api.load(spec))
    compile(source, "pbt_train.py", "exec")
    assert "trainer = make_trainer(config, scaling, name, storage_path, [relay])" in source
    if framework == "torch":  # specc_runtime.restore_torch starts from it when Train has no checkpoint of its own
        assert 'specc_runtime.restore_torch(ray.train, held, device, config.get("start_from"))' in source
    else:
        assert "ray.train.get_checkpoint() or given" in source
        assert 'ray.train.Checkpoint(config["start_from"]) if config.get("start_from")' in source


def test_paths_only_mutations_names_are_listed_with_the_trials(tmp_path):
    """lr, dropout and hidden_sizes.0 are in scheduler.mutations only: PBT draws each trial's first value into its
    config, and results.csv rows, best.json/best.yaml and the progress lines list them after tune.space's paths
    (a real search: tests/e2e/test_pbt_mutations.py)."""
    _, source, script = compiled(tmp_path)
    mutated = ["training.optimizer.lr", "model.dropout", "model.hidden_sizes.0"]
    assert script.trial_paths() == ["training.optimizer.momentum", *mutated]
    # results.csv rows and best.json's config (the runtime's, by RUN["search"]), and the progress lines
    assert script.RUN["search"]["paths"] is script.trial_paths
    assert '"paths": trial_paths,' in source  # which Run.show_trials hands the progress lines too
    config = {"training.optimizer.momentum": 0.9, "training.optimizer.lr": 0.01, "model.dropout": 0.2}
    result = types.SimpleNamespace(config={**config, "model.hidden_sizes.0": 3}, metrics={"epoch": 7}, error=None)
    result.metrics_dataframe, result.path = None, str(tmp_path / "trial_a1b2c_00000")
    row = specc_runtime.trial_row(result, 8, script.RUN["search"], script.trial_paths())
    assert [row[path] for path in script.trial_paths()] == [0.9, 0.01, 0.2, 3]


def test_without_such_paths_the_script_lists_the_space(tmp_path, write_spec):
    spec = write_spec(TWO_WORKERS.format(framework="torch", scheduler=PBT_SCHEDULER))  # lr: in tune.space too
    source = api.compile(api.load(spec))
    assert "trial_paths" not in source and '"paths": search_space,' in source


@pytest.mark.slow
def test_a_keras_train_run_given_start_from_trains_on_from_that_checkpoint(write_spec, tmp_path):
    """Keras' own lines of PBT over Train runs, run for real in Ray Train's local mode (tests/e2e/test_pbt_train.py
    runs torch's on a real Ray): a Train run whose config names a checkpoint in start_from loads that model and goes
    on after its epoch. The checkpoint is a trained model saved as the script saves one; with a learning rate of 1e-9
    the run's only epoch reports that model's own accuracy, where a run from scratch reports a guess's."""
    import json

    source = api.compile(api.load(write_spec(TWO_WORKERS.format(framework="tensorflow", scheduler=PBT_SCHEDULER))))
    script = types.ModuleType("compiled_keras_pbt")
    script.__file__ = str(tmp_path / "pbt_train.py")
    exec(compile(source, script.__file__, "exec"), script.__dict__)
    config = script.CONFIG
    train, val, input_shape, num_outputs = script.make_loaders(config, 0, 1, 0)
    donor = script.build_model(config["model"], input_shape, num_outputs)
    script.compile_model(donor, config["training"])
    donor.fit(train, epochs=8, verbose=0)
    accuracy = donor.evaluate(val, verbose=0)[1]
    assert accuracy > 0.5  # far from a guess's 0.1
    start = tmp_path / "donor"
    start.mkdir()
    donor.save(start / "model.keras", save_format="keras_v3")
    state = {"epoch": 2, "epochs_counted_from": 1, "history": [{"epoch": 1}, {"epoch": 2}]}
    (start / "state.json").write_text(json.dumps(state))

    still = {**config["training"], "epochs": 3, "optimizer": {**config["training"]["optimizer"], "lr": 1e-9}}
    local = {"num_workers": 0}
    given = {**config, "training": still, "start_from": str(start)}
    result = script.make_trainer(given, local, "from-donor", str(tmp_path / "runs"), []).fit()
    assert result.metrics["epoch"] == 3 and result.metrics["val_accuracy"] == pytest.approx(accuracy, abs=1e-6)
    scratch = script.make_trainer({**config, "training": still}, local, "scratch", str(tmp_path / "runs"), []).fit()
    assert scratch.metrics["val_accuracy"] < 0.5
