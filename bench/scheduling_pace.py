"""What Ray Data's split coordinator costs while the training holds the stream back, with and without the
streaming scripts' PacedScheduling (issue 19).

Ray Data 2.60's scheduling loop waits for its tasks only while one of them has no output ready; when slow consumers
hold the pipeline back it spins. This runs the smallest case that shows it, the same way twice, each in a fresh
process with a Ray of its own (2 CPUs, a 256 MiB object store): `streaming_split(2)` of a data set larger than the
store (4 M rows of 10 float64, 320 MB), two consumers (0.5 CPU each) that sleep CONSUME_S per batch as a training step
would take it. Once with Ray's loop as it is, once with the compiled scripts' `PacedScheduling` (taken from
specs/csv_regression.yaml's compiled script) listed in the DataContext, as the scripts list it. Printed: each run's
wall time and the CPU time of the split coordinator (from /proc), and the ratio.

    .venv/bin/python bench/scheduling_pace.py        # about 1.5 minutes
"""

from __future__ import annotations

import argparse
import glob
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ROWS, BLOCKS, COLUMNS = 4_000_000, 80, 10
BATCH = 8192
CONSUME_S = 0.06  # a training step's time per batch: the consumers are slower than the reads


def paced_scheduling():
    """The PacedScheduling class of a compiled streaming script (specs/csv_regression.yaml)."""
    with tempfile.TemporaryDirectory(prefix="specc-pace-") as workdir:
        script = Path(workdir) / "csv_regression.py"
        spec = ROOT / "specs/csv_regression.yaml"
        subprocess.run([sys.executable, "-m", "specc", "compile", str(spec), "-o", str(script)], check=True, cwd=ROOT)
        loader = importlib.util.spec_from_file_location("paced_script", script)
        module = importlib.util.module_from_spec(loader)
        loader.loader.exec_module(module)  # read whole here: the directory may go
    return module.PacedScheduling


def cpu_seconds(pid: str) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def coordinator_pid(timeout_s: float = 120.0) -> str:
    """The split coordinator actor's process: the one whose command line names it."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for path in glob.glob("/proc/[0-9]*/cmdline"):
            try:
                if b"SplitCoordinator" in Path(path).read_bytes():
                    return path.split("/")[2]
            except OSError:
                continue
        time.sleep(0.2)
    raise RuntimeError(f"no split coordinator process appeared within {timeout_s:g} s")


def run(paced: bool) -> dict:
    """One streaming_split pass in this process's own Ray: wall time and the coordinator's CPU time."""
    import numpy as np
    import ray

    ray.init(num_cpus=2, object_store_memory=256 << 20, include_dashboard=False, log_to_driver=False)
    try:
        if paced:
            ray.data.DataContext.get_current().custom_execution_callback_classes = [paced_scheduling()]
        widen = lambda batch: {"x": np.repeat(batch["id"][:, None].astype(np.float64), COLUMNS, axis=1)}  # noqa: E731
        dataset = ray.data.range(ROWS, override_num_blocks=BLOCKS).map_batches(widen)

        @ray.remote(num_cpus=0.5)
        def consume(iterator):
            rows = 0
            for batch in iterator.iter_batches(batch_size=BATCH):
                rows += len(batch["x"])
                time.sleep(CONSUME_S)
            return rows

        start = time.perf_counter()
        rows = [consume.remote(split) for split in dataset.streaming_split(2, equal=True)]
        pid = coordinator_pid()
        assert sum(ray.get(rows)) >= ROWS - 1, "rows lost"
        return {"wall_s": time.perf_counter() - start, "coordinator_cpu_s": cpu_seconds(pid)}
    finally:
        ray.shutdown()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--child", choices=["ray", "paced"], help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(run(args.child == "paced")))
        return 0
    results = {}
    for kind in ("ray", "paced"):
        child = subprocess.run(
            [sys.executable, __file__, "--child", kind], capture_output=True, text=True, check=False, cwd=ROOT
        )
        if child.returncode:
            print(child.stderr[-3000:], file=sys.stderr)
            return child.returncode
        results[kind] = json.loads(child.stdout.strip().splitlines()[-1])
    print(f"{'scheduling loop':28s} {'wall':>8s} {'coordinator CPU':>16s}")
    for kind, label in (("ray", "Ray Data's own"), ("paced", "PacedScheduling")):
        result = results[kind]
        print(f"{label:28s} {result['wall_s']:7.1f}s {result['coordinator_cpu_s']:15.1f}s")
    ratio = results["paced"]["coordinator_cpu_s"] / results["ray"]["coordinator_cpu_s"]
    print(f"\ncoordinator CPU, paced / Ray's own: {ratio:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
