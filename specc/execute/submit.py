"""`specc submit` and `specc jobs`: the compiled script as a Ray Job on a cluster, through Ray's JobSubmissionClient.

What travels: the job's working directory (the spec's directory, or cluster.working_dir, less what travels.py
leaves behind; nothing of it when the job needs nothing from there) with the compiled script and the runtime it
imports (specc_runtime.py, this specc's: one of the directory's own of that name stays behind) at its top, so
that the script finds the spec's directory, data paths and custom factories where `specc compile` would put
them; and the local paths of cluster.runtime_env (py_modules, a pip requirements file, a conda environment
file), relative to the spec. Every one of them must lie inside the project (E023: `--root` widens it). Nothing
is copied: shipping.py walks each, and a temporary directory holds a link to every file the walk took (plus the
script and its runtime, and copies of the requirements and environment files Ray reads here), which is what Ray zips and
uploads: Ray then applies no pattern of the user's and opens nothing the walk did not take. `specc submit
--dry-run` stops after `prepare`: it lists every file that would travel, contacting nothing. Inside the job the
script adds only what the job's runtime_env leaves unset.

Token auth, as Ray's own clients do: RAY_AUTH_TOKEN or RAY_AUTH_TOKEN_PATH (or ~/.ray/auth_token) when the
cluster asks for one (Ray's JobSubmissionClient reads them).
"""

from __future__ import annotations

import os
import secrets
import shlex
import signal
import socket
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from urllib.parse import urlparse

from specc import runtime
from specc.compiler import travels
from specc.compiler.fragments import runtime_env_of
from specc.execute import shipping
from specc.read import files
from specc.read.project import Project
from specc.spec import Experiment
from specc.spec.cluster import paths_outside
from specc.spec.errors import Problem, SpecError, UsageError

TERMINAL = ("SUCCEEDED", "FAILED", "STOPPED")
CONNECT_TIMEOUT_S = 10


@dataclass(frozen=True)
class Submitted:
    submission_id: str
    address: str
    entrypoint: str
    storage_path: str
    package: shipping.Package


def dashboard_address(address: str | None) -> str:
    """The cluster's dashboard (Jobs API) address: --address, else RAY_API_SERVER_ADDRESS or an http(s) RAY_ADDRESS."""
    chosen = address or os.environ.get("RAY_API_SERVER_ADDRESS") or os.environ.get("RAY_ADDRESS")
    if not chosen or chosen in ("auto", "local"):
        raise UsageError("no cluster to submit to: pass --address http://HEAD:8265 (the head's dashboard address)")
    if "://" not in chosen:
        chosen = f"http://{chosen}"
    try:
        scheme = urlparse(chosen).scheme
    except ValueError as error:  # e.g. an unclosed IPv6 bracket
        raise UsageError(f"--address {chosen}: not an address ({error}); e.g. http://HEAD:8265") from None
    if scheme not in ("http", "https"):
        raise UsageError(f"--address {chosen}: a job goes to the head's dashboard, http://HEAD:8265, not a Ray address")
    return chosen


def client(address: str, timeout_s: float = CONNECT_TIMEOUT_S):
    """JobSubmissionClient for `address`; a dashboard that refuses is a problem at once, one whose host does not
    answer within `timeout_s` (cluster.init_timeout_s) after that."""
    url = urlparse(address)
    port = url.port or (443 if url.scheme == "https" else 80)
    try:
        socket.create_connection((url.hostname, port), timeout=timeout_s).close()
    except OSError as error:
        raise SpecError([Problem("E402", f"cannot reach the cluster's dashboard at {address}: {error}")]) from None
    from ray.exceptions import AuthenticationError
    from ray.job_submission import JobSubmissionClient

    try:
        return JobSubmissionClient(address)
    except AuthenticationError as error:
        first = str(error).split(". ")[0]
        hint = "set RAY_AUTH_TOKEN (or RAY_AUTH_TOKEN_PATH) to the cluster's token, as for Ray's own job CLI"
        raise SpecError(
            [Problem("E402", f"the cluster at {address} refused this client: {first}", hint=hint)]
        ) from None
    except (ConnectionError, RuntimeError) as error:  # not a Ray dashboard, or an old Ray
        raise SpecError([Problem("E402", f"the Ray Jobs API at {address} refused: {error}")]) from None


