"""Public transport: candidate journeys on the city's metro and bus lines, and the response.

A journey walks (at most 1.5 km) to a stop of a line near the origin, rides, optionally
transfers once to a line near the destination (stops at most 500 m apart), rides, and walks
to the destination. Candidates are ranked per Amap transit strategy code (``0`` recommended,
``2`` fewest transfers, ``3`` least walking, ``5`` no metro, ``8`` fastest, ...), so a bus
call with another strategy gets a real but differently ordered (or filtered) answer.

The response has the released shape: ``{'status': 'SUCCESS', 'data': {... 'route':
{'transits': [{cost, duration, walking_distance, distance, segments: [{walking, bus:
{buslines: [{name, type, departure_stop, arrival_stop, via_stops, ...}]}}]}]}}, 'error': None}``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .geo import Point, format_location, haversine_m, parse_location
from .world import City, Line, World

MAX_WALK_M = 1500.0
MAX_TRANSFER_M = 500.0
WALK_SPEED_MS = 1.2
RIDE_SPEED_MS = {"metro": 10.0, "bus": 5.0}
WAIT_S = {"metro": 150.0, "bus": 300.0}


@dataclass(frozen=True)
class Ride:
    line: Line
    board: int
    alight: int

    @property
    def distance_m(self) -> float:
        return float(abs(self.line.cumulative_m[self.alight] - self.line.cumulative_m[self.board]))

    @property
    def duration_s(self) -> float:
        return self.distance_m / RIDE_SPEED_MS[self.line.kind] + WAIT_S[self.line.kind]


@dataclass(frozen=True)
class Journey:
    rides: tuple[Ride, ...]
    walks_m: tuple[float, ...]      # before each ride, then the final walk

    @property
    def duration_s(self) -> float:
        return sum(r.duration_s for r in self.rides) + sum(self.walks_m) / WALK_SPEED_MS

    @property
    def walking_m(self) -> float:
        return sum(self.walks_m)

    @property
    def fare(self) -> float:
        return sum(2.0 if r.line.kind == "bus" else 3.0 + r.distance_m // 6000 for r in self.rides)

    @property
    def line_names(self) -> list[str]:
        return [r.line.name for r in self.rides]

    @property
    def uses_metro(self) -> bool:
        return any(r.line.kind == "metro" for r in self.rides)


_RANKING = {
    "0": lambda j: j.duration_s + 300 * (len(j.rides) - 1) + 0.3 * j.walking_m,
    "1": lambda j: (j.fare, j.duration_s),
    "2": lambda j: (len(j.rides), j.duration_s),
    "3": lambda j: (j.walking_m, j.duration_s),
    "4": lambda j: (not j.uses_metro, len(j.rides), j.duration_s),
    "5": lambda j: j.duration_s,
    "7": lambda j: (not j.uses_metro, j.duration_s),
    "8": lambda j: j.duration_s,
}


def _nearest_stops(city: City, point: Point) -> list[tuple[float, Line, int]]:
    x, y = city.xy(point)
    found = []
    for line in city.lines:
        d = np.hypot(line.stop_xy[:, 0] - x, line.stop_xy[:, 1] - y)
        i = int(np.argmin(d))
        if d[i] <= MAX_WALK_M:
            found.append((float(d[i]), line, i))
    found.sort(key=lambda item: (item[0], item[1].name))
    return found


def _transfer(world: World, city: City, first: Line, second: Line) -> tuple[int, int, float]:
    key = (city.name, f"transfer:{first.name}|{second.name}")
    if key not in world.derived:
        d = np.hypot(first.stop_xy[:, None, 0] - second.stop_xy[None, :, 0],
                     first.stop_xy[:, None, 1] - second.stop_xy[None, :, 1])
        i, j = np.unravel_index(int(np.argmin(d)), d.shape)
        world.derived[key] = (int(i), int(j), float(d[i, j]))
    return world.derived[key]  # type: ignore[return-value]


def journeys(world: World, city: City, origin: Point, destination: Point) -> list[Journey]:
    """Every candidate journey (up to one transfer), unranked but in a stable order."""
    near_o, near_d = _nearest_stops(city, origin), _nearest_stops(city, destination)
    found: dict[tuple[str, ...], Journey] = {}
    by_line_d = {line.name: (walk, i) for walk, line, i in near_d}
    for walk_o, line, i in near_o:
        if line.name in by_line_d:
            walk_d, j = by_line_d[line.name]
            ride = Ride(line, i, j)
            if ride.distance_m > 800:
                found[(line.name,)] = Journey((ride,), (walk_o, walk_d))
    for walk_o, first, i in near_o[:6]:
        for walk_d, second, j in near_d[:6]:
            if first.name == second.name or (first.name, second.name) in found:
                continue
            a, b, gap = _transfer(world, city, first, second)
            rides = (Ride(first, i, a), Ride(second, b, j))
            if gap <= MAX_TRANSFER_M and min(r.distance_m for r in rides) > 500:
                found[(first.name, second.name)] = Journey(rides, (walk_o, gap, walk_d))
    return list(found.values())


def ranked_journeys(candidates: list[Journey], strategy: str = "0", limit: int = 5) -> list[Journey]:
    pool = [j for j in candidates if not (strategy == "5" and j.uses_metro)]
    return sorted(pool, key=lambda j: (_RANKING.get(strategy, _RANKING["0"])(j), j.line_names))[:limit]


def _stop(line: Line, index: int) -> dict[str, str]:
    return {"name": line.stop_names[index], "id": f"{line.line_id}{index:03d}",
            "location": format_location(line.stop_points[index])}


def _walking(city: City, start: Point, end: Point, distance: float, target: str) -> dict[str, Any] | list:
    if distance < 1:
        return []
    road = city.street_near(start, "walk")
    metres = str(int(round(distance)))
    seconds = str(int(round(distance / WALK_SPEED_MS)))
    return {"origin": format_location(start), "destination": format_location(end), "distance": metres,
            "duration": seconds,
            "steps": [{"instruction": f"沿{road}步行{metres}米到达{target}", "road": road, "distance": metres,
                       "duration": seconds, "action": [], "assistant_action": f"到达{target}"}]}


def _busline(ride: Ride) -> dict[str, Any]:
    line, step = ride.line, (1 if ride.alight >= ride.board else -1)
    via = [_stop(line, k) for k in range(ride.board + step, ride.alight, step)]
    return {"departure_stop": _stop(line, ride.board), "arrival_stop": _stop(line, ride.alight), "name": line.name,
            "id": line.line_id, "type": line.type_label, "distance": str(int(round(ride.distance_m))),
            "duration": str(int(round(ride.duration_s))), "start_time": "0530" if line.kind == "metro" else "0600",
            "end_time": "2300" if line.kind == "metro" else "2130", "via_num": str(len(via)), "via_stops": via}


def _segment(walking: Any, buslines: list[dict[str, Any]]) -> dict[str, Any]:
    return {"taxi": [], "walking": walking, "bus": {"buslines": buslines}, "entrance": [], "exit": [],
            "railway": {"via_stops": [], "alters": [], "spaces": []}}


def journey_record(city: City, journey: Journey, origin: Point, destination: Point) -> dict[str, Any]:
    segments = []
    here = origin
    for ride, walk in zip(journey.rides, journey.walks_m):
        board = ride.line.stop_points[ride.board]
        segments.append(_segment(_walking(city, here, board, walk, ride.line.stop_names[ride.board]), [_busline(ride)]))
        here = ride.line.stop_points[ride.alight]
    segments.append(_segment(_walking(city, here, destination, journey.walks_m[-1], "终点"), []))
    distance = sum(r.distance_m for r in journey.rides) + journey.walking_m
    return {"cost": f"{journey.fare:.1f}", "duration": str(int(round(journey.duration_s))), "nightflag": "0",
            "walking_distance": str(int(round(journey.walking_m))), "distance": str(int(round(distance))),
            "missed": "0",
            "segments": segments}


def bus_response(world: World, city: City, origin: str, destination: str,
                 strategy: str = "0") -> tuple[dict[str, Any], list[Journey]]:
    """(response, the ranked journeys it lists). An empty list means no transit option."""
    o, d = parse_location(origin), parse_location(destination)
    ranked = ranked_journeys(journeys(world, city, o, d), strategy)
    transits = [journey_record(city, j, o, d) for j in ranked]
    distance = haversine_m(o, d)
    data = {"status": "1", "info": "OK", "infocode": "10000", "count": str(len(transits)), "route": {
        "origin": origin, "destination": destination, "distance": str(int(round(distance * 1.2))),
        "taxi_cost": str(int(round(10 + 2.3 * distance * 1.2 / 1000))), "transits": transits}}
    return {"status": "SUCCESS", "data": data, "error": None}, ranked
