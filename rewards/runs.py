"""What both suites' scorecards and reports share, knowing neither suite: the unbiased ``pass@k``/``pass^k``
(:func:`pass_columns`), the error for a result record that cannot be aggregated (:class:`RecordError`), and a
report's files and its "Run" section (:class:`ReportFiles`, :func:`run_markdown`), and a scorecard as rows for
``mobility-env compare`` (:class:`ScoreRow`, :class:`ScoreTable`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import comb
from pathlib import Path
from typing import Any, Mapping, Sequence

from mobility_env.errors import MobilityEnvError


@dataclass(frozen=True)
class ScoreRow:
    """One row of a suite's scorecard: its group (``overall``, ``scenario``, ``bucket``...), name, size, values."""

    group: str
    name: str
    n: int
    values: Mapping[str, float | None]


@dataclass(frozen=True)
class ScoreTable:
    """A run's scorecard as rows (``overall`` first), its columns, the ones shown in %, and the headline column."""

    rows: Sequence[ScoreRow]
    columns: Sequence[str]
    headline: str
    shares: frozenset[str] = field(default_factory=frozenset)

    def cell(self, column: str, value: float | None) -> str:
        if value is None:
            return "-"
        return f"{100 * value:.1f}" if column in self.shares else f"{value:.3g}" if abs(value) < 100 else f"{value:.0f}"


class RecordError(MobilityEnvError, ValueError):
    """A result record whose metrics or token counts are not numbers."""


def pass_columns(counts: Sequence[tuple[int, int]]) -> dict[str, float]:
    """``pass@k`` and ``pass^k`` for k = 1 .. the fewest samples of any item, averaged over the items, from each
    item's ``(samples, passing samples)``; nothing when some item has fewer than 2 samples. Both suites' scorecards
    use it (MobilityBench: a sample passes with FPR 1; MobilePA: with success 1)."""
    smallest = min((n for n, _ in counts), default=0)
    out: dict[str, float] = {}
    for k in range(1, smallest + 1) if smallest >= 2 else ():
        out[f"pass@{k}"] = sum(pass_at_k(n, c, k) for n, c in counts) / len(counts)
        out[f"pass^{k}"] = sum(pass_hat_k(n, c, k) for n, c in counts) / len(counts)
    return out


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k for ``c`` passing samples out of ``n``."""
    if k > n:
        raise ValueError(f"k={k} exceeds the {n} samples")
    return 1.0 - comb(n - c, k) / comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Unbiased pass^k (all of k samples pass) for ``c`` passing samples out of ``n``."""
    if k > n:
        raise ValueError(f"k={k} exceeds the {n} samples")
    return comb(c, k) / comb(n, k)


@dataclass
class ReportFiles:
    markdown: Path
    json: Path
    charts: list[Path] = field(default_factory=list)
    chart_note: str = ""


def run_markdown(run: Mapping[str, Any]) -> str:
    """The "Run" section: what the run was, from its ``run.json``."""
    lines = ["## Run", ""]
    fields = (("agent", run.get("agent")), ("model", run.get("model")),
              ("data", run.get("data_path") or run.get("data") or "bundled set"),
              ("data fingerprint", run.get("data_fingerprint")), ("seed", run.get("seed")),
              ("samples per episode", run.get("samples_per_episode")), ("started", run.get("started")))
    lines += [f"* {name}: `{value}`" for name, value in fields if value is not None]
    report = run.get("load_report") if isinstance(run.get("load_report"), Mapping) else None
    if report and "loaded" in report:
        rejected = report.get("rejected_count", len(report.get("rejected") or []))
        notes = report.get("repairs_by_kind") or {}
        text = f"{report.get('loaded')} loaded ({report.get('repaired', 0)} repaired), {rejected} rejected"
        if notes:
            text += "; notes: " + ", ".join(f"{k}={v}" for k, v in sorted(notes.items()))
        lines.append(f"* load report: {text}")
    sessions = run.get("sessions") or []
    if sessions:
        forced = sum(1 for session in sessions if isinstance(session, Mapping) and session.get("forced"))
        lines.append(f"* sessions: {len(sessions)}"
                     + (f" ({forced} forced with other settings: see run.json)" if forced else ""))
    return "\n".join(lines) + "\n"
