"""How the MobilePA task generator says times, days and quoted texts, in Chinese and English.

Each ``say_*`` function draws one of several natural spellings from the caller's generator (the
user's words vary); each ``*_spellings`` function lists the spellings an answer may use for the
same fact (``answer_mentions`` accepts any of them). Times are ``"HH:MM"`` strings (24-hour), days
:class:`datetime.date` values relative to the phone's clock.

Answers are read back by :mod:`mobility_env.mobilepa.answers` (the rules the verifier and the generator share).
"""

from __future__ import annotations

import datetime as dt
import random

from .answers import normalized

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
    """30 → 半个小时 / half an hour; 90 → 一个半小时 / an hour and a half; 75 → 一个小时15分钟 / an hour and 15 minutes."""
    hours, rest = divmod(minutes, 60)
    if lang == "zh":
        if hours == 0:
            return "半个小时" if rest == 30 else f"{rest}分钟"
        whole = "一个" if hours == 1 else f"{_zh_number(hours)}个"
        if rest == 30:
            return f"{whole}半小时"
        return f"{whole}小时" + (f"{rest}分钟" if rest else "")
    if hours == 0:
        return "half an hour" if rest == 30 else f"{rest} minutes"
    whole = "an hour" if hours == 1 else f"{hours} hours"
    if rest == 30:
        return f"{whole} and a half"
    return f"{whole} and {rest} minutes" if rest else whole


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


#: English words for the weather conditions and road states the recorded responses name (an English answer may
#: use either the recorded Chinese word or one of these).
CONDITION_WORDS = {"晴": ("sunny", "clear"), "多云": ("cloudy",), "阴": ("overcast", "cloudy"),
                   "小雨": ("light rain", "drizzle"), "中雨": ("moderate rain", "rain"), "大雨": ("heavy rain",),
                   "阵雨": ("shower",), "雷阵雨": ("thundershower", "thunderstorm"), "小雪": ("light snow", "snow"),
                   "中雪": ("snow",), "大雪": ("heavy snow",), "雨夹雪": ("sleet",), "雾": ("fog",), "霾": ("haze",
                                                                                                   "smog")}
TRAFFIC_WORDS = {"畅通": ("smooth", "clear", "free-flowing", "flowing freely"), "缓行": ("slow",),
                 "拥堵": ("congested", "jam"), "严重拥堵": ("severely congested", "heavy traffic", "jam")}


def word_spellings(word: str, table: dict[str, tuple[str, ...]]) -> list[str]:
    """A recorded Chinese word and its English renderings (``table``), for ``answer_mentions``."""
    return [word, *table.get(word, ())]


#: Words that name a whole family of recorded words, by the character its members share: any 雨 is rain, any 雪
#: snow, any 堵 a jam (a word of a family the gold is not in is another choice: 多云 excludes 雨 and ``rain``).
GENERIC_WORDS = {"雨": ("雨", "rain"), "雪": ("雪", "snow"), "雷": ("storm",), "晴": ("sun",), "堵": ("堵", "拥挤", "jam")}


def other_words(word: str, table: dict[str, tuple[str, ...]]) -> list[str]:
    """The rest of ``table``'s vocabulary, for ``answer_excludes``: every other recorded word and its English
    renderings, and the generic words of the families (:data:`GENERIC_WORDS`) of ``table`` that ``word`` is not in;
    less those inside a spelling of ``word`` (for 雷阵雨, 阵雨 is no other answer; for 小雨 / light rain, ``rain`` is
    none) and the generic words of its own families (for 阵雨, ``rain``)."""
    golds = [normalized(s) for s in word_spellings(word, table)]
    own = {w for char, words in GENERIC_WORDS.items() if char in word for w in words}
    families = [w for char, words in GENERIC_WORDS.items() if any(char in key for key in table) for w in words]
    out = [w for other, renderings in table.items() if other != word for w in (other, *renderings)] + families
    return list(dict.fromkeys(w for w in out if w not in own and not any(normalized(w) in g for g in golds)))


def minutes_text(minutes: int, lang: str) -> str:
    """90 → 1小时30分钟 / 1 h 30 min; 25 → 25分钟 / 25 min (the oracle's spelling of a travel time)."""
    hours, rest = divmod(minutes, 60)
    if lang == "zh":
        return f"{minutes}分钟" if hours == 0 else f"{hours}小时" + (f"{rest}分钟" if rest else "")
    return f"{minutes} min" if hours == 0 else f"{hours} h" + (f" {rest} min" if rest else "")


