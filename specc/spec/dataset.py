"""`dataset`: where examples come from. Every built-in type works offline.

Each type knows its task, class count and input shape where they are fixed (scikit-learn's bundled sets,
torchvision's), so the model never restates them; file and custom datasets learn them at run time.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import Field, model_validator
from pydantic_core import PydanticCustomError

from specc.spec.augment import Augmentation
from specc.spec.base import (
    Factory,
    Fraction,
    NonEmptyStr,
    NonNegativeFloat,
    NonNegativeInt,
    PathStr,
    PositiveFloat,
    PositiveInt,
    Section,
    Seed,
    describe,
)

Task = Literal["classification", "regression"]


class Subset(Section):
    """Only the first examples of each split, after the seeded shuffle: quick experiments and tests."""

    train: PositiveInt = describe("Training examples kept.")
    validation: PositiveInt = describe("Validation examples kept.")


class DatasetBase(Section):
    batch_size: PositiveInt | None = describe(
        "Examples per batch on each worker (null when global_batch_size is given).", 32
    )
    global_batch_size: PositiveInt | None = describe(
        "Examples per batch across all workers, instead of batch_size: each worker takes its share "
        "(the number of workers must divide it).",
        None,
    )
    validation_fraction: Fraction = describe("Share of the examples held out for validation.", 0.2)
    shuffle_seed: Seed = describe("Seed of the train/validation split and of shuffling.", 0)
    shuffle: bool = describe("Reshuffle the training examples each epoch; false: the same order every epoch.", True)
    shuffle_validation: bool = describe(
        "Read the validation examples in a new order each epoch; with training.validation_steps, each epoch "
        "validates on a fresh sample of them. false: the same order (and sample) every epoch.",
        False,
    )
    standardize: bool = describe(
        "Standardise tabular features (zero mean, unit variance with the training split's statistics).", True
    )
    subset: Subset | None = describe(
        "Use only the first N examples of each split (after the seeded shuffle); null: all of them.", None
    )
    augment: list[Augmentation] = describe(
        "Random changes to the training images, applied in order to each image on its own (image data sets); "
        "validation images are never changed. torch: torchvision.transforms.v2; tensorflow: Keras preprocessing "
        "layers on the training batches. Besides the names below (the same on both frameworks), an entry may name a "
        "transform of torchvision.transforms.v2 (torch) or a Keras Random* layer (tensorflow) by class name with its "
        "keyword arguments: {RandomAffine: {degrees: 0, translate: [0.1, 0.1]}}.",
        [],
    )
    loader_workers: NonNegativeInt = describe(
        "DataLoader worker processes reading the training and validation images (torch, torchvision data sets); "
        "0: read in the training process.",
        0,
    )
    loader: Literal["torch_dataloader", "ray_data"] = describe(
        "torch_dataloader: in-memory tensors per worker (prepare_data_loader); "
        "ray_data: Ray Data shards (get_dataset_shard + iter_torch_batches / iter_tf_batches).",
        "torch_dataloader",
    )

    @model_validator(mode="before")
    @classmethod
    def _one_batch_size(cls, data):
        """global_batch_size replaces batch_size's default (so the resolved spec reads back as it was)."""
        if isinstance(data, dict) and data.get("global_batch_size") is not None and "batch_size" not in data:
            data = {**data, "batch_size": None}
        return data

    def known_task(self) -> Task | None:
        return "classification"

    def known_classes(self) -> int | None:
        return None

    def known_image_shape(self) -> tuple[int, int, int] | None:
        """(channels, height, width) for image data; None for rows of features."""
        return None


class SyntheticClassification(DatasetBase):
    """scikit-learn's make_classification, generated in memory."""

    type: Literal["synthetic_classification"] = describe("Generated classification data.")
    n_samples: Annotated[int, Field(ge=10)] = describe("Number of examples.", 1000)
    n_features: PositiveInt = describe("Number of features per example.", 20)
    n_classes: Annotated[int, Field(ge=2)] = describe("Number of classes.", 2)
    noise: Annotated[float, Field(ge=0, le=1)] = describe("Share of labels flipped at random.", 0.01)
    seed: Seed = describe("Seed of the generator.", 0)

    def known_classes(self) -> int:
        return self.n_classes


