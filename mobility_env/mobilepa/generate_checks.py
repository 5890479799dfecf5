"""The checks every generated MobilePA task passes before it is shipped, and the cheap trajectories it must fail.

:func:`check_task` replays the task's oracle (``play(task)``) through the injected verifier, which must
pass it, and then each of :func:`adversaries`, which must all fail:

* ``finish_only``: no call, answer ``"好的"``;
* ``every_offered_tool``: each tool of ``A0`` called once, in ``A0``'s order, with the oracle's own
  arguments where the oracle used the tool successfully and otherwise with arguments that a
  tool of that kind accepts on this ``S_0`` (:func:`probe_arguments`: a toggle switched the other
  way, the first alarm, the first contact...), then the oracle's answer;
* ``act_without_asking`` (tasks that must ask): the oracle's calls without ``ask_user`` — the right
  values, but guessed instead of asked — and the oracle's answer;
* (:func:`other_readings`) for a request that fits several records (a user fact with ``record`` and other readings
  that pick other records: :mod:`.generate_ambiguity`), each other reading ``k`` played two ways:
  ``guess_reading_<k>`` — act at once on that record (the oracle's calls without ``ask_user``, the record swapped:
  with ``act_without_asking``, acting on the first match whichever it is) — and ``ask_then_reading_<k>`` — ask, then
  act on that record anyway;

* (:func:`guessed_times`) for an alarm whose time the oracle worked out from the calendar (a ``create_alarm`` after a
  ``list_events`` read: :mod:`.generate_reasoning`, :func:`~.generate_tracking.alarm_before_event`) ``guessed_time``:
  the oracle's calls with that alarm about an hour off (at a time no alarm of ``S_0`` holds) — a time guessed
  instead of read;
* (:func:`granted_anyway`) for a task that forbids ``grant_permission`` while ``S_0`` withholds the permission of a
  call the oracle makes (the user refuses it: :func:`~.generate_reasoning.permission_refused`)
  ``ask_then_grant`` — the oracle's calls (the question included), then the grant and the refused call again —
  and ``grant_without_acting`` — the oracle's calls and the grant alone;

and the answers of :func:`hedged_answers` after the oracle's own calls (the gold named, and beside it
another amount of an asked quantity, or every other choice of its vocabulary), which must fail too.

A capability task (memory, skill, sub-agent) also fails each of :func:`gate_floors` — the right outcome without
what its gate asks for:

* memory: ``without_memory_reads``: the oracle's calls minus every memory read (the ids it used are known to
  the replay, so the outcome is reached; only the gate can fail it);
* skill: ``skill_tools_without_loading``: the oracle's calls minus ``load_skill`` (skill-only routing refuses
  the skill's tools as ``unknown_tool``); ``every_skill_loaded``: each offered skill loaded, nothing done;
* sub-agent: ``every_agent``: the oracle's calls, then every other offered entry tool with a complete
  payload; ``payload_without_<field>``: the oracle's handoff with one gold payload field left out;

and the oracle's verdict must hold the gate's named checks, all passed (:data:`GATE_CHECKS`): a verifier that
ignores the gate is refused, not trusted.

A task that fails a check is a generator bug: :class:`~.generate_oracle.GenerationError`.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any, Callable

from ..scoring import EpisodeVerdict
from .episode import PhoneTrajectory, play
from .generate_oracle import GenerationError
from .answers import quantity_of
from .catalogue import PHONE_TOOLS
from .domains.subagents import SUB_AGENTS
from .skills import LOAD_SKILL, offered_skill_ids
from .tasks import PhoneTask

SUB_AGENT_TOOLS = frozenset(SUB_AGENTS)

#: What the generator is checked with: ``verify(task, trajectory)`` → a verdict with ``passed``
#: (``mobility_rewards.mobilepa.verify.verify_phone_task``: the verifier lives above this layer, so it is passed in).
Verifier = Callable[[PhoneTask, PhoneTrajectory], EpisodeVerdict]
Plan = list[tuple[str, dict[str, Any]]]
FINISH_ONLY_ANSWER = "好的"
#: The verdict checks each capability dimension's gate adds (``mobility_rewards.mobilepa.verify.verify_phone_task``).
GATE_CHECKS = {"memory": ("memory_retrieved",), "skill": ("skill_loaded", "skill_used"),
               "subagent": ("routed", "payload", "no_other_agent")}
MEMORY_READS = frozenset({"search_memory", "get_memory", "list_memories"})
_FLIPS = {"set_wifi": "wifi", "set_bluetooth": "bluetooth", "set_mobile_data": "mobile_data",
          "set_airplane_mode": "airplane_mode", "set_location_service": "location",
          "set_do_not_disturb": "do_not_disturb", "set_auto_brightness": "auto_brightness"}


def probe_arguments(name: str, task: PhoneTask) -> dict[str, Any]:
    """Arguments a tool accepts on the task's ``S_0`` and that make a state-changing tool change something."""
    rows = task.initial_state
    settings = {r["key"]: r["value"] for r in rows.get("settings", [])}
    today = settings.get("clock", "2026-01-01 08:00")[:10]
    alarm = (rows.get("alarms") or [{"alarm_id": "alarm-1", "enabled": 0}])[0]
    contact = (rows.get("contacts") or [{"contact_id": "c100", "name": "x"}])[0]
    apps = rows.get("apps", [])
    if name in _FLIPS:
        return {"on": settings.get(_FLIPS[name], "off") != "on"}
    fixed: dict[str, dict[str, Any]] = {
        "set_brightness": {"level": 37}, "set_volume": {"stream": "media", "level": 37},
        "set_ringer_mode": {"mode": "silent" if settings.get("ringer_mode") == "vibrate" else "vibrate"},
        "create_alarm": {"time": "04:44", "label": "probe"},
        "set_alarm_enabled": {"alarm_id": alarm["alarm_id"], "enabled": not alarm["enabled"]},
        "delete_alarm": {"alarm_id": alarm["alarm_id"]},
        "create_event": {"title": "probe", "start": f"{today} 23:00", "end": f"{today} 23:30"},
        "list_events": {"date": today},
        "open_app": {"app": next((a["app"] for a in apps if a["installed"] and not a["running"]), "Camera")},
        "close_app": {"app": next((a["app"] for a in apps if a["installed"] and a["running"]), "Camera")},
        "grant_permission": next(({"app": p["app"], "permission": p["permission"]} for p in rows.get("permissions", [])
                                  if not p["granted"]), {"app": "messages", "permission": "sms"}),
        "search_contacts": {"query": contact["name"]},
        "send_message": {"contact_id": contact["contact_id"], "text": "hi"},
        "call_contact": {"contact_id": contact["contact_id"]},
        "list_messages": {"contact_id": contact["contact_id"]},
        # maps & travel: the phone's own position and its saved places (a route from here is recorded; the gym is
        # never saved in a generated S0, so saving it always changes something)
        **_maps_probes(settings, rows.get("saved_places") or [], contact["contact_id"]),
        **_capability_probes(rows, today, apps),
    }
    return dict(fixed.get(name, {}))


