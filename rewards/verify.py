"""DR and FPR: was an answer delivered, and does it satisfy every constraint of the query?

``verify_answer(episode, trajectory) -> Verdict`` dispatches on the episode:

* **route tasks** (the gold calls a route tool): :mod:`rewards.verify_route`;
* **POI Query**: the first evidence place the answer names (name or street address, from a
  ``query_poi``/``search_around_poi`` response *served in this trajectory*) lies within
  :data:`PLACE_TOLERANCE_M` (1 km) of the gold place, or in the same district on the same road;
* **Geolocation Query**: a ``reverse_geocoding`` response for a point within 1 km of the gold
  point, and the answer states its formatted address, or two of {district, township, a road,
  a nearby POI} from it;
* **Nearby Query**: a ``search_around_poi`` response centred within 1 km of the gold centre
  (for the gold keywords, fuzzily) and the answer names one of its POIs — or, when it found
  nothing, the answer says so;
* **Weather Query**: a ``weather_query`` response for the gold city and forecast flag; the
  answer states its condition and temperature (±:data:`TEMPERATURE_TOLERANCE_C`); for a
  forecast, the asked day's condition, low and high (day from the gold ``time`` slot, else
  today);
* **Traffic Info Query**: a ``traffic_status`` response for the gold road; the answer asserts
  a traffic state (畅通/缓行/拥堵/严重拥堵, Chinese or English, negations understood) and
  every state it asserts appears in the evidence.

**Evidence comes only from ``trajectory.calls[*].response``** (with ``entry_arguments`` telling
which recorded call served it), never from the gold: an answer that only repeats keywords
or guesses the right words without having retrieved them scores FPR 0.

DR: a finish with a non-empty answer, not truncated (for route tasks also a chosen route
that exists). FPR requires DR. Edge cases: no finish or truncated -> DR 0, FPR 0; empty
evidence (no route, no POI, no weather data) passes only an answer that says nothing was
found, and only when the call that came back empty is the right one.
"""

from __future__ import annotations

import re
from typing import Any, Iterable

from rapidfuzz import fuzz

from mobility_env.canonical import canonical_flag
from mobility_env.episode import Episode
from mobility_env.geo import haversine_m
from mobility_env.tools import TOOLS, canonical_tool_name, parse_coordinate
from mobility_env.trajectory import CallRecord, Trajectory

from .evidence import (Place, address_district, address_roads, geocode_facts, nearby_pois, places, traffic_facts,
                       traffic_state_words, weather_facts)
from .slots import canonical_day, city_key, fold_text, same_place_name
from .units import parse_temperatures
from .verdict import Verdict
from .verify_route import NO_RESULT, gold_route_call, verify_route_answer

PLACE_TOLERANCE_M = 1000.0
TEMPERATURE_TOLERANCE_C = 1.0
_DAY_OFFSETS = {"今天": 0, "明天": 1, "后天": 2, "大后天": 3}
_CONDITION_WORDS = {"晴": ("sunny", "clear"), "多云": ("cloudy",), "阴": ("overcast",), "雨": ("rain",),
                    "雪": ("snow",), "雾": ("fog",), "霾": ("haze",), "沙": ("sand", "dust"), "风": ("wind",)}


def _served(calls: Iterable[CallRecord], kind: str) -> list[CallRecord]:
    result = []
    for call in calls:
        tool = canonical_tool_name(call.name)
        if tool is not None and TOOLS[tool].kind == kind and call.succeeded and call.response is not None:
            result.append(call)
    return result


def _entry_args(call: CallRecord) -> dict[str, Any]:
    if isinstance(call.entry_arguments, dict):
        return call.entry_arguments
    return call.arguments if isinstance(call.arguments, dict) else {}


def _point(value: Any) -> tuple[float, float] | None:
    if isinstance(value, str):
        point = parse_coordinate(value)
        if point is None:
            numbers = re.findall(r"-?\d+(?:\.\d+)?", value)
            if len(numbers) == 2:
                point = parse_coordinate(f"{numbers[0]},{numbers[1]}")
        return point
    if isinstance(value, (tuple, list)) and len(value) == 2:
        return parse_coordinate(f"{value[0]},{value[1]}")
    return None


def _gold_args(episode: Episode, tool: str) -> dict[str, Any]:
    for call in reversed(episode.gold_calls):
        if call.name == tool:
            return call.arguments
    return {}


