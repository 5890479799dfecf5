"""Shaped rewards: named components, potential-based coverage, gold trajectory optimal."""


import pytest

from mobility_env.errors import ConfigError
from mobility_env.mobilitybench.loaders import load_episodes
from mobility_env.mobilitybench.trajectory import CallRecord, FinishRecord, Trajectory
from mobility_rewards import compute_metrics, gold_trajectory
from mobility_rewards.mobilitybench.audit import audit_episodes, blocking_episode_ids
from mobility_rewards.mobilitybench.shaping import RewardShaper, RewardWeights

from conftest import NO_SAMPLE, SAMPLE_CSV as SAMPLE  # noqa: E402  (MOBILITY_ENV_SAMPLE_DIR, default ../shared)


def episode_return(shaper, episode, trajectory):
    total = 0.0
    for i, call in enumerate(trajectory.calls):
        total += sum(shaper.step(episode, trajectory.calls[:i], call).values())
    return total + sum(shaper.terminal(compute_metrics(episode, trajectory)).values())


def test_weights_from_mapping_rejects_unknown_keys_and_wrong_signs():
    weights = RewardWeights.from_mapping({"FPR": 2.0, "redundant_call": -0.1})
    assert weights.FPR == 2.0 and weights.redundant_call == -0.1 and weights.DR == 0.5
    with pytest.raises(ConfigError, match="unknown reward weight.*'fpr'"):
        RewardWeights.from_mapping({"fpr": 1.0})
    with pytest.raises(ConfigError, match="penalty"):
        RewardWeights(error=0.5)
    with pytest.raises(ConfigError, match="bonus"):
        RewardWeights(tool_coverage=-1)
    assert RewardWeights().max_return == pytest.approx(0.3 + 0.2 + 0.5 + 1.0)


@pytest.mark.skipif(not SAMPLE.exists(), reason=NO_SAMPLE)
def test_gold_trajectory_collects_the_maximum_return_on_the_real_sample():
    episodes = list(load_episodes(SAMPLE))
    blocked = blocking_episode_ids(audit_episodes(episodes))
    shaper = RewardShaper()
    best = shaper.weights.max_return
    for episode in episodes:
        if episode.episode_id in blocked:
            continue
        gold = gold_trajectory(episode)
        assert episode_return(shaper, episode, gold) == pytest.approx(best), episode.episode_id
        # worse variants collect strictly less
        repeated = gold.model_copy(update={"calls": gold.calls + gold.calls[-1:]})
        assert episode_return(shaper, episode, repeated) < best
        skipped = gold.model_copy(update={"calls": gold.calls[:-1]})  # the call the answer rests on
        assert episode_return(shaper, episode, skipped) < best
        first_skipped = gold.model_copy(update={"calls": gold.calls[1:]})
        assert episode_return(shaper, episode, first_skipped) <= best
        wrong = gold.model_copy(update={"finish": FinishRecord(answer="不知道")})
        assert episode_return(shaper, episode, wrong) < best


def _served_gold(episode, index, step, arguments=None):
    """A call the sandbox served from gold call ``index``'s recorded entry."""
    gold = episode.gold_calls[index]
    return CallRecord(step=step, name=gold.name, arguments=arguments if arguments is not None else dict(gold.arguments),
                      match="exact", response=episode.gold_response(index).response,
                      entry_episode_id=episode.episode_id, entry_gold_index=index,
                      entry_arguments=dict(gold.arguments))


def test_step_components_by_hand():
    from test_rewards_metrics import DEST, ROUTE, USER, p2p_episode

    episode = p2p_episode()
    shaper = RewardShaper()
    poi = _served_gold(episode, 0, 0, {"keywords": "西湖"})  # served by fuzzy name match from the gold entry
    first = shaper.step(episode, [], poi)
    assert first == pytest.approx({"tool_coverage": 0.15, "decomposition": 0.1, "schema_violation": 0.0,
                                   "redundant_call": 0.0, "error": 0.0})
    again = shaper.step(episode, [poi], poi)  # a repeat earns no coverage and pays the redundancy penalty
    assert again == pytest.approx({"tool_coverage": 0.0, "decomposition": 0.0, "schema_violation": 0.0,
                                   "redundant_call": -0.05, "error": 0.0})
    same_entry = _served_gold(episode, 0, 1, {"keywords": "西湖景区", "city": "杭州"})  # new identity, same record
    assert shaper.step(episode, [poi], same_entry) == pytest.approx(dict.fromkeys(first, 0.0))
    unknown = CallRecord(step=1, name="teleport", arguments={}, error={"type": "unknown_tool", "message": "?"})
    assert shaper.step(episode, [poi], unknown) == pytest.approx(
        {"tool_coverage": 0.0, "decomposition": 0.0, "schema_violation": -0.1, "redundant_call": -0.05, "error": -0.05})
    route = _served_gold(episode, 1, 2)
    assert shaper.step(episode, [poi], route)["tool_coverage"] == pytest.approx(0.15)
    trajectory = Trajectory(episode_id=episode.episode_id, calls=[poi, route],
                            finish=FinishRecord(answer="全程10公里", route_index=0))
    assert shaper.terminal(compute_metrics(episode, trajectory)) == {"DR": 0.5, "FPR": 1.0, "ID": 0.0, "IE": 0.0,
                                                                     "PF": 0.0}
    # a hand-made record without entry details counts when its own identity is the gold call's
    bare = CallRecord(step=0, name="driving_route", arguments={"origin": USER, "destination": DEST}, match="exact",
                      response=ROUTE)
    assert shaper.step(episode, [], bare)["decomposition"] == pytest.approx(0.1)


