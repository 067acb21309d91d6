"""`specc plan`: trial counts, resources and fit, scheduler rungs (against Ray's own schedulers), budgets, the
command line's text and JSON, exit codes."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from specc import api
from specc.cli import Exit, main
from specc.plan.sampling import sample_configs
from specc.plan.trials import asha_rungs, hyperband_brackets, perturbation_epochs, train_worker_resources
from specc.spec.scheduler import Asha, HyperBand
from tests.conftest import MINIMAL, ROOT

TWO_CPUS = {"CPU": 2, "GPU": 0}
TUNE = MINIMAL + (
    "tune:\n  metric: val_accuracy\n  mode: max\n  num_samples: 3\n  search: {type: random, seed: 4}\n"
    "  space: {training.optimizer.lr: {loguniform: [1.0e-4, 0.1]}, dataset.batch_size: {grid: [16, 32]}}\n"
)


def plan(path, *overrides, machine=TWO_CPUS, configs=5) -> dict:
    return api.plan_report(api.load(path, list(overrides)), configs=configs, machine=machine)


@pytest.mark.parametrize(
    ("spec", "count"),
    [
        ("digits_asha", 16),  # 8 samples x 2 batch sizes
        ("synthetic_classification_grid", 12),  # 3 x 2 x 2, one sample
        ("digits_cnn_hyperband", 4),
        ("iris_optuna", 16),  # a Searcher is asked num_samples times
        ("digits_mlp", 1),  # no tune: one run
    ],
)
def test_trial_counts_of_the_example_specs(spec, count):
    assert plan(ROOT / "specs" / f"{spec}.yaml")["trials"]["count"] == count


def test_points_to_evaluate_use_up_samples(write_spec):
    spec = write_spec(TUNE.replace("seed: 4}", "seed: 4, points_to_evaluate: [{dataset.batch_size: 16}]}"))
    trials = plan(spec)["trials"]
    assert (trials["count"], trials["points_to_evaluate"]) == (1 + 2 * 2, 1)


# -- resources and fit ---------------------------------------------------------------------------------------------


def test_a_tune_trial_is_one_process_and_as_many_run_as_fit(write_spec):
    report = plan(write_spec(TUNE), machine={"CPU": 4, "GPU": 0})
    assert report["shape"] == "tune"
    assert report["resources"]["per_trial"] == {"CPU": 1}
    assert (report["fit"]["at_once"], report["fit"]["limited_by"]) == (4, "resources")
    capped = plan(write_spec(TUNE.replace("num_samples: 3", "num_samples: 3\n  max_concurrent_trials: 3")))
    assert capped["fit"]["at_once"] == 2  # two CPUs: max_concurrent_trials 3 is not reached
    gpu = plan(write_spec(TUNE + "scaling: {use_gpu: true}\n"), machine={"CPU": 4, "GPU": 3})
    assert gpu["resources"]["per_trial"] == {"GPU": 1}  # what one Train worker reserves: Ray's rule, no CPU
    assert (gpu["fit"]["at_once"], gpu["fit"]["limited_by"]) == (3, "resources")


def test_a_tune_train_trial_is_its_driver_plus_its_workers(write_spec):
    spec = write_spec(TUNE + "scaling: {num_workers: 2, resources_per_worker: {CPU: 1}}\n")
    report = plan(spec, machine={"CPU": 6.3, "GPU": 0})
    assert report["shape"] == "tune_train"
    assert report["resources"]["per_trial"] == {"CPU": 2.1}
    assert report["fit"]["at_once"] == 3  # 6.3 / 2.1 in Ray's fixed point, not 2.9999999999999996
    assert not plan(spec)["fit"]["fits"]  # 2.1 CPUs on a 2-CPU machine


def test_streaming_data_keeps_cpus_for_ray_data_beside_the_trials(write_spec):
    table = "dataset: {type: csv, path: rows.csv, label: y}\n"
    spec = write_spec(TUNE.replace("dataset: {type: digits}\n", "") + table)
    report = plan(spec, machine={"CPU": 4, "GPU": 0})
    assert (report["fit"]["data_cpus"], report["fit"]["at_once"]) == (1, 3)  # 4 CPUs: 3 trials + Ray Data's 1
    assert "3 trials at once (as many as fit) beside 1 CPU for Ray Data's reads" in api.format_plan(report)
    wider = plan(spec, "scaling.data_cpus=2", machine={"CPU": 4, "GPU": 0})
    assert wider["fit"]["at_once"] == 2 and wider["fit"]["available"] == {"CPU": 4, "GPU": 0}
    held = plan(write_spec(MINIMAL.replace("dataset: {type: digits}\n", "") + table + "scaling: {num_workers: 2}\n"))
    assert not held["fit"]["fits"]  # 2 workers of 1 CPU leave Ray Data nothing on 2 CPUs
    assert "it needs 2 CPU beside 1 CPU for Ray Data's reads, so the run cannot start" in api.format_plan(held)
    assert plan(write_spec(TUNE))["fit"]["data_cpus"] is None  # digits stay in memory


def test_when_no_trial_fits_the_plan_says_so(write_spec, capsys, monkeypatch):
    spec = write_spec(TUNE + "scaling: {resources_per_worker: {CPU: 64}}\n")
    fit = plan(spec)["fit"]
    assert (fit["fits"], fit["at_once"], fit["short"]) == (False, 0, {"CPU": 64})
    monkeypatch.setattr("specc.plan.trials.local_resources", lambda: dict(TWO_CPUS))
    assert main(["plan", str(spec)]) == Exit.OK
    out = capsys.readouterr().out
    assert "NO TRIAL FITS on this machine (2 CPU, 0 GPU): a trial needs 64 CPU, so the run cannot start" in out


def test_a_train_run_in_local_mode_runs_in_the_driver(write_spec):
    report = plan(write_spec(MINIMAL + "scaling: {num_workers: 0}\n"))
    assert (report["shape"], report["resources"]["per_trial"], report["fit"]["fits"]) == ("train", {"CPU": 1}, True)
    gpus = plan(write_spec(MINIMAL + "scaling: {num_workers: 2, use_gpu: true}\n"))
    assert gpus["resources"]["per_trial"] == {"GPU": 2}  # Ray's default GPU worker reserves no CPU
    assert gpus["fit"]["short"] == {"GPU": 2}


def test_an_attached_cluster_is_checked_when_the_run_starts(write_spec, capsys):
    spec = write_spec(TUNE + "cluster: {address: auto}\n")
    fit = plan(spec)["fit"]
    assert fit == {"where": "cluster", "address": "auto", "available": None, "at_once": None, "fits": None} | {
        "limited_by": None,
        "short": {},
        "unchecked": [],
    }
    main(["plan", str(spec)])
    assert "Ray at auto: the cluster's resources are checked when the run starts" in capsys.readouterr().out


@pytest.mark.parametrize(
    "scaling",
    [
        {"num_workers": 2},
        {"num_workers": 2, "use_gpu": True},
        {"num_workers": 1, "use_gpu": True, "resources_per_worker": {"CPU": 2}},
        {"num_workers": 1, "use_gpu": True, "resources_per_worker": {"CPU": 0, "GPU": 0.5}},
        {"num_workers": 3, "use_gpu": True, "accelerator_type": "A100"},
    ],
)
def test_train_workers_reserve_what_ray_scaling_config_reserves(scaling):
    from ray.train import ScalingConfig

    from specc.spec.scaling import Scaling

    expected = ScalingConfig(**scaling)._resources_per_worker_not_none
    assert train_worker_resources(Scaling.model_validate(scaling)) == expected


# -- schedulers ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("max_t", "grace_period", "reduction_factor", "brackets"),
    [(20, 1, 3, 1), (100, 1, 4, 1), (27, 1, 3, 3), (81, 3, 3, 2), (10, 2, 2.5, 3), (9, 9, 2, 2), (64, 1, 2, 4)],
)
def test_asha_rungs_are_ray_asha_schedulers(max_t, grace_period, reduction_factor, brackets):
    from ray.tune.schedulers import ASHAScheduler

    asha = Asha(
        type="asha", max_t=max_t, grace_period=grace_period, reduction_factor=reduction_factor, brackets=brackets
    )
    ray_asha = ASHAScheduler(
        max_t=max_t, grace_period=grace_period, reduction_factor=float(reduction_factor), brackets=brackets
    )
    expected = [[milestone for milestone, _ in reversed(bracket._rungs)] for bracket in ray_asha._brackets]
    assert asha_rungs(asha) == expected


@pytest.mark.parametrize(("max_t", "eta", "trials"), [(9, 3, 4), (20, 3, 30), (81, 3, 150), (16, 2, 40), (5, 4, 9)])
def test_hyperband_brackets_are_ray_hyperband_schedulers(max_t, eta, trials):
    """Ray's scheduler is given the trials one by one, then each bracket is halved as Ray halves it."""
    from ray.tune.schedulers import HyperBandScheduler

    scheduler = HyperBandScheduler(metric="score", mode="max", max_t=max_t, reduction_factor=float(eta))
    for _ in range(trials):
        scheduler.on_trial_add(None, object())
    expected = []
    for band, brackets in enumerate(scheduler._hyperbands):
        for bracket in filter(None, brackets):  # None: a bracket Ray skipped because its first rung is epoch 0
            s, rungs = bracket._halves, [{"epoch": bracket._r, "trials": len(bracket._live_trials)}]
            for _ in range(s):
                bracket._live_trials = {trial: {"score": i} for i, trial in enumerate(bracket._live_trials)}
                good, _bad = bracket.successive_halving("score", 1.0)
                bracket._live_trials = {trial: None for trial in good}
                rungs.append({"epoch": bracket._r, "trials": len(good)})
            trials_in = len(bracket._all_trials)
            expected.append({"band": band, "bracket": s, "trials": trials_in, "size": bracket._n0, "rungs": rungs})
    planned = hyperband_brackets(HyperBand(type="hyperband", max_t=max_t, reduction_factor=eta), trials)
    assert planned == expected


