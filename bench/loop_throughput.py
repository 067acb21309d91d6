"""Samples per second of specc's generated training loop against two hand-written loops, in one run.

(a) the generated loop: a spec compiled by specc and executed into a module namespace (as `specc run`
    does), its own `make_loaders` (its `Batches` dataset in `DataLoader(batch_size=None)`) and its own
    `start_epoch` + `train_one_epoch`
(b) the seeds' pattern: `DataLoader(TensorDataset(x, y), batch_size=B, shuffle=True)` and the seed's
    loop body                                                              goal: (a) / (b) >= 1.5
(c) the limit: a tight hand-written loop, a randperm per epoch and slices of it indexing the tensors,
    with the same mean-loss bookkeeping as (a)                             goal: (a) / (c) >= 0.95

All three train the same model (the generated `build_model`, the same initial weights each run) with the
same optimizer settings and loss on the same in-memory tensors and batch size, in this one process: no
Ray workers, CPU, `torch.set_num_threads(1)` (one intra-op thread, for stable figures on a shared
machine). Ray's `prepare_data_loader` is left out of (a) and (b): in one CPU worker it adds no sampler
(world size 1) but wraps the loader in `_WrappedDataLoader`, whose per-batch `.to("cpu")` walk both
would pay alike under Ray; rows (a') and (b') measure them with that wrapper, for information.

Two workloads: `digits` is specs/digits_mlp.yaml itself (MLP [64], 1,437 training examples, batch 64:
small steps, where per-batch overhead shows most); `synthetic` is the same spec on generated data
(make_classification, 50,000 examples x 64 features, 10 classes) with a bigger MLP [128, 128]: more
arithmetic per batch, so per-batch overhead weighs less.

Run:  .venv/bin/python bench/loop_throughput.py [--quick] [--json] [--workload digits|synthetic]
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import platform
import statistics
import sys
import tempfile
import time
import types
from dataclasses import dataclass, field
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "specs" / "digits_mlp.yaml"
GOAL_SEEDS = 1.5
GOAL_LIMIT = 0.95


@dataclass(frozen=True)
class Settings:
    samples: int  # per timed run, rounded up to whole epochs
    warmups: int  # unmeasured runs of each loop first
    repetitions: int


FULL = Settings(samples=100_000, warmups=2, repetitions=15)
QUICK = Settings(samples=20_000, warmups=1, repetitions=3)


# -- the generated code --------------------------------------------------------------------------
def spec_for(workload: str, directory: Path) -> Path:
    """specs/digits_mlp.yaml, or the same experiment on generated data with a wider MLP."""
    if workload == "digits":
        return SPEC
    spec = yaml.safe_load(SPEC.read_text(encoding="utf-8"))
    spec["name"] = "loop-throughput-synthetic"
    spec["model"]["hidden_sizes"] = [128, 128]
    spec["dataset"] = {
        "type": "synthetic_classification",
        "n_samples": 50_000,
        "n_features": 64,
        "n_classes": 10,
        "noise": 0.01,
        "seed": 0,
        "validation_fraction": 0.2,
        "batch_size": 64,
        "shuffle_seed": 0,
    }
    path = directory / "synthetic_mlp.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    return path


def generated_module(spec: Path) -> types.ModuleType:
    """The compiled script, executed into a fresh module as specc.execute.run does (main() is not called)."""
    from specc import api

    source = api.compile(api.load(spec))
    module = types.ModuleType("specc_loop_throughput")
    module.__file__ = "script.py"
    exec(compile(source, module.__file__, "exec"), module.__dict__)
    return module


def without_ray(module: types.ModuleType, prepare_data_loader) -> None:
    """What make_loaders and start_epoch use of Ray, without a Ray Train session: a world of one worker
    and `prepare_data_loader` as given. Only this module's name `ray` changes, not the ray package."""
    context = types.SimpleNamespace(get_world_size=lambda: 1, get_world_rank=lambda: 0)
    module.ray = types.SimpleNamespace(
        train=types.SimpleNamespace(
            get_context=lambda: context, torch=types.SimpleNamespace(prepare_data_loader=prepare_data_loader)
        )
    )


