"""What travels with a job to a Ray cluster, decided from the spec: the working directory and what stays behind.

The working directory is the spec's directory unless `cluster.working_dir` names another (relative to the
spec), shipped when the job needs it (needs_working_dir); custom factory modules and data files below it reach
every node, where Ray puts it on the workers' PYTHONPATH and makes it their current directory. Left behind:
`.git`, virtualenvs and caches always; files that look like secrets (SECRETS: keys, tokens, credentials), since
a job's working directory lands on every node of a cluster others may share, unless the spec names them in
`cluster.include`; by default also the run storage path and torchvision and keras_dataset data (image sets
belong on every node's disk or on shared storage), or instead of those the spec's `cluster.excludes`. Patterns are Ray's
(gitignore syntax, relative to the working directory; `.gitignore` and `.rayignore` files are honoured as Ray
honours them). The compiled script carries these decisions; execute/shipping.py walks the directory with them,
leaves behind the symbolic links Ray must not follow (out of the directory, or in a loop) and measures the rest.
"""

from __future__ import annotations

import os

from specc import runtime
from specc.spec import Experiment


def __getattr__(name: str):
    """ALWAYS_EXCLUDED and SECRETS: the runtime's, which the scripts leave behind (its LEFT_BEHIND), read lazily."""
    if name in ("ALWAYS_EXCLUDED", "SECRETS"):
        return runtime.constant(name)
    raise AttributeError(name)


def spec_dir(spec_file: str) -> str:
    return os.path.dirname(os.path.abspath(spec_file))


def needs_working_dir(experiment: Experiment) -> bool:
    """Whether the job reads anything from the spec's side: a custom factory module, a data file named by a
    relative path, or a working directory the spec names itself. Otherwise nothing of it is shipped."""
    if experiment.cluster.working_dir is not None or experiment.objective is not None:
        return True  # the objective's module is imported on every node
    if "custom" in (experiment.model.type, experiment.dataset.type):
        return True
    path = getattr(experiment.dataset, "path", None)
    return bool(path) and "://" not in path and not os.path.isabs(path) and not path.startswith("~")


def working_dir(experiment: Experiment, spec_file: str) -> str:
    """The absolute directory shipped with the job."""
    chosen = experiment.cluster.working_dir
    return os.path.normpath(os.path.join(spec_dir(spec_file), chosen)) if chosen else spec_dir(spec_file)


def excludes(experiment: Experiment, spec_file: str) -> list[str]:
    """Ray `excludes` patterns for the working directory (the run storage path is added where it is known:
    `storage_exclude`)."""
    patterns = list(runtime.constant("ALWAYS_EXCLUDED")) + secrets(experiment.cluster.include or [])
    if experiment.cluster.excludes is not None:
        return patterns + list(experiment.cluster.excludes)
    root = {"torchvision": "root", "keras_dataset": "path"}.get(getattr(experiment.dataset, "type", None))
    root = getattr(experiment.dataset, root) if root else None
    if root and "://" not in root and not root.startswith("~"):
        inside = anchored(os.path.join(spec_dir(spec_file), root), working_dir(experiment, spec_file))
        patterns += [inside] if inside else []
    return patterns


def secrets(include: list[str]) -> list[str]:
    """SECRETS, then what the spec ships deliberately (cluster.include) as negated patterns: Ray takes the last
    pattern that matches a path, so a name in cluster.include wins over SECRETS (and a directory named there
    ships whole), while cluster.excludes, after it, still wins over both."""
    shipped = [pattern for name in include for pattern in (f"!{name}", f"!{name.rstrip('/')}/**")]
    return [*runtime.constant("SECRETS"), *shipped]


def anchored(path: str, root: str) -> str | None:
    """`path` as a pattern anchored at `root` ("/runs"), or None when it is not below `root`."""
    relative = os.path.relpath(os.path.abspath(path), root)
    if relative == "." or relative.startswith(".."):
        return None
    return "/" + relative.replace(os.sep, "/")


def literal(relative: str) -> str:
    """A relative path as a gitignore pattern that matches that path alone: wildcards, brackets and backslashes
    escaped, and trailing spaces (which gitignore drops)."""
    escaped = "".join("\\" + char if char in "\\*?[]" else char for char in relative)
    stripped = escaped.rstrip(" ")
    return stripped + "\\ " * (len(escaped) - len(stripped))


def storage_exclude(storage: str, root: str) -> list[str]:
    """The run storage path as an exclude pattern when it lies below the working directory `root` (runs do not
    travel with the next job), else nothing; a URI never does."""
    below = anchored(storage, root) if "://" not in storage else None
    return [below] if below else []


def spec_dir_in_working_dir(experiment: Experiment, spec_file: str) -> str:
    """The spec's directory relative to the working directory: where custom factories are found on a node."""
    return os.path.relpath(spec_dir(spec_file), working_dir(experiment, spec_file))
