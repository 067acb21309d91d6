"""Plan -> Python source: the one configured Jinja environment, the `py` literal filter, and the checks
that what comes out is a program (ast.parse) made only of quoted spec values.

Templates see resolved values only. A spec value enters the source through `py` (repr-based; NaN and
infinities spelled out), so no spec string can become code; trusted code passes only as `Code`;
names that become identifiers go through `identifier`.
"""

from __future__ import annotations

import ast
import functools
import keyword
import math
import os
import subprocess
import sys
from pathlib import Path

from specc.read.terminal import escaped
from specc.spec.errors import Problem, SpecError, UsageError

WIDTH = 120  # the generated code's line length (ruff format's, as configured in pyproject.toml)
PACKAGE = Path(__file__).resolve().parents[1]
BUILTIN_TEMPLATES = PACKAGE / "templates"  # inside the wheel
if not BUILTIN_TEMPLATES.is_dir():  # a source checkout: templates/ beside the package
    BUILTIN_TEMPLATES = PACKAGE.parent / "templates"


class Code(str):
    """Trusted Python source written by specc itself (never spec text); `py` emits it unquoted."""


class Multiline(str):
    """Text that `py` lays out as a triple-quoted string (a docstring), still a quoted literal."""


def literal(value) -> str:
    """A Python literal for a resolved spec value, on one line."""
    if isinstance(value, Code):
        return str(value)
    if isinstance(value, Multiline):
        return _triple_quoted(value)
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, float):
        if math.isnan(value):
            return 'float("nan")'
        if math.isinf(value):
            return 'float("inf")' if value > 0 else '-float("inf")'
        return repr(value)
    if isinstance(value, int | str):  # a CI log's `##[` command as an escape: the print gate's rule, in Python
        return repr(value) if not isinstance(value, str) else escaped(_string(value))
    if isinstance(value, list):
        return "[" + ", ".join(literal(item) for item in value) + "]"
    if isinstance(value, tuple):
        inner = ", ".join(literal(item) for item in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{literal(k)}: {literal(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"no Python literal for {type(value).__name__}")


def _triple_quoted(text: str) -> str:
    """A \"\"\"-quoted literal of `text`: backslashes, quote runs and unprintable characters escaped."""
    out = []
    for char in text.replace("\\", "\\\\"):
        out.append(char if char == "\n" or char.isprintable() else repr(char)[1:-1])
    # a line opening `::` or holding `##[` (a CI log showing the file acts on them) in the print gate's escapes,
    # which Python reads back as the same text
    body = escaped("".join(out).replace('"', '\\"'))
    source = f'"""{body}"""'
    if ast.literal_eval(source) != text:  # never emit a literal that reads back differently
        raise ValueError("docstring does not round-trip")
    return source


def _string(text: str) -> str:
    """A string literal in double quotes (ruff format's preference), or repr's quotes when the text has '"'."""
    if '"' in text:
        return repr(text)
    return '"' + "".join(_escaped(char) for char in text) + '"'


def _escaped(char: str) -> str:
    if char == "\\":
        return "\\\\"
    return char if char.isprintable() else repr(char)[1:-1]


def formatted(value, indent: int = 0, prefix: str = "", suffix: str = "") -> str:
    """`prefix + literal + suffix` as ruff format lays it out: on one line when it fits in WIDTH, else the
    collection exploded one element per line with a trailing comma (recursively)."""
    flat = literal(value)
    if indent + len(prefix) + len(flat) + len(suffix) <= WIDTH or not isinstance(value, list | dict | tuple):
        return prefix + flat + suffix
    pad = " " * (indent + 4)
    if isinstance(value, dict):
        items = [formatted(v, indent + 4, f"{literal(k)}: ", ",") for k, v in value.items()]
        opening, closing = "{", "}"
    else:
        items = [formatted(v, indent + 4, "", ",") for v in value]
        opening, closing = ("[", "]") if isinstance(value, list) else ("(", ")")
    body = "\n".join(pad + item for item in items)
    return f"{prefix}{opening}\n{body}\n{' ' * indent}{closing}{suffix}"


def identifier(name: str) -> str:
    """`name` if it is safe to use as a Python identifier, else a SpecError (never silently mangled)."""
    if not name.isidentifier() or keyword.iskeyword(name):
        raise SpecError([Problem("E107", f"{name!r} cannot be a Python identifier")])
    return name


def environment(user_templates: str | os.PathLike | None = None):
    """The one Jinja environment: user templates (if any) ahead of the built-in ones.

    The built-in templates' own is made once a process and keeps its compiled templates: compiling them again took
    0.67 s of each 0.8 s compile (an in-process `specc run`, a test suite). Jinja checks each template's file for
    changes as it hands it out, so an edited template is read again. With user templates it is made anew each time:
    a template added to the directory since the last compile would otherwise be passed over for the built-in one
    cached under its name."""
    if user_templates:
        return _configured([str(user_templates), str(BUILTIN_TEMPLATES)])
    return _built_in()


@functools.cache
def _built_in():
    return _configured([str(BUILTIN_TEMPLATES)])


def _configured(search: list[str]):
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(search),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["py"] = _defined(literal)
    env.filters["pyfmt"] = _defined(formatted)
    env.filters["identifier"] = _defined(identifier)
    return env


def _defined(function):
    """A filter that lets an undefined value raise Jinja's own UndefinedError (which names it)."""
    import jinja2

    def apply(value, *args):
        if isinstance(value, jinja2.Undefined):
            str(value)  # StrictUndefined raises here
        return function(value, *args)

    return apply


def render(
    template: str, context: dict, user_templates: str | os.PathLike | None = None, only_used_imports: bool = False
) -> str:
    """Render `template`, make sure the result is a Python program, and lay it out as `ruff format` does;
    `only_used_imports`: without the imports it does not use (specc.compiler.imports)."""
    import jinja2

    if user_templates:
        _check_user_templates(Path(user_templates))
    try:
        source = _tidy(environment(user_templates).get_template(template).render(**context))
    except jinja2.TemplateError as error:  # most likely a user template (--templates): say where
        raise UsageError(f"template error: {_template_position(error)}{error.message or error}") from None
    _parse(source, user_templates)
    if only_used_imports:
        from specc.compiler.imports import unused_dropped

        source = unused_dropped(source)
    return _parse(ruff_format(source))


def _check_user_templates(directory: Path) -> None:
    """A template in --templates DIR that replaces no built-in one and that none of DIR's templates includes would
    silently do nothing (say, one named as the built-in templates were named before they moved): refused, with the
    built-in name it most likely means."""
    import difflib

    builtin = sorted(_template_files(BUILTIN_TEMPLATES))
    mine = _template_files(directory)
    texts = "\n".join(_template_text(path, directory) for path in mine.values())
    for name in mine:
        if name not in builtin and f'"{name}"' not in texts and f"'{name}'" not in texts:
            close = difflib.get_close_matches(name, builtin, n=1, cutoff=0.5)
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise UsageError(
                f"--templates {directory}: {name} replaces no built-in template and none of yours includes it"
                f"{hint}; templates/README.md lists the built-in names"
            )


def _parse(source: str, templates=None) -> str:
    try:
        ast.parse(source)
    except SyntaxError as error:  # a template bug, or a user template's: show where
        line = source.splitlines()[error.lineno - 1].strip() if error.lineno else ""
        where = _template_with(line, templates)
        message = f"the rendered script does not parse: {error.msg} at line {error.lineno}: {line}{where}"
        raise UsageError(message) from None
    return source


def _template_position(error) -> str:
    """'file.j2:12: ' from a syntax error, or from the template frame of an error raised while rendering."""
    if getattr(error, "filename", None):
        return f"{error.filename}:{error.lineno}: "
    position = ""
    traceback = error.__traceback__
    while traceback is not None:
        if traceback.tb_frame.f_code.co_filename.endswith(".j2"):
            position = f"{traceback.tb_frame.f_code.co_filename}:{traceback.tb_lineno}: "
        traceback = traceback.tb_next
    return position


def _template_with(line: str, templates) -> str:
    """' (from DIR/x.py.j2)' for the user template that holds `line`: where to look for the mistake."""
    for path in _template_files(Path(templates)).values() if templates else []:
        if line and line in _template_text(path, templates):
            return f" (from {path})"
    return ""


TEMPLATE_BYTES = 1 << 20


def _template_files(directory: Path) -> dict[str, str]:
    """The .j2 files below `directory` by their name relative to it, in order (the read gate's walk)."""
    from specc.read.files import walk_files

    paths = walk_files(directory, keep_file=lambda name: name.endswith(".j2"))
    return {Path(path).relative_to(directory).as_posix(): path for path in sorted(paths)}


def _template_text(path: str, directory) -> str:
    """A template's text as the read gate gives it ('' when it cannot be read: Jinja then says why)."""
    from specc.read.files import read_file

    try:
        return read_file(path, TEMPLATE_BYTES, root=directory)[:TEMPLATE_BYTES].decode("utf-8", errors="replace")
    except OSError:
        return ""


def ruff_format(source: str) -> str:
    """The source as ruff format (the version specc pins) lays it out, with specc's own settings only.

    Like datamodel-code-generator with black: templates stay readable, output is formatted and stable.
    """
    command = [
        sys.executable,
        "-m",
        "ruff",
        "format",
        "--isolated",
        f"--line-length={WIDTH}",
        "--stdin-filename",
        "script.py",
        "-",
    ]
    done = subprocess.run(command, input=source, capture_output=True, text=True, check=False)
    if done.returncode:
        raise RuntimeError(f"ruff format failed on the rendered script: {done.stderr.strip()}")
    return done.stdout


def _tidy(source: str) -> str:
    """At most two blank lines in a row and one newline at the end: templates stay readable, output stays
    `ruff format`-stable."""
    lines = source.rstrip("\n").split("\n")
    out: list[str] = []
    blank = 0
    for line in lines:
        line = line.rstrip()
        blank = blank + 1 if not line else 0
        if blank <= 2:
            out.append(line)
    return "\n".join(out) + "\n"
