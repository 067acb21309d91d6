"""The compiled script's console rules (templates/run/console.py.j2), taken from a compiled script and run without
Ray: which of Ray's worker lines reach the console, and how ray.log is opened."""

from __future__ import annotations

import ast
import contextlib
import logging
import os
import re
import stat
import sys
from pathlib import Path

import pytest

from specc.api import compile as compile_spec
from specc.api import load

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def script() -> dict:
    """ProblemLines, open_log and their constants, from the compiled digits_mlp script."""
    source = compile_spec(load(REPO / "specs/digits_mlp.yaml"))
    wanted = {
        "RAY_TRAIN_ACTORS",
        "PROBLEM",
        "DECISION",
        "CONTINUES",
        "ProblemLines",
        "open_log",
        "RayLog",
        "write_files",
    }
    tree = ast.parse(source)
    picked = [
        node
        for node in tree.body
        if getattr(node, "name", None) in wanted
        or (isinstance(node, ast.Assign) and {getattr(t, "id", None) for t in node.targets} & wanted)
    ]
    assert len(picked) == len(wanted), [getattr(n, "name", None) for n in picked]
    import pyarrow.fs

    namespace = {"re": re, "os": os, "stat": stat, "sys": sys, "logging": logging, "contextlib": contextlib}
    namespace["pyarrow"] = pyarrow
    exec(compile(ast.Module(picked, []), "script.py", "exec"), namespace)
    return namespace


TRAIN_FAILURE = [
    "[FailurePolicy] RETRY",
    "  Source: worker group",
    "  Error count: 1 (max allowed: 1)",
    "Error: Training failed due to worker errors:",
    "[Rank 0 Error Snippet]:",
    "Traceback (most recent call last):",
    '  File "script.py", line 12, in train_func',
    "    model.train()",
    "RuntimeError: simulated crash",
    "",
    "The above exception was the direct cause of the following exception:",
    "ray.train.WorkerGroupError: Training failed due to worker errors",
]
HEALTHY = [
    "Setting up process group for: env:// [rank=0, world_size=2]",
    "Moving model to device: cpu",
    "Reporting training result 1: TrainingReport(checkpoint=None, metrics={'epoch': 0}, validation=False) from rank 1",
    "Checkpoint successfully created at: Checkpoint(filesystem=local, path=/runs/x/checkpoint_1)",
    "Started training worker group of size 2: ",
    "- (ip=192.0.2.2, pid=13447) world_rank=0, local_rank=0, node_rank=0",
    "[2026-11-24 18:36:20,331 E 13238 13266] core_worker.cc:2465: Actor with class name: 'PreemptionWatcher'",
    "E0000 00:00:1795546774.759850   21638 cuda_platform.cc:52] failed call to cuInit: UNKNOWN ERROR (303)",
]


def shown(rules, lines, source="TrainController", stream=(1, True)) -> list[str]:
    problems = rules["ProblemLines"]()
    return [line for line in lines if problems.shows(source, stream, line)]


def test_a_training_failure_shows_whole_and_a_healthy_run_shows_nothing(script):
    assert shown(script, TRAIN_FAILURE) == TRAIN_FAILURE
    assert shown(script, HEALTHY) == []
    assert shown(script, TRAIN_FAILURE + HEALTHY) == TRAIN_FAILURE  # the problem ends where Ray's chatter resumes


def test_error_records_and_tracebacks_show_from_the_spec_code_only(script):
    record = "2026-11-24 18:36:20,331\tERROR train_loop.py:40 -- could not read the batch"
    assert shown(script, ["Moving model to device: cpu", record], source="RayTrainWorker") == [record]
    assert shown(script, ["Traceback (most recent call last):", "  x"], source="run_trial") == [
        "Traceback (most recent call last):",
        "  x",
    ]
    cleaner = ["Exception in thread PlacementGroupCleanerMonitor:", "Traceback (most recent call last):", "  x"]
    assert shown(script, cleaner, source="PlacementGroupCleaner") == []
    busy = [  # Ray Train's controller on a busy machine
        "Failed to send resource request for train-eab2. If this only happens transiently ..., it's safe to ignore",
        "Traceback (most recent call last):",
        '  File "autoscaling_coordinator_client.py", line 58, in send_resource_request',
        "ray.exceptions.GetTimeoutError: Get timed out",
    ]
    assert shown(script, busy, source="TrainController") == []


def test_each_stream_has_its_own_problem(script):
    problems = script["ProblemLines"]()
    assert problems.shows("RayTrainWorker", (1, True), "Traceback (most recent call last):")
    assert not problems.shows("RayTrainWorker", (2, True), "  an indented line of another worker")
    assert problems.shows("RayTrainWorker", (1, True), '  File "x.py", line 1')


def test_ray_log_is_appended_and_never_a_link_or_a_pipe(script, tmp_path, capsys):
    open_log = script["open_log"]
    log = tmp_path / "ray.log"
    log.write_text("from the first run\n")
    with open_log(str(log)) as handle:
        handle.write("resumed\n")
    assert log.read_text() == "from the first run\nresumed\n"

    target = tmp_path / "elsewhere"
    target.write_text("untouched\n")
    (tmp_path / "linked.log").symlink_to(target)
    assert open_log(str(tmp_path / "linked.log")) is None
    os.mkfifo(tmp_path / "pipe.log")
    assert open_log(str(tmp_path / "pipe.log")) is None  # never blocks waiting for a reader
    assert target.read_text() == "untouched\n"
    assert capsys.readouterr().err.count("warning: Ray's output is not kept in") == 2


def test_ray_log_in_remote_storage_is_written_whole_at_the_end_after_what_was_there(script, tmp_path):
    """A URI run directory (file:// here, s3:// for users) cannot be appended to: ray.log is written at close(),
    the earlier run's lines first."""
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "ray.log").write_text("from the first run\n")
    log = script["RayLog"](f"file://{run_dir}")
    log.write("(RayTrainWorker pid=1) resumed")
    assert (run_dir / "ray.log").read_text() == "from the first run\n"  # nothing yet
    log.close()
    assert (run_dir / "ray.log").read_text() == "from the first run\n(RayTrainWorker pid=1) resumed\n"


def test_ray_datas_own_records_go_to_ray_log_not_the_console(tmp_path):
    """Ray Data logs its progress and plans ("Starting execution of Dataset ...") to a logger with console handlers of
    its own, which do not pass through Ray's: a script that reads through Ray Data routes that logger too."""
    from tests.unit.compiler.test_lean_scripts import module_of

    script = module_of(compile_spec(load(REPO / "specs/digits_ray_data.yaml")))
    ray_data = logging.getLogger("ray.data")
    consoles = [handler for handler in ray_data.handlers if isinstance(handler, logging.StreamHandler)]
    assert consoles, ray_data.handlers  # Ray Data's own console handler (PlainRayHandler)

    def record(level, message):
        return logging.LogRecord("ray.data._internal.execution", level, "streaming_executor.py", 1, message, (), None)

    output = script.RayOutput(str(tmp_path), verbose=False)
    try:
        plan, error = record(logging.INFO, "Starting execution of Dataset d1"), record(logging.ERROR, "a read failed")
        assert not any(console.filter(plan) for console in consoles)  # kept off the console
        assert all(console.filter(error) for console in consoles)  # errors still shown
        logging.getLogger("ray.data._internal.execution").info("Starting execution of Dataset d2")
    finally:
        output.close()
    assert all(console.filter(plan) for console in consoles)  # as Ray had it, once the run is over
    assert "Starting execution of Dataset d2" in (tmp_path / "ray.log").read_text(encoding="utf-8")
