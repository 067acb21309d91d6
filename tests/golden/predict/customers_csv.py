"""customers-csv: a checkpoint of the run in this directory, predicting new rows

Ray Data reads csv, parquet or jsonl files and runs copies of the model over them (each loaded once,
in an actor of its own); the examples are prepared as training prepared them, from the checkpoint's
preprocessing.json. The predictions are written in the input's order, beside each row's number
(or --id COLUMN).

Compiled by specc 0.1.0 for Ray 2.60.0 from spec.resolved.yaml beside it
(resolved spec sha256 6a2f1ccfcd3b093c0d73aaf0ecaae545cf5aa83fb5a12d93bea6feb993de8f79).

    python predict.py CHECKPOINT_DIR INPUT -o predictions.parquet
"""

import argparse
import io
import json
import logging
import os
import pickle
import tempfile
import time
import warnings

import numpy as np
import pyarrow
import pyarrow.compute
import pyarrow.csv
import pyarrow.parquet
import pyarrow.types
import ray
import ray.data
import torch
from torch import nn

CONFIG = {"model": {"type": "mlp", "hidden_sizes": [32], "activation": "relu", "dropout": 0.0, "batch_norm": False}}
TABLE_FORMATS = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet", ".jsonl": "jsonl", ".json": "jsonl"}


class PredictProblem(Exception):
    """The input, the output or the checkpoint cannot make predictions: the message says why."""


def build_model(cfg, input_shape, num_outputs):
    """Dense layers on the flattened input, then one output per class (or target)."""
    layers, width = [nn.Flatten()], int(np.prod(input_shape))
    for hidden in cfg["hidden_sizes"]:
        layers.append(nn.Linear(width, hidden))
        layers.append(nn.ReLU())
        width = hidden
    layers.append(nn.Linear(width, num_outputs))
    return nn.Sequential(*layers)


def read_fitted(directory):
    """The checkpoint's preprocessing.json (its path, its content): a regular file of at most 64 MiB (its categories
    and statistics), never a link out of the checkpoint."""
    path = os.path.join(directory, "preprocessing.json")
    if os.path.islink(path) or not os.path.isfile(path) or os.path.getsize(path) > 64 << 20:
        raise PredictProblem(
            f"{path}: missing, or not a preprocessing.json: the checkpoint does not say how its examples were prepared"
        )
    try:
        with open(path, encoding="utf-8") as handle:
            return path, json.load(handle)
    except ValueError as error:
        raise PredictProblem(f"{path} is not JSON: {error}") from None


def read_preprocessing(directory):
    """The checkpoint's preprocessing.json: how training prepared its examples (docs/data.md), what it fitted on the
    training split (fill values, categories, statistics) and the model's input shape and outputs."""
    path, fitted = read_fitted(directory)
    if not isinstance(fitted, dict) or fitted.get("kind") != "table":
        raise PredictProblem(f"{path} does not describe a table, as this run's data set is")
    wrong = [key for key, valid in SHAPES.items() if not valid(fitted.get(key))]
    if not wrong:  # and what model_inputs looks up: each categorical column's categories, the numbers' fill values
        wrong = [f"categories[{name!r}]" for name in fitted["categorical"] if name not in fitted["categories"]]
        wrong += [
            f"fill[{name!r}]"
            for name in fitted["features"]
            if name in fitted["fill"] and not number(fitted["fill"][name])
        ]
    if wrong:
        raise PredictProblem(
            f"{path}: {', '.join(wrong)} not as specc writes {'it' if len(wrong) == 1 else 'them'} (docs/data.md)"
        )
    return fitted


def names(value):
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def number(value):
    return isinstance(value, int | float) and not isinstance(value, bool)


def count(value):
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


# What read_preprocessing checks of a preprocessing.json (a run directory may come from anywhere)
SHAPES = {
    "input_shape": lambda value: isinstance(value, list) and value and all(count(item) for item in value),
    "num_outputs": count,
    "features": names,
    "categorical": names,
    "label": lambda value: isinstance(value, str),
    "fill": lambda value: isinstance(value, dict),
    "categories": lambda value: isinstance(value, dict) and all(isinstance(item, list) for item in value.values()),
    "standardize": lambda value: (
        isinstance(value, dict)
        and all(
            isinstance(pair, list) and len(pair) == 2 and all(number(item) for item in pair) for pair in value.values()
        )
    ),
}


