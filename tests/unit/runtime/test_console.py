"""specc_runtime's console rules, called as a module without Ray: which of Ray's worker lines reach the console,
how ray.log is opened, and Ray Data's own records kept off the console for the run."""

from __future__ import annotations

import logging
import os

import specc_runtime

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


def shown(lines, source="TrainController", stream=(1, True)) -> list[str]:
    problems = specc_runtime.ProblemLines()
    return [line for line in lines if problems.shows(source, stream, line)]


def test_a_training_failure_shows_whole_and_a_healthy_run_shows_nothing():
    assert shown(TRAIN_FAILURE) == TRAIN_FAILURE
    assert shown(HEALTHY) == []
    assert shown(TRAIN_FAILURE + HEALTHY) == TRAIN_FAILURE  # the problem ends where Ray's chatter resumes


def test_error_records_and_tracebacks_show_from_the_spec_code_only():
    record = "2026-11-24 18:36:20,331\tERROR train_loop.py:40 -- could not read the batch"
    assert shown(["Moving model to device: cpu", record], source="RayTrainWorker") == [record]
    assert shown(["Traceback (most recent call last):", "  x"], source="run_trial") == [
        "Traceback (most recent call last):",
        "  x",
    ]
    cleaner = ["Exception in thread PlacementGroupCleanerMonitor:", "Traceback (most recent call last):", "  x"]
    assert shown(cleaner, source="PlacementGroupCleaner") == []
    busy = [  # Ray Train's controller on a busy machine
        "Failed to send resource request for train-eab2. If this only happens transiently ..., it's safe to ignore",
        "Traceback (most recent call last):",
        '  File "autoscaling_coordinator_client.py", line 58, in send_resource_request',
        "ray.exceptions.GetTimeoutError: Get timed out",
    ]
    assert shown(busy, source="TrainController") == []


def test_each_stream_has_its_own_problem():
    problems = specc_runtime.ProblemLines()
    assert problems.shows("RayTrainWorker", (1, True), "Traceback (most recent call last):")
    assert not problems.shows("RayTrainWorker", (2, True), "  an indented line of another worker")
    assert problems.shows("RayTrainWorker", (1, True), '  File "x.py", line 1')


def test_ray_log_is_appended_and_never_a_link_or_a_pipe(tmp_path, capsys):
    open_log = specc_runtime.open_log
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


def test_ray_log_in_remote_storage_is_written_whole_at_the_end_after_what_was_there(tmp_path):
    """A URI run directory (file:// here, s3:// for users) cannot be appended to: ray.log is written at close(),
    the earlier run's lines first."""
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "ray.log").write_text("from the first run\n")
    log = specc_runtime.RayLog(f"file://{run_dir}")
    log.write("(RayTrainWorker pid=1) resumed")
    assert (run_dir / "ray.log").read_text() == "from the first run\n"  # nothing yet
    log.close()
    assert (run_dir / "ray.log").read_text() == "from the first run\n(RayTrainWorker pid=1) resumed\n"


def consoles_of(logger):
    """Ray's own console handlers of `logger` (not pytest's capturing ones)."""
    return [handler for handler in logger.handlers if type(handler).__name__ == "PlainRayHandler"]


def test_ray_datas_own_records_go_to_ray_log_not_the_console(tmp_path):
    """Ray Data logs its progress and plans ("Starting execution of Dataset ...") to a logger with console handlers of
    its own, which do not pass through Ray's: a run that reads through Ray Data (ray_data=True) routes that logger too,
    and keeps Ray Data's progress bars off for the run only."""
    import ray.data

    ray_data = logging.getLogger("ray.data")
    consoles = consoles_of(ray_data)
    assert consoles, ray_data.handlers  # Ray Data's own console handler (PlainRayHandler)
    context = ray.data.DataContext.get_current()
    bars = context.enable_progress_bars

    def record(level, message):
        return logging.LogRecord("ray.data._internal.execution", level, "streaming_executor.py", 1, message, (), None)

    output = specc_runtime.RayOutput(str(tmp_path), verbose=False, ray_data=True)
    try:
        plan, error = record(logging.INFO, "Starting execution of Dataset d1"), record(logging.ERROR, "a read failed")
        assert not any(console.filter(plan) for console in consoles)  # kept off the console
        assert all(console.filter(error) for console in consoles)  # errors still shown
        assert context.enable_progress_bars is False
        logging.getLogger("ray.data._internal.execution").info("Starting execution of Dataset d2")
    finally:
        output.close()
    assert all(console.filter(plan) for console in consoles)  # as Ray had it, once the run is over
    assert context.enable_progress_bars == bars
    assert "Starting execution of Dataset d2" in (tmp_path / "ray.log").read_text(encoding="utf-8")


