"""`dataset` (SPEC §4): the twelve types, their defaults and constraints, and what each knows about its data."""

from __future__ import annotations

import pytest

from specc.spec.dataset import (
    BreastCancer,
    Csv,
    Digits,
    Iris,
    SyntheticClassification,
    SyntheticRegression,
    TorchvisionDataset,
    Wine,
)

COMMON = {
    "batch_size": 32,
    "global_batch_size": None,
    "validation_fraction": 0.2,
    "shuffle_seed": 0,
    "shuffle": True,
    "shuffle_validation": False,
    "standardize": True,
    "subset": None,
    "augment": [],
    "loader_workers": 0,
    "loader": "torch_dataloader",
}
LEARNED = {"task": None, "num_classes": None}
FILE = {**LEARNED, "features": None, "label": "label", "loader": "ray_data", "validation_from": "train"}  # streamed
TABLE = {**FILE, "categorical": [], "missing": "error"}


@pytest.mark.parametrize(
    ("kind", "fields", "specific"),
    [
        (
            "synthetic_classification",
            "",
            {"n_samples": 1000, "n_features": 20, "n_classes": 2, "noise": 0.01, "seed": 0},
        ),
        ("synthetic_regression", "", {"n_samples": 1000, "n_features": 20, "noise": 0.1, "seed": 0}),
        ("digits", "", {}),
        ("iris", "", {}),
        ("wine", "", {}),
        ("breast_cancer", "", {}),
        ("csv", ", path: data.csv", {**TABLE, "path": "data.csv"}),
        ("parquet", ", path: data/", {**TABLE, "path": "data/"}),
        ("jsonl", ", path: 'rows-*.jsonl'", {**TABLE, "path": "rows-*.jsonl"}),
        ("npz", ", path: arrays.npz", {**FILE, "path": "arrays.npz", "features": ["x"], "label": "y"}),
        (
            "image_folder",
            ", path: images, image_size: [32, 32]",
            {
                "path": "images",
                "image_size": [32, 32],
                "channels": 3,
                "validation_path": None,
                "validation_from": "train",
                "num_classes": None,
                "loader": "ray_data",
            },
        ),
        (
            "torchvision",
            ", name: MNIST",
            {
                "name": "MNIST",
                "root": "./data",
                "download": False,
                "resize": None,
                "normalize": None,
                "validation_from": "test",
                "validation_fraction": None,
            },
        ),
        (
            "keras_dataset",
            ", name: cifar10",
            {
                "name": "cifar10",
                "path": "~/.keras/datasets",
                "download": False,
                "validation_from": "test",
                "validation_fraction": None,
            },
        ),
        ("custom", ", factory: 'data:load'", {**LEARNED, "factory": "data:load", "kwargs": {}}),
    ],
)
def test_defaults_of_each_type(shown, kind, fields, specific):
    assert shown(f"dataset: {{type: {kind}{fields}}}")["dataset"] == {"type": kind, **COMMON, **specific}


@pytest.mark.parametrize(
    ("dataset", "expected"),
    [
        ("{type: digits, batch_size: '64'}", [("E103", "dataset.batch_size")]),
        ("{type: digits, batch_size: 2.5}", [("E103", "dataset.batch_size")]),
        ("{type: digits, batch_size: 0}", [("E106", "dataset.batch_size")]),
        ("{type: digits, validation_fraction: 0}", [("E106", "dataset.validation_fraction")]),
        ("{type: digits, validation_fraction: 1}", [("E106", "dataset.validation_fraction")]),
        ("{type: digits, shuffle_seed: -1}", [("E106", "dataset.shuffle_seed")]),
        ("{type: digits, loader: ray}", [("E104", "dataset.loader")]),
        ("{type: synthetic_classification, n_samples: 9}", [("E106", "dataset.n_samples")]),
        ("{type: synthetic_classification, n_features: 0}", [("E106", "dataset.n_features")]),
        ("{type: synthetic_classification, n_classes: 1}", [("E106", "dataset.n_classes")]),
        ("{type: synthetic_classification, noise: 1.5}", [("E106", "dataset.noise")]),
        ("{type: synthetic_regression, noise: -1}", [("E106", "dataset.noise")]),
        ("{type: synthetic_regression, n_classes: 3}", [("E101", "dataset.n_classes")]),
        ("{type: csv, path: ''}", [("E107", "dataset.path")]),
        ("{type: csv, path: a.csv, features: []}", [("E109", "dataset.features")]),
        ("{type: csv, path: a.csv, features: [a, '']}", [("E107", "dataset.features.1")]),
        ("{type: csv, path: a.csv, label: ''}", [("E107", "dataset.label")]),
        ("{type: csv, path: a.csv, task: classify}", [("E104", "dataset.task")]),
        ("{type: csv, path: a.csv, num_classes: 1}", [("E106", "dataset.num_classes")]),
        ("{type: torchvision}", [("E102", "dataset.name")]),
        ("{type: torchvision, name: ImageNet}", [("E104", "dataset.name")]),
        ("{type: torchvision, name: MNIST, resize: 0}", [("E106", "dataset.resize")]),
        ("{type: torchvision, name: MNIST, root: ''}", [("E107", "dataset.root")]),
        ("{type: torchvision, name: MNIST, download: 'yes'}", [("E103", "dataset.download")]),
        ("{type: custom}", [("E102", "dataset.factory")]),
        ("{type: custom, factory: data.load}", [("E107", "dataset.factory")]),
    ],
)
def test_constraints(problems, dataset, expected):
    assert problems(f"dataset: {dataset}") == expected


