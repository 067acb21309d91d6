"""`stop`: when a trial, or the whole experiment, ends early. Any condition met stops the trial."""

from __future__ import annotations

import math
import re
from typing import Annotated

from pydantic import AfterValidator, BeforeValidator, Field
from pydantic_core import PydanticCustomError

from specc.spec.base import MetricName, NonNegativeFloat, PositiveFloat, PositiveInt, Section, describe

CONDITION = re.compile(
    r"^\s*(?P<metric>[A-Za-z_][A-Za-z0-9_]*)\s*(?P<op>>=|<=|>|<)\s*"
    r"(?P<value>[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)\s*$"
)


def parse_condition(text: str) -> tuple[str, str, float]:
    """ "val_accuracy >= 0.99" -> ("val_accuracy", ">=", 0.99); raises a located problem when malformed."""
    match = CONDITION.match(text)
    if not match:
        raise PydanticCustomError(
            "stop_condition",
            "{text} is not a condition of the form '<metric> <op> <number>' with op one of >= > <= <",
            {"text": repr(text)},
        )
    value = float(match["value"])
    if not math.isfinite(value):  # 1e999: a threshold no metric can cross, or always crosses
        raise PydanticCustomError("stop_condition", "{text}: the number must be finite", {"text": repr(text)})
    return match["metric"], match["op"], value


def _check_condition(text: str) -> str:
    parse_condition(text)
    return text


def _one_or_many(value):
    return [value] if isinstance(value, str) else value


Condition = Annotated[str, AfterValidator(_check_condition)]
Conditions = Annotated[list[Condition], BeforeValidator(_one_or_many)]
# Keys Ray Tune adds to every result, which `when` and `all_when` may name beside the spec's own metrics.
RAY_RESULT_KEYS = ("training_iteration", "time_total_s")


class Plateau(Section):
    """Stop a trial whose metric has flattened out (Ray's TrialPlateauStopper)."""

    metric: MetricName = describe("Metric to watch; must be one the spec reports.")
    std: NonNegativeFloat = describe("Stop when the standard deviation of the last results falls below this.", 0.01)
    num_results: Annotated[int, Field(ge=2)] = describe(
        "How many recent results the standard deviation is taken over.", 4
    )
    grace_period: PositiveInt = describe("Results to wait before the rule may stop a trial.", 4)
    metric_threshold: float | None = describe(
        "Only stop once the metric is better than this (in tune.mode's direction).", None
    )


class Stop(Section):
    """Early-stopping rules. Needs a `tune` section: they act on Tune trials."""

    when: Conditions = describe(
        'Conditions "<metric> <op> <number>" (op: >= > <= <); any one met stops the trial. Besides the reported '
        "metrics, Ray's own training_iteration (reports so far) and time_total_s (seconds) may be named.",
        [],
    )
    all_when: Conditions = describe(
        'Conditions "<metric> <op> <number>" like `when`; any one met by any trial ends the whole search.', []
    )
    max_trial_time_s: PositiveFloat | None = describe("Stop a trial after this many seconds.", None)
    time_budget_s: PositiveFloat | None = describe("Stop the whole experiment after this many seconds.", None)
    plateau: Plateau | None = describe("Stop a trial whose metric has stopped changing.", None)
