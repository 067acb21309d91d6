"""`specc plan`'s text: a plan report (specc.plan.trials.plan_report) as a short aligned report, one section a line
or a few: search, per-trial resources, fit, scheduler, budget, the first configs as a table."""

from __future__ import annotations

import json
import math
from typing import Any

from specc.read.terminal import one_line

LISTED = 20  # the most brackets, rungs or epochs a line lists (specc.plan.trials.LISTED: the report lists no more)


def format_plan(report: dict) -> str:
    """The plan as a short aligned report (what `specc plan` prints)."""
    lines = [_headline(report)]
    if report["trials"]["search"] is None:  # one training run: no search, scheduler or sampled configs
        sections = [("resources", [_resources_line(report)]), ("fit", [_fit_line(report)])]
        sections.append(("budget", _budget_lines(report)))
    else:
        sections = [("search", _search_lines(report)), ("per trial", [_resources_line(report)])]
        sections += [("fit", [_fit_line(report)]), ("scheduler", _scheduler_lines(report))]
        sections += [
            ("budget", _budget_lines(report)),
            ("configs", _config_lines(report["configs"], report["trials"].get("conditional", {}))),
        ]
    for label, texts in sections:
        lines.extend(f"  {label if i == 0 else '':<10} {text}".rstrip() for i, text in enumerate(texts))
    return "\n".join(lines) + "\n"


def _headline(report: dict) -> str:
    shape, count, processes = report["shape"], report["trials"]["count"], report["resources"]["processes"]
    what = {
        "train": f"one {report['framework']} training run (no tune section)",
        "tune": f"{_count(count, 'trial')}, each one Tune function trainable (no Train worker group)",
        "tune_train": f"{_count(count, 'trial')}, each driving a Ray Train run of {_count(processes, 'worker')}",
        "objective": f"{_count(count, 'trial')} of {_objective(report)}, each in one process",
    }[shape]
    return f"{report['name']}: {what}"


def _objective(report: dict) -> str:
    objective = report.get("objective") or {}
    if "trainable" in objective:
        return f"the Trainable class {objective['trainable']}"
    return f"the objective function {objective['function']}" if "function" in objective else "the objective function"


def _search_lines(report: dict) -> list[str]:
    t = report["trials"]
    seed = f"seed {t['seed']}" if t["seed"] is not None else "no seed"
    grid = math.prod(t["grid"].values())
    formula = f"{_count(t['num_samples'], 'sample')}" + (f" x {grid} grid combinations" if t["grid"] else "")
    lines = [f"{t['search']}, {seed}: {formula} = {_count(t['count'], 'trial')}"]
    if "about" in t:
        lines.append(t["about"])
    if t.get("repeat", 1) > 1:  # Ray's Repeater
        configs = t["count"] // t["repeat"]
        lines.append(
            f"repeat {t['repeat']}: {_count(configs, 'config')}, each run {t['repeat']} times; the mean is told"
        )
    if t["grid"]:
        lines.append("grid: " + ", ".join(f"{path} ({size})" for path, size in t["grid"].items()))
    for path, options in t.get("conditional", {}).items():
        lines.append(f"{path}: one of {_count(len(options), 'option')}, each sampling only its own parameters:")
        for option in options:
            params = ", ".join(f"{name} {what}" for name, what in option["params"].items()) or "nothing sampled"
            lines.append(f"  {option['option']}: {params}")
    if t["points_to_evaluate"]:
        lines.append(f"points_to_evaluate: {t['points_to_evaluate']}, tried first; each uses up one sample")
    if t.get("objectives"):  # several objectives: no one best trial
        pairs = " and ".join(f"{metric} ({mode})" for metric, mode in t["objectives"])
        lines.append(f"objectives: {pairs}; the run keeps their Pareto front (by each trial's last result)")
    return lines


def _resources_line(report: dict) -> str:
    r = report["resources"]
    if report["shape"] in ("tune", "objective"):
        return f"{_amounts(r['per_trial'])} (one process)"
    if r["processes"] == 0:
        return f"{_amounts(r['per_trial'])}: Ray Train's local mode, training runs in the driver process"
    workers = f"{_count(r['processes'], 'worker')} x {_amounts(r['per_process'])}"
    if not r["driver"]:
        return f"{_amounts(r['per_trial'])} = {workers}"
    return f"{_amounts(r['per_trial'])} = {_amounts(r['driver'])} (trial driver) + {workers}"


