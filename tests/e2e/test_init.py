"""Every starter of `specc init` trains as written: a --smoke run of each on the session's local Ray. The single-run
starters run in Ray Train's local mode, as test_examples_smoke runs the examples: written for 2 workers, they compile
to the shape of specs/digits_mlp.yaml (test_console runs it on 2 workers) and of test_tensorflow's 2-worker runs, and
their Train workers cost a minute of CI for nothing those do not check."""

from __future__ import annotations

import os

import pytest

from specc.cli import main
from specc.results.run_dir import read_run

from .conftest import read_results, run_spec

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("framework", ["torch", "tensorflow"])
@pytest.mark.parametrize("tune", [False, True], ids=["single-run", "with-tune"])
def test_the_starter_smoke_runs(tmp_path, monkeypatch, local_ray, framework, tune):
    monkeypatch.chdir(tmp_path)
    assert main(["init", "starter", "--framework", framework, *(["--with-tune"] if tune else [])]) == 0

    local_mode = [] if tune else ["scaling.num_workers=0"]
    result = run_spec(tmp_path / "starter.yaml", *local_mode, storage_path=tmp_path / "runs", smoke=True)

    assert result.run_dir == str(tmp_path / "runs" / "starter")
    if tune:
        run = read_run(result.run_dir)
        assert len(run.rows) == 1 and run.rows[0]["status"] == "completed" and run.rows[0]["epochs"] == 1
        assert "val_accuracy" in result.metrics and os.path.isdir(result.checkpoint)
    else:
        header, rows = read_results(result.run_dir)
        assert header == ["epoch", "train_loss", "val_loss", "val_accuracy", "num_parameters"]
        assert [row["epoch"] for row in rows] == [1]