def pass_through(loader, **_):
    return loader


def ray_cpu_wrapper(loader, add_dist_sampler=True, move_to_device=True, auto_transfer=True):
    """What ray.train.torch.prepare_data_loader returns in a world of one CPU worker: no sampler is
    added (world size 1), the loader is wrapped to move each batch to the device (here, the CPU)."""
    import torch
    from ray.train.torch.train_loop_utils import _WrappedDataLoader

    return _WrappedDataLoader(loader, torch.device("cpu"), auto_transfer) if move_to_device else loader


# -- the loops -----------------------------------------------------------------------------------
def clocks() -> tuple[float, float]:
    """(wall, CPU time of this process): the loops run on one thread, so CPU time is their own work,
    steadier than wall time when other processes share the machine."""
    return time.perf_counter(), time.process_time()


def since(start: tuple[float, float]) -> tuple[float, float]:
    wall, cpu = clocks()
    return wall - start[0], cpu - start[1]


@dataclass
class Workload:
    name: str
    module: types.ModuleType
    config: dict
    x: object  # training tensors, shared by every loop
    y: object
    input_shape: tuple
    num_outputs: int
    batch_size: int
    initial_state: dict = field(default_factory=dict)

    def fresh_model(self):
        model = self.module.build_model(self.config["model"], self.input_shape, self.num_outputs)
        if self.initial_state:
            model.load_state_dict(self.initial_state)
        return model

    def sgd(self, model):
        import torch

        o = self.config["training"]["optimizer"]
        return torch.optim.SGD(
            model.parameters(),
            lr=o["lr"],
            momentum=o["momentum"],
            weight_decay=o["weight_decay"],
            nesterov=o["nesterov"],
        )


def load_workload(name: str, directory: Path) -> Workload:
    import torch

    module = generated_module(spec_for(name, directory))
    without_ray(module, pass_through)
    config = module.CONFIG
    train, _, _, input_shape, num_outputs = module.make_loaders(config, 0, 1)
    torch.manual_seed(config["training"]["seed"])
    workload = Workload(name, module, config, train.x, train.y, tuple(input_shape), num_outputs, train.batch_size)
    workload.initial_state = copy.deepcopy(workload.fresh_model().state_dict())
    return workload


def generated(w: Workload, epochs: int, prepare=pass_through) -> float:
    """(a): the generated make_loaders, start_epoch and train_one_epoch, as train_func calls them."""
    import torch

    without_ray(w.module, prepare)
    train, train_loader, _, _, _ = w.module.make_loaders(w.config, 0, 1)
    model = w.fresh_model()
    optimizer = w.module.make_optimizer(model.parameters(), w.config["training"]["optimizer"])
    loss_fn, training, device = torch.nn.CrossEntropyLoss(), w.config["training"], torch.device("cpu")
    start = clocks()
    for epoch in range(epochs):
        w.module.start_epoch(train, train_loader, epoch)
        w.module.train_one_epoch(model, optimizer, loss_fn, train_loader, training, device)
    return since(start)


def generated_in_ray_wrapper(w: Workload, epochs: int) -> float:
    """(a'): (a) with the loader Ray's prepare_data_loader returns in one CPU worker."""
    return generated(w, epochs, prepare=ray_cpu_wrapper)


def seeds(w: Workload, epochs: int, prepare=pass_through) -> float:
    """(b): the seeds' DataLoader over a TensorDataset, shuffled, and the seed's train_func body."""
    import torch
    from torch.utils.data import DataLoader, TensorDataset

    train_loader = prepare(DataLoader(TensorDataset(w.x, w.y), batch_size=w.batch_size, shuffle=True))
    model = w.fresh_model()
    optimizer, criterion = w.sgd(model), torch.nn.CrossEntropyLoss()
    start = clocks()
    for _ in range(epochs):
        model.train()
        for data, target in train_loader:
            output = model(data)
            loss = criterion(output, target)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return since(start)


