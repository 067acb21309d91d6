"""The project's promises about itself: the README's two commands, CI running the test one, the wheel's contents."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import pytest

from specc.spec.errors import CODES
from tests.conftest import ROOT


def readme_command(kind: str) -> str:
    result = subprocess.run(
        [sys.executable, str(ROOT / ".ci" / "readme_command.py"), kind], capture_output=True, text=True, check=True
    )
    return result.stdout.strip()


def test_readme_has_exactly_two_setup_commands():
    text = (ROOT / "README.md").read_text()
    assert re.findall(r"<!-- (\w+)-command -->", text) == ["main", "test"]
    for kind in ("main", "test"):
        command = readme_command(kind)
        assert command.startswith("python3 -m venv .venv && .venv/bin/pip install"), command


def test_ci_runs_the_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text()
    assert "readme_command.py test" in ci
    assert readme_command("test").endswith(".venv/bin/python tests/run.py")


def test_the_readme_test_command_runs_every_test_directory():
    """tests/run.py names the test directories (the fast ones under xdist, e2e alone): a new one must be added
    there, or CI would never run it."""
    from tests import run

    named = {Path(directory).name for directory in run.FAST + run.END_TO_END}
    holding = {path.relative_to(ROOT / "tests").parts[0] for path in (ROOT / "tests").rglob("test_*.py")}
    assert holding <= named, holding - named
    assert not list((ROOT / "tests").glob("test_*.py"))  # none at the top, outside every directory named


def test_the_fast_tests_yield_the_cpu_to_the_end_to_end_ones():
    """tests/run.py starts the fast tests in this session (a new one is a scheduling group of its own, which the
    kernel's autogroups give an equal share of the CPU whatever its nice value), in their own process group (stopped
    as a whole when the run is interrupted), NICENESS lower."""
    from tests import run

    probe = "import os; print(os.getsid(0), os.getpgid(0), os.getpid(), os.nice(0))"
    with tempfile.TemporaryFile("w+", encoding="utf-8") as output:
        assert run.background([sys.executable, "-c", probe], output).wait() == 0
        output.seek(0)
        session, group, pid, niceness = map(int, output.read().split())
    assert session == os.getsid(0)
    assert group == pid != os.getpgid(0)
    assert niceness == min(os.nice(0) + run.NICENESS, 19)


def test_an_end_to_end_session_that_dies_is_told_with_its_test_and_its_rays_last_lines(tmp_path):
    """A pytest process whose local Ray dies exits at once, before its summary, and Ray's last words die with the
    test's captured output: tests/run.py then says in which test it ended, with the ends of that Ray's logs."""
    from tests import run

    (tmp_path / "test_dies.py").write_text(
        "import os\n\ndef test_lives():\n    pass\n\ndef test_dies():\n    os._exit(1)\n"
    )
    trace = tmp_path / "trace"
    ended = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "tests.e2e.conftest", str(tmp_path / "test_dies.py")],
        cwd=ROOT,
        env={**os.environ, run.TRACE: str(trace)},
        capture_output=True,
    )
    assert ended.returncode == 1 and b"passed" not in ended.stdout
    logs = tmp_path / "session_1" / "logs"
    logs.mkdir(parents=True)
    (logs / "raylet.out").write_text("".join(f"[I] line {n}\n" for n in range(100)) + "[C] Check failed: raylet\n")
    (logs / "python-core-driver-01_7.log").write_text("[E] Exiting because the Raylet IPC connection failed\n")
    (logs / "dashboard.log").write_text("not shown\n")
    with trace.open("a") as handle:  # as start_local_ray in tests/e2e/conftest.py names its Ray
        handle.write(f"ray {tmp_path / 'session_1'}\n")

    told = run.unfinished(trace, ended.returncode)
    assert "ended during " in told and told.splitlines()[1].endswith(
        "test_dies.py::test_dies, before pytest's summary (exit status 1) ====="
    )
    assert "Check failed: raylet" in told and "line 99" in told and "line 70" not in told
    assert "Exiting because the Raylet IPC connection failed" in told and "not shown" not in told

    finished = tmp_path / "finished"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "tests.e2e.conftest",
            str(tmp_path / "test_dies.py"),
            "-k",
            "lives",
        ],
        cwd=ROOT,
        env={**os.environ, run.TRACE: str(finished)},
        check=True,
        capture_output=True,
    )
    assert run.unfinished(finished, 0) is None


def in_turn_file(shares: int) -> str:
    """A test file with one unmarked test and one test in each share: test_share_1 .. test_share_N."""
    marked = "".join(f"\n@pytest.mark.in_turn({k})\ndef test_share_{k}():\n    pass\n" for k in range(1, shares + 1))
    return "import pytest\n\ndef test_always():\n    pass\n" + marked


def ran_in_turn(pytester, monkeypatch, turn: str | None, body: str) -> pytest.RunResult:
    """pytest, in this process, over `body` with tests/e2e/conftest.py's hooks and SPECC_E2E_TURN=`turn`."""
    pytester.makepyfile(test_turns=body)
    if turn is None:
        monkeypatch.delenv("SPECC_E2E_TURN", raising=False)
    else:
        monkeypatch.setenv("SPECC_E2E_TURN", turn)
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # hypothesis' plugin alone costs 2 s a run
    return pytester.runpytest_inprocess("-q", "-rA", "-p", "tests.e2e.conftest", "-p", "no:cacheprovider")


