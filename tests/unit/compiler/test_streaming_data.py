"""The driver's data code of file tables and image folders (SPEC §12), run from the compiled scripts without Ray:
the seeded hash split, the listing of an image folder, the columns check, the model inputs; and every variant of
it compiles ruff-clean. The e2e tests (tests/e2e/test_streaming_data.py) train through it on a real Ray."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
import yaml

from tests.conftest import ROOT
from tests.unit.compiler.test_tensorflow_script import script_of

TABLE = "{type: csv, path: rows.csv, label: y, categorical: [colour]}"


def spec_text(dataset: str, framework: str = "torch", extra: str = "") -> str:
    return f"""\
specc: 1
name: data
framework: {framework}
model: {{type: mlp, hidden_sizes: [8]}}
dataset: {dataset}
training: {{epochs: 1}}
scaling: {{num_workers: 2, resources_per_worker: {{CPU: 0.5}}}}
{extra}"""


def table(n=2000, seed=0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {"a": rng.normal(size=n), "count": rng.integers(0, 9, n), "colour": rng.choice(["red", "blue"], n)}
        | {"y": rng.integers(0, 2, n)}
    )


@pytest.fixture
def tabular(write_spec):
    script = script_of(write_spec, spec_text(TABLE))
    return script, {**script.CONFIG["dataset"], "path": "rows.csv"}


def held(script, frame, cfg, validation=True) -> list:
    """The index labels of the rows of `frame` that the compiled split_rows keeps on this side (read as Arrow)."""
    block = pa.Table.from_pandas(frame, preserve_index=False)
    mask = script.in_validation(block, cfg) == validation
    kept = script.split_rows(block, cfg, validation)  # every column hashed, whatever the spec's features
    assert kept.equals(block.filter(mask))
    return list(frame.index[mask])


def test_the_split_holds_out_the_fraction_the_same_whatever_the_blocks(tabular):
    script, cfg = tabular
    frame = table()
    validation = held(script, frame, cfg)
    assert abs(len(validation) / len(frame) - cfg["validation_fraction"]) < 0.03
    # read in other blocks, in another order: the same rows
    blocks = [frame.iloc[i::7] for i in range(7)][::-1]
    assert sorted(index for block in blocks for index in held(script, block, cfg)) == sorted(validation)
    training = held(script, frame, cfg, validation=False)
    assert sorted([*training, *validation]) == list(frame.index)  # each row on exactly one side


def test_the_split_depends_on_the_seed_and_keeps_equal_rows_together(tabular):
    script, cfg = tabular
    frame = table()
    assert set(held(script, frame, cfg)) != set(held(script, frame, {**cfg, "shuffle_seed": 1}))
    twice = pd.concat([frame, frame], ignore_index=True)
    validation = set(held(script, twice, cfg))
    assert all((index in validation) == (index + len(frame) in validation) for index in range(len(frame)))


def test_the_split_is_the_one_earlier_versions_held_out(tabular):
    """A run resumed with a later specc keeps its split: the rows held out of a fixed table (a missing number, a
    missing integer, a missing text, -0.0) are the ones held out since the split hashes Arrow columns (2026-11-25)."""
    script, cfg = tabular
    frame = table()
    frame.loc[::5, "a"] = np.nan
    frame.loc[1::7, "a"] = -0.0
    frame["count"] = frame["count"].astype("Int64")
    frame.loc[::6, "count"] = pd.NA
    frame.loc[::9, "colour"] = None
    block = pa.Table.from_pandas(frame, preserve_index=False)
    held = np.flatnonzero(script.in_validation(block, {**cfg, "shuffle_seed": 42}))
    assert len(held) == 358 and list(held[:8]) == [5, 21, 22, 27, 28, 29, 42, 47]
    assert hashlib.sha256(",".join(map(str, held)).encode()).hexdigest()[:16] == "ecbbfbb45cf727c4"
    assert script.row_hashes(block, 42)[:2].tolist() == [6111353231456389924, 6277002202511738304]


def test_integers_split_as_the_same_numbers_read_as_floats_and_missing_values_alike(tabular):
    script, cfg = tabular
    frame = table()
    assert held(script, frame, cfg) == held(script, frame.astype({"count": "float64"}), cfg)
    holes = frame.astype({"count": "Int64"})
    holes.loc[::5, "count"] = pd.NA
    floats = holes.astype({"count": "float64"})  # the same missing values read as NaN in a float column
    assert held(script, holes, cfg) == held(script, floats, cfg)


def test_missing_drop_skips_rows_missing_a_value_the_spec_reads(write_spec):
    script = script_of(
        write_spec, spec_text("{type: csv, path: rows.csv, label: y, categorical: [colour], missing: drop}")
    )
    cfg = {**script.CONFIG["dataset"], "path": "rows.csv"}
    frame = table().astype({"a": "float64"})
    frame.loc[::4, "a"] = np.nan
    block = pa.Table.from_pandas(frame, preserve_index=False)
    kept = pa.concat_tables([script.split_rows(block, cfg, ["a", "y"], side) for side in (True, False)])
    assert kept.num_rows == len(frame) - len(frame.iloc[::4]) and kept.column("a").null_count == 0
    assert script.split_rows(block, cfg, ["count", "y"], True).column("a").null_count > 0  # "a" not read: kept


class Schema:
    """The two attributes of a Ray Data schema that feature_columns reads."""

    def __init__(self, frame: pd.DataFrame):
        arrow = pa.Schema.from_pandas(frame, preserve_index=False)
        self.names, self.types = arrow.names, arrow.types


class Rows:
    def __init__(self, frame: pd.DataFrame):
        self.frame = frame

    def schema(self):
        return Schema(self.frame)


@pytest.mark.parametrize(
    ("change", "field", "words"),
    [
        ({"label": "price"}, "dataset.label", "has no column 'price'"),
        ({"features": ["a", "size"]}, "dataset.features", "has no column 'size'"),
        ({"categorical": []}, "dataset.categorical", r"not numbers: 'colour' \("),
    ],
)
def test_columns_the_files_lack_or_text_not_declared_categorical_are_named(tabular, change, field, words):
    script, cfg = tabular
    with pytest.raises(script.specc_runtime.DataProblem, match=words) as problem:
        script.feature_columns(Rows(table()), {**cfg, **change})
    assert problem.value.field == field


def test_the_model_inputs_are_the_numbers_then_each_category_one_hot(tabular):
    script, _ = tabular
    one_hot = pa.array([[0, 1], [0, 0]], pa.list_(pa.uint8(), 2))  # as OneHotEncoder's Arrow path leaves it
    block = pa.table({"a": [0.5, -1.0], "colour": one_hot, "y": [1, 0]})
    batch = script.model_inputs(block, ["a"], ["colour"], [2], "y")
    assert batch["x"].tolist() == [[0.5, 0.0, 1.0], [-1.0, 0.0, 0.0]] and batch["x"].dtype == np.float32
    assert batch["y"].tolist() == [1, 0]
    empty = script.model_inputs(block.slice(0, 0), ["a"], ["colour"], [2], "y")
    assert empty["x"].shape == (0, 3)


def test_numeric_columns_of_every_arrow_type_become_float32_as_numpy_casts_them(tabular):
    """Each column is cast to float32 as it is copied in, to the values NumPy's astype gives: float64 rounded once,
    integers, booleans, decimals (as Python objects), float16, missing values as NaN."""
    from decimal import Decimal

    script, _ = tabular
    columns = {
        "f64": pa.array([0.1, -1e10, 2.0**-30], pa.float64()),
        "i64": pa.array([2**40 + 1, -3, 0], pa.int64()),
        "flag": pa.array([True, False, True]),
        "money": pa.array([Decimal("1.25"), Decimal("-0.10"), Decimal("3")], pa.decimal128(5, 2)),
        "half": pa.array(np.array([0.5, 1.5, -2.0], np.float16)),
        "gap": pa.array([1.0, None, 3.0], pa.float32()),
    }
    x = script.numbers(pa.table(columns), list(columns))
    expected = np.column_stack(
        [column.to_numpy(zero_copy_only=False).astype(np.float32) for column in columns.values()]
    )
    assert x.dtype == np.float32 and x.shape == (3, 6) and x.flags.c_contiguous
    np.testing.assert_array_equal(x, expected)  # NaN where a value is missing, in both
    assert np.isnan(x[1, 5]) and x[0, 1] == np.float32(2**40 + 1)


def png(path, value=0):
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(np.full((4, 4), value, np.uint8)).save(path)


def test_an_image_folder_lists_its_class_directories_and_images(write_spec, tmp_path):
    root = tmp_path / "images"
    for name in ("cat/1.png", "cat/2.JPG", "cat/nested/3.jpeg", "dog/4.png", ".hidden/5.png"):
        png(root / name) if not name.endswith(".JPG") else png(root / name.replace("JPG", "png"))
    (root / "cat/2.png").rename(root / "cat/2.JPG")  # a JPEG-named file in upper case is read too
    (root / "dog/notes.txt").write_text("not an image")
    script = script_of(write_spec, spec_text("{type: image_folder, path: images, image_size: [4, 4]}"))
    classes, files, prefix = script.image_files(str(root))
    assert classes == ["cat", "dog"] and prefix == f"{root}/"
    assert [(path[len(prefix) :], label) for path, label in files] == [
        ("cat/1.png", 0),
        ("cat/2.JPG", 0),
        ("cat/nested/3.jpeg", 0),
        ("dog/4.png", 1),
    ]
    png(tmp_path / "other/bird/1.png")
    with pytest.raises(script.specc_runtime.DataProblem, match="bird") as problem:
        script.image_files(str(tmp_path / "other"), classes)
    assert problem.value.field == "dataset.validation_path"
    with pytest.raises(script.specc_runtime.DataProblem, match="not a directory"):
        script.image_files(str(tmp_path / "missing"))


def test_the_images_split_by_their_names_and_subset_keeps_the_first(write_spec, tmp_path):
    root = tmp_path / "images"
    for label in range(3):
        for index in range(40):
            png(root / f"{label}/{index}.png")
    dataset = "{type: image_folder, path: images, image_size: [4, 4], channels: 1, subset: {train: 20, validation: 5}}"
    script = script_of(write_spec, spec_text(dataset))
    cfg = {**script.CONFIG["dataset"], "path": str(root)}
    whole = script.image_lists({**cfg, "subset": {"train": 1000, "validation": 1000}})
    train, val = whole["files"]["train"], whole["files"]["validation"]
    assert not set(train) & set(val) and len(train) + len(val) == 120 and 12 <= len(val) <= 36
    assert script.image_lists({**cfg, "subset": {"train": 1000, "validation": 1000}}) == whole  # the same every run
    part = script.image_lists(cfg)
    assert part["files"]["train"] == train[:20] and part["files"]["validation"] == val[:5]
    assert part["fitted"]["classes"] == ["0", "1", "2"] and part["input_shape"] == [1, 4, 4]


def test_ray_data_images_become_model_inputs_with_their_class(write_spec):
    torch_script = script_of(
        write_spec, spec_text("{type: image_folder, path: images, image_size: [2, 2], channels: 1}")
    )
    batch = {"image": np.full((2, 2, 2), 255, np.uint8), "y": np.array([1, 0])}
    inputs = torch_script.model_inputs(batch)
    # bytes through Ray Data (a quarter of float32's): the workers scale them
    assert inputs["x"].shape == (2, 2, 2, 1) and inputs["x"].dtype == np.uint8 and inputs["x"].max() == 255
    assert inputs["y"].tolist() == [1, 0]


class ImageShard:
    """Batches of model_inputs' images as a Ray Dataset shard gives them (the data only): as torch tensors
    (iter_torch_batches), TensorFlow's (iter_tf_batches) or NumPy arrays (iter_batches: a torch worker's validation
    pass). Every byte value is among the pixels."""

    def __init__(self, script, rows):
        pixels = np.random.default_rng(0).integers(0, 256, (rows, 6, 5, 3), np.uint8)
        pixels.reshape(-1)[:256] = np.arange(256)
        self.inputs = script.model_inputs({"image": pixels, "y": np.arange(rows) % 3})

    def iter_tf_batches(self, batch_size):
        import tensorflow as tf

        for batch in self.iter_batches(batch_size, "numpy"):
            yield {name: tf.constant(values) for name, values in batch.items()}

    def iter_batches(self, batch_size, batch_format):
        assert batch_format == "numpy"
        for start in range(0, len(self.inputs["y"]), batch_size):
            yield {name: values[start : start + batch_size] for name, values in self.inputs.items()}

    def iter_torch_batches(self, batch_size, device):
        import torch

        for batch in self.iter_batches(batch_size, "numpy"):
            yield {name: torch.as_tensor(values) for name, values in batch.items()}


def image_trial_script(write_spec, framework):
    """An image folder's script whose trials each train in one process (make_loaders takes the data sets)."""
    spec = spec_text("{type: image_folder, path: images, image_size: [6, 5], batch_size: 4}", framework)
    lean = spec.replace("num_workers: 2", "num_workers: 1")
    return script_of(write_spec, lean + "tune: {metric: val_loss, mode: min, space: {training.seed: {grid: [0]}}}\n")


