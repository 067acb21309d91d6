"""Exclude patterns (`cluster.excludes`, `.gitignore`, `.rayignore`) matched as Ray matches them, in linear time.

Ray reads these with pathspec's "gitwildmatch" patterns, each turned into a regular expression that Python's
backtracking engine runs: 24 `*a` then `*b` against a 30-letter name takes 38 s there, and longer names never end.
Here no regular expression is built from a user's text. Each pattern becomes the automaton of the expression
pathspec would build (a list of steps), and a path is matched by carrying the set of steps it may have reached
across its characters (Thompson's simulation): at most (steps × characters) work, steps ≈ 2 × pattern length.

The meaning is pathspec 1.x's, quirks included, and tests/unit/execute/test_excludes.py compares the two on
generated patterns and paths: a pattern without '/' matches at any depth ("**/" before it), a leading '/' anchors
it, a trailing '/' matches below a directory only, `*` and `?` never match '/', `**` spans directories, `[...]`
is a character class (`!` or `^` negates it, and a negated class matches '/' too), the last matching pattern
decides (`!` includes again), a pattern matches a path's prefix up to a '/' (so `build` leaves `build/x` behind),
and `.` in its expressions matches any character but a newline. A pattern with an unclosed `[` is dropped, as git
drops it; one pathspec cannot compile (a trailing lone backslash, `!` alone, a reversed range `[z-a]`) is a
`PatternError`, which Ray would raise as it zips.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

CHAR, SPLIT, END, ACCEPT = range(4)
NOT_SLASH: Callable[[str], bool] = lambda char: char != "/"  # noqa: E731 - pathspec's [^/]
NOT_NEWLINE: Callable[[str], bool] = lambda char: char != "\n"  # noqa: E731 - a regular expression's `.`


class PatternError(ValueError):
    """A pattern pathspec (and so Ray) cannot read."""


class _Dropped(Exception):
    """An unclosed `[`: git, and pathspec after it, drop the whole pattern."""


@dataclass(frozen=True)
class Pattern:
    """One compiled pattern: `include` False for a '!' pattern; `steps` the automaton, or `anywhere` for the few
    patterns pathspec matches with a fixed expression searched anywhere in the path ('.': any character but a
    newline; '/': a slash)."""

    text: str
    include: bool
    steps: tuple = ()
    anywhere: str | None = None
    required: tuple[str, ...] = ()  # the pattern's literal runs: a path that lacks one cannot match

    def matches(self, path: str) -> bool:
        if self.anywhere == ".":
            return any(char != "\n" for char in path)
        if self.anywhere == "/":
            return "/" in path
        return all(run in path for run in self.required) and _run(self.steps, path)


def compiled(lines: Iterable[str]) -> list[Pattern]:
    """The patterns of `lines` (blank lines, comments and dropped patterns left out), in order."""
    found = []
    for line in lines:
        pattern = compile_pattern(line)
        if pattern is not None:
            found.append(pattern)
    return found


def excluded(patterns: list[Pattern], path: str) -> Pattern | None:
    """The pattern that leaves `path` (relative, with '/') behind: the last one that matches it, when that one
    excludes (None when none matches, or the last that matches is a '!' pattern)."""
    path = path[1:] if path.startswith("/") else path[2:] if path.startswith("./") else path
    for pattern in reversed(patterns):
        if pattern.matches(path):
            return pattern if pattern.include else None
    return None


def compile_pattern(line: str) -> Pattern | None:
    """One line as pathspec's GitIgnoreSpecPattern reads it; None for a blank line, a comment, '/', or a pattern
    with an unclosed '['."""
    text = line if line.endswith("\\ ") else line.rstrip()
    if not text or text.startswith("#") or text == "/":
        return None
    include = not text.startswith("!")
    parts = (text if include else text[1:]).split("/")
    directory = not parts[-1]
    segments, anywhere = _normalized(directory, parts, line)
    if anywhere is not None:
        return Pattern(line, include, anywhere=anywhere)
    deferred: list[str] = []  # pathspec compiles a class (and finds it reversed) after the whole pattern is read
    try:
        steps = _automaton(segments, line, deferred)
    except _Dropped:
        return None
    if deferred:
        raise PatternError(deferred[0])
    return Pattern(line, include, steps=steps, required=_literals(segments))


def _normalized(directory: bool, segments: list[str], line: str) -> tuple[list[str], str | None]:
    """pathspec's segment normalisation: '**' before a one-segment pattern, after a directory pattern, repeated
    '**' collapsed; the patterns it matches with a fixed expression ('**', '*', '*/', '**/')."""
    if not segments[0]:
        del segments[0]
    elif (len(segments) == 1 or (len(segments) == 2 and not segments[1])) and segments[0] != "**":
        segments.insert(0, "**")
    if not segments:
        raise PatternError(f"{line!r} is not a pattern (it names nothing)")
    if not segments[-1]:
        segments[-1] = "**"
    segments = [seg for i, seg in enumerate(segments) if not (i and seg == "**" and segments[i - 1] == "**")]
    if segments == ["**"] or segments == ["**", "*"]:
        return segments, "/" if directory and segments == ["**"] else "."
    if segments == ["**", "*", "**"]:
        return segments, "/"
    return segments, None


def _literals(segments: list[str]) -> tuple[str, ...]:
    """The runs of plain characters of each segment (escapes read), which any path the pattern matches holds."""
    runs: list[str] = []
    for segment in segments:
        i, run = 0, ""
        while i < len(segment):
            char = segment[i]
            if char in "*?[":
                runs.append(run)
                run = ""
                i = _bracket_end(segment, i + 1) if char == "[" else i
            else:
                run += segment[i + 1] if char == "\\" else char
                i += char == "\\"
            i += 1
        runs.append(run)
    return tuple(sorted({run for run in runs if run}, key=len, reverse=True))


# -- the automaton --------------------------------------------------------------------------------------------
# Steps are built from the end of the pattern back to its start: each piece gets the step that follows it.


def _automaton(segments: list[str], line: str, deferred: list[str]) -> tuple:
    steps: list = [(ACCEPT, None, None, None)]
    pieces = _pieces(segments, line, deferred)
    follow = 0
    for piece in reversed(pieces):
        follow = piece(steps, follow)
    return (follow, *steps)  # the first item is the start step


def _pieces(segments: list[str], line: str, deferred: list[str]) -> list[Callable]:
    """What pathspec's regular expression says, piece by piece (see its __translate_segments)."""
    pieces: list[Callable] = []
    last = len(segments) - 1
    need_slash = False
    for i, segment in enumerate(segments):
        if segment == "**":
            if i == 0:
                pieces.append(_optional_prefix)  # ^(?:.+/)?
            elif i < last:
                pieces.append(_optional_middle)  # (?:/.+)?
                need_slash = True
            else:
                pieces.append(_char("/"))  # '/' and what follows
            continue
        if need_slash:
            pieces.append(_char("/"))
        if segment == "*":
            pieces += [_test(NOT_SLASH), _repeat(NOT_SLASH)]  # [^/]+
        else:
            pieces += _segment(segment, line, deferred)
        if i == last:
            pieces.append(_slash_or_end)  # (?:/|$)
        need_slash = True
    return pieces


