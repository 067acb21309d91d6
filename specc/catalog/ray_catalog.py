"""Ray Tune's families: searchers, trial schedulers, and the fields of Ray Train's and Ray Tune's FailureConfig.

Each searcher is read from its Ray class, whose module imports without the searcher's own library (optuna,
nevergrad, ...): so the catalog lists every searcher of the pinned Ray whatever is installed, and never records
what is installed, which differs from machine to machine.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

from specc.catalog.introspect import family, record

DISTRIBUTIONS = ("ray",)
SEARCHER_ALIASES = {  # the names specc's `tune.search.type` uses (SPEC §13)
    "random": "BasicVariantGenerator",
    "optuna": "OptunaSearch",
    "hyperopt": "HyperOptSearch",
    "bayesopt": "BayesOptSearch",
    "bohb": "TuneBOHB",
    "nevergrad": "NevergradSearch",
    "hebo": "HEBOSearch",
    "ax": "AxSearch",
    "zoopt": "ZOOptSearch",
}
SCHEDULER_ALIASES = {  # the names specc's `tune.scheduler.type` uses
    "fifo": "FIFOScheduler",
    "asha": "AsyncHyperBandScheduler",
    "hyperband": "HyperBandScheduler",
    "hyperband_for_bohb": "HyperBandForBOHB",
    "median_stopping": "MedianStoppingRule",
    "pbt": "PopulationBasedTraining",
}
# Arguments the compiled script sets from other parts of the spec: tune.metric and tune.mode reach searchers and
# schedulers through TuneConfig, tune.space through the Tuner's param_space; a wrapper's searcher is the one the
# spec names.
SUPPLIED = frozenset({"metric", "mode", "space", "searcher"})
NOT_DRIVABLE = {
    "searchers": {
        "SearchGenerator": "it is Ray's wrapper that turns a Searcher into a search algorithm; name the searcher",
        "ConcurrencyLimiter": "it wraps another searcher object; `tune.max_concurrent_trials` builds it",
        "Repeater": "it wraps another searcher object; `tune.repeat` builds it",
    },
    "schedulers": {
        "ResourceChangingScheduler": "it wraps another scheduler object and takes a Python function to "
        "allocate resources, which a spec cannot hold",
        "PopulationBasedTrainingReplay": "Ray 2.60's replay ends a trial at its first checkpoint after the first "
        "config change (it pauses the trial while the trial saves, and Tune keeps a STOP for after that save), and "
        "fails a function trainable with no checkpoint at a change step: every specc trial does one or the other but "
        "a Trainable class without checkpoint_every (bench/pbt_replay.py)",
    },
}


def families() -> dict[str, dict[str, dict]]:
    return {
        "searchers": searchers(),
        "schedulers": schedulers(),
        "train_failure_config": failure_config("ray.train"),
        "tune_failure_config": failure_config("ray.tune"),
    }


def searchers() -> dict[str, dict]:
    """ray.tune.search's own classes, and each searcher subpackage's (ray.tune.search.optuna, ...)."""
    import ray.tune.search as search

    bases = (search.Searcher, search.SearchAlgorithm)
    places = [search, *(importlib.import_module(f"{search.__name__}.{name}") for name in _subpackages(search))]
    found: dict[type, tuple[str, list[str]]] = {}
    for module in places:
        for name in module.__all__:
            cls = getattr(module, name)
            if inspect.isclass(cls) and issubclass(cls, bases) and cls not in bases:
                found.setdefault(cls, (module.__name__, []))[1].append(name)
    return family(
        [_record("searchers", cls, module, names) for cls, (module, names) in found.items()], SEARCHER_ALIASES
    )


def schedulers() -> dict[str, dict]:
    """ray.tune.schedulers' exports and what Ray's own registry imports lazily (PB2, from its own module)."""
    import ray.tune.schedulers as package

    lazy = [value() for value in package.SCHEDULER_IMPORT.values() if inspect.isfunction(value)]
    exported = [(name, getattr(package, name)) for name in package.__all__]
    found: dict[type, tuple[str, list[str]]] = {cls: (cls.__module__, [cls.__name__]) for cls in lazy}
    for name, cls in exported:
        if inspect.isclass(cls) and issubclass(cls, package.TrialScheduler) and cls is not package.TrialScheduler:
            found.setdefault(cls, (package.__name__, []))[1].append(name)
    records = [_record("schedulers", cls, module, names) for cls, (module, names) in found.items()]
    return family(records, SCHEDULER_ALIASES)


def failure_config(module_name: str) -> dict[str, dict]:
    """The FailureConfig of ray.train (a Trainer's run) or of ray.tune (a Tuner's): two classes of one name.
    ray.train's is Ray Train V2's, which ray.train exports unless RAY_TRAIN_V2_ENABLED=0: read from where it is
    defined, so that the catalog does not depend on the variable."""
    if module_name == "ray.train":
        from ray.train.v2.api.config import FailureConfig
    else:
        from ray.tune import FailureConfig
    return family([record(FailureConfig, module_name)])


def _subpackages(package) -> list[str]:
    return sorted(info.name for info in pkgutil.iter_modules(package.__path__) if info.ispkg)


def _record(family_name: str, cls: type, module: str, names: list[str]) -> dict:
    reason = NOT_DRIVABLE[family_name].get(cls.__name__)
    other_names = tuple(sorted(set(names) - {cls.__name__}))
    return record(cls, module, supplied=SUPPLIED, not_drivable=reason, exported_as=other_names, as_written=True)
