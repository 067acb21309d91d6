"""`tune`: the metric to optimise, how many trials, the search algorithm and the search space."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import BeforeValidator, ConfigDict, Discriminator, Field, StringConstraints, Tag

from specc.spec.base import (
    IDENTIFIER_PATTERN,
    MetricName,
    PositiveFloat,
    PositiveInt,
    Section,
    Seed,
    SpacePath,
    describe,
)
from specc.spec.named import class_spelling, types_of
from specc.spec.space import AnyDistribution


class SearchBase(Section):
    """What every searcher takes. Past its fields, a searcher's keys are its Ray class's keyword arguments, checked
    against the class's own signature (specc's catalog, family `searchers`: specc/check/searchers.py)."""

    model_config = ConfigDict(**{**Section.model_config, "extra": "allow"})
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


class BOHBSearch(SearchBase):
    type: Literal["bohb"] = describe(
        "BOHB: a model of good configs over HyperBand's budgets (Ray's TuneBOHB; optional extra: specc[bohb]). "
        "Needs scheduler.type hyperband_for_bohb, as in Ray."
    )


class NevergradSearch(SearchBase):
    type: Literal["nevergrad"] = describe(
        "A gradient-free optimizer of Nevergrad (Ray's NevergradSearch; optional extra: specc[nevergrad]). "
        "Not seeded: Ray builds the optimizer's parametrization itself, from an unseeded random state."
    )
    optimizer: Annotated[str, StringConstraints(pattern=IDENTIFIER_PATTERN)] = describe(
        "A name of Nevergrad's optimizer registry (nevergrad.optimizers.registry): OnePlusOne, CMA, PSO, TwoPointsDE, "
        "NGOpt, ...",
        "OnePlusOne",
    )
    budget: PositiveInt | None = describe("Evaluations the optimizer plans for; default: tune.num_samples.", None)


class ZOOptSearch(SearchBase):
    type: Literal["zoopt"] = describe(
        "ZOOpt's derivative-free optimisation (Ray's ZOOptSearch; optional extra: specc[zoopt]). Not seeded: Ray's "
        "ZOOptSearch takes no seed."
    )
    algo: Literal["asracos", "sracos"] = describe(
        "asracos (asynchronous: as many trials at once as tune.max_concurrent_trials, its parallel_num; one without "
        "it, Ray's default) or sracos (one at a time).",
        "asracos",
    )
    budget: Annotated[int, Field(ge=3)] | None = describe(
        "Evaluations ZOOpt plans for, at least 3 (ZOOpt exits below); default: the configs the search draws.", None
    )


class HEBOSearch(SearchBase):
    type: Literal["hebo"] = describe(
        "Ray's HEBOSearch: not available with the pinned packages (HEBO needs numpy < 1.25; Ray 2.60 and torch "
        "need numpy 2)."
    )


class AxSearch(SearchBase):
    type: Literal["ax"] = describe(
        "Ax's Bayesian optimisation (Ray's AxSearch; optional extra: specc[ax]): Sobol configs, then a BoTorch model "
        "proposes each. seed is AxClient's random_seed: the same configs when one trial runs at a time."
    )
    parameter_constraints: list[Annotated[str, StringConstraints(min_length=1)]] = describe(
        "Ax's linear constraints on the sampled values, by tune.space path: 'model.dropout + "
        "training.optimizer.momentum <= 1.0', '2*objective.params.x - objective.params.y >= 0.5', or an order "
        "'objective.params.x <= objective.params.y'. Over uniform, quniform, randint and qrandint entries: Ax "
        "constrains no log scale and no choice.",
        [],
    )
    outcome_constraints: list[Annotated[str, StringConstraints(min_length=1)]] = describe(
        "Ax's constraints on other reported metrics, 'metric <= bound' or 'metric >= bound' (e.g. 'num_parameters "
        "<= 50000'): Ax proposes configs it expects to meet them, from each trial's last result.",
        [],
    )


SEARCHES = (
    RandomSearch,
    GridSearch,
    OptunaSearch,
    HyperOptSearch,
    BayesOptSearch,
    BOHBSearch,
    NevergradSearch,
    ZOOptSearch,
    HEBOSearch,
    AxSearch,
)
Search = Annotated[
    Union[SEARCHES],
    Field(discriminator="type"),
    # a searcher also by Ray's class name (OptunaSearch, TuneBOHB), which the catalog holds beside specc's
    BeforeValidator(class_spelling("searchers", types_of(SEARCHES))),
]
# Searchers whose library does not install beside the pinned packages, or does not run with the pinned Ray (E238).
UNAVAILABLE = {
    "hebo": "HEBO (0.3.6, its latest) needs numpy < 1.25, and Ray 2.60, torch 2.14 and tensorflow 2.21 need numpy 2",
}
# What `specc plan` says each searcher does with the trials.
ABOUT = {
    "random": "Ray's BasicVariantGenerator: each sample drawn at random, every grid value combined with it",
    "grid": "Ray's BasicVariantGenerator: every combination of the grid values",
    "optuna": "Ray's OptunaSearch: Optuna's sampler proposes each config from the results so far",
    "hyperopt": "Ray's HyperOptSearch: random configs, then TPE proposes each from the results so far",
    "bayesopt": "Ray's BayesOptSearch: random configs, then a Gaussian process proposes each",
    "bohb": "Ray's TuneBOHB: a kernel density model of good configs, fit on the budgets HyperBandForBOHB gives "
    "the trials (random configs until it has enough results)",
    "nevergrad": "Ray's NevergradSearch: Nevergrad's optimizer asks for each config and is told its result "
    "(not seeded: runs differ)",
    "zoopt": "Ray's ZOOptSearch: ZOOpt's racos model proposes each config (not seeded: runs differ)",
    "hebo": "Ray's HEBOSearch (cannot run with the pinned packages)",
    "ax": "Ray's AxSearch: Sobol configs, then Ax's BoTorch model proposes each from the results so far; Ax holds "
    "a config back while too many await their results, so fewer trials may run at once",
}
# Searchers that take no seed from specc: the library is not seeded through Ray's class (tune.search.seed: W320).
UNSEEDED = {
    "nevergrad": "Ray's NevergradSearch builds the optimizer's parametrization from an unseeded random state",
    "zoopt": "Ray's ZOOptSearch takes no seed",
}

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
    # Ray's converters: TuneBOHB, NevergradSearch, ZOOptSearch and AxSearch (ray.tune.search.ax); a quantized one
    # (q...) Ray runs with its quantization dropped, with a warning (W322), except ZOOpt's, which keeps it as its
    # precision
    "bohb": ("uniform", "quniform", "loguniform", "qloguniform", "randint", "qrandint", "lograndint", "choice"),
    "nevergrad": ("uniform", "quniform", "loguniform", "qloguniform", "randint", "qrandint", "lograndint", "choice"),
    "zoopt": ("uniform", "quniform", "randint", "choice"),
    "ax": ("uniform", "quniform", "loguniform", "qloguniform", "randint", "qrandint", "lograndint", "choice"),
    "hebo": None,
}
# Distributions a searcher runs with Ray's warning that their quantization is dropped.
QUANTIZATION_DROPPED = {"bohb": "TuneBOHB", "nevergrad": "NevergradSearch", "ax": "AxSearch"}


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
    repeat: PositiveInt = describe(
        "Each config the searcher suggests is evaluated this many times, and the searcher told the mean of the "
        "metric (Ray's Repeater); num_samples counts the trials, a multiple of repeat. Each repeat of a model spec "
        "trains with training.seed + its index.",
        1,
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
