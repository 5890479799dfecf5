"""Task families of ambiguous requests: two records fit the request, and only the user knows which is meant.

The request reads two ways on this phone, both plausible, and nothing on the phone tells them apart: the
assistant must ask (``ask_user``) before it changes anything, then act on the record the user names. Each task
is a ``behaviour`` task with ``must_ask`` and the gold delta (the right record changed, the other untouched); its
:class:`~mobility_env.mobilepa.tasks.UserFact` names the meant record (``record``) and the other reading
(``others``), so the simulated user answers "which one?", "the colleague?" or "the 7:30 PM one?" from it, and the
generator's checks play the cheap wrong ways (act at once on either record, ask and then act on the other) and
require them to fail (:func:`~.generate_checks.adversaries`).

* :func:`same_name`: "text 张伟 …" with two contacts called 张伟 (a colleague and a friend, other numbers);
* :func:`same_clock`: "turn off (delete) my 7:30 alarm" with two alarms on, at 07:30 and 19:30.

Same ``(rng, world) -> Draft`` contract as :mod:`.generate_grounding`; the generator draws them for the grounding
positions of one basic block in :data:`~.generate.AMBIGUITY_EVERY` (:func:`~.generate._basic_kind`).
"""

from __future__ import annotations

import random
from typing import Any

from .generate_oracle import RUNTIME, STATE, Draft, GenerationError, OracleRun, ambiguous, fact
from .generate_phrases import quote, say, say_clock
from .generate_tracking import CONTACT_OBSTACLES, OUTGOING
from .generate_world import ALARM_LABELS, GENERIC, World, _person, free_alarm_times
from .tasks import Reading

#: Alarm labels that would tell a morning alarm from an evening one (a reading no longer plausible): not used.
TELLING_LABELS = frozenset({"起床", "午休", "Wake up", "Nap"})


def _tail(contact: dict[str, Any]) -> str:
    return str(contact["phone"])[-4:]


def _described(contact: dict[str, Any], lang: str) -> str:
    return (f"{contact['relation']}（尾号{_tail(contact)}）" if lang == "zh"
            else f"your {contact['relation']} (number ending {_tail(contact)})")


def same_name(rng: random.Random, world: World) -> Draft:
    """A text to a name two contacts share (a colleague and a friend, say); the user's fact: which one."""
    lang = world.lang
    name = _person(rng, {c["name"] for c in world.contacts})
    relations = rng.sample([r for r in GENERIC[lang] if r], 2)
    pair = [world.add_contact(rng, name, relation) for relation in relations]
    while _tail(pair[1]) == _tail(pair[0]):
        pair[1]["phone"] = pair[1]["phone"][:-4] + f"{rng.randrange(10_000):04d}"
    meant, other = rng.sample(pair, 2)
    text = rng.choice(OUTGOING[lang])
    q = quote(text, lang)
    query = say(rng, lang, [f"给{name}发短信说{q}", f"帮我跟{name}说一声{q}"], [f"Text {name}: {q}", f"Let {name} know {q}."])
    rel, tail = meant["relation"], _tail(meant)
    reply = say(rng, lang, [f"发给{rel}那个，尾号{tail}", f"是我{rel}{name}，尾号{tail}的"],
                [f"My {rel}, the number ending {tail}.", f"The {rel} one, ending {tail}."])
    user_fact = fact("contact", meant["contact_id"], reply, [rel, tail, meant["phone"]],
                     [Reading(value=other["contact_id"], words=[other["relation"], _tail(other), other["phone"]],
                              record=other["contact_id"])], record=meant["contact_id"])

    def plan(run: OracleRun) -> str:
        found = [c for c in run.read("search_contacts", {"query": name})["contacts"] if c["name"] == name]
        if len(found) != 2:
            raise GenerationError(f"{run.task.task_id}: {name!r} should name two contacts: {found}")
        said = run.ask(say(rng, lang, [f"通讯录里有两位{name}：{_described(found[0], lang)}和{_described(found[1], lang)}，"
                                       "发给哪一位？"],
                           [f"You have two contacts named {name}: {_described(found[0], lang)} and "
                            f"{_described(found[1], lang)}. Which one should I text?"]))
        chosen = [c for c in found if _tail(c) in said]
        if len(chosen) != 1:
            raise GenerationError(f"{run.task.task_id}: the reply {said!r} names no one of {found}")
        run.act("send_message", {"contact_id": chosen[0]["contact_id"], "text": text})
        return say(rng, lang, [f"已给{rel}{name}（尾号{tail}）发送短信：{text}"],
                   [f"Texted {name} (your {rel}, ending {tail}): {text}"])
    return Draft("same_name", "behaviour", query, plan,
                 [("send_message", {"contact_id": meant["contact_id"], "text": text})], reads=("search_contacts",),
                 obstacle_kinds=CONTACT_OBSTACLES, user_facts=[user_fact], must_ask=True,
                 obstacles=[ambiguous(f"two contacts are called {name}: the user's reply says which")])


