"""Hostile working directories: what a job would really upload to a cluster (issue 15, class 3).

Each test submits a spec through `specc submit` against a stand-in for Ray's JobSubmissionClient whose
submit_job does what the real one does with the runtime_env specc hands it: Ray's own
upload_working_dir_if_needed, with create_package building the zip Ray would send (Ray's walk, Ray's default
excludes, .gitignore/.rayignore, and the excludes specc gives it). The tests read that zip's members, so they
prove the upload, not specc's own account of it. A walk that would not end fails the test (SIGALRM) instead of
hanging it.
"""

from __future__ import annotations

import itertools
import logging
import os
import signal
import time
import zipfile
from contextlib import contextmanager
from pathlib import Path

import pytest

from specc import cli
from specc.execute import run, shipping, submit

SPEC = """\
specc: 1
name: shipped
framework: torch
model: {type: custom, factory: "models:make"}
dataset: {type: digits}
training: {epochs: 1}
"""
SECRET = "the-secret-value\n"
QUIET = logging.getLogger("hostile-shipping")  # Ray's packaging logs here (its own logger keeps a closed stream)


@contextmanager
def within(seconds: int):
    """Fails (rather than hangs) a walk that does not end."""

    def expire(*_):
        raise TimeoutError(f"still walking after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def runtime_env(module, address, storage):
    """What the compiled script hands ray.init (or a Ray Job) for `address` and the run storage path."""
    return module.specc_runtime.job_runtime_env(module.RUN, module.__file__, address, storage)


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    """A project with a custom model (so its directory travels), away from anything that could be shipped by mistake."""
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.delenv("RAY_JOB_CONFIG_JSON_ENV_VAR", raising=False)
    monkeypatch.chdir(tmp_path)
    root = tmp_path / "project"
    root.mkdir()
    (root / "spec.yaml").write_text(SPEC, encoding="utf-8")
    (root / "models.py").write_text("def make(config):\n    return None\n", encoding="utf-8")
    return root


class Upload:
    """What the stand-in cluster received: the zip's members and their contents."""

    def __init__(self):
        self.members: dict[str, bytes] = {}  # the working directory's zip
        self.modules: dict[str, bytes] = {}  # py_modules: their zips' members, or a .py or wheel file
        self.sent: dict[str, object] = {}  # pip and conda as Ray reads them here: a list, a mapping, a file's text

    def names(self) -> set[str]:
        return set(self.members)

    def holds(self, text: str) -> bool:
        everything = [*self.members.values(), *self.modules.values(), str(self.sent).encode()]
        return any(text.encode() in data for data in everything)


def submitted(project: Path, monkeypatch, capsys, *extra: str, seconds: int = 60) -> tuple[int, Upload, str]:
    """`specc submit` of the project's spec: (exit code, what Ray would upload, stderr)."""
    from ray._private.runtime_env.packaging import create_package
    from ray._private.runtime_env.py_modules import upload_py_modules_if_needed
    from ray._private.runtime_env.working_dir import upload_working_dir_if_needed

    upload = Upload()
    scratch = project.parent / "zips"
    scratch.mkdir(exist_ok=True)

    class Jobs:  # Ray's JobSubmissionClient.submit_job, up to the HTTP request
        def submit_job(self, *, entrypoint, submission_id, runtime_env, metadata):
            def zip_it(working_dir, excludes, is_file=False):
                package = scratch / f"{time.time_ns()}.zip"
                create_package(working_dir, package, include_gitignore=True, excludes=excludes, logger=QUIET)
                with zipfile.ZipFile(package) as archive:
                    upload.members = {name: archive.read(name) for name in archive.namelist()}

            def zip_module(module, excludes, is_file=False):
                if is_file:
                    upload.modules[Path(module).name] = Path(module).read_bytes()
                    return
                package = scratch / f"{time.time_ns()}.zip"
                create_package(module, package, True, Path(module).is_dir(), excludes=excludes, logger=QUIET)
                with zipfile.ZipFile(package) as archive:
                    upload.modules.update({name: archive.read(name) for name in archive.namelist()})

            env = dict(runtime_env)
            upload.sent = {key: value for key, value in env.items() if key in ("pip", "conda")}
            for key in ("pip", "conda"):  # Ray reads these files here and sends what they hold
                if isinstance(env.get(key), str):
                    upload.sent[key] = Path(env[key]).read_text()
            upload_working_dir_if_needed(env, include_gitignore=True, logger=QUIET, upload_fn=zip_it)
            upload_py_modules_if_needed(env, include_gitignore=True, logger=QUIET, upload_fn=zip_module)
            return submission_id

    monkeypatch.setattr(submit, "client", lambda address, timeout_s=None: Jobs())
    with within(seconds):
        code = cli.main(["submit", str(project / "spec.yaml"), "--address", "http://head:8265", *extra])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return code, upload, err


def warning_names(err: str, *paths: str) -> bool:
    line = next((line for line in err.splitlines() if "warning[W303]" in line), "")
    return all(path in line for path in paths)


# -- links -------------------------------------------------------------------------------------------------------


def test_a_link_to_etc_inside_the_working_directory_is_not_followed(project, monkeypatch, capsys):
    (project / "system").symlink_to("/etc")

    code, upload, err = submitted(project, monkeypatch, capsys)

    assert code == 0
    assert not [name for name in upload.names() if name.startswith("system")]  # no /etc/passwd, /etc/shadow, ...
    assert {"models.py", "spec.yaml"} <= upload.names()
    assert warning_names(err, "system", "a link out of the working directory, to /etc")


def test_a_link_to_a_file_outside_is_not_followed(project, monkeypatch, capsys):
    outside = project.parent / "elsewhere.txt"
    outside.write_text(SECRET, encoding="utf-8")
    (project / "notes.txt").symlink_to(outside)

    code, upload, err = submitted(project, monkeypatch, capsys)

    assert code == 0
    assert "notes.txt" not in upload.names() and not upload.holds(SECRET)
    assert warning_names(err, "notes.txt")


def test_a_link_to_the_directory_above_is_not_followed(project, monkeypatch, capsys):
    (project.parent / "other-project").mkdir()
    (project.parent / "other-project" / "key.txt").write_text(SECRET, encoding="utf-8")
    (project / "up").symlink_to("..")

    code, upload, _ = submitted(project, monkeypatch, capsys)

    assert code == 0 and not upload.holds(SECRET)
    assert not [name for name in upload.names() if name.startswith("up")]


def test_a_link_loop_is_left_behind_and_ends(project, monkeypatch, capsys):
    (project / "a").symlink_to(".")

    code, upload, err = submitted(project, monkeypatch, capsys)

    assert code == 0
    assert not [name for name in upload.names() if name.startswith("a/")]  # Ray walked it 40 levels deep
    assert warning_names(err, "a (a link to a directory above it (a loop))")


def test_two_link_loops_end_too(project, monkeypatch, capsys):
    """Two loops branch at every level: Ray's walk would take 2**40 steps."""
    (project / "a").symlink_to(".")
    (project / "b").symlink_to(project)

    code, upload, _ = submitted(project, monkeypatch, capsys, seconds=30)

    assert code == 0
    assert upload.names() >= {"models.py", "spec.yaml"}
    assert not [name for name in upload.names() if name.startswith(("a/", "b/"))]


def test_a_link_that_stays_inside_is_followed(project, monkeypatch, capsys):
    (project / "data").mkdir()
    (project / "data" / "rows.csv").write_text("a,b\n", encoding="utf-8")
    (project / "current").symlink_to("data")

    code, upload, err = submitted(project, monkeypatch, capsys)

    assert code == 0 and {"data/rows.csv", "current/rows.csv"} <= upload.names()
    assert "W303" not in err


def test_the_upload_holds_the_script_and_this_speccs_runtime_not_the_projects(project, monkeypatch, capsys):
    """A runtime of the project's own at the top of the working directory (a link to a file outside, here) is not
    what the job imports: Ray zips this specc's, beside the script, and never opens the project's."""
    from specc import runtime

    (project.parent / "elsewhere.py").write_text(SECRET, encoding="utf-8")
    (project / "specc_runtime.py").symlink_to(project.parent / "elsewhere.py")

    code, upload, err = submitted(project, monkeypatch, capsys)

    assert code == 0 and upload.members["specc_runtime.py"] == runtime.source().encode("utf-8")
    assert {"specc_job_shipped.py", "models.py", "spec.yaml"} <= upload.names() and not upload.holds(SECRET)
    assert "W303" not in err  # asked for: this specc's runtime replaces it


def test_a_link_below_a_followed_link_is_checked_where_ray_reaches_it(project, monkeypatch, capsys):
    (project / "data").mkdir()
    (project / "data" / "system").symlink_to("/etc")
    (project / "current").symlink_to("data")

    code, upload, err = submitted(project, monkeypatch, capsys)

    assert code == 0
    assert not [name for name in upload.names() if "system" in name]
    assert warning_names(err, "current/system", "data/system")


def test_specc_run_on_a_cluster_leaves_the_link_behind_too(project, monkeypatch, capsys):
    """`specc run --address` hands Ray the compiled script's runtime_env: the links join its excludes."""
    import types

    from ray._private.runtime_env.packaging import create_package
    from ray._private.runtime_env.working_dir import upload_working_dir_if_needed

    from specc import api

    (project / "system").symlink_to("/etc")
    here = project / "script.py"
    module = types.ModuleType("shipped")
    module.__file__ = str(here)
    exec(compile(api.compile(api.load(project / "spec.yaml"), str(here)), str(here), "exec"), module.__dict__)
    storage = str(project.parent / "runs")

    run._check_shipment(module, storage, str(project / "spec.yaml"))
    members = []

    def zip_it(working_dir, excludes, is_file=False):
        create_package(working_dir, project.parent / "run.zip", include_gitignore=True, excludes=excludes, logger=QUIET)
        members.extend(zipfile.ZipFile(project.parent / "run.zip").namelist())

    env = runtime_env(module, "10.0.0.1:6379", storage)
    upload_working_dir_if_needed(env, include_gitignore=True, logger=QUIET, upload_fn=zip_it)

    assert "models.py" in members and not [name for name in members if name.startswith("system")]
    assert "warning[W303]" in capsys.readouterr().err


# -- secrets -----------------------------------------------------------------------------------------------------

SECRETS = [
    ".env",
    ".env.local",
    "id_rsa",
    "id_ed25519",
    ".ssh/id_ecdsa",
    ".ssh/config",
    ".aws/credentials",
    ".netrc",
    ".git-credentials",
    "server.pem",
    ".pypirc",
    ".kube/config",
    "config/.env",  # at any depth
    "deploy/keys/id_rsa",
]


@pytest.mark.parametrize("secret", SECRETS)
def test_a_secret_file_is_not_shipped(project, monkeypatch, capsys, secret):
    (project / secret).parent.mkdir(parents=True, exist_ok=True)
    (project / secret).write_text(SECRET, encoding="utf-8")

    code, upload, err = submitted(project, monkeypatch, capsys)

    assert code == 0 and "models.py" in upload.names()
    assert secret not in upload.names() and not upload.holds(SECRET)
    assert warning_names(err, secret, "looks like a secret")


def test_a_secret_named_in_cluster_include_is_shipped(project, monkeypatch, capsys):
    (project / ".env").write_text(SECRET, encoding="utf-8")
    (project / ".aws").mkdir()
    (project / ".aws" / "credentials").write_text(SECRET, encoding="utf-8")
    (project / ".aws" / "config").write_text("[default]\n", encoding="utf-8")
    spec = project / "spec.yaml"
    spec.write_text(SPEC + "cluster: {include: [.env, .aws/config]}\n", encoding="utf-8")

    code, upload, err = submitted(project, monkeypatch, capsys)

    assert code == 0
    assert {".env", ".aws/config"} <= upload.names() and ".aws/credentials" not in upload.names()
    assert warning_names(err, ".aws/credentials") and not warning_names(err, ".env ")


def test_a_directory_named_in_cluster_include_ships_whole(project, monkeypatch, capsys):
    (project / ".ssh").mkdir()
    (project / ".ssh" / "known_hosts").write_text("host key\n", encoding="utf-8")
    (project / "spec.yaml").write_text(SPEC + "cluster: {include: [.ssh]}\n", encoding="utf-8")

    code, upload, _ = submitted(project, monkeypatch, capsys)

    assert code == 0 and ".ssh/known_hosts" in upload.names()


@pytest.mark.parametrize("outside", ["/etc/shadow", "../other/.env", "a/../../b", "!x"])
def test_cluster_include_names_only_paths_inside_the_working_directory(project, capsys, outside):
    (project / "spec.yaml").write_text(SPEC + f"cluster: {{include: ['{outside}']}}\n", encoding="utf-8")

    code = cli.main(["validate", str(project / "spec.yaml")])

    out = capsys.readouterr().out
    assert code == 1 and "cluster.include.0" in out and "inside the working directory" in out


# -- the working directory itself ------------------------------------------------------------------------------


def test_working_dir_the_file_systems_root_is_refused(project, capsys):
    (project / "spec.yaml").write_text(SPEC + "cluster: {working_dir: /}\n", encoding="utf-8")

    code = cli.main(["validate", str(project / "spec.yaml")])

    out = capsys.readouterr().out
    assert code == 1 and "spec.yaml:7:" in out and "error[E403]: cluster.working_dir" in out and "root" in out


def test_working_dir_that_resolves_to_the_home_directory_is_refused(project, monkeypatch, capsys):
    monkeypatch.setenv("HOME", str(project.parent))
    (project / "spec.yaml").write_text(SPEC + "cluster: {working_dir: ..}\n", encoding="utf-8")

    code = cli.main(["validate", str(project / "spec.yaml")])

    out = capsys.readouterr().out
    assert code == 1 and "error[E403]: cluster.working_dir" in out and "home directory" in out


def test_a_spec_in_the_home_directory_does_not_ship_it(project, monkeypatch, capsys):
    """With no cluster.working_dir, the spec's own directory travels: not when that is the home directory."""
    monkeypatch.setenv("HOME", str(project))
    (project / ".bash_history").write_text(SECRET, encoding="utf-8")

    code, upload, err = submitted(project, monkeypatch, capsys)

    assert code == 1 and not upload.members
    assert "error[E403]" in err and "home directory" in err


# -- bounds ------------------------------------------------------------------------------------------------------


def test_more_files_than_the_bound_is_a_problem_at_once(project, monkeypatch, capsys):
    monkeypatch.setattr(shipping, "MAX_ENTRIES", 300, raising=False)
    (project / "many").mkdir()
    for number in range(400):
        (project / "many" / f"{number}.txt").write_text("x", encoding="utf-8")

    started = time.monotonic()
    code, upload, err = submitted(project, monkeypatch, capsys, seconds=20)

    assert code == 1 and not upload.members and time.monotonic() - started < 10
    assert "error[E403]: cluster.excludes" in err and "more than 300 files" in err


def test_links_that_multiply_paths_are_a_problem_at_once(project, monkeypatch, capsys):
    """No loop, but 2**30 paths: each level links twice to the next. Ray's walk would never end."""
    monkeypatch.setattr(shipping, "MAX_ENTRIES", 5_000, raising=False)
    levels = [project / f"level{number}" for number in range(31)]
    for level in levels:
        level.mkdir()
    for level, below in itertools.pairwise(levels):
        (level / "left").symlink_to(os.path.relpath(below, level))
        (level / "right").symlink_to(os.path.relpath(below, level))

    code, upload, err = submitted(project, monkeypatch, capsys, seconds=20)

    assert code == 1 and not upload.members
    assert "error[E403]" in err and "links that multiply paths" in err


def dry_run(project: Path, capsys, *extra: str) -> tuple[int, str, str]:
    with within(20):
        code = cli.main(["submit", str(project / "spec.yaml"), "--dry-run", *extra])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


# -- cluster.runtime_env's local paths (issue 53) -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "where"),
    [
        ("{py_modules: [../secrets]}", "cluster.runtime_env.py_modules.0"),
        ("{py_modules: [models.py, ../secrets/mod.py]}", "cluster.runtime_env.py_modules.1"),
        ("{pip: ../secrets/.env}", "cluster.runtime_env.pip"),
        ("{conda: ../secrets/env.yml}", "cluster.runtime_env.conda"),
    ],
)
def test_a_runtime_env_path_outside_the_project_is_refused_and_nothing_is_sent(
    project, monkeypatch, capsys, field, where
):
    secrets = project.parent / "secrets"
    secrets.mkdir()
    for name in (".env", "mod.py", "env.yml"):
        (secrets / name).write_text(SECRET, encoding="utf-8")
    (project / "spec.yaml").write_text(SPEC + f"cluster: {{runtime_env: {field}}}\n", encoding="utf-8")

    code, upload, err = submitted(project, monkeypatch, capsys)
    dry, out, dry_err = dry_run(project, capsys)

    assert code == 1 and not upload.members and not upload.holds(SECRET)
    assert "spec.yaml:7:" in err and f"error[E023]: {where}" in err and "outside the project" in err
    assert "--root" in err
    assert dry == 1 and "error[E023]" in dry_err and SECRET not in out + dry_err


