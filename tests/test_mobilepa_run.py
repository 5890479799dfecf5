"""``mobility-env run --env MobilePA-v0``: the runner, eval, report and export, and the LLM agents unchanged.

The LLM agents talk to the scripted OpenAI-compatible server (real HTTP on 127.0.0.1); a script that
plays the oracle's calls must score exactly what the oracle scores, through each agent's own loop.
"""

from __future__ import annotations

import json
import random
import re
import statistics

import pyarrow.parquet as pq
import pytest

from mobility_agents.export import export_run
from mobility_agents.llm.client import LLMConfig
from mobility_agents.baselines.mobilepa.scripted import PhoneOracleAgent
from mobility_agents.llm.plan_execute import PlanExecuteAgent
from mobility_agents.llm.react import ReActAgent
from mobility_agents.baselines.mobilitybench.rule import RuleAgent
from mobility_agents.runner import RunConfig, read_results, run_local
from mobility_env.cli import main
from mobility_env.errors import ConfigError
from mobility_env.mobilepa.env import BUNDLED_TASKS, MobilePAEnv
from mobility_env.mobilitybench.store import default_data_path
from mobility_rewards.mobilepa.verify import PHONE_REWARD_VERSION, phone_format_versions
from openai_server import MODEL, ScriptedOpenAIServer, plan_execute_script, react_script

FAST = {"timeout_s": 2.0, "max_retries": 1, "backoff_s": 0.01, "backoff_max_s": 0.1}


@pytest.fixture(scope="module")
def env() -> MobilePAEnv:
    return MobilePAEnv()


def _pick(env: MobilePAEnv) -> list[str]:
    """One bundled task per bucket, plus one that asks the user and one that recovers from a fault."""
    chosen: dict[str, str] = {}
    for task_id in env.task_ids:
        task = env.tasks[task_id]
        kinds = {o["kind"] for o in task.obstacles}
        asks = any(c.name == "ask_user" for c in task.oracle_calls)
        for key, wanted in (("bucket:" + task.bucket, True), ("ask", asks), ("fault", "runtime_exception" in kinds),
                            ("permission", "permission_block" in kinds)):
            if wanted and key not in chosen and len(task.oracle_calls) <= 8:
                chosen[key] = task_id
    assert {"bucket:tool_call", "bucket:state_change", "bucket:behaviour", "ask", "fault", "permission"} <= set(chosen)
    return sorted(set(chosen.values()))


def _oracle(env: MobilePAEnv, task_id: str) -> tuple[dict, list[dict]]:
    record = PhoneOracleAgent().run_episode(env, task_id)
    return record["result"], PhoneOracleAgent().actions(env, task_id)


def _config(server: ScriptedOpenAIServer, **changes) -> LLMConfig:
    return LLMConfig(**{"model": MODEL, "base_url": server.base_url, "api_key": "k", **FAST, **changes})


# --------------------------------------------------------------------------- LLM agents, unchanged
@pytest.mark.parametrize("language", ["en", "zh"])
def test_react_playing_the_oracle_scores_like_the_oracle(env, language):
    for task_id in _pick(env):
        expected, actions = _oracle(env, task_id)
        with ScriptedOpenAIServer(react_script(actions)) as server:
            record = ReActAgent(_config(server, language=language)).run_episode(env, task_id)
            assert server.protocol_errors == [] and server.remaining == 0
        result = record["result"]
        assert result["failure"] is None and result["terminated"], task_id
        assert result["metrics"] == expected["metrics"] and result["metrics"]["success"] == 1.0, task_id
        assert result["total_reward"] == pytest.approx(expected["total_reward"])
        assert (result["bucket"], result["category"]) == (env.tasks[task_id].bucket, env.tasks[task_id].category)
        first = server.chat_bodies[0]
        system = first["messages"][0]["content"]
        assert ("phone" in system) if language == "en" else ("手机" in system)
        assert "traveller" not in system and "出行" not in system  # not the map prompts
        assert env.tasks[task_id].query in first["messages"][1]["content"]
        offered = [t["function"]["name"] for t in first["tools"]]
        assert offered[-2:] == ["ask_user", "finish"] and set(offered[:-2]) == set(env.tasks[task_id].action_space)


