"""Every starter of `specc init` trains as written: a --smoke run of each on the session's local Ray."""

from __future__ import annotations

import pytest

from specc.cli import main

from .conftest import read_results, run_spec

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("framework", ["torch", "tensorflow"])
@pytest.mark.parametrize("tune", [False, True], ids=["single-run", "with-tune"])
def test_the_starter_smoke_runs(tmp_path, monkeypatch, local_ray, framework, tune):
    monkeypatch.chdir(tmp_path)
    assert main(["init", "starter", "--framework", framework, *(["--with-tune"] if tune else [])]) == 0

    result = run_spec(tmp_path / "starter.yaml", storage_path=tmp_path / "runs", smoke=True)

    assert result.run_dir == str(tmp_path / "runs" / "starter")
    if tune:
        assert result.metrics["val_accuracy"] >= 0.0 and result.checkpoint
    else:
        header, rows = read_results(result.run_dir)
        assert header == ["epoch", "train_loss", "val_loss", "val_accuracy"] and [row["epoch"] for row in rows] == [0]
