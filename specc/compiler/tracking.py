"""run.callbacks (SPEC §8): the trackers a run logs each epoch to, and what the compiled script imports for them
(the packages each needs, and the problem when one is missing: extras.py).

With `tune`, the script hands Ray Tune its own logger callbacks (CSVLoggerCallback, JsonLoggerCallback,
TBXLoggerCallback, MLflowLoggerCallback, WandbLoggerCallback); csv and json are written for every trial in any
case, being Ray's record of it, by subclasses that keep a retried trial's reports (KeptRecord). A single Ray Train
run gets a `ray.train.UserCallback` that writes the same files and runs (Tune's loggers work on Tune trials only).
"""

from __future__ import annotations

WHERE = {
    "csv": "progress.csv",
    "json": "result.json",
    "tensorboard": "TensorBoard event files",
    "mlflow": "an MLflow run",
    "wandb": "a W&B run",
}
TUNE_LOGGERS = {"tensorboard": "TBXLoggerCallback"}
TUNE_INTEGRATIONS = {
    "mlflow": "from ray.air.integrations.mlflow import MLflowLoggerCallback",
    "wandb": "from ray.air.integrations.wandb import WandbLoggerCallback, _WandbLoggingActor",
}


def tracking_context(plan) -> dict:
    e = plan.experiment
    callbacks = e.run.callbacks
    named = [WHERE[callback] for callback in callbacks]
    files = [callback for callback in callbacks if callback in ("csv", "json", "tensorboard")]
    return {
        "file_trackers": bool(files),
        "tracked_to": ", ".join(named[:-1]) + (" and " if len(named) > 1 else "") + (named[-1] if named else ""),
    }


def tracking_imports(plan) -> tuple[set[str], set[str]]:
    """(modules, from-imports) for run.callbacks."""
    e = plan.experiment
    callbacks = e.run.callbacks
    if e.tune is not None:
        loggers = ["CSVLoggerCallback", "JsonLoggerCallback"] + [
            TUNE_LOGGERS[c] for c in callbacks if c in TUNE_LOGGERS
        ]
        froms = {f"from ray.tune.logger import {', '.join(sorted(loggers))}"}
        return set(), froms | {TUNE_INTEGRATIONS[c] for c in callbacks if c in TUNE_INTEGRATIONS}
    modules = {"csv"} if "csv" in callbacks else set()
    froms = set()
    if "tensorboard" in callbacks:
        modules.add("tensorboardX")
    if "mlflow" in callbacks:
        modules |= {"mlflow", "time"}
        froms.add("from mlflow.entities import Metric, Param")
    if "wandb" in callbacks:
        modules.add("wandb")
    return modules, froms
