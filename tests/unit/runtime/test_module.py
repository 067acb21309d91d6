"""specc_runtime.py as a module: what it may import, where it touches files, and that compile copies it verbatim."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from specc import runtime
from specc.runtime import NAME
from tests.conftest import ROOT

RUNTIME = ROOT / "specc" / "runtime" / runtime.FILE
TREE = ast.parse(RUNTIME.read_text(encoding="utf-8"))
# Where the runtime opens, creates or removes files: the run directory's lock, ray.log, and the run's own sources
FILE_FUNCTIONS = {
    "claim": "its lock file",
    "release": "the lock file",
    "open_log": "ray.log",
    "own_sources": "sources",
    "write_fitted": "preprocessing.json, in the checkpoint's temporary directory",
    "read_keras_state": "a checkpoint's state.json, read",
    "open": "a training run's tracker: its run directory",
    "log": "a training run's tracker: progress.csv and result.json",
}
FILE_CALLS = {"open", "os.open", "os.fdopen", "os.makedirs", "os.remove", "os.rmdir", "os.replace", "os.rename"}


def imported_modules(tree: ast.AST) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            names.add((node.module or "").split(".")[0])
    return names


def test_the_runtime_imports_ray_and_the_standard_library_never_specc():
    third_party = {name for name in imported_modules(TREE) if name not in sys.stdlib_module_names}
    # Ray Tune's own dependencies, and torch for a torch experiment's checkpoints (imported where they are written)
    trackers = {"tensorboardX", "mlflow", "wandb"}  # run.callbacks, imported by the tracker that logs to them
    assert third_party <= {"ray", "pyarrow", "tqdm", "pandas", "yaml", "torch", *trackers}, third_party
    statements = [node for node in TREE.body if isinstance(node, (ast.Import, ast.ImportFrom))]
    at_import = {name for node in statements for name in imported_modules(node) if name not in sys.stdlib_module_names}
    assert at_import == {"ray", "pyarrow"}, at_import  # the rest only inside the functions that need them


def test_the_runtime_touches_files_only_in_its_named_places():
    found = set()
    for function in (node for node in ast.walk(TREE) if isinstance(node, ast.FunctionDef)):
        for call in (node for node in ast.walk(function) if isinstance(node, ast.Call)):
            name = ast.unparse(call.func)
            if name in FILE_CALLS:
                found.add((function.name, name))
    assert {function for function, _ in found} <= set(FILE_FUNCTIONS), found
    assert found, "the check finds nothing: the runtime's file calls were renamed"


def test_compile_copies_the_runtime_verbatim(tmp_path):
    """What `specc compile` writes beside the experiment is the module's own bytes, not a rendering of them."""
    from specc.cli import main

    assert main(["compile", str(ROOT / "specs" / "digits_mlp.yaml"), "-o", str(tmp_path / "x.py")]) == 0
    assert (tmp_path / runtime.FILE).read_bytes() == RUNTIME.read_bytes()


def test_the_runtime_says_which_specc_wrote_it():
    from specc import __version__

    assert runtime.version_of(runtime.source()) == __version__


def test_an_experiment_next_to_a_runtime_of_another_specc_is_told_to_recompile():
    import specc_runtime

    specc_runtime.expect(specc_runtime.VERSION)  # the same specc: nothing to say
    with pytest.raises(SystemExit, match=r"specc 0\.0\.1.*compile the spec again") as refused:
        specc_runtime.expect("0.0.1")
    assert str(refused.value.code).startswith(specc_runtime.__file__)  # which runtime was found


def test_the_runtime_is_importable_as_the_module_compile_writes(tmp_path):
    """The runtime written out is the module tests import (pytest's pythonpath), not a copy that drifted."""
    import specc_runtime

    assert Path(specc_runtime.__file__).resolve() == RUNTIME.resolve()


def defined_names(tree: ast.Module) -> set[str]:
    """The functions, classes and constants a module defines at its top level (its imports aside)."""
    found = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            found.add(node.name)
        elif isinstance(node, ast.Assign):
            found |= {target.id for target in node.targets if isinstance(target, ast.Name)}
    return found


GOLDENS = sorted(path for path in (ROOT / "tests" / "golden").glob("*.py") if path.name != runtime.FILE)


@pytest.mark.parametrize("golden", GOLDENS, ids=lambda path: path.stem)
def test_an_experiment_file_defines_nothing_the_runtime_defines(golden):
    """--single-file puts the runtime's definitions after the experiment's in one module: a name both define would
    silently replace the experiment's."""
    assert not defined_names(ast.parse(golden.read_text(encoding="utf-8"))) & defined_names(TREE)


@pytest.mark.parametrize("golden", GOLDENS[:3] + GOLDENS[-3:], ids=lambda path: path.stem)
def test_a_single_file_is_one_module_that_imports_no_runtime(golden):
    text = runtime.single_file(golden.read_text(encoding="utf-8"))
    tree = ast.parse(text)
    assert "specc_runtime" not in imported_modules(tree)
    assert defined_names(TREE) <= defined_names(tree)
    assert text.rstrip().endswith('if __name__ == "__main__":\n    main()')
    qualified = [node for node in ast.walk(tree) if isinstance(node, ast.Attribute) and ast.unparse(node.value) == NAME]
    assert not qualified, "the experiment's calls name the inlined runtime's definitions directly"
    assert "specc_runtime.py" in text  # its comments and strings are left as they are
