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

from specc.read.document import (
    MAX_BYTES,
    MAX_DEPTH,
    MAX_NODES,
    DocumentError,
    Mark,
    Path,
    SourceMap,
    decode,
    deep_copy,
    dotted,
    parse_text,
)
from specc.read.files import loose_real_path, read_file
from specc.read.project import WIDEN_HINT, Project
from specc.spec.errors import Problem, SpecError, excerpt
from specc.spec.space import DISTRIBUTION_NAMES


@dataclass
class RawSpec:
    """A spec as read: the merged mapping, where each value came from, and the file the user named."""

    data: dict
    source: SourceMap
    file: str
    project: Project


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
    path: os.PathLike | str,
    overrides: tuple[str, ...] | list[str] = (),
    section_default: SectionDefault | None = None,
    root: os.PathLike | str | None = None,
) -> RawSpec:
    """Read `path` with its `extends` chain and apply `--set` overrides; raises SpecError.

    `section_default(path, data)` gives the default of a section that an override has to create, so that
    `--set training.optimizer.lr=0.1` sets the lr of the default optimizer rather than an optimizer without a type.
    `root` widens the project (default: the git work tree holding the spec, else its directory).
    """
    file = display(path)
    project = Project.of(path, root)
    data, source = _Chain(project).load(FsPath(path), [], None)
    problems: list[Problem] = []
    for override in overrides:
        try:
            apply_override(data, source, override, file, section_default)
        except DocumentError as error:
            problems.extend(error.problems)
    if problems:
        raise SpecError(problems)
    return RawSpec(data, source, file, project)


def read_mapping(
    path: FsPath, origin: str | None = None, root: os.PathLike | str | None = None
) -> tuple[dict, SourceMap]:
    """One file's mapping (no `extends` processing), read through the read gate: a regular file inside `root` (the
    project; default: the directory the file is named in)."""
    file = display(path)
    try:
        raw = read_file(path, MAX_BYTES, root=os.path.dirname(os.path.abspath(path)) if root is None else root)
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
        kind = "a list" if isinstance(data, list) else "a single value"  # never its text: it may be any file
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


MAX_FILES = 64  # files in one spec's `extends` graph: far more than any real project, few enough to stay fast
MAX_MERGED = MAX_NODES  # values merged in one graph: what one spec file may hold, far more than real graphs merge


