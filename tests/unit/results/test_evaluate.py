"""`specc evaluate` on run directories written here as the compiled scripts write them (issue 20): a checkpoint of
weights saved by hand is measured on the validation split worked out by hand, in this process (digits in memory: no
Ray); and what a stranger's run directory may name or hold is refused before anything is imported or written.

tests/e2e/test_evaluate.py and the e2e modules it names evaluate runs that really trained."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from specc.cli import main
from specc.results.evaluate import evaluate_run
from specc.spec.errors import SpecError, UsageError

SPEC = """\
specc: 1
name: digits
framework: torch
model: {type: mlp, hidden_sizes: [8]}
dataset: {type: digits, batch_size: 64, validation_fraction: 0.25, shuffle_seed: 3}
training: {epochs: 1, metrics: [accuracy]}
scaling: {num_workers: 1}
"""


def weights(seed=0):
    """The spec's MLP as build_model makes it (Flatten, Linear 64->8, ReLU, Linear 8->10), randomly initialised."""
    import torch

    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(64, 8), torch.nn.ReLU(), torch.nn.Linear(8, 10))


def write_run(project: Path, spec_text: str = SPEC, spec_dir="../../specs") -> Path:
    """project/specs/digits.yaml's run in project/runs/digits, with one checkpoint of `weights()`."""
    import torch

    (project / "specs").mkdir(parents=True, exist_ok=True)
    (project / "specs" / "digits.yaml").write_text(spec_text, encoding="utf-8")
    run_dir = project / "runs" / "digits"
    checkpoint = run_dir / "checkpoint_000000"
    checkpoint.mkdir(parents=True)
    torch.save({"model": weights().state_dict(), "epoch": 0, "history": []}, checkpoint / "state.pt")
    best = {"metrics": {"epoch": 0}, "checkpoint": str(checkpoint), "run_dir": str(run_dir), "spec_dir": spec_dir}
    (run_dir / "best.json").write_text(json.dumps(best), encoding="utf-8")
    (run_dir / "results.csv").write_text("epoch,train_loss\n0,2.3\n", encoding="utf-8")
    (run_dir / "spec.resolved.yaml").write_text(spec_text, encoding="utf-8")
    return run_dir


def test_the_checkpoints_weights_are_measured_on_the_runs_validation_split(tmp_path, capsys):
    import torch
    from sklearn.datasets import load_digits

    run_dir = write_run(tmp_path)
    assert main(["evaluate", str(run_dir), "--root", str(tmp_path)]) == 0, capsys.readouterr().err
    evaluation = json.loads((run_dir / "evaluation.json").read_text(encoding="utf-8"))

    x, y = load_digits(return_X_y=True)  # the split the spec names, by hand: shuffle_seed 3, a quarter held out
    held_out = np.random.default_rng(3).permutation(len(x))[: int(len(x) * 0.25)]
    inputs = torch.from_numpy((x[held_out] / 16.0).astype(np.float32))
    with torch.no_grad():
        logits = weights().eval()(inputs)
    labels = torch.from_numpy(y[held_out])
    assert evaluation == {
        "checkpoint": "checkpoint_000000",
        "metrics": {
            "accuracy": pytest.approx(float((logits.argmax(1) == labels).float().mean())),
            "loss": pytest.approx(torch.nn.functional.cross_entropy(logits, labels).item(), rel=1e-5),
        },
        "script": "evaluate.py",
        "split": "validation",
        "trial_id": None,
    }
    assert (run_dir / "evaluate.py").read_text(encoding="utf-8").startswith('"""digits: a checkpoint of the run')


def test_written_elsewhere_with_output(tmp_path):
    run_dir = write_run(tmp_path / "project")
    done = evaluate_run(run_dir, output=tmp_path / "out" / "eval.json", root=tmp_path / "project")
    assert done.output == str(tmp_path / "out" / "eval.json") and not (run_dir / "evaluation.json").exists()
    assert json.loads(Path(done.output).read_text(encoding="utf-8"))["metrics"] == done.metrics


@pytest.mark.parametrize(
    "spec_dir, message",
    [
        ("../../../..", "is outside the project"),
        ("../../nowhere", "is not a directory; give it with --spec-dir"),
        ("../../specs\u0000x", "best.json's spec_dir is not a directory's name"),
        (["../../specs"], "best.json's spec_dir is not a directory's name"),
    ],
)
def test_a_spec_directory_that_cannot_be_used_is_refused(tmp_path, spec_dir, message):
    run_dir = write_run(tmp_path / "project", spec_dir=spec_dir)
    with pytest.raises(UsageError, match=message):
        evaluate_run(run_dir, root=tmp_path / "project")
    assert not (run_dir / "evaluate.py").exists() and not (run_dir / "evaluation.json").exists()


def test_a_spec_that_reads_nothing_beside_it_needs_no_recorded_directory(tmp_path):
    """A script whose spec names no path or factory is the same wherever it is compiled: it records no spec_dir."""
    run_dir = write_run(tmp_path, spec_dir=None)
    assert evaluate_run(run_dir, root=tmp_path).metrics["accuracy"] > 0


