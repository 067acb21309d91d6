"""PBT's explore step on a real local Ray: a choice (compiled to a plain list) stays inside its set, and a
perturbed number is kept inside its field's bounds by the script's keep_in_bounds (SPEC §12)."""

from __future__ import annotations

import pytest

from .test_tune import (
    checkpoint_states,
    exploited_trials,
    exploits,
    spec_text,
    start_search,
    trial_dirs,
    trial_index,
)

pytestmark = pytest.mark.slow

# Two trials, synchronous PBT every epoch, never resampling: each exploit shifts momentum to a neighbour in its list
# and multiplies dropout by 1.2 or 0.8. Dropout starts at 0.29 / 0.28, so x1.2 (0.35) needs keep_in_bounds (0.3).
MUTATIONS = """\
tune:
  metric: val_accuracy
  mode: max
  num_samples: 1
  max_concurrent_trials: 2
  search: {type: random, seed: 0}
  space:
    training.optimizer.lr: {grid: [0.002, 0.2]}
    model.dropout: {uniform: [0.28, 0.29]}
scheduler:
  type: pbt
  perturbation_interval: 1
  quantile_fraction: 0.5
  synch: true
  resample_probability: 0.0
  mutations:
    training.optimizer.momentum: {choice: [0.8, 0.9, 0.99]}
    model.dropout: {uniform: [0.0, 0.3]}
stop: {time_budget_s: 150}
"""
EPOCHS = 4


@pytest.fixture(scope="module")
def pbt_mutations(tmp_path_factory, local_ray):
    text = spec_text("pbt-mutations", MUTATIONS, epochs=EPOCHS, keep=EPOCHS)
    return start_search(tmp_path_factory, "pbt-mutations", text)


def test_explored_values_stay_in_their_set_and_bounds(pbt_mutations):
    _spec, run_dir, _ = pbt_mutations
    script = (run_dir / "script.py").read_text(encoding="utf-8")
    assert '"training.optimizer.momentum": [0.8, 0.9, 0.99],' in script
    assert "custom_explore_fn=keep_in_bounds," in script
    steps = exploits(run_dir)
    assert steps, "PBT never exploited"
    for step in steps:  # [target, donor, target iteration, donor iteration, donor config, new config]
        donor, explored = step[4], step[5]
        assert explored["training.optimizer.momentum"] in (0.8, 0.9, 0.99), step
        assert 0 <= explored["model.dropout"] <= 0.3, step
        # never resampled: a neighbour in the list, and dropout x1.2 / x0.8 (or stopped at 0.3)
        assert explored["model.dropout"] in (
            pytest.approx(min(donor["model.dropout"] * 1.2, 0.3)),
            pytest.approx(donor["model.dropout"] * 0.8),
        ), step


# -- PBT over trials that each drive a 2-worker Ray Train run ------------------------------------------------------

# Two trials far apart (lr 0.002 vs 0.2), each a Train run on 2 workers (0.1 + 2 x 0.4 CPU: both fit on 2 CPUs);
# synchronous PBT after every epoch: the weak trial continues from the strong one's Train checkpoint.
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
  perturbation_interval: 1
  quantile_fraction: 0.5
  synch: true
  mutations:
    training.optimizer.lr: {loguniform: [1.0e-3, 0.3]}
stop: {time_budget_s: 240}
"""
TRAIN_EPOCHS = 3


@pytest.fixture(scope="module")
def train_pbt(tmp_path_factory, local_ray):
    text = spec_text("pbt-train", TRAIN_PBT, epochs=TRAIN_EPOCHS, keep=TRAIN_EPOCHS, scaling=TWO_WORKERS)
    return start_search(tmp_path_factory, "pbt-train", text)


def test_pbt_over_train_runs_continues_from_the_donors_train_checkpoint(train_pbt):
    """The weak trial's last checkpoint carries the donor's first epoch and goes on to the last epoch: after the
    exploit its new Train run (named -from-<checkpoint>) started from the donor's weights and epoch."""
    _, run_dir, _result = train_pbt
    script = (run_dir / "script.py").read_text(encoding="utf-8")
    assert "ReportToTrial(reports)" in script and "TuneReportCallback()" not in script
    steps = exploits(run_dir)
    assert steps, "PBT never exploited"
    first = steps[0]
    weak = next(t for t in trial_dirs(run_dir) if trial_index(t) == int(first[0].split("_")[0]))
    strong = next(t for t in trial_dirs(run_dir) if t != weak)
    assert weak in exploited_trials(run_dir)
    weak_states, strong_states = checkpoint_states(run_dir, weak), checkpoint_states(run_dir, strong)
    assert weak_states and strong_states, sorted(p.name for p in run_dir.rglob("*"))[:50]
    own = weak_states[0]["history"][0]["val_accuracy"]  # the weak trial's own epoch 0 (lr 0.002)
    donor = strong_states[-1]["history"][0]["val_accuracy"]  # the donor's epoch 0
    last = weak_states[-1]["history"]
    assert [row["epoch"] for row in last] == list(range(TRAIN_EPOCHS))
    assert last[0]["val_accuracy"] == donor != own  # it carries the donor's past, not its own
    assert last[-1]["val_accuracy"] > own + 0.3  # the donor's weights, trained on
    started_from = [path.name for path in run_dir.glob("train-trial_id=*-from-*")]  # the Train runs under the run
    assert started_from, sorted(path.name for path in run_dir.iterdir())
