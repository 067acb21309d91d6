"""`model`: the network to train. Input shape and output count come from the dataset, never from here."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import Field, StringConstraints, WithJsonSchema

from specc.spec.base import IDENTIFIER_PATTERN, Factory, Identifier, PositiveInt, Section, describe

# Written the same on both frameworks; any other activation of the spec's framework is checked against specc's catalog
# (specc/check/named.py): torch.nn's activation modules (mish, selu, hardswish, ...), Keras' activations by name.
NEUTRAL_ACTIVATIONS = ("relu", "gelu", "silu", "tanh", "sigmoid", "elu", "leaky_relu", "linear")
Activation = Annotated[
    str,
    StringConstraints(pattern=IDENTIFIER_PATTERN),
    WithJsonSchema({"type": "string", "pattern": IDENTIFIER_PATTERN, "examples": list(NEUTRAL_ACTIVATIONS)}),
]


class MLP(Section):
    """Dense layers on the flattened input (torch and tensorflow)."""

    type: Literal["mlp"] = describe("A multi-layer perceptron.")
    hidden_sizes: list[PositiveInt] = describe("Width of each hidden layer, input side first.", [128, 64])
    activation: Activation = describe(
        "Activation after each hidden layer: " + ", ".join(NEUTRAL_ACTIVATIONS) + ", or any other of the framework's "
        "(torch.nn's activation modules by snake_case or class name, Keras' activations by name).",
        "relu",
    )
    dropout: Annotated[float, Field(ge=0, lt=1)] = describe("Dropout after each hidden layer (0 = none).", 0.0)
    batch_norm: bool = describe("Batch normalisation after each hidden layer.", False)


class Pool(Section):
    """Max-pooling after each conv block (torch's MaxPool2d, Keras' MaxPooling2D)."""

    size: PositiveInt = describe("Square pooling window.", 2)
    stride: PositiveInt = describe("Step between pooling windows.", 2)


class CNN(Section):
    """Conv blocks (conv, batch norm if asked, activation, max-pool) then dense layers; needs image-shaped data."""

    type: Literal["cnn"] = describe("A small convolutional network.")
    channels: list[PositiveInt] = describe("Output channels of each conv block.", [32, 64], min_length=1)
    kernel_size: PositiveInt = describe("Square kernel size of every conv.", 3)
    padding: Literal["same", "valid"] = describe(
        "same: each conv keeps the image size (zero padding); valid: no padding, each conv shrinks it.", "same"
    )
    pool: Pool | None = describe("Max-pooling after each conv block; null: no pooling.", Pool())
    batch_norm: bool = describe("Batch normalisation after each conv (before its activation).", False)
    hidden_sizes: list[PositiveInt] = describe("Dense layers after the conv blocks (may be empty).", [128])
    activation: Activation = describe(
        "Activation after each conv and dense layer (as the mlp's: any activation of the framework).", "relu"
    )
    dropout: Annotated[float, Field(ge=0, lt=1)] = describe("Dropout before each dense layer (0 = none).", 0.0)


class TorchvisionModel(Section):
    """Any builder in `torchvision.models` (torch only), built without downloading weights."""

    type: Literal["torchvision"] = describe("A torchvision.models architecture.")
    name: Identifier = describe("Builder name in torchvision.models, e.g. resnet18, mobilenet_v3_small.")
    num_classes: PositiveInt | None = describe("Output classes; default: the dataset's class count.", None)
    in_channels: PositiveInt | None = describe(
        "Input channels; the first conv is adapted when it differs from 3 (default: the dataset's).", None
    )
    weights: None = describe("Pretrained weights are not supported (nothing is downloaded): null only.", None)


class KerasApplication(Section):
    """Any model in `keras.applications` (tensorflow only), built with random weights."""

    type: Literal["keras_application"] = describe("A keras.applications architecture.")
    name: Identifier = describe("Class name in keras.applications, e.g. ResNet50.")
    weights: None = describe("Pretrained weights are not supported (nothing is downloaded): null only.", None)


class CustomModel(Section):
    """Your own model: `factory(input_shape, num_outputs, **kwargs)` returns a torch.nn.Module or keras.Model."""

    type: Literal["custom"] = describe("A model built by your own function.")
    factory: Factory = describe(
        "'package.module:function', importable from the spec's directory (shipped to every node)."
    )
    kwargs: dict[str, Any] = describe("Keyword arguments passed to the factory.", {})


Model = Annotated[Union[MLP, CNN, TorchvisionModel, KerasApplication, CustomModel], Field(discriminator="type")]

MODEL_TYPES = {
    "torch": ("mlp", "cnn", "torchvision", "custom"),
    "tensorflow": ("mlp", "cnn", "keras_application", "custom"),
}
