"""Imports a compiled file does not use, found by its syntax tree and left out.

The templates' import lists are supersets (what any spec of a shape might need); what the rendered file never reads
is dropped: `import a.b` stays when the file reads `a.b...`, `import a as b` and `from m import n` when it reads
the bound name. Deterministic, and ruff's unused-import rule then finds nothing. The experiment file drops its
unused imports here; the after-training scripts also regroup theirs (specc.compiler.after).
"""

from __future__ import annotations

import ast
import re

IMPORT = re.compile(r"^(?:import (?P<module>[\w.]+)(?: as (?P<alias>\w+))?|from [\w.]+ import (?P<names>[\w, ]+))$")


def names_read(code: str) -> set[str]:
    """Every name the code reads, and every dotted name (`ray.train.torch` gives it and `ray.train`, `ray`)."""
    found = set()
    for node in ast.walk(ast.parse(code)):
        parts = []
        while isinstance(node, ast.Attribute):
            parts.insert(0, node.attr)
            node = node.value
        if isinstance(node, ast.Name):
            parts.insert(0, node.id)
            found |= {".".join(parts[: i + 1]) for i in range(len(parts))}
    return found


def bound(line: str) -> set[str]:
    """The names an import line binds (a module imported by its dotted name: that name)."""
    found = IMPORT.match(line)
    if found["names"]:
        return {name.strip() for name in found["names"].split(",")}
    return {found["alias"] or found["module"]}


def unused_dropped(source: str) -> str:
    """`source` without the top-level import lines that bind nothing it reads."""
    names = names_read(source)
    lines = source.split("\n")
    return "\n".join(line for line in lines if not IMPORT.match(line) or bound(line) & names)
