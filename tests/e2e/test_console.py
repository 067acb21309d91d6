"""A clean console (issue 16): a healthy run prints specc's own lines and nothing of Ray's, Tune's or TensorFlow's;
Ray's own output goes to ray.log in the run directory, shown live with --verbose; real problems (a worker's error,
Ray Train's retry, a failed trial) still reach the console.

Each run is `specc run` in a fresh interpreter that starts its own Ray, as a user's first run does: the session's
Ray would hide what a run prints while Ray starts (the dashboard line, Ray's token-auth warning).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from .conftest import FIXTURES, read_best, read_results, specc_cli

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
ANSI = re.compile(r"\x1b\[[0-9;]*m")
# Lines only Ray, Tune or TensorFlow write: a worker's prefix, a Python log record, C++ log lines, tracebacks.
FOREIGN = [
    re.compile(r"^\(\S*\s?pid=\S+"),  # (RayTrainWorker pid=123) ..., (pid=456) ...
    re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+\s+(DEBUG|INFO|WARNING|ERROR)"),  # logging records
    re.compile(r"^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ [IWEF] \d+"),  # Ray's C++ (core_worker.cc, ...)
    re.compile(r"^[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+ \S+\.cc:\d+\]"),  # absl/glog (TensorFlow's C++)
    re.compile(r"^WARNING: All log messages before absl"),
    re.compile(r"Traceback \(most recent call last\)"),
]
# What issue 16 saw on the console, by the words Ray, Tune and TensorFlow use.
NOISE = [
    "PlacementGroupCleaner",
    "Failed to query Ray Train Controller",
    "PreemptionWatcher",
    "Reporting training result",
    "Checkpoint successfully created",
    "Token authentication is enabled",
    "Started a local Ray instance",
    "Experiment state snapshotting",
    "oneDNN custom operations",
    "Could not find cuda drivers",
    "This TensorFlow binary is optimized",
]


def console(done) -> list[str]:
    return [ANSI.sub("", line) for line in (done.stdout + done.stderr).splitlines()]


def assert_clean(done):
    """Nothing on the console that Ray, Tune or TensorFlow wrote: neither issue 16's noise nor any line shaped
    like theirs."""
    lines = console(done)
    assert not [line for line in lines if any(words in line for words in NOISE)], "\n".join(lines)
    assert not [line for line in lines if any(pattern.search(line) for pattern in FOREIGN)], "\n".join(lines)


def test_a_train_run_prints_only_specc_and_keeps_rays_output_in_ray_log(tmp_path):
    """The README's main command, --smoke: the dashboard's address, an epoch line, the summary screen (issue 7), and
    nothing of Ray's; its workers' lines are in ray.log. (tests/e2e/test_run_output.py: the same screen alone with
    --quiet, and Ray's lines live with --verbose.)"""
    done = specc_cli(
        "run", REPO / "specs/digits_mlp.yaml", "--smoke", "--storage-path", tmp_path, cwd=tmp_path, timeout=240
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert_clean(done)
    assert re.search(
        r"^Ray: a local Ray of this run.s own, 2 CPUs; dashboard http://127\.0\.0\.1:\d+$", done.stdout, re.M
    ), done.stdout
    assert re.search(r"^digits-mlp: epoch 1/1  train_loss \S+ .* elapsed \S+", done.stdout, re.M), done.stdout
    run_dir = tmp_path / "digits-mlp"
    out = done.stdout.strip().splitlines()
    assert out[-7].startswith("digits-mlp: done in ") and out[-6] == ""
    assert out[-5].startswith("  best epoch  1 by val_accuracy")  # the console's `epoch 1/1`
    assert out[-4].startswith("  metrics     train_loss ")
    files = "results.csv, best.json, script.py, specc_runtime.py, spec.resolved.yaml, ray.log"
    assert out[-3] == f"  run dir     {run_dir} ({files})"
    assert out[-2].startswith(f"  checkpoint  {run_dir}/checkpoint_")
    assert out[-1] == f"  more        specc results {run_dir}; specc report {run_dir}; specc evaluate {run_dir}"
    assert "\033[" not in done.stdout  # not a terminal: no colour, no bar
    log = (run_dir / "ray.log").read_text(encoding="utf-8")
    assert re.search(r"^\(RayTrainWorker pid=\d+\) Reporting training result 1", log, re.M), log[-3000:]
    assert "(TrainController pid=" in log
    # Causes fixed, not hidden: Train's cleaner reaches the dashboard's state API (even with other Rays on this
    # machine), and no preemption watcher is started on a local Ray.
    for cause in ("Failed to query Ray Train Controller", "multiple active Ray instances", "PreemptionWatcher"):
        assert cause not in log


CRASHING = """\
specc: 1
name: console-retry
framework: torch
model:
  type: custom
  factory: "console_crash_models:make"
  kwargs: {{crash_at_epoch: 1, armed: "{armed}", log: "{log}"}}
dataset: {{type: digits, batch_size: 64}}
training:
  epochs: 3
  optimizer: {{type: sgd, lr: 0.05}}
  metrics: [accuracy]
  checkpoint_every: 1
scaling: {{num_workers: 1}}
run: {{max_failures: 1}}
"""


@pytest.mark.in_turn(4)  # in turn (tests/e2e/conftest.py): a run that fails on purpose; a healthy run's console above
def test_a_worker_error_and_ray_trains_retry_reach_the_console(tmp_path):
    """The model raises in the worker as its second epoch starts (run.max_failures 1): Ray Train's failure decision
    (RETRY) and the worker's error are on the console, a new worker group goes on from the last checkpoint within the
    same run, and the rest of Ray's output stays in ray.log."""
    shutil.copyfile(FIXTURES / "crash_models.py", tmp_path / "console_crash_models.py")
    (tmp_path / "armed").touch()
    spec = tmp_path / "spec.yaml"
    spec.write_text(CRASHING.format(armed=tmp_path / "armed", log=tmp_path / "epochs.log"), encoding="utf-8")
    done = specc_cli("run", spec, "--storage-path", tmp_path / "runs", cwd=tmp_path, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    text = "\n".join(console(done))
    assert re.search(r"^\(TrainController pid=\d+\) \[FailurePolicy\] RETRY", text, re.M), text
    assert "RuntimeError: simulated crash: the worker died mid-run" in text
    assert "Reporting training result" not in text
    run_dir = tmp_path / "runs" / "console-retry"
    assert "Reporting training result" in (run_dir / "ray.log").read_text(encoding="utf-8")

    pids = (tmp_path / "epochs.log").read_text(encoding="utf-8").split()  # the process that started each epoch
    assert not (tmp_path / "armed").exists()
    assert len(pids) == 4, pids  # epoch 1, the crash at epoch 2; after the restart epochs 2 and 3
    assert pids[0] == pids[1] != pids[2] == pids[3]  # a new worker process took over
    header, rows = read_results(run_dir)
    assert header == ["epoch", "train_loss", "val_loss", "val_accuracy", "num_parameters"]
    assert [row["epoch"] for row in rows] == [1, 2, 3]  # from the checkpoint of epoch 1: each epoch once
    assert read_best(run_dir)["metrics"]["epoch"] == 3


SEARCH = """\
specc: 1
name: console-search
framework: torch
model:
  type: custom
  factory: "console_crash_models:make"
  kwargs: {{crash_at_epoch: 1, armed: "{armed}", log: "{log}"}}
dataset: {{type: digits, batch_size: 64}}
training:
  epochs: 3
  optimizer: {{type: sgd, lr: 0.05}}
  metrics: [accuracy]
  checkpoint_every: 1
scaling: {{num_workers: 1}}
run: {{checkpoints_to_keep: 1, max_failures: 0}}
tune:
  metric: val_accuracy
  mode: max
  num_samples: 3
  max_concurrent_trials: 1
  search: {{type: random, seed: 0}}
  space:
    training.optimizer.lr: {{uniform: [0.01, 0.1]}}
"""


@pytest.mark.in_turn(3)  # in turn (tests/e2e/conftest.py): test_progress checks a search's console every time
def test_a_search_shows_its_failed_trial_and_none_of_tunes_warnings(tmp_path):
    """Three trials one after another, each checkpointing every epoch with one checkpoint kept (Tune's forced
    snapshots); the first trial's model raises at its second epoch. The console names the failed trial with its
    error, and carries none of Ray's or Tune's other lines."""
    shutil.copyfile(FIXTURES / "crash_models.py", tmp_path / "console_crash_models.py")
    (tmp_path / "armed").touch()
    spec = tmp_path / "spec.yaml"
    spec.write_text(SEARCH.format(armed=tmp_path / "armed", log=tmp_path / "epochs.log"), encoding="utf-8")
    done = specc_cli("run", spec, "--quiet", "--storage-path", tmp_path / "runs", cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    text = "\n".join(console(done))
    assert "RuntimeError: simulated crash: the worker died mid-run" in text
    assert re.search(r"Trial task failed for trial \S+", text), text
    lines = console(done)
    assert not [line for line in lines if any(words in line for words in NOISE)], text
    assert (tmp_path / "runs" / "console-search" / "ray.log").is_file()


@pytest.mark.in_turn(4)  # in turn: torch's console runs every time, and test_tensorflow checks a Keras driver's stderr
def test_a_tensorflow_run_prints_its_epochs_and_none_of_tensorflows_start_up_lines(tmp_path):
    """The TensorFlow example on a worker (its second worker costs 10 s of CI for no other line): its epoch line comes
    from the worker like torch's, and none of the lines TensorFlow's C++ prints as it loads (in the driver and in the
    worker) reach the console."""
    done = specc_cli(
        "run", REPO / "specs/digits_tf_cnn.yaml", "--smoke", "--set", "scaling.num_workers=1", "--storage-path",
        tmp_path, cwd=tmp_path, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert_clean(done)
    metrics = r"train_loss \S+  val_loss \S+  val_accuracy \S+  val_top5_accuracy \S+  lr \S+"  # lr: its schedule's
    epoch = rf"^digits-tf-cnn: epoch 1/1  {metrics}  elapsed"
    assert re.search(epoch, done.stdout, re.M), done.stdout
