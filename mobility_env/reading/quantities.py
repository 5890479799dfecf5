"""Quantities stated in an answer, read once for both suites: durations, distances, temperatures, percentages and
speeds, each a typed :class:`Quantity` with its value in the kind's base unit, the precision it was stated at and its
span.

:func:`quantities` scans a text already read (:func:`mobility_env.reading.normalized.normalize_answer` for
MobilityBench, :func:`mobility_env.mobilepa.answers.normalized` for MobilePA; both hold numbers in digits and
Simplified characters), in order:

* a number with a unit of the kernel's unit table (:func:`mobility_env.reading.vocabulary.units`: ``25分钟``,
  ``23.9 km``, ``30里``, ``9.3 miles``, ``61°F``, ``零下3度``, ``40%``), a Chinese decimal (``二十三点九公里``) and a
  percentage spelled ``百分之四十``;
* compound amounts as one: ``1 h 5 min`` / ``1小时5分钟`` (65 min), ``一个半小时``, ``half an hour``, ``一刻钟``,
  ``2公里400米`` (2,400 m);
* ``30多分钟`` / ``30-odd minutes``: 30 to 40 minutes (value 35, tolerance 5, ``more``);
* a bare number joined to a quantity by range or list words shares its unit (``25–30 min``, ``25或30分钟``, ``10, 15,
  20 min``, ``25 min ± 5``, ``32分钟或48``); between two quantities it is read in the units of both (each reading is a
  claim); a bare number joined to none that still reads as an amount (``… or maybe 30``) is a ``"number"``;
* a speed (``57 km/h``) is a ``"speed"``, not a distance; a number that labels something (``route 1``, ``路线1``,
  ``G4``, ``¥9``, ``Nov 23``), one another word follows (``7个红绿灯``) and times of day and dates (``8:30``,
  ``8点30分``, ``2025-11-23``) are none of these. Days are not read as durations (``未来3天`` asks for a forecast).

Each suite compares what is read with its own rule: MobilePA by :meth:`Quantity.agrees` (the stated intervals
overlap), MobilityBench by the paper's 5 % with a rounding leniency (:func:`mobility_rewards.units.within_tolerance`,
which reads :attr:`Quantity.factor` and :attr:`Quantity.decimals`).
"""

from __future__ import annotations

import re
import unicodedata
from fractions import Fraction
from functools import lru_cache
from typing import Any, Iterable, Iterator, NamedTuple

from . import vocabulary


class Quantity(NamedTuple):
    """A number with a unit stated in a text: its ``kind`` (:data:`QUANTITY_KINDS`, ``"speed"`` or ``"number"``), its
    ``value`` in the kind's base unit (minutes, metres, °C, %), ``tolerance`` (half the precision it was stated with:
    ``23.9 km`` is 23 900 ± 50 m, ``24 km`` 24 000 ± 500 m; durations are read to the minute, so ``1 h`` is 60 ± 0.5
    min), its ``text`` and its ``unit`` (a key of the unit table: ``km``, ``分钟``). A number standing alone (``or
    maybe 30``) has the kind ``"number"``, no unit, and its value as written (:func:`read_in` gives it a unit).

    Where it stands and how it was written: ``start``/``end`` (its span in the scanned text),
    ``decimals`` (digits after the point as written), ``factor`` (base units per unit it was stated in: 60 for
    ``1.8小时``, 1 for ``1小时5分钟``, whose finest part is minutes) and ``more`` (stated as a range up from a round
    number, ``30多分钟``)."""

    kind: str
    value: Fraction
    tolerance: Fraction
    text: str
    unit: str = ""
    start: int = -1
    end: int = -1
    decimals: int = 0
    factor: Fraction = Fraction(1)
    more: bool = False

    def agrees(self, other: "Quantity") -> bool:
        """Whether both state the same amount at the precisions they were stated with (the two intervals overlap:
        ``23.9 km`` and ``23942 m`` agree, ``26 min`` and ``25 min`` do not)."""
        return self.kind == other.kind and abs(self.value - other.value) < self.tolerance + other.tolerance


QUANTITY_KINDS = ("duration", "distance", "temperature", "percent")
_HALF = Fraction(1, 2)
_PRECISION = tuple(Fraction(1, 2 * 10 ** places) for places in range(8))  # half a unit of the last place written


