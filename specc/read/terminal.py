"""The one way specc writes to the console: every line a command prints passes here (tests/unit/test_print_gate.py
fails on a module that prints around it).

What a line shows comes from strangers too (spec values, file names, run directories, a job's log), and a terminal
or a CI log acts on some characters rather than showing them. So each line is written escaped, as Python writes a
string (`\\x1b`, `\\u202e`):

- every control character but tab (ESC, BEL, a carriage return that would overwrite the line, DEL, C1), every
  bidirectional control (U+202A-U+202E, U+2066-U+2069, U+200E/F, U+061C), lone surrogates, and any other character
  that is not printable; a line end separates lines, except in `say` and `err`, whose text is one line;
- a GitHub workflow command: a line that would start with `::` (after blanks) has its first colon written
  `\\x3a`, and a legacy one anywhere in a line (`##[error]`, Azure's `##vso[`) has its bracket written `\\x5b`.

specc's own styling is not data: `Styled` text (its colours, a progress line's redraw, the workflow commands of
`--format github`) is written as it is, and is assembled only from pieces already passed through `one_line` or
`escaped`. Structured output escapes in its own syntax, so that it stays valid and the gate finds nothing to change:
`json_text` and `csv_text`.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import re
import sys

WORKFLOW_COMMAND = re.compile(r"^([ \t]*):(?=:)")  # GitHub's runner trims leading blanks, then looks for `::`
LEGACY_COMMAND = re.compile(r"(##[A-Za-z]*)\[")  # `##[error]`, `##vso[task...]`: found anywhere in a line


class Styled(str):
    """Text specc built itself, whose data went through `one_line` or `escaped` first: written as it is. Joining it
    with other text gives a plain str again, which is escaped."""


# -- the escapers -----------------------------------------------------------------------------------------------


def _char(char: str) -> str:
    return char if char.isprintable() or char == "\t" else repr(char)[1:-1]


def _shown(text: str) -> str:
    """`text` with its controls escaped and no legacy workflow command in it, wherever it stands in a line."""
    if not text.isprintable():
        text = "".join(_char(char) for char in text)
    return LEGACY_COMMAND.sub(r"\1\\x5b", text) if "##" in text else text


def _line(line: str) -> str:
    line = _shown(line)
    return WORKFLOW_COMMAND.sub(r"\1\\x3a", line, count=1) if "::" in line else line


def one_line(text: object) -> str:
    """`text` as one printed line: a line end in it is data, written `\\n`, like every other control."""
    return _line(str(text).replace("\n", "\\n"))


def escaped(text: object) -> str:
    """`text` line by line (its line ends kept), each line escaped."""
    return "\n".join(_line(line) for line in str(text).split("\n"))


# -- writing ----------------------------------------------------------------------------------------------------


def _stream(to_stderr: bool):
    return sys.stderr if to_stderr else sys.stdout


def _write(text: str, to_stderr: bool) -> None:
    _stream(to_stderr).write(text)


def say(line: object = "", end: str = "\n") -> None:
    """One line on stdout."""
    _write(line if isinstance(line, Styled) else one_line(line), False)
    _write(end, False)


def err(line: object = "", end: str = "\n") -> None:
    """One line on stderr."""
    _write(line if isinstance(line, Styled) else one_line(line), True)
    _write(end, True)


def write(text: str) -> None:
    """Text of several lines on stdout, as given: no line end added."""
    _write(text if isinstance(text, Styled) else escaped(text), False)


def write_err(text: str) -> None:
    """Text of several lines on stderr, as given: no line end added."""
    _write(text if isinstance(text, Styled) else escaped(text), True)


def flush(to_stderr: bool = False) -> None:
    _stream(to_stderr).flush()


def colour(to_stderr: bool = False) -> bool:
    """Colour only on a terminal, never with NO_COLOR set or TERM=dumb."""
    stream = _stream(to_stderr)
    return stream.isatty() and "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb"


def on_a_terminal(to_stderr: bool = False) -> bool:
    return _stream(to_stderr).isatty()


def is_stderr(stream) -> bool:
    """Whether `stream`, handed over by a library that writes its own messages (argparse), is standard error."""
    return stream is not None and stream is sys.stderr


class Parser(argparse.ArgumentParser):
    """argparse's messages (usage, errors quoting what was typed, help) written through the print gate too: specc's
    command line, and the generators' (`python -m specc.catalog.generate`, `python -m specc.docs.reference`)."""

    def _print_message(self, message, file=None):
        if message:
            (write_err if is_stderr(file) else write)(message)


class Relay:
    """A stream of text that arrives in pieces (a job's log as it is followed), written a whole line at a time so
    that no piece boundary splits what the escaper must see; `close` writes a last unfinished line."""

    def __init__(self, to_stderr: bool = False):
        self.to_stderr, self.pending = to_stderr, ""

    def write(self, piece: str) -> None:
        *lines, self.pending = (self.pending + piece).split("\n")
        for line in lines:
            _write(_line(line) + "\n", self.to_stderr)

    def flush(self) -> None:
        flush(self.to_stderr)

    def close(self) -> None:
        if self.pending:
            _write(_line(self.pending) + "\n", self.to_stderr)
            self.pending = ""
        self.flush()


def pass_on(fd: int, line: bytes) -> None:
    """One line another writer wrote (a script run in this process, to its file descriptor 2), written escaped to
    the file descriptor `fd`; bytes that are not UTF-8 are written as `\\xff`."""
    text = line.decode("utf-8", errors="backslashreplace")
    ended = text.endswith("\n")
    os.write(fd, (_line(text.removesuffix("\n")) + "\n" * ended).encode("utf-8"))


# -- structured output, escaped in its own syntax ---------------------------------------------------------------


def _json_escape(char: str) -> str:
    if char.isprintable():
        return char
    code = ord(char)
    if code > 0xFFFF:  # JSON spells a character past the BMP as its UTF-16 surrogate pair
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


def _json_line(line: str) -> str:
    line = line if line.isprintable() else "".join(_json_escape(char) for char in line)
    return LEGACY_COMMAND.sub(r"\1\\u005b", line) if "##" in line else line


def json_text(value, **dumps) -> str:
    """`json.dumps(value, **dumps)` with every character the gate would escape spelled as a JSON escape (`\\u202e`,
    `##\\u005b`) instead: valid JSON that reads back to the same value, and that the gate writes unchanged. Outside
    strings JSON holds only printable ASCII and line ends, so every such character is inside a string."""
    return "\n".join(_json_line(line) for line in json.dumps(value, ensure_ascii=False, **dumps).split("\n"))


def csv_text(rows) -> str:
    """Rows of cells as CSV (`\\n` line ends), each cell escaped as `one_line` escapes it: a line end, a tab or a
    control in a value is written escaped, never raw, so every row is one line of plain cells. A row whose first
    cell would start a workflow command is written with every cell quoted, so that its line starts with `"` and the
    cell reads back as it was."""
    out = io.StringIO()
    plain, quoted = csv.writer(out, lineterminator="\n"), csv.writer(out, lineterminator="\n", quoting=csv.QUOTE_ALL)
    for row in rows:
        cells = [_shown(str(cell).replace("\n", "\\n").replace("\t", "\\t")) for cell in row]
        opens_command = bool(cells) and cells[0].lstrip(" \t").startswith("::")
        (quoted if opens_command else plain).writerow(cells)
    return out.getvalue()
