"""A finished run, read back from its run directory (SPEC §8): the table of trials or epochs, the best one.

A compiled script leaves in `<run.storage_path>/<run.name>/`:

- with `tune`: `results.csv`, one row per trial (`trial_id`, `status`, `epochs`, one column per search-space
  path, `best_<tune.metric>`, `last_<metric>`...); `best.json` (the best trial's id, config, metrics and
  checkpoint, with `metric` and `mode`); `best.yaml` (a single-trial spec with the best values applied).
  A multi-objective search (`metric` and `mode` lists) has no `best_` column but `pareto` (true for the trials on
  the Pareto front), and best.json's `front` lists those trials; its top level is the front's first member.
- without: `results.csv`, one row per epoch (`epoch`, `train_loss`, `val_loss`, `val_<metric>`...), and
  `best.json` (the best epoch's metrics and checkpoint; best by `run.checkpoint_score`, else the last epoch).

Cells are JSON where they are not plain numbers (`"[128, 64]"`); an empty cell is a value the trial never
reported. Plain csv, json and yaml only: reading a run never imports ray, torch, tensorflow or pandas.

Epochs count from 1 in every output, as the progress lines and Ray's training_iteration count them; best.json says
so (`"epochs_counted_from": 1`). A run directory an earlier specc wrote counted them from 0: its best.json has no
`epochs_counted_from`, and a training run's results.csv starts at epoch 0. read_run renumbers such a run's epochs
(results.csv's `epoch` column, best.json's `metrics.epoch` and `diverged` epochs, its front's, and the epochs of
its trials' result.json files that history.py reads), so that every command shows one numbering whichever specc
wrote the run (see epoch_shift).
"""

from __future__ import annotations

import json
import math
import os
import shlex
from collections import Counter
from dataclasses import dataclass, field

from specc.read.terminal import csv_text, json_text
from specc.results.run_files import RunFiles, load_json, plain, printable
from specc.spec.errors import Problem, UsageError

FORMATS = ("text", "csv", "json")
TEXT_COLUMNS = ("trial_id", "status")  # written as they are, never decoded
TRIAL_COLUMNS = ("trial_id", "status", "epochs", "steps", "pareto")  # steps: an objective's reports
STATUS_ORDER = ("completed", "stopped", "error")
PYTHON_WORDS = {"True": True, "False": False, "None": None, "nan": math.nan, "inf": math.inf, "-inf": -math.inf}
WIDEST_CELL = 24  # longer table cells end in "..."
RESULTS, BEST, SPEC = "results.csv", "best.json", "spec.resolved.yaml"
COUNTED_FROM = "epochs_counted_from"  # best.json's: 1 (an earlier specc, which counted from 0, wrote none)


@dataclass(frozen=True)
class RunResults:
    """What a run directory says about its run.

    `kind` is "tune" (one row per trial) or "train" (one row per epoch). Each row maps a column of
    results.csv to its decoded value (None where the cell is empty). `best` is best.json as written ({} when
    there is none), its epochs counted from 1 as the rows' are (see epoch_shift); `best_row` the index in `rows` of
    the best trial or epoch. `metric` and `mode` say what "best" means; both are None for a training run that
    keeps its last epoch. `best_spec` is the path of best.yaml when the run wrote one. `spec` is
    spec.resolved.yaml as plain data ({} when absent or unreadable).
    `objectives` holds the (metric, mode) pairs of a multi-objective search (metric and mode are then None) and
    `front` the indices in `rows` of its Pareto front: results.csv's `pareto` column, else computed from the
    `last_<metric>` columns (pareto.py), best.json's first member first.
    `warnings` holds what is wrong with the run's files (W307, W308) and where best.json and results.csv disagree
    (W309): read_run's, then those of the trial files history.py reads when the curves are drawn.
    `epoch_shift` is what read_run added to the epoch numbers the files hold, so that they count from 1: 1 for a
    run an earlier specc wrote, 0 for one that counted from 1 already; None for a search whose files do not say
    (no best.json): history.py then renumbers the trials that reported an epoch 0.
    """

    run_dir: str
    kind: str
    columns: tuple[str, ...]
    rows: tuple[dict, ...]
    best: dict
    best_row: int | None
    metric: str | None
    mode: str | None
    best_spec: str | None = None
    spec: dict = field(default_factory=dict, compare=False)
    objectives: tuple[tuple[str, str], ...] = ()
    front: tuple[int, ...] = ()
    warnings: list[Problem] = field(default_factory=list, compare=False)
    epoch_shift: int | None = 0

    @property
    def space(self) -> tuple[str, ...]:
        """The search-space paths of a Tune run, in spec order (no columns for a training run)."""
        if self.kind != "tune":
            return ()
        return tuple(c for c in self.columns if c not in TRIAL_COLUMNS and not c.startswith(("best_", "last_")))

    @property
    def goal_column(self) -> str | None:
        """The column that ranks rows: `best_<metric>` for trials, the metric itself for epochs."""
        if self.metric is None:
            return None
        return f"best_{self.metric}" if self.kind == "tune" else self.metric


