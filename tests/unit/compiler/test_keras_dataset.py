"""SPEC §12 `type: keras_dataset` and `validation_from`: the checks, and the compiled readers called directly on
files written in Keras' own layouts (tests/keras_files.py) with torch and Keras' image layouts (no Ray started).
Keras' own CIFAR reader (keras.src.datasets.cifar.load_batch) reads the written batches too, so they are the real
format."""

from __future__ import annotations

import os

import numpy as np
import pytest

from specc import api
from specc.compiler.resolve import plan
from specc.compiler.travels import excludes, needs_working_dir
from tests.conftest import located
from tests.keras_files import write_cifar10, write_cifar100, write_fashion_mnist, write_mnist_npz
from tests.unit.compiler.test_tensorflow_script import script_of, source_of


def spec(dataset: str, framework: str = "torch", model: str = "{type: cnn, channels: [4]}", extra: str = "") -> str:
    return (
        f"specc: 1\nname: keras-data\nframework: {framework}\nmodel: {model}\ndataset: {dataset}\n"
        f"training: {{epochs: 1}}\n{extra}"
    )


def problems(write_spec, text: str) -> list[tuple]:
    """(code, path, line, column) of each problem."""
    return [
        (code, path, line, column) for code, line, column, path in located(api.check_file(write_spec(text)).problems)
    ]


# -- checks -----------------------------------------------------------------------------------------
def test_keras_dataset_knows_its_task_classes_and_image_shape(write_spec):
    for name, classes, shape in (("mnist", 10, (1, 28, 28)), ("cifar100", 100, (3, 32, 32))):
        experiment = api.load(write_spec(spec(f"{{type: keras_dataset, name: {name}}}", "tensorflow")))
        assert experiment.task() == "classification"
        assert (experiment.dataset.known_classes(), experiment.dataset.known_image_shape()) == (classes, shape)
        assert plan(experiment).num_outputs == classes


def test_model_checks_see_the_image_shape(write_spec):
    found = problems(
        write_spec, spec("{type: keras_dataset, name: mnist}", "tensorflow", "{type: keras_application, name: VGG16}")
    )
    assert [(code, path) for code, path, *_ in found] == [("E210", "model.name")]  # 28x28 < 32x32
    found = problems(
        write_spec, spec("{type: keras_dataset, name: mnist}", model="{type: cnn, channels: [4, 4, 4, 4, 4]}")
    )
    assert [(code, path) for code, path, *_ in found] == [("E210", "model.channels")]  # 28 -> 14 -> 7 -> 3 -> 1 -> 0
    assert problems(write_spec, spec("{type: keras_dataset, name: cifar10}", "tensorflow")) == []


@pytest.mark.parametrize("dataset", ["{type: keras_dataset, name: mnist", "{type: torchvision, name: MNIST"])
def test_validation_fraction_only_with_validation_from_train(write_spec, dataset):
    for source in ("", ", validation_from: test", ", validation_from: none"):
        found = problems(write_spec, spec(dataset + source + ", validation_fraction: 0.1}"))
        assert [(code, path) for code, path, *_ in found] == [("E221", "dataset.validation_fraction")]
    assert problems(write_spec, spec(dataset + ", validation_from: train, validation_fraction: 0.1}")) == []
    held = api.load(write_spec(spec(dataset + ", validation_from: train}"))).dataset
    assert held.validation_fraction == 0.2  # the default, written into the resolved spec
    assert api.load(write_spec(spec(dataset + "}"))).dataset.validation_fraction is None


