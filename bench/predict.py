"""Batch inference, measured (issue 20): `specc predict` against what users write by hand.

One model, trained once by `specc run` on a 20,000-row slice of a generated customers table (four numbers, two
text categories, missing values; an MLP), then run over the whole table (default 1,000,000 rows in 8 parquet files)
three ways, each in a fresh process that starts its own local Ray (or none):

- specc: `specc predict RUN_DIR rows/ -o predictions.parquet` (the compiled predict.py: Ray Data reads, one
  actor pool runs preprocessing + the model, the driver writes one file in the input's order);
- hand-written Ray Data, as Ray's batch-inference guide writes it: read_parquet, a map_batches function that
  prepares the columns (pandas, from the same preprocessing.json), a map_batches class with the model loaded in
  __init__ (concurrency as specc's actors), write_parquet to a directory of files (unordered);
- a plain loop in one process: pyarrow reads each file's batches, NumPy prepares, torch predicts, a ParquetWriter
  writes.

Rows/s is the input's rows over the process's wall time (start-up included: a user waits for it too), and the
ratio is against the hand-written Ray script. The three outputs are compared: the same probabilities (to 1e-6).

    .venv/bin/python bench/predict.py                     # 1,000,000 rows: about 3 min
    .venv/bin/python bench/predict.py --rows 200000       # a quick look

Goal: specc predict >= 1.0x the hand-written Ray Data script.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
FILES = 8
SPEC = """\
specc: 1
name: churn
framework: torch
model: {type: mlp, hidden_sizes: [64, 32]}
dataset:
  type: parquet
  path: train
  label: churned
  categorical: [plan, region]
  missing: median
  batch_size: 256
training: {epochs: 2, optimizer: {type: adam, lr: 0.01}, metrics: [accuracy]}
scaling: {num_workers: 1, resources_per_worker: {CPU: 1}}
run: {storage_path: runs, checkpoints_to_keep: 1}
"""

PREPARE = '''
def prepare(frame, fitted):
    """pandas: fill, standardise, one-hot, as preprocessing.json says (the columns in the model's order)."""
    columns = []
    for name in fitted["features"]:
        values = frame[name].astype("float64").fillna(fitted["fill"].get(name, np.nan))
        mean, std = fitted["standardize"][name]
        columns.append(((values - mean) / (std if std >= 1e-8 else 1.0)).to_numpy()[:, None])
    for name in fitted["categorical"]:
        values = frame[name].fillna(fitted["fill"][name])
        columns.append(np.stack([(values == c).to_numpy() for c in fitted["categories"][name]], axis=1))
    return np.concatenate(columns, axis=1).astype(np.float32)


def mlp(state, fitted):
    """The spec's MLP ([64, 32], relu), as specc builds it, with the checkpoint's weights."""
    width = fitted["input_shape"][0]
    model = nn.Sequential(nn.Flatten(), nn.Linear(width, 64), nn.ReLU(), nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 2))
    model.load_state_dict(torch.load(state, map_location="cpu", weights_only=True)["model"])
    return model.eval()
