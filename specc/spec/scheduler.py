"""`scheduler`: Ray Tune trial schedulers. Budgets are in epochs (Tune's training_iteration)."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import AfterValidator, Discriminator, Field, Tag
from pydantic_core import PydanticCustomError

from specc.spec.base import PositiveInt, Probability, Section, SpacePath, describe
from specc.spec.space import AnyDistribution

Factor = Annotated[float, Field(gt=1)]


def _ordered(pair: list[float]) -> list[float]:
    if not pair[0] < pair[1]:
        raise PydanticCustomError(
            "bad_distribution", "lower bound {lo} must be below upper bound {hi}", {"lo": pair[0], "hi": pair[1]}
        )
    return pair


Bounds = Annotated[list[float], Field(min_length=2, max_length=2), AfterValidator(_ordered)]

MUTATION_TAGS = ("distribution", "values")
# A pbt mutation: a distribution in tune.space's syntax, or a plain list of values (categorical, as Ray's PBT
# treats lists: a perturbation moves to a neighbouring value or resamples one).
Mutation = Annotated[
    Union[
        Annotated[AnyDistribution, Tag("distribution")],
        Annotated[list[Any], Field(min_length=1), Tag("values")],
    ],
    Discriminator(lambda value: "values" if isinstance(value, list) else "distribution"),
]


class Fifo(Section):
    type: Literal["fifo"] = describe("Run every trial to the end (FIFOScheduler).")


class Asha(Section):
    type: Literal["asha"] = describe("Asynchronous successive halving (ASHAScheduler).")
    max_t: PositiveInt | None = describe("Epochs a trial may run at most; default: training.epochs.", None)
    grace_period: PositiveInt = describe("Epochs every trial runs before it may be stopped.", 1)
    reduction_factor: Factor = describe("Keep 1/reduction_factor of the trials at each rung.", 4)
    brackets: PositiveInt = describe("Number of brackets.", 1)


class HyperBand(Section):
    type: Literal["hyperband"] = describe("Synchronous HyperBand (HyperBandScheduler).")
    max_t: PositiveInt | None = describe("Epochs a trial may run at most; default: training.epochs.", None)
    reduction_factor: Factor = describe("Keep 1/reduction_factor of the trials at each rung.", 3)
    stop_last_trials: bool = describe("Stop the trials that reach max_t in the last rung.", True)


class MedianStopping(Section):
    type: Literal["median_stopping"] = describe("Stop trials below the median of the others (MedianStoppingRule).")
    grace_period: PositiveInt = describe("Epochs before a trial may be stopped.", 1)
    min_samples_required: PositiveInt = describe("Trials that must have reported before any is stopped.", 3)
    hard_stop: bool = describe("Stop (true) or only pause (false) a trial below the median.", True)


class PopulationBased(Section):
    """What PBT and PB2 share: every perturbation_interval epochs the bottom trials copy a top one."""

    perturbation_interval: PositiveInt = describe("Epochs between exploit/explore steps.", 2)
    quantile_fraction: Annotated[float, Field(gt=0, le=0.5)] = describe(
        "Bottom share of trials that copy a top trial.", 0.25
    )
    synch: bool = describe("Perturb all trials at once (synchronous).", False)


class Pbt(PopulationBased):
    type: Literal["pbt"] = describe("Population based training (PopulationBasedTraining).")
    mutations: dict[SpacePath, Mutation] = describe(
        "Path -> a distribution in tune.space's syntax (perturbed: multiplied by a perturbation factor, or "
        "resampled), or a plain list of values (categorical: a neighbouring value, or one resampled from the list; "
        "a choice is treated as this list).",
        min_length=1,
    )
    resample_probability: Probability = describe("Chance to resample a value instead of perturbing it.", 0.25)
    perturbation_factors: Annotated[list[float], Field(min_length=2, max_length=2)] = describe(
        "Factors a continuous value is multiplied by when perturbed.", [1.2, 0.8]
    )
    burn_in_period: Annotated[int, Field(ge=0)] = describe("Epochs before the first perturbation.", 0)


class Pb2(PopulationBased):
    type: Literal["pb2"] = describe("Population based bandits (PB2): PBT with a GP-guided explore step.")
    bounds: dict[SpacePath, Bounds] = describe(
        "Path -> [lo, hi]: the continuous range each hyperparameter is explored in.", min_length=1
    )


Scheduler = Annotated[Union[Fifo, Asha, HyperBand, MedianStopping, Pbt, Pb2], Field(discriminator="type")]
