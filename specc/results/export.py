"""`specc export RUN_DIR --format torchscript|onnx|saved_model -o PATH`: the best checkpoint of a finished run as a
model file that loads without specc, checked against the checkpoint (issue 20).

The run's spec (results/after.py: read from the run directory as a stranger's file) is compiled into the
after-training script with an export ending (compiler/after.py: export.py in the run directory): the spec's model
with the checkpoint's weights is exported, loaded back by torch.jit, onnxruntime or tf.saved_model alone and run on
a batch of the split the run validated on; its outputs must be the checkpoint's. Beside the model goes
`<PATH stem>.preprocessing.json`: what its inputs are and how examples were prepared for it (docs/export.md).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

from specc.compiler.checkpoint_files import PREPROCESSING
from specc.results.after import run_script, trained_run, write_in_run
from specc.results.best_checkpoint import BestCheckpoint
from specc.spec.errors import UsageError, printable
from specc.spec.loss import loss_task

SCRIPT = "export.py"
FORMATS = {"torchscript": "torch", "onnx": "torch", "saved_model": "tensorflow"}
# What the model's outputs are, by the spec's loss
OUTPUTS = {  # by what the loss is for (specc.spec.loss.loss_task)
    "classification": "logits, one per class (their softmax: the class probabilities)",
    "binary": "one logit (its sigmoid: the probability of class 1)",
}


@dataclass(frozen=True)
class Export:
    """What `specc export` wrote: the model at `output` in `fmt`, checked on `checked["examples"]` inputs (the
    largest difference from the checkpoint's outputs: `checked["max_abs_difference"]`), and its preprocessing JSON."""

    best: BestCheckpoint
    fmt: str
    output: str
    preprocessing: str
    checked: dict = field(default_factory=dict)
    script: str = ""


def preprocessing_path(output: str) -> str:
    """`<PATH without its extension>.preprocessing.json`, beside the model."""
    return os.path.splitext(os.path.normpath(output))[0] + ".preprocessing.json"


def export_run(
    run_dir: str | os.PathLike,
    fmt: str,
    output: str | os.PathLike,
    root: str | os.PathLike | None = None,
    spec_dir: str | os.PathLike | None = None,
    address: str | None = None,
) -> Export:
    """Exports the best checkpoint of the run in `run_dir` as `fmt` to `output` and writes its preprocessing JSON
    beside it."""
    from specc.compiler.after import compile_after
    from specc.read.files import write_file

    output = os.fspath(output)
    if fmt not in FORMATS:
        raise UsageError(f"--format {printable(fmt)}: one of {', '.join(FORMATS)}")
    described = preprocessing_path(output)
    _writable_target(output, directory=fmt == "saved_model")
    _writable_target(described, directory=False)
    from specc.results.evaluate import choose_split

    # the inputs the export is checked on: a batch of the split specc evaluate measures by default (the data set's
    # test split when it has one: a run that held out no validation split still has those)
    trained = trained_run(run_dir, spec_dir, root, lambda data, file: choose_split(data, None, file))
    best, experiment = trained.best, trained.experiment
    if FORMATS[fmt] != experiment.framework:
        raise UsageError(_wrong_framework(fmt, experiment.framework))
    script = os.path.join(trained.run_dir, SCRIPT)
    source = compile_after(experiment, script, trained.recorded, exports=True)
    if os.access(trained.run_dir, os.W_OK):
        write_in_run(trained.run_dir, SCRIPT, source)
    else:  # someone else's run, read-only: the script still runs from memory, under the name it would have
        script = ""
    checked = run_script(
        source,
        os.path.join(trained.run_dir, SCRIPT),
        experiment.framework,
        lambda module: module.export_checkpoint(best.directory, fmt, output, address=address),
    )
    text = json.dumps(_described(trained, fmt, output, checked), indent=1, sort_keys=True) + "\n"
    write_file(described, text)
    return Export(best, fmt, output, described, checked, script)


def _wrong_framework(fmt: str, framework: str) -> str:
    if framework == "tensorflow":
        return (
            f"--format {fmt}: the run trained a Keras model; export it as saved_model (TensorFlow's own format; "
            "tf2onnx, the converter to ONNX, does not install beside this TensorFlow)"
        )
    return f"--format {fmt}: the run trained a torch model; export it as torchscript or onnx"


def _writable_target(path: str, directory: bool) -> None:
    """`path` may be written: its directory exists, and it is not a link or anything but a regular file (a
    SavedModel, a directory, must not exist at all)."""
    shown = printable(path)
    if not os.path.isdir(os.path.dirname(os.path.abspath(path))):
        raise UsageError(f"{shown}: its directory does not exist")
    if directory and os.path.lexists(path):
        raise UsageError(f"{shown} exists: a SavedModel is a new directory; remove it or name another")
    if os.path.islink(path) or (os.path.lexists(path) and not os.path.isfile(path)):
        raise UsageError(f"{shown}: not a regular file; not replaced")


def _described(trained, fmt: str, output: str, checked: dict) -> dict:
    """The exported model's preprocessing JSON (docs/export.md)."""
    from specc.compiler.resolve import plan as make_plan

    experiment, best = trained.experiment, trained.best
    plan = make_plan(experiment)
    layout = {"torch": "CHW", "tensorflow": "HWC"}[experiment.framework]
    shape = checked["input_shape"]
    described = {
        "format": fmt,
        "model": os.path.basename(os.path.normpath(output)),
        "inputs": {
            "name": "x" if fmt == "onnx" else None,
            "shape": [None, *shape],
            "dtype": "float32",
            "layout": layout if len(shape) == 3 else "features",
        },
        "outputs": OUTPUTS.get(
            loss_task(experiment.framework, experiment.training.loss), "the regression outputs, in the label's units"
        ),
        "checked": {"max_abs_difference": checked["max_abs_difference"], "examples": checked["examples"]},
        "run": {"name": experiment.name, "checkpoint": os.path.basename(best.directory), "trial_id": best.trial_id},
    }
    if plan.fitted:  # the checkpoint's own record of what training fitted on its data
        described["preprocessing"] = _checkpoint_preprocessing(best)
    else:
        described["preprocessing"] = {"kind": experiment.dataset.type, "prepared": _built_in(experiment)}
    return described


def _checkpoint_preprocessing(best: BestCheckpoint) -> dict:
    """The checkpoint's preprocessing.json, as best_checkpoint read it (bounded, inside the run, JSON)."""
    if not best.preprocessing:
        path = os.path.join(best.directory, PREPROCESSING)
        raise UsageError(f"{printable(path)}: missing, or not a preprocessing.json the run wrote")
    return best.preprocessing


def _built_in(experiment) -> str:
    """How a built-in data set's examples become the model's inputs (its script's load_data says it in code)."""
    dataset = experiment.dataset
    if dataset.type == "digits":
        return "scikit-learn's digits: pixels / 16, as 8x8 images with one channel"
    if dataset.type == "keras_dataset":
        return f"Keras' {dataset.name}: pixels / 255"
    if dataset.type == "torchvision":
        return f"torchvision's {dataset.name}: ToTensor (pixels / 255), the spec's transforms (export.py's load_data)"
    if dataset.type == "custom":
        return "the spec's own data factory: see load_data in export.py"
    scaled = getattr(dataset, "standardize", True)
    how = "standardised with the training split's per-feature mean and std" if scaled else "as they are"
    return f"scikit-learn's {dataset.type}: features {how} (see load_data in export.py)"
