"""``PhoneRuleAgent``: a deterministic keyword-and-regex baseline for ``MobilePA-v0`` that plays from observations only.

It sees what an LLM agent sees — the reset info (``query``, ``history``, ``language``, ``tools``) and each
call's feedback JSON — and never the task object, its gold, the oracle's calls, the user's scripted replies
or the state database. One episode:

1. **Parse** the request (:func:`build_plan`): values (quoted texts, days, clock times, place and road
   names, durations, numbers) are lifted out first (:func:`extract`), the rest is cut into clauses, and each
   clause becomes a frame ``(concept, op, slots)`` by a small zh/en lexicon — or a condition (``如果 Wi-Fi
   没开`` / ``if it's on`` / ``超过 30 分钟``), or a modifier of its neighbour (``标签“起床”``, ``location
   Room 3``). A request that corrects the previous user turn (``不对，改成 7:30`` / ``no, make it 7:30``) is
   that turn's frames with the new values (the last one wins); one that corrects without a value makes the
   agent ask. Concepts: brightness, volume, ringer, the switches (Wi-Fi, Bluetooth, ...), alarms, calendar
   events, apps, contacts (call, text, number, last message) and maps & travel (navigation, route facts,
   rides, departure reminders, saved places, weather, traffic, sharing the ETA).
2. **Ground** each frame on the offered tools by name (``set_brightness``, ``create_alarm``...: the tool whose
   name holds the frame's words with the fewest others); arguments are kept to the tool's schema.
3. **Act**, reading before writing where a value lives on the phone (a contact's id from ``search_contacts``,
   an alarm's id from ``list_alarms``, today's date from ``get_device_status``, a condition's state from the
   getter for it); a value the request leaves out is asked for with ``ask_user`` before anything changes.
4. **Recover** from the feedback: ``transient_failure`` → retry (at most ``max_retries`` times);
   ``permission_denied`` → the offered grant tool, then retry; ``state_conflict`` → nothing when the payload
   says it is already so, turn an existing alarm on, or call the tool the message names (or the ``set_<setting>``
   tool of the payload's setting) to undo the blocking setting, or pass the flag the message names
   (``pass replace=true``), then retry.
5. **Answer** with what was done and the facts read (a number, a message, the day's events).

Capability tools (memory, skills, sub-agents), when a task offers them, come first
(:class:`~mobility_agents.baselines.mobilepa.capabilities.CapabilityMixin`): a request a sub-agent's words name is
handed to
it with its payload; a request that shares words with an offered skill's name and description loads that skill
and plays its routine with the tools the load adds; with the memory tools offered, the values a request leaves to
habit ("the usual way", "以前那个") are read from the memory records before the frames are played, and dictated
or forgotten records are updated or deleted.

Example::

    from mobility_agents.baselines.mobilepa.scripted import phone_scorecard
    env = MobilePAEnv()
    results = [PhoneRuleAgent().run_episode(env, task_id)["result"] for task_id in env.task_ids]
    print(phone_scorecard(results)["category"]["grounding"]["success"])
"""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Any, Callable

from ...base import Agent, EpisodeSession
from .capabilities import CapabilityMixin
from .parse import LABEL_WORDS, SWITCHES, Frame, Guard, build_plan, extract, parse_reply, resolve_day

__all__ = ["PhoneRuleAgent", "build_plan", "extract", "resolve_day"]


def _distance(metres: Any, lang: str) -> str:
    """32211 → 32.2公里 / 32.2 km; 850 → 850米 / 850 m."""
    value = int(metres or 0)
    if value < 1000:
        return f"{value}米" if lang == "zh" else f"{value} m"
    return f"{value / 1000:.1f}公里" if lang == "zh" else f"{value / 1000:.1f} km"


# ====================================================================== the agent
_SWITCH_WORDS = {"do_not_disturb": ("勿扰模式", "Do Not Disturb"), "airplane_mode": ("飞行模式", "airplane mode"),
                 "wifi": ("Wi-Fi", "Wi-Fi"), "bluetooth": ("蓝牙", "Bluetooth"), "mobile_data": ("移动数据", "mobile data"),
                 "location": ("定位", "location services"), "battery_saver": ("省电模式", "battery saver"),
                 "always_on_display": ("息屏显示", "the always-on display")}
