"""Seeded, coherent user profiles: what the assistant remembers about its user, as dated memory records.

:func:`build_profile` draws one user from the caller's generator (same generator state, same
profile): a city of the bundled MobilityBench set and the user's places in it, people, routines,
app and device preferences, travel preferences and a few facts. Each is a :class:`MemoryRecord`
with a natural sentence in the profile's language, a ``category`` of the memory tools
(:data:`~mobility_env.mobilepa.domains.memory.MEMORY_CATEGORIES`), a ``key`` saying what it is about
(``place.home``, ``routine.commute``, ``travel.driving``…), its date, and the structured ``value``
a task generator checks against. Ids are ``mem-`` and 8 random hex digits: they cannot be guessed.

* **Places** (``place.home``, ``place.work``, optionally ``place.school`` and ``place.gym``) are places
  the recorded set can route to (:func:`~mobility_env.mobilepa.generate_world.atlas`): each
  :class:`ProfilePlace` carries the recorded position its routes start from (``origin``) and the
  ``(mode, driving preference)`` of each recorded route, so ``maps_search_place`` on its name and
  ``maps_route`` from its origin hit the replay exactly. Residential names go to home, schools to school.
* **People** (``person.<role>``, ``person.<role>.birthday``): with a ``world``
  (:func:`~mobility_env.mobilepa.generate_world.build_world`) the phone's own contacts and their
  relations; without one, drawn names.
* **Routines and preferences** are chosen so the current ones can be acted on: the commute mode is
  a mode recorded to work, the usual way of getting around one recorded to home, the driving
  preference one recorded to home or work when there is one.
* **Conflicts**: 2–4 keys have 2–3 records at different dates whose values differ (an older "I take
  the metro to work" and a newer "I drive to work now"); half of the newer ones say that something
  changed, the others only differ by date. :meth:`UserProfile.current` is the newest record of a key:
  the one that holds unless a request says otherwise; :meth:`UserProfile.history` lists them all.

:func:`with_profile` puts a profile into a task's ``initial_state`` (the ``memories`` rows, and the
music apps it names installed). :data:`QUERIES` holds ways to ask for each kind of record: the first of
each language is meant as the oracle's ``search_memory`` query (:func:`oracle_query` checks that it
returns every record of the key, else tries the next), the rest measure retrieval (paraphrases).

A task that routes to a place puts the phone at that place's ``origin`` (``current_location`` in the
profile's ``city``): the places of one profile are reached from different recorded positions.

Example::

    rng = random.Random(7)
    world = build_world(rng, "zh")
    profile = build_profile(rng, "zh", world)           # the world's contacts, clock and language
    profile.current("place.home").content               # the newest home record: '我家住在…' / '我搬家了，现在住在…'
    initial_state = with_profile(world.rows(), profile)
"""

from __future__ import annotations

import datetime as dt
import functools
import random
import re
from dataclasses import dataclass, field
from typing import Any, Mapping

from .domains.memory import hits
from .generate_world import EN_FIRST, EN_LAST, ZH_GIVEN, ZH_SURNAMES, World, atlas

#: Roles a person record can have: (Chinese, English) words; a world's contacts are matched by either.
ROLES = {"mother": ("妈妈", "mom"), "father": ("爸爸", "dad"), "wife": ("老婆", "wife"), "brother": ("哥哥", "brother"),
         "sister": ("姐姐", "sister"), "younger_sister": ("妹妹", "little sister"), "boss": ("老板", "boss"),
         "landlord": ("房东", "landlord"), "grandmother": ("外婆", "grandma")}
#: Music apps by the id the phone lists: (Chinese, English) names.
MUSIC_APPS = {"Music": ("音乐", "the Music app"), "QQMusic": ("QQ音乐", "QQ Music"),
              "NetEaseMusic": ("网易云音乐", "NetEase Cloud Music")}
MODE_SAY = {"driving": ("开车", "by car"), "transit": ("坐地铁", "by metro"), "walking": ("走路", "on foot")}
DRIVING_SAY = {"不走高速": ("不走高速", "avoiding highways"), "躲避拥堵": ("避开拥堵", "avoiding traffic jams"),
               "少收费": ("少交过路费", "paying fewer tolls"), "高速优先": ("走高速", "taking the highway")}
