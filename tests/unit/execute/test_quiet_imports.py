"""What a library writes to stderr as `specc run` imports it (TensorFlow's C++ start-up lines; Ax's notice that it
disables SQL storage) is set aside, on the process's file descriptor 2 itself, and shown only if the import fails."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

NOISY = """\
import os, sys, warnings
os.write(2, b"C++ start-up line\\n")
print("a logging handler's line", file=sys.stderr)
warnings.warn("deprecated in a future release", FutureWarning)
{fails}
"""


@pytest.mark.parametrize("fails", [False, True])
def test_an_import_writes_nothing_to_stderr_unless_it_fails(tmp_path, fails):
    (tmp_path / "noisy.py").write_text(NOISY.format(fails="raise ImportError('no library')" if fails else ""))
    program = textwrap.dedent(
        """
        import sys
        from specc.execute.run import _import_quietly
        try:
            _import_quietly("noisy")
        except ImportError as error:
            print("raised:", error)
        print("after the import", file=sys.stderr)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", program],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
        check=True,
    )
    shown = ["C++ start-up line", "a logging handler's line", "deprecated in a future release"]
    if fails:
        assert all(line in done.stderr for line in shown), done.stderr
        assert "raised: no library" in done.stdout
    else:
        assert not any(line in done.stderr for line in shown), done.stderr
    assert done.stderr.rstrip().endswith("after the import")  # stderr is the process's again