_STREAM_WORDS = {"media": ("媒体音量", "media volume"), "ring": ("铃声音量", "ring volume"),
                 "alarm": ("闹钟音量", "alarm volume"), "call": ("通话音量", "call volume")}
_MODE_WORDS = {"silent": ("静音", "silent"), "vibrate": ("震动", "vibrate"), "normal": ("响铃", "normal")}
#: what a frame needs to act, and how to ask for it
_QUESTIONS = {"level": ("要调到多少？", "What level would you like?"),
              "stream": ("要调哪个音量：媒体、铃声、闹钟还是通话？", "Which volume: media, ringtone, alarm or call?"),
              "time": ("几点？", "What time?"), "span": ("几点开始、几点结束？", "From what time to what time?"),
              "text": ("要发什么内容？", "What should the message say?"),
              "value": ("要改成什么？", "What should it be instead?"), "place": ("要去哪里？", "Where to?")}


class PhoneRuleAgent(Agent):
    """Rule baseline for ``MobilePA-v0`` (see the module docstring); deterministic, no model, no privileged reads."""

    name = "phone-rule"

    def __init__(self, max_retries: int = 2):
        self.max_retries = max_retries

    def play(self, session: EpisodeSession) -> None:
        _Episode(session, self.max_retries).run()


class _Episode(CapabilityMixin):
    """One episode's reads, calls and notes (the facts and changes the answer reports)."""

    def __init__(self, session: EpisodeSession, max_retries: int):
        self.session, self.max_retries = session, max_retries
        info = session.info
        self.lang = "en" if info.get("language") == "en" else "zh"
        self.tools = {t["function"]["name"]: t["function"] for t in info.get("tools", []) if "function" in t}
        self.max_steps = int(info.get("max_steps") or 12)
        self.notes: list[str] = []
        self.cache: dict[str, Any] = {}

    # ------------------------------------------------------------------ talking to the env
    def say(self, zh: str, en: str) -> str:
        return zh if self.lang == "zh" else en

    def note(self, zh: str, en: str) -> None:
        self.notes.append(self.say(zh, en))

    def left(self) -> int:
        """Calls still possible before the one that must be ``finish``."""
        return self.max_steps - len(self.session.steps) - 1

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any] | None:
        """One call's feedback (``status``, ``error_type``, ``payload``), or None when no call may be made."""
        if self.session.done or self.left() <= 0:
            return None
        observation = self.session.call(name, arguments)
        try:
            feedback = json.loads(observation)
        except json.JSONDecodeError:
            return None
        return feedback if isinstance(feedback, dict) else None

    def tool(self, *words: str) -> str | None:
        """The offered tool whose name holds every word, with the fewest other words (``set_brightness`` before
        ``set_auto_brightness``)."""
        matches = [(len(name.split("_")), name) for name in self.tools
                   if all(word in name.split("_") for word in words)]
        return min(matches)[1] if matches else None

    def fit(self, name: str, arguments: dict[str, Any]) -> dict[str, Any] | None:
        """``arguments`` kept to the tool's parameters; None when a required one is missing."""
        params = self.tools[name].get("parameters", {})
        kept = {k: v for k, v in arguments.items() if k in params.get("properties", {}) and v is not None}
        return kept if all(r in kept for r in params.get("required", [])) else None

    def attempt(self, name: str | None, arguments: dict[str, Any], depth: int = 0) -> dict[str, Any] | None:
        """Call ``name`` until it succeeds, clearing the obstacles its feedback names; the success payload or None."""
        if name is None:
            return None
        fitted = self.fit(name, arguments)
        if fitted is None:
            return None
        retries, asked = 0, False
        for _ in range(self.max_retries + 4):
            feedback = self.call(name, fitted)
            if feedback is None:
                return None
            payload = feedback.get("payload") or {}
            if feedback.get("status") == "success":
                return payload
            kind, message = feedback.get("error_type"), str(payload.get("message", ""))
            if kind == "transient_failure" and retries < self.max_retries:
                retries += 1
            elif kind == "permission_denied" and depth < 2 and "app" in payload:
                if self.attempt(self.tool("grant", "permission"), {"app": payload["app"],
                                                                   "permission": payload.get("permission")},
                                depth + 1) is None:
                    return None
            elif kind == "missing_parameter" and payload.get("fields") and not asked:
                given, asked = self.ask_for(name, [str(f) for f in payload["fields"]], message), True
                if not given:
                    return None
                fitted = {**fitted, **given}
            elif kind == "state_conflict" and depth < 2:
                after, done = self.resolve_conflict(name, payload, message, depth)
                if after == "flag" and done is not None:  # the message names the argument that settles it
                    fitted = {**fitted, **done}
                elif after != "retry":
                    return done
            else:
                self.note(f"{name}失败：{message}", f"{name} failed: {message}")
                return None
        return None

    def resolve_conflict(self, name: str, payload: dict[str, Any], message: str,
                         depth: int) -> tuple[str, dict[str, Any] | None]:
        """Clear a state conflict: ``("retry", None)`` once cleared, ``("flag", {name: True})`` when the message
        says which flag settles it (``pass replace=true``), ``("done", payload)`` when the call's job is done
        already (or done another way), ``("fail", None)`` when nothing offered clears it."""
        if "alarm_id" in payload:  # the alarm exists already: switch it on if it is off
            if re.search(r"\boff\b", message):
                return "done", self.attempt(self.tool("alarm", "enabled"), {"alarm_id": payload["alarm_id"],
                                                                            "enabled": True}, depth + 1)
            return "done", dict(payload)
        flag = re.search(r"\bpass (\w+)=true\b", message)
        if flag and self.tools[name].get("parameters", {}).get("properties", {}).get(flag.group(1), {}).get(
                "type") == "boolean":
            return "flag", {flag.group(1): True}
        if "already" in message or "not running" in message:
            return "done", {"already": message}
        named = [t for t in re.findall(r"\b[a-z]+(?:_[a-z]+)+\b", message) if t in self.tools and t != name]
        setting = str(payload.get("setting") or "")
        fixer = named[0] if named else (self.tool("set", *setting.split("_")) if setting else None)
        if fixer is None or fixer == name:
            self.note(f"{name}失败：{message}", f"{name} failed: {message}")
            return "fail", None
        params = self.tools[fixer].get("parameters", {}).get("properties", {})
        arguments: dict[str, Any] = {}
        for key, spec in params.items():
            if spec.get("type") == "boolean":
                arguments[key] = str(payload.get("value", "on")) != "on"
            elif spec.get("enum"):
                said = [v for v in spec["enum"] if re.search(rf"\b{v}\b", message)]
                arguments[key] = said[0] if said else next(v for v in spec["enum"] if v != payload.get("value"))
        return ("retry", None) if self.attempt(fixer, arguments, depth + 1) is not None else ("fail", None)

    def ask(self, slot: str, question: str | None = None) -> str:
        """The user's reply to the question for ``slot`` (or to ``question``); "" when there is none."""
        feedback = self.call("ask_user", {"question": question or self.say(*_QUESTIONS[slot])})
        reply = (feedback or {}).get("payload", {}).get("reply")
        return reply if isinstance(reply, str) and reply != "(no answer)" else ""

    def ask_for(self, name: str, fields: list[str], message: str) -> dict[str, Any]:
        """Values for the ``fields`` a tool says are missing, from the user's reply to its message (a number for
        an integer field, the reply's text for the first text field)."""
        reply = self.ask("value", message)
        said = parse_reply(reply, self.lang)
        properties = self.tools[name].get("parameters", {}).get("properties", {})
        given: dict[str, Any] = {}
        for key in fields:
            kind = properties.get(key, {}).get("type")
            if kind == "integer" and said.value("number") is not None:
                given[key] = said.value("number")
            elif kind == "string" and said.value("plain") and not any(v == said.value("plain")
                                                                      for v in given.values()):
                given[key] = said.value("plain")
        return given

    def read(self, key: str, name: str | None, arguments: dict[str, Any] | None = None) -> dict[str, Any] | None:
        """A read's payload, cached per episode under ``key``."""
        if key not in self.cache:
            self.cache[key] = self.attempt(name, arguments or {})
        return self.cache[key]

    # ------------------------------------------------------------------ what the phone says
    def settings(self) -> dict[str, Any]:
        payload = self.read("status", self.tool("device", "status")) or {}
        return payload.get("settings") or {}

    def today(self) -> dt.date:
        # the phone's clock: in the reset context (what the user's assistant knows), else read from the phone
        clock = str((self.session.context or {}).get("now") or self.settings().get("clock", ""))
        try:
            return dt.date.fromisoformat(clock[:10])
        except ValueError:  # no clock to read: the date an earlier turn confirmed for a day it named, if any
            return self.anchored_today() or dt.date(2026, 1, 1)

    def events(self, day: dt.date) -> list[dict[str, Any]] | None:
        payload = self.read(f"events:{day}", self.tool("list", "events"), {"date": day.isoformat()})
        return None if payload is None else sorted(payload.get("events", []), key=lambda e: e.get("start", ""))

    def apps(self) -> list[dict[str, Any]]:
        return (self.read("apps", self.tool("list", "apps")) or {}).get("apps", [])

    def contact(self, who: str) -> dict[str, Any] | None:
        key = re.sub(r"^(?i:my)\s+", "", who).strip()
        payload = self.read(f"contact:{key}", self.tool("search", "contacts"), {"query": key})
        found = (payload or {}).get("contacts", [])
        for column in ("name", "relation"):
            exact = [c for c in found if str(c.get(column, "")).casefold() == key.casefold()]
            if len(exact) == 1:
                return exact[0]
        return found[0] if len(found) == 1 else None

    def app_id(self, name: str) -> str:
        listed = [str(a.get("app")) for a in self.apps()]
        return next((a for a in listed if a.casefold() == name.casefold()), name)

    def holds(self, guard: Guard) -> bool | None:
        """Whether the guard's condition holds on the phone (None: it could not be read)."""
        subject, wanted = guard
        state: bool | None = None
        if subject.concept in SWITCHES:
            value = self.settings().get(subject.concept)
            state = None if value is None else value == "on"
            word = _SWITCH_WORDS[subject.concept]
            if state is not None:
                self.note(f"{word[0]}原本是{'开着' if state else '关着'}的", f"{word[1]} was {'on' if state else 'off'}")
        elif subject.concept == "app" and subject.value("app"):
            app = self.app_id(subject.value("app"))
            rows = [a for a in self.apps() if a.get("app") == app]
            state = bool(rows and rows[0].get("running"))
            said = subject.value("app_said") or app
            self.note(f"{said}{'正在运行' if state else '没有在运行'}", f"{said} was {'running' if state else 'not running'}")
        elif subject.concept == "event":
            found = self.events(resolve_day(subject.value("day"), self.today()))
            state = None if found is None else bool(found)
        elif subject.concept == "weather":
            said = self.weather(subject.value("day"))
            state = None if said is None else "雨" in said
        elif subject.concept == "route" and (subject.value("over") is not None or subject.value("under") is not None):
            route = self.route(subject)
            limit = subject.value("over") if subject.value("over") is not None else subject.value("under")
            state = None if route is None else (route["minutes"] > limit) == (subject.value("over") is not None)
        return None if state is None else state == wanted

    # ------------------------------------------------------------------ the episode
    def run(self) -> None:
        info = self.session.info
        plan = build_plan(str(info.get("query", "")), list(info.get("history") or []), self.lang)
        if plan.ask_for_value:  # a correction that does not say the new value
            plan.apply(parse_reply(self.ask("value"), self.lang))
        if not self.capabilities(plan):
            self.play(plan.frames)
        if not self.session.done:
            answer = ("；" if self.lang == "zh" else "; ").join(dict.fromkeys(self.notes))
            self.session.finish(answer + self.say("。", ".") if answer else
                                self.say("抱歉，我没能完成这个请求。", "Sorry, I could not do that."))

    def play(self, frames: list[Frame]) -> None:
        """Do each frame whose guard holds, in order."""
        for frame in frames:
            if frame.guard is not None and not self.holds(frame.guard):
                continue
            HANDLERS.get(frame.concept or "", _Episode.do_switch)(self, frame)

    def fill(self, frame: Frame, slot: str, keys: tuple[str, ...]) -> None:
        """Ask the user for ``slot`` and put what the reply says into ``frame``."""
        reply = parse_reply(self.ask(slot), self.lang)
        for key in keys:
            if reply.slots.get(key):
                frame.slots[key] = list(reply.slots[key])

    def do_brightness(self, frame: Frame) -> None:
        if frame.value("number") is None:
            self.fill(frame, "level", ("number",))
        level = frame.value("number")
        if level is not None and self.attempt(self.tool("set", "brightness"), {"level": level}) is not None:
            self.note(f"屏幕亮度已调到{level}%", f"screen brightness is now {level}%")

    def do_volume(self, frame: Frame) -> None:
        for slot, key in (("stream", "stream"), ("level", "number")):
            if frame.value(key) is None:
                self.fill(frame, slot, (key,))
        stream, level = frame.value("stream"), frame.value("number")
        if stream and level is not None and self.attempt(self.tool("set", "volume"),
                                                         {"stream": stream, "level": level}) is not None:
            word = _STREAM_WORDS.get(stream, (stream, stream))
            self.note(f"{word[0]}已调到{level}", f"the {word[1]} is now {level}%")

    def do_ringer(self, frame: Frame) -> None:
        mode = frame.value("mode")
        if mode and self.attempt(self.tool("ringer"), {"mode": mode}) is not None:
            word = _MODE_WORDS.get(mode, (mode, mode))
            self.note(f"已切换到{word[0]}模式", f"the ringer is now {word[1]}")

    def do_switch(self, frame: Frame) -> None:
        if frame.concept not in SWITCHES or frame.op not in ("on", "off"):
            return
        on = frame.op == "on"
        if self.attempt(self.tool("set", *frame.concept.split("_")) or self.tool(frame.concept.split("_")[0]),
                        {"on": on}) is not None:
            word = _SWITCH_WORDS[frame.concept]
            self.note(f"{word[0]}已{'打开' if on else '关闭'}", f"{word[1]} is {'on' if on else 'off'} now")

    def do_alarm(self, frame: Frame) -> None:
        if frame.op == "create":
            self.create_alarm(frame)
            return
        alarms = (self.read("alarms", self.tool("list", "alarms")) or {}).get("alarms", [])
        time, label = frame.value("time", first=True), frame.value("quote", first=True)
        found = [a for a in alarms if (time is not None and a.get("time") == time)
                 or (time is None and label is not None and str(a.get("label", "")).casefold() == label.casefold())]
        if len(found) != 1:
            self.note("没有找到这个闹钟", "I could not find that alarm")
            return
        alarm = found[0]
        if frame.op == "shift":
            moved = (dt.datetime.strptime(alarm["time"], "%H:%M") + dt.timedelta(minutes=frame.value("shift") or 0))
            done = self.attempt(self.tool("update", "alarm"), {"alarm_id": alarm["alarm_id"],
                                                               "time": moved.strftime("%H:%M")})
            if done is not None:
                self.note(f"{alarm.get('label', '')}闹钟已改到{moved:%H:%M}", f"the {alarm.get('label', '')} alarm "
                          f"now rings at {moved:%H:%M}")
            return
        if frame.op == "delete":
            done = self.attempt(self.tool("delete", "alarm"), {"alarm_id": alarm["alarm_id"]})
        else:
            done = self.attempt(self.tool("alarm", "enabled"), {"alarm_id": alarm["alarm_id"],
                                                                "enabled": frame.op == "enable"})
        if done is not None:
            zh = {"delete": "删除", "enable": "打开", "disable": "关闭"}[frame.op or "disable"]  # (shift returned)
            en = {"delete": "deleted", "enable": "switched on", "disable": "switched off"}[frame.op or "disable"]
            self.note(f"{alarm['time']}的闹钟（{alarm.get('label', '')}）已{zh}",
                      f"the {alarm['time']} alarm ({alarm.get('label', '')}) is {en}")

    def create_alarm(self, frame: Frame) -> None:
        time = frame.value("time")
        lead = frame.value("lead")
        if time is None and lead is not None:  # so long before the day's first event
            events = self.events(resolve_day(frame.value("day"), self.today())) or []
            if events:
                start = dt.datetime.strptime(events[0]["start"], "%Y-%m-%d %H:%M") - dt.timedelta(minutes=lead)
                time = start.strftime("%H:%M")
                self.note(f"第一个安排“{events[0]['title']}”{events[0]['start'][11:]}开始",
                          f"the first item, \"{events[0]['title']}\", starts at {events[0]['start'][11:]}")
        if time is None and lead is None:
            self.fill(frame, "time", ("time",))
            time = frame.value("time")
        if time is None:
            return
        label = frame.value("quote")
        done = self.attempt(self.tool("create", "alarm"),
                            {"time": time, "label": label, "repeat": frame.value("repeat")})
        if done is not None:
            self.note(f"已设置{time}的闹钟" + (f"（{label}）" if label else ""),
                      f"alarm set for {time}" + (f" ({label})" if label else ""))

    def do_event(self, frame: Frame) -> None:
        day = resolve_day(frame.value("day"), self.today())
        if frame.op == "list":
            events = self.events(day)
            if events is None:
                return
            items = [f"{e['start'][11:]} {e['title']}" for e in events]
            self.note(f"{day.month}月{day.day}日有{len(items)}个安排：" + "，".join(items) if items else
                      f"{day.month}月{day.day}日没有安排",
                      f"{len(items)} item(s) on {day.isoformat()}: " + ", ".join(items) if items else
                      f"nothing on {day.isoformat()}")
            return
        if frame.op != "create":
            return
        if frame.value("time", first=True) is None:
            self.fill(frame, "span", ("time", "minutes"))
        times, minutes = frame.slots.get("time", []), frame.value("minutes")
        if not times:
            return
        start = dt.datetime.combine(day, dt.time.fromisoformat(times[0]))
        if len(times) > 1:
            end = dt.datetime.combine(day, dt.time.fromisoformat(times[1]))
        else:
            end = start + dt.timedelta(minutes=minutes or 60)
        title = frame.value("quote", first=True) or self.say("日程", "Event")
        arguments = {"title": title, "start": start.strftime("%Y-%m-%d %H:%M"), "end": end.strftime("%Y-%m-%d %H:%M"),
                     "location": frame.value("location")}
        if self.attempt(self.tool("create", "event"), arguments) is not None:
            self.note(f"已添加日程“{title}”（{arguments['start']}–{arguments['end'][11:]}）",
                      f"added \"{title}\" ({arguments['start']}–{arguments['end'][11:]})")

    def do_app(self, frame: Frame) -> None:
        app = frame.value("app")
        if not app or frame.op not in ("open", "close"):
            return
        said = frame.value("app_said") or app
        if self.attempt(self.tool(frame.op, "app"), {"app": self.app_id(app)}) is not None:
            self.note(f"已{'打开' if frame.op == 'open' else '关闭'}{said}",
                      f"{'opened' if frame.op == 'open' else 'closed'} {said}")

    # ------------------------------------------------------------------ maps & travel
    def here(self) -> dict[str, Any]:
        return self.read("here", self.tool("current", "location")) or {}

    def destination(self, frame: Frame, saved: bool = True) -> tuple[str, str] | None:
        """``(location, name)`` of the frame's place: a saved place by its label (``saved``), else the first
        search hit; asks where to when the request names none."""
        if not frame.value("place") and not frame.value("label"):
            self.fill(frame, "place", ("place", "label", "travel", "preferences"))
        label, place = frame.value("label"), frame.value("place")
        if label and saved:
            places = (self.read("saved", self.tool("list", "saved", "places")) or {}).get("places", [])
            found = [p["location"] for p in places if p.get("label") == label]
            if found:
                return found[0], place or label
        if not place:
            return None
        result = (self.read(f"place:{place}", self.tool("search", "place"), {"keywords": place}) or {}).get("result")
        location = result.get("location") if isinstance(result, dict) else None
        return (str(location), place) if location else None

    def route_options(self, frame: Frame) -> dict[str, Any]:
        travel = frame.value("travel") or "driving"
        preferences = frame.value("preferences") if travel == "driving" else None
        return {"mode": travel, "preferences": preferences}

    def route(self, frame: Frame) -> dict[str, Any] | None:
        """The first option of the route to the frame's place (``distance_m``, ``duration_s``), noted."""
        target, origin = self.destination(frame), self.here().get("location")
        if target is None or origin is None:
            return None
        options = self.route_options(frame)
        payload = self.read(f"route:{target[0]}:{options['mode']}", self.tool("maps", "route"),
                            {"origin": origin, "destination": target[0], **options}) or {}
        result: dict[str, Any] = payload["result"] if isinstance(payload.get("result"), dict) else {}
        first = (result.get("paths") or result.get("transits") or [None])[0]
        if not isinstance(first, dict):
            return None
        minutes = int(float(first.get("duration_s", 0)) / 60 + 0.5)
        self.note(f"{target[1]}全程约{_distance(first.get('distance_m'), 'zh')}，大约需要{minutes}分钟",
                  f"{target[1]} is {_distance(first.get('distance_m'), 'en')} away, about {minutes} min")
        return {**first, "minutes": minutes}

    def do_route(self, frame: Frame) -> None:
        self.route(frame)

    def do_nav(self, frame: Frame) -> None:
        target = self.destination(frame)
        done = None if target is None else self.attempt(self.tool("start", "navigation"),
                                                        {"destination": target[0], **self.route_options(frame)})
        if target is not None and done is not None:
            eta = str(done.get("eta") or "")[11:]
            self.note(f"已开始导航去{target[1]}，全程{_distance(done.get('distance_m'), 'zh')}，预计{eta}到达",
                      f"navigating to {target[1]}: {_distance(done.get('distance_m'), 'en')}, arriving around {eta}")

    def do_ride(self, frame: Frame) -> None:
        target = self.destination(frame)
        done = None if target is None else self.attempt(self.tool("book", "ride"),
                                                        {"destination": target[0], "ride_type": frame.value("ride")})
        if target is not None and done is not None:
            self.note(f"已叫车去{target[1]}，预估{done.get('fare_estimate')}元",
                      f"booked a ride to {target[1]}, about {done.get('fare_estimate')} yuan")

    def do_departure(self, frame: Frame) -> None:
        target, time = self.destination(frame), frame.value("time")
        if target is None or time is None:
            return
        arrive = f"{resolve_day(frame.value('day'), self.today()).isoformat()} {time}"
        done = self.attempt(self.tool("departure", "reminder"), {"destination": target[0], "arrive_by": arrive,
                                                                 **self.route_options(frame)})
        if done is not None:
            leave = str(done.get("depart_at") or "")[11:]
            self.note(f"要在{arrive}到{target[1]}，需要{leave}出发，到时会提醒你",
                      f"to reach {target[1]} by {arrive}, leave at {leave}; I'll remind you")

    def do_place(self, frame: Frame) -> None:
        target, label = self.destination(frame, saved=False), frame.value("label")
        if target is not None and label and self.attempt(self.tool("save", "place"),
                                                         {"label": label, "location": target[0]}) is not None:
            self.note(f"已把{LABEL_WORDS.get(label, label)}设为{target[1]}", f"saved {target[1]} as {label}")

    def do_eta(self, frame: Frame) -> None:
        who = frame.value("who")
        person = self.contact(who) if who else None
        done = None if person is None else self.attempt(self.tool("share", "eta"),
                                                        {"contact_id": person.get("contact_id")})
        if person is not None and done is not None:
            self.note(f"已把到达时间发给{person.get('name')}（{done.get('text', '')}）",
                      f"texted {person.get('name')} the ETA ({done.get('text', '')})")

    def do_traffic(self, frame: Frame) -> None:
        road = frame.value("place")
        payload = self.attempt(self.tool("maps", "traffic"), {"road": road}) if road else None
        result = (payload or {}).get("result")
        if isinstance(result, dict) and result.get("state"):
            self.note(f"{road}现在{result['state']}", f"{road} is {result['state']} right now")

    def weather(self, day_value: Any) -> str | None:
        """The weather condition of a day (today: now, with the temperature noted), or None."""
        city = self.here().get("city")
        day = resolve_day(day_value, self.today())
        forecast = day != self.today()
        payload = self.read(f"weather:{forecast}", self.tool("maps", "weather"),
                            {"city": city, "forecast": forecast or None}) or {}
        text = str((payload.get("result") or {}).get("weather", "")) if isinstance(payload.get("result"), dict) else ""
        if not forecast:
            now = re.search(r"当前天气([^，,]+)[，,]气温(-?\d+)℃", text)
            if now:
                self.note(f"{city}现在{now.group(1)}，气温{now.group(2)}℃", f"{city} now: {now.group(1)}, {now.group(2)}℃")
            return now.group(1) if now else None
        said = dict(re.findall(r"(\d{4}-\d\d-\d\d)（周.）：([^，,\n]+)", text)).get(day.isoformat())
        if said:
            self.note(f"{day.month}月{day.day}日{said}", f"{day.isoformat()}: {said}")
        return said

    def do_weather(self, frame: Frame) -> None:
        self.weather(frame.value("day"))

    def do_contact(self, frame: Frame) -> None:
        who = frame.value("who")
        person = self.contact(who) if who else None
        if person is None:
            self.note("没有找到这个联系人", "I could not find that contact")
            return
        name, contact_id = person.get("name", who), person.get("contact_id")
        if frame.op == "number":
            self.note(f"{name}的手机号是{person.get('phone')}", f"{name}'s number is {person.get('phone')}")
        elif frame.op == "read":
            payload = self.read(f"messages:{contact_id}", self.tool("list", "messages"), {"contact_id": contact_id})
            incoming = [m for m in (payload or {}).get("messages", []) if m.get("direction") == "in"]
            if incoming:
                self.note(f"{name}最近发来：“{incoming[-1]['text']}”", f"{name} last wrote: \"{incoming[-1]['text']}\"")
        elif frame.op == "call":
            if self.attempt(self.tool("call", "contact"), {"contact_id": contact_id}) is not None:
                self.note(f"正在呼叫{name}", f"calling {name}")
        elif frame.op == "text":
            if frame.value("quote") is None and frame.value("plain") is None:
                self.fill(frame, "text", ("quote", "plain"))
            text = frame.value("quote") or frame.value("plain")
            if text and self.attempt(self.tool("send", "message"), {"contact_id": contact_id, "text": text}):
                self.note(f"已给{name}发送短信：{text}", f"texted {name}: {text}")


# The handler of each frame concept the parser names; any other concept is a switch.
HANDLERS: dict[str, Callable[[_Episode, Frame], None]] = {
    "brightness": _Episode.do_brightness,
    "volume": _Episode.do_volume,
    "ringer": _Episode.do_ringer,
    "switch": _Episode.do_switch,
    "alarm": _Episode.do_alarm,
    "event": _Episode.do_event,
    "app": _Episode.do_app,
    "route": _Episode.do_route,
    "nav": _Episode.do_nav,
    "ride": _Episode.do_ride,
    "departure": _Episode.do_departure,
    "place": _Episode.do_place,
    "eta": _Episode.do_eta,
    "traffic": _Episode.do_traffic,
    "weather": _Episode.do_weather,
    "contact": _Episode.do_contact,
    "timer": _Episode.do_timer,
    "refresh": _Episode.do_refresh,
}