RIDE_SAY = {"economy": ("快车", "a standard car"), "comfort": ("舒适型专车", "a comfort car"), "xl": ("六座商务车", "an XL car")}
ALLERGENS = {"花生": "peanuts", "海鲜": "seafood", "芒果": "mango", "青霉素": "penicillin"}
WEEKDAYS = (("一", "Monday"), ("二", "Tuesday"), ("三", "Wednesday"), ("四", "Thursday"), ("五", "Friday"),
            ("六", "Saturday"), ("日", "Sunday"))
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
_RESIDENTIAL = re.compile(r"苑|花园|小区|家园|名都|华府|新村|雅居|公寓")
_SCHOOL = re.compile(r"中学|小学|幼儿园|学校")
_GYM_LIKE = re.compile(r"广场|购物中心|天街|公园|银泰|吾悦|万达")
_TRANSIT_OR_PUBLIC = re.compile(r"机场|站|医院|公安|政府|政务|卫生|小吃|火锅|老乡鸡|风景区|寺")


@dataclass(frozen=True)
class ProfilePlace:
    """A place of the user's, routable in the recorded set: from ``origin`` by each of ``routes``."""

    name: str  # the recorded query_poi keywords: what maps_search_place is called with
    location: str
    city: str
    origin: str  # the recorded user position the routes start from ('lng,lat')
    routes: tuple[tuple[str, str], ...]  # (mode, driving preference or '')

    @property
    def modes(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(mode for mode, _ in self.routes))

    @property
    def preferences(self) -> tuple[str, ...]:
        return tuple(pref for mode, pref in self.routes if mode == "driving" and pref)


@dataclass(frozen=True)
class MemoryRecord:
    memory_id: str
    key: str
    category: str
    content: str
    created_at: str  # 'YYYY-MM-DD HH:MM'
    value: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def row(self) -> dict[str, Any]:
        """The record as a ``memories`` row (never updated yet: ``updated_at`` is ``created_at``)."""
        return {"memory_id": self.memory_id, "content": self.content, "category": self.category,
                "created_at": self.created_at, "updated_at": self.created_at, "key": self.key}


@dataclass(frozen=True)
class UserProfile:
    lang: str
    city: str
    now: str  # the profile's present: every record is older
    records: tuple[MemoryRecord, ...]

    def history(self, key: str) -> tuple[MemoryRecord, ...]:
        """The records of ``key``, oldest first (a ``KeyError`` naming the keys when there is none)."""
        found = tuple(sorted((r for r in self.records if r.key == key), key=lambda r: r.created_at))
        if not found:
            raise KeyError(f"the profile has no {key!r} record; keys: {', '.join(self.keys())}")
        return found

    def current(self, key: str) -> MemoryRecord:
        """The record of ``key`` that holds now: the newest."""
        return self.history(key)[-1]

    def keys(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(r.key for r in self.records))

    def conflicting_keys(self) -> tuple[str, ...]:
        """Keys with more than one record (their values differ)."""
        return tuple(k for k in self.keys() if sum(r.key == k for r in self.records) > 1)

    def place(self, label: str) -> ProfilePlace | None:
        """The user's current place of that label (home, work, school, gym), None when the profile has none."""
        key = f"place.{label}"
        return self.current(key).value["place"] if key in self.keys() else None

    def rows(self) -> list[dict[str, Any]]:
        return [r.row() for r in self.records]


def with_profile(initial_state: Mapping[str, list[dict[str, Any]]], profile: UserProfile) -> dict[str, Any]:
    """``initial_state`` (a copy) with the profile's memories added, and the music apps it names installed (when
    the state lists apps): the user's records and phone agree."""
    state = {name: [dict(row) for row in rows] for name, rows in initial_state.items()}
    state["memories"] = state.get("memories", []) + profile.rows()
    if "apps" in state:
        listed = {row["app"] for row in state["apps"]}
        for record in profile.records:
            app = record.value.get("app") if record.key == "app.music" else None
            if app is not None and app not in listed:
                state["apps"].append({"app": app, "installed": 1, "running": 0})
                listed.add(app)
    return state


# --------------------------------------------------------------------------------------------- places
def _family(name: str) -> str:
    return re.sub(r"[(（].*?[)）]|[一二三]期$|[东西南北]院?区$", "", name)


