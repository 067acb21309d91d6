"""specs/digits_cnn_blocks.yaml for real, torch and tensorflow (SPEC §12): valid padding, batch norm and stride-1
pools build and train in both frameworks, with the same metric names on both; torch's on its 2 Ray Train workers
(DistributedDataParallel over batch norm, the global batch shared by them), Keras' in Ray Train's local mode: a Keras
run on 2 workers is test_tensorflow's, and its worker group cost this module 30 s of CI for no other line."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import read_results, run_spec

pytestmark = pytest.mark.slow

SPEC = Path(__file__).resolve().parents[2] / "specs" / "digits_cnn_blocks.yaml"


# torch's in turn (tests/e2e/conftest.py): Keras' blocks train here every time, and tests/unit builds both frameworks'
# blocks and counts their parameters
@pytest.mark.parametrize(
    ("framework", "workers"), [pytest.param("torch", 2, marks=pytest.mark.in_turn(4)), ("tensorflow", 0)]
)
def test_cnn_blocks_learn_digits(local_ray, tmp_path, framework, workers):
    overrides = [f"framework={framework}", "training.epochs=3", f"scaling.num_workers={workers}"]
    result = run_spec(SPEC, *overrides, storage_path=tmp_path / "runs")
    header, rows = read_results(Path(result.run_dir))
    assert header == ["epoch", "train_loss", "val_loss", "val_accuracy", "num_parameters"]
    assert [row["epoch"] for row in rows] == [1, 2, 3]
    assert rows[-1]["val_accuracy"] >= 0.8  # ten classes: chance is 0.1
    assert rows[-1]["train_loss"] < rows[0]["train_loss"]
