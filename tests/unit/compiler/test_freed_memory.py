"""keep_freed_memory: a worker that iterates Ray Data (or decodes an image folder's files) keeps the memory its
training steps free for the steps after, instead of giving it back to the kernel and faulting it in anew (glibc
malloc's thresholds). Run from the compiled script in a process of its own; bench/data_scale.py counts the Train
workers' page faults in a real run."""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest

from tests.unit.compiler.test_streaming_data import spec_text
from tests.unit.compiler.test_tensorflow_script import source_of

PARQUET = "{type: parquet, path: rows, label: y, task: regression, batch_size: 64}"
IMAGES = "{type: image_folder, path: images, image_size: [8, 8]}"
IMAGE_FILES = "{type: image_folder, path: images, image_size: [8, 8], loader: torch_dataloader}"
LEAN = "tune: {metric: val_loss, mode: min, space: {training.seed: {grid: [0]}}}\n"
RAY_DATA_CASES = [(PARQUET, ""), (IMAGES, ""), (PARQUET, LEAN)]  # (dataset, search)

# A training step as the workers' ran: many blocks of a MiB or so (activations), touched, then all freed at once
STEPS = """
import ctypes
import resource
import sys

import numpy as np

{keep}


def step():
    blocks = [np.ones(1 << 17) for _ in range(40)]  # 40 blocks of 1 MiB (float64), every page written
    del blocks


if sys.argv[1] == "keep":
    keep_freed_memory()
step()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(20):
    step()
print((resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 20)
"""


def function(source: str, name: str) -> str:
    """The compiled script's top-level function `name`, as its source has it."""
    start = source.index(f"\ndef {name}(") + 1
    end = source.find("\n\n\n", start)
    return source[start : end if end >= 0 else len(source)]


def faults_a_step(keep_source: str, keep: bool) -> float:
    program = STEPS.format(keep=keep_source)
    done = subprocess.run(
        [sys.executable, "-c", program, "keep" if keep else "as-is"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return float(done.stdout)


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="the thresholds are glibc malloc's")
def test_a_worker_keeps_what_its_steps_free_instead_of_faulting_it_in_again(write_spec):
    """Each step's 40 MiB would go back to the kernel as it is freed (a heap gives back what lies free beyond twice
    its largest block) and be faulted in anew the next step, 10,240 pages; kept, the steps fault in none."""
    source = function(source_of(write_spec, spec_text(PARQUET)), "keep_freed_memory")
    assert faults_a_step(source, keep=False) > 5_000  # glibc as it is: the pattern the workers' steps hit
    assert faults_a_step(source, keep=True) < 100


@pytest.mark.parametrize(
    ("framework", "dataset", "search"),
    [
        *((framework, *case) for framework in ("torch", "tensorflow") for case in RAY_DATA_CASES),
        ("torch", IMAGE_FILES, ""),  # DataLoaders are torch's
        ("torch", IMAGE_FILES, LEAN),
    ],
)
def test_every_process_that_trains_on_new_batches_keeps_its_freed_memory(write_spec, framework, dataset, search):
    """Train's workers and a search's trials in one process alike, each as it starts training, where the batches are
    new each step: Ray Data's, or an image folder's that DataLoaders decode (bench/data_scale.py: 9.1 page faults an
    image left as it was, 0.01 kept); scripts whose data sets are arrays in memory leave malloc as it is."""
    if framework == "tensorflow" and dataset == IMAGES:
        dataset = dataset.replace("}", ", channels: 3}")
    text = spec_text(dataset, framework) + search
    if search:
        text = text.replace("num_workers: 2", "num_workers: 1")
    source = source_of(write_spec, text)
    assert function(source, "train_func").count("keep_freed_memory()") == 1
    in_memory = source_of(write_spec, text.replace(dataset, "{type: digits}"))
    assert "keep_freed_memory" not in in_memory and "import ctypes" not in in_memory
