"""What a job would upload to a Ray cluster, walked before anything is sent, and refused when Ray would not take it.

What travels is decided at compile time (compiler/travels.py: the working directory and its exclude patterns);
this walks the directory as Ray's packaging walks it (its excludes, .gitignore and .rayignore rules, matched in
linear time by execute/excludes.py) and adds what only the file system can tell:

- Ray follows symbolic links as it zips. A link that leads out of the working directory (a link to /etc ships
  /etc/shadow), back to a directory above it (a loop, which Ray walks until the path is too long, branching at
  every level), round to itself, or to nothing is left behind, as is a FIFO, a socket or a device (Ray would open
  it and wait for ever): its path becomes an exclude pattern (`Package.links`) that a caller handing Ray the
  directory itself passes on. Links that stay inside, without a loop, are followed as Ray follows them.
- Every file read goes through the read gate (specc/read/files.py) and every directory is listed by it; nothing
  that is not a regular file inside the working directory is opened.
- The walk is bounded in entries and in time (MAX_ENTRIES, MAX_SECONDS): a directory Ray would take minutes to
  zip, or links that multiply paths, is a problem (E403) at once instead of a hang.
- A working directory that is the file system's root or the home directory is refused (E403).
- The local paths of cluster.runtime_env (py_modules, a pip requirements file, a conda environment file) are
  measured the same way (`runtime_env_parts`): they travel too.

`specc submit` then stages exactly the files walked (links to them, `stage`) and hands Ray that, so Ray applies no
pattern of the user's and opens nothing the walk did not take. Nothing here imports Ray until something is walked.
"""

from __future__ import annotations

import os
import stat
import time
from dataclasses import dataclass, field, replace

from specc import runtime
from specc.compiler import travels
from specc.execute import excludes
from specc.read import files
from specc.read.files import read_text
from specc.spec.errors import Problem, SpecError

MAX_ENTRIES = 100_000  # files and directories walked (after excludes): far more than a project holds
MAX_SECONDS = 20.0
MAX_DEPTH = 200  # directories within directories (the walk recurses, as Ray's does)
MAX_IGNORE_BYTES = 64 * 1024  # a .gitignore or .rayignore: real ones hold a few KiB
MAX_SENT_BYTES = 1024 * 1024  # a requirements or conda environment file, which Ray reads and sends whole
SHOWN = 8  # names a warning lists before "and N more"
RUNTIME = "/" + runtime.FILE  # the working directory's own runtime, at its top: the job ships specc's instead


def checked(root: str, patterns: list[str], spec_file: str | None, shown_as: str | None = None) -> Package:
    """What Ray would upload from `root`, walked; a working directory Ray must not or cannot take is refused
    (E403) before anything is sent. `shown_as`: the directory the user knows, when `root` is a staging copy."""
    package = measure(root, patterns, spec_file)
    package = replace(package, root=shown_as) if shown_as else package
    refuse_oversized(package, spec_file)
    return package


def refuse_oversized(package: Package, spec_file: str | None) -> None:
    """E403 when the package, or one of its parts, is larger than Ray uploads."""
    problems = [problem for part in (package, *package.parts) if (problem := size_problem(part, spec_file))]
    if problems:
        raise SpecError(problems)


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
    links: tuple[str, ...] = ()  # exclude patterns for what Ray must not open (links, special files): hand them to Ray
    origins: tuple[tuple[str, str], ...] = ()  # every file walked: (relative path, the real file it is read from)
    inside: str = ""  # the real directory every origin lies in: staging takes nothing else
    where: tuple = ()  # the spec field a part of cluster.runtime_env comes from; () for the working directory
    parts: tuple[Package, ...] = field(default=(), compare=False)  # cluster.runtime_env's local paths
    one_file: bool = False  # a part that is one file (a .py or wheel module, a requirements or conda file)

    @property
    def label(self) -> str:
        return ".".join(str(key) for key in self.where)

    def describe(self) -> str:
        return f"{self.files} files, {mib(self.size)}"

    def plus(self, name: str, nbytes: int) -> Package:
        """The package with one more file at its top (the compiled script or its runtime, which `specc submit` adds)."""
        top = sorted([*self.largest, (name, nbytes)], key=lambda item: (-item[1], item[0]))[:5]
        shipped = tuple(sorted([*self.shipped, (name, nbytes)]))
        return replace(self, files=self.files + 1, size=self.size + nbytes, largest=top, shipped=shipped)


