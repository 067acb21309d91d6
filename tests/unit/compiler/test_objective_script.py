"""Compiled objective specs (SPEC §12): the user's Tune function is the trainable. Each variant (searcher, scheduler,
stop rules, grids, nested params, resources) compiles to a ruff-clean script; its functions are called directly (no
Ray started): the search space, the stopper, the sampled values of results.csv, best.yaml."""

from __future__ import annotations

import subprocess
import sys
import types

import pytest
import yaml

from specc import api
from tests.conftest import ROOT

FUNCTION = """\
from ray import tune


def objective(config):
    for step in range(config["steps"]):
        tune.report({"loss": (config["x"] - 3) ** 2 + config["nested"]["y"] / (step + 1)})


def population(config):
    checkpoint = tune.get_checkpoint()
    for step in range(config["steps"]):
        tune.report({"loss": config["x"] ** 2 / (step + 1), "checkpointed": checkpoint is not None})


class Climber(tune.Trainable):
    def setup(self, config):
        self.x = config["x"]

    def step(self):
        return {"loss": (self.x - 3) ** 2}

    def save_checkpoint(self, checkpoint_dir):
        pass

    def load_checkpoint(self, checkpoint_dir):
        pass
"""
BASE = """\
specc: 1
name: objective-case
objective:
  function: functions:objective
  params: {steps: 8, x: 0.0, nested: {y: 1.0, z: keep}}
  metrics: [loss]
  max_steps: 8
tune:
  metric: loss
  mode: min
  num_samples: 3
  search: {type: random, seed: 3}
  space:
    objective.params.x: {uniform: [-5, 5]}
    objective.params.nested.y: {choice: [0.5, 1.0, 2.0]}
"""
VARIANTS = {
    "random": "",
    "grid": "tune: {search: {type: grid}, space: {objective.params.x: {grid: [1, 2, 3]}, "
    "objective.params.nested.y: null}}",
    "optuna": "tune: {search: {type: optuna, points_to_evaluate: [{objective.params.x: 3.0, objective.params.nested.y: "
    "0.5}]}}",
    "hyperopt": "tune: {search: {type: hyperopt}}",
    "bayesopt": "tune: {search: {type: bayesopt}, space: {objective.params.nested.y: {uniform: [0, 2]}}}",
    "asha_stop": "scheduler: {type: asha, grace_period: 2}\nstop: {when: ['loss <= 0.01'], all_when: ['loss<0.0001'], "
    "plateau: {metric: loss, std: 0.001}}",
    "hyperband": "scheduler: {type: hyperband}",
    "median": "scheduler: {type: median_stopping, grace_period: 2}",
    "pbt": "objective: {function: functions:population}\nscheduler: {type: pbt, perturbation_interval: 2, "
    "mutations: {objective.params.x: {uniform: [-5, 5]}}}",
    "pb2": "objective: {function: functions:population}\nscheduler: {type: pb2, perturbation_interval: 2, "
    "bounds: {objective.params.x: [-5, 5]}}",
    "unbounded": "objective: {max_steps: null}",
    "trainable": "objective: {function: null, trainable: functions:Climber, checkpoint_every: 2, "
    "checkpoint_at_end: false}",
    "trainable_pbt": "objective: {function: null, trainable: functions:Climber}\nscheduler: {type: pbt, "
    "perturbation_interval: 2, mutations: {objective.params.x: {uniform: [-5, 5]}}}",
    "conditional_optuna": "tune: {search: {type: optuna}, space: {objective.params.shape: {choice: [{kind: a, v: "
    "{uniform: [0, 1]}}, {kind: b, w: {randint: [1, 4]}}]}}}",
    "conditional_hyperopt": "tune: {search: {type: hyperopt}, space: {objective.params.nested.shape: {choice: "
    "[{kind: a, v: {loguniform: [0.001, 1]}}, {kind: b}]}}}",
    "gpu": "scaling: {use_gpu: true, resources_per_worker: {CPU: 2}}",
}


def runtime_env(module, address, storage):
    """What the compiled script hands ray.init (or a Ray Job) for `address` and the run storage path."""
    return module.specc_runtime.job_runtime_env(module.RUN, module.__file__, address, storage)


