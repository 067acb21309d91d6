"""Spec files -> one raw mapping plus a SourceMap: reading, `extends`, and `--set` overrides.

`extends` (SPEC §3): paths relative to the extending file; parents are merged in order, then the file
itself on top. Maps merge key by key; everything else (lists included) is replaced by the later file.
Two refinements users expect: a map whose `type` changes (a `cnn` model over an `mlp` parent) replaces the
parent's map instead of inheriting fields that belong to another type, and a search-space entry with another
distribution replaces the parent's entry. A value that came from a parent
keeps the parent's file:line:col and is marked "extended by <child>".
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path as FsPath

from specc.read.document import DocumentError, Mark, Path, SourceMap, decode, dotted, parse_text, read_file
from specc.spec.errors import Problem, SpecError
from specc.spec.space import DISTRIBUTION_NAMES


@dataclass
class RawSpec:
    """A spec as read: the merged mapping, where each value came from, and the file the user named."""

    data: dict
    source: SourceMap
    file: str


def display(path: os.PathLike | str) -> str:
    """A path as users see it: relative to the working directory when it is below it."""
    path = os.path.abspath(path)
    try:
        relative = os.path.relpath(path)
    except ValueError:
        return path
    return path if relative.startswith("..") else relative


SectionDefault = Callable[[Path, dict], "dict | None"]


def load_raw(
    path: os.PathLike | str, overrides: tuple[str, ...] | list[str] = (), section_default: SectionDefault | None = None
) -> RawSpec:
    """Read `path` with its `extends` chain and apply `--set` overrides; raises SpecError.

    `section_default(path, data)` gives the default of a section that an override has to create, so that
    `--set training.optimizer.lr=0.1` sets the lr of the default optimizer rather than an optimizer without a type.
    """
    file = display(path)
    data, source = _load_chain(FsPath(path), [], None)
    problems: list[Problem] = []
    for override in overrides:
        try:
            apply_override(data, source, override, file, section_default)
        except DocumentError as error:
            problems.extend(error.problems)
    if problems:
        raise SpecError(problems)
    return RawSpec(data, source, file)


def read_mapping(path: FsPath, origin: str | None = None) -> tuple[dict, SourceMap]:
    """One file's mapping (no `extends` processing)."""
    file = display(path)
    try:
        raw = read_file(path)
    except OSError as error:
        reason = error.strerror or str(error)
        raise SpecError([Problem("E001", f"cannot read the file: {reason}", file, origin=origin)]) from None
    try:
        text = decode(raw, file)
        data, source = parse_text(text, file, origin) if text.strip() else (None, SourceMap())
    except DocumentError as error:
        raise SpecError(error.problems) from None
    if data is None:
        raise SpecError(
            [
                Problem(
                    "E005",
                    "the file is empty: a spec is a YAML mapping",
                    file,
                    1,
                    1,
                    origin=origin,
                    hint="start from `specc: 1`, `name:` and `framework:` (see specs/)",
                )
            ]
        )
    if not isinstance(data, dict):
        mark = source.locate(())
        kind = "a list" if isinstance(data, list) else f"the scalar {data!r}"
        raise SpecError(
            [
                Problem(
                    "E006",
                    f"the document is {kind}, not a mapping of keys to values",
                    file,
                    mark.line if mark else 1,
                    mark.column if mark else 1,
                    origin=origin,
                )
            ]
        )
    return data, source


def _load_chain(path: FsPath, chain: list[FsPath], origin: str | None) -> tuple[dict, SourceMap]:
    data, source = read_mapping(path, origin)
    parents = data.pop("extends", None)
    if parents is None:
        return data, source
    names = [parents] if isinstance(parents, str) else parents
    mark = source.values.get(("extends",))
    if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
        raise SpecError([_problem("E103", "must be a file path or a list of file paths", mark, ("extends",))])
    item_paths = [("extends",)] if isinstance(parents, str) else [("extends", i) for i in range(len(names))]
    item_marks = [source.values.get(item_path, mark) for item_path in item_paths]
    source.drop(("extends",))
    merged, merged_source = {}, SourceMap()
    here = [*chain, path.resolve()]
    for name, item_path, item_mark in zip(names, item_paths, item_marks, strict=True):
        parent = (path.parent / name).resolve()
        if parent in here:
            cycle = " -> ".join(display(p) for p in [*here[here.index(parent) :], parent])
            raise SpecError([_problem("E021", f"extends cycle: {cycle}", item_mark, item_path)])
        if not parent.is_file():
            raise SpecError(
                [
                    _problem(
                        "E020",
                        f"extends names {name!r}, which is not a file ({display(parent)})",
                        item_mark,
                        item_path,
                        "paths in `extends` are relative to this file",
                    )
                ]
            )
        parent_data, parent_source = _load_chain(parent, here, f"extended by {display(path)}")
        deep_merge(merged, merged_source, parent_data, parent_source)
    deep_merge(merged, merged_source, data, source)
    return merged, merged_source


