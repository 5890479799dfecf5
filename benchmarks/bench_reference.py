"""Side by side with the released reference sandbox (AMAP-ML/MobilityBench), same data, same process.

The reference's sandbox tools (``mobility_bench/tools/sandbox/*.py``) load one nested JSON file
per tool at import time and answer a call by dict lookups. This script, given a checkout of that
code (``--reference-src``, the directory holding ``mobility_bench/``; nothing of it is copied
here), runs both on one built directory:

1. **Write the reference's files** from every recorded call of every episode of ``--data``
   (read through ``Sandbox.entry_value``), keyed the way each reference tool looks them up:
   routes ``destination -> origin`` with coordinates at 6 decimals (its
   ``format_decimal_places``), driving then ``strategy ("+"-joined, sorted, or "default") ->
   waypoints (";"-joined as given, or "default")``; ``query_poi`` keyword -> city;
   ``weather_query`` city -> "True"/"False"; ``search_around_poi`` location (as given) ->
   keyword; ``reverse_geocoding`` ``"lat,lng"`` as given; ``traffic_status`` road -> city. Each
   file holds what its tool reads: the response as recorded for driving, walking, traffic and
   bus (inside its ``{"status": "SUCCESS", "data": ...}`` envelope), the payload for bicycling,
   and the fields the tool returns for the four others. The files live in a temporary
   directory the reference is pointed at through its ``Settings.agent.sandbox_data_dir``; the
   write and the reference's load (the import of its tool modules) are timed.
2. **Verify equivalence** on the gold calls of the scanned episodes: our
   ``Sandbox.lookup(tool, gold arguments, episode).response`` against the ``data`` of the
   reference tool's result (its ToolResult envelope ``{"status", "data", "error"}`` removed).
   ``strict``: the reference's data equals our response, or our response's payload when it is
   recorded inside the same kind of envelope. ``projection``: the reference returns, by the
   design of its file format, a subset of ours (``query_poi``: location/name/address;
   ``weather_query``: weather_description; ``search_around_poi``: the POI list; ``reverse_geocoding``:
   the formatted address). Anything else is a mismatch, by kind: ``reference_miss`` (the
   reference found no entry), ``collision`` (its global dict holds another episode's response
   under the same key), ``first_city`` (``query_poi`` without a city: the reference answers with
   the keyword's first stored city), ``different``, ``ours_not_exact``.
3. **Time, interleaved** (rounds of ours then the reference; medians over rounds; the process
   pinned to one CPU; only calls or episodes that returned equal data are timed):

   a. whole episodes: ours = ``env.reset(options={"episode_id": id})`` + ``env.step`` of each gold
      call as an action dict + ``env.step`` of ``finish`` with the reference answer
      (``mobility_rewards.mobilitybench.reference.reference_finish``); the reference = ``tool.invoke(args)``
      (as its agents call it) + ``json.dumps(result, ensure_ascii=False)`` per gold call.
      Episodes go in blocks of 32: each block once (first visit: the episode is not yet
      materialized by this env), then again (revisit: the env's 64-episode cache holds it).
      Episodes are those whose gold calls all agree strictly or by projection.
      Ours scores each episode in its loop (the ``finish`` step: shaped terms, metrics, the
      verified verdict); the reference scores offline, after the run. So the episodes are also
      timed against the reference's calls **plus its own scoring of that episode**: the five
      metrics of its evaluator (``tool``, ``instruction``, ``planning``, ``answer``,
      ``efficiency``, built by its ``MetricRegistry`` with its default evaluation settings), each
      ``compute(case_id, prediction, ground_truth)`` once, on the same calls and answer; the
      prediction and ground-truth dicts are built before timing (its runner reads them from
      files with pandas, not charged here). Without ``sentence-transformers`` its similarity
      checks use its own character-overlap fallback, so this scoring time is a lower bound.
      Needs ``cpca`` (its answer metric imports it); without it that part is skipped, saying why.
   b. single calls as the agent sees them, per tool: ours = ``env.step(action_text)`` (the
      observation, ``compact`` and ``raw``; reset before each call, not timed); the reference =
      ``tool.invoke(args)`` + ``json.dumps`` (the reference-comparison targets' measure) and + ``str`` (what its
      agents actually put in the ToolMessage). Ours parses the action text; the reference gets
      the arguments parsed. Strictly equal calls only.
   c. our step overhead over the floor (``benchmarks/bench_step.py``'s definition: ``json.loads``
      of the action text + one dict lookup + ``json.dumps`` of the observation's object), exact
      hits of gold calls, per tool.
   d. offline scoring per episode (what ``mobility-env eval`` does with a run's trajectories), p50: ours =
      ``Sandbox.with_stored_responses`` + ``score_episode`` on each episode's terminal trajectory read back from its
      JSON (parsing not timed, as the reference's files are not), on a store opened afresh (no cache holds the
      episode); with the stored evidence (eval's path) and without (views computed from the decoded responses);
      the reference = its evaluator's five ``compute`` calls on the same episode (as in a).

After the load, the reference's objects are moved to the collector's permanent generation
(``gc.freeze``) so that full collections over its millions of objects are charged to neither
side; the cost of one full collection before the freeze is reported.

    python benchmarks/bench_reference.py --data DIR --reference-src REF/src \
        [--episodes 200] [--rounds 3] [--calls 200] [--out F]

Needs, in the running interpreter, this project plus ``langchain-core``, ``pyyaml`` and
``python-dotenv`` (what the reference's tool modules import), and ``cpca`` for its evaluator
(optional: without it the scored comparison is skipped). Exits with status 2 when the
reference cannot be imported. Memory: the reference holds its whole JSON as Python objects,
about 4.5 times the file size (100k synthetic episodes: 1.1 GiB of JSON, +5 GiB of heap, a run
peaking at 8.3 GiB RSS).
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Iterator, NoReturn

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import emit, machine, memory_kib, percentiles  # noqa: E402
from bench_episodes import pin_one_core  # noqa: E402
from bench_step import _DUMPS, ROUTE_TOOLS, _summary  # noqa: E402

DUMPS: dict[str, Any] = dict(_DUMPS)  # bench_step.py's floor serializes the observation with these options

TOOL_FILES = {
    "driving_route": "driving_route_handle.json", "walking_route": "walking_route_handle.json",
    "bicycling_route": "bicycling_route_handle.json", "bus_route": "bus_route_mock.json",
    "query_poi": "nested_poi_data.json", "weather_query": "weather_sandbox.json",
    "search_around_poi": "search_around_poi_sandbox.json",
    "reverse_geocoding": "reverse_geocoding_sandbox.json", "traffic_status": "traffic_info_mock.json",
}
# the module-level dict each reference tool module loads its file into
REFERENCE_GLOBALS = {
    "driving_route": ("driving_route", "ROUTE_SANDBOX"), "walking_route": ("walking_route", "WALKING_ROUTE_CACHE"),
    "bicycling_route": ("bicycling_route", "BICYCLING_ROUTE_CACHE"), "bus_route": ("bus_route", "BUS_ROUTE_SANDBOX"),
    "query_poi": ("query_poi", "MOCK_POI_DATA"), "weather_query": ("weather_query", "RAW_SANDBOX"),
    "search_around_poi": ("search_around_poi", "POI_SANDBOX"),
    "reverse_geocoding": ("reverse_geocoding", "SANDBOX_DATA"), "traffic_status": ("traffic_info", "TRAFFIC_SANDBOX"),
}
POI_FIELDS = ("location", "name", "address")
BLOCK = 32  # episodes per first-visit/revisit block (the env's store keeps 64 materialized episodes)
CLOCK = time.perf_counter_ns


class RawJSON(str):
    """JSON text written into a reference file verbatim (a recorded response, not re-encoded)."""


class Unrepresentable(ValueError):
    """A recorded call the reference's file format cannot hold."""


