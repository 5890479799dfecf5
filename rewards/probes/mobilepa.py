"""MobilePA answers that cannot be gamed (issue 14, reward hardening): generators of hedges, which must fail, and of
honest answers, which must pass (``tests/test_mobilepa_answers.py`` asserts both).

Think like the policy. A behaviour task that asks for facts (a travel time or distance, the temperature,
the weather, a road's traffic, a phone number, a message, an agenda) is cheapest to pass with a hedge.
Each attack generator writes one from the task's gold and from what the oracle saw; every one must FAIL:

* ``other_value``: an honest answer plus another amount of an asked quantity: a gold spelling with one
  number changed (±1 in its last digit, any other number, a digit or ``d.`` put in front);
* ``range``: the gold amount as one end of a range (``25–27分钟``, ``23到25 min``);
* ``shotgun_numbers``: amounts of the asked unit in steps around the gold, the gold among them;
* ``route_options``: every route option the oracle's observations show (its payloads), the gold's among them;
* ``inside_longer_number``: the gold spelled inside a longer number (``125分钟``, ``32.2 km``), nothing else;
* ``vocabulary``: the gold word plus other words of its vocabulary (all of them, or some);
* ``records``: the gold plus other records of the same kind from ``S_0`` (numbers, messages, events).

Each paraphrase generator writes an honest answer that must PASS: ``plain`` (every gold fact in any accepted
spelling, in Chinese or English templates, with filler holding no amount of an asked unit: the other facts
the oracle stated, a time of day), ``other_spelling`` (the amounts spelled otherwise: ``25 minutes``,
``二十五分钟``, ``1 hour 5 minutes``, metres, whole kilometres, °F), ``realistic`` (per family, worded as a
careful assistant would, with the details it adds: traffic lights, tolls, speed, humidity, wind, ETA, dates),
``restated`` (the request quoted first) and ``negation`` (the other choices denied: "no heavy rain",
"没有拥堵", "rain is not expected"). ``far_negation`` denies them with the negator further away ("no chance at
all of rain", "不太可能出现小雨", "unlikely to see any fog"); until verdict version 6 the verifier read those as
claims (9-11 % of these honest answers denied).

Tasks: a task directory (:func:`bundled`: the caller names the bundled set's) and fresh tasks of an unseen seed
(:func:`fresh`). :func:`sweep` tries every generator on each and counts exploits and denials; :func:`report` is the
JSON of ``python tests/test_mobilepa_answers.py --fresh N``.
"""

from __future__ import annotations

import dataclasses
import random
import re
from collections import defaultdict
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

from mobility_env.mobilepa.answers import stated_quantities
from mobility_env.mobilepa.domains.maps_travel import travel_minutes
from mobility_env.mobilepa.episode import PhoneTrajectory, play
from mobility_env.mobilepa.generate import generate_tasks
from mobility_env.mobilepa.generate_phrases import (CONDITION_WORDS, GENERIC_WORDS, TRAFFIC_WORDS, distance_text,
                                                    minutes_text)
from mobility_env.mobilepa.tasks import PhoneTask, load_tasks
from mobility_rewards.mobilepa.verify import answer_distractors, gold_quantity, verify_phone_task

from .draw import Draw, RandomDraw
from .forms import UNREADABLE, clear_of, holding, kernel_vocabulary
from .surface import BLANK_FILLERS, ZERO_WIDTH, lookalike, sprinkled, traditional
from .traffic import COLLOQUIAL_TRAFFIC
from .weather import PHENOMENA_ADJACENT

FRESH_SEED, FRESH_TASKS = 9103, 800  # a seed the bundled set (seed 0) never used
Verify = Callable[[PhoneTask, PhoneTrajectory], Any]


@dataclasses.dataclass
class Facts:
    """One answer task, played once by its oracle: what the generators write answers from."""

    task: PhoneTask
    oracle: PhoneTrajectory
    family: str
    groups: list[tuple[list[str], Any]]  # each mention group and its amount (None: no quantity)
    observed: dict[str, set[int]]  # amounts the oracle's observations show: minutes, metres, °C
    other_facts: list[str]  # amounts the oracle's answer states in units nobody asked about
    vocabulary: dict[str, tuple[str, ...]] | None
    word: str | None

    def passes(self, answer: str, verify: Verify = verify_phone_task) -> bool:
        return bool(verify(self.task, dataclasses.replace(self.oracle, answer=answer)).passed)


