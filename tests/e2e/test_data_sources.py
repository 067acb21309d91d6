"""Data from files in their real on-disk formats: torchvision's idx files and a CSV read with Ray Data (SPEC §4)."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from .conftest import read_best, read_results, run_spec

pytestmark = pytest.mark.slow


def write_idx_images(path, images: np.ndarray) -> None:
    """The idx3-ubyte format: big-endian magic 2051 (uint8, 3 dims), the dims, then the pixels."""
    n, rows, cols = images.shape
    path.write_bytes(struct.pack(">IIII", 2051, n, rows, cols) + images.astype(np.uint8).tobytes())


def write_idx_labels(path, labels: np.ndarray) -> None:
    """The idx1-ubyte format: big-endian magic 2049 (uint8, 1 dim), the count, then the labels."""
    path.write_bytes(struct.pack(">II", 2049, len(labels)) + labels.astype(np.uint8).tobytes())


def write_fashion_mnist(root, n_train: int, n_test: int, seed: int = 0) -> None:
    """A tiny FashionMNIST under root/FashionMNIST/raw/, as torchvision reads it (no download, no processed/)."""
    rng = np.random.default_rng(seed)
    raw = root / "FashionMNIST" / "raw"
    raw.mkdir(parents=True)
    for prefix, n in (("train", n_train), ("t10k", n_test)):
        labels = np.arange(n) % 10
        # each class a brighter band at its own rows, on noise: learnable, but that is not the point here
        images = rng.integers(0, 64, size=(n, 28, 28))
        for i, label in enumerate(labels):
            images[i, 2 * label : 2 * label + 6, :] += 150
        write_idx_images(raw / f"{prefix}-images-idx3-ubyte", images)
        write_idx_labels(raw / f"{prefix}-labels-idx1-ubyte", labels)


def test_written_idx_files_are_what_torchvision_reads(tmp_path):
    """The fixture itself: torchvision's own FashionMNIST class loads the files written above."""
    import torchvision

    write_fashion_mnist(tmp_path, 64, 32)
    train = torchvision.datasets.FashionMNIST(str(tmp_path), train=True, download=False)
    test = torchvision.datasets.FashionMNIST(str(tmp_path), train=False, download=False)
    assert (len(train), len(test)) == (64, 32)
    assert tuple(train.data.shape) == (64, 28, 28) and train.targets[:3].tolist() == [0, 1, 2]


def test_resnet18_on_fashion_mnist_files(tmp_path, spec_file, local_ray):
    write_fashion_mnist(tmp_path / "data", n_train=64, n_test=32)
    spec = spec_file(
        """\
        specc: 1
        name: fmnist-resnet18
        framework: torch
        model: {type: torchvision, name: resnet18, in_channels: 1, weights: null}
        dataset:
          type: torchvision
          name: FashionMNIST
          root: ./data              # relative to this spec's directory
          download: false
          normalize: {mean: [0.2860], std: [0.3530]}
          batch_size: 16
        training:
          epochs: 3
          optimizer: {type: sgd, lr: 0.05, momentum: 0.9}
          metrics: [accuracy, top5_accuracy]
          checkpoint_every: 1
        scaling: {num_workers: 0}
        """
    )
    result = run_spec(spec, smoke=True, storage_path=str(tmp_path / "runs"))

    run_dir = tmp_path / "runs" / "fmnist-resnet18"
    assert result.run_dir == str(run_dir)
    header, rows = read_results(run_dir)
    assert header == ["epoch", "train_loss", "val_loss", "val_accuracy", "val_top5_accuracy", "num_parameters"]
    assert [row["epoch"] for row in rows] == [1]  # --smoke: one epoch
    assert np.isfinite(rows[0]["train_loss"]) and np.isfinite(rows[0]["val_loss"])
    assert 0.0 <= rows[0]["val_accuracy"] <= rows[0]["val_top5_accuracy"] <= 1.0
    assert read_best(run_dir)["metrics"] == pytest.approx(rows[0])


def write_house_prices(path, n: int = 240, seed: int = 0) -> None:
    """A CSV with a header row: four features and a price that depends on them (plus noise)."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "area_m2": rng.uniform(40, 200, n).round(1),
            "rooms": rng.integers(1, 7, n),
            "age_years": rng.integers(0, 80, n),
            "distance_km": rng.uniform(0.5, 30, n).round(2),
            "unused_note": ["x"] * n,  # not a feature: only the listed columns are read into the model
        }
    )
    frame["price_k"] = (
        2.0 * frame.area_m2 + 15 * frame.rooms - 0.8 * frame.age_years - 3 * frame.distance_km + rng.normal(0, 5, n)
    ).round(1)
    frame.to_csv(path, index=False)


def test_csv_regression_through_ray_data(tmp_path, spec_file, local_ray):
    """Ray Train's local mode: Ray Data's csv shards in Train workers are test_streaming_data's (a csv with
    categories and missing values on a worker, parquet on 2) and test_tensorflow's (a csv on 2 Keras workers)."""
    (tmp_path / "data").mkdir()
    write_house_prices(tmp_path / "data" / "houses.csv")
    spec = spec_file(
        """\
        specc: 1
        name: csv-houses
        framework: torch
        model: {type: mlp, hidden_sizes: [16], activation: relu}
        dataset:
          type: csv
          path: data/houses.csv
          features: [area_m2, rooms, age_years, distance_km]
          label: price_k
          task: regression
          loader: ray_data
          batch_size: 32
        training:
          epochs: 4
          loss: mse
          optimizer: {type: adam, lr: 0.01}
          metrics: [mse, mae]
        scaling: {num_workers: 0}
        """
    )
    import ray.data

    ray.data.DataContext.get_current().enable_progress_bars = True  # Ray Data's default, whatever ran before
    result = run_spec(spec, smoke=True, storage_path=str(tmp_path / "out"))
    # The run hides Ray Data's bars for itself only: the process (a notebook) shows them again afterwards
    assert ray.data.DataContext.get_current().enable_progress_bars

    run_dir = tmp_path / "out" / "csv-houses"
    assert result.run_dir == str(run_dir)
    header, rows = read_results(run_dir)
    assert header == ["epoch", "train_loss", "val_loss", "val_mse", "val_mae", "num_parameters"]
    assert [row["epoch"] for row in rows] == [1]
    row = rows[0]
    assert all(np.isfinite(value) and value >= 0 for value in row.values())
    assert row["val_mse"] == pytest.approx(row["val_loss"], rel=1e-5)  # loss mse: the same quantity
    assert row["val_mae"] ** 2 <= row["val_mse"] * (1 + 1e-5)  # mean |e| <= sqrt(mean e^2)
