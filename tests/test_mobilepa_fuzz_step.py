"""``MobilePA-v0``'s ``step`` under hostile actions: never raises, refuses each one, changes nothing.

The values that broke MobilityBench's ``step`` (lone surrogates, integers past Python's digit limit,
nesting ~1,000 deep, megabyte strings, NaN/inf, non-JSON Python values), put into calls of the task's own
tools, of tools outside its action space and of made-up ones, as dicts and as JSON text. Each must come back
as a refused call (a typed error the feedback names), with a finite reward and an info that ``results.jsonl``
can hold; afterwards the task's oracle must still pass: a refused call changes no state.
"""

from __future__ import annotations

import json
import math

import gymnasium as gym
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mobility_env  # noqa: F401  (registers the envs)
from mobility_env.actions import MAX_ACTION_CHARS
from mobility_env.mobilepa.catalogue import PHONE_TOOLS
from mobility_env.trajectory import ErrorKind
from test_fuzz_step import huge_ints, nested_dict, nested_list, non_finite, non_json, surrogates

FUZZ = settings(deadline=None, derandomize=True, max_examples=150,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                       HealthCheck.data_too_large])
ERROR_TYPES = {kind.value for kind in ErrorKind}
huge_strings = st.sampled_from([100_000, 1_000_000]).map(lambda n: "京" * n)
deep_values = st.integers(min_value=17, max_value=1_200).flatmap(
    lambda depth: st.sampled_from([nested_list(depth), nested_dict(depth)]))
refused_values = st.one_of(surrogates, huge_strings, huge_ints, non_finite, deep_values, non_json)
tools = st.sampled_from(sorted(PHONE_TOOLS) + ["finish", "query_poi", "no_such_tool"])


@st.composite
def hostile_actions(draw):
    """A bad action by construction: a refused value, broken JSON, a wrong shape or type, an unknown tool."""
    tool = draw(tools)
    params = [p.name for p in PHONE_TOOLS[tool].params] if tool in PHONE_TOOLS else ["answer", "query"]
    name = draw(st.sampled_from(params or ["x"]))
    kind = draw(st.sampled_from(["value", "openai_value", "surrogate_text", "huge_int_text", "deep_text", "nan_text",
                                 "huge_text", "bad_json", "not_object", "made_up_tool", "extra_argument",
                                 "non_dict_arguments", "surrogate_name"]))
    if kind == "value":
        return {"name": tool, "arguments": {name: draw(refused_values)}}
    if kind == "openai_value":
        function = {"name": tool, "arguments": {name: draw(refused_values)}}
        return {"id": "call_1", "type": "function", "function": function}
    if kind == "surrogate_text":
        return json.dumps({"name": tool, "arguments": {name: draw(surrogates)}})
    if kind == "huge_int_text":
        return '{"name": "%s", "arguments": {"%s": %s}}' % (tool, name, "9" * draw(st.sampled_from([400, 4_301])))
    if kind == "deep_text":
        depth = draw(st.sampled_from([990, 5_000]))
        return '{"name": "%s", "arguments": {"%s": %s}}' % (tool, name, "[" * depth + "]" * depth)
    if kind == "nan_text":
        return '{"name": "%s", "arguments": {"%s": %s}}' % (tool, name, draw(st.sampled_from(["NaN", "-Infinity"])))
    if kind == "huge_text":
        return json.dumps({"name": tool, "arguments": {name: "x" * MAX_ACTION_CHARS}})
    if kind == "bad_json":
        return draw(st.sampled_from(["{not json", '{"name": "search_memory", "arguments": {', "", "nul"]))
    if kind == "not_object":
        return draw(st.sampled_from(["[1, 2]", "42", "null", [1, 2], 3.5, None]))
    if kind == "made_up_tool":
        return {"name": draw(st.text(min_size=1, max_size=20).filter(
            lambda s: s.strip() and s.strip() not in PHONE_TOOLS and s.strip() != "finish")), "arguments": {}}
    if kind == "extra_argument":
        return {"name": tool, "arguments": {"not_an_argument": 1, **({name: "x"} if tool != "finish" else {})}}
    if kind == "non_dict_arguments":
        return {"name": tool, "arguments": draw(st.sampled_from([[1], 5, True, "[1]"]))}
    return {"name": tool + "\ud800", "arguments": {}}


@pytest.fixture(scope="module")
def env():
    made = gym.make("MobilePA-v0", max_steps=40, max_episode_steps=40)  # room for the hostile actions and the oracle
    yield made
    made.close()


def refused(result) -> None:
    obs, reward, terminated, truncated, info = result
    assert isinstance(obs, str) and obs
    obs.encode("utf-8")  # no lone surrogate reaches the observation
    assert isinstance(reward, float) and math.isfinite(reward)
    assert terminated is False and truncated is False
    json.dumps(info, ensure_ascii=False, allow_nan=False).encode("utf-8")  # writable as results.jsonl
    feedback = info["feedback"]
    assert feedback["status"] != "success" and feedback["error_type"] in ERROR_TYPES, feedback


@FUZZ
@given(actions=st.lists(hostile_actions(), min_size=1, max_size=4), seed=st.integers(0, 10_000))
def test_hostile_actions_are_refused_and_the_oracle_still_passes(env, actions, seed):
    env.reset(seed=seed)
    task = env.unwrapped.session.task
    for action in actions:
        refused(env.step(action))
    info: dict = {}
    for call in task.oracle_calls:
        _, _, terminated, truncated, info = env.step({"name": call.name, "arguments": dict(call.arguments)})
        assert not (terminated or truncated), info
    _, _, terminated, _, info = env.step({"name": "finish", "arguments": {"answer": task.oracle_answer}})
    assert terminated, info
    failed = [c for c in info["verdict"]["checks"] if not c["passed"]]
    assert info["metrics"]["success"] == 1.0, failed
