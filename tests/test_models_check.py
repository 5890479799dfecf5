"""`mobility-env models check`: the round trip a run makes, per tool mode — the needed tool called, its result read
back — tells whether and how to run against a server (scripted servers on 127.0.0.1)."""

from __future__ import annotations

import socket

import pytest

from mobility_env.cli import main
from mobility_agents.llm.check import TOKEN
from openai_server import (ScriptedOpenAIServer, bad_request, chat_template, delayed, server_error, text_turn,
                           tool_call, tool_turn)

PING = text_turn("p")  # the preflight's 1-token request
WEATHER = tool_turn(tool_call("weather_query", {"city": "北京市"}))
WEATHER_TEXT = text_turn('{"name": "weather_query", "arguments": {"city": "北京市"}}')  # json mode's call
READ = text_turn(f"北京今天晴，3~12°C（查询编号 {TOKEN}）。")  # an answer that read the tool result
UNREAD = text_turn("北京今天天气晴朗。")  # an answer made without it
PROBES = [text_turn("x"), text_turn("x")]  # native mode's two 1-token requests: are tool results in the prompt?
SHOWS_TOOLS = chat_template()  # prompt_tokens counted from the request as a template that renders tool messages
DROPS_TOOLS = chat_template(tool_messages=False)  # ... and as llama-cpp-python's chatml-function-calling renders it


def _check(capsys, server_url: str, *extra: str) -> tuple[int, str]:
    code = main(["models", "check", "--base-url", server_url, "--model", "m", "--max-retries", "0", *extra])
    out, err = capsys.readouterr()
    return code, out + err


