"""The Gymnasium contract of ``MobilityBench-v0``: check_env, vector envs with their defaults,
the action space, the registered step limit and scoring on ``TimeLimit`` truncation."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

import mobility_env
from mobility_env.actions import ActionLimits, ToolCallSpace, parse_action
from mobility_env.env import MAX_OBSERVATION_CHARS, MobilityEnv, SharedTexts, UnicodeText
from mobility_env.tools import MAP_TOOLS, TOOLS, validate_call

TERMINAL_KEYS = {"metrics", "verdict", "trajectory"}
NOT_FINISH = {"name": "query_poi", "arguments": {"keywords": "不存在的地方xyz", "city": "北京市"}}


def test_check_env_through_gym_make():
    env = gym.make("MobilityBench-v0")
    try:
        check_env(env.unwrapped)  # with the spec gym.make set: the render modes are checked too
    finally:
        env.close()


# --------------------------------------------------------------------------- step limit
def test_registered_step_limit_is_the_envs():
    spec = gym.spec("MobilityBench-v0")
    assert spec.max_episode_steps == mobility_env.DEFAULT_MAX_STEPS == MobilityEnv().max_steps == 10
    env = gym.make("MobilityBench-v0")
    assert env.spec.max_episode_steps == env.unwrapped.max_steps == 10
    _, info = env.reset(seed=0)
    assert info["max_steps"] == 10
    assert gym.make(env.spec).spec.max_episode_steps == 10  # the recorded spec re-creates the env


def play_to_truncation(env, steps: int, rewards: list[float] | None = None):
    env.reset(seed=0)
    for step in range(1, steps + 1):
        obs, reward, terminated, truncated, info = env.step(NOT_FINISH)
        if rewards is not None:
            rewards.append(reward)
        if step < steps:
            assert not truncated and "metrics" not in info
    return obs, reward, terminated, truncated, info


@pytest.mark.parametrize("make_kwargs, steps", [({}, 10), ({"max_episode_steps": 3}, 3), ({"max_steps": 4}, 4)])
def test_truncation_carries_metrics_and_verdict(make_kwargs, steps):
    env = gym.make("MobilityBench-v0", **make_kwargs)
    assert env.unwrapped.max_steps == steps
    _, reward, terminated, truncated, info = play_to_truncation(env, steps)
    assert truncated and not terminated
    assert TERMINAL_KEYS <= set(info) and info["metrics"]["DR"] == 0.0 and info["trajectory"]["truncated"]
    assert info["verdict"]["delivered"] is False


def test_time_limit_truncation_is_scored_by_the_wrapper():
    """A TimeLimit that truncates before the env (limit raised on the env afterwards) is still scored."""
    env = gym.make("MobilityBench-v0")
    env.unwrapped.max_steps = 50
    rewards: list[float] = []
    _, reward, terminated, truncated, info = play_to_truncation(env, 10, rewards)
    assert truncated and not terminated and TERMINAL_KEYS <= set(info)
    assert info["metrics"]["DR"] == 0.0 and info["trajectory"]["truncated"] is True
    assert len(info["trajectory"]["calls"]) == 10
    assert {"DR", "FPR"} <= set(info["reward_components"])
    assert reward == pytest.approx(sum(info["reward_components"].values()))
    state = env.unwrapped.state
    assert state.done and state.total_reward == pytest.approx(sum(rewards))
    *_, after = env.step(NOT_FINISH)
    assert after["error"]["type"] == "episode_over"


def test_max_steps_above_the_time_limit_warns_and_is_capped():
    with pytest.warns(UserWarning, match="max_episode_steps=20"):
        env = gym.make("MobilityBench-v0", max_steps=20)
    assert env.unwrapped.max_steps == 10
    env = gym.make("MobilityBench-v0", max_steps=20, max_episode_steps=20)
    assert env.unwrapped.max_steps == env.spec.max_episode_steps == 20


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


def test_async_vector_env_with_defaults_matches_sync():
    """make_vec(async) and AsyncVectorEnv() use shared memory by default; texts arrive intact."""
    sync = gym.make_vec("MobilityBench-v0", num_envs=2, vectorization_mode="sync")
    made = gym.make_vec("MobilityBench-v0", num_envs=2, vectorization_mode="async")
    direct = gym.vector.AsyncVectorEnv([lambda: MobilityEnv() for _ in range(2)])
    try:
        assert made.shared_memory and direct.shared_memory
        expected = run_vector(sync)
        first = expected[0]
        assert isinstance(first, tuple) and all(isinstance(o, str) and json.loads(o)["query"] for o in first)
        assert any(not o.isascii() for o in first)  # Chinese queries: what Gymnasium's Text memory could not hold
        assert run_vector(made) == expected
        assert run_vector(direct) == expected
    finally:
        for vec in (sync, made, direct):
            vec.close()


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


# --------------------------------------------------------------------------- action space
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


def test_action_space_samples_are_well_formed_and_seeded():
    space = ToolCallSpace(seed=123)
    samples = [space.sample() for _ in range(300)]
    assert {s["name"] for s in samples} == set(TOOLS)
    for sample in samples:
        assert space.contains(sample) and space.contains(json.dumps(sample, ensure_ascii=False))
        assert validate_call(sample["name"], sample["arguments"]) == []
        parsed = parse_action(json.dumps(sample, ensure_ascii=False))
        assert parsed.name == sample["name"] and parsed.arguments == sample["arguments"]
    again = ToolCallSpace(seed=123)
    assert [again.sample() for _ in range(300)] == samples
    assert {space.sample(mask="bus_route")["name"] for _ in range(20)} == {"bus_route"}
    assert {space.sample(mask=MAP_TOOLS)["name"] for _ in range(200)} == set(MAP_TOOLS)
    with pytest.raises(ValueError, match="mask"):
        space.sample(mask="teleport")
    assert ToolCallSpace() == ToolCallSpace() != ToolCallSpace(ActionLimits(max_depth=4))


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