def test_torch_sees_ray_data_images_scaled_channels_first_laid_out_channels_last(write_spec):
    """The data tasks pass images on as bytes, as they decode them (height, width, channels); the torch batches see
    them as float32 in [0, 1] (the very values specc predict computes, and the in-memory data sets), as its
    convolutions take them: channels first, laid out channels_last, its faster layout on CPU (and on GPU with AMP)."""
    torch = pytest.importorskip("torch")
    script = image_trial_script(write_spec, "torch")
    shard = ImageShard(script, 20)
    expected = torch.as_tensor(shard.inputs["x"].astype(np.float32) / 255.0).permute(0, 3, 1, 2)
    train, val = script.make_loaders({"dataset": script.CONFIG["dataset"]}, shard, shard, "cpu")
    for batches in (train, val, val):  # validation twice: Ray Data's whole pass, then the one kept on disk
        (x, y), *rest = batches()  # the whole pass
        assert x.shape == (4, 3, 6, 5) and x.dtype == torch.float32
        assert x.is_contiguous(memory_format=torch.channels_last)
        assert torch.equal(torch.cat([x, *(batch for batch, _ in rest)]), expected)
        assert y.tolist() == [0, 1, 2, 0]


def test_keras_sees_ray_data_images_scaled(write_spec):
    """The Keras batches see the bytes as float32 in [0, 1], height, width, channels: the values torch's do."""
    pytest.importorskip("tensorflow")
    script = image_trial_script(write_spec, "tensorflow")
    shard = ImageShard(script, 20)
    config = {
        "dataset": script.CONFIG["dataset"],
        "training": {"max_batches": None},
        "data": {"input_shape": [6, 5, 3]},
    }
    train, val = script.make_loaders(config, shard, shard, 1)
    for batches in (train, val):
        x = np.concatenate([x for x, _ in batches.as_numpy_iterator()])
        assert x.dtype == np.float32 and np.array_equal(x, shard.inputs["x"].astype(np.float32) / 255.0)


