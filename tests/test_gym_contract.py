"""The Gymnasium contract every suite's env keeps, each test run on every id of :data:`SUITE_ENV_IDS`:
check_env, the registered step limit and scoring on ``TimeLimit`` truncation, a clear error for an
unsupported render mode, vector envs (sync, async forked and spawned) with their defaults, seeding, the
spec round trip, and the action space (its samples are members and name a tool the current episode
offers). Then the spaces themselves (:mod:`mobility_env.spaces`) and MobilityBench-v0's map-tool space.
Both envs use their bundled data here."""

from __future__ import annotations

import inspect
import json
import warnings
from typing import Any

import gymnasium as gym
import pytest
from gymnasium.envs.registration import EnvSpec, load_env_creator
from gymnasium.utils.env_checker import check_env, data_equivalence

import mobility_env
from mobility_env.actions import ActionLimits, parse_action
from mobility_env.mobilitybench.env import MAX_OBSERVATION_CHARS, MobilityEnv
from mobility_env.errors import ConfigError
from mobility_env.spaces import SharedTexts, ToolCallSpace, UnicodeText
from mobility_env.suites import env_ids
from mobility_env.mobilitybench.tool_samples import map_tool_space
from mobility_env.tools import MAP_TOOLS, TOOLS, validate_call
from mobility_env.trajectory import as_record

#: Every suite's registered env: each contract test runs on each (a suite registry can replace this list).
SUITE_ENV_IDS = list(env_ids())  # every registered suite (mobility_env.suites)

TERMINAL_KEYS = {"metrics", "verdict", "trajectory"}

suite_env = pytest.mark.parametrize("env_id", SUITE_ENV_IDS)


def offered(tools: list[dict[str, Any]]) -> set[str]:
    """The tool names of an OpenAI function-calling list (``info["tools"]``)."""
    return {tool["function"]["name"] for tool in tools}


def not_finishing(env: gym.Env) -> dict[str, Any]:
    """A sampled call of an offered tool other than ``finish``."""
    space = env.unwrapped.action_space
    return space.sample(mask=[name for name in space.tool_names if name != "finish"])


def registered_limit(env_id: str) -> int:
    limit = gym.spec(env_id).max_episode_steps
    assert isinstance(limit, int)
    return limit


def play_to_truncation(env: gym.Env, steps: int, rewards: list[float] | None = None):
    env.reset(seed=0)
    env.unwrapped.action_space.seed(0)
    for step in range(1, steps + 1):
        obs, reward, terminated, truncated, info = env.step(not_finishing(env))
        if rewards is not None:
            rewards.append(reward)
        if step < steps:
            assert not terminated and not truncated and "metrics" not in info, step
    return obs, reward, terminated, truncated, info


# --------------------------------------------------------------------------- check_env
@suite_env
def test_check_env_through_gym_make(env_id):
    env = gym.make(env_id)
    try:
        check_env(env.unwrapped)  # with the spec gym.make set: the render modes are checked too
    finally:
        env.close()


@suite_env
def test_unsupported_render_mode_is_a_config_error(env_id):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # gymnasium.make warns before the env refuses
        with pytest.raises(ConfigError, match=r"render_mode must be None or one of 'ansi', got 'human'"):
            gym.make(env_id, render_mode="human")
    with pytest.raises(ConfigError, match="'ansi'"):
        load_env_creator(gym.spec(env_id).entry_point)(render_mode="rgb_array")
    env = gym.make(env_id, render_mode="ansi")
    env.reset(seed=0)
    assert isinstance(env.render(), str)


# --------------------------------------------------------------------------- step limit
@suite_env
def test_registered_step_limit_is_the_envs(env_id):
    limit = registered_limit(env_id)
    env = gym.make(env_id)
    default = inspect.signature(type(env.unwrapped)).parameters["max_steps"].default
    assert limit == default == env.unwrapped.max_steps == env.spec.max_episode_steps
    assert limit == {"MobilityBench-v0": mobility_env.DEFAULT_MAX_STEPS, "MobilePA-v0": 12}.get(env_id, limit)
    _, info = env.reset(seed=0)
    assert info["max_steps"] == limit
    assert gym.make(env.spec).spec.max_episode_steps == limit  # the recorded spec re-creates the env


