"""`objective` (SPEC §12, §13): the user's own Ray Tune trainable, instead of model + dataset + training: a function
(`function`) or a `ray.tune.Trainable` class (`trainable`)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from specc.spec.base import Factory, MetricName, NonNegativeInt, PositiveInt, Section, describe


class Objective(Section):
    """Your own Ray Tune trainable: a function `function(config)` that calls `ray.tune.report(...)`, or a
    `ray.tune.Trainable` class (`setup`, `step`, `save_checkpoint`, `load_checkpoint`)."""

    function: Factory | None = describe(
        "'package.module:function', found from the spec's directory as custom factories are (shipped to every "
        "node); called once per trial as function(config). Exactly one of function and trainable.",
        None,
    )
    trainable: Factory | None = describe(
        "'package.module:Class', a ray.tune.Trainable subclass of your project, instead of function: Tune builds it "
        "with the trial's config (setup), calls step() for each report, and save_checkpoint/load_checkpoint for "
        "checkpoints (checkpoint_every, pbt/pb2, retries, --resume).",
        None,
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
    checkpoint_every: NonNegativeInt | None = describe(
        "With trainable: save a checkpoint every N steps (Tune's CheckpointConfig checkpoint_frequency); 0 or null: "
        "only at the end and when a scheduler asks (pbt/pb2).",
        None,
    )
    checkpoint_at_end: bool | None = describe(
        "With trainable: save a checkpoint after a trial's last step (Tune's CheckpointConfig checkpoint_at_end); "
        "null: Ray's default for a class, true.",
        None,
    )

    @property
    def reference(self) -> str:
        """The trainable's 'module:name', function or class (validation sees that exactly one is given)."""
        return self.function or self.trainable or ""

    @property
    def key(self) -> str:
        """Which key names it: function or trainable."""
        return "trainable" if self.trainable and not self.function else "function"
