"""The tool table: official names, the OpenAI list derived from it, and argument validation."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mobility_env.tools import (BUS_STRATEGIES, MAP_TOOLS, TOOLS, ArgumentError, canonical_tool_name, openai_tools,
                                parse_coordinate, validate_call)

OFFICIAL_ARGUMENTS = {
    "query_poi": (["keywords"], ["city"]),
    "search_around_poi": (["location"], ["keywords", "radius"]),
    "reverse_geocoding": (["longitude", "latitude"], ["radius"]),
    "weather_query": (["city"], ["need_forecast"]),
    "traffic_status": (["name", "city"], []),
    "driving_route": (["origin", "destination"], ["strategy", "waypoints"]),
    "walking_route": (["origin", "destination"], []),
    "bicycling_route": (["origin", "destination"], []),
    "bus_route": (["origin", "destination"], ["strategy"]),
    "finish": (["answer"], ["intent", "slots", "plan", "route_index"]),
}
A, B = "116.397128,39.916527", "116.481499,39.990755"


def rules(name, arguments):
    return [(e.field, e.rule) for e in validate_call(name, arguments)]


# ----------------------------------------------------------------------------- OpenAI list
def test_openai_tools_are_the_ten_official_tools():
    tools = openai_tools()
    assert [t["function"]["name"] for t in tools] == list(OFFICIAL_ARGUMENTS)
    for tool in tools:
        assert tool["type"] == "function"
        function = tool["function"]
        required, optional = OFFICIAL_ARGUMENTS[function["name"]]
        params = function["parameters"]
        assert params["type"] == "object"
        assert params["additionalProperties"] is False
        assert params["required"] == required
        assert list(params["properties"]) == required + optional
        assert all(p["description"] and p["type"] in {"string", "integer", "boolean", "array", "object"}
                   for p in params["properties"].values())
        assert function["description"]
    assert [t["function"]["name"] for t in openai_tools(include_finish=False)] == list(MAP_TOOLS)
    assert len(MAP_TOOLS) == 9
    bus = next(t for t in tools if t["function"]["name"] == "bus_route")
    assert bus["function"]["parameters"]["properties"]["strategy"]["enum"] == list(BUS_STRATEGIES)


def test_tool_aliases():
    assert canonical_tool_name("traffic_status_road_api") == "traffic_status"
    assert canonical_tool_name(" query_poi ") == "query_poi"
    assert canonical_tool_name("teleport") is None and canonical_tool_name(3) is None
    assert validate_call("traffic_status_road_api", {"name": "机场路", "city": "北京市"}) == []


def test_every_recorded_call_of_the_sample_is_valid(sample_episodes):
    calls = [(e.episode_id, c.name, c.arguments) for e in sample_episodes for c in e.gold_calls]
    assert len(calls) == 158
    assert [(i, n, validate_call(n, a)) for i, n, a in calls if validate_call(n, a)] == []


# ----------------------------------------------------------------------------- each rule
@pytest.mark.parametrize("name, arguments, expected", [
    ("query_poi", {}, [("keywords", "required")]),
    ("query_poi", {"keywords": None}, [("keywords", "required")]),
    ("traffic_status", {"name": "机场路"}, [("city", "required")]),
    ("driving_route", {"origin": A}, [("destination", "required")]),
    ("query_poi", {"keywords": "天安门", "region": "北京"}, [("region", "unknown_field")]),
    ("walking_route", {"origin": A, "destination": B, "strategy": ["少收费"]}, [("strategy", "unknown_field")]),
    ("query_poi", {"keywords": "  "}, [("keywords", "type")]),
    ("query_poi", {"keywords": 42}, [("keywords", "type")]),
    ("query_poi", {"keywords": "x" * 201}, [("keywords", "max_length")]),
    ("walking_route", {"origin": "116.39;39.91", "destination": B}, [("origin", "coordinate")]),
    ("walking_route", {"origin": A, "destination": "39.91"}, [("destination", "coordinate")]),
    ("walking_route", {"origin": "190.1,39.9", "destination": B}, [("origin", "coordinate")]),
    ("walking_route", {"origin": "116.1,-95.0", "destination": B}, [("origin", "coordinate")]),
    ("walking_route", {"origin": [116.1, 39.9], "destination": B}, [("origin", "coordinate")]),
    ("search_around_poi", {"location": "天安门"}, [("location", "coordinate")]),
    ("reverse_geocoding", {"longitude": "181", "latitude": "39.9"}, [("longitude", "range")]),
    ("reverse_geocoding", {"longitude": "116.4", "latitude": "-90.5"}, [("latitude", "range")]),
    ("reverse_geocoding", {"longitude": "east", "latitude": "39.9"}, [("longitude", "range")]),
    ("reverse_geocoding", {"longitude": "nan", "latitude": "39.9"}, [("longitude", "range")]),
    ("search_around_poi", {"location": A, "radius": 0}, [("radius", "range")]),
    ("search_around_poi", {"location": A, "radius": 50_001}, [("radius", "range")]),
    ("search_around_poi", {"location": A, "radius": 12.5}, [("radius", "range")]),
    ("search_around_poi", {"location": A, "radius": True}, [("radius", "range")]),
    ("reverse_geocoding", {"longitude": "116.4", "latitude": "39.9", "radius": -3}, [("radius", "range")]),
    ("driving_route", {"origin": A, "destination": B, "strategy": ["躲避拥堵", "高速优先", "少收费"]},
     [("strategy", "max_items")]),
    ("driving_route", {"origin": A, "destination": B, "strategy": ["飞得最快"]}, [("strategy", "enum")]),
    ("driving_route", {"origin": A, "destination": B, "strategy": "cheapest"}, [("strategy", "enum")]),
    ("driving_route", {"origin": A, "destination": B, "strategy": [3]}, [("strategy", "enum")]),
    ("driving_route", {"origin": A, "destination": B, "strategy": {"a": 1}}, [("strategy", "type")]),
    ("driving_route", {"origin": A, "destination": B, "waypoints": [A] * 6}, [("waypoints", "max_items")]),
    ("driving_route", {"origin": A, "destination": B, "waypoints": [A, "nowhere"]}, [("waypoints", "coordinate")]),
    ("driving_route", {"origin": A, "destination": B, "waypoints": A}, [("waypoints", "type")]),
    ("bus_route", {"origin": A, "destination": B, "strategy": "6"}, [("strategy", "enum")]),
    ("bus_route", {"origin": A, "destination": B, "strategy": "最快"}, [("strategy", "enum")]),
    ("bus_route", {"origin": A, "destination": B, "strategy": True}, [("strategy", "enum")]),
    ("weather_query", {"city": "北京", "need_forecast": "maybe"}, [("need_forecast", "type")]),
    ("finish", {"answer": "ok", "route_index": "0"}, [("route_index", "type")]),
    ("finish", {"answer": "ok", "slots": ["a"]}, [("slots", "type")]),
    ("finish", {"answer": "ok", "plan": "step"}, [("plan", "type")]),
    ("query_poi", {"city": "北京", "limit": 5}, [("keywords", "required"), ("limit", "unknown_field")]),
])
def test_each_rule_names_the_field_and_rule(name, arguments, expected):
    errors = validate_call(name, arguments)
    assert [(e.field, e.rule) for e in errors] == expected
    for error in errors:
        assert isinstance(error, ArgumentError) and error.message
        assert str(error).startswith(f"{error.field}: ")


def test_messages_quote_the_bad_value():
    [error] = validate_call("driving_route", {"origin": A, "destination": B, "strategy": ["飞得最快"]})
    assert "飞得最快" in error.message and "不走高速" in error.message  # the allowed set is listed
    [error] = validate_call("search_around_poi", {"location": A, "radius": 60000})
    assert "60000" in error.message and "50000" in error.message
    [error] = validate_call("bus_route", {"origin": A, "destination": "x,y"})
    assert "'x,y'" in error.message


@pytest.mark.parametrize("name, arguments", [
    ("query_poi", {"keywords": "天安门", "city": "北京市"}),
    ("search_around_poi", {"location": A, "keywords": "银行", "radius": 1}),
    ("search_around_poi", {"location": A, "radius": 50_000}),
    ("search_around_poi", {"location": A, "radius": "3000"}),
    ("reverse_geocoding", {"longitude": "-180", "latitude": "90"}),
    ("reverse_geocoding", {"longitude": 116.4, "latitude": 39.9}),
    ("weather_query", {"city": "淮安市", "need_forecast": True}),
    ("weather_query", {"city": "淮安市", "need_forecast": "false"}),
    ("driving_route", {"origin": " 116.39 , 39.91 ", "destination": B, "strategy": ["躲避拥堵", "fastest"],
                       "waypoints": [A] * 5}),
    ("driving_route", {"origin": A, "destination": B, "strategy": "不走高速", "waypoints": []}),
    ("bus_route", {"origin": A, "destination": B, "strategy": "5"}),
    ("bus_route", {"origin": A, "destination": B, "strategy": 8}),
    ("bicycling_route", {"origin": "-180,-90", "destination": "180,90"}),
    ("finish", {"answer": "ok", "slots": {}, "plan": [], "route_index": None}),
])
def test_valid_calls_pass(name, arguments):
    assert validate_call(name, arguments) == []


def test_non_object_arguments():
    assert rules("query_poi", ["天安门"]) == [("", "type")]
    assert rules("query_poi", "天安门") == [("", "type")]
    assert rules("query_poi", None) == [("", "type")]


def test_parse_coordinate():
    assert parse_coordinate(" 116.5 ,39.25") == (116.5, 39.25)
    assert parse_coordinate("-180,-90") == (-180.0, -90.0)
    for bad in ("116.5", "116.5,", "180.1,0", "0,90.01", "1e2,3", "116,39,1", 116.5, None, "116.5，39.2"):
        assert parse_coordinate(bad) is None, bad


# ----------------------------------------------------------------------------- properties
_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=10), children, max_size=5),
    max_leaves=12,
)
_official_keys = sorted({p for spec in TOOLS.values() for p in spec.param_map} | {"extra"})


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(sorted(TOOLS) + ["traffic_status_road_api"]),
       _json | st.dictionaries(st.sampled_from(_official_keys), _json, max_size=6))
def test_validate_call_never_raises_and_reports_fields(name, arguments):
    errors = validate_call(name, arguments)
    assert isinstance(errors, list) and all(isinstance(e, ArgumentError) for e in errors)
    spec = TOOLS[canonical_tool_name(name)]
    if not isinstance(arguments, dict):
        assert [(e.field, e.rule) for e in errors] == [("", "type")]
        return
    fields = {e.field for e in errors}
    assert all(f in spec.param_map or f in {str(k)[:40] for k in arguments} for f in fields)
    for key in arguments:
        if key not in spec.param_map:
            assert (str(key)[:40], "unknown_field") in [(e.field, e.rule) for e in errors]
    for required in spec.required:
        if arguments.get(required) is None:
            assert (required, "required") in [(e.field, e.rule) for e in errors]


@settings(max_examples=100, deadline=None)
@given(st.floats(-180, 180), st.floats(-90, 90), st.integers(0, 8))
def test_in_range_coordinates_are_valid_and_out_of_range_are_not(lng, lat, decimals):
    text = f"{lng:.{decimals}f},{lat:.{decimals}f}"
    assert validate_call("walking_route", {"origin": text, "destination": text}) == []
    outside = f"{lng + (181 if lng >= 0 else -181):.{decimals}f},{lat:.{decimals}f}"
    assert rules("walking_route", {"origin": outside, "destination": text}) == [("origin", "coordinate")]
