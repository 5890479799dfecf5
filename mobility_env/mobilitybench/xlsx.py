"""Read the first worksheet of an .xlsx workbook as a stream of rows, in bounded memory.

Why our own reader (standard library only): openpyxl reads a workbook's whole shared-string
table into memory when it opens it, before any cell limit can apply (a 515 KiB crafted file took
1.6 GB). Here each part is decompressed in 64 KiB chunks and parsed by expat as it arrives, so
memory is bounded by the limits, not by the file, and time is linear in the parts' size:

- a cell's text (shared, inline, or a formula's cached text) is kept up to ``max_cell_bytes``
  (UTF-8); a longer one is kept only as its size (:attr:`SheetRow.oversized`), never its text;
- a row keeps its values up to ``max_row_bytes`` of text; past that, none (:attr:`SheetRow.too_large`);
- the shared-string table is held in memory up to about 32 MiB, beyond that in two temporary
  files (the text, and 16 bytes of index per string);
- refused, as damage: a ZIP directory over 1 MiB or 10,000 parts, a part declared over 4 GiB
  uncompressed or compressed other than deflate/stored, a DOCTYPE (an .xlsx never has one: no
  entity can expand), XML nested over 64 levels, an XML token (tag, comment) over 1 MiB, over
  10,000 distinct XML names in a part (expat keeps each), a cell reference outside Excel's grid,
  rows or cells out of order.

Every damage raises one :class:`~mobility_env.errors.DataFileError` naming the file, the part
and, inside the sheet, the cell. Values are what openpyxl gives with ``data_only=True``: text
(shared strings lose ``x005F_`` as there), ``int`` for a number without ``.``/``e``, else
``float``; ``bool``; an error code (``#N/A``) as text; a ``d`` cell as a ``datetime`` (its text
where it is not ISO 8601). Unlike openpyxl, a number styled as a date stays a number.

    >>> rows = read_sheet_rows(Path("book.xlsx"), max_cell_bytes=4 << 20, max_row_bytes=8 << 20)  # doctest: +SKIP
    >>> next(rows)                                                                         # doctest: +SKIP
    SheetRow(number=1, values={0: 'query', 1: 'context', ...}, oversized={}, too_large=False, size=...)
"""

from __future__ import annotations

import posixpath
import pyexpat
import re
import struct
import tempfile
import zipfile
import zlib
from array import array
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import IO, Any, Iterator

from ..errors import DataFileError

MAX_DIRECTORY_BYTES = 1 << 20   # zipfile keeps an object of about 0.5 KB per part listed
MAX_PARTS = 10_000
MAX_PART_BYTES = 4 << 30        # declared uncompressed size of one part (zipfile never reads past it)
MAX_XML_DEPTH = 64
MAX_TOKEN_BYTES = 1 << 20       # expat holds a tag or comment whole until its end
# expat keeps every distinct element and attribute name until the parse ends (about 150 bytes each)
MAX_XML_NAMES, MAX_XML_NAME_CHARS = 10_000, 1 << 20
MAX_ROWS, MAX_COLUMNS = 1_048_576, 16_384  # Excel's grid
MAX_RELATIONSHIP_CHARS = 1 << 20  # ids and targets of the worksheets a workbook lists, together
STRINGS_IN_MEMORY = 32 << 20
_CHUNK = 64 << 10
_NUMBER_TEXT = 1_000            # Excel writes 17 significant digits; float() of megabytes of digits is slow
_STRING_OVERHEAD = 64           # bytes a held string costs beyond its text (object header, list slot, size)

_REF = re.compile(r"\$?([A-Za-z]{1,3})\$?([0-9]{1,7})")
_END = struct.Struct("<4s4H2LH")            # ZIP end of central directory
_END64 = struct.Struct("<4sQ2H2L4Q")        # ZIP64 end of central directory, just before its locator
_LOCATOR64 = struct.Struct("<4sLQL")
_INDEX_ENTRY = struct.Struct("<qq")
# what zipfile and zlib raise on a damaged archive (a cut file: EOFError; an encrypted part: RuntimeError)
_ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, EOFError, RuntimeError, NotImplementedError,
               ValueError, OverflowError, struct.error)
