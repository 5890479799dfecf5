"""The format of a built directory's replay index: its version, its files and arrays, and the keys,
name tokens and grid cells both the writer (:mod:`mobility_env.mobilitybench.index_build`) and the reader
(:mod:`mobility_env.mobilitybench.replay_index`, where the layout is described) compute the same way.
"""

from __future__ import annotations

import hashlib
import math
from pathlib import Path

import numpy as np

from ..geo import EARTH_RADIUS_M
from ..layout import ARROW_FILE, INDEX_DIR
from ..tools import MAP_TOOLS, TOOLS

#: The layout of ``sandbox_index/`` (bump by hand when an array is added, removed or changes meaning).
INDEX_VERSION = 1
META_FILE = "meta.json"
NAMES_FILE = "names.arrow"

TOOL_ORDER: tuple[str, ...] = MAP_TOOLS
TOOL_CODE: dict[str, int] = {name: i for i, name in enumerate(TOOL_ORDER)}
FUZZY_TOOLS: tuple[str, ...] = tuple(t for t in TOOL_ORDER if TOOLS[t].kind in ("poi", "traffic", "weather"))
GRID_DEG = 0.01
_LAT_CELLS = int(round(180 / GRID_DEG)) + 1
_LNG_CELLS = int(round(360 / GRID_DEG)) + 1
_CELL_MASK = (1 << 20) - 1  # the longitude bits of grid_key: (row, _CELL_MASK) is past every cell of a row
_INDEX_COLUMNS = ["tool", "key", "name", "city", "options", "points", "valid"]


def key_hash(tool: str, key: str) -> int:
    """A stable 64-bit hash of (tool, canonical key): equal in every process and machine."""
    digest = hashlib.blake2b(f"{tool}\x1f{key}".encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "little")


def parse_points(text: str) -> tuple[tuple[float, float], ...]:
    """``'lng,lat;lng,lat'`` -> ((lng, lat), ...), as written by
    :func:`mobility_env.mobilitybench.build.sandbox_rows`."""
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
