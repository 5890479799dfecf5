"""Stability over repeated evaluations: ``mobility-env run --repeats K``.

A run with ``K`` repeats plays every episode (task) ``K`` times, repeat ``k`` being sample index ``k``
(``--repeats K`` is ``--samples-per-episode K`` read this way). :func:`repeat_spread` scores each
repeat on its own (the MobilityBench scorecard or the MobilePA one, with the same rows) and gives,
per row and score, the ``K`` values, their mean and their standard deviation (population: the
spread of these ``K`` evaluations, not an estimate for others) — the paper's "three repeated
evaluations stay within one point" figure. A deterministic agent has a spread of zero; a sampling
one shows its own.

Scores are fractions (``0.6909`` is 69.09 %); ``return`` (MobilePA) is the mean episode return.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from typing import Any, Callable, Iterable, Mapping

from .mobilepa.scorecard import COLUMNS as PHONE_COLUMNS
from .mobilepa.scorecard import GROUPS as PHONE_GROUPS
from .mobilepa.scorecard import phone_scorecard
from .mobilitybench.scorecard import COLUMNS, TOKEN_COLUMNS, build_scorecard

#: The scores whose spread is reported, per env.
MOBILITY_SCORES = tuple(c for c in COLUMNS if c not in TOKEN_COLUMNS)
PHONE_SCORES = tuple(c for c in PHONE_COLUMNS if c not in ("IT", "OT", "failures"))


def mobility_rows(records: list[Mapping[str, Any]]) -> dict[str, dict[str, float]]:
    card = build_scorecard(records)
    return {f"{row['group']}: {row['name']}" if row["group"] != "overall" else "overall":
            {column: float(row[column]) for column in MOBILITY_SCORES if row.get(column) is not None}
            for row in card["rows"]}


def phone_rows(records: list[Mapping[str, Any]]) -> dict[str, dict[str, float]]:
    card = phone_scorecard(records)
    rows = {"overall": card["overall"]}
    rows.update({f"{group}: {name}": values for group in PHONE_GROUPS for name, values in card.get(group, {}).items()})
    out = {name: {column: float(values[column]) for column in PHONE_SCORES} for name, values in rows.items()}
    out["overall score (weighted)"] = {"success": float(card["overall"]["weighted"]["score"])}
    return out


def repeat_spread(records: Iterable[Mapping[str, Any]],
                  score: Callable[[list[Mapping[str, Any]]], dict[str, dict[str, float]]] = mobility_rows
                  ) -> dict[str, Any]:
    """``{"repeats": K, "rows": {row: {score: {"values", "mean", "std"}}}}`` over the repeats (sample
    indices) of ``records``, each repeat scored by ``score`` (the suite's rows: :func:`mobility_rows`,
    :func:`phone_rows`); a row missing from a repeat (its episodes all failed to write) counts
    only the repeats that have it."""
    by_repeat: dict[int, list[Mapping[str, Any]]] = defaultdict(list)
    for record in records:
        by_repeat[int(record.get("sample_index") or 0)].append(record)
    values: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for repeat in sorted(by_repeat):
        for row, scores in score(by_repeat[repeat]).items():
            for column, value in scores.items():
                values[row][column].append(value)
    rows = {row: {column: {"values": [round(v, 4) for v in vs], "mean": round(statistics.fmean(vs), 4),
                           "std": round(statistics.pstdev(vs), 4) if len(vs) > 1 else 0.0}
                  for column, vs in columns.items()} for row, columns in values.items()}
    return {"repeats": len(by_repeat), "rows": rows}


def format_repeat_spread(spread: Mapping[str, Any], scores: Iterable[str] | None = None) -> str:
    """One line per row: ``mean ± std`` (in %, return as is) of each score over the repeats."""
    rows = spread.get("rows") or {}
    if not rows:
        return "(no repeats)"
    shown = list(scores) if scores is not None else list(next(iter(rows.values())))
    width = max(len("row"), *(len(name) for name in rows)) + 2
    header = "row".ljust(width) + "".join(s.rjust(16) for s in shown)
    lines = [f"{spread.get('repeats')} repeat(s): mean ± std over the repeats", header, "-" * len(header)]
    for name, columns in rows.items():
        cells = []
        for column in shown:
            entry = columns.get(column)
            if entry is None:
                cells.append("-")
            elif column == "return":
                cells.append(f"{entry['mean']:.3f} ± {entry['std']:.3f}")
            else:
                cells.append(f"{100 * entry['mean']:.1f} ± {100 * entry['std']:.1f}")
        lines.append(name.ljust(width) + "".join(c.rjust(16) for c in cells))
    return "\n".join(lines)
