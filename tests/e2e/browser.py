"""A real headless Chromium for the tests that look at a page: Debian's `chromium`, driven by playwright.

Playwright's own browser download is never used (`playwright install` fetches a build from outside the
package registries): the browser is Debian's, installed by the `chromium` fixture with apt-get when missing and
we may (root, apt-get present). When it cannot be had, the tests that need it fail under CI (the env var CI is
set) and are skipped elsewhere, with the reason.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

CHROMIUM = "/usr/bin/chromium"
# Headless, and quiet on the network: no update checks, no sync, no QUIC probes; a page's own requests are all
# that leave the browser.
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
APT_TIMEOUT = 900  # s: chromium and its libraries are a few hundred MB


def unavailable(reason: str):
    """Fail under CI (the browser is part of the test set-up there), skip elsewhere."""
    if os.environ.get("CI"):
        pytest.fail(f"headless Chromium is required under CI: {reason}", pytrace=False)
    pytest.skip(reason)


def _apt(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    return subprocess.run(
        ["apt-get", *args], capture_output=True, text=True, env=env, timeout=APT_TIMEOUT, stdin=subprocess.DEVNULL
    )


def install_chromium() -> str | None:
    """Installs Debian's chromium (apt-get update first only when the install fails without package lists);
    None when it is installed, else why it could not be."""
    if not shutil.which("apt-get"):
        return "no apt-get to install Debian's chromium with"
    if os.geteuid() != 0:
        return "chromium is not installed, and installing it needs root (apt-get install chromium)"
    done = _apt("install", "-y", "-q", "chromium")
    if done.returncode != 0:
        _apt("update", "-q")
        done = _apt("install", "-y", "-q", "chromium")
    if done.returncode != 0 or not os.access(CHROMIUM, os.X_OK):
        return f"apt-get install chromium failed ({done.returncode}): {done.stderr.strip()[-500:]}"
    return None


@pytest.fixture(scope="session")
def chromium():
    """The path of a headless-capable Chromium, installing Debian's package when it is missing."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        unavailable("the playwright python package is not installed (pip install 'specc[test]')")
    if not os.access(CHROMIUM, os.X_OK):
        try:
            problem = install_chromium()
        except subprocess.TimeoutExpired:
            problem = f"apt-get did not finish within {APT_TIMEOUT} s"
        if problem:
            unavailable(problem)
    return CHROMIUM
