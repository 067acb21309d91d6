"""Every line specc prints goes through one escaper, specc/read/terminal.py (issue 53, the print gate): a module that
prints around it fails here, naming the line. Then the gate itself: what it escapes, what it keeps, and the
structured formats it writes in their own syntax."""

from __future__ import annotations

import ast
import csv
import io
import json
import sys
from pathlib import Path

import pytest

from specc.read import terminal

PACKAGE = Path(__file__).resolve().parents[2] / "specc"
GATE = PACKAGE / "read" / "terminal.py"
STREAMS = {"stdout", "stderr", "__stdout__", "__stderr__"}
STREAM_CHECKS = {"flush", "isatty", "fileno"}  # asking a stream these writes nothing
CONSOLE_FILES = {1, 2, "/dev/tty", "/dev/stdout", "/dev/stderr", "/dev/fd/1", "/dev/fd/2"}
PRINTERS = {  # module -> functions that write to the console themselves
    "logging": {"StreamHandler", "basicConfig"},
    "pprint": {"pprint", "pp"},
    "traceback": {"print_exc", "print_exception", "print_stack", "print_tb", "print_last"},
}
RAW_WRITERS = {"os.write", "os.fdopen", "open", "io.open", "builtins.open"}  # given a console's fd or name
# Writers outside the files this change could edit, each with why it is not a hole today and what would close it.
KNOWN = {
    ("specc/execute/submit.py", "follow"): "`out` defaults to sys.stdout; the CLI passes terminal.Relay()",
}


def aliases(tree: ast.AST) -> dict[str, str]:
    """Local name -> module, for `import sys`, `import os as o`, and `from sys import stdout` (-> "sys.stdout")."""
    found = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update({alias.asname or alias.name: alias.name for alias in node.names})
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.update({alias.asname or alias.name: f"{node.module}.{alias.name}" for alias in node.names})
    return found


def dotted(node: ast.AST, names: dict[str, str]) -> str | None:
    """`sys.stdout.write` as written, its first name resolved through the module's imports."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([names.get(node.id, node.id), *reversed(parts)])


def _console_file(call: ast.Call, names: dict[str, str]) -> bool:
    """Its first argument is fd 1 or 2, a console's device, or `sys.stdout.fileno()`."""
    first = call.args[0] if call.args else None
    if isinstance(first, ast.Call):
        return _a_stream(dotted(first.func, names))
    return isinstance(first, ast.Constant) and first.value in CONSOLE_FILES


def _writes_raw(call: ast.Call, name: str | None, names: dict[str, str]) -> bool:
    return name in RAW_WRITERS and _console_file(call, names)


def _printer(name: str | None) -> bool:
    module, _, function = (name or "").rpartition(".")
    return function in PRINTERS.get(module, ())


def _a_stream(name: str | None) -> bool:
    """`sys.stdout`, `sys.stderr.write`, `sys.__stdout__.buffer`: one of the process's console streams, or a part."""
    parts = (name or "").split(".")
    return len(parts) >= 2 and parts[0] == "sys" and parts[1] in STREAMS


def violations_in(path: Path, tree: ast.AST) -> list[tuple[int, str, str]]:
    """(line, enclosing function, what) for each way `tree` writes to the console around the gate."""
    names, parents, found = aliases(tree), {}, []
    for parent in ast.walk(tree):
        for child in ast.iter_child_nodes(parent):
            parents[child] = parent
    for node in ast.walk(tree):
        name = dotted(node.func, names) if isinstance(node, ast.Call) else None
        if isinstance(node, ast.Call) and (name == "print" or _printer(name) or _writes_raw(node, name, names)):
            found.append((node.lineno, f"{name}(...)"))
        elif isinstance(node, (ast.Attribute, ast.Name)) and dotted(node, names) in {f"sys.{s}" for s in STREAMS}:
            above = parents.get(node)
            if isinstance(above, ast.Attribute) and above.attr in STREAM_CHECKS:
                continue  # sys.stdout.flush(), .isatty(), .fileno(): nothing written
            found.append((node.lineno, dotted(above if isinstance(above, ast.Attribute) else node, names)))
    return [(line, _function(tree, line), what) for line, what in sorted(found)]


def _function(tree: ast.AST, line: int) -> str:
    around = [
        node
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno <= line <= node.end_lineno
    ]
    return max(around, key=lambda node: node.lineno).name if around else "<module>"


def around_the_gate(package: Path = PACKAGE) -> list[str]:
    found = []
    for path in sorted(package.rglob("*.py")):
        if path == package / "read" / "terminal.py" or path.parent == package / "runtime":
            continue  # the runtime is the compiled scripts' code, which prints as a script does
        where = path.relative_to(package.parent).as_posix()
        for line, function, what in violations_in(path, ast.parse(path.read_text(encoding="utf-8"))):
            if (where, function) not in KNOWN:
                found.append(f"{where}:{line}: {what} in {function}(): print through specc.read.terminal")
    return found


def test_nothing_in_specc_prints_around_the_gate():
    assert around_the_gate() == []


def test_the_known_writers_are_still_there():
    """An entry of KNOWN that no longer matches anything is stale: remove it."""
    for (where, function), why in KNOWN.items():
        path = PACKAGE.parent / where
        assert any(f == function for _, f, _ in violations_in(path, ast.parse(path.read_text()))), (where, why)