def test_an_int_is_accepted_for_a_float_field(shown):
    assert shown("dataset: {type: synthetic_regression, noise: 5}")["dataset"]["noise"] == 5.0


@pytest.mark.parametrize("kind", ["csv", "parquet", "jsonl", "npz"])
def test_file_datasets_need_a_path(report, kind):
    (problem,) = report(f"dataset: {{type: {kind}}}").problems
    assert (problem.code, problem.path) == ("E102", "dataset.path")
    assert "relative to the spec's directory" in problem.hint


def test_file_dataset_with_columns_and_a_glob(problems):
    spec = "dataset: {type: csv, path: 'data/*.csv', features: [a, b], label: y, task: regression}"
    assert problems(spec) == []


@pytest.mark.parametrize("name", ["MNIST", "FashionMNIST", "KMNIST", "CIFAR10", "CIFAR100", "SVHN", "STL10"])
def test_every_torchvision_name_is_accepted(problems, name):
    assert problems(f"dataset: {{type: torchvision, name: {name}}}") == []


def test_torchvision_name_in_the_wrong_case_suggests_the_right_one(report):
    (problem,) = report("dataset: {type: torchvision, name: mnist}").problems
    assert problem.hint == "did you mean 'MNIST'?"


@pytest.mark.parametrize(
    ("normalize", "expected"),
    [
        ("{mean: [0.49, 0.48, 0.45], std: [0.25, 0.24, 0.26]}", []),
        ("{mean: [0.5, 0.5, 0.5], std: [0.2, 0.2]}", [("E109", "dataset.normalize")]),
        ("{mean: [0.5, 0.5, 0.5], std: [0.2, 0.2, 0]}", [("E106", "dataset.normalize.std.2")]),
        ("{mean: [], std: []}", [("E109", "dataset.normalize.mean"), ("E109", "dataset.normalize.std")]),
        ("{mean: [0.5, 0.5, 0.5]}", [("E102", "dataset.normalize.std")]),
        ("{mean: [0.5], std: [0.2]}", [("E210", "dataset.normalize.mean")]),  # one value, three channels
    ],
)
def test_normalize(problems, normalize, expected):
    assert problems(f"dataset: {{type: torchvision, name: CIFAR10, normalize: {normalize}}}") == expected


def test_normalize_length_mismatch_says_both_lengths(report):
    spec = "dataset: {type: torchvision, name: CIFAR10, normalize: {mean: [0.5, 0.5, 0.5], std: [0.2, 0.2]}}"
    (problem,) = report(spec).problems
    assert problem.message == "mean has 3 values but std has 2"


def test_unknown_type_suggests_the_closest(report):
    (problem,) = report("dataset: {type: digitz}").problems
    assert (problem.code, problem.path, problem.hint) == ("E105", "dataset.type", "did you mean 'digits'?")


def test_field_of_another_type_is_an_unknown_key_of_the_section(report):
    (problem,) = report("dataset: {type: digits, path: x.csv}").problems
    assert (problem.code, problem.path) == ("E101", "dataset.path")
    assert "unknown key 'path' in dataset" in problem.message


def test_missing_type(report):
    (problem,) = report("dataset: {batch_size: 8}").problems
    assert (problem.code, problem.path) == ("E102", "dataset.type")
    assert problem.hint.startswith("one of: synthetic_classification, synthetic_regression, digits")


# -- what each type knows before any data is read ------------------------------------------------
@pytest.mark.parametrize(
    ("dataset", "task", "classes", "shape"),
    [
        (Digits(type="digits"), "classification", 10, (1, 8, 8)),
        (Iris(type="iris"), "classification", 3, None),
        (Wine(type="wine"), "classification", 3, None),
        (BreastCancer(type="breast_cancer"), "classification", 2, None),
        (SyntheticClassification(type="synthetic_classification", n_classes=4), "classification", 4, None),
        (SyntheticRegression(type="synthetic_regression"), "regression", None, None),
        (Csv(type="csv", path="a.csv"), None, None, None),
        (Csv(type="csv", path="a.csv", task="classification", num_classes=5), "classification", 5, None),
        (Csv(type="csv", path="a.csv", task="regression"), "regression", None, None),
    ],
    ids=lambda v: getattr(v, "type", None),
)
def test_known_task_classes_and_shape(dataset, task, classes, shape):
    assert (dataset.known_task(), dataset.known_classes(), dataset.known_image_shape()) == (task, classes, shape)


@pytest.mark.parametrize(
    ("name", "classes", "shape"),
    [
        ("MNIST", 10, (1, 28, 28)),
        ("FashionMNIST", 10, (1, 28, 28)),
        ("KMNIST", 10, (1, 28, 28)),
        ("CIFAR10", 10, (3, 32, 32)),
        ("CIFAR100", 100, (3, 32, 32)),
        ("SVHN", 10, (3, 32, 32)),
        ("STL10", 10, (3, 96, 96)),
    ],
)
def test_torchvision_sets_know_classes_and_shape(name, classes, shape):
    dataset = TorchvisionDataset(type="torchvision", name=name)
    assert (dataset.known_task(), dataset.known_classes(), dataset.known_image_shape()) == (
        "classification",
        classes,
        shape,
    )


def test_resize_changes_the_image_side_not_the_channels():
    dataset = TorchvisionDataset(type="torchvision", name="STL10", resize=64)
    assert dataset.known_image_shape() == (3, 64, 64)
