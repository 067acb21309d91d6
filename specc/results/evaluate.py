"""`specc evaluate RUN_DIR`: the best checkpoint of a finished run, measured on its data (issue 20).

The run's spec (results/after.py: read from the run directory as a stranger's file) is compiled into an
after-training script (compiler/after.py) that splits, prepares and batches the data as training did. The script is
written into the run directory (evaluate.py), run in this process, and its metrics written to evaluation.json beside
it.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

from specc.results.after import run_script, trained_run, write_in_run
from specc.results.best_checkpoint import BestCheckpoint
from specc.spec.errors import UsageError, printable

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

    chosen = []
    trained = trained_run(run_dir, spec_dir, root, lambda data, file: chosen.append(choose_split(data, split, file)))
    best, split = trained.best, chosen[0]
    run = best.run
    script = os.path.join(run.run_dir, SCRIPT)
    source = compile_after(trained.experiment, script, trained.recorded)
    target = os.fspath(output) if output else os.path.join(run.run_dir, EVALUATION)
    in_run = os.path.realpath(os.path.dirname(os.path.abspath(target))) == os.path.realpath(run.run_dir)
    if in_run:
        _writable(run.run_dir, target)  # before the work, not after it
    if os.access(run.run_dir, os.W_OK):
        write_in_run(run.run_dir, SCRIPT, source)
    else:  # someone else's run, read-only: the script still runs from memory, under the name it would have
        script = ""
    metrics = run_script(
        source,
        os.path.join(run.run_dir, SCRIPT),
        trained.experiment.framework,
        lambda module: module.evaluate_checkpoint(best.directory, address=address),
    )
    found = Evaluation(best, split, {key.removeprefix("val_"): value for key, value in metrics.items()}, script, target)
    text = json.dumps(found.as_json(), indent=1, sort_keys=True) + "\n"
    if in_run:
        write_in_run(run.run_dir, os.path.basename(target), text)
    else:
        from specc.read.files import write_file

        write_file(target, text)
    return found


def _writable(run_dir: str, target: str) -> None:
    if not os.access(run_dir, os.W_OK):
        raise UsageError(f"{printable(target)}: the run directory is not writable; give the JSON file with -o FILE")


def choose_split(data: dict, split: str | None, file: str) -> str:
    """Sets the dataset's validation to `split` (in place) and returns the split evaluated."""
    dataset = data["dataset"]
    has_test = dataset.get("type") in TEST_SPLIT_TYPES
    validation_from = dataset.get("validation_from", "test" if has_test else "train")
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
            f"{printable(file)}: the run held out no validation split (dataset.validation_from: none)"
            + ("; evaluate on --split test" if has_test else "")
        )
    if dataset.get("validation_fraction") == 0:
        raise UsageError(f"{printable(file)}: the run held out no validation split (dataset.validation_fraction: 0)")
    return "test" if validation_from == "test" else "validation"