def test_validation_from_none_reports_no_val_metrics(write_spec):
    experiment = api.load(write_spec(spec("{type: keras_dataset, name: mnist, validation_from: none}")))
    assert experiment.reported_metrics() == ["epoch", "train_loss", "num_parameters"]
    tune = "tune: {metric: val_loss, mode: min, space: {training.optimizer.lr: {uniform: [0.01, 0.1]}}}\n"
    found = problems(write_spec, spec("{type: keras_dataset, name: mnist, validation_from: none}", extra=tune))
    assert [(code, path) for code, path, *_ in found] == [("E201", "tune.metric")]
    score = "run: {checkpoint_score: {metric: val_accuracy, mode: max}}\n"
    found = problems(write_spec, spec("{type: torchvision, name: MNIST, validation_from: none}", extra=score))
    assert [(code, path) for code, path, *_ in found] == [("E201", "run.checkpoint_score.metric")]
    trained = spec(
        "{type: keras_dataset, name: mnist, validation_from: none}", extra=tune.replace("val_loss", "train_accuracy")
    )
    trained = trained.replace("training: {epochs: 1}", "training: {epochs: 1, train_metrics: true}")
    assert problems(write_spec, trained.replace("mode: min", "mode: max")) == []
    found = problems(write_spec, spec("{type: keras_dataset, name: mnist, validation_from: none, loader: ray_data}"))
    assert [(code, path) for code, path, *_ in found] == [("E221", "dataset.validation_from")]


def test_keras_data_inside_the_working_directory_stays_behind(write_spec, tmp_path):
    experiment = api.load(write_spec(spec("{type: keras_dataset, name: cifar10, path: data/keras}")))
    assert "/data/keras" in excludes(experiment, str(tmp_path / "spec.yaml")) and needs_working_dir(experiment)
    home = api.load(write_spec(spec("{type: keras_dataset, name: cifar10}")))
    assert home.dataset.path == "~/.keras/datasets" and not needs_working_dir(home)
    assert plan(home).config["dataset"]["path"] == "~/.keras/datasets"  # expanded by the driver, on its machine
    assert 'os.path.expanduser(data["path"])' in api.compile(home)


# -- the compiled readers on written files --------------------------------------------------------
def load(write_spec, tmp_path, dataset: str, framework: str = "torch"):
    script = script_of(write_spec, spec(dataset, framework))
    here = os.getcwd()  # relative paths start where the script was compiled for (its driver makes them absolute)
    cfg = {**script.CONFIG["dataset"], "path": os.path.join(here, script.CONFIG["dataset"]["path"])}
    return script, script.load_data(cfg)


@pytest.mark.parametrize("framework", ["torch", "tensorflow"])
def test_mnist_npz_becomes_scaled_images_in_the_frameworks_layout(write_spec, tmp_path, framework):
    write_mnist_npz(tmp_path / "data" / "mnist.npz", n_train=120, n_test=40)
    with np.load(tmp_path / "data" / "mnist.npz") as raw:
        x_raw, y_raw, t_raw = raw["x_train"], raw["y_train"], raw["y_test"]
    for path in ("data/mnist.npz", "data"):  # the file, or the directory Keras caches into
        _, ((x, y), (x_val, y_val)) = load(
            write_spec, tmp_path, f"{{type: keras_dataset, name: mnist, path: {path}}}", framework
        )
        expected = (120, 1, 28, 28) if framework == "torch" else (120, 28, 28, 1)
        assert x.shape == expected and x.dtype == np.float32 and y.dtype == np.int64
        assert x_val.shape[0] == 40 and np.array_equal(y_val, t_raw)  # validation: the test split
        assert np.allclose(x.reshape(120, 28, 28), x_raw / 255) and np.array_equal(y, y_raw)
        assert x.min() >= 0.0 and x.max() <= 1.0 and x.max() > 0.9


@pytest.mark.parametrize("framework", ["torch", "tensorflow"])
@pytest.mark.parametrize("keras3", [False, True])
def test_cifar10_batches_keep_their_channels(write_spec, tmp_path, framework, keras3):
    from keras.src.datasets.cifar import load_batch  # Keras' own reader: the written files are the real format

    folder = write_cifar10(tmp_path / "keras", per_batch=20, n_test=30, keras3=keras3)
    _, ((x, y), (x_val, y_val)) = load(
        write_spec, tmp_path, "{type: keras_dataset, name: cifar10, path: keras}", framework
    )
    first, labels = load_batch(str(folder / "data_batch_1"))  # (N, 3, 32, 32), channels-first
    test_images, test_labels = load_batch(str(folder / "test_batch"))
    assert len(x) == 100 and len(x_val) == 30  # 5 batches of 20; the test batch
    images = x[:20] if framework == "torch" else x[:20].transpose(0, 3, 1, 2)
    assert np.allclose(images, first / 255) and np.array_equal(y[:20], labels)
    validation = x_val if framework == "torch" else x_val.transpose(0, 3, 1, 2)
    assert (
        np.allclose(validation, test_images / 255)
        and np.array_equal(y_val, test_labels)
        and x.shape[1:] == ((3, 32, 32) if framework == "torch" else (32, 32, 3))
    )


