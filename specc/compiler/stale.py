"""`specc check-compiled`: compiled scripts committed for review still match what their specs compile to.

A compiled script names its spec in its docstring ("Compiled by specc V for Ray R from SPEC"), as the spec
was named where `specc compile` ran (the repository's root, for a hook); each one found is compiled again from
that spec to the same output path and compared, text for text.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from dataclasses import dataclass

from specc.read.project import WIDEN_HINT, Project
from specc.spec.errors import SpecError, UsageError, excerpt, printable

# A spec path too long for the line is on the next one (specc.compiler.fragments.compiled_by)
HEADER = re.compile(r"^Compiled by specc \S+ for Ray \S+ from[ \n](?P<spec>\S.*?)\s*$", re.MULTILINE)


@dataclass(frozen=True)
class Finding:
    script: str
    spec: str
    message: str

    def __str__(self) -> str:
        return printable(f"{self.script}: ") + self.message  # the message's problems are already printable


def tracked_python_files() -> list[str]:
    try:
        listed = subprocess.run(["git", "ls-files", "-z", "--", "*.py"], capture_output=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        raise UsageError("not in a git repository: name the compiled scripts to check") from None
    return sorted(name for name in listed.stdout.decode().split("\0") if name)


SCRIPT_BYTES = 4 << 20  # a compiled script: about 50 KB; a file past this is no script specc wrote
HEAD_BYTES = 4096  # where a compiled script names its spec


def compiled_from(script: str, root=None) -> str | None:
    """The spec a compiled script names in its docstring, or None for any other Python file (or one that cannot be
    read through the read gate: a link out of its project, a FIFO, a loop)."""
    from specc.read.files import read_file

    try:
        head = read_file(script, HEAD_BYTES, root=Project.of(script, root).root)[:HEAD_BYTES]
    except (OSError, UsageError):
        return None
    head = head.decode("utf-8", errors="replace")
    if not head.startswith('"""'):
        return None
    match = HEADER.search(head.split('"""', 2)[1])
    return match["spec"] if match else None


def check(paths: list[str] | None = None, templates=None, root=None) -> tuple[int, list[Finding]]:
    """(compiled scripts found, those that are stale or whose spec is gone, broken or outside the project).

    The spec a script names is text in a committed file: it is read only when it is a .yaml/.yml file inside the
    script's project (the git work tree holding the script, or `root`)."""
    from specc.check.validate import load

    scripts = [(script, spec) for script in (paths or tracked_python_files()) if (spec := compiled_from(script, root))]
    findings = []
    for script, spec in scripts:
        project = Project.of(script, root)
        if not project.holds(spec) or os.path.splitext(spec)[1] not in (".yaml", ".yml"):
            message = f"names {excerpt(spec)} as its spec, which is not a spec file inside the project"
            findings.append(Finding(script, spec, f"{message} ({project.shown()}): {WIDEN_HINT}"))
            continue
        if not os.path.isfile(spec):
            findings.append(Finding(script, spec, f"compiled from {printable(spec)}, which does not exist"))
            continue
        try:
            experiment = load(spec, root=root)
        except SpecError as error:
            findings.append(Finding(script, spec, f"its spec {printable(spec)} has problems:\n{error}"))
            continue
        if finding := compare(script, spec, experiment, templates, root):
            findings.append(finding)
    return len(scripts), findings


def compare(script: str, spec: str, experiment, templates=None, root=None) -> Finding | None:
    """A finding when `script` is not exactly what `experiment` (read from `spec`) compiles to at that path."""
    from specc.compiler.script import compile_script
    from specc.read.files import read_text

    try:
        current = read_text(script, SCRIPT_BYTES, root=Project.of(script, root).root)
    except OSError as error:
        return Finding(script, spec, f"cannot be read: {printable(error.strerror or str(error))}")
    if current == compile_script(experiment, script, templates):
        return None
    remedy = printable(f"run `specc compile {shlex.quote(spec)} -o {shlex.quote(script)}`")
    return Finding(script, spec, f"stale: {printable(spec)} compiles to something else; {remedy}")
