"""keras.datasets' files in their real on-disk layouts, written from scikit-learn's digits (so a model can learn
them): mnist.npz, the fashion-mnist/ gzipped IDX files and the pickled CIFAR-10 / CIFAR-100 batches. Shared by the
unit tests of the compiled readers and the e2e runs."""

from __future__ import annotations

import gzip
import pickle
import struct
from pathlib import Path

import numpy as np


def digit_images(n: int, side: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """n of scikit-learn's 8x8 digits (cycled, in a seeded order) scaled up to side x side uint8 pixels, and their
    labels."""
    from sklearn.datasets import load_digits

    x, y = load_digits(return_X_y=True)
    order = np.random.default_rng(seed).permutation(len(x))
    order = np.resize(order, n)
    scale = side // 8
    pad = (side - 8 * scale) // 2
    images = np.kron(x[order].reshape(-1, 8, 8), np.ones((scale, scale))) * (255 / 16)
    images = np.pad(images, ((0, 0), (pad, side - 8 * scale - pad), (pad, side - 8 * scale - pad)))
    return images.astype(np.uint8), y[order].astype(np.uint8)


def write_mnist_npz(path: Path, n_train: int, n_test: int) -> Path:
    """mnist.npz as keras.datasets.mnist caches it: x_train uint8 (N, 28, 28), y_train uint8 (N,), x_test, y_test."""
    x_train, y_train = digit_images(n_train, 28, seed=0)
    x_test, y_test = digit_images(n_test, 28, seed=1)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path, x_train=x_train, y_train=y_train, x_test=x_test, y_test=y_test)
    return path


def write_fashion_mnist(directory: Path, n_train: int, n_test: int) -> Path:
    """directory/fashion-mnist/ as keras.datasets.fashion_mnist caches it: four gzipped IDX files."""
    folder = directory / "fashion-mnist"
    folder.mkdir(parents=True, exist_ok=True)
    for prefix, n, seed in (("train", n_train, 0), ("t10k", n_test, 1)):
        images, labels = digit_images(n, 28, seed)
        header = struct.pack(">IIII", 2051, n, 28, 28)
        (folder / f"{prefix}-images-idx3-ubyte.gz").write_bytes(gzip.compress(header + images.tobytes()))
        header = struct.pack(">II", 2049, n)
        (folder / f"{prefix}-labels-idx1-ubyte.gz").write_bytes(gzip.compress(header + labels.tobytes()))
    return folder


def cifar_rows(n: int, seed: int) -> tuple[np.ndarray, list[int]]:
    """n 32x32 RGB images as CIFAR's rows of 3072 bytes (the red plane, then green, then blue), and labels."""
    images, labels = digit_images(n, 32, seed)
    planes = np.stack([images, images // 2, 255 - images], axis=1)  # (N, 3, 32, 32): channels differ
    return planes.reshape(n, 3072), [int(label) for label in labels]


def write_cifar10(directory: Path, per_batch: int, n_test: int, keras3: bool = False) -> Path:
    """directory/cifar-10-batches-py/ (tf.keras' layout; Keras 3 nests it in cifar-10-batches-py-target/):
    data_batch_1 to 5 and test_batch, pickled dicts of b"data" (N, 3072) uint8 and b"labels" as CIFAR ships them."""
    folder = (
        directory / "cifar-10-batches-py-target" / "cifar-10-batches-py"
        if keras3
        else directory / "cifar-10-batches-py"
    )
    folder.mkdir(parents=True, exist_ok=True)
    names = [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]
    for index, name in enumerate(names):
        data, labels = cifar_rows(n_test if name == "test_batch" else per_batch, seed=index)
        batch = {
            b"batch_label": name.encode(),
            b"labels": labels,
            b"data": data,
            b"filenames": [b"x.png"] * len(labels),
        }
        (folder / name).write_bytes(pickle.dumps(batch, protocol=4))
    return folder


def write_cifar100(directory: Path, n_train: int, n_test: int) -> Path:
    """directory/cifar-100-python/ with its pickled train and test files (b"fine_labels", b"coarse_labels")."""
    folder = directory / "cifar-100-python"
    folder.mkdir(parents=True, exist_ok=True)
    for name, n, seed in (("train", n_train, 0), ("test", n_test, 1)):
        data, labels = cifar_rows(n, seed)
        fine = [label * 10 + 7 for label in labels]  # 0..99: a fine label above 9 proves these are the ones read
        batch = {b"data": data, b"fine_labels": fine, b"coarse_labels": [label // 5 for label in fine]}
        (folder / name).write_bytes(pickle.dumps(batch, protocol=4))
    return folder
