"""A run whose model never calls a tool says so once, on the console and in run.json (scripted server, 127.0.0.1)."""

from __future__ import annotations

import json

import pytest

from mobility_agents.llm.client import LLMConfig
from mobility_agents.llm.react import ReActAgent
from mobility_agents.runner import NO_TOOL_CALL_EPISODES, RunConfig, run_local
from openai_server import ScriptedOpenAIServer, text_turn, tool_call, tool_turn

EPISODES = NO_TOOL_CALL_EPISODES + 2


def _run(tmp_path, script, tool_mode="native"):
    logged: list[str] = []
    with ScriptedOpenAIServer([text_turn("p")] + script, strict=False) as server:
        config = LLMConfig(model="m", base_url=server.base_url, api_key="k", tool_mode=tool_mode, max_retries=0)
        server.model = "m"
        results = run_local(lambda: ReActAgent(config),
                            RunConfig(out_dir=tmp_path / "run", limit=EPISODES, progress=False, log=logged.append))
        requests = list(server.requests)
    info = json.loads((tmp_path / "run" / "run.json").read_text(encoding="utf-8"))
    return results, logged, info, requests


@pytest.mark.parametrize("tool_mode", ["native", "json"])
def test_a_model_that_never_calls_a_tool_is_reported_once(tmp_path, tool_mode):
    results, logged, info, requests = _run(tmp_path, [text_turn("It is fine.")] * EPISODES, tool_mode)
    assert len(results) == EPISODES
    assert all(r["model_calls"]["tools_offered"] >= 1 and r["model_calls"]["tool_calls"] == 0 for r in results)
    warnings = [line for line in logged if "made no tool call" in line]
    assert len(warnings) == 1
    assert [w["kind"] for w in info.get("warnings", [])] == ["no_tool_calls"]
    if tool_mode == "native":
        assert all(r.body.get("tool_choice") == "auto" for r in requests if r.path.endswith("/chat/completions"))


def test_a_model_that_calls_tools_is_not_reported(tmp_path):
    weather = tool_turn(tool_call("weather_query", {"city": "北京市"}))
    script = [weather, text_turn("It is fine.")] * EPISODES
    results, logged, info, _ = _run(tmp_path, script)
    assert results[0]["model_calls"]["tool_calls"] == 1
    assert not [line for line in logged if "made no tool call" in line]
    assert "warnings" not in info
