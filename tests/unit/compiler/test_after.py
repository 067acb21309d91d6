"""The after-training script (`specc evaluate`'s evaluate.py, compiler/after.py): compiled for every example spec and
every data variant, it is a ruff-clean, ruff-formatted program, the same text each time, that imports only what it
uses. tests/e2e/test_evaluate.py (and the e2e modules it names) run it on real checkpoints."""

from __future__ import annotations

import ast
import json
import subprocess
import sys

import pytest
import yaml

from specc import api
from specc.compiler.after import _with_used_imports, compile_after
from tests.conftest import ROOT
from tests.unit.compiler.test_streaming_data import DATASETS, spec_text

RECORDED = "spec.resolved.yaml beside it"  # which of the run's files the spec is, for the docstring
EXAMPLES = sorted(
    path
    for path in (ROOT / "specs").glob("*.yaml")
    if "objective:" not in path.read_text(encoding="utf-8")  # an objective trains no model of specc's
)


def ruff(*args) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "ruff", *args[:1], "--config", str(ROOT / "pyproject.toml"), "--no-cache"]
    return subprocess.run([*command, *args[1:]], capture_output=True, text=True, cwd=ROOT)


def test_every_example_and_data_variant_compiles_to_a_clean_program(write_spec, tmp_path):
    written = []
    for spec in EXAMPLES:
        script = tmp_path / f"{spec.stem}.py"
        source = compile_after(api.load(spec), str(script), RECORDED)
        assert source == compile_after(api.load(spec), str(script), RECORDED)  # deterministic
        assert "def evaluate_checkpoint(directory, config=CONFIG, address=None):" in source
        script.write_text(source, encoding="utf-8")
        written.append(str(script))
    for framework in ("torch", "tensorflow"):
        for name, dataset in DATASETS.items():
            if framework == "tensorflow" and "torch_dataloader" in dataset:
                continue
            spec = write_spec(spec_text(dataset, framework), f"{framework}_{name}.yaml")
            script = tmp_path / f"{framework}_{name}.py"
            script.write_text(compile_after(api.load(spec), str(script), RECORDED), encoding="utf-8")
            written.append(str(script))
    checked = ruff("check", *written)
    assert checked.returncode == 0, checked.stdout[-4000:]
    formatted = ruff("format", "--check", *written)
    assert formatted.returncode == 0, formatted.stdout[-4000:]
    assert len(written) == len(EXAMPLES) + 2 * len(DATASETS) - 1


@pytest.mark.parametrize("spec", ["digits_mlp", "customers_csv", "digits_tf_cnn"])
def test_it_runs_no_training(spec, tmp_path):
    """Only the data, the model and the evaluation of the training script: no optimiser, no worker group, no Tune,
    no run directory handling."""
    source = compile_after(api.load(ROOT / "specs" / f"{spec}.yaml"), str(tmp_path / "evaluate.py"), RECORDED)
    defined = {node.name for node in ast.parse(source).body if isinstance(node, ast.FunctionDef | ast.ClassDef)}
    assert {"build_model", "load_model", "evaluate_checkpoint", "main"} <= defined
    assert not defined & {"train_func", "make_trainer", "claim", "write_results", "restore", "search_space"}
    assert "ray.train" not in source and "ray.tune" not in source


def test_a_searched_spec_compiles_from_its_best_trial(write_spec, tmp_path):
    """A search is evaluated from best.yaml, the best trial as a spec of its own: its values are CONFIG's."""
    best = yaml.safe_load((ROOT / "specs/digits_asha.yaml").read_text(encoding="utf-8"))
    best.pop("tune"), best.pop("scheduler", None), best.pop("stop", None)
    best["extends"] = str(ROOT / "specs/base_digits.yaml")
    best.setdefault("training", {}).setdefault("optimizer", {})["lr"] = 0.0123
    spec = write_spec(yaml.safe_dump(best), "best.yaml")
    source = compile_after(api.load(spec, root=ROOT.parent), str(tmp_path / "evaluate.py"), RECORDED)
    assert '"lr": 0.0123' in source


