"""One parser for the agent's compact view and the scorer's evidence (mobility_env.responses).

Generated route, POI, geocoding, weather and traffic responses — well-formed, with numeric text,
missing fields, wrong types and nested envelopes — must never make either reader raise, and both
must read the same paths, transits, distances, durations and lines out of them.
"""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from mobility_env.mobilitybench.observation import format_response
from mobility_env.responses import number, route_view, unwrap
from mobility_env.mobilitybench.evidence import (geocode_facts, nearby_pois, places, route_options, taxi_cost,
                                                 traffic_facts, weather_facts)

junk = st.one_of(st.none(), st.booleans(), st.integers(-5, 10**6), st.floats(allow_nan=True, allow_infinity=True),
                 st.text(max_size=6), st.lists(st.integers(), max_size=2),
                 st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))
numberish = st.one_of(st.integers(0, 100_000).map(str), st.integers(0, 100_000),
                      st.floats(0, 1e5, allow_nan=False).map(lambda x: f"{x:.1f}"), junk)


def _maybe(value: st.SearchStrategy) -> st.SearchStrategy:
    return st.one_of(value, junk)


step = st.fixed_dictionaries({"road_name": _maybe(st.sampled_from(["长安街", "二环路", ""])), "step_distance": numberish},
                             optional={"distance": numberish,
                                       "cost": _maybe(st.fixed_dictionaries({"duration": numberish}))})
steps = st.lists(_maybe(step), max_size=4)
paths = st.lists(_maybe(st.fixed_dictionaries(
    {"distance": numberish}, optional={"duration": numberish, "steps": _maybe(steps), "cost": _maybe(
        st.fixed_dictionaries({}, optional={"duration": numberish, "tolls": numberish, "traffic_lights": numberish,
                                            "toll_distance": numberish}))})), max_size=3)
line = st.fixed_dictionaries({"name": _maybe(st.sampled_from(["地铁1号线", "K2路", ""]))},
                             optional={"type": junk, "via_num": numberish, "distance": numberish,
                                       "duration": numberish, "departure_stop": _maybe(st.fixed_dictionaries(
                                           {"name": st.text(max_size=3)})), "time": numberish})
segments = st.lists(_maybe(st.fixed_dictionaries({}, optional={
    "bus": _maybe(st.fixed_dictionaries({"buslines": _maybe(st.lists(_maybe(line), max_size=2))})),
    "railway": _maybe(line), "walking": _maybe(st.fixed_dictionaries({"distance": numberish,
                                                                      "duration": numberish}))})), max_size=3)
transits = st.lists(_maybe(st.fixed_dictionaries({"distance": numberish, "duration": numberish}, optional={
    "cost": numberish, "walking_distance": numberish, "segments": _maybe(segments)})), max_size=3)
routes = st.fixed_dictionaries({"route": st.fixed_dictionaries({}, optional={
    "paths": _maybe(paths), "transits": _maybe(transits), "taxi_cost": numberish, "origin": junk})},
    optional={"count": numberish})


def _enveloped(body: st.SearchStrategy) -> st.SearchStrategy:
    return st.one_of(body, body.map(lambda b: {"status": "SUCCESS", "data": b, "error": None}),
                     body.map(lambda b: {"status": "SUCCESS", "data": {"data": b}}),
                     body.map(lambda b: {"status": "FAIL", "data": b, "error": "quota"}))


