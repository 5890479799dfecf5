"""MobilityEnv: the Gymnasium contract, errors as observations, determinism, truncation, rewards."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mobility_env  # noqa: F401  (registers MobilityBench-v0)
import mobility_rewards.mobilitybench.metrics
from mobility_env.mobilitybench.env import MobilityEnv
from mobility_env.mobilitybench.observation import format_response

METRIC_KEYS = (set(mobility_rewards.mobilitybench.metrics.METRIC_KEYS)
               | set(mobility_rewards.mobilitybench.metrics.EXTRA_METRIC_KEYS))


@pytest.fixture(scope="module")
def real_env(sample_csv):
    return MobilityEnv(data=sample_csv)


def _gold_actions(episode):
    return [{"name": c.name, "arguments": dict(c.arguments)} for c in episode.gold_calls]


def test_check_env_on_registered_id():
    env = gym.make("MobilityBench-v0")
    check_env(env.unwrapped)
    obs, info = env.reset(seed=3)
    assert isinstance(obs, str) and json.loads(obs)["query"] == info["query"]
    assert {t["function"]["name"] for t in info["tools"]} >= {"query_poi", "bus_route", "finish"}
    assert info["episode_id"] in env.unwrapped.episode_ids


def test_check_env_on_real_sample(real_env):
    check_env(real_env)


def test_reset_picks_requested_episode_and_rejects_unknown(real_env):
    episode_id = real_env.episode_ids[5]
    _, info = real_env.reset(options={"episode_id": episode_id})
    assert info["episode_id"] == episode_id
    with pytest.raises(ValueError, match="unknown episode_id"):
        real_env.reset(options={"episode_id": "nope"})


def _play(env, episode_id, actions, seed=0):
    out = [env.reset(seed=seed, options={"episode_id": episode_id})]
    for action in actions:
        out.append(env.step(action))
    return out


def test_same_seed_same_actions_identical(real_env, sample_episodes):
    episode = sample_episodes[10]
    actions = _gold_actions(episode) + [{"name": "query_poi", "arguments": {"keywords": "不存在的地方xyz"}}, "garbage",
                                        {"name": "finish", "arguments": {"answer": "好的"}}]
    first = json.dumps(_play(real_env, episode.episode_id, actions), ensure_ascii=False, sort_keys=True, default=str)
    second = json.dumps(_play(real_env, episode.episode_id, actions), ensure_ascii=False, sort_keys=True, default=str)
    assert first == second
    # Sampling without an id is driven by the seed only.
    ids_a = [real_env.reset(seed=s)[1]["episode_id"] for s in range(8)]
    ids_b = [real_env.reset(seed=s)[1]["episode_id"] for s in range(8)]
    assert ids_a == ids_b and len(set(ids_a)) > 1


def test_gold_trajectory_replays_exact_through_step(real_env, sample_episodes):
    served = 0
    for episode in sample_episodes:
        real_env.reset(options={"episode_id": episode.episode_id})
        for index, call in enumerate(episode.gold_calls):
            obs, _, terminated, truncated, info = real_env.step({"name": call.name, "arguments": dict(call.arguments)})
            recorded = episode.gold_response(index)
            if recorded is None:
                continue  # e.g. Traffic Info's query_poi: the sample records no response
            assert "error" not in info and info["match"] == "exact" and info["scope"] == "episode"
            assert obs == format_response(call.name, recorded.response, "compact")
            served += 1
    assert served == sum(1 for e in sample_episodes for r in e.recorded if r.gold_index is not None)


def test_raw_observation_is_the_recorded_response(sample_csv, sample_episodes):
    env = MobilityEnv(data=sample_csv, obs_format="raw")
    episode = next(e for e in sample_episodes if e.task_scenario == "Point-to-Point Planning")
    env.reset(options={"episode_id": episode.episode_id})
    call = episode.gold_calls[-1]
    obs, *_ = env.step({"name": call.name, "arguments": dict(call.arguments)})
    assert json.loads(obs) == episode.gold_response(len(episode.gold_calls) - 1).response
    compact = format_response(call.name, json.loads(obs), "compact")
    assert len(compact) < len(obs)


@pytest.mark.parametrize("action, error_type", [
    ("{not json", "invalid_json"),
    ("[1, 2, 3]", "invalid_action"),
    ({"arguments": {}}, "invalid_action"),
    ({"name": "teleport", "arguments": {}}, "unknown_tool"),
    ({"name": "driving_route", "arguments": {"origin": "1,2"}}, "schema_error"),
    ({"name": "driving_route", "arguments": {"origin": "200,95", "destination": "1,2"}}, "schema_error"),
    ({"name": "query_poi", "arguments": {"keywords": "x", "extra": 1}}, "schema_error"),
    ({"name": "query_poi", "arguments": "{bad json"}, "invalid_json"),
    ({"name": "finish", "arguments": {}}, "schema_error"),
    ({"name": "bus_route", "arguments": {"origin": "0.5,0.5", "destination": "0.6,0.6"}}, "no_cached_result"),
    ("x" * 50_000, "invalid_json"),
])
def test_bad_actions_are_typed_observations(real_env, action, error_type):
    real_env.reset(seed=0)
    obs, reward, terminated, truncated, info = real_env.step(action)
    assert info["error"]["type"] == error_type
    assert json.loads(obs)["error"]["type"] == error_type
    assert not terminated and reward < 0
    assert real_env.observation_space.contains(obs)


def test_openai_tool_call_shape_is_accepted(real_env, sample_episodes):
    episode = next(e for e in sample_episodes if e.task_scenario == "Weather Query")
    real_env.reset(options={"episode_id": episode.episode_id})
    call = episode.gold_calls[0]
    action = {"id": "call_1", "type": "function",
              "function": {"name": call.name, "arguments": json.dumps(call.arguments, ensure_ascii=False)}}
    _, _, _, _, info = real_env.step(action)
    assert "error" not in info and info["match"] == "exact"
    _, _, _, _, info = real_env.step(json.dumps({"name": "traffic_status_road_api",
                                                 "arguments": {"name": "机场路", "city": "北京市"}}))
    assert info["call"]["name"] == "traffic_status"


def test_truncation_at_max_steps_scores_dr_zero(sample_csv, sample_episodes):
    env = MobilityEnv(data=sample_csv, max_steps=3)
    episode = sample_episodes[0]
    env.reset(options={"episode_id": episode.episode_id})
    results = [env.step({"name": "query_poi", "arguments": {"keywords": "某地"}}) for _ in range(3)]
    assert [r[3] for r in results] == [False, False, True]
    assert not any(r[2] for r in results)
    metrics = results[-1][4]["metrics"]
    assert set(metrics) == METRIC_KEYS and metrics["DR"] == 0.0 and metrics["FPR"] == 0.0
    obs, reward, terminated, truncated, info = env.step({"name": "finish", "arguments": {"answer": "late"}})
    assert info["error"]["type"] == "episode_over" and reward == 0.0


def test_step_before_reset_raises_reset_needed(sample_csv):
    env = MobilityEnv(data=sample_csv)
    with pytest.raises(gym.error.ResetNeeded):
        env.step("{}")


def test_finish_reports_metrics_and_trajectory(real_env, sample_episodes):
    from mobility_agents.baselines.mobilitybench.oracle import OracleAgent

    episode = next(e for e in sample_episodes if e.task_scenario == "Weather Query")
    record = OracleAgent().run_episode(real_env, episode.episode_id)
    result = record["result"]
    assert result["terminated"] and set(result["metrics"]) == METRIC_KEYS
    assert all(0.0 <= v <= 1.0 for v in result["metrics"].values())
    assert record["trajectory"]["record"]["finish"]["answer"]


def test_oracle_return_is_maximal_against_deviations(real_env, sample_episodes):
    """Dropping, repeating or corrupting a gold call never beats the gold trajectory."""
    from mobility_agents.baselines.mobilitybench.oracle import OracleAgent

    checked = 0
    for episode in sample_episodes[::7]:
        gold = OracleAgent().run_episode(real_env, episode.episode_id)["result"]
        finish = real_env.state.trajectory.finish.model_dump(exclude_none=True)
        variants = []
        actions = _gold_actions(episode)
        variants.append(actions[:-1])
        variants.append(actions + actions[-1:])
        variants.append(actions + [{"name": "weather_query", "arguments": {"city": "北京市"}}])
        variants.append(["oops"] + actions)
        for variant in variants:
            out = _play(real_env, episode.episode_id, variant + [{"name": "finish", "arguments": finish}])
            total = sum(step[1] for step in out[1:])
            assert total <= gold["total_reward"] + 1e-9, (episode.task_scenario, variant)
        checked += 1
    assert checked >= 10


def test_reward_components_named_and_summed(real_env):
    real_env.reset(seed=1)
    _, reward, _, _, info = real_env.step({"name": "teleport", "arguments": {}})
    assert info["reward_components"] and abs(sum(info["reward_components"].values()) - reward) < 1e-12


def test_reward_weights_validation(sample_csv):
    with pytest.raises(ValueError, match="no_such_term"):
        MobilityEnv(data=sample_csv, reward_weights={"no_such_term": 1.0})


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=30),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=12)
tool_names = st.sampled_from(["query_poi", "driving_route", "bus_route", "finish", "weather_query", "nope", "",
                              "reverse_geocoding"])
actions = st.one_of(
    st.text(max_size=200),
    json_values,
    st.builds(lambda n, a: {"name": n, "arguments": a}, tool_names, json_values),
    st.builds(lambda n, a: {"type": "function", "function": {"name": n, "arguments": a}}, tool_names,
              st.text(max_size=60)),
    st.builds(lambda n, a: json.dumps({"name": n, "arguments": a}, ensure_ascii=False, default=str), tool_names,
              json_values),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(actions, min_size=1, max_size=12))
def test_step_never_raises(real_env, action_list):
    real_env.reset(seed=0)
    for action in action_list:
        obs, reward, terminated, truncated, info = real_env.step(action)
        assert isinstance(obs, str) and isinstance(reward, float)
        assert info.get("error") is None or info["error"]["type"] in {
            "invalid_json", "invalid_action", "unknown_tool", "schema_error", "no_cached_result", "episode_over"}
        if terminated or truncated:
            break


def test_sync_and_async_vector_envs(sample_csv):
    from gymnasium.vector import AsyncVectorEnv, SyncVectorEnv

    make = [lambda: MobilityEnv(data=sample_csv) for _ in range(2)]
    for vec in (SyncVectorEnv(make), AsyncVectorEnv(make, shared_memory=False)):
        try:
            obs, infos = vec.reset(seed=[0, 1])
            assert len(obs) == 2 and all(isinstance(o, str) for o in obs)
            obs, rewards, terms, truncs, infos = vec.step(
                ["{bad", json.dumps({"name": "finish", "arguments": {"answer": "x"}})])
            assert len(rewards) == 2 and bool(terms[1]) and not bool(terms[0])
        finally:
            vec.close()


# ------------------------------------------------------------------ the scorer as a parameter


class CountingVerdict:
    """A verdict of the EpisodeVerdict protocol, as a custom scorer would return."""

    def __init__(self, calls: int, hits: int):
        self.calls = calls
        self.passed = hits > 0

    def summary(self) -> str:
        return f"{self.calls} call(s)"

    def to_dict(self) -> dict:
        return {"calls": self.calls, "passed": self.passed}


class CountingScorer:
    """Pays -1 per error and +2 per sandbox hit; logs every call the env makes to it."""

    def __init__(self):
        self.log = []

    def start(self, episode):
        self.log.append(("start", episode.episode_id))
        return {"episode_id": episode.episode_id, "hits": 0}

    def step(self, state, call, *, arguments_valid=None):
        self.log.append(("step", call.name, (call.error or {}).get("type"), arguments_valid))
        hit = call.error is None
        state["hits"] += hit
        return {"hit": 2.0 * hit, "error": -1.0 * (not hit)}

    def finish(self, state, trajectory):
        from mobility_env.scoring import EpisodeScore

        self.log.append(("finish", state["episode_id"], trajectory.finish is not None, trajectory.truncated))
        return EpisodeScore({"answered": 10.0 * (trajectory.finish is not None)},
                            {"hits": float(state["hits"])}, CountingVerdict(len(trajectory.calls), state["hits"]))


def _weather_episode(sample_episodes):
    return next(e for e in sample_episodes if e.task_scenario == "Weather Query")


def test_injected_scorer_is_called_at_start_step_and_finish(real_env, sample_episodes):
    scorer = CountingScorer()
    env = MobilityEnv(store=real_env.store, scorer=scorer, render_mode="ansi")
    assert env.scorer is scorer
    episode = _weather_episode(sample_episodes)
    gold = _gold_actions(episode)[0]
    out = _play(env, episode.episode_id, [gold, "{not json", {"name": "finish", "arguments": {"answer": "晴"}}])
    assert scorer.log == [("start", episode.episode_id),
                          ("step", gold["name"], None, True),  # reached the sandbox: arguments already validated
                          ("step", None, "invalid_json", None),
                          ("finish", episode.episode_id, True, False)]
    rewards = [step[1] for step in out[1:]]
    assert rewards == [2.0, -1.0, 10.0]
    assert out[1][4]["reward_components"] == {"hit": 2.0, "error": -0.0}
    final = out[-1][4]
    assert final["reward_components"] == {"answered": 10.0}
    assert final["metrics"] == {"hits": 1.0} and final["verdict"] == {"calls": 2, "passed": True}
    assert env.state.total_reward == 11.0
    assert env.render().endswith("verdict: PASS — 2 call(s)")


def test_injected_scorer_scores_truncation_and_abandon(real_env, sample_episodes):
    scorer = CountingScorer()
    env = MobilityEnv(store=real_env.store, scorer=scorer, max_steps=2)
    episode = _weather_episode(sample_episodes)
    out = _play(env, episode.episode_id, ["oops", "oops"])
    assert out[-1][3] and out[-1][1] == -1.0  # the terminal terms of a truncation without answer pay 0
    assert out[-1][4]["reward_components"] == {"hit": 0.0, "error": -1.0, "answered": 0.0}
    assert out[-1][4]["metrics"] == {"hits": 0.0} and out[-1][4]["verdict"] == {"calls": 2, "passed": False}
    assert scorer.log[-1] == ("finish", episode.episode_id, False, True)
    env.reset(options={"episode_id": episode.episode_id})
    final = env.abandon("gave_up")
    assert final["metrics"] == {"hits": 0.0} and final["verdict"] == {"calls": 0, "passed": False}
    assert [entry[0] for entry in scorer.log].count("finish") == 2


def test_injected_scorer_through_gymnasium_make(sample_csv):
    scorer = CountingScorer()
    env = gym.make("MobilityBench-v0", data=sample_csv, scorer=scorer)
    _, info = env.reset(seed=0)
    _, reward, terminated, _, info = env.step({"name": "finish", "arguments": {"answer": "x"}})
    assert terminated and reward == 10.0 and info["metrics"] == {"hits": 0.0}
    assert env.unwrapped.scorer is scorer and scorer.log[0] == ("start", info["episode_id"])


def test_default_scorer_is_the_scorer_of_a_plain_env(real_env, sample_episodes):
    """MobilityEnv(reward_weights=w) and MobilityEnv(scorer=DefaultScorer(w)) pay and judge the same."""
    from mobility_agents.baselines.mobilitybench.oracle import OracleAgent
    from mobility_rewards.mobilitybench.scorer import DefaultScorer
    from mobility_rewards.mobilitybench.shaping import RewardWeights

    weights = {"ID": 0.25, "PF": 0.5, "redundant_call": -0.2}
    plain = MobilityEnv(store=real_env.store, reward_weights=weights)
    explicit = MobilityEnv(store=real_env.store, scorer=DefaultScorer(RewardWeights.from_mapping(weights)))
    assert isinstance(plain.scorer, DefaultScorer) and plain.scorer.weights == explicit.scorer.weights
    assert plain.scorer.weights.ID == 0.25 and MobilityEnv(store=real_env.store).scorer.weights == RewardWeights()
    agent = OracleAgent()
    for episode in sample_episodes[::9]:
        actions = _gold_actions(episode) + ["{bad"] + _gold_actions(episode)[:1]
        finish = {"name": "finish",
                  "arguments": {"answer": agent.run_episode(plain, episode.episode_id)
                                ["trajectory"]["record"]["finish"]["answer"]}}
        runs = [json.dumps(_play(env, episode.episode_id, actions + [finish]), ensure_ascii=False, sort_keys=True,
                           default=str) for env in (plain, explicit)]
        assert runs[0] == runs[1]


@pytest.mark.parametrize("kwargs, message", [
    ({"scorer": "CountingScorer", "reward_weights": {"FPR": 2.0}}, "reward_weights configure the default scorer"),
    ({"scorer": CountingScorer}, "scorer must be an instance.*CountingScorer()"),
    ({"scorer": object()}, "lacks start, step, finish"),
])
def test_scorer_misconfiguration_raises_config_error(real_env, kwargs, message):
    from mobility_env.errors import ConfigError

    if kwargs["scorer"] == "CountingScorer":
        kwargs = {**kwargs, "scorer": CountingScorer()}
    with pytest.raises(ConfigError, match=message):
        MobilityEnv(store=real_env.store, **kwargs)


def test_gold_labels_only_after_the_episode_ends():
    """A policy is scored on the intent it names (ID): reset's info must not hand it the gold one."""
    import gymnasium as gym

    env = gym.make("MobilityBench-v0")
    for seed in range(5):
        _, info = env.reset(seed=seed)
        assert not {"task_scenario", "intent_family"} & set(info)
        _, _, _, _, step_info = env.step({"name": "weather_query", "arguments": {"city": "北京市"}})
        assert not {"task_scenario", "intent_family"} & set(step_info)
        _, _, terminated, _, final = env.step({"name": "finish", "arguments": {"answer": "不知道"}})
        assert terminated and final["task_scenario"] == env.unwrapped.state.episode.task_scenario
        assert final["intent_family"] == env.unwrapped.state.episode.intent_family
