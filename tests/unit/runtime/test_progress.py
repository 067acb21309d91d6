"""The progress a run prints (issue 16, item 4), specc_runtime's EpochProgress and TrialProgress called as a module
without Ray: fed fake metrics and trials on a fake clock (the line format, the ETA arithmetic, num_parameters shown
once). What each compiled script hands them: tests/unit/compiler/test_progress.py; the real runs:
tests/e2e/test_progress.py."""

from __future__ import annotations

import types

import pytest
import specc_runtime

BY_HAND = 64 * 16 + 16 + 16 * 10 + 10  # an MLP of 16 on digits: 64 inputs, 10 classes


class Clock:
    def __init__(self):
        self.now = 100.0

    def monotonic(self):
        return self.now


@pytest.fixture
def clock(monkeypatch):
    """The runtime's clock, a fake one."""
    clock = Clock()
    monkeypatch.setattr(specc_runtime, "time", clock)
    return clock


def test_an_epoch_line_has_its_metrics_elapsed_time_and_eta(clock, capsys):
    """ETA: the epochs to go at the mean pace since the first epoch ended (the first also paid for starting the
    workers, so it gives none)."""
    progress = specc_runtime.EpochProgress("watched", 5)
    for at, epoch, loss in [(112.0, 1, 1.25), (114.0, 2, 0.5), (118.0, 3, 0.123456)]:
        clock.now = at
        progress.log({"epoch": epoch, "train_loss": loss, "val_loss": loss * 2, "val_accuracy": 0.75})
    progress.close()

    assert capsys.readouterr().out.splitlines() == [
        "watched: epoch 1/5  train_loss 1.25  val_loss 2.5  val_accuracy 0.75  elapsed 12.0s  eta -",
        "watched: epoch 2/5  train_loss 0.5  val_loss 1  val_accuracy 0.75  elapsed 14.0s  eta 6.0s",  # 3 x 2 s
        "watched: epoch 3/5  train_loss 0.1235  val_loss 0.2469  val_accuracy 0.75  elapsed 18.0s  eta 6.0s",  # 2 x 3 s
    ]


def test_a_resumed_run_counts_its_epochs_from_where_it_resumed(clock, capsys):
    progress = specc_runtime.EpochProgress("watched", 5)
    clock.now = 103.0
    progress.log({"epoch": 4, "train_loss": 0.5})
    clock.now = 163.5
    progress.log({"epoch": 5, "train_loss": 0.25})

    assert capsys.readouterr().out.splitlines() == [
        "watched: epoch 4/5  train_loss 0.5  elapsed 3.0s  eta -",
        "watched: epoch 5/5  train_loss 0.25  elapsed 1m03s  eta 0.0s",
    ]


@pytest.mark.parametrize(("seconds", "shown"), [(0.04, "0.0s"), (59.94, "59.9s"), (61.2, "1m01s"), (3725, "1h02m")])
def test_durations_read_as_a_person_reads_them(seconds, shown):
    assert specc_runtime.duration(seconds) == shown


def test_metrics_show_with_4_significant_digits_in_the_order_asked():
    metrics = {"epoch": 3, "train_loss": 0.123456, "val_loss": 2.0, "steps": 12, "num_parameters": BY_HAND}
    assert specc_runtime.metric_text(metrics) == "train_loss 0.1235  val_loss 2  steps 12"
    assert specc_runtime.metric_text(metrics, ["val_loss", "missing", "train_loss"]) == "val_loss 2  train_loss 0.1235"
    assert specc_runtime.number(1234567.0) == "1.235e+06" and specc_runtime.number("sgd") == "sgd"


def test_the_console_shows_num_parameters_once_not_on_each_epoch_line(clock, capsys):
    progress = specc_runtime.EpochProgress("sized", 2)
    for epoch in (1, 2):
        progress.log({"epoch": epoch, "train_loss": 1.5, "val_loss": 1.25, "num_parameters": BY_HAND})
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"sized: the model has {BY_HAND:,} trainable parameters (num_parameters)"
    assert [line.split("  elapsed")[0] for line in lines[1:]] == [
        "sized: epoch 1/2  train_loss 1.5  val_loss 1.25",
        "sized: epoch 2/2  train_loss 1.5  val_loss 1.25",
    ]


