"""Augmentations a spec names from its framework (SPEC §13, issue 50): every transform of torchvision.transforms.v2 and
every Keras Random* layer the loop can apply to each image validates on its framework, compiles to the call a person
writes (`v2.RandomAffine(degrees=0, translate=(0.1, 0.1))`) and, run on an image, keeps its shape; an unknown name, a
class the loop cannot drive, a wrong argument or an output of another size is a located problem. The new neutral
random_translation means the same on both frameworks: a whole-pixel shift, the uncovered pixels filled as NumPy's
pad modes fill them (nearest: edge, constant: zeros, reflect: symmetric)."""

from __future__ import annotations

import re
import string

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from specc import api, catalog
from specc.spec.augment import AUGMENTATION_NAMES, FLIPS

FRAMEWORKS = {"torch": "torch", "keras": "tensorflow"}
# A value for each required argument of the drivable classes, fitting digits' 1x8x8 images.
REQUIRED = {
    "size": 8,
    "kernel_size": 3,
    "mean": [0.5],
    "std": [0.5],
    "degrees": 10,
    "sharpness_factor": 2.0,
    "bits": 4,
    "threshold": 0.5,
    "factor": 0.2,
    "height_factor": 0.1,
    "width_factor": 0.1,
    "height": 8,
    "width": 8,
}
SMALL = {"ElasticTransform": {"sigma": 1.0}}  # its default blur kernel (sigma 5) is wider than an 8x8 image


def drivable(framework: str) -> list[catalog.Entry]:
    entries = catalog.family(framework, "augmentations").values()
    return sorted((entry for entry in entries if not entry.not_drivable), key=lambda entry: entry.name)


def spec_text(framework: str, augment: list, dataset: dict | None = None, model: dict | None = None) -> str:
    spec = {
        "specc": 1,
        "name": "augmented",
        "framework": FRAMEWORKS[framework],
        "model": model or {"type": "cnn", "channels": [4]},
        "dataset": {"type": "digits", **(dataset or {}), "augment": augment},
        "training": {"epochs": 1},
    }
    return yaml.safe_dump(spec, sort_keys=False)


def problems(write_spec, framework: str, augment: list, dataset: dict | None = None) -> list:
    return api.check_file(write_spec(spec_text(framework, augment, dataset))).problems


def arguments(entry: catalog.Entry) -> dict:
    given_ = {p.name: REQUIRED[p.name] for p in entry.params.values() if p.required and not p.supplied}
    return {**given_, **SMALL.get(entry.class_name, {})}


def compiled_calls(source: str, framework: str) -> str:
    """The text of the compiled augment list (one call per entry here), on one line."""
    start = r"v2\.Compose" if framework == "torch" else r"keras\.Sequential"
    found = re.search(start + r"\(\s*\[(.*?),?\s*\]\s*\)", source, re.DOTALL)
    return " ".join(found.group(1).split())


def key_line(text: str, name: str) -> int:
    """The 1-based line of the spec text where `name` is written as a key."""
    return next(number for number, line in enumerate(text.splitlines(), 1) if f"- {name}:" in line)


def test_every_drivable_torch_transform_validates_compiles_and_keeps_the_image_shape(write_spec):
    import torch
    from torchvision.transforms import v2

    entries = drivable("torch")
    assert len(entries) >= 28, [entry.name for entry in entries]
    image = torch.rand(1, 8, 8)
    for entry in entries:
        augment = [{entry.class_name: arguments(entry)}]
        assert problems(write_spec, "torch", augment) == [], entry.path
        source = api.compile(api.load(write_spec(spec_text("torch", augment))))
        call = compiled_calls(source, "torch").strip().rstrip(",")
        assert call.startswith(f"v2.{entry.class_name}("), (entry.path, call)
        transform = eval(call, {"v2": v2})  # the compiled expression itself
        out = transform(image)
        assert out.shape == image.shape and out.dtype == image.dtype, entry.path


