"""``env.step`` never raises and keeps nothing unbounded: hostile actions become typed errors.

The generators build what was measured breaking ``step`` before the action caps (lone surrogates, 400-digit
coordinates and radii, JSON integers over Python's 4,300-digit conversion limit, arguments
nested ~990 deep) and the rest of the usual suspects (megabyte strings, NaN/inf, non-JSON
Python values, unknown tools, extra keys, wrong types), each paired with the error types it
may produce. After every bad action the episode's own gold call must still replay.
"""

from __future__ import annotations

import json
import math

import gymnasium as gym
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mobility_env  # noqa: F401  (registers MobilityBench-v0)
from mobility_env.actions import (ERROR_TYPES, MAX_ACTION_CHARS, MAX_NUMBER_DIGITS, MAX_STRING_CHARS, ActionLimits,
                                  bounded_copy, parse_action)
from mobility_env.canonical import _canonical_point_text
from mobility_env.mobilitybench.env import MobilityEnv
from mobility_env.errors import ConfigError
from mobility_env.tools import TOOLS, _parse_coordinate_text, bounded_text_cache
from mobility_env.trajectory import as_record

FUZZ = settings(deadline=None, derandomize=True, max_examples=300,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                       HealthCheck.data_too_large])
ENVELOPE = {"invalid_json", "invalid_action"}


@pytest.fixture(scope="module")
def direct_env():
    return MobilityEnv()


@pytest.fixture(scope="module")
def made_env():
    env = gym.make("MobilityBench-v0")
    yield env
    env.close()


# --------------------------------------------------------------------------- generators
def nested_list(depth: int) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


def nested_dict(depth: int) -> dict:
    value: dict = {}
    for _ in range(depth):
        value = {"a": value}
    return value


surrogates = st.sampled_from(["\ud800", "北京\udfff", "\udc00\udc00", "a\ud83d"])
huge_strings = st.sampled_from([MAX_STRING_CHARS + 1, 100_000, 1_000_000]).map(lambda n: "京" * n)
huge_ints = st.integers(min_value=MAX_NUMBER_DIGITS, max_value=6_000).map(lambda digits: 10 ** digits)
non_finite = st.sampled_from([math.nan, math.inf, -math.inf])
deep_values = st.integers(min_value=17, max_value=1_200).flatmap(
    lambda depth: st.sampled_from([nested_list(depth), nested_dict(depth)]))
non_json = st.sampled_from([{1, 2}, b"bytes", object(), {1: "int key"}, frozenset({"a"}), 1j])
map_tools = st.sampled_from([name for name in TOOLS if name != "finish"])
any_tool = st.sampled_from(list(TOOLS) + ["traffic_status_road_api"])
arg_names = st.sampled_from(sorted({p.name for spec in TOOLS.values() for p in spec.params}))


def refused_values():
    """A value that breaks one cap wherever it sits in an action."""
    return st.one_of(surrogates, huge_strings, huge_ints, non_finite, deep_values, non_json)


