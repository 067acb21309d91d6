"""What a job would upload to a Ray cluster, walked before anything is sent, and refused when Ray would not take it.

What travels is decided at compile time (compiler/travels.py: the working directory and its exclude patterns);
this walks the directory as Ray's packaging walks it (its excludes, .gitignore and .rayignore rules) and adds
what only the file system can tell:

- Ray follows symbolic links as it zips. A link that leads out of the working directory (a link to /etc ships
  /etc/shadow) or back to a directory above it (a loop, which Ray walks until the path is too long, branching at
  every level) is left behind: its path becomes an exclude pattern (`Package.links`) that the caller hands Ray
  with the others. Links that stay inside, without a loop, are followed as Ray follows them.
- The walk is bounded in entries and in time (MAX_ENTRIES, MAX_SECONDS): a directory Ray would take minutes to
  zip, or links that multiply paths, is a problem (E403) at once instead of a hang.
- A working directory that is the file system's root or the home directory is refused (E403).

Nothing here imports Ray until something is walked.
"""

from __future__ import annotations

import os
import stat
import time
from dataclasses import dataclass, replace

from specc.compiler import travels
from specc.spec.errors import Problem, SpecError

MAX_ENTRIES = 100_000  # files and directories walked (after excludes): far more than a project holds
MAX_SECONDS = 20.0
MAX_DEPTH = 200  # directories within directories (the walk recurses, as Ray's does)
SHOWN = 8  # names a warning lists before "and N more"


def checked(root: str, patterns: list[str], spec_file: str | None, shown_as: str | None = None) -> Package:
    """What Ray would upload from `root`, walked; a working directory Ray must not or cannot take is refused
    (E403) before anything is sent. `shown_as`: the directory the user knows, when `root` is a staging copy."""
    package = measure(root, patterns, spec_file)
    package = replace(package, root=shown_as) if shown_as else package
    problem = size_problem(package, spec_file)
    if problem:
        raise SpecError([problem])
    return package


@dataclass(frozen=True)
class LeftBehind:
    """A file or directory of the working directory that does not travel, and why. `surprising`: the user did
    not ask for it (a secret, a link), so a run says so."""

    path: str  # relative to the working directory, with '/'
    why: str
    surprising: bool = False


@dataclass(frozen=True)
class Package:
    """What Ray would upload: the files and their total size (before compression), and what stays behind."""

    root: str
    files: int
    size: int
    largest: list[tuple[str, int]]  # (relative path, bytes): the biggest files and directories
    shipped: tuple[tuple[str, int], ...] = ()  # every file: (relative path, bytes), sorted
    left_behind: tuple[LeftBehind, ...] = ()  # sorted by path
    links: tuple[str, ...] = ()  # exclude patterns for the links Ray must not follow: hand them to Ray

    def describe(self) -> str:
        return f"{self.files} files, {mib(self.size)}"

    def plus(self, name: str, nbytes: int) -> Package:
        """The package with one more file at its top (the compiled script `specc submit` adds)."""
        top = sorted([*self.largest, (name, nbytes)], key=lambda item: (-item[1], item[0]))[:5]
        shipped = tuple(sorted([*self.shipped, (name, nbytes)]))
        return replace(self, files=self.files + 1, size=self.size + nbytes, largest=top, shipped=shipped)


