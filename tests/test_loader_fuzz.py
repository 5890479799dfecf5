"""Corrupt files against the loaders and the built-directory checks (hypothesis).

Truncated, byte-flipped, wrong-magic, huge-cell, deep-nested, bad-UTF-8 and missing-column
files: every outcome is a correct load (rows the damage did not touch load exactly as before),
a rejection naming file, row (and column for cell errors), or a typed error naming the file;
never a crash, never a silent change. Byte flips of built directories run in a subprocess, so
a crash in a native reader is reported instead of killing the test run.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mobility_env import load_episodes
from mobility_env.mobilitybench.build import MANIFEST_FILE, build_directory
from mobility_env.errors import DataFileError, RowError

ROWS = (7, 8, 9, 10, 1)     # four small Traffic Info rows and a 6 KB route row of the real sample
MAX_CELL = 8_000            # small bounds, so huge cells stay cheap to generate
FUZZ = settings(deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                        HealthCheck.too_slow])


# ----------------------------------------------------------------------------- the files
@pytest.fixture(scope="module")
def base(sample_table, tmp_path_factory):
    """The clean CSV and JSONL bytes, the byte offset where each CSV record starts, and their episodes."""
    header, rows = sample_table
    chosen = [rows[i] for i in ROWS]
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=header, lineterminator="\r\n")
    writer.writeheader()
    starts = []
    for row in chosen:
        starts.append(len(text.getvalue().encode("utf-8")))
        writer.writerow(row)
    csv_bytes = text.getvalue().encode("utf-8")
    jsonl_lines = [json.dumps(row, ensure_ascii=False).encode("utf-8") + b"\n" for row in chosen]
    folder = tmp_path_factory.mktemp("fuzz_base")
    (folder / "clean.csv").write_bytes(csv_bytes)
    episodes = load_episodes(folder / "clean.csv", max_cell_bytes=MAX_CELL)
    assert episodes.report.loaded == len(ROWS) and not episodes.report.rejected
    return {"header": header, "rows": chosen, "csv": csv_bytes, "starts": starts, "jsonl": jsonl_lines,
            "episodes": [_content(e) for e in episodes]}


def _content(episode) -> str:
    dumped = episode.model_dump()
    dumped.pop("source")
    return json.dumps(dumped, ensure_ascii=False, sort_keys=True)


def _check_outcome(path: Path, load, clean: list[str], untouched: int, tmp_path: Path) -> None:
    """The properties every outcome must have (see the module docstring)."""
    try:
        episodes = load()
    except RowError:
        raise AssertionError("a RowError escaped a non-strict load")
    except DataFileError as exc:
        assert exc.path == str(path), exc
        return
    for rejection in episodes.report.rejected:
        assert rejection.file == str(path) and rejection.row is not None and rejection.row >= 1, rejection
    by_row = {e.row: _content(e) for e in episodes}
    for row in range(1, untouched + 1):  # rows before the first damaged byte: exactly as before
        assert by_row.get(row) == clean[row - 1], f"row {row} changed though the damage lies after it"
    assert not any(r.kind == "truncated" for e in episodes for r in e.repairs)  # nothing here is an Excel cut
    if episodes:  # what was loaded builds and reads back unchanged
        out = build_directory(episodes, tmp_path / "built")
        assert sorted(_content(e) for e in load_episodes(out)) == sorted(_content(e) for e in episodes)


# ----------------------------------------------------------------------------- mutations
_NASTY = st.sampled_from([b'"', b",", b"\n", b"\r", b"\x00", b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"'", b"[", b"{",
                          b"]", b"\\", b"<ToolStatus.SUCC", b'"""', b"\xef\xbb\xbf"])


@st.composite
def byte_damage(draw, size: int):
    """(kind, offset, function bytes -> bytes): truncation, flips, insertions, wrong magic."""
    kind = draw(st.sampled_from(["truncate", "flip", "insert", "magic"]))
    if kind == "magic":
        magic = draw(st.sampled_from([b"PK\x03\x04", b"PAR1", b"\xff\xfe", b"\x00\x00", b"\x89PNG"]))
        return kind, 0, lambda data: magic + data[len(magic):]
    offset = draw(st.integers(0, size - 1))
    if kind == "truncate":
        return kind, offset, lambda data: data[:offset]
    if kind == "flip":
        flips = draw(st.lists(st.tuples(st.integers(0, 40), st.integers(1, 255)), min_size=1, max_size=4))
        offset += 0  # the first flipped byte is at offset; the others follow within 40 bytes

        def flip(data: bytes) -> bytes:
            out = bytearray(data)
            for delta, mask in flips:
                if offset + delta < len(out):
                    out[offset + delta] ^= mask
            return bytes(out)
        return kind, offset, flip
    junk = draw(st.lists(_NASTY, min_size=1, max_size=5).map(b"".join))
    return kind, offset, lambda data: data[:offset] + junk + data[offset:]


