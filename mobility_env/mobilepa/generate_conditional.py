"""Task families of conditional planning: "if Wi-Fi is off, turn it on; otherwise …".

Each request has two branches that change different things; which one applies depends on ``S_0``
(drawn either way), so only an agent that looks before it acts gets the state right. The oracle
reads the state (``get_device_status``, ``list_apps``, ``list_events``) and takes the branch the
sandbox shows. Same ``(rng, world) -> Draft`` contract as :mod:`.generate_grounding`.
"""

from __future__ import annotations

import datetime as dt
import random
from typing import Any

from .generate_oracle import PERMISSION, RUNTIME, STATE, Draft, OracleRun
from .generate_phrases import quote, say, say_clock, say_day, say_duration, shift_clock
from .generate_tracking import HEADS_UP, addressee, contact_of, free_lead
from .generate_world import ALARM_LABELS, EVENT_TITLES, LOCATIONS, World


def _level(rng: random.Random, current: str) -> int:
    return rng.choice([v for v in range(10, 101, 5) if v != int(current)])


def wifi_or_data(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    world.settings["mobile_data"] = "on"
    wifi_off = world.settings["wifi"] == "off"
    query = say(rng, lang, ["如果Wi-Fi没开就帮我打开，开着的话就把移动数据关了", "看下Wi-Fi：关着就打开；已经开了就关掉移动数据，省流量"],
                ["If Wi-Fi is off, turn it on; if it's already on, turn off mobile data.",
                 "Check Wi-Fi: switch it on if it's off, otherwise switch off mobile data to save data."])

    def plan(run: OracleRun) -> str:
        if run.settings()["wifi"] == "off":
            run.act("set_wifi", {"on": True})
            return say(rng, lang, ["Wi-Fi原本是关着的，已打开。"], ["Wi-Fi was off; it is on now."])
        run.act("set_mobile_data", {"on": False})
        return say(rng, lang, ["Wi-Fi已经开着，已关闭移动数据。"], ["Wi-Fi was already on, so I turned off mobile data."])
    target = ("set_wifi", {"on": True}) if wifi_off else ("set_mobile_data", {"on": False})
    return Draft("wifi_or_data", "tool_call", query, plan, [target], reads=("get_device_status",),
                 obstacle_kinds=(RUNTIME, STATE))


def quiet_or_ring(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    dnd = rng.random() < 0.5
    world.settings["do_not_disturb"] = "on" if dnd else "off"
    level = _level(rng, world.settings["volume_ring"])
    query = say(rng, lang, [f"勿扰模式要是开着就关掉；没开的话把铃声音量调到{level}", f"如果开了免打扰就关了它，否则铃声音量调成{level}%"],
                [f"If Do Not Disturb is on, turn it off; if not, set the ringtone volume to {level}%.",
                 f"Turn off do-not-disturb if it's on, otherwise put the ring volume at {level}."])

    def plan(run: OracleRun) -> str:
        if run.settings().get("do_not_disturb") == "on":
            run.act("set_do_not_disturb", {"on": False})
            return say(rng, lang, ["勿扰模式已关闭。"], ["Do Not Disturb was on; I turned it off."])
        run.act("set_volume", {"stream": "ring", "level": level})
        return say(rng, lang, [f"勿扰没开，铃声音量已调到{level}。"], [f"DND was off; ring volume is now {level}%."])
    target = ("set_do_not_disturb", {"on": False}) if dnd else ("set_volume", {"stream": "ring", "level": level})
    return Draft("quiet_or_ring", "tool_call", query, plan, [target], reads=("get_device_status",),
                 obstacle_kinds=(RUNTIME, STATE))


def calendar_alarm(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    day = world.today + dt.timedelta(days=rng.randint(1, 3))
    busy = rng.random() < 0.5
    if not busy:
        world.events = [e for e in world.events if e["start"][:10] != day.isoformat()]
    elif not world.events_on(day):
        title = rng.choice([t for t in EVENT_TITLES[lang] if t not in {e["title"] for e in world.events}])
        start = dt.datetime.combine(day, dt.time(rng.randint(9, 17), 0))
        world.add_event(title, start, 60, rng.choice(LOCATIONS[lang]))
    early_label, late_label = rng.choice(HEADS_UP[lang]), rng.choice(ALARM_LABELS[lang][:3])  # morning ones
    fallback = world.free_alarm_time(rng, 7, 9)
    if busy:
        lead = free_lead(rng, world, world.events_on(day)[0]["start"][11:])
        time, label = shift_clock(world.events_on(day)[0]["start"][11:], -lead), early_label
    else:
        lead = rng.choice((30, 60))
        time, label = fallback, late_label
    when = say_day(rng, day, world.today, lang)
    q1, q2, t2 = quote(early_label, lang), quote(late_label, lang), say_clock(rng, fallback, lang)
    query = say(rng, lang, [f"看看{when}有没有安排：有的话在第一个安排前{say_duration(lead, lang)}定个闹钟，标签{q1}；没有的话就定{t2}"
                            f"的闹钟，标签{q2}"],
                [f"Check whether I have anything {when}: if I do, set an alarm {say_duration(lead, lang)} before the "
                 f"first item, labelled {q1}; if not, set one for {t2} labelled {q2}."])

    def plan(run: OracleRun) -> str:
        run.settings()
        events = run.read("list_events", {"date": day.isoformat()})["events"]
        if events:
            ring, name = shift_clock(events[0]["start"][11:], -lead), early_label
        else:
            ring, name = fallback, late_label
        run.act("create_alarm", {"time": ring, "label": name})
        return say(rng, lang, [f"{when}{'有' if events else '没有'}安排，已定{ring}的闹钟（{name}）。"],
                   [f"You have {'something' if events else 'nothing'} {when}; alarm set for {ring} ({name})."])
    return Draft("calendar_alarm", "state_change", query, plan, [("create_alarm", {"time": time, "label": label})],
                 reads=("list_events", "get_device_status"), obstacle_kinds=(RUNTIME, STATE))


def app_or_brightness(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    row = rng.choice([a for a in world.apps if a["installed"] and a["app"] not in ("messages", "phone")])
    row["running"] = int(rng.random() < 0.5)
    level = _level(rng, world.settings["brightness"])
    name = world.app_name(row["app"])
    query = say(rng, lang, [f"{name}要是还开着就帮我关掉，没开的话把亮度调到{level}%"],
                [f"If {name} is still running, close it; if not, set the brightness to {level}%."])

    def plan(run: OracleRun) -> str:
        apps = {a["app"]: a for a in run.read("list_apps")["apps"]}
        if apps[row["app"]]["running"]:
            run.act("close_app", {"app": row["app"]})
            return say(rng, lang, [f"{name}还开着，已关闭。"], [f"{name} was running; I closed it."])
        run.act("set_brightness", {"level": level})
        return say(rng, lang, [f"{name}没有在运行，亮度已调到{level}%。"], [f"{name} wasn't running; brightness is {level}%."])
    target: tuple[str, dict[str, Any]] = (("close_app", {"app": row["app"]}) if row["running"]
                                          else ("set_brightness", {"level": level}))
    return Draft("app_or_brightness", "tool_call", query, plan, [target], reads=("list_apps",),
                 obstacle_kinds=(RUNTIME, STATE))


def bluetooth_then_volume(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    level = _level(rng, world.settings["volume_media"])
    query = say(rng, lang, [f"如果蓝牙开着就关掉，然后把媒体音量调到{level}", f"蓝牙开着的话先关了，再把音乐音量设成{level}%"],
                [f"If Bluetooth is on, turn it off, then set the media volume to {level}%.",
                 f"Switch Bluetooth off if it's on, and put the music volume at {level}."])

    def plan(run: OracleRun) -> str:
        was_on = run.settings()["bluetooth"] == "on"
        if was_on:
            run.act("set_bluetooth", {"on": False})
        run.act("set_volume", {"stream": "media", "level": level})
        return say(rng, lang, [f"{'已关闭蓝牙，' if was_on else '蓝牙本来就关着，'}媒体音量已调到{level}。"],
                   [f"{'Turned Bluetooth off' if was_on else 'Bluetooth was already off'}; media volume is {level}%."])
    targets = ([("set_bluetooth", {"on": False})] if world.settings["bluetooth"] == "on" else []) + \
        [("set_volume", {"stream": "media", "level": level})]
    return Draft("bluetooth_then_volume", "state_change", query, plan, targets, reads=("get_device_status",))


def airplane_then_call(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    contact, who, key = addressee(rng, world)
    airplane = rng.random() < 0.5
    obstacles = []
    if airplane:
        world.settings["airplane_mode"] = "on"
        obstacles.append({"kind": STATE, "note": "airplane mode is on: calls fail until it is turned off"})
    query = say(rng, lang, [f"要是开着飞行模式就先关掉，然后给{who}打个电话", f"飞行模式开着的话关掉，再帮我打给{who}"],
                [f"If airplane mode is on, turn it off first, then call {who}.",
                 f"Switch off airplane mode if it's on and phone {who}."])

    def plan(run: OracleRun) -> str:
        if run.settings()["airplane_mode"] == "on":
            run.act("set_airplane_mode", {"on": False})
        run.act("call_contact", {"contact_id": contact_of(run, contact, key)})
        return say(rng, lang, [f"正在呼叫{contact['name']}。"], [f"Calling {contact['name']}."])
    return Draft("airplane_then_call", "tool_call", query, plan,
                 [("call_contact", {"contact_id": contact["contact_id"]})],
                 reads=("get_device_status", "search_contacts"), obstacle_kinds=(RUNTIME, PERMISSION),
                 obstacles=obstacles)


FAMILIES = (wifi_or_data, quiet_or_ring, calendar_alarm, app_or_brightness, bluetooth_then_volume, airplane_then_call)
