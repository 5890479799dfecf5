"""Reading observations and writing final answers (used by the rule agent).

Everything here works from what an agent sees: the observation text of a tool call, parsed
with ``json.loads`` (any value is accepted; a shape that is not recognised reads as "no facts"),
and the query and context of ``reset``'s info. A response in either observation format works:
each reader first passes it through the public compactor of its tool kind in
:mod:`mobility_env.mobilitybench.observation`, which turns a ``"raw"`` response into the ``"compact"`` view
and leaves a compact view as it is. Nothing here reads the env, the episode's gold or the
scorer's helpers (``mobility_rewards``): the facts are read with this module's own small
parsers, so the answer is only as good as the agent's reading of its observations.

Each ``describe_*`` function turns one response into a short Chinese sentence stating the
facts a user asked for: distances and durations with units, line names, weather condition
and temperature, traffic state, addresses and POI names.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any, cast

from mobility_env.mobilitybench.observation import (compact_around, compact_geocode, compact_poi, compact_route,
                                                    compact_traffic, compact_weather)
from mobility_env.tools import parse_coordinate


# ------------------------------------------------------------------ reading facts
@dataclass(frozen=True)
class Place:
    """A named place with its ``(lng, lat)``, as a POI lookup or a nearby search returned it."""

    name: str
    address: str = ""
    location: tuple[float, float] | None = None


@dataclass(frozen=True)
class RouteChoice:
    """One path or transit plan of a route observation; ``index`` is its ``route_index``."""

    index: int
    distance_m: float | None
    duration_s: float | None
    lines: tuple[str, ...] = ()  # transit lines, in riding order (first line of each segment)
    roads: tuple[str, ...] = ()  # main roads named by a text summary (cycling)


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if number == number and abs(number) != float("inf") else None


def _place(item: dict[str, Any]) -> Place | None:
    name = item.get("name")
    if not isinstance(name, str) or not name.strip():
        return None
    address = cast(str, item.get("address") if isinstance(item.get("address"), str) else "")
    return Place(name.strip(), address, parse_coordinate(item.get("location")))


def places(response: Any) -> list[Place]:
    """The places of a ``query_poi`` or ``search_around_poi`` observation, in the order given.

    A place is any object with a ``name`` and a ``location``, at any depth (one POI, a list
    of them, or a ``pois`` list).
    """
    found: list[Place] = []
    pending = [compact_poi(response)]
    while pending:
        item = pending.pop(0)
        if isinstance(item, dict):
            place = _place(item) if "location" in item else None
            if place is not None:
                found.append(place)
            pending[:0] = [v for v in item.values() if isinstance(v, (dict, list))]
        elif isinstance(item, list):
            pending[:0] = item
    return found


def nearby_places(response: Any) -> list[Place]:
    """The ``pois`` of a ``search_around_poi`` observation (empty when there are none)."""
    view = compact_around(response)
    items = view.get("pois") if isinstance(view, dict) else None
    if not isinstance(items, list):
        return []
    return [p for p in (_place(i) for i in items if isinstance(i, dict)) if p is not None]


_CYCLING_CHOICE = re.compile(r"第\s*(\d+)\s*种[:：]?(.*?)(?=第\s*\d+\s*种|$)", re.S)
_TEXT_DISTANCE = re.compile(r"(\d+(?:\.\d+)?)\s*(公里|千米|km|米|m)(?![a-z])", re.I)
_TEXT_DURATION = re.compile(r"(?:(\d+)\s*小时)?\s*(?:(\d+)\s*分钟?)?")


def _text_distance(text: str) -> float | None:
    match = _TEXT_DISTANCE.search(text)
    if match is None:
        return None
    value = float(match.group(1))
    return value * 1000 if match.group(2).lower() in ("公里", "千米", "km") else value


def _text_duration(text: str) -> float | None:
    after = re.split(r"耗时|需要|用时", text, maxsplit=1)
    for match in _TEXT_DURATION.finditer(after[-1]):
        if match.group(1) or match.group(2):
            return (int(match.group(1) or 0) * 60 + int(match.group(2) or 0)) * 60.0
    return None


def _text_choices(text: str) -> list[RouteChoice]:
    """``"第1种：主要经过A、B，全程21.3公里，预计耗时1小时49分钟..."`` -> one choice per 第N种."""
    choices = []
    for position, (_, body) in enumerate(_CYCLING_CHOICE.findall(text)):
        roads = re.search(r"经过(.*?)[，,]", body)
        named = tuple(r for r in re.split(r"[、,，]", roads.group(1)) if r) if roads else ()
        choices.append(RouteChoice(position, _text_distance(body), _text_duration(body), roads=named))
    return choices


def route_choices(response: Any) -> list[RouteChoice]:
    """The paths or transit plans of a route observation, in order (empty when there are none)."""
    view = compact_route(response)
    if isinstance(view, str):
        return _text_choices(view)
    if not isinstance(view, dict):
        return []
    items = view.get("transits") if isinstance(view.get("transits"), list) else view.get("paths")
    choices = []
    for position, item in enumerate(items if isinstance(items, list) else []):
        if not isinstance(item, dict):
            continue
        index = item.get("index")
        if not isinstance(index, int) or isinstance(index, bool):
            index = position
        lines = tuple(leg["line"] for leg in item.get("lines") or []
                      if isinstance(leg, dict) and isinstance(leg.get("line"), str) and leg["line"])
        choices.append(RouteChoice(index, _number(item.get("distance_m")), _number(item.get("duration_s")),
                                   lines=lines))
    return choices


# ------------------------------------------------------------------ transit lines
_CN_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_CN_NUMBER = re.compile(r"[零〇一二两三四五六七八九十]+")


def chinese_number(text: str) -> int | None:
    """``"九"`` -> 9, ``"十五"`` -> 15, ``"二十三"`` -> 23, ``"一五"`` -> 15; None if it is not one (up to 99)."""
    if not text or any(ch not in _CN_DIGITS and ch != "十" for ch in text):
        return None
    if "十" not in text:
        return int("".join(str(_CN_DIGITS[ch]) for ch in text))
    tens, _, ones = text.partition("十")
    if "十" in ones or len(tens) > 1 or len(ones) > 1:
        return None
    return (_CN_DIGITS[tens] if tens else 1) * 10 + (_CN_DIGITS[ones] if ones else 0)


def _digits(text: str) -> str:
    return _CN_NUMBER.sub(lambda m: str(chinese_number(m.group(0))) if chinese_number(m.group(0)) is not None
                          else m.group(0), text)


def line_key(name: str) -> str:
    """A line name reduced for comparison: ``"地铁一号线(苹果园--古城)"`` -> ``"1号线"``."""
    text = unicodedata.normalize("NFKC", name or "").strip().lower().replace(" ", "")
    text = re.split(r"[(（]", text, maxsplit=1)[0]
    text = re.sub(r"^(?:北京|上海|广州|深圳)?(?:地铁|轨道交通|轨交|城轨|公交|metro|subway|line)", "", text)
    text = _digits(text)
    return text + "号线" if text.isdigit() else text


def rides_line(line_name: str, excluded: str) -> bool:
    """Does riding ``line_name`` mean riding the line the user excluded?

    The excluded name must appear in the line's name without digits running on across it:
    ``1号线`` is not ``11号线``, ``206路`` is not ``1206路``.
    """
    line, target = line_key(line_name), line_key(excluded)
    if not line or not target:
        return False
    start = line.find(target)
    while start >= 0:
        end = start + len(target)
        digit_before = start > 0 and line[start - 1].isdigit()
        digit_after = target[-1].isdigit() and end < len(line) and line[end].isdigit()
        if not digit_before and not digit_after:
            return True
        start = line.find(target, start + 1)
    return False


# ------------------------------------------------------------------ clock times in the query
_PERIOD_OFFSETS = {"凌晨": 0, "早上": 0, "早晨": 0, "清晨": 0, "上午": 0, "明早": 0, "中午": 12, "下午": 12,
                   "傍晚": 12, "晚上": 12, "今晚": 12, "明晚": 12, "夜里": 12}
_PERIOD = "|".join(sorted(_PERIOD_OFFSETS, key=len, reverse=True))
_CN = "零〇一二两三四五六七八九十"
# "早一点出发" is not 1 o'clock: a numeral right after 快/早/晚/... is an amount, not an hour.
_QUERY_CLOCK = re.compile(rf"({_PERIOD})?\s*(?<![快早晚慢远近好多少差些])([\d{_CN}]{{1,3}})\s*(?:点|:|：|时)"
                          rf"\s*(半|一刻|三刻|整|[\d{_CN}]{{1,3}}(?:分)?)?")
_ASKS_ARRIVAL = re.compile(r"几点到|什么时候到|何时到|几点能到|多久能到|到达时间")


@dataclass(frozen=True)
class QueryTime:
    """A clock time the user named: minutes after midnight, and whether its half of the day is known."""

    minutes: int
    definite: bool


def query_times(text: str) -> list[QueryTime]:
    """Clock times named in a query: ``明天上午九点`` -> 09:00, ``晚上7点半`` -> 19:30, ``11点15`` -> 11:15."""
    found = []
    for match in _QUERY_CLOCK.finditer(text or ""):
        period, hour_text, extra = match.group(1), match.group(2), match.group(3) or ""
        hour = int(hour_text) if hour_text.isdigit() else chinese_number(hour_text)
        minute = {"半": 30, "一刻": 15, "三刻": 45, "整": 0, "": 0}.get(extra)
        if minute is None:
            digits = extra.rstrip("分")
            minute = int(digits) if digits.isdigit() else chinese_number(digits)
        if hour is None or minute is None or hour > 24 or minute > 59:
            continue
        if period:
            offset = _PERIOD_OFFSETS[period]
            if period == "中午":
                hour = hour if hour >= 11 else hour + 12
            elif offset and hour < 12:
                hour += offset
            elif hour == 12 and period in ("凌晨", "晚上", "今晚", "明晚", "夜里"):
                hour = 0  # 晚上十二点 is midnight
        found.append(QueryTime((hour % 24) * 60 + minute, bool(period) or hour >= 13 or hour == 0))
    return found


def _context_clock(context: dict[str, Any]) -> int | None:
    """The context's ``start_datetime`` (``"2025-11-03 20:50:58"``) as minutes after midnight."""
    match = re.search(r"(\d{1,2}):(\d{2})", str(context.get("start_datetime") or "").split(" ")[-1])
    return int(match.group(1)) * 60 + int(match.group(2)) if match else None


