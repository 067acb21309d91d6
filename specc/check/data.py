"""Rules of the dataset section against the rest of the spec: what each data set type can take (subset, standardize,
augment, loader_workers, validation sources) and, for data the driver reads (file tables, image folders), its
columns, missing values and the CPUs Ray Data streams with (SPEC §12)."""

from __future__ import annotations

from collections.abc import Iterator

from specc import catalog
from specc.check.fields import Locator, did_you_mean
from specc.check.named import framework_of, named_problems
from specc.check.search_space import space_entries
from specc.read.document import Path
from specc.spec.augment import AUGMENTATION_NAMES, FLIPS, NamedAugmentation, augmentation_name
from specc.spec.dataset import FILE_TYPES, TABULAR_TYPES
from specc.spec.errors import Problem, excerpt
from specc.spec.experiment import Experiment

SIZES = {"digits": 1797, "iris": 150, "wine": 178, "breast_cancer": 569}  # scikit-learn's bundled sets
KERAS_SIZES = {"mnist": (60000, 10000), "fashion_mnist": (60000, 10000), "cifar10": (50000, 10000)}
KERAS_SIZES["cifar100"] = (50000, 10000)  # keras.datasets' (train, test) examples


def subset_fits(e: Experiment, at: Locator) -> Iterator[Problem]:
    """A subset no larger than the split it is taken from, where the data set's size is known before it is read."""
    dataset = e.dataset
    count = SIZES.get(dataset.type) or getattr(dataset, "n_samples", None)
    splits = None
    if dataset.type == "keras_dataset" and dataset.validation_from != "train":
        count, splits = None, dict(zip(("train", "validation"), KERAS_SIZES[dataset.name], strict=True))
    elif dataset.type == "keras_dataset":
        count = KERAS_SIZES[dataset.name][0]
    if dataset.subset is None or (count is None and splits is None):
        return
    if splits is None:
        n_val = max(1, int(count * dataset.validation_fraction))
        splits = {"train": count - n_val, "validation": n_val}
    for split, size in splits.items():
        if split == "validation" and dataset.type == "keras_dataset" and dataset.validation_from == "none":
            continue
        wanted = getattr(dataset.subset, split)
        if wanted > size:
            yield at(
                "E100",
                f"subset.{split} asks for {wanted} examples, but the {split} split of {dataset.type} has {size}",
                ("dataset", "subset", split),
                f"use at most {size}"
                + ("" if dataset.type == "keras_dataset" and count is None else ", or change validation_fraction"),
            )


# Data sets whose features specc standardises (the tabular ones); `standardize: false` means nothing elsewhere.
STANDARDIZED = ("iris", "wine", "breast_cancer", "synthetic_classification", "synthetic_regression", "csv")
STANDARDIZED += ("parquet", "jsonl", "npz")


def standardize_applies(e: Experiment, at: Locator) -> Iterator[Problem]:
    if not e.dataset.standardize and e.dataset.type not in STANDARDIZED:
        yield at(
            "W320",
            f"standardize: false has no effect: specc standardises tabular features, and {e.dataset.type} "
            + ("gives images" if e.dataset.known_image_shape() else "features your factory prepares"),
            ("dataset", "standardize"),
            "remove it",
        )


def augment_fits(e: Experiment, at: Locator) -> Iterator[Problem]:
    """Augmentations the data set's images can take: every one keeps the image's size (the validation images
    are not changed, and the model takes one size), saturation needs colour.

    Image data sets load as images whatever the model (digits as (N, 1, 8, 8) / (N, 8, 8, 1) arrays even for
    an mlp, which flattens them in its first layer), so each augmentation sees one (C, H, W) / (H, W, C) image;
    data sets whose image shape specc does not know before the run (custom factories) are refused, not guessed.
    """
    dataset = e.dataset
    if not dataset.augment:
        return
    shape, where = dataset.known_image_shape(), ("dataset", "augment")
    if shape is None:
        gives = (
            "features your factory prepares, of a shape specc does not know"
            if dataset.type == "custom"
            else ("rows of features")
        )
        yield at("E224", f"augment changes images, but {dataset.type} gives {gives}", where, "remove augment")
        return
    channels, height, width = shape
    for index, item in enumerate(dataset.augment):
        name = augmentation_name(item)
        here = (*where, index, name)
        if isinstance(item, NamedAugmentation):
            yield from named_augmentation(e, item, (*where, index), shape, at)
            continue
        if name in ("random_crop", "random_resized_crop"):
            size = getattr(item, name).size
            padding = item.random_crop.padding if name == "random_crop" else 0
            if (height, width) != (size, size):
                larger = (
                    f" (larger than the {height + 2 * padding}-pixel padded image)"
                    if name == "random_crop" and (size > min(height, width) + 2 * padding)
                    else ""
                )
                yield at(
                    "E224",
                    f"{name} size {size}{larger} is not the images' size {height}x{width}: validation images are "
                    "not cropped, and the model takes one size",
                    (*here, "size"),
                    f"size: {height}" if height == width else "crop square images only",
                )
        if name == "random_resized_crop" and e.framework == "tensorflow":
            yield at(
                "E207",
                "random_resized_crop has no Keras preprocessing layer in tf_keras (torch only)",
                here,
                "use random_crop with padding, or framework torch",
            )
        if name == "color_jitter" and item.color_jitter.saturation and channels == 1:
            yield at(
                "E224",
                f"color_jitter saturation needs colour images, but {dataset.type} images have 1 channel",
                (*here, "saturation"),
                "remove saturation (brightness and contrast work on grayscale)",
            )
    yield from _written_in(e, at, "dataset.augment", "the augmentation is written into the script")


