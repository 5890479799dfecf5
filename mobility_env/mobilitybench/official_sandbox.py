"""Import the official MobilityBench replay cache (its per-tool JSON files) into a built directory.

The official release keeps every recorded map-API answer in one JSON object per tool, nested
by the arguments its reference tools look them up with (AMAP-ML/MobilityBench,
``src/mobility_bench/tools/sandbox/*.py``; each format below cites its file). This module
reads those files **streaming** and turns every entry into a sandbox row of the *global*
scope (``episode_id`` = :data:`~mobility_env.mobilitybench.build.GLOBAL_EPISODE_ID`): the tool, the
arguments the keys stand for, this project's canonical key, and the response.

==============================  =================  ====================================  ==========================
file                            tool               key levels (outer to inner)           value, stored as
==============================  =================  ====================================  ==========================
driving_route_handle.json       driving_route      destination, origin, strategy,        the Amap route object
                                                   waypoints (``default`` = none)        (as recorded)
walking_route_handle.json       walking_route      destination, origin                   the Amap route object
bicycling_route_handle.json     bicycling_route    destination, origin                   the route summary text, in
                                                                                         the CSV's envelope
                                                                                         ``{"status": "SUCCESS",
                                                                                         "data": text, "error": null}``
bus_route_mock.json             bus_route          destination, origin (the official     ``{"status", "data"}`` as
                                                   key has no strategy: stored as the    recorded
                                                   default strategy ``"0"``)
nested_poi_data.json            query_poi          keywords, city (``""``: no city)      the POI object
reverse_geocoding_sandbox.json  reverse_geocoding  ``"latitude,longitude"`` (latitude    ``{"regeocode":
                                                   first, as the reference tool joins    {"formatted_address":
                                                   them)                                 text}}``
search_around_poi_sandbox.json  search_around_poi  location, keywords                    ``{"pois": [...]}``
traffic_info_mock.json          traffic_status     road name, city                       the Amap traffic object
weather_sandbox.json            weather_query      city, ``"True"``/``"False"``          ``{"weather_description"}``
                                                   (need_forecast)
==============================  =================  ====================================  ==========================

Strategy keys are the reference tool's ``"+".join(sorted(strategies))``, waypoints
``";".join(waypoints)``; coordinates are the reference tool's 6-decimal ``"lng,lat"`` text.
Values are stored in the shape the official CSV records for the same tool wherever the file
keeps it (so replay and scoring read imported and recorded responses by the same rules); where
the file keeps only part of it (reverse geocoding: the address; nearby search: the POI list;
weather: the description) that part is wrapped in the keys :mod:`mobility_env.responses` reads.
The stored text is what the CSV build stores, ``json.dumps(value, ensure_ascii=False,
separators=(",", ":"))`` (the ``raw`` observation serves it as is): a value already written
that way in the file is kept as its text, without encoding it again (:func:`_is_compact`);
any other layout (``json.dump``'s ``", "``, ``indent``, ``\\uXXXX`` escapes) is re-encoded.
Unlike the reference tools, a lookup never falls back from a missing strategy, waypoint list or
bus strategy to the ``default`` entry: the sandbox reports a miss that names what is recorded.

**Bad input.** An entry that cannot be imported is skipped and reported (file, key path, byte
offset, kind, detail) in :class:`ImportReport`, which the build writes into ``manifest.json``:
``bad_json`` (a value that is not JSON: NaN/Infinity, a number out of a float's range or an
integer over 4,300 digits, nesting deeper than ``max_depth``),
``bad_key`` (keys that do not make valid arguments for the tool), ``bad_response`` (a value that
is not what the tool returns), ``bad_text`` (a key or value that is not valid UTF-8 text: an
undecodable byte or a lone surrogate escape such as ``\\ud800``), ``not_an_object`` (a key level holding
something else), ``garbage`` (text between entries that is not a member; reading resumes at
the next key), ``too_large`` (an entry over ``max_entry_bytes``), ``duplicate`` (an entry whose
tool and canonical key an earlier entry of the import already has: **the first wins**, as a
stream cannot take back a written row; Python's ``json.load``, which the reference tools use,
keeps the last) and ``unknown_file`` (a file that is none of the nine). A file that cannot be
read as a whole — empty, a top level that is not an object, or cut short (the file ends inside
an entry, so nothing after it can be read) — raises :class:`OfficialSandboxFileError` naming the
file and the byte offset.

**Memory.** Files are read in chunks of ``chunk_bytes`` (default 2 MiB); the reader's window
holds at most two chunks plus the entry being read, and never more than ``max_entry_bytes``
(default 64 MiB) of one entry; only the innermost value of each entry is decoded, one at a
time. The import's own memory is therefore a few times ``chunk_bytes``, plus about ten times
the largest entry while it is decoded, plus ~100 bytes per imported row (the duplicate
check's key hashes), whatever the file's size and however much whitespace it holds between
keys and values (a 600 MiB run after a key peaks at 49 MiB; ``tests/test_json_stream_whitespace.py``);
the build adds its row batch (8 M characters, :mod:`mobility_env.mobilitybench.build`) and the replay
index (:mod:`mobility_env.mobilitybench.replay_index`). ``benchmarks/bench_official_import.py`` measures
both on a generated 1 GB driving-route file.

>>> from mobility_env.mobilitybench.official_sandbox import OfficialSandboxImport     # doctest: +SKIP
>>> from mobility_env.mobilitybench.build import build_directory                      # doctest: +SKIP
>>> build_directory(load_episodes("dev.csv"), "built/",
...                 global_rows=OfficialSandboxImport("official/sandbox/"))  # doctest: +SKIP
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from .build import GLOBAL_EPISODE_ID, sandbox_row
from ..canonical import canonical_request
from ..errors import DataFileError
from ..json_stream import (DEFAULT_CHUNK_BYTES, DEFAULT_MAX_ENTRY_BYTES, OfficialSandboxFileError, _key_shown, _kind,
                           _printable, _Reader, _shown, read_official_entries)
from ..layout import CHECKSUM
from ..literal import MAX_DEPTH, text_problem
from .index_format import key_hash
from ..tools import validate_call

__all__ = ["OFFICIAL_FILES", "OfficialFormat", "OfficialSandboxFileError", "ImportProblem", "ImportReport",
           "OfficialSandboxImport", "read_official_entries", "SOURCE_COLUMN_PREFIX"]

#: ``source_column`` of an imported row: this prefix and the file name.
SOURCE_COLUMN_PREFIX = "official:"
PROBLEMS_LISTED = 1000  # problems listed one by one in the report; every one is counted


class _Rejected(Exception):
    """One entry that cannot be imported: ``kind`` (an :class:`ImportProblem` kind) and why."""

    def __init__(self, kind: str, detail: str):
        super().__init__(detail)
        self.kind = kind
        self.detail = detail


# --------------------------------------------------------------------------- the nine formats
def _route_arguments(keys: tuple[str, ...]) -> dict[str, Any]:
    destination, origin = keys[0], keys[1]
    return {"origin": origin, "destination": destination}


def _driving_arguments(keys: tuple[str, ...]) -> dict[str, Any]:
    # driving_route.py: _strategy_to_key = "+".join(sorted(strategies)) or "default";
    # _waypoints_to_key = ";".join(waypoints) or "default"
    arguments = _route_arguments(keys)
    strategy, waypoints = keys[2], keys[3]
    if strategy != "default":
        arguments["strategy"] = strategy.split("+")
    if waypoints != "default":
        arguments["waypoints"] = waypoints.split(";")
    return arguments


def _poi_arguments(keys: tuple[str, ...]) -> dict[str, Any]:
    arguments = {"keywords": keys[0]}
    if keys[1].strip():
        arguments["city"] = keys[1]
    return arguments


def _geocode_arguments(keys: tuple[str, ...]) -> dict[str, Any]:
    # reverse_geocoding.py: key = f"{latitude},{longitude}" (latitude first)
    parts = keys[0].split(",")
    if len(parts) != 2:
        raise _Rejected("bad_key", f"expected 'latitude,longitude', got {_shown(keys[0])}")
    return {"longitude": parts[1].strip(), "latitude": parts[0].strip()}


def _around_arguments(keys: tuple[str, ...]) -> dict[str, Any]:
    arguments = {"location": keys[0]}
    if keys[1].strip():
        arguments["keywords"] = keys[1]
    return arguments


def _traffic_arguments(keys: tuple[str, ...]) -> dict[str, Any]:
    return {"name": keys[0], "city": keys[1]}


def _weather_arguments(keys: tuple[str, ...]) -> dict[str, Any]:
    # weather_query.py: forecast_key = str(need_forecast), i.e. "True" or "False"
    if keys[1] not in ("True", "False"):
        raise _Rejected("bad_key", f"the forecast key must be 'True' or 'False', got {_shown(keys[1])}")
    return {"city": keys[0], "need_forecast": keys[1] == "True"}


def _amap_object(value: Any) -> Any:
    if not isinstance(value, dict) or not ({"status", "route", "trafficinfo"} & value.keys()):
        raise _Rejected("bad_response", f"expected the Amap response object (with 'status'), got {_kind(value)}")
    return value


def _bus_object(value: Any) -> Any:
    if not isinstance(value, dict) or "status" not in value or not isinstance(value.get("data", {}), dict):
        raise _Rejected("bad_response", f"expected {{'status', 'data': {{...}}}}, got {_kind(value)}")
    return value


def _bicycling_text(value: Any) -> Any:
    if not isinstance(value, str) or not value.strip():
        raise _Rejected("bad_response", f"expected the route summary text, got {_kind(value)}")
    return {"status": "SUCCESS", "data": value, "error": None}


def _poi_object(value: Any) -> Any:
    if not isinstance(value, dict) or not ({"name", "location", "address"} & value.keys()):
        raise _Rejected("bad_response", f"expected a POI object (name, address, location), got {_kind(value)}")
    return value


def _address_text(value: Any) -> Any:
    if not isinstance(value, str) or not value.strip():  # the reference tool refuses these too
        raise _Rejected("bad_response", f"expected the address text, got {_kind(value)}")
    return {"regeocode": {"formatted_address": value}}


def _poi_list(value: Any) -> Any:
    if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
        raise _Rejected("bad_response", f"expected a list of POI objects, got {_kind(value)}")
    return {"pois": value}


def _weather_object(value: Any) -> Any:
    if not isinstance(value, dict) or not isinstance(value.get("weather_description"), str):
        raise _Rejected("bad_response", f"expected {{'weather_description': text}}, got {_kind(value)}")
    return value


@dataclass(frozen=True)
class OfficialFormat:
    """One official sandbox file: its tool, key levels and how keys and values become a call."""

    file: str
    tool: str
    levels: tuple[str, ...]
    arguments: Callable[[tuple[str, ...]], dict[str, Any]]
    response: Callable[[Any], Any]
    reference: str  # the reference tool the key format is derived from
    #: the text ``json.dumps`` writes before and after the file's value in the stored response
    #: (where :attr:`response` wraps it)
    wrap: tuple[str, str] = ("", "")

    @property
    def wrap_levels(self) -> int:
        """How many containers :attr:`wrap` puts around the file's value."""
        return self.wrap[0].count("{") + self.wrap[0].count("[")


