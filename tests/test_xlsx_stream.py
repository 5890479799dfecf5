"""The streaming XLSX reader (``mobility_env.mobilitybench.xlsx``) against openpyxl and hostile workbooks.

Well-formed sheets (written by openpyxl, and by hand with inline strings, rich runs, formula
text, sparse and omitted references) read exactly as openpyxl reads them, and load into the
same episodes and rejections as the openpyxl-based loader did. Hostile ones (a shared-string
bomb, oversized cells, a DOCTYPE, bad references, a cut archive, ...) end as one DataFileError
naming the file, or as listed rejections, in bounded memory (measured in a subprocess: VmHWM).
"""

from __future__ import annotations

import json
import struct
import subprocess
import sys
import textwrap
import zipfile
import zlib
from collections import Counter
from pathlib import Path
from typing import Any, Mapping
from unittest import mock
from xml.sax.saxutils import escape

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mobility_env import load_episodes
from mobility_env.errors import DataFileError
from mobility_env.mobilitybench import xlsx
from mobility_env.mobilitybench.loaders import LoadLimits, _rows_to_episodes
from mobility_env.mobilitybench.official import CORE_COLUMNS
from mobility_env.mobilitybench.xlsx import read_sheet_rows

try:
    import openpyxl
except ImportError:  # the dev extra; without it the comparisons skip, the hostile cases still run
    openpyxl = None
needs_openpyxl = pytest.mark.skipif(openpyxl is None, reason="openpyxl (dev extra) is the reference reader")

MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
RELS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
PACKAGE_RELS = "http://schemas.openxmlformats.org/package/2006/relationships"
SETTINGS = settings(deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
MiB = 1 << 20
LIMITS = dict(max_cell_bytes=4 * MiB, max_row_bytes=8 * MiB)


# ----------------------------------------------------------------------------- writing workbooks
def _package(sheet: str, strings: str | None = None, *, workbook: bool = True) -> dict[str, str]:
    """The parts of a minimal workbook (enough for openpyxl too) around one sheet's XML."""
    overrides = [("/xl/workbook.xml", "sheet.main"), ("/xl/worksheets/sheet1.xml", "worksheet")]
    rels = [("rId1", "worksheet", "worksheets/sheet1.xml")]
    parts = {"xl/worksheets/sheet1.xml": sheet}
    if strings is not None:
        overrides.append(("/xl/sharedStrings.xml", "sharedStrings"))
        rels.append(("rId2", "sharedStrings", "sharedStrings.xml"))
        parts["xl/sharedStrings.xml"] = strings
    if workbook:
        parts["[Content_Types].xml"] = (
            '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
            '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
            '<Default Extension="xml" ContentType="application/xml"/>'
            + "".join(f'<Override PartName="{name}" ContentType="application/vnd.openxmlformats-officedocument.'
                      f'spreadsheetml.{kind}+xml"/>' for name, kind in overrides) + "</Types>")
        parts["_rels/.rels"] = (f'<Relationships xmlns="{PACKAGE_RELS}"><Relationship Id="rId1" Type="{RELS}/'
                                'officeDocument" Target="xl/workbook.xml"/></Relationships>')
        parts["xl/workbook.xml"] = (f'<workbook xmlns="{MAIN}" xmlns:r="{RELS}"><sheets>'
                                    '<sheet name="S" sheetId="1" r:id="rId1"/></sheets></workbook>')
        parts["xl/_rels/workbook.xml.rels"] = (
            f'<Relationships xmlns="{PACKAGE_RELS}">'
            + "".join(f'<Relationship Id="{i}" Type="{RELS}/{kind}" Target="{target}"/>' for i, kind, target in rels)
            + "</Relationships>")
    return parts


def _sheet(rows: str) -> str:
    return f'<worksheet xmlns="{MAIN}"><sheetData>{rows}</sheetData></worksheet>'


def _strings(items: list[str]) -> str:
    return f'<sst xmlns="{MAIN}">' + "".join(f"<si><t>{escape(s)}</t></si>" for s in items) + "</sst>"


def _write(path: Path, parts: Mapping[str, str | bytes], method: int = zipfile.ZIP_DEFLATED) -> Path:
    with zipfile.ZipFile(path, "w", method) as archive:
        for name, data in parts.items():
            archive.writestr(name, data)
    return path


def _write_repeating(path: Path, parts: dict[str, list[tuple[bytes, int]]]) -> Path:
    """A ZIP whose parts are (piece, times) sequences, deflated with each distinct piece compressed once.

    Each piece ends with a full flush (the compressor forgets all history), so its compressed bytes
    are the same wherever it stands and can be repeated: a gigabyte of XML takes a second to write.
    """
    central = []
    with path.open("wb") as out:
        for name, pieces in parts.items():
            compressor = zlib.compressobj(6, zlib.DEFLATED, -15)
            packed: dict[bytes, bytes] = {}
            chunks, crc, size = [], 0, 0
            for piece, times in pieces:
                if piece not in packed:
                    packed[piece] = compressor.compress(piece) + compressor.flush(zlib.Z_FULL_FLUSH)
                chunks.append(packed[piece] * times)
                for _ in range(times):
                    crc = zlib.crc32(piece, crc)
                size += len(piece) * times
            chunks.append(compressor.flush())
            data = b"".join(chunks)
            offset, encoded = out.tell(), name.encode()
            out.write(struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, 0, 8, 0, 33, crc, len(data), size, len(encoded), 0))
            out.write(encoded + data)
            central.append(struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 20, 20, 0, 8, 0, 33, crc, len(data), size,
                                       len(encoded), 0, 0, 0, 0, 0, offset) + encoded)
        start, directory = out.tell(), b"".join(central)
        out.write(directory)
        out.write(struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, len(central), len(central),
                              len(directory), start, 0))
    return path