def shuffle_validation_fixed(e: Experiment, at: Locator) -> Iterator[Problem]:
    """The validation loaders' order is written into the script."""
    yield from _written_in(
        e, at, "dataset.shuffle_validation", "the validation loaders' order is written into the script"
    )


# The transforms whose output size an argument sets, as (framework, class) -> the argument(s): they fit when the
# output is the images' own size (validation images are not changed, and the model takes one size).
SIZED = {
    ("torch", "CenterCrop"): "size",
    ("torch", "RandomCrop"): "size",
    ("torch", "RandomResizedCrop"): "size",
    ("torch", "Resize"): "size",
    ("keras", "RandomCrop"): ("height", "width"),
}
LIBRARIES = {"torch": "torchvision.transforms.v2", "keras": "Keras' preprocessing layers (tf_keras.layers)"}


def named_augmentation(
    e: Experiment, item: NamedAugmentation, where: Path, shape: tuple[int, int, int], at: Locator
) -> Iterator[Problem]:
    """An augmentation named by its class: one of the framework's (did-you-mean over every spelling, the neutral
    names too), one the loop can apply to each image on its own, with arguments its signature takes (named.py), and
    an output of the images' own size and channels."""
    framework, name = framework_of(e), item.named
    entry = catalog.lookup(framework, "augmentations", name)
    here = (*where, name)
    if entry is None:
        neutral = [*FLIPS, *AUGMENTATION_NAMES]
        other = "keras" if framework == "torch" else "torch"
        hint = did_you_mean(name, [*neutral, *catalog.spellings(framework, "augmentations")])
        if catalog.lookup(other, "augmentations", name) is not None:
            hint = f"{name} is {other}'s ({LIBRARIES[other]}); on {e.framework}: {', '.join(_drivable(framework))}"
        hint = hint or f"on both frameworks: {', '.join(neutral)}; {LIBRARIES[framework]}: " + ", ".join(
            _drivable(framework)
        )
        yield at("E105", f"{LIBRARIES[framework]} has no augmentation {excerpt(name)}", here, hint, key=True)
        return
    if entry.not_drivable:
        yield at("E260", f"{entry.path} cannot be an augmentation: {entry.not_drivable}", here, key=True)
        return
    found = list(named_problems(framework, "augmentations", entry.name, item.arguments, here, at))
    yield from found
    if not found:
        yield from _fits(entry, framework, item.arguments, here, shape, at)


def _drivable(framework: str) -> list[str]:
    family = catalog.family(framework, "augmentations").values()
    return sorted(entry.class_name for entry in family if not entry.not_drivable)


