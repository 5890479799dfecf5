"""Reading MobilePA answers: where a text mentions a spelling, and which quantities it states.

The verifier (``mobility_rewards.mobilepa``) and the task generator read answers with the same rules:
:func:`mentions` / :func:`mention_spans` (where a text names a spelling: number and word boundaries, so
``25 min`` is not found in ``125 min``; denied or conditional mentions — "no rain", "if it rains" — left
out) and :func:`stated_quantities` (every number with a unit an answer states: durations, distances,
temperatures, percentages, in Chinese and English spellings, ranges and lists included), with
:func:`quantity_of` for a gold spelling and :meth:`Quantity.agrees` comparing them at the precision written.
"""

from __future__ import annotations

import dataclasses
import re
import unicodedata
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Iterable

from ..reading import vocabulary
from ..reading.numerals import written_in_digits
from ..reading.text import EN_FAR_DENIAL, ZH_FAR_DENIAL, read_answer


def normalized(text: str) -> str:
    """A text as answers are compared: as the kernel reads it (:func:`mobility_env.reading.text.read_answer`: no
    markdown, Simplified characters), NFKC (full-width digits and signs, ``℃`` → ``°C``), then case-folded."""
    return unicodedata.normalize("NFKC", read_answer(text)).casefold()


_EN_NEGATORS = frozenset({"no", "not", "never", "without", "neither", "nor", "none", "cannot"})
_EN_CONDITIONS = re.compile(r"(?<![a-z])(?:if(?!\s+not?(?![a-z]))|whether|unless|in case)(?![a-z])")
_ZH_NEGATORS = "不没无未别非"
_ZH_NOT_NEGATING = ("不过", "不仅", "不但", "不少", "不久", "不错", "不断", "不同", "不然", "要不", "非常", "无论", "未来",
                    "别的")
_ZH_CONDITIONS = re.compile(r"如果|要是|假如|万一|是否|([^\W\d_])不\1")  # …, 会不会, 堵不堵 (a question)
_CLAUSE = re.compile(r"[,.;:!?()\"“”‘「」『』、。\n]")
_EN_DENIED_AFTER = re.compile(r"\s*(?:(?:is|are|was|were|will|would|does|do|did|has|have)\s+not(?![a-z])|"
                              r"(?:is|are|was|were|will|would|does|do|did|has|have|wo|ca)n['’]t(?![a-z])|"
                              r"(?:is\s+)?(?:not\s+expected|unlikely)(?![a-z]))")


def unasserted(text: str, start: int, end: int | None = None) -> bool:
    """Whether the words around ``text[start:end]``, in its clause (no punctuation between), keep it from being a
    claim: a negator at most two words before ("no rain", "won't be sunny", "not congested"; "if not rain" is an
    alternative, a claim) or at most two characters before in Chinese (不, 没, 无, 未, 别, 非 — not in 不过, 非常,
    未来 …: "不下雨", "没有雾"), a denial bridged to the word ("不太可能出现小雨", "完全没有出现拥堵", "no chance at
    all of rain", "nothing like a storm"), a denial right after in English ("rain is not expected", "rain won't"), or a
    condition or question anywhere before or right after ("if it rains", "whether it will rain", "如果下雨",
    "会不会下雨", "是否下雨", "堵不堵", "下雨的话")."""
    if end is not None:
        while end < len(text) and text[end].isascii() and text[end].isalpha():
            end += 1  # the rest of an inflected word (rains)
        if _EN_DENIED_AFTER.match(text, end) or "的话" in text[end:end + 4]:
            return True  # rain is not expected; 下雨的话 (if it rains)
    ends = [m.end() for m in _CLAUSE.finditer(text, max(0, start - 48), start)]
    begin = ends[-1] if ends else max(0, start - 48)
    clause = text[begin:start]
    words = re.findall(r"[a-z]+(?:['’][a-z]+)?", clause)[-4:]
    for i, word in enumerate(words[-3:], len(words) - min(3, len(words))):
        if (word in _EN_NEGATORS or word.endswith(("n't", "n’t"))) and not (i and words[i - 1] == "if"):
            return True
    for at in range(max(begin, start - 3), start):
        if text[at] in _ZH_NEGATORS and text[at:at + 2] not in _ZH_NOT_NEGATING \
                and text[max(0, at - 1):at + 1] not in _ZH_NOT_NEGATING:
            return True
    if ZH_FAR_DENIAL.search(clause[-8:]) and not any(clause.endswith(w) for w in _ZH_NOT_NEGATING) \
            or EN_FAR_DENIAL.search(clause):
        return True
    around = text[max(begin, start - 2):start + 3]  # 堵不堵 asks; it does not say 堵
    return bool(_EN_CONDITIONS.search(clause) or _ZH_CONDITIONS.search(clause) or _ZH_CONDITIONS.search(around))