def seeds_in_ray_wrapper(w: Workload, epochs: int) -> float:
    """(b'): (b) with the loader Ray's prepare_data_loader returns in one CPU worker."""
    return seeds(w, epochs, prepare=ray_cpu_wrapper)


def limit(w: Workload, epochs: int, bookkeeping: bool = True) -> float:
    """(c): a randperm per epoch, slices of it index the tensors; the mean loss kept as (a) keeps it."""
    import torch

    model = w.fresh_model()
    optimizer, loss_fn = w.sgd(model), torch.nn.CrossEntropyLoss()
    x, y, batch_size, n = w.x, w.y, w.batch_size, len(w.x)
    generator = torch.Generator().manual_seed(0)
    start = clocks()
    for _ in range(epochs):
        model.train()
        order = torch.randperm(n, generator=generator)
        total, seen = torch.zeros(()), 0
        for begin in range(0, n, batch_size):
            rows = order[begin : begin + batch_size]
            xb, yb = x[rows], y[rows]
            loss = loss_fn(model(xb), yb)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            if bookkeeping:
                total += loss.detach() * len(yb)
                seen += len(yb)
        if bookkeeping:
            (total / seen).item()
    return since(start)


def limit_bare(w: Workload, epochs: int) -> float:
    """(c0): (c) without the mean-loss bookkeeping: the least a loop can do."""
    return limit(w, epochs, bookkeeping=False)


LOOPS = {  # key: (label, function, has a goal)
    "generated": ("(a)  generated (specc)", generated, True),
    "seeds": ("(b)  seeds: DataLoader(TensorDataset)", seeds, True),
    "limit": ("(c)  limit: randperm + slicing", limit, True),
    "generated_ray": ("(a') generated, Ray's CPU loader wrap", generated_in_ray_wrapper, False),
    "seeds_ray": ("(b') seeds, Ray's CPU loader wrap", seeds_in_ray_wrapper, False),
    "limit_bare": ("(c0) limit without loss bookkeeping", limit_bare, False),
}


# -- measuring -----------------------------------------------------------------------------------
@dataclass
class Timing:
    label: str
    samples: int
    wall: list[float] = field(default_factory=list)  # seconds per run
    cpu: list[float] = field(default_factory=list)

    def rates(self, clock: str = "wall") -> list[float]:
        return [self.samples / seconds for seconds in getattr(self, clock)]

    def median(self, clock: str = "wall") -> float:
        return statistics.median(self.rates(clock))

    def figures(self) -> dict:
        return {
            "label": self.label,
            "samples_per_run": self.samples,
            "runs": len(self.wall),
            "median_samples_per_s": self.median(),
            "min_samples_per_s": min(self.rates()),
            "max_samples_per_s": max(self.rates()),
            "median_samples_per_cpu_s": self.median("cpu"),
            "wall_seconds": self.wall,
            "cpu_seconds": self.cpu,
        }


