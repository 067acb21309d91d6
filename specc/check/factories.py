"""Custom factories and objectives name code the run imports: only a function or class defined in a module of the
project, or of an installed package in a namespace meant for building models (torchvision.models,
keras.applications) or one the project trusts in its pyproject.toml. Checked without importing anything.

A spec alone must not run code: `factory: os:system` with `kwargs: {command: ...}` would run a shell command with
no Python file in the project, and `builtins:exec` or a name a module merely re-exports (`subprocess:os`) would do
the same, and so would a function of an installed package that is itself a code-execution gadget
(`yaml:unsafe_load` with a `!!python/object/apply` string in its kwargs). So the module is found the way the run will
find it (the spec's directory, then cluster.working_dir, first on sys.path: import_dirs; then the installed
packages), an installed one must be in a
trusted namespace, its source is parsed, and the name must be a `def` or `class` at its top level.
"""

from __future__ import annotations

import ast
import importlib.machinery
import os
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path

from specc.check.fields import Locator
from specc.read.project import WIDEN_HINT, Project
from specc.spec.errors import Problem, excerpt, printable
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


def import_dirs(e: Experiment, spec_dir: str | os.PathLike) -> list[str]:
    """Where a run imports the project's modules from (custom factories, an objective), in this order, relative to
    the spec's directory: the spec's directory ("."), then cluster.working_dir when the spec names another (".." for
    the project above specs/). One rule for validate and run: validate looks modules up in these directories
    (_project_dirs); the compiler hands the same list to the script (IMPORT_DIRS), whose use_spec_dir puts them on
    sys.path in the driver and in every Ray worker and Tune trial, local or not, as Ray puts a job's working
    directory on its workers' import path on a cluster."""
    dirs = ["."]
    chosen = e.cluster.working_dir
    if chosen:
        relative = os.path.relpath(os.path.normpath(os.path.join(spec_dir, chosen)), spec_dir)
        dirs += [relative] if relative != "." else []
    return dirs


def _project_dirs(e: Experiment, project: Project) -> list[str]:
    """import_dirs as absolute paths, less a working directory outside the project (E023 says so; nothing there is
    looked at)."""
    from specc.read.files import holds, loose_real_path

    dirs = [str(project.spec_dir)]
    for relative in import_dirs(e, project.spec_dir)[1:]:
        if holds(project.root, project.spec_dir / relative):
            dirs.append(loose_real_path(project.spec_dir / relative))
    return dirs


MODEL_AND_DATA_MODULES = ("torchvision.models", "keras.applications", "tf_keras.applications")
"""Namespaces of installed packages meant for building models: a spec may name their functions and classes with
no say-so from the project. Everything else installed (yaml:unsafe_load, sympy:sympify: code-execution gadgets)
only when the project lists it (`trusted_modules`)."""

PYPROJECT_BYTES = 1 << 20
TRUST_KEY = "trusted-modules"


def trusted_modules(project: Project) -> tuple[str, ...]:
    """MODEL_AND_DATA_MODULES and the modules the project trusts: `[tool.specc] trusted-modules = ["mylib"]` in the
    pyproject.toml at its root (a string or a list of strings; anything else is ignored)."""
    from specc.read.files import read_text

    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        return MODEL_AND_DATA_MODULES
    try:
        table = tomllib.loads(read_text(project.root / "pyproject.toml", PYPROJECT_BYTES, root=project.root))
        declared = table.get("tool", {}).get("specc", {}).get(TRUST_KEY, [])
    except (OSError, tomllib.TOMLDecodeError, AttributeError, RecursionError):
        return MODEL_AND_DATA_MODULES
    declared = [declared] if isinstance(declared, str) else declared
    if not isinstance(declared, list):
        return MODEL_AND_DATA_MODULES
    return MODEL_AND_DATA_MODULES + tuple(name for name in declared if isinstance(name, str) and name)


def trusted(module: str, modules: tuple[str, ...]) -> bool:
    """Whether `module` is one of `modules` or below one of them (torchvision.models.resnet in torchvision.models)."""
    return any(module == name or module.startswith(name + ".") for name in modules)


