"""Numbers written in words, read as digits: Chinese numerals (``三十七`` -> 37, ``一万五千米`` -> 15000米,
``俩小时`` -> 2小时) and English number words before a unit (``thirty-five minutes`` -> 35 minutes).

One copy for both suites: MobilityBench's claims (:mod:`mobility_rewards.mobilitybench.claims`) and MobilePA's answer
checks
(:mod:`mobility_env.mobilepa.answers`) read amounts after :func:`arabize` and :func:`spelled_numbers`.

Chosen after measuring (2026-12-05, this machine, one 17-character answer ``全程一万五千米，大约需要两个半小时``):
``cn2an.transform(…, "cn2an")`` took 175 us and read ``两个半小时`` as ``2个0.5小时`` and left ``俩`` unread;
:func:`arabize` takes 12 us and reads both (the spoken ``一万五`` = 15,000 and ``千米``, the kilometre, kept too).
"""

from __future__ import annotations

import re

_CN_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "俩": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7,
              "八": 8, "九": 9}
_CN_UNITS = {"十": 10, "百": 100, "千": 1000, "万": 10000}
_CN_NUMBER = re.compile(r"[零〇一二两俩三四五六七八九十百千万]+")


def chinese_numeral_value(text: str) -> int | None:
    """``"三十七"`` -> 37, ``"一百零五"`` -> 105, ``"两"`` -> 2, and the spoken shortening of a last digit
    right after a unit: ``"一万五"`` -> 15000, ``"三千五"`` -> 3500 (``"一万零五"`` is 10005); None when
    ``text`` is not a numeral."""
    if not text or any(ch not in _CN_DIGITS and ch not in _CN_UNITS for ch in text):
        return None
    total, section, digit = 0, 0, None
    last_unit, zero = 1, False  # the unit just before a trailing digit, and whether 零 came between
    for ch in text:
        if ch in _CN_DIGITS:
            digit = _CN_DIGITS[ch]
            zero = zero or digit == 0
            continue
        unit = _CN_UNITS[ch]
        if unit == 10000:
            section = (section + (digit or 0)) * unit
            total, section = total + section, 0
        else:
            section += (1 if digit is None else digit) * unit
        digit, last_unit, zero = None, unit, False
    if digit and last_unit >= 100 and not zero:  # 一万五: the digit counts in the unit below (1.5万)
        digit *= last_unit // 10
    return total + section + (digit or 0)


def arabize(text: str, min_run: int = 1) -> str:
    """Replace runs of Chinese numerals with Arabic digits (``三十七分钟`` -> ``37分钟``).

    Runs that are not numbers on their own (a lone ``千`` as in ``千米``) are kept, and so are runs shorter than
    ``min_run`` (MobilePA's reader reads a lone ``一`` itself: the ``一`` of ``之一`` is no amount).
    """
    def replace(match: re.Match[str]) -> str:
        run = match.group(0)
        if len(run) < min_run:
            return run
        following = text[match.end():match.end() + 1]
        if run.endswith("零") and following == "下":  # 零下 = below zero, not a numeral
            return run if len(run) == 1 else arabize(run[:-1]) + "零"
        if run == "千" and match.end() < len(text) and text[match.end()] == "米":
            return run  # 千米 is the kilometre (十米, 百米, 万米 are 10, 100, 10,000 metres)
        if run in ("千", "万", "百"):  # a lone 万/百/千 is a word (万达, 老百姓), not a number
            return run
        if run.endswith("千") and "万" not in run and match.end() < len(text) and text[match.end()] == "米":
            value = chinese_numeral_value(run[:-1])  # 三千米: 3 千米 (一万五千米 is 15000 米: 万 binds the 千)
            return run if value is None else f"{value}千"
        value = chinese_numeral_value(run)
        return run if value is None else str(value)
    return _CN_NUMBER.sub(replace, text)