# ----------------------------------------------------------------------------- the reference's keys
def coord6(text: Any) -> str:
    """The reference's ``utils.format_decimal_places``: "lng,lat" at 6 decimals, else unchanged."""
    try:
        lng, lat = (float(part.strip()) for part in str(text).split(","))
    except ValueError:
        return str(text)
    return f"{lng:.6f},{lat:.6f}"


def _list_key(value: Any, joiner: str, *, sort: bool) -> str:
    if value in (None, "", []):
        return "default"
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise Unrepresentable("not a list of strings (the reference's schema is list[str])")
    return joiner.join(sorted(value) if sort else value)


def reference_path(tool: str, args: dict[str, Any]) -> tuple[str, ...]:
    """The keys under which the reference's ``tool`` looks a call up, outermost first."""
    if tool in ROUTE_TOOLS:
        route = (coord6(args.get("destination")), coord6(args.get("origin")))
        if tool == "driving_route":
            return route + (_list_key(args.get("strategy"), "+", sort=True),
                            _list_key(args.get("waypoints"), ";", sort=False))
        return route
    if tool == "query_poi":
        return (str(args.get("keywords", "")).strip(), str(args.get("city") or ""))
    if tool == "weather_query":
        return (str(args.get("city", "")), str(bool(args.get("need_forecast", False))), "weather_description")
    if tool == "search_around_poi":
        return (str(args.get("location", "")), str(args.get("keywords") or "").strip())
    if tool == "reverse_geocoding":
        return (f"{args.get('latitude')},{args.get('longitude')}",)
    if tool == "traffic_status":
        return (str(args.get("name", "")).strip(), str(args.get("city", "")).strip())
    raise Unrepresentable(f"no reference tool for {tool}")


def unwrap(response: Any) -> Any:
    """The payload of a response recorded inside a ToolResult-like envelope, else the response."""
    if isinstance(response, dict) and set(response) == {"status", "data", "error"}:
        return response["data"]
    return response


def _dedup_pois(pois: list[Any]) -> list[Any]:
    seen, out = set(), []
    for poi in pois:
        key = (poi.get("name", ""), poi.get("location", ""))
        if key not in seen:
            seen.add(key)
            out.append(poi)
    return out


