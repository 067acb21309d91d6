"""What a job would upload to a Ray cluster, measured before anything is sent, and refused when Ray would not take it.

What travels is decided at compile time (compiler/travels.py); this walks the directory with Ray's own rules.
Nothing here imports Ray until something is measured.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace

from specc.spec.errors import Problem, SpecError


def checked(root: str, patterns: list[str], spec_file: str | None, shown_as: str | None = None) -> Package:
    """What Ray would upload from `root`, measured; one larger than Ray takes is refused (E403) before anything
    is sent. `shown_as`: the directory the user knows, when `root` is a staging copy."""
    package = measure(root, patterns)
    package = replace(package, root=shown_as) if shown_as else package
    problem = size_problem(package, spec_file)
    if problem:
        raise SpecError([problem])
    return package


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