def _fits(entry, framework: str, given: dict, here: Path, shape: tuple[int, int, int], at: Locator):
    """The output of a named augmentation keeps the images' size and channels."""
    channels, height, width = shape
    sized = SIZED.get((framework, entry.class_name))
    if sized is not None:
        keys = (sized,) if isinstance(sized, str) else sized
        values = [given.get(key, entry.params[key].default) for key in keys]
        side = values[0] if isinstance(sized, str) else values
        if isinstance(side, list) and len(side) == 1:
            side = side[0]
        if isinstance(side, int) and entry.class_name == "Resize":  # the shorter side, keeping the aspect ratio
            fits = side == min(height, width)
        else:
            fits = (side, side) == (height, width) if isinstance(side, int) else list(side or ()) == [height, width]
        if not fits:
            shown = ", ".join(f"{key}: {value}" for key, value in zip(keys, values, strict=True))
            yield at(
                "E224",
                f"{entry.class_name}'s {shown} is not the images' size {height}x{width}: validation images are not "
                "changed, and the model takes one size",
                (*here, keys[0]),
                f"{keys[0]}: {height}" if isinstance(sized, str) else f"height: {height}, width: {width}",
            )
    if entry.path == "torchvision.transforms.v2.RandomRotation" and given.get("expand"):
        yield at("E224", "RandomRotation with expand: true enlarges the images", (*here, "expand"), "expand: false")
    if entry.path == "torchvision.transforms.v2.Grayscale" and given.get("num_output_channels", 1) != channels:
        yield at(
            "E224",
            f"Grayscale gives {given.get('num_output_channels', 1)} channel(s), but the images have {channels}",
            (*here, "num_output_channels") if "num_output_channels" in given else here,
            f"num_output_channels: {channels}",
        )
    if entry.path == "torchvision.transforms.v2.Normalize":
        for key in ("mean", "std"):
            if len(given[key]) not in (1, channels):
                yield at(
                    "E224",
                    f"Normalize's {key} has {len(given[key])} values, but the images have {channels} channel(s)",
                    (*here, key),
                    f"one value per channel ({channels})",
                )


def loader_workers_apply(e: Experiment, at: Locator) -> Iterator[Problem]:
    """DataLoader worker processes: torch's DataLoader over a torchvision data set, which decodes each image."""
    dataset, where = e.dataset, ("dataset", "loader_workers")
    if not dataset.loader_workers:
        return
    if e.framework == "tensorflow":
        yield at("E207", "loader_workers starts torch DataLoader workers; tensorflow has none", where, "remove it")
    elif dataset.loader == "ray_data":
        yield at("W320", "loader_workers has no effect with loader: ray_data (Ray Data reads)", where, "remove it")
    elif dataset.type not in ("torchvision", "image_folder"):
        yield at(
            "W320",
            f"loader_workers has no effect: {dataset.type} batches are slices of tensors already in memory, "
            "which worker processes would only copy",
            where,
            "remove it (it applies to torchvision and image_folder data sets)",
        )
    yield from _written_in(e, at, "dataset.loader_workers", "the DataLoaders' arguments are written into the script")


def _written_in(e: Experiment, at: Locator, key: str, why: str) -> Iterator[Problem]:
    for _kind, where, entries in space_entries(e):
        for searched in entries:
            if searched == key or searched.startswith(key + "."):
                yield at("E224", f"{searched} cannot be searched: {why}", (*where, searched), key=True)


def validation_source(e: Experiment, at: Locator) -> Iterator[Problem]:
    """validation_fraction means something only when validation is held out of the training split; keras_dataset
    reads files that are already there (specc fetches nothing)."""
    dataset = e.dataset
    if dataset.type == "keras_dataset" and dataset.download:
        yield at(
            "E100",
            "keras_dataset never downloads: the script reads the files keras.datasets has already fetched",
            ("dataset", "download"),
            f"fetch them once where there is network: python -c 'import keras; keras.datasets.{dataset.name}"
            ".load_data()' (into ~/.keras/datasets), then download: false",
        )
    source = getattr(dataset, "validation_from", None)
    held_out = dataset.type in (*FILE_TYPES, "image_folder")  # validation_from: train or none
    if source == "none" and dataset.loader == "ray_data" and not held_out:
        yield at(
            "E221",
            "validation_from: none leaves no validation split, but loader ray_data hands the trainer one",
            ("dataset", "validation_from"),
            "use loader torch_dataloader, or validate (validation_from: test or train)",
        )
    for _kind, where, entries in space_entries(e) if source else ():
        for key in ("dataset.validation_from", "dataset.name"):
            if key in entries:
                yield at(
                    "E213",
                    f"{key} is fixed before trials start: the compiled script reads that data set's files its own way",
                    (*where, key),
                    "run one spec per data set and validation source",
                    key=True,
                )
        if "dataset.validation_fraction" in entries and source != "train":
            yield at(
                "E221",
                f"the search sets dataset.validation_fraction, but validation_from is {source}: it holds nothing out",
                (*where, "dataset.validation_fraction"),
                "validation_from: train, to search the share held out of the training split",
                key=True,
            )
    if source == "none" and dataset.subset is not None:
        yield at(
            "W320",
            "subset.validation has no effect: validation_from is none",
            ("dataset", "subset", "validation"),
            "keep it for when validation is switched back on, or remove the subset's validation count",
        )
    if dataset.shuffle_validation and not e.validates():
        yield at(
            "E221",
            "shuffle_validation reorders the validation examples, but validation_from is none",
            ("dataset", "shuffle_validation"),
            "remove shuffle_validation, or validate (validation_from: train)",
            also=("dataset", "validation_from"),
        )
    if held_out and source == "none" and getattr(dataset, "validation_path", None):
        yield at(
            "E221",
            "validation_path names validation images, but validation_from is none",
            ("dataset", "validation_path"),
            "remove validation_path, or validation_from: train",
            also=("dataset", "validation_from"),
        )
    if (
        held_out
        and source == "train"
        and dataset.validation_fraction is None
        and not getattr(dataset, "validation_path", None)
    ):
        yield at(
            "E221",
            "validation_from: train holds out validation_fraction of the data, but it is null",
            ("dataset", "validation_fraction"),
            "validation_fraction: 0.2, or validation_from: none to train on everything",
        )
    if source is None or source == "train" or dataset.validation_fraction is None:
        return
    if source == "test":
        message = (
            f"validation_fraction {dataset.validation_fraction} holds nothing out: {dataset.type} validates on its "
            "test split (validation_from: test)"
        )
    else:
        message = f"validation_fraction {dataset.validation_fraction} holds nothing out: validation_from is none"
    yield at(
        "E221",
        message,
        ("dataset", "validation_fraction"),
        "to validate on part of the training split: validation_from: train; else remove validation_fraction",
    )


