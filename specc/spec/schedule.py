"""`training.lr_schedule`: how the learning rate changes. The five schedules specc documents field by field (none,
step, multistep, cosine, exponential), or any class of torch.optim.lr_scheduler / keras.optimizers.schedules by
name (SPEC §13); each may step per epoch or per optimizer step, after a linear warm-up."""

from __future__ import annotations

from itertools import pairwise
from typing import Annotated, Literal, Union

from pydantic import AfterValidator, BeforeValidator, Discriminator, Field, Tag, model_serializer
from pydantic_core import PydanticCustomError

from specc.spec.base import IDENTIFIER_PATTERN, NonNegativeFloat, PositiveInt, Section, describe
from specc.spec.named import NamedClass, named_type, spelling, tagger

Decay = Annotated[float, Field(gt=0, le=1)]
# The schedules specc documents field by field, with the torch class each is (a spec may name either).
CURATED_SCHEDULES = {
    "none": None,
    "step": "StepLR",
    "multistep": "MultiStepLR",
    "cosine": "CosineAnnealingLR",
    "exponential": "ExponentialLR",
}
STEPPED_CLASSES = ("OneCycleLR", "CyclicLR")  # their arguments count optimizer steps: `per` defaults to step
PLATEAU_CLASS = "ReduceLROnPlateau"  # torch's scheduler and Keras' callback: stepped with lr_schedule.metric


class Warmup(Section):
    """A linear warm-up before the schedule: the learning rate rises from start_factor times its first value to
    that value over `epochs` (torch's LinearLR, then the schedule, in a SequentialLR)."""

    epochs: PositiveInt = describe("Epochs of warm-up (their steps, with per: step); the schedule starts after them.")
    start_factor: Annotated[float, Field(gt=0, le=1)] = describe(
        "The first epoch's learning rate, as a fraction of the schedule's first.", 0.1
    )


LEFT_OUT = ("per", "warmup", "metric")  # in a dump only when given


class Schedule(Section):
    """What every schedule takes: where the loop steps it, and a warm-up before it."""

    per: Literal["epoch", "step"] | None = describe(
        "Step the schedule once per epoch or once per optimizer step (its counts are then steps); "
        "default: epoch (one_cycle and cyclic: step).",
        None,
    )
    warmup: Warmup | None = describe("A linear warm-up before the schedule.", None)

    @model_serializer(mode="wrap")
    def _unset_left_out(self, handler):
        """per, warmup and metric only when given: a schedule of the first releases dumps (and compiles) as it did."""
        data = handler(self)
        return {key: value for key, value in data.items() if key not in LEFT_OUT or value is not None}


class NoSchedule(Schedule):
    type: Literal["none"] = describe("A constant learning rate.")


class StepLR(Schedule):
    type: Literal["step"] = describe("Multiply the LR by gamma every step_size epochs.")
    step_size: PositiveInt = describe("Epochs between decays.")
    gamma: Decay = describe("Multiplicative factor of each decay.", 0.1)


def _increasing(milestones: list[int]) -> list[int]:
    if any(b <= a for a, b in pairwise(milestones)):
        raise PydanticCustomError("not_increasing", "milestones must be strictly increasing")
    return milestones


class MultiStepLR(Schedule):
    type: Literal["multistep"] = describe("Multiply the LR by gamma at each milestone epoch.")
    milestones: Annotated[list[PositiveInt], AfterValidator(_increasing)] = describe(
        "Epochs at which the LR decays, increasing.", min_length=1
    )
    gamma: Decay = describe("Multiplicative factor of each decay.", 0.1)


class CosineLR(Schedule):
    type: Literal["cosine"] = describe("Cosine annealing from the initial LR to eta_min.")
    t_max: PositiveInt | None = describe("Epochs of one half cosine; default: training.epochs.", None)
    eta_min: NonNegativeFloat = describe("Final learning rate.", 0.0)


class ExponentialLR(Schedule):
    type: Literal["exponential"] = describe("Multiply the LR by gamma every epoch.")
    gamma: Decay = describe("Multiplicative factor per epoch.", 0.95)


class NamedSchedule(NamedClass, Schedule):
    """Any other schedule torch.optim.lr_scheduler (torch) or keras.optimizers.schedules (tensorflow) offers, by its
    snake_case name (one_cycle, cosine_warm_restarts, polynomial, reduce_on_plateau) or its class name as written
    (OneCycleLR); the other keys are its keyword arguments. The optimizer, a OneCycleLR's step counts and a Keras
    schedule's initial_learning_rate come from the compiled code."""

    model_config = NamedClass.model_config  # the class's arguments beside per, warmup and metric
    family = "lr_schedules"
    type: named_type(CURATED_SCHEDULES) = describe(
        "A schedule class of torch.optim.lr_scheduler or keras.optimizers.schedules, by snake_case or class name."
    )
    metric: Annotated[str, Field(pattern=IDENTIFIER_PATTERN)] | None = describe(
        "reduce_on_plateau: the reported metric it watches, in its direction (lower is better for losses and "
        "errors, higher for accuracies); default: val_loss (train_loss without validation).",
        None,
    )


# A curated schedule named as its class is (StepLR) is that section; CosineAnnealingLR is not, as its T_max is not
# cosine's t_max: named, it takes torch's own arguments.
_BY_CLASS_NAME = {"StepLR": "step", "MultiStepLR": "multistep", "ExponentialLR": "exponential"}

LRSchedule = Annotated[
    Union[
        Annotated[NoSchedule, Tag("none")],
        Annotated[StepLR, Tag("step")],
        Annotated[MultiStepLR, Tag("multistep")],
        Annotated[CosineLR, Tag("cosine")],
        Annotated[ExponentialLR, Tag("exponential")],
        Annotated[NamedSchedule, Tag("named")],
    ],
    Discriminator(tagger(CURATED_SCHEDULES)),
    BeforeValidator(spelling(_BY_CLASS_NAME)),
]
