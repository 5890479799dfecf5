"""Quantities stated in answers: distances, durations, clock times and temperatures.

Answers are free text in Chinese or English, so each parser understands both scripts and
both numeral systems:

* distances: ``2289米``, ``2,289 m``, ``2.3公里``, ``2.3 km``, ``1.5千米``, ``一百五十公里`` -> metres;
* durations: ``1小时49分钟``, ``1小时49分``, ``109分钟``, ``1.8小时``, ``半小时``, ``一个半小时``,
  ``1h49min``, ``2 hours 5 minutes``, ``90 s`` -> seconds;
* clock times: ``11:23``, ``11点23分``, ``9点半``, ``上午九点``, ``下午3点``, ``11点15`` -> minutes
  after midnight;
* temperatures: ``-4℃``, ``零下4度``, ``-9~-2℃``, ``-4°C`` -> degrees Celsius.

Every parser returns a tuple of the values (cached per text) in the order they appear in the text; callers decide which
one is "the reported value" (see :mod:`mobility_rewards.verify_route`). Clock times are recognised
first and masked, so ``11点23分`` is never read as a 23-minute duration.

:func:`within_tolerance` is the paper's 5 % rule, with one documented leniency: a value
stated at a coarser precision ("2公里" for 2,289 m) also passes when it equals the evidence
rounded to that precision and is within :data:`ROUNDING_CAP` of it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

RELATIVE_TOLERANCE = 0.05
ROUNDING_CAP = 0.15

_CN_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "俩": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7,
              "八": 8, "九": 9}
_CN_UNITS = {"十": 10, "百": 100, "千": 1000, "万": 10000}
_CN_NUMBER = re.compile(r"[零〇一二两俩三四五六七八九十百千万]+")
_NUMBER = r"(\d+(?:,\d{3})*(?:\.\d+)?)"


def chinese_numeral_value(text: str) -> int | None:
    """``"三十七"`` -> 37, ``"一百零五"`` -> 105, ``"两"`` -> 2, and the spoken shortening of a last digit
    right after a unit: ``"一万五"`` -> 15000, ``"三千五"`` -> 3500 (``"一万零五"`` is 10005); None when
    ``text`` is not a numeral."""
    if not text or any(ch not in _CN_DIGITS and ch not in _CN_UNITS for ch in text):
        return None
    total, section, digit = 0, 0, None
    last_unit, zero = 1, False  # the unit just before a trailing digit, and whether 零 came between
    for ch in text:
        if ch in _CN_DIGITS:
            digit = _CN_DIGITS[ch]
            zero = zero or digit == 0
            continue
        unit = _CN_UNITS[ch]
        if unit == 10000:
            section = (section + (digit or 0)) * unit
            total, section = total + section, 0
        else:
            section += (1 if digit is None else digit) * unit
        digit, last_unit, zero = None, unit, False
    if digit and last_unit >= 100 and not zero:  # 一万五: the digit counts in the unit below (1.5万)
        digit *= last_unit // 10
    return total + section + (digit or 0)


def arabize(text: str) -> str:
    """Replace runs of Chinese numerals with Arabic digits (``三十七分钟`` -> ``37分钟``).

    Runs that are not numbers on their own (a lone ``千`` as in ``千米``) are kept.
    """
    def replace(match: re.Match[str]) -> str:
        run = match.group(0)
        following = text[match.end():match.end() + 1]
        if run.endswith("零") and following == "下":  # 零下 = below zero, not a numeral
            return run if len(run) == 1 else arabize(run[:-1]) + "零"
        if run == "千" and match.end() < len(text) and text[match.end()] == "米":
            return run  # 千米 is the kilometre (十米, 百米, 万米 are 10, 100, 10,000 metres)
        if run in ("千", "万", "百"):  # a lone 万/百/千 is a word (万达, 老百姓), not a number
            return run
        if run.endswith("千") and "万" not in run and match.end() < len(text) and text[match.end()] == "米":
            value = chinese_numeral_value(run[:-1])  # 三千米: 3 千米 (一万五千米 is 15000 米: 万 binds the 千)
            return run if value is None else f"{value}千"
        value = chinese_numeral_value(run)
        return run if value is None else str(value)
    return _CN_NUMBER.sub(replace, text)


_EN_ONES = {"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
            "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
            "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40,
            "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
_EN_WORD = "|".join(sorted(_EN_ONES, key=len, reverse=True))
# a maximal run of number words (possessive: a run that is no amount is given up at once, never re-read from inside)
_EN_RUN = re.compile(rf"\b(?:an?|{_EN_WORD})\b(?:[\s-]+(?:{_EN_WORD}|hundred|thousand|and)\b)*+", re.IGNORECASE)
_EN_UNIT_AFTER = re.compile(r"[\s-]+(?:minutes?|mins?|hours?|hrs?|seconds?|secs?|kilomet(?:er|re)s?|km|met(?:er|re)s?|"
                            r"degrees?|yuan)\b", re.IGNORECASE)
_EN_HALF_HOURS_AFTER = re.compile(r"\s+a\s+half\s+hours?\b", re.IGNORECASE)
_EN_FRACTIONS = ((re.compile(r"\ban?\s+hour\s+and\s+a\s+half\b", re.IGNORECASE), "90 minutes"),
                 (re.compile(r"\bhalf\s+an\s+hour\b", re.IGNORECASE), "30 minutes"),
                 (re.compile(r"\bthree\s+quarters\s+of\s+an\s+hour\b", re.IGNORECASE), "45 minutes"),
                 (re.compile(r"\b(?:a\s+)?quarter\s+of\s+an\s+hour\b", re.IGNORECASE), "15 minutes"))


def _english_value(words: str) -> int:
    total, current = 0, 0
    for word in re.split(r"[\s-]+", words.lower()):
        if word in ("a", "an"):
            current += 1
        elif word in _EN_ONES:
            current += _EN_ONES[word]
        elif word == "hundred":
            current = max(current, 1) * 100
        elif word == "thousand":
            total, current = (total + max(current, 1)) * 1000, 0
    return total + current


def spelled_numbers(text: str) -> str:
    """English amounts spelled in words, in digits (``thirty-five minutes`` -> ``35 minutes``, ``an hour and a half``
    -> ``90 minutes``, ``two hundred metres`` -> ``200 metres``): a number word counts only before a unit. Left
    spelled, a wrong amount hid from the parser (``25 minutes or thirty-five minutes`` passed as 25 minutes)."""
    if not any("a" <= ch <= "z" or "A" <= ch <= "Z" for ch in text):
        return text
    for pattern, value in _EN_FRACTIONS:
        text = pattern.sub(value, text)
    out, done = [], 0
    for run in _EN_RUN.finditer(text):  # linear: each run is read once
        words = run.group(0)
        if re.search(r"[\s-]and$", words, re.IGNORECASE):  # two and | a half hours
            half = _EN_HALF_HOURS_AFTER.match(text, run.end())
            if half is None:
                continue
            out += [text[done:run.start()], f"{_english_value(words)}.5 hours"]
            done = half.end()
        elif _EN_UNIT_AFTER.match(text, run.end()):
            out += [text[done:run.start()], str(_english_value(words))]
            done = run.end()
    return "".join(out) + text[done:] if out else text


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def _decimals(text: str) -> int:
    return len(text.split(".")[1]) if "." in text else 0


@dataclass(frozen=True)
class Quantity:
    """One stated value in base units, with the unit size and decimals it was stated in."""

    value: float
    unit: float  # base units per stated unit (1000 for km, 60 for minutes, ...)
    decimals: int
    start: int


_CLOCK_PATTERNS = (
    re.compile(r"(上午|早上|早晨|凌晨|中午|下午|傍晚|晚上|夜里)?\s*(\d{1,2})\s*[:：]\s*(\d{2})(?!\d)"),
    re.compile(r"(上午|早上|早晨|凌晨|中午|下午|傍晚|晚上|夜里)?\s*(\d{1,2})\s*点\s*(半|一刻|三刻|\d{1,2}\s*分?)?"),
    re.compile(r"(\d{1,2})(?:\s*(\d{2}))?\s*([ap])\.?m\.?", re.IGNORECASE),
)
_AFTERNOON = ("下午", "傍晚", "晚上", "夜里")


@lru_cache(maxsize=512)
def parse_clock_times(text: str) -> tuple[tuple[int, int, int], ...]:
    """Clock times in ``text`` as ``(minutes_after_midnight, start, end)`` spans, in order.

    ``下午3点`` -> 900; ``9点半`` -> 570; ``11点15`` -> 675; ``11:23`` -> 683; ``3pm`` -> 900.
    A time without a period word is taken as written (``2点`` -> 120); compare such times
    modulo 12 hours (:func:`clock_difference`).
    """
    text = arabize(text)
    found: list[tuple[int, int, int]] = []
    taken: list[tuple[int, int]] = []
    for index, pattern in enumerate(_CLOCK_PATTERNS):
        for match in pattern.finditer(text):
            if any(s < match.end() and match.start() < e for s, e in taken):
                continue
            if index == 2:
                hour, minute = int(match.group(1)), int(match.group(2) or 0)
                if match.group(3).lower() == "p" and hour < 12:
                    hour += 12
            else:
                period, hour = match.group(1), int(match.group(2))
                extra = (match.group(3) or "").replace(" ", "")
                if index == 1 and text[match.end():match.end() + 2].startswith(("钟", "多钟")) and not period:
                    pass  # "3点钟" is still a clock time
                if extra == "半":
                    minute = 30
                elif extra == "一刻":
                    minute = 15
                elif extra == "三刻":
                    minute = 45
                else:
                    minute = int(extra.rstrip("分")) if extra.rstrip("分").isdigit() else 0
                if period in _AFTERNOON and hour < 12:
                    hour += 12
                if period == "中午" and hour < 6:
                    hour += 12
            if hour > 24 or minute > 59:
                continue
            taken.append((match.start(), match.end()))
            found.append((hour * 60 + minute, match.start(), match.end()))
    return tuple(sorted(found, key=lambda item: item[1]))


def clock_difference(a_minutes: float, b_minutes: float, *, modulo_12h: bool = True) -> float:
    """Smallest distance in minutes between two clock times (on a 12- or 24-hour dial)."""
    period = 720 if modulo_12h else 1440
    diff = abs(a_minutes - b_minutes) % period
    return min(diff, period - diff)


def _mask(text: str, spans: list[tuple[int, int]]) -> str:
    chars = list(text)
    for start, end in spans:
        for i in range(start, end):
            chars[i] = " "
    return "".join(chars)


_DISTANCE = re.compile(_NUMBER + r"\s*(公里|千米|kilomet(?:er|re)s?|km|米|met(?:er|re)s?\b|m(?![a-zA-Z]))", re.IGNORECASE)


def _distance_unit(word: str) -> float:
    word = word.lower()
    return 1000.0 if word in ("公里", "千米", "km") or word.startswith("kilomet") else 1.0


@lru_cache(maxsize=512)
def parse_distances(text: str) -> tuple[Quantity, ...]:
    """Distances stated in ``text``, in metres, in order of appearance."""
    text = arabize(text)
    text = _mask(text, [(s, e) for _, s, e in parse_clock_times(text)])
    quantities = []
    for match in _DISTANCE.finditer(text):
        unit = _distance_unit(match.group(2))
        quantities.append(Quantity(_number(match.group(1)) * unit, unit, _decimals(match.group(1)), match.start()))
    return tuple(quantities)


_DURATION_PART = re.compile(
    r"(半|" + _NUMBER + r"\s*个?\s*半?)\s*(个半小时|个小时|小时|钟头|hours?|hrs?|h(?![a-zA-Z])|分钟|分(?!之)|minutes?|mins?|"
    r"秒钟?|seconds?|secs?|s(?![a-zA-Z])|天|days?)",
    re.IGNORECASE)
_DURATION_UNITS = (("个半小时", 3600.0), ("个小时", 3600.0), ("小时", 3600.0), ("钟头", 3600.0), ("hour", 3600.0),
                   ("hr", 3600.0), ("h", 3600.0), ("分", 60.0), ("min", 60.0), ("秒", 1.0), ("sec", 1.0),
                   ("s", 1.0), ("天", 86400.0), ("day", 86400.0))


def _duration_unit(word: str) -> float:
    word = word.lower()
    for prefix, seconds in _DURATION_UNITS:
        if word.startswith(prefix):
            return seconds
    raise ValueError(word)


@lru_cache(maxsize=512)
def parse_durations(text: str) -> tuple[Quantity, ...]:
    """Durations stated in ``text``, in seconds, in order; adjacent parts are summed.

    ``1小时49分钟`` (and ``2 hours and 41 minutes``) is one duration (6,540 s); ``约37分钟，另一条42分钟`` is two. Clock times are
    masked first, so ``11点23分`` is not a duration.
    """
    text = arabize(text)
    text = _mask(text, [(s, e) for _, s, e in parse_clock_times(text)])
    quantities: list[Quantity] = []
    last_end = -10
    for match in _DURATION_PART.finditer(text):
        amount_text, word = match.group(1), match.group(3)
        unit = _duration_unit(word)
        if amount_text == "半":
            amount, decimals = 0.5, 1
        else:
            amount, decimals = _number(match.group(2)), _decimals(match.group(2))
            if "半" in amount_text or word.startswith("个半"):
                amount, decimals = amount + 0.5, 1
        seconds = amount * unit
        gap = text[last_end:match.start()]
        if quantities and last_end >= 0 and gap.strip(" 又零,").lower() in ("", "and") and unit < quantities[-1].unit:
            prev = quantities[-1]
            quantities[-1] = Quantity(prev.value + seconds, unit, decimals, prev.start)
        else:
            quantities.append(Quantity(seconds, unit, decimals, match.start()))
        last_end = match.end()
    return tuple(quantities)


_DEGREES = r"(?:℃|°C|°|摄氏度|度|degrees?(?:\s*(?:celsius|C\b))?)"
_TEMPERATURE_RANGE = re.compile(r"(零下|-|−|minus\s*)?\s*(\d+(?:\.\d+)?)\s*" + _DEGREES
                                + r"?\s*(?:~|～|到|至|—|–|-|\bto\b|\band\b)\s*"
                                r"(零下|-|−|minus\s*)?\s*(\d+(?:\.\d+)?)\s*" + _DEGREES, re.IGNORECASE)
_TEMPERATURE = re.compile(r"(零下|-|−|minus\s*)?\s*(\d+(?:\.\d+)?)\s*" + _DEGREES + r"(?:\s*below zero)?", re.IGNORECASE)


@lru_cache(maxsize=512)
def parse_temperatures(text: str) -> tuple[float, ...]:
    """Temperatures in ``text`` in °C, in order (both ends of a range are listed)."""
    text = arabize(text)
    values: list[tuple[int, float]] = []
    taken: list[tuple[int, int]] = []
    for match in _TEMPERATURE_RANGE.finditer(text):
        low = float(match.group(2)) * (-1 if match.group(1) else 1)
        high = float(match.group(4)) * (-1 if match.group(3) else 1)
        values += [(match.start(), low), (match.start() + 1, high)]
        taken.append((match.start(), match.end()))
    for match in _TEMPERATURE.finditer(text):
        if any(s <= match.start() < e for s, e in taken):
            continue
        values.append((match.start(), float(match.group(2)) * (-1 if match.group(1) else 1)))
    return tuple(value for _, value in sorted(values))


def within_tolerance(reported: Quantity, actual: float, tolerance: float = RELATIVE_TOLERANCE, *,
                     rounding: bool = True) -> bool:
    """``|reported - actual| <= tolerance * actual``, or a coarser rounding of ``actual``.

    The rounding leniency: when ``reported`` equals ``actual`` rounded to the precision it
    was stated in (``2公里`` for 2,289 m) and is within :data:`ROUNDING_CAP`, it passes (whole
minutes, metres and seconds are the finest units people state, so they are not capped:
``1分钟`` for 71 s passes).
    ``actual <= 0`` passes only for an exact zero. ``rounding=False`` turns the leniency off.
    """
    if actual <= 0:
        return reported.value == actual
    error = abs(reported.value - actual) / actual
    if error <= tolerance:
        return True
    if not rounding:
        return False
    stated = reported.value / reported.unit
    rounded = round(actual / reported.unit, reported.decimals)
    # Whole minutes (or metres, seconds) are the finest unit anyone states: no cap there.
    cap = 1.0 if reported.unit <= 60 and reported.decimals == 0 else ROUNDING_CAP
    return error <= cap and abs(stated - rounded) < 1e-9
