"""The capability dimensions of :class:`~mobility_agents.baselines.mobilepa.rule.PhoneRuleAgent`: memory, skills,
sub-agents.

:class:`CapabilityMixin` is the part of the rule agent's episode that uses the capability tools a task offers,
from observations only (the request, the earlier turns, the offered tools' schemas and each call's feedback):

* **sub-agents** (``route_to_*_agent`` offered): the entry tool is chosen by the request's words (a train or
  flight → ticket, 外卖 → food, a hotel, a film, a ride, an operation inside a named app → the GUI agent), and
  its declared payload is filled from the request (places, dates, times, counts; a correction's values over
  the earlier turn's; a business trip's city and dates from the calendar); a required field the request leaves
  out is asked for before the handoff;
* **skills** (``load_skill`` offered): the offered skill whose name and description share the most words with the
  request is loaded (the schema lists them), the tools it adds are taken from the step's ``info["tools"]``, and
  its routine is played: the request's frames (bedtime, battery rescue — under a battery condition the branch
  the level decides), or the skill's own steps (focus mode, storage cleanup, meeting departure, drive mode);
* **memory** (``search_memory`` offered): the kinds of record the request leaves to memory (a home, a wake-up
  time, a boss's name, the usual way of travelling…) are searched with the kind's words, the returned records
  are sorted by kind and date (the newest holds unless the request says "以前 / used to"), their values read
  from their text, and the frames filled with them; "I moved / remember it as “…”" updates the newest record
  of the dictated text's kind, "forget …" deletes the record the request names.

It never reads the task, its gold or the state: only what :class:`~mobility_agents.base.EpisodeSession` shows.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any, Callable

from ...base import EpisodeSession
from .parse import APP_NAMES, Frame, Plan, build_plan, extract, parse, resolve_day, travel_words

Json = dict[str, Any]
_LOAD = "load_skill"
_OLDER = r"以前|原来的|之前的|used to|like before|my old\b|previous"
_HABIT = r"平时|平常|习惯|常用|常坐|常去|老规矩|老习惯|一般|usual|normally|the way I|like I like|I keep"
_COUNTS = {"一": 1, "两": 2, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "one": 1, "a": 1, "an": 1, "two": 2,
           "three": 3, "four": 4, "five": 5, "six": 6}
_COUNT = r"(\d+|[一两二三四五六]|one|two|three|four|five|six)"


def _count(word: str | None) -> int | None:
    if word is None:
        return None
    return int(word) if word.isdigit() else _COUNTS.get(word.lower())


# ====================================================================== memory records by kind
#: Kinds of record in the order a record's text is tested (the first pattern it matches is its kind).
_RECORD_KINDS: tuple[tuple[str, str], ...] = (
    ("birthday", r"生日|birthday"), ("allergy", r"过敏|allergic"), ("plate", r"车牌|plate"),
    ("dnd", r"免打扰|do not disturb"), ("night_brightness", r"亮度|brightness"),
    ("music", r"听歌|\bmusic\b"), ("travel_mode", r"出门我更喜欢|出门都|get around"),
    ("commute", r"出门上班|出门，|leave for work"), ("gym", r"健身房|gym is at|switched gyms"),
    ("gym_days", r"去健身|go to the gym on"), ("wake", r"起床|\bget up\b"), ("bedtime", r"睡|\bto bed\b"),
    ("driving", r"开车的时候|开车我|when I drive|when driving"), ("ride", r"打车|take a ride"),
    ("home", r"住在|\blive at\b"), ("work", r"上班|\bwork at\b"), ("school", r"上学|school|attends"),
    ("person", r"叫|name is"))
#: What to search for each kind ({role}: the person's role, as the request says it).
_QUERIES = {"home": ("家庭住址 住在哪里", "home address where I live"),
            "work": ("上班的地方", "work at job"),
            "school": ("孩子的学校 上学", "kid school"), "gym": ("健身房在哪", "my gym place"),
            "wake": ("起床时间", "wake up time get up"), "bedtime": ("睡觉时间", "bedtime go to bed"),
            "gym_days": ("去健身的时间 哪天健身", "when do I go to the gym days"),
            "music": ("听歌用的app 音乐软件", "music app listen"),
            "night_brightness": ("晚上屏幕亮度", "screen brightness at night"),
            "dnd": ("免打扰时间", "do not disturb hours"),
            "travel_mode": ("出门我更喜欢 出门都", "prefer to get around travel"),
            "driving": ("开车的习惯", "when I drive prefer driving"),
            "ride": ("打车叫什么车 叫车偏好", "take a ride book car"),
            "allergy": ("过敏", "allergic allergy"), "person": ("{role}叫什么 名字", "my {role}'s name")}
_PLACE_NAME = {"home": (r"住在(.+)$", r"live at (.+?)\.?$"), "work": (r"(?:现在在|我在)(.+?)上班", r"work at (.+?)\.?$"),
               "school": (r"在(.+?)上学", r"(?:school at|attends) (.+?)\.?$"),
               "gym": (r"(?:健身房在|现在去)(.+)$", r"(?:gym is at|one at) (.+?)\.?$")}
_MUSIC = (("QQMusic", r"QQ\s*(?:音乐|music)"), ("NetEaseMusic", r"网易云|netease"), ("Music", r"音乐|music"))
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


def record_kind(content: str) -> str | None:
    """The kind of a memory record by its text (:data:`_RECORD_KINDS`), None when none fits."""
    return next((kind for kind, pattern in _RECORD_KINDS if re.search(pattern, content, re.I)), None)


def _times(text: str) -> list[str]:
    return [value for kind, value, _ in extract(text)[1] if kind == "T"]


def record_value(kind: str, content: str) -> dict[str, Any]:
    """The values a record of ``kind`` states: ``place``, ``time`` (``times``), ``mode``, ``preference``,
    ``ride``, ``app``, ``level``, ``days`` (weekday numbers, Monday 0), ``role`` and ``name``."""
    out: dict[str, Any] = {}
    if kind in _PLACE_NAME:
        for pattern in _PLACE_NAME[kind]:
            m = re.search(pattern, content.strip(), re.I)
            if m:
                out["place"] = m.group(1).strip().rstrip("。.")
                break
    times = _times(content)
    if times:
        out["time"], out["times"] = times[0], times
    out.update(travel_words(content))
    app = next((app for app, pattern in _MUSIC if re.search(pattern, content, re.I)), None)
    if app is not None:
        out["app"] = app
    level = re.search(r"(\d+)\s*%", content)
    if level:
        out["level"] = int(level.group(1))
    days = [("一二三四五六日".index(d)) for d in re.findall(r"周([一二三四五六日])", content)]
    days += [i for i, day in enumerate(_WEEKDAYS) if re.search(rf"\b{day}", content, re.I)]
    if days:
        out["days"] = days
    person = re.search(r"^我(.+?)叫(.+?)。?$|^my (.+?)'s name is (.+?)\.?$", content.strip(), re.I)
    if person:
        out["role"], out["name"] = (person.group(1), person.group(2)) if person.group(1) else \
            (person.group(3), person.group(4))
    return out


# ====================================================================== sub-agents
#: Entry tools and the words that say a request is for them, tried in this order (the GUI agent: an app named).
_AGENT_WORDS = (("route_to_food_agent", r"外卖|送餐|\bfor delivery\b|\bdeliver"),
                ("route_to_hotel_agent", r"酒店|宾馆|民宿|住.晚|\bhotel"),
                ("route_to_movie_agent", r"电影|《|影院|那场|\bmovie|\bcinema|\bfilm|\bshowing\b|\btickets? for\b"),
                ("route_to_ticket_agent", r"高铁|火车票|动车|机票|航班|车票|大巴|\btrain\b|\bflights?\b|\bfly\b|\bcoach\b"),
                ("route_to_ride_agent", r"约.{0,2}辆|叫.{0,2}车|打车|用车|\bride\b|\btaxi\b|\bcab\b"))
_ASK_FIELD = {"date": ("哪天？", "Which day?"), "check_in": ("哪天入住？", "When do you check in?"),
              "check_out": ("哪天退房？", "When do you check out?"), "address": ("送到哪里？", "Where should it go?"),
              "pickup": ("从哪里上车？", "Where should it pick you up?"), "destination": ("去哪里？", "Where to?"),
              "origin": ("从哪里出发？", "Where from?"), "city": ("哪个城市？", "Which city?"),
              "items": ("要点什么？", "What would you like?"), "title": ("看哪部电影？", "Which film?"),
              "kind": ("火车、飞机还是大巴？", "Train, flight or coach?")}
_DAY_FIELDS = ("date", "check_in", "check_out")
_APP_WORDS = {**APP_NAMES, **{app: app for app in APP_NAMES.values()}, "B站": "Bilibili", "哔哩哔哩": "Bilibili"}


def _restore(text: str, values: list[tuple[str, Any, str]]) -> str:
    """A skeleton's span with its placeholders put back as they were said."""
    return re.sub(r"⟦[A-Z](\d+)⟧", lambda m: values[int(m.group(1))][2], text).strip()


