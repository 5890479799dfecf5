"""Builders of the route scenarios: Route Property, Arrival/Departure, Point-to-Point,
Multi-stop, Option-Constrained and Route-Constrained planning.

Gold is read back from the recorded responses (path 0 for driving, transit 0 for the
recommended bus plan), and the alternatives are what a plausible wrong agent would ask:
another travel mode, another strategy, no waypoint, a confusable destination.
"""

from __future__ import annotations

from typing import Any

from . import queries
from .draft import Draft, loc
from .geo import duration_text, haversine_m
from .names import pick
from .places import keyword_for
from .responses import std_poi_response
from .routes import bicycling_response, driving_response, walking_response
from .transit import bus_response
from .world import Poi

_STD = {"start": ("query_start_poi", "std_start"), "via": ("query_transit_poi", "std_transit"),
        "end": ("query_end_poi", "std_end")}
_ROUTE_TOOL = {"driving": "driving_route", "walking": "walking_route", "bicycling": "bicycling_route",
               "transit": "bus_route"}
_STRATEGY_WEIGHTS = (("不走高速", 35), ("高速优先", 25), ("少收费", 15), ("躲避拥堵", 15), ("大路优先", 5), ("速度最快", 5))
_OPPOSITE = {"不走高速": "高速优先", "高速优先": "不走高速", "少收费": "高速优先", "躲避拥堵": "速度最快", "大路优先": "不走高速",
             "速度最快": "不走高速"}


def _lookup(d: Draft, poi: Poi, role: str, with_city: bool = True) -> tuple[str, str]:
    """Gold query_poi for ``poi`` in the std_* column of ``role``; returns (keyword, location)."""
    kw = keyword_for(poi, d.city, d.u())
    query_col, std_col = _STD[role]
    args = {"keywords": kw, "city": d.city.name} if with_city else {"keywords": kw}
    d.gold("query_poi", args, std_col, std_poi_response(d.city, poi))
    d.set(**{query_col: kw})
    return kw, loc(poi)


def route_response(d: Draft, mode: str, origin: str, destination: str, strategy: list[str] | None = None,
                   waypoints: list[str] | None = None) -> Any:
    if mode == "driving":
        return driving_response(d.world, d.city, origin, destination, strategy, waypoints)
    if mode == "walking":
        return walking_response(d.world, d.city, origin, destination)
    if mode == "bicycling":
        return bicycling_response(d.world, d.city, origin, destination)
    return bus_response(d.world, d.city, origin, destination)[0]


def _route_args(origin: str, destination: str, strategy: list[str] | None = None,
                waypoints: list[str] | None = None) -> dict[str, Any]:
    args: dict[str, Any] = {"origin": origin, "destination": destination}
    if strategy:
        args["strategy"] = strategy
    if waypoints:
        args["waypoints"] = waypoints
    return args


def _other_modes(d: Draft, origin: str, destination: str, distance_m: float, skip: str) -> None:
    """Record the same trip in the other travel modes that make sense at this distance."""
    for mode in ("transit", "walking", "bicycling", "driving"):
        if mode == skip or (mode == "walking" and distance_m > 8000) or (mode == "bicycling" and distance_m > 25000):
            continue
        if mode == "transit" and distance_m > 40000:
            continue
        d.alternative(_ROUTE_TOOL[mode], _route_args(origin, destination), route_response(d, mode, origin, destination))


def _sibling_trip(d: Draft, dest: Poi, mode: str, origin: str) -> None:
    sibling = d.sibling(dest, "route")
    d.alternative("query_poi", {"keywords": sibling.name, "city": d.city.name}, std_poi_response(d.city, sibling))
    d.alternative(_ROUTE_TOOL[mode], _route_args(origin, loc(sibling)), route_response(d, mode, origin, loc(sibling)))


def _far_destination(d: Draft, low_m: float) -> Poi:
    if d.u() < 0.5:
        return d.city.counties[d.rng.randrange(len(d.city.counties))]
    return (d.landmark_between(d.user, low_m, 1e9, d.city.landmarks)
            or d.city.counties[d.rng.randrange(len(d.city.counties))])


def _start(d: Draft, share: float, dest_hint: Poi | None = None) -> tuple[Poi | None, str]:
    """Either an explicit start place (with a gold lookup later) or the user's location."""
    if d.u() < share:
        start = d.landmark_between(d.user, 0, 30000)
        if start is not None and start is not dest_hint:
            return start, loc(start)
    return None, d.user_loc


def _context(d: Draft, **extra: Any) -> dict[str, Any]:
    return {"user_current_location": d.user_loc, "city": d.city.name, **extra}