def travel_clock(query: str, context: dict[str, Any], duration_s: float) -> tuple[str, int] | None:
    """``("arrival" | "departure", minutes)`` a time question asks for, or None when it names no time.

    Arrival ("几点到"): the named start time (or the context's current time) plus the trip;
    departure: the named arrival time minus the trip.
    """
    times = query_times(query)
    trip = round(duration_s / 60)
    if _ASKS_ARRIVAL.search(query or ""):
        start = times[0].minutes if times else _context_clock(context)
        return None if start is None else ("arrival", (start + trip) % 1440)
    if times:
        return "departure", (times[0].minutes - trip) % 1440
    return None


# ------------------------------------------------------------------ writing answers
def _distance(metres: float | None) -> str:
    if metres is None:
        return "距离未知"
    return f"{metres / 1000:.1f}公里" if metres >= 1000 else f"{metres:.0f}米"


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "时间未知"
    hours, minutes = divmod(round(seconds / 60), 60)
    return f"{hours}小时{minutes}分钟" if hours else f"{minutes}分钟"


def _chosen(choices: list[RouteChoice], index: int) -> RouteChoice:
    return next((c for c in choices if c.index == index), choices[0])


def describe_route(response: Any, index: int = 0) -> str:
    choices = route_choices(response)
    if not choices:
        return "没有查到可用路线。"
    choice = _chosen(choices, index)
    text = f"推荐第{choice.index + 1}条路线：全程{_distance(choice.distance_m)}，预计耗时{_duration(choice.duration_s)}"
    if choice.lines:
        text += "，乘坐" + "→".join(dict.fromkeys(choice.lines))
    elif choice.roads:
        text += "，途经" + "、".join(choice.roads[:3])
    return text + "。"


