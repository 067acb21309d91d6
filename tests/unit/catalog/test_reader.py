"""The reader: every name form finds its class, no spelling names two, the decisions specc made are in the data,
and reading imports nothing heavy."""

from __future__ import annotations

import collections
import json
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from specc import catalog
from specc.catalog import Entry, PythonDefault, did_you_mean, family, lookup
from tests.conftest import ROOT

TAGS = {"float", "int", "bool", "str", "none", "tuple", "list", "dict", "callable", "class", "tensor", "enum"}
TAGS |= {"object", "any"}
EVERY_ENTRY = [
    (framework, name, entry)
    for framework in catalog.FRAMEWORKS
    for name in catalog.families(framework)
    for entry in family(framework, name).values()
]


@pytest.mark.parametrize(
    ("framework", "family_name", "names", "class_name"),
    [
        ("torch", "optimizers", ["adadelta", "Adadelta"], "Adadelta"),
        ("torch", "optimizers", ["radam", "RAdam"], "RAdam"),
        ("torch", "optimizers", ["nadam", "NAdam"], "NAdam"),
        ("torch", "optimizers", ["asgd", "ASGD"], "ASGD"),
        ("torch", "optimizers", ["sgd", "SGD"], "SGD"),
        ("torch", "optimizers", ["adamw", "AdamW"], "AdamW"),
        ("torch", "optimizers", ["rmsprop", "RMSprop"], "RMSprop"),
        ("torch", "lr_schedules", ["one_cycle_lr", "OneCycleLR", "one_cycle"], "OneCycleLR"),
        (
            "torch",
            "lr_schedules",
            ["cosine_annealing_warm_restarts", "CosineAnnealingWarmRestarts", "cosine_warm_restarts"],
            "CosineAnnealingWarmRestarts",
        ),
        (
            "torch",
            "lr_schedules",
            ["reduce_lr_on_plateau", "ReduceLROnPlateau", "reduce_on_plateau"],
            "ReduceLROnPlateau",
        ),
        ("torch", "lr_schedules", ["linear_lr", "LinearLR", "linear"], "LinearLR"),
        ("torch", "lr_schedules", ["polynomial_lr", "PolynomialLR", "polynomial"], "PolynomialLR"),
        ("torch", "lr_schedules", ["cyclic_lr", "CyclicLR", "cyclic"], "CyclicLR"),
        ("torch", "losses", ["cross_entropy_loss", "CrossEntropyLoss", "cross_entropy"], "CrossEntropyLoss"),
        ("torch", "losses", ["huber_loss", "HuberLoss", "huber"], "HuberLoss"),
        ("torch", "losses", ["bce_with_logits", "BCEWithLogitsLoss"], "BCEWithLogitsLoss"),
        ("torch", "activations", ["gelu", "GELU"], "GELU"),
        ("torch", "activations", ["silu", "SiLU"], "SiLU"),
        ("torch", "activations", ["leaky_relu", "LeakyReLU"], "LeakyReLU"),
        ("torch", "augmentations", ["random_affine", "RandomAffine"], "RandomAffine"),
        ("keras", "optimizers", ["adadelta", "Adadelta"], "Adadelta"),
        ("keras", "lr_schedules", ["cosine_decay_restarts", "CosineDecayRestarts"], "CosineDecayRestarts"),
        ("keras", "losses", ["huber", "Huber"], "Huber"),
        ("keras", "losses", ["kl_divergence", "KLDivergence"], "KLDivergence"),
        ("keras", "activations", ["mish"], "mish"),
        ("keras", "augmentations", ["random_translation", "RandomTranslation"], "RandomTranslation"),
        ("ray_tune", "searchers", ["tune_bohb", "TuneBOHB", "bohb"], "TuneBOHB"),
        ("ray_tune", "searchers", ["nevergrad_search", "NevergradSearch", "nevergrad"], "NevergradSearch"),
        ("ray_tune", "searchers", ["hebo", "ax", "zoopt", "optuna", "hyperopt", "bayesopt", "random"], None),
        ("ray_tune", "schedulers", ["asha", "ASHAScheduler", "AsyncHyperBandScheduler"], "AsyncHyperBandScheduler"),
        ("ray_tune", "schedulers", ["hyperband_for_bohb", "HyperBandForBOHB"], "HyperBandForBOHB"),
        ("ray_tune", "schedulers", ["pb2", "PB2"], "PB2"),
        ("ray_tune", "tune_failure_config", ["failure_config", "FailureConfig"], "FailureConfig"),
    ],
)
def test_each_name_form_finds_the_class(framework, family_name, names, class_name):
    found = [lookup(framework, family_name, name) for name in names]
    assert all(isinstance(entry, Entry) for entry in found), dict(zip(names, found, strict=True))
    if class_name:
        assert {entry.class_name for entry in found} == {class_name}


