"""The facts of one episode, read once from its replayed gold evidence: what a correct answer may state.

:func:`facts_of` reads one episode (the chosen route option, its legs and clock time; the returned places, address,
weather or traffic); :func:`build_facts` reads many and gives each the places of *other* episodes that share nothing
with its own evidence (foreign places, other branches of a brand, other addresses and townships), for the wrong
answers that name them.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from mobility_env.mobilitybench.episode import Episode
from mobility_env.geo import haversine_m
from mobility_env.mobilitybench.trajectory import CallRecord
from mobility_env.mobilitybench.evidence import (GeocodeFacts, Place, RouteOption, TrafficFacts, WeatherFacts,
                                                 geocode_facts, nearby_pois, places, route_options, traffic_facts,
                                                 weather_facts)
from mobility_rewards.mobilitybench.reference import gold_calls_as_records, reference_answer

from .forms import TRAFFIC_WORDS, ClockFacts, clock_facts, fold, related


ROUTE_SCENARIOS = ("Point-to-Point Planning", "Multi-stop Planning", "Option-Constrained Route Planning",
                   "Route-Constrained Planning", "Route Property Query", "Arrival/Departure Time Query")
FAMILY_OF = {**{s: "route" for s in ROUTE_SCENARIOS}, "POI Query": "poi", "Nearby Query": "nearby",
             "Geolocation Query": "geolocation", "Weather Query": "weather", "Traffic Info Query": "traffic"}
FAMILIES = ("route", "poi", "nearby", "geolocation", "weather", "traffic")
ROUTE_TOOLS = {"driving_route": "driving", "walking_route": "walking", "bicycling_route": "cycling",
               "bus_route": "transit"}
_DAY_OFFSET = {"今天": 0, "明天": 1, "后天": 2, "大后天": 3}


@dataclass(frozen=True)
class Leg:
    """A true part of the chosen route, stated before the total (zh and en)."""

    zh: str
    en: str


@dataclass(repr=False)
class EpisodeFacts:
    """What a correct answer to one episode may state, read from the replayed gold evidence."""

    episode: Episode
    records: list[CallRecord]
    family: str
    reference: tuple[str, int | None]
    keyword: str = ""
    city: str = ""
    # routes
    mode: str = ""
    options: tuple[RouteOption, ...] = ()
    chosen: int | None = None
    legs: tuple[Leg, ...] = ()
    excluded: tuple[str, ...] = ()
    strategies: tuple[str, ...] = ()
    waypoints: tuple[str, ...] = ()
    destination: str = ""
    clock: ClockFacts | None = None
    # information tasks
    places: tuple[Place, ...] = ()
    place_distances: tuple[float | None, ...] = ()  # nearby: each place's distance from the centre, as returned
    geocode: GeocodeFacts | None = None
    province: str = ""
    weather: WeatherFacts | None = None
    day_index: int = 0
    day_ambiguous: bool = False
    several_days: bool = False  # 未来几天, 这几天: every forecast day from today is asked
    traffic: TrafficFacts | None = None
    # places of other episodes that share nothing with this one's evidence
    foreign_places: tuple[Place, ...] = ()
    other_branches: tuple[Place, ...] = ()  # same brand as a returned place, another branch far away
    foreign_addresses: tuple[str, ...] = ()
    foreign_townships: tuple[str, ...] = ()

    def __repr__(self) -> str:  # short: hypothesis prints drawn values on failure
        return f"EpisodeFacts({self.episode_id!r}, {self.scenario!r})"

    @property
    def episode_id(self) -> str:
        return self.episode.episode_id

    @property
    def scenario(self) -> str:
        return self.episode.task_scenario

    @property
    def option(self) -> RouteOption | None:
        return self.options[self.chosen] if self.chosen is not None and self.options else None

    @property
    def evidence_names(self) -> list[str]:
        names = [p.name for p in self.places] + [p.address for p in self.places]
        if self.geocode is not None:
            g = self.geocode
            names += [g.formatted_address, g.district, g.township, *g.roads, *g.poi_names]
        return [n for n in names if n]

    def describe(self) -> dict[str, Any]:
        """The facts, for assertion messages."""
        out: dict[str, Any] = {"episode_id": self.episode_id, "scenario": self.scenario,
                               "query": self.episode.query, "reference": self.reference}
        if self.option is not None:
            out["chosen"] = {"index": self.chosen, "distance_m": self.option.distance_m,
                             "duration_s": self.option.duration_s, "lines": list(self.option.lines)}
        if self.clock is not None:
            out["clock"] = {"value": round(self.clock.value), "target": self.clock.target,
                            "verb": self.clock.verb, "period_known": self.clock.period_known}
        if self.places:
            out["places"] = [(p.name, p.address) for p in self.places[:5]]
        if self.geocode is not None:
            out["geocode"] = self.geocode.formatted_address
        if self.weather is not None:
            out["weather"] = {"condition": self.weather.condition, "temperature": self.weather.temperature,
                              "days": [(x.date, x.condition, x.low, x.high) for x in self.weather.days],
                              "day_index": self.day_index}
        if self.traffic is not None:
            out["traffic"] = {"state": self.traffic.state, "mentioned": sorted(self.traffic.states_mentioned),
                              "description": self.traffic.description}
        return out


# -- reading the evidence ----------------------------------------------------------------------------------------------


def _returned_distance(response: Any, name: str) -> float | None:
    body = response.get("data") if isinstance(response, dict) and isinstance(response.get("data"), dict) else response
    for item in (body.get("pois") or []) if isinstance(body, dict) else []:
        if isinstance(item, dict) and item.get("name") == name:
            try:
                return float(item["distance"])
            except (KeyError, TypeError, ValueError):
                return None
    return None


def _response(records: list[CallRecord], tool: str) -> Any:
    found = [r.response for r in records if r.name == tool and r.response is not None]
    return found[-1] if found else None


def unwrap_route(response: Any) -> dict[str, Any]:
    body = response
    while isinstance(body, dict) and "route" not in body and isinstance(body.get("data"), dict):
        body = body["data"]
    return body.get("route", {}) if isinstance(body, dict) else {}


_LEG_DISTANCE = re.compile(r"(\d+)米")


def _route_legs(tool: str, response: Any, index: int) -> tuple[Leg, ...]:
    """The first walking leg of a transit plan, or the first step of a path, when stated in metres."""
    route = unwrap_route(response)
    legs: list[Leg] = []
    if tool == "bus_route":
        transits = route.get("transits") or []
        transit = transits[index] if index < len(transits) and isinstance(transits[index], dict) else {}
        segments = transit.get("segments") or []
        first = segments[0] if segments and isinstance(segments[0], dict) else {}
        walking = first.get("walking")
        walking = walking if isinstance(walking, dict) else {}
        distance = str(walking.get("distance", ""))
        if distance.isdigit() and int(distance) > 0:
            lines = (first.get("bus") or {}).get("buslines") if isinstance(first.get("bus"), dict) else []
            departure = lines[0].get("departure_stop") if lines and isinstance(lines[0], dict) else None
            stop = departure.get("name") if isinstance(departure, dict) else ""
            stop = stop if isinstance(stop, str) else ""
            station = stop if stop.endswith("站") else stop + "站"
            legs.append(Leg(f"先步行{distance}米" + (f"到{station}" if stop else ""),
                            f"first walk {distance} m" + (f" to {stop}" if stop else "")))
        walking_total = str(transit.get("walking_distance", ""))
        if walking_total.isdigit() and int(walking_total) > 0 and int(walking_total) != int(distance or 0):
            legs.append(Leg(f"需步行{walking_total}米", f"walking {walking_total} m"))
    elif tool in ("driving_route", "walking_route"):
        paths = route.get("paths") or []
        path = paths[index] if index < len(paths) and isinstance(paths[index], dict) else {}
        steps = path.get("steps") or []
        step = steps[0] if steps and isinstance(steps[0], dict) else {}
        instruction = step.get("instruction")
        instruction = instruction if isinstance(instruction, str) else ""
        metres = _LEG_DISTANCE.search(instruction)
        if instruction and metres:
            road = step.get("road_name") if isinstance(step.get("road_name"), str) else ""
            verb = "drive" if tool == "driving_route" else "walk"
            legs.append(Leg(f"先{instruction.rstrip('。')}",
                            f"first {verb} {metres.group(1)} m" + (f" along {road}" if road else "")))
    return tuple(legs)


def _route_facts(facts: EpisodeFacts) -> bool:
    route_records = [r for r in facts.records if r.name in ROUTE_TOOLS and r.response is not None]
    if not route_records:
        return False
    record = route_records[-1]
    assert record.name is not None
    options = route_options(record.response) or []
    _, index = facts.reference
    if not options or index is None or not 0 <= index < len(options):
        return False
    option = options[index]
    if option.distance_m is None or option.duration_s is None or option.duration_s <= 0:
        return False
    slots = facts.episode.gold_slots
    facts.mode = ROUTE_TOOLS[record.name]
    facts.options, facts.chosen = tuple(options), index
    facts.legs = _route_legs(record.name, record.response, index)
    facts.excluded = tuple(slots.get("excluded_lines") or ())
    facts.strategies = tuple(s for s in (slots.get("strategy") or ()) if isinstance(s, str))
    facts.waypoints = tuple(w for w in (slots.get("waypoints") or ()) if isinstance(w, str))
    facts.destination = str(slots.get("destination") or facts.episode.fields.get("query_end_poi") or "")
    facts.keyword = facts.destination
    if facts.scenario == "Arrival/Departure Time Query":
        facts.clock = clock_facts(facts.episode, option.duration_s)
    return True


#: Words of a question about several days: such a question is answered with every forecast day from today.
_SEVERAL_DAYS_WORDS = ("几天", "未来", "接下来", "这周", "本周", "一周", "最近")


def today_index(weather: WeatherFacts) -> int:
    """The index of the forecast's own day (the day it was updated); the first day when it is not listed."""
    dates = [day.date for day in weather.days]
    return dates.index(weather.updated) if weather.updated in dates else 0


