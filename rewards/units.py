"""Quantities stated in MobilityBench answers, compared with the evidence by the paper's rule.

Reading is the kernel's (:mod:`mobility_env.reading.quantities`, the one quantity reader MobilePA uses too); this
module gives MobilityBench's views of it and its comparison:

* :func:`parse_distances` -> metres, :func:`parse_durations` -> seconds, :func:`parse_temperatures` /
  :func:`temperature_spans` -> degrees Celsius: every stated value of the kind in the order it appears (a bare
  number joined to a quantity by range or list words is read in its unit: ``25或30分钟`` states 25 and 30 minutes;
  ``30多分钟`` states 30 to 40); clock times and dates are no quantities (``11点23分`` is no 23-minute duration);
* :func:`within_tolerance` is the paper's 5 % rule, with one documented leniency: a value stated at a coarser
  precision ("2公里" for 2,289 m) also passes when it equals the evidence rounded to that precision and is within
  :data:`ROUNDING_CAP` of it; a value stated as a range up from a round number (``30多分钟``) passes when the
  evidence lies in that range.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

# the numeral readers live in the kernel, one copy for both suites; imported here under their old names too
from mobility_env.reading import quantities as kernel
from mobility_env.reading import vocabulary
from mobility_env.reading.lexicon import trie_pattern
from mobility_env.reading.numerals import arabize, chinese_numeral_value, spelled_numbers  # noqa: F401

RELATIVE_TOLERANCE = 0.05
ROUNDING_CAP = 0.15


@dataclass(frozen=True)
class Quantity:
    """One stated value in base units (metres, seconds), with the unit size and decimals it was stated in, where it
    starts in the text read, and the half-width of a range it was stated as (``30多分钟``: 300 s around 35 min)."""

    value: float
    unit: float  # base units per stated unit (1000 for km, 60 for minutes, ...)
    decimals: int
    start: int
    spread: float = 0.0


def unit_alternation(kind: str) -> str:
    """The spellings of ``kind``'s units (:func:`mobility_env.reading.vocabulary.units`), longest first, each with its
    guard (an ASCII word ends at a letter boundary: ``m`` is not the ``m`` of ``min``)."""
    tails = {unit.spelling: ("(?![a-zA-Z])" if unit.spelling[-1].isascii() and unit.spelling[-1].isalpha() else "")
             + unit.guard for unit in vocabulary.units_of(kind)}
    return trie_pattern(tails, tails)  # factored by prefixes: one branch per character, not every unit tried


_DISTANCE_FACTOR = {u.spelling: u.factor for u in vocabulary.units_of("distance")}


def distance_factor(word: str) -> float:
    word = re.sub(r"\s+", " ", word.lower())
    return _DISTANCE_FACTOR.get(word) or _DISTANCE_FACTOR[word.replace(" ", "")]


def _view(q: kernel.Quantity, scale: float) -> Quantity:
    """The kernel's reading in this module's base unit (``scale`` of them per kernel base unit: 60 s a minute)."""
    return Quantity(float(q.value) * scale, float(q.factor) * scale, q.decimals, q.start,
                    float(q.tolerance) * scale if q.more else 0.0)


@lru_cache(maxsize=512)
def parse_distances(text: str) -> tuple[Quantity, ...]:
    """Distances stated in ``text``, in metres, in order of appearance; whole kilometres and metres run together are
    one distance (``2公里400米``, ``2 km 400 m``: 2,400 m)."""
    return tuple(_view(q, 1.0) for q in kernel.of_kind(arabize(text), "distance"))


@lru_cache(maxsize=512)
def parse_durations(text: str) -> tuple[Quantity, ...]:
    """Durations stated in ``text``, in seconds, in order: ``1小时49分钟`` (and ``2 hours and 41 minutes``) is one
    duration (6,540 s); ``约37分钟，另一条42分钟`` is two; ``11点23分`` is a time of day, no duration."""
    return tuple(_view(q, 60.0) for q in kernel.of_kind(arabize(text), "duration"))


def parse_temperatures(text: str) -> tuple[float, ...]:
    """Temperatures in ``text`` in °C, in order (both ends of a range are listed; Fahrenheit converted)."""
    return tuple(value for _, value in temperature_spans(text))


@lru_cache(maxsize=512)
def temperature_spans(text: str) -> tuple[tuple[int, float], ...]:
    """``(position, °C)`` of each temperature in ``text`` (arabized first: positions are those of an
    :func:`arabize`-d text, such as a normalized answer), in order; Fahrenheit to a tenth of a degree."""
    return tuple((q.start, round(float(q.value), 1)) for q in kernel.of_kind(arabize(text), "temperature"))


def within_tolerance(reported: Quantity, actual: float, tolerance: float = RELATIVE_TOLERANCE, *,
                     rounding: bool = True) -> bool:
    """``|reported - actual| <= tolerance * actual``, or a coarser rounding of ``actual``.

    The rounding leniency: when ``reported`` equals ``actual`` rounded to the precision it
    was stated in (``2公里`` for 2,289 m) and is within :data:`ROUNDING_CAP`, it passes (whole
minutes, metres and seconds are the finest units people state, so they are not capped:
``1分钟`` for 71 s passes).
    ``actual <= 0`` passes only for an exact zero. ``rounding=False`` turns the leniency off. A value stated as a
    range (``30多分钟``) passes when ``actual`` lies in it.
    """
    if actual <= 0:
        return reported.value == actual
    error = abs(reported.value - actual) / actual
    if error <= tolerance or reported.spread and abs(reported.value - actual) <= reported.spread:
        return True
    if not rounding:
        return False
    stated = reported.value / reported.unit
    rounded = round(actual / reported.unit, reported.decimals)
    # Whole minutes (or metres, seconds) are the finest unit anyone states: no cap there.
    cap = 1.0 if reported.unit <= 60 and reported.decimals == 0 else ROUNDING_CAP
    return error <= cap and abs(stated - rounded) < 1e-9
