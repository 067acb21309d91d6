"""`model` (SPEC §4): the five model types, their defaults, constraints and union errors."""

from __future__ import annotations

import pytest

TF_CUSTOM_DATA = "framework: tensorflow\ndataset: {type: custom, factory: 'data:load'}\n"


@pytest.mark.parametrize(
    ("snippet", "expected"),
    [
        (
            "model: {type: mlp}",
            {"type": "mlp", "hidden_sizes": [128, 64], "activation": "relu", "dropout": 0.0, "batch_norm": False},
        ),
        (
            "model: {type: cnn}",
            {
                "type": "cnn",
                "channels": [32, 64],
                "kernel_size": 3,
                "padding": "same",
                "pool": {"size": 2, "stride": 2},
                "batch_norm": False,
                "hidden_sizes": [128],
                "activation": "relu",
                "dropout": 0.0,
            },
        ),
        (
            "model: {type: torchvision, name: resnet18}",
            {"type": "torchvision", "name": "resnet18", "num_classes": None, "in_channels": None, "weights": None},
        ),
        (
            "model: {type: keras_application, name: ResNet50}\n" + TF_CUSTOM_DATA,
            {"type": "keras_application", "name": "ResNet50", "weights": None},
        ),
        ("model: {type: custom, factory: 'nets:build'}", {"type": "custom", "factory": "nets:build", "kwargs": {}}),
    ],
    ids=["mlp", "cnn", "torchvision", "keras_application", "custom"],
)
def test_defaults_of_each_type(shown, snippet, expected):
    assert shown(snippet)["model"] == expected


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("{type: mlp, dropout: 1.0}", [("E106", "model.dropout")]),
        ("{type: mlp, dropout: -0.1}", [("E106", "model.dropout")]),
        ("{type: cnn, dropout: 1}", [("E106", "model.dropout")]),
        ("{type: mlp, hidden_sizes: [64, 0]}", [("E106", "model.hidden_sizes.1")]),
        ("{type: mlp, hidden_sizes: ['64']}", [("E103", "model.hidden_sizes.0")]),
        ("{type: mlp, hidden_sizes: [2.5]}", [("E103", "model.hidden_sizes.0")]),
        ("{type: mlp, hidden_sizes: 64}", [("E103", "model.hidden_sizes")]),
        ("{type: mlp, batch_norm: 'true'}", [("E103", "model.batch_norm")]),
        ("{type: mlp, activation: swish}", [("E104", "model.activation")]),
        ("{type: cnn, channels: []}", [("E109", "model.channels")]),
        ("{type: cnn, padding: full}", [("E104", "model.padding")]),
        ("{type: cnn, pool: {size: 0}}", [("E106", "model.pool.size")]),
        ("{type: cnn, pool: {size: 2, stride: 2, kind: avg}}", [("E101", "model.pool.kind")]),
        ("{type: cnn, pool: 2}", [("E103", "model.pool")]),
        ("{type: cnn, batch_norm: 1}", [("E103", "model.batch_norm")]),
        ("{type: cnn, kernel_size: 0}", [("E106", "model.kernel_size")]),
        ("{type: cnn, kernel_size: 3.0}", [("E103", "model.kernel_size")]),
        ("{type: torchvision, name: resnet18, in_channels: 0}", [("E106", "model.in_channels")]),
        ("{type: torchvision, name: resnet18, num_classes: 0}", [("E106", "model.num_classes")]),
        ("{type: torchvision}", [("E102", "model.name")]),
        ("{type: torchvision, name: 'resnet-18'}", [("E107", "model.name")]),
        ("{type: custom}", [("E102", "model.factory")]),
        ("{type: custom, factory: 'nets:build', kwargs: [1, 2]}", [("E103", "model.kwargs")]),
        ("[mlp]", [("E103", "model")]),
    ],
)
def test_constraints(problems, model, expected):
    assert problems(f"model: {model}") == expected


def test_an_int_is_accepted_for_a_float_field(shown):
    assert shown("model: {type: mlp, dropout: 0}")["model"]["dropout"] == 0.0