@functools.lru_cache(maxsize=1)
def city_places() -> dict[str, tuple[ProfilePlace, ...]]:
    """Per city of the recorded set, its distinct routable places (one per family of look-alike names such as
    X and X(西门): the one with the most recorded routes), best-connected first."""
    found: dict[str, dict[str, ProfilePlace]] = {}
    for trip in atlas().trips:
        for place in (trip.place, *trip.alternates):
            routes = tuple((r.mode, r.preference) for r in place.routes)
            candidate = ProfilePlace(place.name, place.location, trip.city, trip.origin, routes)
            by_name = found.setdefault(trip.city, {})
            if len(routes) > len(by_name[place.name].routes) if place.name in by_name else True:
                by_name[place.name] = candidate
    out: dict[str, tuple[ProfilePlace, ...]] = {}
    for city, by_name in sorted(found.items()):
        kept: list[ProfilePlace] = []
        for candidate in sorted(by_name.values(), key=lambda p: (-len(p.routes), p.name)):
            if all(_family(candidate.name) not in other.name and _family(other.name) not in candidate.name
                   for other in kept):
                kept.append(candidate)
        out[city] = tuple(kept)
    return out


def _pick(rng: random.Random, pool: list[ProfilePlace], pattern: re.Pattern[str] | None) -> ProfilePlace:
    """A place of ``pool`` (taken out of it): one whose name fits ``pattern`` if any, else one nobody lives or
    works out in (no station, airport, hospital...) if any, else any."""
    fitting = [p for p in pool if pattern is not None and pattern.search(p.name)]
    ordinary = [p for p in pool if not _TRANSIT_OR_PUBLIC.search(p.name)]
    place = rng.choice(fitting or (ordinary if pattern is not None else []) or pool)
    pool.remove(place)
    return place


# --------------------------------------------------------------------------------------------- sentences
def _clock(time: str, lang: str) -> str:
    hour, minute = int(time[:2]), int(time[3:])
    if lang == "en":
        return f"{(hour - 1) % 12 + 1}:{minute:02d} {'am' if hour < 12 else 'pm'}"
    period = "半夜" if hour == 0 else "凌晨" if hour < 5 else "早上" if hour < 12 else "晚上"
    spoken = {0: "", 30: "半"}.get(minute, f"{minute}分")
    return f"{period}{(hour - 1) % 12 + 1}点{spoken}"


def _days(days: tuple[int, ...], lang: str) -> str:
    if lang == "zh":
        names = ["周" + WEEKDAYS[d][0] for d in days]
        return "、".join(names[:-1]) + "和" + names[-1]
    names = [WEEKDAYS[d][1] + "s" for d in days]
    return ", ".join(names[:-1]) + " and " + names[-1]


