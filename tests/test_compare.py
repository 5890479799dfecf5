"""``mobility-env compare``: runs of one suite side by side; the numbers are each run's own scorecard, the
differences are later run minus first; runs of different suites are refused in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mobility_agents.runner import RunConfig, read_results, run_local
from mobility_agents.suites import baseline
from mobility_env.cli import main
from mobility_rewards.mobilepa.scorecard import phone_scorecard
from mobility_rewards.mobilitybench.scorecard import build_scorecard


def _run(out: Path, env_id: str, agent: str, limit: int) -> Path:
    run_local(baseline(env_id, agent), RunConfig(out_dir=out, env_id=env_id, limit=limit, progress=False,
                                                 meta={"env_id": env_id, "agent": agent}))
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("compare")
    return {"rule": _run(root / "rule", "MobilityBench-v0", "rule", 40),
            "oracle": _run(root / "oracle", "MobilityBench-v0", "oracle", 40),
            "pa": _run(root / "pa", "MobilePA-v0", "rule", 20),
            "pa_oracle": _run(root / "pa_oracle", "MobilePA-v0", "oracle", 20)}


def test_compare_prints_each_runs_scores_and_the_differences(capsys, runs) -> None:
    assert main(["compare", str(runs["rule"]), str(runs["oracle"]), "--json"]) == 0
    comparison = json.loads(capsys.readouterr().out)
    cards = [build_scorecard(read_results(runs[name] / "results.jsonl")) for name in ("rule", "oracle")]
    expected = [{(r["group"], r["name"]): r for r in card["rows"]} for card in cards]
    assert comparison["headline"] == "FPR" and [r["label"] for r in comparison["runs"]] == ["A", "B"]
    checked = 0
    for row in comparison["rows"]:
        key = (row["group"], row["name"])
        values = [table[key][row["column"]] for table in expected]
        assert row["values"] == values
        assert row["deltas"] == [values[1] - values[0]]
        checked += 1
    assert checked > len(expected[0])  # every overall column and every group's headline
    assert {row["column"] for row in comparison["rows"] if row["group"] == "scenario"} == {"FPR"}
    assert main(["compare", str(runs["rule"]), str(runs["oracle"])]) == 0
    text = capsys.readouterr().out
    assert "B-A" in text and "FPR by group" in text and "scenario: POI Query" in text


def test_compare_mobilepa_runs_uses_success_and_the_weighted_score(capsys, runs) -> None:
    assert main(["compare", str(runs["pa"]), str(runs["pa_oracle"]), "--json"]) == 0
    comparison = json.loads(capsys.readouterr().out)
    card = phone_scorecard(read_results(runs["pa"] / "results.jsonl"))
    overall = {row["column"]: row for row in comparison["rows"] if row["group"] == "overall"}
    assert comparison["headline"] == "success"
    assert overall["success"]["values"][0] == card["overall"]["success"]
    assert overall["weighted"]["values"][0] == card["overall"]["weighted"]["score"]


def test_compare_refuses_runs_of_different_suites_and_a_single_run(capsys, runs) -> None:
    assert main(["compare", str(runs["rule"]), str(runs["pa"])]) == 2
    err = capsys.readouterr().err
    assert "different suites" in err and len(err.strip().splitlines()) == 1
    assert main(["compare", str(runs["rule"])]) == 2
    assert "at least two" in capsys.readouterr().err


def test_compare_notes_runs_over_different_episodes(capsys, runs, tmp_path) -> None:
    shorter = _run(tmp_path / "short", "MobilityBench-v0", "rule", 10)
    assert main(["compare", str(runs["rule"]), str(shorter)]) == 0
    assert "different sets of episodes" in capsys.readouterr().out


def test_compare_chart(runs, tmp_path) -> None:
    pytest.importorskip("matplotlib", reason="the plot extra is not installed")
    chart = tmp_path / "compare.png"
    assert main(["compare", str(runs["rule"]), str(runs["oracle"]), "--chart", str(chart)]) == 0
    assert chart.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("env_id", ["MobilityBench-v0", "MobilePA-v0"])
def test_run_writes_the_scorecard_and_report_reads_it_quietly(capsys, tmp_path, env_id) -> None:
    out = tmp_path / "run"
    assert main(["run", "--env", env_id, "--limit", "6", "--out", str(out), "--no-progress"]) == 0
    assert f"{out}/scorecard.json" in capsys.readouterr().out
    card = json.loads((out / "scorecard.json").read_text(encoding="utf-8"))
    records = read_results(out / "results.jsonl")
    expected = build_scorecard(records) if env_id == "MobilityBench-v0" else phone_scorecard(records)
    assert card["env_id"] == env_id and card["source"]["from"] == "run" and card["results"] == 6
    assert {key: card[key] for key in expected} == json.loads(json.dumps(expected))
    assert main(["report", str(out)]) == 0
    assert "does not match" not in capsys.readouterr().err  # the run's own scorecard is not a stale eval
    assert main(["eval", str(out)]) == 0
    assert json.loads((out / "scorecard.json").read_text(encoding="utf-8"))["source"]["from"] == "eval"