def _capability_probes(rows: dict[str, list[dict[str, Any]]], today: str, apps: list[dict[str, Any]]) \
        -> dict[str, dict[str, Any]]:
    """Memory reads and writes on the first record, a load of the first offered skill, and a complete payload
    for every sub-agent (``probe`` values, so a policy that delegates everything changes something)."""
    memory = (rows.get("memories") or [{"memory_id": "mem-00000000"}])[0]["memory_id"]
    skill = (rows.get("skills") or [{"skill_id": "commute_briefing"}])[0]["skill_id"]
    app = next((a["app"] for a in apps if a["installed"]), "Camera")
    later = (dt.date.fromisoformat(today[:10]) + dt.timedelta(days=1)).isoformat()
    return {"search_memory": {"query": "home"}, "get_memory": {"memory_id": memory},
            "list_memories": {"category": "place"}, "update_memory": {"memory_id": memory, "content": "probe"},
            "delete_memory": {"memory_id": memory}, "save_memory": {"content": "probe", "category": "fact"},
            "set_dnd_schedule": {"enabled": True, "start": "23:11", "end": "06:11"},
            "load_skill": {"skill_id": skill},
            "route_to_gui_agent": {"app": app, "instruction": "probe"},
            "route_to_ride_agent": {"pickup": "probe", "destination": "probe 2"},
            "route_to_ticket_agent": {"kind": "train", "origin": "probe", "destination": "probe 2", "date": today},
            "route_to_movie_agent": {"title": "probe", "date": today},
            "route_to_food_agent": {"items": "probe", "address": "probe"},
            "route_to_hotel_agent": {"city": "probe", "check_in": today[:10], "check_out": later}}


