"""``mobility-env serve`` end to end: the real server on 127.0.0.1, openenv-core's client.

Episodes played through the server (openenv-core ``EnvClient`` over the WebSocket, and the HTTP
session routes) must equal the same episodes played in process with ``gymnasium.make``: the same
observation text, rewards, ``terminated``/``truncated`` and info (compared as JSON, which is what
the wire carries). Then sessions: eight interleaved sessions that do not disturb each other, the
session limit, the idle timeout, and hostile input that gets an error reply and leaves the
server (and, where the protocol allows, the session) working.
"""

from __future__ import annotations

import asyncio
import json
import signal
import socket
import struct
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import gymnasium as gym
import pytest

pytest.importorskip("openenv", reason="the serve extra (openenv-core) is not installed")

import httpx  # noqa: E402
from openenv.cli._validation import validate_running_environment  # noqa: E402
from websockets.exceptions import ConnectionClosed  # noqa: E402
from websockets.sync.client import connect as ws_connect  # noqa: E402

import mobility_env  # noqa: E402,F401  (registers the envs)
from mobility_agents.adapters.openenv.serve import (MobilityAction, MobilityEnvClient, RunningServer,  # noqa: E402
                                                    ServeConfig, ServerError)
from mobility_agents.targets import MOBILEPA, MOBILITYBENCH  # noqa: E402
from mobility_env.cli import main as cli_main  # noqa: E402
from mobility_env.runfiles import json_text  # noqa: E402
from mobility_rewards.mobilitybench.reference import reference_finish  # noqa: E402

NOT_JSON = "please look up the weather"
DEEP = 100_000  # nesting levels: far past the JSON parser's recursion limit (~1,000), inside --max-message-bytes
UNKNOWN_TOOL = {"name": "teleport", "arguments": {"to": "Beijing"}}


@dataclass
class Plan:
    """One episode to play: how to reset and the actions, computed in process from the gold."""

    seed: int
    episode_id: str | None
    actions: list[Any]


def unwrapped(env: gym.Env) -> Any:
    """The env under gymnasium's wrappers (its episodes, tasks and ids)."""
    return env.unwrapped


def wire(value: Any) -> Any:
    """``value`` as the server sends it (JSON)."""
    return json.loads(json_text(value))


def mobilitybench_actions(env: gym.Env) -> list[Any]:
    """The oracle's calls and finish, with three bad actions the env must answer as observations."""
    episode = unwrapped(env).episode
    calls = [{"name": c.name, "arguments": dict(c.arguments)} for c in episode.gold_calls]
    finish = reference_finish(episode)
    done = {"name": "finish", "arguments": {"answer": finish.answer, "intent": finish.intent, "slots": finish.slots,
                                            "plan": finish.plan, "route_index": finish.route_index}}
    return [NOT_JSON, *calls[:1], UNKNOWN_TOOL, *calls[1:], json.dumps({"name": "finish", "arguments": {}}), done]


def mobilepa_actions(env: gym.Env, task_id: str) -> list[Any]:
    task = unwrapped(env).tasks[task_id]
    return [UNKNOWN_TOOL, *({"name": c.name, "arguments": dict(c.arguments)} for c in task.oracle_calls),
            {"name": "finish", "arguments": {"answer": task.oracle_answer}}]


def play_in_process(env: gym.Env, plan: Plan) -> list[tuple[Any, ...]]:
    """[(text, info)] for the reset, then (text, reward, terminated, truncated, info) per step, as JSON."""
    options = None if plan.episode_id is None else {"episode_id": plan.episode_id}
    text, info = env.reset(seed=plan.seed, options=options)
    record: list[tuple[Any, ...]] = [(text, wire(info))]
    for action in plan.actions:
        text, reward, terminated, truncated, info = env.step(action)
        record.append((text, float(reward), terminated, truncated, wire(info)))
        if terminated or truncated:
            break
    return record


