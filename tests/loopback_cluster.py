"""A real multi-node Ray cluster on this machine, loopback only, that the runner did not start.

Not a test module: ``tests/test_ray_cluster.py`` and ``benchmarks/bench_cluster.py`` use it.

Every node is its own process group (``start_new_session``) with its own ``--temp-dir`` and
resources, and every server binds 127.0.0.1:

* the head is Ray's own ``ray start --head --node-ip-address=127.0.0.1 --block`` with
  ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``, Ray's loopback-only mode (without it Ray rewrites
  127.0.0.1 to the host's address and its GCS and raylet listen on every interface);
* a second node cannot be ``ray start --address`` on loopback in Ray 2.60: in loopback-only mode
  that command refuses to start ("Multi-node Ray clusters are not supported on Windows and
  OSX"), and without it the 127.0.0.1 of ``--address`` and ``--node-ip-address`` is rewritten to
  the host's address (nothing answers there) and the raylet binds every interface. So a node
  is started by :data:`NODE_SOURCE`, which does what ``ray start --address --block`` does
  (``ray._private.node.Node(head=False)``, as ``ray.cluster_utils.Cluster.add_node`` does) with
  the loopback switch on.

:meth:`LoopbackCluster.stop` kills each node's process group (SIGTERM, then SIGKILL) and then
any process left whose command line names one of the cluster's temp dirs: never ``ray stop``,
which kills every Ray process of the user, other runs' included.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from mobility_agents.baselines.mobilitybench.rule import RuleAgent

RAY_BIN = Path(sys.executable).with_name("ray")
START_TIMEOUT_S = 90.0
#: Ray's loopback-only mode (the name says Windows/macOS; on Linux it does the same: node address 127.0.0.1).
#: Token authentication follows Ray's defaults (on when ~/.ray/auth_token exists, as for ``ray start --head``): a
#: driver that once started a local Ray stays in token mode, and its actors die on a cluster without it.
LOOPBACK_ENV = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_USAGE_STATS_ENABLED": "0"}
OBJECT_STORE_BYTES = 100 * 1024 * 1024

NODE_SOURCE = r'''
import json, sys
from ray._private import ray_constants
ray_constants.ENABLE_RAY_CLUSTER = False  # loopback-only: node address 127.0.0.1, servers bind it
import ray._private.node, ray._private.parameter
from ray._private.authentication.authentication_token_setup import maybe_enable_token_auth_if_token_available
maybe_enable_token_auth_if_token_available(warn_if_disabled=False)  # as the head decided (`ray start --head` does)
spec = json.loads(sys.argv[1])
params = ray._private.parameter.RayParams(
    gcs_address=spec["address"], node_ip_address="127.0.0.1", num_cpus=spec["num_cpus"], num_gpus=0,
    resources=spec["resources"], temp_dir=spec["temp_dir"], object_store_memory=spec["object_store_memory"],
    node_manager_port=0, min_worker_port=0, max_worker_port=0, include_log_monitor=False)
node = ray._private.node.Node(params, head=False, shutdown_at_exit=True, spawn_reaper=True)
raylet = node.all_processes[ray_constants.PROCESS_TYPE_RAYLET][0].process.pid
print(json.dumps({"node_id": node.node_id, "raylet_pid": raylet}), flush=True)
import threading, time
closed = threading.Event()
threading.Thread(target=lambda: (sys.stdin.read(), closed.set()), daemon=True).start()
while not closed.wait(0.5):  # until the owner closes our stdin; reap what dies, as `ray start --block` does
    node.dead_processes()
'''


@dataclass
class NodeProcess:
    """One node: its process group leader, temp dir, raylet pid and node id."""

    process: subprocess.Popen
    temp_dir: Path
    log: Path
    raylet_pid: int | None = None
    node_id: str | None = None
    killed: bool = False
    info: dict = field(default_factory=dict)


def proc_stat(pid: int) -> tuple[list[bytes], bytes] | None:
    """A live process's ``/proc/PID/stat`` fields after its name (state first) and its command line; None when it
    is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return fields, handle.read()
    except (OSError, IndexError):
        return None


