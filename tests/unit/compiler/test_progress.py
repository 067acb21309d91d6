"""The progress a compiled script prints (issue 16, item 4), without Ray running: the rendered EpochProgress and
TrialProgress fed fake metrics and trials on a fake clock (the line format, the ETA arithmetic), what each shape
carries, and the scheduler rungs the search's lines name. The real runs are in tests/e2e/test_progress.py."""

from __future__ import annotations

import types

import pytest

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


class Clock:
    def __init__(self):
        self.now = 100.0

    def monotonic(self):
        return self.now


def script_of(write_spec, text, monkeypatch) -> tuple[types.ModuleType, Clock]:
    """The compiled script as a module, its clock a fake one."""
    spec = write_spec(text)
    script = types.ModuleType("compiled_progress")
    script.__file__ = str(spec.parent / "script.py")
    exec(compile(api.compile(api.load(spec)), script.__file__, "exec"), script.__dict__)
    clock = Clock()
    monkeypatch.setattr(script, "time", clock)
    return script, clock


def test_an_epoch_line_has_its_metrics_elapsed_time_and_eta(write_spec, monkeypatch, capsys):
    """ETA: the epochs to go at the mean pace since the first epoch ended (the first also paid for starting the
    workers, so it gives none)."""
    script, clock = script_of(write_spec, TRAIN.format(framework="torch", workers=2), monkeypatch)
    progress = script.EpochProgress(5)
    for at, epoch, loss in [(112.0, 1, 1.25), (114.0, 2, 0.5), (118.0, 3, 0.123456)]:
        clock.now = at
        progress.log({"epoch": epoch, "train_loss": loss, "val_loss": loss * 2, "val_accuracy": 0.75})
    progress.close()

    assert capsys.readouterr().out.splitlines() == [
        "watched: epoch 1/5  train_loss 1.25  val_loss 2.5  val_accuracy 0.75  elapsed 12.0s  eta -",
        "watched: epoch 2/5  train_loss 0.5  val_loss 1  val_accuracy 0.75  elapsed 14.0s  eta 6.0s",  # 3 x 2 s
        "watched: epoch 3/5  train_loss 0.1235  val_loss 0.2469  val_accuracy 0.75  elapsed 18.0s  eta 6.0s",  # 2 x 3 s
    ]


def test_a_resumed_run_counts_its_epochs_from_where_it_resumed(write_spec, monkeypatch, capsys):
    script, clock = script_of(write_spec, TRAIN.format(framework="torch", workers=0), monkeypatch)
    progress = script.EpochProgress(5)
    clock.now = 103.0
    progress.log({"epoch": 4, "train_loss": 0.5})
    clock.now = 163.5
    progress.log({"epoch": 5, "train_loss": 0.25})

    assert capsys.readouterr().out.splitlines() == [
        "watched: epoch 4/5  train_loss 0.5  elapsed 3.0s  eta -",
        "watched: epoch 5/5  train_loss 0.25  elapsed 1m03s  eta 0.0s",
    ]


@pytest.mark.parametrize(("seconds", "shown"), [(0.04, "0.0s"), (59.94, "59.9s"), (61.2, "1m01s"), (3725, "1h02m")])
def test_durations_read_as_a_person_reads_them(write_spec, monkeypatch, seconds, shown):
    script, _ = script_of(write_spec, TRAIN.format(framework="torch", workers=0), monkeypatch)
    assert script.duration(seconds) == shown


def trial(trial_id, status="RUNNING", last_result=None, error_file=None):
    config = {"training.optimizer.lr": 0.012345678, "model.hidden_sizes": [16]}
    return types.SimpleNamespace(
        trial_id=trial_id, config=config, status=status, last_result=last_result, error_file=error_file
    )


def test_a_search_prints_one_line_per_trial_event(write_spec, monkeypatch, capsys):
    """Started with its sampled values; a report at an ASHA rung (epochs 1, 2, 4 and 8 of 8; not every epoch, nor
    the last); stopped early, finished or diverged as results.csv will call it; errored; `[ended/all]` in front."""
    script, clock = script_of(write_spec, SEARCH, monkeypatch)
    assert script.RUNGS == [1, 2, 4, 8]
    progress = script.TrialProgress(8)
    progress.setup(stop=None, num_samples=4, total_num_samples=4)
    a, b, c, d = trial("a_00000"), trial("a_00001"), trial("a_00002"), trial("a_00003", error_file="/runs/error.txt")
    trials = [a, b, c, d]
    clock.now = 101.5
    progress.on_trial_start(0, trials, a)
    for epoch in range(1, 4):  # epochs 1 and 2 are rungs, 3 is not
        result = {"epoch": epoch, "training_iteration": epoch, "train_loss": 0.5, "val_loss": 0.25, "x": 1.0}
        progress.on_trial_result(0, trials, a, result)
    a.last_result, a.status = result, "TERMINATED"
    progress.on_trial_complete(0, trials, a)
    b.last_result = {"epoch": 8, "training_iteration": 8, "train_loss": 0.1, "val_loss": 0.2}
    progress.on_trial_result(0, trials, b, b.last_result)  # epoch 8 of 8: "finished" says it
    progress.on_trial_complete(0, trials, b)
    c.last_result = {"epoch": 1, "training_iteration": 1, "train_loss": float("nan"), "val_loss": 1.0}
    progress.on_trial_complete(0, trials, c)
    progress.on_trial_error(0, trials, d)
    progress.on_experiment_end(trials)

    assert capsys.readouterr().out.splitlines() == [
        "searched: [0/4] trial a_00000 started  lr=0.01235  hidden_sizes=[16]  elapsed 1.5s",
        "searched: [0/4] trial a_00000 epoch 1/8 (rung)  train_loss 0.5  val_loss 0.25  elapsed 1.5s",
        "searched: [0/4] trial a_00000 epoch 2/8 (rung)  train_loss 0.5  val_loss 0.25  elapsed 1.5s",
        "searched: [1/4] trial a_00000 stopped early at epoch 3/8  train_loss 0.5  val_loss 0.25  elapsed 1.5s",
        "searched: [2/4] trial a_00001 finished at epoch 8/8  train_loss 0.1  val_loss 0.2  elapsed 1.5s",
        "searched: [3/4] trial a_00002 diverged at epoch 1/8  train_loss nan  val_loss 1  elapsed 1.5s",
        "searched: [4/4] trial a_00003 errored  see /runs/error.txt  elapsed 1.5s",
    ]


