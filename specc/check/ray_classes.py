"""tune.search, scheduler and run.fail_fast by Ray Tune's own classes (SPEC §13).

Past its own fields, a searcher's or scheduler's keys are its Ray class's keyword arguments, checked against the
catalog (specc/catalog, `ray_tune`: families `searchers` and `schedulers`) by `named_problems`, as a named optimizer's
are. An argument the compiled script already writes from a field of the spec is that field's (WRITTEN_AS). The pairs
Ray requires (bohb with hyperband_for_bohb), the searchers whose library cannot run with the pinned packages (E238),
tune.repeat (Ray's Repeater) and fail_fast (Ray's tune.FailureConfig) are checked here too; what Ray runs with a
warning is a warning (W322), with Ray's reason.
"""

from __future__ import annotations

from collections.abc import Iterator

from specc.check.ax_search import ax_problems
from specc.check.fields import MOVED_KEYS, Locator, did_you_mean
from specc.check.named import named_problems
from specc.check.nevergrad_names import OPTIMIZERS
from specc.spec.errors import Problem, excerpt
from specc.spec.experiment import Experiment
from specc.spec.search import QUANTIZATION_DROPPED, UNAVAILABLE, UNSEEDED

# Ray argument -> the spec's field that the compiled script writes it from, per tune.search.type / scheduler.type
WRITTEN_AS = {
    "searchers": {
        "random": {"random_state": "tune.search.seed", "max_concurrent": "tune.max_concurrent_trials"},
        "grid": {"random_state": "tune.search.seed", "max_concurrent": "tune.max_concurrent_trials"},
        "hyperopt": {"random_state_seed": "tune.search.seed"},
        "bayesopt": {
            "random_state": "tune.search.seed",
            "utility_kwargs": "tune.search.utility, kappa and xi",
            "analysis": "nothing a spec can write (a Python object)",
        },
        "nevergrad": {"optimizer_kwargs": "tune.search.budget"},
        "zoopt": {"dim_dict": "tune.space"},
        "ax": {"random_seed": "tune.search.seed", "ax_client": "nothing a spec can write (a Python object)"},
    },
    "schedulers": {
        "median_stopping": {"min_time_slice": "the script: a trial below the median is stopped, never paused"},
        "pbt": {"hyperparam_mutations": "scheduler.mutations"},
        "pb2": {"hyperparam_bounds": "scheduler.bounds"},
    },
}
# The schedulers that stop trials early, which Ray's Repeater advises against: a repeat stopped early is averaged in.
EARLY_STOPPING = ("asha", "hyperband", "hyperband_for_bohb", "median_stopping")
QUANTIZED = ("quniform", "qloguniform", "qrandint")


def ray_class_problems(e: Experiment, at: Locator) -> Iterator[Problem]:
    """Every check of this module, for a spec that trains a model and for an objective spec alike."""
    yield from ray_arguments(e, at)
    yield from budgets_counted(e, at)
    yield from searcher_pairs(e, at)
    yield from searcher_available(e, at)
    yield from repeat_problems(e, at)
    yield from fail_fast_problems(e, at)
    yield from ax_problems(e, at)


def ray_arguments(e: Experiment, at: Locator) -> Iterator[Problem]:
    """The keys past a searcher's or scheduler's fields: keyword arguments of its Ray class. A key neither has is an
    unknown key, as in any section (did you mean one of either?)."""
    from specc import catalog

    sections = [("searchers", e.tune.search, ("tune", "search"))] if e.tune is not None else []
    sections += [("schedulers", e.scheduler, ("scheduler",))] if e.scheduler is not None else []
    for family, section, where in sections:
        name = catalog_name(section.type)
        entry = catalog.lookup("ray_tune", family, name)
        written = WRITTEN_AS[family].get(section.type, {})
        own = [field for field in type(section).model_fields if field != "type"]
        allowed = [*own, *(key for key in entry.settable if key not in written and key not in own)] if entry else own
        checked = {}
        for key, value in (section.model_extra or {}).items():
            if key in written:
                message = f"{section.type}'s {key} is written by the compiled script from {written[key]}"
                yield at("E101", message, (*where, key), f"give {written[key]} instead", key=True)
            elif entry is not None and key not in entry.settable:
                message = f"unknown key {excerpt(key)} in {'.'.join(where)}"
                hint = did_you_mean(str(key), allowed) or MOVED_KEYS.get(str(key))
                yield at("E101", message, (*where, key), hint or "allowed keys: " + ", ".join(allowed), key=True)
            else:
                checked[key] = value
        yield from named_problems("ray_tune", family, name, checked, where, at)


