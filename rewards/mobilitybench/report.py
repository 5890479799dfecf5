"""Render a scorecard as Markdown, JSON and (when matplotlib is installed) PNG charts.

``write_report(run_dir, scorecard, failing=None, run=None) -> ReportFiles`` writes ``report.md``,
``report.json`` and the charts of :func:`report_charts`: ``chart_overall.png`` (every intent family and
``overall`` over the score columns), ``chart_radar.png`` (one polygon per intent family over the score
columns, the paper's summary picture) and ``chart_<family>.png`` (a family's scenarios over the score
columns); each bar labelled with its value, the legend outside the bars, the agent, model and n in the
title. ``failing`` (a :func:`mobility_rewards.mobilitybench.failures.failing_checks` result) adds the
section "Most frequent failing checks" per task scenario to ``report.md`` and the key
``failing_checks`` to ``report.json``. ``run`` (the run's ``run.json``) adds the section "Run":
agent, model, data path and fingerprint, load report, seed, sessions; and the key ``run``.
Text a model wrote (quoted in failing checks) is written safely: a lone surrogate becomes
U+FFFD; both files are replaced atomically. The charts need the optional ``plot`` extra
(``pip install 'mobility-env[plot]'``); without it the report says so and the other files are
still written. ``report.html`` (the same charts as inline SVG, and every episode) is
:mod:`mobility_rewards.mobilitybench.html`'s.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Mapping

from mobility_env.mobilitybench.episode import SCENARIOS_BY_FAMILY
from mobility_env.runfiles import json_text, write_text_atomic

from ..charts import BarChart, Chart, RadarChart, Series, percent, run_caption, write_pngs
from ..runs import ReportFiles, run_markdown
from .failures import failing_checks_markdown
from .scorecard import COLUMNS, TOKEN_COLUMNS, _cell

SCORE_COLUMNS = tuple(c for c in COLUMNS if c not in TOKEN_COLUMNS)


def scorecard_sections(scorecard: Mapping[str, Any]) -> list[tuple[str, list[str], list[list[str]]]]:
    """``(heading, columns, rows of cells)`` per group of the scorecard (scores in %, IT/OT in mean tokens);
    the tables of ``report.md`` and ``report.html``."""
    rows = scorecard.get("rows") or []
    extra = sorted({k for r in rows for k in r if k.startswith("pass")}, key=lambda k: (k[4], int(k[5:])))
    columns = list(scorecard.get("columns") or COLUMNS) + extra
    sections = []
    for group, heading in (("scenario", "By task scenario"), ("family", "By intent family"), ("overall", "Overall")):
        selected = [r for r in rows if r["group"] == group]
        if selected:
            sections.append((heading, ["name", "n", *columns],
                             [[r["name"], str(r["episodes"]), *(_cell(c, r.get(c)) for c in columns)]
                              for r in selected]))
    return sections


def scorecard_markdown(scorecard: Mapping[str, Any], *, title: str = "MobilityBench scorecard") -> str:
    """The scorecard as a Markdown document (scores in %, IT/OT in mean tokens)."""
    lines = [f"# {title}", "", "Scores in %, IT/OT in mean tokens per sample; n = episodes.", ""]
    for heading, columns, rows in scorecard_sections(scorecard):
        lines += [f"## {heading}", "", "| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
        lines += ["| " + " | ".join(row) + " |" for row in rows]
        lines.append("")
    if scorecard.get("excluded"):
        lines += [f"Excluded {len(scorecard['excluded'])} audited episode(s): " + ", ".join(scorecard["excluded"]), ""]
    return "\n".join(lines)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def report_charts(scorecard: Mapping[str, Any], run: Mapping[str, Any] | None = None) -> list[Chart]:
    """The report's charts (see the module docstring); none for an empty scorecard. Score columns no row measured
    (an extra metric of a newer version) are left out."""
    rows = scorecard.get("rows") or []
    overall = [r for r in rows if r["group"] == "overall"]
    families = [r for r in rows if r["group"] == "family"]
    if not overall:
        return []
    columns = tuple(c for c in SCORE_COLUMNS if any(r.get(c) is not None for r in rows))

    def series(row: Mapping[str, Any]) -> Series:
        return Series(row["name"], tuple(percent(row.get(c)) for c in columns))

    caption = run_caption(run, overall[0]["episodes"])
    charts: list[Chart] = [
        BarChart("chart_overall", "MobilityBench: scores by intent family and overall", caption, columns,
                 tuple(series(r) for r in families + overall)),
        RadarChart("chart_radar", "MobilityBench: intent families over the score metrics", caption, columns,
                   tuple(series(r) for r in families))]
    scenario_rows = [r for r in rows if r["group"] == "scenario"]
    for family, scenarios in SCENARIOS_BY_FAMILY.items():
        selected = [r for r in scenario_rows if r["name"] in scenarios]
        if selected:
            charts.append(BarChart(f"chart_{_slug(family)}", family,
                                   run_caption(run, sum(r["episodes"] for r in selected)), columns,
                                   tuple(series(r) for r in selected)))
    return charts


def write_report(run_dir: str | Path, scorecard: Mapping[str, Any],
                 failing: Mapping[str, Any] | None = None, run: Mapping[str, Any] | None = None) -> ReportFiles:
    """Write report.md, report.json and the charts into ``run_dir`` (see module docstring)."""
    run_dir = Path(run_dir)
    charts, note = write_pngs(run_dir, report_charts(scorecard, run))
    markdown = scorecard_markdown(scorecard)
    if run:
        markdown += "\n" + run_markdown(run)
    if charts:
        markdown += "\n" + "\n".join(f"![{p.stem}]({p.name})" for p in charts) + "\n"
    elif note:
        markdown += f"\n_{note}_\n"
    if failing is not None:
        markdown += "\n" + failing_checks_markdown(failing)
    md_path, json_path = run_dir / "report.md", run_dir / "report.json"
    write_text_atomic(md_path, markdown)
    payload = {**scorecard, "charts": [p.name for p in charts], "chart_note": note}
    if run:
        payload["run"] = dict(run)
    if failing is not None:
        payload["failing_checks"] = dict(failing)
    write_text_atomic(json_path, json_text(payload, indent=2))
    return ReportFiles(md_path, json_path, charts, note)
