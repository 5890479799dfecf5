"""The words of the held-out phrasing grammar (:mod:`.heldout_phrasing`): how it spells values and names things.

Each ``*_forms`` function lists every spelling this grammar uses for a value, each naming exactly that value
(the generated check ``tests/test_mobilepa_heldout.py`` reads the words back with them); the tables say a
categorical argument (an audio stream, a ringer mode, a travel mode …) in words of this grammar's own.
"""

from __future__ import annotations

import datetime as dt
import random
from typing import Any, Sequence

from .generate_world import World

Turns = list[dict[str, str]]
Said = tuple[str, Turns]
#: Phrases the distractors pick from (``{n}``: a number that is no gold value; ``{t}``: a clock time).
_NOISE = {"zh": ("我手机电量就剩{n}%了，", "刚开完{t}的会，", "今天走了{n}00步，累死，", "外面{n}度，热得要命，",
                 "群里{n}条消息没看，", "等会儿{t}还要去接人，"),
          "en": ("battery's at {n}% btw, ", "just got out of my {t} meeting, ", "it's like {n} degrees out, ",
                 "I've got {n} unread emails, ", "need to leave by {t} anyway, ")}
ACKS = {"zh": ("嗯，你说。", "好的，还有呢？", "收到。", "明白，然后呢？"),
        "en": ("Sure, go on.", "Got it. Anything else?", "OK.", "Noted, what next?")}
TEXTS = {"zh": ("我到楼下了", "晚饭不用等我", "钥匙在门口地垫下", "下午的会取消了", "帮我带杯咖啡"),
         "en": ("I'm downstairs", "Don't wait for me for dinner", "Keys are under the doormat",
                "This afternoon's meeting is off", "Grab me a coffee please")}
_ZH_NUM = "零一二三四五六七八九"
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")


def pick(rng: random.Random, lang: str, zh: Sequence[str], en: Sequence[str]) -> str:
    return rng.choice(list(zh if lang == "zh" else en))


def verbatim(text: str, lang: str) -> str:
    """A verbatim text, in marks the standard families do not use."""
    return f"「{text}」" if lang == "zh" else f"“{text}”"


def _zh_int(value: int) -> str:
    """Chinese numerals for 0..99."""
    if value < 10:
        return _ZH_NUM[value]
    tens, ones = divmod(value, 10)
    return ("" if tens == 1 else _ZH_NUM[tens]) + "十" + (_ZH_NUM[ones] if ones else "")


def level_forms(level: int, lang: str) -> list[str]:
    """Every way this grammar says the percentage ``level`` (each names exactly that value)."""
    forms = [f"{level}"]
    if lang == "zh":
        if level % 10 == 0 and 10 <= level <= 90:
            forms.append(f"{_zh_int(level // 10)}成")
        if level == 100:
            forms.append("拉满")
        if level == 50:
            forms.append("一半")
    else:
        if level == 100:
            forms.append("all the way up (100)")
        if level == 50:
            forms.append("halfway")
    return forms


def say_level(rng: random.Random, level: int, lang: str) -> str:
    form = rng.choice(level_forms(level, lang))
    return form if not form.isdigit() else form + rng.choice(("", "%"))


def _period(hour: int, lang: str) -> str:
    if lang == "zh":
        return ("凌晨" if hour < 5 else "早上" if hour < 9 else "上午" if hour < 12 else "中午" if hour < 13
                else "下午" if hour < 18 else "晚上")
    return "in the morning" if hour < 12 else "in the afternoon" if hour < 18 else "in the evening"


def clock_forms(time: str, lang: str) -> list[str]:
    """Every way this grammar says the clock time ``"HH:MM"``; each names exactly that time of day."""
    hour, minute = int(time[:2]), int(time[3:])
    h12 = hour % 12 or 12
    # the 24-hour spellings; a Chinese morning one says it is morning ("早上7点15", never a bare "7点15")
    forms = [(f"{hour}点{minute:02d}" if hour >= 12 else f"{_period(hour, lang)}{hour}点{minute:02d}") if lang == "zh"
             else f"{hour:02d}{minute:02d} hours"]
    if lang == "zh":
        if hour >= 5:
            part = {0: "整", 15: "一刻", 30: "半", 45: "三刻"}.get(minute, f"{_zh_int(minute)}分")
            forms.append(f"{_period(hour, lang)}{_zh_int(h12)}点{part}")
        return forms
    if hour < 5:
        return forms
    words = _period(hour, lang)
    if minute == 0:
        forms.append(f"{h12} o'clock {words}")
    elif minute == 30:
        forms.append(f"half past {h12} {words}")
    elif minute == 15:
        forms.append(f"a quarter past {h12} {words}")
    elif minute < 30:
        forms.append(f"{minute} past {h12} {words}")
    if minute > 30 and hour + 1 < 24 and _period(hour + 1, lang) == words:
        forms.append(("a quarter" if minute == 45 else f"{60 - minute}") + f" to {(hour + 1) % 12 or 12} {words}")
    return forms


