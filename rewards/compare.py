"""``mobility-env compare RUN_DIR RUN_DIR ...``: runs of one suite side by side, with the differences.

Each run is read as ``mobility-env report`` reads it (eval's rescored results when ``scorecard.json`` is
current, else ``results.jsonl``) and tabled by its suite (:attr:`mobility_rewards.suites.SuiteScoring.table`,
a :class:`~mobility_rewards.runs.ScoreTable`): the overall row with every column, then the suite's headline
score (FPR for MobilityBench-v0, success for MobilePA-v0) per group row, one column per run and the difference
of each later run from the first (``B−A``). Runs of different suites are refused; runs on different data or a
different set of episodes are compared with a note saying so (the rows then hold different episodes).
``--json`` prints the comparison as data; ``--chart FILE.png`` draws the headline per group (the ``plot``
extra).
"""

from __future__ import annotations

import argparse
import string
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from mobility_env.errors import ConfigError
from mobility_env.runfiles import existing_run_dir, json_text, read_run_info

from .runs import ScoreRow, ScoreTable

__all__ = ["ScoreRow", "ScoreTable", "compare_runs", "format_comparison", "register"]


@dataclass
class _Run:
    label: str
    path: Path
    info: dict[str, Any]
    table: ScoreTable
    episodes: set[str]


def _load(run_dir: Path, label: str) -> _Run:
    from mobility_env.suites import suite_of_run

    from .commands import report_records

    info = read_run_info(run_dir) or {}
    records = report_records(run_dir)
    if not records:
        raise ConfigError(f"{run_dir}: no results to compare (results.jsonl is empty)")
    suite = suite_of_run(info)
    table = suite.part("scoring").table(records)
    return _Run(label, run_dir, {**info, "env_id": suite.env_id}, table,
                {str(r.get("episode_id")) for r in records})


def compare_runs(run_dirs: Sequence[str | Path]) -> dict[str, Any]:
    """The comparison as data: the runs, the overall rows, the headline per group row, and notes."""
    if len(run_dirs) < 2:
        raise ConfigError("compare needs at least two run directories")
    if len(run_dirs) > len(string.ascii_uppercase):
        raise ConfigError(f"compare takes at most {len(string.ascii_uppercase)} runs, got {len(run_dirs)}")
    runs = [_load(existing_run_dir(Path(d)), string.ascii_uppercase[i]) for i, d in enumerate(run_dirs)]
    suites = {run.info["env_id"] for run in runs}
    if len(suites) > 1:
        raise ConfigError("runs of different suites cannot be compared: "
                          + ", ".join(f"{run.path} is {run.info['env_id']}" for run in runs))
    notes = []
    fingerprints = {run.info.get("data_fingerprint") for run in runs}
    if len(fingerprints) > 1:
        notes.append("the runs were made on different data (run.json's data_fingerprint differs)")
    if any(run.episodes != runs[0].episodes for run in runs[1:]):
        notes.append("the runs hold different sets of episodes: their rows average different episodes")
    first = runs[0].table
    keys = list(dict.fromkeys((row.group, row.name) for run in runs for row in run.table.rows))
    by_run = [{(row.group, row.name): row for row in run.table.rows} for run in runs]
    rows = []
    for group, name in keys:
        cells = [table.get((group, name)) for table in by_run]
        columns = first.columns if group == "overall" else [first.headline]
        for column in columns:
            values = [None if row is None else row.values.get(column) for row in cells]
            rows.append({"group": group, "name": name, "column": column,
                         "n": [None if row is None else row.n for row in cells], "values": values,
                         "deltas": [None if v is None or values[0] is None else v - values[0] for v in values[1:]]})
    return {"env_id": suites.pop(), "headline": first.headline, "shares": sorted(first.shares),
            "runs": [{"label": run.label, "path": str(run.path), "agent": run.info.get("agent"),
                      "model": run.info.get("model"), "episodes": len(run.episodes)} for run in runs],
            "rows": rows, "notes": notes}


