"""MobilePA skills (action-space expansion) and sub-agent entry tools, and their gates.

Hand-made tasks: a skill's tools are refused before it is loaded and offered from the next step after
(``info["tools"]``, and the request a scripted ReAct model receives over real HTTP); unknown, not offered
and repeated loads; each sub-agent's declared schema, typed errors and recorded delegation; the gates
against trajectories that pass and the cheap ones that must fail; random arguments never raise."""

from __future__ import annotations

import functools
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mobility_agents.llm.client import LLMConfig
from mobility_agents.llm.react import ReActAgent
from mobility_env.mobilepa import PHONE_TOOLS, execute
from mobility_env.mobilepa.domains.subagents import HANDOFF_TOOLS, SUB_AGENTS, HandoffTool
from mobility_env.mobilepa.env import MobilePAEnv
from mobility_env.mobilepa.episode import PhoneSession, play
from mobility_env.mobilepa.skills import LOAD_SKILL, SKILLS, skill_action_space, skill_rows
from mobility_env.mobilepa.tasks import GoldCall, HandoffGate, PhoneTask, SkillGate
from mobility_env.trajectory import ErrorKind as E
from mobility_rewards.mobilepa.delegation_gates import handoff_gate_check, payload_value_matches, skill_gate_check
from openai_server import MODEL, ScriptedOpenAIServer, react_script

PHONE: dict[str, list[dict[str, Any]]] = {
    "settings": [{"key": "clock", "value": "2026-12-01 22:00"}, {"key": "do_not_disturb", "value": "off"},
                 {"key": "brightness", "value": "80"}],
    "alarms": [{"alarm_id": "alarm-0", "time": "07:00", "label": "起床", "repeat": "weekdays", "enabled": 0}],
    "apps": [{"app": "taobao", "installed": 1, "running": 0}],
    "permissions": [{"app": "assistant", "permission": "accessibility", "granted": 1}],
    "skills": skill_rows(["bedtime_dnd", "focus_mode"], "en"),
}
Calls = list[tuple[str, dict[str, Any]]]
BEDTIME: Calls = [(LOAD_SKILL, {"skill_id": "bedtime_dnd"}), ("set_do_not_disturb", {"on": True}),
                  ("set_alarm_enabled", {"alarm_id": "alarm-0", "enabled": True})]
RIDE = {"pickup": "Home", "destination": "Beijing South Railway Station", "time": "2026-12-02 07:30",
        "ride_class": "comfort"}
COMPLETE = {  # one valid, complete payload per entry tool registered by the subagents module
    "route_to_ride_agent": RIDE,
    "route_to_ticket_agent": {"kind": "train", "origin": "北京", "destination": "上海", "date": "2026-12-05",
                              "passengers": 2, "seat_class": "business"},
    "route_to_movie_agent": {"title": "流浪地球", "date": "2026-12-06", "showtime": "19:30", "seats": 2},
    "route_to_food_agent": {"items": "two beef noodles, no chilli", "address": "Office, 5th floor"},
    "route_to_hotel_agent": {"city": "杭州", "check_in": "2026-12-10", "check_out": "2026-12-12", "guests": 2},
}


def _task(action_space: list[str], calls: list[tuple[str, dict]], task_id: str = "skill", **fields) -> PhoneTask:
    """A state-change task whose gold delta is what its oracle calls do (computed by playing them)."""
    task = PhoneTask(task_id=task_id, query="bedtime", language="en", category="grounding", bucket="state_change",
                     initial_state=fields.pop("initial_state", PHONE), action_space=action_space,
                     oracle_calls=[GoldCall(name=n, arguments=a) for n, a in calls], oracle_answer="done",
                     gold_delta={}, **fields)
    return task.model_copy(update={"gold_delta": play(task).delta})


def _names(tools: list[dict]) -> list[str]:
    return [t["function"]["name"] for t in tools]