def _fit_line(report: dict) -> str:
    f, search = report["fit"], report["trials"]["search"]
    if f["where"] == "cluster":
        return f"Ray at {f['address']}: the cluster's resources are checked when the run starts"
    here = f"this machine ({_amounts(f['available'])})"
    unchecked = f"; not checked here: {', '.join(f['unchecked'])}" if f["unchecked"] else ""
    data = f" beside {_num(f['data_cpus'])} CPU for Ray Data's reads" if f.get("data_cpus") else ""
    if not f["fits"]:
        what = "NO TRIAL FITS on" if search else "DOES NOT FIT on"
        needs = f"{'a trial' if search else 'it'} needs {_amounts(f['short'])}{data}"
        return f"{what} {here}: {needs}, so the run cannot start"
    if search is None:
        return f"{here}: the run fits{data}{unchecked}"
    why = {"resources": "as many as fit", "trials": "all of them"}.get(f["limited_by"], "max_concurrent_trials")
    return f"{here}: {_count(f['at_once'], 'trial')} at once ({why}){data}{unchecked}"


def _scheduler_lines(report: dict) -> list[str]:
    s, epochs, unit = report["scheduler"], report["budget"]["epochs"], report.get("unit", "epoch")
    kind = s["type"]
    if kind == "fifo" and epochs is None:
        return ["fifo: every trial runs until its function returns (objective.max_steps is null)"]
    if kind == "fifo":
        return [f"fifo: every trial {'trains' if unit == 'epoch' else 'makes'} all {epochs} {unit}s"]
    if kind == "asha":
        rf = _num(s["reduction_factor"])
        head = f"asha (max_t {s['max_t']}, grace_period {s['grace_period']}, reduction_factor {rf})"
        rungs = [_listed([_num(m) for m in b], LISTED) or "none" for b in s["brackets"]]
        if len(rungs) == 1:
            return [f"{head}: rungs at {unit}s {rungs[0]}"]
        lines = [f"bracket {i} rungs at {unit}s {r}" for i, r in enumerate(rungs[:LISTED])]
        return [head, *lines, *_more(len(rungs) - LISTED, "bracket")]
    if kind in ("hyperband", "hyperband_for_bohb"):
        head = f"{kind} (max_t {s['max_t']}, reduction_factor {_num(s['reduction_factor'])}), brackets as filled:"
        more = _more(s.get("bracket_count", len(s["brackets"])) - len(s["brackets"]), "bracket")
        return [head, *(_hyperband_line(b, unit) for b in s["brackets"]), *more]
    if kind == "median_stopping":
        action = "stops" if s["hard_stop"] else "pauses"
        return [
            f"median_stopping: from {unit} {s['grace_period']}, once {s['min_samples_required']} other trials have "
            f"results, a trial below their median {action}"
        ]
    share = f"{s['quantile_fraction']:.0%}"
    lines = [f"{kind}: exploit/explore {_perturbed_at(s, epochs, unit)} (the bottom {share} copy the top {share})"]
    return lines + [_clip_line(clip) for clip in s.get("keep_in_bounds", [])]


def _perturbed_at(s: dict, epochs: int | None, unit: str) -> str:
    """`at steps 4, 8, 12`; with no bound on a trial's steps (objective.max_steps null), the interval instead:
    `every 4 steps from step 4 on, for as long as a trial runs`."""
    if epochs is None:
        first = max(s["perturbation_interval"], s.get("burn_in_period", 0))
        return f"every {_count(s['perturbation_interval'], unit)} from {unit} {first} on, for as long as a trial runs"
    count = s.get("perturbation_count", len(s["perturbation_epochs"]))
    return f"at {unit}s {_listed([str(e) for e in s['perturbation_epochs']], count) or 'none'}"


def _clip_line(clip: dict) -> str:
    """`keep_in_bounds after each perturbation: model.dropout (0 <= dropout < 1: at most 0.3, the top of its range)`:
    what the script clips after each of PBT's perturbations (x1.2 / x0.8, again and again, can cross any bound)."""
    return f"keep_in_bounds after each perturbation: {clip['path']} ({clip['why']})"


def _listed(items: list[str], count: int) -> str:
    """At most LISTED items, then how many more of `count` there are."""
    shown = ", ".join(items[:LISTED])
    return f"{shown} and {count - LISTED} more" if count > LISTED else shown


def _more(count: int, noun: str) -> list[str]:
    return [f"... and {count} more {noun}{'s' * (count != 1)}"] if count > 0 else []


def _hyperband_line(bracket: dict, unit: str = "epoch") -> str:
    steps = [f"{r['trials']} to {unit} {r['epoch']}" for r in bracket["rungs"]]
    rungs = _listed(steps, len(steps))
    where = f"band {bracket['band']} bracket {bracket['bracket']}"
    return f"{where}: {bracket['trials']} of {bracket['size']} trials; {rungs}"


