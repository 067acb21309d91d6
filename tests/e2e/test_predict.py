"""`specc predict RUN_DIR INPUT -o OUTPUT` on a real search (issue 20): the best trial's checkpoint over a csv's rows
in Ray Data's actors gives the model's own probabilities for them, prepared as the trial's preprocessing.json says,
in the input's order beside the rows' ids; the predict.py it writes runs on its own; what a run directory or the
command line gets wrong is a clear problem that writes nothing. `specc export` of the same trial: its ONNX model and
the preprocessing JSON beside it give the same probabilities without specc.

(tests/e2e/test_streaming_data.py predicts with a torch run on a csv with categories and two image-folder runs,
tests/e2e/test_tensorflow.py with a Keras regression run; tests/unit/compiler/test_predict.py checks the script.)"""

from __future__ import annotations

import ast
import json
import runpy
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from specc.cli import main
from specc.results.after import _ray_data_settings_kept

from .conftest import read_best, run_spec

pytestmark = pytest.mark.slow

ROOT = Path(__file__).parents[2]
SPEC = """\
specc: 1
name: churn-search
framework: torch
model: {type: mlp, hidden_sizes: [16]}
dataset: {type: csv, path: customers.csv, label: churned, categorical: [plan, region], missing: median, batch_size: 64}
training: {epochs: 2, optimizer: {type: adam, lr: 0.01}, metrics: [accuracy]}
scaling: {num_workers: 0}
run: {checkpoints_to_keep: 1}
tune:
  metric: val_accuracy
  mode: max
  space: {model.hidden_sizes: {grid: [[16], [8]]}}  # two trials whose models differ in shape: best.yaml's builds
"""


@pytest.fixture(scope="module")
def searched(tmp_path_factory, local_ray):
    root = tmp_path_factory.mktemp("predict")
    shutil.copyfile(ROOT / "specs/data/customers.csv", root / "customers.csv")
    (root / "churn.yaml").write_text(SPEC, encoding="utf-8")
    run_spec(root / "churn.yaml", storage_path=root / "runs", quiet=True)
    return root, root / "runs" / "churn-search"


def new_rows(root: Path) -> Path:
    """Customers the model never saw, with an id column: a plan no training row has, a missing age and region."""
    import pandas as pd

    rows = pd.read_csv(root / "customers.csv").drop(columns="churned").head(120).reset_index(drop=True)
    rows.insert(0, "customer", [f"c{index:04d}" for index in range(len(rows))])
    rows.loc[3, "plan"], rows.loc[5, "age"], rows.loc[7, "region"] = "enterprise", np.nan, np.nan
    rows["age"] = rows["age"].astype("Int64")
    path = root / "new.csv"
    rows.to_csv(path, index=False)
    return path


def prepared(rows, state):
    """The rows as the model's inputs, as a preprocessing.json says (docs/data.md): filled, standardised, one-hot."""
    columns = []
    for name in state["features"]:
        values = rows[name].astype("float64").fillna(state["fill"][name])
        mean, std = state["standardize"][name]
        columns.append(((values - mean) / std).to_numpy()[:, None])
    for name in state["categorical"]:
        values = rows[name].fillna(state["fill"][name]).to_numpy()
        columns.append(np.stack([values == category for category in state["categories"][name]], axis=1))
    return np.concatenate(columns, axis=1).astype(np.float32)


def model_probabilities(checkpoint: Path, rows, hidden: int):
    """The checkpoint's MLP, built here as nn.Sequential, on the rows prepared as its preprocessing.json says; the
    softmax of its logits."""
    import torch
    from torch import nn

    state = json.loads((checkpoint / "preprocessing.json").read_text(encoding="utf-8"))
    x = torch.from_numpy(prepared(rows, state))
    model = nn.Sequential(nn.Flatten(), nn.Linear(x.shape[1], hidden), nn.ReLU(), nn.Linear(hidden, 2))
    model.load_state_dict(torch.load(checkpoint / "state.pt", weights_only=True)["model"])
    with torch.no_grad():
        return torch.softmax(model.eval()(x).double(), dim=1).numpy()


