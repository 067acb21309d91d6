"""`objective` (SPEC §12): the user's own Ray Tune function trainable, instead of model + dataset + training."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from specc.spec.base import Factory, MetricName, PositiveInt, Section, describe


class Objective(Section):
    """A Ray Tune function trainable of your project, `function(config)`, that calls `ray.tune.report(...)`."""

    function: Factory = describe(
        "'package.module:function', found from the spec's directory as custom factories are (shipped to every "
        "node); called once per trial as function(config)."
    )
    params: dict[str, Any] = describe(
        "The config the function receives; tune.space keys objective.params.<name> replace values in it.", {}
    )
    metrics: Annotated[list[MetricName], Field(min_length=1)] = describe(
        "The metric names the function reports with ray.tune.report (tune.metric, stop and checkpoint_score name "
        "one of them)."
    )
    max_steps: PositiveInt | None = describe(
        "Reports (Tune's training_iteration) after which a trial stops; null: the function decides when it ends.",
        None,
    )
