"""The Ray backend on a cluster it did not start: a real two-node Ray cluster on 127.0.0.1.

The cluster (``loopback_cluster.LoopbackCluster``) is separate processes: the head is ``ray start --head`` in
Ray's loopback-only mode, the second node a raylet of its own with its own temp dir and CPU. The runner only
joins it (``address=``, as ``mobility-env run --backend ray --address``). Checked here: both envs give the
local run's results on it; every server (and the driver) listens on loopback only; a join that cannot
make progress ends with one line naming why; a node killed mid-run (its raylet SIGKILLed) loses and
duplicates nothing, and ``run.json`` records the loss. Every process a test starts is killed by its fixture,
also when the test fails (never ``ray stop``, which would stop other runs' Ray too).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from loopback_cluster import LoopbackCluster, run_losing_a_node, slow_agent
from mobility_agents.baselines.mobilitybench.rule import RuleAgent
from mobility_agents.ray_runner import run_ray
from mobility_agents.runner import RunConfig, read_results, run_local
from mobility_env.errors import ConfigError
from mobility_env.runfiles import read_run_info

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.ray

CLI = Path(sys.executable).with_name("mobility-env")
LOOPBACK_PREFIXES = ("127.0.0.1:", "[::ffff:127.0.0.1]:", "[::1]:")


def _start(num_cpus: tuple[int, ...]) -> tuple[LoopbackCluster, Path]:
    # a short root: Ray's socket paths under it must stay below 107 bytes
    root = Path(tempfile.mkdtemp(prefix="mr-", dir="/tmp"))
    cluster = LoopbackCluster(root)
    try:
        cluster.start_head(num_cpus=num_cpus[0])
        for cpus in num_cpus[1:]:
            cluster.add_node(num_cpus=cpus)
        cluster.wait_for_nodes(len(num_cpus))
    except BaseException:
        _stop(cluster, root)
        raise
    return cluster, root


def _stop(cluster: LoopbackCluster, root: Path) -> None:
    try:
        cluster.stop()
        assert cluster.pids() == [], "processes of the test cluster outlived it"
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def two_nodes():
    """Head (1 CPU) and a second node (1 CPU), for the tests that do not break it."""
    cluster, root = _start((1, 1))
    yield cluster
    _stop(cluster, root)


@pytest.fixture
def fresh_two_nodes():
    """A two-node cluster of the test's own: the test kills a node of it."""
    cluster, root = _start((1, 1))
    yield cluster
    _stop(cluster, root)


@pytest.fixture(autouse=True)
def not_connected():
    """Each test joins by address itself (a Ray left initialized by another module would be used as it is)."""
    if ray.is_initialized():
        ray.shutdown()
    yield
    assert not ray.is_initialized()  # the runner disconnected from the cluster


def _config(tmp_path, name, **kwargs):
    return RunConfig(out_dir=tmp_path / name, progress=False, **kwargs)


def _by_key(records):
    by = {(r["episode_id"], r["sample_index"]): r for r in records}
    assert len(by) == len(records), "a (episode_id, sample_index) written twice"
    return by


def _assert_same_results(local, remote):
    local_by, remote_by = _by_key(local), _by_key(remote)
    assert local_by.keys() == remote_by.keys()
    for key, record in local_by.items():
        assert record["metrics"] == remote_by[key]["metrics"], key
        assert record["total_reward"] == remote_by[key]["total_reward"], key
        assert record["verdict"] == remote_by[key]["verdict"], key


def _not_loopback(lines):
    """Listening sockets (``ss -ltnpH`` lines) whose local address is not a loopback one."""
    return [line for line in lines if not line.split()[3].startswith(LOOPBACK_PREFIXES)]