def minutes_spellings(minutes: int) -> list[str]:
    """Spellings of a travel time an answer may use, in both languages (25分钟, 25 min, 1小时5分, 1 hour 5 min...)."""
    out = [f"{minutes}分钟", f"{minutes} min", f"{minutes}min", f"{minutes} 分钟"]
    hours, rest = divmod(minutes, 60)
    if hours:
        unit = "hour" if hours == 1 else "hours"
        if rest:
            out += [f"{hours}小时{rest}分", f"{hours}个小时{rest}分", f"{hours} h {rest} min", f"{hours}h{rest}min",
                    f"{hours}h {rest}min", f"{hours} hr {rest} min", f"{hours} {unit} {rest} min",
                    f"{hours} {unit} and {rest} min"]
        else:
            out += [f"{hours}小时", f"{hours}个小时", f"{hours} {unit}", f"{hours} h", f"{hours}h"]
    return list(dict.fromkeys(out))


def distance_text(metres: int, lang: str) -> str:
    """32211 → 32.2公里 / 32.2 km; 850 → 850米 / 850 m."""
    if metres < 1000:
        return f"{metres}米" if lang == "zh" else f"{metres} m"
    return f"{metres / 1000:.1f}公里" if lang == "zh" else f"{metres / 1000:.1f} km"


def distance_spellings(metres: int) -> list[str]:
    """Spellings of a distance an answer may use: kilometres to one decimal (32.2公里, 32.2 km, 32.2千米) and
    metres (850米, 850 m; also for longer distances: 32211米)."""
    km = f"{metres / 1000:.1f}"
    out = [f"{km}公里", f"{km} km", f"{km}km", f"{km}千米", f"{km} kilometres", f"{km} kilometers"] if metres >= 1000 \
        else []
    return list(dict.fromkeys(out + [f"{metres}米", f"{metres} m", f"{metres}m"]))


# the maps & travel requests
MODE_WORDS = {"driving": (["开车去", "导航去"], ["Drive to", "Navigate to"]),
              "walking": (["走路去", "步行导航去"], ["Walk to", "Give me walking directions to"]),
              "transit": (["坐公交去", "坐公共交通去"], ["Take public transport to", "Get me transit directions to"])}
#: How a trip is made: (Chinese verb, English noun, English adverbial).
HOW = {"driving": ("开车", "drive", "by car"), "walking": ("走路", "walk", "on foot"),
       "transit": ("坐公交", "public transport ride", "by public transport")}
PREFERENCE_WORDS = {"不走高速": (["不走高速", "避开高速"], ["avoiding highways", "with no highways"]),
                    "躲避拥堵": (["避开拥堵", "绕开堵车的路"], ["avoiding traffic jams", "around the congestion"]),
                    "高速优先": (["走高速", "高速优先"], ["taking the highway", "preferring highways"]),
                    "少收费": (["少收费", "尽量少交过路费"], ["with fewer tolls", "keeping tolls low"]),
                    "速度最快": (["走最快的路线"], ["on the fastest route"]), "大路优先": (["走大路"], ["on main roads"])}
LABEL_WORDS = {"home": ("家", "home"), "work": ("公司", "work"), "school": ("学校", "school")}
RIDE_WORDS = {"economy": ("快车", "a standard ride"), "comfort": ("舒适型专车", "a comfort ride"),
              "xl": ("六座商务车", "an XL ride")}


def say_past_day(rng: random.Random, day: dt.date, today: dt.date, lang: str) -> str:
    """A past day relative to the phone's clock: 昨天/前天 (yesterday, the day before yesterday) or an explicit date
    (3月15号, on March 15): an adverbial either way."""
    offset = (today - day).days
    relative = {1: ("昨天", "yesterday"), 2: ("前天", "the day before yesterday")}
    if offset in relative and rng.random() < 0.7:
        return relative[offset][0 if lang == "zh" else 1]
    if lang == "zh":
        return f"{day.month}月{day.day}号"
    return f"on {_EN_MONTHS[day.month - 1]} {day.day}"
