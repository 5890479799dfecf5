"""The synthetic world: cities with districts, a road grid, highways and transit lines.

``World(seed)`` is cheap to create; each :class:`City` is built on first use from
``(seed, city name)`` only, so a city is the same whatever else was generated. Geometry
lives in local metres around the city centre (``x`` east, ``y`` north):

* **arterials** form a grid: east-west roads at fixed ``y``, north-south roads at fixed ``x``;
* **elevated expressways** (``…高架路``/``…快速路``) are untolled and are not highways;
* **highways** (names containing ``高速``) are tolled: a ring road and national highways
  leaving the city on fixed bearings, so a trip uses the one pointing toward its destination;
* **national/provincial roads** (``…国道``/``…省道``) are the untolled way between towns;
* **transit lines**: metro lines cross the centre, bus lines (three-digit numbers, so no
  line's short name is a substring of another's) wander the city; stops are named.

Traffic on every named road is a deterministic function of ``(seed, city, road)``.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

import numpy as np

from . import names
from .catalog import CATEGORIES, LANDMARK_MIX
from .geo import Point, local_xy, offset
from .seeding import rng_for, unit_interval

TRAFFIC_STATES = ("畅通", "缓行", "拥堵")   # what World.traffic_state returns
SPEED_FACTOR = {"畅通": 1.0, "缓行": 0.6, "拥堵": 0.35}


@dataclass(frozen=True)
class Poi:
    """A named place. ``address`` is the street part ('解放路18号')."""

    name: str
    category: str
    location: Point
    district: str
    address: str
    brand: str = ""
    lines: tuple[str, ...] = ()     # metro lines serving a station POI


@dataclass
class Line:
    """A metro or bus line: ``name`` as the API prints it, ``short`` as users say it."""

    name: str
    short: str
    kind: str                        # 'metro' | 'bus'
    line_id: str
    stop_names: list[str]
    stop_points: list[Point]
    stop_xy: np.ndarray              # (n, 2) local metres
    cumulative_m: np.ndarray         # distance along the line at each stop

    @property
    def type_label(self) -> str:
        return "地铁线路" if self.kind == "metro" else "普通公交线路"


@dataclass
class City:
    seed: names.CitySeed
    center: Point
    radius_m: float
    districts: list[tuple[str, Point]]
    townships: dict[str, list[str]]
    ew_roads: list[tuple[str, float]]     # (name, y)
    ns_roads: list[tuple[str, float]]     # (name, x)
    streets: list[str]
    elevated: list[str]
    ring_highway: str
    highways: list[tuple[str, float]]     # (name, bearing in degrees, 0 = east)
    national_roads: list[str]
    counties: list[Poi] = field(default_factory=list)
    landmarks: list[Poi] = field(default_factory=list)
    stations: list[Poi] = field(default_factory=list)
    lines: list[Line] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.seed.name

    @property
    def short(self) -> str:
        return self.seed.short

    @property
    def province(self) -> str:
        return self.seed.province

    def xy(self, point: Point) -> tuple[float, float]:
        return local_xy(self.center, point)

    def point(self, x: float, y: float) -> Point:
        return offset(self.center, x, y)

    def district_of(self, point: Point) -> str:
        x, y = self.xy(point)
        best, best_d = self.districts[0][0], math.inf
        for name, (dx, dy) in self._district_xy:
            d = (dx - x) ** 2 + (dy - y) ** 2
            if d < best_d:
                best, best_d = name, d
        return best

    @property
    def _district_xy(self) -> list[tuple[str, tuple[float, float]]]:
        cached = self.__dict__.get("_district_xy_cache")
        if cached is None:
            cached = self.__dict__["_district_xy_cache"] = [(n, self.xy(p)) for n, p in self.districts]
        return cached

    def township_of(self, point: Point) -> str:
        district = self.district_of(point)
        x, y = self.xy(point)
        options = self.townships[district]
        return options[int(unit_interval(self.name, "township", int(x // 3000), int(y // 3000)) * len(options))]

    def nearest_ew(self, point: Point, rank: int = 0) -> tuple[str, float]:
        y = self.xy(point)[1]
        if rank == 0:
            return min(self.ew_roads, key=lambda r: abs(r[1] - y))
        return sorted(self.ew_roads, key=lambda r: abs(r[1] - y))[rank]

    def nearest_ns(self, point: Point, rank: int = 0) -> tuple[str, float]:
        x = self.xy(point)[0]
        if rank == 0:
            return min(self.ns_roads, key=lambda r: abs(r[1] - x))
        return sorted(self.ns_roads, key=lambda r: abs(r[1] - x))[rank]

    def street_near(self, point: Point, salt: str = "") -> str:
        x, y = self.xy(point)
        return self.streets[int(unit_interval(self.name, "street", int(x // 400), int(y // 400), salt)
                                * len(self.streets))]

    def highway_toward(self, bearing: float) -> str:
        """The national highway whose bearing is closest to ``bearing`` (degrees, 0 = east)."""
        return min(self.highways, key=lambda h: abs((h[1] - bearing + 180) % 360 - 180))[0]

    def street_address(self, point: Point, salt: str = "") -> str:
        road = (self.nearest_ew(point)[0] if unit_interval(self.name, "addr", point, salt) < 0.5
                else self.nearest_ns(point)[0])
        return f"{road}{1 + int(unit_interval(self.name, 'no', point, salt) * 400)}号"

    def random_point(self, rng: random.Random, spread: float = 0.85) -> Point:
        r = self.radius_m * spread * math.sqrt(rng.random())
        a = rng.random() * 2 * math.pi
        return self.point(r * math.cos(a), r * math.sin(a))


def _unique_names(rng: random.Random, make, count: int, taken: set[str]) -> list[str]:
    out: list[str] = []
    while len(out) < count:
        name = make(rng)
        if name not in taken:
            taken.add(name)
            out.append(name)
    return out


class World:
    """All cities of one seed, each built lazily and cached on this instance."""

    def __init__(self, seed: int):
        self.seed = int(seed)
        self._cities: dict[str, City] = {}
        self.city_names: tuple[str, ...] = tuple(c.name for c in names.CITY_SEEDS)
        self._seeds = {c.name: c for c in names.CITY_SEEDS}
        self.derived: dict[tuple[str, str], object] = {}   # per-city indexes built by other modules

    def city(self, name: str) -> City:
        if name not in self._cities:
            self._cities[name] = _build_city(self.seed, self._seeds[name])
        return self._cities[name]

    def traffic_state(self, city: str, road: str) -> str:
        """'畅通' / '缓行' / '拥堵' for a named road; highways are mostly free-flowing."""
        u = unit_interval(self.seed, "traffic", city, road)
        if "高速" in road:
            return "畅通" if u < 0.8 else "缓行"
        return "畅通" if u < 0.55 else ("缓行" if u < 0.85 else "拥堵")


def _build_city(seed: int, city_seed: names.CitySeed) -> City:
    rng = rng_for(seed, "city", city_seed.name)
    center = (city_seed.lng, city_seed.lat)
    radius = city_seed.radius_km * 1000.0
    taken: set[str] = set()
    district_names = _unique_names(rng, names.district_name, 4 + int(city_seed.radius_km // 5), taken)
    districts = []
    for i, dname in enumerate(district_names):
        angle = 2 * math.pi * i / len(district_names) + rng.uniform(-0.3, 0.3)
        r = 0.0 if i == 0 else radius * rng.uniform(0.3, 0.75)
        districts.append((dname, offset(center, r * math.cos(angle), r * math.sin(angle))))
    townships = {d: _unique_names(rng, names.township_name, 3, taken) for d in district_names}
    n_grid = 6 + int(city_seed.radius_km // 4)
    road_names = _unique_names(rng, names.road_name, 2 * n_grid, taken)
    ew = [(road_names[i], -radius + (i + 0.5) * 2 * radius / n_grid + rng.uniform(-300, 300)) for i in range(n_grid)]
    ns = [(road_names[n_grid + i], -radius + (i + 0.5) * 2 * radius / n_grid + rng.uniform(-300, 300))
          for i in range(n_grid)]
    streets = _unique_names(rng, names.street_name, 16, taken)
    elevated = [f"{s}{names.pick(rng, ('高架路', '快速路'))}"
                for s in _unique_names(rng, lambda r: names.pick(r, names.STEMS), 2, taken)]
    highway_names = rng.sample(names.NATIONAL_HIGHWAYS, 4)
    bearings = rng.sample(range(0, 360, 45), 4)
    highways = [(h, float(b)) for h, b in zip(highway_names, bearings)]
    national = [f"{n}国道" for n in rng.sample(names.NATIONAL_ROAD_NUMBERS, 2)] + [f"S{rng.randint(201, 399)}省道"]
    city = City(city_seed, center, radius, districts, townships, ew, ns, streets, elevated,
                f"{city_seed.short}绕城高速", highways, national)
    city.counties = _build_counties(rng, city, taken)
    city.lines = _build_lines(rng, city, taken)
    city.stations = _build_station_pois(city)
    city.landmarks = _build_landmarks(rng, city)
    return city


def _build_counties(rng: random.Random, city: City, taken: set[str]) -> list[Poi]:
    counties = []
    for cname in _unique_names(rng, names.county_name, 4, taken):
        angle, dist = rng.uniform(0, 2 * math.pi), rng.uniform(28_000, 90_000)
        point = offset(city.center, dist * math.cos(angle), dist * math.sin(angle))
        counties.append(Poi(cname, "county", point, cname, f"{cname}人民政府"))
    return counties


def _line_geometry(rng: random.Random, city: City, start: tuple[float, float], angle: float,
                   length: float, spacing: float) -> list[tuple[float, float]]:
    count = max(4, int(length / spacing))
    bend = rng.uniform(-0.25, 0.25)
    pts = []
    for i in range(count):
        t = i * spacing
        a = angle + bend * math.sin(math.pi * i / count)
        x = start[0] + t * math.cos(a) + rng.uniform(-120, 120)
        y = start[1] + t * math.sin(a) + rng.uniform(-120, 120)
        pts.append((x, y))
    return pts


def _make_line(rng: random.Random, city: City, kind: str, number: int, pts, taken_stops: set[str]) -> Line:
    stop_names = []
    for _ in pts:
        name = names.station_name(rng)
        while name in taken_stops:
            name = names.station_name(rng)
        taken_stops.add(name)
        stop_names.append(name)
    if kind == "bus":
        stop_names[0] = stop_names[0].rstrip("东西南北") + names.pick(rng, names.BUS_TERMINAL_SUFFIXES)
        stop_names[-1] = stop_names[-1].rstrip("东西南北") + names.pick(rng, names.BUS_TERMINAL_SUFFIXES)
    xy = np.array(pts, dtype=float)
    cumulative = np.concatenate([[0.0], np.cumsum(np.hypot(*np.diff(xy, axis=0).T))])
    if kind == "metro":
        short = f"{number}号线"
        name = f"{city.seed.metro_prefix}{short}({stop_names[0]}--{stop_names[-1]})"
    else:
        short = f"{number}路"
        variant = names.pick(rng, ("", "", "", "", "快外", "外环", "区间", "快车"))
        name = f"{short}{variant}({stop_names[0]}--{stop_names[-1]})"
    line_id = f"{abs(hash_int(city.name)) % 900000 + 100000}{number:03d}{'M' if kind == 'metro' else 'B'}"
    return Line(name, short, kind, line_id, stop_names, [city.point(x, y) for x, y in pts], xy, cumulative)


def hash_int(text: str) -> int:
    return int(unit_interval("line-id", text) * 1e9)


def _build_lines(rng: random.Random, city: City, taken: set[str]) -> list[Line]:
    lines: list[Line] = []
    stops: set[str] = set()
    radius = city.radius_m
    for k in range(1, city.seed.metro_lines + 1):
        angle = math.pi * (k - 1) / max(1, city.seed.metro_lines) + rng.uniform(-0.2, 0.2)
        shift = rng.uniform(-0.25, 0.25) * radius
        sx, sy = (-math.cos(angle) * radius * 0.9 - math.sin(angle) * shift,
                  -math.sin(angle) * radius * 0.9 + math.cos(angle) * shift)
        pts = _line_geometry(rng, city, (sx, sy), angle, 1.8 * radius, rng.uniform(1100, 1600))
        lines.append(_make_line(rng, city, "metro", k, pts, stops))
    numbers = rng.sample(range(101, 999), int(24 + 3 * city.seed.radius_km))
    for number in numbers:
        r, a = radius * 0.8 * math.sqrt(rng.random()), rng.uniform(0, 2 * math.pi)
        start = (r * math.cos(a), r * math.sin(a))
        toward_center = math.atan2(-start[1], -start[0]) + rng.uniform(-0.9, 0.9)
        pts = _line_geometry(rng, city, start, toward_center, rng.uniform(7000, 16000), rng.uniform(550, 800))
        lines.append(_make_line(rng, city, "bus", number, pts, stops))
    return lines


def _build_station_pois(city: City) -> list[Poi]:
    """One '(地铁站)' POI per metro stop name, listing the lines that serve it."""
    served: dict[str, tuple[Point, list[str]]] = {}
    for line in city.lines:
        if line.kind != "metro":
            continue
        for stop, point in zip(line.stop_names, line.stop_points):
            served.setdefault(stop, (point, []))[1].append(line.short)
    return [Poi(f"{stop}(地铁站)", "metro_station", point, city.district_of(point), "/".join(served_lines),
                lines=tuple(served_lines))
            for stop, (point, served_lines) in served.items()]


def _build_landmarks(rng: random.Random, city: City) -> list[Poi]:
    pois: list[Poi] = []
    seen: set[str] = set()
    hubs = [(f"{city.short}站", 0.2), (f"{city.short}东站", 0.5), (f"{city.short}南站", 0.6),
            (f"{city.short}汽车客运站", 0.3), (f"{city.short}{names.pick(rng, names.STEMS)}国际机场", 0.95)]
    for hub, spread in hubs:
        a = rng.uniform(0, 2 * math.pi)
        point = city.point(city.radius_m * spread * math.cos(a), city.radius_m * spread * math.sin(a))
        kind = "airport" if hub.endswith("机场") else "railway_station"
        pois.append(Poi(hub, kind, point, city.district_of(point), city.street_address(point)))
        seen.add(hub)
    kinds = [k for k, w in LANDMARK_MIX for _ in range(w)]
    while len(pois) < 130:
        category = CATEGORIES[names.pick(rng, kinds)]
        point = city.random_point(rng)
        district = city.district_of(point)
        place = city.nearest_ew(point)[0] if rng.random() < 0.5 else city.nearest_ns(point)[0]
        name, brand = category.make_name(rng, place, city.short, district)
        if name in seen:
            continue
        seen.add(name)
        pois.append(Poi(name, category.key, point, district, city.street_address(point, name), brand))
    return pois