def _folded(spelling: str) -> str:
    return unicodedata.normalize("NFKC", spelling).casefold()


# unit spelling (folded) -> (kind, factor to the base unit, offset added before the factor). Distances, durations and
# temperatures are the kernel's vocabulary (里, 英里, 公尺, °F ...), read in base units metres, minutes and °C; a half
# hour (个半小时) is read by its own pattern, days not at all.
_UNITS: dict[str, tuple[str, Fraction, Fraction]] = {}
_GUARDS: dict[str, str] = {}
for _unit in vocabulary.units():
    if _unit.spelling in ("个半小时", "天", "days", "day"):
        continue
    _factor = Fraction(str(_unit.factor)).limit_denominator(1000)
    for _name in {_folded(_unit.spelling), _unit.spelling.lower()}:  # ℃ as written and as NFKC reads it (°c)
        _UNITS[_name] = (_unit.kind, _factor / 60 if _unit.kind == "duration" else _factor, Fraction(_unit.offset))
        _GUARDS[_name] = _unit.guard
for _kind, _factor, _offset, _names in (
        ("duration", Fraction(1), Fraction(0), "′ '"),
        ("temperature", Fraction(1), Fraction(0), "degrees_celsius degree_celsius deg c"),
        ("temperature", Fraction(5, 9), Fraction(-32), "degree_fahrenheit degrees_fahrenheit fahrenheit f"),
        ("percent", Fraction(1), Fraction(0), "% percent per_cent"),
        ("speed", Fraction(1), Fraction(0), "km/h kmh kph 公里/小时 公里每小时 千米/小时 mph m/s 米/秒")):
    for _name in _names.split():
        _UNITS[_name.replace("_", " ")] = (_kind, _factor, _offset)
for _name, (_kind, _factor, _offset) in list(_UNITS.items()):  # integral factors as ints: int arithmetic is cheaper
    _UNITS[_name] = (_kind, int(_factor) if _factor.denominator == 1 else _factor, _offset)  # type: ignore[assignment]


def _unit_pattern(names: Iterable[str], guarded: bool = True) -> str:
    def one(name: str) -> str:
        tail = "(?![a-z])" if name[-1].isascii() and name[-1].isalpha() else "(?![之钱])" if name == "分" else \
            "(?![a-z0-9])" if name in ("'", "′") else ""
        return re.escape(name).replace(r"\ ", r"\s+") + tail + (_GUARDS.get(name, "") if guarded else "")
    return "|".join(one(n) for n in sorted(names, key=len, reverse=True))


_ZH_DIGIT = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "俩": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_EN_ONES = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen " \
           "seventeen eighteen nineteen".split()
