"""What Ray Train V2's controller poll interval (RAY_TRAIN_HEALTH_CHECK_INTERVAL_S) costs and buys, per value.

The controller polls its worker group every interval, and each worker's result queue holds one report, so a
`ray.train.report` waits up to one interval (the default, 2.0 s, is the floor of every epoch). The same poll is
the health check, so a shorter interval costs CPU in the controller and in every worker it polls. For each
interval this prints:

  report      wall time per `ray.train.report` of 2 workers reporting back to back (the latency an epoch pays)
  idle cores  CPU the controller and its workers burn per second of wall time while the workers sleep, for
              2 workers and for 16 (at 0.1 CPU each, as fractional CPUs let them start on 2 cores)

Each (interval, workers) pair is one fit() of a backend-free DataParallelTrainer (no torch process group) on one
local Ray started for the whole benchmark; CPU comes from /proc/<pid>/stat of the processes whose title names
TrainController or RayTrainWorker, sampled while rank 0 sleeps. Linux only.

Run:  .venv/bin/python bench/report_interval.py [--quick]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import tempfile
import threading
import time
from pathlib import Path

INTERVALS = (2.0, 0.5, 0.2, 0.1, 0.05)
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime + stime


def train_processes() -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                title = (entry / "cmdline").read_bytes().replace(b"\0", b" ")
            except OSError:
                continue
            if b"TrainController" in title or b"RayTrainWorker" in title:
                found.append(int(entry.name))
    return found


def train_func(config):
    import ray.train

    for step in range(config["reports"]):
        if step == 1 and ray.train.get_context().get_world_rank() == 0:
            started = time.time()
        ray.train.report({"step": step})
    if ray.train.get_context().get_world_rank() == 0:
        marks = {"report_s": (time.time() - started) / (config["reports"] - 1), "idle_from": time.time()}
        time.sleep(config["idle_s"])
        marks["idle_to"] = time.time()
        Path(config["marks"]).write_text(json.dumps(marks))
    ray.train.report({"step": config["reports"]})


def measure(interval: float, workers: int, reports: int, idle_s: float, storage: str) -> dict:
    import ray.train
    from ray.train.v2.api.data_parallel_trainer import DataParallelTrainer

    os.environ["RAY_TRAIN_HEALTH_CHECK_INTERVAL_S"] = str(interval)  # Train propagates it to the controller
    marks = os.path.join(storage, f"marks-{interval}-{workers}.json")
    samples: list[tuple[float, float]] = []  # (time, cumulative CPU seconds of the Train processes)
    done = threading.Event()

    def sample():
        seen: dict[int, float] = {}
        while not done.is_set():
            for pid in train_processes():
                with contextlib.suppress(OSError):
                    seen[pid] = cpu_seconds(pid)
            samples.append((time.time(), sum(seen.values())))
            time.sleep(0.2)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    DataParallelTrainer(
        train_func,
        train_loop_config={"reports": reports, "idle_s": idle_s, "marks": marks},
        scaling_config=ray.train.ScalingConfig(num_workers=workers, resources_per_worker={"CPU": 0.1}),
        run_config=ray.train.RunConfig(name=f"interval-{interval}-{workers}", storage_path=storage),
    ).fit()
    done.set()
    sampler.join()
    got = json.loads(Path(marks).read_text())
    # from 2 s into the idle phase: the last workers to start may still be settling before that
    inside = [(t, cpu) for t, cpu in samples if got["idle_from"] + 2.0 <= t <= got["idle_to"]]
    busy = (inside[-1][1] - inside[0][1]) / (inside[-1][0] - inside[0][0]) if len(inside) > 1 else float("nan")
    return {"report_s": got["report_s"], "idle_cores": busy}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer reports, shorter idle phase")
    args = parser.parse_args()
    reports, idle_s = (6, 5.0) if args.quick else (12, 15.0)

    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    try:
        with tempfile.TemporaryDirectory() as storage:
            print(f"{'interval':>9} {'report (2 workers)':>19} {'idle cores, 2 workers':>22} {'idle cores, 16':>15}")
            for interval in INTERVALS:
                two = measure(interval, 2, reports, idle_s, storage)
                many = measure(interval, 16, 3, idle_s, storage)
                print(
                    f"{interval:>8.2f}s {two['report_s'] * 1000:>16.0f} ms {two['idle_cores']:>22.3f}"
                    f" {many['idle_cores']:>15.3f}",
                    flush=True,
                )
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main()
