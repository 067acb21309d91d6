"""One epoch numbering everywhere (issue 48, item 3), in the compiled scripts: the training loops report epochs from
1, as the progress lines and Ray's training_iteration count them, and a checkpoint records the epoch it was taken
after in the same numbering (`"epochs_counted_from": 1`). A resumed run goes on at the epoch after its checkpoint's,
also from a checkpoint a specc before issue 48 wrote (its epochs from 0, no epochs_counted_from): no epoch is
trained twice or skipped, and the history it carries is renumbered. A lean torch trial's train_func is called
directly, on real torch, with Ray Tune's session replaced by a recorder (e2e: tests/e2e/test_progress.py)."""

from __future__ import annotations

import os
import types

import pytest

from specc import api

torch = pytest.importorskip("torch")

SPEC = """\
specc: 1
name: counted
framework: {framework}
model: {{type: mlp, hidden_sizes: [8]}}
dataset: {{type: iris, batch_size: 16}}
training: {{epochs: 4, optimizer: {{type: sgd, lr: 0.05}}, checkpoint_every: 1}}
scaling: {{num_workers: 1}}
tune:
  metric: val_loss
  mode: min
  num_samples: 1
  space: {{training.optimizer.lr: {{grid: [0.05]}}}}
"""


def script_of(write_spec, framework: str = "torch") -> types.ModuleType:
    path = write_spec(SPEC.format(framework=framework))
    script = types.ModuleType("counted")
    script.__file__ = str(path.parent / "script.py")
    source = api.compile(api.load(path))
    if framework != "torch":
        return types.SimpleNamespace(source=source)
    exec(compile(source, script.__file__, "exec"), script.__dict__)
    return script


class Session:
    """Stands in for ray.tune in a lean trial: hands it `resume_from` and records each report with the state its
    checkpoint holds (read while the checkpoint's temporary directory exists)."""

    def __init__(self, resume_from=None):
        self.reports, self.resume_from = [], resume_from
        self.Checkpoint = types.SimpleNamespace(from_directory=self.state_in)

    @staticmethod
    def state_in(directory):
        return torch.load(os.path.join(directory, "state.pt"), weights_only=False)

    def report(self, metrics, checkpoint=None):
        self.reports.append((dict(metrics), checkpoint))

    def get_checkpoint(self):
        return self.resume_from


def trained(script, session) -> list[dict]:
    script.tune, script.ray = session, types.SimpleNamespace(get_gpu_ids=lambda: [])
    return script.train_func(script.CONFIG)


def checkpoint_of(tmp_path, state: dict):
    """A real checkpoint directory holding `state` (the model's and optimizer's of a fresh start)."""
    import ray.train

    directory = tmp_path / "checkpoint_000001"
    directory.mkdir()
    torch.save(state, directory / "state.pt")
    return ray.train.Checkpoint.from_directory(str(directory))


def test_a_trial_reports_and_checkpoints_its_epochs_from_1(write_spec):
    script = script_of(write_spec)
    session = Session()

    history = trained(script, session)

    assert [metrics["epoch"] for metrics, _ in session.reports] == [1, 2, 3, 4]
    for metrics, state in session.reports:  # checkpoint_every 1: one after each epoch, saying which
        assert (state["epoch"], state["epochs_counted_from"]) == (metrics["epoch"], 1)
        assert [row["epoch"] for row in state["history"]] == list(range(1, metrics["epoch"] + 1))
    assert [row["epoch"] for row in history] == [1, 2, 3, 4]


@pytest.mark.parametrize("earlier", [False, True], ids=["this-specc", "earlier-specc"])
def test_a_resumed_trial_goes_on_at_the_epoch_after_its_checkpoints(write_spec, tmp_path, earlier):
    """Two epochs done: this specc's checkpoint says epoch 2; an earlier specc's said epoch 1, counting from 0."""
    script = script_of(write_spec)
    fresh = Session()
    trained(script, fresh)
    _, state = fresh.reports[1]  # the checkpoint after the second epoch
    if earlier:
        history = [{**row, "epoch": row["epoch"] - 1} for row in state["history"]]
        state = {key: value for key, value in state.items() if key != "epochs_counted_from"}
        state.update(epoch=1, history=history)
    session = Session(checkpoint_of(tmp_path, state))

    history = trained(script, session)

    assert [metrics["epoch"] for metrics, _ in session.reports] == [3, 4]  # epochs 1 and 2 not again, none skipped
    assert [row["epoch"] for row in history] == [1, 2, 3, 4]  # results.csv's rows: one numbering
    assert session.reports[-1][1]["epoch"] == 4 and session.reports[-1][1]["epochs_counted_from"] == 1


def test_keras_checkpoints_are_read_by_the_same_rule(write_spec):
    """state.json of a Keras checkpoint: the same epochs_held and history_held as torch's state.pt, the runtime's
    (tests/unit/runtime/test_results.py: an earlier specc's counted from 0)."""
    torch_source = api.compile(api.load(write_spec(SPEC.format(framework="torch"), "torch.yaml")))
    keras_source = script_of(write_spec, "tensorflow").source

    assert "specc_runtime.restore_torch(" in torch_source  # which reads state.pt by epochs_held and history_held
    for source in (torch_source, keras_source):
        assert "def epochs_held(" not in source and "def history_held(" not in source
    assert 'json.dump({"epoch": metrics["epoch"], "epochs_counted_from": 1, "history": self.history}, out)' in (
        keras_source
    )
    assert "(specc_runtime.epochs_held(state), specc_runtime.history_held(state)) if checkpoint else (0, [])" in (
        keras_source
    )
