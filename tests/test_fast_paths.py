"""The prebuilt replay index answers exactly like a brute-force scan of the sandbox rows.

The reference below is the lookup specification written as plain loops over every row
(no hashes, no bigram index, no grid): exact key, fuzzy name (top 20 names by rapidfuzz
ratio, ties to the first recorded), nearest coordinate (haversine over every row), miss
with the first near-miss reason. Randomized calls from a synthetic set of a few thousand
entries must get the same match, entry, scope, score, distance, detail and response from
the indexed directory, from an old-style directory (Parquet only) and from memory.
"""

from __future__ import annotations

import json
import math
import random
import re
import shutil
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from rapidfuzz import fuzz, process

from mobility_env import MobilityEnv
from mobility_env.mobilitybench.build import SANDBOX_SCHEMA, build_directory
from mobility_env.canonical import canonical_request
from mobility_env.mobilitybench.episode import Episode, RecordedCall, ToolCall
from mobility_env.mobilitybench.observation import format_response
from mobility_env.errors import CorruptDataError
from mobility_env.mobilitybench import replay_index
from mobility_env.mobilitybench.index_build import write_replay_index
from mobility_env.mobilitybench.index_format import grid_reach
from mobility_env.layout import ARROW_FILE, EPISODES_ARROW_FILE, INDEX_DIR
from mobility_env.mobilitybench.replay_index import ReplayIndex
from mobility_env.geo import haversine_m
from mobility_env.mobilitybench.sandbox import FUZZY_KINDS, LookupConfig, Sandbox
from mobility_env.mobilitybench.store import resolve_data
from mobility_env.tools import TOOLS, canonical_tool_name, validate_call

ROUTES = ("driving_route", "walking_route", "bicycling_route", "bus_route")
CONFIGS = [LookupConfig(), LookupConfig(fuzzy_threshold=60.0), LookupConfig(fuzzy_threshold=92.0, max_distance_m=80.0),
           LookupConfig(max_distance_m=1_000.0, global_fallback=False), LookupConfig(city_mismatch_penalty=25.0)]


# ----------------------------------------------------------------------------- the reference
class BruteForce:
    """Every row as Python values; every lookup a scan."""

    def __init__(self, directory: Path):
        self.rows = pq.read_table(directory / "sandbox.parquet").to_pylist()
        spans = pq.read_table(directory / "episodes.parquet", columns=["episode_id", "sandbox_start", "sandbox_stop"])
        self.ranges = {r["episode_id"]: (r["sandbox_start"], r["sandbox_stop"]) for r in spans.to_pylist()}

    def points(self, i: int) -> list[tuple[float, float]]:
        text = self.rows[i]["points"]
        return [tuple(float(x) for x in p.split(",")) for p in text.split(";")] if text else []

    def lookup(self, tool: str, arguments: dict, episode_id: str | None, config: LookupConfig) -> tuple:
        tool = canonical_tool_name(tool)
        req = canonical_request(tool, arguments)
        scopes = []
        if episode_id in self.ranges:
            scopes.append(("episode", range(*self.ranges[episode_id])))
        if config.global_fallback or not scopes:
            scopes.append(("global", range(len(self.rows))))
        near_misses: list[str] = []
        for scope, entries in scopes:
            found = self._scope(req, scope,
                                [i for i in entries if self.rows[i]["tool"] == tool and self.rows[i]["valid"]],
                                config, near_misses)
            if found is not None:
                match, entry, score, distance, detail = found
                return match, entry, scope, score, distance, detail, json.loads(self.rows[entry]["response"])
        detail = f"no recorded {tool} call matches {req.key!r}" + ("; " + near_misses[0] if near_misses else "")
        return "miss", None, None, None, None, detail, None

    def _scope(self, req, scope, candidates, config, near_misses):
        rows = self.rows
        for i in candidates:
            if rows[i]["key"] == req.key:
                return "exact", i, 100.0, 0.0, ""
        kind = TOOLS[req.tool].kind
        if kind in FUZZY_KINDS and kind != "around":
            if scope == "global":
                names = list(dict.fromkeys(rows[i]["name"] for i in candidates))
                hits = process.extract(req.name, names, scorer=fuzz.ratio, score_cutoff=config.fuzzy_threshold - 1e-9,
                                       limit=20)
                best_names = {name: score for name, score, _ in hits}
                pool = [(i, best_names[rows[i]["name"]]) for i in candidates if rows[i]["name"] in best_names]
            else:
                pool = [(i, fuzz.ratio(req.name, rows[i]["name"])) for i in candidates]
            best = None
            for i, score in pool:
                if rows[i]["options"] != req.options:
                    continue
                if req.city and rows[i]["city"] and rows[i]["city"] != req.city and req.tool != "weather_query":
                    score -= config.city_mismatch_penalty
                if score >= config.fuzzy_threshold and (best is None or (score, -i) > (best[0], -best[1])):
                    best = (score, i)
            if best is not None:
                return "fuzzy", best[1], best[0], None, f"name {rows[best[1]]['name']!r} ~ {req.name!r}"
        if not req.points:
            return None
        is_route, bound = kind == "route", config.max_distance_m
        best = None
        for i in candidates:
            points = self.points(i)
            if not points or (len(points) < 2 and len(req.points) >= 2 and is_route):
                continue
            distances = [haversine_m(a, b) for a, b in zip(req.points, points)]
            if max(distances[:min(len(points), 2) if is_route else 1]) > bound:
                continue
            if len(points) != len(req.points) or max(distances) > bound or rows[i]["options"] != req.options:
                near_misses.append(f"a {req.tool} between these points is recorded with strategy "
                                   f"{rows[i]['options'] or 'default'!r} and {max(len(points) - 2, 0)} waypoint(s); "
                                   "strategies and waypoints must match")
                continue
            score = None
            if kind == "around":
                score = 100.0 if req.name == rows[i]["name"] else fuzz.ratio(req.name, rows[i]["name"])
                if score < config.fuzzy_threshold:
                    continue
            rank = (max(distances), -(score or 0.0), i, score)
            best = rank if best is None or rank < best else best
        if best is None:
            return None
        match = "fuzzy" if best[0] <= 0.5 and best[3] is not None and best[3] < 100.0 else "nearest"
        return match, best[2], best[3], best[0], f"recorded call within {best[0]:.0f} m"


