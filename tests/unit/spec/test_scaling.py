"""`scaling` (SPEC §6): ray.train.ScalingConfig's fields, defaults and constraints."""

from __future__ import annotations

import pytest


def test_defaults(shown):
    assert shown("")["scaling"] == {
        "num_workers": 1,
        "use_gpu": False,
        "resources_per_worker": None,
        "placement_strategy": "PACK",
        "backend": "gloo",  # torch on CPU
        "accelerator_type": None,
        "data_cpus": None,
    }


@pytest.mark.parametrize("strategy", ["PACK", "SPREAD", "STRICT_PACK", "STRICT_SPREAD"])
def test_placement_strategies(problems, strategy):
    assert problems(f"scaling: {{num_workers: 2, placement_strategy: {strategy}}}") == []


@pytest.mark.parametrize(
    ("scaling", "expected"),
    [
        ("{num_workers: 0}", []),  # Ray Train's local mode
        ("{num_workers: 8, use_gpu: true}", []),
        ("{backend: gloo}", []),
        ("{backend: nccl, use_gpu: true}", []),
        ("{accelerator_type: A100, use_gpu: true}", []),
        ("{resources_per_worker: {CPU: 2, GPU: 1}, use_gpu: true}", []),
        ("{resources_per_worker: {CPU: 0.5, memory: 1000000000, custom_res: 1}}", []),
        ("{resources_per_worker: {'accelerator_type:A100': 0.001}}", []),
    ],
)
def test_accepted(problems, scaling, expected):
    assert problems(f"scaling: {scaling}") == expected


@pytest.mark.parametrize(
    ("scaling", "expected"),
    [
        ("{num_workers: -1}", [("E106", "scaling.num_workers")]),
        ("{num_workers: '2'}", [("E103", "scaling.num_workers")]),
        ("{num_workers: 2.5}", [("E103", "scaling.num_workers")]),
        ("{use_gpu: 'false'}", [("E103", "scaling.use_gpu")]),
        ("{placement_strategy: spread}", [("E104", "scaling.placement_strategy")]),
        ("{backend: mpi}", [("E104", "scaling.backend")]),
        ("{resources_per_worker: {CPU: -1}}", [("E106", "scaling.resources_per_worker.CPU")]),
        ("{resources_per_worker: {CPU: '2'}}", [("E103", "scaling.resources_per_worker.CPU")]),
        ("{resources_per_worker: [CPU]}", [("E103", "scaling.resources_per_worker")]),
        ("{accelerator_type: ''}", [("E107", "scaling.accelerator_type")]),
        # rules across fields
        ("{backend: nccl}", [("E211", "scaling.backend")]),
        ("{resources_per_worker: {GPU: 1}}", [("E211", "scaling.resources_per_worker.GPU")]),
    ],
)
def test_rejected(problems, scaling, expected):
    assert problems(f"scaling: {scaling}") == expected


def test_placement_strategy_suggests_the_closest(report):
    (problem,) = report("scaling: {placement_strategy: PACKED}").problems
    assert problem.message == "'PACKED' is not one of: PACK, SPREAD, STRICT_PACK, STRICT_SPREAD"
    assert problem.hint == "did you mean 'PACK'?"


def test_backend_is_torch_only(problems):
    assert problems("framework: tensorflow\nscaling: {backend: gloo}") == [("E207", "scaling.backend")]


@pytest.mark.parametrize(
    ("key", "hint"),
    [
        ("num_gpus", "did you mean 'use_gpu'?"),
        (
            "type",
            "allowed keys: num_workers, use_gpu, resources_per_worker, placement_strategy, backend, accelerator_type, "
            "data_cpus",
        ),
    ],
)
def test_unknown_keys(report, key, hint):
    (problem,) = report(f"scaling: {{{key}: 1}}").problems
    assert (problem.code, problem.path, problem.hint) == ("E101", f"scaling.{key}", hint)


def test_bad_resource_name_points_at_the_key(report):
    (problem,) = report("scaling:\n  resources_per_worker:\n    1CPU: 1\n").problems
    assert (problem.code, problem.line, problem.column, problem.path) == (
        "E107",
        9,
        5,
        "scaling.resources_per_worker.1CPU",
    )