class _Chain:
    """One spec's `extends` graph being read: each file parsed once (a diamond reads its shared parent once, not
    once per path to it), at most MAX_FILES of them, every one inside the project."""

    def __init__(self, project: Project):
        self.project = project
        self.done: dict[FsPath, tuple[dict, SourceMap]] = {}  # a file's mapping with its own `extends` applied
        self.merged = 0  # values merged so far, the work of the graph: bounded by MAX_MERGED

    def load(self, path: FsPath, chain: list[FsPath], origin: str | None) -> tuple[dict, SourceMap]:
        try:
            resolved = _resolved(path)
        except OSError as error:  # a loop of links, a NUL in the name
            problem = Problem("E001", f"cannot read the file: {error.strerror}", display(path), origin=origin)
            raise SpecError([problem]) from None
        if resolved in self.done:
            data, source = self.done[resolved]
            return deep_copy(data), source.copy()
        data, source = read_mapping(path, origin, self._read_root(chain))
        parents = data.pop("extends", None)
        if parents is not None:
            data, source = self.extend(path, data, source, parents, [*chain, resolved])
        self.done[resolved] = data, source
        return deep_copy(data), source.copy()

    def _read_root(self, chain: list[FsPath]) -> os.PathLike:
        """Where a file of the graph must lie: the project; for the top spec named outside a project that --root
        gives, its own directory (a link out of it is still refused)."""
        if chain or self.project.holds(self.project.spec_dir):
            return self.project.root
        return self.project.spec_dir

    def extend(self, path: FsPath, data: dict, source: SourceMap, parents, here: list[FsPath]):
        names = [parents] if isinstance(parents, str) else parents
        mark = source.values.get(("extends",))
        if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
            raise SpecError([_problem("E103", "must be a file path or a list of file paths", mark, ("extends",))])
        item_paths = [("extends",)] if isinstance(parents, str) else [("extends", i) for i in range(len(names))]
        item_marks = [source.values.get(item_path, mark) for item_path in item_paths]
        source.drop(("extends",))
        merged, merged_source = {}, SourceMap()
        for name, item_path, at in zip(names, item_paths, item_marks, strict=True):
            parent = self.parent(path, name, here, at, item_path)
            parent_data, parent_source = self.load(parent, here, f"extended by {display(path)}")
            self.count_merge(merged_source, parent_source, name, at, item_path)
            deep_merge(merged, merged_source, parent_data, parent_source)
        deep_merge(merged, merged_source, data, source)
        return merged, merged_source

    def count_merge(self, base: SourceMap, over: SourceMap, name: str, at: Mark | None, item_path: Path) -> None:
        """Counts a merge's work (the values on both sides): a parent listed hundreds of times, or a large one reached
        by many paths, is refused once the graph has merged MAX_MERGED values, rather than merged for minutes."""
        self.merged += len(base.values) + len(over.values)
        if self.merged > MAX_MERGED:
            message = f"extends {excerpt(name)}: the `extends` graph merges more than {MAX_MERGED:,} values"
            hint = "list each parent once (a file listed again is merged again), or merge some files"
            raise SpecError([_problem("E020", message, at, item_path, hint)])

    def parent(self, path: FsPath, name: str, here: list[FsPath], at: Mark | None, item_path: Path) -> FsPath:
        """The file `name` (relative to `path`) names, once it is known to be one a spec may extend."""
        shown = excerpt(name)
        try:
            parent = _resolved(path.parent / name)
        except OSError as error:  # a loop of links, a NUL in the name
            raise SpecError([_problem("E020", f"extends {shown}: {error.strerror}", at, item_path)]) from None
        if not self.project.holds(parent):
            message = f"extends {shown}, which is outside the project ({self.project.shown()})"
            raise SpecError([_problem("E023", message, at, item_path, WIDEN_HINT)])
        if parent in here:
            cycle = " -> ".join(display(p) for p in [*here[here.index(parent) :], parent])
            raise SpecError([_problem("E021", f"extends cycle: {cycle}", at, item_path)])
        if parent.suffix not in (".yaml", ".yml") or not parent.is_file():
            what = "not a file" if not parent.is_file() else "not a .yaml or .yml file"
            hint = "paths in `extends` are relative to this file and name other specs"
            raise SpecError([_problem("E020", f"extends {shown}, which is {what}", at, item_path, hint)])
        if parent not in self.done and len(self.done) + len(here) >= MAX_FILES:
            message = f"the `extends` graph reaches more than {MAX_FILES} files"
            raise SpecError([_problem("E020", message, at, item_path, "a spec needs far fewer; merge some")])
        return parent


def _resolved(path: FsPath) -> FsPath:
    """`path` with every link resolved (the read gate's way); an OSError saying why it cannot be (a loop of links,
    where Path.resolve raises a RuntimeError; a NUL in the name)."""
    return FsPath(loose_real_path(path))


def _problem(code: str, message: str, mark: Mark | None, path: Path, hint: str | None = None) -> Problem:
    if mark is None:
        return Problem(code, message, path=dotted(path), hint=hint)
    return Problem(code, message, mark.file, mark.line, mark.column, dotted(path), hint, mark.origin)


def deep_merge(base: dict, base_source: SourceMap, over: dict, over_source: SourceMap) -> None:
    """Merge `over` into `base` in place, and their source maps alike, in time linear in their sizes: the values
    `over` replaces lose their positions in one pass, then every position of `over` is taken."""
    replaced: set[Path] = set()
    merged: set[Path] = set()
    _merge_values(base, over, (), replaced, merged)
    if replaced:
        base_source.drop_all(replaced)
    base_source.keys.update(over_source.keys)
    # A mapping that was merged (not replaced) keeps the position where it began in the file extended.
    base_source.values.update((p, m) for p, m in over_source.values.items() if p not in merged)


def _merge_values(base: dict, over: dict, prefix: Path, replaced: set, merged: set) -> None:
    for key, value in over.items():
        path = (*prefix, key)
        old = base.get(key)
        if isinstance(old, dict) and isinstance(value, dict) and _same_kind(old, value):
            merged.add(path)
            _merge_values(old, value, path, replaced, merged)
            continue
        if key in base:
            replaced.add(path)
        base[key] = value


