"""The generator's rules, on plain Python: snake_case names, type tags, defaults, docstrings, constructors."""

from __future__ import annotations

import collections.abc
import enum
import numbers
import typing

import pytest

from specc.catalog import introspect
from specc.catalog.introspect import annotation_tags, family, json_default, record, snake_case


@pytest.mark.parametrize(
    ("name", "snake"),
    [
        ("Adadelta", "adadelta"),
        ("CosineAnnealingWarmRestarts", "cosine_annealing_warm_restarts"),
        ("ReduceLROnPlateau", "reduce_lr_on_plateau"),
        ("RAdam", "radam"),
        ("NAdam", "nadam"),
        ("ASGD", "asgd"),
        ("SGD", "sgd"),
        ("AdamW", "adamw"),
        ("RMSprop", "rmsprop"),
        ("OneCycleLR", "one_cycle_lr"),
        ("BCEWithLogitsLoss", "bce_with_logits_loss"),
        ("L1Loss", "l1_loss"),
        ("NLLLoss2d", "nll_loss2d"),
        ("KLDivergence", "kl_divergence"),
        ("ReLU", "relu"),
        ("ReLU6", "relu6"),
        ("PReLU", "prelu"),
        ("LeakyReLU", "leaky_relu"),
        ("SiLU", "silu"),
        ("Softmax2d", "softmax2d"),
        ("RandomIoUCrop", "random_iou_crop"),
        ("ToPILImage", "to_pil_image"),
        ("TuneBOHB", "tune_bohb"),
        ("HyperBandForBOHB", "hyper_band_for_bohb"),
        ("PB2", "pb2"),
        ("hard_sigmoid", "hard_sigmoid"),
    ],
)
def test_snake_case(name, snake):
    assert snake_case(name) == snake


class Policy(enum.Enum):
    IMAGENET = "imagenet"


@pytest.mark.parametrize(
    ("annotation", "tags"),
    [
        (float, {"float"}),
        (typing.Union[bool, None], {"bool", "none"}),
        (float | list[float], {"float", "list"}),
        (tuple[float, float], {"tuple"}),
        (collections.abc.Sequence[int], {"list"}),
        (dict[str, typing.Any], {"dict"}),
        (collections.abc.Callable[[int], float], {"callable"}),
        (typing.Literal["min", "max"], {"str"}),
        (numbers.Number, {"float", "int"}),
        (Policy, {"enum"}),
        (typing.Any, {"any"}),
        (Exception, {"object"}),
        ("float | list[float]", {"float", "list"}),
        ("Optional[SomeOptimizer]", {"object", "none"}),  # a name only a type checker imports
        ("Optional['ExperimentAnalysis']", {"object", "none"}),
        ("Literal['rel', 'abs']", {"str"}),
    ],
)
def test_annotation_tags(annotation, tags):
    assert annotation_tags(annotation, {"typing": typing}) == tags


def test_literal_choices_from_objects_and_text():
    assert introspect.literal_choices(typing.Union[typing.Literal["a", "b"], None], {}) == ["a", "b"]
    assert introspect.literal_choices("Literal['rel', 'abs']", {}) == ["rel", "abs"]
    assert introspect.literal_choices(typing.Union[typing.Literal["a"], float], {}) is None


@pytest.mark.parametrize(
    ("value", "held"),
    [
        (0.9, 0.9),
        ((0.9, 0.999), [0.9, 0.999]),
        (None, None),
        ({"a": (1, 2)}, {"a": [1, 2]}),
        (Policy.IMAGENET, {"$python": "Policy.IMAGENET"}),
        (float("inf"), {"$python": "float('inf')"}),
        ((None, float("nan")), {"$python": "(None, float('nan'))"}),
        (len, {"$python": "builtins.len"}),
        (object(), {"$python": "builtins.object(...)"}),
    ],
)
def test_json_default(value, held):
    assert json_default(value) == held


def test_first_line_reads_markup_as_text():
    class Documented:
        """Uses :class:`~torch.nn.Linear` and ``x`` from `"A paper" <https://example.org>`_. Then more.

        Details."""

    assert introspect.first_line(Documented) == 'Uses Linear and x from "A paper".'


def test_a_pass_through_init_is_looked_through():
    class Base:
        def __init__(self, rate: float = 0.5, *, flag: bool = False, **kwargs):
            pass

    class Passing(Base):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)

    class Bare:
        pass

    passing = record(Passing, "m")
    assert [(p["name"], p["type"], p["kind"], p["default"]) for p in passing["params"]] == [
        ("rate", "float", "positional_or_keyword", 0.5),
        ("flag", "bool", "keyword_only", False),
    ]
    assert passing["var_keyword"] is True
    assert record(Bare, "m")["params"] == [] and record(Bare, "m")["var_keyword"] is False


def test_unannotated_parameters_take_their_type_from_the_default_or_the_name_table():
    class Layer:
        def __init__(self, factor, seed=None, rate=0.1, other=None):
            pass

    known = introspect.Known({"factor": "float|tuple", "seed": "int"}, {})
    params = {p["name"]: p for p in record(Layer, "m", known=known)["params"]}
    assert (params["factor"]["type"], params["factor"]["type_from"], params["factor"]["required"]) == (
        "float|tuple",
        "name",
        True,
    )
    assert (params["seed"]["type"], params["seed"]["type_from"]) == ("int|none", "name")
    assert (params["rate"]["type"], params["rate"]["type_from"]) == ("float", "default")
    assert (params["other"]["type"], params["other"]["type_from"]) == ("any", "none")


def test_a_family_refuses_a_spelling_that_names_two_classes():
    class StepLR:
        def __init__(self):
            pass

    class Step:
        def __init__(self):
            pass

    with pytest.raises(ValueError, match="'step' names both"):
        family([record(StepLR, "m"), record(Step, "m")], suffix="_lr")


def test_a_family_refuses_an_alias_of_a_class_it_lacks():
    class Adam:
        def __init__(self):
            pass

    with pytest.raises(ValueError, match="no longer has"):
        family([record(Adam, "m")], aliases={"one_cycle": "OneCycleLR"})
