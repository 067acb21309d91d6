"""The best checkpoint of a finished run, found as `specc evaluate`, `predict` and `export` find it (issue 20).

Run directories are written here the way the compiled scripts write them (results.csv, best.json with the absolute
checkpoint path of the time, spec.resolved.yaml, a checkpoint directory with the framework's model file and
preprocessing.json), then moved, linked and tampered with as a stranger's run directory may be.
"""

from __future__ import annotations

import json
import os
import shutil

import pytest

from specc.results.best_checkpoint import best_checkpoint
from specc.spec.errors import UsageError

TRAIN_CSV = "epoch,train_loss,val_loss,val_accuracy\n0,2.2,1.9,0.74\n1,1.5,0.87,0.86\n"
TUNE_CSV = """\
trial_id,status,epochs,training.optimizer.lr,best_val_accuracy
a_00000,completed,2,0.01,0.8
a_00001,completed,2,0.1,0.9
"""
SPEC = """\
specc: 1
name: {name}
framework: {framework}
training: {{checkpoint_every: {every}}}
scaling: {{num_workers: {workers}}}
run: {{name: {name}, storage_path: ./runs, checkpoint_score: {{metric: val_accuracy, mode: max}}}}
"""
FITTED = {"kind": "table", "features": ["x"], "input_shape": [1], "num_outputs": 2, "label": "y"}


def write_run(root, name="digits", framework="torch", tune=False, checkpoint="here", every=1, workers=2):
    """A run directory under `root`; `checkpoint`: "here" (a real one), None, or a path best.json names as it is."""
    run_dir = root / name
    inner = run_dir / ("a_00001" if tune else "") / "checkpoint_000001"
    inner.mkdir(parents=True)
    (inner / ("state.pt" if framework == "torch" else "model.keras")).write_bytes(b"weights")
    (inner / "preprocessing.json").write_text(json.dumps(FITTED), encoding="utf-8")
    recorded = str(inner) if checkpoint == "here" else checkpoint
    best = {"metrics": {"epoch": 1, "val_accuracy": 0.86}, "checkpoint": recorded, "run_dir": str(run_dir)}
    if tune:
        best |= {
            "trial_id": "a_00001",
            "metric": "val_accuracy",
            "mode": "max",
            "config": {"training.optimizer.lr": 0.1},
        }
    files = {
        "results.csv": TUNE_CSV if tune else TRAIN_CSV,
        "best.json": json.dumps(best),
        "spec.resolved.yaml": SPEC.format(name=name, framework=framework, every=every, workers=workers),
    }
    for file, text in files.items():
        (run_dir / file).write_text(text, encoding="utf-8")
    return run_dir


@pytest.mark.parametrize("framework, model_file", [("torch", "state.pt"), ("tensorflow", "model.keras")])
def test_a_training_runs_best_checkpoint_with_its_model_file_and_preprocessing(tmp_path, framework, model_file):
    run_dir = write_run(tmp_path, framework=framework)
    best = best_checkpoint(run_dir)
    assert best.directory == str(run_dir / "checkpoint_000001")
    assert best.model_file == os.path.join(best.directory, model_file)
    assert (best.framework, best.trial_id, best.config) == (framework, None, {})
    assert best.preprocessing == FITTED


def test_a_search_names_its_best_trial_and_its_sampled_values(tmp_path):
    best = best_checkpoint(write_run(tmp_path, tune=True))
    assert best.directory.endswith(os.path.join("digits", "a_00001", "checkpoint_000001"))
    assert (best.trial_id, best.config) == ("a_00001", {"training.optimizer.lr": 0.1})


@pytest.mark.parametrize("new_name", ["digits", "renamed"])
def test_a_moved_run_directory_finds_its_checkpoint_below_itself(tmp_path, new_name):
    run_dir = write_run(tmp_path / "cluster-storage", tune=True)
    (tmp_path / "home").mkdir()
    moved = shutil.move(run_dir, tmp_path / "home" / new_name)  # best.json still names the cluster's paths
    assert not os.path.exists(json.loads((moved / "best.json").read_text())["checkpoint"])
    assert best_checkpoint(moved).directory == str(moved / "a_00001" / "checkpoint_000001")


def test_a_moved_run_whose_best_json_lost_run_dir_goes_by_its_name(tmp_path):
    run_dir = write_run(tmp_path / "cluster-storage", tune=True)
    best = json.loads((run_dir / "best.json").read_text())
    del best["run_dir"]
    (run_dir / "best.json").write_text(json.dumps(best))
    moved = shutil.move(run_dir, tmp_path / "digits")
    assert best_checkpoint(moved).directory == str(moved / "a_00001" / "checkpoint_000001")


