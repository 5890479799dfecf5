"""The held-out phrasing grammar of MobilePA: the same task, the user's words said another way.

:func:`render` takes a family's :class:`~.generate_oracle.Draft` and the task's
:class:`~.generate_world.World` after the family has drafted, reads the task's *semantic frame* — the
family, the state-changing calls it targets (tool and arguments) and the names the world gives their ids —
and writes a new ``query`` and ``history`` from it, with its own ``random.Random``. Nothing else of the task
changes: S0, the obstacles, the oracle's plan, the gold. A frame it cannot say returns ``None`` (the task is
left out of the held-out split, never kept with the standard words).

The grammar is three modules: this one (the renderer of each family: settings, calls and messages, alarms and
events, corrections, conditionals, retries), :mod:`.heldout_domains` (the later domains, maps & travel) and
:mod:`.heldout_words` (spellings and word tables). It is written apart from the standard families
(:mod:`.generate_grounding` and the others), and no module of the agents (``mobility_agents``) may import it
(``tests/test_mobilepa_heldout.py``). Its forms:

* **indirect requests**: the need, then the value ("屏幕暗得看不清了，给我弄到70");
* **colloquial and mixed zh/en** forms ("帮我把 wifi 关咯", "ping 一下 …");
* **spread over the history**: an earlier user turn gives part of the request, an assistant turn answers,
  the query gives the rest, or refers back ("就按刚才说的那个时间");
* **distractors**: numbers, times and names that are not the values (a battery level, a meeting time).

Every value the gold needs is stated in the query or the history: numbers, clock times, days, names and quoted
texts, verbatim or in a spelling a careful reader turns into exactly one value (:func:`clock_forms`,
:func:`level_forms`). Distractor values never equal a gold value.
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import replace
from typing import Any, Callable

from .generate_oracle import Draft
from .generate_world import World
from .heldout_domains import say_domain_task, say_maps_task, say_photo_task
from .heldout_words import (REPEATS, RINGER, RADIOS, STREAMS, TEXTS, Said, clock_forms, contact_word, day_forms,
                            level_forms, noise, pick, row, row_of, say_clock, say_level, spread, unique, verbatim)

__all__ = ["RENDERERS", "clock_forms", "day_forms", "level_forms", "render"]


# ----------------------------------------------------------------------------- display & sound, system settings


def _brightness(rng: random.Random, lang: str, level: int, current: int, avoid: set[str]) -> str:
    lv = say_level(rng, level, lang)
    need = (("屏幕暗得看不清了", "can barely read the screen") if level > current else
            ("屏幕晃得眼睛疼", "the screen is blinding me"))
    return noise(rng, lang, avoid) + pick(rng, lang, [
        f"{need[0]}，给我弄到{lv}", f"{need[0]}，亮度改{lv}", f"display 亮度整成{lv}吧"],
        [f"{need[1]}, make it {lv} brightness", f"{need[1]}, screen brightness {lv} pls",
         f"make the display {lv} bright"])


def _volume(rng: random.Random, lang: str, stream: str, level: int, avoid: set[str]) -> str:
    zh, en = STREAMS[stream]
    lv = say_level(rng, level, lang)
    return noise(rng, lang, avoid) + pick(rng, lang, [
        f"{zh}不太对劲，弄成{lv}", f"{zh}给我改到{lv}", f"这个{zh}…就{lv}吧"],
        [f"the {en} is off, make it {lv}", f"{en} → {lv} please", f"could you get the {en} to {lv}"])


def _setting(rng: random.Random, draft: Draft, world: World) -> Said | None:
    lang, (tool, args) = world.lang, draft.targets[0]
    avoid = {str(v) for v in args.values()}
    if tool == "set_brightness":
        return _brightness(rng, lang, args["level"], int(world.settings["brightness"]), avoid), []
    if tool == "set_volume":
        return _volume(rng, lang, args["stream"], args["level"], avoid), []
    if tool == "set_ringer_mode":
        zh, en = RINGER[args["mode"]]
        return pick(rng, lang, [f"我要进图书馆/开会了，手机{zh}", f"老漏接电话…手机改成{zh}吧", f"手机{zh}，谢谢"],
                    [f"heading into the library, phone {en}", f"keep missing calls, phone {en} please",
                     f"set me to {en}"]), []
    if tool == "set_do_not_disturb":
        on = args["on"]
        return pick(rng, lang, ["要专心干活，通知先统统屏蔽（勿扰打开）"] if on else ["勿扰先撤了吧，别错过消息"],
                    ["need to focus, turn DND on"] if on else ["I'm free now, DND off"]), []
    if tool in RADIOS:
        zh, en = RADIOS[tool]
        on = args["on"]
        return pick(rng, lang, [f"{zh}给我开开" if on else f"{zh}关咯，省电", f"帮忙{'打开' if on else '断开'}一下 {zh}"],
                    [f"{en} on plz" if on else f"kill the {en}, saving battery",
                     f"flip {en} {'on' if on else 'off'} for me"]), []
    if tool in ("open_app", "close_app"):
        name = world.app_name(args["app"])
        if tool == "open_app":
            return pick(rng, lang, [f"我想刷会儿{name}，给我打开", f"{name} 启动一下"],
                        [f"wanna check {name}, open it up", f"fire up {name}"]), []
        return pick(rng, lang, [f"{name}别在后台挂着了，给它关掉", f"把{name}杀掉"],
                    [f"{name} is hogging memory, shut it", f"quit {name} for me"]), []
    return None


# ----------------------------------------------------------------------------- calls & messages
def _contact_task(rng: random.Random, draft: Draft, world: World) -> Said | None:
    lang = world.lang
    calls = [(t, a) for t, a in draft.targets if t in ("call_contact", "send_message")]
    if len(calls) != 1 or len(draft.targets) != 1:
        return None
    tool, args = calls[0]
    who = contact_word(rng, world, args["contact_id"])
    if who is None:
        return None
    others = [c["name"] for c in world.contacts if c["contact_id"] != args["contact_id"] and c["name"] not in who
              and who not in c["name"]]
    said = _contact_request(rng, draft, world, tool, args, who)
    if others and not said[1] and rng.random() < 0.3:  # a distractor name beside the one the request is about
        aside = pick(rng, lang, ["刚跟{}吃完饭，", "{}刚才找过我，不过先不管，"],
                     ["just had lunch with {}, ", "{} pinged me but never mind, "])
        return aside.format(rng.choice(others)) + said[0], said[1]
    return said


def _contact_request(rng: random.Random, draft: Draft, world: World, tool: str, args: dict[str, Any],
                     who: str) -> Said:
    lang = world.lang
    if draft.family == "reply_last":
        return pick(rng, lang, [f"{who}最后给我发的短信你瞄一眼，回{verbatim(args['text'], lang)}"],
                    [f"peek at the last SMS from {who} and answer {verbatim(args['text'], lang)}"]), []
    if tool == "call_contact":
        if rng.random() < 0.5:
            return spread(rng, lang, pick(rng, lang, [f"等下我要找一下{who}"], [f"I need to reach {who} in a bit"]),
                          pick(rng, lang, ["算了现在就拨过去吧", "直接打电话吧"], ["actually just ring them now"]))
        return pick(rng, lang, [f"ping 一下{who}，电话那种", f"拨{who}的号"], [f"give {who} a ring", f"dial {who}"]), []
    text = verbatim(args["text"], lang)
    if rng.random() < 0.5:
        return spread(rng, lang, pick(rng, lang, [f"回头帮我给{who}发个短信"], [f"gonna need to text {who}"]),
                      pick(rng, lang, [f"内容就写{text}", f"就说{text}"], [f"the text should say {text}"]))
    return pick(rng, lang, [f"短信跟{who}讲一声{text}"], [f"SMS {who} saying {text}"]), []


# ----------------------------------------------------------------------------- time management


def _alarm(rng: random.Random, draft: Draft, world: World) -> Said | None:
    lang = world.lang
    if len(draft.targets) != 1 or draft.targets[0][0] != "create_alarm":
        return None
    args = draft.targets[0][1]
    when = say_clock(rng, args["time"], lang)
    repeat = REPEATS[args.get("repeat", "once")][lang == "en"]
    label = args.get("label", "")
    named = (f"，备注{verbatim(label, lang)}" if lang == "zh" else f", call it {verbatim(label, lang)}") if label else ""
    if rng.random() < 0.5:
        first = pick(rng, lang, [f"我{when}得起来"], [f"I have to be up at {when}"])
        rest = pick(rng, lang, [f"就按刚才说的那个点定个闹钟，{repeat}{named}"],
                    [f"set an alarm for the time I just said, {repeat}{named}"])
        return spread(rng, lang, first, rest)
    return pick(rng, lang, [f"{when}别让我睡过头，{repeat}{named}"],
                [f"don't let me oversleep, wake me {when}, {repeat}{named}"]), []


def _alarm_word(rng: random.Random, world: World, alarm_id: str) -> str | None:
    """An existing alarm, named by its time or its label, whichever picks it alone."""
    row = next((a for a in world.alarms if a["alarm_id"] == alarm_id), None)
    if row is None:
        return None
    lang, ways = world.lang, []
    if [a["time"] for a in world.alarms].count(row["time"]) == 1:
        ways.append(pick(rng, lang, [f"{say_clock(rng, row['time'], lang)}响的那个闹钟"],
                         [f"the alarm that goes off at {say_clock(rng, row['time'], lang)}"]))
    if row["label"] and [a["label"] for a in world.alarms].count(row["label"]) == 1:
        label = verbatim(row["label"], lang)
        ways.append(pick(rng, lang, [f"叫{label}的闹钟"], [f"the {label} alarm"]))
    return rng.choice(ways) if ways else None


def _alarm_edit(rng: random.Random, draft: Draft, world: World) -> Said | None:
    """Turning an alarm on or off, replacing one with a new one, redoing an alarm set at the wrong time."""
    lang, tools = world.lang, [t for t, _ in draft.targets]
    if tools == ["set_alarm_enabled"]:
        args = draft.targets[0][1]
        which = _alarm_word(rng, world, args["alarm_id"])
        if which is None:
            return None
        return (pick(rng, lang, [f"{which}先让它响吧，打开"], [f"I need {which} back on"]) if args["enabled"] else
                pick(rng, lang, [f"{which}先别响了，留着别删"], [f"mute {which} for now, don't delete it"])), []
    if tools == ["create_alarm", "set_alarm_enabled"] and draft.family == "replace_alarm":
        new, old = draft.targets[0][1], draft.targets[1][1]
        which = _alarm_word(rng, world, old["alarm_id"])
        if which is None or new.get("repeat", "once") != "once" or old["enabled"]:
            return None
        return spread(rng, lang, pick(rng, lang, [f"{which}用不上了，关了它（别删）"],
                                      [f"{which} is useless now, switch it off (keep it though)"]),
                      pick(rng, lang, [f"另外{say_clock(rng, new['time'], lang)}给我来一个新的，"
                                       f"备注{verbatim(new['label'], lang)}"],
                           [f"and add a fresh one at {say_clock(rng, new['time'], lang)}, "
                            f"call it {verbatim(new['label'], lang)}"]))
    if tools == ["delete_alarm", "create_alarm"] and draft.family == "undo_alarm":
        set_before = row_of(world.alarms, "alarm_id", draft.targets[0][1]["alarm_id"])
        new = draft.targets[1][1]
        if set_before is None or set_before["label"] != new.get("label") or new.get("repeat", "once") != "once":
            return None
        label, at = verbatim(set_before["label"], lang), say_clock(rng, set_before["time"], lang)
        first = pick(rng, lang, [f"{at}的闹钟来一个，备注{label}"], [f"alarm at {at}, name it {label}"])
        done = pick(rng, lang, ["设好了。"], ["All set."])
        fix = pick(rng, lang, [f"哎呀时间搞错了，把刚设的那个删了，换成{say_clock(rng, new['time'], lang)}，备注不变"],
                   [f"ugh, wrong time: delete the one you just set and make it {say_clock(rng, new['time'], lang)}, "
                    f"same name"])
        return fix, [{"role": "user", "content": first}, {"role": "assistant", "content": done}]
    return None


def _event(rng: random.Random, draft: Draft, world: World) -> Said | None:
    lang = world.lang
    if len(draft.targets) != 1 or draft.targets[0][0] != "create_event":
        return None
    args = draft.targets[0][1]
    start, end = (dt.datetime.strptime(args[k], "%Y-%m-%d %H:%M") for k in ("start", "end"))
    if start.date() != end.date():
        return None
    day = rng.choice(day_forms(start.date(), world.today, lang))
    span = (f"{say_clock(rng, args['start'][11:], lang)}到{say_clock(rng, args['end'][11:], lang)}" if lang == "zh" else
            f"from {say_clock(rng, args['start'][11:], lang)} till {say_clock(rng, args['end'][11:], lang)}")
    title, where = verbatim(args["title"], lang), args.get("location", "")
    place = (f"，在{where}" if lang == "zh" else f", at {where}") if where else ""
    first = pick(rng, lang, [f"{day}{span}我有个事：{title}{place}"], [f"{day} {span} I've got {title}{place}"])
    rest = pick(rng, lang, ["记到日历里去，别忘了", "帮我放进日程"], ["put that in my calendar", "pop it into my calendar"])
    return spread(rng, lang, first, rest)


def _retry_history(draft: Draft, said: Said | None, lang: str) -> Said | None:
    """A retried request: the re-said request as the earlier user turn, the assistant's failure kept, a new ask."""
    if said is None or len(draft.history) < 2 or draft.history[-1]["role"] != "assistant":
        return None
    query, turns = said
    first = ("，" if lang == "zh" else ", ").join(
        [t["content"] for t in turns if t["role"] == "user"] + [query])
    return first, [draft.history[-1]]