def _segment(segment: str, line: str, deferred: list[str]) -> list[Callable]:
    """One segment's glob: literals (a backslash escapes the next character), `*`, `?` and `[...]`."""
    pieces: list[Callable] = []
    i, end = 0, len(segment)
    while i < end:
        char = segment[i]
        i += 1
        if char == "\\":
            if i == end:
                raise PatternError(f"{line!r} ends a segment with a lone backslash")
            pieces.append(_char(segment[i]))
            i += 1
        elif char == "*":
            pieces.append(_repeat(NOT_SLASH))
        elif char == "?":
            pieces.append(_test(NOT_SLASH))
        elif char == "[":
            test, i = _bracket(segment, i, line, deferred)
            pieces.append(_test(test))
        else:
            pieces.append(_char(char))
    return pieces


def _bracket(segment: str, start: int, line: str, deferred: list[str]) -> tuple[Callable[[str], bool], int]:
    """The class that starts at `start` (just after '['), found as pathspec finds its end and read as Python's
    regular expressions read the class pathspec writes; and where the segment goes on."""
    j = _bracket_end(segment, start)
    if j >= len(segment):
        raise _Dropped
    negated = segment[start] in "!^"
    members = _class_members(segment[start + negated : j + 1], line, deferred)
    if negated:
        return (lambda char: not _in_class(members, char)), j + 1
    return (lambda char: _in_class(members, char)), j + 1