def restored(model, state_file, path, device):
    """`model` holding the weights of the checkpoint's state.pt (`state_file`: its path, or its bytes as a file), read
    as weights only: nothing the file holds runs. A run directory may come from anyone: a file that weights-only
    loading refuses, that is not a torch checkpoint, or whose weights are another model's is a problem naming it."""
    try:
        state = torch.load(state_file, map_location=device, weights_only=True)
    except pickle.UnpicklingError:  # pickled objects besides tensors, or no torch file at all
        raise PredictProblem(
            f"{path}: weights-only loading refuses it: it holds pickled Python objects besides weights (a specc run "
            "writes none), or is no torch checkpoint; not loaded, so nothing in it ran"
        ) from None
    except Exception as error:  # a zip archive cut short, a file torch cannot read
        raise PredictProblem(f"{path}: not a torch checkpoint that can be read ({type(error).__name__})") from None
    weights = state.get("model") if isinstance(state, dict) else None
    if not isinstance(weights, dict):
        raise PredictProblem(f"{path}: holds no model weights (a state dict under 'model', as a specc run writes)")
    try:
        model.load_state_dict(weights)
    except (RuntimeError, TypeError, ValueError) as error:
        raise PredictProblem(f"{path}: its weights do not fit the spec's model ({type(error).__name__})") from None
    return model


def read_weights(directory):
    """The checkpoint's state.pt, read here: its bytes travel to the actors through Ray's object store, on
    whichever node they run."""
    path = os.path.join(directory, "state.pt")
    if os.path.islink(path) or not os.path.isfile(path):
        raise PredictProblem(f"{path} is missing (or a link): the checkpoint holds no model to predict with")
    with open(path, "rb") as handle:
        return handle.read()


def load_model(config, weights, fitted):
    """The checkpoint's model: its state.pt's weights (read as weights only: no code runs) in the spec's model."""
    model = build_model(config["model"], fitted["input_shape"], fitted["num_outputs"])
    return restored(model, io.BytesIO(weights), "state.pt", "cpu").eval()


def input_format(path):
    """csv, parquet or jsonl: by the extension of the file (or of the files in the directory); else the format the
    run was trained on."""
    names = [path] if not os.path.isdir(path) else sorted(os.listdir(path))
    found = {
        TABLE_FORMATS[ext] for ext in (os.path.splitext(name)[1].lower() for name in names) if ext in TABLE_FORMATS
    }
    if len(found) > 1:
        raise PredictProblem(
            f"{path} holds files of several formats ({', '.join(sorted(found))}): give one format's files"
        )
    return found.pop() if found else "csv"


def read_input(path, fitted, id_column=None):
    """The input's rows as Ray Data reads them, checked against the columns the model was trained on; returns them
    and the column that identifies each row (None: its number, counted in order)."""
    if "://" not in path and not os.path.exists(path):
        raise PredictProblem(f"{path}: no such file or directory")
    kind = input_format(path)
    if kind == "csv":
        empty_is_missing = pyarrow.csv.ConvertOptions(strings_can_be_null=True)  # as training read it
        rows = ray.data.read_csv(path, convert_options=empty_is_missing)
    elif kind == "parquet":
        rows = ray.data.read_parquet(path)
    else:
        rows = ray.data.read_json(path, lines=True)
    schema = rows.schema()
    names, types = list(schema.names), dict(zip(schema.names, schema.types, strict=True))
    wanted = [*fitted["features"], *fitted["categorical"]]
    unknown = [name for name in wanted + ([id_column] if id_column else []) if name not in names]
    if unknown:
        raise PredictProblem(f"{path} has no column {', '.join(map(repr, unknown))}; its columns: {', '.join(names)}")
    text = [name for name in fitted["features"] if not is_number(types[name])]
    if text:
        listed = ", ".join(f"{name!r} ({types[name]})" for name in text)
        raise PredictProblem(f"{path}: the model's numeric features hold values that are not numbers: {listed}")
    return rows, id_column


def is_number(column_type):
    """Whether a column holds numbers (or booleans; or nothing at all: every value missing)."""
    return (
        pyarrow.types.is_integer(column_type)
        or pyarrow.types.is_floating(column_type)
        or pyarrow.types.is_boolean(column_type)
        or pyarrow.types.is_null(column_type)
    )


