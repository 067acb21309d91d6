"""Learning-rate schedules and losses a spec names from its framework (SPEC §13, issue 50): every drivable class of
specc's catalog, for torch and for Keras, validates with the arguments its own signature takes, compiles to the
constructor call a person would write, and that call builds it; what the loop adds (per, warmup, a plateau's
metric) is checked where it is written; an argument the class does not take, or a value of a type it does not
take, is located at its key with the class's own arguments (inputs generated over the whole catalog)."""

from __future__ import annotations

import inspect

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from specc import api, catalog
from specc.spec.loss import FOLDED, TASKS, folded

from .test_named_optimizers import FRAMEWORKS, module_of, value_of, wrong_for

CURATED_SCHEDULES = ("StepLR", "MultiStepLR", "ExponentialLR")  # their class names are the curated sections
# a value for each argument some schedule requires
REQUIRED = {
    "max_lr": 0.1,
    "base_lr": 0.01,
    "T_max": 5,
    "T_0": 2,
    "milestones": [2, 4],
    "step_size": 2,
    "gamma": 0.5,
    "decay_steps": 10,
    "decay_rate": 0.9,
    "first_decay_steps": 5,
    "boundaries": [10],
    "values": [0.1, 0.01],
}
DATASETS = {"classification": {"type": "iris"}, "binary": {"type": "breast_cancer"}}


def drivable(framework: str, family: str) -> list[catalog.Entry]:
    entries = catalog.family(framework, family).values()
    return sorted((e for e in entries if not e.not_drivable), key=lambda e: e.name)


def schedules(framework: str) -> list[catalog.Entry]:
    return [e for e in drivable(framework, "lr_schedules") if e.class_name not in CURATED_SCHEDULES]


def needed(entry: catalog.Entry) -> dict:
    return {p.name: REQUIRED[p.name] for p in entry.params.values() if p.required and not p.supplied}


def spec_text(framework: str, dataset: dict | None = None, **training) -> str:
    spec = {
        "specc": 1,
        "name": "named",
        "framework": FRAMEWORKS[framework],
        "model": {"type": "mlp", "hidden_sizes": [4]},
        "dataset": dataset or {"type": "iris"},
        "training": {"epochs": 4, **training},
        "scaling": {"num_workers": 0},
    }
    return yaml.safe_dump(spec, sort_keys=False)


def problems(write_spec, framework: str, dataset: dict | None = None, **training) -> list:
    return api.validate([write_spec(spec_text(framework, dataset, **training))])


def located(found) -> list[tuple[str, str]]:
    return [(p.code, p.path) for p in found]


@pytest.mark.parametrize("framework", ["torch", "keras"])
def test_every_drivable_schedule_builds_from_its_own_arguments(write_spec, framework):
    pytest.importorskip("torch")
    if framework == "keras":
        pytest.importorskip("tf_keras")
    built = []
    for entry in schedules(framework):
        spec = write_spec(spec_text(framework, lr_schedule={"type": entry.class_name, **needed(entry)}))
        assert api.validate([spec]) == [], entry.path
        source = api.compile(api.load(spec))
        assert f".{entry.class_name}(" in source and "lookup" not in source, entry.path
        module = module_of(source)
        cfg = module.CONFIG["training"]["lr_schedule"]
        if framework == "torch":
            import torch

            optimizer = torch.optim.SGD(torch.nn.Linear(4, 3).parameters(), lr=0.1)
            supplied = {"epochs": 4, "steps_per_epoch": 10}
            wanted = list(inspect.signature(module.make_lr_schedule).parameters)[2:]
            made = module.make_lr_schedule(optimizer, cfg, *(supplied[name] for name in wanted))
            assert type(made).__name__ == entry.class_name
        elif entry.class_name == "ReduceLROnPlateau":
            assert 'keras.callbacks.ReduceLROnPlateau(monitor="val_loss", mode="min")' in source
        elif hasattr(module, "make_lr_schedule"):  # per step: the optimizer's learning_rate
            assert type(module.make_lr_schedule(0.1, cfg)).__name__ == entry.class_name
        else:  # per epoch: the learning rate of an epoch
            assert 0 < module.learning_rate(1, 0.1, cfg) <= 0.1 + 1e-6  # float32
        built.append(entry.name)
    assert len(built) == (8 if framework == "torch" else 7), built  # all but specc's own and the undrivable


