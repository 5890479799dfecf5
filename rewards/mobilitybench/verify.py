"""DR and FPR: was an answer delivered, and is every claim it makes true of the evidence?

``verify_answer(episode, trajectory) -> Verdict`` (:mod:`mobility_rewards.verdict`): one verdict type
for every scenario, listing each check with what was expected, what was stated and why it
failed. **Evidence comes only from the responses served in this trajectory**
(``trajectory.calls[*].response``, with ``entry_arguments`` naming the recorded call that
served it), never from the gold: guessing the right words without retrieving them fails.

**DR** (the paper's "complete, executable final output without interruption or
tool-invocation failure"): a finish, not truncated, whose answer is *substantive* — it makes
at least one claim (a quantity, time, place, condition, state, line, or "nothing was
found") and is not the query echoed back — and that rests on at least one successful call of
the tool kind the scenario needs (the kind of the scenario's evidence call). Zero calls and a generic answer is not
delivered.

**FPR** = DR and every check passed. Route tasks: :mod:`mobility_rewards.mobilitybench.verify_route`; how places are
named,
listed and told apart from places the evidence never returned: :mod:`mobility_rewards.mobilitybench.place_names`.
Information
tasks:

* **POI Query** — ``identifies_place``: the answer names a returned place by its full name
  (not merely a longer name that contains it: 北京大学 is not named by 北京大学第一医院), by its
  bracket-less name when that is neither the query's keyword nor shared by another returned
  place, or gives its street address or coordinates; names in the query alone never count.
  ``one_place``: one place, not several; ``place_matches``: within :data:`PLACE_TOLERANCE_M`
  of the gold place (or the same district and road); ``address_consistent``: no province or
  district named that the place's address contradicts.
* **Geolocation Query** — a ``reverse_geocoding`` response for a point within 1 km of the gold
  point; ``address_components``: at least two components below the city (district, township,
  street, street number, a nearby road or POI); ``address_consistent``: every province, city,
  district, township or street the answer names is one of the response's.
* **Nearby Query** — a ``search_around_poi`` response centred within 1 km of the gold centre
  for the gold keywords; ``names_returned_poi``: at least one returned POI named (as above);
  ``distances``: a stated distance is one of the named POIs' distances; when nothing was
  found, the answer says so and names nothing.
* **Weather Query** — a ``weather_query`` response for the gold city and forecast flag; the
  claims are read per day (今天/明天/后天/dates such as 1月20日/weekdays; unlabelled = the first asked day); a
  question about several days (未来几天, 这几天, this week: :func:`forecast_days_asked`) asks every forecast day
  from today, and each is checked: ``condition``: every asked day's condition is stated and every condition
  stated for a day is that day's (graded: 小雨 is not 暴雨; 雨 is compatible with any rain), negations understood
  (``不是晴天`` contradicts a sunny day); ``temperature``: current temperature, or the day's
  low and high (every asked day's), stated within ±:data:`TEMPERATURE_TOLERANCE_C`, and no other temperature;
  ``humidity`` when stated; ``city``: no other city named.
* **Traffic Info Query** — a ``traffic_status`` response for the gold road;
  ``states_traffic``: the overall state is asserted (everyday phrases and English understood,
  negations too: 不畅通 contradicts 畅通); ``state_matches``: every asserted state allows the
  overall one, except states qualified as local (局部/路段/some sections) that the description
  mentions; an unknown state must be answered as unknown.

Edge cases: an answer over :data:`MAX_ANSWER_CHARS` characters or with a number of more than
:data:`MAX_NUMBER_DIGITS` digits is not delivered (check ``answer_bounds``) and is not parsed.
Empty evidence (no POI, no weather data, unknown traffic) passes only an answer
that says nothing was found, and only when the call that came back empty was the right one.
"""

from __future__ import annotations

import re
from typing import Any, Iterable

from mobility_env.reading.quantities import unread_amounts
from mobility_env.reading.text import read_answer
from mobility_env.canonical import canonical_flag
from mobility_env.mobilitybench.episode import Episode
from mobility_env.geo import haversine_m
from mobility_env.tools import TOOLS, canonical_tool_name, parse_coordinate
from mobility_env.mobilitybench.trajectory import CallRecord, Trajectory