def catalog_name(kind: str) -> str:
    """A search or scheduler type as the catalog names its class: grid is random's BasicVariantGenerator."""
    return "random" if kind == "grid" else kind


def budgets_counted(e: Experiment, at: Locator) -> Iterator[Problem]:
    """A scheduler whose time_attr is another result than Ray's training_iteration counts its budgets in that unit:
    max_t cannot default to the epochs (or objective.max_steps) then."""
    scheduler = e.scheduler
    if scheduler is None or scheduler.time_attr == "training_iteration" or "max_t" not in type(scheduler).model_fields:
        return
    if scheduler.max_t is None:
        message = f"with time_attr {scheduler.time_attr}, max_t counts {scheduler.time_attr}, not epochs: give it"
        yield at("E102", message, ("scheduler",), f"max_t: the most {scheduler.time_attr} a trial may reach", key=True)


def searcher_pairs(e: Experiment, at: Locator) -> Iterator[Problem]:
    """TuneBOHB and HyperBandForBOHB need each other, as in Ray: BOHB's model learns from the budgets HyperBandForBOHB
    gives; HyperBandForBOHB pauses and resumes the trials of BOHB's brackets."""
    search = e.tune.search.type if e.tune is not None else None
    scheduler = e.scheduler.type if e.scheduler is not None else None
    if search == "bohb" and scheduler != "hyperband_for_bohb":
        message = "search type bohb (TuneBOHB) runs with scheduler hyperband_for_bohb (HyperBandForBOHB), as in Ray"
        where = ("scheduler", "type") if e.scheduler is not None else ("tune", "search", "type")
        yield at("E100", message, where, "scheduler: {type: hyperband_for_bohb}")
    if scheduler == "hyperband_for_bohb" and search != "bohb":
        message = "scheduler hyperband_for_bohb (HyperBandForBOHB) runs with search type bohb (TuneBOHB), as in Ray"
        yield at("E100", message, ("scheduler", "type"), "tune.search: {type: bohb}, or scheduler type hyperband")


def searcher_available(e: Experiment, at: Locator) -> Iterator[Problem]:
    """E238: a searcher whose library cannot run with the pinned packages; W320: a seed the searcher cannot take;
    W322: a quantized distribution whose quantization Ray drops, with its warning."""
    if e.tune is None:
        return
    search = e.tune.search
    if search.type in UNAVAILABLE:
        message = f"search type {search.type} cannot run with the pinned packages: {UNAVAILABLE[search.type]}"
        yield at("E238", message, ("tune", "search", "type"), "use ax, bohb, nevergrad, zoopt, optuna or hyperopt")
        return
    if search.type == "nevergrad" and search.optimizer not in OPTIMIZERS:
        message = f"Nevergrad's optimizer registry has no {excerpt(search.optimizer)}"
        hint = did_you_mean(search.optimizer, OPTIMIZERS) or "OnePlusOne, CMA, PSO, TwoPointsDE, NGOpt, ..."
        yield at("E104", message, ("tune", "search", "optimizer"), hint)
    configs = e.tune.num_samples // e.tune.repeat
    if search.type == "zoopt" and search.budget is None and configs < 3:
        message = f"ZOOpt's budget defaults to the {configs} config(s) the search draws, and ZOOpt exits below 3"
        yield at("E106", message, ("tune", "num_samples"), "tune.search.budget: 3 or more, or more samples")
    if search.type in UNSEEDED and search.seed is not None:
        message = f"seed has no effect with search type {search.type}: {UNSEEDED[search.type]}"
        yield at("W320", message, ("tune", "search", "seed"), "remove it; runs of this searcher differ", key=True)
    if search.type in QUANTIZATION_DROPPED:
        for key, distribution in e.tune.space.items():
            if distribution.kind in QUANTIZED:
                message = (
                    f"{QUANTIZATION_DROPPED[search.type]} does not support quantization: Ray drops the q of "
                    f"{distribution.kind} and samples {distribution.kind[1:]} (Ray warns)"
                )
                hint = f"{distribution.kind[1:]}, without q"
                yield at("W322", message, ("tune", "space", key, distribution.kind), hint, key=True)


