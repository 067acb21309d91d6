"""What fitting a table's preprocessors costs before training, gathered or streamed (issue 19).

A compiled table script fits Ray Data's preprocessors on the training split in the driver (make_datasets). Rows
within GATHERED_SHARE of the object store are gathered and aggregated in Ray's own worker processes; larger ones
stream through Ray Data's hash aggregate, whose map tasks start worker processes of their own for every aggregate.
This runs specs/customers_csv.yaml's compiled make_datasets (1,000 rows) the same way twice, each in a fresh process
with a Ray of its own (2 CPUs): as compiled (gathered), and with GATHERED_SHARE = 0 (streamed, as a data set larger
than a tenth of the store would be). Each process calls make_datasets twice (the first call also pays Ray Data's
first imports in the workers). Printed: the seconds of each call, the ratio, and whether both fitted the same state
(numbers to a relative 1e-9).

    .venv/bin/python bench/preprocessing_fit.py        # about 2 minutes
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "specs/customers_csv.yaml"
DATA = ROOT / "specs/data/customers.csv"  # its dataset.path
CALLS = 2


def measure(script: str, gathered: bool) -> None:
    """In this process: make_datasets CALLS times; prints one JSON line of seconds and the fitted state."""
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    loader = importlib.util.spec_from_file_location("fit_script", script)
    module = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(module)
    if not gathered:
        module.GATHERED_SHARE = 0.0
    cfg = {**module.CONFIG["dataset"], "path": str(DATA)}
    seconds, fitted = [], None
    for _ in range(CALLS):
        began = time.perf_counter()
        _, facts = module.make_datasets(cfg, 1)
        seconds.append(time.perf_counter() - began)
        fitted = facts["fitted"]
    ray.shutdown()
    print(json.dumps({"seconds": seconds, "fitted": fitted}))


def agree(a, b) -> bool:
    """Whether two fitted states agree: numbers to a relative 1e-9 (sums over blocks added in another order differ in
    their last bits; specc evaluate allows 1e-6), everything else exactly."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(agree(a[key], b[key]) for key in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(agree(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) or isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-9)
    return a == b


def run(script: str, gathered: bool) -> dict:
    mode = "--gathered" if gathered else "--streamed"
    done = subprocess.run(
        [sys.executable, __file__, "--measure", script, mode], capture_output=True, text=True, check=True, cwd=ROOT
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    parser.add_argument("--gathered", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--streamed", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        measure(args.measure, args.gathered)
        return
    with tempfile.TemporaryDirectory(prefix="specc-fit-") as workdir:
        script = str(Path(workdir) / "customers_csv.py")
        subprocess.run([sys.executable, "-m", "specc", "compile", str(SPEC), "-o", script], check=True, cwd=ROOT)
        streamed, gathered = run(script, gathered=False), run(script, gathered=True)
    for name, result in (("streamed (hash aggregate)", streamed), ("gathered (as compiled)", gathered)):
        calls = "  ".join(f"call {i + 1} {s:5.1f} s" for i, s in enumerate(result["seconds"]))
        print(f"{name:<26} {calls}")
    ratios = "  ".join(f"{s / g:.1f}x" for s, g in zip(streamed["seconds"], gathered["seconds"], strict=True))
    print(f"streamed / gathered        {ratios}")
    print(f"same fitted state (1e-9)   {agree(streamed['fitted'], gathered['fitted'])}")


if __name__ == "__main__":
    main()