# Reading


def read_run(run_dir: str | os.PathLike) -> RunResults:
    """Reads a run directory. What is wrong with one of its files is a warning in `warnings` (the file is left
    out, or the rows that can be read are kept); only a run that cannot be read at all, no directory or no
    readable results.csv with a header, is a UsageError."""
    run_dir = os.fspath(run_dir)
    warnings: list[Problem] = []
    files = RunFiles(_run_directory(run_dir), warnings)
    columns, rows = _read_table(files)
    kind = "tune" if "trial_id" in columns else "train"
    best = read_best(files)
    shift = epoch_shift(kind, columns, rows, best)
    rows, best = _renumbered(kind, rows, best, shift or 0)
    spec = read_resolved_spec(files)
    objectives = _objectives(kind, best, spec)
    metric, mode = (None, None) if objectives else _goal(kind, best, spec)  # several: no one metric ranks the rows
    results = RunResults(
        run_dir=run_dir,
        kind=kind,
        columns=tuple(columns),
        rows=tuple(rows),
        best=best,
        best_row=_best_row(kind, rows, best, metric, mode),
        metric=metric,
        mode=mode,
        best_spec=files.path("best.yaml") if files.exists("best.yaml") else None,
        spec=spec,
        warnings=warnings,
        objectives=objectives,
        front=_front(rows, objectives, best),
        epoch_shift=shift,
    )
    warnings.extend(disagreements(results))
    return results


def _run_directory(run_dir: str) -> str:
    shown = printable(run_dir)
    try:
        if not os.path.exists(run_dir):
            raise UsageError(f"{shown}: no such run directory")
    except ValueError:  # a NUL in the path
        raise UsageError(f"{shown}: not a path: it holds a NUL character") from None
    if not os.path.isdir(run_dir):
        raise UsageError(f"{shown}: not a directory; give the run directory, <run.storage_path>/<run.name>")
    return run_dir


def _read_table(files: RunFiles) -> tuple[list[str], list[dict]]:
    """results.csv's header and decoded rows. Rows that cannot be read are warnings; a results.csv that is missing,
    unreadable or has no header naming trial_id or epoch is a UsageError (there is no run to show)."""
    path, before = files.path(RESULTS), len(files.warnings)
    table = files.table(RESULTS)
    if table is None:
        if len(files.warnings) == before:
            raise UsageError(
                f"{printable(files.run_dir)}: no results.csv: the run has not finished, or this is not a run directory"
            )
        problem = files.warnings.pop()
        raise UsageError(f"{problem.where()}: {problem.message.removesuffix('; left out')}")
    header, rows = table
    if not header:
        raise UsageError(f"{printable(path)}:1: no header row")
    if "trial_id" not in header and "epoch" not in header:
        neither = "the header names neither trial_id (a Tune run) nor epoch (a training run)"
        raise UsageError(f"{printable(path)}:1: {neither}")
    return header, [_decode_row(header, cells) for _, cells in rows]


