"""Shared helpers of the benchmark scripts: timing statistics, memory, machine, data sets.

Not a test module and not imported by the package: every ``bench_*.py`` script imports it by
path (``benchmarks/`` is put on ``sys.path`` by the script itself).
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

DEFAULT_CACHE = Path(os.environ.get("MOBILITY_BENCH_CACHE", "/tmp/mobility-bench"))
SEED = 0


def percentiles(samples_ns: list[int]) -> dict[str, float]:
    """p50/p90/p99/mean in microseconds of nanosecond samples."""
    if not samples_ns:
        return {"n": 0}
    ordered = sorted(samples_ns)

    def at(q: float) -> float:
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] / 1000.0

    return {"n": len(ordered), "p50_us": round(at(0.50), 2), "p90_us": round(at(0.90), 2),
            "p99_us": round(at(0.99), 2), "mean_us": round(statistics.fmean(ordered) / 1000.0, 2)}


def time_calls(fn: Callable[[], Any], repeat: int) -> list[int]:
    out = []
    clock = time.perf_counter_ns
    for _ in range(repeat):
        start = clock()
        fn()
        out.append(clock() - start)
    return out


def memory_kib() -> dict[str, int]:
    """RSS, PSS and USS (private clean + dirty) of this process from /proc/self/smaps_rollup."""
    fields: dict[str, int] = {}
    try:
        with open("/proc/self/smaps_rollup", encoding="ascii") as handle:
            for line in handle:
                parts = line.split()
                if len(parts) >= 2 and parts[0].endswith(":") and parts[1].isdigit():
                    fields[parts[0][:-1]] = int(parts[1])
    except OSError:
        return {}
    uss = fields.get("Private_Clean", 0) + fields.get("Private_Dirty", 0)
    # anon = the process's own heap; file-backed pages (the memory-mapped Arrow files) are page
    # cache, counted as private only while no other process has touched them
    return {"rss_kib": fields.get("Rss", 0), "pss_kib": fields.get("Pss", 0), "uss_kib": uss,
            "anon_kib": fields.get("Anonymous", 0), "pss_anon_kib": fields.get("Pss_Anon", 0),
            "pss_file_kib": fields.get("Pss_File", 0),
            "shared_kib": fields.get("Shared_Clean", 0) + fields.get("Shared_Dirty", 0)}


def machine() -> dict[str, Any]:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"nproc": os.cpu_count(), "cpu_model": model, "loadavg": list(os.getloadavg()),
            "python": platform.python_version(), "platform": platform.platform()}


def dir_size_bytes(path: Path) -> dict[str, int]:
    return {p.name: p.stat().st_size for p in sorted(path.rglob("*")) if p.is_file()}


def dataset_dir(n: int, cache: Path = DEFAULT_CACHE) -> Path:
    return cache / f"synth-{n}-seed{SEED}"


def ensure_dataset(n: int, cache: Path = DEFAULT_CACHE, rebuild: bool = False) -> tuple[Path, float | None]:
    """The synthetic directory of ``n`` episodes; (path, seconds spent generating or None if cached)."""
    from mobility_env.synth import synthesize

    out = dataset_dir(n, cache)
    if (out / "manifest.json").exists() and not rebuild:
        return out, None
    if out.exists():
        shutil.rmtree(out)
    started = time.perf_counter()
    synthesize(n, SEED, out, progress=False)
    return out, time.perf_counter() - started


def emit(result: dict[str, Any], out: str | None = None) -> None:
    text = json.dumps(result, ensure_ascii=False, indent=2)
    if out:
        Path(out).write_text(text + "\n", encoding="utf-8")
    print(text)
