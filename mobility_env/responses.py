"""Reading recorded map-API responses: the one parser behind the agent's compact view and the scorer's evidence.

Every response passes through :func:`unwrap` (the ``{"status", "data", "error"}`` envelope)
and, per tool kind, one view function here; :mod:`mobility_env.mobilitybench.observation` renders the compact
observation from these views and ``mobility_env.mobilitybench.evidence`` reads its facts from the same
views, so the agent and the verifier never read a response by different rules (which path
duration counts, which line a transit segment rides, which step length ranks a road).

Shapes (the real sample, ``../shared/mobilitybench/sample_dev.csv``):

* driving / walking: ``{"route": {"paths": [{"distance", "cost": {"duration", "tolls", ...},
  "steps": [...]}]}}`` (older walking data puts ``duration`` on the path itself);
* bus: ``{"status": "SUCCESS", "data": {"route": {"transits": [{"distance", "duration", "cost",
  "walking_distance", "segments": [{"walking", "bus": {"buslines": [...]}, "railway"}]}]}}}``;
* bicycling: ``{"status": "SUCCESS", "data": "有3种骑行路线：..."}`` (text);
* POI lookups ``{"name", "address", "location"}`` (or in an envelope), nearby search
  ``{"pois": [...]}``, reverse geocoding ``{"regeocode": {...}}``, weather
  ``{"weather_description": "..."}``, traffic ``{"trafficinfo": {...}}``.

Nothing here raises on malformed or agent-controlled data: a reader returns None for a shape
it does not recognise. Numbers are kept as recorded (``raw``, often numeric text); :func:`number`
reads one.
"""

from __future__ import annotations

from typing import Any, NamedTuple

_MAX_ENVELOPES = 8
_PAYLOAD_KEYS = ("route", "regeocode", "trafficinfo", "pois")


def envelope_error(response: Any) -> Any:
    """The ``error`` of a failed ``{"status", "data", "error"}`` envelope, or None."""
    if isinstance(response, dict) and "data" in response and set(response) <= {"status", "data", "error"}:
        return response.get("error") or None
    return None


def unwrap(response: Any) -> Any:
    """The payload inside the ``{"status", "data"}`` envelopes (nested ones too); other values unchanged.

    A dict that already carries a payload key (``route``, ``regeocode``, ``trafficinfo``,
    ``pois``) is the payload even when it also has a ``data`` field.
    """
    for _ in range(_MAX_ENVELOPES):
        if not (isinstance(response, dict) and "data" in response
                and not any(key in response for key in _PAYLOAD_KEYS)):
            break
        response = response["data"]
    return response


def number(value: Any) -> float | None:
    """A recorded number (``12``, ``"12.5"``) as a float; None for anything else (NaN included)."""
    if isinstance(value, bool):
        return None
    try:
        result = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return result if result == result else None


