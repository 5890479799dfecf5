"""Task families of state tracking: a later call needs what an earlier one returned.

The contact id of a person named in the request (``search_contacts``), the id of an alarm named by
its label or time (``list_alarms``), the start of tomorrow's first event (``list_events``), the last
message someone sent (``list_messages``): the oracle reads each from the sandbox's payload, as an
agent must. Same ``(rng, world) -> Draft`` contract as :mod:`.generate_grounding`.
"""

from __future__ import annotations

import datetime as dt
import random
from typing import Any

from .generate_oracle import PERMISSION, RUNTIME, STATE, Draft, GenerationError, OracleRun, fact, missing
from .generate_phrases import quote, say, say_clock, say_day, say_duration, shift_clock
from .generate_world import ALARM_LABELS, EVENT_TITLES, LOCATIONS, MESSAGES, World

ASK_RATE = 0.25
OUTGOING = {"zh": ("我晚点到", "到楼下了", "会议推迟到四点", "今晚不回家吃饭", "帮我带份早餐", "钥匙在门口地垫下", "明天见",
                   "文件已经发你了"),
            "en": ("Running 10 minutes late", "I'm downstairs", "Meeting pushed to 4", "Won't be home for dinner",
                   "Can you grab me breakfast?", "Key is under the mat", "See you tomorrow", "Sent you the file")}
REPLIES = {"zh": ("好的，收到", "马上到", "没问题", "晚点打给你"),
           "en": ("Got it, thanks", "On my way", "No problem", "Will call you later")}
HEADS_UP = {"zh": ("出门", "准备出发", "提前准备"), "en": ("Leave home", "Get ready", "Heads-up")}
CONTACT_OBSTACLES = (RUNTIME, PERMISSION, STATE)


def addressee(rng: random.Random, world: World, lookalike_rate: float = 0.4) -> tuple[dict[str, Any], str, str]:
    """A contact the request names, how the user says it, and how the oracle searches for it."""
    by_relation = rng.random() < 0.5
    contact = world.pick_contact(rng, by_relation)
    if by_relation:
        return contact, ("my " if world.lang == "en" else "") + contact["relation"], contact["relation"]
    if rng.random() < lookalike_rate:
        world.add_lookalike(rng, contact)
    return contact, contact["name"], contact["name"]


def contact_of(run: OracleRun, contact: dict[str, Any], key: str) -> str:
    """The oracle's search for ``contact``: its id, read from the search results."""
    if key == contact["relation"]:
        return run.find_contact(key, relation=key)["contact_id"]
    return run.find_contact(key, name=key)["contact_id"]


