"""SPEC §12's dataset.augment and dataset.loader_workers: the problems of what cannot work, the code each
compiles to (only when used), and the compiled functions called directly on real torch / Keras and real data
(no Ray started): augmentation changes the training batches, each image on its own, never the validation ones."""

from __future__ import annotations

import numpy as np
import pytest

from specc import api
from tests.conftest import MINIMAL
from tests.unit.compiler.test_cnn_and_data_options import LEAN, data_spec
from tests.unit.compiler.test_tensorflow_script import script_of, source_of

CROP = "{random_crop: {size: 8, padding: 2}}"
AUGMENT = f"[horizontal_flip, {CROP}, {{random_rotation: 20}}, {{color_jitter: {{brightness: 0.3, contrast: 0.3}}}}]"


def digits(fields: str = "") -> str:
    return "{type: digits" + fields + "}"


def codes(write_spec, text: str) -> list[tuple[str, str]]:
    """(code, dotted path) of each problem `specc validate` finds (beside data.py, the custom data set's module)."""
    write_spec("def load(**kwargs): ...\n", "data.py")
    return [(p.code, p.path) for p in api.check_file(write_spec(text)).problems]


# -- problems -------------------------------------------------------------------------------------
AT = "dataset.augment.0."
CNN_DIGITS = MINIMAL.replace("{type: mlp, hidden_sizes: [16]}", "{type: cnn, channels: [4]}")


@pytest.mark.parametrize(
    ("dataset", "framework", "expected"),
    [
        ("{type: iris, augment: [horizontal_flip]}", "torch", ("E224", "dataset.augment")),
        ("{type: synthetic_classification, augment: [vertical_flip]}", "torch", ("E224", "dataset.augment")),
        ("{type: custom, factory: 'data:load', augment: [horizontal_flip]}", "torch", ("E224", "dataset.augment")),
        (digits(", augment: [{random_crop: {size: 12, padding: 1}}]"), "torch", ("E224", AT + "random_crop.size")),
        (digits(", augment: [{random_crop: {size: 6}}]"), "torch", ("E224", AT + "random_crop.size")),
        (digits(", augment: [{random_resized_crop: {size: 16}}]"), "torch", ("E224", AT + "random_resized_crop.size")),
        (digits(", augment: [{random_resized_crop: {size: 8}}]"), "tensorflow", ("E207", AT + "random_resized_crop")),
        (digits(", augment: [{color_jitter: {saturation: 0.2}}]"), "torch", ("E224", AT + "color_jitter.saturation")),
        (digits(", loader_workers: 2"), "tensorflow", ("E207", "dataset.loader_workers")),
        (digits(", loader_workers: 2"), "torch", ("W320", "dataset.loader_workers")),
    ],
)  # fmt: skip
def test_what_cannot_work_is_a_located_problem(write_spec, dataset, framework, expected):
    text = CNN_DIGITS.replace("{type: digits}", dataset).replace("framework: torch", f"framework: {framework}")
    if dataset.startswith("{type: iris") or dataset.startswith("{type: synth") or "custom" in dataset:
        text = text.replace("{type: cnn, channels: [4]}", "{type: mlp}")
    assert codes(write_spec, text) == [expected]


def test_schema_refuses_unknown_and_malformed_augmentations(write_spec):
    text = CNN_DIGITS.replace(
        "{type: digits}", "{type: digits, augment: [{random_crop: {size: 8}, x: 1}, {color_jitter: {}}, 3, '1 x']}"
    )
    found = codes(write_spec, text)
    assert [path for _, path in found] == [
        "dataset.augment.0",
        "dataset.augment.1.color_jitter",  # the tag is not repeated in the path
        "dataset.augment.2",
        "dataset.augment.3",  # not a class's name (nor the `named` tag in the path)
    ]


def test_an_unknown_name_is_refused_with_the_closest_spelling(write_spec):
    """A word that is no flip names a class of the framework's: `flip` is none, and the closest names are offered."""
    text = CNN_DIGITS.replace("{type: digits}", "{type: digits, augment: [horizontal_fip]}")
    found = api.check_file(write_spec(text)).problems
    assert [(p.code, p.path) for p in found] == [("E105", "dataset.augment.0.horizontal_fip")]
    assert "horizontal_flip" in found[0].hint