def measure(root: str, patterns: list[str], spec_file: str | None = None) -> Package:
    """Walks `root` as Ray's packaging walks it (packaging._dir_travel: Ray's default excludes and `patterns`, then
    each directory's .gitignore and .rayignore, its own included, matched against paths as Ray reaches them),
    leaving behind what Ray must not follow or open, and adds up sizes."""
    from ray._private import ray_constants

    base = os.path.abspath(root)
    wide = _too_wide(base)
    if wide:
        message = f"the working directory {root} is {wide}: every file below it would travel with the job"
        raise SpecError([_problem(message, spec_file, "the project's own directory as cluster.working_dir")])
    everything = ray_constants.get_runtime_env_default_excludes() + list(patterns)  # as Ray adds its defaults
    include_gitignore = os.environ.get(ray_constants.RAY_RUNTIME_ENV_IGNORE_GITIGNORE, "0") != "1"
    walk = _Walk(
        root=root,
        real_root=os.path.realpath(base),
        patterns=_compiled(everything, spec_file, "cluster.excludes"),
        ignore_files=(".gitignore", ".rayignore") if include_gitignore else (".rayignore",),
        spec_file=spec_file,
    )
    try:
        walk.visit("", walk.real_root, [], ())
    except OSError as error:  # a directory that cannot be read, a path too long
        message = f"{error.filename}: {error.strerror}, so the working directory cannot travel with the job"
        raise SpecError([_problem(message, spec_file)]) from None
    return walk.package()


def _compiled(lines: list[str], spec_file: str | None, where: str, source: str = "") -> list[excludes.Pattern]:
    """The patterns of `lines` (from the ignore file `source`, else the spec), or a problem Ray would raise later."""
    try:
        return excludes.compiled(lines)
    except excludes.PatternError as error:
        message = f"{source + ': ' if source else ''}{error}: Ray cannot read it, so nothing can travel with the job"
        raise SpecError([Problem("E403", message, spec_file, path=where)]) from None