def image_files(folder: Path, rows: int, channels: int = 3) -> tuple[list[tuple[str, int]], np.ndarray]:
    """`rows` PNGs of 6x5 random pixels (every byte value among them) in class directories 0-2: their (path, class)
    pairs, as image_lists gives them, and their pixels (height, width, channels)."""
    from PIL import Image

    pixels = np.random.default_rng(0).integers(0, 256, (rows, 6, 5, channels), np.uint8)
    pixels.reshape(-1)[:256] = np.arange(256)
    files = []
    for index, image in enumerate(pixels):
        path = folder / str(index % 3) / f"{index:03d}.png"
        path.parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray(image if channels == 3 else image[..., 0]).save(path)
        files.append((str(path), index % 3))
    return files, pixels


@pytest.mark.parametrize("channels", [3, 1])
def test_torch_sees_dataloader_images_scaled_channels_first_laid_out_channels_last(write_spec, tmp_path, channels):
    """The DataLoaders' ImageFiles pass images on as bytes; each batch becomes float32 in [0, 1] at once (the values
    the Ray Data path and specc predict compute), channels first, laid out channels_last as Ray Data's batches are.
    An augmented training image is scaled before it is changed; its batch is laid out alike."""
    torch = pytest.importorskip("torch")
    folder = f"{{type: image_folder, path: images, image_size: [6, 5], channels: {channels}, batch_size: 4"
    dataset = folder + ", loader: torch_dataloader, augment: [horizontal_flip]}"
    lean = spec_text(dataset).replace("num_workers: 2", "num_workers: 1")  # trials in one process: no Train run
    script = script_of(write_spec, lean + "tune: {metric: val_loss, mode: min, space: {training.seed: {grid: [0]}}}\n")
    files, pixels = image_files(tmp_path / "images", 10, channels)
    config = {"dataset": script.CONFIG["dataset"], "data": {"files": {"train": files, "validation": files}}}
    config["data"] |= {"input_shape": [channels, 6, 5], "num_outputs": 3}
    _, train_loader, val_loader, _, _ = script.make_loaders(config, 0, 1)
    expected = torch.as_tensor(pixels.astype(np.float32) / 255.0).permute(0, 3, 1, 2)
    batches = list(val_loader)
    for x, _ in batches:
        assert x.dtype == torch.float32 and x.shape[1:] == (channels, 6, 5)
        assert x.is_contiguous(memory_format=torch.channels_last)
    assert torch.equal(torch.cat([x for x, _ in batches]), expected)
    assert torch.cat([y for _, y in batches]).tolist() == [index % 3 for index in range(10)]
    for x, _ in train_loader:  # shuffled and flipped at random: each image is one of the two, scaled alike
        assert x.is_contiguous(memory_format=torch.channels_last)
        for image in x:
            assert any(torch.equal(image, e) or torch.equal(image, e.flip(-1)) for e in expected)


