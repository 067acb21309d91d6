"""specc_runtime's command line and --smoke, called as a module with Ray's cluster_resources() stood in for: --smoke
caps the run (1 epoch of 3 batches, at most 2 workers, on CPU) before it meets a Ray, then fits it onto that Ray's
CPUs, saying what it changed in one line. The same rule as specc plan's (tests/unit/plan/test_smoke_fit.py compares
them spec by spec)."""

from __future__ import annotations

import pytest
import specc_runtime

CONFIG = {"training": {"epochs": 20, "optimizer": {"lr": 0.1}}, "model": {"type": "mlp"}}


def scaling(workers=2, gpu=False, per_worker=None, **more):
    return {"num_workers": workers, "use_gpu": gpu, "resources_per_worker": per_worker, **more}


@pytest.fixture
def cluster(monkeypatch):
    """cluster(**resources): the Ray the run would run on, as ray.cluster_resources() gives it."""

    def have(**resources):
        monkeypatch.setattr(specc_runtime.ray, "cluster_resources", lambda: dict(resources))

    return have


def test_the_command_line_of_a_training_run_and_of_a_search():
    args = specc_runtime.parse_args([], "a run", address="auto", storage_path="./experiments")
    assert (args.address, args.storage_path, args.resume, args.force, args.quiet, args.verbose, args.smoke) == (
        "auto",
        "./experiments",  # run.storage_path
        False,
        False,
        False,
        False,
        False,
    )
    argv = ["--address", "10.0.0.1:6379", "--storage-path", "s3://b/runs", "--resume", "--force", "--quiet", "--smoke"]
    args = specc_runtime.parse_args(argv, "a search", shape="tune")
    assert (args.address, args.storage_path, args.resume, args.force, args.quiet, args.smoke) == (
        "10.0.0.1:6379",
        "s3://b/runs",
        True,
        True,
        True,
        True,
    )


@pytest.mark.parametrize(
    ("shape", "said"),
    [("train", "1 epoch, a few batches"), ("tune", "1 trial, 1 epoch"), ("objective", "1 trial, 1 step, CPU only")],
)
def test_help_says_what_smoke_runs(shape, said, capsys):
    with pytest.raises(SystemExit):
        specc_runtime.parse_args(["--help"], "the experiment's first line", shape=shape)
    out = capsys.readouterr().out
    assert "the experiment's first line" in out and said in " ".join(out.split())
    assert "(default: ./runs)" in " ".join(out.split())  # the spec's run.storage_path, as it is


def test_smoke_caps_epochs_batches_workers_and_gpus_before_ray():
    config, capped, changes = specc_runtime.smoke_capped(CONFIG, scaling(4, gpu=True, per_worker={"CPU": 1, "GPU": 1}))
    assert config["training"] == {"epochs": 1, "max_batches": 3, "optimizer": {"lr": 0.1}}
    assert CONFIG["training"]["epochs"] == 20  # the experiment's own config stays as it is
    assert capped == scaling(2, per_worker={"CPU": 1})
    assert changes == ["2 workers (the spec: 4)", "on CPU"]


def test_smoke_changes_only_what_it_must():
    _, capped, changes = specc_runtime.smoke_capped(CONFIG, scaling(1, per_worker={"CPU": 2}))
    assert (capped, changes) == (scaling(1, per_worker={"CPU": 2}), [])
    _, capped, changes = specc_runtime.smoke_capped(CONFIG, scaling(2, gpu=True, accelerator_type="A100"))
    assert capped == scaling(2) and changes == ["on CPU", "no accelerator_type"]
    assert specc_runtime.worker_resources(capped) == {"CPU": 1}


def test_a_run_that_fits_says_only_what_smoke_capped(cluster, capsys):
    cluster(CPU=8.0)
    fitted, asked = specc_runtime.smoke_fit(scaling(2), None, quiet=False, capped=["2 workers (the spec: 4)"])
    assert (fitted, asked) == (scaling(2), None)
    assert capsys.readouterr().out == "--smoke: 1 epoch of at most 3 batches, 2 workers (the spec: 4)\n"
    specc_runtime.smoke_fit(scaling(2), None, quiet=True)
    assert capsys.readouterr().out == ""  # --quiet


