"""The answer in one spelling, as every claim reader reads it: Simplified characters, NFKC (full-width digits and
signs), numbers in digits (Chinese numerals, Chinese decimals, English number words before a unit:
:func:`mobility_env.reading.numerals.written_in_digits`), ``1h 44m`` -> ``1h44min``, ``Line 2`` -> ``2号线`` and
``Bus 206`` -> ``206路``. MobilityBench's claim readers (:mod:`mobility_rewards.mobilitybench.claims`) and the kernel's
clock reader
(:mod:`mobility_env.reading.clock`, which MobilePA's answer checks use too) read this text.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from .numerals import written_in_digits
from .script import simplified

_HM = re.compile(r"(?<!\d)(\d+(?:\.\d+)?)\s*h(?:ours?|rs?)?\s*(\d+)\s*m(?:in(?:ute)?s?)?(?![a-z])", re.IGNORECASE)
_LINE_EN = re.compile(r"\b(?:metro\s+|subway\s+)?line\s*(?:no\.?\s*)?(\d+)\b", re.IGNORECASE)
_BUS_EN = re.compile(r"\bbus\s*(?:no\.?\s*|route\s*)?(\d+)\b", re.IGNORECASE)


@lru_cache(maxsize=512)
def normalize_answer(text: str) -> str:
    """The answer with script, numerals, units and line names in one spelling (see the module docstring)."""
    text = written_in_digits(unicodedata.normalize("NFKC", simplified(text) if isinstance(text, str) else ""))
    text = _HM.sub(lambda m: f"{m.group(1)}h{m.group(2)}min", text)
    text = _LINE_EN.sub(lambda m: f"{m.group(1)}号线", text)
    return _BUS_EN.sub(lambda m: f"{m.group(1)}路", text)