from .claims import (clock_claims, hedged_quantities, highway_claims, humidity_claims, light_claims, money_claims,
                     normalize_answer, says_no_result, traffic_claims, weather_claims, weather_compatible,
                     weather_labels_of, TRAFFIC_STATE_CODES, TRAFFIC_STATE_NAMES)
from mobility_env.mobilitybench.evidence import (Place, address_component, address_district, address_roads,
                                                 geocode_facts, has_response, nearby_pois, places, poi_distances,
                                                 served,
                                                 traffic_facts, weather_facts, weather_text)
from .place_names import (_ADMIN, _PLACE_HEDGE, _PROVINCE_LEVEL, _admin_tokens, _bare, _consistent, _wrong_numbers,
                          altered_names, foreign_places, identified_places, mask_places, names_in)
from .slots import canonical_day, city_key, fold_text, same_place_name
from ..units import parse_distances, parse_durations, parse_temperatures, temperature_spans, within_tolerance
from ..verdict import Verdict
from .verify_route import gold_route_call, verify_route_answer

PLACE_TOLERANCE_M = 1000.0
#: Bounds on what is parsed: a longer answer, or a number of more digits, is stuffing, not an answer
#: (and would cost seconds of regex work per episode).
MAX_ANSWER_CHARS = 4000
MAX_NUMBER_DIGITS = 15
TEMPERATURE_TOLERANCE_C = 1.0
_DAY_OFFSETS = {"今天": 0, "明天": 1, "后天": 2, "大后天": 3}
_DAY_WORDS = re.compile(r"大后天|后天|明天|明日|今天|今日|今晚|day after tomorrow|tomorrow|today|tonight|"
                        r"in (?:\d|one|two|three|four) days?|(?:\d)\s*天后|第\s*\d\s*天")
_NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4}
_DAY_WORD_OFFSET = {"大后天": 3, "后天": 2, "明天": 1, "明日": 1, "今天": 0, "今日": 0, "今晚": 0,
                    "day after tomorrow": 2, "tomorrow": 1, "today": 0, "tonight": 0}
_WEEKDAYS = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6, "1": 0, "2": 1, "3": 2, "4": 3,
             "5": 4, "6": 5, "7": 6}
_WEEKDAY_RE = re.compile(r"(?:周|星期|礼拜)([一二三四五六日天1-7])|(monday|tuesday|wednesday|thursday|friday|saturday|sunday)",
                         re.IGNORECASE)
_EN_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_DATE_RE = re.compile(r"(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]|\d{4}-(\d{2})-(\d{2})|(?<!\d)(\d{1,2})[/-](\d{1,2})(?!\d)")


def _served(calls: Iterable[CallRecord], kind: str) -> list[CallRecord]:
    result = []
    for call in calls:
        tool = canonical_tool_name(call.name)
        if tool is not None and TOOLS[tool].kind == kind and call.succeeded and has_response(call):
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


def needed_kinds(episode: Episode) -> frozenset[str]:
    """Tool kinds the answer must rest on: the kind of the scenario's evidence call (the last gold
    call with a recorded response: a route, POI, geocode, nearby, weather or traffic call)."""
    for index in range(len(episode.gold_calls) - 1, -1, -1):
        tool = canonical_tool_name(episode.gold_calls[index].name)
        if tool is not None and episode.gold_response(index) is not None:
            return frozenset({TOOLS[tool].kind})
    return frozenset()


# ------------------------------------------------------------------ POI
def _gold_place(episode: Episode) -> Place | None:
    for index, call in enumerate(episode.gold_calls):
        if call.name == "query_poi":
            record = episode.gold_response(index)
            found = places(served(record)) if record is not None else []
            if found:
                return found[0]
    point = _point(episode.fields.get("ans_loc"))
    return Place("", "", point) if point else None


def _same_district_and_road(a: Place, b: Place) -> bool:
    district_a, district_b = a.district or address_district(a.address), b.district or address_district(b.address)
    roads_a, roads_b = set(address_roads(a.address)), set(address_roads(b.address))
    return bool(district_a) and district_a == district_b and bool(roads_a & roads_b)