def _retry(render_request: Callable[[random.Random, Draft, World], Said | None]) -> \
        Callable[[random.Random, Draft, World], Said | None]:
    def render_retry(rng: random.Random, draft: Draft, world: World) -> Said | None:
        said = _retry_history(draft, render_request(rng, draft, world), world.lang)
        if said is None:
            return None
        first, failed = said
        ask = pick(rng, world.lang, ["那你搞定它，再弄一遍", "想办法解决了重来一次"],
                   ["fix whatever broke and redo it", "deal with that and have another go"])
        return ask, [{"role": "user", "content": first}] + failed
    return render_retry


# ----------------------------------------------------------------------------- corrections
def _correction(rng: random.Random, draft: Draft, world: World) -> Said | None:
    """An earlier request with another value (drawn here: not gold), the assistant's check, the user's fix."""
    lang = world.lang
    if len(draft.targets) != 1:
        return None
    tool, args = draft.targets[0]
    ask = pick(rng, lang, ["确认一下，这样对吗？", "要这么办吗？"], ["Just to confirm, go ahead?", "Shall I do that?"])
    if tool in ("set_volume", "set_brightness", "set_thermostat"):
        key = {"set_volume": "level", "set_brightness": "level", "set_thermostat": "celsius"}[tool]
        value = args[key]
        pool = range(16, 31) if tool == "set_thermostat" else range(10, 101, 5)
        was = rng.choice([v for v in pool if v != value and str(v) not in str(value)])
        done = draft.family == "undo_volume"  # the earlier turn's change is in S0: say that value, done
        if done:
            was = int(world.settings["volume_media"])
            ask = pick(rng, lang, [f"好了，已经是{was}了。"], [f"Done, it's at {was} now."])
        if tool == "set_thermostat":
            device = row(world, "home_devices", "device_id", args["device_id"])
            if device is None or not unique(world, "home_devices", "name", device["name"]):
                return None
            first = pick(rng, lang, [f"{device['name']}弄到{was}度"], [f"{device['name']} to {was} degrees"])
            fix = pick(rng, lang, [f"不不，{was}度不行，改成{value}度"], [f"nah, scrap {was}, go with {value}"])
        elif tool == "set_volume":
            zh, en = STREAMS[args["stream"]]
            first = pick(rng, lang, [f"{zh}弄成{was}"], [f"{en} at {was}"])
            fix = pick(rng, lang, [f"我说错了，不是{was}，是{say_level(rng, value, lang)}"],
                       [f"misspoke, not {was}, I meant {say_level(rng, value, lang)}"])
        else:
            first = pick(rng, lang, [f"屏幕亮度弄成{was}"], [f"screen brightness at {was}"])
            fix = pick(rng, lang, [f"我说错了，不是{was}，是{say_level(rng, value, lang)}"],
                       [f"misspoke, not {was}, I meant {say_level(rng, value, lang)}"])
        return fix, [{"role": "user", "content": first}, {"role": "assistant", "content": ask}]
    if tool == "call_contact":
        who = contact_word(rng, world, args["contact_id"])
        others = [c for c in world.contacts if c["contact_id"] != args["contact_id"]]
        if who is None or not others:
            return None
        wrong = rng.choice(others)["name"]
        return (pick(rng, lang, [f"搞错了，我要找的是{who}，不是{wrong}"], [f"wrong person, I want {who}, not {wrong}"]),
                [{"role": "user", "content": pick(rng, lang, [f"拨给{wrong}"], [f"ring {wrong}"])},
                 {"role": "assistant", "content": ask}])
    if tool in ("send_message", "send_chat_message"):
        if tool == "send_message":
            who = contact_word(rng, world, args["contact_id"])
        else:
            chat = row(world, "chats", "chat_id", args["chat_id"])
            who = chat["title"] if chat and unique(world, "chats", "title", chat["title"]) else None
        if who is None:
            return None
        wrong = rng.choice([t for t in TEXTS[lang] if t != args["text"]])
        via = "" if tool == "send_message" else ("微信上" if lang == "zh" else "on WeChat ")
        said_wrong = verbatim(wrong, lang)
        first = pick(rng, lang, [f"{via}给{who}发{said_wrong}"], [f"message {who} {via}{said_wrong}"])
        fix = pick(rng, lang, [f"等下，内容换掉，发{verbatim(args['text'], lang)}"],
                   [f"hang on, change the words to {verbatim(args['text'], lang)}"])
        return fix, [{"role": "user", "content": first}, {"role": "assistant", "content": ask}]
    if tool == "add_medication_reminder":
        wrong = rng.choice([t for t in ("07:00", "08:00", "12:00", "21:00") if t != args["time"]])
        name, dose = verbatim(args["name"], lang), verbatim(args["dose"], lang)
        first = pick(rng, lang, [f"每天{say_clock(rng, wrong, lang)}提醒我吃{name}，一回{dose}"],
                     [f"daily reminder for {name} at {say_clock(rng, wrong, lang)}, {dose} a time"])
        fix = pick(rng, lang, [f"不对不对，点儿改到{say_clock(rng, args['time'], lang)}，其他一样"],
                   [f"no wait, make the time {say_clock(rng, args['time'], lang)}, rest the same"])
        return fix, [{"role": "user", "content": first}, {"role": "assistant", "content": ask}]
    if tool == "create_alarm" and draft.bucket != "behaviour":
        wrong = rng.choice([t for t in ("06:00", "06:30", "07:00", "07:30", "08:00", "21:00") if t != args["time"]])
        label = args.get("label", "")
        named = (f"，备注{verbatim(label, lang)}" if lang == "zh" else f", call it {verbatim(label, lang)}") \
            if label else ""
        said_wrong = say_clock(rng, wrong, lang)
        first = pick(rng, lang, [f"{said_wrong}叫醒我{named}"], [f"wake me {said_wrong}{named}"])
        fix = pick(rng, lang, [f"时间不对，换成{say_clock(rng, args['time'], lang)}，别的照旧"],
                   [f"wrong time, make it {say_clock(rng, args['time'], lang)}, rest stays"])
        if args.get("repeat", "once") != "once":
            return None
        return fix, [{"role": "user", "content": first}, {"role": "assistant", "content": ask}]
    return None