class LoopbackCluster:
    """Head plus extra nodes on 127.0.0.1, each with its own temp dir under ``root``."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.nodes: list[NodeProcess] = []
        self.address: str | None = None

    # ------------------------------------------------------------------ starting
    def start_head(self, num_cpus: int = 1, resources: dict | None = None) -> str:
        temp_dir = self._temp_dir("head")
        command = [str(RAY_BIN), "start", "--head", "--node-ip-address=127.0.0.1", "--port=0",
                   f"--num-cpus={num_cpus}", "--num-gpus=0", "--include-dashboard=false", "--disable-usage-stats",
                   f"--object-store-memory={OBJECT_STORE_BYTES}", f"--temp-dir={temp_dir}", "--block"]
        if resources:
            command.append(f"--resources={json.dumps(resources)}")
        node = self._spawn(command, temp_dir, "head")
        address_file = temp_dir / "ray_current_cluster"
        self._wait(node, address_file.is_file, "the head's address file")
        self.address = address_file.read_text(encoding="utf-8").strip()
        return self.address

    def add_node(self, num_cpus: int = 1, resources: dict | None = None) -> NodeProcess:
        assert self.address, "start_head first"
        name = f"node{len(self.nodes)}"
        temp_dir = self._temp_dir(name)
        spec = {"address": self.address, "num_cpus": num_cpus, "resources": resources or {},
                "temp_dir": str(temp_dir), "object_store_memory": OBJECT_STORE_BYTES}
        node = self._spawn([sys.executable, "-c", NODE_SOURCE, json.dumps(spec)], temp_dir, name,
                           stdout=subprocess.PIPE)
        assert node.process.stdout is not None
        line = node.process.stdout.readline()  # the node prints one line once its raylet runs (or dies)
        if not line:
            raise RuntimeError(f"node {name} did not start; see {node.log}")
        node.info = json.loads(line)
        node.raylet_pid, node.node_id = node.info["raylet_pid"], node.info["node_id"]
        return node

    def wait_for_nodes(self, count: int) -> None:
        """Until ``count`` nodes are alive in the head's GCS (asked by a separate process)."""
        probe = ("import ray, sys; from mobility_agents.ray_runner import join_cluster; "
                 "join_cluster(ray, sys.argv[1]); print(sum(1 for n in ray.nodes() if n['Alive']))")
        deadline = time.monotonic() + START_TIMEOUT_S
        last = ""
        while time.monotonic() < deadline:
            done = subprocess.run([sys.executable, "-c", probe, str(self.address)], capture_output=True, text=True,
                                  env={**os.environ, **LOOPBACK_ENV}, timeout=START_TIMEOUT_S)
            if done.returncode == 0 and int(done.stdout.split()[-1]) >= count:
                return
            last = (done.stdout.strip().splitlines() or [""])[-1] if done.returncode == 0 else done.stderr[-500:]
            time.sleep(1.0)
        raise RuntimeError(f"{count} nodes not alive after {START_TIMEOUT_S:.0f} s (last probe: {last}); "
                           f"see the logs in {self.root}")

    # ------------------------------------------------------------------ failures
    def kill_raylet(self, node: NodeProcess) -> None:
        """SIGKILL the node's raylet: the node dies as a crashed machine's would."""
        assert node.raylet_pid is not None
        os.kill(node.raylet_pid, signal.SIGKILL)
        node.killed = True

    # ------------------------------------------------------------------ inspecting
    def pids(self) -> list[int]:
        """Every live process of this cluster: the node groups, and whatever names one of its temp dirs."""
        groups = {node.process.pid for node in self.nodes}
        marks = [str(node.temp_dir).encode() for node in self.nodes]
        found = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) == os.getpid():
                continue
            read = proc_stat(int(entry))
            if read is None:
                continue
            fields, cmdline = read
            if fields[0] == b"Z":  # a zombie holds nothing: it waits for its parent to reap it
                continue
            if int(fields[2]) in groups or any(mark in cmdline for mark in marks):
                found.append(int(entry))
        return found

    def listening(self) -> list[str]:
        """``ss -ltnp`` lines (TCP listeners) of this cluster's processes."""
        pids = set(self.pids())
        out = subprocess.run(["ss", "-ltnpH"], capture_output=True, text=True, check=True).stdout
        return [line for line in out.splitlines() if any(f"pid={pid}," in line for pid in pids)]

    # ------------------------------------------------------------------ stopping
    def stop(self, grace_s: float = 5.0) -> list[int]:
        """Kill every node (group, then stragglers); returns the pids that had to be SIGKILLed."""
        for node in reversed(self.nodes):
            if node.process.stdin:
                node.process.stdin.close()
            _signal_group(node.process.pid, signal.SIGTERM)
        deadline = time.monotonic() + grace_s
        while time.monotonic() < deadline and self.pids():
            time.sleep(0.2)
        killed = self.pids()
        for node in self.nodes:
            _signal_group(node.process.pid, signal.SIGKILL)
        for pid in killed:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        for node in self.nodes:
            try:
                node.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
            if node.process.stdout:
                node.process.stdout.close()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and self.pids():
            time.sleep(0.2)
        return killed

    def __enter__(self) -> "LoopbackCluster":
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------------ internals
    def _temp_dir(self, name: str) -> Path:
        path = self.root / name  # Ray's socket paths must stay short (107 bytes)
        path.mkdir(parents=True, exist_ok=True)
        return path

    def _spawn(self, command: list[str], temp_dir: Path, name: str, stdout: int | None = None) -> NodeProcess:
        log = self.root / f"{name}.log"
        with log.open("wb") as handle:
            process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=stdout or handle, stderr=handle,
                                       env={**os.environ, **LOOPBACK_ENV}, start_new_session=True)
        node = NodeProcess(process=process, temp_dir=temp_dir, log=log)
        self.nodes.append(node)
        return node

    def _wait(self, node: NodeProcess, ready, what: str) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not ready():
            if node.process.poll() is not None:
                raise RuntimeError(f"{what}: the process exited ({node.process.returncode}); see {node.log}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"{what}: not there after {START_TIMEOUT_S:.0f} s; see {node.log}")
            time.sleep(0.2)


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except OSError:
        pass


# ---------------------------------------------------------------------- a node lost mid-run
class SlowRuleAgent(RuleAgent):
    """The rule agent, ``pause_s`` slower per episode, whose first episode in each worker process waits
    (up to a minute) until ``workers`` worker processes have started: so every worker of a run takes part
    however slowly the nodes start, and a run of 40 episodes is still going when a node is killed.
    Deterministic: neither the pause nor the wait changes a result. Shipped to workers by value
    (``ray.cloudpickle.register_pickle_by_value`` on this module): workers need not import ``tests/``."""

    def __init__(self, barrier: str | None = None, workers: int = 2, pause_s: float = 0.1):
        super().__init__()
        self.barrier, self.workers, self.pause_s = barrier, workers, pause_s

    def run_episode(self, env, episode_id, *, seed=None, sample_index=0):
        if self.barrier:
            here = Path(self.barrier)
            (here / str(os.getpid())).touch()
            deadline = time.monotonic() + 60
            while len(list(here.iterdir())) < self.workers and time.monotonic() < deadline:
                time.sleep(0.05)
        time.sleep(self.pause_s)
        return super().run_episode(env, episode_id, seed=seed, sample_index=sample_index)


def slow_agent(barrier: Path, workers: int = 2, pause_s: float = 0.1):
    """An agent factory for :class:`SlowRuleAgent` (picklable), registering this module to ship by value."""
    import functools

    import ray

    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    barrier.mkdir(parents=True, exist_ok=True)
    return functools.partial(SlowRuleAgent, str(barrier), workers, pause_s)


def run_losing_a_node(cluster: LoopbackCluster, node: NodeProcess, config, after: int = 4):
    """``run_ray`` on ``cluster`` with 2 workers (spread: one per node); SIGKILL ``node``'s raylet once each
    worker has been handed ``after`` episodes (so the one there has finished some and holds one). Returns
    the records, ``run.json`` and whether the kill happened."""
    from mobility_agents.ray_runner import run_ray
    from mobility_env.runfiles import read_run_info

    handed: dict = {}

    def kill_node(actor, item):  # runs in the driver's loop: must not wait on the workers
        key = actor._actor_id.hex()
        handed[key] = handed.get(key, 0) + 1
        if len(handed) == 2 and min(handed.values()) >= after and not node.killed:
            cluster.kill_raylet(node)

    factory = slow_agent(config.out_dir.parent / f"{config.out_dir.name}-barrier", config.workers)
    records = run_ray(factory, config, address=cluster.address, on_submit=kill_node)
    return records, read_run_info(config.out_dir), node.killed
