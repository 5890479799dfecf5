"""``report.html`` of a ``MobilityBench-v0`` run: its results and verdicts as a
:class:`mobility_rewards.html_report.ReportPage`.

The page shows the run (``run.json``), the scorecard tables and charts of :mod:`.report`, the most frequent failing
checks, and every result (failed ones first), filtered by task scenario, intent family and verdict: the query, each
tool call with its arguments, its sandbox match (``exact``, ``fuzzy``, ``nearest``… or the error type) and the
observation the agent read, the answer and the other fields of ``finish`` (intent, slots, plan: what ID, IE and
DEC score), the metrics, and every verdict check (expected, stated, passed, reason).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..html_report import (EpisodeView, ReportPage, Table, failures_first, metric_text, outcome_facts,
                           run_description, trajectory_views, verdict_passed, write_html)
from .report import report_charts, scorecard_sections

FILTERS = ["scenario", "intent family"]


def _findings(failing: Mapping[str, Any] | None) -> list[Table]:
    rows = [(row["scenario"], check["check"], str(check["episodes"]), f"{100 * check['share']:.1f}%",
             f"{check['example']} ({check['example_episode']})")
            for row in (failing or {}).get("scenarios") or [] for check in row["checks"]]
    if not rows:
        return []
    return [Table("Per task scenario", ("scenario", "check", "episodes", "share", "example (episode)"), tuple(rows),
                  "share: of the scenario's episodes with a verdict")]


def _facts(record: Mapping[str, Any], finish: Mapping[str, Any], excluded: bool) -> list[tuple[str, str]]:
    facts = [("metrics", metric_text(record.get("metrics")) or "none recorded")]
    if finish:
        facts.append(("finish fields", json.dumps(finish, ensure_ascii=False)))
    return facts + outcome_facts(record, "a blocking audit finding" if excluded else None)


def mobility_page(run_dir: Path, scorecard: Mapping[str, Any], records: Sequence[Mapping[str, Any]],
                  failing: Mapping[str, Any] | None, run: Mapping[str, Any] | None, *, rescored: bool) -> ReportPage:
    """The page of a run: ``records`` are the results the report reads (eval's when ``rescored``)."""
    views = trajectory_views(run_dir)
    excluded = set(scorecard.get("excluded") or ())
    episodes = []
    for record in failures_first(records):
        key = (str(record.get("episode_id")), int(record.get("sample_index") or 0))
        trajectory = views.get(key)
        scenario = str(record.get("task_scenario") or "?")
        episodes.append(EpisodeView(
            key[0], key[1], {"scenario": scenario, "intent family": str(record.get("intent_family") or "?")},
            verdict_passed(record), query=trajectory.query if trajectory else "",
            facts=_facts(record, trajectory.finish if trajectory else {}, key[0] in excluded),
            calls=trajectory.calls if trajectory else [], answer=trajectory.answer if trajectory else None,
            verdict=record.get("verdict") if isinstance(record.get("verdict"), Mapping) else None))
    notes = ["Metrics and verdicts recomputed by `mobility-env eval` (scorecard.json, eval_results.jsonl)." if rescored
             else "Metrics and verdicts as the run stored them (results.jsonl); `mobility-env eval` recomputes them."]
    if excluded:
        notes.append(f"{len(excluded)} audited episode(s) left out of the scorecard: {', '.join(sorted(excluded))}.")
    if not views:
        notes.append("No trajectories.jsonl: the episodes show their verdicts without the calls.")
    return ReportPage(
        title=f"MobilityBench report: {(run or {}).get('agent') or 'run'} · {Path(run_dir).name}",
        run=run_description(run, len({e.episode_id for e in episodes}), len(episodes)),
        scorecard=[Table(heading, tuple(columns), tuple(map(tuple, rows)),
                         "Scores in %, IT/OT in mean tokens per sample; n = episodes." if heading == "Overall" else "")
                   for heading, columns, rows in scorecard_sections(scorecard)],
        charts=report_charts(scorecard, run), episodes=episodes, filters=FILTERS, findings=_findings(failing),
        notes=notes)


def write_mobility_html(run_dir: Path, scorecard: Mapping[str, Any], records: Sequence[Mapping[str, Any]],
                        failing: Mapping[str, Any] | None, run: Mapping[str, Any] | None, *,
                        rescored: bool) -> Path:
    """Write ``run_dir/report.html`` (see the module docstring)."""
    return write_html(run_dir, mobility_page(run_dir, scorecard, records, failing, run, rescored=rescored))