def write_case(directory, name: str) -> object:
    (directory / "functions.py").write_text(FUNCTION, encoding="utf-8")
    base = yaml.safe_load(BASE)
    for section, values in (yaml.safe_load(VARIANTS[name]) or {}).items():
        merged = {**base.get(section, {}), **values}
        if section == "tune":
            merged["space"] = {k: v for k, v in {**base["tune"]["space"], **values.get("space", {})}.items() if v}
        base[section] = merged
    path = directory / f"{name}.yaml"
    path.write_text(yaml.safe_dump(base, sort_keys=False), encoding="utf-8")
    return path


def script_of(path) -> types.ModuleType:
    script = types.ModuleType("compiled_objective")
    script.__file__ = str(path.parent / "objective_case.py")
    exec(compile(api.compile(api.load(path)), script.__file__, "exec"), script.__dict__)
    return script


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """Every variant compiled into one directory (one ruff run checks them all)."""
    directory = tmp_path_factory.mktemp("objectives")
    scripts = {}
    for name in VARIANTS:
        path = write_case(directory, name)
        source = api.compile(api.load(path), str(directory / f"{name}.py"))
        (directory / f"{name}_compiled.py").write_text(source, encoding="utf-8")
        scripts[name] = source
    return directory, scripts


def test_a_trainable_class_is_passed_to_the_tuner_with_its_checkpoint_settings(compiled):
    _, scripts = compiled
    source = scripts["trainable"]
    assert 'TRAINABLE = "functions:Climber"' in source and "OBJECTIVE" not in source
    assert "trainable = tune.with_resources(run.trainable(TRAINABLE), run.per_trial)" in source
    assert "checkpoint_config=tune.CheckpointConfig(\n" in source
    assert "checkpoint_frequency=2,\n" in source and "checkpoint_at_end=False,\n" in source
    assert "reuse_actors=specc_runtime.resets_config(trainable)," in source
    assert "checkpoint_frequency" not in scripts["random"] and "reuse_actors=True," in scripts["random"]


