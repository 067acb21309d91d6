"""How fast and how lean `specc validate` is, against two yardsticks, in one run.

(a) `specc validate <one spec>` / `python -c "import yaml, pydantic"`     goal <= 1.5
(b) `specc validate <N specs>`  / `check-jsonschema --schemafile ...`     goal <= 0.5
(c) peak memory (max RSS) of both validate commands

Every command runs as a subprocess of the interpreter running this script (`specc` and
`check-jsonschema` are the console scripts next to sys.executable). Wall time is measured around
the child; its max RSS comes from `os.wait4`, the kernel's rusage of that one child (the figure
`getrusage(RUSAGE_CHILDREN)` would report, without mixing children). Commands compared with each
other are interleaved, alternating which goes first, so machine noise hits both; figures are medians.

Run:  .venv/bin/python bench/validate.py [--quick] [--json] [--spec PATH]   (README.md: what it prints)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pydantic
import yaml

BIN = Path(sys.executable).parent
SPECC = str(BIN / "specc")
CHECK_JSONSCHEMA = str(BIN / "check-jsonschema")
ROOT = Path(__file__).resolve().parents[1]
COMMITTED_SCHEMA = ROOT / "schemas" / "experiment.schema.json"
GOAL_ONE = 1.5
GOAL_MANY = 0.5


@dataclass(frozen=True)
class Settings:
    warmups: int
    repetitions: int  # of the one-spec comparison (a)
    specs: int
    batch_runs: int  # of the many-spec comparison (b)


FULL = Settings(warmups=2, repetitions=15, specs=1000, batch_runs=3)
QUICK = Settings(warmups=1, repetitions=5, specs=100, batch_runs=1)


# -- measuring -----------------------------------------------------------------------------------
@dataclass
class Timing:
    label: str
    seconds: list[float] = field(default_factory=list)
    max_rss_kib: list[int] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    @property
    def peak_mib(self) -> float:
        return max(self.max_rss_kib) / 1024

    def figures(self) -> dict:
        return {
            "label": self.label,
            "runs": len(self.seconds),
            "median_s": self.median,
            "min_s": min(self.seconds),
            "peak_rss_mib": self.peak_mib,
            "seconds": self.seconds,
            "max_rss_kib": self.max_rss_kib,
        }


def run_once(command: list[str]) -> tuple[float, int, int]:
    """(wall seconds, max RSS in KiB, exit status) of one child process, output discarded."""
    start = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)  # reaped here, so Popen must not wait again
    rss_kib = usage.ru_maxrss // 1024 if sys.platform == "darwin" else usage.ru_maxrss  # macOS: bytes
    return seconds, rss_kib, child.returncode


def interleaved(commands: dict[str, tuple[str, list[str]]], warmups: int, runs: int) -> dict[str, Timing]:
    """{key: (label, command)}: each command `warmups` times unmeasured, then `runs` times, round-robin,
    alternating which goes first."""
    timings = {key: Timing(label) for key, (label, _) in commands.items()}
    keys = list(commands)
    for round_ in range(warmups + runs):
        for key in keys if round_ % 2 == 0 else keys[::-1]:
            seconds, rss_kib, status = run_once(commands[key][1])
            if status != 0:
                sys.exit(f"{timings[key].label}: exit {status}, expected 0")
            if round_ >= warmups:
                timings[key].seconds.append(seconds)
                timings[key].max_rss_kib.append(rss_kib)
    return timings


def cache_bytecode(directory: Path) -> None:
    """Let every child cache its bytecode in `directory`, as an installed package would have it.

    With PYTHONDONTWRITEBYTECODE set and no __pycache__ in the checkout, each run would recompile
    specc from source (~25 ms) while pydantic and PyYAML load their installed .pyc files. A private
    PYTHONPYCACHEPREFIX puts both commands on the same footing without writing into the repository.
    """
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["PYTHONPYCACHEPREFIX"] = str(directory)


def require_success(command: list[str], what: str) -> None:
    """Run once with output captured; stop with that output unless the command exits 0."""
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        output = (result.stdout + result.stderr).strip().splitlines()
        sys.exit(f"{what}: exit {result.returncode}, expected 0\n" + "\n".join(output[:40]))


# -- generating specs ----------------------------------------------------------------------------
CLASSES = {"iris": 3, "wine": 3, "breast_cancer": 2, "digits": 10, "torchvision": 10}
ACTIVATIONS = ("relu", "gelu", "silu", "tanh", "sigmoid", "elu", "leaky_relu", "linear")


def make_spec(index: int, rng: random.Random, full: bool = False) -> dict:
    """A valid spec; which sections it has and what they hold vary with `rng`. `full`: every section."""
    framework = rng.choice(("torch", "torch", "tensorflow"))
    dataset = make_dataset(rng, framework)
    model = make_model(rng, dataset)
    regression = dataset["type"] == "synthetic_regression"
    training = make_training(rng, dataset, regression, framework)
    spec = {
        "specc": 1,
        "name": f"bench-{index:04d}-{model['type']}-{dataset['type'].replace('_', '-')}",
        "description": f"generated spec {index} for bench/validate.py",
        "framework": framework,
        "model": model,
        "dataset": dataset,
        "training": training,
        "scaling": make_scaling(rng, framework),
        "run": make_run(rng),
    }
    if full or rng.random() < 0.6:
        metric, mode = ("val_loss", "min") if regression or rng.random() < 0.3 else ("val_accuracy", "max")
        spec["tune"] = make_tune(rng, spec, metric, mode)
        if full or rng.random() < 0.7:
            spec["scheduler"] = make_scheduler(rng, training)
            if spec["scheduler"]["type"] in ("pbt", "pb2"):  # trials restore from others' checkpoints (E206)
                spec["run"]["checkpoints_to_keep"] = rng.randint(3, 5)
        if full or rng.random() < 0.6:
            spec["stop"] = make_stop(rng, metric, mode)
    if full or rng.random() < 0.3:
        spec["cluster"] = make_cluster(rng)
    return spec


def make_dataset(rng: random.Random, framework: str) -> dict:
    kinds = ["synthetic_classification", "synthetic_regression", "digits", "iris", "wine", "breast_cancer", "csv"]
    if framework == "torch":
        kinds.append("torchvision")
    dataset: dict = {"type": rng.choice(kinds)}
    kind = dataset["type"]
    if kind.startswith("synthetic"):
        dataset.update(n_samples=rng.choice((500, 1000, 5000)), n_features=rng.randint(4, 64), seed=rng.randint(0, 9))
        if kind == "synthetic_classification":
            dataset["n_classes"] = rng.randint(2, 10)
    elif kind == "csv":
        dataset.update(path=f"data/table-{rng.randint(0, 99)}.csv", features=["a", "b", "c"], label="target")
        dataset.update(task="classification", num_classes=rng.randint(2, 12))
    elif kind == "torchvision":
        dataset.update(name=rng.choice(("MNIST", "FashionMNIST", "CIFAR10")), root="./data")
        if rng.random() < 0.5:
            channels = 1 if "MNIST" in dataset["name"] else 3
            dataset["normalize"] = {"mean": [0.5] * channels, "std": [0.25] * channels}
    dataset.update(batch_size=rng.choice((16, 32, 64, 128)), shuffle_seed=rng.randint(0, 100))
    if kind != "torchvision":  # it validates on its test split: a fraction would hold nothing out (E221)
        dataset["validation_fraction"] = rng.choice((0.1, 0.2, 0.25))
    if kind != "csv":  # csv rows always stream through Ray Data (W320)
        dataset["loader"] = rng.choice(("torch_dataloader", "ray_data"))
    return dataset


def make_model(rng: random.Random, dataset: dict) -> dict:
    hidden = rng.choice(([64], [128, 64], [256, 128, 64], []))
    dropout = rng.choice((0.0, 0.1, 0.25))
    if dataset["type"] in ("digits", "torchvision") and rng.random() < 0.5:
        blocks = rng.randint(1, 2 if dataset["type"] == "digits" else 3)
        channels = [16 * 2**block for block in range(blocks)]
        return {"type": "cnn", "channels": channels, "kernel_size": 3, "hidden_sizes": hidden, "dropout": dropout}
    activation = rng.choice(ACTIVATIONS)
    return {"type": "mlp", "hidden_sizes": hidden or [32], "activation": activation, "dropout": dropout}


def make_training(rng: random.Random, dataset: dict, regression: bool, framework: str) -> dict:
    classes = dataset.get("n_classes") or dataset.get("num_classes") or CLASSES.get(dataset["type"], 2)
    if regression:
        loss, metrics = rng.choice(("mse", "l1", "huber")), rng.choice((["mse"], ["mae"], ["mse", "mae"]))
    else:
        loss, metrics = "cross_entropy", ["accuracy", "top5_accuracy"] if classes > 5 else ["accuracy"]
    optimizer = rng.choice(
        (
            {"type": "sgd", "lr": 0.01, "momentum": 0.9, "weight_decay": 1.0e-4, "nesterov": True},
            {"type": "adam", "lr": 0.001},
            {"type": "adamw", "lr": 3.0e-4, "weight_decay": 0.05},
            {"type": "rmsprop", "lr": 0.005, "momentum": 0.5, "alpha": 0.9},
        )
    )
    if framework == "tensorflow" and optimizer["type"] != "adamw":  # Keras decouples weight decay (E207)
        optimizer = {key: value for key, value in optimizer.items() if key != "weight_decay"}
    schedule = rng.choice(
        (
            {"type": "none"},
            {"type": "step", "step_size": 10, "gamma": 0.5},
            {"type": "multistep", "milestones": [5, 15, 25], "gamma": 0.1},
            {"type": "cosine", "eta_min": 1.0e-5},
            {"type": "exponential", "gamma": 0.95},
        )
    )
    return {
        "epochs": rng.randint(8, 40),
        "loss": loss,
        "optimizer": optimizer,
        "lr_schedule": schedule,
        "metrics": metrics,
        "mixed_precision": rng.random() < 0.2,
        "seed": rng.randint(0, 1000),
        "checkpoint_every": 1,
    }


def make_scaling(rng: random.Random, framework: str) -> dict:
    scaling = {"num_workers": rng.randint(0, 4), "resources_per_worker": {"CPU": rng.choice((1, 2))}}
    if framework == "torch" and rng.random() < 0.5:
        scaling["backend"] = "gloo"
    return scaling


def make_run(rng: random.Random) -> dict:
    callbacks = ["csv", "json", "tensorboard"]
    return {
        "storage_path": rng.choice(("./runs", "/tmp/specc-runs", "s3://bucket/runs")),
        "checkpoints_to_keep": rng.randint(1, 3),
        "max_failures": rng.randint(0, 3),
        "callbacks": rng.sample(callbacks, rng.randint(0, len(callbacks))),
    }


def make_cluster(rng: random.Random) -> dict:
    return {
        "address": rng.choice((None, "auto", "ray://head:10001", "10.0.0.1:6379")),
        "runtime_env": {"env_vars": {"OMP_NUM_THREADS": "1"}, "pip": ["pandas>=2"]},
    }


def make_tune(rng: random.Random, spec: dict, metric: str, mode: str) -> dict:
    search = rng.choice(("random", "random", "grid", "optuna", "hyperopt", "bayesopt"))
    space = make_space(rng, spec, search)
    tune = {
        "metric": metric,
        "mode": mode,
        "num_samples": 1 if search == "grid" else rng.randint(2, 32),
        "max_concurrent_trials": rng.randint(1, 8),
        "search": {"type": search, "seed": rng.randint(0, 99)},
        "space": space,
    }
    if search == "random" and "training.optimizer.lr" in space:  # the others need a value for every path (E212)
        tune["search"]["points_to_evaluate"] = [{"training.optimizer.lr": 0.001}]
    return tune


def make_space(rng: random.Random, spec: dict, search: str) -> dict:
    """Several distributions, each the search algorithm can sample and each fitting its field."""
    if search == "grid":
        return {"dataset.batch_size": {"grid": [32, 64]}, "model.dropout": {"grid": [0.0, 0.2]}}
    if search == "bayesopt":
        return {"model.dropout": {"uniform": [0.0, 0.5]}, "training.optimizer.lr": {"uniform": [1.0e-4, 0.05]}}
    candidates = {
        "training.optimizer.lr": {"loguniform": [1.0e-4, 0.1]},
        "training.optimizer.weight_decay": {"qloguniform": [1.0e-6, 1.0e-2, 1.0e-6]},
        "model.dropout": rng.choice(({"uniform": [0.0, 0.5]}, {"quniform": [0.0, 0.5, 0.05]})),
        "model.hidden_sizes": {"choice": [[64], [128, 64], [256, 128]]},
        "dataset.batch_size": rng.choice(({"qrandint": [16, 128, 16]}, {"lograndint": [16, 256]})),
        "training.seed": {"randint": [0, 100]},
    }
    if "momentum" in spec["training"]["optimizer"]:
        candidates["training.optimizer.momentum"] = {"uniform": [0.1, 0.9]}
    if search == "random" and spec["dataset"].get("loader") == "torch_dataloader":  # Ray Data splits once (E213)
        candidates["dataset.shuffle_seed"] = {"grid": [0, 1, 2]}
    if spec["framework"] == "tensorflow" and spec["training"]["optimizer"]["type"] != "adamw":
        del candidates["training.optimizer.weight_decay"]  # Keras decouples it (E207)
    keys = rng.sample(sorted(candidates), rng.randint(3, len(candidates)))
    return {key: candidates[key] for key in sorted(keys)}


def make_scheduler(rng: random.Random, training: dict) -> dict:
    epochs = training["epochs"]
    return rng.choice(
        (
            {"type": "fifo"},
            {"type": "asha", "max_t": epochs, "grace_period": rng.randint(1, 4), "reduction_factor": 3},
            {"type": "hyperband", "reduction_factor": 3},
            {"type": "median_stopping", "grace_period": 2, "min_samples_required": 3},
            {
                "type": "pbt",
                "perturbation_interval": rng.randint(2, 5),
                "mutations": {"training.optimizer.lr": {"loguniform": [1.0e-4, 0.1]}},
                "quantile_fraction": 0.25,
            },
            {"type": "pb2", "perturbation_interval": 4, "bounds": {"training.optimizer.lr": [1.0e-4, 0.1]}},
        )
    )


def make_stop(rng: random.Random, metric: str, mode: str) -> dict:
    condition = f"{metric} >= 0.99" if mode == "max" else f"{metric} <= 0.01"
    stop: dict = {"when": [condition], "max_trial_time_s": rng.choice((300, 600, 1800))}
    if rng.random() < 0.5:
        stop["time_budget_s"] = 3600
    if rng.random() < 0.5:
        stop["plateau"] = {"metric": "val_loss", "std": 0.001, "num_results": 4, "grace_period": 4}
    return stop


def write_specs(directory: Path, count: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    files = []
    for index in range(count):
        path = directory / f"spec-{index:04d}.yaml"
        path.write_text(
            yaml.safe_dump(make_spec(index, rng, full=index == 0), sort_keys=False, default_flow_style=None),
            encoding="utf-8",
        )
        files.append(str(path))
    return files


def schema_file(directory: Path) -> str:
    """The committed schema, or one written by `specc schema` when the repository has none yet."""
    if COMMITTED_SCHEMA.is_file():
        return str(COMMITTED_SCHEMA)
    require_success([SPECC, "schema", "-o", str(directory)], "specc schema")
    return str(directory / COMMITTED_SCHEMA.name)


# -- reporting -----------------------------------------------------------------------------------
@dataclass
class Results:
    python: str
    pydantic: str
    pyyaml: str
    specs: int
    one_spec: str
    schema: str
    timings: dict[str, Timing]
    ratio_one: float
    ratio_many: float

    def figures(self) -> dict:
        figures = asdict(self)
        figures["timings"] = {label: timing.figures() for label, timing in self.timings.items()}
        figures["goals"] = {"ratio_one": GOAL_ONE, "ratio_many": GOAL_MANY}
        return figures


def print_report(results: Results) -> None:
    print(f"Python {results.python} ({sys.executable}), pydantic {results.pydantic}, PyYAML {results.pyyaml}")
    print(f"one spec: {results.one_spec}; schema: {results.schema}")
    print(f"{os.cpu_count()} CPUs, {platform.platform()}; bytecode cached under a temporary PYTHONPYCACHEPREFIX")
    print()
    print(f"{'command':<34} {'runs':>4} {'median':>9} {'min':>9} {'max':>9} {'peak RSS':>10}")
    for t in results.timings.values():
        print(
            f"{t.label:<34} {len(t.seconds):>4} {t.median:>8.3f}s {min(t.seconds):>8.3f}s "
            f"{max(t.seconds):>8.3f}s {t.peak_mib:>6.1f} MiB"
        )
    one, many = results.timings["validate_one"], results.timings["validate_many"]
    per_spec_ms = (many.median - one.median) / (results.specs - 1) * 1000
    print()
    print(f"validate 1 spec / import yaml,pydantic: {results.ratio_one:.2f}x (goal <= {GOAL_ONE})")
    print(f"validate {results.specs} specs / check-jsonschema: {results.ratio_many:.2f}x (goal <= {GOAL_MANY})")
    print(f"peak RSS: validate {results.specs} specs {many.peak_mib:.1f} MiB, validate 1 spec {one.peak_mib:.1f} MiB")
    print(f"marginal cost: {per_spec_ms:.2f} ms per spec (the {results.specs}-spec median less the 1-spec one)")


def measure(settings: Settings, spec: str | None, workdir: Path) -> Results:
    files = write_specs(workdir, settings.specs)
    one_spec = spec or files[0]
    schema = schema_file(workdir)
    require_success([SPECC, "validate", one_spec], f"specc validate {one_spec}")
    require_success([SPECC, "validate", *files], f"specc validate on the {len(files)} generated specs")
    require_success([CHECK_JSONSCHEMA, "--schemafile", schema, *files], f"check-jsonschema on the {len(files)} specs")
    timings = interleaved(
        {
            "baseline": ('python -c "import yaml, pydantic"', [sys.executable, "-c", "import yaml, pydantic"]),
            "validate_one": ("validate 1 spec", [SPECC, "validate", one_spec]),
        },
        settings.warmups,
        settings.repetitions,
    )
    timings |= interleaved(  # no warm-up: the validity checks above just ran both commands
        {
            "validate_many": (f"validate {len(files)} specs", [SPECC, "validate", *files]),
            "check_many": (f"check-jsonschema {len(files)} specs", [CHECK_JSONSCHEMA, "--schemafile", schema, *files]),
        },
        warmups=0,
        runs=settings.batch_runs,
    )
    return Results(
        python=platform.python_version(),
        pydantic=pydantic.VERSION,
        pyyaml=yaml.__version__,
        specs=len(files),
        one_spec=one_spec if spec else f"generated ({Path(one_spec).name}, every section)",
        schema="schemas/experiment.schema.json" if schema == str(COMMITTED_SCHEMA) else "generated (none committed)",
        timings=timings,
        ratio_one=timings["validate_one"].median / timings["baseline"].median,
        ratio_many=timings["validate_many"].median / timings["check_many"].median,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="5 repetitions, 100 specs: a fast sanity run")
    parser.add_argument("--json", action="store_true", help="also print every figure as one JSON object")
    parser.add_argument("--spec", help="the spec for the one-spec timing; default: the first generated one")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="specc-bench-") as workdir:
        cache_bytecode(Path(workdir) / "pycache")
        results = measure(QUICK if args.quick else FULL, args.spec, Path(workdir))
    print_report(results)
    if args.json:
        print(json.dumps(results.figures(), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
