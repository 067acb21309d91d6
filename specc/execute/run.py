"""`specc run`: the compiled source executed in this process (no temporary script, no subprocess).

The experiment's source is compiled under the name of the run directory's `script.py`, and the runtime it imports
(specc_runtime.py, specc's own copy) under `specc_runtime.py` beside it; each is executed in a fresh module that is
registered in sys.modules only while the run lasts, and registered with cloudpickle to be pickled by value, so Ray
workers receive exactly the code that is written to the run directory.
"""

from __future__ import annotations

import contextlib
import importlib
import linecache
import os
import signal
import sys
import threading
import types
from dataclasses import dataclass, field

from specc import runtime
from specc.read.terminal import err, write_err
from specc.spec import Experiment
from specc.spec.errors import Problem, SpecError


@dataclass
class RunResult:
    """What a finished run left: its directory, the best epoch's metrics and checkpoint, its status and what to
    tell about it: E415 when it diverged (every trial, in a search), W310 for a search's diverged trials."""

    run_dir: str
    metrics: dict = field(default_factory=dict)
    checkpoint: str | None = None
    status: str = "completed"  # or "diverged": a loss became NaN or infinite and training stopped
    problems: tuple[Problem, ...] = ()


def run(
    experiment: Experiment,
    *,
    smoke: bool = False,
    resume: bool = False,
    force: bool = False,
    address: str | None = None,
    storage_path: str | None = None,
    templates=None,
    quiet: bool = False,
    verbose: bool = False,
    echo: bool = True,
) -> RunResult:
    from specc.compiler.script import compile_script

    _check_installed(experiment)
    if experiment.framework == "tensorflow" and not verbose:
        _import_tensorflow_quietly()
    if experiment.tune is not None and experiment.tune.search.type == "ax" and not verbose:
        _import_quietly("ray.tune.search.ax")  # which imports Ax
    source = compile_script(experiment, templates=templates)
    sources = {"script.py": source, runtime.FILE: runtime.source()}
    # Registered while it runs: pickle finds the script's functions by module name (Tune saves a searcher's state
    # with its search space, which for an Optuna define-by-run space is the script's define_space function), and
    # Ray's cloudpickle still ships them to its workers by value, as it does a script run as __main__. The runtime
    # registers itself so when it is imported (not run as __main__).
    from ray import cloudpickle

    helper = _module(runtime.NAME, runtime.FILE, sources[runtime.FILE])
    module = _module(f"specc_run_{experiment.name.replace('-', '_')}", "script.py", source)
    saved = sys.modules.get(runtime.NAME, _ABSENT)
    by_value = runtime.NAME in cloudpickle.list_registry_pickle_by_value()  # e.g. a runtime this process imported
    sys.modules[runtime.NAME] = helper
    try:
        exec(compile(sources[runtime.FILE], helper.__file__, "exec"), helper.__dict__)
        sys.modules[module.__name__] = module
        cloudpickle.register_pickle_by_value(module)
        try:
            with _interrupt_handler_kept():
                exec(compile(source, module.__file__, "exec"), module.__dict__)
                options = (smoke, resume, force, address, storage_path, quiet, verbose, echo)
                return _run_module(module, experiment, sources, *options)
        finally:
            cloudpickle.unregister_pickle_by_value(module)
            sys.modules.pop(module.__name__, None)
    finally:
        if not by_value and runtime.NAME in cloudpickle.list_registry_pickle_by_value():
            cloudpickle.unregister_pickle_by_value(helper)
        if saved is _ABSENT:
            sys.modules.pop(runtime.NAME, None)
        else:
            sys.modules[runtime.NAME] = saved


_ABSENT = object()


def _module(name: str, file: str, source: str) -> types.ModuleType:
    """A fresh module for `source`, named `name`, as if read from `file` in the working directory (relative paths
    in the script start there); its lines are in linecache, for tracebacks."""
    module = types.ModuleType(name)
    module.__file__ = os.path.join(os.getcwd(), file)
    linecache.cache[module.__file__] = (len(source), None, source.splitlines(True), module.__file__)
    return module


