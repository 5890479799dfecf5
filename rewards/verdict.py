"""The verdict of one episode: DR, FPR and every named check behind them.

One type for every scenario (route and information tasks alike). Each :class:`Check` says
what was expected, what the answer (or the trajectory) stated, whether it passed and why,
so nobody has to re-run the scorer to learn why an answer failed::

    >>> v = Verdict(delivered=True, checks=[Check("distance", "12.3 km", "20 km", False, "off by 63%")])
    >>> v.passed, v.failed_checks
    (False, ['distance'])
    >>> Verdict.from_dict(v.to_dict()) == v
    True

``passed`` is FPR before the DR gate: :func:`mobility_rewards.metrics.compute_metrics` scores
``FPR = delivered and passed``. A verdict with no checks never passes (nothing verified).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, NamedTuple

#: The version of the verdict: the format of ``Verdict.to_dict()`` and what its checks verify.
#: Bump it BY HAND on any change of its keys, of a check's name or meaning, or of which checks a
#: scenario runs (an answer that passed may now fail, or the reverse). Runs record it in
#: ``run.json`` (see :func:`mobility_rewards.shaping.format_versions`); every stored verdict
#: carries it as ``"version"``. History: 1 — the verdict of MobilityBench-v0; 2 — ``no_other_place`` reads
#: names joined by any dot (•, ・), remarks after a dash, remark words inside a name (建行营业部) and three
#: characters before a remark (江南区也可以) as names; Chinese numerals read 一万五千米 as 15,000 m, 十米 as 10 m
#: and the spoken 一万五 as 15,000;
#: ``address_consistent`` reads no admin word inside a returned POI's name (沙县小吃); ``address_components``
#: counts a district and township run together (科技区东门镇) as two;
#: ``mode_stated`` reads no mode inside the asked places' names (绿地铁塔家园); a weather condition or traffic
#: state denied from a distance (不太可能出现小雨, 堵车的可能性不大, congestion is unlikely) is denied, not claimed;
#: a travel mode named only to turn it down (比开车快, 不推荐坐公交地铁, driving is not recommended) or in a safety
#: wish (Please drive safely., 注意行车安全) is not stated;
#: 祝您一路顺风 is no road (every POI and nearby answer ending with it was denied); the answer is read without its
#: markdown (**3小时****12分钟** was read as 3 hours). 3 — a weather condition or traffic state denied from a distance is
#: read with the patterns MobilePA-v0 uses too (mobility_env.reading.text): 没怎么见到, 未见, 没见到, 不太可能遇到, 没怎么堵
#: deny their word (成都大道目前没怎么见到畅通 passed on a free-flowing road, 没怎么见到小雨 after the true weather was denied);
#: the answer is read as the user sees it (mobility_env.reading.text.plain_answer): invisible characters removed
#: (25分钟或35\u200b分钟 passed as 25 minutes alone) and look-alike letters and digits of other scripts read as the Latin
#: ones they show (drive or wаlk with a Cyrillic а, 2०6路); English amounts spelled in words are read
#: (25 minutes or thirty-five minutes passed as 25 minutes; two hours and forty-one minutes is one duration);
#: ``hedge`` reads English ranges and alternatives (between 25 and 35 minutes, 25 and/or 35 minutes passed).
#: 4 — answers are read by the kernel's one reader (mobility_env.reading): Traditional script as Simplified (OpenCC
#: tw2s + hk2s: 預計用時2小時45分鐘 was read as 45 minutes, 暢通/霧/陰 not at all), travel modes, weather phenomena, traffic
#: phrases and units from vocabularies kept as data (打车, 坐高铁, 坐飞机, 骑电动车, 捷运 recommended on another route's mode
#: passed; 冰雹, 龙卷风 and the whole Amap phenomenon table are conditions; 路上车不多，很顺 and traffic is light are states;
#: 里, 英里/miles, 公尺, 华氏/°F are converted); a second value without a unit (32分钟或48, 也可能48) or offered as a possibility
#: (30分钟，也可能是40分钟) is a hedge; a distance in a clause with a route step's action or heading (向东行驶3.9千米右转)
#: is one of the steps (of the road the clause names), never a competing total; 2公里400米 is one distance; a question
#: about several days (未来几天) is answered for every forecast day, each checked, and temperatures belong to the day
#: label before them (1月20日's digits were read as a temperature); a list bullet (- 20到27度) is no minus sign;
#: "no traffic lights" (沿途没有红绿灯) is a claim of 0 lights, checked like any count.
#: 5 — distances, durations and temperatures are read by the kernel's one quantity scanner
#: (mobility_env.reading.quantities, MobilePA-v0's too): a round number and more is the span it names (3个多小时, 十几分钟,
#: 1小时20多分钟 were unread, so a wrong one passed: 3个多小时 on an 80-minute route), a number joined to an amount by
#: range or list words is one of the stated values, a speed (57 km/h) is no distance, a list's item numbers (1. , 2、)
#: are no amounts; ``amounts_read``: anything shaped like an amount that the reader cannot read (a number, a few
#: unknown characters or words, a unit: 3 more minutes) fails — a claim that cannot be read cannot be verified;
#: ``roads`` reads a place of the trip itself (via 天津民主天街, a stop the user named) as no road.
VERDICT_VERSION = 5
_TEXT_LIMIT = 300


def _short(value: Any) -> str:
    if type(value) is str and len(value) <= _TEXT_LIMIT:
        return value
    text = "" if value is None else str(value)
    return text if len(text) <= _TEXT_LIMIT else text[:_TEXT_LIMIT - 1] + "…"


class Check(NamedTuple):
    """One named check: ``expected`` vs ``stated``, ``passed``, and a one-line ``reason``."""

    name: str
    expected: str = ""
    stated: str = ""
    passed: bool = False
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "expected": _short(self.expected), "stated": _short(self.stated),
                "passed": bool(self.passed), "reason": _short(self.reason)}


@dataclass
class Verdict:
    """DR (``delivered``) and FPR (``passed``: every check passed, at least one ran)."""

    delivered: bool
    checks: list[Check] = field(default_factory=list)
    reason: str = ""  # why nothing was delivered, or a summary of the failed checks

    def add(self, name: str, passed: bool, *, expected: Any = "", stated: Any = "", reason: str = "") -> bool:
        self.checks.append(Check(name, _short(expected), _short(stated), bool(passed), reason))
        return bool(passed)

    @property
    def passed(self) -> bool:
        return bool(self.checks) and all(c.passed for c in self.checks)

    @property
    def failed_checks(self) -> list[str]:
        return [c.name for c in self.checks if not c.passed]

    def summary(self) -> str:
        if self.reason:
            return self.reason
        failed = [c for c in self.checks if not c.passed]
        if not failed:
            return "all checks passed" if self.checks else "nothing was verified"
        return "; ".join(f"{c.name}: {c.reason or 'failed'}" for c in failed)

    def to_dict(self) -> dict[str, Any]:
        return {"version": VERDICT_VERSION, "delivered": self.delivered, "passed": self.passed,
                "reason": self.summary(), "checks": [c.to_dict() for c in self.checks]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Verdict:
        checks = [Check(str(c.get("name", "")), str(c.get("expected", "")), str(c.get("stated", "")),
                        bool(c.get("passed")), str(c.get("reason", ""))) for c in data.get("checks") or []]
        verdict = cls(bool(data.get("delivered")), checks)
        summary = str(data.get("reason", ""))
        if summary and summary != verdict.summary():
            verdict.reason = summary
        return verdict
