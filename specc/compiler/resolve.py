"""Experiment -> Plan: the facts the templates need, decided once (shape, names, paths, data and model facts).

Templates branch on the Plan, never on raw spec text; every value they print is already resolved.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field

from specc.check.factories import import_dirs
from specc.compiler import travels
from specc.plan.shape import shape_of
from specc.spec import Experiment
from specc.spec.dataset import FILE_TYPES
from specc.spec.version import __version__

RAY_VERSION = "2.60.0"  # the Ray the generated code is written for (pinned in pyproject.toml)
IN_MEMORY = ("synthetic_classification", "synthetic_regression", "digits", "iris", "wine", "breast_cancer", "custom")
IN_MEMORY += ("keras_dataset",)


@dataclass(frozen=True)
class Plan:
    """What one compiled script is: every decision the templates act on."""

    experiment: Experiment
    shape: str  # train: one Trainer run | tune: a Tune function per trial | tune_train: each trial drives a Trainer
    spec_file: str  # as the user named it, relative to the working directory when below it
    spec_sha256: str
    spec_dir: str  # relative to the script's directory (custom factories are imported from there)
    working_dir: str | None  # shipped to a cluster's nodes, relative to the script's directory; None: not needed
    excludes: list[str]  # what stays behind (Ray's patterns, relative to working_dir)
    spec_dir_in_working_dir: str  # where custom factories are found on a node
    import_dirs: list[str]  # where the project's modules are imported from, relative to spec_dir (check/factories.py)
    config: dict  # the CONFIG literal: resolved model, dataset and training sections
    data_source: str  # in_memory | files | torchvision | keras_dataset | image_folder
    loader: str  # torch_dataloader | ray_data
    task: str
    num_outputs: int | None  # known at compile time, else derived from the data at run time
    input_shape: tuple | None
    uses_factory_module: bool
    reported_metrics: list[str] = field(default_factory=list)
    specc_version: str = __version__
    ray_version: str = RAY_VERSION

    @property
    def e(self) -> Experiment:
        return self.experiment

    @property
    def streams(self) -> bool:
        """Ray Data streams the data set from storage into the workers: the driver needs CPUs left for its reads."""
        return self.loader == "ray_data" and self.data_source in ("files", "image_folder")

    @property
    def keeps_freed_memory(self) -> bool:
        """The training processes take new batches each step from Ray Data, or decode an image folder's files into
        them: glibc malloc's thresholds are fixed there, so each step's memory is not faulted in anew
        (keep_freed_memory)."""
        return self.loader == "ray_data" or self.data_source == "image_folder"

    @property
    def fitted(self) -> bool:
        """The driver learns the data's preprocessing (or its classes), saved in every checkpoint."""
        return self.data_source in ("files", "image_folder")


def plan(experiment: Experiment, script_dir: str | None = None) -> Plan:
    """`script_dir`: where the script will live (default: the working directory); the script's relative paths
    (the spec's directory, data paths) are relative to it, so it runs from any working directory."""
    raw = getattr(experiment, "_raw", None)
    spec_file = raw.file if raw else f"{experiment.name}.yaml"
    here = os.path.abspath(script_dir or ".")
    spec_dir = os.path.relpath(travels.spec_dir(spec_file), here)
    if experiment.objective is not None:
        return _objective_plan(experiment, spec_file, spec_dir, here)
    dataset = experiment.dataset
    data_source = "in_memory" if dataset.type in IN_MEMORY else "files" if dataset.type in FILE_TYPES else dataset.type
    loader = "ray_data" if data_source == "files" else dataset.loader  # file rows always stream through Ray Data
    return Plan(
        experiment=experiment,
        shape=shape_of(experiment),
        spec_file=spec_file,
        spec_sha256=spec_hash(experiment),
        spec_dir=spec_dir,
        working_dir=os.path.relpath(travels.working_dir(experiment, spec_file), here)
        if travels.needs_working_dir(experiment)
        else None,
        excludes=travels.excludes(experiment, spec_file),
        spec_dir_in_working_dir=travels.spec_dir_in_working_dir(experiment, spec_file),
        import_dirs=import_dirs(experiment, travels.spec_dir(spec_file)),
        config=_config(experiment, spec_dir),
        data_source=data_source,
        loader=loader,
        task=experiment.task(),
        num_outputs=_num_outputs(experiment),
        input_shape=dataset.known_image_shape(),
        uses_factory_module="custom" in (experiment.model.type, dataset.type),
        reported_metrics=experiment.reported_metrics(),
    )


