"""The one screen `specc run` ends with: what was best, its metrics, and where the artefacts are."""

from __future__ import annotations

import os
import shlex

from specc.read.files import list_directory
from specc.read.terminal import Styled, one_line
from specc.results.run_dir import RunResults
from specc.spec.errors import printable

ARTEFACTS = ("results.csv", "best.json", "best.yaml", "script.py", "specc_runtime.py", "spec.resolved.yaml", "ray.log")


def summary(results: RunResults, seconds: float, color: bool = False) -> str:
    """The screen as printed: every line escaped (a run directory, a metric or a trial id holds what a stranger
    wrote), then the headline in bold on a terminal."""
    headline, *rest = _lines(results, seconds)
    headline = f"\033[1m{one_line(headline)}\033[0m" if color else one_line(headline)
    return Styled("\n".join([headline, *(one_line(line) for line in rest)]) + "\n")


def _lines(results: RunResults, seconds: float) -> list[str]:
    name = os.path.basename(results.run_dir.rstrip("/"))
    best = results.best
    # diverged: a loss became NaN or infinite (in a search: in every trial)
    ended = "diverged after" if best.get("status") == "diverged" else "done in"
    lines = [f"{name}: {ended} {seconds:.1f} s", ""]
    where = best.get("diverged")
    if isinstance(where, dict):  # a training run: the epoch it stopped at
        lines.append(f"  diverged    at epoch {where.get('epoch')}: {where.get('metric')} is NaN or infinite")
    metrics = {key: value for key, value in (best.get("metrics") or {}).items() if key != "epoch"}
    shown = ", ".join(f"{key} {_number(value)}" for key, value in metrics.items())
    if results.kind == "tune":
        statuses: dict[str, int] = {}
        for row in results.rows:
            statuses[str(row.get("status"))] = statuses.get(str(row.get("status")), 0) + 1
        counts = ", ".join(f"{count} {status}" for status, count in sorted(statuses.items()))
        lines.append(f"  trials      {len(results.rows)} ({counts})")
        end = best.get("ended_by")
        if isinstance(end, dict):  # stop.all_when ended the search
            condition, trial, reports = (
                printable(str(end.get(key))) for key in ("condition", "trial_id", "training_iteration")
            )
            lines.append(
                f"  ended by    stop.all_when {condition}: trial {trial} met it at training_iteration {reports}"
            )
        if results.objectives and results.front:
            ids = ", ".join(str(results.rows[i].get("trial_id")) for i in results.front)
            lines.append(f"  front       {len(results.front)} trials (Pareto, by their last values): {ids}")
        if best.get("trial_id"):
            config = ", ".join(f"{key}={_number(value)}" for key, value in (best.get("config") or {}).items())
            label = "front's 1st" if results.objectives else "best trial"  # best.yaml's: best by the first metric
            lines.append(f"  {label:<11} {best['trial_id']}" + (f" ({config})" if config else ""))
    elif best.get("metrics"):
        lines.append(
            f"  best epoch  {best['metrics'].get('epoch')}" + (f" by {results.metric}" if results.metric else "")
        )
    if shown:
        lines.append(f"  metrics     {shown}")
    there = [name for name in ARTEFACTS if os.path.exists(os.path.join(results.run_dir, name))]
    lines.append(f"  run dir     {results.run_dir}" + (f" ({', '.join(there)})" if there else ""))
    if best.get("checkpoint"):
        lines.append(f"  checkpoint  {best['checkpoint']}")
    lines.extend(f"  {name:<11} {command}" for name, command in trackers(results.run_dir))
    quoted = shlex.quote(results.run_dir)  # the commands can be pasted into a shell, whatever the path holds
    evaluate = f"; specc evaluate {quoted}" if best.get("checkpoint") else ""  # a checkpoint to measure
    lines.append(f"  more        specc results {quoted}; specc report {quoted}{evaluate}")
    return lines


def trackers(run_dir: str) -> list[tuple[str, str]]:
    """(tracker, the command that opens what run.callbacks wrote) for each tracker that wrote in the run directory."""
    found = []
    trials = [name for name in list_directory(run_dir, root=run_dir) if name.startswith("trial_")]
    top = [run_dir] + [os.path.join(run_dir, name) for name in trials]
    if any(name.startswith("events.out.tfevents") for directory in top for name in _names(directory, run_dir)):
        found.append(("tensorboard", f"tensorboard --logdir {shlex.quote(run_dir)}"))
    if os.path.exists(os.path.join(run_dir, "mlflow.db")):
        store = shlex.quote(f"sqlite:///{os.path.join(run_dir, 'mlflow.db')}")
        found.append(("mlflow", f"mlflow ui --backend-store-uri {store}"))
    if any(name.startswith("offline-run-") for name in _names(os.path.join(run_dir, "wandb"), run_dir)):
        found.append(
            ("wandb", f"wandb sync {shlex.quote(os.path.join(run_dir, 'wandb'))}/offline-run-*")
        )  # the shell expands *
    return found


def _names(directory: str, run_dir: str) -> list[str]:
    """The names in a directory of the run (the read gate's listing: [] when it is missing or leads elsewhere)."""
    return list_directory(directory, root=run_dir)


def _number(value) -> str:
    """A metric as the screen shows it; `-` for one best.json holds as null (NaN or infinite)."""
    if value is None:
        return "-"
    return f"{value:.4g}" if isinstance(value, float) else str(value)