_DEEP = st.integers(65, 3_000).map(lambda n: "{'data': " + "[" * n + "]" * n + "}")
_HUGE = st.integers(MAX_CELL + 1, 3 * MAX_CELL).flatmap(
    lambda n: st.sampled_from(["x", "路", "'", '"', "\n", "[{"]).map(lambda c: (c * n)[:n]))
_BAD_TEXT = st.sampled_from(["\ud800", "a\udcffb", "\udfff\ud800"])
_CELLS = st.one_of(_DEEP, _HUGE, _BAD_TEXT.map(lambda s: "{'data': '" + s + "'}"), _BAD_TEXT,
                   st.text(max_size=60), st.sampled_from(["{'route': {'paths': [{'distance': '5',, 'steps': []",
                                                          "{'route': {'paths': [", "no route", "{1, 2}", "(1, 2)"]))


# ----------------------------------------------------------------------------- literal cells
_SCALARS = (st.none() | st.booleans() | st.integers(-10**30, 10**30) | st.floats(allow_nan=False, allow_infinity=False)
            | st.text(max_size=12) | st.sampled_from(["it's", 'say "hi"', "a\\b", "\n", "路线", "\t'\""]))
_VALUES = st.recursive(_SCALARS, lambda children: st.lists(children, max_size=4)
                       | st.dictionaries(st.text(max_size=6), children, max_size=4)
                       | st.tuples(children, children), max_leaves=20)


@settings(deadline=None, derandomize=True, max_examples=300)
@given(_VALUES, st.data())
def test_parse_literal_agrees_with_literal_eval_and_tells_a_cut_from_garbage(value, data):
    import ast
    import warnings

    from mobility_env.literal import CellParseError, parse_literal

    text = repr([value])
    assert parse_literal(text) == ast.literal_eval(text)
    cut = data.draw(st.integers(0, len(text) - 1), label="cut")
    with pytest.raises(CellParseError) as info:  # every proper prefix of a literal is a cut, never garbage
        parse_literal(text[:cut])
    assert info.value.incomplete, (text[:cut], info.value)
    at = data.draw(st.integers(0, len(text)), label="at")
    junk = data.draw(st.sampled_from([",", ":", "]", "}", ")", "'", "[", "x", "1", " ", "\\", "<", "(", "{"]),
                     label="junk")
    changed = text[:at] + junk + text[at:]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = ast.literal_eval(changed)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        expected = CellParseError
    try:
        got = parse_literal(changed)
    except CellParseError:
        got = CellParseError
    if got is not CellParseError:  # never a value Python would not give
        assert got == expected and type(got) is type(expected), (changed, got, expected)


# ----------------------------------------------------------------------------- CSV
@settings(FUZZ, max_examples=80)
@given(data=st.data())
def test_damaged_csv_bytes_load_or_fail_typed(base, tmp_path, data):
    kind, offset, damage = data.draw(byte_damage(len(base["csv"])), label="damage")
    path = tmp_path / "damaged.csv"
    path.write_bytes(damage(base["csv"]))
    untouched = sum(1 for k, start in enumerate(base["starts"])
                    if (base["starts"][k + 1] if k + 1 < len(base["starts"]) else len(base["csv"])) <= offset)
    if kind == "magic":
        untouched = 0
    _check_outcome(path, lambda: load_episodes(path, max_cell_bytes=MAX_CELL), base["episodes"], untouched, tmp_path)


