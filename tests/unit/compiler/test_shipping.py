"""What travels with a job to a cluster (specc/compiler/travels.py, specc/execute/shipping.py, the compiled
runtime's job_runtime_env, specc submit's addresses): the working directory and what stays behind, Ray's own walk
of it, the size check, and a runtime_env that merges with a Ray Job's instead of clashing with it.
The clusters themselves: tests/e2e/test_cluster.py."""

from __future__ import annotations

import json
import os
import types
from pathlib import Path

import pytest

from specc import api
from specc.compiler import travels
from specc.execute import shipping, submit
from specc.spec.errors import SpecError, UsageError

SPEC = """\
specc: 1
name: shipped
framework: torch
model: {type: custom, factory: "models:make"}
dataset: {type: digits}
training: {epochs: 1}
"""
MODELS = "def make(*args, **kwargs):\n    return None\n"  # the factory SPEC names, a module of the project
NEVER = [*travels.ALWAYS_EXCLUDED, *travels.SECRETS]  # what no spec ships (but SECRETS that cluster.include names)


def runtime_env(module, address, storage):
    """What the compiled script hands ray.init (or a Ray Job) for `address` and the run storage path."""
    return module.specc_runtime.job_runtime_env(module.RUN, module.__file__, address, storage)


def script(spec: Path) -> types.ModuleType:
    """The compiled script as a module whose file sits beside the spec (as `specc compile -o` next to it)."""
    here = spec.parent / "script.py"
    source = api.compile(api.load(spec), str(here))
    module = types.ModuleType("shipped_script")
    module.__file__ = str(here)
    exec(compile(source, str(here), "exec"), module.__dict__)
    return module


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.delenv("RAY_JOB_CONFIG_JSON_ENV_VAR", raising=False)
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC + "cluster: {runtime_env: {env_vars: {A: spec, B: b}}}\n", encoding="utf-8")
    (tmp_path / "models.py").write_text(MODELS, encoding="utf-8")
    return spec


def test_a_local_ray_gets_only_the_specs_runtime_env(project):
    module = script(project)
    assert runtime_env(module, None, str(project.parent / "runs")) == {"env_vars": {"A": "spec", "B": "b"}}
    assert not module.specc_runtime.joins_cluster(None) and not module.specc_runtime.joins_cluster("local")


def test_joining_a_cluster_ships_the_specs_directory(project):
    module = script(project)
    env = runtime_env(module, "10.0.0.1:6379", str(project.parent / "runs"))
    assert env["working_dir"] == str(project.parent)
    assert env["excludes"] == [*NEVER, "/runs"]  # the run storage path lies below it
    assert env["env_vars"] == {"A": "spec", "B": "b"}
    assert runtime_env(module, "auto", "/elsewhere/runs")["excludes"] == NEVER
    assert runtime_env(module, "ray://head:10001", "s3://bucket/runs")["excludes"] == NEVER


@pytest.mark.parametrize("storage", [".", "runs", "runs/deeper", "..", "../elsewhere", "/elsewhere/runs"])
def test_the_script_leaves_the_storage_path_behind_as_specc_measures_it(project, monkeypatch, storage):
    """The compiled script and specc's size check (travels.storage_exclude) agree on what stays behind; the
    working directory itself as storage path must not exclude everything (Ray would ship no file at all)."""
    monkeypatch.chdir(project.parent)
    module = script(project)
    storage = os.path.abspath(storage)
    env = runtime_env(module, "10.0.0.1:6379", storage)
    assert env["excludes"] == [*NEVER, *travels.storage_exclude(storage, str(project.parent))]
    assert "/." not in env["excludes"]


def test_ray_address_in_the_environment_joins_a_cluster(project, monkeypatch):
    module = script(project)
    monkeypatch.setenv("RAY_ADDRESS", "10.0.0.1:6379")
    assert module.specc_runtime.joins_cluster(None)
    assert "working_dir" in runtime_env(module, None, "/runs")
    monkeypatch.setenv("RAY_ADDRESS", "local")
    assert not module.specc_runtime.joins_cluster(None)


