"""`dataset.global_batch_size` (SPEC §12) on 2 real Ray Train workers: each worker's training batches are half of
it, seen by the model inside each worker."""

from __future__ import annotations

import collections

import pytest

from .conftest import read_results, run_spec
from .fixtures.recording_models import read_records

# CI runs this module in turn (share 3, tests/e2e/conftest.py): tests/unit checks the rule compiled
pytestmark = [pytest.mark.slow, pytest.mark.in_turn(3)]

SPEC = """\
specc: 1
name: global-batch
framework: torch
model: {{type: custom, factory: "e2e_recording_models:make", kwargs: {{log: "{log}"}}}}
dataset: {{type: digits, global_batch_size: 64}}
training: {{epochs: 1, optimizer: {{type: adam, lr: 0.01}}, checkpoint_every: 0}}
scaling: {{num_workers: 2}}
"""


def test_each_of_two_workers_trains_on_half_the_global_batch(tmp_path, spec_file, factory_module, local_ray):
    factory_module("recording_models.py", "e2e_recording_models")
    log = tmp_path / "batches.jsonl"
    result = run_spec(spec_file(SPEC.format(log=log)), storage_path=tmp_path / "runs")

    sizes = collections.defaultdict(list)
    for record in read_records(log):
        if record["mode"] == "train":
            sizes[record["pid"]].append(record["batch"])
    assert len(sizes) == 2  # two worker processes trained
    # 1438 training examples in batches of 32 (the last 30), dealt across the workers: 23 batches each
    assert sorted(len(batches) for batches in sizes.values()) == [23, 23]
    assert {size for batches in sizes.values() for size in batches} <= {32, 30}
    assert sum(size == 32 for batches in sizes.values() for size in batches) >= 44
    _, rows = read_results(result.run_dir)
    assert [row["epoch"] for row in rows] == [1]
