"""How long the largest specs specc accepts take to validate: every shape of a spec just under the 1 MiB limit
that an attacker (or a generator gone wrong) could send through `specc validate` in CI.

Each shape is written to a temporary directory and validated in this process (`api.check_file`, the work of
`specc validate` without the interpreter's start); the yardstick is the same text parsed by PyYAML's C loader
(`yaml.load(text, CSafeLoader)`), which builds the data and nothing more. Goal: every shape under 2 s.

Run:  .venv/bin/python bench/large_specs.py [--repeat N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import yaml

from specc import api
from specc.read.document import MAX_BYTES

GOAL_SECONDS = 2.0
HEAD = "specc: 1\nname: big\nframework: torch\ntraining: {epochs: 1}\n"
BUDGET = MAX_BYTES - 4096  # just under the limit, room for the head


def fill(line_of, budget: int = BUDGET) -> str:
    """Lines from line_of(i) until the budget is used."""
    lines, size, i = [], 0, 0
    while size < budget:
        line = line_of(i)
        lines.append(line)
        size += len(line) + 1
        i += 1
    return "\n".join(lines) + "\n"


def shapes() -> dict[str, dict[str, str]]:
    """name -> {file name: text}; the spec is spec.yaml."""
    data = "dataset: {type: digits}\n"
    model = "model: {type: mlp}\n"
    half = BUDGET // 2 - 2048
    return {
        "unknown keys, node limit": {"spec.yaml": HEAD + model + data + fill(lambda i: f"key_{i}: {i}")},
        "45k unknown keys, each a problem": {
            "spec.yaml": HEAD + model + data + fill(lambda i: f"key_{i:07d}_{'x' * 8}: {i}", 45_000 * 22)
        },
        "one long list": {
            "spec.yaml": HEAD + data + "model:\n  type: mlp\n  hidden_sizes:\n" + fill(lambda i: "  - 8")
        },
        "factory kwargs mapping": {
            "spec.yaml": HEAD
            + data
            + "model:\n  type: custom\n  factory: 'nets:build'\n  kwargs:\n"
            + fill(lambda i: f"    k{i}: {i}"),
            "nets.py": "def build(input_shape, num_outputs, **kwargs): ...\n",
        },
        "merge key over a large mapping": {
            "spec.yaml": HEAD
            + model
            + data
            + "x-base: &base\n"
            + fill(lambda i: f"  key_{i}: {i}", half)
            + "x-child:\n  <<: *base\n  extra: 1\n"
        },
        "extends over a large parent": {
            "base.yaml": HEAD + model + data + "x-big:\n" + fill(lambda i: f"  key_{i}: {i}", BUDGET),
            "spec.yaml": "extends: base.yaml\nx-big:\n" + fill(lambda i: f"  key_{i}: {i + 1}", BUDGET),
        },
        "45k kwargs keys (valid)": {
            "spec.yaml": HEAD
            + data
            + "model:\n  type: custom\n  factory: 'nets:build'\n  kwargs:\n"
            + fill(lambda i: f"    k{i}: {i}", 45_000 * 12),
            "nets.py": "def build(input_shape, num_outputs, **kwargs): ...\n",
        },
        "merge key over 24k keys": {
            "spec.yaml": HEAD
            + model
            + data
            + "x-base: &base\n"
            + fill(lambda i: f"  key_{i}: {i}", 24_000 * 16)
            + "x-child:\n  <<: *base\n  extra: 1\n"
        },
        "extends, 45k keys over 45k": {
            "base.yaml": HEAD + model + data + "x-big:\n" + fill(lambda i: f"  key_{i}: {i}", 45_000 * 16),
            "spec.yaml": "extends: base.yaml\nx-big:\n" + fill(lambda i: f"  key_{i}: {i + 1}", 45_000 * 16),
        },
        "aliases up to the node limit": {
            "spec.yaml": HEAD
            + model
            + data
            + "x-a: &a [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n"
            + fill(lambda i: f"x-{i}: *a", 9_000 * 12)
        },
        "one long string": {"spec.yaml": HEAD + model + data + "description: '" + "x" * BUDGET + "'\n"},
        "nesting 60 deep, repeated": {
            "spec.yaml": HEAD + model + data + fill(lambda i: f"x-{i}: " + "[" * 60 + "]" * 60)
        },
    }


def timed(function, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per shape; the median is shown (default 3)")
    args = parser.parse_args()
    api.check_file(Path(__file__).resolve().parents[1] / "specs" / "digits_mlp.yaml")  # imports, warm
    print(f"{'shape':33} {'size':>9} {'problems':>14} {'specc':>8} {'C YAML':>8} {'ratio':>7}  goal < {GOAL_SECONDS} s")
    worst = 0.0
    for name, files in shapes().items():
        with tempfile.TemporaryDirectory() as directory:
            for file, text in files.items():
                (Path(directory) / file).write_text(text)
            spec = Path(directory) / "spec.yaml"
            size = sum(len(text.encode()) for text in files.values())
            found = api.check_file(spec).problems
            problems = f"{len(found)} {','.join(sorted({p.code for p in found}))}"
            seconds = timed(lambda spec=spec: api.check_file(spec), args.repeat)
            texts = list(files.values())
            baseline = timed(lambda texts=texts: [yaml.load(t, Loader=yaml.CSafeLoader) for t in texts], args.repeat)
        worst = max(worst, seconds)
        print(
            f"{name:33} {size / 1024:8.0f}K {problems:>14} {seconds:7.2f}s {baseline:7.2f}s "
            f"{seconds / baseline:6.1f}x  {'ok' if seconds < GOAL_SECONDS else 'OVER'}"
        )
    print(f"slowest: {worst:.2f} s ({'within' if worst < GOAL_SECONDS else 'over'} the {GOAL_SECONDS} s goal)")
    return 0 if worst < GOAL_SECONDS else 1


if __name__ == "__main__":
    sys.exit(main())
