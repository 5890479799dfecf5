"""Realistic initial phone states ``S_0`` for generated MobilePA tasks.

:func:`build_world` draws one phone from the caller's generator: a clock (a day of 2026 and a time
of day), connectivity, sound and display settings, installed and running apps with their
permissions, 8–11 contacts with Chinese and English names (four with a relation such as 妈妈 /
mom, in the task's language), 2–4 alarms, 3–6 calendar events over the coming week (fewer if no
free slot turns up), and some messages and calls. Tasks then add what they need (:meth:`World.add_alarm`, ...) and the
generator plants obstacles; :meth:`World.rows` is the ``initial_state`` of the task. The id
counters of ``S_0`` start after the ids it holds, so ids the sandbox issues never collide.

Maps & travel tasks also put the phone somewhere the bundled MobilityBench set recorded (:func:`atlas`):
*trips* (an episode's user position, the phone's ``current_location`` in its ``current_city``, and a
place its gold ``query_poi`` found, with every route recorded between the two: gold calls and the
recorded alternatives, other modes and driving strategies), current weather and forecasts, and roads
with their traffic. Facts are read from what the replay serves for each recorded call (a key
recorded twice serves its first recording), so that the tools answer a task exactly as it expects.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import random
import re
from dataclasses import dataclass, field
from typing import Any

from ..canonical import canonical_city, canonical_coordinate
from ..mobilitybench.observation import format_response
from ..responses import as_dict
from ..trajectory import MatchKind
from .domains.maps_travel import replay_for, travel_minutes

ZH_SURNAMES = "张王李刘陈杨赵黄周吴徐孙马朱胡郭何林高罗"
ZH_GIVEN = ("伟", "芳", "娜", "敏", "静", "磊", "洋", "勇", "艳", "杰", "涛", "明", "超", "霞", "刚", "晓东", "子涵", "浩然",
            "欣怡", "雨桐", "梓轩", "思远", "嘉怡", "宇航", "佳琪", "一鸣", "建国", "丽华")
EN_FIRST = ("Emily", "David", "Sarah", "Michael", "Olivia", "James", "Sophia", "Daniel", "Grace", "Kevin", "Lily",
            "Jason", "Amy", "Ryan", "Chloe", "Eric")
EN_LAST = ("Chen", "Wang", "Li", "Zhang", "Liu", "Smith", "Brown", "Miller", "Lee", "Wong", "Johnson", "Taylor")
#: Relations that name one person (a task may address a contact by them); the generic ones may repeat.
FAMILY = {"zh": ("妈妈", "爸爸", "老婆", "哥哥", "姐姐", "妹妹", "老板", "房东", "外婆"),
          "en": ("mom", "dad", "wife", "brother", "sister", "boss", "landlord", "grandma")}
GENERIC = {"zh": ("同事", "朋友", "同学", ""), "en": ("colleague", "friend", "classmate", "")}
#: App ids as the phone lists them, with their Chinese names (``messages`` and ``phone`` are the system apps).
APPS = {"WeChat": "微信", "Alipay": "支付宝", "Amap": "高德地图", "Douyin": "抖音", "Taobao": "淘宝", "Camera": "相机",
        "Music": "音乐", "Notes": "备忘录", "Calendar": "日历", "Weather": "天气", "Gallery": "相册", "Bilibili": "哔哩哔哩",
        "messages": "短信", "phone": "电话"}
ALARM_LABELS = {"zh": ("起床", "健身", "吃药", "接孩子", "午休", "开会提醒", "遛狗", "背单词", "收衣服", "交水电费"),
                "en": ("Wake up", "Gym", "Medicine", "School pickup", "Nap", "Meeting reminder", "Walk the dog",
                       "Study", "Laundry", "Pay bills")}
EVENT_TITLES = {"zh": ("周会", "项目评审", "牙医复诊", "瑜伽课", "家长会", "客户拜访", "读书会", "年度体检", "部门聚餐",
                       "面试", "产品发布会", "钢琴课"),
                "en": ("Weekly sync", "Design review", "Dentist", "Yoga class", "Parent-teacher meeting",
                       "Client visit", "Book club", "Annual check-up", "Team dinner", "Interview", "Product launch",
                       "Piano lesson")}
LOCATIONS = {"zh": ("3号会议室", "公司A座12楼", "仁和口腔诊所", "星光健身房", "实验小学", "国贸大厦", "市图书馆二楼",
                    "人民医院体检中心", "海底捞（中山路店）", "腾飞创业园"),
             "en": ("Room 3", "Tower A 12F", "Smile Dental", "Star Gym", "Riverside School", "Central Plaza",
                    "City Library 2F", "General Hospital", "Noodle House", "Innovation Park")}
MESSAGES = {"zh": ("晚上一起吃饭吗？", "记得带伞，下午有雨", "快递放门口了", "明天几点出发？", "会议改到三点了", "到家了吗？",
                   "周末回家吃饭", "房租这周交一下", "资料发你邮箱了", "路上堵车，晚点到"),
            "en": ("Dinner tonight?", "Take an umbrella, rain this afternoon", "Left the parcel at the door",
                   "What time do we leave tomorrow?", "The meeting moved to three", "Home yet?",
                   "Come home for dinner this weekend", "Rent is due this week", "Sent the files to your email",
                   "Stuck in traffic, running late")}
REPEATS = ("once", "daily", "weekdays", "weekends")


@dataclass
class World:
    """One phone's initial state under construction (see the module docstring)."""

    lang: str
    now: dt.datetime
    settings: dict[str, str]
    apps: list[dict[str, Any]] = field(default_factory=list)
    permissions: list[dict[str, Any]] = field(default_factory=list)
    contacts: list[dict[str, Any]] = field(default_factory=list)
    alarms: list[dict[str, Any]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    messages: list[dict[str, Any]] = field(default_factory=list)
    calls: list[dict[str, Any]] = field(default_factory=list)
    faults: list[dict[str, Any]] = field(default_factory=list)
    issued: dict[str, int] = field(default_factory=dict)
    extra: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # other tables (maps: saved_places...)

    @property
    def today(self) -> dt.date:
        return self.now.date()

    def _next_id(self, prefix: str) -> str:
        self.issued[prefix] = self.issued.get(prefix, 0) + 1
        return f"{prefix}-{self.issued[prefix]}"

    def rows(self) -> dict[str, list[dict[str, Any]]]:
        """``S_0`` as rows per table (a fresh copy: later edits of the world do not change it)."""
        tables = {"settings": [{"key": k, "value": v} for k, v in sorted(self.settings.items())],
                  "apps": self.apps, "permissions": self.permissions, "contacts": self.contacts,
                  "alarms": self.alarms, "events": self.events, "messages": self.messages, "calls": self.calls,
                  "faults": self.faults,
                  "counters": [{"name": k, "value": v} for k, v in sorted(self.issued.items())], **self.extra}
        return {name: [dict(row) for row in items] for name, items in tables.items() if items}

    def move_to(self, day: dt.date) -> None:
        """Move the phone to ``day`` (same time of day), its events, messages and calls by as many days: a task
        whose facts are dated (a recorded forecast) sets the clock to their day."""
        shift = day - self.today
        self.now += shift
        self.settings["clock"] = self.now.strftime("%Y-%m-%d %H:%M")
        for rows, keys in ((self.events, ("start", "end")), (self.messages, ("sent_at",)), (self.calls, ("at",))):
            for row in rows:
                for key in keys:
                    moved = dt.datetime.strptime(row[key], "%Y-%m-%d %H:%M") + shift
                    row[key] = moved.strftime("%Y-%m-%d %H:%M")

    def add_alarm(self, time: str, label: str, repeat: str = "once", enabled: bool = True) -> dict[str, Any]:
        row = {"alarm_id": self._next_id("alarm"), "time": time, "label": label, "repeat": repeat,
               "enabled": int(enabled)}
        self.alarms.append(row)
        return row

    def alarm_at(self, time: str) -> dict[str, Any] | None:
        return next((a for a in self.alarms if a["time"] == time), None)

    def free_alarm_time(self, rng: random.Random, low: int = 5, high: int = 22) -> str:
        """A time (on the quarter hour) that no alarm uses."""
        while True:
            time = f"{rng.randint(low, high):02d}:{rng.choice((0, 15, 30, 45)):02d}"
            if self.alarm_at(time) is None:
                return time

    def add_event(self, title: str, start: dt.datetime, minutes: int, location: str = "") -> dict[str, Any]:
        row = {"event_id": self._next_id("event"), "title": title, "start": start.strftime("%Y-%m-%d %H:%M"),
               "end": (start + dt.timedelta(minutes=minutes)).strftime("%Y-%m-%d %H:%M"), "location": location}
        self.events.append(row)
        return row

    def events_on(self, day: dt.date) -> list[dict[str, Any]]:
        return sorted((e for e in self.events if e["start"][:10] == day.isoformat()), key=lambda e: e["start"])

    def add_message(self, contact_id: str, direction: str, text: str, minutes_ago: int) -> dict[str, Any]:
        row = {"message_id": self._next_id("message"), "contact_id": contact_id, "direction": direction,
               "text": text, "sent_at": (self.now - dt.timedelta(minutes=minutes_ago)).strftime("%Y-%m-%d %H:%M")}
        self.messages.append(row)
        return row

    def add_contact(self, rng: random.Random, name: str, relation: str = "") -> dict[str, Any]:
        taken = {c["contact_id"] for c in self.contacts}
        contact_id = f"c{rng.randrange(100, 1000)}"
        while contact_id in taken:
            contact_id = f"c{rng.randrange(100, 1000)}"
        row = {"contact_id": contact_id, "name": name, "phone": _phone(rng), "relation": relation}
        self.contacts.append(row)
        return row

    def add_lookalike(self, rng: random.Random, contact: dict[str, Any]) -> dict[str, Any]:
        """A contact whose name contains ``contact``'s name (张伟 → 张伟明, David Wang → David Wangsness), so a
        search for one finds both and the right one must be picked by its exact name."""
        extra = rng.choice(ZH_GIVEN[:14]) if _is_zh(contact["name"]) else rng.choice(("son", "er", "ley"))
        return self.add_contact(rng, contact["name"] + extra, rng.choice(GENERIC[self.lang]))

    def pick_contact(self, rng: random.Random, by_relation: bool) -> dict[str, Any]:
        """A contact a task can address unambiguously: by a family relation, or by a name no other contact has."""
        if by_relation:
            return rng.choice([c for c in self.contacts if c["relation"] in FAMILY[self.lang]])
        names = [c["name"] for c in self.contacts]
        return rng.choice([c for c in self.contacts if sum(c["name"] in n for n in names) == 1])

    def app_name(self, app: str) -> str:
        """How the user calls an app: its Chinese name in a Chinese request, its id in an English one."""
        return APPS.get(app, app) if self.lang == "zh" else app


def _is_zh(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)


def _phone(rng: random.Random) -> str:
    return "1" + rng.choice("35789") + "".join(rng.choice("0123456789") for _ in range(9))


def _person(rng: random.Random, used: set[str]) -> str:
    while True:
        if rng.random() < 0.6:
            name = rng.choice(ZH_SURNAMES) + rng.choice(ZH_GIVEN)
        else:
            name = f"{rng.choice(EN_FIRST)} {rng.choice(EN_LAST)}"
        if not any(name in other or other in name for other in used):
            used.add(name)
            return name


def build_world(rng: random.Random, lang: str) -> World:
    """A realistic phone (see the module docstring), drawn from ``rng`` only."""
    now = dt.datetime(2026, 1, 5) + dt.timedelta(days=rng.randrange(330), hours=rng.randint(7, 20),
                                                 minutes=rng.choice((0, 10, 15, 20, 30, 40, 45, 50)))
    settings = {"clock": now.strftime("%Y-%m-%d %H:%M"), "airplane_mode": "off", "auto_brightness": "off",
                "do_not_disturb": "off", "ringer_mode": "normal"}
    for key in ("wifi", "bluetooth", "location"):
        settings[key] = rng.choice(("on", "off"))
    settings["mobile_data"] = "on"
    settings["brightness"] = str(rng.randrange(20, 95, 5))
    for stream in ("media", "ring", "alarm", "call"):
        settings[f"volume_{stream}"] = str(rng.randrange(20, 95, 5))
    world = World(lang, now, settings)

    names = list(APPS)
    missing = {rng.choice(("Taobao", "Bilibili", "Douyin"))}
    running = set(rng.sample([a for a in names[:12] if a not in missing], rng.randint(2, 4)))
    world.apps = [{"app": a, "installed": int(a not in missing), "running": int(a in running)} for a in names]
    world.permissions = [{"app": "messages", "permission": "sms", "granted": 1},
                         {"app": "phone", "permission": "call", "granted": 1},
                         {"app": "Camera", "permission": "camera", "granted": 1},
                         {"app": "Amap", "permission": "location", "granted": 1},
                         {"app": "Gallery", "permission": "storage", "granted": 1},
                         {"app": "WeChat", "permission": "microphone", "granted": rng.randint(0, 1)},
                         {"app": "Douyin", "permission": "location", "granted": 0}]

    used: set[str] = set()
    relations = rng.sample(FAMILY[lang], 4)
    for index in range(rng.randint(8, 11)):
        relation = relations[index] if index < len(relations) else rng.choice(GENERIC[lang])
        world.add_contact(rng, _person(rng, used), relation)
    rng.shuffle(world.contacts)

    for label in rng.sample(ALARM_LABELS[lang], rng.randint(2, 4)):
        world.add_alarm(world.free_alarm_time(rng, 6, 21), label, rng.choice(REPEATS), rng.random() < 0.7)

    titles = rng.sample(EVENT_TITLES[lang], rng.randint(3, 6))
    for title in titles:
        for _ in range(20):  # a free slot on some day of the coming week
            day = world.today + dt.timedelta(days=rng.randrange(7))
            start = dt.datetime.combine(day, dt.time(rng.randint(8, 19), rng.choice((0, 30))))
            minutes = rng.choice((30, 60, 60, 90, 120))
            if start > now and not _overlaps(world, start, minutes):
                world.add_event(title, start, minutes, rng.choice(LOCATIONS[lang]) if rng.random() < 0.7 else "")
                break

    # oldest first, so that message ids (list_messages' order) follow time; tasks add at most 2 more (ids < 10)
    for minutes_ago in sorted((rng.randint(60, 60 * 72) for _ in range(rng.randint(3, 6))), reverse=True):
        contact = rng.choice(world.contacts)
        world.add_message(contact["contact_id"], rng.choice(("in", "out")), rng.choice(MESSAGES[lang]), minutes_ago)
    for _ in range(rng.randint(2, 4)):
        contact = rng.choice(world.contacts)
        at = (now - dt.timedelta(minutes=rng.randint(30, 60 * 96))).strftime("%Y-%m-%d %H:%M")
        world.calls.append({"call_id": world._next_id("call"), "contact_id": contact["contact_id"],
                            "direction": rng.choice(("in", "out", "missed")), "at": at})
    return world


def _overlaps(world: World, start: dt.datetime, minutes: int) -> bool:
    begin, end = start.strftime("%Y-%m-%d %H:%M"), (start + dt.timedelta(minutes=minutes)).strftime("%Y-%m-%d %H:%M")
    return any(e["start"] < end and e["end"] > begin for e in world.events)


# ---------------------------------------------- places, routes, weather and roads: the recorded MobilityBench set
FORECAST_DAY = re.compile(r"(\d{4}-\d\d-\d\d)（周.）：([^，\n]+)，")
WEATHER_NOW = re.compile(r"当前天气([^，]+)，气温(-?\d+)℃")
_UPDATED = re.compile(r"数据更新时间：(\d{4}-\d\d-\d\d)")


@dataclass(frozen=True)
class Route:
    """A recorded route from a trip's origin: the phone call's mode and options, and its first option's facts."""

    mode: str
    options: tuple[tuple[str, Any], ...]  # ("preferences", [...]) or ("transit_strategy", "5")
    preference: str  # the driving strategy ('' for the default route)
    distance_m: int
    duration_s: int

    def call(self) -> dict[str, Any]:
        return {"mode": self.mode, **{k: (list(v) if isinstance(v, tuple) else v) for k, v in self.options}}

    @property
    def minutes(self) -> int:
        return travel_minutes(self.duration_s)


@dataclass(frozen=True)
class Place:
    name: str  # the keywords of the recorded query_poi call: what the user says
    location: str  # the recorded location
    routes: tuple[Route, ...]

    def route(self, mode: str = "driving", preference: str = "") -> Route | None:
        return next((r for r in self.routes if r.mode == mode and r.preference == preference), None)


@dataclass(frozen=True)
class Trip:
    city: str
    origin: str
    place: Place
    alternates: tuple[Place, ...]  # other recorded places of the episode with a driving route from the origin


@dataclass(frozen=True)
class CityWeather:
    city: str
    origin: str
    day: dt.date | None  # the day of the record
    days: tuple[tuple[dt.date, str], ...] = ()  # forecast conditions
    now: tuple[str, int] | None = None  # condition and temperature


@dataclass(frozen=True)
class Road:
    road: str
    city: str
    origin: str
    state: str


@dataclass(frozen=True)
class Atlas:
    trips: tuple[Trip, ...]
    forecasts: tuple[CityWeather, ...]
    nows: tuple[CityWeather, ...]
    roads: tuple[Road, ...]


def _served(call: Any) -> Any:
    """The compact view of what the replay serves for a recorded call (for a key recorded twice, the first
    recording: what the tools will answer), None unless the call is served exactly."""
    box = replay_for(None)
    result = box.lookup(call.name, call.arguments)
    if result.match != MatchKind.EXACT or result.entry is None:
        return None
    return json.loads(box.observation_text(result.entry, "compact") or
                      format_response(call.name, result.response, "compact"))


def _route(call: Any) -> Route | None:
    body = _served(call)
    options = (body.get("paths") or body.get("transits") or None) if isinstance(body, dict) else None
    if not options or not isinstance(options[0], dict):
        return None
    first = options[0]
    if not isinstance(first.get("duration_s"), (int, float)) or not isinstance(first.get("distance_m"), (int, float)):
        return None
    mode = {"driving_route": "driving", "walking_route": "walking", "bus_route": "transit"}.get(call.name)
    strategy = call.arguments.get("strategy")
    if mode is None or (mode == "transit" and strategy not in (None, "", "0")):
        return None
    preferences = tuple(strategy) if mode == "driving" and strategy else ()
    return Route(mode, (("preferences", preferences),) if preferences else (), "+".join(sorted(preferences)),
                 int(first["distance_m"]), int(first["duration_s"]))


def _place(episode: Any, call: Any, origin: str) -> Place | None:
    found = _served(call)
    location = canonical_coordinate(found.get("location")) if isinstance(found, dict) else None
    if location is None:
        return None
    routes: list[Route] = []
    for other in episode.recorded:
        args = other.arguments
        if other.name.endswith("_route") and not args.get("waypoints") and \
                canonical_coordinate(args.get("origin")) == origin and \
                canonical_coordinate(args.get("destination")) == location:
            route = _route(other)
            if route is not None and all((route.mode, route.preference) != (r.mode, r.preference) for r in routes):
                routes.append(route)
    return Place(call.arguments["keywords"], found["location"], tuple(routes)) if routes else None


def _date(text: str) -> dt.date:
    return dt.date.fromisoformat(text)


@functools.lru_cache(maxsize=1)
def atlas() -> Atlas:
    """Trips, forecasts, current weather and roads of the bundled MobilityBench set (read once per process)."""
    from ..mobilitybench.store import BUNDLED_DIR, resolve_data

    store = resolve_data(BUNDLED_DIR)
    trips, forecasts, nows, roads = [], [], [], []
    seen: set[tuple[Any, Any]] = set()  # weather and roads recorded in several episodes: one of each
    for episode_id in store.ids:
        episode = store.get(episode_id)
        origin, city = episode.context.get("user_current_location") or "", episode.context.get("city") or ""
        here = canonical_coordinate(origin)
        if here is None or not city:
            continue
        places: list[tuple[bool, Place]] = []
        for call in episode.recorded:
            if call.name == "query_poi" and canonical_city(call.arguments.get("city")) == canonical_city(city):
                place = _place(episode, call, here)
                if place is not None:
                    places.append((call.gold_index is not None, place))
            elif call.name == "weather_query" and (call.arguments["city"], bool(call.arguments.get("need_forecast"))) \
                    not in seen:
                seen.add((call.arguments["city"], bool(call.arguments.get("need_forecast"))))
                text = as_dict(_served(call)).get("weather") or ""
                updated = _UPDATED.search(text)
                if call.arguments.get("need_forecast"):
                    days = tuple((_date(d), c) for d, c in FORECAST_DAY.findall(text))
                    if len(days) >= 2:
                        forecasts.append(CityWeather(call.arguments["city"], origin, days[0][0], days))
                elif WEATHER_NOW.search(text) and updated:
                    condition, degrees = WEATHER_NOW.search(text).groups()  # type: ignore[union-attr]
                    nows.append(CityWeather(call.arguments["city"], origin, _date(updated.group(1)),
                                            now=(condition, int(degrees))))
            elif call.name == "traffic_status" and (call.arguments["name"], call.arguments["city"]) not in seen:
                seen.add((call.arguments["name"], call.arguments["city"]))
                state = as_dict(_served(call)).get("state")
                if isinstance(state, str) and state:
                    roads.append(Road(call.arguments["name"], call.arguments["city"], origin, state))
        for gold, place in places:
            if gold:
                alternates = tuple(p for g, p in places if not g and p.route() is not None and p.name != place.name)
                trips.append(Trip(city, origin, place, alternates))
    if not trips or not forecasts or not nows or not roads:
        raise ValueError(f"{BUNDLED_DIR}: the recorded set has too few trips, forecasts or roads for maps tasks")
    return Atlas(tuple(trips), tuple(forecasts), tuple(nows), tuple(roads))


def recorded_route(place: Any, mode: str, preference: str = "") -> Route | None:
    """The recorded route by ``mode`` and driving ``preference`` from ``place.origin`` (a recorded user position) to
    the recorded place named ``place.name`` (a profile's place), None when the set recorded no such route."""
    for trip in atlas().trips:
        if trip.origin == place.origin:
            for candidate in (trip.place, *trip.alternates):
                if candidate.name == place.name and candidate.route(mode, preference) is not None:
                    return candidate.route(mode, preference)
    return None


def free_alarm_times(world: World, rng: random.Random, *times: str, label: str | None = None) -> None:
    """Move the phone's alarms at ``times`` to other free times (and relabel those labelled ``label``), so a task can
    use those times (and that label) alone while the phone keeps as many alarms."""
    for alarm in world.alarms:
        while alarm["time"] in times:
            alarm["time"] = world.free_alarm_time(rng, 6, 21)
        if label is not None and alarm["label"] == label:
            taken = {a["label"] for a in world.alarms}
            alarm["label"] = next((x for x in ALARM_LABELS[world.lang] if x not in taken), "")


def clear_slot(world: World, begin: dt.datetime, end: dt.datetime) -> None:
    """Move the phone's events that overlap ``[begin, end)`` a week later, so a task can use that slot alone while
    the phone keeps as many events."""
    since, until = begin.strftime("%Y-%m-%d %H:%M"), end.strftime("%Y-%m-%d %H:%M")
    for event in world.events:
        if event["start"] < until and event["end"] > since:
            for key in ("start", "end"):
                moved = dt.datetime.strptime(event[key], "%Y-%m-%d %H:%M") + dt.timedelta(days=7)
                event[key] = moved.strftime("%Y-%m-%d %H:%M")