def submission_id(experiment: Experiment) -> str:
    """Readable and unique: specc-<name>-<UTC time>-<4 hex>."""
    return f"specc-{experiment.name}-{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}-{secrets.token_hex(2)}"


def script_name(experiment: Experiment, directory: str) -> str:
    """The compiled script's file name at the top of the working directory (never one the directory holds)."""
    stem = "specc_job_" + experiment.name.replace("-", "_")
    name, number = f"{stem}.py", 1
    while os.path.exists(os.path.join(directory, name)):
        number += 1
        name = f"{stem}_{number}.py"
    return name


def storage_for_job(experiment: Experiment, storage_path: str | None) -> str:
    """Where the job writes its run directory: a URI as it is, a local path made absolute here (as `specc run`
    would resolve it), since the job's own working directory is a temporary copy on the cluster."""
    chosen = storage_path or experiment.run.storage_path
    return chosen if "://" in chosen else os.path.abspath(chosen)


@dataclass(frozen=True)
class Shipment:
    """A job ready to go: the compiled script and its runtime, what travels with them, and how the job starts. No
    cluster is asked."""

    spec_file: str
    root: str  # the working directory (its files travel when `shipped`)
    shipped: bool
    script: str  # the compiled script's file name at the top of the job's working directory
    source: str
    excludes: list[str]  # the patterns the walk applied: the compiled script's, the storage path, the links
    entrypoint: str
    storage_path: str
    package: shipping.Package
    runtime_source: str = ""  # specc_runtime.py, beside the script

    def files(self) -> dict[str, str]:
        """What specc writes at the top of the job's working directory: the script and the runtime it imports."""
        return {self.script: self.source, runtime.FILE: self.runtime_source}


def prepare(
    experiment: Experiment,
    *,
    python: str = "python",
    storage_path: str | None = None,
    smoke: bool = False,
    resume: bool = False,
    force: bool = False,
    templates=None,
) -> Shipment:
    """Compiles the script and walks what would travel with it (refusing what cannot, E403); contacts nothing."""
    from specc.compiler.script import compile_script

    raw = getattr(experiment, "_raw", None)
    spec_file = raw.file if raw else f"{experiment.name}.yaml"
    project = raw.project if raw else Project.of(spec_file)
    refuse_outside(experiment, spec_file, project, raw.source if raw else None)
    root = travels.working_dir(experiment, spec_file)
    shipped = travels.needs_working_dir(experiment)  # else the job's working directory is the script alone
    storage = storage_for_job(experiment, storage_path)
    excludes = travels.excludes(experiment, spec_file) + travels.storage_exclude(storage, root)
    script = script_name(experiment, root)
    source = compile_script(experiment, os.path.join(root, script), templates)
    if shipped:  # the directory's own specc_runtime.py (beside a script compiled there) stays: this specc's goes
        package = shipping.measure(root, [*excludes, shipping.RUNTIME], spec_file)
        excludes += package.links
    else:
        package = shipping.Package(f"{script} and {runtime.FILE} alone", 0, 0, [])
    spec_dir = travels.spec_dir(spec_file)
    parts = shipping.runtime_env_parts(experiment.cluster, spec_dir, str(project.root), excludes, spec_file)
    package = replace(package, parts=parts)
    shipping.refuse_oversized(package, spec_file)
    helper = runtime.source()
    package = package.plus(script, len(source.encode("utf-8"))).plus(runtime.FILE, len(helper.encode("utf-8")))
    flags = ["--storage-path", storage, *(["--smoke"] if smoke else []), *(["--resume"] if resume else [])]
    flags += ["--force"] if force else []
    entrypoint = shlex.join([python, script, *flags])
    return Shipment(spec_file, root, shipped, script, source, excludes, entrypoint, storage, package, helper)


