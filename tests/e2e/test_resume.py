"""Run directories belong to one run (SPEC §8): an interrupted run resumes from its last checkpoint and keeps
counting epochs; an existing run is never overwritten by accident. (run.max_failures' retry of a failed worker
group from its last checkpoint, within the run: tests/e2e/test_console.py, which also watches its console.)"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from specc.cli import main
from specc.spec.errors import SpecError

from .conftest import compile_spec, python_script, read_best, read_results, run_spec, snapshot

pytestmark = pytest.mark.slow

CRASHING = """\
specc: 1
name: resumable
framework: torch
model:
  type: custom
  factory: "e2e_crash_models:make"
  kwargs: {{crash_at_epoch: 2, armed: "{armed}", log: "{log}"}}
dataset: {{type: digits, batch_size: 64}}
training:
  epochs: 4
  optimizer: {{type: sgd, lr: 0.05, momentum: 0.9}}
  metrics: [accuracy]
  checkpoint_every: 1
scaling: {{num_workers: 1}}
run: {{checkpoints_to_keep: 2, max_failures: 0}}
"""


def epoch_log(path: Path) -> list[str]:
    """The pid of the process that started each epoch, in order (written by the crashing model)."""
    return path.read_text(encoding="utf-8").split()


def latest_checkpoint_state(run_dir: Path) -> dict:
    import torch

    checkpoints = sorted(p for p in run_dir.iterdir() if p.name.startswith("checkpoint_") and p.is_dir())
    assert checkpoints, f"no checkpoint in {run_dir}: {sorted(p.name for p in run_dir.iterdir())}"
    return torch.load(checkpoints[-1] / "state.pt", map_location="cpu", weights_only=False)


def test_resume_continues_an_interrupted_run(tmp_path, spec_file, factory_module, local_ray, capsys):
    factory_module("crash_models.py", "e2e_crash_models")
    armed, log = tmp_path / "armed", tmp_path / "epochs.log"
    armed.touch()
    spec = spec_file(CRASHING.format(armed=armed, log=log))
    storage = tmp_path / "runs"
    run_dir = storage / "resumable"

    # 1. The worker dies when epoch 2 starts, after the checkpoints of epochs 0 and 1 (max_failures 0: no retry).
    with pytest.raises(Exception, match="simulated crash"):
        run_spec(spec, storage_path=storage)
    assert not armed.exists()
    first = epoch_log(log)
    assert len(first) == 3  # epochs 0, 1 and the one that crashed
    state = latest_checkpoint_state(run_dir)
    assert state["epoch"] == 1
    before = state["history"]
    assert [row["epoch"] for row in before] == [0, 1]

    # 2. The same spec again with --resume: the run continues at epoch 2 from the latest checkpoint.
    capsys.readouterr()
    assert main(["run", str(spec), "--resume", "--storage-path", str(storage)]) == 0, capsys.readouterr().err
    second = epoch_log(log)[len(first) :]
    assert len(second) == 2, f"the resumed run started {len(second)} epochs, not 2 (epochs 2 and 3)"

    header, rows = read_results(run_dir)
    assert header == ["epoch", "train_loss", "val_loss", "val_accuracy", "num_parameters"]
    assert [row["epoch"] for row in rows] == [0, 1, 2, 3]  # every epoch exactly once
    assert rows[:2] == [pytest.approx(row) for row in before]  # the interrupted run's epochs, as reported then
    assert read_best(run_dir)["metrics"]["epoch"] == 3
    assert latest_checkpoint_state(run_dir)["epoch"] == 3


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