def _grab(skeleton: str, values: list[tuple[str, Any, str]], *patterns: str) -> str | None:
    """The named group ``v`` of the first pattern that matches, placeholders put back, or None."""
    for pattern in patterns:
        m = re.search(pattern, skeleton, re.I)
        if m and m.group("v") and m.group("v").strip():
            found = _restore(m.group("v"), values).strip(" ，,。.")
            if found and not re.fullmatch(r"where it is|那儿|那里|当地|it|there", found, re.I):
                return found
    return None


_END = r"(?=\s+(?:on|the|tomorrow|today|that|for|at|from)\b|\s*⟦[DTQM]|[.,;!?，。；！？]|$)"
_NAME = r"(?:[^⟦，。；,;!?]|⟦[NP]\d+⟧)+?"  # a name: a lifted number or place inside it is part of it


def read_payload(agent: str, text: str, today: dt.date) -> dict[str, Any]:
    """The payload fields a text (a request, a reply) gives for ``agent``'s handoff."""
    skeleton, values = extract(text)
    days = [resolve_day(v, today).isoformat() for k, v, _ in values if k == "D"]
    clocks = [v for k, v, _ in values if k == "T"]
    out: dict[str, Any] = {}
    if agent == "route_to_ticket_agent":
        out["kind"] = "flight" if re.search(r"机票|航班|飞机|\bflights?\b|\bfly\b|\bplane\b", skeleton, re.I) else \
            "coach" if re.search(r"大巴|客车|\bcoach\b", skeleton, re.I) else \
            "train" if re.search(r"高铁|火车|动车|\btrain", skeleton, re.I) else None
        out["origin"] = _grab(skeleton, values, r"从(?P<v>[^到，。；⟦]+?)(?:到|出发)", rf"\bfrom (?P<v>{_NAME})(?=\s+to\b)",
                              rf"\bfrom (?P<v>{_NAME}){_END}")
        out["destination"] = _grab(skeleton, values, r"到(?P<v>[^的，。；⟦]+?)(?:的|$|[，。；])",
                                   rf"\bto (?P<v>(?!where\b){_NAME}){_END}")
        count = re.search(rf"{_COUNT}\s*张|\b{_COUNT}\s+(?:train\s+)?(?:tickets|flights|seats)\b", skeleton, re.I)
        passengers = _count(next((g for g in count.groups() if g), None)) if count else None
        out["passengers"] = passengers if passengers and passengers > 1 else None
        out["date"] = days[0] if days else None
    elif agent == "route_to_hotel_agent":
        out["city"] = _grab(skeleton, values, r"在(?P<v>[^，。；⟦在]+?)订", rf"\bhotel in (?P<v>.+?){_END}")
        out["check_in"] = days[0] if days else None
        nights = re.search(rf"住{_COUNT}晚|\b{_COUNT}\s+nights?\b", skeleton, re.I)
        out["nights"] = _count(next((g for g in nights.groups() if g), None)) if nights else None
    elif agent == "route_to_movie_agent":
        title = re.search(r"《(.+?)》", text)
        out["title"] = title.group(1) if title else _grab(
            skeleton, values, rf"\bshowing of (?P<v>{_NAME})(?=[,;.]|\s*⟦[DTQM]|$)",
            rf"\btickets? for (?P<v>{_NAME})(?=\s+at\b|\s*⟦[DTQM]|[,.;]|$)")
        out["date"] = days[0] if days else None
        out["showtime"] = clocks[0] if clocks else None
        seats = re.search(rf"{_COUNT}张|\b{_COUNT}\s+(?:tickets?|seats?)\b", skeleton, re.I)
        out["seats"] = _count(next((g for g in seats.groups() if g), None)) if seats else None
    elif agent == "route_to_food_agent":
        out["items"] = _grab(skeleton, values, r"点(?P<v>.+?)外卖", r"\border (?P<v>.+?) for delivery",
                             r"^(?:帮我)?点(?P<v>[^，。]+)")
        out["address"] = _grab(skeleton, values, r"送到(?P<v>[^，。；]+)", r"\bdelivery to (?P<v>.+?)(?=[.!?;]?$)",
                               r"^(?:to)\s+(?P<v>.+?)(?=[.!?;]?$)")
    elif agent == "route_to_ride_agent":
        out["pickup"] = _grab(skeleton, values, r"从(?P<v>[^到，。；⟦]+?)(?:到|上车|$)",
                              rf"\bfrom (?P<v>{_NAME})(?=\s+to\b|[.!?;]?$)")
        out["destination"] = _grab(skeleton, values, r"到(?P<v>[^，。；⟦]+?)(?:$|[，。；])",
                                   rf"\bto (?P<v>(?!where\b){_NAME})(?=[.!?;]?$)")
        if clocks:
            out["time"] = f"{days[0] if days else today.isoformat()} {clocks[0]}"
    return {k: v for k, v in out.items() if v is not None}


