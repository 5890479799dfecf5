"""Maps & travel: places, routes, weather and traffic replayed from MobilityBench, and the maps app's own state.

**Replayed tools** (no state change). Each is answered by the MobilityBench replay sandbox,
:meth:`mobility_env.mobilitybench.sandbox.Sandbox.lookup` over the whole set (``episode_id=None``): the exact
canonical key, then a fuzzy name or the nearest recorded coordinates (within 300 m), else a miss.

* ``maps_search_place(keywords, city?)`` → ``query_poi``;
* ``maps_nearby(location, keywords?, radius?)`` → ``search_around_poi``;
* ``maps_reverse_geocode(location)`` → ``reverse_geocoding``;
* ``maps_weather(city?, forecast?)`` → ``weather_query``;
* ``maps_traffic(road, city?)`` → ``traffic_status``;
* ``maps_route(origin, destination, mode?, preferences?, transit_strategy?, waypoints?)`` →
  ``driving_route`` (preferences: driving strategies; waypoints), ``walking_route``,
  ``bicycling_route`` or ``bus_route`` (``mode="transit"``, ``transit_strategy``).

A left-out ``city`` is the phone's ``current_city`` setting. A hit's payload is ``{"match", "result"}``
(plus ``detail`` when the match is not exact): ``result`` is the compact view of the recorded
response (:mod:`mobility_env.mobilitybench.observation`, the text ``MobilityBench-v0`` shows), never the raw
response. A miss is ``not_found``. Every replayed call needs a network (airplane mode off, Wi-Fi or
mobile data on), as on a phone.

**The phone's position** is the ``current_location`` setting (``'lng,lat'``) in ``current_city``.
``maps_current_location`` reads it, and ``start_navigation``, ``set_departure_reminder`` and
``book_ride`` start from it: they need the maps app's location permission (``Amap: location``) and
location services on (setting ``location``; off → ``state_conflict`` naming it).

**State** (tables of :data:`~mobility_env.mobilepa.state.TABLES`): ``navigation`` (one ``active`` at a
time; ``stop_navigation`` ends it), ``saved_places`` (home, work, school, gym), ``departure_reminders``
and ``ride_orders`` (one ``requested`` at a time). Rows hold the *served* route's canonical
coordinates (6 decimals) and canonical options, so every path that reaches the same recorded route
writes the same row. The route's facts are its first option's (path or transit ``0``): distance,
duration, and the ETA, the ``clock`` setting plus the duration rounded to the minute
(:func:`travel_minutes`); a departure is the arrival time less those minutes; a ride's fare estimate
is the recorded taxi cost. ``share_eta`` texts a contact ``"ETA HH:MM"`` of the active navigation.

**Which recorded set** serves an episode: the state's maps data (:func:`use_maps_data`; the env's
``maps_data=``): a built directory or an official MobilityBench file, or None for the bundled set
(``datasets/default``, whatever ``$MOBILITY_ENV_DATA`` says: the bundled MobilePA tasks were generated
against it). Each set is opened once per process, on first use, under a lock.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...canonical import canonical_coordinate, canonical_request
from ...mobilitybench.observation import format_response
from ...responses import as_dict, number
from ...tools import parse_coordinate
from ...trajectory import ErrorKind, MatchKind
from ..catalogue import Feedback, cancel_record, failure, success, tool
from ..params import (choice, coordinate, driving_preferences, flag, integer, moment, text, transit_strategy,
                      waypoints)
from ..state import PhoneState
from .calls_communication import _unreachable
from .system_settings import offline_failure, online

if TYPE_CHECKING:  # the replay sandbox (pyarrow) is imported on the first maps call, not with the catalogue
    from ...mobilitybench.sandbox import LookupResult, Sandbox

DOMAIN = "maps_travel"
LOCATION = ("Amap", "location")
MODES = ("driving", "walking", "bicycling", "transit")
MODE_TOOLS = {"driving": "driving_route", "walking": "walking_route", "bicycling": "bicycling_route",
              "transit": "bus_route"}
PLACE_LABELS = ("home", "work", "school", "gym")
RIDE_TYPES = ("economy", "comfort", "xl")
CLOCK_FORMAT = "%Y-%m-%d %H:%M"
_REPLAYS: dict[str | None, Sandbox] = {}  # by the argument given and by the resolved path
_REPLAYS_LOCK = threading.Lock()


def use_maps_data(state: PhoneState, maps_data: str | os.PathLike | None) -> None:
    """Serve the maps tools of this episode from ``maps_data`` (None: the bundled MobilityBench set)."""
    state.maps_data = maps_data


def replay_for(maps_data: str | os.PathLike | None) -> Sandbox:
    """The replay sandbox of a recorded set, opened on first use and then shared by the process's episodes.

    A bad path raises :class:`~mobility_env.errors.DataFileError` (a user's mistake, not an agent's)."""
    argument = None if maps_data is None else os.fspath(maps_data)
    box = _REPLAYS.get(argument)  # (every maps call asks: no path resolved twice)
    if box is None:
        from ...mobilitybench.store import BUNDLED_DIR, resolve_data

        with _REPLAYS_LOCK:
            path = Path(BUNDLED_DIR if maps_data is None else maps_data)
            box = _REPLAYS.get(str(path.resolve()))
            if box is None:
                box = resolve_data(path).sandbox
            _REPLAYS[str(path.resolve())] = _REPLAYS[argument] = box
    return box


def travel_minutes(duration_s: float) -> int:
    """A duration in whole minutes, halves rounded up (the ETA and departure arithmetic)."""
    return int(duration_s / 60 + 0.5)


def _replayed(state: PhoneState, replay_tool: str, arguments: dict[str, Any],
              hint: str) -> tuple[LookupResult, Any] | Feedback:
    """Serve a call from the recorded set: ``(lookup result, compact view)``, or the failure to return."""
    if not online(state):
        return offline_failure("the maps app")
    box = replay_for(state.maps_data)
    result = box.lookup(replay_tool, arguments)
    if not result.hit or result.entry is None:
        return failure(ErrorKind.NOT_FOUND, f"nothing recorded matches: {result.detail[:300]}; {hint}")
    compact = box.observation_text(result.entry, "compact")
    if compact is None:
        compact = format_response(replay_tool, result.response, "compact")
    return result, json.loads(compact)


def _answer(served: tuple[LookupResult, Any] | Feedback) -> Feedback:
    if isinstance(served, Feedback):
        return served
    result, compact = served
    extra = {} if result.match == MatchKind.EXACT else {"detail": result.detail}
    return success(match=str(result.match), result=compact, **extra)


def _city(state: PhoneState, args: dict[str, Any]) -> str | None:
    return args.get("city") or state.setting("current_city")


@tool("maps_search_place", DOMAIN, "Find a place (POI, address, road) by name in a city; returns its name, address "
      "and 'lng,lat' location.", text("keywords", "the place's name or address"),
      text("city", "the city to search (default: the city the phone is in)", required=False))
def maps_search_place(state: PhoneState, args: dict[str, Any]) -> Feedback:
    city = _city(state, args)
    return _answer(_replayed(state, "query_poi", {"keywords": args["keywords"], **({"city": city} if city else {})},
                             "try the place's full name (maps_search_place) or another city"))


@tool("maps_nearby", DOMAIN, "Search places around a point, optionally by what they are (bank, coffee...).",
      coordinate("location", "the centre"), text("keywords", "what to look for", required=False),
      integer("radius", "search radius in metres", 1, 50_000, required=False))
def maps_nearby(state: PhoneState, args: dict[str, Any]) -> Feedback:
    return _answer(_replayed(state, "search_around_poi", dict(args),
                             "search near a place maps_search_place found, or with other keywords"))


@tool("maps_reverse_geocode", DOMAIN, "Turn a 'lng,lat' point into an address with the nearest roads and places.",
      coordinate("location", "the point"))
def maps_reverse_geocode(state: PhoneState, args: dict[str, Any]) -> Feedback:
    point = parse_coordinate(args["location"])
    assert point is not None  # the schema checked it
    return _answer(_replayed(state, "reverse_geocoding", {"longitude": str(point[0]), "latitude": str(point[1])},
                             "maps_current_location gives the phone's own position"))


@tool("maps_weather", DOMAIN, "A city's weather now, or its forecast for the next days.",
      text("city", "the city (default: the city the phone is in)", required=False),
      flag("forecast", "true for the multi-day forecast", required=False))
def maps_weather(state: PhoneState, args: dict[str, Any]) -> Feedback:
    city = _city(state, args)
    if not city:
        return failure(ErrorKind.MISSING_PARAMETER, "which city? the phone has no current_city; give one",
                       fields=["city"])
    return _answer(_replayed(state, "weather_query", {"city": city, "need_forecast": bool(args.get("forecast"))},
                             "give the city's full name, e.g. 上海市 (maps_weather)"))


@tool("maps_traffic", DOMAIN, "Live traffic (畅通/缓行/拥堵) of a named road.", text("road", "the road's name"),
      text("city", "the city (default: the city the phone is in)", required=False))
def maps_traffic(state: PhoneState, args: dict[str, Any]) -> Feedback:
    city = _city(state, args)
    if not city:
        return failure(ErrorKind.MISSING_PARAMETER, "which city is the road in? the phone has no current_city",
                       fields=["city"])
    return _answer(_replayed(state, "traffic_status", {"name": args["road"], "city": city},
                             "check the road's name (maps_search_place finds roads)"))


def _route_call(args: dict[str, Any], origin: str) -> tuple[str, dict[str, Any]] | Feedback:
    """The replayed route tool and its arguments for a phone call's mode and options."""
    mode = args.get("mode") or "driving"
    misplaced = [name for name, only in (("preferences", "driving"), ("waypoints", "driving"),
                                         ("transit_strategy", "transit")) if args.get(name) and mode != only]
    if misplaced:
        return failure(ErrorKind.SCHEMA_ERROR, f"{', '.join(misplaced)} do not apply to mode {mode!r} (preferences "
                       f"and waypoints: driving; transit_strategy: transit)", fields=misplaced)
    call: dict[str, Any] = {"origin": origin, "destination": args["destination"]}
    if args.get("preferences"):
        call["strategy"] = args["preferences"]
    if args.get("waypoints"):
        call["waypoints"] = args["waypoints"]
    if args.get("transit_strategy"):
        call["strategy"] = args["transit_strategy"]
    return MODE_TOOLS[mode], call