# --------------------------------------------------------------------------- the library
def test_the_library_has_bilingual_skills_of_registered_tools():
    assert len(SKILLS) >= 8
    capability = {LOAD_SKILL, *SUB_AGENTS}
    for skill_id, skill in SKILLS.items():
        assert skill.skill_id == skill_id and len(skill.tools) >= 3 == len(set(skill.tools[:3]))
        assert set(skill.tools) <= set(PHONE_TOOLS) and not set(skill.tools) & capability, skill_id
        for text in (skill.name, skill.description, skill.steps):
            assert text.zh.strip() and text.en.strip() and text.zh != text.en
        assert all(name in skill.steps.en for name in skill.tools), skill_id  # the how-to names every tool
    assert {"maps_weather", "maps_traffic", "maps_route"} <= set(SKILLS["commute_briefing"].tools)
    with pytest.raises(KeyError, match="nap_time"):
        skill_rows(["nap_time"])


def test_action_space_for_each_routing():
    base = ["list_apps", "set_do_not_disturb", "search_contacts"]
    only = skill_action_space(base, ["bedtime_dnd"], routing="skill_only")
    assert only == ["list_apps", "search_contacts", LOAD_SKILL]
    mixed = skill_action_space(base, ["bedtime_dnd"], routing="mixed", direct=["set_volume"])
    assert mixed == base + ["set_volume", LOAD_SKILL]


# --------------------------------------------------------------------------- expansion through the env
def test_a_loaded_skill_is_offered_from_the_next_step_and_shown_in_info_tools():
    task = _task(skill_action_space(["list_apps"], ["bedtime_dnd", "focus_mode"]), BEDTIME)
    env = MobilePAEnv(tasks=[task])
    _, info = env.reset(options={"task_id": "skill"})
    assert _names(info["tools"]) == ["list_apps", LOAD_SKILL, "ask_user", "finish"]
    loader = info["tools"][1]["function"]
    assert loader["parameters"]["properties"]["skill_id"]["enum"] == ["bedtime_dnd", "focus_mode"]
    assert "Bedtime do-not-disturb" in loader["description"] and "commute_briefing" not in loader["description"]

    obs, _, _, _, info = env.step({"name": "set_do_not_disturb", "arguments": {"on": True}})
    assert info["error"]["type"] == "unknown_tool" and "tools" not in info  # not offered before the load
    _, _, _, _, info = env.step({"name": LOAD_SKILL, "arguments": {"skill_id": "bedtime_dnd"}})
    payload = info["feedback"]["payload"]
    assert payload["tools"] == list(SKILLS["bedtime_dnd"].tools) == payload["added_tools"]
    assert payload["steps"] == SKILLS["bedtime_dnd"].steps.en  # the language its skills row names
    assert _names(info["tools"]) == ["list_apps", LOAD_SKILL, *SKILLS["bedtime_dnd"].tools, "ask_user", "finish"]
    assert all(t == PHONE_TOOLS[t["function"]["name"]].openai_schema() for t in info["tools"][2:-2])

    _, _, _, _, info = env.step({"name": LOAD_SKILL, "arguments": {"skill_id": "bedtime_dnd"}})
    assert info["feedback"]["status"] == "success" and info["feedback"]["payload"]["added_tools"] == []
    assert "tools" not in info  # a second load is harmless and changes nothing
    for name, arguments in BEDTIME[1:]:
        _, _, _, _, info = env.step({"name": name, "arguments": arguments})
        assert info["feedback"]["status"] == "success" and "tools" not in info
    *_, final = env.step({"name": "finish", "arguments": {"answer": "done"}})
    assert final["metrics"]["success"] == 1.0
    loads = [c for c in final["trajectory"]["calls"] if c["name"] == LOAD_SKILL]
    assert [c["status"] for c in loads] == ["success", "success"]  # the verifier sees the loads
    env.close()


@pytest.mark.parametrize("skill_id, offered", [("nap_time", ["bedtime_dnd", "focus_mode"]),
                                               ("commute_briefing", ["bedtime_dnd", "focus_mode"])])
