"""SPEC §12's cnn fields (pool, padding, batch_norm) and dataset fields (shuffle, standardize, global_batch_size):
what each compiles to, and the compiled functions called directly on real torch / Keras and real data (no Ray
started). Left at their defaults they compile to today's code (tests/golden shows it)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import MINIMAL
from tests.unit.compiler.test_tensorflow_script import script_of, source_of

CNN = "{type: cnn, channels: [4, 8], hidden_sizes: [16]"
SEARCH = "tune:\n  metric: val_accuracy\n  mode: max\n  num_samples: 2\n  space:\n"


def cnn_spec(fields: str, framework: str = "torch") -> str:
    return MINIMAL.replace("{type: mlp, hidden_sizes: [16]}", CNN + fields + "}").replace(
        "framework: torch", f"framework: {framework}"
    )


def torch_model(write_spec, fields: str):
    script = script_of(write_spec, cnn_spec(fields))
    return script, script.build_model(script.CONFIG["model"], (1, 8, 8), 10)


def keras_model(write_spec, fields: str):
    script = script_of(write_spec, cnn_spec(fields, "tensorflow"))
    return script, script.build_model(script.CONFIG["model"], (8, 8, 1), 10)


def torch_parameters(model) -> int:
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


@pytest.mark.parametrize(
    "fields",
    [
        "",  # 8 -> pool 4 -> pool 2: 8 channels of 2x2
        ", pool: null",  # 8 channels of 8x8
        ", pool: {size: 3, stride: 1}",  # 8 -> 6 -> 4
        ", batch_norm: true",
        ", padding: valid, pool: null, batch_norm: true",  # 8 -> 6 -> 4
        ", padding: valid, kernel_size: 2",  # 8 -> 7 -> pool 3 -> 2 -> pool 1
    ],
)
def test_torch_and_keras_cnns_have_the_same_trainable_parameters(write_spec, fields):
    _, torch_net = torch_model(write_spec, fields)
    _, keras_net = keras_model(write_spec, fields)
    import torch

    assert torch_net(torch.zeros(2, 1, 8, 8)).shape == (2, 10)
    assert keras_net(np.zeros((2, 8, 8, 1), np.float32)).shape == (2, 10)
    keras_trainable = sum(int(np.prod(w.shape)) for w in keras_net.trainable_weights)
    assert torch_parameters(torch_net) == keras_trainable


def test_cnn_fields_change_the_layers(write_spec):
    from torch import nn

    def kinds(fields):
        return [type(layer).__name__ for layer in torch_model(write_spec, fields)[1][0]]

    assert kinds("") == ["Conv2d", "ReLU", "MaxPool2d", "Conv2d", "ReLU", "MaxPool2d", "Flatten"]
    assert kinds(", pool: null, batch_norm: true") == [
        "Conv2d",
        "BatchNorm2d",
        "ReLU",
        "Conv2d",
        "BatchNorm2d",
        "ReLU",
        "Flatten",
    ]
    _, net = torch_model(write_spec, ", padding: valid, pool: {size: 3, stride: 1}, kernel_size: 2")
    convs = [layer for layer in net[0] if isinstance(layer, nn.Conv2d)]
    pools = [layer for layer in net[0] if isinstance(layer, nn.MaxPool2d)]
    assert [conv.padding for conv in convs] == ["valid", "valid"]
    assert [(pool.kernel_size, pool.stride) for pool in pools] == [(3, 1), (3, 1)]
    # 8 -> conv 7 -> pool 5 -> conv 4 -> pool 2: 8 channels of 2x2
    assert net[1].in_features == 8 * 2 * 2


def test_cnn_defaults_keep_todays_code_and_config(write_spec):
    source = source_of(write_spec, cnn_spec(""))
    assert "nn.MaxPool2d(2)" in source and 'padding=cfg["kernel_size"] // 2' in source
    assert '"pool"' not in source and '"padding"' not in source and "BatchNorm2d" not in source
    no_pool = source_of(write_spec, cnn_spec(", pool: null"))
    assert "MaxPool2d" not in no_pool and '"pool"' not in no_pool


def test_searched_cnn_fields_are_read_from_the_trial_config(write_spec):
    spec = (
        cnn_spec("") + SEARCH + "    model.batch_norm: {choice: [true, false]}\n    model.pool.size: {choice: [2, 3]}\n"
    )
    source = source_of(write_spec, spec)
    assert 'if cfg["batch_norm"]:\n            blocks.append(nn.BatchNorm2d(width))' in source
    assert 'nn.MaxPool2d(cfg["pool"]["size"], cfg["pool"]["stride"])' in source
    script = script_of(write_spec, spec)
    on = script.build_model({**script.CONFIG["model"], "batch_norm": True}, (1, 8, 8), 10)
    off = script.build_model({**script.CONFIG["model"], "batch_norm": False}, (1, 8, 8), 10)
    assert torch_parameters(on) == torch_parameters(off) + 2 * (4 + 8)


def data_spec(dataset: str, framework: str = "torch") -> str:
    return MINIMAL.replace("{type: digits}", dataset).replace("framework: torch", f"framework: {framework}")


def test_standardize_false_leaves_tabular_features_as_they_are(write_spec):
    from sklearn.datasets import load_iris

    raw = load_iris().data.astype(np.float32)
    for framework in ("torch", "tensorflow"):
        scaled = script_of(write_spec, data_spec("{type: iris}", framework))
        (x_train, _), _ = scaled.load_data(scaled.CONFIG["dataset"])
        assert np.allclose(x_train.mean(axis=0), 0, atol=1e-5)
        plain = script_of(write_spec, data_spec("{type: iris, standardize: false}", framework))
        assert "def standardize" not in source_of(write_spec, data_spec("{type: iris, standardize: false}", framework))
        (x_train, _), (x_val, _) = plain.load_data(plain.CONFIG["dataset"])
        assert sorted(map(tuple, np.concatenate([x_train, x_val]))) == sorted(map(tuple, raw))


LEAN = SEARCH + "    training.optimizer.lr: {loguniform: [1.0e-3, 0.1]}\nscaling: {num_workers: 1}\n"


def torch_epochs(write_spec, dataset: str) -> list[list[int]]:
    """The first training batch's labels in two epochs of a one-process (lean) torch script."""
    script = script_of(write_spec, data_spec(dataset) + LEAN)
    train, train_loader, _, _, _ = script.make_loaders(script.CONFIG, 0, 1)
    seen = []
    for epoch in range(2):
        script.start_epoch(train, train_loader, epoch)
        seen.append(next(iter(train_loader))[1].tolist())
    return seen