_ROUTE_PARAMS = (choice("mode", "how to travel (default driving)", MODES, required=False),
                 driving_preferences("preferences", "driving only: route preferences"),
                 transit_strategy("transit_strategy", "transit only: the plan to prefer"),
                 waypoints("waypoints", "driving only: stops on the way"))
_ROUTE_HINT = "routes exist between places maps_search_place finds; check the mode and preferences"


@tool("maps_route", DOMAIN, "Plan routes between two points by car, on foot, by bicycle or by public transit: "
      "distance, duration, tolls, main roads or lines of each option.", coordinate("origin", "where from"),
      coordinate("destination", "where to"), *_ROUTE_PARAMS)
def maps_route(state: PhoneState, args: dict[str, Any]) -> Feedback:
    call = _route_call(args, args["origin"])
    return call if isinstance(call, Feedback) else _answer(_replayed(state, *call, _ROUTE_HINT))


def _here(state: PhoneState) -> str | Feedback:
    """The phone's canonical position, or why it cannot be read (location services off, no fix)."""
    if state.setting("location", "off") != "on":
        return failure(ErrorKind.STATE_CONFLICT, "location services are off: turn them on with set_location_service",
                       setting="location", value="off")
    here = canonical_coordinate(state.setting("current_location"))
    if here is None:
        return failure(ErrorKind.NOT_FOUND, "the phone has no location fix; give the origin to maps_route yourself")
    return here


