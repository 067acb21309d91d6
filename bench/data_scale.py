"""Bounded memory, measured (issue 19): training streams data sets larger than Ray's object store.

One epoch's rows/s and the peak memory of all the run's Ray processes together, for:

- tables: a generated parquet directory at two sizes (default 1 GB and 2 GB of float32 rows, 4x and 8x the
  256 MiB object store the run's Ray is given), streamed with Ray Data (specc's `type: parquet`);
- images: a folder of generated PNGs (default 20,000, 32x32 RGB, one directory per class), streamed with
  Ray Data (specc's `type: image_folder`, loader ray_data: its ImageBlocks datasource);
- beside each, the same model on a slice that fits in memory: the slice's rows (images) as NumPy arrays from a
  `type: custom` data set, batched from memory (specc's in-memory path), with the same workers and object store;
  it runs before the streams and again after them, and the streams are measured against the mean of the two.

Each run is the compiled script in a fresh process with a Ray of its own (`RAY_TMPDIR` in the work directory, the
object store sized by `RAY_DEFAULT_OBJECT_STORE_MEMORY_PROPORTION`). Every stream trains 3 epochs, the in-memory
baselines IN_MEMORY_EPOCHS and the model-memory runs MODEL_MEMORY_EPOCHS; the figure is the third epoch (from the
second epoch's progress line to the third's; the baselines' the mean of epochs 2-5): start-up, the driver's pass
over the rows and the preprocessing fit are not in it, nor is the memory sampling, which stops as the timed epochs
begin (it cost a stream 15% of its rows/s, 60.7 s an epoch of 1 GB against 53.0; a baseline 8%): a stream's memory
is sampled over its first two epochs. Memory: every 2 s the proportional set size (PSS: shared
pages, such as the object store's, counted once) of the script's process and all its descendants (raylet, GCS,
dashboard, Ray Data tasks, Train workers), summed; the peak is the largest sum, printed with when it was and what
made it up, beside what Ray spilled from the object store to disk (the raylet's log). "Model memory" is the peak of
the streaming pipeline on a tiny data set (20,000 rows, 500 images) over MODEL_MEMORY_EPOCHS epochs: Ray's, its data
tasks' and the workers' own footprint at their working size, which no data set's size changes. CPU: the core-seconds
each kind of process spent in that epoch (from /proc, as each epoch's progress line arrives): the Train workers, Ray
Data's tasks, its split coordinator, and Ray's own processes with the driver; what the workers spent beside the
in-memory run's is the training, the rest is the data path.

    .venv/bin/python bench/data_scale.py                       # 1 GB, 2 GB, 20,000 images: about 27 min
    .venv/bin/python bench/data_scale.py --sizes 0.25 --images 4000 --store-mb 96   # a quick look, ~7 min

Goals: peak memory < 2 x object store + model memory at both sizes (independent of the data set's size);
streaming rows/s >= 0.8 x the in-memory run's.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SPECC = [sys.executable, "-m", "specc"]
WIDTH = 64  # float32 features per row (+ a float32 target): 260 bytes a row
BATCH = 1024
IMAGE_SIDE = 32
SAMPLE_S = 2.0  # memory sampling interval: peaks in a streaming epoch last longer than this
EPOCHS = 3  # the figures are the third epoch's: the first two are the memory's (epochs_of)
# The in-memory baselines' epochs are short (the heavy model's 16-20 s) and varied by up to 25% from run to run
# (9,871-12,516 rows/s): their figure is the mean of epochs 2-5
IN_MEMORY_EPOCHS = 5
# ... and the light model's varied by 19% between two runs of the same code on the same day (72,603 and 58,970 rows/s,
# 2026-11-29): each baseline runs twice, before the streams and again after them, and a stream is measured against
# the mean of the two
# The model-memory runs train this long (about a minute): their workers grow for tens of seconds before they reach
# their working size (heavy MLP, smaps: 645 MiB a worker after 2 epochs of 2 s, 665-685 from 30 s on, as in an
# epoch over 0.25 GB), and a bound taken from 2 epochs of 2 s leaves that growth to count against the data set.
MODEL_MEMORY_EPOCHS = 20
# light: about 6 µs of a core per row to train, as cheap as the data path (data-bound); heavy: about 60 µs
TABLE_MODELS = {
    "light": "{type: mlp, hidden_sizes: [256, 256]}",
    "heavy": "{type: mlp, hidden_sizes: [1024, 1024, 512]}",
}
# light: about 0.17 ms of a core an image to train, less than its decoding and passage through Ray (data-bound);
# heavy: a CNN of the size users train on 32x32 images
IMAGE_MODELS = {
    "light": "{type: cnn, channels: [16, 32], hidden_sizes: [64]}",
    "heavy": "{type: cnn, channels: [32, 64, 128], hidden_sizes: [256]}",
}
# 2 workers at 0.5 CPU: one CPU left for Ray Data's tasks (--workers/--worker-cpus change it)
SCALING = "{{num_workers: {workers}, resources_per_worker: {{CPU: {cpus:g}}}}}"

TABLE_SPEC = """\
specc: 1
name: {name}
framework: torch
model: {model}
dataset: {dataset}
training: {{epochs: {epochs}, loss: mse, optimizer: {{type: adam, lr: 0.001}}, metrics: [mae], checkpoint_every: never}}
scaling: {scaling}
run: {{max_failures: 0, callbacks: []}}
"""
IMAGE_SPEC = """\
specc: 1
name: {name}
framework: torch
model: {model}
dataset: {dataset}
training: {{epochs: {epochs}, optimizer: {{type: adam, lr: 0.001}}, metrics: [accuracy], checkpoint_every: never}}
scaling: {scaling}
run: {{max_failures: 0, callbacks: []}}
"""
IN_MEMORY = '''\
"""The bench's in-memory baseline: a slice of the generated data as NumPy arrays (specc's custom data set)."""
import os

import numpy as np


def table(path, rows):
    import pyarrow.parquet as pq

    files = sorted(os.path.join(path, name) for name in os.listdir(path) if name.endswith(".parquet"))
    frame = pq.read_table(files[0]).slice(0, rows).to_pandas()
    x, y = frame.drop(columns="y").to_numpy(np.float32), frame["y"].to_numpy(np.float32).reshape(-1, 1)
    cut = int(len(x) * 0.8)
    return (x[:cut], y[:cut]), (x[cut:], y[cut:])


def images(path, count):
    from PIL import Image

    pairs = []
    for label, name in enumerate(sorted(os.listdir(path))):
        pairs += [(os.path.join(path, name, file), label) for file in sorted(os.listdir(os.path.join(path, name)))]
    pairs = [pairs[i] for i in np.random.default_rng(0).permutation(len(pairs))[:count]]
    x = np.stack([np.asarray(Image.open(file).convert("RGB"), np.float32) for file, _ in pairs]) / 255
    # channels first, as torch's convolutions take them, as a view: NumPy's indexing keeps its layout, so the batches
    # are channels_last in memory, as the streamed ones are (plain strides cost this CNN about 1.6x the CPU an image)
    x = x.transpose(0, 3, 1, 2)
    y = np.array([label for _, label in pairs], np.int64)
    cut = int(len(x) * 0.8)
    return (x[:cut], y[:cut]), (x[cut:], y[cut:])
'''


def write_table(directory: Path, gigabytes: float) -> int:
    """Parquet files of `gigabytes` of float32 rows (a linear target with noise); returns the row count."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = int(gigabytes * 1e9 / ((WIDTH + 1) * 4))
    per_file = 250_000
    marker = directory.with_name(directory.name + ".rows")  # beside it: Ray Data reads every file inside
    if marker.exists():
        return int(marker.read_text())
    directory.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    weights = rng.normal(size=WIDTH).astype(np.float32) / np.sqrt(WIDTH)
    for index, start in enumerate(range(0, rows, per_file)):
        n = min(per_file, rows - start)
        x = rng.standard_normal((n, WIDTH), dtype=np.float32)
        y = x @ weights + 0.1 * rng.standard_normal(n, dtype=np.float32)
        table = pa.table({**{f"f{i}": x[:, i] for i in range(WIDTH)}, "y": y})
        pq.write_table(table, directory / f"part-{index:04d}.parquet", compression="none")
    marker.write_text(str(rows))
    return rows


