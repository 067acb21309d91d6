"""`framework: tensorflow` for real (SPEC §4-§8, issue 5): TensorflowTrainer with MultiWorkerMirroredStrategy on
2 workers, Ray Data shards and in-memory arrays, resume from a model.keras checkpoint, the three Tune shapes,
custom factories and keras.applications, on the session Ray (2 CPUs) with real tf_keras training.

The tensorflow workers are their own processes (Ray Train workers, Tune trial actors); local-mode runs
(num_workers 0) train in this process, which imported torch's compiler first (tests/conftest.py).
"""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path

import pytest

from specc.cli import main

from .conftest import own_lines, read_best, read_results, run_spec

pytestmark = pytest.mark.slow

HEADER = ["epoch", "train_loss", "val_loss", "val_accuracy", "num_parameters"]


def keras():
    import tf_keras

    return tf_keras


def checkpoint_state(checkpoint) -> dict:
    return json.loads(Path(checkpoint, "state.json").read_text(encoding="utf-8"))


def log_lines(path: Path, kind: str) -> list[tuple[int, int]]:
    """(pid, number) of the lines of `kind` ('fit' or 'epoch') the recording model wrote."""
    lines = [line.split() for line in path.read_text(encoding="utf-8").splitlines()]
    return [(int(pid), int(number)) for what, pid, number in lines if what == kind]


# -- seed 004: y = 2x from a CSV file, Ray Data shards on 2 workers ----------------------------------------------

REGRESSION = """\
specc: 1
name: tf-regression
framework: tensorflow
model: {type: mlp, hidden_sizes: [10], activation: relu}
dataset:
  type: csv
  path: line.csv
  features: [x]
  label: y
  task: regression
  loader: ray_data
  validation_fraction: 0.2
  batch_size: 16
  shuffle_seed: 0
training:
  epochs: 9
  loss: mse
  optimizer: {type: adam, lr: 0.01}
  metrics: [mse, mae]
  seed: 0
  checkpoint_every: 3
scaling: {num_workers: 2, resources_per_worker: {CPU: 0.5}}  # Ray Data streams the csv beside the workers (E417)
run: {checkpoints_to_keep: 1, checkpoint_score: {metric: val_mse, mode: min}}
"""


