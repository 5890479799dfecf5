"""``load_episodes(path)``: official CSV / XLSX / JSONL, our Parquet, or a built directory.

Bad rows are never dropped silently: each one is listed in the :class:`LoadReport` with file,
row and column (rows are numbered from 1 over data records, the header not counted: row N of
a CSV is its N-th record, row N of a JSONL its line N, row N of an XLSX the sheet's N-th row
below the header) (``strict=True`` raises the first one instead). Repairs (response cells cut
at Excel's 32,767-character limit, cut back to their last complete path or transit) are counted
in the report and recorded on the episode itself; any other malformed cell rejects its row.

Limits (keyword arguments of :func:`load_episodes`): a cell holds at most ``max_cell_bytes``
(UTF-8, default 4 MiB: the largest real cell is 42 KB) and nests at most ``max_depth`` (64)
levels; a raw record (a CSV record, a JSONL line, the text of an XLSX row) is at most
``max_row_bytes`` (8 MiB). Reading never holds more than about one record in memory, and a
record over the limit is skipped without being parsed (an XLSX is read by
:mod:`mobility_env.mobilitybench.xlsx`, in memory bounded the same way). Text must be UTF-8: an
undecodable byte or a lone surrogate rejects its row, naming the column.

Example::

    >>> eps = load_episodes("../shared/mobilitybench/sample_dev.csv")   # doctest: +SKIP
    >>> print(eps.report.summary())                                      # doctest: +SKIP
    81 loaded (8 repaired), 0 rejected from sample_dev.csv
"""

from __future__ import annotations

import csv
import json
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator

import pyarrow as pa
import pyarrow.parquet as pq

from .build import RecordDecodeError, episode_from_record, recorded_call_from_entry
from .episode import Episode, RecordedCall, Repair
from ..errors import ConfigError, CorruptDataError, DataFileError, RowError
from ..layout import EPISODES_FILE, EPISODES_SCHEMA, SANDBOX_FILE, SANDBOX_SCHEMA, check_built_directory
from ..literal import MAX_CELL_BYTES, MAX_DEPTH, CellLimits, text_problem, utf8_size
from .official import CORE_COLUMNS, episode_from_row
from .xlsx import read_sheet_rows

SUPPORTED_SUFFIXES = (".csv", ".xlsx", ".jsonl", ".parquet")
ROW_BYTES_PER_CELL = 2  # default max_row_bytes = 2 x max_cell_bytes (the largest real row is 44 KB)
_SCAN_CHUNK = 1 << 20


@dataclass(frozen=True)
class LoadLimits(CellLimits):
    """:class:`~mobility_env.literal.CellLimits` plus the bound on one raw record."""

    max_row_bytes: int = ROW_BYTES_PER_CELL * MAX_CELL_BYTES

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.max_row_bytes < self.max_cell_bytes:
            raise ValueError(f"max_row_bytes ({self.max_row_bytes}) must be at least max_cell_bytes "
                             f"({self.max_cell_bytes})")


@dataclass
class Rejection:
    file: str
    row: int | None
    column: str | None
    reason: str

    def __str__(self) -> str:
        where = f"{self.file}, row {self.row}" + (f", column {self.column!r}" if self.column else "")
        return f"{where}: {self.reason}"


@dataclass
class LoadReport:
    """What happened to every row of a load."""

    path: str
    loaded: int = 0
    repaired: int = 0
    rejected: list[Rejection] = field(default_factory=list)
    repairs_by_kind: dict[str, int] = field(default_factory=dict)

    def add_episode(self, episode: Episode) -> None:
        self.loaded += 1
        if any(r.kind == "truncated" for r in episode.repairs):
            self.repaired += 1
        for repair in episode.repairs:
            self.repairs_by_kind[repair.kind] = self.repairs_by_kind.get(repair.kind, 0) + 1

    def summary(self) -> str:
        text = (f"{self.loaded} loaded ({self.repaired} repaired), "
                f"{len(self.rejected)} rejected from {Path(self.path).name}")
        if self.repairs_by_kind:
            text += "; notes: " + ", ".join(f"{k}={v}" for k, v in sorted(self.repairs_by_kind.items()))
        return text

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "loaded": self.loaded, "repaired": self.repaired,
                "repairs_by_kind": dict(self.repairs_by_kind),
                "rejected": [vars(r) for r in self.rejected]}


class EpisodeList(list):
    """A plain list of episodes with the load report attached as ``.report``."""

    report: LoadReport


def _open_failed(path: Path, exc: OSError) -> DataFileError:
    return DataFileError(path, f"cannot read: {exc.strerror or exc}")


