"""The Tune parts of the template context: search-space domains, stop conditions, searcher imports.

Like fragments.py, every piece of code here is assembled from validated choices (a distribution's kind, a
stop operator) and values quoted by `render.literal`.
"""

from __future__ import annotations

from specc.check.conditional import compiled_options, conditional_entries, is_conditional, nested, option_label
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
    "bohb": "from ray.tune.search.bohb import TuneBOHB",
    "nevergrad": "from ray.tune.search.nevergrad import NevergradSearch",
    "zoopt": "from ray.tune.search.zoopt import ZOOptSearch",
    "ax": "from ray.tune.search.ax import AxSearch",
}
SCHEDULERS = {
    "fifo": "FIFOScheduler",
    "asha": "ASHAScheduler",
    "hyperband": "HyperBandScheduler",
    "hyperband_for_bohb": "HyperBandForBOHB",
    "median_stopping": "MedianStoppingRule",
    "pbt": "PopulationBasedTraining",
}


def domain(distribution: Distribution) -> Code:
    """`{loguniform: [1e-4, 0.1]}` -> `tune.loguniform(0.0001, 0.1)`; choices and grids take their list whole."""
    function = DOMAINS[distribution.kind]
    if distribution.kind in ("choice", "grid"):
        return Code(f"{function}({literal(list(distribution.args))})")
    return Code(f"{function}({', '.join(literal(arg) for arg in distribution.args)})")


def space_domain(e, path: str, distribution: Distribution) -> Code:
    """A tune.space entry as a Ray domain; a conditional choice or grid holds each option whole (its section's
    fields, defaults filled in) with its own domains inside: Ray samples those only in the trials that choose it."""
    if distribution.kind not in ("choice", "grid") or not any(isinstance(o, dict) for o in distribution.args):
        return domain(distribution)
    options = compiled_options(e, path, distribution)
    return Code(f"{DOMAINS[distribution.kind]}({literal(_with_code(options, domain))})")


def _with_code(value, code):
    """A value with each Distribution in it replaced by code(distribution)."""
    if isinstance(value, Distribution):
        return code(value)
    if isinstance(value, dict):
        return {key: _with_code(item, code) for key, item in value.items()}
    if isinstance(value, list):
        return [_with_code(item, code) for item in value]
    return value


# -- HyperOpt's own space (a conditional space: nested hp.choice) ----------------------------------------------
def hyperopt_domain(distribution: Distribution, label: str) -> Code:
    """As Ray's HyperOptSearch.convert_search_space writes each distribution."""
    kind, args, name = distribution.kind, distribution.args, literal(label)
    if kind in ("loguniform", "qloguniform"):
        logs = f"math.log({literal(args[0])}), math.log({literal(args[1])})"
        q = f", {literal(args[2])}" if kind == "qloguniform" else ""
        return Code(f"hp.{kind}({name}, {logs}{q})")
    if kind == "randint":
        return Code(f"hp.uniformint({name}, {literal(args[0])}, {literal(args[1] - 1)})")
    if kind == "qrandint":
        first, last = distribution.probes()
        return Code(f"scope.int(hp.quniform({name}, {literal(first)}, {literal(last)}, {literal(args[2])}))")
    if kind == "lograndint":
        logs = f"math.log({literal(args[0])}), math.log({literal(args[1] - 1)})"
        return Code(f"scope.int(hp.qloguniform({name}, {logs}, 1))")
    if kind == "choice":
        return Code(f"hp.choice({name}, {literal(list(args))})")
    function = {"randn": "normal", "qrandn": "qnormal"}.get(kind, kind)
    return Code(f"hp.{function}({name}, {', '.join(literal(arg) for arg in args)})")


def hyperopt_space(e) -> dict:
    """path -> HyperOpt expression; a conditional entry is an hp.choice of its options, each option's
    distributions labelled path[option].field."""
    return {path: hyperopt_expression(e, path, distribution) for path, distribution in e.tune.space.items()}


def hyperopt_expression(e, path: str, distribution):
    """One tune.space entry as HyperOpt draws it: its domain, or for a conditional entry an hp.choice of its
    options, each option's distributions labelled path[option].field."""
    if not is_conditional(distribution):
        return hyperopt_domain(distribution, path)
    options = compiled_options(e, path, distribution)
    labelled = [
        _labelled(option, f"{path}[{option_label(options, index)}]", hyperopt_domain)
        for index, option in enumerate(options)
    ]
    return Code(f"hp.choice({literal(path)}, {literal(labelled)})")


def _labelled(value, label: str, code):
    """_with_code, each distribution named by the label of the option and its path inside it."""
    if isinstance(value, Distribution):
        return code(value, label)
    if isinstance(value, dict):
        return {key: _labelled(item, f"{label}.{key}", code) for key, item in value.items()}
    if isinstance(value, list):
        return [_labelled(item, f"{label}.{index}", code) for index, item in enumerate(value)]
    return value


