"""Rules across fields of a schema-valid Experiment (SPEC §4-§8). Each rule is a function yielding Problems.

The rules use the models' own knowledge: the metric names a spec reports (`Experiment.reported_metrics`),
the task and shape of a dataset. The search-space rules live in search_space.py.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Iterator

from specc.check.ax_search import outcome_metrics
from specc.check.conditional import conditional_problems
from specc.check.data import DATA_RULES
from specc.check.factories import factories_allowed
from specc.check.fields import Locator, did_you_mean
from specc.check.named import named_classes
from specc.check.numbers import numbers_ray_runs
from specc.check.objective import check_objective
from specc.check.ray_classes import ray_class_problems
from specc.check.schedule import loss_problems, schedule_problems
from specc.check.search_space import (
    compiled_in,
    data_fixed,
    donors_kept,
    pbt_grid,
    perturbations_fit,
    points_fit,
    ray_interpreted,
    search_supports,
    space_entries,
    space_paths,
)
from specc.check.travel import excludes_ray_matches_quickly, paths_inside_project, working_dir_holds_spec
from specc.read.document import Path, SourceMap
from specc.read.project import Project
from specc.spec.errors import Problem
from specc.spec.experiment import Experiment
from specc.spec.loss import loss_task, loss_type
from specc.spec.model import MODEL_TYPES
from specc.spec.stop import RAY_RESULT_KEYS, parse_condition

METRIC_TASK = {
    "accuracy": "classification",
    "top5_accuracy": "classification",
    "mse": "regression",
    "mae": "regression",
}
# keras.applications refuse inputs smaller than this (32 unless listed).
KERAS_MIN_SIDE = {"InceptionV3": 75, "InceptionResNetV2": 75, "Xception": 71}
# keras.applications of the tf_keras the scripts use (2.21), by class name.
KERAS_APPLICATIONS = (
    *(f"ConvNeXt{size}" for size in ("Base", "Large", "Small", "Tiny", "XLarge")),
    "DenseNet121",
    "DenseNet169",
    "DenseNet201",
    *(f"EfficientNetB{n}" for n in range(8)),
    *(f"EfficientNetV2{size}" for size in ("B0", "B1", "B2", "B3", "L", "M", "S")),
    "InceptionResNetV2",
    "InceptionV3",
    "MobileNet",
    "MobileNetV2",
    "MobileNetV3Large",
    "MobileNetV3Small",
    "NASNetLarge",
    "NASNetMobile",
    *(f"RegNet{kind}{size}" for kind in "XY" for size in ("002", "004", "006", "008", "016", "032", "040", "064")),
    *(f"RegNet{kind}{size}" for kind in "XY" for size in ("080", "120", "160", "320")),
    *(f"ResNet{depth}{v2}" for depth in (50, 101, 152) for v2 in ("", "V2")),
    *(f"ResNetRS{depth}" for depth in (50, 101, 152, 200, 270, 350, 420)),
    "VGG16",
    "VGG19",
    "Xception",
)
LOWER_IS_BETTER = re.compile(r"(loss|mse|mae|error)$|^num_parameters$")
HIGHER_IS_BETTER = re.compile(r"accuracy$")


def check(experiment: Experiment, source: SourceMap, project: Project | None = None) -> list[Problem]:
    """Every rule's problems; `project` (where the spec stands) lets the factory rule find modules."""
    at = Locator(source)
    if gate := list(numbers_ray_runs(experiment, at)):
        return gate  # every rule below, and plan and compile, compute with these numbers
    travels = [*paths_inside_project(experiment, at, project), *excludes_ray_matches_quickly(experiment, at)]
    if experiment.objective is not None:
        return [*_objective_rules(experiment, at), *check_objective(experiment, at, project), *travels]
    if not experiment.trains_model():
        return travels  # model, dataset or training missing: check/objective.py's form_problems says which
    found: list[Problem] = []
    for rule in RULES:
        found.extend(rule(experiment, at))
    found.extend(factories_allowed(experiment, at, project))
    return found + travels


# -- sections that need others ------------------------------------------------------------------
def needs_tune(e: Experiment, at: Locator) -> Iterator[Problem]:
    if e.tune is None:
        for section in ("scheduler", "stop"):
            if getattr(e, section) is not None:
                yield at(
                    "E205",
                    f"a {section} acts on Tune trials, but the spec has no tune section",
                    (section,),
                    "add a tune section (metric, mode, space) or remove this one",
                    key=True,
                )


