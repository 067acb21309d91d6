"""Optimizers a spec names from its framework (SPEC §13, issue 50): every drivable class of specc's catalog, for torch
and for Keras, validates with the arguments its own signature takes, compiles to the constructor call a person would
write, and that call builds the optimizer; any argument the class does not take, or a value of a type it does not
take, is a located problem naming the class's own arguments (inputs generated over the whole catalog)."""

from __future__ import annotations

import json
import types
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from specc import api, catalog
from specc.catalog import PythonDefault

FRAMEWORKS = {"torch": "torch", "keras": "tensorflow"}
CURATED = ("sgd", "adam", "adamw", "rmsprop")


def drivable(framework: str) -> list[catalog.Entry]:
    entries = catalog.family(framework, "optimizers").values()
    return sorted((e for e in entries if not e.not_drivable and e.name not in CURATED), key=lambda e: e.name)


def writable_defaults(entry: catalog.Entry) -> dict:
    """Each argument a spec can write, at the class's own default (a default JSON cannot hold is left out)."""
    out = {}
    for name in entry.settable:
        param = entry.params[name]
        if param.required or isinstance(param.default, PythonDefault) or param.types <= {"callable", "tensor"}:
            continue
        if param.default is None and "none" not in param.types:
            continue
        out[name] = list(param.default) if isinstance(param.default, tuple) else param.default
    return out


def spec_text(framework: str, optimizer: dict) -> str:
    spec = {
        "specc": 1,
        "name": "named",
        "framework": FRAMEWORKS[framework],
        "model": {"type": "mlp", "hidden_sizes": [4]},
        "dataset": {"type": "iris"},
        "training": {"epochs": 1, "optimizer": optimizer},
        "scaling": {"num_workers": 0},
    }
    return yaml.safe_dump(spec, sort_keys=False)


def problems(write_spec, framework: str, optimizer: dict) -> list:
    return api.validate([write_spec(spec_text(framework, optimizer))])


def module_of(source: str) -> types.ModuleType:
    module = types.ModuleType("named_optimizer")
    exec(compile(source, "named_optimizer.py", "exec"), module.__dict__)
    return module


@pytest.mark.parametrize("framework", ["torch", "keras"])
def test_every_drivable_optimizer_builds_from_its_own_arguments(write_spec, framework):
    if framework == "keras":
        pytest.importorskip("tf_keras")
    torch = pytest.importorskip("torch")
    built = []
    for entry in drivable(framework):
        optimizer = {"type": entry.class_name, **writable_defaults(entry)}
        spec = write_spec(spec_text(framework, optimizer))
        assert api.validate([spec]) == [], entry.path
        source = api.compile(api.load(spec))
        call = f"optimizers.{entry.class_name}(" if framework == "keras" else f"torch.optim.{entry.class_name}("
        assert call in source and "lookup" not in source  # the class itself, as a person writes it
        cfg = module_of(source).CONFIG["training"]["optimizer"]
        if framework == "torch":
            made = module_of(source).make_optimizer(torch.nn.Linear(4, 3).parameters(), cfg)
        else:
            made = module_of(source).make_optimizer(cfg)
        assert type(made).__name__ == entry.class_name
        built.append(entry.name)
    expected = {"adadelta", "adafactor", "adagrad", "adamax", "nadam"}  # among them, in both frameworks
    assert expected <= set(built) and len(built) == (8 if framework == "torch" else 7), built


def test_a_curated_optimizer_named_as_its_class_keeps_its_fields(write_spec):
    assert problems(write_spec, "torch", {"type": "Adam", "betas": [0.8, 0.9]}) == []
    experiment = api.load(write_spec(spec_text("torch", {"type": "RMSprop", "alpha": 0.9})))
    assert experiment.training.optimizer.type == "rmsprop" and experiment.training.optimizer.centered is False


