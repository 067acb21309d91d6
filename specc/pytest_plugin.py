"""specc's pytest plugin (entry point `pytest11`): spec files as test items.

    pytest --specc specs/                 # every spec below specs/: validate, compile (and check a committed script)
    pytest --specc specs/ --specc-smoke   # ... and a `specc run --smoke` of each
    [pytest] specc_paths = specs          # or in the ini file (specc_smoke = true for the smoke runs)

Given paths (`--specc` or `specc_paths`) and no test paths on the command line, pytest collects the specs alone;
with test paths as well, both. A spec is a YAML file with a top-level `specc:` key. Each yields items:
- `validate`: fails with the spec's problems, located (file:line:col), as `specc validate` prints them;
- `compile`: the script compiles; when a compiled script of this spec is committed (`build/<stem>.py`, or any
  script named in `specc_compiled`), it must match what the spec compiles to now, and the runtime beside it
  (specc_runtime.py) must be this specc's;
- `smoke` (with --specc-smoke): `specc run SPEC --smoke` in a fresh interpreter, into a temporary storage path.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


def pytest_addoption(parser):
    group = parser.getgroup("specc", "specc experiment specs")
    group.addoption("--specc", action="append", default=[], metavar="PATH", help="collect the specs below PATH")
    group.addoption("--specc-smoke", action="store_true", help="also smoke-run each spec (specc run --smoke)")
    parser.addini("specc_paths", "paths whose specs are collected", type="paths", default=[])
    parser.addini("specc_smoke", "smoke-run each collected spec", type="bool", default=False)
    parser.addini("specc_compiled", "compiled scripts to check against their specs", type="paths", default=[])


def _roots(config) -> list[Path]:
    given = [Path(os.path.realpath(path)) for path in config.getoption("specc")]
    return given or [Path(os.path.realpath(path)) for path in config.getini("specc_paths")]


def pytest_configure(config):
    roots = _roots(config)
    if not roots:
        return
    config.addinivalue_line("markers", "specc: an item made from a specc spec file")
    specs = [str(root) for root in roots]
    given = config.args_source == pytest.Config.ArgsSource.ARGS  # test paths on the command line: keep them
    config.args[:] = [*config.args, *specs] if given else specs


def pytest_collect_file(file_path: Path, parent):
    if file_path.suffix not in (".yaml", ".yml"):
        return None
    from specc.read.files import holds

    if not any(holds(root, file_path) for root in _roots(parent.config)):  # a loop of links is held by none
        return None
    from specc.api import looks_like_spec

    return SpecFile.from_parent(parent, path=file_path) if looks_like_spec(str(file_path)) else None


class SpecFile(pytest.File):
    def collect(self):
        yield SpecItem.from_parent(self, name="validate", check="validate")
        yield SpecItem.from_parent(self, name="compile", check="compile")
        if self.config.getoption("specc_smoke") or self.config.getini("specc_smoke"):
            yield SpecItem.from_parent(self, name="smoke", check="smoke")


class SpecProblem(Exception):
    """A spec's failure, shown as its text (problems, a stale script, a smoke run's output), never a traceback."""


class SpecItem(pytest.Item):
    def __init__(self, *, check: str, **kwargs):
        super().__init__(**kwargs)
        self.check = check
        self.add_marker("specc")

    def runtest(self):
        getattr(self, f"_{self.check}")()

    def _load(self):
        from specc import api
        from specc.spec.errors import SpecError

        try:
            return api.load(self._spec())
        except SpecError as error:
            from specc.output import text

            raise SpecProblem(text(list(error.problems), False).rstrip("\n")) from None

    def _spec(self) -> str:
        return os.path.relpath(self.path, self.config.invocation_params.dir)

    def _validate(self):
        from specc import api
        from specc.output import text

        report = api.check_file(self._spec())
        errors = [problem for problem in report.problems if problem.severity == "error"]
        if errors:
            raise SpecProblem(text(report.problems, False).rstrip("\n"))

    def _compile(self):
        """The spec compiles; each committed script compiled from it (build/<stem>.py, specc_compiled) is current,
        and so is the runtime beside it."""
        from specc import api
        from specc.compiler.stale import compare, compiled_from, runtime_finding

        report = api.check_file(self._spec())
        if not report.ok:
            pytest.skip("the spec does not validate: see its validate item")
        spec = os.path.normpath(self._spec())
        rootdir = self.config.invocation_params.dir
        candidates = [rootdir / "build" / f"{self.path.stem}.py", *map(Path, self.config.getini("specc_compiled"))]
        committed = [
            os.path.relpath(script, rootdir)
            for script in candidates
            if os.path.normpath(compiled_from(str(script)) or "") == spec
        ]
        for script in committed:
            findings = [compare(script, spec, report.experiment), runtime_finding(script, spec)]
            if any(findings):
                raise SpecProblem("\n".join(str(finding) for finding in findings if finding))
        if not committed:
            api.compile(report.experiment)

    def _smoke(self):
        import tempfile

        self._load()
        with tempfile.TemporaryDirectory(prefix="specc-smoke-") as storage:
            command = [sys.executable, "-m", "specc", "run", self._spec(), "--smoke", "--storage-path", storage]
            done = subprocess.run(command, capture_output=True, text=True, cwd=self.config.invocation_params.dir)
        if done.returncode:
            output = (done.stdout + done.stderr).strip().splitlines()
            raise SpecProblem(f"specc run --smoke exited with {done.returncode}:\n" + "\n".join(output[-40:]))

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, SpecProblem):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)

    def reportinfo(self):
        return self.path, None, self.name
