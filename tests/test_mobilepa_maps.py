"""The maps & travel domain of MobilePA: phone tools answered by the MobilityBench replay sandbox (a hit, a miss,
bad coordinates, compact payloads, determinism), the maps app's state (navigation, saved places, departure
reminders, rides) with each failure typed and leaving no write, permissions and faults that the right action
clears, the recorded set the tools read (bundled, or one given), the generated maps tasks (the oracle passes,
cheap trajectories fail) played through ``gymnasium.make("MobilePA-v0")``, and a fuzz of every maps tool."""

from __future__ import annotations

import json
import threading
from typing import Any

import gymnasium as gym
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mobility_env  # noqa: F401  (registers the envs)
from mobility_env.errors import ConfigError
from mobility_env.mobilepa import PHONE_TOOLS, StateTemplate, execute
from mobility_env.mobilepa.domains.maps_travel import replay_for, travel_minutes, use_maps_data
from mobility_env.mobilepa.env import BUNDLED_TASKS
from mobility_env.mobilepa.episode import PhoneSession, play
from mobility_env.mobilepa.generate import MAPS_TASK_TOOLS, MAPS_TOOLS, generate_tasks
from mobility_env.mobilepa.generate_checks import adversaries
from mobility_env.mobilepa.state import STATE_TABLES
from mobility_env.mobilepa.tasks import PhoneTask, load_tasks
from mobility_env.mobilitybench.store import BUNDLED_DIR
from mobility_env.trajectory import ErrorKind
from mobility_rewards.mobilepa.verify import verify_phone_task

E = ErrorKind
MAPS = {name: spec for name, spec in PHONE_TOOLS.items() if spec.domain == "maps_travel"}
# a trip the bundled MobilityBench set recorded (episode "几点出发能两点到绿地凤凰花园", 上海市)
HERE = "121.5547034913329,31.3259083374910"
PARK = "121.398490,31.173473"  # 绿地凤凰花园: driving path 0 is 32,211 m and 2,026 s, taxi 84 yuan
S0: dict[str, list[dict[str, Any]]] = {
    "settings": [{"key": k, "value": v} for k, v in (
        ("clock", "2025-11-13 07:00"), ("location", "on"), ("mobile_data", "on"), ("airplane_mode", "off"),
        ("current_location", HERE), ("current_city", "上海市"))],
    "permissions": [{"app": "Amap", "permission": "location", "granted": 1},
                    {"app": "messages", "permission": "sms", "granted": 1}],
    "contacts": [{"contact_id": "c1", "name": "李娜", "phone": "13800000000", "relation": "同事"}],
}
NAVIGATE = {"destination": PARK, "mode": "driving"}


@pytest.fixture()
def state():
    phone = StateTemplate(S0).restore()
    yield phone
    phone.close()


def call(state, name: str, args: dict[str, Any] | Any = None):
    return execute(state, name, {} if args is None else args)


# ------------------------------------------------------------------------------------------- replayed reads
def test_the_domain_has_15_to_25_tools_and_the_generator_offers_them():
    assert 15 <= len(MAPS) <= 25 and set(MAPS_TOOLS) == set(MAPS)
    assert set(MAPS_TASK_TOOLS) <= set(PHONE_TOOLS)


def test_a_replayed_search_hits_and_a_miss_is_not_found(state):
    found = call(state, "maps_search_place", {"keywords": "绿地凤凰花园"})  # the city is the phone's
    assert found.ok and found.payload["match"] == "exact"
    assert found.payload["result"] == {"name": "绿地凤凰花园", "address": "上海市 富民区 富民东路197号", "location": PARK}
    fuzzy = call(state, "maps_search_place", {"keywords": "绿地凤凰花园 ", "city": "上海"})  # canonicalized: same key
    assert fuzzy.ok and fuzzy.payload["result"]["location"] == PARK
    missed = call(state, "maps_search_place", {"keywords": "完全没有记录的地方QQQ"})
    assert missed.error_type is E.NOT_FOUND and "maps_search_place" in missed.payload["message"]
    assert state.delta() == {} and [r["status"] for r in state.audit()] == ["success", "success", "error"]


