"""Weather answers: the asked day's condition and temperatures restated (graded words, English, Chinese numerals,
every day of a several-day question, another condition denied from afar), and broken (another condition or phenomenon,
a negation, a hedge, a contradiction, stuffing, temperatures off, another day's forecast, one day of several).
"""

from __future__ import annotations

import dataclasses

from .draw import Draw
from .facts import EpisodeFacts, today_index
from .forms import (ADJACENT_GROUPS, CONDITION_GROUP, FAR_DENIALS, FILLERS_EN, FILLERS_ZH, condition_group,
                    condition_text, join_clauses, kernel_vocabulary, pick_lang, temperature_range_text,
                    temperature_text, wrong_conditions)
from .registry import mutation


# -- the weather restated ----------------------------------------------------------------------------------------------


_DAY_WORDS = {0: ("今天", "today"), 1: ("明天", "tomorrow"), 2: ("后天", "the day after tomorrow"),
              3: ("大后天", "in three days")}


def _current_temperature(f: EpisodeFacts) -> float:
    """The temperature of current weather: :func:`.facts.facts_of` keeps no current weather without one
    (``WeatherFacts.is_empty``)."""
    assert f.weather is not None and f.weather.temperature is not None, f
    return f.weather.temperature


def _day_label(f: EpisodeFacts, d: Draw, index: int, lang: str) -> str:
    assert f.weather is not None
    w = f.weather
    base = today_index(w)
    words = _DAY_WORDS.get(index - base)
    options = [w.days[index].date, ""] + ([words[1] if lang == "en" else words[0]] if words else [])
    return d.choice(options)


def _weather_sentence(f: EpisodeFacts, d: Draw, lang: str, *, condition: str | None = None,
                      temperature: str | None = None, cn: bool = False, day: int | None = None) -> str:
    """A weather answer; ``condition``/``temperature`` replace the true statements when given."""
    assert f.weather is not None
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
    temp = temperature if temperature is not None else temperature_text(d, _current_temperature(f), lang, cn)
    if lang == "en":
        return join_clauses(d, d.shuffled([d.choice((f"weather in {city} right now: {cond}",
                                                     f"current conditions in {city}: {cond}")),
                                           f"the temperature is {temp}"]), lang)
    return join_clauses(d, d.shuffled([f"{city}{d.choice(('现在', '当前天气', '目前'))}{cond}",
                                       d.choice((f"气温{temp}", f"温度{temp}"))]), lang)


def weather_paraphrase(f: EpisodeFacts, d: Draw, lang: str, style: str) -> str:
    return _weather_sentence(f, d, lang, cn=style == "cn")


@mutation("far_denial", correct=True, families=("weather",),
          applies=lambda f: bool(wrong_conditions(_true_groups(f))))
def _far_denial(f: EpisodeFacts, d: Draw):
    """The true weather, then another condition denied from a distance (不太可能出现小雨, rain is unlikely)."""
    lang = pick_lang(d)
    other = condition_text(d, d.choice(wrong_conditions(_true_groups(f))), lang)
    denial = d.choice(FAR_DENIALS[lang]).format(other)
    return _weather_sentence(f, d, lang) + (f" {denial[0].upper()}{denial[1:]}." if lang == "en" else f"{denial}。")


@mutation("far_denied_truth", correct=False, families=("weather",))
def _far_denied_truth(f: EpisodeFacts, d: Draw):
    """The asked day's true condition denied from a distance (不太可能出现多云 on a cloudy day), maybe with another."""
    lang = pick_lang(d)
    denial = d.choice(FAR_DENIALS[lang]).format(condition_text(d, _asked_condition(f), lang))
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
    return _every_day(f, d, pick_lang(d))


def _every_day(f: EpisodeFacts, d: Draw, lang: str) -> str:
    assert f.weather is not None
    w = f.weather
    base = today_index(w)
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
    assert f.weather is not None
    base = today_index(f.weather)
    f_one = EpisodeFacts(**{**f.__dict__, "several_days": False})
    return _weather_sentence(f_one, d, pick_lang(d), day=base)


