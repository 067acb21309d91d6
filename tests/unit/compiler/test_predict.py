"""The prediction script (`specc predict`'s predict.py, compiler/after.py): golden for the example specs trained on
files, a ruff-clean program for every data variant, and its parts that need no Ray checked on their own: the model's
inputs made from preprocessing.json as training's preprocessors made them, the output columns, and a write that
leaves nothing half-done. tests/e2e/test_streaming_data.py and test_tensorflow.py run it on real checkpoints.

    SPECC_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/unit/compiler/test_predict.py    # rewrite the goldens
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from specc import api
from specc.compiler.after import compile_predict
from tests.conftest import ROOT
from tests.unit.compiler.test_streaming_data import DATASETS, spec_text

GOLDEN = ROOT / "tests" / "golden" / "predict"
UPDATE = os.environ.get("SPECC_UPDATE_GOLDEN") == "1"
RECORDED = "spec.resolved.yaml beside it"
ON_FILES = ["customers_csv", "csv_regression", "digits_image_folder"]  # the example specs trained on files


def ruff(*args) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "ruff", *args[:1], "--config", str(ROOT / "pyproject.toml"), "--no-cache"]
    return subprocess.run([*command, *args[1:]], capture_output=True, text=True, cwd=ROOT)


def compiled(spec: Path, name: str = "predict.py") -> str:
    with contextlib.chdir(ROOT):
        return compile_predict(api.load(spec.relative_to(ROOT)), f"runs/{name}", RECORDED)


@pytest.mark.parametrize("stem", ON_FILES)
def test_the_example_specs_predict_scripts_are_golden(stem):
    source = compiled(ROOT / "specs" / f"{stem}.yaml")
    golden = GOLDEN / f"{stem}.py"
    if UPDATE:
        golden.parent.mkdir(exist_ok=True)
        golden.write_text(source, encoding="utf-8")
    assert source == golden.read_text(encoding="utf-8"), f"{golden} differs: SPECC_UPDATE_GOLDEN=1 rewrites it"


def test_every_file_variant_compiles_to_a_clean_program_that_trains_nothing(write_spec, tmp_path):
    written = [str(GOLDEN / f"{stem}.py") for stem in ON_FILES]
    for framework in ("torch", "tensorflow"):
        for name, dataset in DATASETS.items():
            if "npz" in name or (framework == "tensorflow" and "torch_dataloader" in dataset):
                continue
            spec = write_spec(spec_text(dataset, framework), f"{framework}_{name}.yaml")
            script = tmp_path / f"{framework}_{name}.py"
            source = compile_predict(api.load(spec), str(script), RECORDED)
            assert source == compile_predict(api.load(spec), str(script), RECORDED)  # deterministic
            assert "class Predictor:" in source and "ray.data.ActorPoolStrategy(size=actors)" in source
            assert "ray.train" not in source and "ray.tune" not in source and "optimizer" not in source
            script.write_text(source, encoding="utf-8")
            written.append(str(script))
    checked = ruff("check", *written)
    assert checked.returncode == 0, checked.stdout[-4000:]
    formatted = ruff("format", "--check", *written)
    assert formatted.returncode == 0, formatted.stdout[-4000:]


def imported(source: str, path: Path, name: str):
    path.write_text(source, encoding="utf-8")
    loader = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def customers(tmp_path_factory):
    """customers_csv's predict.py, imported (torch and pyarrow; no Ray is started)."""
    directory = tmp_path_factory.mktemp("predict")
    return imported(compiled(ROOT / "specs/customers_csv.yaml"), directory / "predict.py", "predict_customers")


FITTED = {
    "kind": "table",
    "features": ["age", "fee", "flat"],
    "categorical": ["plan", "region"],
    "label": "churned",
    "missing": "median",
    "fill": {"age": 40.0, "fee": 20.5, "plan": "basic", "region": "north"},
    "categories": {"plan": ["basic", "plus", "pro"], "region": ["north", "south"]},
    "standardize": {"age": [40.0, 10.0], "fee": [20.0, 5.0], "flat": [3.0, 0.0]},
    "input_shape": [8],
    "num_outputs": 2,
}


def test_model_inputs_are_prepared_as_training_prepared_them(customers):
    """Filled (a missing number: its fill; a missing category: the most frequent), standardised (a constant
    column's std counts as 1, as Ray's StandardScaler has it), one-hot in the categories' order; a category training
    never saw encodes as zeros; a number with no fill stays NaN."""
    import pyarrow as pa

    fitted = {**FITTED, "fill": {key: value for key, value in FITTED["fill"].items() if key != "fee"}}
    block = pa.table(
        {
            "age": pa.array([50, None, 30], pa.int64()),
            "fee": [25.0, 20.0, None],
            "flat": [3.0, 3.0, 3.0],
            "plan": ["pro", None, "enterprise"],
            "region": ["south", "north", None],
            "churned": [1, 0, 1],
        }
    )
    x = customers.model_inputs(block, fitted)
    assert x.dtype == np.float32 and x.shape == (3, 8)
    expected = np.array(
        [
            [1.0, 1.0, 0.0, 0, 0, 1, 0, 1],
            [0.0, 0.0, 0.0, 1, 0, 0, 1, 0],
            [-1.0, np.nan, 0.0, 0, 0, 0, 1, 0],
        ],
        np.float32,
    )
    np.testing.assert_array_equal(x, expected)


