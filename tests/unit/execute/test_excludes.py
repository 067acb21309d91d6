"""The exclude-pattern matcher of specc/execute/excludes.py: the meaning of pathspec's "gitwildmatch" (what Ray
matches `excludes`, .gitignore and .rayignore with), in time linear in pattern length x path length.

The property test compares the two on generated patterns and paths over a small alphabet that reaches every rule
(anchoring, directory patterns, `**` in each place, classes and their negation, escapes, '!' and '#', trailing
spaces, newlines in names); a pattern pathspec refuses must be refused here too."""

from __future__ import annotations

import os
import time
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from specc.execute import excludes

PATTERN_ATOMS = ["a", "b", "/", "*", "?", "[ab]", "**", "!", "#", " ", "\\", "[!a]", "[^b]", "[a-b]", "[b-a]",
                 "[]a]", "[a-]", "]", "[", "-", ".", "\\ "]  # fmt: skip
NAME_ATOMS = ["a", "b", "/", ".", " ", "-", "]", "\\", "\n"]
EXAMPLES = int(os.environ.get("SPECC_EXCLUDES_EXAMPLES", "500"))  # each compares 1-3 patterns on 1-8 paths

patterns = st.lists(st.sampled_from(PATTERN_ATOMS), min_size=1, max_size=7).map("".join)
paths = st.lists(st.sampled_from(NAME_ATOMS), max_size=9).map("".join)


def pathspec_says(lines: list[str], path: str) -> bool | str:
    """Whether pathspec (as Ray builds it) leaves `path` behind; 'refused' when it cannot read the patterns."""
    import pathspec

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            spec = pathspec.PathSpec.from_lines("gitwildmatch", lines)
        except Exception:  # GitIgnorePatternError, re.error: Ray would fail as it zips
            return "refused"
        return spec.match_file(path)


def specc_says(lines: list[str], path: str) -> bool | str:
    try:
        compiled = excludes.compiled(lines)
    except excludes.PatternError:
        return "refused"
    return excludes.excluded(compiled, path) is not None


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(patterns, min_size=1, max_size=3), st.lists(paths, min_size=1, max_size=8))
def test_the_matcher_means_what_pathspec_means(lines, some_paths):
    for path in some_paths:
        assert specc_says(lines, path) == pathspec_says(lines, path), (lines, path)


@pytest.mark.parametrize(
    ("pattern", "path", "left"),
    [
        ("build", "build", True),
        ("build", "src/build/x.py", True),  # no '/': at any depth, and what is below it
        ("/build", "src/build", False),  # a leading '/' anchors it
        ("build/", "build", False),  # a directory pattern: below it only
        ("build/", "build/x", True),
        ("*.pyc", "a/b/c.pyc", True),
        ("a/*.py", "a/b/c.py", False),  # '*' stops at '/'
        ("a/**/c.py", "a/c.py", True),
        ("a/**/c.py", "a/b/b/c.py", True),
        ("**/.ssh/**", "home/.ssh/id_rsa", True),
        ("[!a]", "b", True),
        ("\\#x", "#x", True),
        ("#x", "#x", False),  # a comment
        ("x\\ ", "x ", True),  # an escaped trailing space stays
        ("x ", "x", True),  # other trailing spaces go
    ],
)
def test_gitignore_rules(pattern, path, left):
    assert specc_says([pattern], path) == left == pathspec_says([pattern], path)


def test_the_last_pattern_that_matches_decides():
    lines = ["*.env", "!keep.env"]
    assert specc_says(lines, "a.env") and not specc_says(lines, "keep.env")
    assert excludes.excluded(excludes.compiled(lines), "a.env").text == "*.env"


@pytest.mark.parametrize("pattern", ["*a" * 24 + "*b", "**/" + "*a" * 40 + "*b/**", "a/" + "**/a" * 30 + "/b"])
def test_a_pattern_that_makes_regular_expressions_backtrack_takes_milliseconds(pattern):
    """pathspec (so Ray) takes 38 s on the first against 30 letters; here 2,000 letters take well under a second."""
    compiled = excludes.compiled([pattern])
    started = time.monotonic()
    for path in ("a" * 2000, "a/" * 1000, "a" * 1000 + "/" + "a" * 999):
        assert excludes.excluded(compiled, path) is None
    assert time.monotonic() - started < 0.5


def test_patterns_pathspec_cannot_read_are_refused_and_an_unclosed_class_is_dropped():
    for line in ["a\\", "!", "[b-a]"]:
        with pytest.raises(excludes.PatternError):
            excludes.compiled([line])
    assert excludes.compiled(["a[b", "", "# comment", "/"]) == []
