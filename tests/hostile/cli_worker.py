"""specc's CLI in a process of its own, bounded in memory and time, fed one command after another.

The generated tests (test_generated_specs.py) send each case here rather than running it in pytest's process:
the worker runs under `RLIMIT_AS` (3 GiB by default), so a case that would take 15 GB ends in a MemoryError
rather than the machine's swap; each command has an alarm (10 s by default), so a loop in Python ends in a
timeout the parent reports, and a hang in C is a worker the parent kills. One worker serves many cases, so a case
costs a command, not an interpreter's start.

Protocol: one JSON object a line on stdin, `{"argv": [...], "cwd": DIR}`; one a line on stdout, `{"code": int |
null, "stdout": str, "stderr": str, "error": traceback | null, "seconds": float, "maxrss_kib": int}`. `error` is
the traceback of whatever escaped `specc.cli.main` (SystemExit with a code is an exit, not an error).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import resource
import signal
import sys
import time
import traceback
import unicodedata


class CaseTimeout(BaseException):
    """Raised by the alarm; a BaseException so that no `except Exception` in specc swallows it."""


def _alarm(signum, frame):
    raise CaseTimeout(f"took longer than {os.environ.get('SPECC_CASE_SECONDS', '10')} s")


def run_one(request: dict, main, seconds: float) -> dict:
    out, err = io.StringIO(), io.StringIO()
    code, error = None, None
    start = time.perf_counter()
    cwd = os.getcwd()
    try:
        os.chdir(request.get("cwd") or cwd)
        signal.setitimer(signal.ITIMER_REAL, seconds)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(request["argv"])
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else 2
    except BaseException:  # the point: whatever escapes main is reported
        error = traceback.format_exc()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        os.chdir(cwd)
    return {
        "code": code,
        "stdout": out.getvalue(),
        "stderr": err.getvalue(),
        "error": error,
        "seconds": time.perf_counter() - start,
        "maxrss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
    }


def serve() -> None:
    limit = int(os.environ.get("SPECC_CASE_MEMORY", str(3 << 30)))
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    seconds = float(os.environ.get("SPECC_CASE_SECONDS", "10"))
    signal.signal(signal.SIGALRM, _alarm)
    from specc.cli import main

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 1000))
    reply = os.fdopen(os.dup(1), "w", encoding="utf-8")  # the replies' own channel: whatever writes to fd 1
    os.dup2(2, 1)  # itself (a C library, a child process) lands in the worker's stderr, not in a reply
    for line in sys.stdin:
        result = run_one(json.loads(line), main, seconds)
        reply.write(json.dumps(result) + "\n")
        reply.flush()


# What a reply must not hold


BIDI = set("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u2028\u2029")


def raw_character(text: str) -> str | None:
    """The first character of `text` that a terminal or a CI log would act on: a control (C0, C1, DEL; `\\n`
    aside), a lone surrogate, a bidi override or a line separator."""
    for char in text:
        if char != "\n" and (unicodedata.category(char) in ("Cc", "Cs") or char in BIDI):
            return char
    return None


def innermost_specc_frame(trace: str) -> str:
    frames = re.findall(r'File "[^"]*?/(specc/[^"]+)", line (\d+)', trace)
    return f"{frames[-1][0]}:{frames[-1][1]}" if frames else "?"


def failures(command: str, reply: dict, seconds: float = 10) -> list[str]:
    """What is wrong with one command's reply, each as a one-line signature."""
    found = []
    if reply["error"]:
        last = reply["error"].strip().splitlines()[-1]
        found.append(f"{command}: escaped main: {last[:200]} at {innermost_specc_frame(reply['error'])}")
    elif reply["code"] not in (0, 1, 2):
        found.append(f"{command}: exit status {reply['code']!r}")
    for stream in ("stdout", "stderr"):
        if "Traceback (most recent call last)" in reply[stream]:
            found.append(f"{command}: a traceback on {stream}")
        char = raw_character(reply[stream])
        if char is not None:
            found.append(f"{command}: raw U+{ord(char):04X} on {stream}")
    if reply["seconds"] is not None and reply["seconds"] > seconds:
        found.append(f"{command}: took {reply['seconds']:.1f} s")
    return found


class Worker:
    """The parent's side: `worker.run(argv, cwd)` -> the reply; a worker that died or hung is reported as such
    (code None, `error` saying what happened) and a new one is started for the next case."""

    def __init__(self, seconds: float = 10, memory: int = 3 << 30):
        self.seconds, self.memory = seconds, memory
        self.process = None
        self.log = None

    def _start(self) -> None:
        import subprocess
        import tempfile

        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env = {
            **os.environ,
            "NO_COLOR": "1",
            "TERM": "dumb",
            "SPECC_CASE_SECONDS": str(self.seconds),
            "SPECC_CASE_MEMORY": str(self.memory),
            "OPENBLAS_NUM_THREADS": "1",
            "OMP_NUM_THREADS": "1",
            "PYTHONPATH": root + os.pathsep + os.environ.get("PYTHONPATH", ""),
            "RAY_ENABLE_AUTO_CONNECT": "0",
        }
        self.log = tempfile.TemporaryFile()  # noqa: SIM115 - the worker's stderr, for as long as it lives
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.hostile.cli_worker"], cwd=root, env=env, text=True, encoding="utf-8",
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log,
        )  # fmt: skip

    def run(self, argv: list[str], cwd: str | None = None) -> dict:
        import selectors

        if self.process is None or self.process.poll() is not None:
            self._start()
        self.process.stdin.write(json.dumps({"argv": argv, "cwd": cwd}) + "\n")
        self.process.stdin.flush()
        selector = selectors.DefaultSelector()
        selector.register(self.process.stdout, selectors.EVENT_READ)
        ready = selector.select(timeout=self.seconds + 30)
        selector.close()
        line = self.process.stdout.readline() if ready else ""
        if line:
            return json.loads(line)
        hung = self.process.poll() is None
        self.close()
        what = f"hung past {self.seconds + 30} s" if hung else f"died with status {self.process.returncode}"
        return {"code": None, "stdout": "", "stderr": self._tail(), "error": f"the worker {what}",
                "seconds": None, "maxrss_kib": None}  # fmt: skip

    def _tail(self) -> str:
        if self.log is None:
            return ""
        self.log.seek(0)
        return self.log.read()[-4000:].decode("utf-8", "replace")

    def close(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        if self.process is not None:
            for stream in (self.process.stdin, self.process.stdout):
                with contextlib.suppress(OSError):
                    stream.close()


if __name__ == "__main__":
    serve()
