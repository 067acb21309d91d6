"""The read and write gates (specc/read/files.py). Every file specc writes goes through write_file: whole or not at
all, never over what is not a regular file of its own, never through a symbolic link, never outside `within`, and any
OS error a one-line problem with nothing left behind. Every file it reads goes through read_file: a regular file
inside the root it is given, links resolved first, loops reported, special files refused, its size bounded."""

from __future__ import annotations

import errno
import os
import stat
import subprocess
import sys

import pytest

from specc.read import files
from specc.read.files import read_file, walk_files, write_file
from specc.spec.errors import UsageError
from tests.conftest import MINIMAL


def leftovers(directory) -> list[str]:
    return sorted(name for name in os.listdir(directory) if name.startswith("."))


def test_a_new_file_is_written_whole(tmp_path):
    write_file(tmp_path / "deep" / "out.py", "print(1)\n")
    assert (tmp_path / "deep" / "out.py").read_text() == "print(1)\n"
    assert leftovers(tmp_path / "deep") == []


def test_a_fifo_is_refused_and_stays_a_fifo(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(UsageError, match=r"pipe: it is a FIFO, not a regular file"):
        write_file(fifo, "x")  # opening it for writing would block; replacing it would destroy it
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert leftovers(tmp_path) == []


def test_a_directory_is_refused(tmp_path):
    (tmp_path / "out").mkdir()
    with pytest.raises(UsageError, match=r"it is a directory, not a regular file"):
        write_file(tmp_path / "out", "x")
    assert (tmp_path / "out").is_dir() and os.listdir(tmp_path / "out") == []


@pytest.mark.parametrize("target", ["file", "fifo", "nowhere", "loop"])
def test_a_symbolic_link_is_neither_written_through_nor_replaced(tmp_path, target):
    """Issue 53: a `.png` link planted in a run directory made `specc results --plot` overwrite the file it named."""
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "file").write_text("old\n")
    os.mkfifo(tmp_path / "real" / "fifo")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    if target != "loop":
        (tmp_path / "link").symlink_to(tmp_path / "real" / target)
    link = tmp_path / ("loop" if target == "loop" else "link")
    with pytest.raises(UsageError, match="it is a symbolic link; specc writes no file through a link"):
        write_file(link, "new\n")
    assert link.is_symlink() and (tmp_path / "real" / "file").read_text() == "old\n"
    assert stat.S_ISFIFO(os.stat(tmp_path / "real" / "fifo").st_mode)
    assert leftovers(tmp_path) == [] and leftovers(tmp_path / "real") == []


def test_a_directory_link_does_not_carry_a_file_outside_within(tmp_path):
    """Issue 53: a committed `build -> /elsewhere` link took `specc compile`'s default output out of the project."""
    (tmp_path / "project").mkdir()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "project" / "build").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(UsageError, match="its directory leads outside"):
        write_file(tmp_path / "project" / "build" / "x.py", "x", within=tmp_path / "project")
    assert os.listdir(tmp_path / "elsewhere") == []
    write_file(tmp_path / "project" / "build" / "x.py", "x")  # named on purpose, with no `within`: written
    assert (tmp_path / "elsewhere" / "x.py").read_text() == "x"
    write_file(tmp_path / "project" / "out" / "y.py", "y", within=tmp_path / "project")
    assert (tmp_path / "project" / "out" / "y.py").read_text() == "y"


def test_a_path_below_a_file_is_one_line(tmp_path):
    (tmp_path / "file").write_text("mine\n")
    with pytest.raises(UsageError) as raised:
        write_file(tmp_path / "file" / "out.py", "x")
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
        write_file(target, "new\n")
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


def test_a_read_takes_only_a_regular_file_inside_its_root(tmp_path):
    (tmp_path / "project").mkdir()
    (tmp_path / "secret").write_text("hunter2\n")
    (tmp_path / "project" / "mine.yaml").write_text("a: 1\n")
    (tmp_path / "project" / "leak.yaml").symlink_to(tmp_path / "secret")
    (tmp_path / "project" / "alias.yaml").symlink_to(tmp_path / "project" / "mine.yaml")
    (tmp_path / "project" / "loop.yaml").symlink_to(tmp_path / "project" / "loop2.yaml")
    (tmp_path / "project" / "loop2.yaml").symlink_to(tmp_path / "project" / "loop.yaml")
    os.mkfifo(tmp_path / "project" / "pipe.yaml")
    root = tmp_path / "project"
    assert read_file(root / "mine.yaml", 100, root=root) == b"a: 1\n"
    assert read_file(root / "alias.yaml", 100, root=root) == b"a: 1\n"  # a link inside the root is followed
    for name, reason in (
        ("leak.yaml", "it leads outside"),
        ("loop.yaml", "its symbolic links lead round in a loop"),
        ("pipe.yaml", "it is a FIFO, not a regular file"),
        ("gone.yaml", "No such file"),
        ("mine.yaml\0x", "NUL"),
    ):
        with pytest.raises(OSError, match=reason):
            read_file(str(root / name), 100, root=root)


def test_a_read_stops_one_byte_past_its_bound_whatever_the_file_says(tmp_path):
    """Issue 53: check-compiled read a 3 GiB sparse script whole."""
    sparse = tmp_path / "big.py"
    with open(sparse, "wb") as out:
        out.truncate(3 << 30)
    assert len(read_file(sparse, 4096, root=tmp_path)) == 4097


def test_a_walk_follows_no_directory_link_and_offers_each_file_as_it_is(tmp_path):
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "x.yaml").write_text("x")
    (tmp_path / "a" / "up").symlink_to(tmp_path)  # a loop for a walk that follows links
    (tmp_path / "a" / "self.yaml").symlink_to(tmp_path / "a" / "self.yaml")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "h.yaml").write_text("h")
    found = list(walk_files(tmp_path, keep_dir=lambda name: not name.startswith(".")))
    assert found == [str(tmp_path / "a" / name) for name in ("self.yaml", "up", "b/x.yaml")]


def test_a_walk_is_bounded(tmp_path, monkeypatch):
    monkeypatch.setattr(files, "MAX_WALK", 10)
    for i in range(11):
        (tmp_path / f"f{i}").write_text("")
    with pytest.raises(OSError, match="holds more than 10 entries"):
        list(walk_files(tmp_path))


def test_a_path_deeper_than_the_recursion_limit_resolves(tmp_path):
    """A missing path of 1,800 parts (an `extends` entry, a --root) is resolved up the tree in a loop, not by
    recursion: no RecursionError at validate."""
    from specc.read.files import holds, loose_real_path

    deep = tmp_path.joinpath(*["a"] * 1800, "x.yaml")
    assert loose_real_path(deep) == str(deep)
    assert holds(tmp_path, deep) and not holds(deep, tmp_path)
