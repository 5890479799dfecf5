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

# the numeral readers live in the kernel, one copy for both suites; imported here under their old names too
from mobility_env.reading import vocabulary
from mobility_env.reading.lexicon import trie_pattern
from mobility_env.reading.numerals import arabize, chinese_numeral_value, spelled_numbers  # noqa: F401

RELATIVE_TOLERANCE = 0.05
ROUNDING_CAP = 0.15
_NUMBER = r"(\d+(?:,\d{3})*(?:\.\d+)?)"


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


def unit_alternation(kind: str) -> str:
    """The spellings of ``kind``'s units (:func:`mobility_env.reading.vocabulary.units`), longest first, each with its
    guard (an ASCII word ends at a letter boundary: ``m`` is not the ``m`` of ``min``)."""
    tails = {unit.spelling: ("(?![a-zA-Z])" if unit.spelling[-1].isascii() and unit.spelling[-1].isalpha() else "")
             + unit.guard for unit in vocabulary.units_of(kind)}
    return trie_pattern(tails, tails)  # factored by prefixes: one branch per character, not every unit tried


_DISTANCE_FACTOR = {u.spelling: u.factor for u in vocabulary.units_of("distance")}
_DISTANCE_GUARD = {u.spelling: re.compile(u.guard) for u in vocabulary.units_of("distance") if u.guard}
_CJK_UNIT_CHARS = "".join(sorted({ch for u in _DISTANCE_FACTOR for ch in u if not ch.isascii()}))
# an amount and the word after it; the word is then looked up (one dictionary look-up, not an alternation of every
# unit tried at every number: 2.5x faster on long answers)
_DISTANCE_TOKEN = re.compile(_NUMBER + rf"\s*(nautical\s+miles?|[a-zA-Z]+|[{_CJK_UNIT_CHARS}]{{1,3}})")


def _distance_unit(text: str, match: re.Match[str]) -> tuple[str, int] | None:
    """The distance unit the token after an amount spells (the longest known prefix of a CJK run), with its end."""
    word = match.group(2)
    candidates = [word] if word.isascii() else [word[:n] for n in range(len(word), 0, -1)]
    for candidate in candidates:
        key = re.sub(r"\s+", " ", candidate.lower())
        if key in _DISTANCE_FACTOR:
            end = match.start(2) + len(candidate)
            guard = _DISTANCE_GUARD.get(key)
            return (key, end) if guard is None or guard.match(text, end) else None
    return None


def distance_factor(word: str) -> float:
    word = re.sub(r"\s+", " ", word.lower())
    return _DISTANCE_FACTOR.get(word) or _DISTANCE_FACTOR[word.replace(" ", "")]


@lru_cache(maxsize=512)
def parse_distances(text: str) -> tuple[Quantity, ...]:
    """Distances stated in ``text``, in metres, in order of appearance; whole kilometres and metres run together are
    one distance (``2公里400米``, ``2 km 400 m``: 2,400 m)."""
    text = arabize(text)
    text = _mask(text, [(s, e) for _, s, e in parse_clock_times(text)])
    quantities: list[Quantity] = []
    last_end = -1
    for match in _DISTANCE_TOKEN.finditer(text):
        found = _distance_unit(text, match)
        if found is None:
            continue
        unit = _DISTANCE_FACTOR[found[0]]
        metres = _number(match.group(1)) * unit
        previous = quantities[-1] if quantities else None
        if previous is not None and unit == 1.0 and previous.unit == 1000.0 and previous.decimals == 0 \
                and not text[last_end:match.start()].strip(" 零又") and metres < 1000:
            quantities[-1] = Quantity(previous.value + metres, 1.0, 0, previous.start)  # 2公里400米: one distance
        else:
            quantities.append(Quantity(metres, unit, _decimals(match.group(1)), match.start()))
        last_end = found[1]
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


_FAHRENHEIT = r"°\s*F\b|℉|华氏度|degrees?\s*fahrenheit|fahrenheit"
_DEGREES = rf"(?:{_FAHRENHEIT}|℃|°C|°|摄氏度|度|degrees?(?:\s*(?:celsius|C\b))?)"
_SIGN = r"(零下|-|−|minus\s*)?\s*(华氏|摄氏)?\s*"
_TEMPERATURE_RANGE = re.compile(_SIGN + r"(\d+(?:\.\d+)?)\s*(" + _DEGREES
                                + r")?\s*(?:~|～|到|至|—|–|-|\bto\b|\band\b)\s*"
                                + _SIGN + r"(\d+(?:\.\d+)?)\s*(" + _DEGREES + ")", re.IGNORECASE)
_TEMPERATURE = re.compile(_SIGN + r"(\d+(?:\.\d+)?)\s*(" + _DEGREES + r")(?:\s*below zero)?", re.IGNORECASE)
_IS_FAHRENHEIT = re.compile(_FAHRENHEIT, re.IGNORECASE)


def _celsius(sign: str | None, scale: str | None, number: str, unit: str | None) -> float:
    """One stated temperature in °C (``61°F``, ``华氏61度`` are 16.1 °C)."""
    value = float(number) * (-1 if sign else 1)
    if scale == "华氏" or unit and _IS_FAHRENHEIT.fullmatch(unit.strip()):
        return round((value - 32) * 5 / 9, 1)
    return value


def parse_temperatures(text: str) -> tuple[float, ...]:
    """Temperatures in ``text`` in °C, in order (both ends of a range are listed; Fahrenheit converted)."""
    return tuple(value for _, value in temperature_spans(text))


@lru_cache(maxsize=512)
def temperature_spans(text: str) -> tuple[tuple[int, float], ...]:
    """``(position, °C)`` of each temperature in ``text`` (arabized first: positions are those of an
    :func:`arabize`-d text, such as a normalized answer), in order."""
    text = arabize(text)
    values: list[tuple[int, float]] = []
    taken: list[tuple[int, int]] = []
    for match in _TEMPERATURE_RANGE.finditer(text):
        high_unit = match.group(8)
        low = _celsius(match.group(1), match.group(2) or match.group(6), match.group(3), match.group(4) or high_unit)
        high = _celsius(match.group(5), match.group(6) or match.group(2), match.group(7), high_unit)
        values += [(match.start(), low), (match.start() + 1, high)]
        taken.append((match.start(), match.end()))
    for match in _TEMPERATURE.finditer(text):
        if any(s <= match.start() < e for s, e in taken):
            continue
        values.append((match.start(), _celsius(*match.group(1, 2, 3, 4))))
    return tuple(sorted(values))


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
