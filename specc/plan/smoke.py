"""Whether a run as written fits this machine, and what `--smoke` changes so that it does (issue 48).

`--smoke` is what CI runs on small machines: 1 trial, 1 epoch, a few batches, at most SMOKE_WORKERS workers, on CPU;
and fitted onto the CPUs of the Ray it runs on (a local Ray's, or the joined cluster's) beside the share Ray Data
needs while it streams. The compiled script applies the rule after Ray has started (`smoke_fit`, in
templates/run/arguments.py.j2 and templates/objective/main.py.j2); `smoke_plan` here applies the same rule to this
machine before anything starts, and `fit_warnings` is what `specc plan` and `specc run --dry-run` warn about:

- W340 the run (one trial of a search) as written needs more CPUs or GPUs than this machine has, counting Ray Data's
  share: a full run here stops before training (E417, or "one trial needs ..."); says what `--smoke` will do and
  what a full run needs.
- W341 tune.max_concurrent_trials asks more trials at once than fit here beside Ray Data: the search runs fewer.

The rule (a Ray user's own): the workers' CPU (`resources_per_worker`) becomes an equal, fractional share of what is
left after Ray Data's whole CPU (and a trial driver's share), rounded down to Ray's unit (0.0001); a
scaling.data_cpus that leaves the workers nothing falls back to Ray Data's least, one CPU; resources the machine has
none of (GPUs, an accelerator type, custom ones) are dropped. Nothing here imports ray.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from specc.plan import trials
from specc.plan.shape import TRIAL_DRIVER_CPU, shape_of
from specc.plan.trials import CHECKED, LOCAL_ADDRESSES, UNITS, data_cpus, train_worker_resources
from specc.spec import Experiment
from specc.spec.errors import Problem

SMOKE_WORKERS = 2  # --smoke runs at most this many Ray Train workers (templates/run/arguments.py.j2)
KEPT = ("CPU", "memory", "object_store_memory")  # what --smoke never drops (a plan does not count memory)


@dataclass(frozen=True)
class Need:
    """What one run (a search: one trial) needs at once, by the shape the compiler picks (SPEC §6)."""

    processes: int  # Ray Train workers, or a trial's one process; 0: Ray Train's local mode (the driver trains)
    per_process: dict[str, float]  # what each reserves
    beside: float  # the CPU a Tune trial's own process holds beside its Train workers
    data: float  # the CPUs Ray Data keeps while it streams (scaling.data_cpus, at least 1); 0 when nothing streams

    @property
    def cpus(self) -> float:
        return round(self.processes * self.per_process.get("CPU", 0) + self.beside + self.data, 4)

    def total(self, name: str) -> float:
        return round(self.processes * self.per_process.get(name, 0), 4)


def need_as_written(experiment: Experiment) -> Need:
    """One run (a search: one trial) as the spec asks for it."""
    shape, scaling = shape_of(experiment), experiment.scaling
    data = float(data_cpus(experiment) or 0)
    if shape == "objective":
        process = dict(scaling.resources_per_worker or {"CPU": 1})
        if scaling.use_gpu:
            process.setdefault("GPU", 1)
        return Need(1, _nonzero(process), 0.0, 0.0)
    if shape == "tune":
        return Need(1, train_worker_resources(scaling), 0.0, data)
    if scaling.num_workers == 0:
        return Need(0, {}, 0.0, data)
    beside = TRIAL_DRIVER_CPU if shape == "tune_train" else 0.0
    return Need(scaling.num_workers, train_worker_resources(scaling), beside, data)


@dataclass(frozen=True)
class SmokePlan:
    """What --smoke runs on a machine of `cpus` CPUs: its need, and what it changed (phrases; none: the spec's own)."""

    need: Need
    changes: tuple[str, ...]
    fits: bool

    @property
    def per_worker_cpu(self) -> float:
        return self.need.per_process.get("CPU", 0)


def smoke_plan(experiment: Experiment, machine: dict[str, float]) -> SmokePlan:
    """--smoke's run on `machine` (resource -> amount, Ray's names), by the rule the compiled script applies to the
    Ray it runs on (smoke_fit): at most SMOKE_WORKERS workers, no GPU or resource the machine lacks, then the
    workers' CPUs shared out fractionally beside Ray Data's share and a trial driver's."""
    written = need_as_written(experiment)
    shape, scaling = shape_of(experiment), experiment.scaling
    changes: list[str] = []
    processes = written.processes
    if shape in ("train", "tune_train") and processes > SMOKE_WORKERS:
        changes.append(f"{SMOKE_WORKERS} workers (the spec: {processes})")
        processes = SMOKE_WORKERS
    process = {n: v for n, v in written.per_process.items() if n != "GPU" and not n.startswith("accelerator_type:")}
    lacking = sorted(n for n in process if n not in KEPT and machine.get(n, 0) < process[n] * max(processes, 1))
    for name in lacking:
        del process[name]
    if not process:
        process = {"CPU": 1}
    dropped = [n for n in written.per_process if n not in process]
    if "GPU" in dropped:
        changes.append("on CPU")
    if any(name.startswith("accelerator_type:") for name in dropped):
        changes.append("no accelerator_type")
    changes += [f"no {n}" for n in dropped if n != "GPU" and not n.startswith("accelerator_type:")]
    have = float(machine.get("CPU", 0))
    data, beside = written.data, written.beside
    cpu = process.get("CPU", 0)
    if data and scaling.data_cpus is not None and data + beside + processes * cpu > have + 1e-9:
        changes.append(f"Ray Data {1:g} CPU (scaling.data_cpus: {scaling.data_cpus:g})")
        data = 1.0
    room = round(have - beside - data, 4)
    fits = True
    if processes and processes * cpu > room + 1e-9:
        share = math.floor(room / processes * UNITS + 1e-6) / UNITS
        if share > 0:
            what = "a worker" if shape in ("train", "tune_train") else "for the trial"
            changes.append(f"{share:g} CPU {what} (the spec: {cpu:g})")
            process["CPU"] = share
        else:
            fits = False
    return SmokePlan(Need(processes, process, beside, data), tuple(changes), fits)


# -- warnings ------------------------------------------------------------------------------------------------------


def fit_warnings(experiment: Experiment, machine: dict[str, float] | None = None) -> list[Problem]:
    """W340 and W341 for a run that starts its own Ray on this machine (`machine`: its resources, default
    trials.local_resources()); none for a cluster, whose resources are known only when the run joins it."""
    if experiment.cluster.address not in LOCAL_ADDRESSES:
        return []
    machine = dict(machine) if machine is not None else trials.local_resources()
    written = need_as_written(experiment)
    problems = []
    short = _short(written, machine)
    if short:
        problems.append(_does_not_fit(experiment, written, machine, short))
    else:
        problems.extend(_fewer_at_once(experiment, written, machine))
    return problems


def _short(need: Need, machine: dict[str, float]) -> dict[str, float]:
    """What one run needs of each resource this machine has too little of (CPU counting Ray Data's share)."""
    totals = {name: need.total(name) for name in need.per_process if name in CHECKED}
    totals["CPU"] = need.cpus
    return {name: amount for name, amount in totals.items() if amount > machine.get(name, 0) + 1e-9 and amount}


def _does_not_fit(experiment: Experiment, need: Need, machine: dict, short: dict) -> Problem:
    shape, search = shape_of(experiment), experiment.tune is not None
    run = "one trial" if search else "the run"
    have = ", ".join(f"{_n(machine.get(name, 0))} {name}" for name in short)
    parts = _cpu_parts(need, shape)
    needs = " and ".join(f"{_n(amount)} {name}{parts if name == 'CPU' else ''}" for name, amount in short.items())
    if need.data and set(short) == {"CPU"} and need.cpus - need.data <= machine.get("CPU", 0) + 1e-9:
        stops = "a full run here stops before training, since Ray Data would have no CPU to read with (E417)"
    else:
        stops = "a full run here is refused before training" + (": no trial fits" if search else "")
    smoke = smoke_plan(experiment, machine)
    if not smoke.fits:
        does = "--smoke cannot fit it either: Ray Data needs a whole CPU, and the workers some beside it"
    elif smoke.changes:
        does = f"--smoke runs it with {', '.join(smoke.changes)}"
    else:
        does = "--smoke runs it as it is"
    message = f"{run} needs {needs}; this machine has {have}: {stops}; {does}"
    hint = _full_run_hint(experiment, need, machine, short)
    at = ("scaling", "resources_per_worker") if experiment.scaling.resources_per_worker is not None else ("scaling",)
    return _locator(experiment)("W340", message, at, hint)


def _cpu_parts(need: Need, shape: str) -> str:
    """` (2 workers x 1 CPU + 1 CPU for Ray Data's reads)`: what the CPUs are for."""
    parts = []
    if need.processes and need.per_process.get("CPU"):
        who = "worker" if shape in ("train", "tune_train") else "trial process"
        parts.append(f"{need.processes} {who}{'s' * (need.processes != 1)} x {_n(need.per_process['CPU'])} CPU")
    if need.beside:
        parts.append(f"{_n(need.beside)} CPU for the trial's driver")
    if need.data:
        parts.append(f"{_n(need.data)} CPU for Ray Data's reads")
    return f" ({' + '.join(parts)})" if len(parts) > 1 else ""


def _full_run_hint(experiment: Experiment, need: Need, machine: dict, short: dict) -> str:
    """What a full run needs: the resources of a machine (or cluster) it fits, or the fractional CPUs that fit here."""
    needs = " and ".join(f"{_n(math.ceil(amount - 1e-9))} {name}" for name, amount in short.items())
    where = f"a full run needs a machine or cluster with {needs} (cluster.address)"
    if set(short) != {"CPU"} or not need.processes or not need.per_process.get("CPU"):
        return where
    room = round(machine.get("CPU", 0) - need.beside - need.data, 4)
    share = math.floor(room / need.processes * UNITS + 1e-6) / UNITS
    if share <= 0:
        return where
    per_worker = "resources_per_worker: {CPU: " + f"{share:g}" + "}"
    return f"{where}; or, to run fully here, scaling.{per_worker}"


def _fewer_at_once(experiment: Experiment, need: Need, machine: dict) -> list[Problem]:
    """W341: tune.max_concurrent_trials asks more trials at once than this machine holds beside Ray Data."""
    tune = experiment.tune
    asked = tune.max_concurrent_trials if tune is not None else None
    if not asked or asked <= 1:
        return []
    per_trial = {name: need.total(name) for name in need.per_process if name in CHECKED}
    per_trial["CPU"] = round(need.cpus - need.data, 4)
    room = {name: machine.get(name, 0) - (need.data if name == "CPU" else 0) for name in per_trial}
    units = {name: round(amount * UNITS) for name, amount in per_trial.items()}
    fit = min((round(room[n] * UNITS) // units[n] for n in per_trial if units[n]), default=None)
    if fit is None or fit >= asked:
        return []
    data = f" beside {_n(need.data)} CPU for Ray Data's reads" if need.data else ""
    cpus = round(asked * per_trial.get("CPU", 0) + need.data, 4)
    message = (
        f"{asked} trials at once, {_amounts(per_trial)} each{data}, need {_n(cpus)} CPU; this machine "
        f"({_amounts(machine)}) holds {fit} at once: the search runs {fit} at a time (--smoke: one trial)"
    )
    hint = f"to run {asked} at once: a machine or cluster with {_n(math.ceil(cpus - 1e-9))} CPU (cluster.address)"
    return [_locator(experiment)("W341", message, ("tune", "max_concurrent_trials"), hint)]


def _locator(experiment: Experiment):
    from specc.check.fields import Locator
    from specc.read.document import SourceMap

    raw = getattr(experiment, "_raw", None)
    return Locator(raw.source if raw else SourceMap())


def _nonzero(resources: dict[str, float]) -> dict[str, float]:
    return {name: amount for name, amount in resources.items() if amount}


def _amounts(resources: dict[str, float]) -> str:
    return ", ".join(f"{_n(amount)} {name}" for name, amount in resources.items() if amount or name == "CPU")


def _n(value: float) -> str:
    return f"{value:g}"