@pytest.mark.parametrize(
    "recorded",
    ["/etc", "../../outside/checkpoint_000001", "checkpoint_000001", "{run}/../elsewhere/checkpoint_000001"],
    ids=["absolute-elsewhere", "relative-up", "relative", "dot-dot-out"],
)
def test_a_checkpoint_outside_the_run_directory_is_refused(tmp_path, recorded):
    outside = tmp_path / "elsewhere" / "checkpoint_000001"
    outside.mkdir(parents=True)
    (outside / "state.pt").write_bytes(b"someone else's")
    run_dir = write_run(tmp_path, checkpoint=recorded.format(run=tmp_path / "digits"))
    shutil.rmtree(run_dir / "checkpoint_000001")  # only the path best.json names could be found
    with pytest.raises(UsageError, match="is not a directory of this run directory"):
        best_checkpoint(run_dir)


def test_a_checkpoint_linked_out_of_the_run_directory_is_refused(tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "state.pt").write_bytes(b"someone else's")
    run_dir = write_run(tmp_path)
    shutil.rmtree(run_dir / "checkpoint_000001")
    os.symlink(outside, run_dir / "checkpoint_000001")
    with pytest.raises(UsageError, match="is not a directory of this run directory"):
        best_checkpoint(run_dir)


def test_a_model_file_that_is_a_link_or_missing_is_refused(tmp_path):
    run_dir = write_run(tmp_path)
    state = run_dir / "checkpoint_000001" / "state.pt"
    state.unlink()
    with pytest.raises(UsageError, match=r"no state\.pt in the checkpoint"):
        best_checkpoint(run_dir)
    (tmp_path / "secret").write_bytes(b"not the run's")
    os.symlink(tmp_path / "secret", state)
    with pytest.raises(UsageError, match=r"no state\.pt in the checkpoint"):
        best_checkpoint(run_dir)


def test_preprocessing_json_that_is_not_an_object_or_links_out_is_a_problem(tmp_path):
    run_dir = write_run(tmp_path)
    fitted = run_dir / "checkpoint_000001" / "preprocessing.json"
    fitted.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(UsageError, match=r"preprocessing\.json: not a JSON object"):
        best_checkpoint(run_dir)
    fitted.write_text("{NaN", encoding="utf-8")
    with pytest.raises(UsageError, match="not valid JSON"):
        best_checkpoint(run_dir)
    fitted.unlink()
    (tmp_path / "fitted.json").write_text(json.dumps(FITTED), encoding="utf-8")
    os.symlink(tmp_path / "fitted.json", fitted)
    with pytest.raises(UsageError, match="symbolic link out of the run directory"):
        best_checkpoint(run_dir)


def test_preprocessing_json_of_many_categories_is_read_up_to_the_scripts_bound(tmp_path):
    """A table with a few hundred thousand categories writes a preprocessing.json of MBs: read (as predict.py and
    evaluate.py read it, up to 64 MiB), not refused as a small file would be; past the bound, a problem names it."""
    run_dir = write_run(tmp_path)
    fitted = run_dir / "checkpoint_000001" / "preprocessing.json"
    many = {**FITTED, "categorical": ["city"], "categories": {"city": [f"city {i}" for i in range(400_000)]}}
    fitted.write_text(json.dumps(many), encoding="utf-8")
    assert fitted.stat().st_size > 5 << 20
    assert best_checkpoint(run_dir).preprocessing == many
    with open(fitted, "r+b") as handle:  # sparse past 64 MiB
        handle.truncate((64 << 20) + 1)
    with pytest.raises(UsageError, match=r"preprocessing\.json"):
        best_checkpoint(run_dir)


def test_a_run_without_preprocessing_json_has_none(tmp_path):
    run_dir = write_run(tmp_path)
    (run_dir / "checkpoint_000001" / "preprocessing.json").unlink()
    assert best_checkpoint(run_dir).preprocessing == {}


@pytest.mark.parametrize(
    "options, why",
    [
        ({"every": "never"}, "checkpoint_every: never"),
        ({"workers": 0}, "local mode"),
        ({}, "no epoch or trial of the run reported one"),
    ],
)
def test_a_run_that_kept_no_checkpoint_says_why(tmp_path, options, why):
    run_dir = write_run(tmp_path, checkpoint=None, **options)
    with pytest.raises(UsageError, match=why):
        best_checkpoint(run_dir)


def test_a_best_json_that_cannot_be_read_says_so_not_that_no_checkpoint_was_kept(tmp_path):
    run_dir = write_run(tmp_path)
    (run_dir / "best.json").write_text('{"checkpoint": ', encoding="utf-8")
    with pytest.raises(UsageError, match=r"best\.json.*not valid JSON") as raised:
        best_checkpoint(run_dir)
    assert "names no checkpoint" not in str(raised.value)
