"""The project a spec belongs to, and the rule that nothing a spec names is read from outside it.

A spec arrives in a pull request and is validated in CI: it must not be able to make specc read (and quote into
public logs) /etc/passwd or ~/.ssh/id_rsa. So every file a spec names — an `extends` target, a factory module, the
spec a committed compiled script names — must resolve, symbolic links followed, inside the project root: the git
work tree holding the top spec, else the spec's own directory. `--root DIR` widens it on purpose.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from specc.spec.errors import UsageError, printable


@dataclass(frozen=True)
class Project:
    """Where a spec stands: its directory (factories and relative data paths start there) and the project root
    (nothing outside it is read)."""

    spec_dir: Path
    root: Path

    @classmethod
    def of(cls, spec: str | os.PathLike, root: str | os.PathLike | None = None) -> Project:
        """The project of the spec file `spec` as named: its directory is where the name stands, not where a link
        named so leads (a `specs/leak.yaml` linked to ~/.ssh/id_rsa belongs to the project of specs/, and is then
        refused as a file outside it)."""
        from specc.read.files import loose_real_path

        try:
            spec_dir = Path(loose_real_path(os.path.dirname(os.path.abspath(spec))))
        except OSError as error:
            raise UsageError(f"{printable(os.fspath(spec))}: {error.strerror}") from None
        if root is None:
            return cls(spec_dir, project_root(spec_dir))
        if not os.path.isdir(root):
            raise UsageError(f"--root {printable(os.fspath(root))} is not a directory")
        return cls(spec_dir, Path(os.path.realpath(root)))

    def holds(self, path: str | os.PathLike) -> bool:
        """Whether `path`, with every symbolic link resolved, is the root or below it (never for a loop of links)."""
        from specc.read.files import holds

        return holds(self.root, path)

    def shown(self) -> str:
        """The root as a user sees it: relative to the working directory when it is below it."""
        try:
            return str(self.root.relative_to(Path.cwd()))
        except ValueError:
            return str(self.root)


def project_root(directory: str | os.PathLike) -> Path:
    """The git work tree holding `directory` (the nearest ancestor with a `.git` entry), else `directory`."""
    start = Path(os.path.realpath(directory))
    for candidate in (start, *start.parents):
        if os.path.lexists(candidate / ".git"):
            return candidate
    return start


WIDEN_HINT = "widen the project with --root DIR if that file is meant to be part of it"
