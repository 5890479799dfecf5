"""Writing a final answer from replayed evidence (used by the rule agent).

Each function turns one response into a short Chinese sentence that states the facts the
verifier checks: distances and durations with units, line names, weather condition and
temperature, traffic state, addresses and POI names.
"""

from __future__ import annotations

from typing import Any

from mobility_env.episode import Episode
from mobility_rewards.evidence import (geocode_facts, nearby_pois, places, route_options, traffic_facts,
                              weather_facts)
from mobility_rewards.reference import format_clock, format_distance, format_duration
from mobility_rewards.verify_route import expected_clock_time


def describe_route(response: Any, index: int = 0) -> str:
    options = route_options(response) or []
    if not options:
        return "没有查到可用路线。"
    index = index if 0 <= index < len(options) else 0
    option = options[index]
    text = f"推荐第{index + 1}条路线：全程{_distance(option.distance_m)}，预计耗时{_duration(option.duration_s)}"
    if option.lines:
        text += "，乘坐" + "→".join(dict.fromkeys(option.lines))
    elif option.roads:
        text += "，途经" + "、".join(option.roads[:3])
    return text + "。"


def describe_poi(response: Any) -> str:
    found = places(response)
    if not found:
        return "没有找到这个地点。"
    place = found[0]
    location = f"，坐标{place.location[0]:.6f},{place.location[1]:.6f}" if place.location else ""
    return f"{place.name}，地址：{place.address or '未知'}{location}。"


def describe_nearby(response: Any, limit: int = 3) -> str:
    pois = nearby_pois(response) or []
    if not pois:
        return "附近没有找到相关地点。"
    return "附近有：" + "；".join(f"{p.name}（{p.address}）" if p.address else p.name for p in pois[:limit]) + "。"


def describe_geocode(response: Any) -> str:
    facts = geocode_facts(response)
    if facts is None or not facts.formatted_address:
        return "暂时无法确定您的位置。"
    return f"您现在在{facts.formatted_address}附近。"


def describe_weather(response: Any) -> str:
    facts = weather_facts(response)
    if facts is None or facts.is_empty:
        return "暂时查不到天气信息。"
    if facts.is_forecast:
        days = "；".join(f"{d.date}{d.condition}，气温{d.low:g}~{d.high:g}℃" for d in facts.days)
        return f"{facts.city}天气预报：{days}。"
    return f"{facts.city}当前天气{facts.condition}，气温{facts.temperature:g}℃。"


def describe_traffic(response: Any, road: str = "") -> str:
    facts = traffic_facts(response)
    if facts is None:
        return "暂时查不到路况。"
    return f"{road}目前路况：{facts.state}。{facts.description}".strip()


def _distance(metres: float | None) -> str:
    return "距离未知" if metres is None else format_distance(metres)


def _duration(seconds: float | None) -> str:
    return "时间未知" if seconds is None else format_duration(seconds)


def describe_departure(episode: Episode, response: Any, index: int = 0) -> str:
    """Duration of the chosen route and, when the query names a time, when to leave or arrive."""
    options = route_options(response) or []
    if not options:
        return "没有查到可用路线，无法推算时间。"
    option = options[index if 0 <= index < len(options) else 0]
    text = f"全程{_distance(option.distance_m)}，路上预计需要{_duration(option.duration_s)}"
    expected = expected_clock_time(episode, option.duration_s) if option.duration_s is not None else None
    if expected is not None:
        text += f"，对应时间约为{format_clock(expected[0])}"
    return text + "。"