def passed(done: pytest.RunResult) -> list[str]:
    return re.findall(r"^PASSED \S+::(test_\w+)$", done.stdout.str(), re.M)


def test_the_end_to_end_tests_marked_in_turn_run_one_share_a_commit(pytester, monkeypatch, tmp_path):
    """CI runs the unmarked end-to-end tests every time and one share of the `in_turn` ones, picked by the commit
    (tests/run.py); a developer's plain `pytest`, or tests/run.py --all, runs every one."""
    from tests import run
    from tests.e2e import conftest

    shares = conftest.SHARES
    body = in_turn_file(shares)
    for share in range(1, shares + 1):
        commit = f"{share - 1:040x}"  # int(id, 16) % shares + 1 == share
        done = ran_in_turn(pytester, monkeypatch, commit, body)
        assert done.ret == 0, done.stdout.str()
        assert passed(done) == ["test_always", f"test_share_{share}"]
        assert f"{shares - 1} deselected" in done.stdout.str()
        told = f"in-turn tests: share {share} of {shares}, picked by commit {commit[:12]}; {shares - 1} tests of the"
        assert told in done.stdout.str()  # under -q, as tests/run.py runs them
    everything = ["test_always"] + [f"test_share_{share}" for share in range(1, shares + 1)]
    assert passed(ran_in_turn(pytester, monkeypatch, None, body)) == everything
    assert passed(ran_in_turn(pytester, monkeypatch, "all", body)) == everything

    broken = ran_in_turn(pytester, monkeypatch, "HEAD", body)
    assert broken.ret != 0 and "SPECC_E2E_TURN='HEAD': expected a commit id" in broken.stderr.str()
    beyond = in_turn_file(shares + 1)
    unknown = ran_in_turn(pytester, monkeypatch, "all", beyond)
    expected = f"in_turn({shares + 1},), expected in_turn(K) for K in 1..{shares}"
    assert unknown.ret != 0 and expected in unknown.stderr.str()

    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    assert run.turn([]) == (head or "all")
    assert run.turn(["-x", "--all"]) == "all"
    assert run.turn([], root=tmp_path) == "all"  # not a git checkout: every share


def test_every_share_of_the_in_turn_tests_holds_some():
    """A share left empty would make CI run fewer tests on that share's commits while the others wait longer."""
    from tests.e2e import conftest

    marked = re.findall(r"in_turn\((\d+)\)", "".join(p.read_text() for p in (ROOT / "tests" / "e2e").glob("test_*.py")))
    assert {int(share) for share in marked} == set(range(1, conftest.SHARES + 1))


def test_every_problem_code_is_documented():
    documented = set(re.findall(r"^\| ([EW]\d{3}) \| ([\w-]+) \|", (ROOT / "docs" / "problems.md").read_text(), re.M))
    assert documented == {(code, name) for code, (name, _) in CODES.items()}


@pytest.mark.slow
def test_wheel_ships_templates_and_schema(tmp_path):
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
    )
    (wheel,) = tmp_path.glob("specc-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "specc/schemas/experiment.schema.json" in names
    assert any(name.startswith("specc/templates/") for name in names)
    assert "specc/cli.py" in names and "specc/spec/experiment.py" in names


def test_readme_tour_output_is_what_specc_prints(tmp_path):
    text = (ROOT / "README.md").read_text()
    spec = re.search(r"<!-- tour-spec -->\s*```yaml\n(.+?)```", text, re.S).group(1)
    output = re.search(r"<!-- tour-output -->\s*```console\n\$ (specc [^\n]+)\n(.+?)```", text, re.S)
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "typo.yaml").write_text(spec)
    args = output.group(1).split()[1:]
    result = subprocess.run([sys.executable, "-m", "specc", *args], capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout + result.stderr == output.group(2)
