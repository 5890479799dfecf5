"""The Ray backend on a two-node cluster on this machine: throughput by actor count, and node loss.

* **throughput**: steady-state rollouts/s of the rule agent (CPU-bound: replay and scoring, no model) with
  1, 2 and 4 actors on a two-node loopback cluster (head and one more node, 1 CPU each, started apart from
  the run as ``tests/loopback_cluster.py`` does), joined with ``run_ray(address=...)``, against the local
  runner (one thread) in the same process. Steady state: the middle 80 % of hand-outs (Ray: a hand-out
  follows each finished rollout) or of finished rollouts (local), so cluster join, actor start and env
  opening are not counted. The load average is recorded before and after each measurement: on a shared
  machine the ratios of one run carry over, the absolute figures do not.
* **node loss** (``--node-kill-trials N``): N runs of 40 episodes on 2 workers, each on a fresh second node
  whose raylet is SIGKILLed mid-run (``loopback_cluster.run_losing_a_node``); per trial: episodes lost and
  duplicated in ``results.jsonl``, whether the results equal a local run, whether ``run.json`` names the
  lost node.

    python benchmarks/bench_cluster.py [--episodes 220] [--samples 4] [--actors 1 2 4] [--node-kill-trials 10]
                                       [--skip-throughput] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import REPO, emit, machine  # noqa: E402

sys.path.insert(0, str(REPO / "tests"))
from loopback_cluster import LoopbackCluster, run_losing_a_node  # noqa: E402

from mobility_agents.baselines.mobilitybench.rule import RuleAgent  # noqa: E402
from mobility_agents.ray_runner import run_ray  # noqa: E402
from mobility_agents.runner import RunConfig, run_local  # noqa: E402


def steady_rate(stamps: list[float]) -> float | None:
    """Events per second over the middle 80 % of ``stamps`` (monotonic seconds)."""
    stamps = sorted(stamps)
    lo, hi = int(len(stamps) * 0.1), int(len(stamps) * 0.9)
    if hi - lo < 2 or stamps[hi - 1] <= stamps[lo]:
        return None
    return (hi - 1 - lo) / (stamps[hi - 1] - stamps[lo])


class StampedRuleAgent(RuleAgent):
    """The rule agent noting when each episode ends (local runner: same process)."""

    stamps: list[float] = []

    def run_episode(self, env, episode_id, *, seed=None, sample_index=0):
        record = super().run_episode(env, episode_id, seed=seed, sample_index=sample_index)
        StampedRuleAgent.stamps.append(time.monotonic())
        return record


def measure(label: str, run) -> dict[str, Any]:
    load_before = list(os.getloadavg())
    started = time.monotonic()
    stamps, count = run()
    wall = time.monotonic() - started
    rate = steady_rate(stamps)
    return {"label": label, "rollouts": count, "wall_s": round(wall, 2),
            "steady_rollouts_per_s": None if rate is None else round(rate, 1),
            "loadavg_before": load_before, "loadavg_after": list(os.getloadavg())}


def throughput(cluster: LoopbackCluster, root: Path, episodes: int, samples: int, actors: list[int]) -> dict:
    def config(name: str, workers: int = 1) -> RunConfig:
        return RunConfig(out_dir=root / name, limit=episodes, samples_per_episode=samples, workers=workers,
                         progress=False)

    def local():
        StampedRuleAgent.stamps = []
        records = run_local(StampedRuleAgent, config("local"))
        return list(StampedRuleAgent.stamps), len(records)

    def on_ray(workers: int):
        def run():
            stamps: list[float] = []
            records = run_ray(RuleAgent, config(f"ray-{workers}", workers), address=cluster.address,
                              on_submit=lambda actor, item: stamps.append(time.monotonic()))
            return stamps, len(records)
        return run

    rows = [measure("local, 1 thread", local)]
    rows += [measure(f"ray, {n} actor(s), 2 nodes", on_ray(n)) for n in actors]
    rates = {row["label"]: row["steady_rollouts_per_s"] for row in rows}
    one = rates.get("ray, 1 actor(s), 2 nodes")
    base = rates["local, 1 thread"]
    for row in rows:
        rate = row["steady_rollouts_per_s"]
        row["vs_one_actor"] = round(rate / one, 2) if rate and one else None
        row["vs_local"] = round(rate / base, 2) if rate and base else None
    two = next((row["vs_one_actor"] for row in rows if row["label"].startswith("ray, 2 ")), None)
    return {"rows": rows, "two_actors_vs_one": two, "target_two_actors_vs_one": 1.6,
            "met": None if two is None else two >= 1.6}


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
    return {"trials": rows, "killed": sum(r["killed"] for r in rows), "lost": sum(r["lost"] for r in rows),
            "duplicated": sum(r["duplicated"] for r in rows),
            "all_equal_to_local": all(r["equal_to_local"] for r in rows),
            "all_failures_recorded": all(r["failure_recorded"] for r in rows)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=220, help="episodes per throughput run (bundled set)")
    parser.add_argument("--samples", type=int, default=4, help="samples per episode in throughput runs")
    parser.add_argument("--actors", type=int, nargs="+", default=[1, 2, 4])
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
            result["throughput"] = throughput(cluster, root, args.episodes, args.samples, args.actors)
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