def test_workers_share_the_cpus_the_cluster_has(cluster, capsys):
    cluster(CPU=3.0)
    fitted, _ = specc_runtime.smoke_fit(scaling(2, per_worker={"CPU": 2.0}), None, quiet=False)
    assert fitted["resources_per_worker"] == {"CPU": 1.5}
    assert capsys.readouterr().out == (
        "--smoke: 1 epoch of at most 3 batches, 1.5 CPU a worker (the spec: 2), within the cluster's 3 CPUs\n"
    )


def test_ray_data_keeps_a_cpu_beside_the_workers(cluster, capsys):
    cluster(CPU=2.0)
    fitted, asked = specc_runtime.smoke_fit(scaling(2, per_worker={"CPU": 1.0}), None, quiet=False, streams=True)
    assert fitted["resources_per_worker"] == {"CPU": 0.5} and asked is None
    assert "0.5 CPU a worker (the spec: 1), so that Ray Data keeps 1 of the cluster's 2 CPUs" in capsys.readouterr().out
    cluster(CPU=3.0)
    fitted, asked = specc_runtime.smoke_fit(scaling(2, per_worker={"CPU": 1.0}), 2.0, quiet=False, streams=True)
    assert asked is None and fitted["resources_per_worker"] == {"CPU": 1.0}  # data_cpus falls back to Ray Data's 1
    assert "Ray Data 1 CPU (scaling.data_cpus: 2)" in capsys.readouterr().out


def test_no_cpu_beside_ray_data_is_a_data_problem(cluster):
    cluster(CPU=1.0)
    with pytest.raises(specc_runtime.DataProblem) as problem:
        specc_runtime.smoke_fit(scaling(2), None, quiet=True, streams=True)
    assert problem.value.field == "scaling.resources_per_worker" and "Ray Data needs a whole CPU" in str(problem.value)


def test_a_search_fits_one_trials_process_and_its_driver(cluster, capsys):
    cluster(CPU=2.0)
    fitted, _ = specc_runtime.smoke_fit(scaling(1, per_worker={"CPU": 4.0}), None, quiet=False, shape="tune")
    assert fitted["resources_per_worker"] == {"CPU": 2.0}
    assert capsys.readouterr().out == (
        "--smoke: 1 trial, 1 epoch of at most 3 batches, "
        "2 CPU for the trial (the spec: 4), within the cluster's 2 CPUs\n"
    )
    fitted, _ = specc_runtime.smoke_fit(scaling(2), None, quiet=True, shape="tune_train", beside=0.1)
    assert fitted["resources_per_worker"] == {"CPU": 0.95}  # (2 - 0.1 for the trial's driver) / 2 workers


def test_resources_the_cluster_lacks_are_dropped(cluster, capsys):
    cluster(CPU=4.0, memory=8e9)
    wanted = scaling(2, per_worker={"CPU": 1.0, "TPU": 1.0, "memory": 1e9})
    fitted, _ = specc_runtime.smoke_fit(wanted, None, quiet=False)
    assert fitted["resources_per_worker"] == {"CPU": 1.0, "memory": 1e9}
    assert "no TPU" in capsys.readouterr().out


def test_local_mode_runs_in_this_process(cluster, capsys):
    """num_workers: 0: the training runs in the driver, which holds no Ray CPU; Ray Data still needs one."""
    cluster(CPU=1.0)
    fitted, asked = specc_runtime.smoke_fit(scaling(0), 2.0, quiet=False, streams=True)
    assert (fitted, asked) == (scaling(0), None)
    assert "Ray Data 1 CPU (scaling.data_cpus: 2; the cluster has 1)" in capsys.readouterr().out


def test_an_objective_trial_runs_on_cpu_within_the_cluster(cluster, capsys):
    cluster(CPU=2.0)
    assert specc_runtime.objective_smoke_fit({"CPU": 4.0, "GPU": 1.0}, quiet=False) == {"CPU": 2.0}
    assert capsys.readouterr().out == (
        "--smoke: 1 trial, 1 step, on CPU, 2 CPU for the trial (the spec: 4), the cluster's\n"
    )
    assert specc_runtime.objective_smoke_fit({"GPU": 1.0}, quiet=True) == {"CPU": 1.0}  # Ray's default task
