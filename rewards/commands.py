"""CLI subcommands ``eval``, ``report`` and ``audit`` (added to ``mobility-env`` by ``register``).

* ``mobility-env eval RUN_DIR [--data PATH] [--exclude-audited] [--exclude-ids FILE]``:
  recompute every metric and the verdict from the trajectories (a ``trajectory`` in each
  results.jsonl line, or ``RUN_DIR/trajectories.jsonl`` keyed by ``episode_id``/``sample_index``;
  a transcript's ``record`` field holds the Trajectory) against **the run's own data**, the
  path ``RUN_DIR/run.json`` recorded (``--data`` only to point at a copy of it), print the
  scorecard and the most frequent failing checks, write ``RUN_DIR/scorecard.json`` and
  ``RUN_DIR/eval_results.jsonl`` (the results lines with the recomputed ``metrics`` and
  ``verdict``, and ``rescored``: whether they were recomputed). It refuses, writing nothing,
  when the run's data is gone, when a run has no run.json and no ``--data`` is given, and
  when the data lacks episodes the results name (not the run's data). Results without a
  trajectory keep their stored metrics and verdict (and are counted in the output).
  ``results.jsonl`` itself is never rewritten; the two outputs are replaced atomically.
  Rescoring uses this code's reward and verdict versions
  (:func:`mobility_rewards.mobilitybench.shaping.format_versions`, recorded in ``scorecard.json`` as
  ``source.format_versions``); when ``run.json`` records other versions (or none), a note on
  stderr says the run was scored with version X and is rescored with version Y.
* ``mobility-env report RUN_DIR``: ``report.md``, ``report.json``, PNG charts (with the ``plot`` extra) and
  ``report.html`` (one self-contained page: the scorecard, charts and every episode's calls and verdict)
  from ``scorecard.json`` when it was computed from the current results (else from the stored
  metrics, saying so), plus the run's own description (agent, model, data, load report, seed,
  sessions from ``run.json``) and the most frequent failing checks per scenario
  (:mod:`mobility_rewards.mobilitybench.failures`) from the verdicts of ``eval_results.jsonl`` when that
  scorecard is used, else of ``results.jsonl``. When the metrics it reports were scored with
  reward or verdict versions other than this code's (the run's, for stored metrics; eval's,
  for ``scorecard.json``), a note on stderr names those versions and how to rescore.
* ``mobility-env audit DATA [--json]``: list self-inconsistent gold labels.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, cast

from mobility_env.errors import ConfigError, DataFileError
from mobility_env.layout import file_checksum
from mobility_env.runfiles import (EVAL_RESULTS_FILE, RESULTS_FILE, RUN_FILE, TRAJECTORIES_FILE, data_fingerprint,
                                   existing_run_dir, json_line, json_text, read_json_file, read_jsonl,
                                   read_results, read_run_info, write_text_atomic)

from .mobilitybench.audit import audit_episodes, blocking_episode_ids
from .mobilitybench.failures import failing_checks
from .mobilitybench.html import write_mobility_html
from .mobilitybench.metrics import score_episode
from .mobilitybench.report import write_report
from .mobilitybench.scorecard import build_scorecard, format_scorecard
from .mobilitybench.shaping import FORMAT_VERSION_KEYS, format_versions

SCORECARD_FILE = "scorecard.json"


#: The versions that decide metric values and verdicts (the observation version only says what the agent read).
_SCORING_KEYS = ("reward_version", "verdict_version")


def recorded_versions(run: dict[str, Any] | None) -> dict[str, Any]:
    """The format versions ``run.json`` records (None for each one it does not: an older run)."""
    run = run or {}
    identity = cast(dict, run.get("identity") if isinstance(run.get("identity"), dict) else {})
    return {key: run.get(key, identity.get(key)) for key in FORMAT_VERSION_KEYS}


def _versions_text(versions: dict[str, Any], keys: tuple[str, ...]) -> str:
    return ", ".join(f"{key} {versions.get(key)}" for key in keys)


def _scoring_label(versions: dict[str, Any]) -> str:
    if all(versions[key] is None for key in _SCORING_KEYS):
        return "format versions run.json does not record (a run made before they were recorded)"
    return _versions_text(versions, _SCORING_KEYS)


def rescore_note(run: dict[str, Any] | None) -> str | None:
    """What ``eval`` says when the run was made by code of other format versions; None when equal."""
    recorded, current = recorded_versions(run), format_versions()
    if recorded == current:
        return None
    if run is None:
        return (f"note: without run.json the versions this run was scored with are unknown; it is rescored with "
                f"this code's {_versions_text(current, _SCORING_KEYS)}")
    if all(recorded[key] is None for key in FORMAT_VERSION_KEYS):
        return (f"note: run.json records no format versions (a run made before they were recorded); it is rescored "
                f"with this code's {_versions_text(current, _SCORING_KEYS)}")
    notes = []
    if any(recorded[key] != current[key] for key in _SCORING_KEYS):
        notes.append(f"note: this run was scored with {_versions_text(recorded, _SCORING_KEYS)}; it is rescored with "
                     f"{_versions_text(current, _SCORING_KEYS)} (this code's), so its metrics may differ from the "
                     f"ones in results.jsonl")
    if recorded["observation_version"] != current["observation_version"]:
        notes.append(f"note: the agent read observations of observation_version {recorded['observation_version']} "
                     f"(this code writes {current['observation_version']}); rescoring does not replay them, the "
                     f"trajectories keep what the agent read")
    return "\n".join(notes)


def report_version_note(run: dict[str, Any] | None, scorecard: dict[str, Any] | None) -> str | None:
    """What ``report`` says when the metrics it reports were scored with other versions than this code's.

    ``scorecard``: eval's current ``scorecard.json`` (its ``source.format_versions``), or None when
    the report reads the stored metrics of ``results.jsonl`` (scored as ``run.json`` records).
    """
    current = format_versions()
    if scorecard is not None:
        source = cast(dict, scorecard.get("source") if isinstance(scorecard.get("source"), dict) else {})
        used = cast(dict, source.get("format_versions") if isinstance(source.get("format_versions"), dict) else {})
        if all(used.get(key) == current[key] for key in _SCORING_KEYS):
            return None
        shown = _versions_text(used, _SCORING_KEYS) if used else "format versions it does not record (an older eval)"
        return (f"note: scorecard.json was computed with {shown}; this code has "
                f"{_versions_text(current, _SCORING_KEYS)} — run `mobility-env eval` again to rescore")
    recorded = recorded_versions(run)
    forced = [recorded_versions(session.get("identity")) for session in (run or {}).get("sessions") or []
              if isinstance(session, dict) and session.get("forced") and isinstance(session.get("identity"), dict)]
    labels = {_scoring_label(versions) for versions in [recorded, *forced]}
    if len(labels) > 1:
        return (f"note: results.jsonl mixes metrics scored with {' and with '.join(sorted(labels))} (sessions resumed "
                f"with --force-resume, see run.json); this code has {_versions_text(current, _SCORING_KEYS)} — run "
                f"`mobility-env eval` to rescore them all with it")
    if all(recorded[key] == current[key] for key in _SCORING_KEYS):
        return None
    return (f"note: reporting the stored metrics of results.jsonl, scored with {_scoring_label(recorded)} when the "
            f"run was made; this code has {_versions_text(current, _SCORING_KEYS)} — run `mobility-env eval` to "
            f"rescore with it")


def _trajectory_dict(item: Any) -> dict[str, Any] | None:
    if not isinstance(item, dict):
        return None
    if isinstance(item.get("record"), dict):
        return item["record"]
    return item if "calls" in item or "finish" in item else None


class _StoredEpisodes(Mapping):
    """The episodes of a built directory by id, each materialized when asked for (an eval of a few episodes reads
    only those), with the directory's sandbox: :func:`rescore_run` scores with its stored evidence."""

    def __init__(self, store: Any):
        self.store, self.sandbox, self._known = store, store.sandbox, frozenset(store.ids)

    def __getitem__(self, episode_id: str) -> Any:
        if episode_id not in self._known:
            raise KeyError(episode_id)
        return self.store.get(episode_id)

    def __iter__(self) -> Iterator[str]:
        return iter(self.store.ids)

    def __len__(self) -> int:
        return len(self.store.ids)


