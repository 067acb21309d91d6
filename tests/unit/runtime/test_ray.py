"""specc_runtime's choice of Ray, called as a module with ray.init and the cluster stood in for (no Ray is started):
which address a run gives ray.init, whether it joins a cluster, the local Ray's dashboard and environment, the first
line saying which Ray the run uses, an unreachable address refused within seconds, and workers the cluster cannot
hold refused before they wait forever. Real Rays: tests/e2e/test_which_ray.py, tests/e2e/test_cluster_address.py."""

from __future__ import annotations

import os
import socket
import types

import pytest
import specc_runtime


@pytest.fixture(autouse=True)
def no_ray_address(monkeypatch):
    monkeypatch.delenv("RAY_ADDRESS", raising=False)


def test_a_run_given_no_address_starts_a_ray_of_its_own(monkeypatch):
    assert specc_runtime.ray_address(None) == "local"  # never ray.init()'s default: whichever Ray ran last
    assert not specc_runtime.joins_cluster(None) and not specc_runtime.joins_cluster("local")
    assert specc_runtime.ray_address("auto") == "auto" and specc_runtime.joins_cluster("auto")
    monkeypatch.setenv("RAY_ADDRESS", "10.0.0.1:6379")  # a Ray Job's, or the user's
    assert specc_runtime.ray_address(None) == "10.0.0.1:6379" and specc_runtime.joins_cluster(None)
    assert specc_runtime.ray_address("local") == "local"  # --address local: this run's own, whatever the variable


def test_a_local_ray_has_its_dashboard_on_a_free_port_and_no_preemption_watcher():
    options, env = specc_runtime.local_ray()
    port = options["dashboard_port"]
    assert options == {"include_dashboard": True, "dashboard_host": "127.0.0.1", "dashboard_port": port}
    assert env == {"RAY_API_SERVER_ADDRESS": f"http://127.0.0.1:{port}", "RAY_TRAIN_ENABLE_PREEMPTION_WATCHER": "0"}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_an_address_where_nothing_listens_is_refused_at_once(monkeypatch):
    monkeypatch.setattr(specc_runtime.ray, "init", lambda **options: pytest.fail("ray.init was called"))
    address = f"127.0.0.1:{free_port()}"
    with pytest.raises(SystemExit, match=f"cannot reach a Ray cluster at {address}: "):
        specc_runtime.start_ray(address, quiet=True, verbose=False)
    with pytest.raises(SystemExit, match=f"cannot reach a Ray cluster at ray://{address}"):
        specc_runtime.start_ray(f"ray://{address}", quiet=True, verbose=False)


@pytest.fixture
def ray_init(monkeypatch):
    """ray.init recorded: the options it is given, and the environment it starts the local Ray's processes with."""
    calls = []
    context = types.SimpleNamespace(dashboard_url="127.0.0.1:8265", address_info={"gcs_address": "10.0.0.1:6379"})

    def init(**options):
        calls.append((options, {name: os.environ.get(name) for name in ("RAY_API_SERVER_ADDRESS",)}))
        return context

    monkeypatch.setattr(specc_runtime.ray, "is_initialized", lambda: False)
    monkeypatch.setattr(specc_runtime.ray, "init", init)
    monkeypatch.setattr(specc_runtime.ray, "cluster_resources", lambda: {"CPU": 4.0})
    monkeypatch.setattr(specc_runtime.ray, "nodes", lambda: [{"Alive": True}, {"Alive": True}, {"Alive": False}])
    monkeypatch.setattr(specc_runtime, "another_ray", lambda: None)
    monkeypatch.delenv("RAY_API_SERVER_ADDRESS", raising=False)
    return calls


def test_a_local_ray_starts_quietly_and_says_so(ray_init, capsys):
    assert specc_runtime.start_ray(None, quiet=False, verbose=False, runtime_env={"env_vars": {"A": "1"}}) is True
    ((options, env),) = ray_init
    assert options["address"] == "local" and options["include_dashboard"] is True
    assert options["runtime_env"] == {"env_vars": {"A": "1"}} and options["logging_level"] == 40  # errors only
    assert env["RAY_API_SERVER_ADDRESS"] == f"http://127.0.0.1:{options['dashboard_port']}"  # for Ray's processes
    assert "RAY_API_SERVER_ADDRESS" not in os.environ  # this process goes on as it was
    assert capsys.readouterr().out == "Ray: a local Ray of this run's own, 4 CPUs; dashboard http://127.0.0.1:8265\n"


