"""``report.html`` of a ``MobilePA-v0`` run: its results and verdicts as a
:class:`mobility_rewards.html_report.ReportPage`.

The page shows the run (``run.json``), the scorecard tables and charts of :mod:`.report` with the paper's weighted
score, the most frequent failing checks per bucket, and every task (failed ones first), filtered by behaviour
category, verification bucket, capability dimension and verdict: the query, each tool call with its arguments, its
status (``ok`` or the error type: a refused call, a runtime obstacle) and the observation the agent read, the
answer, the bucket's result (success, progress, and the capability gate where there is one), the state changes
the episode made (the recorded ``D_T − D_0``: each added, removed or changed row, a changed one as its fields
``before → after``), and every verdict check (expected, stated, passed, reason).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..html_report import (EpisodeView, ReportPage, Table, failures_first, metric_text, outcome_facts,
                           run_description, trajectory_views, verdict_passed, write_html)
from .report import WEIGHTED_SCORE, phone_charts, phone_scorecard_sections, weighted_parts

FILTERS = ["category", "bucket", "dimension"]


def _compact(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def state_changes(delta: Any) -> Table | None:
    """The recorded ``D_T − D_0`` as a table (table, change, row): None when nothing changed."""
    rows = []
    for table, kinds in (delta or {}).items() if isinstance(delta, Mapping) else ():
        for kind, items in (kinds or {}).items() if isinstance(kinds, Mapping) else ():
            for item in items if isinstance(items, list) else ():
                if kind == "changed" and isinstance(item, Mapping) and isinstance(item.get("before"), Mapping) \
                        and isinstance(item.get("after"), Mapping):
                    before, after = item["before"], item["after"]
                    fields = "; ".join(f"{name}: {_compact(before.get(name))} → {_compact(after.get(name))}"
                                       for name in after if before.get(name) != after.get(name))
                    rows.append((str(table), kind, f"{_compact(item.get('key'))}: {fields}"))
                else:
                    rows.append((str(table), str(kind), _compact(item)))
    return Table("State changes (D_T − D_0)", ("table", "change", "row"), tuple(rows)) if rows else None


def _bucket_result(record: Mapping[str, Any]) -> str:
    metrics: Mapping[str, Any] = record["metrics"] if isinstance(record.get("metrics"), Mapping) else {}
    success = metrics.get("success")
    outcome = "not scored" if success is None else "passed" if success >= 1.0 else "failed"
    text = f"{record.get('bucket')}: {outcome}"
    if isinstance(metrics.get("progress"), (int, float)):
        text += f", progress {100 * metrics['progress']:.0f}% of the gold"
    if isinstance(metrics.get("gate"), (int, float)):
        text += f"; {record.get('dimension')} gate " + ("passed" if metrics["gate"] >= 1.0 else "failed")
    return text


def _facts(record: Mapping[str, Any], excluded: bool) -> list[tuple[str, str]]:
    facts = [("bucket result", _bucket_result(record)),
             ("metrics", metric_text(record.get("metrics")) or "none recorded")]
    obstacles = [o.get("kind") if isinstance(o, Mapping) else o for o in record.get("obstacles") or []]
    facts += [(name, str(value)) for name, value in (
        ("language", record.get("language")), ("obstacles", ", ".join(map(str, obstacles)) or "none"),
        ("domain", record.get("domain")), ("memory reasoning", record.get("memory_reasoning")),
        ("memory operation", record.get("memory_operation"))) if value]
    return facts + outcome_facts(record, "--exclude-ids" if excluded else None)


def _delta(line: Mapping[str, Any]) -> Any:
    record = line.get("record")
    return record.get("delta") if isinstance(record, Mapping) else None


def phone_page(run_dir: Path, card: Mapping[str, Any], records: Sequence[Mapping[str, Any]],
               failing: Mapping[str, Mapping[str, int]], run: Mapping[str, Any] | None, *, excluded: set[str],
               rescored: bool) -> ReportPage:
    """The page of a run: ``records`` are the results the report reads (eval's when ``rescored``), ``card`` the
    scorecard of those not ``excluded``."""
    views = trajectory_views(run_dir, keep=_delta)
    episodes = []
    for record in failures_first(records):
        key = (str(record.get("episode_id")), int(record.get("sample_index") or 0))
        trajectory = views.get(key)
        changes = state_changes(trajectory.extra) if trajectory else None
        episodes.append(EpisodeView(
            key[0], key[1], {name: str(record.get(name) or "?") for name in FILTERS}, verdict_passed(record),
            query=trajectory.query if trajectory else "", facts=_facts(record, key[0] in excluded),
            calls=trajectory.calls if trajectory else [], answer=trajectory.answer if trajectory else None,
            verdict=record.get("verdict") if isinstance(record.get("verdict"), Mapping) else None,
            tables=[changes] if changes else []))
    notes = ["Metrics and verdicts recomputed by `mobility-env eval` (scorecard.json, eval_results.jsonl)." if rescored
             else "Metrics and verdicts as the run stored them (results.jsonl); `mobility-env eval` recomputes them."]
    weighted = weighted_parts(card)
    if weighted:
        notes.insert(0, f"Overall score ({WEIGHTED_SCORE}): {weighted[0]}{weighted[1]}")
    if excluded:
        notes.append(f"{len(excluded)} task(s) left out of the scorecard: {', '.join(sorted(excluded))}.")
    if not views:
        notes.append("No trajectories.jsonl: the tasks show their verdicts without the calls.")
    findings = [(bucket, name, str(count)) for bucket, checks in failing.items() for name, count in checks.items()]
    return ReportPage(
        title=f"MobilePA report: {(run or {}).get('agent') or 'run'} · {Path(run_dir).name}",
        run=run_description(run, len({e.episode_id for e in episodes}), len(episodes), "tasks"),
        scorecard=[Table(heading, tuple(columns), tuple(map(tuple, rows)),
                         "success, DR and progress in %; return is the mean episode return; IT/OT mean tokens per "
                         "sample; n = tasks." if heading == "Overall" else "")
                   for heading, columns, rows in phone_scorecard_sections(card)],
        charts=phone_charts(card, run), episodes=episodes, filters=FILTERS, notes=notes,
        findings=[Table("Per bucket", ("bucket", "check", "failed samples"), tuple(findings))] if findings else [])


def write_phone_html(run_dir: Path, card: Mapping[str, Any], records: Sequence[Mapping[str, Any]],
                     failing: Mapping[str, Mapping[str, int]], run: Mapping[str, Any] | None, *, excluded: set[str],
                     rescored: bool) -> Path:
    """Write ``run_dir/report.html`` (see the module docstring)."""
    return write_html(run_dir, phone_page(run_dir, card, records, failing, run, excluded=excluded,
                                          rescored=rescored))