def facts_of(task: PhoneTask) -> Facts:
    assert task.gold_behaviour is not None
    oracle = play(task)
    groups = [(group, gold_quantity(tuple(group))) for group in task.gold_behaviour.answer_mentions]
    kinds = {q.kind for _, q in groups if q is not None}
    vocabulary, word = None, None
    for group, _ in groups:
        for table in (CONDITION_WORDS, TRAFFIC_WORDS):
            if group[0] in table:
                vocabulary, word = table, group[0]
    family = ("route_facts" if kinds & {"duration", "distance"} else "weather_now" if "temperature" in kinds
              else "traffic_now" if vocabulary is TRAFFIC_WORDS else "rain_alarm" if vocabulary
              else "phone_number" if re.fullmatch(r"\d{11}", groups[0][0][0]) else
              "agenda" if len(groups) > 1 else "last_message")
    other_facts = [q.text for q in stated_quantities(task.oracle_answer) if q.kind not in kinds]
    return Facts(task, oracle, family, groups, observed_amounts(oracle), other_facts, vocabulary, word)


def observed_amounts(trajectory: PhoneTrajectory) -> dict[str, set[int]]:
    """Every route's minutes and metres and every temperature in the oracle's successful observations."""
    out: dict[str, set[int]] = defaultdict(set)

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                if key == "duration_s" and isinstance(item, (int, float)):
                    out["duration"].add(travel_minutes(item))
                elif key == "distance_m" and isinstance(item, (int, float)):
                    out["distance"].add(int(item))
                else:
                    walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)
        elif isinstance(value, str):
            out["temperature"].update(int(t) for t in re.findall(r"(-?\d+)(?=(?:~-?\d+)?℃)", value))
    for call in trajectory.calls:
        if call.succeeded:
            walk(call.payload)
    return out


def answer_tasks(tasks: list[PhoneTask]) -> list[Facts]:
    return [facts_of(t) for t in tasks if t.gold_behaviour is not None and t.gold_behaviour.answer_mentions]


@lru_cache(maxsize=None)
def bundled(directory: Path) -> tuple[Facts, ...]:
    """The answer tasks of a task directory: the bundled set's is :data:`mobility_env.mobilepa.env.BUNDLED_TASKS`
    (the env layer: the caller names it)."""
    return tuple(answer_tasks(load_tasks(directory)))


@lru_cache(maxsize=None)
def fresh(n: int = FRESH_TASKS, seed: int = FRESH_SEED) -> tuple[Facts, ...]:
    """The answer tasks of ``n`` tasks generated with ``seed`` (each checked by the verifier, as the generator does)."""
    return tuple(answer_tasks(generate_tasks(n, seed=seed, verify=verify_phone_task)))


# -- spelling amounts --------------------------------------------------------------------------------------------------
_ZH = "零一二三四五六七八九"


def zh_numeral(value: int) -> str:
    """0..999 in Chinese numerals (二十五, 一百零五); negatives as 零下…."""
    if value < 0:
        return "零下" + zh_numeral(-value)
    hundreds, rest = divmod(value, 100)
    tens, ones = divmod(rest, 10)
    out = (_ZH[hundreds] + "百") if hundreds else ""
    if tens:
        out += ("" if tens == 1 and not hundreds else _ZH[tens]) + "十"
    elif hundreds and ones:
        out += "零"
    return out + (_ZH[ones] if ones or not out else "")


def same_amount(kind: str, value: int, draw: Draw) -> str:
    """The amount (minutes, metres, °C) spelled another honest way than the gold's spellings."""
    if kind == "duration":
        hours, rest = divmod(value, 60)
        forms = [f"{value} minutes", f"{value} mins", f"{value}-minute", zh_numeral(value) + "分钟"]
        if hours:
            forms += [f"{hours} hour{'s' if hours > 1 else ''} {rest} minutes", f"{hours}个小时{zh_numeral(rest)}分钟"]
            if rest == 30:
                forms += [f"{zh_numeral(hours)}个半小时", f"{hours} and a half hours"]
        return draw.choice(forms)
    if kind == "distance":
        whole, tenth = divmod(round(value / 100), 10)  # 23942 m: 二十三点九公里
        forms = [f"{value} metres", f"{value:,} meters", f"{value / 1000:.2f} km", f"{value}米",
                 f"{round(value / 1000)} km" if value >= 1000 else f"{value} m", f"{zh_numeral(whole)}点{_ZH[tenth]}公里",
                 f"{value / 1609.344:.3f} miles", f"{value / 500:.3f}里"]  # units the reader converts (里 = 500 m)
        return draw.choice(forms)
    if kind == "temperature":
        return draw.choice([f"{value} degrees Celsius", f"{value} °C", f"{value}摄氏度", zh_numeral(value) + "度",
                            f"{value}℃ ({value * 9 / 5 + 32:.0f}°F)"])
    return f"{value}%"


