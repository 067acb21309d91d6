"""Custom factories name code the run imports: only a function or class defined in a module of the project, or of
an installed package that is not the standard library. Checked without importing anything.

A spec alone must not run code: `factory: os:system` with `kwargs: {command: ...}` would run a shell command with
no Python file in the project, and `builtins:exec` or a name a module merely re-exports (`subprocess:os`) would do
the same. So the module is found the way the run will find it (the spec's directory first on sys.path, then the
installed packages), its source is parsed, and the name must be a `def` or `class` at its top level.
"""

from __future__ import annotations

import ast
import importlib.machinery
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path

from specc.check.fields import Locator
from specc.read.project import WIDEN_HINT, Project
from specc.spec.errors import Problem, excerpt
from specc.spec.experiment import Experiment

STDLIB = frozenset(sys.stdlib_module_names)


def factories_allowed(e: Experiment, at: Locator, project: Project | None) -> Iterator[Problem]:
    for section in ("model", "dataset"):
        reference = getattr(getattr(e, section), "factory", None)
        if reference is None or project is None:
            continue
        problem = refusal(reference, project, _project_dirs(e, project))
        if problem:
            code, message, hint = problem
            yield at(code, message, (section, "factory"), hint)


def _project_dirs(e: Experiment, project: Project) -> list[str]:
    """Where the run looks for a project module: the spec's directory, and on a cluster the shipped working
    directory too (Ray puts it first on the workers' PYTHONPATH)."""
    dirs = [str(project.spec_dir)]
    if e.cluster.working_dir:
        dirs.append(str((project.spec_dir / e.cluster.working_dir).resolve()))
    return dirs


def refusal(
    reference: str, project: Project, project_dirs: list[str] | None = None
) -> tuple[str, str, str | None] | None:
    """(code, message, hint) when `reference` ('package.module:name') may not be a factory, else None."""
    module, _, name = reference.partition(":")
    top = module.split(".")[0]
    if top in STDLIB:
        return (
            "E214",
            f"{excerpt(module)} is part of Python's standard library: a factory comes from your project or an "
            "installed package",
            f"write the factory in a module of your project (one called {top}.py would not be imported: Python's is)",
        )
    dirs = project_dirs or [str(project.spec_dir)]  # a declared working directory is the project's code too
    source = _module_file(module, dirs)
    in_project = source is not None
    if source is None:
        source = _module_file(module, [entry for entry in sys.path if entry and Path(entry).is_dir()])
        if source is None:
            return (
                "W302",
                f"{excerpt(module)} is neither a module of your project nor installed here",
                "a module path relative to the spec's directory (package.module), or a package installed where it runs",
            )
        if top not in _distributions():
            return (
                "E214",
                f"{excerpt(module)} is neither a module of your project nor part of an installed package",
                "write the factory in a module of your project",
            )
    if in_project and not any(source.resolve().is_relative_to(Path(d).resolve()) for d in (project.root, *dirs[1:])):
        return (
            "E023",
            f"the module {excerpt(module)} resolves outside the project ({project.shown()})",
            WIDEN_HINT,
        )
    if source.suffix != ".py":
        return (
            "E214",
            f"{excerpt(module)} is not Python source ({source.suffix or 'no suffix'}), so what it defines cannot be "
            "checked",
            "wrap it in a function of a module of your project",
        )
    defined = _defined_names(source)
    if defined is None:
        return "E214", f"{excerpt(module)} cannot be read as Python source", None
    if name not in defined:
        return (
            "E214",
            f"{excerpt(name)} is not a function or class defined in {excerpt(module)}",
            "a factory is a `def` or `class` written in the module named (not one it imports from elsewhere)",
        )
    return None


def _module_file(module: str, search: list[str]) -> Path | None:
    """The source file `import module` would load from `search`, found without importing any package on the way
    (importlib.util.find_spec would import the parents)."""
    spec = None
    for part in module.split("."):
        try:
            spec = importlib.machinery.PathFinder.find_spec(part, search)
        except (ImportError, ValueError, OSError):
            return None
        if spec is None:
            return None
        search = list(spec.submodule_search_locations or [])
    if spec is None or spec.origin in (None, "built-in", "frozen", "namespace"):
        return None
    return Path(spec.origin)


@cache
def _distributions() -> frozenset[str]:
    import importlib.metadata

    return frozenset(importlib.metadata.packages_distributions())


def _defined_names(source: Path) -> set[str] | None:
    """Names a module defines itself with `def`/`class` at its top level (also inside top-level if/try blocks)."""
    from specc.read.document import MAX_BYTES, read_file

    try:
        tree = ast.parse(read_file(source, limit=MAX_BYTES * 16), str(source))
    except (OSError, SyntaxError, ValueError):
        return None
    names: set[str] = set()
    pending = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.If | ast.Try | ast.With):
            pending.extend(node.body)
            pending.extend(getattr(node, "orelse", []))
            pending.extend(getattr(node, "finalbody", []))
            for handler in getattr(node, "handlers", []):
                pending.extend(handler.body)
    return names
