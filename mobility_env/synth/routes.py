"""Driving, walking and cycling responses in the released API shapes.

* driving: ``{'status': '1', 'info': 'OK', 'infocode': '10000', 'count', 'route': {origin,
  destination, taxi_cost, paths: [{distance, restriction, cost: {duration, tolls,
  toll_distance, traffic_lights}, steps: [...]}]}}`` — without strategies up to three paths,
  fastest first; with strategies two paths that both obey them; waypoints are visited in order;
* walking: the same envelope with ``cost: {duration}`` and ``walk_type`` in ``navi``;
* cycling: ``{'status': 'SUCCESS', 'data': '有2种骑行路线：\\n第1种：主要经过…，全程21.3公里，预计耗时1小时49分钟…'}``
  (the plain-text summary the real tool returns).

Numbers are strings, as in the real API. Path 0 of a response is what an agent should
report; :func:`path_duration_s` and friends read it back for gold fields and tests.
"""

from __future__ import annotations

from typing import Any

from .geo import Point, distance_text, duration_text, parse_location
from .roads import (RouteStyle, Segment, modes_for, plan_leg, segment_duration_s, segment_lights, segment_tolls,
                    style_for)
from .world import City, World

_TURNS = ("右转", "左转", "靠左", "靠右", "向右前方行驶", "向左前方行驶", "直行")
WALK_SPEED_MS = 1.25
BIKE_SPEED_MS = 3.9


def _trip(world: World, city: City, points: list[Point], mode: str, variant: int,
          style: RouteStyle) -> list[list[Segment]]:
    return [plan_leg(world, city, a, b, mode, variant, style.avoid_jam) for a, b in zip(points, points[1:])]


def driving_trips(world: World, city: City, points: list[Point], strategies: list[str]) -> list[list[list[Segment]]]:
    """The trips (each a list of legs) of a driving request, in response order."""
    style = style_for(strategies)
    modes = modes_for(style, bool(strategies))
    trips: list[list[list[Segment]]] = []
    seen: set[tuple[str, ...]] = set()
    options = [(m, 0) for m in modes] + [(modes[0], 1)]
    for mode, variant in options:
        trip = _trip(world, city, points, mode, variant, style)
        signature = tuple(f"{s.road}:{s.distance_m:.0f}" for leg in trip for s in leg)
        if signature not in seen:
            seen.add(signature)
            trips.append(trip)
        if len(trips) == (2 if strategies else 3):
            break
    if not strategies or style.avoid_jam:
        trips.sort(key=lambda t: sum(segment_duration_s(world, city, s) for leg in t for s in leg))
    return trips


def _driving_step(world: World, city: City, segment: Segment, action: str, assistant: str) -> dict[str, Any]:
    duration = segment_duration_s(world, city, segment)
    tolls = segment_tolls(segment)
    where = f"沿{segment.road}" if segment.road else ""
    step: dict[str, Any] = {
        "instruction": f"{where}向{segment.heading}行驶{distance_text(segment.distance_m)}{action or assistant}",
        "orientation": segment.heading}
    if segment.road:
        step["road_name"] = segment.road
    step.update({"step_distance": str(int(round(segment.distance_m))),
                 "cost": {"duration": str(int(round(duration))), "tolls": str(tolls),
                          "toll_distance": str(int(round(segment.distance_m))) if segment.tolled else "0",
                          "toll_road": segment.road if segment.tolled else "",
                          "traffic_lights": str(segment_lights(segment))},
                 "navi": {"action": action, "assistant_action": assistant}})
    return step


def _steps(world: World, city: City, trip: list[list[Segment]], render) -> list[dict[str, Any]]:
    steps = []
    for leg_index, leg in enumerate(trip):
        for i, segment in enumerate(leg):
            last = i == len(leg) - 1
            action = "" if last else _TURNS[(len(segment.road) + i) % len(_TURNS)]
            assistant = ("到达目的地" if leg_index == len(trip) - 1 else "到达途经地") if last else ""
            steps.append(render(world, city, segment, action, assistant))
    return steps