def _load_episodes(data: str | None) -> Mapping[str, Any]:
    from mobility_env.datasource import localize
    from mobility_env.layout import EPISODES_FILE
    from mobility_env.mobilitybench.loaders import load_episodes
    from mobility_env.mobilitybench.store import default_data_path, resolve_data

    path = default_data_path() if data is None else localize(data)
    if path.is_dir() and (path / EPISODES_FILE).exists():
        return _StoredEpisodes(resolve_data(path))
    return {episode.episode_id: episode for episode in load_episodes(path)}


def run_data_path(run_dir: Path, override: str | None) -> tuple[str, str | None]:
    """The data to rescore ``run_dir`` with: ``override`` (a copy of the run's data) or the path
    ``run.json`` recorded; and the fingerprint recorded for it. Refuses rather than guessing."""
    run = read_run_info(run_dir) or {}
    recorded = run.get("data_fingerprint")
    if override is not None:
        return override, recorded
    if not run:
        raise ConfigError(f"{run_dir / RUN_FILE} is missing, so the run's data is unknown; "
                          "pass --data PATH (the data the run was made with)")
    path = run.get("data_path")
    if path is None and run.get("data") is None:  # written before data_path: null means the bundled set
        from mobility_env.mobilitybench.store import default_data_path

        return str(default_data_path()), recorded
    path = path or run.get("data")
    if not Path(cast(str, path)).exists():  # None only in a run.json with a falsy data_path and no data
        raise DataFileError(path, f"the data this run was made with (recorded in {run_dir / RUN_FILE}) is gone; "
                                  "pass --data PATH to a copy of it — nothing was rescored or written")
    return str(path), recorded


