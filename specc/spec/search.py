"""`tune`: the metric to optimise, how many trials, the search algorithm and the search space."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import Discriminator, Field, Tag

from specc.spec.base import MetricName, PositiveFloat, PositiveInt, Section, Seed, SpacePath, describe
from specc.spec.space import AnyDistribution


class SearchBase(Section):
    seed: Seed | None = describe("Seed of the search: the same seed samples the same configs.", None)
    points_to_evaluate: list[dict[SpacePath, Any]] = describe(
        "Configs to try first, keyed by search-space path; paths left out are sampled.", []
    )


class RandomSearch(SearchBase):
    type: Literal["random"] = describe("Random sampling, every grid combined (Ray's BasicVariantGenerator).")


class GridSearch(SearchBase):
    type: Literal["grid"] = describe("Every combination of `grid` entries (Ray's BasicVariantGenerator).")


class OptunaSearch(SearchBase):
    type: Literal["optuna"] = describe("Optuna (optional extra: specc[optuna]).")
    sampler: Literal["tpe", "random"] = describe("Optuna sampler.", "tpe")


class HyperOptSearch(SearchBase):
    type: Literal["hyperopt"] = describe("HyperOpt's TPE (optional extra: specc[hyperopt]).")
    n_initial_points: PositiveInt = describe("Random trials before TPE takes over.", 20)


class BayesOptSearch(SearchBase):
    type: Literal["bayesopt"] = describe("Bayesian optimisation (optional extra: specc[bayesopt]).")
    utility: Literal["ucb", "ei", "poi"] = describe("Acquisition function.", "ucb")
    kappa: PositiveFloat = describe("Exploration weight of ucb.", 2.576)
    xi: Annotated[float, Field(ge=0)] = describe("Exploration margin of ei and poi.", 0.0)
    random_search_steps: PositiveInt = describe("Random trials before the model takes over.", 10)


Search = Annotated[
    Union[RandomSearch, GridSearch, OptunaSearch, HyperOptSearch, BayesOptSearch], Field(discriminator="type")
]

# Which distributions each search algorithm can sample (Ray's converters refuse the others).
SUPPORTED_DISTRIBUTIONS = {
    "random": None,  # all
    "grid": ("grid",),
    "optuna": ("uniform", "quniform", "loguniform", "qloguniform", "randint", "qrandint", "lograndint", "choice"),
    "hyperopt": (
        "uniform",
        "quniform",
        "loguniform",
        "qloguniform",
        "randint",
        "qrandint",
        "lograndint",
        "randn",
        "qrandn",
        "choice",
    ),
    "bayesopt": ("uniform",),
}


def _one_or_list(value: Any) -> str:
    """Which form a metric or mode takes: a list (several objectives) or one value; problems then speak of that form
    alone, not of both."""
    return "list" if isinstance(value, list) else "str"


def one_or_list(item: Any) -> Any:
    """`item`, or a list of them (tune.metric, tune.mode)."""
    return Annotated[
        Union[Annotated[item, Tag("str")], Annotated[list[item], Tag("list")]], Discriminator(_one_or_list)
    ]


Mode = Literal["min", "max"]


class Tune(Section):
    """A hyperparameter search on Ray Tune. Present => each sampled config is one trial."""

    metric: one_or_list(MetricName) = describe(
        "Metric to optimise; must be one the spec reports (e.g. val_accuracy). A list (search.type optuna only) "
        "optimises several at once: the search finds their Pareto front."
    )
    mode: one_or_list(Mode) = describe(
        "min or max: which direction of the metric is better; a list of the same length as a list metric."
    )
    num_samples: PositiveInt = describe("Samples drawn; each grid entry multiplies the trial count.", 1)
    max_concurrent_trials: PositiveInt | None = describe("Trials run at once; default: as many as fit.", None)
    search: Search = describe("The search algorithm, by type.", RandomSearch.model_construct(type="random"))
    space: dict[SpacePath, AnyDistribution] = describe(
        "Dotted path into this spec -> distribution, e.g. training.optimizer.lr: {loguniform: [1.0e-4, 0.1]}.", {}
    )

    @property
    def multi_objective(self) -> bool:
        """Whether `metric` is a list: several objectives, a Pareto front rather than one best trial."""
        return isinstance(self.metric, list)

    @property
    def objectives(self) -> list[tuple[str, str]]:
        """(metric, mode) pairs, one for a single metric; a mode list shorter than the metrics (E236) pairs what it
        has, a plain mode applies to every metric."""
        metrics = self.metric if isinstance(self.metric, list) else [self.metric]
        modes = self.mode if isinstance(self.mode, list) else [self.mode] * len(metrics)
        return list(zip(metrics, modes, strict=False))