#: Each kind of record in words: (Chinese, Chinese when it changed, English, English when it changed); the
#: changed wording is for the newer record of a conflict (an empty one: the plain wording).
TEMPLATES: dict[str, tuple[str, str, str, str]] = {
    "place.home": ("我家住在{name}", "我搬家了，现在住在{name}", "I live at {name}.", "I've moved; I now live at {name}."),
    "place.work": ("我在{name}上班", "我换工作了，现在在{name}上班", "I work at {name}.",
                   "I changed jobs and now work at {name}."),
    "place.school": ("孩子在{name}上学", "孩子转学了，现在在{name}上学", "My kid goes to school at {name}.",
                     "My kid changed schools and now attends {name}."),
    "place.gym": ("我常去的健身房在{name}", "我换了健身房，现在去{name}", "My gym is at {name}.",
                  "I switched gyms; I now go to the one at {name}."),
    "person": ("我{rel}叫{name}", "", "My {rel}'s name is {name}.", ""),
    "person.birthday": ("{rel}的生日是{month}月{day}日", "", "My {rel}'s birthday is {month_name} {day}.", ""),
    "routine.wake_up": ("我一般{t}起床", "我现在改成{t}起床了", "I usually get up at {t}.", "I now get up at {t}."),
    "routine.commute": ("我每天{t}出门上班，一般{how}", "我现在每天{t}出门，改成{how}上班了",
                        "I leave for work at {t}, usually {how}.", "These days I leave for work at {t} and go {how}."),
    "routine.gym": ("我每{days}{t}去健身", "我现在改成每{days}{t}去健身", "I go to the gym on {days} at {t}.",
                    "I now go to the gym on {days} at {t}."),
    "routine.bedtime": ("我一般{t}睡觉", "最近我改成{t}睡了", "I usually go to bed at {t}.", "Lately I go to bed at {t}."),
    "app.music": ("听歌我习惯用{app}", "我现在听歌改用{app}了", "I listen to music on {app}.",
                  "I've switched to {app} for music."),
    "device.night_brightness": ("晚上把屏幕亮度调到{level}%就好", "晚上的屏幕亮度我现在喜欢{level}%",
                                "At night I keep the screen brightness at {level}%.",
                                "At night I now prefer {level}% brightness."),
    "device.dnd": ("每天{start}到第二天{end}帮我开免打扰", "免打扰时间改成{start}到{end}",
                   "Keep do not disturb on from {start} to {end} every night.",
                   "My do not disturb hours are now {start} to {end}."),
    "travel.mode": ("出门我更喜欢{how}", "我现在出门都{how}了", "I prefer to get around {how}.", "I get around {how} now."),
    "travel.driving": ("开车的时候我习惯{say}", "开车我现在改成{say}了", "When I drive I prefer {say}.",
                       "When driving I now prefer {say}."),
    "travel.ride": ("打车我一般叫{say}", "打车我现在都叫{say}", "When I take a ride I book {say}.",
                    "I now book {say} when I take a ride."),
    "fact.allergy": ("我对{allergen}过敏", "", "I'm allergic to {allergen}.", ""),
    "fact.car_plate": ("我的车牌号是{plate}", "", "My car's plate number is {plate}.", ""),
}


def kind_of(key: str) -> str:
    """The kind of a record key: ``person.mother`` → ``person``, ``person.mother.birthday`` → ``person.birthday``,
    any other key is its own kind."""
    parts = key.split(".")
    return key if parts[0] != "person" else "person" if len(parts) == 2 else "person." + parts[-1]


def _sentence(key: str, value: Mapping[str, Any], lang: str, changed: bool) -> str:
    """The record's text in ``lang`` (:data:`TEMPLATES`)."""
    words = 0 if lang == "zh" else 1
    fields = dict(value)
    if "place" in value:
        fields["name"] = value["place"].name
    for name in ("time", "start", "end"):
        if name in value:
            fields["t" if name == "time" else name] = _clock(value[name], lang)
    if "mode" in value:
        fields["how"] = MODE_SAY[value["mode"]][words]
    if "role" in value:
        fields["rel"] = ROLES[value["role"]][words]
    if "month" in value:
        fields["month_name"] = MONTHS[value["month"] - 1]
    if "days" in value:
        fields["days"] = _days(value["days"], lang)
    if "app" in value:
        fields["app"] = MUSIC_APPS[value["app"]][words]
    if "preference" in value:
        fields["say"] = DRIVING_SAY[value["preference"]][words]
    if "ride_type" in value:
        fields["say"] = RIDE_SAY[value["ride_type"]][words]
    if "allergen" in value and words:
        fields["allergen"] = ALLERGENS[value["allergen"]]
    plain, when_changed = TEMPLATES[kind_of(key)][2 * words:2 * words + 2]
    return (when_changed if changed and when_changed else plain).format(**fields)


