"""Issue 15, class 2: a spec alone runs no code. A factory is a function or class defined in a module of the
project or of an installed package that is not the standard library, checked without importing anything; the
compiled script checks the same before it calls one.

Before: `factory: os:system` with `kwargs: {command: ...}` validated and ran the command on `specc run`.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from specc import api
from specc.cli import main
from tests.conftest import ROOT


def custom(project: Path, factory: str, section: str = "model", kwargs: str = "{}") -> Path:
    model = f"{{type: custom, factory: '{factory}', kwargs: {kwargs}}}" if section == "model" else "{type: mlp}"
    dataset = f"{{type: custom, factory: '{factory}', kwargs: {kwargs}}}" if section == "dataset" else "{type: digits}"
    path = project / "spec.yaml"
    path.write_text(
        f"specc: 1\nname: hostile\nframework: torch\nmodel: {model}\ndataset: {dataset}\ntraining: {{epochs: 1}}\n"
    )
    return path


def codes(path: Path) -> list[tuple[str, str]]:
    return [(p.code, p.path) for p in api.check_file(path).problems]


@pytest.mark.parametrize(
    "factory", ["os:system", "builtins:exec", "subprocess:run", "importlib:import_module", "pickle:loads"]
)
@pytest.mark.parametrize("section", ["model", "dataset"])
def test_the_standard_library_is_no_factory(tmp_path, factory, section):
    assert codes(custom(tmp_path, factory, section)) == [("E214", f"{section}.factory")]


def test_a_name_a_project_module_imports_is_no_factory(tmp_path):
    (tmp_path / "helpers.py").write_text("from os import system\nfrom subprocess import run as make\n")
    for factory in ("helpers:system", "helpers:make"):
        (problem,) = api.check_file(custom(tmp_path, factory)).problems
        assert problem.code == "E214" and "not a function or class defined in 'helpers'" in problem.message


def test_a_project_module_named_like_the_standard_library_is_refused(tmp_path):
    (tmp_path / "os.py").write_text("def system(command): ...\n")  # `import os` would give Python's, not this
    assert codes(custom(tmp_path, "os:system")) == [("E214", "model.factory")]


def test_a_module_that_links_out_of_the_project_is_refused(tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "evil.py").write_text("def make(input_shape, num_outputs): ...\n")
    project = tmp_path / "project"
    project.mkdir()
    (project / "nets.py").symlink_to(outside / "evil.py")
    assert codes(custom(project, "nets:make")) == [("E023", "model.factory")]


def trust(project: Path, *modules: str) -> None:
    listed = ", ".join(f'"{module}"' for module in modules)
    (project / "pyproject.toml").write_text(f"[project]\nname = 'x'\n\n[tool.specc]\ntrusted-modules = [{listed}]\n")


def test_an_installed_package_must_define_the_name_itself(tmp_path):
    trust(tmp_path, "yaml")
    assert codes(custom(tmp_path, "yaml:safe_load")) == []  # a function yaml/__init__.py defines
    assert codes(custom(tmp_path, "yaml:io")) == [("E214", "model.factory")]  # a module it imports


@pytest.mark.parametrize("factory", ["yaml:unsafe_load", "yaml:safe_load", "numpy:load", "pandas:read_pickle"])
@pytest.mark.parametrize("section", ["model", "dataset"])
def test_an_installed_package_the_project_does_not_trust_is_no_factory(tmp_path, factory, section):
    """Issue 53: `yaml:unsafe_load` with a `!!python/object/apply` string in its kwargs ran a shell command on
    `specc run --smoke`, with no Python file in the project."""
    (problem,) = api.check_file(custom(tmp_path, factory, section)).problems
    assert (problem.code, problem.path) == ("E214", f"{section}.factory")
    assert "trusted-modules" in problem.hint and "pyproject.toml" in problem.hint


def test_a_namespace_for_models_needs_no_say_so(tmp_path):
    assert codes(custom(tmp_path, "torchvision.models.resnet:resnet18")) == []


def test_trust_is_by_namespace_not_by_prefix(tmp_path):
    trust(tmp_path, "yaml.constructor")
    assert codes(custom(tmp_path, "yaml:unsafe_load")) == [("E214", "model.factory")]
    trust(tmp_path, "tor")
    assert codes(custom(tmp_path, "torch.hub:load")) == [("E214", "model.factory")]


def test_a_malformed_pyproject_trusts_nothing_more(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.specc\ntrusted-modules = ['yaml']\n")
    assert codes(custom(tmp_path, "yaml:safe_load")) == [("E214", "model.factory")]
    (tmp_path / "pyproject.toml").write_text("[tool.specc]\ntrusted-modules = {yaml = 1}\n")
    assert codes(custom(tmp_path, "yaml:safe_load")) == [("E214", "model.factory")]


def test_a_factory_defined_in_the_project_is_accepted(tmp_path):
    package = tmp_path / "nets" / "v2"
    package.mkdir(parents=True)
    (package / "build.py").write_text("import torch\n\ntry:\n    def make(a, b): ...\nexcept ImportError:\n    pass\n")
    (package / "layers.py").write_text("class Block:\n    pass\n")
    assert codes(custom(tmp_path, "nets.v2.build:make")) == []
    assert codes(custom(tmp_path, "nets.v2.layers:Block")) == []


def test_a_module_found_nowhere_is_a_warning_when_trusted_else_refused(tmp_path):
    assert codes(custom(tmp_path, "not_written_yet:make")) == [("E214", "model.factory")]
    trust(tmp_path, "not_written_yet")  # installed where it runs, not here
    assert codes(custom(tmp_path, "not_written_yet:make")) == [("W302", "model.factory")]


def test_validate_imports_nothing(tmp_path):
    marker = tmp_path / "imported"
    (tmp_path / "nets.py").write_text(f"open({str(marker)!r}, 'w').close()\n\ndef make(a, b): ...\n")
    assert codes(custom(tmp_path, "nets:make")) == []
    assert not marker.exists()


def test_specc_run_refuses_os_system_before_anything_runs(tmp_path, capsys):
    marker = tmp_path / "owned"
    path = custom(tmp_path, "os:system", kwargs=f"{{command: 'touch {marker}'}}")
    assert main(["run", str(path)]) == 1
    assert "E214" in capsys.readouterr().err
    assert not marker.exists()


def test_the_compiled_scripts_check_the_factory_they_load(tmp_path):
    """The scripts stand alone (they may be run without specc): the runtime's load_factory, which the experiment
    file calls, and an after-training script's own copy refuse what validate refuses."""
    import specc_runtime

    from specc.compiler.after import compile_after

    experiment = api.load(ROOT / "specs" / "custom_model.yaml")
    assert "specc_runtime.load_factory(" in api.compile(experiment)
    tree = ast.parse(compile_after(experiment, str(tmp_path / "evaluate.py"), "spec.resolved.yaml"))
    (function,) = [node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == "load_factory"]
    runtime = ast.parse(Path(specc_runtime.__file__).read_text(encoding="utf-8"))
    (own,) = [node for node in runtime.body if isinstance(node, ast.FunctionDef) and node.name == "load_factory"]
    assert ast.unparse(function) == ast.unparse(own)  # one rule, in both places a factory is imported
    namespace: dict = {}
    exec("import importlib, inspect\n" + ast.unparse(function), namespace)
    for load_factory in (specc_runtime.load_factory, namespace["load_factory"]):
        assert load_factory("json:loads").__name__ == "loads"
        # a builtin, a module json imports, a class it re-exports from json.decoder, a name it does not have
        for reference in ("os:system", "json:codecs", "json:JSONDecodeError", "json:nothing"):
            with pytest.raises(SystemExit, match="is not a function or class defined in"):
                load_factory(reference)


def test_a_module_in_the_shipped_working_directory_is_checked_too(tmp_path):
    """specs/ beside factories/, cluster.working_dir '..': the workers import factories.* from the shipped copy."""
    (tmp_path / ".git").mkdir()  # the project: a working directory above it is not its code (test_shipping.py)
    (tmp_path / "specs").mkdir()
    (tmp_path / "factories").mkdir()
    (tmp_path / "factories" / "nets.py").write_text("from os import system\n\ndef make(a, b): ...\n")
    for factory, expected in (("factories.nets:make", []), ("factories.nets:system", [("E214", "model.factory")])):
        path = custom(tmp_path / "specs", factory)
        path.write_text(path.read_text() + "cluster: {working_dir: '..'}\n")
        assert codes(path) == expected