def _address_parts(place: Place) -> list[str]:
    parts = place.address.split() + [place.district, place.name]
    parts += [m.group(0) for m in _ADMIN.finditer(place.address.replace(" ", ""))]
    return [p for p in parts if p]


def verify_poi(episode: Episode, calls: list[CallRecord], answer: str, verdict: Verdict) -> None:
    gold = _gold_place(episode)
    evidence = [p for call in _served(calls, "poi") + _served(calls, "around") for p in places(served(call))]
    keyword = str(_gold_args(episode, "query_poi").get("keywords") or episode.gold_slots.get("keyword") or "")
    named = identified_places(answer, evidence, episode.query, keyword)
    altered = altered_names(answer, evidence)
    verdict.add("no_altered_name", not altered, expected="a returned name as it is", stated=", ".join(altered),
                reason=f"'{altered[0]}' is a longer name than any returned place's" if altered else "")
    verdict.add("identifies_place", bool(named), expected=gold.name if gold else "a returned place",
                stated=", ".join(p.name for p in named),
                reason="" if named else "the answer names no returned place by its full name, address or coordinates")
    if not named:
        return
    distinct = [p for i, p in enumerate(named) if not any(
        q.location and p.location and haversine_m(p.location, q.location) <= 100 or q.name == p.name
        for q in named[:i])]
    hedged = bool(_PLACE_HEDGE.search(normalize_answer(answer)))
    verdict.add("one_place", len(distinct) == 1 and not hedged, expected="one place",
                stated=", ".join(p.name for p in distinct) + (" (hedged)" if hedged else ""),
                reason="several places named where one was asked" if len(distinct) > 1 or hedged else "")
    place = named[0]
    if gold is not None:
        near = place.location is not None and gold.location is not None and \
            haversine_m(place.location, gold.location) <= PLACE_TOLERANCE_M
        verdict.add("place_matches", near or _same_district_and_road(place, gold),
                    expected=gold.name or str(gold.location), stated=place.name,
                    reason="" if near else "the named place is not the gold place")
    known = _address_parts(place) + [episode.query, str(episode.context.get("city") or "")]
    province_wrong = [t for t in _admin_tokens(answer, _PROVINCE_LEVEL) if not _consistent(t, known)]
    district_wrong = [t for t in _admin_tokens(answer) if t.endswith(("区", "县")) and not _consistent(t, known)]
    wrong = province_wrong + district_wrong
    wrong += _wrong_numbers(mask_places(answer, [Place(place.name)]), place.address + place.name)
    verdict.add("address_consistent", not wrong, expected=place.address, stated=", ".join(wrong),
                reason=f"{wrong[0]} contradicts the place's address" if wrong else "")
    others = foreign_places(answer, [p.name for p in evidence]
                            + [a for p in evidence for a in (p.address, *p.address.split())]
                            + [episode.query, str(episode.context.get("city") or "")])
    verdict.add("no_other_place", not others, expected=place.name, stated=", ".join(others),
                reason=f"'{others[0]}' is no returned place" if others else "")


