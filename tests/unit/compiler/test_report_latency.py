"""Ray Train's controller collects each `ray.train.report` when it polls the workers, every
RAY_TRAIN_HEALTH_CHECK_INTERVAL_S (2 s by default): compiled scripts set it where the Trainer is built, in the
process that calls fit() (the driver, or a trial's process), which Train passes on to its controller. The end-to-end
side (the value reaching the controller on a two-node cluster, in a Ray Job and in a trial) is in
tests/e2e/test_cluster.py."""

from __future__ import annotations

import os

import pytest

from specc.compiler.fragments import report_poll_s
from tests.unit.compiler.test_lean_scripts import compiled, module_of

POLL = "RAY_TRAIN_HEALTH_CHECK_INTERVAL_S"
SET = f'os.environ.setdefault("{POLL}", "0.1")'


@pytest.mark.parametrize(
    ("spec", "overrides"),
    [
        ("specs/digits_mlp.yaml", []),  # a Train run
        ("specs/digits_tf_cnn.yaml", []),  # TensorFlow
        ("specs/digits_asha.yaml", ["scaling.num_workers=2"]),  # trials that drive a Trainer
    ],
)
def test_every_shape_with_a_controller_sets_the_poll_before_building_its_trainer(spec, overrides):
    source = compiled(spec, *overrides)
    make_trainer = source.split("def make_trainer(", 1)[1].split("\ndef ", 1)[0]
    assert SET in make_trainer
    assert make_trainer.index(SET) < make_trainer.index("Trainer(")


@pytest.mark.parametrize(
    ("spec", "overrides"),
    [("specs/iris_local.yaml", []), ("specs/digits_asha.yaml", [])],  # Train's local mode; lean Tune trials
)
def test_shapes_without_a_controller_carry_no_poll(spec, overrides):
    assert POLL not in compiled(spec, *overrides)


def test_the_poll_grows_with_the_workers_it_calls():
    assert [report_poll_s(n) for n in (1, 2, 4, 8, 16, 64)] == ["0.1", "0.1", "0.1", "0.2", "0.4", "1.6"]
    assert SET.replace("0.1", "0.4") in compiled("specs/digits_mlp.yaml", "scaling.num_workers=16")


@pytest.fixture
def no_poll(monkeypatch):
    monkeypatch.delenv(POLL, raising=False)


def test_building_the_trainer_sets_the_poll_and_keeps_a_users_own(no_poll, tmp_path, monkeypatch):
    script = module_of(compiled("specs/digits_mlp.yaml"))
    config, scaling = script.CONFIG, script.RUN["scaling"]

    script.make_trainer(config, scaling, "poll", str(tmp_path), [])
    assert os.environ[POLL] == "0.1"

    monkeypatch.setenv(POLL, "0.5")  # set by the user: theirs wins
    script.make_trainer(config, scaling, "poll", str(tmp_path), [])
    assert os.environ[POLL] == "0.5"
