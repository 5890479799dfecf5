"""MobilePA sandbox foundations: per-episode SQLite state, row-diff delta, append-only audit log, the tool
registry, typed obstacles that the right action clears, and an executor that never raises on an agent's call."""

from __future__ import annotations

import json
import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mobility_env.errors import ConfigError
from mobility_env.mobilepa import PHONE_TOOLS, StateTemplate, execute, openai_tools
from mobility_env.mobilepa.catalogue import CAPABILITY_DOMAINS, DOMAINS, failure, tool
from mobility_env.mobilepa.state import TABLES
from mobility_env.trajectory import ErrorKind

S0 = {
    "settings": [{"key": "wifi", "value": "off"}, {"key": "airplane_mode", "value": "on"},
                 {"key": "ringer_mode", "value": "silent"}, {"key": "clock", "value": "2026-12-01 08:00"}],
    "apps": [{"app": "messages", "installed": 1, "running": 0}, {"app": "camera", "installed": 1, "running": 1}],
    "permissions": [{"app": "messages", "permission": "sms", "granted": 0}],
    "contacts": [{"contact_id": "c1", "name": "王芳", "phone": "13800000000", "relation": "妈妈"}],
    "alarms": [{"alarm_id": "alarm-0", "time": "07:00", "label": "起床", "repeat": "weekdays", "enabled": 0}],
    "faults": [{"tool": "create_event", "error_type": "transient_failure", "remaining": 2, "message": "calendar busy"}],
}


@pytest.fixture()
def template() -> StateTemplate:
    return StateTemplate(S0)


def test_each_episode_gets_its_own_copy_and_the_template_never_changes(template):
    first, second = template.restore(), template.restore()
    assert execute(first, "set_airplane_mode", {"on": False}).ok
    assert first.setting("airplane_mode") == "off" and second.setting("airplane_mode") == "on"
    assert template.restore().setting("airplane_mode") == "on"
    assert second.delta() == {}


def test_delta_is_a_row_diff_by_primary_key(template):
    state = template.restore()
    execute(state, "set_airplane_mode", {"on": False})
    execute(state, "delete_alarm", {"alarm_id": "alarm-0"})
    execute(state, "create_alarm", {"time": "06:30", "label": "晨跑"})
    assert state.delta() == {
        "settings": {"changed": [{"key": {"key": "airplane_mode"}, "before": {"key": "airplane_mode", "value": "on"},
                                  "after": {"key": "airplane_mode", "value": "off"}}]},
        "alarms": {"added": [{"alarm_id": "alarm-1", "time": "06:30", "label": "晨跑", "repeat": "once",
                              "enabled": 1}],
                   "removed": [S0["alarms"][0]]},
    }
    json.dumps(state.delta(), ensure_ascii=False)  # JSON-safe


def test_the_audit_log_records_every_call_and_cannot_be_rewritten(template):
    state = template.restore()
    execute(state, "set_wifi", {"on": True}, step=1)       # airplane mode: conflict
    execute(state, "no_such_tool", {}, step=2)
    execute(state, "set_airplane_mode", {"on": False}, step=3)
    log = state.audit()
    assert [(r["step"], r["tool"], r["status"], r["error_type"]) for r in log] == [
        (1, "set_wifi", "error", "state_conflict"), (2, "no_such_tool", "error", "unknown_tool"),
        (3, "set_airplane_mode", "success", None)]
    for statement in ("UPDATE audit_log SET status = 'success'", "DELETE FROM audit_log"):
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            state.execute(statement)
    assert len(state.audit()) == 3


def test_a_permission_block_is_cleared_by_granting_it_and_only_by_that(template):
    state = template.restore()
    state.execute("UPDATE settings SET value = 'off' WHERE key = 'airplane_mode'")
    call = {"contact_id": "c1", "text": "我晚点到"}
    for _ in range(2):  # retrying does not help
        feedback = execute(state, "send_message", call)
        assert feedback.error_type is ErrorKind.PERMISSION_DENIED and feedback.payload["permission"] == "sms"
    assert "messages" not in state.delta()
    assert execute(state, "grant_permission", {"app": "messages", "permission": "sms"}).ok
    assert execute(state, "send_message", call).ok
    assert state.delta()["messages"]["added"][0]["text"] == "我晚点到"


def test_an_implicit_state_dependency_is_cleared_by_changing_that_state(template):
    state = template.restore()
    assert execute(state, "set_wifi", {"on": True}).error_type is ErrorKind.STATE_CONFLICT  # airplane mode is on
    assert execute(state, "set_volume", {"stream": "ring", "level": 60}).error_type is ErrorKind.STATE_CONFLICT
    assert execute(state, "set_airplane_mode", {"on": False}).ok
    assert execute(state, "set_ringer_mode", {"mode": "normal"}).ok
    assert execute(state, "set_wifi", {"on": True}).ok
    assert execute(state, "set_volume", {"stream": "ring", "level": 60}).ok
    assert execute(state, "set_wifi", {"on": True}).error_type is ErrorKind.STATE_CONFLICT  # already on


def test_a_transient_failure_clears_after_its_planted_count(template):
    state = template.restore()
    call = {"title": "周会", "start": "2026-12-01 10:00", "end": "2026-12-01 11:00"}
    kinds = [execute(state, "create_event", call).error_type for _ in range(3)]
    assert kinds == [ErrorKind.TRANSIENT_FAILURE, ErrorKind.TRANSIENT_FAILURE, None]
    assert [row["title"] for row in state.delta()["events"]["added"]] == ["周会"]


