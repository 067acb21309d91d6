"""specc_runtime: the run plumbing every script specc compiles shares, written beside the experiment file.

The experiment file (`specc compile SPEC -o build/NAME.py`) holds what its spec decides: the data, the model, the
training loop or objective, the Trainer or Tuner. This module holds what is the same for every spec and changes no
number the experiment produces: the run directory and its lock, starting or joining Ray, progress on the console,
Ray's own output kept in ray.log, results files, reading checkpoints back. It needs ray, never specc.

Written by specc; do not edit by hand: `specc compile` writes it again, and an experiment file refuses to run next
to a runtime of another specc version.
"""

import argparse
import contextlib
import copy
import dataclasses
import fcntl
import functools
import importlib
import inspect
import json
import logging
import math
import os
import re
import socket
import stat
import sys
import tempfile
import threading
import time
import warnings
import zipfile

import pyarrow.fs
import ray
import ray.cloudpickle
import ray.train
import ray.tune
import ray.tune.logger
import ray.tune.search.repeater
import ray.tune.stopper
import ray.util.queue

VERSION = "0.1.0"  # the specc that wrote this runtime; its experiment files ask for it (expect)


def expect(version):
    """Stops an experiment file compiled by another specc than this runtime: they are written as a pair."""
    if version != VERSION:
        raise SystemExit(
            f"{__file__} was written by specc {VERSION}, the experiment file beside it by specc {version}: "
            "compile the spec again (`specc compile SPEC -o FILE` writes both)"
        )


if __name__ != "__main__" and sys.modules.get(__name__) is not None:
    # Ray's workers and Train's controller run this module's code (callbacks, checkpoint reading) without it
    # being installed on their nodes: their functions travel by value, as the experiment's own do.
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])


# Results and checkpoints: how a run's epochs are judged, kept and read back.
def diverged(metrics):
    """The epoch's loss that is NaN or infinite, if one is: training has diverged, and no later epoch recovers
    from NaN weights."""
    return next((name for name in ("train_loss", "val_loss") if not math.isfinite(metrics.get(name, 0.0))), None)


def epochs_held(state):
    """How many epochs a checkpoint holds (its state, or a Tune checkpoint's metadata): its epoch, counted from 1 as
    the reports count. One an earlier specc wrote counted from 0: it has no epochs_counted_from."""
    return state["epoch"] + (0 if state.get("epochs_counted_from") == 1 else 1)


def history_held(state):
    """The metrics of the epochs a checkpoint's state holds, numbered from 1 (an earlier specc's renumbered)."""
    shift = epochs_held(state) - state["epoch"]
    return [{**row, "epoch": row["epoch"] + shift} for row in state["history"]]


class EpochProgress:
    """`epoch i/N`, the epoch's metrics, the time since the run began and the time left (ETA: the epochs to go at
    the mean pace of those this process saw end after the first, which also paid for starting the workers)."""

    def __init__(self, name, epochs):
        self.name, self.epochs, self.began, self.first, self.seen = name, epochs, time.monotonic(), None, 0
        self.bar = None
        if sys.stdout.isatty():
            import tqdm

            self.bar = tqdm.tqdm(total=epochs, desc=name, unit="epoch", file=sys.stdout)

    def log(self, metrics):
        now, done = time.monotonic(), metrics["epoch"]  # counted from 1: the epochs done
        self.seen += 1
        self.first = self.first or now
        pace = (now - self.first) / (self.seen - 1) if self.seen > 1 else None
        shown = metric_text(metrics)
        if self.seen == 1 and "num_parameters" in metrics:  # the same every epoch: shown once, not on each line
            size = f"{self.name}: the model has {metrics['num_parameters']:,} trainable parameters (num_parameters)"
            if self.bar:
                self.bar.write(size, file=sys.stdout)
            else:
                print(size, flush=True)
        if self.bar:
            self.bar.update(done - self.bar.n)
            self.bar.set_postfix_str(shown)
            return
        eta = duration(pace * (self.epochs - done)) if pace is not None else "-"
        line = f"{self.name}: epoch {done}/{self.epochs}  {shown}  elapsed {duration(now - self.began)}  eta {eta}"
        print(line, flush=True)

    def close(self):
        if self.bar:
            self.bar.close()


class ShowEpochs(ray.train.UserCallback):
    """Sends worker 0's metrics of each report to the driver. Ray Train calls it in its controller (an actor on the
    driver's node, in a local Ray, a joined cluster or a Ray Job alike); a driver thread drains the queue."""

    def __init__(self, queue):
        self.queue = queue

    def after_report(self, run_context, metrics, checkpoint):
        # Not queue.put(): a blocking ray.get in the controller (an asyncio actor) makes Ray warn. Waiting for the put
        # keeps every epoch ahead of the end mark the driver puts after fit().
        ray.wait([self.queue.actor.put_nowait.remote(metrics[0])], timeout=10)


@contextlib.contextmanager
def showing_epochs(progress):
    """Yields the ShowEpochs callback for the Trainer; meanwhile a thread of this process prints what it sends.
    fit() stays in the main thread, where Ray Train's Ctrl-C handler must be."""
    queue = ray.util.queue.Queue(actor_options={"num_cpus": 0})
    thread = threading.Thread(target=drain, args=(queue, progress), daemon=True)
    thread.start()
    try:
        yield ShowEpochs(queue)
    finally:
        with contextlib.suppress(Exception):  # progress never fails a run
            queue.put(None)  # the end mark: the thread prints what came before and stops
            thread.join(timeout=10)
            queue.shutdown()
        progress.close()


def drain(queue, progress):
    with contextlib.suppress(Exception):  # Ray going down (Ctrl-C) ends the thread, not the run
        while (metrics := queue.get()) is not None:
            progress.log(metrics)


def metric_text(metrics, names=None):
    """The reported metrics (those of `names` only, in its order: a search's) as `name value` pairs (4 significant
    digits), but for epoch and num_parameters (the same every epoch: shown on its own)."""
    hidden = ("epoch", "num_parameters")
    shown = [name for name in (metrics if names is None else names) if name not in hidden and name in metrics]
    return "  ".join(f"{name} {number(metrics[name])}" for name in shown)


def number(value):
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def duration(seconds):
    """12.3s, 4m05s, 1h02m."""
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes = int(seconds // 60)
    return f"{minutes}m{int(seconds % 60):02d}s" if minutes < 60 else f"{minutes // 60}h{minutes % 60:02d}m"


def fit(trainer):
    """trainer.fit(); a run none of whose checkpoints can be read stops with that message, not a traceback (from
    the workers, or in Ray Train's local mode from this process)."""
    try:
        return trainer.fit()
    except CheckpointUnreadable as error:
        raise SystemExit(str(error)) from error
    except ray.train.WorkerGroupError as error:
        unreadable = [e for e in error.worker_failures.values() if isinstance(e, CheckpointUnreadable)]
        if unreadable:
            raise SystemExit(str(unreadable[0])) from unreadable[0]
        raise


def write_run_results(run_dir, result, score=None, recorded=None):
    """results.csv (one row per epoch) and best.json (its status, best epoch's metrics and checkpoint) in the run
    directory; returns best.json's summary. A run that diverged stopped at its first NaN or infinite loss: its best
    epoch is one before that. `score`: (metric, mode) that ranks the epochs (run.checkpoint_score), else the last is
    best; `recorded`: more entries for best.json (the spec's directory)."""
    if result.error:
        raise result.error
    history = result.return_value or []
    loss = diverged(history[-1]) if history else None
    finite = history[:-1] if loss else history
    # Ray Train's local mode (num_workers=0) keeps no checkpoints: result.path is None there.
    persisted = result.path is not None and result.best_checkpoints
    if score:
        metric, mode = score
        best = (max if mode == "max" else min)(finite, key=lambda row: row[metric], default={})
        checkpoint = result.get_best_checkpoint(metric, mode) if persisted else None
    else:
        best = finite[-1] if finite else {}
        checkpoint = result.checkpoint if persisted else None
    columns = list(history[0]) if history else []
    rows = [",".join(columns)] + [",".join(repr(row[name]) for name in columns) for row in history]
    summary = {
        "status": "diverged" if loss else "completed",
        "diverged": {"epoch": history[-1]["epoch"], "metric": loss} if loss else None,
        "metrics": best,
        "epochs_counted_from": 1,  # as every output counts them (an earlier specc counted from 0)
        "checkpoint": checkpoint.path if checkpoint else None,
        "run_dir": run_dir,
        **(recorded or {}),
    }
    write_files(run_dir, {"results.csv": "\n".join(rows) + "\n", "best.json": strict_json(summary)})
    return summary


def strict_json(value):
    """JSON text with NaN and infinities as null (json.dumps alone writes a bare NaN, which is not JSON)."""
    return json.dumps(nulled(value), indent=2, allow_nan=False) + "\n"


def nulled(value):
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: nulled(item) for key, item in value.items()}
    return [nulled(item) for item in value] if isinstance(value, list) else value


def worker_resources(scaling):
    """What one worker reserves, by Ray Train's rule: resources_per_worker, else 1 CPU (a GPU with use_gpu)."""
    resources = dict(scaling["resources_per_worker"] or ({} if scaling["use_gpu"] else {"CPU": 1}))
    if scaling["use_gpu"]:
        resources.setdefault("GPU", 1)
    if "accelerator_type" in scaling:  # a node with this accelerator type
        resources.setdefault(f"accelerator_type:{scaling['accelerator_type']}", 0.001)
    return resources


def run_location(storage_path, name):
    """(storage path, run directory): local paths made absolute, URIs (s3://, gs://, ...) kept."""
    storage_path = storage_path if "://" in storage_path else os.path.abspath(storage_path)
    return storage_path, os.path.join(storage_path, name)


def claim(run_dir):
    """Holds RUN_DIR/.specc.lock (this run's pid, host and start time) until release(), so that a second run of the
    same name is refused instead of writing into this one's directory. The lock is the kernel's (flock): it ends
    with this process however that ends, and a lock file a killed run left behind is taken over. Storage given as
    a URI (s3://, gs://) has no such lock: only local run directories are claimed."""
    if "://" in run_dir:
        return None
    path = os.path.join(run_dir, ".specc.lock")
    try:
        os.makedirs(run_dir, exist_ok=True)
        while True:
            lock = open(path, "a+", encoding="utf-8")  # noqa: SIM115 - held until release(lock)
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                lock.seek(0)
                holder = holder_of(lock.read())
                lock.close()
                raise SystemExit(
                    f"{run_dir} is in use by {holder}: wait for that run to end (or stop it), "
                    "or start this one under another --storage-path"
                ) from None
            if os.path.exists(path) and os.path.samestat(os.fstat(lock.fileno()), os.stat(path)):
                break
            lock.close()  # its holder ended and removed the file as this run opened it: open the new one
    except OSError as error:
        raise SystemExit(f"cannot claim the run directory {run_dir}: {error}") from None
    lock.seek(0)
    left = lock.read()
    if left:
        print(f"{run_dir} was held by {holder_of(left)}, which is gone: this run takes it over", file=sys.stderr)
    holder = {"pid": os.getpid(), "host": socket.gethostname(), "started": time.strftime("%Y-%m-%d %H:%M:%S %z")}
    lock.truncate(0)
    lock.write(json.dumps(holder))
    lock.flush()
    return lock


def holder_of(text):
    """The run a lock file names, in words."""
    try:
        holder = json.loads(text)
        return f"the run of pid {holder['pid']} on {holder['host']}, started {holder['started']}"
    except (ValueError, TypeError, KeyError):
        return "another run, which is starting"


def release(lock):
    """Ends the claim. The file goes while still locked: a run starting just then finds it held or gone, never a
    left-over lock file it would report as a killed run's. A run refused before it wrote anything (Ray unreachable,
    say) leaves no empty run directory behind."""
    if lock:
        if os.path.exists(lock.name):
            os.remove(lock.name)
        lock.close()
        with contextlib.suppress(OSError):  # not empty: the run's files stay
            os.rmdir(os.path.dirname(lock.name))


