"""`specc run` executes the pair in this process: the runtime (specc_runtime.py) as a module of that name, then the
experiment, whose `import specc_runtime` finds it; afterwards sys.modules and cloudpickle's registry are as they
were, however the run ended. The experiment here is written by hand and stops while it is executed, before any
Ray starts: a run that trains is tests/e2e/test_run_pair.py."""

from __future__ import annotations

import linecache
import os
import sys
import types

import pytest
from ray import cloudpickle

from specc import api, runtime
from specc.compiler import script
from specc.execute.run import run
from tests.conftest import MINIMAL

SEEN: list[dict] = []

EXPERIMENT = """\
import sys

import specc_runtime

from specc_test_seen import SEEN

SEEN.append(
    {
        "runtime": specc_runtime,
        "same": sys.modules["specc_runtime"] is specc_runtime,
        "by_value": "specc_runtime" in specc_runtime.ray.cloudpickle.list_registry_pickle_by_value(),
        "file": specc_runtime.__file__,
        "lines": list(__import__("linecache").getlines(specc_runtime.__file__)),
        "script": __file__,
    }
)
specc_runtime.expect(VERSION)
raise RuntimeError("the experiment stops here")
"""


@pytest.fixture
def no_runtime_yet():
    """This process as a user's: no specc_runtime imported (the suite's pythonpath lets other tests import the
    real one, which registers itself by value); whatever was there is put back afterwards."""
    before = sys.modules.pop("specc_runtime", None)
    registered = "specc_runtime" in cloudpickle.list_registry_pickle_by_value()
    if registered:
        cloudpickle.unregister_pickle_by_value(types.ModuleType("specc_runtime"))
    yield
    if before is not None:
        sys.modules["specc_runtime"] = before
    if registered and "specc_runtime" not in cloudpickle.list_registry_pickle_by_value():
        cloudpickle.register_pickle_by_value(sys.modules["specc_runtime"])


@pytest.fixture
def experiment(no_runtime_yet, write_spec, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    SEEN.clear()
    monkeypatch.setitem(sys.modules, "specc_test_seen", types.SimpleNamespace(SEEN=SEEN))  # what the experiment saw
    return api.load(write_spec(MINIMAL))


def by_hand(monkeypatch, version: str = runtime.version_of(runtime.source())) -> None:
    monkeypatch.setattr(script, "compile_script", lambda *args, **kwargs: EXPERIMENT.replace("VERSION", repr(version)))


def test_the_experiment_imports_the_runtime_run_from_beside_script_py(experiment, tmp_path, monkeypatch):
    by_hand(monkeypatch)
    with pytest.raises(RuntimeError, match="the experiment stops here"):
        run(experiment)
    (seen,) = SEEN
    assert seen["same"] and seen["by_value"]  # registered while it runs: Ray's workers get it by value
    assert seen["file"] == str(tmp_path / "specc_runtime.py") and seen["script"] == str(tmp_path / "script.py")
    assert "".join(seen["lines"]) == runtime.source()  # a traceback shows the runtime's lines
    assert runtime.version_of(runtime.source()) == seen["runtime"].VERSION
    assert "specc_runtime" not in sys.modules  # none was there before
    assert "specc_runtime" not in cloudpickle.list_registry_pickle_by_value()
    assert not [name for name in sys.modules if name.startswith("specc_run_")]
    assert not os.path.exists(tmp_path / "specc_runtime.py")  # nothing is written until the run directory is


def test_what_was_named_specc_runtime_before_is_put_back_after_each_run(experiment, monkeypatch):
    by_hand(monkeypatch)
    before = types.ModuleType("specc_runtime")
    monkeypatch.setitem(sys.modules, "specc_runtime", before)
    for _ in range(2):  # two runs in one process: each has a fresh runtime
        with pytest.raises(RuntimeError, match="the experiment stops here"):
            run(experiment)
        assert sys.modules["specc_runtime"] is before
    first, second = (seen["runtime"] for seen in SEEN)
    assert first is not second and before not in (first, second)
    assert "specc_runtime" not in cloudpickle.list_registry_pickle_by_value()


def test_a_runtime_registered_by_value_before_the_run_stays_registered(experiment, monkeypatch):
    by_hand(monkeypatch)
    before = types.ModuleType("specc_runtime")
    monkeypatch.setitem(sys.modules, "specc_runtime", before)
    cloudpickle.register_pickle_by_value(before)
    try:
        with pytest.raises(RuntimeError):
            run(experiment)
        assert sys.modules["specc_runtime"] is before
        assert "specc_runtime" in cloudpickle.list_registry_pickle_by_value()
    finally:
        cloudpickle.unregister_pickle_by_value(before)


def test_an_experiment_of_another_version_is_refused_and_everything_put_back(experiment, monkeypatch):
    by_hand(monkeypatch, version="0.0.1")
    with pytest.raises(SystemExit, match="compile the spec again"):
        run(experiment)
    assert "specc_runtime" not in sys.modules
    assert "specc_runtime" not in cloudpickle.list_registry_pickle_by_value()
    assert linecache.getlines(SEEN[0]["file"])  # still there for the traceback being printed
