"""The pre-commit hooks of .pre-commit-hooks.yaml with the real `pre-commit` tool (issue 7): a project's
.pre-commit-config.yaml points at this repository at its HEAD commit; pre-commit builds the hooks' environment
(specc's light core, from the package index) and runs them on `git commit`.

A bad spec stops the commit with its located problem; a compiled script left stale by a spec change stops it
until the script is compiled again; YAML files that are not specs pass untouched.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

# CI runs this module in turn (share 3, tests/e2e/conftest.py): tests/unit runs the checks the hooks run
pytestmark = [pytest.mark.slow, pytest.mark.in_turn(3)]

ROOT = Path(__file__).resolve().parents[2]
SPECC = [sys.executable, "-m", "specc"]

GOOD = """\
specc: 1
name: good
framework: torch
model: {type: mlp, hidden_sizes: [16]}
dataset: {type: iris, batch_size: 16}
training: {epochs: 2}
scaling: {num_workers: 0}
"""
BAD = GOOD.replace("name: good", "name: bad").replace("epochs: 2", "epochs: -1")


def git(*args, cwd) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)


@pytest.fixture(scope="module")
def hooks_home(tmp_path_factory):
    """One PRE_COMMIT_HOME for the module: the hooks' environment is built once."""
    head = git("rev-parse", "HEAD", cwd=ROOT)
    if head.returncode or git("status", "--porcelain", "--", ".pre-commit-hooks.yaml", cwd=ROOT).stdout.strip():
        pytest.fail(".pre-commit-hooks.yaml must be committed: pre-commit installs hooks from a commit")
    return tmp_path_factory.mktemp("pre-commit-home"), head.stdout.strip()


@pytest.fixture
def project(tmp_path, hooks_home):
    home, rev = hooks_home
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e"}  # fmt: skip
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"  # pre-commit and git
    assert git("init", "-q", "-b", "main", cwd=tmp_path).returncode == 0
    (tmp_path / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {ROOT}\n    rev: {rev}\n    hooks:\n      - id: specc-validate\n"
        "      - id: specc-compile-check\n",
        encoding="utf-8",
    )
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "good.yaml").write_text(GOOD, encoding="utf-8")
    (tmp_path / "ci.yml").write_text("on: push\njobs: {}\n", encoding="utf-8")  # YAML that is not a spec
    compile_good(tmp_path)
    installed = subprocess.run(
        [shutil.which("pre-commit", path=env["PATH"]), "install"], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert installed.returncode == 0, installed.stderr
    return tmp_path, env


def compile_good(root: Path) -> None:
    done = subprocess.run([*SPECC, "compile", "specs/good.yaml", "-o", "build/good.py"], cwd=root, capture_output=True)
    assert done.returncode == 0, done.stderr


def commit(root: Path, env: dict, message: str) -> subprocess.CompletedProcess:
    """`git add -A && git commit`; the hooks' output (on stderr as git runs them) is in .stdout too."""
    subprocess.run(["git", "add", "-A"], cwd=root, env=env, check=True)
    return subprocess.run(
        ["git", "commit", "-q", "-m", message],
        cwd=root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=900,
    )


def test_hooks_pass_a_good_project_and_stop_a_bad_spec(project):
    root, env = project
    first = commit(root, env, "good")
    assert first.returncode == 0, first.stdout
    assert "specc validate" in first.stdout and "Passed" in first.stdout

    (root / "specs" / "bad.yaml").write_text(BAD, encoding="utf-8")
    refused = commit(root, env, "bad")

    assert refused.returncode != 0
    # located, as specc says it
    assert "specs/bad.yaml:6:20: error[E106]: training.epochs: must be > 0, got -1" in refused.stdout
    assert "Traceback" not in refused.stdout
    assert git("log", "--oneline", cwd=root).stdout.count("\n") == 1  # the bad commit did not happen


def test_a_stale_compiled_script_stops_the_commit_until_recompiled(project):
    root, env = project
    assert commit(root, env, "good").returncode == 0

    spec = root / "specs" / "good.yaml"
    spec.write_text(GOOD.replace("epochs: 2", "epochs: 3"), encoding="utf-8")
    refused = commit(root, env, "spec changed, script not")
    assert refused.returncode != 0
    assert (
        "build/good.py: stale" in refused.stdout and "specc compile specs/good.yaml -o build/good.py" in refused.stdout
    )

    compile_good(root)
    assert commit(root, env, "recompiled").returncode == 0


def test_a_runtime_edited_by_hand_stops_the_commit_until_recompiled(project):
    """The hook checks the specc_runtime.py beside a compiled script too: the same bytes specc writes."""
    root, env = project
    assert commit(root, env, "good").returncode == 0

    runtime = root / "build" / "specc_runtime.py"
    runtime.write_text(runtime.read_text(encoding="utf-8") + "# edited by hand\n", encoding="utf-8")
    refused = commit(root, env, "runtime edited")
    assert refused.returncode != 0
    assert "build/specc_runtime.py: stale" in refused.stdout and "build/good.py: stale" not in refused.stdout
    assert "specc compile specs/good.yaml -o build/good.py" in refused.stdout

    compile_good(root)  # the runtime as committed again; a Python file changes, so the hook runs
    (root / "notes.py").write_text("NOTES = 1\n", encoding="utf-8")
    passed = commit(root, env, "recompiled")
    assert passed.returncode == 0 and re.search(r"specc compiled scripts are current\.+Passed", passed.stdout)