@pytest.mark.parametrize("framework", ["torch", "keras"])
def test_every_drivable_loss_builds_and_takes_the_models_logits(write_spec, framework):
    torch = pytest.importorskip("torch")
    if framework == "keras":
        pytest.importorskip("tf_keras")
    for entry in drivable(framework, "losses"):
        task = TASKS[framework][entry.name]
        if task == "regression":  # E208 on a classification dataset: what the loss is for, by its meaning
            (mismatch,) = problems(write_spec, framework, loss={"type": entry.class_name, "reduction": "sum"})
            assert located([mismatch]) == [("E208", "training.loss.type")], entry.path
            continue
        spec = write_spec(spec_text(framework, DATASETS[task], loss={"type": entry.class_name, "reduction": "sum"}))
        assert api.validate([spec]) == [], entry.path
        source = api.compile(api.load(spec))
        module = module_of(source)
        outputs = torch.randn(8, 1 if task == "binary" else 3)
        targets = torch.randint(0, 2 if task == "binary" else 3, (8,))
        if task == "binary":
            targets = targets.float()[:, None]
        training = module.CONFIG["training"]  # the call reads training["loss"][...]
        if framework == "torch":
            loss_fn = eval(f"nn.{entry.class_name}(reduction=training['loss']['reduction'])", vars(module), locals())
            assert loss_fn(outputs, targets).ndim == 0
            assert f"nn.{entry.class_name}(reduction=" in source
        else:
            assert f"keras.losses.{entry.class_name}(" in source
            if "from_logits" in entry.params:
                assert f"keras.losses.{entry.class_name}(from_logits=True, reduction=" in source
            del training


def test_what_each_loss_is_for_covers_the_catalog():
    """A drivable loss without a meaning in specc.spec.loss.TASKS would be E260: the table names every one, and
    every spelling of one folds to its entry (the spec stage reads no catalog)."""
    for framework in ("torch", "keras"):
        assert set(TASKS[framework]) == {e.name for e in drivable(framework, "losses")}, framework
        for entry in catalog.family(framework, "losses").values():
            assert {FOLDED[framework].get(folded(name)) for name in entry.names} == {TASKS[framework].get(entry.name)}


def test_a_named_schedule_and_loss_are_located_with_the_class_arguments(write_spec):
    (unknown,) = problems(write_spec, "torch", lr_schedule={"type": "one_cycel", "max_lr": 0.1})
    assert (unknown.code, unknown.path, unknown.hint) == (
        "E105",
        "training.lr_schedule.type",
        "did you mean 'one_cycle'?",
    )
    (curated,) = problems(write_spec, "torch", lr_schedule={"type": "cosinee"})
    assert curated.hint == "did you mean 'cosine'?"  # specc's own names first
    (wrong,) = problems(write_spec, "torch", lr_schedule={"type": "one_cycle", "max_lr": 0.1, "pct": 0.3})
    assert located([wrong]) == [("E101", "training.lr_schedule.pct")] and "OneCycleLR's arguments" in wrong.hint
    (typed,) = problems(write_spec, "torch", lr_schedule={"type": "one_cycle", "max_lr": "high"})
    assert located([typed]) == [("E103", "training.lr_schedule.max_lr")]
    (supplied,) = problems(write_spec, "torch", lr_schedule={"type": "one_cycle", "max_lr": 0.1, "total_steps": 9})
    assert supplied.code == "E101" and supplied.hint == "the compiled code passes it"
    (missing,) = problems(write_spec, "torch", lr_schedule={"type": "cyclic", "max_lr": 0.1})
    assert (missing.code, missing.path) == ("E102", "training.lr_schedule") and "base_lr" in missing.message
    (loss,) = problems(write_spec, "torch", loss={"type": "cross_entropy", "label_smothing": 0.1})
    assert located([loss]) == [("E101", "training.loss.label_smothing")] and "label_smoothing" in loss.hint
    binary = {"type": "breast_cancer"}
    (logits,) = problems(write_spec, "keras", binary, loss={"type": "binary_crossentropy", "from_logits": False})
    assert logits.code == "E101" and logits.hint == "the compiled code passes it"
    (keras_name,) = problems(write_spec, "keras", loss={"type": "cross_entropy", "label_smoothing": 0.1})
    assert keras_name.code == "E101" and "SparseCategoricalCrossentropy" in keras_name.message