def _as_tuple(result) -> tuple:
    return (result.match, result.entry, result.scope, result.score, result.distance_m, result.detail, result.response)


# ----------------------------------------------------------------------------- random calls
_CHARS = "路街店园中山人民银行公司大学东西南北城广场站a1"


def _move(coord: str, rng: random.Random, metres: float) -> str:
    lng, lat = (float(x) for x in coord.split(","))
    angle = rng.uniform(0, 2 * math.pi)
    lat2 = lat + metres * math.cos(angle) / 111_195.0
    lng2 = lng + metres * math.sin(angle) / (111_195.0 * math.cos(math.radians(lat)))
    return f"{lng2:.{rng.choice([5, 6, 7])}f},{lat2:.6f}"


def _edit(text: str, rng: random.Random) -> str:
    chars = list(text)
    for _ in range(rng.choice([0, 1, 1, 2, 3])):
        op = rng.random()
        pos = rng.randrange(len(chars) + 1)
        if op < 0.4:
            chars.insert(pos, rng.choice(_CHARS))
        elif op < 0.7 and chars:
            del chars[min(pos, len(chars) - 1)]
        elif chars:
            chars[min(pos, len(chars) - 1)] = rng.choice(_CHARS)
    return "".join(chars) or rng.choice(_CHARS)


