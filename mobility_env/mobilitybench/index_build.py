"""Writing a built directory's derived files: ``sandbox.arrow`` (with the precomputed compact
observations and evidence views), ``episodes.arrow`` and the arrays of ``sandbox_index/`` (their layout:
:mod:`mobility_env.mobilitybench.replay_index`). :func:`compute_arrays` also builds the index in memory when
the files on disk cannot be used.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any, Iterable

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc
import pyarrow.parquet as pq

from . import evidence, observation
from ..errors import CorruptDataError
from .index_format import (_INDEX_COLUMNS, FUZZY_TOOLS, INDEX_VERSION, META_FILE, NAMES_FILE, TOOL_CODE,
                           bigram_tokens, char_tokens, grid_cell, grid_key, key_hash, parquet_fingerprint, parse_points)
from ..layout import (ARROW_FILE, EPISODES_ARROW_FILE, EPISODES_FILE, INDEX_DIR, SANDBOX_FILE, SANDBOX_SCHEMA,
                      check_built_directory, read_manifest, record_files)

BATCH_ROWS = 1 << 16              # most rows per Arrow batch: row i is in batch i // batch_rows (meta)
MIN_BATCH_ROWS = 1 << 10
#: Each batch is held whole while it is written: a directory of large responses (an official driving-route
#: file holds ~20 kB each) gets fewer rows per batch, so that one batch stays near this size.
BATCH_BYTES = 32 << 20


def arrow_schema(sandbox_schema: pa.Schema) -> pa.Schema:
    """The Parquet sandbox schema with large strings, plus the derived ``compact`` observation and ``evidence``
    columns."""
    fields = [pa.field(f.name, pa.large_string() if f.type == pa.string() else f.type) for f in sandbox_schema]
    return pa.schema(fields + [pa.field(name, pa.large_string()) for name in DERIVED_COLUMNS])


#: The columns ``sandbox.arrow`` adds to the Parquet rows: each response's compact observation (observation version)
#: and its evidence views (:data:`mobility_env.mobilitybench.evidence.EVIDENCE_SCHEMA`).
DERIVED_COLUMNS = ("compact", "evidence")


def _derived_texts(tools: list[str], responses: list[str]) -> tuple[list[str | None], list[str]]:
    """Each response's compact observation and evidence views, from one decoding of it."""
    compact: list[str | None] = []
    stored: list[str] = []
    for tool, text in zip(tools, responses):
        try:
            response = json.loads(text)
        except (ValueError, TypeError):
            compact.append(None)
            stored.append(evidence.encode_evidence(text))
            continue
        try:
            compact.append(observation.format_response(tool, response, "compact"))
        except (ValueError, TypeError, KeyError, AttributeError, IndexError):
            compact.append(None)  # not stored: the env computes it at step time (and reports what fails there)
        stored.append(evidence.encode_evidence(text, response))
    return compact, stored


