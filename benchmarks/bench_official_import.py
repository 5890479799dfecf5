"""Official sandbox import: throughput (MB/s) and peak memory on a generated ~1 GB driving-route file.

    python benchmarks/bench_official_import.py                    # ~1 GB, json.dump's layout, both phases
    python benchmarks/bench_official_import.py --size-mb 200 --style ascii --out result.json

Writes ``driving_route_handle.json`` in the official shape (destination -> origin -> strategy
-> waypoints -> the Amap route object; see :mod:`mobility_env.mobilitybench.official_sandbox`) into a
temporary folder under ``--tmp`` (deleted afterwards), the route objects taken from the real
sample's recorded driving calls (``../shared/mobilitybench/sample_dev.csv``) under distinct
coordinate keys. Then, each in a fresh subprocess so that its peak RSS (``ru_maxrss``) is its
own:

* ``read``: iterate :class:`~mobility_env.mobilitybench.official_sandbox.OfficialSandboxImport` (parse,
  validate, canonicalize, the rows made and dropped): the importer alone;
* ``build``: ``build_directory(sample episodes, out, global_rows=OfficialSandboxImport(dir))``,
  what ``mobility-env build CSV --sandbox-dir DIR`` runs: the import plus the Parquet writer
  and the replay index over every row.

MB/s is the file's size (10^6 bytes) over the phase's wall time (and, as ``cpu_mb_per_s``,
over its CPU time: on a shared machine the wall time also counts other processes' turns).
``--style`` is how each route object is written: ``default`` (``json.dump(obj, f,
ensure_ascii=False)``: ``", "`` and ``": "``), ``compact`` (``separators=(",", ":")``, the
form the build stores, so the file's text is kept as is), ``indent`` (``indent=2``) or
``ascii`` (``json.dump``'s own default: every non-ASCII character as ``\\uXXXX``, about twice
the bytes for the same entries). ``--index-batch-rows N`` runs the build with the replay
index's Arrow batches set to N rows (by default ``mobility_env.mobilitybench.index_build.batch_rows_for``
picks the power of two, 1,024 to 65,536, whose rows hold about 32 MiB): the build's peak
memory is that batch, whole.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import REPO, emit, machine  # noqa: E402

SAMPLE_CSV = REPO.parent / "shared" / "mobilitybench" / "sample_dev.csv"
STRATEGIES = ("default", "躲避拥堵", "不走高速", "躲避拥堵+高速优先")
ORIGINS_PER_DESTINATION = 8


def _dump(value: Any, style: str) -> str:
    if style == "compact":
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    if style == "indent":
        return json.dumps(value, ensure_ascii=False, indent=2)
    return json.dumps(value, ensure_ascii=style != "default")


def _templates(sample: Path) -> list[dict[str, Any]]:
    """The sample's complete driving-route responses."""
    from mobility_env.mobilitybench.loaders import load_episodes

    routes = [call.response for episode in load_episodes(sample) for call in episode.recorded
              if call.name == "driving_route" and not call.truncated and isinstance(call.response, dict)
              and isinstance(call.response.get("route"), dict)]
    if not routes:
        raise SystemExit(f"{sample}: no complete driving_route response to build the file from")
    return routes