def test_cifar100_fine_labels_and_fashion_mnist_idx(write_spec, tmp_path):
    write_cifar100(tmp_path / "keras", n_train=50, n_test=10)
    _, ((x, y), (x_val, y_val)) = load(write_spec, tmp_path, "{type: keras_dataset, name: cifar100, path: keras}")
    assert x.shape == (50, 3, 32, 32) and y.max() > 9 and len(y_val) == 10  # fine labels, not coarse
    write_fashion_mnist(tmp_path / "keras", n_train=60, n_test=20)
    _, ((x, y), (x_val, y_val)) = load(
        write_spec, tmp_path, "{type: keras_dataset, name: fashion_mnist, path: keras}", "tensorflow"
    )
    assert x.shape == (60, 28, 28, 1) and x_val.shape == (20, 28, 28, 1) and set(y) <= set(range(10))


def test_a_missing_file_names_the_path_and_what_it_expected(write_spec, tmp_path):
    for name, expected in (("mnist", "mnist.npz"), ("cifar10", "cifar-10-batches-py/data_batch_1")):
        with pytest.raises(FileNotFoundError) as caught:
            load(write_spec, tmp_path, f"{{type: keras_dataset, name: {name}, path: nowhere}}")
        # the path as the script joined it: from a working directory beside pytest's (CI's /tmp/ci17) it holds a
        # "..", so it is compared normalised
        named = next(word for word in str(caught.value).split() if word.rstrip(";:,").endswith("nowhere"))
        assert expected in str(caught.value) and os.path.normpath(named.rstrip(";:,")) == str(tmp_path / "nowhere")
        assert f"keras.datasets.{name}.load_data()" in str(caught.value)


def test_a_tampered_cifar_batch_cannot_run_code(write_spec, tmp_path):
    import pickle

    folder = write_cifar10(tmp_path / "keras", per_batch=4, n_test=4)
    (folder / "data_batch_3").write_bytes(pickle.dumps({b"data": print, b"labels": []}))
    # print, or the safe_print Ray's tqdm_ray puts in its place once a Ray session has run in this process
    with pytest.raises(pickle.UnpicklingError, match=r"refusing to unpickle \S*print from a CIFAR batch"):
        load(write_spec, tmp_path, "{type: keras_dataset, name: cifar10, path: keras}")


def test_validation_from_train_holds_out_exactly_the_fraction_disjointly(write_spec, tmp_path):
    rng = np.random.default_rng(3)
    x_all = rng.integers(0, 256, size=(200, 28, 28), dtype=np.uint8)  # every image its own
    test = rng.integers(0, 256, size=(50, 28, 28), dtype=np.uint8)
    np.savez(tmp_path / "mnist.npz", x_train=x_all, y_train=np.arange(200) % 10, x_test=test, y_test=np.arange(50) % 10)
    dataset = "{type: keras_dataset, name: mnist, path: mnist.npz, validation_from: train, validation_fraction: 0.15}"
    script, ((x, y), (x_val, y_val)) = load(write_spec, tmp_path, dataset)
    assert (len(x), len(y), len(x_val), len(y_val)) == (170, 170, 30, 30)  # int(200 * 0.15) held out
    seen = lambda images: {image.tobytes() for image in np.round(images * 255).astype(np.uint8).reshape(-1, 784)}  # noqa: E731
    train, val = seen(x), seen(x_val)
    assert not train & val and train | val == seen(x_all / 255)  # disjoint, and together the whole training split
    assert not (train | val) & seen(test / 255)  # the test split is left alone
    again = script.load_data({**script.CONFIG["dataset"], "path": str(tmp_path / "mnist.npz")})
    assert np.array_equal(again[1][0], x_val)  # the same split every time (shuffle_seed)
    other = script.load_data({**script.CONFIG["dataset"], "path": str(tmp_path / "mnist.npz"), "shuffle_seed": 1})
    assert seen(other[1][0]) != val
    subset = dataset.replace("}", ", subset: {train: 100, validation: 20}}")
    _, ((x_sub, _), (v_sub, _)) = load(write_spec, tmp_path, subset)
    assert np.array_equal(x_sub, x[:100]) and np.array_equal(v_sub, x_val[:20])


