"""The scorers on the real MobilityBench sample: gold passes, a battery of adversaries fails."""

from __future__ import annotations

import re

import pytest

from mobility_env.mobilitybench.loaders import load_episodes
from mobility_env.mobilitybench.trajectory import Trajectory
from mobility_rewards import compute_metrics, gold_trajectory
from mobility_rewards.mobilitybench.audit import audit_episodes, blocking_episode_ids
from mobility_env.mobilitybench.evidence import route_options
from mobility_rewards.mobilitybench.verify_route import is_route_tool, uses_excluded_line

from conftest import NO_SAMPLE, SAMPLE_CSV as SAMPLE  # noqa: E402  (MOBILITY_ENV_SAMPLE_DIR, default ../shared)
pytestmark = pytest.mark.skipif(not SAMPLE.exists(), reason=NO_SAMPLE)


@pytest.fixture(scope="module")
def episodes():
    return list(load_episodes(SAMPLE))


@pytest.fixture(scope="module")
def usable(episodes):
    blocked = blocking_episode_ids(audit_episodes(episodes))
    return [e for e in episodes if e.episode_id not in blocked]


def with_finish(trajectory: Trajectory, **changes) -> Trajectory:
    return trajectory.model_copy(update={"finish": trajectory.finish.model_copy(update=changes)})


def with_route_args(trajectory: Trajectory, **changes) -> Trajectory:
    calls = list(trajectory.calls)
    index = max(i for i, c in enumerate(calls) if is_route_tool(c.name))
    call = calls[index]
    arguments = {k: v for k, v in {**call.arguments, **changes}.items() if v is not None}
    calls[index] = call.model_copy(update={"arguments": arguments, "entry_arguments": arguments})
    return trajectory.model_copy(update={"calls": calls})


def route_text(option, distance_m: float) -> str:
    """A route answer stating ``distance_m`` (and, for transit, the option's lines)."""
    lines = "转".join(re.split(r"[(（]", line)[0] for line in option.lines)
    return (f"乘坐{lines}，" if lines else "") + f"全程{distance_m / 1000:.1f}公里。"


def fpr(episode, trajectory) -> float:
    return compute_metrics(episode, trajectory)["FPR"]


def test_audit_flags_the_known_bad_gold(episodes):
    findings = audit_episodes(episodes)
    kinds = {(f.episode_id, f.kind) for f in findings}
    by_query = {e.query: e.episode_id for e in episodes}
    assert (by_query["从双井坐地铁10号线外环到中关村怎么走？"], "excluded_line_requested") in kinds
    assert len(blocking_episode_ids(findings)) <= 5


def test_gold_trajectory_scores_one_on_every_unflagged_episode(episodes, usable):
    assert len(episodes) - len(usable) <= 5
    assert {e.task_scenario for e in usable} == {e.task_scenario for e in episodes}  # every scenario covered
    for episode in usable:
        metrics = compute_metrics(episode, gold_trajectory(episode))
        assert metrics == {k: 1.0 for k in metrics}, (episode.episode_id, episode.task_scenario, metrics)


def test_keywords_alone_never_pass(usable):
    """The correct answer text, but no tool was called: nothing retrieved, nothing verified."""
    for episode in usable:
        gold = gold_trajectory(episode)
        assert fpr(episode, gold.model_copy(update={"calls": []})) == 0.0, episode.episode_id


def test_route_index_that_does_not_exist(usable):
    for episode in usable:
        gold = gold_trajectory(episode)
        if gold.finish.route_index is None:
            continue
        options = route_options(next(c for c in reversed(gold.calls) if is_route_tool(c.name)).response)
        for bad in (len(options), -1):
            metrics = compute_metrics(episode, with_finish(gold, route_index=bad))
            assert metrics["DR"] == 0.0 and metrics["FPR"] == 0.0, episode.episode_id


def _shift(coordinate: str, km: float) -> str:
    lng, lat = map(float, coordinate.split(","))
    return f"{lng + km / 100:.6f},{lat}"


def test_wrong_destination_and_distance_off_by_20_percent(usable):
    checked = 0
    for episode in usable:
        gold = gold_trajectory(episode)
        if gold.finish.route_index is None:
            continue
        route_call = next(c for c in reversed(gold.calls) if is_route_tool(c.name))
        assert fpr(episode, with_route_args(gold, destination=_shift(route_call.arguments["destination"], 5))) == 0.0
        option = route_options(route_call.response)[gold.finish.route_index]
        if option.distance_m:
            wrong = route_text(option, option.distance_m * 1.2)
            assert fpr(episode, with_finish(gold, answer=wrong)) == 0.0, episode.episode_id
            right = route_text(option, option.distance_m)
            assert fpr(episode, with_finish(gold, answer=right)) == (
                0.0 if episode.task_scenario == "Arrival/Departure Time Query" else 1.0), episode.episode_id
            checked += 1
    assert checked >= 30