def check_resumable(run_dir, resume, force, resolved_spec, search=False, refusal=None):
    """A run that got as far as its first result is continued only with --resume, and only from the spec that
    started it (or --force); a start that failed before that left nothing to keep, and the run starts afresh."""
    filesystem, root = pyarrow.fs.FileSystem.from_uri(run_dir)
    if not has_results(filesystem, root, search):
        return
    if not resume:
        raise SystemExit(f"{run_dir} exists: pass --resume to continue that run, or remove it")
    if refusal:  # why this run cannot be continued (run.resume: never; no checkpoints)
        raise SystemExit(f"{run_dir} {refusal}")
    started_from = filesystem.get_file_info(f"{root}/spec.resolved.yaml")
    if force or started_from.type != pyarrow.fs.FileType.File:
        return
    with filesystem.open_input_stream(started_from.path) as stream:
        if not same_spec(stream.read(SPEC_BYTES + 1), resolved_spec):
            raise SystemExit(
                f"{run_dir} was started from another spec (its spec.resolved.yaml differs from this one): "
                "pass --force to resume it with this spec anyway"
            )


SPEC_BYTES = 1 << 16  # a resolved spec is a few KB: a larger spec.resolved.yaml is not this run's


def same_spec(recorded, resolved_spec):
    """Whether a run directory's spec.resolved.yaml (bytes) records `resolved_spec`: the same text, or the same data
    in another layout (an earlier specc wrote it in block style)."""
    text = recorded.decode(errors="replace")
    if text == resolved_spec:
        return True
    if len(recorded) > SPEC_BYTES:
        return False
    import yaml

    try:
        return yaml.safe_load(text) == yaml.safe_load(resolved_spec)
    except yaml.YAMLError:
        return False


def has_results(filesystem, root, search=False):
    """Whether the run in `root` got as far as a checkpoint (Ray Train's list of them) or its results; a `search`:
    whether a trial of it reported a result (Tune appends each to the trial's result.json), or it finished."""
    if search:
        entries = filesystem.get_file_info(pyarrow.fs.FileSelector(root, allow_not_found=True))
        trials = [f"{entry.path}/result.json" for entry in entries if entry.base_name.startswith("trial_")]
        kept = [f"{root}/best.json", *trials]
    else:
        kept = [f"{root}/{name}" for name in ("checkpoint_manager_snapshot.json", "results.csv", "best.json")]
    return any(info.size for info in filesystem.get_file_info(kept))


def start_ray(address, quiet, verbose, runtime_env=None, timeout_s=60):
    """Starts a Ray of this run's own, or joins the cluster at `address` (see ray_address); returns whether it
    did, after a line saying which Ray the run uses. An address where nothing listens is refused at once, and one
    whose host does not answer after `timeout_s` (cluster.init_timeout_s), where ray.init itself would retry for
    minutes. `runtime_env`: the job's (the experiment's job_runtime_env)."""
    if ray.is_initialized():
        return False
    if address and address not in ("auto", "local"):
        host, _, port = address.removeprefix("ray://").rpartition(":")
        try:
            socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s).close()
        except OSError as error:
            raise SystemExit(f"cannot reach a Ray cluster at {address}: {error}") from None
    local = not joins_cluster(address)  # a Ray of this run's own
    other = local and another_ray()
    options, env = local_ray() if local else ({}, {})
    # Ray's driver-side records while it starts (its token-auth warning, "Started a local Ray instance"): errors only
    quieter = {} if verbose else {"logging_level": logging.ERROR}
    added = {name: value for name, value in env.items() if name not in os.environ}
    os.environ.update(added)  # for the local Ray's processes, which inherit it as they start
    try:
        if runtime_env is not None:
            options["runtime_env"] = runtime_env
        context = ray.init(address=ray_address(address), **options, **quieter)
    except ConnectionError as error:
        raise SystemExit(f"cannot reach a Ray cluster at {address or ray_address(address)}: {error}") from None
    except ValueError as error:  # an address or a runtime_env Ray refuses (e.g. a working directory too large)
        raise SystemExit(f"cannot start the job on {address or 'a local Ray'}: {error}") from None
    finally:
        for name in added:  # this process goes on as it was
            del os.environ[name]
    if not quiet:
        print(which_ray(context, None if local else ray_address(address), other), flush=True)
    return True


def ray_address(address):
    """What ray.init is given: `address` (--address, or the spec's cluster.address), else RAY_ADDRESS (a Ray Job's,
    or the user's), else "local", a Ray of this run's own. Not None: ray.init() would join whichever Ray `ray start`
    last recorded on this machine, and the run would end with that Ray."""
    return address or os.environ.get("RAY_ADDRESS") or "local"


def another_ray():
    """The address of a Ray that `ray start` recorded on this machine and that still listens, or None."""
    try:
        recorded = ray._private.utils.read_ray_address()  # what ray.init() with no address would join
        host, _, port = (recorded or "").rpartition(":")
        socket.create_connection((host, int(port)), timeout=1).close()
    except (AttributeError, OSError, ValueError):  # none recorded, gone, or a Ray that keeps it elsewhere
        return None
    return recorded


def which_ray(context, joined, other):
    """The run's first line: which Ray it uses (a local one of its own, or the cluster it `joined`: the address
    asked for), how large, and its dashboard; and another Ray on this machine that it does not use."""
    cpus = ray.cluster_resources().get("CPU", 0)
    size = f"{cpus:g} CPU{'s' * (cpus != 1)}"
    if joined is None:
        line = f"Ray: a local Ray of this run's own, {size}"
    else:
        found = getattr(context, "address_info", {}).get("gcs_address")  # "auto" names the Ray it found
        nodes = sum(node["Alive"] for node in ray.nodes())
        line = f"Ray: joined the cluster at {found or joined}, {nodes} node{'s' * (nodes != 1)}, {size}"
    url = context.dashboard_url
    line += f"; dashboard {url if '://' in url else 'http://' + url}" if url else ""
    if other:
        line += f" (another Ray runs on this machine, at {other}: --address auto joins it)"
    return line


def local_ray():
    """ray.init's options for a local Ray, and the environment its processes start with. With its dashboard, Ray's
    UI for the run, whose state API Ray Train's placement-group cleaner asks whether the run's controller is alive
    (without it, it logs a failure every 2 s; with it, a stopped trial's workers are freed). The cleaner finds the
    API through RAY_API_SERVER_ADDRESS: on its own it would look for "the" Ray of this machine, and fail when there
    are several. (A runtime_env's env_vars would do too, but cost each first actor a new worker process, ~4 s here.)
    Ray Train's preemption watcher is off: a node being drained is a cluster's event."""
    with socket.socket() as probe:  # a free port for the dashboard, so that its address is known before it starts
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {"RAY_API_SERVER_ADDRESS": f"http://127.0.0.1:{port}", "RAY_TRAIN_ENABLE_PREEMPTION_WATCHER": "0"}
    return {"include_dashboard": True, "dashboard_host": "127.0.0.1", "dashboard_port": port}, env


def joins_cluster(address):
    """Whether this run joins a running cluster (`address`, RAY_ADDRESS, or inside a Ray Job) rather than
    starting a Ray of its own ("local", or no address at all): its code must then travel with it, and its data is
    read on the cluster's nodes."""
    return ray_address(address) != "local"


# What a job's working directory leaves behind on its way to a cluster, whatever the spec says: caches, and files that
# look like secrets (cluster.include names those a job ships deliberately). The experiment's own excludes follow.
ALWAYS_EXCLUDED = (
    ".git",
    "__pycache__",
    "*.pyc",
    ".venv",
    "venv",
    ".tox",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".ipynb_checkpoints",
)


# Well-known files that hold secrets. Ray ships what it finds: an `.env` beside the code would reach every node.
# A directory's contents are matched (".ssh/**"), not the directory, so that cluster.include can name one file in it.
SECRETS = (
    ".env*",  # dotenv files: .env, .env.local, .envrc
    "id_rsa*",  # SSH keys, wherever they lie
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    "**/.ssh/**",
    "**/.aws/**",  # AWS credentials and config
    "**/.azure/**",
    "**/.config/gcloud/**",
    "**/.docker/config.json",
    "**/.gnupg/**",
    "**/.kube/**",  # kube configs
    "kubeconfig",
    "*.kubeconfig",
    ".netrc",
    "_netrc",
    ".git-credentials",
    ".pypirc",
    ".npmrc",
    "*.pem",  # private keys and certificates
    "*.key",
    "*.p12",
    "*.pfx",
    "credentials.json",
    "client_secret*.json",
)
LEFT_BEHIND = ALWAYS_EXCLUDED + SECRETS


def job_runtime_env(experiment, script, address, storage_path):
    """The job's runtime_env, for an experiment (its RUN) that sets one (cluster.runtime_env) or ships a working
    directory; None for one that does neither. Joining a cluster, its working directory (relative to `script`) goes
    to every node, where Ray unpacks it and puts it on the workers' PYTHONPATH, less LEFT_BEHIND, the experiment's
    excludes and the run storage path when it lies below. In a Ray Job (`specc submit`, `ray job submit`) the job's
    runtime_env is in force: only what it leaves unset is added."""
    if "runtime_env" not in experiment and "working_dir" not in experiment:
        return None
    runtime_env = copy.deepcopy(experiment.get("runtime_env", {}))
    job = json.loads(os.environ.get("RAY_JOB_CONFIG_JSON_ENV_VAR", "{}")).get("runtime_env") or {}
    if "working_dir" in experiment and joins_cluster(address) and "working_dir" not in job:
        root = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(script)), experiment["working_dir"]))
        below = ".." if "://" in storage_path else os.path.relpath(storage_path, root)
        inside = below != "." and not below.startswith("..")  # the working directory itself is not left behind
        excludes = [*LEFT_BEHIND, *experiment.get("excludes", [])] + (["/" + below] if inside else [])
        runtime_env.update(working_dir=root, excludes=excludes)
    asked = runtime_env.pop("env_vars", {})
    env_vars = {name: value for name, value in asked.items() if name not in job.get("env_vars", {})}
    runtime_env = {key: value for key, value in runtime_env.items() if key not in job}
    return {**runtime_env, **({"env_vars": env_vars} if env_vars else {})}


def how_many_fit(need, what):
    """How many `what`s needing `need` (Ray resource -> amount) the cluster holds at once. None fitting is
    refused here: Ray would otherwise wait forever for resources that never come."""
    have = ray.cluster_resources()
    fit = min((int(have.get(name, 0) / amount + 1e-9) for name, amount in need.items() if amount > 0), default=1)
    if fit == 0:
        needed = ", ".join(f"{amount:g} {name}" for name, amount in need.items())
        has = ", ".join(f"{have.get(name, 0):g} {name}" for name in need)
        raise SystemExit(
            f"one {what} needs {needed}; the cluster has {has}: "
            "lower scaling.num_workers or scaling.resources_per_worker, or add nodes"
        )
    return fit


def write_files(run_dir, files):
    """Each file whole or not at all: written beside its final name, then renamed (local paths or URIs)."""
    filesystem, root = pyarrow.fs.FileSystem.from_uri(run_dir)
    filesystem.create_dir(root, recursive=True)
    for name, text in files.items():
        with filesystem.open_output_stream(f"{root}/.{name}.partial") as out:
            out.write(text.encode())
        filesystem.move(f"{root}/.{name}.partial", f"{root}/{name}")


def own_sources(script):
    """The files this run executes, for its run directory: the experiment file as script.py and, beside it, this
    runtime (none when `specc compile --single-file` inlined it into the script)."""
    files = {"script.py": script}
    if os.path.abspath(__file__) != os.path.abspath(script):
        files["specc_runtime.py"] = __file__
    texts = {}
    for name, path in files.items():
        with open(path, encoding="utf-8") as handle:
            texts[name] = handle.read()
    return texts


class CheckpointUnreadable(Exception):
    """No checkpoint of the run can be read: the run stops, naming them (a message, not a traceback)."""


def readable_checkpoint(checkpoint, read):
    """(checkpoint, read(its directory)) for the checkpoint Ray resumes from or, when that cannot be read (a file
    cut short by a full disk, say), for the newest earlier one of the run that can, with a warning naming the ones
    passed over; (None, None) with nothing to resume from."""
    passed_over = []
    for candidate in [checkpoint, *earlier_checkpoints(checkpoint)] if checkpoint else []:
        try:
            with candidate.as_directory() as directory:
                state = read(directory)
        except Exception as error:  # whatever made it unreadable, it is named below
            passed_over.append(f"{candidate.path} ({type(error).__name__}: {error})")
            continue
        if passed_over:
            print(f"warning: resuming from {candidate.path}: cannot read {'; '.join(passed_over)}", file=sys.stderr)
        return candidate, state
    if passed_over:
        raise CheckpointUnreadable(
            f"cannot resume: no checkpoint of this run can be read: {'; '.join(passed_over)}. "
            "Remove the run directory to start the run again, or start it under another --storage-path"
        )
    return None, None