class SyntheticRegression(DatasetBase):
    """scikit-learn's make_regression, generated in memory."""

    type: Literal["synthetic_regression"] = describe("Generated regression data.")
    n_samples: Annotated[int, Field(ge=10)] = describe("Number of examples.", 1000)
    n_features: PositiveInt = describe("Number of features per example.", 20)
    noise: NonNegativeFloat = describe("Standard deviation of the Gaussian noise on the target.", 0.1)
    seed: Seed = describe("Seed of the generator.", 0)

    def known_task(self) -> Task:
        return "regression"


class BundledDataset(DatasetBase):
    """A data set that ships inside scikit-learn (no download)."""

    def known_classes(self) -> int:
        return BUNDLED_CLASSES[self.type]


class Digits(BundledDataset):
    type: Literal["digits"] = describe("scikit-learn's 8x8 handwritten digits (1797 images, 10 classes).")

    def known_image_shape(self) -> tuple[int, int, int]:
        return (1, 8, 8)


class Iris(BundledDataset):
    type: Literal["iris"] = describe("scikit-learn's iris (150 rows, 4 features, 3 classes).")


class Wine(BundledDataset):
    type: Literal["wine"] = describe("scikit-learn's wine (178 rows, 13 features, 3 classes).")


class BreastCancer(BundledDataset):
    type: Literal["breast_cancer"] = describe("scikit-learn's breast cancer (569 rows, 30 features, 2 classes).")


def _without_validation(data):
    """validation_from: none holds nothing out: validation_fraction reads null unless the spec gives one (E221)."""
    if isinstance(data, dict) and data.get("validation_from") == "none" and "validation_fraction" not in data:
        data = {**data, "validation_fraction": None}
    return data


FILE_TYPES = ("csv", "parquet", "jsonl", "npz")  # tables read from files and streamed with Ray Data
TABULAR_TYPES = ("csv", "parquet", "jsonl")  # of which: columns (categorical, missing)
BUNDLED_CLASSES = {"digits": 10, "iris": 3, "wine": 3, "breast_cancer": 2}


class LearnedAtRunTime(DatasetBase):
    """A dataset whose shape and classes are only known once it is read."""

    task: Task | None = describe(
        "classification or regression; default: regression for mse/l1/huber losses, else classification.", None
    )
    num_classes: Annotated[int, Field(ge=2)] | None = describe(
        "Number of classes (classification); default: counted from the labels at run time.", None
    )

    def known_task(self) -> Task | None:
        return self.task

    def known_classes(self) -> int | None:
        return self.num_classes


STREAMS = (
    "Ray Data streams the rows from storage into the workers (get_dataset_shard + iter_torch_batches / "
    "iter_tf_batches): nothing is gathered in the driver, and the data set may be larger than memory."
)


class FileDataset(LearnedAtRunTime):
    """Rows read with Ray Data (`ray.data.read_*`) and streamed into the workers, so they scale past one machine's
    memory. The validation rows are picked by a seeded hash of each row (no shuffle of the data set): the same
    split in every run and resume."""

    path: PathStr = describe("File, directory or glob; relative paths are relative to the spec's directory.")
    features: list[NonEmptyStr] | None = describe(
        "Columns used as features; default: every column except the label.", None, min_length=1
    )
    label: NonEmptyStr = describe("Column holding the target.", "label")
    loader: Literal["torch_dataloader", "ray_data"] = describe(
        f"ray_data (the only way for file data sets): {STREAMS}", "ray_data"
    )
    validation_from: Literal["train", "none"] = describe(
        "train: validate on validation_fraction of the rows, picked by a seeded hash of each; none: train on every "
        "row, no validation (no val_* metrics are reported).",
        "train",
    )
    validation_fraction: Fraction | None = describe(
        "Share of the rows held out for validation (validation_from: train); null with validation_from: none.", 0.2
    )

    @model_validator(mode="before")
    @classmethod
    def _no_fraction_without_validation(cls, data):
        """validation_from: none holds nothing out: validation_fraction then reads null unless given."""
        return _without_validation(data)


