"""specc: a declarative experiment-spec compiler for Ray Train and Ray Tune.

Public API (SPEC §9): load, validate, compile, run, Problem, SpecError. Importing specc is cheap: the heavier modules
load on first use, and nothing here ever imports ray, torch or tensorflow.
"""

from specc.spec.errors import Problem, SpecError
from specc.spec.version import __version__

__all__ = ["Problem", "SpecError", "__version__", "compile", "load", "run", "validate"]


def load(path, overrides=()):
    """Read, validate and check a spec file; returns an Experiment or raises SpecError."""
    from specc import api

    return api.load(path, overrides)


def validate(paths, overrides=()):
    """Every Problem in the spec files named by `paths` (files, directories or globs)."""
    from specc import api

    return api.validate(paths, overrides)


def compile(experiment, output=None, templates=None):
    """The standalone Ray script (source text) an Experiment compiles to."""
    from specc import api

    return api.compile(experiment, output, templates)


def run(experiment, **options):
    """Compile and run an Experiment in this process on Ray; returns a RunResult (run_dir, metrics, checkpoint)."""
    from specc.execute.run import run as execute

    return execute(experiment, **options)