def test_an_existing_alarm_is_a_conflict_naming_it_and_not_found_names_the_fix(template):
    state = template.restore()
    feedback = execute(state, "create_alarm", {"time": "07:00"})
    assert feedback.error_type is ErrorKind.STATE_CONFLICT and feedback.payload["alarm_id"] == "alarm-0"
    assert execute(state, "set_alarm_enabled", {"alarm_id": "alarm-0", "enabled": True}).ok
    missing = execute(state, "delete_alarm", {"alarm_id": "alarm-9"})
    assert missing.error_type is ErrorKind.NOT_FOUND and "list_alarms" in missing.payload["message"]


@pytest.fixture()
def half_writing_tool():
    @tool("test_write_then_fail", "system_settings", "writes, then fails")
    def run(state, args):
        state.execute("UPDATE settings SET value = 'broken' WHERE key = 'wifi'")
        return failure(ErrorKind.STATE_CONFLICT, "changed its mind")
    yield "test_write_then_fail"
    PHONE_TOOLS.pop("test_write_then_fail")


def test_a_failed_call_leaves_no_write_behind(template, half_writing_tool):
    state = template.restore()
    assert execute(state, half_writing_tool, {}).error_type is ErrorKind.STATE_CONFLICT
    assert state.delta() == {} and state.setting("wifi") == "off"


def test_every_registered_tool_is_complete():
    assert len(PHONE_TOOLS) >= 25
    for name, spec in PHONE_TOOLS.items():
        assert spec.name == name and spec.domain in DOMAINS + CAPABILITY_DOMAINS and spec.description
        assert all(p.check is not None for p in spec.params)
        assert set(spec.writes) <= set(TABLES)
        if spec.permission is not None:
            assert "grant_permission" in PHONE_TOOLS
    listed = openai_tools()
    assert [t["function"]["name"] for t in listed] == list(PHONE_TOOLS)
    json.dumps(listed, ensure_ascii=False)


def test_unknown_tables_and_columns_are_refused():
    with pytest.raises(ConfigError, match="unknown state table"):
        StateTemplate({"setting": []})
    with pytest.raises(ConfigError, match="no column"):
        StateTemplate({"settings": [{"key": "wifi", "valu": "on"}]})


_values = st.one_of(st.none(), st.booleans(), st.integers(-10**20, 10**20), st.floats(allow_nan=True),
                    st.text(max_size=30), st.lists(st.integers(), max_size=3),
                    st.dictionaries(st.text(max_size=5), st.integers(), max_size=3))
_names = st.one_of(st.sampled_from(sorted(PHONE_TOOLS)), st.text(max_size=12), st.integers(), st.none())
_args = st.one_of(st.dictionaries(st.sampled_from(["on", "level", "stream", "mode", "time", "label", "alarm_id",
                                                   "contact_id", "text", "app", "permission", "title", "start",
                                                   "end", "date", "query", "repeat", "enabled", "x"]), _values,
                                  max_size=4), _values)


@settings(deadline=None, derandomize=True, max_examples=300)
@given(calls=st.lists(st.tuples(_names, _args), max_size=8))
def test_execute_never_raises_and_logs_every_call(calls):
    state = StateTemplate(S0).restore()
    for step, (name, arguments) in enumerate(calls, 1):
        feedback = execute(state, name, arguments, step=step)
        assert feedback.status in ("success", "error")
        assert (feedback.error_type is None) == feedback.ok
        assert feedback.error_type is None or isinstance(feedback.error_type, ErrorKind)
        json.dumps(feedback.to_dict(), ensure_ascii=False, default=str)
        assert state.delta() == state.delta(full=True)  # the tables writes mark are all that changed
    assert len(state.audit()) == len(calls)


def test_same_calls_same_state():
    calls = [("set_airplane_mode", {"on": False}), ("create_alarm", {"time": "06:00"}),
             ("grant_permission", {"app": "messages", "permission": "sms"}),
             ("send_message", {"contact_id": "c1", "text": "hi"}), ("create_alarm", {"time": "06:10"})]
    runs = []
    for _ in range(2):
        state = StateTemplate(S0).restore()
        for name, args in calls:
            execute(state, name, args)
        runs.append((state.delta(), [(r["tool"], r["status"]) for r in state.audit()]))
    assert runs[0] == runs[1]


def test_a_finished_episode_leaves_nothing_for_the_next_one(template):
    first = template.restore()
    execute(first, "set_airplane_mode", {"on": False}, step=1)
    execute(first, "create_alarm", {"time": "05:00"}, step=2)
    connection = first.conn
    first.close()
    with pytest.raises(AttributeError):
        first.delta()  # a closed state is unusable
    second = template.restore()
    assert second.conn is connection  # the same connection, rolled back to S_0
    assert second.delta() == {} and second.audit() == [] and second.setting("airplane_mode") == "on"
    assert execute(second, "create_alarm", {"time": "05:00"}).payload["alarm_id"] == "alarm-1"  # counters too
    third = template.restore()  # while the second is open: another connection
    assert third.conn is not second.conn and third.delta() == {}


def test_new_ids_skip_the_ids_s0_already_holds():
    state = StateTemplate({"alarms": [{"alarm_id": "alarm-1", "time": "06:00", "enabled": 1},
                                      {"alarm_id": "alarm-2", "time": "06:30", "enabled": 1}]}).restore()
    assert execute(state, "create_alarm", {"time": "07:15"}).payload["alarm_id"] == "alarm-3"