# ----------------------------------------------------------------------------- the openpyxl reference
def _openpyxl_grid(path: Path) -> dict[int, dict[int, Any]]:
    """{sheet row: {column index: value}} of the rows holding a value, as openpyxl reads them."""
    book = openpyxl.load_workbook(path, read_only=True, data_only=True)
    try:
        grid = {}
        for number, values in enumerate(book.worksheets[0].iter_rows(values_only=True), start=1):
            if any(value is not None and value != "" for value in values):
                grid[number] = {i: value for i, value in enumerate(values) if value is not None}
        return grid
    finally:
        book.close()


def _openpyxl_rows(path: Path):
    """The loader's rows as the openpyxl-based ``_read_xlsx`` built them (rows holding no value left out)."""
    book = openpyxl.load_workbook(path, read_only=True, data_only=True)
    try:
        rows = iter(book.worksheets[0].iter_rows(values_only=True))
        header = [str(c) if c is not None else "" for c in next(rows, [])]
        for index, values in enumerate(rows, start=1):
            if any(value is not None and value != "" for value in values):
                yield index, {name: ("" if value is None else value) for name, value in zip(header, values) if name}
    finally:
        book.close()


def _our_grid(path: Path, **limits: int) -> dict[int, dict[int, Any]]:
    return {row.number: row.values for row in read_sheet_rows(path, **{**LIMITS, **limits})}


def _typed(grid: dict[int, dict[int, Any]]) -> dict[int, dict[int, tuple[str, Any]]]:
    return {n: {c: (type(v).__name__, v) for c, v in row.items()} for n, row in grid.items()}


# ----------------------------------------------------------------------------- well-formed sheets
_CHARS = st.characters(codec="utf-8", exclude_categories=("Cs", "Cc", "Cn"))
_ODD_TEXT = ["", " a ", "x005F_y", "_x005F_x000D_", "1.5", "&<>\"'", "line\nbreak\ttab", "路线 A"]
_TEXT = st.one_of(st.text(_CHARS, max_size=12), st.sampled_from(_ODD_TEXT))
_VALUE = st.one_of(_TEXT, st.integers(-2**70, 2**70), st.floats(allow_nan=False, allow_infinity=False),
                   st.booleans())
_GRID = st.dictionaries(st.integers(1, 9), st.dictionaries(st.integers(1, 7), _VALUE, max_size=6), max_size=7)


