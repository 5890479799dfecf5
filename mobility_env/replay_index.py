"""The prebuilt replay index of a built directory: memory-mapped, shared by every process.

``sandbox.parquet`` stays the contract (compressed, portable); next to it a build writes

    DIR/sandbox.arrow        the sandbox rows, uncompressed Arrow IPC (large strings), plus a
                             ``compact`` column: the compact observation text of each response
    DIR/sandbox_index/       ``meta.json`` and ``.npy`` arrays (below), ``names.arrow``

and :meth:`ReplayIndex.load` opens them with ``pa.memory_map`` / ``np.load(mmap_mode="r")``:
nothing is parsed or copied at open, pages are read on first touch and shared through the
page cache by every worker that opens the same directory.

Arrays (N = sandbox rows; every array is a plain function of the Parquet rows):

* exact: ``tool_code`` (int8, index in :data:`TOOL_ORDER`, -1 unknown), ``valid``,
  ``key_hash`` (uint64 of tool + key), ``exact_hash``/``exact_entry`` (valid rows sorted by
  hash then row, for ``numpy.searchsorted``; a hash hit is confirmed on the key text);
* matching options: ``options_code``/``city_code`` (int32 into ``meta`` vocabularies);
* coordinates: ``pt_off`` (N+1), ``pt_lng``/``pt_lat``: the canonical points of each row;
* fuzzy names, per name-keyed tool ``T``: ``fz_T_names`` (name ids in first-appearance order),
  ``fz_T_len``, ``fz_T_grp_off``/``fz_T_grp_entry`` (lowest row of each distinct
  (name, options, city)), inverted indexes of character and character-bigram *tokens*
  ``fz_T_uni_*``/``fz_T_tok_*`` (keys, offsets, postings; token = character or bigram and
  its occurrence number, so shared tokens count the multiset intersection), and
  ``fz_T_len_*`` (names grouped by length, for lengths no bound can filter);
* nearest: ``nn_key`` (tool, then 0.01° latitude row, then 0.01° longitude cell: the sort
  order, so each tool's sites are one contiguous slice and each row of cells a sub-slice),
  ``nn_entry`` (lowest row of each distinct (tool, points, options, name) site),
  ``nn_lng``/``nn_lat`` (its first point). A query reads these arrays where they lie: the rows
  and cells a circle of the bound can reach (:func:`grid_reach`: longitude cells widen as
  1/cos(lat), a circle holding a pole takes whole rows, one crossing ±180° takes both sides)
  are ``numpy.searchsorted`` ranges of ``nn_key``, and the sites in them are kept by their
  haversine distance. Nothing is built per process and nothing beyond numpy is imported.

The ``compact`` column holds :func:`mobility_env.observation.format_response` texts of
observation format ``OBSERVATION_VERSION``, recorded in ``meta.json`` and ``manifest.json``
(with :data:`INDEX_VERSION`). Opened by code of another observation version, the column is not
served: :attr:`ReplayIndex.compact_ok` is False, every compact observation is computed at its
step (the same text a fresh index holds), and one
:class:`~mobility_env.layout.FormatVersionWarning` per directory names both versions and the
refresh command, ``mobility-env index DIR``. An index of another :data:`INDEX_VERSION` is not
used at all: it is built in memory instead, with the same warning.

Every one of these files is listed with its size and checksum in ``manifest.json`` and checked
before it is mapped (:func:`mobility_env.layout.check_built_directory`): a file that differs is
never mapped (a damaged Arrow file can crash the process), the index is built in memory from
the verified Parquet files instead, with a :class:`~mobility_env.layout.DerivedFileWarning`.
In a directory whose manifest has no checksums (older versions) the Arrow files are validated
in full before use, and the index is used only when every expected array is present.

Why the token filters are exact: ``fuzz.ratio ≥ t`` means ``2L/S ≥ t/100`` for the longest
common subsequence L and total length S, so L ≥ Lmin = ⌈t·S/200⌉. A common subsequence of
length L is L shared characters, and leaves at least ``L − 1 − (S − 2L)`` adjacent matched
pairs unbroken, each a shared bigram token. A name is scored only if it shares Lmin
characters and ``3·Lmin − 1 − S`` bigrams with the query; lengths where Lmin is 0 are
scanned in full. Candidates are then scored with rapidfuzz itself, so scores are identical.

Why a query reads few postings: a name that must hold k of the query's n tokens holds at
least k − (n − r) of any r of them (prefix filter). So only the postings of the r rarest
tokens (r ≥ n − k_min + 1, a little more while they are short) are read, concatenated and
sorted to count how many each name holds; names that hold too few for their length are
dropped, the rest are looked up by binary search in the next-rarest postings until few are
left for rapidfuzz. The work follows the postings touched and the candidates found, not the
number of names (a query over 1,000 characters, which no count bounds, reads them all).
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import os
import shutil
import warnings
from pathlib import Path
from tokenize import TokenError
from typing import Any, Callable, Iterable, NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc
import pyarrow.parquet as pq

from . import observation
from .layout import (ARROW_FILE, EPISODES_ARROW_FILE, EPISODES_FILE, EPISODES_SCHEMA, INDEX_DIR, SANDBOX_FILE,
                     SANDBOX_SCHEMA, DerivedFileWarning, DirectoryCheck, FormatVersionWarning, check_built_directory,
                     read_manifest, record_files, warn_once)
from .errors import CorruptDataError
from .geo import EARTH_RADIUS_M
from .tools import MAP_TOOLS, TOOLS

#: The layout of ``sandbox_index/`` (bump by hand when an array is added, removed or changes meaning).
INDEX_VERSION = 1
META_FILE = "meta.json"
NAMES_FILE = "names.arrow"
BATCH_ROWS = 1 << 16              # most rows per Arrow batch: row i is in batch i // batch_rows (meta)
MIN_BATCH_ROWS = 1 << 10
#: Each batch is held whole while it is written: a directory of large responses (an official driving-route
#: file holds ~20 kB each) gets fewer rows per batch, so that one batch stays near this size.
BATCH_BYTES = 32 << 20

TOOL_ORDER: tuple[str, ...] = MAP_TOOLS
TOOL_CODE: dict[str, int] = {name: i for i, name in enumerate(TOOL_ORDER)}
FUZZY_TOOLS: tuple[str, ...] = tuple(t for t in TOOL_ORDER if TOOLS[t].kind in ("poi", "traffic", "weather"))
GRID_DEG = 0.01
_LAT_CELLS = int(round(180 / GRID_DEG)) + 1
_LNG_CELLS = int(round(360 / GRID_DEG)) + 1
_CELL_MASK = (1 << 20) - 1  # the longitude bits of grid_key: (row, _CELL_MASK) is past every cell of a row
_NEVER = np.iinfo(np.int32).max  # "no bound at this name length" in the fuzzy filters
_PREFIX_EXTRA = 2           # fuzzy: postings read and counted beyond the prefix (the rest are looked up)
_READ_MORE = 256            # fuzzy: next-rarest postings this short are counted too
_SCORE_DIRECTLY = 16        # fuzzy candidates this few are scored by rapidfuzz without more token lookups
_SCAN_SITES = 64            # a latitude band holding this few sites (plus 2 per cell range) is checked whole
_INDEX_COLUMNS = ["tool", "key", "name", "city", "options", "points", "valid"]


def key_hash(tool: str, key: str) -> int:
    """A stable 64-bit hash of (tool, canonical key): equal in every process and machine."""
    digest = hashlib.blake2b(f"{tool}\x1f{key}".encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "little")


def parse_points(text: str) -> tuple[tuple[float, float], ...]:
    """``'lng,lat;lng,lat'`` -> ((lng, lat), ...), as written by :func:`mobility_env.build.sandbox_rows`."""
    if not text:
        return ()
    return tuple((float(a), float(b)) for a, b in (p.split(",") for p in text.split(";")))


def bigram_tokens(name: str) -> list[int]:
    """Character bigrams of ``name`` numbered by occurrence: 'abab' -> ab#1, ba#1, ab#2."""
    seen: dict[int, int] = {}
    out = []
    for a, b in zip(name, name[1:]):
        gram = (ord(a) << 21) | ord(b)
        k = seen.get(gram, 0) + 1
        seen[gram] = k
        out.append((gram << 10) | min(k, 1023))
    return out


