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
:class:`~mobility_env.layout.FormatVersionWarning` (see :mod:`mobility_env.mobilitybench.replay_index`).
"""

from __future__ import annotations

import json
from typing import Any, Callable

from ..responses import (LineView, PathView, TransitView, as_dict, as_list, envelope_error, poi_items, regeocode,
                         route_view, traffic_info, unwrap, weather_description)
from ..tools import TOOLS

#: The version of the ``compact`` format. Bump it BY HAND whenever ``format_response(tool,
#: response, "compact")`` can return other text for some response (a field added, renamed,
#: reordered or dropped, a number written differently, a list cut elsewhere), then regenerate
#: the golden snapshot (``python tests/test_format_versions.py --regenerate``) and the bundled
#: set (``mobility-env index datasets/default``). Edits that change no output (comments,
#: refactors) keep it. ``tests/test_format_versions.py`` fails when outputs change without a bump.
#: History: 1 — the format described in the module docstring (MobilityBench-v0).
#: 2 — responses are read by :mod:`mobility_env.responses`, the parser the scorer's evidence uses:
#: nested ``data`` envelopes are unwrapped, a path's duration is the path's own when its cost's is not a
#: number, a step without ``step_distance`` counts its ``distance`` toward the main roads, and items that are
#: not objects are skipped (version 1 failed on them). Identical to version 1 on every recorded response of
#: the bundled set, the real sample and 10k synthetic episodes (49,379 responses).
OBSERVATION_VERSION = 2
OBS_FORMATS = ("compact", "raw")
MAX_LIST_ITEMS = 10
MAIN_ROADS = 4


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _num(value: Any) -> Any:
    """'1234' -> 1234, '5.0' -> 5.0; anything else unchanged."""
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return value
        return int(number) if number.is_integer() else number
    return value


def _body(response: Any) -> tuple[Any, Any]:
    """(envelope error, payload) of a response, both read by :mod:`mobility_env.responses`."""
    return envelope_error(response), unwrap(response)


def _compact_path(path: PathView) -> dict[str, Any]:
    item = {"index": path.index, "distance_m": _num(path.distance), "duration_s": _num(path.duration)}
    for key in ("tolls", "toll_distance", "traffic_lights"):
        if key in path.cost:
            item[key] = _num(path.cost[key])
    roads = path.main_roads(MAIN_ROADS)
    if roads:
        item["main_roads"] = roads
    return item


def _compact_line(line: LineView) -> dict[str, Any]:
    item = {"line": line.name, "type": line.type, "from": line.departure, "to": line.arrival}
    if not line.railway:
        item["stops"] = _num(line.stops)
    return item


def _compact_transit(transit: TransitView) -> dict[str, Any]:
    return {"index": transit.index, "duration_s": _num(transit.duration), "cost": _num(transit.cost),
            "walking_distance_m": _num(transit.walking_distance), "distance_m": _num(transit.distance),
            "lines": [_compact_line(line) for segment in transit.segments for line in segment.rides()]}


def compact_route(response: Any) -> Any:
    error, data = _body(response)
    if error:
        return {"error": error}
    if not isinstance(data, dict):
        return data  # e.g. the bicycling text summary: already compact
    view = route_view(data)
    if view is None:
        return _drop_empty(data)
    out: dict[str, Any] = {"origin": view.origin, "destination": view.destination}
    if view.taxi_cost:
        out["taxi_cost"] = _num(view.taxi_cost)
    if view.paths is not None or "paths" in data["route"]:
        out["paths"] = [_compact_path(path) for path in view.paths or ()]
    if view.transits is not None or "transits" in data["route"]:
        out["transits"] = [_compact_transit(transit) for transit in view.transits or ()]
    return out


def compact_poi(response: Any) -> Any:
    error, data = _body(response)
    if error:
        return {"error": error}
    if isinstance(data, dict):
        keep = {k: data[k] for k in ("name", "address", "location", "city", "district") if data.get(k)}
        return keep or _drop_empty(data)
    return data


def compact_around(response: Any) -> Any:
    error, data = _body(response)
    if error:
        return {"error": error}
    items = poi_items(data)
    if items is not None:
        pois = [{k: p.get(k) for k in ("name", "address", "location", "distance") if p.get(k)} for p in items]
        return {"count": len(pois), "pois": pois[:MAX_LIST_ITEMS]}
    return _drop_empty(data)


def compact_geocode(response: Any) -> Any:
    error, data = _body(response)
    if error:
        return {"error": error}
    regeo = regeocode(data)
    if regeo is None:
        return _drop_empty(data)
    comp = as_dict(regeo.get("addressComponent"))
    out: dict[str, Any] = {"formatted_address": regeo.get("formatted_address")}
    out.update({k: comp[k] for k in ("province", "city", "district", "township")
                if isinstance(comp.get(k), str) and comp[k]})
    roads, pois = as_list(regeo.get("roads")), as_list(regeo.get("pois"))
    out["roads"] = [{"name": r.get("name"), "distance_m": _num(r.get("distance"))}
                    for r in roads[:3] if isinstance(r, dict)]
    out["pois"] = [{"name": p.get("name"), "distance_m": _num(p.get("distance"))}
                   for p in pois[:5] if isinstance(p, dict)]
    return out


def compact_weather(response: Any) -> Any:
    error, data = _body(response)
    if error:
        return {"error": error}
    description = weather_description(data) if isinstance(data, dict) else None
    if description:
        return {"weather": description}
    return _drop_empty(data)


def compact_traffic(response: Any) -> Any:
    error, data = _body(response)
    if error:
        return {"error": error}
    info = traffic_info(data)
    if info is not None:
        evaluation = as_dict(info.get("evaluation"))
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


#: The compactor of each tool kind (bound into :class:`mobility_env.mobilitybench.toolkinds.ToolKind`).
COMPACTORS_BY_KIND: dict[str, Callable[[Any], Any]] = {
    "poi": compact_poi, "around": compact_around, "geocode": compact_geocode, "weather": compact_weather,
    "traffic": compact_traffic, "route": compact_route,
}
#: The compactor of each map tool, derived from its kind.
COMPACTORS: dict[str, Callable[[Any], Any]] = {name: COMPACTORS_BY_KIND[spec.kind] for name, spec in TOOLS.items()
                                               if spec.kind in COMPACTORS_BY_KIND}


def format_response(tool: str, response: Any, obs_format: str = "compact") -> str:
    """The observation text of a replayed response.

    ``raw`` is ``json.dumps(response, ensure_ascii=False, separators=(",", ":"))``: the very
    text ``build`` stores, which the sandbox therefore serves as is. ``compact`` texts are
    precomputed by ``build`` (:mod:`mobility_env.mobilitybench.replay_index`) and served when the directory
    records this module's :data:`OBSERVATION_VERSION`; otherwise computed here at each step.
    """
    if obs_format == "raw":
        return _dumps(response)
    compact = COMPACTORS.get(tool)
    if compact is None:  # an unregistered tool has no compact format: say so, never guess one
        raise ValueError(f"no compact format for {tool!r}: not a registered map tool")
    return _dumps(compact(response))