_REF = "AMAP-ML/MobilityBench src/mobility_bench/tools/sandbox/"
#: The official files by name, in import order.
OFFICIAL_FILES: dict[str, OfficialFormat] = {f.file: f for f in (
    # driving_route.py: ROUTE_SANDBOX[destination][origin][strategy_key][waypoints_key] (via utils.match_route_str)
    OfficialFormat("driving_route_handle.json", "driving_route", ("destination", "origin", "strategy", "waypoints"),
                   _driving_arguments, _amap_object, _REF + "driving_route.py"),
    # walking_route.py: WALKING_ROUTE_CACHE[destination][origin] is the Amap answer (status "1")
    OfficialFormat("walking_route_handle.json", "walking_route", ("destination", "origin"),
                   _route_arguments, _amap_object, _REF + "walking_route.py"),
    # bicycling_route.py: BICYCLING_ROUTE_CACHE[destination][origin] is the formatted summary string
    OfficialFormat("bicycling_route_handle.json", "bicycling_route", ("destination", "origin"),
                   _route_arguments, _bicycling_text, _REF + "bicycling_route.py",
                   ('{"status":"SUCCESS","data":', ',"error":null}')),
    # bus_route.py: BUS_ROUTE_SANDBOX[destination][origin] = {"status": "SUCCESS", "data": {...}}; no strategy level
    OfficialFormat("bus_route_mock.json", "bus_route", ("destination", "origin"),
                   _route_arguments, _bus_object, _REF + "bus_route.py"),
    # query_poi.py: MOCK_POI_DATA[keyword][city] = {"location", "name", "address", ...}
    OfficialFormat("nested_poi_data.json", "query_poi", ("keywords", "city"),
                   _poi_arguments, _poi_object, _REF + "query_poi.py"),
    # reverse_geocoding.py: SANDBOX_DATA[f"{latitude},{longitude}"] = address text
    OfficialFormat("reverse_geocoding_sandbox.json", "reverse_geocoding", ("latitude,longitude",),
                   _geocode_arguments, _address_text, _REF + "reverse_geocoding.py",
                   ('{"regeocode":{"formatted_address":', "}}")),
    # search_around_poi.py: POI_SANDBOX[location][keyword] = [poi, ...]
    OfficialFormat("search_around_poi_sandbox.json", "search_around_poi", ("location", "keywords"),
                   _around_arguments, _poi_list, _REF + "search_around_poi.py", ('{"pois":', "}")),
    # traffic_info.py: TRAFFIC_SANDBOX[name][city] is the Amap answer (status "1")
    OfficialFormat("traffic_info_mock.json", "traffic_status", ("name", "city"),
                   _traffic_arguments, _amap_object, _REF + "traffic_info.py"),
    # weather_query.py: RAW_SANDBOX[city][str(need_forecast)] = {"weather_description": text}
    OfficialFormat("weather_sandbox.json", "weather_query", ("city", "need_forecast"),
                   _weather_arguments, _weather_object, _REF + "weather_query.py"),
)}


