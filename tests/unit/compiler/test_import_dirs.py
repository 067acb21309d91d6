"""Issue 48: validate and run resolve the project's modules by one rule (check/factories.py: import_dirs): the spec's
directory, then cluster.working_dir. Validate looks modules up in those directories; every compiled script that
imports the project's code (torch and Keras training, an objective, evaluate/export and predict) gets the same list
as IMPORT_DIRS, and its use_spec_dir puts exactly those directories, in that order, on sys.path. Here the directories
each script's own use_spec_dir adds are compared with validate's, for a working directory above the spec's."""

from __future__ import annotations

import ast
import os
import types
from pathlib import Path
from unittest import mock

import pytest
import specc_runtime

from specc import api
from specc.check.factories import _project_dirs, import_dirs
from specc.compiler.after import compile_after, compile_predict
from specc.read.project import Project

MODEL = """\
specc: 1
name: wd
framework: {framework}
model: {{type: custom, factory: "lab.models:make"}}
dataset: {dataset}
training: {{epochs: 1}}
cluster: {{working_dir: "{working_dir}"}}
"""
OBJECTIVE = """\
specc: 1
name: wd
objective: {function: "lab.search:search", params: {x: 0.0}, metrics: [score], max_steps: 2}
tune: {metric: score, mode: max, num_samples: 1, space: {objective.params.x: {uniform: [0, 1]}}}
cluster: {working_dir: ".."}
"""
MAKE = "def make(input_shape, num_outputs):\n    pass\n"


@pytest.fixture
def project(tmp_path) -> Path:
    """project/lab/{models,search}.py, project/specs/ (which holds no module), project/specs/data.csv."""
    root = tmp_path / "project"
    (root / "lab").mkdir(parents=True)
    (root / "lab" / "__init__.py").write_text("", encoding="utf-8")
    (root / "lab" / "models.py").write_text(MAKE, encoding="utf-8")
    (root / "lab" / "search.py").write_text("def search(config):\n    pass\n", encoding="utf-8")
    (root / "specs").mkdir()
    (root / "specs" / "data.csv").write_text("a,b,label\n1,2,0\n3,4,1\n", encoding="utf-8")
    return root


def added_to_sys_path(source: str, spec_dir: str) -> list[str]:
    """What the script puts on sys.path for `spec_dir`: an after-training script with its own use_spec_dir (and
    IMPORT_DIRS, when it has one); an experiment file through the runtime's, with the directories it passes it."""
    tree = ast.parse(source)
    fake_sys = types.SimpleNamespace(path=["/installed"])
    own = [node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == "use_spec_dir"]
    dirs = [
        node for node in tree.body if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "IMPORT_DIRS"
    ]
    if own:
        namespace = {"os": os, "sys": fake_sys}
        exec(compile(ast.Module(body=own + dirs, type_ignores=[]), "<script>", "exec"), namespace)
        calls = [lambda: namespace["use_spec_dir"](spec_dir)]
    else:
        entries = [zip(node.keys, node.values, strict=True) for node in ast.walk(tree) if isinstance(node, ast.Dict)]
        in_run = [value for pairs in entries for key, value in pairs if key and ast.unparse(key) == "'import_dirs'"]
        chosen = dirs[0].value if dirs else in_run[0] if in_run else None
        import_dirs = ast.literal_eval(chosen) if chosen is not None else (".",)
        if dirs:  # each call site hands the runtime the script's list
            assert "specc_runtime.use_spec_dir(" in source and source.count(", IMPORT_DIRS)") >= 1
        calls = [lambda: specc_runtime.use_spec_dir(spec_dir, import_dirs)]
    with mock.patch.object(specc_runtime, "sys", fake_sys):
        for call in calls * 2:  # twice (a driver, then a worker in the same process): added once
            call()
    return fake_sys.path[:-1]


def validate_dirs(spec: Path, project: Path) -> list[str]:
    experiment = api.load(spec, root=project)
    return [os.path.realpath(d) for d in _project_dirs(experiment, Project(spec.parent, project))]


def scripts(spec: Path, project: Path, run_dir: Path) -> dict[str, str]:
    experiment = api.load(spec, root=project)
    compiled = {"script": api.compile(experiment, str(run_dir / "script.py"))}
    if experiment.objective is None:
        compiled["evaluate"] = compile_after(experiment, str(run_dir / "evaluate.py"), "spec.resolved.yaml")
        compiled["export"] = compile_after(experiment, str(run_dir / "export.py"), "spec.resolved.yaml", True)
        if experiment.dataset.type == "csv":
            compiled["predict"] = compile_predict(experiment, str(run_dir / "predict.py"), "spec.resolved.yaml")
    return compiled


@pytest.mark.parametrize(
    ("framework", "dataset"),
    [
        ("torch", "{type: digits}"),
        ("tensorflow", "{type: digits}"),
        ("torch", "{type: csv, path: data.csv, label: label}"),
    ],
)
def test_every_script_imports_from_the_directories_validate_looked_in(project, tmp_path, framework, dataset):
    spec = project / "specs" / "wd.yaml"
    spec.write_text(MODEL.format(framework=framework, dataset=dataset, working_dir=".."), encoding="utf-8")
    expected = [str(project / "specs"), str(project)]
    assert validate_dirs(spec, project) == expected
    for name, source in scripts(spec, project, tmp_path / "runs").items():
        assert added_to_sys_path(source, str(project / "specs")) == expected, name


def test_an_objective_script_imports_from_the_directories_validate_looked_in(project, tmp_path):
    spec = project / "specs" / "search.yaml"
    spec.write_text(OBJECTIVE, encoding="utf-8")
    expected = [str(project / "specs"), str(project)]
    assert validate_dirs(spec, project) == expected
    source = scripts(spec, project, tmp_path / "runs")["script"]
    assert added_to_sys_path(source, str(project / "specs")) == expected
    # on a cluster's node the same list starts from the spec's directory inside the unpacked working directory
    assert added_to_sys_path(source, "/node/pkg/specs") == ["/node/pkg/specs", "/node/pkg"]


def test_without_another_working_dir_the_spec_dir_alone(project, tmp_path):
    """No cluster.working_dir, or one that is the spec's directory: one directory, and the script as before."""
    (project / "specs" / "beside.py").write_text(MAKE, encoding="utf-8")
    for working_dir in (".", "./"):
        spec = project / "specs" / "wd.yaml"
        text = MODEL.format(framework="torch", dataset="{type: digits}", working_dir=working_dir)
        spec.write_text(text.replace("lab.models:make", "beside:make"), encoding="utf-8")
        assert import_dirs(api.load(spec, root=project), spec.parent) == ["."]
        source = scripts(spec, project, tmp_path / "runs")["script"]
        assert "IMPORT_DIRS" not in source
        assert added_to_sys_path(source, str(project / "specs")) == [str(project / "specs")]