def test_inside_a_ray_job_only_what_the_job_leaves_unset_is_added(project, monkeypatch):
    from ray.runtime_env.runtime_env import _merge_runtime_env

    module = script(project)
    job = {"working_dir": "gcs://_ray_pkg_abc.zip", "env_vars": {"A": "job"}, "pip": ["x"]}
    monkeypatch.setenv("RAY_JOB_CONFIG_JSON_ENV_VAR", json.dumps({"runtime_env": job, "metadata": {}}))
    monkeypatch.setenv("RAY_ADDRESS", "127.0.0.1:6379")  # as Ray's job supervisor sets it

    env = runtime_env(module, None, "/runs")

    assert env == {"env_vars": {"B": "b"}}  # the job's working_dir and A stand; B is added
    assert _merge_runtime_env(job, env) is not None  # what ray.init does in a job: no conflict


def test_workers_find_the_spec_directory_in_the_shipped_copy(project, monkeypatch):
    module = script(project)
    config = {"spec_dir": str(project.parent)}
    assert module.specc_runtime.spec_dir_on_node(config) == str(project.parent)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(["/ray/working_dir_files/_ray_pkg_1", "/other"]))
    assert (
        module.specc_runtime.spec_dir_on_node({**config, "spec_dir_shipped": "specs"})
        == "/ray/working_dir_files/_ray_pkg_1/specs"
    )
    assert (
        module.specc_runtime.spec_dir_on_node({**config, "spec_dir_shipped": "."})
        == "/ray/working_dir_files/_ray_pkg_1"
    )


def test_cluster_working_dir_above_the_spec(tmp_path):
    (tmp_path / ".git").mkdir()  # the project: a working directory above it is E023
    (tmp_path / "specs").mkdir()
    spec = tmp_path / "specs" / "spec.yaml"
    spec.write_text(SPEC + 'cluster: {working_dir: ".."}\n', encoding="utf-8")
    (tmp_path / "specs" / "models.py").write_text(MODELS, encoding="utf-8")
    experiment = api.load(spec)
    assert travels.working_dir(experiment, str(spec)) == str(tmp_path)
    assert travels.spec_dir_in_working_dir(experiment, str(spec)) == "specs"
    source = api.compile(experiment, str(tmp_path / "build" / "job.py"))
    assert 'WORKING_DIR = ".."' in source and 'SPEC_DIR_SHIPPED = "specs"' in source


def test_default_excludes_leave_torchvision_data_behind(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "specc: 1\nname: tv\nframework: torch\nmodel: {type: torchvision, name: resnet18, in_channels: 1}\n"
        "dataset: {type: torchvision, name: MNIST, root: ./data/mnist}\ntraining: {epochs: 1}\n",
        encoding="utf-8",
    )
    assert travels.excludes(api.load(spec), str(spec)) == [*NEVER, "/data/mnist"]
    mine = tmp_path / "mine.yaml"
    mine.write_text(spec.read_text() + "cluster: {excludes: ['*.ckpt', big/]}\n", encoding="utf-8")
    assert travels.excludes(api.load(mine), str(mine)) == [*NEVER, "*.ckpt", "big/"]


def test_measure_walks_the_directory_as_ray_zips_it(tmp_path):
    (tmp_path / "models.py").write_text("x = 1\n")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "rows.csv").write_bytes(b"a,b\n" * 1000)
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "huge.bin").write_bytes(b"\0" * 50_000)
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "objects").write_bytes(b"\0" * 10_000)
    (tmp_path / "scratch.tmp").write_bytes(b"\0" * 7_000)
    (tmp_path / ".gitignore").write_text("*.tmp\n")

    package = shipping.measure(str(tmp_path), [*travels.ALWAYS_EXCLUDED, "/runs"])

    assert package.files == 2  # models.py, data/rows.csv; .gitignore is applied here, and Ray need not read it
    assert package.size == 6 + 4000
    assert package.largest[0] == ("data", 4000)
    assert [item.path for item in package.left_behind] == [".git", ".gitignore", "runs", "scratch.tmp"]


