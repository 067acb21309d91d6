"""digits-image-folder: a checkpoint of the run in this directory, predicting new images

Ray Data reads every image below a folder and runs copies of the model over them (each loaded once,
in an actor of its own); the examples are prepared as training prepared them, from the checkpoint's
preprocessing.json. The predictions are written in the input's order, beside each image's path.

Compiled by specc 0.1.0 for Ray 2.60.0 from spec.resolved.yaml beside it
(resolved spec sha256 4991d09102174d74029fe57839547509761bf72085e4f609a955867273b5c1eb).

    python predict.py CHECKPOINT_DIR IMAGES_DIR -o predictions.parquet
"""

import argparse
import functools
import io
import json
import logging
import os
import pickle
import tempfile
import time
import warnings

import numpy as np
import PIL.Image
import pyarrow
import pyarrow.csv
import pyarrow.fs
import pyarrow.parquet
import ray
import ray.data
import torch
from torch import nn

CONFIG = {
    "model": {
        "type": "cnn",
        "channels": [16, 32],
        "kernel_size": 3,
        "hidden_sizes": [64],
        "activation": "relu",
        "dropout": 0.0,
    },
}
IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg")  # read in any letter case


class PredictProblem(Exception):
    """The input, the output or the checkpoint cannot make predictions: the message says why."""


