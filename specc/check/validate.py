"""A spec file in, its problems out: read (extends, --set), validated by the models, checked across fields.

`load` is the front of every command that takes a spec; `validate_files` is `specc validate` over files,
directories and globs. Problems come in file order, the spec's own first.
"""

from __future__ import annotations

import fnmatch
import glob
import os
import re
from dataclasses import dataclass, field

from pydantic import ValidationError

from specc.check import rules
from specc.check.fields import data_path, from_validation_error
from specc.check.objective import form_problems
from specc.read.document import MAX_BYTES, deep_copy, dotted
from specc.read.files import glob_files, read_file, walk_files
from specc.read.loader import RawSpec, display, load_raw
from specc.read.project import Project
from specc.spec import Experiment
from specc.spec.errors import Problem, SpecError, UsageError
from specc.spec.walk import section_default

SPEC_SUFFIXES = (".yaml", ".yml")
SKIPPED_DIRS = {".git", ".venv", "venv", "node_modules", "__pycache__", ".tox", ".mypy_cache", ".pytest_cache"}


def ray_class_names(family: str, name: str) -> tuple[str, ...]:
    """Every name of the Ray Tune class (searchers, schedulers) that `name` finds in the catalog; () for none."""
    from specc import catalog

    entry = catalog.lookup("ray_tune", family, name)
    return entry.names if entry else ()


CONTEXT = {"class_names": ray_class_names}  # what the spec's models are validated with (specc.spec.named)


@dataclass
class FileReport:
    """The outcome of validating one spec file."""

    file: str
    problems: list[Problem] = field(default_factory=list)
    experiment: Experiment | None = None

    @property
    def ok(self) -> bool:
        return not any(problem.severity == "error" for problem in self.problems)


def load(
    path: str | os.PathLike, overrides: tuple[str, ...] | list[str] = (), root: str | os.PathLike | None = None
) -> Experiment:
    """Read, validate and check a spec; raises SpecError listing every problem found. `root` widens the project
    the spec may read from (default: the git work tree holding it, else its directory)."""
    report = check_file(path, overrides, root)
    if not report.ok:
        raise SpecError(report.problems)
    return report.experiment


def check_file(
    path: str | os.PathLike, overrides: tuple[str, ...] | list[str] = (), root: str | os.PathLike | None = None
) -> FileReport:
    """Load -> validate -> check one file, collecting problems instead of raising."""
    try:
        raw = load_raw(path, overrides, _section_default, root)
    except SpecError as error:
        return FileReport(display(path), _ordered(error.problems, display(path)))
    return check_raw(raw)


def check_raw(raw: RawSpec) -> FileReport:
    """Validate -> check a spec already read (a run directory's recorded spec, read as a stranger's file)."""
    try:
        experiment = Experiment.model_validate(raw.data, context=CONTEXT)
    except ValidationError as error:
        problems = from_validation_error(error, raw.data, raw.source, Experiment) + form_problems(raw.data, raw.source)
        problems += _checks_without(raw, {data_path(tuple(e["loc"]), raw.data) for e in error.errors()})
        return FileReport(raw.file, _ordered(problems, raw.file))
    experiment._raw = raw
    problems = form_problems(raw.data, raw.source) + rules.check(experiment, raw.source, raw.project)
    return FileReport(raw.file, _ordered(problems, raw.file), experiment)


def _checks_without(raw: RawSpec, broken: set[tuple]) -> list[Problem]:
    """The cross-field problems of a spec with schema errors, so that one run reports (nearly) all of them.

    The broken keys are left out (their defaults apply); when the rest validates, the rules run on it and
    report what does not involve a broken key. When it does not validate, there is nothing sound to check.
    """
    data = deep_copy(raw.data)
    for path in broken:
        parent = data
        for part in path[:-1]:
            parent = parent.get(part) if isinstance(parent, dict) else None
        if isinstance(parent, dict):
            parent.pop(path[-1], None)
    try:
        experiment = Experiment.model_validate(data, context=CONTEXT)
    except ValidationError:
        return []
    return [p for p in rules.check(experiment, raw.source, raw.project) if not any(_within(p.path, b) for b in broken)]


def _within(path: str, broken: tuple) -> bool:
    prefix = dotted(broken)
    return path == prefix or path.startswith(prefix + ".") or prefix.startswith(path + ".")