def needs_checkpoints(e: Experiment, at: Locator) -> Iterator[Problem]:
    scheduler, every = e.scheduler, e.training.checkpoint_every
    if every == "never" and e.run.max_failures:
        yield at(
            "E206",
            f"run.max_failures {e.run.max_failures} retries from the last checkpoint, but checkpoint_every is never",
            ("run", "max_failures"),
            "write checkpoints (checkpoint_every: 1, or 0 for the end only), or max_failures: 0",
        )
    if scheduler is None or scheduler.type not in ("pbt", "pb2"):
        return
    if every == "never":
        yield at(
            "E206",
            f"{scheduler.type} copies checkpoints between trials, but checkpoint_every is never",
            ("training", "checkpoint_every"),
            "checkpoint every epoch: checkpoint_every: 1",
        )
        return
    yield from donors_kept(e, at)
    if every == 0:
        yield at(
            "E206",
            f"{scheduler.type} copies checkpoints between trials, but checkpoint_every is 0 (only at the end)",
            ("training", "checkpoint_every"),
            "checkpoint every epoch: checkpoint_every: 1",
        )
    elif scheduler.perturbation_interval % every:
        yield at(
            "E206",
            f"perturbation_interval {scheduler.perturbation_interval} is not a multiple of "
            f"checkpoint_every {every}: exploited trials would restart from older checkpoints",
            ("scheduler", "perturbation_interval"),
        )


def searched_checkpoints(e: Experiment, at: Locator) -> Iterator[Problem]:
    """Whether a script writes checkpoints is fixed when it compiles (by training.checkpoint_every): a search can
    change how often, not whether."""
    key = "training.checkpoint_every"
    population = e.scheduler is not None and e.scheduler.type in ("pbt", "pb2")
    for _kind, where, entries in space_entries(e):
        if key not in entries:
            continue
        path, values = (*where, key), _searched_values(entries[key])
        if "never" in values and (population or e.run.max_failures):
            needs = "run.max_failures retries"
            if population:
                needs = f"{e.scheduler.type} copies checkpoints between trials"
            yield at(
                "E206",
                f"{needs}, but the search can set checkpoint_every to never",
                path,
                "search numbers of epochs only (0: at the end)",
                key=True,
            )
        elif "never" in values:
            yield at(
                "E203",
                "checkpoint_every never cannot be searched: whether the script writes checkpoints is decided when it "
                "compiles",
                path,
                "search numbers of epochs only, or set training.checkpoint_every: never outside the search",
                key=True,
            )
        elif e.training.checkpoint_every == "never":
            yield at(
                "E203",
                "checkpoint_every is never, so the script writes no checkpoints: the values searched here mean nothing",
                path,
                "remove this key, or set training.checkpoint_every to a number of epochs",
                key=True,
            )


def checkpoint_settings_used(e: Experiment, at: Locator) -> Iterator[Problem]:
    """W321: with checkpoint_every never, what ranks or keeps checkpoints has none to act on. A warning: the run
    is the same without them. A training run's checkpoint_score still picks best.json's epoch: not warned there."""
    if e.training.checkpoint_every != "never":
        return
    hint = "remove it, or write checkpoints (training.checkpoint_every: 1, or 0 for the end only)"
    if e.run.checkpoint_score is not None and e.tune is not None:
        yield at(
            "W321",
            "checkpoint_score ranks no checkpoints: checkpoint_every is never (the best trial comes from tune.metric)",
            ("run", "checkpoint_score"),
            hint,
            key=True,
        )
    population = e.scheduler is not None and e.scheduler.type in ("pbt", "pb2")  # E206; and its default of 4
    if "checkpoints_to_keep" in e.run.model_fields_set and not population:
        message = "checkpoints_to_keep keeps none: checkpoint_every is never"
        yield at("W321", message, ("run", "checkpoints_to_keep"), hint, key=True)