def _ascii_alnum(ch: str) -> bool:
    return ch.isascii() and ch.isalnum()


def _bounded(text: str, start: int, end: int, spelling: str) -> bool:
    """The boundary rules of :func:`mentions` for one occurrence of ``spelling`` at ``text[start:end]``."""
    before, after = text[max(0, start - 2):start], text[end:end + 2]
    if spelling[0].isdigit():  # a number: not the tail of a longer one (125, 3.25), nor negative
        last, second = before[-1:], before[-2:-1]
        if last.isdigit() or last == "." and second.isdigit():
            return False
        if last in ("-", "−") and not second.isdigit() or before == "零下" or last == "负":
            return False  # -25, 零下25 (but 20-25 is a range)
    elif _ascii_alnum(spelling[0]) and _ascii_alnum(before[-1:] or " "):
        return False
    if spelling[-1].isdigit():  # nor the head of one (250, 25.5)
        if after[:1].isdigit() or after[:1] == "." and after[1:2].isdigit():  # 250, 25.5
            return False
    elif _ascii_alnum(spelling[-1]) and not _inflected(text, end, spelling[-1], ("",) + _INFLECTIONS):
        return False  # inside a longer word (rainbow); an inflected form is the same word (rains, rainy, jammed)
    return True


_INFLECTIONS = ("s", "es", "y", "ing", "ed", "er", "est", "ier", "iest", "fall", "falls")


def _inflected(text: str, end: int, last: str, suffixes: tuple[str, ...]) -> bool:
    """Whether a word ends at ``end`` with one of ``suffixes`` (its last letter doubled before one: foggy, jammed)."""
    for suffix in suffixes:
        for tail in (suffix, last + suffix) if suffix and suffix[0] in "yie" else (suffix,):
            if text.startswith(tail, end) and not _ascii_alnum(text[end + len(tail):end + len(tail) + 1] or " "):
                return True
    return False


def mention_spans(text: str, spelling: str, *, asserted_only: bool = True) -> list[tuple[int, int]]:
    """Where the normalized ``text`` mentions the normalized ``spelling`` (see :func:`mentions`)."""
    out: list[tuple[int, int]] = []
    if not spelling:
        return out
    start = text.find(spelling)
    while start >= 0:
        end = start + len(spelling)
        if _bounded(text, start, end, spelling) and not (asserted_only and unasserted(text, start, end)):
            out.append((start, end))
        start = text.find(spelling, start + 1)
    if len(spelling) > 3 and spelling.endswith("e") and spelling.isascii() and spelling[:-1].isalpha():
        stem = spelling[:-1]  # haze → hazy, hazier; smoke → smoking
        for m in re.finditer(re.escape(stem), text):
            word_start = m.start() == 0 or not _ascii_alnum(text[m.start() - 1])
            if word_start and _inflected(text, m.end(), "", ("y", "ier", "iest", "ing", "ed")) \
                    and not (asserted_only and unasserted(text, m.start())):
                out.append((m.start(), m.end()))
    return out


