"""load_episodes on the real sample: nothing lost, stable ids, lossless round trips, typed errors."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from mobility_env.mobilitybench.build import build_directory
from mobility_env.mobilitybench.episode import FAMILY_OF, SCENARIOS
from mobility_env.errors import DataFileError, RowError
from mobility_env.mobilitybench.loaders import load_episodes
from mobility_env.mobilitybench.official import episode_to_row

from conftest import SAMPLE_ROWS, SAMPLE_TRUNCATED


def _without_source(episodes):
    return [e.model_dump(exclude={"source"}) for e in episodes]


# ----------------------------------------------------------------------------- the sample loads whole
def test_every_sample_row_loads(sample_episodes, sample_rows):
    report = sample_episodes.report
    assert len(sample_episodes) == SAMPLE_ROWS == len(sample_rows)
    assert report.loaded == SAMPLE_ROWS and report.rejected == []
    assert report.repaired == SAMPLE_TRUNCATED
    assert report.repairs_by_kind["truncated"] == SAMPLE_TRUNCATED
    assert report.summary().startswith(
        f"{SAMPLE_ROWS} loaded ({SAMPLE_TRUNCATED} repaired), 0 rejected from sample_dev.csv")
    assert [e.row for e in sample_episodes] == list(range(1, SAMPLE_ROWS + 1))
    for episode, row in zip(sample_episodes, sample_rows):
        assert episode.query == row["query"]
        assert episode.task_scenario == row["task_scenario"].strip()
        assert episode.intent_family == FAMILY_OF[episode.task_scenario]
        assert episode.gold_calls, episode.episode_id
    counts = Counter(e.task_scenario for e in sample_episodes)
    assert set(counts) == set(SCENARIOS)
    assert counts["POI Query"] == 11 and all(n == 7 for s, n in counts.items() if s != "POI Query")


def test_missing_responses_are_recorded_not_dropped(sample_episodes):
    # Traffic Info rows record no response for their query_poi call: each one says so.
    for episode in sample_episodes:
        answered = {c.gold_index for c in episode.recorded if c.gold_index is not None}
        missing = [r for r in episode.repairs if r.kind == "missing_response"]
        assert len(answered) + len(missing) == len(episode.gold_calls), episode.episode_id
        if missing:
            assert episode.task_scenario == "Traffic Info Query"
            unanswered = [c.name for i, c in enumerate(episode.gold_calls) if i not in answered]
            assert unanswered == ["query_poi"]
    assert sample_episodes.report.repairs_by_kind["missing_response"] == 7


def test_excluded_lines_of_the_sample_are_line_names(sample_episodes):
    excluded = {e.query: e.gold_slots["excluded_lines"] for e in sample_episodes if "excluded_lines" in e.gold_slots}
    assert excluded["从大望路到五棵松不要坐1号线和八通线怎么走"] == ["1号线", "八通线"]
    assert excluded["坐公交去南京站，不乘坐地铁1号线的路线怎么走？"] == ["1号线"]  # after the echoed prompt's 输出:
    assert excluded["坐公交去龙湖中德开·春江悦茗，不要坐206路"] == ["206路"]
    assert sorted(map(len, excluded.values())) == [1, 1, 1, 1, 1, 1, 2]
    assert "unparsed_excluded_lines" not in sample_episodes.report.repairs_by_kind


def test_unreadable_excluded_lines_are_a_counted_repair(sample_table, write_csv, tmp_path):
    header, rows = sample_table
    row = next(r for r in rows if r["llm_ner_ans"] == "不要1号线,不要八通线")
    variants = [{**row, "llm_ner_ans": "不要1号线不要八通线"},             # no separator: still two lines
                {**row, "llm_ner_ans": "从大望路到五棵松不要坐1号线和八通线怎么走"},  # an echo without 输出:
                {**row, "llm_ner_ans": "不要坐地铁"}]                       # a mode, no line
    episodes = load_episodes(write_csv(tmp_path / "ner.csv", header, variants))
    assert [e.gold_slots.get("excluded_lines") for e in episodes] == [["1号线", "八通线"], ["1号线", "八通线"], None]
    assert [[r.kind for r in e.repairs if r.column == "llm_ner_ans"] for e in episodes] == \
        [[], ["unparsed_excluded_lines"], ["unparsed_excluded_lines"]]
    assert episodes.report.repairs_by_kind["unparsed_excluded_lines"] == 2
    assert "unparsed_excluded_lines=2" in episodes.report.summary()


def test_ids_are_unique_and_stable_across_loads_and_formats(sample_csv, sample_episodes, sample_rows, tmp_path):
    ids = [e.episode_id for e in sample_episodes]
    assert len(set(ids)) == SAMPLE_ROWS
    assert all(i.startswith("mb-") and len(i) == 15 for i in ids)
    assert [e.episode_id for e in load_episodes(sample_csv)] == ids
    jsonl = tmp_path / "rows.jsonl"
    with jsonl.open("w", encoding="utf-8") as handle:
        for row in reversed(sample_rows):  # order must not matter
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
        handle.write("\n")  # blank lines are skipped, not rejected
    from_jsonl = load_episodes(jsonl)
    assert [e.episode_id for e in from_jsonl] == ids[::-1]
    assert from_jsonl.report.loaded == SAMPLE_ROWS and from_jsonl.report.repaired == SAMPLE_TRUNCATED


def test_jsonl_of_parsed_rows_keeps_ids_and_content(sample_episodes, tmp_path):
    # A JSONL whose cells are already parsed values (not literal strings) gives the same episodes.
    path = tmp_path / "parsed.jsonl"
    path.write_text("".join(json.dumps(episode_to_row(e), ensure_ascii=False) + "\n" for e in sample_episodes),
                    encoding="utf-8")
    loaded = load_episodes(path)
    assert [e.episode_id for e in loaded] == [e.episode_id for e in sample_episodes]
    for a, b in zip(sample_episodes, loaded):
        for name in ("query", "context", "gold_calls", "gold_slots", "fields"):
            assert getattr(b, name) == getattr(a, name), (a.episode_id, name)
        assert [(c.name, c.arguments, c.response) for c in b.recorded] == \
            [(c.name, c.arguments, c.response) for c in a.recorded]


def test_identical_rows_are_both_kept_with_distinct_ids(sample_table, write_csv, tmp_path):
    header, rows = sample_table
    path = write_csv(tmp_path / "dup.csv", header, [rows[0], rows[1], rows[0]])
    episodes = load_episodes(path)
    assert len(episodes) == 3
    assert episodes[2].episode_id == episodes[0].episode_id + "-2"
    assert [r.kind for r in episodes[2].repairs][-1] == "duplicate_row"
    assert len({e.episode_id for e in episodes}) == 3


# ----------------------------------------------------------------------------- lossless round trips
def test_csv_to_built_directory_round_trip_is_lossless(sample_episodes, built_dir):
    # the contract files, plus the derived memory-mapped replay index (mobility_env.mobilitybench.replay_index)
    assert sorted(p.name for p in built_dir.iterdir()) == ["episodes.arrow", "episodes.parquet", "manifest.json",
                                                           "sandbox.arrow", "sandbox.parquet", "sandbox_index"]
    back = load_episodes(built_dir)
    assert len(back) == SAMPLE_ROWS
    assert list(back) == list(sample_episodes)  # pydantic equality: every field, every response
    assert back.report.loaded == SAMPLE_ROWS and back.report.repaired == SAMPLE_TRUNCATED
    # the episodes file alone, pointed at directly, reads the same
    assert list(load_episodes(built_dir / "episodes.parquet")) == list(sample_episodes)
    manifest = json.loads((built_dir / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["episodes"] == SAMPLE_ROWS
    assert manifest["sandbox_entries"] == sum(len(e.recorded) for e in sample_episodes)
    assert manifest["load_report"]["repaired"] == SAMPLE_TRUNCATED


def test_rebuilding_a_built_directory_is_identical(sample_episodes, built_dir, tmp_path):
    again = build_directory(load_episodes(built_dir), tmp_path / "again")
    assert list(load_episodes(again)) == list(sample_episodes)
    import numpy as np
    import pyarrow.parquet as pq
    assert pq.read_table(again / "episodes.parquet").drop(["source"]).equals(
        pq.read_table(built_dir / "episodes.parquet").drop(["source"]))
    new, old = pq.read_table(again / "sandbox.parquet"), pq.read_table(built_dir / "sandbox.parquet")
    assert new.drop(["lng", "lat"]).equals(old.drop(["lng", "lat"]))
    for column in ("lng", "lat"):  # NaN where a call has no coordinate, so compare NaN-aware
        assert np.array_equal(new.column(column).to_numpy(), old.column(column).to_numpy(), equal_nan=True)


def test_xlsx_round_trip_is_lossless(sample_table, sample_episodes, tmp_path):
    openpyxl = pytest.importorskip("openpyxl")
    header, rows = sample_table
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.append(header)
    for row in rows:
        assert all(len(v) <= 32_767 for v in row.values())
        sheet.append([row[h] for h in header])
    path = tmp_path / "sample.xlsx"
    workbook.save(path)
    from_xlsx = load_episodes(path)
    assert from_xlsx.report.loaded == SAMPLE_ROWS and from_xlsx.report.repaired == SAMPLE_TRUNCATED
    assert _without_source(from_xlsx) == _without_source(sample_episodes)
    built = build_directory(from_xlsx, tmp_path / "built")
    assert _without_source(load_episodes(built)) == _without_source(sample_episodes)


# ----------------------------------------------------------------------------- bad input
def test_missing_required_column_names_file_and_column(sample_table, write_csv, tmp_path):
    header, rows = sample_table
    path = write_csv(tmp_path / "no_tools.csv", [h for h in header if h != "tool_list"], rows[:3])
    with pytest.raises(DataFileError) as info:
        load_episodes(path)
    assert not isinstance(info.value, RowError)
    assert "no_tools.csv" in str(info.value) and "tool_list" in str(info.value)
    assert info.value.path == str(path)


def test_empty_csv_is_a_data_file_error(tmp_path):
    path = tmp_path / "empty.csv"
    path.write_text("", encoding="utf-8")
    with pytest.raises(DataFileError, match="query"):
        load_episodes(path)


def _broken_rows(rows):
    bad = [dict(r) for r in rows[:6]]
    bad[1]["tool_list"] = "[{'name': 'query_poi', 'arguments': {'keywords': '天安门'}"  # cut, not a complete list
    bad[2]["task_scenario"] = "Teleport Query"
    bad[3]["query"] = "   "
    bad[4]["tool_list"] = "[{'name': 'fly_to', 'arguments': {}}]"
    return bad


def test_bad_rows_are_reported_with_file_row_and_column(sample_table, write_csv, tmp_path):
    header, rows = sample_table
    path = write_csv(tmp_path / "bad.csv", header, _broken_rows(rows))
    episodes = load_episodes(path)
    rejected = episodes.report.rejected
    assert [(r.row, r.column) for r in rejected] == [(2, "tool_list"), (3, "task_scenario"), (4, "query"),
                                                     (5, "tool_list")]
    assert all(r.file == str(path) for r in rejected)
    assert "Teleport Query" in rejected[1].reason and "fly_to" in rejected[3].reason
    assert "bad.csv, row 3, column 'task_scenario'" in str(rejected[1])
    assert [e.row for e in episodes] == [1, 6]
    assert episodes.report.loaded + len(rejected) == 6  # nothing dropped silently
    assert episodes.report.to_dict()["rejected"][0] == {"file": str(path), "row": 2, "column": "tool_list",
                                                        "reason": rejected[0].reason}
    assert "2 loaded" in episodes.report.summary() and "4 rejected" in episodes.report.summary()


def test_strict_raises_the_first_bad_row(sample_table, write_csv, tmp_path):
    header, rows = sample_table
    path = write_csv(tmp_path / "bad.csv", header, _broken_rows(rows))
    with pytest.raises(RowError) as info:
        load_episodes(path, strict=True)
    assert (info.value.row, info.value.column, info.value.path) == (2, "tool_list", str(path))


def test_bad_jsonl_lines_are_rejected_with_their_line(sample_rows, tmp_path):
    path = tmp_path / "bad.jsonl"
    good = [json.dumps(row, ensure_ascii=False) for row in sample_rows[:2]]
    lines = [good[0], "{not json", "[1, 2]", good[1]]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    episodes = load_episodes(path)
    assert len(episodes) == 2
    assert [(r.row, r.column) for r in episodes.report.rejected] == [(2, None), (3, None)]
    assert "invalid JSON" in episodes.report.rejected[0].reason
    with pytest.raises(RowError):
        load_episodes(path, strict=True)


@pytest.mark.parametrize("name, content, match", [
    ("data.txt", "query\n", "unsupported file type '.txt'"),
    ("data.json", "{}", "unsupported file type '.json'"),
])
def test_unsupported_suffix(tmp_path, name, content, match):
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    with pytest.raises(DataFileError, match=match):
        load_episodes(path)


def test_missing_path_and_plain_directory(tmp_path):
    with pytest.raises(DataFileError, match="no such file") as info:
        load_episodes(tmp_path / "nope.csv")
    assert "nope.csv" in str(info.value)
    with pytest.raises(DataFileError, match="episodes.parquet"):
        load_episodes(tmp_path)


def test_corrupt_parquet_is_a_typed_error(tmp_path, built_dir):
    path = tmp_path / "episodes.parquet"
    path.write_bytes(b"PAR1 this is not a parquet file PAR1")
    with pytest.raises(DataFileError, match="cannot read Parquet"):
        load_episodes(path)
    import pyarrow as pa
    import pyarrow.parquet as pq
    other = tmp_path / "other.parquet"
    pq.write_table(pa.table({"a": [1]}), other)
    with pytest.raises(DataFileError, match="missing column"):
        load_episodes(other)


def test_built_directory_with_broken_sandbox_is_a_typed_error(built_dir, tmp_path):
    import shutil
    broken = tmp_path / "broken"
    shutil.copytree(built_dir, broken)
    (broken / "sandbox.parquet").write_bytes(b"PAR1 garbage")
    with pytest.raises(DataFileError, match="sandbox.parquet"):
        load_episodes(broken)
    (broken / "sandbox.parquet").unlink()
    with pytest.raises(DataFileError, match="sandbox.parquet"):
        load_episodes(broken)


def test_a_header_of_100000_columns_is_read_and_its_duplicate_named(tmp_path):
    """The duplicate-column check counts each name once (it was a list.count per column: 40,000 columns took 35 s,
    now milliseconds; see the closing note's measurements); the duplicate is still named."""
    from mobility_env.mobilitybench.official import CORE_COLUMNS

    path = tmp_path / "wide.csv"
    path.write_text(",".join([*CORE_COLUMNS, *(f"c{i}" for i in range(100_000)), "c7"]) + "\n", encoding="utf-8")
    with pytest.raises(DataFileError, match="'c7' more than once"):
        load_episodes(path)
