"""A final answer as it is read: the text a chat model wrote, without its markdown, in one script.

Both verifiers (``mobility_rewards.mobilitybench.verify`` for MobilityBench-v0, ``mobility_env.mobilepa.answers`` for
MobilePA-v0) read answers through :func:`read_answer` (:func:`plain_answer`, then Traditional characters as
Simplified: :mod:`mobility_env.reading.script`), and a word as denied from a distance with
:data:`ZH_FAR_DENIAL` and :data:`EN_FAR_DENIAL`. In :func:`plain_answer`, emphasis (``**…**``, ``__…__``,
``*…*``, ``~~…~~``), code marks, heading and quote marks at line starts, and link targets are no claims, and left
in they split amounts (``**3小时****12分钟**`` was read as 3 hours) or signs (``-**4℃**`` as 4℃). A bare ``*``
between digits (``5*3``) stays. Characters the reader does not see (zero-width spaces and joiners, bidi controls, tag
characters, …) are removed first, and look-alikes read as what they show: left in, they hid a wrong amount, line or
travel mode from the parser but not from the user.
"""

from __future__ import annotations

import re
import unicodedata

from .script import simplified

# a list bullet (- , * , + at a line start, then a space) is no minus sign: "- 20到27度" is 20 to 27 degrees
_MARKDOWN = re.compile(r"\*\*|__|~~|`|^\s{0,3}#{1,6}\s+|^\s{0,3}>\s?|^\s{0,3}[-*+•]\s+", re.MULTILINE)
# a list's item number (1. , 2) , 3、 at a line start) is no amount: "2. 温度-4°C，\n3. 多云" states no 3℃
_LIST_NUMBER = re.compile(r"^\s{0,3}\d{1,3}(?:[.)]\s+|、(?![\d.]))", re.MULTILINE)
_MARKDOWN_EMPHASIS = re.compile(r"(?<![*A-Za-z0-9])\*(?=\S)([^*\n]{1,200}?)(?<=\S)\*(?![*A-Za-z0-9])")  # *斜体*; not 5*3
# link text holds no bracket: a run of "[" fails at once at each one (1 MB of "[" took 1.25 s when it could hold one)
_MARKDOWN_LINK = re.compile(r"\[([^\[\]\n]{1,200})\]\([^()\s]{0,500}\)")


# What a reader does not see is no part of the answer: format controls (zero-width spaces and joiners, the soft hyphen,
# word joiners, invisible operators, bidi controls, the BOM, interlinear annotation marks), the combining grapheme
# joiner, Mongolian selectors, variation selectors, tag characters, and the letters that show as a blank but are no
# space (Hangul fillers, the braille blank, Khmer inherent vowels) are removed. Left in, they cut an amount from its
# unit where the user sees none (25分钟或35\u200b分钟 was read as 25 minutes alone) or a word in two (wal\uffa0k).
_INVISIBLE = re.compile("[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
                        "\u2060-\u206f\u2800\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb\U000e0000-\U000e0fff]")


# Letters of other scripts that read as Latin ones, and the Latin letter they read as. A word made only of Latin
# letters and these is read as the Latin word it shows (avοιds with Greek ο and ι is "avoids", рubӏic is "public");
# a word with any other letter of those scripts (Москва) is left as written.
_LOOKALIKES = str.maketrans({
    "а": "a", "е": "e", "о": "o", "р": "p", "с": "c", "у": "y", "х": "x", "і": "i", "ј": "j", "ѕ": "s", "һ": "h",
    "ӏ": "l", "ԁ": "d", "ԛ": "q", "ԝ": "w", "г": "r", "п": "n", "ո": "n", "ս": "u", "ɑ": "a", "ɡ": "g", "ı": "i",
    "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P", "С": "C", "Т": "T", "Х": "X",
    "У": "Y", "І": "I", "Ј": "J", "Ѕ": "S", "ο": "o", "ι": "i", "ν": "v", "κ": "k", "α": "a", "ρ": "p", "τ": "t",
    "υ": "u", "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N", "Ο": "O",
    "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X"})
_LOOKALIKE_CHARS = frozenset(chr(c) for c in _LOOKALIKES)
_WORD = re.compile(r"[A-Za-z\u0250-\u02af\u0370-\u03ff\u0400-\u052f\u0530-\u058f]+")
_OTHER_DIGIT = re.compile(r"(?![0-9])\d")  # a decimal digit of another script (٣, ३, 𝟑, ３)


def _latin_word(match: re.Match[str]) -> str:
    word = match.group(0)
    if word.isascii() or not all(ch.isascii() or ch in _LOOKALIKE_CHARS for ch in word):
        return word
    return word.translate(_LOOKALIKES)


def _ascii_digit(match: re.Match[str]) -> str:
    return str(unicodedata.decimal(match.group(0)))


def plain_answer(answer: str) -> str:
    """The answer as read aloud: invisible characters removed, look-alike letters and other scripts' digits read as
    the Latin letters and digits they show (``wаlk`` -> ``walk``, ``2०6路`` -> ``206路``), then markdown emphasis,
    code marks, headings, quote marks, list bullets and item numbers and link targets removed
    (``全程**3小时12分钟**`` -> ``全程3小时12分钟``, ``-**4℃**`` -> ``-4℃``, ``1. 全程`` -> ``全程``,
    ``[天安门](https://…)`` -> ``天安门``, ``35\u200b分钟`` -> ``35分钟``)."""
    if not answer.isascii():  # what the user sees: no invisible characters, Latin words and digits as they show
        answer = _OTHER_DIGIT.sub(_ascii_digit, _WORD.sub(_latin_word, _INVISIBLE.sub("", answer)))
    if "\n" in answer or answer[:1].isdigit() or answer[:1].isspace():
        answer = _LIST_NUMBER.sub("", answer)
    if not any(ch in answer for ch in "*_~`#>[-+•"):
        return answer
    return _MARKDOWN.sub("", _MARKDOWN_EMPHASIS.sub(r"\1", _MARKDOWN_LINK.sub(r"\1", answer)))


def read_answer(answer: str) -> str:
    """The answer as every claim reader reads it: :func:`plain_answer`, in Simplified characters
    (``**預計2小時45分鐘**`` -> ``预计2小时45分钟``)."""
    return simplified(plain_answer(answer))


# Denials that stand further from the word they deny, matched against the text right before the word (each
# verifier chooses the window): 不太可能出现小雨, 完全没有出现拥堵, 不会有任何雾, 没怎么见到雨; no chance at all of
# rain, nothing like a storm, not a chance of fog, unlikely to see any snow.
#: A Chinese negator, bridged to the word by likelihood, degree and verbs of appearing (ends right before the word).
ZH_FAR_DENIAL = re.compile(r"(?:不是|不会|不太|不算|并非|并不|没有|[不没无未])(?:太|大|怎么|那么)?(?:可能)?(?:会)?"
                           r"(?:是|会|再|下|有|见到|遇到|见|出现|算|像|用|刮|起){0,2}(?:任何|什么|一点)?$")
#: The English ones (ends right before the word, after its article if any).
EN_FAR_DENIAL = re.compile(r"(?<![a-z])(?:(?:no|zero|little|not\s+a)\s+chance(?:\s+at\s+all)?\s+of|nothing\s+like|"
                           r"unlikely\s+to\s+(?:be|see|have|get)(?:\s+any)?)(?:\s+(?:a|an|the))?\s*$", re.IGNORECASE)
