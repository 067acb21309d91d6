"""`specc plan`: what a run's trials will be before any of them starts — how many, what each one reserves,
how many fit at once, the scheduler's rungs, the worst-case budget and the first configs the seed samples.

Everything here is computed from the spec, the local machine's CPU/GPU count and Ray 2.60's own formulas
(read from its source; the tests compare with Ray's real schedulers and generator). Nothing imports ray;
numpy is imported only for the formulas Ray computes with numpy.
"""

from __future__ import annotations

import copy
import itertools
import json
import math
import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass

from specc.check.search_space import pbt_clips
from specc.plan.sampling import NotReproducible, grid_sizes, sample_configs, trial_count
from specc.plan.shape import TRIAL_DRIVER_CPU, shape_of
from specc.spec import Experiment
from specc.spec.dataset import FILE_TYPES
from specc.spec.scheduler import RUNGS_AT_MOST
from specc.spec.search import ABOUT
from specc.spec.stop import parse_condition

CHECKED = ("CPU", "GPU")  # what a plan can count on this machine; other resources are reported, not checked
UNITS = 10_000  # Ray accounts resources in 1/10,000ths: 0.1 + 2 x 1 CPU fits 2.1 CPUs exactly
LOCAL_ADDRESSES = (None, "local")  # addresses at which the run starts its own Ray on this machine
LISTED = 20  # the most brackets, rungs or perturbation epochs a plan lists; their counts are beside them


def plan_report(experiment: Experiment, configs: int = 5, machine: dict[str, float] | None = None) -> dict:
    """The plan as plain data (what `specc plan --format json` prints). `machine`: the local resources to
    check against, default this machine's ({"CPU": os.cpu_count(), "GPU": GPUs nvidia-smi lists})."""
    shape = shape_of(experiment)
    trials = _trials(experiment)
    resources = trial_resources(experiment, shape)
    scheduler = scheduler_plan(experiment, trials["count"])
    return {
        "name": experiment.name,
        "framework": experiment.framework,
        "shape": shape,
        "trials": trials,
        "resources": resources,
        "fit": fit(experiment, resources["per_trial"], trials, machine),
        "scheduler": scheduler,
        "budget": budget(experiment, trials["count"], scheduler),
        "configs": first_configs(experiment, configs, trials["count"]),
        "unit": "step" if experiment.objective is not None else "epoch",  # what budgets and rungs count
        "objective": _objective(experiment),
    }


def _objective(experiment: Experiment) -> dict | None:
    """What each trial of an objective spec runs: {"function": "module:name"} or {"trainable": "module:Class"}."""
    objective = experiment.objective
    if objective is None:
        return None
    return {"trainable": objective.trainable} if objective.trainable else {"function": objective.function}


def _trials(experiment: Experiment) -> dict:
    tune = experiment.tune
    if tune is None:
        return {"count": 1, "search": None}
    return {
        "count": trial_count(tune),
        "search": tune.search.type,
        "about": ABOUT[tune.search.type],
        "repeat": tune.repeat,
        "seed": tune.search.seed,
        "num_samples": tune.num_samples,
        "grid": grid_sizes(tune),
        "points_to_evaluate": len(tune.search.points_to_evaluate),
        "max_concurrent_trials": tune.max_concurrent_trials,
        "conditional": conditional_tree(experiment),
        **({"objectives": [list(pair) for pair in tune.objectives]} if tune.multi_objective else {}),
    }


def conditional_tree(experiment: Experiment) -> dict:
    """path -> its options: {option: label, params: {path inside the option: "loguniform [0.001, 0.1]"}}, the
    parameters each option samples (only in the trials that choose it)."""
    from specc.check.conditional import conditional_entries, nested, option_label

    tree = {}
    for path, entry in conditional_entries(experiment):
        tree[path] = [
            {
                "option": option_label(entry.args, index),
                "fixed": {k: v for k, v in option.items() if not any(nested(v))} if isinstance(option, dict) else {},
                "params": {
                    ".".join(str(part) for part in at): f"{next(iter(raw))} {json.dumps(next(iter(raw.values())))}"
                    for at, raw in (nested(option) if isinstance(option, dict) else ())
                },
            }
            for index, option in enumerate(entry.args)
        ]
    return tree


# -- resources -----------------------------------------------------------------------------------------------------


