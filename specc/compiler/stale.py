"""`specc check-compiled`: compiled scripts committed for review still match what their specs compile to.

A compiled script names its spec in its docstring ("Compiled by specc V for Ray R from SPEC"), as the spec
was named where `specc compile` ran (the repository's root, for a hook); each one found is compiled again from
that spec to the same output path and compared, text for text. The runtime beside it (specc_runtime.py, the
same for every spec) must be this specc's, text for text, once per directory; a `--single-file` script carries
its runtime inlined and is compared as `specc compile --single-file` writes it.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from dataclasses import dataclass

from specc import runtime
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


RUN_DIRECTORY_SPEC = "spec.resolved.yaml beside it"  # what a script specc writes into a run directory names
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
    if os.path.basename(script) == runtime.FILE:  # the runtime beside the scripts, never one of them
        return None
    head = head.decode("utf-8", errors="replace")
    if not head.startswith('"""'):
        return None
    match = HEADER.search(head.split('"""', 2)[1])
    if not match or match["spec"] == RUN_DIRECTORY_SPEC:  # predict.py, written into a run directory, not committed
        return None
    return match["spec"]


def check(paths: list[str] | None = None, templates=None, root=None) -> tuple[int, list[Finding]]:
    """(compiled scripts found, those that are stale or whose spec is gone, broken or outside the project).

    The spec a script names is text in a committed file: it is read only when it is a .yaml/.yml file inside the
    script's project (the git work tree holding the script, or `root`)."""
    scripts = [(script, spec) for script in (paths or tracked_python_files()) if (spec := compiled_from(script, root))]
    findings = []
    runtimes = set()  # the directories whose runtime was checked: several scripts share one
    for script, spec in scripts:
        if finding := _checked(script, spec, templates, root):
            findings.append(finding)
        directory = os.path.realpath(os.path.dirname(os.path.abspath(script)))
        if directory not in runtimes and (finding := runtime_finding(script, spec, root)):
            findings.append(finding)
        runtimes.add(directory)
    return len(scripts), findings


def _checked(script: str, spec: str, templates=None, root=None) -> Finding | None:
    """A finding when `script` is stale, or its spec is gone, broken or outside the project."""
    from specc.check.validate import load

    project = Project.of(script, root)
    if not project.holds(spec) or os.path.splitext(spec)[1] not in (".yaml", ".yml"):
        message = f"names {excerpt(spec)} as its spec, which is not a spec file inside the project"
        return Finding(script, spec, f"{message} ({project.shown()}): {WIDEN_HINT}")
    if not os.path.isfile(spec):
        return Finding(script, spec, f"compiled from {printable(spec)}, which does not exist")
    try:
        experiment = load(spec, root=root)
    except SpecError as error:
        return Finding(script, spec, f"its spec {printable(spec)} has problems:\n{error}")
    return compare(script, spec, experiment, templates, root)


def compare(script: str, spec: str, experiment, templates=None, root=None) -> Finding | None:
    """A finding when `script` is not exactly what `experiment` (read from `spec`) compiles to at that path."""
    from specc.compiler.script import compile_script
    from specc.read.files import read_text

    try:
        current = read_text(script, SCRIPT_BYTES, root=Project.of(script, root).root)
    except OSError as error:
        return Finding(script, spec, f"cannot be read: {printable(error.strerror or str(error))}")
    single = runtime.is_single_file(current)
    expected = compile_script(experiment, script, templates)
    if current == (runtime.single_file(expected) if single else expected):
        return None
    return Finding(script, spec, f"stale: {printable(spec)} compiles to something else; {remedy(spec, script, single)}")


def runtime_finding(script: str, spec: str, root=None) -> Finding | None:
    """A finding when the runtime beside the compiled experiment file `script` is missing or not this specc's
    (None for a script that imports no runtime: a `--single-file` one, whose runtime is inlined, an after-training
    script, or one an earlier specc wrote, whose own finding says to compile it again)."""
    from specc.read.files import read_file, read_text

    project_root = Project.of(script, root).root
    try:
        if not runtime.imports_runtime(read_text(script, SCRIPT_BYTES, root=project_root)):
            return None
    except OSError:
        return None  # the script's own finding says why
    path = runtime.beside(script)
    wanted = runtime.source().encode("utf-8")
    try:  # no more is read than tells it differs
        current = read_file(path, len(wanted), root=project_root)
    except FileNotFoundError:
        return Finding(path, spec, f"missing: the runtime {printable(script)} imports; {remedy(spec, script)}")
    except OSError as error:
        return Finding(path, spec, f"cannot be read: {printable(error.strerror or str(error))}; {remedy(spec, script)}")
    if current == wanted:
        return None
    ours, theirs = runtime.version_of(runtime.source()), runtime.version_of(current.decode("utf-8", "replace"))
    by = f" (it was written by specc {printable(theirs)})" if theirs and theirs != ours else ""
    message = f"stale: differs from the runtime specc {ours} writes beside {printable(script)}{by}"
    return Finding(path, spec, f"{message}; {remedy(spec, script)}")


def remedy(spec: str, script: str, single: bool = False) -> str:
    """The command that writes `script` (and its runtime) again."""
    return printable(f"run `{shlex.join(['specc', 'compile', spec, '-o', script, *(['--single-file'] * single)])}`")