def remote_record(result: Any, first: bool = False) -> tuple[Any, ...]:
    obs = result.observation
    if first:
        assert result.reward is None and result.done is False
        return obs.text, obs.info
    assert result.done == (obs.terminated or obs.truncated)
    return obs.text, result.reward, obs.terminated, obs.truncated, obs.info


def play_remote(client: Any, plan: Plan) -> list[tuple[Any, ...]]:
    kwargs = {} if plan.episode_id is None else {"episode_id": plan.episode_id}
    record = [remote_record(client.reset(seed=plan.seed, **kwargs), first=True)]
    for action in plan.actions:
        record.append(remote_record(client.step(action)))
        if record[-1][2] or record[-1][3]:
            break
    return record


def mobilitybench_plans(env: gym.Env, count: int, *, by_seed: int = 0) -> list[Plan]:
    """``count`` episodes by id, then ``by_seed`` picked by the seed alone (the server must pick the same)."""
    plans = []
    for index, episode_id in enumerate(unwrapped(env).episode_ids[:count]):
        env.reset(options={"episode_id": episode_id})
        plans.append(Plan(seed=index, episode_id=episode_id, actions=mobilitybench_actions(env)))
    for seed in range(100, 100 + by_seed):
        env.reset(seed=seed)
        plans.append(Plan(seed=seed, episode_id=None, actions=mobilitybench_actions(env)))
    return plans


@pytest.fixture(scope="module")
def mb_env(built_dir: Path) -> gym.Env:
    return gym.make(MOBILITYBENCH, data=str(built_dir))


@pytest.fixture(scope="module")
def pa_env() -> gym.Env:
    return gym.make(MOBILEPA)


@pytest.fixture(scope="module")
def mb_server(built_dir: Path) -> Iterator[RunningServer]:
    with RunningServer(ServeConfig(data=str(built_dir), port=0, max_sessions=16)) as server:
        yield server


@pytest.fixture(scope="module")
def pa_server() -> Iterator[RunningServer]:
    with RunningServer(ServeConfig(env_id=MOBILEPA, port=0, max_sessions=4)) as server:
        yield server