def trial_resources(experiment: Experiment, shape: str) -> dict:
    """What one trial (or the one run, without tune) reserves from Ray, by shape (SPEC §6)."""
    scaling = experiment.scaling
    if shape == "objective":  # the user's function in one process, with scaling's resources (as the script does)
        process = dict(scaling.resources_per_worker or {"CPU": 1})
        if scaling.use_gpu:
            process.setdefault("GPU", 1)
        return {"processes": 1, "per_process": process, "driver": {}, "per_trial": process}
    if shape == "tune":  # the trial's one process reserves what one Train worker would (as the script does)
        process = train_worker_resources(scaling, accelerator=False)
        return {"processes": 1, "per_process": process, "driver": {}, "per_trial": process}
    if shape == "train" and scaling.num_workers == 0:  # Ray Train's local mode: the driver trains, no workers
        return {"processes": 0, "per_process": {}, "driver": {"CPU": 1}, "per_trial": {"CPU": 1}}
    worker = train_worker_resources(scaling)
    driver = {"CPU": TRIAL_DRIVER_CPU} if shape == "tune_train" else {}
    per_trial = _add(driver, {name: amount * scaling.num_workers for name, amount in worker.items()})
    return {"processes": scaling.num_workers, "per_process": worker, "driver": driver, "per_trial": per_trial}


def train_worker_resources(scaling, accelerator: bool = True) -> dict[str, float]:
    """One Ray Train worker, as ray.train.ScalingConfig._resources_per_worker_not_none decides it: no CPU for
    a default GPU worker. `accelerator`: with the accelerator_type resource ScalingConfig adds."""
    if scaling.resources_per_worker is None:
        resources = {"GPU": 1} if scaling.use_gpu else {"CPU": 1}
    else:
        resources = _nonzero(scaling.resources_per_worker)
    if scaling.use_gpu:
        resources.setdefault("GPU", 1)
    if scaling.accelerator_type and accelerator:
        resources.setdefault(f"accelerator_type:{scaling.accelerator_type}", 0.001)
    return resources


def _nonzero(resources: dict[str, float]) -> dict[str, float]:
    return {name: _number(amount) for name, amount in resources.items() if amount != 0}


def _add(*parts: dict[str, float]) -> dict[str, float]:
    total: dict[str, float] = {}
    for part in parts:
        for name, amount in part.items():
            total[name] = round(total.get(name, 0) + amount, 4)
    return {name: _number(amount) for name, amount in total.items()}


def _number(value: float) -> float | int:
    return int(value) if float(value).is_integer() else value


# -- fit -----------------------------------------------------------------------------------------------------------


def local_resources() -> dict[str, float]:
    """This machine as a local Ray started here counts it: its CPUs (ray_cpu_count) and the GPUs `nvidia-smi -L`
    lists (0 without nvidia-smi)."""
    return {"CPU": ray_cpu_count(), "GPU": _gpu_count()}


CGROUP_FILES = {  # where Ray 2.60 reads a container's CPU limits (ray._private.utils._get_docker_cpus)
    "quota": "/sys/fs/cgroup/cpu/cpu.cfs_quota_us",
    "period": "/sys/fs/cgroup/cpu/cpu.cfs_period_us",
    "cpuset": "/sys/fs/cgroup/cpuset/cpuset.cpus",
    "max": "/sys/fs/cgroup/cpu.max",
}


def ray_cpu_count(files: dict[str, str] = CGROUP_FILES) -> int:
    """The CPUs a local Ray started here gets, by Ray 2.60's rule (ray._private.utils.get_num_cpus): the machine's
    count, or in a container the smaller of its CPU quota (cgroup v1 cfs_quota_us / cfs_period_us, or v2 cpu.max;
    below 1: 1) and its cpuset, truncated; RAY_USE_MULTIPROCESSING_CPU_COUNT keeps the machine's."""
    count = os.cpu_count() or 1
    if os.environ.get("RAY_USE_MULTIPROCESSING_CPU_COUNT"):
        return count
    quota = cpuset = None
    try:
        if os.path.exists(files["quota"]) and os.path.exists(files["period"]):
            quota = float(_read(files["quota"])) / float(_read(files["period"]))
        elif os.path.exists(files["max"]):
            limit, period = _read(files["max"]).split()
            quota = float(limit) / float(period) if limit.isnumeric() and period.isnumeric() else None
    except (OSError, ValueError, ZeroDivisionError):
        quota = None
    if quota is not None:
        quota = None if quota < 0 else quota or 1
    try:
        if os.path.exists(files["cpuset"]):
            ranges = [part.partition("-") for part in _read(files["cpuset"]).split(",")]
            cpuset = sum(max(int(high or low) - int(low) + 1, 0) for low, _, high in ranges)  # counted, not listed
    except (OSError, ValueError):
        cpuset = None
    limits = [limit for limit in (quota, cpuset) if limit is not None]
    return int(min(limits)) if limits else count