def test_searched_augment_or_loader_workers_is_a_problem(write_spec):
    text = CNN_DIGITS.replace("{type: digits}", digits(f", augment: {AUGMENT}")) + (
        "tune:\n  metric: val_accuracy\n  mode: max\n  space:\n    dataset.augment.0: {choice: [vertical_flip]}\n"
    )
    assert ("E224", "tune.space[dataset.augment.0]") in codes(write_spec, text)


def test_valid_augmentations_on_digits_pass_on_both_frameworks(write_spec):
    for framework in ("torch", "tensorflow"):
        text = CNN_DIGITS.replace("{type: digits}", digits(f", augment: {AUGMENT}"))
        assert codes(write_spec, text.replace("framework: torch", f"framework: {framework}")) == []


# -- the code -------------------------------------------------------------------------------------
def test_unused_fields_compile_to_todays_code(write_spec):
    for framework in ("torch", "tensorflow"):
        source = source_of(write_spec, data_spec(digits(), framework))
        for absent in ("augment", "v2", "each_image", "num_workers=", "persistent_workers"):
            assert absent not in source.split("RESOLVED_SPEC")[0], (framework, absent)


def test_torch_augment_compiles_to_v2_transforms_in_order(write_spec):
    source = source_of(write_spec, data_spec(digits(f", augment: {AUGMENT}")))
    assert "from torchvision.transforms import v2\n" in source
    assert (
        "v2.RandomHorizontalFlip(),\n            v2.RandomCrop(8, padding=2),\n            v2.RandomRotation(20),\n"
        "            v2.ColorJitter(brightness=0.3, contrast=0.3),"
    ) in source
    assert 'Batches(x_train, y_train, data["batch_size"], seed=data["shuffle_seed"], augment=augment)' in source
    assert '"augment"' not in source.split("RESOLVED_SPEC")[0]  # written in, not read from the config


def test_tensorflow_augment_compiles_to_keras_layers_on_the_training_batches(write_spec):
    source = source_of(write_spec, data_spec(digits(f", augment: {AUGMENT}"), "tensorflow"))
    for layer in (
        'keras.layers.RandomFlip("horizontal")',
        "keras.layers.ZeroPadding2D(2),\n            keras.layers.RandomCrop(8, 8)",
        'keras.layers.RandomRotation(20 / 360, fill_mode="constant")',
        "keras.layers.RandomBrightness(0.3, value_range=(0, 1))",
        "keras.layers.RandomContrast(0.3)",
    ):
        assert layer in source
    assert "return batches.map(each_image(augment)).prefetch(tf.data.AUTOTUNE)" in source
    assert "train = augmented(train)" in source
    assert "val = val.map" not in source


TORCHVISION = """\
specc: 1
name: tv
framework: torch
model: {type: cnn, channels: [4]}
dataset: {type: torchvision, name: FashionMNIST, root: ./data, batch_size: 16, FIELDS}
training: {epochs: 1}
"""


def test_torchvision_augment_goes_before_to_tensor_on_the_training_split_only(write_spec):
    source = source_of(write_spec, TORCHVISION.replace("FIELDS", "augment: [horizontal_flip], resize: 32"))
    assert "augment = [v2.RandomHorizontalFlip()]" in source
    assert "train_transform = torchvision.transforms.Compose(steps[:1] + augment + steps[1:])" in source
    assert 'train=True, **{**options, "transform": train_transform})' in source
    assert "train=False, **options)" in source
    plain = source_of(write_spec, TORCHVISION.replace("FIELDS", "augment: [horizontal_flip]"))
    assert "train_transform = torchvision.transforms.Compose(augment + steps)" in plain


def test_loader_workers_are_arguments_of_both_dataloaders(write_spec):
    source = source_of(write_spec, TORCHVISION.replace("FIELDS", "loader_workers: 2"))
    assert source.count("num_workers=2, persistent_workers=True") == 2
    assert codes(write_spec, TORCHVISION.replace("FIELDS", "loader_workers: 2")) == []


