"""Task families of the skill dimension: routines the skill library packages, reached by loading the skill.

Each family asks for what a skill of :data:`~mobility_env.mobilepa.skills.SKILLS` exists for (a bedtime
routine, a focus session, a battery rescue, a storage cleanup, a departure reminder for the next meeting,
drive mode) with the values the routine needs stated in the request, and plans the oracle: ``load_skill``
of the gold skill first, then the routine's calls through the tools the load offers. :func:`_skilled`
makes the draft a skill task:

* ``S_0`` offers the gold skill and 1–3 distractor skills (``Draft.skills``), none of which shares a tool
  with what the task needs (so no distractor hides a tool the plan uses outside its skill);
* routing (``SkillGate.routing``): ``skill_only`` — every offered skill's tools are kept out of ``A_0``
  (``Draft.hidden``), loading is the only way to them — or ``mixed`` (:data:`MIXED_RATE` of the tasks whose
  routine uses two skill tools or more): some of the routine's tools are offered directly, never all, so
  the outcome still needs the load;
* the gate (``SkillGate``) passes when the gold skill was loaded and one of its tools succeeded after.

Families by category (same ``(rng, world) -> Draft`` contract as :mod:`.generate_maps`):

* grounding: bedtime (do-not-disturb, tomorrow's alarm switched on or created, brightness, media
  volume), focus (do-not-disturb, ringer, a labelled timer), battery rescue (saver, brightness, 60 Hz,
  always-on display off), storage cleanup (the app with the largest cache, then the trash);
* conditional: "if the battery is below 20 %, run the battery rescue; otherwise just lower the brightness"
  (the level ``get_battery_status`` reads decides);
* state tracking: a departure reminder for tomorrow's meeting (its place read from the calendar, found on
  the map, the reminder set to arrive by its start), drive mode (car Bluetooth, do-not-disturb, navigation
  to a recorded place);
* intent correction: a bedtime or focus routine the earlier turn proposed, with one value changed;
* error recovery: the routines above with planted obstacles.
"""

from __future__ import annotations

import datetime as dt
import random
from typing import Any, Callable

from ..canonical import canonical_coordinate
from .generate_oracle import PERMISSION, RUNTIME, STATE, Draft, GenerationError, OracleRun
from .generate_phrases import quote, say, say_clock
from .generate_world import ALARM_LABELS, EVENT_TITLES, World, atlas, clear_slot, free_alarm_times
from .skills import LOAD_SKILL, SKILLS

Family = Callable[[random.Random, World], Draft]

MIXED_RATE = 0.4
#: Tools the oracle may call outside a skill, to clear planted obstacles (no distractor skill may hide them).
RECOVERY = ("grant_permission", "set_airplane_mode", "set_auto_brightness", "set_ringer_mode", "set_location_service",
            "get_device_status")
FOCUS_LABEL = {"zh": "专注", "en": "Focus"}


def _skilled(rng: random.Random, draft: Draft, gold: str, uses: tuple[str, ...], also: tuple[str, ...] = ()) -> Draft:
    """``draft`` as a skill task on ``gold``, whose plan calls ``uses`` (the skill's tools it needs) and may call
    ``also`` (other tools): offered skills, routing, hidden and direct tools, the gate (module docstring)."""
    skill = SKILLS[gold]
    needed = set(skill.tools) | set(uses) | set(also) | set(RECOVERY)
    candidates = [s for s in SKILLS if s != gold and not set(SKILLS[s].tools) & needed]
    offered = [gold] + rng.sample(candidates, min(len(candidates), rng.randint(1, 3)))
    rng.shuffle(offered)
    routine = [t for t in dict.fromkeys(uses) if t in skill.tools]
    mixed = len(routine) >= 2 and rng.random() < MIXED_RATE
    direct = tuple(sorted(rng.sample(routine, rng.randint(1, len(routine) - 1)))) if mixed else ()
    draft.dimension, draft.skills = "skill", tuple(offered)
    draft.offered = direct + (LOAD_SKILL,)
    draft.hidden = frozenset(t for s in offered for t in SKILLS[s].tools) - set(direct)
    draft.reads = tuple(dict.fromkeys((LOAD_SKILL,) + draft.reads))
    draft.gate = {"skill_id": gold, "routing": "mixed" if mixed else "skill_only"}
    return draft


