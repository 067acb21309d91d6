"""run_script (specc/results/after.py): the console of an after-training script run in this process. Native
libraries' own log lines (TensorFlow's C++, Ray's core worker) are set aside; everything else is passed on while
the script still runs; what Ray says before it ends the process is never set aside; a failing script shows all."""

from __future__ import annotations

import os
import time

import pytest

from specc.results.after import run_script

TENSORFLOW = "E0000 00:00:1795641761.040799   32373 cuda_platform.cc:52] failed call to cuInit"
ABSL = "WARNING: All log messages before absl::InitializeLog() is called are written to STDERR"  # before TENSORFLOW
RAY_NOTICE = "[2026-11-26 01:01:46,004 E 11761 11761] core_worker.cc:2465: Actor with class name: 'MapWorker'"
RAY_LAST = (
    "[2026-11-26 01:01:47,004 E 11761 11790] core_worker.cc:900: The core worker has already been shutdown. "
    "The process will exit"
)
RAY_FATAL = "[2026-11-26 01:01:47,104 F 11761 11790] reference_counter.cc:80:  Check failed: it != end()"
RAY_INFO = "[2026-11-26 01:01:47,204 I 11761 11790] gcs_client.cc:90: the node 0a1b is dead"  # a record, kept aside
SCRIPT = f"""
import os

def say(*lines):
    for line in lines:
        os.write(2, (line + "\\n").encode())

say({ABSL!r}, {TENSORFLOW!r}, "a warning of the script's own")
say({RAY_NOTICE!r}, {RAY_INFO!r}, {RAY_LAST!r}, {RAY_FATAL!r})
"""


def shown(capfd, seconds=5.0) -> str:
    """What reached standard error so far, once something has (the relay copies lines as they are written)."""
    deadline, seen = time.monotonic() + seconds, ""
    while not seen and time.monotonic() < deadline:
        seen = capfd.readouterr().err
        time.sleep(0.02)
    return seen


def test_native_log_lines_are_set_aside_and_the_rest_is_shown_while_the_script_runs(capfd):
    seen_during = run_script(SCRIPT, "/nowhere/evaluate.py", "torch", lambda module: shown(capfd))
    seen_after = capfd.readouterr().err
    assert "a warning of the script's own" in seen_during  # shown before the script ended, not at its end
    shown_all = seen_during + seen_after
    assert RAY_LAST in shown_all and RAY_FATAL in shown_all  # Ray's last words before it ends the process
    assert not [line for line in (ABSL, TENSORFLOW, RAY_NOTICE, RAY_INFO) if line in shown_all], shown_all
    os.write(2, b"after\n")
    assert capfd.readouterr().err == "after\n"  # standard error is this process's own again


def test_a_failing_script_shows_what_was_set_aside(capfd):
    def fail(module):
        raise RuntimeError("the script failed")

    with pytest.raises(RuntimeError):
        run_script(SCRIPT, "/nowhere/evaluate.py", "torch", fail)
    err = capfd.readouterr().err
    assert ABSL in err and TENSORFLOW in err and RAY_NOTICE in err and "a warning of the script's own" in err


def test_a_last_line_without_a_newline_is_not_lost(capfd):
    run_script("import os\nos.write(2, b'no newline')\n", "/nowhere/predict.py", "torch", lambda module: None)
    assert capfd.readouterr().err.rstrip("\n") == "no newline"


def test_ray_datas_settings_are_the_processs_own_again_after_the_script():
    """predict.py quiets Ray Data and keeps its rows in order for itself; a training run the same Python session
    starts next must stream with the process's own settings."""
    import logging

    import ray.data

    before = ray.data.DataContext.get_current()
    order, bars, level = (
        before.execution_options.preserve_order,
        before.enable_progress_bars,
        logging.getLogger("ray.data").level,
    )
    script = "import logging, ray.data\ncontext = ray.data.DataContext.get_current()\n"
    script += "context.execution_options.preserve_order = not context.execution_options.preserve_order\n"
    script += "context.enable_progress_bars = not context.enable_progress_bars\n"
    script += "logging.getLogger('ray.data').setLevel(logging.CRITICAL)\n"
    changed = run_script(script, "/nowhere/predict.py", "torch", lambda module: module.context)
    assert changed.execution_options.preserve_order != order  # the script did change them, for itself
    after = ray.data.DataContext.get_current()
    assert (after.execution_options.preserve_order, after.enable_progress_bars) == (order, bars)
    assert logging.getLogger("ray.data").level == level