# -- the compiled functions on real data ----------------------------------------------------------
def torch_batches(write_spec, dataset: str):
    """The first training and validation batches of a one-process (lean) torch script."""
    script = script_of(write_spec, data_spec(dataset) + LEAN)
    train, train_loader, val_loader, _, _ = script.make_loaders(script.CONFIG, 0, 1)
    script.start_epoch(train, train_loader, 0)
    return next(iter(train_loader)), next(iter(val_loader))


def keras_batches(write_spec, dataset: str):
    script = script_of(write_spec, data_spec(dataset, "tensorflow") + LEAN)
    train, val, _, _ = script.make_loaders(script.CONFIG, 0, 1, 0)
    return [t.numpy() for t in next(iter(train))], [t.numpy() for t in next(iter(val))]


@pytest.mark.parametrize("batches", [torch_batches, keras_batches])
def test_augment_changes_training_batches_but_never_validation_ones(write_spec, batches):
    (x_plain, y_plain), (v_plain, w_plain) = batches(write_spec, digits())
    (x_aug, y_aug), (v_aug, w_aug) = batches(write_spec, digits(f", augment: {AUGMENT}"))
    x_plain, x_aug = np.asarray(x_plain), np.asarray(x_aug)
    assert x_aug.shape == x_plain.shape and np.array_equal(np.asarray(y_aug), np.asarray(y_plain))  # same examples
    changed = [not np.allclose(a, b) for a, b in zip(x_aug, x_plain, strict=True)]
    assert sum(changed) > len(changed) // 2  # most images changed (a flip of a symmetric digit may not show)
    assert x_aug.min() >= 0.0  # (Keras' RandomContrast, unlike torchvision's ColorJitter, does not clip at 1)
    assert np.array_equal(np.asarray(v_aug), np.asarray(v_plain)) and np.array_equal(
        np.asarray(w_aug), np.asarray(w_plain)
    )


def test_torch_crop_differs_per_image(write_spec):
    """v2.RandomCrop given a batch draws one offset for it: the compiled Batches calls it once per image."""
    import torch

    script = script_of(write_spec, data_spec(digits(f", augment: [{CROP}]")) + LEAN)
    image = np.arange(64, dtype=np.float32).reshape(1, 1, 8, 8) / 64 + 0.01
    same = np.repeat(image, 32, axis=0)
    augment = script.v2.Compose([script.v2.RandomCrop(8, padding=2)])
    torch.manual_seed(0)
    batch, _ = script.Batches(same, np.zeros(32, np.int64), 32, augment=augment)[0]
    assert len({tuple(np.flatnonzero(b.numpy() == 0)) for b in batch}) > 5  # many different shifts
    assert len({tuple(np.flatnonzero(b.numpy() == 0)) for b in augment(torch.tensor(same))}) == 1  # v2 on a batch


def test_keras_crop_and_contrast_differ_per_image(write_spec):
    """Keras' RandomCrop and RandomContrast draw once per batch; each_image calls them per image."""
    script = script_of(
        write_spec, data_spec(digits(f", augment: [{CROP}, {{color_jitter: {{contrast: 0.5}}}}]"), "tensorflow") + LEAN
    )
    image = np.arange(64, dtype=np.float32).reshape(1, 8, 8, 1) / 64 + 0.01
    same = np.repeat(image, 16, axis=0)
    augment = script.keras.Sequential(
        [
            script.keras.layers.ZeroPadding2D(2),
            script.keras.layers.RandomCrop(8, 8),
            script.keras.layers.RandomContrast(0.5),
        ]
    )
    images, _ = script.each_image(augment)(script.tf.constant(same), None)
    assert len({row.tobytes() for row in images.numpy()}) == 16
    assert len({row.tobytes() for row in augment(same, training=True).numpy()}) == 1  # Keras on a batch: one draw


def test_torch_augmentation_is_reproducible_from_the_training_seed(write_spec):
    import torch

    def first_batch():
        torch.manual_seed(0)  # what the compiled training function does with training.seed + rank
        (x, _), _ = torch_batches(write_spec, digits(f", augment: {AUGMENT}"))
        return x.numpy()

    assert np.array_equal(first_batch(), first_batch())