def choose_agent(text: str, tools: dict[str, Any], frames: list[Frame]) -> tuple[str | None, str | None]:
    """The offered entry tool a request's words name, and the app it names (for the GUI agent): the first of
    :data:`_AGENT_WORDS` that fits (the ride agent only for a ride said for a day or a time when ``book_ride`` is
    offered too), else the GUI agent when an app is named and no frame opens or closes an app."""
    unquoted = re.sub(r"“[^”]*”|\"[^\"]*\"", "", text)
    app = next((_APP_WORDS[w] for w in sorted(_APP_WORDS, key=len, reverse=True)
                if re.search(rf"(?<![A-Za-z]){re.escape(w)}(?![A-Za-z])", unquoted, re.I)), None)
    scheduled = any(kind in "DT" for kind, _, _ in extract(text)[1])
    for name, pattern in _AGENT_WORDS:
        if name in tools and re.search(pattern, text, re.I) and \
                (name != "route_to_ride_agent" or "book_ride" not in tools or scheduled):
            return name, app
    if app is not None and "route_to_gui_agent" in tools and not any(f.concept == "app" for f in frames):
        return "route_to_gui_agent", app
    return None, app


def _reply_value(field: str, reply: str, today: dt.date) -> Any:
    """A value for ``field`` from the user's reply (a day for a date field, else the reply's words)."""
    skeleton, values = extract(reply)
    if field in _DAY_FIELDS:
        days = [resolve_day(v, today).isoformat() for k, v, _ in values if k == "D"]
        return days[0] if days else None
    cleaned = re.sub(r"^(?:从|送到|到|去|就|from|to|at)\s*|(?:吧|上车|入住|出发)?[。.!！]*$", "", reply.strip(), flags=re.I)
    return cleaned.strip() or None