@dataclass
class _Walk:
    """One walk of a working directory: what ships (with the real file each path is read from), what stays
    behind and why, and the exclude patterns for what Ray must not open."""

    root: str  # as the user named it
    real_root: str
    patterns: list[excludes.Pattern]
    ignore_files: tuple[str, ...]
    spec_file: str | None
    shipped: list[tuple[str, int]] = field(default_factory=list)
    origins: list[tuple[str, str]] = field(default_factory=list)
    left: list[LeftBehind] = field(default_factory=list)
    links: list[str] = field(default_factory=list)
    entries: int = 0
    deadline: float = field(default_factory=lambda: time.monotonic() + MAX_SECONDS)

    def visit(self, relative: str, path: str, ignores: list, above: tuple[str, ...]) -> None:
        """`relative`: the path as Ray reaches it below the working directory ('' for the directory itself);
        `path`: where that is, below the real directory it was listed in; `above`: the real directories the walk
        is in, the parent's last."""
        if above and self.left_out(relative, ignores):
            return
        real = self.followed(relative, path, above) if above else path
        if real is None:
            return
        self.count(len(above))
        mode = os.stat(real).st_mode
        if stat.S_ISREG(mode):
            self.file(relative, real)
        elif stat.S_ISDIR(mode):
            self.directory(relative, real, ignores, above)
        else:
            self.leave(relative, f"{files.kind_of(mode)}: only files and directories travel", link=True)

    def left_out(self, relative: str, ignores: list) -> bool:
        """Whether the exclude patterns or an ignore file leave `relative` behind (recorded, with why)."""
        pattern = excludes.excluded(self.patterns, relative)
        if pattern is not None and pattern.text in travels.SECRETS:
            self.leave(relative, "looks like a secret (name it in cluster.include to ship it)")
        elif pattern is not None and pattern.text == RUNTIME:
            self.left.append(LeftBehind(relative, f"replaced by this specc's {runtime.FILE}, which the script imports"))
        elif pattern is not None:
            self.left.append(LeftBehind(relative, f"excluded ({pattern.text})"))
        elif by := _ignored(relative, ignores):
            self.left.append(LeftBehind(relative, f"ignored ({by})"))
        else:
            return False
        return True

    def followed(self, relative: str, path: str, above: tuple[str, ...]) -> str | None:
        """The real path Ray reaches at `relative`; None when it must not follow a link there (recorded)."""
        if not os.path.islink(path):
            return path
        try:
            target = files.real_path(path)
        except FileNotFoundError:
            return self.leave(relative, "a link to nothing", link=True)
        except OSError:
            return self.leave(relative, "a link in a loop (it leads round to itself)", link=True)
        if not files.is_inside(target, self.real_root):
            return self.leave(relative, f"a link out of the working directory, to {target}", link=True)
        if os.path.isdir(target) and any(files.is_inside(directory, target) for directory in above):
            return self.leave(relative, "a link to a directory above it (a loop)", link=True)
        return target

    def leave(self, relative: str, why: str, link: bool = False) -> None:
        """`relative` stays behind unasked (a warning names it); `link`: Ray must not open it either."""
        self.left.append(LeftBehind(relative, why, surprising=True))
        if link:
            self.links.append("/" + travels.literal(relative))

    def count(self, depth: int) -> None:
        self.entries += 1
        if self.entries > MAX_ENTRIES or time.monotonic() > self.deadline or depth > MAX_DEPTH:
            raise SpecError([_unbounded(self.root, self.entries, depth, self.spec_file)])

    def file(self, relative: str, real: str) -> None:
        if os.path.basename(relative) in self.ignore_files:  # its patterns apply here; Ray need not read it again
            self.left.append(LeftBehind(relative, "read here for what stays behind; not shipped"))
        elif not os.access(real, os.R_OK):
            message = f"{relative} cannot be read, so it cannot travel with the job"
            raise SpecError([_problem(message, self.spec_file)])
        else:
            self.shipped.append((relative, os.stat(real).st_size))
            self.origins.append((relative, real))

    def directory(self, relative: str, real: str, ignores: list, above: tuple[str, ...]) -> None:
        own = [(name, relative, found) for name in self.ignore_files if (found := self.ignore_file(real, name))]
        if own and (by := _ignored(relative, own)):  # Ray matches a directory against its own ignore files too
            self.left.append(LeftBehind(relative or ".", f"ignored ({by})"))
            return
        if not os.access(real, os.R_OK | os.X_OK):
            message = f"{relative or root_name(self.root)} cannot be read, so the working directory cannot travel"
            raise SpecError([_problem(message, self.spec_file)])
        for child in files.list_directory(real, root=self.real_root):
            path = os.path.join(real, child)
            self.visit(f"{relative}/{child}" if relative else child, path, ignores + own, (*above, real))

    def ignore_file(self, directory: str, name: str) -> list[excludes.Pattern] | None:
        """The patterns of the ignore file `name` in `directory` (None when there is none, or it is not a regular
        file: Ray's is_file() passes over a FIFO or a directory of that name). One that cannot be read, is larger
        than MAX_IGNORE_BYTES or holds a pattern Ray cannot read is a problem: what it leaves behind is unknown."""
        path = os.path.join(directory, name)
        try:
            if not stat.S_ISREG(os.stat(path).st_mode):
                return None
        except OSError:
            return None
        shown = os.path.relpath(path, self.real_root)
        try:
            text = read_text(path, MAX_IGNORE_BYTES, root=self.real_root)
        except OSError as error:
            message = f"{shown}: {error.strerror}; it decides what stays behind, so the working directory cannot travel"
            hint = f"a {name} of patterns, up to {MAX_IGNORE_BYTES:,} bytes"
            raise SpecError([_problem(message, self.spec_file, hint)]) from None
        return _compiled(_lines(text), self.spec_file, "cluster.working_dir", shown)

    def package(self) -> Package:
        top: dict[str, int] = {}
        for relative, nbytes in self.shipped:
            first = relative.split("/")[0]
            top[first] = top.get(first, 0) + nbytes
        largest = sorted(top.items(), key=lambda item: (-item[1], item[0]))[:5]
        return Package(
            self.root,
            len(self.shipped),
            sum(nbytes for _, nbytes in self.shipped),
            largest,
            tuple(sorted(self.shipped)),
            tuple(sorted(self.left, key=lambda item: item.path)),
            tuple(sorted(self.links)),
            tuple(sorted(self.origins)),
            self.real_root,
        )


def _ignored(relative: str, ignores: list) -> str | None:
    """The ignore file (of this directory or one above) that leaves `relative` behind, if any."""
    for name, directory, patterns in ignores:
        below = relative[len(directory) + 1 :] if directory else relative
        if excludes.excluded(patterns, below if relative != directory else "."):
            return f"{name} in {directory + '/' if directory else 'the working directory'}"
    return None