def _perturb(tool: str, args: dict, rng: random.Random, names: list[str]) -> dict:
    args = dict(args)
    if tool in ("query_poi", "traffic_status", "weather_query") or (tool == "search_around_poi" and rng.random() < 0.5):
        field = {"query_poi": "keywords", "traffic_status": "name", "weather_query": "city",
                 "search_around_poi": "keywords"}[tool]
        base = rng.choice(names) if rng.random() < 0.3 else str(args.get(field) or rng.choice(names))
        args[field] = _edit(base, rng) if rng.random() < 0.8 else base
        if "city" in args and tool != "weather_query" and rng.random() < 0.3:
            args["city"] = rng.choice(["北京市", "上海", "本溪市", args["city"]])
    metres = rng.choice([0.0, 0.3, 20.0, 90.0, 250.0, 320.0, 700.0, 3_000.0])
    if tool in ROUTES:
        args["origin"] = _move(args["origin"], rng, metres)
        if rng.random() < 0.7:
            args["destination"] = _move(args["destination"], rng, rng.choice([0.0, metres, 40.0]))
        if tool == "driving_route" and rng.random() < 0.3:
            args["strategy"] = rng.choice([[], ["躲避拥堵"], ["不走高速", "少收费"]])
        if tool == "driving_route" and rng.random() < 0.2:
            args["waypoints"] = (args.get("waypoints") or [])[:rng.randint(0, 1)] + \
                ([_move(args["origin"], rng, 500.0)] if rng.random() < 0.5 else [])
        if tool == "bus_route" and rng.random() < 0.3:
            args["strategy"] = rng.choice(["0", "2", "5"])
    elif tool == "search_around_poi":
        args["location"] = _move(args["location"], rng, metres)
    elif tool == "reverse_geocoding":
        lng, lat = _move(f"{args['longitude']},{args['latitude']}", rng, metres).split(",")
        args["longitude"], args["latitude"] = lng, lat
    return args


def _random_calls(reference: BruteForce, count: int, seed: int):
    rng = random.Random(seed)
    rows = [r for r in reference.rows if r["valid"]]
    names = sorted({r["name"] for r in rows if r["name"]})
    episode_ids = list(reference.ranges)
    made = 0
    while made < count:
        row = rng.choice(rows)
        arguments = _perturb(row["tool"], json.loads(row["arguments"]), rng, names)
        if validate_call(row["tool"], arguments):
            continue
        scope = rng.choice([row["episode_id"], row["episode_id"], rng.choice(episode_ids), None, "no-such-episode"])
        made += 1
        yield row["tool"], arguments, scope


# ----------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def synth_dir(tmp_path_factory) -> Path:
    from mobility_env.synth import synthesize

    return synthesize(700, 11, tmp_path_factory.mktemp("fast") / "synth", progress=False)


@pytest.fixture(scope="module")
def old_style_dir(synth_dir, tmp_path_factory) -> Path:
    """The same directory as an older version wrote it: the two Parquet files and the manifest."""
    old = tmp_path_factory.mktemp("fast") / "old"
    old.mkdir()
    for name in ("episodes.parquet", "sandbox.parquet", "manifest.json"):
        shutil.copy2(synth_dir / name, old / name)
    return old


@pytest.fixture(scope="module")
def reference(synth_dir) -> BruteForce:
    return BruteForce(synth_dir)


# ----------------------------------------------------------------------------- agreement
def test_synthetic_set_is_a_few_thousand_entries(synth_dir, reference):
    assert (synth_dir / ARROW_FILE).exists() and (synth_dir / INDEX_DIR / "meta.json").exists()
    assert 2_500 <= len(reference.rows) <= 6_000
    assert Sandbox.open(synth_dir).index.episodes is not None  # the memory-mapped path is the one tested


@pytest.mark.parametrize("config_index", range(len(CONFIGS)))
def test_indexed_lookups_agree_with_brute_force(synth_dir, old_style_dir, reference, config_index):
    config = CONFIGS[config_index]
    indexed, old = Sandbox.open(synth_dir, config), Sandbox.open(old_style_dir, config)
    seen: dict[tuple[str, str | None], int] = {}
    for tool, arguments, scope in _random_calls(reference, 500, seed=config_index):
        expected = reference.lookup(tool, arguments, scope, config)
        got = indexed.lookup(tool, arguments, scope)
        assert _as_tuple(got) == expected, (tool, arguments, scope)
        assert _as_tuple(old.lookup(tool, arguments, scope)) == expected, (tool, arguments, scope)
        seen[(got.match, got.scope)] = seen.get((got.match, got.scope), 0) + 1
    # the randomized calls exercise every stage in both scopes (not only misses)
    for stage in ("exact", "fuzzy", "nearest"):
        assert any(m == stage and n >= 3 for (m, _), n in seen.items()), (stage, seen)
    assert seen.get(("miss", None), 0) >= 10
    if config.global_fallback:
        assert any(s == "global" and m in ("fuzzy", "nearest") for (m, s) in seen), seen


