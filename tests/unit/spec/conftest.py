"""Fixtures for the per-section tests: MINIMAL with some sections replaced, checked or shown.

A snippet's top-level keys replace MINIMAL's lines of the same key; other keys are added:

    problems("model: {type: mlp, dropout: 1.0}") == [("E106", "model.dropout")]
"""

from __future__ import annotations

import textwrap

import pytest
import yaml

from specc import api
from tests.conftest import MINIMAL


def with_sections(snippet: str) -> str:
    snippet = textwrap.dedent(snippet)
    if snippet and not snippet.endswith("\n"):
        snippet += "\n"
    replaced = {line.split(":")[0] for line in snippet.splitlines() if line[:1].isalpha()}
    kept = [line for line in MINIMAL.splitlines(keepends=True) if line.split(":")[0] not in replaced]
    return "".join(kept) + snippet


# The factory modules the snippets name, beside the spec as a project's would be (factories are checked to be
# functions defined in a module of the project).
FACTORY_MODULES = {
    "nets.py": "def build(input_shape, num_outputs, **kwargs): ...\n",
    "data.py": "def load(**kwargs): ...\n\n\ndef images(**kwargs): ...\n",
    "my_pkg/nets/v2.py": "def build_model(input_shape, num_outputs, **kwargs): ...\n",
    "_private.py": "def _f(input_shape, num_outputs, **kwargs): ...\n",
}


@pytest.fixture
def report(write_spec):
    """report(snippet, overrides=()) -> FileReport of MINIMAL with the snippet's sections."""
    for name, text in FACTORY_MODULES.items():
        write_spec(text, name)

    def check(snippet: str = "", overrides=()):
        return api.check_file(write_spec(with_sections(snippet)), overrides)

    return check


@pytest.fixture
def problems(report):
    """problems(snippet) -> [(code, path), ...] in file order."""

    def codes(snippet: str = "", overrides=()) -> list[tuple[str, str]]:
        return [(p.code, p.path) for p in report(snippet, overrides).problems]

    return codes


@pytest.fixture
def shown(write_spec):
    """shown(snippet) -> dict: the resolved spec as `specc show` prints it (every default filled in)."""
    for name, text in FACTORY_MODULES.items():
        write_spec(text, name)

    def show(snippet: str = "") -> dict:
        return yaml.safe_load(api.show(api.load(write_spec(with_sections(snippet)))))

    return show
