"""Writing a final answer from replayed evidence (shared by the oracle and the rule agent).

Each function turns one response into a short Chinese sentence that states the facts the
verifier checks: distances and durations with units, line names, weather condition and
temperature, traffic state, addresses and POI names.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any

from rewards.evidence import (geocode_facts, nearby_pois, places, route_options, traffic_facts,
                              weather_facts)


def format_distance(meters: float | None) -> str:
    if meters is None:
        return "距离未知"
    return f"{meters / 1000:.1f}公里" if meters >= 1000 else f"{meters:.0f}米"


def format_duration(seconds: float | None) -> str:
    if seconds is None:
        return "时间未知"
    minutes = int(round(seconds / 60))
    if minutes >= 60:
        return f"{minutes // 60}小时{minutes % 60}分钟" if minutes % 60 else f"{minutes // 60}小时"
    return f"{max(minutes, 1)}分钟"


def describe_route(response: Any, index: int = 0) -> str:
    options = route_options(response) or []
    if not options:
        return "没有查到可用路线。"
    index = index if 0 <= index < len(options) else 0
    option = options[index]
    text = f"推荐第{index + 1}条路线：全程{format_distance(option.distance_m)}，预计耗时{format_duration(option.duration_s)}"
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


_CLOCK = re.compile(r"(上午|早上|早晨|中午|下午|晚上|傍晚|凌晨)?\s*(\d{1,2}|[一二两三四五六七八九十]{1,3})\s*[点:：时]\s*(半|\d{1,2}分?)?")
_CN_NUM = {"一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10}


def _cn_to_int(text: str) -> int:
    if text.isdigit():
        return int(text)
    if text.startswith("十"):
        return 10 + (_CN_NUM.get(text[1:], 0) if len(text) > 1 else 0)
    if "十" in text:
        tens, _, ones = text.partition("十")
        return _CN_NUM.get(tens, 1) * 10 + (_CN_NUM.get(ones, 0) if ones else 0)
    return _CN_NUM.get(text, 0)


def arrival_clock(query: str) -> tuple[int, int] | None:
    """The arrival time a query asks for ('12点前', '明天早上9点', '11点15'), as (hour, minute)."""
    match = _CLOCK.search(query)
    if not match:
        return None
    period, hour_text, minute_text = match.groups()
    hour = _cn_to_int(hour_text)
    minute = 30 if minute_text == "半" else int(re.sub(r"\D", "", minute_text)) if minute_text else 0
    if period in ("下午", "晚上", "傍晚") and hour < 12:
        hour += 12
    if not (0 <= hour <= 24 and 0 <= minute < 60):
        return None
    return hour % 24, minute


def describe_departure(query: str, response: Any, index: int = 0) -> str:
    """Duration of the chosen route and, when the query names an arrival time, when to leave."""
    options = route_options(response) or []
    if not options:
        return "没有查到可用路线，无法推算出发时间。"
    option = options[index if 0 <= index < len(options) else 0]
    text = f"全程{format_distance(option.distance_m)}，路上预计需要{format_duration(option.duration_s)}"
    clock = arrival_clock(query)
    if clock is not None and option.duration_s is not None:
        arrive = datetime(2000, 1, 2, clock[0], clock[1])
        leave = arrive - timedelta(seconds=option.duration_s)
        text += f"，要在{clock[0]}:{clock[1]:02d}到达，最晚{leave:%H:%M}出发"
    return text + "。"