def _read(path: str) -> str:
    """A cgroup file's few bytes, through the read gate (a FIFO or a link loop is an OSError, never a wait)."""
    from specc.read.files import read_text

    return read_text(path, 4096, root=os.path.dirname(os.path.abspath(path))).strip()


def _gpu_count() -> int:
    tool = shutil.which("nvidia-smi")
    if tool is None:
        return 0
    try:
        listed = subprocess.run([tool, "-L"], capture_output=True, text=True, timeout=10, check=False).stdout
    except (OSError, subprocess.SubprocessError):
        return 0
    return sum(line.startswith("GPU ") for line in listed.splitlines())


def fit(experiment: Experiment, per_trial: dict[str, float], trials: dict, machine: dict | None = None) -> dict:
    """Whether the trials fit where the run will start Ray, and how many at once."""
    address = experiment.cluster.address
    unchecked = sorted(name for name in per_trial if name not in CHECKED)
    if address not in LOCAL_ADDRESSES:
        where = {"where": "cluster", "address": address, "available": None, "at_once": None, "fits": None}
        return where | {"limited_by": None, "short": {}, "unchecked": unchecked}
    available = dict(machine) if machine is not None else local_resources()
    data = data_cpus(experiment)  # kept for Ray Data beside the trials, as the script does when it starts
    if data:
        available["CPU"] = available.get("CPU", 0) - data
    times = (_times(available.get(n, 0), per_trial[n]) for n in CHECKED if per_trial.get(n))
    by_resources = min((t for t in times if t is not None), default=None)
    limits = {"resources": by_resources, "max_concurrent_trials": trials.get("max_concurrent_trials")}
    limits["trials"] = trials["count"]
    at_once = min(limit for limit in limits.values() if limit is not None)
    limited_by = next(name for name, limit in limits.items() if limit == at_once)
    short = {n: per_trial[n] for n in CHECKED if per_trial.get(n, 0) > available.get(n, 0)}
    if data:
        available["CPU"] += data
    where = {"where": "local", "address": address, "available": available, "at_once": at_once, "fits": at_once > 0}
    return where | {"limited_by": limited_by, "short": short, "unchecked": unchecked, "data_cpus": data}


def data_cpus(experiment: Experiment) -> float | None:
    """The CPUs a run keeps for Ray Data when it streams its data set from storage (scaling.data_cpus, at least 1),
    or None when nothing streams."""
    dataset = experiment.dataset
    if dataset is None:
        return None
    if dataset.type in FILE_TYPES or (dataset.type == "image_folder" and dataset.loader == "ray_data"):
        return experiment.scaling.data_cpus or 1
    return None


def _times(available: float, need: float) -> int | None:
    """How many times `need` fits in `available`, in Ray's fixed-point units (None: no limit, for less than a unit,
    which the check stage refuses, E240)."""
    units = round(need * UNITS)
    return round(available * UNITS) // units if units else None


# -- schedulers ----------------------------------------------------------------------------------------------------


def scheduler_plan(experiment: Experiment, trials: int) -> dict:
    """The scheduler's brackets and rungs (lists of at most LISTED brackets, each bracket's count beside them), or
    the epochs PBT perturbs at (the first LISTED, and how many)."""
    scheduler = experiment.scheduler
    kind = "fifo" if scheduler is None or experiment.tune is None else scheduler.type
    plan = {"type": kind}
    if kind == "asha":
        plan |= {"max_t": scheduler.max_t, "grace_period": scheduler.grace_period}
        plan |= {"reduction_factor": scheduler.reduction_factor, "brackets": asha_rungs(scheduler)}
    elif kind in ("hyperband", "hyperband_for_bohb"):
        plan |= {"max_t": scheduler.max_t, "reduction_factor": scheduler.reduction_factor}
        plan |= {"stop_last_trials": scheduler.stop_last_trials, "brackets": hyperband_brackets(scheduler, trials)}
        plan["bracket_count"] = hyperband_fill(scheduler, trials).brackets
    elif kind == "median_stopping":
        plan |= scheduler.model_dump(include={"grace_period", "min_samples_required", "hard_stop"})
    elif kind in ("pbt", "pb2"):
        plan |= _population_plan(experiment, scheduler)
    return plan


