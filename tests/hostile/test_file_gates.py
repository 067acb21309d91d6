"""Issue 53, classes 2, 3, 5 and 6 as they reach files: one named case per hole the fresh battery found, each closed
by the read gate or the write gate of specc/read/files.py (tests/unit/read/test_files.py tests the gates
themselves; tests/unit/test_file_gates.py that nothing goes around them).

The secret every case tries to reach is SECRET, in a file outside the project; no output may hold it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time

import pytest

from specc.cli import main
from specc.results.best_checkpoint import best_checkpoint
from specc.spec.errors import UsageError
from tests.conftest import MINIMAL
from tests.unit.results.test_best_checkpoint import write_run

SECRET = "hunter2-do-not-print"


@pytest.fixture
def project(tmp_path):
    """A git work tree beside a directory of secrets."""
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "id_rsa").write_text(f"key: {SECRET}\n")
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    (root / "specs").mkdir()
    (root / "specs" / "good.yaml").write_text(MINIMAL)
    return root


def run_cli(*args, cwd, timeout=60):
    command = [sys.executable, "-m", "specc", *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, cwd=cwd, timeout=timeout)


@pytest.mark.parametrize("fmt", ["text", "github", "json", "sarif"])
def test_a_spec_linked_out_of_the_project_is_refused_not_echoed(project, fmt, capsys):
    """Before: `specc validate --format github specs/` printed the linked file's contents in the problem text."""
    (project / "specs" / "leak.yaml").symlink_to(project.parent / "secrets" / "id_rsa")
    assert main(["validate", "--format", fmt, str(project / "specs")]) == 1
    out = capsys.readouterr().out
    assert SECRET not in out and "E001" in out and "leads outside" in out
    assert main(["validate", "--format", fmt, str(project / "specs" / "leak.yaml")]) == 1  # named on its own too
    assert SECRET not in capsys.readouterr().out


def test_symlink_loops_in_a_validated_directory_are_problems_not_tracebacks(project, capsys):
    specs = project / "specs"
    (specs / "loop.yaml").symlink_to(specs / "loop2.yaml")
    (specs / "loop2.yaml").symlink_to(specs / "loop.yaml")
    (specs / "sub").mkdir()
    (specs / "sub" / "up").symlink_to(specs)  # a directory loop: never followed
    assert main(["validate", str(specs)]) == 1
    out = capsys.readouterr().out
    assert out.count("symbolic links lead round in a loop") == 2 and "good.yaml" not in out


def test_a_fifo_among_the_specs_is_refused_without_blocking(project):
    os.mkfifo(project / "specs" / "pipe.yaml")
    done = run_cli("validate", "specs", cwd=project, timeout=30)
    assert done.returncode == 1 and "it is a FIFO, not a regular file" in done.stdout


def test_check_compiled_refuses_fifos_loops_and_huge_files_quickly(project):
    """Before: a FIFO blocked check-compiled, a 3 GiB sparse script was read whole, a loop was a RuntimeError."""
    build = project / "build"
    build.mkdir()
    assert main(["compile", str(project / "specs" / "good.yaml"), "-o", str(build / "good.py")]) == 0
    os.mkfifo(build / "pipe.py")
    (build / "loop.py").symlink_to(build / "loop.py")
    with open(build / "huge.py", "wb") as out:
        out.write((build / "good.py").read_bytes())
        out.truncate(3 << 30)
    started = time.monotonic()
    paths = [build / name for name in ("good.py", "pipe.py", "loop.py", "huge.py")]
    done = run_cli("check-compiled", *paths, cwd=project, timeout=60)
    assert time.monotonic() - started < 30
    assert "Traceback" not in done.stderr
    assert done.returncode == 1 and "huge.py: cannot be read: it is larger than" in done.stderr, done.stderr


def test_compile_check_against_a_fifo_does_not_block(project):
    os.mkfifo(project / "out.py")
    done = run_cli("compile", "specs/good.yaml", "--check", "-o", "out.py", cwd=project, timeout=30)
    assert done.returncode == 1 and "Traceback" not in done.stderr


def test_the_default_output_does_not_follow_a_committed_build_link_out_of_the_project(project, tmp_path):
    (tmp_path / "elsewhere").mkdir()
    (project / "build").symlink_to(tmp_path / "elsewhere")
    done = run_cli("compile", "specs/good.yaml", cwd=project)
    assert done.returncode == 2 and "leads outside" in done.stderr and "Traceback" not in done.stderr
    assert os.listdir(tmp_path / "elsewhere") == []
    assert run_cli("compile", "specs/good.yaml", "-o", "build/good.py", cwd=project).returncode == 0  # named: written


def test_a_planted_png_link_is_not_written_through(tmp_path):
    """Before: `specc results RUN --plot RUN` overwrote the file a planted `.png` link named."""
    pytest.importorskip("matplotlib")
    run_dir = write_run(tmp_path)
    victim = tmp_path / "victim.txt"
    victim.write_text("mine\n")
    (run_dir / "curves_val_loss.png").symlink_to(victim)
    assert main(["results", str(run_dir), "--plot", str(run_dir)]) == 2
    assert victim.read_text() == "mine\n"
    assert not list(run_dir.glob("curves_*.png"))[1:]  # nothing written beside the link: refused before any plot


def test_a_checkpoint_linked_out_of_a_run_directory_named_relatively_is_not_loaded(tmp_path, monkeypatch):
    """Before: given as a relative path, the run directory's link out was checked at one path and loaded at another."""
    outside = tmp_path / "outside"
    run_dir = write_run(tmp_path / "runs")
    shutil.copytree(run_dir / "checkpoint_000001", outside)
    shutil.rmtree(run_dir / "checkpoint_000001")
    (run_dir / "checkpoint_000001").symlink_to(outside)
    monkeypatch.chdir(tmp_path)
    best = json.loads((run_dir / "best.json").read_text())
    assert best["checkpoint"] == str(run_dir / "checkpoint_000001")
    for given in ("runs/digits", str(run_dir)):
        with pytest.raises(UsageError, match="is not a directory of this run directory"):
            best_checkpoint(given)
