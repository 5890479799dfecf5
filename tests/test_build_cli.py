"""``mobility-env build`` and the built directory: declared schemas, contiguous entries, errors."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from mobility_env.mobilitybench.build import EPISODES_SCHEMA, SANDBOX_SCHEMA, build_directory
from mobility_env.cli import main
from mobility_env.mobilitybench.loaders import load_episodes

from conftest import SAMPLE_ROWS, SAMPLE_TRUNCATED

REPO = Path(__file__).resolve().parents[1]
SAMPLE_SUMMARY = (f"{SAMPLE_ROWS} loaded ({SAMPLE_TRUNCATED} repaired), 0 rejected from sample_dev.csv; "
                  "notes: missing_response=7, truncated=8")


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mobility_env.cli", *args], cwd=REPO, capture_output=True,
                          text=True, timeout=120)


def test_cli_build_writes_the_directory_and_prints_the_report(sample_csv, sample_episodes, tmp_path):
    out = tmp_path / "built"
    proc = run_cli("build", str(sample_csv), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == SAMPLE_SUMMARY
    assert lines[1] == f"wrote {out / 'episodes.parquet'} and {out / 'sandbox.parquet'}"
    assert proc.stderr == ""
    # the contract files, plus the derived memory-mapped replay index (mobility_env.mobilitybench.replay_index)
    assert sorted(p.name for p in out.iterdir()) == ["episodes.arrow", "episodes.parquet", "manifest.json",
                                                     "sandbox.arrow", "sandbox.parquet", "sandbox_index"]
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert (manifest["episodes"], manifest["sandbox_entries"]) == (SAMPLE_ROWS, 151)
    assert manifest["load_report"]["loaded"] == SAMPLE_ROWS and manifest["load_report"]["repaired"] == SAMPLE_TRUNCATED
    assert manifest["source"] == str(sample_csv)
    assert sum(manifest["scenarios"].values()) == SAMPLE_ROWS and manifest["scenarios"]["POI Query"] == 11
    assert list(load_episodes(out)) == list(sample_episodes)


def test_cli_missing_source_exits_2_with_one_line(tmp_path):
    out = tmp_path / "never"
    proc = run_cli("build", str(tmp_path / "missing.csv"), "--out", str(out))
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("mobility-env: error: ") and "missing.csv" in lines[0] and "no such file" in lines[0]
    assert "Traceback" not in proc.stderr
    assert not out.exists()


def test_cli_reports_rejected_rows_and_strict_fails(sample_table, write_csv, tmp_path, capsys):
    header, rows = sample_table
    bad = [dict(r) for r in rows[:3]]
    bad[1]["task_scenario"] = "Teleport Query"
    src = write_csv(tmp_path / "bad.csv", header, bad)
    assert main(["build", str(src), "--out", str(tmp_path / "out")]) == 0
    captured = capsys.readouterr()
    assert captured.out.splitlines()[0] == "2 loaded (0 repaired), 1 rejected from bad.csv"
    assert f"rejected: {src}, row 2, column 'task_scenario'" in captured.err
    assert len(load_episodes(tmp_path / "out")) == 2
    assert main(["build", str(src), "--out", str(tmp_path / "strict"), "--strict"]) == 2
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1 and "row 2, column 'task_scenario'" in captured.err
    assert not (tmp_path / "strict" / "episodes.parquet").exists()


def test_cli_tools_json_lists_ten_tools(capsys):
    assert main(["tools", "--json"]) == 0
    tools = json.loads(capsys.readouterr().out)
    assert len(tools) == 10 and tools[-1]["function"]["name"] == "finish"
    assert main(["tools"]) == 0
    assert "`driving_route(origin, destination, strategy?, waypoints?)`" in capsys.readouterr().out


# ----------------------------------------------------------------------------- the built files
def test_built_files_follow_the_declared_schemas(built_dir, sample_episodes):
    episodes = pq.read_table(built_dir / "episodes.parquet")
    sandbox = pq.read_table(built_dir / "sandbox.parquet")
    assert episodes.schema.remove_metadata() == EPISODES_SCHEMA
    assert sandbox.schema.remove_metadata() == SANDBOX_SCHEMA
    assert episodes.num_rows == SAMPLE_ROWS and sandbox.num_rows == 151
    rows = sandbox.to_pylist()
    stop = 0
    for episode, record in zip(sample_episodes, episodes.to_pylist()):
        assert record["episode_id"] == episode.episode_id
        assert record["sandbox_start"] == stop  # contiguous, in load order
        stop = record["sandbox_stop"]
        entries = rows[record["sandbox_start"]:stop]
        assert [e["episode_id"] for e in entries] == [episode.episode_id] * len(episode.recorded)
        assert [(e["tool"], json.loads(e["arguments"]), json.loads(e["response"]), e["gold_index"], e["truncated"])
                for e in entries] == \
            [(c.name, c.arguments, c.response, c.gold_index, c.truncated) for c in episode.recorded]
    assert stop == sandbox.num_rows
    assert all(r["valid"] and r["key"] for r in rows)
    assert sum(r["truncated"] for r in rows) == SAMPLE_TRUNCATED
    for r in rows:
        has_point = r["tool"] not in ("query_poi", "weather_query", "traffic_status")
        assert (not math.isnan(r["lng"])) == has_point, r["tool"]
        if has_point:
            assert r["points"].split(";")[0] == f"{r['lng']:.6f},{r['lat']:.6f}"
    # responses are JSON, never Python reprs
    assert not any("<ToolStatus" in r["response"] or "'status'" in r["response"] for r in rows)


def test_rebuild_overwrites_and_leaves_no_temporary_files(sample_episodes, tmp_path):
    out = build_directory(sample_episodes[:5], tmp_path / "b")
    out = build_directory(sample_episodes[5:9], out)
    # the contract files, plus the derived memory-mapped replay index (mobility_env.mobilitybench.replay_index)
    assert sorted(p.name for p in out.iterdir()) == ["episodes.arrow", "episodes.parquet", "manifest.json",
                                                     "sandbox.arrow", "sandbox.parquet", "sandbox_index"]
    assert [e.episode_id for e in load_episodes(out)] == [e.episode_id for e in sample_episodes[5:9]]


def test_small_row_groups_read_back_the_same(sample_episodes, tmp_path):
    out = build_directory(sample_episodes, tmp_path / "small", flush_rows=7)
    assert pq.ParquetFile(out / "episodes.parquet").num_row_groups == math.ceil(SAMPLE_ROWS / 7)
    assert list(load_episodes(out)) == list(sample_episodes)


def test_duplicate_episode_ids_are_refused(sample_episodes, tmp_path):
    twice = [sample_episodes[0], sample_episodes[1], sample_episodes[0]]
    with pytest.raises(ValueError, match=f"duplicate episode_id {sample_episodes[0].episode_id}"):
        build_directory(twice, tmp_path / "dup")
    assert not (tmp_path / "dup" / "episodes.parquet").exists()


def test_cli_index_gives_an_old_directory_its_replay_index(built_dir, sample_episodes, tmp_path, capsys):
    import shutil

    from mobility_env.mobilitybench.sandbox import Sandbox

    old = tmp_path / "old"
    old.mkdir()
    for name in ("episodes.parquet", "sandbox.parquet", "manifest.json"):
        shutil.copy(built_dir / name, old / name)
    assert main(["index", str(old)]) == 0
    assert "wrote the replay index" in capsys.readouterr().out
    assert (old / "sandbox.arrow").exists() and (old / "sandbox_index").is_dir()
    box = Sandbox.open(old)
    episode = sample_episodes[0]
    call = episode.recorded[0]
    result = box.lookup(call.name, call.arguments, episode.episode_id)
    assert result.match == "exact" and result.response == call.response