@st.composite
def bad_actions(draw):
    """(action, error types it may produce): each one is a bad action by construction."""
    kind = draw(st.sampled_from([
        "value_in_dict", "value_in_openai_dict", "surrogate_text", "huge_int_text", "deep_text", "nan_text",
        "huge_action_text", "huge_action_dict", "bad_json", "not_object", "unknown_tool", "extra_argument",
        "wrong_type", "non_dict_arguments", "missing_name", "surrogate_name", "finish_surrogate", "envelope_value"]))
    tool = draw(any_tool)
    if kind == "value_in_dict":
        return {"name": tool, "arguments": {draw(arg_names): draw(refused_values())}}, {"invalid_action"}
    if kind == "value_in_openai_dict":
        return ({"id": "call_1", "type": "function",
                 "function": {"name": tool, "arguments": {draw(arg_names): draw(refused_values())}}},
                {"invalid_action"})
    if kind == "surrogate_text":  # json.dumps escapes a lone surrogate as \ud800: valid JSON grammar, invalid Unicode
        arguments = {draw(arg_names): draw(surrogates)}
        if draw(st.booleans()):
            return json.dumps({"name": tool, "arguments": arguments}), {"invalid_action"}
        return (json.dumps({"type": "function", "function": {"name": tool, "arguments": json.dumps(arguments)}}),
                {"invalid_action"})
    if kind == "huge_int_text":
        digits = draw(st.sampled_from([41, 400, 4_301, 9_000]))
        return '{"name": "%s", "arguments": {"%s": %s}}' % (tool, draw(arg_names), "9" * digits), {"invalid_action"}
    if kind == "deep_text":
        depth = draw(st.sampled_from([17, 990, 5_000]))
        return '{"name": "%s", "arguments": {"slots": %s}}' % (tool, "[" * depth + "]" * depth), {"invalid_action"}
    if kind == "nan_text":
        constant = draw(st.sampled_from(["NaN", "Infinity", "-Infinity", "1e400"]))
        return '{"name": "%s", "arguments": {"%s": %s}}' % (tool, draw(arg_names), constant), {"invalid_action"}
    if kind == "huge_action_text":
        return json.dumps({"name": tool, "arguments": {"keywords": "x" * MAX_ACTION_CHARS}}), {"invalid_json"}
    if kind == "huge_action_dict":  # many short strings: each within its cap, the whole over max_action_chars
        return {"name": tool, "arguments": {"keywords": ["x" * 100] * 1_000}}, {"invalid_action"}
    if kind == "bad_json":
        return draw(st.sampled_from(["{not json", '{"name": "query_poi", "arguments": {', "", "nul"])), {"invalid_json"}
    if kind == "not_object":
        return draw(st.sampled_from(["[1, 2]", "42", '"query_poi"', "null", [1, 2], 3.5, None])), {"invalid_action"}
    if kind == "unknown_tool":
        name = draw(st.text(min_size=1, max_size=30).filter(  # hypothesis text has no lone surrogates
            lambda s: s.strip() and s.strip() not in TOOLS and s.strip() != "traffic_status_road_api"))
        return {"name": name, "arguments": {}}, {"unknown_tool"}
    if kind == "extra_argument":
        return {"name": draw(map_tools), "arguments": {"keywords": "银行", "not_an_argument": 1}}, {"schema_error"}
    if kind == "wrong_type":
        return ({"name": draw(map_tools),
                 "arguments": {draw(arg_names): draw(st.sampled_from([[], {}, True, -1, 1e300]))}},
                {"schema_error"})
    if kind == "non_dict_arguments":
        return {"name": draw(map_tools), "arguments": draw(st.sampled_from([[1], 5, True, "[1]"]))}, {"schema_error"}
    if kind == "missing_name":
        return {"arguments": {}, draw(st.sampled_from(["tool", "function_name", "nam"])): tool}, {"invalid_action"}
    if kind == "surrogate_name":
        return {"name": "query_poi\ud800", "arguments": {}}, {"invalid_action"}
    if kind == "finish_surrogate":
        return {"name": "finish", "arguments": {"answer": "全程12公里\ud800"}}, {"invalid_action"}
    return {"name": "query_poi", "arguments": {"keywords": "银行"}, "id": draw(refused_values())}, {"invalid_action"}


# --------------------------------------------------------------------------- checks
def assert_step_contract(result, expected: set[str] | None = None) -> dict:
    assert isinstance(result, tuple) and len(result) == 5
    obs, reward, terminated, truncated, info = result
    assert isinstance(obs, str) and obs
    obs.encode("utf-8")  # no lone surrogate reaches the observation
    assert isinstance(reward, float) and math.isfinite(reward)
    assert isinstance(terminated, bool) and isinstance(truncated, bool)
    # writable as results.jsonl, as the runner writes it (the terminal record made data with as_record)
    record = {**info, "trajectory": as_record(info["trajectory"])} if "trajectory" in info else info
    json.dumps(record, ensure_ascii=False, allow_nan=False).encode("utf-8")
    if expected is not None:
        assert "error" in info, f"a bad action was accepted: {info.get('call')}"
        assert info["error"]["type"] in expected, info["error"]
        assert json.loads(obs)["error"]["type"] == info["error"]["type"]
        assert not terminated
    if "error" in info:
        assert info["error"]["type"] in ERROR_TYPES
    return info


def gold_action(env) -> dict:
    call = env.unwrapped.episode.gold_calls[0]
    return {"name": call.name, "arguments": dict(call.arguments)}


def play(env, actions, seed: int) -> None:
    env.reset(seed=seed)
    for action, expected in actions:
        assert_step_contract(env.step(action), expected)
    info = assert_step_contract(env.step(gold_action(env)))
    assert "error" not in info and info["match"] in {"exact", "fuzzy", "nearest"}


@FUZZ
@given(st.lists(bad_actions(), min_size=1, max_size=4), st.integers(0, 10_000))
def test_bad_actions_are_typed_errors_direct(direct_env, actions, seed):
    play(direct_env, actions, seed)


@settings(FUZZ, max_examples=100)
@given(st.lists(bad_actions(), min_size=1, max_size=4), st.integers(0, 10_000))
def test_bad_actions_are_typed_errors_through_gym_make(made_env, actions, seed):
    play(made_env, actions, seed)