def _budget_lines(report: dict) -> list[str]:
    b, trials = report["budget"], report["trials"]["count"]
    if report["shape"] == "objective":
        return _objective_budget_lines(report)
    factors = [_count(b["epochs"], "epoch"), _count(b["workers"], "worker")]
    if report["trials"]["search"] is not None:
        factors.insert(0, _count(trials, "trial"))
    worst = "worst case " if report["trials"]["search"] is not None else ""  # one run trains every epoch
    lines = [f"{worst}{b['worst_case_worker_epochs']} worker-epochs = {' x '.join(factors)}"]
    if "asha_expected_worker_epochs" in b:
        asha = report["scheduler"]
        expected = f"about {b['asha_expected_worker_epochs']} if each rung keeps 1 in {_num(asha['reduction_factor'])}"
        if b["asha_worst_case_worker_epochs"] != b["worst_case_worker_epochs"]:
            expected = f"at most {b['asha_worst_case_worker_epochs']} (max_t {asha['max_t']}), {expected}"
        lines.append(f"asha: {expected}")
    if "hyperband_worker_epochs" in b:
        lines.append(f"hyperband: {b['hyperband_worker_epochs']} with these brackets")
    if "stop_when_epochs" in b:
        most = b["stop_when_epochs"]
        lines.append(f"stop.when: at most {b['stop_when_worker_epochs']} (training_iteration: {most} epochs a trial)")
    if "all_when" in b:
        lines.append(f"stop.all_when {' or '.join(b['all_when'])} ends the whole search sooner if a trial meets it")
    if b["time_budget_s"] is not None:
        lines.append(f"stop.time_budget_s {_num(b['time_budget_s'])} s ends the whole search sooner if reached")
    return lines


def _objective_budget_lines(report: dict) -> list[str]:
    """An objective's trials are single processes that report in steps: trial-steps, when the steps are bounded."""
    b, trials = report["budget"], report["trials"]["count"]
    if b["epochs"] is None:
        lines = ["no bound on steps: objective.max_steps is null (the function decides when a trial ends)"]
    else:
        total = trials * b["epochs"]
        lines = [f"worst case {total} trial-steps = {_count(trials, 'trial')} x {_count(b['epochs'], 'step')}"]
    if b["time_budget_s"] is not None:
        lines.append(f"stop.time_budget_s {_num(b['time_budget_s'])} s ends the whole search sooner if reached")
    return lines


def _flat(config: dict, conditional: dict) -> dict:
    """A conditional entry as its option's label and its sampled parameters (path.field), one column each."""
    flat = {}
    for path, value in config.items():
        options = conditional.get(path)
        if options is None or not isinstance(value, dict):
            flat[path] = value
            continue
        chosen = next((o for o in options if all(value.get(k) == v for k, v in o["fixed"].items())), None)
        flat[path] = chosen["option"] if chosen else value
        for name in chosen["params"] if chosen else ():
            node = value
            for part in name.split("."):
                node = node[int(part)] if isinstance(node, list) else node[part]
            flat[f"{path}.{name}"] = node
    return flat


def _config_lines(configs: dict, conditional: dict | None = None) -> list[str]:
    values = configs["values"]
    if not values:
        return [configs["note"]] if configs["note"] else []
    conditional = conditional or {}
    paths = []
    for path in values[0]:  # an option's own parameters beside it: blank in the rows of the other options
        paths += [path] + [f"{path}.{name}" for option in conditional.get(path, ()) for name in option["params"]]
    paths = list(dict.fromkeys(paths))
    values = [_flat(config, conditional) for config in values]
    cells = [[str(i), *(_show(config[p]) if p in config else "" for p in paths)] for i, config in enumerate(values, 1)]
    rows = [["#", *paths], *cells]
    widths = [max(len(row[column]) for row in rows) for column in range(len(paths) + 1)]
    table = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows]
    return [f"first {len(values)} of {configs['of']}, {configs['note']}:", *table]


def _show(value: Any) -> str:
    """A sampled value as one cell: a string's line ends and controls escaped, so that a row stays one line."""
    if isinstance(value, float):
        return f"{value:.6g}"
    return one_line(value) if isinstance(value, str) else json.dumps(value)


def _amounts(resources: dict[str, float]) -> str:
    return ", ".join(f"{_num(amount)} {name}" for name, amount in resources.items()) or "nothing"


def _num(value: float) -> str:
    if isinstance(value, int):
        return str(value)
    return str(int(value)) if value.is_integer() else f"{value:g}"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'s' * (n != 1)}"