@tool("maps_current_location", DOMAIN, "Where the phone is now: its 'lng,lat' position and city.",
      permission=LOCATION)
def maps_current_location(state: PhoneState, args: dict[str, Any]) -> Feedback:
    here = _here(state)
    return here if isinstance(here, Feedback) else success(location=here, city=state.setting("current_city") or "")


def _trip(state: PhoneState, args: dict[str, Any]) -> dict[str, Any] | Feedback:
    """The route from the phone's position that a stateful tool acts on: the served entry's canonical end points
    and options, and its first option's distance and duration (None when the response has no such numbers)."""
    here = _here(state)
    if isinstance(here, Feedback):
        return here
    call = _route_call(args, here)
    if isinstance(call, Feedback):
        return call
    served = _replayed(state, *call, _ROUTE_HINT + " (maps_route)")
    if isinstance(served, Feedback):
        return served
    result, compact = served
    recorded = result.entry_arguments or {}
    body = as_dict(compact)
    options = body.get("paths") or body.get("transits") or [{}]
    first = as_dict(options[0])
    distance, duration = number(first.get("distance_m")), number(first.get("duration_s"))
    return {"origin": canonical_coordinate(recorded.get("origin")) or here,
            "destination": canonical_coordinate(recorded.get("destination")) or canonical_coordinate(
                args["destination"]),
            "waypoints": ";".join(canonical_coordinate(w) or "" for w in recorded.get("waypoints") or []),
            "mode": args.get("mode") or "driving", "options": canonical_request(result.tool, recorded).options,
            "distance_m": None if distance is None else int(distance),
            "duration_s": None if duration is None else int(duration), "taxi_cost": number(body.get("taxi_cost"))}