def _same_kind(old: dict, new: dict) -> bool:
    """Whether `new` refines `old` (merge) rather than replaces it: not when its `type` differs, nor when
    both are search-space entries with different distributions ({uniform: ...} over {loguniform: ...})."""
    if "type" in old and "type" in new:
        return old["type"] == new["type"]
    distributions = [m.keys() for m in (old, new) if len(m) == 1 and next(iter(m)) in DISTRIBUTION_NAMES]
    return len(distributions) < 2 or distributions[0] == distributions[1]


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
    parts = key_path(key.strip()) if _levels(key) <= MAX_DEPTH else []
    if parts == []:
        message = f"the path is {_levels(key)} keys deep; a spec nests at most {MAX_DEPTH}"
        raise DocumentError([Problem("E022", message, file, origin=_shown(origin))])
    if parts is None:
        raise DocumentError(
            [
                Problem(
                    "E022",
                    f"{excerpt(key)} is not a dotted path",
                    file,
                    origin=origin,
                    hint="keys that hold dots go in brackets: tune.space[training.optimizer.lr]",
                )
            ]
        )
    _space_key_in_brackets(data, parts, file, origin)
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
    source.keys[path] = mark
    source.overrides[path] = mark
    for sub in value_source.values:
        source.values[path + sub] = mark
    for n in range(1, len(path)):  # sections the override created are located at it, not at the file's top
        if path[:n] not in source.keys:
            source.keys[path[:n]] = source.values[path[:n]] = mark


def _levels(key: str) -> int:
    """How many keys deep a --set path reaches, at most (counted before it is split: a path may be any length)."""
    return key.count(".") + key.count("[") + 1


def _shown(origin: str, limit: int = 200) -> str:
    return origin if len(origin) <= limit else f"{origin[:limit]}... ({len(origin)} characters)"


def list_index(part: str) -> int | None:
    """The list index a path's key spells (`0`, `12`), None when it spells none: ASCII digits only (`¹` and `٣` are
    digits to str.isdigit, not to int) and at most 18 of them (int() refuses a number past 4,300 digits)."""
    return int(part) if part.isascii() and part.isdigit() and len(part) <= 18 else None


def key_path(text: str) -> list[str] | None:
    """`tune.space[training.optimizer.lr].loguniform` -> ["tune", "space", "training.optimizer.lr", "loguniform"]: the
    form `dotted` prints, read back (a key that holds dots in brackets); None when it is not a path."""
    parts: list[str] = []
    rest = text
    while rest:
        if rest.startswith("["):
            part, closed, rest = rest[1:].partition("]")
            if not closed or not part or "[" in part or rest[:1] not in ("", ".", "["):
                return None
        else:
            end = min((i for i in (rest.find("."), rest.find("[")) if i >= 0), default=len(rest))
            part, rest = rest[:end], rest[end:]
            if not part or "]" in part:
                return None
        parts.append(part)
        if rest.startswith("."):
            rest = rest[1:]
            if not rest or rest.startswith("["):  # a trailing dot, or `a.[b]`: write `a[b]`
                return None
    return parts or None


# Mappings whose keys are paths of the spec (`training.optimizer.lr`): --set reaches into them with brackets.
SPACE_KEYED = {("tune", "space"), ("scheduler", "mutations"), ("scheduler", "bounds")}


def _space_key_in_brackets(data: dict, parts: list[str], file: str, origin: str) -> None:
    """`--set tune.space.training.optimizer.lr=...` would make a space key `training` holding a mapping: say how
    to write the key instead (a dotless key the spec already has is set as written)."""
    head, rest = tuple(parts[:2]), parts[2:]
    if head not in SPACE_KEYED or len(rest) < 2 or "." in rest[0]:
        return
    node = data.get(head[0])
    if isinstance(node, dict) and isinstance(node.get(head[1]), dict) and rest[0] in node[head[1]]:
        return
    where = ".".join(head)
    message = f"a key of {where} is a path of the spec: in {where}.{'.'.join(rest)}, where does it end?"
    hint = f"put the key in brackets, e.g. --set '{where}[{'.'.join(rest[:3])}]=...'"
    raise DocumentError([Problem("E022", message, file, path=where, origin=origin, hint=hint)])


def _step(target, part: str, path: Path, file: str, origin: str):
    if isinstance(target, list):
        index = list_index(part)
        if index is None or index >= len(target):
            raise DocumentError(
                [
                    Problem(
                        "E022",
                        f"{excerpt(part)} is not an index of the {len(target)}-item list at "
                        f"{dotted(path) or 'the top'}",
                        file,
                        path=dotted(path),
                        origin=origin,
                    )
                ]
            )
        return index
    return part
