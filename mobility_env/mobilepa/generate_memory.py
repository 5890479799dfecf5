"""Task families of the memory dimension: requests that leave the user's preferences out, so the
assistant has to look them up in its memory of the user.

Each family draws a coherent user profile (:func:`~mobility_env.mobilepa.profile.build_profile`, with the
phone's contacts, clock and language) whose dated records ``S_0`` holds (``Draft.profile``), words a request
that names the preference only by habit ("按我平时的习惯", "the usual way"), and plans the oracle: one
``search_memory`` per record it needs (:func:`~mobility_env.mobilepa.profile.oracle_query`: the query that
returns every record of the key, so both sides of a conflict are in front of the agent), then the phone
operation the record decides. The gate (``MemoryGate``) names the records the task needs: the newest record
of a key (conflict resolution when the key has older ones), or, when the request says "like I used to" /
"像以前那样", the one before it. Its axes: ``reasoning`` (``single_lookup`` / ``conflict_resolution``),
``operation`` (``phone_operation`` / ``memory_modification``) and ``domain`` (the tool domain of the outcome).

Families by category (same ``(rng, world) -> Draft`` contract as :mod:`.generate_maps`):

* grounding: the usual wake-up alarm, the usual music app, the night-time brightness, the usual quiet
  hours (a do-not-disturb schedule), a text to a person named only by role (the contact's relation is
  blank: only the memory says who the boss is), and the memory modifications: a record updated with the
  words the user dictates ("I moved" → ``update_memory`` of the newest home record) and an outdated one
  forgotten (``delete_memory`` of the old gym, or an allergy the user no longer has);
* conditional: tomorrow's alarm an hour before the usual wake-up time if tomorrow is one of the gym days
  (two records decide), "past my usual bedtime: do-not-disturb on; before it: an alarm at my bedtime"
  (both branches act, so finishing after the lookup is never right);
* state tracking: "take me home the usual way" (home and the travel preference from memory, then
  ``maps_search_place`` and ``start_navigation`` on the recorded route), a ride home in the usual car
  class, a move recorded in memory **and** in the maps app's saved home;
* intent correction: the assistant applied the newest record in an earlier turn and the user wants the
  older one back ("不对，按我以前的…");
* error recovery: the phone-operation families with planted obstacles (a failing ``search_memory``, a
  withdrawn permission, a blocking setting).
"""

from __future__ import annotations

import datetime as dt
import random
import re
from typing import Any, Callable, Mapping

from ..canonical import canonical_coordinate
from .generate_oracle import PERMISSION, RUNTIME, STATE, Draft, GenerationError, OracleRun
from .generate_phrases import quote, say, shift_clock
from .generate_world import ALARM_LABELS, World, free_alarm_times, recorded_route
from .profile import (DRIVING_SAY, MODE_SAY, MUSIC_APPS, RIDE_SAY, ROLES, TEMPLATES, MemoryRecord, ProfilePlace,
                      UserProfile, build_profile, city_places, oracle_query)

Family = Callable[[random.Random, World], Draft]

_RESIDENTIAL = re.compile(r"苑|花园|小区|家园|名都|华府|新村|雅居|公寓")  # where a user may move to
_PUBLIC = re.compile(r"机场|站|医院|公安|政府|政务|卫生|风景区|寺|银行|酒店|博物馆|超市|老乡鸡|小吃|火锅")  # where nobody lives or works
USED_TO_RATE = 0.35  # share of requests on a conflicting key that ask for the older record ("like I used to")
READ_TOOLS = ("search_memory", "get_memory", "list_memories")
WRITE_TOOLS = ("update_memory", "delete_memory", "save_memory")
_TRIES = 40


def _label(kind: str, lang: str) -> str:
    index = {"wake": 0, "gym": 1}[kind]
    return ALARM_LABELS[lang][index]