def test_a_runtime_env_path_that_links_out_of_the_project_is_refused(project, monkeypatch, capsys):
    (project.parent / "elsewhere").mkdir()
    (project.parent / "elsewhere" / "requirements.txt").write_text("leaked-package\n", encoding="utf-8")
    (project / "requirements.txt").symlink_to(project.parent / "elsewhere" / "requirements.txt")
    (project / "spec.yaml").write_text(SPEC + "cluster: {runtime_env: {pip: requirements.txt}}\n", encoding="utf-8")

    code, upload, err = submitted(project, monkeypatch, capsys)

    assert code == 1 and "error[E023]: cluster.runtime_env.pip" in err and not upload.holds("leaked-package")


def test_runtime_env_paths_inside_the_project_are_listed_and_sent_as_walked(project, monkeypatch, capsys):
    (project / "helpers").mkdir()
    (project / "helpers" / "__init__.py").write_text("X = 1\n", encoding="utf-8")
    (project / "helpers" / ".env").write_text(SECRET, encoding="utf-8")
    (project / "helpers" / "fifo").parent.mkdir(exist_ok=True)
    os.mkfifo(project / "helpers" / "fifo")
    (project / "tool.py").write_text("Y = 2\n", encoding="utf-8")
    (project / "requirements.txt").write_text("numpy\n", encoding="utf-8")
    env = "{py_modules: [helpers, tool.py], pip: requirements.txt}"
    (project / "spec.yaml").write_text(SPEC + f"cluster: {{runtime_env: {env}}}\n", encoding="utf-8")

    dry, out, _ = dry_run(project, capsys)
    code, upload, err = submitted(project, monkeypatch, capsys)

    assert dry == 0
    module = out[out.index("would ship from helpers (cluster.runtime_env.py_modules.0):") :].splitlines()
    assert module[1].endswith("  __init__.py") and module[2].endswith("  total, 1 files")
    assert "  fifo: a FIFO: only files and directories travel" in out
    assert "would ship from tool.py (cluster.runtime_env.py_modules.1):" in out
    assert "would ship from requirements.txt (cluster.runtime_env.pip):" in out
    assert code == 0 and {"helpers/__init__.py", "tool.py"} <= set(upload.modules)
    assert "helpers/.env" not in upload.modules and "helpers/fifo" not in upload.modules and not upload.holds(SECRET)
    assert upload.sent["pip"].strip() == "numpy"
    assert warning_names(err, "cluster.runtime_env.py_modules.0: .env", "fifo")