_EN_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
# A number is at most 30 digits a side and a Chinese numeral at most 16 characters: longer runs are no amount
# anyone states (read as none: shaped like an amount, they fail the answer), and a bounded run keeps the scan linear
# (a 200,000-character run of 一 took 5.5 s; a 5,000-digit number raised int()'s digit limit).
_ARABIC = r"(?:(?<![\d.])[-−](?=[\d.]))?(?:(?<!\d)\d{1,30}(?!\d)(?:,\d{3})*(?:\.\d{1,30}(?!\d))?|\.\d{1,30}(?!\d))"
_ZH = "(?<![零〇一二两俩三四五六七八九十百千])[零〇一二两俩三四五六七八九十百千]{1,16}(?![零〇一二两俩三四五六七八九十百千])"
_EN = rf"(?<![a-z])(?:(?:{'|'.join(_EN_TENS)})(?:[-\s](?:{'|'.join(_EN_ONES[1:10])}))?|{'|'.join(_EN_ONES)})(?![a-z])"
_NUM = rf"(?:{_ARABIC}|{_ZH}|{_EN})"
_ARTICLE = r"(?<![a-z])an?(?=\s+(?:half|hour|minute|second|kilomet|mile|met|degree))"
_UNIT = _unit_pattern(_UNITS)
# a round number and more: 30多, 30余, 30来, 10几 (the teens), 1个多 (小时), 30-odd; read as the span up to the next round
# number (30 to 40, 1 to 2)
_MORE = r"个多|多个|多|余|来|几|-odd|-something"
_HOURS = _unit_pattern(n for n, u in _UNITS.items() if u[:2] == ("duration", 60))
_MINUTES = _unit_pattern(n for n, u in _UNITS.items() if u[:2] == ("duration", 1) and n not in ("'", "′"))
_SCAN = re.compile("|".join((
    rf"(?P<half_zh>(?:(?P<hz>\d{{1,30}}|{_ZH})[个個]?)?半[个個]?(?P<hmore>多)?(?:小时|小時|钟头|鐘頭|钟(?![表点])))",
    rf"(?P<half_en>(?<![a-z])(?:half\s+an?\s+hour|an?\s+half[-\s]hour|half-hour|an?\s+hour\s+and\s+a\s+half)|"
    rf"(?P<he>{_NUM}|{_ARTICLE})\s+(?:and\s+a\s+half\s+hours?|hours?\s+and\s+a\s+half))",
    rf"(?P<quarter>(?P<qz>{_ZH}|\d{{1,30}})刻钟|(?<![a-z])(?:a\s+)?quarter\s+of\s+an\s+hour|"
    rf"(?<![a-z])three\s+quarters\s+of\s+an\s+hour)",
    rf"(?P<percent_zh>百分之(?P<pz>{_ZH}(?:点[零〇一二三四五六七八九]{{1,30}})?|{_ARABIC}))",
    rf"(?P<hm>(?P<hm_h>{_NUM}|{_ARTICLE})\s*(?:{_HOURS})\s*(?:and\s+|又|零|,\s*)?(?P<hm_m>{_NUM})(?P<hm_more>{_MORE})?"
    rf"\s*(?:{_MINUTES}))",
    r"(?P<km_m>(?P<kk>\d{1,30})\s*(?:公里|千米|km(?![a-z]))\s*[零又]?\s*(?P<kmm>\d{1,30})\s*(?:米|m(?![a-z])))",
    rf"(?P<zh_decimal>(?P<zd>{_ZH}点[零〇一二三四五六七八九]{{1,30}})\s*(?P<zdu>公里|千米|米|摄氏度|度|%))",
    rf"(?P<clock>\d{{4}}[-/.]\d{{1,2}}[-/.]\d{{1,2}}(?!\d)|\d{{1,2}}:\d{{2}}(?::\d{{2}})?(?!\d)(?!\s*-?\s*(?:{_UNIT}))|"
    rf"(?:\d{{1,2}}|[零〇一二两三四五六七八九十]{{1,3}})点(?:半|整|钟|一刻|三刻|"
    rf"(?:\d{{1,2}}|[零〇一二三四五六七八九十]{{1,3}})分(?![钟之钱]))?)",
    rf"(?P<q>(?P<neg>零下|负|(?<![a-z])minus\s+)?(?P<scale>(?:华氏|摄氏)\s*)?(?P<n>{_NUM}|{_ARTICLE})"
    rf"(?P<more>{_MORE})?(?:-?ish|\s+or\s+so)?\s*-?\s*(?P<u>{_UNIT})(?P<below>\s+below\s+zero)?)",
    rf"(?P<bare>{_NUM})")))
# range and list words, and the words that offer a second value as a possibility (or maybe 30, 也可能30)
_LINK = re.compile(r"\s*(?:[,、/~〜\-–—±]|\+/?-|or|to|and|或者?|到|至|和|与|及)?\s*(?:(?:or|and|或者?|到)\s*)?"
                   r"(?:(?:maybe|perhaps|possibly)\s+|(?:也|还)?(?:可能|或许|也许)(?:是|要|会)?\s*)?")
_FOLLOW = re.compile(r"\s*(?:$|[,、/;:.。!?)~〜\-–—±+]|(?:or|to|and)(?![a-z])|或|到|至|和|与|及)")
_LABEL = re.compile(r"(?:(?:route|option|plan|path|line|no\.?|number|#|bus|step|stop|level|force|index|aqi|"
                    r"(?<![a-z])(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec|january|february|march|"
                    r"april|june|july|august|september|october|november|december)\.?|第|路线|方案|线路|号线|线|[¥$€£])\s*"
                    r"|[a-z])$")


