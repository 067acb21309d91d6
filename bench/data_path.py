"""Where a streaming epoch's data time goes (issue 19): each stage of a compiled parquet spec's data path alone.

bench/data_scale.py measures whole training runs; this iterates the same compiled data path in the driver, with no
training, one stage more at a time, so that a change to the data templates can be measured where it acts:

- pyarrow's own single-threaded read of the files (the floor: decoding, no Ray);
- Ray Data's read of the files (`read_rows`);
- the read and the split (`split_rows`, the training side: every row hashed);
- the whole training split as the workers get it (then the preprocessors and `model_inputs`), as NumPy blocks, as
  `iter_torch_batches`, and with the local shuffle buffer the workers use;
- the whole validation split (which reads every row again to find its own);
- the worker's own part: the CPU time of the process that takes the training split's batches, as a Train worker
  does (a `streaming_split` whose coordinator actor runs Ray Data's execution elsewhere), with Ray Data's batches,
  with Ray Data's local shuffle buffer, and with the script's (`shuffled_batches`).

The Ray it starts has 2 CPUs for Ray Data and the object store of data_scale's runs (256 MiB); rows/s is over wall
time, and "µs/row" is the CPUs' time per row read (2 CPUs x wall / rows read), an upper bound of the CPU the data
path costs beside the training.

    .venv/bin/python bench/data_path.py                 # the 1 GB table of bench/data_scale.py (generated if missing)
    .venv/bin/python bench/data_path.py --gigabytes 0.25
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from data_scale import BATCH, SPECC, TABLE_MODELS, TABLE_SPEC, write_table

CPUS = 2


def compiled(workdir: Path, table: Path):
    """The compiled script of data_scale's streaming table spec, imported as a module."""
    spec = workdir / "data-path.yaml"
    dataset = f"{{type: parquet, path: {table}, label: y, task: regression, batch_size: {BATCH}}}"
    scaling = "{num_workers: 2, resources_per_worker: {CPU: 0.5}}"
    text = TABLE_SPEC.format(name="data-path", model=TABLE_MODELS["light"], dataset=dataset, scaling=scaling, epochs=1)
    spec.write_text(text, encoding="utf-8")
    script = workdir / "data-path.py"
    subprocess.run([*SPECC, "compile", str(spec), "-o", str(script)], check=True, capture_output=True, cwd=workdir)
    loader = importlib.util.spec_from_file_location("data_path_script", script)
    module = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(module)
    return module


def timed(name: str, batches, rows_read: int, count=lambda batch: batch.num_rows) -> None:
    start, rows = time.perf_counter(), 0
    for batch in batches:
        rows += count(batch)
    seconds = time.perf_counter() - start
    per_row = CPUS * seconds / rows_read * 1e6
    print(f"{name:48s} {rows:>11,} rows {seconds:7.1f} s {rows / seconds:>11,.0f} rows/s {per_row:7.2f} µs/row read")


def consumers(module, train) -> None:
    """The CPU time this process spends a training row taking its batches as a Train worker takes its shard: what
    each way of batching (and shuffling) costs the worker beside its training. Each pass once untimed first."""
    import torch

    generator = torch.Generator().manual_seed(0)

    def order(rows):
        return torch.randperm(rows, generator=generator)

    ways = {
        "iter_torch_batches": lambda shard: shard.iter_torch_batches(batch_size=BATCH),
        "+ Ray Data's local shuffle buffer": lambda shard: shard.iter_torch_batches(
            batch_size=BATCH, local_shuffle_buffer_size=4 * BATCH
        ),
        "+ the script's shuffled_batches": lambda shard: module.shuffled_batches(
            shard.iter_torch_batches(batch_size=None), BATCH, order, torch.cat
        ),
    }
    for name, batches in ways.items():
        shard = train.streaming_split(1)[0]  # the execution in a coordinator actor, as for Train's workers
        for _ in batches(shard):
            pass
        before, rows = os.times(), 0
        for batch in batches(shard):
            rows += len(batch["x"])
        after = os.times()
        cpu = after.user + after.system - before.user - before.system
        print(f"{name:48s} {rows:>11,} rows {cpu:7.1f} s CPU {cpu / rows * 1e6:7.2f} µs/row")


def examples(batch) -> int:
    return len(batch["x"])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gigabytes", type=float, default=1.0, help="the table's size (data_scale's --sizes)")
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "specc-bench-data")
    parser.add_argument("--store-mb", type=int, default=256, help="Ray's object store, MiB")
    args = parser.parse_args(argv)
    args.workdir.mkdir(parents=True, exist_ok=True)
    table = args.workdir / f"table-{args.gigabytes:g}GB"
    total = write_table(table, args.gigabytes)
    module = compiled(args.workdir, table)

    import pyarrow.parquet as pq
    import ray

    files = sorted(table.glob("*.parquet"))
    for file in files:
        file.read_bytes()  # every stage below reads from the page cache
    start = time.perf_counter()
    read = sum(pq.read_table(file, use_threads=False).num_rows for file in files)
    seconds = time.perf_counter() - start
    print(
        f"{'pyarrow read_table, one thread':48s} {read:>11,} rows {seconds:7.1f} s {read / seconds:>11,.0f} rows/s "
        f"{seconds / read * 1e6:7.2f} µs/row read"
    )

    ray.init(num_cpus=CPUS, object_store_memory=args.store_mb << 20, include_dashboard=False, log_to_driver=False)
    try:
        cfg = module.CONFIG["dataset"]
        for _ in module.read_rows(cfg).iter_batches(batch_format="pyarrow", batch_size=None):
            pass  # untimed: Ray Data's workers start and the files come into the page cache
        read_rows = module.read_rows(cfg).iter_batches(batch_format="pyarrow", batch_size=None)
        timed("Ray Data read (read_rows)", read_rows, total)
        split = module.read_rows(cfg).map_batches(
            module.split_rows, batch_format="pyarrow", fn_kwargs={"cfg": cfg, "validation": False}
        )
        timed("+ split_rows (training side)", split.iter_batches(batch_format="pyarrow", batch_size=None), total)
        start = time.perf_counter()
        datasets, _ = module.make_datasets(cfg, float(CPUS))
        fitting = time.perf_counter() - start
        print(f"(make_datasets: the driver's check pass and the preprocessing fit, {fitting:.1f} s)")
        train, validation = datasets["train"], datasets["validation"]
        blocks = train.iter_batches(batch_format="numpy", batch_size=None)
        timed("training split, NumPy blocks", blocks, total, examples)
        timed("training split, iter_torch_batches", train.iter_torch_batches(batch_size=BATCH), total, examples)
        shuffled = train.iter_torch_batches(batch_size=BATCH, local_shuffle_buffer_size=4 * BATCH)
        timed("training split, + local shuffle buffer", shuffled, total, examples)
        timed("validation split, iter_torch_batches", validation.iter_torch_batches(batch_size=BATCH), total, examples)
        print("\nthe worker's part: this process's CPU a training row, its batches from a streaming_split")
        consumers(module, train)
    finally:
        ray.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
