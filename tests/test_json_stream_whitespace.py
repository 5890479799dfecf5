"""Whitespace wherever JSON allows it, in an official sandbox file (issue "Hardening III", item 9).

:func:`mobility_env.json_stream.read_official_entries` holds two chunks plus the member being read,
whatever lies between members: a file with 600 MB of whitespace after a key used to be held whole
(1.39 GB resident). Hypothesis writes nested objects with whitespace runs of every kind and length
at every position the grammar allows; at any chunk size the reader yields exactly the innermost
values ``json.loads`` sees, at the byte offsets of their keys, and its window never holds a run.
A 300 MB run is read in a subprocess under 150 MiB resident.
"""

from __future__ import annotations

import json
import operator
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mobility_env.json_stream import _Window, read_official_entries

REPO = Path(__file__).resolve().parents[1]

Entry = tuple[tuple[str, ...], Any, int]


def read_with_window(path: Path, depth: int, chunk: int) -> tuple[list[Entry], list[tuple[Any, ...]], int]:
    """(entries, problems, the most characters the window held) of one read."""
    held = [0]
    problems: list[tuple[Any, ...]] = []
    original = _Window.more

    def more(self: _Window) -> bool:
        grew = original(self)
        held[0] = max(held[0], len(self.text))
        return grew
    _Window.more = more  # type: ignore[method-assign]
    try:
        entries = list(read_official_entries(path, depth, chunk_bytes=chunk,
                                             on_problem=lambda *problem: problems.append(problem)))
    finally:
        _Window.more = original  # type: ignore[method-assign]
    return entries, problems, held[0]


def window_bound(largest_member: int, chunk: int) -> int:
    """What the window may hold: it reads at least a chunk, at most as much as it holds, and
    holds the member being read (its key, at most a chunk of whitespace on each side of its
    ':', its value) — never a longer run of whitespace."""
    return 2 * (largest_member + 2 * chunk + 2)


def innermost(node: Any, depth: int, keys: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    """``(keys, value)`` of a decoded official file, walked ``depth`` levels down."""
    if len(keys) == depth:
        yield keys, node
        return
    for key, child in node.items():
        yield from innermost(child, depth, keys + (key,))


# --------------------------------------------------------------------------- generated documents
RUNS = st.one_of(
    st.just(""),
    st.text(" \t\n\r", max_size=3),
    st.builds(operator.mul, st.sampled_from([" ", "\t", "\n", "\r", "\r\n", " \t\n\r"]), st.integers(1, 400)))
KEYS = st.text(st.characters(blacklist_categories=["Cs"]), max_size=6)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**20, 10**20) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(blacklist_categories=["Cs"]), max_size=8),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(KEYS, children, max_size=3), max_leaves=8)
# bare numbers an innermost value may be, cut anywhere by a chunk's end ("1." and "1e" decode as 1)
LEAVES = st.one_of(
    st.sampled_from(["1e5", "-12.5e+7", "1.50", "-0", "0.000125", "123456789", "2E-3", "true", "null", "[]", "{}"]),
    st.builds(lambda value, indent, ascii: json.dumps(value, indent=indent, ensure_ascii=ascii),
              json_values, st.sampled_from([None, 1]), st.booleans()))


@st.composite
def spaced_documents(draw: st.DrawFn) -> tuple[str, int, int, list[Entry], int]:
    """(text, depth, chunk, expected entries with the byte offsets of their keys, the longest member
    as the window must hold it) of an official-shaped file, whitespace runs at every position."""
    depth = draw(st.integers(1, 3))
    chunk = draw(st.sampled_from([1, 2, 3, 8, 64]))
    pieces: list[str] = []
    size = 0
    expected: list[Entry] = []
    largest = 1

    def put(text: str) -> None:
        nonlocal size
        pieces.append(text)
        size += len(text.encode("utf-8"))

    def members(path: tuple[str, ...]) -> None:
        nonlocal largest
        put("{")
        keys = draw(st.lists(KEYS, max_size=3, unique=True))
        if not keys:
            put(draw(RUNS))
        for n, key in enumerate(keys):
            put(draw(RUNS))  # after '{' or ','
            offset, key_text = size, json.dumps(key, ensure_ascii=draw(st.booleans()))
            put(key_text)
            put(draw(RUNS))
            put(":")
            put(draw(RUNS))
            if len(path) + 1 == depth:
                value_text = draw(LEAVES)
                expected.append((path + (key,), json.loads(value_text), offset))
                put(value_text)
                largest = max(largest, len(key_text) + len(value_text))
            else:
                largest = max(largest, len(key_text))
                members(path + (key,))
            put(draw(RUNS))  # before ',' or '}'
            if n + 1 < len(keys):
                put(",")
        put("}")

    put(draw(RUNS))
    members(())
    put(draw(RUNS))
    return "".join(pieces), depth, chunk, expected, largest


@settings(deadline=None, derandomize=True, max_examples=150,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                 HealthCheck.data_too_large])
@given(document=spaced_documents())
def test_whitespace_anywhere_reads_as_json_loads_with_a_bounded_window(tmp_path, document):
    text, depth, chunk, expected, largest = document
    assert [(keys, value) for keys, value, _ in expected] == list(innermost(json.loads(text), depth))
    path = tmp_path / "walking_route_handle.json"
    path.write_bytes(text.encode("utf-8"))
    entries, problems, held = read_with_window(path, depth, chunk)
    assert entries == expected and not problems
    assert held <= window_bound(largest, chunk)


