"""Every claim an answer makes, read without looking at the evidence.

The verifiers (:mod:`mobility_rewards.verify`, :mod:`mobility_rewards.verify_route`) compare *all* of these
with the replayed evidence — never just the first one — so an answer that states the right
value and then a wrong one, or hedges between two, fails.

:func:`normalize_answer` first folds full-width characters (NFKC), Chinese decimals
(``十二点三公里`` -> ``12.3公里``), Chinese numerals (``一百零五`` -> ``105``), ``1h 44m`` ->
``1h44min``, ``Line 2`` -> ``2号线`` and ``Bus 206`` -> ``206路``. Then, in Chinese and English:

* :func:`clock_claims` — clock times with their period: ``凌晨5点30分`` (05:30, definite),
  ``下午3点`` (15:00), ``17:30`` / ``05:30`` (24-hour, definite), ``3pm``; ``5点30分`` or
  ``5:30`` without a period is *ambiguous* (compared on a 12-hour dial). Each carries its
  role from the words around it: ``departure`` (出发/动身/leave/depart) or ``arrival``
  (到达/抵达/arrive/前).
* :func:`money_claims` (元/块/yuan/RMB/¥, and 免费/不收费/no tolls = 0), :func:`light_claims`
  (红绿灯/traffic lights), :func:`humidity_claims`;
* :func:`weather_claims` — conditions (晴, 多云, 阴, 小雨 … 暴雨, 阵雨, 雷阵雨, 雪 …, 雾, 霾,
  sunny, light rain, showers, hazy …) with negation (不是/没有/不会/not/no/isn't …);
* :func:`traffic_claims` — traffic states with negation and everyday phrases
  (一点都不堵, 有点堵, 走走停停, no congestion, heavy traffic …) as the set of states each
  phrase allows (1 畅通, 2 缓行, 3 拥堵, 4 严重拥堵);
* :func:`highway_claims` — recommendations to take or to avoid highways;
* :func:`hedged_quantities` — two values for one quantity joined by 或/或者/还是/or, or a
  range (``12到15公里``, ``12-15 km``).

Distances, durations and temperatures come from :mod:`mobility_rewards.units` (all of them, in order).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import cast

from mobility_env.answer_text import EN_FAR_DENIAL, ZH_FAR_DENIAL

from .units import arabize, spelled_numbers

NEGATION = r"(?:不是|不会|不太|不算|没有|没|无|并非|并不|不)"
_EN_NEGATION = r"(?:not|no|isn't|isnt|won't|wont|without|never|aren't)"

# ------------------------------------------------------------------ normalisation
_CN_DIGIT = "零〇一二两三四五六七八九"
_CN_ANY = "零〇一二两三四五六七八九十百千万"
_CN_DECIMAL = re.compile(rf"([{_CN_ANY}]+)点([{_CN_DIGIT}]+)(?=\s*(?:公里|千米|米|个?小时|钟头|km|度|℃|元|块|万))")
_DIGIT_OF = {c: str(i) for i, c in enumerate("零一二三四五六七八九")} | {"〇": "0", "两": "2"}
_HM = re.compile(r"(\d+(?:\.\d+)?)\s*h(?:ours?|rs?)?\s*(\d+)\s*m(?:in(?:ute)?s?)?(?![a-z])", re.IGNORECASE)
_LINE_EN = re.compile(r"\b(?:metro\s+|subway\s+)?line\s*(?:no\.?\s*)?(\d+)\b", re.IGNORECASE)
_BUS_EN = re.compile(r"\bbus\s*(?:no\.?\s*|route\s*)?(\d+)\b", re.IGNORECASE)


def _decimal(match: re.Match[str]) -> str:
    whole = arabize(match.group(1))
    return f"{whole}." + "".join(_DIGIT_OF.get(c, c) for c in match.group(2))


@lru_cache(maxsize=512)
def normalize_answer(text: str) -> str:
    """The answer with numerals, units and line names in one spelling (see the module docstring)."""
    text = spelled_numbers(unicodedata.normalize("NFKC", text if isinstance(text, str) else ""))
    text = _CN_DECIMAL.sub(_decimal, text)
    text = arabize(text)
    text = _HM.sub(lambda m: f"{m.group(1)}h{m.group(2)}min", text)
    text = _LINE_EN.sub(lambda m: f"{m.group(1)}号线", text)
    return _BUS_EN.sub(lambda m: f"{m.group(1)}路", text)


# ------------------------------------------------------------------ clock times
@dataclass(frozen=True)
class ClockClaim:
    """A stated clock time: minutes after midnight, whether its period is known, its role."""

    minutes: int
    definite: bool  # a period word, am/pm, or an unambiguous 24-hour time
    role: str  # "departure", "arrival" or ""
    start: int
    end: int


_PERIODS = {"凌晨": 0, "早上": 0, "早晨": 0, "清晨": 0, "上午": 0, "中午": 12, "下午": 12, "傍晚": 12,
            "晚上": 12, "夜里": 12, "夜间": 12, "今晚": 12, "明早": 0, "明晚": 12, "半夜": 0, "午夜": 0}
_PERIOD = "|".join(sorted(_PERIODS, key=len, reverse=True))
_CLOCK_COLON = re.compile(rf"({_PERIOD})?\s*(\d{{1,2}})\s*[:：]\s*(\d{{2}})(?!\d)(?:\s*([ap])\.?\s?m(?![a-z])\.?)?",
                          re.IGNORECASE)
_CLOCK_DIAN = re.compile(rf"({_PERIOD})?\s*(\d{{1,2}})\s*点(?![都也儿])(?!\d+\s*(?:公里|千米|米|km|度|元))"
                         rf"\s*(整|半|一刻|三刻|(\d{{1,2}})\s*分?)?")
_CLOCK_AMPM = re.compile(r"(?<![\d.])(\d{1,2})(?:\s*[:.]?\s*(\d{2}))?\s*([ap])\.?\s?m(?![a-z])\.?", re.IGNORECASE)
_DEPARTURE_WORDS = re.compile(r"出发|动身|出门|启程|离开|走|开车|leave|leaving|depart|set off|head out|start", re.I)
_ARRIVAL_WORDS = re.compile(r"到达|抵达|到|前|赶到|arriv|reach|get there|be there", re.I)


def _hour24(period: str | None, hour: int) -> int:
    if period in ("中午",):
        return hour + 12 if hour < 6 else hour
    if period in ("凌晨", "半夜", "午夜"):
        return 0 if hour == 12 else hour
    if period and _PERIODS[period] == 12 and hour < 12:
        return hour + 12
    if period and _PERIODS[period] == 0 and hour == 12:
        return 0 if period != "上午" else 12
    return hour


def _role(text: str, start: int, end: int) -> str:
    """``departure``/``arrival`` from the nearest cue word in the same clause (after the time first)."""
    after = re.split(r"[，,。;；!！?？\n]", text[end:end + 10])[0]
    before = re.split(r"[，,。;；!！?？\n]", text[max(0, start - 10):start])[-1]
    dep, arr = _DEPARTURE_WORDS.search(after), _ARRIVAL_WORDS.search(after)
    if dep or arr:
        return "departure" if dep and (not arr or dep.start() <= arr.start()) else "arrival"
    dep_ends = [m.end() for m in _DEPARTURE_WORDS.finditer(before)]
    arr_ends = [m.end() for m in _ARRIVAL_WORDS.finditer(before)]
    if dep_ends or arr_ends:
        return "departure" if dep_ends and (not arr_ends or max(dep_ends) >= max(arr_ends)) else "arrival"
    return ""


@lru_cache(maxsize=512)
def clock_claims(text: str) -> tuple[ClockClaim, ...]:
    """Clock times in ``text`` (already :func:`normalize_answer`-ed or raw), in order."""
    text = normalize_answer(text)
    found: list[ClockClaim] = []
    taken: list[tuple[int, int]] = []

    def free(start: int, end: int) -> bool:
        return not any(s < end and start < e for s, e in taken)

    for match in _CLOCK_COLON.finditer(text):
        period, hour, minute, ampm = match.group(1), int(match.group(2)), int(match.group(3)), match.group(4)
        if hour > 24 or minute > 59:
            continue
        if ampm:
            hour = (hour % 12) + (12 if ampm.lower() == "p" else 0)
            definite = True
        elif period:
            hour, definite = _hour24(period, hour), True
        else:
            definite = hour >= 13 or hour == 0 or match.group(2).startswith("0")
        taken.append(match.span())
        found.append(ClockClaim((hour % 24) * 60 + minute, definite, "", *match.span()))
    for match in _CLOCK_AMPM.finditer(text):
        if not free(*match.span()):
            continue
        hour, minute = int(match.group(1)), int(match.group(2) or 0)
        if hour > 12 or minute > 59:
            continue
        hour = (hour % 12) + (12 if match.group(3).lower() == "p" else 0)
        taken.append(match.span())
        found.append(ClockClaim(hour * 60 + minute, True, "", *match.span()))
    for match in _CLOCK_DIAN.finditer(text):
        if not free(*match.span()):
            continue
        period, hour, extra = match.group(1), int(match.group(2)), match.group(3) or ""
        minute = {"半": 30, "一刻": 15, "三刻": 45, "整": 0}.get(extra, int(match.group(4)) if match.group(4) else 0)
        if hour > 24 or minute > 59:
            continue
        definite = bool(period) or hour >= 13 or hour == 0
        hour = _hour24(period, hour) if period else hour
        taken.append(match.span())
        found.append(ClockClaim((hour % 24) * 60 + minute, definite, "", *match.span()))
    found.sort(key=lambda c: c.start)
    return tuple(ClockClaim(c.minutes, c.definite, _role(text, c.start, c.end), c.start, c.end) for c in found)


def clock_matches(claim: ClockClaim, expected: float, expected_definite: bool, slack: float) -> bool:
    """Does ``claim`` state ``expected`` (minutes)? On a 24-hour dial when both are definite."""
    period = 1440 if claim.definite and expected_definite else 720
    diff = abs(claim.minutes - expected) % period
    return min(diff, period - diff) <= slack


# ------------------------------------------------------------------ money, lights, humidity
_MONEY = re.compile(r"(?:¥|￥|RMB\s*)?(\d+(?:\.\d+)?)\s*(?:元|块钱|块|yuan|RMB|CNY)", re.IGNORECASE)
_MONEY_PREFIX = re.compile(r"(?:¥|￥|RMB|CNY)\s*(\d+(?:\.\d+)?)", re.IGNORECASE)
_NO_TOLL = re.compile(r"免费|不收费|无收费|没有收费|零收费|无过路费|没有过路费|不用交过路费|toll[- ]free|no tolls?|free of (?:charge|tolls)",
                      re.IGNORECASE)


@dataclass(frozen=True)
class NumberClaim:
    value: float
    start: int


@lru_cache(maxsize=512)
def money_claims(text: str) -> tuple[NumberClaim, ...]:
    """Amounts of money (tolls, fares, taxi costs) in yuan; "free / no tolls" is 0."""
    text = normalize_answer(text)
    found = {m.start(): float(m.group(1)) for m in _MONEY.finditer(text)}
    for m in _MONEY_PREFIX.finditer(text):
        if not any(abs(m.start() - s) <= 4 for s in found):
            found[m.start()] = float(m.group(1))
    for m in _NO_TOLL.finditer(text):
        found.setdefault(m.start(), 0.0)
    return tuple(NumberClaim(v, s) for s, v in sorted(found.items()))


_LIGHTS = re.compile(r"(\d+)\s*(?:个|处)?\s*(?:红绿灯|信号灯|traffic lights?|signals?)"
                     r"|(?:红绿灯|信号灯)\s*(?:约|大约|共|有)?\s*(\d+)\s*(?:个|处)?",
                     re.IGNORECASE)


def _number_claims(pattern: re.Pattern[str], text: str) -> tuple[NumberClaim, ...]:
    """The number in group 1 or 2 of each match of ``pattern`` in the normalised ``text``."""
    text = normalize_answer(text)
    return tuple(NumberClaim(float(m.group(1) or m.group(2)), m.start()) for m in pattern.finditer(text))


@lru_cache(maxsize=512)
def light_claims(text: str) -> tuple[NumberClaim, ...]:
    """Stated numbers of traffic lights."""
    return _number_claims(_LIGHTS, text)


_HUMIDITY = re.compile(r"(?:湿度|humidity)\D{0,6}?(\d+(?:\.\d+)?)\s*%|(\d+(?:\.\d+)?)\s*%\s*(?:的)?\s*(?:湿度|humidity)",
                       re.IGNORECASE)


@lru_cache(maxsize=512)
def humidity_claims(text: str) -> tuple[NumberClaim, ...]:
    """Stated relative humidities (%)."""
    return _number_claims(_HUMIDITY, text)


# ------------------------------------------------------------------ hedges
_UNIT_BASE: dict[str, tuple[tuple[str, float], ...]] = {
    "distance": (("公里", 1000.0), ("千米", 1000.0), ("km", 1000.0), ("kilomet", 1000.0), ("米", 1.0), ("m", 1.0)),
    "duration": (("个小时", 3600.0), ("小时", 3600.0), ("钟头", 3600.0), ("hour", 3600.0), ("hr", 3600.0), ("h", 3600.0),
                 ("分", 60.0), ("min", 60.0), ("秒", 1.0), ("sec", 1.0)),
    "money": (("元", 1.0), ("块", 1.0), ("yuan", 1.0)),
}
_UNIT_RE = {
    "distance": r"公里|千米|kilomet(?:er|re)s?|km|米|met(?:er|re)s?|m(?![a-z])",
    "duration": r"个?小时|钟头|分钟|分(?!之)|秒钟?|hours?|hrs?|h(?![a-z])|minutes?|mins?|seconds?|secs?",
    "money": r"元|块钱|块|yuan",
}
_OR = r"(?:或者|或是|或|还是|要么|\band\s*/\s*or\b|\bor\s*/\s*and\b|\bor\b)"
_RANGE = r"(?:到|至|~|～|-|–|—|\bto\b)"


def _unit_size(kind: str, unit: str) -> float:
    unit = unit.lower()
    for prefix, size in _UNIT_BASE[kind]:
        if unit.startswith(prefix):
            return size
    return 1.0


@lru_cache(maxsize=512)
def hedged_quantities(text: str) -> tuple[tuple[str, float, float], ...]:
    """``(kind, value, other value)`` for each quantity stated as a range or as alternatives.

    ``12到15公里``, ``12-15 km``, ``12.3公里或20公里``, ``35 or 50 minutes``, ``35 and/or 50 minutes``,
    ``between 35 and 50 minutes``; kinds are
    ``distance`` (m), ``duration`` (s) and ``money`` (yuan). Two spellings of one value
    (``2小时或120分钟``) are not a hedge.
    """
    text = normalize_answer(text)
    found = []
    for kind, units in _UNIT_RE.items():
        pattern = (rf"(?<![\d.:])(\d+(?:\.\d+)?)\s*({units})?\s*[，,]?\s*(?:{_OR}|{_RANGE})\s*(?:是\s*)?"
                   rf"(?:约|大约|大概|about\s)?\s*(\d+(?:\.\d+)?)\s*({units})|"
                   rf"\bbetween\s+(\d+(?:\.\d+)?)\s*({units})?\s*and\s+(\d+(?:\.\d+)?)\s*({units})")
        for match in re.finditer(pattern, text, re.IGNORECASE):
            at = 0 if match.group(3) is not None else 4  # the between-and alternative numbers its groups 5-8
            low, low_unit, high, high_unit = (cast(str, match.group(at + i)) for i in range(1, 5))
            if re.search(r"\d\s*[:：]\s*$", text[:match.start(at + 1)]):
                continue  # "11:30-12:00" is a clock range, judged by the clock checks
            second = _unit_size(kind, high_unit)
            first = _unit_size(kind, low_unit) if low_unit else second
            a, b = float(low) * first, float(high) * second
            if abs(a - b) > 0.05 * max(abs(a), abs(b), 1e-9):
                found.append((kind, a, b))
    return tuple(found)


# ------------------------------------------------------------------ weather conditions
#: canonical condition -> (family, spellings). A family's generic label (雨, 雪, ...) is
#: compatible with every label of the family.
WEATHER_LABELS: dict[str, tuple[str, tuple[str, ...]]] = {
    "晴": ("sun", ("晴朗", "晴天", "晴", "sunny", "clear sky", "clear skies", "clear", "fine weather", "fair")),
    "少云": ("cloud", ("少云", "晴间多云", "partly cloudy", "mostly sunny", "few clouds")),
    "多云": ("cloud", ("多云", "cloudy", "mostly cloudy")),
    "阴": ("overcast", ("阴天", "阴", "overcast", "gloomy")),
    "雨": ("rain", ("下雨", "有雨", "降雨", "雨天", "雨", "rainy", "rain", "raining", "precipitation")),
    "小雨": ("rain", ("毛毛雨", "小雨", "细雨", "light rain", "drizzle", "drizzling")),
    "中雨": ("rain", ("中雨", "moderate rain")),
    "大雨": ("rain", ("大雨", "heavy rain")),
    "暴雨": ("rain", ("特大暴雨", "大暴雨", "暴雨", "rainstorm", "torrential rain", "downpour")),
    "阵雨": ("rain", ("阵雨", "showers", "shower", "rain showers")),
    "雷阵雨": ("rain", ("雷阵雨", "雷雨", "thundershowers", "thundershower", "thunderstorms", "thunderstorm")),
    "冻雨": ("rain", ("冻雨", "freezing rain")),
    "雨夹雪": ("sleet", ("雨夹雪", "sleet")),
    "雪": ("snow", ("下雪", "有雪", "降雪", "雪天", "雪", "snowy", "snow", "snowing", "snowfall")),
    "小雪": ("snow", ("小雪", "light snow", "flurries")),
    "中雪": ("snow", ("中雪", "moderate snow")),
    "大雪": ("snow", ("大雪", "heavy snow")),
    "暴雪": ("snow", ("暴雪", "blizzard", "snowstorm")),
    "阵雪": ("snow", ("阵雪", "snow showers")),
    "雾": ("fog", ("大雾", "浓雾", "雾", "foggy", "fog", "mist", "misty")),
    "霾": ("haze", ("雾霾", "霾", "hazy", "haze", "smog", "smoggy")),
    "沙尘": ("dust", ("沙尘暴", "扬沙", "浮尘", "沙尘", "sandstorm", "dust", "dusty", "sand")),
    "大风": ("wind", ("大风", "gale", "strong wind")),
}
GENERIC_WEATHER = {"雨": "rain", "雪": "snow", "雾": "fog", "霾": "haze", "沙尘": "dust"}
_WEATHER_SPELLING = {s: label for label, (_, spellings) in WEATHER_LABELS.items() for s in spellings}
_NOT_WEATHER = re.compile(r"雨伞|雨具|雨衣|雨靴|雨刷|雪糕|雪碧|雪花啤酒|阴凉|晴雨|clearly|clear of|all clear|"
                          r"sandwich|thunderbird|rainbow|fair enough|snowboard", re.IGNORECASE)


def _spelling_pattern(spellings: list[str]) -> re.Pattern[str]:
    parts = []
    for s in sorted(spellings, key=len, reverse=True):
        parts.append(rf"\b{re.escape(s)}\b" if s.isascii() else re.escape(s))
    return re.compile("|".join(parts), re.IGNORECASE)


_WEATHER_RE = _spelling_pattern(list(_WEATHER_SPELLING))
_CN_NEG_BEFORE = re.compile(rf"{NEGATION}(?:是|会|再|下|有|太|怎么|见|出现|算|像|用)?$")
_EN_NEG_BEFORE = re.compile(rf"\b{_EN_NEGATION}\s+(?:be\s+|expect\s+|any\s+|a\s+|very\s+)?(?:\w+\s+)?$", re.IGNORECASE)


@dataclass(frozen=True)
class LabelClaim:
    label: str
    negated: bool
    start: int
    end: int


_CLAUSE_NEGATION = re.compile(r"(不是|并非|并不是|没有|不会|\bnot\b|\bisn't\b|\bwon't\b|\bno\b)(?!.*(?:而是|是|but|instead|rather))",
                              re.IGNORECASE)


# Denials after the word (下雨的可能性不大, rain is unlikely / not expected); those bridged to it before (不太可能出现小雨,
# no chance at all of rain) are mobility_env.answer_text's, shared with MobilePA's verifier.
_DENIED_AFTER = re.compile(r"(?:\s+(?:traffic|conditions?|weather|skies|showers?))?"
                           r"\s*(?:(?:is|are|was|will\s+be|looks?|seems?)\s+(?:unlikely|not\s+(?:expected|likely))\b|"
                           r"的?可能性?(?:不大|很小|较小|极小|很低|不高|微乎其微))", re.IGNORECASE)


def _far_denied(text: str, start: int, end: int | None) -> bool:
    """Is ``text[start:end]`` denied from a distance (不太可能出现X, no chance at all of X, X的可能性不大, X is unlikely)?"""
    return bool(ZH_FAR_DENIAL.search(text[max(0, start - 9):start])
                or EN_FAR_DENIAL.search(text[max(0, start - 40):start])
                or end is not None and _DENIED_AFTER.match(text, end))


def _negated(text: str, start: int, end: int | None = None) -> bool:
    """Is the label at ``text[start:end]`` negated: right before it, bridged to it (不太可能出现, no chance at all
    of), denied after it (的可能性不大, is unlikely), or by 不是/没有/not earlier in its clause?"""
    before = text[max(0, start - 4):start]
    if _CN_NEG_BEFORE.search(before) and not before.endswith(("不仅", "无论")):
        return True
    if _EN_NEG_BEFORE.search(text[max(0, start - 24):start]):
        return True
    if _far_denied(text, start, end):
        return True
    clause = re.split(r"[，,。;；!！?？\n]", text[max(0, start - 16):start])[-1]
    return bool(_CLAUSE_NEGATION.search(clause))


@lru_cache(maxsize=512)
def weather_claims(text: str) -> tuple[LabelClaim, ...]:
    """Weather conditions the text states (canonical labels of :data:`WEATHER_LABELS`), in order."""
    text = normalize_answer(text)
    masked = _NOT_WEATHER.sub(lambda m: " " * len(m.group(0)), text)
    claims = []
    for match in _WEATHER_RE.finditer(masked):
        label = _WEATHER_SPELLING.get(match.group(0)) or _WEATHER_SPELLING[match.group(0).lower()]
        claims.append(LabelClaim(label, _negated(masked, match.start(), match.end()), match.start(), match.end()))
    return tuple(claims)


def weather_labels_of(condition: str) -> frozenset[str]:
    """Canonical labels of an evidence condition (``小雨转多云`` -> {小雨, 多云})."""
    labels = set()
    for part in re.split(r"转|到|~|～|/|、|,|，", condition or ""):
        part = part.strip()
        if not part:
            continue
        found = [c.label for c in weather_claims(part) if not c.negated]
        labels.update(found)
    return frozenset(labels)


def weather_compatible(stated: str, evidence: frozenset[str]) -> bool:
    """A stated label agrees with the evidence: equal, same cloud family, or one side is the generic."""
    if stated in evidence:
        return True
    family = WEATHER_LABELS[stated][0]
    for label in evidence:
        other = WEATHER_LABELS[label][0]
        if family != other:
            continue
        if family == "cloud" or stated in GENERIC_WEATHER or label in GENERIC_WEATHER:
            return True
    return False


# ------------------------------------------------------------------ traffic states
#: phrase -> the traffic states (1 畅通, 2 缓行, 3 拥堵, 4 严重拥堵) it allows. Longest phrase wins,
#: so negated phrases (不畅通, 一点都不堵) are read before the words inside them.
TRAFFIC_PHRASES: dict[str, frozenset[int]] = {}


def _phrases(states: set[int], *phrases: str) -> None:
    for phrase in phrases:
        TRAFFIC_PHRASES[phrase] = frozenset(states)


_phrases({1}, "畅通", "通畅", "顺畅", "畅行", "基本畅通", "一路畅通", "顺利通行", "通行顺畅", "一点都不堵", "一点也不堵", "1点都不堵", "1点也不堵",
         "1点儿也不堵", "1点儿都不堵",
         "完全不堵", "不堵车", "不堵", "不拥堵", "没有拥堵", "没堵车", "没有堵车", "无拥堵", "不会堵", "路况良好", "路况很好",
         "smooth", "smoothly", "clear", "free-flowing", "free flowing", "flowing freely", "flowing smoothly",
         "no congestion", "no traffic jam", "no traffic jams", "no jams", "not congested", "uncongested",
         "light traffic", "moving freely", "no delays")
_phrases({1, 2}, "不太堵", "不怎么堵", "不算堵", "没那么堵", "不是很堵", "不太拥堵", "not very congested", "not too bad",
         "not much traffic")
_phrases({2}, "缓行", "行驶缓慢", "缓慢", "慢行", "有点堵", "有些堵", "稍微有点堵", "稍堵", "略堵", "轻微拥堵", "轻度拥堵",
         "slow", "slow-moving", "slow moving", "sluggish", "slightly congested", "a bit congested",
         "a little congested", "moderate traffic", "mild congestion", "slight congestion")
_phrases({2, 3}, "走走停停", "比较堵", "stop-and-go", "stop and go", "busy")
_phrases({3, 4}, "拥堵", "堵车", "堵塞", "堵", "拥挤", "很堵", "congested", "congestion", "jammed", "traffic jam",
         "jam", "jams", "heavy traffic", "backed up")
_phrases({4}, "严重拥堵", "严重堵塞", "严重堵车", "非常堵", "特别堵", "堵死", "堵得厉害", "堵得很厉害", "水泄不通",
         "severe congestion", "severely congested", "gridlock", "gridlocked", "standstill", "bumper-to-bumper",
         "bumper to bumper")
_phrases({2, 3, 4}, "不畅通", "不通畅", "不顺畅", "不太畅通", "不太顺畅", "不是很畅通", "not smooth", "not clear",
         "isn't clear", "not free-flowing", "not flowing")
_TRAFFIC_RE = _spelling_pattern(list(TRAFFIC_PHRASES))
TRAFFIC_STATE_NAMES = {1: "畅通", 2: "缓行", 3: "拥堵", 4: "严重拥堵"}
TRAFFIC_STATE_CODES = {name: code for code, name in TRAFFIC_STATE_NAMES.items()}
_LOCAL = re.compile(r"局部|部分|个别|路段|段|方向|出口|入口|附近|路口|桥|some|part of|section|stretch|near|between|"
                    r"ramp|exit|direction|bound", re.IGNORECASE)


@dataclass(frozen=True)
class TrafficClaim:
    states: frozenset[int]
    phrase: str
    local: bool  # qualified as one section ("局部拥堵", "the section near X is slow")
    start: int


@lru_cache(maxsize=512)
def traffic_claims(text: str) -> tuple[TrafficClaim, ...]:
    """Traffic states the text asserts, each as the set of states its phrase allows."""
    text = normalize_answer(text)
    claims = []
    for match in _TRAFFIC_RE.finditer(text):
        phrase = match.group(0)
        states = TRAFFIC_PHRASES.get(phrase) or TRAFFIC_PHRASES.get(phrase.lower()) or frozenset()
        before = text[max(0, match.start() - 3):match.start()]
        if (phrase.isascii() and _EN_NEG_BEFORE.search(text[max(0, match.start() - 24):match.start()])) or \
                (not phrase.isascii() and re.search(rf"{NEGATION}$", before)) or \
                _far_denied(text, match.start(), match.end()):
            states = frozenset({1, 2, 3, 4}) - states  # "not congested" style negation of a positive phrase
        clause_start = max(text.rfind(p, 0, match.start()) for p in "，,。.;；!！?？\n")
        clause = text[clause_start + 1:match.end() + 6]
        claims.append(TrafficClaim(states, phrase, bool(_LOCAL.search(clause)), match.start()))
    return tuple(claims)


# ------------------------------------------------------------------ highway preference
_AVOID_HIGHWAY = re.compile(r"不走高速|不上高速|避开高速|避免高速|绕开高速|不经过高速|少走高速|走国道|走普通公路|"
                            r"avoid(?:s|ing|ed)?\s+(?:all\s+|the\s+|any\s+)*"
                            r"(?:highways?|expressways?|motorways?|freeways?)|"
                            r"no\s+highways?|"
                            r"without\s+(?:using\s+)?(?:the\s+)?(?:highways?|expressways?)|non-highway", re.IGNORECASE)
_TAKE_HIGHWAY = re.compile(r"走高速|上高速|高速优先|优先走?高速|经高速|沿高速|走高速公路|上高速公路|"
                           r"(?:take|taking|use|using|via|on|get on)\s+(?:the\s+)?"
                           r"(?:highways?|expressways?|motorways?|freeways?)|"
                           r"highways? first|prefer(?:ring)? highways?", re.IGNORECASE)


@lru_cache(maxsize=512)
def highway_claims(text: str) -> tuple[str, ...]:
    """``"avoid"`` and/or ``"take"``: what the answer recommends about highways."""
    text = normalize_answer(text)
    found = []
    avoid_spans = [m.span() for m in _AVOID_HIGHWAY.finditer(text)]
    if avoid_spans:
        found.append("avoid")
    for match in _TAKE_HIGHWAY.finditer(text):
        if any(s <= match.start() < e or s < match.end() <= e for s, e in avoid_spans):
            continue
        before = text[max(0, match.start() - 3):match.start()]
        if (re.search(rf"{NEGATION}(?:用|要|必)?$", before)
                or _EN_NEG_BEFORE.search(text[max(0, match.start() - 24):match.start()])):
            found.append("avoid")
            continue
        found.append("take")
    return tuple(dict.fromkeys(found))


_SKIP_WAYPOINT = re.compile(r"不(?:用|必|需要|要|需)?(?:再)?(?:经过|途经|路过|绕道|去)|跳过|绕开|省去|skip|bypass|"
                            r"without\s+(?:stopping|passing|going)|no need to (?:stop|pass|go)|don't (?:stop|pass|go)|"
                            r"(?<!再)(?<!然后)(?<!之后)直接(?:去|到|前往|开往|开到)|directly to", re.IGNORECASE)


_SPEED_OPPOSITE = re.compile(r"最慢|慢一些的|不是最快|并非最快|slowest|not the fastest|isn't the fastest|slower route", re.IGNORECASE)
_TOLL_OPPOSITE = re.compile(r"收费最多|收费最高|收费较高|收费更多|多收费|走收费|过路费最多|most tolls|more tolls|highest tolls|"
                            r"expensive tolls|toll roads? (?:all the way|only)", re.IGNORECASE)
_MAIN_ROAD_OPPOSITE = re.compile(r"走小路|小路优先|走小道|乡间小路|small roads?|back roads?|side roads?|narrow roads?|"
                                 r"minor roads?|avoid(?:s|ing)? (?:the )?main roads?", re.IGNORECASE)
_CONGESTION_OPPOSITE = re.compile(r"不避开拥堵|不用避开拥堵|不必避开拥堵|没有避开拥堵|经过拥堵|走拥堵|最拥堵|"
                                  r"through (?:the )?(?:congestion|traffic jams?)|"
                                  r"doesn't avoid (?:congestion|traffic)|does not avoid (?:congestion|traffic)|"
                                  r"ignor(?:e|ing|es) (?:the )?(?:congestion|traffic)|"
                                  r"go(?:es|ing)? through (?:the )?(?:jams?|congestion|traffic)|不管拥堵|无视拥堵|穿过拥堵",
                                  re.IGNORECASE)


def strategy_contradictions(text: str, strategies: frozenset[str]) -> list[str]:
    """Phrases that recommend the opposite of the asked (canonical) driving strategies."""
    found = []
    highway = highway_claims(text)
    if "不走高速" in strategies and "take" in highway:
        found.append("takes highways")
    if "高速优先" in strategies and "avoid" in highway:
        found.append("avoids highways")
    normalized = normalize_answer(text)
    if "速度最快" in strategies and _SPEED_OPPOSITE.search(normalized):
        found.append("not the fastest")
    if "躲避拥堵" in strategies and _CONGESTION_OPPOSITE.search(normalized):
        found.append("through congestion")
    if "少收费" in strategies and _TOLL_OPPOSITE.search(normalized):
        found.append("more tolls")
    if "大路优先" in strategies and _MAIN_ROAD_OPPOSITE.search(normalized):
        found.append("small roads")
    return found


_MODE_WORDS = {
    "walking": re.compile(r"步行|走路|走过去|walk(?:ing)?\b|on foot", re.IGNORECASE),
    "bicycling": re.compile(r"骑行|骑车|骑自行车|单车|cycl(?:e|ing)|bik(?:e|ing)|bicycl", re.IGNORECASE),
    "transit": re.compile(r"公交|地铁|巴士|public transport|public transit|\bbus\b|subway|metro|\btransit\b", re.IGNORECASE),
    "driving": re.compile(r"驾车|开车|自驾|\bdriv(?:e|ing)\b|by car", re.IGNORECASE),
}


# A mode named only as the alternative the answer turns down: 不推荐开车, 不太建议驾车, 比开车快, 开车不太方便,
# rather than driving, faster than driving, driving is not recommended / would be slower.
_MODE_REJECTED_BEFORE = re.compile(r"(?:不太?(?:建议|推荐|适合|需要)|没必要|比|而不是|与其|rather\s+than|instead\s+of|"
                                   r"\bthan)(?:坐|乘|搭|用)?\s*$", re.IGNORECASE)
# A safety wish recommends no mode (请安全驾驶, 开车注意安全, Please drive safely.)
_MODE_COURTESY = re.compile(r"(?:开车|驾车|驾驶)时?请?注意安全|安全驾驶|注意(?:行车|驾驶)安全|"
                            r"\bdrive\s+(?:safely|carefully)\b|\bsafe\s+driving\b", re.IGNORECASE)
_MODE_JOINER = re.compile(r"(?:\s|或|和|、|/|\bor\b|\band\b)*", re.IGNORECASE)
_MODE_REJECTED_AFTER = re.compile(r"\s*(?:(?:会|要|就)?(?:不太|不|没那么)(?:方便|划算|推荐|合适|快)|会?更(?:慢|远|贵|堵)|"
                                  r"太(?:慢|远|贵|堵)|(?:is|would\s+be)\s+(?:not\s+recommended|slower|longer|"
                                  r"not\s+a\s+good\s+idea)|isn't\s+recommended|would\s+take\s+longer)", re.IGNORECASE)


def stated_modes(text: str) -> set[str]:
    """Travel modes the answer recommends (negated mentions such as 不坐公交, and modes named
    only as the alternative turned down, such as 比开车快 or driving is not recommended, left out).
    Mode words next to each other (公交地铁, 公交或地铁, bus or subway) are read as one mention."""
    normalized = normalize_answer(text)
    courtesy = [m.span() for m in _MODE_COURTESY.finditer(normalized)]
    mentions = sorted((m.start(), m.end(), mode) for mode, pattern in _MODE_WORDS.items()
                      for m in pattern.finditer(normalized)
                      if not any(a <= m.start() and m.end() <= b for a, b in courtesy))
    groups: list[list[tuple[int, int, str]]] = []
    for mention in mentions:
        if groups and _MODE_JOINER.fullmatch(normalized, groups[-1][-1][1], mention[0]):
            groups[-1].append(mention)
        else:
            groups.append([mention])
    found: set[str] = set()
    for group in groups:
        start, end = group[0][0], group[-1][1]
        before = normalized[max(0, start - 3):start]
        if re.search(rf"{NEGATION}(?:用|要|坐|乘)?$", before) or \
                _EN_NEG_BEFORE.search(normalized[max(0, start - 24):start]) or \
                _MODE_REJECTED_BEFORE.search(normalized[max(0, start - 12):start]) or \
                _MODE_REJECTED_AFTER.match(normalized, end):
            continue
        found.update(mode for _, _, mode in group)
    return found


def skips_waypoint(text: str) -> bool:
    """Does the answer recommend dropping a stop (``不用经过X，直接去Y``, ``skip X``)?"""
    return bool(_SKIP_WAYPOINT.search(normalize_answer(text)))


_NO_RESULT = re.compile(r"没有|没找到|未找到|找不到|查不到|暂无|无法|未能|没能|无可用|无结果|无公交|无路线|未知|不详|"
                        r"\bno\b|not found|none|unavailable|could ?n[o']t|cannot|can't|unknown|no data", re.IGNORECASE)


def says_no_result(text: str) -> bool:
    """Does the answer say nothing was found / no data exists?"""
    return bool(_NO_RESULT.search(normalize_answer(text)))