def epoch_shift(kind: str, columns: list[str], rows: list[dict], best: dict) -> int | None:
    """What to add to the epoch numbers of a run directory for them to count from 1: 0 when best.json says they
    do (epochs_counted_from), else 1 for a run an earlier specc wrote, which counted from 0: a training run whose
    results.csv starts at epoch 0, or a search (its trials report epochs: an `epochs` column) with a best.json. None
    for a search without one (every trial errored): the trials' own reports say (history.py). An objective's
    search reports steps (Tune's training_iteration, from 1), and what it calls `epoch` is its own: never renumbered."""
    if best.get(COUNTED_FROM) == 1:
        return 0
    if kind == "train":
        return 1 if rows and is_number(rows[0].get("epoch")) and rows[0]["epoch"] == 0 else 0
    if "epochs" not in columns:
        return 0
    return 1 if best else None


def _renumbered(kind: str, rows: list[dict], best: dict, shift: int) -> tuple[list[dict], dict]:
    """The rows and best.json with `shift` added to each epoch number they hold (see epoch_shift)."""
    if not shift:
        return rows, best
    if kind == "train":
        rows = [{**row, "epoch": _later(row.get("epoch"), shift)} if "epoch" in row else row for row in rows]
    best = dict(_renumbered_member(best, shift))
    if isinstance(best.get("front"), list):
        best["front"] = [_renumbered_member(member, shift) for member in best["front"]]
    where = best.get("diverged")
    if isinstance(where, dict):  # a training run: the epoch it stopped at
        best["diverged"] = _renumbered_member(where, shift, "epoch")
    elif isinstance(where, list):  # a search: each diverged trial's
        best["diverged"] = [_renumbered_member(one, shift, "epoch") for one in where]
    return rows, {**best, COUNTED_FROM: 1}


def _renumbered_member(member, shift: int, key: str = "metrics"):
    """A best.json object with `shift` added to its metrics' epoch (key "metrics") or to its own (key "epoch")."""
    if not isinstance(member, dict):
        return member
    if key == "epoch":
        return {**member, "epoch": _later(member.get("epoch"), shift)} if "epoch" in member else member
    metrics = member.get("metrics")
    if not isinstance(metrics, dict) or "epoch" not in metrics:
        return member
    return {**member, "metrics": {**metrics, "epoch": _later(metrics["epoch"], shift)}}


def _later(epoch, shift: int):
    """An epoch number plus `shift`; anything else (a cell that is no number) as it is."""
    finite = isinstance(epoch, int) or (isinstance(epoch, float) and math.isfinite(epoch))
    return epoch + shift if finite and not isinstance(epoch, bool) else epoch


def _decode_row(header: list[str], cells: list[str]) -> dict:
    return {
        name: (cell or None) if name in TEXT_COLUMNS else decode_cell(cell)
        for name, cell in zip(header, cells, strict=True)
    }


def decode_cell(text: str):
    """A cell's value: JSON where it parses (numbers, lists, quoted strings), Python's spelling of True, None,
    nan and inf, else the text itself; None for an empty cell. Never deeper than run_files.MAX_DEPTH (a deeper
    cell is text), never an integer past a float's range (its digits)."""
    if text == "":
        return None
    try:
        return load_json(text)
    except ValueError:
        return PYTHON_WORDS.get(text, text)


# What best.json's keys must hold; a key holding something else is left out, with a warning.
BEST_KEYS = {
    "trial_id": (lambda value: isinstance(value, str), "a string"),
    "metric": (
        lambda value: isinstance(value, str) or (isinstance(value, list) and all(isinstance(v, str) for v in value)),
        "a string or a list of strings",
    ),
    "mode": (
        lambda value: value in ("min", "max") or (isinstance(value, list) and all(v in ("min", "max") for v in value)),
        '"min", "max" or a list of them',
    ),
    "config": (lambda value: isinstance(value, dict), "an object"),
    "metrics": (lambda value: isinstance(value, dict), "an object"),
    "checkpoint": (lambda value: value is None or isinstance(value, str), "a path or null"),
    "ended_by": (lambda value: value is None or isinstance(value, dict), "an object or null"),  # stop.all_when
}