@contextlib.contextmanager
def _interrupt_handler_kept():
    """Ctrl-C handled after the run as before it. Ray Train's fit() installs a handler of its own (it aborts the
    run's controller) and leaves it installed when it returns. Its closure holds the controller's handle, which kept
    the finished run's controller (and its dataset manager) alive in this process's Ray until another run replaced
    the handler, and a later Ctrl-C would have gone to a run that was over instead of to what the process does next."""
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGINT) is None:
        yield  # only the main thread has handlers; None: one not installed from Python, which cannot be put back
        return
    previous = signal.getsignal(signal.SIGINT)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _run_module(module, experiment, sources, smoke, resume, force, address, storage_path, quiet, verbose, echo):

    argv = [*(["--smoke"] if smoke else []), *(["--resume"] if resume else []), *(["--force"] if force else [])]
    argv += ["--quiet"] if quiet else []
    argv += ["--verbose"] if verbose else []
    argv += [*(["--address", address] if address else []), *(["--storage-path", storage_path] if storage_path else [])]
    artefacts = {**sources, "spec.resolved.yaml": module.RESOLVED_SPEC}  # script.py and specc_runtime.py: what ran
    spec_file = getattr(getattr(experiment, "_raw", None), "file", None)
    address = address or experiment.cluster.address
    storage = storage_path or experiment.run.storage_path
    storage = storage if "://" in storage else os.path.abspath(storage)
    if not ray_is_up() and "working_dir" in module.RUN and module.specc_runtime.joins_cluster(address):
        _check_shipment(module, storage, spec_file)
    started = _start_ray(module, address, storage, spec_file, quiet, verbose)
    try:
        summary = module.main(argv, artefacts=artefacts, echo=echo, ray_started=started)
    except SystemExit as stop:
        if isinstance(stop.__cause__, module.specc_runtime.DataProblem):  # found by the driver, in a spec field
            raise SpecError([_data_problem(experiment, stop.__cause__)]) from None
        if isinstance(stop.code, str):  # the script's own refusal, e.g. an existing run without --resume
            unreadable = isinstance(stop.__cause__, module.specc_runtime.CheckpointUnreadable)
            raise SpecError([Problem("E411" if unreadable else "E401", stop.code, spec_file)]) from None
        raise
    finally:
        if started:
            import ray

            ray.shutdown()
    status = summary.get("status", "completed")
    problems = diverged_problems(experiment, summary, spec_file)
    return RunResult(summary["run_dir"], summary["metrics"], summary["checkpoint"], status, problems)


def _data_problem(experiment: Experiment, problem) -> Problem:
    """The script's DataProblem located at its spec field: E417 when Ray Data would have no CPU, else E416."""
    from specc.check.fields import Locator
    from specc.read.document import SourceMap

    raw = getattr(experiment, "_raw", None)
    code = "E417" if problem.field.startswith("scaling.") else "E416"
    return Locator(raw.source if raw else SourceMap())(code, str(problem), tuple(problem.field.split(".")))


def diverged_problems(experiment: Experiment, summary: dict, spec_file: str | None) -> tuple[Problem, ...]:
    """E415 for a run that diverged (a search: when every trial did), W310 naming a search's diverged trials;
    each with the spec fields that tame a diverging loss."""
    where = summary.get("diverged")
    if not where:
        return ()
    hint = _taming_hint(experiment)
    if experiment.tune is None:
        message = f"{experiment.name} diverged: {where['metric']} is NaN or infinite at epoch {where['epoch']}"
        return (Problem("E415", message, spec_file, hint=hint),)
    trials = ", ".join(f"{d['trial_id']} ({d['metric']} at epoch {d['epoch']})" for d in where)
    if summary.get("status") == "diverged":
        message = f"{experiment.name} diverged: every trial's loss became NaN or infinite: {trials}"
        return (Problem("E415", message, spec_file, hint=hint),)
    message = f"{len(where)} trial(s) diverged (a NaN or infinite loss) and stopped: {trials}; the best is another"
    return (Problem("W310", message, spec_file, hint=hint),)