def _cell_xml(ref: str | None, value: Any, how: str, table: list[str]) -> str:
    at = f' r="{ref}"' if ref else ""
    if isinstance(value, bool):
        return f'<c{at} t="b"><v>{int(value)}</v></c>'
    if isinstance(value, (int, float)):
        return f"<c{at}><v>{value!r}</v></c>"
    half = len(value) // 2
    runs = (f'<r><t xml:space="preserve">{escape(value[:half])}</t></r>'
            f'<r><rPr><b/></rPr><t xml:space="preserve">{escape(value[half:])}</t></r>')
    if how == "inline":
        return f'<c{at} t="inlineStr"><is><t xml:space="preserve">{escape(value)}</t></is></c>'
    if how == "inline runs":
        return f'<c{at} t="inlineStr"><is>{runs}</is></c>'
    if how == "formula":
        return f'<c{at} t="str"><f>A1&amp;"x"</f><v>{escape(value)}</v></c>'
    table.append(f'<si>{runs}<rPh sb="0" eb="1"><t>phonetic</t></rPh></si>' if how == "shared runs"
                 else f'<si><t xml:space="preserve">{escape(value)}</t></si>')
    return f'<c{at} t="s"><v>{len(table) - 1}</v></c>'


def _by_hand(path: Path, grid: dict[int, dict[int, Any]], draw) -> Path:
    """The grid as a sheet written by hand: each text cell inline, shared, rich or formula text; a reference
    left out where the row or column simply follows the last one."""
    table: list[str] = []
    rows, last_row = [], 0
    for number in sorted(grid):
        cells, last_column = [], 0
        for column in sorted(grid[number]):
            letters = "ABCDEFG"[column - 1]
            ref = None if column == last_column + 1 and draw(st.booleans()) else f"{letters}{number}"
            how = draw(st.sampled_from(["inline", "inline runs", "formula", "shared", "shared runs"]))
            cells.append(_cell_xml(ref, grid[number][column], how, table))
            last_column = column
        at = "" if number == last_row + 1 and draw(st.booleans()) else f' r="{number}"'
        rows.append(f"<row{at}>{''.join(cells)}</row>")
        last_row = number
    strings = f'<sst xmlns="{MAIN}">{"".join(table)}</sst>' if table or draw(st.booleans()) else None
    return _write(path, _package(_sheet("".join(rows)), strings))


@needs_openpyxl
@settings(SETTINGS, max_examples=40)
@given(grid=_GRID, writer=st.sampled_from(["openpyxl", "by hand"]), spill=st.booleans(), data=st.data())
def test_well_formed_sheets_read_as_openpyxl_reads_them(tmp_path, grid, writer, spill, data):
    path = tmp_path / "book.xlsx"
    if writer == "openpyxl":
        book = openpyxl.Workbook()
        for number, cells in grid.items():
            for column, value in cells.items():
                book.active.cell(row=number, column=column, value=value)
        book.save(path)
    else:
        _by_hand(path, grid, data.draw)
    with mock.patch.object(xlsx, "STRINGS_IN_MEMORY", 40 if spill else xlsx.STRINGS_IN_MEMORY):
        ours = _our_grid(path)
    assert _typed(ours) == _typed(_openpyxl_grid(path))