def _maps_probes(settings: dict[str, Any], saved: list[dict[str, Any]], contact_id: str) -> dict[str, dict[str, Any]]:
    here = settings.get("current_location", "116.397428,39.90923")
    there = saved[0]["location"] if saved else here
    clock = settings.get("clock", "2026-01-01 08:00")
    return {"maps_search_place": {"keywords": "probe"}, "maps_nearby": {"location": here},
            "maps_reverse_geocode": {"location": here}, "maps_weather": {"forecast": True},
            "maps_traffic": {"road": "x"},
            "maps_route": {"origin": here, "destination": there}, "start_navigation": {"destination": there},
            "share_eta": {"contact_id": contact_id}, "save_place": {"label": "gym", "location": here},
            "delete_saved_place": {"label": saved[0]["label"] if saved else "home"},
            "set_departure_reminder": {"destination": there, "arrive_by": f"{clock[:10]} 23:59"},
            "book_ride": {"destination": there}, "cancel_ride": {"order_id": "ride-1"},
            "update_alarm": {"alarm_id": "alarm-1", "time": "04:44"}}


def adversaries(task: PhoneTask, oracle: PhoneTrajectory) -> dict[str, tuple[Plan, str]]:
    """The cheap trajectories of the module docstring, by name: ``(calls, answer)`` for :func:`play`."""
    used: dict[str, dict[str, Any]] = {}
    for call in oracle.calls:
        if call.succeeded and call.name not in used:
            used[call.name] = call.arguments
    spam = [(name, dict(used.get(name) or probe_arguments(name, task))) for name in task.action_space]
    out: dict[str, tuple[Plan, str]] = {"finish_only": ([], FINISH_ONLY_ANSWER),
                                        "every_offered_tool": (spam, task.oracle_answer)}
    if task.gold_behaviour is not None and task.gold_behaviour.must_ask:
        out["act_without_asking"] = ([(c.name, dict(c.arguments)) for c in task.oracle_calls if c.name != "ask_user"],
                                     task.oracle_answer)
    return out


def other_readings(task: PhoneTask) -> dict[str, tuple[Plan, str]]:
    """The plays on the records the user does not mean (see the module docstring), by name."""
    out: dict[str, tuple[Plan, str]] = {}
    plan = [(c.name, dict(c.arguments)) for c in task.oracle_calls]
    readings = [(f.record, other.record) for f in task.user_facts if f.record for other in f.others if other.record]
    for k, (meant, other) in enumerate(readings, 1):
        swapped = [(name, _swapped(arguments, meant, other)) for name, arguments in plan]
        if swapped == plan:
            raise GenerationError(f"{task.task_id}: the oracle's calls never name the meant record {meant!r}")
        out[f"guess_reading_{k}"] = ([c for c in swapped if c[0] != "ask_user"], task.oracle_answer)
        out[f"ask_then_reading_{k}"] = (swapped, task.oracle_answer)
    return out


def guessed_times(task: PhoneTask) -> dict[str, tuple[Plan, str]]:
    """The ``guessed_time`` play of the module docstring (none when no alarm's time was read from the calendar)."""
    plan = [(c.name, dict(c.arguments)) for c in task.oracle_calls]
    names = [name for name, _ in plan]
    if "list_events" not in names:
        return {}
    read = names.index("list_events")
    taken = {a["time"] for a in task.initial_state.get("alarms", [])}
    guessed = [(name, {**arguments, "time": _guessed(arguments["time"], taken)})
               if name == "create_alarm" and at > read and isinstance(arguments.get("time"), str) else (name, arguments)
               for at, (name, arguments) in enumerate(plan)]
    return {"guessed_time": (guessed, task.oracle_answer)} if guessed != plan else {}


def _guessed(hhmm: str, taken: set[str]) -> str:
    """Another time of the same day about an hour from ``hhmm`` at which ``S_0`` has no alarm (one there would
    refuse the guessed alarm, leaving the oracle's own change)."""
    total = int(hhmm[:2]) * 60 + int(hhmm[3:5])
    for shift in (60, -60, 75, -75, 90, -90, 45, -45):
        if 0 <= total + shift < 24 * 60:
            guess = f"{(total + shift) // 60:02d}:{(total + shift) % 60:02d}"
            if guess not in taken:
                return guess
    raise GenerationError(f"no free time near {hhmm} to guess")


def granted_anyway(task: PhoneTask) -> dict[str, tuple[Plan, str]]:
    """The ``ask_then_grant`` and ``grant_without_acting`` plays of the module docstring (none unless the task
    forbids ``grant_permission`` and ``S_0`` withholds a permission one of the oracle's calls needs)."""
    behaviour = task.gold_behaviour
    if behaviour is None or "grant_permission" not in behaviour.forbidden:
        return {}
    withheld = {(p["app"], p["permission"]) for p in task.initial_state.get("permissions", []) if not p["granted"]}
    plan = [(c.name, dict(c.arguments)) for c in task.oracle_calls]
    blocked = next(((name, arguments) for name, arguments in plan
                    if name in PHONE_TOOLS and PHONE_TOOLS[name].permission in withheld), None)
    if blocked is None:
        return {}
    app, permission = PHONE_TOOLS[blocked[0]].permission or ("", "")
    grant = ("grant_permission", {"app": app, "permission": permission})
    return {"ask_then_grant": (plan + [grant, blocked], task.oracle_answer),
            "grant_without_acting": (plan + [grant], task.oracle_answer)}