def reference_leaf(tool: str, text: str) -> Any:
    """What the reference's file holds for one recorded response (JSON text as stored by the build)."""
    if tool in ("driving_route", "walking_route", "traffic_status"):
        return RawJSON(text)
    response = json.loads(text)
    payload = unwrap(response)
    if tool == "bus_route":  # the file keeps the envelope; the tool returns its "data"
        is_envelope = isinstance(response, dict) and response.get("status") == "SUCCESS" and "data" in response
        return RawJSON(text) if is_envelope else {"status": "SUCCESS", "data": response}
    if tool == "bicycling_route":
        return payload
    if tool == "query_poi":
        if not isinstance(payload, dict):
            raise Unrepresentable("query_poi response without a POI object")
        return {k: payload[k] for k in POI_FIELDS if k in payload}
    if tool == "weather_query":
        if not isinstance(payload, dict) or not isinstance(payload.get("weather_description"), str):
            raise Unrepresentable("weather response without weather_description")
        return payload["weather_description"]
    if tool == "search_around_poi":
        if not isinstance(payload, dict) or not isinstance(payload.get("pois"), list):
            raise Unrepresentable("search_around_poi response without a pois list")
        return payload["pois"]
    if tool == "reverse_geocoding":
        address = (payload.get("regeocode") or {}).get("formatted_address") if isinstance(payload, dict) else None
        if not isinstance(address, str) or not address:
            raise Unrepresentable("reverse_geocoding response without formatted_address")
        return address
    raise Unrepresentable(f"no reference tool for {tool}")


def expected_projection(tool: str, response: Any) -> Any:
    """What the reference's tool returns as ``data`` for our response, where it returns a subset."""
    payload = unwrap(response)
    if tool == "query_poi" and isinstance(payload, dict):
        return {k: payload.get(k, "") for k in POI_FIELDS}
    if tool == "weather_query" and isinstance(payload, dict):
        return {"weather_description": payload.get("weather_description")}
    if tool == "search_around_poi" and isinstance(payload, dict) and isinstance(payload.get("pois"), list):
        return _dedup_pois(payload["pois"])
    if tool == "reverse_geocoding" and isinstance(payload, dict):
        return {"address": (payload.get("regeocode") or {}).get("formatted_address")}
    return None


# ----------------------------------------------------------------------------- writing the files
def _encode(value: Any) -> Iterator[str]:
    if isinstance(value, RawJSON):
        yield value
    elif isinstance(value, dict):
        yield "{"
        for i, (key, item) in enumerate(value.items()):
            yield ("," if i else "") + json.dumps(key, ensure_ascii=False) + ":"
            yield from _encode(item)
        yield "}"
    else:
        yield json.dumps(value, ensure_ascii=False)


def write_reference_files(box: Any, out: Path) -> dict[str, Any]:
    """One reference file per tool from every sandbox entry; returns counts, collisions, timings."""
    from mobility_env.tools import canonical_tool_name

    started = time.perf_counter()
    by_tool: dict[str, list[int]] = {tool: [] for tool in TOOL_FILES}
    other = 0
    for entry in range(len(box)):
        tool = canonical_tool_name(box.entry_value("tool", entry))
        if tool in by_tool:
            by_tool[tool].append(entry)
        else:
            other += 1
    report: dict[str, Any] = {"entries": {}, "unrepresentable": {}, "collided_keys": {}, "bytes": {},
                              "seconds_per_tool": {}, "entries_not_map_tools": other}
    collided: dict[str, set[tuple[str, ...]]] = {}
    for tool, entries in by_tool.items():
        tool_started = time.perf_counter()
        root: dict[str, Any] = {}
        bad: dict[str, int] = {}
        clashes: set[tuple[str, ...]] = set()
        for entry in entries:
            try:
                path = reference_path(tool, json.loads(box.entry_value("arguments", entry)))
                leaf = reference_leaf(tool, box.entry_value("response", entry))
            except (Unrepresentable, ValueError) as exc:
                reason = str(exc).split(" (")[0][:80]
                bad[reason] = bad.get(reason, 0) + 1
                continue
            node = root
            for key in path[:-1]:
                node = node.setdefault(key, {})
            if path[-1] in node and node[path[-1]] != leaf:
                clashes.add(path)
            node[path[-1]] = leaf  # last writer wins, as a JSON object built by update would
        target = out / TOOL_FILES[tool]
        with open(target, "w", encoding="utf-8") as handle:
            handle.writelines(_encode(root))
        del root
        report["entries"][tool] = len(entries)
        report["unrepresentable"][tool] = bad
        report["collided_keys"][tool] = len(clashes)
        report["bytes"][tool] = target.stat().st_size
        report["seconds_per_tool"][tool] = round(time.perf_counter() - tool_started, 3)
        collided[tool] = clashes
    report["seconds"] = round(time.perf_counter() - started, 3)
    report["total_bytes"] = sum(report["bytes"].values())
    report["_collided"] = collided
    return report


# ----------------------------------------------------------------------------- the reference itself
def fail(message: str) -> NoReturn:
    print(f"bench_reference: {message}", file=sys.stderr)
    raise SystemExit(2)