def test_wrong_strategy_and_missing_waypoint(usable):
    strategies = waypoints = 0
    for episode in usable:
        gold = gold_trajectory(episode)
        route_call = next((c for c in gold.calls if c.name == "driving_route"), None)
        if route_call is None:
            continue
        if route_call.arguments.get("strategy"):
            other = "高速优先" if "不走高速" in route_call.arguments["strategy"] else "不走高速"
            assert fpr(episode, with_route_args(gold, strategy=[other])) == 0.0, episode.episode_id
            assert fpr(episode, with_route_args(gold, strategy=None)) == 0.0, episode.episode_id
            strategies += 1
        if route_call.arguments.get("waypoints"):
            assert fpr(episode, with_route_args(gold, waypoints=None)) == 0.0, episode.episode_id
            reversed_points = [_shift(p, 3) for p in route_call.arguments["waypoints"]]
            assert fpr(episode, with_route_args(gold, waypoints=reversed_points)) == 0.0, episode.episode_id
            waypoints += 1
    assert strategies >= 5 and waypoints >= 5


def test_transit_using_an_excluded_line_fails_and_avoiding_passes(usable):
    using = avoiding = 0
    for episode in usable:
        excluded = episode.gold_slots.get("excluded_lines")
        gold = gold_trajectory(episode)
        if not excluded or gold.finish.route_index is None:
            continue
        options = route_options(next(c for c in gold.calls if c.name == "bus_route").response)
        for option in options:
            answer = route_text(option, option.distance_m)
            verdict = fpr(episode, with_finish(gold, route_index=option.index, answer=answer))
            if uses_excluded_line(option, excluded):
                assert verdict == 0.0, (episode.episode_id, option)
                using += 1
            else:
                assert verdict == 1.0, (episode.episode_id, option)
                avoiding += 1
    assert using >= 2 and avoiding >= 4


def test_wrong_weather_fails(usable):
    checked = 0
    for episode in (e for e in usable if e.task_scenario == "Weather Query"):
        gold = gold_trajectory(episode)
        answer = gold.finish.answer
        condition = re.search(r"[：天气]([^，：]+)，气温", answer).group(1)
        other = "晴" if condition != "晴" else "小雨"
        assert fpr(episode, with_finish(gold, answer=answer.replace(condition + "，", other + "，"))) == 0.0
        warmer = re.sub(r"(-?\d+)℃", lambda m: f"{int(m.group(1)) + 6}℃", answer)
        assert fpr(episode, with_finish(gold, answer=warmer)) == 0.0, (episode.episode_id, warmer)
        checked += 1
    assert checked >= 5


def test_opposite_traffic_state_fails(usable):
    checked = 0
    for episode in (e for e in usable if e.task_scenario == "Traffic Info Query"):
        gold = gold_trajectory(episode)
        assert fpr(episode, with_finish(gold, answer="目前严重拥堵，建议绕行。")) == 0.0
        assert fpr(episode, with_finish(gold, answer="目前拥堵。")) == 0.0
        assert fpr(episode, with_finish(gold, answer="目前畅通，不堵车。")) == 1.0
        checked += 1
    assert checked >= 6


def test_wrong_place_answers_fail(usable):
    for episode in usable:
        gold = gold_trajectory(episode)
        if episode.task_scenario in ("POI Query", "Nearby Query"):
            assert fpr(episode, with_finish(gold, answer="天安门广场，地址：北京市 东城区 东长安街")) == 0.0
        if episode.task_scenario == "Geolocation Query":
            assert fpr(episode, with_finish(gold, answer="您当前位于北京市东城区东长安街天安门广场")) == 0.0


def test_wrong_departure_time_fails(usable):
    checked = 0
    for episode in (e for e in usable if e.task_scenario == "Arrival/Departure Time Query"):
        gold = gold_trajectory(episode)
        match = re.search(r"(\d{1,2})(?::|点)(\d{2})?分?出发", gold.finish.answer)
        if not match:
            continue
        minutes = int(match.group(1)) * 60 + int(match.group(2) or 0) - 45
        wrong = gold.finish.answer.replace(match.group(0), f"{minutes // 60 % 24:02d}:{minutes % 60:02d}出发"
                                           if ":" in match.group(0)
                                           else f"{minutes // 60 % 12 or 12}点{minutes % 60}分出发")
        assert fpr(episode, with_finish(gold, answer=wrong)) == 0.0, (episode.episode_id, wrong)
        checked += 1
    assert checked >= 4


def test_empty_transit_evidence_only_passes_an_honest_answer(episodes):
    episode = next(e for e in episodes if e.query == "去国土资源局坐公交。")
    gold = gold_trajectory(episode)
    assert compute_metrics(episode, gold)["FPR"] == 1.0  # "没有找到可用的路线"
    assert fpr(episode, with_finish(gold, answer="全程30公里，约1小时。")) == 0.0
