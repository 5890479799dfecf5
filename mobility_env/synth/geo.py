"""Plane geometry on a city scale: metres <-> degrees, distances, compass words, formats.

Coordinates are ``(lng, lat)`` tuples in degrees (GCJ-02 in the real data; here just
degrees). Local offsets use an equirectangular projection, which is accurate to well under
1 % over the < 200 km spans the generator uses.
"""

from __future__ import annotations

import math

from ..geo import EARTH_RADIUS_M, Point, haversine_m

__all__ = ["EARTH_RADIUS_M", "Point", "haversine_m"]  # re-exported for the generator modules

METRES_PER_DEGREE_LAT = 110_574.0
_COMPASS = ("东", "东北", "北", "西北", "西", "西南", "南", "东南")


def metres_per_degree_lng(lat: float) -> float:
    return 111_320.0 * math.cos(math.radians(lat))


def offset(origin: Point, east_m: float, north_m: float) -> Point:
    """The point ``east_m`` metres east and ``north_m`` metres north of ``origin``."""
    return (origin[0] + east_m / metres_per_degree_lng(origin[1]), origin[1] + north_m / METRES_PER_DEGREE_LAT)


def local_xy(origin: Point, point: Point) -> tuple[float, float]:
    """``point`` as (east, north) metres from ``origin``."""
    return ((point[0] - origin[0]) * metres_per_degree_lng(origin[1]), (point[1] - origin[1]) * METRES_PER_DEGREE_LAT)


def compass_word(dx: float, dy: float) -> str:
    """The Chinese compass direction ('东', '西北', ...) of a move by (dx east, dy north)."""
    if dx == 0 and dy == 0:
        return "东"
    angle = math.degrees(math.atan2(dy, dx)) % 360.0
    return _COMPASS[int((angle + 22.5) // 45) % 8]


def heading_between(a: Point, b: Point) -> str:
    dx, dy = local_xy(a, b)
    return compass_word(dx, dy)


def format_location(point: Point) -> str:
    """POI-style ``"lng,lat"`` with 6 decimals, as the map API returns them."""
    return f"{point[0]:.6f},{point[1]:.6f}"


def format_device_location(point: Point) -> str:
    """A phone GPS fix, with the long float tails the real ``user_current_location`` has."""
    return f"{point[0]:.13f},{point[1]:.13f}"


def parse_location(text: str) -> Point:
    lng, lat = text.split(",")
    return (float(lng), float(lat))


def distance_text(metres: float) -> str:
    """'184米' below a kilometre, else '4.5千米' (navigation instruction style)."""
    if metres < 1000:
        return f"{int(round(metres))}米"
    return f"{metres / 1000:.1f}千米"


def duration_text(seconds: float) -> str:
    """'37分钟', '1小时9分钟', '16小时57分钟' (the official ``duration`` column style)."""
    minutes = max(1, int(round(seconds / 60.0)))
    hours, minutes = divmod(minutes, 60)
    if hours == 0:
        return f"{minutes}分钟"
    return f"{hours}小时{minutes}分钟" if minutes else f"{hours}小时"