def categorical_columns(e: Experiment, at: Locator) -> Iterator[Problem]:
    """categorical columns of a table: features (among dataset.features when it lists them), each named once."""
    dataset = e.dataset
    for index, name in enumerate(getattr(dataset, "categorical", [])):
        where = ("dataset", "categorical", index)
        if name == dataset.label:
            yield at("E222", f"{name!r} is the label column: categories are features", where, "remove it")
        elif dataset.features and name not in dataset.features:
            listed = ", ".join(dataset.features)
            yield at("E222", f"{name!r} is not among dataset.features ({listed})", where, f"add {name} to features")
        elif name in dataset.categorical[:index]:
            yield at("E222", f"{name!r} is named twice in dataset.categorical", where, "name it once")


def file_loader(e: Experiment, at: Locator) -> Iterator[Problem]:
    """File tables always stream through Ray Data; image folders read through a DataLoader in torch only."""
    dataset = e.dataset
    fields = dataset.model_fields_set
    if dataset.type in (*TABULAR_TYPES, "npz") and "loader" in fields and dataset.loader == "torch_dataloader":
        yield at(
            "W320",
            f"loader: torch_dataloader has no effect: {dataset.type} rows always stream through Ray Data into the "
            "workers (get_dataset_shard), so that files larger than memory train",
            ("dataset", "loader"),
            "remove it (loader: ray_data)",
        )
    if dataset.type == "image_folder" and dataset.loader == "torch_dataloader" and e.framework == "tensorflow":
        yield at(
            "E207",
            "loader: torch_dataloader decodes images in torch DataLoaders; tensorflow reads image folders through "
            "Ray Data",
            ("dataset", "loader"),
            "loader: ray_data",
        )


def image_validation(e: Experiment, at: Locator) -> Iterator[Problem]:
    """An image folder validates on validation_path or on validation_fraction of its images, not both."""
    dataset = e.dataset
    if dataset.type == "image_folder" and dataset.validation_path and dataset.validation_fraction is not None:
        yield at(
            "E221",
            "validation_fraction holds images out of the training root, but validation_path names the validation "
            "images",
            ("dataset", "validation_fraction"),
            "remove validation_fraction (or validation_path)",
            also=("dataset", "validation_path"),
        )


def data_cpus_apply(e: Experiment, at: Locator) -> Iterator[Problem]:
    """scaling.data_cpus is Ray Data's share while it streams from storage (file tables, image folders with
    loader ray_data)."""
    dataset = e.dataset
    streams = dataset.type in (*TABULAR_TYPES, "npz") or (
        dataset.type == "image_folder" and dataset.loader == "ray_data"
    )
    if e.scaling.data_cpus is not None and not streams:
        yield at(
            "W320",
            f"scaling.data_cpus has no effect: {dataset.type} data does not stream through Ray Data "
            + ("(its DataLoaders decode the images)" if dataset.type == "image_folder" else "(it is read in memory)"),
            ("scaling", "data_cpus"),
            "remove it",
        )


DATA_RULES = (
    subset_fits,
    standardize_applies,
    augment_fits,
    shuffle_validation_fixed,
    loader_workers_apply,
    validation_source,
    categorical_columns,
    file_loader,
    image_validation,
    data_cpus_apply,
)