def _section_default(path, data: dict) -> dict | None:
    return section_default(Experiment, path, data)


def validate(
    paths, overrides: tuple[str, ...] | list[str] = (), root: str | os.PathLike | None = None
) -> list[Problem]:
    """Every problem in the spec files named by `paths` (files, directories, globs)."""
    return [problem for report in validate_files(paths, overrides, root=root) for problem in report.problems]


def validate_files(
    paths,
    overrides: tuple[str, ...] | list[str] = (),
    *,
    skip_non_specs: bool = False,
    root: str | os.PathLike | None = None,
) -> list[FileReport]:
    """One report per spec file, problems only: the experiments are not kept, so memory stays flat.
    `skip_non_specs`: leave out YAML files that are not specs (no top-level `specc:` key), as a hook given every
    changed YAML file of a repository must."""
    if isinstance(paths, str | os.PathLike):
        paths = [paths]
    reports = []
    for file in spec_files(paths):
        if skip_non_specs and not looks_like_spec(file):
            continue
        report = check_file(file, overrides, root)
        report.experiment = None
        reports.append(report)
    return reports


TOP_LEVEL_SPECC = re.compile(rb"^specc\s*:", re.MULTILINE)


def looks_like_spec(path: str) -> bool:
    """Whether a file has a top-level `specc:` key (specs start with one; other YAML does not)."""
    try:
        root = Project.of(path).root
        return TOP_LEVEL_SPECC.search(read_file(path, MAX_BYTES, root=root)) is not None
    except OSError:
        return True  # let validate say what is wrong with it


def spec_files(paths) -> list[str]:
    """Files as named, `*.yaml`/`*.yml` under directories (recursively), and glob matches; in a stable order."""
    found: list[str] = []
    for name in paths:
        name = os.fspath(name)
        if os.path.isdir(name):
            found.extend(_spec_files_under(name))
        elif os.path.lexists(name):  # a link that leads nowhere or round in a loop: its read says so
            found.append(name)
        elif glob.has_magic(name):
            matches = sorted(match for match in _glob(name) if os.path.isfile(match))
            if not matches:
                raise UsageError(f"no files match {name}")
            found.extend(matches)
        else:
            raise UsageError(f"no such file or directory: {name}")
    return list(dict.fromkeys(found))


def _glob(pattern: str) -> list[str]:
    """glob.glob, except that `**` walks directories without following symbolic links (read/files.py)."""
    wanted = pattern.split(os.sep)
    wanted = wanted[next(i for i, part in enumerate(wanted) if glob.has_magic(part)) :]
    return glob_files(pattern, lambda segments: _segments_match(wanted, segments))


def _segments_match(pattern: list[str], path: list[str]) -> bool:
    """Whether path segments match pattern segments, `**` standing for any number of segments (in time
    len(pattern) x len(path), whatever the number of `**`)."""
    reachable = {0}  # pattern positions reachable after the path segments seen so far
    for i, part in enumerate(pattern):  # a leading run of `**` may match no segment
        if part != "**":
            break
        reachable.add(i + 1)
    for segment in path:
        following = set()
        for i in reachable:
            if i < len(pattern) and pattern[i] == "**":
                following.add(i)
            elif i < len(pattern) and fnmatch.fnmatchcase(segment, pattern[i]):
                following.add(i + 1)
        for i in sorted(following):
            j = i
            while j < len(pattern) and pattern[j] == "**":
                j += 1
                following.add(j)
        reachable = following
        if not reachable:
            return False
    return len(pattern) in reachable


def _spec_files_under(directory: str) -> list[str]:
    """The spec files below `directory` as a walk offers them (no directory link followed); a file that is a link out
    of the project, a loop or a FIFO is listed, and its read says why it is refused."""
    return list(
        walk_files(
            directory,
            keep_dir=lambda name: name not in SKIPPED_DIRS and not name.startswith("."),
            keep_file=lambda name: name.endswith(SPEC_SUFFIXES),
        )
    )


def _ordered(problems, main_file: str) -> list[Problem]:
    """File order: the spec's own problems by position, then those located in files it extends."""
    return sorted(problems, key=lambda p: (p.file not in (None, main_file), *p.sort_key()))