def write_images(directory: Path, count: int) -> int:
    """`count` 32x32 RGB PNGs in 10 class directories: a class's colour plus noise."""
    from PIL import Image

    marker = directory.with_name(directory.name + ".count")  # beside it: the folder's listing reads every file inside
    if marker.exists() and int(marker.read_text()) == count:
        return count
    shutil.rmtree(directory, ignore_errors=True)
    rng = np.random.default_rng(0)
    colours = rng.integers(0, 256, (10, 3))
    for index in range(count):
        label = index % 10
        pixels = np.clip(colours[label] + rng.normal(0, 40, (IMAGE_SIDE, IMAGE_SIDE, 3)), 0, 255).astype(np.uint8)
        (directory / str(label)).mkdir(parents=True, exist_ok=True)
        Image.fromarray(pixels).save(directory / str(label) / f"{index:06d}.png")
    marker.write_text(str(count))
    return count


def family(root: int) -> list[int]:
    """`root` and all its descendants, from /proc (Linux)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parent = int(stat[stat.rindex(")") + 2 :].split()[1])
            children.setdefault(parent, []).append(int(entry))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo += children.get(pid, [])
    return found


def pss(pid: int) -> int:
    """A process's proportional set size in bytes (shared pages split among their users), or 0 once it is gone."""
    try:
        for row in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if row.startswith("Pss:"):
                return int(row.split()[1]) * 1024
    except OSError:
        pass
    return 0