def test_predictions_are_softmax_probabilities_and_rows_without_inputs_get_none(customers):
    import pyarrow as pa

    scores = np.array([[2.0, 0.0], [0.0, 3.0], [np.nan, np.nan]])
    known = np.array([True, True, False])
    label, *probabilities = customers.predictions(scores, known, FITTED)
    assert customers.output_names(FITTED) == ["predicted_churned", "probability_0", "probability_1"]
    assert label.to_pylist() == [0, 1, None]
    e = np.exp([2.0, 0.0])
    assert probabilities[0].to_pylist()[:2] == pytest.approx([e[0] / e.sum(), 1 / (1 + np.exp(3.0))])
    assert probabilities[1].to_pylist()[2] is None and probabilities[1].type == pa.float64()


def test_predictions_are_written_whole_or_not_at_all(customers, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    batches = [pa.table({"p": [0.1, 0.2]}), pa.table({"p": [0.3]})]
    output = tmp_path / "out.parquet"
    seen = []
    assert customers.write_predictions(customers.numbered(iter(batches)), str(output), lambda *a: seen.append(a)) == 3
    assert pq.read_table(output).to_pydict() == {"row": [0, 1, 2], "p": [0.1, 0.2, 0.3]}
    assert [rows for rows, _ in seen] == [2, 3]
    csv = tmp_path / "out.csv"
    customers.write_predictions(iter(batches), str(csv))
    assert csv.read_text(encoding="utf-8").splitlines() == ['"p"', "0.1", "0.2", "0.3"]

    def failing():
        yield batches[0]
        raise RuntimeError("an actor died")

    with pytest.raises(RuntimeError, match="an actor died"):
        customers.write_predictions(failing(), str(output))
    assert pq.read_table(output).num_rows == 3  # the earlier file stands
    assert sorted(path.name for path in tmp_path.iterdir()) == ["out.csv", "out.parquet"]  # no partial file left


def test_an_output_that_is_a_link_or_not_a_file_is_refused_before_anything_starts(customers, tmp_path):
    ray_was_up = "ray" in sys.modules and sys.modules["ray"].is_initialized()  # the e2e tests' session Ray, maybe
    target = tmp_path / "someone_elses.parquet"
    target.write_text("kept", encoding="utf-8")
    (tmp_path / "link.parquet").symlink_to(target)
    (tmp_path / "dir.parquet").mkdir()
    for name in ("link.parquet", "dir.parquet"):
        with pytest.raises(customers.PredictProblem, match="not a regular file; not replaced"):
            customers.predict(str(tmp_path), "in.csv", str(tmp_path / name))
    with pytest.raises(customers.PredictProblem, match="its directory does not exist"):
        customers.predict(str(tmp_path), "in.csv", str(tmp_path / "no/out.parquet"))
    assert target.read_text(encoding="utf-8") == "kept"
    # refused before the checkpoint is read (it has no preprocessing.json: that problem would come first otherwise)
    # and before Ray is started
    assert ("ray" in sys.modules and sys.modules["ray"].is_initialized()) == ray_was_up


def test_a_checkpoint_without_its_preprocessing_is_refused(customers, tmp_path):
    with pytest.raises(customers.PredictProblem, match=r"missing, or not a preprocessing\.json"):
        customers.read_preprocessing(str(tmp_path))
    (tmp_path / "preprocessing.json").write_text('{"kind": "images"}', encoding="utf-8")
    with pytest.raises(customers.PredictProblem, match="does not describe a table"):
        customers.read_preprocessing(str(tmp_path))


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"features": "age"}, "features"),
        ({"standardize": {"age": [40.0]}}, "standardize"),
        ({"num_outputs": True}, "num_outputs"),
        ({"categories": {"plan": ["basic"]}}, "categories['region']"),
        ({"fill": {"age": "forty"}}, "fill['age']"),
    ],
)
def test_a_tampered_preprocessing_json_is_refused_naming_what_is_wrong(customers, tmp_path, change, named):
    """A run directory may come from anywhere: what model_inputs would trip over is a problem before any actor."""
    import json

    (tmp_path / "preprocessing.json").write_text(json.dumps({**FITTED, **change}), encoding="utf-8")
    with pytest.raises(customers.PredictProblem, match=re.escape(f": {named} not as specc writes it")):
        customers.read_preprocessing(str(tmp_path))
    (tmp_path / "preprocessing.json").write_text("{", encoding="utf-8")
    with pytest.raises(customers.PredictProblem, match="is not JSON"):
        customers.read_preprocessing(str(tmp_path))


def test_a_checkpoints_files_that_are_links_are_not_followed(customers, tmp_path):
    """A checkpoint's preprocessing.json or state.pt linked elsewhere (a file of the user's) is not read."""
    import json

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "fitted.json").write_text(json.dumps(FITTED), encoding="utf-8")
    (elsewhere / "weights").write_bytes(b"not yours")
    checkpoint = tmp_path / "checkpoint"
    checkpoint.mkdir()
    (checkpoint / "preprocessing.json").symlink_to(elsewhere / "fitted.json")
    (checkpoint / "state.pt").symlink_to(elsewhere / "weights")
    with pytest.raises(customers.PredictProblem, match=r"missing, or not a preprocessing\.json"):
        customers.read_preprocessing(str(checkpoint))
    with pytest.raises(customers.PredictProblem, match=r"state\.pt is missing \(or a link\)"):
        customers.read_weights(str(checkpoint))