def test_a_loss_the_loop_cannot_feed_logits_says_why(write_spec):
    (nll,) = problems(write_spec, "torch", loss={"type": "nll"})
    assert located([nll]) == [("E260", "training.loss.type")] and "log-probabilities" in nll.message
    (one_hot,) = problems(write_spec, "keras", loss={"type": "CategoricalCrossentropy"})
    assert one_hot.code == "E260" and "sparse_categorical_crossentropy" in one_hot.message
    (binary,) = problems(write_spec, "torch", loss={"type": "bce_with_logits", "reduction": "sum"})
    assert binary.code == "E208" and "2 classes" in binary.message  # iris has 3
    (none,) = problems(write_spec, "torch", loss={"type": "cross_entropy", "reduction": "none"})
    assert located([none]) == [("E104", "training.loss.reduction")]
    assert problems(write_spec, "torch", loss={"type": "mse"}) != []  # {type: mse} is mse: regression, E208


def test_per_metric_and_warmup_are_checked_where_they_are_written(write_spec):
    plateau = {"type": "reduce_on_plateau", "patience": 1}
    assert problems(write_spec, "torch", lr_schedule={**plateau, "metric": "val_accuracy"}) == []
    (metric,) = problems(write_spec, "torch", lr_schedule={**plateau, "metric": "val_acc"})
    assert (
        located([metric]) == [("E201", "training.lr_schedule.metric")] and metric.hint == "did you mean 'val_accuracy'?"
    )
    (mode,) = problems(write_spec, "torch", lr_schedule={**plateau, "mode": "max"})
    assert located([mode]) == [("E101", "training.lr_schedule.mode")]
    (warm,) = problems(write_spec, "torch", lr_schedule={**plateau, "warmup": {"epochs": 1}})
    assert located([warm]) == [("E260", "training.lr_schedule.warmup")]
    (stepped,) = problems(write_spec, "torch", lr_schedule={**plateau, "per": "step"})
    assert located([stepped]) == [("E260", "training.lr_schedule.per")]
    (other,) = problems(write_spec, "torch", lr_schedule={"type": "polynomial", "metric": "val_loss"})
    assert located([other]) == [("E101", "training.lr_schedule.metric")]
    (keras_step,) = problems(write_spec, "keras", lr_schedule={"type": "step", "step_size": 1, "per": "step"})
    assert located([keras_step]) == [("E207", "training.lr_schedule.per")]
    warm_step = {"type": "cosine_decay", "decay_steps": 5, "per": "step", "warmup": {"epochs": 1}}
    (keras_warm,) = problems(write_spec, "keras", lr_schedule=warm_step)
    assert located([keras_warm]) == [("E207", "training.lr_schedule.warmup")]
    (per,) = problems(write_spec, "torch", lr_schedule={"type": "step", "step_size": 1, "per": "batch"})
    assert located([per]) == [("E104", "training.lr_schedule.per")]
    (factor,) = problems(write_spec, "torch", lr_schedule={"type": "none", "warmup": {"epochs": 1, "start_factor": 0}})
    assert located([factor]) == [("E106", "training.lr_schedule.warmup.start_factor")]


