"""The one read gate and the one write gate: every file specc reads or writes passes through here.

specc meets strangers' input in two places, CI on pull requests and shared clusters, so nothing a spec, a run
directory or a working directory holds is trusted. A committed link (`specs/leak.yaml -> ~/.ssh/id_rsa`), a FIFO
that blocks for ever, a 3 GiB sparse file or a loop of links must each be a one-line refusal, never a read of
something outside, a hang or a traceback.

Reading (`read_file`, `walk_files`): a path is resolved, every link followed, and must land on a regular file
inside the root the caller gives (the project, the run directory, the working directory that ships); a loop of
links is an OSError naming it; a FIFO, a device or a socket is refused without being opened for reading (opened
without blocking); no more than the caller's bound plus one byte is read, so a caller can tell a file is too big.
A walk never follows a directory link, and a file link only where its target is inside the root.

Writing (`write_file`): whole or not at all (a temporary file beside the target, renamed over it); a target that
is a link or not a regular file is refused, never replaced or written through; with `within`, the directory the
file lands in must be inside it (a committed `build -> /elsewhere` link does not carry a default output away).

A test (tests/unit/test_file_gates.py) fails when a module of specc opens, walks, lists or writes files around
these functions.
"""

from __future__ import annotations

import contextlib
import errno
import glob
import itertools
import os
import stat
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

from specc.spec.errors import UsageError, printable

KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a device"),
    (stat.S_ISBLK, "a device"),
)
MAX_WALK = 100_000  # entries one walk looks at: a working directory or a specs tree is far smaller


def kind_of(mode: int) -> str:
    return next((name for test, name in KINDS if test(mode)), "a device or special file")


def real_path(path: str | os.PathLike) -> str:
    """`path` with every symbolic link resolved; an OSError naming the loop when links lead round in a circle
    (Path.resolve raises RuntimeError there), FileNotFoundError when it leads nowhere."""
    if "\0" in os.fspath(path):  # os.path.realpath raises ValueError on it: an OSError like every other refusal
        raise OSError(errno.EINVAL, "a file name cannot hold a NUL character")
    try:
        return os.path.realpath(path, strict=True)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise OSError(errno.ELOOP, "its symbolic links lead round in a loop") from None
        raise


def loose_real_path(path: str | os.PathLike) -> str:
    """`path` with the links that exist resolved (a missing tail kept as written); a loop is an OSError."""
    head, missing = os.path.abspath(path), []
    while True:  # up the tree to the deepest part that exists (a loop: no recursion, whatever the depth)
        try:
            return os.path.join(real_path(head), *reversed(missing))
        except FileNotFoundError:
            parent, name = os.path.split(head)
            if parent == head:
                return os.path.join(head, *reversed(missing))
            head = parent
            missing.append(name)


def is_inside(path: str | os.PathLike, root: str | os.PathLike) -> bool:
    """Whether `path` (already resolved) is `root` (already resolved) or below it."""
    path, root = os.fspath(path), os.fspath(root)
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def holds(root: str | os.PathLike, path: str | os.PathLike) -> bool:
    """Whether `path`, its links resolved, lies inside `root` (its links resolved); False for a loop of links."""
    try:
        return is_inside(loose_real_path(path), loose_real_path(root))
    except OSError:
        return False


def resolve_inside(path: str | os.PathLike, root: str | os.PathLike) -> str:
    """The real path of `path`, which must exist and lie inside `root`; an OSError saying why not."""
    real = real_path(path)
    top = real_path(root)
    if not is_inside(real, top):
        raise OSError(errno.EACCES, f"it leads outside {printable(top)} (to {printable(real)})")
    return real


def read_file(path: str | os.PathLike, limit: int, *, root: str | os.PathLike) -> bytes:
    """The bytes of the regular file `path` inside `root`, at most `limit` + 1 of them (enough to tell it is too
    big: a caller compares with `limit`). OSError when it is outside, a loop, missing, or not a regular file."""
    real = resolve_inside(path, root)
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    descriptor = os.open(real, flags)  # never blocks on a FIFO; a link swapped in after resolving is refused
    with os.fdopen(descriptor, "rb") as handle:
        mode = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(mode):
            raise OSError(errno.EINVAL, f"it is {kind_of(mode)}, not a regular file")
        return handle.read(limit + 1)


