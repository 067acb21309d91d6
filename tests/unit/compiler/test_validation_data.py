"""SPEC §13's validation data: `validation_from: none` on file tables and image folders (every row or image trains,
no `val_*` is reported, and what needs one is refused), and `shuffle_validation` (a new order of the validation
examples each epoch: with validation_steps, a fresh sample) on every data path. The compiled loaders are called
directly on real data here (no Ray started); tests/e2e/test_named_augment.py runs them in Ray."""

from __future__ import annotations

import numpy as np
import pytest

from specc import api
from tests.conftest import MINIMAL
from tests.unit.compiler.test_cnn_and_data_options import LEAN, data_spec
from tests.unit.compiler.test_tensorflow_script import script_of, source_of

CSV = "{type: csv, path: rows.csv, validation_from: none}"
IMAGES = "{type: image_folder, path: images, image_size: [8, 8], channels: 1, validation_from: none}"


def codes(write_spec, text: str) -> list[tuple[str, str]]:
    return [(p.code, p.path) for p in api.check_file(write_spec(text)).problems]


# -- the checks -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("dataset", "extra", "expected"),
    [
        (CSV, "tune: {metric: val_loss, mode: min, num_samples: 2, space: {training.optimizer.lr: {choice: [0.1, 0.01]}}}\n", ("E201", "tune.metric")),  # noqa: E501
        (IMAGES, "stop: {when: 'val_accuracy >= 0.9'}\n", ("E201", "stop.when.0")),
        (IMAGES, "run: {checkpoint_score: {metric: val_accuracy, mode: max}}\n", ("E201", "run.checkpoint_score.metric")),  # noqa: E501
        (CSV.replace("}", ", validation_fraction: 0.3}"), "", ("E221", "dataset.validation_fraction")),
        (IMAGES.replace("}", ", validation_path: more}"), "", ("E221", "dataset.validation_path")),
        (CSV.replace("}", ", shuffle_validation: true}"), "", ("E221", "dataset.shuffle_validation")),
        ("{type: csv, path: rows.csv, validation_fraction: null}", "", ("E221", "dataset.validation_fraction")),
        ("{type: digits, validation_from: none}", "", ("E101", "dataset.validation_from")),
    ],
)  # fmt: skip
def test_what_needs_validation_is_refused_without_it(write_spec, dataset, extra, expected):
    model = "{type: cnn, channels: [4]}" if "image_folder" in dataset else "{type: mlp, hidden_sizes: [16]}"
    text = data_spec(dataset).replace("{type: mlp, hidden_sizes: [16]}", model) + extra
    assert expected in codes(write_spec, text)


@pytest.mark.parametrize("framework", ["torch", "tensorflow"])
def test_files_and_image_folders_train_without_validation(write_spec, framework):
    for dataset in (CSV, "{type: npz, path: a.npz, validation_from: none}", IMAGES):
        model = "{type: cnn, channels: [4]}" if "image_folder" in dataset else "{type: mlp, hidden_sizes: [16]}"
        text = data_spec(dataset, framework).replace("{type: mlp, hidden_sizes: [16]}", model)
        assert codes(write_spec, text) == []
        source = source_of(write_spec, text)
        code = source.split("RESOLVED_SPEC")[0]
        assert '"validation"' not in code and 'get_dataset_shard("validation")' not in code
        assert "in_validation" not in code and "import pandas" not in code  # no hash split: nothing to hold out
        assert 'get_dataset_shard("train")  # no validation split (dataset.validation_from: none)' in code
        assert "val_loss" not in source.split("def make_loaders")[1].split("\ndef ")[0]


def write_images(root, per_class: int = 6) -> None:
    from PIL import Image

    rng = np.random.default_rng(0)
    for label in ("a", "b"):
        (root / label).mkdir(parents=True)
        for index in range(per_class):
            pixels = rng.integers(0, 255, (8, 8), dtype=np.uint8)
            Image.fromarray(pixels, mode="L").save(root / label / f"{index}.png")


def test_an_image_folder_without_validation_trains_on_every_image(write_spec, tmp_path):
    write_images(tmp_path / "images")
    dataset = IMAGES.replace("}", ", loader: torch_dataloader, batch_size: 4}")
    text = data_spec(dataset).replace("{type: mlp, hidden_sizes: [16]}", "{type: cnn, channels: [4]}") + LEAN
    text = text.replace("metric: val_accuracy\n  mode: max", "metric: train_loss\n  mode: min")
    script = script_of(write_spec, text)
    config = dict(script.CONFIG)
    config["dataset"] = {**config["dataset"], "path": str(tmp_path / "images")}
    facts = script.image_lists(config["dataset"])
    assert list(facts["files"]) == ["train"] and len(facts["files"]["train"]) == 12  # every image
    config["data"] = facts
    _, train_loader, val_loader, _, _ = script.make_loaders(config, 0, 1)
    assert val_loader is None and sum(len(y) for _, y in train_loader) == 12