def test_torchvision_validation_from_train_holds_out_of_the_train_split(write_spec, tmp_path):
    from tests.e2e.test_data_sources import write_fashion_mnist as write_torchvision_fashion_mnist

    write_torchvision_fashion_mnist(tmp_path / "data", n_train=80, n_test=30)
    text = spec(
        "{type: torchvision, name: FashionMNIST, root: data, validation_from: train, validation_fraction: 0.25}"
    )
    script = script_of(write_spec, text)
    train, val = script.load_datasets({**script.CONFIG["dataset"], "root": str(tmp_path / "data")})
    assert (len(train), len(val)) == (60, 20) and train.dataset is val.dataset and len(train.dataset) == 80
    assert not set(train.indices) & set(val.indices) and set(train.indices) | set(val.indices) == set(range(80))
    none = script_of(
        write_spec, text.replace("validation_from: train, validation_fraction: 0.25", "validation_from: none")
    )
    assert none.load_datasets({**none.CONFIG["dataset"], "root": str(tmp_path / "data")})[1] is None


@pytest.mark.parametrize("framework", ["torch", "tensorflow"])
def test_validation_from_none_compiles_no_validation(write_spec, tmp_path, framework):
    write_mnist_npz(tmp_path / "mnist.npz", n_train=64, n_test=16)
    text = spec("{type: keras_dataset, name: mnist, path: mnist.npz, validation_from: none}", framework)
    source = source_of(write_spec, text)
    assert "def evaluate(" not in source and "validation_data=" not in source and "x_val" not in source
    assert "no validation (dataset.validation_from: none)" in source
    lean = "tune: {metric: train_loss, mode: min, space: {training.optimizer.lr: {uniform: [0.01, 0.1]}}}\n"
    script = script_of(write_spec, text + lean + "scaling: {num_workers: 1}\n")  # a trial per process: no Train
    (x, _), val = script.load_data({**script.CONFIG["dataset"], "path": str(tmp_path / "mnist.npz")})
    assert len(x) == 64 and val is None
    config = {**script.CONFIG, "dataset": {**script.CONFIG["dataset"], "path": str(tmp_path / "mnist.npz")}}
    loaders = script.make_loaders(config, 0, 1) if framework == "torch" else script.make_loaders(config, 0, 1, 0)
    assert loaders[2 if framework == "torch" else 1] is None


def test_only_the_chosen_reader_is_compiled(write_spec):
    mnist = source_of(write_spec, spec("{type: keras_dataset, name: mnist}"))
    assert "def read_mnist(" in mnist and "import pickle" not in mnist and "gzip" not in mnist and "cifar" not in mnist
    cifar = source_of(write_spec, spec("{type: keras_dataset, name: cifar100}", "tensorflow"))
    assert "def read_cifar100(" in cifar and "import pickle" in cifar and "read_mnist" not in cifar
    assert "import gzip" in source_of(write_spec, spec("{type: keras_dataset, name: fashion_mnist}"))
    assert "read_mnist" not in source_of(write_spec, spec("{type: digits}"))


