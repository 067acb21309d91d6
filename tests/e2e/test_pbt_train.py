"""PBT over trials that each drive a 2-worker Ray Train run, on a real local Ray, as Ray's
tune_cifar_torch_pbt_example.py does: each trial reports its Train checkpoints to Tune, and a trial that PBT makes
exploit another starts a new Train run from the donor's checkpoint (SPEC §12, issue 18 item 4).

The checkpoints' own record of what was trained (state.pt: epoch, history, optimizer) are the witnesses.

Torch only, to keep CI within its budget: the Keras variant cost 104 s. What it tried that this does not is the two
lines of templates/tensorflow/training.py.j2 that read config["start_from"], which
tests/unit/compiler/test_pbt_mutations.py runs in Ray Train's local mode (a trained model as the checkpoint); the
Keras checkpoint read after them is test_tensorflow's resume, and a trial driving a Keras Trainer is test_tensorflow's
too. ReportToTrial and the exploit's new Train run are one template for both frameworks."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from .test_tune import (
    deadline,
    exploited_trials,
    exploits,
    spec_text,
    start_search,
    trial_dirs,
    trial_index,
    trial_rows,
)

# CI runs this module in turn (share 2, tests/e2e/conftest.py): PBT over 2-worker Train runs
pytestmark = [pytest.mark.slow, pytest.mark.in_turn(2)]

# Two trials far apart (lr 0.002 vs 0.2), each a Train run on 2 workers (0.1 + 2 x 0.4 CPU: both fit on 2 CPUs at
# once); synchronous PBT at epoch 2: the weak trial continues from the strong one's Train checkpoint, in a new Train
# run whose placement group can only start once the stopped runs' groups are freed.
TWO_WORKERS = "{num_workers: 2, resources_per_worker: {CPU: 0.4}}"
TRAIN_PBT = """\
tune:
  metric: val_accuracy
  mode: max
  num_samples: 1
  max_concurrent_trials: 2
  search: {type: random, seed: 0}
  space:
    training.optimizer.lr: {grid: [0.002, 0.2]}
scheduler:
  type: pbt
  perturbation_interval: 2
  quantile_fraction: 0.5
  synch: true
  resample_probability: 0.0
  mutations:
    training.optimizer.lr: {loguniform: [1.0e-3, 0.3]}
stop: {time_budget_s: 400}  # a trial that hangs leaves synchronous PBT waiting for it: end the search instead
"""
TRAIN_EPOCHS = 3  # one exploit, at epoch 2 (a 4th epoch paused and restarted both trials again, for nothing new)


@pytest.fixture(scope="module")
def train_pbt(tmp_path_factory, local_ray):
    """(run directory, result, seconds the search took)."""
    name = "pbt-train-torch"
    text = spec_text(name, TRAIN_PBT, epochs=TRAIN_EPOCHS, keep=TRAIN_EPOCHS, scaling=TWO_WORKERS)
    started = time.monotonic()
    with deadline(600):
        _spec, run_dir, result = start_search(tmp_path_factory, name, text)
    seconds = time.monotonic() - started
    print(f"pbt over 2 trials x 2-worker torch Train runs: {seconds:.1f} s")
    return run_dir, result, seconds


def states(paths) -> list[dict]:
    """Each checkpoint's state.pt, in order: epoch, history, the model's and the optimizer's state."""
    import torch

    checkpoints = filter(Path.is_dir, paths)  # not checkpoint_manager_snapshot.json
    return [torch.load(path / "state.pt", map_location="cpu", weights_only=False) for path in checkpoints]


def test_every_trial_ends_with_all_its_epochs(train_pbt):
    run_dir, result, seconds = train_pbt
    script = (run_dir / "script.py").read_text(encoding="utf-8")
    assert "tune.report(metrics, checkpoint=checkpoint)" in script and "TuneReportCallback()" not in script
    rows = trial_rows(run_dir)
    assert [(row["status"], row["epochs"]) for row in rows] == [("completed", TRAIN_EPOCHS)] * 2, rows
    assert seconds < 400  # not ended by stop.time_budget_s
    assert Path(result.checkpoint).parent.name.startswith("train-trial_id=")  # the best trial's Train checkpoint
    assert states([Path(result.checkpoint)])[0]["epoch"] == TRAIN_EPOCHS  # epochs count from 1: the last


def test_the_exploiting_trial_continues_from_the_donors_train_checkpoint(train_pbt):
    """The weak trial's last checkpoint carries the donor's first epochs and goes on to the last epoch: after the
    exploit its new Train run (named -from-<checkpoint>) started from the donor's weights and epoch."""
    run_dir, _result, _seconds = train_pbt
    steps = exploits(run_dir)
    assert steps, "PBT never exploited"
    first = steps[0]
    weak = next(t for t in trial_dirs(run_dir) if trial_index(t) == int(first[0].split("_")[0]))
    strong = next(t for t in trial_dirs(run_dir) if t != weak)
    assert weak in exploited_trials(run_dir)
    assert int(first[1].split("_")[0]) == trial_index(strong)
    assert first[4] == {"training.optimizer.lr": 0.2}  # the donor's config: the strong trial's

    # The trials' Tune checkpoints (Tune's copies of the Train checkpoints each trial reported)
    weak_states = states(sorted((run_dir / f"trial_{weak}").glob("checkpoint_*")))
    strong_states = states(sorted((run_dir / f"trial_{strong}").glob("checkpoint_*")))
    assert weak_states and strong_states, sorted(p.name for p in run_dir.rglob("*"))[:50]
    epochs = [state["epoch"] for state in weak_states]
    assert epochs[0] == 1 and epochs[-1] == TRAIN_EPOCHS
    assert epochs == sorted(set(epochs)), f"the weak trial's checkpoints are at epochs {epochs}"
    own = weak_states[0]["history"][0]["val_accuracy"]  # the weak trial's own epoch 1 (lr 0.002)
    donor = [row["val_accuracy"] for row in strong_states[-1]["history"][:2]]  # the donor's epochs 1 and 2
    last = weak_states[-1]["history"]
    assert [row["epoch"] for row in last] == list(range(1, TRAIN_EPOCHS + 1))
    assert [row["val_accuracy"] for row in last[:2]] == donor  # it carries the donor's past, not its own
    assert donor[0] != own
    assert last[-1]["val_accuracy"] > own + 0.3  # the donor's weights, trained on (lr 0.002 alone stays far below)
    explored = [step[5]["training.optimizer.lr"] for step in steps if step[0] == first[0]]
    lr = weak_states[-1]["optimizer"]["param_groups"][0]["lr"]
    assert any(lr == pytest.approx(value) for value in explored), (lr, explored)  # trained on with its new lr

    # Its new Train run (under the run directory, named after the Tune checkpoint it started from) reported epoch 3
    # first: it continued the donor's epoch count instead of starting again at 1
    restarted = states(sorted(run_dir.glob(f"train-trial_id={weak}-from-*/checkpoint_*")))
    assert restarted, sorted(path.name for path in run_dir.iterdir())
    assert min(state["epoch"] for state in restarted) == 3
    assert all([row["val_accuracy"] for row in state["history"][:2]] == donor for state in restarted)
