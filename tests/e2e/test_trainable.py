"""objective.trainable (SPEC §13): a ray.tune.Trainable class of the project searched for real. A search finds the
known optimum's neighbourhood and keeps the best trial's checkpoint; PBT moves trials onto other trials' state
through the class's save_checkpoint/load_checkpoint; a search whose driver is killed resumes each trial from the
class's last checkpoint. And conditional objective.params searched by optuna (define-by-run) and hyperopt (nested
hp.choice): each trial's function sees only its option's fields (fixtures/trainable_bowl.py)."""

from __future__ import annotations

import contextlib
import csv
import json
import math
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from .conftest import PYTHON, compile_spec, read_best, run_spec, subprocess_env

pytestmark = pytest.mark.slow

BOWL = """\
specc: 1
name: {name}
objective:
  trainable: trainable_bowl:{cls}
  params: {{x: 0.0, y: 0.0, sleep: {sleep}}}
  metrics: [step, loss, restored_at]
  max_steps: {steps}
  checkpoint_every: {every}
tune:
  metric: loss
  mode: min
  num_samples: {samples}
  max_concurrent_trials: {at_once}
  search: {{type: random, seed: 5}}
  space: {{objective.params.x: {{uniform: [0, 6]}}, objective.params.y: {{uniform: [-3, 1]}}}}
run: {{callbacks: [csv, json]}}
"""
SHAPES = """\
specc: 1
name: shapes-{search}
objective:
  function: trainable_bowl:shapes
  params: {{steps: 3, shape: {{kind: plane, level: 0.0}}, label: kept}}
  metrics: [step, loss, kind, params, shape_keys]
  max_steps: 3
tune:
  metric: loss
  mode: min
  num_samples: 8
  max_concurrent_trials: 2
  search: {searcher}
  space:
    objective.params.shape:
      choice:
        - {{kind: bowl, x: {{uniform: [0, 6]}}}}
        - {{kind: plane, level: {{uniform: [0, 1]}}}}
run: {{callbacks: [csv, json]}}
"""
FIXTURE = Path(__file__).parent / "fixtures" / "trainable_bowl.py"


def loss_at(x, y, step):
    return (x - 3) ** 2 + (y + 1) ** 2 + 1 / step


