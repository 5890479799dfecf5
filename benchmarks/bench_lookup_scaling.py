"""Global fuzzy and nearest lookups as the data grows: cold first lookups and warm percentiles.

For each ``--data`` directory:

* **cold** (each a fresh subprocess, median of ``--repeat``): the time from ``Sandbox.open(dir)``
  to the end of the first global lookup (and its two parts: the open, and the lookup), for
  (1) a coordinate-tool miss (a ``driving_route`` between two points far from every recorded
  site) and (2) a nearest hit (a recorded ``driving_route`` moved 30–250 m); ``import
  mobility_env`` is timed apart, and each probe reports whether ``sklearn`` was imported;
* **warm** (this process; each round times every directory in turn): p50/p99 of ``Sandbox.lookup`` with
  ``global_fallback=True`` and no episode scope on (1) name queries that are near-misses of
  recorded names (one character added, removed or replaced; kept when the sandbox serves them
  as ``fuzzy``) and (2) coordinate queries moved 30–250 m from recorded sites (kept when served
  as ``nearest``); plus the index calls alone (``ReplayIndex.fuzzy_names`` /
  ``ReplayIndex.near_sites``) on the same queries. ``p50_us``/``p99_us``: medians over rounds;
  ``p50_best_us``: the p50 over queries of each query's fastest round (less sensitive to load).

With two or more directories the JSON ends with the ratios last / first of every p50.

    python benchmarks/bench_lookup_scaling.py --data DIR [--data DIR2 ...] [--samples 300] [--rounds 5]
        [--repeat 5] [--out F] [--methods-from OLD_replay_index.py]

``--methods-from`` times the query methods (``fuzzy_names``, ``_shared_tokens``, ``near_sites``,
``_site_tree``) of another copy of ``mobility_env/mobilitybench/replay_index.py`` on the same arrays, for a
before/after comparison in one run, e.g. ``git show HEAD~1:mobility_env/mobilitybench/replay_index.py >
old_replay_index.py``.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import math
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import REPO, emit, machine, percentiles  # noqa: E402

NAME_TOOLS = {"query_poi": "keywords", "traffic_status": "name"}
COORD_TOOLS = ("driving_route", "walking_route", "bicycling_route", "bus_route", "reverse_geocoding")
PATCHED = ("fuzzy_names", "_shared_tokens", "near_sites", "_site_tree")
# a point in the Gulf of Guinea and one 5 km away: far from every site of the synthetic (Chinese) sets
FAR_ROUTE = {"origin": "0.000000,0.000000", "destination": "0.045000,0.000000"}


def use_methods_from(path: str | None) -> None:
    """Replace the query methods of ``ReplayIndex`` with those of another copy of replay_index.py."""
    if not path:
        return
    from mobility_env.mobilitybench import replay_index

    spec = importlib.util.spec_from_file_location("mobility_env._replay_index_compared", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    original_init = replay_index.ReplayIndex.__init__

    def init(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        self._trees = {}  # what the compared methods may cache in

    replay_index.ReplayIndex.__init__ = init  # type: ignore[method-assign]
    for name in PATCHED:
        if hasattr(module.ReplayIndex, name):
            setattr(replay_index.ReplayIndex, name, getattr(module.ReplayIndex, name))


def _shift(coord: str, metres: float, angle_deg: float) -> str:
    lng, lat = (float(x) for x in coord.split(","))
    dlat = metres * math.cos(math.radians(angle_deg)) / 111_195.0
    dlng = metres * math.sin(math.radians(angle_deg)) / (111_195.0 * math.cos(math.radians(lat)))
    return f"{lng + dlng:.6f},{lat + dlat:.6f}"


def _near_miss_name(name: str, rng: random.Random, alphabet: str) -> str:
    chars = list(name)
    op, pos = rng.randrange(3), rng.randrange(len(chars) + 1)
    if op == 0 or len(chars) < 3:
        chars.insert(pos, rng.choice(alphabet))
    elif op == 1:
        del chars[min(pos, len(chars) - 1)]
    else:
        chars[min(pos, len(chars) - 1)] = rng.choice(alphabet)
    return "".join(chars)


def collect(data: str, samples: int, seed: int = 0) -> dict[str, list[tuple[str, dict]]]:
    """(tool, arguments) of global fuzzy-name and nearest lookups, classified by the sandbox itself."""
    import pyarrow.parquet as pq
    from mobility_env import Sandbox
    from mobility_env.mobilitybench.sandbox import LookupConfig
    from mobility_env.tools import validate_call

    box = Sandbox.open(data, LookupConfig(global_fallback=True))
    table = pq.read_table(Path(data) / "sandbox.parquet", columns=["tool", "arguments", "name", "valid"])
    rows = [r for r in table.to_pylist() if r["valid"] and r["tool"] in (*NAME_TOOLS, *COORD_TOOLS)]
    rng = random.Random(seed)
    rng.shuffle(rows)
    alphabet = "".join(sorted({c for r in rows[:2000] for c in r["name"] or ""})) or "ab"
    found: dict[str, list[tuple[str, dict]]] = {"fuzzy": [], "nearest": []}
    for row in rows:
        if all(len(v) >= samples for v in found.values()):
            break
        tool, args = row["tool"], json.loads(row["arguments"])
        if tool in NAME_TOOLS:
            field = NAME_TOOLS[tool]
            if not isinstance(args.get(field), str) or not args[field] or len(found["fuzzy"]) >= samples:
                continue
            args[field] = _near_miss_name(args[field], rng, alphabet)
            want = "fuzzy"
        else:
            if len(found["nearest"]) >= samples:
                continue
            metres, angle = rng.uniform(30.0, 250.0), rng.uniform(0.0, 360.0)
            if tool == "reverse_geocoding":
                lng, lat = _shift(f"{args['longitude']},{args['latitude']}", metres, angle).split(",")
                args.update(longitude=lng, latitude=lat)
            else:
                args["origin"] = _shift(args["origin"], metres, angle)
                args["destination"] = _shift(args["destination"], metres, angle + 90.0)
                if args.get("waypoints"):
                    args["waypoints"] = [_shift(w, metres, angle) for w in args["waypoints"]]
            want = "nearest"
        if validate_call(tool, args):
            continue
        if box.lookup(tool, args, None).match == want:
            found[want].append((tool, args))
    return found


def probe(data: str, arguments: str, methods_from: str | None) -> dict[str, Any]:
    """Runs in a fresh subprocess: ``Sandbox.open`` + the first global ``driving_route`` lookup."""
    clock = time.perf_counter
    t0 = clock()
    from mobility_env import Sandbox
    from mobility_env.mobilitybench.sandbox import LookupConfig

    import_s = clock() - t0
    use_methods_from(methods_from)
    t1 = clock()
    box = Sandbox.open(data, LookupConfig(global_fallback=True))
    t2 = clock()
    result = box.lookup("driving_route", json.loads(arguments), None)
    t3 = clock()
    return {"import_s": import_s, "open_s": t2 - t1, "first_lookup_s": t3 - t2, "open_to_first_lookup_s": t3 - t1,
            "match": result.match, "sklearn_imported": "sklearn" in sys.modules}


def cold(data: str, nearest_args: dict, repeat: int, methods_from: str | None) -> dict[str, Any]:
    """Medians over ``repeat`` fresh processes of the first miss and of the first nearest hit."""
    out: dict[str, Any] = {}
    for kind, args in (("miss", FAR_ROUTE), ("nearest", nearest_args)):
        runs = []
        for _ in range(repeat):
            command = [sys.executable, __file__, "--probe", "--data", data, "--probe-args", json.dumps(args)]
            if methods_from:
                command += ["--methods-from", methods_from]
            done = subprocess.run(command, capture_output=True, text=True, check=True, cwd=str(REPO))
            runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
        out[kind] = {f"{key[:-2]}_ms": round(1000 * statistics.median(r[key] for r in runs), 2)
                     for key in ("open_to_first_lookup_s", "open_s", "first_lookup_s", "import_s")}
        out[kind].update(match=sorted({r["match"] for r in runs}),
                         sklearn_imported=any(r["sklearn_imported"] for r in runs), repeats=len(runs))
    return out


def warm(sets: dict[str, dict[str, list[tuple[str, dict]]]], rounds: int) -> dict[str, dict[str, Any]]:
    """Warm p50/p99 per directory; every round times each directory in turn (interleaved), so a
    change in machine load between them does not show up as a difference between sizes."""
    from mobility_env import Sandbox
    from mobility_env.canonical import canonical_request
    from mobility_env.mobilitybench.sandbox import LookupConfig

    opened = {}
    for data, found in sets.items():
        box = Sandbox.open(data, LookupConfig(global_fallback=True))
        requests = {m: [canonical_request(t, a) for t, a in items] for m, items in found.items()}
        opened[data] = (box, requests)

    def index_call(box, match: str, req) -> Any:
        if match == "fuzzy":
            return box.index.fuzzy_names(req.tool, req.name, box.config.fuzzy_threshold)
        lng, lat = req.points[0]
        return box.index.near_sites(req.tool, lng, lat, box.config.max_distance_m)

    for data, (box, requests) in opened.items():  # first calls (imports, first page touches) are not timed
        for match, items in sets[data].items():
            for (tool, args), req in zip(items[:5], requests[match][:5]):
                box.lookup(tool, args, None)
                index_call(box, match, req)
    clock = time.perf_counter_ns
    per_round: dict[str, dict[str, list[list[int]]]] = {data: {} for data in sets}
    for _ in range(rounds):
        for match in ("fuzzy", "nearest"):
            for data, (box, requests) in opened.items():
                gc.collect()
                lookups, calls = [], []
                for (tool, args), req in zip(sets[data][match], requests[match]):
                    t0 = clock()
                    box.lookup(tool, args, None)
                    t1 = clock()
                    index_call(box, match, req)
                    calls.append(clock() - t1)
                    lookups.append(t1 - t0)
                per_round[data].setdefault(f"lookup_{match}", []).append(lookups)
                per_round[data].setdefault(f"index_{match}", []).append(calls)

    def summary(samples: list[list[int]]) -> dict[str, Any]:
        stats = [percentiles(one) for one in samples]
        best = percentiles([min(times) for times in zip(*samples)])  # each query's fastest round: less noise
        medians = {k: round(statistics.median(s[k] for s in stats), 2) for k in ("p50_us", "p99_us")}
        return {"n": stats[0]["n"], **medians, "p50_best_us": best["p50_us"]}

    return {data: {name: summary(samples) for name, samples in by_name.items()} for data, by_name in per_round.items()}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", action="append", required=True, help="a built directory (repeatable)")
    parser.add_argument("--samples", type=int, default=300, help="queries per kind (fuzzy, nearest)")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved timing rounds (median reported)")
    parser.add_argument("--repeat", type=int, default=5, help="fresh processes per cold probe (0: no cold probes)")
    parser.add_argument("--methods-from", help="time the query methods of this copy of replay_index.py")
    parser.add_argument("--out")
    parser.add_argument("--probe", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--probe-args", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.probe:
        print(json.dumps(probe(args.data[0], args.probe_args, args.methods_from)))
        return {}
    use_methods_from(args.methods_from)
    result: dict[str, Any] = {"machine": machine(), "methods_from": args.methods_from, "data": {}}
    sets = {}
    for data in args.data:
        found = sets[data] = collect(data, args.samples)
        if not found["nearest"] or not any(t == "driving_route" for t, _ in found["nearest"]):
            raise SystemExit(f"{data}: no driving_route call could be moved into a nearest hit")
        first_route = next(a for t, a in found["nearest"] if t == "driving_route")
        result["data"][data] = {"cold": cold(data, first_route, args.repeat, args.methods_from)} if args.repeat else {}
    for data, timings in warm(sets, args.rounds).items():
        result["data"][data]["warm"] = timings
    if len(args.data) > 1:
        first, last = result["data"][args.data[0]], result["data"][args.data[-1]]
        result["ratio_last_over_first"] = {
            **{f"cold_{k}_{part}": round(last["cold"][k][f"{part}_ms"] / first["cold"][k][f"{part}_ms"], 3)
               for k in first.get("cold", {}) for part in ("open_to_first_lookup", "first_lookup")},
            **{f"{k}_{stat[:-3]}": round(last["warm"][k][stat] / first["warm"][k][stat], 3)
               for k in first["warm"] if k in last["warm"] for stat in ("p50_us", "p50_best_us")}}
    emit(result, args.out)
    return result


if __name__ == "__main__":
    main()