def measure(w: Workload, settings: Settings) -> dict[str, Timing]:
    """Every loop `warmups` times unmeasured, then `repetitions` rounds, the order rotating each round."""
    n = len(w.x)
    epochs = max(1, -(-settings.samples // n))
    timings = {key: Timing(label, epochs * n) for key, (label, _, _) in LOOPS.items()}
    keys = list(LOOPS)
    for round_ in range(settings.warmups + settings.repetitions):
        shift = round_ % len(keys)
        for key in keys[shift:] + keys[:shift]:
            wall, cpu = LOOPS[key][1](w, epochs)
            if round_ >= settings.warmups:
                timings[key].wall.append(wall)
                timings[key].cpu.append(cpu)
    return timings


def report(w: Workload, timings: dict[str, Timing]) -> dict:
    a, b, c = timings["generated"], timings["seeds"], timings["limit"]
    n = len(w.x)
    print()
    print(
        f"workload {w.name}: model {w.config['model']['hidden_sizes']} on {n:,} x {list(w.input_shape)} "
        f"-> {w.num_outputs}, batch {w.batch_size}, {a.samples // n} epoch(s) = {a.samples:,} samples per run"
    )
    print(f"{'':<42}{'':>5}{'samples/s (wall)':^36}{'(a) /':>8}{'per CPU-s':>12}{'(a) /':>8}")
    print(f"{'loop':<42}{'runs':>5}{'median':>12}{'min':>12}{'max':>12}{'this':>8}{'median':>12}{'this':>8}")
    for timing in timings.values():
        rates = timing.rates()
        print(
            f"{timing.label:<42}{len(rates):>5}{timing.median():>12,.0f}{min(rates):>12,.0f}{max(rates):>12,.0f}"
            f"{a.median() / timing.median():>7.3f}x{timing.median('cpu'):>12,.0f}"
            f"{a.median('cpu') / timing.median('cpu'):>7.3f}x"
        )
    ratios = {}
    for clock in ("wall", "cpu"):
        ratios[clock] = {"seeds": a.median(clock) / b.median(clock), "limit": a.median(clock) / c.median(clock)}
    for key, what, goal in (("seeds", "seeds' DataLoader", GOAL_SEEDS), ("limit", "limit", GOAL_LIMIT)):
        wall, cpu = ratios["wall"][key], ratios["cpu"][key]
        print(
            f"generated / {what + ':':<19}{wall:.3f}x (goal >= {goal}: {verdict(wall >= goal)}); "
            f"by CPU time {cpu:.3f}x ({verdict(cpu >= goal)})"
        )

    ceiling = c.median("cpu") / b.median("cpu")
    print(f"ceiling of the first goal: limit / seeds' DataLoader = {ceiling:.3f}x by CPU time (no loop beats it)")

    def per_batch(timing: Timing) -> float:  # µs of CPU per batch
        return 1e6 * w.batch_size / timing.median("cpu")

    print(
        f"CPU per batch: generated {per_batch(a):.1f} µs, limit {per_batch(c):.1f} µs "
        f"(generated {per_batch(a) - per_batch(c):+.1f} µs), seeds {per_batch(b):.1f} µs, "
        f"limit without loss bookkeeping {per_batch(timings['limit_bare']):.1f} µs"
    )
    return {
        "workload": w.name,
        "ratios": ratios,
        "ceiling_limit_over_seeds_cpu": ceiling,
        "goals": {"seeds": GOAL_SEEDS, "limit": GOAL_LIMIT},
        "timings": {key: timing.figures() for key, timing in timings.items()},
    }


def verdict(met: bool) -> str:
    return "met" if met else "MISSED"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer samples and repetitions (about 30 s)")
    parser.add_argument("--json", action="store_true", help="every figure as one JSON object at the end")
    parser.add_argument("--workload", choices=("digits", "synthetic"), action="append", help="default: both")
    parser.add_argument("--repetitions", type=int, help="measured rounds (default: 15, --quick: 3)")
    args = parser.parse_args(argv)
    settings = QUICK if args.quick else FULL
    if args.repetitions:
        settings = Settings(settings.samples, settings.warmups, args.repetitions)

    import torch

    torch.set_num_threads(1)
    from importlib.metadata import version

    print(f"Python {platform.python_version()} ({sys.executable}), torch {torch.__version__}, ray {version('ray')}")
    print(f"{os.cpu_count()} CPUs, {platform.platform()}; torch.set_num_threads(1), one process, no Ray workers")
    print(
        f"{settings.warmups} warm-up run(s) of each loop, then {settings.repetitions} rounds, order rotating; "
        f"~{settings.samples:,} samples per run; figures are samples/s (training only: forward, backward, step)"
    )
    results = []
    with tempfile.TemporaryDirectory(prefix="specc-bench-loop-") as directory:
        for name in args.workload or ["digits", "synthetic"]:
            workload = load_workload(name, Path(directory))
            results.append(report(workload, measure(workload, settings)))
    if args.json:
        print(json.dumps({"settings": settings.__dict__, "workloads": results}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