def test_the_span_the_store_notes_is_the_indexs_span(synth_dir):
    """An episode's rows as its episodes row states them (noted when the store materializes it) are the rows the
    index finds by the id hashes, for every episode; an unknown id still has none."""
    store = resolve_data(synth_dir)
    searched = {e: store.sandbox.index.episode_span(e) for e in store.ids}
    for episode_id in store.ids:
        store.get(episode_id)
        assert store.sandbox._noted_spans[episode_id] == searched[episode_id]
        assert store.sandbox.episode_span(episode_id) == searched[episode_id]
    assert store.sandbox.episode_span("no-such-episode") is None


def test_every_recorded_call_replays_exactly_from_the_index(synth_dir, reference):
    box = Sandbox.open(synth_dir)
    for i, row in enumerate(reference.rows):
        if not row["valid"]:
            continue
        result = box.lookup(row["tool"], json.loads(row["arguments"]), row["episode_id"])
        assert result.match == "exact" and result.scope == "episode"
        assert reference.rows[result.entry]["key"] == row["key"] and result.entry <= i  # ties: lowest entry
        assert result.response == json.loads(reference.rows[result.entry]["response"])


def test_memory_sandbox_agrees_with_the_directory(synth_dir, reference):
    episodes = [resolve_data(synth_dir).get(eid) for eid in list(reference.ranges)[:150]]
    memory = Sandbox.from_episodes(episodes)
    directory = Sandbox.open(synth_dir)
    for tool, arguments, scope in _random_calls(reference, 200, seed=99):
        if scope is not None and scope not in memory.episode_ranges:
            scope = None
        a, b = memory.lookup(tool, arguments, scope), directory.lookup(tool, arguments, scope)
        if a.scope == "episode":  # entry numbers differ (memory holds fewer rows); what was served must not
            assert (a.match, a.scope, a.score, a.distance_m, a.response) == (b.match, b.scope, b.score, b.distance_m,
                                                                             b.response)


# ----------------------------------------------------------------------------- fuzzy index on hard strings
@pytest.mark.parametrize("threshold", [1.0, 45.0, 70.0, 80.0, 90.0, 100.0])
def test_bigram_filter_loses_nothing_on_dense_short_strings(threshold):
    rng = random.Random(int(threshold))
    names = ["".join(rng.choice("abcab路") for _ in range(rng.randint(1, 9))) for _ in range(400)] + ["", "a", "aa"]
    rows = [{"episode_id": "e", "tool": "query_poi", "arguments": "{}", "key": f"{n}|{i}", "name": n, "city": "",
             "options": "", "points": "", "lng": float("nan"), "lat": float("nan"), "response": "{}",
             "source_column": "", "gold_index": 0, "truncated": False, "valid": True} for i, n in enumerate(names)]
    index = ReplayIndex.from_table(pa.Table.from_pylist(rows, schema=SANDBOX_SCHEMA))
    order = list(dict.fromkeys(names))
    for query in ["", "a", "ab", "ba", "abc", "路a", "aab", "abab", "abcab", "cabba路", "abcabcab", "bbbbbbbbb", "aaaa"]:
        expected = [(order.index(name), score) for name, score, _ in
                    process.extract(query, order, scorer=fuzz.ratio, score_cutoff=threshold - 1e-9, limit=20)]
        got = [(pos, score) for pos, score in index.fuzzy_names("query_poi", query, threshold)]
        assert got == expected, (query, threshold)
        assert [index.name_of_position("query_poi", p) for p, _ in got] == [order[p] for p, _ in expected]


# ----------------------------------------------------------------------------- grid edges
def _geocode_episode(episode_id: str, coords: list[str]) -> Episode:
    recorded = [RecordedCall(name="reverse_geocoding", arguments=dict(zip(("longitude", "latitude"), c.split(","))),
                             response={"at": c}, gold_index=i) for i, c in enumerate(coords)]
    return Episode(episode_id=episode_id, query="我在哪", task_scenario="Geolocation Query",
                   intent_family="Basic Information Retrieval", recorded=recorded,
                   gold_calls=[ToolCall(name=r.name, arguments=r.arguments) for r in recorded])


@pytest.mark.parametrize("config", [LookupConfig(), LookupConfig(max_distance_m=5_000.0),
                                    LookupConfig(max_distance_m=3e6)])