_TEXT_TYPES = frozenset({"inlineStr", "str", "e"})
_KNOWN_TYPES = _TEXT_TYPES | {"s", "n", "b", "d"}


@dataclass
class SheetRow:
    """One row of the sheet holding a value: its number in the sheet (from 1), its values by column
    index (from 0), the size in bytes of each cell over ``max_cell_bytes`` (whose text is not kept),
    and whether its text passed ``max_row_bytes`` (then ``values`` is empty)."""

    number: int
    values: dict[int, Any] = field(default_factory=dict)
    oversized: dict[int, int] = field(default_factory=dict)
    too_large: bool = False
    size: int = 0  # UTF-8 bytes of the text kept
    shared: dict[int, int] = field(default_factory=dict, repr=False)  # column -> shared string, until resolved


class _Text:
    """The text of one cell or shared string as it arrives: kept up to ``limit`` UTF-8 bytes, past it only counted."""

    __slots__ = ("limit", "pieces", "size")

    def __init__(self, limit: int):
        self.limit = limit
        self.pieces: list[str] = []
        self.size = 0

    def add(self, piece: str) -> None:
        self.size += len(piece) if piece.isascii() else len(piece.encode("utf-8"))
        if self.size <= self.limit:
            self.pieces.append(piece)
        elif self.pieces:
            self.pieces = []

    @property
    def over(self) -> bool:
        return self.size > self.limit

    def value(self) -> str:
        return "".join(self.pieces)


class _SharedStrings:
    """The shared-string table: held in memory up to ``STRINGS_IN_MEMORY``, then spilled to two
    temporary files (UTF-8 text; a (start, size) entry per string, start -1 for one over the
    cell limit, whose text is not kept), so memory is bounded however much the table holds."""

    def __init__(self) -> None:
        self.count = 0
        self._texts: list[str] = []
        self._sizes = array("q")  # the size, or -1 - size for a string over the limit
        self._held = 0
        self._data: IO[bytes] | None = None
        self._index: IO[bytes] | None = None
        self._end = 0
        self._entry = (-1, 0, 0)  # (index, start, size) of the last entry read from the index file

    def add(self, text: str | None, size: int) -> None:
        self.count += 1
        if self._index is not None:
            self._write(text, size)
            return
        self._texts.append(text or "")
        self._sizes.append(size if text is not None else -1 - size)
        self._held += (size if text is not None else 0) + _STRING_OVERHEAD
        if self._held > STRINGS_IN_MEMORY:
            self._data, self._index = tempfile.TemporaryFile(), tempfile.TemporaryFile()
            for held, held_size in zip(self._texts, self._sizes):
                self._write(held if held_size >= 0 else None, held_size if held_size >= 0 else -1 - held_size)
            self._texts, self._sizes = [], array("q")

    def _write(self, text: str | None, size: int) -> None:
        assert self._data is not None and self._index is not None
        start = -1
        if text is not None:
            start = self._end
            self._end += self._data.write(text.encode("utf-8"))
        self._index.write(_INDEX_ENTRY.pack(start, size))

    def size(self, index: int) -> tuple[int, bool]:
        """(UTF-8 size, whether over the cell limit) of string ``index``."""
        if self._index is None:
            size = self._sizes[index]
            return (size, False) if size >= 0 else (-1 - size, True)
        if self._entry[0] != index:
            self._index.seek(index * _INDEX_ENTRY.size)
            self._entry = (index, *_INDEX_ENTRY.unpack(self._index.read(_INDEX_ENTRY.size)))
        return self._entry[2], self._entry[1] < 0

    def text(self, index: int) -> str:
        if self._index is None:
            return self._texts[index]
        assert self._data is not None
        self.size(index)
        self._data.seek(self._entry[1])
        return self._data.read(self._entry[2]).decode("utf-8")

    def close(self) -> None:
        for handle in (self._data, self._index):
            if handle is not None:
                handle.close()


