"""Memory of one process and of each additional process (or Ray actor) opening the same directory.

Each worker is a fresh interpreter: it imports the package (measured), opens the env on
``--data``, serves 1,000 lookups through ``env.step`` (measured), then waits until every
worker has done the same and measures again, so the numbers of concurrent workers show
what the memory-mapped files share. Figures are KiB from /proc/self/smaps_rollup:
``uss`` (private: what one more worker really costs), ``pss`` (shared pages split between
the processes mapping them), ``rss``.

    python benchmarks/bench_memory.py --data DIR [--workers 3] [--ray]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import REPO, emit, memory_kib  # noqa: E402

LOOKUPS = 1000


def serve_lookups(env, count: int = LOOKUPS, seed: int = 0) -> int:
    """``count`` replayed gold calls through ``env.step`` over random episodes; returns the hits."""
    import random

    rng = random.Random(seed)
    hits = 0
    ids = env.episode_ids
    while count > 0:
        episode_id = ids[rng.randrange(len(ids))]
        env.reset(options={"episode_id": episode_id})
        for call in env.unwrapped.episode.gold_calls[:3]:
            _obs, _r, _term, _trunc, info = env.step({"name": call.name, "arguments": dict(call.arguments)})
            hits += info.get("match") not in (None, "miss")
            count -= 1
    return hits


def worker(data: str, barrier_dir: str, index: int, total: int) -> None:
    """One measured process (run as ``python bench_memory.py --worker ...``)."""
    started = time.perf_counter()
    import mobility_env  # noqa: F401
    import mobility_rewards  # noqa: F401
    from mobility_env import MobilityEnv

    after_import = memory_kib()
    import_s = time.perf_counter() - started
    env = MobilityEnv(data)
    hits = serve_lookups(env)
    after_lookups = memory_kib()
    Path(barrier_dir, f"ready-{index}").write_text("1")
    deadline = time.time() + 300
    while len(list(Path(barrier_dir).glob("ready-*"))) < total and time.time() < deadline:
        time.sleep(0.05)
    time.sleep(0.2)
    together = memory_kib()
    print(json.dumps({"worker": index, "pid": os.getpid(), "import_s": round(import_s, 3), "hits": hits,
                      "after_import": after_import, "after_open_1000_lookups": after_lookups,
                      "all_workers_running": together}))
    Path(barrier_dir, f"done-{index}").write_text("1")
    while len(list(Path(barrier_dir).glob("done-*"))) < total and time.time() < deadline:
        time.sleep(0.05)


def bench_processes(data: str, workers: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as barrier:
        procs = [subprocess.Popen([sys.executable, __file__, "--worker", str(i), "--total", str(workers),
                                   "--barrier", barrier, "--data", data], stdout=subprocess.PIPE, text=True,
                                  cwd=str(REPO)) for i in range(workers)]
        results = [json.loads(p.communicate()[0].strip().splitlines()[-1]) for p in procs]
    first = results[0]
    out: dict[str, Any] = {"workers": results}
    data_uss = [r["after_open_1000_lookups"]["uss_kib"] - r["after_import"]["uss_kib"] for r in results]
    out["summary"] = {
        "one_process_rss_mib": round(first["after_open_1000_lookups"]["rss_kib"] / 1024, 1),
        "one_process_uss_mib": round(first["after_open_1000_lookups"]["uss_kib"] / 1024, 1),
        "import_uss_mib": round(first["after_import"]["uss_kib"] / 1024, 1),
        "data_uss_mib_per_process": [round(x / 1024, 1) for x in data_uss],
        "extra_process_uss_mib": [round(r["all_workers_running"]["uss_kib"] / 1024, 1) for r in results[1:]],
        # the heap of each additional process: what it costs beyond the page cache all of them share
        "extra_process_anon_mib": [round(r["all_workers_running"]["anon_kib"] / 1024, 1) for r in results[1:]],
        "extra_process_anon_data_mib": [round((r["all_workers_running"]["anon_kib"] - r["after_import"]["anon_kib"])
                                              / 1024, 1) for r in results[1:]],
        "pss_mib_all_running": [round(r["all_workers_running"]["pss_kib"] / 1024, 1) for r in results],
    }
    return out


def bench_ray(data: str, actors: int = 2) -> dict[str, Any]:
    """Ray actors wrapping ``mobility_agents.ray_runner.RolloutWorker`` (the Ray backend's worker body)."""
    import ray

    from mobility_agents.baselines.mobilitybench.oracle import OracleAgent
    from mobility_agents.ray_runner import RolloutWorker

    ray.init(num_cpus=2, include_dashboard=False, ignore_reinit_error=True, log_to_driver=False)
    try:
        @ray.remote
        class Probe:
            def memory(self) -> dict[str, int]:
                sys.path.insert(0, str(Path(__file__).resolve().parent))
                from _common import memory_kib as probe

                return probe()

        @ray.remote
        class MeasuredWorker(RolloutWorker):
            def memory(self) -> dict[str, int]:
                sys.path.insert(0, str(Path(__file__).resolve().parent))
                from _common import memory_kib as probe

                return probe()

        bare = [Probe.remote() for _ in range(actors)]
        bare_memory = ray.get([b.memory.remote() for b in bare])
        for b in bare:
            ray.kill(b)
        workers = [MeasuredWorker.remote(OracleAgent, data, {}) for _ in range(actors)]
        ids = ray.get(workers[0].__ray_call__.remote(lambda w: w.store.ids[:2000]))
        plays = [w.play.remote(ids[(i * 500 + k) % len(ids)], 0, 0) for i, w in enumerate(workers) for k in range(300)]
        ray.get(plays)
        memory = ray.get([w.memory.remote() for w in workers])
    finally:
        ray.shutdown()
    return {"bare_actor": bare_memory, "rollout_worker_after_300_episodes": memory,
            "summary": {"bare_actor_uss_mib": [round(m["uss_kib"] / 1024, 1) for m in bare_memory],
                        "bare_actor_anon_mib": [round(m["anon_kib"] / 1024, 1) for m in bare_memory],
                        "worker_anon_mib": [round(m["anon_kib"] / 1024, 1) for m in memory],
                        "worker_uss_mib": [round(m["uss_kib"] / 1024, 1) for m in memory],
                        "worker_pss_mib": [round(m["pss_kib"] / 1024, 1) for m in memory]}}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", required=True)
    parser.add_argument("--workers", type=int, default=3, help="processes opening the directory at once")
    parser.add_argument("--ray", action="store_true", help="also measure 2 Ray actors")
    parser.add_argument("--out")
    parser.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--total", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--barrier", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker is not None:
        worker(args.data, args.barrier, args.worker, args.total)
        return {}
    result = {"processes": bench_processes(args.data, args.workers)}
    if args.ray:
        try:
            result["ray"] = bench_ray(args.data)
        except Exception as exc:  # a benchmark reports what failed; the other figures still count
            result["ray"] = {"error": f"{type(exc).__name__}: {exc}"}
    emit(result, args.out)
    return result


if __name__ == "__main__":
    main()
