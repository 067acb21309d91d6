"""What sharing the CPUs alone costs the training, on this machine (issue 19).

On 2 cores a streamed run's Train workers share them with Ray Data's tasks, its split coordinator and Ray's own
processes, where the in-memory run's have them to themselves. Their torch compute took 43% more CPU when they
streamed; that was their page faults (keep_freed_memory; bench/data_scale.py counts them), not the sharing, and this
shows it: the in-memory image run of data_scale.py (the same model, spec, data and Ray settings), alone, then beside
SPINNERS processes that spin a Python loop (no memory traffic, no I/O) from before Ray starts until the run ends,
then alone again. It prints each run's rows/s and the Train workers' CPU a row, and what the neighbours cost the
workers beside the mean of the two runs alone (measured: +2%).

    .venv/bin/python bench/cpu_sharing.py            # about 2 minutes
    .venv/bin/python bench/cpu_sharing.py --image-model heavy
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import data_scale

SPIN = "while True:\n    pass\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--images", type=int, default=16_000, help="images of the in-memory slice")
    parser.add_argument("--spinners", type=int, default=1, help="processes spinning beside the second run")
    parser.add_argument("--image-model", choices=list(data_scale.IMAGE_MODELS), default="light")
    parser.add_argument("--store-mb", type=int, default=256, help="Ray's object store, MiB")
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "specc-bench-sharing")
    args = parser.parse_args(argv)
    workdir = args.workdir.resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "bench_data.py").write_text(data_scale.IN_MEMORY, encoding="utf-8")
    data_scale.write_images(workdir / "images", args.images)
    dataset = f"{{{data_scale.images_in_memory(workdir, args.images)}, batch_size: 64}}"
    text = data_scale.IMAGE_SPEC.format(
        name="{name}",
        model=data_scale.IMAGE_MODELS[args.image_model],
        dataset=dataset,
        scaling=data_scale.SCALING.format(workers=2, cpus=0.5),
        epochs=data_scale.IN_MEMORY_EPOCHS,
    )
    rows = int(args.images * 0.8)
    results = []
    try:
        for name, spinners in (("alone-in-memory", 0), ("beside-in-memory", args.spinners), ("again-in-memory", 0)):
            spinning = [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(spinners)]
            try:
                result = data_scale.run(workdir, name, text.replace("{name}", name), args.store_mb, rows)
            finally:
                for process in spinning:
                    process.kill()
                    process.wait()
            workers = result["cpu_s"].get("workers", 0.0) / rows * 1e6
            results.append((name, spinners, result["rows_per_s"], workers))
            rate = result["rows_per_s"]
            print(f"{name:<18} {spinners} spinning  {rate:>8,.0f} rows/s  workers {workers:6.1f} µs a row", flush=True)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    alone = (results[0][3] + results[2][3]) / 2
    beside = results[1][3]
    print(
        f"\nthe workers' CPU a row beside {args.spinners} spinning: {beside:.1f} µs against {alone:.1f} alone "
        f"(the mean of two runs): {beside / alone - 1:+.0%}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