def test_nearest_grid_across_the_antimeridian_and_near_the_poles(tmp_path, config):
    coords = ["179.999500,10.000000", "-179.999000,10.000300", "179.990000,10.001000", "-179.990000,9.999000",
              "12.000000,89.999000", "-168.000000,89.998500", "100.000000,-89.999500", "0.000000,0.000000",
              "0.004000,0.000000", "-0.002000,0.001000", "116.397128,39.916527", "116.399128,39.917527"]
    episodes = [_geocode_episode(f"g-{i}", [c]) for i, c in enumerate(coords)]
    directory = build_directory(episodes, tmp_path / "edges")
    reference = BruteForce(directory)
    box = Sandbox.open(directory, config)
    for query in ["-179.999900,10.000100", "179.999900,9.999900", "179.995,10.0005", "-179.995,10.0",
                  "45.000000,89.999800", "-90.000000,89.999900", "0.000000,-90.000000", "0.001000,0.000000",
                  "-0.000100,0.000000", "116.398128,39.917027", "-20.000000,45.000000"]:
        lng, lat = query.split(",")
        arguments = {"longitude": lng, "latitude": lat}
        assert _as_tuple(box.lookup("reverse_geocoding", arguments, None)) == \
            reference.lookup("reverse_geocoding", arguments, None, config), query


# ----------------------------------------------------------------------------- old directories, sharing
def test_old_style_directory_opens_and_serves_the_env(old_style_dir, synth_dir, caplog):
    assert not (old_style_dir / ARROW_FILE).exists() and not (old_style_dir / INDEX_DIR).exists()
    with caplog.at_level("INFO", logger="mobility_env.mobilitybench.sandbox"):
        box = Sandbox.open(old_style_dir)
        assert box.index.episodes is None and not box.index.compact_ok
    assert any("no prebuilt replay index" in r.getMessage() and "mobility-env index" in r.getMessage()
               for r in caplog.records)
    old_env, new_env = MobilityEnv(old_style_dir), MobilityEnv(synth_dir)
    for obs_format in ("compact", "raw"):
        old_env.obs_format = new_env.obs_format = obs_format
        for episode_id in old_env.episode_ids[:40]:
            a = old_env.reset(seed=1, options={"episode_id": episode_id})
            b = new_env.reset(seed=1, options={"episode_id": episode_id})
            assert a[0] == b[0]
            for call in old_env.unwrapped.episode.gold_calls:
                action = {"name": call.name, "arguments": dict(call.arguments)}
                step_a, step_b = old_env.step(action), new_env.step(action)
                assert step_a[:4] == step_b[:4]
                assert step_a[4].get("match") == step_b[4].get("match")


def test_stored_observations_are_what_format_response_writes(synth_dir, reference):
    box = Sandbox.open(synth_dir)
    assert box.index.compact_ok
    for entry in range(0, len(reference.rows), 3):
        tool, response = reference.rows[entry]["tool"], json.loads(reference.rows[entry]["response"])
        assert box.observation_text(entry, "raw") == format_response(tool, response, "raw")
        assert box.observation_text(entry, "compact") == format_response(tool, response, "compact")


def test_index_is_memory_mapped_not_copied(synth_dir):
    before = pa.total_allocated_bytes()
    box = Sandbox.open(synth_dir)
    for entry in range(0, len(box), 7):
        box.response(entry)
        box.observation_text(entry, "compact")
    assert pa.total_allocated_bytes() - before < 64 * 1024  # Arrow read nothing into its own buffers
    for array in (box.index.exact_hash, box.index.pt_lng, box.index.nn_key):
        base = array
        while getattr(base, "base", None) is not None and not isinstance(base, np.memmap):
            base = base.base
        assert isinstance(base, np.memmap) or type(base).__name__ == "mmap", type(base)


