"""Shared fixtures: a minimal valid spec and a helper that writes spec text to a temp file."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytest_plugins = ["pytester"]  # tests/unit/test_pytest_plugin.py runs pytest with specc's plugin


def pytest_configure(config):
    """The suite runs torch and TensorFlow specs in this one process (in-process `specc run`, local mode).
    Loaded after TensorFlow, torch's compiler stack crashes the interpreter: torch._dynamo loads triton's
    C extension, which segfaults beside TensorFlow's. Loaded first, both work; so torch's goes first."""
    import torch._dynamo  # noqa: F401


MINIMAL = """\
specc: 1
name: tiny
framework: torch
model: {type: mlp, hidden_sizes: [16]}
dataset: {type: digits}
training: {epochs: 2}
"""


@pytest.fixture
def write_spec(tmp_path):
    """write_spec(text, name="spec.yaml") -> Path; text is dedented."""

    def write(text: str, name: str = "spec.yaml") -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
        return path

    return write


def located(problems) -> list[tuple]:
    """(code, line, column, path) of each problem: what the tests pin down."""
    return [(p.code, p.line, p.column, p.path) for p in problems]