@pytest.mark.parametrize("activation", ["relu", "gelu", "silu", "tanh", "sigmoid", "elu", "leaky_relu", "linear"])
def test_every_activation_is_accepted(problems, activation):
    assert problems(f"model: {{type: cnn, activation: {activation}}}") == []


def test_invalid_activation_lists_the_choices(report):
    (problem,) = report("model: {type: mlp, activation: zzz}").problems
    assert (problem.code, problem.message) == ("E104", "'zzz' is not an activation of torch.nn")
    assert problem.hint.startswith("on both frameworks: relu, gelu, silu, tanh, sigmoid, elu, leaky_relu, linear; ")
    assert "mish" in problem.hint and "glu" not in problem.hint.split(", ")  # torch.nn's own, that can be driven
    assert report("model: {type: mlp, activation: swish}").problems[0].hint == "did you mean 'hardswish'?"
    assert report("model: {type: mlp, activation: Mish}").problems == []  # torch.nn.Mish, by its class name


def test_activation_in_the_wrong_case_suggests_the_right_one(report):
    (problem,) = report("model: {type: mlp, activation: Relu}").problems
    assert problem.hint == "did you mean 'relu'?"


@pytest.mark.parametrize(
    ("model", "framework"),
    [
        ("{type: torchvision, name: resnet18, weights: DEFAULT}", "torch"),
        ("{type: keras_application, name: ResNet50, weights: imagenet}", "tensorflow"),
    ],
)
def test_pretrained_weights_are_refused_only_null(problems, model, framework):
    dataset = "dataset: {type: custom, factory: 'data:load'}\n"
    assert problems(f"framework: {framework}\n{dataset}model: {model}") == [("E103", "model.weights")]


def test_weights_null_is_accepted(problems):
    assert problems("model: {type: torchvision, name: resnet18, weights: null}") == []


@pytest.mark.parametrize("factory", ["nets:build", "my_pkg.nets.v2:build_model", "_private:_f"])
def test_custom_factory_accepted(problems, factory):
    assert problems(f"model: {{type: custom, factory: '{factory}', kwargs: {{width: 64}}}}") == []


@pytest.mark.parametrize(
    "factory",
    [
        "nets.build",
        "nets:",
        ":build",
        "nets:build:x",
        "my-pkg:build",
        "pkg/nets:build",
        "1nets:build",
        "nets:build()",
        "",
    ],
)
def test_custom_factory_must_be_module_colon_function(report, factory):
    (problem,) = report(f"model: {{type: custom, factory: '{factory}'}}").problems
    assert (problem.code, problem.path) == ("E107", "model.factory")
    assert "'package.module:function'" in problem.message


def test_bad_builder_name_is_not_called_a_metric(report):
    (problem,) = report("model: {type: torchvision, name: 'res net'}").problems
    assert (problem.code, problem.path) == ("E107", "model.name")
    assert "metric" not in problem.message


def test_unknown_type_suggests_the_closest(report):
    (problem,) = report("model: {type: mlpp}").problems
    assert (problem.code, problem.path) == ("E105", "model.type")
    assert "mlp, cnn, torchvision, keras_application, custom" in problem.message
    assert problem.hint == "did you mean 'mlp'?"


def test_field_of_another_type_is_an_unknown_key_of_the_section(report):
    (problem,) = report("model: {type: mlp, channels: [16]}").problems
    assert (problem.code, problem.path) == ("E101", "model.channels")
    assert "unknown key 'channels' in model" in problem.message
    assert problem.hint == "allowed keys: type, hidden_sizes, activation, dropout, batch_norm"


def test_missing_type_lists_the_types(report):
    (problem,) = report("model: {hidden_sizes: [16]}").problems
    assert (problem.code, problem.path) == ("E102", "model.type")
    assert problem.hint == "one of: mlp, cnn, torchvision, keras_application, custom"


def test_problem_points_at_the_value(report):
    (problem,) = report("model:\n  type: mlp\n  dropout: 1.0\n").problems
    assert (problem.code, problem.line, problem.column, problem.path) == ("E106", 8, 12, "model.dropout")