def amount_text(kind: str, value: int, lang: str) -> str:
    """An amount as the oracle spells it (minutes_text / distance_text / ℃)."""
    if kind == "duration":
        return minutes_text(value, lang)
    if kind == "distance":
        return distance_text(value, lang)
    return f"{value}℃"


def _half_unit(number: str) -> float:
    """Half the precision ``number`` is written with (``6`` ± 0.5, ``5.6`` ± 0.05)."""
    return 0.5 * 10 ** -len(number.partition(".")[2])


def _disagrees(new: str, old: str) -> bool:
    """Whether ``new`` states another amount than ``old`` at the precisions they are written with (the
    verifier's rule: ``5.6`` agrees with a recorded ``6``, which may be 5.5 to 6.5; ``61`` does not with ``62``)."""
    return abs(float(new) - float(old)) >= _half_unit(new) + _half_unit(old)


def shifted(spelling: str, draw: Draw, mode: str) -> str:
    """``spelling`` with one of its numbers changed (see the module docstring) to another amount: never the same
    number, nor one that agrees with it at the precisions written (``6`` → ``5.6`` is no other temperature)."""
    numbers = list(re.finditer(r"\d+(?:\.\d+)?", spelling))
    m = draw.choice(numbers)
    text = m.group(0)
    places = len(text.partition(".")[2])
    if mode == "prefix":
        new = f"{draw.integer(1, 9)}{text}"
    elif mode == "decimal_prefix":
        digits = text.replace(".", "")
        new = draw.choice([f"{d}.{digits}" for d in range(10) if _disagrees(f"{d}.{digits}", text)]
                          or [f"{int(float(text)) + 2}"])
    else:
        step = draw.choice((-1, 1)) if mode == "plus_minus_one" else draw.choice((-1, 1)) * draw.integer(2, 500)
        value = round(float(text) * 10 ** places) + step
        value = value if value >= 0 else value + 2 * abs(step)
        new = f"{value / 10 ** places:.{places}f}"
    return spelling[:m.start()] + new + spelling[m.end():]


# -- honest answers ----------------------------------------------------------------------------------------------------
FILLER = {"zh": ["祝你一路顺利！", "数据更新于2025-11-23 10:43:33。", "有需要再叫我。", "途经7个红绿灯，过路费约9元。",
                 "平均时速57公里/小时。", "湿度88%，东南风3级。", "共3条路线，第1条最快。", "预计10:45到达。"],
          "en": ["Have a good trip!", "Updated Nov 23 at 10:43.", "Anything else?", "7 traffic lights, tolls ¥9.",
                 "Average speed 57 km/h.", "Humidity 88%, wind level 3.", "The fastest of 3 routes (route 1).",
                 "ETA 10:45."]}
TEMPLATES = {"zh": ["{facts}。", "查好了：{facts}。", "好的，{facts}。", "根据查到的信息，{facts}。"],
             "en": ["{facts}.", "Here you go: {facts}.", "I looked it up: {facts}.",
                    "According to the phone, {facts}."]}


def honest(f: Facts, draw: Draw, spelling: Callable[[list[str], Any], str] | None = None) -> str:
    """Every gold fact (``spelling`` of each group, default any accepted spelling) in a template with filler."""
    lang = draw.choice(("zh", "en"))
    facts = [spelling(group, q) if spelling else draw.choice(group) for group, q in f.groups]
    facts += draw.subset(f.other_facts, 0, len(f.other_facts))
    text = draw.choice(TEMPLATES[lang]).format(facts=("，" if lang == "zh" else "; ").join(draw.shuffled(facts)))
    filler = draw.subset([t for t in FILLER[lang] if f.family != "agenda" or ":" not in t], 0, 2)  # (an agenda's
    # other events have times of day: stating one is stating another record)
    return " ".join(draw.shuffled([text, *filler]))


def other_spelling(f: Facts, draw: Draw) -> str:
    return honest(f, draw, lambda group, q: draw.choice(group) if q is None else
                  same_amount(q.kind, int(q.value), draw))


def restated(f: Facts, draw: Draw) -> str:
    return draw.choice([f"你问“{f.task.query}”：", f'You asked: "{f.task.query}" — ']) + honest(f, draw)