def build_model(cfg, input_shape, num_outputs):
    """Conv blocks (conv, activation, 2x2 max-pool), then dense layers on the flattened features."""
    blocks, channels = [], input_shape[0]
    for width in cfg["channels"]:
        blocks += [nn.Conv2d(channels, width, cfg["kernel_size"], padding=cfg["kernel_size"] // 2), nn.ReLU()]
        blocks.append(nn.MaxPool2d(2))
        channels = width
    features = nn.Sequential(*blocks, nn.Flatten())
    with torch.no_grad():
        width = features(torch.zeros(1, *input_shape)).shape[1]
    head = []
    for hidden in cfg["hidden_sizes"]:
        head += [nn.Linear(width, hidden), nn.ReLU()]
        width = hidden
    head.append(nn.Linear(width, num_outputs))
    return nn.Sequential(features, *head)


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
    training split (the classes, the images' size and channels) and the model's input shape and outputs."""
    path, fitted = read_fitted(directory)
    if not isinstance(fitted, dict) or fitted.get("kind") != "images":
        raise PredictProblem(f"{path} does not describe images, as this run's data set is")
    wrong = [key for key, valid in SHAPES.items() if not valid(fitted.get(key))]
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
    "classes": names,
    "image_size": lambda value: isinstance(value, list) and len(value) == 2 and all(count(item) for item in value),
    "channels": lambda value: value in (1, 3),
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


def image_paths(root):
    """Every JPEG/PNG image below `root` (hidden files and directories left out), sorted; or `root` itself when it
    is an image."""
    if os.path.isfile(root):
        return [os.path.abspath(root)]
    if not os.path.isdir(root):
        raise PredictProblem(f"{root}: no such file or directory")
    found = []
    for directory, names, files in os.walk(root):
        names[:] = sorted(name for name in names if not name.startswith("."))
        found += [
            os.path.join(directory, name)
            for name in files
            if not name.startswith(".") and name.lower().endswith(IMAGE_EXTENSIONS)
        ]
    if not found:
        raise PredictProblem(f"{root} holds no PNG or JPEG images")
    return sorted(os.path.abspath(path) for path in found)


def read_input(path, fitted):
    """The images decoded as training decoded them (decoded_image): resized to image_size (bilinear) and converted
    to preprocessing.json's channels (L or RGB); each with its path."""
    paths = image_paths(path)
    mode = "L" if fitted["channels"] == 1 else "RGB"
    return ray.data.read_datasource(ImageBlocks(paths, fitted["image_size"], mode, {"path": paths})), "path"


def decoded_image(path, size, mode):
    """The image file at `path` (a local path or a URI: s3://, gs://, ...) as a uint8 array, decoded as Ray Data's
    read_images decodes it: resized to `size` (height, width) with bilinear filtering, then converted to `mode`
    (L: height x width; RGB: height x width x 3)."""
    files, where = file_system(path)
    with files.open_input_file(where) as source:
        data = source.readall()
    try:
        image = PIL.Image.open(io.BytesIO(data))
        if image.size != (size[1], size[0]):
            image = image.resize((size[1], size[0]), resample=PIL.Image.BILINEAR)
        return np.asarray(image if image.mode == mode else image.convert(mode))
    except (PIL.UnidentifiedImageError, PIL.Image.DecompressionBombError, OSError) as problem:  # or truncated
        raise ValueError(f"{path!r} is not an image PIL can read: {problem}") from None  # repr: a name's control bytes


def file_system(path):
    """(the pyarrow file system of `path`, its path there): a URI's (s3://, gs://, ...) or the local one's."""
    return pyarrow.fs.FileSystem.from_uri(path) if "://" in path else (pyarrow.fs.LocalFileSystem(), path)


IMAGE_BLOCK_BYTES = 4 << 20  # the decoded pixels of a Ray Data block of images
FILES_PER_READ = 64, 1024  # the fewest and the most images a read task decodes


class ImageBlocks(ray.data.Datasource):
    """Image files (paths or URIs) as Ray Data rows: "image", each decoded by decoded_image, beside the values of
    `columns` in the files' order ({name: a list as long as `paths`}: a class index, a path). A read task decodes
    a run of files, a block of IMAGE_BLOCK_BYTES of pixels at a time: Ray's read_images makes a block of each file,
    and cost about five times the CPU per small image (bench/data_scale.py). With `shuffle` (a FileShuffleConfig),
    the files in a new seeded order every pass."""

    def __init__(self, paths, size, mode, columns, shuffle=None):
        self.paths, self.size, self.mode, self.columns = list(paths), tuple(size), mode, columns
        self.shuffle, self.passes = shuffle, 0

    def estimate_inmemory_data_size(self):
        return len(self.paths) * self.pixels()

    def pixels(self):
        return self.size[0] * self.size[1] * (1 if self.mode == "L" else 3)

    def get_read_tasks(self, parallelism, per_task_row_limit=None, data_context=None):
        order = np.arange(len(self.paths))
        if self.shuffle is not None:
            np.random.default_rng(self.shuffle.get_seed(self.passes)).shuffle(order)
            self.passes += 1
        fewest, most = FILES_PER_READ
        tasks = min(max(parallelism, -(-len(order) // most)), max(len(order) // fewest, 1))
        reads = []
        for chosen in np.array_split(order, tasks):
            paths = [self.paths[i] for i in chosen]
            columns = {name: [values[i] for i in chosen] for name, values in self.columns.items()}
            reads.append(
                ray.data.ReadTask(
                    functools.partial(decoded_blocks, paths, columns, self.size, self.mode, self.pixels()),
                    ray.data.block.BlockMetadata(
                        len(paths), len(paths) * self.pixels(), input_files=None, exec_stats=None
                    ),
                    per_task_row_limit=per_task_row_limit,  # a limit Ray Data pushed into the read
                )
            )
        return reads


def decoded_blocks(paths, columns, size, mode, pixels):
    """The images at `paths`, decoded, with their `columns`, as blocks of IMAGE_BLOCK_BYTES of pixels."""
    per_block = max(IMAGE_BLOCK_BYTES // pixels, 1)
    for start in range(0, len(paths), per_block):
        images = np.stack([decoded_image(path, size, mode) for path in paths[start : start + per_block]])
        rest = {name: np.asarray(values[start : start + per_block]) for name, values in columns.items()}
        yield ray.data.block.BlockAccessor.batch_to_block({"image": images, **rest})


def model_inputs(batch, fitted):
    """float32 images in [0, 1] (channels, height, width), as training fed them."""
    images = batch["image"].astype(np.float32) / 255.0
    images = images.reshape(*images.shape[:3], -1)  # grayscale images come without a channel axis
    return np.ascontiguousarray(images.transpose(0, 3, 1, 2))


class Predictor:
    """One per Ray Data actor: the checkpoint's model, loaded once; then each batch's predictions beside its id."""

    def __init__(self, weights, config, fitted, id_column):
        self.model, self.fitted, self.id_column = load_model(config, weights, fitted), fitted, id_column
        self.prefix = config["input_prefix"]

    def __call__(self, batch):
        x = model_inputs(batch, self.fitted)
        with torch.inference_mode():
            scores = self.model(torch.from_numpy(x)).numpy().astype(np.float64)
        known = np.isfinite(x.reshape(len(x), -1)).all(axis=1)  # a missing value training never filled: no prediction
        ids = pyarrow.array([path[len(self.prefix) :] for path in batch["path"]], pyarrow.string())
        return pyarrow.Table.from_arrays(
            [ids, *predictions(scores, known, self.fitted)], names=["path", *output_names(self.fitted)]
        )


def output_names(fitted):
    """predicted_<label>, then probability_<class> for each class."""
    return ["predicted_class", *(f"probability_{name}" for name in classes(fitted))]


def classes(fitted):
    """The class names (the training folder's directories)."""
    return fitted["classes"] + [str(i) for i in range(len(fitted["classes"]), fitted["num_outputs"])]


def predictions(scores, known, fitted):
    """The predicted class (the largest logit's directory name) and each class's probability (the logits'
    softmax); null for rows without a prediction."""
    shifted = np.exp(scores - scores.max(axis=1, keepdims=True))
    probabilities = shifted / shifted.sum(axis=1, keepdims=True)
    label = pyarrow.array(
        np.asarray(classes(fitted), dtype=object)[scores.argmax(axis=1)], pyarrow.string(), mask=~known
    )
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


def predict(checkpoint, source, output, address=None, actors=None, batch_size=256, progress=None):
    """Predictions of the checkpoint's model for every image below `source`, written to `output` in the
    input's order. Ray Data reads the input and runs `actors` copies of the model (default: half the cluster's
    CPUs), each loaded once and fed `batch_size` images at a time. Returns the rows written."""
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
    rows, _ = read_input(source, fitted)
    config["input_prefix"] = (
        os.path.abspath(source) if os.path.isdir(source) else os.path.dirname(os.path.abspath(source))
    ) + os.sep
    id_column = "path"
    actors, actor_cpus = actor_pool(actors)
    predicted = rows.map_batches(
        Predictor,
        fn_constructor_kwargs={"weights": weights, "config": config, "fitted": fitted, "id_column": id_column},
        batch_size=batch_size,
        batch_format="numpy",
        compute=ray.data.ActorPoolStrategy(size=actors),
        num_cpus=actor_cpus,
    )
    batches = predicted.iter_batches(batch_size=None, batch_format="pyarrow")
    return write_predictions(batches, output, progress)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkpoint", help="a checkpoint directory of the run (its best: best.json's checkpoint)")
    parser.add_argument("input", help="a folder of PNG or JPEG images (or one image)")
    parser.add_argument("-o", "--output", required=True, help="the predictions: a .parquet or .csv file")
    parser.add_argument("--address", default=None, help="Ray cluster address (default: start a local Ray)")
    parser.add_argument("--actors", type=int, default=None, help="copies of the model (default: half the CPUs)")
    args = parser.parse_args(argv)
    try:
        rows = predict(args.checkpoint, args.input, args.output, address=args.address, actors=args.actors)
    except PredictProblem as problem:
        raise SystemExit(str(problem)) from None
    print(f"{rows} predictions written to {args.output}")


if __name__ == "__main__":
    main()
