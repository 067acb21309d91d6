"""specc_runtime's results of a training run, called as a module (no Ray is started): the loss that makes a run
diverged, results.csv and best.json (strict JSON: NaN is null) with the best epoch before a diverged one or by
run.checkpoint_score, how many epochs a checkpoint holds (an earlier specc counted them from 0), and what one worker
reserves."""

from __future__ import annotations

import json
import math
import types

import pytest
import specc_runtime


def strict(text: str):
    """json.loads that refuses NaN and Infinity, which Python's json writes but JSON does not have."""

    def refuse(constant):
        raise ValueError(f"not JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


def test_diverged_names_the_first_loss_that_is_not_finite():
    diverged = specc_runtime.diverged
    assert diverged({"train_loss": 0.3, "val_loss": 0.4}) is None
    assert diverged({"train_loss": math.nan, "val_loss": math.nan}) == "train_loss"
    assert diverged({"train_loss": 0.3, "val_loss": math.inf}) == "val_loss"
    assert diverged({"train_loss": 0.3, "val_accuracy": math.nan}) is None  # a loss, not any metric
    assert diverged({}) is None  # a trial that never reported


def train_result(history, checkpoint="/runs/boom/checkpoint_000000", path="/runs/boom", best=None):
    return types.SimpleNamespace(
        error=None,
        return_value=history,
        path=path,
        best_checkpoints=[object()],
        checkpoint=types.SimpleNamespace(path=checkpoint),
        get_best_checkpoint=lambda metric, mode: types.SimpleNamespace(path=best),
    )


def epoch(n, loss, accuracy=0.5):
    return {"epoch": n, "train_loss": loss, "val_loss": loss, "val_accuracy": accuracy}


def test_a_diverged_training_run_keeps_its_last_finite_epoch_in_strict_json(tmp_path):
    history = [epoch(1, 2.0, 0.3), epoch(2, 1.5, 0.6), epoch(3, math.nan, 0.1)]

    summary = specc_runtime.write_run_results(str(tmp_path), train_result(history))

    best = strict((tmp_path / "best.json").read_text(encoding="utf-8"))
    assert best["status"] == summary["status"] == "diverged"
    assert best["diverged"] == {"epoch": 3, "metric": "train_loss"}
    assert best["metrics"] == epoch(2, 1.5, 0.6)  # the last epoch before the loss became NaN
    assert (tmp_path / "results.csv").read_text().splitlines()[-1] == "3,nan,nan,0.1"  # the epoch is shown


def test_a_finished_training_run_is_completed_and_any_nan_metric_is_null(tmp_path):
    result = train_result([epoch(1, 2.0), {**epoch(2, 1.5), "val_accuracy": math.inf}])
    summary = specc_runtime.write_run_results(str(tmp_path), result)

    best = strict((tmp_path / "best.json").read_text(encoding="utf-8"))
    assert (best["status"], best["diverged"]) == ("completed", None)
    assert best["metrics"] == {**epoch(2, 1.5), "val_accuracy": None}
    assert (best["checkpoint"], best["run_dir"], best["epochs_counted_from"]) == (
        "/runs/boom/checkpoint_000000",
        str(tmp_path),
        1,
    )
    assert summary["metrics"]["val_accuracy"] == math.inf  # the summary returned is the run's, not its JSON
    assert (tmp_path / "results.csv").read_text() == (
        "epoch,train_loss,val_loss,val_accuracy\n1,2.0,2.0,0.5\n2,1.5,1.5,inf\n"
    )


def test_checkpoint_score_picks_the_best_epoch_and_its_checkpoint(tmp_path):
    history = [epoch(1, 2.0, 0.3), epoch(2, 1.5, 0.8), epoch(3, 1.4, 0.6)]
    result = train_result(history, best="/runs/boom/checkpoint_000001")
    summary = specc_runtime.write_run_results(str(tmp_path), result, score=("val_accuracy", "max"))
    assert (summary["metrics"], summary["checkpoint"]) == (epoch(2, 1.5, 0.8), "/runs/boom/checkpoint_000001")
    summary = specc_runtime.write_run_results(str(tmp_path), result, score=("val_loss", "min"))
    assert summary["metrics"] == epoch(3, 1.4, 0.6)


def test_best_json_records_what_the_run_is_given(tmp_path):
    summary = specc_runtime.write_run_results(str(tmp_path), train_result([epoch(1, 1.0)]), recorded={"spec_dir": ".."})
    assert summary["spec_dir"] == ".." and strict((tmp_path / "best.json").read_text())["spec_dir"] == ".."


def test_local_mode_keeps_no_checkpoint(tmp_path):
    """Ray Train's local mode (num_workers: 0) persists no checkpoints: result.path is None there."""
    summary = specc_runtime.write_run_results(str(tmp_path), train_result([epoch(1, 1.0)], path=None))
    assert summary["checkpoint"] is None and summary["status"] == "completed"


def test_a_run_that_reported_nothing_has_empty_results(tmp_path):
    summary = specc_runtime.write_run_results(str(tmp_path), train_result([]))
    assert (summary["status"], summary["metrics"]) == ("completed", {})
    assert (tmp_path / "results.csv").read_text() == "\n"


def test_a_failed_run_raises_its_error_and_writes_nothing(tmp_path):
    result = train_result([epoch(1, 1.0)])
    result.error = RuntimeError("the training failed")
    with pytest.raises(RuntimeError, match="the training failed"):
        specc_runtime.write_run_results(str(tmp_path / "run"), result)
    assert not (tmp_path / "run").exists()


def test_results_files_are_written_whole_through_uris_too(tmp_path):
    specc_runtime.write_files(f"file://{tmp_path}/run", {"a.txt": "one\n", "b.txt": "two\n"})
    assert sorted(path.name for path in (tmp_path / "run").iterdir()) == ["a.txt", "b.txt"]  # no .partial left
    assert (tmp_path / "run" / "b.txt").read_text() == "two\n"


def test_strict_json_writes_null_for_nan_and_infinities_at_any_depth():
    value = {"a": math.nan, "b": [1.0, -math.inf, {"c": math.inf}], "d": "nan"}
    assert strict(specc_runtime.strict_json(value)) == {"a": None, "b": [1.0, None, {"c": None}], "d": "nan"}


def test_epochs_held_counts_from_1_and_reads_an_earlier_speccs_from_0():
    assert specc_runtime.epochs_held({"epoch": 2, "epochs_counted_from": 1}) == 2
    assert specc_runtime.epochs_held({"epoch": 1}) == 2  # an earlier specc's checkpoint after its second epoch
    earlier = {"epoch": 1, "history": [{"epoch": 0, "loss": 1.0}, {"epoch": 1, "loss": 0.5}]}
    assert specc_runtime.history_held(earlier) == [{"epoch": 1, "loss": 1.0}, {"epoch": 2, "loss": 0.5}]
    now = {"epoch": 2, "epochs_counted_from": 1, "history": [{"epoch": 1}, {"epoch": 2}]}
    assert specc_runtime.history_held(now) == now["history"]


@pytest.mark.parametrize(
    ("scaling", "reserved"),
    [
        ({"resources_per_worker": None, "use_gpu": False}, {"CPU": 1}),
        ({"resources_per_worker": None, "use_gpu": True}, {"GPU": 1}),
        ({"resources_per_worker": {"CPU": 2.0}, "use_gpu": True}, {"CPU": 2.0, "GPU": 1}),
        ({"resources_per_worker": {"CPU": 1.0, "GPU": 0.5}, "use_gpu": True}, {"CPU": 1.0, "GPU": 0.5}),
        (
            {"resources_per_worker": {"CPU": 1.0}, "use_gpu": True, "accelerator_type": "A100"},
            {"CPU": 1.0, "GPU": 1, "accelerator_type:A100": 0.001},
        ),
    ],
)
def test_a_worker_reserves_by_ray_trains_rule(scaling, reserved):
    assert specc_runtime.worker_resources(scaling) == reserved