@suite_env
@pytest.mark.parametrize("make_kwargs", [{}, {"max_episode_steps": 3}, {"max_steps": 4}])
def test_truncation_carries_metrics_and_verdict(env_id, make_kwargs):
    env = gym.make(env_id, **make_kwargs)
    steps = next(iter(make_kwargs.values()), registered_limit(env_id))
    assert env.unwrapped.max_steps == steps
    _, reward, terminated, truncated, info = play_to_truncation(env, steps)
    assert truncated and not terminated
    assert TERMINAL_KEYS <= set(info) and info["metrics"]["DR"] == 0.0 and as_record(info["trajectory"])["truncated"]
    assert info["verdict"]["delivered"] is False and info["verdict"]["passed"] is False
    assert reward == pytest.approx(sum(info["reward_components"].values()))


@suite_env
def test_time_limit_truncation_is_scored_by_the_wrapper_as_the_env_scores_its_own(env_id):
    """A TimeLimit that truncates before the env (its limit raised afterwards) is still scored: the same
    rewards, reward terms, metrics, verdict and info keys as the env's own truncation at that step."""
    limit = registered_limit(env_id)
    own_rewards: list[float] = []
    *_, own = play_to_truncation(gym.make(env_id), limit, own_rewards)
    env = gym.make(env_id)
    env.unwrapped.max_steps = 50
    rewards: list[float] = []
    _, reward, terminated, truncated, info = play_to_truncation(env, limit, rewards)
    assert truncated and not terminated and TERMINAL_KEYS <= set(info)
    record = as_record(info["trajectory"])
    assert record["truncated"] is True and len(record["calls"]) == limit
    assert set(info) == set(own) and info["reward_components"] == own["reward_components"]
    assert info["metrics"] == own["metrics"] and info["verdict"] == own["verdict"]
    assert rewards == pytest.approx(own_rewards)
    *_, after = env.step(not_finishing(env))
    assert after["error"]["type"] == "episode_over"


@suite_env
def test_max_steps_above_the_time_limit_warns_and_is_capped(env_id):
    limit = registered_limit(env_id)
    more = limit + 10
    with pytest.warns(UserWarning, match=f"max_episode_steps={more}"):
        env = gym.make(env_id, max_steps=more)
    assert env.unwrapped.max_steps == limit
    env = gym.make(env_id, max_steps=more, max_episode_steps=more)
    assert env.unwrapped.max_steps == env.spec.max_episode_steps == more


# --------------------------------------------------------------------------- vector envs
def run_vector(vec, steps: int = 4):
    vec.action_space.seed(7)
    obs, _ = vec.reset(seed=[0, 1])
    trace = [obs]
    for _ in range(steps):
        actions = vec.action_space.sample()
        obs, rewards, terminated, truncated, infos = vec.step(actions)
        trace.append((obs, rewards.tolist(), terminated.tolist(), truncated.tolist()))
    return trace


@suite_env
def test_vector_envs_with_defaults_sync_and_async(env_id):
    """make_vec(async) and AsyncVectorEnv() use shared memory by default; texts arrive intact. The spawned
    workers start from a fresh interpreter and build their envs (and load their data) from the pickled spec,
    as on a platform without fork."""
    spec = gym.spec(env_id)
    sync = gym.make_vec(env_id, num_envs=2, vectorization_mode="sync")
    forked = gym.make_vec(env_id, num_envs=2, vectorization_mode="async")
    spawned = gym.vector.AsyncVectorEnv([lambda: gym.make(spec) for _ in range(2)], context="spawn")
    try:
        assert forked.shared_memory and spawned.shared_memory
        expected = run_vector(sync)
        first = expected[0]
        assert isinstance(first, tuple) and all(isinstance(o, str) and json.loads(o)["query"] for o in first)
        assert run_vector(forked) == expected
        assert run_vector(spawned) == expected
    finally:
        for vec in (sync, forked, spawned):
            vec.close()


# --------------------------------------------------------------------------- seeding and the spec
@suite_env
def test_same_seed_same_first_observation(env_id):
    one, two = gym.make(env_id), gym.make(env_id)
    firsts = []
    for seed in (0, 1, 2, 3):
        obs, info = one.reset(seed=seed)
        again, again_info = two.reset(seed=seed)
        assert obs == again and data_equivalence(info, again_info, exact=True)
        firsts.append(obs)
    assert len(set(firsts)) > 1  # the seed picks the episode
    one.action_space.seed(5)
    two.action_space.seed(5)
    assert [one.action_space.sample() for _ in range(20)] == [two.action_space.sample() for _ in range(20)]


