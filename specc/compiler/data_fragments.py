"""The template context of a data set read by the driver (SPEC §12): file tables and image folders streamed with
Ray Data, the preprocessing fitted on their training split, and the imports that code needs."""

from __future__ import annotations

from specc.compiler.resolve import Plan

FILLS = ("mean", "median", "most_frequent")  # dataset.missing values that fit a fill value on the training split


def data_context(plan: Plan) -> dict:
    """What the data templates branch on: `fills` (missing values filled), `fits` (Ray Data preprocessors fitted on
    the training split), `streams` (Ray Data streams from storage: CPUs left for it), `fitted` (a preprocessing.json
    in every checkpoint), `train_buffer` (training batches through a local shuffle buffer), `keeps_validation` (a torch
    worker keeps its streamed validation batches on its disk: ValidationOnDisk)."""
    dataset = plan.experiment.dataset
    fills = getattr(dataset, "missing", None) in FILLS
    fits = plan.data_source == "files" and (dataset.standardize or bool(getattr(dataset, "categorical", [])) or fills)
    streams, buffer, keeps = plan.streams, _train_buffer(plan), _keeps_validation(plan)
    context = {"fills": fills, "fits": fits, "streams": streams, "fitted": plan.fitted, "train_buffer": buffer}
    return {**context, "keeps_validation": keeps}


def _keeps_validation(plan: Plan) -> bool:
    """Whether a torch worker keeps its validation batches from Ray Data's first whole pass on its disk: when they
    stream from files, whose validation rows each pass would otherwise find by reading the whole data set again.
    (Keras reads the validation pipeline itself, from another thread: no vote across workers fits there.) Not with
    shuffle_validation: kept batches would come back in one order; each epoch streams them anew instead."""
    e = plan.experiment
    return plan.streams and e.validates() and e.framework == "torch" and not e.dataset.shuffle_validation


def _train_buffer(plan: Plan) -> str:
    """Whether training batches from Ray Data pass through a local shuffle buffer ("True"/"False"): rows of a table
    come in their files' order, but ImageBlocks already reads the images in a new order each epoch. (A search cannot
    vary dataset.shuffle with loader ray_data: E213.)"""
    return "True" if plan.experiment.dataset.shuffle and plan.data_source != "image_folder" else "False"


def data_imports(plan: Plan) -> tuple[set[str], set[str]]:
    """(modules, from-imports) of the driver's data code."""
    dataset, modules, froms = plan.experiment.dataset, set(), set()
    if plan.fitted:  # hashing rows (or file names) for the validation split, reading column types
        modules |= {"pyarrow", "pyarrow.types"} | ({"pandas as pd"} if plan.experiment.validates() else set())
    if dataset.type in ("csv", "parquet", "jsonl"):
        modules.add("pyarrow.compute")
    if plan.streams:
        modules |= {"ray.data"}
        froms.add("from ray.data._internal.execution.execution_callback import ExecutionCallback")  # PacedScheduling
    if _keeps_validation(plan):
        modules |= {"shutil", "tempfile"}  # ValidationOnDisk
    if dataset.type == "csv":
        modules.add("pyarrow.csv")
    if dataset.type == "parquet":
        modules.add("pyarrow.parquet")  # ParquetSlices (functools and pyarrow.fs: every script imports them)
    if _aggregates(plan):
        froms.add("from ray.data.aggregate import " + ", ".join(_aggregates(plan)))
    if plan.data_source == "files" and _preprocessors(plan):
        froms.add("from ray.data.preprocessors import " + ", ".join(_preprocessors(plan)))
    if plan.data_source == "image_folder":
        modules |= {"io", "PIL.Image"}  # decoded_image (ImageBlocks' tasks, or the DataLoaders' workers)
    return modules, froms


def _aggregates(plan: Plan) -> list[str]:
    """The Ray Data aggregations of the driver's data code: a median's fill value (the rows' check counts blocks)."""
    return ["ApproximateQuantile"] if getattr(plan.experiment.dataset, "missing", None) == "median" else []


def _counts_classes(plan: Plan) -> bool:
    return plan.task == "classification" and not plan.experiment.binary_targets()


def _preprocessors(plan: Plan) -> list[str]:
    """The Ray Data preprocessors a table's fitting uses, in import order."""
    dataset = plan.experiment.dataset
    if dataset.type == "npz" or not data_context(plan)["fits"]:
        return []
    names = ["Chain"]
    names += ["OneHotEncoder"] if dataset.categorical else []
    names += ["SimpleImputer"] if dataset.missing in FILLS else []
    names += ["StandardScaler"] if dataset.standardize else []
    return names
