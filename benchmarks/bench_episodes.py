"""Oracle episodes per second on one core, scoring throughput, and compact-vs-raw observation size.

* oracle: ``mobility_agents.baselines.mobilitybench.oracle.OracleAgent().run_episode(env, id)`` over random episodes
(the
  process is pinned to one CPU when the OS allows it);
* scoring: ``mobility_rewards.compute_metrics(episode, gold_trajectory(episode))``, trajectories built
  beforehand, so only scoring is timed;
* observation size: characters an agent reads per episode when every gold call's response is
  shown ``raw`` or ``compact``, on the real sample (``../shared/mobilitybench/sample_dev.csv``)
  and on the synthetic set.

    python benchmarks/bench_episodes.py --data DIR [--episodes 500] [--sample CSV]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import REPO, emit  # noqa: E402

SAMPLE = REPO.parent / "shared" / "mobilitybench" / "sample_dev.csv"


def pin_one_core() -> int | None:
    try:
        cpu = sorted(os.sched_getaffinity(0))[-1]
        os.sched_setaffinity(0, {cpu})
        return cpu
    except (AttributeError, OSError):
        return None


def bench_oracle(data: str, episodes: int, rounds: int) -> dict[str, Any]:
    from mobility_agents.baselines.mobilitybench.oracle import OracleAgent
    from mobility_env import MobilityEnv

    env = MobilityEnv(data)
    agent = OracleAgent()
    rng = random.Random(0)
    rates, fpr = [], []
    for _ in range(rounds):
        ids = [env.episode_ids[rng.randrange(len(env.episode_ids))] for _ in range(episodes)]
        started = time.perf_counter()
        for episode_id in ids:
            out = agent.run_episode(env, episode_id)
            fpr.append(out["result"]["metrics"].get("FPR", 0.0))
        rates.append(episodes / (time.perf_counter() - started))
    return {"episodes_per_s": round(statistics.median(rates), 1), "rounds": [round(r, 1) for r in rates],
            "episodes": episodes, "mean_FPR": round(statistics.fmean(fpr), 4)}


def bench_scoring(data: str, episodes: int, rounds: int) -> dict[str, Any]:
    from mobility_env.mobilitybench.store import resolve_data
    from mobility_rewards import compute_metrics
    from mobility_rewards.mobilitybench.reference import gold_trajectory

    store = resolve_data(data)
    rng = random.Random(1)
    ids = [store.ids[rng.randrange(len(store.ids))] for _ in range(episodes)]
    pairs = [(store.get(i), None) for i in ids]
    pairs = [(episode, gold_trajectory(episode)) for episode, _ in pairs]
    rates = []
    for _ in range(rounds):
        started = time.perf_counter()
        for episode, trajectory in pairs:
            compute_metrics(episode, trajectory)
        rates.append(len(pairs) / (time.perf_counter() - started))
    return {"episodes_per_s": round(statistics.median(rates), 1), "rounds": [round(r, 1) for r in rates],
            "episodes": len(pairs)}


def observation_chars(episodes) -> dict[str, Any]:
    from mobility_env.mobilitybench.observation import format_response

    raw, compact = [], []
    for episode in episodes:
        calls = [c for c in episode.recorded if c.gold_index is not None]
        raw.append(sum(len(format_response(c.name, c.response, "raw")) for c in calls))
        compact.append(sum(len(format_response(c.name, c.response, "compact")) for c in calls))
    total_raw, total_compact = sum(raw), sum(compact)
    return {"episodes": len(raw), "raw_chars_per_episode": round(total_raw / max(1, len(raw)), 1),
            "compact_chars_per_episode": round(total_compact / max(1, len(raw)), 1),
            "raw_chars_p50": statistics.median(raw) if raw else 0,
            "compact_chars_p50": statistics.median(compact) if compact else 0,
            "saving": round(1 - total_compact / total_raw, 4) if total_raw else None}


def bench_observation_size(data: str, sample: Path) -> dict[str, Any]:
    from mobility_env import load_episodes
    from mobility_env.mobilitybench.store import resolve_data

    out: dict[str, Any] = {}
    if sample.is_file():
        out["real_sample"] = {"path": str(sample), **observation_chars(load_episodes(sample))}
    else:
        out["real_sample"] = {"path": str(sample), "missing": True}
    store = resolve_data(data)
    out["synthetic"] = observation_chars(store.get(i) for i in store.ids[:500])
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", required=True)
    parser.add_argument("--episodes", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sample", type=Path, default=SAMPLE)
    parser.add_argument("--out")
    args = parser.parse_args(argv)
    cpu = pin_one_core()
    result = {"pinned_cpu": cpu, "oracle": bench_oracle(args.data, args.episodes, args.rounds),
              "scoring": bench_scoring(args.data, args.episodes, args.rounds),
              "observation_size": bench_observation_size(args.data, args.sample)}
    emit(result, args.out)
    return result


if __name__ == "__main__":
    main()