def test_torch_shuffle_false_keeps_the_training_order(write_spec):
    shuffled = torch_epochs(write_spec, "{type: digits}")
    assert shuffled[0] != shuffled[1]
    fixed = torch_epochs(write_spec, "{type: digits, shuffle: false}")
    assert fixed[0] == fixed[1]


def test_tensorflow_shuffle_false_keeps_the_training_order(write_spec):
    def epochs(dataset):
        script = script_of(write_spec, data_spec(dataset, "tensorflow") + LEAN)
        train, _, _, _ = script.make_loaders(script.CONFIG, 0, 1, 0)
        return [next(iter(train))[1].numpy().tolist() for _ in range(2)]

    shuffled = epochs("{type: digits}")
    assert shuffled[0] != shuffled[1]
    fixed = epochs("{type: digits, shuffle: false}")
    assert fixed[0] == fixed[1]


def test_global_batch_size_is_shared_by_the_workers(write_spec):
    torch_source = source_of(
        write_spec, data_spec("{type: digits, global_batch_size: 64}") + "scaling: {num_workers: 2}\n"
    )
    assert 'batch_size = data["global_batch_size"] // world' in torch_source
    assert '"batch_size"' not in torch_source
    tf_source = source_of(
        write_spec, data_spec("{type: digits, global_batch_size: 64}", "tensorflow") + "scaling: {num_workers: 2}\n"
    )
    assert 'global_batch = data["global_batch_size"]\n' in tf_source and '"batch_size"' not in tf_source
    # one process takes the whole global batch
    script = script_of(write_spec, data_spec("{type: digits, global_batch_size: 48}") + LEAN)
    _, train_loader, _, _, _ = script.make_loaders(script.CONFIG, 0, 1)
    assert len(next(iter(train_loader))[1]) == 48
    # two workers' shares: the rank and world the script is given
    _, train_loader, val_loader, _, _ = script.make_loaders(script.CONFIG, 0, 2)
    assert len(next(iter(train_loader))[1]) == 24 and len(next(iter(val_loader))[1]) == 24
    tf = script_of(write_spec, data_spec("{type: digits, global_batch_size: 48}", "tensorflow") + LEAN)
    train, _, _, _ = tf.make_loaders(tf.CONFIG, 0, 1, 0)
    assert len(next(iter(train))[1]) == 48


def test_subset_keeps_the_first_examples_of_each_shuffled_split(write_spec):
    for framework in ("torch", "tensorflow"):
        whole = script_of(write_spec, data_spec("{type: digits}", framework))
        (x_all, _), (v_all, _) = whole.load_data(whole.CONFIG["dataset"])
        part = script_of(write_spec, data_spec("{type: digits, subset: {train: 100, validation: 40}}", framework))
        (x_train, y_train), (x_val, y_val) = part.load_data(part.CONFIG["dataset"])
        assert (len(x_train), len(y_train), len(x_val), len(y_val)) == (100, 100, 40, 40)
        assert np.array_equal(x_train, x_all[:100]) and np.array_equal(x_val, v_all[:40])
    assert 'cfg["subset"]' not in source_of(write_spec, data_spec("{type: digits}"))


def test_subset_of_rows_read_with_ray_data_is_a_limit(write_spec):
    source = source_of(
        write_spec, data_spec("{type: csv, path: rows.csv, loader: ray_data, subset: {train: 50, validation: 10}}")
    )
    assert 'train, val = train.limit(cfg["subset"]["train"]), val.limit(cfg["subset"]["validation"])' in source


SEARCHED = """\
    model.batch_norm: {choice: [true, false]}
    model.pool.stride: {choice: [1, 2]}
    model.padding: {choice: [same, valid]}
    dataset.shuffle: {choice: [true, false]}
    dataset.standardize: {choice: [true, false]}
"""


@pytest.mark.parametrize("framework", ["torch", "tensorflow"])
def test_every_new_field_searched_compiles_ruff_clean(write_spec, tmp_path, framework):
    import subprocess
    import sys

    from tests.conftest import ROOT

    source = source_of(write_spec, cnn_spec("", framework) + SEARCH + SEARCHED)
    for key in ("batch_norm", "pool", "padding", "shuffle", "standardize"):
        assert f'"{key}"' in source.split("RESOLVED_SPEC")[0]  # read from the trial's config
    script = tmp_path / "searched.py"
    script.write_text(source, encoding="utf-8")
    command = [
        sys.executable,
        "-m",
        "ruff",
        "check",
        "--config",
        str(ROOT / "pyproject.toml"),
        "--no-cache",
        str(script),
    ]
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stdout