class TableShard:
    """A table's model inputs as a Ray Dataset shard gives them: whole blocks (iter_torch_batches(batch_size=None),
    iter_batches(batch_size=None) as NumPy) or batches (iter_batches as NumPy: a torch worker's validation pass), in
    the order of the rows (x and y are the row's number; the TensorFlow batches as NumPy arrays, which tf.data takes
    alike)."""

    def __init__(self, sizes):
        self.blocks, start = [], 0
        for size in sizes:
            rows = np.arange(start, start + size, dtype=np.float32).reshape(-1, 1)
            self.blocks.append({"x": rows, "y": rows.copy()})  # a regression's targets: one float32 column
            start += size

    def iter_batches(self, batch_size, batch_format):
        assert batch_format == "numpy"
        yield from self.blocks if batch_size is None else self.batches(batch_size)

    def batches(self, batch_size):
        """The rows in order, in batches of `batch_size` across the blocks (as NumPy arrays)."""
        rows = {name: np.concatenate([block[name] for block in self.blocks]) for name in ("x", "y")}
        for start in range(0, len(rows["y"]), batch_size):
            yield {name: values[start : start + batch_size] for name, values in rows.items()}

    def iter_tf_batches(self, batch_size):
        yield from self.batches(batch_size)

    def iter_torch_batches(self, batch_size, device):
        import torch

        found = self.blocks if batch_size is None else self.batches(batch_size)
        for batch in found:
            yield {name: torch.as_tensor(values) for name, values in batch.items()}


BLOCKS = [700, 1500, 30, 2000, 5, 3]  # uneven, as filtered blocks come: some under the buffer's 4 batches


def dealt_rows(batches) -> list[list[int]]:
    """Each batch's row numbers, checking that every row's x is still its own y."""
    rows = []
    for x, y in batches:
        assert np.array_equal(np.asarray(x), np.asarray(y))
        rows.append(np.asarray(y).reshape(-1).astype(int).tolist())
    return rows


