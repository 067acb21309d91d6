"""training.lr_schedule beyond its class's own arguments (SPEC §13): where the loop steps it (`per`), the metric a
reduce_on_plateau watches, a warm-up before it; and a named loss the loop cannot feed the model's logits."""

from __future__ import annotations

from collections.abc import Iterator

from specc import catalog
from specc.check.fields import Locator, did_you_mean
from specc.check.named import framework_of, named_entry
from specc.spec.errors import Problem
from specc.spec.experiment import Experiment
from specc.spec.loss import loss_task
from specc.spec.schedule import PLATEAU_CLASS, STEPPED_CLASSES, NamedSchedule

WHERE = ("training", "lr_schedule")


def schedule_entry(e: Experiment) -> catalog.Entry | None:
    """The catalog's entry for a named lr_schedule (None for a curated one, or a name the catalog lacks)."""
    return named_entry(e, "lr_schedule")


def loss_entry(e: Experiment) -> catalog.Entry | None:
    """The catalog's entry for a named loss (None for one of specc's five names)."""
    return named_entry(e, "loss")


def per(e: Experiment) -> str:
    """Where the loop steps the schedule: the spec's `per`, else step for the classes whose counts are steps."""
    schedule = e.training.lr_schedule
    if schedule.per is not None:
        return schedule.per
    entry = schedule_entry(e)
    return "step" if entry is not None and entry.class_name in STEPPED_CLASSES else "epoch"


def plateau_metric(e: Experiment) -> str:
    """The metric a reduce_on_plateau watches: the spec's, else val_loss (train_loss without validation)."""
    metric = getattr(e.training.lr_schedule, "metric", None)
    return metric or ("val_loss" if e.validates() else "train_loss")


def schedule_problems(e: Experiment, at: Locator) -> Iterator[Problem]:
    if e.framework is None or e.objective is not None or e.training is None:
        return
    schedule, entry = e.training.lr_schedule, schedule_entry(e)
    plateau = entry is not None and entry.class_name == PLATEAU_CLASS
    if isinstance(schedule, NamedSchedule) and schedule.metric is not None and entry is not None and not plateau:
        yield at(
            "E101",
            f"{entry.class_name} watches no metric",
            (*WHERE, "metric"),
            "metric is reduce_on_plateau's",
            key=True,
        )
    if plateau:
        reported = e.reported_metrics()
        if schedule.metric is not None and schedule.metric not in reported:
            hint = did_you_mean(schedule.metric, reported)
            message = f"'{schedule.metric}' is not reported; this spec reports: {', '.join(reported)}"
            yield at("E201", message, (*WHERE, "metric"), hint)
        if "mode" in schedule.arguments() and framework_of(e) == "torch":
            hint = "lower is better for losses and errors, higher for accuracies"
            yield at("E101", "reduce_on_plateau's mode comes from its metric", (*WHERE, "mode"), hint, key=True)
        if schedule.per == "step":
            yield at("E260", "reduce_on_plateau steps once per epoch, on the epoch's metric", (*WHERE, "per"))
        if schedule.warmup is not None:
            hint = "warm up with another schedule, or lower the optimizer's lr"
            yield at(
                "E260", "a warm-up cannot precede reduce_on_plateau: it steps on a metric", (*WHERE, "warmup"), hint
            )
    stepped = per(e) == "step" and (schedule.type != "none" or schedule.warmup is not None)
    if framework_of(e) == "keras" and stepped and not isinstance(schedule, NamedSchedule):
        hint = "per: epoch, or a keras.optimizers.schedules class (e.g. cosine_decay), which counts steps"
        message = f"on tensorflow, the {schedule.type} schedule is stepped once per epoch"
        yield at("E207", message, (*WHERE, "per"), hint)
    if framework_of(e) == "keras" and stepped and schedule.warmup is not None:
        hint = "per: epoch (the warm-up then counts epochs)"
        yield at("E207", "on tensorflow, a warm-up is stepped once per epoch", (*WHERE, "warmup"), hint)
    counts_steps = stepped and (schedule.warmup is not None or (entry is not None and entry.class_name == "OneCycleLR"))
    if counts_steps and getattr(e.dataset, "loader", None) == "ray_data" and e.training.steps_per_epoch is None:
        message = "the steps of an epoch are not known ahead with loader ray_data, and this schedule counts them"
        yield at("E260", message, (*WHERE, "per"), "set training.steps_per_epoch")


def loss_problems(e: Experiment, at: Locator) -> Iterator[Problem]:
    """A named loss the loop cannot drive as asked: one number per batch, from targets specc knows the form of."""
    entry = loss_entry(e)
    if entry is None or entry.not_drivable:
        return  # named_problems says why
    if loss_task(e.framework, e.training.loss) is None:  # a class newer than specc's table of what losses are for
        message = f"{entry.path} cannot be the loss here: specc does not know which targets it takes"
        yield at("E260", message, ("training", "loss", "type"))
    if e.training.loss.arguments().get("reduction") == "none":
        message = "reduction none gives a loss per example; training needs one number per batch"
        yield at("E104", message, ("training", "loss", "reduction"), "mean (the default) or sum")
