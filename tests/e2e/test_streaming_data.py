"""Users' own data at any size (SPEC §12, issue 19), trained for real on files the tests write:

- a parquet directory larger than the object store its Ray is given streams through Ray Data into 2 workers (its
  own Ray: nothing spills, nothing is materialised) and trains to a loss far below the target's variance;
- a csv with text categories and missing values: Ray Data's preprocessors fitted on the training split (what
  preprocessing.json holds is checked against pandas on the same rows), a category seen only in validation encodes
  as zeros, and a run killed mid-way resumes on the very same split (the checkpoints' validation loss recomputed
  by hand on the rows the compiled split function picks, which Ray Data read once a run: the worker kept them);
- an image folder of scikit-learn's digits as PNGs trains to val_accuracy >= 0.9 through Ray Data (torch and
  Keras) and through torch DataLoaders.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest

from specc.cli import main

from .conftest import compile_spec, python_script, read_best, read_results, run_spec

pytestmark = pytest.mark.slow

FIXTURES = Path(__file__).parent / "fixtures"


def imported(path: Path, name: str):
    """The Python file at `path` as a module of its own (not registered in sys.modules)."""
    loader = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(module)
    return module


def compiled_module(spec, tmp_path, name):
    """The compiled script of `spec`, imported as a module (its functions are what the run calls)."""
    return imported(compile_spec(spec, tmp_path / f"{name}.py"), f"streaming_{name}")


def checkpoints(run_dir) -> list[Path]:
    return sorted(p for p in Path(run_dir).iterdir() if p.name.startswith("checkpoint_") and p.is_dir())


# -- a parquet directory larger than the object store --------------------------------------------------------------
ROWS, WIDTH, FILES = 200_000, 128, 8  # ~100 MB of float32 features, ~145 MB on disk
OBJECT_STORE = 90 * 2**20  # Ray's least is 75 MiB
BIG = """\
specc: 1
name: big-parquet
framework: torch
model: {type: mlp, hidden_sizes: [64]}
dataset: {type: parquet, path: rows, label: y, task: regression, batch_size: 1024}
training: {epochs: 1, loss: mse, optimizer: {type: adam, lr: 0.003}, metrics: [mae]}
scaling: {num_workers: 2, resources_per_worker: {CPU: 0.5}}
run: {storage_path: runs, checkpoints_to_keep: 1}
"""


def write_parquet(directory: Path) -> float:
    """FILES parquet files of a linear target with a little noise; returns the target's variance."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(0)
    weights = rng.normal(size=WIDTH).astype(np.float32) / np.sqrt(WIDTH)
    directory.mkdir()
    targets = []
    for index in range(FILES):
        x = rng.normal(size=(ROWS // FILES, WIDTH)).astype(np.float32)
        y = x @ weights + 0.1 * rng.normal(size=len(x)).astype(np.float32)
        targets.append(y)
        pq.write_table(
            pa.table({**{f"f{i}": x[:, i] for i in range(WIDTH)}, "y": y}), directory / f"part-{index}.parquet"
        )
    return float(np.var(np.concatenate(targets)))


@pytest.mark.in_turn(2)  # in turn (tests/e2e/conftest.py): 90 s; the other streams here run every time
def test_a_parquet_directory_larger_than_the_object_store_streams_and_trains(tmp_path):
    variance = write_parquet(tmp_path / "rows")
    size = sum(path.stat().st_size for path in (tmp_path / "rows").iterdir())
    assert size > OBJECT_STORE
    (tmp_path / "big.yaml").write_text(BIG, encoding="utf-8")
    script = compile_spec(tmp_path / "big.yaml", tmp_path / "big.py")
    ray_dir = Path(tempfile.mkdtemp(prefix="ray", dir="/tmp"))  # short: Ray's socket paths have a length limit
    try:
        from ray._private.utils import estimate_available_memory  # what Ray sizes its default object store by

        share = OBJECT_STORE / estimate_available_memory()
        env = {"RAY_TMPDIR": str(ray_dir), "RAY_DEFAULT_OBJECT_STORE_MEMORY_PROPORTION": str(share)}
        done = python_script(script, "--quiet", cwd=tmp_path, timeout=420, env=env)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        raylet = (ray_dir / "ray/session_latest/logs/raylet.out").read_text(encoding="utf-8", errors="replace")
    finally:
        shutil.rmtree(ray_dir, ignore_errors=True)
    store = float(re.search(r"InitialConfigResources: \{[^}]*object_store_memory: ([0-9.e+]+)", raylet)[1])
    assert store <= OBJECT_STORE * 1.1 and size > 1.3 * store, (store, size)  # the files outweigh the store
    # Nothing went to disk: not while streaming, and not while fitting the scaler (Ray's aggregation gathers 1 GiB
    # of its input before aggregating by default: the whole training split, spilled)
    spills = re.findall(r"Spilled \d+ MiB.*", raylet)
    assert not spills, spills
    # Each split the workers read is a new execution that reads the files (nothing was materialised before), the
    # script's datasource fused with the maps after it: [ReadParquetSlices->...->MapBatches(model_inputs)] ->
    # OutputSplitter, once per epoch and split
    ray_log = (tmp_path / "runs/big-parquet/ray.log").read_text(encoding="utf-8")
    plans = re.findall(r"Execution plan of Dataset (train|validation)_\w+: (.*)", ray_log)
    assert sorted(name for name, _ in plans) == ["train", "validation"], plans
    fused = r"\[ReadParquetSlices->[^]]*MapBatches\(model_inputs\)\] -> OutputSplitter"
    assert all(re.search(fused, plan) for _, plan in plans), plans
    # The preprocessors' fit streamed the rows through Ray Data's hash aggregate; gathering them would have spilled
    assert "ShuffleMapOp[HashAggregateMap" in ray_log and "AllToAllOperator[Aggregate]" not in ray_log
    metrics = read_best(tmp_path / "runs/big-parquet")["metrics"]
    assert metrics["val_loss"] < 0.1 * variance, (metrics, variance)  # the target's noise is 0.01 of ~1.0


# -- a csv with text categories and missing values, killed and resumed ---------------------------------------------
TABLE = """\
specc: 1
name: customers
framework: torch
model:
  type: custom
  factory: "e2e_crash_models:make"
  kwargs: {{crash_at_epoch: 2, armed: "{armed}", log: "{log}"}}
dataset:
  type: csv
  path: customers.csv
  label: churned
  categorical: [plan, region]
  missing: median
  batch_size: 32
training:
  epochs: 4
  optimizer: {{type: adam, lr: 0.01}}
  metrics: [accuracy]
scaling: {{num_workers: 1}}
run: {{checkpoints_to_keep: 4, max_failures: 0}}
"""


def held_out_rows(module, cfg):
    """The rows the compiled split puts in validation, read as the run reads them (Arrow blocks), and all rows; as
    pandas frames indexed by the row's position in the file."""
    import pyarrow as pa
    import ray

    table = pa.concat_tables(ray.get(module.read_rows(cfg).to_arrow_refs()))
    frame = table.to_pandas()
    return frame[module.in_validation(table, cfg)], frame


def with_unseen_category(path: Path, module, cfg) -> str:
    """Rewrites the csv so that one validation row's plan is a category no training row has; returns that row's
    index. (Changing a row changes its hash: the first candidate that stays in validation is kept.)"""
    import pandas as pd

    original = pd.read_csv(path)
    validation, _ = held_out_rows(module, cfg)
    for index in validation.index:
        frame = original.copy()
        frame.loc[index, "plan"] = "enterprise"
        frame["age"] = frame["age"].astype("Int64")
        frame.to_csv(path, index=False)
        moved, _ = held_out_rows(module, cfg)
        if "enterprise" in set(moved["plan"]):
            return index
    raise AssertionError("no validation row kept its side with a new plan")


def executions(ray_log: str) -> dict[str, int]:
    """How many times Ray Data executed each data set of a run (a pass of its files), by ray.log."""
    names = re.findall(r"Execution plan of Dataset (train|validation)_", ray_log)
    return {name: names.count(name) for name in sorted(set(names))}


def latest_state(run_dir: Path) -> dict:
    """state.pt of the run's latest checkpoint."""
    import torch

    return torch.load(checkpoints(run_dir)[-1] / "state.pt", map_location="cpu", weights_only=False)


def inputs_from_state(frame, state):
    """The model's inputs for `frame` as preprocessing.json describes them (docs/data.md): numeric features filled
    and standardised, then each categorical column's one-hot vector in its categories' order."""
    columns = []
    for name in state["features"]:
        values = frame[name].astype("float64").fillna(state["fill"].get(name, np.nan))
        mean, std = state["standardize"][name]
        columns.append(((values - mean) / (std if std > 1e-12 else 1.0)).to_numpy()[:, None])
    for name in state["categorical"]:
        values = frame[name].fillna(state["fill"].get(name)).to_numpy()
        columns.append(np.stack([values == category for category in state["categories"][name]], axis=1))
    return np.concatenate(columns, axis=1).astype(np.float32)


def validation_loss(checkpoint: Path, inputs, labels, factory) -> tuple[float, int]:
    """The mean cross-entropy of the checkpoint's model on these inputs, and the checkpoint's epoch."""
    import torch

    saved = torch.load(checkpoint / "state.pt", map_location="cpu", weights_only=False)
    model = factory.make((inputs.shape[1],), 2, armed="/nonexistent", log=os.devnull)
    model.load_state_dict(saved["model"])
    model.eval()
    with torch.no_grad():
        logits = model(torch.from_numpy(inputs))
        return torch.nn.functional.cross_entropy(logits, torch.from_numpy(labels)).item(), saved["epoch"]


def probabilities(checkpoint: Path, inputs, factory):
    """The checkpoint's model's class probabilities for these inputs (the softmax of its logits)."""
    import torch

    saved = torch.load(checkpoint / "state.pt", map_location="cpu", weights_only=False)
    model = factory.make((inputs.shape[1],), 2, armed="/nonexistent", log=os.devnull)
    model.load_state_dict(saved["model"])
    model.eval()
    with torch.no_grad():
        return torch.softmax(model(torch.from_numpy(inputs)).double(), dim=1).numpy()


def test_a_table_with_categories_and_missing_values_trains_and_resumes_on_the_same_split(
    tmp_path, spec_file, factory_module, local_ray, capsys
):
    factory = factory_module("crash_models.py", "e2e_crash_models")
    shutil.copyfile(Path(__file__).parents[2] / "specs/data/customers.csv", tmp_path / "customers.csv")
    armed, log = tmp_path / "armed", tmp_path / "epochs.log"
    spec = spec_file(TABLE.format(armed=armed, log=log))
    module = compiled_module(spec, tmp_path, "customers")
    cfg = {**module.CONFIG["dataset"], "path": str(tmp_path / "customers.csv")}
    unseen = with_unseen_category(tmp_path / "customers.csv", module, cfg)
    storage, run_dir = tmp_path / "runs", tmp_path / "runs/customers"

    # An interrupted run resumes from its last checkpoint and keeps counting epochs (SPEC §8): the worker dies as
    # epoch 3 starts (max_failures 0: no retry), after the checkpoints of epochs 1 and 2; `specc run --resume` goes on
    armed.touch()
    with pytest.raises(Exception, match="simulated crash"):
        run_spec(spec, storage_path=storage)
    first = log.read_text(encoding="utf-8").split()  # the pid that started each epoch
    assert len(first) == 3  # epochs 1, 2 and the one that crashed
    before = latest_state(run_dir)
    assert before["epoch"] == 2 and [row["epoch"] for row in before["history"]] == [1, 2]
    assert main(["run", str(spec), "--resume", "--storage-path", str(storage)]) == 0, capsys.readouterr().err
    second = log.read_text(encoding="utf-8").split()[len(first) :]
    assert len(second) == 2, f"the resumed run started {len(second)} epochs, not 2 (epochs 3 and 4)"
    _, rows = read_results(run_dir)
    assert [row["epoch"] for row in rows] == [1, 2, 3, 4]  # every epoch once: the resumed run went on at 3
    assert rows[:2] == [pytest.approx(row) for row in before["history"]]  # the interrupted run's epochs, as reported
    assert latest_state(run_dir)["epoch"] == 4

    saved = checkpoints(run_dir)
    assert len(saved) == 4
    # A sliver of the object store: both runs' fits gathered the rows and aggregated them in Ray's worker processes,
    # not through Ray Data's hash aggregate, whose shuffle workers start anew for each aggregate (docs/data.md)
    ray_log = (run_dir / "ray.log").read_text(encoding="utf-8")
    assert "AllToAllOperator[Aggregate]" in ray_log and "HashAggregate" not in ray_log
    # Ray Data read the training rows every epoch, the validation rows once a run: the worker kept them on its disk
    # (ValidationOnDisk) for the epochs after; the checkpoints' losses below show they were the split's, all of them
    assert executions(ray_log) == {"train": 4, "validation": 2}
    state = json.loads((saved[-1] / "preprocessing.json").read_text(encoding="utf-8"))
    validation, frame = held_out_rows(module, cfg)
    assert unseen in validation.index
    train = frame.drop(index=validation.index)
    # fitted on the training split: its categories (not the validation row's "enterprise"), its medians and modes
    assert state["categories"]["plan"] == ["basic", "plus", "pro"]
    assert state["categories"]["region"] == sorted(train["region"].dropna().unique())
    ages = np.sort(train["age"].dropna().to_numpy())
    assert ages[(len(ages) - 1) // 2] <= state["fill"]["age"] <= ages[len(ages) // 2]
    assert state["fill"]["region"] == train["region"].mode()[0]
    assert state["standardize"]["tenure_months"][0] == pytest.approx(train["tenure_months"].mean())
    # Both runs validated on the rows the compiled split picks: each checkpoint's model, fed those rows prepared as
    # preprocessing.json says, gives the val_loss reported for its epoch (the unseen plan encodes as zeros)
    inputs, labels = inputs_from_state(validation, state), validation["churned"].to_numpy()
    model_factory = imported(factory, "e2e_crash_models_for_loss")
    for checkpoint in saved:
        loss, epoch = validation_loss(checkpoint, inputs, labels, model_factory)
        assert loss == pytest.approx(rows[epoch - 1]["val_loss"], rel=1e-4), epoch  # epochs from 1
    assert rows[-1]["val_accuracy"] > 0.7  # churn is learnable from these columns (about 0.55 by guessing)

    # specc evaluate (issue 20): the last checkpoint, its data streamed and prepared again (what the driver fits on
    # the training split is checked against its preprocessing.json), gives the figures of its epoch
    assert json.loads((run_dir / "best.json").read_text(encoding="utf-8"))["spec_dir"] == "../.."  # the csv is there
    assert main(["evaluate", str(run_dir), "--root", str(tmp_path)]) == 0, capsys.readouterr().err
    evaluation = json.loads((run_dir / "evaluation.json").read_text(encoding="utf-8"))
    assert evaluation["split"] == "validation"
    assert evaluation["metrics"]["loss"] == pytest.approx(rows[-1]["val_loss"], rel=1e-4)
    assert evaluation["metrics"]["accuracy"] == pytest.approx(rows[-1]["val_accuracy"], abs=1e-6)

    # specc predict (issue 20): every row of the csv (the unseen plan, the missing values), prepared from the best
    # checkpoint's preprocessing.json in Ray Data's actors: the model's own probabilities, in the file's order
    import pandas as pd
    import pyarrow.parquet as pq

    output = tmp_path / "predictions.parquet"
    argv = ["predict", str(run_dir), str(tmp_path / "customers.csv"), "-o", str(output), "--root", str(tmp_path)]
    assert main(argv) == 0, capsys.readouterr().err
    predicted = pq.read_table(output).to_pandas()
    assert list(predicted.columns) == ["row", "predicted_churned", "probability_0", "probability_1"]
    rows_in_file = pd.read_csv(tmp_path / "customers.csv")
    assert predicted["row"].tolist() == list(range(len(rows_in_file)))
    best = Path(json.loads((run_dir / "best.json").read_text(encoding="utf-8"))["checkpoint"])
    best_state = json.loads((best / "preprocessing.json").read_text(encoding="utf-8"))
    expected = probabilities(best, inputs_from_state(rows_in_file, best_state), model_factory)
    np.testing.assert_allclose(predicted[["probability_0", "probability_1"]].to_numpy(), expected, atol=1e-6)
    assert (predicted["predicted_churned"].to_numpy() == expected.argmax(axis=1)).all()


# -- an image folder -------------------------------------------------------------------------------------------------
IMAGES = """\
specc: 1
name: digit-images
framework: {framework}
model: {{type: mlp, hidden_sizes: [64]}}
dataset:
  type: image_folder
  path: digits
  image_size: [8, 8]
  channels: 1
  loader: {loader}
  batch_size: 32
training:
  epochs: 5
  optimizer: {{type: adam, lr: 0.005}}
  metrics: [accuracy]
scaling: {{num_workers: {workers}, resources_per_worker: {{CPU: 0.5}}}}
run: {{checkpoints_to_keep: 1}}
"""
# variant: (framework, loader, workers). Keras on one worker: Ray Data's split into 2 Keras workers is
# test_tensorflow's regression run; 2 Keras workers cost ~30 s more here
IMAGE_RUNS = {"torch-ray_data": ("torch", "ray_data", 2), "torch-dataloader": ("torch", "torch_dataloader", 2)}
IMAGE_RUNS["tensorflow-ray_data"] = ("tensorflow", "ray_data", 1)


@pytest.fixture(scope="module")
def digit_folder(tmp_path_factory):
    """scikit-learn's 1797 digits as 8x8 grayscale PNGs, one directory per class."""
    from PIL import Image
    from sklearn.datasets import load_digits

    root = tmp_path_factory.mktemp("images") / "digits"
    images, labels = load_digits(return_X_y=True)
    for index, (image, label) in enumerate(zip(images, labels, strict=True)):
        (root / str(label)).mkdir(parents=True, exist_ok=True)
        Image.fromarray((image.reshape(8, 8) * 16).clip(0, 255).astype(np.uint8)).save(root / f"{label}/{index}.png")
    return root


# In turn (tests/e2e/conftest.py): Keras' run (70 s; test_tensorflow streams Ray Data into Keras every time), and
# DataLoader workers' (test_augment reads image files in DataLoader workers, in turn too); Ray Data's every time
IN_TURN = {"tensorflow-ray_data": 1, "torch-dataloader": 4}
VARIANTS = [pytest.param(v, marks=[pytest.mark.in_turn(IN_TURN[v])] if v in IN_TURN else []) for v in IMAGE_RUNS]


@pytest.mark.parametrize("variant", VARIANTS)
def test_an_image_folder_of_digits_trains_to_90_percent(variant, digit_folder, tmp_path, local_ray):
    framework, loader, workers = IMAGE_RUNS[variant]
    shutil.copytree(digit_folder, tmp_path / "digits")
    spec = tmp_path / "images.yaml"
    spec.write_text(IMAGES.format(framework=framework, loader=loader, workers=workers), encoding="utf-8")
    result = run_spec(spec, storage_path=tmp_path / "runs", quiet=True)
    assert result.metrics["val_accuracy"] >= 0.9, result.metrics
    _, rows = read_results(result.run_dir)
    assert rows[-1]["val_accuracy"] >= 0.9 and rows[-1]["val_loss"] < rows[0]["val_loss"], rows
    state = json.loads((checkpoints(result.run_dir)[-1] / "preprocessing.json").read_text(encoding="utf-8"))
    assert state["classes"] == [str(digit) for digit in range(10)]
    assert state["input_shape"] == ([8, 8, 1] if framework == "tensorflow" else [1, 8, 8])
    if loader == "ray_data":  # torch's two workers read the validation images once, kept them, and voted to use them
        ray_log = (Path(result.run_dir) / "ray.log").read_text(encoding="utf-8")
        assert executions(ray_log) == {"train": 5, "validation": 1 if framework == "torch" else 5}

    # specc evaluate (issue 20): the last checkpoint on the same held-out images, decoded as training decoded them, in
    # one process (with Ray Data, training's two equal shards may have left one validation image out of its figures)
    assert main(["evaluate", str(result.run_dir), "--root", str(tmp_path)]) == 0
    evaluation = json.loads((Path(result.run_dir) / "evaluation.json").read_text(encoding="utf-8"))
    assert evaluation["split"] == "validation" and evaluation["metrics"]["accuracy"] >= 0.9
    assert abs(evaluation["metrics"]["accuracy"] - rows[-1]["val_accuracy"]) <= 1 / 300
    assert evaluation["metrics"]["loss"] == pytest.approx(rows[-1]["val_loss"], rel=0.02)
    if variant == "torch-ray_data":
        return  # the other two predict: a model trained on DataLoader's decoding, and a Keras one

    # specc predict (issue 20): every image below the folder, decoded in Ray Data's tasks as training decoded them,
    # named by their path; on the validation images exactly as accurate as the evaluation
    output = tmp_path / "predicted.parquet"
    argv = ["predict", str(result.run_dir), str(tmp_path / "digits"), "-o", str(output), "--root", str(tmp_path)]
    assert main(argv) == 0
    import pyarrow.parquet as pq

    predicted = pq.read_table(output).to_pandas()
    assert list(predicted.columns) == ["path", "predicted_class", *(f"probability_{digit}" for digit in range(10))]
    names = sorted(str(path.relative_to(tmp_path / "digits")) for path in (tmp_path / "digits").rglob("*.png"))
    assert predicted["path"].tolist() == names
    np.testing.assert_allclose(predicted.filter(like="probability_").sum(axis=1), 1.0, rtol=1e-9)
    module = compiled_module(spec, tmp_path, f"images_{framework}_{loader}")
    lists = module.image_lists({**module.CONFIG["dataset"], "path": str(tmp_path / "digits")})
    prefix = f"{(tmp_path / 'digits').resolve()}/"
    held_out = {path[len(prefix) :]: label for path, label in lists["files"]["validation"]}
    right = predicted[predicted["path"].isin(list(held_out))]
    right = (right["predicted_class"] == right["path"].map(lambda path: str(held_out[path]))).to_numpy()
    assert len(right) == len(held_out) and right.mean() == pytest.approx(evaluation["metrics"]["accuracy"], abs=1e-6)


# -- what the driver refuses before anything trains --------------------------------------------------------------------
REFUSED = """\
specc: 1
name: refused
framework: torch
model: {{type: mlp, hidden_sizes: [8]}}
dataset:
  type: csv
  path: rows.csv
  label: y
training: {{epochs: 1}}
scaling:
  num_workers: 2
  resources_per_worker: {{CPU: {cpu}}}
"""


def test_no_cpu_left_for_ray_data_and_missing_values_are_located_problems_before_training(tmp_path, local_ray):
    """On the session's 2 CPUs: workers holding both leave Ray Data nothing (E417, at the workers' resources), and a
    missing value with missing: error (E416, at the dataset section: the spec leaves missing at its default) is
    found by the driver's pass; neither starts a worker nor writes a checkpoint."""
    from specc.api import load
    from specc.execute.run import run
    from specc.spec.errors import SpecError

    (tmp_path / "rows.csv").write_text("x,y\n1.0,0\n,1\n3.0,0\n4.0,1\n", encoding="utf-8")
    for cpu, code, line, words in ((1, "E417", 12, "Ray Data needs a whole CPU"), (0.5, "E416", 6, "'x' (1)")):
        spec = tmp_path / "refused.yaml"
        spec.write_text(REFUSED.format(cpu=cpu), encoding="utf-8")
        with pytest.raises(SpecError) as refused:
            run(load(spec), storage_path=str(tmp_path / "runs"), quiet=True)
        (problem,) = refused.value.problems
        assert (problem.code, problem.line, problem.file) == (code, line, str(spec)) and words in problem.message, (
            problem
        )
        assert not list((tmp_path / "runs").rglob("checkpoint_*"))
