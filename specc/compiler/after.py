"""A finished run's after-training scripts (issue 20): its checkpoint evaluated on the data it was trained on
(evaluate.py), or run over new files (predict.py).

It is compiled from the spec the run trained (a search's best trial: best.yaml), out of the training script's own
templates in their one-process form (a Tune trial's: no worker group), so that it splits, prepares and batches the
data and builds the model exactly as training did; only its ending differs. `specc evaluate` writes it into the run
directory (evaluate.py, reviewable) and runs it in its own process's interpreter, as `specc run` runs a training
script.
"""

from __future__ import annotations

import dataclasses
import os

from specc.compiler.checkpoint_files import PREPROCESSING_BYTES
from specc.compiler.fragments import _imports, compiled_by, context
from specc.compiler.imports import IMPORT, bound, names_read
from specc.compiler.render import Code, render
from specc.compiler.resolve import plan as make_plan
from specc.spec import Experiment

# What the after-training templates use beyond the training script's imports (pruned below when unused)
AFTER_MODULES = ("argparse", "json", "logging", "math", "os", "pickle", "warnings")
EXPORT_MODULES = ("shutil", "tempfile", "warnings")
PREDICT_MODULES = ("argparse", "functools", "io", "json", "logging", "os", "pickle", "tempfile", "time", "warnings")
PREDICT_THIRD = ("PIL.Image", "numpy as np", "pyarrow", "pyarrow.compute", "pyarrow.csv", "pyarrow.fs")
PREDICT_THIRD += ("pyarrow.parquet", "ray", "ray.data")


def compile_after(experiment: Experiment, output: str, recorded: str, exports: bool = False) -> str:
    """The after-training script's source for `experiment`, to be written at `output` in the run directory (its
    relative paths start there); `recorded` says which of the run's files the spec is (for the docstring). With
    `exports`: the export script (`specc export`'s export.py), which checks the exported model on that split."""
    plan = make_plan(experiment, os.path.dirname(os.path.abspath(output)))
    one_process = dataclasses.replace(plan, shape="tune")  # the data and model templates' one-process form
    name = os.path.basename(output)
    docstring = (_export_docstring if exports else _docstring)(plan, name, recorded)
    values = context(one_process, name, docstring=docstring)
    # the whole split, however training limited its validation (training.validation_steps)
    values.update(partial_validation=False, partial_epoch=False, imports=[Code(line) for line in _imports(plan)])
    values.update(exports=exports, preprocessing_mib=PREPROCESSING_BYTES >> 20, rt=Code(""))
    source = render(f"{experiment.framework}/after.py.j2", values)
    return _with_used_imports(source, AFTER_MODULES + (EXPORT_MODULES if exports else ()))


def compile_predict(experiment: Experiment, output: str, recorded: str) -> str:
    """The prediction script's source for `experiment` (a run on files: its checkpoints hold preprocessing.json), to
    be written at `output` in the run directory: the spec's model, and the preprocessing read from the checkpoint."""
    plan = make_plan(experiment, os.path.dirname(os.path.abspath(output)))
    one_process = dataclasses.replace(plan, shape="tune")
    name = os.path.basename(output)
    values = context(one_process, name, docstring=_predict_docstring(plan, name, recorded))
    values.update(config={"model": plan.config["model"]}, imports=[Code(line) for line in _imports(plan)])
    values.update(preprocessing_mib=PREPROCESSING_BYTES >> 20, rt=Code(""))
    source = render("after/predict.py.j2", values)
    return _with_used_imports(source, PREDICT_MODULES, PREDICT_THIRD)


def _predict_docstring(plan, name: str, recorded: str) -> str:
    e = plan.experiment
    images = plan.data_source == "image_folder"
    source = "IMAGES_DIR" if images else "INPUT"
    what = "new images" if images else "new rows"
    return "\n".join(
        [
            f"{e.name}: a checkpoint of the run in this directory, predicting {what}",
            "",
            "Ray Data reads "
            + ("every image below a folder" if images else "csv, parquet or jsonl files")
            + " and runs copies of the model over them (each loaded once,",
            "in an actor of its own); the examples are prepared as training prepared them, from the checkpoint's",
            "preprocessing.json. The predictions are written in the input's order, beside "
            + ("each image's path." if images else "each row's number"),
            *([] if images else ["(or --id COLUMN)."]),
            "",
            *compiled_by(plan, recorded),
            "",
            f"    python {name} CHECKPOINT_DIR {source} -o predictions.parquet",
            "",
        ]
    )


def _export_docstring(plan, name: str, recorded: str) -> str:
    e = plan.experiment
    formats = "torchscript|onnx" if e.framework == "torch" else "saved_model"
    return "\n".join(
        [
            f"{e.name}: a checkpoint of the run in this directory, exported",
            "",
            "The spec's model with the checkpoint's weights, exported as a model that loads without specc, loaded back",
            "and run on a batch of the split the run validated on (prepared as training prepared it): its outputs must",
            "be the checkpoint's.",
            "",
            *compiled_by(plan, recorded),
            "",
            f"    python {name} CHECKPOINT_DIR --format {formats} -o PATH",
            "",
        ]
    )


def _docstring(plan, name: str, recorded: str) -> str:
    e = plan.experiment
    return "\n".join(
        [
            f"{e.name}: a checkpoint of the run in this directory, evaluated",
            "",
            "The metrics the spec names, on the split the run validated on, with the data split, prepared and batched",
            "as training did and the model as training built it.",
            "",
            *compiled_by(plan, recorded),
            "",
            f"    python {name} CHECKPOINT_DIR          # prints the metrics as JSON",
            "",
        ]
    )


def _with_used_imports(source: str, stdlib_extra=AFTER_MODULES, third_extra=()) -> str:
    """`source` with the import block at its top holding only what the code below it uses (the training script's
    imports serve more than these templates render), the modules `stdlib_extra` and `third_extra` added when used,
    and each group sorted as isort sorts it."""
    lines = source.split("\n")
    first = next(i for i, line in enumerate(lines) if line.startswith(("import ", "from ")))
    last = first
    while last < len(lines) and (not lines[last] or IMPORT.match(lines[last])):
        last += 1
    while not lines[last - 1]:
        last -= 1
    block, names = lines[first:last], names_read("\n".join(lines[last:]))
    separator = block.index("") if "" in block else len(block)
    stdlib = sorted({*block[:separator], *(f"import {module}" for module in stdlib_extra)})
    others = {*(line for line in block[separator:] if line), *(f"import {module}" for module in third_extra)}
    others = sorted(others, key=lambda line: (line.startswith("from "), line.split(" ")[1].lower()))
    kept = [line for line in stdlib if bound(line) & names], [line for line in others if bound(line) & names]
    imports = kept[0] + ([""] if kept[0] and kept[1] else []) + kept[1]
    return "\n".join(lines[:first] + imports + lines[last:])
