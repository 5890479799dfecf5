"""The repository's OpenEnv environment: ``openenv validate openenv-env``, and MCP on a real ``mobility-env serve``.

OpenEnv's own tools judge it: the real ``openenv validate`` (its CLI, in a subprocess) on ``openenv-env/`` (the
environment's folder, a project of its own that depends on the package, so the package's core stays light), and
openenv-core's real ``MCPToolClient`` against a real server on 127.0.0.1, for each env. A tool called over MCP is
one step: its observation, reward and info must equal what the same call gives in process (``gymnasium.make``,
the same seed and episode). A call the agent got wrong (an unknown tool, arguments the schema refuses) comes back
as an error the client reads, and is still the step it is in process. Then the JSON-RPC surfaces (``POST /mcp``,
the ``/mcp`` WebSocket, ``/ws`` ``mcp`` messages) and hostile input to them: typed errors, never a traceback.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import gymnasium as gym
import pytest

pytest.importorskip("openenv", reason="the serve extra (openenv-core) is not installed")

import httpx  # noqa: E402
from openenv.auto import AutoEnv  # noqa: E402
from openenv.core.env_server.mcp_types import CallToolAction, ToolErrorType  # noqa: E402
from openenv.core.mcp_client import MCPToolClient  # noqa: E402
from websockets.sync.client import connect as ws_connect  # noqa: E402

import mobility_env  # noqa: E402,F401  (registers the envs)
from mobility_agents.adapters.openenv.serve import RunningServer, ServeConfig  # noqa: E402
from mobility_agents.targets import MOBILEPA, MOBILITYBENCH  # noqa: E402
from mobility_env.runfiles import json_text  # noqa: E402
from mobility_rewards.mobilitybench.reference import reference_finish  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
ENV_DIR = ROOT / "openenv-env"
UNKNOWN_TOOL = {"name": "teleport", "arguments": {"to": "Beijing"}}
DEEP = 100_000
SKILL_TASK = "mobilepa-0-00003"  # its oracle loads a skill first: the offered tools grow mid-episode


def wire(value: Any) -> Any:
    """``value`` as the server sends it (JSON)."""
    return json.loads(json_text(value))


def calls_of(mapping_calls: Any) -> list[dict[str, Any]]:
    return [{"name": c.name, "arguments": dict(c.arguments)} for c in mapping_calls]


def mobilitybench_calls(env: gym.Env) -> list[dict[str, Any]]:
    """The current episode's gold calls and a correct finish."""
    episode = env.unwrapped.episode
    finish = reference_finish(episode)
    return [*calls_of(episode.gold_calls),
            {"name": "finish", "arguments": {"answer": finish.answer, "intent": finish.intent, "slots": finish.slots,
                                             "plan": finish.plan, "route_index": finish.route_index}}]


def mobilepa_calls(env: gym.Env, task_id: str) -> list[dict[str, Any]]:
    task = env.unwrapped.tasks[task_id]
    return [*calls_of(task.oracle_calls), {"name": "finish", "arguments": {"answer": task.oracle_answer}}]


def in_process(env: gym.Env, call: Any) -> tuple[Any, ...]:
    text, reward, terminated, truncated, info = env.step(call)
    return text, float(reward), terminated, truncated, wire(info)


def over_mcp(result: Any) -> tuple[Any, ...]:
    """(text, reward, terminated, truncated, info) of a ``step(CallToolAction(...))`` through ``MCPToolClient``."""
    answer = result.observation.result
    structured = answer["structured_content"]
    assert answer["data"] == answer["content"][0]["text"]
    assert result.reward == structured["reward"] and result.done == structured["done"]
    return answer["data"], result.reward, structured["terminated"], structured["truncated"], structured["info"]


