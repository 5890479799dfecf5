"""The deterministic replay sandbox: serve a tool call from the frozen snapshot.

``Sandbox.lookup(tool, arguments, episode_id)`` canonicalizes the call and tries, in order,

1. **exact**: the canonical key (``mobility_env.canonical``);
2. **fuzzy**: the most similar recorded name (rapidfuzz ``ratio`` ≥ ``fuzzy_threshold``) for
   name-keyed tools (query_poi keywords, traffic_status road, weather_query city,
   search_around_poi keywords near the same point); a different city costs
   ``city_mismatch_penalty`` points;
3. **nearest**: the recorded call whose coordinates are all within ``max_distance_m``
   (haversine; scikit-learn BallTree over the whole sandbox), with equal options
   (driving strategies, bus strategy, forecast flag) and the same number and order of
   waypoints;
4. **miss**: nothing matched. A call whose coordinates match but whose strategy or
   waypoints do not is a miss whose ``detail`` says which options were recorded: never a
   silent fallback to the default route.

Each stage runs on the episode's own snapshot first, then (``global_fallback``) on the whole
sandbox. The result says which stage matched, in which scope, with the score or distance.
Opening is lazy: nothing is read until the first lookup, and indexes are built on first use.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from .build import EPISODES_FILE, MANIFEST_FILE, SANDBOX_FILE, SANDBOX_SCHEMA, episode_row, sandbox_rows
from .canonical import CanonicalRequest, canonical_request
from .errors import SandboxError
from .tools import TOOLS, canonical_tool_name

EARTH_RADIUS_M = 6_371_008.8
FUZZY_KINDS = frozenset({"poi", "traffic", "weather", "around"})
_LOOKUP_COLUMNS = ("episode_id", "tool", "key", "name", "city", "options", "points", "lng", "lat", "gold_index", "valid")


@dataclass(frozen=True)
class LookupConfig:
    """Matching knobs. Defaults: fuzzy ratio ≥ 80, coordinates within 300 m."""

    fuzzy_threshold: float = 80.0
    max_distance_m: float = 300.0
    city_mismatch_penalty: float = 10.0
    global_fallback: bool = True


@dataclass
class LookupResult:
    """How a call was served. ``response`` is the recorded response (None on a miss)."""

    match: str                     # "exact" | "fuzzy" | "nearest" | "miss"
    tool: str
    key: str
    entry: int | None = None
    scope: str | None = None       # "episode" | "global"
    score: float | None = None     # fuzzy similarity 0..100
    distance_m: float | None = None
    detail: str = ""
    response: Any = None
    entry_episode_id: str | None = None
    entry_gold_index: int | None = None
    entry_arguments: dict[str, Any] | None = field(default=None, repr=False)

    @property
    def hit(self) -> bool:
        return self.match != "miss"


def haversine_m(lng1: float, lat1: float, lng2: float, lat2: float) -> float:
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lng2 - lng1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * EARTH_RADIUS_M * math.asin(min(1.0, math.sqrt(a)))


def _parse_points(text: str) -> tuple[tuple[float, float], ...]:
    if not text:
        return ()
    return tuple((float(a), float(b)) for a, b in (p.split(",") for p in text.split(";")))


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
        self._columns: dict[str, Any] | None = None
        self._exact: dict[tuple[str, str], int] | None = None
        self._by_tool: dict[str, np.ndarray] = {}
        self._trees: dict[str, Any] = {}
        self._names: dict[str, tuple[list[str], list[list[int]]]] = {}
        self._points_cache: dict[int, tuple[tuple[float, float], ...]] = {}

    # ----------------------------------------------------------------- construction
    @classmethod
    def open(cls, directory: str | os.PathLike, config: LookupConfig | None = None) -> "Sandbox":
        """Open a built directory lazily (files are checked now, read at first lookup)."""
        directory = Path(directory)
        for name in (SANDBOX_FILE, EPISODES_FILE):
            if not (directory / name).exists():
                raise SandboxError(f"{directory}: missing {name}; build the directory with `mobility-env build SRC --out {directory}`")
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
        if self._table is None:
            assert self.directory is not None
            try:
                self._table = pq.read_table(self.directory / SANDBOX_FILE, memory_map=True)
            except (OSError, ValueError) as exc:
                raise SandboxError(f"{self.directory / SANDBOX_FILE}: cannot read ({exc})") from exc
        return self._table

    @property
    def episode_ranges(self) -> dict[str, tuple[int, int]]:
        if self._episode_ranges is None:
            assert self.directory is not None
            try:
                table = pq.read_table(self.directory / EPISODES_FILE, columns=["episode_id", "sandbox_start", "sandbox_stop"])
            except (OSError, ValueError) as exc:  # ArrowInvalid is a ValueError
                raise SandboxError(f"{self.directory / EPISODES_FILE}: cannot read ({exc})") from exc
            self._episode_ranges = {eid: (start, stop) for eid, start, stop in zip(
                table.column("episode_id").to_pylist(), table.column("sandbox_start").to_pylist(),
                table.column("sandbox_stop").to_pylist())}
        return self._episode_ranges

    def __len__(self) -> int:
        return self.table.num_rows

    @property
    def manifest(self) -> dict[str, Any]:
        if self.directory is None or not (self.directory / MANIFEST_FILE).exists():
            return {}
        return json.loads((self.directory / MANIFEST_FILE).read_text(encoding="utf-8"))

    # ----------------------------------------------------------------- column access
    @property
    def columns(self) -> dict[str, Any]:
        if self._columns is None:
            table = self.table
            cols = {name: table.column(name).to_pylist() for name in _LOOKUP_COLUMNS if name not in ("lng", "lat")}
            cols["lng"] = table.column("lng").to_numpy()
            cols["lat"] = table.column("lat").to_numpy()
            self._columns = cols
        return self._columns

    def entry_points(self, entry: int) -> tuple[tuple[float, float], ...]:
        points = self._points_cache.get(entry)
        if points is None:
            points = self._points_cache[entry] = _parse_points(self.columns["points"][entry])
        return points

    def response(self, entry: int) -> Any:
        return json.loads(self.table.column("response")[entry].as_py())

    def entry_arguments(self, entry: int) -> dict[str, Any]:
        return json.loads(self.table.column("arguments")[entry].as_py())

    def episode_entries(self, episode_id: str) -> range:
        start, stop = self.episode_ranges.get(episode_id, (0, 0))
        return range(start, stop)

    # ----------------------------------------------------------------- indexes
    def _exact_index(self) -> dict[tuple[str, str], int]:
        if self._exact is None:
            index: dict[tuple[str, str], int] = {}
            cols = self.columns
            for i, (tool, key, valid) in enumerate(zip(cols["tool"], cols["key"], cols["valid"])):
                if valid:
                    index.setdefault((tool, key), i)
            self._exact = index
        return self._exact

    def _tool_entries(self, tool: str) -> np.ndarray:
        if tool not in self._by_tool:
            cols = self.columns
            self._by_tool[tool] = np.array([i for i, (t, v) in enumerate(zip(cols["tool"], cols["valid"])) if t == tool and v],
                                           dtype=np.int64)
        return self._by_tool[tool]

    def _tree(self, tool: str):
        if tool not in self._trees:
            from sklearn.neighbors import BallTree

            entries = self._tool_entries(tool)
            cols = self.columns
            lat, lng = cols["lat"][entries], cols["lng"][entries]
            ok = ~(np.isnan(lat) | np.isnan(lng))
            entries = entries[ok]
            tree = BallTree(np.radians(np.column_stack([lat[ok], lng[ok]])), metric="haversine") if len(entries) else None
            self._trees[tool] = (tree, entries)
        return self._trees[tool]

    def _name_index(self, tool: str) -> tuple[list[str], list[list[int]]]:
        if tool not in self._names:
            groups: dict[str, list[int]] = {}
            names = self.columns["name"]
            for i in self._tool_entries(tool):
                groups.setdefault(names[int(i)], []).append(int(i))
            keys = list(groups)
            self._names[tool] = (keys, [groups[k] for k in keys])
        return self._names[tool]

    # ----------------------------------------------------------------- lookup
    def lookup(self, tool: str, arguments: dict[str, Any], episode_id: str | None = None) -> LookupResult:
        """Serve one *schema-valid* call. Deterministic: ties go to the lowest entry."""
        tool = canonical_tool_name(tool) or tool
        if tool not in TOOLS or tool == "finish":
            raise ValueError(f"not a map tool: {tool!r}")
        request = canonical_request(tool, arguments)
        scopes: list[tuple[str, Iterable[int] | None]] = []
        if episode_id is not None and episode_id in self.episode_ranges:
            scopes.append(("episode", self.episode_entries(episode_id)))
        if self.config.global_fallback or not scopes:
            scopes.append(("global", None))
        near_misses: list[str] = []
        for scope, entries in scopes:
            result = self._lookup_in(request, scope, entries, near_misses)
            if result is not None:
                return self._fill(result)
        detail = f"no recorded {tool} call matches {request.key!r}"
        if near_misses:
            detail += "; " + near_misses[0]
        return LookupResult("miss", tool, request.key, detail=detail)

    def _fill(self, result: LookupResult) -> LookupResult:
        entry = result.entry
        assert entry is not None
        result.response = self.response(entry)
        result.entry_episode_id = self.columns["episode_id"][entry]
        gold = self.columns["gold_index"][entry]
        result.entry_gold_index = None if gold < 0 else gold
        result.entry_arguments = self.entry_arguments(entry)
        return result

    def _lookup_in(self, req: CanonicalRequest, scope: str, entries: Iterable[int] | None,
                   near_misses: list[str]) -> LookupResult | None:
        cols = self.columns
        if entries is None:
            entry = self._exact_index().get((req.tool, req.key))
            if entry is not None:
                return LookupResult("exact", req.tool, req.key, entry, scope, 100.0, 0.0)
            candidates: Iterable[int] | None = None
        else:
            candidates = [i for i in entries if cols["tool"][i] == req.tool and cols["valid"][i]]
            for i in candidates:
                if cols["key"][i] == req.key:
                    return LookupResult("exact", req.tool, req.key, i, scope, 100.0, 0.0)
        kind = TOOLS[req.tool].kind
        if kind in FUZZY_KINDS and kind != "around":
            found = self._fuzzy(req, candidates)
            if found is not None:
                entry, score = found
                return LookupResult("fuzzy", req.tool, req.key, entry, scope, score, None,
                                    detail=f"name {cols['name'][entry]!r} ~ {req.name!r}")
        if req.points:
            found = self._nearest(req, candidates, near_misses)
            if found is not None:
                entry, distance, score = found
                # same place, similar keywords (search_around_poi) is a name match; any move is nearest
                match = "fuzzy" if distance <= 0.5 and score is not None and score < 100.0 else "nearest"
                return LookupResult(match, req.tool, req.key, entry, scope, score, distance,
                                    detail=f"recorded call within {distance:.0f} m")
        return None

    def _fuzzy(self, req: CanonicalRequest, candidates: Iterable[int] | None) -> tuple[int, float] | None:
        from rapidfuzz import fuzz, process

        cols = self.columns
        threshold = self.config.fuzzy_threshold
        if candidates is None:
            names, groups = self._name_index(req.tool)
            hits = process.extract(req.name, names, scorer=fuzz.ratio, score_cutoff=threshold - 1e-9, limit=20)
            pool = [(i, score) for _, score, g in hits for i in groups[g]]
        else:
            pool = [(i, fuzz.ratio(req.name, cols["name"][i])) for i in candidates]
        best: tuple[float, int] | None = None
        for i, score in pool:
            if cols["options"][i] != req.options:
                continue
            if req.city and cols["city"][i] and cols["city"][i] != req.city and req.tool != "weather_query":
                score -= self.config.city_mismatch_penalty
            if score >= threshold and (best is None or (score, -i) > (best[0], -best[1])):
                best = (score, i)
        return None if best is None else (best[1], best[0])

    def _nearest(self, req: CanonicalRequest, candidates: Iterable[int] | None,
                 near_misses: list[str]) -> tuple[int, float, float | None] | None:
        from rapidfuzz import fuzz

        cols = self.columns
        bound = self.config.max_distance_m
        if candidates is None:
            tree, entries = self._tree(req.tool)
            if tree is None:
                return None
            lng, lat = req.points[0]
            idx = tree.query_radius(np.radians([[lat, lng]]), r=bound / EARTH_RADIUS_M)[0]
            candidates = sorted(int(entries[j]) for j in idx)
        best: tuple[float, float, int, float | None] | None = None
        for i in candidates:
            points = self.entry_points(i)
            if len(points) < 2 and len(req.points) >= 2 and TOOLS[req.tool].kind == "route":
                continue
            distances = [haversine_m(a[0], a[1], b[0], b[1]) for a, b in zip(req.points, points)]
            route_points = min(len(points), 2) if TOOLS[req.tool].kind == "route" else 1
            if not distances or max(distances[:route_points]) > bound:
                continue
            if len(points) != len(req.points) or max(distances) > bound or cols["options"][i] != req.options:
                recorded = cols["options"][i] or "default"
                near_misses.append(f"a {req.tool} between these points is recorded with strategy {recorded!r} and "
                                   f"{max(len(points) - 2, 0)} waypoint(s); strategies and waypoints must match")
                continue
            score = None
            if TOOLS[req.tool].kind == "around":
                score = 100.0 if req.name == cols["name"][i] else fuzz.ratio(req.name, cols["name"][i])
                if score < self.config.fuzzy_threshold:
                    continue
            rank = (max(distances), -(score or 0.0), i, score)
            if best is None or rank < best:
                best = rank
        if best is None:
            return None
        return best[2], best[0], best[3]
