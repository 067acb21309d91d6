"""The package is laid out as the pipeline (ARCHITECTURE.md): one subpackage per stage, the doors at the top, and
every import runs forward along the pipeline. A module that imports a later stage, or a door, fails here with
the line to move; so does a new module dropped at the top of specc/."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "specc"
STAGES = ("spec", "read", "catalog", "check", "plan", "compiler", "execute", "results", "docs")  # in pipeline order
DOORS = ("__init__", "__main__", "api", "cli", "output", "pytest_plugin")
# The compiled scripts' runtime: no stage but their text, which any stage may hand out (it imports no specc)
RUNTIME = "runtime"


def modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def dotted(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def specc_imports(path: Path) -> list[tuple[int, str]]:
    """(line, imported module or name) for every import of specc in a module, at the top or inside a function."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level:
            raise AssertionError(f"{path}:{node.lineno}: a relative import; specc's modules import absolutely")
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "specc":
            found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names if alias.name.split(".")[0] == "specc"]
    return found


def place(name: str) -> str:
    """The stage (or 'door') a dotted specc name lives in: specc.compiler.resolve.plan -> compiler."""
    parts = name.split(".")
    if len(parts) > 1 and parts[1] in (*STAGES, RUNTIME):
        return parts[1]
    return "door"


def backward_arrows() -> list[str]:
    arrows = []
    for path in modules():
        here = place(dotted(path))
        if here == "door":
            continue
        for line, name in specc_imports(path):
            there = place(name)
            if RUNTIME in (here, there):  # specc_runtime.py itself imports no specc: tests/unit/runtime/test_module.py
                continue
            if there == "door" or STAGES.index(there) > STAGES.index(here):
                where = path.relative_to(PACKAGE.parent)
                arrows.append(f"{where}:{line}: the {here} stage imports {name} ({there}), which comes after it")
    return arrows


def test_every_import_runs_forward_along_the_pipeline():
    assert backward_arrows() == []


def test_the_top_of_the_package_holds_only_the_doors_and_the_stages():
    top = {path.stem for path in PACKAGE.glob("*.py")}
    packages = {path.name for path in PACKAGE.iterdir() if (path / "__init__.py").is_file()}
    assert top == set(DOORS)
    assert packages == {*STAGES, RUNTIME}


@pytest.mark.parametrize("stage", STAGES)
def test_each_stage_says_what_enters_and_what_leaves(stage):
    doc = ast.get_docstring(ast.parse((PACKAGE / stage / "__init__.py").read_text(encoding="utf-8"))) or ""
    assert "Enters:" in doc and "Leaves:" in doc, f"specc/{stage}/__init__.py"


def test_the_templates_readme_maps_every_template():
    """templates/README.md names each template (a brace group names several: torch/model/{mlp,cnn}.py.j2)."""
    templates = PACKAGE.parent / "templates"
    readme = (templates / "README.md").read_text(encoding="utf-8")
    named = set()
    for folder, group in re.findall(r"`([\w/]+/)\{([\w,]+)\}\.py\.j2`", readme):
        named |= {f"{folder}{name}.py.j2" for name in group.split(",")}
    named |= set(re.findall(r"`([\w/]+\.(?:py|yaml)\.j2)`", readme))
    present = {path.relative_to(templates).as_posix() for path in templates.rglob("*.j2")}
    assert present - named == set(), "templates the README does not map"
    assert named - present == set(), "templates the README names that do not exist"


def test_the_check_finds_a_backward_arrow(tmp_path, monkeypatch):
    """The walk itself: a stage importing a later one, or a door, is reported with its line."""
    package = tmp_path / "specc"
    for stage in ("read", "compiler"):
        (package / stage).mkdir(parents=True)
        (package / stage / "__init__.py").write_text('"""Enters: x. Leaves: y."""\n')
    (package / "read" / "loader.py").write_text(
        "from specc.compiler.render import render\n\n\ndef f():\n    from specc import api\n"
    )
    (package / "compiler" / "render.py").write_text("from specc.read.loader import load_raw\n")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", package)
    assert backward_arrows() == [
        "specc/read/loader.py:1: the read stage imports specc.compiler.render.render (compiler), which comes after it",
        "specc/read/loader.py:5: the read stage imports specc.api (door), which comes after it",
    ]
