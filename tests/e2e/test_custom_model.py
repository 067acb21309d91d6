"""`model: {type: custom, factory: "module:function"}` imports your module from the spec's directory and
trains what it returns (SPEC §4), on a Ray Train worker process as well as in local mode."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from .conftest import FIXTURES, compile_spec, python_script, read_best, read_results, run_spec

pytestmark = pytest.mark.slow

SPEC = """\
specc: 1
name: custom-{workers}
framework: torch
model:
  type: custom
  factory: "{module}:make"
  kwargs: {{hidden: 24, marker: "{marker}"}}
dataset: {{type: digits, batch_size: 64}}
training:
  epochs: 2
  optimizer: {{type: adam, lr: 0.01}}
  metrics: [accuracy]
  checkpoint_every: 1
scaling: {{num_workers: {workers}}}
"""


def records(marker) -> list[dict]:
    return [json.loads(line) for line in marker.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("workers", [0, 1], ids=["local-mode", "one-worker"])
def test_custom_factory_builds_the_trained_model(tmp_path, spec_file, factory_module, local_ray, workers):
    module = f"e2e_models_{workers}"  # a name of its own: a local-mode run imports it into this process
    factory_module("marker_models.py", module)
    marker = tmp_path / "factory-calls.jsonl"
    spec = spec_file(SPEC.format(workers=workers, module=module, marker=marker))

    result = run_spec(spec, storage_path=tmp_path / "runs")

    calls = records(marker)
    assert calls, "the factory was never called"
    assert calls[0]["input_shape"] == [1, 8, 8]  # digits: 1x8x8 images, from the dataset
    assert calls[0]["num_outputs"] == 10
    assert calls[0]["hidden"] == 24  # kwargs passed through
    header, rows = read_results(result.run_dir)
    assert header == ["epoch", "train_loss", "val_loss", "val_accuracy", "num_parameters"]
    assert [row["epoch"] for row in rows] == [1, 2]
    assert rows[-1]["val_accuracy"] > 0.5  # it learns: 10 classes, chance is 0.1
    if not workers:
        return

    assert all(call["pid"] != os.getpid() for call in calls)  # built on the Ray Train worker, not here
    # With a worker group Ray keeps checkpoints: the saved state_dict is the factory's MarkerNet.
    assert result.checkpoint and result.checkpoint == read_best(result.run_dir)["checkpoint"]
    import torch

    state = torch.load(os.path.join(result.checkpoint, "state.pt"), map_location="cpu", weights_only=False)
    assert sorted(state["model"]) == ["marker_in.bias", "marker_in.weight", "marker_out.bias", "marker_out.weight"]
    assert tuple(state["model"]["marker_in.weight"].shape) == (24, 64)
    assert tuple(state["model"]["marker_out.weight"].shape) == (10, 24)


PROJECT_SPEC = """\
specc: 1
name: custom-script
framework: torch
model: {{type: custom, factory: "e2e_project_models:make", kwargs: {{marker: "{marker}"}}}}
dataset: {{type: iris, batch_size: 16}}
training: {{epochs: 1, metrics: [accuracy]}}
scaling: {{num_workers: 0}}
"""


@pytest.mark.parametrize(
    "where",
    [
        "project",
        # in turn (tests/e2e/conftest.py): the same script and factory as "project", run from another directory
        pytest.param("script_dir", marks=pytest.mark.in_turn(4)),
    ],
)
def test_compiled_script_finds_the_factory_beside_the_spec(tmp_path, monkeypatch, where):
    """A project: specs/ holds the spec and its factory module, the script is compiled into build/ and run
    from the project's root (`python build/custom.py`) or from build/ (`python custom.py`, as its usage says)."""
    specs = tmp_path / "specs"
    specs.mkdir()
    shutil.copyfile(FIXTURES / "marker_models.py", specs / "e2e_project_models.py")
    marker = tmp_path / "factory-calls.jsonl"
    (specs / "custom.yaml").write_text(PROJECT_SPEC.format(marker=marker), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    compile_spec("specs/custom.yaml", "build/custom.py")

    cwd = tmp_path if where == "project" else tmp_path / "build"
    script = "build/custom.py" if where == "project" else "custom.py"
    done = python_script(script, "--smoke", "--storage-path", tmp_path / "runs", cwd=cwd, timeout=120)

    assert done.returncode == 0, done.stderr[-3000:]
    assert records(marker)[0]["input_shape"] == [4]  # iris: 4 features
    assert records(marker)[0]["num_outputs"] == 3
    _, rows = read_results(tmp_path / "runs" / "custom-script")
    assert [row["epoch"] for row in rows] == [1]
