"""Every claim an answer makes, read without looking at the evidence.

The verifiers (:mod:`mobility_rewards.mobilitybench.verify`, :mod:`mobility_rewards.mobilitybench.verify_route`) compare
*all* of these
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

import bisect
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import cast

from mobility_env.reading import vocabulary
# normalisation and clock times are the kernel's (one copy for both suites), imported here under their old names too
from mobility_env.reading.clock import ClockClaim, clock_claims, clock_matches  # noqa: F401
from mobility_env.reading.lexicon import Lexicon
from mobility_env.reading.normalized import normalize_answer
from mobility_env.reading.text import EN_FAR_DENIAL, ZH_FAR_DENIAL

from ..units import distance_factor, unit_alternation

NEGATION = r"(?:不是|不会|不太|不算|没有|没|无|并非|并不|不)"
_EN_NEGATION = r"(?:not|no|isn't|isnt|won't|wont|without|never|aren't)"

# ------------------------------------------------------------------ money, lights, humidity
# an amount before 元/块 is money, unless a place's word follows: 五元桥 (read 5元桥) is a bridge, not 5 yuan
_MONEY = re.compile(r"(?:¥|￥|RMB\s*)?(\d+(?:\.\d+)?)\s*(?:元|块钱|块|yuan|RMB|CNY)(?![桥路街道巷村镇区站门庄园湾坊寺山河湖店楼厦城])",
                    re.IGNORECASE)
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


_NO_LIGHTS = re.compile(r"(?:没有|无|没|不经过|不用过|零个)(?:任何)?(?:红绿灯|信号灯)|(?:红绿灯|信号灯)(?:都|也)?(?:没有|无)|"
                        r"[1一]个(?:红绿灯|信号灯)都没有|\b(?:no|zero|without(?:\s+any)?)\s+(?:traffic\s+)?(?:lights|signals)\b",
                        re.IGNORECASE)


def _number_claims(pattern: re.Pattern[str], text: str) -> tuple[NumberClaim, ...]:
    """The number in group 1 or 2 of each match of ``pattern`` in the normalised ``text``."""
    text = normalize_answer(text)
    return tuple(NumberClaim(float(m.group(1) or m.group(2)), m.start()) for m in pattern.finditer(text))


@lru_cache(maxsize=512)
def light_claims(text: str) -> tuple[NumberClaim, ...]:
    """Stated numbers of traffic lights; "no lights" is a claim too, of 0 (没有红绿灯, 一个红绿灯都没有, no traffic
    lights): verified like any number."""
    spans = [m.span() for m in _NO_LIGHTS.finditer(normalize_answer(text))]
    counted = tuple(c for c in _number_claims(_LIGHTS, text) if not any(a <= c.start < b for a, b in spans))
    zero = tuple(NumberClaim(0.0, a) for a, _ in spans)  # 1个红绿灯都没有 is none, not one
    return tuple(sorted(counted + zero, key=lambda c: c.start))


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
    "distance": unit_alternation("distance"),
    "duration": r"个?小时|钟头|分钟|分(?!之)|秒钟?|hours?|hrs?|h(?![a-z])|minutes?|mins?|seconds?|secs?",
    "money": r"元|块钱|块|yuan",
}
_OR = r"(?:或者|或是|或|还是|要么|\band\s*/\s*or\b|\bor\s*/\s*and\b|\bor\b)"
_RANGE = r"(?:到|至|~|～|-|–|—|\bto\b)"
_MAYBE = r"(?:约|大约|大概|也许|可能|也可能|about\s|maybe\s|perhaps\s|possibly\s)?\s*"
# a second value offered as a possibility: 也可能84, 或许40, maybe 40
_HEDGE_WORD = r"(?:也|还|又)?(?:可能|或许|也许)(?:是|要|会|需要)?\s*|(?:or\s+)?(?:maybe|possibly|perhaps)\s+"
# a number that nothing follows (no unit, no label word): the end, punctuation, or a word of vagueness
_NOTHING_AFTER = r"\s*(?:$|[，,。;；!！?？)）]|\.(?!\d)|左右|吧|的样子|上下|\bor\b|\bso\b|\bthen\b)"


def _unit_size(kind: str, unit: str) -> float:
    unit = unit.lower()
    if kind == "distance":
        return distance_factor(unit)
    for prefix, size in _UNIT_BASE[kind]:
        if unit.startswith(prefix):
            return size
    return 1.0


_HEDGE_JOINER = re.compile(r"\d[^\d]{0,24}?(?:或|还是|要么|到|至|~|～|-|–|—|可能|或许|也许|\bor\b|\bto\b|\bbetween\b|maybe|"
                           r"possibly|perhaps)|\bbetween\b", re.IGNORECASE)


@lru_cache(maxsize=1)
def _hedge_patterns() -> dict[str, re.Pattern[str]]:
    """Per quantity kind: two values joined as a range, alternatives or a possibility; ``between … and …``; a value
    and a second one without a unit (compiled once, on first use)."""
    return {kind: re.compile(
        rf"(?<![\d.:])(\d+(?:\.\d+)?)\s*({units})?\s*[，,]?\s*(?:{_OR}|{_RANGE}|{_HEDGE_WORD})\s*(?:是\s*)?"
        rf"(?:约|大约|大概|about\s)?\s*(\d+(?:\.\d+)?)\s*({units})|"
        rf"\bbetween\s+(\d+(?:\.\d+)?)\s*({units})?\s*and\s+(\d+(?:\.\d+)?)\s*({units})|"
        rf"(?<![\d.:])(\d+(?:\.\d+)?)\s*({units})\s*[，,]?\s*(?:{_OR}\s*(?:是\s*)?{_MAYBE}|{_HEDGE_WORD})"
        rf"(\d+(?:\.\d+)?)(?={_NOTHING_AFTER})", re.IGNORECASE) for kind, units in _UNIT_RE.items()}


@lru_cache(maxsize=512)
def hedged_quantities(text: str) -> tuple[tuple[str, float, float], ...]:
    """``(kind, value, other value)`` for each quantity stated as a range or as alternatives.

    ``12到15公里``, ``12-15 km``, ``12.3公里或20公里``, ``35 or 50 minutes``, ``35 and/or 50 minutes``,
    ``between 35 and 50 minutes``; kinds are
    ``distance`` (m), ``duration`` (s) and ``money`` (yuan). Two spellings of one value
    (``2小时或120分钟``) are not a hedge.
    """
    text = normalize_answer(text)
    found: list[tuple[str, float, float]] = []
    if not _HEDGE_JOINER.search(text):  # no word that joins two values: no hedge (one C-level scan)
        return ()
    for kind, pattern in _hedge_patterns().items():
        for match in pattern.finditer(text):
            if match.group(9) is not None:  # 32分钟或48: the unitless alternative is read in the first value's unit
                low, low_unit, high = match.group(9, 10, 11)
                high_unit = low_unit
                at = 8
            else:
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
#: canonical condition -> (family, spellings): the Amap phenomenon table (:func:`mobility_env.reading.vocabulary.
#: weather_phenomena`). A family's generic label (雨, 雪, ...) is compatible with every label of the family.
WEATHER_LABELS: dict[str, tuple[str, tuple[str, ...]]] = {
    p.label: (p.family, p.spellings) for p in vocabulary.weather_phenomena()}
WEATHER_LABELS["沙尘"] = ("dust", ("沙尘", "sand"))  # the generic of its family, no label of the table
GENERIC_WEATHER = vocabulary.weather_generics()
_NOT_WEATHER = vocabulary.not_weather()  # 雨伞, rainbow, hail a cab: no weather (kernel data, both suites)


# every spelling of every phenomenon, found in one pass, leftmost-longest (雷阵雨 before the 阵雨 inside it)
_WEATHER_LEXICON = vocabulary.weather_lexicon()
_CLAUSE_BREAK = re.compile(r"[，,。.;；!！?？\n]")
_NEGATED_END = re.compile(rf"{NEGATION}$")
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
# no chance at all of rain) are mobility_env.reading.text's, shared with MobilePA's verifier.
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
    masked = _NOT_WEATHER.blank(text)
    claims = []
    for hit in _WEATHER_LEXICON.finditer(masked):
        claims.append(LabelClaim(hit.payload.label, _negated(masked, hit.start, hit.end), hit.start, hit.end))
    return tuple(claims)


def weather_labels_of(condition: str) -> frozenset[str]:
    """Canonical labels of an evidence condition (``小雨转多云`` -> {小雨, 多云})."""
    labels = set()
    for part in re.split(r"转|到|~|～|/|、|,|，|-", condition or ""):
        part = part.strip()
        if not part:
            continue
        found = [c.label for c in weather_claims(part) if not c.negated]
        labels.update(found or ([part] if part in WEATHER_LABELS else []))  # 平静, 热, 冷: the table's own labels
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
TRAFFIC_PHRASES: dict[str, frozenset[int]] = vocabulary.traffic_phrases()  # the Amap codes' phrases, as data
_TRAFFIC_LEXICON = vocabulary.traffic_lexicon()  # the longest phrase first: 不畅通 before 畅通
TRAFFIC_STATE_NAMES = {c: n for c, n in vocabulary.traffic_state_names().items() if c}
TRAFFIC_STATE_CODES = {name: code for code, name in TRAFFIC_STATE_NAMES.items()}
_LOCAL = re.compile(r"局部|部分|个别|路段|段|方向|出口|入口|附近|路口|桥|some|part of|section|stretch|near|between|"
                    r"ramp|exit|direction|bound", re.IGNORECASE)


@dataclass(frozen=True)
class TrafficClaim:
    states: frozenset[int]
    phrase: str
    local: bool  # qualified as one section ("局部拥堵", "the section near X is slow")
    start: int


# Avoiding a state is no claim of it (避开拥堵路段, 绕开了堵车, avoiding the jams): it reads as its denial.
_AVOIDED_BEFORE = re.compile(r"(?:避开|绕开|避免|躲避|绕过|躲开|避过)了?(?:\S{0,4}的)?$|"
                             r"\bavoid(?:s|ing|ed)?\s+(?:the\s+|any\s+|all\s+)?$", re.IGNORECASE)


@lru_cache(maxsize=512)
def traffic_claims(text: str) -> tuple[TrafficClaim, ...]:
    """Traffic states the text asserts, each as the set of states its phrase allows."""
    text = normalize_answer(text)
    claims = []
    breaks = [m.start() for m in _CLAUSE_BREAK.finditer(text)]  # once per text, not per phrase
    for hit in _TRAFFIC_LEXICON.finditer(text):
        phrase, states, start, end = hit.word, hit.payload, hit.start, hit.end
        before = text[max(0, start - 3):start]
        if (phrase.isascii() and _EN_NEG_BEFORE.search(text[max(0, start - 24):start])) or \
                (not phrase.isascii() and _NEGATED_END.search(before)) or \
                _AVOIDED_BEFORE.search(text[max(0, start - 16):start]) or \
                _far_denied(text, start, end):
            states = frozenset({1, 2, 3, 4}) - states  # "not congested" style negation of a positive phrase
        before_break = bisect.bisect_left(breaks, start)
        clause_start = breaks[before_break - 1] if before_break else -1
        clause = text[clause_start + 1:end + 6]
        claims.append(TrafficClaim(states, phrase, bool(_LOCAL.search(clause)), start))
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


# The route described with high tolls: a toll noun with a degree and a word of amount or price, in either order
# (收费较多, 过路费比较高, 高速费偏贵, 多收费; higher tolls, tolls are on the high side).
_TOLL_NOUN = r"(?:收费|过路费|通行费|高速费|路桥费)"
_TOLL_HIGH = re.compile(rf"{_TOLL_NOUN}\s*(?:会|要|也)?(?:较|比较|很|更|最|偏|有点|稍|相对|挺|蛮|非常|特别)\s*(?:多|高|贵)|"
                        rf"(?:较|比较|很|更|偏)?(?:多|高|贵)的?{_TOLL_NOUN}|"
                        r"(?:higher|more|high|expensive|hefty|steep)\s+tolls?|"
                        r"tolls?\b(?:\s+[a-z]+){0,4}?\s+(?:are|is|will\s+be|would\s+be|run|come)\s+"
                        r"(?:quite\s+|rather\s+|a\s+bit\s+)?"
                        r"(?:on\s+the\s+high\s+side|higher|high|expensive|steep)",
                        re.IGNORECASE)
# The route described as slow (这条路线比较慢, 会慢一些, on the slow side, this route would be slower). A comparative
# is a claim about the route only when the route is its subject, in both languages: "walking would be slower"
# turns another travel mode down (步行会更慢), and says nothing against the fastest route.
_ROUTE_SLOW = re.compile(r"(?:路线|这条路?|路程)(?:会|要)?(?:比较|有点|偏|相对|稍)慢|慢[一1][些点]|on the slow side|"
                         r"(?:\b(?:the|this|that|our|my|your)\s+(?:route|way|option|one)|\bit)\s*"
                         r"(?:is|will\s+be|would\s+be|'s|'ll\s+be)\s+"
                         r"(?:a\s+(?:bit|little)\s+|somewhat\s+|slightly\s+|rather\s+)?slower", re.IGNORECASE)


@lru_cache(maxsize=None)
def _own_mode_slow(mode: str) -> re.Pattern[str] | None:
    """A slow comparative whose subject is the route's own travel mode (driving would be slower, 开车会更慢, on a
    driving route): that mode *is* the route, so it speaks of the route; another mode's (walking would be slower)
    turns an alternative down."""
    words = sorted({w for family in vocabulary.travel_modes() if mode in family.route_modes for w in family.spellings},
                   key=len, reverse=True)
    if not words:
        return None
    spelled = "|".join(map(re.escape, words))
    return re.compile(rf"(?<![a-z])(?:{spelled})(?![a-z])\s*(?:(?:is|will\s+be|would\s+be|'s|'ll\s+be)\s+"
                      r"(?:a\s+(?:bit|little)\s+|somewhat\s+|slightly\s+|rather\s+)?slower|"
                      r"(?:会|要|也)?(?:更|比较|有点|稍|相对)慢(?!慢))", re.IGNORECASE)  # 慢慢开: advice, no claim


def _congested_route(text: str) -> bool:
    """Does the answer assert congestion along the route (a traffic claim that allows only congested states, not
    qualified as one section): 这条路线比较拥堵, 沿途走走停停, expect heavy traffic."""
    return any(not claim.local and claim.states and claim.states <= {2, 3, 4} and claim.states & {3, 4}
               for claim in traffic_claims(text))


def strategy_contradictions(text: str, strategies: frozenset[str], mode: str | None = None) -> list[str]:
    """Phrases that recommend the opposite of the asked (canonical) driving strategies, or describe the route with
    the property the strategy excludes (收费较多 on a fewer-tolls route, 比较拥堵 on an avoid-congestion one). A slow
    comparative speaks of the route when its subject is the route or the route's own ``mode`` (route mode)."""
    found = []
    highway = highway_claims(text)
    if "不走高速" in strategies and "take" in highway:
        found.append("takes highways")
    if "高速优先" in strategies and "avoid" in highway:
        found.append("avoids highways")
    normalized = normalize_answer(text)
    own_mode = _own_mode_slow(mode) if mode else None
    slow = _ROUTE_SLOW.search(normalized) or (own_mode is not None and own_mode.search(normalized))
    if "速度最快" in strategies and (_SPEED_OPPOSITE.search(normalized) or slow):
        found.append("not the fastest")
    if "躲避拥堵" in strategies and (_CONGESTION_OPPOSITE.search(normalized) or _congested_route(text)):
        found.append("through congestion")
    if "少收费" in strategies and (_TOLL_OPPOSITE.search(normalized) or _TOLL_HIGH.search(normalized)):
        found.append("more tolls")
    if "大路优先" in strategies and _MAIN_ROAD_OPPOSITE.search(normalized):
        found.append("small roads")
    return found