def test_loading_an_unknown_or_not_offered_skill_is_not_found(skill_id, offered):
    session = PhoneSession(_task([LOAD_SKILL], BEDTIME[:1]))
    try:
        feedback = session.call(LOAD_SKILL, {"skill_id": skill_id}, 1)
        assert feedback.error_type is E.NOT_FOUND and feedback.payload["offered"] == offered
        assert skill_id in feedback.payload["message"] and not session.take_expansion()
        assert session.tool_names == [LOAD_SKILL] and "set_do_not_disturb" not in session.offered
        assert session.call("set_do_not_disturb", {"on": True}, 2).error_type is E.UNKNOWN_TOOL
        assert session.state.delta() == {}
    finally:
        session.close()


def test_mixed_routing_adds_only_the_tools_not_offered_yet_and_a_load_writes_nothing():
    space = skill_action_space(["list_apps"], ["bedtime_dnd"], routing="mixed", direct=["set_do_not_disturb"])
    session = PhoneSession(_task(space, BEDTIME))
    try:
        assert session.call("set_do_not_disturb", {"on": True}, 1).ok  # offered directly
        feedback = session.call(LOAD_SKILL, {"skill_id": "bedtime_dnd"}, 2)
        assert feedback.payload["added_tools"] == [t for t in SKILLS["bedtime_dnd"].tools if t != "set_do_not_disturb"]
        assert session.take_expansion() and not session.take_expansion()
        assert session.loaded_skills == ["bedtime_dnd"]
        assert set(session.state.delta()) == {"settings"}  # the DND change only: loading changed nothing
        assert PHONE_TOOLS[LOAD_SKILL].writes == ()
    finally:
        session.close()


def test_a_load_without_the_loader_offered_is_refused():
    session = PhoneSession(_task(["list_apps"], [("list_apps", {})]))
    try:
        assert session.call(LOAD_SKILL, {"skill_id": "bedtime_dnd"}, 1).error_type is E.UNKNOWN_TOOL
        assert not session.take_expansion() and session.tool_names == ["list_apps"]
    finally:
        session.close()


def test_a_scripted_react_model_sees_the_skill_tools_only_after_the_load():
    task = _task(skill_action_space(["list_apps"], ["bedtime_dnd"]), BEDTIME)
    env = MobilePAEnv(tasks=[task])
    actions = [{"name": n, "arguments": a} for n, a in BEDTIME] + [{"name": "finish", "arguments": {"answer": "ok"}}]
    with ScriptedOpenAIServer(react_script(actions)) as server:
        config = LLMConfig(model=MODEL, base_url=server.base_url, api_key="k", timeout_s=2.0, max_retries=1,
                           backoff_s=0.01, backoff_max_s=0.1, language="en")
        record = ReActAgent(config).run_episode(env, "skill")
        assert server.protocol_errors == [] and server.remaining == 0
    offered = [_names(body["tools"]) for body in server.chat_bodies]
    assert offered[0] == ["list_apps", LOAD_SKILL, "ask_user", "finish"]
    assert all(offered[i] == ["list_apps", LOAD_SKILL, *SKILLS["bedtime_dnd"].tools, "ask_user", "finish"]
               for i in range(1, len(offered)))
    assert record["result"]["failure"] is None and record["result"]["metrics"]["success"] == 1.0
    env.close()


# --------------------------------------------------------------------------- sub-agent entry tools
def _fresh(state_rows: dict | None = None):
    return PhoneSession(_task([LOAD_SKILL], BEDTIME[:1], initial_state=state_rows or PHONE)).state