def char_tokens(name: str) -> list[int]:
    """Characters of ``name`` numbered by occurrence: 'aba' -> a#1, b#1, a#2."""
    seen: dict[str, int] = {}
    out = []
    for c in name:
        k = seen.get(c, 0) + 1
        seen[c] = k
        out.append((ord(c) << 10) | min(k, 1023))
    return out


def grid_cell(lng: float, lat: float) -> tuple[int, int]:
    return int(math.floor((lat + 90.0) / GRID_DEG)), int(math.floor((lng + 180.0) / GRID_DEG))


def grid_key(tool_code: int, lat_cell: int, lng_cell: int) -> int:
    return (tool_code << 40) | (lat_cell << 20) | lng_cell


def grid_reach(lng: float, lat: float, reach_m: float) -> tuple[int, int, list[tuple[int, int]] | None]:
    """The grid cells that can hold a point within ``reach_m`` metres of (lng, lat).

    ``(first row, last row, longitude cell ranges)``: every latitude row from the first to the
    last (inclusive, as :func:`grid_cell` numbers them), and in each the inclusive ranges of
    longitude cells, or None when every longitude can be reached (a pole within reach). The
    rows span the radius in latitude; the cells span ``asin(sin δ / cos lat)``, the widest
    longitude difference a great circle of angular radius δ reaches, split in two where it
    crosses ±180° (both 180° and -180° are then included: they are one meridian). Radii of any
    size: a bound of 50 km reaches 45 rows on each side. The radius is widened a
    hair against rounding, so a point whose haversine distance is within ``reach_m`` is always
    inside; the caller checks the distance.
    """
    delta = reach_m / EARTH_RADIUS_M * (1 + 1e-9) + 1e-12  # angular radius (radians)
    if not delta < math.pi / 2:  # a quarter of the globe or more (or not a number): every cell
        return 0, _LAT_CELLS - 1, None
    span = math.degrees(delta)
    south, north = lat - span, lat + span
    row_lo, row_hi = grid_cell(0.0, max(-90.0, south))[0], grid_cell(0.0, min(90.0, north))[0]
    ratio = math.sin(delta) / math.cos(math.radians(lat))
    if south <= -90.0 or north >= 90.0 or ratio > 0.999999:  # the circle holds (or grazes) a pole
        return row_lo, row_hi, None
    half = math.degrees(math.asin(ratio)) * (1 + 1e-9) + 1e-9
    lng = (lng + 180.0) % 360.0 - 180.0
    west, east = lng - half, lng + half
    if west <= -180.0:
        parts = [(-180.0, east), (west + 360.0, 180.0)]
    elif east >= 180.0:
        parts = [(-180.0, east - 360.0), (west, 180.0)]
    else:
        parts = [(west, east)]
    return row_lo, row_hi, [(grid_cell(a, 0.0)[1], grid_cell(b, 0.0)[1]) for a, b in parts]


