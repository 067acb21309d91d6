"""Activations a spec names from its framework (SPEC §13, issue 50): every activation of specc's catalog that can sit
between two layers validates on its framework, compiles to the layer a person would write (torch's nn.Mish(),
Keras' Activation("selu")), and the model it builds runs a batch through; one of the other framework, or none at all,
is a located problem."""

from __future__ import annotations

import types

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from specc import api, catalog
from specc.spec.model import NEUTRAL_ACTIVATIONS

FRAMEWORKS = {"torch": "torch", "keras": "tensorflow"}


def drivable(framework: str) -> list[catalog.Entry]:
    """The activations a name alone builds: none the catalog says cannot be driven, none with required arguments."""
    entries = catalog.family(framework, "activations").values()
    usable = (
        e for e in entries if not e.not_drivable and not any(p.required and not p.supplied for p in e.params.values())
    )
    return sorted(usable, key=lambda entry: entry.name)


def spec_text(framework: str, model: dict, space: dict | None = None) -> str:
    spec = {
        "specc": 1,
        "name": "activated",
        "framework": FRAMEWORKS[framework],
        "model": {"type": "mlp", "hidden_sizes": [6], **model},
        "dataset": {"type": "iris"},
        "training": {"epochs": 1},
    }
    if space:
        spec["tune"] = {"metric": "val_loss", "mode": "min", "num_samples": 2, "space": space}
    return yaml.safe_dump(spec, sort_keys=False)


def built(source: str, framework: str):
    module = types.ModuleType("activated")
    exec(compile(source, "activated.py", "exec"), module.__dict__)
    model = module.build_model(module.CONFIG["model"], (4,), 3)
    batch = np.random.default_rng(0).normal(size=(5, 4)).astype("float32")
    if framework == "torch":
        import torch

        return model, model(torch.from_numpy(batch)).detach().numpy()
    return model, np.asarray(model(batch))


@pytest.mark.parametrize("framework", ["torch", "keras"])
def test_every_activation_of_the_framework_builds_a_model_that_runs(write_spec, framework):
    pytest.importorskip("torch" if framework == "torch" else "tf_keras")
    names = [entry.name for entry in drivable(framework)]
    assert len(names) >= (25 if framework == "torch" else 14), names
    for entry in drivable(framework):
        spec = write_spec(spec_text(framework, {"activation": entry.name}))
        assert api.validate([spec]) == [], entry.path
        source = api.compile(api.load(spec))
        if entry.name not in NEUTRAL_ACTIVATIONS:
            layer = f"nn.{entry.class_name}()" if framework == "torch" else f'keras.layers.Activation("{entry.name}")'
            assert layer in source, entry.path
        _, out = built(source, framework)
        assert out.shape == (5, 3) and np.isfinite(out).all(), entry.path


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_searched_activation_draws_only_the_frameworks_own(write_spec, data):
    framework = data.draw(st.sampled_from(["torch", "keras"]))
    own = [spelling for entry in drivable(framework) for spelling in entry.names]
    other = {"torch": "keras", "keras": "torch"}[framework]
    foreign = sorted({n for e in drivable(other) for n in e.names} - set(own) - set(NEUTRAL_ACTIVATIONS) - {"linear"})
    drawn = data.draw(st.lists(st.sampled_from(own), min_size=2, max_size=4, unique=True))
    space = {"model.activation": {"choice": drawn}}
    assert api.validate([write_spec(spec_text(framework, {}, space))]) == []
    wrong = data.draw(st.sampled_from(foreign))
    index = data.draw(st.integers(0, len(drawn)))
    space = {"model.activation": {"choice": [*drawn[:index], wrong, *drawn[index:]]}}
    found = api.validate([write_spec(spec_text(framework, {}, space))])
    assert [(p.code, p.path) for p in found] == [("E203", f"tune.space[model.activation].choice.{index}")], found


def test_an_activation_that_a_name_cannot_build_says_why(write_spec):
    (threshold,) = api.validate([write_spec(spec_text("torch", {"activation": "threshold"}))])
    assert (threshold.code, threshold.path) == ("E260", "model.activation")
    assert "needs threshold, value" in threshold.message
    (square,) = api.validate([write_spec(spec_text("torch", {"activation": "Softmax2d"}))])
    assert square.code == "E260" and "2D" in square.message


def test_a_searched_activation_compiles_to_a_table_of_the_drawn_layers(write_spec):
    space = {"model.activation": {"choice": ["relu", "Mish", "hardswish"]}}
    source = api.compile(api.load(write_spec(spec_text("torch", {"activation": "selu"}, space))))
    table = source.split("def activation(name):", 1)[1].split("\n\n\n", 1)[0]
    assert '"Mish": nn.Mish(),' in table and '"hardswish": nn.Hardswish(),' in table and '"selu": nn.SELU(),' in table
    assert "nn.GELU()" not in table  # only what a trial can draw