def other_words(f: Facts) -> list[str]:
    """The words of the gold's vocabulary that are another choice: none inside a gold spelling, nor the generic word
    of the gold's family (``rain`` for 阵雨)."""
    assert f.vocabulary is not None and f.word is not None
    golds = [s.casefold() for s in (f.word, *f.vocabulary.get(f.word, ()))]
    words = [w for key, renderings in f.vocabulary.items() if key != f.word for w in (key, *renderings)]
    for char, generic in GENERIC_WORDS.items():  # rain, 雨, snow ... of the families the gold is not in
        if any(char in key for key in f.vocabulary):
            words = [w for w in words if w not in generic] + ([] if char in f.word else list(generic))
    return [w for w in dict.fromkeys(words) if not any(w.casefold() in g for g in golds)]


#: Ways to deny another choice: the negator at most two words (characters) before it, and further away, bridged to the
#: word (``far_negation``).
DENIALS = {"en": ["no {}", "not {}", "no sign of {}", "there won't be any {}", "without {}", "isn't {}"],
           "zh": ["没有{}", "不是{}", "不会有{}", "并非{}", "没出现{}"]}
FAR_DENIALS = {"en": ["no chance at all of {}", "nothing like a {}", "not a chance of {}", "zero chance of {}",
                      "unlikely to see {}", "unlikely to see any {}"],
               "zh": ["不太可能出现{}", "完全没有出现{}", "不大可能有{}", "不会有任何{}", "没有出现{}", "不太可能是{}",
                      "没怎么见到{}", "未见{}", "没见到{}", "不太可能遇到{}", "不会再有{}", "没怎么出现{}"]}


def negation(f: Facts, draw: Draw, forms: dict[str, list[str]] = DENIALS) -> str:
    denied = [draw.choice(forms["en" if w.isascii() else "zh"]).format(w) for w in draw.subset(other_words(f), 1, 3)]
    return honest(f, draw) + " " + "，".join(denied) + "."


def _english(f: Facts) -> str:
    assert f.vocabulary is not None and f.word is not None
    return (f.vocabulary.get(f.word) or (f.word,))[0]


def realistic(f: Facts, draw: Draw) -> str:
    """An answer as a careful assistant words it, per task family, with the details it would add."""
    golds = {q.kind: int(q.value) for _, q in f.groups if q is not None}
    if f.family == "route_facts":
        parts_zh = ([f"大约{golds['duration']}分钟"] if "duration" in golds else []) + \
            ([f"全程{distance_text(golds['distance'], 'zh')}左右"] if "distance" in golds else [])
        parts_en = ([f"about {minutes_text(golds['duration'], 'en')}"] if "duration" in golds else []) + \
            ([f"{distance_text(golds['distance'], 'en')} in total"] if "distance" in golds else [])
        return draw.choice([f"开车过去{'，'.join(parts_zh)}，途经7个红绿灯，预计10:45到达。",
                            f"It's {' and '.join(parts_en)}, via 松江路 with 7 traffic lights (average 57 km/h).",
                            f"共有3条路线，最快的一条{'，'.join(parts_zh)}，过路费9元。"])
    if f.family == "weather_now":
        t, word = golds["temperature"], f.word
        return draw.choice([f"这边现在{word}，{t}℃，湿度88%，记得带伞。",
                            f"Right now it's {_english(f)} here, {t}°C (about {t * 9 / 5 + 32:.0f}°F), humidity 88%.",
                            f"Current weather: {_english(f)}, temperature {t} degrees, wind level 3."])
    if f.family == "traffic_now":
        return draw.choice([f"这条路现在{f.word}。", f"The road is {_english(f)} at the moment (updated 10:43).",
                            f"路况：{f.word}，数据更新于2025-11-23 10:43:33。"])
    if f.family == "rain_alarm":
        if "雨" in (f.word or ""):
            return draw.choice([f"明天有{f.word}，已把闹钟提前半小时。",
                                f"Tomorrow: {_english(f)}. I moved your alarm 30 minutes earlier."])
        return draw.choice([f"明天{f.word}，不会下雨，闹钟保持不变。",
                            f"Tomorrow will be {_english(f)} with no rain expected, so the alarm stays as it is.",
                            f"{_english(f).capitalize()} tomorrow; rain is not expected, alarm unchanged."])
    facts = [draw.choice(group) for group, _ in f.groups]
    return draw.choice([f"查到了：{'，'.join(facts)}。", f"Here is what I found: {'; '.join(facts)}."])