@mutation("forecast_day_wrong", correct=False, families=("weather",), applies=_several_days)
def _forecast_day_wrong(f: EpisodeFacts, d: Draw):
    """Every day of a several-day forecast, one of them with another day's temperatures (a range 3 °C off at least)."""
    w = f.weather
    assert w is not None
    base = today_index(w)
    at = d.integer(base, len(w.days) - 1)
    day = w.days[at]
    shift = d.choice((-1, 1)) * d.integer(4, 9)
    wrong = dataclasses.replace(day, low=day.low + shift, high=day.high + shift)
    f_wrong = EpisodeFacts(**{**f.__dict__, "weather": dataclasses.replace(
        w, days=tuple(wrong if i == at else x for i, x in enumerate(w.days)))})
    return _every_day(f_wrong, d, pick_lang(d))


# -- wrong conditions and temperatures ---------------------------------------------------------------------------------


_NEGATED_CONDITION = {"rain": ("不会下雨", "没有雨", "it is not raining"), "snow": ("不会下雪", "没有雪", "no snow"),
                      "clear": ("不是晴天", "不晴", "it is not sunny"), "fog": ("没有雾", "不会起雾", "no fog"),
                      "haze": ("没有雾霾", "没有霾", "no haze"), "cloudy": ("不是阴天也没有云", "没有云", "no clouds")}


def _true_groups(f: EpisodeFacts) -> set[str]:
    assert f.weather is not None
    w = f.weather
    if not w.is_forecast:
        return {condition_group(w.condition)}
    return {condition_group(day.condition) for day in w.days}


def _true_temperatures(f: EpisodeFacts) -> list[float]:
    assert f.weather is not None
    w = f.weather
    if not w.is_forecast:
        return [_current_temperature(f)]
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
    assert f.weather is not None
    w = f.weather
    return w.days[f.day_index].condition if w.is_forecast else w.condition


@mutation("wrong_condition", correct=False, families=("weather",),
          applies=lambda f: bool(wrong_conditions(_true_groups(f))))
def _wrong_condition(f: EpisodeFacts, d: Draw):
    lang = pick_lang(d)
    wrong = d.choice(wrong_conditions(_true_groups(f)))
    return _weather_sentence(f, d, lang, condition=condition_text(d, wrong, lang))


@mutation("negated_condition", correct=False, families=("weather",),
          applies=lambda f: condition_group(_asked_condition(f)) in _NEGATED_CONDITION)
def _negated_condition(f: EpisodeFacts, d: Draw):
    """``今天不是晴天，是暴雨`` on a sunny day (or the negation alone)."""
    zh_a, zh_b, en = _NEGATED_CONDITION[condition_group(_asked_condition(f))]
    lang = pick_lang(d)
    negation = en if lang == "en" else d.choice((zh_a, zh_b))
    wrong = wrong_conditions(_true_groups(f))
    if wrong and d.coin():
        other = condition_text(d, d.choice(wrong), lang)
        negation += f", it's {other}" if lang == "en" else f"，是{other}"
    return _weather_sentence(f, d, lang, condition=negation)


@mutation("condition_hedge", correct=False, families=("weather",),
          applies=lambda f: bool(wrong_conditions(_true_groups(f))))
def _condition_hedge(f: EpisodeFacts, d: Draw):
    lang = pick_lang(d)
    pair = d.shuffled([condition_text(d, _asked_condition(f), lang),
                       condition_text(d, d.choice(wrong_conditions(_true_groups(f))), lang)])
    return _weather_sentence(f, d, lang, condition=f"{pair[0]} or {pair[1]}" if lang == "en" else
                             d.choice((f"{pair[0]}或者{pair[1]}", f"{pair[0]}，也可能{pair[1]}")))


@mutation("condition_contradiction", correct=False, families=("weather",),
          applies=lambda f: bool(wrong_conditions(_true_groups(f))))
def _condition_contradiction(f: EpisodeFacts, d: Draw):
    lang = pick_lang(d)
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
    assert f.weather is not None
    lang, w = pick_lang(d), f.weather
    if w.is_forecast:
        day = w.days[f.day_index]
        low, high = day.low, day.high
        if d.coin():
            low = _wrong_temperature(f, d, low)
        else:
            high = _wrong_temperature(f, d, high)
        return _weather_sentence(f, d, lang, temperature=temperature_range_text(d, low, high, lang))
    wrong = _wrong_temperature(f, d, _current_temperature(f))
    return _weather_sentence(f, d, lang, temperature=temperature_text(d, wrong, lang))


