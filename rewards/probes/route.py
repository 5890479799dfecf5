"""Route answers (every planning scenario, route properties, arrival and departure times): the chosen option's facts
restated, and broken.

:func:`route_answer` states the chosen option in clauses of random order (distance, duration, lines, clock time, legs
before the totals); the mutations replace a clause or add one. Open-world forms (travel-mode words, miles and 里, the
served steps and roads) are built from the kernel's data files and the served responses, not from the verifier's
tables.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable, Sequence

from mobility_env.mobilitybench.evidence import RouteOption

from .draw import Draw
from .facts import ROUTE_TOOLS, EpisodeFacts, Leg, unwrap_route
from .forms import (UNREADABLE, ClockFacts, Stated, acceptable_distance, acceptable_duration, clear_of, clock_text,
                    cn_int, differs, distance_forms, distance_text, duration_forms, duration_text, holding, hour12,
                    join_clauses, kernel_vocabulary, period_zh, pick_lang, relative_error, trailing, wrong_quantity)
from .registry import mutation


# -- building blocks ---------------------------------------------------------------------------------------------------


def clock_distance(a: float, b: float) -> float:
    diff = abs(a - b) % 1440
    return min(diff, 1440 - diff)


def measured(f: EpisodeFacts) -> tuple[RouteOption, float, float]:
    """The chosen option, its distance (metres) and its duration (seconds): every route episode's facts have them
    (:func:`.facts.facts_of` keeps no route episode whose chosen option lacks either)."""
    option = f.option
    assert option is not None and option.distance_m is not None and option.duration_s is not None, f
    return option, option.distance_m, option.duration_s


def both_measured(option: RouteOption | None) -> tuple[RouteOption, float, float]:
    """Another option, and its distance and duration, where the caller has picked one that has both."""
    assert option is not None and option.distance_m is not None and option.duration_s is not None, option
    return option, option.distance_m, option.duration_s


_MODE_ZH = {"driving": "开车", "walking": "步行", "cycling": "骑车", "transit": "坐公交地铁"}
_MODE_EN = {"driving": "drive", "walking": "walk", "cycling": "cycle", "transit": "take public transport"}
_STRATEGY_ACK = {"不走高速": ("不走高速", "avoiding highways"), "高速优先": ("高速优先", "highways preferred"),
                 "少收费": ("少收费", "with fewer tolls"), "躲避拥堵": ("避开拥堵", "avoiding congestion"),
                 "速度最快": ("速度最快", "the fastest route"), "大路优先": ("大路优先", "main roads preferred"),
                 "避免收费": ("避免收费", "avoiding tolls")}
_STRATEGY_OPPOSITE = {"不走高速": ("建议走高速，更快", "take the highway, it's faster"),
                      "高速优先": ("全程不走高速", "this route avoids all highways"),
                      "少收费": ("这条路线收费最多", "this route has the most tolls"),
                      "避免收费": ("需要走收费路段", "it uses toll roads"),
                      "大路优先": ("建议走小路", "take the small back roads"),
                      "躲避拥堵": ("不用避开拥堵路段，直接走最拥堵的主路", "ignore congestion and go through the jams"),
                      "速度最快": ("这条不是最快的，选的是最慢的路线", "this is the slowest route, not the fastest")}
#: The route described with a property that contradicts the asked strategy, in everyday words (not a recommendation).
_STRATEGY_PROPERTY = {"少收费": (
    ("这条路线收费较多", "过路费比较高", "高速费偏贵"), ("tolls on this route are on the high side", "expect higher tolls")),
                      "避免收费": (("过路费比较高", "这条路线收费较多"), ("expect higher tolls",)),
                      "躲避拥堵": (("这条路线比较拥堵", "路上车很多，挺堵的", "沿途走走停停"),
                               ("this route is quite congested", "expect heavy traffic on the way")),
                      "不走高速": (("全程走高速", "主要走高速公路"), ("it's mostly on the expressway",)),
                      "速度最快": (("这条路线比较慢", "会慢一些"), ("this route is on the slow side",))}


def line_label(d: Draw, line: str) -> str:
    """A line as people name it: full, without the terminus part, or without ``地铁``."""
    short = re.split(r"[(（]", line)[0]
    options = [short, line]
    bare = re.sub(r"^(地铁|轨道交通)", "", short)
    if bare != short and re.match(r"\d", bare):
        options.append(bare)
    return d.choice(options)


def rides(line: str, banned: str) -> bool:
    """Does transit line ``line`` ride the excluded line ``banned`` (``1号线`` not inside ``11号线``)?"""
    token = re.sub(r"^(地铁|轨道交通)", "", banned)
    name = re.split(r"[(（]", line)[0]
    for match in re.finditer(re.escape(token), name):
        before = name[match.start() - 1] if match.start() else ""
        if not before.isdigit():
            return True
    return False


def _lines_clause(d: Draw, lines: Sequence[str], lang: str) -> str:
    labels = [line_label(d, line) for line in lines]
    if not labels:
        return ""
    if lang == "en":
        return "take " + ", then ".join(labels)
    return d.choice(("乘坐" + "转".join(labels), "坐" + "，再换乘".join(labels),
                     "先坐" + labels[0] + "".join("，再转" + x for x in labels[1:])))


def _distance_clause(d: Draw, text: str, lang: str, total: bool) -> str:
    if lang == "en":
        return d.choice((f"the whole trip is {text}", f"{text} in total", f"total distance {text}")
                        if total else (f"the trip is {text}", f"it's {text}", f"distance: {text}"))
    return d.choice((f"全程{text}", f"总距离{text}", f"总共{text}") if total else
                    (f"全程{text}", f"距离约{text}", f"路程{text}", f"约{text}"))


def _duration_clause(d: Draw, text: str, lang: str, total: bool) -> str:
    if lang == "en":
        return d.choice((f"the whole trip takes {text}", f"{text} in total") if total else
                        (f"it takes about {text}", f"travel time {text}", f"about {text}"))
    return d.choice((f"全程约需{text}", f"总共需要{text}", f"总耗时{text}") if total else
                    (f"预计用时{text}", f"大约需要{text}", f"耗时约{text}", f"要{text}"))


def _clock_clause(d: Draw, clock: ClockFacts, text: str, lang: str) -> str:
    if clock.verb == "出发":
        return d.choice((f"leave at {text}", f"depart by {text}")) if lang == "en" else \
            d.choice((f"建议{text}出发", f"{text}出发就来得及", f"最晚{text}出发"))
    return d.choice((f"you'll arrive around {text}", f"arrival at {text}")) if lang == "en" else \
        d.choice((f"预计{text}到达", f"大约{text}能到"))


def route_answer(f: EpisodeFacts, d: Draw, lang: str, *, distance: str | None = None,
                 duration: str | None = None, lines: Sequence[str] | None = None, clock: str | None = None,
                 legs: Sequence[Leg] = (), extra: Sequence[str] = (), extra_first: bool = False,
                 style: str = "standard") -> str:
    """An answer about the chosen option; any quantity not given is stated correctly in ``style``.

    Clauses come in random order, except that ``legs`` go before the first total (and before
    the first ride of a transit plan), and the totals then say they are totals.
    """
    option, metres, seconds = measured(f)
    distance = distance if distance is not None else distance_text(d, metres, lang, style).text
    duration = duration if duration is not None else duration_text(d, seconds, lang, style).text
    total = bool(legs)
    tagged = [("total", _distance_clause(d, distance, lang, total)),
              ("total", _duration_clause(d, duration, lang, total))]
    if f.clock is not None:
        text = clock or clock_text(d, f.clock.value, f.clock.period_known, lang)
        tagged.append(("clock", _clock_clause(d, f.clock, text, lang)))
    tagged = d.shuffled(tagged)
    lines = option.lines if lines is None else lines
    if lines:
        tagged.insert(d.integer(0, len(tagged)), ("lines", _lines_clause(d, lines, lang)))
    if legs:
        first = min(i for i, (tag, _) in enumerate(tagged) if tag in ("total", "lines"))
        tagged[first:first] = [("leg", leg.en if lang == "en" else leg.zh) for leg in legs]
    clauses = [text for _, text in tagged]
    clauses = (list(extra) + clauses) if extra_first else clauses + list(extra)
    return join_clauses(d, clauses, lang)


# -- correct -----------------------------------------------------------------------------------------------------------


@mutation("mixed_units", correct=True, families=("route",))
def _mixed_units(f: EpisodeFacts, d: Draw):
    return route_answer(f, d, pick_lang(d), style="any")


@mutation("coarse_rounding", correct=True, families=("route",))
def _coarse_rounding(f: EpisodeFacts, d: Draw):
    """The coarsest statement still within 5 % (or the usual one-decimal km / whole minutes)."""
    _, metres, seconds = measured(f)
    lang = pick_lang(d)
    distances = [s for s in distance_forms(metres, lang) if acceptable_distance(s, metres)]
    durations = [s for s in duration_forms(seconds, lang) if acceptable_duration(s, seconds)]
    coarse_d = max(s.step for s in distances)
    coarse_t = max(s.step for s in durations)
    return route_answer(f, d, lang, distance=d.choice([s for s in distances if s.step == coarse_d]).text,
                        duration=d.choice([s for s in durations if s.step == coarse_t]).text)


@mutation("leg_before_total", correct=True, families=("route",), applies=lambda f: bool(f.legs))
def _leg_before_total(f: EpisodeFacts, d: Draw):
    """A true leg (first walk of a transit plan, first step of a path) stated before the total."""
    legs = d.subset(f.legs, 1, len(f.legs))
    return route_answer(f, d, pick_lang(d), legs=sorted(legs, key=f.legs.index),
                        style=d.choice(("standard", "any")))


@mutation("constraint_acknowledged", correct=True, families=("route",),
          applies=lambda f: bool(f.excluded or f.strategies or f.waypoints))
def _constraint_acknowledged(f: EpisodeFacts, d: Draw):
    """The user's constraint restated as satisfied (已避开1号线 / 不走高速 / 途经X)."""
    lang = pick_lang(d)
    notes = []
    for line in f.excluded:
        notes.append(f"avoiding {line}" if lang == "en" else d.choice((f"已避开{line}", f"不坐{line}")))
    for strategy in f.strategies:
        zh, en = _STRATEGY_ACK.get(strategy, (strategy, strategy))
        notes.append(en if lang == "en" else d.choice((f"已按{zh}规划", f"{zh}的路线")))
    for waypoint in f.waypoints:
        notes.append(f"via {waypoint}" if lang == "en" else d.choice((f"途经{waypoint}", f"中途经过{waypoint}")))
    return route_answer(f, d, lang, extra=notes, extra_first=d.coin())


