"""The Ray backend on a two-node cluster on this machine: throughput by actor count, and node loss.

* **throughput**: steady-state rollouts/s of the rule agent (CPU-bound: replay and scoring, no model) with
  1, 2 and 4 actors on a two-node loopback cluster (head and one more node, 1 CPU each, started apart from
  the run as ``tests/loopback_cluster.py`` does), joined with ``run_ray(address=...)``, against the local
  runner (one thread) in the same process. Steady state: the middle 80 % of episodes handed out (Ray: a
  chunk is handed out as each one comes back, so hand-outs follow finished rollouts a chunk, ~0.1 s, at a
  time) or of finished rollouts (local), so cluster join, actor start and env opening are not counted.
  ``--rounds N`` measures every configuration N times, interleaved (local, 1, 2, 4, local, 1, ...), and
  reports each round and the medians (of the rates, and of each round's ratios): another process's burst
  then lands in one round, not on one configuration. Per measurement: the load average before and after;
  the CPU ms per rollout in the steady window of the driver process (its Ray threads included), of the
  actors and of the cluster's other processes (raylets, GCS...), read from /proc at both ends of the
  window (other work on the machine changes it far less than the rates); the hand-outs (remote calls) and
  the largest. On a shared machine the ratios of one run carry over, the absolute figures do not.
* **node loss** (``--node-kill-trials N``): N runs of 40 episodes on 2 workers, each on a fresh second node
  whose raylet is SIGKILLed mid-run (``loopback_cluster.run_losing_a_node``); per trial: episodes lost and
  duplicated in ``results.jsonl``, whether the results equal a local run, whether ``run.json`` names the
  lost node.

    python benchmarks/bench_cluster.py [--episodes 220] [--samples 4] [--actors 1 2 4] [--rounds 1]
                                       [--node-kill-trials 10] [--skip-throughput] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import REPO, emit, machine  # noqa: E402

sys.path.insert(0, str(REPO / "tests"))
from loopback_cluster import LoopbackCluster, proc_stat, run_losing_a_node  # noqa: E402

from mobility_agents.baselines.mobilitybench.rule import RuleAgent  # noqa: E402
from mobility_agents.ray_runner import run_ray  # noqa: E402
from mobility_agents.runner import RunConfig, run_local  # noqa: E402
from mobility_env.runfiles import read_run_info  # noqa: E402


def steady_rate(stamps: list[float]) -> float | None:
    """Events per second over the middle 80 % of ``stamps`` (monotonic seconds)."""
    stamps = sorted(stamps)
    lo, hi = int(len(stamps) * 0.1), int(len(stamps) * 0.9)
    if hi - lo < 2 or stamps[hi - 1] <= stamps[lo]:
        return None
    return (hi - 1 - lo) / (stamps[hi - 1] - stamps[lo])


class SteadyWindow:
    """Stamps each event (a finished rollout, or one handed out); at the first and the last event of the steady
    window (the middle 80 % of ``total``, as :func:`steady_rate`) notes the CPU seconds of this process and of
    every process of the cluster, so CPU per rollout is the steady state's, whatever else runs on the machine."""

    def __init__(self, total: int, cluster: LoopbackCluster):
        self.first, self.last = int(total * 0.1), int(total * 0.9) - 1
        self.cluster = cluster
        self.stamps: list[float] = []
        self.snapshots: list[dict[int, tuple[str, float]]] = []

    def event(self) -> None:
        self.stamps.append(time.monotonic())
        if len(self.stamps) - 1 in (self.first, self.last):
            self.snapshots.append(cpu_seconds([os.getpid(), *with_descendants(self.cluster.pids())]))

    def cpu_ms_per_rollout(self) -> dict[str, float]:
        """CPU ms per rollout in the window, by who spent it (processes alive at both of its ends)."""
        if len(self.snapshots) != 2:
            return {}
        before, after = self.snapshots
        spent = {"driver": 0.0, "actors": 0.0, "ray_servers": 0.0}
        for pid, (kind, seconds) in after.items():
            if pid in before and before[pid][0] == kind:
                spent[kind] += seconds - before[pid][1]
        spent["all"] = sum(spent.values())
        return {kind: round(1000 * seconds / (self.last - self.first), 2) for kind, seconds in spent.items()}