@settings(FUZZ, max_examples=60)
@given(data=st.data())
def test_bad_cells_and_headers_in_csv_are_rejected_or_loaded_exactly(base, tmp_path, data):
    header, rows = list(base["header"]), [dict(r) for r in base["rows"]]
    target = data.draw(st.integers(0, len(rows) - 1), label="row")
    column = data.draw(st.sampled_from(header), label="column")
    rows[target][column] = data.draw(_CELLS, label="cell")
    dropped = data.draw(st.none() | st.sampled_from(["query", "tool_list", "context", "task_scenario"]), label="drop")
    if dropped:
        header.remove(dropped)
    path = tmp_path / "cells.csv"
    with path.open("w", encoding="utf-8", errors="surrogatepass", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=header, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    if dropped:
        with pytest.raises(DataFileError, match=dropped) as info:
            load_episodes(path, max_cell_bytes=MAX_CELL)
        assert info.value.path == str(path)
        return
    episodes = load_episodes(path, max_cell_bytes=MAX_CELL)
    _check_outcome(path, lambda: episodes, base["episodes"], target, tmp_path)
    assert all(r.row == target + 1 for r in episodes.report.rejected)
    loaded = {e.row: _content(e) for e in episodes}
    for k in range(len(rows)):  # every other row, before or after the bad cell, is untouched
        if k != target:
            assert loaded[k + 1] == base["episodes"][k]
    for rejection in episodes.report.rejected:
        if column in ("query", "route_ans", "ans", "context", "tool_list", "key_info") and rejection.column:
            assert rejection.column == column


# ----------------------------------------------------------------------------- JSONL
@settings(FUZZ, max_examples=60)
@given(data=st.data())
def test_damaged_jsonl_bytes_load_or_fail_typed(base, tmp_path, data):
    clean = b"".join(base["jsonl"])
    kind, offset, damage = data.draw(byte_damage(len(clean)), label="damage")
    path = tmp_path / "damaged.jsonl"
    path.write_bytes(damage(clean))
    ends = [sum(len(line) for line in base["jsonl"][:k + 1]) for k in range(len(base["jsonl"]))]
    untouched = 0 if kind == "magic" else sum(1 for end in ends if end <= offset)
    _check_outcome(path, lambda: load_episodes(path, max_cell_bytes=MAX_CELL), base["episodes"], untouched, tmp_path)


@settings(FUZZ, max_examples=40)
@given(data=st.data())
def test_bad_json_values_are_rejected_naming_the_column(base, tmp_path, data):
    rows = [dict(r) for r in base["rows"]]
    target = data.draw(st.integers(0, len(rows) - 1), label="row")
    column = data.draw(st.sampled_from(["query", "route_ans", "ans", "context", "tool_list", "road"]), label="column")
    depth = data.draw(st.integers(65, 400), label="depth")
    value = data.draw(st.sampled_from([json.loads("[" * depth + "]" * depth), 7, ["x"] * 3, {"a": "\ud800"},
                                       "y" * (MAX_CELL + 5), None]), label="value")
    rows[target][column] = value
    path = tmp_path / "values.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=True) + "\n" for r in rows), encoding="utf-8")
    episodes = load_episodes(path, max_cell_bytes=MAX_CELL)
    _check_outcome(path, lambda: episodes, base["episodes"], target, tmp_path)
    assert [r.row for r in episodes.report.rejected] in ([], [target + 1])
    if episodes.report.rejected and episodes.report.rejected[0].column is not None:
        assert episodes.report.rejected[0].column in (column, "tool_list", "query")


# ----------------------------------------------------------------------------- XLSX
@pytest.fixture(scope="module")
def xlsx_bytes(base, tmp_path_factory) -> bytes:
    openpyxl = pytest.importorskip("openpyxl")
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(base["header"])
    for row in base["rows"]:
        sheet.append([row[h] for h in base["header"]])
    path = tmp_path_factory.mktemp("xlsx") / "clean.xlsx"
    book.save(path)
    return path.read_bytes()


@settings(FUZZ, max_examples=30)
@given(data=st.data())
def test_damaged_xlsx_fails_typed_or_loads_the_same_rows(base, xlsx_bytes, tmp_path, data):
    kind, offset, damage = data.draw(byte_damage(len(xlsx_bytes)), label="damage")
    path = tmp_path / "damaged.xlsx"
    path.write_bytes(damage(xlsx_bytes))
    try:
        episodes = load_episodes(path, max_cell_bytes=MAX_CELL)
    except DataFileError as exc:
        assert exc.path == str(path)
        return
    # the zip checksums catch changed content: whatever loads is one of the clean rows, at its place
    for episode in episodes:
        assert _content(episode) == base["episodes"][episode.row - 1]


# ----------------------------------------------------------------------------- built directories
_DIRECTORY_PROBE = textwrap.dedent("""
    import json, shutil, sys, warnings
    from pathlib import Path
    warnings.simplefilter("ignore")
    from mobility_env import load_episodes
    from mobility_env.errors import DataFileError, MobilityEnvError
    from mobility_env.mobilitybench.store import resolve_data
    from mobility_env.tools import validate_call

    source, work, cases, verified = Path(sys.argv[1]), Path(sys.argv[2]), json.loads(sys.argv[3]), sys.argv[4] == "1"
    files = sorted(p.relative_to(source).as_posix() for p in source.rglob("*") if p.is_file())

    def outcome(path):
        store = resolve_data(path)
        episodes = [store.get(i) for i in store.ids]
        seen = [e.model_dump_json() for e in episodes]
        for e in episodes:
            for c in e.recorded:
                if not validate_call(c.name, c.arguments):
                    seen.append(json.dumps(store.sandbox.lookup(c.name, c.arguments, e.episode_id).response))
        seen += [e.model_dump_json() for e in load_episodes(path)]
        return seen

    intact = outcome(source)
    for k, flips in enumerate(cases):
        copy = work / f"case{k}"
        shutil.copytree(source, copy)
        touched = set()
        for index, fraction, mask in flips:
            name = files[index % len(files)]
            target = copy / name
            data = bytearray(target.read_bytes())
            data[min(len(data) - 1, int(fraction * len(data)))] ^= mask
            target.write_bytes(bytes(data))
            touched.add(name)
        try:
            result = "same" if outcome(copy) == intact else "CHANGED"
        except DataFileError as exc:
            named = Path(exc.path).relative_to(copy).as_posix() if Path(exc.path).is_relative_to(copy) else exc.path
            vouched = named in touched or "manifest.json" in touched  # a changed manifest may blame any file
            result = "refused" if vouched else f"WRONG-FILE:{named}"
        except MobilityEnvError as exc:
            result = f"typed:{type(exc).__name__}"
        except Exception as exc:
            result = f"RAISED:{type(exc).__name__}:{exc}"
        shutil.rmtree(copy)
        print(json.dumps([k, sorted(touched), result]), flush=True)
""")


@pytest.fixture(scope="module")
def small_built(sample_episodes, tmp_path_factory) -> Path:
    return build_directory(sample_episodes[:10], tmp_path_factory.mktemp("fuzz_built") / "d")


_CASE = st.lists(st.tuples(st.integers(0, 200), st.floats(0, 1), st.integers(1, 255)), min_size=1, max_size=3)


def _run_probe(directory: Path, work: Path, cases: list, verified: bool) -> list[list]:
    done = subprocess.run([sys.executable, "-c", _DIRECTORY_PROBE, str(directory), str(work), json.dumps(cases),
                           "1" if verified else "0"], capture_output=True, text=True, timeout=600)
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("[")]
    assert done.returncode == 0, (f"the probe died (signal {-done.returncode})" if done.returncode < 0 else
                                  done.returncode, lines[-3:], done.stderr[-2000:])
    assert len(lines) == len(cases)
    return lines


