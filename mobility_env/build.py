"""Compile episodes into a built directory: ``episodes.parquet`` + ``sandbox.parquet``.

Layout of a built directory::

    DIR/episodes.parquet   one row per episode (EPISODES_SCHEMA), in load order
    DIR/sandbox.parquet    one row per recorded call (SANDBOX_SCHEMA); the entries of one
                           episode are contiguous: rows [sandbox_start, sandbox_stop)
    DIR/manifest.json      format version, counts, source, load report
    DIR/sandbox.arrow, DIR/episodes.arrow, DIR/sandbox_index/
                           the same rows uncompressed for memory-mapping, and the replay index
                           (``mobility_env.replay_index``); derived, optional, rebuilt from the
                           Parquet files by ``write_replay_index(DIR)``

Responses are stored as JSON text (never Python reprs), keys in the canonical form of
``mobility_env.canonical``, so a lookup needs no parsing of the table.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterable

import pyarrow as pa
import pyarrow.parquet as pq

from .canonical import canonical_request
from .episode import Episode, RecordedCall, Repair, ToolCall
from .tools import validate_call

FORMAT_VERSION = 1
EPISODES_FILE = "episodes.parquet"
SANDBOX_FILE = "sandbox.parquet"
MANIFEST_FILE = "manifest.json"

EPISODES_SCHEMA = pa.schema([
    ("episode_id", pa.string()),
    ("task_scenario", pa.string()),
    ("intent_family", pa.string()),
    ("query", pa.string()),
    ("context", pa.string()),          # JSON object
    ("gold_calls", pa.string()),       # JSON list of {"name", "arguments"}
    ("gold_slots", pa.string()),       # JSON object
    ("fields", pa.string()),           # JSON object: every other official column
    ("repairs", pa.string()),          # JSON list of {"column", "kind", "detail"}
    ("source", pa.string()),
    ("row", pa.int64()),
    ("sandbox_start", pa.int64()),
    ("sandbox_stop", pa.int64()),
])

SANDBOX_SCHEMA = pa.schema([
    ("episode_id", pa.string()),
    ("tool", pa.string()),
    ("arguments", pa.string()),        # JSON object, as recorded
    ("key", pa.string()),              # canonical exact-match key
    ("name", pa.string()),             # canonical name for fuzzy matching ('' if none)
    ("city", pa.string()),
    ("options", pa.string()),          # strategy / forecast options that must match exactly
    ("points", pa.string()),           # 'lng,lat;lng,lat' canonical points for nearest matching
    ("lng", pa.float64()),             # first point (NaN if none), indexed for the nearest stage
    ("lat", pa.float64()),
    ("response", pa.string()),         # JSON
    ("source_column", pa.string()),
    ("gold_index", pa.int32()),        # -1 for recorded alternatives
    ("truncated", pa.bool_()),
    ("valid", pa.bool_()),             # recorded arguments pass the tool schema
])


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=False, separators=(",", ":"))


def sandbox_rows(episode: Episode) -> list[dict[str, Any]]:
    """The sandbox rows of one episode (every recorded call, gold first)."""
    rows = []
    for call in episode.recorded:
        valid = not validate_call(call.name, call.arguments)
        req = canonical_request(call.name, call.arguments if valid else {})
        first = req.points[0] if req.points else (float("nan"), float("nan"))
        rows.append({
            "episode_id": episode.episode_id, "tool": call.name, "arguments": _dumps(call.arguments),
            "key": req.key if valid else "", "name": req.name, "city": req.city, "options": req.options,
            "points": ";".join(f"{lng:.6f},{lat:.6f}" for lng, lat in req.points),
            "lng": first[0], "lat": first[1], "response": _dumps(call.response),
            "source_column": call.source_column, "gold_index": -1 if call.gold_index is None else call.gold_index,
            "truncated": call.truncated, "valid": valid,
        })
    return rows


def episode_row(episode: Episode, start: int, stop: int) -> dict[str, Any]:
    return {
        "episode_id": episode.episode_id, "task_scenario": episode.task_scenario,
        "intent_family": episode.intent_family, "query": episode.query, "context": _dumps(episode.context),
        "gold_calls": _dumps([c.model_dump() for c in episode.gold_calls]), "gold_slots": _dumps(episode.gold_slots),
        "fields": _dumps(episode.fields), "repairs": _dumps([r.model_dump() for r in episode.repairs]),
        "source": episode.source, "row": episode.row, "sandbox_start": start, "sandbox_stop": stop,
    }


def episode_from_record(record: dict[str, Any], recorded: list[RecordedCall]) -> Episode:
    """The inverse of :func:`episode_row`: an Episode from one episodes row plus its recorded calls."""
    return Episode(
        episode_id=record["episode_id"], query=record["query"], context=json.loads(record["context"]),
        task_scenario=record["task_scenario"], intent_family=record["intent_family"],
        gold_calls=[ToolCall(**c) for c in json.loads(record["gold_calls"])], recorded=recorded,
        gold_slots=json.loads(record["gold_slots"]), fields=json.loads(record["fields"]),
        repairs=[Repair(**r) for r in json.loads(record["repairs"])], source=record["source"], row=record["row"])



class _ColumnBuffer:
    """Accumulates rows column-wise and flushes row groups to a ParquetWriter."""

    def __init__(self, path: Path, schema: pa.Schema, flush_rows: int):
        self.schema = schema
        self.writer = pq.ParquetWriter(str(path), schema, compression="zstd")
        self.columns: dict[str, list] = {name: [] for name in schema.names}
        self.flush_rows = flush_rows
        self.count = 0

    def add(self, row: dict[str, Any]) -> None:
        for name, column in self.columns.items():
            column.append(row[name])
        self.count += 1
        if len(self.columns["episode_id"]) >= self.flush_rows:
            self.flush()

    def flush(self) -> None:
        if self.columns["episode_id"]:
            self.writer.write_table(pa.table(self.columns, schema=self.schema))
            self.columns = {name: [] for name in self.schema.names}

    def close(self) -> None:
        self.flush()
        self.writer.close()


def build_directory(episodes: Iterable[Episode], out_dir: str | os.PathLike, *, source: str = "",
                    report: dict[str, Any] | None = None, flush_rows: int = 20_000) -> Path:
    """Write a built directory from episodes (streamed: memory stays flat at any size).

    Episode ids must be unique; a duplicate raises ValueError naming both source rows.
    Files are first written under temporary names and renamed at the end, so an
    interrupted build never leaves a half-written directory that looks complete.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tmp_episodes, tmp_sandbox = out / (EPISODES_FILE + ".tmp"), out / (SANDBOX_FILE + ".tmp")
    episodes_buf = _ColumnBuffer(tmp_episodes, EPISODES_SCHEMA, flush_rows)
    sandbox_buf = _ColumnBuffer(tmp_sandbox, SANDBOX_SCHEMA, flush_rows * 4)
    seen: dict[str, str] = {}
    scenarios: dict[str, int] = {}
    try:
        for episode in episodes:
            where = f"{episode.source}:{episode.row}"
            if episode.episode_id in seen:
                raise ValueError(f"duplicate episode_id {episode.episode_id} at {where} (first at {seen[episode.episode_id]})")
            seen[episode.episode_id] = where
            start = sandbox_buf.count
            for row in sandbox_rows(episode):
                sandbox_buf.add(row)
            episodes_buf.add(episode_row(episode, start, sandbox_buf.count))
            scenarios[episode.task_scenario] = scenarios.get(episode.task_scenario, 0) + 1
    finally:
        episodes_buf.close()
        sandbox_buf.close()
    os.replace(tmp_episodes, out / EPISODES_FILE)
    os.replace(tmp_sandbox, out / SANDBOX_FILE)
    from .replay_index import write_replay_index  # imports build: deferred

    write_replay_index(out)
    manifest = {
        "format_version": FORMAT_VERSION, "source": source, "episodes": episodes_buf.count,
        "sandbox_entries": sandbox_buf.count, "scenarios": dict(sorted(scenarios.items())),
        "load_report": report or {},
    }
    (out / MANIFEST_FILE).write_text(json.dumps(manifest, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return out
