"""The checks every generated MobilePA task passes before it is shipped, and the cheap trajectories it must fail.

:func:`check_task` replays the task's oracle (``play(task)``) through the injected verifier, which must
pass it, and then each of :func:`adversaries`, which must all fail:

* ``finish_only``: no call, answer ``"好的"``;
* ``every_offered_tool``: each tool of ``A0`` called once, in ``A0``'s order, with the oracle's own
  arguments where the oracle used the tool successfully and otherwise with arguments that a
  tool of that kind accepts on this ``S_0`` (:func:`probe_arguments`: a toggle switched the other
  way, the first alarm, the first contact...), then the oracle's answer;
* ``act_without_asking`` (tasks that must ask): the oracle's calls without ``ask_user`` — the right
  values, but guessed instead of asked — and the oracle's answer.

A task that fails a check is a generator bug: :class:`~.generate_oracle.GenerationError`.
"""

from __future__ import annotations

from typing import Any, Callable

from ..scoring import EpisodeVerdict
from .episode import PhoneTrajectory, play
from .generate_oracle import GenerationError
from .tasks import PhoneTask

#: What the generator is checked with: ``verify(task, trajectory)`` → a verdict with ``passed``
#: (``mobility_rewards.mobilepa.verify_phone_task``: the verifier lives above this layer, so it is passed in).
Verifier = Callable[[PhoneTask, PhoneTrajectory], EpisodeVerdict]
Plan = list[tuple[str, dict[str, Any]]]
FINISH_ONLY_ANSWER = "好的"
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
    }
    return dict(fixed.get(name, {}))


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


def check_task(task: PhoneTask, verify: Verifier) -> None:
    """Raise :class:`GenerationError` unless the oracle passes ``task`` and every adversary fails it."""
    oracle = play(task)
    verdict = verify(task, oracle)
    if not task.oracle_answer.strip() or not verdict.passed:
        raise GenerationError(f"{task.task_id}: the oracle fails its own task: {verdict.summary()}")
    for name, (calls, answer) in adversaries(task, oracle).items():
        if verify(task, play(task, calls, answer)).passed:
            raise GenerationError(f"{task.task_id}: the {name} trajectory passes the task")