def test_joins_two_node_cluster_like_a_local_run(tmp_path, two_nodes):
    listening = []

    def snapshot(actor, item):  # the first hand-out: driver and both nodes' servers and workers are up
        if not listening:
            out = subprocess.run(["ss", "-ltnpH"], capture_output=True, text=True, check=True).stdout
            driver = [line for line in out.splitlines() if f"pid={os.getpid()}," in line]
            listening.extend(two_nodes.listening() + driver + ["-"])

    local = run_local(RuleAgent, _config(tmp_path, "local", limit=24))
    # the rule agent, waiting in each worker's first episode until both workers run: both nodes take part
    remote = run_ray(slow_agent(tmp_path / "barrier", workers=2, pause_s=0.0), _config(tmp_path, "ray", limit=24,
                     workers=2), address=two_nodes.address, on_submit=snapshot)
    assert len(local) == len(remote) == 24
    _assert_same_results(local, remote)
    session = read_run_info(tmp_path / "ray")["sessions"][-1]
    assert session["ray"]["address"] == two_nodes.address and session["ray"]["nodes_at_start"] == 2
    assert len(session["ray"]["episodes_by_node"]) == 2  # spread: both nodes ran episodes
    assert sum(session["ray"]["episodes_by_node"].values()) == 24 and "worker_failures" not in session
    servers = listening[:-1]
    assert any("gcs_server" in line for line in servers) and sum("raylet" in line for line in servers) >= 2
    assert _not_loopback(servers) == []


def test_cli_runs_mobilepa_on_the_cluster_like_locally(tmp_path, two_nodes):
    common = ["run", "--env", "MobilePA-v0", "--agent", "oracle", "--limit", "8", "--no-progress"]
    for name, extra in (("local", ["--backend", "local"]),
                        ("ray", ["--backend", "ray", "--workers", "2", "--address", two_nodes.address])):
        done = subprocess.run([str(CLI), *common, *extra, "--out", str(tmp_path / name)], capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
    local, remote = read_results(tmp_path / "local" / "results.jsonl"), read_results(tmp_path / "ray" / "results.jsonl")
    assert len(local) == len(remote) == 8
    assert all(r["metrics"]["success"] == 1.0 for r in local)
    _assert_same_results(local, remote)


def test_unreachable_address_fails_at_once_with_one_line(tmp_path):
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    address = f"127.0.0.1:{port}"
    with pytest.raises(ConfigError, match=rf"--address {address}: nothing accepts connections at {address}") as caught:
        run_ray(RuleAgent, _config(tmp_path, "refused", limit=2, workers=2), address=address)
    assert "\n" not in str(caught.value)
    assert read_run_info(tmp_path / "refused")["sessions"][-1]["stopped"] == str(caught.value)
    with pytest.raises(ConfigError, match="not HOST:PORT"):
        run_ray(RuleAgent, _config(tmp_path, "malformed", limit=2), address="head-without-port")


def test_cluster_without_free_cpu_fails_saying_so(tmp_path, monkeypatch):
    import mobility_agents.ray_runner as ray_runner

    monkeypatch.setattr(ray_runner, "READY_TIMEOUT_S", 5.0)  # the default is 45 s
    cluster, root = _start((0,))
    try:
        with pytest.raises(ConfigError, match=r"no Ray worker started within 5 s: no free CPU for a worker "
                                              r"\(each needs 0.5 CPU; the cluster's 1 alive node\(s\) have 0 CPU"):
            run_ray(RuleAgent, _config(tmp_path, "no-cpu", limit=2, workers=2), address=cluster.address)
        assert read_results(tmp_path / "no-cpu" / "results.jsonl") == []
    finally:
        _stop(cluster, root)


def test_node_killed_mid_run_loses_and_duplicates_nothing(tmp_path, fresh_two_nodes):
    second = fresh_two_nodes.nodes[1]
    local = run_local(RuleAgent, _config(tmp_path, "local", limit=40))
    records, info, killed = run_losing_a_node(fresh_two_nodes, second, _config(tmp_path, "ray", limit=40, workers=2))
    assert killed  # the second node's raylet was SIGKILLed while its worker held an episode
    lines = (tmp_path / "ray" / "results.jsonl").read_text(encoding="utf-8").splitlines()
    keys = [(json.loads(line)["episode_id"], json.loads(line)["sample_index"]) for line in lines]
    assert len(keys) == len(set(keys)) == 40  # every episode exactly once
    _assert_same_results(local, records)  # re-run episodes ran from their own seeds
    session = info["sessions"][-1]
    failures = session["worker_failures"]
    assert [f["node_id"] for f in failures] == [second.node_id]
    assert failures[0]["episodes_rerun"] and failures[0]["error"].split(":")[0] in ("ActorUnavailableError",
                                                                                    "ActorDiedError")
    by_node = session["ray"]["episodes_by_node"]
    assert by_node.get(second.node_id, 0) >= 3 and sum(by_node.values()) == 40  # the head finished the run