def _clock(state: PhoneState) -> dt.datetime | None:
    try:
        return dt.datetime.strptime(state.setting("clock") or "", CLOCK_FORMAT)
    except ValueError:
        return None


def _shift(moment_text: str | None, minutes: int) -> str | None:
    try:
        when = dt.datetime.strptime(moment_text or "", CLOCK_FORMAT)
    except ValueError:
        return None
    return (when + dt.timedelta(minutes=minutes)).strftime(CLOCK_FORMAT)


@tool("start_navigation", DOMAIN, "Start turn-by-turn navigation from where the phone is to a destination.",
      coordinate("destination", "where to"), *_ROUTE_PARAMS, permission=LOCATION, writes=("navigation", "counters"))
def start_navigation(state: PhoneState, args: dict[str, Any]) -> Feedback:
    active = state.one("SELECT nav_id, destination FROM navigation WHERE status = 'active'")
    if active is not None:
        return failure(ErrorKind.STATE_CONFLICT, f"navigation {active['nav_id']} to {active['destination']} is "
                       f"running; stop it first (stop_navigation)", nav_id=active["nav_id"])
    trip = _trip(state, args)
    if isinstance(trip, Feedback):
        return trip
    clock = _clock(state)
    eta = None if clock is None or trip["duration_s"] is None else \
        (clock + dt.timedelta(minutes=travel_minutes(trip["duration_s"]))).strftime(CLOCK_FORMAT)
    nav_id = state.next_id("nav")
    state.execute("INSERT INTO navigation (nav_id, origin, destination, waypoints, mode, options, distance_m, "
                  "duration_s, eta, status) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'active')",
                  (nav_id, trip["origin"], trip["destination"], trip["waypoints"], trip["mode"], trip["options"],
                   trip["distance_m"], trip["duration_s"], eta))
    return success(nav_id=nav_id, destination=trip["destination"], mode=trip["mode"],
                   distance_m=trip["distance_m"], duration_s=trip["duration_s"], eta=eta)


def _active_navigation(state: PhoneState) -> dict[str, Any] | None:
    return state.one("SELECT nav_id, destination, mode, distance_m, duration_s, eta FROM navigation WHERE "
                     "status = 'active'")


@tool("stop_navigation", DOMAIN, "Stop the running navigation.", writes=("navigation",))
def stop_navigation(state: PhoneState, args: dict[str, Any]) -> Feedback:
    active = _active_navigation(state)
    if active is None:
        return failure(ErrorKind.STATE_CONFLICT, "no navigation is running")
    state.execute("UPDATE navigation SET status = 'ended' WHERE nav_id = ?", (active["nav_id"],))
    return success(nav_id=active["nav_id"], status="ended")


@tool("get_navigation_status", DOMAIN, "The running navigation (destination, mode, distance, duration, ETA), if any.")
def get_navigation_status(state: PhoneState, args: dict[str, Any]) -> Feedback:
    return success(navigation=_active_navigation(state))


@tool("share_eta", DOMAIN, "Text a contact the arrival time of the running navigation ('ETA HH:MM').",
      text("contact_id", "the contact (search_contacts)"), permission=("messages", "sms"),
      writes=("messages", "counters"))
def share_eta(state: PhoneState, args: dict[str, Any]) -> Feedback:
    active = _active_navigation(state)
    if active is None or not active["eta"]:
        return failure(ErrorKind.STATE_CONFLICT, "no navigation with an arrival time is running; start_navigation "
                       "first")
    refused = _unreachable(state, args["contact_id"], "the ETA cannot be sent")
    if refused is not None:
        return refused
    message_id = state.next_id("message")
    body = f"ETA {active['eta'][11:]}"
    state.execute("INSERT INTO messages (message_id, contact_id, direction, text, sent_at) VALUES (?, ?, 'out', ?, ?)",
                  (message_id, args["contact_id"], body, state.setting("clock", "")))
    return success(message_id=message_id, text=body)


@tool("save_place", DOMAIN, "Save a point as one of the maps app's places (home, work, school, gym).",
      choice("label", "which place", PLACE_LABELS), coordinate("location", "its position"),
      flag("replace", "true to overwrite a place already saved under this label", required=False),
      writes=("saved_places",))
def save_place(state: PhoneState, args: dict[str, Any]) -> Feedback:
    location = canonical_coordinate(args["location"])
    row = state.one("SELECT location FROM saved_places WHERE label = ?", (args["label"],))
    if row is not None and (row["location"] == location or not args.get("replace")):
        why = "already saved there" if row["location"] == location else \
            f"already saved at {row['location']}; pass replace=true to move it"
        return failure(ErrorKind.STATE_CONFLICT, f"{args['label']} is {why}", label=args["label"],
                       location=row["location"])
    state.execute("INSERT INTO saved_places (label, location) VALUES (?, ?) ON CONFLICT(label) DO UPDATE SET "
                  "location = excluded.location", (args["label"], location))
    return success(label=args["label"], location=location)


