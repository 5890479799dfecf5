"""Task families of the maps & travel domain: real route planning on the phone, from recorded MobilityBench calls.

Every place, coordinate, route, forecast and road comes from the bundled MobilityBench set
(``datasets/default``, :func:`~.generate_world.atlas`: trips from a recorded user position to a
recorded place, with their recorded routes), so that the oracle's ``maps_search_place``,
``maps_route`` and ``start_navigation`` calls hit the replay exactly and the facts an answer must
state are the recorded ones.

Families by category (same ``(rng, world) -> Draft`` contract as :mod:`.generate_grounding`):

* grounding: navigate to a place with a mode and a preference ("导航去X，避开高速"; some requests
  leave the destination out: a behaviour task that must ask), how long / how far a trip is, the weather now,
  a road's traffic (``answer_mentions`` the recorded facts; ``answer_excludes`` the other weather conditions or
  road states), save a place as home/work/school;
* conditional: "if it rains tomorrow, move my alarm 30 minutes earlier" (the recorded forecast
  decides; the answer names tomorrow's weather), "if the drive takes over N minutes, take transit";
* state tracking: navigate and text a contact the ETA, a departure reminder for an arrival time,
  a ride to a place (the destination left out, sometimes), navigate to a saved place;
* intent correction: another destination or another mode than the earlier turn's (navigation to
  the first one may already be running: stop it first);
* error recovery: the families above with planted obstacles (location permission withdrawn,
  location services off, a transient failure of any maps tool), and a navigation retried after a
  failure the user saw.
"""

from __future__ import annotations

import datetime as dt
import random
from typing import Any

from ..canonical import canonical_coordinate
from .domains.maps_travel import travel_minutes
from .generate_oracle import PERMISSION, RUNTIME, STATE, Draft, GenerationError, OracleRun, fact, missing
from .generate_phrases import (CONDITION_WORDS, HOW, LABEL_WORDS, MODE_WORDS, PREFERENCE_WORDS, RIDE_WORDS,
                               TRAFFIC_WORDS, distance_spellings, distance_text, minutes_spellings, minutes_text,
                               other_words, quote, say, say_clock, say_day, shift_clock, word_spellings)
from .generate_tracking import addressee, contact_of
from .generate_world import (ALARM_LABELS, FORECAST_DAY, WEATHER_NOW, CityWeather, Place, Route, Trip, World,
                             atlas)

ASK_RATE = 0.4  # share of navigations and rides whose request leaves the destination out (they must ask)
ALL_KINDS = (RUNTIME, PERMISSION, STATE)
READS = ("maps_current_location", "maps_search_place", "maps_route")


def _trip(rng: random.Random, world: World, need: Any = None) -> Trip:
    """A trip (that ``need`` accepts); the phone is put at its origin with location services on."""
    trip = rng.choice([t for t in atlas().trips if need is None or need(t)])
    world.settings.update(current_location=trip.origin, current_city=trip.city, location="on")
    return trip


def _find(run: OracleRun, place: Place) -> str:
    """The oracle's search for a place: its location as the search returns it."""
    found = run.read("maps_search_place", {"keywords": place.name})["result"]
    if canonical_coordinate(found.get("location")) != canonical_coordinate(place.location):
        raise GenerationError(f"{run.task.task_id}: {place.name!r} is not found where it was recorded: {found}")
    return found["location"]


def _navigate(run: OracleRun, place: Place, route: Route, plan_route: bool = True) -> dict[str, Any]:
    """Search, plan (maps_route from the phone's position), navigate: the start_navigation payload."""
    location = _find(run, place)
    if plan_route:
        here = run.read("maps_current_location")["location"]
        run.read("maps_route", {"origin": here, "destination": location, **route.call()})
    return run.act("start_navigation", {"destination": location, **route.call()}).payload


def _navigating(rng: random.Random, lang: str, place: Place, nav: dict[str, Any]) -> str:
    distance, minutes = distance_text(nav["distance_m"], lang), minutes_text(travel_minutes(nav["duration_s"]), lang)
    return say(rng, lang, [f"已开始导航去{place.name}：全程{distance}，约{minutes}，预计{nav['eta'][11:]}到达。"],
               [f"Navigating to {place.name}: {distance}, about {minutes}, arriving around {nav['eta'][11:]}."])