def test_calls_that_replay_nothing_right_earn_nothing():
    """Misses, schema errors, wrong records, wrong strategy or mode: no positive term, error sums <= 0."""
    from test_rewards_metrics import DEST, ROUTE, USER, p2p_episode

    episode = p2p_episode()
    shaper = RewardShaper()
    route_args = {"origin": USER, "destination": DEST}
    junk = {
        "miss": CallRecord(step=0, name="query_poi", arguments={"keywords": "无此地"}, match="miss",
                           error={"type": "no_cached_result", "message": "no recorded query_poi call"}),
        # the gold call itself, but the replay missed (e.g. a sandbox built without it): no credit
        "miss_of_gold": CallRecord(step=0, name="query_poi", arguments=dict(episode.gold_calls[0].arguments),
                                   match="miss", error={"type": "no_cached_result", "message": "not served"}),
        "schema": CallRecord(step=0, name="driving_route", arguments={"origin": USER},
                             error={"type": "schema_error", "message": "destination missing"},
                             schema_errors=[{"field": "destination", "rule": "required", "message": "missing"}]),
        "invalid_json": CallRecord(step=0, name=None, arguments=None, error={"type": "invalid_json", "message": "{"}),
        # a recorded alternative with another strategy (gold index None) served the call
        "wrong_strategy": CallRecord(step=0, name="driving_route", arguments={**route_args, "strategy": ["不走高速"]},
                                     match="exact", response=ROUTE, entry_episode_id=episode.episode_id,
                                     entry_arguments={**route_args, "strategy": ["不走高速"]}),
        # even the gold record earns nothing when the served arguments carry another strategy or waypoints
        "served_wrong_strategy": CallRecord(step=0, name="driving_route", arguments=route_args, match="nearest",
                                            response=ROUTE, entry_episode_id=episode.episode_id, entry_gold_index=1,
                                            entry_arguments={**route_args, "strategy": ["高速优先"]}),
        "wrong_mode": CallRecord(step=0, name="walking_route", arguments=route_args, match="exact",
                                 response=ROUTE, entry_episode_id=episode.episode_id, entry_arguments=route_args),
        "other_episode": CallRecord(step=0, name="query_poi", arguments={"keywords": "西湖", "city": "杭州市"},
                                    match="exact", response={}, entry_episode_id="another", entry_gold_index=0,
                                    entry_arguments={"keywords": "西湖", "city": "杭州市"}),
    }
    for kind, call in junk.items():
        components = shaper.step(episode, [], call)
        assert all(value <= 0 for value in components.values()), kind
        assert components["tool_coverage"] == components["decomposition"] == 0.0, kind
    calls = list(junk.values())
    only_junk = Trajectory(episode_id=episode.episode_id, calls=calls,
                           finish=FinishRecord(answer="全程10公里", route_index=0))
    gold = Trajectory(episode_id=episode.episode_id, calls=[_served_gold(episode, 0, 0), _served_gold(episode, 1, 1)],
                      finish=FinishRecord(answer="全程10公里", route_index=0))
    assert episode_return(shaper, episode, only_junk) < episode_return(shaper, episode, gold)
    assert episode_return(shaper, episode, gold) == pytest.approx(shaper.weights.max_return)


def test_unrecorded_gold_call_is_no_target_and_its_miss_costs_nothing():
    from test_rewards_metrics import p2p_episode

    episode = p2p_episode()
    episode = episode.model_copy(update={"recorded": episode.recorded[1:]})  # query_poi was never recorded
    shaper = RewardShaper()
    miss = CallRecord(step=0, name="query_poi", arguments={"keywords": "西湖", "city": "杭州"}, match="miss",
                      error={"type": "no_cached_result", "message": "nothing recorded"})
    assert shaper.step(episode, [], miss) == pytest.approx(dict.fromkeys(["tool_coverage", "decomposition",
                                                                          "schema_violation", "redundant_call",
                                                                          "error"], 0.0))
    route = _served_gold(episode, 1, 1)
    assert shaper.step(episode, [miss], route) == pytest.approx(  # the only target: both potentials 0 -> 1
        {"tool_coverage": 0.3, "decomposition": 0.2, "schema_violation": 0.0, "redundant_call": 0.0, "error": 0.0})
    other_miss = miss.model_copy(update={"arguments": {"keywords": "东湖"}})
    assert shaper.step(episode, [], other_miss)["error"] == -0.05  # not the gold call: avoidable


@pytest.mark.skipif(not SAMPLE.exists(), reason=NO_SAMPLE)
def test_readme_weather_call_earns_nothing_where_beijing_weather_is_not_recorded(sample_csv):
    from mobility_env.mobilitybench.env import MobilityEnv
    from mobility_rewards.mobilitybench.tooluse import call_identity

    env = MobilityEnv(data=sample_csv)
    readme_call = {"name": "weather_query", "arguments": {"city": "北京市"}}
    beijing = call_identity("weather_query", readme_call["arguments"])
    checked = 0
    for episode_id in env.episode_ids:
        episode = env.store.get(episode_id)
        recorded = {call_identity(c.name, c.arguments) for c in episode.recorded if c.gold_index is not None}
        if beijing in recorded:
            continue
        env.reset(options={"episode_id": episode_id})
        _, reward, _, _, info = env.step(readme_call)
        assert reward <= 0.0, (episode_id, info["reward_components"])
        checked += 1
    assert checked >= 70