def _population_plan(experiment: Experiment, scheduler) -> dict:
    burn_in = getattr(scheduler, "burn_in_period", 0)
    plan = scheduler.model_dump(include={"perturbation_interval", "quantile_fraction", "synch"})
    plan["burn_in_period"] = burn_in
    epochs = steps_per_trial(experiment) or 0
    plan["perturbation_epochs"] = perturbation_epochs(scheduler.perturbation_interval, burn_in, epochs, LISTED)
    plan["perturbation_count"] = perturbation_count(scheduler.perturbation_interval, burn_in, epochs)
    # the bounds the script's keep_in_bounds holds perturbed values inside (pbt only: pb2 explores within bounds)
    clips = pbt_clips(experiment)
    plan["keep_in_bounds"] = [{"path": c.path, "low": c.low, "high": c.high, "why": c.why} for c in clips]
    return plan


def asha_rungs(asha) -> list[list[float | int]]:
    """Each bracket's milestones (epochs at which a trial is compared with the others), ascending, computed as
    ASHAScheduler's _Bracket does (which keeps them descending). At most RUNGS_AT_MOST brackets and rungs a bracket
    (the check stage refuses more, E241)."""
    import numpy as np

    brackets = []
    for s in range(min(asha.brackets, RUNGS_AT_MOST)):
        count = int(np.log(asha.max_t / asha.grace_period) / np.log(asha.reduction_factor) - s + 1)
        count = min(count, RUNGS_AT_MOST)
        brackets.append([_number(asha.grace_period * asha.reduction_factor ** (k + s)) for k in range(count)])
    return brackets


@dataclass(frozen=True)
class Band:
    """One HyperBand band: the brackets HyperBandScheduler opens one after the other, (s, size, first rung's epoch)
    each, leaving out those whose first rung would be epoch 0 (Ray skips them). Every band is the same."""

    hyperband: object
    brackets: tuple[tuple[int, int, int], ...]

    @property
    def size(self) -> int:
        return sum(size for _s, size, _r0 in self.brackets)

    def rungs(self, index: int, live: int) -> list[dict]:
        """Bracket `index`'s rungs with `live` of its trials."""
        s, size, r0 = self.brackets[index]
        hb = self.hyperband
        return _halvings(size, live, r0, s, hb.reduction_factor, hb.max_t)


def hyperband_band(hyperband) -> Band:
    """HyperBandScheduler's s_max_1, _get_n0 and _get_r0 for each s of a band (at most RUNGS_AT_MOST: E241)."""
    import numpy as np

    eta, max_t = hyperband.reduction_factor, hyperband.max_t
    s_max_1 = min(int(np.round(np.log(max_t) / np.log(eta))) + 1, RUNGS_AT_MOST)
    brackets = []
    for s in range(s_max_1):
        r0 = int(max_t * eta ** (-s))
        if r0 > 0:
            brackets.append((s, int(np.ceil(s_max_1 / (s + 1) * eta**s)), r0))
    return Band(hyperband, tuple(brackets))


def _filled(band: Band, trials: int) -> Iterator[dict]:
    """The brackets `trials` trials fill, in the order HyperBandScheduler fills them: band after band."""
    left, number = trials, 0
    while left > 0 and band.brackets:
        for index, (s, size, _r0) in enumerate(band.brackets):
            live = min(left, size)
            yield {"band": number, "bracket": s, "trials": live, "size": size, "rungs": band.rungs(index, live)}
            left -= live
            if left <= 0:
                return
        number += 1


def hyperband_brackets(hyperband, trials: int, limit: int = LISTED) -> list[dict]:
    """The first `limit` brackets HyperBandScheduler fills with `trials` trials, in the order it fills them, each
    with its rungs: how many trials run up to which epoch (survivors of each halving)."""
    return list(itertools.islice(_filled(hyperband_band(hyperband), trials), limit))


