"""Task families of tool and parameter grounding: one request, the right tool, the right values.

Each family is a function ``(rng, world) -> Draft`` (see :mod:`.generate_oracle`): it may add to the
phone what the request needs, words the request in the world's language, and gives the oracle's
plan. Several have a *missing-parameter* variant: the request leaves a value out, the user's reply
supplies it, and the task becomes a ``behaviour`` task that must ask first.
"""

from __future__ import annotations

import datetime as dt
import random

from .generate_oracle import RUNTIME, STATE, Draft, OracleRun, fact, missing
from .generate_phrases import clock_spellings, phone_spellings, quote, say, say_clock, say_day, say_duration
from .generate_world import ALARM_LABELS, EVENT_TITLES, LOCATIONS, REPEATS, World
from .tasks import Reading, UserFact

ASK_RATE = 0.25
STREAMS = {"media": (["媒体音量", "音乐音量"], ["media volume", "music volume"]),
           "ring": (["铃声音量", "来电铃声音量"], ["ringtone volume", "ring volume"]),
           "alarm": (["闹钟音量"], ["alarm volume"]),
           "call": (["通话音量"], ["call volume", "in-call volume"])}
TOGGLES = {"wifi": ("set_wifi", ["Wi-Fi", "WiFi", "无线网"], ["Wi-Fi", "WiFi"]),
           "bluetooth": ("set_bluetooth", ["蓝牙"], ["Bluetooth"]),
           "location": ("set_location_service", ["定位", "位置服务"], ["location services", "GPS"]),
           "mobile_data": ("set_mobile_data", ["移动数据", "流量"], ["mobile data", "cellular data"])}
RINGER_WORDS = {"silent": ("静音", "silent"), "vibrate": ("震动", "vibrate"), "normal": ("响铃", "normal ring")}
REPEAT_WORDS = {"once": ("", ""), "daily": ("每天", " every day"), "weekdays": ("工作日", " on weekdays"),
                "weekends": ("周末", " on weekends")}


def _word(rng: random.Random, lang: str, words: tuple[list[str], list[str]]) -> str:
    return rng.choice(words[0] if lang == "zh" else words[1])


def brightness(rng: random.Random, world: World) -> Draft:
    lang, current = world.lang, int(world.settings["brightness"])
    level = rng.choice([v for v in range(10, 101, 5) if v != current])
    target = ("set_brightness", {"level": level})
    answer = say(rng, lang, [f"已把屏幕亮度调到{level}%。"], [f"Screen brightness is now {level}%."])

    def plan(run: OracleRun, ask: bool = False) -> str:
        if ask:
            run.ask(say(rng, lang, ["要调到多少？"], ["What brightness would you like?"]))
        run.act(*target)
        return answer

    if rng.random() < ASK_RATE:
        up = level > current
        query = say(rng, lang, ["屏幕太暗了，帮我调亮一点" if up else "屏幕太亮了，调暗一点", "帮我调一下屏幕亮度"],
                    ["The screen is too dark, brighten it up." if up else "The screen is too bright, dim it.",
                     "Can you change the screen brightness?"])
        reply = say(rng, lang, [f"调到{level}%吧", f"{level}就行"], [f"Make it {level}%.", f"{level} percent."])
        return Draft("brightness", "behaviour", query, lambda run: plan(run, True), [target],
                     obstacle_kinds=(RUNTIME, STATE), user_facts=[fact("level", str(level), reply)], must_ask=True,
                     obstacles=[missing("no brightness level: the user's reply gives it")])
    query = say(rng, lang, [f"把屏幕亮度调到{level}%", f"亮度调成{level}%吧", f"麻烦把亮度设成百分之{level}"],
                [f"Set the screen brightness to {level}%.", f"Brightness {level} percent, please.",
                 f"Can you put the display at {level}% brightness?"])
    return Draft("brightness", "tool_call", query, plan, [target], obstacle_kinds=(RUNTIME, STATE))


def _stream_fact(stream: str, reply: str) -> UserFact:
    """The audio stream the user means, with the other streams as the readings they do not."""
    def words(name: str) -> list[str]:
        return [*STREAMS[name][0], *STREAMS[name][1]]
    return fact("stream", stream, reply, words(stream),
                [Reading(value=other, words=words(other)) for other in STREAMS if other != stream])


