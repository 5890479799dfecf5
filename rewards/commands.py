"""CLI subcommands ``eval``, ``report`` and ``audit`` (added to ``mobility-env`` by ``register``).

* ``mobility-env eval RUN_DIR [--data PATH] [--exclude-audited] [--exclude-ids FILE]``:
  recompute every metric and the verdict from the trajectories (a ``trajectory`` in each
  results.jsonl line, or ``RUN_DIR/trajectories.jsonl`` keyed by ``episode_id``/``sample_index``;
  a transcript's ``record`` field holds the Trajectory), print the scorecard and the most
  frequent failing checks, write ``RUN_DIR/scorecard.json`` and ``RUN_DIR/eval_results.jsonl``
  (the results lines with the recomputed ``metrics`` and ``verdict``, and ``rescored``:
  whether they were recomputed). Results without a trajectory keep their stored metrics and
  verdict (and are counted in the output). ``results.jsonl`` itself is never rewritten.
* ``mobility-env report RUN_DIR``: ``report.md``, ``report.json`` and per-family PNG charts
  from ``scorecard.json`` (or from the stored metrics when ``eval`` was not run), plus the
  most frequent failing checks per scenario (:mod:`mobility_rewards.failures`) from the verdicts of
  ``eval_results.jsonl`` when ``eval`` wrote it, else of ``results.jsonl``.
* ``mobility-env audit DATA [--json]``: list self-inconsistent gold labels.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from mobility_env.errors import ConfigError, DataFileError
from mobility_env.runfiles import EVAL_RESULTS_FILE, RESULTS_FILE, TRAJECTORIES_FILE, read_jsonl, read_results

from .audit import audit_episodes, blocking_episode_ids
from .failures import failing_checks
from .metrics import score_episode
from .report import write_report
from .scorecard import build_scorecard, format_scorecard

SCORECARD_FILE = "scorecard.json"


def _trajectory_dict(item: Any) -> dict[str, Any] | None:
    if not isinstance(item, dict):
        return None
    if isinstance(item.get("record"), dict):
        return item["record"]
    return item if "calls" in item or "finish" in item else None


def _load_episodes(data: str | None) -> dict[str, Any]:
    from mobility_env.loaders import load_episodes

    if data is None:
        from mobility_env.store import default_data_path

        data = str(default_data_path())
    return {episode.episode_id: episode for episode in load_episodes(data)}


def _exclusions(args: argparse.Namespace, episodes: dict[str, Any] | None) -> set[str]:
    excluded: set[str] = set()
    if getattr(args, "exclude_ids", None):
        path = Path(args.exclude_ids)
        if not path.exists():
            raise DataFileError(path, "no such file (expected one episode id per line)")
        excluded |= {line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()}
    if getattr(args, "exclude_audited", False):
        if episodes is None:
            episodes = _load_episodes(args.data)
        excluded |= blocking_episode_ids(audit_episodes(episodes.values()))
    return excluded


def rescore_run(run_dir: Path, episodes: dict[str, Any]) -> tuple[list[dict[str, Any]], int]:
    """Results of ``run_dir`` with metrics and verdict recomputed from trajectories; and how many were.

    Each returned record is the latest results line of its (episode_id, sample_index), without
    an embedded ``trajectory``, with ``rescored`` set; one that could not be recomputed (no
    trajectory, or an episode not in ``episodes``) keeps its stored ``metrics`` and ``verdict``.
    """
    from mobility_env.trajectory import Trajectory

    results = read_jsonl(run_dir / RESULTS_FILE)
    sidecar: dict[tuple[str, int], dict[str, Any]] = {}
    if (run_dir / TRAJECTORIES_FILE).exists():
        for item in read_jsonl(run_dir / TRAJECTORIES_FILE):
            trajectory = _trajectory_dict(item)
            if trajectory is not None and item.get("episode_id") is not None:
                sidecar[(str(item["episode_id"]), int(item.get("sample_index", 0)))] = trajectory
    latest = {(str(r.get("episode_id")), int(r.get("sample_index", 0))): r for r in results}
    rescored, recomputed = [], 0
    for key, record in latest.items():
        record = dict(record)
        trajectory = _trajectory_dict(record.get("trajectory")) or sidecar.get(key)
        episode = episodes.get(key[0])
        if trajectory is not None and episode is not None:
            parsed = Trajectory.model_validate({"episode_id": key[0], **trajectory})
            metrics, verdict = score_episode(episode, parsed)
            record["metrics"], record["verdict"] = metrics, verdict.to_dict()
            record.setdefault("input_tokens", parsed.input_tokens)
            record.setdefault("output_tokens", parsed.output_tokens)
            recomputed += 1
        record["rescored"] = trajectory is not None and episode is not None
        record.pop("trajectory", None)
        rescored.append(record)
    return rescored, recomputed


def cmd_eval(args: argparse.Namespace) -> int:
    run_dir = Path(args.run_dir)
    episodes = _load_episodes(args.data)
    results, recomputed = rescore_run(run_dir, episodes)
    if not results:
        raise ConfigError(f"{run_dir / RESULTS_FILE}: no results to evaluate")
    scorecard = build_scorecard(results, exclude=_exclusions(args, episodes))
    scorecard["recomputed"] = recomputed
    scorecard["results"] = len(results)
    print(format_scorecard(scorecard))
    # every check of every scenario (top=None), so the overall counts are exact
    top = _overall_failing(failing_checks(results, exclude=scorecard.get("excluded") or (), top=None))
    if top:
        print("most frequent failing checks: " + ", ".join(f"{name} ({count})" for name, count in top))
    with (run_dir / EVAL_RESULTS_FILE).open("w", encoding="utf-8") as handle:
        for record in results:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    (run_dir / SCORECARD_FILE).write_text(json.dumps(scorecard, ensure_ascii=False, indent=2), encoding="utf-8")
    print(f"recomputed {recomputed}/{len(results)} results from trajectories; "
          f"wrote {run_dir / SCORECARD_FILE} and {run_dir / EVAL_RESULTS_FILE}")
    return 0


def _overall_failing(section: dict[str, Any], top: int = 5) -> list[tuple[str, int]]:
    """(check, failing episodes) summed over the scenarios of a ``failing_checks`` result, most frequent first."""
    totals: dict[str, int] = {}
    for row in section["scenarios"]:
        for check in row["checks"]:
            totals[check["check"]] = totals.get(check["check"], 0) + check["episodes"]
    return sorted(totals.items(), key=lambda item: (-item[1], item[0]))[:top]


def report_records(run_dir: Path) -> list[dict[str, Any]]:
    """The records the report's failing-checks section reads: eval's output when present."""
    if (run_dir / SCORECARD_FILE).exists() and (run_dir / EVAL_RESULTS_FILE).exists():
        return read_results(run_dir / EVAL_RESULTS_FILE)
    return read_results(run_dir / RESULTS_FILE)


def cmd_report(args: argparse.Namespace) -> int:
    run_dir = Path(args.run_dir)
    path = run_dir / SCORECARD_FILE
    records = report_records(run_dir)
    if path.exists():
        scorecard = json.loads(path.read_text(encoding="utf-8"))
    else:
        scorecard = build_scorecard(records)
    failing = failing_checks(records, exclude=scorecard.get("excluded") or ())
    files = write_report(run_dir, scorecard, failing=failing)
    print(f"wrote {files.markdown} and {files.json}" + "".join(f", {p}" for p in files.charts))
    if files.chart_note:
        print(files.chart_note)
    return 0


def cmd_audit(args: argparse.Namespace) -> int:
    from mobility_env.loaders import load_episodes

    episodes = load_episodes(args.data)
    findings = audit_episodes(episodes)
    if args.json:
        print(json.dumps([f.to_dict() for f in findings], ensure_ascii=False, indent=2))
    else:
        for finding in findings:
            flag = "BLOCKING" if finding.blocking else "note"
            print(f"{finding.episode_id}\t{flag}\t{finding.kind}\t{finding.detail}")
        blocking = blocking_episode_ids(findings)
        print(f"{len(findings)} finding(s) in {len(episodes)} episode(s); {len(blocking)} episode(s) blocking",
              file=sys.stderr)
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``eval``, ``report`` and ``audit`` to the ``mobility-env`` parser."""
    evaluate = subparsers.add_parser("eval", help="recompute metrics of a run from its trajectories; print the scorecard",
                                     description="Recompute every metric and verdict from RUN_DIR/results.jsonl "
                                                 "(+ trajectories.jsonl), print the scorecard and write "
                                                 "RUN_DIR/scorecard.json and RUN_DIR/eval_results.jsonl.")
    evaluate.add_argument("run_dir", help="run directory holding results.jsonl")
    evaluate.add_argument("--data", default=None, help="episodes of the run (built directory or official file); "
                                                       "default: the bundled set")
    evaluate.add_argument("--exclude-audited", action="store_true",
                          help="leave out episodes with blocking audit findings")
    evaluate.add_argument("--exclude-ids", default=None, help="file with episode ids to leave out, one per line")
    evaluate.set_defaults(func=cmd_eval)

    report = subparsers.add_parser("report", help="write report.md, report.json and charts for a run",
                                   description="Render RUN_DIR/scorecard.json (or the stored metrics) as Markdown, "
                                               "JSON and one PNG chart per intent family (needs matplotlib), with "
                                               "the most frequent failing checks per task scenario.")
    report.add_argument("run_dir", help="run directory holding results.jsonl")
    report.set_defaults(func=cmd_report)

    audit = subparsers.add_parser("audit", help="list episodes whose gold labels are self-inconsistent",
                                  description="Flag gold labels that contradict themselves or lack evidence.")
    audit.add_argument("data", help="official CSV/XLSX/JSONL file, episodes Parquet or built directory")
    audit.add_argument("--json", action="store_true", help="print findings as JSON")
    audit.set_defaults(func=cmd_audit)
