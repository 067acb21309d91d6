"""`python script.py` and `specc run` are the same program (SPEC §1): same spec and seed, same results."""

from __future__ import annotations

import pytest

from .conftest import compile_spec, python_script, read_best, read_results, run_spec

pytestmark = pytest.mark.slow

SPEC = """\
specc: 1
name: parity
framework: torch
model: {type: mlp, hidden_sizes: [32], activation: relu}
dataset: {type: digits, batch_size: 64, validation_fraction: 0.2, shuffle_seed: 3}
training:
  epochs: 3
  optimizer: {type: sgd, lr: 0.05, momentum: 0.9}
  metrics: [accuracy]
  seed: 11
scaling: {num_workers: 0}
run: {storage_path: ./runs}
"""

METRICS = ["epoch", "train_loss", "val_loss", "val_accuracy", "num_parameters"]


@pytest.fixture(scope="module")
def both_runs(tmp_path_factory, local_ray):
    """The spec compiled and run as a subprocess (its own Ray), and run in-process by specc (the session Ray)."""
    root = tmp_path_factory.mktemp("parity")
    spec = root / "parity.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    script = compile_spec(spec, root / "parity.py")
    done = python_script(script, "--storage-path", root / "script-runs", cwd=root)
    assert done.returncode == 0, done.stderr[-3000:]
    result = run_spec(spec, storage_path=str(root / "specc-runs"))
    return root / "script-runs" / "parity", root / "specc-runs" / "parity", result


def test_script_and_specc_run_give_the_same_metrics(both_runs):
    script_dir, specc_dir, result = both_runs
    script_header, script_rows = read_results(script_dir)
    specc_header, specc_rows = read_results(specc_dir)

    assert script_header == specc_header == METRICS
    assert [row["epoch"] for row in script_rows] == [row["epoch"] for row in specc_rows] == [1, 2, 3]
    # Same program, same seed, same machine: equal to float precision (bit-identical in practice).
    assert script_rows == [pytest.approx(row, rel=1e-6, abs=1e-7) for row in specc_rows]
    assert read_best(script_dir)["metrics"] == pytest.approx(read_best(specc_dir)["metrics"], rel=1e-6, abs=1e-7)
    assert result.metrics == pytest.approx(read_best(specc_dir)["metrics"])
    assert result.run_dir == str(specc_dir)


def test_both_runs_keep_the_reviewed_source(both_runs):
    """What you review is what runs: both run directories keep the compiled file's exact text."""
    script_dir, specc_dir, _ = both_runs
    compiled = (script_dir.parents[1] / "parity.py").read_text(encoding="utf-8")
    assert (script_dir / "script.py").read_text(encoding="utf-8") == compiled
    assert (specc_dir / "script.py").read_text(encoding="utf-8") == compiled


def test_the_run_directories_hold_the_same_artefacts(both_runs):
    """SPEC §8: a run directory holds spec.resolved.yaml and script.py, however the run was started."""
    script_dir, specc_dir, _ = both_runs
    wanted = {"script.py", "spec.resolved.yaml", "results.csv", "best.json"}
    assert wanted <= {p.name for p in specc_dir.iterdir()}
    assert wanted - {p.name for p in script_dir.iterdir()} == set()