def _forecast_day(episode: Episode, weather: WeatherFacts) -> tuple[int, bool]:
    longest_first = sorted(_DAY_OFFSET.items(), key=lambda kv: -len(kv[0]))
    word = str(episode.gold_slots.get("time") or "")
    offset = next((v for k, v in longest_first if k in word), None)
    if offset is None:
        offset = next((v for k, v in longest_first if k in episode.query), None)
    return min(today_index(weather) + (offset or 0), len(weather.days) - 1), offset is None


def _info_facts(facts: EpisodeFacts) -> bool:
    slots, records = facts.episode.gold_slots, facts.records
    facts.city = str(slots.get("city") or facts.episode.fields.get("city") or "")
    if facts.family == "poi":
        response = _response(records, "query_poi")
        facts.places = tuple(places(response))[:1] if response is not None else ()
        facts.keyword = str(slots.get("keyword") or "")
        address = facts.places[0].address if facts.places else ""
        facts.province = address.split()[0] if address else ""
        return bool(facts.places)
    if facts.family == "nearby":
        response = _response(records, "search_around_poi")
        facts.places = tuple(nearby_pois(response) or ()) if response is not None else ()
        facts.place_distances = tuple(_returned_distance(response, p.name) for p in facts.places)
        facts.keyword = str(slots.get("keyword") or "")
        return bool(facts.places)
    if facts.family == "geolocation":
        response = _response(records, "reverse_geocoding")
        facts.geocode = geocode_facts(response) if response is not None else None
        if facts.geocode is None or not facts.geocode.formatted_address:
            return False
        component = _geocode_component(response)
        province = component.get("province")
        facts.province = province if isinstance(province, str) else ""
        city = component.get("city")
        facts.city = city if isinstance(city, str) and city else facts.city
        return True
    if facts.family == "weather":
        response = _response(records, "weather_query")
        facts.weather = weather_facts(response) if response is not None else None
        if facts.weather is None or facts.weather.is_empty:
            return False
        facts.city = facts.weather.city or facts.city
        facts.keyword = facts.city
        if facts.weather.is_forecast:
            facts.day_index, facts.day_ambiguous = _forecast_day(facts.episode, facts.weather)
            facts.several_days = any(w in facts.episode.query for w in _SEVERAL_DAYS_WORDS)
        return True
    if facts.family == "traffic":
        response = _response(records, "traffic_status")
        facts.traffic = traffic_facts(response) if response is not None else None
        facts.keyword = str(slots.get("road") or "")
        return facts.traffic is not None and facts.traffic.state in TRAFFIC_WORDS
    return False