def as_dict(value: Any) -> dict[str, Any]:
    """``value`` when it is an object, else an empty one."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    """``value`` when it is a list, else an empty one."""
    return value if isinstance(value, list) else []


_dict = as_dict


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


# ------------------------------------------------------------------------------------------- routes
class StepView(NamedTuple):
    """One step of a path: its road (may be ''), length and duration as recorded."""

    road: str
    distance: Any
    duration: Any
    instruction: str = ""  # the step's own words (沿X向东行驶3.9千米右转), '' when not recorded


class PathView(NamedTuple):
    """One driving/walking path. ``duration``: the cost's duration when it is a number, else the path's."""

    index: int  # type: ignore[assignment]  # a field named like tuple.index, which it shadows
    distance: Any
    duration: Any
    cost: dict[str, Any]  # tolls, toll_distance, traffic_lights as recorded
    steps: tuple[StepView, ...]

    def main_roads(self, limit: int) -> list[str]:
        """The ``limit`` roads with the most step length (ties by name)."""
        length: dict[str, float] = {}
        for step in self.steps:
            if step.road:
                length[step.road] = length.get(step.road, 0.0) + (number(step.distance) or 0.0)
        ranked = sorted(length.items(), key=lambda item: (-item[1], item[0]))
        return [name for name, _ in ranked[:limit]]


class LineView(NamedTuple):
    """One ride of a transit segment: a bus/metro line (``buslines`` item) or a railway."""

    name: Any
    type: Any
    departure: Any
    arrival: Any
    stops: Any  # via_num (railway: None)
    distance: Any
    duration: Any
    railway: bool = False


class SegmentView(NamedTuple):
    """One segment of a transit plan: the walk to it, the alternative lines of its ride, a railway."""

    walking_distance: Any
    walking_duration: Any
    buslines: tuple[LineView, ...]  # alternatives for the same ride; the first is the one planned
    railway: LineView | None  # the segment's railway object (may be an empty placeholder without a name)

    def rides(self) -> tuple[LineView, ...]:
        """What the plan rides in this segment: the first busline, then the railway when it has a name."""
        railway = (self.railway,) if self.railway is not None and self.railway.name else ()
        return self.buslines[:1] + railway


class TransitView(NamedTuple):
    index: int  # type: ignore[assignment]  # a field named like tuple.index, which it shadows
    distance: Any
    duration: Any
    cost: Any  # fare
    walking_distance: Any
    segments: tuple[SegmentView, ...]


class RouteView(NamedTuple):
    """A structured route response; ``paths`` or ``transits`` is None when the response has no such list."""

    origin: Any
    destination: Any
    taxi_cost: Any
    count: Any
    paths: tuple[PathView, ...] | None
    transits: tuple[TransitView, ...] | None


def _line(item: dict[str, Any], railway: bool) -> LineView:
    return LineView(item.get("name"), item.get("type") or ("railway" if railway else None),
                    _dict(item.get("departure_stop")).get("name"), _dict(item.get("arrival_stop")).get("name"),
                    None if railway else item.get("via_num"), item.get("distance"),
                    item.get("time") if railway else item.get("duration"), railway)


def _segment(segment: dict[str, Any]) -> SegmentView:
    walking = _dict(segment.get("walking"))
    railway = segment.get("railway")
    return SegmentView(walking.get("distance"), walking.get("duration"),
                       tuple(_line(line, False) for line in _dicts(_dict(segment.get("bus")).get("buslines"))),
                       _line(railway, True) if isinstance(railway, dict) else None)


def _path(index: int, path: dict[str, Any]) -> PathView:
    cost = _dict(path.get("cost"))
    duration = cost.get("duration") if number(cost.get("duration")) is not None else path.get("duration")
    steps = []
    for step in _dicts(path.get("steps")):
        step_cost = _dict(step.get("cost"))
        road, instruction = step.get("road_name"), step.get("instruction")
        steps.append(StepView(road if isinstance(road, str) else "",
                              step.get("step_distance", step.get("distance")),
                              step_cost.get("duration") if step_cost else step.get("duration"),
                              instruction if isinstance(instruction, str) else ""))
    return PathView(index, path.get("distance"), duration, cost, tuple(steps))


def route_view(body: Any) -> RouteView | None:
    """The route of an unwrapped response body (:func:`unwrap`), None when it has none.

    Path and transit ``index`` is the position in the recorded list (what ``route_index`` names);
    items that are not objects are skipped but keep their positions' meaning for the others.
    """
    if not isinstance(body, dict) or not isinstance(body.get("route"), dict):
        return None
    route = body["route"]
    paths = transits = None
    if isinstance(route.get("paths"), list):
        paths = tuple(_path(i, p) for i, p in enumerate(route["paths"]) if isinstance(p, dict))
    if isinstance(route.get("transits"), list):
        transits = tuple(TransitView(i, t.get("distance"), t.get("duration"), t.get("cost"), t.get("walking_distance"),
                                     tuple(_segment(s) for s in _dicts(t.get("segments"))))
                         for i, t in enumerate(route["transits"]) if isinstance(t, dict))
    return RouteView(route.get("origin"), route.get("destination"), route.get("taxi_cost"), body.get("count"),
                     paths, transits)


# ------------------------------------------------------------------------------------- other kinds
def poi_items(body: Any) -> list[dict[str, Any]] | None:
    """The ``pois`` list of a nearby-search body (objects only), None when there is none."""
    if isinstance(body, dict) and isinstance(body.get("pois"), list):
        return _dicts(body["pois"])
    return None


def regeocode(body: Any) -> dict[str, Any] | None:
    """The ``regeocode`` object of a reverse-geocoding body."""
    value = body.get("regeocode") if isinstance(body, dict) else None
    return value if isinstance(value, dict) else None


def weather_description(body: Any) -> str | None:
    """The weather text: the body's ``weather_description`` (or the body itself when it is text)."""
    value = body.get("weather_description") if isinstance(body, dict) else body
    return value if isinstance(value, str) else None


def traffic_info(body: Any) -> dict[str, Any] | None:
    """The ``trafficinfo`` object of a traffic body."""
    value = body.get("trafficinfo") if isinstance(body, dict) else None
    return value if isinstance(value, dict) else None