# ----------------------------------------------------------------------------- conditionals
def _conditional(rng: random.Random, draft: Draft, world: World) -> Said | None:
    """The conditional families whose other branch this grammar can say (its value drawn here when free)."""
    lang, family = world.lang, draft.family
    tools = [t for t, _ in draft.targets]
    if family == "wifi_or_data":
        return pick(rng, lang, ["瞅一眼 wifi：没开就打开；开着的话把流量关了"],
                    ["look at wifi: off → turn it on; already on → switch cell data off"]), []
    if family == "quiet_or_ring" and tools in (["set_volume"], ["set_do_not_disturb"]):
        level = draft.targets[0][1]["level"] if tools == ["set_volume"] else rng.choice(range(20, 101, 10))
        return pick(rng, lang, [f"勿扰要是开着就给我关了，没开就把来电铃声搞成{level}"],
                    [f"if DND's on, turn it off; if it isn't, ringer volume to {level}"]), []
    if family == "airplane_then_call" and tools == ["call_contact"]:
        who = contact_word(rng, world, draft.targets[0][1]["contact_id"])
        if who is None:
            return None
        return pick(rng, lang, [f"我刚下飞机，飞行模式还开着的话先关，然后拨{who}"],
                    [f"just landed: kill airplane mode if it's still on, then ring {who}"]), []
    if family == "bluetooth_then_volume" and tools[-1:] == ["set_volume"]:
        args = draft.targets[-1][1]
        zh, en = STREAMS[args["stream"]]
        return pick(rng, lang, [f"蓝牙要是开着就关掉，然后{zh}改到{args['level']}"],
                    [f"BT off if it's on, then {en} to {args['level']}"]), []
    return None


