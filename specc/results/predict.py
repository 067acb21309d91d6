"""`specc predict RUN_DIR INPUT -o OUTPUT`: the best checkpoint of a finished run over new files (issue 20).

The run's spec (results/after.py: read from the run directory as a stranger's file) is compiled into a prediction
script (compiler/after.py: predict.py in the run directory, reviewable, runs on its own) that reads the input with
Ray Data, prepares it as the checkpoint's preprocessing.json says and runs the model in Ray Data actors, each loading
the checkpoint once. It is run in this process; its predictions are written to OUTPUT (parquet or csv) in the
input's order, beside each row's id.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass

from specc.results.after import run_script, trained_run, write_in_run
from specc.results.best_checkpoint import BestCheckpoint
from specc.spec.errors import UsageError, printable

SCRIPT = "predict.py"
OUTPUT_FORMATS = (".parquet", ".pq", ".csv")


@dataclass(frozen=True)
class Prediction:
    """What `specc predict` wrote: `rows` predictions of `best`'s checkpoint in `output`, in `seconds`; and the
    script (empty: a read-only run directory, where it was run unwritten)."""

    best: BestCheckpoint
    rows: int
    output: str
    seconds: float
    script: str = ""


def predict_run(
    run_dir: str | os.PathLike,
    source: str | os.PathLike,
    output: str | os.PathLike,
    id_column: str | None = None,
    root: str | os.PathLike | None = None,
    spec_dir: str | os.PathLike | None = None,
    address: str | None = None,
    actors: int | None = None,
    progress: Callable[[int, float], None] | None = None,
) -> Prediction:
    """Predicts every row (or image) of `source` with the best checkpoint of the run in `run_dir` and writes the
    predictions to `output` (.parquet or .csv). `id_column` is an input column copied beside each prediction
    (default: the row's number; images: their path). `progress(rows, seconds)` is called as rows are written."""
    from specc.compiler.after import compile_predict
    from specc.compiler.resolve import plan as make_plan

    output, source = os.fspath(output), os.fspath(source)
    if not output.lower().endswith(OUTPUT_FORMATS):
        raise UsageError(
            f"-o {printable(output)}: predictions are written as parquet or csv: name a .parquet or .csv file"
        )
    if actors is not None and actors < 1:
        raise UsageError(f"--actors {actors}: at least one copy of the model is needed")
    trained = trained_run(run_dir, spec_dir, root)
    best, experiment = trained.best, trained.experiment
    plan = make_plan(experiment)
    if not plan.fitted or experiment.dataset.type == "npz":
        raise UsageError(
            f"{printable(trained.run_dir)}: the run trained on {experiment.dataset.type} data; specc predict reads "
            "csv, parquet or jsonl tables and image folders, for runs trained on such files (their checkpoints say "
            "how to prepare new examples)"
        )
    images = plan.data_source == "image_folder"
    if images and id_column:
        raise UsageError("--id: each image's predictions are named by its path below INPUT; there are no columns")
    script = os.path.join(trained.run_dir, SCRIPT)
    text = compile_predict(experiment, script, trained.recorded)
    if os.access(trained.run_dir, os.W_OK):
        write_in_run(trained.run_dir, SCRIPT, text)
    else:  # someone else's run, read-only: the script still runs from memory, under the name it would have
        script = ""
    options = {"address": address, "actors": actors, "progress": progress}
    if not images:
        options["id_column"] = id_column

    def predict(module):
        try:
            return module.predict(best.directory, source, output, **options)
        except module.PredictProblem as problem:
            raise UsageError(printable(str(problem))) from None

    started = time.monotonic()
    rows = run_script(text, os.path.join(trained.run_dir, SCRIPT), experiment.framework, predict)
    return Prediction(best, rows, output, time.monotonic() - started, script)