def _bracket_end(segment: str, start: int) -> int:
    """Where the class that starts at `start` (just after '[') ends, as pathspec finds it: its closing ']', past a
    ']' first (after a '!' or '^'); len(segment) when it is never closed."""
    end, j = len(segment), start
    if j < end and segment[j] in "!^":
        j += 1
    if j < end and segment[j] == "]":
        j += 1
    while j < end and segment[j] != "]":
        j += 1
    return j


def _class_members(body: str, line: str, deferred: list[str]) -> list[tuple[str, str]]:
    """`body` (the class after '[' or '[^', its closing ']' included) as (low, high) ranges, parsed as sre_parse
    parses a class: a first ']' is a member, `a-z` a range, a '-' before the closing ']' a member, every
    backslash a member (pathspec doubles them)."""
    members: list[tuple[str, str]] = []
    i = 0
    while True:
        this = body[i]
        i += 1
        if this == "]" and members:
            return members
        if body[i] == "-" and i + 1 < len(body):
            that = body[i + 1]
            i += 2
            if that == "]":
                members += [(this, this), ("-", "-")]
                return members
            if that < this:
                deferred.append(f"{line!r} holds a reversed range [{this}-{that}]")
            members.append((this, that))
        else:
            members.append((this, this))


def _in_class(members: list[tuple[str, str]], char: str) -> bool:
    return any(low <= char <= high for low, high in members)


def _char(expected: str) -> Callable:
    return _test(lambda char: char == expected)


def _test(test: Callable[[str], bool]) -> Callable:
    def piece(steps: list, follow: int) -> int:
        steps.append((CHAR, test, follow, None))
        return len(steps) - 1

    return piece


def _repeat(test: Callable[[str], bool]) -> Callable:
    """`test` zero or more times: a split that either takes a character and comes back, or goes on."""

    def piece(steps: list, follow: int) -> int:
        split = len(steps)
        steps.append(None)
        steps.append((CHAR, test, split, None))
        steps[split] = (SPLIT, None, split + 1, follow)
        return split

    return piece


def _one_or_more(steps: list, follow: int, test: Callable[[str], bool]) -> int:
    loop = _repeat(test)(steps, follow)
    return _test(test)(steps, loop)


def _optional_prefix(steps: list, follow: int) -> int:
    """(?:.+/)? : nothing, or one or more characters (no newline) and a '/'."""
    slash = _char("/")(steps, follow)
    steps.append((SPLIT, None, _one_or_more(steps, slash, NOT_NEWLINE), follow))
    return len(steps) - 1


def _optional_middle(steps: list, follow: int) -> int:
    """(?:/.+)? : nothing, or a '/' and one or more characters (no newline)."""
    slash = _char("/")(steps, _one_or_more(steps, follow, NOT_NEWLINE))
    steps.append((SPLIT, None, slash, follow))
    return len(steps) - 1


def _slash_or_end(steps: list, follow: int) -> int:
    """(?:/|$) : a '/' (what follows it is below a match), or the end (or a newline that ends the path)."""
    slash = _char("/")(steps, follow)
    steps.append((END, None, follow, None))
    steps.append((SPLIT, None, slash, len(steps) - 1))
    return len(steps) - 1


def _run(automaton: tuple, path: str) -> bool:
    """Whether the automaton reaches its accepting step on a prefix of `path` (a regular expression's `search`
    anchored at '^'): the set of steps reached is carried across the characters, each step once per character."""
    start, steps = automaton[0], automaton[1:]
    current = _closure(steps, [start], path, 0)
    for position, char in enumerate(path):
        if current is True:
            return True
        moved = [follow for kind, test, follow, _ in map(steps.__getitem__, current) if kind == CHAR and test(char)]
        current = _closure(steps, moved, path, position + 1)
        if not current:
            return False
    return current is True


def _closure(steps, starts: list[int], path: str, position: int):
    """The steps reachable from `starts` without taking a character; True once the accepting step is among them."""
    seen: set[int] = set()
    pending = list(starts)
    found = []
    at_end = position == len(path) or (position == len(path) - 1 and path[position] == "\n")
    while pending:
        index = pending.pop()
        if index in seen:
            continue
        seen.add(index)
        kind, _, follow, other = steps[index]
        if kind == ACCEPT:
            return True
        if kind == CHAR:
            found.append(index)
        elif kind == SPLIT:
            pending += [follow, other]
        elif at_end:  # END
            pending.append(follow)
    return found