def measure(root: str, patterns: list[str], spec_file: str | None = None) -> Package:
    """Walks `root` as Ray's packaging walks it (packaging._dir_travel: Ray's default excludes and `patterns`, then
    each directory's .gitignore and .rayignore, its own included, matched by pathspec against paths as Ray reaches
    them), leaving behind the links Ray must not follow, and adds up sizes."""
    from ray._private import ray_constants

    base = os.path.abspath(root)
    wide = _too_wide(base)
    if wide:
        message = f"the working directory {root} is {wide}: every file below it would travel with the job"
        raise SpecError([_problem(message, spec_file, "the project's own directory as cluster.working_dir")])
    real_root = os.path.realpath(base)
    everything = ray_constants.get_runtime_env_default_excludes() + list(patterns)  # as Ray adds its defaults
    excluded = _gitignore_spec(everything).match_file
    one_by_one = [(pattern, _gitignore_spec([pattern])) for pattern in everything]
    include_gitignore = os.environ.get(ray_constants.RAY_RUNTIME_ENV_IGNORE_GITIGNORE, "0") != "1"
    ignore_files = (".gitignore", ".rayignore") if include_gitignore else (".rayignore",)
    deadline, entries = time.monotonic() + MAX_SECONDS, 0
    shipped: list[tuple[str, int]] = []
    left: list[LeftBehind] = []
    links: list[str] = []

    def why_excluded(relative: str) -> LeftBehind:
        """The last pattern that matches decides, as in Ray's (gitignore's) rules."""
        matching = (p for p, spec in reversed(one_by_one) if not p.startswith("!") and spec.match_file(relative))
        pattern = next(matching, "the exclude patterns")
        if pattern in travels.SECRETS:
            return LeftBehind(relative, "looks like a secret (name it in cluster.include to ship it)", surprising=True)
        return LeftBehind(relative, f"excluded ({pattern})")

    def ignored(relative: str, ignores: list) -> str | None:
        """The ignore file (of this directory or one above) that leaves `relative` behind, if any."""
        for name, directory, match in ignores:
            below = relative[len(directory) + 1 :] if directory else relative
            if match(below if relative != directory else "."):
                return f"{name} in {directory + '/' if directory else 'the working directory'}"
        return None

    def walk(relative: str, ignores: list, above: tuple[str, ...]) -> None:
        """`relative`: the path as Ray reaches it below the working directory ('' for the directory itself);
        `above`: the real directories the walk is in, the parent's last (each resolved once)."""
        nonlocal entries
        real = os.path.join(above[-1], os.path.basename(relative)) if above else real_root
        if above and excluded(relative):
            left.append(why_excluded(relative))
            return
        if above and (by := ignored(relative, ignores)):
            left.append(LeftBehind(relative, f"ignored ({by})"))
            return
        if above and os.path.islink(real):
            real = os.path.realpath(real)
            if not _follow(real, relative, real_root, above, left):
                links.append("/" + travels.literal(relative))
                return
        entries += 1
        if entries > MAX_ENTRIES or time.monotonic() > deadline or len(above) > MAX_DEPTH:
            raise SpecError([_unbounded(root, entries, len(above), spec_file)])
        try:
            info = os.stat(real)
        except FileNotFoundError:  # a link to nothing: Ray ships nothing for it
            return
        if stat.S_ISREG(info.st_mode):
            if not os.access(real, os.R_OK):
                raise SpecError([_problem(f"{relative} cannot be read, so it cannot travel with the job", spec_file)])
            shipped.append((relative, info.st_size))
        elif stat.S_ISDIR(info.st_mode):
            own = [(name, relative, _ignore_file(os.path.join(real, name))) for name in ignore_files]
            own = [(name, directory, match) for name, directory, match in own if match]
            if own and (by := ignored(relative, own)):  # Ray matches a directory against its own ignore files too
                left.append(LeftBehind(relative or ".", f"ignored ({by})"))
                return
            for child in sorted(os.listdir(real)):
                walk(f"{relative}/{child}" if relative else child, ignores + own, (*above, real))

    try:
        walk("", [], ())
    except OSError as error:  # an ignore file or a directory that cannot be read, a path too long
        message = f"{error.filename}: {error.strerror}, so the working directory cannot travel with the job"
        raise SpecError([_problem(message, spec_file)]) from None
    top: dict[str, int] = {}
    for relative, nbytes in shipped:
        first = relative.split("/")[0]
        top[first] = top.get(first, 0) + nbytes
    largest = sorted(top.items(), key=lambda item: (-item[1], item[0]))[:5]
    return Package(
        root,
        len(shipped),
        sum(nbytes for _, nbytes in shipped),
        largest,
        tuple(sorted(shipped)),
        tuple(sorted(left, key=lambda item: item.path)),
        tuple(sorted(links)),
    )