# -- Optuna define-by-run (a conditional space) ----------------------------------------------------------------
def optuna_suggest(distribution: Distribution, label: str) -> Code:
    """trial.suggest_* as Ray's OptunaSearch converts each distribution."""
    kind, args, name = distribution.kind, distribution.args, literal(label)
    if kind in ("uniform", "quniform", "loguniform", "qloguniform"):
        bounds = f"{name}, {literal(args[0])}, {literal(args[1])}"
        if kind == "quniform":
            return Code(f"trial.suggest_float({bounds}, step={literal(args[2])})")
        if kind == "qloguniform":  # Optuna cannot quantize a log scale: rounded here
            q = literal(args[2])
            return Code(f"round(trial.suggest_float({bounds}, log=True) / {q}) * {q}")
        return Code(f"trial.suggest_float({bounds}{', log=True' if kind == 'loguniform' else ''})")
    if kind == "qrandint":
        first, last = distribution.probes()
        return Code(f"trial.suggest_int({name}, {literal(first)}, {literal(last)}, step={literal(args[2])})")
    if kind in ("randint", "lograndint"):
        log = ", log=True" if kind == "lograndint" else ""
        return Code(f"trial.suggest_int({name}, {literal(args[0])}, {literal(args[1] - 1)}{log})")
    assert kind == "choice"
    values = list(args)
    if all(isinstance(v, bool | int | float | str) or v is None for v in values):
        return Code(f"trial.suggest_categorical({name}, {literal(values)})")
    indexes = list(range(len(values)))  # Optuna's categories are plain values: a list or mapping by its index
    return Code(f"{literal(values)}[trial.suggest_categorical({name}, {literal(indexes)})]")