def format_comparison(comparison: Mapping[str, Any]) -> str:
    """A fixed-width terminal table of :func:`compare_runs`' result."""
    shares = set(comparison["shares"])
    table = ScoreTable(rows=(), columns=(), headline=comparison["headline"], shares=frozenset(shares))
    runs = comparison["runs"]
    labels = [run["label"] for run in runs]
    lines = [f"{comparison['env_id']}: {len(runs)} runs (scores in %; differences from run A)"]
    for run in runs:
        who = " ".join(str(part) for part in (run["agent"], run["model"]) if part) or "?"
        lines.append(f"  {run['label']}  {who}  {run['path']}  ({run['episodes']} episodes)")
    deltas = [f"{label}-A" for label in labels[1:]]
    overall = [row for row in comparison["rows"] if row["group"] == "overall"]
    others = [row for row in comparison["rows"] if row["group"] != "overall"]
    width = max([24, *(len(f"{row['group']}: {row['name']}") + 2 for row in others)])

    def line(label: str, row: Mapping[str, Any]) -> str:
        values = [table.cell(row["column"], v) for v in row["values"]]
        signs = ["-" if d is None else ("+" if d > 0 else "") + table.cell(row["column"], d) for d in row["deltas"]]
        n = next((str(k) for k in row["n"] if k is not None), "-")
        return (label.ljust(width) + n.rjust(6) + "".join(v.rjust(9) for v in values)
                + "".join(s.rjust(9) for s in signs))

    header = "n".rjust(6) + "".join(label.rjust(9) for label in labels) + "".join(d.rjust(9) for d in deltas)
    lines += ["", "overall".ljust(width) + header, "-" * (width + len(header))]
    lines += [line(row["column"], row) for row in overall]
    if others:
        lines += ["", f"{comparison['headline']} by group".ljust(width) + header, "-" * (width + len(header))]
        previous = None
        for row in others:
            if previous is not None and row["group"] != previous:
                lines.append("")
            previous = row["group"]
            lines.append(line(f"{row['group']}: {row['name']}", row))
    lines += [f"note: {note}" for note in comparison["notes"]]
    return "\n".join(lines)


def comparison_chart(comparison: Mapping[str, Any], out: Path) -> Path:
    """The headline per group row, one bar per run (:class:`mobility_rewards.charts.BarChart`: every bar labelled, a
    group a run lacks ``n/a``), as ``out`` with the suffix ``.png``; needs matplotlib."""
    from .charts import BarChart, Series, percent, write_pngs

    rows = [row for row in comparison["rows"] if row["column"] == comparison["headline"]]
    series = []
    for index, run in enumerate(comparison["runs"]):
        who = " ".join(str(p) for p in (run["agent"], run["model"]) if p)
        series.append(Series(f"{run['label']}: {who} (n={run['episodes']})",
                             tuple(percent(row["values"][index]) for row in rows)))
    chart = BarChart(stem=out.with_suffix("").name,
                     title=f"{comparison['env_id']}: {comparison['headline']} (%) by group",
                     caption=f"{len(series)} runs; differences in the table of `mobility-env compare`",
                     categories=tuple(row["name"] for row in rows), series=tuple(series))
    files, note = write_pngs(out.parent, [chart])
    if not files:
        raise ConfigError(f"--chart: {note}")
    return files[0]


def _cmd_compare(args: argparse.Namespace) -> int:
    if args.chart is not None:
        try:
            import matplotlib  # noqa: F401  (checked before the runs are read)
        except ImportError:
            from .charts import PLOT_HINT

            raise ConfigError(f"--chart needs matplotlib: {PLOT_HINT}") from None
    comparison = compare_runs(args.run_dirs)
    print(json_text(comparison, indent=2) if args.json else format_comparison(comparison))
    if args.chart is not None:
        print(f"wrote {comparison_chart(comparison, args.chart)}", file=sys.stderr)
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``compare`` to the ``mobility-env`` parser."""
    compare = subparsers.add_parser(
        "compare", help="compare runs of one suite side by side, with the differences",
        description="Side-by-side scorecard of two or more runs of one suite: every overall column per run and "
                    "the difference of each later run from the first (B-A), then the suite's headline score "
                    "(FPR for MobilityBench-v0, success for MobilePA-v0) per scenario, family, bucket or category. "
                    "Each run is read as `report` reads it (eval's rescored results when current).",
        epilog="Exit status: 0 done; 2 a missing run, runs of different suites, fewer than two runs.")
    compare.add_argument("run_dirs", nargs="+", metavar="RUN_DIR", help="run directories (two or more)")
    compare.add_argument("--json", action="store_true", help="print the comparison as JSON")
    compare.add_argument("--chart", type=Path, metavar="FILE.png",
                         help="also draw the headline score per group, one bar per run (needs the plot extra)")
    compare.set_defaults(func=_cmd_compare)