def describe_departure(query: str, context: dict[str, Any], response: Any, index: int = 0) -> str:
    """Duration of the chosen route and, when the query names a time, when to leave or arrive."""
    choices = route_choices(response)
    if not choices:
        return "没有查到可用路线，无法推算时间。"
    choice = _chosen(choices, index)
    text = f"全程{_distance(choice.distance_m)}，路上预计需要{_duration(choice.duration_s)}"
    clock = travel_clock(query, context, choice.duration_s) if choice.duration_s is not None else None
    if clock is not None:
        role, minutes = clock
        when = f"{minutes // 60:02d}:{minutes % 60:02d}"
        text += f"，建议{when}出发" if role == "departure" else f"，预计{when}到达"
    return text + "。"


def describe_poi(response: Any) -> str:
    found = places(response)
    if not found:
        return "没有找到这个地点。"
    place = found[0]
    location = f"，坐标{place.location[0]:.6f},{place.location[1]:.6f}" if place.location else ""
    return f"{place.name}，地址：{place.address or '未知'}{location}。"


def describe_nearby(response: Any, limit: int = 3) -> str:
    found = nearby_places(response)
    if not found:
        return "附近没有找到相关地点。"
    return "附近有：" + "；".join(f"{p.name}（{p.address}）" if p.address else p.name for p in found[:limit]) + "。"