def model_inputs(block, fitted):
    """The model's float32 inputs for an Arrow block, prepared as training prepared its examples (preprocessing.json,
    fitted on the training split): missing values filled, numeric features standardised, then each categorical
    column one-hot in its categories' order (a category training never saw: all zeros). A value left missing stays
    NaN: that row gets no prediction."""
    columns = []
    for name in fitted["features"]:
        values = pyarrow.compute.cast(block.column(name), pyarrow.float64()).to_numpy(zero_copy_only=False)
        if name in fitted["fill"]:
            values = np.where(np.isnan(values), fitted["fill"][name], values)
        if name in fitted["standardize"]:
            mean, std = fitted["standardize"][name]
            values = (values - mean) / (std if std >= 1e-8 else 1.0)  # as Ray's StandardScaler: a constant's std is 1
        columns.append(values[:, None])
    for name in fitted["categorical"]:
        categories = fitted["categories"][name]
        values = block.column(name).to_pylist()
        if name in fitted["fill"]:
            values = [fitted["fill"][name] if value is None else value for value in values]
        index = {category: i for i, category in enumerate(categories)}
        codes = np.array([index.get(value, -1) for value in values], np.int64)
        one_hot = np.zeros((block.num_rows, len(categories)))
        one_hot[np.flatnonzero(codes >= 0), codes[codes >= 0]] = 1.0
        columns.append(one_hot)
    return np.concatenate(columns, axis=1).astype(np.float32) if columns else np.zeros((block.num_rows, 0), np.float32)


class Predictor:
    """One per Ray Data actor: the checkpoint's model, loaded once; then each batch's predictions beside its id."""

    def __init__(self, weights, config, fitted, id_column):
        self.model, self.fitted, self.id_column = load_model(config, weights, fitted), fitted, id_column

    def __call__(self, batch):
        x = model_inputs(batch, self.fitted)
        with torch.inference_mode():
            scores = self.model(torch.from_numpy(x)).numpy().astype(np.float64)
        known = np.isfinite(x.reshape(len(x), -1)).all(axis=1)  # a missing value training never filled: no prediction
        ids = [batch.column(self.id_column)] if self.id_column else []
        names = [self.id_column] if self.id_column else []
        return pyarrow.Table.from_arrays(
            [*ids, *predictions(scores, known, self.fitted)], names=[*names, *output_names(self.fitted)]
        )


def output_names(fitted):
    """predicted_<label>, then probability_<class> for each class."""
    return [f"predicted_{fitted['label']}", *(f"probability_{name}" for name in classes(fitted))]


def classes(fitted):
    """The class names: the labels' values 0..K-1."""
    return [str(i) for i in range(fitted["num_outputs"])]


def predictions(scores, known, fitted):
    """The predicted class (the largest logit's) and each class's probability (the logits'
    softmax); null for rows without a prediction."""
    shifted = np.exp(scores - scores.max(axis=1, keepdims=True))
    probabilities = shifted / shifted.sum(axis=1, keepdims=True)
    label = pyarrow.array(scores.argmax(axis=1).astype(np.int64), mask=~known)
    return [label, *(pyarrow.array(probabilities[:, i], mask=~known) for i in range(probabilities.shape[1]))]


def ray_data_quietly():
    """Ray Data's own notices, progress bars and tuning hints kept off the console (its logs still go to the Ray
    session's files): this script says what it does. Returns Ray Data's context."""
    logging.getLogger("ray.data").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", category=UserWarning, module=r"ray\.data\.")
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False
    context.print_on_execution_start = False
    return context


def write_predictions(batches, output, progress=None):
    """Writes the predictions' Arrow batches to `output` (parquet, or csv by its extension), in the input's order,
    through a temporary file renamed into place when every row is written: a failed run leaves no half-written
    file. Returns the rows written."""
    kind = "csv" if output.lower().endswith(".csv") else "parquet"
    directory = os.path.dirname(os.path.abspath(output))
    handle, partial = tempfile.mkstemp(prefix=f".{os.path.basename(output)}.", suffix=".partial", dir=directory)
    os.close(handle)
    rows, started, writer = 0, time.monotonic(), None
    try:
        for table in batches:
            if writer is None:
                writer = (
                    pyarrow.csv.CSVWriter(partial, table.schema)
                    if kind == "csv"
                    else pyarrow.parquet.ParquetWriter(partial, table.schema)
                )
            writer.write_table(table)
            rows += table.num_rows
            if progress:
                progress(rows, time.monotonic() - started)
        if writer is None:
            raise PredictProblem("the input holds no rows")
        writer.close()
        os.chmod(partial, 0o666 & ~current_umask())
        os.replace(partial, output)
    except BaseException:
        if writer is not None:
            writer.close()
        os.unlink(partial)
        raise
    return rows


