"""The runtime every compiled script shares: `specc_runtime.py`, written beside the experiment file.

`specc_runtime.py` in this folder is ordinary Python (ray and the standard library, never specc): tests import
it, ruff lints it, and compile copies its text out verbatim. This package only hands that text out; importing
it imports nothing heavy (the runtime itself imports ray, so specc never imports it).

What it hands out: the runtime's text (`source`), what `specc compile` writes for an experiment file (`files`: the
pair, or `single_file`), and the versions a runtime and an experiment name (`version_of`, `experiment_version`),
for compile, check-compiled, `specc run` and `specc submit`.
"""

from __future__ import annotations

import functools
import os
import re

NAME = "specc_runtime"
FILE = NAME + ".py"
IMPORT = f"import {NAME}"
_VERSION = re.compile(r'^VERSION = "(?P<version>[^"\n]+)"(?:  #[^\n]*)?$', re.MULTILINE)  # a comment may follow
_MAIN = '\n\nif __name__ == "__main__":\n    main()\n'
_INLINED = f"\n\n# {FILE}, inlined by `specc compile --single-file`: the run plumbing every compiled script shares\n"


def source() -> str:
    """The runtime's text, as compile writes it beside every experiment file."""
    with open(os.path.join(os.path.dirname(__file__), FILE), encoding="utf-8") as handle:
        return handle.read()


@functools.cache
def constant(name: str):
    """A literal the runtime defines at its top level (e.g. LEFT_BEHIND), read from its text: specc decides with the
    same values the scripts run with, without importing the runtime (which imports ray)."""
    import ast

    for node in ast.parse(source()).body:
        if isinstance(node, ast.Assign) and [getattr(target, "id", None) for target in node.targets] == [name]:
            return ast.literal_eval(node.value)
    raise KeyError(f"{FILE} defines no {name}")


def version_of(text: str) -> str | None:
    """The specc version a runtime's text was written by (its VERSION line), or None for text that is no runtime."""
    match = _VERSION.search(text)
    return match["version"] if match else None


def experiment_version(text: str) -> str | None:
    """The runtime version an experiment file asks for (its `specc_runtime.expect("V")` call), or None."""
    match = re.search(rf'^    {NAME}\.expect\("(?P<version>[^"\n]+)"\)', text, re.MULTILINE)
    return match["version"] if match else None


def single_file(experiment: str) -> str:
    """The experiment with the runtime inlined at its end (--single-file): one module, no import of the runtime.

    The experiment's `specc_runtime.X` become plain `X`: the runtime's definitions are this module's own, and like
    the experiment's they reach Ray's workers by value (a name bound to this module would not: on a worker,
    __main__ is the worker's own). The experiment refers to the runtime only inside functions, so the runtime's
    definitions may follow them; the two share no top-level name (a test holds every example spec to this)."""
    if not experiment.endswith(_MAIN) or f"\n{IMPORT}\n" not in experiment:
        raise ValueError("not an experiment file specc compiled")
    body = _unqualified(experiment[: -len(_MAIN)].replace(f"\n{IMPORT}\n", "\n", 1))
    return f"{body}{_INLINED}{source()}{_MAIN}"


def _unqualified(code: str) -> str:
    """`code` with each `specc_runtime.` in front of a name dropped, strings and comments left as they are."""
    import io
    import tokenize

    lines = code.splitlines(True)
    drops = []  # (row, start column, end column) of each `specc_runtime.` to drop
    tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    for first, dot, name in zip(tokens, tokens[1:], tokens[2:], strict=False):
        if (first.type, first.string, dot.string, name.type) == (tokenize.NAME, NAME, ".", tokenize.NAME):
            drops.append((first.start[0], first.start[1], dot.end[1]))
    for row, start, end in reversed(drops):  # right to left: earlier columns on a line stay where they were
        line = lines[row - 1]
        lines[row - 1] = line[:start] + line[end:]
    return "".join(lines)


def imports_runtime(text: str) -> bool:
    """Whether a compiled script imports the runtime (an experiment file; not a --single-file script, nor an
    after-training script such as a run's predict.py), so that it needs specc_runtime.py beside it."""
    return re.search(rf"^{IMPORT}$", text, re.MULTILINE) is not None


def is_single_file(text: str) -> bool:
    """Whether a compiled script is one `--single-file` wrote (the runtime inlined: no runtime file beside it)."""
    return _INLINED in text


def beside(script: str | os.PathLike) -> str:
    """The runtime's path beside the experiment file `script` (as the script names it: relative stays relative)."""
    return os.path.join(os.path.dirname(os.fspath(script)), FILE)


def files(script: str, experiment: str, single: bool = False) -> dict[str, str]:
    """What `specc compile -o script` writes: {script: the experiment, beside(script): the runtime}; with `single`
    (--single-file), {script: the experiment with the runtime inlined} alone."""
    if single:
        return {script: single_file(experiment)}
    return {script: experiment, beside(script): source()}