def test_spec_searcher_and_scheduler_names_are_all_there():
    """SPEC §13's searchers and the schedulers specc names today, each finding its own Ray class."""
    searchers = ["random", "optuna", "hyperopt", "bayesopt", "bohb", "nevergrad", "hebo", "ax", "zoopt"]
    schedulers = ["fifo", "asha", "hyperband", "hyperband_for_bohb", "median_stopping", "pbt", "pb2"]
    assert len({lookup("ray_tune", "searchers", name).class_name for name in searchers}) == len(searchers)
    assert len({lookup("ray_tune", "schedulers", name).class_name for name in schedulers}) == len(schedulers)


def test_an_entry_knows_its_import_path_and_arguments():
    adadelta = lookup("torch", "optimizers", "adadelta")
    assert adadelta.path == "torch.optim.Adadelta"
    assert adadelta.params["rho"].default == 0.9 and adadelta.params["rho"].type == "float"
    assert adadelta.params["params"].supplied and "params" not in adadelta.settable
    assert adadelta.doc.startswith("Implements Adadelta")
    plateau = lookup("torch", "lr_schedules", "reduce_on_plateau")
    assert plateau.params["mode"].choices == ("min", "max")
    assert lookup("torch", "losses", "cross_entropy").path == "torch.nn.CrossEntropyLoss"
    assert lookup("ray_tune", "schedulers", "pb2").path == "ray.tune.schedulers.pb2.PB2"
    assert lookup("ray_tune", "searchers", "optuna").path == "ray.tune.search.optuna.OptunaSearch"


def test_failure_configs_of_train_and_tune_are_both_there():
    train = lookup("ray_tune", "train_failure_config", "FailureConfig")
    tune = lookup("ray_tune", "tune_failure_config", "FailureConfig")
    assert (train.path, tune.path) == ("ray.train.FailureConfig", "ray.tune.FailureConfig")
    assert {"max_failures", "fail_fast"} <= set(train.params) & set(tune.params)


def test_defaults_json_cannot_hold_are_marked():
    policy = lookup("torch", "augmentations", "AutoAugment").params["policy"]
    assert policy.default == PythonDefault("AutoAugmentPolicy.IMAGENET")
    for _, _, entry in EVERY_ENTRY:
        for param in entry.params.values():
            if isinstance(param.default, PythonDefault):
                assert "0x" not in param.default.text and "/" not in param.default.text


@pytest.mark.parametrize(
    ("framework", "family_name", "name", "because"),
    [
        ("torch", "optimizers", "lbfgs", "closure"),
        ("torch", "optimizers", "SparseAdam", "sparse gradients"),
        ("torch", "lr_schedules", "LambdaLR", "Python function"),
        ("torch", "lr_schedules", "MultiplicativeLR", "Python function"),
        ("torch", "lr_schedules", "SequentialLR", "other scheduler objects"),
        ("torch", "lr_schedules", "ChainedScheduler", "other scheduler objects"),
        ("torch", "augmentations", "Compose", "other transform objects"),
        ("ray_tune", "searchers", "Repeater", "tune.repeat"),
    ],
)
def test_what_the_loop_cannot_drive_says_why(framework, family_name, name, because):
    assert because in lookup(framework, family_name, name).not_drivable