def _gold_place(episode: Episode) -> Place | None:
    for index, call in enumerate(episode.gold_calls):
        if call.name == "query_poi":
            record = episode.gold_response(index)
            found = places(record.response) if record is not None else []
            if found:
                return found[0]
    point = _point(episode.fields.get("ans_loc"))
    return Place("", "", point) if point else None


def _mention_position(answer_folded: str, place: Place) -> int | None:
    """Where the answer names ``place`` (its name, bracket-less name or street address)."""
    candidates = [place.name, re.sub(r"[(（].*?[)）]", "", place.name)]
    street = place.address.split()[-1] if place.address and len(place.address.split()) > 1 else ""
    if len(fold_text(street)) >= 4 and any(ch.isdigit() for ch in street):
        candidates.append(street)
    positions = []
    for text in candidates:
        folded = fold_text(text)
        if len(folded) >= 2:
            position = answer_folded.find(folded)
            if position >= 0:
                positions.append(position)
    return min(positions) if positions else None


def _first_named_place(answer: str, candidates: list[Place]) -> Place | None:
    folded = fold_text(answer)
    named = [(pos, i, p) for i, p in enumerate(candidates) if (pos := _mention_position(folded, p)) is not None]
    return min(named, key=lambda item: (item[0], item[1]))[2] if named else None


def _same_district_and_road(a: Place, b: Place) -> bool:
    district_a, district_b = a.district or address_district(a.address), b.district or address_district(b.address)
    roads_a, roads_b = set(address_roads(a.address)), set(address_roads(b.address))
    return bool(district_a) and district_a == district_b and bool(roads_a & roads_b)


def verify_poi(episode: Episode, calls: list[CallRecord], answer: str) -> dict[str, bool]:
    gold = _gold_place(episode)
    evidence = [p for call in _served(calls, "poi") + _served(calls, "around") for p in places(call.response)]
    named = _first_named_place(answer, evidence)
    if gold is None or named is None:
        return {"names_retrieved_place": named is not None, "gold_place_known": gold is not None}
    near = named.location is not None and gold.location is not None and \
        haversine_m(named.location, gold.location) <= PLACE_TOLERANCE_M
    return {"names_retrieved_place": True, "place_matches": near or _same_district_and_road(named, gold)}


def verify_geolocation(episode: Episode, calls: list[CallRecord], answer: str) -> dict[str, bool]:
    gold_args = _gold_args(episode, "reverse_geocoding")
    gold_point = _point(f"{gold_args.get('longitude')},{gold_args.get('latitude')}") or _point(episode.user_location)
    folded = fold_text(answer)
    for call in reversed(_served(calls, "geocode")):
        args = _entry_args(call)
        point = _point(f"{args.get('longitude')},{args.get('latitude')}")
        facts = geocode_facts(call.response)
        if facts is None or point is None or gold_point is None or haversine_m(point, gold_point) > PLACE_TOLERANCE_M:
            continue
        address = fold_text(facts.formatted_address)
        if address and (address in folded or fuzz.partial_ratio(address, folded) >= 90):
            return {"address_matches": True}
        parts = [facts.district, facts.township]
        hits = sum(1 for part in parts if len(fold_text(part)) >= 2 and fold_text(part) in folded)
        hits += any(len(fold_text(r)) >= 2 and fold_text(r) in folded for r in facts.roads)
        hits += any(len(fold_text(p)) >= 2 and fold_text(p) in folded for p in facts.poi_names)
        return {"address_matches": hits >= 2}
    return {"geocoded_gold_point": False}


def verify_nearby(episode: Episode, calls: list[CallRecord], answer: str) -> dict[str, bool]:
    gold_args = _gold_args(episode, "search_around_poi")
    centre = _point(gold_args.get("location")) or _point(episode.fields.get("centre_loc"))
    keywords = gold_args.get("keywords") or episode.gold_slots.get("keyword")
    for call in reversed(_served(calls, "around")):
        args = _entry_args(call)
        point = _point(args.get("location"))
        if centre is None or point is None or haversine_m(point, centre) > PLACE_TOLERANCE_M:
            continue
        if keywords and not same_place_name(str(args.get("keywords") or ""), str(keywords)):
            continue
        pois = nearby_pois(call.response)
        if pois is None:
            continue
        if not pois:
            return {"says_nothing_found": bool(NO_RESULT.search(answer))}
        return {"names_returned_poi": _first_named_place(answer, pois) is not None}
    return {"searched_gold_centre": False}


