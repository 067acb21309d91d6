"""specc.runtime: the text of the runtime every compiled script shares, and the pair `specc compile` writes
(the experiment file and specc_runtime.py beside it, or one file with --single-file)."""

from __future__ import annotations

import os

from specc import api, runtime
from specc.spec.version import __version__
from tests.conftest import MINIMAL


def test_the_runtime_names_the_specc_that_wrote_it():
    assert runtime.version_of(runtime.source()) == __version__
    assert runtime.version_of('VERSION = "9.9"  # a comment after it\n') == "9.9"
    assert runtime.version_of('"""not a runtime"""\n') is None
    assert runtime.version_of('MY_VERSION = "1"\nVERSION = "2" + x\n') is None


def test_the_pair_is_the_experiment_and_the_runtime_beside_it(write_spec):
    experiment = api.load(write_spec(MINIMAL))
    text = api.compile(experiment, "build/tiny.py")
    assert api.compiled_files(experiment, "build/tiny.py") == {
        "build/tiny.py": text,
        os.path.join("build", "specc_runtime.py"): runtime.source(),
    }
    assert api.compiled_files(experiment, "tiny.py") == {"tiny.py": text, "specc_runtime.py": runtime.source()}
    single = api.compiled_files(experiment, "build/tiny.py", single_file=True)
    assert single == {"build/tiny.py": runtime.single_file(text)}


def test_a_single_file_is_told_from_an_experiment_file(write_spec):
    text = api.compile(api.load(write_spec(MINIMAL)), "tiny.py")
    assert runtime.is_single_file(runtime.single_file(text))
    assert not runtime.is_single_file(text) and not runtime.is_single_file(runtime.source())
    assert runtime.imports_runtime(text) and not runtime.imports_runtime(runtime.single_file(text))
    assert not runtime.imports_runtime("import specc_runtime_extra\n# import specc_runtime\n")
    assert runtime.beside("a/b/x.py") == os.path.join("a", "b", "specc_runtime.py")
    assert runtime.beside("x.py") == "specc_runtime.py"
