"""Every example spec that compiles also trains: a --smoke run of each on the session's local Ray.

Run in Ray Train's local mode (num_workers 0, in this process) to keep the suite quick, torch and tensorflow
examples alike; the distributed paths are covered by test_distributed_digits, test_tensorflow and the other
e2e tests. The FashionMNIST and CIFAR-10 examples need their
data sets on disk (test_data_sources and test_keras_dataset write them in the real formats and train on them); the
examples in COVERED are trained from their own file by the test each names.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from specc import api
from specc.compiler.tune_fragments import option_columns
from specc.execute.run import run
from specc.spec.errors import UsageError

# CI runs this module in turn (share 3, tests/e2e/conftest.py): tests/unit compiles every example on every run
pytestmark = [pytest.mark.slow, pytest.mark.in_turn(3)]
ROOT = Path(__file__).resolve().parents[2]
NEEDS_DATA = {"fashion_mnist_resnet18.yaml", "cifar10_keras_cnn.yaml"}
# Trained from the file itself by another e2e test, on Ray Train workers or as a search: a smoke run adds nothing
COVERED = {
    "digits_cnn_blocks.yaml": "test_cnn_blocks (torch on 2 workers, tensorflow in local mode)",
    "digits_conditional.yaml": "test_conditional",
    "digits_multi_objective.yaml": "test_multi_objective",
    "objective_pbt.yaml": "test_objective",
    "digits_mlp.yaml": "test_console (specc run --smoke, 2 workers)",
    "digits_tf_cnn.yaml": "test_console (specc run --smoke)",
    "digits_stop_all.yaml": "test_stop_all",
    # Not from its file, but its shape (PBT over 2-worker Train runs, 2 trials, synchronous): here, in local mode,
    # it would be digits_pbt.yaml's function trials again
    "digits_pbt_ddp.yaml": "test_pbt_train",
}


def compilable_examples() -> list[str]:
    names = []
    for path in sorted((ROOT / "specs").glob("*.yaml")):
        try:
            api.compile(api.load(path))
        except UsageError:  # none today: test_golden checks that every example compiles
            continue
        names.append(path.name)
    return names


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in compilable_examples() if n not in NEEDS_DATA | COVERED.keys()])
def test_example_spec_smoke_runs(local_ray, tmp_path, monkeypatch, name):
    monkeypatch.chdir(ROOT)  # the examples' relative paths (factories, data) start at the repository
    experiment = api.load(f"specs/{name}", ["scaling.num_workers=0"])
    result = run(experiment, smoke=True, storage_path=str(tmp_path / "runs"))
    run_dir = Path(result.run_dir)
    lines = (run_dir / "results.csv").read_text().splitlines()
    if experiment.objective is not None:  # one trial of the function, 1 step; best.yaml runs it once
        assert lines[0].split(",")[:3] == ["trial_id", "status", "steps"] and len(lines) == 2
        assert set(experiment.tune.space) <= set(lines[0].split(","))
        beside = tmp_path / "project"  # best.yaml beside the function's module, as its header says to copy it
        shutil.copytree(ROOT / "specs" / "factories", beside / "factories")
        shutil.copyfile(run_dir / "best.yaml", beside / "best.yaml")
        assert api.load(beside / "best.yaml").tune.num_samples == 1
        assert set(result.metrics) == set(experiment.objective.metrics)
        assert (run_dir / "script.py").read_text() == api.compile(experiment)
        return
    if experiment.tune is None:
        assert lines[0].split(",") == experiment.reported_metrics()
    else:  # one trial: 1 epoch, every search-space path a column, and best.yaml a spec that validates
        assert lines[0].split(",")[:3] == ["trial_id", "status", "epochs"] and len(lines) == 2
        options = option_columns(experiment)  # a conditional entry: a column per field of its options
        columns = {f"{path}.{name}" for path in options for name in options[path]}
        columns |= {path for path in experiment.tune.space if path not in options}
        assert options.keys() <= experiment.tune.space.keys() and columns <= set(lines[0].split(","))
        assert api.load(run_dir / "best.yaml").tune is None
    assert result.metrics["epoch"] == 1  # the one epoch, counted from 1
    assert all(value == value for value in result.metrics.values())  # no NaN
    assert (run_dir / "script.py").read_text() == api.compile(experiment)
