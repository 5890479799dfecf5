"""Turning a replayed response into the text an agent reads.

Two formats:

* ``"raw"``: the recorded response as JSON, unchanged (comparable with the paper's agents);
* ``"compact"`` (default): what an agent needs to answer and nothing else. Routes keep, per
  path, distance, duration, tolls, toll distance, traffic lights and the main roads; per
  transit, lines, stops, walking distance, cost and duration. Polylines, per-step
  instructions, ids and empty fields are dropped. Path/transit order is kept, so
  ``route_index`` means the same thing in both formats.

Both are JSON text (``ensure_ascii=False``), deterministic for a given response.

The compact format is versioned by :data:`OBSERVATION_VERSION`, a number bumped by hand.
Built directories store compact texts precomputed with the version they record; a directory
of another version is served texts computed at each step instead, with a
:class:`~mobility_env.layout.FormatVersionWarning` (see :mod:`mobility_env.replay_index`).
"""

from __future__ import annotations

import json
from typing import Any, Callable

#: The version of the ``compact`` format. Bump it BY HAND whenever ``format_response(tool,
#: response, "compact")`` can return other text for some response (a field added, renamed,
#: reordered or dropped, a number written differently, a list cut elsewhere), then regenerate
#: the golden snapshot (``python tests/test_format_versions.py --regenerate``) and the bundled
#: set (``mobility-env index datasets/default``). Edits that change no output (comments,
#: refactors) keep it. ``tests/test_format_versions.py`` fails when outputs change without a bump.
#: History: 1 — the format described in the module docstring (MobilityBench-v0).
OBSERVATION_VERSION = 1
OBS_FORMATS = ("compact", "raw")
MAX_LIST_ITEMS = 10
MAIN_ROADS = 4


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _unwrap(response: Any) -> Any:
    """Strip the ``{'status': 'SUCCESS', 'data': ..., 'error': None}`` tool envelope."""
    if isinstance(response, dict) and "data" in response and set(response) <= {"status", "data", "error"}:
        if response.get("error"):
            return {"error": response["error"]}
        return response["data"]
    return response


def _num(value: Any) -> Any:
    """'1234' -> 1234, '5.0' -> 5.0; anything else unchanged."""
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return value
        return int(number) if number.is_integer() else number
    return value


def _main_roads(steps: list[dict[str, Any]]) -> list[str]:
    length: dict[str, float] = {}
    for step in steps or []:
        road = step.get("road_name") or ""
        if road:
            length[road] = length.get(road, 0.0) + float(_num(step.get("step_distance") or 0) or 0)
    ranked = sorted(length.items(), key=lambda item: (-item[1], item[0]))
    return [name for name, _ in ranked[:MAIN_ROADS]]


def _compact_path(index: int, path: dict[str, Any]) -> dict[str, Any]:
    cost = path.get("cost") or {}
    item = {"index": index, "distance_m": _num(path.get("distance")),
            "duration_s": _num(cost.get("duration", path.get("duration")))}
    for key in ("tolls", "toll_distance", "traffic_lights"):
        if key in cost:
            item[key] = _num(cost[key])
    roads = _main_roads(path.get("steps") or [])
    if roads:
        item["main_roads"] = roads
    return item


def _segment_lines(segment: dict[str, Any]) -> list[dict[str, Any]]:
    lines = []
    for line in ((segment.get("bus") or {}).get("buslines") or [])[:1]:
        lines.append({"line": line.get("name"), "type": line.get("type"),
                      "from": (line.get("departure_stop") or {}).get("name"),
                      "to": (line.get("arrival_stop") or {}).get("name"), "stops": _num(line.get("via_num"))})
    railway = segment.get("railway") or {}
    if railway.get("name"):
        lines.append({"line": railway.get("name"), "type": railway.get("type") or "railway",
                      "from": (railway.get("departure_stop") or {}).get("name"),
                      "to": (railway.get("arrival_stop") or {}).get("name")})
    return lines


def _compact_transit(index: int, transit: dict[str, Any]) -> dict[str, Any]:
    item = {"index": index, "duration_s": _num(transit.get("duration")), "cost": _num(transit.get("cost")),
            "walking_distance_m": _num(transit.get("walking_distance")), "distance_m": _num(transit.get("distance"))}
    legs = [leg for segment in transit.get("segments") or [] for leg in _segment_lines(segment)]
    item["lines"] = legs
    return item