def driving_response(world: World, city: City, origin: str, destination: str, strategies: list[str] | None = None,
                     waypoints: list[str] | None = None) -> dict[str, Any]:
    points = [parse_location(origin), *(parse_location(w) for w in waypoints or []), parse_location(destination)]
    paths: list[dict[str, Any]] = []
    for trip in driving_trips(world, city, points, list(strategies or [])):
        steps = _steps(world, city, trip, _driving_step)
        paths.append({"distance": str(sum(int(s["step_distance"]) for s in steps)), "restriction": "0", "cost": {
            "duration": str(sum(int(s["cost"]["duration"]) for s in steps)),
            "tolls": str(sum(int(s["cost"]["tolls"]) for s in steps)),
            "toll_distance": str(sum(int(s["cost"]["toll_distance"]) for s in steps)),
            "traffic_lights": str(sum(int(s["cost"]["traffic_lights"]) for s in steps))}, "steps": steps})
    km = int(paths[0]["distance"]) / 1000.0
    return {"status": "1", "info": "OK", "infocode": "10000", "count": str(len(paths)), "route": {
        "origin": origin, "destination": destination, "taxi_cost": str(int(round(10 + 2.3 * km))), "paths": paths}}


def _walking_step(world: World, city: City, segment: Segment, action: str, assistant: str) -> dict[str, Any]:
    where = f"沿{segment.road}" if segment.road else ""
    return {"instruction": f"{where}向{segment.heading}步行{distance_text(segment.distance_m)}{action or assistant}",
            "orientation": segment.heading, "road_name": segment.road,
            "step_distance": str(int(round(segment.distance_m))),
            "cost": {"duration": str(int(round(segment.distance_m / WALK_SPEED_MS)))},
            "navi": {"action": action, "assistant_action": assistant, "walk_type": "0"}}


def walking_response(world: World, city: City, origin: str, destination: str) -> dict[str, Any]:
    points = [parse_location(origin), parse_location(destination)]
    trip = _trip(world, city, points, "plain", 0, RouteStyle(highway=False, toll=False))
    steps = _steps(world, city, trip, _walking_step)
    distance = sum(int(s["step_distance"]) for s in steps)
    path = {"distance": str(distance), "cost": {"duration": str(sum(int(s["cost"]["duration"]) for s in steps))},
            "steps": steps}
    return {"status": "1", "info": "OK", "infocode": "10000", "count": "1",
            "route": {"origin": origin, "destination": destination, "paths": [path]}}


def bicycling_routes(world: World, city: City, origin: str, destination: str) -> list[tuple[list[str], float, float]]:
    """(roads, metres, seconds) of each cycling option, best first."""
    points = [parse_location(origin), parse_location(destination)]
    options = []
    for variant in (0, 1):
        trip = _trip(world, city, points, "plain", variant, RouteStyle(highway=False, toll=False))
        segments = [s for leg in trip for s in leg]
        roads = [s.road for s in sorted(segments, key=lambda s: -s.distance_m) if s.road][:3]
        metres = sum(s.distance_m for s in segments)
        options.append((roads, metres, metres / BIKE_SPEED_MS))
    unique = {(tuple(r), round(m)): (r, m, t) for r, m, t in options}
    return sorted(unique.values(), key=lambda o: o[2])


def bicycling_response(world: World, city: City, origin: str, destination: str) -> dict[str, Any]:
    options = bicycling_routes(world, city, origin, destination)
    lines = [f"有{len(options)}种骑行路线："]
    for i, (roads, metres, seconds) in enumerate(options, 1):
        lines.append(f"第{i}种：主要经过{'、'.join(roads)}，全程{metres / 1000:.1f}公里，预计耗时{duration_text(seconds)}")
    return {"status": "SUCCESS", "data": "\n".join(lines), "error": None}


def first_path(response: dict[str, Any]) -> dict[str, Any]:
    return response["route"]["paths"][0]


def path_highway_m(path: dict[str, Any]) -> int:
    """Metres of a path on roads whose name contains 高速 (what 不走高速 forbids)."""
    return sum(int(s["step_distance"]) for s in path["steps"] if "高速" in s.get("road_name", ""))