# ------------------------------------------------------------------ geolocation
def verify_geolocation(episode: Episode, calls: list[CallRecord], answer: str, verdict: Verdict) -> None:
    gold_args = _gold_args(episode, "reverse_geocoding")
    gold_point = _point(f"{gold_args.get('longitude')},{gold_args.get('latitude')}") or _point(episode.user_location)
    for call in reversed(_served(calls, "geocode")):
        args = _entry_args(call)
        point = _point(f"{args.get('longitude')},{args.get('latitude')}")
        facts = geocode_facts(served(call))
        if facts is None or point is None or gold_point is None or haversine_m(point, gold_point) > PLACE_TOLERANCE_M:
            continue
        component = dict(zip(("province", "city", "street_number"), address_component(served(call))))
        below_city = [facts.district, facts.township] + list(facts.roads) + list(facts.poi_names)
        below_city += [component.get("street_number", "")]
        stated = [c for c in dict.fromkeys(below_city) if len(fold_text(c)) >= 2 and names_in(answer, c)]
        # 科技区东门镇: a component followed by the next one is stated, though 东门 after a name reads as its gate
        folded_answer = fold_text(answer)
        stated += [c for a, b in zip(below_city, below_city[1:]) if len(fold_text(a)) >= 2 and len(fold_text(b)) >= 2
                   and fold_text(a + b) in folded_answer for c in (a, b) if c not in stated]
        stated = list(dict.fromkeys(stated))
        if facts.formatted_address and _after_city(facts.formatted_address, component) and \
                fold_text(_after_city(facts.formatted_address, component)) in fold_text(answer):
            stated = list(dict.fromkeys(stated + [_after_city(facts.formatted_address, component)]))
        enough = len(stated) >= 2 or (len(stated) == 1 and len(_parts_in(stated[0], below_city)) >= 2)
        verdict.add("address_components", enough, expected=facts.formatted_address, stated=", ".join(stated),
                    reason="" if enough else "name at least two address components below the city")
        known = [facts.formatted_address, facts.district, facts.township, component.get("province", ""),
                 component.get("city", ""), *facts.roads, *facts.poi_names]
        evidence_text = " ".join([facts.formatted_address, component.get("street_number", ""), *facts.poi_names])
        # a nearby POI's own address may be quoted in brackets after its name: 靠近X（玉兰大街83号）
        nearby = [Place(f"{p.name}{o}{p.address}{c}") for p in places(served(call)) if p.address
                  for o, c in (("(", ")"), ("（", "）"))]
        names_only = nearby + [Place(p.name) for p in places(served(call))]
        masked = mask_places(answer, names_only)  # a returned POI's name holds no claim (靠近沙县小吃: 沙县 is no county)
        wrong = [t for t in _admin_tokens(masked)
                 if not _consistent(t, known) and fold_text(t) not in fold_text(facts.formatted_address)]
        wrong += _wrong_numbers(masked, evidence_text)
        verdict.add("address_consistent", not wrong, expected=facts.formatted_address, stated=", ".join(wrong),
                    reason=f"{wrong[0]} is not part of the address" if wrong else "")
        return
    verdict.add("geocoded_gold_point", False, expected=str(gold_point),
                reason="no reverse_geocoding response for the user's position was served")


def _after_city(address: str, component: dict[str, str]) -> str:
    rest = address
    for key in ("province", "city"):
        value = component.get(key) or ""
        if value and rest.startswith(value):
            rest = rest[len(value):]
    return rest if len(fold_text(rest)) >= 4 else ""


def _parts_in(text: str, parts: list[str]) -> list[str]:
    return [p for p in parts if len(fold_text(p)) >= 2 and fold_text(p) in fold_text(text)]


# ------------------------------------------------------------------ nearby
def verify_nearby(episode: Episode, calls: list[CallRecord], answer: str, verdict: Verdict) -> None:
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
        pois = nearby_pois(served(call))
        if pois is None:
            continue
        if not pois:
            says = says_no_result(answer)
            verdict.add("says_nothing_found", says, reason="" if says else "the search found nothing: say so")
            return
        named = identified_places(answer, pois, episode.query, str(keywords or ""))
        altered = altered_names(answer, pois)
        verdict.add("no_altered_name", not altered, expected="returned names as they are", stated=", ".join(altered),
                    reason=f"'{altered[0]}' is a longer name than any returned place's" if altered else "")
        verdict.add("names_returned_poi", bool(named), expected=", ".join(p.name for p in pois[:3]),
                    stated=", ".join(p.name for p in named),
                    reason="" if named else "the answer names none of the returned places")
        others = foreign_places(answer, [p.name for p in pois]
                                + [a for p in pois for a in (p.address, *p.address.split())]
                                + [episode.query, str(episode.context.get("city") or ""), str(keywords or "")])
        verdict.add("no_other_place", not others, expected="returned places only", stated=", ".join(others),
                    reason=f"'{others[0]}' is not among the returned places" if others else "")
        distances = parse_distances(mask_places(normalize_answer(answer), pois))
        if distances:
            known = [d for d in (_poi_distance(served(call), p, point) for p in (named or pois)) if d is not None]
            wrong = [d.value for d in distances if not any(within_tolerance(d, k) for k in known)]
            verdict.add("distances", not wrong, expected=", ".join(f"{k:g} m" for k in known),
                        stated=", ".join(f"{d.value:g} m" for d in distances),
                        reason=f"{wrong[0]:g} m is no named place's distance" if wrong else "")
        return
    verdict.add("searched_gold_centre", False, expected=str(centre),
                reason="no nearby search at the asked place was served")