def generate(path: Path, size_bytes: int, templates: list[dict[str, Any]], style: str) -> dict[str, Any]:
    """Write a driving-route file of about ``size_bytes`` bytes; its entry count and size.

    Every entry is distinct (its route names its own origin and destination and a taxi cost of
    its own), so no layer can store a repeated value once: a real file repeats no route either.
    """
    entries = 0
    written = 0
    comma, colon = (",", ":") if style == "compact" else (", ", ": ")
    with open(path, "w", encoding="utf-8") as out:
        out.write("{")
        destination = 0
        while written < size_bytes:
            lng, lat = 100.0 + (destination % 4000) * 0.0037, 20.0 + (destination // 4000) * 0.0041
            target = f"{lng:.6f},{lat:.6f}"
            parts = [f'"{target}"{colon}{{']
            for j in range(ORIGINS_PER_DESTINATION):
                origin = f"{lng + 0.01 * (j + 1):.6f},{lat - 0.01 * (j + 1):.6f}"
                strategy = STRATEGIES[(destination + j) % len(STRATEGIES)]
                template = templates[(destination * ORIGINS_PER_DESTINATION + j) % len(templates)]
                route = dict(template, route=dict(template["route"], origin=origin, destination=target,
                                                  taxi_cost=str(entries)))
                parts.append(f'{comma if j else ""}"{origin}"{colon}{{"{strategy}"{colon}{{"default"{colon}'
                             f'{_dump(route, style)}}}}}')
                entries += 1
            parts.append("}")
            text = (comma if destination else "") + "".join(parts)
            out.write(text)
            written += len(text.encode("utf-8"))
            destination += 1
        out.write("}")
    return {"entries": entries, "bytes": path.stat().st_size}


_CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
from mobility_env.mobilitybench.official_sandbox import OfficialSandboxImport
import mobility_env.mobilitybench.index_build as index_build
phase, folder, out = sys.argv[2], sys.argv[3], sys.argv[4]
if int(sys.argv[6]):
    index_build.BATCH_ROWS = index_build.MIN_BATCH_ROWS = int(sys.argv[6])
episodes = []
if phase == "build":
    from mobility_env.mobilitybench.build import build_directory
    from mobility_env.mobilitybench.loaders import load_episodes
    episodes = load_episodes(sys.argv[5])  # the sample's 81 episodes, loaded before the clock starts
started, cpu = time.perf_counter(), time.process_time()
imported = OfficialSandboxImport(folder)
if phase == "read":
    rows = sum(1 for _ in imported)
else:
    build_directory(episodes, out, global_rows=imported)
    rows = json.load(open(out + "/manifest.json"))["global_rows"]
wall, cpu = time.perf_counter() - started, time.process_time() - cpu
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"rows": rows, "wall_s": wall, "cpu_s": cpu, "peak_rss_kib": peak,
                  "problems": imported.report.problem_count}))
"""


def run_phase(phase: str, folder: Path, out: Path, size: int, batch_rows: int) -> dict[str, Any]:
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(REPO), phase, str(folder), str(out), str(SAMPLE_CSV),
                           str(batch_rows)], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"{phase} phase failed:\n{proc.stderr}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    result["mb_per_s"] = round(size / 1e6 / result["wall_s"], 1)
    result["cpu_mb_per_s"] = round(size / 1e6 / result["cpu_s"], 1)
    result["cpu_s"] = round(result["cpu_s"], 2)
    result["peak_rss_mib"] = round(result.pop("peak_rss_kib") / 1024, 1)
    result["wall_s"] = round(result["wall_s"], 2)
    return result


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size-mb", type=float, default=1024.0, help="file size to generate, MiB (default 1024)")
    parser.add_argument("--style", choices=("default", "compact", "indent", "ascii"), default="default",
                        help="how the route objects are written (default: json.dump's separators, UTF-8 text)")
    parser.add_argument("--index-batch-rows", type=int, default=0,
                        help="rows per replay-index Arrow batch in the build phase (default: the library's)")
    parser.add_argument("--phases", nargs="+", choices=("read", "build"), default=["read", "build"])
    parser.add_argument("--tmp", type=Path, default=Path(tempfile.gettempdir()), help="where the file is written")
    parser.add_argument("--out", help="also write the JSON result here")
    args = parser.parse_args(argv)
    if not SAMPLE_CSV.is_file():
        raise SystemExit(f"the real sample is needed for the route objects: {SAMPLE_CSV} not found")
    work = Path(tempfile.mkdtemp(prefix="official-import-", dir=args.tmp))
    try:
        folder = work / "sandbox"
        folder.mkdir()
        started = time.perf_counter()
        generated = generate(folder / "driving_route_handle.json", int(args.size_mb * 2**20), _templates(SAMPLE_CSV),
                             args.style)
        generated["generate_s"] = round(time.perf_counter() - started, 1)
        generated["mib"] = round(generated["bytes"] / 2**20, 1)
        generated["style"] = args.style
        generated["index_batch_rows"] = args.index_batch_rows or "library default"
        result: dict[str, Any] = {"machine": machine(), "file": generated}
        for phase in args.phases:
            out = work / f"built-{phase}"
            result[phase] = run_phase(phase, folder, out, generated["bytes"], args.index_batch_rows)
            if out.exists():
                result[phase]["built_mib"] = round(sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
                                                   / 2**20, 1)
                shutil.rmtree(out)
        result["targets"] = {f"{phase}: >= 50 MB/s and peak RSS < 500 MB":
                             result[phase]["mb_per_s"] >= 50 and result[phase]["peak_rss_mib"] * 2**20 < 500e6
                             for phase in args.phases}
        result["parent_peak_rss_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    emit(result, args.out)
    return result


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