def read_text(path: str | os.PathLike, limit: int, *, root: str | os.PathLike) -> str:
    """`read_file` as UTF-8 text; an OSError when it is larger than `limit` bytes or not UTF-8."""
    raw = read_file(path, limit, root=root)
    if len(raw) > limit:
        raise OSError(errno.EFBIG, f"it is larger than {limit:,} bytes")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise OSError(errno.EILSEQ, f"it is not UTF-8 text (byte 0x{raw[error.start]:02x})") from None


def regular_file_inside(path: str | os.PathLike, root: str | os.PathLike) -> bool:
    """Whether `path` is a regular file inside `root`, links resolved (what a walk or a listing may offer)."""
    try:
        return stat.S_ISREG(os.stat(resolve_inside(path, root)).st_mode)
    except OSError:
        return False


def list_directory(directory: str | os.PathLike, *, root: str | os.PathLike) -> list[str]:
    """The names in `directory` (inside `root`), sorted; [] when it is missing, outside or not a directory."""
    try:
        real = resolve_inside(directory, root)
        with os.scandir(real) as entries:
            return sorted(entry.name for entry in itertools.islice(entries, MAX_WALK))
    except OSError:
        return []


def walk_files(
    top: str | os.PathLike,
    *,
    keep_dir: Callable[[str], bool] = lambda name: True,
    keep_file: Callable[[str], bool] = lambda name: True,
) -> Iterator[str]:
    """The entries below `top` that are not directories (as paths under `top`): a directory's own, sorted by name,
    before those of its subdirectories, which follow in name order.
    Directory links are not followed (a link back up the tree would never end); a file, a link or a special file is
    offered as it is, for `read_file` to take or refuse with its reason. `keep_dir(name)` and `keep_file(name)` prune
    by name. At most MAX_WALK entries are looked at; past that an OSError says so."""
    seen = 0
    pending = [os.fspath(top)]
    while pending:
        directory = pending.pop()
        try:
            with os.scandir(directory) as scan:
                entries = sorted(itertools.islice(scan, MAX_WALK + 1 - seen), key=lambda entry: entry.name)
        except OSError:
            continue
        seen += len(entries)
        if seen > MAX_WALK:
            raise OSError(errno.EFBIG, f"{printable(os.fspath(top))} holds more than {MAX_WALK:,} entries")
        subdirectories = []
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                if keep_dir(entry.name):
                    subdirectories.append(entry.path)
            elif keep_file(entry.name):
                yield entry.path
        pending.extend(reversed(subdirectories))


def glob_files(pattern: str, matches: Callable[[list[str]], bool]) -> list[str]:
    """Paths matching a glob `pattern`, hidden names only when named. Without `**`, Python's glob (its depth is the
    pattern's); with `**`, a walk of the directory before the first wildcard that follows no directory link (Python's
    glob follows them, and `d/up -> ..` never ends), each path under it kept when `matches(its segments)`."""
    if "**" not in pattern:
        return glob.glob(pattern)
    parts = pattern.split(os.sep)
    fixed = next(i for i, part in enumerate(parts) if glob.has_magic(part))
    base = os.sep.join(parts[:fixed]) or ("/" if pattern.startswith(os.sep) else ".")
    found = []
    for path in walk_files(
        base, keep_dir=lambda name: not name.startswith("."), keep_file=lambda name: not name.startswith(".")
    ):
        relative = os.path.relpath(path, base).split(os.sep)
        if matches(relative):
            found.append(path if fixed else os.path.normpath(path))
    return found