def _poi_distance(response: Any, place: Place, centre: tuple[float, float]) -> float | None:
    """The distance the search stated for the first item named ``place.name``, else the straight-line one."""
    for name, distance in poi_distances(response):
        if name == place.name:
            if distance is not None:
                return distance
            break
    return haversine_m(place.location, centre) if place.location is not None else None


# ------------------------------------------------------------------ weather
#: A question about several days (未来几天, 这几天, this week): every forecast day from today is asked.
_SEVERAL_DAYS = re.compile(r"几天|未来|接下来|这周|本周|一周|最近|next few days|coming days|this week|the week",
                           re.IGNORECASE)


def forecast_days_asked(episode: Episode, days: tuple, updated: str) -> list[int]:
    """The forecast days the question asks about: every day from today for a question about several days, else the
    one day it names (:func:`_forecast_day_index`)."""
    if _SEVERAL_DAYS.search(episode.query or ""):
        dates = [day.date for day in days]
        return list(range(dates.index(updated) if updated in dates else 0, len(days)))
    return [_forecast_day_index(episode, days, updated)]


def _days_required(asked: list[int]) -> list[int]:
    """The asked days an answer must state: every one, except today's in a question about several days (未来几天 may
    be answered from tomorrow on; today's weather, when stated, is checked like every day's)."""
    return asked[1:] if len(asked) > 2 else asked


def _forecast_day_index(episode: Episode, days: tuple, updated: str) -> int:
    word = canonical_day(episode.gold_slots.get("time")) if episode.gold_slots.get("time") else ""
    if not word:
        word = next((w for w in ("大后天", "后天", "明天", "今天") if w in episode.query), "今天")
    offset = _DAY_OFFSETS.get(word, 0)
    dates = [day.date for day in days]
    base = dates.index(updated) if updated in dates else 0
    return min(base + offset, len(days) - 1)


def _weekday_of(description: str, date: str) -> int | None:
    start = description.find(date)
    while start >= 0:
        match = _WEEKDAY_AFTER.match(description, start + len(date))
        if match:
            return _WEEKDAYS.get(match.group(1))
        start = description.find(date, start + 1)
    return None


_WEEKDAY_AFTER = re.compile(r"\s*[（(](?:周|星期)([一二三四五六日天])")


def _day_markers(answer: str, dates: list[str], base: int, weekdays: list[int | None]) -> list[tuple[int, int]]:
    """``(position, day index)`` of each day label in the answer."""
    text = normalize_answer(answer).lower()
    marks = []
    for m in _DAY_WORDS.finditer(text):
        word = m.group(0)
        if word in _DAY_WORD_OFFSET:
            offset = _DAY_WORD_OFFSET[word]
        else:
            digits = re.search(r"\d|one|two|three|four", word)
            amount = (int(digits.group(0)) if digits and digits.group(0).isdigit()
                      else _NUMBER_WORDS.get(digits.group(0), 0) if digits else 0)
            offset = amount - 1 if word.startswith("第") else amount
        marks.append((m.start(), base + offset))
    for m in _WEEKDAY_RE.finditer(text):
        day = _WEEKDAYS.get(m.group(1)) if m.group(1) else _EN_WEEKDAYS.index(m.group(2).lower())
        if day in weekdays:
            marks.append((m.start(), weekdays.index(day)))
    for m in _DATE_RE.finditer(text):
        month, day_of_month = ((m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4)) if m.group(3)
                               else (m.group(5), m.group(6)))
        for i, date in enumerate(dates):
            if date[5:7].lstrip("0") == month.lstrip("0") and date[8:10].lstrip("0") == day_of_month.lstrip("0"):
                marks.append((m.start(), i))
    return sorted(marks)


def _day_at(marks: list[tuple[int, int]], position: int, default: int) -> int:
    day = default
    for start, index in marks:
        if start <= position:
            day = index
    return day


def _temperature_positions(text: str) -> list[tuple[int, float]]:
    """Where each temperature stands in the normalized answer: its day is the last day label before it (a date's own
    digits, 1月20日, are no temperature)."""
    return list(temperature_spans(text))