def import_reference_code(src: str | None) -> Any:
    """Put ``src`` on sys.path and import the reference's code (no data yet); exit 2 if it cannot."""
    if not src:
        fail("--reference-src DIR is required: a checkout of AMAP-ML/MobilityBench's src/ (the directory "
             "holding mobility_bench/), e.g. `git -C MIRROR archive HEAD src | tar -x -C /tmp/refsrc` and "
             "--reference-src /tmp/refsrc/src")
    root = Path(str(src)).resolve()
    if not (root / "mobility_bench" / "tools" / "sandbox" / "__init__.py").is_file():
        fail(f"{root} holds no mobility_bench/tools/sandbox/: pass the reference's src/ directory")
    sys.path.insert(0, str(root))
    try:
        importlib.import_module("langchain_core.tools")
        settings = importlib.import_module("mobility_bench.config.settings")
        importlib.import_module("mobility_bench.tools.base")
    except ImportError as exc:
        fail(f"cannot import the reference from {root} ({exc}); install what its tool modules import into "
             f"this interpreter: pip install langchain-core pyyaml python-dotenv")
    package = sys.modules["mobility_bench"]
    if not str(Path(package.__file__ or "").resolve()).startswith(str(root)):
        fail(f"mobility_bench was imported from {package.__file__}, not from {root}")
    return settings


def load_reference(settings: Any, data_dir: Path, written: dict[str, int]) -> dict[str, Any]:
    """Point the reference at ``data_dir``, import its tool modules (the load), return the tools."""
    if "mobility_bench.tools.sandbox" in sys.modules:
        fail("the reference's sandbox tools were imported before their data directory was set")
    settings.Settings._instance = settings.Settings(agent=settings.AgentConfig(sandbox_data_dir=str(data_dir)))
    gc.collect()
    before = memory_kib()
    started = time.perf_counter()
    try:
        package = importlib.import_module("mobility_bench.tools.sandbox")  # each tool module loads its file
    except ImportError as exc:
        fail(f"cannot import the reference's sandbox tools ({exc}); install what they import into this interpreter")
    seconds = time.perf_counter() - started
    after = memory_kib()
    utils = importlib.import_module("mobility_bench.tools.sandbox.utils")
    if Path(utils.get_sandbox_data_dir()).resolve() != data_dir.resolve():
        fail(f"the reference read {utils.get_sandbox_data_dir()}, not {data_dir}")
    for tool, (module, name) in REFERENCE_GLOBALS.items():
        loaded = getattr(importlib.import_module(f"mobility_bench.tools.sandbox.{module}"), name)
        if written.get(tool) and not loaded:  # the reference degrades to {} on a missing file: refuse that
            fail(f"the reference loaded no {tool} data from {data_dir / TOOL_FILES[tool]}")
    started = time.perf_counter()
    gc.collect()
    full_collect = time.perf_counter() - started
    gc.freeze()
    return {"tools": {tool: getattr(package, tool) for tool in TOOL_FILES},
            "seconds": round(seconds, 3), "full_gc_collect_ms_before_freeze": round(full_collect * 1000, 1),
            "memory_kib_before": before, "memory_kib_after": after,
            "anon_delta_mib": round((after.get("anon_kib", 0) - before.get("anon_kib", 0)) / 1024, 1)}


# ----------------------------------------------------------------------------- equivalence
def classify(tool: str, ours: Any, result: Any, collided: dict[str, set[tuple[str, ...]]],
             args: dict[str, Any]) -> str:
    data = result.get("data") if isinstance(result, dict) else None
    if data == ours or data == unwrap(ours):
        return "strict"
    projection = expected_projection(tool, ours)
    if projection is not None and data == projection:
        return "projection"
    if not data:
        return "reference_miss"
    try:
        if reference_path(tool, args) in collided.get(tool, set()):
            return "collision"
    except Unrepresentable:
        pass
    if tool == "query_poi" and not args.get("city"):
        return "first_city"  # no city given: the reference answers with the keyword's first stored city
    return "different"


class Scan:
    """Gold calls checked one by one: agreement counts, timed samples, eligible episodes."""

    def __init__(self, store: Any, tools: dict[str, Any], collided: dict[str, set[tuple[str, ...]]]):
        self.store, self.tools, self.collided = store, tools, collided
        self.kinds: dict[str, dict[str, int]] = {}
        self.examples: dict[str, list[dict[str, Any]]] = {}
        self.episodes_scanned = 0

    def check_call(self, episode_id: str, tool: str, args: dict[str, Any]) -> tuple[str, Any]:
        found = self.store.sandbox.lookup(tool, args, episode_id)
        result = self.tools[tool].invoke(args)
        if found.match != "exact":
            kind = "ours_not_exact"
        else:
            kind = classify(tool, found.response, result, self.collided, args)
        counts = self.kinds.setdefault(tool, {})
        counts[kind] = counts.get(kind, 0) + 1
        if kind not in ("strict", "projection") and len(self.examples.setdefault(kind, [])) < 3:
            self.examples[kind].append({"episode_id": episode_id, "tool": tool, "arguments": args,
                                        "reference": json.dumps(result, ensure_ascii=False)[:300]})
        return kind, found

    def summary(self) -> dict[str, Any]:
        total = sum(sum(c.values()) for c in self.kinds.values())
        strict = sum(c.get("strict", 0) for c in self.kinds.values())
        projection = sum(c.get("projection", 0) for c in self.kinds.values())
        return {"gold_calls": total, "episodes_scanned": self.episodes_scanned,
                "strict_rate": round(strict / total, 4) if total else None,
                "agreement_rate": round((strict + projection) / total, 4) if total else None,
                "by_tool": self.kinds, "mismatch_examples": self.examples,
                "compared": "our Sandbox.lookup(tool, gold arguments, episode).response vs the reference tool's "
                            "tool.invoke(gold arguments)['data']; strict: equal to our response or to its "
                            "payload inside a {status, data, error} envelope; projection: equal to the "
                            "fields the reference's file format keeps"}