def _profile(rng: random.Random, world: World, need: Callable[[UserProfile], bool]) -> UserProfile:
    """A profile of the world's user that ``need`` accepts (drawn again until one does)."""
    for _ in range(_TRIES):
        profile = build_profile(rng, world.lang, world)
        if need(profile):
            return profile
    raise GenerationError(f"no profile in {_TRIES} draws fits the family")


def _findable(profile: UserProfile, *keys: str) -> bool:
    return all(key in profile.keys() and oracle_query(profile, key) is not None for key in keys)


def _choose(rng: random.Random, profile: UserProfile, key: str, used_to: bool | None = None) -> tuple[MemoryRecord,
                                                                                                      bool]:
    """The record a request on ``key`` means: the newest, or (``used_to``; drawn when None) the one before it."""
    history = profile.history(key)
    if used_to is None:
        used_to = len(history) > 1 and rng.random() < USED_TO_RATE
    return (history[-2] if used_to else history[-1]), used_to


def recall(run: OracleRun, profile: UserProfile, record: MemoryRecord) -> dict[str, Any]:
    """The oracle's ``search_memory`` for ``record``'s key; the record as the search returned it."""
    query = oracle_query(profile, record.key)
    found = run.read("search_memory", {"query": query})["memories"] if query is not None else []
    hit = next((m for m in found if m["memory_id"] == record.memory_id), None)
    if hit is None:
        raise GenerationError(f"{run.task.task_id}: search_memory({query!r}) misses {record.memory_id}")
    return hit


def _memory(draft: Draft, profile: UserProfile, records: list[MemoryRecord], domain: str,
            operation: str = "phone_operation") -> Draft:
    """``draft`` as a memory task: the profile in S0, the memory tools offered, the gate on ``records``."""
    conflict = any(len(profile.history(r.key)) > 1 for r in records)
    draft.dimension, draft.profile = "memory", profile
    draft.offered = READ_TOOLS + (WRITE_TOOLS if operation == "memory_modification" else ())
    draft.reads = tuple(dict.fromkeys(("search_memory",) + draft.reads))
    draft.gate = {"memory_ids": [r.memory_id for r in records], "operation": operation, "domain": domain,
                  "reasoning": "conflict_resolution" if conflict else "single_lookup"}
    return draft


# ------------------------------------------------------------------------------------------------- grounding
Said = tuple[list[str], list[str]]  # (Chinese, English) ways to say it


def _habit(rng: random.Random, world: World, key: str, family: str, bucket: str, domain: str,
           query: Callable[[bool], Said], act: Callable[[Mapping[str, Any]], tuple[str, dict[str, Any]]],
           answer: Callable[[Mapping[str, Any]], Said], kinds: tuple[str, ...] = (RUNTIME,)) \
        -> tuple[Draft, dict[str, Any]]:
    """A request that one record of ``key`` decides (the newest, or the one before it: "like I used to"), and the
    record's value (the family then fits the phone to it)."""
    lang = world.lang
    profile = _profile(rng, world, lambda p: _findable(p, key))
    record, used_to = _choose(rng, profile, key)
    target = act(record.value)
    said = say(rng, lang, *query(used_to))

    def plan(run: OracleRun) -> str:
        recall(run, profile, record)
        run.act(*target)
        return say(rng, lang, *answer(record.value))
    return _memory(Draft(family, bucket, said, plan, [target], obstacle_kinds=kinds), profile, [record],
                   domain), dict(record.value)


