"""Tests of the synthetic world generator (mobility_env.synth)."""

from __future__ import annotations

import csv
import re
from collections import Counter
from pathlib import Path

import pytest

from mobility_env.mobilitybench.episode import FAMILY_OF, SCENARIOS
from mobility_env.mobilitybench.official import EXTRA_CALLS_COLUMN, OFFICIAL_COLUMNS, episode_from_row
from mobility_env.synth import World, generate_rows, resolve_mix, synthesize
from mobility_env.synth.generate import PAPER_FAMILY_MIX, scenario_for
from mobility_env.synth.geo import duration_text, format_location
from mobility_env.synth.routes import driving_response, path_highway_m

REPO = Path(__file__).resolve().parents[1]
from conftest import NO_SAMPLE, SAMPLE_CSV as REAL_SAMPLE  # noqa: E402  (MOBILITY_ENV_SAMPLE_DIR, default ../shared)
ROUTE_TOOLS = {"driving_route", "walking_route", "bicycling_route", "bus_route"}


@pytest.fixture(scope="module")
def rows():
    return list(generate_rows(330, seed=11, mix="uniform"))


@pytest.fixture(scope="module")
def episodes(rows):
    return [episode_from_row(row, source="synth", row_number=i, id_prefix="syn") for i, row in enumerate(rows)]


def _by_scenario(episodes, scenario):
    found = [e for e in episodes if e.task_scenario == scenario]
    assert found, f"no {scenario} episode generated"
    return found


def _line_short(name: str) -> str:
    return re.search(r"(\d+号线|\d+路)", name).group(1)


# -- determinism ------------------------------------------------------------------------------

def test_same_seed_same_rows_and_different_seed_differs():
    first, again, other = (list(generate_rows(25, seed=s)) for s in (4, 4, 5))
    assert first == again
    assert [r["query"] for r in first] != [r["query"] for r in other]


def test_episode_depends_only_on_seed_and_index():
    short, longer = list(generate_rows(10, seed=2)), list(generate_rows(30, seed=2))
    assert longer[:10] == short


def test_worker_processes_give_the_same_rows():
    assert list(generate_rows(24, seed=3, workers=2, chunk=8)) == list(generate_rows(24, seed=3))