def test_pbt_perturbs_every_interval_after_burn_in():
    assert perturbation_epochs(interval=2, burn_in=0, epochs=7) == [2, 4, 6]
    assert perturbation_epochs(interval=2, burn_in=3, epochs=9) == [3, 5, 7, 9]
    assert perturbation_epochs(interval=4, burn_in=1, epochs=3) == []


def test_plan_shows_what_keep_in_bounds_clips(write_spec):
    """The clips the compiled keep_in_bounds applies after each pbt perturbation, the same list (pbt_clips), in the
    JSON and the text; none for pb2 (it explores within its bounds) or where no bound can be crossed."""
    report = plan(ROOT / "specs" / "digits_pbt.yaml")
    why = "0 <= dropout < 1: at most 0.3, the top of its range"
    assert report["scheduler"]["keep_in_bounds"] == [{"path": "model.dropout", "low": None, "high": 0.3, "why": why}]
    text = api.format_plan(report)
    assert f"keep_in_bounds after each perturbation: model.dropout ({why})" in text
    script = api.compile(api.load(ROOT / "specs" / "digits_pbt.yaml"))
    assert 'config["model.dropout"] = min(config["model.dropout"], 0.3)' in script
    lr_only = plan(ROOT / "specs" / "digits_pbt.yaml", "scheduler.mutations={training.optimizer.lr: [0.01, 0.1]}")
    assert lr_only["scheduler"]["keep_in_bounds"] == []  # a plain list: categorical, never multiplied
    assert "keep_in_bounds" not in api.format_plan(lr_only)
    assert plan(ROOT / "specs" / "digits_pb2.yaml")["scheduler"]["keep_in_bounds"] == []