def volume(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    stream = rng.choice(list(STREAMS))
    current = int(world.settings[f"volume_{stream}"])
    level = rng.choice([v for v in range(10, 101, 5) if v != current])
    word = _word(rng, lang, STREAMS[stream])
    target = ("set_volume", {"stream": stream, "level": level})
    answer = say(rng, lang, [f"{word}已调到{level}。"], [f"The {word} is now {level}%."])

    def plan(run: OracleRun, ask: bool = False) -> str:
        if ask:
            run.ask(say(rng, lang, ["要调哪个音量：媒体、铃声、闹钟还是通话？"],
                        ["Which volume: media, ringtone, alarm or call?"]))
        run.act(*target)
        return answer

    if rng.random() < ASK_RATE:
        query = say(rng, lang, [f"把音量调到{level}", f"音量设成{level}%"],
                    [f"Set the volume to {level}.", f"Volume to {level}%, please."])
        reply = say(rng, lang, [word, f"{word}吧"], [f"The {word}.", f"{word}"])
        return Draft("volume", "behaviour", query, lambda run: plan(run, True), [target],
                     obstacle_kinds=(RUNTIME, STATE), user_facts=[_stream_fact(stream, reply)], must_ask=True,
                     obstacles=[missing("no audio stream: the user's reply names it")])
    query = say(rng, lang, [f"把{word}调到{level}", f"{word}设成{level}%", f"帮我把{word}调到百分之{level}"],
                [f"Set the {word} to {level}%.", f"Can you put the {word} at {level} percent?",
                 f"Change the {word} to {level}."])
    return Draft("volume", "tool_call", query, plan, [target], obstacle_kinds=(RUNTIME, STATE))


def ringer(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    if rng.random() < 0.6:
        mode = rng.choice(("silent", "vibrate"))
    else:
        world.settings["ringer_mode"], mode = rng.choice(("silent", "vibrate")), "normal"
    zh, en = RINGER_WORDS[mode]
    if mode == "normal":
        query = say(rng, lang, ["把铃声恢复成正常响铃", "取消静音和震动，改回响铃模式"],
                    ["Set the ringer back to normal.", "Turn the ringer on again, normal mode."])
    else:
        query = say(rng, lang, [f"把手机调成{zh}", f"切到{zh}模式", f"手机开一下{zh}"],
                    [f"Put my phone on {en}.", f"Switch the ringer to {en}.", f"Set the phone to {en} mode."])
    target = ("set_ringer_mode", {"mode": mode})

    def plan(run: OracleRun) -> str:
        run.act(*target)
        return say(rng, lang, [f"已切换到{zh}模式。"], [f"The ringer is now {en}."])
    return Draft("ringer", "tool_call", query, plan, [target])


def do_not_disturb(rng: random.Random, world: World) -> Draft:
    lang, on = world.lang, rng.random() < 0.65
    world.settings["do_not_disturb"] = "off" if on else "on"
    query = say(rng, lang, ["开启勿扰模式", "帮我打开免打扰", "接下来别让消息吵我，开勿扰"] if on else
                ["把勿扰模式关掉", "关闭免打扰"],
                ["Turn on Do Not Disturb.", "Switch on do-not-disturb, I'm going into a meeting."] if on else
                ["Turn off Do Not Disturb.", "Disable do-not-disturb."])
    target = ("set_do_not_disturb", {"on": on})

    def plan(run: OracleRun) -> str:
        run.act(*target)
        return say(rng, lang, [f"勿扰模式已{'开启' if on else '关闭'}。"], [f"Do Not Disturb is {'on' if on else 'off'}."])
    return Draft("do_not_disturb", "tool_call", query, plan, [target])


def toggle(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    key = rng.choice(list(TOGGLES))
    name, zh_words, en_words = TOGGLES[key]
    on = world.settings[key] == "off"
    word = rng.choice(zh_words if lang == "zh" else en_words)
    if on:
        query = say(rng, lang, [f"打开{word}", f"帮我把{word}开一下", f"{word}开起来"],
                    [f"Turn on {word}.", f"Switch {word} on for me.", f"Enable {word}."])
    else:
        query = say(rng, lang, [f"关掉{word}", f"把{word}关了", f"帮我关闭{word}"],
                    [f"Turn off {word}.", f"Switch {word} off.", f"Disable {word}, please."])
    target = (name, {"on": on})

    def plan(run: OracleRun) -> str:
        run.act(*target)
        return say(rng, lang, [f"{word}已{'打开' if on else '关闭'}。"], [f"{word} is {'on' if on else 'off'} now."])
    return Draft("toggle", "tool_call", query, plan, [target], obstacle_kinds=(RUNTIME, STATE))


def create_alarm(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    time = world.free_alarm_time(rng)
    used = {a["label"] for a in world.alarms}
    label = rng.choice([x for x in ALARM_LABELS[lang] if x not in used])
    repeat = rng.choice(REPEATS + ("once", "once"))
    rep_zh, rep_en = REPEAT_WORDS[repeat]
    when, q = say_clock(rng, time, lang), quote(label, lang)
    target = ("create_alarm", {"time": time, "label": label, "repeat": repeat})
    answer = say(rng, lang, [f"已设置{time}的闹钟（{label}）。"], [f"Alarm set for {time} ({label})."])

    def plan(run: OracleRun, ask: bool = False) -> str:
        if ask:
            run.ask(say(rng, lang, ["几点响？"], ["What time should it ring?"]))
        run.act(*target)
        return answer

    if rng.random() < ASK_RATE:
        query = say(rng, lang, [f"帮我定个{rep_zh}闹钟，标签写{q}"], [f"Set an alarm{rep_en} labelled {q}."])
        reply = say(rng, lang, [f"{when}吧", f"{when}"], [f"At {when}.", f"{when}, please."])
        return Draft("create_alarm", "behaviour", query, lambda run: plan(run, True), [target],
                     obstacle_kinds=(RUNTIME, STATE), user_facts=[fact("time", time, reply)], must_ask=True,
                     obstacles=[missing("no alarm time: the user's reply gives it")])
    query = say(rng, lang, [f"帮我定一个{rep_zh}{when}的闹钟，标签写{q}", f"{rep_zh or '明天'}{when}叫我，闹钟名字叫{q}",
                            f"设个闹钟：{when}，备注{q}" + (f"，{rep_zh}都响" if rep_zh else "")],
                [f"Set an alarm for {when}{rep_en} labelled {q}.", f"Wake me up at {when}{rep_en}, call the alarm {q}.",
                 f"New alarm at {when}{rep_en}, label {q}."])
    return Draft("create_alarm", "state_change", query, plan, [target], obstacle_kinds=(RUNTIME, STATE))


def create_event(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    offset = rng.randrange(7)
    day = world.today + dt.timedelta(days=offset)
    earliest = world.now.hour + 2 if offset == 0 else 8
    if earliest > 19:
        day, offset, earliest = day + dt.timedelta(days=1), offset + 1, 8
    start = dt.datetime.combine(day, dt.time(rng.randint(earliest, 19), rng.choice((0, 30))))
    minutes = rng.choice((30, 60, 60, 90, 120))
    end = start + dt.timedelta(minutes=minutes)
    used = {e["title"] for e in world.events}
    title = rng.choice([t for t in EVENT_TITLES[lang] if t not in used])
    location = rng.choice(LOCATIONS[lang]) if rng.random() < 0.5 else ""
    args = {"title": title, "start": start.strftime("%Y-%m-%d %H:%M"), "end": end.strftime("%Y-%m-%d %H:%M")}
    if location:
        args["location"] = location
    when_day = say_day(rng, day, world.today, lang)
    s, e = say_clock(rng, start.strftime("%H:%M"), lang), say_clock(rng, end.strftime("%H:%M"), lang)
    q = quote(title, lang)
    where = (say(rng, lang, [f"，地点{location}", f"，在{location}"], [f" at {location}", f", location {location}"])
             if location else "")
    answer = say(rng, lang, [f"已在{args['start']}添加日程“{title}”。"], [f"Added \"{title}\" at {args['start']}."])

    def plan(run: OracleRun, ask: bool = False) -> str:
        run.settings()  # today's date, for the relative day
        if ask:
            run.ask(say(rng, lang, ["几点开始、几点结束？"], ["From what time to what time?"]))
        run.act("create_event", args)
        return answer

    if rng.random() < ASK_RATE:
        query = say(rng, lang, [f"帮我在日历上加个{q}，{when_day}{where}"],
                    [f"Add {q} to my calendar {when_day}{where}."])
        reply = say(rng, lang, [f"{s}到{e}"], [f"From {s} to {e}."])
        return Draft("create_event", "behaviour", query, lambda run: plan(run, True), [("create_event", args)],
                     reads=("get_device_status",), must_ask=True,
                     user_facts=[fact("span", f"{args['start'][11:]}-{args['end'][11:]}", reply)],
                     obstacles=[missing("no event time: the user's reply gives start and end")])
    query = say(rng, lang, [f"帮我在日历上加个{q}，{when_day}{s}到{e}{where}",
                            f"{when_day}{s}有个{q}，大概{say_duration(minutes, lang)}，帮我记到日历里{where}"],
                [f"Add {q} to my calendar {when_day} from {s} to {e}{where}.",
                 f"Put {q} on my calendar {when_day} at {s}, it lasts {say_duration(minutes, lang)}{where}."])
    return Draft("create_event", "state_change", query, plan, [("create_event", args)], reads=("get_device_status",))


def app(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    apps = [a for a in world.apps if a["installed"] and a["app"] not in ("messages", "phone")]
    row = rng.choice(apps)
    name, opening = world.app_name(row["app"]), not row["running"]
    if opening:
        query = say(rng, lang, [f"打开{name}", f"帮我开一下{name}"], [f"Open {name}.", f"Launch {name} for me."])
    else:
        query = say(rng, lang, [f"把{name}关掉", f"退出{name}"], [f"Close {name}.", f"Quit {name}."])
    target = ("open_app" if opening else "close_app", {"app": row["app"]})

    def plan(run: OracleRun) -> str:
        run.read("list_apps")  # the app's id as the phone lists it
        run.act(*target)
        return say(rng, lang, [f"已{'打开' if opening else '关闭'}{name}。"],
                   [f"{'Opened' if opening else 'Closed'} {name}."])
    return Draft("app", "tool_call", query, plan, [target], reads=("list_apps",))


def phone_number(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    by_relation = rng.random() < 0.4
    contact = world.pick_contact(rng, by_relation)
    if not by_relation and rng.random() < 0.5:
        world.add_lookalike(rng, contact)
    who = contact["relation"] if by_relation else contact["name"]
    query = say(rng, lang, [f"{who}的手机号是多少？", f"帮我查一下{who}的电话"],
                [f"What's {'my ' + who if by_relation else who}'s phone number?",
                 f"Look up {'my ' + who if by_relation else who}'s number for me."])

    def plan(run: OracleRun) -> str:
        found = run.find_contact(who, name=None if by_relation else who, relation=who if by_relation else None)
        return say(rng, lang, [f"{found['name']}的手机号是{found['phone']}。"],
                   [f"{found['name']}'s number is {found['phone']}."])
    return Draft("phone_number", "behaviour", query, plan, reads=("search_contacts",),
                 answer_mentions=[phone_spellings(contact["phone"])])


def agenda(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    day = world.today + dt.timedelta(days=rng.randint(1, 3))
    if not world.events_on(day):
        title = rng.choice([t for t in EVENT_TITLES[lang] if t not in {e["title"] for e in world.events}])
        start = dt.datetime.combine(day, dt.time(rng.randint(8, 18), 0))
        world.add_event(title, start, 60, rng.choice(LOCATIONS[lang]))
    events = world.events_on(day)
    when = say_day(rng, day, world.today, lang)
    query = say(rng, lang, [f"我{when}有什么安排？", f"看看{when}的日程"],
                [f"What's on my calendar {when}?", f"Do I have anything {when}?"])

    def plan(run: OracleRun) -> str:
        run.settings()
        found = run.read("list_events", {"date": day.isoformat()})["events"]
        items = [f"{e['start'][11:]} {e['title']}" for e in found]
        return say(rng, lang, [f"{when}有{len(items)}个安排：" + "；".join(items) + "。"],
                   [f"You have {len(items)} item(s) {when}: " + "; ".join(items) + "."])
    mentions = [[e["title"]] for e in events] + [clock_spellings(events[0]["start"][11:])]
    return Draft("agenda", "behaviour", query, plan, reads=("list_events", "get_device_status"),
                 answer_mentions=mentions)


FAMILIES = (brightness, volume, ringer, do_not_disturb, toggle, create_alarm, create_event, app, phone_number, agenda)
#: families whose plan still reads naturally with an obstacle forced on it (the error-recovery category)
RECOVERABLE = (brightness, volume, toggle, create_alarm, create_event)
