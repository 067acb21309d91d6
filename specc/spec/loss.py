"""`training.loss`: one of the five names specc documents (cross_entropy, mse, bce_with_logits, l1, huber), or
`{type: <name>, ...}`: any loss class of torch.nn or keras.losses with its keyword arguments (SPEC §13); the bare
name of such a class is the class with its defaults.

What a loss means for the task decides the targets' form and the checks that tie it to the dataset: `TASKS` says
it for every loss the loop can drive (a test keeps it whole against the catalog).
"""

from __future__ import annotations

import re
from typing import Annotated, Literal, Union

from pydantic import BeforeValidator, Discriminator, Tag, WithJsonSchema

from specc.spec.base import IDENTIFIER_PATTERN, describe
from specc.spec.named import NamedClass, named_type

Loss = Literal["cross_entropy", "mse", "bce_with_logits", "l1", "huber"]
CURATED_LOSSES = ("cross_entropy", "mse", "bce_with_logits", "l1", "huber")
REGRESSION_LOSSES = ("mse", "l1", "huber")
# A curated name under `type` on tensorflow is this Keras class (the one specc's own name compiles to).
KERAS_NAMES = {
    "cross_entropy": "sparse_categorical_crossentropy",
    "mse": "mean_squared_error",
    "bce_with_logits": "binary_crossentropy",
    "l1": "mean_absolute_error",
    "huber": "huber",
}
# What each loss the loop can drive is for, by the catalog's name: classification over class indices, binary
# (one logit per example, 0/1 float targets: as bce_with_logits), or regression.
TASKS = {
    "torch": {
        "cross_entropy_loss": "classification",
        "multi_margin_loss": "classification",
        "bce_with_logits_loss": "binary",
        "mse_loss": "regression",
        "l1_loss": "regression",
        "huber_loss": "regression",
        "smooth_l1_loss": "regression",
        "poisson_nll_loss": "regression",
    },
    "keras": {
        "sparse_categorical_crossentropy": "classification",
        "binary_crossentropy": "binary",
        "binary_focal_crossentropy": "binary",
        "hinge": "binary",  # Keras turns 0/1 targets into -1/1
        "squared_hinge": "binary",
        "huber": "regression",
        "log_cosh": "regression",
        "mean_absolute_error": "regression",
        "mean_absolute_percentage_error": "regression",
        "mean_squared_error": "regression",
        "mean_squared_logarithmic_error": "regression",
    },
}
CURATED_TASKS = {"cross_entropy": "classification", "bce_with_logits": "binary"} | dict.fromkeys(
    REGRESSION_LOSSES, "regression"
)


class NamedLoss(NamedClass):
    """A loss class of torch.nn (torch) or keras.losses (tensorflow), by snake_case name (cross_entropy, huber,
    smooth_l1, binary_focal_crossentropy) or class name (SmoothL1Loss), with its keyword arguments
    ({type: cross_entropy, label_smoothing: 0.1}); a Keras loss gets from_logits=True from the compiled code."""

    family = "losses"
    type: named_type(()) = describe("A loss class of torch.nn or keras.losses, by snake_case or class name.")


def _plain(value):
    """{type: mse} with no arguments is the name mse, as today; any other loss's bare name (smooth_l1, SmoothL1Loss)
    is that class with its defaults, {type: smooth_l1}."""
    if isinstance(value, dict) and set(value) == {"type"} and value["type"] in CURATED_LOSSES:
        return value["type"]
    if isinstance(value, str) and value not in CURATED_LOSSES and re.fullmatch(IDENTIFIER_PATTERN, value):
        return {"type": value}
    return value


def _loss_tag(value) -> str | None:
    return "str" if isinstance(value, str) else "named" if isinstance(value, dict | NamedLoss) else None


# The schema's string: one of the five names, or another loss class's bare name (which _plain reads as {type: name}).
BARE_NAME = {"anyOf": [{"enum": list(CURATED_LOSSES)}, {"type": "string", "pattern": IDENTIFIER_PATTERN}]}
LossField = Annotated[
    Union[Annotated[Loss, Tag("str"), WithJsonSchema(BARE_NAME)], Annotated[NamedLoss, Tag("named")]],
    Discriminator(
        _loss_tag,
        custom_error_type="loss",
        custom_error_message="a loss is a name (cross_entropy, mse, bce_with_logits, l1, huber, or a loss class's: "
        "smooth_l1) or a mapping {type: <loss class>, ...its arguments}",
    ),
    BeforeValidator(_plain),
]


def loss_type(loss) -> str | None:
    """The loss's name: the curated name, or a named loss's type as the spec writes it."""
    return loss.type if isinstance(loss, NamedLoss) else loss


def folded(name: str) -> str:
    """A loss's name as every spelling of it folds: SmoothL1Loss, smooth_l1_loss and smooth_l1 are smoothl1 (the
    catalog's spellings differ only in case, underscores and torch's Loss suffix; the spec stage reads no catalog)."""
    name = name.lower().replace("_", "")
    return name.removesuffix("loss") or name


FOLDED = {framework: {folded(name): task for name, task in table.items()} for framework, table in TASKS.items()}


def loss_task(framework: str | None, loss) -> str | None:
    """classification, binary or regression: what the loss is for (None: a name specc cannot place)."""
    if loss is None or isinstance(loss, str):
        return CURATED_TASKS.get(loss) if loss else None
    family = "keras" if framework == "tensorflow" else "torch"
    name = KERAS_NAMES.get(loss.type, loss.type) if family == "keras" else loss.type
    return FOLDED[family].get(folded(name))
