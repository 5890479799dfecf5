"""Cold open: a fresh interpreter opens a built directory and serves its first lookups.

Each repeat is a new subprocess (nothing cached in Python; the OS page cache is left as it
is, so this is a warm-disk open). Timed separately: ``import mobility_env``;
``Sandbox.open(dir)`` + first global lookup; first episode-scoped lookup; and the env path
``MobilityEnv(dir)`` + ``reset`` + first ``step``.

    python benchmarks/bench_open.py --data DIR [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import REPO, emit  # noqa: E402


def probe(data: str) -> dict[str, float]:
    """Runs inside the fresh subprocess."""
    clock = time.perf_counter
    t0 = clock()
    from mobility_env import MobilityEnv, Sandbox

    t1 = clock()
    box = Sandbox.open(data)
    box.lookup("weather_query", {"city": "北京"})
    t2 = clock()
    import pyarrow.parquet as pq

    first_id = pq.read_table(Path(data) / "episodes.parquet", columns=["episode_id"]).column(0)[0].as_py()
    t3 = clock()
    box.lookup("weather_query", {"city": "北京"}, first_id)
    t4 = clock()
    env = MobilityEnv(data)
    env.reset(seed=0, options={"episode_id": first_id})
    call = env.unwrapped.episode.gold_calls[0]
    env.step({"name": call.name, "arguments": dict(call.arguments)})
    t5 = clock()
    return {"import_s": t1 - t0, "open_first_global_lookup_s": t2 - t1, "first_episode_lookup_s": t4 - t3,
            "sandbox_open_total_s": (t2 - t1) + (t4 - t3), "env_open_reset_step_s": t5 - t4}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", required=True)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out")
    parser.add_argument("--probe", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.probe:
        print(json.dumps(probe(args.data)))
        return {}
    runs = []
    for _ in range(args.repeat):
        done = subprocess.run([sys.executable, __file__, "--probe", "--data", args.data], capture_output=True,
                              text=True, check=True, cwd=str(REPO))
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    result = {key: round(statistics.median(r[key] for r in runs), 4) for key in runs[0]}
    result["repeats"] = len(runs)
    emit(result, args.out)
    return result


if __name__ == "__main__":
    main()