def haversine_many_m(lng: float, lat: float, lngs: np.ndarray, lats: np.ndarray) -> np.ndarray:
    """:func:`mobility_env.geo.haversine_m` from one point to many, vectorized (same formula)."""
    lng1, lat1 = math.radians(lng), math.radians(lat)
    lng2, lat2 = np.radians(lngs), np.radians(lats)
    h = np.sin((lat2 - lat1) / 2) ** 2 + math.cos(lat1) * np.cos(lat2) * np.sin((lng2 - lng1) / 2) ** 2
    return 2 * EARTH_RADIUS_M * np.arcsin(np.minimum(1.0, np.sqrt(h)))


def parquet_fingerprint(path: Path) -> str:
    """Size and a hash of the Parquet footer: ties an index to the exact file it was built from."""
    size = path.stat().st_size
    with open(path, "rb") as handle:
        handle.seek(max(0, size - 65536))
        tail = handle.read()
    return f"{size}:{hashlib.blake2b(tail, digest_size=16).hexdigest()}"


def expected_arrays() -> list[str]:
    """The names of the ``.npy`` arrays an index of this version consists of."""
    names = ["tool_code", "valid", "key_hash", "exact_hash", "exact_entry", "options_code", "city_code",
             "pt_off", "pt_lng", "pt_lat", "nn_key", "nn_entry", "nn_lng", "nn_lat",
             "ep_hash", "ep_row", "ep_start", "ep_stop"]
    for tool in FUZZY_TOOLS:
        names += [f"fz_{tool}_{part}" for part in ("names", "len", "grp_off", "grp_entry", "len_order", "len_values",
                                                   "len_off", "tok_keys", "tok_off", "tok_post", "uni_keys", "uni_off",
                                                   "uni_post")]
    return sorted(names)


def index_files() -> list[str]:
    """The derived files the replay index is read from (relative paths), episodes.arrow aside."""
    return [ARROW_FILE, f"{INDEX_DIR}/{META_FILE}", f"{INDEX_DIR}/{NAMES_FILE}",
            *(f"{INDEX_DIR}/{name}.npy" for name in expected_arrays())]


def _derived_usable(check: DirectoryCheck, names: list[str], what: str) -> bool:
    """Do the derived files ``names`` match the manifest? If not, say so once and why."""
    if check.derived_ok(names):
        return True
    problems = check.derived_problems(names)
    absent = [p for p in problems if p.endswith(": missing") or p.endswith("not listed in the manifest")]
    if check.verified and len(absent) == len(problems) == len(names):
        return False  # none of them written (e.g. removed to save space): the Sandbox says how to write them
    message = (f"{check.directory}: not using the {what}: {'; '.join(problems[:3])}"
               f"{f' (and {len(problems) - 3} more)' if len(problems) > 3 else ''}. Built in memory from the verified "
               f"Parquet files instead; run `mobility-env index {check.directory}` to write it again.")
    warn_once(check.directory, DerivedFileWarning, message)
    return False


def _validated(table_or_batch: Any, path: Path) -> Any:
    """Full Arrow validation (offsets, UTF-8) for a file no checksum vouches for; ValueError if damaged."""
    try:
        table_or_batch.validate(full=True)
    except (pa.ArrowException, ValueError) as exc:
        raise ValueError(f"{path}: damaged Arrow data ({exc})") from exc
    return table_or_batch


def arrow_schema(sandbox_schema: pa.Schema) -> pa.Schema:
    """The Parquet sandbox schema with large strings, plus the ``compact`` observation column."""
    fields = [pa.field(f.name, pa.large_string() if f.type == pa.string() else f.type) for f in sandbox_schema]
    return pa.schema(fields + [pa.field("compact", pa.large_string())])


def _compact_texts(tools: list[str], responses: list[str]) -> list[str | None]:
    out: list[str | None] = []
    for tool, text in zip(tools, responses):
        try:
            out.append(observation.format_response(tool, json.loads(text), "compact"))
        except (ValueError, TypeError, KeyError, AttributeError, IndexError):
            out.append(None)  # not stored: the env computes it at step time (and reports what fails there)
    return out