def trial(trial_id, status="RUNNING", last_result=None, error_file=None):
    config = {"training.optimizer.lr": 0.012345678, "model.hidden_sizes": [16]}
    return types.SimpleNamespace(
        trial_id=trial_id, config=config, status=status, last_result=last_result, error_file=error_file
    )


REPORTED = ["epoch", "train_loss", "val_loss", "num_parameters"]
PATHS = ["training.optimizer.lr", "model.hidden_sizes"]


def test_a_search_prints_one_line_per_trial_event(clock, capsys):
    """Started with its sampled values; a report at an ASHA rung (epochs 1, 2, 4 and 8 of 8; not every epoch, nor
    the last); stopped early, finished or diverged as results.csv will call it; errored; `[ended/all]` in front."""
    progress = specc_runtime.TrialProgress("searched", 8, REPORTED, PATHS, rungs=[1, 2, 4, 8])
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


def test_a_trial_that_goes_on_is_not_started_again(clock, capsys):
    """Tune calls on_trial_start each time a trial's process starts: after HyperBand paused it, after a retry, after
    PBT's exploit, in a resumed search. It continues after its last epoch; its values again only when they changed."""
    progress = specc_runtime.TrialProgress("searched", 8, REPORTED, PATHS)
    progress.setup(stop=None, num_samples=1, total_num_samples=1)
    a = trial("a_00000")
    clock.now = 102
    progress.on_trial_start(0, [a], a)
    a.last_result = {"epoch": 3, "training_iteration": 3, "train_loss": 0.5, "val_loss": 0.25}
    progress.on_trial_start(0, [a], a)  # paused at its third epoch, then on again
    a.config = {**a.config, "training.optimizer.lr": 0.015}  # PBT: a better trial's checkpoint, perturbed values
    a.last_result = {**a.last_result, "epoch": 4}
    progress.on_trial_start(0, [a], a)
    progress.on_trial_recover(0, [a], a)

    assert capsys.readouterr().out.splitlines() == [
        "searched: [0/1] trial a_00000 started  lr=0.01235  hidden_sizes=[16]  elapsed 2.0s",
        "searched: [0/1] trial a_00000 continues after epoch 3/8  elapsed 2.0s",
        "searched: [0/1] trial a_00000 continues after epoch 4/8  lr=0.015  hidden_sizes=[16]  elapsed 2.0s",
        "searched: [0/1] trial a_00000 failed at epoch 4/8, retrying  elapsed 2.0s",
    ]


def test_a_trial_line_shows_num_parameters_when_the_trial_ends_only(clock, capsys):
    assert "num_parameters" not in specc_runtime.metric_text({"epoch": 0, "val_loss": 1.0, "num_parameters": BY_HAND})
    progress = specc_runtime.TrialProgress("sized", 2, REPORTED, [], rungs=[1, 2])
    progress.setup(total_num_samples=1)
    result = {"epoch": 1, "training_iteration": 1, "val_loss": 1.0, "num_parameters": BY_HAND}
    one = types.SimpleNamespace(trial_id="a1", status="RUNNING", last_result=result)
    progress.on_trial_result(0, [one], one, result)
    one.status = "TERMINATED"
    progress.on_trial_complete(0, [one], one)
    rung, ended = capsys.readouterr().out.splitlines()
    assert "num_parameters" not in rung
    assert f"val_loss 1  num_parameters {BY_HAND}  elapsed" in ended


def test_the_trial_that_ends_a_search_through_all_when_is_shown_ending(clock, capsys):
    """Tune stops the last trials of a search that stop.all_when ends without on_trial_complete: the end of the
    search shows the one that had reported (never one that had not started)."""
    result = {"epoch": 2, "training_iteration": 2, "train_loss": 0.4, "val_loss": 0.25}
    met, unstarted = trial("a_00000", "TERMINATED", result), trial("a_00001", "TERMINATED")
    progress = specc_runtime.TrialProgress("searched", 8, REPORTED, PATHS, all_when=True)
    progress.setup(total_num_samples=3)
    progress.on_experiment_end([met, unstarted])
    assert capsys.readouterr().out.splitlines() == [
        "searched: [2/3] trial a_00000 stopped early at epoch 2/8  train_loss 0.4  val_loss 0.25  elapsed 0.0s"
    ]
    without = specc_runtime.TrialProgress("searched", 8, REPORTED, PATHS)  # no stop.all_when: nothing to show
    without.setup(total_num_samples=3)
    without.on_experiment_end([met, unstarted])
    assert capsys.readouterr().out == ""


