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

The ``evidence`` column holds each response's evidence views
(:func:`mobility_env.mobilitybench.evidence.encode_evidence`) under ``EVIDENCE_SCHEMA``, recorded in ``meta.json``
as ``evidence_version``; opened by code of another schema it is not read (:attr:`ReplayIndex.evidence_ok` is False,
the views are computed from the decoded responses) and a :class:`~mobility_env.layout.FormatVersionWarning` says so.
The ``compact`` column holds :func:`mobility_env.mobilitybench.observation.format_response` texts of
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
import json
import math
import os
import warnings
from pathlib import Path
from typing import Any, Callable, NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc

from ..errors import CorruptDataError
from .index_build import BATCH_ROWS, compute_arrays
from .index_format import (_CELL_MASK, _INDEX_COLUMNS, INDEX_VERSION, META_FILE, NAMES_FILE, TOOL_CODE,
                           bigram_tokens, char_tokens, expected_arrays, grid_key, grid_reach,
                           haversine_many_m, index_files, key_hash, parquet_fingerprint)
from .index_load import (LOAD_ERRORS, cell_reader, check_shapes, compact_version_ok, derived_usable,
                         evidence_version_ok,
                         open_episodes_arrow, validate_unverified_parquet, validated)
from ..layout import (ARROW_FILE, INDEX_DIR, SANDBOX_FILE, DerivedFileWarning, DirectoryCheck, FormatVersionWarning,
                      check_built_directory, warn_once)

_NEVER = np.iinfo(np.int32).max  # "no bound at this name length" in the fuzzy filters
_PREFIX_EXTRA = 2           # fuzzy: postings read and counted beyond the prefix (the rest are looked up)
_READ_MORE = 256            # fuzzy: next-rarest postings this short are counted too
_SCORE_DIRECTLY = 16        # fuzzy candidates this few are scored by rapidfuzz without more token lookups
_SCAN_SITES = 64            # a latitude band holding this few sites (plus 2 per cell range) is checked whole


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
                 batches: list[pa.RecordBatch], batch_rows: int, compact_ok: bool, evidence_ok: bool = False):
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
        self.evidence_ok = evidence_ok and "evidence" in self.columns
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
            if not derived_usable(check, index_files(), "prebuilt replay index"):
                return None
            try:
                return cls._load(directory, check)
            except LOAD_ERRORS as exc:
                raise CorruptDataError(directory / INDEX_DIR, f"matches the manifest but does not load ({exc}); "
                                                              f"run `mobility-env index {directory}`") from exc
        index = None
        if (index_dir / META_FILE).exists() and (directory / ARROW_FILE).exists():
            try:
                index = cls._load(directory, check)
            except LOAD_ERRORS as exc:
                warnings.warn(f"{directory}: the replay index is unreadable ({exc}); building it in memory. Run "
                              f"`mobility-env index {directory}` to write it again.", DerivedFileWarning, stacklevel=2)
        if index is None or index.episodes is None:
            validate_unverified_parquet(directory)  # what the sandbox reads instead: no checksum vouches for it
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
            validated(names_file, index_dir / NAMES_FILE)
            for batch in batches:
                validated(batch, directory / ARROW_FILE)
            check_shapes(arrays, meta, len(names_file), rows)
        index = cls(arrays, meta, names_file, batches, int(meta.get("batch_rows", BATCH_ROWS)),
                    compact_ok=compact_version_ok(directory, meta),
                    evidence_ok=evidence_version_ok(directory, meta))
        index.episodes = open_episodes_arrow(directory, check)
        index.source = directory / ARROW_FILE
        return index

    # -------------------------------------------------------------- row access
    def value(self, column: str, row: int) -> Any:
        """One cell, read straight from the (memory-mapped) Arrow buffers."""
        readers = self._readers.get(column)
        if readers is None:
            readers = self._readers[column] = [cell_reader(chunk) for chunk in self.columns[column]]
        if self.shift is not None:
            return readers[row >> self.shift](row & (self.batch_rows - 1))
        return readers[row // self.batch_rows](row % self.batch_rows)

    def points(self, row: int) -> tuple[tuple[float, float], ...]:
        start, stop = int(self.pt_off[row]), int(self.pt_off[row + 1])
        return tuple(zip(self.pt_lng[start:stop].tolist(), self.pt_lat[start:stop].tolist()))

    def name_text(self, name_id: int) -> str:
        if self._name_reader is None:
            self._name_reader = cell_reader(self.names)
        return self._name_reader(name_id)

    def episode_span(self, episode_id: str) -> tuple[int, int] | None:
        """Rows [start, stop) of an episode, from the id hashes (needs ``self.episodes``)."""
        assert self.episodes is not None
        if self._episode_id_reader is None:
            column = self.episodes.column("episode_id")
            self._episode_id_reader = cell_reader(column.chunk(0)) if column.num_chunks == 1 else \
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