def wait_for(condition: Any, timeout_s: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


def active_sessions(server: RunningServer) -> int:
    return httpx.get(f"{server.base_url}/sessions").json()["active_sessions"]


# ---------------------------------------------------------------------------------------------- parity
def test_mobilitybench_episodes_through_the_server_equal_in_process(mb_server: RunningServer, mb_env: gym.Env) -> None:
    plans = mobilitybench_plans(mb_env, 20, by_seed=4)
    plans.append(Plan(seed=7, episode_id=plans[0].episode_id, actions=[UNKNOWN_TOOL] * 10))  # truncated at 10
    expected = [play_in_process(mb_env, plan) for plan in plans]
    with MobilityEnvClient(base_url=mb_server.base_url).sync() as client:  # one session, many episodes
        got = [play_remote(client, plan) for plan in plans]
    assert got == expected
    ends = [record[-1] for record in expected]
    assert all("metrics" in end[4] and "verdict" in end[4] for end in ends)
    assert ends[-1][3] is True and ends[-1][4]["metrics"]["DR"] == 0.0  # the truncated one
    assert sum(end[4]["metrics"]["FPR"] for end in ends[:-1]) > 0  # some oracle episodes pass: rewards differ
    assert {step[4].get("error", {}).get("type") for record in expected for step in record[1:]} >= \
        {"invalid_json", "unknown_tool", "schema_error"}


def test_mobilepa_tasks_through_the_server_equal_in_process(pa_server: RunningServer, pa_env: gym.Env) -> None:
    task_ids = unwrapped(pa_env).task_ids[:12]
    plans = [Plan(seed=i, episode_id=task_id, actions=mobilepa_actions(pa_env, task_id))
             for i, task_id in enumerate(task_ids)]
    expected = [play_in_process(pa_env, plan) for plan in plans]
    with MobilityEnvClient(base_url=pa_server.base_url).sync() as client:
        got = [play_remote(client, plan) for plan in plans]
        by_seed = client.reset(seed=5)  # no task named: the seed picks it, as in process
        state = client.state()
    assert by_seed.observation.info == wire(pa_env.reset(seed=5)[1])
    assert got == expected
    assert all(record[-1][2] for record in expected)  # every oracle plan finishes
    assert sum(record[-1][4]["metrics"].get("success", 0) for record in expected) >= len(expected) - 1
    assert state.env_id == MOBILEPA and state.step_count == 0 and not state.done


def test_eight_interleaved_sessions_do_not_interfere(mb_server: RunningServer, mb_env: gym.Env) -> None:
    plans = mobilitybench_plans(mb_env, 8)
    expected = [play_in_process(mb_env, plan) for plan in plans]

    async def interleaved() -> tuple[list[list[tuple[Any, ...]]], int]:
        clients = [MobilityEnvClient(base_url=mb_server.base_url) for _ in plans]
        try:
            firsts = await asyncio.gather(*(client.reset(seed=plan.seed, episode_id=plan.episode_id)
                                            for client, plan in zip(clients, plans)))
            records = [[remote_record(first, first=True)] for first in firsts]
            open_now = await asyncio.to_thread(active_sessions, mb_server)
            done = [False] * len(plans)
            for index in range(max(len(plan.actions) for plan in plans)):  # one step of every live session at once
                live = [i for i, plan in enumerate(plans) if not done[i] and index < len(plan.actions)]
                results = await asyncio.gather(*(clients[i].step(plans[i].actions[index]) for i in live))
                for i, result in zip(live, results):
                    records[i].append(remote_record(result))
                    done[i] = result.done
            return records, open_now
        finally:
            await asyncio.gather(*(client.close() for client in clients))

    got, open_now = asyncio.run(interleaved())
    assert got == expected
    assert open_now >= 8
    assert len({record[0][1]["episode_id"] for record in got}) == 8


def test_http_sessions_play_the_same_episode(mb_server: RunningServer, mb_env: gym.Env) -> None:
    plan = mobilitybench_plans(mb_env, 1)[0]
    expected = play_in_process(mb_env, plan)
    with httpx.Client(base_url=mb_server.base_url) as http:
        first = http.post("/reset", json={"seed": plan.seed, "episode_id": plan.episode_id}).json()
        session_id = first["session_id"]
        got: list[tuple[Any, ...]] = [(first["observation"]["text"], first["observation"]["info"])]
        for action in plan.actions:
            reply = http.post("/step", json={"session_id": session_id, "action": {"tool_call": action}}).json()
            obs = reply["observation"]
            got.append((obs["text"], reply["reward"], obs["terminated"], obs["truncated"], obs["info"]))
            if reply["done"]:
                break
        state = http.get("/state", params={"session_id": session_id}).json()
        again = http.post("/step", json={"session_id": session_id, "action": {"tool_call": UNKNOWN_TOOL}})
        closed = http.delete(f"/sessions/{session_id}")
        gone = http.get("/state", params={"session_id": session_id})
    assert got == expected
    assert state["episode_id"] == plan.episode_id and state["done"] is True and state["step_count"] == len(got) - 1
    assert state["total_reward"] == pytest.approx(sum(step[1] for step in expected[1:]))
    assert again.status_code == 409 and again.json()["error"]["code"] == "EPISODE_OVER"
    assert closed.status_code == 200 and gone.status_code == 404
    assert gone.json()["error"]["code"] == "UNKNOWN_SESSION"


def test_openenv_runtime_validator_accepts_the_server(mb_server: RunningServer) -> None:
    report = validate_running_environment(mb_server.base_url)
    assert report["passed"], [c for c in report["criteria"] if not c["passed"]]
    assert report["mode"] == "simulation"
    schema = httpx.get(f"{mb_server.base_url}/schema").json()
    assert "tool_call" in schema["action"]["properties"] and "text" in schema["observation"]["properties"]
    assert httpx.get(f"{mb_server.base_url}/metadata").json()["name"] == MOBILITYBENCH


# ---------------------------------------------------------------------------------------------- sessions
def test_session_limit_refuses_one_more_and_frees_on_close(built_dir: Path) -> None:
    with RunningServer(ServeConfig(data=str(built_dir), port=0, max_sessions=2)) as server:
        first = MobilityEnvClient(base_url=server.base_url).sync()
        second = MobilityEnvClient(base_url=server.base_url).sync()
        third = MobilityEnvClient(base_url=server.base_url).sync()
        try:
            first.reset(seed=0)
            second.reset(seed=1)
            with pytest.raises(ServerError) as refused:
                third.reset(seed=2)
            assert refused.value.code == "CAPACITY_REACHED" and refused.value.details["max_sessions"] == 2
            assert "2/2 sessions" in str(refused.value)
            http = httpx.post(f"{server.base_url}/reset", json={})
            assert http.status_code == 503 and http.json()["error"]["code"] == "CAPACITY_REACHED"
            first.close()
            assert wait_for(lambda: active_sessions(server) == 1)
            assert third.reset(seed=2).observation.info["episode_id"]  # the freed slot is taken
            assert active_sessions(server) == 2
        finally:
            for client in (first, second, third):
                client.close()


def test_idle_sessions_are_closed_and_active_ones_kept(built_dir: Path) -> None:
    with RunningServer(ServeConfig(data=str(built_dir), port=0, idle_timeout_s=1.0)) as server:
        idle = MobilityEnvClient(base_url=server.base_url).sync()
        busy = MobilityEnvClient(base_url=server.base_url).sync()
        try:
            idle.reset(seed=0)
            busy.reset(seed=0)
            session_id = httpx.post(f"{server.base_url}/reset", json={"seed": 0}).json()["session_id"]
            assert active_sessions(server) == 3
            for _ in range(8):  # 2 s of a step every 0.25 s: never idle for 1 s (0.75 s to spare on a busy machine)
                time.sleep(0.25)
                assert busy.step(UNKNOWN_TOOL).observation.info["error"]["type"] == "unknown_tool"
            with pytest.raises(ServerError) as closed:
                idle.step(UNKNOWN_TOOL)
            assert closed.value.code == "SESSION_CLOSED" and "idle" in str(closed.value)
            http = httpx.post(f"{server.base_url}/step",
                              json={"session_id": session_id, "action": {"tool_call": UNKNOWN_TOOL}})
            assert http.status_code == 404 and http.json()["error"]["code"] == "UNKNOWN_SESSION"
            assert active_sessions(server) == 1
            assert idle.reset(seed=0).observation.info["episode_id"]  # a new connection, a new session
        finally:
            idle.close()
            busy.close()


# ---------------------------------------------------------------------------------------------- hanging peers
def test_hanging_peers_do_not_block_other_sessions(built_dir: Path, mb_env: gym.Env) -> None:
    """A connection that never speaks, a half-sent HTTP request, and a session that floods requests but reads no
    reply (its socket's receive buffer is tiny, so the server's replies back up): another client plays a whole
    episode meanwhile, the flooding session is closed by the idle reaper, and its slot is taken again."""
    plan = mobilitybench_plans(mb_env, 1)[0]
    expected = play_in_process(mb_env, plan)
    flood = 2000  # resets; each reply carries the tool list (~6 kB): ~12 MB, far more than the buffers hold
    with RunningServer(ServeConfig(data=str(built_dir), port=0, max_sessions=2, idle_timeout_s=1.0)) as server:
        ws_url = server.base_url.replace("http://", "ws://") + "/ws"
        half_http = socket.create_connection((server.host, server.port))
        half_http.sendall(b"POST /reset HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{\"se")
        raw = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # set before connecting: the window stays small
        raw.connect((server.host, server.port))
        with ws_connect(ws_url), ws_connect(ws_url, sock=raw, max_queue=1, max_size=None) as stalled:
            stalled.send(json.dumps({"type": "reset", "data": {"seed": 0}}))
            assert wait_for(lambda: active_sessions(server) == 1)
            for _ in range(flood):
                stalled.send(json.dumps({"type": "reset", "data": {"seed": 0}}))
            with MobilityEnvClient(base_url=server.base_url).sync() as client:
                assert play_remote(client, plan) == expected
            assert wait_for(lambda: active_sessions(server) == 0, timeout_s=15)  # the flooder was reaped
            with MobilityEnvClient(base_url=server.base_url).sync() as one, \
                    MobilityEnvClient(base_url=server.base_url).sync() as two:  # both slots are free
                assert one.reset(seed=1).observation.info["episode_id"] == two.reset(seed=1).observation.info[
                    "episode_id"]
            replies = 0
            with pytest.raises(ConnectionClosed):
                while True:
                    reply = json.loads(stalled.recv(timeout=30))
                    assert reply["type"] == "observation"
                    replies += 1
            assert replies < flood  # the server stopped answering it when it was reaped
        half_http.close()
        assert httpx.get(f"{server.base_url}/health").json()["status"] == "healthy"


def test_a_peer_that_vanishes_frees_its_session(built_dir: Path, mb_env: gym.Env) -> None:
    """A client killed mid-episode (its TCP connection reset, no close frame) gives its slot back with no idle
    timeout to wait for, and the session beside it plays on unchanged."""
    plans = mobilitybench_plans(mb_env, 2)
    expected = play_in_process(mb_env, plans[1])
    with RunningServer(ServeConfig(data=str(built_dir), port=0, max_sessions=2, idle_timeout_s=0)) as server:
        ws_url = server.base_url.replace("http://", "ws://") + "/ws"
        with MobilityEnvClient(base_url=server.base_url).sync() as client:
            first = remote_record(client.reset(seed=plans[1].seed, episode_id=plans[1].episode_id), first=True)
            with ws_connect(ws_url) as doomed:
                doomed.send(json.dumps({"type": "reset", "data": {"episode_id": plans[0].episode_id}}))
                assert json.loads(doomed.recv())["type"] == "observation"
                doomed.send(json.dumps({"type": "step", "data": {"tool_call": plans[0].actions[1]}}))
                assert active_sessions(server) == 2
                doomed.socket.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                doomed.socket.close()  # SO_LINGER 0: a reset, as when the process is killed
                assert wait_for(lambda: active_sessions(server) == 1, timeout_s=10)
            rest = [remote_record(client.step(action)) for action in plans[1].actions[:len(expected) - 1]]
            assert [first, *rest] == expected
            with MobilityEnvClient(base_url=server.base_url).sync() as other:  # the freed slot is usable
                assert other.reset(seed=0).observation.info["episode_id"]


# ---------------------------------------------------------------------------------------------- bad input
def test_bad_websocket_input_gets_error_replies_and_the_session_survives(mb_server: RunningServer,
                                                                         mb_env: gym.Env) -> None:
    ws_url = mb_server.base_url.replace("http://", "ws://") + "/ws"
    plan = mobilitybench_plans(mb_env, 1)[0]
    nested: Any = "Beijing"
    for _ in range(300):  # parses, but nests far deeper than the env allows an action: an observation says so
        nested = {"city": nested}
    bad_actions = ["\ud800", "x" * 500_000, {"name": "weather_query", "arguments": nested}]
    in_process = play_in_process(mb_env, Plan(plan.seed, plan.episode_id, bad_actions))

    with ws_connect(ws_url, max_size=None) as ws:
        def ask(message: Any) -> dict[str, Any]:
            ws.send(message if isinstance(message, (str, bytes)) else json.dumps(message))
            reply = ws.recv()
            assert len(reply) < 20_000  # an error never echoes what was sent
            return json.loads(reply)

        def error_code(message: Any) -> str:
            reply = ask(message)
            assert reply["type"] == "error", reply
            assert reply["data"]["message"]
            return reply["data"]["code"]

        assert error_code("{not json") == "INVALID_JSON"
        assert error_code(b"\xff\xfe{") == "INVALID_JSON"
        assert error_code("[1, 2]") == "VALIDATION_ERROR"
        assert error_code({"type": "jump"}) == "UNKNOWN_TYPE"
        assert error_code({"type": "step", "data": {"tool_call": UNKNOWN_TOOL}}) == "NO_EPISODE"
        assert error_code({"type": "step", "data": {"tool_call": 5}}) == "VALIDATION_ERROR"
        assert error_code({"type": "step", "data": "text"}) == "VALIDATION_ERROR"
        assert error_code({"type": "reset", "data": {"seed": "7"}}) == "VALIDATION_ERROR"
        assert error_code({"type": "reset", "data": {"seed": -1}}) == "VALIDATION_ERROR"
        assert error_code({"type": "reset", "data": {"seed": True}}) == "VALIDATION_ERROR"
        assert error_code({"type": "reset", "data": {"episode_id": "no-such-episode"}}) == "VALIDATION_ERROR"
        assert error_code({"type": "reset", "data": {"options": {"episode_index": "x"}}}) == "VALIDATION_ERROR"
        huge_key = {"type": "reset", "data": {"\ud800" + "k" * 300_000: "\ud800" * 100_000}}
        assert error_code(huge_key) == "VALIDATION_ERROR"  # a lone-surrogate, megabyte-sized field: named, not echoed
        assert error_code('{"type": "step", "data": {"tool_call": ' + "[" * DEEP + "]" * DEEP + "}}") == "TOO_DEEP"
        assert error_code('{"type": "reset", "data": {"options": ' + '{"a": ' * DEEP + "1" + "}" * DEEP + "}}") == \
            "TOO_DEEP"
        assert error_code('{"type": "reset", "data": {"seed": 1e400}}') == "VALIDATION_ERROR"  # inf
        assert error_code('{"type": "reset", "data": {"seed": ' + "9" * 5000 + "}}") == "INVALID_JSON"  # 5,000 digits

        reset = ask({"type": "reset", "data": {"seed": plan.seed, "episode_id": plan.episode_id}})
        assert (reset["data"]["observation"]["text"], reset["data"]["observation"]["info"]) == in_process[0]
        assert len(in_process) == 1 + len(bad_actions)
        for action, expected in zip(bad_actions, in_process[1:]):  # bad actions are observations
            obs = ask({"type": "step", "data": {"tool_call": action}})["data"]
            assert (obs["observation"]["text"], obs["reward"], obs["observation"]["info"]) == \
                (expected[0], expected[1], expected[4])
            assert obs["observation"]["info"]["error"]["type"]
        assert error_code({"type": "step", "data": {"tool_call": UNKNOWN_TOOL, "extra": 1}}) == "VALIDATION_ERROR"
        assert error_code('{"type": "step", "data": ' + "[" * DEEP + "]" * DEEP + "}") == "TOO_DEEP"
        assert ask({"type": "state"})["data"]["step_count"] == len(bad_actions)

        ws.send(json.dumps({"type": "step", "data": {"tool_call": "y" * 2_000_000}}))  # over --max-message-bytes
        with pytest.raises(ConnectionClosed) as too_big:
            ws.recv()
        assert too_big.value.rcvd is not None and too_big.value.rcvd.code == 1009
    assert httpx.get(f"{mb_server.base_url}/health").json()["status"] == "healthy"
    with MobilityEnvClient(base_url=mb_server.base_url).sync() as client:  # the server serves on
        assert client.reset(seed=0).observation.info["episode_id"]
        with pytest.raises(ServerError) as refused:  # the client names the 1009 close
            client.step("z" * 2_000_000)
        assert refused.value.code == "TOO_LARGE"
        assert client.reset(seed=0).observation.info["episode_id"]  # and the next call opens a new session


def test_an_env_that_raises_is_an_execution_error_and_the_server_goes_on(built_dir: Path, mb_env: gym.Env) -> None:
    """A bug in a session's env (injected: its step raises) is answered EXECUTION_ERROR on both transports."""
    with RunningServer(ServeConfig(data=str(built_dir), port=0, max_sessions=4)) as server:
        sessions = server.app.state.server._sessions

        def broken(action: Any) -> Any:
            raise ZeroDivisionError("injected fault")

        with httpx.Client(base_url=server.base_url) as http, \
                MobilityEnvClient(base_url=server.base_url).sync() as client:
            session_id = http.post("/reset", json={"seed": 0}).json()["session_id"]
            sessions[session_id].env.step = broken
            reply = http.post("/step", json={"session_id": session_id, "action": {"tool_call": UNKNOWN_TOOL}})
            assert reply.status_code == 500 and reply.json()["error"]["code"] == "EXECUTION_ERROR"
            assert "ZeroDivisionError: injected fault" in reply.json()["error"]["message"]

            client.reset(seed=0)
            (ws_session,) = set(sessions) - {session_id}
            sessions[ws_session].env.step = broken
            with pytest.raises(ServerError) as failed:
                client.step(UNKNOWN_TOOL)
            assert failed.value.code == "EXECUTION_ERROR"
            assert client.state().step_count == 0  # the session is still there
            plan = mobilitybench_plans(mb_env, 1)[0]
            with MobilityEnvClient(base_url=server.base_url).sync() as healthy:
                assert play_remote(healthy, plan) == play_in_process(mb_env, plan)


def test_step_after_the_end_is_an_error_and_reset_starts_again(pa_server: RunningServer, pa_env: gym.Env) -> None:
    task_id = unwrapped(pa_env).task_ids[0]
    with MobilityEnvClient(base_url=pa_server.base_url).sync() as client:
        client.reset(episode_id=task_id)
        end = client.step(MobilityAction(tool_call={"name": "finish", "arguments": {"answer": "好的"}}))
        assert end.done and end.observation.terminated and "metrics" in end.observation.info
        with pytest.raises(ServerError) as over:
            client.step({"name": "finish", "arguments": {"answer": "好的"}})
        assert over.value.code == "EPISODE_OVER" and task_id in str(over.value)
        with pytest.raises(ServerError) as conflict:
            client.reset(episode_id=task_id, options={"task_id": unwrapped(pa_env).task_ids[1]})
        assert conflict.value.code == "VALIDATION_ERROR" and "different episodes" in str(conflict.value)
        assert client.reset(episode_id=task_id).observation.info["task_id"] == task_id


def test_bad_http_input_gets_clear_errors(mb_server: RunningServer) -> None:
    with httpx.Client(base_url=mb_server.base_url) as http:
        before = http.get("/sessions").json()["active_sessions"]
        cases = {
            "malformed": http.post("/step", content=b"{bad", headers={"content-type": "application/json"}),
            "wrong type": http.post("/reset", json={"seed": "1"}),
            "unknown key": http.post("/reset", json={"sead": 1}),
            "no session": http.post("/step", json={"action": {"tool_call": "x"}}),
            "unknown session": http.post("/step", json={"session_id": "nope", "action": {"tool_call": "x"}}),
            "state of nothing": http.get("/state", params={"session_id": "nope"}),
            "too large": http.post("/reset", content=b"x" * 2_000_000),
            "surrogate": http.post("/reset", content=b'{"episode_id": "\\ud800"}',
                                   headers={"content-type": "application/json"}),
            "unknown episode": http.post("/reset", json={"episode_id": "no-such-episode"}),
            "deep": http.post("/reset", content=b'{"options": ' + b"[" * DEEP + b"]" * DEEP + b"}",
                              headers={"content-type": "application/json"}),
            "huge number": http.post("/reset", content=b'{"seed": ' + b"9" * 5000 + b"}",
                                     headers={"content-type": "application/json"}),
            "no such path": http.get("/teleport"),
            "wrong method": http.put("/step"),
        }
    expected = {"malformed": (400, "INVALID_JSON"), "wrong type": (422, "VALIDATION_ERROR"),
                "unknown key": (422, "VALIDATION_ERROR"), "no session": (422, "VALIDATION_ERROR"),
                "unknown session": (404, "UNKNOWN_SESSION"), "state of nothing": (404, "UNKNOWN_SESSION"),
                "too large": (413, "TOO_LARGE"), "surrogate": (422, "VALIDATION_ERROR"),
                "unknown episode": (422, "VALIDATION_ERROR"), "deep": (400, "TOO_DEEP"),
                "huge number": (400, "INVALID_JSON"), "no such path": (404, "NOT_FOUND"),
                "wrong method": (405, "METHOD_NOT_ALLOWED")}
    got = {name: (reply.status_code, reply.json()["error"]["code"]) for name, reply in cases.items()}
    assert got == expected
    assert "seed" in cases["wrong type"].json()["error"]["message"]
    assert "session_id" in cases["no session"].json()["error"]["message"]
    assert "episode_id" in cases["surrogate"].json()["error"]["message"]  # FastAPI's JSON parser refuses it
    assert "unknown episode_id 'no-such-episode'" in cases["unknown episode"].json()["error"]["message"]
    assert active_sessions(mb_server) == before  # a refused first reset keeps no session


# ---------------------------------------------------------------------------------------------- CLI
def test_cli_refuses_a_remote_host_without_the_flag(capsys: pytest.CaptureFixture[str], built_dir: Path) -> None:
    assert cli_main(["serve", "--host", "0.0.0.0", "--port", "0"]) == 2
    assert "--allow-remote" in capsys.readouterr().err
    for bad in (["--idle-timeout", "-1"], ["--idle-timeout", "nan"], ["--max-sessions", "0"], ["--port", "70000"],
                ["--max-message-bytes", "10"]):
        with pytest.raises(SystemExit):
            cli_main(["serve", *bad])
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        assert cli_main(["serve", "--data", str(built_dir), "--port", str(port)]) == 2
    assert "in use" in capsys.readouterr().err


@pytest.fixture(scope="module", autouse=True)
def cli_server() -> Iterator[subprocess.Popen[str]]:
    """``mobility-env serve`` in a subprocess, started first: its imports (openenv-core pulls in gradio, several
    seconds) overlap the other tests; ``test_cli_serves_until_interrupted`` uses it last."""
    process = subprocess.Popen([sys.executable, "-m", "mobility_env.cli", "serve", "--env", MOBILEPA, "--port", "0",
                                "--max-sessions", "3", "--idle-timeout", "60"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    yield process
    if process.poll() is None:
        process.kill()
        process.communicate()


def test_cli_serves_until_interrupted(cli_server: subprocess.Popen[str]) -> None:
    banner = cli_server.stdout.readline() if cli_server.stdout else ""
    assert "at most 3 sessions" in banner and "after 60 s" in banner, banner
    base_url = banner.split(" on ", 1)[1].split(" ", 1)[0]
    assert base_url.startswith("http://127.0.0.1:")
    with MobilityEnvClient(base_url=base_url).sync() as client:
        assert client.reset(seed=3).observation.info["task_id"]
    cli_server.send_signal(signal.SIGINT)
    _, err = cli_server.communicate(timeout=30)
    assert cli_server.returncode == 0 and "stopped" in err
