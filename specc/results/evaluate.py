"""`specc evaluate RUN_DIR`: the best checkpoint of a finished run, measured on its data (issue 20).

The run's own spec (a search's best trial: best.yaml; a training run: spec.resolved.yaml) is read from the run
directory as a stranger's file, validated as any spec is, and compiled into an after-training script
(compiler/after.py) that splits, prepares and batches the data as training did. Its relative paths (data files,
factories) are read from the spec's directory, which best.json records relative to the run directory; that
directory must lie inside the project holding the run directory (or `--root`), as every file a spec names must.
The script is written into the run directory (evaluate.py), run in this process, and its metrics written to
evaluation.json beside it.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import tempfile
import types
from dataclasses import dataclass, field
from pathlib import Path

from specc.results.best_checkpoint import BestCheckpoint, best_checkpoint
from specc.results.run_files import RunFiles
from specc.spec.errors import SpecError, UsageError, printable

SPEC_BYTES = 1 << 20  # a resolved spec is a few KB
TEST_SPLIT_TYPES = ("torchvision", "keras_dataset")  # data sets that come with a test split
SCRIPT = "evaluate.py"
EVALUATION = "evaluation.json"


@dataclass(frozen=True)
class Evaluation:
    """What `specc evaluate` measured: the metrics (the spec's names, without val_) of `best`'s checkpoint on
    `split`, and where the script (empty: a read-only run directory, where it was run unwritten) and the figures
    were written."""

    best: BestCheckpoint
    split: str
    metrics: dict = field(default_factory=dict)
    script: str = ""
    output: str = ""

    def as_json(self) -> dict:
        run_dir = self.best.run.run_dir
        return {
            "split": self.split,
            "metrics": self.metrics,
            "checkpoint": os.path.relpath(self.best.directory, os.path.realpath(run_dir)),
            "trial_id": self.best.trial_id,
            "script": SCRIPT if self.script else None,
        }


def evaluate_run(
    run_dir: str | os.PathLike,
    split: str | None = None,
    output: str | os.PathLike | None = None,
    root: str | os.PathLike | None = None,
    spec_dir: str | os.PathLike | None = None,
    address: str | None = None,
) -> Evaluation:
    """Evaluates the best checkpoint of the run in `run_dir` on `split` ("test" or "validation"; default: the data
    set's test split when it has one, else the validation split) and writes the figures to `output` (default
    RUN_DIR/evaluation.json). `spec_dir` replaces the spec's directory best.json records; `root` widens the project."""
    from specc.compiler.after import compile_after
    from specc.compiler.fragments import reads_spec_side
    from specc.compiler.resolve import plan as make_plan

    best = best_checkpoint(run_dir)
    run = best.run
    name = "best.yaml" if run.kind == "tune" else "spec.resolved.yaml"
    home = _spec_home(run, spec_dir, root)
    raw, split = _recorded_spec(run.run_dir, name, home, split)
    experiment = _checked(raw)
    if spec_dir is None and not run.best.get("spec_dir") and reads_spec_side(make_plan(experiment)):
        raise UsageError(
            f"{printable(run.run_dir)}: the run read files or factories beside its spec, and best.json does not say "
            "where that is (a run in remote storage, or from an earlier specc): give the spec's directory with "
            "--spec-dir"
        )
    script = os.path.join(run.run_dir, SCRIPT)
    # compiled as if it stood in the spec's directory: relative data paths and factories start there
    experiment._raw = type(raw)(raw.data, raw.source, os.path.join(home.spec_dir, name), home)
    recorded = f"{name} beside it (trial {best.trial_id}, the best)" if best.trial_id else f"{name} beside it"
    source = compile_after(experiment, script, printable(recorded))
    target = os.fspath(output) if output else os.path.join(run.run_dir, EVALUATION)
    in_run = os.path.realpath(os.path.dirname(os.path.abspath(target))) == os.path.realpath(run.run_dir)
    if in_run:
        _writable(run.run_dir, target)  # before the work, not after it
    if os.access(run.run_dir, os.W_OK):
        write_in_run(run.run_dir, SCRIPT, source)
    else:  # someone else's run, read-only: the script still runs from memory, under the name it would have
        script = ""
    metrics = _run_script(source, os.path.join(run.run_dir, SCRIPT), experiment.framework, best.directory, address)
    found = Evaluation(best, split, {key.removeprefix("val_"): value for key, value in metrics.items()}, script, target)
    text = json.dumps(found.as_json(), indent=1, sort_keys=True) + "\n"
    if in_run:
        write_in_run(run.run_dir, os.path.basename(target), text)
    else:
        from specc.compiler.files import write_atomic

        write_atomic(target, text)
    return found


def _writable(run_dir: str, target: str) -> None:
    if not os.access(run_dir, os.W_OK):
        raise UsageError(f"{printable(target)}: the run directory is not writable; give the JSON file with -o FILE")


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
    return here if real.startswith(here.rstrip(os.sep) + os.sep) else real


def _recorded_spec(run_dir: str, name: str, project, split: str | None):
    """The run's spec as a RawSpec (read bounded, parsed as any spec is, located in the run directory), with the
    dataset's validation set to `split`; returns it and the split it evaluates."""
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
    return RawSpec(data, source, file, project), _choose_split(data["dataset"], split, file)


def _choose_split(dataset: dict, split: str | None, file: str) -> str:
    """Sets the dataset's validation to `split` (in place) and returns the split evaluated."""
    has_test = dataset.get("type") in TEST_SPLIT_TYPES
    validation_from = dataset.get("validation_from", "test") if has_test else None
    if split is None:
        split = "test" if has_test else "validation"
    if split == "test":
        if not has_test:
            raise UsageError(
                f"{printable(file)}: a {printable(str(dataset.get('type')))} data set has no test split; "
                "evaluate on --split validation"
            )
        if validation_from != "test":  # validated on a part of the training split, or not at all: the test split now
            dataset["validation_from"] = "test"
            dataset.pop("validation_fraction", None)
        return "test"
    if validation_from == "none":
        raise UsageError(
            f"{printable(file)}: the run held out no validation split (dataset.validation_from: none); "
            "evaluate on --split test"
        )
    if dataset.get("validation_fraction") == 0:
        raise UsageError(f"{printable(file)}: the run held out no validation split (dataset.validation_fraction: 0)")
    return "test" if validation_from == "test" else "validation"


def _checked(raw):
    from specc.check.validate import check_raw

    report = check_raw(raw)
    if not report.ok:
        raise SpecError(report.problems)
    return report.experiment


def write_in_run(run_dir: str, name: str, text: str) -> str:
    """Writes `name` into the run directory atomically; never through a symbolic link or over what is not a
    regular file (the directory may be someone else's)."""
    from specc.compiler.files import write_atomic

    path = os.path.join(run_dir, name)
    if os.path.islink(path) or (os.path.lexists(path) and not os.path.isfile(path)):
        raise UsageError(f"{printable(path)}: not a regular file of the run directory; not replaced")
    write_atomic(path, text)
    return path


def _run_script(source: str, script: str, framework: str, checkpoint: str, address: str | None) -> dict:
    """Executes the after-training script in a fresh module of this process; returns its metrics. A problem the
    script states (SystemExit with a message: missing data files, a changed training split) is a UsageError."""
    import linecache

    if framework == "tensorflow":
        from specc.execute.run import _import_tensorflow_quietly

        os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
        _import_tensorflow_quietly()
    module = types.ModuleType("specc_evaluate")
    module.__file__ = script
    linecache.cache[script] = (len(source), None, source.splitlines(True), script)  # tracebacks show its lines
    ray_was_up = "ray" in sys.modules and sys.modules["ray"].is_initialized()
    try:
        with _native_logs_set_aside():
            exec(compile(source, script, "exec"), module.__dict__)
            return module.evaluate_checkpoint(checkpoint, address=address)
    except SystemExit as stop:
        if isinstance(stop.code, str):
            raise UsageError(stop.code) from None
        raise
    finally:
        ray = sys.modules.get("ray")
        if ray is not None and not ray_was_up and ray.is_initialized():
            ray.shutdown()


# A line of a native library's own log (TensorFlow's C++ and absl: "E0000 00:00:1795641761.040799  32373
# cuda_platform.cc:52] failed call to cuInit"), written straight to file descriptor 2
NATIVE_LOG = re.compile(rb"^[IWEF]\d{4} [\d:.]+\s+\d+ [\w.]+:\d+\] ")


@contextlib.contextmanager
def _native_logs_set_aside():
    """Standard error set aside while the script runs: TensorFlow's C++ start-up lines (no GPU here, CPU features)
    are not the user's to act on. Everything else it held is written back after; all of it when the script fails."""
    sys.stderr.flush()
    saved = os.dup(2)
    failed = True
    with tempfile.TemporaryFile() as aside:
        os.dup2(aside.fileno(), 2)
        try:
            yield
            failed = False
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            aside.seek(0)
            kept = [line for line in aside.read().splitlines(True) if failed or not NATIVE_LOG.match(line)]
            if kept:
                sys.stderr.write(b"".join(kept).decode(errors="replace"))
                sys.stderr.flush()