def restore_torch(session, held, device, start_from=None):
    """Loads the checkpoint Ray resumes this run from (or the newest of the run that can be read) into `held`: each
    name's object (the model, the optimizer, ...) loads its state_dict from state.pt. A population-based Train run
    with no checkpoint of its own starts from `start_from`, the Tune trial's. `session`: ray.train in a Train worker,
    ray.tune in a trial's own process. Returns the epochs it holds (the first to run, counted from 0) and the
    metrics so far."""
    import torch

    def read(directory):
        return torch.load(os.path.join(directory, "state.pt"), map_location=device)

    given = session.Checkpoint(start_from) if start_from else None
    checkpoint, state = readable_checkpoint(session.get_checkpoint() or given, read)
    if not checkpoint:
        return 0, []
    for name, holder in held.items():
        unwrapped(holder).load_state_dict(state[name])
    return epochs_held(state), history_held(state)


def report_torch(session, metrics, history, held=None, fitted=None):
    """Reports the epoch (in Ray Train every worker reports: it is a barrier), with a checkpoint when `held` is given:
    state.pt, each name's state_dict (the model's own, not its DistributedDataParallel wrapper's), the epoch it was
    taken after (counted from 1) and the metrics so far; with `fitted`, the data's preprocessing beside it."""
    import torch

    with tempfile.TemporaryDirectory() as directory:
        checkpoint = None
        if held is not None:
            state = {name: unwrapped(holder).state_dict() for name, holder in held.items()}
            state.update(epoch=metrics["epoch"], epochs_counted_from=1, history=history)
            torch.save(state, os.path.join(directory, "state.pt"))
            if fitted is not None:
                write_fitted(directory, fitted)
            checkpoint = session.Checkpoint.from_directory(directory)
        report(session, metrics, checkpoint)


def report(session, metrics, checkpoint=None):
    """session.report, and the epoch handed to IN_PROCESS_CALLBACKS: Ray Train's local mode calls no callbacks."""
    session.report(metrics, checkpoint=checkpoint)
    for callback in IN_PROCESS_CALLBACKS:
        callback.log(metrics)


def unwrapped(model):
    """The model a DistributedDataParallel wraps (prepare_model wraps it when there are several workers)."""
    import torch

    return model.module if isinstance(model, torch.nn.parallel.DistributedDataParallel) else model


def write_fitted(directory, fitted):
    """preprocessing.json beside the model in a checkpoint: what the driver fitted on the training split (the
    classes, for images), so that evaluation and prediction prepare examples as training did (docs/data.md)."""
    with open(os.path.join(directory, "preprocessing.json"), "w", encoding="utf-8") as out:
        json.dump(fitted, out, indent=1, sort_keys=True)


def read_keras_state(directory):
    """A Keras checkpoint's state.json (epoch, history), once its model.keras reads back whole (a zip: every member's
    CRC)."""
    with zipfile.ZipFile(os.path.join(directory, "model.keras")) as archive:
        damaged = archive.testzip()
    if damaged:
        raise zipfile.BadZipFile(f"model.keras: {damaged} is damaged")
    with open(os.path.join(directory, "state.json"), encoding="utf-8") as handle:
        return json.load(handle)


def load_keras_state(model, checkpoint):
    """The model's weights and its optimizer's state (moments, step count) from the checkpoint's model.keras."""
    with checkpoint.as_directory() as directory:
        model.optimizer.build(model.trainable_variables)  # its variables exist before they are loaded
        model.load_weights(os.path.join(directory, "model.keras"))


def earlier_checkpoints(checkpoint):
    """The run's checkpoints saved before `checkpoint`, newest first (Ray names them in order: checkpoint_<n>)."""
    folder, name = checkpoint.path.rstrip("/").rsplit("/", 1)
    entries = checkpoint.filesystem.get_file_info(pyarrow.fs.FileSelector(folder))
    names = [entry.base_name for entry in entries if entry.type == pyarrow.fs.FileType.Directory]
    earlier = sorted((n for n in names if n.startswith("checkpoint_") and n < name), reverse=True)
    return [type(checkpoint)(f"{folder}/{n}", checkpoint.filesystem) for n in earlier]


# Ray's own output, kept out of the console: its workers' and actors' lines and its driver-side log records go to
# ray.log in the run directory; the console shows the problems among them (see ProblemLines), all of it with --verbose.
# Ray Train's own actors: their tracebacks are Ray's (e.g. "Failed to send resource request ... safe to ignore" on a
# busy machine), for ray.log only; but for the controller's failure decisions, which carry the workers' errors.
RAY_TRAIN_ACTORS = {"TrainController", "PlacementGroupCleaner", "TrainStateActor", "SynchronizationActor"}


# The loggers of Ray's driver-side records; Ray Data's has console handlers of its own (it does not propagate to ray's)
# The loggers whose records go to ray.log, the console showing their errors: Ray's, and Ax's, which Ray's AxSearch
# drives (its seed notice and generation strategy as the search starts: nothing a spec can act on).
RAY_LOGGERS, RAY_DATA_LOGGERS = ("ray", "ax"), ("ray", "ray.data", "ax")


# A traceback, Ray Train's failure decision, an ERROR record in Ray's or Python's default format, specc's warnings
PROBLEM = re.compile(
    r"Traceback \(most recent call last\)|\[FailurePolicy\]|\bERROR \S+\.py:\d+ -- |^ERROR:|^warning: "
)


DECISION = re.compile(r"\[FailurePolicy\]")


# A library's notice about its own future, raised in the driver (statsmodels' FutureWarning each time TuneBOHB fits its
# model, say): nothing a spec can change, so ray.log's, as the same notices from Ray's workers are.
NOTICES = (DeprecationWarning, PendingDeprecationWarning, FutureWarning)
# The libraries that fit a searcher's model (Ax's BoTorch Gaussian processes, BOHB's statsmodels KDE): their warnings
# are about their own numerics as the model is fitted ("added jitter to the diagonal", "Optimization failed in
# gen_candidates_scipy"), which they recover from and a spec cannot change: ray.log's too.
MODEL_FITTING = frozenset({"botorch", "gpytorch", "linear_operator", "statsmodels"})


# The raylet's notice that it started more worker processes than it expected at once (Ray Data's tasks, Train's
# actors): Ray's own bookkeeping, nothing a spec can change; its other messages (e.g. tasks killed for memory) show.
RAYLET_NOTICE = re.compile(r"PYTHON worker processes have been started on node")


CONTINUES = re.compile(
    r"\s|$|[\w.]+(Error|Exception|Exit|Interrupt)\b|Error:|Traceback|\[Rank \d+ Error|During handling|The above"
)


class ProblemLines:
    """Which of Ray's worker lines reach the console without --verbose: Ray Train's failure decision ([FailurePolicy]
    RETRY or RAISE, with the workers' errors), and from the processes that run the spec's code (Train workers,
    trials, Ray Data tasks) a Python traceback, an ERROR log record or the script's own "warning: ..." line; each with
    the lines that continue it (indented, blank, the exception's own line)."""

    def __init__(self):
        self.open = set()  # the streams (pid, stderr?) inside a problem being shown

    def shows(self, source, stream, line):
        if (DECISION if source in RAY_TRAIN_ACTORS else PROBLEM).search(line):
            self.open.add(stream)
        elif stream in self.open and not CONTINUES.match(line):
            self.open.discard(stream)
        return stream in self.open


class RayLog(logging.Handler):
    """ray.log in the run directory: appended to (a resumed run adds to it), opened without following a link, never
    anything but a regular file; a URI run directory gets it whole at the end, through write_files."""

    def __init__(self, run_dir):
        super().__init__()
        self.run_dir, self.lines, self.file = run_dir, [], None
        self.setLevel(logging.INFO)  # Ray Data's logger passes on its DEBUG records too
        self.setFormatter(logging.Formatter("%(asctime)s\t%(levelname)s %(filename)s:%(lineno)s -- %(message)s"))
        if "://" not in run_dir:
            self.file = open_log(os.path.join(run_dir, "ray.log"))

    def write(self, text):
        if self.file:
            self.file.write(text + "\n")
            self.file.flush()
        elif "://" in self.run_dir:
            self.lines.append(text)

    def emit(self, record):
        self.write(self.format(record))

    def close(self):
        super().close()
        if self.file:
            self.file.close()
        elif self.lines:
            filesystem, root = pyarrow.fs.FileSystem.from_uri(self.run_dir)
            with contextlib.suppress(OSError), filesystem.open_input_stream(f"{root}/ray.log") as stream:
                self.lines.insert(0, stream.read().decode(errors="replace").rstrip("\n"))
            write_files(self.run_dir, {"ray.log": "\n".join(self.lines) + "\n"})


