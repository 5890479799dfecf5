"""Facts read out of replayed tool responses: the evidence FPR is verified against.

Real responses come in several shapes (see the real sample):

* driving / walking: ``{"route": {"paths": [{"distance", "cost": {"duration"}}, ...]}}``
  (older walking data puts ``duration`` on the path itself);
* bus: ``{"status": "SUCCESS", "data": {"route": {"transits": [{"distance", "duration",
  "segments": [{"bus": {"buslines": [{"name"}]}}]}]}}}``;
* bicycling: ``{"status": "SUCCESS", "data": "有3种骑行路线：\\n第1种：...全程21.3公里，预计耗时1小时49分钟..."}``;
* POI lookups: ``{"name", "address", "location"}`` or ``{"data": {...}}``; nearby search
  ``{"data": {"pois": [...]}}``; reverse geocoding ``{"regeocode": {...}}``;
* weather: ``{"data": {"weather_description": "...当前天气多云，气温-4℃..."}}``;
* traffic: ``{"trafficinfo": {"description", "evaluation": {"status", "description"}}}``.

Every reader returns None (or an empty list) for a shape it does not recognise; nothing
here raises on agent-controlled or truncated data.

**Stored at build time.** Every view here (:data:`VIEWS`) of every recorded response is computed once by
``mobility-env build`` / ``index`` (:func:`encode_evidence`) and stored beside the response in ``sandbox.arrow``
under :data:`EVIDENCE_SCHEMA` (this module's :data:`EVIDENCE_VERSION` and the kernel reader's
:data:`~mobility_env.reading.READER_VERSION`: cycling route texts are read by the quantity reader). A reader
handed a recorded response that is still undecoded text (:class:`~mobility_env.trajectory.LazyJSON`; the call
records pass theirs through :func:`served`) returns the stored view and never decodes the response; a directory
written under another schema is reported once and its views computed from the decoded responses, never mixed.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from functools import wraps
from typing import Any, Callable, NamedTuple, TypeVar, cast

from mobility_env.responses import (PathView, TransitView, number, poi_items, regeocode, route_view, traffic_info,
                                    unwrap, weather_description)
from mobility_env.tools import parse_coordinate
from mobility_env.errors import CorruptDataError
from mobility_env.trajectory import LazyJSON

from mobility_env.reading import READER_VERSION, quantities
from mobility_env.reading.numerals import arabize


class RouteOption(NamedTuple):
    """One path (driving/walking/cycling) or transit plan of a route response."""

    index: int  # type: ignore[assignment]  # a field named like tuple.index, which it shadows
    distance_m: float | None
    duration_s: float | None
    lines: tuple[str, ...] = ()  # transit line names, in riding order
    roads: tuple[str, ...] = ()  # main roads, where the response summarises them (cycling text)
    part_distances: tuple[float, ...] = ()  # legs and steps (metres): steps, walking legs, rides
    part_durations: tuple[float, ...] = ()  # legs and steps (seconds)
    tolls: float | None = None  # yuan (driving)
    traffic_lights: int | None = None
    fare: float | None = None  # yuan (transit ``cost``)
    road_parts: tuple[tuple[str, float], ...] = ()  # (road, metres) of each step that names its road
    road_text: str = ""  # every road name and step instruction of the option: the roads it travels are named there


_float = number  # a recorded number, None for anything else
#: Every view a stored evidence record holds, by name (filled by :func:`per_response`); see :func:`encode_evidence`.
VIEWS: dict[str, Callable[[Any], Any]] = {}
_View = TypeVar("_View")
#: Responses whose views each reader keeps (see :func:`per_response`).
VIEW_CACHE = 64


def per_response(reader: Callable[[Any], _View]) -> Callable[[Any], _View]:
    """Keep ``reader``'s view of the last :data:`VIEW_CACHE` decoded responses it read (first in, first out).

    A served response is one shared, read-only object while its episode is recent (see
    :class:`mobility_env.trajectory.LazyJSON`), so the scorer reads each response's facts once,
    however often the episode is played. Keyed by the object's identity; the cache holds the
    object itself, so an identity cannot be reused while it is cached. A list view is handed out
    as a fresh list of the (frozen) items, so a caller may change it. A response still held as stored text
    (:class:`~mobility_env.trajectory.LazyJSON`) is read from its stored evidence when the build stored one
    (keyed by the text's holder, which the sandbox shares as it shares the decoded response), else decoded. Only
    dicts and lists are cached (everything else is a malformed response, read every time). Safe to share between threads
    (scoring servers): a race costs a recomputation, never a wrong view. Kept small: a view keeps its
    response alive, and RL revisits an episode soon (a group of rollouts) or not for long. Whoever
    changes a response in place after it was read must call ``cache_clear()``.
    """
    memo: dict[int, tuple[Any, Any, bool]] = {}
    name = reader.__name__

    def view_of(key: Any, compute: Callable[[], Any]) -> Any:
        held = memo.get(id(key))
        if held is None or held[0] is not key:
            if len(memo) >= VIEW_CACHE:
                try:
                    del memo[next(iter(memo))]  # the oldest
                except (KeyError, RuntimeError, StopIteration):  # another thread got there first
                    memo.clear()
            fresh = compute()
            is_list = isinstance(fresh, list)
            held = memo[id(key)] = (key, tuple(fresh) if is_list else fresh, is_list)
        return list(held[1]) if held[2] else held[1]

    @wraps(reader)
    def read(response: Any) -> _View:
        if type(response) is LazyJSON:
            stored = response.views()
            if stored is not None and name in stored:  # the view the build stored: the response is not decoded
                return cast(_View, view_of(response, lambda: _stored_view(response, name, stored[name])))
            response = response.decode()
        if type(response) is not dict and type(response) is not list:
            return reader(response)
        return cast(_View, view_of(response, lambda: reader(response)))

    read.cache_clear = memo.clear  # type: ignore[attr-defined]
    read.cache_len = memo.__len__  # type: ignore[attr-defined]
    VIEWS[name] = reader
    return read


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _positive(values: Any) -> tuple[float, ...]:
    return tuple(n for n in (number(v) for v in values) if n is not None and n > 0)


def _transit_lines(transit: TransitView) -> tuple[str, ...]:
    """Every line a plan names, in riding order: each segment's buslines (alternatives included), its railway."""
    lines: list[str] = []
    for segment in transit.segments:
        lines.extend(line.name for line in segment.buslines if isinstance(line.name, str))
        if segment.railway is not None and isinstance(segment.railway.name, str) and segment.railway.name:
            lines.append(segment.railway.name)
    return tuple(lines)


def _transit_parts(transit: TransitView) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """Distances and durations of a transit plan's legs: walks, rides (first line of each segment), rail."""
    distances: list[Any] = [transit.walking_distance]
    durations: list[Any] = []
    for segment in transit.segments:
        distances.append(segment.walking_distance)
        durations.append(segment.walking_duration)
        for ride in segment.buslines[:1] + ((segment.railway,) if segment.railway is not None else ()):
            distances.append(ride.distance)
            durations.append(ride.duration)
    return _positive(distances), _positive(durations)


def _path_option(path: PathView) -> RouteOption:
    lights = number(path.cost.get("traffic_lights")) if path.cost else None
    return RouteOption(path.index, number(path.distance), number(path.duration),
                       part_distances=_positive(step.distance for step in path.steps),
                       part_durations=_positive(step.duration for step in path.steps),
                       tolls=number(path.cost.get("tolls")) if path.cost else None,
                       traffic_lights=int(lights) if lights is not None and math.isfinite(lights) else None,
                       road_parts=tuple((step.road, metres) for step in path.steps if step.road
                                        for metres in _positive((step.distance,))),
                       road_text="|".join(part for step in path.steps
                                          for part in (step.road, step.instruction) if part))


_CYCLING_OPTION = re.compile(r"第\s*(\d+)\s*种[:：]?(.*?)(?=第\s*\d+\s*种|$)", re.S)


def _text_route_options(text: str) -> list[RouteOption]:
    options = []
    for position, (_number, body) in enumerate(_CYCLING_OPTION.findall(text)):
        read = arabize(body)
        distances, durations = quantities.of_kind(read, "distance"), quantities.of_kind(read, "duration")
        roads = re.search(r"经过(.*?)[，,]", body)
        options.append(RouteOption(
            index=position,
            distance_m=float(distances[0].value) if distances else None,
            duration_s=float(durations[0].value) * 60.0 if durations else None,
            roads=tuple(r for r in re.split(r"[、,，]", roads.group(1)) if r) if roads else (),
            road_text=body))
    return options


@per_response
def route_options(response: Any) -> list[RouteOption] | None:
    """The paths/transits of a route response, in order; None when it is not one.

    An empty list means a well-formed response with no route (``"count": "0"``). Read through
    :func:`mobility_env.responses.route_view`, the parser the agent's compact view uses.
    """
    body = unwrap(response)
    if isinstance(body, str):
        return _text_route_options(body) if "种" in body else None
    view = route_view(body)
    if view is None:
        return None
    if view.transits is not None:
        options = []
        for transit in view.transits:
            part_distances, part_durations = _transit_parts(transit)
            options.append(RouteOption(transit.index, number(transit.distance), number(transit.duration),
                                       lines=_transit_lines(transit), part_distances=part_distances,
                                       part_durations=part_durations, fare=number(transit.cost)))
        return options
    return [_path_option(path) for path in view.paths or ()]


@per_response
def taxi_cost(response: Any) -> float | None:
    """The taxi fare estimate of a route response (yuan), if stated."""
    view = route_view(unwrap(response))
    return number(view.taxi_cost) if view is not None else None


@per_response
def route_count(response: Any) -> int | None:
    """The ``count`` the routing service reported (before any truncation), if stated."""
    body = unwrap(response)
    if isinstance(body, dict):
        return int(number(body.get("count")) or 0) if body.get("count") is not None else None
    return None


class Place(NamedTuple):
    """A POI, address or road position read from a response."""

    name: str
    address: str = ""
    location: tuple[float, float] | None = None
    district: str = ""


def _place(item: dict[str, Any]) -> Place | None:
    name = item.get("name")
    if not isinstance(name, str) or not name.strip():
        return None
    location = parse_coordinate(item.get("location")) if isinstance(item.get("location"), str) else None
    if location is None and _float(item.get("lng")) is not None and _float(item.get("lat")) is not None:
        location = (float(item["lng"]), float(item["lat"]))
    address = cast(str, item.get("address") if isinstance(item.get("address"), str) else "")
    district = cast(str, item.get("district") if isinstance(item.get("district"), str) else "")
    return Place(name.strip(), address, location, district or address_district(address))


@per_response
def places(response: Any) -> list[Place]:
    """Every named place in a POI, nearby-search or reverse-geocoding response."""
    body = unwrap(response)
    found: list[Place] = []
    stack = [body]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            place = _place(item) if "location" in item or "lng" in item else None
            if place is not None:
                found.append(place)
            stack.extend(v for v in reversed(list(item.values())) if isinstance(v, (dict, list)))
        elif isinstance(item, list):
            stack.extend(reversed(item))
    return found


@per_response
def nearby_pois(response: Any) -> list[Place] | None:
    """The ``pois`` list of a nearby-search response (None when there is none)."""
    items = poi_items(unwrap(response))
    if items is None:
        return None
    return [p for p in (_place(item) for item in items) if p is not None]


@per_response
def poi_distances(response: Any) -> tuple[tuple[str, float | None], ...]:
    """``(name, distance)`` of each distinct raw name in a nearby search's ``pois``, its first item's ``distance``
    (None when that item states none that reads as a number)."""
    body = response.get("data") if isinstance(response, dict) and isinstance(response.get("data"), dict) else response
    found: dict[str, float | None] = {}
    for item in body.get("pois") or [] if isinstance(body, dict) else []:
        if isinstance(item, dict) and isinstance(item.get("name"), str) and item["name"] not in found:
            try:
                found[item["name"]] = float(item["distance"])
            except (KeyError, TypeError, ValueError):
                found[item["name"]] = None
    return tuple(found.items())


@per_response
def address_component(response: Any) -> tuple[str, str, str]:
    """``(province, city, street and number)`` of a reverse-geocoding response's ``addressComponent``."""
    body = response.get("data") if isinstance(response, dict) and isinstance(response.get("data"), dict) else response
    regeo = body.get("regeocode") if isinstance(body, dict) else None
    comp = cast(dict, regeo.get("addressComponent")
                if isinstance(regeo, dict) and isinstance(regeo.get("addressComponent"), dict) else {})
    street = cast(dict, comp.get("streetNumber") if isinstance(comp.get("streetNumber"), dict) else {})
    number_text = "".join(str(street.get(k)) for k in ("street", "number") if isinstance(street.get(k), str))
    return (cast(str, comp.get("province") if isinstance(comp.get("province"), str) else ""),
            cast(str, comp.get("city") if isinstance(comp.get("city"), str) else ""), number_text)


_DISTRICT = re.compile(r"([\u4e00-\u9fa5]{1,8}?(?:区|县|市|旗))")
_ROAD = re.compile(r"([\u4e00-\u9fa5A-Za-z0-9]{1,12}?(?:大道|大街|公路|高速|国道|省道|县道|乡道|路|街|道|巷|胡同|线))")


def address_district(address: str) -> str:
    """``"广东省 宝安区 石岩街道..."`` -> ``"宝安区"`` (the first district-level token after the province)."""
    if not address:
        return ""
    parts = address.split()
    candidates = parts[1:] if len(parts) > 1 else [re.sub(r"^.*?省", "", address)]
    for part in candidates:
        match = _DISTRICT.match(part)
        if match:
            return match.group(1)
    return ""


def address_roads(address: str) -> list[str]:
    """Road names in an address: ``"石岩街道宝石东路209号"`` -> ``["宝石东路"]`` (街道 is not a road)."""
    text = re.sub(r"[\u4e00-\u9fa5]{1,6}街道", " ", address or "")
    return [m.group(1) for m in _ROAD.finditer(text)]


@dataclass(frozen=True)
class GeocodeFacts:
    formatted_address: str
    district: str
    township: str
    roads: tuple[str, ...]
    poi_names: tuple[str, ...]


@per_response
def geocode_facts(response: Any) -> GeocodeFacts | None:
    regeo = regeocode(unwrap(response))
    if regeo is None:
        return None
    component = cast(dict, regeo.get("addressComponent") if isinstance(regeo.get("addressComponent"), dict) else {})

    def text(value: Any) -> str:
        return value if isinstance(value, str) else ""

    roads = [text(r.get("name")) for r in _list(regeo.get("roads")) if isinstance(r, dict)]
    street = cast(dict, component.get("streetNumber") if isinstance(component.get("streetNumber"), dict) else {})
    roads.append(text(street.get("street")))
    pois = [text(p.get("name")) for p in _list(regeo.get("pois")) if isinstance(p, dict)]
    return GeocodeFacts(text(regeo.get("formatted_address")), text(component.get("district")),
                        text(component.get("township")), tuple(r for r in roads if r), tuple(p for p in pois if p))


@dataclass(frozen=True)
class WeatherDay:
    date: str
    condition: str
    low: float  # °C; a forecast day is read only with both ends (see weather_facts)
    high: float


@dataclass(frozen=True)
class WeatherFacts:
    """Current weather (``condition`` + ``temperature``) or a forecast (``days``)."""

    city: str
    condition: str = ""
    temperature: float | None = None
    days: tuple[WeatherDay, ...] = ()
    updated: str = ""

    @property
    def is_forecast(self) -> bool:
        return bool(self.days)

    @property
    def is_empty(self) -> bool:
        return not self.days and not (self.condition and self.temperature is not None)


_CURRENT = re.compile(r"^(.*?)当前天气(.*?)[，,]\s*气温\s*(-?\d+(?:\.\d+)?)?\s*℃")
_FORECAST_DAY = re.compile(r"(\d{4}-\d{2}-\d{2})[^：:]*[：:]\s*([^，,]+)[，,]\s*气温\s*(-?\d+)\s*~\s*(-?\d+)\s*℃")
_UPDATED = re.compile(r"更新时间[：:]\s*(\d{4}-\d{2}-\d{2})")


@per_response
def weather_facts(response: Any) -> WeatherFacts | None:
    description = weather_description(unwrap(response))
    if description is None:
        return None
    updated = _UPDATED.search(description)
    days = tuple(WeatherDay(d, c.strip(), float(lo), float(hi)) for d, c, lo, hi in _FORECAST_DAY.findall(description))
    if days:
        city = description.split("未来")[0].strip()
        return WeatherFacts(city=city, days=days, updated=updated.group(1) if updated else "")
    current = _CURRENT.search(description)
    if current is None:
        return WeatherFacts(city="")
    temperature = float(current.group(3)) if current.group(3) else None
    return WeatherFacts(current.group(1).strip(), current.group(2).strip(), temperature,
                        updated=updated.group(1) if updated else "")


@per_response
def weather_text(response: Any) -> str:
    """The whole weather description (the innermost ``data``'s ``weather_description``, or a text body)."""
    body = response
    while isinstance(body, dict) and "data" in body:
        body = body["data"]
    if isinstance(body, dict):
        return str(body.get("weather_description") or "")
    return body if isinstance(body, str) else ""


TRAFFIC_STATES = ("畅通", "缓行", "拥堵", "严重拥堵")
_TRAFFIC_STATUS_CODES = {"1": "畅通", "2": "缓行", "3": "拥堵", "4": "严重拥堵"}


@dataclass(frozen=True)
class TrafficFacts:
    """Overall state (one of :data:`TRAFFIC_STATES` or ``"未知"``) and the description."""

    state: str
    description: str = ""
    states_mentioned: frozenset[str] = field(default_factory=frozenset)


def traffic_state_words(text: str) -> set[str]:
    """Traffic states a text asserts, negations removed (``不堵`` asserts nothing about 拥堵).

    Chinese and English: 畅通/通畅/顺畅/基本畅通/smooth/clear/free-flowing -> 畅通;
    缓行/缓慢/行驶缓慢/slow -> 缓行; 拥堵/堵车/堵塞/congested/jam -> 拥堵; 严重拥堵/severe -> 严重拥堵.
    """
    lowered = (text or "").lower()
    lowered = re.sub(r"(不|没有|没|无|未|并不|不会)(太|怎么|很|算)?(拥堵|堵车|堵塞|堵|缓行|缓慢|拥挤)", " ", lowered)
    lowered = re.sub(r"\b(not|no|isn't|isnt|without)\s+(very\s+)?(congest\w*|jam\w*|slow\w*|heavy)", " ", lowered)
    states: set[str] = set()
    if re.search(r"严重拥堵|严重堵|severe", lowered):
        states.add("严重拥堵")
        lowered = re.sub(r"严重拥堵|严重堵", " ", lowered)
    if re.search(r"拥堵|堵车|堵塞|堵|拥挤|congest|jam|heavy traffic", lowered):
        states.add("拥堵")
    if re.search(r"缓行|缓慢|慢行|slow", lowered):
        states.add("缓行")
    if re.search(r"畅通|通畅|顺畅|smooth|clear|free[- ]flow|flowing freely|no congestion", lowered):
        states.add("畅通")
    return states


@per_response
def traffic_facts(response: Any) -> TrafficFacts | None:
    info = traffic_info(unwrap(response))
    if info is None:
        return None
    evaluation = cast(dict, info.get("evaluation") if isinstance(info.get("evaluation"), dict) else {})
    description = cast(str, info.get("description") if isinstance(info.get("description"), str) else "")
    code_state = _TRAFFIC_STATUS_CODES.get(str(evaluation.get("status", "")).strip())
    words = traffic_state_words(str(evaluation.get("description", "")))
    # The evaluation's own word wins ("基本畅通" comes with status 2); the code is the fallback.
    state = next((s for s in TRAFFIC_STATES if s in words), code_state or "未知")
    mentioned = traffic_state_words(description) | words | {state} | ({code_state} if code_state else set())
    return TrafficFacts(state, description, frozenset(mentioned))


#: The evidence view the verifier reads from a response, per tool kind (the kinds of
#: :data:`mobility_env.mobilitybench.toolkinds.TOOL_KINDS`; ``tests/test_toolkinds.py`` checks both name the same
# kinds).
EVIDENCE_VIEWS: dict[str, Any] = {
    "poi": places, "around": nearby_pois, "geocode": geocode_facts, "weather": weather_facts,
    "traffic": traffic_facts, "route": route_options,
}


# ------------------------------------------------------------------ stored evidence
#: 1: every view of this module, stored by the build beside each recorded response.
EVIDENCE_VERSION = 1
#: What a built directory records (``meta.json`` of its index, ``evidence_version``): a stored record is read only
#: under the same schema.
EVIDENCE_SCHEMA = f"{EVIDENCE_VERSION}+reader{READER_VERSION}"


def _stored_view(lazy: LazyJSON, name: str, encoded: Any) -> Any:
    """A stored view decoded; a record of another shape (a damaged file) is a CorruptDataError naming the cell."""
    try:
        return _CODECS[name][1](encoded)
    except (TypeError, ValueError, IndexError, KeyError, AttributeError) as exc:
        file, row, _ = lazy.where or (None, None, None)
        raise CorruptDataError(file or "<sandbox>", f"stored evidence view {name!r} is not the shape the build writes "
                               f"({type(exc).__name__}: {exc})", row=row, column="evidence") from exc


def _tuple(value: Any) -> tuple[Any, ...]:
    return tuple(value)


def _option(o: list[Any]) -> RouteOption:
    return RouteOption(o[0], o[1], o[2], tuple(o[3]), tuple(o[4]), tuple(o[5]), tuple(o[6]), o[7], o[8], o[9],
                       tuple((road, metres) for road, metres in o[10]), o[11])


def _place_out(p: Place) -> list[Any]:
    return [p.name, p.address, None if p.location is None else list(p.location), p.district]


def _place_in(p: list[Any]) -> Place:
    return Place(p[0], p[1], None if p[2] is None else (p[2][0], p[2][1]), p[3])


def _or_none(codec: Callable[[Any], Any]) -> Callable[[Any], Any]:
    return lambda value: None if value is None else codec(value)


def _identity(value: Any) -> Any:
    return value


#: ``{view: (encode to JSON values, decode back to exactly what the view returns)}``.
_CODECS: dict[str, tuple[Callable[[Any], Any], Callable[[Any], Any]]] = {
    "route_options": (_or_none(lambda options: [list(o) for o in options]),
                      _or_none(lambda options: [_option(o) for o in options])),
    "taxi_cost": (_identity, _identity),
    "route_count": (_identity, _identity),
    "places": (lambda found: [_place_out(p) for p in found], lambda found: [_place_in(p) for p in found]),
    "nearby_pois": (_or_none(lambda found: [_place_out(p) for p in found]),
                    _or_none(lambda found: [_place_in(p) for p in found])),
    "poi_distances": (lambda pairs: [list(pair) for pair in pairs], lambda pairs: tuple((n, d) for n, d in pairs)),
    "address_component": (list, _tuple),
    "geocode_facts": (_or_none(lambda f: [f.formatted_address, f.district, f.township, list(f.roads),
                                          list(f.poi_names)]),
                      _or_none(lambda f: GeocodeFacts(f[0], f[1], f[2], tuple(f[3]), tuple(f[4])))),
    "weather_facts": (_or_none(lambda f: [f.city, f.condition, f.temperature,
                                          [[d.date, d.condition, d.low, d.high] for d in f.days], f.updated]),
                      _or_none(lambda f: WeatherFacts(f[0], f[1], f[2], tuple(WeatherDay(*d) for d in f[3]), f[4]))),
    "weather_text": (_identity, _identity),
    "traffic_facts": (_or_none(lambda f: [f.state, f.description, sorted(f.states_mentioned)]),
                      _or_none(lambda f: TrafficFacts(f[0], f[1], frozenset(f[2])))),
}


def encode_evidence(response_text: str, response: Any = None) -> str:
    """Every view of one recorded response (its stored JSON text; ``response``: the text decoded, when the caller
    has it) as one compact JSON object, for the build to store: ``{view: encoded view}``; a response that does not
    decode stores ``{}`` (its views are then computed from the text, which reports it, when a scorer reads them)."""
    if response is None:
        try:
            response = json.loads(response_text)
        except (TypeError, ValueError):
            return "{}"
    views: dict[str, Any] = {}
    for name, view in VIEWS.items():
        if name == "places" and '"location"' not in response_text and '"lng"' not in response_text:
            # the walk makes a place only of an object with one of these keys, and a build writes keys as they
            # are (json.dumps escapes no ASCII letter): none in the text, no place (the walk is most of the cost)
            views[name] = []
            continue
        views[name] = _CODECS[name][0](view(response))
    return json.dumps(views, ensure_ascii=False, separators=(",", ":"))


def has_response(record: Any) -> bool:
    """Does the record hold a response (not ``None`` / JSON ``null``)? Decodes nothing."""
    value = record.__dict__.get("response") if hasattr(record, "__dict__") else None
    return not value.is_null() if type(value) is LazyJSON else record.response is not None


def served(record: Any) -> Any:
    """A call record's (or recorded call's) response as the readers above take it: the stored text when it is still
    undecoded (its stored evidence is read instead of decoding it), else the response."""
    value = record.__dict__.get("response") if hasattr(record, "__dict__") else None
    return value if type(value) is LazyJSON else record.response
