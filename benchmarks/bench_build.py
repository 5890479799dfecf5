"""Generate and build ``n`` synthetic episodes: wall time, the replay-index share, bytes on disk.

    python benchmarks/bench_build.py --n 10000 --out-dir runs/synth-10000-seed0
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import SEED, dir_size_bytes, emit  # noqa: E402


def bench_build(n: int, out_dir: Path) -> dict[str, Any]:
    from mobility_env.mobilitybench.index_build import write_replay_index
    from mobility_env.synth import synthesize

    if out_dir.exists():
        shutil.rmtree(out_dir)
    started = time.perf_counter()
    synthesize(n, SEED, out_dir, progress=False)
    total = time.perf_counter() - started
    started = time.perf_counter()
    write_replay_index(out_dir)  # again, alone: the index's share of the build
    index_s = time.perf_counter() - started
    sizes = dir_size_bytes(out_dir)
    manifest = json.loads((out_dir / "manifest.json").read_text(encoding="utf-8"))
    contract = sizes.get("episodes.parquet", 0) + sizes.get("sandbox.parquet", 0)
    return {"episodes": manifest["episodes"], "sandbox_entries": manifest["sandbox_entries"],
            "generate_and_build_s": round(total, 2), "replay_index_s": round(index_s, 2),
            "bytes": sizes, "parquet_mib": round(contract / 2**20, 1),
            "total_mib": round(sum(sizes.values()) / 2**20, 1)}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, required=True)
    parser.add_argument("--out-dir", type=Path, required=True)
    parser.add_argument("--out")
    args = parser.parse_args(argv)
    result = bench_build(args.n, args.out_dir)
    emit(result, args.out)
    return result


if __name__ == "__main__":
    main()