def _said_without_period(hhmm: str, lang: str) -> str:
    """A time on the 12-hour dial with no period (7点半, 7:30): both the morning and the evening one fit."""
    hour, minute = int(hhmm[:2]) % 12 or 12, int(hhmm[3:])
    if lang == "en":
        return f"{hour}:{minute:02d}"
    return f"{hour}点" + {0: "", 30: "半"}.get(minute, f"{minute}分")


def same_clock(rng: random.Random, world: World) -> Draft:
    """Turn off (or delete) "the 7:30 alarm" when one rings at 07:30 and another at 19:30; the user's fact: which."""
    lang = world.lang
    hour, minute = rng.randint(5, 10), rng.choice((0, 15, 30, 45))
    times = (f"{hour:02d}:{minute:02d}", f"{hour + 12:02d}:{minute:02d}")
    free_alarm_times(world, rng, *times)
    used = {a["label"] for a in world.alarms}
    labels = rng.sample([x for x in ALARM_LABELS[lang] if x not in used and x not in TELLING_LABELS], 2)
    pair = [world.add_alarm(t, label, rng.choice(("once", "daily", "weekdays"))) for t, label in zip(times, labels)]
    meant, other = rng.sample(pair, 2)
    delete = rng.random() < 0.4
    said = _said_without_period(times[0], lang)
    verb = ("删掉" if delete else "关掉") if lang == "zh" else ("delete" if delete else "turn off")
    query = say(rng, lang, [f"把{said}的闹钟{verb}", f"帮我{verb}{said}那个闹钟"],
                [f"{verb.capitalize()} my {said} alarm.", f"Can you {verb} the {said} alarm?"])
    reply = say(rng, lang, [f"{say_clock(rng, meant['time'], lang)}那个，{meant['label']}",
                            f"是{meant['label']}那个"],
                [f"The {say_clock(rng, meant['time'], lang)} one ({meant['label']}).",
                 f"The {meant['label']} one."])
    user_fact = fact("time", meant["time"], reply, [meant["label"]],
                     [Reading(value=other["time"], words=[other["label"]], record=other["alarm_id"])],
                     record=meant["alarm_id"])

    def plan(run: OracleRun) -> str:
        found = [a for a in run.read("list_alarms")["alarms"] if a["time"] in times]
        if len(found) != 2:
            raise GenerationError(f"{run.task.task_id}: {times} should be two alarms: {found}")
        listed = [f"{a['time']}（{a['label']}）" if lang == "zh" else f"{a['time']} ({a['label']})" for a in found]
        answer = run.ask(say(rng, lang, [f"有两个{said}的闹钟：{listed[0]}和{listed[1]}，要{verb}哪一个？"],
                             [f"There are two {said} alarms: {listed[0]} and {listed[1]}. Which one should I {verb}?"]))
        chosen = [a for a in found if a["label"] in answer]
        if len(chosen) != 1:
            raise GenerationError(f"{run.task.task_id}: the reply {answer!r} names no one of {found}")
        alarm = chosen[0]
        if delete:
            run.act("delete_alarm", {"alarm_id": alarm["alarm_id"]})
        else:
            run.act("set_alarm_enabled", {"alarm_id": alarm["alarm_id"], "enabled": False})
        done = ("已删除" if delete else "已关闭") if lang == "zh" else ("Deleted" if delete else "Turned off")
        return say(rng, lang, [f"{done}{alarm['time']}的闹钟（{alarm['label']}）。"],
                   [f"{done} the {alarm['time']} alarm ({alarm['label']})."])
    target = (("delete_alarm", {"alarm_id": meant["alarm_id"]}) if delete
              else ("set_alarm_enabled", {"alarm_id": meant["alarm_id"], "enabled": False}))
    return Draft("same_clock", "behaviour", query, plan, [target], reads=("list_alarms",),
                 obstacle_kinds=(RUNTIME, STATE), user_facts=[user_fact], must_ask=True,
                 obstacles=[ambiguous(f"two alarms ring at {said} ({times[0]} and {times[1]}): the user's reply says "
                                      "which")])


FAMILIES = (same_name, same_clock)