def test_a_working_directory_larger_than_ray_uploads_is_refused_with_what_fills_it(tmp_path, monkeypatch):
    from ray._private.runtime_env import packaging

    (tmp_path / "weights").mkdir()
    (tmp_path / "weights" / "big.pt").write_bytes(b"\0" * 3000)
    (tmp_path / "models.py").write_text("x = 1\n")
    package = shipping.measure(str(tmp_path), list(travels.ALWAYS_EXCLUDED))
    assert shipping.size_problem(package, "spec.yaml") is None
    monkeypatch.setattr(packaging, "GCS_STORAGE_MAX_SIZE", 2048)

    problem = shipping.size_problem(package, "spec.yaml")

    assert problem.code == "E403" and problem.path == "cluster.excludes"
    assert "weights (0.0 MiB)" in problem.message and "2 files" in problem.message
    assert "cluster.excludes" in problem.hint


@pytest.mark.parametrize(
    ("given", "expected"),
    [("http://head:8265", "http://head:8265"), ("127.0.0.1:8265", "http://127.0.0.1:8265"), ("https://h", "https://h")],
)
def test_dashboard_addresses(given, expected):
    assert submit.dashboard_address(given) == expected


@pytest.mark.parametrize("given", [None, "auto", "ray://head:10001", "http://[::1", "[::1:8265"])
def test_a_job_needs_the_dashboards_address(given, monkeypatch):
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.delenv("RAY_API_SERVER_ADDRESS", raising=False)
    with pytest.raises(UsageError, match="8265"):
        submit.dashboard_address(given)


def test_the_dashboard_address_from_the_environment(monkeypatch):
    monkeypatch.setenv("RAY_API_SERVER_ADDRESS", "http://head:8265")
    assert submit.dashboard_address(None) == "http://head:8265"


def test_an_unreachable_dashboard_is_a_problem_within_seconds():
    import socket
    import time

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    started = time.monotonic()
    with pytest.raises(SpecError) as refused:
        submit.client(f"http://127.0.0.1:{port}")
    assert [problem.code for problem in refused.value.problems] == ["E402"]
    assert time.monotonic() - started < submit.CONNECT_TIMEOUT_S + 1


def test_the_job_writes_where_specc_run_would(project, monkeypatch, tmp_path):
    experiment = api.load(project)
    monkeypatch.chdir(tmp_path)
    assert submit.storage_for_job(experiment, None) == str(tmp_path / "runs")
    assert submit.storage_for_job(experiment, "s3://bucket/runs") == "s3://bucket/runs"
    assert submit.storage_for_job(experiment, "/shared/runs") == "/shared/runs"


def test_submission_ids_are_readable_and_unique(project):
    experiment = api.load(project)
    first, second = submit.submission_id(experiment), submit.submission_id(experiment)
    assert first.startswith("specc-shipped-") and first != second


def test_the_script_name_never_overwrites_a_file_of_the_project(tmp_path, project):
    experiment = api.load(project)
    assert submit.script_name(experiment, str(tmp_path)) == "specc_job_shipped.py"
    (tmp_path / "specc_job_shipped.py").write_text("mine")
    assert submit.script_name(experiment, str(tmp_path)) == "specc_job_shipped_2.py"


def test_a_job_that_needs_nothing_from_the_spec_directory_ships_nothing(tmp_path):
    spec = tmp_path / "plain.yaml"
    spec.write_text("specc: 1\nname: plain\nframework: torch\nmodel: {type: mlp}\ndataset: {type: digits}\n"
                    "training: {epochs: 1}\n", encoding="utf-8")  # fmt: skip
    module = script(spec)
    # Nothing can travel: the script has no working directory to ship and hands ray.init no runtime_env.
    assert not hasattr(module, "WORKING_DIR") and runtime_env(module, "10.0.0.1:6379", str(tmp_path / "runs")) is None
    csv = tmp_path / "csv.yaml"
    csv.write_text(spec.read_text().replace("{type: digits}", "{type: csv, path: rows.csv, features: [a], label: b}"))
    assert travels.needs_working_dir(api.load(csv))  # a data file beside the spec travels with the job
    assert not travels.needs_working_dir(api.load(csv, ["dataset.path=s3://bucket/rows.csv"]))