def test_every_variant_is_ruff_clean_and_formatted(compiled):
    directory, _ = compiled
    files = sorted(str(path) for path in directory.glob("*_compiled.py"))
    config = str(ROOT / "pyproject.toml")
    for args in (["check"], ["format", "--check"]):
        done = subprocess.run(
            [sys.executable, "-m", "ruff", *args, "--config", config, "--no-cache", *files],
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stdout + done.stderr


def test_the_script_imports_the_function_and_builds_a_tuner_over_it(compiled):
    source = compiled[1]["random"]
    assert 'OBJECTIVE = "functions:objective"' in source
    assert "tune.with_resources(run.objective(OBJECTIVE), run.per_trial)" in source  # imported in each trial
    assert "or tune.Tuner(\n            trainable," in source
    # only what this spec uses: no model, data, Train workers or epochs
    for absent in ("TorchTrainer", "ScalingConfig", "train_func", "import torch", "epoch"):
        assert absent not in source, absent


@pytest.mark.parametrize(
    ("variant", "present"),
    [
        ("grid", ["BasicVariantGenerator(", "tune.grid_search([1, 2, 3])", "def without_grids"]),
        ("optuna", ["OptunaSearch(", 'points_to_evaluate=[{"x": 3.0, "nested": {"y": 0.5}}]']),
        ("hyperopt", ["HyperOptSearch("]),
        ("bayesopt", ["BayesOptSearch(", '"y": tune.uniform(0.0, 2.0)']),
        ("asha_stop", ["ASHAScheduler(", "max_t=8", "stop=run.steps_stopper(make_stopper())"]),
        ("hyperband", ["HyperBandScheduler("]),
        ("median", ["MedianStoppingRule("]),
        ("pbt", ["PopulationBasedTraining(", '"x": tune.uniform(-5.0, 5.0),']),
        ("pb2", ["PB2(", 'hyperparam_bounds={"x": [-5.0, 5.0]}']),
        (
            "gpu",
            ['"per_trial": {"CPU": 2.0, "GPU": 1},', '"shape": "objective",'],  # --smoke: specc_runtime's
        ),
    ],
)
def test_each_searcher_and_scheduler_is_built_from_the_spec(compiled, variant, present):
    source = compiled[1][variant]
    for text in present:
        assert text in source, text


def test_search_space_is_params_with_domains_in_place(tmp_path):
    script = script_of(write_case(tmp_path, "random"))
    space = script.search_space()
    assert space["steps"] == 8 and space["nested"]["z"] == "keep"  # fixed params pass through
    assert type(space["x"]).__name__ == "Float" and type(space["nested"]["y"]).__name__ == "Categorical"
    assert script.CONFIG["nested"] == {"y": 1.0, "z": "keep"}  # the compiled CONFIG is not changed


def test_grid_smoke_takes_each_grids_first_value(tmp_path):
    script = script_of(write_case(tmp_path, "grid"))
    assert script.search_space()["x"] == {"grid_search": [1, 2, 3]}
    assert script.search_space(True)["x"] == 1


def test_stopper_counts_reports_and_max_steps_null_leaves_it_to_the_function(tmp_path):
    def stopper(script, smoke=False):  # as main() builds it: the runtime's count of steps, with the stop section's
        run = script.specc_runtime.Run(
            script.__file__, "s", ["--smoke"] if smoke else [], script.RESOLVED_SPEC, script.RUN
        )
        return run.steps_stopper(script.make_stopper() if hasattr(script, "make_stopper") else None)

    bounded = script_of(write_case(tmp_path, "random"))
    stop, smoke = stopper(bounded), stopper(bounded, smoke=True)
    assert not stop("t", {"training_iteration": 7}) and stop("t", {"training_iteration": 8})  # objective.max_steps
    assert smoke("t", {"training_iteration": 1})  # --smoke: one step
    unbounded = script_of(write_case(tmp_path, "unbounded"))
    assert stopper(unbounded) is None
    rules = script_of(write_case(tmp_path, "asha_stop"))
    stop = stopper(rules)
    assert not stop("t", {"loss": 0.5, "training_iteration": 3, "time_total_s": 1.0})
    assert stop("t", {"loss": 0.001, "training_iteration": 3, "time_total_s": 1.0})  # stop.when
    assert stop("t", {"loss": 0.5, "training_iteration": 8, "time_total_s": 1.0})  # max_steps
    assert not stop.stop_all()
    assert stop("t", {"loss": 0.00001, "training_iteration": 3, "time_total_s": 1.0}) and stop.stop_all()  # all_when


def test_ended_by_names_the_earliest_report_that_met_all_when(tmp_path):
    import pandas as pd

    script = script_of(write_case(tmp_path, "asha_stop"))

    def trial(name, losses, timestamps):
        history = pd.DataFrame(
            {"loss": losses, "training_iteration": range(1, len(losses) + 1), "timestamp": timestamps}
        )
        return types.SimpleNamespace(path=f"/runs/case/trial_{name}", metrics_dataframe=history, metrics={})

    late = trial("b", [0.5, 0.00005], [10, 20])
    early = trial("a", [0.3, 0.2, 0.00009], [11, 12, 13])
    assert script.ended_by([late, early]) == {"condition": "loss < 0.0001", "trial_id": "a", "training_iteration": 3}
    unreported = types.SimpleNamespace(metrics_dataframe=None, metrics={})
    assert script.ended_by([trial("c", [0.5, float("nan")], [1, 2]), unreported]) is None


def test_a_trial_that_went_back_is_judged_by_the_run_that_ended_it(tmp_path):
    """Tune's record of a trial keeps every run of it: here it reported steps 1-2, was paused and started again from
    the start (no checkpoint), reached step 3, went back again and was stopped at step 2. Its row and its history are
    that last run's: the step-3 loss of an abandoned run is not its best."""
    import pandas as pd

    script = script_of(write_case(tmp_path, "median"))
    steps, losses = [1, 2, 1, 2, 3, 1, 2], [10.0, 9.5, 10.0, 9.5, 9.25, 10.0, 9.5]
    history = pd.DataFrame({"training_iteration": steps, "loss": losses})
    trial = types.SimpleNamespace(
        path="/runs/case/trial_a", metrics_dataframe=history, metrics={"training_iteration": 2, "loss": 9.5},
        error=None, config={"steps": 8, "x": 0.0, "nested": {"y": 1.0, "z": "keep"}},
    )  # fmt: skip
    runtime, search = script.specc_runtime, script.RUN["search"]
    kept = runtime.history_of(trial)
    assert kept["training_iteration"].tolist() == [1, 2] and kept["loss"].tolist() == [10.0, 9.5]
    row = runtime.objective_row(trial, search)
    assert (row["status"], row["steps"], row["best_loss"], row["last_loss"]) == ("stopped", 2, 9.5, 9.5)
    # a retry from a checkpoint at step 2 repeats step 3 onwards: the steps before it stay
    history = pd.DataFrame({"training_iteration": [1, 2, 3, 4, 3, 4, 5], "loss": [7.0, 6.0, 5.0, 4.0, 5.5, 4.5, 3.5]})
    resumed = types.SimpleNamespace(metrics_dataframe=history, metrics={"training_iteration": 5, "loss": 3.5})
    assert runtime.history_of(resumed)["loss"].tolist() == [7.0, 6.0, 5.5, 4.5, 3.5]


def test_median_stopping_lets_a_trial_run_on_while_too_few_others_have_reached_its_step(tmp_path):
    """Ray's rule would pause the trial at step 2 for the one waiting, and a function without checkpoints would
    start again from step 1."""
    from ray.tune.experiment import Trial
    from ray.tune.schedulers import TrialScheduler

    scheduler = script_of(write_case(tmp_path, "median")).make_scheduler()
    scheduler.set_search_properties("loss", "min")
    running, waiting = Trial("objective", stub=True), Trial("objective", stub=True)
    assert waiting.status == Trial.PENDING
    controller = types.SimpleNamespace(get_live_trials=lambda: [running, waiting])
    decisions = [
        scheduler.on_trial_result(controller, running, {"training_iteration": step, "loss": 1.0 / step})
        for step in range(1, 9)
    ]
    assert decisions == [TrialScheduler.CONTINUE] * 8


def test_results_rows_name_spec_paths_and_best_yaml_is_a_one_trial_spec(tmp_path):
    script = script_of(write_case(tmp_path, "random"))
    runtime, search = script.specc_runtime, script.RUN["search"]
    config = {"steps": 8, "x": 2.5, "nested": {"y": 0.5, "z": "keep"}}
    sampled = runtime.objective_params(config, search["paths"])
    assert sampled == {"objective.params.x": 2.5, "objective.params.nested.y": 0.5}
    summary = {"trial_id": "abc", "metrics": {"loss": 0.75}, "config": sampled}
    text = runtime.objective_spec(summary, search, script.RESOLVED_SPEC)
    best = yaml.safe_load(text)
    assert best["objective"]["params"] == config
    assert best["tune"] == {"metric": "loss", "mode": "min", "num_samples": 1, "space": {}}
    assert "scheduler" not in best and best["name"] == "objective-case-best"
    best_path = tmp_path / "best.yaml"
    best_path.write_text(text, encoding="utf-8")
    assert api.load(best_path).objective.params == config  # a valid spec: specc run best.yaml runs it once


def test_plan_counts_steps_of_one_process_trials(tmp_path):
    report = api.plan_report(api.load(write_case(tmp_path, "asha_stop")), configs=2, machine={"CPU": 2})
    assert report["shape"] == "objective" and report["unit"] == "step"
    assert report["resources"]["per_trial"] == {"CPU": 1}
    assert report["budget"]["worst_case_worker_epochs"] == 3 * 8
    text = api.format_plan(report)
    assert "rungs at steps 2, 8" in text and "24 trial-steps = 3 trials x 8 steps" in text


def test_plan_samples_in_the_order_tune_meets_the_domains_in_the_nested_config():
    from specc.plan.trials import sampling_order

    params = {"b": {"q": 1, "p": 2}, "a": 0}
    paths = ["objective.params.a", "objective.params.new", "objective.params.b.p"]
    assert sampling_order(params, paths) == ["objective.params.b.p", "objective.params.a", "objective.params.new"]


def test_the_objectives_project_travels_to_a_cluster_and_submit_ships_it(tmp_path, monkeypatch, capsys):
    from specc import cli
    from specc.execute import submit

    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.delenv("RAY_JOB_CONFIG_JSON_ENV_VAR", raising=False)
    monkeypatch.chdir(tmp_path)
    path = write_case(tmp_path, "random")
    here = tmp_path / "script.py"
    module = types.ModuleType("objective_shipped")
    module.__file__ = str(here)
    exec(compile(api.compile(api.load(path), str(here)), str(here), "exec"), module.__dict__)
    assert runtime_env(module, None, str(tmp_path / "runs")) == {}  # a local Ray: the trials import from SPEC_DIR
    env = runtime_env(module, "10.0.0.1:6379", str(tmp_path / "runs"))
    assert env["working_dir"] == str(tmp_path) and module.SPEC_DIR_SHIPPED == "."
    # a trial on a node finds the function in the shipped copy (Ray puts it first on PYTHONPATH)
    monkeypatch.setenv("PYTHONPATH", "/tmp/ray/session/runtime_resources/working_dir_files/pkg")
    where = {"spec_dir": str(tmp_path), "spec_dir_shipped": "."}
    assert module.specc_runtime.spec_dir_on_node(where) == "/tmp/ray/session/runtime_resources/working_dir_files/pkg"

    monkeypatch.setattr(submit, "client", lambda address, timeout_s=None: pytest.fail("--dry-run contacted a cluster"))
    assert cli.main(["submit", str(path), "--dry-run"]) == 0
    shipped = capsys.readouterr().out
    assert "functions.py" in shipped and "random.yaml" in shipped


def test_hostile_params_stay_data(tmp_path):
    import ast

    hostile = {'"); import os; os.system("x") #': "\\'''\n\x00", "k": ['"""', "{eval: 1}"], "n": {"__import__": "os"}}
    path = write_case(tmp_path, "random")
    spec = yaml.safe_load(path.read_text(encoding="utf-8"))
    spec["objective"]["params"].update(hostile)
    path.write_text(yaml.safe_dump(spec), encoding="utf-8")
    source = api.compile(api.load(path))
    tree = ast.parse(source)
    config = next(node.value for node in tree.body if isinstance(node, ast.Assign) and node.targets[0].id == "CONFIG")
    assert ast.literal_eval(config) == spec["objective"]["params"]


def test_progress_lines_count_steps_and_show_the_sampled_params(tmp_path, capsys):
    """An objective search shows specc's lines, not Tune's status table: steps are the function's reports."""
    script = script_of(write_case(tmp_path, "asha_stop"))
    paths = script.RUN["search"]["paths"]
    run = script.specc_runtime.Run(script.__file__, "a search", [], script.RESOLVED_SPEC, script.RUN)
    run.run_dir = str(tmp_path / "run")
    run.show_trials()  # the progress lines as main() has the runtime build them
    progress = run.progress
    assert (progress.length, progress.rungs, progress.steps) == (8, script.RUNGS, True)
    progress.setup(total_num_samples=2)
    trial = types.SimpleNamespace(
        trial_id="a_00000", config={"steps": 8, "x": 2.5, "nested": {"y": 0.5}}, last_result=None, status="RUNNING"
    )
    progress.on_trial_start(0, [trial], trial)
    progress.on_trial_result(0, [trial], trial, {"training_iteration": 2, "loss": 1.5, "step": 1})
    trial.last_result, trial.status = {"training_iteration": 4, "loss": 0.75, "step": 3}, "TERMINATED"
    progress.on_trial_complete(0, [trial], trial)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("objective-case: [0/2] trial a_00000 started  x=2.5  y=0.5  elapsed ")
    # only the declared metrics (objective.metrics: [loss]), never Tune's own or undeclared ones
    assert lines[1].startswith("objective-case: [0/2] trial a_00000 step 2/8 (rung)  loss 1.5  elapsed")
    assert lines[2].startswith("objective-case: [1/2] trial a_00000 stopped early at step 4/8  loss 0.75  elapsed")
    other = script_of(write_case(tmp_path, "unbounded"))
    unbounded = other.specc_runtime.TrialProgress(other.RUN_NAME, None, other.REPORTED, paths, steps=True)
    unbounded.setup(total_num_samples=1)
    unbounded.on_trial_complete(0, [trial], trial)
    assert "finished at step 4  loss 0.75" in capsys.readouterr().out  # max_steps null: the function decides