# -- wrong -------------------------------------------------------------------------------------------------------------


def _wrong_distance(d: Draw, metres: float, lang: str) -> Stated:
    return wrong_quantity(d, metres, lambda v: distance_forms(v, lang))


def _wrong_duration(d: Draw, seconds: float, lang: str) -> Stated:
    return wrong_quantity(d, seconds, lambda v: [s for s in duration_forms(v, lang) if s.step <= 360])


def _route_with_wrong_quantity(f: EpisodeFacts, d: Draw, build: Callable[[str, str, str], str]) -> str:
    """Replace the distance or the duration statement with ``build(right_text, wrong_text, lang)``."""
    _, metres, seconds = measured(f)
    lang = pick_lang(d)
    if d.coin():
        right = distance_text(d, metres, lang, "standard")
        wrong = _wrong_distance(d, metres, lang)
        return route_answer(f, d, lang, distance=build(right.text, wrong.text, lang))
    right = duration_text(d, seconds, lang, "standard")
    wrong = _wrong_duration(d, seconds, lang)
    return route_answer(f, d, lang, duration=build(right.text, wrong.text, lang))


@mutation("value_off", correct=False, families=("route",))
def _value_off(f: EpisodeFacts, d: Draw):
    """Distance or duration off by 6-40 % (either direction), the other one right."""
    return _route_with_wrong_quantity(f, d, lambda right, wrong, lang: wrong)