def test_the_familiar_classes_are_drivable():
    for framework, family_name, name in [
        ("torch", "optimizers", "adam"),
        ("torch", "lr_schedules", "one_cycle"),
        ("torch", "losses", "cross_entropy"),
        ("keras", "optimizers", "lion"),
        ("ray_tune", "searchers", "bohb"),
    ]:
        assert lookup(framework, family_name, name).not_drivable is None


@pytest.mark.parametrize("framework", catalog.FRAMEWORKS)
def test_no_spelling_names_two_classes_of_a_family(framework):
    """Read from the file itself, not through the reader's index (which would keep only one of the two)."""
    data = json.loads((catalog.DIRECTORY / f"{framework}.json").read_text(encoding="utf-8"))
    for family_name, entries in data["families"].items():
        owners = collections.defaultdict(set)
        for name, item in entries.items():
            for spelling in {name, item["class_name"], *item["aliases"]}:
                owners[spelling].add(name)
        shared = {spelling: names for spelling, names in owners.items() if len(names) > 1}
        assert shared == {}, f"{framework} {family_name}"


def test_every_parameter_is_well_formed():
    for framework, family_name, entry in EVERY_ENTRY:
        where = f"{framework} {family_name} {entry.class_name}"
        assert entry.module.split(".")[0] in {"torch", "torchvision", "tf_keras", "ray"}, where
        for param in entry.params.values():
            assert param.types <= TAGS, (where, param)
            assert not (param.required and param.default is not None), (where, param)
            assert param.kind in {"positional_only", "positional_or_keyword", "keyword_only"}, (where, param)


@given(st.sampled_from(EVERY_ENTRY))
def test_any_entry_round_trips_through_each_of_its_names(chosen):
    framework, family_name, entry = chosen
    assert lookup(framework, family_name, entry.name) == lookup(framework, family_name, entry.class_name) == entry
    assert all(lookup(framework, family_name, alias) == entry for alias in entry.aliases)


def test_unknown_names_get_close_spellings():
    assert lookup("torch", "optimizers", "adadelt") is None
    assert did_you_mean("torch", "optimizers", "adadelt") == ["adadelta"]
    assert did_you_mean("torch", "optimizers", "AdaDelta") == ["Adadelta"]
    assert "cosine_warm_restarts" in did_you_mean("torch", "lr_schedules", "cosine_restarts")
    assert did_you_mean("ray_tune", "searchers", "nevergrd") == ["nevergrad"]
    assert did_you_mean("torch", "optimizers", "zzzz") == []


def test_did_you_mean_gives_one_spelling_per_class():
    suggested = did_you_mean("torch", "lr_schedules", "one_cycl", limit=5)
    classes = [lookup("torch", "lr_schedules", name).class_name for name in suggested]
    assert len(classes) == len(set(classes)) and classes[0] == "OneCycleLR"


def test_an_unknown_family_or_framework_is_a_programming_error():
    with pytest.raises(ValueError, match="no family 'optimisers'"):
        lookup("torch", "optimisers", "adam")
    with pytest.raises(ValueError, match="no catalog for 'jax'"):
        lookup("jax", "optimizers", "adam")


def test_entries_cannot_be_changed_through_the_cache():
    entry = lookup("torch", "optimizers", "adam")
    with pytest.raises(TypeError):
        entry.params["lr"] = None
    with pytest.raises(TypeError):
        family("torch", "optimizers")["new"] = entry


def test_versions_are_recorded_per_file():
    assert set(catalog.versions("torch")) == {"torch", "torchvision"}
    assert set(catalog.versions("keras")) == {"tensorflow", "tf-keras"}
    assert set(catalog.versions("ray_tune")) == {"ray"}


def test_reading_the_catalog_imports_nothing_heavy():
    probe = (
        "import sys, specc.catalog as c\n"
        "for f in c.FRAMEWORKS:\n"
        "    [c.family(f, name) for name in c.families(f)]\n"
        "c.did_you_mean('torch', 'optimizers', 'adadelt')\n"
        "print(sorted(m for m in ('torch', 'ray', 'tensorflow', 'tf_keras', 'keras', 'numpy', 'torchvision')"
        " if m in sys.modules))\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