def test_a_shipped_project_without_a_runtime_env_sends_only_its_working_directory(tmp_path, monkeypatch):
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.delenv("RAY_JOB_CONFIG_JSON_ENV_VAR", raising=False)
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    (tmp_path / "models.py").write_text(MODELS, encoding="utf-8")
    module = script(spec)
    assert not hasattr(module, "RUNTIME_ENV")
    assert runtime_env(module, None, str(tmp_path / "runs")) == {}  # a local Ray: nothing to send
    env = runtime_env(module, "10.0.0.1:6379", str(tmp_path / "runs"))
    assert env == {"working_dir": str(tmp_path), "excludes": [*NEVER, "/runs"]}
    job = {"working_dir": "gcs://_ray_pkg_abc.zip"}
    monkeypatch.setenv("RAY_JOB_CONFIG_JSON_ENV_VAR", json.dumps({"runtime_env": job, "metadata": {}}))
    assert runtime_env(module, "10.0.0.1:6379", str(tmp_path / "runs")) == {}  # the job's own stands


def test_submit_dry_run_lists_what_would_travel_and_contacts_no_cluster(tmp_path, monkeypatch, capsys):
    from specc import cli

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(submit, "client", lambda address, timeout_s=None: pytest.fail("--dry-run contacted a cluster"))
    root = tmp_path / "project"
    (root / "data").mkdir(parents=True)
    (root / "spec.yaml").write_text(SPEC, encoding="utf-8")
    (root / "models.py").write_text("def make(*a): ...\n", encoding="utf-8")
    (root / "data" / "rows.csv").write_bytes(b"a,b\n" * 1024)
    (root / ".env").write_text("TOKEN=1\n", encoding="utf-8")
    (root / "system").symlink_to("/etc")
    (root / ".git").mkdir()

    code = cli.main(["submit", str(root / "spec.yaml"), "--dry-run"])

    out, err = capsys.readouterr()
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0] == f"would ship from {root}:"
    sized = [line for line in lines if line.endswith(("  data/rows.csv", "  models.py"))]
    assert [line.strip() for line in sized] == ["4.0 KiB  data/rows.csv", "18 B  models.py"]
    assert len({line.index("B  ") for line in sized}) == 1  # sizes aligned
    assert any(line.endswith("  specc_job_shipped.py") for line in lines)  # the compiled script travels at the top
    assert any(line.endswith("  specc_runtime.py") for line in lines)  # and the runtime it imports, beside it
    assert any(line.endswith("  total, 5 files") for line in lines)
    left = lines[lines.index("left behind:") + 1 : -1]
    assert left == [
        "  .env: looks like a secret (name it in cluster.include to ship it)",
        "  .git: excluded (.git)",
        "  system: a link out of the working directory, to /etc",
    ]
    assert lines[-1].startswith("entrypoint: python specc_job_shipped.py --storage-path ")


def test_submit_dry_run_of_a_job_that_ships_only_its_script(tmp_path, monkeypatch, capsys):
    from specc import cli

    spec = tmp_path / "plain.yaml"
    spec.write_text(SPEC.replace('{type: custom, factory: "models:make"}', "{type: mlp}"), encoding="utf-8")
    (tmp_path / ".env").write_text("TOKEN=1\n", encoding="utf-8")

    code = cli.main(["submit", str(spec), "--dry-run", "--address", "http://nowhere:8265"])

    lines = capsys.readouterr().out.splitlines()
    assert code == 0 and lines[0] == "would ship from specc_job_shipped.py and specc_runtime.py alone:"
    assert lines[1].endswith("  specc_job_shipped.py") and lines[2].endswith("  specc_runtime.py")
    assert lines[3].endswith("  total, 2 files")
    assert "left behind:" not in lines