@pytest.mark.parametrize("framework", ["torch", "tensorflow"])
def test_training_rows_come_in_whole_batches_each_once_in_a_new_seeded_order(write_spec, framework):
    """The workers' local shuffle (shuffled_batches, in place of Ray Data's local_shuffle_buffer_size, which cost
    them nearly twice the CPU a row): every training row once a pass, in batches of batch_size but the last, drawn
    from at least 4 batches' rows, another order each pass and the same in every run; validation rows in order."""
    if framework == "torch":
        pytest.importorskip("torch")
    spec = spec_text("{type: parquet, path: rows, label: y, task: regression, batch_size: 64}", framework)
    lean = (
        spec.replace("num_workers: 2", "num_workers: 1")
        + "tune: {metric: val_loss, mode: min, space: {training.seed: {grid: [0]}}}\n"
    )

    def passes(seed):
        script = script_of(write_spec, lean)
        config = {"dataset": {**script.CONFIG["dataset"], "shuffle_seed": seed}, "training": {"max_batches": None}}
        shard = TableShard(BLOCKS)
        if framework == "torch":
            train, val = script.make_loaders(config, shard, shard, "cpu")
            return [dealt_rows(train()), dealt_rows(train())], dealt_rows(val())
        np.random.seed(seed)  # keras.utils.set_random_seed does this in a worker
        config["data"] = {"input_shape": [1]}
        train, val = script.make_loaders(config, shard, shard, 1)
        return [dealt_rows(train.as_numpy_iterator()), dealt_rows(train.as_numpy_iterator())], dealt_rows(
            val.as_numpy_iterator()
        )

    total = sum(BLOCKS)
    (first, second), validation = passes(0)
    for rows in (first, second):
        assert sorted(row for batch in rows for row in batch) == list(range(total))
        assert [len(batch) for batch in rows] == [64] * (total // 64) + [total % 64]
    assert [row for batch in validation for row in batch] == list(range(total))  # validation: never shuffled
    assert first != second  # another order each pass
    assert max(first[0]) >= 4 * 64 and sorted(first[0]) != first[0]  # drawn from the buffer, not the head in order
    assert passes(0)[0] == [first, second]  # the same draws in every run of the spec
    assert passes(1)[0][0] != first  # ... and others for another dataset.shuffle_seed


@pytest.fixture
def image_script(write_spec):
    return script_of(write_spec, spec_text("{type: image_folder, path: images, image_size: [6, 5]}"))


def varied_images(root) -> list[str]:
    """Images of every kind decoded differently: sizes other than image_size, grayscale, RGBA, a palette, a JPEG."""
    from PIL import Image

    rng = np.random.default_rng(0)
    root.mkdir(parents=True, exist_ok=True)
    made = {
        "gray.png": Image.fromarray(rng.integers(0, 256, (9, 7), np.uint8)),
        "rgba.png": Image.fromarray(rng.integers(0, 256, (4, 3, 4), np.uint8)),
        "rgb.jpg": Image.fromarray(rng.integers(0, 256, (12, 10, 3), np.uint8)),
        "palette.png": Image.fromarray(rng.integers(0, 256, (6, 5, 3), np.uint8)).convert("P"),
        "exact.png": Image.fromarray(rng.integers(0, 256, (6, 5, 3), np.uint8)),
    }
    for name, image in made.items():
        image.save(root / name)
    return [str(root / name) for name in sorted(made)]


@pytest.mark.parametrize("mode", ["RGB", "L"])
def test_images_are_decoded_pixel_for_pixel_as_ray_datas_read_images_decodes_them(
    image_script, tmp_path, monkeypatch, mode
):
    """Training (ImageBlocks and the DataLoaders' ImageFiles) and specc predict decode through decoded_image; a
    model trained on one decoding and served on another would see other pixels."""
    import pyarrow.fs
    from ray.data._internal.datasource import image_datasource

    class Rows:  # the rows Ray Data's reader decoded, before its block builder (which needs a Ray) sizes them
        def __init__(self):
            self.rows = []

        def add(self, row):
            self.rows.append(row)

        def build(self):
            return self.rows

    monkeypatch.setattr(image_datasource, "DelegatingBlockBuilder", Rows)
    paths = varied_images(tmp_path / "images")
    # read_images(size=, mode=)'s decoding of one file, without building the datasource: its constructor puts the
    # paths in the object store, which would start a Ray in this fast test.
    ray_reads = SimpleNamespace(size=(6, 5), mode=mode)
    for path in paths:
        with pyarrow.fs.LocalFileSystem().open_input_file(path) as source:
            ((row,),) = image_datasource.ImageDatasource._read_stream(ray_reads, source, path)
        expected = row["image"]
        got = image_script.decoded_image(path, [6, 5], mode)
        assert got.dtype == np.uint8 and got.shape == ((6, 5, 3) if mode == "RGB" else (6, 5)), path
        np.testing.assert_array_equal(got, expected, err_msg=path)


def test_image_blocks_read_many_files_a_task_a_bounded_block_at_a_time(image_script, tmp_path, monkeypatch):
    """Each read task decodes a run of files (not one file a task, as read_images: five times the CPU a small image),
    yields blocks of at most IMAGE_BLOCK_BYTES of pixels, each image beside its own column values; a limit Ray Data
    pushes into the read holds."""
    from ray.data.block import BlockAccessor

    script, root = image_script, tmp_path / "images"
    paths = []
    for index in range(300):
        png(root / f"{index % 3}" / f"{index}.png", value=index % 256)
        paths.append(str(root / f"{index % 3}" / f"{index}.png"))
    monkeypatch.setattr(script, "IMAGE_BLOCK_BYTES", 6 * 5 * 3 * 40)  # 40 images a block
    images = script.ImageBlocks(paths, [6, 5], "RGB", {"y": [index % 3 for index in range(300)], "path": paths})
    tasks = images.get_read_tasks(parallelism=200)
    fewest, most = script.FILES_PER_READ
    assert len(tasks) == 300 // fewest and all(fewest <= task.metadata.num_rows <= most for task in tasks)
    blocks = [block for task in tasks for block in task()]
    assert max(block.num_rows for block in blocks) == 40
    read = BlockAccessor.for_block(pa.concat_tables(blocks)).to_numpy()
    assert read["path"].tolist() == paths  # in the files' order: validation's, and predict's
    assert read["y"].tolist() == [index % 3 for index in range(300)]
    pixels = read["image"]
    assert pixels.shape == (300, 6, 5, 3) and pixels[:, 0, 0, 0].tolist() == [index % 256 for index in range(300)]
    many = script.ImageBlocks(paths * 100, [6, 5], "RGB", {})  # 30,000 files: as many tasks as Ray Data asks for,
    assert [len(many.get_read_tasks(asked)) for asked in (1, 200, 10_000)] == [30, 200, 468]  # within FILES_PER_READ
    limited = images.get_read_tasks(parallelism=200, per_task_row_limit=7)
    assert sum(block.num_rows for block in limited[0]()) == 7


def test_image_blocks_deal_the_files_in_a_new_seeded_order_every_pass(image_script, tmp_path):
    import ray.data

    root = tmp_path / "images"
    paths = [str(root / f"{index}.png") for index in range(200)]

    def orders(shuffle, passes=3):
        images = image_script.ImageBlocks(paths, [6, 5], "RGB", {"path": paths}, shuffle)
        tasks = (images.get_read_tasks(4) for _ in range(passes))
        return [[path for task in each for path in task.read_fn.args[1]["path"]] for each in tasks]

    assert orders(None) == [paths] * 3  # dataset.shuffle: false, and validation
    seeded = orders(ray.data.FileShuffleConfig(seed=0))
    assert all(sorted(order) == sorted(paths) for order in seeded)
    assert len({tuple(order) for order in seeded}) == 3  # a new order of the images every pass
    assert seeded == orders(ray.data.FileShuffleConfig(seed=0))  # the same ones in every run
    assert seeded != orders(ray.data.FileShuffleConfig(seed=1))


def test_a_file_that_is_not_an_image_is_named(image_script, tmp_path, monkeypatch):
    bad = tmp_path / "images" / "0" / "broken.png"
    bad.parent.mkdir(parents=True)
    bad.write_bytes(b"\x89PNG\r\n\x1a\n not really")
    with pytest.raises(ValueError, match=r"broken\.png' is not an image PIL can read"):
        image_script.decoded_image(str(bad), [6, 5], "RGB")
    png(tmp_path / "images" / "0" / "fine.png", value=7)
    import PIL.Image

    monkeypatch.setattr(PIL.Image, "MAX_IMAGE_PIXELS", 4)  # 16 pixels: more than twice that, PIL's decompression bomb
    with pytest.raises(ValueError, match=r"fine\.png' is not an image PIL can read: .*decompression bomb"):
        image_script.decoded_image(str(tmp_path / "images" / "0" / "fine.png"), [6, 5], "L")
    monkeypatch.undo()  # a URI (file://) reads through pyarrow's file systems
    assert image_script.decoded_image(f"file://{tmp_path}/images/0/fine.png", [6, 5], "L").max() == 7


# Every variant of the data code compiles ruff-clean (one ruff run over all of them).
IMAGES = "type: image_folder, path: i, image_size: [8, 8]"
DATASETS = {
    "csv_categorical_mean": "{type: csv, path: d.csv, label: y, categorical: [c], missing: mean}",
    "csv_median": "{type: csv, path: d.csv, label: y, categorical: [c], missing: median}",
    "csv_regression": "{type: csv, path: d.csv, label: y, task: regression}",
    "parquet_drop_raw": "{type: parquet, path: d/, label: y, missing: drop, standardize: false}",
    "jsonl_most_frequent": "{type: jsonl, path: d.jsonl, label: y, categorical: [c], missing: most_frequent, "
    "task: regression}",
    "npz": "{type: npz, path: d.npz}",
    "npz_regression_raw": "{type: npz, path: d.npz, task: regression, standardize: false}",
    "images_ray_data": f"{{{IMAGES}, channels: 1, augment: [horizontal_flip]}}",
    "images_subset": f"{{{IMAGES}, subset: {{train: 10, validation: 5}}, shuffle: false}}",
    "images_dataloader": f"{{{IMAGES}, loader: torch_dataloader, loader_workers: 2, validation_path: v, "
    "validation_fraction: null, augment: [horizontal_flip]}",
}
SEARCH = "tune: {metric: val_loss, mode: min, num_samples: 2, space: {training.optimizer.lr: {uniform: [0.01, 0.1]}}}"
SHAPES = {
    "train": "",
    "local": "scaling: {num_workers: 0}",
    "lean_search": SEARCH,
    "trainer_search": "scaling: {num_workers: 2, resources_per_worker: {CPU: 0.45}, data_cpus: 1}\n" + SEARCH,
}


def test_every_data_variant_compiles_ruff_clean(write_spec, tmp_path):
    from specc import api

    written = []
    for framework in ("torch", "tensorflow"):
        for data_name, dataset in DATASETS.items():
            if framework == "tensorflow" and "torch_dataloader" in dataset:
                continue
            for shape_name, shape in SHAPES.items():
                text = spec_text(dataset, framework)
                if shape:
                    spec = yaml.safe_load(text)
                    for key, value in yaml.safe_load(shape).items():
                        spec[key] = {**spec.get(key, {}), **value}
                    text = yaml.safe_dump(spec, sort_keys=False)
                source = api.compile(
                    api.load(write_spec(text, f"{len(written)}.yaml"))
                )  # short: the docstring names it
                script = tmp_path / f"{framework}_{data_name}_{shape_name}.py"
                script.write_text(source, encoding="utf-8")
                written.append(str(script))
    command = [sys.executable, "-m", "ruff", "check", "--config", str(ROOT / "pyproject.toml"), "--no-cache", *written]
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stdout[-4000:]
    assert len(written) == 2 * 4 * len(DATASETS) - 4


@pytest.fixture
def parquet_script(write_spec):
    return script_of(write_spec, spec_text("{type: parquet, path: rows, label: y}"))


def write_parquet(path, frame, **options):
    import pyarrow.parquet as pq

    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), path, **options)


