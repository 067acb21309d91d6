"""PBT's explore step on a real local Ray: a choice (compiled to a plain list) stays inside its set, and a
perturbed number is kept inside its field's bounds by the script's keep_in_bounds (SPEC §12)."""

from __future__ import annotations

import pytest
import yaml

from .conftest import read_best
from .test_tune import exploits, spec_text, start_search, trial_rows

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
    training.optimizer.lr: {grid: [0.005, 0.05]}
    model.dropout: {uniform: [0.28, 0.29]}
scheduler:
  type: pbt
  perturbation_interval: 1
  quantile_fraction: 0.5
  synch: true
  resample_probability: 0.0
  mutations:
    training.optimizer.momentum: {choice: [0.5, 0.7, 0.9]}
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
    assert '"training.optimizer.momentum": [0.5, 0.7, 0.9],' in script
    assert "custom_explore_fn=keep_in_bounds," in script
    steps = exploits(run_dir)
    assert steps, "PBT never exploited"
    for step in steps:  # [target, donor, target iteration, donor iteration, donor config, new config]
        donor, explored = step[4], step[5]
        assert explored["training.optimizer.momentum"] in (0.5, 0.7, 0.9), step
        assert 0 <= explored["model.dropout"] <= 0.3, step
        # never resampled: a neighbour in the list, and dropout x1.2 / x0.8 (or stopped at 0.3)
        assert explored["model.dropout"] in (
            pytest.approx(min(donor["model.dropout"] * 1.2, 0.3)),
            pytest.approx(donor["model.dropout"] * 0.8),
        ), step


def test_a_path_only_mutations_names_is_listed_with_the_trials_values(pbt_mutations):
    """training.optimizer.momentum is in scheduler.mutations only: PBT draws each trial's first value into its config,
    and results.csv, best.json and best.yaml list it beside tune.space's paths (the value Ray has in the trial)."""
    _spec, run_dir, _ = pbt_mutations
    rows = trial_rows(run_dir)
    assert rows and all(row["training.optimizer.momentum"] in (0.5, 0.7, 0.9) for row in rows), rows
    best = read_best(run_dir)
    assert best["config"]["training.optimizer.momentum"] in (0.5, 0.7, 0.9)
    spec = yaml.safe_load((run_dir / "best.yaml").read_text(encoding="utf-8"))
    assert spec["training"]["optimizer"]["momentum"] == best["config"]["training.optimizer.momentum"]