#: Ways to ask the memory about each kind of record ({rel}: the person's role), per language. The first is the
#: oracle's ``search_memory`` query; the others are paraphrases that measure retrieval (tests, benchmark).
QUERIES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "place.home": (("家庭住址", "我住哪里", "我家在哪", "我住的小区", "回家的地址"),
                   ("home address", "where do I live", "where's my house", "my apartment", "the place I live")),
    "place.work": (("上班的公司", "我在哪上班", "公司地址", "我的工作单位", "上班的地方"),
                   ("work place", "where do I work", "office address", "my job", "company I work for")),
    "place.school": (("孩子的学校", "孩子在哪上学", "学校在哪", "接孩子去哪"),
                     ("kid school", "where does my kid go to school", "my child's school", "school address")),
    "place.gym": (("健身房", "我去哪健身", "平时锻炼的地方", "运动的地方"),
                  ("gym", "where do I work out", "my fitness club", "place I exercise")),
    "person": (("{rel}叫什么", "{rel}是谁", "我{rel}", "{rel}的名字"),
               ("my {rel}'s name", "who is my {rel}", "my {rel}", "name of my {rel}")),
    "person.birthday": (("{rel}的生日", "{rel}哪天生日", "{rel}生日几号", "{rel}出生日期"),
                        ("{rel} birthday", "when is my {rel}'s birthday", "{rel} born", "birthday of my {rel}")),
    "routine.wake_up": (("起床时间", "我几点起床", "每天几点醒", "早上闹钟几点"),
                        ("wake up time", "what time do I get up", "when do I wake", "morning alarm")),
    "routine.commute": (("出门上班", "我怎么去上班", "通勤方式", "几点出门去公司"),
                        ("leave for work", "how do I commute", "how I get to the office", "commute time")),
    "routine.gym": (("去健身的时间", "哪天去健身", "锻炼安排", "每周运动几次"),
                    ("work out days", "when do I go to the gym", "exercise schedule", "workout routine")),
    "routine.bedtime": (("睡觉时间", "我几点睡", "晚上几点上床", "作息 睡眠"),
                        ("go to bed", "bedtime", "what time do I sleep", "when do I go to sleep")),
    "app.music": (("听歌用的app", "用什么听音乐", "常用的音乐软件", "放歌用哪个"),
                  ("music app", "which app for songs", "where do I listen to music", "favorite music player")),
    "device.night_brightness": (("晚上屏幕亮度", "夜间亮度", "晚上屏幕调多亮", "屏幕太亮刺眼"),
                                ("screen brightness at night", "night brightness", "how bright at night",
                                 "dim the display at night")),
    "device.dnd": (("免打扰时间", "几点开勿扰", "晚上静音时段", "别打扰我的时间"),
                   ("do not disturb hours", "dnd schedule", "quiet hours", "when to mute notifications")),
    "travel.mode": (("出门更喜欢", "出行方式", "平时怎么出门", "交通偏好"),
                    ("get around", "how do I prefer to travel", "preferred way of getting around",
                     "do I drive or take the metro")),
    "travel.driving": (("开车的时候习惯", "开车偏好", "开车走什么路线", "开车要不要走高速"),
                       ("when I drive prefer", "driving preference", "route preference for driving",
                        "highways or not when driving")),
    "travel.ride": (("打车叫什么车", "网约车车型", "叫车偏好", "打车选哪种"),
                    ("take a ride book", "which car do I book for a taxi", "preferred ride class", "taxi preference")),
    "fact.allergy": (("过敏", "我对什么过敏", "过敏源", "吃药要注意过敏吗"),
                     ("allergic", "what am I allergic to", "allergies", "allergy information")),
    "fact.car_plate": (("车牌号", "我的车牌", "车的牌照", "车牌是多少"),
                       ("car plate number", "my license plate", "car registration", "plate of my car")),
}


def memory_queries(key: str, lang: str) -> tuple[str, ...]:
    """The :data:`QUERIES` of a record key in ``lang`` (``{rel}`` filled in); the first is the oracle's."""
    role = key.split(".")[1] if key.startswith("person.") else None
    words = 0 if lang == "zh" else 1
    return tuple(q.replace("{rel}", ROLES[role][words]) if role else q for q in QUERIES[kind_of(key)][words])


def oracle_query(profile: UserProfile, key: str, rows: list[dict[str, Any]] | None = None) -> str | None:
    """The first of :func:`memory_queries` (in the profile's language) whose ``search_memory`` (default
    ``top_k``) returns every record of ``key`` among ``rows`` (default: the profile's own records), or None
    when none does (a generator then drops the task or reads the records by id)."""
    table = [(r["memory_id"], r["content"], r["category"], r["created_at"], r.get("updated_at"), r.get("key"))
             for r in (rows if rows is not None else profile.rows())]
    wanted = {r.memory_id for r in profile.history(key)}
    for query in memory_queries(key, profile.lang):
        if wanted <= {table[i][0] for i, strong in hits(table, query) if strong}:
            return query
    return None


