"""User mistakes on the command line end in one line naming what was wrong and exit 2, never a
traceback: bad paths, bad options, missing run directories, corrupt run files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from mobility_agents.baselines.mobilitybench.oracle import OracleAgent
from mobility_agents.runner import RunConfig, run_local
from mobility_env.cli import main


@pytest.fixture(scope="module")
def good_run(tmp_path_factory, sample_csv) -> Path:
    out = tmp_path_factory.mktemp("good") / "run"
    run_local(OracleAgent, RunConfig(out_dir=out, data=str(sample_csv), limit=3, progress=False))
    return out


@pytest.fixture
def run_copy(good_run, tmp_path) -> Path:
    copy = tmp_path / "run"
    shutil.copytree(good_run, copy)
    return copy


def fails(capsys, *args: str) -> str:
    """Run ``mobility-env ARGS``; assert it failed as a user mistake; return its error line."""
    capsys.readouterr()
    code = main([str(a) for a in args])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err and err.startswith("mobility-env: error: ")
    assert len(err.strip().splitlines()) == 1, err
    return err


def test_bad_data_paths(tmp_path, capsys, sample_csv):
    run = ("run", "--agent", "oracle", "--no-progress", "--out", tmp_path / "out", "--data")
    assert "no such file or directory" in fails(capsys, *run, tmp_path / "missing.csv")
    (tmp_path / "empty").mkdir()
    assert "not a built directory" in fails(capsys, *run, tmp_path / "empty")
    (tmp_path / "notes.txt").write_text("hello", encoding="utf-8")
    assert "unsupported file type" in fails(capsys, *run, tmp_path / "notes.txt")
    (tmp_path / "other.csv").write_text("a,b\n1,2\n", encoding="utf-8")
    assert "missing column(s)" in fails(capsys, *run, tmp_path / "other.csv")
    assert not (tmp_path / "out").exists()  # nothing created for a run that could not start
    (tmp_path / "a-file").write_text("x", encoding="utf-8")
    err = fails(capsys, "run", "--agent", "oracle", "--data", sample_csv, "--out", tmp_path / "a-file", "--limit", 1)
    assert "is a file" in err


@pytest.mark.parametrize("option, value", [("--limit", "0"), ("--workers", "0"), ("--max-steps", "0"),
                                           ("--samples-per-episode", "0"), ("--concurrency", "-1"),
                                           ("--limit", "-3")])
def test_bad_numbers(tmp_path, capsys, option, value):
    assert f"{option} must be at least 1" in fails(capsys, "run", "--out", tmp_path / "o", option, value)


def test_option_combinations_and_selections(tmp_path, capsys, sample_csv):
    assert "--resume needs the --out" in fails(capsys, "run", "--resume")
    assert "only make sense with --resume" in fails(capsys, "run", "--out", tmp_path / "o", "--force-resume")
    assert "--backend ray" in fails(capsys, "run", "--out", tmp_path / "o", "--address", "127.0.0.1:6379")
    err = fails(capsys, "run", "--data", sample_csv, "--out", tmp_path / "o", "--scenario", "Teleport")
    assert "'Teleport'" in err and "'Weather Query' (" in err
    assert "unknown episode id(s): nope" in fails(capsys, "run", "--data", sample_csv, "--out", tmp_path / "o",
                                                  "--episode", "nope")
    assert "models file not found" in fails(capsys, "run", "--agent", "react", "--out", tmp_path / "o",
                                            "--models-file", tmp_path / "missing.toml")


def test_missing_or_wrong_run_directories(tmp_path, capsys):
    for command in ("eval", "report", "export"):
        assert "no such run directory" in fails(capsys, command, tmp_path / "nope")
    (tmp_path / "file").write_text("x", encoding="utf-8")
    assert "not a directory" in fails(capsys, "eval", tmp_path / "file")
    (tmp_path / "empty").mkdir()
    assert "no results.jsonl here" in fails(capsys, "report", tmp_path / "empty")


def test_eval_of_a_run_without_run_json_needs_data(run_copy, capsys):
    (run_copy / "run.json").unlink()
    assert "pass --data" in fails(capsys, "eval", run_copy)


@pytest.mark.parametrize("name, content, expected", [
    ("results.jsonl", b'{"episode_id": "a"}\n{oops\n{"episode_id": "b"}\n', "results.jsonl, row 2: not JSON"),
    ("results.jsonl", b'{"episode_id": "a"}\n\xff\xfe\n', "results.jsonl, row 2: not JSON (not UTF-8)"),
    ("results.jsonl", b'[1, 2]\n', "a line must be a JSON object"),
    ("results.jsonl", b'{"sample_index": 0}\n', "needs an episode_id"),
    ("run.json", b'{"data": ', "run.json: not valid JSON"),
    ("trajectories.jsonl", b'{"episode_id": "x"}\nnot json\n', "trajectories.jsonl, row 2"),
])
def test_corrupt_run_files_are_named(run_copy, capsys, name, content, expected):
    (run_copy / name).write_bytes(content)
    assert expected in fails(capsys, "eval", run_copy)


def test_a_corrupt_trajectory_or_metric_is_named(run_copy, capsys, sample_csv):
    lines = (run_copy / "trajectories.jsonl").read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["record"]["calls"] = "not a list"
    (run_copy / "trajectories.jsonl").write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n", encoding="utf-8")
    err = fails(capsys, "eval", run_copy)
    assert "trajectories.jsonl, row 1" in err and first["episode_id"] in err

    results = [json.loads(line) for line in (run_copy / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    results[1]["metrics"]["FPR"] = "high"
    (run_copy / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in results), encoding="utf-8")
    err = fails(capsys, "report", run_copy)
    assert "metric 'FPR' is not a number" in err and results[1]["episode_id"] in err


def test_export_and_build_output_mistakes(run_copy, tmp_path, capsys, sample_csv):
    (tmp_path / "dir.parquet").mkdir()
    assert "is a directory" in fails(capsys, "export", run_copy, "--out", tmp_path / "dir.parquet")
    (tmp_path / "taken").write_text("x", encoding="utf-8")
    err = fails(capsys, "build", sample_csv, "--out", tmp_path / "taken")
    assert "taken" in err


@pytest.mark.parametrize("argv, suggestion", [
    (["run", "--agent", "recat"], "did you mean 'react'?"),
    (["run", "--env", "MobilityBench-v1"], "did you mean 'MobilityBench-v0'?"),
    (["rnu"], "did you mean 'run'?"),
])
def test_a_mistyped_choice_is_one_line_naming_the_closest(argv, suggestion, capsys):
    """A typo in a command or a choice prints one line with the closest choice, not the whole usage."""
    with pytest.raises(SystemExit) as exited:
        main(argv)
    err = capsys.readouterr().err
    assert exited.value.code == 2 and suggestion in err and len(err.strip().splitlines()) == 1, err


def test_a_used_out_is_refused_before_the_data_is_read(tmp_path, capsys):
    """``--out`` holding a run's results (without --resume) is refused before any data is loaded: the --data given
    here does not exist, and the message is about --out."""
    out = tmp_path / "used"
    out.mkdir()
    (out / "results.jsonl").write_text('{"episode_id": "x"}\n', encoding="utf-8")
    code = main(["run", "--data", str(tmp_path / "no-such-data"), "--out", str(out), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and "already holds results" in err and "no-such-data" not in err, err


def test_backend_ray_without_ray_names_the_extra(capsys, monkeypatch, tmp_path):
    """Ray is the ``ray`` extra: a core install asked for --backend ray says which extra, before loading anything."""
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "ray" else real(name, *a))
    err = fails(capsys, "run", "--backend", "ray", "--limit", "1", "--out", tmp_path / "run")
    assert "pip install 'mobility-env[ray]'" in err
    assert not (tmp_path / "run").exists()


def test_a_mistyped_scenario_or_episode_id_names_the_closest(capsys, tmp_path):
    err = fails(capsys, "run", "--scenario", "Wether Query", "--out", tmp_path / "a")
    assert "did you mean 'Weather Query'?" in err
    import gymnasium as gym

    real = gym.make("MobilityBench-v0").unwrapped.episode_ids[0]
    err = fails(capsys, "run", "--episode", real[:-1] + "#", "--out", tmp_path / "b")
    assert f"did you mean {real!r}?" in err and "220 in this data" in err
