"""`dataset.augment`: random changes to each training image. The neutral names mean the same on both frameworks
(flips, crops, rotation, colour jitter, translation); any other entry names a class of the framework's own -- a
transform of torchvision.transforms.v2 (torch) or a Keras `Random*` preprocessing layer (tensorflow) -- with its
keyword arguments, checked against that class's signature in specc's catalog (specc/catalog, specc/check/data.py).
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal, Union

from pydantic import ConfigDict, Discriminator, Field, Tag, WithJsonSchema, model_validator
from pydantic_core import PydanticCustomError

from specc.spec.base import IDENTIFIER_PATTERN, NonNegativeInt, PositiveInt, Section, describe


class Crop(Section):
    size: PositiveInt = describe("Side of the square crop: the images' own side (validation images are not cropped).")
    padding: NonNegativeInt = describe("Zero pixels added on every side before cropping.", 0)


class RandomCrop(Section):
    random_crop: Crop = describe(
        "A random square crop of the zero-padded image (torch: v2.RandomCrop; tensorflow: ZeroPadding2D + "
        "RandomCrop), e.g. {size: 32, padding: 4}: shifts of up to 4 pixels."
    )


class RandomRotation(Section):
    random_rotation: Annotated[float, Field(gt=0, le=180)] = describe(
        "Rotate by a random angle in [-degrees, degrees], filling the corners with zeros."
    )


class ResizedCrop(Section):
    size: PositiveInt = describe("Side of the square output: the images' own side (validation images keep theirs).")


class RandomResizedCrop(Section):
    random_resized_crop: ResizedCrop = describe(
        "A random part of the image (8-100% of its area, aspect 3/4-4/3) resized back to `size` "
        "(torch only: v2.RandomResizedCrop)."
    )


Strength = Annotated[float, Field(ge=0, le=1)]


class Jitter(Section):
    brightness: Strength = describe(
        "torch: multiply by a factor in [1-b, 1+b]; tensorflow (RandomBrightness): add up to b of the [0, 1] range.",
        0.0,
    )
    contrast: Strength = describe("Scale the contrast by a factor in [1-c, 1+c].", 0.0)
    saturation: Strength = describe("Scale the saturation by a factor in [1-s, 1+s] (colour images only).", 0.0)

    @model_validator(mode="after")
    def _some_jitter(self):
        if not (self.brightness or self.contrast or self.saturation):
            raise PydanticCustomError("no_jitter", "color_jitter needs brightness, contrast or saturation above 0")
        return self


class ColorJitter(Section):
    color_jitter: Jitter = describe("Random brightness, contrast and saturation, e.g. {brightness: 0.2}.")


Shift = Annotated[float, Field(ge=0, lt=1)]
FILLS = ("nearest", "constant", "reflect")


class Translation(Section):
    height: Shift = describe("Shift up or down by up to this fraction of the image's height.", 0.0)
    width: Shift = describe("Shift left or right by up to this fraction of the image's width.", 0.0)
    fill: Literal["nearest", "constant", "reflect"] = describe(
        "The pixels the shift uncovers: nearest repeats the edge pixel, constant is zeros, reflect mirrors the "
        "image about its edge (d c b a | a b c d), as Keras' fill_mode does.",
        "reflect",
    )

    @model_validator(mode="after")
    def _some_shift(self):
        if not (self.height or self.width):
            raise PydanticCustomError("no_translation", "random_translation needs height or width above 0")
        return self


class RandomTranslation(Section):
    random_translation: Translation = describe(
        "A random shift of up to a fraction of each side, the uncovered pixels filled by `fill`, e.g. {height: 0.1, "
        "width: 0.1, fill: nearest} (tensorflow: RandomTranslation; torch: v2.RandomCrop of the image padded by the "
        "largest shift, in whole pixels)."
    )


FLIPS = ("horizontal_flip", "vertical_flip")
CURATED = {
    "random_crop": RandomCrop,
    "random_rotation": RandomRotation,
    "random_resized_crop": RandomResizedCrop,
    "color_jitter": ColorJitter,
    "random_translation": RandomTranslation,
}
AUGMENTATION_NAMES = tuple(CURATED)  # the neutral mappings; each other one-key mapping names a framework's class


class NamedAugmentation(Section):
    """A transform of torchvision.transforms.v2 (torch) or a Keras Random* preprocessing layer (tensorflow), by class
    name (RandomAffine) or snake_case name (random_affine): `{RandomAffine: {degrees: 0, translate: [0.1, 0.1]}}`,
    or the bare name when it takes no arguments. Its arguments are checked against the class's own signature."""

    model_config = ConfigDict(**{**Section.model_config, "extra": "allow"})  # one key: the class, its arguments

    @model_validator(mode="before")
    @classmethod
    def _bare_name(cls, data):
        return {data: {}} if isinstance(data, str) else data

    @model_validator(mode="after")
    def _one_class(self):
        (name, arguments), *_ = self.model_extra.items()
        if not re.fullmatch(IDENTIFIER_PATTERN, name):
            raise PydanticCustomError(
                "augmentation", "an augmentation names a class: letters, digits and '_', not {name}", {"name": name}
            )
        if arguments is not None and not isinstance(arguments, dict):
            raise PydanticCustomError(
                "augmentation",
                "{name}'s arguments are a mapping of its keyword arguments, e.g. {example}",
                {"name": name, "example": "{RandomAffine: {degrees: 10}}"},
            )
        return self

    @property
    def named(self) -> str:
        """The class as the spec names it."""
        return next(iter(self.model_extra))

    @property
    def arguments(self) -> dict[str, Any]:
        return next(iter(self.model_extra.values())) or {}


