"""Reading back what a run's trackers wrote, with each tracker's own reader where it has one: TensorBoard's
EventAccumulator, the MLflow client on the run's store, and W&B's offline transaction log (the file `wandb sync`
uploads: a LevelDB-style log of `wandb_internal_pb2.Record` protobufs; wandb 0.31 ships no Python reader)."""

from __future__ import annotations

import json
import struct
from pathlib import Path

BLOCK = 32 * 1024  # LevelDB log blocks; each record chunk has a 7-byte header: crc32c, length, type
FIRST, MIDDLE, LAST = 2, 3, 4  # and 1: a whole record in one chunk
WANDB_HEADER = 7  # ":W&B" magic, a 2-byte key and a 1-byte version


def tensorboard_scalars(directory) -> dict[str, list[tuple[int, float]]]:
    """tag -> [(step, value)] of the event files in `directory`, as TensorBoard reads them."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(directory))
    events.Reload()
    return {tag: [(s.step, s.value) for s in events.Scalars(tag)] for tag in events.Tags()["scalars"]}


def mlflow_runs(tracking_uri: str, experiment: str) -> list[dict]:
    """Each run of the MLflow experiment: name, status, params and each metric's history [(step, value)]."""
    import mlflow

    client = mlflow.MlflowClient(tracking_uri)
    found = client.get_experiment_by_name(experiment)
    assert found is not None, f"no MLflow experiment {experiment!r} in {tracking_uri}"
    runs = []
    for run in client.search_runs([found.experiment_id]):
        history = {
            name: [(m.step, m.value) for m in sorted(client.get_metric_history(run.info.run_id, name), key=_step)]
            for name in run.data.metrics
        }
        runs.append(
            {"name": run.info.run_name, "status": run.info.status, "params": run.data.params, "metrics": history}
        )
    return sorted(runs, key=lambda run: run["name"])


def _step(metric):
    return metric.step


def wandb_runs(directory) -> list[dict]:
    """Each offline W&B run under `directory`/wandb: name, project, config and the logged rows (by step)."""
    runs = []
    for log in sorted(Path(directory).glob("wandb/offline-run-*/run-*.wandb")):
        run = {"name": None, "project": None, "config": {}, "history": [], "exit_code": None}
        for record in _records(log):
            kind = record.WhichOneof("record_type")
            if kind == "run":
                run["name"], run["project"] = record.run.display_name, record.run.project
                run["config"].update(_config(record.run.config))
            elif kind == "config":
                run["config"].update(_config(record.config))
            elif kind == "history":
                row = {
                    ".".join(item.nested_key) or item.key: json.loads(item.value_json) for item in record.history.item
                }
                run["history"].append({k: v for k, v in row.items() if not k.startswith("_") or k == "_step"})
            elif kind == "exit":
                run["exit_code"] = record.exit.exit_code
        runs.append(run)
    return runs


def _config(config) -> dict:
    return {item.key: json.loads(item.value_json) for item in config.update if item.key != "_wandb"}


def _records(path: Path):
    from wandb.proto import wandb_internal_pb2

    data = path.read_bytes()
    assert data[:4] == b":W&B", f"{path} is not a W&B transaction log"
    position, pending = WANDB_HEADER, b""
    while position + 7 <= len(data):
        left = BLOCK - position % BLOCK
        if left < 7:  # a block's tail too short for a header is padding
            position += left
            continue
        _, length, kind = struct.unpack("<IHB", data[position : position + 7])
        chunk = data[position + 7 : position + 7 + length]
        position += 7 + length
        if kind == 0 and length == 0:
            position += left - 7
            continue
        if kind in (FIRST, MIDDLE):
            pending = (pending if kind == MIDDLE else b"") + chunk
            continue
        payload = pending + chunk if kind == LAST else chunk
        pending = b""
        record = wandb_internal_pb2.Record()
        record.ParseFromString(payload)
        yield record
