"""Run directories belong to one run (SPEC §8): an existing run is never overwritten by accident. (An interrupted run
that resumes from its last checkpoint and keeps counting epochs: test_streaming_data's table with categories, whose
resumed run must also validate on the same split; a killed one: test_run_dir_claims. run.max_failures' retry of a
failed worker group from its last checkpoint, within the run: tests/e2e/test_console.py, which also watches its
console.)"""

from __future__ import annotations

import os

import pytest

from specc.cli import main
from specc.spec.errors import SpecError

from .conftest import compile_spec, python_script, run_spec, snapshot

pytestmark = pytest.mark.slow

QUICK = """\
specc: 1
name: finished
framework: torch
model: {type: mlp, hidden_sizes: [16]}
dataset: {type: iris, batch_size: 16}
training: {epochs: 2, metrics: [accuracy]}
scaling: {num_workers: 0}
"""


@pytest.fixture
def finished_run(tmp_path, spec_file, local_ray):
    spec = spec_file(QUICK)
    storage = tmp_path / "runs"
    run_spec(spec, storage_path=storage)
    run_dir = storage / "finished"
    assert {"script.py", "spec.resolved.yaml", "results.csv", "best.json"} <= {p.name for p in run_dir.iterdir()}
    return spec, storage, run_dir


def test_specc_run_refuses_an_existing_run_directory(finished_run, capsys):
    spec, storage, run_dir = finished_run
    before = snapshot(run_dir)
    capsys.readouterr()

    code = main(["run", str(spec), "--storage-path", str(storage)])

    err = capsys.readouterr().err
    assert code == 1
    assert str(run_dir) in err and "--resume" in err
    assert "E401" in err
    assert "Traceback" not in err
    assert snapshot(run_dir) == before  # nothing rewritten, not even the artefacts


def test_library_run_refuses_an_existing_run_directory(finished_run):
    spec, storage, run_dir = finished_run
    before = snapshot(run_dir)
    with pytest.raises(SpecError) as refused:
        run_spec(spec, storage_path=storage)
    assert [problem.code for problem in refused.value.problems] == ["E401"]
    assert "--resume" in str(refused.value)
    assert snapshot(run_dir) == before


def test_compiled_script_refuses_an_existing_run_directory(finished_run, tmp_path):
    spec, storage, run_dir = finished_run
    script = compile_spec(spec, tmp_path / "finished.py")
    before = snapshot(run_dir)

    done = python_script(script, "--storage-path", storage, cwd=tmp_path, timeout=120)

    assert done.returncode != 0
    assert str(run_dir) in done.stderr and "--resume" in done.stderr
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    assert snapshot(run_dir) == before
    assert os.path.isdir(run_dir)


def test_resuming_with_a_changed_spec_is_refused_unless_forced(finished_run, capsys):
    spec, storage, run_dir = finished_run
    before = snapshot(run_dir)
    capsys.readouterr()

    changed = ["run", str(spec), "--storage-path", str(storage), "--resume", "--set", "training.epochs=3"]
    assert main(changed) == 1
    err = capsys.readouterr().err
    assert "E401" in err and "another spec" in err and "--force" in err
    assert snapshot(run_dir) == before  # refused before anything was written

    assert main([*changed, "--force"]) == 0
    assert "epochs: 3" in (run_dir / "spec.resolved.yaml").read_text()  # the run now records the new spec


def test_resuming_with_the_same_spec_is_allowed(finished_run):
    spec, storage, run_dir = finished_run
    result = run_spec(spec, storage_path=storage, resume=True)
    assert result.run_dir == str(run_dir)
