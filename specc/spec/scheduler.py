"""`scheduler`: Ray Tune trial schedulers. Budgets are in epochs (Tune's training_iteration)."""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal, Union

from pydantic import AfterValidator, BeforeValidator, ConfigDict, Discriminator, Field, Tag
from pydantic_core import PydanticCustomError

from specc.spec.base import PositiveInt, Probability, Section, SpacePath, describe
from specc.spec.named import class_spelling, types_of
from specc.spec.scalars import finite
from specc.spec.space import AnyDistribution

Factor = Annotated[float, Field(gt=1)]
# The most rungs a scheduler may keep: over all of ASHA's brackets, over the brackets of a HyperBand band (bracket s
# has s + 1); and the most brackets ASHA may have. Ray builds ASHA's rungs up front and walks them on every result:
# a reduction_factor of 1.0000001 over 100 epochs is 46 million rungs, 15.8 GB before a trial starts. Past this
# bound the factor is refused (E241), with the least factor that stays within it.
RUNGS_AT_MOST = 1_000


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


class RaySchedulerSection(Section):
    """A scheduler: past its fields, its keys are its Ray class's keyword arguments (stop_last_trials, time_attr,
    log_config, ...), checked against the class's own signature (specc's catalog, family `schedulers`)."""

    model_config = ConfigDict(**{**Section.model_config, "extra": "allow"})

    @property
    def time_attr(self) -> str:
        """What the scheduler's budgets count: Ray's training_iteration (one per epoch or report) unless the spec
        names another result key."""
        return (self.model_extra or {}).get("time_attr", "training_iteration")


class Fifo(RaySchedulerSection):
    type: Literal["fifo"] = describe("Run every trial to the end (FIFOScheduler).")