# --------------------------------------------------------------------------- XML parts
class _Part:
    """expat handlers for one XML part: the path of open elements (local names, namespaces not
    resolved: an .xlsx part has one vocabulary), the text being collected, errors that name the part.
    Subclasses read the elements they need in ``opened`` / ``closed``."""

    def __init__(self, path: Path, info: zipfile.ZipInfo):
        self.path, self.name = path, info.filename
        self.stack: list[str] = []
        self.text: _Text | None = None
        self.collect_at = -1  # the depth whose character data goes to ``text``
        self.names: set[str] = set()
        self.name_chars = 0

    def error(self, message: str) -> DataFileError:
        return DataFileError(self.path, f"{self.name}: {message}")

    def opened(self, attrs: dict[str, str]) -> None:
        """The element ``self.stack[-1]`` starts."""

    def closed(self) -> None:
        """The element ``self.stack[-1]`` ends."""

    def collect(self) -> None:
        self.collect_at = len(self.stack)

    def _start(self, name: str, attrs: dict[str, str]) -> None:
        if len(self.stack) >= MAX_XML_DEPTH:
            raise self.error(f"XML nested over {MAX_XML_DEPTH} levels; not a part of an .xlsx workbook")
        if name not in self.names:
            self._new_name(name)
        for key in attrs:
            if key not in self.names:
                self._new_name(key)
        self.stack.append(name.rpartition(":")[2])
        self.opened(attrs)

    def _new_name(self, name: str) -> None:
        self.names.add(name)
        self.name_chars += len(name)
        if len(self.names) > MAX_XML_NAMES or self.name_chars > MAX_XML_NAME_CHARS:
            raise self.error(f"uses over {MAX_XML_NAMES:,} distinct XML names (or {MAX_XML_NAME_CHARS:,} characters "
                             "of them); an .xlsx part uses a few dozen")

    def _end(self, name: str) -> None:
        if len(self.stack) == self.collect_at:
            self.collect_at = -1
        self.closed()
        self.stack.pop()

    def _data(self, data: str) -> None:
        if len(self.stack) == self.collect_at and self.text is not None:
            self.text.add(data)

    def _doctype(self, *_: Any) -> None:
        raise self.error("has a DOCTYPE declaration, which no .xlsx part has (entities are refused)")


def _parse(archive: zipfile.ZipFile, info: zipfile.ZipInfo, part: _Part) -> Iterator[None]:
    """Feed one part to ``part``'s handlers in chunks, pausing after each (the caller drains what they built)."""
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        raise part.error(f"compressed with method {info.compress_type}; an .xlsx uses deflate")
    if info.file_size > MAX_PART_BYTES:
        raise part.error(f"declares {info.file_size:,} bytes uncompressed, over the {MAX_PART_BYTES:,} read")
    # no namespace processing: expat then keeps no table of prefixes, and each name it keeps passes through _start
    parser = pyexpat.ParserCreate()
    parser.StartDoctypeDeclHandler = part._doctype
    parser.StartElementHandler = part._start
    parser.EndElementHandler = part._end
    parser.CharacterDataHandler = part._data
    fed = 0
    try:
        with archive.open(info) as member:
            while True:
                chunk = member.read(_CHUNK)
                if not chunk:
                    break
                parser.Parse(chunk, False)
                fed += len(chunk)
                if fed - parser.CurrentByteIndex > MAX_TOKEN_BYTES:  # what expat holds, waiting for a token's end
                    raise part.error(f"an XML tag or comment runs over {MAX_TOKEN_BYTES:,} bytes")
                yield
            parser.Parse(b"", True)
            yield
    except pyexpat.ExpatError as exc:
        raise part.error(f"not well-formed XML ({pyexpat.ErrorString(exc.code)}, line {exc.lineno}, "
                         f"column {exc.offset})") from None
    except OSError as exc:
        raise part.error(f"cannot be read ({exc.strerror or exc})") from exc
    except _ZIP_ERRORS as exc:
        raise part.error(f"cannot be decompressed ({type(exc).__name__}: {exc})") from None


class _Relationships(_Part):
    """``xl/_rels/workbook.xml.rels``: the worksheet and shared-string parts, by relationship id."""

    def __init__(self, path: Path, info: zipfile.ZipInfo):
        super().__init__(path, info)
        self.targets: dict[str, tuple[str, str]] = {}  # id -> (kind, part name)
        self.held = 0

    def opened(self, attrs: dict[str, str]) -> None:
        if len(self.stack) != 2 or self.stack[1] != "Relationship" or attrs.get("TargetMode") == "External":
            return
        kind = attrs.get("Type", "").rpartition("/")[2]
        target = attrs.get("Target", "")
        if kind in ("worksheet", "sharedStrings") and target:
            rel_id = attrs.get("Id", "")
            self.held += len(rel_id) + len(target)
            if self.held > MAX_RELATIONSHIP_CHARS:
                raise self.error(f"lists worksheets over {MAX_RELATIONSHIP_CHARS:,} characters of ids and targets")
            name = target[1:] if target.startswith("/") else posixpath.normpath(posixpath.join("xl", target))
            self.targets[rel_id] = (kind, name)