def _clock(d: Draft, full: bool) -> str:
    stamp = d.when.strftime("%Y-%m-%d %H:%M:%S.") if full else d.when.strftime("%H:%M:%S.")
    return stamp + f"{d.rng.randrange(1000):03d}"


def build_route_property(d: Draft) -> dict[str, Any] | None:
    dest = d.landmark_between(d.user, 2000, 1e9, d.city.landmarks + d.city.counties)
    if dest is None:
        return None
    start, origin = _start(d, 0.3, dest)
    start_kw = _lookup(d, start, "start")[0] if start else None
    dest_kw, destination = _lookup(d, dest, "end")
    response = route_response(d, "driving", origin, destination)
    d.gold("driving_route", _route_args(origin, destination), "route_ans", response)
    d.set(city=d.city.name)
    d.alternative("driving_route", _route_args(origin, destination, ["不走高速"]),
                  route_response(d, "driving", origin, destination, ["不走高速"]))
    _other_modes(d, origin, destination, haversine_m(d.user if not start else start.location, dest.location), "driving")
    _sibling_trip(d, dest, "driving", origin)
    template = pick(d.rng, queries.ROUTE_PROPERTY_FROM) if start else pick(d.rng, queries.ROUTE_PROPERTY)
    return d.finish(queries.voice(d.rng, template.format(start=start_kw, dest=dest_kw)), _context(d))


def build_arrival_departure(d: Draft) -> dict[str, Any] | None:
    dest = d.landmark_between(d.user, 1500, 60000, d.city.landmarks)
    if dest is None:
        return None
    dest_kw, destination = _lookup(d, dest, "end")
    response = route_response(d, "driving", d.user_loc, destination)
    d.gold("driving_route", _route_args(d.user_loc, destination), "route_ans", response)
    d.set(city=d.city.name, duration=duration_text(int(response["route"]["paths"][0]["cost"]["duration"])))
    d.alternative("driving_route", _route_args(d.user_loc, destination, ["躲避拥堵"]),
                  route_response(d, "driving", d.user_loc, destination, ["躲避拥堵"]))
    _other_modes(d, d.user_loc, destination, haversine_m(d.user, dest.location), "driving")
    _sibling_trip(d, dest, "driving", d.user_loc)
    text = pick(d.rng, queries.ARRIVAL).format(dest=dest_kw, time=pick(d.rng, queries.ARRIVAL_TIMES))
    return d.finish(queries.voice(d.rng, text), _context(d, start_datetime=_clock(d, True), travel_tool="驾车"))


def build_point_to_point(d: Draft) -> dict[str, Any] | None:
    mode = pick(d.rng, ("driving",) * 9 + ("walking",) * 3 + ("bicycling",) * 3 + ("transit",) * 5)
    span = {"driving": (2000, 40000), "walking": (300, 3000), "bicycling": (1000, 12000),
            "transit": (2500, 15000)}[mode]
    if mode == "transit":
        d.move_user(d.near_stop())
    dest = d.landmark_between(d.user, *span) if mode in ("driving", "transit") else None
    if dest is None:
        dest = d.neighbourhood_place(d.user, span[1])
        if not span[0] <= haversine_m(d.user, dest.location) <= span[1]:
            return None
    start, origin = (None, d.user_loc) if mode != "driving" else _start(d, 0.2, dest)
    start_kw = _lookup(d, start, "start")[0] if start else None
    dest_kw, destination = _lookup(d, dest, "end")
    response = route_response(d, mode, origin, destination)
    if mode == "transit" and not response["data"]["route"]["transits"]:
        return None
    d.gold(_ROUTE_TOOL[mode], _route_args(origin, destination), "route_ans", response)
    d.set(city=d.city.name)
    _other_modes(d, origin, destination, haversine_m(start.location if start else d.user, dest.location), mode)
    _sibling_trip(d, dest, mode, origin)
    template = pick(d.rng, queries.P2P_FROM[mode]) if start else pick(d.rng, queries.P2P[mode])
    context = _context(d, start_datetime=_clock(d, False)) if d.u() < 0.6 else _context(d)
    return d.finish(queries.voice(d.rng, template.format(start=start_kw, dest=dest_kw)), context)