# Where a token can begin: every alternative of _SCAN starts with a digit, a sign or point, a Chinese numeral, 半, 负,
# 华氏/摄氏, or one of the English words it knows, whole (numbers, a/an, half, quarter, minus). Trying the
# scanner only there reads the same tokens as trying it at every position, a few times faster.
_TRIGGER = re.compile(r"[\d\-−.零〇一二两俩三四五六七八九十百千半负华摄]|(?<![a-z])(?:"
                      + "|".join(sorted({*_EN_ONES, *_EN_TENS, "minus", "half", "quarter", "an", "a"}, key=len,
                                        reverse=True)) + ")(?![a-z])")


def _scan(text: str) -> Iterator[re.Match[str]]:
    """The matches of :data:`_SCAN` over ``text``, as ``_SCAN.finditer`` finds them."""
    at = 0
    while True:
        trigger = _TRIGGER.search(text, at)
        if trigger is None:
            return
        m = _SCAN.match(text, trigger.start())
        if m is None:
            at = trigger.start() + 1
            continue
        yield m
        at = m.end() if m.end() > m.start() else m.end() + 1


def _zh_value(text: str) -> Fraction:
    """Chinese numerals (二十五, 一百二十, 两, 三点五) as a number."""
    whole, _, decimals = text.partition("点")
    total, section, digit = 0, 0, None
    for ch in whole:
        if ch in _ZH_DIGIT:
            digit = _ZH_DIGIT[ch] if digit is None else digit * 10 + _ZH_DIGIT[ch]
        else:
            section += (1 if digit is None else digit) * {"十": 10, "百": 100, "千": 1000}[ch]
            digit = None
    total = section + (digit or 0)
    if decimals:
        return total + Fraction("0." + "".join(str(_ZH_DIGIT[ch]) for ch in decimals))
    return Fraction(total)


def _number(text: str) -> tuple[Fraction, Fraction, int]:
    """A number's value, half its precision (``23.9`` → 23.9 ± 0.05; words and Chinese numerals: ± 0.5) and its
    decimals as written."""
    if text.isdigit():  # the common case: a whole number in digits
        return int(text), _HALF, 0  # type: ignore[return-value]
    text = re.sub(r"\s+", " ", text.strip())
    if text[:1].isdigit() or text[:1] in "-−.":
        digits = text.replace(",", "").replace("−", "-")
        whole, _, decimals = digits.partition(".")
        places = len(decimals)
        value = int(whole + decimals) if whole not in ("", "-") else int(whole + "0" + decimals)
        precision = _PRECISION[places] if places < len(_PRECISION) else Fraction(1, 2 * 10 ** places)
        return (Fraction(value, 10 ** places) if places else value), precision, places  # type: ignore[return-value]
    if text in ("a", "an"):
        return Fraction(1), _HALF, 0
    if text[0] in _ZH_DIGIT or text[0] in "十百千":
        places = len(text.partition("点")[2])
        return _zh_value(text), Fraction(1, 2 * 10 ** places), places
    head, _, ones = text.replace("-", " ").partition(" ")
    value = _EN_ONES.index(head) if head in _EN_ONES else 20 + 10 * _EN_TENS.index(head)
    return Fraction(value + (_EN_ONES.index(ones) if ones else 0)), _HALF, 0


def _quantity(text: str, number: tuple[Fraction, Fraction, int], unit: str, start: int, end: int) -> Quantity:
    value, tolerance, decimals = number
    kind, factor, offset = _UNITS[unit]
    tolerance = tolerance * factor
    if kind == "duration":
        tolerance = min(tolerance, _HALF)
    return Quantity(kind, ((value + offset) if offset else value) * factor, tolerance, text, unit, start, end,
                    decimals, factor)


def read_in(number: Quantity, unit: str) -> Quantity:
    """A number standing alone (kind ``"number"``) read in ``unit`` (``30`` in ``km``: 30 000 ± 500 m)."""
    return _quantity(number.text, (number.value, number.tolerance, number.decimals), unit, number.start, number.end)


def _minutes(text: str, minutes: Fraction | int, start: int, end: int, unit: str = "min", decimals: int = 0,
             factor: Fraction = Fraction(1)) -> Quantity:
    return Quantity("duration", Fraction(minutes), _HALF, text, unit, start, end, decimals, factor)


def _step(value: Fraction, tolerance: Fraction) -> Fraction:
    """The span a round number and more covers: up to its next round value (30多, 三十多, thirty-odd: 10; 1个多: 1;
    300多: 100); a number with decimals, its last place."""
    if value.denominator != 1 or value <= 0:
        return 2 * tolerance
    digits = str(value.numerator)
    return Fraction(10 ** (len(digits) - len(digits.rstrip("0"))))


