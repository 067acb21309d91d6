"""`type: keras_dataset` (SPEC §12) on a real local Ray: the compiled scripts read files the tests write in Keras'
own layouts (an mnist.npz; a cifar-10-batches-py directory of pickled batches), made from scikit-learn's digits so
that a model learns them, on both frameworks; and `validation_from: none` trains and reports no val_* metric."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from specc.cli import main
from tests.keras_files import write_cifar10, write_mnist_npz

from .conftest import read_best, read_results, run_spec

# CI runs this module in turn (share 3, tests/e2e/conftest.py): Keras' data sets written in their real formats
pytestmark = [pytest.mark.slow, pytest.mark.in_turn(3)]


def imported(path: Path):
    spec = importlib.util.spec_from_file_location(f"evaluate_{abs(hash(str(path)))}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_torch_cnn_learns_digits_from_an_mnist_npz(tmp_path, spec_file, local_ray):
    """2 Ray Train workers read data/mnist.npz (relative to the spec) and learn the digits drawn into it: far
    above the 10% a model that did not read them would score on the test split."""
    write_mnist_npz(tmp_path / "data" / "mnist.npz", n_train=1200, n_test=300)
    spec = spec_file(
        """\
        specc: 1
        name: keras-mnist
        framework: torch
        model: {type: cnn, channels: [8, 16], hidden_sizes: [32]}
        dataset: {type: keras_dataset, name: mnist, path: data/mnist.npz, batch_size: 32}
        training:
          epochs: 3
          optimizer: {type: adam, lr: 0.003}
        scaling: {num_workers: 2}
        """
    )
    run_spec(spec, storage_path=tmp_path / "runs")

    header, rows = read_results(tmp_path / "runs" / "keras-mnist")
    assert header == ["epoch", "train_loss", "val_loss", "val_accuracy", "num_parameters"]
    assert [row["epoch"] for row in rows] == [1, 2, 3]
    assert rows[-1]["val_accuracy"] > 0.6, rows  # 0.86 seen; chance is 0.1
    assert rows[-1]["train_loss"] < rows[0]["train_loss"]


def test_keras_cnn_learns_digits_from_cifar10_batches(tmp_path, spec_file, local_ray):
    """Keras reads the pickled CIFAR-10 batches in Keras 3's cache layout (cifar-10-batches-py-target/...), keeps
    the first 600 training images (subset) and validates on 200 test images, channels-last."""
    write_cifar10(tmp_path / "keras", per_batch=200, n_test=300, keras3=True)
    spec = spec_file(
        """\
        specc: 1
        name: keras-cifar10
        framework: tensorflow
        model: {type: cnn, channels: [8, 16], hidden_sizes: [32]}
        dataset:
          type: keras_dataset
          name: cifar10
          path: keras
          subset: {train: 600, validation: 200}
          batch_size: 32
        training:
          epochs: 4
          optimizer: {type: adam, lr: 0.003}
          metrics: [accuracy, top5_accuracy]
        scaling: {num_workers: 0}
        """
    )
    run_spec(spec, storage_path=tmp_path / "runs")

    header, rows = read_results(tmp_path / "runs" / "keras-cifar10")
    assert header == ["epoch", "train_loss", "val_loss", "val_accuracy", "val_top5_accuracy", "num_parameters"]
    assert len(rows) == 4 and rows[-1]["val_accuracy"] > 0.5, rows
    assert read_best(tmp_path / "runs" / "keras-cifar10")["metrics"] == pytest.approx(rows[-1])


@pytest.mark.parametrize("framework", ["torch", "tensorflow"])
def test_validation_from_none_trains_and_reports_no_val_metrics(tmp_path, spec_file, local_ray, framework, capsys):
    write_mnist_npz(tmp_path / "mnist.npz", n_train=256, n_test=64)
    spec = spec_file(
        f"""\
        specc: 1
        name: no-validation
        framework: {framework}
        model: {{type: cnn, channels: [4], hidden_sizes: [16]}}
        dataset: {{type: keras_dataset, name: mnist, path: mnist.npz, validation_from: none, batch_size: 32}}
        training: {{epochs: 2, train_metrics: true}}
        scaling: {{num_workers: 1}}
        """
    )
    run_spec(spec, storage_path=tmp_path / "runs")

    run_dir = tmp_path / "runs" / "no-validation"
    header, rows = read_results(run_dir)
    assert header == ["epoch", "train_loss", "train_accuracy", "num_parameters"]
    assert [row["epoch"] for row in rows] == [1, 2] and all(np.isfinite(row["train_loss"]) for row in rows)
    best = read_best(run_dir)
    assert best["status"] == "completed" and best["metrics"] == pytest.approx(rows[-1]) and best["checkpoint"]
    shown = capsys.readouterr()
    assert "val_" not in shown.out + shown.err and "train_accuracy" in shown.out + shown.err

    # specc evaluate (issue 20): no validation split was held out, so the data set's test split it is
    assert main(["evaluate", str(run_dir), "--split", "validation", "--root", str(tmp_path)]) == 2
    assert "held out no validation split (dataset.validation_from: none)" in capsys.readouterr().err
    assert main(["evaluate", str(run_dir), "--root", str(tmp_path)]) == 0, capsys.readouterr().err
    evaluation = json.loads((run_dir / "evaluation.json").read_text(encoding="utf-8"))
    assert evaluation["split"] == "test" and set(evaluation["metrics"]) == {"loss", "accuracy"}
    with np.load(tmp_path / "mnist.npz") as saved:
        x_test, y_test = saved["x_test"].astype(np.float32) / 255, saved["y_test"]
    if framework == "tensorflow":  # the model's own predictions on the 64 test images, worked out here
        import tf_keras

        model = tf_keras.models.load_model(Path(best["checkpoint"], "model.keras"))
        predicted = model.predict(x_test.reshape(-1, 28, 28, 1), verbose=0).argmax(1)
    else:
        import torch

        script = imported(run_dir / "evaluate.py")  # its build_model: the spec's CNN
        model = script.build_model(script.CONFIG["model"], (1, 28, 28), 10)
        model.load_state_dict(torch.load(Path(best["checkpoint"], "state.pt"), weights_only=True)["model"])
        predicted = model.eval()(torch.from_numpy(x_test.reshape(-1, 1, 28, 28))).argmax(1).numpy()
    assert evaluation["metrics"]["accuracy"] == pytest.approx(float((predicted == y_test).mean()), abs=1e-6)

    # specc export (issue 20) checks its export on the test split too: the run held out nothing else
    fmt, output = ("saved_model", tmp_path / "cnn") if framework == "tensorflow" else ("onnx", tmp_path / "cnn.onnx")
    assert main(["export", str(run_dir), "--format", fmt, "-o", str(output), "--root", str(tmp_path)]) == 0
    described = json.loads((tmp_path / "cnn.preprocessing.json").read_text(encoding="utf-8"))
    assert described["preprocessing"] == {"kind": "keras_dataset", "prepared": "Keras' mnist: pixels / 255"}
    assert described["checked"]["max_abs_difference"] <= 1e-5 and output.exists()


def test_a_search_without_validation_optimises_a_training_metric(tmp_path, spec_file, local_ray):
    """Two Tune trials (one process each) with validation_from: none: the search's table, best.json and best.yaml
    name train_accuracy and no val_* metric; best.yaml is a spec of its own pointing at the same file."""
    from specc import api

    write_mnist_npz(tmp_path / "mnist.npz", n_train=256, n_test=64)
    spec = spec_file(
        """\
        specc: 1
        name: search-no-validation
        framework: torch
        model: {type: cnn, channels: [4], hidden_sizes: [16]}
        dataset: {type: keras_dataset, name: mnist, path: mnist.npz, validation_from: none, batch_size: 32}
        training: {epochs: 2, train_metrics: true}
        scaling: {num_workers: 1}
        tune:
          metric: train_accuracy
          mode: max
          num_samples: 2
          space:
            training.optimizer.lr: {choice: [0.01, 0.1]}
        """
    )
    result = run_spec(spec, storage_path=tmp_path / "runs")

    run_dir = tmp_path / "runs" / "search-no-validation"
    lines = (run_dir / "results.csv").read_text().splitlines()
    assert len(lines) == 3 and "val_" not in lines[0] and "train_accuracy" in lines[0]
    assert "train_accuracy" in result.metrics and not any(name.startswith("val_") for name in result.metrics)
    best = api.load(run_dir / "best.yaml")
    assert best.tune is None and best.dataset.validation_from == "none"
    assert best.dataset.path == str(tmp_path / "mnist.npz")