def test_every_drivable_keras_layer_validates_compiles_and_keeps_the_image_shape(write_spec):
    keras = pytest.importorskip("tf_keras")

    entries = drivable("keras")
    assert {entry.class_name for entry in entries} >= {"RandomTranslation", "RandomZoom", "RandomFlip", "RandomCrop"}
    image = np.random.default_rng(0).random((1, 8, 8, 1)).astype("float32")
    for entry in entries:
        augment = [{entry.class_name: arguments(entry)}]
        assert problems(write_spec, "keras", augment) == [], entry.path
        source = api.compile(api.load(write_spec(spec_text("keras", augment))))
        call = compiled_calls(source, "keras").strip().rstrip(",")
        assert call.startswith(f"keras.layers.{entry.class_name}("), (entry.path, call)
        layer = eval(call, {"keras": keras})
        assert np.asarray(layer(image, training=True)).shape == image.shape, entry.path


def test_the_compiled_code_is_what_a_person_writes(write_spec):
    torch_source = api.compile(
        api.load(
            write_spec(
                spec_text("torch", ["horizontal_flip", {"RandomAffine": {"degrees": 0, "translate": [0.1, 0.1]}}])
            )
        )
    )
    assert "augment = v2.Compose([v2.RandomHorizontalFlip(), v2.RandomAffine(degrees=0, translate=(0.1, 0.1))])" in (
        torch_source
    )
    assert "from torchvision.transforms import v2\n" in torch_source
    keras_source = api.compile(
        api.load(
            write_spec(
                spec_text(
                    "keras",
                    [{"RandomTranslation": {"height_factor": 0.1, "width_factor": 0.1, "fill_mode": "nearest"}}],
                )
            )
        )
    )
    assert 'keras.layers.RandomTranslation(height_factor=0.1, width_factor=0.1, fill_mode="nearest")' in keras_source
    for source in (torch_source, keras_source):  # only the classes the spec names
        assert "RandomZoom" not in source and "RandomPerspective" not in source and "catalog" not in source


def test_snake_case_names_the_same_class_and_neutral_names_keep_their_fields(write_spec):
    source = api.compile(
        api.load(write_spec(spec_text("torch", [{"random_affine": {"degrees": 5}}, "RandomEqualize"])))
    )
    assert "v2.RandomAffine(degrees=5), v2.RandomEqualize()" in source
    neutral = api.compile(api.load(write_spec(spec_text("torch", [{"random_crop": {"size": 8, "padding": 1}}]))))
    assert "v2.RandomCrop(8, padding=1)" in neutral  # specc's random_crop, not torchvision's signature
    # torchvision's own RandomCrop by its class name: its own arguments
    own = api.compile(api.load(write_spec(spec_text("torch", [{"RandomCrop": {"size": 8, "padding_mode": "edge"}}]))))
    assert 'v2.RandomCrop(size=8, padding_mode="edge")' in own


@pytest.mark.parametrize("framework", ["torch", "keras"])
def test_a_class_the_loop_cannot_apply_per_image_says_why(write_spec, framework):
    blocked = [entry for entry in catalog.family(framework, "augmentations").values() if entry.not_drivable]
    assert blocked
    for entry in blocked:
        text = spec_text(framework, [{entry.class_name: {}}])
        found = api.check_file(write_spec(text)).problems
        assert [(p.code, p.path) for p in found] == [("E260", f"dataset.augment.0.{entry.class_name}")], entry.path
        assert entry.not_drivable in found[0].message and found[0].line == key_line(text, entry.class_name)


def test_batch_level_and_conversions_are_among_the_refused():
    torch_refused = {e.class_name for e in catalog.family("torch", "augmentations").values() if e.not_drivable}
    assert {"CutMix", "MixUp", "ToTensor", "ToDtype", "ToPILImage", "Pad", "RandomZoomOut", "JPEG"} <= torch_refused


