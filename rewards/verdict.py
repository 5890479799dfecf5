"""The verdict of one episode: DR, FPR and every named check behind them.

One type for every scenario (route and information tasks alike). Each :class:`Check` says
what was expected, what the answer (or the trajectory) stated, whether it passed and why,
so nobody has to re-run the scorer to learn why an answer failed::

    >>> v = Verdict(delivered=True, checks=[Check("distance", "12.3 km", "20 km", False, "off by 63%")])
    >>> v.passed, v.failed_checks
    (False, ['distance'])
    >>> Verdict.from_dict(v.to_dict()) == v
    True

``passed`` is FPR before the DR gate: :func:`mobility_rewards.mobilitybench.metrics.compute_metrics` scores
``FPR = delivered and passed``. A verdict with no checks never passes (nothing verified).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, NamedTuple

#: The version of the verdict: the format of ``Verdict.to_dict()`` and what its checks verify.
#: Bump it BY HAND on any change of its keys, of a check's name or meaning, or of which checks a
#: scenario runs (an answer that passed may now fail, or the reverse), and add a line here and an
#: entry in CHANGELOG.md (which keeps the cases behind each version). Runs record it in
#: ``run.json`` (see :func:`mobility_rewards.mobilitybench.shaping.format_versions`); every stored verdict
#: carries it as ``"version"``. History, one line per version:
#: 1 — the verdict of MobilityBench-v0: DR, FPR and the named checks behind them.
#: 2 — place names joined by dots or with remarks, Chinese numerals, admin words, far denials, turned-down modes.
#: 3 — far denials read with MobilePA's patterns; invisible characters, look-alikes, English number words read.
#: 4 — answers read by the kernel's one reader (scripts, vocabularies, unitless hedges, route steps, forecast days).
#: 5 — one quantity scanner (spoken approximations as spans); ``amounts_read``: an unreadable amount fails.
#: 6 — a slow comparative contradicts a fastest route only when its subject is the route or the route's own mode.
VERDICT_VERSION = 6
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