def read_best(files: RunFiles) -> dict:
    """best.json as written, less what it cannot mean ({} when it is absent or is not a JSON object)."""
    best = files.json(BEST)
    if best is None:
        return {}
    if not isinstance(best, dict):
        files.warn("W308", BEST, f"holds {_json_kind(best)}, not a JSON object; left out")
        return {}
    for key, (fits, wanted) in BEST_KEYS.items():
        if key in best and not fits(best[key]):
            files.warn("W308", BEST, f'"{key}" holds {_json_kind(best[key])}, not {wanted}; left out')
            del best[key]
    return best


def _json_kind(value) -> str:
    if isinstance(value, (dict, list)):
        return "an object" if isinstance(value, dict) else "a list"
    return "null" if value is None else format_value(value)[:40]


def read_resolved_spec(files: RunFiles) -> dict:
    """spec.resolved.yaml as plain data, read by specc's own YAML reader (bounded in size, depth and aliases):
    {} when absent or unreadable, since it only fills in what best.json lacks."""
    from specc.read.document import MAX_BYTES, DocumentError, parse_text

    text = files.text(SPEC, MAX_BYTES)
    if text is None:
        return {}
    try:
        spec, _ = parse_text(text, files.path(SPEC))
    except DocumentError as error:
        first = error.problems[0]
        files.warn("W308", SPEC, f"not YAML specc reads: {first.message}; left out", first.line)
        return {}
    if not isinstance(spec, dict):
        files.warn("W308", SPEC, "not a mapping of keys to values; left out")
        return {}
    return plain(spec)


def _goal(kind: str, best: dict, spec: dict) -> tuple[str | None, str | None]:
    """(metric, mode) that picks the best row: best.json's, else the resolved spec's."""
    if isinstance(best.get("metric"), str) and best["metric"]:
        return best["metric"], best.get("mode") if best.get("mode") in ("min", "max") else "max"
    run = spec.get("run")
    section = spec.get("tune") if kind == "tune" else run.get("checkpoint_score") if isinstance(run, dict) else None
    if isinstance(section, dict) and isinstance(section.get("metric"), str) and section["metric"]:
        mode = section.get("mode")
        return section["metric"], mode if mode in ("min", "max") else "max"
    return None, None


def _section(spec: dict, name: str) -> dict:
    section = spec.get(name)
    return section if isinstance(section, dict) else {}


def _objectives(kind: str, best: dict, spec: dict) -> tuple[tuple[str, str], ...]:
    """The (metric, mode) pairs of a multi-objective search: best.json's lists, else the resolved spec's."""
    if kind != "tune":
        return ()
    for source in (best, _section(spec, "tune")):
        metric, mode = source.get("metric"), source.get("mode")
        lists = isinstance(metric, list) and isinstance(mode, list) and len(metric) == len(mode) and metric
        if lists and all(isinstance(m, str) for m in metric) and all(m in ("min", "max") for m in mode):
            return tuple(zip(metric, mode, strict=True))
    return ()


def _front(rows: list[dict], objectives: tuple[tuple[str, str], ...], best: dict) -> tuple[int, ...]:
    """The rows on the Pareto front: those results.csv marks (`pareto`), else the front of the `last_` columns;
    in the order best.json lists them: best first by the first metric, then by the next (ties in row order)."""
    if not objectives:
        return ()
    if any("pareto" in row for row in rows):
        front = [i for i, row in enumerate(rows) if row.get("pareto") is True]
    else:
        front = computed_front(rows, objectives)
    signs = [-1 if mode == "max" else 1 for _, mode in objectives]

    def order(i: int) -> tuple:
        return [
            sign * _value(rows[i].get(f"last_{metric}")) for sign, (metric, _) in zip(signs, objectives, strict=True)
        ], i

    return tuple(sorted(front, key=order))


def _value(value) -> float:
    return value if is_number(value) and not math.isnan(value) else math.inf