def project(root: Path, spec_text: str, name: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(FIXTURE, root / "trainable_bowl.py")
    spec = root / f"{name}.yaml"
    spec.write_text(spec_text, encoding="utf-8")
    return spec


def rows_of(run_dir) -> list[dict]:
    with open(Path(run_dir) / "results.csv", newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def reports(trial_dir: Path) -> list[dict]:
    path = trial_dir / "result.json"
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    return [json.loads(line) for line in lines if line.strip()]


def test_a_trainable_class_search_finds_the_optimum_and_keeps_its_checkpoint(tmp_path, local_ray):
    """Random search of 6 trials of a Trainable class (imported from a directory the trials do not have on their
    path: it travels by value; with reset_config, one process takes trial after trial): each makes its 4 steps,
    the best is the sampled point nearest the bowl's bottom, and best.json names its checkpoint, saved by the class
    (checkpoint_every 2)."""
    text = BOWL.format(name="bowl-class", cls="ReusedBowl", sleep=0, steps=4, every=2, samples=6, at_once=2)
    spec = project(tmp_path / "project", text, "bowl")
    result = run_spec(spec, storage_path=tmp_path / "runs", quiet=True)
    run_dir = tmp_path / "runs" / "bowl-class"
    rows = rows_of(run_dir)
    assert (
        len(rows) == 6 and {row["status"] for row in rows} == {"completed"} and {row["steps"] for row in rows} == {"4"}
    )
    for row in rows:  # the class got the sampled params: its loss is the bowl's at them
        x, y = float(row["objective.params.x"]), float(row["objective.params.y"])
        assert math.isclose(float(row["last_loss"]), loss_at(x, y, 4), rel_tol=1e-6)
    nearest = min(rows, key=lambda row: loss_at(float(row["objective.params.x"]), float(row["objective.params.y"]), 4))
    best = read_best(run_dir)
    assert best["trial_id"] == nearest["trial_id"] and result.metrics == best["metrics"]
    x, y = best["config"]["objective.params.x"], best["config"]["objective.params.y"]
    assert math.hypot(x - 3, y + 1) < 1.5, best  # seed 5's nearest point: (3.09, -1.86)
    assert best["checkpoint"] and (Path(best["checkpoint"]) / "state.json").exists()
    assert json.loads((Path(best["checkpoint"]) / "state.json").read_text())["steps"] == 4  # at the end, the best


def test_a_failed_trial_of_a_class_is_retried_from_its_last_checkpoint(tmp_path, local_ray):
    """run.max_failures 1: the class (no reset_config: a process per trial) raises at step 3 once; Tune starts it
    again from its step-2 checkpoint (load_checkpoint), not from scratch, and the trial completes its 4 steps."""
    text = BOWL.format(name="retried", cls="Bowl", sleep=0, steps=4, every=1, samples=1, at_once=1)
    text = text.replace("sleep: 0}", f'sleep: 0, crash: {{at: 3, armed: "{tmp_path / "crashed"}"}}}}')
    text = text.replace("run: {callbacks: [csv, json]}", "run: {callbacks: [csv, json], max_failures: 1}")
    spec = project(tmp_path / "project", text, "retried")
    run_spec(spec, storage_path=tmp_path / "runs", quiet=True)
    run_dir = tmp_path / "runs" / "retried"
    (row,) = rows_of(run_dir)
    assert (row["status"], row["steps"]) == ("completed", "4") and (tmp_path / "crashed").exists()
    history = reports(run_dir / f"trial_{row['trial_id']}")
    assert [r["step"] for r in history] == [1, 2, 3, 4]  # step 3 reported once: after the retry
    assert [r["restored_at"] for r in history] == [0, 0, 2, 2]  # the retry went on from the step-2 checkpoint


@pytest.mark.in_turn(3)  # PBT over a class pauses and restores actors: ~40 s here
def test_pbt_over_a_trainable_class_copies_state_and_perturbs_lr(tmp_path, local_ray):
    """specs/objective_trainable.yaml, 8 steps: PBT every 4 steps saves top trials with save_checkpoint and loads
    them into bottom ones with load_checkpoint, with a perturbed lr; every trial reaches step 8."""
    root = Path(__file__).parents[2]
    (tmp_path / "factories").mkdir()
    shutil.copy(root / "specs" / "factories" / "objectives.py", tmp_path / "factories" / "objectives.py")
    spec = shutil.copy(root / "specs" / "objective_trainable.yaml", tmp_path / "objective_trainable.yaml")
    overrides = ("objective.params.steps=8", "objective.max_steps=8")
    run_spec(spec, *overrides, storage_path=tmp_path / "runs", quiet=True)
    run_dir = tmp_path / "runs" / "objective-trainable"
    rows = rows_of(run_dir)
    assert (
        len(rows) == 4 and {row["status"] for row in rows} == {"completed"} and {row["steps"] for row in rows} == {"8"}
    )
    perturbed = 0
    for row in rows:
        history = reports(run_dir / f"trial_{row['trial_id']}")
        steps = [report["training_iteration"] for report in history]
        assert steps == sorted(set(steps)) and steps[-1] == 8, steps
        lrs = [report["lr"] for report in history]
        perturbed += sum(lrs[i] != lrs[i - 1] for i in range(1, len(lrs)))
    assert perturbed >= 1  # PBT gave some trial a donor's state and a new lr
    assert read_best(run_dir)["metrics"]["mean_accuracy"] == max(float(row["best_mean_accuracy"]) for row in rows)


@pytest.mark.in_turn(3)
def test_pb2_over_a_trainable_class_explores_lr_inside_its_bounds(tmp_path, local_ray):
    """The same class under PB2: every 4 steps the bottom trials take a top trial's state and an lr the Gaussian
    process picks inside scheduler.bounds."""
    root = Path(__file__).parents[2]
    (tmp_path / "factories").mkdir()
    shutil.copy(root / "specs" / "factories" / "objectives.py", tmp_path / "factories" / "objectives.py")
    text = (root / "specs" / "objective_trainable.yaml").read_text(encoding="utf-8")
    text = text.replace("  type: pbt\n", "  type: pb2\n").replace("  mutations:\n", "  bounds:\n")
    text = text.replace(
        "objective.params.lr: {loguniform: [1.0e-3, 1.0]}\n\nrun", "objective.params.lr: [1.0e-3, 1.0]\n\nrun"
    )
    spec = tmp_path / "pb2.yaml"
    spec.write_text(text, encoding="utf-8")
    run_spec(spec, storage_path=tmp_path / "runs", quiet=True)
    run_dir = tmp_path / "runs" / "objective-trainable"
    rows = rows_of(run_dir)
    assert (
        len(rows) == 4 and {row["status"] for row in rows} == {"completed"} and {row["steps"] for row in rows} == {"20"}
    )
    lrs = [report["lr"] for row in rows for report in reports(run_dir / f"trial_{row['trial_id']}")]
    assert all(1.0e-3 <= lr <= 1.0 for lr in lrs)
    assert len(set(lrs)) > 4  # PB2 gave some trial a new lr


@pytest.mark.in_turn(3)  # two drivers of their own Ray, one killed: ~60 s here
def test_a_killed_trainable_search_resumes_from_the_class_checkpoints(tmp_path):
    """The compiled script is SIGKILLed mid-search (one trial done, the next a few steps in); --resume finishes
    every trial, the finished one untouched, the interrupted one loaded from its last checkpoint (load_checkpoint)
    rather than started over."""
    steps, samples = 6, 3
    text = BOWL.format(name="killed", cls="Bowl", sleep=0.4, steps=steps, every=1, samples=samples, at_once=1)
    spec = project(tmp_path / "project", text, "killed")
    script = compile_spec(spec, tmp_path / "project" / "killed.py")
    storage, run_dir = tmp_path / "runs", tmp_path / "runs" / "killed"
    trials = lambda: sorted(run_dir.glob("trial_*")) if run_dir.is_dir() else []  # noqa: E731
    done_trials = lambda: [t for t in trials() if len(reports(t)) == steps]  # noqa: E731
    process = subprocess.Popen(
        [PYTHON, str(script), "--storage-path", str(storage)],
        cwd=tmp_path,
        env=subprocess_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 240
        while not (done_trials() and any(2 <= len(reports(t)) < steps - 1 for t in trials())):
            assert process.poll() is None, "the search ended before it could be interrupted"
            assert time.monotonic() < deadline, "no trial finished within 240 s"
            time.sleep(0.2)
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
    finally:
        with contextlib.suppress(ProcessLookupError):  # what is left of its process group: its Ray
            os.killpg(process.pid, signal.SIGKILL)
    finished = {t.name: reports(t) for t in done_trials()}
    assert finished and not (run_dir / "results.csv").exists()
    done = subprocess.run(
        [PYTHON, str(script), "--storage-path", str(storage), "--resume", "--quiet"],
        cwd=tmp_path,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    rows = rows_of(run_dir)
    assert len(rows) == samples and {row["status"] for row in rows} == {"completed"}
    assert {row["steps"] for row in rows} == {str(steps)}
    for name, history in finished.items():
        assert reports(run_dir / name) == history  # not run again
    resumed = [t for t in trials() if t.name not in finished and any(r["restored_at"] for r in reports(t))]
    assert resumed, "no trial was loaded from its checkpoint"
    for trial in resumed:
        history = reports(trial)
        restored = next(r for r in history if r["restored_at"])
        assert restored["step"] == restored["restored_at"] + 1  # it went on from the checkpoint's step
        assert history[-1]["step"] == steps


@pytest.mark.parametrize(
    ("search", "searcher"),
    [("optuna", "{type: optuna, seed: 3}"), ("hyperopt", "{type: hyperopt, seed: 3, n_initial_points: 4}")],
)
def test_a_conditional_objective_space_gives_each_trial_only_its_option(tmp_path, local_ray, search, searcher):
    spec = project(tmp_path / "project", SHAPES.format(search=search, searcher=searcher), search)
    run_spec(spec, storage_path=tmp_path / "runs", quiet=True)
    run_dir = tmp_path / "runs" / f"shapes-{search}"
    rows = rows_of(run_dir)
    assert len(rows) == 8 and {row["status"] for row in rows} == {"completed"}
    shapes = {}
    for row in rows:
        last = reports(run_dir / f"trial_{row['trial_id']}")[-1]
        assert last["params"] == "label shape steps"  # no parameter by the searcher's own name
        assert last["shape_keys"] == ("kind x" if last["kind"] == "bowl" else "kind level")
        shapes[row["trial_id"]] = last["config"]["shape"]
    assert {shape["kind"] for shape in shapes.values()} == {"bowl", "plane"}
    best = read_best(run_dir)
    shape = best["config"]["objective.params.shape"]
    bowls = {trial: shape for trial, shape in shapes.items() if shape["kind"] == "bowl"}
    nearest = min(bowls, key=lambda trial: abs(bowls[trial]["x"] - 3))
    assert shape == bowls[nearest] and best["trial_id"] == nearest, best  # any bowl beats every plane
    assert abs(shape["x"] - 3) < 2, best