def _objective_plan(experiment: Experiment, spec_file: str, spec_dir: str, here: str) -> Plan:
    """The plan of an objective spec: the user's function is the trainable (shape objective); CONFIG is its params."""
    return Plan(
        experiment=experiment,
        shape="objective",
        spec_file=spec_file,
        spec_sha256=spec_hash(experiment),
        spec_dir=spec_dir,
        working_dir=os.path.relpath(travels.working_dir(experiment, spec_file), here),
        excludes=travels.excludes(experiment, spec_file),
        spec_dir_in_working_dir=travels.spec_dir_in_working_dir(experiment, spec_file),
        import_dirs=import_dirs(experiment, travels.spec_dir(spec_file)),
        config=experiment.objective.params,
        data_source="none",
        loader="none",
        task="none",
        num_outputs=None,
        input_shape=None,
        uses_factory_module=True,
        reported_metrics=experiment.reported_metrics(),
    )


def spec_hash(experiment: Experiment) -> str:
    """sha256 of the resolved spec (extends merged, --set applied, defaults filled): what actually runs."""
    from specc.spec.dump import dump_recorded

    return hashlib.sha256(dump_recorded(experiment).encode()).hexdigest()


def _num_outputs(experiment: Experiment) -> int | None:
    if experiment.task() == "regression" or experiment.binary_targets():
        return 1
    model_classes = getattr(experiment.model, "num_classes", None)
    return model_classes or experiment.dataset.known_classes()


# Fields the code reads from CONFIG only for these values (others, and the defaults, are written into the code),
# unless a search changes them.
READ_WHEN = {
    ("model", "padding"): lambda value: value != "same",
    ("model", "pool"): lambda value: value not in (None, {"size": 2, "stride": 2}),
    ("model", "batch_norm"): lambda value: False,
    ("dataset", "global_batch_size"): lambda value: value is not None,
    ("dataset", "batch_size"): lambda value: value is not None,
    ("dataset", "shuffle"): lambda value: False,
    ("dataset", "standardize"): lambda value: False,
    ("dataset", "subset"): lambda value: value is not None,
    ("training", "train_metrics"): lambda value: False,
    ("dataset", "augment"): lambda value: False,  # written in as transforms / layers (searching it is E224)
    ("dataset", "loader_workers"): lambda value: False,  # written in as DataLoader arguments
    ("dataset", "shuffle_validation"): lambda value: False,  # written in as the validation loaders' order
    ("dataset", "validation_from"): lambda value: value != "train",  # written in; "train" is the files' default
}
# Fields the code reads together: all of them are in CONFIG when one is set or searched, else none.
READ_TOGETHER = (("training", ("steps_per_epoch", "validation_steps")),)


def searched_paths(experiment: Experiment) -> set[str]:
    """Every dotted path a search space, pbt mutation or pb2 bound can change."""
    from specc.check.search_space import space_entries

    return {key for _kind, _where, entries in space_entries(experiment) for key in entries}


def is_searched(experiment: Experiment, *path: str) -> bool:
    """Whether a search changes this field or a part of it (model.pool.size changes model.pool)."""
    dotted = ".".join(path)
    return any(key == dotted or key.startswith(dotted + ".") for key in searched_paths(experiment))


def _config(experiment: Experiment, spec_dir: str) -> dict:
    """The resolved sections the training function reads; data paths relative to the script's directory."""
    data = experiment.model_dump(mode="json", include={"model", "dataset", "training"})
    for (section, key), read in READ_WHEN.items():
        values = data[section]
        if section == "model" and values["type"] != "cnn":
            continue  # the mlp's batch_norm predates these fields and stays
        if key in values and not read(values[key]) and not is_searched(experiment, section, key):
            del values[key]
    for section, keys in READ_TOGETHER:
        values = data[section]
        if all(values[key] is None and not is_searched(experiment, section, key) for key in keys):
            for key in keys:
                del values[key]
    dataset = data["dataset"]
    for key in ("path", "root", "validation_path"):
        if not dataset.get(key) or dataset[key].startswith("~"):
            continue  # a home directory's path (keras_dataset's default) is the driver's: expanded there
        if not _is_uri(dataset[key]) and not os.path.isabs(dataset[key]):
            dataset[key] = os.path.normpath(os.path.join(spec_dir, dataset[key]))
    return data


def _is_uri(path: str) -> bool:
    return "://" in path
