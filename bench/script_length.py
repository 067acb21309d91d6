"""How long the compiled script a reviewer reads is (issue 49): every spec in specs/ compiled with `specc compile -o`,
the lines of the experiment file counted, and, when compile writes one beside it, the lines of the shared runtime
(`specc_runtime.py`, the same file for every spec) counted once.

Printed: one row per spec (experiment lines, and lines of the runtime when there is one), then the median and the
largest experiment file, and specs/digits_mlp.yaml against its goal (under 160 lines).

Run:  .venv/bin/python bench/script_length.py [--specs DIR] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPECC = Path(sys.executable).with_name("specc")  # the console script beside this interpreter
RUNTIME = "specc_runtime.py"
GOAL = ("digits_mlp", 160)


def lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def compiled_lengths(specs: list[Path], out: Path) -> tuple[dict[str, int], int | None]:
    """Each spec's experiment file length, and the runtime's (None when compile writes a single file)."""
    lengths, runtime = {}, None
    for spec in specs:
        target = out / spec.stem / f"{spec.stem}.py"
        target.parent.mkdir(parents=True)
        done = subprocess.run([str(SPECC), "compile", str(spec), "-o", str(target)], capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"specc compile {spec} failed:\n{done.stderr}")
        lengths[spec.stem] = lines(target)
        beside = target.with_name(RUNTIME)
        if beside.exists():
            runtime = lines(beside)
    return lengths, runtime


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--specs", type=Path, default=ROOT / "specs", help="a directory of specs (default: specs/)")
    parser.add_argument("--json", action="store_true", help="also print every figure as one JSON object")
    args = parser.parse_args(argv)
    specs = sorted(path for path in args.specs.glob("*.yaml") if not path.name.startswith("base_"))
    with tempfile.TemporaryDirectory() as out:
        lengths, runtime = compiled_lengths(specs, Path(out))
    width = max(map(len, lengths))
    for name, count in sorted(lengths.items(), key=lambda item: item[1]):
        print(f"{name:<{width}}  {count:>5} lines")
    median, (largest, most) = statistics.median(lengths.values()), max(lengths.items(), key=lambda item: item[1])
    print(f"\n{len(lengths)} specs: median {median:g} lines, largest {largest} ({most} lines)")
    print(f"runtime beside them: {runtime} lines, once" if runtime is not None else "runtime: none (one file a spec)")
    name, goal = GOAL
    if name in lengths:
        print(f"{name}: {lengths[name]} lines (goal: under {goal})")
    if args.json:
        print(json.dumps({"experiment_lines": lengths, "runtime_lines": runtime, "median": median}, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
