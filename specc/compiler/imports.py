"""The compiled experiment's imports, less those it does not use.

The templates' import list is a superset (what any spec of this shape might need); what the rendered file never
refers to is dropped here, by its syntax tree: `import a.b` stays when the file uses `a.b...`, `import a as b` and
`from m import n` when it uses the bound name. Deterministic, and ruff's unused-import rule then finds nothing.
"""

from __future__ import annotations

import ast


def unused_dropped(source: str) -> str:
    """`source` without its top-level import lines whose names it never uses."""
    tree = ast.parse(source)
    used_names, chains = _uses(tree)
    drop = set()
    for node in tree.body:
        one_line = isinstance(node, (ast.Import, ast.ImportFrom)) and node.end_lineno == node.lineno
        if one_line and not any(_used(node, alias, used_names, chains) for alias in node.names):
            drop.add(node.lineno)
    lines = source.splitlines(True)
    return "".join(line for number, line in enumerate(lines, 1) if number not in drop)


def _uses(tree: ast.AST) -> tuple[set[str], set[str]]:
    """The names the file loads, and every dotted prefix of the attribute chains it reads (a.b.c: a.b, a.b.c)."""
    names, chains = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            parts, inner = [node.attr], node.value
            while isinstance(inner, ast.Attribute):
                parts.append(inner.attr)
                inner = inner.value
            if isinstance(inner, ast.Name):
                dotted = [inner.id, *reversed(parts)]
                chains.update(".".join(dotted[:end]) for end in range(2, len(dotted) + 1))
    return names, chains


def _used(node: ast.Import | ast.ImportFrom, alias: ast.alias, names: set[str], chains: set[str]) -> bool:
    if isinstance(node, ast.ImportFrom) or alias.asname:
        return (alias.asname or alias.name) in names
    if "." in alias.name:
        return alias.name in chains
    return alias.name in names