# ----------------------------------------------------------------------------- timing
def chunks(items: list[Any], size: int) -> Iterator[list[Any]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


def play_ours(env: Any, play: dict[str, Any]) -> tuple[int, int, int, dict[str, Any], int]:
    """One whole episode through the env: (reset ns, calls ns, finish ns, terminal info, step errors)."""
    errors = 0
    t0 = CLOCK()
    env.reset(options={"episode_id": play["episode_id"]})
    t1 = CLOCK()
    for action in play["actions"]:
        errors += "error" in env.step(action)[4]
    t2 = CLOCK()
    _, _, terminated, _, info = env.step(play["finish"])
    t3 = CLOCK()
    return t1 - t0, t2 - t1, t3 - t2, (info if terminated else {}), errors


def play_reference(tools: dict[str, Any], play: dict[str, Any]) -> int:
    """The same gold calls through the reference's tools, each result rendered as its agents' JSON."""
    t0 = CLOCK()
    for tool, args in play["calls"]:
        json.dumps(tools[tool].invoke(args), ensure_ascii=False)
    return CLOCK() - t0


REFERENCE_METRICS = ("tool", "instruction", "planning", "answer", "efficiency")


def load_reference_scoring(settings: Any) -> tuple[dict[str, Any] | None, str | None]:
    """The reference evaluator's metric objects, as its runner builds them; (None, why) when they do not import."""
    try:
        registry = importlib.import_module("mobility_bench.evaluation.registry").MetricRegistry
        registry.load_default_metrics()
    except ImportError as exc:
        return None, f"cannot import the reference's evaluation metrics ({exc}); pip install cpca"
    config = settings.Settings.get_instance().evaluation
    metrics = {name: registry.get(name, config=getattr(config, name, {})) for name in REFERENCE_METRICS}
    missing = [name for name, metric in metrics.items() if metric is None]
    if missing:
        return None, f"the reference's registry has no metric {missing}"
    return metrics, None


def reference_case(episode: Any, calls: list[tuple[str, dict[str, Any]]], finish: dict[str, Any]
                   ) -> dict[str, dict[str, Any]]:
    """What the reference's runner hands each metric for this episode: {metric: (prediction, ground truth)}."""
    plan = " ".join(str(step) for step in finish.get("plan") or [])
    truth = {**{k: v for k, v in episode.fields.items() if isinstance(v, str)},
             "task_scenario": episode.task_scenario, "intent_family": episode.intent_family,
             "tool_list": [{"name": c.name, "arguments": dict(c.arguments)} for c in episode.gold_calls]}
    predictions = {
        "tool": {"tool_calls": [{"name": tool, "arguments": args} for tool, args in calls]},
        "instruction": {"thinking": "", "intent": finish.get("intent") or "", "steps": plan},
        "planning": {"steps": plan},
        "answer": {"answer": finish.get("answer", "")},
        "efficiency": {"token_usage": {}},
    }
    return {name: {"case_id": episode.episode_id, "prediction": prediction, "ground_truth": truth}
            for name, prediction in predictions.items()}


def score_reference(metrics: dict[str, Any], play: dict[str, Any]) -> int:
    """The reference's offline scoring of one episode: each metric's ``compute`` once (ns)."""
    t0 = CLOCK()
    for name, case in play["reference_case"].items():
        metrics[name].compute(case["case_id"], case["prediction"], dict(case["ground_truth"]))
    return CLOCK() - t0


def time_episodes(env: Any, tools: dict[str, Any], plays: list[dict[str, Any]], warmup: dict[str, Any],
                  rounds: int, scoring: dict[str, Any] | None) -> dict[str, Any]:
    """3a: whole episodes, ours then the reference each round; first visits and revisits."""
    # one episode outside the timed set first: lazy imports and first-use setup on either side
    ours_warm, ref_warm = play_ours(env, warmup), play_reference(tools, warmup)
    if scoring is not None:
        score_reference(scoring, warmup)
    scored: list[float] = []
    labels = ("ours_first", "ours_revisit", "ref_first", "ref_revisit")
    per_round: dict[str, list[float]] = {k: [] for k in labels}
    no_finish: dict[str, list[float]] = {"first": [], "revisit": []}
    parts: dict[str, dict[str, list[int]]] = {v: {"reset": [], "calls": [], "finish": []} for v in ("first", "revisit")}
    errors, fpr = 0, []
    per = len(plays) // rounds
    for r in range(rounds):
        batch = plays[r * per:(r + 1) * per]
        spent = {k: 0 for k in labels}
        spent_no_finish = {"first": 0, "revisit": 0}
        gc.collect()
        for block in chunks(batch, BLOCK):
            for visit in ("first", "revisit"):
                for play in block:
                    reset_ns, calls_ns, finish_ns, info, bad = play_ours(env, play)
                    spent[f"ours_{visit}"] += reset_ns + calls_ns + finish_ns
                    spent_no_finish[visit] += reset_ns + calls_ns
                    for name, ns in (("reset", reset_ns), ("calls", calls_ns), ("finish", finish_ns)):
                        parts[visit][name].append(ns)
                    errors += bad
                    fpr.append(info.get("metrics", {}).get("FPR", 0.0))
        gc.collect()
        for block in chunks(batch, BLOCK):
            for visit in ("first", "revisit"):
                for play in block:
                    spent[f"ref_{visit}"] += play_reference(tools, play)
        if scoring is not None:  # its scoring does not depend on a visit: once per episode
            gc.collect()
            scored.append(len(batch) / (sum(score_reference(scoring, play) for play in batch) / 1e9))
        for label, ns in spent.items():
            per_round[label].append(len(batch) / (ns / 1e9))
        for visit, ns in spent_no_finish.items():
            no_finish[visit].append(len(batch) / (ns / 1e9))
    rate = {k: round(statistics.median(v), 1) for k, v in per_round.items()}
    rate_no_finish = {k: round(statistics.median(v), 1) for k, v in no_finish.items()}
    visits = ("first", "revisit")
    key = {"first": "first_visit", "revisit": "revisit"}
    return {
        "episodes_per_round": per, "rounds": rounds, "gold_calls_per_episode": round(
            statistics.fmean(len(p["calls"]) for p in plays), 2),
        "ours_episodes_per_s": {key[v]: rate[f"ours_{v}"] for v in visits},
        "reference_episodes_per_s": {key[v]: rate[f"ref_{v}"] for v in visits},
        "ours_over_reference": {key[v]: round(rate[f"ours_{v}"] / rate[f"ref_{v}"], 3) for v in visits},
        "ours_without_finish_episodes_per_s": {key[v]: rate_no_finish[v] for v in visits},
        "ours_without_finish_over_reference": {
            key[v]: round(rate_no_finish[v] / rate[f"ref_{v}"], 3) for v in visits},
        "per_round_episodes_per_s": {k: [round(x, 1) for x in v] for k, v in per_round.items()},
        "ours_parts_us": {key[v]: {k: percentiles(x) for k, x in parts[v].items()} for v in visits},
        "warmup_episode_ms": {"ours": round(sum(ours_warm[:3]) / 1e6, 2), "reference": round(ref_warm / 1e6, 2)},
        "ours_step_errors": errors, "ours_mean_FPR": round(statistics.fmean(fpr), 4) if fpr else None,
        **_with_reference_scoring(per_round, scored, rounds),
    }


def _with_reference_scoring(per_round: dict[str, list[float]], scored: list[float], rounds: int) -> dict[str, Any]:
    """Ours against the reference's calls plus its offline scoring of the same episodes (per round, then medians)."""
    if not scored:
        return {}
    out: dict[str, Any] = {"reference_scoring_episodes_per_s": round(statistics.median(scored), 1)}
    for visit, key in (("first", "first_visit"), ("revisit", "revisit")):
        # an episode's time is the calls' plus the scoring's: 1 / (1/calls + 1/scoring) episodes/s
        combined = [1.0 / (1.0 / per_round[f"ref_{visit}"][r] + 1.0 / scored[r]) for r in range(rounds)]
        rate = statistics.median(combined)
        ours = statistics.median(per_round[f"ours_{visit}"])
        out.setdefault("reference_scored_episodes_per_s", {})[key] = round(rate, 1)
        out.setdefault("ours_over_reference_scored", {})[key] = round(ours / rate, 3)
    return out


def time_offline_scoring(data: str, env: Any, plays: list[dict[str, Any]], scoring: dict[str, Any] | None
                         ) -> dict[str, Any]:
    """3d: offline scoring of each episode's trajectory read back from JSON, ours (with and without the stored
    evidence) against the reference's evaluator, p50 per episode."""
    from mobility_env.mobilitybench.store import resolve_data
    from mobility_env.mobilitybench.trajectory import Trajectory
    from mobility_env.trajectory import as_record
    from mobility_rewards import score_episode

    records = []
    for play in plays:
        info = play_ours(env, play)[3]
        if info:
            records.append((play, json.dumps(as_record(info["trajectory"]), ensure_ascii=False), info))
    times: dict[str, list[int]] = {"stored": [], "computed": [], "reference": []}
    differ = 0
    for variant in ("stored", "computed"):
        store = resolve_data(data)  # cold: no episode, response or view of it cached
        gc.collect()
        for play, text, info in records:
            episode, trajectory = store.get(play["episode_id"]), Trajectory.model_validate(json.loads(text))
            t0 = CLOCK()
            if variant == "stored":
                store.sandbox.with_stored_responses(trajectory.calls)
            metrics, verdict = score_episode(episode, trajectory)
            times[variant].append(CLOCK() - t0)
            differ += metrics != info["metrics"] or verdict.to_dict() != info["verdict"]
    if scoring is not None:
        gc.collect()
        times["reference"] = [score_reference(scoring, play) for play, _, _ in records]
    out: dict[str, Any] = {"episodes": len(records), "scores_differing_from_the_env": differ,
                           "p50_us": {k: round(statistics.median(v) / 1e3, 1) for k, v in times.items() if v}}
    if times["reference"]:
        for variant in ("stored", "computed"):
            out.setdefault("ours_over_reference_p50", {})[variant] = round(
                statistics.median(times["reference"]) / statistics.median(times[variant]), 3)
    return out


def time_calls(envs: dict[str, Any], tools: dict[str, Any], samples: list[dict[str, Any]],
               rounds: int) -> dict[str, Any]:
    """3b + 3c: single calls per tool, ours (compact, raw) and the reference (json, str), and our floor."""
    series = ("ours_compact", "floor_compact", "ours_raw", "floor_raw", "reference_json", "reference_str")
    times: dict[str, list[list[int]]] = {s: [] for s in series}
    chars: dict[str, list[int]] = {}  # characters the agent reads, per sample

    def ours(env: Any, floor: bool) -> tuple[list[int], list[int]]:
        steps, floors, observations = [], [], []
        for sample in samples:
            env.reset(options={"episode_id": sample["episode_id"]})
            t0 = CLOCK()
            obs = env.step(sample["action_text"])[0]
            steps.append(CLOCK() - t0)
            observations.append(json.loads(obs))
            chars.setdefault(f"ours_{env.obs_format}", []).append(len(obs))
        if floor:  # bench_step.py's floor, on the same actions and the observations just returned
            by_action = {s["action_text"]: o for s, o in zip(samples, observations)}
            parsed = []  # kept until after the loop: freeing them is not part of the floor
            for sample in samples:
                t0 = CLOCK()
                parsed.append(json.loads(sample["action_text"]))
                value = by_action[sample["action_text"]]
                json.dumps(value, **DUMPS)
                floors.append(CLOCK() - t0)
        return steps, floors

    def reference(render: Callable[[Any], str], name: str) -> list[int]:
        out, sizes = [], chars.setdefault(name, [])
        for sample in samples:
            if not sample["side_by_side"]:  # kept in place so that indices match the samples
                out.append(0)
                sizes.append(0)
                continue
            tool, args = tools[sample["tool"]], sample["arguments"]
            t0 = CLOCK()
            text = render(tool.invoke(args))
            out.append(CLOCK() - t0)
            sizes.append(len(text))
        return out

    def as_json(value: Any) -> str:
        return json.dumps(value, ensure_ascii=False)

    for _ in range(rounds):
        for fmt in ("compact", "raw"):
            gc.collect()
            steps, floors = ours(envs[fmt], floor=True)
            times[f"ours_{fmt}"].append(steps)
            times[f"floor_{fmt}"].append(floors)
            gc.collect()
            name = "reference_json" if fmt == "compact" else "reference_str"
            times[name].append(reference(as_json if fmt == "compact" else str, name))

    def stat(name: str, keep: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        rows = [percentiles([t for t, s in zip(run, samples) if keep(s)]) for run in times[name]]
        return _summary(rows) if rows and rows[0]["n"] else {"n": 0}

    side: dict[str, Any] = {}
    overhead: dict[str, Any] = {}
    for tool in TOOL_FILES:
        def of_tool(s: dict[str, Any], tool: str = tool) -> bool:
            return s["tool"] == tool

        def both(s: dict[str, Any], tool: str = tool) -> bool:
            return s["tool"] == tool and s["side_by_side"]

        if any(of_tool(s) for s in samples):
            overhead[tool] = {}
            for fmt in ("compact", "raw"):
                step, floor = stat(f"ours_{fmt}", of_tool), stat(f"floor_{fmt}", of_tool)
                overhead[tool][fmt] = {"n": step["n"], "step_p50_us": step["p50_us"], "floor_p50_us": floor["p50_us"],
                                       "overhead_p50_us": round(step["p50_us"] - floor["p50_us"], 2),
                                       "step_p99_us": step["p99_us"]}
        if any(both(s) for s in samples):
            row: dict[str, Any] = {"route": tool in ROUTE_TOOLS}
            picked = [i for i, s in enumerate(samples) if both(s)]
            row["mean_chars"] = {name: round(statistics.fmean(chars[name][i] for i in picked))
                                 for name in ("ours_compact", "ours_raw", "reference_json", "reference_str")}
            for name in ("ours_compact", "ours_raw", "reference_json", "reference_str"):
                row[name] = stat(name, both)
            for fmt in ("compact", "raw"):
                ours_row, ref_row = row[f"ours_{fmt}"], row["reference_json"]
                row[f"reference_over_ours_{fmt}"] = {q: round(ref_row[q] / ours_row[q], 2)
                                                     for q in ("p50_us", "p99_us")}
            side[tool] = row
    return {"side_by_side": side, "step_overhead": overhead}


# ----------------------------------------------------------------------------- main
def checkout_state() -> dict[str, Any]:
    """The commit of this checkout and how many files differ from it: the numbers are a baseline."""
    repo = Path(__file__).resolve().parent.parent
    try:
        head = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
        changed = subprocess.run(["git", "-C", str(repo), "status", "--porcelain"], capture_output=True,
                                 text=True, check=True).stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        return {}
    return {"commit": head, "uncommitted_files": len(changed)}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", required=True, help="a built directory (mobility-env build / synth)")
    parser.add_argument("--reference-src", help="the reference's src/ directory (holds mobility_bench/)")
    parser.add_argument("--episodes", type=int, default=200, help="whole episodes per round (3a)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--calls", type=int, default=200, help="gold calls per tool for 3b/3c")
    parser.add_argument("--max-scan", type=int, default=20_000, help="episodes scanned at most for samples")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--info-trajectory", choices=("copy", "reference"), default=None,
                        help="the env's info_trajectory (default: the env's default, the record by reference)")
    parser.add_argument("--workdir", help="write the reference's files here and keep them (default: a temp dir)")
    parser.add_argument("--out")
    args = parser.parse_args(argv)

    result: dict[str, Any] = {"command": [Path(sys.argv[0]).name, *(argv if argv is not None else sys.argv[1:])],
                              "machine": machine(), "loadavg_start": list(os.getloadavg()),
                              "checkout": checkout_state()}
    settings = import_reference_code(args.reference_src)
    result["pinned_cpu"] = pin_one_core()

    from mobility_env import MobilityEnv
    from mobility_env.mobilitybench.store import resolve_data
    from mobility_env.tools import canonical_tool_name
    from mobility_rewards.mobilitybench.reference import reference_finish

    store = resolve_data(args.data)  # for preparation; the timed envs have their own episode caches
    result["data"] = {"dir": str(Path(args.data).resolve()), "episodes": len(store.ids),
                      "sandbox_entries": len(store.sandbox)}
    workdir = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="mobility-ref-sandbox-"))
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        written = write_reference_files(store.sandbox, workdir)
        collided = written.pop("_collided")
        result["write"] = written
        gc.collect()
        loaded = load_reference(settings, workdir, written["entries"])
        tools = loaded.pop("tools")
        result["reference_load"] = loaded
    finally:
        if not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)

    # --- 2. equivalence, and the samples and episodes timed below
    scan = Scan(store, tools, collided)
    ids = list(store.ids)
    random.Random(args.seed).shuffle(ids)
    rounds = max(1, args.rounds)
    want_plays = args.episodes * rounds
    plays: list[dict[str, Any]] = []
    samples: list[dict[str, Any]] = []
    per_tool = {tool: 0 for tool in TOOL_FILES}
    skipped = {"no_gold_calls": 0, "disagreeing_call": 0}
    for episode_id in ids[:args.max_scan]:
        if len(plays) > want_plays and all(n >= args.calls for n in per_tool.values()):
            break
        episode = store.get(episode_id)
        scan.episodes_scanned += 1
        calls, ok = [], True
        for call in episode.gold_calls:
            tool = canonical_tool_name(call.name) or call.name
            if tool not in tools:
                ok = False
                continue
            kind, found = scan.check_call(episode_id, tool, dict(call.arguments))
            calls.append((tool, dict(call.arguments)))
            ok = ok and kind in ("strict", "projection")
            if found.match == "exact" and per_tool[tool] < args.calls:
                per_tool[tool] += 1
                samples.append({"episode_id": episode_id, "tool": tool, "arguments": dict(call.arguments),
                                "side_by_side": kind == "strict", "action_text": json.dumps(
                                    {"name": call.name, "arguments": call.arguments}, ensure_ascii=False)})
        if not calls:
            skipped["no_gold_calls"] += 1
        elif not ok:
            skipped["disagreeing_call"] += 1
        elif len(plays) < want_plays + 1:  # + 1: the warm-up episode
            finish = reference_finish(episode).model_dump(exclude_none=True)
            plays.append({"episode_id": episode_id, "calls": calls,
                          "actions": [{"name": c.name, "arguments": dict(c.arguments)} for c in episode.gold_calls],
                          "finish": {"name": "finish", "arguments": finish},
                          "reference_case": reference_case(episode, calls, finish)})
    result["equivalence"] = scan.summary()
    result["equivalence"]["episodes_not_timed"] = skipped
    del scan, store  # free the preparation's episode cache

    # --- 3. timing
    if len(plays) < rounds + 1:
        fail(f"only {len(plays)} episodes agree with the reference; nothing to time")
    warmup = plays.pop()
    plays = plays[:len(plays) // rounds * rounds]
    extra = {"info_trajectory": args.info_trajectory} if args.info_trajectory else {}
    envs = {fmt: MobilityEnv(args.data, obs_format=fmt, **extra) for fmt in ("compact", "raw")}
    scoring, why = load_reference_scoring(settings)
    if why:
        result["reference_scoring_skipped"] = why
    result["episodes"] = time_episodes(envs["compact"], tools, plays, warmup, rounds, scoring)
    result["offline_scoring"] = time_offline_scoring(args.data, envs["compact"], plays, scoring)
    result["calls"] = time_calls(envs, tools, samples, rounds)
    result["memory_kib_end"] = memory_kib()
    result["loadavg_end"] = list(os.getloadavg())
    emit(result, args.out)
    return result


if __name__ == "__main__":
    main()