TICKS = os.sysconf("SC_CLK_TCK")


def with_descendants(pids: list[int]) -> list[int]:
    """``pids`` and every live descendant of them (a raylet starts its workers in a process group of their own)."""
    parent = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as handle:
                    parent[int(entry)] = int(handle.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    found = set(pids)
    grown = True
    while grown:
        more = {pid for pid, ppid in parent.items() if ppid in found and pid not in found}
        found |= more
        grown = bool(more)
    return sorted(found)


def cpu_seconds(pids: list[int]) -> dict[int, tuple[str, float]]:
    """User + system CPU seconds so far of each live process of ``pids``, with its kind: this process (the
    driver), a Ray worker (``ray::...``: the actors), or another process of the cluster (raylet, GCS...)."""
    found = {}
    for pid in pids:
        read = proc_stat(pid)
        if read is None:
            continue
        fields, command = read
        kind = "driver" if pid == os.getpid() else "actors" if command.startswith(b"ray::") else "ray_servers"
        found[pid] = (kind, (int(fields[11]) + int(fields[12])) / TICKS)
    return found


class StampedRuleAgent(RuleAgent):
    """The rule agent telling :attr:`window` when each episode ends (local runner: same process)."""

    window: SteadyWindow | None = None

    def run_episode(self, env, episode_id, *, seed=None, sample_index=0):
        record = super().run_episode(env, episode_id, seed=seed, sample_index=sample_index)
        if StampedRuleAgent.window is not None:
            StampedRuleAgent.window.event()
        return record


def measure(label: str, run) -> dict[str, Any]:
    load_before = list(os.getloadavg())
    started = time.monotonic()
    window, count, extra = run()
    wall = time.monotonic() - started
    rate = steady_rate(window.stamps)
    return {"label": label, "rollouts": count, "wall_s": round(wall, 2),
            "steady_rollouts_per_s": None if rate is None else round(rate, 1),
            "steady_cpu_ms_per_rollout": window.cpu_ms_per_rollout(), **extra,
            "loadavg_before": load_before, "loadavg_after": list(os.getloadavg())}


LOCAL, TWO = "local, 1 thread", "ray, 2 actor(s), 2 nodes"


def throughput(cluster: LoopbackCluster, root: Path, episodes: int, samples: int, actors: list[int],
               rounds: int = 1) -> dict:
    def config(name: str, workers: int = 1) -> RunConfig:
        return RunConfig(out_dir=root / name, limit=episodes, samples_per_episode=samples, workers=workers,
                         progress=False)

    def local(name: str):
        def run():
            window = StampedRuleAgent.window = SteadyWindow(episodes * samples, cluster)
            records = run_local(StampedRuleAgent, config(name))
            StampedRuleAgent.window = None
            return window, len(records), {}
        return run

    def on_ray(name: str, workers: int):
        def run():
            window = SteadyWindow(episodes * samples, cluster)
            records = run_ray(RuleAgent, config(name, workers), address=cluster.address,
                              on_submit=lambda actor, item: window.event())
            summary = read_run_info(root / name)["sessions"][-1]["ray"]
            return window, len(records), {key: summary.get(key) for key in ("hand_outs", "largest_hand_out")}
        return run

    all_rounds = []
    for index in range(rounds):
        rows = [measure(LOCAL, local(f"local-{index}"))]
        rows += [measure(f"ray, {n} actor(s), 2 nodes", on_ray(f"ray-{n}-{index}", n)) for n in actors]
        rates = {row["label"]: row["steady_rollouts_per_s"] for row in rows}
        one, base = rates.get("ray, 1 actor(s), 2 nodes"), rates[LOCAL]
        for row in rows:
            rate = row["steady_rollouts_per_s"]
            row["vs_one_actor"] = round(rate / one, 2) if rate and one else None
            row["vs_local"] = round(rate / base, 2) if rate and base else None
        all_rounds.append(rows)
    median = {}
    for row in all_rounds[0]:
        same = [next(r for r in rows if r["label"] == row["label"]) for rows in all_rounds]
        median[row["label"]] = {key: _median([r[key] for r in same])
                                for key in ("steady_rollouts_per_s", "vs_one_actor", "vs_local")}
    two = median.get(TWO, {}).get("vs_one_actor")
    return {"rounds": all_rounds, "median": median, "two_actors_vs_one": two, "target_two_actors_vs_one": 1.6,
            "met": None if two is None else two >= 1.6}


def _median(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return round(statistics.median(known), 2) if known else None


def node_kill_trials(cluster: LoopbackCluster, root: Path, trials: int, episodes: int = 40) -> dict:
    local = {(r["episode_id"], r["sample_index"]): r
             for r in run_local(RuleAgent, RunConfig(out_dir=root / "kill-local", limit=episodes, progress=False))}
    rows = []
    for trial in range(trials):
        second = next((n for n in cluster.nodes[1:] if not n.killed), None) or cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes(2)
        out = root / f"kill-{trial}"
        started = time.monotonic()
        records, info, killed = run_losing_a_node(cluster, second,
                                                  RunConfig(out_dir=out, limit=episodes, workers=2, progress=False))
        lines = [json.loads(line) for line in (out / "results.jsonl").read_text(encoding="utf-8").splitlines()]
        keys = [(r["episode_id"], r["sample_index"]) for r in lines]
        session = info["sessions"][-1]
        failures = session.get("worker_failures") or []
        equal = all(key in local and local[key]["metrics"] == r["metrics"]
                    and local[key]["total_reward"] == r["total_reward"] for key, r in zip(keys, lines))
        rows.append({"trial": trial, "killed": killed, "wall_s": round(time.monotonic() - started, 1),
                     "lost": len(set(local) - set(keys)), "duplicated": len(keys) - len(set(keys)),
                     "equal_to_local": equal and set(keys) == set(local),
                     "failure_recorded": any(f.get("node_id") == second.node_id for f in failures),
                     "rerun": sum(len(f.get("episodes_rerun") or []) for f in failures),
                     "episodes_on_lost_node": session["ray"]["episodes_by_node"].get(second.node_id, 0)})
        # SPREAD is best effort: when both workers started on the head, the killed node held none and nothing was lost
        rows[-1]["worker_on_lost_node"] = rows[-1]["failure_recorded"] or rows[-1]["episodes_on_lost_node"] > 0
    held = [r for r in rows if r["worker_on_lost_node"]]
    return {"trials": rows, "killed": sum(r["killed"] for r in rows), "lost": sum(r["lost"] for r in rows),
            "duplicated": sum(r["duplicated"] for r in rows),
            "all_equal_to_local": all(r["equal_to_local"] for r in rows),
            "killed_node_held_a_worker": len(held),
            "all_failures_recorded": all(r["failure_recorded"] for r in held)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=220, help="episodes per throughput run (bundled set)")
    parser.add_argument("--samples", type=int, default=4, help="samples per episode in throughput runs")
    parser.add_argument("--actors", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--rounds", type=int, default=1, help="measure every configuration this many times")
    parser.add_argument("--node-kill-trials", type=int, default=0)
    parser.add_argument("--skip-throughput", action="store_true")
    parser.add_argument("--out")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="mr-bench-", dir="/tmp"))  # short: Ray's socket paths live under it
    result: dict[str, Any] = {"benchmark": "cluster", "machine": machine()}
    cluster = LoopbackCluster(root / "c")
    try:
        cluster.start_head(num_cpus=1)
        cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes(2)
        if not args.skip_throughput:
            result["throughput"] = throughput(cluster, root, args.episodes, args.samples, args.actors, args.rounds)
        if args.node_kill_trials:
            result["node_kill"] = node_kill_trials(cluster, root, args.node_kill_trials)
    finally:
        cluster.stop()
        result["processes_left"] = len(cluster.pids())
        shutil.rmtree(root, ignore_errors=True)
    result["loadavg_end"] = list(os.getloadavg())
    emit(result, args.out)


if __name__ == "__main__":
    main()