# --------------------------------------------------------------------------------------------- drawing
CATEGORY = {"place": "place", "person": "person", "routine": "schedule", "app": "preference", "device": "preference",
            "travel": "preference", "fact": "fact"}
CONFLICTABLE = ("place.home", "place.work", "place.gym", "routine.wake_up", "routine.commute", "routine.bedtime",
                "routine.gym", "app.music", "device.night_brightness", "device.dnd", "travel.mode", "travel.driving",
                "travel.ride")
PROVINCES = "京沪粤苏浙川鄂湘辽冀豫鲁"


def _times(first: str, last: str, step: int) -> list[str]:
    start, end = int(first[:2]) * 60 + int(first[3:]), int(last[:2]) * 60 + int(last[3:])
    end += 24 * 60 if end < start else 0
    return [f"{(m // 60) % 24:02d}:{m % 60:02d}" for m in range(start, end + 1, step)]


def _options(key: str, rng: random.Random, places: Mapping[str, ProfilePlace]) -> tuple[list[Any], list[Any]]:
    """Values a record of ``key`` may hold: (those that can be the current one, all of them)."""
    home, work = places["home"], places["work"]
    every: list[Any]
    if key == "routine.wake_up":
        every = [{"time": t} for t in _times("05:45", "08:30", 15)]
    elif key == "routine.bedtime":
        every = [{"time": t} for t in _times("22:00", "00:30", 30)]
    elif key == "routine.commute":
        every = [{"time": t, "mode": m} for t in _times("07:00", "09:30", 10) for m in MODE_SAY]
        return [v for v in every if v["mode"] in work.modes], every
    elif key == "routine.gym":
        every = [{"days": tuple(sorted(rng.sample(range(7), rng.randint(2, 3)))), "time": t}
                 for t in _times("18:00", "20:30", 30)]
    elif key == "app.music":
        every = [{"app": app} for app in MUSIC_APPS]
    elif key == "device.night_brightness":
        every = [{"level": level} for level in range(10, 45, 5)]
    elif key == "device.dnd":
        every = [{"start": s, "end": e} for s in _times("21:30", "23:30", 30) for e in _times("06:30", "08:00", 30)]
    elif key == "travel.mode":
        every = [{"mode": m} for m in MODE_SAY]
        return [v for v in every if v["mode"] in home.modes], every
    elif key == "travel.driving":
        every = [{"preference": p} for p in DRIVING_SAY]
        recorded = set(home.preferences) | set(work.preferences)
        return [v for v in every if v["preference"] in recorded] or every, every
    elif key == "travel.ride":
        every = [{"ride_type": r} for r in RIDE_SAY]
    elif key == "fact.allergy":
        every = [{"allergen": a} for a in ALLERGENS]
    elif key == "fact.car_plate":
        tail = "".join(rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ0123456789") for _ in range(5))
        every = [{"plate": f"{rng.choice(PROVINCES)}{rng.choice('ABCDEF')}·{tail}"}]
    else:
        raise ValueError(f"no values for memory key {key!r}")
    return every, every


def _values(key: str, count: int, rng: random.Random, places: Mapping[str, ProfilePlace]) -> list[dict[str, Any]]:
    """``count`` different values, oldest first; the last (the current one) one that can be acted on."""
    current_options, every = _options(key, rng, places)
    current = rng.choice(current_options)
    if key == "routine.commute":  # an older commute used another mode
        every = [v for v in every if v["mode"] != current["mode"]]
    older = [v for v in every if v != current]
    return rng.sample(older, min(count - 1, len(older))) + [current]


def _people(rng: random.Random, lang: str, world: World | None) -> list[dict[str, Any]]:
    """2–4 people: the world's contacts that have a role, or drawn names."""
    if world is not None:
        words = {word: role for role, pair in ROLES.items() for word in pair}
        known = [{"role": words[c["relation"]], "name": c["name"], "contact_id": c["contact_id"]}
                 for c in world.contacts if c.get("relation") in words]
        return rng.sample(known, min(len(known), rng.randint(2, 4)))
    people = []
    for role in rng.sample(sorted(ROLES), rng.randint(2, 4)):
        name = rng.choice(ZH_SURNAMES) + rng.choice(ZH_GIVEN) if lang == "zh" or rng.random() < 0.5 else \
            f"{rng.choice(EN_FIRST)} {rng.choice(EN_LAST)}"
        people.append({"role": role, "name": name, "contact_id": None})
    return people


def _memory_id(rng: random.Random, used: set[str]) -> str:
    while True:
        memory_id = f"mem-{rng.getrandbits(32):08x}"
        if memory_id not in used:
            used.add(memory_id)
            return memory_id


def build_profile(rng: random.Random, lang: str, world: World | None = None) -> UserProfile:
    """A coherent user (see the module docstring) drawn from ``rng`` only; with ``world``, its language, clock and
    contacts are the world's."""
    if world is not None:
        lang, now = world.lang, world.now
    else:
        now = dt.datetime(2026, 1, 5, rng.randint(7, 21), rng.choice((0, 15, 30, 45))) + \
            dt.timedelta(days=rng.randrange(330))
    cities = city_places()
    city = rng.choice([c for c, places in cities.items() if len(places) >= 2])
    pool = list(cities[city])

    histories: dict[str, list[dict[str, Any]]] = {}
    places: dict[str, ProfilePlace] = {}
    school = len(pool) >= 3 and any(_SCHOOL.search(p.name) for p in pool) and rng.random() < 0.7
    for label, pattern, wanted in (("school", _SCHOOL, school), ("home", _RESIDENTIAL, True), ("work", None, True),
                                   ("gym", _GYM_LIKE, rng.random() < 0.7)):
        if wanted and pool:  # home and work always: every city kept has two places
            places[label] = _pick(rng, pool, pattern)
            histories[f"place.{label}"] = [{"place": places[label]}]
    candidates = [k for k in CONFLICTABLE if not k.startswith("place.") or k in histories]
    rng.shuffle(candidates)
    conflicts: list[str] = []
    wanted_conflicts = rng.randint(2, 4)
    for key in candidates:  # (a place conflict is skipped when the city has no place left)
        if len(conflicts) == wanted_conflicts:
            break
        if key.startswith("place.") and not pool:
            continue
        conflicts.append(key)
        if key.startswith("place."):  # one or two older places of the same kind, while the city has some left
            for _ in range(rng.randint(1, min(2, len(pool)))):
                histories[key].insert(0, {"place": _pick(rng, pool, _RESIDENTIAL if key == "place.home" else
                                                         _GYM_LIKE if key == "place.gym" else None)})
    for key in ("routine.wake_up", "routine.commute", "routine.gym", "routine.bedtime", "app.music",
                "device.night_brightness", "device.dnd", "travel.mode", "travel.driving", "travel.ride"):
        histories[key] = _values(key, rng.randint(2, 3) if key in conflicts else 1, rng, places)
    drives = "driving" in (histories["travel.mode"][-1]["mode"], histories["routine.commute"][-1]["mode"])
    for key, wanted in (("fact.allergy", rng.random() < 0.6), ("fact.car_plate", drives and rng.random() < 0.8)):
        if wanted:
            histories[key] = _values(key, 1, rng, places)
    people = _people(rng, lang, world)
    for person in people:
        histories[f"person.{person['role']}"] = [person]
    for person in rng.sample(people, min(len(people), rng.randint(1, 2))):
        birthday = {"role": person["role"], "month": rng.randint(1, 12), "day": rng.randint(1, 28)}
        histories[f"person.{person['role']}.birthday"] = [birthday]

    records: list[MemoryRecord] = []
    used: set[str] = set()
    for key, values in histories.items():
        ages = sorted(rng.sample(range(2, 722, 10), len(values)), reverse=True)  # days back, oldest first
        for index, (value, age) in enumerate(zip(values, ages)):
            day = (now - dt.timedelta(days=age)).date()
            when = f"{day.isoformat()} {rng.randint(7, 22):02d}:{rng.randrange(0, 60, 5):02d}"
            changed = index > 0 and rng.random() < 0.5
            records.append(MemoryRecord(_memory_id(rng, used), key, CATEGORY[key.split(".")[0]],
                                        _sentence(key, value, lang, changed), when, value))
    records.sort(key=lambda r: (r.created_at, r.memory_id))
    return UserProfile(lang, city, now.strftime("%Y-%m-%d %H:%M"), tuple(records))
