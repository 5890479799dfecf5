"""Places beyond the landmarks: procedural neighbourhoods and confusable siblings.

Shops, banks and cafés are too many to list, so they are a deterministic function of where
you look: the city is cut into 700 m cells, and each cell holds 0-2 places of each
searchable category, drawn from ``(seed, city, category, cell)``. A search around any point
therefore sees the same places every time, whoever asks.

A *sibling* of a place is a different, real-looking place a user could confuse it with
(another branch of the same brand, the east campus of a hospital, phase II of a compound);
the generator records routes to siblings so that a wrong destination gets real evidence.
"""

from __future__ import annotations

import math
import re

from .catalog import CATEGORIES, NEARBY_CATEGORIES
from .geo import Point, haversine_m
from .seeding import rng_for
from .world import City, Poi, World

CELL_M = 1000.0
AROUND_RADIUS_M = 3000.0
_VARIANTS = ("二期", "(东门)", "北区", "(南区)", "东院区", "(西门)", "三期")


def _cell_points(world: World, city: City, category: str, cx: int, cy: int) -> list[Point]:
    """Where the places of ``category`` in cell (cx, cy) are (0-3 of them)."""
    rng = rng_for(world.seed, "cell", city.name, category, cx, cy)
    inner = abs(cx) * CELL_M < city.radius_m * 0.6 and abs(cy) * CELL_M < city.radius_m * 0.6
    density = 0.95 if inner else 0.5
    count = (rng.random() < density) + (rng.random() < density * 0.6) + (rng.random() < density * 0.3)
    return [city.point((cx + rng.random()) * CELL_M, (cy + rng.random()) * CELL_M) for _ in range(count)]


def _cell_place(world: World, city: City, category: str, cx: int, cy: int, k: int, point: Point) -> Poi:
    rng = rng_for(world.seed, "cell-place", city.name, category, cx, cy, k)
    place = city.nearest_ew(point)[0] if rng.random() < 0.5 else city.nearest_ns(point)[0]
    district = city.district_of(point)
    name, brand = CATEGORIES[category].make_name(rng, place, city.short, district)
    return Poi(name, category, point, district, city.street_address(point, f"{name}{k}"), brand)


def cell_places(world: World, city: City, category: str, cx: int, cy: int) -> list[Poi]:
    """The places of ``category`` in cell (cx, cy) of ``city`` (possibly none)."""
    return [_cell_place(world, city, category, cx, cy, k, p)
            for k, p in enumerate(_cell_points(world, city, category, cx, cy))]


def matches_keyword(poi: Poi, keyword: str) -> bool:
    """True when a user searching ``keyword`` would accept ``poi``."""
    spec = CATEGORIES.get(poi.category)
    words = spec.search_words(poi.brand) if spec else ()
    return keyword in words or keyword in poi.name


def categories_for_keyword(keyword: str) -> list[str]:
    """Searchable categories that a place found by ``keyword`` can belong to."""
    return [key for key in NEARBY_CATEGORIES
            if keyword in CATEGORIES[key].keywords
            or any(keyword in CATEGORIES[key].search_words(brand) for brand in CATEGORIES[key].brands)]


def search_around(world: World, city: City, center: Point, keyword: str | None, radius_m: float = AROUND_RADIUS_M,
                  limit: int = 8) -> list[tuple[Poi, float]]:
    """Places within ``radius_m`` of ``center`` that match ``keyword`` (any place if None), nearest first."""
    categories = categories_for_keyword(keyword) if keyword else list(NEARBY_CATEGORIES)
    x, y = city.xy(center)
    span = int(math.ceil(radius_m / CELL_M))
    cx0, cy0 = int(x // CELL_M), int(y // CELL_M)
    candidates: list[tuple[float, str, int, int, int, Point]] = []
    for category in categories:
        for cx in range(cx0 - span, cx0 + span + 1):
            for cy in range(cy0 - span, cy0 + span + 1):
                for k, point in enumerate(_cell_points(world, city, category, cx, cy)):
                    px, py = city.xy(point)
                    d = math.hypot(px - x, py - y)
                    if d <= radius_m:
                        candidates.append((d, category, cx, cy, k, point))
    candidates.sort(key=lambda c: (round(c[0], 3), c[1], c[2], c[3], c[4]))
    found: list[tuple[Poi, float]] = []
    for d, category, cx, cy, k, point in candidates:
        poi = _cell_place(world, city, category, cx, cy, k, point)
        if keyword and not matches_keyword(poi, keyword):
            continue
        found.append((poi, haversine_m(center, point)))
        if len(found) == limit:
            break
    return found


def _street(address: str) -> str:
    """The road part of an address ('花园区 星火路302号' -> '星火路')."""
    return re.sub(r"\d.*$", "", address.split(" ")[-1])


def sibling_of(world: World, city: City, poi: Poi, salt: str = "") -> Poi:
    """A different place with a confusable name, 1-6 km from ``poi``."""
    rng = rng_for(world.seed, "sibling", city.name, poi.name, salt)
    for _ in range(20):
        angle, dist = rng.uniform(0, 2 * math.pi), rng.uniform(1500, 6000)
        point = city.point(*(a + b for a, b in zip(city.xy(poi.location),
                                                   (dist * math.cos(angle), dist * math.sin(angle)))))
        district = city.district_of(point)
        if poi.brand:
            place = city.nearest_ew(point)[0] if rng.random() < 0.5 else city.nearest_ns(point)[0]
            suffix = CATEGORIES[poi.category].branch_suffix
            name = f"{poi.brand}({place}{suffix})"
        elif poi.category == "metro_station":
            name = poi.name.replace("(地铁站)", "(公交站)")
            point = city.point(*(a + b for a, b in zip(city.xy(poi.location),
                                                       (rng.uniform(-300, 300), rng.uniform(-300, 300)))))
        else:
            name = poi.name + _VARIANTS[rng.randrange(len(_VARIANTS))]
        address = city.street_address(point, name)
        # A sibling must be wrong by the verifier's own rule (not same district *and* road).
        same_spot = district == poi.district and _street(address) == _street(poi.address)
        if name != poi.name and not same_spot:
            return Poi(name, poi.category, point, district, address, poi.brand)
    raise RuntimeError(f"no sibling for {poi.name!r}")  # unreachable in practice: variants always differ


def keyword_for(poi: Poi, city: City, style: float) -> str:
    """What a user calls ``poi``: the full name, the name without the branch, or with the district."""
    base = poi.name
    if "(" in base and style < 0.35 and not poi.name.endswith("(地铁站)"):
        brand_part, branch = base[:-1].split("(", 1)
        return branch.removesuffix("支行").removesuffix("店") + brand_part.removeprefix("中国")
    if style > 0.85 and poi.category not in ("county", "metro_station"):
        return poi.district + base
    return base