def test_torchvision_loader_workers_start_worker_processes_and_augment_there(write_spec, tmp_path):
    """Real FashionMNIST files (idx format, as torchvision reads them) through the compiled DataLoaders: two worker
    processes each, kept between epochs; the training images are augmented, the validation images are not."""
    import os

    import torch
    import torchvision

    from tests.e2e.test_data_sources import write_fashion_mnist

    write_fashion_mnist(tmp_path / "data", n_train=64, n_test=32)
    fields = "loader_workers: 2, augment: [{random_crop: {size: 28, padding: 4}}]"
    script = script_of(write_spec, TORCHVISION.replace("FIELDS", fields) + LEAN)
    _, train_loader, val_loader, shape, _ = script.make_loaders(script.CONFIG, 0, 1)
    assert (train_loader.num_workers, train_loader.persistent_workers, val_loader.num_workers) == (2, True, 2)
    x, _ = next(iter(train_loader))
    workers = train_loader._iterator._workers  # the persistent iterator's worker processes
    assert len(workers) == 2 and all(w.is_alive() and w.pid != os.getpid() for w in workers)
    assert tuple(x.shape[1:]) == shape == (1, 28, 28)

    # shifted by the padded crop: a border row or column of zeros (the written images have none)
    def shifted(images):
        return sum(bool((im[0, 0] == 0).all() or (im[0, -1] == 0).all() or (im[0, :, 0] == 0).all()
                        or (im[0, :, -1] == 0).all()) for im in images)  # fmt: skip

    assert shifted(x) >= len(x) - 2
    v, _ = next(iter(val_loader))
    as_read = torchvision.datasets.FashionMNIST(
        str(tmp_path / "data"), train=False, transform=torchvision.transforms.ToTensor()
    )
    assert shifted(v) == 0 and torch.equal(v, torch.stack([as_read[i][0] for i in range(len(v))]))


def test_keras_saturation_layer_changes_colour_images_each_on_its_own(write_spec):
    """Saturation has no tf_keras layer: the compiled code wraps tf.image.random_saturation. No built-in
    tensorflow data set has colour images yet, so its code (keras_augment) is run in a compiled script here."""
    from specc.compiler.keras_fragments import keras_augment
    from specc.spec.augment import ColorJitter

    layers = keras_augment([ColorJitter.model_validate({"color_jitter": {"saturation": 0.5}})])
    assert layers == ["keras.layers.Lambda(lambda images: tf.image.random_saturation(images, 0.5, 1.5))"]
    script = script_of(write_spec, data_spec(digits(f", augment: [{CROP}]"), "tensorflow") + LEAN)
    augment = script.keras.Sequential([eval(layer, script.__dict__) for layer in layers])
    rng = np.random.default_rng(0)
    same = np.repeat(rng.uniform(0, 1, (1, 4, 4, 3)).astype(np.float32), 8, axis=0)
    images, _ = script.each_image(augment)(script.tf.constant(same), None)
    assert len({row.tobytes() for row in images.numpy()}) == 8


def test_keras_augmentation_is_reproducible_from_the_training_seed(write_spec):
    script = script_of(write_spec, data_spec(digits(f", augment: {AUGMENT}"), "tensorflow") + LEAN)

    def batches(seed):
        script.keras.utils.set_random_seed(seed)  # what the compiled training function does with training.seed + rank
        train, _, _, _ = script.make_loaders(script.CONFIG, 0, 1, 0)
        return np.concatenate([x.numpy() for x, _ in train.take(3)])

    assert np.array_equal(batches(0), batches(0))
    assert not np.array_equal(batches(0), batches(1))


def test_an_mlp_on_digits_is_augmented_as_images(write_spec):
    """digits load as 1x8x8 images for an mlp too (it flattens them itself): the crop sees images, not rows."""
    text = data_spec(digits(f", augment: [{CROP}]")) + LEAN
    assert codes(write_spec, text) == []
    (x, _), _ = torch_batches(write_spec, digits(f", augment: [{CROP}]"))
    assert tuple(x.shape[1:]) == (1, 8, 8)
