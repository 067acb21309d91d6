"""`training`: epochs, loss, optimizer, LR schedule, metrics, precision, seeding, checkpoint cadence."""

from __future__ import annotations

from itertools import pairwise
from typing import Annotated, Literal, Union

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    StringConstraints,
    Tag,
    WithJsonSchema,
)
from pydantic_core import PydanticCustomError

from specc.spec.base import (
    IDENTIFIER_PATTERN,
    NonNegativeFloat,
    NonNegativeInt,
    PositiveFloat,
    PositiveInt,
    Section,
    Seed,
    describe,
)

Loss = Literal["cross_entropy", "mse", "bce_with_logits", "l1", "huber"]
Metric = Literal["accuracy", "top5_accuracy", "mse", "mae"]
Momentum = Annotated[float, Field(ge=0, lt=1)]
Beta = Annotated[float, Field(ge=0, lt=1)]
Decay = Annotated[float, Field(gt=0, le=1)]

REGRESSION_LOSSES = ("mse", "l1", "huber")
# N epochs or never: one error for a wrong value (a number's range, or the word's choice), not one per member.
Cadence = Annotated[
    Union[Annotated[NonNegativeInt, Tag("int")], Annotated[Literal["never"], Tag("str")]],
    Discriminator(lambda value: "str" if isinstance(value, str) else "int"),
]


class SGD(Section):
    type: Literal["sgd"] = describe("Stochastic gradient descent (torch.optim.SGD / keras SGD).")
    lr: PositiveFloat = describe("Learning rate.", 0.01)
    momentum: Momentum = describe("Momentum factor.", 0.0)
    weight_decay: NonNegativeFloat = describe("L2 penalty.", 0.0)
    nesterov: bool = describe("Nesterov momentum (needs momentum > 0).", False)


class Adam(Section):
    type: Literal["adam"] = describe("Adam.")
    lr: PositiveFloat = describe("Learning rate.", 0.001)
    betas: list[Beta] = describe(
        "Coefficients for the running averages [beta1, beta2].", [0.9, 0.999], min_length=2, max_length=2
    )
    eps: PositiveFloat = describe("Term added to the denominator for stability.", 1e-8)
    weight_decay: NonNegativeFloat = describe("L2 penalty.", 0.0)
    amsgrad: bool = describe("Use the AMSGrad variant.", False)


class AdamW(Adam):
    type: Literal["adamw"] = describe("Adam with decoupled weight decay.")
    weight_decay: NonNegativeFloat = describe("Decoupled weight decay.", 0.01)


class RMSprop(Section):
    type: Literal["rmsprop"] = describe("RMSprop.")
    lr: PositiveFloat = describe("Learning rate.", 0.01)
    alpha: Annotated[float, Field(gt=0, lt=1)] = describe("Smoothing constant (keras: rho).", 0.99)
    eps: PositiveFloat = describe("Term added to the denominator for stability.", 1e-8)
    momentum: Momentum = describe("Momentum factor.", 0.0)
    weight_decay: NonNegativeFloat = describe("L2 penalty.", 0.0)
    centered: bool = describe("Normalise by an estimate of the gradient's variance.", False)


# The optimizers specc documents field by field; every other one of the framework is a NamedOptimizer.
CURATED_OPTIMIZERS = {"sgd": "SGD", "adam": "Adam", "adamw": "AdamW", "rmsprop": "RMSprop"}


class NamedOptimizer(Section):
    """Any other optimizer torch.optim (torch) or Keras (tensorflow) offers, by its snake_case name (adadelta,
    nadam, lion) or its class name as written (Adadelta); the other keys are its constructor's keyword arguments,
    checked against its own signature (specc's catalog: specc/catalog)."""

    model_config = ConfigDict(**{**Section.model_config, "extra": "allow"})  # past `type`: the class's arguments
    type: Annotated[
        str,
        StringConstraints(pattern=IDENTIFIER_PATTERN),
        WithJsonSchema({"type": "string", "pattern": IDENTIFIER_PATTERN, "not": {"enum": list(CURATED_OPTIMIZERS)}}),
    ] = describe("An optimizer class of torch.optim or keras.optimizers, by snake_case or class name.")


_BY_CLASS_NAME = {class_name: name for name, class_name in CURATED_OPTIMIZERS.items()}


def _optimizer_tag(value) -> str | None:
    if not isinstance(value, dict | BaseModel):
        return None  # not a mapping: pydantic says so, at the optimizer
    kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    return kind if isinstance(kind, str) and kind in CURATED_OPTIMIZERS else "named"


