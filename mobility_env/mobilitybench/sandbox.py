"""The deterministic replay sandbox: serve a tool call from the frozen snapshot.

``Sandbox.lookup(tool, arguments, episode_id)`` canonicalizes the call and tries, in order,

1. **exact**: the canonical key (``mobility_env.canonical``);
2. **fuzzy**: the most similar recorded name (rapidfuzz ``ratio`` ≥ ``fuzzy_threshold``) for
   name-keyed tools (query_poi keywords, traffic_status road, weather_query city,
   search_around_poi keywords near the same point); a different city costs
   ``city_mismatch_penalty`` points;
3. **nearest**: the recorded call whose coordinates are all within ``max_distance_m``
   (haversine; over the whole sandbox the distinct call sites on a 0.01° grid, searched by
   ``searchsorted`` and a vectorized haversine, see :mod:`mobility_env.mobilitybench.replay_index`), with equal options
   (driving strategies, bus strategy, forecast flag) and the same number and order of
   waypoints;
4. **miss**: nothing matched. A call whose coordinates match but whose strategy or
   waypoints do not is a miss whose ``detail`` says which options were recorded: never a
   silent fallback to the default route.

Each stage runs on the episode's own snapshot first, then (``global_fallback``) on the whole
sandbox. The result says which stage matched, in which scope, with the score or distance.

Opening is lazy: nothing is read until the first lookup. A directory written by
``mobility-env build`` carries a prebuilt, memory-mapped index (:mod:`mobility_env.mobilitybench.replay_index`):
the exact stage is a ``searchsorted`` over key hashes, the global fuzzy stage character and
bigram inverted indexes, the global nearest stage a 0.01° grid of distinct call sites, and responses are
read from an uncompressed Arrow file shared by every process. A directory without it (built
by an older version) still opens: the index is then built in memory from the Parquet file,
with a warning saying how to write it once.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
import warnings
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import pyarrow as pa
import pyarrow.parquet as pq

from .build import sandbox_rows
from ..canonical import CanonicalRequest, canonical_request
from ..errors import SandboxError
from ..geo import haversine_m
from ..layout import EPISODES_FILE, MANIFEST_FILE, SANDBOX_FILE, SANDBOX_SCHEMA, check_built_directory, read_manifest
from .index_format import TOOL_CODE, key_hash
from .replay_index import ReplayIndex
from .toolkinds import TOOL_KINDS
from ..tools import TOOLS, canonical_tool_name
from ..trajectory import LazyJSON, MatchKind

logger = logging.getLogger(__name__)
# kinds matched by name after exact (kept for callers of the old constant; TOOL_KINDS decides)
FUZZY_KINDS = frozenset(name for name, kind in TOOL_KINDS.items() if {"fuzzy", "near_name"} & set(kind.match_stages))
LARGE_UNINDEXED_ROWS = 50_000  # above this, opening without the prebuilt index warns
STORED_CACHE = 256  # recent undecoded cells shared by an episode's records (Sandbox.stored)
NOTED_SPANS = 4096  # episode spans the store noted (Sandbox.note_span); more than it keeps episodes


class MissingIndexWarning(UserWarning):
    """A large built directory has no prebuilt replay index (slow open, memory not shared)."""


@dataclass(frozen=True)
class LookupConfig:
    """Matching knobs. Defaults: fuzzy ratio ≥ 80, coordinates within 300 m."""

    fuzzy_threshold: float = 80.0
    max_distance_m: float = 300.0
    city_mismatch_penalty: float = 10.0
    global_fallback: bool = True


@dataclass
class LookupResult:
    """How a call was served: the provenance the env copies into its :class:`CallRecord`.

    ``response`` (None on a miss) and ``entry_arguments`` (the recorded arguments of the
    serving entry) are decoded from the stored text on first read; :attr:`stored` holds them
    undecoded (:class:`LazyJSON`), for a record that may never need them.
    """

    match: str                     # a MatchKind: "exact" | "fuzzy" | "nearest" | "miss"
    tool: str
    key: str
    entry: int | None = None
    scope: str | None = None       # "episode" | "global"
    score: float | None = None     # fuzzy similarity 0..100
    distance_m: float | None = None
    detail: str = ""
    entry_episode_id: str | None = None
    entry_gold_index: int | None = None
    stored: dict[str, Any] = field(default_factory=dict, repr=False)  # "response"/"entry_arguments" as LazyJSON

    @property
    def hit(self) -> bool:
        return self.match != MatchKind.MISS

    @property
    def response(self) -> Any:
        return self._decoded("response")

    @property
    def entry_arguments(self) -> dict[str, Any] | None:
        return self._decoded("entry_arguments")

    def _decoded(self, name: str) -> Any:
        value = self.stored.get(name)
        if type(value) is LazyJSON:
            value = self.stored[name] = value.decode()
        return value


# One memory-mapped index per built directory and process, shared by every Sandbox (and env) opened on it:
# each mapped array holds a file descriptor, so N envs would otherwise hold N x ~57 of them. Read-only, so
# sharing is safe; a changed directory (manifest or Parquet files) gets a new key. Freed with its last user.
_SHARED_INDEXES: "weakref.WeakValueDictionary[tuple, ReplayIndex]" = weakref.WeakValueDictionary()
_SHARED_LOCK = threading.Lock()


def _shared_index(directory: Path) -> ReplayIndex | None:
    directory = directory.resolve()
    stats: list[tuple[Any, ...]] = []
    for name in (MANIFEST_FILE, SANDBOX_FILE, EPISODES_FILE):
        try:
            st = (directory / name).stat()
            stats.append((name, st.st_ino, st.st_size, st.st_mtime_ns))
        except OSError:
            stats.append((name, None))
    key = (str(directory), tuple(stats))
    with _SHARED_LOCK:
        index = _SHARED_INDEXES.get(key)
        if index is None:
            index = ReplayIndex.load(directory)
            if index is not None:
                _SHARED_INDEXES[key] = index
        return index


class Sandbox:
    """Replay of recorded tool responses from a built directory or from episodes.

    >>> from mobility_env import Sandbox                               # doctest: +SKIP
    >>> box = Sandbox.open("datasets/default")                          # doctest: +SKIP
    >>> box.lookup("query_poi", {"keywords": "..."}, episode_id="...").match   # doctest: +SKIP
    """

    def __init__(self, table: pa.Table | None = None, *, directory: Path | None = None,
                 episode_ranges: dict[str, tuple[int, int]] | None = None, config: LookupConfig | None = None):
        self.directory = directory
        self.config = config or LookupConfig()
        self._table = table
        self._episode_ranges = episode_ranges
        self._index: ReplayIndex | None = None
        self._last_span: tuple[str, tuple[int, int] | None] | None = None
        self._noted_spans: dict[str, tuple[int, int]] = {}
        self._last_rows: tuple[range, dict[int, list[tuple[int, int]]]] | None = None
        self._stored: dict[tuple[str, int], LazyJSON] = {}

    # ----------------------------------------------------------------- construction
    @classmethod
    def open(cls, directory: str | os.PathLike, config: LookupConfig | None = None) -> "Sandbox":
        """Open a built directory lazily: its files are checked against ``manifest.json`` now
        (:func:`~mobility_env.layout.check_built_directory`; a changed Parquet file raises
        :class:`~mobility_env.errors.CorruptDataError`), read at the first lookup."""
        directory = Path(directory)
        for name in (SANDBOX_FILE, EPISODES_FILE):
            if not (directory / name).exists():
                raise SandboxError(f"{directory}: missing {name}; "
                                   f"build the directory with `mobility-env build SRC --out {directory}`")
        check_built_directory(directory)
        return cls(directory=directory, config=config)

    @classmethod
    def from_episodes(cls, episodes: Iterable[Any], config: LookupConfig | None = None) -> "Sandbox":
        """An in-memory sandbox over episodes (same rows a build would write)."""
        rows: list[dict[str, Any]] = []
        ranges: dict[str, tuple[int, int]] = {}
        for episode in episodes:
            start = len(rows)
            rows.extend(sandbox_rows(episode))
            ranges[episode.episode_id] = (start, len(rows))
        table = pa.Table.from_pylist(rows, schema=SANDBOX_SCHEMA)
        return cls(table, episode_ranges=ranges, config=config)

    @property
    def table(self) -> pa.Table:
        """The whole sandbox table (decompressed from Parquet; lookups do not need it)."""
        if self._table is None:
            assert self.directory is not None
            try:
                self._table = pq.read_table(self.directory / SANDBOX_FILE, memory_map=True)
            except (OSError, ValueError) as exc:
                raise SandboxError(f"{self.directory / SANDBOX_FILE}: cannot read ({exc})") from exc
        return self._table

    @property
    def index(self) -> ReplayIndex:
        """The replay index: memory-mapped when the directory has one, else built in memory."""
        if self._index is None:
            if self.directory is not None:
                try:
                    self._index = _shared_index(self.directory)
                except (OSError, ValueError, KeyError) as exc:  # a damaged index is rebuilt, the parquet decides
                    logger.warning("%s: replay index unreadable (%s); rebuilding it in memory", self.directory, exc)
            if self._index is None:
                started = time.perf_counter()
                self._index = ReplayIndex.from_table(self.table)
                if self.directory is not None:
                    message = (f"{self.directory} has no prebuilt replay index (built by an older version, or "
                               f"sandbox.parquet changed); built it in memory in {time.perf_counter() - started:.1f}s. "
                               f"Write it once with `mobility-env index {self.directory}` (or rebuild the "
                               f"directory) for a fast, shared open.")
                    if self._index.rows > LARGE_UNINDEXED_ROWS:
                        warnings.warn(message, MissingIndexWarning, stacklevel=3)
                    else:
                        logger.info(message)
        return self._index

    @property
    def episode_ranges(self) -> dict[str, tuple[int, int]]:
        if self._episode_ranges is None:
            assert self.directory is not None
            try:
                table = pq.read_table(self.directory / EPISODES_FILE,
                                      columns=["episode_id", "sandbox_start", "sandbox_stop"])
            except (OSError, ValueError) as exc:  # ArrowInvalid is a ValueError
                raise SandboxError(f"{self.directory / EPISODES_FILE}: cannot read ({exc})") from exc
            self._episode_ranges = dict(zip(table.column("episode_id").to_pylist(), zip(
                table.column("sandbox_start").to_pylist(), table.column("sandbox_stop").to_pylist())))
        return self._episode_ranges

    def __len__(self) -> int:
        return self.index.rows

    @property
    def manifest(self) -> dict[str, Any]:
        return (read_manifest(self.directory) or {}) if self.directory is not None else {}

    # ----------------------------------------------------------------- row access
    def entry_value(self, column: str, entry: int) -> Any:
        """One cell of the sandbox table (``column`` of ``SANDBOX_SCHEMA``) without reading the column."""
        return self.index.value(column, entry)

    def stored(self, column: str, entry: int) -> LazyJSON:
        """The JSON cell ``column`` (``response`` or ``arguments``) of ``entry``, undecoded; the same
        :class:`LazyJSON` for the same cell while it is recent, so an episode's recorded response and
        the call it serves decode once (the cache keeps the last :data:`STORED_CACHE` cells). A response carries
        its stored evidence views when the directory holds them under this schema (the verifier then reads those
        and never decodes it)."""
        key = (column, entry)
        lazy = self._stored.get(key)
        if lazy is None:
            if len(self._stored) >= STORED_CACHE:
                self._stored.clear()
            read = self.index.value
            views = (lambda: read("evidence", entry)) if column == "response" and self.index.evidence_ok else None
            lazy = self._stored[key] = LazyJSON(lambda: read(column, entry),
                                                (self.index.source or self.directory, entry + 1, column), views)
        return lazy

    def with_stored_responses(self, calls: Iterable[Any]) -> int:
        """Give call records read back from a file (their responses decoded from JSON) the stored responses that
        served them, so offline scoring reads the build's stored evidence as the env's ``finish`` does instead of
        computing every view again from the decoded response. A record keeps its own response unless its ``entry``
        is a row of this sandbox whose stored response decodes equal to it (a record of other data, or an edited
        one, is read as it is). Nothing changes without stored evidence. Returns how many records were given
        their stored response."""
        if not self.index.evidence_ok:
            return 0
        rows, given = len(self), 0
        for call in calls:
            entry, held = call.entry, call.__dict__.get("response")
            if held is None or type(held) is LazyJSON or type(entry) is not int or not 0 <= entry < rows:
                continue
            stored = self.stored("response", entry)
            if stored.decode() == held:
                call.__dict__["response"] = stored
                given += 1
        return given

    def response(self, entry: int) -> Any:
        return json.loads(self.index.value("response", entry))

    def entry_arguments(self, entry: int) -> dict[str, Any]:
        return json.loads(self.index.value("arguments", entry))

    def observation_text(self, entry: int, obs_format: str) -> str | None:
        """The observation of ``entry`` as ``observation.format_response`` writes it, when stored.

        ``raw`` is the stored response text itself (``build`` writes it in exactly that form);
        ``compact`` is precomputed by the build. None when it must be computed.
        """
        index = self.index
        if obs_format == "raw":
            return index.value("response", entry)
        if obs_format == "compact" and index.compact_ok:
            return index.value("compact", entry)
        return None

    def note_span(self, episode_id: str, start: int, stop: int) -> None:
        """Remember an episode's rows as its episodes row states them (the store reads that row when it
        materializes the episode), so its first lookup does not search the id hashes again."""
        if len(self._noted_spans) >= NOTED_SPANS:
            self._noted_spans.clear()
        self._noted_spans[episode_id] = (start, stop)

    def episode_span(self, episode_id: str) -> tuple[int, int] | None:
        """Sandbox rows [start, stop) of an episode, None if unknown (no dict of every id when indexed)."""
        if self._episode_ranges is None and self.index.episodes is not None:
            last = self._last_span  # an env asks for the same episode at every step
            if last is not None and last[0] == episode_id:
                return last[1]
            span = self._noted_spans.get(episode_id) or self.index.episode_span(episode_id)
            self._last_span = (episode_id, span)
            return span
        return self.episode_ranges.get(episode_id)

    # ----------------------------------------------------------------- lookup
    def lookup(self, tool: str, arguments: dict[str, Any], episode_id: str | None = None) -> LookupResult:
        """Serve one *schema-valid* call. Deterministic: ties go to the lowest entry."""
        tool = canonical_tool_name(tool) or tool
        if tool not in TOOLS or tool == "finish":
            raise ValueError(f"not a map tool: {tool!r}")
        request = canonical_request(tool, arguments)
        index = self.index
        scopes: list[tuple[str, range | None]] = []
        if episode_id is not None:
            span = self.episode_span(episode_id)
            if span is not None:
                scopes.append(("episode", range(*span)))
        if self.config.global_fallback or not scopes:
            scopes.append(("global", None))
        near_misses: list[str] = []
        digest = key_hash(request.tool, request.key)
        for scope, entries in scopes:
            result = self._lookup_in(index, request, digest, scope, entries, near_misses)
            if result is not None:
                return self._fill(index, result, episode_id if scope == "episode" else None)
        detail = f"no recorded {tool} call matches {request.key!r}"
        if near_misses:
            detail += "; " + near_misses[0]
        return LookupResult(MatchKind.MISS, tool, request.key, detail=detail)

    def _episode_rows(self, index: ReplayIndex, entries: range) -> dict[int, list[tuple[int, int]]]:
        """The valid rows of an episode's span by tool code, with their key hashes: read once per episode
        (an env asks for the same episode at every step)."""
        cached = self._last_rows
        if cached is not None and cached[0] == entries:
            return cached[1]
        start, stop = entries.start, entries.stop
        codes, valid = index.tool_code[start:stop].tolist(), index.valid[start:stop].tolist()
        hashes = index.key_hash[start:stop].tolist()
        rows: dict[int, list[tuple[int, int]]] = {}
        for k, (c, v) in enumerate(zip(codes, valid)):
            if v:
                rows.setdefault(c, []).append((start + k, hashes[k]))
        self._last_rows = (entries, rows)
        return rows

    def _fill(self, index: ReplayIndex, result: LookupResult, episode_id: str | None = None) -> LookupResult:
        """Provenance of the serving entry (``episode_id``: its episode, when the caller knows it); its
        response and arguments stay text until read (LazyJSON)."""
        entry = result.entry
        assert entry is not None
        result.stored = {"response": self.stored("response", entry), "entry_arguments": self.stored("arguments", entry)}
        result.entry_episode_id = episode_id if episode_id is not None else index.value("episode_id", entry)
        gold = index.value("gold_index", entry)
        result.entry_gold_index = None if gold < 0 else gold
        return result

    def _lookup_in(self, index: ReplayIndex, req: CanonicalRequest, digest: int, scope: str, entries: range | None,
                   near_misses: list[str]) -> LookupResult | None:
        code = TOOL_CODE[req.tool]
        if entries is None:
            entry = index.exact(req.tool, req.key)
            if entry is not None:
                return LookupResult(MatchKind.EXACT, req.tool, req.key, entry, scope, 100.0, 0.0)
            candidates: list[int] | None = None
        else:
            rows = self._episode_rows(index, entries).get(code, ())
            candidates = [i for i, _ in rows]
            for i, row_hash in rows:
                if row_hash == digest and index.value("key", i) == req.key:
                    return LookupResult(MatchKind.EXACT, req.tool, req.key, i, scope, 100.0, 0.0)
        stages = TOOL_KINDS[TOOLS[req.tool].kind].match_stages
        if "fuzzy" in stages:
            found = self._fuzzy(index, req, candidates)
            if found is not None:
                entry, score = found
                return LookupResult(MatchKind.FUZZY, req.tool, req.key, entry, scope, score, None,
                                    detail=f"name {index.value('name', entry)!r} ~ {req.name!r}")
        if req.points and ("nearest" in stages or "near_name" in stages):
            near = self._nearest(index, req, candidates, near_misses, by_name="near_name" in stages)
            if near is not None:
                entry, distance, near_score = near
                # same place, similar keywords (search_around_poi) is a name match; any move is nearest
                match = (MatchKind.FUZZY if distance <= 0.5 and near_score is not None and near_score < 100.0
                         else MatchKind.NEAREST)
                return LookupResult(match, req.tool, req.key, entry, scope, near_score, distance,
                                    detail=f"recorded call within {distance:.0f} m")
        return None

    def _fuzzy(self, index: ReplayIndex, req: CanonicalRequest,
               candidates: list[int] | None) -> tuple[int, float] | None:
        from rapidfuzz import fuzz

        threshold = self.config.fuzzy_threshold
        if candidates is None:
            # (name, options, city) groups keep their lowest row: equal scores tie to it anyway
            pool = [(int(i), score) for position, score in index.fuzzy_names(req.tool, req.name, threshold)
                    for i in index.name_group(req.tool, position).tolist()]
        else:
            pool = [(i, fuzz.ratio(req.name, index.value("name", i))) for i in candidates]
        options = index.options_vocab.get(req.options, -1)
        city = index.city_vocab.get(req.city, -1)
        penalize = bool(req.city) and req.tool != "weather_query"
        best: tuple[float, int] | None = None
        for i, score in pool:
            if int(index.options_code[i]) != options:
                continue
            row_city = int(index.city_code[i])
            if penalize and row_city != index.empty_city and row_city != city:
                score -= self.config.city_mismatch_penalty
            if score >= threshold and (best is None or (score, -i) > (best[0], -best[1])):
                best = (score, i)
        return None if best is None else (best[1], best[0])

    def _nearest(self, index: ReplayIndex, req: CanonicalRequest, candidates: list[int] | None,
                 near_misses: list[str], *, by_name: bool = False) -> tuple[int, float, float | None] | None:
        bound = self.config.max_distance_m
        if candidates is None:
            lng, lat = req.points[0]
            # distinct sites only: rows with equal points, options and name rank by row alone
            candidates = index.near_sites(req.tool, lng, lat, bound)
        is_route = TOOLS[req.tool].kind == "route"
        options = index.options_vocab.get(req.options, -1)
        vocab = index.meta["options_vocab"]
        best: tuple[float, float, int, float | None] | None = None
        for i in candidates:
            points = index.points(i)
            if len(points) < 2 and len(req.points) >= 2 and is_route:
                continue
            distances = [haversine_m(a, b) for a, b in zip(req.points, points)]
            route_points = min(len(points), 2) if is_route else 1
            if not distances or max(distances[:route_points]) > bound:
                continue
            row_options = int(index.options_code[i])
            if len(points) != len(req.points) or max(distances) > bound or row_options != options:
                recorded = vocab[row_options] or "default"
                near_misses.append(f"a {req.tool} between these points is recorded with strategy {recorded!r} and "
                                   f"{max(len(points) - 2, 0)} waypoint(s); strategies and waypoints must match")
                continue
            score = None
            if by_name:  # nearby search: the recorded keywords must be similar too
                from rapidfuzz import fuzz  # imported here: a first route or geocoding lookup need not wait on it

                name = index.value("name", i)
                score = 100.0 if req.name == name else fuzz.ratio(req.name, name)
                if score < self.config.fuzzy_threshold:
                    continue
            rank = (max(distances), -(score or 0.0), i, score)
            if best is None or rank < best:
                best = rank
        if best is None:
            return None
        return best[2], best[0], best[3]