def test_there_are_at_least_four_sub_agents_each_with_a_declared_payload():
    assert len(SUB_AGENTS) >= 4 and "route_to_gui_agent" in SUB_AGENTS and set(HANDOFF_TOOLS) == set(COMPLETE)
    for name in HANDOFF_TOOLS:
        agent, spec = SUB_AGENTS[name], PHONE_TOOLS[name]
        assert isinstance(spec, HandoffTool) and spec.writes == ("delegations", "counters")
        parameters = spec.openai_schema()["function"]["parameters"]
        assert parameters["required"] == list(agent.required) and len(agent.required) >= 2 and agent.optional
        assert list(parameters["properties"]) == [f.name for f in agent.fields]
        assert f"Payload: {', '.join(agent.required)} (required); {', '.join(agent.optional)}." in spec.description
        assert set(agent.required) <= set(COMPLETE[name])


@pytest.mark.parametrize("name", sorted(COMPLETE))
def test_a_complete_handoff_is_recorded_and_a_missing_field_is_a_missing_parameter(name):
    state = _fresh()
    try:
        agent = SUB_AGENTS[name]
        for field in agent.required:
            partial = {k: v for k, v in COMPLETE[name].items() if k != field}
            feedback = execute(state, name, partial)
            assert feedback.error_type is E.MISSING_PARAMETER and feedback.payload["fields"] == [field]
        assert state.delta() == {}
        feedback = execute(state, name, COMPLETE[name])
        assert feedback.ok and feedback.payload["agent"] == name and feedback.payload["status"] == "queued"
        rows = state.delta()["delegations"]["added"]
        assert rows == [{"handoff_id": feedback.payload["handoff_id"], "agent": name, "status": "queued",
                         "payload": json.dumps(COMPLETE[name], ensure_ascii=False, sort_keys=True),
                         "created_at": "2026-12-01 22:00"}]
        unknown = execute(state, name, {**COMPLETE[name], "budget": 1})
        assert unknown.error_type is E.SCHEMA_ERROR and len(state.delta()["delegations"]["added"]) == 1
    finally:
        state.close()


@pytest.mark.parametrize("name, change, field", [
    ("route_to_ride_agent", {"ride_class": "limo"}, "ride_class"),
    ("route_to_ride_agent", {"time": "tomorrow"}, "time"),
    ("route_to_ride_agent", {"destination": "home"}, ""),  # the same place as the pickup
    ("route_to_ticket_agent", {"date": "2026-13-01"}, "date"),
    ("route_to_ticket_agent", {"passengers": 0}, "passengers"),
    ("route_to_hotel_agent", {"check_out": "2026-12-10"}, ""),  # no night between check-in and check-out
    ("route_to_movie_agent", {"showtime": "7pm"}, "showtime"),
])
def test_values_the_payload_schema_refuses_are_schema_errors_and_record_nothing(name, change, field):
    state = _fresh()
    try:
        feedback = execute(state, name, {**COMPLETE[name], **change})
        assert feedback.error_type is E.SCHEMA_ERROR and (not field or feedback.payload["fields"] == [field])
        assert state.delta() == {}
    finally:
        state.close()


def test_handoff_ids_never_collide_with_planted_or_gui_handoffs():
    rows = {**PHONE, "delegations": [{"handoff_id": "delegation-1", "agent": "route_to_food_agent", "payload": "{}",
                                      "status": "done", "created_at": ""}]}
    state = _fresh(rows)
    try:
        gui = execute(state, "route_to_gui_agent", {"app": "taobao", "instruction": "买猫粮"})
        rides = [execute(state, "route_to_ride_agent", RIDE) for _ in range(2)]
        ids = ["delegation-1", gui.payload["handoff_id"]] + [ride.payload["handoff_id"] for ride in rides]
        assert gui.ok and all(ride.ok for ride in rides) and len(set(ids)) == 4, ids
        assert ids[2:] == ["delegation-2", "delegation-3"]
    finally:
        state.close()


# --------------------------------------------------------------------------- the gates
SPACE = [*HANDOFF_TOOLS, "route_to_gui_agent", "list_apps"]
GATE = HandoffGate(agent="route_to_ride_agent", payload={"destination": ["Beijing South Railway Station", "北京南站"],
                                                         "pickup": ["home", "家"], "ride_class": ["comfort"]})