def _geocode_component(response: Any) -> dict[str, Any]:
    body = response
    while isinstance(body, dict) and "regeocode" not in body and isinstance(body.get("data"), dict):
        body = body["data"]
    regeo = body.get("regeocode") if isinstance(body, dict) else None
    component = regeo.get("addressComponent") if isinstance(regeo, dict) else None
    return component if isinstance(component, dict) else {}


_TOWNSHIP_PREFIX = re.compile(r"^[\u4e00-\u9fa5]{1,6}?(?:街道|镇|乡)")
_STREET_NUMBER = re.compile(r"^([\u4e00-\u9fa5A-Za-z0-9]{1,12}?(?:大道|大街|公路|胡同|路|街|道|巷)[0-9-]+号)")


def street_and_number(address: str, admin: Sequence[str] = ()) -> str:
    """The street-and-number part of an address (``宝石东路209号``), or ''.

    ``admin`` are the administrative names the address starts with (province, city, district,
    township), stripped first; a leading ``XX街道``/``XX镇`` is stripped too.
    """
    rest = address.split()[-1] if address.split() else ""
    for piece in admin:
        if piece and rest.startswith(piece):
            rest = rest[len(piece):]
    rest = _TOWNSHIP_PREFIX.sub("", rest)
    match = _STREET_NUMBER.match(rest)
    return match.group(1) if match else ""