def _ignore_file(path: str):
    """The matcher of a .gitignore or .rayignore file (None when there is none), as packaging._get_ignore_file
    (which, like os.path.isfile, passes over a FIFO or device of that name)."""
    if not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8", errors="surrogateescape") as lines:
        return _gitignore_spec(lines.readlines()).match_file


def _gitignore_spec(lines):
    """pathspec's "gitwildmatch" patterns, the kind Ray matches excludes with (pathspec deprecates the name; the
    warning says nothing a user can act on)."""
    import warnings

    from pathspec import PathSpec

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return PathSpec.from_lines("gitwildmatch", lines)


def _follow(target: str, relative: str, real_root: str, above: tuple[str, ...], left: list[LeftBehind]) -> bool:
    """Whether Ray may follow the link at `relative`, which leads to `target`: it stays inside the working
    directory and leads to no directory the walk is already in (else, recorded in `left`)."""
    if not _inside(target, real_root):
        left.append(LeftBehind(relative, f"a link out of the working directory, to {target}", surprising=True))
        return False
    if os.path.isdir(target) and any(_inside(directory, target) for directory in above):
        left.append(LeftBehind(relative, "a link to a directory above it (a loop)", surprising=True))
        return False
    return True


def _inside(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip(os.sep) + os.sep)


def _shown(path, base) -> str:
    return path.relative_to(base).as_posix() + "/" if path != base else "the working directory"


def _too_wide(directory: str) -> str | None:
    from specc.check.rules import too_wide

    return too_wide(directory)


def _problem(message: str, spec_file: str | None, hint: str | None = None) -> Problem:
    return Problem("E403", message, spec_file, path="cluster.working_dir", hint=hint)


def _unbounded(root: str, entries: int, depth: int, spec_file: str | None) -> Problem:
    if entries > MAX_ENTRIES:
        what = f"more than {MAX_ENTRIES:,} files and directories"
    elif depth > MAX_DEPTH:
        what = f"directories nested more than {MAX_DEPTH} deep"
    else:
        what = f"more files than could be walked in {MAX_SECONDS:g} s ({entries:,} so far)"
    return Problem(
        "E403",
        f"the working directory {root} holds {what} to ship (links that multiply paths count each path)",
        spec_file,
        path="cluster.excludes",
        hint="leave data, outputs and other projects out with cluster.excludes (or a .rayignore), or point "
        "cluster.working_dir at the project alone",
    )


def left_behind_warning(package: Package, spec_file: str | None) -> Problem | None:
    """One line naming what the user may expect on the cluster but did not ask to leave behind: files that look
    like secrets, links out of the working directory or in a loop (None when there is none)."""
    surprising = [item for item in package.left_behind if item.surprising]
    if not surprising:
        return None
    named = "; ".join(f"{item.path} ({item.why})" for item in surprising[:SHOWN])
    more = f"; and {len(surprising) - SHOWN} more" if len(surprising) > SHOWN else ""
    return Problem("W303", f"not shipped with the job: {named}{more}", spec_file, path="cluster.include")


def listing(package: Package) -> str:
    """What `specc submit --dry-run` prints: every file that would ship with its size, the total, and what stays
    behind and why."""
    width = max((len(size(nbytes)) for _, nbytes in package.shipped), default=0)
    lines = [f"would ship from {package.root}:"]
    lines += [f"  {size(nbytes):>{width}}  {relative}" for relative, nbytes in package.shipped]
    lines.append(f"  {size(package.size):>{width}}  total, {package.files} files")
    if package.left_behind:
        lines.append("left behind:")
        lines += [f"  {item.path}: {item.why}" for item in package.left_behind]
    return "\n".join(lines) + "\n"


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


def size(nbytes: int) -> str:
    """Bytes as people read them: 812 B, 4.0 KiB, 3.2 MiB."""
    for unit in ("B", "KiB", "MiB"):
        if nbytes < 1024 or unit == "MiB":
            return f"{nbytes} {unit}" if unit == "B" else f"{nbytes:.1f} {unit}"
        nbytes /= 1024
    raise AssertionError
