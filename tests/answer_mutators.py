"""Answer mutators: correct paraphrases and wrong variants of an episode's finish answer.

Written to judge the FPR verifier from the outside, the way a hostile RL policy would probe
it (STYLE habit 11): for every episode the facts of the replayed evidence are read once
(:func:`build_facts`), and named *mutations* turn them into answers:

* **correct** mutations restate the chosen option's facts (units, Chinese numerals, English,
  clause order, coarser rounding within 5 %, a true leg before the total, colloquial
  traffic states, graded weather words, clock times with their period...) and must pass;
* **wrong** mutations hedge, contradict, negate, stuff, shift, echo, or recommend what the
  user excluded, and must fail.

Every generator checks its own output against the evidence, so a failing test blames the
verifier, not the generator: a "wrong" value is at least 6 % and two stated precisions off
after rounding (``1h`` may be 53 minutes rounded, so it is never the wrong value for 53);
a wrong clock time is 6-40 % of the trip (at least 3 minutes) off and never on a round
5-minute mark; a wrong temperature is 3-15 °C from every true one (percentages mean nothing
near 0 °C); a "wrong" name is contained in no evidence name; a foreign place lies over 2 km
from every evidence place and the query point; a correct statement is within 5 % or the
usual rounding (one-decimal km, whole minutes); a name or address the query already
contains is not offered alone as a correct answer (it would be an echo).

Kinds (``CORRECT``/``WRONG``, each applying to some families: route, poi, nearby,
geolocation, weather, traffic):

* correct: plain, english, mixed_units, chinese_numerals, coarse_rounding, leg_before_total,
  constraint_acknowledged, poi_name_only, poi_address_only, nearby_several, nearby_with_remarks,
  geo_spaced_address, geo_two_components, weather_all_days, traffic_colloquial,
  traffic_with_description;
* wrong: generic, query_echo, keyword_alone, false_no_result; value_off, hedge_two_values,
  hedge_range, contradiction, route_stuffing, other_option_facts, wrong_mode,
  twelve_hour_shift, clock_off, leave_at_deadline, recommend_excluded_line,
  choose_excluded_option, opposite_strategy, skip_waypoint; superstring_name,
  name_other_province_address, foreign_place, other_branch, place_hedge,
  mixed_foreign_place, place_stuffing; bare_city, one_character, wrong_component,
  wrong_street_number; wrong_condition, negated_condition, condition_hedge,
  condition_contradiction, condition_stuffing, temperature_off, temperature_hedge,
  temperature_stuffing, other_day; wrong_state, negated_state, state_hedge,
  state_contradiction, state_stuffing.

Open-world forms (built from the kernel's data files and the served responses, not from the verifier's tables):
correct traditional_script (any correct kind in Traditional: mainland, Taiwan with its phrases, Hong Kong),
mode_synonym, other_units (miles, 里), step_by_step (the served steps, numbered), main_roads, destination_restated,
traffic_colloquial_light; wrong traditional_wrong, wrong_mode_vocabulary (打车, 坐高铁, 坐飞机, 骑电动车 …),
other_unit_hedge, unitless_alternative (32分钟或48), wrong_step, foreign_road, wrong_destination,
phenomenon_hedge (any Amap phenomenon of another family), traffic_colloquial_wrong, strategy_property (收费较多 on a
fewer-tolls route), forecast_one_day_only and forecast_day_wrong (a question about several days), no_lights (沿途没有
红绿灯 on a route with lights).

Generators draw their random choices through :class:`Draw`, so the same code runs as a
hypothesis strategy (:func:`answers`, :class:`HypothesisDraw`) and in the seeded sweep
(:func:`sweep`, :class:`RandomDraw`) that ``tests/test_reward_exploits.py`` and
``benchmarks/reward_exploits.py`` share.
"""

from __future__ import annotations

import dataclasses
import json
import random
import re
import unicodedata
from collections import defaultdict
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence, TypeVar

from hypothesis import strategies as st

from mobility_env.episode import Episode
from mobility_env.geo import haversine_m
from mobility_env.loaders import load_episodes
from mobility_env.trajectory import CallRecord, FinishRecord, Trajectory
from mobility_rewards import score_episode
from mobility_rewards.audit import audit_episodes, blocking_episode_ids
from mobility_rewards.evidence import (GeocodeFacts, Place, RouteOption, TrafficFacts, WeatherFacts, geocode_facts,
                                       nearby_pois, places, route_options, traffic_facts, weather_facts)
from mobility_rewards.reference import gold_calls_as_records, reference_answer

T = TypeVar("T")
REPO = Path(__file__).resolve().parents[1]
SAMPLE_CSV = REPO.parent / "shared" / "mobilitybench" / "sample_dev.csv"
BUNDLED = REPO / "datasets" / "default"

# ----------------------------------------------------------------------------------------
# Random choices: one interface, two engines (hypothesis for properties, random for sweeps)
# ----------------------------------------------------------------------------------------


class Draw:
    """The random choices a generator may make."""

    def choice(self, options: Sequence[T]) -> T:
        raise NotImplementedError

    def integer(self, low: int, high: int) -> int:
        raise NotImplementedError

    def uniform(self, low: float, high: float) -> float:
        raise NotImplementedError

    def shuffled(self, items: Sequence[T]) -> list[T]:
        raise NotImplementedError

    def coin(self) -> bool:
        return self.choice((False, True))

    def subset(self, items: Sequence[T], low: int, high: int) -> list[T]:
        """Between ``low`` and ``high`` distinct items, in random order."""
        size = self.integer(min(low, len(items)), min(high, len(items)))
        return self.shuffled(items)[:size]


class HypothesisDraw(Draw):
    def __init__(self, draw: Callable[[st.SearchStrategy[Any]], Any]):
        self._draw = draw

    def choice(self, options):
        return self._draw(st.sampled_from(list(options)))

    def integer(self, low, high):
        return self._draw(st.integers(low, high))

    def uniform(self, low, high):
        return self._draw(st.floats(low, high, allow_nan=False, allow_infinity=False))

    def shuffled(self, items):
        return list(self._draw(st.permutations(list(items)))) if items else []


class RandomDraw(Draw):
    def __init__(self, rng: random.Random):
        self._rng = rng

    def choice(self, options):
        options = list(options)
        return options[self._rng.randrange(len(options))]

    def integer(self, low, high):
        return self._rng.randint(low, high)

    def uniform(self, low, high):
        return self._rng.uniform(low, high)

    def shuffled(self, items):
        items = list(items)
        self._rng.shuffle(items)
        return items


# ----------------------------------------------------------------------------------------
# Text: folding, Chinese numerals, quantities
# ----------------------------------------------------------------------------------------


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


def _trailing(number: int, unit: float) -> float:
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


def _distance_forms(metres: float, lang: str) -> list[Stated]:
    """Ways to state ``metres`` (whether each is correct is decided by the caller)."""
    km1, km2, whole = round(metres / 1000, 1), round(metres / 1000, 2), round(metres)
    km_units = ("公里", "千米", "km", " km") if lang == "zh" else (" km", "km", " kilometres", " kilometers")
    m_units = ("米", "m", " m") if lang == "zh" else (" m", " metres", " meters")
    forms = [Stated(f"{km1:.1f}{u}", km1 * 1000, 100) for u in km_units]
    forms += [Stated(f"{km2:.2f}{u}", km2 * 1000, 10) for u in km_units[:2]]
    forms += [Stated(f"{whole}{u}", whole, 1, _trailing(whole, 1)) for u in m_units]
    if whole >= 1000:
        forms.append(Stated(f"{whole:,} m", whole, 1, _trailing(whole, 1)))
    km0 = round(metres / 1000)
    if km0:
        forms.append(Stated(f"{km0}{km_units[0]}", km0 * 1000, 1000, _trailing(km0, 1000)))
        if lang == "en" and km0 < 10000:  # spelled: twelve kilometres
            forms.append(Stated(f"{en_words(km0)} kilometres", km0 * 1000, 1000, _trailing(km0, 1000)))
    if lang == "en" and whole < 10000:
        forms.append(Stated(f"{en_words(whole)} metres", whole, 1, _trailing(whole, 1)))
    return forms


def _distance_cn_forms(metres: float) -> list[Stated]:
    km1, whole = round(metres / 1000, 1), round(metres)
    coarse = _trailing(round(km1), 1000) if km1 == round(km1) else 0.0  # 十四公里 reads as whole km
    forms = [Stated(cn_decimal(km1, 1) + u, km1 * 1000, 100, coarse) for u in ("公里", "千米")]
    if whole < 100000:
        forms.append(Stated(cn_int(whole, liang=True) + "米", whole, 1, _trailing(whole, 1)))
    return forms


def acceptable_distance(stated: Stated, metres: float) -> bool:
    """Correct: within 5 %, or the usual one-decimal kilometres (``2.3公里`` for 2,289 m)."""
    return relative_error(stated.value, metres) <= 0.05 or (
        stated.step == 100 and metres >= 1000 and abs(stated.value - round(metres / 1000, 1) * 1000) < 1e-6)


def _hm(seconds: float) -> tuple[int, int]:
    return divmod(round(seconds / 60), 60)


def _hm_coarse(hours: int, minutes: int) -> float:
    return _trailing(minutes, 60) if minutes else _trailing(hours, 3600)


def _hours_form(text: str, value: float) -> Stated:
    if value % 1:
        return Stated(text, value * 3600, 360)
    return Stated(text, value * 3600, 3600, _trailing(int(value), 3600))


def _duration_forms(seconds: float, lang: str) -> list[Stated]:
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
        forms += [Stated(f"{total}{u}", total * 60, 60, _trailing(total, 60)) for u in ("分钟", "分")]
        if seconds < 3600:
            forms.append(Stated(f"{round(seconds)}秒", round(seconds), 1, _trailing(round(seconds), 1)))
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
        forms += [Stated(f"{total} {u}", total * 60, 60, _trailing(total, 60))
                  for u in ("minutes", "mins", "min")]
        if seconds < 3600:
            forms.append(Stated(f"{round(seconds)} seconds", round(seconds), 1, _trailing(round(seconds), 1)))
        for value in (round(seconds / 3600, 1), round(seconds / 3600)):
            if value:
                forms += [_hours_form(f"{value:g} {'hours' if value != 1 else 'hour'}", value),
                          _hours_form(f"{value:g} hrs", value)]
        # spelled: thirty-five minutes, one hour and twelve minutes, an hour, half an hour, two and a half hours
        if total < 10000:
            forms.append(Stated(f"{en_words(total)} minutes", total * 60, 60, _trailing(total, 60)))
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
    forms = [Stated(cn_int(total) + "分钟", total * 60, 60, _trailing(total, 60))]
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
    forms = _distance_cn_forms(metres) if style == "cn" else _distance_forms(metres, lang)
    if style == "standard":
        forms = forms[:1] if metres >= 1000 else [f for f in forms if f.step == 1][:1]
    return render_correct(d, forms, lambda s: acceptable_distance(s, metres))


def duration_text(d: Draw, seconds: float, lang: str, style: str = "any") -> Stated:
    forms = _duration_cn_forms(seconds) if style == "cn" else _duration_forms(seconds, lang)
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


# -- clock times -------------------------------------------------------------------------


def _period_zh(minutes: int) -> str:
    hour = minutes // 60
    return "凌晨" if hour < 5 else "早上" if hour < 8 else "上午" if hour < 12 else "中午" if hour < 13 else \
        "下午" if hour < 18 else "晚上"