def test_a_curated_schedule_keeps_its_fields_and_compiles_as_today(write_spec):
    experiment = api.load(write_spec(spec_text("torch", lr_schedule={"type": "StepLR", "step_size": 2})))
    assert experiment.training.lr_schedule.type == "step"
    source = api.compile(experiment)
    assert 'torch.optim.lr_scheduler.StepLR(optimizer, step_size=cfg["step_size"], gamma=cfg["gamma"])' in source
    assert '"lr_schedule": {"type": "step", "step_size": 2, "gamma": 0.1}' in source  # no per/warmup in the config
    assert "        lr_schedule.step()\n" in source and "SequentialLR" not in source


def test_one_cycle_steps_per_batch_and_a_warmup_precedes_the_schedule(write_spec):
    schedule = {"type": "OneCycleLR", "max_lr": 0.1, "warmup": {"epochs": 1, "start_factor": 0.5}}
    source = api.compile(api.load(write_spec(spec_text("torch", lr_schedule=schedule))))
    assert (
        'OneCycleLR(\n        optimizer, max_lr=cfg["max_lr"], epochs=epochs, steps_per_epoch=steps_per_epoch\n    )'
        in source
    )
    assert 'total_iters=warmup["epochs"] * steps_per_epoch' in source
    assert 'training["epochs"] - training["lr_schedule"]["warmup"]["epochs"],\n        steps_per_epoch,\n' in source
    assert "        lr_schedule.step()  # once per optimizer step" in source
    plateau = {"type": "reduce_on_plateau", "metric": "val_accuracy"}
    source = api.compile(api.load(write_spec(spec_text("torch", lr_schedule=plateau))))
    assert 'ReduceLROnPlateau(optimizer, mode="max")' in source
    assert 'lr_schedule.step(metrics["val_accuracy"])' in source


def test_searched_schedule_and_loss_arguments_are_typed_by_the_class(write_spec):
    spec = yaml.safe_load(
        spec_text(
            "torch",
            lr_schedule={"type": "one_cycle", "max_lr": 0.1},
            loss={"type": "cross_entropy", "label_smoothing": 0.0},
        )
    )
    space = {"training.lr_schedule.pct_start": {"uniform": [0.1, 0.5]}}
    space["training.loss.label_smoothing"] = {"grid": [0.0, 0.1]}
    spec["tune"] = {"metric": "val_loss", "mode": "min", "space": space}
    path = write_spec(yaml.safe_dump(spec))
    assert api.validate([path]) == []
    source = api.compile(api.load(path))
    assert 'pct_start=cfg["pct_start"]' in source
    assert 'nn.CrossEntropyLoss(label_smoothing=training["loss"]["label_smoothing"])' in source
    space["training.lr_schedule.pct_start"] = {"choice": ["a", "b"]}
    space["training.loss.label_smothing"] = space.pop("training.loss.label_smoothing")
    space["training.lr_schedule.per"] = {"choice": ["step", "epoch"]}
    found = api.validate([write_spec(yaml.safe_dump(spec))])
    assert sorted((p.code, p.path) for p in found) == [
        ("E202", "tune.space[training.loss.label_smothing]"),
        ("E203", "tune.space[training.lr_schedule.pct_start].choice.0"),
        ("E203", "tune.space[training.lr_schedule.pct_start].choice.1"),
        ("E213", "tune.space[training.lr_schedule.per]"),
    ], found