class Asha(RaySchedulerSection):
    type: Literal["asha"] = describe("Asynchronous successive halving (ASHAScheduler).")
    max_t: PositiveInt | None = describe("Epochs a trial may run at most; default: training.epochs.", None)
    grace_period: PositiveInt = describe("Epochs every trial runs before it may be stopped.", 1)
    reduction_factor: Factor = describe("Keep 1/reduction_factor of the trials at each rung.", 4)
    brackets: PositiveInt = describe("Number of brackets.", 1)

    def rung_count(self) -> int:
        """Rungs in all brackets, in closed form: ASHAScheduler's bracket s keeps int(log(max_t / grace_period) /
        log(reduction_factor) - s + 1) of them (none when that is not positive). 0 without a max_t."""
        if self.max_t is None or self.max_t < self.grace_period:
            return 0
        most = math.floor(_log_ratio(self.max_t, self.reduction_factor, self.grace_period)) + 1  # bracket 0's
        filled = min(self.brackets, most)  # the brackets that hold a rung: bracket s holds most - s
        return filled * most - filled * (filled - 1) // 2

    def too_fine(self) -> tuple[str, str, str] | None:
        """(field, what, what to write) when the scheduler has more brackets or rungs than RUNGS_AT_MOST."""
        if self.brackets > RUNGS_AT_MOST:
            return "brackets", f"{self.brackets} brackets: Ray builds every one up front", f"at most {RUNGS_AT_MOST}"
        rungs = self.rung_count()
        if rungs <= RUNGS_AT_MOST:
            return None
        per_bracket = max(RUNGS_AT_MOST // self.brackets, 2)
        least = _least_factor(self.max_t / self.grace_period, per_bracket - 1)  # both int64 (checked first)
        what = f"reduction_factor {self.reduction_factor} makes {rungs} rungs from grace_period {self.grace_period}"
        return (
            "reduction_factor",
            f"{what} to max_t {self.max_t}: {_RUNGS_WHY}",
            f"a reduction_factor of {least} or more",
        )


class HyperBand(RaySchedulerSection):
    type: Literal["hyperband"] = describe("Synchronous HyperBand (HyperBandScheduler).")
    max_t: PositiveInt | None = describe("Epochs a trial may run at most; default: training.epochs.", None)
    reduction_factor: Factor = describe("Keep 1/reduction_factor of the trials at each rung.", 3)
    stop_last_trials: bool = describe("Stop the trials that reach max_t in the last rung.", True)

    def brackets_per_band(self) -> int:
        """HyperBandScheduler's s_max_1: round(log(max_t) / log(reduction_factor)) + 1; 0 without a max_t."""
        if self.max_t is None:
            return 0
        return round(_log_ratio(self.max_t, self.reduction_factor)) + 1

    def rung_count(self) -> int:
        """Rungs in a band: bracket s halves its trials s times (s + 1 rungs), and Ray skips a bracket whose first
        rung, int(max_t * reduction_factor ** -s), would be epoch 0. Counted up to RUNGS_AT_MOST brackets."""
        shown = range(min(self.brackets_per_band(), RUNGS_AT_MOST + 1))
        return sum(s + 1 for s in shown if self.max_t * self.reduction_factor ** (-s) >= 1)

    def too_fine(self) -> tuple[str, str, str] | None:
        """(field, what, what to write) when a band holds more than RUNGS_AT_MOST rungs."""
        brackets = self.brackets_per_band()
        if brackets <= RUNGS_AT_MOST and self.rung_count() <= RUNGS_AT_MOST:
            return None
        rungs = self.rung_count() if brackets <= RUNGS_AT_MOST else brackets * (brackets + 1) // 2
        what = f"reduction_factor {self.reduction_factor} makes {brackets} brackets a band to max_t {self.max_t}"
        why = f"{rungs} rungs in all (bracket s halves its trials s times); specc plans at most {RUNGS_AT_MOST}"
        most = math.floor((math.sqrt(8 * RUNGS_AT_MOST + 1) - 1) / 2)  # brackets whose 1 + 2 + ... rungs fit
        return (
            "reduction_factor",
            f"{what}, {why}",
            f"a reduction_factor of {_least_factor(self.max_t, most - 1.5)} or more",
        )


_RUNGS_WHY = f"Ray builds each up front and walks them on every result; specc takes at most {RUNGS_AT_MOST}"


def _log_ratio(top: int, factor: float, bottom: int = 1) -> float:
    """log(top / bottom) / log(factor), as Ray's schedulers compute it (numpy's log, here math's: equal but for the
    last bit, which moves a count by at most one); math.log takes an int of any size."""
    return (math.log(top) - math.log(bottom)) / math.log(factor)


def _least_factor(ratio: float, steps: float) -> str:
    """The smallest reduction_factor (4 significant digits, rounded up) with log(ratio) / log(factor) <= steps."""
    exact = ratio ** (1 / steps)
    digits = 3 - math.floor(math.log10(exact))
    return f"{math.ceil(exact * 10**digits) / 10**digits:g}"


class HyperBandForBOHB(HyperBand):
    type: Literal["hyperband_for_bohb"] = describe(
        "HyperBand for BOHB (HyperBandForBOHB): HyperBand's brackets, filled by the bohb searcher's configs. Needs "
        "tune.search.type bohb, as in Ray."
    )


class MedianStopping(RaySchedulerSection):
    type: Literal["median_stopping"] = describe("Stop trials below the median of the others (MedianStoppingRule).")
    grace_period: PositiveInt = describe("Epochs before a trial may be stopped.", 1)
    min_samples_required: PositiveInt = describe("Trials that must have reported before any is stopped.", 3)
    hard_stop: bool = describe("Stop (true) or only pause (false) a trial below the median.", True)


class PopulationBased(RaySchedulerSection):
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

    def past_ray(self) -> tuple[str, str, str] | None:
        """(field, what, what to write) when a mutation's value times a perturbation factor is past a float: PBT's
        explore step would make it inf."""
        factor = max(abs(f) for f in self.perturbation_factors)
        for key, entry in self.mutations.items():
            numeric = not isinstance(entry, list) and entry.kind not in ("choice", "grid")
            for value in entry.probes() if numeric else ():
                if not finite(value * factor):
                    what = f"pbt multiplies {key} ({value}) by {factor}, past what a float holds"
                    return "perturbation_factors", what, "smaller perturbation factors, or a narrower mutation"
        return None


class Pb2(PopulationBased):
    type: Literal["pb2"] = describe("Population based bandits (PB2): PBT with a GP-guided explore step.")
    bounds: dict[SpacePath, Bounds] = describe(
        "Path -> [lo, hi]: the continuous range each hyperparameter is explored in.", min_length=1
    )


SCHEDULERS = (Fifo, Asha, HyperBand, HyperBandForBOHB, MedianStopping, Pbt, Pb2)
Scheduler = Annotated[
    Union[SCHEDULERS],
    Field(discriminator="type"),
    # a scheduler also by Ray's class name (ASHAScheduler, PopulationBasedTraining), which the catalog holds
    BeforeValidator(class_spelling("schedulers", types_of(SCHEDULERS))),
]
