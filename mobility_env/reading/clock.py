"""Clock times an answer states, with their period and their role (departure or arrival), in Chinese and English.

``凌晨5点30分`` (05:30, definite), ``下午3点`` (15:00), ``17:30`` / ``05:30`` (24-hour, definite), ``3pm``; ``5点30分``
or ``5:30`` without a period is *ambiguous* (compared on a 12-hour dial, :func:`clock_matches`). Each carries its
role from the words around it: ``departure`` (出发/动身/leave/depart) or ``arrival`` (到达/抵达/arrive/前). One
reader for both suites: MobilityBench's arrival/departure checks and MobilePA's times of day.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from .normalized import normalize_answer


@dataclass(frozen=True)
class ClockClaim:
    """A stated clock time: minutes after midnight, whether its period is known, its role."""

    minutes: int
    definite: bool  # a period word, am/pm, or an unambiguous 24-hour time
    role: str  # "departure", "arrival" or ""
    start: int
    end: int


_PERIODS = {"凌晨": 0, "早上": 0, "早晨": 0, "清晨": 0, "上午": 0, "中午": 12, "下午": 12, "傍晚": 12,
            "晚上": 12, "夜里": 12, "夜间": 12, "今晚": 12, "明早": 0, "明晚": 12, "半夜": 0, "午夜": 0}
_PERIOD = "|".join(sorted(_PERIODS, key=len, reverse=True))
# no space after the colon: "March 10: 10:30" holds one time, 10:30 (a label's colon then a space is no clock)
_CLOCK_COLON = re.compile(rf"({_PERIOD})?\s*(\d{{1,2}})\s*[:：](\d{{2}})(?!\d)(?:\s*([ap])\.?\s?m(?![a-z])\.?)?",
                          re.IGNORECASE)
_CLOCK_DIAN = re.compile(rf"({_PERIOD})?\s*(\d{{1,2}})\s*点(?![都也儿])(?!\d+\s*(?:公里|千米|米|km|度|元))"
                         rf"\s*(整|半|一刻|三刻|(\d{{1,2}})\s*分?)?")
_CLOCK_AMPM = re.compile(r"(?<![\d.])(\d{1,2})(?:\s*[:.]?\s*(\d{2}))?\s*([ap])\.?\s?m(?![a-z])\.?", re.IGNORECASE)
_DEPARTURE_WORDS = re.compile(r"出发|动身|出门|启程|离开|走|开车|leave|leaving|depart|set off|head out|start", re.I)
_ARRIVAL_WORDS = re.compile(r"到达|抵达|到|前|赶到|arriv|reach|get there|be there", re.I)


def _hour24(period: str | None, hour: int) -> int:
    if period in ("中午",):
        return hour + 12 if hour < 6 else hour
    if period in ("凌晨", "半夜", "午夜"):
        return 0 if hour == 12 else hour
    if period and _PERIODS[period] == 12 and hour < 12:
        return hour + 12
    if period and _PERIODS[period] == 0 and hour == 12:
        return 0 if period != "上午" else 12
    return hour


def _role(text: str, start: int, end: int) -> str:
    """``departure``/``arrival`` from the nearest cue word in the same clause (after the time first)."""
    after = re.split(r"[，,。;；!！?？\n]", text[end:end + 10])[0]
    before = re.split(r"[，,。;；!！?？\n]", text[max(0, start - 10):start])[-1]
    dep, arr = _DEPARTURE_WORDS.search(after), _ARRIVAL_WORDS.search(after)
    if dep or arr:
        return "departure" if dep and (not arr or dep.start() <= arr.start()) else "arrival"
    dep_ends = [m.end() for m in _DEPARTURE_WORDS.finditer(before)]
    arr_ends = [m.end() for m in _ARRIVAL_WORDS.finditer(before)]
    if dep_ends or arr_ends:
        return "departure" if dep_ends and (not arr_ends or max(dep_ends) >= max(arr_ends)) else "arrival"
    return ""


@lru_cache(maxsize=512)
def clock_claims(text: str) -> tuple[ClockClaim, ...]:
    """Clock times in ``text`` (already :func:`normalize_answer`-ed or raw), in order."""
    text = normalize_answer(text)
    found: list[ClockClaim] = []
    taken = bytearray(len(text))  # 1 where a time already read stands (linear in the text, however many times)

    def free(start: int, end: int) -> bool:
        return taken.find(1, start, end) == -1

    def take(start: int, end: int) -> None:
        taken[start:end] = b"\x01" * (end - start)

    for match in _CLOCK_COLON.finditer(text):
        period, hour, minute, ampm = match.group(1), int(match.group(2)), int(match.group(3)), match.group(4)
        if hour > 24 or minute > 59:
            continue
        if ampm:
            hour = (hour % 12) + (12 if ampm.lower() == "p" else 0)
            definite = True
        elif period:
            hour, definite = _hour24(period, hour), True
        else:
            definite = hour >= 13 or hour == 0 or match.group(2).startswith("0")
        take(*match.span())
        found.append(ClockClaim((hour % 24) * 60 + minute, definite, "", *match.span()))
    for match in _CLOCK_AMPM.finditer(text):
        if not free(*match.span()):
            continue
        hour, minute = int(match.group(1)), int(match.group(2) or 0)
        if hour > 12 or minute > 59:
            continue
        hour = (hour % 12) + (12 if match.group(3).lower() == "p" else 0)
        take(*match.span())
        found.append(ClockClaim(hour * 60 + minute, True, "", *match.span()))
    for match in _CLOCK_DIAN.finditer(text):
        if not free(*match.span()):
            continue
        period, hour, extra = match.group(1), int(match.group(2)), match.group(3) or ""
        minute = {"半": 30, "一刻": 15, "三刻": 45, "整": 0}.get(extra, int(match.group(4)) if match.group(4) else 0)
        if hour > 24 or minute > 59:
            continue
        definite = bool(period) or hour >= 13 or hour == 0
        hour = _hour24(period, hour) if period else hour
        take(*match.span())
        found.append(ClockClaim((hour % 24) * 60 + minute, definite, "", *match.span()))
    found.sort(key=lambda c: c.start)
    return tuple(ClockClaim(c.minutes, c.definite, _role(text, c.start, c.end), c.start, c.end) for c in found)


def clock_matches(claim: ClockClaim, expected: float, expected_definite: bool, slack: float) -> bool:
    """Does ``claim`` state ``expected`` (minutes)? On a 24-hour dial when both are definite."""
    period = 1440 if claim.definite and expected_definite else 720
    diff = abs(claim.minutes - expected) % period
    return min(diff, period - diff) <= slack