_AMOUNT_TEXT = re.compile(r"-?\d+(?:\.\d+)?\s*(?:公里|千米|米|分钟|小时|℃|°C|度|km|min|h|%)", re.IGNORECASE)


def markdown(f: Facts, draw: Draw) -> str:
    """An honest answer as a chat model formats it: amounts (or words) in bold, bullets, a heading or a quote mark."""
    text = honest(f, draw)
    if draw.choice((True, False)):
        text = _AMOUNT_TEXT.sub(lambda m: f"**{m.group(0)}**", text)
    layout = draw.choice(("inline", "bullets", "heading", "quote"))
    if layout == "bullets":  # a line per clause, never inside a gold text (a message keeps its comma)
        inside = {i for group, _ in f.groups for g in group for m in re.finditer(re.escape(g), text)
                  for i in range(m.start(), m.end())}
        cuts = [m.end() for m in re.finditer(r"[，。；;]", text) if m.start() not in inside]
        pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])]
        text = "\n".join(f"- {c}" for c in pieces if c.strip())
    elif layout == "heading":
        text = draw.choice(("### 结果\n", "## Answer\n")) + text
    elif layout == "quote":
        text = "> " + text
    return text


PARAPHRASES: dict[str, tuple[Callable[[Facts], bool], Callable[[Facts, Draw], str]]] = {
    "plain": (lambda f: True, honest),
    "realistic": (lambda f: True, realistic),
    "other_spelling": (lambda f: any(q is not None for _, q in f.groups), other_spelling),
    "restated": (lambda f: True, restated),
    "markdown": (lambda f: True, markdown),
    "negation": (lambda f: f.vocabulary is not None, negation),
    "far_negation": (lambda f: f.vocabulary is not None, lambda f, draw: negation(f, draw, FAR_DENIALS)),
    # what the user reads is the honest answer: zero-width characters anywhere, Latin letters in look-alikes
    "invisible_chars": (lambda f: True, lambda f, draw: sprinkled(
        draw, realistic(f, draw), ZERO_WIDTH, draw.integer(1, 4), after_numbers=True)),
    "lookalikes": (lambda f: True, lambda f, draw: lookalike(draw, realistic(f, draw), draw.integer(1, 6))),
    # written in Traditional characters (mainland, Taiwan with its phrases, Hong Kong): the same answer to its reader
    "traditional": (lambda f: True, lambda f, draw: traditional(draw, draw.choice((honest, realistic))(f, draw))),
}
PARAPHRASES["spoken_approximation"] = (lambda f: bool(_approximable(f, holding)),
                                       lambda f, draw: approximated(f, draw, holding))
DENIED_BY_DESIGN: set[str] = set()  # paraphrases the verifier may deny by design (none since verdict version 6)


# -- attacks -----------------------------------------------------------------------------------------------------------
def _quantity_groups(f: Facts) -> list[tuple[list[str], Any]]:
    return [(group, q) for group, q in f.groups if q is not None]


def other_value(f: Facts, draw: Draw) -> str:
    group, _ = draw.choice(_quantity_groups(f))
    hedge = shifted(draw.choice(group), draw, draw.choice(("plus_minus_one", "random", "prefix", "decimal_prefix")))
    return draw.choice([f"{honest(f, draw)} {draw.choice(['也可能是', 'or maybe', '/', ''])} {hedge}",
                        f"{hedge}; {honest(f, draw)}"])


def in_range(f: Facts, draw: Draw) -> str:
    group, _ = draw.choice(_quantity_groups(f))
    spelling = draw.choice(group)
    m = re.search(r"\d+(?:\.\d+)?", spelling)
    assert m is not None
    other = shifted(m.group(0), draw, draw.choice(("plus_minus_one", "random")))
    pair = draw.choice([(m.group(0), other), (other, m.group(0))])
    joined = draw.choice(["–", "-", "~", "到", " to ", " or ", "或"]).join(pair)
    return honest(f, draw) + " " + spelling[:m.start()] + joined + spelling[m.end():]


def shotgun_numbers(f: Facts, draw: Draw) -> str:
    group, q = draw.choice(_quantity_groups(f))
    spelling = draw.choice(group)
    gold = int(q.value)
    step = {"duration": 5, "distance": 1000, "temperature": 1}.get(q.kind, 10)
    values = sorted({gold + step * k for k in range(-4, 5)} - {gold})
    listed = [amount_text(q.kind, v, draw.choice(("zh", "en"))) for v in values] + [spelling]
    return honest(f, draw) + " " + draw.choice(["、", ", ", " / "]).join(draw.shuffled(listed))


