"""A repeated search's results (tune.repeat, Ray's Repeater): each trial trained from training.seed + the index Ray
gave its repeat, and results.csv and best.yaml say which, so that `specc run best.yaml` retrains the repeat that was
best, not the config's first. Built from Ray's own tune.Result objects, as the script passes them (no Ray started)."""

from __future__ import annotations

import csv
import io

import pandas as pd
import specc_runtime
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from ray.tune import Result
from ray.tune.search.repeater import TRIAL_INDEX

RESOLVED = """\
specc: 1
name: repeated
framework: torch
model: {type: mlp, hidden_sizes: [8]}
dataset: {type: iris}
training: {epochs: 2, seed: 7, optimizer: {type: sgd, lr: 0.1}}
tune: {metric: val_loss, mode: min, num_samples: 4, repeat: 2, search: {type: optuna, seed: 1}}
run: {name: repeated, checkpoint_score: null}
"""
CONFIG = {"training": {"epochs": 2, "seed": 7, "optimizer": {"type": "sgd", "lr": 0.1}}}


def search(paths=("training.optimizer.lr",)):
    return {
        "metric": "val_loss",
        "mode": "min",
        "reported": ["epoch", "val_loss"],
        "paths": lambda: list(paths),
        "repeat": True,
    }


def trial(name, sampled, losses):
    history = pd.DataFrame([{"epoch": n, "val_loss": loss} for n, loss in enumerate(losses, start=1)])
    metrics = {**history.iloc[-1].to_dict(), "config": sampled}
    return Result(metrics=metrics, checkpoint=None, error=None, path=f"/runs/trial_{name}", metrics_dataframe=history)


def written(tmp_path, trials, paths=("training.optimizer.lr",)):
    summary, _ = specc_runtime.write_search_results(str(tmp_path), trials, CONFIG, search(paths), RESOLVED)
    rows = list(csv.DictReader(io.StringIO((tmp_path / "results.csv").read_text(encoding="utf-8"))))
    return summary, rows, yaml.safe_load((tmp_path / "best.yaml").read_text(encoding="utf-8"))


@settings(max_examples=25, deadline=None)
@given(
    losses=st.lists(st.floats(0.01, 5.0), min_size=4, max_size=4, unique=True),
    seed=st.none() | st.integers(0, 2**20),
)
def test_each_repeat_is_recorded_with_the_seed_it_trained_from(tmp_path_factory, losses, seed):
    """Two configs, two repeats each; the spec's seed, or a searched one: the best repeat's seed is best.yaml's."""
    paths = ("training.optimizer.lr",) if seed is None else ("training.optimizer.lr", "training.seed")
    base = 7 if seed is None else seed
    trials = [
        trial(
            f"{config}{index}",
            {"training.optimizer.lr": lr, TRIAL_INDEX: index, **({} if seed is None else {"training.seed": seed})},
            [2 * loss, loss],
        )
        for (config, lr), index, loss in zip(
            [("a", 0.01), ("a", 0.01), ("b", 0.2), ("b", 0.2)], [0, 1, 0, 1], losses, strict=True
        )
    ]
    summary, rows, best = written(tmp_path_factory.mktemp("run"), trials, paths)
    assert [int(row["training.seed"]) for row in rows] == [base, base + 1, base, base + 1]
    winner = min(range(4), key=losses.__getitem__)
    assert summary["trial_id"] == "ab"[winner // 2] + str(winner % 2)
    assert summary["config"]["training.seed"] == base + winner % 2
    assert best["training"]["seed"] == base + winner % 2  # `specc run best.yaml` trains the winning repeat
    assert best["training"]["optimizer"]["lr"] == [0.01, 0.2][winner // 2]


def test_a_trial_that_failed_before_reporting_keeps_its_row(tmp_path):
    failed = Result(metrics={"trial_id": "x0"}, checkpoint=None, error=RuntimeError("boom"), path="/runs/trial_x0")
    done = trial("y0", {"training.optimizer.lr": 0.1, TRIAL_INDEX: 1}, [0.9, 0.5])
    _, rows, best = written(tmp_path, [failed, done])
    assert [row["status"] for row in rows] == ["error", "completed"]
    assert [row["training.seed"] for row in rows] == ["", "8"]
    assert best["training"]["seed"] == 8