def describe_geocode(response: Any) -> str:
    view = compact_geocode(response)
    address = view.get("formatted_address") if isinstance(view, dict) else None
    if not isinstance(address, str) or not address:
        return "暂时无法确定您的位置。"
    return f"您现在在{address}附近。"


_FORECAST_DAY = re.compile(r"(\d{4}-\d{2}-\d{2})[^：:\n]*[：:]\s*([^，,\n]+)[，,]"
                           r"\s*气温\s*(-?\d+(?:\.\d+)?)\s*~\s*(-?\d+(?:\.\d+)?)\s*℃")
_CURRENT_WEATHER = re.compile(r"^(.*?)当前天气([^，,]*)[，,]\s*气温\s*(-?\d+(?:\.\d+)?)\s*℃")


def describe_weather(response: Any) -> str:
    view = compact_weather(response)
    text = view.get("weather") if isinstance(view, dict) else view
    if not isinstance(text, str):
        return "暂时查不到天气信息。"
    days = _FORECAST_DAY.findall(text)
    if days:
        city = text.split("未来")[0].strip()
        listed = "；".join(f"{date}{condition.strip()}，气温{float(low):g}~{float(high):g}℃"
                          for date, condition, low, high in days)
        return f"{city}天气预报：{listed}。"
    current = _CURRENT_WEATHER.search(text)
    if current is None or not current.group(2).strip():
        return "暂时查不到天气信息。"
    return f"{current.group(1).strip()}当前天气{current.group(2).strip()}，气温{float(current.group(3)):g}℃。"


def describe_traffic(response: Any, road: str = "") -> str:
    view = compact_traffic(response)
    if not isinstance(view, dict) or not (view.get("state") or view.get("description")):
        return "暂时查不到路况。"
    state = view.get("state") if isinstance(view.get("state"), str) and view.get("state") else "未知"
    description = view.get("description") if isinstance(view.get("description"), str) else ""
    return f"{road}目前路况：{state}。{description}".strip()