def submit(
    experiment: Experiment,
    *,
    address: str | None,
    python: str = "python",
    storage_path: str | None = None,
    smoke: bool = False,
    resume: bool = False,
    force: bool = False,
    templates=None,
    job_id: str | None = None,
) -> Submitted:
    from specc.compiler.resolve import spec_hash

    url = dashboard_address(address)
    jobs = client(url, experiment.cluster.init_timeout_s)
    job = prepare(
        experiment, python=python, storage_path=storage_path, smoke=smoke, resume=resume, force=force,
        templates=templates,
    )  # fmt: skip
    identifier = job_id or submission_id(experiment)
    metadata = {
        "specc.spec": os.path.abspath(job.spec_file),
        "specc.name": experiment.name,
        "specc.spec_sha256": spec_hash(experiment),
    }
    with tempfile.TemporaryDirectory(prefix="specc-job-") as staged:
        runtime_env = staged_runtime_env(job, runtime_env_of(experiment), staged)
        try:
            jobs.submit_job(
                entrypoint=job.entrypoint, submission_id=identifier, runtime_env=runtime_env, metadata=metadata
            )
        except (RuntimeError, ValueError) as error:
            raise SpecError(
                [Problem("E404", f"the cluster at {url} refused the job: {error}", job.spec_file)]
            ) from None
    return Submitted(identifier, url, job.entrypoint, job.storage_path, job.package)


def refuse_outside(experiment: Experiment, spec_file: str, project: Project, source) -> None:
    """E023, located where the spec says it, for a working directory or a runtime_env path outside the project:
    what it names would travel to every node of the cluster."""
    from specc.check.fields import Locator

    spec_dir = travels.spec_dir(spec_file)
    found = list(paths_outside(experiment.cluster, spec_dir, project.holds, project.shown()))
    if not found:
        return
    if source is None:
        raise SpecError([Problem(code, message, spec_file, path=".".join(map(str, where)), hint=hint)
                         for code, message, where, hint in found])  # fmt: skip
    at = Locator(source)
    raise SpecError([at(code, message, where, hint) for code, message, where, hint in found])


def staged_runtime_env(job: Shipment, runtime_env: dict, staged: str) -> dict:
    """The job's runtime_env, its local paths pointing into `staged`: the working directory (links to what the
    walk took, the script and its runtime), each py_modules path (links again, under its own name, as Ray packs it), and
    copies of the requirements and conda files (read through the read gate: Ray reads them here and sends them)."""
    working_dir = os.path.join(staged, "job")
    shipping.stage(job.package, working_dir)
    for name, text in job.files().items():
        files.write_file(os.path.join(working_dir, name), text, within=staged)
    runtime_env = {**runtime_env, "working_dir": working_dir}
    modules = list(runtime_env.get("py_modules", ()))
    for part in job.package.parts:
        here = os.path.join(staged, *map(str, part.where[2:]))
        if part.where[2] == "py_modules":  # a directory ships under its own name, as Ray packs it
            target = here if part.one_file else os.path.join(here, os.path.basename(part.inside))
            shipping.stage(part, target)
            modules[part.where[3]] = os.path.join(target, part.origins[0][0]) if part.one_file else target
        else:
            copy = os.path.join(here, os.path.basename(part.root))
            text = files.read_file(part.origins[0][1], shipping.MAX_SENT_BYTES, root=part.inside)
            files.write_file(copy, text, within=staged)
            runtime_env[part.where[2]] = copy
    if modules:
        runtime_env["py_modules"] = modules
    return runtime_env


# -- following a job -------------------------------------------------------------------------------------------