def test_a_route_by_each_mode_and_preference_is_the_recorded_one(state):
    driving = call(state, "maps_route", {"origin": HERE, "destination": PARK})
    first = driving.payload["result"]["paths"][0]
    assert (first["distance_m"], first["duration_s"], driving.payload["result"]["taxi_cost"]) == (32211, 2026, 84)
    avoid = call(state, "maps_route", {"origin": HERE, "destination": PARK, "preferences": ["avoid_congestion"]})
    assert avoid.payload["result"]["paths"][0]["duration_s"] == 3112  # the recorded 躲避拥堵 route (alias resolved)
    assert call(state, "maps_route", {"origin": HERE, "destination": PARK, "mode": "transit"}).payload["result"][
        "transits"] == []  # recorded: no transit plan
    cycling = call(state, "maps_route", {"origin": HERE, "destination": PARK, "mode": "bicycling"})
    assert cycling.payload["result"].startswith("有2种骑行路线")
    near = call(state, "maps_route", {"origin": HERE, "destination": "121.3986,31.1735"})  # ~12 m away
    assert near.payload["match"] == "nearest" and near.payload["result"]["paths"][0]["distance_m"] == 32211
    unrecorded = call(state, "maps_route", {"origin": HERE, "destination": PARK, "preferences": ["少收费"]})
    assert unrecorded.error_type is E.NOT_FOUND and "strateg" in unrecorded.payload["message"]  # no silent default
    misplaced = call(state, "maps_route", {"origin": HERE, "destination": PARK, "mode": "walking",
                                           "preferences": ["不走高速"]})
    assert misplaced.error_type is E.SCHEMA_ERROR and misplaced.payload["fields"] == ["preferences"]


@pytest.mark.parametrize("name, args", [
    ("maps_route", {"origin": "121.5,91", "destination": PARK}), ("maps_route", {"origin": HERE, "destination": 3}),
    ("maps_nearby", {"location": "east of here"}), ("maps_reverse_geocode", {"location": "200,30"}),
    ("start_navigation", {"destination": "121.4;31.2"}), ("save_place", {"label": "home", "location": "31.2"}),
    ("maps_route", {"origin": HERE, "destination": PARK, "waypoints": ["x"]}),
    ("book_ride", {"destination": PARK, "ride_type": "limo"}), ("maps_route", {"origin": HERE}),
])
def test_bad_coordinates_and_values_are_schema_errors_before_any_lookup(state, name, args):
    refused = call(state, name, args)
    assert refused.error_type is E.SCHEMA_ERROR and state.delta() == {}


def test_weather_traffic_nearby_and_geocoding_replay(state):
    forecast = call(state, "maps_weather", {"city": "沈阳市", "forecast": True}).payload["result"]["weather"]
    assert "2025-11-13（周四）：阴" in forecast
    assert "多云，气温16℃" in call(state, "maps_weather").payload["result"]["weather"]  # the phone's city
    assert call(state, "maps_traffic", {"road": "康乐南路", "city": "西安市"}).payload["result"]["state"] == "畅通"
    pois = call(state, "maps_nearby", {"location": "116.991821,36.660456", "keywords": "大参林"}).payload["result"]
    assert pois["pois"][0]["name"] == "大参林(天鹅中路店)"
    address = call(state, "maps_reverse_geocode", {"location": "109.0217878142835,34.2921678249352"})
    assert address.payload["result"]["city"] == "西安市"
    assert call(state, "maps_reverse_geocode", {"location": "0,0"}).error_type is E.NOT_FOUND


def test_a_city_is_needed_when_the_phone_has_none():
    phone = StateTemplate({"settings": [{"key": "mobile_data", "value": "on"}]}).restore()
    try:
        for name, args in (("maps_weather", {}), ("maps_traffic", {"road": "康乐南路"})):
            assert call(phone, name, args).error_type is E.MISSING_PARAMETER
        assert call(phone, "maps_current_location").error_type is E.STATE_CONFLICT  # location services off
    finally:
        phone.close()


def test_payloads_are_compact_for_every_recorded_call():
    """Every recorded call of the bundled set, asked through its phone tool, is served exactly, and the payload
    stays small (the compact view), however large the recorded response (routes: up to ~17 KB)."""
    phone = StateTemplate({"settings": [{"key": "mobile_data", "value": "on"}]}).restore()  # no default city
    box = replay_for(None)
    largest = served = 0
    try:
        for entry in range(len(box)):
            tool, args = box.entry_value("tool", entry), box.entry_arguments(entry)
            name, phone_args = _as_phone_call(tool, args)
            feedback = call(phone, name, phone_args)
            assert feedback.ok and feedback.payload["match"] == "exact", (tool, args, feedback.payload)
            largest = max(largest, len(json.dumps(feedback.payload, ensure_ascii=False)))
            served += 1
    finally:
        phone.close()
    assert served == len(box) > 1000 and largest <= 2000