def test_synthesize_writes_identical_bytes(tmp_path):
    a = synthesize(44, 9, tmp_path / "a", progress=False)
    b = synthesize(44, 9, tmp_path / "b", progress=False)
    for name in ("episodes.parquet", "sandbox.parquet", "manifest.json"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    c = synthesize(44, 10, tmp_path / "c", progress=False)
    assert (a / "sandbox.parquet").read_bytes() != (c / "sandbox.parquet").read_bytes()


# -- schema and mix -----------------------------------------------------------------------------

def test_rows_have_the_official_columns_plus_extra(rows):
    for row in rows:
        assert list(row) == [*OFFICIAL_COLUMNS, EXTRA_CALLS_COLUMN]


@pytest.mark.skipif(not REAL_SAMPLE.exists(), reason=NO_SAMPLE)
def test_official_columns_match_the_real_sample():
    with REAL_SAMPLE.open(encoding="utf-8") as f:
        header = next(csv.reader(f))
    assert tuple(header) == OFFICIAL_COLUMNS


def test_rows_load_without_repairs_and_every_gold_call_is_recorded(episodes):
    for episode in episodes:
        assert episode.repairs == [], (episode.query, episode.repairs)
        for index, call in enumerate(episode.gold_calls):
            recorded = episode.gold_response(index)
            assert recorded is not None and recorded.name == call.name and recorded.arguments == call.arguments
        assert 1 <= sum(c.gold_index is None for c in episode.recorded) <= 5


def test_every_scenario_present_with_the_default_mix():
    assert Counter(r["task_scenario"] for r in generate_rows(60, seed=0)).keys() == set(SCENARIOS)


def test_default_mix_follows_the_paper_family_distribution():
    weights = resolve_mix(None)
    counts = Counter(FAMILY_OF[scenario_for(i, 123, weights)] for i in range(2000))
    total = sum(PAPER_FAMILY_MIX.values())
    for family, weight in PAPER_FAMILY_MIX.items():
        assert abs(counts[family] / 2000 - weight / total) < 0.01, (family, counts[family])
    by_scenario = Counter(scenario_for(i, 123, weights) for i in range(2000))
    assert abs(by_scenario["POI Query"] - 2000 * 0.366 / 4 * 100 / total) <= 10


def test_mix_by_scenario_and_family_and_bad_names():
    mix = resolve_mix({"Weather Query": 1.0, "Basic Route Planning": 3.0})
    assert mix == pytest.approx({"Weather Query": 0.25, "Point-to-Point Planning": 0.25,
                                 "Multi-stop Planning": 0.25, "Traffic Info Query": 0.25})
    with pytest.raises(Exception, match="unknown scenario or family"):
        resolve_mix({"Teleport Query": 1.0})


def test_queries_contain_the_gold_keywords(episodes):
    for episode in episodes:
        for call in episode.gold_calls:
            if call.name == "query_poi":
                assert call.arguments["keywords"] in episode.query, (episode.query, call.arguments)


# -- alternatives -------------------------------------------------------------------------------

def test_alternatives_return_different_evidence_than_gold(episodes):
    for episode in episodes:
        gold = {c.name: c.response for c in episode.recorded if c.gold_index is not None}
        for alt in (c for c in episode.recorded if c.gold_index is None):
            if alt.name in gold:
                assert alt.response != gold[alt.name], (episode.query, alt.name, alt.arguments)


def test_no_highway_avoids_highways_and_differs_from_highway_first():
    world = World(0)
    city = world.city("北京市")
    origin, destination = format_location(city.center), format_location(city.counties[0].location)
    no_highway = driving_response(world, city, origin, destination, ["不走高速"])
    highway = driving_response(world, city, origin, destination, ["高速优先"])
    default = driving_response(world, city, origin, destination, [])
    less_toll = driving_response(world, city, origin, destination, ["少收费"])
    assert all(path_highway_m(p) == 0 for p in no_highway["route"]["paths"])
    assert all(path_highway_m(p) > 10_000 for p in highway["route"]["paths"])
    fast, slow = highway["route"]["paths"][0], no_highway["route"]["paths"][0]
    assert int(slow["cost"]["duration"]) > int(fast["cost"]["duration"])
    assert int(slow["distance"]) > int(fast["distance"])
    assert (int(less_toll["route"]["paths"][0]["cost"]["tolls"])
            == 0 < int(default["route"]["paths"][0]["cost"]["tolls"]))


def test_option_constrained_alternatives_are_other_strategies(episodes):
    for episode in _by_scenario(episodes, "Option-Constrained Route Planning"):
        gold = episode.gold_response(1)
        assert gold.arguments["strategy"] == episode.fields["strategy_list"]
        if "不走高速" in gold.arguments["strategy"]:
            assert all(path_highway_m(p) == 0 for p in gold.response["route"]["paths"])
        strategies = [tuple(c.arguments.get("strategy") or ()) for c in episode.recorded
                      if c.gold_index is None and c.name == "driving_route"
                      and c.arguments["destination"] == gold.arguments["destination"]]
        assert () in strategies and len(strategies) >= 2


def test_other_modes_are_recorded_with_their_own_evidence(episodes):
    for episode in _by_scenario(episodes, "Point-to-Point Planning"):
        gold = next(c for c in episode.recorded if c.gold_index is not None and c.name in ROUTE_TOOLS)
        others = [c for c in episode.recorded if c.gold_index is None and c.name in ROUTE_TOOLS - {gold.name}
                  and c.arguments["destination"] == gold.arguments["destination"]]
        assert others, episode.query
        assert all(o.response != gold.response for o in others)


def test_waypoint_route_is_longer_than_the_direct_alternative(episodes):
    for episode in _by_scenario(episodes, "Multi-stop Planning"):
        gold = episode.gold_response(len(episode.gold_calls) - 1)
        direct = next(c for c in episode.recorded if c.gold_index is None and c.name == "driving_route"
                      and c.arguments["destination"] == gold.arguments["destination"]
                      and not c.arguments.get("waypoints"))
        assert (int(gold.response["route"]["paths"][0]["distance"])
                > int(direct.response["route"]["paths"][0]["distance"]))
        via = next(c for c in episode.recorded if c.source_column == "std_transit")
        assert via.arguments["keywords"] == episode.fields["query_transit_poi"]
        assert via.response["location"] == gold.arguments["waypoints"][0]


# -- gold evidence consistency ----------------------------------------------------------------------

def test_matched_transit_avoids_the_excluded_lines(episodes):
    for episode in _by_scenario(episodes, "Route-Constrained Planning"):
        excluded = episode.gold_slots["excluded_lines"]
        response = episode.gold_response(len(episode.gold_calls) - 1).response
        transits = response["data"]["route"]["transits"]
        lines = [[b["name"] for s in t["segments"] for b in s["bus"]["buslines"]] for t in transits]
        assert lines == episode.fields["bus_lines_list"]
        matched = int(episode.fields["matched_transit_index"])
        assert not {_line_short(n) for n in lines[matched]} & set(excluded)
        assert {_line_short(n) for n in lines[0]} & set(excluded)
        assert all({_line_short(n) for n in lines[i]} & set(excluded) for i in range(matched))


def test_duration_field_equals_the_gold_route_duration(episodes):
    assert (duration_text(2236), duration_text(4140), duration_text(61020)) == ("37分钟", "1小时9分钟", "16小时57分钟")
    for episode in _by_scenario(episodes, "Arrival/Departure Time Query"):
        path = episode.gold_response(len(episode.gold_calls) - 1).response["route"]["paths"][0]
        assert episode.fields["duration"] == duration_text(int(path["cost"]["duration"]))


def test_info_fields_equal_the_recorded_responses(episodes):
    for episode in _by_scenario(episodes, "Weather Query"):
        assert episode.fields["weather_description"] == episode.gold_response(0).response["data"]["weather_description"]
    for episode in _by_scenario(episodes, "Geolocation Query"):
        assert (episode.fields["formatted_address"]
                == episode.gold_response(0).response["regeocode"]["formatted_address"])
    for episode in _by_scenario(episodes, "POI Query"):
        assert episode.fields["ans_loc"] == episode.gold_response(0).response["data"]["location"]
    for episode in _by_scenario(episodes, "Nearby Query"):
        assert episode.fields["centre_loc"] == episode.gold_response(0).response["data"]["location"]
        assert episode.gold_calls[1].arguments["location"] == episode.fields["centre_loc"]
        assert episode.gold_response(1).response["data"]["pois"]
    for episode in _by_scenario(episodes, "Traffic Info Query"):
        state = episode.gold_response(1).response["trafficinfo"]["evaluation"]["description"]
        assert state in ("畅通", "缓行", "拥堵")


def test_bundled_default_dataset_loads_with_every_scenario():
    default = REPO / "datasets" / "default"
    if not (default / "episodes.parquet").exists():
        pytest.skip("bundled dataset not generated yet")
    from mobility_env.mobilitybench.loaders import load_episodes

    loaded = load_episodes(default)
    assert {e.task_scenario for e in loaded} == set(SCENARIOS)
    assert len(loaded) == 220