def computed_front(rows, objectives: tuple[tuple[str, str], ...]) -> list[int]:
    """The Pareto front of the rows' `last_<metric>` values (a diverged trial is on none)."""
    from specc.results.pareto import pareto_front

    points = [
        None if row.get("status") == "diverged" else [row.get(f"last_{metric}") for metric, _ in objectives]
        for row in rows
    ]
    return pareto_front(points, [mode for _, mode in objectives])


def _best_row(kind: str, rows: list[dict], best: dict, metric: str | None, mode: str | None) -> int | None:
    """best.json's trial (or epoch) when it names one that is in the table, else the best by the metric."""
    index = _named_row(kind, rows, best)
    if index is not None:
        return index
    if best.get("status") == "diverged":  # no epoch (or trial) before the loss became NaN: there is no best
        return None
    if metric is None:
        return len(rows) - 1 if kind == "train" and rows else None
    ranked = _ranked(rows, f"best_{metric}" if kind == "tune" else metric, mode)
    return ranked[0] if ranked else None


def _named_row(kind: str, rows: list[dict] | tuple[dict, ...], best: dict) -> int | None:
    """The index of the row best.json names (its trial_id, or its metrics' epoch), None when it names none."""
    key, wanted = ("trial_id", best.get("trial_id")) if kind == "tune" else ("epoch", best_metrics(best).get("epoch"))
    if wanted is None:
        return None
    return next((index for index, row in enumerate(rows) if row.get(key) == wanted), None)


def disagreements(results: RunResults) -> list[Problem]:
    """W309 where best.json and results.csv disagree: best.json names a trial (or epoch) results.csv lacks, gives
    its metric another value, or results.csv ranks another row strictly better. best.json's pick stays the best
    row (it is what the run kept, with its checkpoint); the warning says both."""
    noun = "trial" if results.kind == "tune" else "epoch"
    wanted = results.best.get("trial_id") if results.kind == "tune" else best_metrics(results.best).get("epoch")
    if wanted is None:
        return []
    shown = format_value(wanted)
    index = _named_row(results.kind, results.rows, results.best)
    if index is None:
        return [_disagree(results, f"best.json names {noun} {shown} as the best, but results.csv has no such {noun}")]
    column, metric = results.goal_column, results.metric
    if results.objectives and any("pareto" in row for row in results.rows):
        computed = set(computed_front(results.rows, results.objectives))
        if computed != set(results.front):
            ids = lambda indices: ", ".join(format_value(results.rows[i].get("trial_id")) for i in sorted(indices))  # noqa: E731
            message = (
                f"results.csv marks trials {ids(results.front) or 'none'} as the Pareto front, but their last "
                f"values put {ids(computed) or 'none'} on it"
            )
            return [_disagree(results, message)]
    if column is None or metric is None:
        return []
    found = []
    in_csv, in_json = results.rows[index].get(column), best_metrics(results.best).get(metric)
    if is_number(in_csv) and is_number(in_json) and not _same(in_csv, in_json):
        found.append(
            f"best.json gives {noun} {shown} {metric} {format_value(in_json, 10)}, "
            f"but results.csv's {column} is {format_value(in_csv, 10)}"
        )
    ranked = _ranked(results.rows, column, results.mode)
    if ranked and ranked[0] != index and _better(results.rows[ranked[0]].get(column), in_csv, results.mode):
        top = results.rows[ranked[0]]
        found.append(
            f"best.json names {noun} {shown} ({column} {format_value(in_csv, 10)}) as the best, but results.csv "
            f"has {noun} {format_value(top.get('trial_id' if noun == 'trial' else 'epoch'))} better "
            f"({format_value(top.get(column), 10)}, mode {results.mode})"
        )
    return [_disagree(results, message) for message in found]


def _disagree(results: RunResults, message: str) -> Problem:
    return Problem("W309", printable(message), printable(os.path.join(results.run_dir, BEST)))


def _same(a, b) -> bool:
    return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-9, abs_tol=0.0)


def _better(value, than, mode: str | None) -> bool:
    if not is_number(than) or math.isnan(than):
        return True
    return value > than if mode == "max" else value < than


def best_metrics(best: dict) -> dict:
    metrics = best.get("metrics")
    return metrics if isinstance(metrics, dict) else {}


