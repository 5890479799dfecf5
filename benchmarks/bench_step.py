"""reset/step latency by match type and observation format, global lookup latency, and the floor.

The floor of one step is what any replay must do: ``json.loads`` of the action, one dict
lookup, ``json.dumps`` of the observation the env returned. Every step figure is reported
with its overhead over the floor measured on the same actions in the same run.

    python benchmarks/bench_step.py --data DIR [--samples 300] [--rounds 3]
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import random
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import emit, percentiles  # noqa: E402

MATCH_TYPES = ("exact", "fuzzy", "nearest", "miss")
ROUTE_TOOLS = ("driving_route", "walking_route", "bicycling_route", "bus_route")
_DUMPS = {"ensure_ascii": False, "separators": (",", ":")}


def _shift(coord: str, metres: float, angle_deg: float) -> str:
    lng, lat = (float(x) for x in coord.split(","))
    dlat = metres * math.cos(math.radians(angle_deg)) / 111_195.0
    dlng = metres * math.sin(math.radians(angle_deg)) / (111_195.0 * math.cos(math.radians(lat)))
    return f"{lng + dlng:.6f},{lat + dlat:.6f}"


def _variants(name: str, args: dict[str, Any], rng: random.Random) -> list[dict[str, Any]]:
    """Perturbed copies of recorded arguments aimed at fuzzy, nearest and miss matches."""
    out = [dict(args)]
    angle = rng.uniform(0, 360)
    if name in ("query_poi", "traffic_status", "weather_query", "search_around_poi"):
        field = {"query_poi": "keywords", "traffic_status": "name", "weather_query": "city",
                 "search_around_poi": "keywords"}[name]
        if isinstance(args.get(field), str) and args[field]:
            out.append(dict(args, **{field: args[field] + "坊"}))
            out.append(dict(args, **{field: "饕餮魑魅魍魉" + str(rng.randint(0, 99))}))
    if name in ROUTE_TOOLS:
        for metres in (40.0, 5_000.0):
            moved = dict(args, origin=_shift(args["origin"], metres, angle),
                         destination=_shift(args["destination"], metres, angle + 90))
            if args.get("waypoints"):
                moved["waypoints"] = [_shift(w, metres, angle) for w in args["waypoints"]]
            out.append(moved)
    elif name == "search_around_poi":
        out += [dict(args, location=_shift(args["location"], m, angle)) for m in (40.0, 5_000.0)]
    elif name == "reverse_geocoding":
        for metres in (40.0, 5_000.0):
            lng, lat = _shift(f"{args['longitude']},{args['latitude']}", metres, angle).split(",")
            out.append(dict(args, longitude=lng, latitude=lat))
    return out


def collect_samples(env, n_per_type: int, seed: int = 0, *, global_scope: bool = False) -> dict[str, list[tuple]]:
    """(episode_id, tool, arguments, action_json) per match type, classified by the sandbox itself."""
    from mobility_env.tools import validate_call

    rng = random.Random(seed)
    ids = list(env.episode_ids)
    rng.shuffle(ids)
    box = env.sandbox
    found: dict[str, list[tuple]] = {m: [] for m in MATCH_TYPES}
    for episode_id in ids:
        if all(len(v) >= n_per_type for v in found.values()):
            break
        episode = env.store.get(episode_id)
        for call in episode.recorded:
            for args in _variants(call.name, call.arguments, rng):
                if validate_call(call.name, args):
                    continue
                scope_id = None if global_scope else episode_id
                match = box.lookup(call.name, args, scope_id).match
                if len(found[match]) < n_per_type:
                    action = json.dumps({"name": call.name, "arguments": args}, ensure_ascii=False)
                    found[match].append((episode_id, call.name, args, action))
    return found


def _summary(rounds: list[dict[str, float]]) -> dict[str, float]:
    """Median over rounds of each statistic."""
    keys = [k for k in rounds[0] if k != "n"]
    out = {"n": sum(r["n"] for r in rounds)}
    out.update({k: round(statistics.median(r[k] for r in rounds), 2) for k in keys})
    return out


def bench_steps(data: str, samples: int, rounds: int) -> dict[str, Any]:
    from mobility_env import MobilityEnv

    result: dict[str, Any] = {"step": {}, "reset": {}, "floor": {}, "overhead_us": {}}
    for obs_format in ("compact", "raw"):
        env = MobilityEnv(data, obs_format=obs_format)
        found = collect_samples(env, samples)
        per_type: dict[str, list] = {m: [] for m in MATCH_TYPES}
        per_floor: dict[str, list] = {m: [] for m in MATCH_TYPES}
        per_reset: list = []
        route_exact: list = []
        for round_index in range(rounds):
            gc.collect()
            clock = __import__("time").perf_counter_ns
            round_steps: dict[str, list[int]] = {m: [] for m in MATCH_TYPES}
            round_floor: dict[str, list[int]] = {m: [] for m in MATCH_TYPES}
            round_reset: list[int] = []
            round_route: list[int] = []
            for match, items in found.items():
                observations: dict[str, Any] = {}
                for episode_id, tool, _args, action in items:
                    t0 = clock()
                    env.reset(options={"episode_id": episode_id})
                    t1 = clock()
                    obs, *_ = env.step(action)
                    t2 = clock()
                    round_reset.append(t1 - t0)
                    round_steps[match].append(t2 - t1)
                    if match == "exact" and tool in ROUTE_TOOLS:
                        round_route.append(t2 - t1)
                    observations[action] = json.loads(obs)
                for _episode_id, _tool, _args, action in items:  # the floor, same actions, same observations
                    t0 = clock()
                    parsed = json.loads(action)
                    value = observations[action]
                    json.dumps(value, **_DUMPS)
                    round_floor[match].append(clock() - t0)
                    del parsed
            for m in MATCH_TYPES:
                per_type[m].append(percentiles(round_steps[m]))
                per_floor[m].append(percentiles(round_floor[m]))
            per_reset.append(percentiles(round_reset))
            route_exact.append(percentiles(round_route))
        result["step"][obs_format] = {m: _summary(per_type[m]) for m in MATCH_TYPES if per_type[m][0]["n"]}
        result["floor"][obs_format] = {m: _summary(per_floor[m]) for m in MATCH_TYPES if per_floor[m][0]["n"]}
        result["overhead_us"][obs_format] = {
            m: {"p50": round(result["step"][obs_format][m]["p50_us"] - result["floor"][obs_format][m]["p50_us"], 2),
                "p99": round(result["step"][obs_format][m]["p99_us"] - result["floor"][obs_format][m]["p99_us"], 2)}
            for m in result["step"][obs_format]}
        result["reset"][obs_format] = _summary(per_reset)
        if route_exact[0]["n"]:
            result["step"][obs_format]["exact_route"] = _summary(route_exact)
    return result


def bench_global_lookups(data: str, samples: int, rounds: int) -> dict[str, Any]:
    """``Sandbox.lookup`` with no episode scope: the whole-sandbox exact/fuzzy/nearest/miss paths."""
    from mobility_env import MobilityEnv

    env = MobilityEnv(data)
    box = env.sandbox
    found = collect_samples(env, samples, seed=1, global_scope=True)
    out: dict[str, Any] = {}
    clock = __import__("time").perf_counter_ns
    for match, items in found.items():
        per_round = []
        for _ in range(rounds):
            gc.collect()
            times = []
            for _episode_id, tool, args, _action in items:
                t0 = clock()
                box.lookup(tool, args)
                times.append(clock() - t0)
            per_round.append(percentiles(times))
        if per_round[0]["n"]:
            out[match] = _summary(per_round)
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", required=True)
    parser.add_argument("--samples", type=int, default=300, help="actions per match type")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out")
    args = parser.parse_args(argv)
    result = bench_steps(args.data, args.samples, args.rounds)
    result["lookup_global"] = bench_global_lookups(args.data, args.samples, args.rounds)
    emit(result, args.out)
    return result


if __name__ == "__main__":
    main()