'''

HAND_RAY = (
    """
import json, sys
import numpy as np, pandas as pd, ray, torch
from torch import nn
"""
    + PREPARE
    + """

checkpoint, source, output, actors = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
fitted = json.load(open(f"{checkpoint}/preprocessing.json"))


def preprocess(frame: pd.DataFrame) -> dict:
    return {"x": prepare(frame, fitted)}


class TorchPredictor:
    def __init__(self):
        self.model = mlp(f"{checkpoint}/state.pt", fitted)

    def __call__(self, batch: dict) -> dict:
        with torch.inference_mode():
            logits = self.model(torch.as_tensor(batch["x"]))
        probability = torch.softmax(logits, dim=1).numpy()
        return {"probability_0": probability[:, 0], "probability_1": probability[:, 1]}


ray.init()
ds = ray.data.read_parquet(source)
ds = ds.map_batches(preprocess, batch_format="pandas")
ds = ds.map_batches(TorchPredictor, concurrency=actors, batch_size=4096, num_cpus=1)
ds.write_parquet(output)
"""
)

PLAIN = (
    """
import json, sys
import numpy as np, pyarrow as pa, pyarrow.parquet as pq, torch
from torch import nn
from pathlib import Path
"""
    + PREPARE
    + """

checkpoint, source, output = sys.argv[1], sys.argv[2], sys.argv[3]
fitted = json.load(open(f"{checkpoint}/preprocessing.json"))
model = mlp(f"{checkpoint}/state.pt", fitted)
writer = None
for path in sorted(Path(source).glob("*.parquet")):
    for batch in pq.ParquetFile(path).iter_batches(batch_size=4096):
        with torch.inference_mode():
            probability = torch.softmax(model(torch.from_numpy(prepare(batch.to_pandas(), fitted))), dim=1).numpy()
        table = pa.table({"probability_0": probability[:, 0], "probability_1": probability[:, 1]})
        writer = writer or pq.ParquetWriter(output, table.schema)
        writer.write_table(table)
writer.close()
"""
)


def customers(rows: int, seed: int):
    """A churn table: numbers with missing values, two text categories, a label that depends on them."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    age = rng.integers(18, 80, rows).astype(float)
    age[rng.random(rows) < 0.05] = np.nan
    tenure = rng.integers(0, 120, rows)
    fee = rng.normal(40, 12, rows).round(2)
    calls = rng.poisson(1.5, rows)
    plan = rng.choice(["basic", "plus", "pro"], rows)
    region = rng.choice(["north", "south", "east", "west", None], rows, p=[0.3, 0.3, 0.2, 0.15, 0.05])
    score = 0.04 * calls - 0.02 * tenure / 12 + 0.03 * (fee - 40) / 12 + (plan == "basic") * 0.5
    churned = (score + rng.normal(0, 0.4, rows) > 0.2).astype(np.int64)
    return pd.DataFrame(
        {"age": age, "tenure_months": tenure, "monthly_fee": fee, "support_calls": calls}
        | {"plan": plan, "region": region, "churned": churned}
    )


def write_data(work: Path, rows: int) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    (work / "train").mkdir()
    pq.write_table(pa.Table.from_pandas(customers(20_000, 1), preserve_index=False), work / "train/part-0.parquet")
    source = work / "rows"
    source.mkdir()
    for index in range(FILES):
        part = customers(rows // FILES, 100 + index)
        pq.write_table(pa.Table.from_pandas(part, preserve_index=False), source / f"part-{index}.parquet")
    return source


def timed(command: list[str], env: dict, cwd: Path) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode:
        sys.exit(f"{' '.join(command[:4])} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--actors", type=int, default=1, help="model copies for both Ray contenders (2 CPUs: 1)")
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="specc-bench-predict-"))
    env = {**os.environ, "RAY_TMPDIR": str(work / "ray"), "PYTHONWARNINGS": "ignore"}
    (work / "ray").mkdir()
    try:
        source = write_data(work, args.rows)
        (work / "churn.yaml").write_text(SPEC, encoding="utf-8")
        specc = [sys.executable, "-m", "specc"]
        trained = timed([*specc, "run", str(work / "churn.yaml"), "--quiet"], env, work)
        run_dir = work / "runs/churn"
        checkpoint = json.loads((run_dir / "best.json").read_text(encoding="utf-8"))["checkpoint"]
        print(f"trained on 20,000 rows in {trained:.0f} s; predicting {args.rows:,} rows ({FILES} parquet files)")
        (work / "hand_ray.py").write_text(textwrap.dedent(HAND_RAY), encoding="utf-8")
        (work / "plain.py").write_text(textwrap.dedent(PLAIN), encoding="utf-8")
        more = ["--actors", str(args.actors), "--root", str(work)]
        outputs = {
            "hand": [str(source), str(work / "hand"), str(args.actors)],
            "plain": [str(source), str(work / "plain.parquet")],
        }
        runs = {
            "specc predict": [*specc, "predict", str(run_dir), str(source), "-o", str(work / "specc.parquet"), *more],
            "hand-written Ray Data": [sys.executable, str(work / "hand_ray.py"), checkpoint, *outputs["hand"]],
            "plain torch loop": [sys.executable, str(work / "plain.py"), checkpoint, *outputs["plain"]],
        }
        seconds = {name: timed(command, env, work) for name, command in runs.items()}
        agree = same_probabilities(work)
        base = args.rows / seconds["hand-written Ray Data"]
        print(f"{'':24}{'seconds':>9}{'rows/s':>12}{'vs hand Ray':>13}")
        for name, value in seconds.items():
            rate = args.rows / value
            print(f"{name:24}{value:9.1f}{rate:12,.0f}{rate / base:12.2f}x")
        print(f"outputs agree (max |difference| of probabilities): {agree:.2e}")
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


def same_probabilities(work: Path) -> float:
    """The largest difference between the three outputs' class-1 probabilities (the hand-written Ray script's
    files are in no set order: compared as sorted values)."""
    import pyarrow.parquet as pq

    specc = pq.read_table(work / "specc.parquet").column("probability_1").to_numpy()
    plain = pq.read_table(work / "plain.parquet").column("probability_1").to_numpy()
    hand = pq.read_table(work / "hand").column("probability_1").to_numpy()
    if not (len(specc) == len(plain) == len(hand)):
        sys.exit(f"row counts differ: specc {len(specc)}, plain {len(plain)}, hand-written Ray {len(hand)}")
    return max(np.abs(specc - plain).max(), np.abs(np.sort(specc) - np.sort(hand)).max())


if __name__ == "__main__":
    main()