@pytest.mark.parametrize(
    ("framework", "augment", "expected"),
    [
        ("torch", [{"CenterCrop": {"size": 6}}], ("E224", "dataset.augment.0.CenterCrop.size")),
        ("torch", [{"RandomResizedCrop": {"size": [8, 6]}}], ("E224", "dataset.augment.0.RandomResizedCrop.size")),
        ("torch", [{"Resize": {"size": 16}}], ("E224", "dataset.augment.0.Resize.size")),
        ("torch", [{"RandomRotation": {"degrees": 5, "expand": True}}], ("E224", "dataset.augment.0.RandomRotation.expand")),  # noqa: E501
        ("torch", [{"Grayscale": {"num_output_channels": 3}}], ("E224", "dataset.augment.0.Grayscale.num_output_channels")),  # noqa: E501
        ("torch", [{"Normalize": {"mean": [0.5, 0.5, 0.5], "std": [0.5]}}], ("E224", "dataset.augment.0.Normalize.mean")),  # noqa: E501
        ("keras", [{"RandomCrop": {"height": 6, "width": 8}}], ("E224", "dataset.augment.0.RandomCrop.height")),
        ("torch", [{"RandomAffine": {}}], ("E102", "dataset.augment.0.RandomAffine")),
        ("torch", [{"RandomAffine": {"degrees": "ten"}}], ("E103", "dataset.augment.0.RandomAffine.degrees")),
        ("keras", [{"RandomZoom": {"height_factor": 0.1, "fill_mode": "mirror"}}], ("E104", "dataset.augment.0.RandomZoom.fill_mode")),  # noqa: E501
        ("keras", [{"RandomAffine": {"degrees": 0}}], ("E105", "dataset.augment.0.RandomAffine")),
    ],
)  # fmt: skip
def test_what_cannot_work_is_located(write_spec, framework, augment, expected):
    found = problems(write_spec, framework, augment)
    assert [(p.code, p.path) for p in found] == [expected]
    if expected[0] == "E105":  # torch's class named on tensorflow: the hint says whose it is
        assert "torch's" in found[0].hint


def test_named_augmentations_are_image_only(write_spec):
    text = spec_text("torch", [{"RandomAffine": {"degrees": 5}}], model={"type": "mlp"})
    text = text.replace("type: digits", "type: iris")
    found = api.check_file(write_spec(text)).problems
    assert [(p.code, p.path) for p in found] == [("E224", "dataset.augment")]


IDENTIFIER = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,20}", fullmatch=True)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(framework=st.sampled_from(["torch", "keras"]), name=IDENTIFIER)
def test_any_unknown_name_is_e105_at_its_key_with_a_hint(write_spec, framework, name):
    known = {*FLIPS, *AUGMENTATION_NAMES, *catalog.spellings(framework, "augmentations")}
    if name in known:
        return
    text = spec_text(framework, [{name: {}}])
    found = api.check_file(write_spec(text)).problems
    assert [(p.code, p.path) for p in found] == [("E105", f"dataset.augment.0.{name}")]
    assert found[0].line == key_line(text, name) and found[0].hint


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_argument_is_checked_against_the_class_signature(write_spec, data):
    """A drivable class with its required arguments and one more key: a key it does not take is E101 listing its
    arguments; one it takes, given a value of none of its types, is E103; else no problem about that key."""
    framework = data.draw(st.sampled_from(["torch", "keras"]))
    entry = data.draw(st.sampled_from(drivable(framework)))
    key = data.draw(st.one_of(st.sampled_from(entry.settable or ("x",)), st.text(string.ascii_lowercase, min_size=1)))
    value = data.draw(st.one_of(st.booleans(), st.integers(-3, 3), st.text(string.ascii_letters, max_size=5)))
    given_ = {**arguments(entry), key: value}
    found = [p for p in problems(write_spec, framework, [{entry.class_name: given_}]) if p.path.endswith(f".{key}")]
    where = f"dataset.augment.0.{entry.class_name}.{key}"
    if key not in entry.settable:
        assert [(p.code, p.path) for p in found] == [("E101", where)]
        return
    from specc.check.named import TAKES

    param = entry.params[key]
    if not any(TAKES.get(tag, lambda v: False)(value) for tag in param.types):
        assert [(p.code, p.path) for p in found] == [("E103", where)], (entry.path, key, value)
        assert ", ".join(entry.settable) in found[0].hint
    elif param.choices and value not in param.choices:
        assert [p.code for p in found] == ["E104"]
    else:
        assert [p.code for p in found if p.code in ("E101", "E103", "E104")] == []


