"""A torch worker's validation batches kept on its disk (ValidationOnDisk, compiled into scripts whose files stream):
the epochs after the first read back exactly what Ray Data's whole pass gave, and every worker streams again (never
one alone: Ray Data's split would wait for the others forever) unless all kept the same whole pass. Run from the
compiled script, without Ray; tests/e2e/test_streaming_data.py trains through it on a real Ray (the resumed run's
validation loss recomputed on the held-out rows; an image folder on 2 workers)."""

from __future__ import annotations

import errno
import os
import tempfile

import numpy as np
import pytest

from tests.unit.compiler.test_streaming_data import TableShard, spec_text
from tests.unit.compiler.test_tensorflow_script import script_of, source_of

PARQUET = "{type: parquet, path: rows, label: y, task: regression, batch_size: 64}"
LEAN = "tune: {metric: val_loss, mode: min, space: {training.seed: {grid: [0]}}}\n"


@pytest.fixture
def kept_class(write_spec, monkeypatch):
    """ValidationOnDisk, its temporary directory taken for a disk (a tmpfs /tmp keeps nothing: the last tests)."""
    script = script_of(write_spec, spec_text(PARQUET))
    monkeypatch.setattr(script, "file_system_type", lambda path: "ext4")
    return script.ValidationOnDisk


def stream_of(passes):
    """A shard's passes: each call starts the next one (a list of batches), and counts the passes started."""
    started = []

    def stream():
        started.append(len(started))
        yield from passes[min(len(started), len(passes)) - 1]

    return stream, started


def batches_of(seed, sizes=(64, 64, 17)):
    """Batches of a table's and an image folder's model inputs, with values of their own (`seed`)."""
    rng = np.random.default_rng(seed)
    return [
        {
            "x": rng.normal(size=(n, 5)).astype(np.float32),
            "y": rng.integers(0, 9, n),
            "image": rng.integers(0, 256, (n, 3, 4, 2), dtype=np.uint8),
            "flag": rng.random(n) > 0.5,
        }
        for n in sizes
    ]


def one_worker(values):
    return values  # all_workers with one worker: the sums are its own


def same(found, expected):
    assert len(found) == len(expected)
    for batch, wanted in zip(found, expected, strict=True):
        assert list(batch) == list(wanted)
        for name, values in wanted.items():
            assert batch[name].dtype == values.dtype and np.array_equal(batch[name], values), name


def test_the_epochs_after_a_whole_pass_read_back_exactly_its_batches_from_unnamed_files(
    kept_class, tmp_path, monkeypatch
):
    temporary = tmp_path / "temporary"
    temporary.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))
    first = batches_of(0)
    stream, started = stream_of([first, batches_of(1)])
    kept = kept_class(stream, one_worker, 1)
    assert list(kept()) == first  # the first pass: Ray Data's batches as they come
    # kept in the temporary directory, in files with no name there: nothing to find, nothing left behind
    assert list(temporary.iterdir()) == [] and sorted(kept.files) == ["flag", "image", "x", "y"]
    for file in kept.files.values():
        where = os.readlink(f"/proc/self/fd/{file.fileno()}")
        assert where.startswith(str(temporary)) and where.endswith("(deleted)"), where
    for _ in range(3):
        same(list(kept()), first)
    assert started == [0]  # Ray Data read the validation rows once


class Workers:
    """all_workers across two workers, the other one's votes scripted: (kept a whole pass, stopped keeping)."""

    def __init__(self, others):
        self.others, self.votes = list(others), []

    def __call__(self, values):
        self.votes.append(values)
        other = self.others.pop(0)
        return [mine + theirs for mine, theirs in zip(values, other, strict=True)]


def test_a_pass_broken_off_is_not_kept_and_no_more_are(kept_class):
    passes = [batches_of(seed) for seed in range(3)]
    stream, started = stream_of(passes)
    workers = Workers([(0.0, 0.0)] * 3)
    kept = kept_class(stream, workers, 2)
    passing = kept()
    next(passing)
    passing.close()  # training.validation_steps: the first batches only, every pass
    assert kept.files == {}
    assert list(kept()) == passes[1] and list(kept()) == passes[2]  # streamed again, whole or not
    assert started == [0, 1, 2] and kept.files == {}
    assert workers.votes == [[0.0, 0.0], [0.0, 1.0], [0.0, 1.0]]  # it told the other worker to stop keeping too