def _ranked(rows: tuple[dict, ...] | list[dict], column: str, mode: str | None) -> list[int]:
    """Indices of the rows with a number in `column`, best first (ties in row order)."""
    scored = [(i, row.get(column)) for i, row in enumerate(rows) if is_number(row.get(column))]
    scored = [(i, value) for i, value in scored if not math.isnan(value)]
    sign = -1 if mode == "max" else 1
    return [i for i, _ in sorted(scored, key=lambda item: (sign * item[1], item[0]))]


def is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


# Formatting


def render(results: RunResults, format: str = "text") -> str:
    """The run in one of FORMATS: "text" (table + best trial), "csv" (results.csv normalised) or "json"."""
    formats = {"text": format_text, "csv": format_csv, "json": format_json}
    if format not in formats:
        raise UsageError(f"unknown format {format!r}; choose one of {', '.join(FORMATS)}")
    return formats[format](results)


def format_text(results: RunResults, max_rows: int | None = None) -> str:
    """A title line, the table (best row marked `*`) and the best-trial block. With `max_rows`, only the best
    `max_rows` trials (the last epochs of a training run) are listed, in their own order: a one-screen summary."""
    shown = _shown_rows(results, max_rows)
    text = f"{_title(results)}\n\n{format_table(results, shown)}"
    if len(shown) < len(results.rows):
        noun = "trials" if results.kind == "tune" else "epochs"
        everything = printable(f"specc results {shlex.quote(results.run_dir)}")
        text += f"({len(shown)} of {len(results.rows)} {noun} shown; all of them: {everything})\n"
    return f"{text}\n{format_best(results)}"


def _title(results: RunResults) -> str:
    if results.kind == "train":
        where = results.best.get("diverged")
        diverged = f" (diverged at epoch {printable(str(where.get('epoch')))})" if isinstance(where, dict) else ""
        rows = len(results.rows)
        return f"{printable(results.run_dir)}: {rows} epoch{'s' * (rows != 1)}{diverged}"
    statuses = Counter(printable(row.get("status") or "unknown") for row in results.rows)  # one pass: linear
    order = [*STATUS_ORDER, *sorted(set(statuses) - set(STATUS_ORDER))]
    counts = ", ".join(f"{statuses[status]} {status}" for status in order if status in statuses)
    trials = len(results.rows)
    title = f"{printable(results.run_dir)}: {trials} trial{'s' * (trials != 1)}"
    return title + (f" ({counts})" if counts else "")


def _shown_rows(results: RunResults, max_rows: int | None) -> list[int]:
    everything = list(range(len(results.rows)))
    if max_rows is None or len(everything) <= max_rows:
        return everything
    if results.kind == "tune" and results.goal_column:
        preferred = _ranked(results.rows, results.goal_column, results.mode)
        ranked = set(preferred)
        preferred += [i for i in everything if i not in ranked]
    else:
        preferred = everything[::-1]
    limit = max(max_rows, 1)
    keep = set(preferred[:limit])
    if results.best_row is not None and results.best_row not in keep:
        keep.discard(preferred[limit - 1])
        keep.add(results.best_row)
    return sorted(keep)


def format_table(results: RunResults, shown: list[int] | None = None) -> str:
    """The rows (all, or those at `shown`) as aligned columns: numbers right, text left, the best row marked `*`.
    Search-space paths are shortened to their last distinct part (`training.optimizer.lr` -> `lr`)."""
    shown = list(range(len(results.rows))) if shown is None else shown
    headers = _headers(results)
    body = [[_cell(name, results.rows[i].get(name)) for name in results.columns] for i in shown]
    right = [_all_numbers(results.rows[i].get(name) for i in shown) for name in results.columns]
    widths = [max([len(header), *(len(row[c]) for row in body)]) for c, header in enumerate(headers)]
    lines = [_line(" ", headers, widths, right), _line(" ", ["-" * w for w in widths], widths, right)]
    lines += [
        _line("*" if i == results.best_row else " ", row, widths, right) for i, row in zip(shown, body, strict=True)
    ]
    return "".join(line.rstrip() + "\n" for line in lines)