def mentions(text: str, spelling: str) -> bool:
    """Whether ``text`` names ``spelling`` (both :func:`normalized`): a spelling that begins or ends with a digit
    only at number boundaries (``25 min`` is not in ``125 min``, ``2.2 km`` not in ``32.2 km``, ``3℃`` not in
    ``-3℃``), one that begins or ends with an ASCII letter only at word boundaries (``rain`` is not in ``rainbow``;
    a plural ``-s`` is the same word), a Chinese one anywhere; an occurrence its clause does not assert
    (:func:`unasserted`: "no rain", "if it rains", "不下雨") is no mention."""
    return bool(mention_spans(normalized(text), normalized(spelling)))


@dataclass(frozen=True)
class Quantity:
    """A number with a unit stated in a text: its ``kind`` (:data:`QUANTITY_KINDS`), its ``value`` in the kind's
    base unit (minutes, metres, °C, %), ``tolerance`` (half the precision it was stated with: ``23.9 km`` is
    23 900 ± 50 m, ``24 km`` 24 000 ± 500 m; durations are read to the minute, so ``1 h`` is 60 ± 0.5 min), its
    ``text`` and its ``unit`` (a key of the unit table: ``km``, ``分钟``). A number standing alone (``or maybe
    30``) has the kind ``"number"``, no unit, and its value as written (:func:`read_in` gives it a unit)."""

    kind: str
    value: Fraction
    tolerance: Fraction
    text: str
    unit: str = ""

    def agrees(self, other: "Quantity") -> bool:
        """Whether both state the same amount at the precisions they were stated with (the two intervals overlap:
        ``23.9 km`` and ``23942 m`` agree, ``26 min`` and ``25 min`` do not)."""
        return self.kind == other.kind and abs(self.value - other.value) < self.tolerance + other.tolerance


QUANTITY_KINDS = ("duration", "distance", "temperature", "percent")
_HALF = Fraction(1, 2)
# unit spelling (normalized) -> (kind, factor to the base unit, offset added before the factor). Distances, durations
# and temperatures are the kernel's vocabulary (mobility_env.reading.vocabulary.units: 里, 英里, 公尺, °F ...), read in
# this reader's base units (metres, minutes, °C); a half hour (个半小时) and days are read elsewhere or not at all here.
_UNITS: dict[str, tuple[str, Fraction, Fraction]] = {}
_GUARDS: dict[str, str] = {}
for _unit in vocabulary.units():
    if _unit.spelling in ("个半小时", "天", "days", "day"):
        continue
    _factor = Fraction(str(_unit.factor)).limit_denominator(1000)
    _name = normalized(_unit.spelling)
    _UNITS[_name] = (_unit.kind, _factor / 60 if _unit.kind == "duration" else _factor, Fraction(_unit.offset))
    _GUARDS[_name] = _unit.guard
for _kind, _factor, _offset, _names in (
        ("duration", Fraction(1), Fraction(0), "′ '"),
        ("temperature", Fraction(1), Fraction(0), "degrees_celsius degree_celsius deg c"),
        ("temperature", Fraction(5, 9), Fraction(-32), "degree_fahrenheit f"),
        ("percent", Fraction(1), Fraction(0), "% percent per_cent"),
        ("speed", Fraction(1), Fraction(0), "km/h kmh kph 公里/小时 公里每小时 千米/小时 mph m/s 米/秒")):
    for _name in _names.split():
        _UNITS[_name.replace("_", " ")] = (_kind, _factor, _offset)


def _unit_pattern(names: Iterable[str]) -> str:
    def one(name: str) -> str:
        tail = "(?![a-z])" if name[-1].isascii() and name[-1].isalpha() else "(?![之钱])" if name == "分" else \
            "(?![a-z0-9])" if name in ("'", "′") else ""
        return re.escape(name).replace(r"\ ", r"\s+") + tail + _GUARDS.get(name, "")
    return "|".join(one(n) for n in sorted(names, key=len, reverse=True))


_ZH_DIGIT = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "俩": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_EN_ONES = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen " \
           "seventeen eighteen nineteen".split()