def _exclusions(args: argparse.Namespace, episodes: Mapping[str, Any] | None) -> set[str]:
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


def rescore_run(run_dir: Path, episodes: Mapping[str, Any]) -> tuple[list[dict[str, Any]], int]:
    """Results of ``run_dir`` with metrics and verdict recomputed from trajectories; and how many were.

    Each returned record is the latest results line of its (episode_id, sample_index), without
    an embedded ``trajectory``, with ``rescored`` set; one that could not be recomputed (no
    trajectory, or an episode not in ``episodes``) keeps its stored ``metrics`` and ``verdict``.
    """
    from pydantic import ValidationError

    from mobility_env.mobilitybench.trajectory import Trajectory

    latest = {(str(r["episode_id"]), int(r.get("sample_index", 0))): r for r in read_results(run_dir / RESULTS_FILE)}
    sidecar: dict[tuple[str, int], tuple[dict[str, Any], int]] = {}
    for row, item in enumerate(read_jsonl(run_dir / TRAJECTORIES_FILE), 1):
        trajectory = _trajectory_dict(item)
        if trajectory is not None and item.get("episode_id") is not None:
            try:
                sidecar[(str(item["episode_id"]), int(item.get("sample_index", 0)))] = (trajectory, row)
            except (TypeError, ValueError) as exc:
                raise DataFileError(run_dir / TRAJECTORIES_FILE, "sample_index is not an integer", row=row) from exc
    rescored, recomputed = [], 0
    sandbox = getattr(episodes, "sandbox", None)
    for key, record in latest.items():
        record = dict(record)
        embedded = _trajectory_dict(record.get("trajectory"))
        trajectory, source = (embedded, (RESULTS_FILE, None)) if embedded is not None else \
            (sidecar[key][0], (TRAJECTORIES_FILE, sidecar[key][1])) if key in sidecar else (None, None)
        episode = episodes.get(key[0])
        if trajectory is not None and episode is not None:
            assert source is not None  # set together with trajectory
            try:
                parsed = Trajectory.model_validate({**trajectory, "episode_id": key[0]})
            except ValidationError as exc:
                raise DataFileError(run_dir / source[0], f"the trajectory of {key[0]} sample {key[1]} is not a "
                                                         f"recorded trajectory ({exc.error_count()} error(s): "
                                                         f"{exc.errors()[0]['msg']})", row=source[1]) from exc
            if sandbox is not None:  # the responses the run was served, with the evidence its build stored
                sandbox.with_stored_responses(parsed.calls)
            metrics, verdict = score_episode(episode, parsed)
            record["metrics"], record["verdict"] = metrics, verdict.to_dict()
            record.setdefault("input_tokens", parsed.input_tokens)
            record.setdefault("output_tokens", parsed.output_tokens)
            recomputed += 1
        record["rescored"] = trajectory is not None and episode is not None
        record.pop("trajectory", None)
        rescored.append(record)
    return rescored, recomputed


