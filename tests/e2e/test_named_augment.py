"""SPEC §13's augmentations and validation data on a real local Ray, both frameworks: a transform named by its
torchvision class changes the training batches inside a Ray Train worker and never the validation ones; a Keras cnn
trains on an image folder written here with Keras' RandomTranslation and specc's random_translation, validating on
nothing (validation_from: none: no val_* reported); a CSV with validation_from: none trains on every row;
shuffle_validation gives each epoch a fresh validation sample (with validation_steps), seen in val_loss of a model
that barely moves. (Each compiled pipeline is compared batch by batch without Ray in tests/unit.)"""

from __future__ import annotations

import math

import numpy as np
import pytest

from .conftest import read_results, run_spec
from .fixtures.recording_models import read_records

# CI runs this module in turn (share 2, tests/e2e/conftest.py): named augmentations and validation data
pytestmark = [pytest.mark.slow, pytest.mark.in_turn(2)]

RECORDED = """\
specc: 1
name: recorded
framework: torch
model: {{type: custom, factory: "e2e_recording_models:make", kwargs: {{log: "{log}"}}}}
dataset: {dataset}
training: {{epochs: {epochs}}}
scaling: {{num_workers: 1}}
"""
DIGITS = "{type: digits, batch_size: 64, subset: {train: 256, validation: 128}"


def test_a_named_transform_changes_training_batches_but_never_validation_ones(
    tmp_path, spec_file, factory_module, local_ray
):
    """The same run with and without {RandomAffine: ...}: the split and the seeded order are the same, so only the
    transform can make the batches differ."""
    factory_module("recording_models.py", "e2e_recording_models")
    seen = {}
    named = ", augment: [{RandomAffine: {degrees: 0, translate: [0.25, 0.25]}}]"
    for name, augment in (("plain", ""), ("named", named)):
        log = tmp_path / f"{name}.log"
        text = RECORDED.format(log=log, dataset=DIGITS + augment + "}", epochs=1)
        run_spec(spec_file(text), storage_path=tmp_path / name, quiet=True)
        seen[name] = [(record["mode"], record["pixel_sum"]) for record in read_records(log)]
    kinds = [kind for kind, _sum in seen["plain"]]
    assert kinds == [kind for kind, _sum in seen["named"]] == ["train"] * 4 + ["eval"] * 2
    pairs = list(zip(seen["plain"], seen["named"], strict=True))
    assert all(plain != named for (kind, plain), (_, named) in pairs if kind == "train")  # shifted: edges cut off
    assert all(plain == named for (kind, plain), (_, named) in pairs if kind == "eval")


def write_digit_images(root, per_class: int = 24) -> None:
    """scikit-learn's digits 0, 1 and 2 as 8x8 grayscale PNGs, one directory per class."""
    from PIL import Image
    from sklearn.datasets import load_digits

    digits = load_digits()
    for label in (0, 1, 2):
        (root / str(label)).mkdir(parents=True)
        images = digits.images[digits.target == label][:per_class]
        for index, image in enumerate(images):
            Image.fromarray((image * 255 / 16).astype(np.uint8), mode="L").save(root / str(label) / f"{index}.png")


IMAGES = """\
specc: 1
name: translated-keras
framework: tensorflow
model: {type: cnn, channels: [8], hidden_sizes: [16]}
dataset:
  type: image_folder
  path: images
  image_size: [8, 8]
  channels: 1
  batch_size: 16
  validation_from: none
  augment:
    - {RandomTranslation: {height_factor: 0.1, width_factor: 0.1, fill_mode: nearest}}
    - {random_translation: {height: 0.1, width: 0.1, fill: reflect}}
training: {epochs: 2, optimizer: {type: adam, lr: 0.01}}
scaling: {num_workers: 1}
"""


def test_a_keras_cnn_trains_on_an_image_folder_with_translations_and_no_validation(tmp_path, spec_file, local_ray):
    write_digit_images(tmp_path / "images")
    result = run_spec(spec_file(IMAGES), storage_path=tmp_path / "runs", quiet=True)
    header, rows = read_results(result.run_dir)
    assert header == ["epoch", "train_loss", "num_parameters"]  # no val_*: validation_from is none
    assert [row["epoch"] for row in rows] == [1, 2]
    assert all(math.isfinite(row["train_loss"]) for row in rows)


def test_a_csv_without_validation_trains_on_every_row(tmp_path, spec_file, factory_module, local_ray):
    from sklearn.datasets import load_iris

    factory_module("recording_models.py", "e2e_recording_models")
    iris = load_iris()
    lines = ["a,b,c,d,label"] + [
        ",".join(map(str, [*row, label])) for row, label in zip(iris.data, iris.target, strict=True)
    ]
    (tmp_path / "iris.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    log = tmp_path / "rows.log"
    dataset = "{type: csv, path: iris.csv, batch_size: 32, validation_from: none}"
    result = run_spec(
        spec_file(RECORDED.format(log=log, dataset=dataset, epochs=2)), storage_path=tmp_path / "runs", quiet=True
    )
    header, rows = read_results(result.run_dir)
    assert not any(name.startswith("val_") for name in header) and [row["epoch"] for row in rows] == [1, 2]
    records = read_records(log)
    assert {record["mode"] for record in records} == {"train"}  # no validation pass
    assert sum(record["batch"] for record in records) == 2 * 150  # every row, each epoch


STILL = """\
specc: 1
name: still-{framework}
framework: {framework}
model: {{type: mlp, hidden_sizes: [16]}}
dataset: {{type: digits, batch_size: 16, shuffle_validation: {shuffled}}}
training: {{epochs: 3, validation_steps: 1, optimizer: {{type: sgd, lr: 1.0e-9}}}}
scaling: {{num_workers: 1}}
"""


@pytest.mark.parametrize(("framework", "shuffled"), [("torch", "true"), ("torch", "false"), ("tensorflow", "true")])
def test_shuffle_validation_validates_each_epoch_on_a_fresh_sample(tmp_path, spec_file, local_ray, framework, shuffled):
    """A model that barely moves (lr 1e-9), validated on one batch a epoch: the same batch gives the same val_loss
    every epoch; shuffle_validation's fresh batch, another."""
    spec = spec_file(STILL.format(framework=framework, shuffled=shuffled))
    result = run_spec(spec, storage_path=tmp_path / "runs", quiet=True)
    _, rows = read_results(result.run_dir)
    losses = [row["val_loss"] for row in rows]
    assert len(losses) == 3 and all(math.isfinite(loss) for loss in losses)
    spread = max(losses) - min(losses)
    if shuffled == "true":
        assert spread > 1e-3 and len({round(loss, 6) for loss in losses}) == 3, losses
    else:
        assert spread < 1e-5, losses
