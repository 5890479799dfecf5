"""Time management: alarms (an alarm at a time that already has one is a conflict), calendar events, timers,
the stopwatch, reminders and world clocks.

The sandbox's clock does not run by itself: "now" is the ``clock`` setting (``YYYY-MM-DD HH:MM``),
so a timer keeps its state until a tool changes it and world-clock times are computed from that
setting. The stopwatch is the ``stopwatch`` setting: ``idle`` → ``running`` ⇄ ``stopped`` → ``idle``.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from ...trajectory import ErrorKind
from ..catalogue import Feedback, ToolCode, failure, success, tool
from ..params import choice, clock, flag, integer, moment, text
from ..state import PhoneState
from .system_settings import put_setting

REPEATS = ("once", "daily", "weekdays", "weekends")
#: Cities a world clock can show: ``{name or alias: (city, time zone, UTC offset in minutes)}``. Standard
#: time: daylight saving is not applied.
WORLD_CITIES: dict[str, tuple[str, str, int]] = {}
for _name, _alias, _zone, _offset in (
        ("Beijing", "北京", "Asia/Shanghai", 480), ("Shanghai", "上海", "Asia/Shanghai", 480),
        ("Hong Kong", "香港", "Asia/Hong_Kong", 480), ("Tokyo", "东京", "Asia/Tokyo", 540),
        ("Seoul", "首尔", "Asia/Seoul", 540), ("Singapore", "新加坡", "Asia/Singapore", 480),
        ("Dubai", "迪拜", "Asia/Dubai", 240), ("Moscow", "莫斯科", "Europe/Moscow", 180),
        ("London", "伦敦", "Europe/London", 0), ("Paris", "巴黎", "Europe/Paris", 60),
        ("Berlin", "柏林", "Europe/Berlin", 60), ("New York", "纽约", "America/New_York", -300),
        ("Los Angeles", "洛杉矶", "America/Los_Angeles", -480), ("Sydney", "悉尼", "Australia/Sydney", 600)):
    WORLD_CITIES[_name.lower()] = WORLD_CITIES[_alias] = (_name, _zone, _offset)
_ZONE_OFFSETS = {zone: offset for _, zone, offset in WORLD_CITIES.values()} | {"UTC": 0}


@tool("create_alarm", "time_management", "Create an alarm.", clock("time", "when it rings"),
      text("label", "what it is for", required=False), choice("repeat", "how often", REPEATS, required=False),
      writes=("alarms", "counters"))
def create_alarm(state: PhoneState, args: dict[str, Any]) -> Feedback:
    existing = state.one("SELECT alarm_id, enabled FROM alarms WHERE time = ?", (args["time"],))
    if existing is not None:
        return failure(ErrorKind.STATE_CONFLICT, f"an alarm at {args['time']} already exists ({existing['alarm_id']}, "
                       f"{'on' if existing['enabled'] else 'off'}); turn it on with set_alarm_enabled",
                       alarm_id=existing["alarm_id"])
    alarm_id = state.next_id("alarm")
    state.execute("INSERT INTO alarms (alarm_id, time, label, repeat, enabled) VALUES (?, ?, ?, ?, 1)",
                  (alarm_id, args["time"], args.get("label") or "", args.get("repeat") or "once"))
    return success(alarm_id=alarm_id, time=args["time"])


@tool("list_alarms", "time_management", "List every alarm.")
def list_alarms(state: PhoneState, args: dict[str, Any]) -> Feedback:
    return success(alarms=state.query("SELECT alarm_id, time, label, repeat, enabled FROM alarms ORDER BY time"))


@tool("set_alarm_enabled", "time_management", "Turn an existing alarm on or off.", text("alarm_id", "the alarm"),
      flag("enabled", "true to turn it on"), writes=("alarms",))
def set_alarm_enabled(state: PhoneState, args: dict[str, Any]) -> Feedback:
    row = state.one("SELECT enabled FROM alarms WHERE alarm_id = ?", (args["alarm_id"],))
    if row is None:
        return failure(ErrorKind.NOT_FOUND, f"no alarm {args['alarm_id']!r}; list_alarms shows them")
    if bool(row["enabled"]) == args["enabled"]:
        return failure(ErrorKind.STATE_CONFLICT, f"alarm {args['alarm_id']} is already "
                       f"{'on' if args['enabled'] else 'off'}")
    state.execute("UPDATE alarms SET enabled = ? WHERE alarm_id = ?", (int(args["enabled"]), args["alarm_id"]))
    return success(alarm_id=args["alarm_id"], enabled=args["enabled"])


@tool("delete_alarm", "time_management", "Delete an alarm.", text("alarm_id", "the alarm"), writes=("alarms",))
def delete_alarm(state: PhoneState, args: dict[str, Any]) -> Feedback:
    if state.execute("DELETE FROM alarms WHERE alarm_id = ?", (args["alarm_id"],)) == 0:
        return failure(ErrorKind.NOT_FOUND, f"no alarm {args['alarm_id']!r}; list_alarms shows them")
    return success(alarm_id=args["alarm_id"], deleted=True)


@tool("create_event", "time_management", "Add a calendar event.", text("title", "what it is"),
      moment("start", "when it starts"), moment("end", "when it ends"), text("location", "where", required=False),
      writes=("events", "counters"))
def create_event(state: PhoneState, args: dict[str, Any]) -> Feedback:
    if args["end"] <= args["start"]:
        return failure(ErrorKind.SCHEMA_ERROR, "the event must end after it starts", fields=["end"])
    clash = state.one("SELECT event_id, title FROM events WHERE start < ? AND end > ?", (args["end"], args["start"]))
    event_id = state.next_id("event")
    state.execute("INSERT INTO events (event_id, title, start, end, location) VALUES (?, ?, ?, ?, ?)",
                  (event_id, args["title"], args["start"], args["end"], args.get("location") or ""))
    return success(event_id=event_id, overlaps=None if clash is None else clash)


@tool("list_events", "time_management", "List the calendar events of one day.",
      text("date", "the day, 'YYYY-MM-DD'"))
def list_events(state: PhoneState, args: dict[str, Any]) -> Feedback:
    return success(events=state.query("SELECT event_id, title, start, end, location FROM events WHERE substr(start, "
                                      "1, 10) = ? ORDER BY start", (args["date"],)))


@tool("update_alarm", "time_management", "Change an alarm's time, label or repeat (give at least one).",
      text("alarm_id", "the alarm (list_alarms)"), clock("time", "the new time", required=False),
      text("label", "the new label", required=False), choice("repeat", "how often", REPEATS, required=False),
      writes=("alarms",))
def update_alarm(state: PhoneState, args: dict[str, Any]) -> Feedback:
    row = state.one("SELECT time, label, repeat FROM alarms WHERE alarm_id = ?", (args["alarm_id"],))
    if row is None:
        return failure(ErrorKind.NOT_FOUND, f"no alarm {args['alarm_id']!r}; list_alarms shows them")
    changes = {k: args[k] for k in ("time", "label", "repeat") if args.get(k) is not None}
    if not changes:
        return failure(ErrorKind.MISSING_PARAMETER, "say what to change: time, label or repeat",
                       fields=["time", "label", "repeat"])
    if all(row[k] == v for k, v in changes.items()):
        return failure(ErrorKind.STATE_CONFLICT, f"alarm {args['alarm_id']} already has these values")
    clash = None if "time" not in changes else state.one("SELECT alarm_id FROM alarms WHERE time = ? AND "
                                                         "alarm_id != ?", (changes["time"], args["alarm_id"]))
    if clash is not None:
        return failure(ErrorKind.STATE_CONFLICT, f"another alarm ({clash['alarm_id']}) rings at {changes['time']}",
                       alarm_id=clash["alarm_id"])
    state.execute(f"UPDATE alarms SET {', '.join(f'{k} = ?' for k in changes)} WHERE alarm_id = ?",
                  (*changes.values(), args["alarm_id"]))
    return success(alarm_id=args["alarm_id"], **changes)


def _event(state: PhoneState, event_id: str) -> dict[str, Any] | None:
    return state.one("SELECT title, start, end, location FROM events WHERE event_id = ?", (event_id,))


@tool("update_event", "time_management", "Change a calendar event's title, times or location (give at least one).",
      text("event_id", "the event (list_events)"), text("title", "the new title", required=False),
      moment("start", "the new start", required=False), moment("end", "the new end", required=False),
      text("location", "the new location", required=False), writes=("events",))
def update_event(state: PhoneState, args: dict[str, Any]) -> Feedback:
    row = _event(state, args["event_id"])
    if row is None:
        return failure(ErrorKind.NOT_FOUND, f"no event {args['event_id']!r}; list_events shows a day's events")
    changes = {k: args[k] for k in ("title", "start", "end", "location") if args.get(k) is not None}
    if not changes:
        return failure(ErrorKind.MISSING_PARAMETER, "say what to change: title, start, end or location",
                       fields=["title", "start", "end", "location"])
    if all(row[k] == v for k, v in changes.items()):
        return failure(ErrorKind.STATE_CONFLICT, f"event {args['event_id']} already has these values")
    if (changes.get("end") or row["end"] or "") <= (changes.get("start") or row["start"] or ""):
        return failure(ErrorKind.SCHEMA_ERROR, "the event must end after it starts", fields=["end"])
    state.execute(f"UPDATE events SET {', '.join(f'{k} = ?' for k in changes)} WHERE event_id = ?",
                  (*changes.values(), args["event_id"]))
    return success(event_id=args["event_id"], **changes)


@tool("delete_event", "time_management", "Delete a calendar event.", text("event_id", "the event (list_events)"),
      writes=("events",))
def delete_event(state: PhoneState, args: dict[str, Any]) -> Feedback:
    if state.execute("DELETE FROM events WHERE event_id = ?", (args["event_id"],)) == 0:
        return failure(ErrorKind.NOT_FOUND, f"no event {args['event_id']!r}; list_events shows a day's events")
    return success(event_id=args["event_id"], deleted=True)


@tool("start_timer", "time_management", "Start a countdown timer.", integer("minutes", "minutes", 0, 1440),
      integer("seconds", "extra seconds", 0, 59, required=False), text("label", "what it is for", required=False),
      writes=("timers", "counters"))
def start_timer(state: PhoneState, args: dict[str, Any]) -> Feedback:
    duration = args["minutes"] * 60 + (args.get("seconds") or 0)
    if duration == 0:
        return failure(ErrorKind.SCHEMA_ERROR, "a timer needs a duration above 0", fields=["minutes", "seconds"])
    label = args.get("label") or ""
    if label:
        clash = state.one("SELECT timer_id FROM timers WHERE label = ?", (label,))
        if clash is not None:
            return failure(ErrorKind.STATE_CONFLICT, f"a timer labelled {label!r} exists ({clash['timer_id']})",
                           timer_id=clash["timer_id"])
    timer_id = state.next_id("timer")
    state.execute("INSERT INTO timers (timer_id, label, duration_s, state) VALUES (?, ?, ?, 'running')",
                  (timer_id, label, duration))
    return success(timer_id=timer_id, duration_s=duration, state="running")


@tool("list_timers", "time_management", "List the timers (running or paused).")
def list_timers(state: PhoneState, args: dict[str, Any]) -> Feedback:
    return success(timers=state.query("SELECT timer_id, label, duration_s, state FROM timers ORDER BY timer_id"))


def _timer_transition(before: str, after: str) -> ToolCode:
    def run(state: PhoneState, args: dict[str, Any]) -> Feedback:
        row = state.one("SELECT state FROM timers WHERE timer_id = ?", (args["timer_id"],))
        if row is None:
            return failure(ErrorKind.NOT_FOUND, f"no timer {args['timer_id']!r}; list_timers shows them")
        if row["state"] != before:
            return failure(ErrorKind.STATE_CONFLICT, f"timer {args['timer_id']} is {row['state']}, not {before}")
        state.execute("UPDATE timers SET state = ? WHERE timer_id = ?", (after, args["timer_id"]))
        return success(timer_id=args["timer_id"], state=after)
    return run


tool("pause_timer", "time_management", "Pause a running timer.", text("timer_id", "the timer (list_timers)"),
     writes=("timers",))(_timer_transition("running", "paused"))
tool("resume_timer", "time_management", "Resume a paused timer.", text("timer_id", "the timer (list_timers)"),
     writes=("timers",))(_timer_transition("paused", "running"))


@tool("cancel_timer", "time_management", "Cancel (delete) a timer.", text("timer_id", "the timer (list_timers)"),
      writes=("timers",))
def cancel_timer(state: PhoneState, args: dict[str, Any]) -> Feedback:
    if state.execute("DELETE FROM timers WHERE timer_id = ?", (args["timer_id"],)) == 0:
        return failure(ErrorKind.NOT_FOUND, f"no timer {args['timer_id']!r}; list_timers shows them")
    return success(timer_id=args["timer_id"], cancelled=True)


def _stopwatch(name: str, description: str, allowed: tuple[str, ...], after: str) -> None:
    def run(state: PhoneState, args: dict[str, Any]) -> Feedback:
        current = state.setting("stopwatch", "idle") or "idle"
        if current not in allowed:
            return failure(ErrorKind.STATE_CONFLICT, f"the stopwatch is {current}", setting="stopwatch",
                           value=current)
        put_setting(state, "stopwatch", after)
        return success(stopwatch=after)
    tool(name, "time_management", description, writes=("settings",))(run)


_stopwatch("start_stopwatch", "Start the stopwatch, or continue it after a stop.", ("idle", "stopped"), "running")
_stopwatch("stop_stopwatch", "Stop the running stopwatch (its time is kept).", ("running",), "stopped")
_stopwatch("reset_stopwatch", "Reset a stopped stopwatch to zero.", ("stopped",), "idle")


@tool("create_reminder", "time_management", "Create a reminder, optionally due at a time.",
      text("text", "what to remember"), moment("due", "when it is due", required=False),
      writes=("reminders", "counters"))
def create_reminder(state: PhoneState, args: dict[str, Any]) -> Feedback:
    due = args.get("due") or ""
    clash = state.one("SELECT reminder_id FROM reminders WHERE text = ? AND due = ? AND done = 0", (args["text"], due))
    if clash is not None:
        return failure(ErrorKind.STATE_CONFLICT, f"this reminder exists ({clash['reminder_id']})",
                       reminder_id=clash["reminder_id"])
    reminder_id = state.next_id("reminder")
    state.execute("INSERT INTO reminders (reminder_id, text, due, done) VALUES (?, ?, ?, 0)",
                  (reminder_id, args["text"], due))
    return success(reminder_id=reminder_id, due=due or None)


@tool("list_reminders", "time_management", "List the open reminders (and the done ones if asked), by due time.",
      flag("include_done", "true to include completed reminders", required=False))
def list_reminders(state: PhoneState, args: dict[str, Any]) -> Feedback:
    where = "" if args.get("include_done") else " WHERE done = 0"
    return success(reminders=state.query(f"SELECT reminder_id, text, due, done FROM reminders{where} ORDER BY "
                                         "due = '', due, reminder_id"))


@tool("complete_reminder", "time_management", "Mark a reminder as done.",
      text("reminder_id", "the reminder (list_reminders)"), writes=("reminders",))
def complete_reminder(state: PhoneState, args: dict[str, Any]) -> Feedback:
    row = state.one("SELECT done FROM reminders WHERE reminder_id = ?", (args["reminder_id"],))
    if row is None:
        return failure(ErrorKind.NOT_FOUND, f"no reminder {args['reminder_id']!r}; list_reminders shows them")
    if row["done"]:
        return failure(ErrorKind.STATE_CONFLICT, f"reminder {args['reminder_id']} is already done")
    state.execute("UPDATE reminders SET done = 1 WHERE reminder_id = ?", (args["reminder_id"],))
    return success(reminder_id=args["reminder_id"], done=True)


@tool("delete_reminder", "time_management", "Delete a reminder.", text("reminder_id", "the reminder (list_reminders)"),
      writes=("reminders",))
def delete_reminder(state: PhoneState, args: dict[str, Any]) -> Feedback:
    if state.execute("DELETE FROM reminders WHERE reminder_id = ?", (args["reminder_id"],)) == 0:
        return failure(ErrorKind.NOT_FOUND, f"no reminder {args['reminder_id']!r}; list_reminders shows them")
    return success(reminder_id=args["reminder_id"], deleted=True)


def _world_city(name: str) -> tuple[str, str, int] | None:
    return WORLD_CITIES.get(name.strip().lower())


@tool("add_world_clock", "time_management", "Show a city's time in the world clock.",
      text("city", "the city, in English or Chinese (e.g. London, 东京)"), writes=("world_clocks",))
def add_world_clock(state: PhoneState, args: dict[str, Any]) -> Feedback:
    city = _world_city(args["city"])
    if city is None:
        cities = ", ".join(sorted({c for c, _, _ in WORLD_CITIES.values()}))
        return failure(ErrorKind.NOT_FOUND, f"unknown city {args['city']!r}; add_world_clock knows {cities}")
    if state.one("SELECT 1 AS present FROM world_clocks WHERE city = ?", (city[0],)) is not None:
        return failure(ErrorKind.STATE_CONFLICT, f"{city[0]} is already in the world clock")
    state.execute("INSERT INTO world_clocks (city, time_zone) VALUES (?, ?)", city[:2])
    return success(city=city[0], time_zone=city[1])


@tool("remove_world_clock", "time_management", "Remove a city from the world clock.",
      text("city", "the city, in English or Chinese"), writes=("world_clocks",))
def remove_world_clock(state: PhoneState, args: dict[str, Any]) -> Feedback:
    city = _world_city(args["city"])
    name = city[0] if city else args["city"].strip()
    if state.execute("DELETE FROM world_clocks WHERE city = ?", (name,)) == 0:
        return failure(ErrorKind.NOT_FOUND, f"{name} is not in the world clock; list_world_clocks shows it")
    return success(city=name, removed=True)


@tool("list_world_clocks", "time_management", "The world clock's cities with their local date and time "
      "(standard time).")
def list_world_clocks(state: PhoneState, args: dict[str, Any]) -> Feedback:
    try:
        now = datetime.strptime(state.setting("clock") or "", "%Y-%m-%d %H:%M")
    except ValueError:
        now = None
    home = _ZONE_OFFSETS.get(state.setting("time_zone") or "Asia/Shanghai", 480)
    clocks = []
    for row in state.query("SELECT city, time_zone FROM world_clocks ORDER BY city"):
        offset = _ZONE_OFFSETS.get(row["time_zone"])
        local = None if now is None or offset is None else now + timedelta(minutes=offset - home)
        clocks.append({**row, "local_time": None if local is None else local.strftime("%Y-%m-%d %H:%M")})
    return success(clocks=clocks)
