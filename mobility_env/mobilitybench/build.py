"""Compile episodes into a built directory: ``episodes.parquet`` + ``sandbox.parquet``.

The writer. The directory format (file names, schemas, ``manifest.json``, the checks every
reader runs) is :mod:`mobility_env.layout`; the derived files (Arrow copies, replay index) are
written by :func:`mobility_env.mobilitybench.index_build.write_replay_index`, which :func:`build_directory`
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
from typing import Any, Iterable, Iterator, Protocol

import pyarrow as pa
import pyarrow.parquet as pq

from ..canonical import CanonicalRequest, canonical_request
from .episode import Episode, RecordedCall, new_episode, new_recorded_call, new_repair, new_tool_call
from ..errors import CorruptDataError, DuplicateEpisodeError
from ..layout import (CHECKSUM, EPISODES_FILE, EPISODES_SCHEMA, FORMAT_VERSION, MANIFEST_FILE, SANDBOX_FILE,
                      SANDBOX_SCHEMA, SOURCE_FILES, DerivedFileWarning, DirectoryCheck, FormatVersionWarning,
                      UnverifiedDataWarning, check_built_directory, file_checksum, file_entry, read_manifest,
                      record_files, warn_once, write_manifest)
from .index_build import write_replay_index
from ..tools import validate_call
from ..trajectory import LazyJSON

__all__ = [
    # the writer and the row encoding
    "build_directory", "sandbox_rows", "sandbox_row", "episode_row", "episode_from_record",
    "recorded_call_from_entry", "RecordDecodeError", "GlobalRows", "GLOBAL_EPISODE_ID",
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
    return [sandbox_row(episode.episode_id, call.name, call.arguments, _dumps(call.response),
                        source_column=call.source_column, gold_index=call.gold_index, truncated=call.truncated)
            for call in episode.recorded]


#: ``episode_id`` of the rows that belong to no episode (:func:`build_directory`'s ``global_rows``):
#: no episode's span holds them, so only the sandbox's global stage serves them.
GLOBAL_EPISODE_ID = ""


def sandbox_row(episode_id: str, tool: str, arguments: Any, response_text: str, *, source_column: str,
                gold_index: int | None = None, truncated: bool = False,
                request: CanonicalRequest | None = None) -> dict[str, Any]:
    """One sandbox row (``SANDBOX_SCHEMA``) for a recorded call whose response is already JSON text.

    ``request``: the call's canonical request when the caller validated the arguments and
    computed it already (the row is then ``valid``); otherwise the arguments are validated here
    and an invalid call gets an empty key (stored, never served by the exact stage).
    """
    valid = request is not None or not validate_call(tool, arguments)
    req = request if request is not None else canonical_request(tool, arguments if valid else {})
    first = req.points[0] if req.points else (float("nan"), float("nan"))
    return {
        "episode_id": episode_id, "tool": tool, "arguments": _dumps(arguments),
        "key": req.key if valid else "", "name": req.name, "city": req.city, "options": req.options,
        "points": ";".join(f"{lng:.6f},{lat:.6f}" for lng, lat in req.points),
        "lng": first[0], "lat": first[1], "response": response_text,
        "source_column": source_column, "gold_index": -1 if gold_index is None else gold_index,
        "truncated": truncated, "valid": valid,
    }


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
    :func:`episode_row` wrote. The types are checked here and the models built without pydantic's
    validation (a reset materializes one episode; this is most of its cost otherwise).
    """
    decoded: dict[str, Any] = {}
    for column in _JSON_COLUMNS:
        try:
            decoded[column] = json.loads(record[column])
        except (TypeError, ValueError, KeyError) as exc:
            raise RecordDecodeError(column, f"not the JSON text a build writes ({type(exc).__name__}: {exc})") from exc
    try:
        for column in ("context", "gold_slots", "fields"):
            _object(decoded[column], column)
        gold_calls = [new_tool_call(name=_text(_object(c, "gold_calls").get("name"), "gold_calls"),
                                    arguments=_object(c.get("arguments", {}), "gold_calls"))
                      for c in _list(decoded["gold_calls"], "gold_calls")]
        repairs = [new_repair(column=_text(r.get("column"), "repairs"), kind=_text(r.get("kind"), "repairs"),
                              detail=_text(r.get("detail", ""), "repairs"))
                   for r in (_object(item, "repairs") for item in _list(decoded["repairs"], "repairs"))]
        row = record["row"]
        if row is not None and (isinstance(row, bool) or not isinstance(row, int)):
            raise RecordDecodeError("row", f"expected an integer, got {row!r:.40}")
        return new_episode(
            episode_id=_text(record["episode_id"], "episode_id"), query=_text(record["query"], "query"),
            context=decoded["context"], task_scenario=_text(record["task_scenario"], "task_scenario"),
            intent_family=_text(record["intent_family"], "intent_family"), gold_calls=gold_calls, recorded=recorded,
            gold_slots=decoded["gold_slots"], fields=decoded["fields"], repairs=repairs,
            source=_text(record["source"], "source"), row=row)
    except KeyError as exc:
        raise RecordDecodeError(None, f"not an episode record (no {exc})") from exc