def writable(path: str | os.PathLike, *, within: str | os.PathLike | None = None) -> str:
    """The real directory `path` would be written into, once it is known that `write_file` may write it: the target
    is missing or a regular file (never a link), and with `within`, its directory (links resolved) is inside it.
    A UsageError naming the path otherwise. Callers that write several files check them all first."""
    shown = printable(os.fspath(path))
    target = Path(os.path.abspath(path))
    _refuse_what_is_not_a_file(target, shown)
    try:
        directory = loose_real_path(target.parent)
    except OSError as error:
        raise UsageError(f"cannot write {shown}: {_reason(error)}") from None
    if within is not None and not holds(within, directory):
        place = printable(os.fspath(within))
        raise UsageError(f"cannot write {shown}: its directory leads outside {place} (to {printable(directory)})")
    return directory


def link_file(
    target: str | os.PathLike, link: str | os.PathLike, *, root: str | os.PathLike, within: str | os.PathLike
) -> str:
    """A symbolic link at `link` to the regular file `target`, for a staging directory `within` of the caller's own
    (`specc submit` stages what a job ships as links, which Ray reads through as it zips). `target` must resolve to
    a regular file inside `root`, and the link points at that real file (never at a chain of links); `link` must lie
    inside `within`, its missing parent directories are made there, and nothing may be at `link` yet. An OSError
    says why not. Returns the real file linked to."""
    real = resolve_inside(target, root)
    mode = os.stat(real).st_mode
    if not stat.S_ISREG(mode):
        raise OSError(errno.EINVAL, f"it is {kind_of(mode)}, not a regular file")
    parent = os.path.dirname(os.path.abspath(link))
    if not holds(within, parent):
        raise OSError(errno.EACCES, f"{printable(os.fspath(link))} is not inside {printable(os.fspath(within))}")
    os.makedirs(parent, exist_ok=True)
    if not is_inside(real_path(parent), real_path(within)):  # a link planted on the way between the check and here
        raise OSError(errno.EACCES, f"{printable(parent)} leads outside {printable(os.fspath(within))}")
    os.symlink(real, os.path.join(parent, os.path.basename(link)))  # fails when anything is there already
    return real


def write_file(path: str | os.PathLike, content: str | bytes, *, within: str | os.PathLike | None = None) -> None:
    """Write `content` to `path` whole or not at all. Refused (a UsageError naming the path): a target that is a
    symbolic link or not a regular file, and with `within`, a target whose directory (links resolved) is not
    inside `within`. The file gets the permissions any new file of this user gets (mkstemp's are 0600)."""
    shown = printable(os.fspath(path))
    directory = writable(path, within=within)
    name = os.path.basename(os.path.abspath(path))
    try:
        os.makedirs(directory, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=f".{name}.", dir=directory)
    except OSError as error:
        raise UsageError(f"cannot write {shown}: {_reason(error)}") from None
    try:
        mask = os.umask(0o022)
        os.umask(mask)
        os.chmod(temporary, 0o666 & ~mask)
        binary = isinstance(content, bytes)
        options = {"mode": "wb"} if binary else {"mode": "w", "encoding": "utf-8", "newline": "\n"}
        with os.fdopen(handle, **options) as out:
            out.write(content)
        os.replace(temporary, os.path.join(directory, name))  # a rename: never follows a link at the target
    except BaseException as error:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        if isinstance(error, OSError):
            raise UsageError(f"cannot write {shown}: {_reason(error)}") from None
        raise


def _refuse_what_is_not_a_file(target: Path, shown: str) -> None:
    try:
        mode = os.lstat(target).st_mode
    except FileNotFoundError:
        return
    except OSError as error:  # e.g. a path below a file, or a directory we may not look into
        raise UsageError(f"cannot write {shown}: {_reason(error)}") from None
    if stat.S_ISLNK(mode):
        raise UsageError(f"cannot write {shown}: it is a symbolic link; specc writes no file through a link")
    if not stat.S_ISREG(mode):
        raise UsageError(f"cannot write {shown}: it is {kind_of(mode)}, not a regular file; name a file to write")


def _reason(error: OSError) -> str:
    """The OS's words for an error, without the path repeated (the message names the path already)."""
    return error.strerror or str(error)