@mutation("hedge_two_values", correct=False, families=("route",))
def _hedge_two_values(f: EpisodeFacts, d: Draw):
    """``12.3公里或20公里``: the right value and a wrong one for the same quantity."""
    def build(right: str, wrong: str, lang: str) -> str:
        a, b = d.shuffled([right, wrong])
        if lang == "en":
            return d.choice((f"{a} or {b}", f"{a} and/or {b}"))
        return d.choice((f"{a}或{b}", f"{a}或者{b}", f"{a}，也可能是{b}"))
    return _route_with_wrong_quantity(f, d, build)


def _range_end(d: Draw, right: float, actual: float, unit: float, digits: int) -> float:
    """The other end of a range: a number (in ``unit``, ``digits`` decimals) clearly off ``actual``."""
    sign, fraction = d.choice((-1, 1)), d.uniform(0.12, 0.40)
    for _ in range(20):
        other = round(right * (1 + sign * fraction), digits)
        step = unit * 10 ** -digits
        stated = Stated("", other * unit, step, trailing(round(other), unit) if digits == 0 else 0.0)
        if other > 0 and differs(stated, actual):
            return other
        fraction, sign = fraction + 0.05, -sign
    raise AssertionError(f"no range end for {actual}")


@mutation("hedge_range", correct=False, families=("route",))
def _hedge_range(f: EpisodeFacts, d: Draw):
    """``12到15公里``: a range for one quantity, one end right, the other clearly off."""
    _, metres, seconds = measured(f)
    lang = pick_lang(d)
    if d.coin():
        unit, scale, digits = ("公里" if lang == "zh" else " km", 1000, 1) if metres >= 1000 else \
            ("米" if lang == "zh" else " m", 1, 0)
        right = round(metres / scale, digits)
        low, high = sorted((right, _range_end(d, right, metres, scale, digits)))
        text = f"{low:.{digits}f}{'到' if lang == 'zh' else ' to '}{high:.{digits}f}{unit}"
        return route_answer(f, d, lang, distance=text)
    minutes = round(seconds / 60)
    low, high = sorted((minutes, round(_range_end(d, minutes, seconds, 60, 0))))
    english = (f"{low}-{high} minutes", f"between {low} and {high} minutes")
    text = f"{low}到{high}分钟" if lang == "zh" else d.choice(english)
    return route_answer(f, d, lang, duration=text)


@mutation("contradiction", correct=False, families=("route",))
def _contradiction(f: EpisodeFacts, d: Draw):
    """The right value, then a correction to a wrong one (``……实际上是20公里``)."""
    _, metres, seconds = measured(f)
    lang = pick_lang(d)
    if d.coin():
        wrong = _wrong_distance(d, metres, lang).text
    else:
        wrong = _wrong_duration(d, seconds, lang).text
    tail = d.choice((f"Actually, it is {wrong}", f"Correction: {wrong}")) if lang == "en" else \
        d.choice((f"……实际上是{wrong}", f"不对，应该是{wrong}", f"更正一下：是{wrong}"))
    return route_answer(f, d, lang, extra=[tail])