class _Workbook(_Part):
    """``xl/workbook.xml``: the first ``<sheet>`` whose relationship is a worksheet (not a chart sheet)."""

    def __init__(self, path: Path, info: zipfile.ZipInfo, relationships: dict[str, tuple[str, str]]):
        super().__init__(path, info)
        self.relationships = relationships
        self.first: str | None = None

    def opened(self, attrs: dict[str, str]) -> None:
        if self.first is None and len(self.stack) == 3 and self.stack[1:] == ["sheets", "sheet"]:
            rel_id = next((value for key, value in attrs.items() if key.endswith(":id")), "")
            kind, name = self.relationships.get(rel_id, ("", ""))
            if kind == "worksheet":
                self.first = name


class _StringTable(_Part):
    """``xl/sharedStrings.xml``: each ``<si>``'s text (its ``<t>`` and rich runs' ``<t>``; not phonetic runs)."""

    def __init__(self, path: Path, info: zipfile.ZipInfo, strings: _SharedStrings, max_cell_bytes: int):
        super().__init__(path, info)
        self.strings, self.limit = strings, max_cell_bytes

    def opened(self, attrs: dict[str, str]) -> None:
        depth, name = len(self.stack), self.stack[-1]
        if depth == 2 and name == "si":
            self.text = _Text(self.limit)
        elif self.text is not None and name == "t" and (depth == 3 or (depth == 4 and self.stack[2] == "r")):
            self.collect()

    def closed(self) -> None:
        if len(self.stack) != 2 or self.text is None:
            return
        text, self.text = self.text, None
        if text.over:
            self.strings.add(None, text.size)
            return
        value = text.value().replace("x005F_", "")  # as openpyxl reads the table
        self.strings.add(value, len(value) if value.isascii() else len(value.encode("utf-8")))


