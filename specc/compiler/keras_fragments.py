"""The tensorflow parts of the template context: Keras layers, losses and metrics for the spec's choices.

As in fragments.py, each fragment comes from a table keyed by a validated choice. The scripts use tf_keras
(Keras 2) as `keras`: Keras 3's model.fit fails under MultiWorkerMirroredStrategy on this Ray.
"""

from __future__ import annotations

from specc.compiler.activation import activation_context
from specc.compiler.augment import keras_augment
from specc.compiler.render import Code
from specc.compiler.resolve import Plan
from specc.compiler.schedule_loss import named_loss

ACTIVATIONS = {
    "relu": "keras.layers.ReLU()",
    "gelu": 'keras.layers.Activation("gelu")',  # exact, as torch's nn.GELU()
    "silu": 'keras.layers.Activation("swish")',
    "tanh": 'keras.layers.Activation("tanh")',
    "sigmoid": 'keras.layers.Activation("sigmoid")',
    "elu": "keras.layers.ELU()",
    "leaky_relu": "keras.layers.LeakyReLU(alpha=0.01)",  # torch's slope (Keras's default is 0.3)
    "linear": 'keras.layers.Activation("linear")',
}
LOSSES = {
    "cross_entropy": "keras.losses.SparseCategoricalCrossentropy(from_logits=True)",
    "mse": "keras.losses.MeanSquaredError()",
    "bce_with_logits": "keras.losses.BinaryCrossentropy(from_logits=True)",
    "l1": "keras.losses.MeanAbsoluteError()",
    "huber": "keras.losses.Huber(delta=1.0)",  # torch's HuberLoss default
}
# training.metrics -> the Keras metric; Keras prefixes validation results with val_, as the reports name them.
METRICS = {
    "accuracy": 'keras.metrics.SparseCategoricalAccuracy(name="accuracy")',
    "binary_accuracy": 'keras.metrics.BinaryAccuracy(name="accuracy", threshold=0.0)',  # on logits
    "top5_accuracy": 'keras.metrics.SparseTopKCategoricalAccuracy(k=5, name="top5_accuracy")',
    "mse": 'keras.metrics.MeanSquaredError(name="mse")',
    "mae": 'keras.metrics.MeanAbsoluteError(name="mae")',
}
SCHEDULE_MODULES = {"step": set(), "multistep": {"bisect"}, "cosine": {"math"}, "exponential": set(), "none": set()}


def tensorflow_context(plan: Plan) -> dict:
    e = plan.experiment
    binary = e.binary_targets()
    metrics = ["binary_accuracy" if name == "accuracy" and binary else name for name in e.training.metrics]
    return {
        **activation_context(e, ACTIVATIONS),
        "loss": named_loss(e) or Code(LOSSES[e.training.loss]),
        "keras_metrics": [Code(METRICS[name]) for name in metrics],
        "target_spec": Code(_target_spec(plan)),
        "keras_augment": [Code(layer) for layer in keras_augment(e.dataset.augment)],
    }


def _target_spec(plan: Plan) -> str:
    """The targets' tf.TensorSpec: float32 columns for regression and bce_with_logits, else int64 class indices."""
    if plan.task == "regression" or plan.experiment.binary_targets():
        return "tf.TensorSpec((None, 1), tf.float32)"
    return "tf.TensorSpec((None,), tf.int64)"


def tensorflow_modules(plan: Plan) -> set[str]:
    """The modules a tensorflow script imports beyond the ones every script does."""
    modules = {"tensorflow as tf", "tf_keras as keras"}
    if plan.experiment.training.checkpoint_every != "never":
        modules.add("zipfile")  # a checkpoint's model.keras is read whole
    modules |= SCHEDULE_MODULES.get(plan.experiment.training.lr_schedule.type, set())  # a named class: none
    if plan.shape != "tune":
        modules |= {"ray.train", "ray.train.tensorflow"}
    if plan.loader != "ray_data":
        modules.add("itertools")
    return modules