def _curated_spelling(value):
    """A curated optimizer named as its class is (Adam, SGD): the curated section, as its snake_case name."""
    if isinstance(value, dict) and isinstance(value.get("type"), str) and value["type"] in _BY_CLASS_NAME:
        return {**value, "type": _BY_CLASS_NAME[value["type"]]}
    return value


Optimizer = Annotated[
    Union[
        Annotated[SGD, Tag("sgd")],
        Annotated[Adam, Tag("adam")],
        Annotated[AdamW, Tag("adamw")],
        Annotated[RMSprop, Tag("rmsprop")],
        Annotated[NamedOptimizer, Tag("named")],
    ],
    Discriminator(_optimizer_tag),
    BeforeValidator(_curated_spelling),
]


class NoSchedule(Section):
    type: Literal["none"] = describe("A constant learning rate.")


class StepLR(Section):
    type: Literal["step"] = describe("Multiply the LR by gamma every step_size epochs.")
    step_size: PositiveInt = describe("Epochs between decays.")
    gamma: Decay = describe("Multiplicative factor of each decay.", 0.1)


def _increasing(milestones: list[int]) -> list[int]:
    if any(b <= a for a, b in pairwise(milestones)):
        raise PydanticCustomError("not_increasing", "milestones must be strictly increasing")
    return milestones


class MultiStepLR(Section):
    type: Literal["multistep"] = describe("Multiply the LR by gamma at each milestone epoch.")
    milestones: Annotated[list[PositiveInt], AfterValidator(_increasing)] = describe(
        "Epochs at which the LR decays, increasing.", min_length=1
    )
    gamma: Decay = describe("Multiplicative factor of each decay.", 0.1)


class CosineLR(Section):
    type: Literal["cosine"] = describe("Cosine annealing from the initial LR to eta_min.")
    t_max: PositiveInt | None = describe("Epochs of one half cosine; default: training.epochs.", None)
    eta_min: NonNegativeFloat = describe("Final learning rate.", 0.0)


class ExponentialLR(Section):
    type: Literal["exponential"] = describe("Multiply the LR by gamma every epoch.")
    gamma: Decay = describe("Multiplicative factor per epoch.", 0.95)


LRSchedule = Annotated[Union[NoSchedule, StepLR, MultiStepLR, CosineLR, ExponentialLR], Field(discriminator="type")]


class Training(Section):
    """How each trial trains. One report per epoch: `epoch`, `train_loss`, `val_loss` and `val_<metric>`
    (and `train_<metric>` with train_metrics), and `num_parameters`: the model's trainable parameters."""

    epochs: PositiveInt = describe("Epochs to train; one report per epoch (Tune's training_iteration).", 10)
    loss: Loss | None = describe(
        "cross_entropy | mse | bce_with_logits | l1 | huber; default: cross_entropy for classification, "
        "mse for regression.",
        None,
    )
    optimizer: Optimizer = describe("The optimizer, by type.", Adam.model_construct(type="adam"))
    lr_schedule: LRSchedule = describe(
        "How the learning rate changes per epoch.", NoSchedule.model_construct(type="none")
    )
    metrics: list[Metric] | None = describe(
        "Validation metrics reported each epoch as val_<name>; default: [accuracy] for classification, "
        "[mse] for regression.",
        None,
    )
    grad_clip_norm: PositiveFloat | None = describe("Clip the gradients' global norm to this value.", None)
    mixed_precision: bool = describe("Automatic mixed precision on GPU (a no-op on CPU).", False)
    seed: Seed = describe("Seed for weights and batch order; each worker adds its rank.", 0)
    checkpoint_every: Cadence = describe(
        "Write a checkpoint every N epochs and after the last; 0 = only at the end; never = no checkpoints "
        "(no pbt/pb2, run.max_failures or --resume).",
        1,
    )
    steps_per_epoch: PositiveInt | None = describe(
        "At most this many training batches per worker in an epoch (Keras' steps_per_epoch; each epoch a new "
        "pass); null = a full pass. With tensorflow on several workers, a multiple of num_workers.",
        None,
    )
    validation_steps: PositiveInt | None = describe(
        "At most this many validation batches per worker in an epoch; null = a full pass.", None
    )
    train_metrics: bool = describe(
        "Also report each metrics entry computed on the epoch's training batches as train_<name> "
        "(e.g. train_accuracy).",
        False,
    )
