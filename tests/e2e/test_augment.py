"""SPEC §12's dataset.augment and loader_workers on a real local Ray: inside a Ray Train worker the training
batches are augmented and the validation batches are exactly as without augment (torch); a Keras digits cnn trains
with augmentation in one Ray Train worker (Keras' layers run inside MultiWorkerMirroredStrategy's input pipeline
there; 2 workers would cost ~15 s more for nothing the layers see), to a sensible accuracy; a torchvision data set is
read by 2 DataLoader worker processes, seen alive from inside the Ray Train worker. (Both frameworks' compiled
make_loaders are compared batch by batch in tests/unit/compiler/test_augment.py.)

The torch cnn with the same three augmentations is specs/digits_cnn_augment.yaml, which test_examples_smoke trains
(in Ray Train's local mode: the same train_func and make_loaders); torch's augmentation inside a Train worker is the
batch-by-batch test here. Training that cnn here as well, to an accuracy, cost 39 s of CI."""

from __future__ import annotations

import math

import pytest

from .conftest import read_results, run_spec
from .fixtures.recording_models import read_records
from .test_data_sources import write_fashion_mnist

# CI runs this module in turn (share 3, tests/e2e/conftest.py): augmentation on both frameworks
pytestmark = [pytest.mark.slow, pytest.mark.in_turn(3)]

AUGMENTED = """\
specc: 1
name: augmented-{framework}
framework: {framework}
model: {{type: cnn, channels: [16, 32], hidden_sizes: [64]}}
dataset:
  type: digits
  batch_size: 32
  augment: [{{random_crop: {{size: 8, padding: 1}}}}, {{random_rotation: 10}}, {{color_jitter: {{contrast: 0.2}}}}]
training:
  epochs: 3
  optimizer: {{type: adam, lr: 0.003}}
  metrics: [accuracy]
scaling: {{num_workers: 1}}
"""


def test_a_keras_digits_cnn_trains_with_augmentation(tmp_path, spec_file, local_ray):
    spec = spec_file(AUGMENTED.format(framework="tensorflow"))
    result = run_spec(spec, storage_path=tmp_path / "runs", quiet=True)

    header, rows = read_results(result.run_dir)
    assert header == ["epoch", "train_loss", "val_loss", "val_accuracy", "num_parameters"]
    assert [row["epoch"] for row in rows] == [1, 2, 3]
    assert all(math.isfinite(row["train_loss"]) and math.isfinite(row["val_loss"]) for row in rows)
    assert rows[-1]["train_loss"] < rows[0]["train_loss"]
    assert rows[-1]["val_accuracy"] > 0.6  # 10 classes: chance is 0.1


SUMMED = """\
specc: 1
name: summed
framework: torch
model: {{type: custom, factory: "e2e_recording_models:make", kwargs: {{log: "{log}"}}}}
dataset: {{type: digits, batch_size: 64, subset: {{train: 256, validation: 128}}{augment}}}
training: {{epochs: 1}}
scaling: {{num_workers: 1}}
"""


def test_inside_ray_train_augment_changes_training_batches_but_never_validation_ones(
    tmp_path, spec_file, factory_module, local_ray
):
    """The same run with and without augment, its model recording each batch's pixel sum: the split and the
    seeded order are the same, so only the augmentation can make the batches differ."""
    factory_module("recording_models.py", "e2e_recording_models")
    seen = {}
    for name, augment in (("plain", ""), ("augmented", ", augment: [{random_crop: {size: 8, padding: 2}}]")):
        log = tmp_path / f"{name}.log"
        run_spec(spec_file(SUMMED.format(log=log, augment=augment)), storage_path=tmp_path / name, quiet=True)
        seen[name] = [(record["mode"], record["pixel_sum"]) for record in read_records(log)]
    kinds = [kind for kind, _sum in seen["plain"]]
    assert kinds == [kind for kind, _sum in seen["augmented"]] == ["train"] * 4 + ["eval"] * 2
    pairs = list(zip(seen["plain"], seen["augmented"], strict=True))
    assert all(plain != augmented for (kind, plain), (_, augmented) in pairs if kind == "train")  # shifted out
    assert all(plain == augmented for (kind, plain), (_, augmented) in pairs if kind == "eval")


def test_loader_workers_read_torchvision_files_in_worker_processes(tmp_path, spec_file, factory_module, local_ray):
    factory_module("recording_models.py", "e2e_recording_models")
    write_fashion_mnist(tmp_path / "data", n_train=64, n_test=32)
    log = tmp_path / "forward.log"
    spec = spec_file(
        f"""\
        specc: 1
        name: loader-workers
        framework: torch
        model: {{type: custom, factory: "e2e_recording_models:make", kwargs: {{log: "{log}"}}}}
        dataset:
          type: torchvision
          name: FashionMNIST
          root: ./data
          batch_size: 16
          loader_workers: 2
          augment: [{{random_crop: {{size: 28, padding: 2}}}}]
        training: {{epochs: 2, metrics: [accuracy]}}
        scaling: {{num_workers: 1}}
        """
    )
    result = run_spec(spec, storage_path=tmp_path / "runs", quiet=True)

    calls = [(record["mode"], record["pid"], record["children"]) for record in read_records(log)]
    assert len({pid for _kind, pid, _children in calls}) == 1  # the one Ray Train worker
    # 64 training and 32 validation images in batches of 16, two epochs
    assert [kind for kind, _pid, _children in calls] == (["train"] * 4 + ["eval"] * 2) * 2
    # the training loader's 2 workers from the first batch on; the validation loader's 2 more once it has started
    # (persistent_workers keeps them between epochs)
    assert [children for _kind, _pid, children in calls] == [2] * 4 + [4] * 2 + [4] * 6
    _, rows = read_results(result.run_dir)
    assert [row["epoch"] for row in rows] == [1, 2] and all(0 <= row["val_accuracy"] <= 1 for row in rows)
