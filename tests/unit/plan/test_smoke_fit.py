"""Issue 48 item 2: a spec that does not fit this machine as written is a W340 (W341: fewer trials at once) from
`specc plan` and `specc run --dry-run`, before Ray starts, saying what --smoke will run instead and what a full run
needs; --smoke's fit (specc.plan.smoke) is the rule a compiled script's run applies to the Ray it runs on
(specc_runtime.smoke_fit)."""

from __future__ import annotations

import pytest

from specc import api
from specc.cli import Exit, main
from specc.plan.smoke import fit_warnings, smoke_plan
from specc.plan.trials import ray_cpu_count
from tests.conftest import MINIMAL

TWO_CPUS = {"CPU": 2, "GPU": 0}
TABLE = "dataset: {type: csv, path: rows.csv, label: y}\n"  # streams through Ray Data: 1 CPU for its reads
STREAMED = MINIMAL.replace("dataset: {type: digits}\n", TABLE)
TWO_BY_ONE = STREAMED + "scaling: {num_workers: 2, resources_per_worker: {CPU: 1}}\n"
SEARCH = "tune: {metric: val_loss, mode: min, num_samples: 3, space: {training.optimizer.lr: {choice: [0.1, 0.01]}}}\n"


def warnings_of(path, *overrides, machine=TWO_CPUS):
    return fit_warnings(api.load(path, list(overrides)), machine)


def test_two_workers_of_one_cpu_beside_ray_data_do_not_fit_two_cpus(write_spec):
    [problem] = warnings_of(write_spec(TWO_BY_ONE))
    assert (problem.code, problem.severity, problem.path, problem.line) == (
        "W340",
        "warning",
        "scaling.resources_per_worker",
        7,
    )
    assert problem.message == (
        "the run needs 3 CPU (2 workers x 1 CPU + 1 CPU for Ray Data's reads); this machine has 2 CPU: a full run "
        "here stops before training, since Ray Data would have no CPU to read with (E417); --smoke runs it with "
        "0.5 CPU a worker (the spec: 1)"
    )
    assert problem.hint == (
        "a full run needs a machine or cluster with 3 CPU (cluster.address); or, to run fully here, "
        "scaling.resources_per_worker: {CPU: 0.5}"
    )


def test_what_fits_is_not_warned_about(write_spec):
    assert warnings_of(write_spec(TWO_BY_ONE), machine={"CPU": 3, "GPU": 0}) == []
    assert warnings_of(write_spec(TWO_BY_ONE), "scaling.resources_per_worker={CPU: 0.5}") == []
    assert warnings_of(write_spec(MINIMAL + "scaling: {num_workers: 2}\n")) == []  # digits stay in memory
    joined = write_spec(TWO_BY_ONE + "cluster: {address: auto}\n")
    assert warnings_of(joined) == []  # a cluster's resources are known when the run joins it


def test_a_search_counts_one_trial_its_driver_and_ray_data(write_spec):
    [problem] = warnings_of(write_spec(TWO_BY_ONE + SEARCH))
    assert problem.message.startswith(
        "one trial needs 3.1 CPU (2 workers x 1 CPU + 0.1 CPU for the trial's driver + 1 CPU for Ray Data's reads)"
    )
    assert "a full run here is refused before training: no trial fits" in problem.message
    assert problem.message.endswith("--smoke runs it with 0.45 CPU a worker (the spec: 1)")
    one_process = write_spec(STREAMED + SEARCH + "scaling: {num_workers: 1, resources_per_worker: {CPU: 2}}\n")
    assert smoke_plan(api.load(one_process), TWO_CPUS).changes == ("1 CPU for the trial (the spec: 2)",)


def test_gpus_more_workers_and_data_cpus(write_spec):
    spec = write_spec(TWO_BY_ONE)
    [gpus] = warnings_of(spec, "scaling.use_gpu=true", "scaling.num_workers=4")
    assert gpus.message.startswith("the run needs 5 CPU (4 workers x 1 CPU + 1 CPU for Ray Data's reads) and 4 GPU;")
    assert gpus.message.endswith("--smoke runs it with 2 workers (the spec: 4), on CPU, 0.5 CPU a worker (the spec: 1)")
    assert gpus.hint == "a full run needs a machine or cluster with 5 CPU and 4 GPU (cluster.address)"
    wide = smoke_plan(api.load(spec, ["scaling.data_cpus=2"]), {"CPU": 3, "GPU": 0})
    assert wide.changes == ("Ray Data 1 CPU (scaling.data_cpus: 2)",) and wide.need.data == 1
    single = smoke_plan(api.load(spec), {"CPU": 1, "GPU": 0})
    assert not single.fits  # Ray Data's tasks each take a whole CPU: nothing is left for the workers