def test_the_check_finds_each_way_around(tmp_path):
    (tmp_path / "specc").mkdir()
    (tmp_path / "specc" / "leaky.py").write_text(
        "import os\nimport sys as system\nfrom sys import stderr\nimport logging\n\n\n"
        "def f(x):\n"
        "    print(x)\n"
        "    system.stdout.write(x)\n"
        "    system.stderr.writelines([x])\n"
        "    stderr.write(x)\n"
        "    out = system.__stdout__\n"
        "    os.write(2, x)\n"
        "    os.fdopen(system.stdout.fileno(), 'w')\n"
        "    open('/dev/tty', 'w').write(x)\n"
        "    logging.basicConfig()\n"
        "    os.fdopen(3, 'w').write(x)\n"
        "    system.stdout.flush()\n"
        "    return system.stderr.isatty()\n"
    )
    found = around_the_gate(tmp_path / "specc")
    assert [line.split(": ")[0].rsplit(":", 1)[1] for line in found] == [str(n) for n in range(8, 17)]
    assert found[0] == "specc/leaky.py:8: print(...) in f(): print through specc.read.terminal"
    assert found[3] == "specc/leaky.py:11: sys.stderr.write in f(): print through specc.read.terminal"


# -- the gate ---------------------------------------------------------------------------------------------------

HOSTILE = "a\x1b[31mred\x07\u202eevil\u2066\x85\x9b\ud800\x7f\r!"


def test_controls_bidi_and_surrogates_are_escaped_tab_kept():
    shown = terminal.one_line(HOSTILE + "\tz\nline2")
    assert shown == "a\\x1b[31mred\\x07\\u202eevil\\u2066\\x85\\x9b\\ud800\\x7f\\r!\tz\\nline2"
    assert shown.replace("\t", "").isprintable()


def test_line_ends_kept_where_the_text_is_lines():
    assert terminal.escaped("one\x1b\ntwo\n") == "one\\x1b\ntwo\n"


@pytest.mark.parametrize(
    ("line", "shown"),
    [
        ("::error file=x::y", "\\x3a:error file=x::y"),
        ("  \t::warning::y", "  \t\\x3a:warning::y"),
        ("a ::error::y", "a ::error::y"),  # only at the start of a line is it a command
        ("x ##[error]y", "x ##\\x5berror]y"),  # the legacy form is one anywhere
        ("##vso[task.setvariable variable=a]b", "##vso\\x5btask.setvariable variable=a]b"),
        ("# heading [x] ## [y]", "# heading [x] ## [y]"),
    ],
)
def test_a_workflow_command_cannot_be_forged(line, shown):
    assert terminal.one_line(line) == shown
    assert terminal.escaped(f"ok\n{line}") == f"ok\n{shown}"


def test_escaping_twice_changes_nothing_more():
    once = terminal.escaped(HOSTILE + "\n::error::x ##[warning]")
    assert terminal.escaped(once) == once


def test_styled_text_is_written_as_it_is(capsys):
    terminal.err(terminal.Styled("\r\033[K"), end="")
    terminal.say(terminal.Styled("\033[1mbold\033[0m") + "\033[0m")  # joined with plain text: plain again
    captured = capsys.readouterr()
    assert captured.err == "\r\033[K"
    assert captured.out == "\\x1b[1mbold\\x1b[0m\\x1b[0m\n"


def test_say_and_err_print_one_line_write_keeps_lines(capsys):
    terminal.say("a\nb")
    terminal.err("c\x1b")
    terminal.write("d\ne\x07\n")
    terminal.write_err("::f\n")
    captured = capsys.readouterr()
    assert captured.out == "a\\nb\nd\ne\\x07\n"
    assert captured.err == "c\\x1b\n\\x3a:f\n"


def test_a_relay_sees_whole_lines_whatever_the_pieces(capsys):
    relay = terminal.Relay()
    for piece in ["ok #", "#[err", "or]x\n:", ":error::y\nlast\x1b"]:
        relay.write(piece)
    assert capsys.readouterr().out == "ok ##\\x5berror]x\n\\x3a:error::y\n"
    relay.close()
    assert capsys.readouterr().out == "last\\x1b\n"


def test_a_line_passed_on_to_a_file_descriptor(tmp_path):
    with open(tmp_path / "out", "wb") as out:
        terminal.pass_on(out.fileno(), b"::error::x \x1b[2J\xff\n")
        terminal.pass_on(out.fileno(), b"no end")
    assert (tmp_path / "out").read_bytes() == b"\\x3a:error::x \\x1b[2J\\xff\nno end"


VALUES = ["plain", "é 😀", HOSTILE, "::error file=x::y", "a\nb", "##[error]x", "\U000e0041 tag", "\u2028", "\ud800"]


def test_json_text_reads_back_the_same_and_the_gate_changes_nothing():
    document = {"values": VALUES, HOSTILE: {"::k": "##[x", "##vso[y": "z"}}
    text = terminal.json_text(document, indent=2)
    assert text.isascii() is False and "é 😀" in text  # printable text stays as it is
    assert json.loads(text) == document
    assert terminal.escaped(text) == text


def test_csv_text_keeps_a_row_a_line_and_its_values_but_controls():
    rows = [["name", "value"], *([value, value] for value in VALUES), ["  ::warning::z", "1"]]
    text = terminal.csv_text(rows)
    assert len(text.splitlines()) == len(rows)
    assert terminal.escaped(text) == text
    read = list(csv.reader(io.StringIO(text)))
    assert read[-1] == ["  ::warning::z", "1"]  # quoted, so its line starts with `"`
    for (value, _), (cell, _) in zip(rows, read, strict=True):
        assert cell == value or cell == terminal.one_line(value).replace("\\x3a:", "::", 1)


def test_colour_follows_the_stream(monkeypatch):
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    monkeypatch.setattr(sys, "stderr", Terminal())
    assert terminal.colour(to_stderr=True) and not terminal.colour()