def test_parquet_files_are_read_a_slice_at_a_time_with_their_hive_partitions(parquet_script, tmp_path, monkeypatch):
    """One read task a parquet file (its rows from the footer), in name order; what read_parquet leaves out is left
    out (other extensions, directories starting with "." or "_"); a key=value directory is a string column; each
    file's rows come a slice of about SLICE_BYTES (uncompressed, from the footer) at a time, however large its row
    groups: a row at least, SLICE_ROWS_AT_MOST at most."""
    import pyarrow.parquet as pq

    script, root = parquet_script, tmp_path / "rows"
    monkeypatch.setattr(script, "SLICE_BYTES", 4096)
    big = table(n=1000)
    write_parquet(root / "region=north" / "b.parquet", big)  # one row group of several slices and a bit
    write_parquet(root / "region=south" / "a.parquet", table(n=10, seed=1), row_group_size=3)
    write_parquet(root / "_tmp" / "c.parquet", table(n=10))
    write_parquet(root / ".hidden" / "d.parquet", table(n=10))
    (root / "_SUCCESS").write_text("", encoding="utf-8")
    (root / "region=south" / "notes.txt").write_text("not a table", encoding="utf-8")

    files = script.ParquetSlices(str(root))
    assert [p.relative_to(root).as_posix() for p in map(Path, files.paths)] == [
        "region=north/b.parquet",
        "region=south/a.parquet",
    ]
    tasks = files.get_read_tasks(parallelism=200, per_task_row_limit=None)
    assert tasks[0].schema.names == ["a", "count", "colour", "y", "region"]
    assert tasks[0].schema.field("region").type == pa.string()
    assert [task.metadata.num_rows for task in tasks] == [len(big), 10]

    footer = pq.read_metadata(root / "region=north" / "b.parquet")
    rows, row_bytes = script.slice_rows(footer), script.uncompressed(footer) / footer.num_rows
    assert 1 < rows < 1000 // 2 and 4096 - row_bytes < rows * row_bytes <= 4096
    slices = list(tasks[0]())
    assert [piece.num_rows for piece in slices] == [rows] * (1000 // rows) + [1000 % rows] * (1000 % rows > 0)
    read = pa.concat_tables(slices)
    assert read.drop_columns("region").equals(pa.Table.from_pandas(big, preserve_index=False))
    assert set(read.column("region").to_pylist()) == {"north"}
    assert pa.concat_tables(tasks[1]()).column("region").to_pylist() == ["south"] * 10

    limited = files.get_read_tasks(parallelism=200, per_task_row_limit=7)  # Ray Data's limit pushed into the read
    assert sum(piece.num_rows for piece in limited[1]()) == 7
    monkeypatch.setattr(script, "SLICE_BYTES", 1)  # rows larger than a slice: one at a time
    assert [piece.num_rows for piece in tasks[1]()] == [1] * 10
    monkeypatch.setattr(script, "SLICE_BYTES", 1 << 40)  # rows that seem tiny (a footer may understate them)
    monkeypatch.setattr(script, "SLICE_ROWS_AT_MOST", 300)
    assert [piece.num_rows for piece in tasks[0]()] == [300, 300, 300, 100]


def test_parquet_files_at_a_uri_are_listed_and_read_through_its_file_system(parquet_script, tmp_path):
    """dataset.path may be a URI (s3://, gs://, ...: data a cluster reads from storage); file:// here."""
    write_parquet(tmp_path / "rows" / "year=2024" / "a.parquet", table(n=10))
    files = parquet_script.ParquetSlices(f"file://{tmp_path}/rows/")
    assert files.paths == [f"file://{tmp_path}/rows/year=2024/a.parquet"]
    (task,) = files.get_read_tasks(200)
    read = pa.concat_tables(task())
    assert read.num_rows == 10 and read.column("year").to_pylist() == ["2024"] * 10


def test_parquet_files_come_in_a_new_seeded_order_every_pass(parquet_script, tmp_path):
    import ray.data

    script, root = parquet_script, tmp_path / "rows"
    for index in range(8):
        write_parquet(root / f"part-{index}.parquet", table(n=4, seed=index))

    def orders(shuffle, passes=3):
        files = script.ParquetSlices(str(root), shuffle)
        return [[task.metadata.input_files[0] for task in files.get_read_tasks(200)] for _ in range(passes)]

    in_order = sorted(str(path) for path in root.iterdir())
    assert orders(None) == [in_order] * 3  # dataset.shuffle: false, and validation
    seeded = orders(ray.data.FileShuffleConfig(seed=0))
    assert all(sorted(order) == in_order for order in seeded)
    assert len({tuple(order) for order in seeded}) == 3  # a new order every pass
    assert seeded == orders(ray.data.FileShuffleConfig(seed=0))  # the same ones in every run
    assert seeded != orders(ray.data.FileShuffleConfig(seed=1))


def test_no_parquet_file_below_the_path_is_said_as_a_missing_file(parquet_script, tmp_path):
    """feature_columns turns it into a located problem (dataset.path), as it does a path that does not exist."""
    (tmp_path / "rows").mkdir()
    (tmp_path / "rows" / "rows.csv").write_text("a,y\n1,0\n", encoding="utf-8")
    for path in (tmp_path / "rows", tmp_path / "nowhere"):
        with pytest.raises(FileNotFoundError, match=r"nowhere|no \.parquet file below"):
            parquet_script.ParquetSlices(str(path)).get_read_tasks(200)


def test_streaming_limits_hold_inside_and_the_process_settings_come_back(parquet_script, monkeypatch):
    """make_datasets' data sets take small blocks, a quarter of the store each, and a preprocessor's fit aggregates
    16 MiB at a time (Ray's default gathers 1 GiB of the training split first, spilling what the store cannot hold);
    Ray Data's scheduling is paced beside the execution callbacks an API user lists; their own Ray Data settings are
    theirs again afterwards, even when making the data sets failed."""
    import ray.data

    context = ray.data.DataContext.get_current()
    names = (
        "target_max_block_size",
        "override_object_store_memory_limit_fraction",
        "shuffle_input_batch_bytes",
        "custom_execution_callback_classes",
    )
    monkeypatch.setattr(context, "custom_execution_callback_classes", [Clock])  # an API user's own (never run here)
    mine = [getattr(context, name) for name in names]
    assert mine[2] == 1 << 30  # Ray's, which the fit must not keep
    with pytest.raises(RuntimeError), parquet_script.streaming_limits():
        assert context.target_max_block_size == parquet_script.BLOCK_BYTES == 8 << 20
        assert context.override_object_store_memory_limit_fraction == parquet_script.STORE_SHARE == 0.25
        assert context.shuffle_input_batch_bytes == parquet_script.SHUFFLE_BATCH_BYTES == 16 << 20
        # the classes Ray Data's planner makes one of for each execution (the split coordinators' too)
        assert context.custom_execution_callback_classes == [Clock, parquet_script.PacedScheduling]
        assert parquet_script.PacedScheduling in context.execution_callback_classes
        raise RuntimeError("a data problem")
    assert [getattr(context, name) for name in names] == mine
    assert parquet_script.PacedScheduling not in context.execution_callback_classes


class Clock:
    """time for PacedScheduling: perf_counter reads it, sleep advances it (and records how long)."""

    def __init__(self):
        self.now, self.slept = 100.0, []

    def perf_counter(self):
        return self.now

    def sleep(self, seconds):
        self.slept.append(round(seconds, 6))
        self.now += seconds


def test_ray_datas_scheduling_steps_are_paced_only_when_they_did_not_wait(parquet_script, monkeypatch):
    """Ray Data 2.60's scheduling loop spins while the training holds the stream back: a step that found nothing to
    do is held to SCHEDULING_STEP_S, a step that waited that long for its tasks goes on at once."""
    clock = Clock()
    monkeypatch.setattr(parquet_script, "time", clock)
    step = parquet_script.SCHEDULING_STEP_S
    assert step == 0.02  # well under Ray Data's own wait for a running task (0.1 s)
    paced = parquet_script.PacedScheduling()
    for _ in range(5):  # steps that took no time: one every SCHEDULING_STEP_S
        paced.on_execution_step(executor=None)
    assert clock.slept == [step] * 5 and clock.now == pytest.approx(100.0 + 5 * step)
    clock.now += 0.005  # a step that took 5 ms: the rest of the interval
    paced.on_execution_step(executor=None)
    assert clock.slept[-1] == pytest.approx(step - 0.005)
    clock.now += 0.1  # a step that waited for its tasks: no delay
    paced.on_execution_step(executor=None)
    assert len(clock.slept) == 6
