"""OracleAgent: replays the gold tool calls and answers from the replayed evidence.

It reads the episode's gold (privileged), so it is an upper bound and a self-check of the
env and the scorer together: on every episode whose gold is intact (see ``mobility-env
audit``) it must reach FPR 1.0.
"""

from __future__ import annotations

from typing import Any

from mobility_env.episode import Episode
from rewards.plan import gold_plan_steps

from . import answers
from .base import Agent, EpisodeSession

ROUTE_TOOLS = ("driving_route", "walking_route", "bicycling_route", "bus_route")


def gold_route_index(episode: Episode) -> int:
    """The route the gold answer uses: ``matched_transit_index`` for constrained transit, else 0."""
    value = episode.fields.get("matched_transit_index")
    try:
        return int(float(value)) if value not in (None, "") else 0
    except (TypeError, ValueError):
        return 0


def answer_from_evidence(episode: Episode, responses: dict[str, Any]) -> tuple[str, int | None]:
    """The answer text and route index for an episode, given the last response per tool."""
    scenario = episode.task_scenario
    route = next((responses[t] for t in ROUTE_TOOLS if t in responses), None)
    if scenario == "POI Query":
        return answers.describe_poi(responses.get("query_poi")), None
    if scenario == "Geolocation Query":
        return answers.describe_geocode(responses.get("reverse_geocoding")), None
    if scenario == "Nearby Query":
        return answers.describe_nearby(responses.get("search_around_poi")), None
    if scenario == "Weather Query":
        return answers.describe_weather(responses.get("weather_query")), None
    if scenario == "Traffic Info Query":
        return answers.describe_traffic(responses.get("traffic_status"), str(episode.gold_slots.get("road", ""))), None
    index = gold_route_index(episode)
    if scenario == "Arrival/Departure Time Query":
        return answers.describe_departure(episode.query, route, index), index
    return answers.describe_route(route, index), index


class OracleAgent(Agent):
    """Plays ``episode.gold_calls`` in order, then finishes with the gold intent, slots and plan."""

    name = "oracle"

    def play(self, session: EpisodeSession) -> None:
        episode = session.env.unwrapped.episode
        responses: dict[str, Any] = {}
        for call in episode.gold_calls:
            session.call(call.name, dict(call.arguments))
            record = session.env.unwrapped.state.trajectory.calls[-1]
            if record.response is not None:
                responses[call.name] = record.response
            if session.done:
                return
        answer, route_index = answer_from_evidence(episode, responses)
        session.finish(answer, intent=episode.task_scenario, slots=dict(episode.gold_slots),
                       plan=sorted(gold_plan_steps(episode)), route_index=route_index)
