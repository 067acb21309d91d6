"""What the after-training commands share (issue 20: `specc evaluate`, `specc predict`): the best checkpoint of a
finished run and the spec it was trained from, read from the run directory as a stranger's file; the compiled
after-training script written into the run directory and run in this process.

The run's own spec (a search's best trial: best.yaml; a training run: spec.resolved.yaml) is read bounded, parsed
as any spec is and validated; its relative paths (data files, factories) are read from the spec's directory, which
best.json records relative to the run directory. That directory must lie inside the project holding the run
directory (or `--root`), as every file a spec names must.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile
import threading
import types
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from specc.read.files import is_inside
from specc.read.terminal import pass_on, write_err
from specc.results.best_checkpoint import BestCheckpoint, best_checkpoint
from specc.results.run_files import RunFiles
from specc.spec.errors import SpecError, UsageError, printable

SPEC_BYTES = 1 << 20  # a resolved spec is a few KB


@dataclass(frozen=True)
class Trained:
    """A finished run's best checkpoint and its spec: validated, and located in the spec's directory (relative
    paths start there); `recorded` names the run's file it came from, for the compiled script's docstring."""

    best: BestCheckpoint
    experiment: Any  # specc.spec.Experiment
    recorded: str

    @property
    def run_dir(self) -> str:
        return self.best.run.run_dir


def trained_run(
    run_dir: str | os.PathLike,
    spec_dir: str | os.PathLike | None = None,
    root: str | os.PathLike | None = None,
    adjust: Callable[[dict, str], None] | None = None,
) -> Trained:
    """The best checkpoint of the run in `run_dir` and its spec. `spec_dir` replaces the spec's directory best.json
    records; `root` widens the project; `adjust(data, file)` may change the raw spec before it is validated (and
    raise a UsageError naming `file`)."""
    from specc.compiler.fragments import reads_spec_side
    from specc.compiler.resolve import plan as make_plan

    best = best_checkpoint(run_dir)
    run = best.run
    name = "best.yaml" if run.kind == "tune" else "spec.resolved.yaml"
    home = _spec_home(run, spec_dir, root)
    raw = _recorded_spec(run.run_dir, name, home, adjust)
    experiment = _checked(raw)
    if spec_dir is None and not run.best.get("spec_dir") and reads_spec_side(make_plan(experiment)):
        raise UsageError(
            f"{printable(run.run_dir)}: the run read files or factories beside its spec, and best.json does not say "
            "where that is (a run in remote storage, or from an earlier specc): give the spec's directory with "
            "--spec-dir"
        )
    # compiled as if it stood in the spec's directory: relative data paths and factories start there
    experiment._raw = type(raw)(raw.data, raw.source, os.path.join(home.spec_dir, name), home)
    recorded = f"{name} beside it (trial {best.trial_id}, the best)" if best.trial_id else f"{name} beside it"
    return Trained(best, experiment, printable(recorded))


def _spec_home(run, spec_dir, root):
    """The Project the recorded spec stands in: the spec's directory (given, or best.json's `spec_dir` below the
    run directory), inside the project that holds the run directory (or `root`)."""
    from specc.read.project import WIDEN_HINT, Project, project_root

    shown = printable(run.run_dir)
    if spec_dir is None:
        recorded = run.best.get("spec_dir")
        if recorded is not None and (not isinstance(recorded, str) or not recorded or "\0" in recorded):
            raise UsageError(f"{shown}: best.json's spec_dir is not a directory's name; give it with --spec-dir")
        # none recorded: the spec read nothing beside it (else evaluate_run asks for --spec-dir); the run stands in
        spec_dir = os.path.join(run.run_dir, recorded) if recorded else run.run_dir
    spec_dir = os.path.realpath(spec_dir)
    if root is not None and not os.path.isdir(root):
        raise UsageError(f"--root {printable(root)} is not a directory")
    top = os.path.realpath(root) if root is not None else _default_root(run.run_dir, project_root)
    project = Project(Path(spec_dir), Path(top))
    if not project.holds(spec_dir):  # first: nothing outside the project is even looked at
        raise UsageError(
            f"{shown}: the run's spec directory {printable(spec_dir)} is outside the project {printable(top)}; "
            f"nothing is read from there ({WIDEN_HINT})"
        )
    if not os.path.isdir(spec_dir):
        where = printable(spec_dir)
        raise UsageError(f"{shown}: the run's spec directory {where} is not a directory; give it with --spec-dir")
    return project


def _default_root(run_dir: str, project_root) -> str:
    """The project a run directory belongs to: the git work tree holding it, else the working directory when the
    run directory is below it (`specc run` puts runs in ./runs), else the run directory alone."""
    tree = project_root(run_dir)
    if os.path.lexists(tree / ".git"):
        return str(tree)
    here, real = os.path.realpath(os.getcwd()), os.path.realpath(run_dir)
    return here if real != here and is_inside(real, here) else real


def _recorded_spec(run_dir: str, name: str, project, adjust):
    """The run's spec as a RawSpec (read bounded, parsed as any spec is, located in the run directory), changed by
    `adjust` (the evaluated split)."""
    from specc.read.document import DocumentError, parse_text
    from specc.read.loader import RawSpec, display

    warnings: list = []
    text = RunFiles(run_dir, warnings).text(name, SPEC_BYTES)
    file = display(os.path.join(run_dir, name))
    if text is None:
        why = warnings[0].message.removesuffix("; left out") if warnings else "missing"
        raise UsageError(f"{printable(file)}: {why}: the run's spec cannot be read")
    try:
        data, source = parse_text(text, file)
    except DocumentError as error:
        raise SpecError(error.problems) from None
    if not isinstance(data, dict) or not isinstance(data.get("dataset"), dict):
        raise UsageError(f"{printable(file)}: not a spec with a dataset section")
    if adjust is not None:
        adjust(data, file)
    return RawSpec(data, source, file, project)


def _checked(raw):
    from specc.check.validate import check_raw

    report = check_raw(raw)
    if not report.ok:
        raise SpecError(report.problems)
    return report.experiment


def write_in_run(run_dir: str, name: str, text: str) -> str:
    """Writes `name` into the run directory atomically; never through a symbolic link or over what is not a
    regular file (the directory may be someone else's)."""
    from specc.read.files import write_file

    path = os.path.join(run_dir, name)
    if os.path.islink(path) or (os.path.lexists(path) and not os.path.isfile(path)):
        raise UsageError(f"{printable(path)}: not a regular file of the run directory; not replaced")
    write_file(path, text, within=run_dir)
    return path


def run_script(source: str, script: str, framework: str, call: Callable[[types.ModuleType], Any]) -> Any:
    """Executes the after-training script in a fresh module of this process and returns `call(module)`. A problem
    the script states (SystemExit with a message: missing data files, a changed training split) is a UsageError."""
    import linecache

    if framework == "tensorflow":
        from specc.execute.run import _import_tensorflow_quietly

        os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
        _import_tensorflow_quietly()
    module = types.ModuleType("specc_" + os.path.splitext(os.path.basename(script))[0])
    module.__file__ = script
    linecache.cache[script] = (len(source), None, source.splitlines(True), script)  # tracebacks show its lines
    ray_was_up = "ray" in sys.modules and sys.modules["ray"].is_initialized()
    try:
        with _native_logs_set_aside(), _ray_data_settings_kept():
            exec(compile(source, script, "exec"), module.__dict__)
            return call(module)
    except SystemExit as stop:
        if isinstance(stop.code, str):
            raise UsageError(printable(stop.code)) from None  # it may quote the run's files
        raise
    finally:
        ray = sys.modules.get("ray")
        if ray is not None and not ray_was_up and ray.is_initialized():
            ray.shutdown()


@contextlib.contextmanager
def _ray_data_settings_kept():
    """This process's Ray Data settings, log level and warning filters as they were before the script: it quiets Ray
    Data and keeps rows in order for itself, not for what the process runs next (a training run after
    `specc.predict` in one Python session streams unordered, with Ray Data's progress)."""
    import copy
    import logging
    import warnings

    data, saved = sys.modules.get("ray.data"), None
    if data is not None:
        with warnings.catch_warnings():  # the copy reads Ray Data's deprecated settings too
            warnings.simplefilter("ignore", DeprecationWarning)
            saved = copy.deepcopy(data.DataContext.get_current())
    logger = logging.getLogger("ray.data")
    level = logger.level
    try:
        with warnings.catch_warnings():
            yield
    finally:
        logger.setLevel(level)
        data = sys.modules.get("ray.data")
        if data is not None:
            data.DataContext._set_current(saved)  # None: a fresh default when next asked for


# A line of a native library's own log, written straight to file descriptor 2: TensorFlow's C++ and absl's
# ("E0000 00:00:1795641761.040799  32373 cuda_platform.cc:52] failed call to cuInit"), with the line absl writes
# before the first of them in a process, Ray's core worker's
# ("[2026-11-26 01:01:46,004 E 11761 11761] core_worker.cc:2465: Actor with class name: ...")
NATIVE_LOG = re.compile(
    rb"^(?:[IWEF]\d{4} [\d:.]+\s+\d+ [\w.]+:\d+\] |\[[\d-]+ [\d:,]+ [IWEF] \d+ \d+\] [\w.]+:\d+: "
    rb"|WARNING: All log messages before absl::InitializeLog\(\) is called are written to STDERR)"
)
# Of those, what Ray's core worker says before it ends this process (the raylet or GCS gone, a fatal check) is
# passed on at once: after it nothing else is.
RAY_LAST_WORDS = re.compile(
    rb"^\[[\d-]+ [\d:,]+ (?:F |E .*(?:will exit|Exiting because|is dead|may have been killed|Quick exit))"
)


def _kept_aside(line: bytes) -> bool:
    return bool(NATIVE_LOG.match(line)) and not RAY_LAST_WORDS.match(line)


@contextlib.contextmanager
def _native_logs_set_aside():
    """Standard error set aside while the script runs: TensorFlow's C++ start-up lines (no GPU here, CPU features)
    and Ray's core-worker notices are not the user's to act on. Every other line is passed on as it is written
    (also Ray's last words should it end this process); the lines set aside are written back when the script
    fails."""
    sys.stderr.flush()
    saved = os.dup(2)
    failed, held = True, []
    with tempfile.TemporaryFile() as aside:
        os.dup2(aside.fileno(), 2)
        done = threading.Event()
        relay = threading.Thread(target=_relay, args=(aside.fileno(), saved, held, done), daemon=True)
        relay.start()
        try:
            yield
            failed = False
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            done.set()
            relay.join()
            os.close(saved)
            if failed and held:
                write_err(b"".join(held).decode(errors="backslashreplace"))
                sys.stderr.flush()


def _relay(fd: int, to: int, held: list, done: threading.Event, every: float = 0.05):
    """Follows the file at `fd` from its start: each whole line written to it is copied to `to` at once, or held
    if a native log line (`_kept_aside`); a last partial line when `done`."""
    offset, pending = 0, b""
    while True:
        finished = done.is_set()  # read once more after it is set: what was written before is all there
        while chunk := os.pread(fd, 1 << 16, offset):
            offset += len(chunk)
            pending += chunk
        *lines, pending = pending.split(b"\n")
        if finished and pending:
            lines, pending = [*lines, pending], b""
        for line in lines:
            line += b"\n"
            if _kept_aside(line):
                held.append(line)
            else:
                pass_on(to, line)
        if finished:
            return
        done.wait(every)