def _list(value: Any, column: str) -> list[Any]:
    if not isinstance(value, list):
        raise RecordDecodeError(column, f"expected a JSON array, got {type(value).__name__}")
    return value


def recorded_call_from_entry(entry: dict[str, Any], where: tuple[Any, int | None] | None = None) -> RecordedCall:
    """One sandbox row (``tool, arguments, response, source_column, gold_index, truncated``) as a call.

    Raises :class:`RecordDecodeError` naming the column that does not decode. With ``where`` =
    (file, row) the response (its text, a function reading it, or a LazyJSON) is kept undecoded
    (:class:`~mobility_env.trajectory.LazyJSON`),
    decoded on first read; a text that does not decode then raises
    :class:`~mobility_env.errors.CorruptDataError` naming that file, row and column.
    """
    values: dict[str, Any] = {}
    for column in ("arguments",) if where is not None else ("arguments", "response"):
        try:
            values[column] = json.loads(entry[column])
        except (TypeError, ValueError, KeyError) as exc:
            raise RecordDecodeError(column, f"not the JSON text a build writes ({type(exc).__name__}: {exc})") from exc
    if where is not None:
        text = entry.get("response")
        if isinstance(text, LazyJSON):
            values["response"] = text
        elif isinstance(text, str) or callable(text):
            values["response"] = LazyJSON(text, (where[0], where[1], "response"))
        else:
            raise RecordDecodeError("response", f"expected JSON text, got {type(text).__name__}")
    gold = entry.get("gold_index")
    if not isinstance(gold, int):
        raise RecordDecodeError("gold_index", f"expected an integer, got {gold!r:.40}")
    try:
        return new_recorded_call(
            name=_text(entry["tool"], "tool"), arguments=_object(values["arguments"], "arguments"),
            response=values["response"], source_column=_text(entry["source_column"], "source_column"),
            gold_index=None if gold < 0 else gold, truncated=bool(entry["truncated"]))
    except KeyError as exc:
        raise RecordDecodeError(None, f"not a sandbox record (no {exc})") from exc


def _text(value: Any, column: str) -> str:
    if not isinstance(value, str):
        raise RecordDecodeError(column, f"expected text, got {type(value).__name__}")
    return value


