"""The files of a run directory, read as files from a stranger: regular, bounded, inside the run, parsed strictly.

A run directory may come from someone else (a shared cluster, a colleague's tarball), so nothing in it is
trusted. Every file is read with specc.read.files.read_file, the read gate: a regular file only (a FIFO would block, a
device never end), opened without blocking, and no more of it than its size bound plus one byte. A file that is
a symbolic link leading out of the run directory is not read at all (a results.csv linked to /etc/passwd must
not be shown). JSON is parsed strictly and never deeper than MAX_DEPTH; a number Python cannot draw (an integer
past a float's range) is kept as its digits; a string that is not Unicode text (a lone surrogate from a `\\ud800`
escape) keeps its escape. CSV tables are read row by row, a UTF-8 byte-order mark is not part of the first column,
and a last row with no line end (a file cut off while written) is said to be so.

Nothing here raises on what a file holds: each problem is a Problem (W307 unreadable, W308 malformed) naming the
file, appended to the `warnings` list the reader was given, and the caller goes on with the rest of the run. A
missing file is not a problem here: which files a run has depends on its shape, and the callers say what is
missing when it matters. Every text in a warning is `printable`: a file cannot write escape sequences to a
terminal through specc.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os

from specc.read.files import is_inside
from specc.spec.errors import Problem, printable

TABLE_BYTES = 64 << 20  # results.csv, a trial's result.json or progress.csv: a long search's, with room to spare
SMALL_BYTES = 4 << 20  # best.json: one trial's config and metrics
MAX_DEPTH = 64  # nesting of a JSON value: a config or a metric is a few levels deep
BOM = "\ufeff"


class RunFiles:
    """Reads the files of the run in `run_dir`; appends what is wrong with them to `warnings`."""

    def __init__(self, run_dir: str, warnings: list[Problem]):
        self.run_dir = run_dir
        self.warnings = warnings
        self.root = os.path.realpath(run_dir)

    def path(self, name: str) -> str:
        return os.path.join(self.run_dir, name)

    def warn(self, code: str, name: str, message: str, line: int | None = None) -> None:
        self.warnings.append(Problem(code, printable(message), printable(self.path(name)), line))

    def left_out(self, name: str, message: str, line: int | None = None) -> None:
        """W307: `name` cannot be read, and the run is shown without it."""
        self.warn("W307", name, f"{message}; left out", line)

    def inside(self, name: str) -> bool:
        """Whether `name` (symbolic links followed) is a file of the run directory, and not of elsewhere."""
        real = os.path.realpath(self.path(name))
        return real != self.root and is_inside(real, self.root)  # the run directory itself is no file of it

    def exists(self, name: str) -> bool:
        """Whether `name` is a regular file of the run directory (what a suggested command may name)."""
        return self.inside(name) and os.path.isfile(self.path(name))

    def raw(self, name: str, limit: int) -> bytes | None:
        """The bytes of `name`; None (with a W307 unless it is missing) when they cannot be read."""
        from specc.read.files import read_file

        path = self.path(name)
        if "\0" in path:
            self.left_out(name, "a file name cannot hold a NUL character")
            return None
        if not self.inside(name):
            if os.path.lexists(path):
                target = os.path.realpath(path)
                self.left_out(name, f"a symbolic link out of the run directory (to {target})")
            return None
        try:
            raw = read_file(path, limit, root=self.root)
        except FileNotFoundError:
            return None
        except OSError as error:
            self.left_out(name, f"cannot be read: {error.strerror or error}")
            return None
        if len(raw) > limit:
            self.left_out(name, f"larger than {limit:,} bytes")
            return None
        return raw

    def text(self, name: str, limit: int) -> str | None:
        """The UTF-8 text of `name` (a byte-order mark dropped); None when it is missing or cannot be read."""
        raw = self.raw(name, limit)
        if raw is None:
            return None
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            line = raw.count(b"\n", 0, error.start) + 1
            self.left_out(name, f"not UTF-8 text (byte 0x{raw[error.start]:02x})", line)
            return None
        return text.removeprefix(BOM)

    def json(self, name: str, limit: int = SMALL_BYTES):
        """The JSON value in `name`; None when it is missing, unreadable or malformed (a W307 or W308 says which).
        NaN and Infinity, which JSON does not allow but Python's json writes, are read as the float they spell,
        with a W308 naming where the first one is."""
        text = self.text(name, limit)
        if text is None:
            return None
        try:
            value, spelled = parse_json(text)
        except ValueError as error:
            line = getattr(error, "lineno", None)
            self.warn("W308", name, f"not valid JSON: {getattr(error, 'msg', error)}; left out", line)
            return None
        if spelled:
            where, shown = spelled[0]
            more = f" (and {len(spelled) - 1} more)" if len(spelled) > 1 else ""
            at = f" at {where}" if where else ""
            self.warn("W308", name, f"holds {shown}{at}{more}, a number JSON does not allow; it is shown as {shown}")
        return value

    def table(self, name: str, limit: int = TABLE_BYTES) -> tuple[list[str], list[tuple[int, list[str]]]] | None:
        """The header and the rows (line, cells) of the CSV table in `name`; None when it is missing or cannot be
        read. A row with the wrong number of cells is left out with a W308; a CSV error stops the reading there
        (what came before is kept); a last row with no line end is said to be cut off."""
        text = self.text(name, limit)
        if text is None:
            return None
        return read_table(text, lambda message, line: self.warn("W308", name, message, line))


def read_table(text: str, warn) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """(header, [(line, cells)...]) of CSV text; `warn(message, line)` hears of each row left out or doubtful.
    An empty text gives an empty header."""
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    rows: list[tuple[int, list[str]]] = []
    header: list[str] = []
    while True:
        start = reader.line_num + 1
        try:
            cells = next(reader)
        except StopIteration:
            break
        except csv.Error as error:
            cut = "unexpected end of data" in str(error)
            reason = "cut off inside a quoted cell" if cut else f"not valid CSV ({error})"
            warn(f"line {start}: {reason}; it and any line after it are left out", start)
            break
        if not header:
            header = cells
            if not header:
                continue  # blank lines before the header
        elif cells:
            rows.append((start, cells))
    complete = not text or text.endswith(("\n", "\r"))
    if rows and not complete:
        line, cells = rows[-1]
        if len(cells) != len(header):
            rows.pop()
            warn(f"line {line}: the last row has no line end and {len(cells)} of {len(header)} cells: "
                 "it was cut off; left out", line)  # fmt: skip
        else:
            warn(f"line {line}: the last row has no line end: it may be cut off, and is shown as read", line)
    kept = []
    for line, cells in rows:
        if len(cells) == len(header):
            kept.append((line, cells))
        else:
            warn(f"line {line}: {len(cells)} cells, but the header names {len(header)} columns; left out", line)
    return header, kept


def parse_json(text: str) -> tuple[object, list[tuple[str, str]]]:
    """A JSON value, and where it holds a number that is not finite ((key path, "nan" | "inf" | "-inf")...):
    NaN or Infinity spelled out, as Python's json writes them, or a literal past a float's range (1e999). Raises
    ValueError (a json.JSONDecodeError, with its line, where json gives one) for what is not JSON or nests too
    deep."""
    value = load_json(text)
    return value, list(_non_finite(value, ""))


def load_json(text: str):
    """json.loads, bounded: ValueError (never RecursionError) past MAX_DEPTH; the value made `plain`."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise ValueError(f"it nests more than {MAX_DEPTH} levels deep") from None
    if depth(value) > MAX_DEPTH:
        raise ValueError(f"it nests more than {MAX_DEPTH} levels deep")
    return plain(value)


def depth(value) -> int:
    """How deep lists and maps nest in `value` (a scalar is 0), counted without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, (list, dict)):
            deepest = max(deepest, level)
            stack.extend((child, level + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def plain(value):
    """A parsed value made safe to show and draw: an integer too large for a float is its digits, a string that
    is not Unicode text keeps its escapes. `value` nests at most MAX_DEPTH levels (callers check)."""
    if isinstance(value, bool) or value is None or isinstance(value, float):
        return value
    if isinstance(value, int):
        return value if abs(value) < 1 << 1000 else str(value)
    if isinstance(value, str):
        return _text(value)
    if isinstance(value, list):
        return [plain(item) for item in value]
    if isinstance(value, dict):
        return {_text(str(key)): plain(item) for key, item in value.items()}
    return _text(str(value))


def _text(text: str) -> str:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def _non_finite(value, where: str):
    """(key path, how it is shown) of each non-finite float in `value`, in document order."""
    if isinstance(value, float) and not math.isfinite(value):
        yield where, "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _non_finite(item, f"{where}.{key}" if where else key)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _non_finite(item, f"{where}[{index}]")
