"""`mobility-env models check`: one tools request tells whether a server makes tool calls (127.0.0.1 servers)."""

from __future__ import annotations

import socket

import pytest

from mobility_env.cli import main
from openai_server import ScriptedOpenAIServer, bad_request, server_error, text_turn, tool_call, tool_turn

PING = text_turn("p")  # the preflight's 1-token request


def _check(capsys, server_url: str, *extra: str) -> tuple[int, str]:
    code = main(["models", "check", "--base-url", server_url, "--model", "m", "--max-retries", "0", *extra])
    out, err = capsys.readouterr()
    return code, out + err


def test_a_server_that_calls_a_valid_tool_passes(capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    with ScriptedOpenAIServer([PING, tool_turn(tool_call("weather_query", {"city": "北京市"}))], model="m") as server:
        code, out = _check(capsys, server.base_url)
        sent = server.requests[-1].body
    assert code == 0, out
    assert "weather_query" in out and "verdict     OK" in out
    assert sent["tool_choice"] == "auto" and {t["function"]["name"] for t in sent["tools"]} >= {"weather_query"}


@pytest.mark.parametrize("reply, expected", [
    (text_turn("It is sunny in Beijing."), "no tool call"),
    (tool_turn(tool_call("weather_query", {"town": "北京"})), "schema refuses"),
    (tool_turn(tool_call("福建市", {})), "schema refuses"),
])
def test_a_server_without_usable_tool_calls_fails_with_advice(capsys, monkeypatch, reply, expected):
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    with ScriptedOpenAIServer([PING, reply], model="m") as server:
        code, out = _check(capsys, server.base_url)
    assert code == 1, out
    assert "verdict     NO" in out and expected in out


def test_json_mode_reads_the_text_protocol(capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    reply = text_turn('{"name": "weather_query", "arguments": {"city": "北京市"}}')
    with ScriptedOpenAIServer([PING, reply], model="m") as server:
        code, out = _check(capsys, server.base_url, "--tool-mode", "json")
        sent = server.requests[-1].body
    assert code == 0, out
    assert "tools" not in sent


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
    turns = [PING, tool_turn(tool_call("weather_query", {"city": "北京市"})), reply]
    with ScriptedOpenAIServer(turns, model="m") as server:
        exit_code, out = _check(capsys, server.base_url, "--structured-output", kind, "--max-retries", "3")
        sent = server.requests[-1].body
        assert server.remaining == 0 and len(server.requests) == 3  # preflight, tools, one structured request
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
        code, out = _check(capsys, server.base_url)
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