def process_name(pid: int) -> str:
    """What a process is: Ray's title for its workers (ray::RayTrainWorker, ray::IDLE, ...), else its program."""
    try:
        words = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return "?"
    first = words[0].decode(errors="replace")
    if first.startswith("ray::"):
        return first.split()[0]
    program = next((word.decode(errors="replace") for word in words[1:2] if word.endswith(b".py")), first)
    return os.path.basename(program)


TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float | None:
    """The CPU time (user + system) a process has used so far, or None once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / TICK


def page_faults(pid: int) -> int | None:
    """The minor page faults a process has taken so far (pages the kernel gave it as it first touched them), or None
    once it is gone."""
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[7])
    except OSError:
        return None


def role(name: str) -> str:
    """Who a process works for, by its title: the training, Ray Data, or Ray itself (and the driver)."""
    if name.startswith("ray::RayTrainWorker"):
        return "workers"
    if "SplitCoordinator" in name:
        return "split coordinator"
    if name.startswith("ray::") and any(word in name for word in ("IDLE", "Read", "Map", "Footer", "ListFiles")):
        return "data tasks"
    return "Ray and the driver"


def cpu_by_process(root: int) -> dict[int, tuple[str, float]]:
    """Each live process of the run: (its title, its CPU seconds so far)."""
    found = {}
    for pid in family(root):
        seconds = cpu_seconds(pid)
        if seconds is not None:
            found[pid] = (process_name(pid), seconds)
    return found


class PeakMemory(threading.Thread):
    """The largest sum of PSS over a process and its descendants, sampled every SAMPLE_S seconds, and what made it up.

    Reading a process's PSS makes the kernel walk its pages (system time, charged to the reader): sampling every 0.5 s
    took most of a core from the training it measures. `cpu_s` is what the sampling cost."""

    def __init__(self, pid: int):
        super().__init__(daemon=True)
        self.root, self.peak, self.done, self.parts, self.cpu_s = pid, 0, threading.Event(), {}, 0.0
        self.peak_at = time.monotonic()
        self.paused = threading.Event()  # set: no more samples (the timed epochs run unperturbed)

    def run(self):
        while not self.done.wait(SAMPLE_S) and not self.paused.is_set():
            started = time.thread_time()
            self.sample()
            self.cpu_s += time.thread_time() - started

    def sample(self):
        sizes = {pid: pss(pid) for pid in family(self.root)}
        if sum(sizes.values()) > self.peak:
            self.peak, self.parts, self.peak_at = sum(sizes.values()), {}, time.monotonic()
            for pid, size in sizes.items():
                name = process_name(pid)
                self.parts[name] = self.parts.get(name, 0) + size


def run(workdir: Path, name: str, spec_text: str, store_mb: int, rows: int) -> dict:
    """Compiles and runs one spec in a fresh process with a Ray of its own; rows/s of its timed epochs."""
    run_root = workdir / "runs" / name
    shutil.rmtree(run_root, ignore_errors=True)
    run_root.mkdir(parents=True)
    spec = workdir / f"{name}.yaml"
    spec.write_text(spec_text, encoding="utf-8")
    script = workdir / f"{name}.py"
    compiled = subprocess.run(
        [*SPECC, "compile", str(spec), "-o", str(script)], capture_output=True, text=True, cwd=workdir
    )
    if compiled.returncode:
        sys.exit(f"{name} does not compile:\n{compiled.stdout}{compiled.stderr}")
    from ray._private.utils import estimate_available_memory

    ray_dir = Path(tempfile.mkdtemp(prefix="rb", dir="/tmp"))  # short: Ray's socket paths have a length limit
    env = {
        **os.environ,
        "RAY_ADDRESS": "local",
        "RAY_TMPDIR": str(ray_dir),
        "RAY_DEFAULT_OBJECT_STORE_MEMORY_PROPORTION": str(store_mb * 2**20 / estimate_available_memory()),
        "PYTHONUNBUFFERED": "1",
    }
    command = [sys.executable, str(script), "--storage-path", str(run_root)]
    process = subprocess.Popen(
        command, cwd=workdir, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    memory = PeakMemory(process.pid)
    memory.start()
    _, first, last = epochs_of(name)
    started, epochs, output, seen = time.monotonic(), [], [], 0
    cpu = []  # each process's CPU seconds as each timed epoch ended
    faults = []  # the Train workers' page faults then
    for line in process.stdout:
        output.append(line)
        if re.search(rf"{re.escape(name)}: epoch \d+/\d+ ", line):
            seen += 1
            if seen == first and not name.endswith("model-memory"):  # a model-memory run is all memory
                memory.paused.set()
            if first <= seen <= last:
                epochs.append(time.monotonic())
                cpu.append(cpu_by_process(process.pid))
                workers = [pid for pid, (title, _) in cpu[-1].items() if role(title) == "workers"]
                faults.append({pid: page_faults(pid) for pid in workers})
    timed = last - first + 1
    process.wait()
    memory.done.set()
    memory.join()
    wall = time.monotonic() - started
    raylet = (ray_dir / "ray/session_latest/logs/raylet.out").read_text(errors="replace")
    shutil.rmtree(ray_dir, ignore_errors=True)
    if process.returncode or len(epochs) != timed:
        sys.exit(f"{name} failed ({process.returncode}):\n{''.join(output[-40:])}")
    store = float(re.search(r"InitialConfigResources: \{[^}]*object_store_memory: ([0-9.e+]+)", raylet)[1])
    best = json.loads((run_root / name / "best.json").read_text())
    return {
        "name": name,
        "rows_per_s": rows * (timed - 1) / (epochs[-1] - epochs[0]),
        "epoch_s": (epochs[-1] - epochs[0]) / (timed - 1),
        "wall_s": wall,
        "peak_mb": memory.peak / 2**20,
        "peak_s": memory.peak_at - started,  # when, beside the timed epochs' ends
        "epochs_end_s": [at - started for at in epochs],
        "sampling_cpu_s": memory.cpu_s,
        "store_mb": store / 2**20,
        "spilled_mb": max((int(mib) for mib in re.findall(r"Spilled (\d+) MiB", raylet)), default=0),  # in all
        "metrics": best.get("metrics", {}),
        "cpu_s": {part: seconds / (timed - 1) for part, seconds in epoch_cpu(cpu[0], cpu[-1]).items()},
        "worker_faults_per_row": sum(
            faults[-1][pid] - count for pid, count in faults[0].items() if None not in (count, faults[-1].get(pid))
        )
        / (rows * (timed - 1)),
        "peak_parts_mb": {
            name: round(size / 2**20) for name, size in sorted(memory.parts.items(), key=lambda item: -item[1])
        },
    }


def epoch_cpu(before: dict, after: dict) -> dict[str, float]:
    """CPU seconds spent between two snapshots, by role (a process started in between counts from zero; one that
    ended in between is missed: Ray Data's tasks run in long-lived workers)."""
    spent: dict[str, float] = {}
    for pid, (name, seconds) in after.items():
        part = role(name if name != "?" else before.get(pid, ("?", 0))[0])
        spent[part] = spent.get(part, 0.0) + seconds - before.get(pid, (name, 0.0))[1]
    return dict(sorted(spent.items(), key=lambda item: -item[1]))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=float, nargs="+", default=[1.0, 2.0], help="parquet sizes in GB")
    parser.add_argument("--images", type=int, default=20_000, help="PNG files in the image folder")
    parser.add_argument("--store-mb", type=int, default=256, help="Ray's object store, MiB")
    parser.add_argument("--slice-rows", type=int, default=250_000, help="rows of the in-memory baseline")
    parser.add_argument("--slice-images", type=int, default=16_000, help="images of the in-memory baseline")
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "specc-bench-data")
    parser.add_argument("--keep", action="store_true", help="keep the generated data in --workdir for next time")
    parser.add_argument("--only", choices=["tables", "images"], help="run one half")
    parser.add_argument("--model", choices=list(TABLE_MODELS), default="light", help="the tables' model")
    parser.add_argument("--image-model", choices=list(IMAGE_MODELS), default="light", help="the images' model")
    parser.add_argument("--workers", type=int, default=2, help="Train workers of every run")
    parser.add_argument("--worker-cpus", type=float, default=0.5, help="CPUs each worker reserves")
    args = parser.parse_args(argv)
    scaling = SCALING.format(workers=args.workers, cpus=args.worker_cpus)
    workdir = args.workdir.resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "bench_data.py").write_text(IN_MEMORY, encoding="utf-8")
    results = []
    try:
        for name, dataset, rows in table_runs(workdir, args) if args.only != "images" else []:
            text = TABLE_SPEC.format(
                name=name, model=TABLE_MODELS[args.model], dataset=dataset, scaling=scaling, epochs=epochs_of(name)[0]
            )
            results.append(run(workdir, name, text, args.store_mb, rows))
            print(line(results[-1]), flush=True)
        for name, dataset, count in image_runs(workdir, args) if args.only != "tables" else []:
            text = IMAGE_SPEC.format(
                name=name,
                model=IMAGE_MODELS[args.image_model],
                dataset=dataset,
                scaling=scaling,
                epochs=epochs_of(name)[0],
            )
            results.append(run(workdir, name, text, args.store_mb, count))
            print(line(results[-1]), flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    print(summary(results, args))
    return 0


def epochs_of(name: str) -> tuple[int, int, int]:
    """(the epochs a run trains, and the two whose progress lines its figures are timed between: rows/s and CPU are
    the mean of the epochs after the first of the two, up to the second). Memory is sampled until the first of them
    (a model-memory run's all through)."""
    if name.endswith("model-memory"):
        return MODEL_MEMORY_EPOCHS, 1, 2
    if name.endswith("in-memory"):
        return IN_MEMORY_EPOCHS, 1, IN_MEMORY_EPOCHS
    return EPOCHS, EPOCHS - 1, EPOCHS


def table_runs(workdir: Path, args) -> list[tuple[str, str, int]]:
    """(run name, dataset section, training rows): the model-memory run (the streaming pipeline on 20,000 rows),
    the in-memory slice, and each size streamed. The training split of a stream is about 80% of its rows."""
    tables = {size: write_table(workdir / f"table-{size:g}GB", size) for size in [*args.sizes, 0.0052]}
    first = workdir / f"table-{args.sizes[0]:g}GB"
    options = f"label: y, task: regression, batch_size: {BATCH}"
    in_memory = f'type: custom, factory: "bench_data:table", kwargs: {{path: "{first}", rows: {args.slice_rows}}}'
    runs = [
        (
            "table-model-memory",
            f"{{type: parquet, path: {workdir}/table-0.0052GB, {options}}}",
            int(tables[0.0052] * 0.8),
        ),
        ("table-in-memory", f"{{{in_memory}, task: regression, batch_size: {BATCH}}}", int(args.slice_rows * 0.8)),
    ]
    for size in args.sizes:
        stream = f"{{type: parquet, path: {workdir}/table-{size:g}GB, {options}}}"
        runs.append((f"table-stream-{label(size)}", stream, int(tables[size] * 0.8)))
    return [*runs, ("table-again-in-memory", *runs[1][1:])]  # the baseline again, after the streams


def image_runs(workdir: Path, args) -> list[tuple[str, str, int]]:
    """The same for images: the streaming pipeline on 500 images, the in-memory slice, the whole folder streamed
    through Ray Data (loader: ray_data), and decoded by each worker's DataLoader (loader: torch_dataloader)."""
    write_images(workdir / "images", args.images)
    write_images(workdir / "images-tiny", 500)
    folder = f"image_size: [{IMAGE_SIDE}, {IMAGE_SIDE}], batch_size: 64"
    in_memory = images_in_memory(workdir, args.slice_images)
    return [
        ("images-model-memory", f"{{type: image_folder, path: {workdir}/images-tiny, {folder}}}", 400),
        ("images-in-memory", f"{{{in_memory}, batch_size: 64}}", int(min(args.slice_images, args.images) * 0.8)),
        ("images-stream", f"{{type: image_folder, path: {workdir}/images, {folder}}}", int(args.images * 0.8)),
        (
            "images-stream-dataloader",
            f"{{type: image_folder, path: {workdir}/images, {folder}, loader: torch_dataloader}}",
            int(args.images * 0.8),
        ),
        ("images-again-in-memory", f"{{{in_memory}, batch_size: 64}}", int(min(args.slice_images, args.images) * 0.8)),
    ]


def images_in_memory(workdir: Path, count: int) -> str:
    """The dataset section (without its batch size) of `count` images of workdir/images as NumPy arrays (bench_data)."""
    return f'type: custom, factory: "bench_data:images", kwargs: {{path: "{workdir}/images", count: {count}}}'


def label(gigabytes: float) -> str:
    """A size as a run name may hold it: 0.25 -> 0p25gb."""
    return f"{gigabytes:g}".replace(".", "p") + "gb"


def line(result: dict) -> str:
    cpu = ", ".join(f"{name} {seconds:.1f}" for name, seconds in result["cpu_s"].items())
    parts = ", ".join(f"{name} {size}" for name, size in list(result["peak_parts_mb"].items())[:6])
    return (
        f"{result['name']:<24} {result['rows_per_s']:>10,.0f} rows/s  epoch {result['epoch_s']:6.1f} s  "
        f"wall {result['wall_s']:6.1f} s  peak {result['peak_mb']:7,.0f} MiB  store {result['store_mb']:.0f} MiB  "
        f"spilled {result['spilled_mb']:,} MiB  "
        f"(sampling took {result['sampling_cpu_s']:.1f} s of CPU)"
        f"\n{'':<26}at the peak, {result['peak_s']:.0f} s in (the timed epochs began and ended at "
        f"{' and '.join(f'{at:.0f}' for at in result['epochs_end_s'])} s), MiB: {parts}"
        f"\n{'':<26}CPU a timed epoch (core-seconds of {os.cpu_count() * result['epoch_s']:.0f}): {cpu}; "
        f"the workers' page faults a row {result['worker_faults_per_row']:.2f}"
    )


def summary(results: list[dict], args) -> str:
    by = {result["name"]: result for result in results}
    lines = ["", "goals:"]
    kinds = {
        "table": [f"table-stream-{label(size)}" for size in args.sizes],
        "images": ["images-stream", "images-stream-dataloader"],
    }
    for kind, streams in kinds.items():
        if f"{kind}-in-memory" not in by:
            continue
        baseline, fixed = by[f"{kind}-in-memory"], by[f"{kind}-model-memory"]
        rates = [by[name]["rows_per_s"] for name in (f"{kind}-in-memory", f"{kind}-again-in-memory") if name in by]
        rate = sum(rates) / len(rates)
        lines.append(f"  {kind} in memory: {' and '.join(f'{r:,.0f}' for r in rates)} rows/s, the mean {rate:,.0f}")
        for name in filter(by.__contains__, streams):
            result = by[name]
            bound = 2 * result["store_mb"] + fixed["peak_mb"]
            ratio = result["rows_per_s"] / rate
            lines.append(
                f"  {name}: peak {result['peak_mb']:,.0f} MiB vs 2 x store + model memory = {bound:,.0f} MiB "
                f"({'met' if result['peak_mb'] < bound else 'MISSED'}); throughput {ratio:.2f}x in-memory "
                f"({'met' if ratio >= 0.8 else 'MISSED'})"
            )
            (work, busy), (base_work, base_busy) = cpu_use(result), cpu_use(baseline)
            lines.append(
                f"    = against its first in-memory run, CPU a row {base_work:.1f} µs in memory / {work:.1f} µs "
                f"streamed ({base_work / work:.2f}) x the cores kept busy, {busy:.0%} streamed / {base_busy:.0%} "
                f"in memory ({busy / base_busy:.2f})"
            )
    return "\n".join(lines)


def cpu_use(result: dict) -> tuple[float, float]:
    """A run's CPU a row in its timed epochs (µs: every process of the run, the data path's and the training's) and
    the share of the machine's cores it kept busy. A stream's throughput against the in-memory run's is the product
    of the two ratios: the work a row costs (what the data path adds to the training) and the cores it kept busy."""
    seconds = sum(result["cpu_s"].values())
    rows = result["rows_per_s"] * result["epoch_s"]
    return seconds / rows * 1e6, seconds / (os.cpu_count() * result["epoch_s"])


if __name__ == "__main__":
    sys.exit(main())
