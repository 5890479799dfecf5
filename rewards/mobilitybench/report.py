"""Render a scorecard as Markdown, JSON and (when matplotlib is installed) one PNG per family.

``write_report(run_dir, scorecard, failing=None, run=None) -> ReportFiles`` writes ``report.md``,
``report.json`` and ``chart_<family>.png`` (a bar chart of the family's scenarios over the
score columns). ``failing`` (a :func:`mobility_rewards.mobilitybench.failures.failing_checks` result) adds the
section "Most frequent failing checks" per task scenario to ``report.md`` and the key
``failing_checks`` to ``report.json``. ``run`` (the run's ``run.json``) adds the section "Run":
agent, model, data path and fingerprint, load report, seed, sessions; and the key ``run``.
Text a model wrote (quoted in failing checks) is written safely: a lone surrogate becomes
U+FFFD; both files are replaced atomically. The charts need the optional ``plot`` extra
(``pip install -e ".[plot]"``); without it the report says so and the other files are
still written.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Mapping

from mobility_env.mobilitybench.episode import SCENARIOS_BY_FAMILY
from mobility_env.runfiles import json_text, write_text_atomic

from ..runs import ReportFiles, run_markdown
from .failures import failing_checks_markdown
from .scorecard import COLUMNS, TOKEN_COLUMNS, _cell

SCORE_COLUMNS = tuple(c for c in COLUMNS if c not in TOKEN_COLUMNS)


def scorecard_markdown(scorecard: Mapping[str, Any], *, title: str = "MobilityBench scorecard") -> str:
    """The scorecard as a Markdown document (scores in %, IT/OT in mean tokens)."""
    rows = scorecard.get("rows") or []
    extra = sorted({k for r in rows for k in r if k.startswith("pass")}, key=lambda k: (k[4], int(k[5:])))
    columns = list(scorecard.get("columns") or COLUMNS) + extra
    lines = [f"# {title}", "", "Scores in %, IT/OT in mean tokens per sample; n = episodes.", ""]
    for group, heading in (("scenario", "By task scenario"), ("family", "By intent family"), ("overall", "Overall")):
        selected = [r for r in rows if r["group"] == group]
        if not selected:
            continue
        lines += [f"## {heading}", "", "| " + " | ".join(["name", "n", *columns]) + " |",
                  "|" + "---|" * (len(columns) + 2)]
        lines += ["| " + " | ".join([r["name"], str(r["episodes"]), *(_cell(c, r.get(c)) for c in columns)]) + " |"
                  for r in selected]
        lines.append("")
    if scorecard.get("excluded"):
        lines += [f"Excluded {len(scorecard['excluded'])} audited episode(s): " + ", ".join(scorecard["excluded"]), ""]
    return "\n".join(lines)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def _charts(run_dir: Path, scorecard: Mapping[str, Any]) -> tuple[list[Path], str]:
    try:
        import matplotlib
    except ImportError:
        return [], "charts skipped: matplotlib is not installed (pip install -e \".[plot]\")"
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in scorecard.get("rows") or [] if r["group"] == "scenario"]
    paths = []
    for family, scenarios in SCENARIOS_BY_FAMILY.items():
        selected = [r for r in rows if r["name"] in scenarios]
        if not selected:
            continue
        figure, axes = plt.subplots(figsize=(10, 4))
        width = 0.8 / len(selected)
        for i, row in enumerate(selected):
            values = [100 * (row.get(c) or 0.0) for c in SCORE_COLUMNS]
            axes.bar([x + i * width for x in range(len(SCORE_COLUMNS))], values, width, label=row["name"])
        axes.set_xticks([x + 0.4 - width / 2 for x in range(len(SCORE_COLUMNS))], SCORE_COLUMNS)
        axes.set_ylim(0, 100)
        axes.set_ylabel("%")
        axes.set_title(family)
        axes.legend(fontsize=8)
        figure.tight_layout()
        path = run_dir / f"chart_{_slug(family)}.png"
        figure.savefig(path, dpi=100)
        plt.close(figure)
        paths.append(path)
    return paths, ""


def write_report(run_dir: str | Path, scorecard: Mapping[str, Any],
                 failing: Mapping[str, Any] | None = None, run: Mapping[str, Any] | None = None) -> ReportFiles:
    """Write report.md, report.json and per-family charts into ``run_dir`` (see module docstring)."""
    run_dir = Path(run_dir)
    charts, note = _charts(run_dir, scorecard)
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