def message(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    contact, who, key = addressee(rng, world)
    text = rng.choice(OUTGOING[lang])
    q = quote(text, lang)
    target = ("send_message", {"contact_id": contact["contact_id"], "text": text})
    answer = say(rng, lang, [f"已给{contact['name']}发送短信：{text}"], [f"Texted {contact['name']}: {text}"])

    def plan(run: OracleRun, ask: bool = False) -> str:
        contact_id = contact_of(run, contact, key)
        if ask:
            run.ask(say(rng, lang, ["要发什么内容？"], ["What should the message say?"]))
        run.act("send_message", {"contact_id": contact_id, "text": text})
        return answer

    if rng.random() < ASK_RATE:
        query = say(rng, lang, [f"给{who}发条短信", f"帮我给{who}发个消息"], [f"Send {who} a text.", f"Message {who}."])
        reply = say(rng, lang, [f"就说{q}吧", f"内容是{q}"], [f"Say {q}.", f"Just {q}."])
        return Draft("message", "behaviour", query, lambda run: plan(run, True), [target], reads=("search_contacts",),
                     obstacle_kinds=CONTACT_OBSTACLES, user_facts=[fact("text", text, reply)], must_ask=True,
                     obstacles=[missing("no message text: the user's reply gives it")])
    query = say(rng, lang, [f"给{who}发短信说{q}", f"帮我发条消息给{who}：{q}", f"跟{who}说一声{q}"],
                [f"Text {who}: {q}", f"Send {who} a message saying {q}.", f"Let {who} know {q}."])
    return Draft("message", rng.choice(("tool_call", "state_change")), query, plan, [target],
                 reads=("search_contacts",), obstacle_kinds=CONTACT_OBSTACLES)


def call(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    contact, who, key = addressee(rng, world)
    query = say(rng, lang, [f"给{who}打个电话", f"帮我呼叫{who}", f"打给{who}"],
                [f"Call {who}.", f"Give {who} a call.", f"Phone {who} for me."])

    def plan(run: OracleRun) -> str:
        run.act("call_contact", {"contact_id": contact_of(run, contact, key)})
        return say(rng, lang, [f"正在呼叫{contact['name']}。"], [f"Calling {contact['name']}."])
    return Draft("call", "tool_call", query, plan, [("call_contact", {"contact_id": contact["contact_id"]})],
                 reads=("search_contacts",), obstacle_kinds=CONTACT_OBSTACLES)


def edit_alarm(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    alarm = rng.choice(world.alarms)
    by_label = rng.random() < 0.5
    ref = quote(alarm["label"], lang) if by_label else say_clock(rng, alarm["time"], lang)
    action = rng.choice(("toggle", "toggle", "delete"))
    if action == "delete":
        target: tuple[str, dict[str, Any]] = ("delete_alarm", {"alarm_id": alarm["alarm_id"]})
        query = say(rng, lang, [f"把{ref}的闹钟删了", f"{ref}那个闹钟不要了，删掉吧"],
                    [f"Delete the {ref} alarm.", f"I don't need the {ref} alarm any more, remove it."])
    elif alarm["enabled"]:
        target = ("set_alarm_enabled", {"alarm_id": alarm["alarm_id"], "enabled": False})
        query = say(rng, lang, [f"把{ref}的闹钟关掉", f"{ref}那个闹钟先关了，别删"],
                    [f"Turn off the {ref} alarm.", f"Switch off the {ref} alarm but keep it."])
    else:
        target = ("set_alarm_enabled", {"alarm_id": alarm["alarm_id"], "enabled": True})
        query = say(rng, lang, [f"把{ref}的闹钟打开", f"重新开启{ref}那个闹钟"],
                    [f"Turn the {ref} alarm back on.", f"Enable the {ref} alarm again."])

    def plan(run: OracleRun) -> str:
        alarms = run.read("list_alarms")["alarms"]
        key, value = ("label", alarm["label"]) if by_label else ("time", alarm["time"])
        found = [a for a in alarms if a[key] == value]
        if len(found) != 1:
            raise GenerationError(f"{run.task.task_id}: {value!r} names {len(found)} alarms")
        run.act(target[0], {**target[1], "alarm_id": found[0]["alarm_id"]})
        return say(rng, lang, [f"已处理{alarm['time']}的闹钟（{alarm['label']}）。"],
                   [f"Done: the {alarm['time']} alarm ({alarm['label']})."])
    return Draft("edit_alarm", "tool_call", query, plan, [target], reads=("list_alarms",))


def free_lead(rng: random.Random, world: World, start: str) -> int:
    """Minutes before ``start`` at which no alarm rings yet (six candidates: more than a phone here has alarms)."""
    leads = [m for m in (30, 45, 60, 75, 90, 120) if world.alarm_at(shift_clock(start, -m)) is None]
    if not leads:
        raise GenerationError(f"every lead before {start} already has an alarm")
    return rng.choice(leads)


def alarm_before_event(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    day = world.today + dt.timedelta(days=rng.randint(1, 3))
    if not world.events_on(day):
        title = rng.choice([t for t in EVENT_TITLES[lang] if t not in {e["title"] for e in world.events}])
        world.add_event(title, dt.datetime.combine(day, dt.time(rng.randint(8, 17), rng.choice((0, 30)))), 60,
                        rng.choice(LOCATIONS[lang]))
    first = world.events_on(day)[0]
    lead = free_lead(rng, world, first["start"][11:])
    time = shift_clock(first["start"][11:], -lead)
    label = rng.choice(HEADS_UP[lang])
    when, q = say_day(rng, day, world.today, lang), quote(label, lang)
    query = say(rng, lang, [f"看看我{when}第一个安排是几点，提前{say_duration(lead, lang)}给我定个闹钟，标签写{q}"],
                [f"Check when my first appointment {when} starts and set an alarm {say_duration(lead, lang)} "
                 f"before it, labelled {q}."])

    def plan(run: OracleRun) -> str:
        run.settings()
        events = run.read("list_events", {"date": day.isoformat()})["events"]
        ring = shift_clock(events[0]["start"][11:], -lead)
        run.act("create_alarm", {"time": ring, "label": label})
        return say(rng, lang, [f"{when}第一个安排“{events[0]['title']}”{events[0]['start'][11:]}开始，已定{ring}的闹钟。"],
                   [f"Your first item {when}, \"{events[0]['title']}\", starts at {events[0]['start'][11:]}; alarm "
                    f"set for {ring}."])
    return Draft("alarm_before_event", "state_change", query, plan, [("create_alarm", {"time": time, "label": label})],
                 reads=("list_events",), obstacle_kinds=(RUNTIME, STATE))


def _incoming(rng: random.Random, world: World, contact: dict[str, Any]) -> str:
    """Make ``contact``'s text the newest message on the phone; its text."""
    text = rng.choice(MESSAGES[world.lang])
    world.add_message(contact["contact_id"], "in", text, rng.randint(5, 50))
    return text


def reply_last(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    contact, who, key = addressee(rng, world, 0.3)
    _incoming(rng, world, contact)
    text = rng.choice(REPLIES[lang])
    q = quote(text, lang)
    query = say(rng, lang, [f"看看{who}刚发的短信，然后回复{q}", f"{who}刚给我发了消息，帮我回个{q}"],
                [f"Check {who}'s last text and reply {q}.", f"{who[:1].upper() + who[1:]} just texted me, answer {q}."])

    def plan(run: OracleRun) -> str:
        contact_id = contact_of(run, contact, key)
        run.read("list_messages", {"contact_id": contact_id})
        run.act("send_message", {"contact_id": contact_id, "text": text})
        return say(rng, lang, [f"已回复{contact['name']}：{text}"], [f"Replied to {contact['name']}: {text}"])
    return Draft("reply_last", "state_change", query, plan,
                 [("send_message", {"contact_id": contact["contact_id"], "text": text})],
                 reads=("search_contacts", "list_messages"), obstacle_kinds=CONTACT_OBSTACLES)


def last_message(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    contact, who, key = addressee(rng, world, 0.3)
    text = _incoming(rng, world, contact)
    query = say(rng, lang, [f"{who}最后给我发的短信说了什么？", f"帮我看看{who}刚才发了什么消息"],
                [f"What did {who} say in their last text?", f"Read me {who}'s latest message."])

    def plan(run: OracleRun) -> str:
        found = run.read("list_messages", {"contact_id": contact_of(run, contact, key)})["messages"]
        latest = [m for m in found if m["direction"] == "in"][-1]
        return say(rng, lang, [f"{contact['name']}说：“{latest['text']}”"],
                   [f"{contact['name']} wrote: \"{latest['text']}\""])
    return Draft("last_message", "behaviour", query, plan, reads=("search_contacts", "list_messages"),
                 obstacle_kinds=(RUNTIME, PERMISSION), answer_mentions=[[text]])


def replace_alarm(rng: random.Random, world: World) -> Draft:
    lang = world.lang
    enabled = [a for a in world.alarms if a["enabled"]]
    old = rng.choice(enabled) if enabled else world.add_alarm(world.free_alarm_time(rng), ALARM_LABELS[lang][0])
    time = world.free_alarm_time(rng)
    label = old["label"] if rng.random() < 0.5 else rng.choice(HEADS_UP[lang])
    t0, t1, q = say_clock(rng, old["time"], lang), say_clock(rng, time, lang), quote(label, lang)
    query = say(rng, lang, [f"新建一个{t1}的闹钟，标签{q}，然后把原来{t0}那个关掉"],
                [f"Create a {t1} alarm labelled {q}, then switch off the {t0} one."])

    def plan(run: OracleRun) -> str:
        run.act("create_alarm", {"time": time, "label": label})
        found = [a for a in run.read("list_alarms")["alarms"] if a["time"] == old["time"]]
        run.act("set_alarm_enabled", {"alarm_id": found[0]["alarm_id"], "enabled": False})
        return say(rng, lang, [f"已新建{time}的闹钟并关闭了{old['time']}的闹钟。"],
                   [f"Created the {time} alarm and switched off the {old['time']} one."])
    return Draft("replace_alarm", "state_change", query, plan,
                 [("create_alarm", {"time": time, "label": label, "repeat": "once"}),
                  ("set_alarm_enabled", {"alarm_id": old["alarm_id"], "enabled": False})],
                 reads=("list_alarms",), obstacle_kinds=(RUNTIME, STATE))


FAMILIES = (message, call, edit_alarm, alarm_before_event, reply_last, last_message, replace_alarm)
#: families whose plan still reads naturally with an obstacle forced on it (the error-recovery category)
RECOVERABLE = (message, call, edit_alarm, alarm_before_event, reply_last)