def open_log(path):
    """`path` opened for appending, or None (with a warning) when it is a link, a directory, a pipe, ..."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK, 0o666)
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise OSError("not a regular file")
    except OSError as error:
        print(f"warning: Ray's output is not kept in {path}: {error}", file=sys.stderr)
        return None
    os.set_blocking(fd, True)
    return os.fdopen(fd, "a", encoding="utf-8", errors="replace")


class ErrorsOnly(logging.Filter):
    """On Ray's own console handler until remove(): its driver-side records (Tune's warnings, say) from ERROR up only
    (a failed trial); with --verbose, all of them. Every record from INFO up reaches ray.log either way."""

    def __init__(self, verbose, names):
        super().__init__()
        loggers = [logging.getLogger(name) for name in names]
        self.levels = {logger: logger.level for logger in loggers}
        self.handlers = [] if verbose else [handler for logger in loggers for handler in logger.handlers]
        for logger, level in self.levels.items():
            logger.setLevel(min(level or logging.INFO, logging.INFO))  # start_ray may have raised it
        for handler in self.handlers:
            handler.addFilter(self)

    def filter(self, record):
        return record.levelno >= logging.ERROR

    def remove(self):
        for logger, level in self.levels.items():
            logger.setLevel(level)
        for handler in self.handlers:
            handler.removeFilter(self)


class RayOutput:
    """For the run, until close(): Ray's driver-side records and its workers' lines into ray.log, the console
    showing what ProblemLines lets through (everything, with --verbose); the driver's Python warnings on the console
    but for NOTICES, which ray.log keeps (the console too, with --verbose). `ray_data`: the run streams its data with
    Ray Data, whose records and progress bars are kept off the console too."""

    def __init__(self, run_dir, verbose, ray_data=False):
        self.log, self.problems, self.verbose = RayLog(run_dir), ProblemLines(), verbose
        self.loggers = RAY_DATA_LOGGERS if ray_data else RAY_LOGGERS
        self.quiet = ErrorsOnly(verbose, self.loggers)
        for name in self.loggers:
            logging.getLogger(name).addHandler(self.log)
        self.closed = False
        self.show_warning, warnings.showwarning = warnings.showwarning, self.warning
        self.bars = None
        if ray_data:
            # Ray Data's own bars (on a terminal) or their log lines: the epoch lines say where the run is. Kept off
            # for the run only: close() puts back what the process had (a notebook's next Ray Data pass shows its bars)
            self.bars = ray.data.DataContext.get_current().enable_progress_bars
            if not verbose:
                ray.data.DataContext.get_current().enable_progress_bars = False
        # Ray has no public way to route its workers' lines: ray.init(log_to_driver=False) drops them from the
        # driver altogether. So this swaps the driver's printing handler ("ray_print_logs" in ray/_private/worker.py,
        # Ray 2.60) for one that writes ray.log; where that private API is missing, Ray prints as it always did.
        self.dispatcher = ray_private("ray_logging", "global_worker_stdstream_dispatcher")
        self.print_lines = ray_private("worker", "print_to_stdstream")
        self.routed = self.dispatcher is not None and self.print_lines is not None
        if self.routed:
            self.dispatcher.remove_handler("ray_print_logs")
            self.dispatcher.add_handler("specc_ray_log", self.worker_lines)
            # The raylet's messages bypass the dispatcher: Ray's error listener prints them with print_to_stdstream.
            ray._private.worker.print_to_stdstream = self.raylet_lines

    def warning(self, message, category, filename, lineno, file=None, line=None):
        """warnings.showwarning for the run: what the warnings filters let through (once per place, by default).
        After close(), what it replaced: a library that saved it during the run (warnings.catch_warnings) may put it
        back after the run is over."""
        fitting = MODEL_FITTING.intersection(os.path.normpath(filename).split(os.sep))
        if (issubclass(category, NOTICES) or fitting) and not self.closed:
            self.log.write(warnings.formatwarning(message, category, filename, lineno, line).rstrip("\n"))
            if not self.verbose:
                return
        self.show_warning(message, category, filename, lineno, file, line)

    def raylet_lines(self, data, ignore_prefix=False):
        if data.get("pid") != "raylet":
            return self.print_lines(data, ignore_prefix=ignore_prefix)
        for line in data["lines"]:
            self.log.write(f"(raylet) {line}")
        shown = [line for line in data["lines"] if self.verbose or not RAYLET_NOTICE.search(line)]
        if shown:
            self.print_lines({**data, "lines": shown}, ignore_prefix=ignore_prefix)

    def worker_lines(self, data):
        source = data.get("actor_name") or data.get("task_name") or ""
        lines, stream = data["lines"], (data.get("pid"), data.get("is_err"))
        if data.get("pid") == "autoscaler":  # its status every 5 s: only its events, as Ray prints them
            lines = list((ray_private("worker", "filter_autoscaler_events") or (lambda lines: []))(lines))
        where = " ".join(filter(None, [source, f"pid={data.get('pid')}"]))
        where += f", ip={data.get('ip')}" if data.get("ip") != data.get("localhost") else ""
        for line in lines:
            self.log.write(f"({where}) {line}")
        shown = data["lines"] if self.verbose else [line for line in lines if self.problems.shows(source, stream, line)]
        if shown:
            self.print_lines({**data, "lines": shown}, ignore_prefix=False)

    def close(self):
        self.closed = True
        if warnings.showwarning == self.warning:  # not if something else has taken it since
            warnings.showwarning = self.show_warning
        if self.routed:
            ray._private.worker.print_to_stdstream = self.print_lines
            self.dispatcher.remove_handler("specc_ray_log")
            if ray.is_initialized():  # a Ray this run joined goes on: it prints again, as before the run
                self.dispatcher.add_handler("ray_print_logs", functools.partial(self.print_lines, ignore_prefix=False))
        for name in self.loggers:
            logging.getLogger(name).removeHandler(self.log)
        self.quiet.remove()
        if self.bars is not None:
            ray.data.DataContext.get_current().enable_progress_bars = self.bars
        self.log.close()


def ray_private(module, name):
    """ray._private.<module>.<name>, or None where this Ray has no such thing."""
    return getattr(getattr(getattr(ray, "_private", None), module, None), name, None)


# The project's own modules (custom factories, an objective function), imported from the spec's directory.
def load_factory(reference):
    """Imports 'package.module:function' (the spec's directory is on sys.path: see use_spec_dir): a function or
    class defined in that module, never a name it imports from elsewhere (such as os:system)."""
    module_name, name = reference.split(":")
    factory = getattr(importlib.import_module(module_name), name, None)
    if not (inspect.isfunction(factory) or inspect.isclass(factory)) or factory.__module__ != module_name:
        raise SystemExit(f"{reference} is not a function or class defined in {module_name}")
    return factory


def use_spec_dir(spec_dir, import_dirs=(".",)):
    """Makes the spec's directory importable in this process (the driver, and each Ray worker or Tune trial), local
    or on a cluster's node; with `import_dirs` (relative to it: it, then cluster.working_dir), each, in that order."""
    wanted = [os.path.normpath(os.path.join(spec_dir, relative)) for relative in import_dirs]
    sys.path[:0] = [directory for directory in dict.fromkeys(wanted) if directory not in sys.path]


INSTALLED = frozenset({"site-packages", "dist-packages"})  # where installed packages live, in a path's parts


def project_modules(spec_dir, import_dirs=(".",), keep=()):
    """The modules imported so far from the spec's import directories (the project's own), less the files `keep`
    (this script and its runtime, which the trials import as they are) and installed packages: a virtualenv inside
    the project (.venv/lib/.../site-packages) holds torch or ray, which the trials import from their own Python and
    which pickled by value would be copied into every trial."""
    roots = [os.path.realpath(os.path.join(spec_dir, relative)) + os.sep for relative in import_dirs]
    kept = {os.path.realpath(path) for path in keep}
    found = []
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        real = os.path.realpath(path) if path else None
        if not real or real in kept or INSTALLED.intersection(real.split(os.sep)):
            continue
        if any(real.startswith(root) for root in roots):
            found.append(module)
    return found


def resets_config(trainable):
    """Whether a ray.tune.Trainable class defines reset_config: then Tune may hand a finished trial's process the
    next trial (reuse_actors), and PBT a trial's new config, without starting a process (Trainable's own returns
    False, and Tune would fail the trial it reuses a process for)."""
    return getattr(trainable, "reset_config", None) is not ray.tune.Trainable.reset_config


def spec_dir_on_node(config):
    """The spec's directory as this process sees it: on a cluster's node, its place in the job's working directory,
    which Ray unpacks there and puts first on PYTHONPATH (Ray Train and Tune move the current directory elsewhere);
    else the spec's directory itself."""
    shipped = config.get("spec_dir_shipped")
    if shipped is None:
        return config["spec_dir"]
    return os.path.normpath(os.path.join(os.environ.get("PYTHONPATH", "").split(os.pathsep)[0], shipped))


def run_objective(config, reference, where, import_dirs=(".",)):
    """One Tune trial of an objective search: objective.function (`reference`), imported in the trial's process,
    called with the trial's config (it reports with ray.tune.report). `where`: the spec's directory on this node."""
    use_spec_dir(spec_dir_on_node(where), import_dirs)
    load_factory(reference)(config)


# run.callbacks: the trackers a run logs each epoch to (csv, json, tensorboard, mlflow, wandb).
FILE_TRACKERS = ("csv", "json", "tensorboard")


def trackers(names, run_dir, name):
    """run.callbacks for a search: Ray Tune's own logger callbacks, for every trial. Each trial's progress.csv and
    result.json are always written: they are Ray's record of the trial, which Tuner.restore and results.csv read."""
    os.environ["TUNE_DISABLE_AUTO_CALLBACK_LOGGERS"] = "1"  # only these: Tune would add loggers of its own
    callbacks = [KeptCsv(), KeptJson()]
    if "tensorboard" in names:  # events.out.tfevents in each trial's directory: tensorboard --logdir <run directory>
        callbacks.append(ray.tune.logger.TBXLoggerCallback())
    if "mlflow" in names:  # one MLflow run per trial
        from ray.air.integrations.mlflow import MLflowLoggerCallback

        callbacks.append(MLflowLoggerCallback(mlflow_uri(run_dir), experiment_name=name))
    if "wandb" in names:  # one W&B run per trial
        callbacks.append(wandb_logger(project=name, **wandb_options(run_dir)))
    return callbacks


class KeptRecord:
    """Ray Tune's progress.csv and result.json writers, which keep what they wrote when a trial is retried. Tune
    writes each trial's files on the driver and copies them to the run directory in the background; when a trial
    that failed restarts (run.max_failures), Tune 2.60 copies the run directory's back over the files it has been
    appending to, and that copy may not hold the last reports yet (seen: a retried trial's result.json without the
    report before its crash). Only a file not written here yet, a resumed run's, is taken from the run directory."""

    def _restore_from_remote(self, file_name, trial):
        if not os.path.exists(os.path.join(trial.local_path, file_name)):
            super()._restore_from_remote(file_name, trial)


class KeptCsv(KeptRecord, ray.tune.logger.CSVLoggerCallback):
    """Tune's progress.csv writer (KeptRecord)."""


class KeptJson(KeptRecord, ray.tune.logger.JsonLoggerCallback):
    """Tune's result.json writer (KeptRecord)."""


def wandb_logger(**options):
    """Ray's WandbLoggerCallback, with a logging actor that also waits until wandb's core process has written the
    run out: Ray kills the actor as soon as run() returns, and wandb.finish() alone can return before the offline
    run file is written (seen with wandb 0.31: a trial's run file left empty)."""
    from ray.air.integrations.wandb import WandbLoggerCallback, _WandbLoggingActor

    class WandbLogging(_WandbLoggingActor):
        def run(self):
            super().run()
            self._wandb.teardown()

    class WandbLogger(WandbLoggerCallback):
        _logger_actor_cls = WandbLogging  # the hook Ray's WandbLoggerCallback offers for its actor class

    return WandbLogger(**options)


class Tracking(ray.train.UserCallback):
    """run.callbacks for a Ray Train run (Ray Tune's logger callbacks need Tune trials): each epoch that worker 0
    reports is logged to each of `names`. Ray Train calls it in its controller process after every report: what it
    writes to is opened there, at the first report, and closed after the last epoch (or once run.max_failures is
    used up)."""

    def __init__(self, names, run_dir, config, name, max_failures=0):
        if "://" in run_dir and set(names) & set(FILE_TRACKERS):  # Tune moves a search's files to URIs itself
            raise SystemExit(
                "run.callbacks csv, json and tensorboard write local files in a Ray Train run: "
                f"its storage_path must be a local or mounted path, not {run_dir}"
            )
        self.names, self.run_dir, self.config, self.name = names, run_dir, config, name
        self.failures_left, self.opened = max_failures, False

    def after_report(self, run_context, metrics, checkpoint):
        self.log(metrics[0])

    def after_exception(self, run_context, worker_exceptions):
        self.failures_left -= 1
        if self.failures_left < 0:  # FailureConfig(max_failures) is used up: the run ends here
            self.close(failed=True)

    def log(self, metrics):
        if not self.opened:
            self.open()
        step = metrics["epoch"]  # from 1, as Tune's training_iteration counts
        if "csv" in self.names:
            import csv

            path = os.path.join(self.run_dir, "progress.csv")
            new = not os.path.exists(path)
            with open(path, "a", encoding="utf-8", newline="") as out:
                writer = csv.DictWriter(out, fieldnames=list(metrics))
                if new:
                    writer.writeheader()
                writer.writerow(metrics)
        if "json" in self.names:
            with open(os.path.join(self.run_dir, "result.json"), "a", encoding="utf-8") as out:
                out.write(json.dumps(metrics) + "\n")
        if "tensorboard" in self.names:
            for name, value in metrics.items():
                self.tensorboard.add_scalar(f"ray/tune/{name}", value, global_step=step)  # Tune's tag names
            self.tensorboard.flush()
        if "mlflow" in self.names:
            from mlflow.entities import Metric

            now = int(time.time() * 1000)
            self.mlflow.log_batch(self.mlflow_run, metrics=[Metric(k, v, now, step) for k, v in metrics.items()])
        if "wandb" in self.names:
            self.wandb.log(metrics, step=step)
        if diverged(metrics):  # a NaN or infinite loss: the run stops at this epoch
            self.close(failed=True)
        elif step >= self.config["training"]["epochs"]:
            self.close(failed=False)

    def open(self):
        os.makedirs(self.run_dir, exist_ok=True)
        if "tensorboard" in self.names:
            import tensorboardX

            self.tensorboard = tensorboardX.SummaryWriter(self.run_dir)  # tensorboard --logdir <run directory>
        if "mlflow" in self.names:
            import mlflow
            from mlflow.entities import Param

            self.mlflow = mlflow.MlflowClient(mlflow_uri(self.run_dir))
            experiment = self.mlflow.get_experiment_by_name(self.name)
            experiment_id = experiment.experiment_id if experiment else self.mlflow.create_experiment(self.name)
            self.mlflow_run = self.mlflow.create_run(experiment_id, run_name=self.name).info.run_id
            self.mlflow.log_batch(self.mlflow_run, params=[Param(k, str(v)) for k, v in flat(self.config).items()])
        if "wandb" in self.names:
            import wandb

            options = wandb_options(self.run_dir)
            self.wandb = wandb.init(
                project=self.name, name=self.name, config=self.config, reinit="create_new", **options
            )
        self.opened = True

    def close(self, failed):
        if not self.opened:
            return
        if "tensorboard" in self.names:
            self.tensorboard.close()
        if "mlflow" in self.names:
            self.mlflow.set_terminated(self.mlflow_run, "FAILED" if failed else "FINISHED")
        if "wandb" in self.names:
            self.wandb.finish(exit_code=1 if failed else 0)
        self.opened = False


def flat(config, prefix=""):
    """CONFIG's values by dotted path (training.optimizer.lr), as MLflow keeps parameters."""
    out = {}
    for key, value in config.items():
        if isinstance(value, dict):
            out.update(flat(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def mlflow_uri(run_dir):
    """MLFLOW_TRACKING_URI when it is set (your tracking server), else an SQLite store in the run directory."""
    if os.environ.get("MLFLOW_TRACKING_URI"):
        return os.environ["MLFLOW_TRACKING_URI"]
    if "://" in run_dir:
        raise SystemExit(f"run.callbacks mlflow: set MLFLOW_TRACKING_URI; the run directory {run_dir} holds no SQLite")
    return "sqlite:///" + os.path.join(run_dir, "mlflow.db")


def wandb_options(run_dir):
    """W&B logs offline (wandb sync uploads later) unless WANDB_MODE says otherwise (online needs `wandb login`),
    into the run directory when that is a local path."""
    mode = os.environ.setdefault("WANDB_MODE", "offline")
    return {"mode": mode, "dir": None if "://" in run_dir else run_dir}


# The run itself: its command line, --smoke, and the order in which a run claims, starts and ends what it uses.
IN_PROCESS_CALLBACKS = []  # Ray Train's local mode (num_workers: 0) calls no callbacks: report() hands epochs to these


class DataProblem(Exception):
    """The data, or the CPUs to read it, cannot make a run: the message, and the spec field it concerns (`field`,
    dotted), where specc run locates it. Raised by the driver before training starts."""

    def __init__(self, message, field):
        super().__init__(message, field)  # both in args: it pickles whole across Ray's processes
        self.field = field

    def __str__(self):
        return self.args[0]


SMOKE = {
    "train": "1 epoch, a few batches, at most 2 workers, CPU",
    "tune": "1 trial, 1 epoch, a few batches, at most 2 workers, CPU",
    "tune_train": "1 trial, 1 epoch, a few batches, at most 2 workers, CPU",
    "objective": "1 trial, 1 step, CPU only",
}


def parse_args(argv, description, address=None, shape="train", storage_path="./runs"):
    """The experiment file's own command line; `address`, `storage_path`: the spec's cluster.address and
    run.storage_path, the defaults of --address and --storage-path."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--address", default=address, help="Ray cluster address (default: start a local Ray)")
    parser.add_argument("--storage-path", default=storage_path, help="where run directories go (default: %(default)s)")
    resumes = "the run of the same name from its checkpoint"
    if shape != "train":
        resumes = "the search of the same name; finished trials are kept"
    parser.add_argument("--resume", action="store_true", help=f"continue {resumes}")
    parser.add_argument(
        "--force", action="store_true", help="with --resume: even if the spec changed since the run began"
    )
    parser.add_argument("--quiet", action="store_true", help="no progress lines or bar: the final summary only")
    parser.add_argument(
        "--verbose", action="store_true", help="Ray's own output on the console too, not only in ray.log"
    )
    parser.add_argument("--smoke", action="store_true", help=SMOKE[shape])
    return parser.parse_args(argv)


def smoke_capped(config, scaling):
    """--smoke's run before it meets a Ray: 1 epoch of at most 3 batches, at most 2 workers, on CPU; and what that
    changed, in words (smoke_fit says them)."""
    config = {**config, "training": {**config["training"], "epochs": 1, "max_batches": 3}}
    changes, per_worker = [], scaling["resources_per_worker"] or {}
    if scaling["num_workers"] > 2:
        changes.append(f"2 workers (the spec: {scaling['num_workers']})")
    if scaling["use_gpu"] or "GPU" in per_worker:
        changes.append("on CPU")
    if scaling.get("accelerator_type"):
        changes.append("no accelerator_type")
    scaling = {**scaling, "num_workers": min(scaling["num_workers"], 2), "use_gpu": False}
    scaling.pop("accelerator_type", None)
    if "GPU" in per_worker:
        scaling["resources_per_worker"] = {name: n for name, n in per_worker.items() if name != "GPU"}
    return config, scaling, changes


def smoke_fit(scaling, asked, quiet, shape="train", beside=0.0, streams=False, capped=()):
    """--smoke fits the run onto the Ray it runs on (a local Ray's CPUs, or the joined cluster's), on top of
    smoke_capped, and says in one line what it changed (specc.plan.smoke applies the same rule before Ray starts):
    resources the cluster lacks are dropped; a scaling.data_cpus (`asked`) that leaves no room falls back to Ray
    Data's least, 1 CPU; and when the workers (a search of shape "tune": the trial's process) need more CPUs than
    are left beside Ray Data's share (`streams`) and a trial's driver (`beside`, shape "tune_train"), each gets an
    equal, fractional share of them (resources_per_worker CPU, to Ray's 0.0001). `capped`: what smoke_capped changed.
    Returns (scaling, asked)."""
    changes = ["1 epoch of at most 3 batches"] if shape == "train" else ["1 trial", "1 epoch of at most 3 batches"]
    changes += capped
    have = ray.cluster_resources()
    cpus = have.get("CPU", 0.0)
    if shape == "train" and not scaling["num_workers"]:  # local mode: the training runs in this process
        if streams and asked is not None and asked > cpus + 1e-9:  # which holds no Ray CPU
            changes.append(f"Ray Data 1 CPU (scaling.data_cpus: {asked:g}; the cluster has {cpus:g})")
            asked = None
        if not quiet:
            print(f"--smoke: {', '.join(changes)}", flush=True)
        return scaling, asked
    processes = 1 if shape == "tune" else scaling["num_workers"]  # a "tune" trial's one process reserves one worker's
    wanted = worker_resources(scaling)
    kept = ("CPU", "memory", "object_store_memory")
    resources = {name: n for name, n in wanted.items() if n and (name in kept or have.get(name, 0) >= n * processes)}
    resources = resources or {"CPU": 1.0}  # Ray's default worker
    changes += [f"no {name}" for name, n in wanted.items() if n and name not in resources]
    cpu = resources.get("CPU", 0.0)
    data = 0.0
    if streams:
        if asked is not None and asked + beside + processes * cpu > cpus + 1e-9:
            changes.append(f"Ray Data 1 CPU (scaling.data_cpus: {asked:g})")
            asked = None
        data = asked or 1.0  # Ray Data's share: each of its tasks takes a whole CPU
    room = round(cpus - beside - data, 4)
    if processes * cpu > room + 1e-9:
        share = int(room / processes * 10_000 + 1e-6) / 10_000 if room > 0 else 0.0
        if share <= 0 and streams:
            raise DataProblem(
                f"--smoke cannot fit the run onto the cluster's {cpus:g} CPU: Ray Data needs a whole CPU to stream the "
                "data, and the workers some beside it; run it where Ray has 2 CPUs or more",
                "scaling.resources_per_worker",
            )
        if share > 0:
            resources["CPU"] = share
            what = "for the trial" if shape == "tune" else "a worker"
            fitted = f"{share:g} CPU {what} (the spec: {cpu:g})"
            if streams:
                changes.append(f"{fitted}, so that Ray Data keeps {data:g} of the cluster's {cpus:g} CPUs")
            else:
                changes.append(f"{fitted}, within the cluster's {cpus:g} CPUs")
    if resources != wanted:
        scaling = {**scaling, "resources_per_worker": resources}
    if not quiet:
        print(f"--smoke: {', '.join(changes)}", flush=True)
    return scaling, asked


def objective_smoke_fit(per_trial, quiet):
    """--smoke's trial of an objective search: on CPU, without the resources the cluster lacks, and with at most the
    cluster's CPUs (a local Ray's, or the joined cluster's); says in one line what --smoke changed."""
    have = ray.cluster_resources()
    changes = ["1 trial", "1 step"]
    kept = ("CPU", "memory", "object_store_memory")
    fitted = {
        name: n for name, n in per_trial.items() if n and name != "GPU" and (name in kept or have.get(name, 0) >= n)
    }
    fitted = fitted or {"CPU": 1.0}  # a process with nothing reserved: Ray's default task
    changes += [
        "on CPU" if name == "GPU" else f"no {name}" for name, n in per_trial.items() if n and name not in fitted
    ]
    cpus = have.get("CPU", 0.0)
    if fitted.get("CPU", 0.0) > cpus > 0:
        changes.append(f"{cpus:g} CPU for the trial (the spec: {fitted['CPU']:g}), the cluster's")
        fitted["CPU"] = cpus
    if not quiet:
        print(f"--smoke: {', '.join(changes)}", flush=True)
    return fitted


class Run:
    """One run of an experiment file, as a `with` block: on entry its command line is read, its run directory
    claimed (refused when another run holds it, or when it holds a run that needs --resume), Ray started or
    joined, Ray's own output routed to ray.log, --smoke fitted onto that Ray, the workers checked against what the
    cluster holds, and the files it runs written into the run directory; on exit Ray (if started here) stops, the
    console is given back and the claim released, however the block ends. `finish(result)` writes a training run's
    results.csv and best.json.

    `experiment` describes the run (the experiment file's RUN): its name, storage_path, address (cluster.address),
    config, scaling (ray.train.ScalingConfig's arguments), shape ("train", "tune", "tune_train", "objective"),
    and optionally: per_trial (an objective search's resources), refusal (why it can never be resumed), score
    (run.checkpoint_score), spec_dir (the spec's directory, recorded in best.json), framework, ray_data and
    streams (Ray Data reads the data; streams: files, whose CPUs data_cpus sets), data_cpus, driver_cpu (a
    tune_train trial's own process), max_concurrent_trials, prepare (config, address) -> config, runtime_env
    (cluster.runtime_env), working_dir and excludes (what travels to a cluster: job_runtime_env), tracking
    (run_dir, config) -> a run.callbacks tracker.
    `artefacts`, `echo`, `ray_started`: what `specc run` passes (the files to keep, whether to print the outcome,
    whether it started Ray for this run)."""

    def __init__(
        self, script, description, argv, resolved_spec, experiment, artefacts=None, echo=True, ray_started=False
    ):
        self.script, self.resolved_spec, self.experiment = script, resolved_spec, experiment
        self.artefacts, self.echo, self.ray_started = artefacts, echo, ray_started
        self.shape = experiment.get("shape", "train")
        self.args = parse_args(argv, description, experiment.get("address"), self.shape, experiment["storage_path"])
        self.name = experiment["name"]
        self.config, self.scaling = experiment["config"], experiment.get("scaling")
        self.callbacks, self.at_once, self.summary, self.rows = [], experiment.get("max_concurrent_trials"), None, []
        self.cleanup = contextlib.ExitStack()  # what the run holds, let go in reverse order however it ends
        self.showing = contextlib.ExitStack()  # the progress lines, ended before the outcome is written

    @property
    def smoke(self):
        return self.args.smoke

    def __enter__(self):
        args, experiment = self.args, self.experiment
        if experiment.get("framework") == "tensorflow":
            os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")  # tf.keras is tf_keras here too, as in Ray's processes
            if not args.verbose:  # TensorFlow's C++ info and warnings, here and in a local Ray's workers (inherited)
                os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        capped = ()
        if args.smoke and self.shape != "objective":
            self.config, self.scaling, capped = smoke_capped(self.config, self.scaling)
        if experiment.get("prepare"):
            self.config = experiment["prepare"](self.config, args.address)
        self.storage_path, self.run_dir = run_location(args.storage_path, self.name)
        if experiment.get("snapshots") and "://" not in self.storage_path:
            # Tune snapshots the search's state each time a trial has saved run.checkpoints_to_keep checkpoints since
            # the last snapshot, so that a resume never names a deleted checkpoint, and warns when snapshots come less
            # than 5 s apart. On a local disk a snapshot is a small file written in milliseconds: the warning is moot.
            # On remote storage each is an upload, and the warning stays (in ray.log).
            os.environ.setdefault("TUNE_WARN_EXCESSIVE_EXPERIMENT_CHECKPOINT_SYNC_THRESHOLD_S", "0")
        self.cleanup.callback(release, claim(self.run_dir))  # before anything is written; released however it ends
        try:
            self.enter_ray(capped)
        except BaseException as error:
            self.cleanup.close()
            if isinstance(error, DataProblem):  # the data, or the CPUs to read it, cannot make a run: a message
                raise SystemExit(f"{error.field}: {error}") from error
            raise
        return self

    def enter_ray(self, capped):
        args, experiment = self.args, self.experiment
        search = self.shape != "train"
        check_resumable(self.run_dir, args.resume, args.force, self.resolved_spec, search, experiment.get("refusal"))
        runtime_env = job_runtime_env(experiment, self.script, args.address, self.storage_path)
        timeout_s = experiment.get("init_timeout_s", 60)
        if start_ray(args.address, args.quiet, args.verbose, runtime_env, timeout_s) or self.ray_started:
            self.cleanup.callback(ray.shutdown)  # a Ray this run started ends with it; a joined one goes on
        self.cleanup.callback(RayOutput(self.run_dir, args.verbose, experiment.get("ray_data", False)).close)
        self.cleanup.callback(self.showing.close)
        self.data_cpus = experiment.get("data_cpus")
        if self.shape == "objective":
            self.per_trial = experiment["per_trial"]
            if args.smoke:  # on CPU, fitted onto the CPUs of the Ray it runs on
                self.per_trial = objective_smoke_fit(self.per_trial, args.quiet)
            how_many_fit(self.per_trial, "trial")
        else:
            if args.smoke:  # fitted onto the CPUs of the Ray it runs on
                beside, streams = experiment.get("driver_cpu", 0.0), experiment.get("streams", False)
                self.scaling, self.data_cpus = smoke_fit(
                    self.scaling, self.data_cpus, args.quiet, self.shape, beside, streams, capped
                )
            self.fit_workers()
        files = self.artefacts or {**own_sources(self.script), "spec.resolved.yaml": self.resolved_spec}
        write_files(self.run_dir, files)
        if self.shape == "train":
            self.show_epochs()
        else:
            self.show_trials()

    def fit_workers(self):
        """Refuses a run whose workers (a trial's) the cluster cannot hold; a search's trials at once."""
        workers = {name: n * self.scaling["num_workers"] for name, n in worker_resources(self.scaling).items()}
        if self.shape == "train" and self.scaling["num_workers"]:
            how_many_fit(workers, "run")
        elif self.shape == "tune":
            self.per_trial = worker_resources(self.scaling)  # the trial's one process reserves one worker's
            how_many_fit(self.per_trial, "trial")
        elif self.shape == "tune_train":
            # The trial's own process only drives its Ray Train workers, which reserve their resources themselves;
            # trials beyond what the cluster holds would wait for workers forever: never more at once.
            beside = self.experiment["driver_cpu"]
            self.per_trial = {"CPU": beside}
            fit = how_many_fit({**workers, "CPU": workers.get("CPU", 0) + beside}, "trial")
            self.at_once = min(fit, self.at_once) if self.at_once else fit

    def show_epochs(self):
        """A training run's progress: one line an epoch (a bar on a terminal), and run.callbacks' tracker."""
        names = self.experiment.get("callbacks")
        config = {name: self.config[name] for name in self.experiment["config"]}
        max_failures = self.experiment.get("max_failures", 0)
        tracker = Tracking(names, self.run_dir, config, self.name, max_failures) if names else None
        progress = None if self.args.quiet else EpochProgress(self.name, self.config["training"]["epochs"])
        self.callbacks = [tracker] if tracker else []
        if self.scaling["num_workers"]:
            if progress:
                self.callbacks.append(self.showing.enter_context(showing_epochs(progress)))
        else:  # Ray Train's local mode calls no callbacks: report() hands each epoch to these
            IN_PROCESS_CALLBACKS[:] = [callback for callback in (tracker, progress) if callback]
            self.showing.callback(IN_PROCESS_CALLBACKS.clear)
            if progress:
                self.showing.callback(progress.close)

    def show_trials(self):
        """A search's progress: one line per trial event, in place of Tune's reporter (`progress`: None with --quiet),
        and run.callbacks' trackers for every trial; `callbacks` holds both, for the Tuner's RunConfig."""
        os.environ.setdefault("RAY_AIR_NEW_OUTPUT", "0")  # Tune's newer output prints a header box at verbose=0
        search, objective = self.experiment["search"], self.shape == "objective"
        self.callbacks = trackers(self.experiment.get("callbacks", ()), self.run_dir, self.name)
        self.progress = None
        if not self.args.quiet:
            length = (1 if self.smoke else search["max_steps"]) if objective else self.config["training"]["epochs"]
            paths = search["paths"]() if callable(search["paths"]) else search["paths"]
            self.progress = TrialProgress(
                self.name,
                length,
                search["reported"],
                list(paths),
                steps=objective,  # a step: a report of the objective function
                rungs=search.get("rungs", ()),
                option_params=search.get("option_params"),
                all_when=search.get("all_when", False),
            )
            self.callbacks.append(self.progress)

    def objective_dirs(self):
        """The spec's directory (RUN["objective"]["spec_dir"], relative to this script) and the directories, relative
        to it, that the objective's modules are imported from."""
        objective = self.experiment["objective"]
        here = os.path.dirname(os.path.abspath(self.script))
        return os.path.normpath(os.path.join(here, objective["spec_dir"])), objective.get("import_dirs", (".",))

    def objective(self, reference):
        """An objective search's trainable: objective.function (`reference`), imported from the spec's directory
        (RUN["objective"]: relative to the script; joining a cluster, its place in the working directory) in each
        trial's process. Imported here first: a missing module or name stops the run before any trial starts."""
        spec_dir, import_dirs = self.objective_dirs()
        where = {"spec_dir": spec_dir}
        if joins_cluster(self.args.address):  # the trials import it from the working directory on their node
            where["spec_dir_shipped"] = self.experiment["objective"]["shipped"]
        use_spec_dir(spec_dir, import_dirs)
        load_factory(reference)
        return ray.tune.with_parameters(run_objective, reference=reference, where=where, import_dirs=import_dirs)

    def trainable(self, reference):
        """An objective search's ray.tune.Trainable class: objective.trainable (`reference`), imported here from the
        spec's directory (as objective() finds a function). Tune builds the class in each trial's process from its
        pickle, where the spec's directory is not on the import path: the project's modules imported with it are
        pickled by value (ray.cloudpickle.register_pickle_by_value), as Ray advises for modules its workers lack."""
        spec_dir, import_dirs = self.objective_dirs()
        use_spec_dir(spec_dir, import_dirs)
        trainable = load_factory(reference)
        for module in project_modules(spec_dir, import_dirs, keep=(self.script, __file__)):
            ray.cloudpickle.register_pickle_by_value(module)
        return trainable

    def steps_stopper(self, rules=None):
        """When an objective's trial ends: after objective.max_steps reports (1 with --smoke; Tune counts reports as
        training_iteration), or by `rules` (the stop section's) before that."""
        steps = 1 if self.smoke else self.experiment["search"]["max_steps"]
        if steps is None:
            return rules
        reports = ray.tune.stopper.FunctionStopper(lambda trial_id, result: result["training_iteration"] >= steps)
        return reports if rules is None else ray.tune.stopper.CombinedStopper(reports, rules)

    def restored(self, trainable, **resume):
        """The search this run continues (--resume, once Tune can restore it), with its progress shown as asked;
        None otherwise. `resume`: Tuner.restore's arguments (run.resume: which trials start again)."""
        if not (self.args.resume and ray.tune.Tuner.can_restore(self.run_dir)):
            return None
        tuner = ray.tune.Tuner.restore(self.run_dir, trainable, **resume)
        shown_as_asked(tuner, self.progress)
        return tuner

    def finish(self, result):
        """A training run's results.csv and best.json (run.checkpoint_score's best epoch); returns best.json's data."""
        self.showing.close()  # every epoch shown before the outcome
        self.summary = write_run_results(self.run_dir, result, self.experiment.get("score"), self.recorded())
        return self.summary

    def finish_search(self, results, config=None):
        """A search's results.csv, best.json and best.yaml (write_search_results); returns best.json's data and
        the rows of results.csv."""
        search = self.experiment["search"]
        if self.shape == "objective":
            self.summary, self.rows = write_objective_results(self.run_dir, results, search, self.resolved_spec)
        else:
            self.summary, self.rows = write_search_results(
                self.run_dir, results, config, search, self.resolved_spec, self.recorded()
            )
        return self.summary, self.rows

    def recorded(self):
        """best.json's spec_dir: the spec's directory relative to the run directory (a URI run directory: None),
        where `specc evaluate` finds the files and factories the run read; nothing for a spec that reads none."""
        spec_dir = self.experiment.get("spec_dir")
        if spec_dir is None:
            return {}
        return {"spec_dir": None if "://" in self.run_dir else os.path.relpath(spec_dir, self.run_dir)}

    def __exit__(self, kind, error, trace):
        try:
            self.showing.close()
        finally:
            self.cleanup.close()
        if isinstance(error, DataProblem):  # the data, or the CPUs to read it, cannot make a run: a message
            raise SystemExit(f"{error.field}: {error}") from error
        if error is None and self.echo and self.summary is not None and self.shape == "train":
            self.say(self.summary)
        elif error is None and self.echo and self.summary is not None:
            self.say_search(self.summary, self.rows)
        return False

    def say_search(self, summary, rows):
        """A search's trials, its best (or its Pareto front) on the console; one whose every trial diverged exits
        with status 1."""
        metric, ran = self.experiment["search"]["metric"], "steps" if self.shape == "objective" else "epochs"
        if self.experiment["search"].get("pareto"):
            print(trial_table(rows, ["trial_id", "status", ran, *(f"last_{name}" for name in metric), "pareto"]))
            for member in summary["front"]:
                trial, metrics, config = member["trial_id"], member["metrics"], member["config"]
                print(f"{self.name}: Pareto front: trial {trial}: {metrics}, config {config}")
        else:
            print(trial_table(rows, ["trial_id", "status", ran, f"best_{metric}"]))
            if summary["trial_id"]:
                print(f"{self.name}: best trial {summary['trial_id']}: {summary['metrics']}")
                print(f"config: {summary['config']}")
        print(f"run directory: {self.run_dir}")
        if self.shape == "objective":  # the function's own checkpoints, if any, are in best.json
            return
        print(f"checkpoint: {summary['checkpoint']}")
        if summary["diverged"]:
            print(f"diverged (NaN or infinite loss): {', '.join(d['trial_id'] for d in summary['diverged'])}")
        if summary["status"] == "diverged":  # exit status 1
            raise SystemExit(
                f"{self.name} diverged: every trial's loss became NaN or infinite; lower the learning rate "
                "(training.optimizer.lr) or clip gradients (training.grad_clip_norm)"
            )

    def say(self, summary):
        """A training run's outcome on the console; a diverged run exits with status 1, naming the epoch."""
        print(f"{self.name}: {summary['metrics']}")
        print(f"run directory: {self.run_dir}")
        if self.shape == "objective":  # the function's own checkpoints, if any, are in best.json
            return
        print(f"checkpoint: {summary['checkpoint']}")
        if summary["diverged"]:
            where = summary["diverged"]
            raise SystemExit(
                f"{self.name} diverged: {where['metric']} is NaN or infinite at epoch {where['epoch']}; lower the "
                "learning rate (training.optimizer.lr) or clip gradients (training.grad_clip_norm)"
            )


# A search's results: results.csv (a row a trial), best.json (the best trial, or the Pareto front) and best.yaml.
def write_search_results(run_dir, results, config, search, resolved_spec, recorded=None):
    """results.csv (one row per trial; `pareto` marking the front of a multi-objective search), best.json (the best
    trial, or the Pareto front: every trial no other beats on all of tune.metric by their last results, each with its
    config, metrics and checkpoint) and best.yaml (the best trial, or the front's first, as a spec of its own);
    returns (best.json's summary, the rows). The best trial is one whose loss stayed finite; a search whose every
    trial diverged has none (status diverged). `search`: the experiment's SEARCH (metric, mode, reported, paths, and
    pareto, latest_checkpoint, train_runs, option_params, ended_by, data_paths, factories when they apply);
    `recorded`: more entries for best.json (the spec's directory)."""
    trials = list(results)
    for result in trials:
        if result.error:
            print(f"trial {trial_id(result)} failed: {result.error!r}")
    paths = list(search["paths"]())
    if search.get("repeat"):  # tune.repeat: results.csv and best.yaml name the seed each repeat trained from
        trials = [repeat_seeded_result(result, config) for result in trials]
        paths += [] if "training.seed" in paths else ["training.seed"]
    rows = [trial_row(result, config["training"]["epochs"], search, paths) for result in trials]
    if all(result.error for result in trials):
        write_files(run_dir, {"results.csv": csv_text(rows)})
        raise trials[0].error
    diverging = [
        {"trial_id": row["trial_id"], "epoch": result.metrics["epoch"], "metric": diverged(result.metrics)}
        for row, result in zip(rows, trials, strict=True)
        if row["status"] == "diverged"
    ]
    metric, mode = search["metric"], search["mode"]
    if search.get("pareto"):
        members = pareto_members(trials, rows, search, paths)
        best = members[0] if members else None
    else:
        members, best = None, best_trial(trials, rows, search, paths)
    tail = {"diverged": diverging, "epochs_counted_from": 1, "run_dir": run_dir, **(recorded or {})}
    if best is None:  # no trial's loss stayed finite: there is no best trial (no front)
        empty = {"config": {}, "metrics": {}, "checkpoint": None}
        front = {"front": []} if members is not None else {}
        summary = {"status": "diverged", "trial_id": None, "metric": metric, "mode": mode, **empty, **front, **tail}
        write_files(run_dir, {"results.csv": csv_text(rows), "best.json": strict_json(summary)})
        return summary, rows
    summary = {"status": "completed", "trial_id": best["trial_id"], "metric": metric, "mode": mode}
    summary.update(config=best["config"], metrics=best["metrics"], checkpoint=best["checkpoint"])
    if members is not None:
        summary["front"] = members  # best.json: the whole front; its first member also stands at the top level
    summary.update(tail)
    if search.get("ended_by"):
        summary["ended_by"] = search["ended_by"](trials)  # stop.all_when
    files = {"results.csv": csv_text(rows), "best.json": strict_json(summary)}
    write_files(run_dir, {**files, "best.yaml": best_spec(config, summary, search, resolved_spec)})
    return summary, rows


def repeat_seeded_result(result, config):
    """tune.repeat: a trial's result whose config also holds the seed it trained from, training.seed (its sampled one,
    or the spec's) + the index Ray's Repeater gave this repeat of the config (its TRIAL_INDEX), as repeat_seeded in the
    script computes it; so `specc run best.yaml` retrains that repeat, not the config's first."""
    sampled = result.config
    if sampled is None:  # a trial that failed before its first report
        return result
    index = sampled.get(ray.tune.search.repeater.TRIAL_INDEX, 0)
    seed = sampled.get("training.seed", config["training"]["seed"]) + index
    return dataclasses.replace(result, metrics={**result.metrics, "config": {**sampled, "training.seed": seed}})


def best_trial(trials, rows, search, paths):
    """The trial whose best tune.metric is best, among those whose loss stayed finite, with its best epoch's
    metrics; None when there is none."""
    metric, mode = search["metric"], search["mode"]
    ranked = [
        (row[f"best_{metric}"], result)
        for row, result in zip(rows, trials, strict=True)
        if row["status"] != "diverged" and row[f"best_{metric}"] is not None and math.isfinite(row[f"best_{metric}"])
    ]
    if not ranked:
        return None
    best = (max if mode == "max" else min)(ranked, key=lambda pair: pair[0])[1]
    history = history_of(best)
    if search.get("latest_checkpoint"):  # num_parameters is the same at every epoch: the trial's last
        best_epoch = history.iloc[-1]
    else:
        best_epoch = history.loc[history[metric].idxmax() if mode == "max" else history[metric].idxmin()]
    return {
        "trial_id": trial_id(best),
        "config": {path: plain(best.config[path]) for path in paths},  # searchers may suggest numpy numbers
        "metrics": {name: plain(best_epoch[name]) for name in search["reported"] if name in best_epoch},
        "checkpoint": best_checkpoint(best, search),
    }


def pareto_members(trials, rows, search, paths):
    """The Pareto front of a multi-objective search, each trial by its last result (what Optuna was told; a diverged
    trial's last loss is NaN: on no front), best first by METRIC[0], then the next; ties by trial."""
    metric, mode = search["metric"], search["mode"]
    points = [[row[f"last_{name}"] for name in metric] if row["status"] != "diverged" else None for row in rows]
    front = ranked_front(points, mode, rows)
    return [
        {
            "trial_id": trial_id(trials[i]),
            "config": {path: plain(trials[i].config[path]) for path in paths},
            "metrics": {
                name: plain(trials[i].metrics[name]) for name in search["reported"] if name in trials[i].metrics
            },
            "checkpoint": best_checkpoint(trials[i], search),
        }
        for i in front
    ]


def ranked_front(points, modes, rows):
    """The Pareto front of the trials' `points`, best first by the first objective, then the next, ties by trial;
    each row of results.csv marked with whether its trial is on it."""
    front = pareto_front(points, modes)
    for index, row in enumerate(rows):
        row["pareto"] = index in front
    signs = [-1 if mode == "max" else 1 for mode in modes]
    key = [[sign * value for sign, value in zip(signs, point, strict=True)] if point else None for point in points]
    return sorted(front, key=lambda i: (key[i], rows[i]["trial_id"]))


def pareto_front(points, modes):
    """Indices of the non-dominated points: those no other point matches or beats in every objective and beats in
    one (each in its mode's direction). A point with a missing or NaN value (or None for the whole point) is on no
    front; equal points dominate neither, so ties are on the front together."""
    signs = [1 if mode == "max" else -1 for mode in modes]
    scored = {
        i: [sign * value for sign, value in zip(signs, point, strict=True)]
        for i, point in enumerate(points)
        if point is not None and all(isinstance(v, int | float) and math.isfinite(v) for v in point)
    }

    def dominates(a, b):
        return all(x >= y for x, y in zip(a, b, strict=True)) and any(x > y for x, y in zip(a, b, strict=True))

    return [i for i, a in scored.items() if not any(dominates(b, a) for j, b in scored.items() if j != i)]


def history_of(result):
    """A trial's reports, oldest first, along the run that ended it: Tune's record of them (its result.json) also
    holds what an earlier run reported after the point the trial went back to (a retry or a resume from its last
    checkpoint, or from the start without one; a pause; PBT's exploit), and a report of a step at or before one
    already kept drops those. Its last report alone when that record is empty though the trial reported (seen when
    PBT restarted a trial after its last report)."""
    history = result.metrics_dataframe
    if (history is None or history.empty) and result.metrics:
        import pandas as pd

        return pd.DataFrame([result.metrics])
    if history is None or "training_iteration" not in history:
        return history
    steps, kept = history["training_iteration"].tolist(), []
    for row, step in enumerate(steps):
        while kept and steps[kept[-1]] >= step:
            kept.pop()
        kept.append(row)
    return history.iloc[kept].reset_index(drop=True)


def trial_row(result, epochs, search, paths):
    """A trial in results.csv: status (diverged: it stopped at a NaN or infinite loss), epochs run, sampled values,
    best and last metrics (a multi-objective search: whether it is on the Pareto front, and last metrics)."""
    metrics = result.metrics or {}
    ran = metrics.get("epoch", 0)  # epochs count from 1: the last one reported is how many ran
    status = (
        "error" if result.error else "diverged" if diverged(metrics) else "completed" if ran >= epochs else "stopped"
    )
    row = {"trial_id": trial_id(result), "status": status, "epochs": ran}
    if search.get("pareto"):
        row.update({path: plain((result.config or {}).get(path)) for path in paths})
        row["pareto"] = None  # whether the trial is on the Pareto front: set once every trial is known
    else:
        metric, options = search["metric"], search.get("option_params", {})
        history = history_of(result)
        values = history[metric] if history is not None and metric in history else None
        best = (
            None if values is None or values.empty else plain(values.max() if search["mode"] == "max" else values.min())
        )
        for path in paths:  # a conditional entry: its option's type and own parameters, a column each
            value = (result.config or {}).get(path)  # none: a trial that failed before it reported
            if path in options:
                row.update({f"{path}.{name}": plain(value.get(name)) if value else None for name in options[path]})
            else:
                row[path] = plain(value)
        row[f"best_{metric}"] = best
    row.update({f"last_{name}": metrics.get(name) for name in search["reported"] if name != "epoch"})
    return row


def trial_table(rows, columns):
    """results.csv's trials as a compact table of `columns`."""
    cells = [columns] + [["-" if row[name] is None else number(row[name]) for name in columns] for row in rows]
    widths = [max(len(line[i]) for line in cells) for i in range(len(columns))]
    lines = ("  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip() for line in cells)
    return "\n".join(lines)


def trial_name(trial):
    """trial_<id>, as results.csv names it (Ray's default puts every sampled value into the directory name)."""
    return f"trial_{trial.trial_id}"


def trial_id(result):
    """From the trial's directory (trial_<id>): its last metrics may be a PBT donor's, with the donor's id."""
    return os.path.basename(result.path).removeprefix("trial_")


def best_checkpoint(result, search):
    """The trial's best checkpoint by tune.metric (the last one when it kept only that); its latest where the best
    is not ranked by epoch (a front taken from last results; num_parameters, the same every epoch). A trial that
    drove Ray Train runs (`train_runs`) reported their checkpoints' paths with its metrics."""
    metric, latest = search["metric"], search.get("latest_checkpoint") or search.get("pareto")
    if not search.get("train_runs"):
        if latest:
            return result.checkpoint.path if result.checkpoint else None
        kept = [(checkpoint, metrics) for checkpoint, metrics in result.best_checkpoints or [] if metric in metrics]
        if not kept:
            return result.checkpoint.path if result.checkpoint else None
        return (max if search["mode"] == "max" else min)(kept, key=lambda pair: pair[1][metric])[0].path
    history = history_of(result)
    if history is None or "checkpoint_path" not in history:
        return None
    if latest:
        saved = history["checkpoint_path"].dropna()
        return None if saved.empty else saved.iloc[-1]
    saved = history[history["checkpoint_path"].notna()]
    if saved.empty:
        return None
    index = saved[metric].idxmax() if search["mode"] == "max" else saved[metric].idxmin()
    return saved.loc[index, "checkpoint_path"]


def csv_text(rows):
    """Lists and dicts as JSON, everything else as it is; an empty cell is a metric the trial never reported."""
    import csv
    import io

    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(list(rows[0]) if rows else [])
    for row in rows:
        writer.writerow(["" if v is None else json.dumps(v) if isinstance(v, list | dict) else v for v in row.values()])
    return out.getvalue()


def best_spec(config, summary, search, resolved_spec):
    """best.yaml: the spec with the best trial's values applied and no search, so `specc run best.yaml` trains it."""
    import yaml

    name, metric, mode = yaml.safe_load(resolved_spec)["run"]["name"], search["metric"], search["mode"]
    spec = yaml.safe_load(resolved_spec)
    for section in ("tune", "scheduler", "stop"):
        spec.pop(section, None)
    spec = with_sample(spec, summary["config"])
    spec["name"] = spec["run"]["name"] = f"{name}-best"
    first = (metric[0], mode[0]) if search.get("pareto") else (metric, mode)
    spec["run"]["checkpoint_score"] = spec["run"]["checkpoint_score"] or {"metric": first[0], "mode": first[1]}
    for key in search.get("data_paths", ()):
        spec["dataset"][key] = config["dataset"][key]  # absolute: best.yaml lives in the run directory
    header = best_header(name, summary, search, "config")
    if search.get("factories"):
        header += "# Its custom factories are imported from this file's directory: copy it next to the original spec.\n"
    return header + yaml.safe_dump(spec, sort_keys=False, default_flow_style=None)


def best_header(name, summary, search, values):
    """best.yaml's opening comment: which trial it is (the best, or the Pareto front's first) and how to run it."""
    metric = search["metric"]
    if not search.get("pareto"):
        return (
            f"# The best trial of {name} ({summary['trial_id']}, {metric} {summary['metrics'].get(metric)}) "
            "as a spec of its own:\n#   specc run best.yaml\n"
        )
    shown = ", ".join(f"{each} {summary['metrics'].get(each)}" for each in metric)
    others = ", ".join(member["trial_id"] for member in summary["front"][1:]) or "none"
    return (
        f"# The Pareto front of {name} holds {len(summary['front'])} trials (best.json lists each); this is "
        f"its first by {metric[0]}, trial {summary['trial_id']} ({shown}), as a spec of its own:\n"
        "#   specc run best.yaml\n"
        f"# The front's others ({others}): their {values} in best.json.\n"
    )


def with_sample(config, sample):
    """One trial's config: `config` with each sampled value written in at its path (list items by index)."""
    config = dict(config)
    for path, value in sample.items():
        parts = path.split(".")
        node = config
        for part in parts[:-1]:
            key = int(part) if isinstance(node, list) else part
            node[key] = copy.copy(node[key])  # copied on the way down: the config itself stays as compiled
            node = node[key]
        node[int(parts[-1]) if isinstance(node, list) else parts[-1]] = value
    return config


def plain(value):
    """A pandas/numpy number as a plain Python one (for JSON and YAML)."""
    return value.item() if hasattr(value, "item") else value


# A search's progress: one line per trial event, or a tqdm bar over the trials on a terminal.
class TrialProgress(ray.tune.Callback):
    """One line per trial event, in Tune's driver: started (with its sampled values), a report at a rung of ASHA or
    HyperBand, stopped early, diverged, finished, failed and retried, errored; `[done/all]` counts the trials ended.
    `length`: the epochs a trial trains, or (an objective search, `steps`) the reports it makes at most (None: the
    function decides); `values`: the sampled paths (an objective search's: under objective.params); `rungs`: the
    epochs (steps) at which the scheduler compares trials; `option_params`: a conditional entry's options, shown by
    their own parameters; `all_when`: stop.all_when may end the search, stopping its last trials without
    on_trial_complete."""

    def __init__(self, name, length, reported, values, steps=False, rungs=(), option_params=None, all_when=False):
        self.name, self.length, self.reported, self.steps = name, length, reported, steps
        self.sampled = values
        self.rungs, self.option_params, self.all_when = rungs, option_params or {}, all_when

    def setup(self, total_num_samples=None, **info):
        """At the start of the search, a resumed one's too."""
        self.began, self.total, self.ended, self.values = time.monotonic(), total_num_samples, set(), {}
        self.bar = None
        if sys.stdout.isatty():
            import tqdm

            self.bar = tqdm.tqdm(total=total_num_samples, desc=self.name, unit="trial", file=sys.stdout)

    def on_trial_start(self, iteration, trials, trial, **info):
        """Also when a trial goes on: after a scheduler paused it (HyperBand), a retry, or PBT's exploit (new values:
        shown), or in a resumed search."""
        config, paths = trial.config, self.sampled
        sampled = objective_params(config, paths) if self.steps else {path: config.get(path) for path in paths}
        values = [text for path, value in sampled.items() for text in self.shown(path, value)]
        ran = self.ran(trial.last_result or {})
        changed = values if values != self.values.get(trial.trial_id) else []
        self.values[trial.trial_id] = values
        self.show(trials, trial, f"continues after {self.at(ran)}" if ran else "started", *changed)

    def on_trial_result(self, iteration, trials, trial, result, **info):
        ran = self.ran(result)
        if result["training_iteration"] in self.rungs and (self.length is None or ran < self.length):  # last: finished
            self.show(trials, trial, f"{self.at(ran)} (rung)", metric_text(result, self.reported))

    def on_trial_complete(self, iteration, trials, trial, **info):
        result = trial.last_result or {}
        ran = self.ran(result)
        finished = self.length is None or ran >= self.length
        ended = "diverged" if not self.steps and diverged(result) else "finished" if finished else "stopped early"
        self.ended.add(trial.trial_id)
        size = [f"num_parameters {result['num_parameters']}"] if "num_parameters" in result and not self.steps else []
        self.show(trials, trial, f"{ended} at {self.at(ran)}", metric_text(result, self.reported), *size)

    def on_trial_recover(self, iteration, trials, trial, **info):
        self.show(trials, trial, f"failed at {self.at(self.ran(trial.last_result or {}))}, retrying")

    def on_trial_error(self, iteration, trials, trial, **info):
        self.ended.add(trial.trial_id)
        self.show(trials, trial, "errored", *([f"see {trial.error_file}"] if trial.error_file else []))

    def on_experiment_end(self, trials, **info):
        if self.all_when:  # stop.all_when ended the search: Tune stopped its last trials without on_trial_complete
            for trial in trials:
                if trial.status == "TERMINATED" and trial.trial_id not in self.ended and trial.last_result:
                    self.on_trial_complete(None, trials, trial)
        if self.bar:
            self.bar.close()

    def ran(self, result):
        """How far a trial got: its last epoch (epochs count from 1), or the function's reports (Tune's count)."""
        return result.get("training_iteration" if self.steps else "epoch", 0)

    def at(self, ran):
        unit = "step" if self.steps else "epoch"
        return f"{unit} {ran}" if self.length is None else f"{unit} {ran}/{self.length}"

    def shown(self, path, value):
        """`lr=0.01`; a conditional entry's option by its own parameters: `optimizer.type=sgd`, `optimizer.lr=0.01`."""
        name = path.rsplit(".", 1)[-1]
        if isinstance(value, dict) and path in self.option_params:
            return [f"{name}.{key}={number(value[key])}" for key in self.option_params[path] if key in value]
        return [f"{name}={number(value)}"]

    def show(self, trials, trial, event, *details):
        ended = self.ended | {
            t.trial_id for t in trials if t.status in ("TERMINATED", "ERROR")
        }  # a resumed search's too
        if self.bar:
            self.bar.update(len(ended) - self.bar.n)
            self.bar.set_postfix_str(f"trial {trial.trial_id} {event}")
            return
        elapsed = f"elapsed {duration(time.monotonic() - self.began)}"
        line = "  ".join(
            [f"{self.name}: [{len(ended)}/{self.total}] trial {trial.trial_id} {event}", *details, elapsed]
        )
        print(line, flush=True)


def shown_as_asked(tuner, progress):
    """Tuner.restore brings back the callbacks a search started with, its progress lines among them: this run's own
    take their place, none with --quiet. (Ray Tune has no public setter; through Ray Client, the restored ones stay.)"""
    internal = getattr(tuner, "_local_tuner", None)
    if internal is None:
        return
    run_config = internal.get_run_config()
    # By name: the restored one's class was unpickled, by value when specc run executed this source, so not this one
    kept = [callback for callback in run_config.callbacks or [] if type(callback).__name__ != "TrialProgress"]
    run_config.callbacks = kept + ([progress] if progress else [])


# An objective search's results (the user's own Tune function): a step is one of its reports.
def write_objective_results(run_dir, results, search, resolved_spec):
    """results.csv (one row per trial; `pareto` marking the front of a multi-objective search), best.json (the best
    trial by tune.metric at its best step, or the Pareto front by the trials' last reports) and best.yaml (the spec
    with the best trial's params, or the front's first's); returns (best.json's summary, the rows). `search`: the
    experiment's SEARCH (metric, mode, reported, paths: the tune.space paths under objective.params, max_steps, and
    pareto, ended_by when they apply)."""
    trials = list(results)
    for result in trials:
        if result.error:
            print(f"trial {trial_id(result)} failed: {result.error!r}")
    rows = [objective_row(result, search) for result in trials]
    metric, mode = search["metric"], search["mode"]
    if search.get("pareto"):
        points = [[row[f"last_{name}"] for name in metric] for row in rows]  # by the last report: what Optuna was told
        chosen = front = ranked_front(points, mode, rows)
    else:
        chosen = [
            i
            for i, row in enumerate(rows)
            if row[f"best_{metric}"] is not None and math.isfinite(row[f"best_{metric}"])
        ]
    if not chosen:  # no trial reported every objective (tune.metric)
        write_files(run_dir, {"results.csv": csv_text(rows)})
        missing = f"all of {metric}" if search.get("pareto") else metric
        raise (trials[0].error if trials and trials[0].error else SystemExit(f"no trial reported {missing}"))
    if search.get("pareto"):
        members = [objective_member(trials[i], trials[i].metrics, search) for i in front]
        # best.json: the whole front; its first member also stands at the top level, as a single search's best does
        summary = {"status": "completed", **members[0], "metric": metric, "mode": mode, "front": members}
        summary["run_dir"] = run_dir
    else:
        pick = max if mode == "max" else min
        best = trials[pick(chosen, key=lambda i: rows[i][f"best_{metric}"])]
        history = history_of(best)
        best_step = history.loc[history[metric].idxmax() if mode == "max" else history[metric].idxmin()]
        summary = {"status": "completed", "trial_id": trial_id(best), "metric": metric, "mode": mode}
        member = objective_member(best, best_step, search)
        summary.update({key: member[key] for key in ("config", "metrics", "step", "checkpoint")}, run_dir=run_dir)
    if search.get("ended_by"):
        summary["ended_by"] = search["ended_by"](trials)  # stop.all_when
    files = {"results.csv": csv_text(rows), "best.json": strict_json(summary)}
    write_files(run_dir, {**files, "best.yaml": objective_spec(summary, search, resolved_spec)})
    return summary, rows


def objective_member(result, metrics, search):
    """A trial at a report (`metrics`: its best step's, or its last): its params, metrics, step and checkpoint."""
    return {
        "trial_id": trial_id(result),
        "config": objective_params(result.config, search["paths"]),
        "metrics": {name: plain(metrics[name]) for name in search["reported"] if name in metrics},
        "step": int(metrics["training_iteration"]),
        "checkpoint": result.checkpoint.path if result.checkpoint else None,
    }


def objective_params(config, paths):
    """A trial's value of each tune.space path (objective.params.<name>), from its config."""
    values = {}
    for path in paths:
        value = config
        for part in path.removeprefix("objective.params.").split("."):
            value = value.get(part) if isinstance(value, dict) else None
        values[path] = plain(value)
    return values


def objective_row(result, search):
    """A trial in results.csv: status (stopped: ended by the scheduler or a stop rule before objective.max_steps;
    with max_steps None every trial that did not fail is completed: steps says how far it got), steps (reports)
    made, sampled values, best and last metrics (a multi-objective search: whether it is on the front, last ones)."""
    metrics, steps = result.metrics or {}, search["max_steps"]
    ran = metrics.get("training_iteration", 0)
    finished = steps is None or ran >= steps  # Tune marks a trial its scheduler stopped done as well
    status = "error" if result.error else "completed" if finished else "stopped"
    row = {"trial_id": trial_id(result), "status": status, "steps": ran}
    row.update(objective_params(result.config or {}, search["paths"]))
    if search.get("pareto"):
        row["pareto"] = None  # whether the trial is on the Pareto front: set once every trial is known
    else:
        metric, history = search["metric"], history_of(result)
        values = history[metric] if history is not None and metric in history else None
        best = (
            None
            if values is None or values.dropna().empty
            else plain(values.max() if search["mode"] == "max" else values.min())
        )
        row[f"best_{metric}"] = best
    row.update({f"last_{name}": plain(metrics.get(name)) for name in search["reported"]})
    return row


def objective_spec(summary, search, resolved_spec):
    """best.yaml: the spec with the best trial's params written in and a search of one trial over nothing, so
    `specc run best.yaml` runs the function once with them."""
    import yaml

    spec, metric, mode = yaml.safe_load(resolved_spec), search["metric"], search["mode"]
    name = spec["run"]["name"]
    for section in ("scheduler", "stop"):
        spec.pop(section, None)
    for path, value in summary["config"].items():
        *parents, last = path.removeprefix("objective.params.").split(".")
        node = spec["objective"]["params"]
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = value
    first = (metric[0], mode[0]) if search.get("pareto") else (metric, mode)  # one trial: one metric
    spec["tune"] = {"metric": first[0], "mode": first[1], "num_samples": 1, "space": {}}
    spec["name"] = spec["run"]["name"] = f"{name}-best"
    header = best_header(name, summary, search, "params")
    header += "# Its objective is imported from this file's directory: copy it next to the original spec.\n"
    return header + yaml.safe_dump(spec, sort_keys=False, default_flow_style=None)