def _mode_name(family: vocabulary.ModeFamily) -> str:
    """The name a family is reported by: its route mode where it has exactly one (bus and metro are ``transit``)."""
    return next(iter(family.route_modes)) if len(family.route_modes) == 1 and family.name != "taxi" else family.name


#: reported mode name -> the route modes it describes (taxi: a driving route; rail, flight, ferry: none served here)
MODE_ROUTES: dict[str, frozenset[str]] = {}
for _family in vocabulary.travel_modes():
    MODE_ROUTES[_mode_name(_family)] = MODE_ROUTES.get(_mode_name(_family), frozenset()) | _family.route_modes
#: every word of every family (mobility_env.reading.vocabulary.travel_modes), found in one pass, leftmost-longest
#: (电动车 is a two-wheeler, not the 动车 inside it)
_MODE_LEXICON: Lexicon[str] = Lexicon((word, _mode_name(f)) for f in vocabulary.travel_modes() for word in f.spellings)
# a mode word right before one of these names a place (火车站, 地铁口, 飞机场, bus stop)
_MODE_PLACE = re.compile(r"\s*(?:%s)" % "|".join(re.escape(s) for s in vocabulary.mode_place_suffixes()), re.IGNORECASE)


def mode_fits_route(mode: str, route_mode: str) -> bool:
    """Whether a stated mode (a name :func:`stated_modes` reports) describes a route of ``route_mode``."""
    return route_mode in MODE_ROUTES.get(mode, frozenset({mode}))


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
    mentions = [(hit.start, hit.end, hit.payload) for hit in _MODE_LEXICON.finditer(normalized)
                if not _MODE_PLACE.match(normalized, hit.end)
                and not any(a <= hit.start and hit.end <= b for a, b in courtesy)]
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