def test_both_modes_round_trip_and_native_is_recommended(capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    with ScriptedOpenAIServer([PING, WEATHER, READ, *PROBES, WEATHER_TEXT, READ], model="m",
                              template=SHOWS_TOOLS) as server:
        code, out = _check(capsys, server.base_url)
        bodies = [r.body for r in server.requests]
        assert server.remaining == 0
    assert code == 0, out
    assert out.count("verdict     OK") == 2 and "recommended --tool-mode native" in out
    assert bodies[1]["tool_choice"] == "auto"
    assert {t["function"]["name"] for t in bodies[1]["tools"]} >= {"weather_query"}
    tool_message = bodies[2]["messages"][-1]  # native: the result goes back as a tool message
    assert tool_message["role"] == "tool" and TOKEN in tool_message["content"]
    short, long = bodies[3], bodies[4]  # the delivery probe: a longer tool result, as a run offers tools
    assert short["max_tokens"] == long["max_tokens"] == 1 and long["tools"] == bodies[1]["tools"]
    short_result, long_result = short["messages"][-1]["content"], long["messages"][-1]["content"]
    assert long["messages"][-1]["role"] == "tool" and long_result.startswith(short_result)
    assert len(long_result) > len(short_result)
    assert "tool results in the prompt" in out
    assert "tools" not in bodies[5] and "tools" not in bodies[6]  # json mode: the text protocol
    assert bodies[6]["messages"][-1]["role"] == "user" and TOKEN in bodies[6]["messages"][-1]["content"]


def test_a_server_that_drops_tool_results_fails_native_and_recommends_json(capsys, monkeypatch):
    """llama-cpp-python's chatml-function-calling: native calls come out, tool messages never reach the model."""
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    with ScriptedOpenAIServer([PING, WEATHER, UNREAD, *PROBES, WEATHER_TEXT, READ], model="m",
                              template=DROPS_TOOLS) as server:
        code, out = _check(capsys, server.base_url)
    assert code == 1, out
    assert "tool result NOT read" in out and "tool results DROPPED by the server" in out
    assert "the server drops tool messages: the prompt counts" in out and "probably" not in out  # proven, not guessed
    assert "recommended --tool-mode json (not native)" in out


def test_a_dropping_server_is_named_even_when_the_model_picks_the_wrong_tool(capsys, monkeypatch):
    """SmolLM2-135M on chatml-function-calling: the first turn fails (a wrong tool), so the two turns alone never
    reach the tool result; the prompt counts still prove the server drops tool messages."""
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    wrong = tool_turn(tool_call("query_poi", {"keywords": "weather", "city": "B Beijing"}))
    with ScriptedOpenAIServer([PING, wrong, *PROBES], model="m", template=DROPS_TOOLS) as server:
        code, out = _check(capsys, server.base_url, "--tool-mode", "native")
        assert server.remaining == 0
    assert code == 1, out
    assert "the server drops tool messages" in out and "Also: the model called query_poi, not weather_query" in out


def test_a_model_that_ignores_delivered_results_is_told_apart(capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    with ScriptedOpenAIServer([PING, WEATHER, UNREAD, *PROBES], model="m", template=SHOWS_TOOLS) as server:
        code, out = _check(capsys, server.base_url, "--tool-mode", "native")
    assert code == 1, out
    assert "tool results in the prompt" in out and "which the server did put in the prompt" in out
    assert "drops tool messages" not in out


def test_a_server_without_usage_leaves_delivery_unknown(capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    probes = [text_turn("x", usage=None), text_turn("x", usage=None)]
    with ScriptedOpenAIServer([PING, WEATHER, READ, *probes], model="m") as server:
        code, out = _check(capsys, server.base_url, "--tool-mode", "native")
    assert code == 0, out  # the two turns proved the round trip; the counts are not needed
    assert "tool results unknown (the server reports no usage)" in out


def test_a_schema_valid_call_of_the_wrong_tool_fails(capsys, monkeypatch):
    """A call the schema accepts is not enough: the question needs the weather tool (the old check said OK)."""
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    wrong = tool_turn(tool_call("query_poi", {"keywords": "weather", "city": "北京"}))
    with ScriptedOpenAIServer([PING, wrong, *PROBES], model="m", template=SHOWS_TOOLS) as server:
        code, out = _check(capsys, server.base_url, "--tool-mode", "native")
    assert code == 1, out
    assert "not weather_query" in out and "recommended none" in out


def test_a_slow_reply_is_flagged(capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    with ScriptedOpenAIServer([PING, delayed(WEATHER, 0.7), READ, *PROBES], model="m", template=SHOWS_TOOLS) as server:
        code, out = _check(capsys, server.base_url, "--tool-mode", "native", "--timeout", "1")
    assert code == 0, out
    assert "more than half the request timeout" in out


@pytest.mark.parametrize("reply, expected", [
    (text_turn("It is sunny in Beijing."), "no tool call"),
    (tool_turn(tool_call("weather_query", {"town": "北京"})), "schema refuses"),
    (tool_turn(tool_call("福建市", {})), "schema refuses"),
])
def test_a_server_without_usable_tool_calls_fails_with_advice(capsys, monkeypatch, reply, expected):
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    with ScriptedOpenAIServer([PING, reply, *PROBES], model="m", template=SHOWS_TOOLS) as server:
        code, out = _check(capsys, server.base_url, "--tool-mode", "native")
    assert code == 1, out
    assert "verdict     NO" in out and expected in out


def test_json_mode_reads_the_text_protocol(capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    with ScriptedOpenAIServer([PING, WEATHER_TEXT, READ], model="m") as server:
        code, out = _check(capsys, server.base_url, "--tool-mode", "json")
        sent = server.requests[-1].body
    assert code == 0, out
    assert "tools" not in sent and "tool mode   native" not in out


@pytest.mark.parametrize("kind, reply, code", [
    ("json_schema", text_turn('{"answer": "China"}'), 0),
    ("json_object_schema", text_turn('{"answer": "China"}'), 0),
    ("json_schema", text_turn("China, of course."), 1),  # the server ignored response_format
    ("json_schema", text_turn('{"answer": "' + "x" * 60 + '"}'), 1),  # past the schema's maxLength
    ("json_schema", bad_request("response_format type json_schema is not supported"), 1),
    ("json_schema", server_error(500), 1),  # llama-cpp-python's answer to json_schema: one attempt, no retry
])
def test_structured_output_is_checked_when_set(capsys, monkeypatch, kind, reply, code):
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    turns = [PING, WEATHER, READ, *PROBES, reply]
    with ScriptedOpenAIServer(turns, model="m", template=SHOWS_TOOLS) as server:
        exit_code, out = _check(capsys, server.base_url, "--structured-output", kind, "--max-retries", "3",
                                "--tool-mode", "native")
        sent = server.requests[-1].body
        # preflight, round trip, delivery probe, one structured request
        assert server.remaining == 0 and len(server.requests) == 6
    assert exit_code == code, out
    assert ("structured  " in out) and (("            OK" in out) is (code == 0)), out
    asked = "json_schema" if kind == "json_schema" else "json_object"
    assert "tools" not in sent and sent["response_format"]["type"] == asked


def test_a_down_server_exits_3(capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    code, out = _check(capsys, f"http://127.0.0.1:{port}/v1")
    assert code == 3 and "Traceback" not in out


def test_a_failing_request_is_reported_not_raised(capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    with ScriptedOpenAIServer([PING, server_error(500)], model="m") as server:
        code, out = _check(capsys, server.base_url, "--tool-mode", "native")
    assert code in (1, 3), out
    assert "Traceback" not in out


def test_every_example_preset_loads(monkeypatch):
    """examples/models.toml: each preset is valid, names where its key is, and never holds one."""
    from pathlib import Path

    from mobility_agents.llm.client import LLMConfig, load_preset
    from mobility_env.errors import ConfigError

    path = Path(__file__).resolve().parent.parent / "examples" / "models.toml"
    import re

    names = re.findall(r"^\[presets\.([\w-]+)\]", path.read_text(encoding="utf-8"), flags=re.M)
    assert {"vllm", "sglang", "ollama", "llama-cpp", "hosted"} <= set(names)
    variables = set(re.findall(r'^api_key_env = "(\w+)"', path.read_text(encoding="utf-8"), flags=re.M))
    environ = {v: f"key-of-{v}" for v in variables}
    for name in names:
        with pytest.raises(ConfigError, match="not set"):  # the key is looked up, never written in the file
            load_preset(path, name, environ={})
        config = LLMConfig.from_sources(models_file=path, preset=name, environ=environ)
        assert config.api_key.startswith("key-of-"), name
        assert config.base_url.startswith(("http://127.0.0.1", "https://")), name


def test_a_run_in_a_mode_the_check_failed_is_refused_unless_told(capsys, monkeypatch, tmp_path):
    """`models check` remembers each mode's verdict (the user's cache folder); `run` in a failing mode is refused,
    `--ignore-check` runs it with a warning."""
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    turns = [PING, WEATHER, UNREAD, *PROBES, WEATHER_TEXT, READ, PING, text_turn("北京今天晴。")]
    with ScriptedOpenAIServer(turns, model="m", template=DROPS_TOOLS) as server:
        code, out = _check(capsys, server.base_url)
        assert code == 1, out
        run = ["run", "--agent", "react", "--base-url", server.base_url, "--model", "m", "--limit", "1",
               "--max-retries", "0", "--no-progress"]
        assert main([*run, "--tool-mode", "native", "--out", str(tmp_path / "refused")]) == 2
        err = capsys.readouterr().err
        assert "found --tool-mode native failing" in err and "--ignore-check" in err
        assert not (tmp_path / "refused").exists()
        assert main([*run, "--tool-mode", "native", "--ignore-check", "--out", str(tmp_path / "ran")]) == 0
        assert "WARNING" in capsys.readouterr().err
    assert (tmp_path / "ran" / "results.jsonl").exists()
