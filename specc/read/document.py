"""One YAML document -> plain Python data plus the position of every key and value.

Built from PyYAML's event stream (libyaml's C parser when present) with an explicit stack, not from
`yaml.compose`: the composer recurses and libyaml's crashes the interpreter on a document nested a few
thousand levels deep. Walking events lets the builder refuse, with a location and before any damage:
duplicate keys (PyYAML silently keeps the last), explicit tags (`!!python/object` and friends), alias
expansion past a node budget ("billion laughs"), self-referencing aliases, excessive nesting, non-string
keys and extra documents. It keeps YAML's `<<` merge keys, and reads `1e-4` as a number (YAML 1.2) where
PyYAML's 1.1 rules would give the string "1e-4".
"""

from __future__ import annotations

from dataclasses import dataclass, field

import yaml
from yaml.constructor import SafeConstructor
from yaml.resolver import Resolver

from specc.spec.errors import Problem, excerpt
from specc.spec.scalars import FLOAT_12, ambiguous

MAX_BYTES = 1 << 20  # a spec is a few KB; 1 MiB leaves room for generated ones
MAX_DEPTH = 64
MAX_NODES = 100_000  # after alias expansion

Path = tuple  # of str keys and int list indices

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_PLAIN_TAGS = {f"tag:yaml.org,2002:{name}" for name in ("str", "int", "float", "bool", "null", "map", "seq")}
_MERGE = "tag:yaml.org,2002:merge"
_resolver = Resolver()
_constructor = SafeConstructor()


@dataclass(frozen=True)
class Mark:
    """Where a key or value is written: 1-based line and column. `origin` says how it got into the spec."""

    file: str
    line: int | None
    column: int | None
    origin: str | None = None


@dataclass
class SourceMap:
    """Positions by key path: `values[path]` is where the value starts, `keys[path]` where its key is."""

    values: dict[Path, Mark] = field(default_factory=dict)
    keys: dict[Path, Mark] = field(default_factory=dict)
    overrides: dict[Path, Mark] = field(default_factory=dict)  # where each --set wrote, in the order applied

    def locate(self, path: Path, *, key: bool = False) -> Mark | None:
        """The mark of `path`, or of its nearest ancestor that has one. A value that a --set changed in part (one
        bound of a distribution, an item of a list) is located at that --set: the file alone did not say it."""
        path = tuple(path)
        if not key and len(path) > 1 and (changed := self._overridden_within(path)):  # a value, not a section
            return changed
        while True:
            table = (self.keys, self.values) if key else (self.values, self.keys)
            for marks in table:
                if path in marks:
                    return marks[path]
            if not path:
                return None
            path = path[:-1]

    def _overridden_within(self, path: Path, depth: int = 2) -> Mark | None:
        """The last --set that wrote at most `depth` levels below `path` (not at it: that one is its own mark)."""
        n = len(path)
        found = [mark for p, mark in self.overrides.items() if n < len(p) <= n + depth and p[:n] == path]
        return found[-1] if found else None

    def drop(self, prefix: Path) -> None:
        """Forget every position at or under `prefix` (the value there was replaced)."""
        n = len(prefix)
        for marks in (self.values, self.keys, self.overrides):
            for path in [p for p in marks if p[:n] == prefix]:
                del marks[path]

    def drop_all(self, prefixes: set[Path]) -> None:
        """`drop` for many prefixes in one pass: a path goes when one of its prefixes is among them."""
        for marks in (self.values, self.keys, self.overrides):
            for path in [p for p in marks if any(p[:n] in prefixes for n in range(len(p) + 1))]:
                del marks[path]

    def copy(self) -> SourceMap:
        return SourceMap(dict(self.values), dict(self.keys), dict(self.overrides))

    def update(self, other: SourceMap, prefix: Path = (), origin: str | None = None) -> None:
        for mine, theirs in ((self.values, other.values), (self.keys, other.keys)):
            for path, mark in theirs.items():
                if origin and not mark.origin:
                    mark = Mark(mark.file, mark.line, mark.column, origin)
                mine[prefix + path] = mark


class DocumentError(Exception):
    def __init__(self, problems: list[Problem]):
        super().__init__(problems)
        self.problems = problems


