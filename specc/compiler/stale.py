"""`specc check-compiled`: compiled scripts committed for review still match what their specs compile to.

A compiled script names its spec in its docstring ("Compiled by specc V for Ray R from SPEC"), as the spec
was named where `specc compile` ran (the repository's root, for a hook); each one found is compiled again from
that spec to the same output path and compared, text for text.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass

from specc.spec.errors import SpecError, UsageError

HEADER = re.compile(r"^Compiled by specc \S+ for Ray \S+ from (?P<spec>\S.*?)\s*$", re.MULTILINE)


@dataclass(frozen=True)
class Finding:
    script: str
    spec: str
    message: str

    def __str__(self) -> str:
        return f"{self.script}: {self.message}"


def tracked_python_files() -> list[str]:
    try:
        listed = subprocess.run(["git", "ls-files", "-z", "--", "*.py"], capture_output=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        raise UsageError("not in a git repository: name the compiled scripts to check") from None
    return sorted(name for name in listed.stdout.decode().split("\0") if name)


def compiled_from(script: str) -> str | None:
    """The spec a compiled script names in its docstring, or None for any other Python file."""
    try:
        with open(script, encoding="utf-8", errors="replace") as handle:
            head = handle.read(4096)
    except OSError:
        return None
    if not head.startswith('"""'):
        return None
    match = HEADER.search(head.split('"""', 2)[1])
    return match["spec"] if match else None


def check(paths: list[str] | None = None, templates=None) -> tuple[int, list[Finding]]:
    """(compiled scripts found, those that are stale or whose spec is gone or broken)."""
    from specc.check.validate import load

    scripts = [(script, spec) for script in (paths or tracked_python_files()) if (spec := compiled_from(script))]
    findings = []
    for script, spec in scripts:
        if not os.path.isfile(spec):
            findings.append(Finding(script, spec, f"compiled from {spec}, which does not exist"))
            continue
        try:
            experiment = load(spec)
        except SpecError as error:
            findings.append(Finding(script, spec, f"its spec {spec} has problems:\n{error}"))
            continue
        if finding := compare(script, spec, experiment, templates):
            findings.append(finding)
    return len(scripts), findings


def compare(script: str, spec: str, experiment, templates=None) -> Finding | None:
    """A finding when `script` is not exactly what `experiment` (read from `spec`) compiles to at that path."""
    from specc.compiler.script import compile_script

    with open(script, encoding="utf-8") as handle:
        if handle.read() == compile_script(experiment, script, templates):
            return None
    remedy = f"run `specc compile {spec} -o {script}`"
    return Finding(script, spec, f"stale: {spec} compiles to something else; {remedy}")
