"""Whatever the input, validate reports problems; it never raises (hypothesis)."""

from __future__ import annotations

import os

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from specc import api
from specc.spec.errors import CODES
from tests.conftest import ROOT

FUZZ = settings(
    max_examples=int(os.environ.get("SPECC_FUZZ_EXAMPLES", "150")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
BASE = yaml.safe_load((ROOT / "specs" / "digits_asha.yaml").read_text())

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**12), 10**12),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
    st.sampled_from(["mlp", "cnn", "asha", "pbt", "grid", "val_loss >= 1", "1e-4", "0x1F"]),
)
trees = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(st.text(max_size=12), children, max_size=4)
    ),
    max_leaves=20,
)


def assert_reported(report) -> None:
    for problem in report.problems:
        assert problem.code in CODES
        assert problem.message
        str(problem)  # formats without error
    if report.ok:  # no errors: the spec was read in full
        assert report.experiment is not None


@FUZZ
@given(st.binary(max_size=400))
def test_random_bytes(tmp_path, data):
    path = tmp_path / "fuzz.yaml"
    path.write_bytes(data)
    assert_reported(api.check_file(path))


@FUZZ
@given(st.text(alphabet=st.sampled_from(list("abc:-[]{}&*!|>'\"#%@`, \n\t?0.1")), max_size=200))
def test_random_yaml_text(tmp_path, text):
    path = tmp_path / "fuzz.yaml"
    path.write_text(text, encoding="utf-8")
    assert_reported(api.check_file(path))


@FUZZ
@given(trees)
def test_random_documents(tmp_path, tree):
    path = tmp_path / "fuzz.yaml"
    path.write_text(yaml.safe_dump(tree), encoding="utf-8")
    assert_reported(api.check_file(path))


def _paths(node, prefix=()):
    yield prefix
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _paths(value, (*prefix, index))


ALL_PATHS = [path for path in _paths(BASE) if path]


def _mutated(data, path, value, delete):
    import copy

    data = copy.deepcopy(data)
    parent = data
    for part in path[:-1]:
        parent = parent[part]
    if delete and isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return data


@FUZZ
@given(st.lists(st.tuples(st.sampled_from(ALL_PATHS), trees, st.booleans()), min_size=1, max_size=4))
def test_spec_shaped_trees(tmp_path, mutations):
    data = BASE
    for path, value, delete in mutations:
        try:
            data = _mutated(data, path, value, delete)
        except (KeyError, IndexError, TypeError):
            continue  # an earlier mutation removed the path
    path = tmp_path / "fuzz.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    report = api.check_file(path)
    assert_reported(report)
    assert all(p.line is not None for p in report.problems if p.code != "E022")


@FUZZ
@given(st.lists(st.text(max_size=30), max_size=3))
def test_random_overrides(overrides):
    assert_reported(api.check_file(ROOT / "specs" / "digits_asha.yaml", overrides))