def test_not_drivable_unknown_and_keras_names_are_located(write_spec):
    (closure,) = problems(write_spec, "torch", {"type": "LBFGS"})
    assert (closure.code, closure.path) == ("E260", "training.optimizer.type") and "closure" in closure.message
    (unknown,) = problems(write_spec, "keras", {"type": "Adadelat"})
    assert (unknown.code, unknown.hint) == ("E105", "did you mean 'Adadelta'?")  # as the spec spells names
    (lr,) = problems(write_spec, "keras", {"type": "adadelta", "lr": 1.0})
    assert (lr.code, lr.path) == ("E101", "training.optimizer.lr") and "learning_rate" in lr.hint
    (supplied,) = problems(write_spec, "torch", {"type": "adadelta", "params": []})
    assert supplied.code == "E101" and supplied.hint == "the compiled code passes it"


def test_keras_clipping_twice_is_a_problem_and_once_is_passed_on(write_spec):
    spec = yaml.safe_load(spec_text("keras", {"type": "nadam", "clipnorm": 1.0}))
    spec["training"]["grad_clip_norm"] = 0.5
    (twice,) = api.validate([write_spec(yaml.safe_dump(spec))])
    assert (twice.code, twice.path) == ("E100", "training.optimizer.clipnorm") and "both clip" in twice.message
    del spec["training"]["optimizer"]["clipnorm"]
    path = write_spec(yaml.safe_dump(spec))
    assert api.validate([path]) == []
    assert "keras.optimizers.Nadam(global_clipnorm=clip_norm)" in api.compile(api.load(path))


def value_of(tag: str):
    return {
        "float": st.floats(0.01, 10),
        "int": st.integers(0, 100),
        "bool": st.booleans(),
        "str": st.text("abc", min_size=1, max_size=5),
        "none": st.none(),
        "list": st.lists(st.floats(0.01, 0.99), min_size=2, max_size=2),
        "tuple": st.lists(st.floats(0.01, 0.99), min_size=2, max_size=2),
    }.get(tag, st.nothing())


def wrong_for(types_: frozenset[str]):
    """A YAML value that none of the argument's types takes (an int is a float's; a list a tuple's)."""
    candidates = [("str", "word"), ("bool", True), ("dict", {"a": 1}), ("list", [1, 2]), ("none", None)]
    taken = set(types_) | ({"list", "tuple"} if types_ & {"list", "tuple"} else set())
    if types_ & {"any", "object"}:
        return None
    return next(
        (value for tag, value in candidates if tag not in taken and not (tag == "bool" and "int" in types_)), None
    )


@st.composite
def named_optimizer(draw, framework: str):
    entry = draw(st.sampled_from(drivable(framework)))
    chosen = draw(st.lists(st.sampled_from(entry.settable), unique=True, max_size=4)) if entry.settable else []
    given = {}
    for name in chosen:
        param = entry.params[name]
        tags = sorted(param.types & {"float", "int", "bool", "str", "none", "list", "tuple"})
        if param.choices:
            given[name] = draw(st.sampled_from(list(param.choices)))
        elif tags:
            given[name] = draw(value_of(draw(st.sampled_from(tags))))
    return entry, given


@pytest.mark.parametrize("framework", ["torch", "keras"])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_generated_arguments_are_checked_against_the_class(write_spec, framework, data):
    entry, given_args = data.draw(named_optimizer(framework))
    spelling = data.draw(st.sampled_from(entry.names))
    found = problems(write_spec, framework, {"type": spelling, **given_args})
    assert [p for p in found if p.code.startswith("E")] == [], (entry.path, given_args, found)
    # one argument it does not take, and one value of a type it does not take: each located at its key
    bogus = data.draw(st.text("xyz_", min_size=3, max_size=8).filter(lambda k: k not in entry.params))
    found = problems(write_spec, framework, {"type": spelling, **given_args, bogus: 1})
    assert [(p.code, p.path) for p in found] == [("E101", f"training.optimizer.{bogus}")]
    assert entry.class_name in found[0].hint or "did you mean" in found[0].hint
    typed = [name for name in entry.settable if not entry.params[name].choices and wrong_for(entry.params[name].types)]
    if typed:
        name = data.draw(st.sampled_from(typed))
        wrong = wrong_for(entry.params[name].types)
        found = problems(write_spec, framework, {"type": spelling, **{**given_args, name: wrong}})
        assert [(p.code, p.path) for p in found] == [("E103", f"training.optimizer.{name}")], (entry.path, name, wrong)