# -- metric names -------------------------------------------------------------------------------
def metric_uses(e: Experiment) -> Iterator[tuple[str, Path]]:
    if e.tune and e.tune.multi_objective:
        for index, name in enumerate(e.tune.metric):
            yield name, ("tune", "metric", index)
    elif e.tune:
        yield e.tune.metric, ("tune", "metric")
    if e.stop:
        for field in ("when", "all_when"):
            for index, condition in enumerate(getattr(e.stop, field)):
                yield parse_condition(condition)[0], ("stop", field, index)
        if e.stop.plateau:
            yield e.stop.plateau.metric, ("stop", "plateau", "metric")
    if e.run.checkpoint_score:
        yield e.run.checkpoint_score.metric, ("run", "checkpoint_score", "metric")
    yield from outcome_metrics(e)  # tune.search.outcome_constraints of ax


def metrics_reported(e: Experiment, at: Locator) -> Iterator[Problem]:
    reported = e.reported_metrics()
    for name, path in metric_uses(e):
        if name in RAY_RESULT_KEYS and path[:2] in (("stop", "when"), ("stop", "all_when")):
            continue  # Ray adds these to every result
        if name not in reported:
            if name.startswith("val_") and not e.validates():
                train = f"train_{name[4:]}"
                hint = "validation_from: none reports no val_* metrics; validate (validation_from: test or train)" + (
                    f", or use {train} (training.train_metrics: true)" if name[4:] in METRIC_TASK else ""
                )
            elif name.startswith("val_") and name[4:] in METRIC_TASK:
                hint = f"add {name[4:]} to training.metrics"
            elif name.startswith("train_") and name[6:] in (e.training.metrics or ()):
                hint = "report metrics on the training batches too: training.train_metrics: true"
            elif name.startswith("train_") and name[6:] in METRIC_TASK:
                hint = f"add {name[6:]} to training.metrics and set training.train_metrics: true"
            elif e.objective is not None:
                declare = f"if {e.objective.reference} reports it, add it to objective.metrics"
                hint = "; ".join(filter(None, (did_you_mean(name, reported), declare)))
            else:
                hint = did_you_mean(name, reported)
            yield at("E201", f"'{name}' is not reported; this spec reports: {', '.join(reported)}", path, hint)


def mode_direction(e: Experiment, at: Locator) -> Iterator[Problem]:
    if not e.tune:
        return
    multi = isinstance(e.tune.mode, list)
    if multi != isinstance(e.tune.metric, list):
        return  # E236: which mode goes with which metric is not said
    for index, (metric, mode) in enumerate(e.tune.objectives):
        path = ("tune", "mode", index) if multi else ("tune", "mode")
        fix = f"{'mode[' + str(index) + ']' if multi else 'mode'}: {'max' if mode == 'min' else 'min'}"
        if mode == "max" and metric == "num_parameters":
            yield at("W301", "mode is max: the search would rank the largest model best", path, fix)
        elif mode == "max" and LOWER_IS_BETTER.search(metric):
            yield at("W301", f"mode is max, but lower {metric} is better", path, fix)
        if mode == "min" and HIGHER_IS_BETTER.search(metric):
            yield at("W301", f"mode is min, but higher {metric} is better", path, fix)


# -- several objectives (tune.metric a list) -------------------------------------------------------
ONE_METRIC_SCHEDULERS = ("asha", "hyperband", "hyperband_for_bohb", "median_stopping", "pbt", "pb2")