def results_digest(run_dir: Path) -> str:
    """What ``scorecard.json`` was computed from: the digest of ``results.jsonl``."""
    return "blake2b:" + file_checksum(run_dir / RESULTS_FILE)


def write_run_scorecard(run_dir: Path, env_id: str, records: list[dict[str, Any]]) -> Path:
    """``scorecard.json`` at the end of ``run``: the scorecard of the stored metrics (``source.from`` is
    ``"run"``; ``eval`` replaces it with the rescored one, ``source.from`` ``"eval"``)."""
    from mobility_env.suites import suite_of

    suite = suite_of(env_id)
    card = {"env_id": env_id, **suite.part("scoring").card(records), "results": len(records),
            "source": {"from": "run", "results_digest": results_digest(run_dir),
                       "format_versions": {**format_versions(), **suite.part("scoring").format_versions()}}}
    write_text_atomic(run_dir / SCORECARD_FILE, json_text(card, indent=2))
    return run_dir / SCORECARD_FILE


def _made_by_run(run_dir: Path) -> bool:
    """True when ``scorecard.json`` is the one ``run`` wrote (not eval's)."""
    card = read_json_file(run_dir / SCORECARD_FILE)
    source = card.get("source") if isinstance(card, dict) else None
    return isinstance(source, dict) and source.get("from") == "run"


def _checked_run_data(run_dir: Path, results: list[dict[str, Any]], known: set[str], data: str,
                      recorded_fingerprint: str | None, unit: str) -> str:
    """Refuse data that lacks some of the run's episodes (tasks), note data that changed since the run;
    return the data's fingerprint."""
    if not results:
        raise ConfigError(f"{run_dir / RESULTS_FILE}: no results to evaluate")
    foreign = sorted({str(r.get("episode_id")) for r in results} - known)
    if foreign:
        raise ConfigError(f"{len(foreign)} {unit}(s) of this run are not in {data} (e.g. {', '.join(foreign[:3])}): "
                          f"that is not the run's data; pass --data PATH to the data it was made with — "
                          "nothing was rescored or written")
    fingerprint = data_fingerprint(Path(data))
    if recorded_fingerprint and fingerprint != recorded_fingerprint:
        print(f"note: {data} differs from the data the run recorded ({recorded_fingerprint[:19]}…, now "
              f"{fingerprint[:19]}…); every {unit} of the run is in it, so the run is rescored against it",
              file=sys.stderr)
    return fingerprint


def phone_eval(args: argparse.Namespace, run_dir: Path) -> int:
    from mobility_env.mobilepa.tasks import load_tasks

    from .mobilepa.report import phone_failing_checks, rescore_phone_run
    from .mobilepa.scorecard import format_phone_scorecard, phone_scorecard

    if getattr(args, "exclude_audited", False):
        raise ConfigError("--exclude-audited audits MobilityBench episodes; a MobilePA run has none to audit")
    data, recorded_fingerprint = run_data_path(run_dir, args.data)
    tasks = {task.task_id: task for task in load_tasks(data)}
    results, recomputed = rescore_phone_run(run_dir, tasks)
    fingerprint = _checked_run_data(run_dir, results, set(tasks), data, recorded_fingerprint, "task")
    excluded = _exclusions(args, None)
    kept = [r for r in results if str(r.get("episode_id")) not in excluded]
    card = phone_scorecard(kept)
    present = {str(r["episode_id"]) for r in results}
    scorecard = {"env_id": "MobilePA-v0", **card, "excluded": sorted(excluded & present),
                 "recomputed": recomputed, "results": len(results),
                 "source": {"from": "eval", "data": str(Path(data).resolve()), "data_fingerprint": fingerprint,
                            "results_digest": results_digest(run_dir)}}
    print(format_phone_scorecard(card))
    failing = phone_failing_checks(kept)
    for bucket, checks in failing.items():
        print(f"most frequent failing checks ({bucket}): "
              + ", ".join(f"{name} ({count})" for name, count in list(checks.items())[:5]))
    write_text_atomic(run_dir / EVAL_RESULTS_FILE, "".join(json_line(record) for record in results))
    write_text_atomic(run_dir / SCORECARD_FILE, json_text(scorecard, indent=2))
    print(f"recomputed {recomputed}/{len(results)} results from trajectories; "
          f"wrote {run_dir / SCORECARD_FILE} and {run_dir / EVAL_RESULTS_FILE}")
    return 0


