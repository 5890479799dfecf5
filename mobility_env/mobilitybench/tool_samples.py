"""What ``MobilityBench-v0``'s action space samples: calls of the map tools with plausible argument values.

:func:`map_tool_space` is the env's :class:`~mobility_env.spaces.ToolCallSpace`: the OpenAI schemas of
:data:`~mobility_env.tools.TOOLS` and :func:`sample_map_argument`, which draws each argument by its
:class:`~mobility_env.tools.ParamSpec` role: coordinates ``"lng,lat"`` inside China, radii in metres, the
known driving and transit strategies, place names, keywords, roads and cities, and ``finish``'s fields.
Every sample passes :func:`~mobility_env.tools.validate_call`; most miss the sandbox (``no_cached_result``).
The coordinate and strategy samplers serve MobilePA's maps & travel tools too.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ..actions import ActionLimits
from .episode import SCENARIOS
from ..spaces import ToolCallSpace
from ..tools import (BUS_STRATEGIES, DRIVING_STRATEGIES, MAX_DRIVING_STRATEGIES, MAX_WAYPOINTS, RADIUS_RANGE, TOOLS,
                     openai_tools)

SAMPLE_CITIES = ("北京市", "上海市", "广州市", "深圳市", "杭州市", "南京市", "成都市", "武汉市", "西安市", "淮安市")
SAMPLE_PLACES = ("天安门", "北京南站", "人民广场", "西湖", "中山公园", "首都机场", "火车站", "市政府", "博物馆", "体育中心")
_SAMPLE_KEYWORDS = ("咖啡店", "银行", "加油站", "停车场", "医院", "酒店", "超市", "地铁站")
_SAMPLE_ROADS = ("机场路", "长安街", "中山路", "人民路", "解放大道", "二环路")
_SAMPLE_STEPS = ("locate origin", "locate destination", "route planning", "weather query", "traffic query",
                 "nearby search")
CHINA = ((73.5, 134.8), (18.2, 53.5))  # lng, lat ranges of sampled coordinates


def map_tool_space(limits: ActionLimits | None = None, seed: int | Any | None = None) -> ToolCallSpace:
    """``MobilityBench-v0``'s action space: the map tools and ``finish``, argument values by
    :func:`sample_map_argument`.

    >>> space = map_tool_space(seed=0)
    >>> call = space.sample(mask="weather_query")
    >>> call["name"], space.contains(call)
    ('weather_query', True)
    """
    return ToolCallSpace(openai_tools(), limits, seed, values=sample_map_argument)


def pick(items: tuple[str, ...] | list[str], rng: np.random.Generator) -> str:
    return items[int(rng.integers(len(items)))]


def sample_coordinate(rng: np.random.Generator) -> str:
    """A ``"lng,lat"`` point inside China (six decimals)."""
    (lng_low, lng_high), (lat_low, lat_high) = CHINA
    return f"{rng.uniform(lng_low, lng_high):.6f},{rng.uniform(lat_low, lat_high):.6f}"


def sample_waypoints(rng: np.random.Generator) -> list[str]:
    return [sample_coordinate(rng) for _ in range(int(rng.integers(1, MAX_WAYPOINTS + 1)))]


def sample_driving_strategies(rng: np.random.Generator) -> list[str]:
    """One or two distinct driving strategies (their Chinese labels)."""
    labels = sorted(set(DRIVING_STRATEGIES.values()))
    count = int(rng.integers(1, MAX_DRIVING_STRATEGIES + 1))
    return [labels[int(i)] for i in rng.choice(len(labels), size=count, replace=False)]


def sample_map_argument(tool: str, name: str, schema: Mapping[str, Any], rng: np.random.Generator) -> Any:
    """A value of argument ``name`` of map tool ``tool`` (a :data:`~mobility_env.spaces.ValueSampler`); None
    for what it does not know (the space then draws from ``schema``)."""
    spec = TOOLS.get(tool)
    param = spec.param_map.get(name) if spec is not None else None
    if param is None:
        return None
    if param.role == "coordinate":
        return sample_coordinate(rng)
    if param.role == "coordinate_list":
        return sample_waypoints(rng)
    if param.role == "city":
        return pick(SAMPLE_CITIES, rng)
    if param.role == "name":
        return pick(_SAMPLE_ROADS if tool == "traffic_status" else
                    _SAMPLE_KEYWORDS if tool == "search_around_poi" else SAMPLE_PLACES, rng)
    if param.role == "flag":
        return bool(rng.integers(2))
    if tool == "driving_route" and name == "strategy":
        return sample_driving_strategies(rng)
    if tool == "bus_route" and name == "strategy":
        return pick(list(BUS_STRATEGIES), rng)
    if name == "radius":
        return int(rng.integers(RADIUS_RANGE[0], RADIUS_RANGE[1] + 1))
    if tool == "reverse_geocoding":
        (lng_low, lng_high), (lat_low, lat_high) = CHINA
        low, high = (lng_low, lng_high) if name == "longitude" else (lat_low, lat_high)
        return f"{rng.uniform(low, high):.6f}"
    return _sample_finish_value(name, rng) if tool == "finish" else None


def _sample_finish_value(name: str, rng: np.random.Generator) -> Any:
    if name == "answer":
        return f"建议从{pick(SAMPLE_PLACES, rng)}出发，全程约{int(rng.integers(1, 60))}公里。"
    if name == "intent":
        return pick(SCENARIOS, rng)
    if name == "slots":
        return {"origin": pick(SAMPLE_PLACES, rng), "destination": pick(SAMPLE_PLACES, rng),
                "city": pick(SAMPLE_CITIES, rng)}
    if name == "plan":
        return [pick(_SAMPLE_STEPS, rng) for _ in range(int(rng.integers(1, 4)))]
    if name == "route_index":
        return int(rng.integers(3))
    return None
