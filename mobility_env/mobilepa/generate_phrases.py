"""How the MobilePA task generator says times, days and quoted texts, in Chinese and English.

Each ``say_*`` function draws one of several natural spellings from the caller's generator (the
user's words vary); each ``*_spellings`` function lists the spellings an answer may use for the
same fact (``answer_mentions`` accepts any of them). Times are ``"HH:MM"`` strings (24-hour), days
:class:`datetime.date` values relative to the phone's clock.
"""

from __future__ import annotations

import datetime as dt
import random

_ZH_DIGITS = "零一二三四五六七八九十"
_ZH_WEEKDAYS = "一二三四五六日"
_EN_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_EN_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
              "November", "December")


def quote(text: str, lang: str) -> str:
    """The user's exact words for a label, title or message: “…” in Chinese, "…" in English."""
    return f"“{text}”" if lang == "zh" else f'"{text}"'


def _zh_number(value: int) -> str:
    """Chinese numerals for 0..59 (十二, 二十, 三十五)."""
    if value <= 10:
        return _ZH_DIGITS[value]
    tens, ones = divmod(value, 10)
    return ("" if tens == 1 else _ZH_DIGITS[tens]) + "十" + ("" if ones == 0 else _ZH_DIGITS[ones])


def _zh_period(hour: int) -> str:
    if hour < 6:
        return "凌晨"
    if hour < 9:
        return "早上"
    if hour < 12:
        return "上午"
    if hour < 13:
        return "中午"
    if hour < 18:
        return "下午"
    return "晚上"


def _twelve(hour: int) -> int:
    return hour % 12 or 12


def _zh_minutes(minute: int, chinese_digits: bool) -> str:
    if minute == 0:
        return "点"
    if minute == 30:
        return "点半"
    return "点" + (_zh_number(minute) if chinese_digits else str(minute)) + "分"


def say_clock(rng: random.Random, hhmm: str, lang: str) -> str:
    """One natural spelling of a time of day (``"06:30"`` → 早上6点半 / 早上六点半 / 6:30 AM ...)."""
    hour, minute = int(hhmm[:2]), int(hhmm[3:])
    if lang == "zh":
        form = rng.randrange(3)
        if form == 0:
            return f"{_zh_period(hour)}{_twelve(hour)}{_zh_minutes(minute, False)}"
        if form == 1:
            return f"{_zh_period(hour)}{_zh_number(_twelve(hour))}{_zh_minutes(minute, True)}"
        return hhmm
    suffix = "AM" if hour < 12 else "PM"
    form = rng.randrange(3)
    if form == 0:
        return f"{_twelve(hour)}:{minute:02d} {suffix}"
    if form == 1 and minute == 0:
        return f"{_twelve(hour)} {suffix.lower()}"
    return hhmm


def clock_spellings(hhmm: str) -> list[str]:
    """Spellings of a time an answer may use, in both languages (15:00, 下午3点, 3:00 PM, 3 pm...)."""
    hour, minute = int(hhmm[:2]), int(hhmm[3:])
    twelve = _twelve(hour)
    suffixes = ("PM", "pm", "p.m.") if hour >= 12 else ("AM", "am", "a.m.")
    out = [hhmm, f"{hour}:{minute:02d}", f"{twelve}:{minute:02d} {suffixes[0]}"]
    out += [f"{_zh_period(hour)}{twelve}{_zh_minutes(minute, False)}",
            f"{_zh_period(hour)}{_zh_number(twelve)}{_zh_minutes(minute, True)}"]
    if minute == 0:
        out += [f"{twelve}{s}" for s in suffixes] + [f"{twelve} {s}" for s in suffixes]
    else:
        out += [f"{twelve}:{minute:02d}{s}" for s in suffixes]
    return list(dict.fromkeys(out))


def say_day(rng: random.Random, day: dt.date, today: dt.date, lang: str) -> str:
    """A day relative to the phone's clock: 今天/明天/后天 (today/tomorrow...) or an explicit date (3月15日,
    on March 15): an adverbial either way."""
    offset = (day - today).days
    relative = {0: ("今天", "today"), 1: ("明天", "tomorrow"), 2: ("后天", "the day after tomorrow")}
    if offset in relative and rng.random() < 0.8:
        return relative[offset][0 if lang == "zh" else 1]
    if lang == "zh":
        return f"{day.month}月{day.day}日（周{_ZH_WEEKDAYS[day.weekday()]}）" if rng.random() < 0.5 else \
            f"{day.month}月{day.day}号"
    return f"on {_EN_WEEKDAYS[day.weekday()]}, {_EN_MONTHS[day.month - 1]} {day.day}" if rng.random() < 0.5 else \
        f"on {_EN_MONTHS[day.month - 1]} {day.day}"


def say_duration(minutes: int, lang: str) -> str:
    """30 → 半个小时 / half an hour; 90 → 一个半小时 / an hour and a half."""
    hours, rest = divmod(minutes, 60)
    if lang == "zh":
        if hours == 0:
            return "半个小时" if rest == 30 else f"{rest}分钟"
        whole = "一个" if hours == 1 else f"{_zh_number(hours)}个"
        return f"{whole}半小时" if rest == 30 else f"{whole}小时"
    if hours == 0:
        return "half an hour" if rest == 30 else f"{rest} minutes"
    whole = "an hour" if hours == 1 else f"{hours} hours"
    return f"{whole} and a half" if rest == 30 else whole


def shift_clock(hhmm: str, minutes: int) -> str:
    """``hhmm`` moved by ``minutes`` within the day (the caller keeps it inside 00:00..23:59)."""
    total = int(hhmm[:2]) * 60 + int(hhmm[3:]) + minutes
    if not 0 <= total < 24 * 60:
        raise ValueError(f"{hhmm} {minutes:+d} min leaves the day")
    return f"{total // 60:02d}:{total % 60:02d}"


def phone_spellings(phone: str) -> list[str]:
    """A mobile number as written plain or grouped 3-4-4 (138 1234 5678, 138-1234-5678)."""
    if len(phone) != 11:
        return [phone]
    return [phone, f"{phone[:3]} {phone[3:7]} {phone[7:]}", f"{phone[:3]}-{phone[3:7]}-{phone[7:]}"]


def say(rng: random.Random, lang: str, zh: list[str], en: list[str]) -> str:
    """One of the ways a user says it, in the task's language."""
    return rng.choice(zh if lang == "zh" else en)