def test_a_runtime_env_path_that_is_not_a_regular_file_is_refused_without_opening_it(project, monkeypatch, capsys):
    os.mkfifo(project / "requirements.txt")
    (project / "spec.yaml").write_text(SPEC + "cluster: {runtime_env: {pip: requirements.txt}}\n", encoding="utf-8")

    code, upload, err = submitted(project, monkeypatch, capsys, seconds=10)

    assert code == 1 and not upload.members and "a FIFO, not a regular file" in err


# -- the working directory above the project (issue 53) -----------------------------------------------------------


def test_a_working_dir_above_the_git_work_tree_is_refused_unless_root_widens_it(project, monkeypatch, capsys):
    (project / ".git").mkdir()
    (project.parent / "neighbour.txt").write_text(SECRET, encoding="utf-8")
    (project / "spec.yaml").write_text(SPEC + "cluster: {working_dir: ..}\n", encoding="utf-8")

    code, upload, err = submitted(project, monkeypatch, capsys)
    dry, out, _ = dry_run(project, capsys)

    assert code == 1 and not upload.members
    assert "spec.yaml:7:" in err and "error[E023]: cluster.working_dir" in err and "--root" in err
    assert dry == 1 and "neighbour.txt" not in out
    widened, out, _ = dry_run(project, capsys, "--root", str(project.parent))
    assert widened == 0 and "neighbour.txt" in out


