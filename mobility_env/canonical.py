"""Canonical forms of tool arguments, so equal requests get equal sandbox keys.

* coordinates: rounded to 6 decimals (about 0.1 m), ``"lng,lat"``;
* cities: NFKC, spaces removed, administrative suffixes (市/省/区/县/地区/自治州...) dropped;
* names (keywords, roads): NFKC, lower case, spaces and most punctuation removed;
* driving strategies: aliases resolved, de-duplicated and sorted; bus strategy code as text
  (default ``"0"``); waypoints canonicalized but kept in order (order changes the route).

``canonical_request`` returns the features the sandbox matches on: the exact ``key`` and the
pieces used by the fuzzy (``name``, ``city``) and nearest-coordinate (``points``) stages.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any, Callable

from .tools import DRIVING_STRATEGIES, TOOLS, bounded_text_cache, canonical_tool_name, parse_coordinate

COORD_DECIMALS = 6
_CITY_SUFFIXES = ("特别行政区", "自治州", "自治县", "自治区", "地区", "新区", "市", "省", "区", "县", "盟", "旗")
_SPACE = re.compile(r"\s+")
_NAME_DROP = re.compile(r"[\s\u3000·•\-_,，。.、/\\'\"“”‘’()（）\[\]【】]+")


def canonical_coordinate(value: Any) -> str | None:
    point = parse_coordinate(value)
    if point is None:
        return None
    return f"{point[0]:.{COORD_DECIMALS}f},{point[1]:.{COORD_DECIMALS}f}"


def canonical_city(value: Any) -> str:
    if not isinstance(value, str):
        return ""
    text = _SPACE.sub("", unicodedata.normalize("NFKC", value))
    for suffix in _CITY_SUFFIXES:
        if text.endswith(suffix) and len(text) - len(suffix) >= 2:
            return text[: -len(suffix)]
    return text


def canonical_name(value: Any) -> str:
    if not isinstance(value, str):
        return ""
    return _NAME_DROP.sub("", unicodedata.normalize("NFKC", value).lower())


def canonical_strategies(value: Any) -> str:
    if value is None or value == "":
        return ""
    items = [value] if isinstance(value, str) else list(value) if isinstance(value, (list, tuple)) else []
    names = {DRIVING_STRATEGIES.get(str(item).strip(), str(item).strip()) for item in items}
    return "+".join(sorted(n for n in names if n))


def canonical_flag(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() == "true"
    return bool(value)


@dataclass(frozen=True)
class CanonicalRequest:
    """The matchable features of one call.

    ``points`` are the coordinates that must all be near for a nearest-coordinate match
    (origin, destination, then waypoints in order); ``options`` must be equal exactly.
    """

    tool: str
    key: str
    name: str = ""
    city: str = ""
    points: tuple[tuple[float, float], ...] = ()
    options: str = ""


def canonical_request(tool: str, arguments: dict[str, Any]) -> CanonicalRequest:
    """Canonical features of a *valid* call (validate with ``tools.validate_call`` first): the
    canonicalizer of the tool's kind (:data:`CANONICALIZERS`, part of its
    :class:`~mobility_env.mobilitybench.toolkinds.ToolKind`)."""
    tool = canonical_tool_name(tool) or tool
    return CANONICALIZERS[TOOLS[tool].kind](tool, arguments)


def canonical_poi(tool: str, args: dict[str, Any]) -> CanonicalRequest:
    name, city = canonical_name(args.get("keywords")), canonical_city(args.get("city"))
    return CanonicalRequest(tool, f"{name}|{city}", name=name, city=city)


def canonical_traffic(tool: str, args: dict[str, Any]) -> CanonicalRequest:
    name, city = canonical_name(args.get("name")), canonical_city(args.get("city"))
    return CanonicalRequest(tool, f"{name}|{city}", name=name, city=city)


def canonical_weather(tool: str, args: dict[str, Any]) -> CanonicalRequest:
    city = canonical_city(args.get("city"))
    options = "forecast" if canonical_flag(args.get("need_forecast")) else "now"
    return CanonicalRequest(tool, f"{city}|{options}", name=city, city=city, options=options)


def canonical_around(tool: str, args: dict[str, Any]) -> CanonicalRequest:
    location = canonical_coordinate(args.get("location")) or ""
    name = canonical_name(args.get("keywords"))
    return CanonicalRequest(tool, f"{location}|{name}", name=name, points=_points(location))


def canonical_geocode(tool: str, args: dict[str, Any]) -> CanonicalRequest:
    location = canonical_coordinate(_coordinate_text(args.get("longitude"), args.get("latitude"))) or ""
    return CanonicalRequest(tool, location, points=_points(location))


def canonical_route(tool: str, args: dict[str, Any]) -> CanonicalRequest:
    origin, origin_point = _canonical_point(args.get("origin"))
    destination, destination_point = _canonical_point(args.get("destination"))
    waypoints, waypoint_points = [], []
    for value in args.get("waypoints") or []:
        text, point = _canonical_point(value)
        waypoints.append(text)
        waypoint_points.append(point)
    if tool == "bus_route":  # one strategy code (default "0"); driving: a set of strategy names
        options = str(args.get("strategy") if args.get("strategy") not in (None, "") else "0").strip()
    else:
        options = canonical_strategies(args.get("strategy"))
    key = f"{origin}|{destination}|{options}|{';'.join(waypoints)}"
    points = tuple(p for p in (origin_point, destination_point, *waypoint_points) if p is not None)
    return CanonicalRequest(tool, key, points=points, options=options)


#: The canonicalizer of each tool kind: (tool, valid arguments) -> CanonicalRequest.
CANONICALIZERS: dict[str, Callable[[str, dict[str, Any]], CanonicalRequest]] = {
    "poi": canonical_poi, "traffic": canonical_traffic, "weather": canonical_weather, "around": canonical_around,
    "geocode": canonical_geocode, "route": canonical_route,
}


def _canonical_point(value: Any) -> tuple[str, tuple[float, float] | None]:
    """(canonical text or '', its point) in one parse; the point is the float of the 6-decimal
    text (``round`` is correctly rounded: ``round(x, 6) == float(f"{x:.6f}")``)."""
    return _canonical_point_text(value) if isinstance(value, str) else ("", None)


@bounded_text_cache(4096, 64)  # agents repeat coordinates (home, the user's location) across calls
def _canonical_point_text(value: str) -> tuple[str, tuple[float, float] | None]:
    point = parse_coordinate(value)
    if point is None:
        return "", None
    lng, lat = point
    return (f"{lng:.{COORD_DECIMALS}f},{lat:.{COORD_DECIMALS}f}",
            (round(lng, COORD_DECIMALS), round(lat, COORD_DECIMALS)))


def _coordinate_text(lng: Any, lat: Any) -> str:
    """'lng,lat' from numbers or numeric text as validation accepts them (116.4, '1e-07', ' 39.9 ')."""
    try:
        return f"{float(lng):.{COORD_DECIMALS}f},{float(lat):.{COORD_DECIMALS}f}"
    except (TypeError, ValueError):
        return f"{lng},{lat}"


def _points(*coordinates: str) -> tuple[tuple[float, float], ...]:
    points = []
    for text in coordinates:
        point = parse_coordinate(text)
        if point is not None:
            points.append(point)
    return tuple(points)