def _handoff(calls: list[tuple[str, dict]]):
    return handoff_gate_check(GATE, play(_task(SPACE, [("list_apps", {})], "ride"), calls, "ok"))


def test_the_right_agent_with_a_complete_payload_passes_the_handoff_gate():
    passed, detail = _handoff([("route_to_ride_agent", {**RIDE, "pickup": " HOME "})])
    assert passed, detail
    assert [c["name"] for c in detail["checks"]] == ["routed", "payload", "no_other_agent"]
    # a failed attempt (a field missing: the user is asked) before the complete one is recovery, not a failure
    retry = [("route_to_ride_agent", {"pickup": "Home"}), ("ask_user", {"question": "where to?"}),
             ("route_to_ride_agent", RIDE)]
    assert _handoff(retry)[0]


@pytest.mark.parametrize("calls, failing", [
    ([("route_to_ride_agent", {k: v for k, v in RIDE.items() if k != "ride_class"})], "payload"),  # field left out
    ([("route_to_ride_agent", {**RIDE, "ride_class": "economy"})], "payload"),  # wrong value
    ([("route_to_ride_agent", {**RIDE, "destination": "Beijing South"})], "payload"),  # part of a value
    ([("route_to_ride_agent", {**RIDE, "pickup": "home or office"})], "payload"),  # stuffed with candidates
    ([("route_to_ticket_agent", COMPLETE["route_to_ticket_agent"])], "routed"),  # wrong agent
    ([("route_to_ride_agent", RIDE), ("route_to_food_agent", COMPLETE["route_to_food_agent"])], "no_other_agent"),
    ([("route_to_ride_agent", RIDE), ("route_to_gui_agent", {"app": "taobao", "instruction": "叫车"})],
     "no_other_agent"),
    ([("route_to_ride_agent", RIDE), ("route_to_ride_agent", {**RIDE, "ride_class": "xl"})], "routed"),  # twice
    ([("route_to_ride_agent", {"pickup": "Home"})], "routed"),  # only a refused call: nothing handed off
])
def test_cheap_or_wrong_delegations_fail_the_handoff_gate(calls, failing):
    passed, detail = _handoff(calls)
    assert not passed
    assert failing in [c["name"] for c in detail["checks"] if not c["passed"]] and detail["reason"]


def test_delegating_to_every_agent_fails_and_unknown_gates_fail():
    everything = [(name, COMPLETE[name]) for name in HANDOFF_TOOLS]
    assert not _handoff(everything)[0]
    trajectory = play(_task(SPACE, [("route_to_ride_agent", RIDE)], "ride"))
    assert handoff_gate_check(GATE, trajectory)[0]
    assert not handoff_gate_check(HandoffGate(agent="route_to_pizza_agent"), trajectory)[0]
    odd = HandoffGate(agent="route_to_ride_agent", payload={"budget": ["50"]})  # a field the agent does not take
    assert not handoff_gate_check(odd, trajectory)[0]


@pytest.mark.parametrize("value, accepted, match, expected", [
    ("Beijing  South Railway Station", ["beijing south railway station"], "value", True),
    ("ＣＯＭＦＯＲＴ", ["comfort"], "value", True),  # full-width letters, NFKC
    (2, ["2"], "value", True),
    ("北京西站", ["北京"], "value", False),
    ("在淘宝买一袋猫粮", ["猫粮"], "text", True),
    ("buy cat food", ["cat food"], "text", True),
    ("check the category page", ["cat"], "text", False),
    ("order 12 noodles", ["2 noodles"], "text", False),
    (None, ["home"], "value", False),
    ("home", [""], "value", False),
])
def test_payload_values_match_whole_or_at_a_boundary(value, accepted, match, expected):
    assert payload_value_matches(value, accepted, match) is expected


def _skill_trajectory(calls, space=None):
    return play(_task(space or skill_action_space(["list_apps"], ["bedtime_dnd", "focus_mode"]), BEDTIME), calls,
                "ok")