def test_a_changed_parquet_file_is_refused_until_reindexed(synth_dir, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(synth_dir, copy)
    assert ReplayIndex.load(copy) is not None
    table = pq.read_table(copy / "sandbox.parquet")
    pq.write_table(table.slice(0, table.num_rows - 1), copy / "sandbox.parquet")
    with pytest.raises(CorruptDataError, match="sandbox.parquet"):  # no longer the data the manifest vouches for
        ReplayIndex.load(copy)
    write_replay_index(copy, accept_changed_parquet=True)  # the user says the new Parquet is the data
    assert len(Sandbox.open(copy)) == table.num_rows - 1
    (copy / EPISODES_ARROW_FILE).unlink()
    assert resolve_data(copy).ids == resolve_data(synth_dir).ids  # a derived copy is missing: read from Parquet


# ----------------------------------------------------------------------------- global lookups: properties
_SCRIPTS = "aab路路街店ЖжßéØ١٢ب😀中山a1 -"  # repeated letters, CJK, Cyrillic, Latin-1, Arabic, an astral emoji


def _name_index(names: list[str]) -> ReplayIndex:
    rows = [{"episode_id": "e", "tool": "query_poi", "arguments": "{}", "key": f"{n}|{i}", "name": n, "city": "",
             "options": "", "points": "", "lng": float("nan"), "lat": float("nan"), "response": "{}",
             "source_column": "", "gold_index": 0, "truncated": False, "valid": True} for i, n in enumerate(names)]
    return ReplayIndex.from_table(pa.Table.from_pylist(rows, schema=SANDBOX_SCHEMA))


def _edited(text: str, edits: list[tuple[int, int, str]]) -> str:
    chars = list(text)
    for op, pos, char in edits:
        pos = pos % (len(chars) + 1)
        if op == 0 or not chars:
            chars.insert(pos, char)
        elif op == 1:
            del chars[min(pos, len(chars) - 1)]
        else:
            chars[min(pos, len(chars) - 1)] = char
    return "".join(chars)


_names = st.one_of(st.text(_SCRIPTS, min_size=1, max_size=3), st.text(_SCRIPTS, min_size=4, max_size=14),
                   st.builds(lambda part, times: part * times, st.text(_SCRIPTS, min_size=1, max_size=4),
                             st.integers(5, 40)))


@contextmanager
def _fuzzy_tuning(extra: int, read_more: int, score_directly: int):
    """Small indexes have short postings, which the defaults simply count in full: these settings
    make them go through the bare prefix and the binary-search rounds too."""
    saved = (replay_index._PREFIX_EXTRA, replay_index._READ_MORE, replay_index._SCORE_DIRECTLY)
    replay_index._PREFIX_EXTRA, replay_index._READ_MORE, replay_index._SCORE_DIRECTLY = extra, read_more, score_directly
    try:
        yield
    finally:
        replay_index._PREFIX_EXTRA, replay_index._READ_MORE, replay_index._SCORE_DIRECTLY = saved


_DEFAULT_TUNING = (replay_index._PREFIX_EXTRA, replay_index._READ_MORE, replay_index._SCORE_DIRECTLY)
# dense names over a few letters make those tokens common; queries then add rare ones (the case the
# prefix must not lose: a name holding only the query's most common tokens)
_dense = st.text("ab路", min_size=1, max_size=9)


@settings(deadline=None, derandomize=True, max_examples=120, suppress_health_check=[HealthCheck.too_slow])
@given(names=st.lists(st.one_of(_dense, _names), min_size=1, max_size=60), data=st.data(),
       threshold=st.one_of(st.sampled_from([1.0, 50.0, 70.0, 80.0, 90.0, 100.0]), st.floats(1.0, 100.0)),
       limit=st.sampled_from([1, 3, 20, 10_000]),
       tuning=st.sampled_from([_DEFAULT_TUNING, (0, -1, 0), (1, -1, 0), (2, -1, 0), (0, 2, 3)]))
def test_fuzzy_names_equal_rapidfuzz_over_every_name(names, data, threshold, limit, tuning):
    index = _name_index(names)
    order = list(dict.fromkeys(names))
    base = data.draw(st.sampled_from(order), label="base")
    edits = data.draw(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 200), st.sampled_from(_SCRIPTS)),
                               max_size=4), label="edits")
    query = data.draw(st.one_of(st.just(_edited(base, edits)), _names), label="query")
    expected = [(order.index(name), score) for name, score, _ in
                process.extract(query, order, scorer=fuzz.ratio, score_cutoff=threshold - 1e-9, limit=limit)]
    with _fuzzy_tuning(*tuning):
        assert index.fuzzy_names("query_poi", query, threshold, limit) == expected


@settings(deadline=None, derandomize=True, max_examples=60)
@given(names=st.lists(_dense, min_size=1, max_size=40), data=st.data(),
       threshold=st.sampled_from([50.0, 70.0, 80.0, 90.0]),
       tuning=st.sampled_from([(0, -1, 0), (1, -1, 0), (2, -1, 0)]))