def follow(jobs, address: str, job_id: str, out=None) -> str:
    """Prints the job's logs as they come until it ends; returns its final status. Ctrl-C detaches (the job runs on)."""
    import asyncio

    out = out or sys.stdout

    async def tail() -> None:
        async for chunk in jobs.tail_job_logs(job_id):
            out.write(chunk)
            out.flush()

    async def until_interrupted() -> bool:
        """Tails the logs until the job ends (False) or Ctrl-C (True). Ctrl-C is caught here, not left to
        asyncio.run's cancellation of the tail, which did not always surface as KeyboardInterrupt."""
        loop, interrupted = asyncio.get_running_loop(), asyncio.Event()
        previous = signal.signal(signal.SIGINT, lambda *_: loop.call_soon_threadsafe(interrupted.set))
        try:
            logs, interrupt = asyncio.ensure_future(tail()), asyncio.ensure_future(interrupted.wait())
            await asyncio.wait({logs, interrupt}, return_when=asyncio.FIRST_COMPLETED)
            if interrupted.is_set():
                return True
            interrupt.cancel()
            logs.result()  # the job's log stream ended: its own error, if it failed
            return False
        finally:
            signal.signal(signal.SIGINT, previous)

    loop = asyncio.new_event_loop()
    try:
        detached = loop.run_until_complete(until_interrupted())
    except KeyboardInterrupt:  # before the handler was in place
        detached = True
    finally:
        pending = asyncio.all_tasks(loop)
        for task in pending:
            task.cancel()
        if pending:  # the log stream's connection, closed briefly; a detach never waits on it for long
            loop.run_until_complete(asyncio.wait(pending, timeout=2))
        loop.close()
    if detached:
        raise Detached(job_id, address)
    return wait_for_end(jobs, job_id)


def wait_for_end(jobs, job_id: str, timeout_s: float = 60) -> str:
    """The job's status once it is terminal (the log stream ends a moment before the status says so)."""
    deadline = time.monotonic() + timeout_s
    while True:
        status = str(jobs.get_job_status(job_id).value)
        if status in TERMINAL or time.monotonic() > deadline:
            return status
        time.sleep(0.5)


class Detached(Exception):
    def __init__(self, job_id: str, address: str):
        super().__init__(job_id)
        self.job_id, self.address = job_id, address

    def advice(self) -> str:
        return (
            f"detached: job {self.job_id} keeps running on the cluster\n"
            f"  follow it:  specc jobs logs {self.job_id} --address {self.address} --follow\n"
            f"  stop it:    specc jobs stop {self.job_id} --address {self.address}\n"
        )


def outcome(jobs, job_id: str, status: str) -> Problem | None:
    """None when the job succeeded, else a problem saying how it ended."""
    if status == "SUCCEEDED":
        return None
    info = jobs.get_job_info(job_id)
    message = (info.message or "").strip()
    return Problem("E404", f"job {job_id} {status.lower()}" + (f": {message}" if message else ""))


def status_text(jobs, job_id: str) -> str:
    info = job_info(jobs, job_id)
    lines = [
        f"job:        {job_id}",
        f"status:     {info.status.value}",
        f"entrypoint: {info.entrypoint}",
    ]
    lines += [f"{key + ':':<11} {value}" for key, value in sorted((info.metadata or {}).items())]
    if info.message:
        lines.append(f"message:    {info.message.strip()}")
    return "\n".join(lines) + "\n"


def job_info(jobs, job_id: str):
    try:
        return jobs.get_job_info(job_id)
    except RuntimeError as error:  # the Jobs API answers 404 for an unknown id
        raise SpecError([Problem("E404", f"no job {job_id} on the cluster: {error}")]) from None


def list_text(jobs) -> str:
    """specc's jobs on the cluster, newest first."""
    rows = [job for job in jobs.list_jobs() if (job.metadata or {}).get("specc.name")]
    rows.sort(key=lambda job: job.start_time or 0, reverse=True)
    if not rows:
        return "no specc jobs on this cluster\n"
    width = max(len(job.submission_id or "") for job in rows)
    return "".join(
        f"{job.submission_id:<{width}}  {job.status.value:<9}  {job.metadata['specc.spec']}\n" for job in rows
    )


def stop(jobs, job_id: str) -> str:
    job_info(jobs, job_id)
    return "stop requested" if jobs.stop_job(job_id) else "already ended"