def objectives_fit(e: Experiment, at: Locator) -> Iterator[Problem]:
    """E235-E237: a list of metrics is a multi-objective search, which only Optuna runs (Ray's OptunaSearch takes
    metric and mode lists; TuneConfig, the other searchers and the schedulers take one metric). Anything that
    ranks trials by one metric in one direction cannot stand beside it."""
    t = e.tune
    if t is None:
        return
    metric_list, mode_list = isinstance(t.metric, list), isinstance(t.mode, list)
    if not metric_list and not mode_list:
        return
    if metric_list != mode_list:
        listed, plain = ("metric", "mode") if metric_list else ("mode", "metric")
        yield at(
            "E236",
            f"tune.{listed} is a list but tune.{plain} is not",
            ("tune", "mode"),
            "give one mode per metric, e.g. mode: [max, min]" if metric_list else "mode: min or mode: max",
            also=("tune", "metric"),
        )
    elif len(t.metric) != len(t.mode):
        yield at(
            "E236",
            f"tune.metric names {len(t.metric)} metrics but tune.mode gives {len(t.mode)} modes",
            ("tune", "mode"),
            "one mode (min or max) per metric, in the same order",
            also=("tune", "metric"),
        )
    if metric_list:
        for index, name in enumerate(t.metric):
            if name in t.metric[:index]:
                yield at("E236", f"'{name}' is named twice in tune.metric", ("tune", "metric", index), "name it once")
        if len(t.metric) == 1:
            yield at(
                "E236",
                "tune.metric is a list of one: a single objective",
                ("tune", "metric"),
                f"metric: {t.metric[0]} (no list), or name a second metric",
            )
    if not metric_list:
        return
    if t.search.type != "optuna":
        yield at(
            "E235",
            f"several objectives need search.type optuna: Ray's {t.search.type} searcher optimises one metric",
            ("tune", "metric"),
            "search: {type: optuna}, or optimise one metric",
            also=("tune", "search", "type"),
        )
    if e.scheduler is not None and e.scheduler.type in ONE_METRIC_SCHEDULERS:
        yield at(
            "E237",
            f"scheduler {e.scheduler.type} ranks trials by one metric, but tune.metric names {len(t.metric)}",
            ("scheduler", "type"),
            "leave the scheduler out (fifo: every trial runs to the end), or optimise one metric",
            also=("tune", "metric"),
        )
    if "num_parameters" in t.metric and e.objective is None and not any(path.startswith("model.") for path in t.space):
        yield at(
            "W334",
            "num_parameters is an objective, but the search changes no model.* field: every trial has the same "
            "count, so the front holds only the best trials by the other metrics",
            ("tune", "metric", t.metric.index("num_parameters")),
            "search a field that sizes the model (e.g. model.hidden_sizes), or drop num_parameters from tune.metric",
        )
    plateau = e.stop.plateau if e.stop else None
    if plateau is not None and plateau.metric_threshold is not None:
        yield at(
            "E237",
            "stop.plateau.metric_threshold needs one direction (tune.mode), but tune.mode is a list",
            ("stop", "plateau", "metric_threshold"),
            "leave metric_threshold out (the plateau alone stops the trial), or state the bound in stop.when",
            also=("tune", "mode"),
        )


