"""Classes a spec names from its framework (SPEC §13, issue 50) on a real local Ray: an optimizer torch.optim or Keras
offers beyond specc's four, named as its class is, trains the model with the arguments the spec gives (read back from
the checkpoint the run wrote: the optimizer's own state and settings) between layers of an activation of the
framework's own (torch's Mish, Keras' selu: in the script the run kept, and in the Keras model's saved config), and a
search over one of its arguments the spec leaves at its default samples it into each trial's optimizer."""

from __future__ import annotations

import csv
import json
import zipfile
from pathlib import Path

import pytest

from .conftest import read_best, read_results, run_spec

pytestmark = pytest.mark.slow

TORCH = """\
specc: 1
name: named-torch
framework: torch
model: {type: mlp, hidden_sizes: [32], activation: Mish}
dataset: {type: digits, batch_size: 32}
training:
  epochs: 3
  optimizer: {type: Adadelta, lr: 1.0, rho: 0.95}
scaling: {num_workers: 2}
"""
KERAS = """\
specc: 1
name: named-keras
framework: tensorflow
model: {type: mlp, hidden_sizes: [32], activation: selu}
dataset: {type: digits, batch_size: 32}
training:
  epochs: 3
  optimizer: {type: Nadam, learning_rate: 0.01, beta_2: 0.99}
scaling: {num_workers: 1}
"""
SEARCH = """\
specc: 1
name: named-search
framework: torch
model: {type: mlp, hidden_sizes: [16]}
dataset: {type: iris}
training:
  epochs: 2
  optimizer: {type: adagrad, lr: 0.1}
scaling: {num_workers: 1}
tune:
  metric: val_loss
  mode: min
  num_samples: 2
  search: {type: random, seed: 3}
  space:
    training.optimizer.lr_decay: {uniform: [0.01, 0.5]}
"""


def test_a_torch_optimizer_named_as_its_class_trains_with_the_spec_arguments(tmp_path, spec_file, local_ray):
    torch = pytest.importorskip("torch")
    result = run_spec(spec_file(TORCH), storage_path=tmp_path / "runs", quiet=True)
    state = torch.load(Path(read_best(result.run_dir)["checkpoint"], "state.pt"), weights_only=True)
    (group,) = state["optimizer"]["param_groups"]
    assert (group["lr"], group["rho"], group["eps"]) == (1.0, 0.95, 1e-6)  # the spec's, then Adadelta's default
    assert set(state["optimizer"]["state"][0]) >= {"square_avg", "acc_delta"}  # Adadelta's own running averages
    assert "layers.append(nn.Mish())" in (Path(result.run_dir) / "script.py").read_text(encoding="utf-8")
    _, rows = read_results(result.run_dir)
    assert rows[-1]["val_accuracy"] > 0.85 and rows[-1]["val_loss"] < rows[0]["val_loss"]


def test_a_keras_optimizer_named_as_its_class_trains_with_the_spec_arguments(tmp_path, spec_file, local_ray):
    pytest.importorskip("tf_keras")
    result = run_spec(spec_file(KERAS), storage_path=tmp_path / "runs", quiet=True)
    with zipfile.ZipFile(Path(read_best(result.run_dir)["checkpoint"], "model.keras")) as archive:
        config = json.loads(archive.read("config.json"))
    optimizer = config["compile_config"]["optimizer"]
    layers = config["config"]["layers"]
    assert [layer["config"]["activation"] for layer in layers if layer["class_name"] == "Activation"] == ["selu"]
    assert optimizer["class_name"] == "Nadam"
    assert (optimizer["config"]["learning_rate"], optimizer["config"]["beta_2"]) == pytest.approx((0.01, 0.99))
    _, rows = read_results(result.run_dir)
    assert rows[-1]["val_accuracy"] > 0.85


def test_a_search_samples_an_argument_the_spec_left_at_its_default(tmp_path, spec_file, local_ray):
    torch = pytest.importorskip("torch")
    result = run_spec(spec_file(SEARCH), storage_path=tmp_path / "runs", quiet=True)
    with open(Path(result.run_dir) / "results.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 2 and all(0.01 <= float(row["training.optimizer.lr_decay"]) <= 0.5 for row in rows), rows
    for trial in sorted(Path(result.run_dir).glob("trial_*")):
        sampled = json.loads((trial / "params.json").read_text())["training.optimizer.lr_decay"]
        checkpoint = sorted(trial.glob("checkpoint_*"))[-1]
        (group,) = torch.load(checkpoint / "state.pt", weights_only=True)["optimizer"]["param_groups"]
        assert group["lr_decay"] == pytest.approx(sampled) and group["lr"] == 0.1  # each trial's Adagrad
