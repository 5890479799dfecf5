"""`mobility-env export` on a large run: wall time and peak memory, streamed against all-in-memory.

The export reads ``trajectories.jsonl`` one line at a time (where each episode's last line starts,
then each line when its row is written). ``--compare`` also runs the former way (every trajectory
parsed into one dict first) on the same run, each in a fresh subprocess, interleaved, so the two
are measured side by side; both outputs are checked equal.

    python benchmarks/bench_export.py --run RUN_DIR [--rounds 2] [--compare] [--out F]

Make a large run first, e.g. the oracle over 10,000 synthetic episodes::

    mobility-env synth --n 10000 --seed 0 --out runs/syn10k
    mobility-env run --agent oracle --data runs/syn10k --out runs/oracle-10k --no-progress
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import emit, machine  # noqa: E402

# Runs in a fresh interpreter: export RUN to OUT the chosen way, print seconds and peak RSS.
_PROBE = r"""
import json, resource, sys, time
from mobility_agents import export
from mobility_env.runfiles import clean_strings, read_jsonl, record_key

def in_memory_rows(run_dir, results, run):  # the former reading: every trajectory in one dict
    trajectories = {record_key(t): t for t in read_jsonl(run_dir / export.TRAJECTORIES_FILE) if "episode_id" in t}
    latest = {record_key(r): r for r in results}
    totals = {key: export._total_reward(result, trajectories.get(key)) for key, result in latest.items()}
    advantages = export.group_advantages(totals)
    for key, result in latest.items():
        yield clean_strings(export._row(key, result, trajectories.get(key), totals[key], advantages[key], run))

way, run_dir, out = sys.argv[1:4]
if way == "in_memory":
    export._rows = in_memory_rows
started = time.perf_counter()
export.export_run(run_dir, out)
print(json.dumps({"seconds": round(time.perf_counter() - started, 2),
                  "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024}))
"""


def probe(way: str, run_dir: Path, out: Path) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-c", _PROBE, way, str(run_dir), str(out)], capture_output=True,
                          text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run", type=Path, required=True, help="a run directory (results.jsonl, trajectories.jsonl)")
    parser.add_argument("--rounds", type=int, default=2, help="exports per way (the lowest time and memory kept)")
    parser.add_argument("--compare", action="store_true", help="also run the former all-in-memory reading")
    parser.add_argument("--out")
    args = parser.parse_args(argv)
    ways = ["streamed", "in_memory"] if args.compare else ["streamed"]
    found: dict[str, list[dict[str, Any]]] = {way: [] for way in ways}
    with tempfile.TemporaryDirectory() as scratch:
        outputs = {way: Path(scratch) / f"{way}.parquet" for way in ways}
        for _ in range(args.rounds):
            for way in ways:
                found[way].append(probe(way, args.run, outputs[way]))
        same = None
        if args.compare:
            import pyarrow.parquet as pq

            same = pq.read_table(outputs["streamed"]).equals(pq.read_table(outputs["in_memory"]))
    trajectories = args.run / "trajectories.jsonl"
    result = {"machine": machine(), "run": str(args.run),
              "trajectories_mib": round(trajectories.stat().st_size / 2**20, 1) if trajectories.exists() else 0,
              "episodes": sum(1 for _ in (args.run / "results.jsonl").open("rb")),
              **{way: {"seconds": min(r["seconds"] for r in runs), "peak_rss_mib": min(r["peak_rss_mib"] for r in runs)}
                 for way, runs in found.items()}}
    if same is not None:
        result["outputs_equal"] = same
    emit(result, args.out)
    return result


if __name__ == "__main__":
    main()
