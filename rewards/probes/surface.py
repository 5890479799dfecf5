"""Mutations of every family: the plain answer and its surface forms (a closing remark, markdown, English, Chinese
numerals), non-answers (generic text, the query echoed, the keyword alone, a false "nothing found"), and any other
kind's answer rewritten where a reader sees the same text and a parser may not: invisible characters, look-alike
letters of other scripts, Traditional script (OpenCC's mainland, Taiwan and Hong Kong renderings).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Callable, Sequence

from .draw import Draw
from .facts import EpisodeFacts
from .forms import fold
from .places import geo_paraphrase, nearby_paraphrase, poi_paraphrase
from .registry import CORRECT, WRONG, Answer, applicable, mutation
from .route import route_answer
from .traffic import traffic_paraphrase
from .weather import weather_paraphrase

#: The plain answer of each information family (routes: :func:`.route.route_answer`).
INFO_PARAPHRASE: dict[str, Callable[[EpisodeFacts, Draw, str, str], str]] = {
    "poi": poi_paraphrase, "nearby": nearby_paraphrase, "geolocation": geo_paraphrase,
    "weather": weather_paraphrase, "traffic": traffic_paraphrase}


# -- the plain answer and its surface forms ----------------------------------------------------------------------------


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


@mutation("chinese_numerals", correct=True, families=("route", "weather"))
def _chinese_numerals(f: EpisodeFacts, d: Draw):
    if f.family == "weather":
        return INFO_PARAPHRASE["weather"](f, d, "zh", "cn")
    return route_answer(f, d, "zh", style="cn")


@mutation("english", correct=True)
def _english(f: EpisodeFacts, d: Draw):
    if f.family == "route":
        return route_answer(f, d, "en", style=d.choice(("standard", "any")))
    return INFO_PARAPHRASE[f.family](f, d, "en", "plain")


# -- non-answers -------------------------------------------------------------------------------------------------------


GENERIC_ANSWERS = ("好的", "嗯嗯", "I have planned the route for you.", "已为您规划路线", "已为您查询到结果，请查看。",
                   "Here is the information you asked for.", "好的，马上为您处理。", "收到")
NO_RESULT_ZH = ("没有找到相关结果。", "暂无数据。", "抱歉，未找到。")
NO_RESULT_EN = ("Sorry, nothing was found.", "No results.")


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


# -- invisible characters and look-alike letters -----------------------------------------------------------------------


#: Characters a reader does not see (zero-width spaces and joiners, the soft hyphen, word joiners, bidi controls, the
#: BOM, variation selectors, tag characters), and fillers that show as a blank (Hangul fillers, the braille blank).
ZERO_WIDTH = ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u180e", "\u202a", "\u202c", "\u2062",
              "\u2066", "\u2069", "\u034f", "\ufe0f", "\ufe00", "\U000e0020", "\U000e0041", "\U000e007f")
BLANK_FILLERS = ("\u3164", "\u115f", "\u1160", "\uffa0", "\u2800")
_DIGIT_END = re.compile(r"\d(?!\d)")


def sprinkled(d: Draw, text: str, chars: Sequence[str], times: int, after_numbers: bool) -> str:
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
    text = sprinkled(d, made.text, ZERO_WIDTH, d.integer(1, 4), after_numbers=True)
    return Answer("invisible_chars", True, text, made.route_index, made.calls)


@mutation("invisible_hedge", correct=False)
def _invisible_hedge(f: EpisodeFacts, d: Draw):
    """A wrong answer of another kind (a hedge, stuffing, a wrong value) with invisible characters where they would
    hide its wrong part from a parser but not from the user (``25分钟或35\u200b分钟``)."""
    made = _other_kind(f, d, False)
    text = sprinkled(d, made.text, ZERO_WIDTH + BLANK_FILLERS, d.integer(1, 3), after_numbers=True)
    return Answer("invisible_hedge", False, text, made.route_index, made.calls)


#: Letters of other scripts a reader takes for Latin ones (Cyrillic а, е, о, р, с, у, х, і; Greek ο, ν, ι), and
#: digits of other scripts (Arabic-Indic, Devanagari, mathematical bold).
HOMOGLYPHS = {"a": "аɑ", "e": "е", "o": "оο", "p": "р", "c": "с", "y": "у", "x": "х", "i": "іι", "v": "ν", "s": "ѕ",
              "k": "κ", "r": "г", "h": "һ", "l": "ӏ", "A": "АΑ", "C": "С", "T": "ТΤ", "H": "Н", "M": "М", "K": "К",
              "0": "٠०𝟎", "1": "١१𝟏", "2": "٢२𝟐", "3": "٣३𝟑", "5": "٥५𝟓", "7": "٧७𝟕", "9": "٩९𝟗"}


def lookalike(d: Draw, text: str, times: int) -> str:
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
    return Answer("invisible_lookalike_letters", True, lookalike(d, made.text, d.integer(1, 6)), made.route_index,
                  made.calls)


@mutation("invisible_lookalikes", correct=False)
def _invisible_lookalikes(f: EpisodeFacts, d: Draw):
    """A wrong answer of another kind with some Latin letters or digits written in look-alikes of another script
    (``drive or wаlk`` with a Cyrillic а): the user reads the wrong part, a parser of Latin words may not."""
    made = _other_kind(f, d, False)
    return Answer("invisible_lookalikes", False, lookalike(d, made.text, d.integer(1, 6)), made.route_index,
                  made.calls)


# -- Traditional script ------------------------------------------------------------------------------------------------


# character renderings: mainland, Taiwan and Hong Kong forms (s2twp's phrases are a translation into Taiwan's words:
# 软件园 becomes 軟體園, another name, so an honest answer is not rendered with it)
_OPENCC_RENDERINGS = ("s2t", "s2tw", "s2hk")


@lru_cache(maxsize=None)
def opencc_converter(config: str) -> Callable[[str], str]:
    """OpenCC's converter of one configuration (``s2t``, ``s2tw``, ``s2hk``, ``s2twp``), built once."""
    import opencc
    return opencc.OpenCC(config).convert


def traditional(d: Draw, text: str, phrases: bool = False) -> str:
    """``text`` as a Traditional-script writer renders it (mainland, Taiwan or Hong Kong forms; with ``phrases``, also
    in Taiwan's words: a wrong answer so rendered must still fail)."""
    return opencc_converter(d.choice(_OPENCC_RENDERINGS + (("s2twp",) if phrases else ())))(text)


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