def _problem(code: str, message: str, mark: Mark | None, path: Path, hint: str | None = None) -> Problem:
    if mark is None:
        return Problem(code, message, path=dotted(path), hint=hint)
    return Problem(code, message, mark.file, mark.line, mark.column, dotted(path), hint, mark.origin)


def deep_merge(base: dict, base_source: SourceMap, over: dict, over_source: SourceMap, prefix: Path = ()) -> None:
    """Merge `over` into `base` in place (and their source maps alike)."""
    for key, value in over.items():
        path = (*prefix, key)
        old = base.get(key)
        if isinstance(old, dict) and isinstance(value, dict) and _same_kind(old, value):
            if path in over_source.keys:
                base_source.keys[path] = over_source.keys[path]
            deep_merge(old, base_source, value, over_source, path)
            continue
        base[key] = value
        base_source.drop(path)
        base_source.update(_subtree(over_source, path), path)


def _same_kind(old: dict, new: dict) -> bool:
    """Whether `new` refines `old` (merge) rather than replaces it: not when its `type` differs, nor when
    both are search-space entries with different distributions ({uniform: ...} over {loguniform: ...})."""
    if "type" in old and "type" in new:
        return old["type"] == new["type"]
    distributions = [m.keys() for m in (old, new) if len(m) == 1 and next(iter(m)) in DISTRIBUTION_NAMES]
    return len(distributions) < 2 or distributions[0] == distributions[1]


def _subtree(source: SourceMap, prefix: Path) -> SourceMap:
    out = SourceMap()
    n = len(prefix)
    for mine, theirs in ((out.values, source.values), (out.keys, source.keys)):
        for path, mark in theirs.items():
            if path[:n] == prefix:
                mine[path[n:]] = mark
    return out


def apply_override(
    data: dict, source: SourceMap, text: str, file: str, section_default: SectionDefault | None = None
) -> None:
    """`--set a.b.0=value`: the value is YAML (`--set model.hidden_sizes=[64,32]`); maps are created as needed."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # bytes that are not UTF-8 reach argv as surrogates: show them as \xNN
        shown = text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        raise DocumentError(
            [Problem("E022", "the override is not valid UTF-8", file, origin=f"--set {shown}")]
        ) from None
    origin = f"--set {text}"
    key, sep, value_text = text.partition("=")
    if not sep or not key.strip():
        raise DocumentError(
            [Problem("E022", "expected PATH=VALUE", file, origin=origin, hint="e.g. --set training.epochs=5")]
        )
    parts = [part for part in key.strip().split(".")]
    if any(not part for part in parts):
        raise DocumentError([Problem("E022", f"{key!r} is not a dotted path", file, origin=origin)])
    if parts[0] == "extends":  # read before any override applies: setting it would silently change nothing
        message = "cannot be set with --set: the files a spec extends are read before any override applies"
        raise DocumentError(
            [Problem("E022", message, file, path="extends", origin=origin, hint="write it in the spec")]
        )
    value, value_source = parse_text(value_text, f"<{origin}>")
    target, path = data, ()
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        step = _step(target, part, path, file, origin)
        path += (step,)
        if last:
            target[step] = value
        else:
            if isinstance(target, dict) and step not in target:
                target[step] = (section_default(path, data) if section_default else None) or {}
            target = target[step]
            if not isinstance(target, dict | list):
                raise DocumentError(
                    [
                        Problem(
                            "E022",
                            f"{dotted(path)} is a {type(target).__name__}, not a section",
                            file,
                            path=dotted(path),
                            origin=origin,
                        )
                    ]
                )
    source.drop(path)
    mark = Mark(file, None, None, origin)
    source.values[path] = mark
    for sub in value_source.values:
        source.values[path + sub] = mark


def _step(target, part: str, path: Path, file: str, origin: str):
    if isinstance(target, list):
        if not part.isdigit() or int(part) >= len(target):
            raise DocumentError(
                [
                    Problem(
                        "E022",
                        f"{part!r} is not an index of the {len(target)}-item list at {dotted(path) or 'the top'}",
                        file,
                        path=dotted(path),
                        origin=origin,
                    )
                ]
            )
        return int(part)
    return part
