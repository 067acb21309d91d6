"""`run`: where results go, how checkpoints are kept, failure retries, tracking callbacks, resume policy."""

from __future__ import annotations

from typing import Annotated, Literal, Union

from pydantic import Discriminator, Field, Tag

from specc.spec.base import MetricName, Name, PathStr, PositiveInt, Section, describe

# Ray's tune.FailureConfig.fail_fast: a bool, or the word raise; one error for a wrong value, not one per member.
FailFast = Annotated[
    Union[Annotated[bool, Tag("bool")], Annotated[Literal["raise"], Tag("str")]],
    Discriminator(lambda value: "str" if isinstance(value, str) else "bool"),
]
Callback = Literal["csv", "json", "tensorboard", "mlflow", "wandb"]


class CheckpointScore(Section):
    """Which checkpoints to keep when only some are kept."""

    metric: MetricName = describe("Metric that ranks checkpoints; must be one the spec reports.")
    mode: Literal["min", "max"] = describe("Whether lower (min) or higher (max) is better.")


class Run(Section):
    """Run directory, checkpoints, retries and callbacks (ray.train/ray.tune RunConfig)."""

    storage_path: PathStr = describe(
        "Local directory or a URI Ray's storage understands (s3://, gs://, ...); relative to the working directory.",
        "./runs",
    )
    name: Name | None = describe("Run directory name under storage_path; default: the spec's name.", None)
    checkpoints_to_keep: PositiveInt | None = describe(
        "Checkpoints kept per trial; null keeps all. Default 2, or 4 with a pbt/pb2 scheduler.", 2
    )
    checkpoint_score: CheckpointScore | None = describe(
        "Rank checkpoints by a metric; default: tune.metric/tune.mode when tuning one metric, else the most recent.",
        None,
    )
    max_failures: Annotated[int, Field(ge=-1)] = describe(
        "Retries of a failed trial or worker group, each from its last checkpoint; -1 retries forever.", 0
    )
    fail_fast: FailFast = describe(
        "A search: true ends the whole run at the first trial that fails; raise also raises its error in the driver "
        "(Ray's tune.FailureConfig.fail_fast); false lets the other trials go on. Needs max_failures 0.",
        False,
    )
    callbacks: list[Callback] = describe("Result loggers: csv, json, tensorboard, mlflow, wandb.", [])
    resume: Literal["auto", "never", "errored_only"] = describe(
        "On --resume: auto continues unfinished trials and retries errored ones; errored_only retries only "
        "errored trials; never refuses to resume.",
        "auto",
    )
