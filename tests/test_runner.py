"""The local runner and `mobility-env run`: incremental results, filters, resume after a hard kill."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mobility_agents.baselines.mobilitybench.oracle import OracleAgent
from mobility_agents.runner import RunConfig, episode_seed, read_results, run_local
from mobility_env.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]

SLOW_RUN = """
import sys, time
from mobility_agents.baselines.mobilitybench.oracle import OracleAgent
from mobility_agents.runner import RunConfig, run_local

class SlowOracle(OracleAgent):
    def play(self, session):
        time.sleep(0.05)
        super().play(session)

run_local(SlowOracle, RunConfig(out_dir=sys.argv[2], data=sys.argv[1], resume=len(sys.argv) > 3, progress=False))
"""


def test_run_with_no_arguments_uses_bundled_data_and_rule_agent(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "mobility_env.cli", "run", "--no-progress"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "overall" in proc.stdout and "FPR" in proc.stdout
    runs = list((tmp_path / "runs").iterdir())
    assert len(runs) == 1 and runs[0].name.startswith("rule-default-")
    records = read_results(runs[0] / "results.jsonl")
    assert len(records) == 220
    assert 0.3 < sum(r["metrics"]["FPR"] for r in records) / len(records) < 1.0  # a real, non-trivial score


def test_filters_limit_and_seeds(tmp_path, sample_csv, sample_episodes):
    config = RunConfig(out_dir=tmp_path / "r", data=str(sample_csv), scenarios=["Weather Query"], limit=3,
                       samples_per_episode=2, seed=7, progress=False)
    records = run_local(OracleAgent, config)
    weather = [e.episode_id for e in sample_episodes if e.task_scenario == "Weather Query"][:3]
    assert [(r["episode_id"], r["sample_index"]) for r in records] == [(e, k) for e in weather for k in (0, 1)]
    assert all(r["seed"] == episode_seed(7, r["episode_id"], r["sample_index"]) for r in records)
    trajectories = [json.loads(line) for line in (tmp_path / "r" / "trajectories.jsonl").open(encoding="utf-8")]
    assert [(t["episode_id"], t["sample_index"]) for t in trajectories] == [(e, k) for e in weather for k in (0, 1)]
    assert all(t["steps"] and t["steps"][-1]["action"]["name"] == "finish" for t in trajectories)
    with pytest.raises(ConfigError, match="--resume"):
        run_local(OracleAgent, config)
    with pytest.raises(ConfigError, match="no episode has scenario"):
        run_local(OracleAgent, RunConfig(out_dir=tmp_path / "none", data=str(sample_csv), scenarios=["Flying"],
                                         progress=False))


def test_resume_after_hard_kill_loses_and_duplicates_nothing(tmp_path, sample_csv):
    out = tmp_path / "killed"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", SLOW_RUN, str(sample_csv), str(out)], cwd=tmp_path, env=env)
    results = out / "results.jsonl"
    deadline = time.time() + 120
    while time.time() < deadline and (not results.exists() or results.read_text(encoding="utf-8").count("\n") < 10):
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    before = read_results(results)
    assert 10 <= len(before) < 81
    subprocess.run([sys.executable, "-c", SLOW_RUN, str(sample_csv), str(out), "resume"], cwd=tmp_path, env=env,
                   check=True, timeout=300)
    after = read_results(results)
    keys = [r["episode_id"] for r in after]
    assert len(keys) == len(set(keys)) == 81
    assert after[: len(before)] == before  # nothing rewritten


class _DownServerAgent(OracleAgent):
    name = "down"

    def play(self, session):
        from mobility_agents.base import AgentFailure

        raise AgentFailure("llm_unavailable", "model server down")


def test_retry_failed_reruns_only_failures_and_readers_keep_the_last_line(tmp_path, sample_csv):
    from mobility_env.runfiles import read_jsonl

    config = RunConfig(out_dir=tmp_path / "r", data=str(sample_csv), limit=4, progress=False)
    first = run_local(_DownServerAgent, config)
    assert [r["failure"]["type"] for r in first] == ["llm_unavailable"] * 4
    # an abandoned episode is still scored: DR = 0, and the verdict says nothing was delivered
    assert all(r["verdict"]["delivered"] is False and not r["verdict"]["passed"] for r in first)
    config.resume = True
    assert run_local(OracleAgent, config) == first  # plain resume: failures count as done
    config.retry_failed = True
    second = run_local(OracleAgent, config)
    assert [r["episode_id"] for r in second] == [r["episode_id"] for r in first]
    assert all(r["failure"] is None and r["metrics"]["DR"] == 1.0 for r in second)
    assert all(r["verdict"]["delivered"] and r["verdict"]["checks"] for r in second)
    assert len(read_jsonl(tmp_path / "r" / "results.jsonl")) == 8  # appended, never rewritten
    assert run_local(OracleAgent, config) == second  # nothing left to retry


def test_a_corrupt_line_in_the_middle_is_a_typed_error(tmp_path):
    from mobility_env.errors import DataFileError
    from mobility_env.runfiles import read_jsonl

    path = tmp_path / "results.jsonl"
    path.write_text('{"episode_id": "a"}\n{oops\n{"episode_id": "b"}\n', encoding="utf-8")
    with pytest.raises(DataFileError, match="row 2"):
        read_jsonl(path)