def test_scheduler_budgets():
    asha = plan(ROOT / "specs" / "digits_asha.yaml")
    assert asha["scheduler"]["brackets"] == [[1, 3, 9]]
    assert asha["budget"]["worst_case_worker_epochs"] == 16 * 20
    assert asha["budget"]["asha_expected_worker_epochs"] == round(16 * (1 + 2 / 3 + 6 / 9 + 11 / 27))
    hyperband = plan(ROOT / "specs" / "digits_cnn_hyperband.yaml")
    assert [b["rungs"] for b in hyperband["scheduler"]["brackets"]] == [
        [{"epoch": 9, "trials": 3}],
        [{"epoch": 3, "trials": 1}, {"epoch": 9, "trials": 1}],
    ]
    assert hyperband["budget"]["hyperband_worker_epochs"] == 3 * 9 + 1 * 9


def test_budgets_stop_at_the_last_epoch_when_max_t_is_beyond_it(write_spec):
    """max_t 12 over 6 epochs (W330): Ray keeps its rungs, but no trial trains past epoch 6."""
    spec = MINIMAL.replace("{epochs: 2}", "{epochs: 6}") + "tune: {metric: val_loss, mode: min, num_samples: 8}\n"
    asha = plan(write_spec(spec + "scheduler: {type: asha, max_t: 12, reduction_factor: 2}\n"))
    assert asha["scheduler"]["brackets"] == [[1, 2, 4, 8]]  # Ray's rungs, as ASHAScheduler(max_t=12) has them
    assert asha["budget"]["asha_worst_case_worker_epochs"] == asha["budget"]["worst_case_worker_epochs"] == 8 * 6
    assert asha["budget"]["asha_expected_worker_epochs"] == round(8 * (1 + 1 / 2 + 2 / 4 + 2 / 8))
    hyperband = plan(write_spec(spec + "scheduler: {type: hyperband, max_t: 12}\n"))
    assert [b["rungs"] for b in hyperband["scheduler"]["brackets"]][1] == [
        {"epoch": 4, "trials": 5},
        {"epoch": 12, "trials": 2},
    ]
    assert hyperband["budget"]["hyperband_worker_epochs"] == 3 * 6 + (5 * 4 + 2 * 2)