class _Sheet(_Part):
    """The worksheet's ``<sheetData>``: rows and their cells, appended to ``rows`` as they end."""

    def __init__(self, path: Path, info: zipfile.ZipInfo, strings: _SharedStrings, max_cell_bytes: int,
                 max_row_bytes: int):
        super().__init__(path, info)
        self.strings, self.max_cell_bytes, self.max_row_bytes = strings, max_cell_bytes, max_row_bytes
        self.rows: deque[SheetRow] = deque()
        self.row: SheetRow | None = None
        self.last_row = 0
        self.column = 0  # of the last cell read, from 1
        self.cell = ""   # the cell being read, for messages
        self.kind = ""
        self.has_value = False  # its <v> (or, inline, its <is>) was seen

    def opened(self, attrs: dict[str, str]) -> None:
        depth, name = len(self.stack), self.stack[-1]
        if depth == 3 and name == "row" and self.stack[1] == "sheetData":
            self._start_row(attrs.get("r"))
        elif depth == 4 and name == "c" and self.row is not None:
            self._start_cell(attrs.get("r"), attrs.get("t", "n"))
        elif self.text is None or depth < 5 or self.stack[3] != "c":
            return
        elif self.kind == "inlineStr":
            if depth == 5 and name == "is":
                self.has_value = True
            elif name == "t" and self.stack[4] == "is" and (depth == 6 or (depth == 7 and self.stack[5] == "r")):
                self.collect()
        elif depth == 5 and name == "v" and not self.has_value:  # openpyxl reads the first <v>
            self.has_value = True
            self.collect()

    def closed(self) -> None:
        depth, name = len(self.stack), self.stack[-1]
        if depth == 4 and name == "c" and self.text is not None:
            self._end_cell()
        elif depth == 3 and name == "row" and self.row is not None:
            self.rows.append(self.row)
            self.row = None

    def _start_row(self, ref: str | None) -> None:
        number = self.last_row + 1 if ref is None else (int(ref) if ref.isdigit() and len(ref) <= 7 else 0)
        if not 1 <= number <= MAX_ROWS:
            raise self.error(f"row number {ref!r:.20} is outside the sheet (1 to {MAX_ROWS:,})")
        if number <= self.last_row:
            raise self.error(f"row {number} comes after row {self.last_row} (rows must be in order)")
        self.last_row, self.row, self.column = number, SheetRow(number), 0

    def _start_cell(self, ref: str | None, kind: str) -> None:
        assert self.row is not None
        if ref is None:
            column = self.column + 1
        else:
            match = _REF.fullmatch(ref)
            if match is None:
                raise self.error(f"row {self.row.number}: {ref!r:.20} is not a cell reference such as C7")
            column = 0
            for letter in match.group(1).upper():
                column = column * 26 + ord(letter) - 64
            if int(match.group(2)) != self.row.number:
                raise self.error(f"cell {ref} stands in row {self.row.number}")
        self.cell = ref or f"R{self.row.number}C{column}"
        if column > MAX_COLUMNS:
            raise self.error(f"cell {self.cell} is outside the sheet (at most {MAX_COLUMNS:,} columns)")
        if column <= self.column:
            raise self.error(f"cell {self.cell} comes after column {self.column} of its row (cells must be in order)")
        self.column, self.kind, self.has_value = column, kind, False
        self.text = _Text(self.max_cell_bytes)

    def _end_cell(self) -> None:
        row, text, kind = self.row, self.text, self.kind
        assert row is not None and text is not None
        self.text = None
        column = self.column - 1
        if not self.has_value or (kind != "inlineStr" and text.size == 0):
            return  # an empty cell, as openpyxl reads it: None
        if kind in _TEXT_TYPES or kind not in _KNOWN_TYPES:
            if text.over:
                row.oversized[column] = text.size
                return
            self._keep(row, column, text.value(), text.size)
            return
        raw = text.value() if text.size <= _NUMBER_TEXT else ""
        try:
            if kind == "s":
                index = int(raw) if raw.strip().isdigit() else -1
                if not 0 <= index < self.strings.count:
                    raise self.error(f"cell {self.cell} refers to shared string {raw or '?'!s:.20}, but the table "
                                     f"holds {self.strings.count:,}")
                if not row.too_large:
                    row.shared[column] = index
                return
            if kind == "b":
                value: Any = bool(int(raw))
            elif kind == "d":
                value = _iso_datetime(raw)
            else:  # as openpyxl: a decimal point or an exponent makes a float
                value = float(raw) if ("." in raw or "e" in raw or "E" in raw) else int(raw)
        except ValueError:
            raise self.error(f"cell {self.cell} of type {kind!r} holds {raw or text.value()!r:.40}, "
                             f"not a {'date' if kind == 'd' else 'number'}") from None
        if not row.too_large:
            row.values[column] = value

    def _keep(self, row: SheetRow, column: int, value: str, size: int) -> None:
        row.size += size
        if row.too_large or row.size > self.max_row_bytes:
            row.too_large, row.values, row.shared = True, {}, {}
            return
        row.values[column] = value


def _iso_datetime(text: str) -> datetime | str:
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        return text


def _resolve(row: SheetRow, strings: _SharedStrings, max_row_bytes: int) -> None:
    """Put the row's shared strings in its values, as long as its text stays within ``max_row_bytes``
    (sizes are read before any text, so a row naming one large string many times reads it only up to the bound)."""
    for column, index in row.shared.items():
        size, over = strings.size(index)
        if over:
            row.oversized[column] = size
            continue
        row.size += size
        if row.too_large or row.size > max_row_bytes:
            row.too_large, row.values = True, {}
            continue
        row.values[column] = strings.text(index)
    row.shared = {}