def _swapped(arguments: dict[str, Any], meant: str, other: str) -> dict[str, Any]:
    """``arguments`` with every value that is the record ``meant`` replaced by ``other``."""
    return {key: other if value == meant else value for key, value in arguments.items()}


def hedged_answers(task: PhoneTask) -> dict[str, str]:
    """The oracle's answer with a hedge added, by name: ``other_values`` — each asked quantity once more, one
    more unit (``25分钟`` → ``26分钟``); ``every_choice`` — every word of ``answer_excludes``."""
    behaviour = task.gold_behaviour
    out: dict[str, str] = {}
    if behaviour is None:
        return out
    bumped = [re.sub(r"\d+", lambda m: str(int(m.group(0)) + 1), group[0], count=1)
              for group in behaviour.answer_mentions if group and quantity_of(group[0]) is not None]
    if bumped:
        out["other_values"] = f"{task.oracle_answer} {' / '.join(bumped)}"
    if behaviour.answer_excludes:
        out["every_choice"] = f"{task.oracle_answer} {', '.join(behaviour.answer_excludes)}"
    return out


def gate_floors(task: PhoneTask, oracle: PhoneTrajectory) -> dict[str, tuple[Plan, str]]:
    """A capability task's gate floors of the module docstring, by name (none for a basic task)."""
    plan = [(c.name, dict(c.arguments)) for c in task.oracle_calls]
    answer = task.oracle_answer
    out: dict[str, tuple[Plan, str]] = {}
    if task.memory_gate is not None:
        out["without_memory_reads"] = ([c for c in plan if c[0] not in MEMORY_READS], answer)
    if task.skill_gate is not None:
        out["skill_tools_without_loading"] = ([c for c in plan if c[0] != LOAD_SKILL], answer)
        out["every_skill_loaded"] = ([(LOAD_SKILL, {"skill_id": s}) for s in offered_skill_ids(task.initial_state)],
                                     answer)
    gate = task.handoff_gate
    if gate is not None:
        others = [t for t in task.action_space if t in SUB_AGENT_TOOLS and t != gate.agent]
        out["every_agent"] = (plan + [(t, probe_arguments(t, task)) for t in others], answer)
        handoff = next((i for i, c in enumerate(oracle.calls) if c.succeeded and c.name == gate.agent), None)
        if handoff is not None:
            for field in gate.payload:
                dropped = {k: v for k, v in plan[handoff][1].items() if k != field}
                out[f"payload_without_{field}"] = (plan[:handoff] + [(gate.agent, dropped)] + plan[handoff + 1:],
                                                   answer)
    return out


def _gate_names(task: PhoneTask) -> tuple[str, ...]:
    return GATE_CHECKS.get(task.dimension, ())


def check_task(task: PhoneTask, verify: Verifier) -> None:
    """Raise :class:`GenerationError` unless the oracle passes ``task`` (a capability task: with its gate's
    checks in the verdict, passed) and every adversary, hedged answer and gate floor fails it."""
    oracle = play(task)
    verdict = verify(task, oracle)
    if not task.oracle_answer.strip() or not verdict.passed:
        raise GenerationError(f"{task.task_id}: the oracle fails its own task: {verdict.summary()}")
    if _gate_names(task):
        checks = {c.get("name"): c.get("passed") for c in verdict.to_dict().get("checks", [])}
        if any(checks.get(name) is not True for name in _gate_names(task)):
            raise GenerationError(f"{task.task_id}: the verdict lacks the {task.dimension} gate's checks "
                                  f"{list(_gate_names(task))}: {sorted(checks)}")
    for name, (calls, answer) in {**adversaries(task, oracle), **other_readings(task), **guessed_times(task),
                                  **granted_anyway(task), **gate_floors(task, oracle)}.items():
        if verify(task, play(task, calls, answer)).passed:
            raise GenerationError(f"{task.task_id}: the {name} trajectory passes the task")
    plan = [(c.name, dict(c.arguments)) for c in task.oracle_calls]
    for name, answer in hedged_answers(task).items():
        if verify(task, play(task, plan, answer)).passed:
            raise GenerationError(f"{task.task_id}: the {name} answer passes the task: {answer!r}")