# --------------------------------------------------------------------------- the report
@dataclass(frozen=True)
class ImportProblem:
    """One entry (or stretch of a file) that was not imported."""

    file: str
    kind: str
    key: list[str]       # the key path, each key shown cut to 120 characters
    offset: int          # byte offset in the file
    detail: str

    def __str__(self) -> str:
        key = "[" + "][".join(self.key) + "]" if self.key else "(file)"
        return f"{self.file} {key} at byte {self.offset:,}: {self.kind}: {self.detail}"


@dataclass
class FileImport:
    """What one official file gave: its identity and counts."""

    name: str
    tool: str | None
    bytes: int
    checksum: str | None = None
    entries: int = 0       # innermost values read (imported or not)
    imported: int = 0
    problems: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "tool": self.tool, "bytes": self.bytes, CHECKSUM: self.checksum,
                "entries": self.entries, "imported": self.imported, "problems": dict(sorted(self.problems.items()))}


@dataclass
class ImportReport:
    """What an import read, imported and skipped (written into ``manifest.json`` as ``sandbox_import``)."""

    directory: str
    files: list[FileImport] = field(default_factory=list)
    problems: list[ImportProblem] = field(default_factory=list)  # the first PROBLEMS_LISTED
    problem_count: int = 0

    @property
    def imported(self) -> int:
        return sum(f.imported for f in self.files)

    def add(self, problem: ImportProblem, file: FileImport | None) -> None:
        self.problem_count += 1
        if file is not None:
            file.problems[problem.kind] = file.problems.get(problem.kind, 0) + 1
        if len(self.problems) < PROBLEMS_LISTED:
            self.problems.append(problem)

    def summary(self) -> str:
        read = [f for f in self.files if f.tool is not None]
        kinds: dict[str, int] = {}
        for f in self.files:
            for kind, count in f.problems.items():
                kinds[kind] = kinds.get(kind, 0) + count
        text = (f"{self.imported} sandbox entries imported from {len(read)} official file(s) in "
                f"{Path(self.directory).name or self.directory}, {self.problem_count} problem(s)")
        if kinds:
            text += ": " + ", ".join(f"{k}={v}" for k, v in sorted(kinds.items()))
        return text

    def to_dict(self) -> dict[str, Any]:
        return {"directory": self.directory, "imported": self.imported, "problem_count": self.problem_count,
                "files": [f.to_dict() for f in self.files],
                "problems": [{"file": p.file, "kind": p.kind, "key": p.key, "offset": p.offset, "detail": p.detail}
                             for p in self.problems],
                "problems_listed": len(self.problems), "duplicates": "the first entry with a tool and canonical key "
                                                                     "is kept; later ones are reported"}


