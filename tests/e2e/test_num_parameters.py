"""num_parameters (SPEC §12) on the session's real local Ray: a 2-trial search with tune.metric num_parameters (mode
min) ranks the smaller model best and stop.when ends it on its first epoch.

The same digits MLP trained by a TorchTrainer and by a TensorflowTrainer reports the trainable parameters counted by
hand and exactly the same metric names: asserted on the epoch each of test_diverged.py's Train runs trains before it
diverges. Trials that drive a 2-worker Trainer pass num_parameters on to Tune through ReportToTrial: asserted on
the searches of that shape test_tune.py (torch) and test_tensorflow.py (Keras) already run."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
import yaml

from .conftest import read_best, run_spec, specc_cli

pytestmark = pytest.mark.slow


def by_hand(hidden: int) -> int:
    """Digits: 64 pixels in, 10 classes out; Linear/Dense 64 -> hidden -> 10, each with a bias."""
    return 64 * hidden + hidden + hidden * 10 + 10


SEARCH = """\
specc: 1
name: smallest
framework: torch
model: {type: mlp, hidden_sizes: [32]}
dataset: {type: digits, batch_size: 64}
training: {epochs: 2, metrics: [accuracy]}
scaling: {num_workers: 1}
tune:
  metric: num_parameters
  mode: min
  num_samples: 1
  max_concurrent_trials: 2
  space: {model.hidden_sizes: {grid: [[32], [8]]}}
stop: {when: ["num_parameters < 1000"]}
"""


def test_a_search_by_num_parameters_picks_the_smaller_model_and_stops_it_early(tmp_path, local_ray):
    spec = tmp_path / "smallest.yaml"
    spec.write_text(SEARCH, encoding="utf-8")

    result = run_spec(spec, storage_path=tmp_path / "runs", echo=False, quiet=True)

    with open(Path(result.run_dir) / "results.csv", newline="", encoding="utf-8") as handle:
        trials = {row["model.hidden_sizes"]: row for row in csv.DictReader(handle)}
    assert {sizes: int(row["last_num_parameters"]) for sizes, row in trials.items()} == {
        "[32]": by_hand(32),
        "[8]": by_hand(8),
    }
    assert (trials["[8]"]["status"], trials["[8]"]["epochs"]) == ("stopped", "1")  # 610 < 1000 after epoch 1
    assert (trials["[32]"]["status"], trials["[32]"]["epochs"]) == ("completed", "2")
    best = read_best(result.run_dir)
    assert best["config"] == {"model.hidden_sizes": [8]} and best["metrics"]["num_parameters"] == by_hand(8) == 610
    retrain = yaml.safe_load((Path(result.run_dir) / "best.yaml").read_text(encoding="utf-8"))
    assert retrain["model"]["hidden_sizes"] == [8] and "tune" not in retrain

    done = specc_cli("results", result.run_dir, cwd=tmp_path, timeout=60)
    assert done.returncode == 0, done.stderr
    assert f"best trial: {best['trial_id']}, num_parameters 610" in done.stdout, done.stdout
