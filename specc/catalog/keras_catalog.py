"""Keras' families, as the compiled scripts use Keras (tf_keras, Keras 2): optimizers, learning-rate schedules,
losses, activations, and the `Random*` preprocessing layers as augmentations.

Keras annotates nothing, so a parameter's type comes from its default; where the default is None or missing, from
TYPES below (read from the Keras documentation of each argument), else it is `any`.
"""

from __future__ import annotations

import functools
import inspect

from specc.catalog.introspect import Known, family, record

DISTRIBUTIONS = ("tensorflow", "tf-keras")
TYPES = {  # arguments with no default (or None), by name, as Keras' docstrings describe them
    "initial_learning_rate": "float",
    "decay_steps": "int",
    "first_decay_steps": "int",
    "decay_rate": "float",
    "warmup_target": "float",
    "boundaries": "list",
    "values": "list",
    "weight_decay": "float",
    "clipnorm": "float",
    "clipvalue": "float",
    "global_clipnorm": "float",
    "ema_overwrite_frequency": "int",
    "name": "str",
    "ignore_class": "int",
    "max_value": "float",
    "seed": "int",
    "factor": "float|tuple",
    "height_factor": "float|tuple",
    "width_factor": "float|tuple",
    "height": "int",
    "width": "int",
}
FILL_MODES = ["constant", "nearest", "reflect", "wrap"]  # tf_keras' image_preprocessing.check_fill_mode
NOT_DRIVABLE = {
    "losses": {
        **dict.fromkeys(
            ("CategoricalCrossentropy", "CategoricalFocalCrossentropy", "CategoricalHinge"),
            "it takes one-hot targets, and the data gives class indices: sparse_categorical_crossentropy takes them",
        ),
        "KLDivergence": "it compares two probability distributions, and the model outputs logits for class indices",
        "CosineSimilarity": "it compares the direction of two vectors, and a regression output is one number per "
        "target: only its sign would count",
        "Poisson": "it takes a positive rate, and the model's output is unbounded: log of a negative prediction",
    },
    "augmentations": {
        "RandomHeight": "it changes the images' height by a random factor each batch, so a model with a fixed "
        "input size fails",
        "RandomWidth": "it changes the images' width by a random factor each batch, so a model with a fixed input "
        "size fails",
    },
}
# The compiled code passes these: a loss gets the model's logits (from_logits=True), a schedule starts from the
# optimizer's learning rate; ReduceLROnPlateau watches lr_schedule.metric, in its direction.
SUPPLIED = {"losses": frozenset({"from_logits"}), "lr_schedules": frozenset({"initial_learning_rate"})}
PLATEAU = frozenset({"monitor", "mode", "verbose"})
COLOR_LAYERS = ("RandomBrightness", "RandomContrast")  # the other Random* layers move pixels: geometric


def families() -> dict[str, dict[str, dict]]:
    return {
        "optimizers": optimizers(),
        "lr_schedules": lr_schedules(),
        "losses": losses(),
        "activations": activations(),
        "augmentations": augmentations(),
    }


def optimizers() -> dict[str, dict]:
    import tf_keras

    base = tf_keras.optimizers.Optimizer
    records = [_record("optimizers", cls, "tf_keras.optimizers") for cls in _classes(tf_keras.optimizers, base)]
    for item in records:  # tf_keras' optimizers take **kwargs only to refuse them ("kwargs should be empty")
        item["var_keyword"] = False
    return family(records)


def lr_schedules() -> dict[str, dict]:
    import tf_keras

    schedules = tf_keras.optimizers.schedules
    found = _classes(schedules, schedules.LearningRateSchedule)
    records = [_record("lr_schedules", cls, "tf_keras.optimizers.schedules") for cls in found]
    # Keras lowers the rate on a plateau with a callback, not a schedule: the compiled code passes it the metric
    plateau = record(tf_keras.callbacks.ReduceLROnPlateau, "tf_keras.callbacks", known=known(), supplied=PLATEAU)
    plateau["var_keyword"] = False  # its **kwargs only take the old name of min_delta
    for param in plateau["params"]:
        if param["name"] == "min_lr":  # a learning rate, whose default is written as the integer 0
            param.update(type="float", type_from="name")
    return family([*records, plateau], aliases={"reduce_on_plateau": "ReduceLROnPlateau"})


def losses() -> dict[str, dict]:
    import tf_keras

    found = _classes(tf_keras.losses, tf_keras.losses.Loss)
    return family([_record("losses", cls, "tf_keras.losses") for cls in found])


def activations() -> dict[str, dict]:
    """The functions of tf_keras.activations that take a tensor `x` (not get, serialize, deserialize)."""
    import tf_keras

    functions = inspect.getmembers(tf_keras.activations, inspect.isfunction)
    found = [function for name, function in functions if not name.startswith("_") and _takes_x(function)]
    supplied = frozenset({"x"})
    return family([record(function, "tf_keras.activations", supplied=supplied, known=known()) for function in found])


def augmentations() -> dict[str, dict]:
    import tf_keras

    members = inspect.getmembers(tf_keras.layers, inspect.isclass)
    found = [cls for name, cls in members if name.startswith("Random") and issubclass(cls, tf_keras.layers.Layer)]
    return family([_record("augmentations", cls, "tf_keras.layers", tags=_tags(cls)) for cls in found])


@functools.cache
def known() -> Known:
    """TYPES, and the choices Keras checks its string arguments against (read from Keras where it lists them)."""
    import tf_keras
    from tf_keras.src.utils import image_utils

    choices = {
        "reduction": sorted(tf_keras.losses.Reduction.all()),
        "fill_mode": FILL_MODES,
        "interpolation": sorted(image_utils._TF_INTERPOLATION_METHODS),
        "mode": ["horizontal", "horizontal_and_vertical", "vertical"],  # RandomFlip's, the one `mode` here
    }
    return Known(TYPES, choices)


def _tags(cls: type) -> tuple[str, ...]:
    return ("color" if cls.__name__ in COLOR_LAYERS else "geometric", "random")


def _takes_x(function) -> bool:
    return next(iter(inspect.signature(function).parameters), None) == "x"


def _classes(module, base: type) -> list[type]:
    """The public classes of a module deriving from `base`, less `base` itself."""
    members = inspect.getmembers(module, inspect.isclass)
    return [cls for name, cls in members if not name.startswith("_") and issubclass(cls, base) and cls is not base]


def _record(family_name: str, cls: type, module: str, tags: tuple[str, ...] = ()) -> dict:
    reason = NOT_DRIVABLE.get(family_name, {}).get(cls.__name__)
    supplied = SUPPLIED.get(family_name, frozenset())
    return record(cls, module, known=known(), not_drivable=reason, tags=tags, supplied=supplied)
