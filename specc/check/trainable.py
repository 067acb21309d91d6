"""Whether a class of the project derives from `ray.tune.Trainable`, read from source, never imported: its bases are
followed through the classes of its own module and of the project's other modules (absolute and relative imports),
never through an installed package or a file outside the project, and at most CLASSES_FOLLOWED classes up.

A base names Trainable when it is written `ray.tune.Trainable` (or `tune.Trainable`, `rt.Trainable`, `Trainable`,
`Base`: whatever the module's imports make of it), or Ray's own module paths to it (`ray.tune.trainable.Trainable`).
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import NamedTuple

from specc.check.factories import _module_file, parsed_module, top_level_statements

TRAINABLE = frozenset({"ray.tune.Trainable", "ray.tune.trainable.Trainable", "ray.tune.trainable.trainable.Trainable"})
WRITTEN = frozenset({"Trainable", "tune.Trainable"})  # as written where no import says where they come from
CLASSES_FOLLOWED = 32  # a project's chain of bases is a few classes; a loop or a maze ends here


def derives_from_trainable(cls: ast.ClassDef, tree: ast.Module, source: Path, dirs: list[str], root: Path) -> bool:
    """Whether `cls`, defined in `tree` (read from `source`), has ray.tune.Trainable among its bases, followed through
    the project's modules (`dirs`: where the run imports them from; every file read lies inside `root`)."""
    return read_class(cls, tree, source, dirs, root).trainable


class ClassRead(NamedTuple):
    """What the source says of a class: whether ray.tune.Trainable is among its bases, the methods it and its
    project bases define, and whether every base was read (False: one comes from elsewhere, so methods may lack
    what it defines)."""

    trainable: bool
    methods: frozenset[str]
    whole: bool


def read_class(cls: ast.ClassDef, tree: ast.Module, source: Path, dirs: list[str], root: Path) -> ClassRead:
    """`cls` and its bases, followed through the project's modules as derives_from_trainable says."""
    pending, seen, methods = [(cls, tree, source)], set(), set()
    trainable, whole = False, True
    while pending and len(seen) < CLASSES_FOLLOWED:
        node, module, path = pending.pop()
        if (path, node.name) in seen:
            continue
        seen.add((path, node.name))
        kinds = ast.FunctionDef | ast.AsyncFunctionDef
        methods.update(item.name for item in node.body if isinstance(item, kinds))
        imported = _imports(module, path)
        for base in node.bases:
            written = _dotted(base)
            if written is None:
                whole = False
                continue
            head, _, rest = written.partition(".")
            origin = imported.get(head)
            if origin is None and written in WRITTEN and _top_level_class(module, head) is None:
                trainable = True
                continue
            if origin is not None and origin[0] is None and ".".join(filter(None, (origin[1], rest))) in TRAINABLE:
                trainable = True
                continue
            found = _base_class(written, origin, module, path, dirs, root)
            if found is not None:
                pending.append(found)
            elif written != "object":
                whole = False
    return ClassRead(trainable, frozenset(methods), whole and not pending)


def _base_class(written: str, origin, module: ast.Module, path: Path, dirs: list[str], root: Path):
    """(class, its module's tree, its file) of a base written `written` in `module`, when the project defines it."""
    from specc.read.files import holds

    head, _, rest = written.partition(".")
    if origin is None:
        local = _top_level_class(module, head) if not rest else None
        return (local, module, path) if local is not None else None
    search, dotted = origin
    parts = [part for part in (dotted, rest) if part]
    owner, _, name = ".".join(parts).rpartition(".")
    if not owner or not name:
        return None
    file = _module_file(owner, search or dirs)
    if file is None or file.suffix != ".py" or not holds(root, file):
        return None
    tree = parsed_module(file, root)
    found = _top_level_class(tree, name) if tree is not None else None
    return (found, tree, file) if found is not None else None


def _imports(module: ast.Module, path: Path) -> dict[str, tuple[list[str] | None, str]]:
    """Each name the module's top level imports -> (where to look for it: None for the run's import path, or the
    directory a relative import starts from; the dotted name there)."""
    names: dict[str, tuple[list[str] | None, str]] = {}
    for node in top_level_statements(module):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    names[alias.asname] = (None, alias.name)
                else:
                    head = alias.name.split(".")[0]
                    names[head] = (None, head)
        elif isinstance(node, ast.ImportFrom):
            search = None
            if node.level:
                start = path.parent
                for _ in range(node.level - 1):
                    start = start.parent
                search = [str(start)]
            for alias in node.names:
                dotted = ".".join(part for part in (node.module, alias.name) if part)
                names[alias.asname or alias.name] = (search, dotted)
    return names


def _top_level_class(module: ast.Module, name: str) -> ast.ClassDef | None:
    found = [node for node in top_level_statements(module) if isinstance(node, ast.ClassDef) and node.name == name]
    return found[-1] if found else None  # the last definition is the one the module ends with


def _dotted(expression: ast.expr) -> str | None:
    """`ray.tune.Trainable` of a base written as names and attributes (`Base[int]`: `Base`); None for anything else."""
    if isinstance(expression, ast.Subscript):
        expression = expression.value
    parts = []
    while isinstance(expression, ast.Attribute):
        parts.append(expression.attr)
        expression = expression.value
    if not isinstance(expression, ast.Name):
        return None
    return ".".join([expression.id, *reversed(parts)])
