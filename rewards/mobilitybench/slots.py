"""IE: the agent's extracted ``slots`` against the gold constraint set, after normalization.

Normalization (shared with the FPR verifiers):

* **places** (origin, destination, waypoints, center, keyword, road): :func:`same_place_name`
  — NFKC, case and punctuation folded; equal, or one contains the other and covers at least
  half of it, or a rapidfuzz ratio >= 80. ``当前位置``/``我的位置``/``current location``/the
  user's own coordinate all mean ``current_location``.
* **travel mode** by alias (``驾车``/``开车``/``car``/``driving_route`` -> ``driving``, ...);
* **strategies** by :data:`mobility_env.tools.DRIVING_STRATEGIES` plus everyday phrasings
  (``避开高速``, ``avoid highways``), compared as sets;
* **transit lines** by :func:`canonical_line` (``地铁一号线`` == ``1号线``);
* **city** by :func:`mobility_env.canonical.canonical_city`; ``time`` by day word.

IE formula: ``IE = 1`` when every gold slot has an equal agent slot and the agent adds no
constraint the gold lacks (an extra ``strategy``, ``waypoints``, ``excluded_lines`` or
``travel_mode``); else 0. Informational extras (``city``, ``time``) are ignored.
Edge cases: slots not declared (None) -> 0. Empty gold slots are no free pass: IE = 1 only
when the agent explicitly declares ``{}`` (no constraints), else 0.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from rapidfuzz import fuzz

from mobility_env.canonical import canonical_city, canonical_flag, canonical_name
from mobility_env.geo import haversine_m
from mobility_env.reading.script import simplified
from mobility_env.tools import DRIVING_STRATEGIES, bounded_text_cache, parse_coordinate

from ..units import arabize

NAME_SIMILARITY = 80
CURRENT_LOCATION = "current_location"
CURRENT_LOCATION_RADIUS_M = 200.0

_CURRENT_WORDS = re.compile(
    r"^(current[_ ]?location|my location|here|current position|当前位置|当前的?位置|我的位置|我现在的?位置|"
    r"我现在的这个位置|现在的?位置|我这里|这里|我这|本地|当前所在地|所在位置|我所在的?位置)$")

TRAVEL_MODE_ALIASES: dict[str, str] = {
    **dict.fromkeys(("driving", "drive", "car", "driving_route", "驾车", "开车", "自驾", "自驾车", "驾驶", "taxi", "打车"),
                    "driving"),
    **dict.fromkeys(("walking", "walk", "foot", "on foot", "walking_route", "步行", "走路"), "walking"),
    **dict.fromkeys(("bicycling", "bicycle", "bike", "cycling", "cycle", "bicycling_route", "骑行", "骑车", "自行车",
                     "单车", "电动车"), "bicycling"),
    **dict.fromkeys(("transit", "bus", "public transit", "public transport", "subway", "metro", "bus_route", "公交",
                     "公共交通", "地铁", "公交车", "巴士", "公交地铁"), "transit"),
}

_STRATEGY_PHRASES: dict[str, str] = {
    "avoid highways": "不走高速", "no highways": "不走高速", "avoid highway": "不走高速", "no highway": "不走高速",
    "避开高速": "不走高速", "避免高速": "不走高速", "不上高速": "不走高速", "少走高速": "不走高速", "走低速": "不走高速",
    "highway first": "高速优先", "prefer highways": "高速优先", "走高速": "高速优先", "高速路优先": "高速优先",
    "avoid congestion": "躲避拥堵", "避开拥堵": "躲避拥堵", "避免拥堵": "躲避拥堵",
    "less toll": "少收费", "fewer tolls": "少收费", "avoid tolls": "少收费", "少收费用": "少收费", "不收费": "少收费",
    "main roads": "大路优先", "main road first": "大路优先", "fastest": "速度最快", "最快": "速度最快",
}

SLOT_KEY_ALIASES: dict[str, str] = {
    "start": "origin", "from": "origin", "source": "origin", "起点": "origin",
    "end": "destination", "to": "destination", "dest": "destination", "终点": "destination",
    "waypoint": "waypoints", "via": "waypoints", "stops": "waypoints", "途经点": "waypoints",
    "mode": "travel_mode", "travel_tool": "travel_mode", "transport": "travel_mode", "出行方式": "travel_mode",
    "strategies": "strategy", "preference": "strategy", "preferences": "strategy", "策略": "strategy",
    "excluded": "excluded_lines", "avoid_lines": "excluded_lines", "exclude_lines": "excluded_lines",
    "excluded_line": "excluded_lines", "避开线路": "excluded_lines",
    "keywords": "keyword", "query": "keyword", "poi": "keyword", "search": "keyword",
    "centre": "center", "near": "center", "around": "center",
    "road_name": "road", "name": "road",
    "need_forecast": "forecast", "date": "time", "day": "time",
    "user_location": "location", "coordinate": "location", "coordinates": "location",
}
CONSTRAINT_SLOTS = frozenset({"waypoints", "strategy", "excluded_lines", "travel_mode"})


# Agents choose these strings: the caches keep short ones (and, for folding, a few answer-sized
# ones), so what they hold stays bounded whatever an agent sends (see bounded_text_cache).
@bounded_text_cache(65536, 64)
def _cached_point(text: str) -> tuple[float, float] | None:
    return parse_coordinate(text)


def point_of(value: Any) -> tuple[float, float] | None:
    """``parse_coordinate`` with a cache (scoring parses the same coordinates many times)."""
    return _cached_point(value) if isinstance(value, str) else None


@bounded_text_cache(65536, 128, long_maxsize=64, long_max_chars=8192)
def _cached_fold(text: str) -> str:
    return canonical_name(simplified(text))  # names compared in one script (answers are read in Simplified)


@bounded_text_cache(16384, 64)
def _cached_city(text: str) -> str:
    return canonical_city(text)


def city_key(value: Any) -> str:
    """:func:`mobility_env.canonical.canonical_city` of ``str(value)``, cached."""
    return _cached_city(value if isinstance(value, str) else str(value or ""))


def fold_text(value: Any) -> str:
    """NFKC + lower case + punctuation/space removed (via :func:`canonical_name`), cached."""
    return _cached_fold(value) if isinstance(value, str) else ""


def _strip_brackets(text: str) -> str:
    return re.sub(r"[(（【\[].*?[)）】\]]", "", text)


def same_place_name(a: Any, b: Any) -> bool:
    """Two place names denote the same place (see the module docstring for the rule)."""
    if not isinstance(a, str) or not isinstance(b, str):
        return False
    fa, fb = fold_text(_strip_brackets(a)) or fold_text(a), fold_text(_strip_brackets(b)) or fold_text(b)
    if not fa or not fb:
        return False
    if fa == fb:
        return True
    short, long_ = sorted((fa, fb), key=len)
    if short in long_ and len(short) * 2 >= len(long_):
        return True
    return fuzz.ratio(fold_text(a), fold_text(b)) >= NAME_SIMILARITY or fuzz.ratio(fa, fb) >= NAME_SIMILARITY


def is_current_location(value: Any, user_location: str = "") -> bool:
    """``当前位置``, ``current location``, ... or a coordinate within 200 m of the user."""
    if not isinstance(value, str):
        return False
    text = unicodedata.normalize("NFKC", value).strip().lower()
    if _CURRENT_WORDS.match(text.replace(" ", "") if not text.isascii() else text):
        return True
    point, user = point_of(value), point_of(user_location)
    return point is not None and user is not None and haversine_m(point, user) <= CURRENT_LOCATION_RADIUS_M


def canonical_travel_mode(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    text = unicodedata.normalize("NFKC", value).strip().lower()
    return TRAVEL_MODE_ALIASES.get(text) or TRAVEL_MODE_ALIASES.get(text.replace("_", " "))


def canonical_strategy_set(value: Any) -> frozenset[str]:
    """Driving strategies as canonical Chinese labels; unknown phrases kept folded."""
    items = [value] if isinstance(value, str) else list(value) if isinstance(value, (list, tuple, set)) else []
    result = set()
    for item in items:
        if not isinstance(item, str) or not item.strip():
            continue
        text = unicodedata.normalize("NFKC", item).strip()
        canonical = DRIVING_STRATEGIES.get(text) or DRIVING_STRATEGIES.get(text.lower()) \
            or _STRATEGY_PHRASES.get(text.lower()) or _STRATEGY_PHRASES.get(text)
        result.add(canonical or fold_text(text))
    return frozenset(result)


_LINE_PREFIX = re.compile(r"^(北京|上海|广州|深圳)?(地铁|轨道交通|轨交|城轨|公交|metro|subway|line)")


def canonical_line(value: Any) -> str:
    """A transit line name folded for comparison: ``地铁一号线(西直门--...)`` -> ``1号线``."""
    return _canonical_line(value) if isinstance(value, str) else ""


@bounded_text_cache(16384, 128)
def _canonical_line(value: str) -> str:
    text = arabize(unicodedata.normalize("NFKC", value).strip().lower())
    text = re.split(r"[(（]", text)[0]
    text = _LINE_PREFIX.sub("", text.replace(" ", ""))
    text = re.sub(r"^(\d+)$", r"\1号线", text)  # "line 1" -> "1号线"
    return fold_text(text)


def line_uses(line_name: str, excluded: str) -> bool:
    """Does transit line ``line_name`` ride the excluded line ``excluded``?

    Digits must not run on across the match, so ``1号线`` does not hit ``11号线``/``地铁10号线``
    and ``206路`` does not hit ``1206路``; ``1号线`` does hit ``地铁1号线八通线`` (a through line).
    """
    line, target = canonical_line(line_name), canonical_line(excluded)
    if not line or not target:
        return False
    start = line.find(target)
    while start >= 0:  # non-overlapping occurrences, as re.finditer of the literal (no regex per name)
        end = start + len(target)
        before = line[start - 1] if start > 0 else ""
        after = line[end] if end < len(line) else ""
        if not (before.isdigit() or (target[-1].isdigit() and after.isdigit())):
            return True
        start = line.find(target, end)
    return False


def canonical_day(value: Any) -> str:
    text = fold_text(str(value)) if value is not None else ""
    return {"today": "今天", "now": "今天", "现在": "今天", "当前": "今天", "tomorrow": "明天",
            "dayaftertomorrow": "后天"}.get(text, text)


def normalize_slots(slots: dict[str, Any]) -> dict[str, Any]:
    """Agent slot keys mapped to the gold names (``mode`` -> ``travel_mode``, ...); empties dropped."""
    normalized: dict[str, Any] = {}
    for key, value in slots.items():
        name = str(key).strip().lower()
        name = SLOT_KEY_ALIASES.get(name, name)
        if value in (None, "", [], {}):
            continue
        normalized.setdefault(name, value)
    return normalized


def _as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, (list, tuple)) else [value]


def slot_matches(key: str, agent_value: Any, gold_value: Any, user_location: str = "") -> bool:
    """One slot compared after normalization (see the module docstring)."""
    if key in ("origin", "destination", "center", "location"):
        if is_current_location(gold_value, user_location) or gold_value == CURRENT_LOCATION:
            return is_current_location(agent_value, user_location) or agent_value == CURRENT_LOCATION
        gold_point, agent_point = point_of(gold_value), point_of(agent_value)
        if gold_point and agent_point:
            return haversine_m(gold_point, agent_point) <= CURRENT_LOCATION_RADIUS_M
        return same_place_name(agent_value, gold_value)
    if key == "waypoints":
        agent_list, gold_list = _as_list(agent_value), _as_list(gold_value)
        return len(agent_list) == len(gold_list) and all(
            slot_matches("destination", a, g, user_location) for a, g in zip(agent_list, gold_list))
    if key == "travel_mode":
        return canonical_travel_mode(agent_value) == canonical_travel_mode(gold_value)
    if key == "strategy":
        return canonical_strategy_set(agent_value) == canonical_strategy_set(gold_value)
    if key == "excluded_lines":
        agent_lines = {canonical_line(v) for v in _as_list(agent_value)} - {""}
        gold_lines = {canonical_line(v) for v in _as_list(gold_value)} - {""}
        return agent_lines == gold_lines
    if key == "city":
        return city_key(agent_value) == city_key(gold_value)
    if key == "forecast":
        return canonical_flag(agent_value) == canonical_flag(gold_value)
    if key == "time":
        return (canonical_day(agent_value) == canonical_day(gold_value)
                or same_place_name(str(agent_value), str(gold_value)))
    return same_place_name(str(agent_value), str(gold_value))


def intent_extraction_score(agent_slots: dict[str, Any] | None, gold_slots: dict[str, Any],
                            user_location: str = "") -> float:
    """IE in {0, 1}; see the module docstring for the rule and its edge cases."""
    if agent_slots is None or not isinstance(agent_slots, dict):
        return 0.0
    if not gold_slots:
        return 1.0 if not agent_slots else 0.0
    agent = normalize_slots(agent_slots)
    for key, gold_value in gold_slots.items():
        if key not in agent or not slot_matches(key, agent[key], gold_value, user_location):
            return 0.0
    extras = (CONSTRAINT_SLOTS & agent.keys()) - gold_slots.keys()
    return 0.0 if extras else 1.0
