"""A torch experiment's checkpoints, written and read back by specc_runtime (report_torch, restore_torch): what
state.pt holds, the model a DistributedDataParallel wraps, the data's fitted preprocessing beside it, a population
run starting from its trial's checkpoint, and local mode's in-process callbacks."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import specc_runtime

torch = pytest.importorskip("torch")
ray_train = pytest.importorskip("ray.train")


class Session:
    """Stands in for ray.train in a worker: keeps a copy of each reported checkpoint (Ray's own would persist it)."""

    Checkpoint = ray_train.Checkpoint

    def __init__(self, kept: Path):
        self.kept, self.reports, self.latest = kept, [], None

    def report(self, metrics, checkpoint=None):
        if checkpoint is not None:
            target = self.kept / f"checkpoint_{len(self.reports):06d}"
            shutil.copytree(checkpoint.path, target)
            self.latest = ray_train.Checkpoint(str(target))
        self.reports.append((metrics, checkpoint is not None))

    def get_checkpoint(self):
        return self.latest


def trained(seed: int):
    torch.manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Linear(4, 3))
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    model(torch.ones(2, 4)).sum().backward()
    optimizer.step()
    return model, optimizer


def test_a_checkpoint_holds_each_state_and_restores_them_with_the_epochs(tmp_path):
    session, (model, optimizer) = Session(tmp_path), trained(0)
    history = [{"epoch": 1, "val_loss": 0.5}, {"epoch": 2, "val_loss": 0.4}]
    specc_runtime.report_torch(session, history[0], history[:1])  # no checkpoint due
    specc_runtime.report_torch(session, history[1], history, {"model": model, "optimizer": optimizer}, {"classes": 3})
    assert session.reports == [(history[0], False), (history[1], True)]
    state = torch.load(Path(session.latest.path, "state.pt"), weights_only=True)
    assert list(state) == ["model", "optimizer", "epoch", "epochs_counted_from", "history"]
    assert (state["epoch"], state["epochs_counted_from"], state["history"]) == (2, 1, history)
    assert json.loads(Path(session.latest.path, "preprocessing.json").read_text()) == {"classes": 3}

    fresh, fresh_optimizer = trained(1)  # another worker's start: other weights, no optimizer state
    start, restored = specc_runtime.restore_torch(session, {"model": fresh, "optimizer": fresh_optimizer}, "cpu")
    assert (start, restored) == (2, history)  # the next epoch to run, counted from 0, and the metrics so far
    assert all(torch.equal(a, b) for a, b in zip(fresh.state_dict().values(), model.state_dict().values(), strict=True))
    assert fresh_optimizer.state_dict()["state"][0]["step"] == optimizer.state_dict()["state"][0]["step"]


def test_nothing_to_resume_from_starts_at_epoch_zero_unless_a_population_run_passes_its_trials(tmp_path):
    model, optimizer = trained(0)
    assert specc_runtime.restore_torch(Session(tmp_path / "none"), {"model": model}, "cpu") == (0, [])
    donor = Session(tmp_path)
    specc_runtime.report_torch(donor, {"epoch": 3}, [{"epoch": 3}], {"model": model, "optimizer": optimizer})
    fresh = trained(1)[0]
    start = specc_runtime.restore_torch(Session(tmp_path / "new"), {"model": fresh}, "cpu", donor.latest.path)
    assert start == (3, [{"epoch": 3}]) and torch.equal(fresh[0].weight, model[0].weight)


def test_a_distributed_model_checkpoints_the_model_it_wraps(tmp_path, unused_port):
    import torch.distributed as dist

    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{unused_port}", rank=0, world_size=1)
    try:
        model, optimizer = trained(0)
        wrapped = torch.nn.parallel.DistributedDataParallel(model)
        session = Session(tmp_path)
        specc_runtime.report_torch(session, {"epoch": 1}, [], {"model": wrapped, "optimizer": optimizer})
        state = torch.load(Path(session.latest.path, "state.pt"), weights_only=True)
        assert list(state["model"]) == ["0.weight", "0.bias"]  # not module.0.weight: predict.py loads a plain model
        again = torch.nn.parallel.DistributedDataParallel(trained(1)[0])
        specc_runtime.restore_torch(session, {"model": again}, "cpu")
        assert torch.equal(again.module[0].weight, model[0].weight)
    finally:
        dist.destroy_process_group()


def test_each_report_reaches_the_in_process_callbacks_of_local_mode(tmp_path):
    class Logged:
        def __init__(self):
            self.seen = []

        def log(self, metrics):
            self.seen.append(metrics)

    logged = Logged()
    specc_runtime.IN_PROCESS_CALLBACKS[:] = [logged]
    try:
        specc_runtime.report_torch(Session(tmp_path), {"epoch": 1}, [])
        specc_runtime.report(Session(tmp_path), {"epoch": 2})  # a Keras epoch's
    finally:
        specc_runtime.IN_PROCESS_CALLBACKS.clear()
    assert logged.seen == [{"epoch": 1}, {"epoch": 2}]


@pytest.fixture
def unused_port():
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