def _taming_hint(experiment: Experiment) -> str:
    """The spec fields that tame a diverging loss, with their values (or where the search samples them)."""
    searched = experiment.tune.space if experiment.tune else {}
    training = experiment.training
    name = "learning_rate" if "learning_rate" in (training.optimizer.model_extra or {}) else "lr"  # Keras' own name
    value = getattr(training.optimizer, name, None)
    lr = "searched in tune.space" if f"training.optimizer.{name}" in searched else f"now {value:g}" if value else ""
    hint = f"lower the learning rate (training.optimizer.{name}{', ' + lr if lr else ''})"
    if "training.grad_clip_norm" in searched:
        return f"{hint} or clip gradients harder (training.grad_clip_norm, searched in tune.space)"
    if training.grad_clip_norm is None:
        return f"{hint} or clip gradients (training.grad_clip_norm, e.g. 1.0)"
    return f"{hint} or clip gradients harder (training.grad_clip_norm, now {training.grad_clip_norm:g})"


def _check_installed(experiment: Experiment) -> None:
    """A searcher or tracker whose package is not installed stops the run before Ray starts, located, naming the
    extra to install (not an ImportError from the script)."""
    from specc.check.extras import not_installed
    from specc.check.fields import Locator
    from specc.read.document import SourceMap

    raw = getattr(experiment, "_raw", None)
    problems = not_installed(experiment, Locator(raw.source if raw else SourceMap()), "E401")
    if problems:
        raise SpecError(problems)


def _import_tensorflow_quietly() -> None:
    """TensorFlow's C++ start-up lines (oneDNN, CUDA drivers, CPU instructions) come before its logging is set up,
    so TF_CPP_MIN_LOG_LEVEL cannot stop them: the import runs with the process's stderr set aside (_import_quietly).
    The variable still quiets TensorFlow's later C++ lines, here and in the workers of a local Ray (which inherit
    this environment)."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    _import_quietly("tensorflow")


def _import_quietly(name: str) -> None:
    """Imports `name` with the process's stderr set aside, and shows what it wrote only if the import fails: what a
    library prints as it is imported (TensorFlow's C++ start-up lines; Ax's notice that it disables SQL storage, and
    the deprecation warnings of the models it imports) comes before the run routes its output to ray.log, and is
    nothing a spec can act on."""
    import sys
    import tempfile

    if name in sys.modules:
        return
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as aside:
        os.dup2(aside.fileno(), 2)
        try:
            importlib.import_module(name)
            sys.stderr.flush()
        except BaseException:
            sys.stderr.flush()
            os.dup2(saved, 2)
            aside.seek(0)
            write_err(aside.read().decode(errors="backslashreplace"))
            raise
        finally:
            os.dup2(saved, 2)
            os.close(saved)


def ray_is_up() -> bool:
    import ray

    return ray.is_initialized()


def _check_shipment(module, storage: str, spec_file: str | None) -> None:
    """Joining a cluster, the working directory travels with the job: one larger than Ray uploads is refused
    here, with what fills it, before anything is sent; links Ray must not follow join the script's excludes, and
    what stays behind unasked (secrets, those links) is named on stderr."""
    from specc.compiler.travels import storage_exclude
    from specc.execute import shipping

    experiment = module.RUN
    root = os.path.normpath(os.path.join(os.path.dirname(module.__file__), experiment["working_dir"]))
    excludes = [*module.specc_runtime.LEFT_BEHIND, *experiment.get("excludes", [])]
    package = shipping.checked(root, excludes + storage_exclude(storage, root), spec_file)
    experiment["excludes"] = [*experiment.get("excludes", []), *package.links]
    warning = shipping.left_behind_warning(package, spec_file)
    if warning:
        err(warning)


def _start_ray(module, address: str | None, storage: str, spec_file: str | None, quiet: bool, verbose: bool) -> bool:
    """Ray is started (or joined) here, so that a cluster that cannot be reached is a problem, not a traceback."""
    try:  # for a spec with a runtime_env or a working directory to ship (the storage path stays behind)
        runtime_env = module.specc_runtime.job_runtime_env(module.RUN, module.__file__, address, storage)
        return module.specc_runtime.start_ray(address, quiet, verbose, runtime_env)
    except SystemExit as stop:
        raise SpecError([Problem("E402", str(stop.code), spec_file)]) from None