def facts_of(episode: Episode) -> EpisodeFacts | None:
    """The facts of one episode, or None when its evidence cannot support a correct answer."""
    family = FAMILY_OF.get(episode.task_scenario)
    if family is None:
        return None
    facts = EpisodeFacts(episode, gold_calls_as_records(episode), family, reference_answer(episode))
    ok = _route_facts(facts) if family == "route" else _info_facts(facts)
    return facts if ok else None


def brand(name: str) -> str:
    """``星巴克(银河路店)`` -> ``星巴克`` (the name without its branch in brackets)."""
    return re.split(r"[(（]", name)[0].strip()


# -- places of other episodes ------------------------------------------------------------------------------------------


def _query_points(facts: EpisodeFacts) -> list[tuple[float, float]]:
    """Where the episode's lookups were centred (the geocoded point, the nearby-search centre)."""
    points = []
    for record in facts.records:
        args: Any = record.arguments if isinstance(record.arguments, dict) else {}
        if record.name == "reverse_geocoding":
            try:
                points.append((float(args.get("longitude")), float(args.get("latitude"))))
            except (TypeError, ValueError):
                pass
        if record.name == "search_around_poi" and isinstance(args.get("location"), str):
            try:
                lng, lat = (float(x) for x in args["location"].split(","))
                points.append((lng, lat))
            except ValueError:
                pass
    return points


def _attach_foreign(all_facts: list[EpisodeFacts]) -> None:
    """Give each episode places of *other* episodes that share no name, address or site with its own."""
    pool: list[tuple[str, Place, tuple[float, float]]] = []  # (episode id, place, its location): located places
    addresses: list[tuple[str, str, str]] = []  # (episode id, formatted address, township)
    for facts in all_facts:
        for record in facts.records:
            if record.name in ("query_poi", "search_around_poi") and record.response is not None:
                pool += [(facts.episode_id, p, p.location) for p in places(record.response)
                         if p.location is not None]
        if facts.geocode is not None:
            addresses.append((facts.episode_id, facts.geocode.formatted_address, facts.geocode.township))
    for facts in all_facts:
        own_names = facts.evidence_names + [facts.keyword, facts.episode.query, facts.city]
        own_sites = [p.location for p in facts.places if p.location is not None] + _query_points(facts)
        rng = random.Random(f"foreign:{facts.episode_id}")
        chosen: list[Place] = []
        seen: set[str] = set()
        for owner, place, location in rng.sample(pool, len(pool)):
            if owner == facts.episode_id or fold(place.name) in seen or len(fold(place.name)) < 3:
                continue
            if any(related(place.name, n) or (place.address and related(place.address, n))
                   for n in own_names if n):
                continue
            if any(haversine_m(location, site) < 2000 for site in own_sites):
                continue
            chosen.append(place)
            seen.add(fold(place.name))
            if len(chosen) >= 40:
                break
        facts.foreign_places = tuple(chosen)
        brands = {brand(p.name) for p in facts.places if brand(p.name) != p.name and len(brand(p.name)) >= 2}
        branches = {fold(p.name): p for _, p, location in pool if brand(p.name) in brands
                    and not any(related(p.name, n) for n in facts.evidence_names)
                    and all(haversine_m(location, site) >= 2000 for site in own_sites)}
        facts.other_branches = tuple(branches.values())[:10]
        if facts.geocode is not None:
            g = facts.geocode
            own = [g.formatted_address, g.district, g.township, facts.city]
            facts.foreign_addresses = tuple(a for e, a, _ in addresses if e != facts.episode_id and not any(
                related(a, o) for o in own if o))[:20]
            facts.foreign_townships = tuple(t for e, _, t in addresses if e != facts.episode_id and t
                                            and not any(related(t, n) for n in facts.evidence_names))[:20]


def build_facts(episodes: Iterable[Episode]) -> list[EpisodeFacts]:
    """Facts of every episode whose evidence supports a correct answer (see :func:`.sweep.usable_facts`)."""
    all_facts = [f for f in (facts_of(e) for e in episodes) if f is not None]
    _attach_foreign(all_facts)
    return all_facts