@tool("list_saved_places", DOMAIN, "The places saved in the maps app (home, work...) with their positions.")
def list_saved_places(state: PhoneState, args: dict[str, Any]) -> Feedback:
    return success(places=state.query("SELECT label, location FROM saved_places ORDER BY label"))


@tool("delete_saved_place", DOMAIN, "Forget a saved place.", choice("label", "which place", PLACE_LABELS),
      writes=("saved_places",))
def delete_saved_place(state: PhoneState, args: dict[str, Any]) -> Feedback:
    if state.execute("DELETE FROM saved_places WHERE label = ?", (args["label"],)) == 0:
        return failure(ErrorKind.NOT_FOUND, f"no place saved as {args['label']!r}; list_saved_places shows them")
    return success(label=args["label"], deleted=True)


@tool("set_departure_reminder", DOMAIN, "Remind the user when to leave from here to arrive somewhere on time "
      "(the departure is worked out from the route).", coordinate("destination", "where to"),
      moment("arrive_by", "when to be there"), *_ROUTE_PARAMS, permission=LOCATION,
      writes=("departure_reminders", "counters"))
def set_departure_reminder(state: PhoneState, args: dict[str, Any]) -> Feedback:
    trip = _trip(state, args)
    if isinstance(trip, Feedback):
        return trip
    if trip["duration_s"] is None:
        return failure(ErrorKind.NOT_FOUND, "this route has no recorded duration; try another mode (maps_route)")
    depart_at = _shift(args["arrive_by"], -travel_minutes(trip["duration_s"]))
    if depart_at is None or depart_at <= (state.setting("clock") or ""):
        return failure(ErrorKind.STATE_CONFLICT, f"too late: leaving now does not arrive by {args['arrive_by']}",
                       depart_at=depart_at)
    departure_id = state.next_id("departure")
    state.execute("INSERT INTO departure_reminders (departure_id, destination, mode, options, arrive_by, depart_at) "
                  "VALUES (?, ?, ?, ?, ?, ?)", (departure_id, trip["destination"], trip["mode"], trip["options"],
                                                args["arrive_by"], depart_at))
    return success(departure_id=departure_id, depart_at=depart_at, duration_s=trip["duration_s"])


@tool("book_ride", DOMAIN, "Hail a ride from where the phone is to a destination; returns the fare estimate.",
      coordinate("destination", "where to"), choice("ride_type", "the car (default economy)", RIDE_TYPES,
                                                    required=False), permission=LOCATION,
      writes=("ride_orders", "counters"))
def book_ride(state: PhoneState, args: dict[str, Any]) -> Feedback:
    pending = state.one("SELECT order_id FROM ride_orders WHERE status = 'requested'")
    if pending is not None:
        return failure(ErrorKind.STATE_CONFLICT, f"ride {pending['order_id']} is already requested; cancel_ride "
                       f"cancels it", order_id=pending["order_id"])
    trip = _trip(state, {"destination": args["destination"]})
    if isinstance(trip, Feedback):
        return trip
    order_id = state.next_id("ride")
    ride_type = args.get("ride_type") or "economy"
    state.execute("INSERT INTO ride_orders (order_id, pickup, destination, ride_type, fare_estimate, status, "
                  "requested_at) VALUES (?, ?, ?, ?, ?, 'requested', ?)",
                  (order_id, trip["origin"], trip["destination"], ride_type, trip["taxi_cost"],
                   state.setting("clock", "")))
    return success(order_id=order_id, ride_type=ride_type, fare_estimate=trip["taxi_cost"], status="requested")


@tool("list_rides", DOMAIN, "The ride orders, newest first.")
def list_rides(state: PhoneState, args: dict[str, Any]) -> Feedback:
    return success(rides=state.query("SELECT order_id, destination, ride_type, fare_estimate, status, requested_at "
                                     "FROM ride_orders ORDER BY requested_at DESC, order_id DESC LIMIT 20"))


@tool("cancel_ride", DOMAIN, "Cancel a requested ride.", text("order_id", "the ride (list_rides)"),
      writes=("ride_orders",))
def cancel_ride(state: PhoneState, args: dict[str, Any]) -> Feedback:
    return cancel_record(state, "ride_orders", "order_id", args["order_id"], what="ride", pending="requested",
                         listing="list_rides")
