"""Task families of intent correction and of recovery after a failure the user saw.

Intent correction: the dialogue history ``H0`` holds an earlier request (confirmed by the assistant
but not carried out, or already carried out, in which case ``S_0`` shows its effect), and the new
request corrects it: the corrected value must be used and the earlier one must not (or must be
undone). Recovery: the history shows a call that failed (no permission, airplane mode, a service
timeout, still planted in ``S_0``) and the user asks to fix it and try again. Same
``(rng, world) -> Draft`` contract as :mod:`.generate_grounding`.
"""

from __future__ import annotations

import datetime as dt
import random
from typing import Any

from .generate_oracle import PERMISSION, RUNTIME, STATE, Draft, GenerationError, OracleRun, fact, missing
from .generate_phrases import quote, say, say_clock, say_day
from .generate_tracking import OUTGOING, addressee, contact_of
from .generate_world import ALARM_LABELS, EVENT_TITLES, World

CONTACT_OBSTACLES = (RUNTIME, PERMISSION, STATE)


def _turns(user: str, assistant: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": user}, {"role": "assistant", "content": assistant}]


def _two_levels(rng: random.Random, current: str) -> tuple[int, int]:
    first, second = rng.sample([v for v in range(10, 101, 5) if v != int(current)], 2)
    return first, second


def changed_level(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    if rng.random() < 0.5:
        was, level = _two_levels(rng, world.settings["brightness"])
        target: tuple[str, dict[str, Any]] = ("set_brightness", {"level": level})
        history = _turns(say(rng, lang, [f"把亮度调到{was}%"], [f"Set the brightness to {was}%."]),
                         say(rng, lang, [f"确认把屏幕亮度调到{was}%吗？"], [f"Set screen brightness to {was}%?"]))
    else:
        was, level = _two_levels(rng, world.settings["volume_media"])
        target = ("set_volume", {"stream": "media", "level": level})
        history = _turns(say(rng, lang, [f"把媒体音量调到{was}"], [f"Media volume to {was}."]),
                         say(rng, lang, [f"确认把媒体音量调到{was}吗？"], [f"Set the media volume to {was}?"]))
    query = say(rng, lang, [f"不对，{level}%吧", f"等下，调到{level}就好", f"说错了，是{level}"],
                [f"Actually, make it {level}%.", f"Wait, {level} instead.", f"Sorry, I meant {level}."])

    def plan(run: OracleRun) -> str:
        run.act(*target)
        return say(rng, lang, [f"好的，已调到{level}。"], [f"Done, it's at {level} now."])
    return Draft("changed_level", "tool_call", query, plan, [target], history=history, obstacle_kinds=(RUNTIME, STATE))


def changed_alarm(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    was, time = world.free_alarm_time(rng), world.free_alarm_time(rng)
    while time == was:
        time = world.free_alarm_time(rng)
    label = rng.choice([x for x in ALARM_LABELS[lang] if x not in {a["label"] for a in world.alarms}])
    q, said = quote(label, lang), say_clock(rng, time, lang)
    history = _turns(say(rng, lang, [f"{say_clock(rng, was, lang)}叫我，标签{q}"],
                         [f"Wake me at {say_clock(rng, was, lang)}, label it {q}."]),
                     say(rng, lang, [f"好的，要设{was}的闹钟（{label}）吗？"], [f"Set an alarm for {was} ({label})?"]))
    target = ("create_alarm", {"time": time, "label": label, "repeat": "once"})
    ask = rng.random() < 0.3

    def plan(run: OracleRun) -> str:
        if ask:
            run.ask(say(rng, lang, ["改到几点？"], ["What time instead?"]))
        run.act("create_alarm", {"time": time, "label": label})
        return say(rng, lang, [f"已设置{time}的闹钟（{label}）。"], [f"Alarm set for {time} ({label})."])
    if ask:
        query = say(rng, lang, ["时间不对，改一下", "等等，不是这个时间"], ["Wrong time, let me change it.", "Hold on, not that time."])
        return Draft("changed_alarm", "behaviour", query, plan, [target], history=history,
                     user_facts=[fact("time", time, say(rng, lang, [f"{said}", f"改成{said}"],
                                                        [f"{said}.", f"Make it {said}."]))],
                     obstacle_kinds=(RUNTIME, STATE), must_ask=True,
                     obstacles=[missing("the corrected time is not said: the user's reply gives it")])
    query = say(rng, lang, [f"改成{said}吧", f"不对，{said}才对"], [f"Make it {said} instead.", f"No, {said}."])
    return Draft("changed_alarm", "state_change", query, plan, [target], history=history,
                 obstacle_kinds=(RUNTIME, STATE))


def changed_text(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    contact, who, key = addressee(rng, world)
    was, text = rng.sample(OUTGOING[lang], 2)
    history = _turns(say(rng, lang, [f"给{who}发短信说{quote(was, lang)}"], [f"Text {who}: {quote(was, lang)}"]),
                     say(rng, lang, [f"要把{quote(was, lang)}发给{contact['name']}吗？"],
                         [f"Send {quote(was, lang)} to {contact['name']}?"]))
    query = say(rng, lang, [f"改一下，内容换成{quote(text, lang)}", f"别发这个，改成{quote(text, lang)}"],
                [f"Change it to {quote(text, lang)}.", f"Don't send that, send {quote(text, lang)} instead."])

    def plan(run: OracleRun) -> str:
        run.act("send_message", {"contact_id": contact_of(run, contact, key), "text": text})
        return say(rng, lang, [f"已发送：{text}"], [f"Sent: {text}"])
    return Draft("changed_text", "state_change", query, plan,
                 [("send_message", {"contact_id": contact["contact_id"], "text": text})], reads=("search_contacts",),
                 history=history, obstacle_kinds=CONTACT_OBSTACLES)


def undo_alarm(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    label = rng.choice([x for x in ALARM_LABELS[lang] if x not in {a["label"] for a in world.alarms}])
    wrong = world.add_alarm(world.free_alarm_time(rng), label)  # what the assistant set in the earlier turn
    time = world.free_alarm_time(rng)
    q, t0, t1 = quote(label, lang), say_clock(rng, wrong["time"], lang), say_clock(rng, time, lang)
    history = _turns(say(rng, lang, [f"帮我定个{t0}的闹钟，标签{q}"], [f"Set an alarm for {t0}, label {q}."]),
                     say(rng, lang, [f"已为你设置{wrong['time']}的闹钟（{label}）。"],
                         [f"Done: alarm set for {wrong['time']} ({label})."]))
    query = say(rng, lang, [f"搞错了，应该是{t1}。把{t0}那个删掉，重新定一个{t1}的", f"时间不对，删掉{t0}的那个，改定{t1}"],
                [f"Oops, I meant {t1}. Delete the {t0} one and set a new one for {t1}.",
                 f"Wrong time: remove the {t0} alarm and set one at {t1} instead."])

    def plan(run: OracleRun) -> str:
        found = [a for a in run.read("list_alarms")["alarms"] if a["time"] == wrong["time"]]
        if len(found) != 1:
            raise GenerationError(f"{run.task.task_id}: the alarm to undo is not on the phone")
        run.act("delete_alarm", {"alarm_id": found[0]["alarm_id"]})
        run.act("create_alarm", {"time": time, "label": label})
        return say(rng, lang, [f"已删除{wrong['time']}的闹钟，新设了{time}的。"],
                   [f"Deleted the {wrong['time']} alarm and set one for {time}."])
    return Draft("undo_alarm", "state_change", query, plan,
                 [("delete_alarm", {"alarm_id": wrong["alarm_id"]}), ("create_alarm", {"time": time, "label": label})],
                 reads=("list_alarms",), history=history)


def undo_volume(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    was, level = _two_levels(rng, world.settings["volume_media"])
    world.settings["volume_media"] = str(was)  # the earlier turn's change is in S0
    history = _turns(say(rng, lang, [f"把媒体音量调到{was}"], [f"Set the media volume to {was}."]),
                     say(rng, lang, [f"已把媒体音量调到{was}。"], [f"Media volume is now {was}%."]))
    louder = level > was
    query = say(rng, lang, [f"声音太小了，调到{level}" if louder else f"太吵了，还是调到{level}吧"],
                [f"Too quiet, make it {level}." if louder else f"Too loud, put it at {level}."])

    def plan(run: OracleRun) -> str:
        run.act("set_volume", {"stream": "media", "level": level})
        return say(rng, lang, [f"媒体音量已改为{level}。"], [f"Media volume changed to {level}%."])
    return Draft("undo_volume", "tool_call", query, plan, [("set_volume", {"stream": "media", "level": level})],
                 history=history)


def changed_callee(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    first, first_who, _ = addressee(rng, world, 0.0)
    contact, who, key = addressee(rng, world)
    while contact is first:
        contact, who, key = addressee(rng, world, 0.0)
    history = _turns(say(rng, lang, [f"给{first_who}打个电话"], [f"Call {first_who}."]),
                     say(rng, lang, [f"要呼叫{first['name']}吗？"], [f"Call {first['name']}?"]))
    query = say(rng, lang, [f"不是{first_who}，是打给{who}", f"打错人了，换成{who}"],
                [f"Not {first_who}, call {who}.", f"Wrong person, call {who} instead."])

    def plan(run: OracleRun) -> str:
        run.act("call_contact", {"contact_id": contact_of(run, contact, key)})
        return say(rng, lang, [f"正在呼叫{contact['name']}。"], [f"Calling {contact['name']}."])
    return Draft("changed_callee", "tool_call", query, plan, [("call_contact", {"contact_id": contact["contact_id"]})],
                 reads=("search_contacts",), history=history, obstacle_kinds=CONTACT_OBSTACLES)


def text_not_call(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    contact, who, key = addressee(rng, world)
    text = rng.choice(OUTGOING[lang])
    history = _turns(say(rng, lang, [f"给{who}打个电话"], [f"Call {who}."]),
                     say(rng, lang, [f"好的，准备呼叫{contact['name']}。"], [f"OK, about to call {contact['name']}."]))
    query = say(rng, lang, [f"算了别打了，发个短信告诉{who}{quote(text, lang)}就行"],
                [f"Never mind the call, just text {who} {quote(text, lang)}."])

    def plan(run: OracleRun) -> str:
        run.act("send_message", {"contact_id": contact_of(run, contact, key), "text": text})
        return say(rng, lang, [f"没有打电话，已发短信：{text}"], [f"No call; I texted: {text}"])
    return Draft("text_not_call", "behaviour", query, plan,
                 [("send_message", {"contact_id": contact["contact_id"], "text": text})], reads=("search_contacts",),
                 history=history, obstacle_kinds=CONTACT_OBSTACLES, forbidden=["call_contact"])


def resend_message(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    contact, who, key = addressee(rng, world)
    text = rng.choice(OUTGOING[lang])
    if rng.random() < 0.5:
        next(p for p in world.permissions if p["app"] == "messages")["granted"] = 0
        obstacle = {"kind": PERMISSION, "note": "messages lacks the sms permission (the earlier send failed)"}
        failed = say(rng, lang, ["发送失败：短信应用没有发送短信的权限。"], ["The message failed: Messages has no SMS permission."])
    else:
        world.settings["airplane_mode"] = "on"
        obstacle = {"kind": STATE, "note": "airplane mode is on (the earlier send failed)"}
        failed = say(rng, lang, ["发送失败：手机开着飞行模式。"], ["The message failed: airplane mode is on."])
    history = _turns(say(rng, lang, [f"给{who}发短信说{quote(text, lang)}"], [f"Text {who}: {quote(text, lang)}"]), failed)
    query = say(rng, lang, ["那你处理一下，再发一次吧", "帮我解决一下，重新发送"],
                ["Fix it and send it again.", "Sort that out and try again."])

    def plan(run: OracleRun) -> str:
        run.act("send_message", {"contact_id": contact_of(run, contact, key), "text": text})
        return say(rng, lang, ["已处理并重新发送。"], ["Fixed it and sent the message."])
    return Draft("resend_message", "tool_call", query, plan,
                 [("send_message", {"contact_id": contact["contact_id"], "text": text})], reads=("search_contacts",),
                 history=history, obstacles=[obstacle])


def retry_event(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    day = world.today + dt.timedelta(days=rng.randint(1, 4))
    start = dt.datetime.combine(day, dt.time(rng.randint(8, 19), rng.choice((0, 30))))
    title = rng.choice([t for t in EVENT_TITLES[lang] if t not in {e["title"] for e in world.events}])
    args = {"title": title, "start": start.strftime("%Y-%m-%d %H:%M"),
            "end": (start + dt.timedelta(hours=1)).strftime("%Y-%m-%d %H:%M")}
    world.faults.append({"tool": "create_event", "error_type": "transient_failure", "remaining": rng.randint(1, 2),
                         "message": "calendar service timed out; try again"})
    history = _turns(say(rng, lang, [f"帮我在日历上加个{quote(title, lang)}，{say_day(rng, day, world.today, lang)}"
                                     f"{say_clock(rng, args['start'][11:], lang)}开始，一个小时"],
                         [f"Add {quote(title, lang)} to my calendar {say_day(rng, day, world.today, lang)} at "
                          f"{say_clock(rng, args['start'][11:], lang)}, for an hour."]),
                     say(rng, lang, ["日历服务暂时没有响应，没能创建。"],
                         ["The calendar service didn't respond, so it wasn't created."]))
    query = say(rng, lang, ["再试一次", "麻烦再创建一次"], ["Try again.", "Please try once more."])

    def plan(run: OracleRun) -> str:
        run.settings()
        run.act("create_event", args)
        return say(rng, lang, ["这次创建成功了。"], ["It worked this time: the event is on your calendar."])
    return Draft("retry_event", "state_change", query, plan, [("create_event", args)], reads=("get_device_status",),
                 history=history, obstacle_kinds=(), obstacles=[{"kind": RUNTIME, "note": "create_event times out "
                                                                 "(transient): retrying succeeds"}])


CORRECTION = (changed_level, changed_alarm, changed_text, undo_alarm, undo_volume, changed_callee, text_not_call)
RECOVERY = (resend_message, retry_event)