def _token(m: re.Match[str]) -> tuple[str, Any]:
    """One scanned token: ``("q", Quantity)``, ``("bare", (value, tolerance, decimals))`` or ``("clock", None)``."""
    text, group, at, to = m.group(0), m.lastgroup, m.start(), m.end()
    if group == "half_zh":
        half = _minutes(text, 60 * (_number(m["hz"])[0] if m["hz"] else 0) + 30, at, to, "小时", 1, Fraction(60))
        # 半个多小时: half an hour and more, up to the hour
        return "q", half._replace(value=half.value + 15, tolerance=Fraction(15), more=True) \
            if m["hmore"] else half
    if group == "half_en":
        hours = _number(m["he"])[0] if m["he"] else (0 if re.match(r"(?:an?\s+)?half", text) else 1)
        return "q", _minutes(text, 60 * hours + 30, at, to, "hours", 1, Fraction(60))
    if group == "quarter":
        return "q", _minutes(text, 15 * (_number(m["qz"])[0] if m["qz"] else 3 if text[0] == "t" else 1), at, to)
    if group == "percent_zh":
        return "q", _quantity(text, _number(m["pz"]), "%", at, to)
    if group == "hm":  # 1 h 5 min; stated to a tenth of a minute (1 h 1.2 min), read at that precision
        minutes, precision, decimals = _number(m["hm_m"])
        hm = _minutes(text, 60 * _number(m["hm_h"])[0] + minutes, at, to, decimals=decimals)
        if m["hm_more"]:  # 1小时20多分钟: 80 to 90 minutes
            step = _step(minutes, precision)
            return "q", hm._replace(value=hm.value + step / 2, tolerance=step / 2, more=True)
        return "q", hm._replace(tolerance=min(precision, _HALF))
    if group == "km_m":
        return "q", Quantity("distance", Fraction(int(m["kk"]) * 1000 + int(m["kmm"])), _HALF, text, "m", at, to)
    if group == "zh_decimal":
        return "q", _quantity(text, _number(m["zd"]), m["zdu"], at, to)
    if group == "q":
        value, tolerance, decimals = _number(m["n"])
        unit = m["u"] if m["u"].isalpha() or m["u"] in _UNITS else re.sub(r"\s+", " ", m["u"])
        if m["scale"] and m["scale"].startswith("华氏") and _UNITS[unit][0] == "temperature":
            unit = "华氏度"  # 华氏61度: Fahrenheit named before the number
        if not m["more"]:
            signed = -value if m["neg"] or m["below"] else value
            return "q", _quantity(text, (signed, tolerance, decimals), unit, at, to)
        step = _step(value, tolerance)
        q = _quantity(text, (value + step / 2, step / 2, decimals), unit, at, to)  # 30多分钟, 30-odd minutes: 30 to 40
        return "q", q._replace(tolerance=step / 2 * _UNITS[unit][1], more=True)
    if group == "bare":
        return "bare", _number(text)
    return "clock", None


def _standing_alone(number: str) -> bool:
    """Whether a bare number joined to no quantity still reads as an amount: digits, Chinese numerals of two
    characters or more (三十; not the 一 of 之一), English number words but "one" (the fastest one)."""
    return number.lstrip("-−")[:1].isdigit() or len(number) >= 2 and number[0] in _ZH_DIGIT or \
        number[0] in "十百千" or number[:1].isascii() and number.isalpha() and number != "one" or " " in number


def _lowered(text: str) -> str:
    """``text`` in lower case, character for character (spans stay those of ``text``)."""
    lowered = text.lower()
    if len(lowered) == len(text):
        return lowered
    return "".join(low if len(low := ch.lower()) == 1 else ch for ch in text)