_EN_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
_ARABIC = r"(?:(?<![\d.])[-−](?=[\d.]))?(?:\d+(?:,\d{3})*(?:\.\d+)?|\.\d+)"
_ZH = "[零〇一二两俩三四五六七八九十百千]+"
_EN = rf"(?<![a-z])(?:(?:{'|'.join(_EN_TENS)})(?:[-\s](?:{'|'.join(_EN_ONES[1:10])}))?|{'|'.join(_EN_ONES)})(?![a-z])"
_NUM = rf"(?:{_ARABIC}|{_ZH}|{_EN})"
_ARTICLE = r"(?<![a-z])an?(?=\s+(?:half|hour|minute|second|kilomet|mile|met|degree))"
_UNIT = _unit_pattern(_UNITS)
_HOURS = _unit_pattern(n for n, u in _UNITS.items() if u[:2] == ("duration", 60))
_MINUTES = _unit_pattern(n for n, u in _UNITS.items() if u[:2] == ("duration", 1) and n not in ("'", "′"))
_SCAN = re.compile("|".join((
    rf"(?P<half_zh>(?:(?P<hz>\d+|{_ZH})[个個]?)?半[个個]?(?:小时|小時|钟头|鐘頭))",
    rf"(?P<half_en>(?<![a-z])(?:half\s+an?\s+hour|an?\s+half[-\s]hour|half-hour|an?\s+hour\s+and\s+a\s+half)|"
    rf"(?P<he>{_NUM}|{_ARTICLE})\s+(?:and\s+a\s+half\s+hours?|hours?\s+and\s+a\s+half))",
    rf"(?P<quarter>(?P<qz>{_ZH}|\d+)刻钟|(?:a\s+)?quarter\s+of\s+an\s+hour|three\s+quarters\s+of\s+an\s+hour)",
    rf"(?P<percent_zh>百分之(?P<pz>{_ZH}(?:点[零〇一二三四五六七八九]+)?|{_ARABIC}))",
    rf"(?P<hm>(?P<hm_h>{_NUM}|{_ARTICLE})\s*(?:{_HOURS})\s*(?:and\s+|又|零|,\s*)?(?P<hm_m>{_NUM})\s*(?:{_MINUTES}))",
    r"(?P<km_m>(?P<kk>\d+)\s*(?:公里|千米|km(?![a-z]))\s*零?\s*(?P<kmm>\d+)\s*(?:米|m(?![a-z])))",
    rf"(?P<zh_decimal>(?P<zd>{_ZH}点[零〇一二三四五六七八九]+)\s*(?P<zdu>公里|千米|米|摄氏度|度|%))",
    rf"(?P<clock>\d{{4}}[-/.]\d{{1,2}}[-/.]\d{{1,2}}(?!\d)|\d{{1,2}}:\d{{2}}(?::\d{{2}})?(?!\d)(?!\s*-?\s*(?:{_UNIT}))|"
    rf"(?:\d{{1,2}}|[零〇一二两三四五六七八九十]{{1,3}})点(?:半|整|钟|(?:\d{{1,2}}|[零〇一二三四五六七八九十]{{1,3}})分(?![钟之钱]))?)",
    rf"(?P<q>(?P<neg>零下|负|minus\s+)?(?P<scale>华氏\s*)?(?P<n>{_NUM}|{_ARTICLE})"
    rf"(?P<more>多|余|来|-odd|-something)?\s*-?\s*(?P<u>{_UNIT}))",
    rf"(?P<bare>{_NUM})")))
# range and list words, and the words that offer a second value as a possibility (or maybe 30, 也可能30)
_LINK = re.compile(r"\s*(?:[,、/~〜\-–—±]|\+/?-|or|to|and|或者?|到|至|和|与|及)?\s*(?:(?:or|and|或者?|到)\s*)?"
                   r"(?:(?:maybe|perhaps|possibly)\s+|(?:也|还)?(?:可能|或许|也许)(?:是|要|会)?\s*)?")
