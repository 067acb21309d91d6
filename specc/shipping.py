"""What travels with a job to a Ray cluster: the working directory, what stays behind, and how much that is.

The working directory is the spec's directory unless `cluster.working_dir` names another (relative to the
spec), shipped when the job needs it (needs_working_dir); custom factory modules and data files below it reach
every node, where Ray puts it on the workers'
PYTHONPATH and makes it their current directory. Left behind: `.git`, virtualenvs and caches always; by
default also the run storage path and torchvision data roots (image sets belong on every node's disk or on
shared storage), or instead of those the spec's `cluster.excludes`. Patterns are Ray's (gitignore syntax,
relative to the working directory; `.gitignore` and `.rayignore` files are honoured as Ray honours them).

Nothing here imports Ray but `measure`, which walks the directory with Ray's own rules.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace

from specc.errors import Problem, SpecError
from specc.spec import Experiment

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


def spec_dir(spec_file: str) -> str:
    return os.path.dirname(os.path.abspath(spec_file))


def needs_working_dir(experiment: Experiment) -> bool:
    """Whether the job reads anything from the spec's side: a custom factory module, a data file named by a
    relative path, or a working directory the spec names itself. Otherwise nothing of it is shipped."""
    if experiment.cluster.working_dir is not None or "custom" in (experiment.model.type, experiment.dataset.type):
        return True
    path = getattr(experiment.dataset, "path", None)
    return bool(path) and "://" not in path and not os.path.isabs(path)


def working_dir(experiment: Experiment, spec_file: str) -> str:
    """The absolute directory shipped with the job."""
    chosen = experiment.cluster.working_dir
    return os.path.normpath(os.path.join(spec_dir(spec_file), chosen)) if chosen else spec_dir(spec_file)


def excludes(experiment: Experiment, spec_file: str) -> list[str]:
    """Ray `excludes` patterns for the working directory (the run storage path is added where it is known:
    `storage_exclude`)."""
    patterns = list(ALWAYS_EXCLUDED)
    if experiment.cluster.excludes is not None:
        return patterns + list(experiment.cluster.excludes)
    root = getattr(experiment.dataset, "root", None)
    if experiment.dataset.type == "torchvision" and root and "://" not in root:
        inside = anchored(os.path.join(spec_dir(spec_file), root), working_dir(experiment, spec_file))
        patterns += [inside] if inside else []
    return patterns


def anchored(path: str, root: str) -> str | None:
    """`path` as a pattern anchored at `root` ("/runs"), or None when it is not below `root`."""
    relative = os.path.relpath(os.path.abspath(path), root)
    if relative == "." or relative.startswith(".."):
        return None
    return "/" + relative.replace(os.sep, "/")


def storage_exclude(storage: str, root: str) -> list[str]:
    """The run storage path as an exclude pattern when it lies below the working directory `root` (runs do not
    travel with the next job), else nothing; a URI never does."""
    below = anchored(storage, root) if "://" not in storage else None
    return [below] if below else []


def checked(root: str, patterns: list[str], spec_file: str | None, shown_as: str | None = None) -> Package:
    """What Ray would upload from `root`, measured; one larger than Ray takes is refused (E403) before anything
    is sent. `shown_as`: the directory the user knows, when `root` is a staging copy."""
    package = measure(root, patterns)
    package = replace(package, root=shown_as) if shown_as else package
    problem = size_problem(package, spec_file)
    if problem:
        raise SpecError([problem])
    return package


def spec_dir_in_working_dir(experiment: Experiment, spec_file: str) -> str:
    """The spec's directory relative to the working directory: where custom factories are found on a node."""
    return os.path.relpath(spec_dir(spec_file), working_dir(experiment, spec_file))


@dataclass(frozen=True)
class Package:
    """What Ray would upload: the files and their total size (before compression)."""

    root: str
    files: int
    size: int
    largest: list[tuple[str, int]]  # (relative path, bytes): the biggest files and directories

    def describe(self) -> str:
        return f"{self.files} files, {mib(self.size)}"


def measure(root: str, patterns: list[str]) -> Package:
    """Walks `root` as Ray's packaging does (its excludes, .gitignore and .rayignore rules) and adds up sizes."""
    from pathlib import Path

    from ray._private import ray_constants
    from ray._private.runtime_env import packaging

    top: dict[str, int] = {}
    files = size = 0

    def count(path: Path) -> None:
        nonlocal files, size
        if path.is_file():
            nbytes = path.stat().st_size
            files, size = files + 1, size + nbytes
            relative = path.relative_to(root).parts
            top[relative[0]] = top.get(relative[0], 0) + nbytes

    include_gitignore = os.environ.get(ray_constants.RAY_RUNTIME_ENV_IGNORE_GITIGNORE, "0") != "1"
    base = Path(root).absolute()
    packaging._dir_travel(base, [packaging._get_excludes(base, patterns)], count, include_gitignore=include_gitignore)
    largest = sorted(top.items(), key=lambda item: (-item[1], item[0]))[:5]
    return Package(root, files, size, largest)


def size_problem(package: Package, spec_file: str | None) -> Problem | None:
    """A working directory larger than Ray uploads is refused before anything is sent."""
    from ray._private.runtime_env.packaging import GCS_STORAGE_MAX_SIZE

    if package.size < GCS_STORAGE_MAX_SIZE:
        return None
    biggest = ", ".join(f"{name} ({mib(nbytes)})" for name, nbytes in package.largest)
    return Problem(
        "E403",
        f"the working directory {package.root} holds {package.describe()}, more than Ray uploads with a job "
        f"({mib(GCS_STORAGE_MAX_SIZE)}); the largest: {biggest}",
        spec_file,
        path="cluster.excludes",
        hint="leave large files out with cluster.excludes (or a .rayignore) and read data from shared storage "
        "(a URI or a path every node has)",
    )


def mib(nbytes: int) -> str:
    return f"{nbytes / 1024 / 1024:.1f} MiB"
