"""Realistic initial phone states ``S_0`` for generated MobilePA tasks.

:func:`build_world` draws one phone from the caller's generator: a clock (a day of 2026 and a time
of day), connectivity, sound and display settings, installed and running apps with their
permissions, 8–11 contacts with Chinese and English names (four with a relation such as 妈妈 /
mom, in the task's language), 2–4 alarms, 3–6 calendar events over the coming week (fewer if no
free slot turns up), and some messages and calls. Tasks then add what they need (:meth:`World.add_alarm`, ...) and the
generator plants obstacles; :meth:`World.rows` is the ``initial_state`` of the task. The id
counters of ``S_0`` start after the ids it holds, so ids the sandbox issues never collide.
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass, field
from typing import Any

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
                  "counters": [{"name": k, "value": v} for k, v in sorted(self.issued.items())]}
        return {name: [dict(row) for row in items] for name, items in tables.items() if items}

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
