"""How `specc results` and `specc report` grow with a run directory's rows (issue 53, class 6): a run directory from
a stranger holds as many trials as it likes, and a 170 KB results.csv once took over a minute (a multi-objective
search whose trials were all on the Pareto front: every trial compared with every other).

Each shape is a run directory written by hand (as the compiled scripts and Ray leave one; no Ray is needed) at 1x,
4x and 16x its base rows, then read in this process: `results` is `read_run` + the text table, `report` is
`report_html` (the whole page, plotly included; needs the `report` extra). Printed: seconds per 1,000 rows at each
size and the ratio of the 16x figure to the 1x one. Goal: every ratio under 2 (linear growth gives about 1;
quadratic growth, 16).

Run:  .venv/bin/python bench/report_scale.py [--base N] [--repeat N] [--no-report]
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import random
import sys
import tempfile
import time
from pathlib import Path

from specc.results.report import report_html
from specc.results.run_dir import format_text, read_run

GOAL_RATIO = 2.0
SIZES = (1, 4, 16)
SPACE = {"training.optimizer.lr": {"loguniform": [1.0e-4, 0.1]}, "model.activation": {"choice": ["relu", "gelu"]}}


def csv_text(header: list[str], rows: list[list]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows([header, *rows])
    return out.getvalue()


def search(rows: int, draw: random.Random, epochs: int = 5, odd: bool = False) -> dict[str, str]:
    """An ASHA search: each trial's epochs in its result.json; `odd`: every trial's status and activation a value of
    its own (each its own chip and category)."""
    header = ["trial_id", "status", "epochs", *SPACE, "best_val_accuracy", "last_val_loss", "last_val_accuracy"]
    table, files = [], {}
    for i in range(rows):
        trial, accuracy = f"a_{i:06d}", draw.random()
        status, activation = (f"s{i}", f"c{i}") if odd else (draw.choice(["completed", "stopped"]), "relu")
        table.append([trial, status, epochs, 10 ** draw.uniform(-4, -1), activation, accuracy, 1 - accuracy, accuracy])
        lines = [{"epoch": e, "val_loss": 1 - accuracy, "val_accuracy": accuracy, "training_iteration": e + 1}
                 for e in range(epochs)]  # fmt: skip
        files[f"trial_{trial}/result.json"] = "".join(json.dumps(line) + "\n" for line in lines)
    spec = {"specc": 1, "name": "scale", "tune": {"metric": "val_accuracy", "mode": "max", "space": SPACE}}
    files["results.csv"] = csv_text(header, table)
    files["best.json"] = json.dumps({"metric": "val_accuracy", "mode": "max"})
    files["spec.resolved.yaml"] = json.dumps(spec)
    return files


def front(rows: int, draw: random.Random, objectives: int = 2) -> dict[str, str]:
    """A multi-objective search from an earlier specc (no `pareto` column): every trial on the front."""
    metrics = [f"m{j}" for j in range(objectives)]
    header = ["trial_id", "status", "training.optimizer.lr", *(f"last_{m}" for m in metrics)]
    table = []
    for i in range(rows):
        x = draw.random()
        values = [x, 1 - x, *(draw.random() for _ in metrics[2:])]
        table.append([f"t{i}", "completed", 10 ** draw.uniform(-4, -1), *values])
    modes = ["max"] * objectives
    space = {"training.optimizer.lr": SPACE["training.optimizer.lr"]}
    spec = {"specc": 1, "name": "front", "tune": {"metric": metrics, "mode": modes, "space": space}}
    return {
        "results.csv": csv_text(header, table),
        "best.json": json.dumps({"metric": metrics, "mode": modes}),
        "spec.resolved.yaml": json.dumps(spec),
    }


def training(rows: int, draw: random.Random) -> dict[str, str]:
    """A training run of `rows` epochs, eight metrics each."""
    header = ["epoch", "train_loss", "val_loss", *(f"val_m{j}" for j in range(6))]
    table = [[e, *(draw.random() for _ in header[1:])] for e in range(rows)]
    return {"results.csv": csv_text(header, table), "best.json": json.dumps({"metric": "val_loss", "mode": "min"})}


SHAPES = {
    "search, 5 epochs a trial": (250, search),
    "search, a status and category per trial": (250, lambda n, d: search(n, d, epochs=1, odd=True)),
    "front of 2 objectives (all trials)": (500, front),
    "front of 3 objectives (all trials)": (500, lambda n, d: front(n, d, 3)),
    "training run, 8 metrics": (1000, training),
}


def write(directory: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return directory


def seconds(call, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - start)
    return best


def measure(run_dir: Path, repeat: int, report: bool) -> dict[str, float]:
    figures = {"results": seconds(lambda: format_text(read_run(run_dir)), repeat)}
    if report:
        figures["report"] = seconds(lambda: report_html(read_run(run_dir)), repeat)
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=float, default=1.0, help="scale every shape's base rows (default 1)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each measure; the fastest counts")
    parser.add_argument("--no-report", action="store_true", help="time `results` only (no plotly needed)")
    args = parser.parse_args()
    failed = False
    print(f"{'shape':52} {'command':8} " + " ".join(f"{f'{s}x s/1k':>11}" for s in SIZES) + f" {'16x/1x':>7}")
    with tempfile.TemporaryDirectory() as scratch:
        for name, (base, make) in SHAPES.items():
            rows = [max(1, int(base * args.base * size)) for size in SIZES]
            per_k: dict[str, list[float]] = {}
            for size, count in zip(SIZES, rows, strict=True):
                run_dir = write(Path(scratch) / f"{len(per_k)}-{name[:6]}-{size}", make(count, random.Random(size)))
                for command, taken in measure(run_dir, args.repeat, not args.no_report).items():
                    per_k.setdefault(command, []).append(taken / count * 1000)
            for command, figures in per_k.items():
                ratio = figures[-1] / figures[0]
                failed |= ratio > GOAL_RATIO
                cells = " ".join(f"{figure:11.4f}" for figure in figures)
                print(f"{f'{name} ({rows[0]} rows)':52} {command:8} {cells} {ratio:7.2f}")
    print(f"goal: every ratio under {GOAL_RATIO}" + (" -- MISSED" if failed else " -- met"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
