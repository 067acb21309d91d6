"""Issue 53: every file specc reads, lists or writes goes through the gates of specc/read/files.py. This test walks
every module of specc/ and fails, naming the line, on a call that opens, reads, walks, lists, renames or writes a
file anywhere else: a new path around the gates is how the last release's holes came back."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1].parent / "specc"
GATE = PACKAGE / "read" / "files.py"
RUNTIME = PACKAGE / "runtime"

FUNCTIONS = {"open"}  # the builtin
MODULE_CALLS = {
    "os": {
        "open",
        "fdopen",
        "walk",
        "listdir",
        "scandir",
        "replace",
        "rename",
        "renames",
        "link",
        "symlink",
        "unlink",
        "remove",
        "removedirs",
        "rmdir",
        "mkfifo",
        "truncate",
        "makedirs",
        "mkdir",
    },
    "io": {"open", "FileIO"},
    "codecs": {"open"},
    "glob": {"glob", "iglob"},
    "shutil": {"copy", "copy2", "copyfile", "copytree", "move", "rmtree", "make_archive", "unpack_archive"},
    "tempfile": {"mkstemp", "NamedTemporaryFile", "TemporaryFile", "SpooledTemporaryFile"},
    "tarfile": {"open"},
    "zipfile": {"ZipFile"},
    "json": {"load", "dump"},
    "yaml": {"load", "safe_load", "dump", "safe_dump"},  # text in: specc parses text the gate read
}
METHODS = {
    "read_text",
    "read_bytes",
    "write_text",
    "write_bytes",
    "iterdir",
    "rglob",
    "glob",
    "touch",
    "symlink_to",
    "hardlink_to",
    "mkdir",
    "rename",
    "unlink",
    "rmdir",
}
PATH_OPEN = "open"  # Path(...).open(): any `.open(` on something that is not a module named above

# Calls that are not file access though they share a name, each with why.
ALLOWED = {
    ("specc/execute/run.py", "tempfile.TemporaryFile"): "an unnamed file holding native libraries' start-up lines",
    ("specc/results/after.py", "tempfile.TemporaryFile"): "an unnamed file holding native libraries' start-up lines",
    ("specc/spec/dump.py", "yaml.dump"): "YAML text made in memory, written by its caller through the gate",
}


def calls(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id in FUNCTIONS:
            yield node.lineno, func.id
        elif isinstance(func, ast.Attribute):
            owner = func.value.id if isinstance(func.value, ast.Name) else None
            if owner in MODULE_CALLS:
                if func.attr in MODULE_CALLS[owner]:
                    yield node.lineno, f"{owner}.{func.attr}"
            elif func.attr in METHODS or func.attr == PATH_OPEN:
                yield node.lineno, f".{func.attr}"


def around_the_gates() -> list[str]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == GATE or path.parent == RUNTIME:  # the compiled scripts' runtime: tests/unit/runtime/test_module.py
            continue
        where = path.relative_to(PACKAGE.parent).as_posix()
        found += [f"{where}:{line}: {name}(...)" for line, name in calls(path) if (where, name) not in ALLOWED]
    return found


def test_no_module_reads_walks_or_writes_files_around_the_gates():
    assert around_the_gates() == []


def test_the_check_sees_what_it_looks_for(tmp_path):
    """The check itself can fail: each kind of call it looks for is found in a module written to hold one."""
    module = tmp_path / "m.py"
    module.write_text(
        "import os, glob, shutil\nfrom pathlib import Path\n"
        "open('x')\nos.walk('.')\nos.listdir('.')\nglob.glob('*')\nshutil.copy('a', 'b')\n"
        "Path('x').read_text()\nPath('x').write_bytes(b'')\nPath('.').rglob('*')\nPath('x').open()\n"
        "os.replace('a', 'b')\n"
    )
    assert [name for _, name in calls(module)] == [
        "open",
        "os.walk",
        "os.listdir",
        "glob.glob",
        "shutil.copy",
        ".read_text",
        ".write_bytes",
        ".rglob",
        ".open",
        "os.replace",
    ]