@needs_openpyxl
def test_each_cell_type_reads_as_openpyxl_reads_it(tmp_path):
    table = ["plain", "a x005F_b", "",
             '<si><r><t>ri</t></r><r><t>ch</t></r><rPh sb="0" eb="1"><t>ignored</t></rPh></si>']
    strings = f'<sst xmlns="{MAIN}">' + "".join(s if s.startswith("<si>") else f"<si><t>{s}</t></si>"
                                                for s in table) + "</sst>"
    cells = ['<c r="A1" t="s"><v>0</v></c>', '<c r="B1" t="s"><v>1</v></c>', '<c r="C1" t="s"><v>2</v></c>',
             '<c r="D1" t="s"><v>3</v></c>', '<c r="E1" t="inlineStr"><is><t>in x005F_line</t></is></c>',
             '<c r="F1" t="inlineStr"><is/></c>', '<c r="G1" t="inlineStr"/>', '<c r="H1" t="str"><f>1</f><v>f</v></c>',
             '<c r="I1" t="str"><f>1</f></c>', '<c r="J1" t="e"><v>#N/A</v></c>', '<c r="K1" t="b"><v>0</v></c>',
             '<c r="L1" t="b"><v>1</v></c>', '<c r="M1"><v>12</v></c>', '<c r="N1"><v>1.0</v></c>',
             '<c r="O1"><v>1E3</v></c>', '<c r="P1"><v>-0.5e-3</v></c>', '<c r="Q1"><v>123456789012345678901</v></c>',
             '<c r="R1"><v></v></c>', '<c r="S1" s="0"/>', '<c r="T1" t="d"><v>2024-01-02T03:04:05</v></c>',
             '<c r="U1" t="s"><v> 0 </v></c>', '<c r="V1" t="n"><v>7</v><v>8</v></c>',
             '<c r="W1" t="s"><v>0</v><is><t>not this</t></is></c>']
    path = _write(tmp_path / "types.xlsx", _package(_sheet(f'<row r="1">{"".join(cells)}</row>'), strings))
    ours = _our_grid(path)
    assert _typed(ours) == _typed(_openpyxl_grid(path))
    assert ours[1][1] == "a b" and ours[1][3] == "rich" and ours[1][4] == "in x005F_line"  # as openpyxl has them


def _row_outcome(episodes) -> tuple[list[str], list[tuple[Any, ...]], dict[str, int]]:
    dumped = []
    for episode in episodes:
        record = episode.model_dump()
        record.pop("source")
        dumped.append(json.dumps(record, ensure_ascii=False, sort_keys=True, default=str))
    return (dumped, [(r.row, r.column, r.reason) for r in episodes.report.rejected],
            dict(episodes.report.repairs_by_kind))


_REAL_ROWS = (7, 8, 9, 10, 1, 0, 2)  # four Traffic Info rows, a 6 KB route row, two more of the real sample


@needs_openpyxl
@settings(SETTINGS, max_examples=12)
@given(data=st.data())
def test_loaded_episodes_match_the_openpyxl_loader(sample_table, tmp_path, data):
    """Real rows, some cells emptied, turned to numbers or made huge, blank and missing rows between:
    the same episodes, repairs and rejections as the openpyxl-based loader gave."""
    header, rows = sample_table
    order = data.draw(st.permutations(header), label="column order")
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(list(order))
    number = 1
    for source in data.draw(st.lists(st.sampled_from(_REAL_ROWS), min_size=1, max_size=5), label="rows"):
        number += data.draw(st.sampled_from([1, 1, 2]), label="gap")
        row = dict(rows[source])
        for column in data.draw(st.lists(st.sampled_from(header), max_size=2), label="changed"):
            row[column] = data.draw(st.sampled_from(["", 7, 2.5, True, "x" * 9_000]), label=column)
        for column_index, name in enumerate(order, start=1):
            sheet.cell(row=number, column=column_index, value=row[name] if row[name] != "" else None)
    path = tmp_path / "sample.xlsx"
    book.save(path)
    limits = LoadLimits(max_cell_bytes=8_000, max_row_bytes=8 * MiB)  # no real row is near max_row_bytes
    expected = _rows_to_episodes(path, _openpyxl_rows(path), False, limits)
    got = load_episodes(path, max_cell_bytes=8_000, max_row_bytes=8 * MiB)
    assert _row_outcome(got) == _row_outcome(expected)


# ----------------------------------------------------------------------------- hostile workbooks
_HEADER_ROW = '<row r="1">' + "".join(f'<c r="{c}1" t="inlineStr"><is><t>{name}</t></is></c>'
                                      for c, name in zip("ABCDE", CORE_COLUMNS)) + "</row>"

