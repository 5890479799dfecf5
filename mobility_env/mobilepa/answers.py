"""Reading MobilePA answers: where a text mentions a spelling, and which quantities it states.

The verifier (``mobility_rewards.mobilepa.verify``) and the task generator read answers with the same rules:
:func:`mentions` / :func:`mention_spans` (where a text names a spelling: number and word boundaries, so
``25 min`` is not found in ``125 min``; denied or conditional mentions — "no rain", "if it rains" — left
out) and :func:`stated_quantities` (every number with a unit an answer states: durations, distances,
temperatures, percentages, in Chinese and English spellings, ranges and lists included: the kernel's one
quantity reader, :mod:`mobility_env.reading.quantities`, over this module's :func:`normalized` text), with
:func:`quantity_of` for a gold spelling and :meth:`Quantity.agrees` comparing them at the precision written.
"""

from __future__ import annotations

import re
import unicodedata

from ..reading.numerals import written_in_digits
from ..reading.quantities import QUANTITY_KINDS, Quantity, quantities, read_in, unread_amounts
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


__all__ = ["QUANTITY_KINDS", "Quantity", "mention_spans", "mentions", "normalized", "quantity_of", "read_in",
           "stated_quantities", "unasserted", "unread_in"]


def stated_quantities(text: str) -> list[Quantity]:
    """Every quantity ``text`` states, read by the kernel (:func:`mobility_env.reading.quantities.quantities`) over
    the :func:`normalized` text with numerals in digits (the kernel's one reading of 一万五千米 and 俩小时)."""
    return list(quantities(written_in_digits(normalized(text), min_run=2)))


def unread_in(text: str) -> tuple[str, ...]:
    """What looks like an amount in ``text`` but is read as none (:func:`mobility_env.reading.quantities.
    unread_amounts`, over the same text :func:`stated_quantities` reads)."""
    return unread_amounts(written_in_digits(normalized(text), min_run=2))


def quantity_of(spelling: str) -> Quantity | None:
    """The one quantity a spelling states (``25分钟``, ``1 h 5 min``, ``23.9 km``), or None (a clock time, a
    phone number, a word)."""
    found = stated_quantities(spelling)
    whole = len(found) == 1 and normalized(found[0].text).strip() == normalized(spelling).strip()
    return found[0] if whole and found[0].kind in QUANTITY_KINDS else None
