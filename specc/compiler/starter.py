"""`specc init NAME`: a commented starter spec that validates and trains as written."""

from __future__ import annotations

import os
import re

from specc.spec.base import NAME_PATTERN, PATTERN_MEANINGS
from specc.spec.errors import UsageError

FRAMEWORKS = ("torch", "tensorflow")


def starter(name: str, framework: str = "torch", tune: bool = False, file: str | None = None) -> str:
    """The starter spec's text; `file` is how its comments name it (default NAME.yaml)."""
    from specc.compiler.render import environment

    if not re.fullmatch(NAME_PATTERN, name):  # fullmatch: `$` alone lets a trailing newline through
        raise UsageError(f"{name!r} is not a spec name: {PATTERN_MEANINGS[NAME_PATTERN]}")
    if framework not in FRAMEWORKS:
        raise UsageError(f"framework {framework!r}: one of {', '.join(FRAMEWORKS)}")
    template = environment().get_template("init/spec.yaml.j2")
    text = template.render(name=name, framework=framework, tune=tune, file=file or f"{name}.yaml")
    return text.rstrip("\n") + "\n"


def write_starter(name: str, output: str | None, framework: str, tune: bool, force: bool) -> str:
    """Writes the starter to `output` (default ./NAME.yaml) whole or not at all; an existing file only with force."""
    from specc.read.files import write_file

    path = output or f"{name}.yaml"
    if os.path.isdir(path):
        path = os.path.join(path, f"{name}.yaml")
    if os.path.exists(path) and not force:
        raise UsageError(f"{path} exists: pass --force to overwrite it")
    write_file(path, starter(name, framework, tune, file=path), within=None if output else os.getcwd())
    return path