@dataclass(frozen=True)
class Fill:
    """How `trials` trials fill HyperBand's bands, counted in closed form: whole bands, then part of one."""

    band: Band
    whole_bands: int
    rest: int  # trials in the last, partly filled band

    @property
    def last_brackets(self) -> int:
        """Brackets the `rest` trials open in the last band."""
        opened, held = 0, 0
        while held < self.rest:
            held += self.band.brackets[opened][1]
            opened += 1
        return opened

    @property
    def brackets(self) -> int:
        return self.whole_bands * len(self.band.brackets) + self.last_brackets


def hyperband_fill(hyperband, trials: int) -> Fill:
    band = hyperband_band(hyperband)
    whole, rest = divmod(trials, band.size) if band.size else (0, 0)
    return Fill(band, whole, rest)


def hyperband_epochs(hyperband, trials: int, epochs: int, run_on_to: int | None) -> int:
    """The epochs the brackets train, trials x epochs between rungs, summed in closed form: a whole band's times
    the whole bands, plus the last band's brackets as far as its trials fill them."""
    fill = hyperband_fill(hyperband, trials)
    band = fill.band

    def trained(index: int, live: int) -> int:
        return _bracket_epochs(_within(band.rungs(index, live), epochs), run_on_to)

    whole = sum(trained(index, size) for index, (_s, size, _r0) in enumerate(band.brackets)) if fill.whole_bands else 0
    total, left = whole * fill.whole_bands, fill.rest
    for index in range(fill.last_brackets):
        live = min(left, band.brackets[index][1])
        total, left = total + trained(index, live), left - live
    return total


def _halvings(size: int, live: int, r: int, s: int, eta: float, max_t: int) -> list[dict]:
    """_Bracket.successive_halving, s times: keep the best ceil(n / eta) (of the bracket's size), run eta x longer."""
    rungs, n = [{"epoch": r, "trials": live}], size
    for _ in range(s):
        n = math.ceil(n / eta)  # int(np.ceil(n / eta)) in Ray: the same for every finite float
        r = int(min(r * eta, max_t))
        live = min(live, n)
        rungs.append({"epoch": r, "trials": live})
    return rungs


def perturbation_epochs(interval: int, burn_in: int, epochs: int, limit: int | None = None) -> list[int]:
    """Epochs at which PBT/PB2 exploit and explore: from burn_in on, every `interval` epochs after the last one
    (the first of them at max(interval, burn_in)); the first `limit` of them."""
    found = range(max(interval, burn_in), epochs + 1, interval)
    return list(found if limit is None else found[:limit])


def perturbation_count(interval: int, burn_in: int, epochs: int) -> int:
    return len(range(max(interval, burn_in), epochs + 1, interval))


# -- budget --------------------------------------------------------------------------------------------------------


def steps_per_trial(experiment: Experiment) -> int | None:
    """Epochs (training iterations) a trial runs at most: training.epochs, or an objective's max_steps, else its
    scheduler's max_t (None: unbounded, the function decides)."""
    if experiment.objective is None:
        return experiment.training.epochs
    return experiment.objective.max_steps or getattr(experiment.scheduler, "max_t", None)


def budget(experiment: Experiment, trials: int, scheduler: dict) -> dict:
    """Worker-epochs: one worker training one epoch. The worst case is every trial running every epoch."""
    epochs, workers = steps_per_trial(experiment), max(experiment.scaling.num_workers, 1)
    if epochs is None:  # an objective whose function decides when it ends
        time_budget = experiment.stop.time_budget_s if experiment.stop is not None else None
        return {"epochs": None, "workers": 1, "worst_case_worker_epochs": None, "time_budget_s": time_budget}
    out = {"epochs": epochs, "workers": workers, "worst_case_worker_epochs": trials * epochs * workers}
    if scheduler["type"] == "asha":  # a max_t beyond the epochs (W330): every trial ends at the last epoch first
        out["asha_worst_case_worker_epochs"] = trials * min(scheduler["max_t"], epochs) * workers
        out["asha_expected_worker_epochs"] = round(trials * _asha_expected_epochs(scheduler, epochs) * workers)
    elif scheduler["type"] in ("hyperband", "hyperband_for_bohb"):
        last = epochs if not scheduler["stop_last_trials"] else None
        out["hyperband_worker_epochs"] = hyperband_epochs(experiment.scheduler, trials, epochs, last) * workers
    stop = experiment.stop if experiment.tune is not None else None
    out["time_budget_s"] = stop.time_budget_s if stop is not None else None
    if stop is not None and stop.all_when:
        out["all_when"] = list(stop.all_when)
    if stop is not None and (most := iterations_at_most(stop.when)) is not None and most < epochs:
        out["stop_when_epochs"] = most
        out["stop_when_worker_epochs"] = trials * most * workers
    return out