def _with_compact(batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    compact, stored = _derived_texts(batch.column("tool").to_pylist(), batch.column("response").to_pylist())
    columns = [batch.column(f.name).cast(f.type) for f in schema if f.name not in DERIVED_COLUMNS]
    return pa.record_batch(columns + [pa.array(compact, pa.large_string()), pa.array(stored, pa.large_string())],
                           schema=schema)


def batch_rows_for(source: pq.ParquetFile) -> int:
    """Rows per batch for ``source``: the power of two (``MIN_BATCH_ROWS`` .. ``BATCH_ROWS``) whose rows hold
    about ``BATCH_BYTES`` uncompressed, by the file's average row size."""
    meta = source.metadata
    if meta is None or meta.num_rows == 0:
        return BATCH_ROWS
    size = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
    rows = BATCH_ROWS
    while rows > MIN_BATCH_ROWS and rows * size > BATCH_BYTES * meta.num_rows:
        rows >>= 1
    return rows


def _rebatch(batches: Iterable[pa.RecordBatch], rows: int) -> Iterable[pa.RecordBatch]:
    """Batches of exactly ``rows`` rows (the last may be shorter)."""
    pending: list[pa.RecordBatch] = []
    count = 0
    for batch in batches:
        while batch.num_rows:
            take = min(rows - count, batch.num_rows)
            pending.append(batch.slice(0, take))
            batch, count = batch.slice(take), count + take
            if count == rows:
                yield pa.Table.from_batches(pending).combine_chunks().to_batches()[0]
                pending, count = [], 0
    if count:
        yield pa.Table.from_batches(pending).combine_chunks().to_batches()[0]


# --------------------------------------------------------------------------- building
def compute_arrays(columns: dict[str, list]) -> tuple[dict[str, np.ndarray], dict[str, Any], list[str]]:
    """Every index array from the sandbox columns ``_INDEX_COLUMNS`` (python lists)."""
    tools, keys, names, cities = columns["tool"], columns["key"], columns["name"], columns["city"]
    options, points_text, valid_list = columns["options"], columns["points"], columns["valid"]
    n = len(tools)
    arrays: dict[str, np.ndarray] = {}
    tool_code = np.array([TOOL_CODE.get(t, -1) for t in tools], dtype=np.int8)
    valid = np.array(valid_list, dtype=bool) & (tool_code >= 0)
    hashes = np.zeros(n, dtype=np.uint64)
    for i in np.flatnonzero(valid).tolist():
        hashes[i] = key_hash(tools[i], keys[i])
    live = np.flatnonzero(valid)
    order = live[np.lexsort((live, hashes[live]))]
    arrays.update(tool_code=tool_code, valid=valid, key_hash=hashes, exact_hash=hashes[order],
                  exact_entry=order.astype(np.int64))

    def encode(values: list[str]) -> tuple[np.ndarray, list[str]]:
        vocab: dict[str, int] = {}
        codes = np.fromiter((vocab.setdefault(v, len(vocab)) for v in values), dtype=np.int32, count=len(values))
        return codes, list(vocab)

    arrays["options_code"], options_vocab = encode(options)
    arrays["city_code"], city_vocab = encode(cities)
    name_code, name_vocab = encode(names)

    parsed = [parse_points(p) for p in points_text]
    counts = np.fromiter((len(p) for p in parsed), dtype=np.int64, count=n)
    arrays["pt_off"] = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    arrays["pt_lng"] = np.array([pt[0] for p in parsed for pt in p], dtype=np.float64)
    arrays["pt_lat"] = np.array([pt[1] for p in parsed for pt in p], dtype=np.float64)

    for tool in FUZZY_TOOLS:
        _fuzzy_arrays(arrays, tool, np.flatnonzero(valid & (tool_code == TOOL_CODE[tool])), name_code, name_vocab)
    _nearest_arrays(arrays, valid, tool_code, points_text, name_code, parsed)
    meta = {"index_version": INDEX_VERSION, "rows": n, "options_vocab": options_vocab, "city_vocab": city_vocab}
    return arrays, meta, name_vocab


def episode_arrays(ids: list[str], starts: np.ndarray, stops: np.ndarray) -> dict[str, np.ndarray]:
    """Episode id -> sandbox rows without a Python dict: sorted id hashes, their rows, the spans."""
    hashes = np.array([key_hash("episode", eid) for eid in ids], dtype=np.uint64)
    order = np.lexsort((np.arange(len(ids)), hashes))
    return {"ep_hash": hashes[order], "ep_row": order.astype(np.int64),
            "ep_start": np.asarray(starts, dtype=np.int64), "ep_stop": np.asarray(stops, dtype=np.int64)}


def _fuzzy_arrays(arrays: dict[str, np.ndarray], tool: str, entries: np.ndarray, name_code: np.ndarray,
                  name_vocab: list[str]) -> None:
    position: dict[int, int] = {}          # name id -> position in first-appearance order
    groups: list[dict[tuple[int, int], int]] = []
    options_code, city_code = arrays["options_code"], arrays["city_code"]
    for i in entries.tolist():
        pos = position.setdefault(int(name_code[i]), len(position))
        if pos == len(groups):
            groups.append({})
        groups[pos].setdefault((int(options_code[i]), int(city_code[i])), i)
    name_ids = np.array(list(position), dtype=np.int32)
    lengths = np.array([len(name_vocab[k]) for k in position], dtype=np.int32)
    grp_off = np.concatenate([[0], np.cumsum([len(g) for g in groups], dtype=np.int64)]).astype(np.int64)
    grp_entry = np.array([e for g in groups for e in sorted(g.values())], dtype=np.int64)
    prefix = f"fz_{tool}_"
    for kind, tokenize in (("tok", bigram_tokens), ("uni", char_tokens)):
        postings: dict[int, list[int]] = {}
        for pos, k in enumerate(position):
            for token in tokenize(name_vocab[k]):
                postings.setdefault(token, []).append(pos)
        keys = np.array(sorted(postings), dtype=np.uint64)
        lists = [postings[int(t)] for t in keys]
        arrays[f"{prefix}{kind}_keys"] = keys
        arrays[f"{prefix}{kind}_off"] = np.concatenate(
            [[0], np.cumsum([len(p) for p in lists], dtype=np.int64)]).astype(np.int64)
        arrays[f"{prefix}{kind}_post"] = np.array([p for lst in lists for p in lst], dtype=np.int32)
    by_len = np.lexsort((np.arange(len(lengths)), lengths)).astype(np.int32)
    len_values, len_starts = np.unique(lengths[by_len], return_index=True)
    arrays.update({prefix + "names": name_ids, prefix + "len": lengths, prefix + "grp_off": grp_off,
                   prefix + "grp_entry": grp_entry, prefix + "len_order": by_len,
                   prefix + "len_values": len_values.astype(np.int32),
                   prefix + "len_off": np.concatenate([len_starts, [len(by_len)]]).astype(np.int64)})


def _nearest_arrays(arrays: dict[str, np.ndarray], valid: np.ndarray, tool_code: np.ndarray, points_text: list[str],
                    name_code: np.ndarray, parsed: list[tuple]) -> None:
    sites: dict[tuple, int] = {}
    around = TOOL_CODE["search_around_poi"]
    options_code = arrays["options_code"]
    for i in np.flatnonzero(valid).tolist():
        if not parsed[i]:
            continue
        code = int(tool_code[i])
        site = (code, points_text[i], int(options_code[i]), int(name_code[i]) if code == around else -1)
        sites.setdefault(site, i)
    entries = np.array(sorted(sites.values()), dtype=np.int64)
    lng = np.array([parsed[i][0][0] for i in entries.tolist()], dtype=np.float64)
    lat = np.array([parsed[i][0][1] for i in entries.tolist()], dtype=np.float64)
    keys = np.array([grid_key(int(tool_code[i]), *grid_cell(x, y)) for i, x, y in zip(entries.tolist(), lng, lat)],
                    dtype=np.uint64)
    order = np.lexsort((entries, keys))
    arrays.update(nn_key=keys[order], nn_entry=entries[order], nn_lng=lng[order], nn_lat=lat[order])


def write_replay_index(directory: str | os.PathLike, *, sandbox_schema: pa.Schema | None = None,
                       accept_changed_parquet: bool = False) -> Path:
    """Write ``sandbox.arrow``, ``episodes.arrow`` and ``sandbox_index/`` next to the Parquet files
    (streamed), then record every file's size and checksum in ``manifest.json``.

    ``mobility-env build`` calls this; run it (``mobility-env index DIR``) on a directory built
    by an older version to give it the fast, shared open path and checksums, or to rewrite
    derived files that were damaged. When the manifest already records the Parquet files, a
    Parquet file that differs is refused with :class:`CorruptDataError` (nothing is derived
    from a damaged file) unless ``accept_changed_parquet`` (you changed it on purpose). Files
    are renamed into place at the end.
    """
    directory = Path(directory)
    manifest = read_manifest(directory)
    if manifest is not None and isinstance(manifest.get("files"), dict) and not accept_changed_parquet:
        check_built_directory(directory)  # raises for a damaged Parquet file
    try:
        return _write_replay_index(directory, sandbox_schema)
    except (pa.ArrowException, ValueError, OSError) as exc:  # an unverified Parquet file that does not read
        raise CorruptDataError(directory, f"cannot index the Parquet files ({type(exc).__name__}: {exc}); rebuild "
                                          f"the directory with `mobility-env build SRC --out {directory}`") from exc


def _write_replay_index(directory: Path, sandbox_schema: pa.Schema | None) -> Path:
    episodes = pq.read_table(directory / EPISODES_FILE)
    episodes = episodes.cast(pa.schema([pa.field(f.name, pa.large_string() if f.type == pa.string() else f.type)
                                        for f in episodes.schema]))
    tmp_episodes = directory / (EPISODES_ARROW_FILE + ".tmp")
    with pa.OSFile(str(tmp_episodes), "wb") as sink, ipc.new_file(sink, episodes.schema) as writer:
        writer.write_table(episodes.combine_chunks())
    del episodes
    source = pq.ParquetFile(directory / SANDBOX_FILE)
    schema = arrow_schema(sandbox_schema or SANDBOX_SCHEMA)
    tmp_arrow = directory / (ARROW_FILE + ".tmp")
    with pa.OSFile(str(tmp_arrow), "wb") as sink, ipc.new_file(sink, schema) as writer:
        batch_rows = batch_rows_for(source)
        for batch in _rebatch(source.iter_batches(batch_size=min(8192, batch_rows)), batch_rows):
            writer.write_batch(_with_compact(batch, schema))
    table = pq.read_table(directory / SANDBOX_FILE, columns=_INDEX_COLUMNS)
    arrays, meta, name_vocab = compute_arrays({c: table.column(c).to_pylist() for c in _INDEX_COLUMNS})
    spans = pq.read_table(directory / EPISODES_FILE, columns=["episode_id", "sandbox_start", "sandbox_stop"])
    arrays.update(episode_arrays(spans.column("episode_id").to_pylist(), spans.column("sandbox_start").to_numpy(),
                                 spans.column("sandbox_stop").to_numpy()))
    versions: dict[str, int | str] = {"index_version": INDEX_VERSION,
                                      "observation_version": observation.OBSERVATION_VERSION,
                                      "evidence_version": evidence.EVIDENCE_SCHEMA}
    meta.update(versions)
    meta["batch_rows"] = batch_rows
    meta["parquet"] = parquet_fingerprint(directory / SANDBOX_FILE)
    meta["episodes_parquet"] = parquet_fingerprint(directory / EPISODES_FILE)
    tmp_dir = directory / (INDEX_DIR + ".tmp")
    if tmp_dir.exists():
        shutil.rmtree(tmp_dir)
    tmp_dir.mkdir()
    for name, array in arrays.items():
        np.save(tmp_dir / f"{name}.npy", np.ascontiguousarray(array), allow_pickle=False)
    with (pa.OSFile(str(tmp_dir / NAMES_FILE), "wb") as sink,
          ipc.new_file(sink, pa.schema([("name", pa.large_string())])) as w):
        w.write_batch(pa.record_batch([pa.array(name_vocab, pa.large_string())], names=["name"]))
    (tmp_dir / META_FILE).write_text(json.dumps(meta, ensure_ascii=False), encoding="utf-8")
    final_dir = directory / INDEX_DIR
    if final_dir.exists():
        shutil.rmtree(final_dir)
    os.replace(tmp_dir, final_dir)
    os.replace(tmp_arrow, directory / ARROW_FILE)
    os.replace(tmp_episodes, directory / EPISODES_ARROW_FILE)
    # the Parquet files were checked (or accepted) above
    record_files(directory, accept_changed_parquet=True, versions=versions)
    return directory / INDEX_DIR