def phone_report(run_dir: Path, run: dict[str, Any]) -> int:
    from .mobilepa.html import write_phone_html
    from .mobilepa.report import phone_failing_checks, write_phone_report
    from .mobilepa.scorecard import phone_scorecard

    stored = current_scorecard(run_dir)
    records = report_records(run_dir)
    if not records:
        raise ConfigError(f"{run_dir / RESULTS_FILE}: no results to report")
    excluded = set(stored.get("excluded") or []) if stored is not None else set()
    kept = [r for r in records if str(r.get("episode_id")) not in excluded]
    card, failing = phone_scorecard(kept), phone_failing_checks(kept)
    files = write_phone_report(run_dir, card, failing, run)
    present = {str(r.get("episode_id")) for r in records}
    html = write_phone_html(run_dir, card, records, failing, run, excluded=excluded & present,
                            rescored=stored is not None)
    print(f"wrote {files.markdown} and {files.json}" + "".join(f", {p}" for p in files.charts))
    print(f"wrote {html}: the scorecard, charts and every task in one page (open it in a browser)")
    if files.chart_note:
        print(files.chart_note)
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    from mobility_env.suites import suite_of_run

    run_dir = existing_run_dir(args.run_dir)
    return int(suite_of_run(read_run_info(run_dir)).part("scoring").evaluate(args, run_dir))


def mobility_eval(args: argparse.Namespace, run_dir: Path) -> int:
    """``eval`` of a MobilityBench-v0 run (rescored against its data, scorecard and eval results written)."""
    data, recorded_fingerprint = run_data_path(run_dir, args.data)
    episodes = _load_episodes(data)
    results, recomputed = rescore_run(run_dir, episodes)
    fingerprint = _checked_run_data(run_dir, results, set(episodes), data, recorded_fingerprint, "episode")
    run_info = read_run_info(run_dir)
    scorecard = build_scorecard(results, exclude=_exclusions(args, episodes))
    scorecard["recomputed"] = recomputed
    scorecard["results"] = len(results)
    scorecard["source"] = {"from": "eval", "data": str(Path(data).resolve()), "data_fingerprint": fingerprint,
                           "results_digest": results_digest(run_dir), "format_versions": format_versions(),
                           "run_format_versions": recorded_versions(run_info)}
    note = rescore_note(run_info)
    if note:
        print(note, file=sys.stderr)
    print(format_scorecard(scorecard))
    # every check of every scenario (top=None), so the overall counts are exact
    top = _overall_failing(failing_checks(results, exclude=scorecard.get("excluded") or (), top=None))
    if top:
        print("most frequent failing checks: " + ", ".join(f"{name} ({count})" for name, count in top))
    write_text_atomic(run_dir / EVAL_RESULTS_FILE, "".join(json_line(record) for record in results))
    write_text_atomic(run_dir / SCORECARD_FILE, json_text(scorecard, indent=2))
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


def current_scorecard(run_dir: Path) -> dict[str, Any] | None:
    """``scorecard.json`` when ``eval`` computed it from the current ``results.jsonl``, else None."""
    scorecard = read_json_file(run_dir / SCORECARD_FILE)
    if not isinstance(scorecard, dict) or not (run_dir / EVAL_RESULTS_FILE).exists():
        return None
    source = cast(dict, scorecard.get("source") if isinstance(scorecard.get("source"), dict) else {})
    if source.get("results_digest") != results_digest(run_dir):
        return None  # made before the run was resumed (or by an older version): stale
    return scorecard


def report_records(run_dir: Path) -> list[dict[str, Any]]:
    """The records the report's failing-checks section reads: eval's output when it is current."""
    if current_scorecard(run_dir) is not None:
        return read_results(run_dir / EVAL_RESULTS_FILE)
    return read_results(run_dir / RESULTS_FILE)