def _lines(text: str) -> list[str]:
    """An ignore file's lines as Ray reads them (text mode's newlines, readlines keeping each line's end)."""
    parts = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return [part + "\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def root_name(root: str) -> str:
    return f"the working directory {root}"


def _too_wide(directory: str) -> str | None:
    from specc.check.travel import too_wide

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
    surprising = [
        f"{part.label + ': ' if part.where else ''}{item.path} ({item.why})"
        for part in (package, *package.parts)
        for item in part.left_behind
        if item.surprising
    ]
    if not surprising:
        return None
    named = "; ".join(surprising[:SHOWN])
    more = f"; and {len(surprising) - SHOWN} more" if len(surprising) > SHOWN else ""
    return Problem("W303", f"not shipped with the job: {named}{more}", spec_file, path="cluster.include")


def listing(package: Package) -> str:
    """What `specc submit --dry-run` prints: every file that would ship with its size, the total, and what stays
    behind and why; then the same for each local path of cluster.runtime_env."""
    return "".join(_listed(part) for part in (package, *package.parts))


def _listed(package: Package) -> str:
    width = max((len(size(nbytes)) for _, nbytes in package.shipped), default=0)
    from specc.read.terminal import one_line  # a file name's line end would split its line: shown escaped

    lines = [f"would ship from {one_line(str(package.root))}" + (f" ({package.label}):" if package.where else ":")]
    lines += [f"  {size(nbytes):>{width}}  {one_line(relative)}" for relative, nbytes in package.shipped]
    lines.append(f"  {size(package.size):>{width}}  total, {package.files} files")
    if package.left_behind:
        lines.append("left behind:")
        lines += [f"  {one_line(item.path)}: {one_line(item.why)}" for item in package.left_behind]
    return "\n".join(lines) + "\n"


def size_problem(package: Package, spec_file: str | None) -> Problem | None:
    """A working directory larger than Ray uploads is refused before anything is sent."""
    from ray._private.runtime_env.packaging import GCS_STORAGE_MAX_SIZE

    if package.size < GCS_STORAGE_MAX_SIZE:
        return None
    biggest = ", ".join(f"{name} ({mib(nbytes)})" for name, nbytes in package.largest)
    what = f"{package.label} {package.root}" if package.where else f"the working directory {package.root}"
    return Problem(
        "E403",
        f"{what} holds {package.describe()}, more than Ray uploads with a job "
        f"({mib(GCS_STORAGE_MAX_SIZE)}); the largest: {biggest}",
        spec_file,
        path=package.label or "cluster.excludes",
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


# -- cluster.runtime_env's local paths ---------------------------------------------------------------------------


def runtime_env_parts(cluster, spec_dir: str, project_root: str, patterns: list[str], spec_file: str | None):
    """A Package for each local path of cluster.runtime_env (spec/cluster.py's local_paths, relative to `spec_dir`,
    already checked to lie inside the project): a py_modules directory walked as the working directory is (Ray
    packs it with the job's excludes), and a single file for a .py or wheel module, a pip requirements file or a
    conda environment file (those two are read and sent whole, so they are bounded by MAX_SENT_BYTES)."""
    from specc.spec.cluster import local_paths

    parts = []
    for where, path, _ in local_paths(cluster):
        if where == ("cluster", "working_dir"):
            continue
        full = os.path.normpath(os.path.join(spec_dir, path))
        if where[2] == "py_modules" and os.path.isdir(full):
            walked = measure(full, patterns, spec_file)
            if not walked.files:
                raise SpecError([_part_problem(path, "no file of it would travel", where, spec_file)])
            parts.append(replace(walked, root=path, where=where))
            continue
        if where[2] == "py_modules" and os.path.splitext(full)[1] not in (".py", ".whl"):
            raise SpecError([_part_problem(path, "not a directory, a .py file or a .whl file", where, spec_file)])
        limit = None if where[2] == "py_modules" else MAX_SENT_BYTES
        parts.append(_one_file(path, full, project_root, where, spec_file, limit))
    return tuple(parts)


def _one_file(path: str, full: str, root: str, where: tuple, spec_file: str | None, limit: int | None) -> Package:
    """A part that is one regular file inside the project `root` (links resolved), no larger than `limit`."""
    try:
        real = files.resolve_inside(full, root)
        mode, nbytes = os.stat(real).st_mode, os.stat(real).st_size
    except OSError as error:
        raise SpecError([_part_problem(path, error.strerror or str(error), where, spec_file)]) from None
    if not stat.S_ISREG(mode):
        raise SpecError([_part_problem(path, f"{files.kind_of(mode)}, not a regular file", where, spec_file)])
    if limit is not None and nbytes > limit:
        raise SpecError([_part_problem(path, f"larger than {limit:,} bytes", where, spec_file)])
    name = os.path.basename(full)
    shipped = ((name, nbytes),)
    origins = ((name, real),)
    return Package(path, 1, nbytes, [(name, nbytes)], shipped, origins=origins, inside=root, where=where, one_file=True)


def _part_problem(path: str, why: str, where: tuple, spec_file: str | None) -> Problem:
    dotted = ".".join(str(key) for key in where)
    return Problem("E403", f"{path}: {why}, so it cannot travel with the job", spec_file, path=dotted)


# -- staging: what Ray zips ----------------------------------------------------------------------------------------


def stage(package: Package, directory: str) -> None:
    """Links, under `directory` (a staging directory of the caller's own), to every file the walk of `package`
    took, at the same relative paths: what Ray zips is then exactly what was walked and listed. A file that
    changed since the walk into one the gate refuses (a link out, a FIFO) is a problem, never read."""
    for relative, real in package.origins:
        try:
            files.link_file(real, os.path.join(directory, relative), root=package.inside, within=directory)
        except OSError as error:
            message = f"{os.path.join(package.root, relative)} changed while the job was staged: {error.strerror}"
            raise SpecError([_problem(message, None)]) from None
