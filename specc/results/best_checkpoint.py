"""The best model of a finished run, found in its run directory: what `specc evaluate`, `predict` and `export` load.

best.json names the checkpoint (the best epoch's, or the best trial's) by the absolute path it had when the run
wrote it. A run directory travels (a colleague's tarball, a shared cluster's storage copied home), so that path is
read relative to the run directory it was written in (best.json's `run_dir`). Either way the checkpoint must be
a directory inside the run directory, symbolic links followed, holding the model file of the run's framework as a
regular file (torch: `state.pt`; tensorflow: `model.keras`); anything else is a UsageError that says what is wrong,
never a file read from elsewhere. `preprocessing.json` (docs/data.md), when the checkpoint has one, is read as a
stranger's JSON (run_files.py): bounded, strict, a problem if it is not a JSON object.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from specc.compiler.checkpoint_files import PREPROCESSING, PREPROCESSING_BYTES
from specc.results.run_dir import BEST, RunResults, read_run
from specc.results.run_files import RunFiles
from specc.spec.errors import UsageError, printable

MODEL_FILES = {"torch": "state.pt", "tensorflow": "model.keras"}


@dataclass(frozen=True)
class BestCheckpoint:
    """The checkpoint `directory` (inside `run.run_dir`) of the run's best epoch or trial; `framework` and `model_file`
    (its path) as the run's spec says; `trial_id` for a search (None for a training run); `config` the best trial's
    sampled values from best.json ({} for a training run); `preprocessing` the checkpoint's preprocessing.json ({}
    when it has none: a data set held in memory)."""

    run: RunResults
    directory: str
    framework: str
    model_file: str
    trial_id: str | None = None
    config: dict = field(default_factory=dict)
    preprocessing: dict = field(default_factory=dict)


def best_checkpoint(run_dir: str | os.PathLike) -> BestCheckpoint:
    """The best checkpoint of the run in `run_dir`, checked as described above."""
    run = read_run(run_dir)
    shown = printable(run.run_dir)
    framework = run.spec.get("framework")
    if run.spec.get("objective") is not None:
        raise UsageError(f"{shown}: an objective search trains no model of specc's: there is no checkpoint to load")
    unread = [p for p in run.warnings if (p.file or "").endswith("spec.resolved.yaml")]
    if not run.spec and unread:  # a spec that cannot be read names no framework: say why
        raise UsageError(f"{unread[0].where()}: {unread[0].message.removesuffix('; left out')}")
    if framework not in MODEL_FILES:
        raise UsageError(f"{shown}: spec.resolved.yaml names no framework specc loads (torch or tensorflow)")
    recorded = run.best.get("checkpoint")
    unreadable = [p for p in run.warnings if p.code in ("W307", "W308") and (p.file or "").endswith(BEST)]
    if not recorded and unreadable:  # a best.json that cannot be read names nothing: say why, not that none was kept
        raise UsageError(f"{unreadable[0].where()}: {unreadable[0].message.removesuffix('; left out')}")
    if not recorded:
        raise UsageError(f"{shown}: best.json names no checkpoint: {_why_none(run)}")
    written = run.best.get("run_dir")
    directory = _inside(run.run_dir, recorded, written if isinstance(written, str) else None)
    model_file = os.path.join(directory, MODEL_FILES[framework])
    if not (os.path.isfile(model_file) and not os.path.islink(model_file)):
        raise UsageError(
            f"{printable(directory)}: no {MODEL_FILES[framework]} in the checkpoint (a {framework} run's model file)"
        )
    return BestCheckpoint(
        run=run,
        directory=directory,
        framework=framework,
        model_file=model_file,
        trial_id=run.best.get("trial_id") if run.kind == "tune" else None,
        config=run.best.get("config", {}) if run.kind == "tune" else {},
        preprocessing=_preprocessing(run.run_dir, directory),
    )


def _why_none(run: RunResults) -> str:
    training = run.spec.get("training") or {}
    if training.get("checkpoint_every") == "never":
        return "the run kept none (training.checkpoint_every: never); train again with checkpoints"
    scaling = run.spec.get("scaling") or {}
    if run.kind == "train" and scaling.get("num_workers") == 0:
        return "Ray Train's local mode (scaling.num_workers: 0) keeps no checkpoints; train with num_workers >= 1"
    return "no epoch or trial of the run reported one"


def _inside(run_dir: str, recorded: str, written: str | None) -> str:
    """The checkpoint directory best.json records, inside `run_dir`; when the run has moved since, the recorded
    path's part below the run directory it was written in (best.json's `run_dir`), else below a directory of the run
    directory's name."""
    from specc.read.files import resolve_inside

    candidates = [recorded] if os.path.isabs(recorded) else []  # a relative path would be read from the cwd
    parts = os.path.normpath(recorded).split(os.sep)
    if written and os.path.isabs(written) and recorded.startswith(written.rstrip(os.sep) + os.sep):
        candidates.append(os.path.join(run_dir, os.path.relpath(recorded, written)))
    name = os.path.basename(os.path.normpath(run_dir))
    candidates += [os.path.join(run_dir, *parts[i + 1 :]) for i in reversed(range(len(parts))) if parts[i] == name]
    for candidate in candidates:
        try:  # the path that is checked is the path that is loaded: resolved, links followed, inside the run
            real = resolve_inside(candidate, run_dir)
        except OSError:
            continue
        if os.path.isdir(real):
            return real
    raise UsageError(
        f"{printable(run_dir)}: best.json's checkpoint {printable(recorded)} is not a directory of this run directory"
    )


def _preprocessing(run_dir: str, directory: str) -> dict:
    warnings: list = []
    root = os.path.realpath(run_dir)
    name = os.path.relpath(os.path.join(directory, PREPROCESSING), root)
    value = RunFiles(root, warnings).json(name, PREPROCESSING_BYTES)
    if warnings:
        raise UsageError(f"{warnings[0].where()}: {warnings[0].message.removesuffix('; left out')}")
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise UsageError(f"{printable(os.path.join(directory, PREPROCESSING))}: not a JSON object")
    return value