# --------------------------------------------------------------------------- CSV
class _RecordTooLong(Exception):
    """Raised from inside csv.reader's input when one record passes ``max_row_bytes``."""


class _BoundedLines:
    """The physical lines of a CSV file for ``csv.reader``, at most ``limit`` characters per record.

    ``pending`` holds the lines of the record being read, so a record that goes wrong can be
    re-scanned from its start (see :func:`_skip_record`).
    """

    def __init__(self, handle: Any, limit: int):
        self.handle = handle
        self.limit = limit
        self.pending: list[str] = []
        self.size = 0

    def __iter__(self) -> "_BoundedLines":
        return self

    def __next__(self) -> str:
        line = self.handle.readline(self.limit - self.size + 1)
        if not line:
            raise StopIteration
        self.pending.append(line)
        self.size += len(line)
        if self.size > self.limit:
            raise _RecordTooLong()
        return line

    def new_record(self) -> None:
        self.pending = []
        self.size = 0


_CSV_SPECIAL = re.compile(r'["\r\n,]')


def _skip_record(lines: _BoundedLines, max_cell: int) -> tuple[int | None, bool]:
    """Read past an over-long record, keeping nothing: (index of its first field over
    ``max_cell`` characters or None, whether a quoted field ran to the end of the file).

    Quotes are followed as RFC 4180 writes them (a field is quoted as a whole, ``""`` inside
    it is one quote); the record ends at the first line break outside quotes.
    """
    in_quotes, field_index, field_size, over = False, 0, 0, None

    def scan(chunk: str) -> bool:
        nonlocal in_quotes, field_index, field_size, over
        pos = 0
        for match in _CSV_SPECIAL.finditer(chunk):
            field_size += match.start() - pos
            pos = match.end()
            char = match.group(0)
            if char == '"':
                in_quotes = not in_quotes
            elif in_quotes:
                field_size += 1
            elif char == ",":
                if over is None and field_size > max_cell:
                    over = field_index
                field_index, field_size = field_index + 1, 0
            else:
                return True  # a line break outside quotes: the record ends here
            if over is None and field_size > max_cell:
                over = field_index
        field_size += len(chunk) - pos
        if over is None and field_size > max_cell:
            over = field_index
        return False

    for line in lines.pending:
        if scan(line):
            return over, False
    while True:
        chunk = lines.handle.readline(_SCAN_CHUNK)
        if not chunk:
            return over, in_quotes
        if scan(chunk):
            return over, False


def _read_csv(path: Path, limits: LoadLimits) -> Iterator[tuple[int, Any]]:
    try:
        with path.open("rb") as probe:
            head = probe.read(4)
    except OSError as exc:
        raise _open_failed(path, exc) from exc
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise DataFileError(path, "the file is UTF-16 text; save it as UTF-8 CSV")
    # undecodable bytes become lone surrogates and reject their row (naming the column), not the file
    csv.field_size_limit(max(csv.field_size_limit(), limits.max_row_bytes + 1))
    try:
        handle = path.open(encoding="utf-8-sig", errors="surrogateescape", newline="")
    except OSError as exc:
        raise _open_failed(path, exc) from exc
    with handle:
        lines = _BoundedLines(handle, limits.max_row_bytes)
        reader = csv.reader(lines, strict=True)
        try:
            header = next((record for record in reader if record), [])
        except _RecordTooLong:
            raise DataFileError(path, f"the header record is longer than {limits.max_row_bytes:,} characters; "
                                      "not a MobilityBench CSV") from None
        except csv.Error as exc:
            raise DataFileError(path, f"the header is not valid CSV ({exc})") from exc
        except OSError as exc:
            raise _open_failed(path, exc) from exc
        bad = next((name for name in header if text_problem(name)), None)
        if bad is not None:
            raise DataFileError(path, f"the header: {text_problem(bad)}")
        missing = [c for c in CORE_COLUMNS if c not in header]
        if missing:
            raise DataFileError(path, f"not an official MobilityBench CSV: missing column(s) {', '.join(missing)}; "
                                      f"header is {header!r:.200}")
        duplicated = sorted(name for name, n in Counter(header).items() if n > 1)  # linear: 100,000 columns
        if duplicated:
            raise DataFileError(path, f"the header names column(s) {', '.join(map(repr, duplicated))} more than once")
        row_number = 0
        while True:
            lines.new_record()
            try:
                record = next(reader)
            except StopIteration:
                return
            except _RecordTooLong:
                row_number += 1
                over, unterminated = _skip_record(lines, limits.max_cell_bytes)
                column = header[over] if over is not None and over < len(header) else None
                reason = (f"cell over {limits.max_cell_bytes:,} bytes (max_cell_bytes)" if column else
                          f"record over {limits.max_row_bytes:,} characters (max_row_bytes)")
                if unterminated:
                    reason += "; a quoted field runs to the end of the file, so no later row could be read"
                yield row_number, RowError(path, f"{reason}; skipped unread", row=row_number, column=column)
                if unterminated:
                    return
                continue
            except csv.Error as exc:
                row_number += 1
                reason = f"not valid CSV ({exc})"
                if "unexpected end of data" in str(exc) and len(lines.pending) > 1:
                    reason += (f"; a quoted field opened in this record runs to the end of the file, so its last "
                               f"{len(lines.pending) - 1} line(s) could not be read as rows")
                yield row_number, RowError(path, reason, row=row_number)
                continue
            except OSError as exc:
                raise _open_failed(path, exc) from exc
            if not record:
                continue  # a blank line, as csv.DictReader skips it
            row_number += 1
            if len(record) != len(header):
                yield row_number, RowError(path, f"the record has {len(record)} cells, the header {len(header)} "
                                                 "(a quote or line break out of place?)", row=row_number)
                continue
            yield row_number, dict(zip(header, record))


