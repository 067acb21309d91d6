"""Writing files so that a reader never sees half of one, and nothing that is not a file of ours is replaced.

Every file specc writes (a compiled script, a report, plots, a starter spec, the schema) goes through
`write_atomic`: a temporary file beside the target, renamed over it. An existing target that is not a regular
file (a directory, a FIFO, a device, a socket) is refused, never replaced; a symbolic link is written through
(its target gets the text, the link stays); any OS error is a one-line UsageError naming the path, and the
temporary file is gone.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path

from specc.spec.errors import UsageError

KINDS = {stat.S_ISDIR: "a directory", stat.S_ISFIFO: "a FIFO", stat.S_ISSOCK: "a socket"}


def write_atomic(path: str | os.PathLike, text: str | bytes) -> None:
    """Write to a temporary file beside `path`, then rename over it (atomic on POSIX). The file gets the
    permissions any new file of this user gets (mkstemp's are 0600: a compiled script or a report is shared)."""
    shown = os.fspath(path)
    target = Path(os.path.realpath(path))  # a symbolic link is written through: its target is replaced
    _refuse_what_is_not_a_file(target, shown)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    except OSError as error:
        raise UsageError(f"cannot write {shown}: {_reason(error)}") from None
    try:
        mask = os.umask(0o022)
        os.umask(mask)
        os.chmod(temporary, 0o666 & ~mask)
        binary = isinstance(text, bytes)
        options = {"mode": "wb"} if binary else {"mode": "w", "encoding": "utf-8", "newline": "\n"}
        with os.fdopen(handle, **options) as out:
            out.write(text)
        os.replace(temporary, target)
    except BaseException as error:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        if isinstance(error, OSError):
            raise UsageError(f"cannot write {shown}: {_reason(error)}") from None
        raise


def _refuse_what_is_not_a_file(target: Path, shown: str) -> None:
    try:
        mode = target.stat().st_mode
    except FileNotFoundError:
        return
    except OSError as error:  # e.g. a path below a file, or a directory we may not look into
        raise UsageError(f"cannot write {shown}: {_reason(error)}") from None
    if not stat.S_ISREG(mode):
        kind = next((name for test, name in KINDS.items() if test(mode)), "a device or special file")
        raise UsageError(f"cannot write {shown}: it is {kind}, not a regular file; name a file to write instead")


def _reason(error: OSError) -> str:
    """The OS's words for an error, without the path repeated (the message names the path already)."""
    return error.strerror or str(error)
