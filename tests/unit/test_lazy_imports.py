"""validate, show and schema never import ray, torch or tensorflow (SPEC §1)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import MINIMAL, ROOT

HEAVY = ("ray", "torch", "tensorflow", "keras", "jax", "sklearn", "numpy", "jinja2")
PROBE = """
import sys
from specc.cli import main
code = main({args!r})
heavy = sorted(name for name in {heavy!r} if name in sys.modules)
print("HEAVY:", ",".join(heavy))
"""


@pytest.mark.parametrize("command", [["validate"], ["show"], ["schema", "-o", "-"], ["validate", "--format", "sarif"]])
def test_commands_import_nothing_heavy(write_spec, command):
    spec = write_spec(
        MINIMAL + "tune: {metric: val_accuracy, mode: max, space: {training.optimizer.lr: "
        "{loguniform: [1.0e-4, 0.1]}}}\n"
    )
    args = command if command[0] == "schema" else [*command, str(spec)]
    result = subprocess.run(
        [sys.executable, "-c", PROBE.format(args=args, heavy=HEAVY)], capture_output=True, text=True, cwd=ROOT
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "HEAVY: ", result.stdout


def test_import_specc_is_light():
    code = "import sys, specc; print(sorted(m for m in ('pydantic', 'yaml') if m in sys.modules))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert result.stdout.strip() == "[]"