# -- shuffle_validation -------------------------------------------------------------------------------------------
def torch_validation_passes(write_spec, dataset: str, passes: int = 2) -> list[list[int]]:
    script = script_of(write_spec, data_spec(dataset) + LEAN)
    train, train_loader, val_loader, _, _ = script.make_loaders(script.CONFIG, 0, 1)
    seen = []
    for epoch in range(passes):
        script.start_epoch(train, train_loader, epoch)
        seen.append([int(label) for _, y in val_loader for label in y])
    return seen


def keras_validation_passes(write_spec, dataset: str, passes: int = 2) -> list[list[int]]:
    script = script_of(write_spec, data_spec(dataset, "tensorflow") + LEAN)
    _, val, _, _ = script.make_loaders(script.CONFIG, 0, 1, 0)
    return [[int(label) for _, y in val for label in y.numpy()] for _ in range(passes)]


@pytest.mark.parametrize("passes", [torch_validation_passes, keras_validation_passes])
def test_shuffle_validation_gives_a_new_order_each_epoch_of_the_same_examples(write_spec, passes):
    plain = passes(write_spec, "{type: digits}")
    assert plain[0] == plain[1]  # today: one order every epoch
    first, second = passes(write_spec, "{type: digits, shuffle_validation: true}")
    assert first != second and sorted(first) == sorted(second) == sorted(plain[0])


def test_with_validation_steps_each_epoch_validates_on_a_fresh_sample(write_spec):
    """Keras' pipeline reads the first validation_steps batches of each epoch's new order."""
    dataset = "{type: digits, shuffle_validation: true, batch_size: 16}"
    script = script_of(
        write_spec, data_spec(dataset, "tensorflow").replace("epochs: 2", "epochs: 2, validation_steps: 2") + LEAN
    )
    _, val, _, _ = script.make_loaders(script.CONFIG, 0, 1, 0)
    samples = [np.concatenate([x.numpy().reshape(len(x), -1) for x, _ in val]) for _ in range(3)]
    assert all(len(sample) == 32 for sample in samples)
    rows = [{row.tobytes() for row in sample} for sample in samples]
    assert rows[0] != rows[1] != rows[2]


def test_shuffle_validation_is_written_in_so_a_search_of_it_is_refused(write_spec):
    text = data_spec("{type: digits, shuffle_validation: true}") + LEAN.replace(
        "space:\n", "space:\n    dataset.shuffle_validation: {choice: [true, false]}\n"
    )
    assert ("E224", "tune.space[dataset.shuffle_validation]") in codes(write_spec, text)
    config = script_of(write_spec, data_spec("{type: digits, shuffle_validation: true}") + LEAN).CONFIG["dataset"]
    assert "shuffle_validation" not in config  # the script's code says it, not its CONFIG


def test_shuffle_validation_compiles_to_what_each_path_reads(write_spec):
    torch_memory = source_of(write_spec, data_spec("{type: digits, shuffle_validation: true}"))
    assert 'torch.utils.data.DataLoader(val, batch_size=data["batch_size"], shuffle=True)' in torch_memory
    images = "{type: image_folder, path: images, image_size: [8, 8], channels: 1, shuffle_validation: true}"
    cnn = "{type: cnn, channels: [4]}"
    ray_images = source_of(write_spec, data_spec(images).replace("{type: mlp, hidden_sizes: [16]}", cnn))
    assert "local_shuffle_buffer_size=4 * batch_size" in ray_images
    assert 'else ray.data.FileShuffleConfig(seed=cfg["shuffle_seed"])' in ray_images
    csv = source_of(write_spec, data_spec("{type: csv, path: rows.csv, shuffle_validation: true}", "tensorflow"))
    assert "reorder=True" in csv and "val = read_rows(cfg, shuffle_files=True)" in csv
    torch_csv = source_of(write_spec, data_spec("{type: csv, path: rows.csv, shuffle_validation: true}"))
    assert "ValidationOnDisk" not in torch_csv  # kept batches would come back in one order
    plain = source_of(write_spec, MINIMAL)
    assert "# dataset.shuffle_validation" not in plain and "local_shuffle" not in plain