@suite_env
def test_spec_round_trip(env_id):
    spec = gym.spec(env_id)
    assert EnvSpec.from_json(spec.to_json()) == spec
    text = spec.pprint(disable_print=True, print_all=True)
    assert env_id in text and f"max_episode_steps={spec.max_episode_steps}" in text and "ScoreOnTimeLimit" in text
    env = gym.make(spec)
    made = env.spec
    assert made.id == env_id and made.max_episode_steps == spec.max_episode_steps
    assert [w.name for w in made.additional_wrappers] == ["ScoreOnTimeLimit"]
    again = gym.make(EnvSpec.from_json(made.to_json()))
    assert again.spec == made and str(again) == str(env)
    assert env.reset(seed=3)[0] == again.reset(seed=3)[0]


# --------------------------------------------------------------------------- the action space
@suite_env
def test_sampled_actions_are_members_and_name_an_offered_tool(env_id):
    env = gym.make(env_id)
    _, info = env.reset(seed=0)
    env.action_space.seed(0)
    tools, names, episodes = offered(info["tools"]), set(), 1
    for _ in range(200):
        action = env.action_space.sample()
        assert env.action_space.contains(action) and env.action_space.contains(json.dumps(action, ensure_ascii=False))
        assert action["name"] in tools, (action["name"], sorted(tools))
        assert set(env.action_space.tool_names) == tools
        names.add(action["name"])
        _, _, terminated, truncated, info = env.step(action)
        if "tools" in info:  # the offered tools changed (a MobilePA skill loaded)
            tools = offered(info["tools"])
        if terminated or truncated:
            _, info = env.reset()
            tools, episodes = offered(info["tools"]), episodes + 1
    assert len(names) > 3 and episodes > 3


# --------------------------------------------------------------------------- the spaces
def test_old_import_paths_still_work():
    import mobility_env.actions as actions
    import mobility_env.mobilitybench.env as env_module
    from mobility_env import spaces, wrappers

    assert actions.ToolCallSpace is spaces.ToolCallSpace
    assert env_module.UnicodeText is spaces.UnicodeText and env_module.SharedTexts is spaces.SharedTexts
    assert env_module.ScoreOnTimeLimit is wrappers.ScoreOnTimeLimit
    assert env_module.MAX_OBSERVATION_CHARS == spaces.MAX_OBSERVATION_CHARS
    with pytest.raises(AttributeError):
        getattr(actions, "NoSuchThing")


def test_tool_call_space_samples_the_tools_it_is_given():
    volume_parameters = {"type": "object", "required": ["level"], "properties": {
        "level": {"type": "integer", "minimum": 0, "maximum": 10}, "mute": {"type": "boolean"},
        "mode": {"type": "string", "enum": ["ring", "media"]}, "tags": {"type": "array", "items": {"type": "string"}}}}
    finish_parameters = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
    tools = [{"type": "function", "function": {"name": "set_volume", "parameters": volume_parameters}},
             {"name": "finish", "parameters": finish_parameters}]  # the bare shape is read too
    space = ToolCallSpace(tools, seed=1)
    samples = [space.sample() for _ in range(200)]
    assert {s["name"] for s in samples} == {"set_volume", "finish"} and all(space.contains(s) for s in samples)
    volume = [s["arguments"] for s in samples if s["name"] == "set_volume"]
    assert all(0 <= a["level"] <= 10 and a.get("mode", "ring") in ("ring", "media") for a in volume)
    assert all(isinstance(a.get("mute", True), bool) and isinstance(a.get("tags", []), list) for a in volume)
    assert any("mute" in a for a in volume) and any("mute" not in a for a in volume)
    assert all(s["arguments"]["answer"] for s in samples if s["name"] == "finish")
    tools[0]["function"]["name"] = "changed"  # the space keeps its own copy
    assert space.tool_names == ("set_volume", "finish")
    space.offer(tools[1:])  # a new task's tools; the random state goes on
    assert space.tool_names == ("finish",) and space.sample()["name"] == "finish"
    with pytest.raises(ValueError, match="mask must name tools among finish"):
        space.sample(mask="set_volume")
    with pytest.raises(ValueError, match="at least one tool"):
        ToolCallSpace([])
    with pytest.raises(ValueError, match="'name'"):
        ToolCallSpace([{"parameters": {}}])
    assert ToolCallSpace(tools[1:]) == space != ToolCallSpace(tools[1:], ActionLimits(max_depth=4))
    assert ToolCallSpace(tools[:1]) != space and hash(ToolCallSpace(tools[:1])) == hash(space)