def test_subsets_searches_and_sizes_of_keras_data_sets(write_spec):
    found = problems(write_spec, spec("{type: keras_dataset, name: cifar10, subset: {train: 50001, validation: 10}}"))
    assert [(code, path) for code, path, *_ in found] == [("E100", "dataset.subset.train")]
    held = "{type: keras_dataset, name: mnist, validation_from: train, subset: {train: 10, validation: 12001}}"
    assert [(code, path) for code, path, *_ in problems(write_spec, spec(held))] == [
        ("E100", "dataset.subset.validation")
    ]
    none = "{type: keras_dataset, name: mnist, validation_from: none, subset: {train: 10, validation: 5}}"
    assert [(code, path) for code, path, *_ in problems(write_spec, spec(none))] == [
        ("W320", "dataset.subset.validation")
    ]
    search = "tune:\n  metric: val_loss\n  mode: min\n  space:\n    dataset.{key}: {{choice: {values}}}\n"
    for key, values, code in (
        ("validation_from", "[test, train]", "E213"),
        ("name", "[mnist, fashion_mnist]", "E213"),
        ("validation_fraction", "[0.1, 0.2]", "E221"),
    ):
        found = problems(
            write_spec, spec("{type: keras_dataset, name: mnist}", extra=search.format(key=key, values=values))
        )
        assert (code, f"tune.space[dataset.{key}]") in [(code, path) for code, path, *_ in found], found
    held_search = search.format(key="validation_fraction", values="[0.1, 0.2]")
    assert (
        problems(write_spec, spec("{type: keras_dataset, name: mnist, validation_from: train}", extra=held_search))
        == []
    )


def test_a_local_run_without_the_files_is_refused_before_ray_starts(write_spec, tmp_path, monkeypatch):
    import types

    output = tmp_path / "build" / "script.py"  # compiled where it runs: its relative paths start there
    source = api.compile(api.load(write_spec(spec("{type: keras_dataset, name: cifar10, path: keras}"))), str(output))
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    script = types.ModuleType("compiled")
    script.__file__ = str(output)
    exec(compile(source, script.__file__, "exec"), script.__dict__)
    with pytest.raises(SystemExit) as refused:
        script.prepare(script.CONFIG, None)
    assert (
        str(tmp_path / "keras") in str(refused.value.code) and "cifar-10-batches-py/data_batch_1" in refused.value.code
    )
    with pytest.raises(SystemExit, match="data_batch_1"):  # "local" named: a Ray of its own all the same
        script.prepare(script.CONFIG, "local")
    monkeypatch.setenv("RAY_ADDRESS", "local")  # likewise
    with pytest.raises(SystemExit, match="data_batch_1"):
        script.prepare(script.CONFIG, None)
    monkeypatch.delenv("RAY_ADDRESS")
    write_cifar10(tmp_path / "keras", per_batch=2, n_test=2)
    config = script.prepare(script.CONFIG, None)
    assert config["dataset"]["path"] == str(tmp_path / "keras")
    (tmp_path / "keras" / "cifar-10-batches-py" / "data_batch_1").unlink()
    assert script.prepare(script.CONFIG, "auto")  # a cluster's workers have their own disks
    monkeypatch.setenv("RAY_ADDRESS", "10.0.0.1:6379")  # a submitted job's driver, likewise
    assert script.prepare(script.CONFIG, None)


SUBSET = "{train: 9, validation: 9}"


def test_every_name_framework_and_validation_source_compiles_ruff_clean(write_spec, tmp_path):
    import subprocess
    import sys

    from tests.conftest import ROOT

    scripts = tmp_path / "scripts"
    scripts.mkdir()
    for name in ("mnist", "fashion_mnist", "cifar10", "cifar100"):
        for framework in ("torch", "tensorflow"):
            for source in ("test", "train", "none"):
                dataset = f"{{type: keras_dataset, name: {name}, validation_from: {source}, subset: {SUBSET}}}"
                text = spec(dataset, framework)
                (scripts / f"{name}_{framework}_{source}.py").write_text(source_of(write_spec, text), encoding="utf-8")
    for source in ("test", "train", "none"):
        text = spec(
            f"{{type: torchvision, name: CIFAR10, validation_from: {source}, subset: {{train: 9, validation: 9}}}}"
        )
        (scripts / f"torchvision_{source}.py").write_text(source_of(write_spec, text), encoding="utf-8")
    command = [sys.executable, "-m", "ruff", "check", "--config", str(ROOT / "pyproject.toml"), "--no-cache"]
    done = subprocess.run([*command, str(scripts)], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stdout
    assert len(list(scripts.iterdir())) == 27