def _hour12(minutes: int) -> int:
    return (minutes // 60) % 12 or 12


def clock_text(d: Draw, minutes: float, period_known: bool, lang: str) -> str:
    """A clock time; with an explicit period (上午/下午/AM/PM/24h) only when the period is known."""
    total = round(minutes) % 1440
    hour, minute = divmod(total, 60)
    h12 = _hour12(total)
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
    period = _period_zh(total)
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


def clock_distance(a: float, b: float) -> float:
    diff = abs(a - b) % 1440
    return min(diff, 1440 - diff)


# -- temperatures ----------------------------------------------------------------------------


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


# -- weather and traffic words ---------------------------------------------------------------

CONDITION_GROUP = {"晴": "clear", "多云": "cloudy", "阴": "cloudy", "少云": "cloudy", "小雨": "rain", "中雨": "rain",
                   "大雨": "rain", "暴雨": "rain", "阵雨": "rain", "雷阵雨": "rain", "雨": "rain", "小雪": "snow",
                   "中雪": "snow", "大雪": "snow", "雪": "snow", "雨夹雪": "snow", "雾": "fog", "大雾": "fog",
                   "霾": "haze", "沙尘暴": "dust", "扬沙": "dust", "浮尘": "dust"}
_ADJACENT_GROUPS = {"clear": {"cloudy"}, "cloudy": {"clear"}, "fog": {"haze"}, "haze": {"fog", "dust"},
                    "rain": {"snow"}, "snow": {"rain"}, "dust": {"haze"}}
CONDITION_EN = {"晴": ("sunny", "clear skies"), "多云": ("cloudy", "partly cloudy"), "阴": ("overcast",),
                "小雨": ("light rain",), "中雨": ("moderate rain",), "大雨": ("heavy rain",),
                "暴雨": ("a rainstorm",),
                "阵雨": ("showers", "rain showers"), "雷阵雨": ("thundershowers",), "小雪": ("light snow",),
                "中雪": ("moderate snow",), "大雪": ("heavy snow",), "雪": ("snow",), "雾": ("foggy", "fog"),
                "霾": ("hazy", "haze"), "沙尘暴": ("a sandstorm",)}
WRONG_CONDITIONS = ("晴", "暴雨", "大雪", "雷阵雨", "大雾", "霾", "沙尘暴", "阴", "小雨")
_NEGATED_CONDITION = {"rain": ("不会下雨", "没有雨", "it is not raining"), "snow": ("不会下雪", "没有雪", "no snow"),
                      "clear": ("不是晴天", "不晴", "it is not sunny"), "fog": ("没有雾", "不会起雾", "no fog"),
                      "haze": ("没有雾霾", "没有霾", "no haze"), "cloudy": ("不是阴天也没有云", "没有云", "no clouds")}


def condition_group(condition: str) -> str:
    return CONDITION_GROUP.get(condition, condition)


def wrong_conditions(true_groups: set[str]) -> list[str]:
    """Conditions clearly unlike every true one (neither the same nor an adjacent group)."""
    banned = set(true_groups) | {g for t in true_groups for g in _ADJACENT_GROUPS.get(t, ())}
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
_NEGATED_TRAFFIC = {"畅通": (("不畅通", "不太通畅"), ("traffic is not clear", "it is not flowing")),
                    "缓行": (("没有缓行", "一点也不慢"), ("traffic is not slow",)),
                    "拥堵": (("一点都不堵", "没有堵车", "不拥堵"), ("it is not congested", "there is no congestion")),
                    "严重拥堵": (("不堵",), ("it is not congested",))}


#: Unambiguous words only, for the *wrong* state of a wrong answer (no intensifier a reader could
#: take for the true state: "很堵" on a 拥堵 road is not a claim of 严重拥堵).
PLAIN_TRAFFIC_WORDS = {"畅通": (("畅通", "一路畅通"), ("traffic is clear", "there is no congestion")),
                       "缓行": (("缓行", "行驶缓慢"), ("traffic is slow-moving",)),
                       "拥堵": (("拥堵", "严重堵车"), ("it is congested", "there is heavy traffic")),
                       "严重拥堵": (("严重拥堵",), ("it is severely congested",))}
_ADJACENT_STATES = {"拥堵": {"严重拥堵"}, "严重拥堵": {"拥堵"}}


def traffic_text(d: Draw, state: str, lang: str, plain: bool = False) -> str:
    zh, en = (PLAIN_TRAFFIC_WORDS if plain else TRAFFIC_WORDS)[state]
    return d.choice(en if lang == "en" else zh)


FILLERS_ZH = ("好的，", "呃，", "嗯，", "根据查询结果，", "帮您查到了：", "")
FILLERS_EN = ("Sure, ", "OK. ", "Here you go: ", "Well, ", "")
GENERIC_ANSWERS = ("好的", "嗯嗯", "I have planned the route for you.", "已为您规划路线", "已为您查询到结果，请查看。",
                   "Here is the information you asked for.", "好的，马上为您处理。", "收到")
NO_RESULT_ZH = ("没有找到相关结果。", "暂无数据。", "抱歉，未找到。")
NO_RESULT_EN = ("Sorry, nothing was found.", "No results.")
PROVINCES = ("北京市", "上海市", "天津市", "重庆市", "河北省", "山西省", "辽宁省", "吉林省", "黑龙江省", "江苏省", "浙江省",
             "安徽省", "福建省", "江西省", "山东省", "河南省", "湖北省", "湖南省", "广东省", "海南省", "四川省", "贵州省",
             "云南省", "陕西省", "甘肃省", "青海省", "广西壮族自治区", "内蒙古自治区", "西藏自治区", "宁夏回族自治区",
             "新疆维吾尔自治区")
SUPERSTRING_SUFFIXES = ("分店", "东门", "(第二分店)", "第二分部", "停车场", "北区", "二期", "(南门)", "二店")


def join_clauses(d: Draw, clauses: list[str], lang: str) -> str:
    """Clauses joined into one answer, with an optional filler in front."""
    clauses = [c for c in clauses if c]
    if lang == "en":
        body = d.choice((". ", "; ", ", ")).join(clauses)
        return d.choice(FILLERS_EN) + body.rstrip(".") + "."
    return d.choice(FILLERS_ZH) + d.choice(("，", "。", "；")).join(clauses) + "。"


# ----------------------------------------------------------------------------------------
# Facts of one episode, read from its replayed evidence
# ----------------------------------------------------------------------------------------

ROUTE_SCENARIOS = ("Point-to-Point Planning", "Multi-stop Planning", "Option-Constrained Route Planning",
                   "Route-Constrained Planning", "Route Property Query", "Arrival/Departure Time Query")
FAMILY_OF = {**{s: "route" for s in ROUTE_SCENARIOS}, "POI Query": "poi", "Nearby Query": "nearby",
             "Geolocation Query": "geolocation", "Weather Query": "weather", "Traffic Info Query": "traffic"}
FAMILIES = ("route", "poi", "nearby", "geolocation", "weather", "traffic")
ROUTE_TOOLS = {"driving_route": "driving", "walking_route": "walking", "bicycling_route": "cycling",
               "bus_route": "transit"}
_DAY_OFFSET = {"今天": 0, "明天": 1, "后天": 2, "大后天": 3}


@dataclass(frozen=True)
class Leg:
    """A true part of the chosen route, stated before the total (zh and en)."""

    zh: str
    en: str


@dataclass(repr=False)
class EpisodeFacts:
    """What a correct answer to one episode may state, read from the replayed gold evidence."""

    episode: Episode
    records: list[CallRecord]
    family: str
    reference: tuple[str, int | None]
    keyword: str = ""
    city: str = ""
    # routes
    mode: str = ""
    options: tuple[RouteOption, ...] = ()
    chosen: int | None = None
    legs: tuple[Leg, ...] = ()
    excluded: tuple[str, ...] = ()
    strategies: tuple[str, ...] = ()
    waypoints: tuple[str, ...] = ()
    destination: str = ""
    clock: ClockFacts | None = None
    # information tasks
    places: tuple[Place, ...] = ()
    place_distances: tuple[float | None, ...] = ()  # nearby: each place's distance from the centre, as returned
    geocode: GeocodeFacts | None = None
    province: str = ""
    weather: WeatherFacts | None = None
    day_index: int = 0
    day_ambiguous: bool = False
    several_days: bool = False  # 未来几天, 这几天: every forecast day from today is asked
    traffic: TrafficFacts | None = None
    # places of other episodes that share nothing with this one's evidence
    foreign_places: tuple[Place, ...] = ()
    other_branches: tuple[Place, ...] = ()  # same brand as a returned place, another branch far away
    foreign_addresses: tuple[str, ...] = ()
    foreign_townships: tuple[str, ...] = ()

    def __repr__(self) -> str:  # short: hypothesis prints drawn values on failure
        return f"EpisodeFacts({self.episode_id!r}, {self.scenario!r})"

    @property
    def episode_id(self) -> str:
        return self.episode.episode_id

    @property
    def scenario(self) -> str:
        return self.episode.task_scenario

    @property
    def option(self) -> RouteOption | None:
        return self.options[self.chosen] if self.chosen is not None and self.options else None

    @property
    def evidence_names(self) -> list[str]:
        names = [p.name for p in self.places] + [p.address for p in self.places]
        if self.geocode is not None:
            g = self.geocode
            names += [g.formatted_address, g.district, g.township, *g.roads, *g.poi_names]
        return [n for n in names if n]

    def describe(self) -> dict[str, Any]:
        """The facts, for assertion messages."""
        out: dict[str, Any] = {"episode_id": self.episode_id, "scenario": self.scenario,
                               "query": self.episode.query, "reference": self.reference}
        if self.option is not None:
            out["chosen"] = {"index": self.chosen, "distance_m": self.option.distance_m,
                             "duration_s": self.option.duration_s, "lines": list(self.option.lines)}
        if self.clock is not None:
            out["clock"] = {"value": round(self.clock.value), "target": self.clock.target,
                            "verb": self.clock.verb, "period_known": self.clock.period_known}
        if self.places:
            out["places"] = [(p.name, p.address) for p in self.places[:5]]
        if self.geocode is not None:
            out["geocode"] = self.geocode.formatted_address
        if self.weather is not None:
            out["weather"] = {"condition": self.weather.condition, "temperature": self.weather.temperature,
                              "days": [(x.date, x.condition, x.low, x.high) for x in self.weather.days],
                              "day_index": self.day_index}
        if self.traffic is not None:
            out["traffic"] = {"state": self.traffic.state, "mentioned": sorted(self.traffic.states_mentioned),
                              "description": self.traffic.description}
        return out


def _returned_distance(response: Any, name: str) -> float | None:
    body = response.get("data") if isinstance(response, dict) and isinstance(response.get("data"), dict) else response
    for item in (body.get("pois") or []) if isinstance(body, dict) else []:
        if isinstance(item, dict) and item.get("name") == name:
            try:
                return float(item["distance"])
            except (KeyError, TypeError, ValueError):
                return None
    return None


def _response(records: list[CallRecord], tool: str) -> Any:
    found = [r.response for r in records if r.name == tool and r.response is not None]
    return found[-1] if found else None


def _unwrap_route(response: Any) -> dict[str, Any]:
    body = response
    while isinstance(body, dict) and "route" not in body and isinstance(body.get("data"), dict):
        body = body["data"]
    return body.get("route", {}) if isinstance(body, dict) else {}


_LEG_DISTANCE = re.compile(r"(\d+)米")


def _route_legs(tool: str, response: Any, index: int) -> tuple[Leg, ...]:
    """The first walking leg of a transit plan, or the first step of a path, when stated in metres."""
    route = _unwrap_route(response)
    legs: list[Leg] = []
    if tool == "bus_route":
        transits = route.get("transits") or []
        transit = transits[index] if index < len(transits) and isinstance(transits[index], dict) else {}
        segments = transit.get("segments") or []
        first = segments[0] if segments and isinstance(segments[0], dict) else {}
        walking = first.get("walking") if isinstance(first.get("walking"), dict) else {}
        distance = str(walking.get("distance", ""))
        if distance.isdigit() and int(distance) > 0:
            lines = (first.get("bus") or {}).get("buslines") if isinstance(first.get("bus"), dict) else []
            departure = lines[0].get("departure_stop") if lines and isinstance(lines[0], dict) else None
            stop = departure.get("name") if isinstance(departure, dict) else ""
            stop = stop if isinstance(stop, str) else ""
            station = stop if stop.endswith("站") else stop + "站"
            legs.append(Leg(f"先步行{distance}米" + (f"到{station}" if stop else ""),
                            f"first walk {distance} m" + (f" to {stop}" if stop else "")))
        walking_total = str(transit.get("walking_distance", ""))
        if walking_total.isdigit() and int(walking_total) > 0 and int(walking_total) != int(distance or 0):
            legs.append(Leg(f"需步行{walking_total}米", f"walking {walking_total} m"))
    elif tool in ("driving_route", "walking_route"):
        paths = route.get("paths") or []
        path = paths[index] if index < len(paths) and isinstance(paths[index], dict) else {}
        steps = path.get("steps") or []
        step = steps[0] if steps and isinstance(steps[0], dict) else {}
        instruction = step.get("instruction") if isinstance(step.get("instruction"), str) else ""
        metres = _LEG_DISTANCE.search(instruction)
        if instruction and metres:
            road = step.get("road_name") if isinstance(step.get("road_name"), str) else ""
            verb = "drive" if tool == "driving_route" else "walk"
            legs.append(Leg(f"先{instruction.rstrip('。')}",
                            f"first {verb} {metres.group(1)} m" + (f" along {road}" if road else "")))
    return tuple(legs)


def _route_facts(facts: EpisodeFacts) -> bool:
    route_records = [r for r in facts.records if r.name in ROUTE_TOOLS and r.response is not None]
    if not route_records:
        return False
    record = route_records[-1]
    options = route_options(record.response) or []
    _, index = facts.reference
    if not options or index is None or not 0 <= index < len(options):
        return False
    option = options[index]
    if option.distance_m is None or option.duration_s is None or option.duration_s <= 0:
        return False
    slots = facts.episode.gold_slots
    facts.mode = ROUTE_TOOLS[record.name]
    facts.options, facts.chosen = tuple(options), index
    facts.legs = _route_legs(record.name, record.response, index)
    facts.excluded = tuple(slots.get("excluded_lines") or ())
    facts.strategies = tuple(s for s in (slots.get("strategy") or ()) if isinstance(s, str))
    facts.waypoints = tuple(w for w in (slots.get("waypoints") or ()) if isinstance(w, str))
    facts.destination = str(slots.get("destination") or facts.episode.fields.get("query_end_poi") or "")
    facts.keyword = facts.destination
    if facts.scenario == "Arrival/Departure Time Query":
        facts.clock = clock_facts(facts.episode, option.duration_s)
    return True


#: Words of a question about several days: such a question is answered with every forecast day from today.
_SEVERAL_DAYS_WORDS = ("几天", "未来", "接下来", "这周", "本周", "一周", "最近")


def _forecast_day(episode: Episode, weather: WeatherFacts) -> tuple[int, bool]:
    longest_first = sorted(_DAY_OFFSET.items(), key=lambda kv: -len(kv[0]))
    word = str(episode.gold_slots.get("time") or "")
    offset = next((v for k, v in longest_first if k in word), None)
    if offset is None:
        offset = next((v for k, v in longest_first if k in episode.query), None)
    dates = [day.date for day in weather.days]
    base = dates.index(weather.updated) if weather.updated in dates else 0
    return min(base + (offset or 0), len(dates) - 1), offset is None


def _info_facts(facts: EpisodeFacts) -> bool:
    slots, records = facts.episode.gold_slots, facts.records
    facts.city = str(slots.get("city") or facts.episode.fields.get("city") or "")
    if facts.family == "poi":
        response = _response(records, "query_poi")
        facts.places = tuple(places(response))[:1] if response is not None else ()
        facts.keyword = str(slots.get("keyword") or "")
        address = facts.places[0].address if facts.places else ""
        facts.province = address.split()[0] if address else ""
        return bool(facts.places)
    if facts.family == "nearby":
        response = _response(records, "search_around_poi")
        facts.places = tuple(nearby_pois(response) or ()) if response is not None else ()
        facts.place_distances = tuple(_returned_distance(response, p.name) for p in facts.places)
        facts.keyword = str(slots.get("keyword") or "")
        return bool(facts.places)
    if facts.family == "geolocation":
        response = _response(records, "reverse_geocoding")
        facts.geocode = geocode_facts(response) if response is not None else None
        if facts.geocode is None or not facts.geocode.formatted_address:
            return False
        component = _geocode_component(response)
        facts.province = component.get("province") if isinstance(component.get("province"), str) else ""
        city = component.get("city")
        facts.city = city if isinstance(city, str) and city else facts.city
        return True
    if facts.family == "weather":
        response = _response(records, "weather_query")
        facts.weather = weather_facts(response) if response is not None else None
        if facts.weather is None or facts.weather.is_empty:
            return False
        facts.city = facts.weather.city or facts.city
        facts.keyword = facts.city
        if facts.weather.is_forecast:
            facts.day_index, facts.day_ambiguous = _forecast_day(facts.episode, facts.weather)
            facts.several_days = any(w in facts.episode.query for w in _SEVERAL_DAYS_WORDS)
        return True
    if facts.family == "traffic":
        response = _response(records, "traffic_status")
        facts.traffic = traffic_facts(response) if response is not None else None
        facts.keyword = str(slots.get("road") or "")
        return facts.traffic is not None and facts.traffic.state in TRAFFIC_WORDS
    return False


def _geocode_component(response: Any) -> dict[str, Any]:
    body = response
    while isinstance(body, dict) and "regeocode" not in body and isinstance(body.get("data"), dict):
        body = body["data"]
    regeo = body.get("regeocode") if isinstance(body, dict) else None
    component = regeo.get("addressComponent") if isinstance(regeo, dict) else None
    return component if isinstance(component, dict) else {}


_TOWNSHIP_PREFIX = re.compile(r"^[\u4e00-\u9fa5]{1,6}?(?:街道|镇|乡)")
_STREET_NUMBER = re.compile(r"^([\u4e00-\u9fa5A-Za-z0-9]{1,12}?(?:大道|大街|公路|胡同|路|街|道|巷)[0-9-]+号)")


def street_and_number(address: str, admin: Sequence[str] = ()) -> str:
    """The street-and-number part of an address (``宝石东路209号``), or ''.

    ``admin`` are the administrative names the address starts with (province, city, district,
    township), stripped first; a leading ``XX街道``/``XX镇`` is stripped too.
    """
    rest = address.split()[-1] if address.split() else ""
    for piece in admin:
        if piece and rest.startswith(piece):
            rest = rest[len(piece):]
    rest = _TOWNSHIP_PREFIX.sub("", rest)
    match = _STREET_NUMBER.match(rest)
    return match.group(1) if match else ""


def facts_of(episode: Episode) -> EpisodeFacts | None:
    """The facts of one episode, or None when its evidence cannot support a correct answer."""
    family = FAMILY_OF.get(episode.task_scenario)
    if family is None:
        return None
    facts = EpisodeFacts(episode, gold_calls_as_records(episode), family, reference_answer(episode))
    ok = _route_facts(facts) if family == "route" else _info_facts(facts)
    return facts if ok else None


def brand(name: str) -> str:
    """``星巴克(银河路店)`` -> ``星巴克`` (the name without its branch in brackets)."""
    return re.split(r"[(（]", name)[0].strip()


def _query_points(facts: EpisodeFacts) -> list[tuple[float, float]]:
    """Where the episode's lookups were centred (the geocoded point, the nearby-search centre)."""
    points = []
    for record in facts.records:
        args = record.arguments if isinstance(record.arguments, dict) else {}
        if record.name == "reverse_geocoding":
            try:
                points.append((float(args.get("longitude")), float(args.get("latitude"))))
            except (TypeError, ValueError):
                pass
        if record.name == "search_around_poi" and isinstance(args.get("location"), str):
            try:
                lng, lat = (float(x) for x in args["location"].split(","))
                points.append((lng, lat))
            except ValueError:
                pass
    return points


def _attach_foreign(all_facts: list[EpisodeFacts]) -> None:
    """Give each episode places of *other* episodes that share no name, address or site with its own."""
    pool: list[tuple[str, Place]] = []
    addresses: list[tuple[str, str, str]] = []  # (episode id, formatted address, township)
    for facts in all_facts:
        for record in facts.records:
            if record.name in ("query_poi", "search_around_poi") and record.response is not None:
                pool += [(facts.episode_id, p) for p in places(record.response) if p.location is not None]
        if facts.geocode is not None:
            addresses.append((facts.episode_id, facts.geocode.formatted_address, facts.geocode.township))
    for facts in all_facts:
        own_names = facts.evidence_names + [facts.keyword, facts.episode.query, facts.city]
        own_sites = [p.location for p in facts.places if p.location is not None] + _query_points(facts)
        rng = random.Random(f"foreign:{facts.episode_id}")
        chosen: list[Place] = []
        seen: set[str] = set()
        for owner, place in rng.sample(pool, len(pool)):
            if owner == facts.episode_id or fold(place.name) in seen or len(fold(place.name)) < 3:
                continue
            if any(related(place.name, n) or (place.address and related(place.address, n))
                   for n in own_names if n):
                continue
            if any(haversine_m(place.location, site) < 2000 for site in own_sites):
                continue
            chosen.append(place)
            seen.add(fold(place.name))
            if len(chosen) >= 40:
                break
        facts.foreign_places = tuple(chosen)
        brands = {brand(p.name) for p in facts.places if brand(p.name) != p.name and len(brand(p.name)) >= 2}
        branches = {fold(p.name): p for _, p in pool if brand(p.name) in brands
                    and not any(related(p.name, n) for n in facts.evidence_names)
                    and all(haversine_m(p.location, site) >= 2000 for site in own_sites)}
        facts.other_branches = tuple(branches.values())[:10]
        if facts.geocode is not None:
            g = facts.geocode
            own = [g.formatted_address, g.district, g.township, facts.city]
            facts.foreign_addresses = tuple(a for e, a, _ in addresses if e != facts.episode_id and not any(
                related(a, o) for o in own if o))[:20]
            facts.foreign_townships = tuple(t for e, _, t in addresses if e != facts.episode_id and t
                                            and not any(related(t, n) for n in facts.evidence_names))[:20]


def build_facts(episodes: Iterable[Episode]) -> list[EpisodeFacts]:
    """Facts of every episode whose evidence supports a correct answer (see :func:`usable_facts`)."""
    all_facts = [f for f in (facts_of(e) for e in episodes) if f is not None]
    _attach_foreign(all_facts)
    return all_facts


# ----------------------------------------------------------------------------------------
# Scoring one answer
# ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Answer:
    kind: str
    correct: bool
    text: str
    route_index: int | None = None
    calls: str = "gold"  # "gold": every gold call served; "none": no call at all


@dataclass(frozen=True)
class Outcome:
    fpr: float
    dr: float
    verdict: dict[str, Any]

    @property
    def leaked(self) -> bool:
        return self.fpr == 1.0


def score(facts: EpisodeFacts, answer: Answer) -> Outcome:
    calls = facts.records if answer.calls == "gold" else []
    trajectory = Trajectory(episode_id=facts.episode_id, calls=calls,
                            finish=FinishRecord(answer=answer.text, route_index=answer.route_index))
    metrics, verdict = score_episode(facts.episode, trajectory)
    return Outcome(metrics["FPR"], metrics["DR"], verdict.to_dict())


def explain(facts: EpisodeFacts, answer: Answer, outcome: Outcome) -> str:
    """An assertion message: the mutation, the answer, the evidence facts and the verdict."""
    return json.dumps({"kind": answer.kind, "should_pass": answer.correct, "answer": answer.text,
                       "route_index": answer.route_index, "FPR": outcome.fpr, "DR": outcome.dr,
                       "facts": facts.describe(), "verdict": outcome.verdict}, ensure_ascii=False, indent=1,
                      default=str)


class FactsPool(list):
    """A list of :class:`EpisodeFacts` with a one-line repr (it is a test argument)."""

    def __repr__(self) -> str:
        return f"<{len(self)} usable episodes>"


def usable_facts(episodes: Sequence[Episode]) -> tuple[list[EpisodeFacts], dict[str, int]]:
    """Facts of non-blocking episodes whose reference answer passes, and why the rest were skipped."""
    episodes = list(episodes)
    blocked = blocking_episode_ids(audit_episodes(episodes))
    skipped = {"blocking_audit": 0, "no_usable_evidence": 0, "reference_fails": 0}
    candidates = []
    for episode in episodes:
        if episode.episode_id in blocked:
            skipped["blocking_audit"] += 1
        else:
            candidates.append(episode)
    facts_list = build_facts(candidates)
    skipped["no_usable_evidence"] = len(candidates) - len(facts_list)
    usable = FactsPool()
    for facts in facts_list:
        text, index = facts.reference
        if score(facts, Answer("reference", True, text, index)).fpr == 1.0:
            usable.append(facts)
        else:
            skipped["reference_fails"] += 1
    return usable, skipped


def load_usable(paths: Iterable[Path] = (SAMPLE_CSV, BUNDLED)) -> tuple[list[EpisodeFacts], dict[str, Any]]:
    """Usable facts of the real sample and the bundled synthetic set (missing files are skipped)."""
    episodes: list[Episode] = []
    sources = {}
    for path in paths:
        if Path(path).exists():
            loaded = list(load_episodes(path))
            episodes += loaded
            sources[str(path)] = len(loaded)
    usable, skipped = usable_facts(episodes)
    return usable, {"sources": sources, "episodes": len(episodes), "usable": len(usable), "skipped": skipped}


# ----------------------------------------------------------------------------------------
# The mutation registry
# ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Mutation:
    """A named way to answer: ``make(facts, draw)`` builds the answer; ``applies(facts)`` says where."""

    kind: str
    correct: bool
    families: tuple[str, ...]
    make: Callable[[EpisodeFacts, Draw], Answer]
    applies: Callable[[EpisodeFacts], bool]

    def usable_on(self, facts: EpisodeFacts) -> bool:
        return facts.family in self.families and self.applies(facts)


CORRECT: dict[str, Mutation] = {}
WRONG: dict[str, Mutation] = {}


def mutation(kind: str, *, correct: bool, families: Sequence[str] = FAMILIES,
             applies: Callable[[EpisodeFacts], bool] = lambda facts: True):
    """Register ``fn(facts, draw) -> str | (str, route_index) | Answer`` under ``kind``."""
    registry = CORRECT if correct else WRONG

    def register(fn: Callable[[EpisodeFacts, Draw], Any]) -> Callable[[EpisodeFacts, Draw], Any]:
        assert kind not in registry, kind

        def make(facts: EpisodeFacts, d: Draw) -> Answer:
            made = fn(facts, d)
            if isinstance(made, Answer):
                return made
            text, index = made if isinstance(made, tuple) else (made, facts.chosen)
            return Answer(kind, correct, text, index)
        registry[kind] = Mutation(kind, correct, tuple(families), make, applies)
        return fn
    return register


def applicable(registry: dict[str, Mutation], facts: EpisodeFacts) -> list[Mutation]:
    return [m for m in registry.values() if m.usable_on(facts)]


# -- routes: building blocks -----------------------------------------------------------------

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
    option = f.option
    assert option is not None and option.distance_m is not None and option.duration_s is not None
    distance = distance if distance is not None else distance_text(d, option.distance_m, lang, style).text
    duration = duration if duration is not None else duration_text(d, option.duration_s, lang, style).text
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


def _lang(d: Draw) -> str:
    return d.choice(("zh", "zh", "en"))


def _route(f: EpisodeFacts) -> bool:
    return f.family == "route"


# -- routes: correct ---------------------------------------------------------------------------


@mutation("plain", correct=True)
def _plain(f: EpisodeFacts, d: Draw):
    """The reference facts restated in another order, with a filler."""
    if f.family == "route":
        return route_answer(f, d, "zh")
    return INFO_PARAPHRASE[f.family](f, d, "zh", "plain")


CLOSINGS = {"zh": ("祝您一路顺风！", "祝您一路平安！", "希望对您有帮助。", "如需其他帮助请告诉我。", "以上信息仅供参考。",
                   "数据来自地图服务。", "请注意交通安全。", "请注意行车安全。"),
            "en": ("Have a safe trip!", "Hope this helps.", "Let me know if you need anything else.",
                   "This information is for reference only.", "Drive safely!")}


@mutation("closing_remark", correct=True)
def _closing_remark(f: EpisodeFacts, d: Draw):
    """The plain answer and a courtesy an assistant ends with (祝您一路顺风！, Hope this helps.)."""
    return _plain(f, d) + d.choice(CLOSINGS[d.choice(("zh", "en"))])


_AMOUNT = re.compile(r"-?\d+(?:\.\d+)?\s*(?:公里|千米|米|分钟|小时|℃|°C|度|km|min|%)")


@mutation("markdown", correct=True)
def _markdown(f: EpisodeFacts, d: Draw):
    """The plain answer as a chat model formats it: amounts in bold, clauses as bullets or numbered lines, a
    heading, a quote mark (全程**15.3公里**；- 用时：**25分钟**)."""
    text = _plain(f, d)
    if d.coin():
        text = _AMOUNT.sub(lambda m: f"**{m.group(0)}**", text)
    layout = d.choice(("inline", "bullets", "numbered", "heading", "quote"))
    clauses = [c for c in re.split(r"(?<=[，。；])", text) if c.strip()]
    if layout == "bullets":
        text = "\n".join(f"- {c}" for c in clauses)
    elif layout == "numbered":
        text = "\n".join(f"{i}. {c}" for i, c in enumerate(clauses, 1))
    elif layout == "heading":
        text = d.choice(("### 查询结果\n", "## Result\n")) + text
    elif layout == "quote":
        text = "> " + text
    return text


@mutation("mixed_units", correct=True, families=("route",))
def _mixed_units(f: EpisodeFacts, d: Draw):
    return route_answer(f, d, _lang(d), style="any")


@mutation("chinese_numerals", correct=True, families=("route", "weather"))
def _chinese_numerals(f: EpisodeFacts, d: Draw):
    if f.family == "weather":
        return INFO_PARAPHRASE["weather"](f, d, "zh", "cn")
    return route_answer(f, d, "zh", style="cn")


@mutation("coarse_rounding", correct=True, families=("route",))
def _coarse_rounding(f: EpisodeFacts, d: Draw):
    """The coarsest statement still within 5 % (or the usual one-decimal km / whole minutes)."""
    option, lang = f.option, _lang(d)
    distances = [s for s in _distance_forms(option.distance_m, lang)
                 if acceptable_distance(s, option.distance_m)]
    durations = [s for s in _duration_forms(option.duration_s, lang)
                 if acceptable_duration(s, option.duration_s)]
    coarse_d = max(s.step for s in distances)
    coarse_t = max(s.step for s in durations)
    return route_answer(f, d, lang, distance=d.choice([s for s in distances if s.step == coarse_d]).text,
                        duration=d.choice([s for s in durations if s.step == coarse_t]).text)


@mutation("english", correct=True)
def _english(f: EpisodeFacts, d: Draw):
    if f.family == "route":
        return route_answer(f, d, "en", style=d.choice(("standard", "any")))
    return INFO_PARAPHRASE[f.family](f, d, "en", "plain")


@mutation("leg_before_total", correct=True, families=("route",), applies=lambda f: bool(f.legs))
def _leg_before_total(f: EpisodeFacts, d: Draw):
    """A true leg (first walk of a transit plan, first step of a path) stated before the total."""
    legs = d.subset(f.legs, 1, len(f.legs))
    return route_answer(f, d, _lang(d), legs=sorted(legs, key=f.legs.index),
                        style=d.choice(("standard", "any")))


@mutation("constraint_acknowledged", correct=True, families=("route",),
          applies=lambda f: bool(f.excluded or f.strategies or f.waypoints))
def _constraint_acknowledged(f: EpisodeFacts, d: Draw):
    """The user's constraint restated as satisfied (已避开1号线 / 不走高速 / 途经X)."""
    lang = _lang(d)
    notes = []
    for line in f.excluded:
        notes.append(f"avoiding {line}" if lang == "en" else d.choice((f"已避开{line}", f"不坐{line}")))
    for strategy in f.strategies:
        zh, en = _STRATEGY_ACK.get(strategy, (strategy, strategy))
        notes.append(en if lang == "en" else d.choice((f"已按{zh}规划", f"{zh}的路线")))
    for waypoint in f.waypoints:
        notes.append(f"via {waypoint}" if lang == "en" else d.choice((f"途经{waypoint}", f"中途经过{waypoint}")))
    return route_answer(f, d, lang, extra=notes, extra_first=d.coin())


# -- routes: wrong ------------------------------------------------------------------------------


def _wrong_distance(d: Draw, metres: float, lang: str) -> Stated:
    return wrong_quantity(d, metres, lambda v: _distance_forms(v, lang))


def _wrong_duration(d: Draw, seconds: float, lang: str) -> Stated:
    return wrong_quantity(d, seconds, lambda v: [s for s in _duration_forms(v, lang) if s.step <= 360])


def _route_with_wrong_quantity(f: EpisodeFacts, d: Draw, build: Callable[[str, str, str], str]) -> str:
    """Replace the distance or the duration statement with ``build(right_text, wrong_text, lang)``."""
    lang, option = _lang(d), f.option
    if d.coin():
        right = distance_text(d, option.distance_m, lang, "standard")
        wrong = _wrong_distance(d, option.distance_m, lang)
        return route_answer(f, d, lang, distance=build(right.text, wrong.text, lang))
    right = duration_text(d, option.duration_s, lang, "standard")
    wrong = _wrong_duration(d, option.duration_s, lang)
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
        stated = Stated("", other * unit, step, _trailing(round(other), unit) if digits == 0 else 0.0)
        if other > 0 and differs(stated, actual):
            return other
        fraction, sign = fraction + 0.05, -sign
    raise AssertionError(f"no range end for {actual}")


@mutation("hedge_range", correct=False, families=("route",))
def _hedge_range(f: EpisodeFacts, d: Draw):
    """``12到15公里``: a range for one quantity, one end right, the other clearly off."""
    lang, option = _lang(d), f.option
    if d.coin():
        metres = option.distance_m
        unit, scale, digits = ("公里" if lang == "zh" else " km", 1000, 1) if metres >= 1000 else \
            ("米" if lang == "zh" else " m", 1, 0)
        right = round(metres / scale, digits)
        low, high = sorted((right, _range_end(d, right, metres, scale, digits)))
        text = f"{low:.{digits}f}{'到' if lang == 'zh' else ' to '}{high:.{digits}f}{unit}"
        return route_answer(f, d, lang, distance=text)
    minutes = round(option.duration_s / 60)
    low, high = sorted((minutes, round(_range_end(d, minutes, option.duration_s, 60, 0))))
    english = (f"{low}-{high} minutes", f"between {low} and {high} minutes")
    text = f"{low}到{high}分钟" if lang == "zh" else d.choice(english)
    return route_answer(f, d, lang, duration=text)


@mutation("contradiction", correct=False, families=("route",))
def _contradiction(f: EpisodeFacts, d: Draw):
    """The right value, then a correction to a wrong one (``……实际上是20公里``)."""
    lang, option = _lang(d), f.option
    if d.coin():
        wrong = _wrong_distance(d, option.distance_m, lang).text
    else:
        wrong = _wrong_duration(d, option.duration_s, lang).text
    tail = d.choice((f"Actually, it is {wrong}", f"Correction: {wrong}")) if lang == "en" else \
        d.choice((f"……实际上是{wrong}", f"不对，应该是{wrong}", f"更正一下：是{wrong}"))
    return route_answer(f, d, lang, extra=[tail])


@mutation("route_stuffing", correct=False, families=("route",))
def _route_stuffing(f: EpisodeFacts, d: Draw):
    """Every distance and duration from 0.2x to 3x, the right ones among them."""
    option = f.option
    factors = [0.2 + 0.1 * i for i in range(29)]
    distances = "、".join(f"{option.distance_m * k / 1000:.1f}公里" for k in factors)
    durations = "、".join(f"{round(option.duration_s * k / 60)}分钟" for k in factors)
    right = route_answer(f, d, "zh")
    return f"{right}也可能是{distances}；用时可能是{durations}。"


def _standard(value: float, kind: str) -> Stated:
    """The standard statement of a distance (1-decimal km, or metres) or a duration (h + min)."""
    forms = _distance_forms(value, "zh") if kind == "distance" else _duration_forms(value, "zh")
    if kind == "distance" and value < 1000:
        return next(s for s in forms if s.step == 1)
    return forms[0]


def _other_option(f: EpisodeFacts) -> RouteOption | None:
    """Another option whose distance and duration both differ clearly from the chosen one's."""
    option = f.option
    for other in f.options:
        if other.index == option.index or other.distance_m is None or other.duration_s is None:
            continue
        if differs(_standard(other.distance_m, "distance"), option.distance_m, 0.08) and \
                differs(_standard(other.duration_s, "duration"), option.duration_s, 0.08):
            return other
    return None


@mutation("other_option_facts", correct=False, families=("route",),
          applies=lambda f: _other_option(f) is not None)
def _other_option_facts(f: EpisodeFacts, d: Draw):
    """route_index names one option, the text describes another (distance and duration 8 %+ apart)."""
    other = _other_option(f)
    lang = _lang(d)
    return route_answer(f, d, lang, distance=distance_text(d, other.distance_m, lang, "standard").text,
                        duration=duration_text(d, other.duration_s, lang, "standard").text, lines=other.lines)


def _with_clock(f: EpisodeFacts) -> bool:
    return f.clock is not None


def _known_period(f: EpisodeFacts) -> bool:
    return f.clock is not None and f.clock.period_known


def _explicit_period(d: Draw, minutes: float, lang: str) -> str:
    total = round(minutes) % 1440
    if lang == "en":
        return f"{_hour12(total)}:{total % 60:02d} {'AM' if total < 720 else 'PM'}"
    period = _period_zh(total)
    hour = total // 60 if period in ("凌晨", "早上", "上午", "中午") else total // 60 - 12
    return f"{period}{hour}点{total % 60}分" if total % 60 else f"{period}{hour}点"


@mutation("twelve_hour_shift", correct=False, families=("route",), applies=_known_period)
def _twelve_hour_shift(f: EpisodeFacts, d: Draw):
    """The right clock time 12 hours off, with an explicit period (凌晨5点30分 for 17:30)."""
    lang = _lang(d)
    return route_answer(f, d, lang, clock=_explicit_period(d, f.clock.value + 720, lang))


@mutation("clock_off", correct=False, families=("route",), applies=_with_clock)
def _clock_off(f: EpisodeFacts, d: Draw):
    """A departure/arrival time off by 6-40 % of the trip (at least 3 minutes)."""
    lang, minutes = _lang(d), f.option.duration_s / 60
    sign = d.choice((-1, 1))
    shift = max(3, round(d.uniform(0.06, 0.40) * minutes))
    while round(f.clock.value + sign * shift) % 5 == 0:  # 8点半 for 8:27 could be a rounding: avoid round marks
        shift += 1
    wrong = f.clock.value + sign * shift
    assert clock_distance(wrong, f.clock.value) >= 3
    return route_answer(f, d, lang, clock=clock_text(d, wrong, f.clock.period_known, lang))


@mutation("leave_at_deadline", correct=False, families=("route",),
          applies=lambda f: f.clock is not None and f.clock.verb == "出发" and f.option.duration_s >= 600)
def _leave_at_deadline(f: EpisodeFacts, d: Draw):
    """The departure time is the query's own arrival deadline."""
    lang = _lang(d)
    return route_answer(f, d, lang, clock=clock_text(d, f.clock.target, f.clock.period_known, lang))


@mutation("recommend_excluded_line", correct=False, families=("route",), applies=lambda f: bool(f.excluded))
def _recommend_excluded_line(f: EpisodeFacts, d: Draw):
    """Recommends riding a line the user excluded."""
    lang, line = _lang(d), d.choice(f.excluded)
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
    other = _excluded_option(f)
    lang = _lang(d)
    text = route_answer(f, d, lang, distance=distance_text(d, other.distance_m, lang, "standard").text,
                        duration=duration_text(d, other.duration_s, lang, "standard").text, lines=other.lines)
    return text, other.index


@mutation("opposite_strategy", correct=False, families=("route",),
          applies=lambda f: any(s in _STRATEGY_OPPOSITE for s in f.strategies))
def _opposite_strategy(f: EpisodeFacts, d: Draw):
    """Recommends the opposite of the requested strategy (走高速 when the user said 不走高速)."""
    lang = _lang(d)
    zh, en = _STRATEGY_OPPOSITE[next(s for s in f.strategies if s in _STRATEGY_OPPOSITE)]
    return route_answer(f, d, lang, extra=[en if lang == "en" else zh], extra_first=d.coin())


@mutation("strategy_property", correct=False, families=("route",),
          applies=lambda f: any(s in _STRATEGY_PROPERTY for s in f.strategies))
def _strategy_property(f: EpisodeFacts, d: Draw):
    """Describes the route with a property its strategy excludes (这条路线收费较多 on a fewer-tolls route,
    比较拥堵 on an avoid-congestion one): the answer says the route is what the user asked it not to be."""
    lang = _lang(d)
    zh, en = _STRATEGY_PROPERTY[next(s for s in f.strategies if s in _STRATEGY_PROPERTY)]
    return route_answer(f, d, lang, extra=[d.choice(en if lang == "en" else zh)], extra_first=d.coin())


@mutation("skip_waypoint", correct=False, families=("route",), applies=lambda f: bool(f.waypoints))
def _skip_waypoint(f: EpisodeFacts, d: Draw):
    """``不用经过X，直接去Y``: recommends skipping the stop the user asked for."""
    lang, waypoint = _lang(d), d.choice(f.waypoints)
    destination = f.destination or "目的地"
    note = f"no need to stop at {waypoint}, go straight to {destination}" if lang == "en" else \
        d.choice((f"不用经过{waypoint}，直接去{destination}", f"建议跳过{waypoint}，直达{destination}"))
    return route_answer(f, d, lang, extra=[note], extra_first=d.coin())


@mutation("wrong_mode", correct=False, families=("route",))
def _wrong_mode(f: EpisodeFacts, d: Draw):
    """The right numbers, claimed for another travel mode."""
    lang = _lang(d)
    other = d.choice([m for m in _MODE_ZH if m != f.mode and not (f.mode == "transit" and m == "walking")])
    note = f"you should {_MODE_EN[other]}" if lang == "en" else f"建议{_MODE_ZH[other]}前往"
    return route_answer(f, d, lang, lines=[] if other != "transit" else None, extra=[note], extra_first=True)


_REJECTIONS = {"zh": ("比{}快", "不太建议{}", "不推荐{}", "{}不太方便", "{}会更慢"),
               "en": ("faster than {}", "rather than {}", "{} is not recommended", "{} would be slower")}
_MODE_ING = {"driving": "driving", "walking": "walking", "cycling": "cycling", "transit": "public transport"}


@mutation("rejected_alternative", correct=True, families=("route",))
def _rejected_alternative(f: EpisodeFacts, d: Draw):
    """The route's facts, and another travel mode named only to turn it down (比开车快, driving is not recommended)."""
    lang = _lang(d)
    other = d.choice([m for m in _MODE_ZH if m != f.mode and not (f.mode == "transit" and m == "walking")])
    note = d.choice(_REJECTIONS[lang]).format(_MODE_ZH[other] if lang == "zh" else _MODE_ING[other])
    return route_answer(f, d, lang, extra=[note], extra_first=d.coin())


# -- every family: non-answers --------------------------------------------------------------------


@mutation("generic", correct=False)
def _generic(f: EpisodeFacts, d: Draw):
    """好的 / 嗯嗯 / I have planned the route for you. (with the right route_index for routes)."""
    return d.choice(GENERIC_ANSWERS)


@mutation("query_echo", correct=False)
def _query_echo(f: EpisodeFacts, d: Draw):
    return d.choice((f.episode.query, f"您问的是：{f.episode.query}"))


def _keyword_is_not_an_answer(f: EpisodeFacts) -> bool:
    if not f.keyword:
        return False
    if f.family in ("poi", "nearby"):  # a keyword that names a returned place *is* that place
        return not any(fold(f.keyword) == fold(n) or fold(n) in fold(f.keyword) for n in f.evidence_names)
    return True


@mutation("keyword_alone", correct=False, families=("route", "poi", "nearby", "weather", "traffic"),
          applies=_keyword_is_not_an_answer)
def _keyword_alone(f: EpisodeFacts, d: Draw):
    """The query's keyword (destination, POI keyword, city, road) and nothing else."""
    return d.choice((f.keyword, f"{f.keyword}。", f"关于{f.keyword}"))


@mutation("false_no_result", correct=False)
def _false_no_result(f: EpisodeFacts, d: Draw):
    """Claims nothing was found although the evidence has an answer."""
    if f.family == "traffic":
        return d.choice(("暂无该道路的路况信息（未知）。", "Traffic state unknown."))
    if f.family == "route":
        return d.choice(("没有找到可用的路线。", "No route was found.")), None
    return d.choice(NO_RESULT_ZH + NO_RESULT_EN)


# -- information tasks: correct ------------------------------------------------------------------


def _name_variant(d: Draw, name: str) -> str:
    """The name as returned, or with full-width brackets (the same name to a reader)."""
    return d.choice((name, name.replace("(", "（").replace(")", "）")))


def _poi_paraphrase(f: EpisodeFacts, d: Draw, lang: str, style: str) -> str:
    place = f.places[0]
    name = _name_variant(d, place.name)
    if lang == "en":
        return d.choice(FILLERS_EN) + (d.choice((f"{name} is at {place.address}.", f"It's {name}, address: "
                                                 f"{place.address}.")) if place.address else f"It's {name}.")
    clauses = [d.choice((name, f"找到了{name}", f"是{name}"))]
    if place.address:
        clauses.append(d.choice((f"地址：{place.address}", f"位于{place.address}", f"在{place.address}")))
    if place.location is not None and d.coin():  # the rule agent's form: 名称，地址：…，坐标lon, lat
        clauses.append(f"坐标{place.location[0]:.6f}, {place.location[1]:.6f}")
    return join_clauses(d, d.shuffled(clauses[:2]) + clauses[2:], lang)


def _nearby_paraphrase(f: EpisodeFacts, d: Draw, lang: str, style: str, low: int = 1, high: int = 3) -> str:
    chosen = d.subset(list(f.places), low, high)
    with_address = d.coin()
    items = [_name_variant(d, p.name) + (f"（{p.address}）" if with_address and p.address else "")
             for p in chosen]
    if lang == "en":
        return d.choice(FILLERS_EN) + "Nearby: " + "; ".join(items) + "."
    return d.choice(FILLERS_ZH) + d.choice(("附近有：", "周边可以去", "最近的是")) + "、".join(items) + "。"


def _geo_components(f: EpisodeFacts) -> list[str]:
    g = f.geocode
    parts = [g.district, g.township,
             street_and_number(g.formatted_address, (f.province, f.city, g.district, g.township))]
    parts += [r for r in g.roads[:1] if r and r in g.formatted_address and r not in parts[2]]
    parts = [p for p in dict.fromkeys(parts) if p and len(p) >= 2]
    return sorted(parts, key=lambda p: g.formatted_address.find(p) % 1000)


def _geo_paraphrase(f: EpisodeFacts, d: Draw, lang: str, style: str) -> str:
    address = f.geocode.formatted_address
    if lang == "en":
        return d.choice(FILLERS_EN) + d.choice((f"You are at {address}.", f"Your location: {address}."))
    return d.choice(FILLERS_ZH) + d.choice((f"您当前位于{address}。", f"你在{address}。", f"当前位置：{address}。"))


_DAY_WORDS = {0: ("今天", "today"), 1: ("明天", "tomorrow"), 2: ("后天", "the day after tomorrow"),
              3: ("大后天", "in three days")}


def _day_label(f: EpisodeFacts, d: Draw, index: int, lang: str) -> str:
    w = f.weather
    dates = [day.date for day in w.days]
    base = dates.index(w.updated) if w.updated in dates else 0
    words = _DAY_WORDS.get(index - base)
    options = [w.days[index].date, ""] + ([words[1] if lang == "en" else words[0]] if words else [])
    return d.choice(options)


def _weather_sentence(f: EpisodeFacts, d: Draw, lang: str, *, condition: str | None = None,
                      temperature: str | None = None, cn: bool = False, day: int | None = None) -> str:
    """A weather answer; ``condition``/``temperature`` replace the true statements when given."""
    w = f.weather
    city = d.choice((f.city, "")) if lang == "zh" else f.city
    if w.is_forecast and f.several_days and day is None and condition is None and temperature is None:
        return _every_day(f, d, lang)  # a question about several days is answered day by day
    if w.is_forecast:
        index = f.day_index if day is None else day
        entry = w.days[index]
        cond = condition if condition is not None else condition_text(d, entry.condition, lang)
        temp = temperature if temperature is not None else \
            temperature_range_text(d, entry.low, entry.high, lang, cn)
        when = _day_label(f, d, f.day_index, lang)
        if lang == "en":
            return join_clauses(d, d.shuffled([f"{when} in {city}: {cond}".strip(), f"temperature {temp}"]),
                                lang)
        return join_clauses(d, d.shuffled([f"{city}{when}{d.choice(('', '天气'))}{cond}", f"气温{temp}"]), lang)
    cond = condition if condition is not None else condition_text(d, w.condition, lang)
    temp = temperature if temperature is not None else temperature_text(d, w.temperature, lang, cn)
    if lang == "en":
        return join_clauses(d, d.shuffled([d.choice((f"weather in {city} right now: {cond}",
                                                     f"current conditions in {city}: {cond}")),
                                           f"the temperature is {temp}"]), lang)
    return join_clauses(d, d.shuffled([f"{city}{d.choice(('现在', '当前天气', '目前'))}{cond}",
                                       d.choice((f"气温{temp}", f"温度{temp}"))]), lang)


def _weather_paraphrase(f: EpisodeFacts, d: Draw, lang: str, style: str) -> str:
    return _weather_sentence(f, d, lang, cn=style == "cn")


def _traffic_sentence(f: EpisodeFacts, d: Draw, lang: str, state_text: str, description: bool = False) -> str:
    road = f.keyword or ""
    if lang == "en":
        clauses = [d.choice((f"on {road}, {state_text}", f"{road}: {state_text}", f"right now {state_text}"))]
    else:
        clauses = [d.choice((f"{road}目前{state_text}", f"目前路况{state_text}", f"{road}现在{state_text}"))]
    if description and f.traffic.description:
        clauses.append(f.traffic.description.rstrip("。"))
    return join_clauses(d, d.shuffled(clauses), lang)


def _traffic_paraphrase(f: EpisodeFacts, d: Draw, lang: str, style: str) -> str:
    state = f.traffic.state
    text = state if (lang == "zh" and style == "plain") else traffic_text(d, state, lang)
    return _traffic_sentence(f, d, lang, text)


INFO_PARAPHRASE: dict[str, Callable[[EpisodeFacts, Draw, str, str], str]] = {
    "poi": _poi_paraphrase, "nearby": _nearby_paraphrase, "geolocation": _geo_paraphrase,
    "weather": _weather_paraphrase, "traffic": _traffic_paraphrase}


@mutation("poi_name_only", correct=True, families=("poi",),
          applies=lambda f: fold(f.places[0].name) not in fold(f.episode.query))
def _poi_name_only(f: EpisodeFacts, d: Draw):
    """The returned name alone (only where the query does not contain it: else it adds nothing)."""
    name = _name_variant(d, f.places[0].name)
    return d.choice((name, f"{name}。", f"找到了：{name}", f"It's {name}."))


def _address_news(f: EpisodeFacts) -> bool:
    street = street_and_number(f.places[0].address)
    return bool(street) and fold(street) not in fold(f.episode.query)


@mutation("poi_address_only", correct=True, families=("poi",), applies=_address_news)
def _poi_address_only(f: EpisodeFacts, d: Draw):
    """The returned address alone (only where the query does not already state it)."""
    address = f.places[0].address
    text = d.choice((address, street_and_number(address)))
    return d.choice((f"地址是{text}。", f"在{text}。", f"The address is {text}."))


@mutation("nearby_several", correct=True, families=("nearby",), applies=lambda f: len(f.places) >= 2)
def _nearby_several(f: EpisodeFacts, d: Draw):
    return _nearby_paraphrase(f, d, _lang(d), "plain", 2, 5)


@mutation("nearby_with_remarks", correct=True, families=("nearby",), applies=lambda f: len(f.places) >= 2)
def _nearby_with_remarks(f: EpisodeFacts, d: Draw):
    """Several returned places, each with its returned distance and a remark, listed with 、, ；, or commas."""
    lang = _lang(d)
    chosen = d.subset(list(range(len(f.places))), 2, min(4, len(f.places)))
    items = []
    for i in chosen:
        name, metres = _name_variant(d, f.places[i].name), f.place_distances[i]
        if metres is None:
            items.append(name)
        elif lang == "en":
            items.append(d.choice((f"{name} ({metres:g} m away)", f"{name}, about {metres:g} m")))
        else:
            items.append(d.choice((f"{name}（约{metres:g}米）", f"{name}，距离约{metres:g}米", f"{name}(步行{metres:g}米)")))
    if lang == "en":
        return d.choice(FILLERS_EN) + "Nearby: " + "; ".join(items) + d.choice((".", ", all within walking distance."))
    return d.choice(FILLERS_ZH) + d.choice(("附近有：", "周边有", "给您找到这些：")) + d.choice(("、", "；")).join(items) + \
        d.choice(("。", "，都不太远。", "等，环境都不错。"))


@mutation("geo_spaced_address", correct=True, families=("geolocation",))
def _geo_spaced_address(f: EpisodeFacts, d: Draw):
    """The formatted address split into its components with spaces."""
    g = f.geocode
    parts, rest = [], g.formatted_address
    for piece in (f.province, f.city, g.district, g.township):
        if piece and rest.startswith(piece):
            parts.append(piece)
            rest = rest[len(piece):]
    parts.append(rest)
    return d.choice(("您在", "当前位置：", "You are at ")) + " ".join(p for p in parts if p)


@mutation("geo_two_components", correct=True, families=("geolocation",),
          applies=lambda f: len(_geo_components(f)) + bool(f.geocode.poi_names) >= 2)
def _geo_two_components(f: EpisodeFacts, d: Draw):
    """At least two address components below the city (district, township, street+number, a nearby POI)."""
    components = _geo_components(f)
    chosen = d.subset(components, 2 if len(components) >= 2 else 1, len(components))
    chosen = sorted(chosen, key=components.index)
    lang = _lang(d)
    if len(chosen) < 2 or d.coin() and f.geocode.poi_names:
        poi = f.geocode.poi_names[0]
        chosen = chosen + [f"near {poi}" if lang == "en" else f"靠近{poi}"]
    if lang == "en":
        return d.choice(FILLERS_EN) + "You are in " + ", ".join(chosen) + "."
    return d.choice(FILLERS_ZH) + "您在" + "".join(c for c in chosen if not c.startswith("靠近")) + \
        "".join("，" + c for c in chosen if c.startswith("靠近")) + "。"


# the bridged forms are mobility_env.reading.text's, shared with MobilePA's verifier (tests/test_mobilepa_answers.py)
_FAR_DENIALS = {"zh": ("不太可能出现{}", "完全没有出现{}的可能", "不大可能有{}", "不会有任何{}", "{}的可能性不大",
                       "没怎么见到{}", "未见{}", "没见到{}", "不太可能遇到{}", "不会再有{}", "没怎么出现{}"),
                "en": ("no chance at all of {}", "nothing like {}", "{} is unlikely", "unlikely to see {}",
                       "{} is not expected", "not a chance of {}", "zero chance of {}", "unlikely to see any {}")}


@mutation("far_denial", correct=True, families=("weather",),
          applies=lambda f: bool(wrong_conditions(_true_groups(f))))
def _far_denial(f: EpisodeFacts, d: Draw):
    """The true weather, then another condition denied from a distance (不太可能出现小雨, rain is unlikely)."""
    lang = _lang(d)
    other = condition_text(d, d.choice(wrong_conditions(_true_groups(f))), lang)
    denial = d.choice(_FAR_DENIALS[lang]).format(other)
    return _weather_sentence(f, d, lang) + (f" {denial[0].upper()}{denial[1:]}." if lang == "en" else f"{denial}。")


@mutation("far_denied_truth", correct=False, families=("weather",))
def _far_denied_truth(f: EpisodeFacts, d: Draw):
    """The asked day's true condition denied from a distance (不太可能出现多云 on a cloudy day), maybe with another."""
    lang = _lang(d)
    denial = d.choice(_FAR_DENIALS[lang]).format(condition_text(d, _asked_condition(f), lang))
    wrong = wrong_conditions(_true_groups(f))
    if wrong and d.coin():
        other = condition_text(d, d.choice(wrong), lang)
        denial += f", {other}" if lang == "en" else f"，{other}"
    return _weather_sentence(f, d, lang, condition=denial)


def _ambiguous_forecast(f: EpisodeFacts) -> bool:
    return f.weather is not None and f.weather.is_forecast and f.day_ambiguous


@mutation("weather_all_days", correct=True, families=("weather",), applies=_ambiguous_forecast)
def _weather_all_days(f: EpisodeFacts, d: Draw):
    """For 未来几天/这几天: every forecast day, each with its own condition and range."""
    return _every_day(f, d, _lang(d))


def _every_day(f: EpisodeFacts, d: Draw, lang: str) -> str:
    w = f.weather
    dates = [day.date for day in w.days]
    base = dates.index(w.updated) if w.updated in dates else 0
    parts = []
    for index in range(base, len(w.days)):
        day = w.days[index]
        words = _DAY_WORDS.get(index - base)
        label = (words[1] if lang == "en" else words[0]) if words else day.date
        parts.append(f"{label}: {condition_text(d, day.condition, lang)}, "
                     f"{temperature_range_text(d, day.low, day.high, lang)}" if lang == "en" else
                     f"{label}{day.condition}，{temperature_range_text(d, day.low, day.high, lang)}")
    head = d.choice(FILLERS_EN) if lang == "en" else d.choice(FILLERS_ZH) + f.city
    return head + "；".join(parts) + "。"


def _several_days(f: EpisodeFacts) -> bool:
    return f.weather is not None and f.weather.is_forecast and f.several_days and len(f.weather.days) >= 2


@mutation("forecast_one_day_only", correct=False, families=("weather",), applies=_several_days)
def _forecast_one_day_only(f: EpisodeFacts, d: Draw):
    """A question about several days answered with its first day only (true, but not what was asked)."""
    w = f.weather
    dates = [day.date for day in w.days]
    base = dates.index(w.updated) if w.updated in dates else 0
    f_one = EpisodeFacts(**{**f.__dict__, "several_days": False})
    return _weather_sentence(f_one, d, _lang(d), day=base)


@mutation("forecast_day_wrong", correct=False, families=("weather",), applies=_several_days)
def _forecast_day_wrong(f: EpisodeFacts, d: Draw):
    """Every day of a several-day forecast, one of them with another day's temperatures (a range 3 °C off at least)."""
    w = f.weather
    dates = [day.date for day in w.days]
    base = dates.index(w.updated) if w.updated in dates else 0
    at = d.integer(base, len(w.days) - 1)
    day = w.days[at]
    shift = d.choice((-1, 1)) * d.integer(4, 9)
    wrong = dataclasses.replace(day, low=day.low + shift, high=day.high + shift)
    f_wrong = EpisodeFacts(**{**f.__dict__, "weather": dataclasses.replace(
        w, days=tuple(wrong if i == at else x for i, x in enumerate(w.days)))})
    return _every_day(f_wrong, d, _lang(d))


@mutation("traffic_colloquial", correct=True, families=("traffic",))
def _traffic_colloquial(f: EpisodeFacts, d: Draw):
    """一点都不堵 / 有点堵 / 走走停停 / no congestion / slow / heavy traffic for the road's state."""
    lang = _lang(d)
    return _traffic_sentence(f, d, lang, traffic_text(d, f.traffic.state, lang))


_STATE_NOUNS = {"畅通": ("畅通", "free-flowing traffic"), "缓行": ("缓行", "slow traffic"), "拥堵": ("拥堵", "congestion"),
                "严重拥堵": ("严重拥堵", "gridlock")}


@mutation("traffic_far_denial", correct=True, families=("traffic",), applies=lambda f: bool(_wrong_states(f)))
def _traffic_far_denial(f: EpisodeFacts, d: Draw):
    """The road's state, then another state denied from a distance (不太可能出现拥堵, congestion is unlikely)."""
    lang = _lang(d)
    other = _STATE_NOUNS[d.choice(_wrong_states(f))][lang == "en"]
    denial = d.choice(_FAR_DENIALS[lang]).format(other)
    return _traffic_sentence(f, d, lang, traffic_text(d, f.traffic.state, lang)) + \
        (f" {denial[0].upper()}{denial[1:]}." if lang == "en" else f"{denial}。")


@mutation("traffic_with_description", correct=True, families=("traffic",),
          applies=lambda f: bool(f.traffic and f.traffic.description))
def _traffic_with_description(f: EpisodeFacts, d: Draw):
    """The state and the service's own description of the road."""
    return _traffic_sentence(f, d, "zh", traffic_text(d, f.traffic.state, "zh"), description=True)


# -- information tasks: wrong ---------------------------------------------------------------------


def _foreign_names(f: EpisodeFacts, count: int, d: Draw) -> list[Place]:
    count = min(count, len(f.foreign_places))
    return d.subset(list(f.foreign_places), count, count)


def _superstrings(f: EpisodeFacts, name: str) -> list[str]:
    names = [fold(n) for n in f.evidence_names]
    out = []
    for suffix in SUPERSTRING_SUFFIXES:
        candidate = name + suffix
        if not any(fold(candidate) in n for n in names):
            out.append(candidate)
    return out


def _has_superstring(f: EpisodeFacts) -> bool:
    return any(_superstrings(f, p.name) for p in f.places)


@mutation("superstring_name", correct=False, families=("poi", "nearby"), applies=_has_superstring)
def _superstring_name(f: EpisodeFacts, d: Draw):
    """A longer name that contains the returned one (X分店, X东门, X停车场) and is no returned place."""
    place = d.choice([p for p in f.places if _superstrings(f, p.name)])
    name = d.choice(_superstrings(f, place.name))
    if f.family == "nearby":
        return d.choice((f"附近有{name}。", f"Nearby: {name}."))
    return d.choice((f"{name}。", f"找到了{name}，地址：{place.address}。", f"It's {name}."))


def _other_province_places(f: EpisodeFacts) -> list[Place]:
    own = f.province or (f.places[0].address.split()[0] if f.places and f.places[0].address else "")
    return [p for p in f.foreign_places if p.address and p.address.split()[0] in PROVINCES
            and p.address.split()[0] != own and own]


@mutation("name_other_province_address", correct=False, families=("poi",),
          applies=lambda f: bool(_other_province_places(f)))
def _name_other_province_address(f: EpisodeFacts, d: Draw):
    """The right name with an address in another province."""
    other = d.choice(_other_province_places(f))
    name = f.places[0].name
    return d.choice((f"{name}，地址：{other.address}。", f"{name} is at {other.address}."))


@mutation("foreign_place", correct=False, families=("poi", "nearby", "geolocation"),
          applies=lambda f: bool(f.foreign_places) or bool(f.foreign_addresses))
def _foreign_place(f: EpisodeFacts, d: Draw):
    """A place (or address) returned in another episode, sharing nothing with this evidence."""
    if f.family == "geolocation":
        if f.foreign_addresses and d.coin() or not f.foreign_places:
            address = d.choice(f.foreign_addresses)
            return d.choice((f"您当前位于{address}。", f"You are at {address}."))
        return f"您在{d.choice(f.foreign_places).name}附近。"
    place = d.choice(f.foreign_places)
    if f.family == "nearby":
        return d.choice((f"附近有{place.name}（{place.address}）。", f"Nearby: {place.name}."))
    return d.choice((f"{place.name}，地址：{place.address}。", f"It's {place.name}."))


@mutation("other_branch", correct=False, families=("poi", "nearby"), applies=lambda f: bool(f.other_branches))
def _other_branch(f: EpisodeFacts, d: Draw):
    """Another branch of the same brand (``星巴克(外滩店)`` for ``星巴克(银河路店)``), over 2 km away."""
    place = d.choice(f.other_branches)
    if f.family == "nearby":
        return d.choice((f"附近有{place.name}。", f"Nearby: {place.name}."))
    return d.choice((f"{place.name}，地址：{place.address}。", f"It's {place.name}.", f"找到了{place.name}。"))


@mutation("place_hedge", correct=False, families=("poi", "geolocation"),
          applies=lambda f: bool(f.foreign_addresses if f.family == "geolocation" else f.foreign_places))
def _place_hedge(f: EpisodeFacts, d: Draw):
    """``可能是A，也可能是B``: the right place or a foreign one."""
    if f.family == "geolocation":
        pair = d.shuffled([f.geocode.formatted_address, d.choice(f.foreign_addresses)])
    else:
        pair = d.shuffled([f.places[0].name, d.choice(f.foreign_places).name])
    return d.choice((f"可能是{pair[0]}，也可能是{pair[1]}。", f"{pair[0]}或者{pair[1]}。",
                     f"Either {pair[0]} or {pair[1]}."))


@mutation("mixed_foreign_place", correct=False, families=("nearby",),
          applies=lambda f: bool(f.foreign_places))
def _mixed_foreign_place(f: EpisodeFacts, d: Draw):
    """A returned POI and one from another search, both claimed nearby; the foreign one may carry a
    remark (``Alt Coffee很不错``), which must not hide it."""
    remark = d.choice(("", "很不错", "评分很高", "也可以", " is nice"))
    foreign = [p.name + remark for p in _foreign_names(f, d.integer(1, 2), d)]
    items = d.shuffled([d.choice(f.places).name] + foreign)
    intro, sep = d.choice((("附近有：", "、"), ("附近有：", "，"), ("周边有", "、"), ("附近有", "；"), ("Nearby: ", "; "),
                           ("Nearby: ", ", ")))
    return intro + sep.join(items) + d.choice(("。", "等。"))


@mutation("place_stuffing", correct=False, families=("poi", "nearby"),
          applies=lambda f: len(f.foreign_places) >= 10)
def _place_stuffing(f: EpisodeFacts, d: Draw):
    """Every POI name of other searches, the right one hidden among them."""
    names = [p.name for p in f.foreign_places[:30]]
    names.insert(d.integer(0, len(names)), d.choice(f.places).name)
    return d.choice(("可能是以下地点之一：", "附近有：", "Candidates: ")) + "、".join(names) + "。"


@mutation("bare_city", correct=False, families=("geolocation",))
def _bare_city(f: EpisodeFacts, d: Draw):
    """The city (or province and city) and nothing below it."""
    options = [c for c in (f.city, f"{f.province}{f.city}", f"您在{f.city}。", f"You are in {f.city}.") if c]
    return d.choice(options)


@mutation("one_character", correct=False, families=("geolocation",))
def _one_character(f: EpisodeFacts, d: Draw):
    return d.choice(("市", "区", "省"))


@mutation("wrong_component", correct=False, families=("geolocation",),
          applies=lambda f: bool(f.foreign_townships))
def _wrong_component(f: EpisodeFacts, d: Draw):
    """The right district with a township of another episode (and no other true component)."""
    return d.choice((f"您在{f.geocode.district}{d.choice(f.foreign_townships)}。",
                     f"You are in {f.geocode.district}, {d.choice(f.foreign_townships)}."))


@mutation("wrong_street_number", correct=False, families=("geolocation",),
          applies=lambda f: bool(re.search(r"\d+号$", f.geocode.formatted_address)))
def _wrong_street_number(f: EpisodeFacts, d: Draw):
    """The formatted address with another house number."""
    address = f.geocode.formatted_address
    number = int(re.search(r"(\d+)号$", address).group(1))
    other = number + d.choice((-1, 1)) * d.integer(max(20, number // 3), max(40, number))
    other = other if other > 0 else number + 57
    changed = re.sub(r"\d+号$", f"{other}号", address)
    return d.choice((f"您当前位于{changed}。", f"You are at {changed}."))


def _true_groups(f: EpisodeFacts) -> set[str]:
    w = f.weather
    if not w.is_forecast:
        return {condition_group(w.condition)}
    return {condition_group(day.condition) for day in w.days}


def _true_temperatures(f: EpisodeFacts) -> list[float]:
    w = f.weather
    if not w.is_forecast:
        return [w.temperature]
    days = w.days if f.day_ambiguous else (w.days[f.day_index],)
    return [t for day in days for t in (day.low, day.high)]


def _wrong_temperature(f: EpisodeFacts, d: Draw, around: float) -> int:
    truths = _true_temperatures(f)
    sign = d.choice((-1, 1))
    for step in list(range(d.integer(3, 12), 16)) + list(range(3, 16)):
        value = round(around) + sign * step
        if all(abs(value - t) > 2 for t in truths):
            return value
        sign = -sign
    raise AssertionError(f"no wrong temperature near {around} for {truths}")


def _asked_condition(f: EpisodeFacts) -> str:
    w = f.weather
    return w.days[f.day_index].condition if w.is_forecast else w.condition


@mutation("wrong_condition", correct=False, families=("weather",),
          applies=lambda f: bool(wrong_conditions(_true_groups(f))))
def _wrong_condition(f: EpisodeFacts, d: Draw):
    lang = _lang(d)
    wrong = d.choice(wrong_conditions(_true_groups(f)))
    return _weather_sentence(f, d, lang, condition=condition_text(d, wrong, lang))


@mutation("negated_condition", correct=False, families=("weather",),
          applies=lambda f: condition_group(_asked_condition(f)) in _NEGATED_CONDITION)
def _negated_condition(f: EpisodeFacts, d: Draw):
    """``今天不是晴天，是暴雨`` on a sunny day (or the negation alone)."""
    zh_a, zh_b, en = _NEGATED_CONDITION[condition_group(_asked_condition(f))]
    lang = _lang(d)
    negation = en if lang == "en" else d.choice((zh_a, zh_b))
    wrong = wrong_conditions(_true_groups(f))
    if wrong and d.coin():
        other = condition_text(d, d.choice(wrong), lang)
        negation += f", it's {other}" if lang == "en" else f"，是{other}"
    return _weather_sentence(f, d, lang, condition=negation)


@mutation("condition_hedge", correct=False, families=("weather",),
          applies=lambda f: bool(wrong_conditions(_true_groups(f))))
def _condition_hedge(f: EpisodeFacts, d: Draw):
    lang = _lang(d)
    pair = d.shuffled([condition_text(d, _asked_condition(f), lang),
                       condition_text(d, d.choice(wrong_conditions(_true_groups(f))), lang)])
    return _weather_sentence(f, d, lang, condition=f"{pair[0]} or {pair[1]}" if lang == "en" else
                             d.choice((f"{pair[0]}或者{pair[1]}", f"{pair[0]}，也可能{pair[1]}")))


@mutation("condition_contradiction", correct=False, families=("weather",),
          applies=lambda f: bool(wrong_conditions(_true_groups(f))))
def _condition_contradiction(f: EpisodeFacts, d: Draw):
    lang = _lang(d)
    wrong = condition_text(d, d.choice(wrong_conditions(_true_groups(f))), lang)
    right = _weather_sentence(f, d, lang)
    tail = f" Actually, it's {wrong}." if lang == "en" else d.choice((f"……实际上是{wrong}。", f"不对，是{wrong}。"))
    return right + tail


@mutation("condition_stuffing", correct=False, families=("weather",))
def _condition_stuffing(f: EpisodeFacts, d: Draw):
    """Forty weather conditions, the right one among them."""
    pool = list(CONDITION_GROUP) + ["冻雨", "冰雹", "龙卷风", "台风", "强对流", "雷电", "浮尘", "晴转多云", "多云转阴",
                                    "阴转小雨", "小到中雨", "中到大雨", "大到暴雨", "阵雪", "小到中雪", "冰粒", "霜冻"]
    pool = (pool * 2)[:40]
    return _weather_sentence(f, d, "zh", condition="、".join(d.shuffled(pool)))


@mutation("temperature_off", correct=False, families=("weather",))
def _temperature_off(f: EpisodeFacts, d: Draw):
    """The right condition, a temperature 3-15 degrees off (both ends checked against the evidence)."""
    lang, w = _lang(d), f.weather
    if w.is_forecast:
        day = w.days[f.day_index]
        low, high = day.low, day.high
        if d.coin():
            low = _wrong_temperature(f, d, low)
        else:
            high = _wrong_temperature(f, d, high)
        return _weather_sentence(f, d, lang, temperature=temperature_range_text(d, low, high, lang))
    wrong = _wrong_temperature(f, d, w.temperature)
    return _weather_sentence(f, d, lang, temperature=temperature_text(d, wrong, lang))


@mutation("temperature_hedge", correct=False, families=("weather",))
def _temperature_hedge(f: EpisodeFacts, d: Draw):
    """Two temperatures for one reading (``-4℃或10℃``), or a range for the current temperature."""
    lang, w = _lang(d), f.weather
    if w.is_forecast:
        day = w.days[f.day_index]
        wrong = _wrong_temperature(f, d, day.high)
        text = f"{round(day.low)}~{round(day.high)}℃ or {round(day.low)}~{wrong}℃" if lang == "en" else \
            f"{round(day.low)}~{round(day.high)}℃，也可能是{round(day.low)}~{wrong}℃"
        return _weather_sentence(f, d, lang, temperature=text)
    wrong = _wrong_temperature(f, d, w.temperature)
    pair = d.shuffled([round(w.temperature), wrong])
    if d.coin():
        text = f"{pair[0]}°C or {pair[1]}°C" if lang == "en" else f"{pair[0]}℃或者{pair[1]}℃"
    else:
        low, high = sorted(pair)
        text = f"{low} to {high}°C" if lang == "en" else f"{low}到{high}度"
    return _weather_sentence(f, d, lang, temperature=text)


@mutation("temperature_stuffing", correct=False, families=("weather",))
def _temperature_stuffing(f: EpisodeFacts, d: Draw):
    """Every temperature from -20 to 40, the right one(s) among them."""
    return _weather_sentence(f, d, "zh", temperature="、".join(f"{t}℃" for t in range(-20, 41)))


def _other_day(f: EpisodeFacts) -> int | None:
    w = f.weather
    if w is None or not w.is_forecast or f.day_ambiguous:
        return None
    asked = w.days[f.day_index]
    group = condition_group(asked.condition)
    banned = {group} | _ADJACENT_GROUPS.get(group, set())
    for index, day in enumerate(w.days):
        if index != f.day_index and condition_group(day.condition) not in banned and (
                abs(day.low - asked.low) > 2 or abs(day.high - asked.high) > 2):
            return index
    return None


@mutation("other_day", correct=False, families=("weather",), applies=lambda f: _other_day(f) is not None)
def _other_day_weather(f: EpisodeFacts, d: Draw):
    """Another forecast day's condition and temperatures, given for the asked day."""
    index = _other_day(f)
    day = f.weather.days[index]
    lang = _lang(d)
    return _weather_sentence(f, d, lang, condition=condition_text(d, day.condition, lang),
                             temperature=temperature_range_text(d, day.low, day.high, lang))


def _wrong_states(f: EpisodeFacts) -> list[str]:
    mentioned = set(f.traffic.states_mentioned) | {f.traffic.state}
    banned = mentioned | {a for s in mentioned for a in _ADJACENT_STATES.get(s, ())}
    return [s for s in TRAFFIC_WORDS if s not in banned]


@mutation("wrong_state", correct=False, families=("traffic",), applies=lambda f: bool(_wrong_states(f)))
def _wrong_state(f: EpisodeFacts, d: Draw):
    lang = _lang(d)
    return _traffic_sentence(f, d, lang, traffic_text(d, d.choice(_wrong_states(f)), lang, plain=True))


@mutation("far_denied_state", correct=False, families=("traffic",))
def _far_denied_state(f: EpisodeFacts, d: Draw):
    """The road's true state denied from a distance (路况不太可能畅通 on a clear road), nothing else claimed."""
    lang = _lang(d)
    state = _STATE_NOUNS[f.traffic.state][lang == "en"]
    return _traffic_sentence(f, d, lang, d.choice(_FAR_DENIALS[lang]).format(state))


def _negatable(f: EpisodeFacts) -> bool:
    state = f.traffic.state
    return f.traffic.states_mentioned == frozenset({state}) or state in ("缓行", "拥堵", "严重拥堵")


@mutation("negated_state", correct=False, families=("traffic",), applies=_negatable)
def _negated_state(f: EpisodeFacts, d: Draw):
    """``目前路况不畅通`` on a smooth road, ``一点都不堵`` on a congested one."""
    return _state_in_words(f, d, _NEGATED_TRAFFIC, f.traffic.state)


def _state_in_words(f: EpisodeFacts, d: Draw, table: dict[str, tuple[tuple[str, ...], tuple[str, ...]]],
                    state: str) -> str:
    """A traffic answer stating ``state`` in one of ``table``'s phrases (zh or en)."""
    lang = _lang(d)
    zh, en = table[state]
    return _traffic_sentence(f, d, lang, d.choice(en if lang == "en" else zh))


@mutation("state_hedge", correct=False, families=("traffic",), applies=lambda f: bool(_wrong_states(f)))
def _state_hedge(f: EpisodeFacts, d: Draw):
    lang = _lang(d)
    pair = d.shuffled([traffic_text(d, f.traffic.state, lang),
                       traffic_text(d, d.choice(_wrong_states(f)), lang, plain=True)])
    hedge = f"{pair[0]} or {pair[1]}" if lang == "en" else f"{pair[0]}或者{pair[1]}"
    return _traffic_sentence(f, d, lang, hedge)


@mutation("state_contradiction", correct=False, families=("traffic",),
          applies=lambda f: bool(_wrong_states(f)))
def _state_contradiction(f: EpisodeFacts, d: Draw):
    lang = _lang(d)
    right = _traffic_sentence(f, d, lang, traffic_text(d, f.traffic.state, lang))
    wrong = traffic_text(d, d.choice(_wrong_states(f)), lang, plain=True)
    return right + (f" Actually, {wrong}." if lang == "en" else f"……其实是{wrong}。")


@mutation("state_stuffing", correct=False, families=("traffic",))
def _state_stuffing(f: EpisodeFacts, d: Draw):
    """Every traffic state at once."""
    return d.choice(("路况：畅通、缓行、拥堵、严重拥堵。", "目前可能畅通，可能缓行，也可能拥堵或严重拥堵。",
                     "Traffic is clear, slow, congested and severely congested."))


# -- invisible characters: any family ------------------------------------------------------------

#: Characters a reader does not see (zero-width spaces and joiners, the soft hyphen, word joiners, bidi controls, the
#: BOM, variation selectors, tag characters), and fillers that show as a blank (Hangul fillers, the braille blank).
ZERO_WIDTH = ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u180e", "\u202a", "\u202c", "\u2062",
              "\u2066", "\u2069", "\u034f", "\ufe0f", "\ufe00", "\U000e0020", "\U000e0041", "\U000e007f")
BLANK_FILLERS = ("\u3164", "\u115f", "\u1160", "\uffa0", "\u2800")
_DIGIT_END = re.compile(r"\d(?!\d)")


def _sprinkled(d: Draw, text: str, chars: Sequence[str], times: int, after_numbers: bool) -> str:
    """``text`` with ``times`` characters of ``chars`` put in at random places (after a number's last digit, where
    they would cut it from its unit, when ``after_numbers`` and a coin say so)."""
    for _ in range(times):
        ends = [m.end() for m in _DIGIT_END.finditer(text)] if after_numbers and d.coin() else []
        at = d.choice(ends) if ends else d.integer(0, len(text))
        text = text[:at] + d.choice(chars) + text[at:]
    return text


def _other_kind(f: EpisodeFacts, d: Draw, correct: bool) -> Answer:
    pool = [m for m in applicable(CORRECT if correct else WRONG, f) if not m.kind.startswith("invisible")]
    return d.choice(pool).make(f, d)


@mutation("invisible_chars", correct=True)
def _invisible_chars(f: EpisodeFacts, d: Draw):
    """A correct answer of another kind with zero-width characters anywhere, inside amounts and names too
    (``2\u200b5分钟``): the user reads the same answer."""
    made = _other_kind(f, d, True)
    text = _sprinkled(d, made.text, ZERO_WIDTH, d.integer(1, 4), after_numbers=True)
    return Answer("invisible_chars", True, text, made.route_index, made.calls)


@mutation("invisible_hedge", correct=False)
def _invisible_hedge(f: EpisodeFacts, d: Draw):
    """A wrong answer of another kind (a hedge, stuffing, a wrong value) with invisible characters where they would
    hide its wrong part from a parser but not from the user (``25分钟或35\u200b分钟``)."""
    made = _other_kind(f, d, False)
    text = _sprinkled(d, made.text, ZERO_WIDTH + BLANK_FILLERS, d.integer(1, 3), after_numbers=True)
    return Answer("invisible_hedge", False, text, made.route_index, made.calls)


#: Letters of other scripts a reader takes for Latin ones (Cyrillic а, е, о, р, с, у, х, і; Greek ο, ν, ι), and
#: digits of other scripts (Arabic-Indic, Devanagari, mathematical bold).
HOMOGLYPHS = {"a": "аɑ", "e": "е", "o": "оο", "p": "р", "c": "с", "y": "у", "x": "х", "i": "іι", "v": "ν", "s": "ѕ",
              "k": "κ", "r": "г", "h": "һ", "l": "ӏ", "A": "АΑ", "C": "С", "T": "ТΤ", "H": "Н", "M": "М", "K": "К",
              "0": "٠०𝟎", "1": "١१𝟏", "2": "٢२𝟐", "3": "٣३𝟑", "5": "٥५𝟓", "7": "٧७𝟕", "9": "٩९𝟗"}


def _lookalike(d: Draw, text: str, times: int) -> str:
    """``text`` with ``times`` of its Latin letters or digits written in another script's look-alike."""
    spots = [i for i, ch in enumerate(text) if ch in HOMOGLYPHS]
    for at in d.subset(spots, 0, min(times, len(spots))) if spots else []:
        text = text[:at] + d.choice(HOMOGLYPHS[text[at]]) + text[at + 1:]
    return text


@mutation("invisible_lookalike_letters", correct=True)
def _invisible_lookalike_letters(f: EpisodeFacts, d: Draw):
    """A correct answer of another kind with some Latin letters or digits written in look-alikes (``2.9 kм``, ``٣5分钟``):
    the user reads the same answer."""
    made = _other_kind(f, d, True)
    return Answer("invisible_lookalike_letters", True, _lookalike(d, made.text, d.integer(1, 6)), made.route_index,
                  made.calls)


@mutation("invisible_lookalikes", correct=False)
def _invisible_lookalikes(f: EpisodeFacts, d: Draw):
    """A wrong answer of another kind with some Latin letters or digits written in look-alikes of another script
    (``drive or wаlk`` with a Cyrillic а): the user reads the wrong part, a parser of Latin words may not."""
    made = _other_kind(f, d, False)
    return Answer("invisible_lookalikes", False, _lookalike(d, made.text, d.integer(1, 6)), made.route_index,
                  made.calls)


# -- open-world forms: scripts, vocabularies, units and directions the readers' lists never held ---------------------
#
# Built from the sources, not from the reader's lists: OpenCC renders the Traditional forms, the travel modes and
# weather phenomena are the kernel's data files read directly (not the verifier's tables), and route steps are the
# served response's own instructions.

# character renderings: mainland, Taiwan and Hong Kong forms (s2twp's phrases are a translation into Taiwan's words:
# 软件园 becomes 軟體園, another name, so an honest answer is not rendered with it)
_OPENCC_RENDERINGS = ("s2t", "s2tw", "s2hk")


@lru_cache(maxsize=None)
def _opencc(config: str) -> Callable[[str], str]:
    import opencc
    return opencc.OpenCC(config).convert


def traditional(d: Draw, text: str, phrases: bool = False) -> str:
    """``text`` as a Traditional-script writer renders it (mainland, Taiwan or Hong Kong forms; with ``phrases``, also
    in Taiwan's words: a wrong answer so rendered must still fail)."""
    return _opencc(d.choice(_OPENCC_RENDERINGS + (("s2twp",) if phrases else ())))(text)


def _plain_kind(f: EpisodeFacts, d: Draw, correct: bool) -> Answer:
    pool = [m for m in applicable(CORRECT if correct else WRONG, f)
            if not m.kind.startswith(("invisible", "traditional"))]
    return d.choice(pool).make(f, d)


@mutation("traditional_script", correct=True)
def _traditional_script(f: EpisodeFacts, d: Draw):
    """A correct answer of another kind written in Traditional characters (``預計用時2小時45分鐘``, ``路況暢通``,
    Taiwan's ``捷運``, ``計程車``): the same answer to its reader."""
    made = _plain_kind(f, d, True)
    return Answer("traditional_script", True, traditional(d, made.text), made.route_index, made.calls)


@mutation("traditional_wrong", correct=False)
def _traditional_wrong(f: EpisodeFacts, d: Draw):
    """A wrong answer of another kind (a hedge, a contradiction, a wrong value, an excluded line...) written in
    Traditional characters (``也可能要3小時``, ``建議搭捷運前往`` on a driving route)."""
    made = _plain_kind(f, d, False)
    return Answer("traditional_wrong", False, traditional(d, made.text, phrases=True), made.route_index, made.calls)


@lru_cache(maxsize=None)
def _vocabulary(name: str) -> dict[str, Any]:
    return json.loads((REPO / "mobility_env" / "reading" / "vocab" / name).read_text(encoding="utf-8"))


_ROUTE_MODE = {"driving": "driving", "walking": "walking", "cycling": "bicycling", "transit": "transit"}


def _mode_words(route_mode: str, fits: bool) -> list[tuple[str, str]]:
    """(word, language) of every travel-mode family that does (or does not) describe a route of ``route_mode``
    (walking fits a transit plan too: it has walking legs). Two-wheelers are left out of both: an e-bike on a
    cycling route is arguable."""
    out = []
    for name, family in _vocabulary("travel_modes.json")["families"].items():
        fit = _ROUTE_MODE[route_mode] in family["route_modes"] or (route_mode == "transit" and name == "walking")
        if fit != fits or name == "two_wheeler" and route_mode == "cycling":
            continue
        out += [(w, "zh") for w in family["zh"] if len(w) >= 2] + [(w, "en") for w in family["en"] if len(w) >= 3]
    return out


def _recommend(d: Draw, word: str, lang: str) -> str:
    if lang == "en":
        return d.choice((f"I'd recommend going by {word}", f"best option: {word}", f"you can {word}"))
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
    lang = _lang(d)
    assert f.option is not None and f.option.distance_m is not None
    return route_answer(f, d, lang, distance=_other_unit_distance(d, f.option.distance_m, lang))


@mutation("other_unit_hedge", correct=False, families=("route",), applies=_other_unit_ok)
def _other_unit_hedge(f: EpisodeFacts, d: Draw):
    """The right distance, then a wrong one in another unit as an alternative (``12公里，也可能30里``)."""
    lang = _lang(d)
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
    lang = _lang(d)
    assert f.option is not None and f.option.duration_s is not None
    minutes = max(1, round(f.option.duration_s / 60))
    other = d.choice((minutes + max(8, round(minutes * 0.5)), max(1, round(minutes * 0.5))))
    if abs(other - minutes) < max(3, 0.2 * minutes):
        other = minutes * 2 + 7
    right = f"{minutes} minutes" if lang == "en" else f"{minutes}分钟"
    joined = d.choice((f"{right} or {other}", f"{right}, or maybe {other}")) if lang == "en" else \
        d.choice((f"{right}或{other}", f"{right}，或者{other}", f"{right}，也可能{other}"))
    return route_answer(f, d, lang, duration=joined)


def _chosen_steps(f: EpisodeFacts, field: str) -> list[Any]:
    """``field`` of every step of the chosen path, as served (driving and walking paths; none otherwise)."""
    if f.mode not in ("driving", "walking") or f.chosen is None:
        return []
    record = [r for r in f.records if r.name in ROUTE_TOOLS and r.response is not None][-1]
    paths = _unwrap_route(record.response).get("paths") or []
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
    lang = _lang(d)
    extra = d.choice(("no traffic lights on the way", "without any traffic lights")) if lang == "en" else \
        d.choice(("沿途没有红绿灯", "一个红绿灯都没有", "全程无红绿灯"))
    return route_answer(f, d, lang, extra=[extra], extra_first=d.coin())


_PHENOMENA_ADJACENT = {"rain": {"hail", "sleet", "snow"}, "snow": {"sleet", "rain"}, "sleet": {"rain", "snow"},
                       "hail": {"rain"}, "fog": {"haze"}, "haze": {"fog", "dust"}, "dust": {"haze"},
                       "sun": {"cloud"}, "cloud": {"sun", "overcast"}, "overcast": {"cloud"}}


def _phenomenon_family(condition: str) -> set[str]:
    table = _vocabulary("weather_phenomena.json")["phenomena"]
    found = set()
    for label, entry in table.items():
        words = [w for w in [label, *entry.get("spellings", ())] if not w.isascii()]
        if any(w in condition for w in words):
            found.add(entry["family"])
    return found


def _foreign_phenomena(f: EpisodeFacts) -> list[tuple[str, tuple[str, ...]]]:
    """Amap phenomena (label, English words) of a family unlike every true condition's (nor an adjacent one)."""
    w = f.weather
    conditions = [day.condition for day in w.days] if w.is_forecast else [w.condition]
    true = set().union(*(_phenomenon_family(c) for c in conditions))
    banned = true | {a for t in true for a in _PHENOMENA_ADJACENT.get(t, ())}
    table = _vocabulary("weather_phenomena.json")["phenomena"]
    return [(label, tuple(e.get("spellings", ()))) for label, e in table.items()
            if e.get("answer_word", True) and "-" not in label and "/" not in label and e["family"] not in banned
            and e["family"] not in ("wind", "unknown")]


@mutation("phenomenon_hedge", correct=False, families=("weather",), applies=lambda f: bool(_foreign_phenomena(f)))
def _phenomenon_hedge(f: EpisodeFacts, d: Draw):
    """The true weather, then any other phenomenon of the Amap table as a possibility (``也可能有冰雹``,
    ``with a chance of a tornado``)."""
    lang = _lang(d)
    label, english = d.choice(_foreign_phenomena(f))
    en_words = [w for w in english if w.isascii()]
    true = condition_text(d, _asked_condition(f), lang)
    if lang == "en" and en_words:
        condition = d.choice((f"{true}, with a chance of {d.choice(en_words)}", f"{true} or {d.choice(en_words)}"))
    else:
        lang = "zh"
        condition = d.choice((f"{_asked_condition(f)}，也可能有{label}", f"{_asked_condition(f)}，局部{label}"))
    return _weather_sentence(f, d, lang, condition=condition)


COLLOQUIAL_TRAFFIC = {"畅通": (("路上车不多，很顺", "车很少，开得很快", "挺顺的", "一路绿灯，没什么车"),
                             ("traffic is light", "the road is wide open", "hardly any traffic")),
                      "缓行": (("车有点多，有点慢", "开不快，有点慢"), ("a bit slow", "it's crawling")),
                      "拥堵": (("很堵，塞车", "堵车，排长队"), ("the roads are packed", "it's jammed")),
                      "严重拥堵": (("堵得动不了", "基本寸步难行"), ("a complete standstill", "gridlocked"))}


@mutation("traffic_colloquial_light", correct=True, families=("traffic",),
          applies=lambda f: f.traffic.state in COLLOQUIAL_TRAFFIC
          and not f.traffic.states_mentioned - {f.traffic.state})
def _traffic_colloquial_light(f: EpisodeFacts, d: Draw):
    """The state in everyday words (路上车不多，很顺; traffic is light)."""
    return _state_in_words(f, d, COLLOQUIAL_TRAFFIC, f.traffic.state)


@mutation("traffic_colloquial_wrong", correct=False, families=("traffic",), applies=lambda f: bool(_wrong_states(f)))
def _traffic_colloquial_wrong(f: EpisodeFacts, d: Draw):
    """A wrong state in everyday words (很堵，塞车 on a free-flowing road; traffic is light on a jammed one)."""
    return _state_in_words(f, d, COLLOQUIAL_TRAFFIC, d.choice(_wrong_states(f)))


# ----------------------------------------------------------------------------------------
# Hypothesis strategies
# ----------------------------------------------------------------------------------------


@st.composite
def mutated_answer(draw: Callable[[st.SearchStrategy[Any]], Any], facts: EpisodeFacts,
                   mutation: Mutation) -> Answer:
    return mutation.make(facts, HypothesisDraw(draw))


def answers(facts_list: Sequence[EpisodeFacts],
            mutation: Mutation) -> st.SearchStrategy[tuple[EpisodeFacts, Answer]]:
    """(episode facts, answer) for an episode where ``mutation`` applies."""
    eligible = [f for f in facts_list if mutation.usable_on(f)]
    assert eligible, f"no episode where {mutation.kind!r} applies"
    return st.sampled_from(eligible).flatmap(lambda f: mutated_answer(f, mutation).map(lambda a: (f, a)))


def family_answers(facts_list: Sequence[EpisodeFacts], family: str,
                   correct: bool) -> st.SearchStrategy[tuple[EpisodeFacts, Answer]]:
    """(facts, answer) for an episode of ``family`` and any correct (or wrong) mutation that applies to it."""
    registry = CORRECT if correct else WRONG
    eligible = [f for f in facts_list if f.family == family]
    assert eligible, f"no usable {family} episode"
    return st.sampled_from(eligible).flatmap(
        lambda f: st.sampled_from(applicable(registry, f)).flatmap(lambda m: mutated_answer(f, m)).map(
            lambda a: (f, a)))


# ----------------------------------------------------------------------------------------
# The sweep: a fixed number of answers per episode, exploits and denials counted
# ----------------------------------------------------------------------------------------


def _tally() -> dict[str, Any]:
    return {"n": 0, "failed": 0}


def _rate(failed: int, n: int) -> float:
    return round(failed / n, 4) if n else 0.0


def sweep(facts_list: Sequence[EpisodeFacts], per_episode: int, seed: int = 0,
          examples_per_kind: int = 3) -> dict[str, Any]:
    """Score ``per_episode`` answers per episode (half correct, half wrong, kinds round-robin).

    A *denial* is a correct paraphrase scoring FPR 0; an *exploit* is a wrong variant scoring
    FPR 1. Deterministic: every answer is drawn from ``random.Random(f"{seed}:{episode}:{i}")``.
    """
    totals = {"correct": _tally(), "wrong": _tally()}
    by_scenario: dict[str, dict[str, dict[str, Any]]] = defaultdict(
        lambda: {"correct": _tally(), "wrong": _tally()})
    by_kind: dict[str, dict[str, dict[str, Any]]] = {"correct": defaultdict(_tally),
                                                     "wrong": defaultdict(_tally)}
    examples: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for facts in facts_list:
        kinds = {True: applicable(CORRECT, facts), False: applicable(WRONG, facts)}
        offset = sum(map(ord, facts.episode_id))
        for i in range(per_episode):
            correct = i % 2 == 0
            pool = kinds[correct]
            mutation = pool[(i // 2 + offset) % len(pool)]
            answer = mutation.make(facts, RandomDraw(random.Random(f"{seed}:{facts.episode_id}:{i}")))
            outcome = score(facts, answer)
            failed = outcome.leaked != correct  # a correct answer denied, or a wrong one passed
            side = "correct" if correct else "wrong"
            for tally in (totals[side], by_scenario[facts.scenario][side], by_kind[side][mutation.kind]):
                tally["n"] += 1
                tally["failed"] += failed
            if failed:
                kind_tally = by_kind[side][mutation.kind]
                kind_tally.setdefault("scenarios", defaultdict(int))[facts.scenario] += 1
                key = f"{side}:{mutation.kind}"
                if len(examples[key]) < examples_per_kind:
                    examples[key].append({"episode_id": facts.episode_id, "scenario": facts.scenario,
                                          "query": facts.episode.query, "answer": answer.text,
                                          "route_index": answer.route_index,
                                          "verdict": outcome.verdict["reason"]})

    def summary(tallies: dict[str, dict[str, Any]]) -> dict[str, Any]:
        c, w = tallies["correct"], tallies["wrong"]
        return {"correct": c["n"], "denied": c["failed"], "denial_rate": _rate(c["failed"], c["n"]),
                "wrong": w["n"], "leaked": w["failed"], "exploit_rate": _rate(w["failed"], w["n"])}

    kinds_out = {side: {kind: {"n": t["n"], "failed": t["failed"], "rate": _rate(t["failed"], t["n"]),
                               "scenarios": dict(t.get("scenarios", {}))}
                        for kind, t in sorted(tallies.items())} for side, tallies in by_kind.items()}
    return {"per_episode": per_episode, "seed": seed, "episodes": len(facts_list), "totals": summary(totals),
            "by_scenario": {s: summary(t) for s, t in sorted(by_scenario.items())}, "by_kind": kinds_out,
            "examples": dict(examples)}


def markdown_table(report: dict[str, Any]) -> str:
    """The sweep as Markdown: one row per scenario, then one per mutation kind that ran."""
    lines = ["| scenario | correct | denied | denial rate | wrong | exploits | exploit rate |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    rows = list(report["by_scenario"].items()) + [("**all**", report["totals"])]
    for name, s in rows:
        lines.append(f"| {name} | {s['correct']} | {s['denied']} | {s['denial_rate']:.1%} | {s['wrong']} | "
                     f"{s['leaked']} | {s['exploit_rate']:.1%} |")
    lines += ["", "| mutation kind | should | answers | failed | rate | where it failed |",
              "|---|---|---:|---:|---:|---|"]
    for side, label in (("correct", "pass"), ("wrong", "fail")):
        for kind, t in report["by_kind"][side].items():
            where = ", ".join(f"{s} {n}" for s, n in sorted(t["scenarios"].items(), key=lambda kv: -kv[1]))
            lines.append(f"| {kind} | {label} | {t['n']} | {t['failed']} | {t['rate']:.1%} | {where} |")
    return "\n".join(lines)