@mutation("temperature_hedge", correct=False, families=("weather",))
def _temperature_hedge(f: EpisodeFacts, d: Draw):
    """Two temperatures for one reading (``-4℃或10℃``), or a range for the current temperature."""
    assert f.weather is not None
    lang, w = pick_lang(d), f.weather
    if w.is_forecast:
        day = w.days[f.day_index]
        wrong = _wrong_temperature(f, d, day.high)
        text = f"{round(day.low)}~{round(day.high)}℃ or {round(day.low)}~{wrong}℃" if lang == "en" else \
            f"{round(day.low)}~{round(day.high)}℃，也可能是{round(day.low)}~{wrong}℃"
        return _weather_sentence(f, d, lang, temperature=text)
    current = _current_temperature(f)
    wrong = _wrong_temperature(f, d, current)
    pair = d.shuffled([round(current), wrong])
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
    banned = {group} | ADJACENT_GROUPS.get(group, set())
    for index, day in enumerate(w.days):
        if index != f.day_index and condition_group(day.condition) not in banned and (
                abs(day.low - asked.low) > 2 or abs(day.high - asked.high) > 2):
            return index
    return None


@mutation("other_day", correct=False, families=("weather",), applies=lambda f: _other_day(f) is not None)
def _other_day_weather(f: EpisodeFacts, d: Draw):
    """Another forecast day's condition and temperatures, given for the asked day."""
    index = _other_day(f)
    assert f.weather is not None and index is not None
    day = f.weather.days[index]
    lang = pick_lang(d)
    return _weather_sentence(f, d, lang, condition=condition_text(d, day.condition, lang),
                             temperature=temperature_range_text(d, day.low, day.high, lang))


# -- open-world phenomena: the Amap table, read from the kernel's data file --------------------------------------------


PHENOMENA_ADJACENT = {"rain": {"hail", "sleet", "snow"}, "snow": {"sleet", "rain"}, "sleet": {"rain", "snow"},
                      "hail": {"rain"}, "fog": {"haze"}, "haze": {"fog", "dust"}, "dust": {"haze"},
                      "sun": {"cloud"}, "cloud": {"sun", "overcast"}, "overcast": {"cloud"}}


def _phenomenon_family(condition: str) -> set[str]:
    table = kernel_vocabulary("weather_phenomena.json")["phenomena"]
    found = set()
    for label, entry in table.items():
        words = [w for w in [label, *entry.get("spellings", ())] if not w.isascii()]
        if any(w in condition for w in words):
            found.add(entry["family"])
    return found


def _foreign_phenomena(f: EpisodeFacts) -> list[tuple[str, tuple[str, ...]]]:
    """Amap phenomena (label, English words) of a family unlike every true condition's (nor an adjacent one)."""
    assert f.weather is not None
    w = f.weather
    conditions = [day.condition for day in w.days] if w.is_forecast else [w.condition]
    true = set().union(*(_phenomenon_family(c) for c in conditions))
    banned = true | {a for t in true for a in PHENOMENA_ADJACENT.get(t, ())}
    table = kernel_vocabulary("weather_phenomena.json")["phenomena"]
    return [(label, tuple(e.get("spellings", ()))) for label, e in table.items()
            if e.get("answer_word", True) and "-" not in label and "/" not in label and e["family"] not in banned
            and e["family"] not in ("wind", "unknown")]


@mutation("phenomenon_hedge", correct=False, families=("weather",), applies=lambda f: bool(_foreign_phenomena(f)))
def _phenomenon_hedge(f: EpisodeFacts, d: Draw):
    """The true weather, then any other phenomenon of the Amap table as a possibility (``也可能有冰雹``,
    ``with a chance of a tornado``)."""
    lang = pick_lang(d)
    label, english = d.choice(_foreign_phenomena(f))
    en_words = [w for w in english if w.isascii()]
    true = condition_text(d, _asked_condition(f), lang)
    if lang == "en" and en_words:
        condition = d.choice((f"{true}, with a chance of {d.choice(en_words)}", f"{true} or {d.choice(en_words)}"))
    else:
        lang = "zh"
        condition = d.choice((f"{_asked_condition(f)}，也可能有{label}", f"{_asked_condition(f)}，局部{label}"))
    return _weather_sentence(f, d, lang, condition=condition)