def test_max_concurrent_trials_beyond_this_machine(write_spec):
    spec = write_spec(MINIMAL + SEARCH.replace("num_samples: 3", "num_samples: 3, max_concurrent_trials: 3"))
    [problem] = warnings_of(spec)
    assert (problem.code, problem.path) == ("W341", "tune.max_concurrent_trials")
    assert problem.message == (
        "3 trials at once, 1 CPU each, need 3 CPU; this machine (2 CPU) holds 2 at once: the search runs 2 at a time "
        "(--smoke: one trial)"
    )
    assert warnings_of(spec, machine={"CPU": 3, "GPU": 0}) == []


def test_plan_and_dry_run_warn_on_stderr_and_exit_0(write_spec, capsys, monkeypatch):
    monkeypatch.setattr("specc.plan.trials.local_resources", lambda: dict(TWO_CPUS))
    spec = write_spec(TWO_BY_ONE)
    assert main(["plan", str(spec)]) == Exit.OK
    captured = capsys.readouterr()
    assert "warning[W340]: scaling.resources_per_worker: the run needs 3 CPU" in captured.err
    assert "hint: a full run needs a machine or cluster with 3 CPU" in captured.err
    assert "W340" not in captured.out and captured.out.startswith("tiny: one torch training run")
    assert main(["plan", str(spec), "--format", "json"]) == Exit.OK
    assert "warning[W340]" in capsys.readouterr().err
    assert main(["run", str(spec), "--dry-run"]) == Exit.OK
    assert "warning[W340]" in capsys.readouterr().err
    assert main(["run", str(spec), "--dry-run", "--address", "auto"]) == Exit.OK
    assert "W340" not in capsys.readouterr().err


def test_a_local_ray_counts_a_containers_cpus(tmp_path, monkeypatch):
    monkeypatch.delenv("RAY_USE_MULTIPROCESSING_CPU_COUNT", raising=False)
    files = {name: str(tmp_path / name) for name in ("quota", "period", "cpuset", "max")}
    assert ray_cpu_count(files) == ray_cpu_count({name: str(tmp_path / "none") for name in files})
    (tmp_path / "max").write_text("150000 100000\n")  # cgroup v2: 1.5 CPUs, truncated as Ray does
    assert ray_cpu_count(files) == 1
    (tmp_path / "max").write_text("max 100000\n")
    (tmp_path / "cpuset").write_text("0-2,5\n")
    assert ray_cpu_count(files) == 4
    (tmp_path / "quota").write_text("300000\n")
    (tmp_path / "period").write_text("100000\n")
    assert ray_cpu_count(files) == 3  # the smaller of the quota and the cpuset


# -- the compiled script's run applies the plan's rule (specc_runtime.smoke_fit) -----------------------------------


def compiled_run(path, *overrides) -> dict:
    """The compiled script's RUN: what it tells specc_runtime.Run about itself (its shape, scaling, Ray Data)."""
    import types

    source = api.compile(api.load(path, list(overrides)))
    module = types.ModuleType("smoke_script")
    module.__file__ = str(path.parent / "smoke_script.py")
    exec(compile(source, module.__file__, "exec"), module.__dict__)
    return module.RUN


@pytest.mark.parametrize(
    ("scaling", "cpus"),
    [
        ("{num_workers: 2, resources_per_worker: {CPU: 1}}", 2),
        ("{num_workers: 2, resources_per_worker: {CPU: 1}}", 3),
        ("{num_workers: 2, resources_per_worker: {CPU: 1}, data_cpus: 2}", 3),
        ("{num_workers: 4, use_gpu: true}", 2),
        ("{num_workers: 3, resources_per_worker: {CPU: 2}}", 5),
        ("{num_workers: 1, resources_per_worker: {CPU: 2}}", 2),  # a search: one Tune function trainable a trial
    ],
)
@pytest.mark.parametrize("search", ["", SEARCH])
def test_the_script_fits_as_the_plan_says(write_spec, capsys, monkeypatch, scaling, cpus, search):
    """--smoke as specc_runtime.Run applies it to the script's RUN (smoke_capped, then smoke_fit onto the Ray it runs
    on, a cluster of `cpus` stood in for): the CPUs a worker gets, Ray Data's and the changes said, as the plan's."""
    import specc_runtime

    spec = write_spec(STREAMED + search + f"scaling: {scaling}\n")
    expected = smoke_plan(api.load(spec), {"CPU": cpus})
    run = compiled_run(spec)
    monkeypatch.setattr(specc_runtime.ray, "cluster_resources", lambda: {"CPU": float(cpus), "memory": 8e9})
    _config, capped, changes = specc_runtime.smoke_capped(run["config"], run["scaling"])
    shape, beside, streams = run.get("shape", "train"), run.get("driver_cpu", 0.0), run.get("streams", False)
    fitted, asked = specc_runtime.smoke_fit(capped, run.get("data_cpus"), False, shape, beside, streams, changes)
    assert specc_runtime.worker_resources(fitted)["CPU"] == pytest.approx(expected.per_worker_cpu)
    assert (asked or 1) == expected.need.data
    line = capsys.readouterr().out
    assert line.startswith("--smoke: ") and line.count("\n") == 1
    assert all(change.split(" (")[0] in line for change in expected.changes)