# -- special files and links in the working directory (issue 53) ----------------------------------------------------


def test_a_fifo_in_the_working_directory_is_left_behind_and_never_opened(project, monkeypatch, capsys):
    os.mkfifo(project / "pipe")
    (project / "data").mkdir()
    os.mkfifo(project / "data" / ".gitignore")  # Ray's is_file() passes over it; so does the walk

    dry, out, _ = dry_run(project, capsys)
    code, upload, err = submitted(project, monkeypatch, capsys, seconds=20)

    assert dry == 0 and "  pipe: a FIFO: only files and directories travel" in out
    assert code == 0 and "pipe" not in upload.names() and "models.py" in upload.names()
    assert warning_names(err, "pipe (a FIFO")


def test_a_link_to_itself_and_a_link_to_nothing_are_left_behind(project, monkeypatch, capsys):
    (project / "loop").symlink_to("loop")
    (project / "gone").symlink_to(project / "missing")

    dry, out, _ = dry_run(project, capsys)
    code, upload, _ = submitted(project, monkeypatch, capsys)

    assert (
        dry == 0 and "  loop: a link in a loop (it leads round to itself)" in out and "  gone: a link to nothing" in out
    )
    assert code == 0 and not {"loop", "gone"} & upload.names()


# -- exclude patterns and ignore files (issue 53) -------------------------------------------------------------------


