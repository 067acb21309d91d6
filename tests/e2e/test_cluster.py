"""Beyond one machine (SPEC §6, §9; issue 6): a real Ray cluster of two nodes on this machine (tests/e2e/cluster.py,
`ray start --head` + `ray start --address`, 1 CPU each, token auth), and the three ways a spec reaches it: a
compiled script with --address, `specc run --address`, and `specc submit` as a Ray Job.

Where each piece of work ran is read back from what it wrote: the factory of tests/e2e/fixtures/where_models.py
records its Ray node id and the file it was imported from, so a test sees both that two nodes took part and that
the module came from the working directory Ray shipped to each node, not from the spec's directory on disk.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .cluster import LocalCluster
from .conftest import FIXTURES, read_best, read_results

# CI runs this module in turn (share 1, tests/e2e/conftest.py): its own two-node cluster
pytestmark = [pytest.mark.slow, pytest.mark.in_turn(1)]

SHIPPED = "/runtime_resources/working_dir_files/_ray_pkg_"  # where Ray unpacks a job's working directory on a node


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    started = LocalCluster(tmp_path_factory.mktemp("cluster"))
    try:
        yield started.start()
    finally:
        started.stop()


def project(root: Path, spec: str, *, module_in: str = "specs") -> Path:
    """A project: specs/<name>.yaml and, in `module_in`, the where_models factory; returns the spec's path."""
    (root / "specs").mkdir(parents=True, exist_ok=True)
    (root / module_in).mkdir(parents=True, exist_ok=True)
    shutil.copyfile(FIXTURES / "where_models.py", root / module_in / "e2e_where.py")
    path = root / "specs" / "spec.yaml"
    path.write_text(spec, encoding="utf-8")
    return path


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def spec_text(name: str, record: Path, *, tail: str = "", workers: int = 2, epochs: int = 2, together: int = 0) -> str:
    return f"""\
specc: 1
name: {name}
framework: torch
model: {{type: custom, factory: "e2e_where:make", kwargs: {{record: "{record}", together: {together}}}}}
dataset: {{type: digits, batch_size: 64}}
training: {{epochs: {epochs}, optimizer: {{type: adam, lr: 0.01}}, metrics: [accuracy], checkpoint_every: 1}}
scaling: {{num_workers: {workers}, resources_per_worker: {{CPU: 1}}}}
run: {{checkpoints_to_keep: 1}}
{tail}"""