# Roads the answer says the route travels: after a verb of travelling, up to the next punctuation or verb of moving,
# each item of the list (、 和 及) that ends in a road word.
# (上 alone is no verb here: 到上海西湖天街; 走到/走去 name where one goes, not the road one takes)
_TRAVEL_VERB = re.compile(r"沿着?|经由|经过|途经|途径|取道|转入|进入|驶入|驶上|上高架|经|走(?![到去向])|"
                          r"\b(?:via|along|onto|take|taking)\b", re.IGNORECASE)
_TRAVEL_SPAN_END = re.compile(r"[，,。.;；!！?？\n：:（(]|行驶|前往|出发|到达|抵达|向[东西南北]|一直|继续|然后|再|\b(?:to|and then)\b")
_ROAD_WORD = re.compile(r"(?:高速公路|高速|快速路|快速|大道|大街|公路|国道|省道|环路|环线|高架|隧道|大桥|桥|胡同|路|街|道|巷|弄|线)$")
# a demonstrative (这条路), a transit line (1号线, 206路, 地铁, 公交), a generic word (走高速, 沿主路) is no road's name
_NOT_A_ROAD = re.compile(r"[这那该此的]|路线$|号线|地铁|轨道|公交|^\d+路$|^[A-Z]?\d+线$|"
                         r"^(?:[主辅大小马公道]路|高速(?:公路)?|[国省]道|公路|快速路?|环路|高架|路|线)$")
