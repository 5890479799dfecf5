"""The files of a run directory, shared by the writer (``mobility_agents.runner``) and the readers
(``mobility-env eval/report/export``).

``results.jsonl`` and ``trajectories.jsonl`` are append-only: one JSON line per finished
(episode_id, sample_index). A line cut by a crash can only be the last one; it is dropped
(and, with ``repair``, removed). A key may appear more than once only when a failed episode
was re-run (``mobility-env run --resume --retry-failed``): the **last** line wins.

A results line carries ``verdict`` (``mobility_rewards.verdict.Verdict.to_dict()``) since verdicts
were introduced; lines of older runs lack it (or hold ``null`` for a worker error) and read
the same: readers treat a missing verdict as "not recorded", never as a failure.
``mobility-env eval`` writes its recomputed lines to ``eval_results.jsonl`` (same format)
and never rewrites ``results.jsonl``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .errors import DataFileError

RESULTS_FILE = "results.jsonl"
TRAJECTORIES_FILE = "trajectories.jsonl"
RUN_FILE = "run.json"
EVAL_RESULTS_FILE = "eval_results.jsonl"


def read_jsonl(path: Path, *, repair: bool = False) -> list[dict[str, Any]]:
    """Every complete line of ``path`` (missing file = no lines); a bad line elsewhere raises."""
    path = Path(path)
    if not path.exists():
        return []
    records, good_bytes = [], 0
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, 1):
            complete = raw.endswith(b"\n")
            try:
                record = json.loads(raw) if raw.strip() else None
            except json.JSONDecodeError as exc:
                if complete:
                    raise DataFileError(path, f"not JSON ({exc.msg}); fix or remove the line", row=number) from exc
                break  # the last line was cut by a crash
            if not complete:
                break
            if record is not None:
                records.append(record)
            good_bytes += len(raw)
    if repair and good_bytes != path.stat().st_size:
        with path.open("r+b") as handle:
            handle.truncate(good_bytes)
    return records


def record_key(record: dict[str, Any]) -> tuple[str, int]:
    return record["episode_id"], int(record.get("sample_index", 0))


def latest_by_key(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One record per (episode_id, sample_index): the last one, in first-seen order."""
    latest: dict[tuple[str, int], dict[str, Any]] = {}
    for record in records:
        latest[record_key(record)] = record  # a dict keeps a key's first position
    return list(latest.values())


def read_results(path: Path, *, repair: bool = False) -> list[dict[str, Any]]:
    """The results of a run: ``read_jsonl`` then ``latest_by_key``."""
    return latest_by_key(read_jsonl(path, repair=repair))