def test_a_run_without_ray_data_leaves_its_logger_alone(tmp_path):
    import ray.data

    ray_data = logging.getLogger("ray.data")
    consoles = consoles_of(ray_data)
    record = logging.LogRecord("ray.data", logging.INFO, "x.py", 1, "Starting execution of Dataset d1", (), None)
    bars = ray.data.DataContext.get_current().enable_progress_bars
    output = specc_runtime.RayOutput(str(tmp_path), verbose=False)
    try:
        assert all(console.filter(record) for console in consoles)
        assert ray.data.DataContext.get_current().enable_progress_bars == bars
    finally:
        output.close()


def test_rays_driver_records_reach_ray_log_and_only_errors_the_console(tmp_path):
    """Ray's driver-side records (Tune's warnings, say): all of them from INFO up in ray.log; on Ray's own console
    handler, errors only, everything with --verbose; the handler as it was once the run is over."""
    ray_logger = logging.getLogger("ray")
    consoles = consoles_of(ray_logger)
    assert consoles, ray_logger.handlers
    warning = logging.LogRecord("ray.tune", logging.WARNING, "tune.py", 1, "a warning of Tune's", (), None)
    error = logging.LogRecord("ray.tune", logging.ERROR, "tune.py", 1, "a trial failed", (), None)

    output = specc_runtime.RayOutput(str(tmp_path), verbose=False)
    try:
        assert not any(console.filter(warning) for console in consoles)
        assert all(console.filter(error) for console in consoles)
        logging.getLogger("ray.tune").warning("Tune's own warning")
    finally:
        output.close()
    assert all(console.filter(warning) for console in consoles)
    log = (tmp_path / "ray.log").read_text()
    assert "WARNING" in log and "Tune's own warning" in log

    verbose = specc_runtime.RayOutput(str(tmp_path), verbose=True)
    try:
        assert all(console.filter(warning) for console in consoles)
    finally:
        verbose.close()


def routed(tmp_path, verbose=False):
    """RayOutput with Ray's printing function replaced by a recorder of what reaches the console."""
    output = specc_runtime.RayOutput(str(tmp_path), verbose=verbose)
    printed = []
    output.print_lines = lambda data, ignore_prefix=False: printed.extend(data["lines"])
    return output, printed


def test_a_workers_lines_go_to_ray_log_and_its_problems_to_the_console(tmp_path):
    output, printed = routed(tmp_path)
    assert output.routed  # this Ray has the dispatcher the runtime swaps
    try:
        lines = ["Moving model to device: cpu", *TRAIN_FAILURE[5:9]]
        output.worker_lines({"pid": 7, "is_err": True, "actor_name": "RayTrainWorker", "lines": lines})
        output.raylet_lines({"pid": "raylet", "lines": ["12 PYTHON worker processes have been started on node x"]})
        output.raylet_lines({"pid": "raylet", "lines": ["a task was killed: the node is out of memory"]})
    finally:
        output.close()
    assert printed == [*TRAIN_FAILURE[5:9], "a task was killed: the node is out of memory"]
    log = (tmp_path / "ray.log").read_text()
    assert "(RayTrainWorker pid=7) Moving model to device: cpu" in log
    assert "(raylet) 12 PYTHON worker processes have been started" in log


def test_verbose_shows_every_workers_line(tmp_path):
    output, printed = routed(tmp_path, verbose=True)
    try:
        output.worker_lines({"pid": 7, "is_err": False, "actor_name": "RayTrainWorker", "lines": HEALTHY})
        output.raylet_lines({"pid": "raylet", "lines": ["3 PYTHON worker processes have been started on node x"]})
    finally:
        output.close()
    assert printed == [*HEALTHY, "3 PYTHON worker processes have been started on node x"]


def test_close_gives_rays_printing_back(tmp_path):
    import ray

    before = ray._private.worker.print_to_stdstream
    output = specc_runtime.RayOutput(str(tmp_path), verbose=False)
    assert ray._private.worker.print_to_stdstream == output.raylet_lines
    output.close()
    assert ray._private.worker.print_to_stdstream is before
    dispatcher = specc_runtime.ray_private("ray_logging", "global_worker_stdstream_dispatcher")
    assert "specc_ray_log" not in [name for name, _ in dispatcher.handlers]


