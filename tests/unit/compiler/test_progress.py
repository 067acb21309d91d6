"""The progress each compiled script hands the runtime (issue 16, item 4), without Ray running: a training run
leaves its epoch lines to specc_runtime.Run (and hands local mode's epochs to IN_PROCESS_CALLBACKS), a search builds
specc_runtime.TrialProgress with its scheduler's rungs, its sampled paths and what ends it. The lines themselves:
tests/unit/runtime/test_progress.py; the real runs: tests/e2e/test_progress.py."""

from __future__ import annotations

import io
import os
import types
from contextlib import redirect_stdout

import pytest
import specc_runtime

from specc import api
from tests.conftest import ROOT

TRAIN = """\
specc: 1
name: watched
framework: {framework}
model: {{type: mlp, hidden_sizes: [8]}}
dataset: {{type: iris}}
training: {{epochs: 5}}
scaling: {{num_workers: {workers}}}
"""
SEARCH = """\
specc: 1
name: searched
framework: torch
model: {type: mlp, hidden_sizes: [8]}
dataset: {type: iris}
training: {epochs: 8}
scaling: {num_workers: 1}
tune:
  metric: val_loss
  mode: min
  num_samples: 3
  space: {training.optimizer.lr: {loguniform: [1.0e-4, 1.0e-1]}, model.hidden_sizes: {choice: [[8], [16]]}}
scheduler: {type: asha, grace_period: 1, reduction_factor: 2}
"""


def script_of(write_spec, text) -> types.ModuleType:
    """The compiled script, written beside its spec and executed as a module (main() is not called)."""
    spec = write_spec(text)
    script = types.ModuleType("compiled_progress")
    script.__file__ = str(spec.parent / "script.py")
    source = api.compile(api.load(spec))
    (spec.parent / "script.py").write_text(source, encoding="utf-8")  # a run keeps the file it runs
    exec(compile(source, script.__file__, "exec"), script.__dict__)
    return script


@pytest.mark.parametrize(
    ("spec", "rungs"),
    [
        ("specs/digits_asha.yaml", [1, 3, 9]),
        ("specs/digits_cnn_hyperband.yaml", [3, 9]),
        ("specs/digits_pbt.yaml", None),
    ],
)
def test_a_search_names_its_schedulers_rungs(spec, rungs):
    """The epochs at which ASHA or HyperBand compares trials, from the plan specc plan prints; others have none."""
    from specc.plan.trials import plan_report

    spec = ROOT / spec  # not the working directory, which other tests may leave elsewhere
    source = api.compile(api.load(spec))
    if rungs is None:
        assert "RUNGS" not in source and "def on_trial_result(" not in source
        return
    assert f"RUNGS = {rungs}  #" in source
    scheduler = plan_report(api.load(spec))["scheduler"]
    planned = scheduler.get("brackets")
    epochs = {e for b in planned for e in (b if isinstance(b, list) else [r["epoch"] for r in b["rungs"]])}
    assert sorted(epochs) == rungs


@pytest.mark.parametrize("framework", ["torch", "tensorflow"])
@pytest.mark.parametrize("workers", [0, 2])
def test_a_training_run_leaves_its_progress_to_the_runtime(write_spec, framework, workers):
    """The epoch lines are specc_runtime.Run's (EpochProgress, through ShowEpochs from Train's controller); Ray
    Train's local mode calls no callbacks, so the loop's report() hands each epoch to IN_PROCESS_CALLBACKS."""
    source = api.compile(api.load(write_spec(TRAIN.format(framework=framework, workers=workers))))
    for carried in ("class EpochProgress", "class ShowEpochs", "class TrialProgress", "ray.util.queue", "RUNGS"):
        assert carried not in source, carried
    # every epoch through specc_runtime's report, which hands it to IN_PROCESS_CALLBACKS (filled in local mode only)
    assert "specc_runtime.report" in source and "IN_PROCESS_CALLBACKS" not in source
    assert ("run.callbacks" in source) == (workers > 0)  # the progress's callback reaches the Trainer


def test_a_search_turns_tunes_reporter_off_for_its_own_lines(write_spec):
    source = api.compile(api.load(write_spec(SEARCH)))
    assert "verbose=0,  #" in source
    assert "callbacks=run.callbacks," in source  # the runtime's progress lines (none with --quiet) and trackers
    assert "tuner = run.restored(trial, " in source  # a restored search's progress gives way to this run's
    assert "EpochProgress" not in source and "ShowEpochs" not in source


class Fitted(Exception):
    """Where the search would start: the Tuner is built."""


def progress_of(script, tmp_path, monkeypatch, quiet=False):
    """The TrialProgress the script's main() hands its Tuner: main() runs up to tuner.fit(), with Ray's start and
    resources stood in for (the run directory is claimed and written in tmp_path as a real run's is)."""
    built = []

    class Tuner:
        def __init__(self, trainable, param_space=None, tune_config=None, run_config=None):
            built.extend(callback for callback in run_config.callbacks if type(callback).__name__ == "TrialProgress")

        def fit(self):
            raise Fitted

    monkeypatch.setenv("RAY_AIR_NEW_OUTPUT", os.environ.get("RAY_AIR_NEW_OUTPUT", "0"))  # a search sets it: put back
    monkeypatch.setattr(specc_runtime, "start_ray", lambda *args: False)
    monkeypatch.setattr(specc_runtime, "how_many_fit", lambda need, what: 1)
    monkeypatch.setattr(script.tune, "Tuner", Tuner)
    with pytest.raises(Fitted), redirect_stdout(io.StringIO()):
        script.main(["--storage-path", str(tmp_path / "runs"), *(["--quiet"] if quiet else [])])
    return built[0] if built else None


def test_a_search_hands_its_progress_the_trials_length_values_and_rungs(write_spec, tmp_path, monkeypatch):
    script = script_of(write_spec, SEARCH)
    progress = progress_of(script, tmp_path, monkeypatch)
    assert (progress.name, progress.length, progress.rungs) == ("searched", 8, [1, 2, 4, 8])
    assert progress.sampled == ["training.optimizer.lr", "model.hidden_sizes"]
    assert progress.reported == script.REPORTED and not progress.all_when and not progress.steps
    assert progress_of(script, tmp_path, monkeypatch, quiet=True) is None  # --quiet: no lines, no bar


def test_a_search_that_stop_all_when_ends_shows_its_last_trials_ending(write_spec, tmp_path, monkeypatch):
    text = SEARCH.replace("scheduler: {type: asha, grace_period: 1, reduction_factor: 2}\n", "")
    ended = script_of(write_spec, text + "stop: {all_when: ['val_loss <= 0.3']}\n")
    progress = progress_of(ended, tmp_path / "ended", monkeypatch)
    assert progress.all_when and not progress.rungs  # no scheduler: no rungs
    assert not progress_of(script_of(write_spec, text), tmp_path / "plain", monkeypatch).all_when
