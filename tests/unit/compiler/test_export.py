"""export.py's ending (`specc export`, compiler/after.py with exports): real torch models exported to TorchScript and
ONNX, loaded back with torch.jit and onnxruntime and compared, without Ray: the script's data source is replaced by
a batch made here (checkpoint_and_data is the script's one door to the run's data; tests/e2e/test_evaluate.py and
test_tensorflow.py export real checkpoints through it). A model that cannot be exported, or whose export computes
something else, is a clear problem that writes nothing."""

from __future__ import annotations

import importlib.util
import sys

import numpy as np
import pytest

from specc import api
from specc.compiler.after import compile_after
from tests.conftest import ROOT

torch = pytest.importorskip("torch")
nn = torch.nn


@pytest.fixture(scope="module")
def script(tmp_path_factory):
    """digits_mlp's export.py, imported (torch; no Ray is started)."""
    path = tmp_path_factory.mktemp("export") / "export.py"
    path.write_text(compile_after(api.load(ROOT / "specs/digits_mlp.yaml"), str(path), "spec.resolved.yaml", True))
    loader = importlib.util.spec_from_file_location("export_digits_mlp", path)
    module = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(module)
    return module


def exported(script, monkeypatch, tmp_path, model, fmt, x):
    """Runs the script's export_checkpoint on `model` and one batch `x` (in place of the run's data)."""
    monkeypatch.setattr(script, "checkpoint_and_data", lambda *args: (model, [(x, None)], "cpu"))
    output = tmp_path / ("model.pt" if fmt == "torchscript" else "model.onnx")
    return script.export_checkpoint(str(tmp_path), fmt, str(output)), output


class Branching(nn.Module):
    """Its Python branches on its input's values: a trace keeps one branch, torch.export refuses."""

    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Linear(4, 2), nn.Linear(4, 2)

    def forward(self, x):
        return self.a(x) if x.sum() > 0 else self.b(x)


@pytest.mark.parametrize("fmt", ["torchscript", "onnx"])
def test_a_model_is_exported_loaded_back_without_specc_and_agrees(script, monkeypatch, tmp_path, fmt):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Flatten(), nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10)).eval()
    x = torch.rand(16, 1, 8, 8)
    checked, output = exported(script, monkeypatch, tmp_path, model, fmt, x)
    assert checked["format"] == fmt and checked["max_abs_difference"] <= 1e-5
    assert checked["examples"] == 16 + 8 and checked["input_shape"] == [1, 8, 8]
    assert sorted(path.name for path in tmp_path.iterdir()) == [output.name]  # no scratch directory left
    other = torch.rand(5, 1, 8, 8)  # another batch size: the batch dimension is free
    with torch.no_grad():
        expected = model(other).numpy()
    if fmt == "torchscript":
        got = torch.jit.load(str(output))(other).detach().numpy()
    else:
        import onnxruntime

        session = onnxruntime.InferenceSession(str(output), providers=["CPUExecutionProvider"])
        assert [i.name for i in session.get_inputs()] == ["x"] and session.get_inputs()[0].shape[0] == "batch"
        got = session.run(None, {"x": other.numpy()})[0]
    np.testing.assert_allclose(got, expected, atol=1e-5)


def test_a_model_that_branches_on_its_inputs_is_refused_by_onnx_and_caught_after_a_trace(script, monkeypatch, tmp_path):
    x = torch.cat([torch.ones(4, 4), -torch.ones(4, 4)])  # the whole batch sums to 0; its first half to 16
    with pytest.raises(SystemExit, match=r"the model cannot be exported to ONNX: \w+"):
        exported(script, monkeypatch, tmp_path, Branching().eval(), "onnx", x)
    # The trace follows the whole batch's branch (b); the half batch takes a's: the comparison catches it
    with pytest.raises(SystemExit, match=r"the torchscript model's outputs differ from the checkpoint's by"):
        exported(script, monkeypatch, tmp_path, Branching().eval(), "torchscript", x)
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_a_model_that_does_not_return_one_tensor_is_refused(script, monkeypatch, tmp_path):
    class Named(nn.Module):  # a dict of outputs: neither format has a place for its keys
        def forward(self, x):
            return {"logits": x}

    for fmt in ("torchscript", "onnx"):
        with pytest.raises(SystemExit, match=r"the model returns a dict, not one tensor: it cannot be exported"):
            exported(script, monkeypatch, tmp_path, Named(), fmt, torch.ones(4, 4))
    assert list(tmp_path.iterdir()) == []


def test_onnx_without_its_packages_says_what_to_install(script, monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # as if not installed
    model = nn.Sequential(nn.Linear(4, 2)).eval()
    with pytest.raises(SystemExit, match=r"pip install 'specc\[export\]'"):
        exported(script, monkeypatch, tmp_path, model, "onnx", torch.ones(4, 4))