def test_plan_execute_playing_the_oracle_scores_like_the_oracle(env):
    for task_id in _pick(env):
        expected, actions = _oracle(env, task_id)
        with ScriptedOpenAIServer(plan_execute_script(actions)) as server:
            record = PlanExecuteAgent(_config(server, language="en")).run_episode(env, task_id)
            assert server.protocol_errors == [] and server.remaining == 0
        result = record["result"]
        assert result["failure"] is None and result["terminated"], task_id
        assert result["metrics"] == expected["metrics"] and result["metrics"]["success"] == 1.0, task_id
        # MobilePA's finish takes only the answer: the agent declared no intent, slots or plan to it
        answer = actions[-1]["arguments"]["answer"]
        assert record["trajectory"]["steps"][-1]["action"]["arguments"] == {"answer": answer}
        bodies = server.chat_bodies
        assert "phone" in bodies[0]["messages"][0]["content"]
        assert all(body["messages"][0] == bodies[0]["messages"][0] for body in bodies)  # one shared prefix
        assert "finish" not in {t["function"]["name"] for t in bodies[1]["tools"]}


# --------------------------------------------------------------------------- the runner and the CLI
def test_cli_run_eval_report_export_and_resume(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["run", "--env", "MobilePA-v0", "--agent", "oracle", "--out", str(out), "--limit", "12",
                 "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "bucket: tool_call" in printed and re.search(r"\(bundled, \d+ tasks\)", printed)
    results = read_results(out / "results.jsonl")
    assert len(results) == 12 and all(r["metrics"]["success"] == 1.0 for r in results)
    assert all(r["category"] == r["task_scenario"] and r["bucket"] and r["language"] in ("zh", "en") for r in results)
    run = json.loads((out / "run.json").read_text())
    assert run["env_id"] == "MobilePA-v0" and run["identity"]["env_id"] == "MobilePA-v0"
    assert run["data_fingerprint"].startswith("blake2b:") and run["env"] == {}
    # MobilePA's versions, not the map env's
    assert {key: run[key] for key in phone_format_versions()} == phone_format_versions()
    assert run["reward_version"] == PHONE_REWARD_VERSION

    # resume: nothing left to do; the other env on the same directory is refused, naming the difference
    assert main(["run", "--env", "MobilePA-v0", "--agent", "oracle", "--out", str(out), "--limit", "12",
                 "--no-progress", "--resume"]) == 0
    assert len(read_results(out / "results.jsonl")) == 12
    assert main(["run", "--agent", "oracle", "--out", str(out), "--limit", "12", "--no-progress", "--resume"]) == 2
    assert "env_id" in capsys.readouterr().err

    # eval recomputes from the recorded phone trajectories: a trajectory whose delta is tampered with fails
    lines = (out / "trajectories.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    bucket_of = {r["episode_id"]: r["bucket"] for r in results}
    victim = next(r for r in records if r["record"]["delta"] and bucket_of[r["episode_id"]] == "state_change")
    victim["record"]["delta"] = {}
    (out / "trajectories.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
    assert main(["eval", str(out)]) == 0
    scorecard = json.loads((out / "scorecard.json").read_text())
    assert scorecard["recomputed"] == 12 and scorecard["overall"]["success"] == pytest.approx(11 / 12, abs=1e-4)
    rescored = {r["episode_id"]: r for r in read_results(out / "eval_results.jsonl")}
    assert rescored[victim["episode_id"]]["metrics"]["success"] == 0.0

    assert main(["report", str(out)]) == 0
    report = (out / "report.md").read_text()
    assert "# MobilePA scorecard" in report and "## By bucket" in report and "Most frequent failing checks" in report
    report_json = json.loads((out / "report.json").read_text())
    assert report_json["scorecard"]["overall"]["tasks"] == 12 and "Overall score" in report
    try:
        import matplotlib  # noqa: F401
        assert report_json["charts"] == ["chart_dimensions.png", "chart_buckets.png", "chart_radar.png"]
        assert all((out / name).stat().st_size for name in report_json["charts"])
        assert "![chart_dimensions](chart_dimensions.png)" in report
    except ImportError:
        assert "matplotlib is not installed" in report_json["chart_note"]

    table = pq.read_table(export_run(out, tmp_path / "x.parquet")).to_pylist()
    assert len(table) == 12 and {r["task_scenario"] for r in table} == {r["category"] for r in results}
    assert all(r["fpr"] == 1.0 for r in table) and all(r["messages"] for r in table)
    assert {r["dimension"] for r in table} == {r["dimension"] for r in results}
    assert {r["bucket"] for r in table} == {r["bucket"] for r in results}


def test_scenario_selects_categories_and_bad_options_are_clear(tmp_path, capsys):
    config = RunConfig(out_dir=tmp_path / "a", env_id="MobilePA-v0", scenarios=["error_recovery"], limit=5,
                       progress=False)
    results = run_local(PhoneOracleAgent, config)
    assert len(results) == 5 and {r["category"] for r in results} == {"error_recovery"}
    with pytest.raises(ConfigError, match="grounding"):  # the unknown name lists the valid ones
        run_local(PhoneOracleAgent, RunConfig(out_dir=tmp_path / "b", env_id="MobilePA-v0", scenarios=["Weather"],
                                              progress=False))
    with pytest.raises(ConfigError, match="unknown env"):
        RunConfig(out_dir=tmp_path / "c", env_id="MobilePA-v1")
    assert main(["run", "--env", "MobilePA-v0", "--obs-format", "raw", "--out", str(tmp_path / "d")]) == 2
    assert "--obs-format" in capsys.readouterr().err
    assert main(["run", "--maps-data", str(tmp_path), "--out", str(tmp_path / "f")]) == 2
    assert "--maps-data is an option of MobilePA-v0" in capsys.readouterr().err
    assert main(["run", "--env", "MobilePA-v0", "--agent", "oracle", "--data", str(tmp_path),
                 "--out", str(tmp_path / "e")]) == 2
    assert "tasks.jsonl" in capsys.readouterr().err


def test_max_steps_reaches_the_env_and_a_custom_task_file_runs(tmp_path):
    source = BUNDLED_TASKS / "tasks.jsonl"
    tasks_file = tmp_path / "mine.jsonl"
    tasks_file.write_text("".join(source.read_text(encoding="utf-8").splitlines(keepends=True)[:3]), encoding="utf-8")
    out = tmp_path / "run"
    assert main(["run", "--env", "MobilePA-v0", "--agent", "oracle", "--data", str(tasks_file), "--max-steps", "2",
                 "--out", str(out), "--no-progress"]) == 0
    results = read_results(out / "results.jsonl")
    assert len(results) == 3 and all(r["steps"] <= 2 for r in results)
    assert json.loads((out / "run.json").read_text())["env"] == {"max_steps": 2}

    # the maps tools replay the set --maps-data names; the bundled tasks were made from the bundled set
    maps_tasks = [line for line in source.read_text(encoding="utf-8").splitlines() if '"maps_' in line][:2]
    tasks_file.write_text("\n".join(maps_tasks) + "\n", encoding="utf-8")
    out = tmp_path / "maps"
    assert main(["run", "--env", "MobilePA-v0", "--agent", "oracle", "--data", str(tasks_file), "--maps-data",
                 str(default_data_path()), "--out", str(out), "--no-progress"]) == 0
    assert [r["metrics"]["success"] for r in read_results(out / "results.jsonl")] == [1.0, 1.0]
    assert json.loads((out / "run.json").read_text())["env"]["maps_data"] == str(default_data_path().resolve())


class _CoinAgent(PhoneOracleAgent):
    """Plays the oracle or gives up, by a coin of its own (a sampling agent's spread, without a model)."""

    name = "coin"

    def __init__(self) -> None:
        self.coin = random.Random(7)

    def actions(self, env, task_id):
        oracle = super().actions(env, task_id)
        return oracle if self.coin.random() < 0.5 else oracle[-1:]


def test_repeats_report_mean_and_spread_zero_for_a_deterministic_agent(tmp_path, capsys):
    from mobility_rewards.repeats import phone_rows, repeat_spread

    out = tmp_path / "rep"
    assert main(["run", "--env", "MobilePA-v0", "--agent", "oracle", "--repeats", "3", "--limit", "6",
                 "--out", str(out), "--no-progress"]) == 0
    assert "3 repeat(s): mean ± std" in capsys.readouterr().out
    spread = json.loads((out / "repeats.json").read_text())
    assert spread["repeats"] == 3 and len(read_results(out / "results.jsonl")) == 18
    assert spread["rows"]["overall"]["success"] == {"values": [1.0, 1.0, 1.0], "mean": 1.0, "std": 0.0}
    assert main(["run", "--repeats", "2", "--samples-per-episode", "3", "--out", str(tmp_path / "x")]) == 2

    records = run_local(_CoinAgent, RunConfig(out_dir=tmp_path / "coin", env_id="MobilePA-v0", limit=20,
                                              samples_per_episode=3, progress=False))
    spread = repeat_spread(records, phone_rows)["rows"]["overall"]["success"]
    by_repeat = [sum(r["metrics"]["success"] for r in records if r["sample_index"] == k) / 20 for k in range(3)]
    assert spread["values"] == [round(v, 4) for v in by_repeat] and len(set(by_repeat)) > 1
    assert spread["std"] == pytest.approx(statistics.pstdev(by_repeat), abs=1e-4) and spread["std"] > 0

    mobility = run_local(RuleAgent, RunConfig(out_dir=tmp_path / "mb", limit=5, samples_per_episode=2, progress=False))
    fpr = repeat_spread(mobility)["rows"]["overall"]["FPR"]
    assert fpr["std"] == 0.0 and fpr["values"] == [fpr["mean"]] * 2