def _go(rng: random.Random, lang: str, place: Place, route: Route) -> str:
    """'开车去X，避开高速' / 'Drive to X, avoiding highways.'"""
    zh, en = MODE_WORDS[route.mode]
    pref = PREFERENCE_WORDS.get(route.preference)
    query = say(rng, lang, [f"{w}{place.name}" for w in zh], [f"{w} {place.name}" for w in en])
    if pref is not None:
        query += say(rng, lang, [f"，{w}" for w in pref[0]], [f", {w}" for w in pref[1]])
    return query + ("" if lang == "zh" else ".")


def _target(place: Place, route: Route) -> tuple[str, dict[str, Any]]:
    return "start_navigation", {"destination": place.location, **route.call()}


# ------------------------------------------------------------------------------------------------- grounding
def navigate(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    trip = _trip(rng, world)
    place = trip.place
    preferred = [r for r in place.routes if r.preference]
    route = rng.choice(preferred if preferred and rng.random() < 0.6 else list(place.routes))
    ask = rng.random() < ASK_RATE

    def plan(run: OracleRun) -> str:
        if ask:
            run.ask(say(rng, lang, ["要导航去哪里？"], ["Where to?"]))
        return _navigating(rng, lang, place, _navigate(run, place, route))
    if ask:
        query = say(rng, lang, ["帮我开个导航", "开始导航吧"], ["Start navigation for me.", "Navigate, please."])
        return Draft("navigate", "behaviour", query, plan, [_target(place, route)], reads=READS,
                     obstacle_kinds=ALL_KINDS, user_facts=[fact("place", place.name, _go(rng, lang, place, route))],
                     must_ask=True,
                     obstacles=[missing("no destination: the user's reply names it")])
    return Draft("navigate", "state_change", _go(rng, lang, place, route), plan, [_target(place, route)], reads=READS,
                 obstacle_kinds=ALL_KINDS)


def route_facts(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    trip = _trip(rng, world)
    route = rng.choice([r for r in trip.place.routes if not r.preference])
    asked = rng.choice(("time", "distance", "both"))
    how, name = HOW[route.mode], trip.place.name
    query = {"time": say(rng, lang, [f"{how[0]}去{name}要多久？"], [f"How long is the {how[1]} to {name}?"]),
             "distance": say(rng, lang, [f"{how[0]}去{name}有多远？"], [f"How far is {name} {how[2]}?"]),
             "both": say(rng, lang, [f"{how[0]}去{name}多远、要多长时间？"],
                         [f"How far is it to {name}, and how long does the {how[1]} take?"])}[asked]

    def plan(run: OracleRun) -> str:
        here = run.read("maps_current_location")["location"]
        result = run.read("maps_route", {"origin": here, "destination": _find(run, trip.place), **route.call()})
        first = (result["result"].get("paths") or result["result"].get("transits"))[0]
        minutes = minutes_text(travel_minutes(first["duration_s"]), lang)
        distance = distance_text(int(first["distance_m"]), lang)
        return say(rng, lang, [f"{how[0]}去{name}全程约{distance}，大约需要{minutes}。"],
                   [f"{name} is {distance} away; the {how[1]} takes about {minutes}."])
    mentions = ([minutes_spellings(route.minutes)] if asked != "distance" else []) + \
        ([distance_spellings(route.distance_m)] if asked != "time" else [])
    return Draft("route_facts", "behaviour", query, plan, reads=READS, obstacle_kinds=(RUNTIME, PERMISSION),
                 answer_mentions=mentions)


def _at(world: World, weather: CityWeather, dated: bool = False) -> None:
    """Put the phone where the weather was recorded; ``dated``: on the recorded day too (a forecast's 'tomorrow')."""
    world.settings.update(current_location=weather.origin, current_city=weather.city, location="on")
    if dated and weather.day is not None:
        world.move_to(weather.day)


def _degrees(value: int) -> list[str]:
    return [f"{value}℃", f"{value}°C", f"{value} °C", f"{value}度", f"{value} degrees"]


def weather_now(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    weather = rng.choice(atlas().nows)
    _at(world, weather)
    assert weather.now is not None
    condition, degrees = weather.now
    query = say(rng, lang, ["外面冷不冷？", "现在外面天气怎么样？", "这边现在什么天气？"],
                ["Is it cold outside?", "What's the weather like here right now?", "How's the weather out there?"])

    def plan(run: OracleRun) -> str:
        city = run.read("maps_current_location")["city"]
        found = WEATHER_NOW.search(run.read("maps_weather", {"city": city})["result"]["weather"])
        if found is None:
            raise GenerationError(f"{run.task.task_id}: no current weather recorded for {city}")
        said, value = found.group(1), int(found.group(2))
        english = CONDITION_WORDS.get(said, (said,))[0]
        return say(rng, lang, [f"{city}现在{said}，气温{value}℃。"], [f"Right now in {city}: {english} ({said}), {value}°C."])
    return Draft("weather_now", "behaviour", query, plan, reads=("maps_current_location", "maps_weather"),
                 obstacle_kinds=(RUNTIME, PERMISSION),
                 answer_mentions=[_degrees(degrees), word_spellings(condition, CONDITION_WORDS)],
                 answer_excludes=other_words(condition, CONDITION_WORDS))


def traffic_now(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    road = rng.choice(atlas().roads)
    world.settings.update(current_location=road.origin, current_city=road.city)
    query = say(rng, lang, [f"{road.road}现在堵不堵？", f"帮我看看{road.road}的路况"],
                [f"Is {road.road} jammed right now?", f"How's the traffic on {road.road}?"])

    def plan(run: OracleRun) -> str:
        state = run.read("maps_traffic", {"road": road.road})["result"]["state"]
        english = TRAFFIC_WORDS.get(state, (state,))[0]
        return say(rng, lang, [f"{road.road}现在{state}。"], [f"{road.road} is {english} ({state}) right now."])
    return Draft("traffic_now", "behaviour", query, plan, reads=("maps_traffic",),
                 answer_mentions=[word_spellings(road.state, TRAFFIC_WORDS)],
                 answer_excludes=other_words(road.state, TRAFFIC_WORDS))


def save_place(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    trip = _trip(rng, world)
    label = rng.choice(list(LABEL_WORDS))
    zh, en = LABEL_WORDS[label]
    moved = rng.random() < 0.4
    if moved:  # saved elsewhere already: the user says to change it
        other = rng.choice([t for t in atlas().trips if t.place.location != trip.place.location])
        world.extra["saved_places"] = [{"label": label, "location": canonical_coordinate(other.place.location)}]
    args = {"label": label, "location": trip.place.location, **({"replace": True} if moved else {})}
    name = trip.place.name
    query = say(rng, lang, [f"把{zh}的地址改成{name}", f"{zh}搬了，新地址是{name}"] if moved else
                [f"把{name}存成{zh}", f"帮我把{zh}地址设为{name}"],
                [f"Change my {en} address to {name}.", f"My {en} moved to {name}, update it."] if moved else
                [f"Save {name} as {en}.", f"Set my {en} address to {name}."])

    def plan(run: OracleRun) -> str:
        run.act("save_place", {**args, "location": _find(run, trip.place)})
        return say(rng, lang, [f"已把{zh}设为{name}。"], [f"Saved {name} as {en}."])
    return Draft("save_place", "state_change", query, plan, [("save_place", args)], reads=("maps_search_place",))


# ------------------------------------------------------------------------------------------------- conditional
def rain_alarm(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    wet = rng.random() < 0.5  # each branch half of the time (the recorded forecasts are mostly dry)
    weather = rng.choice([w for w in atlas().forecasts if ("雨" in w.days[1][1]) == wet] or atlas().forecasts)
    _at(world, weather, dated=True)
    condition = weather.days[1][1]
    rain = "雨" in condition
    label = ALARM_LABELS[lang][0]
    alarm = next((a for a in world.alarms if a["label"] == label), None) or world.add_alarm("07:00", label, "daily")
    others = {a["time"] for a in world.alarms if a is not alarm}
    alarm["time"] = rng.choice([t for t in ("06:00", "06:30", "07:00", "07:15", "07:30", "08:00", "08:30", "09:00")
                                if t not in others and shift_clock(t, -30) not in others])
    earlier = shift_clock(alarm["time"], -30)
    target = ("update_alarm", {"alarm_id": alarm["alarm_id"], "time": earlier})
    q = quote(label, lang)
    query = say(rng, lang, [f"看看明天会不会下雨，下雨的话把{q}闹钟提前半小时", f"明天要是下雨，就把{q}那个闹钟提早30分钟"],
                [f"Check whether it will rain tomorrow; if it does, move my {q} alarm 30 minutes earlier.",
                 f"If it rains tomorrow, set my {q} alarm half an hour earlier."])

    def plan(run: OracleRun) -> str:
        city = run.read("maps_current_location")["city"]
        text = run.read("maps_weather", {"city": city, "forecast": True})["result"]["weather"]
        day = (dt.date.fromisoformat(run.settings()["clock"][:10]) + dt.timedelta(days=1)).isoformat()
        said = next((c for d, c in FORECAST_DAY.findall(text) if d == day), None)
        if said is None:
            raise GenerationError(f"{run.task.task_id}: the forecast has no {day}")
        english = CONDITION_WORDS.get(said, (said,))[0]
        if "雨" not in said:
            return say(rng, lang, [f"明天{said}，不下雨，{label}闹钟保持{alarm['time']}不变。"],
                       [f"Tomorrow looks {english} ({said}), no rain, so the {label} alarm stays at {alarm['time']}."])
        found = [a for a in run.read("list_alarms")["alarms"] if a["label"] == label]
        run.act("update_alarm", {"alarm_id": found[0]["alarm_id"], "time": earlier})
        return say(rng, lang, [f"明天有{said}，已把{label}闹钟提前到{earlier}。"],
                   [f"Tomorrow brings {english} ({said}); I moved the {label} alarm to {earlier}."])
    reads = ("maps_current_location", "maps_weather", "get_device_status") + (("list_alarms",) if rain else ())
    return Draft("rain_alarm", "behaviour", query, plan, [target] if rain else [], reads=reads,
                 obstacle_kinds=(RUNTIME, PERMISSION), answer_mentions=[word_spellings(condition, CONDITION_WORDS)],
                 answer_excludes=other_words(condition, CONDITION_WORDS))


def _has(mode: str) -> Any:
    return lambda trip: trip.place.route(mode) is not None


def drive_or_transit(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    trip = _trip(rng, world, lambda t: _has("driving")(t) and _has("transit")(t))
    drive, bus = trip.place.route("driving"), trip.place.route("transit")
    assert drive is not None and bus is not None
    slow = rng.random() < 0.5
    step = 5 * rng.randint(1, 3)  # the limit is a round number at least a minute off the drive
    limit = max(5, (drive.minutes // 5) * 5 - step) if slow else (drive.minutes // 5) * 5 + step
    chosen = bus if drive.minutes > limit else drive
    name = trip.place.name
    query = say(rng, lang, [f"看看开车去{name}要多久：超过{limit}分钟就导航坐公交去，不然就开车导航"],
                [f"Check how long the drive to {name} takes: over {limit} minutes, give me transit directions; "
                 f"otherwise navigate by car."])

    def plan(run: OracleRun) -> str:
        location = _find(run, trip.place)
        here = run.read("maps_current_location")["location"]
        first = run.read("maps_route", {"origin": here, "destination": location, **drive.call()})["result"]["paths"][0]
        route = bus if travel_minutes(first["duration_s"]) > limit else drive
        nav = run.act("start_navigation", {"destination": location, **route.call()}).payload
        return _navigating(rng, lang, trip.place, nav)
    return Draft("drive_or_transit", "state_change", query, plan, [_target(trip.place, chosen)], reads=READS,
                 obstacle_kinds=ALL_KINDS)


# ------------------------------------------------------------------------------------------------- state tracking
def share_eta(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    trip = _trip(rng, world, _has("driving"))
    route = trip.place.route("driving")
    assert route is not None
    contact, who, key = addressee(rng, world)
    name = trip.place.name
    query = say(rng, lang, [f"导航去{name}，然后告诉{who}我大概几点到", f"我要去{name}，开导航，再把到达时间发给{who}"],
                [f"Navigate to {name} and let {who} know when I'll get there.",
                 f"Start directions to {name} and text {who} my ETA."])

    def plan(run: OracleRun) -> str:
        nav = _navigate(run, trip.place, route, plan_route=False)
        run.act("share_eta", {"contact_id": contact_of(run, contact, key)})
        return say(rng, lang, [f"已开始导航去{name}，预计{nav['eta'][11:]}到达，已把到达时间发给{contact['name']}。"],
                   [f"Navigating to {name}, arriving around {nav['eta'][11:]}; I texted {contact['name']} the ETA."])
    return Draft("share_eta", "state_change", query, plan,
                 [_target(trip.place, route), ("share_eta", {"contact_id": contact["contact_id"]})],
                 reads=("maps_search_place", "search_contacts"), obstacle_kinds=ALL_KINDS)


def departure_reminder(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    trip = _trip(rng, world)
    route = rng.choice([r for r in trip.place.routes if not r.preference and r.mode != "walking"] or
                       list(trip.place.routes))
    day = world.today + dt.timedelta(days=1)
    arrive = dt.datetime.combine(day, dt.time(rng.randint(8, 11), rng.choice((0, 30))))
    args = {"destination": trip.place.location, "arrive_by": arrive.strftime("%Y-%m-%d %H:%M"), **route.call()}
    how, name = HOW[route.mode], trip.place.name
    when, clock = say_day(rng, day, world.today, lang), say_clock(rng, arrive.strftime("%H:%M"), lang)
    query = say(rng, lang, [f"我{when}{clock}要到{name}，{how[0]}过去，提醒我什么时候该出发"],
                [f"I need to be at {name} {when} at {clock}, going {how[2]}; remind me when to leave."])

    def plan(run: OracleRun) -> str:
        run.settings()  # today's date, for the relative day
        done = run.act("set_departure_reminder", {**args, "destination": _find(run, trip.place)}).payload
        return say(rng, lang, [f"{how[0]}约{minutes_text(travel_minutes(done['duration_s']), lang)}，"
                               f"需要{done['depart_at'][11:]}出发，到时会提醒你。"],
                   [f"The {how[1]} takes about {minutes_text(travel_minutes(done['duration_s']), lang)}: leave at "
                    f"{done['depart_at'][11:]}; I'll remind you."])
    return Draft("departure_reminder", "state_change", query, plan, [("set_departure_reminder", args)],
                 reads=("maps_search_place", "get_device_status"), obstacle_kinds=ALL_KINDS)


def ride(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    trip = _trip(rng, world, _has("driving"))
    ride_type = rng.choice(("economy", "economy", "comfort", "xl"))
    zh, en = RIDE_WORDS[ride_type]
    name = trip.place.name
    target = ("book_ride", {"destination": trip.place.location, "ride_type": ride_type})
    ask = rng.random() < ASK_RATE

    def plan(run: OracleRun) -> str:
        if ask:
            run.ask(say(rng, lang, ["要去哪里？"], ["Where to?"]))
        done = run.act("book_ride", {"destination": _find(run, trip.place), "ride_type": ride_type}).payload
        fare = done["fare_estimate"]
        return say(rng, lang, [f"已叫{zh}去{name}，预估{fare:g}元。"], [f"Booked {en} to {name}, about {fare:g} yuan."])
    if ask:
        query = say(rng, lang, [f"帮我叫个{zh}", f"叫辆{zh}"], [f"Book me {en}.", f"Get me {en}, please."])
        return Draft("ride", "behaviour", query, plan, [target], reads=("maps_search_place",), obstacle_kinds=ALL_KINDS,
                     user_facts=[fact("place", name, say(rng, lang, [f"去{name}"], [f"To {name}."]))], must_ask=True,
                     obstacles=[missing("no destination: the user's reply names it")])
    query = say(rng, lang, [f"帮我叫个{zh}去{name}", f"叫辆{zh}，去{name}"],
                [f"Book me {en} to {name}.", f"Get me {en} to {name}, please."])
    return Draft("ride", "state_change", query, plan, [target], reads=("maps_search_place",),
                 obstacle_kinds=ALL_KINDS)


def navigate_saved(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    trip = _trip(rng, world, _has("driving"))
    label, other = rng.sample(list(LABEL_WORDS), 2)
    elsewhere = rng.choice([t for t in atlas().trips if t.place.location != trip.place.location])
    world.extra["saved_places"] = sorted([{"label": label, "location": canonical_coordinate(trip.place.location)},
                                          {"label": other, "location": canonical_coordinate(elsewhere.place.location)}],
                                         key=lambda row: str(row["label"]))
    route = rng.choice([r for r in trip.place.routes if r.mode == "driving"])
    zh, en = LABEL_WORDS[label]
    pref = PREFERENCE_WORDS.get(route.preference)
    query = say(rng, lang, [f"导航回{zh}" if label == "home" else f"导航去{zh}"],
                ["Take me home" if label == "home" else f"Navigate to {en}"])
    if pref is not None:
        query += say(rng, lang, [f"，{pref[0][0]}"], [f", {pref[1][0]}"])
    query += "" if lang == "zh" else "."

    def plan(run: OracleRun) -> str:
        places = {p["label"]: p["location"] for p in run.read("list_saved_places")["places"]}
        nav = run.act("start_navigation", {"destination": places[label], **route.call()}).payload
        return say(rng, lang, [f"已开始导航去{zh}，预计{nav['eta'][11:]}到达。"],
                   [f"Navigating {'home' if label == 'home' else 'to ' + en}, arriving around {nav['eta'][11:]}."])
    return Draft("navigate_saved", "state_change", query, plan,
                 [("start_navigation", {"destination": canonical_coordinate(trip.place.location), **route.call()})],
                 reads=("list_saved_places",), obstacle_kinds=ALL_KINDS)


# ------------------------------------------------------------------------------------------------- intent correction
def _turns(user: str, assistant: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": user}, {"role": "assistant", "content": assistant}]


def _running(world: World, trip: Trip, place: Place, route: Route) -> str:
    """Put a navigation the earlier turn started into S0 (the row start_navigation would write); its ETA."""
    eta = (world.now + dt.timedelta(minutes=route.minutes)).strftime("%Y-%m-%d %H:%M")
    world.extra["navigation"] = [{"nav_id": "nav-1", "origin": canonical_coordinate(trip.origin),
                                  "destination": canonical_coordinate(place.location), "waypoints": "",
                                  "mode": route.mode, "options": route.preference, "distance_m": route.distance_m,
                                  "duration_s": route.duration_s, "eta": eta, "status": "active"}]
    return eta[11:]


def _after_stop(started: bool, target: tuple[str, dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """The calls of a correction: stop the navigation the earlier turn started (if it did), then the new one."""
    return ([("stop_navigation", {})] if started else []) + [target]


def changed_destination(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    trip = _trip(rng, world, lambda t: bool(t.alternates) and _has("driving")(t))
    wrong, right = rng.sample([trip.place, rng.choice(trip.alternates)], 2)
    route, first = right.route(), wrong.route()
    assert route is not None and first is not None
    started = rng.random() < 0.5
    said = say(rng, lang, [f"导航去{wrong.name}"], [f"Navigate to {wrong.name}."])
    if started:
        eta = _running(world, trip, wrong, first)
        history = _turns(said, say(rng, lang, [f"已开始导航去{wrong.name}，预计{eta}到达。"],
                                   [f"Navigating to {wrong.name}, arriving around {eta}."]))
    else:
        history = _turns(said, say(rng, lang, [f"要开始导航去{wrong.name}吗？"], [f"Start navigation to {wrong.name}?"]))
    query = say(rng, lang, [f"不对，我要去的是{right.name}", f"搞错了，不去{wrong.name}，改去{right.name}"],
                [f"No, I meant {right.name}.", f"Wrong place: not {wrong.name}, take me to {right.name}."])

    def plan(run: OracleRun) -> str:
        if started:
            run.act("stop_navigation", {})
        return _navigating(rng, lang, right, _navigate(run, right, route, plan_route=False))
    targets = _after_stop(started, _target(right, route))
    return Draft("changed_destination", "state_change", query, plan, targets, reads=("maps_search_place",),
                 history=history, obstacle_kinds=ALL_KINDS)


def changed_mode(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    trip = _trip(rng, world, lambda t: _has("driving")(t) and (_has("transit")(t) or _has("walking")(t)))
    drive = trip.place.route("driving")
    route = rng.choice([r for r in (trip.place.route("transit"), trip.place.route("walking")) if r is not None])
    assert drive is not None and route is not None
    started = rng.random() < 0.5
    name, how = trip.place.name, HOW[route.mode]
    said = say(rng, lang, [f"开车去{name}"], [f"Drive to {name}."])
    if started:
        eta = _running(world, trip, trip.place, drive)
        history = _turns(said, say(rng, lang, [f"已开始驾车导航去{name}，预计{eta}到达。"],
                                   [f"Driving directions to {name} started, arriving around {eta}."]))
    else:
        history = _turns(said, say(rng, lang, [f"要开始驾车导航去{name}吗？"], [f"Start driving directions to {name}?"]))
    query = say(rng, lang, [f"算了不开车了，改成{how[0]}去", f"别开车，{how[0]}吧"],
                [f"Actually, no car: make it a {how[1]}.", f"Not by car; I'll take a {how[1]} instead."])

    def plan(run: OracleRun) -> str:
        if started:
            run.act("stop_navigation", {})
        return _navigating(rng, lang, trip.place, _navigate(run, trip.place, route, plan_route=False))
    targets = _after_stop(started, _target(trip.place, route))
    return Draft("changed_mode", "state_change", query, plan, targets, reads=("maps_search_place",), history=history,
                 obstacle_kinds=ALL_KINDS)


# ------------------------------------------------------------------------------------------------- error recovery
def retry_navigation(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    trip = _trip(rng, world, _has("driving"))
    route = trip.place.route("driving")
    assert route is not None
    name = trip.place.name
    if rng.random() < 0.5:
        next(p for p in world.permissions if (p["app"], p["permission"]) == ("Amap", "location"))["granted"] = 0
        obstacle = {"kind": PERMISSION, "note": "Amap lacks the location permission (the earlier navigation failed)"}
        failed = say(rng, lang, ["导航没能开始：高德地图没有定位权限。"], ["Navigation failed: Amap has no location permission."])
    else:
        world.faults.append({"tool": "maps_route", "error_type": "transient_failure", "remaining": rng.randint(1, 2),
                             "message": "maps_route: route service timed out; try again"})
        obstacle = {"kind": RUNTIME, "tool": "maps_route", "error_type": "transient_failure",
                    "note": "maps_route times out (transient): retrying succeeds"}
        failed = say(rng, lang, ["路线规划服务超时了，没能开始导航。"], ["The route service timed out, so navigation didn't start."])
    history = _turns(say(rng, lang, [f"导航去{name}"], [f"Navigate to {name}."]), failed)
    query = say(rng, lang, ["帮我处理一下，再试一次", "那你解决一下，重新导航"], ["Fix it and try again.", "Sort it out and start it again."])

    def plan(run: OracleRun) -> str:
        return _navigating(rng, lang, trip.place, _navigate(run, trip.place, route))
    return Draft("retry_navigation", "state_change", query, plan, [_target(trip.place, route)], reads=READS,
                 history=history, obstacle_kinds=(), obstacles=[obstacle])


#: The families of each behaviour category (the generator draws a maps task's family from its category's).
FAMILIES = {"grounding": (navigate, route_facts, weather_now, traffic_now, save_place),
            "conditional": (rain_alarm, drive_or_transit),
            "state_tracking": (share_eta, departure_reminder, ride, navigate_saved),
            "intent_correction": (changed_destination, changed_mode),
            "error_recovery": (navigate, share_eta, ride, departure_reminder, route_facts, retry_navigation)}