def _tracking(rng: random.Random, draft: Draft, world: World) -> Said | None:
    if draft.family in ("call", "message", "reply_last"):
        return _contact_task(rng, draft, world)
    return None


#: The renderer of each family this grammar can say (by :attr:`Draft.family`).
RENDERERS: dict[str, Callable[[random.Random, Draft, World], Said | None]] = {
    **dict.fromkeys(("brightness", "volume", "ringer", "do_not_disturb", "toggle", "app"), _setting),
    **dict.fromkeys(("call", "message", "reply_last"), _tracking),
    **dict.fromkeys(("edit_alarm", "replace_alarm", "undo_alarm"), _alarm_edit),
    "create_alarm": _alarm, "create_event": _event, "retry_event": _retry(_event),
    "resend_message": _retry(_contact_task),
    **dict.fromkeys(("changed_level", "undo_volume", "changed_callee", "changed_text", "changed_alarm",
                     "changed_thermostat", "changed_chat_text", "changed_medication_time"), _correction),
    **dict.fromkeys(("home_device", "start_workout", "medication_reminder", "add_to_cart", "chat_message",
                     "log_dose", "run_scene", "checkout", "cancel_order"), say_domain_task),
    "retry_home": _retry(say_domain_task), **dict.fromkeys(("favorite_photos", "share_photo"), say_photo_task),
    **dict.fromkeys(("navigate", "ride", "changed_mode", "share_eta", "departure_reminder", "save_place",
                     "navigate_saved"), say_maps_task),
    "retry_navigation": _retry(say_maps_task),
    **dict.fromkeys(("wifi_or_data", "quiet_or_ring", "airplane_then_call", "bluetooth_then_volume"), _conditional),
}


def render(rng: random.Random, draft: Draft, world: World) -> Draft | None:
    """``draft`` with the user's words re-rendered by this grammar, or None when its frame is not one it says.

    Only basic tasks whose request states everything (no must-ask, no behaviour bucket: those hinge on what the
    standard words leave out or on the answer's wording) are said; ``rng`` is the task's own held-out generator."""
    if draft.dimension != "basic" or draft.must_ask or draft.bucket == "behaviour":
        return None
    renderer = RENDERERS.get(draft.family)
    said = renderer(rng, draft, world) if renderer is not None else None
    if said is None:
        return None
    query, history = said
    return replace(draft, query=query, history=history)
