"""Shaped rewards: named components, potential-based coverage, gold trajectory optimal."""

from pathlib import Path

import pytest

from mobility_env.errors import ConfigError
from mobility_env.loaders import load_episodes
from mobility_env.trajectory import CallRecord, FinishRecord, Trajectory
from rewards import compute_metrics, gold_trajectory
from rewards.audit import audit_episodes, blocking_episode_ids
from rewards.shaping import RewardShaper, RewardWeights

SAMPLE = Path(__file__).resolve().parents[2] / "shared" / "mobilitybench" / "sample_dev.csv"


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


@pytest.mark.skipif(not SAMPLE.exists(), reason="real sample not available")
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


def test_step_components_by_hand():
    from test_rewards_metrics import DEST, POI, ROUTE, USER, p2p_episode

    episode = p2p_episode()
    shaper = RewardShaper()
    poi = CallRecord(step=0, name="query_poi", arguments={"keywords": "西湖"}, match="exact", response=POI)
    first = shaper.step(episode, [], poi)
    assert first == pytest.approx({"tool_coverage": 0.15, "decomposition": 0.1, "schema_violation": 0.0,
                                   "redundant_call": 0.0, "error": 0.0})
    again = shaper.step(episode, [poi], poi)  # a repeat earns no coverage and pays the redundancy penalty
    assert again == pytest.approx({"tool_coverage": 0.0, "decomposition": 0.0, "schema_violation": 0.0,
                                   "redundant_call": -0.05, "error": 0.0})
    unknown = CallRecord(step=1, name="teleport", arguments={}, error={"type": "unknown_tool", "message": "?"})
    assert shaper.step(episode, [poi], unknown) == pytest.approx(
        {"tool_coverage": 0.0, "decomposition": 0.0, "schema_violation": -0.1, "redundant_call": -0.05, "error": -0.05})
    route = CallRecord(step=2, name="driving_route", arguments={"origin": USER, "destination": DEST}, match="exact",
                       response=ROUTE)
    assert shaper.step(episode, [poi], route)["tool_coverage"] == pytest.approx(0.15)
    trajectory = Trajectory(episode_id=episode.episode_id, calls=[poi, route],
                            finish=FinishRecord(answer="全程10公里", route_index=0))
    assert shaper.terminal(compute_metrics(episode, trajectory)) == {"DR": 0.5, "FPR": 1.0, "ID": 0.0, "IE": 0.0,
                                                                     "PF": 0.0}