# -- framework, task, model x data --------------------------------------------------------------
def framework_support(e: Experiment, at: Locator) -> Iterator[Problem]:
    allowed = MODEL_TYPES[e.framework]
    if e.model.type not in allowed:
        yield at(
            "E207",
            f"model type '{e.model.type}' is not available with framework {e.framework}",
            ("model", "type"),
            "use one of: " + ", ".join(allowed),
        )
    if e.framework == "tensorflow":
        if e.model.type == "keras_application" and e.model.name not in KERAS_APPLICATIONS:
            hint = did_you_mean(e.model.name, list(KERAS_APPLICATIONS)) or "e.g. ResNet50, MobileNetV2, EfficientNetB0"
            yield at("E207", f"keras.applications has no {e.model.name}", ("model", "name"), hint)
        if e.dataset.type == "torchvision":
            yield at("E207", "torchvision datasets need framework torch", ("dataset", "type"))
        workers = e.scaling.num_workers
        for field in ("steps_per_epoch", "validation_steps"):
            steps = getattr(e.training, field)
            if workers > 1 and steps is not None and steps % workers:
                fits = sorted({max(workers, steps // workers * workers), -(-steps // workers) * workers})
                yield at(
                    "E207",
                    f"with tensorflow on {workers} workers, {field} {steps} is not a multiple of num_workers: "
                    "MultiWorkerMirroredStrategy splits each global batch into one step per worker",
                    ("training", field),
                    "e.g. " + " or ".join(f"{field}: {n}" for n in fits),
                )
        yield from _searched_steps(e, workers, at)
        if e.scaling.backend is not None:
            yield at(
                "E207",
                "scaling.backend is a torch.distributed setting; tensorflow workers use MultiWorkerMirroredStrategy",
                ("scaling", "backend"),
                key=True,
            )


def _searched_steps(e: Experiment, workers: int, at: Locator) -> Iterator[Problem]:
    """E207 for every value a search can give steps_per_epoch / validation_steps (num_workers is never searched)."""
    if workers < 2:
        return
    for _kind, where, entries in space_entries(e):
        for field in ("steps_per_epoch", "validation_steps"):
            key = f"training.{field}"
            steps = _uneven(entries[key], workers) if key in entries else None
            if steps is not None:
                yield at(
                    "E207",
                    f"with tensorflow on {workers} workers, {field} {steps}, a value the search can take, is not a "
                    "multiple of num_workers: MultiWorkerMirroredStrategy splits each global batch into one step per "
                    "worker",
                    (*where, key),
                    f"search multiples of {workers}: a choice of them, or qrandint with q a multiple of {workers}",
                    key=True,
                )


def _uneven(distribution, workers: int) -> int | None:
    """A whole number the distribution can produce that `workers` does not divide, or None when it has none (a
    range is scanned over `workers` + 1 of its values: among that many, one is uneven unless the step divides)."""
    kind = getattr(distribution, "kind", None)
    if kind in ("randint", "lograndint", "qrandint"):
        lo, hi, *q = distribution.args
        step = q[0] if q else 1
        last = hi if step != 1 else hi - 1  # qrandint's upper bound is inclusive (but for q 1), randint's exclusive
        candidates = [n * step for n in range(-(-lo // step), last // step + 1)][: workers + 1]
    else:
        candidates = _searched_values(distribution)
    return next((n for n in candidates if isinstance(n, int) and not isinstance(n, bool) and n % workers), None)


def keras_weight_decay(e: Experiment, at: Locator) -> Iterator[Problem]:
    """Keras optimizers decay weights apart from the gradient (AdamW's way); torch's sgd, adam and rmsprop add
    weight_decay to the gradient as an L2 term. Only adamw means the same in both."""
    optimizer = e.training.optimizer
    if e.framework != "tensorflow" or optimizer.type not in ("sgd", "adam", "rmsprop"):
        return  # adamw means the same in both; a Keras class named as it is (NamedOptimizer) decays as Keras does
    message = (
        f"with framework tensorflow, {optimizer.type}'s weight_decay would be decoupled from the gradient "
        "(Keras's way), not the L2 term torch adds"
    )
    hint = "use optimizer type adamw for decoupled weight decay, or leave weight_decay at 0"
    if optimizer.weight_decay > 0:
        yield at("E207", message, ("training", "optimizer", "weight_decay"), hint)
    for _kind, where, entries in space_entries(e):
        if "training.optimizer.weight_decay" in entries:
            yield at("E207", message, (*where, "training.optimizer.weight_decay"), hint, key=True)
    entry = e.tune.space.get("training.optimizer") if e.tune else None
    for index, option in enumerate(entry.args if entry is not None and entry.kind in ("choice", "grid") else ()):
        # an option of a searched optimizer: the same rule for the type it chooses
        decay = option.get("weight_decay", 0) if isinstance(option, dict) else 0
        if option.get("type") in ("sgd", "adam", "rmsprop") and (decay != 0 and decay is not None):
            shown = message.replace(f"{optimizer.type}'s", f"{option['type']}'s")
            where = ("tune", "space", "training.optimizer", entry.kind, index, "weight_decay")
            yield at("E207", shown, where, hint, key=True)


def task_fit(e: Experiment, at: Locator) -> Iterator[Problem]:
    task, classes = e.task(), e.dataset.known_classes()
    loss, meaning = e.training.loss, loss_task(e.framework, e.training.loss)
    name = loss_type(loss)
    where = ("training", "loss") if isinstance(loss, str) else ("training", "loss", "type")
    if meaning is not None and (meaning == "regression") != (task == "regression"):
        yield at(
            "E208",
            f"loss {name} is for {'regression' if meaning == 'regression' else 'classification'}, but the "
            f"{e.dataset.type} dataset is {task}",
            where,
        )
    elif meaning == "binary" and classes not in (None, 2):
        yield at(
            "E208",
            f"{name} is for 2 classes (one logit per example); the dataset has {classes}",
            where,
            "use cross_entropy" if e.framework == "torch" else "use cross_entropy (sparse_categorical_crossentropy)",
        )
    for index, metric in enumerate(e.training.metrics or ()):
        if METRIC_TASK[metric] != task:
            yield at(
                "E208",
                f"metric {metric} is for {METRIC_TASK[metric]}; this spec is {task}",
                ("training", "metrics", index),
            )
        elif metric == "top5_accuracy" and classes is not None and classes <= 5:
            yield at("E208", f"top5_accuracy is always 1 with {classes} classes", ("training", "metrics", index))


def model_takes_data(e: Experiment, at: Locator) -> Iterator[Problem]:
    model, dataset = e.model, e.dataset
    shape = dataset.known_image_shape()
    rows = dataset.type in (
        "synthetic_classification",
        "synthetic_regression",
        "iris",
        "wine",
        "breast_cancer",
        "csv",
        "parquet",
        "jsonl",
    )
    if model.type in ("cnn", "torchvision", "keras_application") and rows:
        yield at(
            "E210",
            f"a {model.type} model needs images, but {dataset.type} gives rows of features",
            ("model", "type"),
            "use model type mlp",
        )
        return
    if model.type == "cnn" and shape:
        yield from _cnn_fits(model, shape, at)
    if model.type == "keras_application" and shape and min(shape[1:]) < KERAS_MIN_SIDE.get(model.name, 32):
        need = KERAS_MIN_SIDE.get(model.name, 32)
        yield at(
            "E210",
            f"keras.applications.{model.name} needs images of at least {need}x{need}; "
            f"{dataset.type} gives {shape[1]}x{shape[2]}",
            ("model", "name"),
            "use model type cnn or mlp for small images",
        )
    if model.type == "torchvision" and shape and model.in_channels and model.in_channels != shape[0]:
        yield at(
            "E210",
            f"in_channels is {model.in_channels}, but {dataset.type} images have {shape[0]}",
            ("model", "in_channels"),
            f"remove in_channels or set it to {shape[0]}",
        )
    normalize = getattr(dataset, "normalize", None)
    if normalize and shape and len(normalize.mean) != shape[0]:
        yield at(
            "E210",
            f"normalize has {len(normalize.mean)} values per statistic, but the images have {shape[0]} channel(s)",
            ("dataset", "normalize", "mean"),
        )


def _cnn_fits(model, shape: tuple[int, int, int], at: Locator) -> Iterator[Problem]:
    """Follow the image's smaller side through the conv blocks: a valid conv takes kernel_size - 1 off it, a pool
    needs a full window and leaves (side - size) // stride + 1; the first block with nothing left is the problem."""
    side = min(shape[1], shape[2])
    image = f"the {shape[1]}x{shape[2]} image"
    for block in range(len(model.channels)):
        if model.padding == "valid":
            if side < model.kernel_size:
                yield at(
                    "E210",
                    f"with padding valid each {model.kernel_size}x{model.kernel_size} conv shrinks {image}; "
                    f"conv block {block + 1} gets {side}x{side} pixels, less than its kernel",
                    ("model", "padding"),
                    f"use padding same, a smaller kernel_size or at most {block} conv blocks",
                )
                return
            side -= model.kernel_size - 1
        if model.pool is None:
            continue
        if side < model.pool.size:
            if (model.pool.size, model.pool.stride) == (2, 2):
                shrinks, left = "halve", "nothing left to pool"
            else:
                shrinks, left = "shrink", f"{side}x{side} pixels, less than its pool size {model.pool.size}"
            yield at(
                "E210",
                f"{len(model.channels)} conv blocks each {shrinks} {image}; block {block + 1} has {left}",
                ("model", "channels"),
                f"use at most {block} conv blocks" + (", or pool: null" if block == 0 else ""),
            )
            return
        side = (side - model.pool.size) // model.pool.stride + 1


def batch_sizes(e: Experiment, at: Locator) -> Iterator[Problem]:
    """Exactly one of batch_size and global_batch_size; the workers divide a global batch evenly."""
    dataset = e.dataset
    if dataset.batch_size is not None and dataset.global_batch_size is not None:
        yield at(
            "E220",
            "batch_size and global_batch_size are both set: give the batch per worker or across all workers",
            ("dataset", "global_batch_size"),
            "remove one of them (over an extended file's batch_size: batch_size: null)",
        )
        return
    if dataset.batch_size is None and dataset.global_batch_size is None:
        yield at(
            "E220",
            "batch_size is null, but there is no global_batch_size to take its place",
            ("dataset", "batch_size"),
            "set batch_size (per worker) or global_batch_size (across the workers)",
        )
        return
    given = "global_batch_size" if dataset.global_batch_size is not None else "batch_size"
    other = "batch_size" if given == "global_batch_size" else "global_batch_size"
    for _kind, where, entries in space_entries(e):
        if f"dataset.{other}" in entries:
            yield at(
                "E220",
                f"the search sets dataset.{other}, but the spec gives {given}: a trial would have both",
                (*where, f"dataset.{other}"),
                f"search dataset.{given} instead",
                key=True,
            )
    if dataset.global_batch_size is None:
        return
    workers = e.scaling.num_workers  # never searched: Ray reserves a trial's workers before it samples
    if workers > 1 and dataset.global_batch_size % workers:
        low = dataset.global_batch_size - dataset.global_batch_size % workers
        yield at(
            "E211",
            f"global_batch_size {dataset.global_batch_size} cannot be split evenly across {workers} workers",
            ("dataset", "global_batch_size"),
            f"use a multiple of {workers}, e.g. {low or workers} or {low + workers}",
        )
    for _kind, where, entries in space_entries(e):
        if "dataset.global_batch_size" not in entries or workers < 2:
            continue
        uneven = [size for size in _searched_values(entries["dataset.global_batch_size"]) if size % workers]
        if uneven:
            yield at(
                "E211",
                f"global_batch_size {uneven[0]}, a value the search can take, cannot be split evenly across "
                f"{workers} workers",
                (*where, "dataset.global_batch_size"),
                f"search multiples of {workers}",
                key=True,
            )


def _searched_values(distribution) -> list:
    """The values a choice or grid (or a plain list of mutations) can produce; none for ranges, which run time
    checks."""
    if isinstance(distribution, list):
        return distribution
    return list(distribution.args) if getattr(distribution, "kind", None) in ("choice", "grid") else []


def scaling_consistent(e: Experiment, at: Locator) -> Iterator[Problem]:
    scaling = e.scaling
    if scaling.backend == "nccl" and not scaling.use_gpu:
        yield at(
            "E211",
            "the nccl backend needs GPUs, but use_gpu is false",
            ("scaling", "backend"),
            "use gloo on CPU, or set use_gpu: true",
        )
    gpus = (scaling.resources_per_worker or {}).get("GPU", 0)
    if gpus and not scaling.use_gpu:
        yield at(
            "E211",
            "resources_per_worker asks for GPUs, but use_gpu is false",
            ("scaling", "resources_per_worker", "GPU"),
            "set use_gpu: true",
        )
    optimizer = e.training.optimizer
    if optimizer.type == "sgd" and optimizer.nesterov and optimizer.momentum == 0:
        yield at("E100", "nesterov needs momentum > 0", ("training", "optimizer", "nesterov"))


EPOCHS = ("training", "epochs")


def scheduler_budget(e: Experiment, at: Locator) -> Iterator[Problem]:
    scheduler, epochs = e.scheduler, e.longest_epochs()  # the longest trial's, when training.epochs is searched
    if scheduler is None or scheduler.time_attr != "training_iteration":  # budgets in another unit than epochs
        return
    searched = e.tune is not None and "training.epochs" in e.tune.space
    budget = f"the longest trial's {epochs} epochs" if searched else f"training.epochs {epochs}"
    also = ("tune", "space", "training.epochs") if searched else EPOCHS
    max_t = getattr(scheduler, "max_t", None)
    if max_t and max_t > epochs:  # Ray accepts it: the trials simply end at the last epoch, before the later rungs
        yield at(
            "W330",
            f"max_t {max_t} exceeds {budget}: trials end at epoch {epochs}, and the rungs after it are never reached",
            ("scheduler", "max_t"),
            "leave max_t out: it defaults to " + ("the most epochs a trial trains" if searched else "training.epochs"),
            also=also,
        )
    grace = getattr(scheduler, "grace_period", None)
    if grace and grace >= (max_t or epochs) and scheduler.type != "fifo":
        yield at(
            "E209",
            f"grace_period {grace} leaves no epoch in which a trial could be stopped (budget {max_t or epochs})",
            ("scheduler", "grace_period"),
            also=("scheduler", "max_t") if max_t and max_t != epochs else also,
        )
    elif grace and max_t and epochs <= grace < max_t:
        yield at(
            "W330",
            f"grace_period {grace} is not below {budget}: every trial ends before its first rung",
            ("scheduler", "grace_period"),
            f"a grace_period below {epochs}",
            also=also,
        )
    interval = getattr(scheduler, "perturbation_interval", None)
    if interval and interval >= epochs:
        yield at(
            "E209",
            f"perturbation_interval {interval} is not below {budget}: trials would never be perturbed",
            ("scheduler", "perturbation_interval"),
            also=also,
        )


OPERATORS = {">=": operator.ge, ">": operator.gt, "<=": operator.le, "<": operator.lt}


def ray_key_conditions(e: Experiment, at: Locator) -> Iterator[Problem]:
    """stop conditions on Ray's own training_iteration (reports so far: 1 after the first epoch or the function's
    first report) and time_total_s: one every trial meets at its first report (E231), or one no trial reaches within
    its budget, training.epochs or objective.max_steps (W330)."""
    if e.stop is None:
        return
    if e.objective is not None:
        budget, unit, where = e.objective.max_steps, "report", ("objective", "max_steps")
    else:
        budget, unit, where = getattr(getattr(e, "training", None), "epochs", None), "epoch", EPOCHS
    for field in ("when", "all_when"):
        stops = "every trial would stop" if field == "when" else "the search would end"
        for index, condition in enumerate(getattr(e.stop, field)):
            metric, op, value = parse_condition(condition)
            shown = repr(condition.strip())
            if metric == "training_iteration":
                found = _iteration_problem(shown, op, value, (budget, unit, where), stops)
            elif metric == "time_total_s" and (op in ("<=", "<") or value <= 0):  # a trial's time is above 0
                message = f"{shown} holds at the first report (or never, if it comes later): {stops} there"
                found = ("E231", message, "time_total_s >= SECONDS stops once a trial has run that long")
            else:
                continue
            if found:
                code, message, hint = found
                yield at(code, message, ("stop", field, index), hint, also=where if code == "W330" else ())


def _iteration_problem(shown: str, op: str, value: float, budget: tuple, stops: str) -> tuple | None:
    """(code, message, hint) for a training_iteration condition that cannot mean what it says, or None. `budget`:
    (the most reports a trial makes or None, what one report is, the field that says so)."""
    most, unit, where = budget
    holds, rising = OPERATORS[op], op in (">=", ">")
    after_n = f"training_iteration >= N stops after N {unit}s"
    if value != int(value):
        whole = f"training_iteration {'>=' if rising else '<='} {math.ceil(value) if rising else math.floor(value)}"
        return "E231", f"training_iteration counts reports: {_plain(value)} is not a whole number", whole
    if holds(1, value):
        message = f"{shown} holds at the first report (training_iteration 1): {stops} after one {unit}"
        return "E231", message, after_n if not rising else "a number above 1"
    if most is not None and not holds(most if rising else 1, value):
        message = f"{shown} never holds: {'.'.join(where)} {most} ends every trial first"
        return "W330", message, f"a number up to {most}" if rising else after_n
    return None


def _plain(value: float) -> str:
    return str(int(value)) if value == int(value) else repr(value)


def extras_installed(e: Experiment, at: Locator) -> Iterator[Problem]:
    from specc.check.extras import not_installed

    yield from not_installed(e, at, "W302")


def _objective_rules(e: Experiment, at: Locator) -> Iterator[Problem]:
    """The rules that concern the search around a trainable, whichever it is (an objective spec has no model)."""
    for rule in OBJECTIVE_RULES:
        yield from rule(e, at)


RULES = (
    needs_tune,
    framework_support,
    named_classes,
    schedule_problems,
    loss_problems,
    keras_weight_decay,
    task_fit,
    model_takes_data,
    scaling_consistent,
    batch_sizes,
    *DATA_RULES,
    metrics_reported,
    mode_direction,
    objectives_fit,
    space_paths,
    search_supports,
    pbt_grid,
    perturbations_fit,
    points_fit,
    ray_interpreted,
    conditional_problems,
    compiled_in,
    data_fixed,
    scheduler_budget,
    ray_key_conditions,
    needs_checkpoints,
    searched_checkpoints,
    checkpoint_settings_used,
    ray_class_problems,
    working_dir_holds_spec,
    extras_installed,
)
OBJECTIVE_RULES = (
    needs_tune,
    metrics_reported,
    mode_direction,
    objectives_fit,
    space_paths,
    search_supports,
    pbt_grid,
    ray_key_conditions,
    points_fit,
    ray_interpreted,
    conditional_problems,
    ray_class_problems,
    working_dir_holds_spec,
    extras_installed,
)