_VERB_PREFIX = re.compile(r"^(?:途经|途径|经过|经由|沿着?|途|经|过)+")


def road_claims(text: str) -> list[str]:
    """Road names the answer says the route travels (沿建设路, 经京港澳高速, 途经平长线、振兴路和福和路): each must be
    one of the route's roads. Generic words (走高速, 沿主路), transit lines, places with a house number (经过松浦路8号)
    and names in Latin letters (not verifiable here) are left out."""
    normalized = normalize_answer(text)
    found: list[str] = []
    for verb in _TRAVEL_VERB.finditer(normalized):
        end = _TRAVEL_SPAN_END.search(normalized, verb.end())
        span = normalized[verb.end():end.start() if end else len(normalized)]
        items = []
        for item in re.split(r"[、/]|途经|途径|经过|经由|\band\b", span[:60]):
            items += re.split(r"(?<=[路街道线桥巷速])[和及]", item)  # 振兴路和福和路: at 和 after a road word only
        for item in items:
            name = _VERB_PREFIX.sub("", item.strip())
            if 2 <= len(name) <= 16 and _ROAD_WORD.search(name) and not _NOT_A_ROAD.search(name) \
                    and re.fullmatch(r"[\u4e00-\u9fa5A-Z0-9]+", name) and name not in found:
                found.append(name)
    return found


def skips_waypoint(text: str) -> bool:
    """Does the answer recommend dropping a stop (``不用经过X，直接去Y``, ``skip X``)?"""
    return bool(_SKIP_WAYPOINT.search(normalize_answer(text)))


_NO_RESULT = re.compile(r"没有|没找到|未找到|找不到|查不到|暂无|无法|未能|没能|无可用|无结果|无公交|无路线|未知|不详|"
                        r"\bno\b|not found|none|unavailable|could ?n[o']t|cannot|can't|unknown|no data", re.IGNORECASE)


def says_no_result(text: str) -> bool:
    """Does the answer say nothing was found / no data exists?"""
    return bool(_NO_RESULT.search(normalize_answer(text)))