def test_imports_are_pruned_to_what_the_code_uses():
    source = "\n".join(
        [
            '"""doc"""',
            "",
            "import csv",
            "import os",
            "import time",
            "",
            "import numpy as np",
            "import ray.train",
            "import torch",
            "from torch import nn",
            "",
            "X = os.path.join('time', 'csv')  # time, csv: words, not names",
            "Y = np.zeros(1)",
            "Z = torch.ones(1), json.dumps({})",
            "",
        ]
    )
    kept = _with_used_imports(source).split("\n")
    assert kept[2:8] == ["import json", "import os", "", "import numpy as np", "import torch", ""]


def test_every_example_compiles_to_a_clean_export_script(tmp_path):
    """export.py (`specc export`): the after-training script with an export ending, for each framework's formats."""
    written = []
    for spec in EXAMPLES:
        experiment = api.load(spec)
        script = tmp_path / f"{spec.stem}.py"
        source = compile_after(experiment, str(script), RECORDED, exports=True)
        assert source == compile_after(experiment, str(script), RECORDED, exports=True)  # deterministic
        assert "def export_checkpoint(directory, fmt, output, config=CONFIG, address=None):" in source
        formats = '["torchscript", "onnx"]' if experiment.framework == "torch" else '["saved_model"]'
        assert f'parser.add_argument("--format", required=True, choices={formats})' in source
        script.write_text(source, encoding="utf-8")
        written.append(str(script))
    checked = ruff("check", *written)
    assert checked.returncode == 0, checked.stdout[-4000:]
    formatted = ruff("format", "--check", *written)
    assert formatted.returncode == 0, formatted.stdout[-4000:]


def test_evaluate_py_run_alone_reads_no_preprocessing_json_but_the_checkpoints_own(tmp_path):
    """evaluate.py run on its own (without specc's checks of the run directory): a checkpoint's preprocessing.json
    that is a link (to a user's file, say), too large or not JSON is refused with a message, never read or shown."""
    import types

    source = compile_after(api.load(ROOT / "specs" / "customers_csv.yaml"), str(tmp_path / "evaluate.py"), RECORDED)
    module = types.ModuleType("evaluate_alone")
    module.__file__ = str(tmp_path / "evaluate.py")
    exec(compile(source, str(tmp_path / "evaluate.py"), "exec"), module.__dict__)
    checkpoint = tmp_path / "checkpoint_000001"
    checkpoint.mkdir()
    secret = tmp_path / "id_rsa"
    secret.write_text('{"kind": "table", "key": "secret"}', encoding="utf-8")
    (checkpoint / "preprocessing.json").symlink_to(secret)
    with pytest.raises(SystemExit, match=r"not a preprocessing\.json") as refused:
        module.read_fitted(str(checkpoint))
    assert "secret" not in str(refused.value)
    (checkpoint / "preprocessing.json").unlink()
    with open(checkpoint / "preprocessing.json", "wb") as handle:  # sparse: 64 MiB and a byte, none of it on disk
        handle.truncate((64 << 20) + 1)
    with pytest.raises(SystemExit, match=r"not a preprocessing\.json"):
        module.read_fitted(str(checkpoint))
    many = {"kind": "table", "categories": {"city": [f"city {i}" for i in range(200_000)]}}  # 2.6 MB: read
    (checkpoint / "preprocessing.json").write_text(json.dumps(many), encoding="utf-8")
    assert module.read_fitted(str(checkpoint))[1] == many
    (checkpoint / "preprocessing.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(SystemExit, match="is not JSON"):
        module.read_fitted(str(checkpoint))
    (checkpoint / "preprocessing.json").write_text('{"kind": "table"}', encoding="utf-8")
    assert module.read_fitted(str(checkpoint)) == (str(checkpoint / "preprocessing.json"), {"kind": "table"})
