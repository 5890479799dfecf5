"""Traditional Chinese read as Simplified: one script for every claim reader and every name comparison.

A large share of Chinese users, and several open models, write Traditional characters (``預計用時2小時45分鐘``,
``路況暢通``, ``搭捷運``). The readers' vocabularies are written once, in Simplified; instead of a second spelling of
every word, the answer is converted first, character by character, with OpenCC's tables (kept by the OpenCC
project, not by us): ``tw2s`` (Taiwan variants, then Traditional to Simplified: ``鐘`` is ``钟``, ``捷運`` ``捷运``,
``計程車`` ``计程车``, ``臺北`` ``台北``), then ``hk2s`` (Hong Kong variants: ``衞`` is ``卫``, ``綫`` ``线``).

Characters, not phrases: OpenCC's phrase configurations (``tw2sp``) also rewrite Taiwan's words into the mainland's
(``資料`` into ``数据``, ``軟體`` into ``软件``), which broke verbatim matches: a message quoted in Traditional
(``資料發你郵箱了``) no longer read as the message (``资料发你邮箱了``). Vocabulary differences (``計程車``, ``捷運``) are
the vocabularies' business: their data files spell both.

The conversion is applied to **both sides** of any comparison (the answer, and the evidence names and gold
spellings it is compared with): OpenCC maps a few characters that Simplified text also uses (``乾县``, a county of
Xianyang in the real sample, becomes ``干县``), so only a symmetric use is safe.

Measured before choosing (2026-12-05, this machine, a 40-character answer): the ``opencc`` wheel's ``t2s`` takes
~6 us, ``tw2s`` then ``hk2s`` ~15 us (once per answer; results are cached); the pure-Python
``opencc-python-reimplemented`` is two orders of magnitude slower.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Callable

_convert: Callable[[str], str] | None = None


def _converter() -> Callable[[str], str]:
    global _convert
    if _convert is None:  # built on first use, never at import (the tables are read from the wheel)
        import opencc
        taiwan, hong_kong = opencc.OpenCC("tw2s").convert, opencc.OpenCC("hk2s").convert

        def convert(text: str) -> str:
            return hong_kong(taiwan(text))
        _convert = convert
    return _convert


_SURROGATE = re.compile("[\ud800-\udfff]+")


@lru_cache(maxsize=16384)
def _simplified_name(text: str) -> str:
    """Short texts (names, the evidence's words), which recur: cached for good."""
    return _uncached(text)


@lru_cache(maxsize=512)
def _simplified_text(text: str) -> str:
    """Longer texts (an answer, a route's step instructions, a forecast): cached a while (each is read several times
    by the readers of one verdict)."""
    return _uncached(text)


def _uncached(text: str) -> str:
    convert = _converter()
    if not _SURROGATE.search(text):
        return convert(text)
    # a lone surrogate cannot be encoded for OpenCC: convert around it, keeping it (a hostile answer is still read)
    pieces = _SURROGATE.split(text)
    gaps = _SURROGATE.findall(text)
    return "".join(convert(piece) + (gaps[i] if i < len(gaps) else "") for i, piece in enumerate(pieces))


_in_mainland_words: Callable[[str], str] | None = None


def in_mainland_words(text: str) -> str:
    """``text`` with Taiwan's words as the mainland's (OpenCC ``tw2sp`` then ``hk2s``: ``專案評審`` is ``项目评审``,
    ``計程車`` ``出租车``): a second reading for checks that an answer must *not* state something (another record,
    another choice), so that a distractor translated into Taiwan's words is still seen; never for the claims an answer
    must make, which are read character by character (:func:`simplified`)."""
    global _in_mainland_words
    if text.isascii() or not _CJK.search(text):
        return text
    if _in_mainland_words is None:
        import opencc
        phrases, hong_kong = opencc.OpenCC("tw2sp").convert, opencc.OpenCC("hk2s").convert

        def convert(text: str) -> str:
            return hong_kong(phrases(text))
        _in_mainland_words = convert
    return "".join(_in_mainland_words(piece) if piece and not _SURROGATE.match(piece) else piece
                   for piece in re.split(f"({_SURROGATE.pattern})", text))


_CJK = re.compile("[\u3400-\u9fff\uf900-\ufaff]")
_ALREADY: set[str] = set()  # outputs of the conversion (converting them again changes nothing)


_KEYS: tuple[frozenset[str], Any] | None | bool = False  # not read yet


def _keys() -> tuple[frozenset[str], Any] | None:
    """The characters and phrases of every key of OpenCC's ``tw2s`` and ``hk2s`` dictionaries (the data file
    ``vocab/opencc_keys.json``, read from the OpenCC version it names), as a set and an Aho-Corasick automaton; None
    when the installed OpenCC is another version (then every text is converted)."""
    global _KEYS
    if _KEYS is False:
        import importlib.metadata
        import json
        from pathlib import Path

        import ahocorasick
        data = json.loads((Path(__file__).resolve().parent / "vocab" / "opencc_keys.json").read_text(encoding="utf-8"))
        try:
            installed = importlib.metadata.version("OpenCC")
        except importlib.metadata.PackageNotFoundError:
            installed = None
        if installed != data["opencc"]:
            _KEYS = None
        else:
            automaton = ahocorasick.Automaton()
            for phrase in data["phrases"]:
                automaton.add_word(phrase, phrase)
            automaton.make_automaton()
            _KEYS = (frozenset(data["characters"]), automaton)
    return _KEYS  # type: ignore[return-value]


def _unchanged(text: str) -> bool:
    """No key of the dictionaries can match ``text``: every conversion step leaves it as it is, so OpenCC need not
    be called (most names and answers in Simplified: no Traditional character, no phrase entry)."""
    keys = _keys()
    return keys is not None and keys[0].isdisjoint(text) and next(keys[1].iter(text), None) is None


def simplified(text: str) -> str:
    """``text`` in Simplified characters (``預計2小時45分鐘，路況暢通`` -> ``预计2小时45分钟，路况畅通``); text
    without CJK characters, or in which no key of OpenCC's dictionaries can match (:func:`_unchanged`), is returned as
    it is without calling OpenCC. Results are cached (short texts for good, longer ones a while)."""
    if text.isascii() or text in _ALREADY or not _CJK.search(text) or _unchanged(text):
        return text
    out = _simplified_name(text) if len(text) <= 64 else _simplified_text(text)
    if len(_ALREADY) > 4096:
        _ALREADY.clear()
    _ALREADY.add(out)  # a converted text is read again by the claim readers: no second conversion
    return out