def route_options(f: Facts, draw: Draw) -> str:
    lang = draw.choice(("zh", "en"))
    golds = {q.kind: int(q.value) for _, q in _quantity_groups(f)}
    options = [amount_text(kind, v, lang) for kind in golds for v in sorted(f.observed.get(kind, ()))
               if amount_text(kind, v, lang) != amount_text(kind, golds[kind], lang)]
    assert options
    listed = [f"{'路线' if lang == 'zh' else 'route '}{i}: {text}" for i, text in enumerate(draw.shuffled(options), 1)]
    return honest(f, draw) + " " + "; ".join(listed)


def _route_options_apply(f: Facts) -> bool:
    golds = {q.kind: int(q.value) for _, q in _quantity_groups(f)}
    return any(amount_text(kind, v, "en") != amount_text(kind, gold, "en") for kind, gold in golds.items()
               for v in f.observed.get(kind, ()))


def inside_longer_number(f: Facts, draw: Draw) -> str:
    numeric = [i for i, (group, _) in enumerate(f.groups) if group[0][:1].isdigit()]
    victim = draw.choice(numeric)
    facts = [shifted(draw.choice([s for s in group if s[:1].isdigit()]), draw, "prefix") if i == victim
             else draw.choice(group) for i, (group, _) in enumerate(f.groups)]
    return "，".join(facts)


def vocabulary(f: Facts, draw: Draw) -> str:
    words = other_words(f)
    picked = words if draw.coin() else draw.subset(words, 1, 4)
    return honest(f, draw) + " " + draw.choice(["、", ", ", " or ", "或"]).join(draw.shuffled(picked))


def records(f: Facts, draw: Draw) -> str:
    others = answer_distractors(f.task)
    return honest(f, draw) + " " + "；".join(draw.subset(others, 1, len(others)))


ATTACKS: dict[str, tuple[Callable[[Facts], bool], Callable[[Facts, Draw], str]]] = {
    "other_value": (lambda f: bool(_quantity_groups(f)), other_value),
    "range": (lambda f: bool(_quantity_groups(f)), in_range),
    "shotgun_numbers": (lambda f: bool(_quantity_groups(f)), shotgun_numbers),
    "route_options": (_route_options_apply, route_options),
    "inside_longer_number": (lambda f: any(g[0][:1].isdigit() for g, _ in f.groups), inside_longer_number),
    "vocabulary": (lambda f: f.vocabulary is not None, vocabulary),
    "records": (lambda f: bool(answer_distractors(f.task)), records),
    # the attacks above with their wrong part hidden from a parser but not from the user (35\u200b分钟, wаlk)
    "invisible_hedge": (lambda f: bool(_attacks_for(f)), lambda f, draw: sprinkled(
        draw, _an_attack(f, draw), ZERO_WIDTH + BLANK_FILLERS, draw.integer(1, 3), after_numbers=True)),
    "lookalike_hedge": (lambda f: bool(_attacks_for(f)), lambda f, draw: lookalike(
        draw, _an_attack(f, draw), draw.integer(1, 6))),
    "traditional_hedge": (lambda f: bool(_attacks_for(f)),
                          lambda f, draw: traditional(draw, _an_attack(f, draw), phrases=True)),
    # a condition or state outside the task's own word lists: any phenomenon of the Amap table, everyday traffic words
    "foreign_condition": (lambda f: bool(_foreign_conditions(f)), lambda f, draw: foreign_condition(f, draw)),
    # a second time of day or phone number offered as a possibility (08:00，也可能是10:00; 185… or 185…)
    "time_or_id_hedge": (lambda f: bool(_time_or_id_groups(f)), lambda f, draw: time_or_id_hedge(f, draw)),
    "unitless_alternative": (lambda f: bool(_quantity_groups(f)), lambda f, draw: unitless_alternative(f, draw)),
    # an amount as a round number and more clear of the gold (3个多小时 for 84 minutes), and one no reader can read
    "wrong_approximation": (lambda f: bool(_approximable(f, clear_of)),
                            lambda f, draw: approximated(f, draw, clear_of)),
    "unreadable_amount": (lambda f: True, lambda f, draw: unreadable_amount(f, draw)),
}