# --------------------------------------------------------------------------- the archive
def _check_directory(path: Path, handle: IO[bytes]) -> None:
    """Refuse a ZIP directory too large to read: zipfile reads it whole and builds an object per part.
    The end record is found as zipfile finds it (the last 22 bytes, else the last match within 64 KiB)."""
    size = handle.seek(0, 2)
    tail_size = min(size, _END.size + 0xFFFF)
    handle.seek(size - tail_size)
    tail = handle.read(tail_size)
    at = len(tail) - _END.size
    if not (at >= 0 and tail[at:at + 4] == b"PK\x05\x06" and tail[-2:] == b"\0\0"):
        at = tail.rfind(b"PK\x05\x06")
    if at < 0 or at + _END.size > len(tail):
        raise DataFileError(path, "not an .xlsx workbook: no ZIP directory (an .xls file, an encrypted workbook, "
                                  "or a cut file?)")
    parts, directory = _END.unpack_from(tail, at)[4:6]
    end_at = size - tail_size + at
    if end_at >= _LOCATOR64.size + _END64.size:
        handle.seek(end_at - _LOCATOR64.size - _END64.size)
        block = handle.read(_END64.size + _LOCATOR64.size)
        if block[_END64.size:_END64.size + 4] == b"PK\x06\x07" and block[:4] == b"PK\x06\x06":
            parts, directory = _END64.unpack_from(block)[7:9]
    if parts > MAX_PARTS or directory > MAX_DIRECTORY_BYTES:
        raise DataFileError(path, f"the ZIP directory lists {parts:,} parts in {directory:,} bytes; an .xlsx "
                                  f"workbook has a few dozen (read: at most {MAX_PARTS:,} in {MAX_DIRECTORY_BYTES:,})")


def _open_archive(path: Path) -> zipfile.ZipFile:
    try:
        with path.open("rb") as handle:
            _check_directory(path, handle)
        return zipfile.ZipFile(path)
    except OSError as exc:
        raise DataFileError(path, f"cannot read: {exc.strerror or exc}") from exc
    except _ZIP_ERRORS as exc:
        raise DataFileError(path, f"not a readable .xlsx workbook ({type(exc).__name__}: {exc})") from exc


def _locate(path: Path, archive: zipfile.ZipFile) -> tuple[zipfile.ZipInfo, zipfile.ZipInfo | None]:
    """(the first worksheet, the shared-string table or None): from the workbook and its relationships,
    else the usual part names. Part names are matched ignoring case, as OPC compares them."""
    parts = {info.filename.lower(): info for info in archive.infolist()}
    targets: dict[str, tuple[str, str]] = {}
    sheet = None
    rels, book = parts.get("xl/_rels/workbook.xml.rels"), parts.get("xl/workbook.xml")
    if rels is not None and book is not None:
        relationships = _Relationships(path, rels)
        for _ in _parse(archive, rels, relationships):
            pass
        targets = relationships.targets
        workbook = _Workbook(path, book, targets)
        for _ in _parse(archive, book, workbook):
            pass
        sheet = workbook.first
    found = parts.get((sheet or "xl/worksheets/sheet1.xml").lower())
    if found is None:
        where = f"{sheet}, which the workbook names as its first worksheet," if sheet else "xl/worksheets/sheet1.xml"
        raise DataFileError(path, f"not a readable .xlsx workbook: {where} is missing")
    table = next((name for kind, name in targets.values() if kind == "sharedStrings"), "xl/sharedStrings.xml")
    return found, parts.get(table.lower())


def read_sheet_rows(path: Path, *, max_cell_bytes: int, max_row_bytes: int) -> Iterator[SheetRow]:
    """The rows of the workbook's first worksheet that hold a value (an empty text counts as none),
    in sheet order; see the module docstring for the limits. Raises :class:`DataFileError`."""
    archive = _open_archive(path)
    strings = _SharedStrings()
    try:
        sheet, table = _locate(path, archive)
        if table is not None:
            for _ in _parse(archive, table, _StringTable(path, table, strings, max_cell_bytes)):
                pass
        reader = _Sheet(path, sheet, strings, max_cell_bytes, max_row_bytes)
        for _ in _parse(archive, sheet, reader):
            while reader.rows:
                row = reader.rows.popleft()
                _resolve(row, strings, max_row_bytes)
                if row.oversized or row.too_large or any(value != "" for value in row.values.values()):
                    yield row
    except OSError as exc:  # the temporary files of a large string table
        raise DataFileError(path, f"cannot hold the shared strings in a temporary file ({exc.strerror or exc})") \
            from exc
    finally:
        strings.close()
        archive.close()
