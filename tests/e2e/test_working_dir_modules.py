"""Issue 48: a module found only through `cluster.working_dir` (the project above specs/) is imported by a local run
as `specc validate` found it. Validate looks a project module up in the spec's directory, then the working
directory; a local run used to put only the spec's directory on the import path, and stopped with a raw
ModuleNotFoundError (the driver's load_factory) after a clean validate. Now both take their directories from one
list (check/factories.py: import_dirs, the script's IMPORT_DIRS), put on sys.path in the driver, each Ray Train
worker and each Tune trial.

Real runs, as a user starts them: `specc run` in a fresh interpreter (its own local Ray), from a directory that is
neither the project nor the spec's (`python -m` puts the current directory on the driver's path), on digits."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from .conftest import read_results, specc_cli

pytestmark = pytest.mark.slow

MODELS = '''\
"""A model factory that writes down which file it was imported from, and in which process."""

import json
import os

from torch import nn


def make(input_shape, num_outputs, marker, hidden=16):
    with open(marker, "a", encoding="utf-8") as out:
        out.write(json.dumps({"file": os.path.abspath(__file__), "pid": os.getpid()}) + "\\n")
    return nn.Sequential(nn.Flatten(), nn.Linear(64, hidden), nn.ReLU(), nn.Linear(hidden, num_outputs))
'''
SEARCH = '''\
"""A Tune function that writes down which file it was imported from, then reports a score for its x."""

import json
import os

from ray import tune


def search(config):
    with open(config["marker"], "a", encoding="utf-8") as out:
        out.write(json.dumps({"file": os.path.abspath(__file__), "pid": os.getpid()}) + "\\n")
    for step in range(1, config["steps"] + 1):
        tune.report({"step": step, "score": -((config["x"] - 1) ** 2)})
'''
TRAIN = """\
specc: 1
name: working-dir-train
framework: torch
model: {{type: custom, factory: "lab.models:make", kwargs: {{marker: "{marker}"}}}}
dataset: {{type: digits, batch_size: 64}}
training: {{epochs: 1, metrics: [accuracy], optimizer: {{type: adam, lr: 0.01}}}}
scaling: {{num_workers: 1}}
cluster: {{working_dir: ".."}}
"""
OBJECTIVE = """\
specc: 1
name: working-dir-search
objective:
  function: lab.search:search
  params: {{steps: 2, x: 0.0, marker: "{marker}"}}
  metrics: [step, score]
  max_steps: 2
tune:
  metric: score
  mode: max
  num_samples: 2
  search: {{type: random, seed: 3}}
  space: {{objective.params.x: {{uniform: [0, 2]}}}}
cluster: {{working_dir: ".."}}
"""


@pytest.fixture
def project(tmp_path) -> Path:
    """project/lab/{models,search}.py and project/specs/ (which holds no module); runs start from elsewhere/."""
    root = tmp_path / "project"
    (root / "lab").mkdir(parents=True)
    (root / "lab" / "__init__.py").write_text("", encoding="utf-8")
    (root / "lab" / "models.py").write_text(MODELS, encoding="utf-8")
    (root / "lab" / "search.py").write_text(SEARCH, encoding="utf-8")
    (root / "specs").mkdir()
    (tmp_path / "elsewhere").mkdir()
    return root


def validated_and_run(project: Path, name: str, text: str) -> tuple[Path, list[dict]]:
    """Writes the spec, checks that validate finds its module (no W302), runs it; (run dir, the module's records)."""
    marker = project.parent / f"{name}.jsonl"
    spec = project / "specs" / f"{name}.yaml"
    spec.write_text(text.format(marker=marker), encoding="utf-8")
    cwd = project.parent / "elsewhere"
    checked = specc_cli("validate", spec, "--root", project, cwd=cwd)
    assert checked.returncode == 0 and "W302" not in checked.stdout, checked.stdout + checked.stderr
    runs = project.parent / "runs"
    done = specc_cli("run", spec, "--root", project, "--storage-path", runs, "-q", cwd=cwd, timeout=400)
    assert done.returncode == 0, done.stderr[-4000:]
    assert "ModuleNotFoundError" not in done.stderr
    records = [json.loads(line) for line in marker.read_text(encoding="utf-8").splitlines()]
    return runs / yaml_name(text), records


def yaml_name(text: str) -> str:
    return next(line.split(": ", 1)[1] for line in text.splitlines() if line.startswith("name: "))


def test_a_train_run_and_its_evaluation_import_the_model_from_the_working_dir(project):
    """The driver, the Ray Train worker that trains, and `specc evaluate` afterwards all import lab/models.py."""
    run_dir, records = validated_and_run(project, "train", TRAIN)
    models = str(project / "lab" / "models.py")
    assert records and {record["file"] for record in records} == {models}
    _, rows = read_results(run_dir)
    assert len(rows) == 1 and rows[0]["val_accuracy"] > 0.3  # one epoch, and it learned: chance is 0.1

    built = len(records)
    evaluated = specc_cli("evaluate", run_dir, "--root", project, cwd=project.parent / "elsewhere", timeout=240)
    assert evaluated.returncode == 0, evaluated.stderr[-4000:]
    assert "validation split  loss" in evaluated.stdout
    after = [json.loads(line) for line in (project.parent / "train.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(after) > built and after[-1]["file"] == models


def test_an_objective_imported_from_the_working_dir_runs_its_trials(project):
    """The driver checks the objective imports, then each Tune trial imports lab/search.py in its own process."""
    run_dir, records = validated_and_run(project, "search", OBJECTIVE)
    assert {record["file"] for record in records} == {str(project / "lab" / "search.py")}
    with open(run_dir / "results.csv", newline="", encoding="utf-8") as handle:
        trials = list(csv.DictReader(handle))
    assert len(trials) == 2 and all(trial["status"] == "completed" for trial in trials), trials
    assert len(records) == 2  # called once by each trial (the driver imports it, and calls nothing)