class TabularFile(FileDataset):
    """A table of columns: numeric features, categories one-hot encoded, missing values handled as declared."""

    categorical: list[NonEmptyStr] = describe(
        "Columns of categories (strings or numbers), one-hot encoded with the categories of the training split; a "
        "category first seen in validation or prediction encodes as all zeros.",
        [],
    )
    missing: Literal["error", "drop", "mean", "median", "most_frequent"] = describe(
        "Missing values (empty CSV cells, nulls): error stops before training and names the columns; drop skips "
        "such rows; mean, median or most_frequent fill numeric features with the training split's value "
        "(categorical columns always take their most frequent category). A missing label is an error unless drop.",
        "error",
    )


class Csv(TabularFile):
    type: Literal["csv"] = describe("CSV files with a header row.")


class Parquet(TabularFile):
    type: Literal["parquet"] = describe("Parquet files.")


class Jsonl(TabularFile):
    type: Literal["jsonl"] = describe("JSON Lines files, one object per line.")


class Npz(FileDataset):
    type: Literal["npz"] = describe("NumPy .npz archives; features and label name arrays in the archive.")
    features: list[NonEmptyStr] | None = describe("Arrays holding the features.", ["x"], min_length=1)
    label: NonEmptyStr = describe("Array holding the target.", "y")


class Normalize(Section):
    """Per-channel normalisation: (x - mean) / std."""

    mean: list[float] = describe("One mean per channel.", min_length=1)
    std: list[PositiveFloat] = describe("One standard deviation per channel.", min_length=1)

    @model_validator(mode="after")
    def _same_length(self):
        if len(self.mean) != len(self.std):
            raise PydanticCustomError(
                "length_mismatch", "mean has {m} values but std has {s}", {"m": len(self.mean), "s": len(self.std)}
            )
        return self


# name -> (channels, height, width, classes)
TORCHVISION_DATASETS = {
    "MNIST": (1, 28, 28, 10),
    "FashionMNIST": (1, 28, 28, 10),
    "KMNIST": (1, 28, 28, 10),
    "CIFAR10": (3, 32, 32, 10),
    "CIFAR100": (3, 32, 32, 100),
    "SVHN": (3, 32, 32, 10),
    "STL10": (3, 96, 96, 10),
}


class WithTestSplit(DatasetBase):
    """A data set that comes with its own test split: validation is on it, on a part held out of the training
    split, or switched off."""

    validation_from: Literal["test", "train", "none"] = describe(
        "test: validate on the data set's test split; train: on validation_fraction of the training split, held "
        "out with shuffle_seed; none: no validation (no val_* metrics are reported).",
        "test",
    )
    validation_fraction: Fraction | None = describe(
        "Share of the training split held out for validation with validation_from: train (default 0.2 there); "
        "only for validation_from: train.",
        None,
    )

    @model_validator(mode="before")
    @classmethod
    def _holdout_default(cls, data):
        """validation_from: train holds out 0.2 unless told (so the resolved spec says what it holds out)."""
        if isinstance(data, dict) and data.get("validation_from") == "train" and "validation_fraction" not in data:
            data = {**data, "validation_fraction": 0.2}
        return data


class TorchvisionDataset(WithTestSplit):
    """A torchvision.datasets image set read from `root` in its own on-disk format (torch only)."""

    type: Literal["torchvision"] = describe("A torchvision.datasets image data set.")
    name: Literal["MNIST", "FashionMNIST", "KMNIST", "CIFAR10", "CIFAR100", "SVHN", "STL10"] = describe(
        "Data set class in torchvision.datasets."
    )
    root: PathStr = describe("Directory holding the files; relative to the spec's directory.", "./data")
    download: bool = describe("Download when missing (needs network access; off by default).", False)
    resize: PositiveInt | None = describe("Resize images to this square size.", None)
    normalize: Normalize | None = describe("Per-channel mean/std normalisation.", None)

    def known_classes(self) -> int:
        return TORCHVISION_DATASETS[self.name][3]

    def known_image_shape(self) -> tuple[int, int, int]:
        channels, height, width, _ = TORCHVISION_DATASETS[self.name]
        if self.resize:
            height = width = self.resize
        return (channels, height, width)


# name -> (channels, height, width, classes), as keras.datasets gives them
KERAS_DATASETS = {
    "mnist": (1, 28, 28, 10),
    "fashion_mnist": (1, 28, 28, 10),
    "cifar10": (3, 32, 32, 10),
    "cifar100": (3, 32, 32, 100),
}