def test_the_skill_gate_passes_a_load_followed_by_use():
    passed, detail = skill_gate_check(SkillGate(skill_id="bedtime_dnd"), _skill_trajectory(BEDTIME))
    assert passed, detail
    assert [c["name"] for c in detail["checks"]] == ["skill_loaded", "skill_used", "tools_after_load"]
    space = skill_action_space(["list_apps"], ["bedtime_dnd"], routing="mixed", direct=["set_do_not_disturb"])
    mixed = [("set_do_not_disturb", {"on": True}), BEDTIME[0], BEDTIME[2]]
    assert skill_gate_check(SkillGate(skill_id="bedtime_dnd", routing="mixed"), _skill_trajectory(mixed, space))[0]


@pytest.mark.parametrize("gate, calls, space, failing", [
    (SkillGate(skill_id="bedtime_dnd"), [("list_apps", {})], None, "skill_loaded"),  # never loaded
    (SkillGate(skill_id="bedtime_dnd"), BEDTIME[1:], None, "skill_loaded"),  # refused tools, no load
    (SkillGate(skill_id="bedtime_dnd"), [(LOAD_SKILL, {"skill_id": "focus_mode"}), BEDTIME[1]], None,
     "skill_loaded"),  # another skill that shares a tool
    (SkillGate(skill_id="bedtime_dnd"), [BEDTIME[0]], None, "skill_used"),  # loaded, never acted on
    (SkillGate(skill_id="bedtime_dnd"), [BEDTIME[1], BEDTIME[0], BEDTIME[2]],
     ["list_apps", "set_do_not_disturb", LOAD_SKILL], "tools_after_load"),  # used before the load (A_0 leak)
    (SkillGate(skill_id="nap_time"), BEDTIME, None, "skill_loaded"),  # a gate naming no skill
])
def test_the_skill_gate_fails_without_a_load_or_with_use_before_it(gate, calls, space, failing):
    passed, detail = skill_gate_check(gate, _skill_trajectory(calls, space))
    assert not passed and failing in [c["name"] for c in detail["checks"] if not c["passed"]]


# --------------------------------------------------------------------------- random arguments never raise
_values = st.one_of(st.none(), st.booleans(), st.integers(-5, 20), st.floats(allow_nan=True), st.text(max_size=8),
                    st.sampled_from(["bedtime_dnd", "focus_mode", "commute_briefing", "now", "2026-12-05", "19:30",
                                     "train", "comfort", "Home", "北京", "2026-12-02 07:30"]),
                    st.lists(st.integers(), max_size=2),
                    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))
_NEW_TOOLS = sorted([LOAD_SKILL, *HANDOFF_TOOLS])
_FIELDS = sorted({p.name for name in _NEW_TOOLS for p in PHONE_TOOLS[name].params} | {"junk"})


@settings(deadline=None, derandomize=True, max_examples=150)
@given(calls=st.lists(st.tuples(st.sampled_from(_NEW_TOOLS), st.one_of(
    st.dictionaries(st.sampled_from(_FIELDS), _values, max_size=6), _values)), min_size=1, max_size=6))
def test_random_arguments_to_the_new_tools_never_raise(calls):
    session = PhoneSession(_fuzz_task())
    try:
        for step, (name, arguments) in enumerate(calls, 1):
            feedback = session.call(name, arguments, step)
            assert (feedback.error_type is None) == feedback.ok
            assert feedback.ok or isinstance(feedback.payload.get("message"), str)
            json.dumps(feedback.to_dict(), ensure_ascii=False)
        assert set(session.state.delta()) <= {"delegations"}
        assert len(session.state.audit()) == len(calls)
        assert set(session.tool_names) - set(_NEW_TOOLS) <= {t for s in session.loaded_skills for t in SKILLS[s].tools}
    finally:
        session.close()


@functools.lru_cache(maxsize=1)
def _fuzz_task() -> PhoneTask:
    return _task(_NEW_TOOLS, BEDTIME[:1], "fuzz")
