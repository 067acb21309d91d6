"""The Tune parts of the template context: search-space domains, stop conditions, searcher imports.

Like fragments.py, every piece of code here is assembled from validated choices (a distribution's kind, a
stop operator) and values quoted by `render.literal`.
"""

from __future__ import annotations

from specc.check.search_space import pbt_clips
from specc.compiler.render import Code, literal
from specc.compiler.resolve import Plan
from specc.plan.shape import TRIAL_DRIVER_CPU
from specc.spec.space import Distribution
from specc.spec.stop import parse_condition

# spec distribution -> the Ray Tune function that samples it
DOMAINS = {
    "uniform": "tune.uniform",
    "quniform": "tune.quniform",
    "loguniform": "tune.loguniform",
    "qloguniform": "tune.qloguniform",
    "randint": "tune.randint",
    "qrandint": "tune.qrandint",
    "lograndint": "tune.lograndint",
    "randn": "tune.randn",
    "qrandn": "tune.qrandn",
    "choice": "tune.choice",
    "grid": "tune.grid_search",
}
SEARCHERS = {
    "random": "from ray.tune.search import BasicVariantGenerator",
    "grid": "from ray.tune.search import BasicVariantGenerator",
    "optuna": "from ray.tune.search.optuna import OptunaSearch",
    "hyperopt": "from ray.tune.search.hyperopt import HyperOptSearch",
    "bayesopt": "from ray.tune.search.bayesopt import BayesOptSearch",
}
SCHEDULERS = {
    "fifo": "FIFOScheduler",
    "asha": "ASHAScheduler",
    "hyperband": "HyperBandScheduler",
    "median_stopping": "MedianStoppingRule",
    "pbt": "PopulationBasedTraining",
}


def domain(distribution: Distribution) -> Code:
    """`{loguniform: [1e-4, 0.1]}` -> `tune.loguniform(0.0001, 0.1)`; choices and grids take their list whole."""
    function = DOMAINS[distribution.kind]
    if distribution.kind in ("choice", "grid"):
        return Code(f"{function}({literal(list(distribution.args))})")
    return Code(f"{function}({', '.join(literal(arg) for arg in distribution.args)})")


def mutation(entry: Distribution | list) -> Code:
    """A pbt mutation as Ray's PBT reads it: a plain list is categorical (a neighbouring value, or one resampled
    from the list); a Domain is perturbed as a number (x0.8 / x1.2), so a choice becomes its plain list."""
    if isinstance(entry, list):
        return Code(literal(entry))
    if entry.kind == "choice":
        return Code(literal(list(entry.args)))
    return domain(entry)


def clip_line(clip) -> Code:
    """`config["training.optimizer.momentum"] = min(config["training.optimizer.momentum"], 0.95)`."""
    value = f"config[{literal(clip.path)}]"
    if clip.high is not None:
        value = f"min({value}, {literal(clip.high)})"
    if clip.low is not None:
        value = f"max({value}, {literal(clip.low)})"
    if clip.integer:
        value = f"int({value})"
    return Code(f"config[{literal(clip.path)}] = {value}")


def population_train(plan: Plan) -> bool:
    """PBT/PB2 over trials that each drive a Ray Train run: the trial reports each Train checkpoint to Tune (for PBT
    to copy to other trials) and starts its Train run from the Tune checkpoint it is given."""
    scheduler = plan.experiment.scheduler
    return plan.shape == "tune_train" and scheduler is not None and scheduler.type in ("pbt", "pb2")


def mutated_only(e) -> list[str]:
    """Paths that only scheduler.mutations (pbt) or bounds (pb2) name: Ray's PBT draws each trial's first value from
    them into the trial's config, so results.csv, best.yaml and the progress lines list them beside tune.space's."""
    if e.objective is not None:  # an objective's config is its params, all of them listed already
        return []
    named = [*getattr(e.scheduler, "mutations", {}), *getattr(e.scheduler, "bounds", {})]
    return [path for path in dict.fromkeys(named) if path not in e.tune.space]