_FOLLOW = re.compile(r"\s*(?:$|[,、/;:.。!?)~〜\-–—±+]|(?:or|to|and)(?![a-z])|或|到|至|和|与|及)")
_LABEL = re.compile(r"(?:(?:route|option|plan|path|line|no\.?|number|#|bus|step|stop|level|force|index|aqi|"
                    r"(?<![a-z])(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec|january|february|march|"
                    r"april|june|july|august|september|october|november|december)\.?|第|路线|方案|线路|号线|线|[¥$€£])\s*"
                    r"|[a-z])$")


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


def _number(text: str) -> tuple[Fraction, Fraction]:
    """A number's value and half its precision (``23.9`` → 23.9 ± 0.05; words and Chinese numerals: ± 0.5)."""
    text = re.sub(r"\s+", " ", text.strip())
    if text[:1].isdigit() or text[:1] in "-−.":
        digits = text.replace(",", "").replace("−", "-")
        places = len(digits.partition(".")[2])
        return Fraction(digits), Fraction(1, 2 * 10 ** places)
    if text in ("a", "an"):
        return Fraction(1), _HALF
    if text[0] in _ZH_DIGIT or text[0] in "十百千":
        places = len(text.partition("点")[2])
        return _zh_value(text), Fraction(1, 2 * 10 ** places)
    head, _, ones = text.replace("-", " ").partition(" ")
    value = _EN_ONES.index(head) if head in _EN_ONES else 20 + 10 * _EN_TENS.index(head)
    return Fraction(value + (_EN_ONES.index(ones) if ones else 0)), _HALF


def _reading(kind: str, factor: Fraction, offset: Fraction, value: Fraction,
             tolerance: Fraction) -> tuple[str, Fraction, Fraction]:
    tolerance = tolerance * factor
    return kind, (value + offset) * factor, min(tolerance, _HALF) if kind == "duration" else tolerance


def _quantity(text: str, value: Fraction, tolerance: Fraction, unit: str) -> Quantity:
    return Quantity(*_reading(*_UNITS[unit], value, tolerance), text, unit)


def read_in(number: Quantity, unit: str) -> Quantity:
    """A number standing alone (kind ``"number"``) read in ``unit`` (``30`` in ``km``: 30 000 ± 500 m)."""
    return _quantity(number.text, number.value, number.tolerance, unit)


def _minutes(text: str, minutes: Fraction | int, unit: str = "min") -> Quantity:
    return Quantity("duration", Fraction(minutes), _HALF, text, unit)


def _token(m: re.Match[str]) -> tuple[str, Any]:
    """One scanned token: ``("q", Quantity)``, ``("bare", (value, tolerance))`` or ``("clock", None)``."""
    text, group = m.group(0), m.lastgroup
    if group == "half_zh":
        return "q", _minutes(text, 60 * (_number(m["hz"])[0] if m["hz"] else 0) + 30, "小时")
    if group == "half_en":
        hours = _number(m["he"])[0] if m["he"] else (0 if re.match(r"(?:an?\s+)?half", text) else 1)
        return "q", _minutes(text, 60 * hours + 30, "hours")
    if group == "quarter":
        return "q", _minutes(text, 15 * (_number(m["qz"])[0] if m["qz"] else 3 if text[0] == "t" else 1))
    if group == "percent_zh":
        return "q", _quantity(text, *_number(m["pz"]), "%")
    if group == "hm":  # 1 h 5 min; stated to a tenth of a minute (1 h 1.2 min), read at that precision
        minutes, precision = _number(m["hm_m"])
        return "q", dataclasses.replace(_minutes(text, 60 * _number(m["hm_h"])[0] + minutes),
                                        tolerance=min(precision, _HALF))
    if group == "km_m":
        return "q", Quantity("distance", Fraction(int(m["kk"]) * 1000 + int(m["kmm"])), _HALF, text, "m")
    if group == "zh_decimal":
        return "q", _quantity(text, *_number(m["zd"]), m["zdu"])
    if group == "q":
        value, tolerance = _number(m["n"])
        unit = re.sub(r"\s+", " ", m["u"])
        if m["scale"] and _UNITS[unit][0] == "temperature":
            unit = "华氏度"  # 华氏61度: Fahrenheit named before the number
        if not m["more"]:
            return "q", _quantity(text, -value if m["neg"] else value, tolerance, unit)
        step = Fraction(10 ** (len(m["n"]) - len(m["n"].rstrip("0")))) if m["n"].isdigit() else 2 * tolerance
        q = _quantity(text, value + step / 2, step / 2, unit)  # 30多分钟, 30-odd minutes: 30 to 40
        return "q", dataclasses.replace(q, tolerance=step / 2 * _UNITS[unit][1])
    if group == "bare":
        return "bare", _number(text)
    return "clock", None