def test_a_searched_argument_is_typed_by_the_class(write_spec):
    text = spec_text("torch", {"type": "adadelta", "lr": 1.0})
    spec = yaml.safe_load(text)
    spec["tune"] = {"metric": "val_loss", "mode": "min", "num_samples": 2, "space": {}}
    space = spec["tune"]["space"]
    space["training.optimizer.rho"] = {"uniform": [0.8, 0.99]}
    path = write_spec(yaml.safe_dump(spec))
    assert api.validate([path]) == []
    source = api.compile(api.load(path))
    assert 'torch.optim.Adadelta(parameters, lr=cfg["lr"], rho=cfg["rho"])' in source  # searched, so passed
    space["training.optimizer.rho"] = {"choice": ["a", "b"]}
    assert {p.code for p in api.validate([write_spec(yaml.safe_dump(spec))])} == {"E203"}
    del space["training.optimizer.rho"]
    space["training.optimizer.rhoo"] = {"uniform": [0.8, 0.99]}
    (problem,) = api.validate([write_spec(yaml.safe_dump(spec))])
    assert (problem.code, problem.hint) == ("E202", "did you mean 'rho'?")


def test_the_catalog_files_name_what_the_check_reads():
    """The optimizers the checks read are the committed catalog's (schemas/catalog), not a list in the code."""
    torch_file = json.loads((Path(catalog.DIRECTORY) / "torch.json").read_text(encoding="utf-8"))
    assert {e["class_name"] for e in torch_file["families"]["optimizers"].values()} >= {"Adadelta", "NAdam", "LBFGS"}


def test_a_keras_schedule_starts_from_each_drawn_optimizers_own_learning_rate(write_spec):
    """A search that draws specc's sgd, Keras' Lion (no learning_rate given: its own default) or Nadam: the
    schedule's base is the trial's lr, its learning_rate, or its class's default, never a KeyError."""
    from specc.compiler.fragments import keras_base_lr

    spec = yaml.safe_load(spec_text("keras", {"type": "sgd", "lr": 0.1}))
    spec["training"]["lr_schedule"] = {"type": "step", "step_size": 1}
    options = [{"type": "sgd", "lr": 0.1}, {"type": "lion"}, {"type": "nadam", "learning_rate": 0.01}]
    spec["tune"] = {"metric": "val_loss", "mode": "min", "space": {"training.optimizer": {"grid": options}}}
    path = write_spec(yaml.safe_dump(spec))
    assert api.validate([path]) == []
    base = str(keras_base_lr(api.load(path)))
    drawn = [{"optimizer": {**option, **({"momentum": 0.0} if option["type"] == "sgd" else {})}} for option in options]
    assert [eval(base, {"training": training}) for training in drawn] == [0.1, 0.0001, 0.01]


def test_a_value_outside_an_arguments_choices_suggests_the_closest_choice():
    """Keras losses list their `reduction` choices (the losses family is the next to use these checks)."""
    from specc.check.fields import Locator
    from specc.check.named import named_problems
    from specc.read.document import SourceMap

    at = Locator(SourceMap({}))
    given = {"reduction": "summ", "delta": 0.5}
    (problem,) = named_problems("keras", "losses", "huber", given, ("training", "loss"), at)
    assert (problem.code, problem.path, problem.hint) == ("E104", "training.loss.reduction", "did you mean 'sum'?")
    assert problem.message.startswith("'summ' is not one of: ")


def test_only_the_classes_own_argument_names_reach_the_script(write_spec):
    """The compiler writes an argument's name into a call: even for a spec no one validated (built in Python), a key
    the class does not take never becomes code."""
    from specc.spec.experiment import Experiment

    data = yaml.safe_load(spec_text("torch", {"type": "adadelta", "rho": 0.9}))
    data["training"]["optimizer"]['rho=__import__("os").system("x")'] = 1
    source = api.compile(Experiment.model_validate(data))
    assert (
        'torch.optim.Adadelta(parameters, rho=cfg["rho"])' in source and "__import__" not in source.split("CONFIG")[0]
    )
    assert "system" not in source.split("def make_optimizer", 1)[1].split("\n\n\n", 1)[0]