@pytest.fixture(scope="module")
def regression(tmp_path_factory, local_ray):
    root = tmp_path_factory.mktemp("tf-regression")
    lines = ["x,y"] + [f"{x / 200},{2 * x / 200}" for x in range(200)]  # seed 004's data set
    (root / "line.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    spec = root / "regression.yaml"
    spec.write_text(REGRESSION, encoding="utf-8")
    result = run_spec(spec, storage_path=root / "runs")
    return root / "runs" / "tf-regression", result


def test_two_workers_fit_the_line(regression):
    run_dir, _ = regression
    header, rows = read_results(run_dir)
    assert header == ["epoch", "train_loss", "val_loss", "val_mse", "val_mae", "num_parameters"]
    assert [row["epoch"] for row in rows] == list(range(1, 10))  # from 1, as the progress lines count
    assert rows[-1]["val_mse"] <= rows[0]["val_mse"] / 10, [row["val_mse"] for row in rows]
    assert rows[-1]["val_loss"] == pytest.approx(rows[-1]["val_mse"], rel=1e-4)  # loss mse: the same number


def test_best_checkpoint_is_a_keras_model_that_predicts_the_line(regression):
    run_dir, result = regression
    best = read_best(run_dir)
    assert result.checkpoint == best["checkpoint"] and best["checkpoint"].startswith(str(run_dir))
    _, rows = read_results(run_dir)
    assert best["metrics"] == pytest.approx(min(rows, key=lambda row: row["val_mse"]))  # the best epoch
    # The best of the checkpointed epochs (checkpoint_every 3: epochs 3, 6 and 9) by val_mse.
    state = checkpoint_state(best["checkpoint"])
    assert state["epoch"] == min((3, 6, 9), key=lambda epoch: rows[epoch - 1]["val_mse"])
    assert state["history"] == [pytest.approx(row) for row in rows[: state["epoch"]]]

    model = keras().models.load_model(Path(best["checkpoint"], "model.keras"), compile=False)
    assert [layer.units for layer in model.layers if hasattr(layer, "units")] == [10, 1]
    assert model.optimizer is None  # compile=False; the optimizer state is there for resume (load_weights)
    import numpy as np

    predicted = model.predict(np.array([[0.25], [0.5]], dtype="float32"), verbose=0)
    assert predicted.shape == (2, 1)


def test_specc_predict_runs_the_best_checkpoint_over_new_rows(regression, capfd):
    """specc predict (issue 20): new rows of a csv (with an id column and a column the model never read), prepared
    as the checkpoint's preprocessing.json says, through the Keras model in Ray Data's actors: the model's own outputs
    on those rows, computed here by hand, in the file's order beside their ids."""
    import numpy as np
    import pandas as pd

    run_dir, _ = regression
    root = run_dir.parents[1]
    xs = np.linspace(-0.2, 1.2, 57)
    new = pd.DataFrame({"id": [f"r{i}" for i in range(len(xs))], "x": xs, "note": "new"})
    new.to_csv(root / "new.csv", index=False)
    output = root / "predicted.csv"
    argv = ["predict", str(run_dir), str(root / "new.csv"), "-o", str(output), "--id", "id", "--root", str(root)]
    assert main(argv) == 0
    out, err = capfd.readouterr()
    assert "57 predictions in" in out and str(output) in out
    # nothing from the driver. The session's Ray (started by the tests, not by specc predict: a Ray of its own prints
    # no worker lines) streams what its processes print, under their names: the predictor actors' TensorFlow start-up
    # lines, and whenever Ray's deduplication lets them out, lines of earlier tests' runs (a controller's traceback of
    # test_streaming_data's crash, "[repeated 2x across cluster]", came 4 minutes late)
    assert own_lines(err) == ""
    predicted = pd.read_csv(output)
    assert list(predicted.columns) == ["id", "predicted_y"]
    assert predicted["id"].tolist() == [f"r{i}" for i in range(len(xs))]

    best = read_best(run_dir)["checkpoint"]
    state = json.loads(Path(best, "preprocessing.json").read_text(encoding="utf-8"))
    mean, std = state["standardize"]["x"]
    model = keras().models.load_model(Path(best, "model.keras"), compile=False)
    expected = model.predict(((xs - mean) / std).astype("float32")[:, None], verbose=0)[:, 0]
    np.testing.assert_allclose(predicted["predicted_y"], expected, atol=1e-5)
    assert np.abs(expected - 2 * xs)[(xs >= 0) & (xs <= 1)].max() < 0.2  # and it learned the line
    assert (run_dir / "predict.py").is_file()


# -- digits on 2 workers, in-memory arrays; the same spec compiled for torch reports the same names --------------

DIGITS = """\
specc: 1
name: {name}
framework: {framework}
model: {{type: mlp, hidden_sizes: [64], activation: relu}}
dataset: {{type: digits, validation_fraction: 0.2, batch_size: 32, shuffle_seed: 0}}
training:
  epochs: {epochs}
  optimizer: {{type: adam, lr: 0.005}}
  metrics: [accuracy{extra}]
  seed: 0
  checkpoint_every: 1
scaling: {{num_workers: {workers}, resources_per_worker: {{CPU: 1}}}}
run: {{checkpoints_to_keep: 2, checkpoint_score: {{metric: val_accuracy, mode: max}}}}
"""


def digits_spec(root, framework, workers, epochs=5, extra="", name=None) -> Path:
    name = name or f"digits-{framework}-{workers}"
    spec = Path(root) / f"{name}.yaml"
    text = DIGITS.format(name=name, framework=framework, workers=workers, epochs=epochs, extra=extra)
    spec.write_text(text, encoding="utf-8")
    return spec


# One trial, a Tune search's: a trial that drives a TensorflowTrainer on 2 workers (0.1 + 2 x 0.5 CPU) is the same
# train_func as a plain 2-worker run (test_training_additions' and the regression above are plain ones), and one run
# of both shapes saves a 2-worker Keras Train run of CI. (Trials that follow one another, each with its Trainer, are
# test_tune's, torch.)
ONE_TRIAL = """\
tune:
  metric: val_accuracy
  mode: max
  num_samples: 1
  search: {type: random, seed: 0}
  space:
    training.optimizer.lr: {grid: [0.005]}
"""


@pytest.fixture(scope="module")
def digits(tmp_path_factory, local_ray):
    """(search directory, RunResult) of one trial that trains DIGITS on a 2-worker TensorflowTrainer."""
    root = tmp_path_factory.mktemp("tf-digits")
    spec = digits_spec(root, "tensorflow", 2)
    text = spec.read_text(encoding="utf-8")
    assert "resources_per_worker: {CPU: 1}" in text
    spec.write_text(text.replace("{CPU: 1}", "{CPU: 0.5}") + ONE_TRIAL, encoding="utf-8")
    result = run_spec(spec, storage_path=root / "runs")
    return root / "runs" / "digits-tensorflow-2", result


def test_two_tensorflow_workers_learn_digits(digits):
    run_dir, result = digits
    (row,) = trials(run_dir)
    lines = (run_dir / f"trial_{row['trial_id']}" / "result.json").read_text(encoding="utf-8").splitlines()
    history = [json.loads(line) for line in lines if line.strip()]
    assert [report["epoch"] for report in history] == [1, 2, 3, 4, 5]
    assert set(HEADER) <= set(history[-1])
    assert history[-1]["train_loss"] < history[0]["train_loss"]
    best = read_best(run_dir)
    assert best["metrics"]["val_accuracy"] >= 0.9
    assert best["metrics"]["val_accuracy"] == max(report["val_accuracy"] for report in history)
    assert best["metrics"] == pytest.approx(result.metrics)


def test_the_trial_drives_a_tensorflow_trainer(digits):
    run_dir, result = digits
    rows = trials(run_dir)
    assert [float(row["training.optimizer.lr"]) for row in rows] == [0.005]
    assert [(row["status"], row["epochs"]) for row in rows] == [("completed", "5")]
    # num_parameters passed on to Tune through ReportToTrial: Dense 64 -> 64 -> 10 with biases
    assert [int(row["last_num_parameters"]) for row in rows] == [64 * 64 + 64 + 64 * 10 + 10] == [4810]
    for row in rows:
        train_dir = run_dir / f"train-trial_id={row['trial_id']}"
        assert sorted(train_dir.glob("checkpoint_*/model.keras")), sorted(p.name for p in run_dir.iterdir())
    best = read_best(run_dir)
    assert best["metrics"]["num_parameters"] == 4810
    assert result.checkpoint == best["checkpoint"]
    model = keras().models.load_model(Path(best["checkpoint"], "model.keras"))
    assert float(model.optimizer.learning_rate.numpy()) == pytest.approx(best["config"]["training.optimizer.lr"])


def test_specc_evaluate_measures_the_best_checkpoint_on_the_validation_split(digits, capfd):
    """specc evaluate (issue 20): the Keras checkpoint's model, compiled as training compiled it, on the validation
    split as training made it: its accuracy is the model's own on those rows, worked out here by hand. Training's
    two workers validated 360 rows, one of the 359 twice (each worker takes as many: share()), so what it reported
    differs by at most that row."""
    import numpy as np
    from sklearn.datasets import load_digits

    run_dir, _ = digits
    best = read_best(run_dir)
    assert main(["evaluate", str(run_dir), "--root", str(run_dir.parents[1])]) == 0
    out, err = capfd.readouterr()
    trial = best["trial_id"]
    assert out.startswith(f"digits-tensorflow-2 (trial {trial}): validation split  loss ")
    assert own_lines(err) == ""  # no TF lines from the driver
    evaluation = json.loads((run_dir / "evaluation.json").read_text(encoding="utf-8"))
    assert evaluation["split"] == "validation"

    x, y = load_digits(return_X_y=True)
    x = (x / 16.0).astype(np.float32).reshape(-1, 8, 8, 1)
    held_out = np.random.default_rng(0).permutation(len(x))[: int(len(x) * 0.2)]  # shuffle_seed 0, 20%
    model = keras().models.load_model(Path(best["checkpoint"], "model.keras"))
    accuracy = float((model.predict(x[held_out], verbose=0).argmax(1) == y[held_out]).mean())
    assert evaluation["metrics"]["accuracy"] == pytest.approx(accuracy, abs=1e-6)
    assert abs(evaluation["metrics"]["accuracy"] - best["metrics"]["val_accuracy"]) <= 1 / 359
    assert evaluation["metrics"]["loss"] == pytest.approx(best["metrics"]["val_loss"], rel=0.02)


def test_specc_export_writes_a_saved_model_that_loads_without_specc_and_agrees(digits, capfd):
    """specc export (issue 20): the SavedModel, loaded here by tf.saved_model alone, gives the outputs of the
    checkpoint's model.keras (loaded here by Keras) on every digit."""
    import numpy as np
    import tensorflow as tf
    from sklearn.datasets import load_digits

    run_dir, _ = digits
    root = run_dir.parents[1]
    output = root / "digits_saved_model"
    argv = ["export", str(run_dir), "--format", "saved_model", "-o", str(output), "--root", str(root)]
    assert main(argv) == 0
    out, err = capfd.readouterr()
    assert "exported as saved_model, loaded back without specc" in out, out + err
    described = json.loads((root / "digits_saved_model.preprocessing.json").read_text(encoding="utf-8"))
    assert described["inputs"]["shape"] == [None, 8, 8, 1] and described["inputs"]["layout"] == "HWC"
    assert described["preprocessing"] == {
        "kind": "digits",
        "prepared": "scikit-learn's digits: pixels / 16, as 8x8 images with one channel",
    }

    x = (load_digits(return_X_y=True)[0] / 16.0).astype("float32").reshape(-1, 8, 8, 1)
    model = keras().models.load_model(Path(read_best(run_dir)["checkpoint"], "model.keras"), compile=False)
    serve = tf.saved_model.load(str(output)).signatures["serving_default"]
    got = next(iter(serve(tf.constant(x)).values())).numpy()
    np.testing.assert_allclose(got, model(x, training=False).numpy(), atol=1e-5)
    assert main(argv) == 2 and "exists: a SavedModel is a new directory" in capfd.readouterr().err


def test_digits_checkpoint_holds_model_and_optimizer_state(digits):
    run_dir, _ = digits
    best = read_best(run_dir)
    model = keras().models.load_model(Path(best["checkpoint"], "model.keras"))
    assert model.layers[1].kernel.shape == (64, 64)  # Flatten, Dense(64 pixels -> 64 hidden), Dense(10)
    assert model.layers[-1].kernel.shape == (64, 10)
    # Adam's step count: every epoch all 1438 training rows once, in global batches of 32 x 2 workers: 23 steps,
    # or 24 as each worker's last batch is a short one (Keras counts 1 more over the first epoch of a generator).
    # Half the data (as with a dataset of known length under the strategy) would be about 12 per epoch.
    epochs = best["metrics"]["epoch"]  # from 1: how many epochs its checkpoint trained
    assert epochs * 23 <= int(model.optimizer.iterations.numpy()) <= epochs * 24 + 1
    assert checkpoint_state(best["checkpoint"])["epoch"] == best["metrics"]["epoch"]


def test_torch_and_tensorflow_report_the_same_metric_names(tmp_path, local_ray):
    headers = {}
    for framework in ("torch", "tensorflow"):
        spec = digits_spec(tmp_path, framework, 0, epochs=1, extra=", top5_accuracy")
        result = run_spec(spec, storage_path=tmp_path / "runs")
        headers[framework], rows = read_results(result.run_dir)
        assert rows[0]["val_accuracy"] > 0.5 and 0.5 < rows[0]["val_top5_accuracy"] <= 1.0
    assert headers["torch"] == headers["tensorflow"] == [*HEADER[:-1], "val_top5_accuracy", "num_parameters"]


# -- resume: an interrupted run continues at the epoch after its checkpoint --------------------------------------

RESUMABLE = """\
specc: 1
name: tf-resumable
framework: tensorflow
model:
  type: custom
  factory: "e2e_keras_models:make"
  kwargs: {{crash_at_epoch: 2, armed: "{armed}", log: "{log}"}}
dataset: {{type: digits, batch_size: 64}}
training:
  epochs: 4
  optimizer: {{type: adam, lr: 0.005}}
  metrics: [accuracy]
  checkpoint_every: 1
scaling: {{num_workers: 1}}
run: {{checkpoints_to_keep: 2, max_failures: 0}}
"""


def optimizer_steps(saved: Path) -> int:
    """Adam's step count in a checkpoint of the recording model, read back as the script's load_state reads it."""
    from .fixtures.keras_models import make  # tensorflow: imported by the tests that use it

    model = make((8, 8, 1), 10)
    model.compile(optimizer=keras().optimizers.Adam(), loss="mse")
    model.optimizer.build(model.trainable_variables)
    model.load_weights(saved)
    return int(model.optimizer.iterations.numpy())


@pytest.mark.in_turn(4)  # in turn (tests/e2e/conftest.py): test_streaming_data resumes a crashed torch run every time
def test_resume_continues_from_the_checkpoint_epoch(tmp_path, spec_file, factory_module, local_ray, capsys):
    factory_module("keras_models.py", "e2e_keras_models")
    armed, log = tmp_path / "armed", tmp_path / "fit.log"
    armed.touch()
    spec = spec_file(RESUMABLE.format(armed=armed, log=log))
    storage = tmp_path / "runs"
    run_dir = storage / "tf-resumable"

    # 1. The worker fails when epoch 3 starts, after the checkpoints of epochs 1 and 2 (max_failures 0: no retry).
    # (The model's log counts as Keras does, from 0: its `epoch 2` is the third.)
    with pytest.raises(Exception, match="simulated crash"):
        run_spec(spec, storage_path=storage)
    assert not armed.exists()
    assert [epoch for _, epoch in log_lines(log, "fit")] == [0]
    assert [epoch for _, epoch in log_lines(log, "epoch")] == [0, 1, 2]
    checkpoints = sorted(run_dir.glob("checkpoint_*/state.json"))
    before = json.loads(checkpoints[-1].read_text(encoding="utf-8"))
    assert before["epoch"] == 2
    steps = optimizer_steps(checkpoints[-1].parent / "model.keras")
    assert steps >= 2 * 23  # 23 batches of 64 per epoch

    # 2. --resume: a new worker fits from epoch 3 (Keras' initial_epoch 2) with the checkpoint's weights and optimizer
    # state.
    capsys.readouterr()
    assert main(["run", str(spec), "--resume", "--storage-path", str(storage)]) == 0, capsys.readouterr().err
    fits, epochs = log_lines(log, "fit"), log_lines(log, "epoch")
    assert [epoch for _, epoch in fits] == [0, 2]
    assert fits[0][0] != fits[1][0]  # another process
    assert [epoch for _, epoch in epochs[3:]] == [2, 3]

    header, rows = read_results(run_dir)
    assert header == HEADER
    assert [row["epoch"] for row in rows] == [1, 2, 3, 4]  # every epoch exactly once
    assert rows[:2] == [pytest.approx(row) for row in before["history"]]
    last = sorted(run_dir.glob("checkpoint_*/state.json"))[-1].parent
    assert checkpoint_state(last)["epoch"] == 4
    assert optimizer_steps(last / "model.keras") >= steps + 2 * 23  # Adam's state was restored, not rebuilt


# -- Tune: ASHA over one-process trials (a trial that drives a TensorflowTrainer: the digits search above) ------

SEARCH = """\
specc: 1
name: {name}
framework: tensorflow
model: {{type: mlp, hidden_sizes: [32], activation: relu}}
dataset: {{type: digits, validation_fraction: 0.2, batch_size: 64, shuffle_seed: 0}}
training:
  epochs: {epochs}
  optimizer: {{type: adam, lr: 0.01}}
  metrics: [accuracy]
  seed: 0
  checkpoint_every: 1
scaling: {scaling}
run: {{checkpoints_to_keep: 1, max_failures: 0}}
tune:
  metric: val_accuracy
  mode: max
  num_samples: {samples}
  max_concurrent_trials: 2
  search: {{type: random, seed: 3}}
  space:
    training.optimizer.lr: {space}
{tail}"""


def search(tmp_path_factory, name, **fields):
    root = tmp_path_factory.mktemp(name)
    spec = root / f"{name}.yaml"
    spec.write_text(SEARCH.format(name=name, **fields), encoding="utf-8")
    result = run_spec(spec, storage_path=root / "runs")
    return root / "runs" / name, result


def trials(run_dir) -> list[dict]:
    import csv

    with open(Path(run_dir) / "results.csv", newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module")
def asha(tmp_path_factory, local_ray):
    return search(
        tmp_path_factory,
        "tf-asha",
        epochs=4,
        samples=6,
        scaling="{num_workers: 1, resources_per_worker: {CPU: 1}}",
        space="{loguniform: [1.0e-5, 0.05]}",
        tail="scheduler: {type: asha, grace_period: 1, reduction_factor: 2}\n",
    )


@pytest.mark.in_turn(4)  # in turn, as the next test: ASHA over torch trials runs every time (test_tune)
def test_asha_stops_weak_tensorflow_trials(asha):
    run_dir, result = asha
    rows = trials(run_dir)
    assert len(rows) == 6
    assert {row["status"] for row in rows} <= {"completed", "stopped"}
    stopped = [row for row in rows if row["status"] == "stopped"]
    assert stopped, [(row["trial_id"], row["epochs"]) for row in rows]
    assert all(int(row["epochs"]) in (1, 2) for row in stopped)  # rungs at epochs 1 and 2 (max_t 4)
    best = read_best(run_dir)
    assert best["metrics"]["val_accuracy"] >= 0.85
    assert int(next(row for row in rows if row["trial_id"] == best["trial_id"])["epochs"]) == 4
    assert result.checkpoint == best["checkpoint"]
    assert Path(best["checkpoint"], "model.keras").is_file()
    assert checkpoint_state(best["checkpoint"])["epoch"] == 4


@pytest.mark.in_turn(4)
def test_asha_trials_ran_in_their_own_processes(asha):
    """A one-process trial is a plain Tune function trainable: Ray's own per-trial record has every epoch."""
    run_dir, _ = asha
    for row in trials(run_dir):
        lines = (run_dir / f"trial_{row['trial_id']}" / "result.json").read_text(encoding="utf-8").splitlines()
        history = [json.loads(line) for line in lines if line.strip()]
        assert [result["epoch"] for result in history] == list(range(1, int(row["epochs"]) + 1))
        assert float(row["last_val_accuracy"]) == history[-1]["val_accuracy"]


# -- custom data and models: keras.applications on 32x32 colour images, a custom factory in a Train worker ---------

APPLICATION = """\
specc: 1
name: tf-application
framework: tensorflow
model: {type: keras_application, name: MobileNetV2, weights: null}
dataset: {type: custom, factory: "e2e_keras_images:images", kwargs: {n: 192, size: 32}, batch_size: 32}
training:
  epochs: 2
  optimizer: {type: adam, lr: 0.001}
  metrics: [accuracy]
scaling: {num_workers: 0}
"""


@pytest.mark.in_turn(4)  # in turn (tests/e2e/conftest.py): a Keras application is a custom factory, trained here
def test_keras_application_on_custom_images(tmp_path, spec_file, factory_module, local_ray):
    factory_module("keras_models.py", "e2e_keras_images")
    spec = spec_file(APPLICATION)

    result = run_spec(spec, storage_path=tmp_path / "runs")

    header, rows = read_results(result.run_dir)
    assert header == HEADER
    assert [row["epoch"] for row in rows] == [1, 2]
    assert all(0.0 <= row["val_accuracy"] <= 1.0 and row["train_loss"] > 0 for row in rows)
    script = Path(result.run_dir, "script.py").read_text(encoding="utf-8")
    assert "keras.applications.MobileNetV2(" in script and "weights=None" in script


CUSTOM = """\
specc: 1
name: tf-custom
framework: tensorflow
model: {{type: custom, factory: "e2e_keras_factory:make", kwargs: {{hidden: 24, log: "{log}"}}}}
dataset: {{type: digits, batch_size: 32}}
training:
  epochs: 3
  optimizer: {{type: adam, lr: 0.005}}
  metrics: [accuracy]
  checkpoint_every: 1
scaling: {{num_workers: 1}}  # 2 workers, each with its replica: test_training_additions' Keras factory
"""


@pytest.mark.in_turn(4)  # in turn: test_custom_model trains a custom torch factory on a worker every time
def test_custom_keras_factory_in_a_train_worker(tmp_path, spec_file, factory_module, local_ray):
    factory_module("keras_models.py", "e2e_keras_factory")
    log = tmp_path / "fit.log"
    spec = spec_file(CUSTOM.format(log=log))

    result = run_spec(spec, storage_path=tmp_path / "runs")

    fits = log_lines(log, "fit")
    assert len(fits) == 1 and os.getpid() not in {pid for pid, _ in fits}  # built in the worker process
    header, rows = read_results(result.run_dir)
    assert header == HEADER and [row["epoch"] for row in rows] == [1, 2, 3]
    assert rows[-1]["val_accuracy"] >= 0.85
    with zipfile.ZipFile(Path(result.checkpoint, "model.keras")) as saved:  # the factory's own class, as saved
        config = json.loads(saved.read("config.json"))
    assert config["class_name"] == "Recorded"
    layers = {layer["config"]["name"]: layer["config"] for layer in config["config"]["layers"]}
    assert layers["hidden"]["units"] == 24 and layers["out"]["units"] == 10