@settings(deadline=None, derandomize=True, max_examples=300)
@given(response=_enveloped(routes), tool=st.sampled_from(["driving_route", "walking_route", "bus_route"]))
def test_compact_route_and_evidence_read_the_same_route(response, tool):
    compact = json.loads(format_response(tool, response, "compact"))
    options = route_options(response)
    taxi_cost(response)
    if isinstance(response, dict) and response.get("error"):
        assert compact == {"error": "quota"}
        return
    view = route_view(unwrap(response))
    assert view is not None and options is not None
    if view.transits is not None:  # the evidence reads transits first, the compact view lists them all
        assert [t["index"] for t in compact["transits"]] == [o.index for o in options]
        for shown, option in zip(compact["transits"], options):
            assert number(shown["distance_m"]) == option.distance_m
            assert number(shown["duration_s"]) == option.duration_s
            shown_lines = [leg["line"] for leg in shown["lines"] if isinstance(leg["line"], str) and leg["line"]]
            assert set(shown_lines) <= set(option.lines)  # the planned ride of each segment is among its lines
    else:
        assert [p["index"] for p in compact.get("paths", [])] == [o.index for o in options]
        for shown, option in zip(compact.get("paths", []), options):
            assert number(shown["distance_m"]) == option.distance_m
            assert number(shown["duration_s"]) == option.duration_s


others = st.one_of(
    st.fixed_dictionaries({"pois": _maybe(st.lists(_maybe(st.fixed_dictionaries(
        {"name": _maybe(st.text(max_size=4)), "location": _maybe(st.just("116.4,39.9"))})), max_size=3))}),
    st.fixed_dictionaries({"regeocode": _maybe(st.fixed_dictionaries({}, optional={
        "formatted_address": junk, "addressComponent": junk, "roads": _maybe(st.lists(junk, max_size=2)),
        "pois": _maybe(st.lists(junk, max_size=2))}))}),
    st.fixed_dictionaries({"weather_description": junk}),
    st.fixed_dictionaries({"trafficinfo": _maybe(st.fixed_dictionaries({}, optional={
        "description": junk, "evaluation": _maybe(st.fixed_dictionaries({"status": junk, "description": junk}))}))}),
    st.fixed_dictionaries({"name": junk, "address": junk, "location": junk}), junk)


@settings(deadline=None, derandomize=True, max_examples=300)
@given(response=_enveloped(others))
def test_no_reader_raises_on_malformed_responses(response):
    for tool in ("query_poi", "search_around_poi", "reverse_geocoding", "weather_query", "traffic_status",
                 "bicycling_route"):
        json.loads(format_response(tool, response, "compact"))
    for reader in (places, nearby_pois, geocode_facts, weather_facts, traffic_facts, route_options):
        reader(response)


# ------------------------------------------------------------------ per-response views (rewards.evidence)
READERS = (places, nearby_pois, geocode_facts, weather_facts, traffic_facts, route_options)


def _uncached(reader, response):
    return reader.__wrapped__(response)


@settings(deadline=None, derandomize=True, max_examples=200)
@given(response=st.one_of(_enveloped(routes), _enveloped(others)))
def test_a_kept_view_is_the_view_read_afresh(response):
    """The scorer reads each served response's facts once (per_response): what it hands out again is what
    reading the response afresh gives, and a list it handed out may be changed without changing the next one."""
    for reader in READERS:
        first = reader(response)
        if isinstance(first, list):
            first.append("junk")
        assert reader(response) == _uncached(reader, response)


def test_views_are_kept_per_object_and_bounded():
    from mobility_env.mobilitybench import evidence

    response = {"route": {"paths": [{"distance": "1200", "cost": {"duration": "300"}, "steps": []}]}}
    assert route_options(response)[0].distance_m == 1200.0
    twin = json.loads(json.dumps(response))
    twin["route"]["paths"][0]["distance"] = "900"  # another object: its own view, never the first one's
    assert route_options(twin)[0].distance_m == 900.0
    assert route_options(response)[0].distance_m == 1200.0
    for n in range(evidence.VIEW_CACHE + 50):  # more responses than are kept: the oldest go, nothing grows
        route_options({"route": {"paths": [{"distance": str(n)}]}})
    assert route_options.cache_len() == evidence.VIEW_CACHE
    assert route_options("第1种：全程1.2公里，预计耗时5分钟") == _uncached(route_options, "第1种：全程1.2公里，预计耗时5分钟")