def verify_weather(episode: Episode, calls: list[CallRecord], answer: str, verdict: Verdict) -> None:
    gold_args = _gold_args(episode, "weather_query")
    gold_city = city_key(gold_args.get("city") or episode.gold_slots.get("city"))
    gold_forecast = canonical_flag(gold_args.get("need_forecast", episode.gold_slots.get("forecast", False)))
    for call in reversed(_served(calls, "weather")):
        args = _entry_args(call)
        if city_key(args.get("city")) != gold_city or canonical_flag(args.get("need_forecast")) != gold_forecast:
            continue
        facts = weather_facts(served(call))
        if facts is None:
            continue
        if facts.is_empty:
            says = says_no_result(answer)
            verdict.add("says_no_data", says, reason="" if says else "the service returned no weather: say so")
            return
        text = normalize_answer(answer)
        description = weather_text(served(call))
        if facts.is_forecast:
            dates = [d.date for d in facts.days]
            base = dates.index(facts.updated) if facts.updated in dates else 0
            asked_days = forecast_days_asked(episode, facts.days, facts.updated)
            weekdays = [_weekday_of(description, d) for d in dates]
            marks = _day_markers(answer, dates, base, weekdays)
            day_labels = [weather_labels_of(d.condition) for d in facts.days]
            day_temps = [[v for v in (d.low, d.high) if v is not None] for d in facts.days]
        else:
            marks, asked_days = [], [0]
            day_labels = [weather_labels_of(facts.condition)]
            day_temps = [[facts.temperature] if facts.temperature is not None else []]
        _weather_condition_checks(text, marks, asked_days, day_labels, facts, verdict)
        _weather_temperature_checks(text, marks, asked_days, day_temps, verdict)
        humidity = re.search(r"湿度\s*(\d+(?:\.\d+)?)\s*%", description)
        stated = humidity_claims(answer)
        if stated:
            wrong = [h.value for h in stated if humidity is None or abs(h.value - float(humidity.group(1))) > 2]
            verdict.add("humidity", not wrong, expected=humidity.group(1) + "%" if humidity else "not recorded",
                        stated=", ".join(f"{h.value:g}%" for h in stated),
                        reason="the stated humidity is not the recorded one" if wrong else "")
        cities = [t for t in _admin_tokens(answer) if t.endswith("市")]
        wrong_city = [t for t in cities if not _consistent(t, [facts.city, str(args.get("city") or "")])]
        if wrong_city:
            verdict.add("city", False, expected=facts.city, stated=", ".join(wrong_city),
                        reason="another city is named")
        return
    verdict.add("queried_gold_city", False, expected=f"{gold_city} forecast={gold_forecast}",
                reason="no weather response for the asked city (and forecast flag) was served")


def _weather_condition_checks(text: str, marks: list[tuple[int, int]], asked: list[int],
                              day_labels: list[frozenset[str]], facts: Any, verdict: Verdict) -> None:
    """Every condition stated for a day is that day's (an unlabelled one is the first asked day's); every asked day's
    condition is stated."""
    claims = weather_claims(text)
    stated_days: set[int] = set()
    wrong = []
    for claim in claims:
        day = _day_at(marks, claim.start, asked[0])
        evidence = day_labels[day] if 0 <= day < len(day_labels) else frozenset()
        compatible = weather_compatible(claim.label, evidence) if evidence else False
        if claim.negated:
            if compatible:
                wrong.append(f"not {claim.label}")
        elif not compatible:
            wrong.append(claim.label)
        else:
            stated_days.add(day)
    missing = [day for day in _days_required(asked) if day not in stated_days]
    expected = "; ".join("/".join(sorted(day_labels[day])) for day in asked if day < len(day_labels))
    verdict.add("condition", not missing and not wrong, expected=expected,
                stated=", ".join(("not " if c.negated else "") + c.label for c in claims),
                reason=(f"{wrong[0]} contradicts the recorded weather" if wrong else
                        "" if not missing else "the asked day's condition is not stated" if len(asked) == 1 else
                        f"the condition of asked day {missing[0] + 1} is not stated"))