@st.composite
def named(draw, framework: str, family: str):
    entries = schedules(framework) if family == "lr_schedules" else drivable(framework, "losses")
    entry = draw(st.sampled_from(entries))
    settable = [name for name in entry.settable if name not in ("mode", "reduction")]  # the loop's own rules
    chosen = draw(st.lists(st.sampled_from(settable), unique=True, max_size=4)) if settable else []
    given = {name: REQUIRED[name] for name in needed(entry)} if family == "lr_schedules" else {}
    for name in chosen:
        param = entry.params[name]
        tags = sorted(param.types & {"float", "int", "bool", "str", "none", "list", "tuple"})
        if param.choices:
            given[name] = draw(st.sampled_from(list(param.choices)))
        elif tags:
            given[name] = draw(value_of(draw(st.sampled_from(tags))))
    return entry, given


@pytest.mark.parametrize("framework", ["torch", "keras"])
@pytest.mark.parametrize("family", ["lr_schedules", "losses"])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_generated_arguments_are_checked_against_the_class(write_spec, framework, family, data):
    entry, given_args = data.draw(named(framework, family))
    spelling = data.draw(st.sampled_from(entry.names))
    field = "lr_schedule" if family == "lr_schedules" else "loss"
    dataset = {"type": "breast_cancer"} if TASKS.get(framework, {}).get(entry.name) == "binary" else None

    def found(arguments):
        return [p for p in problems(write_spec, framework, dataset, **{field: {"type": spelling, **arguments}})]

    ignored = {"E208"}  # a regression loss on a classification dataset: its meaning, tested above
    assert [p for p in found(given_args) if p.code.startswith("E") and p.code not in ignored] == [], (
        entry.path,
        given_args,
    )
    bogus = data.draw(st.text("xyz_", min_size=3, max_size=8).filter(lambda k: k not in entry.params))
    wrong = [p for p in found({**given_args, bogus: 1}) if p.code not in ignored]
    assert located(wrong) == [("E101", f"training.{field}.{bogus}")], (entry.path, wrong)
    assert entry.class_name in wrong[0].hint or "did you mean" in wrong[0].hint
    typed = [name for name in entry.settable if not entry.params[name].choices and wrong_for(entry.params[name].types)]
    typed = [name for name in typed if name not in ("mode", "reduction")]
    if typed:
        name = data.draw(st.sampled_from(typed))
        value = wrong_for(entry.params[name].types)
        bad = [p for p in found({**given_args, name: value}) if p.code not in ignored]
        assert located(bad) == [("E103", f"training.{field}.{name}")], (entry.path, name, value, bad)


@pytest.mark.parametrize("framework", ["torch", "keras"])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_loss_class_named_bare_is_the_class_with_its_defaults(write_spec, framework, data):
    """`loss: smooth_l1` means `{type: smooth_l1}`: the same problems for any spelling of any loss of the catalog,
    drivable or not, and for a name it lacks (did-you-mean from the catalog)."""
    entries = sorted(catalog.family(framework, "losses").values(), key=lambda e: e.name)
    entry = data.draw(st.sampled_from(entries))
    name = data.draw(st.sampled_from([*entry.names, entry.name + "x"]))
    if name in ("cross_entropy", "mse", "bce_with_logits", "l1", "huber"):
        return  # specc's five names: the curated loss, as before
    dataset = {"type": "breast_cancer"} if TASKS.get(framework, {}).get(entry.name) == "binary" else None
    bare = [(p.code, p.path, p.message) for p in problems(write_spec, framework, dataset, loss=name)]
    named = [(p.code, p.path, p.message) for p in problems(write_spec, framework, dataset, loss={"type": name})]
    # the same problems, each at the field the spec wrote: `loss`, where the mapping has its `type`
    as_written = [(code, path.replace("training.loss.type", "training.loss"), text) for code, path, text in named]
    assert bare == as_written
    if name == entry.name + "x":
        assert [code for code, _path, _message in bare] == ["E105"]


def test_a_loss_that_is_no_name_nor_mapping_says_what_a_loss_is(write_spec):
    for value in (1, ["huber"], "not-a-name"):
        (found,) = problems(write_spec, "torch", loss=value)
        assert found.path == "training.loss" and found.code in ("E100", "E104"), found
        assert "cross_entropy" in found.message