def _load(run: OracleRun, skill_id: str) -> None:
    card = run.read(LOAD_SKILL, {"skill_id": skill_id})
    if card.get("skill_id") != skill_id:
        raise GenerationError(f"{run.task.task_id}: load_skill({skill_id}) answered {card}")


def _turns(user: str, assistant: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": user}, {"role": "assistant", "content": assistant}]


# ------------------------------------------------------------------------------------------------- routines
def bedtime(rng: random.Random, world: World, corrected: bool = False) -> Draft:
    lang = world.lang
    world.settings["do_not_disturb"] = "off"
    level = rng.choice([v for v in (5, 10, 15, 20, 25, 30) if str(v) != world.settings["brightness"]])
    volume = rng.choice([v for v in (0, 5, 10, 15, 20) if str(v) != world.settings["volume_media"]])
    first, time = rng.sample(("06:00", "06:30", "06:45", "07:00", "07:15", "07:30", "08:00"), 2)
    label = ALARM_LABELS[lang][0]
    free_alarm_times(world, rng, time, first)
    existing = not corrected and rng.random() < 0.5
    if existing:
        alarm = world.add_alarm(time, label, "once", enabled=False)
        step: tuple[str, dict[str, Any]] = ("set_alarm_enabled", {"alarm_id": alarm["alarm_id"], "enabled": True})
    else:
        step = ("create_alarm", {"time": time, "label": label})
    targets: list[tuple[str, dict[str, Any]]] = [
        ("set_do_not_disturb", {"on": True}), step, ("set_brightness", {"level": level}),
        ("set_volume", {"stream": "media", "level": volume})]
    q = quote(label, lang)

    def alarm_words(at: str) -> str:
        when = say_clock(rng, at, lang)
        if existing:
            return say(rng, lang, [f"把明早{when}的闹钟打开"], [f"switch on tomorrow's {when} alarm"])
        return say(rng, lang, [f"定一个明早{when}的闹钟，标签写{q}"], [f"set an alarm for {when} tomorrow labelled {q}"])

    def routine(at: str) -> str:
        return say(rng, lang, [f"我要睡了，开一下睡前模式：打开勿扰，{alarm_words(at)}，亮度调到{level}%，媒体音量调到{volume}"],
                   [f"Bedtime: run my bedtime routine — do not disturb on, {alarm_words(at)}, brightness {level}%, "
                    f"media volume {volume}."])
    history: list[dict[str, str]] = []
    query = routine(time)
    if corrected:
        history = _turns(routine(first), say(rng, lang, [f"好的：勿扰、明早{first}的闹钟、亮度{level}%、媒体音量{volume}，现在开始吗？"],
                                             [f"Do not disturb, a {first} alarm, {level}% brightness and media volume "
                                              f"{volume}: shall I go ahead?"]))
        query = say(rng, lang, [f"闹钟改成{say_clock(rng, time, lang)}，其他照旧"],
                    [f"Make the alarm {say_clock(rng, time, lang)} instead; the rest as you said."])

    def plan(run: OracleRun) -> str:
        _load(run, "bedtime_dnd")
        run.act("set_do_not_disturb", {"on": True})
        if existing:
            found = [a for a in run.read("list_alarms")["alarms"] if a["time"] == time]
            run.act("set_alarm_enabled", {"alarm_id": found[0]["alarm_id"], "enabled": True})
        else:
            run.act(*step)
        run.act("set_brightness", {"level": level})
        run.act("set_volume", {"stream": "media", "level": volume})
        return say(rng, lang, [f"睡前模式已开启：勿扰已打开，明早{time}的闹钟已就绪，亮度{level}%，媒体音量{volume}。晚安！"],
                   [f"Bedtime routine done: do not disturb on, your {time} alarm is set, brightness {level}%, "
                    f"media volume {volume}. Good night!"])
    uses = tuple(name for name, _ in targets) + (("list_alarms",) if existing else ())
    draft = Draft("bedtime", "state_change", query, plan, targets, reads=("list_alarms",) if existing else (),
                  obstacle_kinds=(RUNTIME, STATE), history=history)
    return _skilled(rng, draft, "bedtime_dnd", uses, also=("set_alarm_enabled",))


def focus(rng: random.Random, world: World, corrected: bool = False) -> Draft:
    lang = world.lang
    world.settings.update(do_not_disturb="off", ringer_mode="normal")
    mode = "vibrate" if corrected else rng.choice(("vibrate", "silent"))
    first, minutes = rng.sample((25, 30, 40, 45, 50, 60, 90), 2)
    label = FOCUS_LABEL[lang]
    targets: list[tuple[str, dict[str, Any]]] = [
        ("set_do_not_disturb", {"on": True}), ("set_ringer_mode", {"mode": mode}),
        ("start_timer", {"minutes": minutes, "label": label})]
    ringer = {"vibrate": ("震动", "vibrate"), "silent": ("静音", "silent")}
    q = quote(label, lang)
    history: list[dict[str, str]] = []
    query = say(rng, lang, [f"开专注模式：打开勿扰，手机调成{ringer[mode][0]}，再开一个{minutes}分钟的计时器，名字叫{q}"],
                [f"Focus mode, please: do not disturb on, ringer on {ringer[mode][1]}, and a {minutes}-minute timer "
                 f"called {q}."])
    if corrected:
        history = _turns(say(rng, lang, [f"开专注模式，{first}分钟，计时器叫{q}"], [f"Focus mode for {first} minutes, timer {q}."]),
                         say(rng, lang, [f"好的：勿扰打开、手机静音、{first}分钟计时，现在开始吗？"],
                             [f"Do not disturb on, phone silent, a {first}-minute timer: start now?"]))
        query = say(rng, lang, [f"改成{minutes}分钟吧，手机调震动就行"], [f"Make it {minutes} minutes, and just vibrate."])

    def plan(run: OracleRun) -> str:
        _load(run, "focus_mode")
        for target in targets:
            run.act(*target)
        return say(rng, lang, [f"专注模式已开启：勿扰打开，手机{ringer[mode][0]}，{minutes}分钟计时已开始。"],
                   [f"Focus mode on: do not disturb, ringer on {ringer[mode][1]}, {minutes}-minute timer running."])
    draft = Draft("focus", "state_change", query, plan, targets, history=history)
    return _skilled(rng, draft, "focus_mode", tuple(name for name, _ in targets))


def _battery_phone(rng: random.Random, world: World, low: bool) -> tuple[int, bool]:
    """The battery's level (below 20 % when ``low``) and whether the always-on display is on."""
    battery = rng.choice(range(5, 20) if low else range(21, 96))
    aod = rng.random() < 0.5
    world.settings.update(battery_level=str(battery), charging="off", battery_saver="off",
                          refresh_rate_hz=rng.choice(("90", "120")), always_on_display="on" if aod else "off")
    return battery, aod


def battery(rng: random.Random, world: World, check: bool = False) -> Draft:
    """The battery rescue; ``check``: only below 20 %, else just the brightness (the level read first decides)."""
    lang = world.lang
    low = not check or rng.random() < 0.5
    level = rng.choice([v for v in (10, 15, 20, 25, 30) if str(v) != world.settings["brightness"]])
    _, aod = _battery_phone(rng, world, low)
    rescue: list[tuple[str, dict[str, Any]]] = [
        ("set_battery_saver", {"on": True}), ("set_brightness", {"level": level}), ("set_refresh_rate", {"hz": 60})]
    if aod:
        rescue.append(("set_always_on_display", {"on": False}))
    targets = rescue if low else [("set_brightness", {"level": level})]
    steps = say(rng, lang, [f"省电模式打开，亮度降到{level}%，刷新率调到60" + ("，息屏显示关掉" if aod else "")],
                [f"battery saver on, brightness down to {level}%, refresh rate 60 Hz"
                 + (", always-on display off" if aod else "")])
    if check:
        query = say(rng, lang, [f"看看电量：低于20%就开低电量急救（{steps}）；不低的话只把亮度调到{level}%就行"],
                    [f"Check the battery: below 20%, run the battery rescue ({steps}); otherwise just set the "
                     f"brightness to {level}%."])
    else:
        query = say(rng, lang, [f"电快没了，开一下低电量急救：{steps}"], [f"I'm nearly out of battery — battery rescue: {steps}."])

    def plan(run: OracleRun) -> str:
        _load(run, "battery_rescue")
        status = run.read("get_battery_status")
        for target in targets:
            run.act(*target)
        if not low:
            return say(rng, lang, [f"电量还有{status['level']}%，不用急救，亮度已调到{level}%。"],
                       [f"The battery is at {status['level']}%, no rescue needed; brightness set to {level}%."])
        return say(rng, lang, [f"电量{status['level']}%，已开启低电量急救。"],
                   [f"Battery at {status['level']}%: battery rescue is on."])
    uses = ("get_battery_status",) + tuple(name for name, _ in targets)
    draft = Draft("battery_check" if check else "battery", "state_change", query, plan, targets,
                  reads=("get_battery_status",), obstacle_kinds=(RUNTIME, STATE))
    return _skilled(rng, draft, "battery_rescue", uses, also=("set_auto_brightness",))


def battery_check(rng: random.Random, world: World) -> Draft:
    return battery(rng, world, check=True)


def storage(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    installed = [a["app"] for a in world.apps if a["installed"] and a["app"] not in ("messages", "phone")]
    apps = rng.sample(installed, min(len(installed), rng.randint(3, 5)))
    caches = rng.sample(range(40, 1600, 20), len(apps))
    world.extra["app_storage"] = [{"app": app, "version": "1.0", "app_mb": rng.randrange(80, 400, 10),
                                   "data_mb": rng.randrange(20, 900, 10), "cache_mb": cache}
                                  for app, cache in zip(apps, caches)]
    biggest = apps[caches.index(max(caches))]
    trash = [{"file_id": f"file-{i + 1}", "folder": folder, "name": name, "size_mb": rng.randint(5, 400),
              "trashed": int(i < 2 or rng.random() < 0.5)}
             for i, (folder, name) in enumerate(rng.sample((("Download", "installer.apk"), ("Pictures", "IMG_2041.jpg"),
                                                            ("Movies", "clip.mp4"), ("Documents", "draft.pdf"),
                                                            ("Download", "backup.zip")), 4))]
    world.extra["files"] = trash
    world.issued["file"] = len(trash)
    targets = [("clear_app_cache", {"app": biggest}), ("empty_trash", {})]
    query = say(rng, lang, ["手机存储快满了，帮我清理一下：把缓存最多的那个应用的缓存清掉，再清空回收站"],
                ["My storage is nearly full: clear the cache of the app with the biggest cache, then empty the trash."])

    def plan(run: OracleRun) -> str:
        _load(run, "storage_cleanup")
        largest = run.read("get_storage_usage")["largest_apps"]
        app = max(largest, key=lambda row: row["cache_mb"])["app"]
        freed = run.act("clear_app_cache", {"app": app}).payload["freed_mb"]
        run.read("list_files", {"trash": True})
        freed += run.act("empty_trash", {}).payload["freed_mb"]
        return say(rng, lang, [f"已清掉{app}的缓存并清空回收站，共释放{freed}MB。"],
                   [f"Cleared {app}'s cache and emptied the trash: {freed} MB freed."])
    draft = Draft("storage", "state_change", query, plan, targets, reads=("get_storage_usage", "list_files"))
    return _skilled(rng, draft, "storage_cleanup",
                    ("get_storage_usage", "clear_app_cache", "list_files", "empty_trash"))


def _trip(rng: random.Random, world: World) -> Any:
    trip = rng.choice([t for t in atlas().trips if t.place.route("driving") is not None])
    world.settings.update(current_location=trip.origin, current_city=trip.city, location="on")
    return trip


def _found(run: OracleRun, name: str, location: str) -> str:
    found = run.read("maps_search_place", {"keywords": name})["result"]
    if canonical_coordinate(found.get("location")) != canonical_coordinate(location):
        raise GenerationError(f"{run.task.task_id}: {name!r} is not found where it was recorded: {found}")
    return found["location"]


def meeting(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    trip = _trip(rng, world)
    tomorrow = world.today + dt.timedelta(days=1)
    taken = {e["title"] for e in world.events}
    title = rng.choice([t for t in EVENT_TITLES[lang] if t not in taken])
    start = dt.datetime.combine(tomorrow, dt.time(rng.randint(9, 16), rng.choice((0, 30))))
    clear_slot(world, start, start + dt.timedelta(hours=1))
    world.add_event(title, start, 60, trip.place.name)
    arrive = start.strftime("%Y-%m-%d %H:%M")
    target = ("set_departure_reminder", {"destination": trip.place.location, "arrive_by": arrive, "mode": "driving"})
    q = quote(title, lang)
    query = say(rng, lang, [f"明天的{q}在哪儿开？帮我按开车的时间设个出发提醒，别迟到"],
                [f"Where is tomorrow's {q}? Set me a departure reminder by car so I'm on time."])

    def plan(run: OracleRun) -> str:
        _load(run, "meeting_departure")
        day = (dt.date.fromisoformat(run.settings()["clock"][:10]) + dt.timedelta(days=1)).isoformat()
        event = next(e for e in run.read("list_events", {"date": day})["events"] if e["title"] == title)
        location = _found(run, event["location"], trip.place.location)
        done = run.act("set_departure_reminder", {"destination": location, "arrive_by": event["start"],
                                                  "mode": "driving"}).payload
        return say(rng, lang, [f"{title}在{event['location']}，{event['start'][11:]}开始；开车需要"
                               f"{done['depart_at'][11:]}出发，到时提醒你。"],
                   [f"{title} is at {event['location']} at {event['start'][11:]}; leave by {done['depart_at'][11:]} "
                    "— I'll remind you."])
    draft = Draft("meeting", "state_change", query, plan, [target],
                  reads=("get_device_status", "list_events", "maps_search_place"),
                  obstacle_kinds=(RUNTIME, PERMISSION, STATE))
    return _skilled(rng, draft, "meeting_departure", ("list_events", "maps_search_place", "set_departure_reminder"))


def drive(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    trip = _trip(rng, world)
    car = {"zh": "我的车载蓝牙", "en": "My Car Audio"}[lang]
    devices = [("bt-1", car, "car"), ("bt-2", "AirPods Pro", "headphones"), ("bt-3", "Xiaomi Speaker", "speaker")]
    rng.shuffle(devices)
    world.extra["bluetooth_devices"] = [{"device_id": f"bt-{i + 1}", "name": name, "kind": kind, "paired": 1,
                                         "connected": 0} for i, (_, name, kind) in enumerate(devices)]
    car_id = next(f"bt-{i + 1}" for i, (_, _, kind) in enumerate(devices) if kind == "car")
    bluetooth_off = world.settings["bluetooth"] == "off"
    world.settings["do_not_disturb"] = "off"
    route = trip.place.route("driving")
    targets: list[tuple[str, dict[str, Any]]] = ([("set_bluetooth", {"on": True})] if bluetooth_off else []) + \
        [("connect_bluetooth_device", {"device_id": car_id}), ("set_do_not_disturb", {"on": True}),
         ("start_navigation", {"destination": trip.place.location, **route.call()})]
    name = trip.place.name
    query = say(rng, lang, [f"我上车了，开驾驶模式：连上车载蓝牙，打开勿扰，然后导航去{name}"],
                [f"I'm in the car — drive mode: connect the car Bluetooth, do not disturb on, then navigate to "
                 f"{name}."])

    def plan(run: OracleRun) -> str:
        _load(run, "drive_mode")
        if bluetooth_off:
            run.act("set_bluetooth", {"on": True})
        found = [d for d in run.read("list_bluetooth_devices")["devices"] if d["kind"] == "car"]
        run.act("connect_bluetooth_device", {"device_id": found[0]["device_id"]})
        run.act("set_do_not_disturb", {"on": True})
        location = _found(run, name, trip.place.location)
        nav = run.act("start_navigation", {"destination": location, **route.call()}).payload
        return say(rng, lang, [f"驾驶模式已开启：已连接{car}，勿扰已打开，正在导航去{name}，预计{nav['eta'][11:]}到达。"],
                   [f"Drive mode on: {car} connected, do not disturb on, navigating to {name}, arriving around "
                    f"{nav['eta'][11:]}."])
    uses = tuple(n for n, _ in targets) + ("list_bluetooth_devices", "maps_search_place")
    draft = Draft("drive", "state_change", query, plan, targets,
                  reads=("list_bluetooth_devices", "maps_search_place"), obstacle_kinds=(RUNTIME, PERMISSION, STATE))
    return _skilled(rng, draft, "drive_mode", uses)


def bedtime_corrected(rng: random.Random, world: World) -> Draft:
    return bedtime(rng, world, corrected=True)


def focus_corrected(rng: random.Random, world: World) -> Draft:
    return focus(rng, world, corrected=True)


#: The families of each behaviour category (the generator draws a skill task's family from its category's).
FAMILIES: dict[str, tuple[Family, ...]] = {
    "grounding": (bedtime, focus, battery, storage),
    "conditional": (battery_check,),
    "state_tracking": (meeting, drive),
    "intent_correction": (bedtime_corrected, focus_corrected),
    "error_recovery": (bedtime, battery, meeting, drive)
}