def test_a_conditional_entry_shows_by_its_options_own_parameters(clock, capsys):
    """`optimizer.type=sgd  optimizer.lr=...  optimizer.momentum=...`, not the option's whole mapping; an adam trial
    shows no momentum."""
    options = {"training.optimizer": ["type", "lr", "momentum"]}
    progress = specc_runtime.TrialProgress(
        "cond", 4, REPORTED, ["training.optimizer", "model.dropout"], option_params=options
    )
    sgd = {"type": "sgd", "lr": 0.0123456, "momentum": 0.9, "weight_decay": 0.0, "nesterov": False}
    adam = {"type": "adam", "lr": 0.001, "betas": [0.9, 0.999], "eps": 1e-08, "weight_decay": 0.0, "amsgrad": False}
    assert progress.shown("training.optimizer", sgd) == [
        "optimizer.type=sgd",
        "optimizer.lr=0.01235",
        "optimizer.momentum=0.9",
    ]
    assert progress.shown("training.optimizer", adam) == ["optimizer.type=adam", "optimizer.lr=0.001"]
    assert progress.shown("model.dropout", 0.25) == ["dropout=0.25"]
    progress.setup(total_num_samples=1)
    one = types.SimpleNamespace(
        trial_id="c1", status="RUNNING", config={"training.optimizer": adam, "model.dropout": 0.1}, last_result=None
    )
    progress.on_trial_start(0, [one], one)
    assert (
        capsys.readouterr().out
        == "cond: [0/1] trial c1 started  optimizer.type=adam  optimizer.lr=0.001  dropout=0.1  elapsed 0.0s\n"
    )


def test_an_objective_searchs_trials_count_steps(clock, capsys):
    """An objective search (steps=True): a step is one report of the function (Tune's training_iteration); no loss of
    it to call diverged; its sampled values are objective.params' paths into the trial's config; at most `length`
    steps, or None."""
    progress = specc_runtime.TrialProgress("objective", None, ["score"], ["objective.params.x"], steps=True, rungs=[2])
    progress.setup(total_num_samples=2)
    a = types.SimpleNamespace(trial_id="o1", status="RUNNING", config={"x": 0.5, "other": 1}, last_result=None)
    progress.on_trial_start(0, [a], a)
    progress.on_trial_result(0, [a], a, {"training_iteration": 2, "score": float("nan")})
    a.last_result, a.status = {"training_iteration": 3, "score": float("nan")}, "TERMINATED"
    progress.on_trial_complete(0, [a], a)
    assert capsys.readouterr().out.splitlines() == [
        "objective: [0/2] trial o1 started  x=0.5  elapsed 0.0s",
        "objective: [0/2] trial o1 step 2 (rung)  score nan  elapsed 0.0s",
        "objective: [1/2] trial o1 finished at step 3  score nan  elapsed 0.0s",
    ]


def test_a_local_mode_run_hands_its_epochs_to_the_progress_in_this_process(tmp_path):
    """Ray Train's local mode calls no callbacks: report() hands each epoch to IN_PROCESS_CALLBACKS, which the run
    fills (the progress, unless --quiet) and empties when it ends."""
    experiment = {
        "name": "local",
        "storage_path": str(tmp_path),
        "config": {"training": {"epochs": 3}},
        "scaling": {"num_workers": 0, "use_gpu": False, "resources_per_worker": None},
    }
    for argv, shown in (([], True), (["--quiet"], False)):
        run = specc_runtime.Run(str(tmp_path / "x.py"), "a run", argv, "specc: 1\n", experiment)
        run.run_dir = str(tmp_path / "local")
        run.show_epochs()
        assert [type(callback).__name__ for callback in specc_runtime.IN_PROCESS_CALLBACKS] == (
            ["EpochProgress"] if shown else []
        )
        assert run.callbacks == []  # the Trainer gets none
        run.__exit__(None, None, None)
        assert specc_runtime.IN_PROCESS_CALLBACKS == []


