"""Data files: bounded cells, verified built directories, no silent repairs, typed errors.

Every case here failed before the hardening: a cell of any size was parsed (a 29 MB cell took
6.5 GB), a garbled cell became different gold, a changed derived file silently changed what
the agent saw (or crashed the process), and bad bytes raised raw tracebacks.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
import tracemalloc
import warnings
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from mobility_env import load_episodes
from mobility_env.mobilitybench.build import (CHECKSUM, MANIFEST_FILE, DerivedFileWarning, UnverifiedDataWarning,
                                              build_directory, check_built_directory)
from mobility_env.errors import ConfigError, CorruptDataError, DataFileError, RowError, SandboxError
from mobility_env.literal import EXCEL_CELL_LIMIT, MAX_CELL_BYTES, parse_cell
from mobility_env.mobilitybench.index_build import write_replay_index
from mobility_env.mobilitybench.sandbox import Sandbox
from mobility_env.mobilitybench.store import BUNDLED_DIR, resolve_data
from mobility_env.tools import validate_call

SMALL = (7, 8, 9)  # sample rows with small cells (Traffic Info Query)
ROUTE = 1          # a route row with a 6 KB route_ans


# ----------------------------------------------------------------------------- helpers
@pytest.fixture()
def small_csv(sample_table, write_csv, tmp_path):
    """Write a CSV of three small sample rows, the middle one changed by ``**cells``."""
    header, rows = sample_table

    def write(name: str = "data.csv", **cells: str) -> Path:
        chosen = [dict(rows[i]) for i in SMALL]
        chosen[1].update(cells)
        return write_csv(tmp_path / name, header, chosen)
    return write


def _rejected(episodes) -> list[tuple[int | None, str | None]]:
    return [(r.row, r.column) for r in episodes.report.rejected]


@pytest.fixture()
def built_copy(built_dir, tmp_path) -> Path:
    copy = tmp_path / "built"
    shutil.copytree(built_dir, copy)
    return copy


def _flip(path: Path, offset: int, mask: int = 0x01) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= mask
    path.write_bytes(bytes(data))


def _lookups(box: Sandbox, episodes, shift) -> list[tuple]:
    """Exact, fuzzy (one character dropped) and nearest (moved 40 m) lookups of every recorded call."""
    out = []
    for episode in episodes:
        for call in episode.recorded:
            if validate_call(call.name, call.arguments):
                continue
            variants = [dict(call.arguments)]
            for key in ("keywords", "name", "city"):
                if isinstance(call.arguments.get(key), str) and len(call.arguments[key]) > 3:
                    variants.append({**call.arguments, key: call.arguments[key][:-1]})
            for key in ("origin", "destination", "location"):
                if isinstance(call.arguments.get(key), str) and "," in call.arguments[key]:
                    variants.append({**call.arguments, key: shift(call.arguments[key], 40.0)})
            for arguments in variants:
                for scope in (episode.episode_id, None):
                    result = box.lookup(call.name, arguments, scope)
                    out.append((result.match, result.entry, json.dumps(result.response, sort_keys=True)))
    return out


# ----------------------------------------------------------------------------- 1. bounded cells
def test_a_cell_over_max_cell_bytes_is_rejected_unread_with_row_and_column(small_csv, tmp_path):
    huge = "{'route': {'paths': [" + "{'distance': '1', 'duration': '2'}, " * 130_000 + "]}}"
    assert len(huge.encode()) > MAX_CELL_BYTES
    path = small_csv(route_ans=huge)
    episodes = load_episodes(path)
    assert _rejected(episodes) == [(2, "route_ans")]
    assert "max_cell_bytes" in episodes.report.rejected[0].reason
    assert [e.row for e in episodes] == [1, 3]
    with pytest.raises(RowError) as info:
        load_episodes(path, strict=True)
    assert (info.value.path, info.value.row, info.value.column) == (str(path), 2, "route_ans")
    # the same cell in a JSONL line
    lines = [json.dumps(r, ensure_ascii=False) for r in _csv_rows(path)]
    jsonl = tmp_path / "data.jsonl"
    jsonl.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert _rejected(load_episodes(jsonl)) == [(2, "route_ans")]


def _csv_rows(path: Path) -> list[dict[str, str]]:
    import csv

    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def test_max_cell_bytes_is_configurable_and_the_default_keeps_every_real_cell(sample_csv):
    assert load_episodes(sample_csv).report.loaded == 81  # largest real cell: 42,481 bytes
    episodes = load_episodes(sample_csv, max_cell_bytes=40_000)
    assert sorted(_rejected(episodes)) == [(6, "route_ans"), (71, "route_ans"), (74, "route_ans"), (77, "route_ans")]
    assert episodes.report.loaded == 77
    with pytest.raises(ConfigError):
        load_episodes(sample_csv, max_cell_bytes=0)


def test_an_over_long_multiline_cell_does_not_shift_the_rows_after_it(small_csv):
    path = small_csv(key_info="{'note': '" + "line\n" * 3_000 + "'}")
    episodes = load_episodes(path, max_cell_bytes=2_000, max_row_bytes=8_000)
    assert _rejected(episodes) == [(2, "key_info")]
    assert [e.row for e in episodes] == [1, 3]
    assert [e.query for e in episodes] == [r["query"] for i, r in enumerate(_csv_rows(path)) if i != 1]


@pytest.mark.parametrize("depth", [100, 100_000])
def test_deeply_nested_cells_are_rejected(small_csv, depth):
    path = small_csv(ans="{'data': " + "[" * depth + "]" * depth + "}")
    episodes = load_episodes(path)
    assert _rejected(episodes) == [(2, "ans")]
    assert "max_depth" in episodes.report.rejected[0].reason


def test_deeply_nested_json_lines_are_rejected(sample_rows, tmp_path):
    rows = [dict(sample_rows[i]) for i in SMALL]
    lines = [json.dumps(r, ensure_ascii=False) for r in rows]
    nested = dict(rows[1], ans={"data": json.loads("[" * 100 + "]" * 100)})
    lines[1] = json.dumps(nested, ensure_ascii=False)
    lines.append(json.dumps(rows[2], ensure_ascii=False)[:-1] + ', "x": ' + "[" * 200_000 + "]" * 200_000 + "}")
    path = tmp_path / "deep.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    episodes = load_episodes(path)
    assert _rejected(episodes) == [(2, "ans"), (4, None)]
    assert "max_depth" in episodes.report.rejected[0].reason


def test_literal_parsing_memory_is_proportional_to_the_value():
    text = "[" + "0, " * 50_000 + "]"  # 150 KB; ast.literal_eval peaks near 500 bytes per element
    tracemalloc.start()
    try:
        value = parse_cell(text).value
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert value == [0] * 50_000
    assert peak < 20 * len(text), peak


# ----------------------------------------------------------------------------- 2. no silent repairs
def test_a_garbled_response_cell_is_rejected_not_repaired_into_empty_gold(small_csv):
    path = small_csv(ans="{'route': {'paths': [{'distance': '5',, 'steps': []")
    episodes = load_episodes(path)
    assert _rejected(episodes) == [(2, "ans")]
    assert "malformed" in episodes.report.rejected[0].reason
    assert not any(r.kind == "truncated" for e in episodes for r in e.repairs)


def test_a_garbled_cell_at_the_excel_limit_is_still_rejected(small_csv):
    cell = "{'route': {'paths': [{'distance': '5',, 'x': 1}, " + "{'distance': '6'}, " * 3_000
    cell = cell[:EXCEL_CELL_LIMIT]
    episodes = load_episodes(small_csv(ans=cell))
    assert _rejected(episodes) == [(2, "ans")]
    assert "malformed" in episodes.report.rejected[0].reason


def test_a_cut_short_of_the_excel_limit_is_rejected(small_csv):
    episodes = load_episodes(small_csv(ans="{'route': {'paths': [{'distance': '5'}, {'distance': '6'}, {'dist"))
    assert _rejected(episodes) == [(2, "ans")]
    assert "not at the Excel limit" in episodes.report.rejected[0].reason


def test_an_excel_cut_that_keeps_no_complete_element_is_rejected(small_csv):
    cell = ("{'route': {'paths': [{'steps': '" + "x" * EXCEL_CELL_LIMIT)[:EXCEL_CELL_LIMIT]
    episodes = load_episodes(small_csv(ans=cell))
    assert _rejected(episodes) == [(2, "ans")]
    assert "no complete element" in episodes.report.rejected[0].reason


def test_an_excel_cut_keeps_exactly_the_complete_elements_verbatim(small_csv):
    paths = [{"distance": str(1000 + k), "steps": [{"instruction": f"向东行驶{k}米"}] * 3} for k in range(400)]
    cell = repr({"status": "SUCCESS", "data": {"route": {"paths": paths}}})[:EXCEL_CELL_LIMIT]
    [episode] = [e for e in load_episodes(small_csv(ans=cell)) if e.row == 2]
    [repair] = [r for r in episode.repairs if r.kind == "truncated"]
    kept = episode.fields["ans"]["data"]["route"]["paths"] if "ans" in episode.fields else \
        next(c.response for c in episode.recorded if c.source_column == "ans")["data"]["route"]["paths"]
    assert 0 < len(kept) < len(paths) and kept == paths[:len(kept)]
    assert f"kept {len(kept)} complete" in repair.detail and "Excel limit" in repair.detail


@pytest.mark.parametrize("column, cell, words", [
    ("ans", "no route", "expected a dict or list literal"),
    ("strategy_list", "不走高速", "expected a list or tuple literal"),
    ("context", "[1, 2]", "expected a dict literal"),
    ("ans", "{'data': {1, 2}}", "set"),
    ("ans", "{'data': b'x'}", "bytes"),
    ("ans", "{'data': (1, 2)}", "tuple"),
    ("ans", "{1: 'a'}", "not text"),
    ("ans", "{'data': '\\ud800'}", "lone surrogate"),
])
def test_cells_that_would_change_or_break_the_build_are_rejected(small_csv, tmp_path, column, cell, words):
    episodes = load_episodes(small_csv(**{column: cell}))
    assert _rejected(episodes) == [(2, column)]
    assert words in episodes.report.rejected[0].reason
    back = load_episodes(build_directory(episodes, tmp_path / "out"))  # the rows kept build and read back unchanged
    assert [e.model_dump() for e in back] == [e.model_dump() for e in episodes]


def test_json_cells_of_the_wrong_type_are_rejected(sample_rows, tmp_path):
    rows = [dict(sample_rows[i]) for i in SMALL] * 2
    rows[1] = dict(rows[1], ans=5)
    rows[2] = dict(rows[2], query={"text": "x"})
    rows[4] = dict(rows[4], tool_list=[{"name": "query_poi", "arguments": [1]}])
    path = tmp_path / "types.jsonl"
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    assert _rejected(load_episodes(path)) == [(2, "ans"), (3, "query"), (5, "tool_list")]


# ----------------------------------------------------------------------------- 3. typed errors
def test_undecodable_bytes_reject_their_row_naming_the_column(small_csv):
    path = small_csv(road="MARK")
    path.write_bytes(path.read_bytes().replace(b"MARK", b"\xff\xferoad"))
    episodes = load_episodes(path)
    assert _rejected(episodes) == [(2, "road")]
    assert "undecodable byte 0xFF" in episodes.report.rejected[0].reason
    with pytest.raises(RowError, match="column 'road'"):
        load_episodes(path, strict=True)


def test_utf16_and_binary_files_are_data_file_errors(small_csv, tmp_path):
    path = small_csv()
    utf16 = tmp_path / "utf16.csv"
    utf16.write_bytes(path.read_text(encoding="utf-8").encode("utf-16"))
    with pytest.raises(DataFileError, match="UTF-16"):
        load_episodes(utf16)
    binary = tmp_path / "image.csv"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 40)
    with pytest.raises(DataFileError, match="not valid UTF-8"):
        load_episodes(binary)


def test_jsonl_bad_bytes_and_surrogates_reject_their_line(sample_rows, tmp_path):
    lines = [json.dumps(sample_rows[i], ensure_ascii=False).encode() for i in SMALL]
    lines[1] = lines[1].replace(b'"query": "', b'"query": "\xc3\x28', 1)
    lines.append(json.dumps(dict(sample_rows[SMALL[0]], road="\ud800"), ensure_ascii=True).encode())
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    episodes = load_episodes(path)
    assert _rejected(episodes) == [(2, None), (4, "road")]
    assert "not UTF-8" in episodes.report.rejected[0].reason and "lone surrogate" in episodes.report.rejected[1].reason


def test_records_with_the_wrong_number_of_cells_are_rejected(small_csv):
    path = small_csv()
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[2] = lines[2].rstrip("\r\n") + ",extra\r\n"
    path.write_text("".join(lines), encoding="utf-8")
    episodes = load_episodes(path)
    assert _rejected(episodes) == [(2, None)]
    assert "cells" in episodes.report.rejected[0].reason


def test_damaged_xlsx_is_a_data_file_error(sample_table, tmp_path):
    openpyxl = pytest.importorskip("openpyxl")
    header, rows = sample_table
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(header)
    for i in SMALL:
        sheet.append([rows[i][h] for h in header])
    good = tmp_path / "good.xlsx"
    book.save(good)
    assert load_episodes(good).report.loaded == 3
    for name, data in [("noise.xlsx", b"PK\x03\x04" + bytes(range(256)) * 8),
                       ("cut.xlsx", good.read_bytes()[: good.stat().st_size // 2])]:
        (tmp_path / name).write_bytes(data)
        with pytest.raises(DataFileError, match="xlsx") as info:
            load_episodes(tmp_path / name)
        assert info.value.path == str(tmp_path / name)


def test_bad_paths_are_data_file_errors(tmp_path):
    with pytest.raises(DataFileError, match="no such file"):
        load_episodes(str(tmp_path / "a\x00b.csv"))
    (tmp_path / "folder.csv").mkdir()
    with pytest.raises(DataFileError, match="not a built directory"):
        load_episodes(tmp_path / "folder.csv")


def test_a_parquet_file_with_wrong_column_types_names_the_column(built_copy):
    table = pq.read_table(built_copy / "episodes.parquet")
    index = table.column_names.index("row")
    table = table.set_column(index, "row", pa.array([str(v) for v in table.column("row").to_pylist()]))
    alone = built_copy.parent / "episodes.parquet"
    pq.write_table(table, alone)
    with pytest.raises(DataFileError) as info:
        load_episodes(alone)
    assert info.value.column == "row" and "expected int64" in str(info.value)


# ----------------------------------------------------------------------------- 4. verified built directories
def test_the_bundled_set_records_and_matches_every_file():
    manifest = json.loads((BUNDLED_DIR / MANIFEST_FILE).read_text(encoding="utf-8"))
    on_disk = sorted(p.relative_to(BUNDLED_DIR).as_posix() for p in BUNDLED_DIR.rglob("*")
                     if p.is_file() and p.name != MANIFEST_FILE)
    assert sorted(manifest["files"]) == on_disk
    assert all(set(entry) == {"bytes", CHECKSUM} for entry in manifest["files"].values())
    check = check_built_directory(BUNDLED_DIR)
    assert check.verified and check.derived_ok()


def test_a_changed_parquet_byte_is_refused_on_every_open_path(built_copy):
    import gymnasium as gym  # MobilityBench-v0 is registered by importing mobility_env (above)

    target = built_copy / "sandbox.parquet"
    _flip(target, target.stat().st_size // 2)
    attempts = [lambda: Sandbox.open(built_copy).lookup("weather_query", {"city": "北京"}),
                lambda: load_episodes(built_copy), lambda: resolve_data(built_copy),
                lambda: gym.make("MobilityBench-v0", data=str(built_copy)),
                lambda: write_replay_index(built_copy)]
    for attempt in attempts:
        with pytest.raises(CorruptDataError) as info:
            attempt()
        assert isinstance(info.value, SandboxError) and isinstance(info.value, DataFileError)
        assert info.value.path == str(target) and "manifest" in str(info.value)


def test_a_changed_byte_in_sandbox_arrow_never_reaches_the_agent(built_copy, sample_episodes):
    arrow = built_copy / "sandbox.arrow"
    data = arrow.read_bytes()
    at = data.index(b'"distance":"') + len(b'"distance":"')
    assert data[at:at + 1].isdigit()
    _flip(arrow, at, 0x01 if data[at:at + 1] != b"9" else 0x03)  # another digit: still valid JSON and UTF-8
    box = Sandbox.open(built_copy)
    with pytest.warns(DerivedFileWarning, match="sandbox.arrow"):
        box.lookup("weather_query", {"city": "北京"})
    for episode in sample_episodes:
        for call in episode.recorded:
            if not validate_call(call.name, call.arguments):
                assert box.lookup(call.name, call.arguments, episode.episode_id).response == call.response


def test_missing_index_arrays_are_not_used(built_dir, built_copy, sample_episodes, shift):
    for name in ("tool_code.npy", "nn_entry.npy", "fz_query_poi_names.npy"):
        (built_copy / "sandbox_index" / name).unlink()
    with pytest.warns(DerivedFileWarning, match="tool_code.npy: missing"):
        damaged = _lookups(Sandbox.open(built_copy), sample_episodes[:40], shift)
    assert damaged == _lookups(Sandbox.open(built_dir), sample_episodes[:40], shift)


_EPISODES_ARROW_PROBE = textwrap.dedent("""
    import json, random, shutil, sys, warnings
    from pathlib import Path
    warnings.simplefilter("ignore")
    from mobility_env.mobilitybench.store import resolve_data
    source, work, seeds = Path(sys.argv[1]), Path(sys.argv[2]), json.loads(sys.argv[3])
    def episodes(path):
        store = resolve_data(path)
        return [store.get(i).model_dump_json() for i in store.ids]
    intact = episodes(source)
    for seed in seeds:
        copy = work / f"s{seed}"
        shutil.copytree(source, copy)
        target = copy / "episodes.arrow"
        data, rng = bytearray(target.read_bytes()), random.Random(seed)
        for _ in range(3):  # the first 2% of the file: metadata and offset buffers
            data[rng.randrange(len(data) // 50)] ^= 0xFF
        target.write_bytes(bytes(data))
        try:
            print(seed, "same" if episodes(copy) == intact else "CHANGED", flush=True)
        except Exception as exc:  # reported, so a crash of a later seed still shows
            print(seed, type(exc).__name__, flush=True)
""")


def test_damaged_episodes_arrow_is_not_mapped(built_dir, tmp_path):
    """Damaged offsets in episodes.arrow crashed the process (SIGSEGV) or changed episodes; run apart."""
    seeds = list(range(1, 25))
    done = subprocess.run([sys.executable, "-c", _EPISODES_ARROW_PROBE, str(built_dir), str(tmp_path),
                           json.dumps(seeds)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, (done.returncode, done.stdout[-2000:], done.stderr[-2000:])
    assert done.stdout.split() == [str(v) for s in seeds for v in (s, "same")]


def test_old_directories_open_unverified_with_a_warning_until_indexed(built_copy, sample_episodes):
    manifest = json.loads((built_copy / MANIFEST_FILE).read_text(encoding="utf-8"))
    del manifest["files"], manifest["checksum"]
    manifest["format_version"] = 1
    (built_copy / MANIFEST_FILE).write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.warns(UnverifiedDataWarning, match="mobility-env index"):
        box = Sandbox.open(built_copy)
        call = sample_episodes[0].recorded[0]
        assert box.lookup(call.name, call.arguments, sample_episodes[0].episode_id).response == call.response
    write_replay_index(built_copy)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check = check_built_directory(built_copy)
    assert check.verified and check.derived_ok()
    _flip(built_copy / "episodes.parquet", 100)
    with pytest.raises(CorruptDataError, match="episodes.parquet"):
        load_episodes(built_copy)


def test_index_derives_only_from_parquet_files_the_manifest_vouches_for(built_copy):
    table = pq.read_table(built_copy / "sandbox.parquet")
    pq.write_table(table.slice(0, table.num_rows - 1), built_copy / "sandbox.parquet")
    with pytest.raises(CorruptDataError, match="sandbox.parquet"):
        write_replay_index(built_copy)
    write_replay_index(built_copy, accept_changed_parquet=True)  # changed on purpose
    assert check_built_directory(built_copy).verified
    assert len(Sandbox.open(built_copy)) == table.num_rows - 1


def test_a_damaged_manifest_is_refused(built_copy):
    (built_copy / MANIFEST_FILE).write_text('{"format_version": 2, "files": ', encoding="utf-8")
    with pytest.raises(CorruptDataError, match="manifest.json") as info:
        resolve_data(built_copy)
    assert "mobility-env index" in str(info.value)


def test_building_again_into_a_directory_vouches_only_for_the_new_files(sample_episodes, tmp_path):
    out = tmp_path / "out"
    build_directory(sample_episodes[:3], out)
    build_directory(sample_episodes[3:6], out)
    assert check_built_directory(out).verified and check_built_directory(out).derived_ok()
    assert [e.episode_id for e in load_episodes(out)] == [e.episode_id for e in sample_episodes[3:6]]


def test_a_deleted_manifest_is_named_as_missing_not_as_old(built_copy):
    """Without manifest.json the warning says it is missing (it said the manifest was from an older version)."""
    (built_copy / MANIFEST_FILE).unlink()
    with pytest.warns(UnverifiedDataWarning, match=f"has no {MANIFEST_FILE}") as caught:
        check_built_directory(built_copy)
    assert not any("older" in str(w.message) for w in caught)
