"""Scorer + synthetic alternatives: the wrong-but-real evidence a mistaken agent gets must fail FPR.

Every synthetic episode records alternatives beside its gold calls (another mode, another
strategy, the route without its waypoint or with the stops swapped, a similarly named
destination, the other weather variant). An agent that takes one of them and answers
faithfully from what it got must score FPR 0; the same agent on the gold call scores 1.
Played through the real env, on the bundled set.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mobility_agents.baselines.mobilitybench.observations import describe_route, describe_weather
from mobility_env.canonical import canonical_request
from mobility_env.mobilitybench.env import MobilityEnv
from mobility_env.geo import haversine_m
from mobility_env.tools import parse_coordinate
from mobility_rewards.mobilitybench.reference import reference_finish

BUNDLED = Path(__file__).resolve().parents[1] / "datasets" / "default"
ROUTE_TOOLS = {"driving_route", "walking_route", "bicycling_route", "bus_route"}


@pytest.fixture(scope="module")
def env():
    return MobilityEnv(data=BUNDLED)


def _play(env, episode, calls, answer, route_index):
    env.reset(options={"episode_id": episode.episode_id})
    for call in calls:
        env.step({"name": call.name, "arguments": dict(call.arguments)})
    finish = reference_finish(episode)
    args = {"answer": answer, "intent": finish.intent, "slots": finish.slots, "plan": finish.plan}
    if route_index is not None:
        args["route_index"] = route_index
    *_, info = env.step({"name": "finish", "arguments": args})
    return info["metrics"]


def _wrong_for_scenario(episode, gold, alt) -> str | None:
    """Why ``alt`` is a wrong choice for this episode's request, or None if it may be fine."""
    if alt.name != gold.name:
        return "mode"
    gold_req, alt_req = canonical_request(gold.name, gold.arguments), canonical_request(alt.name, alt.arguments)
    destination = lambda req: req.points[1]  # noqa: E731  (origin, destination, waypoints...)
    if haversine_m(destination(gold_req), destination(alt_req)) > 1000:
        return "destination"
    if episode.task_scenario == "Multi-stop Planning" and gold_req.points[2:] != alt_req.points[2:]:
        return "waypoints"
    if episode.task_scenario == "Option-Constrained Route Planning" and gold_req.options != alt_req.options:
        return "strategy"
    return None


def test_route_alternatives_fail_fpr_and_gold_passes(env):
    kinds: dict[str, int] = {}
    for episode_id in env.episode_ids:
        episode = env.store.get(episode_id)
        gold_index = next((i for i, c in enumerate(episode.gold_calls) if c.name in ROUTE_TOOLS), None)
        if gold_index is None:
            continue
        gold = episode.gold_calls[gold_index]
        before = episode.gold_calls[:gold_index]
        gold_metrics = _play(env, episode, episode.gold_calls,
                             describe_route(episode.gold_response(gold_index).response, 0), 0)
        if episode.task_scenario not in ("Route-Constrained Planning", "Arrival/Departure Time Query"):
            assert gold_metrics["FPR"] == 1.0, (episode.query, gold_metrics)
        for alt in episode.recorded:
            if alt.gold_index is not None or alt.name not in ROUTE_TOOLS:
                continue
            why = _wrong_for_scenario(episode, gold, alt)
            if why is None:
                continue
            metrics = _play(env, episode, [*before, alt], describe_route(alt.response, 0), 0)
            assert metrics["FPR"] == 0.0, (why, episode.task_scenario, episode.query, alt.arguments)
            kinds[why] = kinds.get(why, 0) + 1
    assert kinds.get("mode", 0) >= 40 and kinds.get("strategy", 0) >= 15 and kinds.get("waypoints", 0) >= 15, kinds
    assert kinds.get("destination", 0) >= 15, kinds


def test_weather_variant_and_sibling_poi_fail(env):
    checked = {"weather": 0, "poi": 0}
    for episode_id in env.episode_ids:
        episode = env.store.get(episode_id)
        if episode.task_scenario == "Weather Query":
            for alt in episode.recorded:
                if alt.gold_index is None and alt.name == "weather_query":
                    metrics = _play(env, episode, [alt], describe_weather(alt.response), None)
                    assert metrics["FPR"] == 0.0, (episode.query, alt.arguments)
                    checked["weather"] += 1
        if episode.task_scenario == "POI Query":
            gold_place = parse_coordinate(episode.fields.get("ans_loc"))
            for alt in episode.recorded:
                if alt.gold_index is None and alt.name == "query_poi":
                    data = alt.response.get("data", alt.response) if isinstance(alt.response, dict) else {}
                    where = parse_coordinate(data.get("location"))
                    if gold_place is None or where is None or haversine_m(gold_place, where) < 1500:
                        continue
                    answer = f"{data.get('name')}，地址：{data.get('address')}。"
                    metrics = _play(env, episode, [alt], answer, None)
                    assert metrics["FPR"] == 0.0, (episode.query, answer)
                    checked["poi"] += 1
    assert checked["weather"] >= 15 and checked["poi"] >= 5, checked