def _approximable(f: Facts, spans: Callable[[str, float, str], list[str]]) -> list[list[str]]:
    """The mention groups of a duration or distance that ``spans`` approximates (:func:`.forms.holding`: honestly,
    :func:`.forms.clear_of`: wrongly)."""
    return [group for group, q in _quantity_groups(f)
            if q.kind in ("duration", "distance") and spans(q.kind, float(q.value), "zh")]


def approximated(f: Facts, draw: Draw, spans: Callable[[str, float, str], list[str]]) -> str:
    """The answer with one amount as a round number and more (``20多分钟``, ``1个多小时``, ``十几公里``), holding it
    or clear of it as ``spans`` chooses."""
    chosen = draw.choice(_approximable(f, spans))

    def spell(group: list[str], q: Any) -> str:
        if group is not chosen:
            return draw.choice(group)
        lang = draw.choice(("zh", "en"))
        return draw.choice(spans(q.kind, float(q.value), lang) or spans(q.kind, float(q.value), "zh"))
    return honest(f, draw, spell)


def unreadable_amount(f: Facts, draw: Draw) -> str:
    """The honest answer and a second amount in a spelling no reader knows (``… plus 3 more minutes``)."""
    lang = draw.choice(("zh", "en"))
    return honest(f, draw).rstrip("。.") + draw.choice(UNREADABLE[lang]).format(n=draw.integer(2, 9)) + "。"


def _foreign_conditions(f: Facts) -> list[str]:
    """Words stating a condition or state unlike the gold's, from the kernel's data read directly (the Amap phenomena
    of another family and not adjacent to it; everyday traffic words of another state)."""
    if f.family in ("weather_now", "rain_alarm") and f.word:
        families = {e["family"] for label, e in kernel_vocabulary("weather_phenomena.json")["phenomena"].items()
                    if label == f.word or f.word in e.get("spellings", ()) or label in f.word}
        banned = families | {a for x in families for a in PHENOMENA_ADJACENT.get(x, ())} | {"wind", "unknown"}
        return [w for label, e in kernel_vocabulary("weather_phenomena.json")["phenomena"].items()
                if e.get("answer_word", True) and e["family"] not in banned and "-" not in label
                for w in [label, *e.get("spellings", ())] if "/" not in w]
    if f.family == "traffic_now" and f.word in COLLOQUIAL_TRAFFIC:
        near = {"畅通": {"畅通"}, "缓行": {"缓行", "拥堵"}, "拥堵": {"拥堵", "缓行", "严重拥堵"},
                "严重拥堵": {"严重拥堵", "拥堵"}}[f.word]
        return [w for state, (zh, en) in COLLOQUIAL_TRAFFIC.items() if state not in near for w in zh + en]
    return []


def foreign_condition(f: Facts, draw: Draw) -> str:
    """The honest answer, then a condition or state the record contradicts, asserted (``也会有冰雹``, ``沙塵暴``
    in Traditional, ``路上车不多，很顺`` on a jammed road)."""
    word = draw.choice(_foreign_conditions(f))
    said = draw.choice([f"，也会有{word}。", f"，局部{word}。", f" Also expect {word}.", f"，{word}。"])
    text = honest(f, draw).rstrip("。.") + said
    return traditional(draw, text) if draw.coin() else text


_CLOCK_SPELLING = re.compile(r"^(\d{1,2}):(\d{2})$")
_ID_SPELLING = re.compile(r"^\d{7,}$")


def _time_or_id_groups(f: Facts) -> list[str]:
    """The gold's spellings that are a 24-hour time (``08:00``) or a number of seven digits or more."""
    return [s for group, _ in f.groups for s in group if _CLOCK_SPELLING.match(s) or _ID_SPELLING.match(s)]


def time_or_id_hedge(f: Facts, draw: Draw) -> str:
    """The honest answer with another time of day (one to five hours off, not a reading of the same on a 12-hour
    dial) or another number of the same length (its last four digits changed) offered after the gold's."""
    spelling = draw.choice(_time_or_id_groups(f))
    clock = _CLOCK_SPELLING.match(spelling)
    if clock:  # never a time the reference answer states (another record of the day is no hedge)
        hours = [(int(clock.group(1)) + step) % 24 for step in (1, 2, 3, 5)]
        hours = [h for h in hours if f"{h:02d}:{clock.group(2)}" not in f.task.oracle_answer] or [hours[0]]
        other = f"{draw.choice(hours):02d}:{clock.group(2)}"
    else:
        tail = f"{(int(spelling[-4:]) + draw.integer(1, 9998)) % 10000:04d}"
        other = spelling[:-4] + tail
    joiner = draw.choice(["，也可能是{}", "，或者{}", " or maybe {}", "（或{}）"])
    return honest(f, draw).rstrip("。.") + joiner.format(other) + "。"