def define_space(e) -> list[Code]:
    """The body of define_space(trial): each tune.space entry suggested in order, a conditional one as an
    if/elif on the option Optuna picks, whose branch suggests only that option's parameters."""
    lines = ["sample = {}"]
    for path, distribution in e.tune.space.items():
        if not is_conditional(distribution):
            lines.append(f"sample[{literal(path)}] = {optuna_suggest(distribution, path)}")
            continue
        options = compiled_options(e, path, distribution)
        labels = [option_label(options, index) for index in range(len(options))]
        lines.append(f"option = trial.suggest_categorical({literal(path)}, {literal(labels)})")
        for index, (label, option) in enumerate(zip(labels, options, strict=True)):
            lines.append(f"{'if' if index == 0 else 'elif'} option == {literal(label)}:")
            value = _labelled(option, f"{path}[{label}]", optuna_suggest)
            lines.append(f"    sample[{literal(path)}] = {literal(value)}")
    lines.append("return sample")
    return [Code(line) for line in lines]


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
    space = {path: space_domain(e, path, distribution) for path, distribution in e.tune.space.items()}
    conditional = any(True for _ in conditional_entries(e))
    native = conditional and e.tune.search.type in ("optuna", "hyperopt")  # the searcher gets its own space
    scheduler = e.scheduler.type if e.scheduler else "fifo"
    key = param_name if e.objective is not None else str  # an objective's config is its params
    return {
        "space": space,
        "has_grid": any(d.kind == "grid" for d in e.tune.space.values()),
        "native_space": native,
        "option_columns": option_columns(e),
        "define_space": define_space(e) if native and e.tune.search.type == "optuna" else [],
        "hyperopt_space": hyperopt_space(e) if native and e.tune.search.type == "hyperopt" else {},
        "mutations": {key(path): mutation(d) for path, d in getattr(e.scheduler, "mutations", {}).items()},
        "bounds": {key(path): bounds for path, bounds in getattr(e.scheduler, "bounds", {}).items()},
        "keep_in_bounds": [(clip_line(clip), clip.why) for clip in pbt_clips(e)],
        "mutated_only": mutated_only(e),
        "trial_paths": Code("trial_paths()" if mutated_only(e) else "search_space()"),
        "points": [_point(point, e) for point in e.tune.search.points_to_evaluate],
        "ax": ax_context(e),
        "step_word": "report" if e.objective is not None else "epoch",  # what a scheduler's budget of one is
        "stop_conditions": [_condition(text) for text in (e.stop.when if e.stop else [])],
        "stop_all_conditions": [(_as_written(text), _condition(text)) for text in (e.stop.all_when if e.stop else [])],
        "stoppers": _stoppers(plan),
        "scheduler_type": scheduler,
        "driver_cpu": TRIAL_DRIVER_CPU,
        "result_columns": [m for m in plan.reported_metrics if m != "epoch"],
        "rungs": rungs(plan),
        "search_kwargs": ray_arguments(e.tune.search, "searchers"),
        "search_budget": getattr(e.tune.search, "budget", None) or max(e.tune.num_samples // e.tune.repeat, 1),
        "scheduler_kwargs": ray_arguments(e.scheduler, "schedulers", leave=("time_attr",)),
        "time_attr": Code(literal(e.scheduler.time_attr if e.scheduler is not None else "training_iteration")),
        "failure_args": failure_args(e),
    }


def ray_arguments(section, family: str, leave: tuple = ()) -> dict[str, Code]:
    """A searcher's or scheduler's keys past its own fields: keyword arguments of its Ray class, as literals. Only the
    class's own settable names become code (specc.check.ray_classes checks them; the catalog filters here too)."""
    from specc import catalog
    from specc.check.ray_classes import WRITTEN_AS, catalog_name

    if section is None:
        return {}
    entry = catalog.lookup("ray_tune", family, catalog_name(section.type))
    written = WRITTEN_AS[family].get(section.type, {})
    return {
        key: Code(literal(value))
        for key, value in (section.model_extra or {}).items()
        if entry is not None and key in entry.settable and key not in written and key not in leave
    }


def ax_context(e) -> dict:
    """AxSearch's arguments in Ax's parameter names (specc.check.ax_search): parameter_constraints, and
    points_to_evaluate naming every parameter, the values an objective's params fix among them."""
    from specc.check.ax_search import ax_constraint, ax_point

    if e.tune.search.type != "ax":
        return {}
    search = e.tune.search
    return {
        "parameter_constraints": [ax_constraint(e, text) for text in search.parameter_constraints],
        "renamed": any(ax_constraint(e, text) != text for text in search.parameter_constraints),
        "points": [ax_point(e, point) for point in search.points_to_evaluate],
    }


def failure_args(e) -> str:
    """tune.FailureConfig's arguments (run.max_failures, run.fail_fast), or "" for Ray's defaults."""
    args = []
    if e.run.max_failures:
        args.append(f"max_failures={literal(e.run.max_failures)}")
    if e.run.fail_fast is not False:
        args.append(f"fail_fast={literal(e.run.fail_fast)}")
    return ", ".join(args)


def option_columns(e) -> dict[str, list[str]]:
    """path -> the fields results.csv gives a conditional entry: `type` when its options differ in type, then
    each field an option samples (in option order)."""
    columns = {}
    for path, entry in conditional_entries(e):
        types = {option.get("type") for option in entry.args if isinstance(option, dict)}
        fields = ["type"] if len(types) > 1 else []
        for option in entry.args:
            sampled = [at[0] for at, _raw in nested(option)] if isinstance(option, dict) else []
            fields += [name for name in dict.fromkeys(sampled) if name not in fields]
        columns[path] = fields
    return columns


def optimizer_types(e) -> list[str]:
    """The optimizer types a trial can build: the spec's, and those the options of training.optimizer choose."""
    if e.objective is not None:
        return []
    types = [e.training.optimizer.type]
    entry = e.tune.space.get("training.optimizer") if e.tune else None
    if entry is not None and entry.kind in ("choice", "grid"):
        types += [o["type"] for o in entry.args if isinstance(o, dict) and o.get("type") not in types]
    return types


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
    the search's progress lines show the reports made there. HyperBand's bands repeat: the brackets of the first
    one (at most RUNGS_AT_MOST, E241) hold every epoch, however many trials fill the bands after it."""
    from specc.plan.sampling import trial_count
    from specc.plan.trials import asha_rungs, hyperband_band, hyperband_brackets

    scheduler = plan.experiment.scheduler
    if scheduler is None or scheduler.type not in ("asha", "hyperband", "hyperband_for_bohb"):
        return []
    if scheduler.time_attr != "training_iteration":  # its rungs count another result than the epochs
        return []
    if scheduler.type == "asha":
        return sorted({int(epoch) for bracket in asha_rungs(scheduler) for epoch in bracket})
    band = len(hyperband_band(scheduler).brackets)
    brackets = hyperband_brackets(scheduler, trial_count(plan.experiment.tune), limit=band)
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


def _as_written(text: str) -> str:
    """ "val_accuracy>=0.80" -> "val_accuracy >= 0.8": a condition as the script and best.json name it."""
    metric, op, value = parse_condition(text)
    return f"{metric} {op} {int(value) if value == int(value) else value}"


def tune_imports(plan: Plan) -> tuple[set[str], set[str]]:
    """(modules, from-imports) the Tune parts of a script use."""
    e = plan.experiment
    if e.tune is None:
        return set(), set()
    modules = {"copy", "csv", "io", "yaml", "pandas as pd"}  # pandas: history_of
    froms = {"from ray import tune", SEARCHERS[e.tune.search.type]}
    if e.tune.search.type == "optuna":
        modules.add("optuna")
    if e.tune.search.type == "nevergrad":
        modules.add("nevergrad as ng")
    if e.tune.repeat > 1:
        froms.add("from ray.tune.search import Repeater")
        if plan.shape != "objective":
            froms.add("from ray.tune.search.repeater import TRIAL_INDEX")
    if e.tune.search.type == "hyperopt" and any(True for _ in conditional_entries(e)):
        froms.add("from hyperopt import hp")
        if any("scope.int" in str(code) for code in hyperopt_space(e).values()):
            froms.add("from hyperopt.pyll import scope")
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
    if plan.shape == "tune_train":
        modules.add("concurrent.futures")
        froms.add("from ray.util.queue import Empty, Queue")
    if population_train(plan):
        modules |= {"hashlib", "warnings"}
    return modules, froms