def build_multi_stop(d: Draft) -> dict[str, Any] | None:
    dest = d.landmark_between(d.user, 3000, 60000, d.city.landmarks + d.city.counties)
    via = d.landmark_between(d.user, 1000, 40000, d.city.landmarks)
    if dest is None or via is None or via is dest:
        return None
    start, origin = _start(d, 0.4, dest)
    if start is via:
        return None
    start_kw = _lookup(d, start, "start")[0] if start else None
    via_kw, waypoint = _lookup(d, via, "via")
    dest_kw, destination = _lookup(d, dest, "end")
    response = route_response(d, "driving", origin, destination, None, [waypoint])
    d.gold("driving_route", _route_args(origin, destination, None, [waypoint]), "route_ans", response)
    d.set(city=d.city.name)
    d.alternative("driving_route", _route_args(origin, destination), route_response(d, "driving", origin, destination))
    d.alternative("driving_route", _route_args(origin, waypoint), route_response(d, "driving", origin, waypoint))
    d.alternative("driving_route", _route_args(origin, waypoint, None, [destination]),
                  route_response(d, "driving", origin, waypoint, None, [destination]))
    template = pick(d.rng, queries.MULTI) if start else pick(d.rng, queries.MULTI_HERE)
    text = template.format(start=start_kw, via=via_kw, dest=dest_kw)
    return d.finish(queries.voice(d.rng, text), _context(d, start_datetime=_clock(d, False)))


def build_option_constrained(d: Draft) -> dict[str, Any] | None:
    dest = _far_destination(d, 12000)
    names = [n for n, w in _STRATEGY_WEIGHTS for _ in range(w)]
    strategy = [pick(d.rng, names)]
    if d.u() < 0.1 and strategy[0] in ("不走高速", "少收费"):
        strategy = ["躲避拥堵", strategy[0]]
    dest_kw, destination = _lookup(d, dest, "end")
    response = route_response(d, "driving", d.user_loc, destination, strategy)
    d.gold("driving_route", _route_args(d.user_loc, destination, strategy), "route_ans", response)
    d.set(city=d.city.name, strategy_list=strategy)
    main = strategy[-1]
    for alt in (None, [_OPPOSITE[main]], [main if main != "躲避拥堵" else "不走高速"] if len(strategy) > 1 else ["躲避拥堵"]):
        d.alternative("driving_route", _route_args(d.user_loc, destination, alt),
                      route_response(d, "driving", d.user_loc, destination, alt))
    _sibling_trip(d, dest, "driving", d.user_loc)
    pref = "，".join(pick(d.rng, queries.PREFERENCE_WORDS[s]) for s in strategy)
    text = pick(d.rng, queries.OPTION).format(dest=dest_kw, pref=pref)
    return d.finish(queries.voice(d.rng, text), _context(d))


def _line_said(d: Draft, line_short: str, kind: str) -> str:
    return ("地铁" + line_short) if kind == "metro" and d.u() < 0.4 else line_short


def build_route_constrained(d: Draft) -> dict[str, Any] | None:
    """A transit trip that must avoid the line(s) the recommended plan rides."""
    d.move_user(d.near_stop())
    dest = d.landmark_between(d.user, 2500, 15000)
    if dest is None:
        return None
    start, origin = _start(d, 0.35, dest)
    if start is not None and haversine_m(start.location, dest.location) < 2000:
        return None
    response, ranked = bus_response(d.world, d.city, origin, loc(dest))
    if len(ranked) < 2:
        return None
    lines = ranked[0].rides
    excluded = [lines[0].line] if len(lines) == 1 or d.u() < 0.6 else [r.line for r in lines]
    excluded_short = {line.short for line in excluded}
    matched = next((i for i, j in enumerate(ranked) if not {r.line.short for r in j.rides} & excluded_short), None)
    if matched is None:
        return None
    start_kw = _lookup(d, start, "start", with_city=False)[0] if start else None
    dest_kw, destination = _lookup(d, dest, "end", with_city=False)
    d.gold("bus_route", _route_args(origin, destination), "route_ans", response)
    d.set(llm_ner_ans=",".join(f"不要{line.short}" for line in excluded),
          bus_lines_list=[j.line_names for j in ranked], matched_transit_index=float(matched))
    for code in ("5", "2"):
        alt = bus_response(d.world, d.city, origin, destination, code)[0]
        if alt["data"]["route"]["transits"] and alt != response:
            d.alternative("bus_route", {**_route_args(origin, destination), "strategy": code}, alt)
    d.alternative("driving_route", _route_args(origin, destination), route_response(d, "driving", origin, destination))
    said = "和".join(_line_said(d, line.short, line.kind) for line in excluded)
    template = pick(d.rng, queries.EXCLUDE_FROM) if start else pick(d.rng, queries.EXCLUDE)
    text = template.format(start=start_kw, dest=dest_kw, line=said)
    return d.finish(queries.voice(d.rng, text),
                    {"user_current_location": d.user_loc, "city": "", "travel_tool": "公交"})