def test_shared_text_memory_round_trip():
    from gymnasium.vector.utils import create_shared_memory, read_from_shared_memory, write_to_shared_memory

    space = UnicodeText(8)
    memory = create_shared_memory(space, n=3)
    view = read_from_shared_memory(space, memory, n=3)
    texts = ["北京南站", "a\ud800b", "😀x" * 4]
    for index, text in enumerate(texts):
        write_to_shared_memory(space, index, text, memory)
    assert isinstance(view, SharedTexts) and list(view) == texts and view[1:] == tuple(texts[1:])
    write_to_shared_memory(space, 0, "晴", memory)  # the view is live; a deep copy is a snapshot
    import copy

    snapshot = copy.deepcopy(view)
    assert view[0] == "晴" and snapshot == ("晴", *texts[1:]) and type(snapshot) is tuple
    with pytest.raises(ValueError, match="does not fit"):
        write_to_shared_memory(space, 2, "x" * 9, memory)
    assert MobilityEnv().observation_space.max_length == MAX_OBSERVATION_CHARS


# --------------------------------------------------------------------------- MobilityBench-v0's action space
def test_action_space_contains_every_documented_form():
    from openai.types.chat import ChatCompletionMessageToolCall

    space = MobilityEnv().action_space
    call = {"name": "query_poi", "arguments": {"keywords": "天安门", "city": "北京市"}}
    openai_dict = {"id": "call_1", "type": "function",
                   "function": {"name": "query_poi", "arguments": json.dumps(call["arguments"], ensure_ascii=False)}}
    members = [call, json.dumps(call, ensure_ascii=False), openai_dict, json.dumps(openai_dict),
               ChatCompletionMessageToolCall.model_validate(openai_dict),
               {"name": "finish", "arguments": {"answer": "晴"}},
               {"name": "query_poi", "arguments": '{"keywords": "x"}'},
               {"name": "teleport", "arguments": {}},  # unknown tool: a legal action that costs a penalty
               "{not json", ""]  # any text within the cap is a legal action
    assert all(space.contains(m) for m in members)
    outsiders = ["x" * 20_001, {"arguments": {}}, {"name": "query_poi", "arguments": {"keywords": "\ud800"}},
                 {"name": "finish", "arguments": {"answer": "x", "n": float("nan")}},
                 {"name": "x", "arguments": {1, 2}},
                 5, None, b"{}", [call]]
    assert not any(space.contains(o) for o in outsiders)


def test_map_tool_samples_are_well_formed_and_seeded():
    space = map_tool_space(seed=123)
    assert space.tool_names == tuple(TOOLS) and space == MobilityEnv().action_space
    samples = [space.sample() for _ in range(300)]
    assert {s["name"] for s in samples} == set(TOOLS)
    for sample in samples:
        assert space.contains(sample) and space.contains(json.dumps(sample, ensure_ascii=False))
        assert validate_call(sample["name"], sample["arguments"]) == []
        parsed = parse_action(json.dumps(sample, ensure_ascii=False))
        assert parsed.name == sample["name"] and parsed.arguments == sample["arguments"]
    again = map_tool_space(seed=123)
    assert [again.sample() for _ in range(300)] == samples
    assert {space.sample(mask="bus_route")["name"] for _ in range(20)} == {"bus_route"}
    assert {space.sample(mask=MAP_TOOLS)["name"] for _ in range(200)} == set(MAP_TOOLS)
    with pytest.raises(ValueError, match="mask"):
        space.sample(mask="teleport")
    assert map_tool_space() == map_tool_space() != map_tool_space(ActionLimits(max_depth=4))


def test_sampled_actions_pass_the_schema_in_the_env():
    env = gym.make("MobilityBench-v0")
    env.action_space.seed(0)
    env.reset(seed=0)
    errors = []
    for _ in range(200):
        obs, reward, terminated, truncated, info = env.step(env.action_space.sample(mask=MAP_TOOLS))
        errors.append(info.get("error", {}).get("type"))
        if terminated or truncated:
            env.reset()
    assert set(errors) <= {None, "no_cached_result"}, set(errors)