# --------------------------------------------------------------------------- each position, a long run
RUN = "%s"
POSITIONS = {
    "before the top-level {": RUN + '{"a": {"b": 1e5}}',
    "after {": '{' + RUN + '"a": {"b": 1e5}}',
    "before a key's ':'": '{"a"' + RUN + ': {"b": 1e5}}',
    "after a key's ':'": '{"a":' + RUN + '{"b": 1e5}}',
    "before ','": '{"x": {"y": 2}' + RUN + ', "a": {"b": 1e5}}',
    "after ','": '{"x": {"y": 2},' + RUN + '"a": {"b": 1e5}}',
    "inside an inner {": '{"a": {' + RUN + '"b": 1e5}}',
    "before an inner ':'": '{"a": {"b"' + RUN + ': 1e5}}',
    "after an inner ':'": '{"a": {"b":' + RUN + '1e5}}',
    "before an inner }": '{"a": {"b": 1e5' + RUN + '}}',
    "before the top-level }": '{"a": {"b": 1e5}' + RUN + '}',
    "after the top-level }": '{"a": {"b": 1e5}}' + RUN,
    "inside an empty object": '{"x": {' + RUN + '}, "a": {"b": 1e5}}',
}


@pytest.mark.parametrize("position", sorted(POSITIONS))
@pytest.mark.parametrize("kind", [" ", "\n", "\t", "\r\n", " \t\n\r"])
def test_a_long_run_at_any_position_is_not_held(tmp_path, position, kind):
    chunk = 64
    run = kind * (200 * chunk // len(kind))
    text = POSITIONS[position] % run
    path = tmp_path / "walking_route_handle.json"
    path.write_bytes(text.encode("utf-8"))
    entries, problems, held = read_with_window(path, 2, chunk)
    expected = [(keys, value, text.index(f'"{keys[-1]}"')) for keys, value in innermost(json.loads(text), 2)]
    assert entries == expected and (("a", "b"), 100000.0) in [entry[:2] for entry in entries] and not problems
    assert held <= window_bound(len('"b": 1e5'), chunk)


def test_a_long_run_after_a_key_found_past_garbage_is_not_held(tmp_path):
    """The key a resync finds is not rewound to: the run before its ':' is let go, its offset kept."""
    chunk = 64
    text = '{"a": {"b": 1} junk "c"%s: {"d": 2}, "e"%s{"f": 3}}' % (" " * 20_000, "\n" * 20_000)
    path = tmp_path / "walking_route_handle.json"
    path.write_bytes(text.encode("utf-8"))
    entries, problems, held = read_with_window(path, 2, chunk)
    assert entries == [(("a", "b"), 1, text.index('"b"')), (("c", "d"), 2, text.index('"d"'))]
    assert [problem[:3] for problem in problems] == [
        ("garbage", (), text.index("junk")), ("garbage", (), text.index('"c"')), ("garbage", ("e",), text.index('"e"'))]
    assert held <= window_bound(len('"a": {"b": 1} junk "c"'), chunk)


# --------------------------------------------------------------------------- 300 MB of whitespace, resident
# The child's own peak: VmHWM (ru_maxrss carries a forking parent's peak over exec, so inside a long pytest run
# it reported the test process's ~800 MiB).
_CHILD = r"""
import json, re, sys, time
from pathlib import Path
from mobility_env.json_stream import read_official_entries
started = time.perf_counter()
entries = [[list(keys), value, offset] for keys, value, offset in read_official_entries(sys.argv[1], 2)]
peak_kib = int(re.search(r"VmHWM:\s+(\d+)", Path("/proc/self/status").read_text()).group(1))
print(json.dumps({"entries": entries, "seconds": time.perf_counter() - started, "peak_mib": peak_kib / 1024}))
"""


def test_300_mb_of_whitespace_are_read_in_bounded_memory(tmp_path):
    """Runs of 75 MiB before and after each ':' (at both levels) of a file read with the default
    chunk and entry limit: under 150 MiB resident (they were held whole: about a GB)."""
    path = tmp_path / "walking_route_handle.json"
    run, mib_per_run = b" \n\t\r" * (1 << 18), 75  # 1 MiB, written 75 times a run
    try:
        with open(path, "wb") as out:
            for piece in (b'{"a"', None, b":", None, b'{"b"', None, b":", None, b'{"v": 1}}}'):
                for _ in range(mib_per_run if piece is None else 1):
                    out.write(run if piece is None else piece)
        assert path.stat().st_size > 300 * 2**20
        proc = subprocess.run([sys.executable, "-c", _CHILD, str(path)], cwd=REPO, capture_output=True, text=True,
                              timeout=120, check=False)
    finally:
        path.unlink(missing_ok=True)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    offset_b = len('{"a"') + mib_per_run * 2**20 + len(":") + mib_per_run * 2**20 + len("{")
    assert result["entries"] == [[["a", "b"], {"v": 1}, offset_b]]
    assert result["peak_mib"] < 150, result
