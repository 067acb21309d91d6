"""specc's pytest plugin (entry point pytest11, specc/pytest_plugin.py), run through pytester: specs collected
from --specc paths or the ini file, failures that read as specc's located problems, committed scripts checked."""

from __future__ import annotations

import pytest

from specc.cli import main

GOOD = """\
specc: 1
name: good
framework: torch
model: {type: mlp, hidden_sizes: [16]}
dataset: {type: iris, batch_size: 16}
training: {epochs: 1}
scaling: {num_workers: 0}
"""
BAD = GOOD.replace("name: good", "name: bad").replace("epochs: 1", "epochs: 0")


@pytest.fixture
def project(pytester):
    pytester.mkdir("specs")
    pytester.path.joinpath("specs", "good.yaml").write_text(GOOD)
    pytester.path.joinpath("specs", "notes.yaml").write_text("just: yaml\n")  # not a spec: not collected
    pytester.makepyfile(test_other="def test_other():\n    assert True\n")
    return pytester


def test_specs_become_validate_and_compile_items(project):
    result = project.runpytest_subprocess("--specc", "specs", "-v", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*specs/good.yaml::validate PASSED*", "*specs/good.yaml::compile PASSED*"])
    assert "test_other" not in result.stdout.str()  # --specc alone: the specs alone


def test_a_bad_spec_fails_with_its_located_problem_not_a_traceback(project):
    project.path.joinpath("specs", "bad.yaml").write_text(BAD)
    result = project.runpytest_subprocess("--specc", "specs", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=1, skipped=1)  # bad: validate fails, compile is skipped
    result.stdout.fnmatch_lines(["specs/bad.yaml:6:20: error[E106]: training.epochs: must be > 0, got 0"])
    assert "Traceback" not in result.stdout.str() and "def runtest" not in result.stdout.str()


def test_ini_paths_and_test_paths_together(project):
    project.makeini("[pytest]\nspecc_paths = specs\n")
    project.mkdir("other")
    project.path.joinpath("other", "x.yaml").write_text(GOOD)  # a spec outside specc_paths: pytest's, not ours
    result = project.runpytest_subprocess("test_other.py", "other", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3)  # the test file given, and the specs of the ini file
    assert "other/x.yaml" not in result.stdout.str()


def test_a_committed_compiled_script_is_checked(project, monkeypatch):
    monkeypatch.chdir(project.path)
    assert main(["compile", "specs/good.yaml", "-o", "build/good.py"]) == 0
    assert project.runpytest_subprocess("--specc", "specs", "-p", "no:cacheprovider").ret == 0

    project.path.joinpath("specs", "good.yaml").write_text(GOOD.replace("epochs: 1", "epochs: 2"))
    result = project.runpytest_subprocess("--specc", "specs", "-p", "no:cacheprovider")

    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["build/good.py: stale: specs/good.yaml compiles to something else; run *"])


def test_the_runtime_beside_a_committed_script_is_checked(project, monkeypatch):
    monkeypatch.chdir(project.path)
    assert main(["compile", "specs/good.yaml", "-o", "build/good.py"]) == 0
    project.path.joinpath("build", "specc_runtime.py").write_text("# not specc's runtime\n")

    result = project.runpytest_subprocess("--specc", "specs", "-p", "no:cacheprovider")

    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["build/specc_runtime.py: stale: differs from the runtime specc * writes beside *"])
    assert "build/good.py: stale" not in result.stdout.str()
    project.path.joinpath("build", "specc_runtime.py").unlink()
    result = project.runpytest_subprocess("--specc", "specs", "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(["build/specc_runtime.py: missing: the runtime build/good.py imports; run *"])


@pytest.mark.slow
def test_smoke_runs_each_spec(project):
    project.path.joinpath("specs", "broken.yaml").write_text(
        GOOD.replace("name: good", "name: broken").replace(
            "{type: mlp, hidden_sizes: [16]}", '{type: custom, factory: "nowhere:make"}'
        )
    )
    # trusted, so that validate only warns (W302: installed where it runs, perhaps); here it is installed nowhere
    project.path.joinpath("specs", "pyproject.toml").write_text('[tool.specc]\ntrusted-modules = ["nowhere"]\n')
    result = project.runpytest_subprocess("--specc", "specs", "--specc-smoke", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=5, failed=1)  # broken's factory module does not exist: its smoke run fails
    result.stdout.fnmatch_lines(["*specc run --smoke exited with 1*"])
    assert "nowhere" in result.stdout.str()