def _all_numbers(values) -> bool:
    return all(is_number(value) or value is None for value in values)


def _headers(results: RunResults) -> list[str]:
    short = dict(zip(results.space, short_names(results.space), strict=True))
    return [printable(short.get(name, name)) for name in results.columns]


def _line(mark: str, cells: list[str], widths: list[int], right: list[bool]) -> str:
    padded = (cell.rjust(w) if r else cell.ljust(w) for cell, w, r in zip(cells, widths, right, strict=True))
    return f"{mark} " + "  ".join(padded)


def _cell(column: str, value) -> str:
    text = format_value(value)
    if column in TEXT_COLUMNS or len(text) <= WIDEST_CELL:
        return text
    return text[: WIDEST_CELL - 3] + "..."


def format_value(value, digits: int = 4) -> str:
    """A value as the table shows it: numbers to `digits` significant digits, lists and maps inline, `-` for
    a value never reported."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:.{digits}g}"
    if isinstance(value, list):
        return "[" + ", ".join(format_value(item, digits) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{printable(key)}: {format_value(item, digits)}" for key, item in value.items()) + "}"
    return printable(str(value))


def short_names(paths: tuple[str, ...] | list[str]) -> list[str]:
    """The shortest tail of each dotted path that no other path ends in, never starting at a list index:
    (`training.optimizer.lr`, `model.hidden_sizes.0`) -> (`lr`, `hidden_sizes.0`)."""
    split = [path.split(".") for path in paths]
    ends = Counter(tuple(parts[-size:]) for parts in split for size in range(1, len(parts) + 1))  # in one pass
    return [_shortest_tail(parts, ends) for parts in split]


def _shortest_tail(parts: list[str], ends: Counter) -> str:
    """The shortest tail of `parts` that only it ends in (`ends` counts every path's tails)."""
    for size in range(1, len(parts) + 1):
        tail = tuple(parts[-size:])
        if not tail[0].isdigit() and ends[tail] == 1:
            return ".".join(tail)
    return ".".join(parts)


def format_best(results: RunResults) -> str:
    """The best trial (or epoch): its id, the metric, its config, all its metrics, the checkpoint, and how to
    retrain it from best.yaml."""
    if results.best_row is None:
        what = f"reported {printable(results.metric)}" if results.metric else "finished"
        what = "stayed finite: the run diverged" if results.best.get("status") == "diverged" else what
        return f"no best {'trial' if results.kind == 'tune' else 'epoch'}: none {what}\n"
    row = results.rows[results.best_row]
    if results.objectives:
        return format_front(results)
    lines = [_best_headline(results, row)]
    lines += [f"  {printable(path)}: {format_value(value, 6)}" for path, value in best_config(results, row).items()]
    metrics = best_trial_metrics(results, row)
    if metrics:
        shown = (f"{printable(name)} {format_value(value)}" for name, value in metrics.items())
        lines.append("  metrics: " + ", ".join(shown))
    if "checkpoint" in results.best:
        lines.append(f"  checkpoint: {format_value(results.best['checkpoint'] or 'none kept')}")
    if results.best_spec:
        lines.append(printable(f"  retrain it: specc run {shlex.quote(results.best_spec)}"))
    return "".join(line + "\n" for line in lines)


def objectives_text(results: RunResults) -> str:
    """`val_accuracy (max) and num_parameters (min)`."""
    return " and ".join(f"{printable(metric)} ({mode})" for metric, mode in results.objectives)


def format_front(results: RunResults) -> str:
    """A multi-objective search's Pareto front: each member's objectives and config (best.json's first member,
    which best.yaml retrains, first), its checkpoint, and how to retrain it."""
    count = len(results.front)
    lines = [
        f"Pareto front: {count} trial{'s' * (count != 1)} (pareto true), by their last {objectives_text(results)}; "
        "no other trial is as good in both and better in one"
    ]
    short = dict(zip(results.space, short_names(results.space), strict=True))
    for index in results.front:
        row = results.rows[index]
        values = ", ".join(f"{printable(m)} {format_value(row.get(f'last_{m}'))}" for m, _ in results.objectives)
        config = ", ".join(f"{printable(short[p])} {format_value(row.get(p))}" for p in results.space if p in row)
        mark = "*" if index == results.best_row else " "
        lines.append(f"{mark} trial {format_value(row.get('trial_id'))}: {values}" + (f"; {config}" if config else ""))
    if "checkpoint" in results.best:
        lines.append(f"  checkpoint (*): {format_value(results.best['checkpoint'] or 'none kept')}")
    if results.best_spec:
        first = printable(results.objectives[0][0])
        lines.append(
            printable(f"  retrain * (the front's first by {first}): specc run {shlex.quote(results.best_spec)}")
        )
    return "".join(line + "\n" for line in lines)


def _best_headline(results: RunResults, row: dict) -> str:
    if results.metric is None:
        return f"last epoch: {format_value(row.get('epoch'))} (no run.checkpoint_score: the last epoch is kept)"
    value, metric = format_value(best_value(results, row)), printable(results.metric)
    if results.kind == "train":
        return f"best epoch: {format_value(row.get('epoch'))}, {metric} {value} ({results.mode})"
    epoch = best_metrics(results.best).get("epoch")
    at = f", at epoch {format_value(epoch)}" if epoch is not None else ""
    return f"best trial: {format_value(row.get('trial_id'))}, {metric} {value} ({results.mode}{at})"


def best_value(results: RunResults, row: dict):
    """The best row's value of the metric that ranks the rows (its results.csv cell, else best.json's)."""
    reported = row.get(results.goal_column) if results.goal_column else None
    return best_metrics(results.best).get(results.metric) if reported is None else reported


def best_config(results: RunResults, row: dict) -> dict:
    if results.kind != "tune":
        return {}
    return results.best.get("config") or {path: row.get(path) for path in results.space}


def best_trial_metrics(results: RunResults, row: dict) -> dict:
    """An epoch's row; a trial's metrics at its best epoch (best.json), else at its last (the `last_` columns)."""
    if results.kind == "train":
        metrics = row
    else:
        last = {name.removeprefix("last_"): row[name] for name in results.columns if name.startswith("last_")}
        metrics = best_metrics(results.best) or last
    return {name: value for name, value in metrics.items() if name != "epoch"}


def format_csv(results: RunResults) -> str:
    """results.csv normalised the way the compiled scripts write it: lists and maps as JSON, strings as they are,
    numbers and booleans as Python spells them, empty cells for values never reported, `\\n` line ends. A control
    character in a value is written escaped (terminal.csv_text): every row is one line of the terminal."""
    rows = ([encode_cell(row.get(name)) for name in results.columns] for row in results.rows)
    return csv_text([list(results.columns), *rows])


def encode_cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, (list, dict)):
        return json.dumps(value)
    return value if isinstance(value, str) else repr(value)


def format_json(results: RunResults) -> str:
    """{"run_dir", "kind", "metric", "mode", "columns", "rows", "best_row", "best", "best_spec"}: `rows` as
    column -> value (null when never reported), `best` is best.json as written (epochs from 1, as `rows`: a run an
    earlier specc wrote is renumbered, and says epochs_counted_from 1). Strict JSON: nan and
    infinities are the strings "nan", "inf", "-inf"; a character a terminal would act on is a JSON escape
    (terminal.json_text)."""
    document = {
        "run_dir": results.run_dir,
        "kind": results.kind,
        "metric": results.metric,
        "mode": results.mode,
        **(
            {"objectives": [list(pair) for pair in results.objectives], "front": list(results.front)}
            if results.objectives
            else {}
        ),
        "columns": list(results.columns),
        "rows": list(results.rows),
        "best_row": results.best_row,
        "best": results.best,
        "best_spec": results.best_spec,
    }
    return json_text(_strict(document), indent=2, allow_nan=False) + "\n"


def _strict(value):
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, dict):
        return {key: _strict(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_strict(item) for item in value]
    return value