# --------------------------------------------------------------------------- the import
class OfficialSandboxImport:
    """The sandbox rows of a directory of official per-tool JSON files (see the module docstring).

    Iterate it once (``build_directory(..., global_rows=OfficialSandboxImport(dir))`` does):
    rows come file by file in :data:`OFFICIAL_FILES` order, each file streamed; :attr:`report`
    fills in as they come. Raises :class:`~mobility_env.errors.DataFileError` for a directory
    that holds none of the official files, :class:`OfficialSandboxFileError` for a file that
    cannot be read as a whole.
    """

    def __init__(self, directory: str | os.PathLike, *, chunk_bytes: int = DEFAULT_CHUNK_BYTES,
                 max_entry_bytes: int = DEFAULT_MAX_ENTRY_BYTES, max_depth: int = MAX_DEPTH):
        self.directory = Path(directory)
        if not self.directory.is_dir():
            raise DataFileError(self.directory, "not a directory; --sandbox-dir takes the folder holding the official "
                                                "per-tool JSON files (driving_route_handle.json, ...)")
        self.chunk_bytes = chunk_bytes
        self.max_entry_bytes = max_entry_bytes
        self.max_depth = max_depth
        self.report = ImportReport(str(self.directory))
        self._started = False

    def plan(self) -> tuple[list[Path], list[Path]]:
        """(official files to read, in import order; other files, which are skipped and reported)."""
        present = sorted(p for p in self.directory.iterdir())
        known = [self.directory / name for name in OFFICIAL_FILES if (self.directory / name).is_file()]
        others = [p for p in present if p not in known]
        if not known:
            raise DataFileError(self.directory, f"holds none of the official sandbox files "
                                                f"({', '.join(OFFICIAL_FILES)})")
        return known, others

    def __iter__(self) -> Iterator[dict[str, Any]]:
        if self._started:
            raise RuntimeError("an OfficialSandboxImport is read once; make a new one to read the files again")
        self._started = True
        known, others = self.plan()
        for path in others:
            size = path.stat().st_size if path.is_file() else 0
            skipped = FileImport(path.name, None, size)
            self.report.files.append(skipped)
            why = ("not one of the official sandbox files (skipped)" if path.is_file()
                   else "not a file (skipped)")
            self.report.add(ImportProblem(path.name, "unknown_file", [], 0, why), skipped)
        seen: set[int] = set()
        for path in known:
            yield from self._rows(path, OFFICIAL_FILES[path.name], seen)

    def manifest_entry(self) -> dict[str, Any]:
        return self.report.to_dict()

    def _rows(self, path: Path, fmt: OfficialFormat, seen: set[int]) -> Iterator[dict[str, Any]]:
        stats = FileImport(path.name, fmt.tool, path.stat().st_size)
        self.report.files.append(stats)
        source_column = SOURCE_COLUMN_PREFIX + path.name
        tool = fmt.tool

        def problem(kind: str, keys: tuple[str, ...], offset: int, detail: str) -> None:
            self.report.add(ImportProblem(path.name, kind, [_key_shown(k) for k in keys], offset, _printable(detail)),
                            stats)

        with open(path, "rb") as handle:
            reader = _Reader(path, handle, len(fmt.levels), chunk_bytes=self.chunk_bytes,
                             max_entry_bytes=self.max_entry_bytes,
                             report=lambda kind, keys, serial, detail: problem(
                                 kind, keys, reader.window.offset_of(serial), detail))
            for entry in reader.entries():
                stats.entries += 1
                try:
                    for key in entry.keys:
                        bad_key = text_problem(key)
                        if bad_key is not None:
                            raise _Rejected("bad_text", f"a key is not UTF-8 text: {bad_key}")
                    arguments = fmt.arguments(entry.keys)
                    errors = validate_call(tool, arguments)
                    if errors:
                        raise _Rejected("bad_key", "the keys do not make valid arguments: "
                                                   + "; ".join(map(str, errors)))
                    response = fmt.response(entry.value)
                    too_deep, members = _shape(entry.value, self.max_depth - fmt.wrap_levels)
                    if too_deep:
                        raise _Rejected("bad_json", f"nested deeper than {self.max_depth} levels (max_depth)")
                    request = canonical_request(tool, arguments)
                    digest = key_hash(tool, request.key)
                    if digest in seen:
                        raise _Rejected("duplicate", f"an earlier entry has the same {tool} request "
                                                     f"({_shown(request.key, 80)}); the first is kept")
                    if entry.plain_numbers and _is_compact(entry.raw, members):
                        response_text = fmt.wrap[0] + entry.raw + fmt.wrap[1]  # what json.dumps would write
                    else:
                        try:
                            response_text = _ENCODER.encode(response)
                        except ValueError as exc:
                            raise _Rejected("bad_json", f"not JSON data ({exc})") from None
                    row = sandbox_row(GLOBAL_EPISODE_ID, tool, arguments, response_text, source_column=source_column,
                                      request=request)
                    bad_text = text_problem(row["arguments"]) or text_problem(response_text)
                    if bad_text is not None:
                        raise _Rejected("bad_text", bad_text)
                except _Rejected as rejected:
                    problem(rejected.kind, entry.keys, reader.window.offset_of(entry.serial), rejected.detail)
                    continue
                seen.add(digest)
                stats.imported += 1
                yield row
            stats.checksum = reader.window.hasher.hexdigest()