def _condition_stated(condition: str, answer: str) -> bool:
    if not condition:
        return False
    if condition in answer:
        return True
    lowered = answer.lower()
    words = [w for key, aliases in _CONDITION_WORDS.items() if key == condition for w in aliases]
    return bool(words) and any(w in lowered for w in words)


def _temperature_stated(value: float | None, stated: list[float]) -> bool:
    return value is not None and any(abs(value - t) <= TEMPERATURE_TOLERANCE_C for t in stated)


def _forecast_day_index(episode: Episode, days: tuple, updated: str) -> int:
    word = canonical_day(episode.gold_slots.get("time")) if episode.gold_slots.get("time") else ""
    if not word:
        word = next((w for w in ("大后天", "后天", "明天", "今天") if w in episode.query), "今天")
    offset = _DAY_OFFSETS.get(word, 0)
    dates = [day.date for day in days]
    base = dates.index(updated) if updated in dates else 0
    return min(base + offset, len(days) - 1)


def verify_weather(episode: Episode, calls: list[CallRecord], answer: str) -> dict[str, bool]:
    gold_args = _gold_args(episode, "weather_query")
    gold_city = city_key(gold_args.get("city") or episode.gold_slots.get("city"))
    gold_forecast = canonical_flag(gold_args.get("need_forecast", episode.gold_slots.get("forecast", False)))
    for call in reversed(_served(calls, "weather")):
        args = _entry_args(call)
        if city_key(args.get("city")) != gold_city or canonical_flag(args.get("need_forecast")) != gold_forecast:
            continue
        facts = weather_facts(call.response)
        if facts is None:
            continue
        if facts.is_empty:
            return {"says_no_data": bool(NO_RESULT.search(answer))}
        stated = parse_temperatures(answer)
        if facts.is_forecast:
            day = facts.days[_forecast_day_index(episode, facts.days, facts.updated)]
            return {"condition": _condition_stated(day.condition, answer),
                    "temperature": _temperature_stated(day.low, stated) and _temperature_stated(day.high, stated)}
        return {"condition": _condition_stated(facts.condition, answer),
                "temperature": _temperature_stated(facts.temperature, stated)}
    return {"queried_gold_city": False}


def verify_traffic(episode: Episode, calls: list[CallRecord], answer: str) -> dict[str, bool]:
    gold_args = _gold_args(episode, "traffic_status")
    road = str(gold_args.get("name") or episode.gold_slots.get("road") or "")
    for call in reversed(_served(calls, "traffic")):
        name = str(_entry_args(call).get("name") or "")
        if not (same_place_name(name, road) or (fold_text(name) and fold_text(name) in fold_text(road))
                or (fold_text(road) and fold_text(road) in fold_text(name))):
            continue
        facts = traffic_facts(call.response)
        if facts is None:
            continue
        if facts.state == "未知":
            return {"says_unknown": bool(NO_RESULT.search(answer) or "未知" in answer or "unknown" in answer.lower())}
        asserted = traffic_state_words(answer)
        return {"states_traffic": bool(asserted), "state_matches": bool(asserted) and asserted <= facts.states_mentioned}
    return {"queried_gold_road": False}


_INFO_VERIFIERS = {"POI Query": verify_poi, "Geolocation Query": verify_geolocation, "Nearby Query": verify_nearby,
                   "Weather Query": verify_weather, "Traffic Info Query": verify_traffic}


def _as_verdict(delivered: bool, checks: dict[str, bool], reason: str = "") -> Verdict:
    verdict = Verdict(delivered, reason=reason if not delivered else "")
    for name, ok in checks.items():
        verdict.add(name, ok)
    return verdict


def verify_answer(episode: Episode, trajectory: Trajectory) -> Verdict:
    """DR and FPR of one trajectory (rules in the module docstring)."""
    finish = trajectory.finish
    if finish is None or trajectory.truncated or not isinstance(finish.answer, str) or not finish.answer.strip():
        return Verdict(False, reason="no finished answer" if not trajectory.truncated else "truncated")
    if gold_route_call(episode) is not None:
        route = verify_route_answer(episode, trajectory)
        return _as_verdict(route.delivered, route.checks, route.reason)
    verifier = _INFO_VERIFIERS.get(episode.task_scenario)
    if verifier is None:
        return Verdict(True, reason=f"no verifier for scenario {episode.task_scenario!r}")
    return _as_verdict(True, verifier(episode, trajectory.calls, finish.answer))