def _standing_alone(number: str) -> bool:
    """Whether a bare number joined to no quantity still reads as an amount: digits, Chinese numerals of two
    characters or more (三十; not the 一 of 之一), English number words but "one" (the fastest one)."""
    return number.lstrip("-−")[:1].isdigit() or len(number) >= 2 and number[0] in _ZH_DIGIT or \
        number[0] in "十百千" or number[:1].isascii() and number.isalpha() and number != "one" or " " in number


def stated_quantities(text: str) -> list[Quantity]:
    """Every quantity ``text`` states (:func:`normalized` first), in order: a number with a unit of
    :data:`QUANTITY_KINDS` (``25分钟``, ``1 h 5 min`` = 65 min, ``一个半小时``, ``half an hour``, ``23.9 km``,
    ``1公里200米``, ``二十三点九公里``, ``16°C``, ``61°F``, ``零下3度``, ``40%``, ``百分之四十``); a bare number
    joined to one by range or list words shares its unit (``25–30 min``, ``25或30分钟``, ``10, 15, 20 min``,
    ``25 min ± 5`` state each value; between two quantities it is read in the units of both: each reading is a
    claim); ``30多分钟`` / ``30-odd minutes`` is 30 to 40 minutes; a bare number joined
    to none (``… or maybe 30``, ``也可能三十``; see :func:`_standing_alone`) is a ``"number"``; a speed
    (``57 km/h``) is a ``"speed"``, not a distance. A number that labels something (``route 1``, ``路线1``,
    ``G4``, ``¥9``, ``level 3``, ``Nov 23``) or that another word follows (``7个红绿灯``, ``3 transfers``) is
    none of these, nor are times of day and dates (``8:30``, ``8点30分``, ``2025-11-23``)."""
    # the kernel's numerals: one reading of 一万五千米, 俩小时 for both suites
    text = written_in_digits(normalized(text), min_run=2)
    tokens: list[tuple[int, int, str, Any]] = []
    for m in _SCAN.finditer(text):
        label = _LABEL.search(text[max(0, m.start() - 12):m.start()])
        if m.lastgroup == "clock" and label is not None and ":" in m.group(0):  # 路线2：31 is no time of day
            after = m.start() + m.group(0).index(":") + 1
            tokens.append((after, m.end(), "bare", _number(text[after:m.end()])))
        else:
            tokens.append((m.start(), m.end(), *_token(m)))
    out: list[Quantity] = []

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
                value, tolerance = payload
                out.extend(_quantity(text[start:end], value, tolerance, unit) for unit in units)
            elif _standing_alone(text[start:end]):
                out.append(Quantity("number", payload[0], payload[1], text[start:end]))
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
    return out


def quantity_of(spelling: str) -> Quantity | None:
    """The one quantity a spelling states (``25分钟``, ``1 h 5 min``, ``23.9 km``), or None (a clock time, a
    phone number, a word)."""
    found = stated_quantities(spelling)
    whole = len(found) == 1 and normalized(found[0].text).strip() == normalized(spelling).strip()
    return found[0] if whole and found[0].kind in QUANTITY_KINDS else None
