"""The root of a spec: `Experiment`. Format version 1 (SPEC.md)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, PrivateAttr, field_serializer, model_validator
from pydantic_core import PydanticCustomError

from specc.spec.base import Name, Section, describe
from specc.spec.cluster import Cluster
from specc.spec.dataset import Dataset
from specc.spec.loss import loss_task
from specc.spec.model import Model
from specc.spec.objective import Objective
from specc.spec.run import Run
from specc.spec.scaling import Scaling
from specc.spec.scheduler import Scheduler
from specc.spec.search import Tune
from specc.spec.stop import Stop
from specc.spec.training import Training

SUPPORTED_VERSIONS = (1,)


def _supported(version: int) -> int:
    if version not in SUPPORTED_VERSIONS:
        supported = ", ".join(str(v) for v in SUPPORTED_VERSIONS)
        raise PydanticCustomError(
            "unsupported_version",
            "format version {version} is not supported; this specc reads version {supported}",
            {"version": version, "supported": supported},
        )
    return version


class Experiment(Section):
    """One experiment: a model trained on a dataset, optionally searched over with Ray Tune."""

    specc: Annotated[int, AfterValidator(_supported)] = describe("Spec format version: 1.")
    name: Name = describe("Names the run directory and the compiled script: [a-z0-9][a-z0-9_-]{0,63}.")
    description: str | None = describe("What the experiment is for.", None)
    extends: str | list[str] | None = describe(
        "Spec file(s) this one builds on, relative to this file: maps merge key by key, the rest is replaced.",
        None,
    )
    framework: Literal["torch", "tensorflow"] = describe(
        "torch (Ray TorchTrainer) or tensorflow (TensorflowTrainer); required with model, optional with objective.",
        None,
    )
    objective: Objective = describe(
        "Your own Ray Tune function trainable, instead of model + dataset + training (give one or the other).", None
    )
    model: Model = describe("The network, by type (required unless the spec has an objective).", None)
    dataset: Dataset = describe("The data, by type (required unless the spec has an objective).", None)
    training: Training = describe(
        "Epochs, loss, optimizer, schedule, metrics (required unless the spec has an objective).", None
    )
    scaling: Scaling = describe("Ray Train workers per trial.", Scaling.model_construct())
    tune: Tune | None = describe("Hyperparameter search; absent: a single training run.", None)
    scheduler: Scheduler | None = describe("Trial scheduler (needs tune); default fifo.", None)
    stop: Stop | None = describe("Early-stopping rules (needs tune).", None)
    run: Run = describe("Storage, checkpoints, retries, callbacks.", Run.model_construct())
    cluster: Cluster = describe("Ray address and runtime environment.", Cluster.model_construct())
    _raw: Any = PrivateAttr(None)  # the RawSpec it was read from (file, source map), when loaded from a file

    @field_serializer("framework", "objective", "model", "dataset", "training", mode="wrap")
    def _absent_stays_none(self, value, handler):
        """These may be left out (an objective spec has no model; a model spec no objective), never written as null:
        their types have no null (`model: null` is E103, not a spec that validates and then has nothing to compile),
        and a section left out is dumped as None."""
        return None if value is None else handler(value)

    @model_validator(mode="after")
    def _derived_defaults(self):
        """Fill the defaults that depend on other fields, so that `specc show` prints every value that applies."""
        _fill(self, "run", name=self.name)
        population = self.scheduler is not None and self.scheduler.type in ("pbt", "pb2")
        if population and "checkpoints_to_keep" not in self.run.model_fields_set:
            # PBT/PB2 restore trials from other trials' checkpoints: keep enough that none is gone when read.
            object.__setattr__(self, "run", self.run.model_copy(update={"checkpoints_to_keep": 4}))
        if not self.trains_model():
            if self.objective is not None and self._counts_steps():
                _fill(self, "scheduler", max_t=self.objective.max_steps)
            return self  # an objective spec (or an incomplete one: the checks say what is missing)
        regression = self.task() == "regression"
        epochs = self.training.epochs
        _fill(
            self,
            "training",
            loss="mse" if regression else "cross_entropy",
            metrics=["mse"] if regression else ["accuracy"],
        )
        _fill(self.training, "lr_schedule", t_max=epochs)
        if self._counts_steps():  # budgets in epochs; another time_attr's max_t is the spec's (E102)
            _fill(self, "scheduler", max_t=self.longest_epochs())
        if self.framework == "torch":
            _fill(self, "scaling", backend="nccl" if self.scaling.use_gpu else "gloo")
        return self

    def _counts_steps(self) -> bool:
        """Whether the scheduler's budgets count Tune's training_iteration (epochs, or an objective's reports)."""
        return (
            self.scheduler is None or getattr(self.scheduler, "time_attr", "training_iteration") == "training_iteration"
        )

    def longest_epochs(self) -> int:
        """The most epochs a trial can train: training.epochs, or the most a search over it can draw."""
        searched = self.tune.space.get("training.epochs") if self.tune is not None else None
        drawn = searched.probes() if searched is not None else []
        whole = [value for value in drawn if isinstance(value, int) and not isinstance(value, bool)]
        return max([self.training.epochs, *whole]) if len(whole) == len(drawn) else self.training.epochs

    def trains_model(self) -> bool:
        """Whether the spec trains a model (model + dataset + training), rather than running an objective."""
        return self.objective is None and None not in (self.framework, self.model, self.dataset, self.training)

    def task(self) -> str:
        """classification or regression: from the dataset where it says, else from the loss."""
        known = self.dataset.known_task()
        if known:
            return known
        return "regression" if loss_task(self.framework, self.training.loss) == "regression" else "classification"

    def binary_targets(self) -> bool:
        """Whether the loss takes one logit per example and 0/1 float targets (bce_with_logits and its kind)."""
        return self.training is not None and loss_task(self.framework, self.training.loss) == "binary"

    def reported_metrics(self) -> list[str]:
        """Every metric name a trial reports each epoch (SPEC §5), and num_parameters (SPEC §12): the model's trainable
        parameters, the same at every epoch, reported with each so that Tune's last result always holds it."""
        if self.objective is not None:
            return list(self.objective.metrics)
        metrics = self.training.metrics or ()
        train = [f"train_{name}" for name in metrics] if self.training.train_metrics else []
        schedule = self.training.lr_schedule
        if schedule.type != "none" or schedule.warmup is not None:
            train.append("lr")  # the epoch's learning rate, which the schedule sets
        if not self.validates():
            return ["epoch", "train_loss", *train, "num_parameters"]
        return ["epoch", "train_loss", *train, "val_loss", *(f"val_{name}" for name in metrics), "num_parameters"]

    def validates(self) -> bool:
        """Whether each epoch ends with validation (dataset.validation_from: none switches it off)."""
        return self.dataset is not None and getattr(self.dataset, "validation_from", "test") != "none"


def _fill(owner, section: str, **defaults) -> None:
    """Set the fields of `owner.<section>` that are None (and exist on its type) to the given defaults."""
    model = getattr(owner, section)
    if model is None:
        return
    updates = {k: v for k, v in defaults.items() if k in type(model).model_fields and getattr(model, k) is None}
    if updates:
        object.__setattr__(owner, section, model.model_copy(update=updates))