def _weather_temperature_checks(text: str, marks: list[tuple[int, int]], asked: list[int],
                                day_temps: list[list[float]], verdict: Verdict) -> None:
    """Every temperature stated for a day is one of that day's; every asked day's temperatures are stated."""
    stated = _temperature_positions(text)
    wrong: list[float] = []
    said: dict[int, list[float]] = {}
    for position, value in stated:
        day = _day_at(marks, position, asked[0])
        allowed = day_temps[day] if 0 <= day < len(day_temps) else []
        if not any(abs(value - t) <= TEMPERATURE_TOLERANCE_C for t in allowed):
            wrong.append(value)
        else:
            said.setdefault(day, []).append(value)
    required = [(day, t) for day in _days_required(asked) for t in (day_temps[day] if day < len(day_temps) else [])]
    missing = [t for day, t in required if not any(abs(t - v) <= TEMPERATURE_TOLERANCE_C for v in said.get(day, []))]
    verdict.add("temperature", not wrong and not missing and bool(required),
                expected=", ".join(f"{t:g}℃" for _, t in required), stated=", ".join(f"{v:g}℃" for _, v in stated),
                reason=(f"{wrong[0]:g}℃ is not a recorded temperature" if wrong else
                        f"{missing[0]:g}℃ is not stated" if missing else "" if required else "no temperature recorded"))


# ------------------------------------------------------------------ traffic
def verify_traffic(episode: Episode, calls: list[CallRecord], answer: str, verdict: Verdict) -> None:
    gold_args = _gold_args(episode, "traffic_status")
    road = str(gold_args.get("name") or episode.gold_slots.get("road") or "")
    for call in reversed(_served(calls, "traffic")):
        name = str(_entry_args(call).get("name") or "")
        if not (same_place_name(name, road) or (fold_text(name) and fold_text(name) in fold_text(road))
                or (fold_text(road) and fold_text(road) in fold_text(name))):
            continue
        facts = traffic_facts(served(call))
        if facts is None:
            continue
        claims = traffic_claims(answer)
        if facts.state == "未知":
            says = says_no_result(answer) or "未知" in answer
            verdict.add("says_unknown", says and not claims, expected="unknown",
                        stated=", ".join(c.phrase for c in claims),
                        reason="" if says and not claims else "the state is unknown: say so and assert none")
            return
        overall = TRAFFIC_STATE_CODES[facts.state]
        mentioned = {TRAFFIC_STATE_CODES[s] for s in facts.states_mentioned if s in TRAFFIC_STATE_CODES}
        asserted = any(overall in c.states and not c.local for c in claims) or \
            any(overall in c.states for c in claims) and all(c.local for c in claims)
        described = normalize_answer(facts.description).lower()
        wrong = [c.phrase for c in claims if overall not in c.states
                 and not (c.states & mentioned and (c.local or c.phrase.lower() in described))]
        verdict.add("states_traffic", asserted, expected=facts.state, stated=", ".join(c.phrase for c in claims),
                    reason="" if asserted else "the road's overall state is not stated")
        verdict.add("state_matches", not wrong, expected=facts.state,
                    stated=", ".join(f"{c.phrase}={'/'.join(TRAFFIC_STATE_NAMES[s] for s in sorted(c.states))}"
                                     for c in claims),
                    reason=f"'{wrong[0]}' contradicts the recorded state" if wrong else "")
        return
    verdict.add("queried_gold_road", False, expected=road, reason="no traffic response for the asked road was served")


_INFO_VERIFIERS = {"POI Query": verify_poi, "Geolocation Query": verify_geolocation, "Nearby Query": verify_nearby,
                   "Weather Query": verify_weather, "Traffic Info Query": verify_traffic}


# ------------------------------------------------------------------ DR
def has_claim(answer: str) -> bool:
    """Does the answer state anything checkable (a quantity, time, condition, state, line, "nothing found")?"""
    text = normalize_answer(answer)
    if re.search(r"\d", text):  # any number is checkable (and the readers below need one for most claims): first
        return True
    return bool(parse_distances(text) or parse_durations(text) or clock_claims(text) or parse_temperatures(text)
                or money_claims(text) or light_claims(text) or weather_claims(text) or traffic_claims(text)
                or highway_claims(text) or says_no_result(text) or hedged_quantities(text) or _admin_tokens(text))