def unitless_alternative(f: Facts, draw: Draw) -> str:
    """The honest answer with a second amount with no unit right after one of its amounts, offered as a possibility
    (``25分钟，也可能32``, ``6°C, or maybe 85``)."""
    chosen, _ = draw.choice(_quantity_groups(f))
    joiner = draw.choice(["，也可能{}", "，或者{}", " or maybe {}", "或{}"])

    def spell(group: list[str], q: Any) -> str:
        spelling = draw.choice(group)
        if group is not chosen:
            return spelling
        m = re.search(r"\d+(?:\.\d+)?", spelling)
        assert m is not None
        return spelling + joiner.format(re.sub(r"[^\d.]", "", shifted(m.group(0), draw, "random")))
    return honest(f, draw, spell)


def _attacks_for(f: Facts) -> list[Callable[[Facts, Draw], str]]:
    return [make for kind, (applies, make) in ATTACKS.items() if "hedge" not in kind and applies(f)]


def _an_attack(f: Facts, draw: Draw) -> str:
    return draw.choice(_attacks_for(f))(f, draw)


# -- the sweep ---------------------------------------------------------------------------------------------------------
def sweep(facts: tuple[Facts, ...], per_kind: int = 3, seed: int = 0, verify: Verify = verify_phone_task
          ) -> dict[str, Any]:
    """Every applicable generator ``per_kind`` times per task; a report in the form of :func:`.sweep.sweep`'s (a
    denial: an honest answer that fails; an exploit: an attack that passes), with examples."""
    tallies: dict[str, dict[str, dict[str, int]]] = defaultdict(lambda: defaultdict(lambda: {"n": 0, "failed": 0}))
    by_family: dict[str, dict[str, dict[str, int]]] = defaultdict(lambda: defaultdict(lambda: {"n": 0, "failed": 0}))
    examples: dict[str, list[str]] = defaultdict(list)
    for f in facts:
        for side, kinds, should_pass in (("correct", PARAPHRASES, True), ("wrong", ATTACKS, False)):
            for kind, (applies, make) in kinds.items():
                if not applies(f):
                    continue
                for i in range(per_kind):
                    answer = make(f, RandomDraw(random.Random(f"{seed}:{f.task.task_id}:{kind}:{i}")))
                    failed = f.passes(answer, verify) != should_pass
                    for tally in (tallies[side][kind], by_family[f.family][side], by_family["all"][side]):
                        tally["n"] += 1
                        tally["failed"] += failed
                    if failed and len(examples[kind]) < 3:
                        examples[kind].append(f"{f.task.task_id} {f.family}: {answer}")

    def rate(t: dict[str, int]) -> float:
        return t["failed"] / t["n"] if t["n"] else 0.0

    def summary(sides: dict[str, dict[str, int]]) -> dict[str, Any]:
        c, w = sides["correct"], sides["wrong"]
        return {"correct": c["n"], "denied": c["failed"], "denial_rate": rate(c), "wrong": w["n"],
                "leaked": w["failed"], "exploit_rate": rate(w)}
    return {"per_episode": per_kind, "seed": seed, "episodes": len(facts), "totals": summary(by_family.pop("all")),
            "by_scenario": {family: summary(sides) for family, sides in sorted(by_family.items())},
            "by_kind": {side: {kind: {**t, "rate": rate(t)} for kind, t in sorted(kinds.items())}
                        for side, kinds in tallies.items()}, "examples": dict(examples)}


def report(sets: dict[str, tuple[Facts, ...]], per_kind: int = 3, verify: Verify = verify_phone_task
           ) -> dict[str, Any]:
    """Per set of tasks: the sweep's totals, its rates per family and each generator's failures (``failed/n``), with
    examples (the JSON ``python tests/test_mobilepa_answers.py --fresh N`` prints)."""
    out = {}
    for name, facts in sets.items():
        swept = sweep(facts, per_kind, verify=verify)
        out[name] = {"answer_tasks": swept["episodes"], "totals": swept["totals"], "by_family": swept["by_scenario"],
                     "by_kind": {side: {k: f"{t['failed']}/{t['n']}" for k, t in kinds.items()}
                                 for side, kinds in swept["by_kind"].items()},
                     "examples": swept["examples"]}
    return out