def test_stop_rules_in_the_budget(capsys, monkeypatch):
    """specs/digits_stop_all.yaml: training_iteration >= 2 caps each trial at 2 epochs; all_when is named."""
    report = plan(ROOT / "specs" / "digits_stop_all.yaml")
    assert report["budget"]["stop_when_epochs"] == 2
    assert report["budget"]["stop_when_worker_epochs"] == 4 * 2 * 1
    assert report["budget"]["all_when"] == ["val_accuracy >= 0.8"]
    monkeypatch.setattr("specc.plan.trials.local_resources", lambda: dict(TWO_CPUS))
    assert main(["plan", str(ROOT / "specs" / "digits_stop_all.yaml")]) == 0
    out = capsys.readouterr().out
    assert "stop.when: at most 8 (training_iteration: 2 epochs a trial)" in out
    assert "stop.all_when val_accuracy >= 0.8 ends the whole search sooner if a trial meets it" in out
    assert "stop_when_epochs" not in plan(ROOT / "specs" / "digits_asha.yaml")["budget"]


# -- command line --------------------------------------------------------------------------------------------------


def test_text_report(capsys, monkeypatch):
    monkeypatch.setattr("specc.plan.trials.local_resources", lambda: dict(TWO_CPUS))
    assert main(["plan", str(ROOT / "specs" / "digits_asha.yaml"), "--configs", "2"]) == Exit.OK
    lines = capsys.readouterr().out.splitlines()
    assert lines[:7] == [
        "digits-asha: 16 trials, each one Tune function trainable (no Train worker group)",
        "  search     random, seed 7: 8 samples x 2 grid combinations = 16 trials",
        "             Ray's BasicVariantGenerator: each sample drawn at random, every grid value combined with it",
        "             grid: dataset.batch_size (2)",
        "  per trial  1 CPU (one process)",
        "  fit        this machine (2 CPU, 0 GPU): 2 trials at once (as many as fit)",
        "  scheduler  asha (max_t 20, grace_period 1, reduction_factor 3): rungs at epochs 1, 3, 9",
    ]
    space = ["training.optimizer.lr", "training.optimizer.momentum", "model.hidden_sizes", "dataset.batch_size"]
    assert lines[-3].split() == ["#", *space]
    assert lines[-2].split()[0] == "1" and lines[-1].split()[0] == "2"
    assert len(lines) <= 30