def say_clock(rng: random.Random, time: str, lang: str) -> str:
    return rng.choice(clock_forms(time, lang))


def day_forms(day: dt.date, today: dt.date, lang: str) -> list[str]:
    """Every way this grammar says the calendar day ``day`` (seen from ``today``)."""
    forms = [f"{day.month}月{day.day}号" if lang == "zh" else f"{_MONTHS[day.month - 1]} {day.day}"]
    ahead = (day - today).days
    if ahead == 1:
        forms.append("明儿" if lang == "zh" else "tmrw")
    elif ahead == 2:
        forms.append("后儿" if lang == "zh" else "the day after tomorrow")
    elif ahead == -1:
        forms.append("昨儿" if lang == "zh" else "yesterday")
    elif ahead == -2:
        forms.append("前儿" if lang == "zh" else "the day before yesterday")
    return forms


def noise(rng: random.Random, lang: str, avoid: set[str]) -> str:
    """An aside with a number or time that is no value of the task ('' sometimes)."""
    if rng.random() < 0.35:
        return ""
    number = rng.choice([n for n in range(11, 98) if str(n) not in avoid and not any(str(n) in a for a in avoid)])
    time = rng.choice([t for t in ("09:00", "10:30", "14:00", "15:30", "16:00") if t not in avoid])
    return rng.choice(_NOISE[lang]).format(n=number, t=say_clock(rng, time, lang))


def spread(rng: random.Random, lang: str, first: str, rest: str) -> Said:
    """The request in two user turns: ``first`` in the history, an acknowledgement, ``rest`` as the query."""
    return rest, [{"role": "user", "content": first}, {"role": "assistant", "content": rng.choice(ACKS[lang])}]


def contact_word(rng: random.Random, world: World, contact_id: str) -> str | None:
    """How to name a contact so that exactly one fits: its name, or ``我{relation}`` when the relation is unique."""
    row = next((c for c in world.contacts if c["contact_id"] == contact_id), None)
    if row is None or [c["name"] for c in world.contacts].count(row["name"]) != 1:
        return None
    relation = row.get("relation") or ""
    unique = relation and [c.get("relation") for c in world.contacts].count(relation) == 1
    if unique and rng.random() < 0.4:
        return f"我{relation}" if world.lang == "zh" else f"my {relation}"
    return row["name"]


def row_of(rows: list[dict[str, Any]], key: str, value: Any) -> dict[str, Any] | None:
    return next((r for r in rows if r.get(key) == value), None)


def row(world: World, table: str, key: str, value: Any) -> dict[str, Any] | None:
    return row_of(world.extra.get(table, []), key, value)


def unique(world: World, table: str, field: str, value: Any) -> bool:
    return [r.get(field) for r in world.extra.get(table, [])].count(value) == 1


STREAMS = {"media": ("放歌的声音", "music"), "ring": ("来电铃声", "ringer volume"), "alarm": ("闹铃声", "alarm sound"),
           "call": ("打电话时听筒的声音", "earpiece volume during calls")}
#: The ringer modes, said by what the phone does (each phrase of a mode holds its words).
RINGER = {"silent": ("彻底静音，连震动都别有", "fully silent, no buzz either"), "vibrate": ("只震动不响铃", "buzz only, no ringing"),
          "normal": ("恢复正常响铃", "ringing normally again")}
RADIOS = {"set_wifi": ("wifi", "wifi"), "set_bluetooth": ("蓝牙", "BT"), "set_mobile_data": ("4G/5G 流量", "cell data"),
          "set_location_service": ("GPS定位", "GPS")}
REPEATS = {"once": ("就这一次", "just once"), "daily": ("天天都要", "every single day"),
           "weekdays": ("周一到周五", "Monday to Friday"), "weekends": ("周六周日", "Saturdays and Sundays")}
WORKOUTS = {"run": ("跑个步", "go for a run"), "walk": ("快走", "brisk walk"), "cycle": ("骑车", "ride my bike"),
            "hike": ("爬山徒步", "hike"), "yoga": ("做瑜伽", "do yoga"), "strength": ("撸铁", "lift weights"),
            "indoor_cycle": ("动感单车", "spin bike session"), "swim": ("游个泳", "swim laps")}
MODES = {"driving": ("自己开车", "drive"), "transit": ("坐公共交通", "take public transport"),
         "walking": ("走路", "walk"), "cycling": ("骑车", "cycle")}
RIDES = {"economy": ("普通快车档的车", "the basic standard car"), "comfort": ("舒适档的车", "a comfier car"),
         "xl": ("能坐六个人的大车", "a six-seater")}
LABELS = {"home": ("家", "home"), "work": ("公司", "work"), "school": ("学校", "school")}