def test_a_spec_that_reads_files_beside_it_needs_its_directory(tmp_path):
    spec = SPEC.replace(
        "dataset: {type: digits, batch_size: 64, validation_fraction: 0.25, shuffle_seed: 3}",
        "dataset: {type: csv, path: data/rows.csv, label: y}",
    )
    run_dir = write_run(tmp_path, spec, spec_dir=None)
    with pytest.raises(UsageError, match=r"the run read files or factories beside its spec.*--spec-dir"):
        evaluate_run(run_dir, root=tmp_path)


def test_spec_dir_given_replaces_the_recorded_one(tmp_path, capsys):
    run_dir = write_run(tmp_path, spec_dir="../../nowhere")
    args = ["evaluate", str(run_dir), "--root", str(tmp_path)]
    assert main(args) == 2 and "nowhere is not a directory" in capsys.readouterr().err
    assert main([*args, "--spec-dir", str(tmp_path / "specs")]) == 0, capsys.readouterr().err
    assert main([*args, "--spec-dir", str(tmp_path.parent)]) == 2  # given, and still outside the project
    assert "is outside the project" in capsys.readouterr().err


def test_a_spec_directory_linked_out_of_the_project_is_refused(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    run_dir = write_run(tmp_path / "project", spec_dir="../../linked")
    (tmp_path / "project" / "linked").symlink_to(outside)
    with pytest.raises(UsageError, match="is outside the project"):
        evaluate_run(run_dir, root=tmp_path / "project")


def test_without_root_the_project_is_the_git_work_tree_holding_the_run(tmp_path, monkeypatch):
    (tmp_path / "project" / ".git").mkdir(parents=True)
    run_dir = write_run(tmp_path / "project")
    monkeypatch.chdir(tmp_path)  # not below it: the working directory is not the project here
    assert evaluate_run(run_dir).split == "validation"


def test_a_digits_run_has_no_test_split(tmp_path):
    with pytest.raises(UsageError, match="a digits data set has no test split; evaluate on --split validation"):
        evaluate_run(write_run(tmp_path), split="test", root=tmp_path)


def test_a_run_that_validated_on_nothing_has_no_validation_split(tmp_path):
    spec = SPEC.replace(
        "dataset: {type: digits, batch_size: 64, validation_fraction: 0.25, shuffle_seed: 3}",
        "dataset: {type: keras_dataset, name: mnist, path: mnist.npz, validation_from: none}",
    )
    with pytest.raises(UsageError, match=r"held out no validation split \(dataset.validation_from: none\)"):
        evaluate_run(write_run(tmp_path, spec), split="validation", root=tmp_path)


def test_a_csv_run_that_validated_on_nothing_has_nothing_to_evaluate(tmp_path):
    """A table trained on every row (validation_from: none): no validation split, and no test split to offer."""
    spec = SPEC.replace(
        "dataset: {type: digits, batch_size: 64, validation_fraction: 0.25, shuffle_seed: 3}",
        "dataset: {type: csv, path: rows.csv, validation_from: none}",
    )
    with pytest.raises(UsageError, match=r"held out no validation split \(dataset.validation_from: none\)$"):
        evaluate_run(write_run(tmp_path, spec), root=tmp_path)


def test_a_tampered_spec_is_a_located_problem(tmp_path):
    run_dir = write_run(tmp_path)
    text = SPEC.replace("epochs: 1", "epochs: many")
    (run_dir / "spec.resolved.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(SpecError) as raised:
        evaluate_run(run_dir, root=tmp_path)
    problem = raised.value.problems[0]
    assert problem.file.endswith(os.path.join("digits", "spec.resolved.yaml")) and problem.line == 6
    assert problem.path == "training.epochs"


@pytest.mark.parametrize(
    "content, message",
    [
        ("x" * (1 << 20 + 1), "larger than"),
        ("[not, a, spec]", "not a mapping of keys to values"),
        ("specc: 1\nname: x\nframework: torch\n", "not a spec with a dataset section"),
        ("a: &a [*a]", "alias"),
    ],
)
def test_a_spec_file_that_is_no_spec_is_refused(tmp_path, content, message):
    run_dir = write_run(tmp_path)
    (run_dir / "spec.resolved.yaml").write_text(content, encoding="utf-8")
    with pytest.raises((UsageError, SpecError), match=message):
        evaluate_run(run_dir, root=tmp_path)


def test_a_search_without_its_best_yaml_says_so(tmp_path):
    run_dir = write_run(tmp_path)
    best = json.loads((run_dir / "best.json").read_text(encoding="utf-8"))
    (run_dir / "best.json").write_text(json.dumps({**best, "trial_id": "t_1", "metric": "val_loss"}), "utf-8")
    (run_dir / "results.csv").write_text("trial_id,status\nt_1,completed\n", encoding="utf-8")
    with pytest.raises(UsageError, match=r"best.yaml: missing: the run's spec cannot be read"):
        evaluate_run(run_dir, root=tmp_path)


@pytest.mark.parametrize("name", ["evaluate.py", "evaluation.json"])
def test_files_linked_out_of_the_run_are_not_written_through(tmp_path, name):
    run_dir = write_run(tmp_path / "project")
    victim = tmp_path / "victim.txt"
    victim.write_text("mine\n", encoding="utf-8")
    (run_dir / name).symlink_to(victim)
    with pytest.raises(UsageError, match=f"{name}: not a regular file of the run directory; not replaced"):
        evaluate_run(run_dir, root=tmp_path / "project")
    assert victim.read_text(encoding="utf-8") == "mine\n"
