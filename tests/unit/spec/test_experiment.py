"""The root of a spec (SPEC §3): format version, name, description, framework, and its unknown keys."""

from __future__ import annotations

import pytest

from specc import api
from specc.spec import Experiment
from specc.spec.errors import SpecError
from tests.conftest import MINIMAL


def problems_of(write_spec, text: str) -> list[tuple[str, str]]:
    return [(p.code, p.path) for p in api.check_file(write_spec(text)).problems]


def test_minimal_spec_loads(write_spec):
    experiment = api.load(write_spec(MINIMAL))
    assert isinstance(experiment, Experiment)
    assert (experiment.specc, experiment.name, experiment.framework) == (1, "tiny", "torch")


def test_optional_sections_and_fields(shown):
    resolved = shown("")
    optional = ("description", "tune", "scheduler", "stop")
    assert [resolved[key] for key in optional] == [None] * len(optional)
    assert {"scaling", "run", "cluster"} <= set(resolved)
    assert "extends" not in resolved  # show prints the merged result, not where it came from


def test_description_is_kept(shown):
    assert shown("description: MLP on digits, lr search")["description"] == "MLP on digits, lr search"


@pytest.mark.parametrize("version", [2, 0, 99])
def test_unsupported_version_names_the_supported_ones(report, version):
    (problem,) = report(f"specc: {version}").problems
    assert (problem.code, problem.path) == ("E108", "specc")
    assert problem.message == f"format version {version} is not supported; this specc reads version 1"


def test_load_raises_spec_error_with_every_problem(write_spec):
    path = write_spec(MINIMAL.replace("specc: 1", "specc: 2").replace("name: tiny", "name: Tiny"))
    with pytest.raises(SpecError) as caught:
        api.load(path)
    assert [(p.code, p.path) for p in caught.value.problems] == [("E108", "specc"), ("E107", "name")]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("specc: '1'", [("E103", "specc")]),
        ("specc: 1.0", [("E103", "specc")]),
        ("description: 5", [("E103", "description")]),
        ("framework: pytorch", [("E104", "framework")]),
        ("framework: jax", [("E104", "framework")]),
        ("name: 123", [("E103", "name")]),
    ],
)
def test_top_level_types_and_choices(problems, line, expected):
    assert problems(line) == expected


@pytest.mark.parametrize("name", ["tiny", "digits-mlp-asha", "exp_2", "0day", "a" * 64])
def test_accepted_names(problems, name):
    assert problems(f"name: {name}") == []


@pytest.mark.parametrize("name", ["Tiny", "-tiny", "_tiny", "my exp", "exp.v2", "café", "a" * 65, "''"])
def test_rejected_names(report, name):
    (problem,) = report(f"name: {name}").problems
    assert (problem.code, problem.path) == ("E107", "name")
    assert "lowercase letters, digits, '_' and '-'" in problem.message


@pytest.mark.parametrize("key", ["specc", "name", "framework", "model", "dataset", "training"])
def test_required_keys(write_spec, key):
    text = "".join(line for line in MINIMAL.splitlines(keepends=True) if not line.startswith(f"{key}:"))
    report = api.check_file(write_spec(text))
    (problem,) = report.problems
    assert (problem.code, problem.path, problem.line, problem.column) == ("E102", key, 1, 1)


@pytest.mark.parametrize(
    ("key", "hint"),
    [
        ("descripton", "did you mean 'description'?"),
        ("frameworks", "did you mean 'framework'?"),
        ("tunee", "did you mean 'tune'?"),
        ("schedular", "did you mean 'scheduler'?"),
        ("epochs", "the epoch count is training.epochs"),
    ],
)
def test_unknown_top_level_key(report, key, hint):
    (problem,) = report(f"{key}: 1").problems
    assert (problem.code, problem.path) == ("E101", key)
    assert problem.message == f"unknown key '{key}' in the top level"
    assert problem.hint == hint


def test_unknown_top_level_key_without_a_near_match_lists_the_keys(report):
    (problem,) = report("xyzzy: 1").problems
    assert problem.hint == (
        "allowed keys: specc, name, description, extends, framework, objective, model, dataset, training, "
        "scaling, tune, scheduler, stop, run, cluster"
    )


def test_every_problem_of_a_file_is_reported(problems):
    spec = (
        "name: Bad Name\n"
        "model: {type: mlp, dropout: 1.0}\n"
        "dataset: {type: digits, batch_size: '64'}\n"
        "training: {epochs: 0}\n"
        "run: {max_failures: -2}\n"
    )
    assert problems(spec) == [
        ("E107", "name"),
        ("E106", "model.dropout"),
        ("E103", "dataset.batch_size"),
        ("E106", "training.epochs"),
        ("E106", "run.max_failures"),
    ]


@pytest.mark.parametrize("section", ["model", "dataset", "training", "scaling", "run", "cluster", "tune"])
def test_sections_must_be_mappings(problems, section):
    assert problems(f"{section}: [1]") == [("E103", section)]


def test_tensorflow_framework(problems):
    assert problems("framework: tensorflow") == []


PBT = """
training: {epochs: 6}
tune:
  metric: val_accuracy
  mode: max
  space: {training.optimizer.lr: {loguniform: [1.0e-3, 0.1]}}
scheduler:
  type: pbt
  mutations: {training.optimizer.lr: {loguniform: [1.0e-3, 0.1]}}
"""


def test_population_schedulers_keep_more_checkpoints_by_default(shown):
    assert shown("")["run"]["checkpoints_to_keep"] == 2
    assert shown(PBT)["run"]["checkpoints_to_keep"] == 4  # they read other trials' checkpoints
    assert shown(PBT + "run: {checkpoints_to_keep: null}")["run"]["checkpoints_to_keep"] is None
    assert shown(PBT + "run: {checkpoints_to_keep: 6}")["run"]["checkpoints_to_keep"] == 6