# the four causes measured before the caps, one by one (each raised before the caps)
@pytest.mark.parametrize("action", [
    {"name": "query_poi", "arguments": {"keywords": "\ud800", "city": "北京市"}},
    {"name": "weather_query", "arguments": {"city": "淮安\udfff"}},
    '{"name": "traffic_status", "arguments": {"name": "\\ud800", "city": "北京市"}}',
    {"name": "reverse_geocoding", "arguments": {"longitude": 10 ** 400, "latitude": 39.9}},
    {"name": "search_around_poi", "arguments": {"location": "116.4,39.9", "radius": 10 ** 400}},
    '{"name": "search_around_poi", "arguments": {"location": "116.4,39.9", "radius": %s}}' % ("9" * 4_301),
    {"name": "finish", "arguments": {"answer": "晴", "slots": nested_list(990)}},
    {"name": "finish", "arguments": {"answer": "\ud800 全程12公里"}},
])
def test_measured_causes_are_invalid_actions(direct_env, action):
    direct_env.reset(seed=1)
    info = assert_step_contract(direct_env.step(action), {"invalid_action"})
    assert "max_" in info["error"]["message"] or "surrogate" in info["error"]["message"]
    info = assert_step_contract(direct_env.step({"name": "finish", "arguments": {"answer": "全程12公里"}}))
    assert set(info["metrics"]) >= {"DR", "FPR"}


def test_error_messages_name_the_place_and_the_cap(direct_env):
    direct_env.reset(seed=2)
    *_, info = direct_env.step({"name": "finish", "arguments": {"answer": "x", "slots": {"origin": ["a", "\ud800"]}}})
    assert info["error"]["message"].startswith("arguments.slots.origin[1]: lone surrogate U+D800")
    *_, info = direct_env.step({"name": "query_poi", "arguments": {"keywords": "x" * (MAX_STRING_CHARS + 1)}})
    assert info["error"]["message"].startswith(f"arguments.keywords: a string of {MAX_STRING_CHARS + 1:,} characters")


def test_caps_are_constructor_arguments():
    env = MobilityEnv(max_action_chars=200, max_depth=3, max_string_chars=12, max_number_digits=3)
    env.reset(seed=0)
    cases = [({"name": "query_poi", "arguments": {"keywords": "一二三四五六七八九十一二三"}}, "invalid_action"),
             ({"name": "query_poi", "arguments": {"keywords": "银行", "radius": 1234}}, "invalid_action"),
             ({"name": "finish", "arguments": {"answer": "x", "slots": {"origin": ["a"]}}}, "invalid_action"),
             (json.dumps({"name": "query_poi", "arguments": {"keywords": "银行" * 6, "extra": 1}}, ensure_ascii=False),
              "schema_error"),
             ("x" * 201, "invalid_json")]
    for action, expected in cases:
        info = assert_step_contract(env.step(action))
        assert info["error"]["type"] == expected, (action, info["error"])
    # the defaults admit the same actions
    default = MobilityEnv()
    default.reset(seed=0)
    assert "error" not in default.step({"name": "finish", "arguments": {"answer": "x", "slots": {"origin": ["a"]}}})[4]
    for bad in ({"max_depth": 1}, {"max_depth": 10_000}, {"max_string_chars": 0}, {"max_number_digits": True},
                {"max_action_chars": "20000"}):
        with pytest.raises(ConfigError, match=next(iter(bad))):
            MobilityEnv(**bad)


def test_recorded_arguments_are_a_copy(direct_env):
    direct_env.reset(seed=3)
    action = gold_action(direct_env)
    original = json.loads(json.dumps(action["arguments"]))
    *_, step_info = direct_env.step(action)
    assert "error" not in step_info
    for key in list(action["arguments"]):  # the caller reuses its dict ...
        action["arguments"][key] = "changed"
    action["arguments"]["extra"] = ["x"]
    step_info["call"]["arguments"].clear()  # ... and edits the info it got
    finish = {"name": "finish", "arguments": {"answer": "全程12公里", "slots": {"origin": "A"}}}
    *_, final = direct_env.step(finish)
    finish["arguments"]["slots"]["origin"] = "B"
    trajectory = direct_env.state.trajectory
    assert trajectory.calls[0].arguments == original
    assert as_record(final["trajectory"])["calls"][0]["arguments"] == original
    assert trajectory.finish.slots == {"origin": "A"}