_NAMED_SCHEMA = {
    "anyOf": [
        {"type": "string", "pattern": IDENTIFIER_PATTERN, "not": {"enum": list(FLIPS)}},
        {
            "type": "object",
            "minProperties": 1,
            "maxProperties": 1,
            "propertyNames": {"pattern": IDENTIFIER_PATTERN, "not": {"enum": list(CURATED)}},
            "additionalProperties": {"type": ["object", "null"]},
        },
    ],
    "description": NamedAugmentation.__doc__.replace("\n    ", " ").strip(),
}


def _augmentation_name(value: Any) -> str | None:
    """An augmentation's tag: the flip it names, a neutral mapping's key, or `named` for a class of the framework's
    (None for anything else)."""
    if isinstance(value, str):
        return "flip" if value in FLIPS else "named"
    if isinstance(value, dict) and len(value) == 1:
        key = next(iter(value))
        return key if key in CURATED else "named"
    if isinstance(value, NamedAugmentation):
        return "named"
    for name, cls in CURATED.items():
        if isinstance(value, cls):
            return name
    return None


_augmentation_name.__name__ = "augmentation"

Augmentation = Annotated[
    Union[
        Annotated[Literal["horizontal_flip", "vertical_flip"], Tag("flip")],
        Annotated[RandomCrop, Tag("random_crop")],
        Annotated[RandomRotation, Tag("random_rotation")],
        Annotated[RandomResizedCrop, Tag("random_resized_crop")],
        Annotated[ColorJitter, Tag("color_jitter")],
        Annotated[RandomTranslation, Tag("random_translation")],
        Annotated[NamedAugmentation, Tag("named"), WithJsonSchema(_NAMED_SCHEMA)],
    ],
    Discriminator(
        _augmentation_name,
        custom_error_type="augmentation",
        custom_error_message="an augmentation is horizontal_flip, vertical_flip, a class's name, or a mapping with "
        "one key: random_crop, random_rotation, random_resized_crop, color_jitter, random_translation, or a class "
        "of torchvision.transforms.v2 / Keras' Random* layers with its arguments",
    ),
]


def augmentation_name(item) -> str:
    """What an entry of dataset.augment is called: a flip, a neutral mapping's key, or the class a spec names."""
    if isinstance(item, str):
        return item
    if isinstance(item, NamedAugmentation):
        return item.named
    return next(iter(type(item).model_fields))