def openai_as_mcp(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """In-process ``info["tools"]`` (OpenAI schemas) in the shape MCP lists them."""
    return [{"name": t["function"]["name"], "description": t["function"]["description"],
             "input_schema": t["function"]["parameters"]} for t in tools]


def listed(tools: list[Any]) -> list[dict[str, Any]]:
    return [{"name": t.name, "description": t.description, "input_schema": t.input_schema} for t in tools]


def rpc(http: httpx.Client, method: str, params: dict[str, Any] | None = None, request_id: Any = 1) -> dict[str, Any]:
    reply = http.post("/mcp", json={"jsonrpc": "2.0", "method": method, "params": params or {}, "id": request_id})
    assert reply.status_code == 200, reply.text
    return reply.json()


@pytest.fixture(scope="module", autouse=True)
def validate_run() -> Iterator[subprocess.Popen[str]]:
    """``openenv validate openenv-env --json --verbose`` in a subprocess, started first: the CLI imports gradio (about
    15 s here), which overlaps the other tests; ``test_openenv_validate_passes_on_the_environment`` reads it last."""
    process = subprocess.Popen([sys.executable, "-m", "openenv.cli", "validate", ENV_DIR.name, "--json", "--verbose"],
                               cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    yield process
    if process.poll() is None:
        process.kill()
        process.communicate()


@pytest.fixture(scope="module")
def mb_env(bundled_dir: Path) -> gym.Env:
    return gym.make(MOBILITYBENCH, data=str(bundled_dir))


@pytest.fixture(scope="module")
def pa_env() -> gym.Env:
    return gym.make(MOBILEPA)


@pytest.fixture(scope="module")
def mb_server(bundled_dir: Path) -> Iterator[RunningServer]:
    with RunningServer(ServeConfig(data=str(bundled_dir), port=0, max_sessions=8)) as server:
        yield server


@pytest.fixture(scope="module")
def pa_server() -> Iterator[RunningServer]:
    with RunningServer(ServeConfig(env_id=MOBILEPA, port=0, max_sessions=8)) as server:
        yield server


# ---------------------------------------------------------------------------------------------- entry points
def test_server_entry_points_serve_the_env(mb_env: gym.Env, capsys: pytest.CaptureFixture[str]) -> None:
    """``server/app.py``: ``app`` (openenv.yaml's) opens no data until served, then answers MCP; ``main`` is
    ``mobility-env serve``."""
    spec = importlib.util.spec_from_file_location("openenv_server_app", ENV_DIR / "server" / "app.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.app._app is None  # nothing built at import
    from fastapi.testclient import TestClient

    with TestClient(module.app) as http:
        assert http.get("/health").json()["status"] == "healthy"
        tools = rpc(http, "tools/list")["result"]["tools"]
    assert tools == openai_as_mcp(mb_env.unwrapped.tools)
    with pytest.raises(SystemExit) as shown:
        module.main(["--help"])
    assert shown.value.code == 0 and "mobility-env serve" in capsys.readouterr().out


# ---------------------------------------------------------------------------------------------- MCPToolClient
def test_mcp_tool_client_plays_a_mobilitybench_episode_as_in_process(mb_server: RunningServer,
                                                                     mb_env: gym.Env) -> None:
    episode_id = mb_env.unwrapped.episode_ids[0]
    _, first = mb_env.reset(seed=3, options={"episode_id": episode_id})
    calls = mobilitybench_calls(mb_env)
    bad_args = {"name": calls[0]["name"], "arguments": {"no_such_argument": 1}}
    expected = [in_process(mb_env, call) for call in [calls[0], UNKNOWN_TOOL, bad_args, *calls[1:]]]
    assert expected[-1][2] is True and "metrics" in expected[-1][4]  # finish ended it

    with MCPToolClient(base_url=mb_server.base_url).sync() as client:
        assert listed(client.list_tools()) == openai_as_mcp(first["tools"])  # before a reset: the same tools
        client.reset(seed=3, episode_id=episode_id)
        assert client.call_tool(calls[0]["name"], **calls[0]["arguments"]) == expected[0][0]  # call_tool: the text
        with pytest.raises(RuntimeError) as unknown:
            client.call_tool(UNKNOWN_TOOL["name"], **UNKNOWN_TOOL["arguments"])
        assert "tool_not_found" in str(unknown.value) and "teleport" in str(unknown.value)
        refused = client.step(CallToolAction(tool_name=bad_args["name"], arguments=bad_args["arguments"]))
        assert refused.observation.error.error_type == ToolErrorType.INVALID_ARGS
        assert refused.observation.result["is_error"] is True
        rest = [over_mcp(client.step(CallToolAction(tool_name=c["name"], arguments=c["arguments"])))
                for c in calls[1:]]
        state = client.state()
    assert [over_mcp(refused), *rest] == expected[2:]  # the refused calls were steps, as in process
    assert state.step_count == len(expected)
    assert rest[-1][1] == expected[-1][1] and rest[-1][4]["metrics"] == expected[-1][4]["metrics"]


def test_mcp_tool_client_plays_a_mobilepa_task_and_its_tools_grow(pa_server: RunningServer, pa_env: gym.Env) -> None:
    _, first = pa_env.reset(seed=1, options={"task_id": SKILL_TASK})
    calls = mobilepa_calls(pa_env, SKILL_TASK)
    assert calls[0]["name"] == "load_skill"
    expected = [in_process(pa_env, call) for call in calls]
    grown = expected[0][4]["tools"]
    assert len(grown) > len(first["tools"])

    with MCPToolClient(base_url=pa_server.base_url).sync() as client:
        client.reset(seed=1, episode_id=SKILL_TASK)
        assert listed(client.list_tools(use_cache=False)) == openai_as_mcp(first["tools"])  # the task's own tools
        got = [over_mcp(client.step(CallToolAction(tool_name=calls[0]["name"], arguments=calls[0]["arguments"])))]
        assert listed(client.list_tools(use_cache=False)) == openai_as_mcp(grown)  # the skill's tools are offered
        got += [over_mcp(client.step(CallToolAction(tool_name=c["name"], arguments=c["arguments"])))
                for c in calls[1:]]
        with pytest.raises(RuntimeError) as over:  # finish was a tool: the episode is over
            client.call_tool("finish", answer="again")
        assert "EPISODE_OVER" in str(over.value)
    assert got == expected
    assert expected[-1][2] is True and expected[-1][4]["metrics"]["success"] == 1.0


def test_mcp_tool_client_in_production_mode_uses_http_mcp(pa_server: RunningServer) -> None:
    """``use_production_mode``: JSON-RPC on ``POST /mcp``; its ``openenv/session/create`` opens a reset session."""
    client = MCPToolClient(base_url=pa_server.base_url)
    client.use_production_mode = True
    with client.sync() as sync:
        names = {tool.name for tool in sync.list_tools()}
        assert {"ask_user", "finish"} <= names and len(names) > 2  # a task's tools: the session was reset
        feedback = json.loads(sync.call_tool("ask_user", question="哪一个?"))
        assert feedback["status"] == "success"
        with pytest.raises(RuntimeError) as unknown:
            sync.call_tool("teleport")
        assert "unknown tool 'teleport'" in str(unknown.value)


# ---------------------------------------------------------------------------------------------- JSON-RPC surfaces
def test_http_mcp_sessions_step_the_env_as_in_process(pa_server: RunningServer, pa_env: gym.Env) -> None:
    task_id = pa_env.unwrapped.task_ids[5]
    _, first = pa_env.reset(seed=2, options={"task_id": task_id})
    calls = mobilepa_calls(pa_env, task_id)
    expected = [in_process(pa_env, call) for call in [UNKNOWN_TOOL, *calls]]
    with httpx.Client(base_url=pa_server.base_url) as http:
        created = rpc(http, "openenv/session/create", {"seed": 2, "episode_id": task_id})["result"]
        session_id = created["session_id"]
        assert created["observation"]["info"] == wire(first)
        assert rpc(http, "tools/list", {"session_id": session_id})["result"]["tools"] == openai_as_mcp(first["tools"])
        unknown = rpc(http, "tools/call", {"session_id": session_id, **UNKNOWN_TOOL}, request_id="u-1")
        assert unknown["id"] == "u-1" and unknown["error"]["code"] == -32602
        assert unknown["error"]["data"]["code"] == "TOOL_NOT_FOUND"
        got = [unknown["error"]["data"]["result"]]
        got += [rpc(http, "tools/call", {"session_id": session_id, **call})["result"] for call in calls]
        over = rpc(http, "tools/call", {"session_id": session_id, "name": "finish", "arguments": {"answer": "x"}})
        again = rpc(http, "openenv/session/reset", {"session_id": session_id, "seed": 2, "episode_id": task_id})
        http_state = http.get("/state", params={"session_id": session_id}).json()  # one table of HTTP sessions
        closed = rpc(http, "openenv/session/close", {"session_id": session_id})
        gone = rpc(http, "tools/list", {"session_id": session_id})
    assert [(r["data"], r["structured_content"]["reward"], r["structured_content"]["terminated"],
             r["structured_content"]["truncated"], r["structured_content"]["info"]) for r in got] == expected
    assert over["error"]["data"]["code"] == "EPISODE_OVER" and over["error"]["code"] == -32000
    assert again["result"]["observation"]["info"] == wire(first) and http_state["step_count"] == 0
    assert closed["result"] == {"session_id": session_id, "closed": True}
    assert gone["error"]["data"]["code"] == "UNKNOWN_SESSION"


def test_mcp_websocket_and_ws_mcp_messages_are_sessions(mb_server: RunningServer, mb_env: gym.Env) -> None:
    episode_id = mb_env.unwrapped.episode_ids[1]
    mb_env.reset(seed=0, options={"episode_id": episode_id})
    call = mobilitybench_calls(mb_env)[0]
    expected = in_process(mb_env, call)
    base = mb_server.base_url.replace("http://", "ws://")
    with ws_connect(base + "/mcp") as ws:
        def ask(request: Any) -> dict[str, Any]:
            ws.send(request if isinstance(request, str) else json.dumps(request))
            return json.loads(ws.recv())

        assert ask("{nope")["error"]["data"]["code"] == "INVALID_JSON"  # the connection goes on
        session_id = ask({"jsonrpc": "2.0", "method": "openenv/session/create", "id": 1})["result"]["session_id"]
        reset = ask({"jsonrpc": "2.0", "method": "openenv/session/reset", "id": 2,
                     "params": {"seed": 0, "episode_id": episode_id}})
        assert reset["result"]["session_id"] == session_id
        result = ask({"jsonrpc": "2.0", "method": "tools/call", "id": 3, "params": call})["result"]
        own = ask({"jsonrpc": "2.0", "method": "openenv/session/close", "id": 4, "params": {"session_id": session_id}})
    assert (result["data"], result["structured_content"]["info"]) == (expected[0], expected[4])
    assert own["error"]["code"] == -32600 and own["id"] == 4

    with ws_connect(base + "/ws") as ws:
        ws.send(json.dumps({"type": "reset", "data": {"seed": 0, "episode_id": episode_id}}))
        assert json.loads(ws.recv())["type"] == "observation"
        ws.send(json.dumps({"type": "mcp", "data": {"jsonrpc": "2.0", "method": "tools/call", "id": 9,
                                                    "params": call}}))
        reply = json.loads(ws.recv())
        ws.send(json.dumps({"type": "state"}))
        state = json.loads(ws.recv())["data"]
    assert reply["type"] == "mcp" and reply["data"]["id"] == 9
    assert reply["data"]["result"]["data"] == expected[0] and state["step_count"] == 1


def test_bad_mcp_input_gets_typed_json_rpc_errors(mb_server: RunningServer) -> None:
    with httpx.Client(base_url=mb_server.base_url) as http:
        before = http.get("/sessions").json()["active_sessions"]
        session_id = rpc(http, "openenv/session/create", {"seed": 0})["result"]["session_id"]

        def raw(body: bytes) -> httpx.Response:
            return http.post("/mcp", content=body, headers={"content-type": "application/json"})

        def request(method: str, params: Any = None, **extra: Any) -> httpx.Response:
            return http.post("/mcp", json={"jsonrpc": "2.0", "method": method, "id": 1,
                                           **({} if params is None else {"params": params}), **extra})

        cases = {
            "not json": raw(b"{bad"),
            "not utf-8": raw(b"\xff\xfe{"),
            "deep": raw(b"[" * DEEP + b"]" * DEEP),
            "deep arguments": raw(b'{"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "finish", '
                                  b'"arguments": ' + b"[" * DEEP + b"]" * DEEP + b"}}"),
            "batch": http.post("/mcp", json=[{"jsonrpc": "2.0", "method": "tools/list"}]),
            "no version": http.post("/mcp", json={"method": "tools/list"}),
            "huge id": request("tools/list", id="i" * 100_000),
            "params not an object": request("tools/list", [1]),
            "extra member": request("tools/list", {}, extra=1),
            "unknown method": request("tools/teleport", {}),
            "call without a session": request("tools/call", {"name": "finish"}),
            "unknown session": request("tools/call", {"session_id": "nope", "name": "finish"}),
            "name not a string": request("tools/call", {"session_id": session_id, "name": 5}),
            "arguments not an object": request("tools/call", {"session_id": session_id, "name": "finish",
                                                              "arguments": "x" * 100_000}),
            "unknown param": request("tools/list", {"sesion_id": session_id}),
            "bad seed": request("openenv/session/create", {"seed": "1"}),
            "unknown episode": request("openenv/session/create", {"episode_id": "no-such-episode"}),
            "close without id": request("openenv/session/close", {}),
            "too large": raw(b"x" * 2_000_000),
        }
        after = http.get("/sessions").json()["active_sessions"]
    expected = {"not json": (-32700, "INVALID_JSON"), "not utf-8": (-32700, "INVALID_JSON"),
                "deep": (-32700, "TOO_DEEP"), "deep arguments": (-32700, "TOO_DEEP"),
                "batch": (-32600, "INVALID_REQUEST"), "no version": (-32600, "INVALID_REQUEST"),
                "huge id": (-32600, "INVALID_REQUEST"), "params not an object": (-32600, "INVALID_REQUEST"),
                "extra member": (-32600, "INVALID_REQUEST"), "unknown method": (-32601, "UNKNOWN_METHOD"),
                "call without a session": (-32602, "VALIDATION_ERROR"), "unknown session": (-32602, "UNKNOWN_SESSION"),
                "name not a string": (-32602, "VALIDATION_ERROR"),
                "arguments not an object": (-32602, "VALIDATION_ERROR"), "unknown param": (-32602, "VALIDATION_ERROR"),
                "bad seed": (-32602, "VALIDATION_ERROR"), "unknown episode": (-32602, "VALIDATION_ERROR"),
                "close without id": (-32602, "VALIDATION_ERROR")}
    too_large = cases.pop("too large")
    assert too_large.status_code == 413 and too_large.json()["error"]["code"] == "TOO_LARGE"
    assert all(reply.status_code == 200 and len(reply.content) < 5_000 for reply in cases.values())  # never echoed
    got = {name: (reply.json()["error"]["code"], reply.json()["error"]["data"]["code"])
           for name, reply in cases.items()}
    assert got == expected
    assert "Traceback" not in "".join(reply.text for reply in cases.values())
    assert "sesion_id" in cases["unknown param"].json()["error"]["message"]
    assert "unknown episode_id 'no-such-episode'" in cases["unknown episode"].json()["error"]["message"]
    assert after == before + 1  # the refused creates kept no session


def test_an_env_that_raises_is_an_execution_error_over_mcp(mb_server: RunningServer) -> None:
    sessions = mb_server.app.state.server._sessions
    with httpx.Client(base_url=mb_server.base_url) as http:
        session_id = rpc(http, "openenv/session/create", {"seed": 0})["result"]["session_id"]

        def broken(action: Any) -> Any:
            raise ZeroDivisionError("injected fault")

        sessions[session_id].env.step = broken
        failed = rpc(http, "tools/call", {"session_id": session_id, "name": "finish"})
        assert failed["error"]["code"] == -32603 and failed["error"]["data"]["code"] == "EXECUTION_ERROR"
        assert "ZeroDivisionError: injected fault" in failed["error"]["message"]
        assert rpc(http, "tools/list", {"session_id": session_id})["result"]["tools"]  # the session goes on
        rpc(http, "openenv/session/close", {"session_id": session_id})


# ---------------------------------------------------------------------------------------------- discovery
def test_auto_env_connects_to_a_running_server_without_discovery(mb_server: RunningServer, mb_env: gym.Env) -> None:
    """AutoEnv finds installed ``openenv-*`` distributions only (this one is ``mobility-env``); given the server's
    URL and ``skip_install`` it returns openenv-core's GenericEnvClient, which plays the env as in process."""
    episode_id = mb_env.unwrapped.episode_ids[2]
    first = mb_env.reset(seed=4, options={"episode_id": episode_id})
    call = mobilitybench_calls(mb_env)[0]
    expected = in_process(mb_env, call)
    client = AutoEnv.from_env("mobility", base_url=mb_server.base_url, skip_install=True)
    with client.sync() as env:
        reset = env.reset(seed=4, episode_id=episode_id)
        step = env.step({"tool_call": call})
    assert (reset.observation["text"], reset.observation["info"]) == (first[0], wire(first[1]))
    assert (step.observation["text"], step.reward, step.observation["info"]) == (expected[0], expected[1], expected[4])


# ---------------------------------------------------------------------------------------------- openenv validate
def test_openenv_validate_passes_on_the_environment(validate_run: subprocess.Popen[str]) -> None:
    out, err = validate_run.communicate(timeout=180)
    assert validate_run.returncode == 0, out + err
    report = json.loads(out)
    assert report["passed"] is True and report["issues"] == []
    assert report["deployment_modes"] == {"docker": True, "openenv_serve": True, "uv_run": True,
                                          "python_module": True}