# ====================================================================== skills
_STOP = frozenset("a an the my me i to of and on for in at it is please run just then with".split())


def _words(text: str) -> set[str]:
    """Words of a text as compared: Chinese character pairs, English words (lower-cased, a plural's s off)."""
    text = re.sub(r"“[^”]*”|\"[^\"]*\"", " ", text).casefold()
    out = {run[i:i + 2] for run in re.findall(r"[\u4e00-\u9fff]+", text) for i in range(len(run) - 1)}
    out |= {w.rstrip("s") if len(w) > 3 else w for w in re.findall(r"[a-z]+", text) if w not in _STOP}
    return out


def offered_skills(tools: dict[str, dict[str, Any]]) -> dict[str, str]:
    """The skills the loader's schema offers: id → its name and description (or the id's words)."""
    function = tools.get(_LOAD) or {}
    offered = str(function.get("description", "")).partition("offered:")[2]
    listed: dict[str, str] = {}
    for item in offered.split("; "):
        m = re.match(r"\s*([a-z][a-z0-9_]*) \((.*)\)\.?\s*$", item)
        if m:
            listed[m.group(1)] = m.group(2)
    enum = ((function.get("parameters") or {}).get("properties") or {}).get("skill_id", {}).get("enum") or []
    ids = list(enum) or list(listed)
    return {skill_id: listed.get(skill_id, "") + " " + skill_id.replace("_", " ") for skill_id in ids}


def choose_skill(tools: dict[str, dict[str, Any]], text: str) -> str | None:
    """The offered skill sharing the most words with ``text`` (none shared: None)."""
    said = _words(text)
    scored = sorted((-len(said & _words(about)), skill_id) for skill_id, about in offered_skills(tools).items())
    return scored[0][1] if scored and scored[0][0] < 0 else None