@settings(FUZZ, max_examples=4)
@given(cases=st.lists(_CASE, min_size=10, max_size=10))
def test_byte_flips_in_a_built_directory_are_refused_or_harmless(small_built, tmp_path, cases):
    for k, touched, result in _run_probe(small_built, tmp_path, cases, verified=True):
        if any(name.endswith(".parquet") for name in touched):  # nothing can rebuild it: refused, named
            assert result == "refused", (cases[k], touched, result)
        elif MANIFEST_FILE in touched:  # refused, or a change to a field no check depends on
            assert result in ("refused", "same"), (cases[k], touched, result)
        else:  # a derived file is checked and rebuilt in memory: the agent sees the same data
            assert result == "same", (cases[k], touched, result)


@settings(FUZZ, max_examples=2)
@given(cases=st.lists(_CASE, min_size=10, max_size=10))
def test_byte_flips_in_an_unverified_directory_never_crash(small_built, tmp_path, cases):
    work = Path(tempfile.mkdtemp(dir=tmp_path))  # one per example: tmp_path is shared by all of them
    old = work / "old"
    shutil.copytree(small_built, old)
    manifest = json.loads((old / MANIFEST_FILE).read_text(encoding="utf-8"))
    manifest.pop("files"), manifest.pop("checksum")
    (old / MANIFEST_FILE).write_text(json.dumps(manifest), encoding="utf-8")
    for k, touched, result in _run_probe(old, work, cases, verified=False):
        assert not result.startswith(("RAISED", "WRONG")), (cases[k], touched, result)