def test_a_joined_cluster_is_named_with_its_nodes(ray_init, capsys):
    specc_runtime.start_ray("auto", quiet=False, verbose=True)
    ((options, _),) = ray_init
    assert options == {"address": "auto"}  # nothing of a local Ray's; --verbose: Ray's own records as they are
    assert capsys.readouterr().out == (
        "Ray: joined the cluster at 10.0.0.1:6379, 2 nodes, 4 CPUs; dashboard http://127.0.0.1:8265\n"
    )


def test_another_ray_on_this_machine_is_named_with_the_way_to_join_it(ray_init, monkeypatch, capsys):
    monkeypatch.setattr(specc_runtime, "another_ray", lambda: "127.0.0.1:6379")
    specc_runtime.start_ray(None, quiet=False, verbose=False)
    assert capsys.readouterr().out.endswith(
        " (another Ray runs on this machine, at 127.0.0.1:6379: --address auto joins it)\n"
    )


def test_quiet_says_nothing_and_a_started_ray_is_not_started_again(ray_init, monkeypatch, capsys):
    specc_runtime.start_ray(None, quiet=True, verbose=False)
    assert capsys.readouterr().out == ""
    monkeypatch.setattr(specc_runtime.ray, "is_initialized", lambda: True)  # specc run started it
    assert specc_runtime.start_ray(None, quiet=False, verbose=False) is False and len(ray_init) == 1


@pytest.mark.parametrize(
    ("error", "said"),
    [
        (ConnectionError("no GCS"), "cannot reach a Ray cluster at auto: no GCS"),
        (ValueError("the working directory is too large"), "cannot start the job on auto: the working directory"),
    ],
)
def test_what_ray_init_refuses_is_a_message(ray_init, monkeypatch, error, said):
    def init(**options):
        raise error

    monkeypatch.setattr(specc_runtime.ray, "init", init)
    with pytest.raises(SystemExit, match=said):
        specc_runtime.start_ray("auto", quiet=True, verbose=False)


def test_workers_the_cluster_cannot_hold_are_refused(monkeypatch):
    monkeypatch.setattr(specc_runtime.ray, "cluster_resources", lambda: {"CPU": 4.0, "GPU": 1.0})
    assert specc_runtime.how_many_fit({"CPU": 1.0}, "trial") == 4
    assert specc_runtime.how_many_fit({"CPU": 1.0, "GPU": 0.5}, "trial") == 2
    assert specc_runtime.how_many_fit({}, "trial") == 1
    with pytest.raises(SystemExit) as refused:
        specc_runtime.how_many_fit({"CPU": 2.0, "GPU": 2.0}, "run")
    assert str(refused.value) == (
        "one run needs 2 CPU, 2 GPU; the cluster has 4 CPU, 1 GPU: "
        "lower scaling.num_workers or scaling.resources_per_worker, or add nodes"
    )


def test_no_other_ray_recorded_is_none(monkeypatch):
    monkeypatch.setattr(specc_runtime.ray._private.utils, "read_ray_address", lambda: None)
    assert specc_runtime.another_ray() is None
    monkeypatch.setattr(specc_runtime.ray._private.utils, "read_ray_address", lambda: f"127.0.0.1:{free_port()}")
    assert specc_runtime.another_ray() is None  # recorded, but gone


def test_what_this_ray_lacks_of_its_private_api_is_none():
    assert specc_runtime.ray_private("worker", "print_to_stdstream") is not None
    assert specc_runtime.ray_private("worker", "no_such_function") is None
    assert specc_runtime.ray_private("no_such_module", "x") is None


def test_an_address_whose_host_does_not_answer_is_given_cluster_init_timeout_s(monkeypatch):
    """The probe waits as long as the spec's cluster.init_timeout_s says (a host that drops the connection attempt
    answers nothing: only the timeout ends the wait), then the run stops naming the address."""
    waited = []

    def silent_host(address, timeout):
        waited.append(timeout)
        raise TimeoutError("timed out")

    monkeypatch.setattr(specc_runtime.socket, "create_connection", silent_host)
    monkeypatch.setattr(specc_runtime.ray, "init", lambda **options: pytest.fail("ray.init was called"))
    with pytest.raises(SystemExit, match=r"cannot reach a Ray cluster at 10\.0\.0\.1:6379: timed out"):
        specc_runtime.start_ray("10.0.0.1:6379", quiet=True, verbose=False, timeout_s=7)
    with pytest.raises(SystemExit):
        specc_runtime.start_ray("ray://10.0.0.1:10001", quiet=True, verbose=False)
    assert waited == [7, 60]  # the spec's, then the field's default
