"""Verdicts everywhere: the env's terminal info, results.jsonl, eval, report and export.

Check names belong to the verifiers; these tests read them from the records (or build their
own verdicts) instead of naming them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from mobility_agents.export import export_run
from mobility_env.mobilitybench.env import MobilityEnv
from mobility_env.runfiles import read_jsonl, read_results
from mobility_rewards.mobilitybench.failures import NOT_DELIVERED, failing_checks, failing_checks_markdown
from mobility_rewards.verdict import Check, Verdict

CHECK_KEYS = {"name", "expected", "stated", "passed", "reason"}


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "mobility_env.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


def assert_consistent(verdict: dict, metrics: dict) -> None:
    assert set(verdict) >= {"version", "delivered", "passed", "reason", "checks"}
    assert all(set(c) == CHECK_KEYS for c in verdict["checks"])
    assert Verdict.from_dict(verdict).to_dict() == verdict
    assert metrics["DR"] == float(verdict["delivered"])
    assert metrics["FPR"] == float(verdict["delivered"] and verdict["passed"])


# ----------------------------------------------------------------------------- the env
def test_terminal_info_carries_the_verdict_on_finish_truncation_and_abandon(sample_csv, sample_episodes):
    from mobility_rewards.mobilitybench.reference import gold_trajectory

    episode = next(e for e in sample_episodes if e.task_scenario == "Weather Query" and len(e.gold_calls) == 1)
    env = MobilityEnv(data=sample_csv, max_steps=2, render_mode="ansi")

    env.reset(options={"episode_id": episode.episode_id})
    for call in gold_trajectory(episode).calls:
        _, _, terminated, truncated, info = env.step({"name": call.name, "arguments": call.arguments})
        assert "verdict" not in info  # only the terminal step has one
    _, _, terminated, _, info = env.step({"name": "finish", "arguments": {"answer": "今天暴雨，气温零下30度"}})
    assert terminated
    assert_consistent(info["verdict"], info["metrics"])
    assert info["verdict"]["delivered"] and not info["verdict"]["passed"] and info["verdict"]["checks"]
    assert env.state.verdict.to_dict() == info["verdict"]
    assert "verdict: FAIL" in env.render()

    env.reset(options={"episode_id": episode.episode_id})
    for _ in range(2):
        _, _, _, truncated, info = env.step({"name": "weather_query", "arguments": {"city": "北京市"}})
    assert truncated
    assert_consistent(info["verdict"], info["metrics"])
    assert info["verdict"]["delivered"] is False and info["verdict"]["reason"]

    env.reset(options={"episode_id": episode.episode_id})
    final = env.abandon("gave_up")
    assert_consistent(final["verdict"], final["metrics"])
    assert final["verdict"]["delivered"] is False
    assert env.abandon("again")["verdict"] == final["verdict"]  # an ended episode keeps its verdict


# ----------------------------------------------------------------------------- run, eval, export
@pytest.fixture(scope="module")
def oracle_run(tmp_path_factory, sample_csv) -> Path:
    root = tmp_path_factory.mktemp("oracle")
    cli("run", "--agent", "oracle", "--data", str(sample_csv), "--limit", "5", "--out", "run", "--no-progress",
        cwd=root)
    return root / "run"


def test_every_results_line_has_a_verdict_with_checks(oracle_run):
    records = read_results(oracle_run / "results.jsonl")
    assert len(records) == 5
    for record in records:
        verdict = record["verdict"]
        assert verdict["checks"], record["episode_id"]
        assert_consistent(verdict, record["metrics"])


def test_eval_rewrites_the_verdicts_from_the_trajectories(oracle_run, sample_csv, tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    for name in ("trajectories.jsonl", "run.json"):
        (run / name).write_bytes((oracle_run / name).read_bytes())
    original = read_results(oracle_run / "results.jsonl")
    tampered = [{**r, "verdict": {"version": 1, "delivered": True, "passed": False, "reason": "stale",
                                  "checks": [{"name": "stale_check", "passed": False}]}} for r in original[:3]]
    old = [{k: v for k, v in r.items() if k != "verdict"} for r in original[3:]]  # a run from before verdicts
    results = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in tampered + old)
    (run / "results.jsonl").write_text(results, encoding="utf-8")

    proc = cli("eval", str(run), "--data", str(sample_csv), cwd=tmp_path)
    assert "recomputed 5/5" in proc.stdout and "eval_results.jsonl" in proc.stdout
    assert (run / "results.jsonl").read_text(encoding="utf-8") == results  # never rewritten
    rescored = read_results(run / "eval_results.jsonl")
    assert [r["episode_id"] for r in rescored] == [r["episode_id"] for r in original]
    for before, after in zip(original, rescored):
        assert after["rescored"] is True and "trajectory" not in after
        assert after["verdict"] == before["verdict"] and after["metrics"] == before["metrics"]

    cli("report", str(run), cwd=tmp_path)
    report = json.loads((run / "report.json").read_text(encoding="utf-8"))
    assert "stale_check" not in json.dumps(report["failing_checks"])  # the report reads eval's verdicts
    assert report["failing_checks"]["without_verdict"] == 0


def test_export_carries_verdict_and_failed_checks(oracle_run, tmp_path):
    table = pq.read_table(export_run(oracle_run, tmp_path / "rl.parquet")).to_pylist()
    records = {r["episode_id"]: r for r in read_results(oracle_run / "results.jsonl")}
    for row in table:
        verdict = records[row["episode_id"]]["verdict"]
        assert row["verdict"] == verdict  # a native struct with the same fields
        assert row["failed_checks"] == [c["name"] for c in verdict["checks"] if not c["passed"]]


# ----------------------------------------------------------------------------- report
@pytest.fixture(scope="module")
def rule_run(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("rule")
    cli("run", "--agent", "rule", "--limit", "80", "--out", "run", "--no-progress", cwd=root)
    return root / "run"


def expected_failures(records: list[dict]) -> dict[str, Counter]:
    by_scenario: dict[str, Counter] = defaultdict(Counter)
    for record in records:
        verdict = record["verdict"]
        names = {c["name"] for c in verdict["checks"] if not c["passed"]}
        if not names and not verdict["passed"]:
            names = {NOT_DELIVERED if not verdict["delivered"] else "(nothing verified)"}
        by_scenario[record["task_scenario"]].update(names)
    return by_scenario


def test_report_lists_the_most_frequent_failing_checks_per_scenario(rule_run):
    cli("report", str(rule_run), cwd=rule_run.parent)
    records = read_results(rule_run / "results.jsonl")
    expected = expected_failures(records)
    assert sum(sum(c.values()) for c in expected.values()) > 0, "the rule agent should fail some episodes"
    section = json.loads((rule_run / "report.json").read_text(encoding="utf-8"))["failing_checks"]
    markdown = (rule_run / "report.md").read_text(encoding="utf-8")
    assert "## Most frequent failing checks" in markdown
    episodes = Counter(r["task_scenario"] for r in records)
    for row in section["scenarios"]:
        counts = expected[row["scenario"]]
        assert row["episodes"] == episodes[row["scenario"]]
        top = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:5]
        assert [(c["check"], c["episodes"]) for c in row["checks"]] == top
        for check in row["checks"]:
            assert check["share"] == pytest.approx(check["episodes"] / row["episodes"])
            assert check["example"]
            assert f"| {check['check']} | {check['episodes']} | {100 * check['share']:.1f}% |" in markdown
        if row["checks"]:
            assert f"### {row['scenario']}" in markdown


def _record(episode_id: str, scenario: str, verdict: Verdict | None, sample_index: int = 0) -> dict:
    record = {"episode_id": episode_id, "sample_index": sample_index, "task_scenario": scenario, "metrics": {}}
    if verdict is not None:
        record["verdict"] = verdict.to_dict()
    return record


def test_failing_checks_counts_episodes_shares_and_examples():
    failing = lambda *names: Verdict(  # noqa: E731
        True, [Check(n, "12 km", "20 km", False, f"{n} is off") for n in names] + [Check("ok", passed=True)])
    passing = Verdict(True, [Check("ok", passed=True)])
    records = [
        _record("a", "Point-to-Point Planning", failing("distance", "duration")),
        _record("a", "Point-to-Point Planning", failing("distance"), sample_index=1),  # same episode: counted once
        _record("b", "Point-to-Point Planning", failing("distance | with a pipe")),
        _record("c", "Point-to-Point Planning", passing),
        _record("d", "Point-to-Point Planning", Verdict(False, reason="truncated")),
        _record("e", "Weather Query", passing),
        _record("f", "Weather Query", None),                                            # an old record
        _record("g", "Weather Query", failing("condition")),                            # audited: left out
    ] + [_record(f"h{i}", "POI Query", failing(*(f"check{j}" for j in range(i + 1)))) for i in range(7)]
    section = failing_checks(records, exclude={"g"})
    assert section["without_verdict"] == 1 and section["excluded"] == ["g"]
    rows = {row["scenario"]: row for row in section["scenarios"]}
    assert [r["scenario"] for r in section["scenarios"]] == ["POI Query", "Weather Query", "Point-to-Point Planning"]
    p2p = rows["Point-to-Point Planning"]
    assert (p2p["episodes"], p2p["failing_episodes"]) == (4, 3)
    assert [(c["check"], c["episodes"], c["samples"]) for c in p2p["checks"]] == [
        (NOT_DELIVERED, 1, 1), ("distance", 1, 2), ("distance | with a pipe", 1, 1), ("duration", 1, 1)]
    distance = p2p["checks"][1]
    assert distance["share"] == 0.25 and distance["example"] == "distance is off" and distance["example_episode"] == "a"
    assert p2p["checks"][0]["example"] == "truncated"
    assert rows["Weather Query"]["checks"] == [] and rows["Weather Query"]["episodes"] == 1
    poi = rows["POI Query"]["checks"]
    assert [c["check"] for c in poi] == ["check0", "check1", "check2", "check3", "check4"]  # top 5 of 7
    assert [c["episodes"] for c in poi] == [7, 6, 5, 4, 3]

    markdown = failing_checks_markdown(section)
    assert "| distance \\| with a pipe | 1 | 25.0% |" in markdown
    assert "Every check passed in: Weather Query (n = 1)." in markdown
    assert "1 result(s) without a verdict" in markdown
    assert markdown.index("### POI Query") < markdown.index("### Point-to-Point Planning")


def test_report_of_an_old_run_without_verdicts_skips_them_with_a_note(tmp_path):
    old = [{"episode_id": f"e{i}", "sample_index": 0, "task_scenario": "POI Query",
            "intent_family": "Basic Information Retrieval", "metrics": {"FPR": 0.0, "DR": 1.0},
            "input_tokens": 0, "output_tokens": 0} for i in range(3)]
    (tmp_path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in old), encoding="utf-8")
    assert len(read_jsonl(tmp_path / "results.jsonl")) == 3
    cli("report", str(tmp_path), cwd=tmp_path)
    markdown = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "## Most frequent failing checks" in markdown and "3 result(s) without a verdict" in markdown
    assert "No result has a verdict." in markdown
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert report["failing_checks"]["without_verdict"] == 3 and report["failing_checks"]["scenarios"] == []