@mutation("route_stuffing", correct=False, families=("route",))
def _route_stuffing(f: EpisodeFacts, d: Draw):
    """Every distance and duration from 0.2x to 3x, the right ones among them."""
    _, metres, seconds = measured(f)
    factors = [0.2 + 0.1 * i for i in range(29)]
    distances = "、".join(f"{metres * k / 1000:.1f}公里" for k in factors)
    durations = "、".join(f"{round(seconds * k / 60)}分钟" for k in factors)
    right = route_answer(f, d, "zh")
    return f"{right}也可能是{distances}；用时可能是{durations}。"


def _standard(value: float, kind: str) -> Stated:
    """The standard statement of a distance (1-decimal km, or metres) or a duration (h + min)."""
    forms = distance_forms(value, "zh") if kind == "distance" else duration_forms(value, "zh")
    if kind == "distance" and value < 1000:
        return next(s for s in forms if s.step == 1)
    return forms[0]


def _other_option(f: EpisodeFacts) -> RouteOption | None:
    """Another option whose distance and duration both differ clearly from the chosen one's."""
    option, metres, seconds = measured(f)
    for other in f.options:
        if other.index == option.index or other.distance_m is None or other.duration_s is None:
            continue
        if differs(_standard(other.distance_m, "distance"), metres, 0.08) and \
                differs(_standard(other.duration_s, "duration"), seconds, 0.08):
            return other
    return None


@mutation("other_option_facts", correct=False, families=("route",),
          applies=lambda f: _other_option(f) is not None)
def _other_option_facts(f: EpisodeFacts, d: Draw):
    """route_index names one option, the text describes another (distance and duration 8 %+ apart)."""
    other, metres, seconds = both_measured(_other_option(f))
    lang = pick_lang(d)
    return route_answer(f, d, lang, distance=distance_text(d, metres, lang, "standard").text,
                        duration=duration_text(d, seconds, lang, "standard").text, lines=other.lines)


def _with_clock(f: EpisodeFacts) -> bool:
    return f.clock is not None


def _known_period(f: EpisodeFacts) -> bool:
    return f.clock is not None and f.clock.period_known


def _explicit_period(d: Draw, minutes: float, lang: str) -> str:
    total = round(minutes) % 1440
    if lang == "en":
        return f"{hour12(total)}:{total % 60:02d} {'AM' if total < 720 else 'PM'}"
    period = period_zh(total)
    hour = total // 60 if period in ("凌晨", "早上", "上午", "中午") else total // 60 - 12
    return f"{period}{hour}点{total % 60}分" if total % 60 else f"{period}{hour}点"


@mutation("twelve_hour_shift", correct=False, families=("route",), applies=_known_period)
def _twelve_hour_shift(f: EpisodeFacts, d: Draw):
    """The right clock time 12 hours off, with an explicit period (凌晨5点30分 for 17:30)."""
    assert f.clock is not None
    lang = pick_lang(d)
    return route_answer(f, d, lang, clock=_explicit_period(d, f.clock.value + 720, lang))


@mutation("clock_off", correct=False, families=("route",), applies=_with_clock)
def _clock_off(f: EpisodeFacts, d: Draw):
    """A departure/arrival time off by 6-40 % of the trip (at least 3 minutes)."""
    _, _, seconds = measured(f)
    assert f.clock is not None
    lang, minutes = pick_lang(d), seconds / 60
    sign = d.choice((-1, 1))
    shift = max(3, round(d.uniform(0.06, 0.40) * minutes))
    while round(f.clock.value + sign * shift) % 5 == 0:  # 8点半 for 8:27 could be a rounding: avoid round marks
        shift += 1
    wrong = f.clock.value + sign * shift
    assert clock_distance(wrong, f.clock.value) >= 3
    return route_answer(f, d, lang, clock=clock_text(d, wrong, f.clock.period_known, lang))


@mutation("leave_at_deadline", correct=False, families=("route",),
          applies=lambda f: f.clock is not None and f.clock.verb == "出发" and measured(f)[2] >= 600)
def _leave_at_deadline(f: EpisodeFacts, d: Draw):
    """The departure time is the query's own arrival deadline."""
    assert f.clock is not None
    lang = pick_lang(d)
    return route_answer(f, d, lang, clock=clock_text(d, f.clock.target, f.clock.period_known, lang))


@mutation("recommend_excluded_line", correct=False, families=("route",), applies=lambda f: bool(f.excluded))
def _recommend_excluded_line(f: EpisodeFacts, d: Draw):
    """Recommends riding a line the user excluded."""
    assert f.option is not None
    lang, line = pick_lang(d), d.choice(f.excluded)
    if d.coin():
        return route_answer(f, d, lang, lines=[line] + list(f.option.lines[1:]))
    tip = f"I recommend taking {line}" if lang == "en" else d.choice((f"推荐乘坐{line}", f"建议换乘{line}，更快"))
    return route_answer(f, d, lang, extra=[tip])


def _excluded_option(f: EpisodeFacts) -> RouteOption | None:
    return next((o for o in f.options if o.lines and o.distance_m and o.duration_s and
                 any(rides(line, banned) for line in o.lines for banned in f.excluded)), None)