def test_text_report_of_one_training_run(write_spec, capsys, monkeypatch):
    monkeypatch.setattr("specc.plan.trials.local_resources", lambda: {"CPU": 8, "GPU": 0})
    assert main(["plan", str(write_spec(MINIMAL + "scaling: {num_workers: 3}\n"))]) == Exit.OK
    assert capsys.readouterr().out.splitlines() == [
        "tiny: one torch training run (no tune section)",
        "  resources  3 CPU = 3 workers x 1 CPU",
        "  fit        this machine (8 CPU, 0 GPU): the run fits",
        "  budget     6 worker-epochs = 2 epochs x 3 workers",
    ]


def test_the_headline_names_what_each_objective_trial_runs(capsys):
    for spec, runs in [
        ("objective_optuna.yaml", "the objective function factories.objectives:easy_objective"),
        ("objective_trainable.yaml", "the Trainable class factories.objectives:PBTBenchmark"),
    ]:
        assert main(["plan", str(ROOT / "specs" / spec), "--format", "json"]) == Exit.OK
        report = json.loads(capsys.readouterr().out)
        kind = "trainable" if "Trainable" in runs else "function"
        assert report["objective"] == {kind: runs.rpartition(" ")[2]}
        assert main(["plan", str(ROOT / "specs" / spec)]) == Exit.OK
        assert f" trials of {runs}, each in one process" in capsys.readouterr().out.splitlines()[0]


def test_json_report(capsys):
    spec = ROOT / "specs" / "digits_asha.yaml"
    assert main(["plan", str(spec), "--format", "json", "--configs", "3", "--set", "tune.num_samples=2"]) == Exit.OK
    report = json.loads(capsys.readouterr().out)
    sections = {"name", "framework", "shape", "trials", "resources", "fit", "scheduler", "budget", "configs", "unit"}
    assert set(report) == sections | {"objective"} and report["objective"] is None  # a model search runs no objective
    assert report["trials"]["count"] == 4
    assert report["configs"]["values"] == sample_configs(api.load(spec, ["tune.num_samples=2"]).tune, 3)
    assert report["configs"]["of"] == 4


def test_configs_that_cannot_be_known_are_not_invented(write_spec):
    unseeded = plan(write_spec(TUNE.replace(", seed: 4", "")))["configs"]
    assert unseeded == {"values": [], "of": 6, "note": unseeded["note"]} and "seed is not set" in unseeded["note"]
    optuna = plan(ROOT / "specs" / "iris_optuna.yaml")["configs"]
    assert optuna["values"] == [] and optuna["note"] == "chosen by optuna at run time"


def test_a_spec_with_problems_prints_them_and_exits_1(write_spec, capsys):
    spec = write_spec(MINIMAL.replace("hidden_sizes", "hiden_sizes"))
    assert main(["plan", str(spec)]) == Exit.PROBLEMS
    captured = capsys.readouterr()
    assert captured.out == "" and "error[E101]: model.hiden_sizes" in captured.err


def test_usage_errors_exit_2(write_spec, capsys):
    assert main(["plan", str(write_spec(TUNE)), "--configs", "-1"]) == Exit.USAGE
    assert "--configs must be 0 or more" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_:
        main(["plan", str(write_spec(TUNE)), "--format", "yaml"])
    assert exit_.value.code == Exit.USAGE


def test_the_readme_plan_lines_are_what_specc_prints():
    text = (ROOT / "README.md").read_text()
    command, *shown = re.search(r"<!-- plan-output -->\s*```console\n\$ (.+?)```", text, re.S).group(1).splitlines()
    done = subprocess.run(
        [sys.executable, "-m", "specc", *command.split()[1:]], capture_output=True, text=True, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    printed = done.stdout.splitlines()
    assert shown and all(line in printed for line in shown)