def test_a_trial_that_goes_on_is_not_started_again(write_spec, monkeypatch, capsys):
    """Tune calls on_trial_start each time a trial's process starts: after HyperBand paused it, after a retry, after
    PBT's exploit, in a resumed search. It continues after its last epoch; its values again only when they changed."""
    script, clock = script_of(write_spec, SEARCH, monkeypatch)
    progress = script.TrialProgress(8)
    progress.setup(stop=None, num_samples=1, total_num_samples=1)
    a = trial("a_00000")
    clock.now = 102
    progress.on_trial_start(0, [a], a)
    a.last_result = {"epoch": 3, "training_iteration": 3, "train_loss": 0.5, "val_loss": 0.25}
    progress.on_trial_start(0, [a], a)  # paused at its third epoch, then on again
    a.config = {**a.config, "training.optimizer.lr": 0.015}  # PBT: a better trial's checkpoint, perturbed values
    a.last_result = {**a.last_result, "epoch": 4}
    progress.on_trial_start(0, [a], a)

    assert capsys.readouterr().out.splitlines() == [
        "searched: [0/1] trial a_00000 started  lr=0.01235  hidden_sizes=[16]  elapsed 2.0s",
        "searched: [0/1] trial a_00000 continues after epoch 3/8  elapsed 2.0s",
        "searched: [0/1] trial a_00000 continues after epoch 4/8  lr=0.015  hidden_sizes=[16]  elapsed 2.0s",
    ]


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


@pytest.mark.parametrize(
    ("framework", "workers", "carries", "leaves_out"),
    [
        ("torch", 2, ["class EpochProgress:", "class ShowEpochs(ray.train.UserCallback):", "import ray.util.queue"],
         ["IN_PROCESS_CALLBACKS", "class TrialProgress"]),
        ("tensorflow", 2, ["class EpochProgress:", "class ShowEpochs(ray.train.UserCallback):", "import threading"],
         ["IN_PROCESS_CALLBACKS", "class TrialProgress"]),
        ("torch", 0, ["class EpochProgress:", "for callback in IN_PROCESS_CALLBACKS:"],
         ["ShowEpochs", "ray.util.queue", "import threading", "class TrialProgress"]),
        ("tensorflow", 0, ["class EpochProgress:", "for callback in IN_PROCESS_CALLBACKS:"],
         ["ShowEpochs", "ray.util.queue", "import threading"]),
    ],
)  # fmt: skip
def test_a_training_run_carries_only_the_progress_its_shape_uses(write_spec, framework, workers, carries, leaves_out):
    source = api.compile(api.load(write_spec(TRAIN.format(framework=framework, workers=workers))))
    assert [needle for needle in carries if needle not in source] == []
    assert [needle for needle in leaves_out if needle in source] == []
    assert "progress = None if args.quiet else EpochProgress(" in source  # --quiet: no lines, no bar, no queue


def test_a_search_turns_tunes_reporter_off_for_its_own_lines(write_spec):
    source = api.compile(api.load(write_spec(SEARCH)))
    assert "verbose=0,  #" in source
    assert 'progress = None if args.quiet else TrialProgress(config["training"]["epochs"])' in source
    assert "callbacks=callbacks + ([progress] if progress else [])," in source
    assert "shown_as_asked(tuner, progress)" in source  # a restored search's own callback gives way to this run's
    assert "EpochProgress" not in source and "ShowEpochs" not in source


def test_the_trial_that_ends_a_search_through_all_when_is_shown_ending(write_spec, monkeypatch, capsys):
    """Tune stops the last trials of a search that stop.all_when ends without on_trial_complete: the end of the
    search shows the one that had reported (never one that had not started)."""
    text = SEARCH.replace("scheduler: {type: asha, grace_period: 1, reduction_factor: 2}\n", "")
    script, _ = script_of(write_spec, text + "stop: {all_when: ['val_loss <= 0.3']}\n", monkeypatch)
    progress = script.TrialProgress(8)
    progress.setup(total_num_samples=3)
    result = {"epoch": 2, "training_iteration": 2, "train_loss": 0.4, "val_loss": 0.25}
    met, unstarted = trial("a_00000", "TERMINATED", result), trial("a_00001", "TERMINATED")
    progress.on_experiment_end([met, unstarted])
    assert capsys.readouterr().out.splitlines() == [
        "searched: [2/3] trial a_00000 stopped early at epoch 2/8  train_loss 0.4  val_loss 0.25  elapsed 0.0s"
    ]
    assert "stop.all_when ended the search" not in (ROOT / "tests" / "golden" / "digits_asha.py").read_text()
    assert "stop.all_when ended the search" in (ROOT / "tests" / "golden" / "digits_stop_all.py").read_text()
