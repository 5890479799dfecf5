"""The road model: which roads a trip uses under a driving style, and how long they take.

A trip is a list of :class:`Segment` (one named road each). How it is chosen:

* in town, a trip runs street -> east-west arterial -> north-south arterial -> street
  (Manhattan distance on the arterial grid); a faster style lifts the middle onto an
  elevated expressway (no toll) or, for trips over 6 km, the tolled ring highway;
* between towns (over 25 km or outside the city), the highway style takes the national
  highway pointing toward the destination; the no-highway style takes national and
  provincial roads, about 15 % longer and much slower.

Styles (``RouteStyle``) come from the official strategy names: 不走高速 = no highway and no
tolled road; 少收费 = no toll (elevated roads allowed); 高速优先 / 速度最快 / 大路优先 = the
fastest big-road variant; 躲避拥堵 = every arterial is one whose live state is 畅通.
Every choice is seeded by the request itself, so the same request gives the same trip.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .geo import Point, compass_word, haversine_m, local_xy
from .seeding import rng_for
from .world import SPEED_FACTOR, City, World

SPEED_KMH = {"street": 22.0, "arterial": 36.0, "elevated": 58.0, "ramp": 40.0, "highway": 100.0, "national": 62.0}
LIGHT_EVERY_M = {"street": 450.0, "arterial": 650.0, "national": 5000.0}
TOLL_YUAN_PER_KM = 0.5
LONG_TRIP_M = 25_000.0
HIGHWAY_MIN_M = 6_000.0


@dataclass(frozen=True)
class Segment:
    road: str              # '' for an unnamed access road
    kind: str              # key of SPEED_KMH
    distance_m: float
    heading: str           # '东', '西北', ...
    tolled: bool = False

    @property
    def is_highway(self) -> bool:
        return "高速" in self.road


@dataclass(frozen=True)
class RouteStyle:
    """What a driver allows and prefers; built from strategy names by :func:`style_for`."""

    highway: bool = True          # may use 高速 roads
    toll: bool = True             # may use tolled roads
    prefer_fast: bool = False     # take the big-road variant even when not the fastest
    avoid_jam: bool = False       # arterials must be 畅通


def style_for(strategies: list[str] | tuple[str, ...]) -> RouteStyle:
    s = set(strategies)
    no_highway = "不走高速" in s
    return RouteStyle(highway=not no_highway, toll=not (no_highway or "少收费" in s),
                      prefer_fast=bool(s & {"高速优先", "速度最快", "大路优先"}) and not no_highway,
                      avoid_jam="躲避拥堵" in s)


def _arterial(world: World, city: City, point: Point, axis: str, variant: int, avoid_jam: bool) -> tuple[str, float]:
    ranks = range(variant, variant + 6)
    pick = city.nearest_ew if axis == "ew" else city.nearest_ns
    for rank in ranks:
        road = pick(point, rank % 6)
        if not avoid_jam or world.traffic_state(city.name, road[0]) == "畅通":
            return road
    return pick(point, variant)


def plan_leg(world: World, city: City, origin: Point, destination: Point, mode: str, variant: int,
             avoid_jam: bool) -> list[Segment]:
    """Segments of one leg. ``mode`` is 'plain', 'elevated' or 'highway'."""
    rng = rng_for(world.seed, "leg", city.name, origin, destination, mode, variant, avoid_jam)
    dx, dy = local_xy(origin, destination)
    gc = haversine_m(origin, destination)
    long_trip = (gc > LONG_TRIP_M
                 or max(math.hypot(*city.xy(origin)), math.hypot(*city.xy(destination))) > city.radius_m * 1.2)
    heading = compass_word(dx, dy)
    start = Segment(city.street_near(origin) if rng.random() < 0.7 else "", "street", 80 + 400 * rng.random(),
                    compass_word(dx, 0))
    end = Segment(city.street_near(destination, "end"), "street", 60 + 350 * rng.random(), compass_word(0, dy))
    ew = _arterial(world, city, origin, "ew", variant, avoid_jam)
    ns = _arterial(world, city, destination, "ns", variant, avoid_jam)

    def ew_seg(share: float) -> Segment:
        return Segment(ew[0], "arterial", max(150.0, abs(dx) * share), "东" if dx >= 0 else "西")

    def ns_seg(share: float) -> Segment:
        return Segment(ns[0], "arterial", max(150.0, abs(dy) * share), "北" if dy >= 0 else "南")

    if long_trip:
        access = Segment(ew[0], "arterial", 1500 + 2500 * rng.random(), heading)
        exit_road = Segment(city.street_near(destination, "exit"), "arterial", 800 + 2000 * rng.random(), heading)
        if mode == "highway":
            highway = city.highway_toward(math.degrees(math.atan2(dy, dx)))
            main = gc * (1.06 + 0.04 * variant)
            return [start, access, Segment(f"{highway}入口", "ramp", 350 + 300 * rng.random(), heading, True),
                    Segment(highway, "highway", main, heading, True),
                    Segment(f"{highway}出口", "ramp", 300 + 300 * rng.random(), heading, True), exit_road, end]
        national = city.national_roads[variant % 2]
        provincial = city.national_roads[2]
        factor = 1.16 + (0.02 if mode == "elevated" else 0.05) + 0.03 * variant
        return [start, access, Segment(national, "national", gc * factor * 0.85, heading),
                Segment(provincial, "national", gc * factor * 0.15, heading), exit_road, end]
    if mode == "highway" and gc > HIGHWAY_MIN_M:
        ring = city.ring_highway
        return [start, ew_seg(0.2), Segment(f"{ring}入口", "ramp", 300 + 200 * rng.random(), heading, True),
                Segment(ring, "highway", gc * (1.05 + 0.05 * variant), heading, True),
                Segment(f"{ring}出口", "ramp", 250 + 200 * rng.random(), heading, True), ns_seg(0.25), end]
    if mode in ("elevated", "highway") and gc > 3_000:
        elevated = city.elevated[variant % len(city.elevated)]
        if avoid_jam and world.traffic_state(city.name, elevated) != "畅通":
            elevated = city.elevated[(variant + 1) % len(city.elevated)]
        return [start, ew_seg(0.2), Segment(elevated, "elevated", (abs(dx) + abs(dy)) * 0.72, heading), ns_seg(0.2),
                end]
    if variant and abs(dx) > 1500:
        ew2 = _arterial(world, city, destination, "ew", variant, avoid_jam)
        return [start, ew_seg(0.55), ns_seg(1.0), Segment(ew2[0], "arterial", abs(dx) * 0.5, "东" if dx >= 0 else "西"),
                end]
    return [start, ew_seg(1.0), ns_seg(1.0), end]


def segment_duration_s(world: World, city: City, segment: Segment, with_traffic: bool = True) -> float:
    speed = SPEED_KMH[segment.kind]
    if with_traffic and segment.road and segment.kind != "street":
        speed *= SPEED_FACTOR[world.traffic_state(city.name, segment.road)]
    return segment.distance_m / (speed / 3.6)


def segment_lights(segment: Segment) -> int:
    every = LIGHT_EVERY_M.get(segment.kind)
    return int(segment.distance_m // every) if every else 0


def segment_tolls(segment: Segment) -> int:
    return int(round(segment.distance_m / 1000.0 * TOLL_YUAN_PER_KM)) if segment.tolled else 0


def modes_for(style: RouteStyle, strategies_given: bool) -> list[str]:
    """Candidate modes for a style: with strategies, the paths all obey them."""
    if not style.highway or not style.toll:
        return ["elevated" if style.highway else "plain"]
    if style.prefer_fast:
        return ["highway"]
    if style.avoid_jam and strategies_given:
        return ["elevated", "plain"]
    return ["highway", "elevated", "plain"]
