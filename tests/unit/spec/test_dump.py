"""The resolved spec a run records: what `--resume` compares and what names a spec by its sha256."""

import hashlib

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from specc import api
from specc.compiler.resolve import spec_hash
from specc.spec.dump import LATER_FIELDS, RECORD_WIDTH, dump_compact, dump_recorded, dump_spec, dump_yaml
from tests.conftest import ROOT

# specs/digits_mlp.yaml as the first release recorded it (block layout). A run it started must still --resume: the
# runtime refuses one whose spec.resolved.yaml records other data, whatever its layout.
FIRST_RELEASE_SHA256 = "7c1e4f25fb355eeb3a67f10dc330c05faf4ce420b5cc166531f94d39417240d5"


def later_keys(text: str) -> set[str]:
    data = yaml.safe_load(text)
    return {
        f"{section}.{name}"
        for (section, kind), names in LATER_FIELDS.items()
        for name in names
        if name in (data.get(section) or {}) and kind in (None, data[section].get("type"))
    }


def test_a_spec_without_second_release_fields_records_what_the_first_release_recorded():
    import specc_runtime

    experiment = api.load("specs/digits_mlp.yaml")
    first_release = dump_yaml(yaml.safe_load(dump_recorded(experiment)))  # the same data in the first layout
    assert hashlib.sha256(first_release.encode()).hexdigest() == FIRST_RELEASE_SHA256
    assert specc_runtime.same_spec(first_release.encode(), dump_recorded(experiment))  # its runs still --resume
    assert not specc_runtime.same_spec(first_release.replace("lr: 0.1", "lr: 0.2").encode(), dump_recorded(experiment))
    assert spec_hash(experiment) == hashlib.sha256(dump_recorded(experiment).encode()).hexdigest()
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
        "run.fail_fast",
        "dataset.shuffle_validation",
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


# --- the compact record a compiled script carries ----------------------------------------------------------------

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**12), 10**12),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=140),
)
KEYS = st.text(st.characters(whitelist_categories=("L", "N"), whitelist_characters="._-"), min_size=1, max_size=30)
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=6) | st.dictionaries(KEYS, inner, max_size=8))


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(KEYS, VALUES, min_size=1, max_size=10))
def test_the_compact_record_reads_back_as_the_data_it_records(data):
    """Whatever the keys, values and nesting (long strings, strings that read as numbers, empty collections), the
    compact record parses to the same data as the block layout, so a run recorded in either layout resumes."""
    text = dump_compact(data)
    assert yaml.safe_load(text) == yaml.safe_load(dump_yaml(data)) == data


@pytest.mark.parametrize("spec", sorted(path.name for path in (ROOT / "specs").glob("*.yaml")))
def test_every_example_spec_is_recorded_compactly_within_the_line_width(spec):
    experiment = api.load(ROOT / "specs" / spec)
    text = dump_recorded(experiment)
    assert yaml.safe_load(text) == yaml.safe_load(dump_yaml(yaml.safe_load(text)))
    assert max(len(line) for line in text.splitlines()) <= RECORD_WIDTH
    assert len(text.splitlines()) < len(dump_yaml(yaml.safe_load(text)).splitlines())