_FILLER = re.compile(r"您问的是|你问的是|你说的是|您说的是|您要找的是|你要找的是|问题是|您的问题|好的|嗯|呃|you asked|your question|"
                     r"you said|the query|query|sure|ok|okay|well|here you go|[：:，,。.!！?？\s\"“”'‘’]", re.IGNORECASE)


def _echoes_query(answer: str, query: str) -> bool:
    """Is the answer the query (or part of it) with nothing but fillers around it?"""
    a, q = fold_text(answer), fold_text(query)
    if not a:
        return True
    if a in q:
        return True
    rest = normalize_answer(answer).lower().replace(normalize_answer(query).lower(), " ") if q and q in a else ""
    return bool(q) and q in a and not _FILLER.sub("", rest).strip()


def _delivery(episode: Episode, trajectory: Trajectory, verdict: Verdict) -> None:
    answer = trajectory.finish.answer if trajectory.finish is not None else ""
    served = {TOOLS[t].kind for c in trajectory.calls if c.succeeded and (t := canonical_tool_name(c.name)) is not None}
    missing = sorted(needed_kinds(episode) - served)
    verdict.add("tools_served", not missing, expected=sorted(needed_kinds(episode)), stated=sorted(served),
                reason=f"no successful {missing[0]} call: the answer rests on no evidence" if missing else "")
    echo = _echoes_query(answer, episode.query)
    substantive = not echo and (has_claim(answer) or _names_evidence(trajectory.calls, answer))
    verdict.add("substantive_answer", substantive, stated=answer[:80],
                reason="" if substantive else ("the answer echoes the query" if echo
                                               else "the answer states nothing checkable"))
    if missing or not substantive:
        verdict.delivered = False
        verdict.reason = "not delivered: " + "; ".join(c.reason for c in verdict.checks if not c.passed)


def _names_evidence(calls: list[CallRecord], answer: str) -> bool:
    evidence = [p for kind in ("poi", "around", "geocode") for call in _served(calls, kind)
                for p in places(served(call))]
    return any(names_in(answer, p.name) or names_in(answer, _bare(p.name)) for p in evidence[:200])


def verify_answer(episode: Episode, trajectory: Trajectory) -> Verdict:
    """DR and FPR of one trajectory with every check behind them (rules in the module docstring); the answer is
    read as :func:`mobility_env.reading.text.read_answer` gives it (no markdown, no invisible characters, Simplified
    characters)."""
    finish = trajectory.finish
    if finish is None or trajectory.truncated or not isinstance(finish.answer, str) or not finish.answer.strip():
        return Verdict(False, reason="truncated" if trajectory.truncated else "no finished answer")
    plain = read_answer(finish.answer)
    if plain != finish.answer:  # every check below reads the trajectory's answer: hand them the plain one
        finish = finish.model_copy(update={"answer": plain})
        trajectory = trajectory.model_copy(update={"finish": finish})
    verdict = Verdict(True)
    answer = finish.answer
    if len(answer) > MAX_ANSWER_CHARS or re.search(r"\d{%d}" % (MAX_NUMBER_DIGITS + 1), answer):
        verdict.add("answer_bounds", False,
                    expected=f"<= {MAX_ANSWER_CHARS} characters, numbers <= {MAX_NUMBER_DIGITS} digits",
                    stated=f"{len(answer)} characters", reason="the answer is too long or states an absurd number")
        verdict.delivered = False
        verdict.reason = "not delivered: the answer exceeds the bounds of a spoken answer"
        return verdict
    _delivery(episode, trajectory, verdict)
    unread = unread_amounts(normalize_answer(answer))
    if unread:  # a claim the reader cannot read cannot be verified (the rule, whatever the unknown spelling)
        verdict.add("amounts_read", False, expected="every amount in a spelling the reader reads", stated=unread[0],
                    reason=f"'{unread[0]}' looks like an amount but cannot be read, so it cannot be verified")
    if gold_route_call(episode) is not None:
        verify_route_answer(episode, trajectory, verdict)
        return verdict
    verifier = _INFO_VERIFIERS.get(episode.task_scenario)
    if verifier is None:
        verdict.add("scenario_known", False, stated=episode.task_scenario, reason="no verifier for this scenario")
        return verdict
    verifier(episode, trajectory.calls, finish.answer, verdict)
    return verdict