def test_a_search_builds_its_progress_and_trackers_from_its_description(tmp_path, monkeypatch):
    """Run.show_trials: the progress lines take the search's sampled paths (a function of the experiment file, or a
    list), its rungs, its conditional options and stop.all_when from RUN["search"]; the trackers come first, and
    --quiet leaves the trackers alone. An objective's length is its max_steps (1 with --smoke)."""
    monkeypatch.setenv("TUNE_DISABLE_AUTO_CALLBACK_LOGGERS", "0")  # trackers() sets it: restored afterwards
    options = {"training.optimizer": ["type", "lr"]}
    search = {
        "metric": "val_loss",
        "mode": "min",
        "reported": ["epoch", "val_loss"],
        "paths": lambda: ["training.optimizer", "model.dropout"],
        "rungs": [1, 3],
        "option_params": options,
        "all_when": True,
    }
    experiment = {"name": "s", "storage_path": str(tmp_path), "config": {"training": {"epochs": 4}}, "shape": "tune"}
    experiment.update(search=search, callbacks=["json"])
    for argv, shown in (([], True), (["--quiet"], False)):
        run = specc_runtime.Run(str(tmp_path / "x.py"), "a search", argv, "specc: 1\n", experiment)
        run.run_dir = str(tmp_path / "s")
        run.show_trials()
        names = [type(callback).__name__ for callback in run.callbacks]
        assert names == ["KeptCsv", "KeptJson", *(["TrialProgress"] if shown else [])]
        assert (run.progress is not None) == shown
    progress = specc_runtime.Run(str(tmp_path / "x.py"), "a search", [], "specc: 1\n", experiment)
    progress.run_dir = str(tmp_path / "s")
    progress.show_trials()
    shown = progress.progress
    assert (shown.length, shown.sampled, shown.rungs, shown.option_params, shown.all_when, shown.steps) == (
        4,
        ["training.optimizer", "model.dropout"],
        [1, 3],
        options,
        True,
        False,
    )
    objective = {**experiment, "shape": "objective", "search": {**search, "paths": ["x"], "max_steps": 20}}
    for argv, length in (([], 20), (["--smoke"], 1)):
        run = specc_runtime.Run(str(tmp_path / "x.py"), "a search", argv, "specc: 1\n", objective)
        run.run_dir = str(tmp_path / "o")
        run.show_trials()
        assert (run.progress.length, run.progress.sampled, run.progress.steps) == (length, ["x"], True)


def test_a_search_is_restored_only_when_asked_and_there_is_one(tmp_path, monkeypatch):
    """Run.restored: Tuner.restore (with run.resume's arguments, the progress lines put back as asked) only with
    --resume and a run directory Tune can restore; otherwise None, and main() builds a new Tuner. (Tune's own
    restore is exercised end to end in tests/e2e/test_tune_resume.py.)"""
    restored = []

    class Restored:
        _local_tuner = None  # through Ray Client: shown_as_asked has nothing to swap

    def restore(path, trainable, **resume):
        restored.append((path, trainable, resume))
        return Restored()

    monkeypatch.setattr(specc_runtime.ray.tune.Tuner, "restore", staticmethod(restore))
    experiment = {"name": "s", "storage_path": str(tmp_path), "config": {}, "shape": "tune", "search": {}}
    for argv, restorable, expected in (([], True, False), (["--resume"], False, False), (["--resume"], True, True)):
        monkeypatch.setattr(specc_runtime.ray.tune.Tuner, "can_restore", staticmethod(lambda path, r=restorable: r))
        run = specc_runtime.Run(str(tmp_path / "x.py"), "a search", argv, "specc: 1\n", experiment)
        run.run_dir, run.progress = str(tmp_path / "s"), None
        tuner = run.restored("trainable", resume_unfinished=True)
        assert isinstance(tuner, Restored) == expected
    assert restored == [(str(tmp_path / "s"), "trainable", {"resume_unfinished": True})]