def test_object_actions_are_checked_like_text():
    """The same call as a dict and as JSON text parses to equal arguments; tuples and numpy scalars are JSON."""
    import numpy as np

    call = {"name": "driving_route", "arguments": {"origin": "116.4,39.9", "destination": "116.5,39.8",
                                                   "waypoints": ("116.45,39.85",), "strategy": [np.str_("躲避拥堵")]}}
    parsed = parse_action(call)
    assert parsed.error is None
    assert parsed.arguments == parse_action(json.dumps(call)).arguments
    assert type(parsed.arguments["strategy"][0]) is str and type(parsed.arguments["waypoints"]) is list
    radius = parse_action({"name": "search_around_poi",
                           "arguments": {"location": "116.4,39.9", "radius": np.int64(500)}})
    assert radius.arguments["radius"] == 500 and type(radius.arguments["radius"]) is int
    cyclic: dict = {"name": "finish", "arguments": {"answer": "x"}}
    cyclic["arguments"]["slots"] = cyclic
    assert parse_action(cyclic).error["type"] == "invalid_action"
    with pytest.raises(ValueError, match="max_depth"):
        bounded_copy(nested_dict(20))


# --------------------------------------------------------------------------- memory stays bounded
def cache_entries(function) -> int:
    return sum(part.cache_info().currsize for part in function.cache_parts)


def test_huge_strings_leave_caches_and_records_bounded():
    """Distinct long texts (1.7 GB was kept after 800 x 1 MB coordinates before the caps) are never cached or kept."""
    from mobility_rewards.mobilitybench.slots import _cached_fold, _cached_point

    env = MobilityEnv(max_steps=1_000)  # no truncation, so no scoring, inside the loop
    env.reset(seed=4)
    before = {f: cache_entries(f) for f in (_parse_coordinate_text, _canonical_point_text)}
    for i in range(60):
        # valid and long: served by nearest
        long_coordinate = "116." + "1" * (MAX_STRING_CHARS // 2 - 100) + f"{i},39.9"
        info = assert_step_contract(env.step({"name": "walking_route",
                                              "arguments": {"origin": long_coordinate,
                                                            "destination": long_coordinate}}))
        assert info.get("error", {}).get("type") != "invalid_action"
    growth = {f.__name__: cache_entries(f) - n for f, n in before.items()}
    assert all(g <= 2 for g in growth.values()), growth  # one canonical short text at most, never the 60 long ones

    # scoring folds and parses the agent's slots: long slot values are not kept either
    episode_id = env.episode_ids[0]
    finish = {"name": "finish", "arguments": {"answer": "全程12公里", "slots": {"origin": "当前位置", "destination": "北京南站"}}}
    env.reset(options={"episode_id": episode_id})
    env.step(finish)
    before = {f: cache_entries(f) for f in (_cached_fold, _cached_point)}
    for i in range(30):
        env.reset(options={"episode_id": episode_id})
        long_place = f"{i}" + "北京南站" * 2_400  # 9,600 characters: over every tier of the fold cache
        *_, info = env.step({"name": "finish",
                             "arguments": {"answer": "全程12公里",
                                           "slots": {"origin": long_place, "destination": long_place}}})
        assert "metrics" in info
    assert {f.__name__: cache_entries(f) for f in before} == {f.__name__: n for f, n in before.items()}

    # the records of an episode hold no argument longer than the caps
    env.reset(seed=5)
    env.step({"name": "query_poi", "arguments": {"keywords": "京" * 5_000_000}})
    env.step("京" * 5_000_000)
    env.step({"name": "京" * (MAX_STRING_CHARS - 1), "arguments": {}})
    dumped = json.dumps(env.state.trajectory.model_dump(), ensure_ascii=False)
    assert len(dumped) < 2_000, len(dumped)
    assert [c.error["type"] for c in env.state.trajectory.calls] == ["invalid_action", "invalid_json", "unknown_tool"]


def test_bounded_text_cache_keeps_only_short_and_a_few_long_texts():
    calls = []

    @bounded_text_cache(4, 8, long_maxsize=2, long_max_chars=32)
    def fold(text: str) -> str:
        calls.append(text)
        return text.lower()

    for text in ["A", "B", "A", "x" * 20, "x" * 20, "y" * 20, "z" * 20, "w" * 40, "w" * 40]:
        assert fold(text) == text.lower()
    short, long_ = fold.cache_parts
    assert short.cache_info().currsize == 2 and long_.cache_info().currsize == 2
    assert calls == ["A", "B", "x" * 20, "y" * 20, "z" * 20, "w" * 40, "w" * 40]  # the 40-char text is never kept
    fold.cache_clear()
    assert cache_entries(fold) == 0


def test_action_limits_reject_nonsense():
    with pytest.raises(ConfigError):
        ActionLimits(max_number_digits=0)
    assert ActionLimits() == ActionLimits(max_action_chars=MAX_ACTION_CHARS)
