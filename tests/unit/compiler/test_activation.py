"""Model settings a search changes reach each trial's model: the activation, an mlp's batch norm, and dropout
searched from 0.0 (each was written in from the spec's own value, so every trial trained the same layers)."""

from __future__ import annotations

import types

import pytest

from specc import api

SPEC = """\
specc: 1
name: searched-layers
framework: {framework}
model: {{type: mlp, hidden_sizes: [16], activation: relu, dropout: 0.0}}
dataset: {{type: digits}}
training: {{epochs: 1}}
tune:
  metric: val_accuracy
  mode: max
  space:
    model.activation: {{choice: [tanh, elu]}}
    model.batch_norm: {{choice: [true, false]}}
    model.dropout: {{choice: [0.0, 0.5]}}
"""


def script_of(tmp_path, framework: str, *overrides: str) -> types.ModuleType:
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC.format(framework=framework), encoding="utf-8")
    source = api.compile(api.load(spec, list(overrides)))
    module = types.ModuleType("searched_layers")
    module.__file__ = str(tmp_path / "searched_layers.py")
    exec(compile(source, module.__file__, "exec"), module.__dict__)
    module.source = source
    return module


def trial_config(script, **drawn) -> dict:
    return {**script.CONFIG["model"], **drawn}


def test_the_table_holds_what_the_search_can_draw_and_the_spec_value(tmp_path):
    source = script_of(tmp_path, "torch").source
    table = source[source.index("def activation(name):") : source.index("def build_model")]
    assert [name for name in ("relu", "tanh", "elu", "gelu") if f'"{name}":' in table] == ["relu", "tanh", "elu"]
    assert 'activation(cfg["activation"])' in source


def test_a_fixed_activation_is_written_in(tmp_path):
    spec = tmp_path / "fixed.yaml"
    fixed = SPEC.format(framework="torch").split("  space:")[0] + "  space:\n    model.dropout: {choice: [0.0, 0.5]}\n"
    spec.write_text(fixed, encoding="utf-8")
    source = api.compile(api.load(spec))
    assert "def activation(" not in source and "layers.append(nn.ReLU())" in source
    assert 'if cfg["batch_norm"]' not in source and "BatchNorm1d" not in source


def test_torch_trials_get_the_layers_they_drew(tmp_path):
    torch = pytest.importorskip("torch")
    script = script_of(tmp_path, "torch")
    drawn = script.build_model(trial_config(script, activation="tanh", batch_norm=True, dropout=0.5), (64,), 10)
    kinds = [type(layer).__name__ for layer in drawn]
    assert kinds == ["Flatten", "Linear", "BatchNorm1d", "Tanh", "Dropout", "Linear"]
    assert [layer.p for layer in drawn if isinstance(layer, torch.nn.Dropout)] == [0.5]
    plain = script.build_model(trial_config(script, activation="elu", batch_norm=False, dropout=0.0), (64,), 10)
    assert [type(layer).__name__ for layer in plain] == ["Flatten", "Linear", "ELU", "Dropout", "Linear"]


def test_keras_trials_get_the_layers_they_drew_with_torchs_batch_norm_statistics(tmp_path):
    pytest.importorskip("tensorflow")
    script = script_of(tmp_path, "tensorflow")
    drawn = script.build_model(trial_config(script, activation="tanh", batch_norm=True, dropout=0.5), (64,), 10)
    kinds = [type(layer).__name__ for layer in drawn.layers]
    assert kinds == ["Flatten", "Dense", "BatchNormalization", "Activation", "Dropout", "Dense"]
    norm = drawn.layers[2]
    assert (norm.momentum, norm.epsilon) == (0.9, 1e-5)  # torch's BatchNorm1d: momentum 0.1 of the new batch
    assert drawn.layers[3].get_config()["activation"] == "tanh" and drawn.layers[4].rate == 0.5
    plain = script.build_model(trial_config(script, activation="elu", batch_norm=False, dropout=0.0), (64,), 10)
    assert [type(layer).__name__ for layer in plain.layers] == ["Flatten", "Dense", "ELU", "Dropout", "Dense"]


def test_every_ray_example_shape_compiles_it(tmp_path):
    """Trials that drive a Trainer run the same build_model."""
    source = script_of(tmp_path, "torch", "scaling.num_workers=2").source
    assert source.count("def activation(name):") == 1 and 'activation(cfg["activation"])' in source
