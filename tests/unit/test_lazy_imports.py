"""validate, show, schema, results and plan never import ray, torch or tensorflow (SPEC §1)."""

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


@pytest.mark.parametrize("fmt", ["text", "csv", "json"])
def test_results_imports_nothing_heavy(tmp_path, fmt):
    """`specc results` reads a run with csv, json and yaml alone: no ray, torch, tensorflow or pandas."""
    (tmp_path / "results.csv").write_text(
        "trial_id,status,epochs,training.optimizer.lr,best_val_loss\nt_0,completed,2,0.1,0.5\n"
    )
    (tmp_path / "spec.resolved.yaml").write_text("specc: 1\ntune: {metric: val_loss, mode: min}\n")
    args = ["results", str(tmp_path), "--format", fmt]
    probe = PROBE.format(args=args, heavy=(*HEAVY, "pandas", "pyarrow"))
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert "t_0" in result.stdout
    assert result.stdout.splitlines()[-1] == "HEAVY: ", result.stdout


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_plan_imports_no_ray_torch_or_tensorflow(write_spec, fmt):
    """`specc plan` samples its configs with numpy alone (the generator Ray's would use), never with Ray."""
    spec = write_spec(
        MINIMAL + "tune: {metric: val_accuracy, mode: max, num_samples: 2, search: {type: random, seed: 3}, "
        "space: {training.optimizer.lr: {loguniform: [1.0e-4, 0.1]}, dataset.batch_size: {grid: [16, 32]}}}\n"
        "scheduler: {type: asha}\n"
    )
    heavy = tuple(name for name in HEAVY if name != "numpy")
    probe = PROBE.format(args=["plan", str(spec), "--format", fmt], heavy=heavy)
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert "training.optimizer.lr" in result.stdout
    assert result.stdout.splitlines()[-1] == "HEAVY: ", result.stdout


@pytest.mark.parametrize("command", ["compile", "check-compiled", "init"])
def test_the_pre_commit_commands_need_no_run_extra(write_spec, tmp_path, command):
    """What the hooks (and a light `pip install specc`) run: compile uses jinja2 (and ruff), never Ray, the
    frameworks, the data libraries or the trackers, even for a spec that names them all."""
    spec = write_spec(
        MINIMAL.replace("framework: torch", "framework: tensorflow")
        + "run: {callbacks: [csv, tensorboard, mlflow, wandb]}\n"
    )
    script = tmp_path / "build" / "spec.py"
    args = {
        "compile": ["compile", str(spec), "-o", str(script)],
        "check-compiled": ["check-compiled", str(script)],
        "init": ["init", "fresh", "-o", str(tmp_path / "fresh.yaml"), "--with-tune"],
    }[command]
    if command == "check-compiled":
        subprocess.run([sys.executable, "-m", "specc", "compile", str(spec), "-o", str(script)], check=True, cwd=ROOT)
    heavy = (*(name for name in HEAVY if name not in ("jinja2", "numpy")), "pandas", "pyarrow", "mlflow", "wandb")
    heavy = (*heavy, "tensorboardX", "plotly", "matplotlib")
    result = subprocess.run(
        [sys.executable, "-c", PROBE.format(args=args, heavy=heavy)], capture_output=True, text=True, cwd=ROOT
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "HEAVY: ", result.stdout