@pytest.mark.parametrize("shipped", [True, False])
def test_the_job_gets_the_script_and_this_speccs_runtime_side_by_side(tmp_path, shipped):
    """Staged for Ray: the compiled script and specc_runtime.py at the top of the job's working directory (so that
    `python specc_job_<name>.py` imports it), the runtime this specc writes; a runtime the project has there
    itself (beside a script compiled into the spec's directory) stays behind, saying why."""
    from specc import runtime

    root = tmp_path / "project"
    root.mkdir()
    spec = root / "spec.yaml"
    spec.write_text(SPEC if shipped else SPEC.replace('{type: custom, factory: "models:make"}', "{type: mlp}"))
    (root / "models.py").write_text(MODELS, encoding="utf-8")
    (root / "specc_runtime.py").write_text('VERSION = "0.0.1"\n', encoding="utf-8")  # an older specc's
    job = submit.prepare(api.load(spec))
    staged = tmp_path / "staged"

    env = submit.staged_runtime_env(job, {}, str(staged))

    working_dir = Path(env["working_dir"])
    assert (working_dir / job.script).read_text(encoding="utf-8") == job.source
    assert (working_dir / "specc_runtime.py").read_text(encoding="utf-8") == runtime.source()
    assert not (working_dir / "specc_runtime.py").is_symlink()
    assert "\nimport specc_runtime\n" in job.source and job.entrypoint.startswith(f"python {job.script} ")
    assert dict(job.package.shipped)["specc_runtime.py"] == len(runtime.source().encode("utf-8"))
    left = {item.path: item.why for item in job.package.left_behind}
    if shipped:
        assert sorted(os.listdir(working_dir)) == sorted(["models.py", "spec.yaml", job.script, "specc_runtime.py"])
        assert left["specc_runtime.py"] == "replaced by this specc's specc_runtime.py, which the script imports"
    else:
        assert sorted(os.listdir(working_dir)) == [job.script, "specc_runtime.py"] and not left


def test_size_is_shown_as_people_read_it():
    assert [shipping.size(n) for n in (0, 812, 4096, 3 * 1024 * 1024 + 1)] == ["0 B", "812 B", "4.0 KiB", "3.0 MiB"]


def test_the_warning_names_what_stays_behind_unasked_in_one_line(tmp_path):
    left = [shipping.LeftBehind(f"key{n}.pem", "looks like a secret", surprising=True) for n in range(10)]
    package = shipping.Package("p", 0, 0, [], left_behind=(shipping.LeftBehind(".git", "excluded (.git)"), *left))

    warning = shipping.left_behind_warning(package, "spec.yaml")

    assert str(warning).startswith("spec.yaml: warning[W303]: cluster.include: not shipped with the job: key0.pem")
    assert ".git" not in warning.message and warning.message.endswith("; and 2 more") and "\n" not in str(warning)
    assert shipping.left_behind_warning(shipping.Package("p", 0, 0, []), "spec.yaml") is None


def test_the_local_paths_of_cluster_are_those_ray_reads_or_uploads_from_here():
    from specc.spec.cluster import Cluster, local_paths, paths_outside

    cluster = Cluster.model_validate(
        {
            "working_dir": "..",
            "runtime_env": {
                "pip": "reqs/base.txt",
                "conda": "env.yml",
                "py_modules": ["pkg", "s3://bucket/mod.zip", "local:///opt/mod", "tool.py"],
            },
        }
    )
    found = [(".".join(map(str, where)), path) for where, path, _ in local_paths(cluster)]
    assert found == [
        ("cluster.working_dir", ".."),
        ("cluster.runtime_env.pip", "reqs/base.txt"),
        ("cluster.runtime_env.conda", "env.yml"),
        ("cluster.runtime_env.py_modules.0", "pkg"),
        ("cluster.runtime_env.py_modules.3", "tool.py"),
    ]
    named = Cluster.model_validate({"runtime_env": {"conda": "my-env", "pip": ["numpy"], "py_modules": ["gs://b/m"]}})
    assert list(local_paths(named)) == []  # a conda name, a pip list and URIs name nothing of this machine

    outside = list(paths_outside(cluster, "/p/specs", lambda path: path.startswith("/p/specs/"), "/p/specs"))
    assert [(code, where) for code, _, where, _ in outside] == [("E023", ("cluster", "working_dir"))]
    assert "--root" in outside[0][3]