# -- random_translation: one meaning on both frameworks -------------------------------------------------------
PAD_MODES = {"nearest": "edge", "constant": "constant", "reflect": "symmetric"}


def test_random_translation_compiles_on_both_frameworks(write_spec):
    item = {"random_translation": {"height": 0.25, "width": 0.1, "fill": "nearest"}}
    torch_source = api.compile(api.load(write_spec(spec_text("torch", [item]))))
    assert 'v2.RandomCrop((8, 8), padding=(1, 2), padding_mode="edge")' in torch_source
    keras_source = api.compile(api.load(write_spec(spec_text("keras", [item]))))
    assert 'keras.layers.RandomTranslation(0.25, 0.1, fill_mode="nearest", interpolation="nearest")' in keras_source
    constant = {"random_translation": {"width": 0.25, "fill": "constant"}}
    assert "v2.RandomCrop((8, 8), padding=(2, 0))" in api.compile(api.load(write_spec(spec_text("torch", [constant]))))
    assert problems(write_spec, "torch", [{"random_translation": {}}])[0].code in ("E100", "E103", "E104", "E109")


def shifts(images: np.ndarray, image: np.ndarray, fill: str, most: int) -> set[tuple[int, int]]:
    """The (dy, dx) whole-pixel shift each output is of `image`, its uncovered pixels filled as NumPy's pad mode for
    `fill` fills them; a failed assertion when one is not."""
    padded = np.pad(image, most, mode=PAD_MODES[fill])
    side = image.shape[0]
    found = set()
    for out in images:
        matches = [
            (dy, dx)
            for dy in range(-most, most + 1)
            for dx in range(-most, most + 1)
            if np.allclose(out, padded[most - dy : most - dy + side, most - dx : most - dx + side], atol=1e-6)
        ]
        assert matches, (fill, out)
        found.add(matches[0])
    return found


@pytest.mark.parametrize("fill", ["nearest", "constant", "reflect"])
def test_random_translation_is_the_same_shift_and_fill_on_both_frameworks(write_spec, fill):
    import torch
    from torchvision.transforms import v2

    keras = pytest.importorskip("tf_keras")
    item = {"random_translation": {"height": 0.25, "width": 0.25, "fill": fill}}
    image = np.arange(1, 65, dtype=np.float32).reshape(8, 8) / 64
    torch_call = compiled_calls(api.compile(api.load(write_spec(spec_text("torch", [item])))), "torch")
    torch.manual_seed(0)
    transform = eval(torch_call.strip().rstrip(","), {"v2": v2})
    torch_out = np.stack([transform(torch.from_numpy(image)[None])[0].numpy() for _ in range(60)])
    keras_call = compiled_calls(api.compile(api.load(write_spec(spec_text("keras", [item])))), "keras")
    keras.utils.set_random_seed(0)
    layer = eval(keras_call.strip().rstrip(","), {"keras": keras})
    keras_out = np.stack([np.asarray(layer(image[None, :, :, None], training=True))[0, :, :, 0] for _ in range(60)])
    torch_shifts, keras_shifts = shifts(torch_out, image, fill, 2), shifts(keras_out, image, fill, 2)
    assert len(torch_shifts) > 8 and len(keras_shifts) > 8  # many shifts, each of at most 2 = 0.25 x 8 pixels


def test_on_torchvision_data_a_named_transform_sees_the_image_tensor(write_spec):
    """torchvision data sets read PIL images: a named transform goes after ToTensor, as every other path gives it a
    float tensor in [0, 1] (the neutral names alone keep their place before it)."""
    text = spec_text("torch", [{"GaussianNoise": {"sigma": 0.05}}], dataset={"type": "torchvision", "name": "MNIST"})
    assert problems(write_spec, "torch", [{"GaussianNoise": {"sigma": 0.05}}]) == []
    source = api.compile(api.load(write_spec(text)))
    assert "augment = [v2.GaussianNoise(sigma=0.05)]" in source
    assert "train_transform = torchvision.transforms.Compose(steps[:1] + augment + steps[1:])" in source
    assert "# on the image tensors in [0, 1] (after ToTensor)" in source
