"""Text forms the generators share: folding, numerals, quantities as answers state them, clock times, temperatures,
weather conditions and traffic states in words, fillers.

A quantity is rendered as a :class:`Stated` (its text, the value it means, the precision a reader may assume), so a
generator can check its own output: a correct statement is within 5 % or the usual rounding
(:func:`acceptable_distance`, :func:`acceptable_duration`); a wrong one is at least 6 % and two stated precisions off
(:func:`is_wrong_value`).
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any, Callable

from mobility_env.mobilitybench.episode import Episode

from .draw import Draw


# -- folding and numerals ----------------------------------------------------------------------------------------------


def fold(text: str) -> str:
    """Lower-case, full-width -> half-width, no spaces or punctuation (for containment tests)."""
    text = unicodedata.normalize("NFKC", text or "").lower()
    return re.sub(r"[\s\W_]+", "", text)


def related(a: str, b: str) -> bool:
    """One name contains the other (after folding)."""
    fa, fb = fold(a), fold(b)
    return bool(fa) and bool(fb) and (fa in fb or fb in fa)


_CN_DIGITS = "零一二三四五六七八九"


def _cn_section(n: int) -> str:
    out, pending_zero = "", False
    for value, unit in ((1000, "千"), (100, "百"), (10, "十"), (1, "")):
        digit = n // value % 10
        if digit == 0:
            pending_zero = bool(out)
            continue
        if pending_zero:
            out += "零"
            pending_zero = False
        out += _CN_DIGITS[digit] + unit
    return out


def cn_int(n: int, liang: bool = False) -> str:
    """``105`` -> ``一百零五``, ``12`` -> ``十二``, ``2`` -> ``二`` (``两`` with ``liang``)."""
    if n < 0:
        return "负" + cn_int(-n)
    if n == 0:
        return "零"
    high, low = divmod(n, 10000)
    text = ""
    if high:
        text = _cn_section(high) + "万" + ("零" if 0 < low < 1000 else "")
    if low:
        text += _cn_section(low)
    if text.startswith("一十"):
        text = text[1:]
    if liang and text[0] == "二" and (len(text) == 1 or text[1] in "千百万"):
        text = "两" + text[1:]
    return text


def cn_decimal(value: float, decimals: int) -> str:
    """``12.3`` -> ``十二点三`` (a whole value has no ``点``)."""
    text = f"{value:.{decimals}f}"
    whole, _, fraction = text.partition(".")
    fraction = fraction.rstrip("0")
    head = cn_int(int(whole), liang=not fraction)
    return head + ("点" + "".join(_CN_DIGITS[int(c)] for c in fraction) if fraction else "")


# -- quantities: distances and durations -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Stated:
    """A quantity as an answer states it: the text, the value it means, its rounding steps.

    ``step`` is the unit of the last stated digit; ``coarse`` the precision a reader may
    assume from trailing zeros or a whole unit (``1小时`` may be 53 minutes rounded to the
    hour, ``2300米`` 2,289 m rounded to 100 m). A *wrong* value must be off by both.
    """

    text: str
    value: float
    step: float
    coarse: float = 0.0

    @property
    def precision(self) -> float:
        return max(self.step, self.coarse)


def trailing(number: int, unit: float) -> float:
    """The precision a whole number suggests: ``2300`` (unit 1) -> 100, ``40`` minutes -> 600 s."""
    number = abs(int(number))
    scale = 1
    while number and number % 10 == 0:
        number //= 10
        scale *= 10
    return unit * scale


def relative_error(value: float, actual: float) -> float:
    return abs(value - actual) / actual if actual else float("inf")


_EN_ONES = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
            "seventeen eighteen nineteen").split()
_EN_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()


def en_words(n: int) -> str:
    """``n`` (0-9999) in English words: 35 -> thirty-five, 120 -> one hundred and twenty."""
    if n < 20:
        return _EN_ONES[n]
    if n < 100:
        return _EN_TENS[n // 10 - 2] + (f"-{_EN_ONES[n % 10]}" if n % 10 else "")
    if n < 1000:
        return f"{_EN_ONES[n // 100]} hundred" + (f" and {en_words(n % 100)}" if n % 100 else "")
    return f"{en_words(n // 1000)} thousand" + (f" {en_words(n % 1000)}" if n % 1000 else "")


def distance_forms(metres: float, lang: str) -> list[Stated]:
    """Ways to state ``metres`` (whether each is correct is decided by the caller)."""
    km1, km2, whole = round(metres / 1000, 1), round(metres / 1000, 2), round(metres)
    km_units = ("公里", "千米", "km", " km") if lang == "zh" else (" km", "km", " kilometres", " kilometers")
    m_units = ("米", "m", " m") if lang == "zh" else (" m", " metres", " meters")
    forms = [Stated(f"{km1:.1f}{u}", km1 * 1000, 100) for u in km_units]
    forms += [Stated(f"{km2:.2f}{u}", km2 * 1000, 10) for u in km_units[:2]]
    forms += [Stated(f"{whole}{u}", whole, 1, trailing(whole, 1)) for u in m_units]
    if whole >= 1000:
        forms.append(Stated(f"{whole:,} m", whole, 1, trailing(whole, 1)))
    km0 = round(metres / 1000)
    if km0:
        forms.append(Stated(f"{km0}{km_units[0]}", km0 * 1000, 1000, trailing(km0, 1000)))
        if lang == "en" and km0 < 10000:  # spelled: twelve kilometres
            forms.append(Stated(f"{en_words(km0)} kilometres", km0 * 1000, 1000, trailing(km0, 1000)))
    if lang == "en" and whole < 10000:
        forms.append(Stated(f"{en_words(whole)} metres", whole, 1, trailing(whole, 1)))
    return forms


def _distance_cn_forms(metres: float) -> list[Stated]:
    km1, whole = round(metres / 1000, 1), round(metres)
    coarse = trailing(round(km1), 1000) if km1 == round(km1) else 0.0  # 十四公里 reads as whole km
    forms = [Stated(cn_decimal(km1, 1) + u, km1 * 1000, 100, coarse) for u in ("公里", "千米")]
    if whole < 100000:
        forms.append(Stated(cn_int(whole, liang=True) + "米", whole, 1, trailing(whole, 1)))
    return forms


def acceptable_distance(stated: Stated, metres: float) -> bool:
    """Correct: within 5 %, or the usual one-decimal kilometres (``2.3公里`` for 2,289 m)."""
    return relative_error(stated.value, metres) <= 0.05 or (
        stated.step == 100 and metres >= 1000 and abs(stated.value - round(metres / 1000, 1) * 1000) < 1e-6)


def _hm(seconds: float) -> tuple[int, int]:
    return divmod(round(seconds / 60), 60)


def _hm_coarse(hours: int, minutes: int) -> float:
    return trailing(minutes, 60) if minutes else trailing(hours, 3600)


def _hours_form(text: str, value: float) -> Stated:
    if value % 1:
        return Stated(text, value * 3600, 360)
    return Stated(text, value * 3600, 3600, trailing(int(value), 3600))


def duration_forms(seconds: float, lang: str) -> list[Stated]:
    """Ways to state ``seconds`` (whether each is correct is decided by the caller)."""
    hours, minutes = _hm(seconds)
    total = hours * 60 + minutes
    hm = _hm_coarse(hours, minutes)
    forms: list[Stated] = []
    if lang == "zh":
        if hours:
            tails = ("分钟", "分") if minutes else ("",)
            forms += [Stated(f"{hours}{h}{minutes}{t}" if minutes else f"{hours}{h}", total * 60, 60, hm)
                      for h in ("小时", "个小时") for t in tails]
        forms += [Stated(f"{total}{u}", total * 60, 60, trailing(total, 60)) for u in ("分钟", "分")]
        if seconds < 3600:
            forms.append(Stated(f"{round(seconds)}秒", round(seconds), 1, trailing(round(seconds), 1)))
        for value in (round(seconds / 3600, 1), round(seconds / 3600)):
            if value:
                forms.append(_hours_form(f"{value:g}小时", value))
        forms += [Stated(t, v, 1800) for t, v in (("半小时", 1800), ("一个半小时", 5400), ("两个半小时", 9000))]
    else:
        if hours:
            plural = "s" if hours > 1 else ""
            forms += [Stated(f"{hours}h {minutes}m" if minutes else f"{hours}h", total * 60, 60, hm),
                      Stated(f"{hours}h{minutes}min" if minutes else f"{hours} hrs", total * 60, 60, hm),
                      Stated(f"{hours} hr {minutes} min" if minutes else f"{hours} hr", total * 60, 60, hm),
                      Stated(f"{hours} hour{plural} {minutes} minutes" if minutes
                             else f"{hours} hour{plural}", total * 60, 60, hm)]
        forms += [Stated(f"{total} {u}", total * 60, 60, trailing(total, 60))
                  for u in ("minutes", "mins", "min")]
        if seconds < 3600:
            forms.append(Stated(f"{round(seconds)} seconds", round(seconds), 1, trailing(round(seconds), 1)))
        for value in (round(seconds / 3600, 1), round(seconds / 3600)):
            if value:
                forms += [_hours_form(f"{value:g} {'hours' if value != 1 else 'hour'}", value),
                          _hours_form(f"{value:g} hrs", value)]
        # spelled: thirty-five minutes, one hour and twelve minutes, an hour, half an hour, two and a half hours
        if total < 10000:
            forms.append(Stated(f"{en_words(total)} minutes", total * 60, 60, trailing(total, 60)))
        if hours and hours < 100:
            plural = "s" if hours > 1 else ""
            forms.append(Stated(f"{en_words(hours)} hour{plural} and {en_words(minutes)} minutes" if minutes
                                else f"{en_words(hours)} hour{plural}", total * 60, 60, hm))
        whole_hours = round(seconds / 3600)
        if whole_hours == 1:
            forms.append(_hours_form("an hour", 1))
        forms += [Stated(t, v, 1800)
                  for t, v in (("half an hour", 1800), ("an hour and a half", 5400), ("two and a half hours", 9000))]
    return forms


def _duration_cn_forms(seconds: float) -> list[Stated]:
    hours, minutes = _hm(seconds)
    total = hours * 60 + minutes
    hm = _hm_coarse(hours, minutes)
    forms = [Stated(cn_int(total) + "分钟", total * 60, 60, trailing(total, 60))]
    if hours:
        tail = cn_int(minutes) + "分钟" if minutes else ""
        forms.append(Stated(cn_int(hours, liang=True) + "小时" + tail, total * 60, 60, hm))
        forms.append(Stated(cn_int(hours, liang=True) + "个小时" + tail, total * 60, 60, hm))
    if round(seconds / 3600) >= 1:
        forms.append(_hours_form(cn_int(round(seconds / 3600), liang=True) + "小时", round(seconds / 3600)))
    return forms


def acceptable_duration(stated: Stated, seconds: float) -> bool:
    """Correct: within 5 %, or whole minutes (the finest unit anyone states)."""
    return relative_error(stated.value, seconds) <= 0.05 or (
        stated.step == 60 and abs(stated.value - round(seconds / 60) * 60) < 1e-6)


def render_correct(d: Draw, forms: list[Stated], accept: Callable[[Stated], bool]) -> Stated:
    good = [f for f in forms if accept(f)]
    assert good, forms  # the exact-unit forms are always acceptable
    return d.choice(good)


def distance_text(d: Draw, metres: float, lang: str, style: str = "any") -> Stated:
    forms = _distance_cn_forms(metres) if style == "cn" else distance_forms(metres, lang)
    if style == "standard":
        forms = forms[:1] if metres >= 1000 else [f for f in forms if f.step == 1][:1]
    return render_correct(d, forms, lambda s: acceptable_distance(s, metres))


def duration_text(d: Draw, seconds: float, lang: str, style: str = "any") -> Stated:
    forms = _duration_cn_forms(seconds) if style == "cn" else duration_forms(seconds, lang)
    if style == "standard":
        forms = forms[:1]
    return render_correct(d, forms, lambda s: acceptable_duration(s, seconds))


def wrong_quantity(d: Draw, actual: float, forms_of: Callable[[float], list[Stated]],
                   low: float = 0.06, high: float = 0.40) -> Stated:
    """A statement of a value off by ``low``..``high`` (either direction), as stated.

    Checked after rounding: at least ``low`` relative and two stated units away from
    ``actual``, and no farther than 45 %.
    """
    sign = d.choice((-1, 1))
    fraction = d.uniform(low, high)
    for attempt in range(12):
        value = actual * (1 + sign * fraction)
        candidates = [f for f in forms_of(value) if is_wrong_value(f, actual, low)]
        if candidates:
            return d.choice(candidates)
        fraction = min(high, fraction * 1.25 + 0.01)
        if attempt == 6:
            sign = -sign
    raise AssertionError(f"no wrong statement of {actual} found")


def differs(stated: Stated, actual: float, low: float = 0.06) -> bool:
    """``stated`` is at least ``low`` relative and two precisions (as a reader may take it) off ``actual``."""
    return relative_error(stated.value, actual) >= low and abs(stated.value - actual) >= 2 * stated.precision


def is_wrong_value(stated: Stated, actual: float, low: float = 0.06) -> bool:
    """A wrong value for the generators: :func:`differs`, yet no more than 45 % off and positive."""
    return differs(stated, actual, low) and relative_error(stated.value, actual) <= 0.45 and stated.value > 0


# -- clock times -------------------------------------------------------------------------------------------------------


def period_zh(minutes: int) -> str:
    hour = minutes // 60
    return "凌晨" if hour < 5 else "早上" if hour < 8 else "上午" if hour < 12 else "中午" if hour < 13 else \
        "下午" if hour < 18 else "晚上"


def hour12(minutes: int) -> int:
    return (minutes // 60) % 12 or 12


def clock_text(d: Draw, minutes: float, period_known: bool, lang: str) -> str:
    """A clock time; with an explicit period (上午/下午/AM/PM/24h) only when the period is known."""
    total = round(minutes) % 1440
    hour, minute = divmod(total, 60)
    h12 = hour12(total)
    if lang == "en":
        if period_known:
            suffix = d.choice(("AM", "a.m.", "am")) if hour < 12 else d.choice(("PM", "p.m.", "pm"))
            return d.choice((f"{h12}:{minute:02d} {suffix}", f"{hour:02d}:{minute:02d}"))
        return f"{h12}:{minute:02d}"
    zh_minute = "半" if minute == 30 else f"{minute}分" if minute else ""
    cn_minute = "半" if minute == 30 else (cn_int(minute) if minute >= 10 else "零" + cn_int(minute)) + "分" \
        if minute else ""
    if not period_known:
        return d.choice((f"{h12}点{zh_minute}", f"{h12}:{minute:02d}",
                         f"{cn_int(h12, liang=True)}点{cn_minute}"))
    period = period_zh(total)
    zh_hour = hour if period in ("凌晨", "早上", "上午", "中午") else hour - 12
    options = [f"{period}{zh_hour}点{zh_minute}", f"{period}{zh_hour}:{minute:02d}",
               f"{hour:02d}:{minute:02d}", f"{period}{cn_int(zh_hour, liang=True)}点{cn_minute}"]
    if hour >= 13:
        options.append(f"{hour}点{zh_minute}")
    return d.choice(options)


_CN_NUM = "零〇一二两三四五六七八九十"
_QUERY_CLOCK = re.compile(r"(凌晨|早上|早晨|上午|中午|下午|傍晚|晚上|夜里)?\s*([0-9]{1,2}|[" + _CN_NUM + r"]{1,3})\s*点"
                          r"\s*(半|一刻|三刻|[0-9]{1,2}|[" + _CN_NUM + r"]{1,3})?|([0-9]{1,2})[:：]([0-9]{2})")
_DEPARTURE_QUERY = re.compile(r"几点(出发|走|动身)|什么时候(出发|走)|何时出发|出发时间")
_ARRIVAL_QUERY = re.compile(r"几点(能)?到|什么时候(能)?到|何时到|到达时间")


def cn_value(text: str) -> int | None:
    """``九`` -> 9, ``十五`` -> 15, ``二十`` -> 20, ``12`` -> 12."""
    if text.isdigit():
        return int(text)
    text = text.replace("两", "二").replace("〇", "零")
    if not text or any(c not in _CN_DIGITS + "十" for c in text):
        return None
    if "十" in text:
        tens, _, ones = text.partition("十")
        return (_CN_DIGITS.index(tens) if tens else 1) * 10 + (_CN_DIGITS.index(ones) if ones else 0)
    return int("".join(str(_CN_DIGITS.index(c)) for c in text))


def query_clock(query: str) -> tuple[int, bool] | None:
    """The first clock time a query states, as (minutes after midnight, period known)."""
    hour: int | None
    minute: int | None
    for match in _QUERY_CLOCK.finditer(query):
        if match.group(4):
            hour, minute, period = int(match.group(4)), int(match.group(5)), None
        else:
            period, hour = match.group(1), cn_value(match.group(2))
            extra = match.group(3) or ""
            minute = {"半": 30, "一刻": 15, "三刻": 45}.get(extra)
            if minute is None:
                minute = cn_value(extra) if extra else 0
        if hour is None or minute is None or hour > 24 or minute > 59:
            continue
        if period in ("下午", "傍晚", "晚上", "夜里") and hour < 12:
            hour += 12
        if period == "中午" and hour < 6:
            hour += 12
        return hour * 60 + minute, bool(period) or hour >= 13
    return None


@dataclass(frozen=True)
class ClockFacts:
    """The clock time an arrival/departure answer should state."""

    value: float  # minutes after midnight (0..1440)
    target: float  # the query's own time (the deadline, or the start)
    verb: str  # "出发" (departure) or "到达" (arrival)
    period_known: bool


def clock_facts(episode: Episode, duration_s: float) -> ClockFacts | None:
    stated = query_clock(episode.query)
    if _ARRIVAL_QUERY.search(episode.query) and not _DEPARTURE_QUERY.search(episode.query):
        if stated is None:
            start_text = str(episode.context.get("start_datetime") or "").split(" ")[-1]
            start = re.search(r"(\d{1,2}):(\d{2})", start_text)
            if start is None:
                return None
            stated = (int(start.group(1)) * 60 + int(start.group(2)), True)
        return ClockFacts((stated[0] + duration_s / 60) % 1440, stated[0], "到达", stated[1])
    if stated is None:
        return None
    return ClockFacts((stated[0] - duration_s / 60) % 1440, stated[0], "出发", stated[1])


# -- temperatures ------------------------------------------------------------------------------------------------------


def temperature_text(d: Draw, value: float, lang: str, cn: bool = False) -> str:
    t = round(value)
    if lang == "en":
        return d.choice((f"{t}°C", f"{t} °C", f"{t} degrees"))  # "4 degrees below zero" is optional: not made
    if cn:
        return ("零下" + cn_int(-t, liang=True) if t < 0 else cn_int(t, liang=True)) + d.choice(("度", "摄氏度"))
    options = [f"{t}℃", f"{t}°C", f"{t}度"]
    if t < 0:
        options.append(f"零下{-t}度")
    return d.choice(options)


def temperature_range_text(d: Draw, low: float, high: float, lang: str, cn: bool = False) -> str:
    lo, hi = round(low), round(high)
    if lang == "en":
        return d.choice((f"{lo}~{hi}°C", f"between {lo} and {hi}°C", f"a low of {lo}°C and a high of {hi}°C",
                         f"{lo} to {hi} degrees"))
    if cn:
        return f"最低{temperature_text(d, lo, 'zh', cn=True)}，最高{temperature_text(d, hi, 'zh', cn=True)}"
    return d.choice((f"{lo}~{hi}℃", f"{lo}到{hi}度", f"最低{lo}℃，最高{hi}℃",
                     f"{temperature_text(d, lo, 'zh')}到{temperature_text(d, hi, 'zh')}"))


# -- weather and traffic words -----------------------------------------------------------------------------------------


CONDITION_GROUP = {"晴": "clear", "多云": "cloudy", "阴": "cloudy", "少云": "cloudy", "小雨": "rain", "中雨": "rain",
                   "大雨": "rain", "暴雨": "rain", "阵雨": "rain", "雷阵雨": "rain", "雨": "rain", "小雪": "snow",
                   "中雪": "snow", "大雪": "snow", "雪": "snow", "雨夹雪": "snow", "雾": "fog", "大雾": "fog",
                   "霾": "haze", "沙尘暴": "dust", "扬沙": "dust", "浮尘": "dust"}
ADJACENT_GROUPS = {"clear": {"cloudy"}, "cloudy": {"clear"}, "fog": {"haze"}, "haze": {"fog", "dust"},
                   "rain": {"snow"}, "snow": {"rain"}, "dust": {"haze"}}
CONDITION_EN = {"晴": ("sunny", "clear skies"), "多云": ("cloudy", "partly cloudy"), "阴": ("overcast",),
                "小雨": ("light rain",), "中雨": ("moderate rain",), "大雨": ("heavy rain",),
                "暴雨": ("a rainstorm",),
                "阵雨": ("showers", "rain showers"), "雷阵雨": ("thundershowers",), "小雪": ("light snow",),
                "中雪": ("moderate snow",), "大雪": ("heavy snow",), "雪": ("snow",), "雾": ("foggy", "fog"),
                "霾": ("hazy", "haze"), "沙尘暴": ("a sandstorm",)}
WRONG_CONDITIONS = ("晴", "暴雨", "大雪", "雷阵雨", "大雾", "霾", "沙尘暴", "阴", "小雨")


def condition_group(condition: str) -> str:
    return CONDITION_GROUP.get(condition, condition)


def wrong_conditions(true_groups: set[str]) -> list[str]:
    """Conditions clearly unlike every true one (neither the same nor an adjacent group)."""
    banned = set(true_groups) | {g for t in true_groups for g in ADJACENT_GROUPS.get(t, ())}
    return [c for c in WRONG_CONDITIONS if condition_group(c) not in banned]


def condition_text(d: Draw, condition: str, lang: str) -> str:
    return d.choice(CONDITION_EN.get(condition, (condition,))) if lang == "en" else condition


TRAFFIC_WORDS = {"畅通": (("畅通", "一点都不堵", "很通畅", "路况良好，畅通无阻", "顺畅"),
                        ("traffic is clear", "there is no congestion", "traffic is flowing freely",
                         "the road is smooth")),
                 "缓行": (("缓行", "有点堵", "走走停停", "行驶缓慢"),
                        ("traffic is slow", "traffic is slow-moving", "it's stop-and-go")),
                 "拥堵": (("拥堵", "堵车", "很堵", "比较拥堵"),
                        ("it is congested", "there is heavy traffic", "traffic is jammed")),
                 "严重拥堵": (("严重拥堵", "堵得非常厉害"), ("it is severely congested", "traffic is gridlocked"))}


#: Unambiguous words only, for the *wrong* state of a wrong answer (no intensifier a reader could
#: take for the true state: "很堵" on a 拥堵 road is not a claim of 严重拥堵).
PLAIN_TRAFFIC_WORDS = {"畅通": (("畅通", "一路畅通"), ("traffic is clear", "there is no congestion")),
                       "缓行": (("缓行", "行驶缓慢"), ("traffic is slow-moving",)),
                       "拥堵": (("拥堵", "严重堵车"), ("it is congested", "there is heavy traffic")),
                       "严重拥堵": (("严重拥堵",), ("it is severely congested",))}


def traffic_text(d: Draw, state: str, lang: str, plain: bool = False) -> str:
    zh, en = (PLAIN_TRAFFIC_WORDS if plain else TRAFFIC_WORDS)[state]
    return d.choice(en if lang == "en" else zh)


# -- answers: fillers, clauses, languages, the kernel's vocabularies ---------------------------------------------------


FILLERS_ZH = ("好的，", "呃，", "嗯，", "根据查询结果，", "帮您查到了：", "")
FILLERS_EN = ("Sure, ", "OK. ", "Here you go: ", "Well, ", "")


def join_clauses(d: Draw, clauses: list[str], lang: str) -> str:
    """Clauses joined into one answer, with an optional filler in front."""
    clauses = [c for c in clauses if c]
    if lang == "en":
        body = d.choice((". ", "; ", ", ")).join(clauses)
        return d.choice(FILLERS_EN) + body.rstrip(".") + "."
    return d.choice(FILLERS_ZH) + d.choice(("，", "。", "；")).join(clauses) + "。"


def pick_lang(d: Draw) -> str:
    """The language of an answer: Chinese twice as often as English."""
    return d.choice(("zh", "zh", "en"))


#: Denials of a condition or state from a distance (weather and traffic): the bridged forms are
#: mobility_env.reading.text's, shared with MobilePA's verifier (:mod:`mobility_rewards.probes.mobilepa`).
FAR_DENIALS = {"zh": ("不太可能出现{}", "完全没有出现{}的可能", "不大可能有{}", "不会有任何{}", "{}的可能性不大",
                      "没怎么见到{}", "未见{}", "没见到{}", "不太可能遇到{}", "不会再有{}", "没怎么出现{}"),
               "en": ("no chance at all of {}", "nothing like {}", "{} is unlikely", "unlikely to see {}",
                      "{} is not expected", "not a chance of {}", "zero chance of {}", "unlikely to see any {}")}


@lru_cache(maxsize=None)
def kernel_vocabulary(name: str) -> dict[str, Any]:
    """A data file of the kernel's reader (``mobility_env/reading/vocab``), read directly: not the verifier's tables."""
    text = resources.files("mobility_env.reading").joinpath("vocab").joinpath(name).read_text(encoding="utf-8")
    return dict(json.loads(text))


def approximations(kind: str, value: float, lang: str) -> list[tuple[str, float, float]]:
    """Spoken approximations of an amount's neighbourhood, each with the span it names: ``(text, low, high)`` in the
    amount's unit (minutes for ``"duration"``, metres for ``"distance"``): a round number and more (``20多分钟``,
    ``十几分钟``, ``1个多小时``, ``1小时20多分钟``, ``半个多小时``, ``30-odd minutes``, ``12多公里``). The caller
    keeps those whose span holds the amount (an honest answer) or lies clear of it (a wrong one)."""
    out: list[tuple[str, float, float]] = []
    if kind == "duration":
        for tens in range(10, 60, 10):
            out.append((f"{tens}-odd minutes" if lang == "en" else f"{tens}多分钟", tens, tens + 10))
            if lang == "zh":
                out.append(("十几分钟" if tens == 10 else f"{cn_int(tens)}多分钟", tens, tens + 10))
        if lang == "zh":
            out.append(("半个多小时", 30, 60))
            for hours in range(1, 6):
                out.append((f"{hours}个多小时", 60 * hours, 60 * hours + 60))
                out.append((f"{cn_int(hours, liang=True)}个多小时", 60 * hours, 60 * hours + 60))
                out += [(f"{hours}小时{tens}多分钟", 60 * hours + tens, 60 * hours + tens + 10)
                        for tens in range(10, 60, 10)]
    elif kind == "distance":
        for km in list(range(1, 10)) + list(range(10, 200, 10)):
            step = 1 if km < 10 else 10
            text = f"{km}-odd kilometres" if lang == "en" else f"{km}多公里"
            if lang == "en" and km < 10:
                continue  # "3-odd kilometres" is no English
            out.append((text, 1000 * km, 1000 * (km + step)))
        if lang == "zh":
            out.append(("十几公里", 10_000, 20_000))
    return out


def holding(kind: str, value: float, lang: str) -> list[str]:
    """The approximations whose span holds ``value`` with a margin (honest answers)."""
    margin = 0.5 if kind == "duration" else 50.0
    return [text for text, low, high in approximations(kind, value, lang) if low + margin <= value <= high - margin]


def clear_of(kind: str, value: float, lang: str) -> list[str]:
    """The approximations whose span lies at least 10 % clear of ``value`` (wrong answers)."""
    return [text for text, low, high in approximations(kind, value, lang) if high < value * 0.9 or low > value * 1.1]


#: A second amount in a spelling no reader knows (a number, an unknown word, a unit): whatever it says, it cannot be
#: verified, so the answer fails (both suites). New spellings here are the point: the rule must hold for what no list
#: holds.
UNREADABLE = {"zh": ["，也可能要{n}个把小时", "，或许还得{n}拉个小时", "，再加{n}来个公里", "，大概还要{n}多点钟头"],
              "en": [", plus {n} more minutes", ", or maybe {n} extra kilometres", ", give or take {n} further minutes",
                     ", perhaps {n} additional hours"]}
