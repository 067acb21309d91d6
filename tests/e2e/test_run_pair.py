"""The pair a spec compiles to, run for real: `specc run` executes the experiment and specc_runtime.py in this
process and keeps both in the run directory, twice in one process; a `--single-file` script runs on its own, with
no runtime beside it. (tests/unit/execute/test_run_pair.py: the modules' bookkeeping, without Ray.)"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from ray import cloudpickle

from specc import api, runtime

from .conftest import python_script, read_results, run_spec

pytestmark = pytest.mark.slow

SPEC = """\
specc: 1
name: paired
framework: torch
model: {type: mlp, hidden_sizes: [8]}
dataset: {type: iris, batch_size: 16}
training: {epochs: 1}
scaling: {num_workers: 0}
"""


def test_specc_run_keeps_the_pair_it_ran_and_runs_twice_in_one_process(local_ray, tmp_path, spec_file):
    first = spec_file(SPEC, "first.yaml")
    second = spec_file(SPEC.replace("name: paired", "name: again").replace("[8]", "[4]"), "second.yaml")
    before = sys.modules.get("specc_runtime")

    for spec in (first, second):
        result = run_spec(spec, storage_path=tmp_path / "runs", echo=False)
        run_dir = Path(result.run_dir)
        assert (run_dir / "script.py").read_text(encoding="utf-8") == api.compile(api.load(spec))
        assert (run_dir / "specc_runtime.py").read_text(encoding="utf-8") == runtime.source()
        assert len(read_results(run_dir)[1]) == 1 and result.status == "completed"
        assert sys.modules.get("specc_runtime") is before  # the run's own runtime module is gone again
    assert not any(name.startswith("specc_run_") for name in cloudpickle.list_registry_pickle_by_value())


def test_a_single_file_script_runs_alone(tmp_path, spec_file):
    from specc.cli import main

    script = tmp_path / "alone" / "paired.py"
    # on a Ray Train worker: the runtime's functions reach it by value from __main__, as the experiment's do
    on_a_worker = SPEC.replace("num_workers: 0", "num_workers: 1")
    assert main(["compile", str(spec_file(on_a_worker)), "-o", str(script), "--single-file"]) == 0
    assert sorted(path.name for path in script.parent.iterdir()) == ["paired.py"]  # no runtime beside it

    done = python_script(script, "--smoke", "--storage-path", tmp_path / "runs", cwd=tmp_path, timeout=240)

    assert done.returncode == 0, done.stderr[-3000:]
    assert len(read_results(tmp_path / "runs" / "paired")[1]) == 1