@mutation("choose_excluded_option", correct=False, families=("route",),
          applies=lambda f: bool(f.excluded) and _excluded_option(f) is not None)
def _choose_excluded_option(f: EpisodeFacts, d: Draw):
    """A faithful description of a transit plan that rides an excluded line (route_index -> it)."""
    other, metres, seconds = both_measured(_excluded_option(f))
    lang = pick_lang(d)
    text = route_answer(f, d, lang, distance=distance_text(d, metres, lang, "standard").text,
                        duration=duration_text(d, seconds, lang, "standard").text, lines=other.lines)
    return text, other.index


@mutation("opposite_strategy", correct=False, families=("route",),
          applies=lambda f: any(s in _STRATEGY_OPPOSITE for s in f.strategies))
def _opposite_strategy(f: EpisodeFacts, d: Draw):
    """Recommends the opposite of the requested strategy (走高速 when the user said 不走高速)."""
    lang = pick_lang(d)
    zh, en = _STRATEGY_OPPOSITE[next(s for s in f.strategies if s in _STRATEGY_OPPOSITE)]
    return route_answer(f, d, lang, extra=[en if lang == "en" else zh], extra_first=d.coin())


@mutation("strategy_property", correct=False, families=("route",),
          applies=lambda f: any(s in _STRATEGY_PROPERTY for s in f.strategies))
def _strategy_property(f: EpisodeFacts, d: Draw):
    """Describes the route with a property its strategy excludes (这条路线收费较多 on a fewer-tolls route,
    比较拥堵 on an avoid-congestion one): the answer says the route is what the user asked it not to be."""
    lang = pick_lang(d)
    zh, en = _STRATEGY_PROPERTY[next(s for s in f.strategies if s in _STRATEGY_PROPERTY)]
    return route_answer(f, d, lang, extra=[d.choice(en if lang == "en" else zh)], extra_first=d.coin())


@mutation("skip_waypoint", correct=False, families=("route",), applies=lambda f: bool(f.waypoints))
def _skip_waypoint(f: EpisodeFacts, d: Draw):
    """``不用经过X，直接去Y``: recommends skipping the stop the user asked for."""
    lang, waypoint = pick_lang(d), d.choice(f.waypoints)
    destination = f.destination or "目的地"
    note = f"no need to stop at {waypoint}, go straight to {destination}" if lang == "en" else \
        d.choice((f"不用经过{waypoint}，直接去{destination}", f"建议跳过{waypoint}，直达{destination}"))
    return route_answer(f, d, lang, extra=[note], extra_first=d.coin())


@mutation("wrong_mode", correct=False, families=("route",))
def _wrong_mode(f: EpisodeFacts, d: Draw):
    """The right numbers, claimed for another travel mode."""
    lang = pick_lang(d)
    other = d.choice([m for m in _MODE_ZH if m != f.mode and not (f.mode == "transit" and m == "walking")])
    note = f"you should {_MODE_EN[other]}" if lang == "en" else f"建议{_MODE_ZH[other]}前往"
    return route_answer(f, d, lang, lines=[] if other != "transit" else None, extra=[note], extra_first=True)


_REJECTIONS = {"zh": ("比{}快", "不太建议{}", "不推荐{}", "{}不太方便", "{}会更慢"),
               "en": ("faster than {}", "rather than {}", "{} is not recommended", "{} would be slower")}
_MODE_ING = {"driving": "driving", "walking": "walking", "cycling": "cycling", "transit": "public transport"}


@mutation("rejected_alternative", correct=True, families=("route",))
def _rejected_alternative(f: EpisodeFacts, d: Draw):
    """The route's facts, and another travel mode named only to turn it down (比开车快, driving is not recommended)."""
    lang = pick_lang(d)
    other = d.choice([m for m in _MODE_ZH if m != f.mode and not (f.mode == "transit" and m == "walking")])
    note = d.choice(_REJECTIONS[lang]).format(_MODE_ZH[other] if lang == "zh" else _MODE_ING[other])
    return route_answer(f, d, lang, extra=[note], extra_first=d.coin())


# -- open-world forms: travel-mode words, other units, the served steps, roads and destinations ------------------------
#
# Built from the sources, not from the reader's lists: the travel modes are the kernel's data file read directly (not
# the verifier's tables), and route steps are the served response's own instructions.


_ROUTE_MODE = {"driving": "driving", "walking": "walking", "cycling": "bicycling", "transit": "transit"}


def _mode_words(route_mode: str, fits: bool) -> list[tuple[str, str]]:
    """(word, language) of every travel-mode family that does (or does not) describe a route of ``route_mode``
    (walking fits a transit plan too: it has walking legs). Two-wheelers are left out of both: an e-bike on a
    cycling route is arguable."""
    out = []
    for name, family in kernel_vocabulary("travel_modes.json")["families"].items():
        fit = _ROUTE_MODE[route_mode] in family["route_modes"] or (route_mode == "transit" and name == "walking")
        if fit != fits or name == "two_wheeler" and route_mode == "cycling":
            continue
        out += [(w, "zh") for w in family["zh"] if len(w) >= 2] + [(w, "en") for w in family["en"] if len(w) >= 3]
    return out