def compact_route(response: Any) -> Any:
    data = _unwrap(response)
    if not isinstance(data, dict):
        return data  # e.g. the bicycling text summary: already compact
    route = data.get("route")
    if not isinstance(route, dict):
        return _drop_empty(data)
    out: dict[str, Any] = {"origin": route.get("origin"), "destination": route.get("destination")}
    if route.get("taxi_cost"):
        out["taxi_cost"] = _num(route["taxi_cost"])
    if "paths" in route:
        out["paths"] = [_compact_path(i, p) for i, p in enumerate(route.get("paths") or [])]
    if "transits" in route:
        out["transits"] = [_compact_transit(i, t) for i, t in enumerate(route.get("transits") or [])]
    return out


def compact_poi(response: Any) -> Any:
    data = _unwrap(response)
    if isinstance(data, dict):
        keep = {k: data[k] for k in ("name", "address", "location", "city", "district") if data.get(k)}
        return keep or _drop_empty(data)
    return data


def compact_around(response: Any) -> Any:
    data = _unwrap(response)
    if isinstance(data, dict) and isinstance(data.get("pois"), list):
        pois = [{k: p.get(k) for k in ("name", "address", "location", "distance") if p.get(k)} for p in data["pois"]]
        return {"count": len(pois), "pois": pois[:MAX_LIST_ITEMS]}
    return _drop_empty(data)


def compact_geocode(response: Any) -> Any:
    data = _unwrap(response)
    regeo = data.get("regeocode") if isinstance(data, dict) else None
    if not isinstance(regeo, dict):
        return _drop_empty(data)
    comp = regeo.get("addressComponent") or {}
    out: dict[str, Any] = {"formatted_address": regeo.get("formatted_address")}
    out.update({k: comp[k] for k in ("province", "city", "district", "township")
                if isinstance(comp.get(k), str) and comp[k]})
    out["roads"] = [{"name": r.get("name"), "distance_m": _num(r.get("distance"))}
                    for r in (regeo.get("roads") or [])[:3]]
    out["pois"] = [{"name": p.get("name"), "distance_m": _num(p.get("distance"))}
                   for p in (regeo.get("pois") or [])[:5]]
    return out


def compact_weather(response: Any) -> Any:
    data = _unwrap(response)
    if isinstance(data, dict) and data.get("weather_description"):
        return {"weather": data["weather_description"]}
    return _drop_empty(data)


def compact_traffic(response: Any) -> Any:
    data = _unwrap(response)
    info = data.get("trafficinfo") if isinstance(data, dict) else None
    if isinstance(info, dict):
        evaluation = info.get("evaluation") or {}
        out = {"description": info.get("description"), "state": evaluation.get("description")}
        out.update({k: evaluation[k] for k in ("expedite", "congested", "blocked") if evaluation.get(k)})
        return out
    return _drop_empty(data)


def _drop_empty(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_empty(v) for k, v in value.items()
                if v not in (None, "", [], {}) and k not in ("polyline", "id")}
    if isinstance(value, list):
        return [_drop_empty(v) for v in value[:MAX_LIST_ITEMS]]
    return value


COMPACTORS: dict[str, Callable[[Any], Any]] = {
    "query_poi": compact_poi, "search_around_poi": compact_around, "reverse_geocoding": compact_geocode,
    "weather_query": compact_weather, "traffic_status": compact_traffic, "driving_route": compact_route,
    "walking_route": compact_route, "bicycling_route": compact_route, "bus_route": compact_route,
}


def format_response(tool: str, response: Any, obs_format: str = "compact") -> str:
    """The observation text of a replayed response.

    ``raw`` is ``json.dumps(response, ensure_ascii=False, separators=(",", ":"))``: the very
    text ``build`` stores, which the sandbox therefore serves as is. ``compact`` texts are
    precomputed by ``build`` (:mod:`mobility_env.replay_index`) and served when the directory
    records this module's :data:`OBSERVATION_VERSION`; otherwise computed here at each step.
    """
    if obs_format == "raw":
        return _dumps(response)
    return _dumps(COMPACTORS.get(tool, _drop_empty)(response))