def cmd_report(args: argparse.Namespace) -> int:
    from mobility_env.suites import suite_of_run

    run_dir = existing_run_dir(args.run_dir)
    run_info = read_run_info(run_dir)
    return int(suite_of_run(run_info).part("scoring").report(run_dir, run_info or {}))


def mobility_report(run_dir: Path, run_info: dict[str, Any]) -> int:
    """``report`` of a MobilityBench-v0 run."""
    scorecard = current_scorecard(run_dir)
    from_eval = scorecard is not None
    records = report_records(run_dir)
    if not records:
        raise ConfigError(f"{run_dir / RESULTS_FILE}: no results to report")
    if scorecard is None:
        if (run_dir / SCORECARD_FILE).exists() and not _made_by_run(run_dir):
            print(f"note: {run_dir / SCORECARD_FILE} does not match the current results (the run went on after "
                  "`eval`); reporting the stored metrics — run `mobility-env eval` again to rescore", file=sys.stderr)
        scorecard = build_scorecard(records)
    failing = failing_checks(records, exclude=scorecard.get("excluded") or ())
    run = read_run_info(run_dir)
    note = report_version_note(run, scorecard if from_eval else None)
    if note:
        print(note, file=sys.stderr)
    files = write_report(run_dir, scorecard, failing=failing, run=run)
    html = write_mobility_html(run_dir, scorecard, records, failing, run, rescored=from_eval)
    print(f"wrote {files.markdown} and {files.json}" + "".join(f", {p}" for p in files.charts))
    print(f"wrote {html}: the scorecard, charts and every episode in one page (open it in a browser)")
    if files.chart_note:
        print(files.chart_note)
    return 0


def cmd_audit(args: argparse.Namespace) -> int:
    from mobility_env.mobilitybench.loaders import load_episodes

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
    evaluate = subparsers.add_parser("eval",
                                     help="recompute metrics of a run from its trajectories; print the scorecard",
                                     description="Recompute every metric and verdict from RUN_DIR/results.jsonl "
                                                 "(+ trajectories.jsonl) against the run's own data (recorded in "
                                                 "RUN_DIR/run.json), print the scorecard and write "
                                                 "RUN_DIR/scorecard.json and RUN_DIR/eval_results.jsonl. Refuses, "
                                                 "writing nothing, when that data is gone or is not the run's. "
                                                 "Rescores with this code's reward and verdict versions; a note "
                                                 "says so when run.json records others.")
    evaluate.add_argument("run_dir", help="run directory holding results.jsonl")
    evaluate.add_argument("--data", default=None, help="a copy of the run's data, when the recorded path moved "
                                                       "(default: the data recorded in run.json)")
    evaluate.add_argument("--exclude-audited", action="store_true",
                          help="leave out episodes with blocking audit findings")
    evaluate.add_argument("--exclude-ids", default=None, help="file with episode ids to leave out, one per line")
    evaluate.set_defaults(func=cmd_eval)

    report = subparsers.add_parser("report", help="write report.md, report.json, report.html and charts for a run",
                                   description="Render RUN_DIR/scorecard.json (when `eval` computed it from the "
                                               "current results; else the stored metrics) as Markdown, JSON, PNG "
                                               "charts (overall, a radar, per intent family; need matplotlib: pip "
                                               "install 'mobility-env[plot]') and report.html, one self-contained "
                                               "page with the charts and an episode browser (every episode's "
                                               "query, tool calls, answer and verdict checks, filtered by scenario "
                                               "and verdict), with the run's agent, model, data and load report "
                                               "from run.json and the most frequent failing checks per task "
                                               "scenario. A note names the reward and verdict versions the metrics "
                                               "were scored with when they are not this code's.")
    report.add_argument("run_dir", help="run directory holding results.jsonl")
    report.set_defaults(func=cmd_report)

    audit = subparsers.add_parser("audit", help="list episodes whose gold labels are self-inconsistent",
                                  description="Flag gold labels that contradict themselves or lack evidence.")
    audit.add_argument("data", help="official CSV/XLSX/JSONL file, episodes Parquet or built directory")
    audit.add_argument("--json", action="store_true", help="print findings as JSON")
    audit.set_defaults(func=cmd_audit)