_SPACED = (", ", ": ", "{ ", "[ ", " }", " ]", " ,", " :")
#: ``json.dumps(value, ensure_ascii=False, separators=(",", ":"))``, as mobility_env.mobilitybench.build stores
#: responses; a decoded value holds no cycle, so none is looked for
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False, check_circular=False)


def _is_compact(raw: str, members: int) -> bool:
    """Is ``raw`` (a JSON value's text, its numbers written as ``json.dumps`` writes them) the
    very text ``json.dumps(value, ensure_ascii=False, separators=(",", ":"))`` makes of it?

    ``members``: how many members its objects hold once decoded. It is, when: no whitespace
    outside strings (a tab or line break cannot be inside one; a space outside one always
    touches a bracket, comma or colon), no escape ``json.dumps`` does not write (``\\uXXXX``,
    ``\\/``), and no object member that decoding dropped (a repeated key: every key is followed
    by ``":``). A false "no" only costs a re-encoding.
    """
    if "\n" in raw or "\r" in raw or "\t" in raw:
        return False
    if " " in raw:
        for spaced in _SPACED:
            if spaced in raw:
                return False
    if "\\" in raw and ("\\u" in raw or "\\/" in raw):
        return False
    return members == 0 or raw.count('":') == members


def _shape(value: Any, limit: int) -> tuple[bool, int]:
    """(Is ``value`` nested more than ``limit`` containers deep?, how many members its objects
    hold). Only containers are visited; the count stops where the depth does."""
    if type(value) is not dict and type(value) is not list:
        return False, 0
    if limit < 1:
        return True, 0
    members = 0
    stack = [(value, 1)]
    pop, push = stack.pop, stack.append
    while stack:
        item, depth = pop()
        if type(item) is dict:
            members += len(item)
            children: Any = item.values()
        else:
            children = item
        deeper = depth + 1
        for child in children:
            kind = type(child)
            if kind is dict or kind is list:
                if deeper > limit:
                    return True, members
                push((child, deeper))
    return False, members
