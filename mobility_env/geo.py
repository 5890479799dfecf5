"""Great-circle geometry shared by the sandbox, the scorers and the synthetic world."""

from __future__ import annotations

import math

EARTH_RADIUS_M = 6_371_008.8  # mean Earth radius (IUGG)
Point = tuple[float, float]   # (lng, lat) in degrees


def haversine_m(a: Point, b: Point) -> float:
    """Great-circle distance in metres between two ``(lng, lat)`` points."""
    lng1, lat1, lng2, lat2 = map(math.radians, (a[0], a[1], b[0], b[1]))
    h = math.sin((lat2 - lat1) / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin((lng2 - lng1) / 2) ** 2
    return 2 * EARTH_RADIUS_M * math.asin(min(1.0, math.sqrt(h)))