def test_the_best_trial_predicts_new_rows_as_its_model_does(searched, capsys, monkeypatch):
    import pandas as pd

    root, run_dir = searched
    source, output = new_rows(root), root / "predictions.csv"
    code = main(["predict", str(run_dir), str(source), "-o", str(output), "--id", "customer", "--root", str(root)])
    out, err = capsys.readouterr()
    assert code == 0, err
    best = read_best(run_dir)
    assert f"(trial {best['trial_id']}): 120 predictions in" in out and str(output) in out

    predicted = pd.read_csv(output)
    assert list(predicted.columns) == ["customer", "predicted_churned", "probability_0", "probability_1"]
    rows = pd.read_csv(source)
    assert predicted["customer"].tolist() == rows["customer"].tolist()  # the input's order
    hidden = best["config"]["model.hidden_sizes"][0]
    expected = model_probabilities(Path(best["checkpoint"]), rows, hidden)
    np.testing.assert_allclose(predicted[["probability_0", "probability_1"]].to_numpy(), expected, atol=1e-6)
    assert (predicted["predicted_churned"].to_numpy() == expected.argmax(axis=1)).all()

    # predict.py, compiled from the best trial's best.yaml, runs on its own as the docs show: a program of its own
    # (nothing of specc's imported), run as __main__ (in this process: the session's Ray, not a new one)
    script = run_dir / "predict.py"
    text = script.read_text(encoding="utf-8")
    tree = ast.parse(text)
    imported = {
        alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names
    }
    imported |= {node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert "trial " + best["trial_id"] in text and "specc" not in imported and "ray" in imported
    again = root / "again.parquet"
    monkeypatch.setattr(
        sys, "argv", [str(script), best["checkpoint"], str(source), "-o", str(again), "--id", "customer"]
    )
    with _ray_data_settings_kept():  # the script quiets Ray Data for its process: not for the session's next tests
        runpy.run_path(str(script), run_name="__main__")
    assert capsys.readouterr().out.strip() == f"120 predictions written to {again}"
    import pyarrow.parquet as pq

    np.testing.assert_array_equal(pq.read_table(again).to_pandas().to_numpy(), predicted.to_numpy())


def test_what_cannot_be_predicted_is_a_clear_problem_and_writes_nothing(searched, capsys):
    root, run_dir = searched
    output, rows = root / "refused.parquet", str(root / "customers.csv")
    cases = {
        # a column the model read is not in the input
        ("predict", str(run_dir), str(root / "less.csv"), "-o", str(output)): "has no column 'tenure_months'",
        # an output format specc does not write
        ("predict", str(run_dir), rows, "-o", str(root / "p.json")): "name a .parquet or .csv",
        # no such input
        ("predict", str(run_dir), str(root / "nowhere.csv"), "-o", str(output)): "no such file or directory",
        # an id column the input lacks
        ("predict", str(run_dir), rows, "-o", str(output), "--id", "nope"): "no column 'nope'",
        # more copies of the model than the session's 2 CPUs hold beside Ray Data's reads: refused, never a hang
        ("predict", str(run_dir), rows, "-o", str(output), "--actors", "11"): "give fewer actors",
    }
    import pandas as pd

    pd.read_csv(root / "customers.csv").drop(columns="tenure_months").to_csv(root / "less.csv", index=False)
    for argv, message in cases.items():
        assert main([*argv, "--root", str(root)]) == 2
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err, err
    assert not output.exists() and not list(root.glob(".refused*"))

    # a tampered checkpoint: preprocessing.json that names a column no file has
    tampered = root / "runs-tampered"
    shutil.copytree(run_dir.parent, tampered)
    checkpoint = Path(read_best(tampered / "churn-search")["checkpoint"].replace(str(run_dir.parent), str(tampered)))
    state = json.loads((checkpoint / "preprocessing.json").read_text(encoding="utf-8"))
    (checkpoint / "preprocessing.json").write_text(json.dumps({**state, "features": ["\x1b[31mred"]}), encoding="utf-8")
    argv = ["predict", str(tampered / "churn-search"), rows, "-o", str(output)]
    assert main([*argv, "--root", str(root)]) == 2
    err = capsys.readouterr().err
    assert "has no column '\\x1b[31mred'" in err and "\x1b" not in err, err
    assert not output.exists()


@pytest.mark.in_turn(4)  # in turn (tests/e2e/conftest.py): test_evaluate exports a model to ONNX every time
def test_the_best_trial_exports_to_onnx_with_the_preprocessing_beside_it(searched, capsys):
    """specc export (issue 20) of a search on a csv streamed through Ray Data: the ONNX model, run by onnxruntime on
    new rows prepared as the JSON beside it says, gives the best trial's probabilities."""
    import onnxruntime
    import pandas as pd

    root, run_dir = searched
    output = root / "churn.onnx"
    code = main(["export", str(run_dir), "--format", "onnx", "-o", str(output), "--root", str(root)])
    out, err = capsys.readouterr()
    assert code == 0, err
    best = read_best(run_dir)
    assert f"(trial {best['trial_id']}): exported as onnx" in out
    described = json.loads((root / "churn.preprocessing.json").read_text(encoding="utf-8"))
    assert described["run"]["trial_id"] == best["trial_id"] and described["preprocessing"]["kind"] == "table"
    rows = pd.read_csv(new_rows(root))
    logits = onnxruntime.InferenceSession(str(output)).run(None, {"x": prepared(rows, described["preprocessing"])})[0]
    probabilities = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    hidden = best["config"]["model.hidden_sizes"][0]
    np.testing.assert_allclose(probabilities, model_probabilities(Path(best["checkpoint"]), rows, hidden), atol=1e-5)