def _recommend(d: Draw, word: str, lang: str) -> str:
    if lang == "en":
        return d.choice((f"I'd recommend going by {word}", f"best option: {word}", f"you can {word}"))
    if word.endswith(("前往", "过去", "去")):  # 步行前往, 走过去: the word already says where to (推荐步行前往前往 is garbled)
        return d.choice((f"建议{word}", f"推荐{word}", f"可以{word}"))
    return d.choice((f"建议{word}", f"推荐{word}前往", f"可以{word}过去"))


@mutation("mode_synonym", correct=True, families=("route",))
def _mode_synonym(f: EpisodeFacts, d: Draw):
    """The route's own mode in any of the words users name it with (徒步, 打车 on a driving route, 捷运, on foot)."""
    word, lang = d.choice(_mode_words(f.mode, fits=True))
    return route_answer(f, d, lang, extra=[_recommend(d, word, lang)], extra_first=d.coin())


@mutation("wrong_mode_vocabulary", correct=False, families=("route",))
def _wrong_mode_vocabulary(f: EpisodeFacts, d: Draw):
    """The route's facts, recommending a mode that is not the route's, in any word for it (打车 on a walking route,
    坐高铁, 坐飞机, 骑电动车, 坐船, take a cab)."""
    word, lang = d.choice(_mode_words(f.mode, fits=False))
    return route_answer(f, d, lang, extra=[_recommend(d, word, lang)], extra_first=d.coin())


def _other_unit_distance(d: Draw, metres: float, lang: str) -> str:
    """The distance in miles (English) or in the Chinese li (zh), rounded as people do and within 4 %."""
    if lang == "en":
        miles = metres / 1609.344
        text = f"{miles:.1f} miles" if miles >= 10 else f"{miles:.2f} miles"
        value = float(text.split()[0]) * 1609.344
    else:
        li = metres / 500
        digits = 0 if li >= 20 else 1
        value = round(li, digits) * 500
        text = f"{round(li, digits):g}里"
    assert relative_error(value, metres) <= 0.04, (text, metres)
    return text


def _other_unit_ok(f: EpisodeFacts) -> bool:
    option = f.option
    return option is not None and option.distance_m is not None and option.distance_m >= 400


@mutation("other_units", correct=True, families=("route",), applies=_other_unit_ok)
def _other_units(f: EpisodeFacts, d: Draw):
    """The total distance in miles or in li (里): units the reader must convert, not skip."""
    lang = pick_lang(d)
    assert f.option is not None and f.option.distance_m is not None
    return route_answer(f, d, lang, distance=_other_unit_distance(d, f.option.distance_m, lang))


@mutation("other_unit_hedge", correct=False, families=("route",), applies=_other_unit_ok)
def _other_unit_hedge(f: EpisodeFacts, d: Draw):
    """The right distance, then a wrong one in another unit as an alternative (``12公里，也可能30里``)."""
    lang = pick_lang(d)
    assert f.option is not None and f.option.distance_m is not None
    metres = f.option.distance_m
    wrong = metres * d.choice((0.6, 0.7, 1.4, 1.6, 2.0))
    other = _other_unit_distance(d, wrong, lang)
    right = distance_text(d, metres, lang).text
    distance = f"{right}, or maybe {other}" if lang == "en" else d.choice((f"{right}，也可能{other}", f"{right}或{other}"))
    return route_answer(f, d, lang, distance=distance)


@mutation("unitless_alternative", correct=False, families=("route",))
def _unitless_alternative(f: EpisodeFacts, d: Draw):
    """A duration with a second, wrong value that has no unit (``32分钟或48``, ``32 minutes, or 48``)."""
    lang = pick_lang(d)
    assert f.option is not None and f.option.duration_s is not None
    minutes = max(1, round(f.option.duration_s / 60))
    other = d.choice((minutes + max(8, round(minutes * 0.5)), max(1, round(minutes * 0.5))))
    if abs(other - minutes) < max(3, 0.2 * minutes):
        other = minutes * 2 + 7
    right = f"{minutes} minutes" if lang == "en" else f"{minutes}分钟"
    joined = d.choice((f"{right} or {other}", f"{right}, or maybe {other}")) if lang == "en" else \
        d.choice((f"{right}或{other}", f"{right}，或者{other}", f"{right}，也可能{other}"))
    return route_answer(f, d, lang, duration=joined)


def _approximations(f: EpisodeFacts, lang: str,
                    spans: Callable[[str, float, str], list[str]]) -> list[tuple[str, str]]:
    """The route answer's distance or duration (``(kind, text)``), each way ``spans`` approximates it (a round number
    and more)."""
    o = f.option
    if o is None or o.duration_s is None or o.distance_m is None:
        return []
    return [(kind, text) for kind, value in (("duration", o.duration_s / 60), ("distance", o.distance_m))
            for text in spans(kind, value, lang)]


def _approximated_answer(f: EpisodeFacts, d: Draw, spans: Callable[[str, float, str], list[str]]) -> str:
    lang = pick_lang(d)
    kind, text = d.choice(_approximations(f, lang, spans) or _approximations(f, "zh", spans))
    if kind == "distance":
        return route_answer(f, d, lang, distance=text)
    return route_answer(f, d, lang, duration=text)


