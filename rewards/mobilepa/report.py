"""``mobility-env eval`` and ``report`` for a ``MobilePA-v0`` run (its ``run.json`` says ``env_id``).

* :func:`rescore_phone_run` re-verifies every latest result from its recorded phone trajectory
  (``trajectories.jsonl``'s ``record``: calls, ``D_T − D_0``, answer) against the run's tasks, with
  the current :class:`~mobility_rewards.mobilepa.verify.PhoneScorer` — what ``eval`` does after the
  verifier changed; a result without a trajectory, or of a task not in the tasks, keeps its stored
  metrics and verdict (``rescored: false``);
* :func:`phone_failing_checks` counts the failed verdict checks per bucket (which check fails how
  often: ``delta_matches``, ``no_collateral_changes``, ``asked_first`` …);
* :func:`write_phone_report` writes ``report.md`` and ``report.json``: the scorecard of
  :mod:`mobility_rewards.mobilepa.scorecard`, the failing checks, and the run's description; and, with the
  optional ``plot`` extra (``pip install 'mobility-env[plot]'``), the charts of :func:`phone_charts`:
  ``chart_dimensions.png`` (success, progress and DR per capability dimension and overall; the paper's weighted
  score in the title), ``chart_buckets.png`` (the same per verification bucket) and ``chart_radar.png`` (one
  polygon per score over the dimensions and buckets), values on the bars, agent, model and n in the title.
  ``report.html`` (the same charts as inline SVG, and every task) is :mod:`mobility_rewards.mobilepa.html`'s.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Iterable, Mapping

from mobility_env.errors import DataFileError
from mobility_env.mobilepa.episode import PhoneCall, PhoneTrajectory
from mobility_env.mobilepa.tasks import DIMENSIONS, PhoneTask
from mobility_env.runfiles import (RESULTS_FILE, TRAJECTORIES_FILE, json_text, read_jsonl, read_results,
                                   write_text_atomic)

from .verify import PhoneScorer
from .scorecard import COLUMNS, GROUPS
from ..charts import BarChart, Chart, RadarChart, Series, percent, run_caption, write_pngs
from ..runs import ReportFiles, run_markdown

_CALL_FIELDS = ("step", "name", "arguments", "status", "error_type", "payload")


def phone_trajectory(record: Mapping[str, Any], where: Path, row: int | None) -> PhoneTrajectory:
    """The :class:`PhoneTrajectory` of a recorded ``PhoneTrajectory.to_dict()``; a malformed one raises
    :class:`DataFileError` naming the file and row."""
    try:
        calls = [PhoneCall(**{k: c.get(k) for k in _CALL_FIELDS}) for c in record["calls"]]
        for call in calls:
            if not isinstance(call.name, str) or not isinstance(call.status, str):
                raise TypeError("a call without a name or status")
            call.payload = call.payload if isinstance(call.payload, dict) else {}
        delta = record.get("delta") or {}
        answer = record.get("answer")
        if not isinstance(delta, dict) or not (answer is None or isinstance(answer, str)):
            raise TypeError("delta must be an object and answer a string or null")
        return PhoneTrajectory(str(record["task_id"]), calls, delta, answer, bool(record.get("truncated")))
    except (KeyError, TypeError, AttributeError) as exc:
        raise DataFileError(where, f"not a recorded MobilePA trajectory ({exc})", row=row) from exc


def rescore_phone_run(run_dir: Path, tasks: dict[str, PhoneTask]) -> tuple[list[dict[str, Any]], int]:
    """The latest result per (task, sample) with metrics and verdict recomputed; and how many were."""
    latest = {(str(r["episode_id"]), int(r.get("sample_index", 0))): r for r in read_results(run_dir / RESULTS_FILE)}
    recorded: dict[tuple[str, int], tuple[dict[str, Any], int]] = {}
    for row, item in enumerate(read_jsonl(run_dir / TRAJECTORIES_FILE), 1):
        if isinstance(item, dict) and isinstance(item.get("record"), dict) and item.get("episode_id") is not None:
            try:
                recorded[(str(item["episode_id"]), int(item.get("sample_index", 0)))] = (item["record"], row)
            except (TypeError, ValueError) as exc:
                raise DataFileError(run_dir / TRAJECTORIES_FILE, "sample_index is not an integer", row=row) from exc
    scorer, results, recomputed = PhoneScorer(), [], 0
    for key, result in latest.items():
        result = dict(result)
        task = tasks.get(key[0])
        found = recorded.get(key)
        result["rescored"] = task is not None and found is not None
        if task is not None and found is not None:
            trajectory = phone_trajectory(found[0], run_dir / TRAJECTORIES_FILE, found[1])
            score = scorer.finish(scorer.start(task), trajectory)
            result["metrics"], result["verdict"] = dict(score.metrics), score.verdict.to_dict()
            recomputed += 1
        results.append(result)
    return results, recomputed


def phone_failing_checks(records: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, int]]:
    """``{bucket: {check name: failed samples}}``, most frequent first, over records with a verdict."""
    counts: dict[str, Counter] = defaultdict(Counter)
    for record in records:
        verdict = record.get("verdict")
        if not isinstance(verdict, Mapping):
            continue
        for check in verdict.get("checks") or []:
            if isinstance(check, Mapping) and not check.get("passed"):
                counts[str(record.get("bucket"))][str(check.get("name"))] += 1
    return {bucket: dict(counter.most_common()) for bucket, counter in sorted(counts.items())}


def phone_scorecard_sections(card: Mapping[str, Any]) -> list[tuple[str, list[str], list[list[str]]]]:
    """``(heading, columns, rows of cells)`` per group of the scorecard (success, DR and progress in %); the tables
    of ``report.md`` and ``report.html``."""
    columns = list(COLUMNS)

    def cells(values: Mapping[str, Any]) -> list[str]:
        out = []
        for column in columns:
            value = values.get(column, 0)
            out.append(f"{value:.3f}" if column == "return" else f"{value:.0f}" if column in ("IT", "OT", "failures")
                       else f"{100 * value:.1f}")
        return out

    sections = [("Overall", {"all": card["overall"]})] + [(f"By {group}", card.get(group) or {}) for group in GROUPS]
    return [(heading, ["name", "n", *columns], [[name, str(values["tasks"]), *cells(values)]
                                                for name, values in rows.items()])
            for heading, rows in sections if rows]


#: What the paper's overall score is, as the report says it.
WEIGHTED_SCORE = "success per capability dimension, the paper's weights basic 0.5, sub-agent 0.1, memory 0.2, skill 0.2"


def weighted_parts(card: Mapping[str, Any]) -> tuple[str, str] | None:
    """The paper's overall score in % (``"83.3"``) and what qualifies it (``" — only basic present, weights
    renormalized"`` or ``""``); None when the card has none."""
    weighted = card["overall"].get("weighted")
    if not weighted:
        return None
    remark = "" if weighted.get("complete") else \
        f" — only {', '.join(weighted.get('dimensions') or []) or 'no dimension'} present, weights renormalized"
    return f"{100 * weighted['score']:.1f}", remark