def usual_alarm(rng: random.Random, world: World) -> Draft:
    label = _label("wake", world.lang)
    q = quote(label, world.lang)
    draft, value = _habit(
        rng, world, "routine.wake_up", "usual_alarm", "state_change", "time_management",
        lambda used_to: ([f"按我以前起床的时间定个每天的闹钟，标签写{q}"],
                         [f"Set a daily alarm for the time I used to get up, labelled {q}."]) if used_to else
        ([f"按我平时起床的时间帮我定个每天的闹钟，标签写{q}", f"定个每天叫我起床的闹钟，时间按我的习惯，名字叫{q}"],
         [f"Set a daily alarm for when I usually get up, labelled {q}.",
          f"Daily wake-up alarm at my usual time, please; call it {q}."]),
        lambda v: ("create_alarm", {"time": v["time"], "label": label, "repeat": "daily"}),
        lambda v: ([f"已按你的起床时间设置每天{v['time']}的闹钟（{label}）。"],
                   [f"Daily alarm set for {v['time']} ({label}), your wake-up time."]), (RUNTIME, STATE))
    free_alarm_times(world, rng, value["time"])
    return draft


def usual_music(rng: random.Random, world: World) -> Draft:
    words = 0 if world.lang == "zh" else 1
    draft, _ = _habit(
        rng, world, "app.music", "usual_music", "tool_call", "apps_storage",
        lambda used_to: (["想听歌，打开我以前听歌用的那个App"], ["I feel like music: open the app I used to listen on."])
        if used_to else (["想听歌了，打开我平时听歌用的App", "帮我打开常用的音乐软件"],
                         ["Open my usual music app.", "I want some music, open the app I normally use."]),
        lambda v: ("open_app", {"app": v["app"]}),
        lambda v: ([f"已打开{MUSIC_APPS[v['app']][words]}。"], [f"Opened {MUSIC_APPS[v['app']][words]}."]))
    listed = {row["app"]: row for row in world.apps}
    for old in draft.profile.history("app.music"):  # every music app the user ever named is installed, none running
        row = listed.get(old.value["app"])
        if row is None:
            world.apps.append({"app": old.value["app"], "installed": 1, "running": 0})
        else:
            row.update(installed=1, running=0)
    return draft


def night_brightness(rng: random.Random, world: World) -> Draft:
    draft, _ = _habit(
        rng, world, "device.night_brightness", "night_brightness", "tool_call", "display_sound",
        lambda used_to: (["屏幕太亮了，调回我以前晚上用的亮度"],
                         ["Too bright: put the screen back to the night brightness I used to have."]) if used_to else
        (["晚上了，把屏幕亮度调成我晚上习惯的", "屏幕太刺眼了，按我晚上的习惯调一下亮度"],
         ["Dim the screen like I like it at night.", "It's late, set the brightness the way I keep it at night."]),
        lambda v: ("set_brightness", {"level": v["level"]}),
        lambda v: ([f"已把亮度调到{v['level']}%。"], [f"Brightness set to {v['level']}%."]), (RUNTIME, STATE))
    world.settings.update(brightness=str(rng.choice(range(50, 95, 5))), auto_brightness="off")
    return draft


def quiet_hours(rng: random.Random, world: World) -> Draft:
    draft, _ = _habit(
        rng, world, "device.dnd", "quiet_hours", "tool_call", "display_sound",
        lambda used_to: (["把免打扰时段设回我以前用的那个时间"], ["Schedule do not disturb for the hours I used to keep."])
        if used_to else (["按我平时的免打扰时间，设一个每天的勿扰时段", "帮我把勿扰时段按我的习惯定好"],
                         ["Schedule do not disturb for my usual quiet hours.",
                          "Set up my nightly do-not-disturb the usual way."]),
        lambda v: ("set_dnd_schedule", {"enabled": True, "start": v["start"], "end": v["end"]}),
        lambda v: ([f"已设置每天{v['start']}到{v['end']}免打扰。"],
                   [f"Do not disturb is scheduled {v['start']}–{v['end']} daily."]))
    return draft


OUTGOING = {"zh": ("我晚点到", "今天请个假", "会议资料发你了", "我已经出发了"),
            "en": ("Running late", "Taking the day off today", "Sent you the meeting notes", "On my way")}