def current_umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def numbered(batches):
    """The batches with a first column `row`: each row's number in the input (its files in order, from 0)."""
    start = 0
    for table in batches:
        yield table.add_column(0, "row", pyarrow.array(np.arange(start, start + table.num_rows, dtype=np.int64)))
        start += table.num_rows


def actor_pool(actors):
    """How many copies of the model (default: half the cluster's CPUs) and the CPUs each holds: at most one, and
    one CPU of the cluster left for Ray Data's reads (with none left they would wait forever)."""
    cpus = ray.cluster_resources().get("CPU", 0.0)
    actors = actors or max(1, int(cpus // 2))
    if cpus - 1 < 0.1 * actors:
        raise PredictProblem(
            f"the cluster has {cpus:g} CPU: Ray Data's reads need one, and {actors} copies of the model need more "
            "beside it; give fewer actors (--actors) or a larger cluster"
        )
    return actors, min(1.0, (cpus - 1) / actors)


def predict(checkpoint, source, output, id_column=None, address=None, actors=None, batch_size=4096, progress=None):
    """Predictions of the checkpoint's model for every row of `source`, written to `output` in the
    input's order. Ray Data reads the input and runs `actors` copies of the model (default: half the cluster's
    CPUs), each loaded once and fed `batch_size` rows at a time. Returns the rows written."""
    if os.path.islink(output) or (os.path.lexists(output) and not os.path.isfile(output)):
        raise PredictProblem(f"{output}: not a regular file; not replaced")
    if not os.path.isdir(os.path.dirname(os.path.abspath(output))):
        raise PredictProblem(f"{output}: its directory does not exist")
    fitted, weights = read_preprocessing(checkpoint), read_weights(checkpoint)
    config = dict(CONFIG)
    path = os.path.join(checkpoint, "state.pt")  # loaded here first: a file that cannot be is said before Ray starts
    restored(
        build_model(config["model"], fitted["input_shape"], fitted["num_outputs"]), io.BytesIO(weights), path, "cpu"
    )
    if not ray.is_initialized():
        # a Ray of its own unless an address (or RAY_ADDRESS) names one: not whichever `ray start` left on this machine
        where = address or os.environ.get("RAY_ADDRESS") or "local"
        ray.init(address=where, include_dashboard=False, logging_level=logging.ERROR, log_to_driver=False)
    ray_data_quietly().execution_options.preserve_order = True  # predictions in the input's order
    rows, id_column = read_input(source, fitted, id_column)
    actors, actor_cpus = actor_pool(actors)
    predicted = rows.map_batches(
        Predictor,
        fn_constructor_kwargs={"weights": weights, "config": config, "fitted": fitted, "id_column": id_column},
        batch_size=batch_size,
        batch_format="pyarrow",
        compute=ray.data.ActorPoolStrategy(size=actors),
        num_cpus=actor_cpus,
    )
    batches = predicted.iter_batches(batch_size=None, batch_format="pyarrow")
    return write_predictions(batches if id_column else numbered(batches), output, progress)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkpoint", help="a checkpoint directory of the run (its best: best.json's checkpoint)")
    parser.add_argument("input", help="a csv, parquet or jsonl file, or a directory of them")
    parser.add_argument("-o", "--output", required=True, help="the predictions: a .parquet or .csv file")
    parser.add_argument(
        "--id", default=None, help="an input column to copy beside each prediction (default: row, its number)"
    )
    parser.add_argument("--address", default=None, help="Ray cluster address (default: start a local Ray)")
    parser.add_argument("--actors", type=int, default=None, help="copies of the model (default: half the CPUs)")
    args = parser.parse_args(argv)
    try:
        rows = predict(
            args.checkpoint, args.input, args.output, id_column=args.id, address=args.address, actors=args.actors
        )
    except PredictProblem as problem:
        raise SystemExit(str(problem)) from None
    print(f"{rows} predictions written to {args.output}")


if __name__ == "__main__":
    main()