def _as_phone_call(tool: str, args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    if tool == "query_poi":
        return "maps_search_place", dict(args)
    if tool == "search_around_poi":
        return "maps_nearby", dict(args)
    if tool == "reverse_geocoding":
        return "maps_reverse_geocode", {"location": f"{args['longitude']},{args['latitude']}"}
    if tool == "weather_query":
        return "maps_weather", {"city": args["city"], "forecast": bool(args.get("need_forecast"))}
    if tool in ("traffic_status", "traffic_status_road_api"):
        return "maps_traffic", {"road": args["name"], "city": args["city"]}
    mode = {"driving_route": "driving", "walking_route": "walking", "bicycling_route": "bicycling",
            "bus_route": "transit"}[tool]
    out = {"origin": args["origin"], "destination": args["destination"], "mode": mode}
    if args.get("strategy"):
        out["preferences" if mode == "driving" else "transit_strategy"] = args["strategy"]
    if args.get("waypoints"):
        out["waypoints"] = args["waypoints"]
    return "maps_route", out


def test_the_same_call_gives_the_same_feedback():
    runs = []
    for _ in range(2):
        phone = StateTemplate(S0).restore()
        try:
            runs.append([call(phone, n, a).to_dict() for n, a in (
                ("maps_search_place", {"keywords": "绿地凤凰花园"}), ("maps_route", {"origin": HERE, "destination": PARK}),
                ("maps_route", {"origin": HERE, "destination": PARK}), ("start_navigation", NAVIGATE),
                ("share_eta", {"contact_id": "c1"}))] + [phone.delta()])
        finally:
            phone.close()
    assert runs[0] == runs[1] and runs[0][1] == runs[0][2]


# ------------------------------------------------------------------------------------------- stateful tools
def test_navigation_starts_from_here_with_the_recorded_eta_and_stops(state):
    assert call(state, "get_navigation_status").payload == {"navigation": None}
    assert call(state, "stop_navigation").error_type is E.STATE_CONFLICT
    started = call(state, "start_navigation", {"destination": "121.39849,31.173473"})  # another spelling
    # 07:00 + round(2026 s / 60) = 07:34
    assert started.payload == {"nav_id": "nav-1", "destination": PARK, "mode": "driving", "distance_m": 32211,
                               "duration_s": 2026, "eta": "2025-11-13 07:34"}
    again = call(state, "start_navigation", NAVIGATE)
    assert again.error_type is E.STATE_CONFLICT and again.payload["nav_id"] == "nav-1"
    assert call(state, "get_navigation_status").payload["navigation"]["eta"] == "2025-11-13 07:34"
    assert call(state, "stop_navigation").payload == {"nav_id": "nav-1", "status": "ended"}
    row = state.delta()["navigation"]["added"][0]
    assert row == {"nav_id": "nav-1", "origin": "121.554703,31.325908", "destination": PARK, "waypoints": "",
                   "mode": "driving", "options": "", "distance_m": 32211, "duration_s": 2026,
                   "eta": "2025-11-13 07:34", "status": "ended"}
    assert call(state, "start_navigation", {"destination": "0.5,0.5"}).error_type is E.NOT_FOUND


def test_share_eta_texts_the_running_navigations_arrival(state):
    assert call(state, "share_eta", {"contact_id": "c1"}).error_type is E.STATE_CONFLICT  # nothing running
    call(state, "start_navigation", NAVIGATE)
    assert call(state, "share_eta", {"contact_id": "c9"}).error_type is E.NOT_FOUND
    assert call(state, "share_eta", {"contact_id": "c1"}).payload == {"message_id": "message-1", "text": "ETA 07:34"}
    assert state.delta()["messages"]["added"][0]["text"] == "ETA 07:34"


def test_a_route_without_a_duration_navigates_without_an_eta(state):
    started = call(state, "start_navigation", {"destination": PARK, "mode": "transit"})  # no transit plan recorded
    assert started.ok and started.payload["eta"] is None
    assert call(state, "share_eta", {"contact_id": "c1"}).error_type is E.STATE_CONFLICT
    reminder = call(state, "set_departure_reminder", {"destination": PARK, "arrive_by": "2025-11-13 14:00",
                                                      "mode": "transit"})
    assert reminder.error_type is E.NOT_FOUND


def test_departure_reminders_subtract_the_recorded_travel_time(state):
    done = call(state, "set_departure_reminder", {"destination": PARK, "arrive_by": "2025-11-13 14:00"})
    assert done.payload["depart_at"] == "2025-11-13 13:26" and travel_minutes(2026) == 34
    late = call(state, "set_departure_reminder", {"destination": PARK, "arrive_by": "2025-11-13 07:20"})
    assert late.error_type is E.STATE_CONFLICT and late.payload["depart_at"] == "2025-11-13 06:46"
    assert call(state, "set_departure_reminder", {"destination": PARK, "arrive_by": "14:00"}).error_type is \
        E.SCHEMA_ERROR
    assert [r["depart_at"] for r in state.delta()["departure_reminders"]["added"]] == ["2025-11-13 13:26"]


def test_one_ride_at_a_time_with_the_recorded_fare(state):
    booked = call(state, "book_ride", {"destination": PARK, "ride_type": "comfort"})
    assert booked.payload == {"order_id": "ride-1", "ride_type": "comfort", "fare_estimate": 84.0,
                              "status": "requested"}
    assert call(state, "book_ride", {"destination": PARK}).error_type is E.STATE_CONFLICT
    assert call(state, "list_rides").payload["rides"][0]["order_id"] == "ride-1"
    assert call(state, "cancel_ride", {"order_id": "ride-9"}).error_type is E.NOT_FOUND
    assert call(state, "cancel_ride", {"order_id": "ride-1"}).payload["status"] == "cancelled"
    assert call(state, "cancel_ride", {"order_id": "ride-1"}).error_type is E.STATE_CONFLICT
    assert call(state, "book_ride", {"destination": PARK}).payload["order_id"] == "ride-2"


def test_saved_places(state):
    assert call(state, "save_place", {"label": "home", "location": "121.39849, 31.173473"}).payload == \
        {"label": "home", "location": PARK}
    for args in ({"label": "home", "location": HERE}, {"label": "home", "location": PARK, "replace": True}):
        assert call(state, "save_place", args).error_type is E.STATE_CONFLICT  # elsewhere without replace; same
    assert call(state, "save_place", {"label": "home", "location": HERE, "replace": True}).ok
    assert call(state, "list_saved_places").payload == {"places": [{"label": "home",
                                                                    "location": "121.554703,31.325908"}]}
    assert call(state, "delete_saved_place", {"label": "work"}).error_type is E.NOT_FOUND
    assert call(state, "delete_saved_place", {"label": "home"}).ok and state.delta() == {}


@pytest.mark.parametrize("name, args", [("maps_current_location", {}), ("start_navigation", NAVIGATE),
                                        ("book_ride", {"destination": PARK}),
                                        ("set_departure_reminder", {"destination": PARK,
                                                                    "arrive_by": "2025-11-13 14:00"})])
def test_the_position_needs_location_services_and_the_permission(state, name, args):
    assert MAPS[name].permission == ("Amap", "location")
    state.execute("UPDATE settings SET value = 'off' WHERE key = 'location'")
    off = call(state, name, args)
    assert off.error_type is E.STATE_CONFLICT and off.payload["setting"] == "location"
    assert call(state, "set_location_service", {"on": True}).ok
    state.execute("UPDATE permissions SET granted = 0 WHERE app = 'Amap'")
    denied = call(state, name, args)
    assert denied.error_type is E.PERMISSION_DENIED and denied.payload["permission"] == "location"
    assert call(state, "grant_permission", {"app": "Amap", "permission": "location"}).ok
    assert call(state, name, args).ok


def test_without_a_network_the_maps_tools_say_so(state):
    call(state, "set_airplane_mode", {"on": True})
    offline = call(state, "maps_route", {"origin": HERE, "destination": PARK})
    assert offline.error_type is E.STATE_CONFLICT and offline.payload["setting"] == "network"
    call(state, "set_airplane_mode", {"on": False})
    assert call(state, "maps_route", {"origin": HERE, "destination": PARK}).ok


def test_a_transient_failure_of_the_route_tool_clears_on_retry():
    faulty = StateTemplate({**S0, "faults": [{"tool": "maps_route", "error_type": "transient_failure",
                                              "remaining": 2, "message": "route service timed out"}]}).restore()
    try:
        outcomes = [call(faulty, "maps_route", {"origin": HERE, "destination": PARK}).error_type for _ in range(3)]
        assert outcomes == [E.TRANSIENT_FAILURE, E.TRANSIENT_FAILURE, None]
    finally:
        faulty.close()


# ------------------------------------------------------------------------------------------- the recorded set
def test_each_set_is_opened_once_and_shared_across_threads(tmp_path):
    link = tmp_path / "same-set"
    link.symlink_to(BUNDLED_DIR, target_is_directory=True)
    opened: list[Any] = []
    threads = [threading.Thread(target=lambda: opened.append(replay_for(str(link)))) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(opened) == 8 and all(box is replay_for(None) for box in opened)


def test_a_session_replays_the_set_it_is_given(built_dir, sample_episodes):
    """``maps_data``: a place recorded in the real sample (not in the bundled set) is found in the sample."""
    episode = next(e for e in sample_episodes if e.gold_calls and e.gold_calls[0].name == "query_poi"
                   and e.gold_response(0) is not None and e.gold_calls[0].arguments.get("city"))
    args = dict(episode.gold_calls[0].arguments)
    task = PhoneTask(task_id="sample", query="x", category="grounding", bucket="behaviour", initial_state=S0,
                     action_space=["maps_search_place"], gold_behaviour={"answer_mentions": [["x"]]})
    given_set = PhoneSession(task, maps_data=built_dir)
    bundled = PhoneSession(task)
    try:
        found = given_set.call("maps_search_place", args, 1)
        assert found.ok and found.payload["match"] == "exact"
        default = bundled.call("maps_search_place", args, 1)
        assert not default.ok or default.payload != found.payload
    finally:
        given_set.close()
        bundled.close()
    with pytest.raises(ConfigError, match="maps_data"):
        gym.make("MobilePA-v0", maps_data=str(built_dir / "no-such-set"))
    assert gym.make("MobilePA-v0", maps_data=built_dir).unwrapped.maps_data == built_dir


def test_use_maps_data_marks_a_state():
    phone = StateTemplate(S0).restore()
    try:
        use_maps_data(phone, BUNDLED_DIR)
        assert call(phone, "maps_search_place", {"keywords": "绿地凤凰花园"}).payload["result"]["location"] == PARK
    finally:
        phone.close()


# ------------------------------------------------------------------------------------------- generated tasks
@pytest.fixture(scope="module")
def maps_tasks() -> list[PhoneTask]:
    bundled = [t for t in load_tasks(BUNDLED_TASKS) if _uses_maps(t)]
    fresh = [t for t in generate_tasks(80, seed=11, verify=verify_phone_task) if _uses_maps(t)]
    return bundled + fresh


def _uses_maps(task: PhoneTask) -> bool:
    return any(c.name in MAPS for c in task.oracle_calls)


def test_generated_maps_tasks_pass_the_oracle_and_fail_the_floors(maps_tasks):
    assert len(maps_tasks) >= 80
    assert {t.category for t in maps_tasks} == {"grounding", "conditional", "state_tracking", "intent_correction",
                                                "error_recovery"}
    assert {t.language for t in maps_tasks} == {"zh", "en"} and {t.bucket for t in maps_tasks} >= {
        "state_change", "behaviour"}
    kinds = {o["kind"] for t in maps_tasks for o in t.obstacles}
    assert kinds == {"missing_parameter", "permission_block", "state_change", "runtime_exception"}
    assert any(o.get("tool") == "maps_route" and o["kind"] == "runtime_exception"
               for t in maps_tasks for o in t.obstacles)
    for task in maps_tasks:
        oracle = play(task)
        assert verify_phone_task(task, oracle).passed, task.task_id
        for name, (calls, answer) in adversaries(task, oracle).items():
            assert not verify_phone_task(task, play(task, calls, answer)).passed, (task.task_id, name)


def test_answers_name_the_replayed_facts(maps_tasks):
    """Route, weather and traffic questions: the answer must state the recorded value; a wrong one fails."""
    asked = [t for t in maps_tasks if t.gold_behaviour and t.gold_behaviour.answer_mentions]
    assert len(asked) >= 10
    for task in asked:
        wrong = play(task, answer="大约需要99999分钟，全程99999公里，-99℃，未知 / about 99999 min")
        verdict = verify_phone_task(task, wrong)
        assert not verdict.passed and "answer_mentions" in verdict.failed_checks, task.task_id


def test_maps_tasks_play_through_gymnasium_make(maps_tasks):
    from mobility_agents.baselines.mobilepa.scripted import (FinishAtOnceAgent, PhoneOracleAgent, phone_scorecard,
                                                             play_tasks)

    env = gym.make("MobilePA-v0", tasks=maps_tasks[:30])
    try:
        ids = env.unwrapped.task_ids
        assert phone_scorecard(play_tasks(PhoneOracleAgent(), env.unwrapped, ids))["overall"]["success"] == 1.0
        assert phone_scorecard(play_tasks(FinishAtOnceAgent(), env.unwrapped, ids))["overall"]["success"] == 0.0
        task = env.unwrapped.tasks[ids[0]]
        obs, info = env.reset(options={"task_id": task.task_id})
        assert any(t["function"]["name"] in MAPS for t in info["tools"])
        first = task.oracle_calls[0]
        obs, _, _, _, info = env.step({"name": first.name, "arguments": dict(first.arguments)})
        assert json.loads(obs) == info["feedback"] and len(obs) < 4000
    finally:
        env.close()


# ------------------------------------------------------------------------------------------- fuzz
_POINTS = (HERE, PARK, "121.3986,31.1735", "0,0", " 116.991821 , 36.660456 ", "181,0", "121.5", "", "x,y")
_junk = st.one_of(st.none(), st.booleans(), st.integers(-10**12, 10**12), st.floats(allow_nan=True),
                  st.text(max_size=12), st.lists(st.text(max_size=6), max_size=3),
                  st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))
_NEAR = {"coordinate": st.sampled_from(_POINTS),
         "coordinate_list": st.lists(st.sampled_from(_POINTS), max_size=6),
         "option": st.one_of(st.sampled_from(["不走高速", "avoid_congestion", "0", "5", "9", "driving", "transit"]),
                             st.lists(st.sampled_from(["不走高速", "高速优先", "bogus"]), max_size=3))}
_TEXTS = ("绿地凤凰花园", "上海市", "沈阳市", "康乐南路", "c1", "ride-1", "home", "2025-11-13 14:00", "西安", "?")


def _value(param) -> st.SearchStrategy:
    if param.enum:
        return st.sampled_from(param.enum)
    if param.type == "boolean":
        return st.booleans()
    if param.type == "integer":
        return st.integers(-5, 60_000)
    return _NEAR.get(param.role, st.sampled_from(_TEXTS))


@st.composite
def _maps_call(draw) -> tuple[str, Any]:
    name = draw(st.sampled_from(sorted(MAPS)))
    if draw(st.integers(0, 9)) == 0:
        return name, draw(_junk)
    return name, {p.name: draw(_junk if draw(st.integers(0, 7)) == 0 else _value(p))
                  for p in MAPS[name].params if draw(st.integers(0, 3)) > 0}


_FUZZ: list[StateTemplate] = []


@settings(deadline=None, derandomize=True, max_examples=200)
@given(calls=st.lists(_maps_call(), min_size=1, max_size=6))
def test_fuzz_every_maps_tool_returns_feedback_and_never_raises(calls):
    if not _FUZZ:
        _FUZZ.append(StateTemplate(S0))
    phone = _FUZZ[0].restore()
    declared: set[str] = set()
    try:
        for step, (name, arguments) in enumerate(calls, 1):
            feedback = execute(phone, name, arguments, step=step)
            assert (feedback.error_type is None) == feedback.ok
            assert feedback.ok or isinstance(feedback.payload.get("message"), str)
            assert len(json.dumps(feedback.to_dict(), ensure_ascii=False)) < 4000
            if feedback.ok:
                declared |= set(PHONE_TOOLS[name].writes)
        assert len(phone.audit()) == len(calls)
        assert set(phone.delta()) <= declared & set(STATE_TABLES)
        assert phone.delta() == phone.delta(full=True)
    finally:
        phone.close()