def test_fuzzy_prefix_keeps_names_that_hold_only_common_tokens(names, data, threshold, tuning):
    """Dense names over three letters, a query of one of them plus rare characters: the rarest
    query tokens are held by no name, so a prefix one token short loses names."""
    index, order = _name_index(names), list(dict.fromkeys(names))
    query = list(data.draw(st.sampled_from(order), label="base"))
    for position, char in data.draw(st.lists(st.tuples(st.integers(0, 20), st.sampled_from("zЖ😀")), min_size=1,
                                             max_size=2), label="rare"):
        query.insert(position % (len(query) + 1), char)
    expected = [(order.index(name), score) for name, score, _ in
                process.extract("".join(query), order, scorer=fuzz.ratio, score_cutoff=threshold - 1e-9, limit=20)]
    with _fuzzy_tuning(*tuning):
        assert index.fuzzy_names("query_poi", "".join(query), threshold) == expected


def test_fuzzy_names_of_queries_no_count_can_bound():
    """An empty query, an empty name and a query over 1,000 characters: every name of those lengths is scored."""
    names = ["", "a", "ab" * 300, "ab" * 520, "b" * 1_001, "ba" * 510]
    index, order = _name_index(names), list(dict.fromkeys(names))
    for query, threshold in (("", 1.0), ("", 100.0), ("ab" * 501, 60.0), ("ab" * 501, 95.0), ("a", 50.0)):
        expected = [(order.index(n), s) for n, s, _ in
                    process.extract(query, order, scorer=fuzz.ratio, score_cutoff=threshold - 1e-9, limit=20)]
        assert index.fuzzy_names("query_poi", query, threshold) == expected, (query[:5], threshold)
    assert index.fuzzy_names("query_poi", "ab" * 501, 95.0)  # the long ones are found, not only cut


def test_grid_reach_by_hand():
    # Beijing, 300 m: one 0.01° row (39.9143..39.9197 after a 0.0027° half-height), longitude ±0.0035°
    assert grid_reach(116.397, 39.917, 300.0) == (12991, 12991, [(29639, 29640)])
    # 50 km at the equator: ±0.4497° is 45 rows and cells on each side of the query's
    row_lo, row_hi, cells = grid_reach(0.0, 0.0, 50_000.0)
    assert (row_lo, row_hi) == (8955, 9044) and cells == [(17955, 18044)]
    # across ±180° (rows of 9.9973..10.0027): both ends of each row, 180° itself (cell 36000) included
    assert grid_reach(179.9995, 10.0, 300.0) == (9999, 10000, [(0, 0), (35999, 36000)])
    assert grid_reach(-179.9995, 10.0, 300.0) == (9999, 10000, [(0, 0), (35999, 36000)])
    # a pole within reach: whole rows up to the pole's (18000); over a quarter of the globe: everything
    assert grid_reach(12.0, 89.999, 300.0) == (17999, 18000, None)
    assert grid_reach(-100.0, -89.99999, 2.0) == (0, 0, None)  # 1.1 m from the south pole
    # 56 m from it, 2 m reach ±asin(sin(2 m / R) / cos 89.9995°) = ±2.0616° of longitude: cells grow near a pole
    assert grid_reach(-100.0, -89.9995, 2.0) == (0, 0, [(7793, 8206)])
    assert grid_reach(0.0, 0.0, 1e7) == (6, 17993, None)  # ±89.93°: its rim grazes both poles
    assert grid_reach(0.0, 0.0, 1.1e7) == (0, 18000, None)


_CENTRES = [(179.9995, 10.0), (-179.9999, -33.0), (180.0, 0.0), (-180.0, 0.0), (12.0, 89.999), (-75.0, -89.9995),
            (100.0, 89.5), (0.0, 0.0), (116.397128, 39.916527), (-20.0, 65.0)]


def _near(centre: tuple[float, float], dx: float, dy: float) -> tuple[float, float]:
    lat = max(-90.0, min(90.0, centre[1] + dy))
    lng = centre[0] + dx
    lng = lng - 360.0 if lng > 180.0 else lng + 360.0 if lng < -180.0 else lng  # 180.0 and -180.0 both occur
    return float(f"{lng:.6f}"), float(f"{lat:.6f}")


