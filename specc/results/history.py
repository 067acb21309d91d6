"""What the report and the plots draw: each trial's epochs, and the sampled values of a search against its metric.

A Tune run keeps each trial's reported epochs in Ray's own `trial_<trial_id>/result.json` (one JSON object a
line), or `progress.csv` beside it; a training run's epochs are the rows of its results.csv. A trial that never
reported, or whose directory is gone, has no epochs: it is still in the table, with no line in the curves.

Plain json and csv: no pandas, no plotting library (report.py and plots.py beside this draw what it computes).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, replace

from specc.results.run_dir import RunResults, decode_cell, format_value, is_number, short_names
from specc.results.run_files import TABLE_BYTES, RunFiles, parse_json

# Reported with every epoch but the same at each (SPEC §12): a flat curve, not drawn; a search's table has it.
CONSTANT = frozenset({"num_parameters"})
# What Ray adds to every reported result: bookkeeping, not a metric of the model.
RAY_KEYS = frozenset(
    {
        "epoch",
        "timestamp",
        "checkpoint_dir_name",
        "should_checkpoint",
        "done",
        "training_iteration",
        "trial_id",
        "date",
        "time_this_iter_s",
        "time_total_s",
        "pid",
        "hostname",
        "node_ip",
        "config",
        "time_since_restore",
        "iterations_since_restore",
        "timesteps_total",
        "episodes_total",
        "timesteps_since_restore",
        "experiment_tag",
    }
)


# How the report and the plots draw trials, alike.
BEST = "#d62728"  # the best trial, wherever it is drawn
OTHERS = ("#4e79a7", "#f28e2b", "#76b7b2", "#59a14f", "#b07aa1", "#9c755f", "#edc948", "#ff9da7", "#bab0ac")
# Lines coloured by the metric, worst to best: pale and quiet, then blue, then the best trial's red. (Viridis
# would end in a yellow that is hard to see on white, and the best lines are the ones to see.)
METRIC_COLOURS = ((0.0, "#aab7cb"), (0.45, "#6f8fc0"), (0.8, "#4b3f9e"), (1.0, BEST))
LEGEND_UP_TO = 20  # more trials than this: a legend names the best one only
FAR = 1e300  # axes end within +-FAR: their span, and a span's ticks, stay finite whatever a file holds


@dataclass(frozen=True)
class Curve:
    """One line of a learning-curve plot: a trial (or the training run itself) and the epochs it reported.

    `epochs` holds one dict per epoch, in epoch order: "epoch" and each metric. `config` is the trial's sampled
    values ({} for a training run)."""

    name: str
    status: str | None
    config: dict
    epochs: tuple[dict, ...]
    best: bool

    def points(self, metric: str) -> tuple[list, list]:
        """(epochs, values) where the metric was reported as a finite number (a diverged epoch's nan is a gap)."""
        pairs = [(epoch["epoch"], epoch.get(metric)) for epoch in self.epochs]
        pairs = [(x, y) for x, y in pairs if _finite(y)]
        return [x for x, _ in pairs], [y for _, y in pairs]


def curves(results: RunResults) -> list[Curve]:
    """A curve per trial (in results.csv order) or, for a training run, the one curve of its epochs."""
    if results.kind == "train":
        name = os.path.basename(os.path.normpath(results.run_dir))
        return [Curve(name, None, {}, _in_epoch_order(list(results.rows)), True)]
    files = RunFiles(results.run_dir, results.warnings)
    diverged: list[str] = []
    space = results.space
    lines = [
        Curve(
            name=row.get("trial_id") or "?",
            status=row.get("status"),
            config={path: row.get(path) for path in space},
            epochs=tuple(trial_history(files, row.get("trial_id") or "", diverged, results.epoch_shift)),
            best=index == results.best_row,
        )
        for index, row in enumerate(results.rows)
    ]
    if diverged:
        others = len(diverged) - 1
        also = f"; so do {others} other trial{'s' * (others != 1)}' result.json" if others else ""
        message = f"holds NaN or Infinity, which JSON does not allow (Ray writes a diverged metric so){also}"
        files.warn("W308", diverged[0], f"{message}: those epochs are gaps in the curves")
    return lines


def trial_history(
    files: RunFiles, trial_id: str, diverged: list[str] | None = None, shift: int | None = 0
) -> list[dict]:
    """Each epoch the trial reported along the run that ended it, in epoch order (see _in_epoch_order): its
    result.json, else its progress.csv; [] when it has neither. A trial id that cannot name a directory (a `/`, a
    NUL) has no epochs. `diverged` collects the result.json files holding a non-finite number, which curves() warns
    of once for the whole run. `shift` is added to each reported epoch (RunResults.epoch_shift: 1 for a run an
    earlier specc wrote, which counted epochs from 0); None: 1 if the trial reported an epoch 0, else 0."""
    if not trial_id or "/" in trial_id or "\0" in trial_id or os.sep in trial_id:
        return []
    directory = f"trial_{trial_id}"
    reported = _json_lines(files, os.path.join(directory, "result.json"), diverged if diverged is not None else [])
    if not reported:
        reported = _progress_csv(files, os.path.join(directory, "progress.csv"))
    if shift is None:
        shift = 1 if any(_finite(result.get("epoch")) and result["epoch"] == 0 for result in reported) else 0
    if shift:
        reported = [
            {**result, "epoch": result["epoch"] + shift} if _finite(result.get("epoch")) else result
            for result in reported
        ]
    return list(_in_epoch_order(reported))


def _json_lines(files: RunFiles, name: str, diverged: list[str]) -> list[dict]:
    """The objects of a JSON-lines file. A line that does not parse is left out, with a warning (the last one, cut
    off by a crash, is said to be)."""
    text = files.text(name, TABLE_BYTES)
    if text is None:
        return []
    lines = text.splitlines()
    reported, broken, non_finite = [], [], False
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            value, spelled = parse_json(line)
        except ValueError:
            broken.append(number)
            continue
        non_finite = non_finite or bool(spelled)
        if isinstance(value, dict):
            reported.append(value)
        else:
            broken.append(number)
    if non_finite:
        diverged.append(name)
    if broken == [len(lines)] and not text.endswith(("\n", "\r")):
        files.warn("W308", name, f"line {broken[0]}: cut off (no line end); left out", broken[0])
    elif broken:
        more = f" and {len(broken) - 1} more" if len(broken) > 1 else ""
        files.warn("W308", name, f"line {broken[0]}{more}: not a JSON object; left out", broken[0])
    return reported


def _progress_csv(files: RunFiles, name: str) -> list[dict]:
    table = files.table(name)
    if table is None:
        return []
    header, rows = table
    return [{key: decode_cell(cell) for key, cell in zip(header, cells, strict=True) if key} for _, cells in rows]


def _in_epoch_order(reported: list[dict]) -> tuple[dict, ...]:
    """One dict per epoch along the run that ended the trial, in epoch order: a report of an epoch at or before one
    already kept is the trial gone back (a retry or a resume from its last checkpoint, or from the start without one;
    a pause; PBT's exploit), and what the earlier run reported from that epoch on is left out, as results.csv leaves
    it out. A result without a finite `epoch` counts by its training_iteration, else by its place (both from 1, as
    epochs count)."""
    kept: list[dict] = []
    for place, result in enumerate(reported, 1):
        epoch = result.get("epoch")
        if not _finite(epoch):
            iteration = result.get("training_iteration")
            epoch = iteration if _finite(iteration) else place
        while kept and kept[-1]["epoch"] >= epoch:
            kept.pop()
        kept.append({**result, "epoch": epoch})
    return tuple(kept)


def metric_names(results: RunResults, lines: list[Curve]) -> list[str]:
    """The metrics worth a plot, the run's own metric first: the `last_<metric>` columns of a search (else every
    number its trials reported that is not Ray's bookkeeping); every column but `epoch` of a training run; never
    num_parameters, the same at every epoch."""
    if results.kind == "train":
        names = [name for name in results.columns if name != "epoch"]
    else:
        names = [name.removeprefix("last_") for name in results.columns if name.startswith("last_")]
        if not names:
            seen: dict[str, None] = {}
            for line in lines:
                for epoch in line.epochs:
                    seen.update((key, None) for key, value in epoch.items() if is_number(value))
            names = [name for name in seen if name not in RAY_KEYS]
    if results.metric in names:
        names.remove(results.metric)
        names.insert(0, results.metric)
    names = [name for name in names if name not in CONSTANT]
    plotted = [name for name in names if any(is_number(epoch.get(name)) for line in lines for epoch in line.epochs)]
    return plotted


# Parallel coordinates


@dataclass(frozen=True)
class Axis:
    """One axis of the parallel-coordinates view, in the scale it is drawn in.

    `values` has one number per line: the value itself, its log10 for a parameter sampled on a log scale, the
    index of its category for a categorical one. `ticks` pairs positions on that scale with their labels in
    real values. `low` and `high` bound the axis."""

    path: str
    label: str
    values: tuple[float, ...]
    ticks: tuple[tuple[float, str], ...]
    low: float
    high: float
    log: bool = False
    categories: tuple[str, ...] = ()


@dataclass(frozen=True)
class Parallel:
    """The sampled hyperparameters of each trial against its metric: one line per trial that reported it.

    `axes` are the search-space paths in spec order, then the metric (`best_<metric>`). `metric` holds each line's
    metric value (what colours it); `best` is the index of the best trial's line; `left_out` the trials that never
    reported the metric."""

    axes: tuple[Axis, ...]
    trials: tuple[str, ...]
    metric: tuple[float, ...]
    best: int | None
    left_out: tuple[str, ...]
    metric_name: str
    mode: str


def parallel(results: RunResults) -> Parallel | None:
    """The parallel-coordinates view of a search; None for a training run, or a search with no metric, no space or
    no trial that reported the metric."""
    if results.kind != "tune" or not results.metric or not results.space or not results.goal_column:
        return None
    kept = [i for i, row in enumerate(results.rows) if _finite(row.get(results.goal_column))]
    if not kept:
        return None
    reported = set(kept)
    left_out = tuple(row.get("trial_id") or "?" for i, row in enumerate(results.rows) if i not in reported)
    space = _space_entries(results.spec)
    labels = short_names(results.space)
    axes = [
        _parameter_axis(path, label, [results.rows[i].get(path) for i in kept], space.get(path))
        for path, label in zip(results.space, labels, strict=True)
    ]
    metric_values = [float(results.rows[i][results.goal_column]) for i in kept]
    best = kept.index(results.best_row) if results.best_row in kept else None
    axes.append(_metric_axis(results.goal_column, f"best {results.metric}", metric_values, best))
    return Parallel(
        axes=tuple(axes),
        trials=tuple(results.rows[i].get("trial_id") or "?" for i in kept),
        metric=tuple(metric_values),
        best=best,
        left_out=left_out,
        metric_name=results.metric,
        mode=results.mode or "max",
    )


def _space_entries(spec: dict) -> dict[str, dict]:
    """tune.space of the run's spec.resolved.yaml: path -> {kind: args} ({} when the file is absent)."""
    tune = spec.get("tune")
    space = tune.get("space") if isinstance(tune, dict) else None
    if not isinstance(space, dict):
        return {}
    return {path: entry for path, entry in space.items() if isinstance(entry, dict) and len(entry) == 1}


def _parameter_axis(path: str, label: str, values: list, entry: dict | None) -> Axis:
    present = [value for value in values if value is not None]
    if present and len(present) < len(values) and all(_finite(value) for value in present):
        # a parameter of one option of a conditional space: the trials of the others have none (blank in
        # results.csv); their lines cross the axis at "-", below its numbers
        axis = _parameter_axis(path, label, present, entry)
        below = axis.low - 0.12 * (axis.high - axis.low)
        numbers = iter(axis.values)
        placed = tuple(below if value is None else next(numbers) for value in values)
        return replace(axis, values=placed, low=below, ticks=((below, "-"), *axis.ticks))
    kind, args = next(iter(entry.items())) if entry else (None, None)
    numbers = all(_finite(value) for value in values)
    if not numbers or not values:
        listed = args if kind in ("choice", "grid") and isinstance(args, list) else []
        return _category_axis(path, label, values, listed)
    floats = [float(value) for value in values]
    distribution = _distributions().get(kind)
    log = distribution.log if distribution else _spans_decades(floats)
    reach = floats + _space_bounds(kind, args)  # the axis spans the space searched, not only what was sampled
    if log and all(value > 0 for value in reach):
        scaled = [math.log10(value) for value in floats]
        low, high = _bounds([math.log10(value) for value in reach])
        return Axis(path, f"{label} (log)", tuple(scaled), _log_ticks(low, high), low, high, log=True)
    low, high = _bounds(reach)
    distinct = sorted(set(floats))
    if kind in ("choice", "grid") and len(distinct) <= 8:
        ticks = tuple((value, format_value(value, 4)) for value in distinct)
    else:
        ticks = _linear_ticks(low, high)
    return Axis(path, label, tuple(floats), ticks, low, high)


def _distributions() -> dict:
    """The spec's distributions by kind: whether each samples on a log scale, whether its args are [lo, hi, ...]."""
    from specc.spec.space import DISTRIBUTIONS

    return {distribution.kind: distribution for distribution in DISTRIBUTIONS}


def _space_bounds(kind: str | None, args) -> list[float]:
    """The bounds of a ranged distribution (`uniform: [lo, hi]`...); [] for choice, grid, randn or no spec."""
    distribution = _distributions().get(kind)
    if distribution is None or not distribution.ranged or not isinstance(args, list) or len(args) < 2:
        return []
    return [float(bound) for bound in args[:2] if _finite(bound)]


def _category_axis(path: str, label: str, values: list, listed: list) -> Axis:
    """Categories at 0, 1, 2...: in the spec's order when it lists them, else in the order of their labels."""
    names = [format_value(value) for value in listed]
    shown = [format_value(value) for value in values]
    names.extend(sorted(set(shown) - set(names)))
    place: dict[str, float] = {}
    for index, name in enumerate(names):
        place.setdefault(name, float(index))  # a name the spec lists twice sits at its first place
    positions = tuple(place[name] for name in shown)
    low, high = _bounds([0.0, float(len(names) - 1)])
    return Axis(path, label, positions, tuple(enumerate(names)), low, high, categories=tuple(names))


def _metric_axis(path: str, label: str, values: list[float], best: int | None) -> Axis:
    """The metric, with the best trial's value marked on its axis (other ticks too close to it left out)."""
    low, high = _bounds(values)
    ticks = list(_linear_ticks(low, high))
    if best is not None:
        mark = values[best]
        ticks = [tick for tick in ticks if abs(tick[0] - mark) > 0.08 * (high - low)]
        ticks.append((mark, f"★ {format_value(mark, 4)}"))
        ticks.sort()
    return Axis(path, label, tuple(values), tuple(ticks), low, high)


def _bounds(values: list[float]) -> tuple[float, float]:
    """The range of the values; a single value gets room either side, so that its line sits mid-axis. Finite
    bounds whose span is finite too, whatever the values (1e308 and -1e308 span more than a float holds)."""
    low, high = max(min(values), -FAR), min(max(values), FAR)
    if high - low <= 1e-12 * max(1.0, abs(high)):
        pad = abs(low) * 0.5 or 0.5
        return max(low - pad, -FAR), min(high + pad, FAR)
    return low, high


def _spans_decades(values: list[float]) -> bool:
    """With no spec to tell: positive values spread over two decades or more read better on a log scale."""
    return all(value > 0 for value in values) and max(values) / min(values) >= 100


def _linear_ticks(low: float, high: float, count: int = 5) -> tuple[tuple[float, str], ...]:
    """Round numbers between low and high, about `count` of them."""
    span = high - low
    if not span > 0 or not math.isfinite(span):
        return ((low, format_value(low, 4)), (high, format_value(high, 4)))
    raw = span / (count - 1)
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    first = math.ceil(low / step - 1e-9)
    ticks = []
    index = first
    while index * step <= high + step * 1e-9:
        value = round(index * step, 12)
        ticks.append((value, format_value(value, 4)))
        index += 1
    return tuple(ticks)


def _log_ticks(low: float, high: float) -> tuple[tuple[float, str], ...]:
    """Positions in log10 between low and high, labelled with real values: decades when there are three or more,
    else 1-2-5 steps (then finer), else the two ends."""
    decades = range(math.floor(low) - 1, math.ceil(high) + 1)
    for multiples, enough in (((1,), 3), ((1, 2, 5), 2), ((1, 1.5, 2, 3, 5, 7), 2)):
        values = sorted(m * 10.0**exponent for exponent in decades for m in multiples if -324 < exponent < 308)
        inside = [v for v in values if 0 < v < math.inf and low - 1e-9 <= math.log10(v) <= high + 1e-9]
        if len(inside) >= enough:
            return tuple((math.log10(v), format_value(v, 3)) for v in inside)
    return tuple((position, format_value(10.0 ** min(max(position, -323), 308), 3)) for position in (low, high))


def _finite(value) -> bool:
    return is_number(value) and math.isfinite(value)