def ok(done: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert done.returncode == 0, (
        f"exit {done.returncode}\n--- stdout\n{done.stdout[-3000:]}\n--- stderr\n{done.stderr[-5000:]}"
    )
    return done


# -- a compiled script on two nodes ------------------------------------------------------------------------------


def test_compiled_script_trains_on_two_nodes_through_ray_client(cluster, tmp_path):
    """The compiled script on its own, given a ray:// address. (A GCS address, host:port, is what the tests below give
    `specc run`, which executes the same script: a search spread over both nodes, Keras workers one per node.
    Running this test with both kinds of address cost 58 s of CI for no other line. A trial that drives a Trainer
    sets the poll interval in its own process, on a cluster as on a local Ray: test_tune's two-worker trials.)"""
    record = tmp_path / "where.jsonl"
    spec = project(tmp_path, spec_text("two-nodes", record))
    ok(cluster.run(sys.executable, "-m", "specc", "compile", spec, "-o", "build/two_nodes.py", cwd=tmp_path))
    address = f"ray://127.0.0.1:{cluster.client_port}"

    done = ok(
        cluster.run(sys.executable, "build/two_nodes.py", "--address", address, "--storage-path", "runs", cwd=tmp_path)
    )

    built = records(record)
    assert len(built) == 2, built  # one model per Train worker
    assert len({line["node"] for line in built}) == 2, "both workers ran on one node"
    assert all(SHIPPED in line["file"] for line in built), built  # imported from the copy Ray shipped to each node
    # the script's controller poll reached the controller on the cluster (Train hands it on to the workers)
    assert {line["poll"] for line in built} == {"0.1"}, built
    header, rows = read_results(tmp_path / "runs" / "two-nodes")
    assert header == ["epoch", "train_loss", "val_loss", "val_accuracy", "num_parameters"]
    assert [row["epoch"] for row in rows] == [1, 2]
    assert rows[-1]["val_accuracy"] > 0.5
    assert "run directory:" in done.stdout
    assert epoch_lines(done.stdout, "two-nodes") == ["1/2", "2/2"]  # from Train's controller, through the queue


def epoch_lines(out: str, name: str) -> list[str]:
    """The `i/N` of each progress line a Train run printed (tests/e2e/test_progress.py checks their content)."""
    return [line.split()[2] for line in out.splitlines() if line.startswith(f"{name}: epoch ")]


# -- a Tune search whose trials spread over both nodes -----------------------------------------------------------

SEARCH = """\
tune:
  metric: val_accuracy
  mode: max
  num_samples: 1
  max_concurrent_trials: 2
  space:
    training.optimizer.lr: {grid: [0.003, 0.01, 0.03, 0.05]}
"""


def test_search_trials_spread_over_both_nodes(cluster, tmp_path):
    record = tmp_path / "where.jsonl"
    # The first two trials build their models together (where_models' `together`): two trials of 1 CPU at once on
    # nodes of 1 CPU each. Alone, a trial can end before the other node's trial process has started (2 epochs of a
    # small MLP), and Tune then runs every trial in turn in the first one's process.
    spec = project(tmp_path, spec_text("spread", record, tail=SEARCH, workers=1, together=2))

    done = ok(
        cluster.run(
            sys.executable,
            "-m",
            "specc",
            "run",
            spec,
            "--address",
            cluster.address,
            "--storage-path",
            "runs",
            cwd=tmp_path,
        )
    )

    built = records(record)
    assert len(built) == 4  # one model per trial
    lines = [line for line in done.stdout.splitlines() if line.startswith("spread: [")]
    assert sum(" started  lr=" in line for line in lines) == 4, done.stdout  # each trial's events, on the driver
    assert sum(" finished at epoch 2/2  " in line for line in lines) == 4, done.stdout
    assert len({line["node"] for line in built}) == 2, built
    assert all(SHIPPED in line["file"] for line in built)
    best = read_best(tmp_path / "runs" / "spread")
    assert best["metrics"]["val_accuracy"] > 0.5
    assert best["config"]["training.optimizer.lr"] in (0.003, 0.01, 0.03, 0.05)


# -- specc submit: a Ray Job ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def submitted(cluster, tmp_path_factory):
    """A project whose factory lives in factories/ beside specs/ (working_dir: ".."), submitted with --wait."""
    root = tmp_path_factory.mktemp("submit")
    (root / ".git").mkdir()  # the project: working_dir ".." stays inside it (a working_dir above it is E023)
    record = root / "where.jsonl"
    text = spec_text("submitted", record).replace('"e2e_where:make"', '"factories.e2e_where:make"')
    spec = project(
        root,
        text + 'cluster: {working_dir: "..", runtime_env: {env_vars: {SPECC_TEST: "yes"}}}\n',
        module_in="factories",
    )
    (root / "factories" / "__init__.py").touch()
    (root / "runs").mkdir()
    (root / "runs" / "old.bin").write_bytes(b"x" * 1000)  # run outputs stay behind
    started = time.monotonic()
    done = cluster.run(
        sys.executable,
        "-m",
        "specc",
        "submit",
        spec,
        "--address",
        cluster.dashboard,
        "--wait",
        "--storage-path",
        root / "runs",
        cwd=root,
    )
    return root, record, ok(done), time.monotonic() - started


def test_submitted_job_succeeds_and_its_results_land_in_storage_path(submitted):
    root, _, done, _ = submitted
    ok(done)
    assert "submitted specc-submitted-" in done.stderr and "succeeded" in done.stderr
    _, rows = read_results(root / "runs" / "submitted")
    assert [row["epoch"] for row in rows] == [1, 2]
    best = read_best(root / "runs" / "submitted")
    assert best["checkpoint"] and Path(best["checkpoint"], "state.pt").is_file()
    assert "run directory:" in done.stdout  # the job's own output, followed live
    assert epoch_lines(done.stdout, "submitted") == ["1/2", "2/2"]  # inside a Ray Job too


def test_submitted_job_imports_the_factory_shipped_with_it(submitted):
    root, record, done, _ = submitted
    built = records(record)
    assert len({line["node"] for line in built}) == 2
    for line in built:
        assert SHIPPED in line["file"] and line["file"].endswith("/factories/e2e_where.py"), line
        assert line["poll"] == "0.1", line  # the job's Train controller polled at the script's interval, not 2 s
    shipped = done.stderr.split("shipped:", 1)[1].splitlines()[0]
    # specs/spec.yaml, factories/__init__.py, factories/e2e_where.py, the script and specc_runtime.py; not runs/
    assert str(root) in shipped and "5 files" in shipped


def test_jobs_status_logs_and_list(submitted, cluster):
    root, _, done, _ = submitted
    job = done.stderr.split("submitted ", 1)[1].split()[0]
    status = ok(
        cluster.run(sys.executable, "-m", "specc", "jobs", "status", job, "--address", cluster.dashboard, cwd=root)
    )
    assert "SUCCEEDED" in status.stdout
    assert f"specc.spec: {root / 'specs' / 'spec.yaml'}" in status.stdout
    assert "specc.spec_sha256:" in status.stdout
    logs = ok(cluster.run(sys.executable, "-m", "specc", "jobs", "logs", job, "--address", cluster.dashboard, cwd=root))
    assert "run directory:" in logs.stdout
    listed = ok(cluster.run(sys.executable, "-m", "specc", "jobs", "list", "--address", cluster.dashboard, cwd=root))
    assert job in listed.stdout


def test_unknown_job_is_a_clear_problem(cluster, tmp_path):
    done = cluster.run(
        sys.executable, "-m", "specc", "jobs", "status", "specc-nope", "--address", cluster.dashboard, cwd=tmp_path
    )
    assert done.returncode == 1
    assert "E404" in done.stderr and "specc-nope" in done.stderr and "Traceback" not in done.stderr


FAILING = """\
specc: 1
name: failing
framework: torch
model: {type: custom, factory: "e2e_missing:make"}
dataset: {type: iris, batch_size: 16}
training: {epochs: 1}
scaling: {num_workers: 0}
"""


def test_failed_job_exits_with_its_outcome(cluster, tmp_path):
    spec = tmp_path / "failing.yaml"
    spec.write_text(FAILING, encoding="utf-8")
    # trusted, so that validate only warns (W302): a module installed on the cluster perhaps; it is installed nowhere
    (tmp_path / "pyproject.toml").write_text('[tool.specc]\ntrusted-modules = ["e2e_missing"]\n', encoding="utf-8")
    done = cluster.run(
        sys.executable, "-m", "specc", "submit", spec, "--address", cluster.dashboard, "--wait", cwd=tmp_path
    )
    assert done.returncode == 1, done.stderr[-3000:]
    assert "E404" in done.stderr and "failed" in done.stderr
    assert "e2e_missing" in done.stdout  # the job's own traceback, followed
    assert "Traceback" not in done.stderr.split("E404")[1]


def test_ctrl_c_detaches_and_the_job_can_be_stopped(cluster, tmp_path):
    record = tmp_path / "where.jsonl"
    spec = project(tmp_path, spec_text("long", record, workers=0, epochs=100_000))  # outlives any Ctrl-C
    job = f"specc-detach-{os.getpid()}"  # --submission-id: the job is known even when the follower says nothing

    def specc_jobs(*args):
        return ok(
            cluster.run(sys.executable, "-m", "specc", "jobs", *args, "--address", cluster.dashboard, cwd=tmp_path)
        )

    args = [sys.executable, "-m", "specc", "submit", str(spec), "--address", cluster.dashboard, "--wait"]
    follower = subprocess.Popen(
        [*args, "--submission-id", job],
        cwd=tmp_path, env=cluster.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while not (record.exists() and record.read_text()) and time.monotonic() < deadline:
            time.sleep(0.5)  # the job's driver has built the model: it is training
        assert record.exists() and record.read_text(), "the job never started training"
        follower.send_signal(signal.SIGINT)
        _, stderr = follower.communicate(timeout=60)
        assert follower.returncode == 130, stderr[-3000:]
        assert "detached" in stderr and "specc jobs stop" in stderr and "Traceback" not in stderr
        assert f"submitted {job} " in stderr

        assert "RUNNING" in specc_jobs("status", job).stdout  # detaching left it running
        assert "stop requested" in specc_jobs("stop", job).stdout
        deadline = time.monotonic() + 60
        while "STOPPED" not in (status := specc_jobs("status", job).stdout) and time.monotonic() < deadline:
            time.sleep(1)
        assert "STOPPED" in status
    finally:
        if follower.poll() is None:
            follower.kill()
        cluster.run(sys.executable, "-m", "specc", "jobs", "stop", job, "--address", cluster.dashboard, cwd=tmp_path)


def test_submit_without_the_clusters_token_is_refused(cluster, tmp_path):
    spec = tmp_path / "failing.yaml"
    spec.write_text(FAILING, encoding="utf-8")
    # trusted, so that validate only warns (W302): a module installed on the cluster perhaps; it is installed nowhere
    (tmp_path / "pyproject.toml").write_text('[tool.specc]\ntrusted-modules = ["e2e_missing"]\n', encoding="utf-8")
    env = {**cluster.env, "RAY_AUTH_TOKEN": "0" * 64}
    done = subprocess.run(
        [sys.executable, "-m", "specc", "submit", str(spec), "--address", cluster.dashboard],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert "E402" in done.stderr and "Traceback" not in done.stderr
    assert "refused this client" in done.stderr and "RAY_AUTH_TOKEN" in done.stderr  # said why, and what to set


# -- tensorflow across the two nodes -----------------------------------------------------------------------------

TF = """\
specc: 1
name: tf-two-nodes
framework: tensorflow
model: {type: mlp, hidden_sizes: [32]}
dataset: {type: digits, batch_size: 32}
training: {epochs: 3, optimizer: {type: adam, lr: 0.005}, metrics: [accuracy]}
scaling: {num_workers: 2, resources_per_worker: {CPU: 1}, placement_strategy: STRICT_SPREAD}
"""


def test_tensorflow_workers_on_two_nodes(cluster, tmp_path):
    spec = tmp_path / "tf.yaml"
    spec.write_text(TF, encoding="utf-8")
    done = ok(
        cluster.run(
            sys.executable,
            "-m",
            "specc",
            "run",
            spec,
            "--address",
            cluster.address,
            "--storage-path",
            "runs",
            cwd=tmp_path,
        )
    )
    header, rows = read_results(tmp_path / "runs" / "tf-two-nodes")  # STRICT_SPREAD: one worker per node, or none
    assert header == ["epoch", "train_loss", "val_loss", "val_accuracy", "num_parameters"]
    assert [row["epoch"] for row in rows] == [1, 2, 3]
    assert rows[-1]["val_accuracy"] >= 0.85
    # Ray Train's list of its workers, which the run keeps in ray.log (the console shows specc's lines)
    assert "world_rank=1" in (tmp_path / "runs" / "tf-two-nodes" / "ray.log").read_text(encoding="utf-8")
    assert "world_rank=1" not in done.stdout + done.stderr