# --------------------------------------------------------------------------- JSONL
def _read_jsonl(path: Path, limits: LoadLimits) -> Iterator[tuple[int, Any]]:
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise _open_failed(path, exc) from exc
    with handle:
        line_number = 0
        while True:
            try:
                raw = handle.readline(limits.max_row_bytes + 1)
                if not raw:
                    return
                line_number += 1
                if len(raw.rstrip(b"\r\n")) > limits.max_row_bytes:
                    while raw and not raw.endswith(b"\n"):  # skip the rest of the line unread
                        raw = handle.readline(_SCAN_CHUNK)
                    yield line_number, RowError(path, f"line over {limits.max_row_bytes:,} bytes (max_row_bytes); "
                                                      "skipped unread", row=line_number)
                    continue
            except OSError as exc:
                raise _open_failed(path, exc) from exc
            try:
                text = raw.decode("utf-8-sig" if line_number == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                yield line_number, RowError(path, f"not UTF-8 text: byte 0x{raw[exc.start]:02X} at byte {exc.start} "
                                                  "of the line", row=line_number)
                continue
            if not text.strip():
                continue
            try:
                row = json.loads(text)
            except RecursionError:
                yield line_number, RowError(path, "JSON nested too deeply to read", row=line_number)
                continue
            except ValueError as exc:  # JSONDecodeError, or an integer over Python's digit limit
                yield line_number, RowError(path, f"invalid JSON: {exc}", row=line_number)
                continue
            if not isinstance(row, dict):
                yield line_number, RowError(path, "a line must be a JSON object of official columns", row=line_number)
                continue
            bad = next((key for key in row if text_problem(key)), None)
            if bad is not None:
                yield line_number, RowError(path, f"a column name is not UTF-8 text ({text_problem(bad)})",
                                            row=line_number)
                continue
            if len(raw) > limits.max_cell_bytes:  # only then can one cell be over the limit
                over = _oversized_cell(row, limits.max_cell_bytes)
                if over is not None:
                    yield line_number, RowError(path, f"cell over {limits.max_cell_bytes:,} bytes (max_cell_bytes)",
                                                row=line_number, column=over)
                    continue
            yield line_number, row


def _oversized_cell(row: dict[str, Any], limit: int) -> str | None:
    """The first column whose value takes more than ``limit`` bytes as JSON text, if any."""
    for column, value in row.items():
        if isinstance(value, str):
            if utf8_size(value, limit) is not None:
                return column
        elif isinstance(value, (dict, list)):
            if len(json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")) > limit:
                return column
    return None


# --------------------------------------------------------------------------- XLSX
def _read_xlsx(path: Path, limits: LoadLimits) -> Iterator[tuple[int, Any]]:
    """The first worksheet's rows as dicts (header -> value; a missing cell is ""), numbered from the header.

    Read by :func:`~mobility_env.mobilitybench.xlsx.read_sheet_rows` in bounded memory: a cell over
    ``max_cell_bytes`` or a row over ``max_row_bytes`` is listed as skipped, its text never read
    into memory. The header is the first row holding a value; rows holding none are skipped, as
    blank CSV records are.
    """
    rows = read_sheet_rows(path, max_cell_bytes=limits.max_cell_bytes, max_row_bytes=limits.max_row_bytes)
    first = next(rows, None)
    if first is None:
        raise DataFileError(path, "not an official MobilityBench sheet: the first worksheet is empty")
    if first.oversized or first.too_large:
        raise DataFileError(path, f"the header row is over {limits.max_cell_bytes:,} bytes a cell or "
                                  f"{limits.max_row_bytes:,} a row; not a MobilityBench sheet")
    width = max(first.values) + 1
    header = [str(first.values[i]) if i in first.values else "" for i in range(width)]
    missing = [c for c in CORE_COLUMNS if c not in header]
    if missing:
        raise DataFileError(path, f"not an official MobilityBench sheet: missing column(s) {', '.join(missing)}")
    duplicated = sorted(name for name, n in Counter(header).items() if name and n > 1)
    if duplicated:
        raise DataFileError(path, f"the header names column(s) {', '.join(map(repr, duplicated))} more than once")
    named = [(i, name) for i, name in enumerate(header) if name]
    for row in rows:
        index = row.number - first.number
        over = next(((name, row.oversized[i]) for i, name in named if i in row.oversized), None) \
            if row.oversized else None
        if over is not None:
            yield index, RowError(path, f"cell is {over[1]:,} bytes, over the limit of {limits.max_cell_bytes:,} "
                                        "(max_cell_bytes)", row=index, column=over[0])
        elif row.too_large:
            yield index, RowError(path, f"row over {limits.max_row_bytes:,} bytes of text (max_row_bytes); "
                                        "skipped unread", row=index)
        else:
            yield index, {name: row.values.get(i, "") for i, name in named}


# --------------------------------------------------------------------------- rows -> episodes
def _rows_to_episodes(path: Path, rows: Iterable[tuple[int, Any]], strict: bool, limits: LoadLimits) -> EpisodeList:
    episodes = EpisodeList()
    report = LoadReport(str(path))
    seen: dict[str, int] = {}
    for row_number, row in rows:
        try:
            if isinstance(row, RowError):
                raise row
            episode = episode_from_row(row, source=str(path), row_number=row_number, limits=limits)
        except RowError as exc:
            if strict:
                raise
            report.rejected.append(Rejection(str(path), exc.row, exc.column, str(exc).split(": ", 1)[-1]))
            continue
        if episode.episode_id in seen:  # identical rows: keep both, ids stay stable by order
            seen[episode.episode_id] += 1
            new_id = f"{episode.episode_id}-{seen[episode.episode_id]}"
            episode.repairs.append(Repair(column="", kind="duplicate_row",
                                          detail=f"same content as an earlier row; id {new_id}"))
            episode.episode_id = new_id
        else:
            seen[episode.episode_id] = 1
        report.add_episode(episode)
        episodes.append(episode)
    episodes.report = report
    return episodes


# --------------------------------------------------------------------------- our Parquet
def _read_parquet(path: Path, columns: list[str], schema: pa.Schema, *, verified: bool) -> pa.Table:
    """A Parquet file of a built directory with the needed ``columns`` of ``schema``, types checked
    (and, where no checksum vouches for the file, validated in full: offsets and UTF-8)."""
    try:
        table = pq.read_table(path, columns=[c for c in columns if c in pq.read_schema(path).names])
        if not verified:
            table.validate(full=True)
    except FileNotFoundError as exc:
        raise DataFileError(path, f"missing: {EPISODES_FILE} and {SANDBOX_FILE} belong together "
                                  "(rebuild with `mobility-env build SRC --out DIR`)") from exc
    except (OSError, ValueError, pa.ArrowException) as exc:  # ArrowInvalid is a ValueError
        raise CorruptDataError(path, f"cannot read Parquet: {exc} (rebuild with `mobility-env build SRC --out DIR`)") \
            from exc
    missing = [n for n in columns if n not in table.column_names]
    if missing:
        raise DataFileError(path, f"not a mobility-env {path.stem} file: missing column(s) {', '.join(missing)}")
    for name in columns:
        got, expected = table.schema.field(name).type, schema.field(name).type
        if not got.equals(expected):
            raise DataFileError(path, f"column has type {got}, expected {expected}", column=name)
        if name != "row" and table.column(name).null_count:  # only the source row may be unknown
            raise DataFileError(path, "column holds nulls; a build writes none", column=name)
    return table


def episodes_from_parquet(path: Path, *, with_responses: bool = True) -> EpisodeList:
    """Episodes of a built directory (or its episodes.parquet), responses joined back in.

    Files are checked against the directory's manifest first; a file that differs, does not
    decode or whose rows do not fit together raises :class:`CorruptDataError` (or
    :class:`DataFileError` for a Parquet file of another kind), naming file, row and column.
    """
    directory = path if path.is_dir() else path.parent
    episodes_path = directory / EPISODES_FILE if path.is_dir() else path
    verified = False
    if episodes_path.name == EPISODES_FILE and (directory / SANDBOX_FILE).exists():
        verified = check_built_directory(directory).verified
    table = _read_parquet(episodes_path, EPISODES_SCHEMA.names, EPISODES_SCHEMA, verified=verified)
    recorded_by_row: list[list[RecordedCall]] | None = None
    if with_responses:
        sandbox_path = directory / SANDBOX_FILE
        columns = ["episode_id", "tool", "arguments", "response", "source_column", "gold_index", "truncated"]
        sandbox = _read_parquet(sandbox_path, columns, SANDBOX_SCHEMA, verified=verified).to_pylist()
        recorded_by_row = []
        spans = zip(table.column("episode_id").to_pylist(), table.column("sandbox_start").to_pylist(),
                    table.column("sandbox_stop").to_pylist())
        for i, (episode_id, start, stop) in enumerate(spans):
            if not 0 <= start <= stop <= len(sandbox):
                raise CorruptDataError(episodes_path, f"sandbox rows [{start}, {stop}) are not within the "
                                                      f"{len(sandbox)} rows of {SANDBOX_FILE}", row=i + 1,
                                       column="sandbox_start")
            calls = []
            for j in range(start, stop):
                entry = sandbox[j]
                if entry["episode_id"] != episode_id:
                    raise CorruptDataError(sandbox_path, f"belongs to episode {entry['episode_id']!r:.40}, but "
                                                         f"{EPISODES_FILE} row {i + 1} ({episode_id!r:.40}) claims it",
                                           row=j + 1, column="episode_id")
                try:
                    calls.append(recorded_call_from_entry(entry))
                except RecordDecodeError as exc:
                    raise CorruptDataError(sandbox_path, str(exc), row=j + 1, column=exc.column) from exc
            recorded_by_row.append(calls)
    episodes = EpisodeList()
    report = LoadReport(str(episodes_path))
    for i, rec in enumerate(table.to_pylist()):
        try:
            episode = episode_from_record(rec, recorded_by_row[i] if recorded_by_row is not None else [])
        except RecordDecodeError as exc:
            raise CorruptDataError(episodes_path, str(exc), row=i + 1, column=exc.column) from exc
        report.add_episode(episode)
        episodes.append(episode)
    episodes.report = report
    return episodes


def load_episodes(path: str | os.PathLike, *, strict: bool = False, max_cell_bytes: int = MAX_CELL_BYTES,
                  max_depth: int = MAX_DEPTH, max_row_bytes: int | None = None) -> EpisodeList:
    """Load episodes from an official CSV/XLSX/JSONL file, our Parquet, or a built directory.

    Returns a list of :class:`Episode` with ``.report`` (a :class:`LoadReport`). Rows that
    cannot be used (malformed or over-limit cells, wrong types, bad UTF-8, broken records)
    are listed in ``report.rejected`` (file, row, column, reason); with ``strict=True`` the
    first one raises :class:`RowError` instead. A missing, unreadable or unsupported file, a
    file without the official columns, or a damaged built directory raises
    :class:`DataFileError` (:class:`CorruptDataError` for a built file that differs from its
    manifest). Limits: see the module docstring; ``max_row_bytes`` defaults to
    ``2 * max_cell_bytes``.
    """
    try:
        limits = LoadLimits(max_cell_bytes=max_cell_bytes, max_depth=max_depth,
                            max_row_bytes=(ROW_BYTES_PER_CELL * max_cell_bytes if max_row_bytes is None
                                           else max_row_bytes))
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"invalid load limits: {exc}") from exc
    path = Path(path)
    try:
        exists, is_dir = path.exists(), path.is_dir()
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the path
        raise DataFileError(path, f"not a usable path ({exc})") from exc
    if not exists:
        raise DataFileError(path, "no such file or directory")
    if is_dir:
        if not (path / EPISODES_FILE).exists():
            raise DataFileError(path, f"not a built directory: no {EPISODES_FILE} "
                                      f"(build one with `mobility-env build SRC --out DIR`)")
        return episodes_from_parquet(path)
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        return episodes_from_parquet(path)
    readers = {".csv": _read_csv, ".jsonl": _read_jsonl, ".xlsx": _read_xlsx}
    if suffix not in readers:
        raise DataFileError(path, f"unsupported file type {suffix!r}; "
                                  f"expected one of {', '.join(SUPPORTED_SUFFIXES)} or a built directory")
    return _rows_to_episodes(path, readers[suffix](path, limits), strict, limits)
