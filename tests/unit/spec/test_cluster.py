"""`cluster` (SPEC §6): the Ray address and the job's runtime environment."""

from __future__ import annotations

import pytest


def test_defaults(shown):
    assert shown("")["cluster"] == {
        "address": None,
        "runtime_env": {
            "env_vars": {},
            "pip": None,
            "uv": None,
            "conda": None,
            "py_modules": None,
            "image_uri": None,
            "config": None,
        },
        "working_dir": None,
        "excludes": None,
        "include": None,
        "init_timeout_s": 60,
    }


@pytest.mark.parametrize(
    "address",
    [
        "null",
        "auto",
        "local",
        "'head:6379'",
        "'10.0.0.1:6379'",
        "'head.example.com:6379'",
        "'ray://head:10001'",
        "'[::1]:6379'",
        "'ray://[::1]:10001'",
        "'head:1'",
        "'head:65535'",
    ],
)
def test_accepted_addresses(problems, address):
    assert problems(f"cluster: {{address: {address}}}") == []


@pytest.mark.parametrize(
    "address",
    [
        "http://x",
        "http://head:8265",
        "head",
        "head:",
        ":6379",
        "head:0",
        "head:65536",
        "head:70000",
        "ray://",
        "ray://head",
        "head:6379/",
        "head :6379",
        "[::1]",
        "::1:6379",
        "AUTO",
        "",
    ],
)
def test_rejected_addresses(report, address):
    (problem,) = report(f"cluster: {{address: '{address}'}}").problems
    assert (problem.code, problem.path) == ("E107", "cluster.address")
    assert problem.message == f"{address!r} is not a Ray address: use auto, host:port or ray://host:port"


def test_address_must_be_a_string(problems):
    assert problems("cluster: {address: 6379}") == [("E103", "cluster.address")]


def test_env_vars_are_strings(problems):
    assert problems("cluster: {runtime_env: {env_vars: {OMP_NUM_THREADS: '1', MODE: 'on'}}}") == []


@pytest.mark.parametrize("value", ["1", "0.5", "true"])
def test_env_var_values_that_are_not_strings_ask_for_quotes(report, value):
    (problem,) = report(f"cluster: {{runtime_env: {{env_vars: {{OMP_NUM_THREADS: {value}}}}}}}").problems
    assert (problem.code, problem.path) == ("E103", "cluster.runtime_env.env_vars.OMP_NUM_THREADS")
    assert problem.hint == "quote it to make it a string"


def test_bad_env_var_name_points_at_the_key(report):
    (problem,) = report("cluster:\n  runtime_env:\n    env_vars:\n      1X: a\n").problems
    assert (problem.code, problem.line, problem.column, problem.path) == (
        "E107",
        10,
        7,
        "cluster.runtime_env.env_vars.1X",
    )
    assert "metric" not in problem.message


@pytest.mark.parametrize(
    "runtime_env",
    [
        "{pip: [pandas, 'torch>=2']}",
        "{pip: {packages: [pandas]}}",
        "{pip: {packages: [pandas], pip_check: true, pip_version: '==24.0'}}",
        "{uv: [pandas]}",
        "{conda: my-env}",
        "{conda: {dependencies: [numpy]}}",
        "{py_modules: [./mylib]}",
        "{image_uri: 'rayproject/ray:2.9.0'}",
        "{config: {setup_timeout_seconds: -1, eager_install: true}}",
    ],
)
def test_runtime_env_fields(problems, runtime_env):
    assert problems(f"cluster: {{runtime_env: {runtime_env}}}") == []


def test_pip_as_a_mapping_is_shown_as_given(shown):
    pip = shown("cluster: {runtime_env: {pip: {packages: [pandas]}}}")["cluster"]["runtime_env"]["pip"]
    assert pip == {"packages": ["pandas"], "pip_check": False, "pip_version": None}


@pytest.mark.parametrize(
    ("pip", "expected"),
    [
        ("{packages: []}", [("E109", "cluster.runtime_env.pip.packages")]),
        ("{}", [("E102", "cluster.runtime_env.pip.packages")]),
        ("{packages: [x], extra: 1}", [("E101", "cluster.runtime_env.pip.extra")]),
    ],
)
def test_pip_mapping_errors_name_the_field(problems, pip, expected):
    assert problems(f"cluster: {{runtime_env: {{pip: {pip}}}}}") == expected


def test_pip_as_a_requirements_file(problems):
    assert problems("cluster: {runtime_env: {pip: requirements.txt}}") == []


@pytest.mark.parametrize(
    ("cluster", "expected"),
    [
        (
            "{runtime_env: {config: {setup_timeout_seconds: -2}}}",
            [("E106", "cluster.runtime_env.config.setup_timeout_seconds")],
        ),
        ("{runtime_env: {env_var: {}}}", [("E101", "cluster.runtime_env.env_var")]),
        ("{working_dir: ''}", [("E107", "cluster.working_dir")]),
        ("{init_timeout_s: 0}", [("E106", "cluster.init_timeout_s")]),
        ("{excludes: [runs, '']}", [("E107", "cluster.excludes.1")]),
        ("{runtime_env: {image_uri: ''}}", [("E107", "cluster.runtime_env.image_uri")]),
    ],
)
def test_rejected(problems, cluster, expected):
    assert problems(f"cluster: {cluster}") == expected


@pytest.mark.parametrize(("key", "where"), [("working_dir", "cluster.working_dir"), ("excludes", "cluster.excludes")])
def test_runtime_env_keys_that_live_on_cluster_say_so(report, key, where):
    (problem,) = report(f"cluster: {{runtime_env: {{{key}: [x]}}}}").problems
    assert (problem.code, problem.path) == ("E101", f"cluster.runtime_env.{key}")
    assert where in problem.hint
