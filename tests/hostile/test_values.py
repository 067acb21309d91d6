"""Issue 15, class 6: values that validated but could not run, or meant different things to different readers.

Before: a seed of 2**32 validated and crashed numpy after Ray had started; `1:30` was read as 90, `0x1F` as 31 and
`017` as 15 (YAML 1.1) while editors and schema tools read them as YAML 1.2 does; and `specc show` wrote the
string '1e5' plain, which read back as the float 100000.0.
"""

from __future__ import annotations

import pytest

from specc import api
from specc.cli import main
from specc.read.document import parse_text
from specc.spec.base import MAX_SEED
from specc.spec.dump import dump_yaml
from tests.conftest import MINIMAL


@pytest.mark.parametrize(
    "field, section",
    [
        ("training.seed", "training: {epochs: 1, seed: %d}"),
        ("dataset.shuffle_seed", "dataset: {type: digits, shuffle_seed: %d}"),
        ("dataset.seed", "dataset: {type: synthetic_classification, seed: %d}"),
        ("tune.search.seed", "tune: {metric: val_loss, mode: min, search: {type: random, seed: %d}}"),
    ],
)
def test_seeds_beyond_what_numpy_and_torch_take_are_refused(write_spec, field, section):
    key = section.split(":")[0]
    base = "".join(line for line in MINIMAL.splitlines(True) if not line.startswith(key + ":"))
    if key == "tune":
        base += "training: {epochs: 1}\n" if "training" not in base else ""
    assert api.check_file(write_spec(base + section % MAX_SEED + "\n")).problems == []
    for seed in (2**32, 2**64, MAX_SEED + 1):
        problems = api.check_file(write_spec(base + section % seed + "\n")).problems
        assert [(p.code, p.path) for p in problems] == [("E106", field)]


@pytest.mark.parametrize("plain", ["1:30", "1:30:00", "0x1F", "0b101", "017", "0o17", "-0x10"])
def test_numbers_yaml_1_1_and_1_2_read_differently_are_refused(write_spec, plain):
    problems = api.check_file(write_spec(MINIMAL.replace("epochs: 2", f"epochs: {plain}"))).problems
    assert [(p.code, p.path, p.line) for p in problems] == [("E013", "training.epochs", 6)]
    assert "quote it" in problems[0].hint


@pytest.mark.parametrize("quoted", ["'1:30'", '"0x1F"'])
def test_quoted_they_are_text(write_spec, quoted):
    path = write_spec(MINIMAL + f"description: {quoted}\n")
    assert api.check_file(path).problems == []


def test_an_override_is_read_the_same_way(write_spec, capsys):
    assert main(["validate", str(write_spec(MINIMAL)), "--set", "training.epochs=010"]) == 1
    assert "E013" in capsys.readouterr().out


@pytest.mark.parametrize("text", ["1e5", "1E109", "1:30", "0x1F", "0o17", "017", "a\x85b", "x\u2028y", "plain"])
def test_what_specc_writes_reads_back_as_written(text):
    assert parse_text(dump_yaml({"x": text}), "<dumped>")[0] == {"x": text}


def test_show_output_validates_to_the_same_spec(write_spec):
    first = api.load(write_spec(MINIMAL + "description: '1e5'\n"))
    again = api.load(write_spec(api.show(first), "shown.yaml"))
    assert again.description == "1e5" and api.show(again) == api.show(first)