def test_an_exclude_pattern_that_makes_regular_expressions_backtrack_ships_in_seconds(project, monkeypatch, capsys):
    """Ray's pathspec takes 38 s for this pattern against a 30-letter name; the names here are 200 letters. In a
    .rayignore it is specc's matcher's to apply (submit sends Ray no pattern); in cluster.excludes it is refused at
    validate (the test below), since `specc run --address` hands those to Ray."""
    hostile = "*a" * 24 + "*b"
    (project / ("a" * 200)).write_text("x", encoding="utf-8")
    (project / ".rayignore").write_text(hostile + "\n", encoding="utf-8")

    started = time.monotonic()
    code, upload, _ = submitted(project, monkeypatch, capsys, seconds=20)

    assert code == 0 and "a" * 200 in upload.names() and time.monotonic() - started < 10


@pytest.mark.parametrize(
    ("content", "said"),
    [(b"*.tmp\n" * 20_000, "larger than"), (b"\xff\xfe*.tmp\n", "not UTF-8"), (b"a\\\n", "backslash")],
)
def test_an_ignore_file_that_cannot_be_read_is_a_problem_not_a_hang(project, monkeypatch, capsys, content, said):
    (project / ".gitignore").write_bytes(content)

    code, upload, err = submitted(project, monkeypatch, capsys, seconds=20)

    assert code == 1 and not upload.members and "error[E403]" in err and said in err and ".gitignore" in err


@pytest.mark.parametrize(
    ("pattern", "refused"),
    [("*a*a*a*a*b", True), ("**/a/**/a/**/a/**/b", True), ("*a*/*a*/*b*", True), ("*a*a*b", False),
     ("**/node_modules/**", False), ("data/**/*.csv", False)],
)  # fmt: skip
def test_an_exclude_pattern_ray_would_backtrack_on_is_refused_at_validate(tmp_path, pattern, refused):
    """Ray matches cluster.excludes with pathspec's regular expressions: `*a*a*a*a*b` took 34 s on one 255-letter
    name here. specc's own matcher is linear, but `specc run --address` and compiled scripts hand them to Ray."""
    from specc import api

    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "specc: 1\nname: x\nframework: torch\nmodel: {type: mlp}\ndataset: {type: digits}\ntraining: {epochs: 1}\n"
        f"cluster: {{excludes: ['{pattern}']}}\n"
    )
    found = [(p.code, p.path) for p in api.check_file(spec).problems]
    assert found == ([("E403", "cluster.excludes.0")] if refused else [])