@settings(deadline=None, derandomize=True, max_examples=60)
@given(centre=st.sampled_from(_CENTRES), spread=st.sampled_from([0.0005, 0.01, 0.3, 2.0]),
       offsets=st.lists(st.tuples(st.floats(-1, 1), st.floats(-1, 1)), min_size=1, max_size=80),
       probe=st.tuples(st.floats(-1, 1), st.floats(-1, 1)),
       bound=st.one_of(st.sampled_from([1.0, 300.0, 5_000.0, 50_000.0]), st.floats(1.0, 50_000.0)))
@example(centre=(180.0, 0.0), spread=0.01, offsets=[(0.0, 0.0), (-0.5, 0.2)], probe=(-0.1, 0.0), bound=300.0)
@example(centre=(180.0, 0.0), spread=0.01, offsets=[(0.0, 0.0), (-0.5, 0.2)], probe=(0.1, 0.0), bound=300.0)
@example(centre=(-180.0, 0.0), spread=0.01, offsets=[(0.0, 0.0), (0.5, 0.2)], probe=(0.1, 0.0), bound=300.0)
@example(centre=(-180.0, 0.0), spread=0.01, offsets=[(0.0, 0.0), (0.5, 0.2)], probe=(-0.1, 0.0), bound=300.0)
def test_near_sites_equal_brute_force_haversine(centre, spread, offsets, probe, bound):
    points = [_near(centre, dx * spread, dy * spread) for dx, dy in offsets]
    rows = [{"episode_id": "e", "tool": "reverse_geocoding", "arguments": "{}", "key": f"{lng:.6f},{lat:.6f}",
             "name": "", "city": "", "options": "", "points": f"{lng:.6f},{lat:.6f}", "lng": lng, "lat": lat,
             "response": "{}", "source_column": "", "gold_index": 0, "truncated": False, "valid": True}
            for lng, lat in points]
    index = ReplayIndex.from_table(pa.Table.from_pylist(rows, schema=SANDBOX_SCHEMA))
    first_row: dict[str, tuple[int, tuple[float, float]]] = {}
    for row, point in enumerate(points):  # one site per distinct points text (as built: -0.000000 is not 0.000000)
        first_row.setdefault(f"{point[0]:.6f},{point[1]:.6f}", (row, point))
    query = _near(centre, probe[0] * spread, probe[1] * spread)
    got = index.near_sites("reverse_geocoding", query[0], query[1], bound)
    distance = {row: haversine_m(query, point) for row, point in first_row.values()}
    assert got == sorted(set(got)) and set(got) <= set(distance)
    assert {row for row, d in distance.items() if d <= bound} <= set(got)  # nothing within the bound is lost
    assert all(distance[row] <= bound * (1 + 1e-9) + 1e-3 + 1e-6 for row in got)  # nothing beyond the margin
    assert index.near_sites("driving_route", query[0], query[1], bound) == []  # another tool's slice
    saved = replay_index._SCAN_SITES
    replay_index._SCAN_SITES = -10**9  # a small index is scanned by whole rows: search its cells too
    try:
        assert index.near_sites("reverse_geocoding", query[0], query[1], bound) == got
    finally:
        replay_index._SCAN_SITES = saved


def test_global_lookups_import_no_scikit_learn(synth_dir):
    """The nearest search reads the grid arrays: no scikit-learn, in the package or at run time."""
    package = Path(__file__).resolve().parent.parent / "mobility_env"
    assert not [p.name for p in package.rglob("*.py") if re.search(r"^\s*(from|import)\s+sklearn", p.read_text(
        encoding="utf-8"), re.M)]
    script = ("import json, sys\nfrom mobility_env import Sandbox\nbox = Sandbox.open(sys.argv[1])\n"
              "far = box.lookup('driving_route', {'origin': '0.000000,0.000000', 'destination': '0.040000,0.0'})\n"
              "row = next(i for i in range(len(box)) if box.index.value('tool', i) == 'reverse_geocoding')\n"
              "args = json.loads(box.index.value('arguments', row))\n"
              "args['latitude'] = str(float(args['latitude']) + 0.0005)\n"
              "near = box.lookup('reverse_geocoding', args)\n"
              "print(json.dumps([far.match, near.match, near.scope, 'sklearn' in sys.modules]))\n")
    done = subprocess.run([sys.executable, "-c", script, str(synth_dir)], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout.strip().splitlines()[-1]) == ["miss", "nearest", "global", False]
