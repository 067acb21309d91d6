"""`cluster`: which Ray to use, and what travels with the job to every node (its runtime environment)."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from pathlib import PurePosixPath
from typing import Annotated, Any, Union
from urllib.parse import urlparse

from pydantic import AfterValidator, Discriminator, Field, Tag
from pydantic_core import PydanticCustomError

from specc.spec.base import Identifier, NonEmptyStr, PathStr, PositiveInt, Section, describe

ADDRESS = re.compile(r"^(auto|local|(ray://)?(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):(?P<port>[0-9]{1,5}))$")


def _check_address(address: str) -> str:
    match = ADDRESS.match(address)
    if not match or (match["port"] and not 0 < int(match["port"]) < 65536):
        raise PydanticCustomError(
            "bad_address",
            "{address} is not a Ray address: use auto, host:port or ray://host:port",
            {"address": repr(address)},
        )
    return address


def _check_shipped(pattern: str) -> str:
    """cluster.include names what lies in the working directory: a relative path or gitignore pattern. A leading
    '/', a '..' or a '!' (gitignore's negation) would name something else than the user reads."""
    parts = pattern.replace("\\", "/").split("/")
    if pattern.startswith(("/", "!", "#", "~")) or ".." in parts:
        raise PydanticCustomError(
            "outside_working_dir",
            "{pattern} does not name a path inside the working directory: give it relative to cluster.working_dir "
            "(e.g. .env or config/credentials.json), without a leading '/', '~', '!' or '#', and without '..'",
            {"pattern": repr(pattern)},
        )
    return pattern


class Pip(Section):
    """pip requirements installed on every node (Ray's runtime_env `pip` as a mapping)."""

    packages: list[NonEmptyStr] = describe("Requirement specifiers, e.g. 'pandas>=2'.", min_length=1)
    pip_check: bool = describe("Run `pip check` after installing.", False)
    pip_version: NonEmptyStr | None = describe("pip version specifier, e.g. '==24.0'.", None)


def _pip_form(value) -> str | None:
    if isinstance(value, Pip | dict):
        return "mapping"
    return {list: "list", str: "file"}.get(type(value))


PipRequirements = Annotated[
    Union[
        Annotated[list[NonEmptyStr], Tag("list")],
        Annotated[Pip, Tag("mapping")],
        Annotated[NonEmptyStr, Tag("file")],
    ],
    Discriminator(
        _pip_form,
        custom_error_type="pip_form",
        custom_error_message="pip takes a list of requirements, a requirements file, or {packages: [...]}",
    ),
]


class RuntimeEnvConfig(Section):
    setup_timeout_seconds: Annotated[int, Field(ge=-1)] | None = describe(
        "Seconds to wait for the environment to be set up (-1: no limit).", None
    )
    eager_install: bool | None = describe("Install when the job starts rather than when a worker needs it.", None)


class RuntimeEnv(Section):
    """Ray runtime_env fields, passed through to ray.init / the job. The working directory is cluster.working_dir."""

    env_vars: dict[Identifier, str] = describe("Environment variables on every worker; values are strings.", {})
    pip: PipRequirements | None = describe(
        "pip requirements installed on every node: a list, a requirements file (relative to the spec, inside the "
        "project), or {packages: [...]}.",
        None,
    )
    uv: list[NonEmptyStr] | None = describe("Requirements installed with uv on every node.", None)
    conda: NonEmptyStr | dict[str, Any] | None = describe(
        "A conda environment name, an environment.yml mapping, or an environment .yml/.yaml file (relative to the "
        "spec, inside the project).",
        None,
    )
    py_modules: list[NonEmptyStr] | None = describe(
        "Modules shipped to every node: URIs, or local directories, .py files or wheels (relative to the spec, "
        "inside the project).",
        None,
    )
    image_uri: NonEmptyStr | None = describe("Container image the workers run in.", None)
    config: RuntimeEnvConfig | None = describe("Runtime environment set-up options.", None)


class Cluster(Section):
    """Local Ray (address null) or an existing cluster; the job's code travels in its runtime environment."""

    address: Annotated[str, AfterValidator(_check_address)] | None = describe(
        "null: start a Ray of the run's own (RAY_ADDRESS, when set, names a cluster instead), even when another "
        "runs on this machine; auto: the Ray `ray start` recorded on this machine; host:port; ray://host:port.",
        None,
    )
    runtime_env: RuntimeEnv = describe("Ray runtime environment for the job's workers.", RuntimeEnv.model_construct())
    working_dir: PathStr | None = describe(
        "Directory shipped to every node as the job's working_dir, relative to the spec; it must hold the spec. "
        "Default: the spec's directory.",
        None,
    )
    excludes: list[NonEmptyStr] | None = describe(
        "Gitignore patterns not shipped, besides .git, virtualenvs and caches; default: the run storage path and "
        "torchvision data roots and keras_dataset files.",
        None,
    )
    include: list[Annotated[PathStr, AfterValidator(_check_shipped)]] | None = describe(
        "Files shipped although they look like secrets (.env*, SSH keys, .aws/, .netrc, *.pem, ...), which stay "
        "behind otherwise: paths or gitignore patterns relative to the working directory.",
        None,
    )
    init_timeout_s: PositiveInt = describe("Seconds to wait when connecting to the cluster.", 60)


# -- local paths: what the machine that submits reads or uploads -------------------------------------------------


def local_paths(cluster: Cluster) -> Iterator[tuple[tuple, str, str]]:
    """(key path, path as written, what it is) for every local path of `cluster` that Ray reads or uploads from the
    machine that starts the job (ray/_private/runtime_env/validation.py, py_modules.py, working_dir.py):
    `working_dir`; `runtime_env.pip` as a string (a requirements file, read and sent as its lines); `conda` as a
    string ending in .yml/.yaml (an environment file, read and sent); each `py_modules` entry that is not a URI (a
    directory, a .py file or a wheel, uploaded). A conda name or an absolute conda directory, pip and uv lists and
    `local://` URIs name things on the nodes and are not listed."""
    if cluster.working_dir:
        yield ("cluster", "working_dir"), cluster.working_dir, "the working directory"
    env = cluster.runtime_env
    if isinstance(env.pip, str):
        yield ("cluster", "runtime_env", "pip"), env.pip, "the requirements file"
    if isinstance(env.conda, str) and PurePosixPath(env.conda).suffix in (".yaml", ".yml"):
        yield ("cluster", "runtime_env", "conda"), env.conda, "the conda environment file"
    for index, module in enumerate(env.py_modules or ()):
        if not urlparse(module).scheme:  # Ray's is_path
            yield ("cluster", "runtime_env", "py_modules", index), module, "the module"


def paths_outside(
    cluster: Cluster, spec_dir: str, holds: Callable[[str], bool], root: str
) -> Iterator[tuple[str, str, tuple, str]]:
    """(code, message, key path, hint) for each local path of `cluster` (relative to `spec_dir`) that does not lie
    inside the project: `holds(path)` says whether it does, symbolic links followed; `root` is the project root as
    the user sees it. What a job ships or sends reaches every node of a cluster others may share: a path above
    the project (`py_modules: [../other]`, `pip: ../.env`, `working_dir: ../..`) would carry what is there."""
    for where, path, what in local_paths(cluster):
        full = os.path.normpath(os.path.join(spec_dir, path))
        if not holds(full):
            yield (
                "E023",
                f"{what} {path} ({full}) lies outside the project {root}: it would travel to every node of the cluster",
                where,
                f"a path inside {root}, relative to the spec; or widen the project with --root DIR if it is meant "
                "to be part of it",
            )