def repeat_problems(e: Experiment, at: Locator) -> Iterator[Problem]:
    """tune.repeat (Ray's Repeater): it wraps a Searcher, which random and grid's BasicVariantGenerator is not."""
    tune = e.tune
    if tune is None or tune.repeat == 1:
        return
    where = ("tune", "repeat")
    if tune.search.type in ("random", "grid"):
        message = f"Ray's Repeater wraps a searcher that learns from results; {tune.search.type} search is not one"
        yield at("E100", message, where, "a searcher such as optuna, hyperopt or bohb; or repeat: 1")
        return
    if tune.search.type == "bohb":
        message = (
            "Ray's HyperBandForBOHB pauses and resumes trials through the searcher's on_pause and on_unpause, which "
            "Ray's Repeater does not have: the run would fail at the first rung (AttributeError)"
        )
        yield at("E100", message, where, "repeat: 1 with bohb; or another searcher", also=("tune", "search", "type"))
        return
    if tune.multi_objective:
        message = "Ray's Repeater averages one metric over the repeats: tune.metric is a list"
        yield at("E100", message, where, "one metric, or repeat: 1")
    if tune.num_samples % tune.repeat:
        configs, left = divmod(tune.num_samples, tune.repeat)
        message = (
            f"num_samples {tune.num_samples} is not a multiple of repeat {tune.repeat}: Ray's Repeater evaluates "
            f"{configs} configs {tune.repeat} times each and ignores the {left} trials left over"
        )
        yield at("W322", message, ("tune", "num_samples"), f"num_samples {configs * tune.repeat or tune.repeat}")
    if "training.seed" in tune.space:
        message = (
            f"each of the {tune.repeat} repeats of a config trains from training.seed + its index, to average the "
            "luck of the seed out; searching training.seed beside repeat lets the searcher pick seeds by their luck, "
            "and configs whose seeds differ by less than the repeats share seeds"
        )
        hint = "remove training.seed from tune.space (the repeats vary it), or repeat: 1 to search seeds"
        yield at("W323", message, ("tune", "space", "training.seed"), hint, key=True)
    if e.scheduler is not None and e.scheduler.type in EARLY_STOPPING:
        message = (
            f"scheduler {e.scheduler.type} stops trials early, and Ray's Repeater averages each repeat's last result: "
            "Ray advises against an early-stopping scheduler beside it"
        )
        yield at("W322", message, where, "scheduler fifo", also=("scheduler", "type"))


def fail_fast_problems(e: Experiment, at: Locator) -> Iterator[Problem]:
    """run.fail_fast is tune.FailureConfig's (ray.train's is deprecated in Ray 2.60); it takes no retries."""
    fail_fast = e.run.fail_fast
    if fail_fast is False:
        return
    where = ("run", "fail_fast")
    if e.tune is None:
        message = "fail_fast acts on a search's trials; a single training run ends at its failure anyway"
        yield at("W320", message, where, "remove it", key=True)
    elif e.run.max_failures:
        message = (
            f"Ray's FailureConfig refuses fail_fast {fail_fast!r} with max_failures {e.run.max_failures}: a failed "
            "trial is either retried or ends the run"
        )
        yield at("E100", message, where, "max_failures: 0, or fail_fast: false", also=("run", "max_failures"))