def _with_compact(batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    compact = _compact_texts(batch.column("tool").to_pylist(), batch.column("response").to_pylist())
    columns = [batch.column(f.name).cast(f.type) for f in schema if f.name != "compact"]
    return pa.record_batch(columns + [pa.array(compact, pa.large_string())], schema=schema)


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
    versions = {"index_version": INDEX_VERSION, "observation_version": observation.OBSERVATION_VERSION}
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


def open_episodes_arrow(directory: str | os.PathLike, check: DirectoryCheck | None = None) -> pa.Table | None:
    """``episodes.arrow`` memory-mapped, if it matches the manifest (or, in an unverified older
    directory, was written from the current ``episodes.parquet`` and validates); else None.

    Raises :class:`CorruptDataError` when a Parquet file of the directory is damaged.
    """
    directory = Path(directory)
    check = check or check_built_directory(directory)
    arrow_path = directory / EPISODES_ARROW_FILE
    if check.verified:
        if not _derived_usable(check, [EPISODES_ARROW_FILE], EPISODES_ARROW_FILE):
            return None
        return ipc.open_file(pa.memory_map(str(arrow_path), "r")).read_all()
    meta_path = directory / INDEX_DIR / META_FILE
    if not meta_path.exists() or not arrow_path.exists():
        return None
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        if not isinstance(meta, dict) or meta.get("index_version") != INDEX_VERSION or \
                meta.get("episodes_parquet") != parquet_fingerprint(directory / EPISODES_FILE):
            return None
        return _validated(ipc.open_file(pa.memory_map(str(arrow_path), "r")).read_all(), arrow_path)
    except (OSError, ValueError, pa.ArrowException) as exc:
        warnings.warn(f"{arrow_path}: unreadable ({exc}); reading episodes.parquet instead", DerivedFileWarning,
                      stacklevel=2)
        return None


def _cell_reader(array: pa.Array):
    """``row -> python value`` for one Arrow array: strings and numbers without a Scalar object per read."""
    if array.null_count == 0 and (pa.types.is_string(array.type) or pa.types.is_large_string(array.type)):
        width = np.int64 if pa.types.is_large_string(array.type) else np.int32
        offsets = np.frombuffer(array.buffers()[1], dtype=width)[array.offset:array.offset + len(array) + 1]
        data = array.buffers()[2]
        view = memoryview(data) if data is not None else memoryview(b"")

        def read_text(row: int) -> str:
            return str(view[offsets[row]:offsets[row + 1]], "utf-8")

        return read_text
    if array.null_count == 0 and (pa.types.is_integer(array.type) or pa.types.is_floating(array.type)):
        values = array.to_numpy(zero_copy_only=True)
        return lambda row: values[row].item()
    return lambda row: array[row].as_py()


# what a damaged file can raise while it is read (np.load parses a .npy header with tokenize and ast)
_LOAD_ERRORS = (OSError, ValueError, KeyError, TypeError, IndexError, EOFError, SyntaxError, TokenError,
                pa.ArrowException)


def _validate_unverified_parquet(directory: Path) -> None:
    """Schema and full Arrow validation of the Parquet files of a directory without checksums.

    Raises CorruptDataError naming the file; a damaged file would otherwise fail deep inside
    a lookup (undecodable text, a renamed column).
    """
    for name, schema in ((SANDBOX_FILE, SANDBOX_SCHEMA), (EPISODES_FILE, EPISODES_SCHEMA)):
        path = directory / name
        try:
            table = pq.read_table(path)
            table.validate(full=True)
        except (OSError, ValueError, pa.ArrowException) as exc:
            raise CorruptDataError(path, f"damaged ({exc}); rebuild with `mobility-env build SRC --out {directory}`") \
                from exc
        for field in schema:
            if field.name not in table.column_names or not table.schema.field(field.name).type.equals(field.type):
                raise CorruptDataError(path, f"column {field.name!r} is missing or not {field.type}; rebuild with "
                                             f"`mobility-env build SRC --out {directory}`", column=field.name)


def _check_shapes(arrays: dict[str, np.ndarray], meta: dict[str, Any], names: int, rows: int) -> None:
    """Range checks of unverified arrays (every stored position points inside what it indexes):
    ValueError when one cannot be right, so a damaged array is never followed out of bounds."""
    def within(name: str, upper: int) -> None:
        values = arrays[name]
        if values.ndim != 1:
            raise ValueError(f"{name}.npy is not one-dimensional")
        if len(values) and (int(values.min()) < 0 or int(values.max()) >= upper):
            raise ValueError(f"{name}.npy points outside 0..{upper - 1}")

    def offsets(name: str, length: int | None, total: int) -> None:
        values = arrays[name]
        if (length is not None and values.shape != (length,)) or not len(values) or int(values[0]) != 0 \
                or int(values[-1]) != total or bool((np.diff(values) < 0).any()):
            raise ValueError(f"{name}.npy is not an offset array over {total} items")

    for name in ("tool_code", "valid", "key_hash", "options_code", "city_code"):
        if arrays[name].shape != (rows,):
            raise ValueError(f"{name}.npy has shape {arrays[name].shape}, expected ({rows},)")
    within("options_code", len(meta["options_vocab"]))
    within("city_code", len(meta["city_vocab"]))
    offsets("pt_off", rows + 1, len(arrays["pt_lng"]))
    for name in ("exact_entry", "nn_entry"):
        within(name, rows)
    episodes = len(arrays["ep_start"])
    within("ep_row", episodes)
    within("ep_start", rows + 1)
    within("ep_stop", rows + 1)
    if episodes != len(arrays["ep_stop"]) or bool((arrays["ep_start"] > arrays["ep_stop"]).any()):
        raise ValueError("ep_start.npy and ep_stop.npy do not describe row spans")
    for tool in FUZZY_TOOLS:
        prefix = f"fz_{tool}_"
        count = len(arrays[prefix + "names"])
        within(prefix + "names", names)
        offsets(prefix + "grp_off", count + 1, len(arrays[prefix + "grp_entry"]))
        within(prefix + "grp_entry", rows)
        within(prefix + "len_order", max(count, 1))
        offsets(prefix + "len_off", len(arrays[prefix + "len_values"]) + 1, len(arrays[prefix + "len_order"]))
        for kind in ("tok", "uni"):
            offsets(f"{prefix}{kind}_off", len(arrays[f"{prefix}{kind}_keys"]) + 1, len(arrays[f"{prefix}{kind}_post"]))
            within(f"{prefix}{kind}_post", max(count, 1))


def _compact_version_ok(directory: Path, meta: dict[str, Any]) -> bool:
    """Was the ``compact`` column written by this observation version? If not, say so once."""
    recorded, current = meta.get("observation_version"), observation.OBSERVATION_VERSION
    if recorded == current:
        return True
    if recorded is None:
        shown = "no observation version (written before versions were recorded)"
    elif isinstance(recorded, str):
        shown = f"observation version {recorded!r} (a source hash: written before versions were numbered)"
    else:
        shown = f"observation version {recorded!r}"
    warn_once(directory, FormatVersionWarning,
              f"{directory}: its precomputed compact observations ({ARROW_FILE}) are {shown}, this mobility-env "
              f"writes observation version {current}; they are not served, each compact observation is computed at "
              f"its step instead (the text a fresh index holds, more slowly). Run `mobility-env index {directory}` to "
              f"rewrite them.")
    return False


# --------------------------------------------------------------------------- fuzzy filters
class _TokenNeed(NamedTuple):
    """How many tokens of one kind (characters or bigrams) a name of each length must share."""

    need: np.ndarray  # by name length; _NEVER: that length is not searched; 0: none needed
    least: int        # the fewest any searched length needs, lengths that need none aside
    covers: bool      # every searched length needs at least one: these tokens alone find all candidates


@functools.lru_cache(maxsize=1024)
def _length_needs(len_values: tuple[int, ...], lq: int, threshold: float
                  ) -> tuple[_TokenNeed | None, _TokenNeed | None, tuple[int, ...]]:
    """What a name of each length must share with a query of ``lq`` characters to reach
    ``threshold`` (see the module docstring): ``(characters, bigrams, unbounded)``.

    Characters is None when no length is bounded, bigrams None when no length needs one;
    ``unbounded``: indexes into ``len_values`` of the lengths that can pass but that no count
    bounds (Lmin = 0, or a query over 1,000 characters): all their names are scored.
    """
    need_chars = np.full(len_values[-1] + 1, _NEVER, dtype=np.int64)
    need_grams = np.full(len_values[-1] + 1, _NEVER, dtype=np.int64)
    unbounded = []
    cut = threshold - 1e-6  # a little below: the filters may only widen, rapidfuzz decides
    for j, lc in enumerate(len_values):
        total = lq + lc
        if total and 200.0 * min(lq, lc) / total < cut:
            continue
        lmin = max(0, math.ceil(cut * total / 200.0 - 1e-9))  # shortest common subsequence that can pass
        if lmin >= 1 and lq <= 1000:
            need_chars[lc] = lmin                              # it needs lmin shared characters
            need_grams[lc] = max(0, 3 * lmin - 1 - total)      # and this many unbroken bigrams
        else:
            unbounded.append(j)

    def token_need(need: np.ndarray) -> _TokenNeed | None:
        searched = need[need < _NEVER]
        wanted = searched[searched >= 1]
        if not len(wanted):
            return None
        need.setflags(write=False)  # shared by every call with these lengths, query length and threshold
        return _TokenNeed(need, int(wanted.min()), bool((searched >= 1).all()))

    return token_need(need_chars), token_need(need_grams), tuple(unbounded)


def _held_at_least(values: np.ndarray, times: int) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values that occur ``times`` times or more (sorted), and how often each occurs.

    A sort and, for ``times`` ≥ 2, a comparison with the value ``times − 1`` places on: only the
    values that pass are counted (numpy's unique costs more on a few hundred values)."""
    ordered = np.sort(values)
    if times <= 1:  # every value: run lengths
        last = np.empty(len(ordered), dtype=bool)
        last[-1:] = True
        np.not_equal(ordered[1:], ordered[:-1], out=last[:-1])
        ends = np.flatnonzero(last)
        return ordered[ends], np.diff(ends, prepend=-1)
    if len(ordered) < times:
        return ordered[:0], np.zeros(0, dtype=np.int64)
    found = ordered[times - 1:][ordered[:len(ordered) - times + 1] == ordered[times - 1:]]
    if len(found) > 1:
        first = np.empty(len(found), dtype=bool)
        first[0] = True
        np.not_equal(found[1:], found[:-1], out=first[1:])
        found = found[first]
    return found, np.searchsorted(ordered, found, side="right") - np.searchsorted(ordered, found)


def _members(needles: np.ndarray, haystack: np.ndarray) -> np.ndarray:
    """``np.isin(needles, haystack)`` for a sorted ``haystack``, by binary search."""
    if not len(haystack):
        return np.zeros(len(needles), dtype=bool)
    at = np.searchsorted(haystack, needles)
    return haystack[np.minimum(at, len(haystack) - 1)] == needles


def _prefix_cost(spans: list[tuple[int, int]], need: _TokenNeed) -> int:
    """Postings read first to find every searched name through the rarest tokens."""
    sizes = sorted(stop - start for start, stop in spans)
    return sum(sizes[:len(sizes) - need.least + 1])


# --------------------------------------------------------------------------- the index
class ReplayIndex:
    """The arrays above plus row access to the sandbox columns (see the module docstring).

    Built in memory (:meth:`from_table`) or memory-mapped from a directory (:meth:`load`);
    the two answer identically.
    """

    # the fixed arrays of expected_arrays(), set from ``arrays`` in __init__ (the fz_* arrays are
    # set the same way and read through self.arrays)
    tool_code: np.ndarray
    valid: np.ndarray
    key_hash: np.ndarray
    exact_hash: np.ndarray
    exact_entry: np.ndarray
    options_code: np.ndarray
    city_code: np.ndarray
    pt_off: np.ndarray
    pt_lng: np.ndarray
    pt_lat: np.ndarray
    nn_key: np.ndarray
    nn_entry: np.ndarray
    nn_lng: np.ndarray
    nn_lat: np.ndarray
    ep_hash: np.ndarray
    ep_row: np.ndarray
    ep_start: np.ndarray
    ep_stop: np.ndarray

    def __init__(self, arrays: dict[str, np.ndarray], meta: dict[str, Any], names: pa.Array,
                 batches: list[pa.RecordBatch], batch_rows: int, compact_ok: bool):
        self.arrays = arrays
        self.meta = meta
        self.names = names
        self.batch_rows = batch_rows
        self.shift = batch_rows.bit_length() - 1 if batch_rows & (batch_rows - 1) == 0 else None
        self.columns = {name: [b.column(name) for b in batches] for name in batches[0].schema.names} if batches else {}
        self._readers: dict[str, list] = {}
        self._name_reader: Callable[[int], Any] | None = None
        self._episode_id_reader: Callable[[int], Any] | None = None
        self.episodes: pa.Table | None = None  # episodes.arrow, when it matches episodes.parquet
        self.source: Path | None = None  # the file rows are read from (sandbox.arrow); None when built in memory
        self.compact_ok = compact_ok and "compact" in self.columns
        self.rows = int(meta["rows"])
        self.options_vocab: dict[str, int] = {v: i for i, v in enumerate(meta["options_vocab"])}
        self.city_vocab: dict[str, int] = {v: i for i, v in enumerate(meta["city_vocab"])}
        self.empty_city = self.city_vocab.get("", -2)
        for name, array in arrays.items():
            setattr(self, name, array)

    # -------------------------------------------------------------- construction
    @classmethod
    def from_table(cls, table: pa.Table) -> "ReplayIndex":
        """An in-memory index of a sandbox table (no compact column: observations computed per step)."""
        arrays, meta, name_vocab = compute_arrays({c: table.column(c).to_pylist() for c in _INDEX_COLUMNS})
        batches = table.combine_chunks().to_batches() or [pa.RecordBatch.from_pylist([], schema=table.schema)]
        rows = max(1, batches[0].num_rows)
        return cls(arrays, meta, pa.array(name_vocab, pa.large_string()), batches[:1], rows, compact_ok=False)

    @classmethod
    def load(cls, directory: str | os.PathLike) -> "ReplayIndex | None":
        """Memory-map a written index; None if the directory has none, an older version, or
        files that do not match the manifest (see the module docstring).

        Raises :class:`CorruptDataError` when a Parquet file of the directory is damaged.
        """
        directory = Path(directory)
        check = check_built_directory(directory)
        index_dir = directory / INDEX_DIR
        if check.verified:
            if not _derived_usable(check, index_files(), "prebuilt replay index"):
                return None
            try:
                return cls._load(directory, check)
            except _LOAD_ERRORS as exc:
                raise CorruptDataError(directory / INDEX_DIR, f"matches the manifest but does not load ({exc}); "
                                                              f"run `mobility-env index {directory}`") from exc
        index = None
        if (index_dir / META_FILE).exists() and (directory / ARROW_FILE).exists():
            try:
                index = cls._load(directory, check)
            except _LOAD_ERRORS as exc:
                warnings.warn(f"{directory}: the replay index is unreadable ({exc}); building it in memory. Run "
                              f"`mobility-env index {directory}` to write it again.", DerivedFileWarning, stacklevel=2)
        if index is None or index.episodes is None:
            _validate_unverified_parquet(directory)  # what the sandbox reads instead: no checksum vouches for it
        return index

    @classmethod
    def _load(cls, directory: Path, check: DirectoryCheck) -> "ReplayIndex | None":
        index_dir = directory / INDEX_DIR
        meta = json.loads((index_dir / META_FILE).read_text(encoding="utf-8"))
        if not isinstance(meta, dict) or meta.get("index_version") != INDEX_VERSION:
            recorded = meta.get("index_version") if isinstance(meta, dict) else None
            warn_once(directory, FormatVersionWarning,
                      f"{directory}: its replay index ({INDEX_DIR}/) is index version {recorded!r}, this mobility-env "
                      f"reads version {INDEX_VERSION}; it is not used, the index is built in memory instead (same "
                      f"lookups, slower open). Run `mobility-env index {directory}` to rewrite it.")
            return None
        if not check.verified and meta.get("parquet") != parquet_fingerprint(directory / SANDBOX_FILE):
            return None  # sandbox.parquet changed since (only checked this way where no checksum is recorded)
        names = expected_arrays()
        if not check.verified:
            missing = [n for n in names if not (index_dir / f"{n}.npy").is_file()]
            if missing:
                raise ValueError(f"{len(missing)} index array(s) missing ({', '.join(missing[:4])})")
        # plain ndarray views of the maps: same shared pages, without np.memmap's per-slice overhead
        arrays = {name: np.load(index_dir / f"{name}.npy", mmap_mode="r", allow_pickle=False).view(np.ndarray)
                  for name in names}
        names_file = ipc.open_file(pa.memory_map(str(index_dir / NAMES_FILE), "r")).get_batch(0).column(0)
        reader = ipc.open_file(pa.memory_map(str(directory / ARROW_FILE), "r"))
        batches = [reader.get_batch(i) for i in range(reader.num_record_batches)]
        rows = int(meta["rows"])
        if sum(b.num_rows for b in batches) != rows:
            return None
        if not check.verified:
            _validated(names_file, index_dir / NAMES_FILE)
            for batch in batches:
                _validated(batch, directory / ARROW_FILE)
            _check_shapes(arrays, meta, len(names_file), rows)
        index = cls(arrays, meta, names_file, batches, int(meta.get("batch_rows", BATCH_ROWS)),
                    compact_ok=_compact_version_ok(directory, meta))
        index.episodes = open_episodes_arrow(directory, check)
        index.source = directory / ARROW_FILE
        return index

    # -------------------------------------------------------------- row access
    def value(self, column: str, row: int) -> Any:
        """One cell, read straight from the (memory-mapped) Arrow buffers."""
        readers = self._readers.get(column)
        if readers is None:
            readers = self._readers[column] = [_cell_reader(chunk) for chunk in self.columns[column]]
        if self.shift is not None:
            return readers[row >> self.shift](row & (self.batch_rows - 1))
        return readers[row // self.batch_rows](row % self.batch_rows)

    def points(self, row: int) -> tuple[tuple[float, float], ...]:
        start, stop = int(self.pt_off[row]), int(self.pt_off[row + 1])
        return tuple(zip(self.pt_lng[start:stop].tolist(), self.pt_lat[start:stop].tolist()))

    def name_text(self, name_id: int) -> str:
        if self._name_reader is None:
            self._name_reader = _cell_reader(self.names)
        return self._name_reader(name_id)

    def episode_span(self, episode_id: str) -> tuple[int, int] | None:
        """Rows [start, stop) of an episode, from the id hashes (needs ``self.episodes``)."""
        assert self.episodes is not None
        if self._episode_id_reader is None:
            column = self.episodes.column("episode_id")
            self._episode_id_reader = _cell_reader(column.chunk(0)) if column.num_chunks == 1 else \
                (lambda row: column[row].as_py())
        h = np.uint64(key_hash("episode", episode_id))
        hashes = self.ep_hash
        pos = int(np.searchsorted(hashes, h))
        while pos < len(hashes) and hashes[pos] == h:
            row = int(self.ep_row[pos])
            if self._episode_id_reader(row) == episode_id:
                return int(self.ep_start[row]), int(self.ep_stop[row])
            pos += 1
        return None

    # -------------------------------------------------------------- exact
    def exact(self, tool: str, key: str) -> int | None:
        """Lowest valid row with this tool and canonical key."""
        h = np.uint64(key_hash(tool, key))
        hashes = self.exact_hash
        pos = int(np.searchsorted(hashes, h, side="left"))
        while pos < len(hashes) and hashes[pos] == h:
            row = int(self.exact_entry[pos])
            if self.value("key", row) == key and self.value("tool", row) == tool:
                return row
            pos += 1
        return None

    # -------------------------------------------------------------- fuzzy
    def fuzzy_names(self, tool: str, query: str, threshold: float, limit: int = 20) -> list[tuple[int, float]]:
        """(name position, ratio) of the ``limit`` best names of ``tool`` with ratio ≥ threshold.

        Same result and order as ``rapidfuzz.process.extract(query, names, scorer=fuzz.ratio,
        score_cutoff=threshold, limit=limit)`` over the names in first-appearance order. The
        work depends on the postings of the query's rarest tokens, not on the number of names
        (see the module docstring); only a query longer than 1,000 characters reads every name.
        """
        from rapidfuzz import fuzz, process

        prefix = f"fz_{tool}_"
        len_values = self.arrays[prefix + "len_values"]
        if not len(len_values):
            return []
        chars, grams, unbounded = _length_needs(tuple(len_values.tolist()), len(query), threshold)
        candidates: list[np.ndarray] = []
        if unbounded:  # lengths no count can filter (an empty name, a huge query): every name of them
            off, order = self.arrays[prefix + "len_off"], self.arrays[prefix + "len_order"]
            candidates += [order[off[j]:off[j + 1]] for j in unbounded]
        if chars is not None:
            candidates.append(self._token_candidates(prefix, query, chars, grams))
        if not candidates:
            return []
        positions = candidates[0] if len(candidates) == 1 else np.unique(np.concatenate(candidates))
        if not len(positions):
            return []
        texts = self._name_texts(self.arrays[prefix + "names"][positions])
        hits = process.extract(query, texts, scorer=fuzz.ratio, score_cutoff=threshold - 1e-9, limit=None)
        scored = sorted(((int(positions[i]), score) for _, score, i in hits), key=lambda item: (-item[1], item[0]))
        return scored[:limit]

    def _token_candidates(self, prefix: str, query: str, chars: _TokenNeed, grams: _TokenNeed | None
                          ) -> np.ndarray:
        """Sorted positions of the names that can share enough tokens with ``query``.

        Of the query's n tokens (characters, or bigrams when every searched length needs some
        and their postings are shorter) a name needs k = ``need[length]``; holding k of n, it
        holds k − (n − r) of any r of them. So the postings of the r rarest are read and counted
        (a sort of their concatenation: only the postings touched), with r a little more than the
        prefix n − least + 1 (and more while the next postings are short); names with too few are
        dropped, and the survivors are then looked up in the next-rarest postings by binary
        search, one token at a time, until few are left to score.
        """
        tests = [(prefix + "uni", self._posting_spans(prefix + "uni", char_tokens(query)), chars)]
        if grams is not None and grams.covers:
            tests.append((prefix + "tok", self._posting_spans(prefix + "tok", bigram_tokens(query)), grams))
        name, spans, need = min(tests, key=lambda test: _prefix_cost(test[1], test[2]))
        n = len(spans)
        rarest = sorted(range(n), key=lambda t: (spans[t][1] - spans[t][0], t))
        sizes = [spans[t][1] - spans[t][0] for t in rarest]
        read = min(n, n - need.least + 1 + _PREFIX_EXTRA)  # a name must then hold 1 + _PREFIX_EXTRA of them
        while read < n and sizes[read] <= _READ_MORE:  # counting short postings costs less than looking them up
            read += 1
        post = self.arrays[name + "_post"]
        pieces = [post[spans[t][0]:spans[t][1]] for t in rarest[:read] if spans[t][1] > spans[t][0]]
        if not pieces:
            return np.zeros(0, dtype=np.int32)
        # every length needs `least` or more: a first cut without reading lengths
        names, counts = _held_at_least(np.concatenate(pieces), need.least - (n - read))
        # tokens each name still lacks beyond what the n − read unread ones could give (≤ 0: it may pass)
        lacking = need.need[self.arrays[prefix + "len"][names]] - (n - read) - counts
        keep = lacking <= 0
        names, lacking = names[keep], lacking[keep]
        for t in rarest[read:]:
            if len(names) <= _SCORE_DIRECTLY:
                break  # scoring a few names costs less than another lookup
            lacking += 1 - _members(names, post[spans[t][0]:spans[t][1]])
            keep = lacking <= 0
            names, lacking = names[keep], lacking[keep]
        return names

    def _posting_spans(self, prefix: str, tokens: list[int]) -> list[tuple[int, int]]:
        """[start, stop) of each token's posting list in ``{prefix}_post`` ((0, 0) for an unknown token)."""
        keys, off = self.arrays[f"{prefix}_keys"], self.arrays[f"{prefix}_off"]
        at = np.searchsorted(keys, np.array(tokens, dtype=np.uint64)).tolist()
        known = [j < len(keys) and keys.item(j) == t for j, t in zip(at, tokens)]
        return [(off.item(j), off.item(j + 1)) if k else (0, 0) for j, k in zip(at, known)]

    def _name_texts(self, name_ids: np.ndarray) -> list[str]:
        """The texts of these name ids (few: one by one; many: one Arrow take)."""
        if len(name_ids) <= 32:
            return [self.name_text(int(i)) for i in name_ids.tolist()]
        return self.names.take(pa.array(name_ids)).to_pylist()

    def name_group(self, tool: str, position: int) -> np.ndarray:
        """Rows that carry the name at ``position``: the lowest of each (options, city)."""
        off = self.arrays[f"fz_{tool}_grp_off"]
        return self.arrays[f"fz_{tool}_grp_entry"][off[position]:off[position + 1]]

    def name_of_position(self, tool: str, position: int) -> str:
        return self.name_text(int(self.arrays[f"fz_{tool}_names"][position]))

    # -------------------------------------------------------------- nearest
    def near_sites(self, tool: str, lng: float, lat: float, bound_m: float) -> list[int]:
        """Ascending rows of the distinct sites of ``tool`` whose first point lies within ``bound_m``.

        The sites are stored sorted by ``nn_key`` (tool, 0.01° latitude row, 0.01° longitude
        cell): the rows and cells a circle of this radius can reach (:func:`grid_reach`) are
        ``numpy.searchsorted`` ranges of that array, and the sites in them are kept when their
        haversine distance is within the bound. Nothing is built and nothing is imported; the
        caller decides with the exact distance, so the radius carries a hair of margin.
        """
        reach = bound_m * (1 + 1e-9) + 1e-3
        code = TOOL_CODE[tool]
        keys = self.nn_key
        row_lo, row_hi, cells = grid_reach(lng, lat, reach)
        start = int(np.searchsorted(keys, np.uint64(grid_key(code, row_lo, 0))))
        stop = int(np.searchsorted(keys, np.uint64(grid_key(code, row_hi, _CELL_MASK)), side="right"))
        if stop <= start:
            return []
        if cells is None or stop - start <= _SCAN_SITES + 2 * (row_hi - row_lo + 1) * len(cells):
            found = np.arange(start, stop)  # few sites in the band (or every longitude reachable): check them all
        else:
            rows = (np.uint64(code) << np.uint64(40)) | \
                (np.arange(row_lo, row_hi + 1, dtype=np.uint64) << np.uint64(20))
            low = (rows[:, None] | np.array([c[0] for c in cells], dtype=np.uint64)[None, :]).ravel()
            high = (rows[:, None] | np.array([c[1] for c in cells], dtype=np.uint64)[None, :]).ravel()
            band = keys[start:stop]
            firsts = np.searchsorted(band, low) + start
            lasts = np.searchsorted(band, high, side="right") + start
            spans = [(a, b) for a, b in zip(firsts.tolist(), lasts.tolist()) if b > a]
            if not spans:
                return []
            found = np.concatenate([np.arange(a, b) for a, b in spans]) if len(spans) > 1 else np.arange(*spans[0])
        near = found[haversine_many_m(lng, lat, self.nn_lng[found], self.nn_lat[found]) <= reach]
        return sorted(self.nn_entry[near].tolist())