class KerasDataset(WithTestSplit):
    """A keras.datasets image set read with NumPy from the files Keras downloads, in Keras' own layout (both
    frameworks; Keras itself is not needed)."""

    type: Literal["keras_dataset"] = describe(
        "A keras.datasets image data set (mnist, fashion_mnist, cifar10, cifar100)."
    )
    name: Literal["mnist", "fashion_mnist", "cifar10", "cifar100"] = describe(
        "The keras.datasets module: mnist (mnist.npz), fashion_mnist (fashion-mnist/*-idx*-ubyte.gz), cifar10 "
        "(cifar-10-batches-py/), cifar100 (cifar-100-python/, fine labels)."
    )
    path: PathStr = describe(
        "The directory Keras caches into (holding mnist.npz, fashion-mnist/, cifar-10-batches-py/ or "
        "cifar-100-python/), or that file or directory itself; relative paths are relative to the spec's directory.",
        "~/.keras/datasets",
    )
    download: bool = describe(
        "Must stay false: specc never fetches these files. Fetch them once with keras.datasets.<name>.load_data().",
        False,
    )

    def known_classes(self) -> int:
        return KERAS_DATASETS[self.name][3]

    def known_image_shape(self) -> tuple[int, int, int]:
        return KERAS_DATASETS[self.name][:3]


IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg")  # what image_folder reads, in any letter case


class ImageFolder(DatasetBase):
    """A root with one subdirectory per class of JPEG/PNG files (torchvision's ImageFolder and Keras'
    image_dataset_from_directory layout): each image decoded, resized and scaled to [0, 1]."""

    type: Literal["image_folder"] = describe("Images sorted into one directory per class.")
    path: PathStr = describe(
        "The root: one subdirectory per class (class = directory name, indices in sorted order); relative paths "
        "are relative to the spec's directory."
    )
    image_size: Annotated[list[PositiveInt], Field(min_length=2, max_length=2)] = describe(
        "[height, width] every image is resized to (bilinear)."
    )
    channels: Literal[1, 3] = describe("1: grayscale; 3: RGB (images are converted).", 3)
    validation_path: PathStr | None = describe(
        "A root of the same layout and class names for validation, instead of holding out validation_fraction.",
        None,
    )
    validation_fraction: Fraction | None = describe(
        "Share of the images held out for validation, picked by a seeded hash of each file's path below the root "
        "(the same split in every run); null with validation_path or validation_from: none.",
        0.2,
    )
    validation_from: Literal["train", "none"] = describe(
        "train: validate on validation_fraction of the images (or on validation_path's); none: train on every "
        "image, no validation (no val_* metrics are reported).",
        "train",
    )
    num_classes: Annotated[int, Field(ge=2)] | None = describe(
        "Number of classes; default: the class directories counted at run time.", None
    )
    loader: Literal["torch_dataloader", "ray_data"] = describe(
        "ray_data: Ray Data's tasks decode and resize the images, streamed into the workers; torch_dataloader "
        "(torch only): each worker's DataLoader decodes its files (loader_workers processes).",
        "ray_data",
    )

    @model_validator(mode="before")
    @classmethod
    def _no_fraction_with_path(cls, data):
        """A validation_path holds the validation images: validation_fraction then reads null unless given."""
        if isinstance(data, dict) and data.get("validation_path") is not None and "validation_fraction" not in data:
            data = {**data, "validation_fraction": None}
        return _without_validation(data)

    def known_classes(self) -> int | None:
        return self.num_classes

    def known_image_shape(self) -> tuple[int, int, int]:
        return (self.channels, *self.image_size)


class CustomDataset(LearnedAtRunTime):
    """Your own data: `factory(**kwargs)` returns ((x_train, y_train), (x_val, y_val)) as NumPy arrays."""

    type: Literal["custom"] = describe("Data from your own function.")
    factory: Factory = describe("'package.module:function', importable from the spec's directory.")
    kwargs: dict[str, Any] = describe("Keyword arguments passed to the factory.", {})


Dataset = Annotated[
    Union[
        SyntheticClassification,
        SyntheticRegression,
        Digits,
        Iris,
        Wine,
        BreastCancer,
        Csv,
        Parquet,
        Jsonl,
        Npz,
        TorchvisionDataset,
        KerasDataset,
        ImageFolder,
        CustomDataset,
    ],
    Field(discriminator="type"),
]
