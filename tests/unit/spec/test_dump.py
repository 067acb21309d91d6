"""The resolved spec a run records: what `--resume` compares and what names a spec by its sha256."""

import pytest
import yaml

from specc import api
from specc.compiler.resolve import spec_hash
from specc.spec.dump import LATER_FIELDS, dump_recorded, dump_spec

# specs/digits_mlp.yaml as the first release recorded it. A run it started must still --resume: the compiled
# script refuses one whose spec.resolved.yaml differs from its own by a single character.
FIRST_RELEASE_SHA256 = "7c1e4f25fb355eeb3a67f10dc330c05faf4ce420b5cc166531f94d39417240d5"


def later_keys(text: str) -> set[str]:
    data = yaml.safe_load(text)
    return {
        f"{section}.{name}"
        for (section, kind), names in LATER_FIELDS.items()
        for name in names
        if name in (data[section] or {}) and kind in (None, data[section].get("type"))
    }


def test_a_spec_without_second_release_fields_records_what_the_first_release_recorded():
    experiment = api.load("specs/digits_mlp.yaml")
    assert spec_hash(experiment) == FIRST_RELEASE_SHA256
    assert later_keys(dump_recorded(experiment)) == set()


def test_specc_show_still_lists_every_default():
    experiment = api.load("specs/digits_cnn.yaml")
    assert later_keys(dump_spec(experiment)) == {
        "dataset.global_batch_size",
        "dataset.shuffle",
        "dataset.standardize",
        "dataset.subset",
        "dataset.augment",
        "dataset.loader_workers",
        "scaling.data_cpus",
        "training.steps_per_epoch",
        "training.validation_steps",
        "training.train_metrics",
        "model.pool",
        "model.padding",
        "model.batch_norm",
    }


@pytest.mark.parametrize(
    ("override", "recorded"),
    [
        (["training.steps_per_epoch=4"], {"training.steps_per_epoch"}),
        (["training.train_metrics=true"], {"training.train_metrics"}),
        (["dataset.shuffle=false"], {"dataset.shuffle"}),
        (["model.padding=valid", "model.channels=[8]"], {"model.padding"}),
        (["model.batch_norm=true"], {"model.batch_norm"}),
    ],
)
def test_a_second_release_field_is_recorded_once_it_differs_from_its_default(override, recorded):
    experiment = api.load("specs/digits_cnn.yaml", overrides=override)
    assert later_keys(dump_recorded(experiment)) == recorded
    assert yaml.safe_load(dump_recorded(experiment)) != yaml.safe_load(dump_recorded(api.load("specs/digits_cnn.yaml")))


def test_stop_all_when_is_recorded_only_when_used():
    """A search with a stop section (digits_asha) records no all_when at its default, so its runs still --resume."""
    experiment = api.load("specs/digits_asha.yaml")
    assert "all_when" in yaml.safe_load(dump_spec(experiment))["stop"]
    assert later_keys(dump_recorded(experiment)) == set()
    used = api.load("specs/digits_asha.yaml", overrides=["stop.all_when=['val_accuracy >= 0.99']"])
    assert later_keys(dump_recorded(used)) == {"stop.all_when"}


def test_a_spec_without_a_stop_section_records_none():
    assert yaml.safe_load(dump_recorded(api.load("specs/digits_mlp.yaml"))).get("stop") is None
