"""Where a job's files come from: the working directory and every local path of cluster.runtime_env lie inside the
project and hold the spec, and exclude patterns stay ones Ray matches quickly. What a job ships reaches every node of
a cluster others may share."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator

from specc.check.fields import Locator
from specc.read.project import Project
from specc.spec.errors import Problem, excerpt
from specc.spec.experiment import Experiment


def paths_inside_project(e: Experiment, at: Locator, project: Project | None) -> Iterator[Problem]:
    """E023: cluster.working_dir and every local path of cluster.runtime_env (py_modules, a pip or conda file) lie
    inside the project, links followed: what a job ships reaches every node of a shared cluster."""
    from specc.spec.cluster import paths_outside

    if project is None:
        return
    for code, message, path, hint in paths_outside(e.cluster, str(project.spec_dir), project.holds, project.shown()):
        yield at(code, message, path, hint)


WILDCARDS_AT_MOST = 3
"""Wildcards (`*`, `**`) in one `cluster.excludes` pattern. Ray matches excludes with pathspec's regular
expressions, which backtrack: measured here on a 255-letter name, `*a*a*b` takes 9 ms, `*a*a*a*b` 0.5 s and
`*a*a*a*a*b` 34 s; `**/a/**/a/**/a/**/a/**/b` over a deep path 14 s. specc's own matcher is linear
(execute/excludes.py), but `specc run --address` and a compiled script hand the patterns to Ray."""


def excludes_ray_matches_quickly(e: Experiment, at: Locator) -> Iterator[Problem]:
    """E403: an exclude pattern with more wildcards than WILDCARDS_AT_MOST."""
    for i, pattern in enumerate(e.cluster.excludes or ()):
        wildcards = len(re.findall(r"\*+", pattern))
        if wildcards > WILDCARDS_AT_MOST:
            yield at(
                "E403",
                f"{excerpt(pattern)} has {wildcards} wildcards: Ray matches exclude patterns with regular expressions "
                f"that can take minutes per file past {WILDCARDS_AT_MOST}",
                ("cluster", "excludes", i),
                f"at most {WILDCARDS_AT_MOST} `*` or `**` in a pattern; split it into simpler patterns",
            )


def working_dir_holds_spec(e: Experiment, at: Locator) -> Iterator[Problem]:
    """cluster.working_dir (relative to the spec) is a directory that holds the spec: custom factories and data
    paths are found relative to the spec, on every node, only when they travel inside the working directory."""
    chosen = e.cluster.working_dir
    top = at.source.locate(())
    if not chosen or top is None or not top.file:
        return
    spec_dir = os.path.dirname(os.path.abspath(top.file))
    directory = os.path.normpath(os.path.join(spec_dir, chosen))
    where = ("cluster", "working_dir")
    if not os.path.isdir(directory):
        yield at("E403", f"{chosen} ({directory}) is not a directory", where, "a path relative to the spec's directory")
    elif wide := too_wide(directory):
        yield at(
            "E403",
            f"{chosen} is {wide}: every file below it would travel to every node of the cluster "
            "(keys, credentials, other projects)",
            where,
            "the project's own directory, e.g. '..' for the project above specs/",
        )
    elif os.path.relpath(spec_dir, directory).startswith(".."):
        yield at(
            "E403",
            f"{directory} does not hold the spec's directory {spec_dir}: custom factories and data files found "
            "relative to the spec would not travel with the job",
            where,
            "a directory that contains the spec, e.g. '..' for the project above specs/",
        )


def too_wide(directory: str) -> str | None:
    """What a working directory is when it is the file system's root or the user's home directory (None when it
    is neither): neither is ever a project to ship whole."""
    real = os.path.realpath(directory)
    if real == os.path.realpath(os.sep):
        return "the file system's root"
    home = os.path.expanduser("~")
    return f"the home directory {home}" if home != "~" and real == os.path.realpath(home) else None