def refusal(
    reference: str, project: Project, project_dirs: list[str] | None = None
) -> tuple[str, str, str | None] | None:
    """(code, message, hint) when `reference` ('package.module:name') may not be a factory, else None."""
    from specc.read.files import holds

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
    root = project.root if source is not None else None
    if source is not None and not holds(project.root, source):
        return (
            "E023",
            f"the module {excerpt(module)} resolves outside the project ({project.shown()})",
            WIDEN_HINT,
        )
    if source is None:
        refused = _installed_refusal(module, top, project)
        if refused is not None:
            return refused
        source = _module_file(module, [entry for entry in sys.path if entry and Path(entry).is_dir()])
        if source is None:
            return (
                "W302",
                f"{excerpt(module)} is neither a module of your project nor installed here",
                "a module path relative to the spec's directory (package.module), or a package installed where it runs",
            )
    if source.suffix != ".py":
        return (
            "E214",
            f"{excerpt(module)} is not Python source ({source.suffix or 'no suffix'}), so what it defines cannot be "
            "checked",
            "wrap it in a function of a module of your project",
        )
    defined = _defined_names(source, root)
    if defined is None:
        return "E214", f"{excerpt(module)} cannot be read as Python source", None
    if name not in defined:
        return (
            "E214",
            f"{excerpt(name)} is not a function or class defined in {excerpt(module)}",
            "a factory is a `def` or `class` written in the module named (not one it imports from elsewhere)",
        )
    return None


def _installed_refusal(module: str, top: str, project: Project) -> tuple[str, str, str | None] | None:
    """A module that is not the project's may come only from a namespace meant for models and data, or one the
    project trusts; and then from an installed package, not a stray file on sys.path."""
    modules = trusted_modules(project)
    if not trusted(module, modules):
        allowed = ", ".join(MODEL_AND_DATA_MODULES)
        where = printable(module.replace(".", "/"))
        return (
            "E214",
            f"{excerpt(module)} is not a module of your project (no {where}.py beside the spec), and a spec calls "
            f"an installed package only from a namespace meant for building models ({allowed}) or one the project "
            "trusts",
            f"write {where}.py beside the spec, or trust the package in {project.shown()}/pyproject.toml:"
            f' [tool.specc] {TRUST_KEY} = ["{printable(top)}"]',
        )
    if _module_file(module, [entry for entry in sys.path if entry and Path(entry).is_dir()]) and (
        top not in _distributions()
    ):
        return (
            "E214",
            f"{excerpt(module)} is neither a module of your project nor part of an installed package",
            "write the factory in a module of your project",
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


MODULE_BYTES = 16 << 20  # a module's source: far more than any hand-written one


def parsed_module(source: Path, root: str | os.PathLike | None = None) -> ast.Module | None:
    """The syntax tree of a module's source file, read through the read gate (a regular file in its own directory,
    at most MODULE_BYTES); None when it cannot be read or parsed — a nesting deep enough to exhaust the parser
    (RecursionError, MemoryError) included."""
    from specc.read.files import read_file

    try:
        raw = read_file(source, MODULE_BYTES, root=source.parent if root is None else root)
        if len(raw) > MODULE_BYTES:
            return None
        return ast.parse(raw, str(source))
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _defined_names(source: Path, root: str | os.PathLike | None = None) -> set[str] | None:
    """Names a module defines itself with `def`/`class` at its top level (also inside top-level if/try blocks)."""
    tree = parsed_module(source, root)
    if tree is None:
        return None
    kinds = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
    return {node.name for node in top_level_statements(tree) if isinstance(node, kinds)}


def top_level_statements(module: ast.Module) -> Iterator[ast.stmt]:
    """The statements at a module's top level, also those inside top-level if/try/with blocks, in order: what a
    module defines or imports whichever branch runs."""
    pending = list(module.body)
    while pending:
        node = pending.pop(0)
        yield node
        if isinstance(node, ast.If | ast.Try | ast.With):
            pending.extend(node.body)
            pending.extend(getattr(node, "orelse", []))
            pending.extend(getattr(node, "finalbody", []))
            for handler in getattr(node, "handlers", []):
                pending.extend(handler.body)