def test_every_worker_streams_again_unless_all_kept_the_same_whole_pass(kept_class):
    passes = [batches_of(seed) for seed in range(4)]
    stream, started = stream_of(passes)
    # the other worker: nothing yet; its first pass broken off; then its second whole pass
    workers = Workers([(0.0, 0.0), (0.0, 0.0), (1.0, 0.0), (1.0, 0.0)])
    kept = kept_class(stream, workers, 2)
    assert list(kept()) == passes[0]
    assert list(kept()) == passes[1]  # this worker kept pass 0 whole, the other did not: both stream pass 1
    same(list(kept()), passes[1])  # ... and keep it: the same pass on both sides, never pass 0 beside pass 1
    same(list(kept()), passes[1])
    assert started == [0, 1]
    assert workers.votes == [[0.0, 0.0], [1.0, 0.0], [1.0, 0.0]]  # once both kept it, no more votes


def test_a_worker_that_cannot_keep_its_batches_stops_and_so_do_the_others(kept_class, monkeypatch):
    passes = [batches_of(seed) for seed in range(4)]
    stream, started = stream_of(passes)
    kept = kept_class(stream, one_worker, 1)
    monkeypatch.setattr(kept, "DISK_SHARE", 1e-15)  # more than that share of the free space: not kept
    for index in range(3):
        assert list(kept()) == passes[index]
    assert started == [0, 1, 2] and kept.files == {}

    stream, started = stream_of(passes)
    workers = Workers([(0.0, 0.0), (0.0, 1.0), (0.0, 1.0)])  # the other worker's disk filled in pass 0
    kept = kept_class(stream, workers, 2)
    for index in range(3):
        assert list(kept()) == passes[index]
    assert workers.votes == [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]  # it kept pass 0, then stopped with the other
    assert kept.files == {}

    class FullDisk:
        def write(self, data):
            raise OSError(errno.ENOSPC, "No space left on device")

        def close(self):
            pass

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tempfile, "TemporaryFile", FullDisk)
        kept = kept_class(stream_of(passes)[0], one_worker, 1)
        assert list(kept()) == passes[0] and kept.stopped and kept.files == {}

    monkeypatch.setattr(tempfile, "tempdir", "/nonexistent/temporary")  # no temporary directory: no room at all
    kept = kept_class(stream_of(passes)[0], one_worker, 1)
    assert list(kept()) == passes[0] and kept.stopped and kept.files == {}


def test_a_temporary_directory_in_memory_keeps_nothing(write_spec, monkeypatch):
    """A tmpfs /tmp (a container's, Kubernetes' memory emptyDir) is memory: keeping the batches there would grow the
    run's memory with the data set, so the worker streams. /dev/shm is one on Linux."""
    script = script_of(write_spec, spec_text(PARQUET))
    assert script.file_system_type("/dev/shm") == "tmpfs" and script.file_system_type("/dev/shm/a/b") == "tmpfs"
    assert script.file_system_type("/proc/self") == "proc"
    monkeypatch.setattr(tempfile, "tempdir", "/dev/shm")
    passes = [batches_of(0)]
    kept = script.ValidationOnDisk(stream_of(passes)[0], one_worker, 1)
    assert list(kept()) == passes[0] and kept.stopped and kept.files == {}


def test_values_that_are_python_objects_are_not_kept(kept_class):
    texts = [{"x": np.zeros((2, 1), np.float32), "y": np.array(["a", None], dtype=object)}]
    stream, started = stream_of([texts])
    kept = kept_class(stream, one_worker, 1)
    for _ in range(2):
        assert list(kept()) == texts
    assert started == [0, 1]


def test_only_torch_scripts_whose_files_stream_keep_their_validation(write_spec):
    torch_files = source_of(write_spec, spec_text(PARQUET))
    assert "kept = ValidationOnDisk(" in torch_files and "import shutil" in torch_files
    assert "ValidationOnDisk" not in source_of(write_spec, spec_text(PARQUET, "tensorflow"))
    data_loaders = spec_text("{type: image_folder, path: images, image_size: [6, 5], loader: torch_dataloader}")
    assert "ValidationOnDisk" not in source_of(write_spec, data_loaders)
    in_memory = "{type: digits, loader: ray_data}"
    assert "ValidationOnDisk" not in source_of(write_spec, spec_text(in_memory))


def test_a_lean_torch_scripts_validation_batches_come_back_as_tensors(write_spec):
    torch = pytest.importorskip("torch")
    lean = spec_text(PARQUET).replace("num_workers: 2", "num_workers: 1") + LEAN
    script = script_of(write_spec, lean)
    shard = TableShard([100, 50])
    config = {"dataset": {**script.CONFIG["dataset"]}, "training": {"max_batches": None}}
    _, val = script.make_loaders(config, shard, shard, "cpu")
    first, again = list(val()), list(val())
    assert [len(y) for _, y in first] == [64, 64, 22]
    for (x, y), (x_again, y_again) in zip(first, again, strict=True):
        assert isinstance(x_again, torch.Tensor) and x_again.dtype == torch.float32
        assert torch.equal(x, x_again) and torch.equal(y, y_again)
    assert torch.cat([y for _, y in again]).reshape(-1).tolist() == list(range(150))
