"""Every file specc writes goes through write_atomic: whole or not at all, never over what is not a regular file of
its own, through a symbolic link rather than over it, and any OS error a one-line problem with nothing left behind."""

from __future__ import annotations

import errno
import os
import stat
import subprocess
import sys

import pytest

from specc.compiler import files
from specc.compiler.files import write_atomic
from specc.spec.errors import UsageError
from tests.conftest import MINIMAL


def leftovers(directory) -> list[str]:
    return sorted(name for name in os.listdir(directory) if name.startswith("."))


def test_a_new_file_is_written_whole(tmp_path):
    write_atomic(tmp_path / "deep" / "out.py", "print(1)\n")
    assert (tmp_path / "deep" / "out.py").read_text() == "print(1)\n"
    assert leftovers(tmp_path / "deep") == []


def test_a_fifo_is_refused_and_stays_a_fifo(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(UsageError, match=r"pipe: it is a FIFO, not a regular file"):
        write_atomic(fifo, "x")  # opening it for writing would block; replacing it would destroy it
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert leftovers(tmp_path) == []


def test_a_directory_is_refused(tmp_path):
    (tmp_path / "out").mkdir()
    with pytest.raises(UsageError, match=r"it is a directory, not a regular file"):
        write_atomic(tmp_path / "out", "x")
    assert (tmp_path / "out").is_dir() and os.listdir(tmp_path / "out") == []


def test_a_symbolic_link_is_written_through(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "script.py").write_text("old\n")
    (tmp_path / "link.py").symlink_to(tmp_path / "real" / "script.py")
    write_atomic(tmp_path / "link.py", "new\n")
    assert (tmp_path / "link.py").is_symlink()
    assert (tmp_path / "real" / "script.py").read_text() == "new\n"
    assert leftovers(tmp_path) == [] and leftovers(tmp_path / "real") == []


def test_a_link_to_a_fifo_is_refused(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "link").symlink_to(tmp_path / "pipe")
    with pytest.raises(UsageError, match="it is a FIFO"):
        write_atomic(tmp_path / "link", "x")
    assert (tmp_path / "link").is_symlink() and stat.S_ISFIFO(os.stat(tmp_path / "pipe").st_mode)


def test_a_path_below_a_file_is_one_line(tmp_path):
    (tmp_path / "file").write_text("mine\n")
    with pytest.raises(UsageError) as raised:
        write_atomic(tmp_path / "file" / "out.py", "x")
    assert str(raised.value).startswith(f"cannot write {tmp_path / 'file' / 'out.py'}: ")
    assert "\n" not in str(raised.value)
    assert (tmp_path / "file").read_text() == "mine\n"


def test_a_full_disk_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "out.py"
    target.write_text("old\n")

    def full(*_args):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(files.os, "replace", full)
    with pytest.raises(UsageError, match=r"cannot write .*out\.py: No space left on device"):
        write_atomic(target, "new\n")
    assert target.read_text() == "old\n"
    assert leftovers(tmp_path) == []


def run_cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "specc", *map(str, args)], capture_output=True, text=True, cwd=cwd)


@pytest.mark.parametrize("command", ["compile", "init"])
def test_the_cli_refuses_a_fifo_without_a_traceback(tmp_path, command):
    (tmp_path / "spec.yaml").write_text(MINIMAL, encoding="utf-8")
    os.mkfifo(tmp_path / "out")
    args = ["compile", "spec.yaml", "-o", "out"] if command == "compile" else ["init", "fresh", "-o", "out", "--force"]
    done = run_cli(*args, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and "it is a FIFO, not a regular file" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert stat.S_ISFIFO(os.stat(tmp_path / "out").st_mode)


def test_the_cli_refuses_a_fifo_for_a_report(tmp_path):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "results.csv").write_text("epoch,train_loss,val_loss\n0,1.0,1.0\n", encoding="utf-8")
    (tmp_path / "run" / "best.json").write_text('{"metrics": {"epoch": 0}, "checkpoint": null}\n', encoding="utf-8")
    os.mkfifo(tmp_path / "out.html")
    done = run_cli("report", "run", "-o", "out.html", cwd=tmp_path)
    assert "Traceback" not in done.stderr
    assert done.returncode == 2 and "it is a FIFO, not a regular file" in done.stderr, done.stderr
    assert stat.S_ISFIFO(os.stat(tmp_path / "out.html").st_mode)
