"""Issue 48 item 2: `--smoke` fits the machine it runs on. A valid spec of 2 workers x 1 CPU whose csv streams
through Ray Data needs 3 CPUs (Ray Data's reads take a whole one beside the workers); on the session's local Ray of
2 CPUs (what a small CI machine has) a full run stops with E417 before training, and `--smoke` trains it to the end
with the workers at 0.5 CPU each, saying so in one line. Real local Ray, real torch, a csv written here."""

from __future__ import annotations

import numpy as np
import pytest

from specc.spec.errors import SpecError

from .conftest import read_best, read_results, run_spec

pytestmark = pytest.mark.slow

SPEC = """\
specc: 1
name: smoke-fits
framework: torch
model: {type: mlp, hidden_sizes: [8]}
dataset: {type: csv, path: rows.csv, label: y, batch_size: 16}
training: {epochs: 4, metrics: [accuracy]}
scaling:
  num_workers: 2
  resources_per_worker: {CPU: 1}
"""


def write_rows(path, rows=200):
    """A two-class table a linear model separates: y is whether x1 + x2 > 0."""
    x = np.random.default_rng(0).normal(size=(rows, 2))
    lines = ["x1,x2,y", *(f"{a:.4f},{b:.4f},{int(a + b > 0)}" for a, b in x)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_smoke_fits_two_workers_of_one_cpu_and_ray_data_onto_two_cpus(tmp_path, local_ray, capsys):
    assert local_ray.cluster_resources()["CPU"] == 2  # the machine this test stands for
    write_rows(tmp_path / "rows.csv")
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC, encoding="utf-8")

    # --smoke runs it to the end on 2 CPUs, and says what it changed (before: E417, as the full run below)
    result = run_spec(spec, storage_path=tmp_path / "runs", smoke=True)
    out = capsys.readouterr().out
    smoke_lines = [line for line in out.splitlines() if line.startswith("--smoke: ")]
    assert smoke_lines == [
        "--smoke: 1 epoch of at most 3 batches, 0.5 CPU a worker (the spec: 1), so that Ray Data keeps 1 of the "
        "cluster's 2 CPUs"
    ], out
    assert result.status == "completed"
    _, rows = read_results(result.run_dir)
    assert len(rows) == 1 and np.isfinite(rows[0]["val_loss"])
    assert read_best(result.run_dir)["checkpoint"]

    # as written, a full run is refused before training (Ray Data would have no CPU to read with), naming what fits
    with pytest.raises(SpecError) as refused:
        run_spec(spec, storage_path=tmp_path / "full", quiet=True)
    (problem,) = refused.value.problems
    assert (problem.code, problem.path, problem.line) == ("E417", "scaling.resources_per_worker", 9)
    assert "3 CPU in all" in problem.message and "{CPU: 0.5} fits here" in problem.message, problem.message
    assert not list((tmp_path / "full").rglob("checkpoint_*"))
