"""Numbers Ray can run: the gate before every other rule, and before plan and compile (issue 53, class 5 and 6).

A spec's numbers reach arithmetic in Ray, numpy and torch (64-bit integers, floats) and in specc's own plan and
compile (rungs, brackets, budgets). Each group below computes with the numbers the one before it cleared, so the
first that finds anything is the last to run, and nothing after the gate meets a number past what Ray runs.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from specc.check.conditional import mapping_entries, nested, parsed
from specc.check.fields import Locator
from specc.check.search_space import space_entries
from specc.read.document import Path
from specc.spec.errors import Problem, excerpt
from specc.spec.experiment import Experiment
from specc.spec.scalars import INT64_MAX, INT64_MIN, MAX_RESOURCE, RESOURCE_UNIT, past_int64
from specc.spec.space import Distribution


def numbers_ray_runs(e: Experiment, at: Locator) -> Iterator[Problem]:
    """E240: integers past int64, distributions whose sampling overflows a float, resources past Ray's, a search of
    more trials than int64 counts; E241: a scheduler with more rungs or brackets than RUNGS_AT_MOST. Each group
    computes with the numbers the one before it cleared, so the first that finds anything is the last to run."""
    for group in (_ints_past_int64, _distributions_past_ray, _amounts_past_ray, _schedulers_past_ray):
        found = list(group(e, at))
        if found:
            yield from found
            return


def _ints_past_int64(e: Experiment, at: Locator) -> Iterator[Problem]:
    """Every integer the spec writes (objective.params' own values aside: the function takes them as they are)."""
    data = e.model_dump(warnings=False)  # a section left out by _checks_without is None where a union belongs
    if data.get("objective"):
        data["objective"]["params"] = {}
    for path, value in _numbers(data, ()):
        if past_int64(value) and (path in at.source.values or not at.source.values):  # written, not derived
            message = f"{excerpt(value)} is past what Ray can run: Ray, numpy and torch count in 64-bit integers"
            yield at("E240", message, path, f"at most {INT64_MAX}" if value > 0 else f"at least {INT64_MIN}")


def _numbers(value, path: Path) -> Iterator[tuple[Path, object]]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _numbers(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _numbers(item, (*path, index))
    elif isinstance(value, int | float):
        yield path, value


def _distributions_past_ray(e: Experiment, at: Locator) -> Iterator[Problem]:
    """tune.space's distributions, pbt's mutations, and those inside a conditional choice's options."""
    found = [((*where, key), entry) for _kind, where, entries in space_entries(e) for key, entry in entries.items()]
    for key, entry in mapping_entries(e):
        for index, option in enumerate(entry.args):
            inside = nested(option) if isinstance(option, dict) else ()
            found += [(("tune", "space", key, entry.kind, index, *part), parsed(raw)) for part, raw in inside]
    for where, distribution in found:
        past = distribution.past_ray() if isinstance(distribution, Distribution) else None
        if past:
            index, message, hint = past
            yield at("E240", f"{distribution.kind}: {message}", (*where, distribution.kind, index), hint)


def _amounts_past_ray(e: Experiment, at: Locator) -> Iterator[Problem]:
    """Resources past the most a Ray node can have or below its unit, and a search of more trials than int64 counts."""
    scaling = e.scaling
    amounts = {("scaling", "resources_per_worker", k): v for k, v in (scaling.resources_per_worker or {}).items()}
    amounts[("scaling", "data_cpus")] = scaling.data_cpus or 0
    for path, amount in amounts.items():
        if amount > MAX_RESOURCE:
            message = f"{amount:g} is past the most of a resource a Ray node can have ({MAX_RESOURCE:g})"
            yield at("E240", message, path, f"at most {MAX_RESOURCE:g}")
        elif 0 < amount < RESOURCE_UNIT:  # Ray: "cannot go beyond 0.0001" (int(amount * 10000) == 0)
            message = f"{amount:g} is less than Ray's unit of a resource ({RESOURCE_UNIT:g}): Ray refuses it"
            yield at("E240", message, path, f"0, or at least {RESOURCE_UNIT:g}")
    if e.tune is not None:
        grids = [len(entry.args) for entry in e.tune.space.values() if entry.kind == "grid"]
        trials = (e.tune.num_samples + len(e.tune.search.points_to_evaluate)) * math.prod(grids)
        if trials > INT64_MAX:
            message = f"num_samples x {excerpt(math.prod(grids))} grid combinations is past the trials Ray counts"
            yield at("E240", message, ("tune", "num_samples"), f"at most {INT64_MAX} trials")


def _schedulers_past_ray(e: Experiment, at: Locator) -> Iterator[Problem]:
    scheduler = e.scheduler
    if scheduler is not None and scheduler.type in ("asha", "hyperband", "hyperband_for_bohb"):
        if found := scheduler.too_fine():
            field, message, hint = found
            yield at("E241", message, ("scheduler", field), hint, also=("scheduler", "max_t"))
    elif scheduler is not None and scheduler.type == "pbt" and (found := scheduler.past_ray()):
        field, message, hint = found
        yield at("E240", message, ("scheduler", field), hint)
