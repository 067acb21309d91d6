"""The documentation site builds with `mkdocs build --strict`: every page in the nav, every link and #anchor resolved
(mkdocs.yml's `validation`). CI runs the test suite, so this is how the site's build runs in CI. And the README stays
a short front door whose links lead to pages that exist."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import time

import pytest

from specc.docs.pages import reference_pages
from tests.conftest import ROOT

BUILD_SECONDS = 30  # a build takes about 3 s here; a much slower one means something went wrong


def test_the_site_builds_strictly(tmp_path):
    if importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("material") is None:
        pytest.skip("mkdocs or mkdocs-material is not installed (the test extra installs both)")
    started = time.perf_counter()
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}  # Material's notice about its successor, not about this site
    # Not with --quiet: it hides the warnings that --strict counts, and the build then passes whatever they say.
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    output = built.stdout + built.stderr
    assert built.returncode == 0, output[-4000:]
    assert "WARNING" not in output, output[-4000:]
    assert (tmp_path / "site" / "reference" / "training" / "index.html").is_file()
    assert time.perf_counter() - started < BUILD_SECONDS


def test_the_readme_is_a_short_front_door():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200
    sections = re.findall(r"^## (.+)$", text, re.M)
    assert sections == ["Set up", "A five-minute tour", "Where it fits", "Documentation"]


def test_the_readmes_links_lead_to_pages_that_exist():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text)
    assert links
    assert [link for link in links if not (ROOT / link).is_file()] == []


def test_every_page_is_in_the_nav_and_every_nav_entry_is_a_page():
    """The strict build says so too; this says which, without building."""
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8").split("\nnav:\n", 1)[1]
    named = set(re.findall(r"([\w/.-]+\.md)\s*$", nav, re.M))
    present = {path.relative_to(ROOT / "docs").as_posix() for path in (ROOT / "docs").rglob("*.md")}
    assert named == present


def test_the_nav_lists_every_reference_page_the_generator_writes():
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert sorted(name for name in reference_pages() if f"reference/{name}" not in nav) == []


def test_the_python_in_the_docs_is_formatted_as_ruff_formats_it():
    """ruff formats the Python blocks of Markdown files, as the lint CI runs it over the repository."""
    checked = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--check", "--no-cache", "docs", "README.md"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
