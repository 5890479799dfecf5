"""The nine MobilityBench map tools plus ``finish``, declared once.

Everything else derives from :data:`TOOLS`: the OpenAI function-calling list
(:func:`openai_tools`), argument validation (:func:`validate_call`), the markdown reference
(:func:`tools_markdown`) and the sandbox's notion of which arguments are coordinates, names or
options (:class:`ParamSpec.role`).

Argument names are the official ones. ``traffic_status`` is also accepted under its data
alias ``traffic_status_road_api`` (see :data:`TOOL_ALIASES`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from functools import lru_cache, wraps
from typing import Any, Callable, Literal, TypeVar

# Driving strategies: the Chinese labels used by the data are canonical; the English names
# of the released tool docstring are accepted as aliases.
DRIVING_STRATEGIES: dict[str, str] = {
    "躲避拥堵": "躲避拥堵",
    "高速优先": "高速优先",
    "不走高速": "不走高速",
    "少收费": "少收费",
    "大路优先": "大路优先",
    "速度最快": "速度最快",
    "avoid_congestion": "躲避拥堵",
    "highway_priority": "高速优先",
    "no_highway": "不走高速",
    "less_toll": "少收费",
    "main_road": "大路优先",
    "fastest": "速度最快",
}
# Amap transit strategy codes (6 is not offered by the official tool).
BUS_STRATEGIES: dict[str, str] = {
    "0": "推荐", "1": "最经济", "2": "最少换乘", "3": "最少步行",
    "4": "最舒适", "5": "不乘地铁", "7": "地铁优先", "8": "时间最短",
}
MAX_DRIVING_STRATEGIES = 2
MAX_WAYPOINTS = 5
RADIUS_RANGE = (1, 50_000)
MAX_TEXT_ARG = 200

TOOL_ALIASES = {"traffic_status_road_api": "traffic_status"}
_COORD = re.compile(r"^\s*(-?\d{1,3}(?:\.\d+)?)\s*,\s*(-?\d{1,2}(?:\.\d+)?)\s*$")

Role = Literal["coordinate", "coordinate_list", "name", "city", "option", "number", "text", "flag"]


@dataclass(frozen=True)
class ParamSpec:
    name: str
    type: Literal["string", "number", "boolean", "array", "object", "integer"]
    description: str
    required: bool = False
    role: Role = "text"
    enum: tuple[str, ...] | None = None
    items: dict[str, Any] | None = None
    # the argument's validation rule: (name, value) -> the broken rule or None (one of the check_* functions)
    check: Callable[[str, Any], "ArgumentError | None"] | None = field(default=None, compare=False, repr=False)

    def json_schema(self) -> dict[str, Any]:
        schema: dict[str, Any] = {"type": self.type, "description": self.description}
        if self.enum is not None:
            schema["enum"] = list(self.enum)
        if self.items is not None:
            schema["items"] = self.items
        return schema


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    params: tuple[ParamSpec, ...]
    # see mobility_env.mobilitybench.toolkinds
    kind: Literal["poi", "around", "geocode", "weather", "traffic", "route", "finish"]
    mode: str | None = None  # travel mode of a route tool
    official_column: str | None = None  # the official CSV column holding its responses (query_poi: see official.py)
    param_map: dict[str, ParamSpec] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "param_map", {p.name: p for p in self.params})
        object.__setattr__(self, "_required", tuple(p.name for p in self.params if p.required))

    @property
    def required(self) -> tuple[str, ...]:
        return self._required  # type: ignore[attr-defined]

    def openai_schema(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": {
                    "type": "object",
                    "properties": {p.name: p.json_schema() for p in self.params},
                    "required": list(self.required),
                    "additionalProperties": False,
                },
            },
        }


@dataclass(frozen=True)
class ArgumentError:
    """One broken validation rule; ``field`` is the argument name (or '' for the call)."""

    field: str
    rule: str
    message: str

    def __str__(self) -> str:
        return f"{self.field or 'call'}: {self.message}"


def canonical_tool_name(name: Any) -> str | None:
    """The registered tool name for ``name`` (aliases resolved), or None if unknown."""
    if type(name) is str and name in TOOLS:  # the common case, first
        return name
    if not isinstance(name, str):
        return None
    name = TOOL_ALIASES.get(name.strip(), name.strip())
    return name if name in TOOLS else None


_Result = TypeVar("_Result")


def bounded_text_cache(maxsize: int, max_chars: int, *, long_maxsize: int = 0,
                       long_max_chars: int = 0) -> Callable[[Callable[[str], _Result]], Callable[[str], _Result]]:
    """``functools.lru_cache`` for a function of one ``str`` that bounds what the cache keeps.

    Strings of up to ``max_chars`` characters share ``maxsize`` entries; with ``long_maxsize``,
    strings of up to ``long_max_chars`` share that many more (an answer folded many times while
    it is scored); longer strings are computed every time and never kept. Agents choose these
    strings, so an unbounded key length would let one agent pin gigabytes (4,096 distinct 1 MB
    coordinates). The wrapper has ``cache_clear()``, ``cache_info()`` (the short tier's) and
    ``cache_parts`` (the ``lru_cache`` of each tier) for tests.
    """
    if long_maxsize and long_max_chars <= max_chars:
        raise ValueError("long_max_chars must exceed max_chars")

    def decorate(function: Callable[[str], _Result]) -> Callable[[str], _Result]:
        short = lru_cache(maxsize=maxsize)(function)
        long_ = lru_cache(maxsize=long_maxsize)(function) if long_maxsize else None

        @wraps(function)
        def cached(text: str) -> _Result:
            size = len(text)
            if size <= max_chars:
                return short(text)
            if long_ is not None and size <= long_max_chars:
                return long_(text)
            return function(text)

        def cache_clear() -> None:
            for part in cached.cache_parts:  # type: ignore[attr-defined]
                part.cache_clear()

        cached.cache_parts = tuple(p for p in (short, long_) if p is not None)  # type: ignore[attr-defined]
        cached.cache_clear = cache_clear  # type: ignore[attr-defined]
        cached.cache_info = short.cache_info  # type: ignore[attr-defined]
        return cached

    return decorate


def parse_coordinate(value: Any) -> tuple[float, float] | None:
    """``"lng,lat"`` -> (lng, lat) when well formed and in range, else None."""
    if not isinstance(value, str):
        return None
    return _parse_coordinate_text(value)


# a step parses the same coordinates to validate and to canonicalize; longer texts are rare and not kept
@bounded_text_cache(4096, 64)
def _parse_coordinate_text(value: str) -> tuple[float, float] | None:
    match = _COORD.match(value)
    if not match:
        return None
    lng, lat = float(match.group(1)), float(match.group(2))
    if not (-180.0 <= lng <= 180.0 and -90.0 <= lat <= 90.0):
        return None
    return lng, lat


def _check_number_text(value: Any, low: float, high: float) -> bool:
    if isinstance(value, bool):
        return False
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):  # OverflowError: an int beyond the float range
        return False
    return math.isfinite(number) and low <= number <= high


# ---------------------------------------------------------------- argument checks, one per rule
# Each takes (argument name, value) and returns the broken rule or None; a ParamSpec names its check.
Check = Callable[[str, Any], "ArgumentError | None"]


def check_coordinate(name: str, value: Any) -> ArgumentError | None:
    if parse_coordinate(value) is None:
        return ArgumentError(name, "coordinate",
                             f"expected 'lng,lat' with lng in [-180,180] and lat in [-90,90], got {value!r:.80}")
    return None


def check_coordinate_list(name: str, value: Any) -> ArgumentError | None:
    if not isinstance(value, list):
        return ArgumentError(name, "type", f"expected a list of 'lng,lat' strings, got {type(value).__name__}")
    if len(value) > MAX_WAYPOINTS:
        return ArgumentError(name, "max_items", f"at most {MAX_WAYPOINTS} waypoints, got {len(value)}")
    for i, item in enumerate(value):
        if parse_coordinate(item) is None:
            return ArgumentError(name, "coordinate", f"item {i}: expected 'lng,lat', got {item!r:.80}")
    return None


def check_driving_strategies(name: str, value: Any) -> ArgumentError | None:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return ArgumentError(name, "type", f"expected a list of strategy names, got {type(value).__name__}")
    if len(value) > MAX_DRIVING_STRATEGIES:
        return ArgumentError(name, "max_items", f"at most {MAX_DRIVING_STRATEGIES} strategies, got {len(value)}")
    for item in value:
        if not isinstance(item, str) or item.strip() not in DRIVING_STRATEGIES:
            allowed = ", ".join(sorted(set(DRIVING_STRATEGIES.values())))
            return ArgumentError(name, "enum", f"unknown strategy {item!r:.40}; allowed: {allowed}")
    return None


def check_bus_strategy(name: str, value: Any) -> ArgumentError | None:
    if isinstance(value, bool) or str(value).strip() not in BUS_STRATEGIES:
        return ArgumentError(name, "enum",
                             f"unknown bus strategy {value!r:.40}; allowed codes: {', '.join(BUS_STRATEGIES)}")
    return None


def check_radius(name: str, value: Any) -> ArgumentError | None:
    if not _check_number_text(value, *RADIUS_RANGE) or float(value) != int(float(value)):
        return ArgumentError(name, "range", f"expected an integer number of metres in "
                                            f"{RADIUS_RANGE[0]}..{RADIUS_RANGE[1]}, got {value!r:.40}")
    return None


def _check_bounded_number(bound: float) -> Check:
    def check(name: str, value: Any) -> ArgumentError | None:
        if not _check_number_text(value, -bound, bound):
            return ArgumentError(name, "range", f"expected a number in [-{bound:g},{bound:g}], got {value!r:.40}")
        return None
    return check


check_longitude = _check_bounded_number(180.0)
check_latitude = _check_bounded_number(90.0)


def check_flag(name: str, value: Any) -> ArgumentError | None:
    if not isinstance(value, bool) and str(value).strip().lower() not in ("true", "false"):
        return ArgumentError(name, "type", f"expected true or false, got {value!r:.40}")
    return None


def _check_text(max_length: int | None) -> Check:
    def check(name: str, value: Any) -> ArgumentError | None:
        if not isinstance(value, str) or not value.strip():
            return ArgumentError(name, "type", f"expected a non-empty string, got {value!r:.40}")
        if max_length is not None and len(value) > max_length:
            return ArgumentError(name, "max_length", f"at most {max_length} characters, got {len(value)}")
        return None
    return check


check_short_text = _check_text(MAX_TEXT_ARG)  # map-tool arguments
check_long_text = _check_text(None)  # the final answer: ActionLimits bounds it


def check_integer_or_null(name: str, value: Any) -> ArgumentError | None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
        return ArgumentError(name, "type", f"expected an integer or null, got {value!r:.40}")
    return None


def check_array(name: str, value: Any) -> ArgumentError | None:
    if not isinstance(value, list):
        return ArgumentError(name, "type", f"expected a list, got {type(value).__name__}")
    return None


def check_object(name: str, value: Any) -> ArgumentError | None:
    if not isinstance(value, dict):
        return ArgumentError(name, "type", f"expected an object, got {type(value).__name__}")
    return None


_ORIGIN = ParamSpec("origin", "string", "Origin coordinate 'lng,lat', e.g. '116.481499,39.990755'.", True, "coordinate",
                    check=check_coordinate)
_DEST = ParamSpec("destination", "string", "Destination coordinate 'lng,lat'.", True, "coordinate",
                  check=check_coordinate)
_STR_LIST = {"type": "string"}

_QUERY_POI_DESCRIPTION = ("Look up a place (POI, address, road, city) by keywords; "
                          "returns its name, address and 'lng,lat' location.")
_DRIVING_ROUTE_DESCRIPTION = "Driving routes between two coordinates, with optional strategies and ordered waypoints."

TOOLS: dict[str, ToolSpec] = {spec.name: spec for spec in (
    ToolSpec("query_poi", _QUERY_POI_DESCRIPTION, (
        ParamSpec("keywords", "string", "Place name or address to look up.", True, "name", check=check_short_text),
        ParamSpec("city", "string", "City to search in, e.g. '北京市' (optional).", False, "city",
                  check=check_short_text),
    ), "poi"),
    ToolSpec("search_around_poi", "Search POIs around a coordinate, optionally filtered by keywords.", (
        ParamSpec("location", "string", "Centre coordinate 'lng,lat'.", True, "coordinate", check=check_coordinate),
        ParamSpec("keywords", "string", "What to look for, e.g. '银行', '咖啡店' (optional).", False, "name",
                  check=check_short_text),
        ParamSpec("radius", "integer", f"Search radius in metres, {RADIUS_RANGE[0]}..{RADIUS_RANGE[1]} (optional).",
                  False, "number", check=check_radius),
    ), "around", official_column="near_poi_ans"),
    ToolSpec("reverse_geocoding", "Turn a coordinate into an address with nearby roads and POIs.", (
        ParamSpec("longitude", "string", "Longitude, -180..180.", True, "number", check=check_longitude),
        ParamSpec("latitude", "string", "Latitude, -90..90.", True, "number", check=check_latitude),
        ParamSpec("radius", "integer", f"Search radius in metres, {RADIUS_RANGE[0]}..{RADIUS_RANGE[1]} (optional).",
                  False, "number", check=check_radius),
    ), "geocode", official_column="location_ans"),
    ToolSpec("weather_query", "Current weather of a city, or a 4-day forecast when need_forecast is true.", (
        ParamSpec("city", "string", "City name, e.g. '淮安市'.", True, "city", check=check_short_text),
        ParamSpec("need_forecast", "boolean", "True for the multi-day forecast (optional, default false).", False,
                  "flag", check=check_flag),
    ), "weather", official_column="weather"),
    ToolSpec("traffic_status", "Live traffic state (畅通/缓行/拥堵) of a named road in a city.", (
        ParamSpec("name", "string", "Road name, e.g. '机场路'.", True, "name", check=check_short_text),
        ParamSpec("city", "string", "City the road is in.", True, "city", check=check_short_text),
    ), "traffic", official_column="ans"),
    ToolSpec("driving_route", _DRIVING_ROUTE_DESCRIPTION, (
        _ORIGIN, _DEST,
        ParamSpec("strategy", "array",
                  f"Up to {MAX_DRIVING_STRATEGIES} of: {', '.join(sorted(set(DRIVING_STRATEGIES.values())))} "
                  f"(English aliases accepted).", False, "option",
                  items=_STR_LIST, check=check_driving_strategies),
        ParamSpec("waypoints", "array", f"Up to {MAX_WAYPOINTS} ordered waypoint coordinates 'lng,lat'.", False,
                  "coordinate_list", items=_STR_LIST, check=check_coordinate_list),
    ), "route", mode="driving", official_column="route_ans"),
    ToolSpec("walking_route", "Walking routes between two coordinates.", (_ORIGIN, _DEST), "route", mode="walking",
             official_column="route_ans"),
    ToolSpec("bicycling_route", "Cycling routes between two coordinates.", (_ORIGIN, _DEST), "route",
             mode="bicycling", official_column="route_ans"),
    ToolSpec("bus_route", "Public transit (bus, metro, rail) routes between two coordinates.", (
        _ORIGIN, _DEST,
        ParamSpec("strategy", "string",
                  "One code: " + ", ".join(f"{k}={v}" for k, v in BUS_STRATEGIES.items()) + " (optional, default 0).",
                  False, "option", enum=tuple(BUS_STRATEGIES), check=check_bus_strategy),
    ), "route", mode="transit", official_column="route_ans"),
    ToolSpec("finish", "End the episode with the final answer. Only 'answer' is required.", (
        ParamSpec("answer", "string", "The final answer to the user, in their language.", True, "text",
                  check=check_long_text),
        ParamSpec("intent", "string", "The task scenario you identified, e.g. 'Point-to-Point Planning'.", False,
                  "text", check=check_long_text),
        ParamSpec("slots", "object", "Extracted constraints: origin, destination, waypoints, strategy, travel_mode, "
                                     "excluded_lines, road, city, keyword, time.", False, "text", check=check_object),
        ParamSpec("plan", "array", "Atomic steps you followed, e.g. ['locate destination', 'route planning'].", False,
                  "text", items=_STR_LIST, check=check_array),
        ParamSpec("route_index", "integer",
                  "0-based index of the chosen path/transit in the route response you answer from.", False, "number",
                  check=check_integer_or_null),
    ), "finish"),
)}

MAP_TOOLS: tuple[str, ...] = tuple(name for name in TOOLS if name != "finish")


def validate_call(name: str, arguments: Any) -> list[ArgumentError]:
    """All broken rules of a call to the registered tool ``name`` (empty list = valid).

    Checks, in order: arguments is an object, every required field present, no unknown
    field, and each value's type and range.
    """
    spec = TOOLS[canonical_tool_name(name) or name]
    if not isinstance(arguments, dict):
        return [ArgumentError("", "type", f"arguments must be a JSON object, got {type(arguments).__name__}")]
    errors = [ArgumentError(req, "required", "required field is missing")
              for req in spec.required if arguments.get(req) is None]
    errors += [ArgumentError(str(key)[:40], "unknown_field",
                             f"unknown field; {spec.name} takes {', '.join(spec.param_map)}")
               for key in arguments if key not in spec.param_map]
    for key, value in arguments.items():
        param = spec.param_map.get(key)
        if param is None or value is None:
            continue
        error = param.check(key, value) if param.check is not None else None
        if error is not None:
            errors.append(error)
    return errors


def openai_tools(include_finish: bool = True) -> list[dict[str, Any]]:
    """The OpenAI function-calling ``tools`` list, derived from :data:`TOOLS`."""
    return [spec.openai_schema() for spec in TOOLS.values() if include_finish or spec.name != "finish"]


def tools_markdown() -> str:
    """A markdown reference of every tool and argument (used in docs and prompts)."""
    lines = []
    for spec in TOOLS.values():
        args = ", ".join(p.name + ("" if p.required else "?") for p in spec.params)
        lines.append(f"- `{spec.name}({args})`: {spec.description}")
        lines.extend(f"  - `{p.name}` ({p.type}{', required' if p.required else ''}): {p.description}"
                     for p in spec.params)
    return "\n".join(lines)