def _object(value: Any, column: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise RecordDecodeError(column, f"expected a JSON object, got {type(value).__name__}")
    return value


class _ColumnBuffer:
    """Accumulates rows column-wise and flushes row groups to a ParquetWriter.

    A row group is written every ``flush_rows`` rows or once its text columns hold
    ``flush_chars`` characters, whichever comes first: memory stays bounded however large the
    responses are (an official driving-route file holds ~10-30 kB per response).
    """

    def __init__(self, path: Path, schema: pa.Schema, flush_rows: int, flush_chars: int = 8 << 20):
        self.schema = schema
        self.writer = pq.ParquetWriter(str(path), schema, compression="zstd")
        self.columns: dict[str, list] = {name: [] for name in schema.names}
        self.text_columns = [name for name in schema.names if schema.field(name).type == pa.string()]
        self.flush_rows = flush_rows
        self.flush_chars = flush_chars
        self.chars = 0
        self.count = 0

    def add(self, row: dict[str, Any]) -> None:
        for name, column in self.columns.items():
            column.append(row[name])
        self.count += 1
        self.chars += sum(len(row[name] or "") for name in self.text_columns)
        if self.chars >= self.flush_chars or len(self.columns["episode_id"]) >= self.flush_rows:
            self.flush()

    def flush(self) -> None:
        if self.columns["episode_id"]:
            columns, self.columns = self.columns, {name: [] for name in self.schema.names}
            self.chars = 0
            self.writer.write_table(pa.table(columns, schema=self.schema))

    def close(self) -> None:
        self.flush()
        self.writer.close()


class GlobalRows(Protocol):
    """Sandbox rows that belong to no episode, e.g. an official replay cache
    (:class:`mobility_env.mobilitybench.official_sandbox.OfficialSandboxImport`): iterated once by
    :func:`build_directory`, then asked what to record in ``manifest.json``."""

    def __iter__(self) -> Iterator[dict[str, Any]]: ...

    def manifest_entry(self) -> dict[str, Any]: ...


def build_directory(episodes: Iterable[Episode], out_dir: str | os.PathLike, *, source: str = "",
                    report: dict[str, Any] | None = None, flush_rows: int = 20_000,
                    global_rows: GlobalRows | None = None) -> Path:
    """Write a built directory from episodes (streamed: memory stays flat at any size).

    Episode ids must be unique; a duplicate raises :class:`DuplicateEpisodeError` (a
    ValueError) naming both source rows. Files are first written under temporary names and
    renamed at the end, so an interrupted build never leaves a half-written directory that
    looks complete; the manifest records every file's size and checksum last.

    ``global_rows``: sandbox rows (``SANDBOX_SCHEMA`` dicts, ``episode_id`` =
    :data:`GLOBAL_EPISODE_ID`) written after every episode's rows. No episode span holds them,
    so the sandbox serves them only in its global stage (exact, fuzzy, nearest), and there
    every tie goes to the lowest row: an episode's own recorded call is never shadowed by them.
    The manifest records their count (``global_rows``) and ``global_rows.manifest_entry()``
    (under ``sandbox_import``).
    """
    out = Path(out_dir)
    created = not out.exists()
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
            episode_rows = sandbox_buf.count
            for row in global_rows if global_rows is not None else ():
                sandbox_buf.add(row)
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
        if created:  # a folder made for this build, left empty: remove it (never one that holds anything)
            try:
                out.rmdir()
            except OSError:
                pass
        raise
    episodes_buf.close()
    sandbox_buf.close()
    # a manifest of an earlier build must not vouch for the files written now
    (out / MANIFEST_FILE).unlink(missing_ok=True)
    os.replace(tmp_episodes, out / EPISODES_FILE)
    os.replace(tmp_sandbox, out / SANDBOX_FILE)
    manifest: dict[str, Any] = {
        "format_version": FORMAT_VERSION, "source": source, "episodes": episodes_buf.count,
        "sandbox_entries": sandbox_buf.count, "scenarios": dict(sorted(scenarios.items())),
        "load_report": report or {},
    }
    if global_rows is not None:
        manifest["global_rows"] = sandbox_buf.count - episode_rows
        manifest["sandbox_import"] = global_rows.manifest_entry()
    write_manifest(out, manifest)
    write_replay_index(out)  # writes the derived files, then records every file's checksum in the manifest
    return out