def text_person(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    profile = _profile(rng, world, lambda p: any(_findable(p, k) for k in p.keys()
                                                 if k.count(".") == 1 and k.startswith("person.")))
    keys = [k for k in profile.keys() if k.count(".") == 1 and k.startswith("person.") and _findable(profile, k)]
    record = profile.current(rng.choice(keys))
    person = record.value
    contact = next(c for c in world.contacts if c["contact_id"] == person["contact_id"])
    contact["relation"] = ""  # the phone does not say who they are: only the memory does
    role = ROLES[person["role"]][0 if lang == "zh" else 1]
    text = rng.choice(OUTGOING[lang])
    q = quote(text, lang)
    target = ("send_message", {"contact_id": contact["contact_id"], "text": text})
    query = say(rng, lang, [f"给我{role}发条短信说{q}", f"跟我{role}说一声{q}"],
                [f"Text my {role}: {q}", f"Let my {role} know {q}."])

    def plan(run: OracleRun) -> str:
        recall(run, profile, record)
        found = run.find_contact(person["name"], name=person["name"])
        run.act("send_message", {"contact_id": found["contact_id"], "text": text})
        return say(rng, lang, [f"已给{role}{person['name']}发送：{text}"], [f"Texted your {role}, {person['name']}: {text}"])
    return _memory(Draft("text_person", rng.choice(("tool_call", "state_change")), query, plan, [target],
                         reads=("search_contacts",), obstacle_kinds=(RUNTIME, PERMISSION, STATE)),
                   profile, [record], "calls_communication")


#: Records a user may dictate an update of: (reason said in Chinese, in English).
UPDATES = {"place.home": ("我搬家了", "I've moved."), "place.work": ("我换工作了", "I changed jobs."),
           "travel.driving": ("我开车的习惯变了", "My driving habits changed."),
           "travel.ride": ("我打车的习惯变了", "I book rides differently now.")}


def _new_value(rng: random.Random, profile: UserProfile, key: str) -> dict[str, Any] | None:
    """A value for ``key`` that none of its records holds (a place of the profile's city nobody uses)."""
    if key.startswith("place."):
        taken = {r.value["place"].name for r in profile.records if "place" in r.value}
        free = [p for p in city_places()[profile.city] if p.name not in taken and not _PUBLIC.search(p.name)]
        homes = [p for p in free if _RESIDENTIAL.search(p.name)] if key == "place.home" else []
        return {"place": rng.choice(homes or free)} if free else None
    field, table = ("preference", DRIVING_SAY) if key == "travel.driving" else ("ride_type", RIDE_SAY)
    held = {r.value[field] for r in profile.history(key)}
    free_values = [v for v in table if v not in held]
    return {field: rng.choice(free_values)} if free_values else None


def _dictated(key: str, value: dict[str, Any], lang: str) -> str:
    words = 0 if lang == "zh" else 1
    form = TEMPLATES[key][1 + 2 * words]
    if "place" in value:
        return form.format(name=value["place"].name)
    table, field = (DRIVING_SAY, "preference") if key == "travel.driving" else (RIDE_SAY, "ride_type")
    return form.format(say=table[value[field]][words])


def update_record(rng: random.Random, world: World, save_home: bool = False) -> Draft:
    """The user dictates what a record should say now; ``save_home``: a move, also saved in the maps app."""
    lang = world.lang
    keys = ("place.home",) if save_home else tuple(UPDATES)
    profile = _profile(rng, world, lambda p: any(_findable(p, k) and _new_value(random.Random(0), p, k) is not None
                                                 for k in keys))
    key = rng.choice([k for k in keys if _findable(profile, k) and _new_value(random.Random(0), profile, k)])
    record = profile.current(key)
    value = _new_value(rng, profile, key)
    assert value is not None
    content = _dictated(key, value, lang)
    reason = UPDATES[key][0 if lang == "zh" else 1]
    targets: list[tuple[str, dict[str, Any]]] = [
        ("update_memory", {"memory_id": record.memory_id, "content": content})]
    place: ProfilePlace | None = value.get("place")
    if save_home:
        assert place is not None
        old = record.value["place"]
        world.settings.update(current_city=profile.city, current_location=place.origin)
        world.extra["saved_places"] = [{"label": "home", "location": canonical_coordinate(old.location)}]
        targets.append(("save_place", {"label": "home", "location": place.location, "replace": True}))
        query = say(rng, lang, [f"{reason}，新家在{place.name}。把你记的家庭住址改成“{content}”，地图里的家也改成新地址"],
                    [f'{reason} My new home is {place.name}. Update what you remember to "{content}" and move '
                     f"home in the maps app there too."])
    else:
        query = say(rng, lang, [f"{reason}，把你记着的这条更新一下，就记成“{content}”"],
                    [f'{reason} Update what you remember about it to: "{content}"'])

    def plan(run: OracleRun) -> str:
        recall(run, profile, record)
        run.act("update_memory", {"memory_id": record.memory_id, "content": content})
        if save_home:
            assert place is not None
            found = run.read("maps_search_place", {"keywords": place.name})["result"]
            if canonical_coordinate(found.get("location")) != canonical_coordinate(place.location):
                raise GenerationError(f"{run.task.task_id}: {place.name!r} is not found where it was recorded")
            run.act("save_place", {"label": "home", "location": found["location"], "replace": True})
            return say(rng, lang, ["已更新记忆，地图里的家也改到了新地址。"],
                       ["Memory updated, and home in the maps app now points to the new address."])
        return say(rng, lang, [f"已更新：{content}"], [f"Updated: {content}"])
    draft = Draft("update_record" + ("_and_maps" if save_home else ""), "state_change", query, plan, targets,
                  reads=("maps_search_place",) if save_home else ())
    return _memory(draft, profile, [record], "ai_assistant", "memory_modification")


def forget_record(rng: random.Random, world: World) -> Draft:
    """An outdated place the user no longer goes to (an older record of a conflict), or an allergy they lost."""
    lang = world.lang

    def candidates(profile: UserProfile) -> list[MemoryRecord]:
        out = [r for k in ("place.home", "place.work", "place.gym") if k in profile.keys() and _findable(profile, k)
               for r in profile.history(k)[:-1]]
        return out + ([profile.current("fact.allergy")] if _findable(profile, "fact.allergy") else [])
    profile = _profile(rng, world, lambda p: bool(candidates(p)))
    record = rng.choice(candidates(profile))
    if record.key == "fact.allergy":
        allergen = record.value["allergen"]
        query = say(rng, lang, [f"我已经不对{allergen}过敏了，把这条记忆删掉吧"],
                    ["I'm no longer allergic to that — forget my allergy record."])
    else:
        name = record.value["place"].name
        query = say(rng, lang, {"place.home": [f"我早就不住{name}了，把那条旧的记忆删掉"],
                                "place.work": [f"我已经不在{name}上班了，把那条旧记忆删了"],
                                "place.gym": [f"我不去{name}那家健身房了，把那条记忆删掉"]}[record.key],
                    {"place.home": [f"I haven't lived at {name} for ages; delete that old memory."],
                     "place.work": [f"I no longer work at {name}; forget that old record."],
                     "place.gym": [f"I stopped going to the gym at {name}; delete that memory."]}[record.key])
    target = ("delete_memory", {"memory_id": record.memory_id})

    def plan(run: OracleRun) -> str:
        recall(run, profile, record)
        run.act(*target)
        return say(rng, lang, ["已删除这条记忆。"], ["Done, I've forgotten it."])
    return _memory(Draft("forget_record", "state_change", query, plan, [target]), profile, [record], "ai_assistant",
                   "memory_modification")


# ------------------------------------------------------------------------------------------------- conditional
def gym_day_alarm(rng: random.Random, world: World) -> Draft:
    """Tomorrow's wake-up alarm: an hour before the usual wake-up time on a gym day (both records decide)."""
    lang = world.lang
    profile = _profile(rng, world, lambda p: _findable(p, "routine.gym", "routine.wake_up"))
    gym, wake = profile.current("routine.gym"), profile.current("routine.wake_up")
    gym_day = rng.random() < 0.5
    shift = next(k for k in range(7) if ((world.today.weekday() + k + 1) % 7 in gym.value["days"]) == gym_day)
    world.move_to(world.today + dt.timedelta(days=shift))
    time = shift_clock(wake.value["time"], -60 if gym_day else 0)
    label = _label("wake", lang)
    free_alarm_times(world, rng, time, label=label)
    target = ("create_alarm", {"time": time, "label": label})
    q = quote(label, lang)
    query = say(rng, lang, [f"帮我定个明早的闹钟，标签写{q}：明天要是我的健身日，就比我平时起床早一个小时，不是就按平时起床的时间"],
                [f"Set an alarm for tomorrow morning labelled {q}: an hour before my usual wake-up time if tomorrow is "
                 "one of my gym days, otherwise at my usual time."])

    def plan(run: OracleRun) -> str:
        recall(run, profile, gym)
        recall(run, profile, wake)
        run.settings()  # today's date: is tomorrow a gym day?
        run.act(*target)
        return say(rng, lang, [f"明天{'是' if gym_day else '不是'}健身日，已定{time}的闹钟（{label}）。"],
                   [f"Tomorrow is {'a' if gym_day else 'not a'} gym day: alarm set for {time} ({label})."])
    draft = Draft("gym_day_alarm", "state_change", query, plan, [target], reads=("get_device_status",),
                  obstacle_kinds=(RUNTIME, STATE))
    return _memory(draft, profile, [gym, wake], "time_management")


def _minutes(hhmm: str, wrap: bool = False) -> int:
    value = int(hhmm[:2]) * 60 + int(hhmm[3:])
    return value + 24 * 60 if wrap and value < 12 * 60 else value


def late_quiet(rng: random.Random, world: World) -> Draft:
    """Past the usual bedtime: do-not-disturb on; before it: an alarm at the bedtime, to go to bed."""
    lang = world.lang
    profile = _profile(rng, world, lambda p: _findable(p, "routine.bedtime"))
    record = profile.current("routine.bedtime")
    bedtime = _minutes(record.value["time"], wrap=True)
    want = rng.random() < 0.5
    clocks = [m for m in range(21 * 60, 24 * 60, 15) if (m >= bedtime) == want] or \
        [m for m in range(21 * 60, 24 * 60, 15)]
    now = rng.choice(clocks)
    past = now >= bedtime
    world.now = world.now.replace(hour=now // 60, minute=now % 60)
    world.settings.update(clock=world.now.strftime("%Y-%m-%d %H:%M"), do_not_disturb="off")
    label = {"zh": "睡觉", "en": "Bedtime"}[lang]
    free_alarm_times(world, rng, record.value["time"], label=label)
    target = ("set_do_not_disturb", {"on": True}) if past else \
        ("create_alarm", {"time": record.value["time"], "label": label})
    q = quote(label, lang)
    query = say(rng, lang, [f"要是已经过了我平时睡觉的点，就帮我开免打扰；还没到的话，就在我睡觉的时间定个闹钟，标签写{q}"],
                [f"If it's past my usual bedtime, turn on do not disturb; if not, set an alarm for my bedtime "
                 f"labelled {q}."])

    def plan(run: OracleRun) -> str:
        recall(run, profile, record)
        run.settings()
        run.act(*target)
        if not past:
            return say(rng, lang, [f"还没到你平时睡觉的时间，已定{record.value['time']}的闹钟（{label}）。"],
                       [f"Not your bedtime yet: alarm set for {record.value['time']} ({label})."])
        return say(rng, lang, ["已经过了你的睡觉时间，免打扰已打开。"], ["It's past your bedtime: do not disturb is on."])
    draft = Draft("late_quiet", "tool_call", query, plan, [target], reads=("get_device_status",),
                  obstacle_kinds=(RUNTIME,) if past else (RUNTIME, STATE))
    return _memory(draft, profile, [record], "display_sound" if past else "time_management")


# ------------------------------------------------------------------------------------------------- state tracking
def _usual_route(profile: UserProfile) -> tuple[Any, list[MemoryRecord]] | None:
    """The route home the user's travel records choose, and those records (None when it was never recorded)."""
    home = profile.place("home")
    if home is None or not _findable(profile, "place.home", "travel.mode"):
        return None
    mode_record = profile.current("travel.mode")
    mode = mode_record.value["mode"]
    records = [profile.current("place.home"), mode_record]
    preference = ""
    if mode == "driving":
        if not _findable(profile, "travel.driving"):
            return None
        records.append(profile.current("travel.driving"))
        preference = records[-1].value["preference"]
    route = recorded_route(home, mode, preference)
    return (route, records) if route is not None else None


def _locate(run: OracleRun, place: ProfilePlace) -> str:
    found = run.read("maps_search_place", {"keywords": place.name})["result"]
    if canonical_coordinate(found.get("location")) != canonical_coordinate(place.location):
        raise GenerationError(f"{run.task.task_id}: {place.name!r} is not found where it was recorded: {found}")
    return found["location"]


def _at_origin(world: World, profile: UserProfile, place: ProfilePlace) -> None:
    world.settings.update(current_location=place.origin, current_city=profile.city, location="on")


def home_usual_way(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    profile = _profile(rng, world, lambda p: _usual_route(p) is not None)
    found = _usual_route(profile)
    assert found is not None
    route, records = found
    home = profile.place("home")
    assert home is not None
    _at_origin(world, profile, home)
    query = say(rng, lang, ["带我回家，按我平时的习惯", "导航回家，老规矩", "回家，按我平常的出行方式导航"],
                ["Take me home the usual way.", "Navigate home, the way I usually go.", "Home, please — my usual way."])

    def plan(run: OracleRun) -> str:
        for record in records:
            recall(run, profile, record)
        nav = run.act("start_navigation", {"destination": _locate(run, home), **route.call()}).payload
        how = MODE_SAY[route.mode][0 if lang == "zh" else 1]
        return say(rng, lang, [f"已按你的习惯{how}导航回家，预计{nav['eta'][11:]}到达。"],
                   [f"Navigating home {how}, as you usually go; arriving around {nav['eta'][11:]}."])
    draft = Draft("home_usual_way", "state_change", query, plan,
                  [("start_navigation", {"destination": home.location, **route.call()})],
                  reads=("maps_search_place",), obstacle_kinds=(RUNTIME, PERMISSION, STATE))
    return _memory(draft, profile, records, "maps_travel")


def ride_home_usual(rng: random.Random, world: World) -> Draft:
    lang = world.lang

    def fits(profile: UserProfile) -> bool:
        home = profile.place("home")
        return home is not None and _findable(profile, "place.home", "travel.ride") and \
            recorded_route(home, "driving") is not None
    profile = _profile(rng, world, fits)
    home = profile.place("home")
    assert home is not None
    _at_origin(world, profile, home)
    records = [profile.current("place.home"), profile.current("travel.ride")]
    ride_type = records[1].value["ride_type"]
    query = say(rng, lang, ["帮我叫辆车回家，还是叫我常坐的那种", "叫车回家，车型按老习惯"],
                ["Get me a ride home, the kind of car I usually book.", "Book my usual ride home."])

    def plan(run: OracleRun) -> str:
        for record in records:
            recall(run, profile, record)
        done = run.act("book_ride", {"destination": _locate(run, home), "ride_type": ride_type}).payload
        car = RIDE_SAY[ride_type][0 if lang == "zh" else 1]
        return say(rng, lang, [f"已叫{car}回家，预估{done['fare_estimate']:g}元。"],
                   [f"Booked {car} home, about {done['fare_estimate']:g} yuan."])
    draft = Draft("ride_home_usual", "state_change", query, plan,
                  [("book_ride", {"destination": home.location, "ride_type": ride_type})],
                  reads=("maps_search_place",), obstacle_kinds=(RUNTIME, PERMISSION, STATE))
    return _memory(draft, profile, records, "maps_travel")


def moved_home(rng: random.Random, world: World) -> Draft:
    return update_record(rng, world, save_home=True)


# ------------------------------------------------------------------------------------------------- intent correction
def older_setting(rng: random.Random, world: World) -> Draft:
    """The earlier turn applied the newest record; the user wants the one before it."""
    lang = world.lang
    keys = ("device.night_brightness", "routine.wake_up")
    profile = _profile(rng, world, lambda p: any(_findable(p, k) and len(p.history(k)) > 1 for k in keys))
    key = rng.choice([k for k in keys if _findable(profile, k) and len(profile.history(k)) > 1])
    newest, older = profile.history(key)[-1], profile.history(key)[-2]
    if key == "device.night_brightness":
        world.settings.update(brightness=str(newest.value["level"]), auto_brightness="off")
        level = older.value["level"]
        target: tuple[str, dict[str, Any]] = ("set_brightness", {"level": level})
        history = [say(rng, lang, ["把亮度调成我晚上习惯的"], ["Set the brightness the way I like it at night."]),
                   say(rng, lang, [f"已按你的习惯把亮度调到{newest.value['level']}%。"],
                       [f"Done, brightness is at your usual {newest.value['level']}%."])]
        query = say(rng, lang, ["不对，调回我以前晚上用的那个亮度"], ["No — go back to the night brightness I used to use."])
        answer = say(rng, lang, [f"已调回以前的{level}%。"], [f"Back to your old {level}%."])
    else:
        label = _label("wake", lang)
        free_alarm_times(world, rng, newest.value["time"], older.value["time"])
        alarm = world.add_alarm(newest.value["time"], label, "daily")
        target = ("update_alarm", {"alarm_id": alarm["alarm_id"], "time": older.value["time"]})
        history = [say(rng, lang, ["按我起床的时间定个每天的闹钟"], ["Set a daily alarm for when I get up."]),
                   say(rng, lang, [f"已设置每天{newest.value['time']}的闹钟（{label}）。"],
                       [f"Daily alarm set for {newest.value['time']} ({label})."])]
        query = say(rng, lang, ["不对，改成我以前起床的那个时间"], ["No, make it the time I used to get up."])
        answer = say(rng, lang, [f"已把闹钟改到{older.value['time']}。"], [f"Moved the alarm to {older.value['time']}."])

    def plan(run: OracleRun) -> str:
        recall(run, profile, older)
        if target[0] == "update_alarm":
            alarms = [a for a in run.read("list_alarms")["alarms"] if a["time"] == newest.value["time"]]
            run.act("update_alarm", {"alarm_id": alarms[0]["alarm_id"], "time": older.value["time"]})
        else:
            run.act(*target)
        return answer
    turns = [{"role": "user", "content": history[0]}, {"role": "assistant", "content": history[1]}]
    draft = Draft("older_setting", "tool_call", query, plan, [target], history=turns,
                  reads=("list_alarms",) if target[0] == "update_alarm" else ())
    return _memory(draft, profile, [older], "display_sound" if target[0] == "set_brightness" else "time_management")


#: The families of each behaviour category (the generator draws a memory task's family from its category's).
FAMILIES: dict[str, tuple[Family, ...]] = {
    "grounding": (usual_alarm, usual_music, night_brightness, quiet_hours, text_person, update_record, forget_record),
    "conditional": (gym_day_alarm, late_quiet),
    "state_tracking": (home_usual_way, ride_home_usual, moved_home),
    "intent_correction": (older_setting,),
    "error_recovery": (usual_alarm, night_brightness, text_person, home_usual_way, ride_home_usual)
}