class CapabilityMixin:
    """The capability-tool part of the rule agent's episode (module docstring). The episode provides the
    attributes and the methods declared below."""

    session: EpisodeSession
    lang: str
    tools: dict[str, dict[str, Any]]

    # ------------------------------------------------------------------ provided by the episode
    def say(self, zh: str, en: str) -> str: raise NotImplementedError
    def note(self, zh: str, en: str) -> None: raise NotImplementedError
    def tool(self, *words: str) -> str | None: raise NotImplementedError
    def attempt(self, name: str | None, arguments: Json, depth: int = 0) -> Json | None: raise NotImplementedError
    def read(self, key: str, name: str | None, arguments: Json | None = None) -> Json | None: raise NotImplementedError
    def ask(self, slot: str, question: str | None = None) -> str: raise NotImplementedError
    def settings(self) -> dict[str, Any]: raise NotImplementedError
    def today(self) -> dt.date: raise NotImplementedError
    def events(self, day: dt.date) -> list[dict[str, Any]] | None: raise NotImplementedError
    def app_id(self, name: str) -> str: raise NotImplementedError
    def play(self, frames: list[Frame]) -> None: raise NotImplementedError

    # ------------------------------------------------------------------ the request
    @property
    def query(self) -> str:
        return str(self.session.info.get("query", ""))

    def earlier(self) -> list[str]:
        """The earlier turns' texts (user and assistant), oldest first."""
        return [str(turn.get("content", "")) for turn in self.session.info.get("history") or []]

    def said(self) -> str:
        """The earlier user turns and the request, as one text (later values come last)."""
        users = [str(t.get("content", "")) for t in self.session.info.get("history") or [] if t.get("role") == "user"]
        return "\n".join([*users, self.query])

    def anchored_today(self) -> dt.date | None:
        """Today as the earlier turns pin it down: a user turn that names a day relative to today ("明天",
        "tomorrow") answered with that day's date ("2026-03-19…"); None when no turn does."""
        turns = self.session.info.get("history") or []
        for said, answer in zip(turns, turns[1:]):
            dates = re.findall(r"\d{4}-\d\d-\d\d", str(answer.get("content", "")))
            days = [v for k, v, _ in extract(str(said.get("content", "")))[1] if k == "D"]
            if said.get("role") == "user" and dates and days and days[0][0] == "rel":
                try:
                    return dt.date.fromisoformat(dates[0]) - dt.timedelta(days=days[0][1])
                except ValueError:
                    continue
        return None

    def capabilities(self, plan: Plan) -> bool:
        """Use the capability tools the request needs; True when that was the whole request."""
        if any(name.startswith("route_to_") for name in self.tools) and self.delegate(plan):
            return True
        if _LOAD in self.tools and self.use_skill(plan):
            return True
        return "search_memory" in self.tools and self.use_memory(plan)

    # ------------------------------------------------------------------ sub-agents
    def delegate(self, plan: Plan) -> bool:
        """Hand the request to the sub-agent its words name, with its payload filled; False when none fits."""
        agent, app = choose_agent(self.said(), self.tools, plan.frames)
        if agent is None:
            return False
        if agent == "route_to_gui_agent":
            instruction = re.sub(r"^(?:请|麻烦)?(?:帮我|帮忙)|[,，]?\s*please[.!]?$|[。！!.]$", "", self.query.strip(),
                                 flags=re.I).strip()
            payload: dict[str, Any] = {"app": self.app_id(app or ""), "instruction": instruction}
        else:
            payload = self.payload(agent)
        schema = self.tools[agent].get("parameters") or {}
        for field in schema.get("required", []):
            if payload.get(field) is None:
                zh, en = _ASK_FIELD.get(field, (f"请告诉我{field}", f"What {field.replace('_', ' ')}?"))
                value = _reply_value(field, self.ask("value", self.say(zh, en)), self.today())
                if value is not None:
                    payload[field] = value
        if "nights" in payload:
            nights = payload.pop("nights")
            if payload.get("check_in") and nights and not payload.get("check_out"):
                check_out = dt.date.fromisoformat(payload["check_in"]) + dt.timedelta(days=nights)
                payload["check_out"] = check_out.isoformat()
        done = self.attempt(agent, payload)
        if done is not None:
            shown = "，".join(f"{k}={v}" for k, v in payload.items()) if self.lang == "zh" else \
                ", ".join(f"{k}={v}" for k, v in payload.items())
            self.note(f"已转交{agent}（{shown}）", f"handed to {agent} ({shown})")
        return True

    def payload(self, agent: str) -> dict[str, Any]:
        """The payload the request gives (a correction's values over the earlier user turn's), with what the
        calendar or the request's condition decides."""
        today = self.today()
        users = [str(t.get("content", "")) for t in self.session.info.get("history") or [] if t.get("role") == "user"]
        payload: dict[str, Any] = {}
        for text in [*users[-1:], self.query]:
            payload.update(read_payload(agent, text, today))
        more = re.search(rf"多住{_COUNT}晚|\b{_COUNT} more nights?\b", self.query, re.I)
        if more and users:
            earlier = read_payload(agent, users[-1], today).get("nights") or 0
            payload["nights"] = earlier + (_count(next(g for g in more.groups() if g)) or 0)
        values = extract(self.query)[1]
        days = [resolve_day(v, today) for k, v, _ in values if k == "D"]
        if re.search(r"日历|日程|calendar", self.query, re.I) and days:  # the trip in the calendar
            trips = sorted((not re.search(r"出差|旅行|trip|travel", str(e.get("title")), re.I), e.get("start", ""), i)
                           for i, e in enumerate(self.events(days[0]) or []) if e.get("location"))
            if trips:
                trip = (self.events(days[0]) or [])[trips[0][2]]
                if agent == "route_to_hotel_agent":
                    payload.update(city=trip["location"], check_in=trip["start"][:10], check_out=trip["end"][:10])
                    payload.pop("nights", None)
                elif agent == "route_to_ticket_agent":
                    payload.update(destination=trip["location"], date=trip["start"][:10])
        clocks = [v for k, v, _ in values if k == "T"]
        if len(clocks) >= 2 and re.search(r"安排|plans|busy|free", self.query, re.I) and days:
            busy = any(str(e.get("end", ""))[11:] > "18:00" for e in self.events(days[0]) or [])
            payload["showtime" if agent == "route_to_movie_agent" else "time"] = clocks[1] if busy else clocks[0]
        return payload

    # ------------------------------------------------------------------ skills
    def refresh_tools(self) -> None:
        """The offered tools as the last step's info shows them (a load adds the skill's)."""
        self.tools = {t["function"]["name"]: t["function"] for t in self.session.info.get("tools", [])
                      if isinstance(t, dict) and "function" in t}

    def use_skill(self, plan: Plan) -> bool:
        """Load the skill the request names and play its routine; True when the routine was played here."""
        skill = choose_skill(self.tools, self.said())
        if skill is None:
            return False
        card = self.attempt(_LOAD, {"skill_id": skill})
        self.refresh_tools()
        if card is None:
            return False
        self.note(f"已加载技能{card.get('name', skill)}", f"loaded the {card.get('name', skill)} skill")
        routine = ROUTINES.get(skill)
        if routine is None:
            return False
        routine(self, plan)
        return True

    def skill_focus_mode(self, plan: Plan) -> None:
        """Do-not-disturb on, the ringer as said (silent unless said), a timer of the minutes said."""
        frames, values = parse(self.said(), self.lang)[0], extract(self.said())[1]
        mode = next((f.value("mode") for f in reversed(frames) if f.value("mode")), None) or "silent"
        minutes = [v for k, v, _ in values if k == "M"]
        labels = [v for k, v, _ in values if k == "Q"]
        todo = [Frame("do_not_disturb", "on"), Frame("ringer", "set", {"mode": [mode]})]
        if minutes:
            todo.append(Frame("timer", "start", {"minutes": minutes[-1:], "quote": labels[-1:]}))
        self.play(todo)

    def skill_battery_rescue(self, plan: Plan) -> None:
        """The rescue's frames; under "below N %" the branch the battery level decides."""
        limit = re.search(r"(?:低于|少于|不到|below|under)\s*(\d+)\s*%", self.query, re.I)
        status = self.read("battery", self.tool("battery", "status")) or {}
        if limit is None:
            self.play(plan.frames)
            return
        level = status.get("level")
        if level is None:
            return
        low = int(level) < int(limit.group(1))
        self.note(f"电量{level}%", f"the battery is at {level}%")
        inner = re.search(r"[（(](.+?)[）)]", self.query)
        other = re.split(r"不低的话|否则|不然|otherwise", self.query, flags=re.I)
        text = (inner.group(1) if inner else other[0]) if low else (other[-1] if len(other) > 1 else "")
        self.play(build_plan(text, [], self.lang).frames)

    def skill_storage_cleanup(self, plan: Plan) -> None:
        """The app with the largest cache cleared, then the trash emptied."""
        usage = self.attempt(self.tool("storage", "usage"), {}) or {}
        apps = [a for a in usage.get("largest_apps", []) if a.get("cache_mb")]
        if apps:
            app = max(apps, key=lambda a: a["cache_mb"])["app"]
            if self.attempt(self.tool("clear", "cache"), {"app": app}) is not None:
                self.note(f"已清理{app}的缓存", f"cleared {app}'s cache")
        if re.search(r"回收站|垃圾|trash|bin", self.query, re.I):
            self.attempt(self.tool("list", "files"), {"trash": True})
            if self.attempt(self.tool("empty", "trash"), {}) is not None:
                self.note("回收站已清空", "the trash is empty")

    def skill_meeting_departure(self, plan: Plan) -> None:
        """The event the request names (its title, or the day's first with a place) found on the map, and a
        departure reminder to arrive by its start."""
        skeleton, values = extract(self.query)
        days = [v for k, v, _ in values if k == "D"]
        titles = [v for k, v, _ in values if k == "Q"]
        day = resolve_day(days[0] if days else ("rel", 1), self.today())
        events = [e for e in self.events(day) or [] if e.get("location")]
        chosen = next((e for e in events if e.get("title") in titles), events[0] if events else None)
        if chosen is None:
            self.note("没有找到这个日程", "I could not find that event")
            return
        found = self.read(f"place:{chosen['location']}", self.tool("search", "place"), {"keywords": chosen["location"]})
        result = (found or {}).get("result")
        if not isinstance(result, dict) or not result.get("location"):
            return
        frames = parse(self.query, self.lang)[0]
        travel = next((f.value("travel") for f in frames if f.value("travel")), None) or "driving"
        done = self.attempt(self.tool("departure", "reminder"), {"destination": result["location"],
                                                                 "arrive_by": chosen["start"], "mode": travel})
        if done is not None:
            leave = str(done.get("depart_at") or "")[11:]
            self.note(f"{chosen['title']}在{chosen['location']}，{chosen['start'][11:]}开始；需要{leave}出发，到时提醒你",
                      f"{chosen['title']} is at {chosen['location']} at {chosen['start'][11:]}; leave at {leave}, "
                      "I'll remind you")

    def skill_drive_mode(self, plan: Plan) -> None:
        """Bluetooth on, the car's device connected, do-not-disturb on, then the request's navigation."""
        if self.settings().get("bluetooth") == "off" or "bluetooth" not in self.settings():
            self.attempt(self.tool("set", "bluetooth"), {"on": True})
        devices = (self.attempt(self.tool("list", "bluetooth", "devices"), {}) or {}).get("devices", [])
        car = [d for d in devices if d.get("kind") == "car" and not d.get("connected")]
        if car and self.attempt(self.tool("connect", "bluetooth", "device"), {"device_id": car[0]["device_id"]}):
            self.note(f"已连接{car[0].get('name')}", f"connected {car[0].get('name')}")
        frames = [f for f in plan.frames if f.concept in ("do_not_disturb", "nav")]
        if not any(f.concept == "do_not_disturb" for f in frames):
            frames.insert(0, Frame("do_not_disturb", "on"))
        for frame in frames:
            if frame.concept == "nav":
                frame.slots["travel"] = frame.slots.get("travel") or ["driving"]
        self.play(frames)

    def do_timer(self, frame: Frame) -> None:
        minutes = frame.value("minutes") or frame.value("number")
        label = frame.value("quote")
        if minutes and self.attempt(self.tool("start", "timer"), {"minutes": minutes, "label": label}) is not None:
            self.note(f"已开始{minutes}分钟的计时" + (f"（{label}）" if label else ""),
                      f"a {minutes}-minute timer is running" + (f" ({label})" if label else ""))

    def do_refresh(self, frame: Frame) -> None:
        hz = frame.value("number")
        if hz and self.attempt(self.tool("refresh", "rate"), {"hz": hz}) is not None:
            self.note(f"刷新率已调到{hz}Hz", f"the refresh rate is {hz} Hz")

    # ------------------------------------------------------------------ memory
    def recall(self, kind: str, role: str | None = None) -> list[dict[str, Any]]:
        """The records of ``kind`` (a person's: of ``role``) a memory search returns, oldest first."""
        zh, en = _QUERIES.get(kind, (kind, kind))
        query = self.say(zh, en).replace("{role}", role or "")
        payload = self.read(f"memory:{query}", self.tool("search", "memory"), {"query": query}) or {}
        found = [m for m in payload.get("memories", []) if isinstance(m, dict)
                 and record_kind(str(m.get("content", ""))) == kind]
        if role is not None:
            found = [m for m in found if role.casefold() in str(m.get("content", "")).casefold()]
            mine = [m for m in found if str(record_value(kind, m["content"]).get("role", "")).casefold() ==
                    role.casefold()]
            found = mine or found
        return sorted(found, key=lambda m: (str(m.get("created_at", "")), str(m.get("memory_id", ""))))

    def remember(self, kind: str, role: str | None = None, older: bool = False) -> dict[str, Any]:
        """The values of the record of ``kind`` that holds (the newest, or the one before it: ``older``), with
        its ``content``; empty when memory has none."""
        records = self.recall(kind, role)
        if not records:
            return {}
        record = records[-2] if older and len(records) > 1 else records[-1]
        return {**record_value(kind, str(record["content"])), "content": record["content"],
                "memory_id": record.get("memory_id")}

    def use_memory(self, plan: Plan) -> bool:
        """Fill the request's frames from memory (module docstring); True when the request was done here."""
        text, older = self.query, re.search(_OLDER, self.query, re.I) is not None
        quotes = re.findall(r"“([^”]+)”|\"([^\"]+)\"", text)
        dictated = next((a or b for a, b in reversed(quotes) if record_kind(a or b)), None)
        if dictated and re.search(r"记成|改成|更新|update|remember", text, re.I):
            return self.memory_update(dictated)
        if re.search(r"删|忘|forget|delete", text, re.I) and re.search(r"记忆|记录|memory|record", text, re.I):
            return self.memory_forget()
        if re.search(r"健身日|gym days?", text, re.I):
            return self.gym_day_alarm(plan)
        if re.search(r"过了.{0,6}睡|past my .{0,10}bedtime", text, re.I):
            return self.past_bedtime()
        self.fill_from_memory(plan, older)
        return False

    def memory_update(self, content: str) -> bool:
        kind = record_kind(content) or ""
        record = self.remember(kind)
        update = {"memory_id": record.get("memory_id"), "content": content}
        if record.get("memory_id") and self.attempt(self.tool("update", "memory"), update):
            self.note(f"已更新记忆：{content}", f"memory updated: {content}")
        new_home = re.search(r"新家在([^。，,]+)|new home is (.+?)\.(?:\s|$)", self.query)
        if kind == "home" and new_home and re.search(r"地图|maps", self.query, re.I):
            place = (new_home.group(1) or new_home.group(2)).strip()
            self.play([Frame("place", "save", {"place": [place], "label": ["home"]})])
        return True

    def memory_forget(self) -> bool:
        kinds = [k for k, pattern in (("allergy", r"过敏|allerg"), ("gym", r"健身|gym"), ("work", r"上班|work at"),
                                      ("home", r"住|lived?\b")) if re.search(pattern, self.query, re.I)]
        for kind in kinds[:1]:
            records = self.recall(kind)
            named = [r for r in records if record_value(kind, r["content"]).get("place", "\0") in self.query]
            target = named[-1] if named else (records[-1] if records and kind == "allergy" else None)
            if target and self.attempt(self.tool("delete", "memory"), {"memory_id": target["memory_id"]}):
                self.note(f"已删除这条记忆：{target['content']}", f"forgot: {target['content']}")
        return True

    def gym_day_alarm(self, plan: Plan) -> bool:
        """An alarm at the usual wake-up time, an hour earlier when tomorrow is a gym day."""
        wake, gym = self.remember("wake"), self.remember("gym_days")
        if not wake.get("time"):
            return True
        tomorrow = self.today() + dt.timedelta(days=1)
        early = tomorrow.weekday() in (gym.get("days") or [])
        lead = next((f.value("minutes") for f in plan.frames if f.value("minutes")), 60)
        time = (dt.datetime.strptime(wake["time"], "%H:%M") - dt.timedelta(minutes=lead if early else 0))
        label = next((f.value("quote") for f in plan.frames if f.value("quote")), None)
        self.note(f"明天{'是' if early else '不是'}健身日", f"tomorrow is {'a' if early else 'not a'} gym day")
        self.play([Frame("alarm", "create", {"time": [time.strftime("%H:%M")], "quote": [label] if label else []})])
        return True

    def past_bedtime(self) -> bool:
        """Past the usual bedtime: do-not-disturb on; before it: an alarm at the bedtime."""
        bedtime = self.remember("bedtime").get("time")
        clock = str(self.settings().get("clock", ""))[11:16]
        if not bedtime or not clock:
            return True

        def late(hhmm: str) -> int:
            minutes = int(hhmm[:2]) * 60 + int(hhmm[3:])
            return minutes + 24 * 60 if minutes < 12 * 60 else minutes
        labels = [v for k, v, _ in extract(self.query)[1] if k == "Q"]
        if late(clock) >= late(bedtime):
            self.note("已经过了你平时睡觉的时间", "it is past your usual bedtime")
            self.play([Frame("do_not_disturb", "on")])
        else:
            self.note(f"还没到你平时睡觉的时间（{bedtime}）", f"your bedtime ({bedtime}) is still ahead")
            self.play([Frame("alarm", "create", {"time": [bedtime], "quote": labels[-1:]})])
        return True

    def fill_from_memory(self, plan: Plan, older: bool) -> None:
        """Put what memory says into the frames (or the frames the request implies), for :meth:`play`."""
        text = self.said()
        habit = re.search(_HABIT + "|" + _OLDER, text, re.I) is not None
        frames = plan.frames
        home = re.search(r"回家|家|\bhome\b", self.query, re.I) is not None
        ride = re.search(r"叫.{0,2}车|打车|\bride\b|\bcar\b", self.query, re.I) is not None
        if home and ride:
            plan.frames = frames = [Frame("ride", "book")]
        elif home and habit and not any(f.concept == "nav" for f in frames):
            plan.frames = frames = [Frame("nav", "start")]
        if re.search(r"听歌|音乐|music", text, re.I) and habit:
            plan.frames = frames = [Frame("app", "open")]
        if re.search(r"勿扰时段|免打扰时间|免打扰时段|勿扰时间|quiet hours|do[- ]not[- ]disturb hours|nightly do[- ]not[- ]"
                     r"disturb|schedule do not disturb", text, re.I):
            plan.frames = frames = []
            self.dnd_schedule(older)
        for frame in frames:
            if frame.concept == "alarm" and frame.op in ("create", None) and frame.value("time") is None:
                kind = "bedtime" if re.search(r"睡|bed", text, re.I) else "wake"
                self.alarm_from_memory(frame, kind, older)
            elif frame.concept == "brightness" and frame.value("number") is None:
                level = self.remember("night_brightness", older=older).get("level")
                frame.slots["number"] = [level] if level is not None else []
            elif frame.concept == "app" and not frame.value("app"):
                app = self.remember("music", older=older).get("app")
                frame.slots.update(app=[app] if app else [], app_said=[app] if app else [])
            elif frame.concept in ("contact", "eta") and frame.value("who"):
                who = re.sub(r"^(?:我的?|my)\s*", "", str(frame.value("who")), flags=re.I)
                person = self.remember("person", role=who) if who and not re.search(r"[A-Z]", who[:1]) else {}
                if person.get("name"):
                    frame.slots["who"] = [person["name"]]
            elif frame.concept in ("nav", "ride") and (frame.value("label") in (None, "home")) and home:
                self.route_from_memory(frame, older)
        kept: list[Frame] = []
        for frame in frames:  # "屏幕太亮了，调回…亮度": one request, said twice
            if not any((f.concept, f.op, f.slots, f.guard) == (frame.concept, frame.op, frame.slots, frame.guard)
                       for f in kept):
                kept.append(frame)
        plan.frames = kept

    def alarm_from_memory(self, frame: Frame, kind: str, older: bool) -> None:
        time = self.remember(kind, older=older).get("time")
        if time is None:
            return
        earlier = [t for turn in self.earlier()[1:] for t in _times(turn)]
        if earlier and re.search(r"不对|改成|no\b|make it", self.query, re.I):  # the earlier turn's alarm exists
            alarms = (self.read("alarms", self.tool("list", "alarms")) or {}).get("alarms", [])
            found = [a for a in alarms if a.get("time") == earlier[-1]]
            if found:
                frame.op, frame.slots["time"] = "shift", [earlier[-1]]
                moved = dt.datetime.strptime(time, "%H:%M") - dt.datetime.strptime(earlier[-1], "%H:%M")
                frame.slots["shift"] = [int(moved.total_seconds() // 60)]
                return
        frame.slots["time"] = [time]

    def route_from_memory(self, frame: Frame, older: bool) -> None:
        """Home's place and the usual way of getting there (or the usual car class) from memory."""
        place = self.remember("home", older=older).get("place")
        frame.slots.pop("label", None)
        if place:
            frame.slots["place"] = [place]
        if frame.concept == "ride":
            ride = self.remember("ride", older=older).get("ride")
            frame.slots["ride"] = [ride] if ride else []
            return
        mode = self.remember("travel_mode", older=older).get("mode")
        if mode:
            frame.slots["travel"] = [mode]
        if mode == "driving":
            preference = self.remember("driving", older=older).get("preference")
            frame.slots["preferences"] = [[preference]] if preference else []

    def dnd_schedule(self, older: bool) -> None:
        times = self.remember("dnd", older=older).get("times") or []
        schedule = {"enabled": True, "start": times[0], "end": times[1]} if len(times) >= 2 else None
        if schedule and self.attempt(self.tool("dnd", "schedule"), schedule) is not None:
            self.note(f"已设置每天{times[0]}到{times[1]}免打扰", f"do not disturb is scheduled {times[0]}–{times[1]}")


# The routine the rule agent plays for each bundled skill, by skill id; a skill without one is only loaded.
ROUTINES: dict[str, Callable[[CapabilityMixin, Plan], None]] = {
    "focus_mode": CapabilityMixin.skill_focus_mode,
    "battery_rescue": CapabilityMixin.skill_battery_rescue,
    "storage_cleanup": CapabilityMixin.skill_storage_cleanup,
    "meeting_departure": CapabilityMixin.skill_meeting_departure,
    "drive_mode": CapabilityMixin.skill_drive_mode,
}