def iterations_at_most(conditions: list[str]) -> int | None:
    """The most reports a trial makes under stop.when's training_iteration conditions (`>= 3`: 3, `> 3`: 4)."""
    found = []
    for metric, op, value in map(parse_condition, conditions):
        if metric == "training_iteration" and op in (">=", ">"):
            found.append(math.floor(value) + 1 if op == ">" else math.ceil(value))
    return min(found, default=None)


def _asha_expected_epochs(asha: dict, epochs: int) -> float:
    """Epochs per trial if every rung keeps 1 in reduction_factor, averaged over the brackets with the
    probabilities ASHAScheduler.on_trial_add draws them with (softmax of their rung counts); no trial runs past
    the last epoch."""
    import numpy as np

    rf, max_t, brackets = asha["reduction_factor"], min(asha["max_t"], epochs), asha["brackets"]
    sizes = np.array([len(rungs) for rungs in brackets])
    weights = np.e ** (sizes - sizes.max())
    weights = weights / weights.sum()
    expected = 0.0
    for weight, rungs in zip(weights, brackets, strict=True):
        stops = [min(math.ceil(milestone), max_t) for milestone in rungs] + [max_t]
        start, per_trial = 0, 0.0
        for k, stop in enumerate(stops):
            per_trial += (stop - start) * rf ** (-k)
            start = stop
        expected += weight * per_trial
    return float(expected)


def _within(rungs: list[dict], epochs: int) -> list[dict]:
    """A HyperBand bracket's rungs as trained: a rung past the last epoch is where its trials end anyway."""
    return [rung | {"epoch": min(rung["epoch"], epochs)} for rung in rungs]


def _bracket_epochs(rungs: list[dict], run_on_to: int | None) -> int:
    start, total = 0, 0
    for rung in rungs:
        total += rung["trials"] * (rung["epoch"] - start)
        start = rung["epoch"]
    if run_on_to is not None:  # stop_last_trials false: the last rung's trials train on to the end
        total += rungs[-1]["trials"] * max(run_on_to - start, 0)
    return total


# -- configs -------------------------------------------------------------------------------------------------------


def sampling_order(params: dict, paths: list[str]) -> list[str]:
    """The search paths (objective.params.<name>) in the order Ray Tune's variant generator meets their domains in
    the objective's config: params with each searched value in place (new names appended), walked depth first."""
    prefix = "objective.params."
    tree: dict = copy.deepcopy(params)
    for path in paths:
        *parents, last = path.removeprefix(prefix).split(".")
        node = tree
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = _Searched(path)
    found: list[str] = []
    pending = [tree]
    while pending:
        node = pending.pop()
        if isinstance(node, _Searched):
            found.append(node.path)
        elif isinstance(node, dict):
            pending.extend(reversed(list(node.values())))
    return found


@dataclass(frozen=True)
class _Searched:
    path: str


def first_configs(experiment: Experiment, n: int, trials: int) -> dict:
    """The first `n` trial configs the run will try, or why they cannot be known before it starts."""
    if experiment.tune is None:
        return {"values": [], "of": trials, "note": "no tune section: one run with the spec's values"}
    if n <= 0:
        return {"values": [], "of": trials, "note": None}
    tune = experiment.tune
    if experiment.objective is not None:  # Tune samples the domains in the order it meets them in the nested config
        order = sampling_order(experiment.objective.params, list(tune.space))
        tune = tune.model_copy(update={"space": {path: tune.space[path] for path in order}})
    from specc.check.conditional import compiled_options, mapping_entries

    options = {path: compiled_options(experiment, path, entry) for path, entry in mapping_entries(experiment)}
    try:
        values = sample_configs(tune, n, options)
    except NotReproducible as reason:
        return {"values": [], "of": trials, "note": str(reason)}
    seed = experiment.tune.search.seed
    note = f"sampled with seed {seed} (the values the run samples)" if seed is not None else "grid values only"
    return {"values": values, "of": trials, "note": note}