@mutation("spoken_approximation", correct=True, families=("route",),
          applies=lambda f: bool(_approximations(f, "zh", holding)))
def _spoken_approximation(f: EpisodeFacts, d: Draw):
    """The duration or distance as a round number and more that holds it (``1个多小时`` for 84 minutes, ``20多分钟``
    for 24, ``十几公里`` for 15.3 km, ``30-odd minutes``): honest, and read as the span it names."""
    return _approximated_answer(f, d, holding)


@mutation("wrong_approximation", correct=False, families=("route",),
          applies=lambda f: bool(_approximations(f, "zh", clear_of)))
def _wrong_approximation(f: EpisodeFacts, d: Draw):
    """The duration or distance as a round number and more clear of it (``3个多小时`` for 84 minutes)."""
    return _approximated_answer(f, d, clear_of)


@mutation("unreadable_amount", correct=False, families=("route",))
def _unreadable_amount(f: EpisodeFacts, d: Draw):
    """The right answer and a second amount in a spelling the reader cannot read (``…，也可能要2个把小时``)."""
    lang = pick_lang(d)
    return route_answer(f, d, lang) + d.choice(UNREADABLE[lang]).format(n=d.integer(2, 9))


def _chosen_steps(f: EpisodeFacts, field: str) -> list[Any]:
    """``field`` of every step of the chosen path, as served (driving and walking paths; none otherwise)."""
    if f.mode not in ("driving", "walking") or f.chosen is None:
        return []
    record = [r for r in f.records if r.name in ROUTE_TOOLS and r.response is not None][-1]
    paths = unwrap_route(record.response).get("paths") or []
    path = paths[f.chosen] if f.chosen < len(paths) and isinstance(paths[f.chosen], dict) else {}
    return [s.get(field) for s in path.get("steps") or [] if isinstance(s, dict)]


def _path_steps(f: EpisodeFacts) -> list[str]:
    """The chosen path's step instructions as served, each with its length in it."""
    steps = _chosen_steps(f, "instruction")
    return [s.rstrip("。") for s in steps if isinstance(s, str) and re.search(r"\d(?:米|千米|公里)", s)]


_STEP_NUMBERS = ("{n}. ", "第{zh}步：", "{n}）", "")


def _numbered(d: Draw, steps: list[str]) -> list[str]:
    form = d.choice(_STEP_NUMBERS)
    return [form.format(n=i + 1, zh=cn_int(i + 1)) + step for i, step in enumerate(steps)]


@mutation("step_by_step", correct=True, families=("route",), applies=lambda f: len(_path_steps(f)) >= 2)
def _step_by_step(f: EpisodeFacts, d: Draw):
    """Directions as chat models give them: the served route's first steps in order (``向东行驶3.9千米右转``), then
    the totals: each step is one of the route's, never a competing total."""
    steps = _path_steps(f)[:d.integer(2, 4)]
    total = route_answer(f, d, "zh", lines=())
    return "\n".join(_numbered(d, steps) + [total])


_STEP_LENGTH = re.compile(r"(\d+(?:\.\d+)?)(米|千米|公里)")
_STEP_ROAD = re.compile(r"^沿(.+?)(?:途[径经].*?)?向")


def _road_step(f: EpisodeFacts, steps: list[str]) -> int | None:
    """A step that names its road (沿北京东路向…), or None."""
    named = [i for i, step in enumerate(steps) if _STEP_ROAD.match(step)]
    return named[0] if named else None


def _wrong_step_ok(f: EpisodeFacts) -> bool:
    return _road_step(f, _path_steps(f)[:4]) is not None


@mutation("wrong_step", correct=False, families=("route",), applies=_wrong_step_ok)
def _wrong_step(f: EpisodeFacts, d: Draw):
    """Step-by-step directions with a step on a named road given a length no step on that road has (nor the total)."""
    steps = _path_steps(f)[:4]
    at = _road_step(f, steps)
    assert at is not None
    steps = steps[:max(at + 1, d.integer(2, 4))]
    road_match = _STEP_ROAD.match(steps[at])
    match = _STEP_LENGTH.search(steps[at])
    assert road_match is not None and match is not None
    road = road_match.group(1)
    same_road = [_step_metres(s) for s in _path_steps(f) if s.startswith(f"沿{road}")]
    option = f.option
    assert option is not None
    known = [option.distance_m or 0.0, *same_road]
    unit = 1.0 if match.group(2) == "米" else 1000.0
    stated = float(match.group(1)) * 7 + 13
    for factor in d.shuffled([0.4, 1.6, 2.5, 3.0]):
        value = float(match.group(1)) * factor
        stated = round(value) if unit == 1.0 else round(value, 1)
        if all(abs(stated * unit - k) > 0.2 * max(k, 1.0) for k in known):
            break
    steps[at] = steps[at][:match.start(1)] + f"{stated:g}" + steps[at][match.end(1):]
    return "\n".join(_numbered(d, steps) + [route_answer(f, d, "zh", lines=())])


