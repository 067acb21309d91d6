"""The library's one entry point: what the CLI and users call. Each function hands over to its stage.

load / validate (check), compile / compiled_files (compiler), plan_report / format_plan / fit_warnings (plan),
describe_plan (compiler and plan), show / schema (spec), evaluate (results); `specc.run` is execute.run. Nothing
here imports ray, torch or tensorflow; a stage's modules load when first used.
"""

from __future__ import annotations

import os
from pathlib import Path

from specc.check.validate import (
    FileReport,
    check_file,
    load,
    looks_like_spec,
    spec_files,
    validate,
    validate_files,
)
from specc.spec import Experiment
from specc.spec.errors import Problem

__all__ = [
    "FileReport",
    "check_file",
    "compile",
    "compiled_files",
    "describe_plan",
    "evaluate",
    "export",
    "fit_warnings",
    "format_plan",
    "load",
    "looks_like_spec",
    "plan_report",
    "predict",
    "schema",
    "schema_text",
    "show",
    "spec_files",
    "validate",
    "validate_files",
    "write_schema",
]


def compile(experiment: Experiment, output: str | None = None, templates: str | os.PathLike | None = None) -> str:
    """The standalone Ray script for a spec (its source text). `output` only names the script in its usage."""
    from specc.compiler.script import compile_script

    return compile_script(experiment, output, templates)


def compiled_files(
    experiment: Experiment,
    output: str,
    templates: str | os.PathLike | None = None,
    single_file: bool = False,
) -> dict[str, str]:
    """What `specc compile -o output` writes, path -> text: the experiment file at `output` and the runtime every
    compiled script shares, specc_runtime.py, beside it; with `single_file`, the experiment with the runtime
    inlined at its end, alone."""
    from specc import runtime

    return runtime.files(output, compile(experiment, output, templates), single_file)


def evaluate(
    run_dir: str | os.PathLike,
    split: str | None = None,
    output: str | os.PathLike | None = None,
    root: str | os.PathLike | None = None,
    spec_dir: str | os.PathLike | None = None,
    address: str | None = None,
):
    """`specc evaluate`: the best checkpoint of a finished run measured on its test or validation split; returns
    the Evaluation (metrics, split, where evaluation.json and evaluate.py were written). See docs/evaluate.md."""
    from specc.results.evaluate import evaluate_run

    return evaluate_run(run_dir, split, output, root, spec_dir, address)


def export(
    run_dir: str | os.PathLike,
    fmt: str,
    output: str | os.PathLike,
    root: str | os.PathLike | None = None,
    spec_dir: str | os.PathLike | None = None,
    address: str | None = None,
):
    """`specc export`: the best checkpoint of a finished run as TorchScript, ONNX or a SavedModel, loaded back and
    checked against the checkpoint's outputs; returns the Export (the files, the difference). See docs/export.md."""
    from specc.results.export import export_run

    return export_run(run_dir, fmt, output, root, spec_dir, address)


def predict(
    run_dir: str | os.PathLike,
    source: str | os.PathLike,
    output: str | os.PathLike,
    id_column: str | None = None,
    root: str | os.PathLike | None = None,
    spec_dir: str | os.PathLike | None = None,
    address: str | None = None,
    actors: int | None = None,
    progress=None,
):
    """`specc predict`: the best checkpoint of a run trained on files, over new files (csv/parquet/jsonl, or an
    image folder) with Ray Data; returns the Prediction (rows, output, the script). See docs/predict.md."""
    from specc.results.predict import predict_run

    return predict_run(run_dir, source, output, id_column, root, spec_dir, address, actors, progress)


def describe_plan(experiment: Experiment) -> str:
    """What `specc run` would do, in a few lines (for --dry-run)."""
    from specc.compiler.resolve import plan as make_plan
    from specc.read.terminal import one_line  # a value's line end would split its line: shown escaped

    plan = make_plan(experiment)
    e, s = experiment, experiment.scaling
    workers = "local mode (no worker group)" if s.num_workers == 0 else f"{s.num_workers} Ray Train worker(s)"
    if e.objective is not None:
        lines = [
            f"{e.name}: {_trainable_line(e.objective)} ({plan.shape})",
            f"  reports: {', '.join(plan.reported_metrics)}",
            f"  run directory: {one_line(os.path.join(e.run.storage_path, e.run.name))}",
            f"  Ray: {one_line(e.cluster.address or 'a local Ray started for the run')}",
        ]
        return "\n".join(lines) + "\n" + format_plan(plan_report(experiment, configs=3))
    lines = [
        f"{e.name}: one {e.framework} training run ({plan.shape}), {e.training.epochs} epoch(s) on {workers}",
        f"  model {e.model.type}, dataset {e.dataset.type} via {plan.loader}, task {plan.task}",
        f"  reports: {', '.join(plan.reported_metrics)}",
        f"  run directory: {one_line(os.path.join(e.run.storage_path, e.run.name))}",
        f"  Ray: {one_line(e.cluster.address or 'a local Ray started for the run')}",
    ]
    return "\n".join(lines) + "\n" + format_plan(plan_report(experiment, configs=3))  # what `specc plan` shows


def _trainable_line(objective) -> str:
    if objective.trainable and not objective.function:
        return f"{objective.trainable}, a ray.tune.Trainable class stepped in each trial"
    return f"{objective.function}(config) as each trial's Ray Tune function trainable"


def plan_report(experiment: Experiment, configs: int = 5, machine: dict[str, float] | None = None) -> dict:
    """`specc plan` as data: trial count, per-trial resources and whether they fit (on `machine`, default this
    one, when the spec starts its own Ray), scheduler rungs, worst-case worker-epochs, the first `configs`
    configs the seeded search samples. JSON-ready; imports no ray."""
    from specc.plan.trials import plan_report as report

    return report(experiment, configs, machine)


def fit_warnings(experiment: Experiment, machine: dict[str, float] | None = None) -> list[Problem]:
    """What `specc plan` warns about before Ray starts: W340, the run (one trial) as written needs more CPUs or GPUs
    than this machine (`machine`, default this one) has beside Ray Data's share, with what --smoke does instead; W341,
    tune.max_concurrent_trials asks more trials at once than fit here. None for a cluster (cluster.address)."""
    from specc.plan.smoke import fit_warnings as warnings

    return warnings(experiment, machine)


def format_plan(report: dict) -> str:
    """A plan_report as the short aligned text `specc plan` prints."""
    from specc.plan.text import format_plan as text

    return text(report)


def show(experiment: Experiment) -> str:
    """The resolved spec, every default filled in, as YAML in the spec format's key order."""
    from specc.spec.dump import dump_spec

    return dump_spec(experiment)


def schema() -> dict:
    """The JSON Schema of format 1, generated from the models."""
    from specc.spec.schema import schema as generate

    return generate()


def schema_text() -> str:
    from specc.spec.schema import schema_text as generate

    return generate()


def write_schema(directory: str | os.PathLike = "schemas") -> Path:
    from specc.read.files import write_file

    target = Path(directory) / "experiment.schema.json"
    write_file(target, schema_text())
    return target