def phone_scorecard_markdown(card: Mapping[str, Any]) -> str:
    lines = ["# MobilePA scorecard", "", "success, DR and progress in %; return is the mean episode return; "
             "IT/OT mean tokens per sample; n = tasks.", ""]
    weighted = weighted_parts(card)
    if weighted:
        lines += [f"**Overall score** ({WEIGHTED_SCORE}): **{weighted[0]}**{weighted[1]}", ""]
    for heading, columns, rows in phone_scorecard_sections(card):
        lines += [f"## {heading}", "", "| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
        lines += ["| " + " | ".join(row) + " |" for row in rows]
        lines.append("")
    return "\n".join(lines)


_SCORES = ("success", "progress", "DR")


def phone_charts(card: Mapping[str, Any], run: Mapping[str, Any] | None = None) -> list[Chart]:
    """The report's charts (see the module docstring): by dimension with ``overall``, by bucket, and the radar."""
    caption = run_caption(run, card["overall"]["tasks"], "tasks")
    dimensions = card.get("dimension") or {}
    names = [d for d in DIMENSIONS if d in dimensions] + sorted(set(dimensions) - set(DIMENSIONS))
    rows = {**{name: dimensions[name] for name in names}, "overall": card["overall"]}
    weighted = (card["overall"].get("weighted") or {}).get("score")
    title = "MobilePA: by capability dimension"
    if weighted is not None:
        title += f" (weighted overall score {100 * weighted:.1f})"

    def series(groups: Mapping[str, Mapping[str, Any]]) -> tuple[Series, ...]:
        return tuple(Series(score, tuple(percent(values.get(score)) for values in groups.values()))
                     for score in _SCORES)

    buckets = card.get("bucket") or {}
    axes = {**{name: dimensions[name] for name in names}, **buckets}
    if len(axes) < 3:
        axes.update(card.get("category") or {})
    return [BarChart("chart_dimensions", title, caption, tuple(rows), series(rows)),
            BarChart("chart_buckets", "MobilePA: by verification bucket", caption, tuple(buckets), series(buckets)),
            RadarChart("chart_radar", "MobilePA: scores over the dimensions and buckets", caption, tuple(axes),
                       series(axes))]


def write_phone_report(run_dir: Path, card: Mapping[str, Any], failing: Mapping[str, Mapping[str, int]],
                       run: Mapping[str, Any] | None) -> ReportFiles:
    """Write ``report.md``, ``report.json`` and the charts for a MobilePA run."""
    markdown = phone_scorecard_markdown(card)
    charts, note = write_pngs(run_dir, phone_charts(card, run))
    markdown += "\n" + ("\n".join(f"![{p.stem}]({p.name})" for p in charts) if charts else f"_{note}_") + "\n"
    if run:
        markdown += "\n" + run_markdown(run)
    if failing:
        markdown += "\n## Most frequent failing checks\n\n"
        for bucket, checks in failing.items():
            markdown += f"* {bucket}: " + ", ".join(f"{name} ({n})" for name, n in list(checks.items())[:8]) + "\n"
    md_path, json_path = run_dir / "report.md", run_dir / "report.json"
    write_text_atomic(md_path, markdown)
    payload = {"env_id": "MobilePA-v0", "scorecard": dict(card), "failing_checks": dict(failing),
               "charts": [p.name for p in charts], "chart_note": note, **({"run": dict(run)} if run else {})}
    write_text_atomic(json_path, json_text(payload, indent=2))
    return ReportFiles(md_path, json_path, charts, note)
