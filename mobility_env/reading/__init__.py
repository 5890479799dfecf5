"""The one answer reader of both suites (MobilityBench-v0 and MobilePA-v0): what an answer says, read once.

* :mod:`.text` — the answer as read: invisible characters, look-alikes and markdown removed
  (:func:`plain_answer`), Traditional characters as Simplified (:func:`read_answer`, :mod:`.script`), and the
  far-denial patterns both verifiers share;
* :mod:`.numerals` — Chinese numerals and English number words as digits;
* :mod:`.vocabulary` — travel modes, weather phenomena, traffic states and units, kept as data with their sources.

The claim readers built on these live with each suite's scorer (:mod:`mobility_rewards.claims`,
:mod:`mobility_rewards.units`, :mod:`mobility_env.mobilepa.answers`); they share this normalisation, these
numerals and these vocabularies, and a test reads one corpus through both and requires the same quantities.
"""

from .numerals import arabize, chinese_numeral_value, spelled_numbers
from .script import simplified
from .text import plain_answer, read_answer

__all__ = ["arabize", "chinese_numeral_value", "plain_answer", "read_answer", "simplified", "spelled_numbers"]