@lru_cache(maxsize=1024)
def _read(text: str) -> tuple[tuple[Quantity, ...], tuple[tuple[int, int], ...]]:
    """The quantities ``text`` states and the spans of every number read (as a quantity, a time of day or a date)."""
    text = _lowered(text)
    tokens: list[tuple[int, int, str, Any]] = []
    for m in _scan(text):
        if m.lastgroup == "clock" and ":" in m.group(0) and _LABEL.search(text[max(0, m.start() - 12):m.start()]):
            # 路线2：31 is no time of day
            after = m.start() + m.group(0).index(":") + 1
            minutes = text[after:after + 2].rstrip(":")  # the digits after the first colon (Ⅻ1:12:30 holds 12)
            tokens.append((after, after + len(minutes), "bare", _number(minutes)))
        else:
            tokens.append((m.start(), m.end(), *_token(m)))
    out: list[Quantity] = []
    read = [(start, end) for start, end, kind, _ in tokens if kind != "bare"]

    def close(run: list[int]) -> None:
        carriers = [i for i in run if tokens[i][2] == "q"]
        for i in run:
            start, end, kind, payload = tokens[i]
            if kind == "q":
                out.append(payload)
            elif carriers:  # read in the unit of the nearest quantity on each side: "25 or 30 min" (the next one),
                # "32.2 km, or 16.8, 34 min" (the one it is offered against, and the next): each reading is a claim
                before = [c for c in carriers if c < i]
                after = [c for c in carriers if c > i]
                units = dict.fromkeys(tokens[c][3].unit for c in (after[:1] + before[-1:]))
                out.extend(_quantity(text[start:end], payload, unit, start, end) for unit in units)
                read.append((start, end))
            elif _standing_alone(text[start:end]):
                out.append(Quantity("number", payload[0], payload[1], text[start:end], "", start, end, payload[2]))
    run: list[int] = []
    for i, (start, end, kind, _) in enumerate(tokens):
        linkable = kind == "q" or (kind == "bare" and _FOLLOW.match(text, end) is not None
                                   and _LABEL.search(text[max(0, start - 12):start]) is None)
        if run and linkable and _LINK.fullmatch(text, tokens[run[-1]][1], start) is not None:
            run.append(i)
            continue
        close(run)
        run = [i] if linkable else []
    close(run)
    return tuple(out), tuple(read)


def quantities(text: str) -> tuple[Quantity, ...]:
    """Every quantity the read ``text`` states, in order (see the module docstring); spans are those of ``text``."""
    return _read(text)[0]


# a number, then up to four characters (not ASCII, no digit, no clause mark) or one or two English words, then a unit
# word: the shape of an amount (3个多小时, 20几公里, 3 more minutes)
# (a unit after Chinese characters is a Chinese one: 龙华路13金丽城F1层 is an address, no 13 °F)
_AMOUNT_SHAPE = re.compile(rf"(?<![\d.])(?:\d{{31,}}(?:\.\d+)?\s*(?:{_UNIT})|"  # more digits than anyone states
                           rf"\d+(?:\.\d+)?(?:\s*[^\x00-\x7f\d\s，。；：！？、（）]{{1,4}}\s*"
                           rf"(?:{_unit_pattern(n for n in _UNITS if not n[0].isascii())})|"
                           rf"\s+[a-z]+(?:\s+[a-z]+)?\s+(?:{_UNIT})(?![a-z0-9])))")


_DIGITS = re.compile(r"\d+(?:\.\d+)?\s*")
_UNIT_WORD = re.compile(_unit_pattern(_UNITS, guarded=False))


def unread_amounts(text: str) -> tuple[str, ...]:
    """What looks like an amount in the read ``text`` but is read as none: a number, at most four other characters
    and a unit word, where the number is no quantity, time of day or date the reader reads (``3个多小时`` before it
    was read; an unknown spelling between a number and its unit). A claim that cannot be read cannot be verified: each
    suite fails an answer that makes one."""
    lowered = _lowered(text)
    found = []
    read: tuple[tuple[int, int], ...] | None = None
    for m in _AMOUNT_SHAPE.finditer(lowered):
        number = _DIGITS.match(lowered, m.start()).group(0)  # type: ignore[union-attr]
        number_end = m.start() + len(number)
        if _UNIT_WORD.match(lowered, number_end) and max(map(len, number.strip().split("."))) <= 30:
            continue  # a unit right after the number: read as an amount, or (its guard turned it down) a name
        read = _read(text)[1] if read is None else read
        if not any(start <= m.start() < end for start, end in read):
            found.append(text[m.start():m.end()])
    return tuple(found)


def of_kind(text: str, kind: str) -> tuple[Quantity, ...]:
    """The quantities of one kind ``text`` states."""
    return tuple(q for q in quantities(text) if q.kind == kind)