def tune_context(plan: Plan) -> dict:
    e = plan.experiment
    if e.tune is None:
        return {}
    space = {path: domain(distribution) for path, distribution in e.tune.space.items()}
    scheduler = e.scheduler.type if e.scheduler else "fifo"
    key = param_name if e.objective is not None else str  # an objective's config is its params
    return {
        "space": space,
        "has_grid": any(d.kind == "grid" for d in e.tune.space.values()),
        "mutations": {key(path): mutation(d) for path, d in getattr(e.scheduler, "mutations", {}).items()},
        "bounds": {key(path): bounds for path, bounds in getattr(e.scheduler, "bounds", {}).items()},
        "keep_in_bounds": [(clip_line(clip), clip.why) for clip in pbt_clips(e)],
        "mutated_only": mutated_only(e),
        "trial_paths": Code("trial_paths()" if mutated_only(e) else "search_space()"),
        "points": [_point(point, e) for point in e.tune.search.points_to_evaluate],
        "step_word": "report" if e.objective is not None else "epoch",  # what a scheduler's budget of one is
        "stop_conditions": [_condition(text) for text in (e.stop.when if e.stop else [])],
        "stop_all_conditions": [_condition(text) for text in (e.stop.all_when if e.stop else [])],
        "stoppers": _stoppers(plan),
        "scheduler_type": scheduler,
        "driver_cpu": TRIAL_DRIVER_CPU,
        "result_columns": [m for m in plan.reported_metrics if m != "epoch"],
        "rungs": rungs(plan),
    }


def param_name(path: str) -> str:
    """objective.params.<name> -> <name>: the key of the objective function's config."""
    return path.removeprefix("objective.params.")


def _point(point: dict, e) -> dict:
    """A points_to_evaluate entry keyed as the trial's config is: an objective's by its params (nested where the
    path is), a model spec's by the dotted spec paths its search space uses."""
    if e.objective is None:
        return point
    nested: dict = {}
    for path, value in point.items():
        *parents, last = param_name(path).split(".")
        node = nested
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = value
    return nested


def rungs(plan: Plan) -> list[int]:
    """The epochs (training iterations) at which an ASHA or HyperBand scheduler compares trials, every bracket's;
    the search's progress lines show the reports made there."""
    from specc.plan.sampling import trial_count
    from specc.plan.trials import asha_rungs, hyperband_brackets

    scheduler = plan.experiment.scheduler
    if scheduler is None or scheduler.type not in ("asha", "hyperband"):
        return []
    if scheduler.type == "asha":
        return sorted({int(epoch) for bracket in asha_rungs(scheduler) for epoch in bracket})
    brackets = hyperband_brackets(scheduler, trial_count(plan.experiment.tune))
    return sorted({rung["epoch"] for bracket in brackets for rung in bracket["rungs"]})


def _stoppers(plan: Plan) -> tuple[bool, bool, bool]:
    """(the script has a StopRules class, a StopSearch class (stop.all_when), a TrialPlateauStopper)."""
    stop = plan.experiment.stop
    if stop is None:
        return False, False, False
    return bool(stop.when or stop.max_trial_time_s), bool(stop.all_when), stop.plateau is not None


def _condition(text: str) -> Code:
    """ "val_accuracy >= 0.99" -> `result["val_accuracy"] >= 0.99` (metric and number quoted, operator checked)."""
    metric, op, value = parse_condition(text)
    assert op in (">=", ">", "<=", "<")
    if metric == "training_iteration":  # a count of reports, a whole number (checked)
        value = int(value)
    return Code(f"result[{literal(metric)}] {op} {literal(value)}")


def tune_imports(plan: Plan) -> tuple[set[str], set[str]]:
    """(modules, from-imports) the Tune parts of a script use."""
    e = plan.experiment
    if e.tune is None:
        return set(), set()
    modules = {"copy", "csv", "io", "yaml"}
    froms = {"from ray import tune", SEARCHERS[e.tune.search.type]}
    if e.tune.search.type == "optuna":
        modules.add("optuna")
    scheduler = e.scheduler.type if e.scheduler else "fifo"
    froms.add(
        "from ray.tune.schedulers.pb2 import PB2"
        if scheduler == "pb2"
        else f"from ray.tune.schedulers import {SCHEDULERS[scheduler]}"
    )
    rules, search_end, plateau = _stoppers(plan)
    combined = rules + search_end + plateau > 1
    stoppers = ["CombinedStopper"] * combined + ["Stopper"] * (rules or search_end) + ["TrialPlateauStopper"] * plateau
    if stoppers:
        froms.add(f"from ray.tune.stopper import {', '.join(stoppers)}")
    if population_train(plan):
        modules |= {"concurrent.futures", "hashlib"}
        froms.add("from ray.util.queue import Empty, Queue")
    elif plan.shape == "tune_train":
        froms.add("from ray.tune.integration.ray_train import TuneReportCallback")
    return modules, froms
