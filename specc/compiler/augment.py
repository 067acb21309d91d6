"""dataset.augment as code: torchvision.transforms.v2 transforms (torch) or Keras preprocessing layers (tensorflow),
in the spec's order. A neutral name becomes the calls that mean it on each framework; a class the spec names from
its framework becomes that class's call with the arguments the spec gives, as a person writes it
(`v2.RandomAffine(degrees=0, translate=(0.1, 0.1))`): only the class's own argument names from the catalog, each
value a Python literal of the validated spec value, never spec text pasted in."""

from __future__ import annotations

from specc import catalog
from specc.compiler.render import literal
from specc.spec.augment import FLIPS, NamedAugmentation

PADDING_MODES = {"nearest": "edge", "reflect": "symmetric"}  # random_translation's fill: torchvision's padding_mode
NAMESPACES = {"torch": "v2", "keras": "keras.layers"}  # how the scripts import each catalog's module


def named_call(framework: str, item: NamedAugmentation) -> str:
    """`v2.RandomAffine(degrees=0, translate=(0.1, 0.1))`: the class the catalog finds, its settable arguments only
    (a list as a tuple, as people write a pair)."""
    entry = catalog.lookup(framework, "augmentations", item.named)
    if entry is None:  # the check stage refuses it (E105); a compile without it writes nothing for it
        raise ValueError(f"no augmentation {item.named!r} in the {framework} catalog")
    given = item.arguments
    args = [f"{key}={_argument(given[key])}" for key in entry.settable if key in given]
    return f"{NAMESPACES[framework]}.{entry.class_name}({', '.join(args)})"


def _argument(value) -> str:
    return literal(tuple(value)) if isinstance(value, list) else literal(value)


def uses_named(augment) -> bool:
    return any(isinstance(item, NamedAugmentation) for item in augment)


def torch_augment(dataset) -> list[str]:
    """dataset.augment as torchvision.transforms.v2 transforms, in the spec's order."""
    steps = []
    for item in dataset.augment:
        if item == "horizontal_flip":
            steps.append("v2.RandomHorizontalFlip()")
        elif item == "vertical_flip":
            steps.append("v2.RandomVerticalFlip()")
        elif isinstance(item, NamedAugmentation):
            steps.append(named_call("torch", item))
        elif hasattr(item, "random_crop"):
            crop = item.random_crop
            steps.append(f"v2.RandomCrop({crop.size}" + (f", padding={crop.padding})" if crop.padding else ")"))
        elif hasattr(item, "random_rotation"):
            steps.append(f"v2.RandomRotation({item.random_rotation:g})")
        elif hasattr(item, "random_resized_crop"):
            steps.append(f"v2.RandomResizedCrop({item.random_resized_crop.size})")
        elif hasattr(item, "random_translation"):
            steps.append(_torch_translation(item.random_translation, dataset.known_image_shape()))
        else:
            steps.append(f"v2.ColorJitter({_jitter_args(item.color_jitter)})")
    return steps


def shift(fraction: float, side: int) -> int:
    """random_translation's largest shift in whole pixels: the fraction of the side, rounded, at least 1 pixel when
    the fraction is above 0."""
    return max(1, round(fraction * side)) if fraction else 0


def _torch_translation(translation, shape) -> str:
    """A random shift as torchvision writes it: pad each side by the largest shift (the fill as Keras' fill_mode
    fills), then a random crop back to the image's size; each offset is uniform over whole pixels."""
    _channels, height, width = shape
    padding = (shift(translation.width, width), shift(translation.height, height))  # (left/right, top/bottom)
    mode = PADDING_MODES.get(translation.fill)
    return f"v2.RandomCrop(({height}, {width}), padding={padding}" + (f', padding_mode="{mode}")' if mode else ")")


def _jitter_args(jitter) -> str:
    return ", ".join(f"{name}={value:g}" for name, value in jitter.model_dump().items() if value)


def keras_augment(augment) -> list[str]:
    """dataset.augment as Keras preprocessing layers, in the spec's order (random_resized_crop has none: E207)."""
    layers = []
    for item in augment:
        if item in FLIPS:
            layers.append(f'keras.layers.RandomFlip("{item.split("_")[0]}")')
        elif isinstance(item, NamedAugmentation):
            layers.append(named_call("keras", item))
        elif hasattr(item, "random_crop"):
            crop = item.random_crop
            if crop.padding:
                layers.append(f"keras.layers.ZeroPadding2D({crop.padding})")
            layers.append(f"keras.layers.RandomCrop({crop.size}, {crop.size})")
        elif hasattr(item, "random_rotation"):
            # a fraction of a full turn; zeros in the corners, as torchvision's RandomRotation
            layers.append(f'keras.layers.RandomRotation({item.random_rotation:g} / 360, fill_mode="constant")')
        elif hasattr(item, "random_translation"):
            # whole pixels moved (nearest interpolation), not blended, as torch's padded crop moves them
            shifted = item.random_translation
            layers.append(
                f"keras.layers.RandomTranslation({shifted.height:g}, {shifted.width:g}, "
                f'fill_mode="{shifted.fill}", interpolation="nearest")'
            )
        elif hasattr(item, "color_jitter"):
            jitter = item.color_jitter
            if jitter.brightness:
                layers.append(f"keras.layers.RandomBrightness({jitter.brightness:g}, value_range=(0, 1))")
            if jitter.contrast:
                layers.append(f"keras.layers.RandomContrast({jitter.contrast:g})")
            if jitter.saturation:
                low, high = f"{1 - jitter.saturation:g}", f"{1 + jitter.saturation:g}"
                layers.append(f"keras.layers.Lambda(lambda images: tf.image.random_saturation(images, {low}, {high}))")
    return layers