@dataclass
class _Open:
    """A mapping or sequence being built."""

    value: dict | list
    path: Path
    anchor: str | None
    key: object = None  # mapping: the pending key, or _NO_KEY
    merges: list = field(default_factory=list)  # (value, path, log start, log end)
    explicit: set = field(default_factory=set)
    bad_key: bool = False
    log_start: int = 0  # where this collection's marks begin in _Builder.log
    nodes_start: int = 0
    merge_start: int = 0


_NO_KEY = object()


class _Builder:
    def __init__(self, file: str, origin: str | None):
        self.file, self.origin = file, origin
        self.source = SourceMap()
        self.problems: list[Problem] = []
        # Every mark in document order, so an anchored collection's marks are one slice of it: copying
        # them for an alias costs the alias's size, which the node budget bounds.
        self.log: list[tuple[bool, Path, Mark]] = []
        self.anchors: dict[str, tuple[object, Path, int, int, int]] = {}
        self.open_anchors: set[str] = set()
        self.stack: list[_Open] = []
        self.nodes = 0
        self.aliased = False  # whether an alias was expanded: E009 blames aliases only then
        self.root = None
        self.documents = 0

    def mark(self, event) -> Mark:
        return Mark(self.file, event.start_mark.line + 1, event.start_mark.column + 1, self.origin)

    def problem(self, code: str, message: str, mark: Mark, path: Path = (), hint: str | None = None) -> None:
        self.problems.append(Problem(code, message, mark.file, mark.line, mark.column, dotted(path), hint, mark.origin))

    def fatal(self, code: str, message: str, mark: Mark, path: Path = (), hint: str | None = None):
        self.problem(code, message, mark, path, hint)
        raise DocumentError(self.problems)

    # -- where the next node goes --------------------------------------------------------------
    def next_path(self) -> tuple[Path, bool]:
        """The path of the node about to start, and whether it is a mapping key."""
        if not self.stack:
            return (), False
        top = self.stack[-1]
        if isinstance(top.value, list):
            return (*top.path, len(top.value)), False
        if top.key is _NO_KEY:
            return top.path, True
        return (*top.path, top.key), False

    def check_tag(self, event, path: Path) -> None:
        tag = event.tag
        if tag and tag not in _PLAIN_TAGS and not (tag == "!" and isinstance(event, yaml.ScalarEvent)):
            shown = tag.replace("tag:yaml.org,2002:", "!!")
            self.fatal(
                "E008",
                f"tag {shown} is not allowed: a spec holds plain data only",
                self.mark(event),
                path,
                "remove the tag; write the value as a plain string, number, list or mapping",
            )

    def count(self, n: int, event) -> None:
        self.nodes += n
        if self.nodes > MAX_NODES:
            if self.aliased:
                message = f"the document expands to more than {MAX_NODES:,} values through aliases"
                hint = "a spec needs no such size; this looks like a 'billion laughs' document"
            else:  # no alias to blame: the file itself is that large
                message = f"the document holds more than {MAX_NODES:,} values"
                hint = "a spec needs no such size; split generated data out of it"
            self.fatal("E009", message, self.mark(event), hint=hint)

    # -- events --------------------------------------------------------------------------------
    def feed(self, event) -> None:
        kind = type(event)
        if kind is yaml.ScalarEvent:
            self.scalar(event)
        elif kind in (yaml.MappingStartEvent, yaml.SequenceStartEvent):
            self.start(event)
        elif kind in (yaml.MappingEndEvent, yaml.SequenceEndEvent):
            self.end()
        elif kind is yaml.AliasEvent:
            self.alias(event)
        elif kind is yaml.DocumentStartEvent:
            self.documents += 1
            if self.documents > 1:
                self.fatal(
                    "E011",
                    "a second YAML document: a spec file holds exactly one",
                    self.mark(event),
                    hint="remove the `---` line and what follows, or split it into its own file",
                )

    def scalar(self, event) -> None:
        path, is_key = self.next_path()
        self.check_tag(event, path)
        self.count(1, event)
        if event.tag is None and event.implicit[0] and (reading := ambiguous(event.value)):
            how, instead = reading
            message = f"{excerpt(event.value)} is ambiguous: {how}"
            hint = f"quote it for text, or write {instead}"
            self.problem("E013", message, self.mark(event), path, hint)
        value = resolve_scalar(event)
        start = len(self.log)
        self.place(value, self.mark(event), is_key, event)
        if event.anchor:
            self.anchors[event.anchor] = (value, path, 1, start, len(self.log))

    def start(self, event) -> None:
        path, is_key = self.next_path()
        self.check_tag(event, path)
        self.count(1, event)
        if len(self.stack) >= MAX_DEPTH:
            self.fatal("E010", f"the document nests more than {MAX_DEPTH} levels deep", self.mark(event))
        mark = self.mark(event)
        if is_key:
            self.problem("E012", "a mapping key must be a plain string, not a list or mapping", mark, path)
            self.stack[-1].bad_key = True
        else:
            self.record(path, mark)
        container = {} if type(event) is yaml.MappingStartEvent else []
        self.stack.append(
            _Open(container, path, event.anchor, _NO_KEY, log_start=len(self.log) - 1, nodes_start=self.nodes - 1)
        )
        if event.anchor:
            self.open_anchors.add(event.anchor)

    def end(self) -> None:
        done = self.stack.pop()
        if isinstance(done.value, dict):
            self.apply_merges(done)
        if done.anchor:
            self.open_anchors.discard(done.anchor)
            size = self.nodes - done.nodes_start
            self.anchors[done.anchor] = (done.value, done.path, size, done.log_start, len(self.log))
        if self.stack and self.stack[-1].bad_key and self.stack[-1].key is _NO_KEY:
            self.stack[-1].key = None  # the complex key was reported; its value is read and dropped
            self.stack[-1].bad_key = False
            return
        self.attach(done.value, done.path)

    def alias(self, event) -> None:
        path, is_key = self.next_path()
        mark = self.mark(event)
        if event.anchor in self.open_anchors:
            self.fatal("E010", f"alias *{event.anchor} refers to the collection that contains it", mark, path)
        if event.anchor not in self.anchors:
            self.fatal("E004", f"alias *{event.anchor} names no anchor defined before it", mark, path)
        value, anchor_path, size, start, end = self.anchors[event.anchor]
        self.aliased = True
        self.count(size, event)
        if is_key:
            self.place(value, mark, True, event)
            return
        self.record(path, mark)
        n = len(anchor_path)
        for is_key_mark, p, m in self.log[start:end]:
            if p[:n] == anchor_path and len(p) > n:
                self.remember(is_key_mark, path + p[n:], m)
        self.attach(deep_copy(value), path)

    # -- placing values ------------------------------------------------------------------------
    def place(self, value, mark: Mark, is_key: bool, event) -> None:
        if not is_key:
            path, _ = self.next_path()
            self.record(path, mark)
            self.attach(value, path)
            return
        top = self.stack[-1]
        if getattr(event, "tag", None) is None and getattr(event, "implicit", (False,))[0] and value == "<<":
            top.key, top.merge_start = _MERGE, len(self.log)
            return
        if not isinstance(value, str):
            shown = "null" if value is None else repr(value)
            self.problem(
                "E012",
                f"mapping key {shown} is not a string",
                mark,
                top.path,
                f'quote it: "{event.value}":' if hasattr(event, "value") else None,
            )
            top.key = None
            return
        if value in top.explicit:
            first = self.source.keys.get((*top.path, value))
            where = f" (first at line {first.line})" if first else ""
            self.problem("E007", f"duplicate key {excerpt(value)}{where}", mark, (*top.path, value), "keep one of them")
            top.key = None
            return
        top.explicit.add(value)
        top.key = value
        self.remember(True, (*top.path, value), mark)

    def attach(self, value, path: Path) -> None:
        if not self.stack:
            self.root = value
            return
        top = self.stack[-1]
        if isinstance(top.value, list):
            top.value.append(value)
            return
        key, top.key = top.key, _NO_KEY
        if key is _MERGE:
            top.merges.append((value, path, top.merge_start, len(self.log)))
        elif key is not None:
            top.value[key] = value

    def record(self, path: Path, mark: Mark) -> None:
        self.remember(False, path, mark)

    def remember(self, is_key: bool, path: Path, mark: Mark) -> None:
        (self.source.keys if is_key else self.source.values)[path] = mark
        self.log.append((is_key, path, mark))

    def apply_merges(self, done: _Open) -> None:
        """`<<: *base` (or a list of them): keys not written explicitly come from the merged mappings."""
        for value, merge_path, start, end in done.merges:
            sources = [(value, merge_path)] if isinstance(value, dict) else None
            if isinstance(value, list) and all(isinstance(item, dict) for item in value):
                sources = [(item, (*merge_path, index)) for index, item in enumerate(value)]
            if sources is None:
                mark = self.source.locate(merge_path) or Mark(self.file, None, None)
                self.fatal("E006", "a `<<` merge takes a mapping or a list of mappings", mark, done.path)
            n = len(sources[0][1]) if sources else 0  # every merged mapping's path has the same length
            marks_by_key: dict[Path, list] = {}  # one pass over the merged marks: linear, not keys x marks
            for entry in self.log[start:end]:
                if len(entry[1]) > n:
                    marks_by_key.setdefault(entry[1][: n + 1], []).append(entry)
            for source, source_path in sources:
                for key, item in source.items():
                    if key in done.value:
                        continue
                    done.value[key] = deep_copy(item)
                    for is_key_mark, p, m in marks_by_key.get((*source_path, key), ()):
                        self.remember(is_key_mark, (*done.path, *p[n:]), m)