def test_axs_records_go_to_ray_log_and_only_its_errors_to_the_console(tmp_path):
    """Ax, which Ray's AxSearch drives, logs through a console handler of its own ("Random seed set to ...", its
    generation strategy as the search starts): during a run those records go to ray.log, and only Ax's errors show."""
    import ax  # noqa: F401  (its console handler is put on the "ax" logger as it is imported)

    handlers = [handler for handler in logging.getLogger("ax").handlers if isinstance(handler, logging.StreamHandler)]
    assert handlers
    notice = logging.LogRecord("ax.service.ax_client", logging.WARNING, "ax_client.py", 1, "Random seed set", (), None)
    error = logging.LogRecord("ax.service.ax_client", logging.ERROR, "ax_client.py", 1, "a trial failed", (), None)
    output = specc_runtime.RayOutput(str(tmp_path), verbose=False)
    try:
        assert not any(handler.filter(notice) for handler in handlers)
        assert all(handler.filter(error) for handler in handlers)
        logging.getLogger("ax.service.ax_client").warning("Random seed set to 3")
    finally:
        output.close()
    assert all(handler.filter(notice) for handler in handlers)  # as Ax had it, once the run is over
    assert "Random seed set to 3" in (tmp_path / "ray.log").read_text(encoding="utf-8")


def warn_from_a_library(message, category, file="library.py"):
    """warnings.warn as a library in the driver calls it: from a module of its own, not __main__."""
    exec(
        compile("import warnings\nwarnings.warn(message, category)", file, "exec"),
        {"message": message, "category": category},
    )


def test_the_warnings_of_a_searchers_model_fitting_go_to_ray_log(tmp_path):
    """BoTorch's warnings as Ax fits its model ("Optimization failed in gen_candidates_scipy", a RuntimeWarning it
    recovers from) are ray.log's; the same warning from the spec's own code reaches the console."""
    import warnings

    console = []

    def show(message, category, filename, lineno, file=None, line=None):
        console.append(f"{category.__name__}: {message}")

    fitting = "/venv/lib/python3.11/site-packages/botorch/optim/optimize.py"
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = show
        output = specc_runtime.RayOutput(str(tmp_path), verbose=False)
        try:
            warn_from_a_library("Optimization failed in `gen_candidates_scipy`", RuntimeWarning, fitting)
            warn_from_a_library("overflow in exp", RuntimeWarning, "/project/factories/objectives.py")
        finally:
            output.close()
    assert console == ["RuntimeWarning: overflow in exp"]
    assert "Optimization failed in `gen_candidates_scipy`" in (tmp_path / "ray.log").read_text(encoding="utf-8")


def test_a_librarys_notices_in_the_driver_go_to_ray_log_and_its_other_warnings_to_the_console(tmp_path):
    """A library's notice about its own future (statsmodels' FutureWarning each time TuneBOHB fits its model) is
    ray.log's, on the console with --verbose; its other warnings (a UserWarning: what the run may be doing wrong)
    reach the console as before; warnings.showwarning is the process's again after the run."""
    import warnings

    console = []

    def show(message, category, filename, lineno, file=None, line=None):  # the process's showwarning: the console
        console.append(f"{category.__name__}: {message}")

    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = show
        output = specc_runtime.RayOutput(str(tmp_path), verbose=False)
        try:
            warn_from_a_library("After 0.17 or January 2028, the default will switch", FutureWarning)
            warn_from_a_library("a deprecated call", DeprecationWarning)
            warn_from_a_library("the target's size differs from the input's", UserWarning)
        finally:
            output.close()
        assert warnings.showwarning is show
        assert console == ["UserWarning: the target's size differs from the input's"]
        log = (tmp_path / "ray.log").read_text(encoding="utf-8")
        assert "library.py:2: FutureWarning: After 0.17 or January 2028" in log
        assert "DeprecationWarning: a deprecated call" in log and "target's size" not in log

        verbose = specc_runtime.RayOutput(str(tmp_path), verbose=True)
        try:
            warn_from_a_library("After 0.17 or January 2028, the default will switch", FutureWarning)
        finally:
            verbose.close()
        assert console[1:] == ["FutureWarning: After 0.17 or January 2028, the default will switch"]
        assert warnings.showwarning is show


def test_a_showwarning_a_library_puts_back_after_the_run_is_the_processes(tmp_path):
    """A library that saves warnings.showwarning during the run (warnings.catch_warnings) and puts it back after the
    run closed leaves the run's in place: a warning then reaches what the run had replaced, not a closed ray.log."""
    import warnings

    console = []

    def show(message, category, filename, lineno, file=None, line=None):
        console.append(f"{category.__name__}: {message}")

    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = show
        output = specc_runtime.RayOutput(str(tmp_path), verbose=False)
        library = warnings.catch_warnings()
        library.__enter__()  # saves the run's showwarning
        output.close()
        library.__exit__(None, None, None)  # puts it back, the run over
        warn_from_a_library("After 0.17 or January 2028, the default will switch", FutureWarning)
        assert console == ["FutureWarning: After 0.17 or January 2028, the default will switch"]