HOSTILE = {
    "doctype": (_package(f'<!DOCTYPE w [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">]>'
                         f'<worksheet xmlns="{MAIN}"><sheetData><row><c t="inlineStr"><is><t>&b;</t></is></c></row>'
                         "</sheetData></worksheet>"), "DOCTYPE"),
    "entity in strings": (_package(_sheet(_HEADER_ROW), '<!DOCTYPE sst SYSTEM "file:///etc/passwd"><sst/>'),
                          "DOCTYPE"),
    "undefined entity": (_package(_sheet('<row><c t="inlineStr"><is><t>&lol;</t></is></c></row>')), "undefined"),
    "not XML": (_package("<worksheet><sheetData><row></sheetData>"), "not well-formed"),
    "no sheet": ({"xl/workbook.xml": "<workbook/>"}, "missing"),
    "shared string, no table": (_package(_sheet('<row><c r="A1" t="s"><v>0</v></c></row>')), "holds 0"),
    "shared string out of range": (_package(_sheet('<row><c r="A1" t="s"><v>3</v></c></row>'), _strings(["a"])),
                                   "shared string 3"),
    "negative shared string": (_package(_sheet('<row><c r="A1" t="s"><v>-1</v></c></row>'), _strings(["a"])),
                               "shared string -1"),
    "row zero": (_package(_sheet('<row r="0"/>')), "outside the sheet"),
    "row past the grid": (_package(_sheet('<row r="1048577"/>')), "outside the sheet"),
    "rows out of order": (_package(_sheet('<row r="5"/><row r="3"/>')), "in order"),
    "cell in another row": (_package(_sheet('<row r="2"><c r="A3"><v>1</v></c></row>')), "stands in row 2"),
    "column past the grid": (_package(_sheet('<row r="1"><c r="XFE1"><v>1</v></c></row>')), "outside the sheet"),
    "repeated cell": (_package(_sheet('<row r="1"><c r="B1"><v>1</v></c><c r="B1"><v>2</v></c></row>')), "in order"),
    "bad reference": (_package(_sheet('<row r="1"><c r="1A"><v>1</v></c></row>')), "not a cell reference"),
    "bad number": (_package(_sheet('<row r="1"><c r="A1"><v>12abc</v></c></row>')), "not a number"),
    "huge number": (_package(_sheet('<row r="1"><c r="A1"><v>' + "9" * 5_000 + "</v></c></row>")), "not a number"),
    "deep nesting": (_package(_sheet('<row r="1">' + "<x>" * 100 + "</x>" * 100 + "</row>")), "nested over"),
    "long comment": (_package(_sheet("<!--" + "c>" * MiB + "-->")), "runs over"),
    "long tag": (_package(_sheet(f'<row r="1" a="{"x" * 2 * MiB}"/>')), "runs over"),
    "many names": (_package(_sheet("".join(f"<n{i}/>" for i in range(10_001)))), "distinct XML names"),
    "many attribute names": (_package(_sheet("".join(f'<row r="{i + 1}" a{i}="1"/>' for i in range(10_001)))),
                             "distinct XML names"),
    "long names": (_package(_sheet("".join(f"<{c * 200_000}/>" for c in "abcdef"))), "distinct XML names"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_workbooks_are_one_line_data_file_errors(tmp_path, case):
    parts, fragment = HOSTILE[case]
    path = _write(tmp_path / f"{case.replace(' ', '_')}.xlsx", parts)
    with pytest.raises(DataFileError) as info:
        list(read_sheet_rows(path, **LIMITS))
    message = str(info.value)
    assert info.value.path == str(path) and fragment in message and "\n" not in message, message
    with pytest.raises(DataFileError):  # and through the loader
        load_episodes(path)


def test_damaged_archives_are_data_file_errors(tmp_path):
    good = _write(tmp_path / "good.xlsx", _package(_sheet(_HEADER_ROW)))
    data = good.read_bytes()
    stored = _write(tmp_path / "stored.xlsx", _package(_sheet(_HEADER_ROW)), zipfile.ZIP_STORED).read_bytes()
    cases = {
        "cut.xlsx": (data[: len(data) // 2], "no ZIP directory"),
        "empty.xlsx": (b"", "no ZIP directory"),
        "noise.xlsx": (b"PK\x03\x04" + bytes(range(256)) * 8, "no ZIP directory"),
        # well-formed XML still, but not what was stored: the CRC notices
        "changed.xlsx": (stored.replace(b"sheetData", b"sheetDatb"), "CRC"),
    }
    for name, (content, fragment) in cases.items():
        (tmp_path / name).write_bytes(content)
        with pytest.raises(DataFileError, match=fragment) as info:
            list(read_sheet_rows(tmp_path / name, **LIMITS))
        assert info.value.path == str(tmp_path / name)
    bzip = _write(tmp_path / "bzip2.xlsx", _package(_sheet(_HEADER_ROW)), zipfile.ZIP_BZIP2)
    with pytest.raises(DataFileError, match="compressed with method 12"):
        list(read_sheet_rows(bzip, **LIMITS))
    with mock.patch.object(xlsx, "MAX_PART_BYTES", 100), pytest.raises(DataFileError, match="declares"):
        list(read_sheet_rows(good, **LIMITS))
    with mock.patch.object(xlsx, "MAX_PARTS", 3), pytest.raises(DataFileError, match="ZIP directory lists 5 parts"):
        list(read_sheet_rows(good, **LIMITS))


def test_a_zip64_directory_is_bounded_too(tmp_path):
    """A ZIP64 end record (which zipfile reads in place of the plain one) counts, with its own part count."""
    data = _write(tmp_path / "good.xlsx", _package(_sheet(_HEADER_ROW))).read_bytes()
    end = data.rindex(b"PK\x05\x06")
    directory_size, directory_at = struct.unpack_from("<2L", data, end + 12)
    record = struct.pack("<4sQ2H2L4Q", b"PK\x06\x06", 44, 45, 45, 0, 0, 200_000, 200_000, directory_size,
                         directory_at)
    locator = struct.pack("<4sLQL", b"PK\x06\x07", 0, end, 1)
    path = tmp_path / "zip64.xlsx"
    path.write_bytes(data[:end] + record + locator + data[end:])
    with pytest.raises(DataFileError, match="lists 200,000 parts"):
        list(read_sheet_rows(path, **LIMITS))


def test_sheet_found_through_the_workbook_or_by_its_usual_name(tmp_path):
    """The first worksheet the workbook lists (a chart sheet before it skipped); without a workbook, sheet1.xml."""
    parts = _package(_sheet('<row r="1"><c t="inlineStr"><is><t>first</t></is></c></row>'))
    parts["xl/worksheets/other.xml"] = _sheet('<row r="1"><c t="inlineStr"><is><t>other</t></is></c></row>')
    parts["xl/workbook.xml"] = (f'<x:workbook xmlns:x="{MAIN}" xmlns:rel="{RELS}"><x:sheets><x:sheet name="C" '
                                'sheetId="3" rel:id="rId7"/><x:sheet name="O" sheetId="2" rel:id="rId5"/>'
                                '<x:sheet name="S" sheetId="1" rel:id="rId1"/></x:sheets></x:workbook>')
    parts["xl/_rels/workbook.xml.rels"] = parts["xl/_rels/workbook.xml.rels"].replace(
        "</Relationships>", f'<Relationship Id="rId5" Type="{RELS}/worksheet" Target="/xl/worksheets/other.xml"/>'
                            f'<Relationship Id="rId7" Type="{RELS}/chartsheet" Target="chartsheets/c.xml"/>'
                            "</Relationships>")
    assert _our_grid(_write(tmp_path / "listed.xlsx", parts)) == {1: {0: "other"}}
    many = dict(parts, **{"xl/_rels/workbook.xml.rels": f'<Relationships xmlns="{PACKAGE_RELS}">' + "".join(
        f'<Relationship Id="r{i}" Type="{RELS}/worksheet" Target="{"s" * 1000}"/>' for i in range(1100))
        + "</Relationships>"})
    with pytest.raises(DataFileError, match="characters of ids and targets"):
        _our_grid(_write(tmp_path / "many.xlsx", many))
    bare = {"xl/worksheets/sheet1.xml": _sheet('<row r="1"><c t="inlineStr"><is><t>bare</t></is></c></row>')}
    assert _our_grid(_write(tmp_path / "bare.xlsx", bare)) == {1: {0: "bare"}}


def test_oversized_cells_are_listed_skips_with_the_message_the_row_check_gives(tmp_path):
    """A shared or inline string over the limit, and a row naming one string past max_row_bytes: each row
    rejected (file, row, column), the others loaded; the text of the big cells never kept."""
    big, medium = "q" * 5_000, "m" * 3_000
    rows = [_HEADER_ROW,
            '<row r="2"><c r="A2" t="s"><v>0</v></c></row>',
            f'<row r="3"><c r="B3" t="inlineStr"><is><t>{big}</t></is></c></row>',
            '<row r="5">' + "".join(f'<c r="{c}5" t="s"><v>1</v></c>' for c in "ABCDEFGH") + "</row>"]
    path = _write(tmp_path / "big.xlsx", _package(_sheet("".join(rows)), _strings([big, medium])))
    sheet_rows = list(read_sheet_rows(path, max_cell_bytes=4_000, max_row_bytes=20_000))
    assert [(r.number, r.oversized, r.too_large, r.values) for r in sheet_rows[1:]] == [
        (2, {0: 5_000}, False, {}), (3, {1: 5_000}, False, {}), (5, {}, True, {})]
    episodes = load_episodes(path, max_cell_bytes=4_000, max_row_bytes=20_000)
    assert [(r.file, r.row, r.column, r.reason) for r in episodes.report.rejected] == [
        (str(path), 1, "query", "cell is 5,000 bytes, over the limit of 4,000 (max_cell_bytes)"),
        (str(path), 2, "context", "cell is 5,000 bytes, over the limit of 4,000 (max_cell_bytes)"),
        (str(path), 4, None, "row over 20,000 bytes of text (max_row_bytes); skipped unread")]


_FRAGMENTS = st.sampled_from([
    '<row r="2">', "<row>", "</row>", '<c r="A2">', '<c r="B2" t="s">', '<c t="inlineStr">', '<c t="b">', "</c>",
    "<v>1</v>", "<v>0</v>", "<v>x</v>", "<is><t>a</t></is>", "<is>", "</is>", "<t>", "</t>", "text", "&amp;",
    "&bogus;", "<![CDATA[<c>]]>", "<!-- c -->", "<?pi x?>", "<!DOCTYPE x>", '<c r="ZZZZ9">', '<row r="-1">', "<",
    "\x00", "\udcff", "]]>", '<c r="A1048577">', "<v>1e999</v>", "<v>nan</v>"])


@settings(SETTINGS, max_examples=150)
@given(fragments=st.lists(_FRAGMENTS, max_size=14), table=st.booleans())
def test_random_sheet_xml_ends_in_rows_or_one_data_file_error(tmp_path, fragments, table):
    sheet = f'<worksheet xmlns="{MAIN}"><sheetData>{"".join(fragments)}</sheetData></worksheet>'
    path = tmp_path / "random.xlsx"
    _write(path, {**_package("", _strings(["s0", "s1"]) if table else None),
                  "xl/worksheets/sheet1.xml": sheet.encode("utf-8", "surrogatepass")})
    try:
        rows = list(read_sheet_rows(path, **LIMITS))
    except DataFileError as exc:
        assert exc.path == str(path) and "\n" not in str(exc)
        return
    assert all(isinstance(row, xlsx.SheetRow) and row.number >= 1 for row in rows)


# ----------------------------------------------------------------------------- the bomb, in bounded memory
HUGE, MEDIUM, MEDIUMS = 64 * MiB, 512 * 1024, 480  # 64 MiB + 240 MiB of shared strings, 16 MiB inline: 2 MB zipped
PEAK_LIMIT_MIB = 256


def write_bomb(path: Path) -> Path:
    """A workbook whose shared strings hold 304 MiB (one string over the cell limit, 480 under it) in a ~2 MB file:
    a header row, a row naming the huge string, a row naming a medium one, an inline string of 16 MiB, and a
    row naming one medium string 64 times (32 MiB of text from 1 KB of XML)."""
    strings = [(f'<sst xmlns="{MAIN}">'.encode(), 1)]
    strings += [(f"<si><t>{name}</t></si>".encode(), 1) for name in CORE_COLUMNS]
    strings += [(b"<si><t>" + b"A" * HUGE + b"</t></si>", 1), (b"<si><t>" + b"B" * MEDIUM + b"</t></si>", MEDIUMS),
                (b"</sst>", 1)]
    header = '<row r="1">' + "".join(f'<c r="{c}1" t="s"><v>{i}</v></c>' for i, c in enumerate("ABCDE")) + "</row>"
    rows = [header, '<row r="2"><c r="A2" t="s"><v>5</v></c></row>', '<row r="3"><c r="A3" t="s"><v>6</v></c></row>',
            '<row r="4"><c r="A4" t="inlineStr"><is><t>', "C" * (16 * MiB), "</t></is></c></row>",
            '<row r="5">' + "".join(f'<c t="s"><v>{6 + i % 3}</v></c>' for i in range(64)) + "</row>"]
    sheet = [(f'<worksheet xmlns="{MAIN}"><sheetData>'.encode(), 1)] + [(r.encode(), 1) for r in rows]
    parts = {name: [(part.encode(), 1)] for name, part in _package("", "").items()}  # a package openpyxl opens too
    parts["xl/sharedStrings.xml"] = strings
    parts["xl/worksheets/sheet1.xml"] = sheet + [(b"</sheetData></worksheet>", 1)]
    return _write_repeating(path, parts)


PROBE = textwrap.dedent("""
    import json, sys, time
    from mobility_env import load_episodes
    from mobility_env.errors import DataFileError
    start = time.perf_counter()
    try:
        episodes = load_episodes(sys.argv[1])
        outcome = {"loaded": episodes.report.loaded,
                   "rejected": [[r.row, r.column, r.reason] for r in episodes.report.rejected]}
    except DataFileError as exc:
        outcome = {"error": str(exc)}
    outcome["seconds"] = time.perf_counter() - start
    # VmHWM: this image's peak resident memory (ru_maxrss would also count the parent's, inherited through exec)
    status = open("/proc/self/status").read()
    outcome["peak_mib"] = int(status.split("VmHWM:")[1].split()[0]) / 1024
    print(json.dumps(outcome))
""")


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="peak memory is read from /proc (Linux)")
def test_shared_string_bomb_loads_in_bounded_memory(tmp_path):
    path = write_bomb(tmp_path / "bomb.xlsx")
    assert path.stat().st_size < 4 * MiB
    with zipfile.ZipFile(path) as archive:  # what the file claims is what it holds (zipfile checks the CRC)
        assert archive.getinfo("xl/sharedStrings.xml").file_size > 300 * MiB
    done = subprocess.run([sys.executable, "-c", PROBE, str(path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    outcome = json.loads(done.stdout)
    assert outcome["peak_mib"] < PEAK_LIMIT_MIB, outcome
    assert outcome.get("loaded") == 0, outcome
    assert outcome["rejected"] == [
        [1, "query", f"cell is {HUGE:,} bytes, over the limit of {4 * MiB:,} (max_cell_bytes)"],
        [2, "task_scenario", "required cell is empty"],
        [3, "query", f"cell is {16 * MiB:,} bytes, over the limit of {4 * MiB:,} (max_cell_bytes)"],
        [4, None, f"row over {8 * MiB:,} bytes of text (max_row_bytes); skipped unread"]], outcome


def test_write_repeating_writes_what_zipfile_reads(tmp_path):
    path = _write_repeating(tmp_path / "r.zip", {"a.xml": [(b"<a>", 1), (b"xy", 1000), (b"</a>", 1)]})
    with zipfile.ZipFile(path) as archive:
        assert archive.read("a.xml") == b"<a>" + b"xy" * 1000 + b"</a>"
        assert Counter(info.compress_type for info in archive.infolist()) == {zipfile.ZIP_DEFLATED: 1}
