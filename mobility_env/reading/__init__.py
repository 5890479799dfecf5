"""The one answer reader of both suites (MobilityBench-v0 and MobilePA-v0): what an answer says, read once.

* :mod:`.text` — the answer as read: invisible characters, look-alikes and markdown removed
  (:func:`plain_answer`), Traditional characters as Simplified (:func:`read_answer`, :mod:`.script`), and the
  far-denial patterns both verifiers share;
* :mod:`.numerals` — Chinese numerals and English number words as digits;
* :mod:`.vocabulary` — travel modes, weather phenomena, traffic states and units, kept as data with their sources;
* :mod:`.quantities` — every distance, duration, temperature, percentage and speed an answer states, typed, with its
  precision and span (the one scanner: MobilityBench's :mod:`mobility_rewards.units` and MobilePA's
  :func:`mobility_env.mobilepa.answers.stated_quantities` are views of it), and what looks like an amount but cannot
  be read (:func:`.quantities.unread_amounts`: both suites fail an answer with one);
* :mod:`.clock` — times of day with their period and role; :mod:`.normalized` — the answer in one spelling.

Each suite keeps its own *rules* (MobilityBench's 5 % with rounding, its claim checks in
:mod:`mobility_rewards.mobilitybench.claims`; MobilePA's precision-interval agreement); a test reads one corpus through
both and
requires the same quantities.
"""

from .numerals import arabize, chinese_numeral_value, spelled_numbers
from .script import simplified
from .text import plain_answer, read_answer

#: The reader's version: bump it when a reading changes (what a text states), one line per version. What is stored
#: from a reading (MobilityBench's evidence views of cycling route texts) records it.
#: 1: the one quantity scanner for both suites, spoken approximations, bounded numeral runs.
READER_VERSION = 1

__all__ = ["READER_VERSION", "arabize", "chinese_numeral_value", "plain_answer", "read_answer", "simplified",
           "spelled_numbers"]
