"""specs/digits_cnn_blocks.yaml for real on 2 Ray Train workers, torch and tensorflow (SPEC §12): valid padding,
batch norm and stride-1 pools build and train in both frameworks, a global batch shared by the workers, the same
metric names on both."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import read_results, run_spec

pytestmark = pytest.mark.slow

SPEC = Path(__file__).resolve().parents[2] / "specs" / "digits_cnn_blocks.yaml"


@pytest.mark.parametrize("framework", ["torch", "tensorflow"])
def test_cnn_blocks_learn_digits_on_two_workers(local_ray, tmp_path, framework):
    result = run_spec(SPEC, f"framework={framework}", "training.epochs=3", storage_path=tmp_path / "runs")
    header, rows = read_results(Path(result.run_dir))
    assert header == ["epoch", "train_loss", "val_loss", "val_accuracy", "num_parameters"]
    assert [row["epoch"] for row in rows] == [0, 1, 2]
    assert rows[-1]["val_accuracy"] >= 0.8  # ten classes: chance is 0.1
    assert rows[-1]["train_loss"] < rows[0]["train_loss"]