def resolve_scalar(event):
    """A scalar event's value under YAML 1.1's safe rules, plus 1.2 exponent floats; timestamps stay text."""
    if event.tag and event.tag != "!":
        tag = event.tag
    elif event.implicit[0]:
        tag = _resolver.resolve(yaml.ScalarNode, event.value, (True, False))
    else:
        return event.value
    if tag == "tag:yaml.org,2002:str":
        if event.implicit[0] and FLOAT_12.match(event.value):
            return float(event.value.replace("_", ""))
        return event.value
    if tag == "tag:yaml.org,2002:timestamp":
        return event.value
    if tag == _MERGE:
        return event.value
    construct = _constructor.yaml_constructors.get(tag)
    if construct is None:  # e.g. YAML 1.1's `=` (!!value): plain text here
        return event.value
    try:
        return construct(_constructor, yaml.ScalarNode(tag, event.value))
    except (ValueError, yaml.YAMLError):
        return event.value


def deep_copy(value):
    if isinstance(value, dict):
        return {k: deep_copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [deep_copy(v) for v in value]
    return value


def dotted(path: Path) -> str:
    """A key path as users write it: `tune.space[training.optimizer.lr].loguniform` when a key holds dots."""
    text = ""
    for part in path:
        part = str(part)
        if "." in part:
            text += f"[{part}]"
        else:
            text += f".{part}" if text else part
    return text


def parse_text(text: str, file: str, origin: str | None = None) -> tuple[object, SourceMap]:
    """Parse one YAML document; raises DocumentError with located problems. Empty text gives None."""
    builder = _Builder(file, origin)
    try:
        for event in yaml.parse(text, Loader=_LOADER):
            builder.feed(event)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        where = Mark(file, mark.line + 1, mark.column + 1, origin) if mark else Mark(file, None, None, origin)
        message = " ".join(part for part in (error.context, error.problem) if part)
        if "maximum nesting depth" in (error.problem or ""):  # libyaml >= 0.2.6 stops at 1000 levels while scanning
            builder.fatal("E010", f"the document nests more than {MAX_DEPTH} levels deep", where)
        tab = mark is not None and text[mark.index : mark.index + 1] == "\t"
        hint = "YAML indents with spaces, not tabs" if tab else None
        builder.fatal("E004", f"invalid YAML: {message}", where, hint=hint)
    except yaml.reader.ReaderError as error:
        line, column = position(text, error.position)
        builder.fatal(
            "E004", f"invalid YAML: {error.reason} (character {error.character!r})", Mark(file, line, column, origin)
        )
    if builder.problems:
        raise DocumentError(builder.problems)
    return builder.root, builder.source


def position(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def decode(raw: bytes, file: str) -> str:
    """UTF-8 (a BOM is allowed) within the size bound, or a located problem."""
    if len(raw) > MAX_BYTES:
        raise DocumentError(
            [Problem("E002", f"the file is larger than a spec may be ({MAX_BYTES:,} bytes at most)", file, 1, 1)]
        )
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]  # a UTF-8 byte-order mark: allowed, and not a column
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw.count(b"\n", 0, error.start) + 1
        line_start = raw.rfind(b"\n", 0, error.start) + 1
        column = len(raw[line_start : error.start].decode("utf-8", errors="replace")) + 1  # in characters
        message = f"the file is not UTF-8: byte 0x{raw[error.start]:02x} cannot be decoded"
        raise DocumentError([Problem("E003", message, file, line, column, hint="save the file as UTF-8")]) from None
