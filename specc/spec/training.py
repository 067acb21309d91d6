"""`training`: epochs, loss, optimizer, LR schedule, metrics, precision, seeding, checkpoint cadence."""

from __future__ import annotations

from typing import Annotated, Literal, Union

from pydantic import (
    BeforeValidator,
    Discriminator,
    Field,
    Tag,
)

from specc.spec.base import (
    NonNegativeFloat,
    NonNegativeInt,
    PositiveFloat,
    PositiveInt,
    Section,
    Seed,
    describe,
)
from specc.spec.loss import REGRESSION_LOSSES, Loss, LossField  # noqa: F401 (REGRESSION_LOSSES, Loss: re-exported)
from specc.spec.named import NamedClass, named_type, spelling, tagger
from specc.spec.schedule import LRSchedule, NoSchedule

Metric = Literal["accuracy", "top5_accuracy", "mse", "mae"]
Momentum = Annotated[float, Field(ge=0, lt=1)]
Beta = Annotated[float, Field(ge=0, lt=1)]
Decay = Annotated[float, Field(gt=0, le=1)]

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


class NamedOptimizer(NamedClass):
    """Any other optimizer torch.optim (torch) or Keras (tensorflow) offers, by its snake_case name (adadelta,
    nadam, lion) or its class name as written (Adadelta); the other keys are its constructor's keyword arguments,
    checked against its own signature (specc's catalog: specc/catalog)."""

    family = "optimizers"
    type: named_type(CURATED_OPTIMIZERS) = describe(
        "An optimizer class of torch.optim or keras.optimizers, by snake_case or class name."
    )


_optimizer_tag = tagger(CURATED_OPTIMIZERS)


Optimizer = Annotated[
    Union[
        Annotated[SGD, Tag("sgd")],
        Annotated[Adam, Tag("adam")],
        Annotated[AdamW, Tag("adamw")],
        Annotated[RMSprop, Tag("rmsprop")],
        Annotated[NamedOptimizer, Tag("named")],
    ],
    Discriminator(_optimizer_tag),
    BeforeValidator(spelling({class_name: name for name, class_name in CURATED_OPTIMIZERS.items()})),
]


class Training(Section):
    """How each trial trains. One report per epoch: `epoch`, `train_loss`, `val_loss` and `val_<metric>`
    (and `train_<metric>` with train_metrics), and `num_parameters`: the model's trainable parameters."""

    epochs: PositiveInt = describe("Epochs to train; one report per epoch (Tune's training_iteration).", 10)
    loss: LossField | None = describe(
        "cross_entropy | mse | bce_with_logits | l1 | huber, or {type: <a loss class of torch.nn or keras.losses>, "
        "...its arguments}; default: cross_entropy for classification, mse for regression.",
        None,
    )
    optimizer: Optimizer = describe("The optimizer, by type.", Adam.model_construct(type="adam"))
    lr_schedule: LRSchedule = describe(
        "How the learning rate changes, per epoch or per step.", NoSchedule.model_construct(type="none")
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
