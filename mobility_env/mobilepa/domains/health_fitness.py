"""Health and fitness: daily activity (steps, distance, active calories) against the step goal, trends of
the recorded metrics (sleep, resting heart rate, weight...), workouts, medication reminders and the doses
taken, and the user's health records (allergies, conditions, vaccinations).

"Now" and "today" are the phone's ``clock`` setting. Reading health data needs ``health: read``;
recording it (workouts, medications, doses) ``health: write``. State dependencies: an outdoor workout
(run, walk, cycle, hike) tracks the route, so it needs the location service on (``location``); one
workout at a time; a reminder's dose is taken once a day.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from ...trajectory import ErrorKind
from ..catalogue import Feedback, failure, success, tool
from ..params import choice, clock, day, integer, text
from ..state import PhoneState
from .system_settings import put_setting

HEALTH_READ = ("health", "read")
HEALTH_WRITE = ("health", "write")
METRICS = ("steps", "distance_m", "active_kcal", "sleep_min", "resting_hr", "weight_kg")
WORKOUTS = ("run", "walk", "cycle", "hike", "swim", "yoga", "strength", "indoor_cycle")
OUTDOOR = frozenset({"run", "walk", "cycle", "hike"})
RECORD_KINDS = ("allergy", "condition", "vaccination", "blood_type", "surgery")
DEFAULT_STEP_GOAL = 8000


def _today(state: PhoneState) -> str:
    return (state.setting("clock") or "")[:10]


def _metrics_of(state: PhoneState, on: str) -> dict[str, float]:
    return {row["metric"]: row["value"] for row in state.query("SELECT metric, value FROM health_metrics WHERE day = ?",
                                                               (on,))}


@tool("get_activity_summary", "health_fitness", "One day's activity: steps against the step goal, distance, active "
      "calories and workouts (today unless a day is given).", day("date", "the day", required=False),
      permission=HEALTH_READ)
def get_activity_summary(state: PhoneState, args: dict[str, Any]) -> Feedback:
    today = _today(state)
    on = args.get("date") or today
    if today and on > today:
        return failure(ErrorKind.STATE_CONFLICT, f"{on} is after today ({today}): nothing is recorded yet")
    metrics = _metrics_of(state, on)
    goal = int(state.setting("step_goal") or DEFAULT_STEP_GOAL)
    steps = int(metrics.get("steps", 0))
    workouts = state.query("SELECT workout_id, kind, started_at, ended_at, status FROM workouts WHERE substr("
                           "started_at, 1, 10) = ? ORDER BY started_at", (on,))
    return success(date=on, steps=steps, step_goal=goal, goal_met=steps >= goal,
                   distance_m=int(metrics.get("distance_m", 0)), active_kcal=int(metrics.get("active_kcal", 0)),
                   workouts=workouts)


@tool("get_health_trend", "health_fitness", "A recorded metric over the last days up to today, with its average "
      "(sleep in minutes, resting heart rate, weight, steps...).", choice("metric", "what to read", METRICS),
      integer("days", "how many days back, today included", 1, 30), permission=HEALTH_READ)
def get_health_trend(state: PhoneState, args: dict[str, Any]) -> Feedback:
    today = _today(state)
    try:
        first = (dt.date.fromisoformat(today) - dt.timedelta(days=args["days"] - 1)).isoformat()
    except ValueError:  # a phone without a clock: every recorded day
        first, today = "", "9999-12-31"
    rows = state.query("SELECT day, value FROM health_metrics WHERE metric = ? AND day BETWEEN ? AND ? ORDER BY day",
                       (args["metric"], first, today))
    average = round(sum(r["value"] for r in rows) / len(rows), 1) if rows else None
    return success(metric=args["metric"], values=rows, average=average)


@tool("set_step_goal", "health_fitness", "Set the daily step goal.", integer("steps", "steps a day", 1000, 50000),
      writes=("settings",))
def set_step_goal(state: PhoneState, args: dict[str, Any]) -> Feedback:
    current = int(state.setting("step_goal") or DEFAULT_STEP_GOAL)
    if current == args["steps"]:
        return failure(ErrorKind.STATE_CONFLICT, f"the step goal is already {current}", setting="step_goal",
                       value=str(current))
    put_setting(state, "step_goal", str(args["steps"]))
    return success(setting="step_goal", value=str(args["steps"]), previous=current)


@tool("start_workout", "health_fitness", "Start recording a workout (an outdoor one tracks the route: location "
      "service on).", choice("kind", "the workout", WORKOUTS), permission=HEALTH_WRITE,
      writes=("workouts", "counters"))
def start_workout(state: PhoneState, args: dict[str, Any]) -> Feedback:
    active = state.one("SELECT workout_id, kind FROM workouts WHERE status = 'active'")
    if active is not None:
        return failure(ErrorKind.STATE_CONFLICT, f"a {active['kind']} workout is being recorded ({active['workout_id']}"
                       "): end_workout first", workout_id=active["workout_id"])
    if args["kind"] in OUTDOOR and state.setting("location", "off") != "on":
        return failure(ErrorKind.STATE_CONFLICT, f"location service is off: a {args['kind']} tracks the route, turn "
                       "it on first (set_location_service)", setting="location", value="off")
    workout_id = state.next_id("workout")
    state.execute("INSERT INTO workouts (workout_id, kind, started_at, ended_at, status) VALUES (?, ?, ?, '', "
                  "'active')", (workout_id, args["kind"], state.setting("clock", "")))
    return success(workout_id=workout_id, kind=args["kind"], status="active")


@tool("end_workout", "health_fitness", "Stop recording a workout and save it.",
      text("workout_id", "the workout (get_activity_summary)"), permission=HEALTH_WRITE, writes=("workouts",))
def end_workout(state: PhoneState, args: dict[str, Any]) -> Feedback:
    row = state.one("SELECT status FROM workouts WHERE workout_id = ?", (args["workout_id"],))
    if row is None:
        return failure(ErrorKind.NOT_FOUND, f"no workout {args['workout_id']!r}; get_activity_summary lists a day's "
                       "workouts")
    if row["status"] != "active":
        return failure(ErrorKind.STATE_CONFLICT, f"workout {args['workout_id']} is {row['status']}, not active")
    state.execute("UPDATE workouts SET status = 'finished', ended_at = ? WHERE workout_id = ?",
                  (state.setting("clock", ""), args["workout_id"]))
    return success(workout_id=args["workout_id"], status="finished")


@tool("add_medication_reminder", "health_fitness", "Remind the user to take a medication every day at a time.",
      text("name", "the medication"), text("dose", "how much, e.g. 1 片 or 5 ml"), clock("time", "when to take it"),
      permission=HEALTH_WRITE, writes=("medications", "counters"))
def add_medication_reminder(state: PhoneState, args: dict[str, Any]) -> Feedback:
    name = args["name"].strip()
    clash = state.one("SELECT medication_id FROM medications WHERE name = ? AND time = ? AND active = 1",
                      (name, args["time"]))
    if clash is not None:
        return failure(ErrorKind.STATE_CONFLICT, f"{name} is already reminded at {args['time']} "
                       f"({clash['medication_id']})", medication_id=clash["medication_id"])
    medication_id = state.next_id("medication")
    state.execute("INSERT INTO medications (medication_id, name, dose, time, active) VALUES (?, ?, ?, ?, 1)",
                  (medication_id, name, args["dose"].strip(), args["time"]))
    return success(medication_id=medication_id, name=name, time=args["time"])


@tool("list_medications", "health_fitness", "The medication reminders, by time, and whether today's dose is taken.",
      permission=HEALTH_READ)
def list_medications(state: PhoneState, args: dict[str, Any]) -> Feedback:
    return success(medications=state.query(
        "SELECT m.medication_id, m.name, m.dose, m.time, m.active, l.taken_at IS NOT NULL AS taken_today FROM "
        "medications m LEFT JOIN medication_log l ON l.medication_id = m.medication_id AND l.day = ? ORDER BY "
        "m.time, m.medication_id", (_today(state),)))


@tool("log_medication_taken", "health_fitness", "Record that today's dose of a medication was taken.",
      text("medication_id", "the medication reminder (list_medications)"), permission=HEALTH_WRITE,
      writes=("medication_log",))
def log_medication_taken(state: PhoneState, args: dict[str, Any]) -> Feedback:
    row = state.one("SELECT name, active FROM medications WHERE medication_id = ?", (args["medication_id"],))
    if row is None:
        return failure(ErrorKind.NOT_FOUND, f"no medication reminder {args['medication_id']!r}; list_medications "
                       "shows them")
    today = _today(state)
    taken = state.one("SELECT taken_at FROM medication_log WHERE medication_id = ? AND day = ?",
                      (args["medication_id"], today))
    if taken is not None:
        return failure(ErrorKind.STATE_CONFLICT, f"today's {row['name']} was already taken at {taken['taken_at']}")
    if not row["active"]:
        return failure(ErrorKind.STATE_CONFLICT, f"the {row['name']} reminder is stopped")
    state.execute("INSERT INTO medication_log (medication_id, day, taken_at) VALUES (?, ?, ?)",
                  (args["medication_id"], today, state.setting("clock", "")))
    return success(medication_id=args["medication_id"], day=today, taken=True)


@tool("list_health_records", "health_fitness", "The user's health records (allergies, conditions, vaccinations, "
      "blood type, surgeries), optionally of one kind.", choice("kind", "which records", RECORD_KINDS, required=False),
      permission=HEALTH_READ)
def list_health_records(state: PhoneState, args: dict[str, Any]) -> Feedback:
    sql, params = "SELECT record_id, kind, name, detail, recorded_on FROM health_records", []
    if args.get("kind"):
        sql, params = sql + " WHERE kind = ?", [args["kind"]]
    return success(records=state.query(sql + " ORDER BY kind, recorded_on, record_id", params))