_EN_ONES = {"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
            "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
            "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40,
            "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
_EN_WORD = "|".join(sorted(_EN_ONES, key=len, reverse=True))
# a maximal run of number words (possessive: a run that is no amount is given up at once, never re-read from inside)
_EN_RUN = re.compile(rf"\b(?:an?|{_EN_WORD})\b(?:[\s-]+(?:{_EN_WORD}|hundred|thousand|and)\b)*+", re.IGNORECASE)
_EN_UNIT_AFTER = re.compile(r"[\s-]+(?:minutes?|mins?|hours?|hrs?|seconds?|secs?|kilomet(?:er|re)s?|km|met(?:er|re)s?|"
                            r"degrees?|yuan)\b", re.IGNORECASE)
_EN_HALF_HOURS_AFTER = re.compile(r"\s+a\s+half\s+hours?\b", re.IGNORECASE)
_EN_FRACTIONS = ((re.compile(r"\ban?\s+hour\s+and\s+a\s+half\b", re.IGNORECASE), "90 minutes"),
                 (re.compile(r"\bhalf\s+an\s+hour\b", re.IGNORECASE), "30 minutes"),
                 (re.compile(r"\bthree\s+quarters\s+of\s+an\s+hour\b", re.IGNORECASE), "45 minutes"),
                 (re.compile(r"\b(?:a\s+)?quarter\s+of\s+an\s+hour\b", re.IGNORECASE), "15 minutes"))


def _english_value(words: str) -> int:
    total, current = 0, 0
    for word in re.split(r"[\s-]+", words.lower()):
        if word in ("a", "an"):
            current += 1
        elif word in _EN_ONES:
            current += _EN_ONES[word]
        elif word == "hundred":
            current = max(current, 1) * 100
        elif word == "thousand":
            total, current = (total + max(current, 1)) * 1000, 0
    return total + current


_LATIN_LETTER = re.compile("[A-Za-z]")


def spelled_numbers(text: str) -> str:
    """English amounts spelled in words, in digits (``thirty-five minutes`` -> ``35 minutes``, ``an hour and a half``
    -> ``90 minutes``, ``two hundred metres`` -> ``200 metres``): a number word counts only before a unit. Left
    spelled, a wrong amount hid from the parser (``25 minutes or thirty-five minutes`` passed as 25 minutes)."""
    if not _LATIN_LETTER.search(text):  # one C-level scan, not a Python loop over the characters
        return text
    for pattern, value in _EN_FRACTIONS:
        text = pattern.sub(value, text)
    out, done = [], 0
    for run in _EN_RUN.finditer(text):  # linear: each run is read once
        words = run.group(0)
        if re.search(r"[\s-]and$", words, re.IGNORECASE):  # two and | a half hours
            half = _EN_HALF_HOURS_AFTER.match(text, run.end())
            if half is None:
                continue
            out += [text[done:run.start()], f"{_english_value(words)}.5 hours"]
            done = half.end()
        elif _EN_UNIT_AFTER.match(text, run.end()):
            out += [text[done:run.start()], str(_english_value(words))]
            done = run.end()
    return "".join(out) + text[done:] if out else text


_CN_DIGIT_CHARS = "零〇一二两三四五六七八九"
_CN_ANY = "零〇一二两三四五六七八九十百千万"
_CN_DECIMAL = re.compile(rf"([{_CN_ANY}]+)点([{_CN_DIGIT_CHARS}]+)(?=\s*(?:公里|千米|米|个?小时|钟头|km|度|℃|元|块|万))")
_DIGIT_OF = {c: str(i) for i, c in enumerate("零一二三四五六七八九")} | {"〇": "0", "两": "2"}


def _decimal(match: re.Match[str]) -> str:
    whole = arabize(match.group(1))
    return f"{whole}." + "".join(_DIGIT_OF.get(c, c) for c in match.group(2))


def written_in_digits(text: str, min_run: int = 1) -> str:
    """Every amount in digits, as both suites read it: English number words before a unit (:func:`spelled_numbers`),
    Chinese decimals (``十二点三公里`` -> ``12.3公里``, before the clock reading could take ``12点3``), then Chinese
    numerals (:func:`arabize`): ``一万五千米`` -> ``15000米``, ``俩小时`` -> ``2小时``, ``one hundred and twenty minutes``
    -> ``120 minutes``."""
    return arabize(_CN_DECIMAL.sub(_decimal, spelled_numbers(text)), min_run)
