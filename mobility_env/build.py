"""Compile episodes into a built directory: ``episodes.parquet`` + ``sandbox.parquet``.

The writer. The directory format (file names, schemas, ``manifest.json``, the checks every
reader runs) is :mod:`mobility_env.layout`; the derived files (Arrow copies, replay index) are
written by :func:`mobility_env.replay_index.write_replay_index`, which :func:`build_directory`
calls last. This module also holds the row encoding (:func:`sandbox_rows`,
:func:`episode_row`) and its inverse (:func:`episode_from_record`,
:func:`recorded_call_from_entry`): responses are stored as JSON text (never Python reprs),
keys in the canonical form of :mod:`mobility_env.canonical`, so a lookup needs no parsing of
the table.

The names of :mod:`mobility_env.layout` (``EPISODES_SCHEMA``, ``MANIFEST_FILE``,
``check_built_directory``, ``record_files``, the warning classes, ...) are also importable from
here, as they were before the format had its own module.
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
from .errors import CorruptDataError, DuplicateEpisodeError
from .layout import (CHECKSUM, EPISODES_FILE, EPISODES_SCHEMA, FORMAT_VERSION, MANIFEST_FILE, SANDBOX_FILE,
                     SANDBOX_SCHEMA, SOURCE_FILES, DerivedFileWarning, DirectoryCheck, FormatVersionWarning,
                     UnverifiedDataWarning, check_built_directory, file_checksum, file_entry, read_manifest,
                     record_files, warn_once, write_manifest)
from .replay_index import write_replay_index
from .tools import validate_call

__all__ = [
    # the writer and the row encoding
    "build_directory", "sandbox_rows", "episode_row", "episode_from_record", "recorded_call_from_entry",
    "RecordDecodeError",
    # mobility_env.layout, re-exported: importing them from here keeps working
    "CHECKSUM", "EPISODES_FILE", "EPISODES_SCHEMA", "FORMAT_VERSION", "MANIFEST_FILE", "SANDBOX_FILE",
    "SANDBOX_SCHEMA", "SOURCE_FILES", "DerivedFileWarning", "DirectoryCheck", "FormatVersionWarning",
    "UnverifiedDataWarning", "check_built_directory", "file_checksum", "file_entry", "read_manifest",
    "record_files", "warn_once", "write_manifest",
]


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


class RecordDecodeError(ValueError):
    """A row of a built file does not decode; ``column`` names the cell when one is to blame."""

    def __init__(self, column: str | None, message: str):
        super().__init__(message)
        self.column = column


_JSON_COLUMNS = ("context", "gold_calls", "gold_slots", "fields", "repairs")


def episode_from_record(record: dict[str, Any], recorded: list[RecordedCall]) -> Episode:
    """The inverse of :func:`episode_row`: an Episode from one episodes row plus its recorded calls.

    Raises :class:`RecordDecodeError` (naming the column) for a row that is not one
    :func:`episode_row` wrote.
    """
    decoded: dict[str, Any] = {}
    for column in _JSON_COLUMNS:
        try:
            decoded[column] = json.loads(record[column])
        except (TypeError, ValueError, KeyError) as exc:
            raise RecordDecodeError(column, f"not the JSON text a build writes ({type(exc).__name__}: {exc})") from exc
    try:
        return Episode(
            episode_id=record["episode_id"], query=record["query"], context=decoded["context"],
            task_scenario=record["task_scenario"], intent_family=record["intent_family"],
            gold_calls=[ToolCall(**c) for c in decoded["gold_calls"]], recorded=recorded,
            gold_slots=decoded["gold_slots"], fields=decoded["fields"],
            repairs=[Repair(**r) for r in decoded["repairs"]], source=record["source"], row=record["row"])
    except (TypeError, ValueError, KeyError) as exc:  # pydantic's ValidationError is a ValueError
        raise RecordDecodeError(None, f"not an episode record ({type(exc).__name__}: {str(exc)[:300]})") from exc


def recorded_call_from_entry(entry: dict[str, Any]) -> RecordedCall:
    """One sandbox row (``tool, arguments, response, source_column, gold_index, truncated``) as a call.

    Raises :class:`RecordDecodeError` naming the column that does not decode.
    """
    values: dict[str, Any] = {}
    for column in ("arguments", "response"):
        try:
            values[column] = json.loads(entry[column])
        except (TypeError, ValueError, KeyError) as exc:
            raise RecordDecodeError(column, f"not the JSON text a build writes ({type(exc).__name__}: {exc})") from exc
    gold = entry.get("gold_index")
    if not isinstance(gold, int):
        raise RecordDecodeError("gold_index", f"expected an integer, got {gold!r:.40}")
    try:
        return RecordedCall(name=entry["tool"], arguments=values["arguments"], response=values["response"],
                            source_column=entry["source_column"], gold_index=None if gold < 0 else gold,
                            truncated=entry["truncated"])
    except (TypeError, ValueError, KeyError) as exc:
        raise RecordDecodeError(None, f"not a sandbox record ({type(exc).__name__}: {str(exc)[:300]})") from exc


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
            columns, self.columns = self.columns, {name: [] for name in self.schema.names}
            self.writer.write_table(pa.table(columns, schema=self.schema))

    def close(self) -> None:
        self.flush()
        self.writer.close()


def build_directory(episodes: Iterable[Episode], out_dir: str | os.PathLike, *, source: str = "",
                    report: dict[str, Any] | None = None, flush_rows: int = 20_000) -> Path:
    """Write a built directory from episodes (streamed: memory stays flat at any size).

    Episode ids must be unique; a duplicate raises :class:`DuplicateEpisodeError` (a
    ValueError) naming both source rows. Files are first written under temporary names and
    renamed at the end, so an interrupted build never leaves a half-written directory that
    looks complete; the manifest records every file's size and checksum last.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tmp_episodes, tmp_sandbox = out / (EPISODES_FILE + ".tmp"), out / (SANDBOX_FILE + ".tmp")
    episodes_buf = _ColumnBuffer(tmp_episodes, EPISODES_SCHEMA, flush_rows)
    sandbox_buf = _ColumnBuffer(tmp_sandbox, SANDBOX_SCHEMA, flush_rows * 4)
    seen: dict[str, str] = {}
    scenarios: dict[str, int] = {}
    try:
        try:
            for episode in episodes:
                where = f"{episode.source}:{episode.row}"
                if episode.episode_id in seen:
                    raise DuplicateEpisodeError(episode.source or out, f"duplicate episode_id {episode.episode_id} at "
                                                f"{where} (first at {seen[episode.episode_id]})", row=episode.row)
                seen[episode.episode_id] = where
                start = sandbox_buf.count
                for row in sandbox_rows(episode):
                    sandbox_buf.add(row)
                episodes_buf.add(episode_row(episode, start, sandbox_buf.count))
                scenarios[episode.task_scenario] = scenarios.get(episode.task_scenario, 0) + 1
            episodes_buf.flush()
            sandbox_buf.flush()
        except UnicodeEncodeError as exc:  # raised when a batch is written; load_episodes rejects such rows itself
            raise CorruptDataError(out, f"an episode holds text that is not valid UTF-8 ({exc}); load the source with "
                                        f"load_episodes, which rejects such rows with their file, row and "
                                        f"column") from exc
    except BaseException:
        episodes_buf.close()
        sandbox_buf.close()
        tmp_episodes.unlink(missing_ok=True)
        tmp_sandbox.unlink(missing_ok=True)
        raise
    episodes_buf.close()
    sandbox_buf.close()
    # a manifest of an earlier build must not vouch for the files written now
    (out / MANIFEST_FILE).unlink(missing_ok=True)
    os.replace(tmp_episodes, out / EPISODES_FILE)
    os.replace(tmp_sandbox, out / SANDBOX_FILE)
    write_manifest(out, {
        "format_version": FORMAT_VERSION, "source": source, "episodes": episodes_buf.count,
        "sandbox_entries": sandbox_buf.count, "scenarios": dict(sorted(scenarios.items())),
        "load_report": report or {},
    })
    write_replay_index(out)  # writes the derived files, then records every file's checksum in the manifest
    return out