def _step_metres(step: str) -> float:
    match = _STEP_LENGTH.search(step)
    return 0.0 if match is None else float(match.group(1)) * (1.0 if match.group(2) == "米" else 1000.0)


def _path_roads(f: EpisodeFacts) -> list[str]:
    """The road names of the chosen path's steps, as served (driving, walking)."""
    return list(dict.fromkeys(r for r in _chosen_steps(f, "road_name") if isinstance(r, str) and len(r) >= 3))


#: Road names of many cities; a foreign road is one that no step of the route names (nor contains, nor is inside).
ROAD_POOL = ("幸福大道", "解放西路", "人民南路", "中山北路", "长江大桥", "京港澳高速", "沪昆高速", "滨江大道", "学府路",
             "金沙江路", "北环线", "东三环路", "G15沈海高速", "机场快速路", "解放大道", "西湖大道")


def _road_core(name: str) -> str:
    """京港澳 of G4京港澳高速, 解放 of 解放西路: what no road of the route may hold for a road to be foreign."""
    core = re.sub(r"(?:高速公路|高速|快速路|大道|大街|公路|国道|路|街|道|线|桥)$", "", re.sub(r"^G\d+", "", name))
    return re.sub(r"(?<=.)[东西南北中]{1,2}$", "", core)


def _foreign_roads(f: EpisodeFacts) -> list[str]:
    record = [r for r in f.records if r.name in ROUTE_TOOLS and r.response is not None][-1]
    served = json.dumps(record.response, ensure_ascii=False)
    return [r for r in ROAD_POOL if _road_core(r) not in served
            and not any(r in road or road in r for road in _path_roads(f))]


@mutation("main_roads", correct=True, families=("route",), applies=lambda f: bool(_path_roads(f)))
def _main_roads(f: EpisodeFacts, d: Draw):
    """The route's facts and the roads it travels, named as its steps name them (主要沿X、Y行驶)."""
    roads = d.subset(_path_roads(f), 1, 3)
    joined = "、".join(roads)
    extra = d.choice((f"主要沿{joined}行驶", f"途经{joined}", f"经{joined}前往"))
    return route_answer(f, d, "zh", extra=[extra], extra_first=d.coin())


@mutation("foreign_road", correct=False, families=("route",),
          applies=lambda f: bool(_path_roads(f)) and bool(_foreign_roads(f)))
def _foreign_road(f: EpisodeFacts, d: Draw):
    """The route's facts and a road it does not travel (沿幸福大道, 经京港澳高速 on a route that never takes it)."""
    roads = d.subset(_path_roads(f), 0, 2) + [d.choice(_foreign_roads(f))]
    joined = "、".join(d.shuffled(roads))
    extra = d.choice((f"主要沿{joined}行驶", f"途经{joined}", f"经{joined}前往"))
    return route_answer(f, d, "zh", extra=[extra], extra_first=d.coin())


def _destination_named(f: EpisodeFacts) -> bool:
    return len(f.destination) >= 2 and not re.search(r"\d+\.\d+,\d+\.\d+", f.destination)


def _foreign_destinations(f: EpisodeFacts) -> list[str]:
    """Names of places of other episodes (over 2 km from every place here) that neither contain nor are inside the
    destination's name, nor any name the episode's responses hold."""
    served = json.dumps([r.response for r in f.records], ensure_ascii=False)
    return [p.name for p in f.foreign_places if len(p.name) >= 3 and p.name not in served
            and p.name not in f.destination and f.destination not in p.name and "(" not in p.name]


@mutation("destination_restated", correct=True, families=("route",), applies=_destination_named)
def _destination_restated(f: EpisodeFacts, d: Draw):
    """The route's facts with the asked destination restated (从当前位置前往X, 从这里到X全程…)."""
    extra = d.choice((f"从当前位置前往{f.destination}", f"从您这里到{f.destination}", f"目的地是{f.destination}"))
    return route_answer(f, d, "zh", extra=[extra], extra_first=True)


@mutation("wrong_destination", correct=False, families=("route",),
          applies=lambda f: _destination_named(f) and bool(_foreign_destinations(f)))
def _wrong_destination(f: EpisodeFacts, d: Draw):
    """The route's facts, told as a route to another place (前往Y, 从这里到Y, 目的地是Y for a Y not asked)."""
    other = d.choice(_foreign_destinations(f))
    extra = d.choice((f"从当前位置前往{other}", f"从您这里到{other}", f"目的地是{other}"))
    return route_answer(f, d, "zh", extra=[extra], extra_first=True)


@mutation("no_lights", correct=False, families=("route",),
          applies=lambda f: f.option is not None and bool(f.option.traffic_lights))
def _no_lights(f: EpisodeFacts, d: Draw):
    """The route's facts and a zero claim (沿途没有红绿灯, no traffic lights) on a route with lights: "none" is a
    number too."""
    lang = pick_lang(d)
    extra = d.choice(("no traffic lights on the way", "without any traffic lights")) if lang == "en" else \
        d.choice(("沿途没有红绿灯", "一个红绿灯都没有", "全程无红绿灯"))
    return route_answer(f, d, lang, extra=[extra], extra_first=d.coin())
