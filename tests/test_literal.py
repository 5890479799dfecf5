"""Official cells: Python literals, enum reprs, and repair of cells cut at the Excel limit."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mobility_env.literal import (EXCEL_CELL_LIMIT, CellParseError, parse_cell, repair_truncated_literal,
                                  replace_enum_reprs)

from conftest import SAMPLE_ROWS, SAMPLE_TRUNCATED

ROUTE_TOOLS = ("driving_route", "walking_route", "bicycling_route", "bus_route")


# ----------------------------------------------------------------------------- unit cases
def test_enum_repr_becomes_member_name():
    cell = "{'status': <ToolStatus.SUCCESS: 0>, 'data': [<Kind.FAIL: -1>]}"
    assert parse_cell(cell).value == {"status": "SUCCESS", "data": ["FAIL"]}
    assert replace_enum_reprs("<ToolStatus.SUCCESS: 0>") == "'SUCCESS'"


def test_enum_like_text_inside_a_string_is_data_not_an_enum():
    value = {"note": "server said <ToolStatus.SUCCESS: 0> twice", "status": "SUCCESS"}
    cell = "{'note': 'server said <ToolStatus.SUCCESS: 0> twice', 'status': <ToolStatus.SUCCESS: 0>}"
    assert parse_cell(repr(value)).value == value
    assert parse_cell(cell).value == value


@pytest.mark.parametrize("text, expected", [
    ("37分钟", "37分钟"), ("  1.0 ", "1.0"), ("118.1,24.4", "118.1,24.4"), ("", None), ("   ", None),
    ("[1, (2, 3), {'a': None}]", [1, (2, 3), {"a": None}]),
])
def test_scalars_stay_text_and_literals_parse(text, expected):
    parsed = parse_cell(text)
    assert parsed.value == expected
    assert parsed.repaired is False


def test_cut_list_keeps_complete_elements_and_records_it():
    cell = "{'route': {'paths': [{'distance': '10'}, {'distance': '20'}, {'dist"
    parsed = parse_cell(cell)
    assert parsed.value == {"route": {"paths": [{"distance": "10"}, {"distance": "20"}]}}
    assert parsed.repaired is True
    assert "'paths'" in parsed.detail and "kept 2" in parsed.detail


def test_cut_right_after_a_complete_element_keeps_it():
    # The cut falls on the closing brace of the second path: that path is complete.
    cell = "{'route': {'paths': [{'distance': '10'}, {'distance': '20'}"
    parsed = parse_cell(cell)
    assert parsed.value == {"route": {"paths": [{"distance": "10"}, {"distance": "20"}]}}
    assert "kept 2" in parsed.detail
    # and with a single complete element (no comma at all at the list's depth)
    assert parse_cell("{'paths': [{'distance': '10'}").value == {"paths": [{"distance": "10"}]}


def test_cut_inside_the_first_element_keeps_its_complete_inner_items():
    cell = "{'paths': [{'distance': '9', 'steps': [{'s': 1}, {'s': 2}, {'s"
    parsed = parse_cell(cell)
    assert parsed.value == {"paths": [{"distance": "9", "steps": [{"s": 1}, {"s": 2}]}]}
    assert "'steps'" in parsed.detail


def test_cut_inside_plain_dicts_is_an_error_not_a_guess():
    with pytest.raises(CellParseError):
        parse_cell("{'a': 1, 'b': {'c': 2, 'd'")
    assert repair_truncated_literal("{'a': 1, 'b'") is None


@pytest.mark.parametrize("text", ["{[]: 1}", "{1, []}", "{{}: 2}", "[1, 2}", "{'a' 1}", "(" * 200 + ")" * 199])
def test_broken_containers_raise_cell_parse_error_only(text):
    with pytest.raises(CellParseError):
        parse_cell(text)


# ----------------------------------------------------------------------------- the real sample
def test_sample_truncated_cells_are_exactly_the_excel_limit(sample_rows):
    assert len(sample_rows) == SAMPLE_ROWS
    cut = [(i, col) for i, row in enumerate(sample_rows) for col, v in row.items() if len(v) == EXCEL_CELL_LIMIT]
    assert len(cut) == SAMPLE_TRUNCATED
    assert {col for _, col in cut} == {"route_ans"}
    assert max(len(v) for row in sample_rows for v in row.values()) == EXCEL_CELL_LIMIT


def _route_items(response):
    route = (response.get("data") or response)["route"]
    return ("transits", route["transits"]) if "transits" in route else ("paths", route["paths"])


def test_sample_truncated_routes_are_repaired_to_complete_items(sample_rows, sample_episodes):
    by_row = {e.row: e for e in sample_episodes}
    cut_rows = [i for i, row in enumerate(sample_rows) if len(row["route_ans"]) == EXCEL_CELL_LIMIT]
    assert len(cut_rows) == SAMPLE_TRUNCATED
    for i in cut_rows:
        episode = by_row[i + 1]  # rows are numbered from 1
        repairs = [r for r in episode.repairs if r.kind == "truncated"]
        assert [r.column for r in repairs] == ["route_ans"], episode.episode_id
        assert "Excel limit" in repairs[0].detail
        [call] = [c for c in episode.recorded if c.source_column == "route_ans"]
        assert call.truncated is True and call.name in ROUTE_TOOLS
        kind, items = _route_items(call.response)
        assert items, f"{episode.episode_id}: repair kept no {kind}"
        for item in items:
            if kind == "transits":
                assert item["distance"].isdigit() and item["duration"].isdigit()
                assert isinstance(item["segments"], list)
            else:
                assert item["distance"].isdigit() and item["cost"]["duration"].isdigit()
                assert all({"instruction", "step_distance"} <= step.keys() for step in item["steps"])
        # what was kept is verbatim from the cell: the text of each complete item occurs in it
        # (a route whose only path was cut inside its steps keeps that path's complete steps)
        source = replace_enum_reprs(sample_rows[i]["route_ans"])
        kept = items[0]["steps"] if "'steps'" in repairs[0].detail else items
        assert len(kept) == int(re.search(r"kept (\d+) complete", repairs[0].detail).group(1))
        for item in kept:
            assert repr(item) in source
    untouched = [e for e in sample_episodes if e.row - 1 not in cut_rows]
    assert all(not c.truncated for e in untouched for c in e.recorded)
    assert all(r.kind != "truncated" for e in untouched for r in e.repairs)


def test_sample_tool_status_enum_becomes_success(sample_rows, sample_episodes):
    rows_with_enum = [i for i, row in enumerate(sample_rows)
                      if any("<ToolStatus.SUCCESS: 0>" in v for v in row.values())]
    assert len(rows_with_enum) >= 30
    by_row = {e.row: e for e in sample_episodes}
    statuses = []
    for i in rows_with_enum:
        episode = by_row[i + 1]  # rows are numbered from 1
        dumped = json.dumps(episode.model_dump(), ensure_ascii=False)
        assert "<ToolStatus" not in dumped and "ToolStatus." not in dumped
        statuses += [c.response["status"] for c in episode.recorded
                     if isinstance(c.response, dict) and c.source_column != "route_ans" and "data" in c.response]
    assert statuses and set(statuses) == {"SUCCESS"}


# ----------------------------------------------------------------------------- properties
_scalars = (st.none() | st.booleans() | st.integers(-10**12, 10**12)
            | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20)
            | st.sampled_from(["<ToolStatus.SUCCESS: 0>", "a, 'b'", "[", "}", "\\", '"', "it's"]))
_literals = st.recursive(
    _scalars,
    lambda children: (st.lists(children, max_size=4) | st.tuples(children, children)
                      | st.dictionaries(st.text(max_size=8) | st.integers(-100, 100), children, max_size=4)),
    max_leaves=15,
)
_containers = st.lists(_literals, max_size=4) | st.dictionaries(st.text(max_size=8), _literals, max_size=4) \
    | st.tuples(_literals, _literals)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200) | st.text(alphabet="[]{}(),:'\"\\ 0123456789.-abcxTS<>_", max_size=80))
def test_parse_cell_raises_only_cell_parse_error(text):
    try:
        parsed = parse_cell(text)
    except CellParseError:
        return
    if not text.strip():
        assert parsed.value is None
    elif text.strip()[0] not in "[{(":
        assert parsed.value == text.strip()


@settings(max_examples=100, deadline=None)
@given(_containers)
def test_parse_cell_round_trips_repr(value):
    parsed = parse_cell(repr(value))
    assert parsed.value == value
    assert parsed.repaired is False


_items = st.lists(st.dictionaries(st.sampled_from(["distance", "duration", "name", "n"]),
                                  st.text(max_size=12) | st.integers(0, 10**6) | st.none(), min_size=1),
                  min_size=1, max_size=6)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10**6), st.text(max_size=10), _items, st.data())
def test_repair_of_a_random_cut_keeps_exactly_the_complete_prefix(ident, name, items, data):
    text = repr({"id": ident, "name": name, "items": items})
    list_open = len(repr({"id": ident, "name": name, "items": []})) - 3  # index of the '['
    assert text[list_open] == "["
    ends, pos = [], list_open + 1
    for k, item in enumerate(items):
        pos += (2 if k else 0) + len(repr(item))
        ends.append(pos)
    cut = data.draw(st.integers(list_open + 1, len(text) - 3), label="cut")
    parsed = parse_cell(text[:cut])
    complete = sum(1 for end in ends if end <= cut)
    assert parsed.repaired is True
    assert parsed.value == {"id": ident, "name": name, "items": items[:complete]}
    assert f"kept {complete} complete" in parsed.detail
