"""``mobility-env serve`` under connections that hang: request deadlines and the connection caps.

A connection that sends nothing, half its headers or half its body is closed after the request
timeout; a connection over a cap closes the oldest one still waiting for its request, or is refused
``503 CAPACITY_REACHED`` when each is busy; and a server limited to 1,024 open files keeps answering
``/health`` and ``/reset`` with 2,000 idle and half-sent connections open against it (before the
guard it answered nothing: its descriptors ran out).
"""

from __future__ import annotations

import contextlib
import resource
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

import pytest

pytest.importorskip("openenv", reason="the serve extra (openenv-core) is not installed")

import httpx  # noqa: E402
from websockets.exceptions import ConnectionClosed  # noqa: E402
from websockets.sync.client import connect as ws_connect  # noqa: E402

from mobility_agents.adapters.openenv.serve import RunningServer, ServeConfig  # noqa: E402
from mobility_agents.targets import MOBILEPA  # noqa: E402
from mobility_env.cli import main as cli_main  # noqa: E402
from mobility_env.errors import ConfigError  # noqa: E402

HALF_HEADERS = b"GET /health HTTP/1.1\r\nHost: x\r\n"
HALF_BODY = (b"POST /reset HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
             b'{"seed"')


def connect(server_url: str) -> socket.socket:
    host, port = server_url.removeprefix("http://").split(":")
    return socket.create_connection((host, int(port)), timeout=10)


def closed_by_server(sock: socket.socket, within_s: float) -> bool:
    """True when the server closes ``sock`` (EOF, or a reset) within ``within_s`` seconds."""
    sock.settimeout(within_s)
    try:
        while sock.recv(4096):
            pass
        return True
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False


def open_connections(server: RunningServer) -> dict[str, int]:
    return httpx.get(f"{server.base_url}/sessions", timeout=10).json()["connections"]


@pytest.fixture(scope="module")
def quick_server() -> Iterator[RunningServer]:
    """A server whose requests must arrive within 0.5 s, with a per-client cap of 4."""
    with RunningServer(ServeConfig(env_id=MOBILEPA, port=0, request_timeout_s=0.5,
                                   max_connections_per_client=4)) as server:
        yield server


def test_connections_that_hang_are_closed_after_the_request_timeout(quick_server: RunningServer) -> None:
    silent, half_headers, half_body = (connect(quick_server.base_url) for _ in range(3))
    half_headers.sendall(HALF_HEADERS)
    half_body.sendall(HALF_BODY)
    started = time.monotonic()
    for sock in (silent, half_headers, half_body):
        assert closed_by_server(sock, within_s=10), "a hanging connection was kept"
        sock.close()
    assert time.monotonic() - started >= 0.4  # closed by the deadline, not at once
    assert open_connections(quick_server)["timed_out"] >= 3


def test_a_slow_trickle_does_not_extend_the_deadline(quick_server: RunningServer) -> None:
    """The deadline counts from the connection's opening, not from its last byte (slowloris)."""
    sock = connect(quick_server.base_url)
    started = time.monotonic()
    sock.settimeout(0.1)
    closed = False
    for byte in HALF_HEADERS * 3:
        try:
            sock.sendall(bytes([byte]))
            if sock.recv(1) == b"":
                closed = True
                break
        except socket.timeout:
            continue
        except (BrokenPipeError, ConnectionResetError):
            closed = True
            break
    assert closed, "a connection sending one byte every 0.1 s was kept past the request timeout"
    assert time.monotonic() - started < 10
    sock.close()


def test_over_the_per_client_cap_the_oldest_waiting_connection_makes_room(quick_server: RunningServer) -> None:
    """Five idle connections from one address under a cap of four: the oldest is closed, requests are answered."""
    before = open_connections(quick_server)["evicted"]
    idle = [connect(quick_server.base_url) for _ in range(5)]
    assert closed_by_server(idle[0], within_s=0.3)  # closed to make room, long before the 0.5 s deadline
    with httpx.Client(timeout=10) as client:  # one more connection: makes room again, and is answered
        assert client.get(f"{quick_server.base_url}/health").status_code == 200
    assert open_connections(quick_server)["evicted"] - before >= 2
    for sock in idle:
        sock.close()


def test_when_every_connection_is_busy_a_new_one_is_refused_with_a_typed_error() -> None:
    """WebSockets are never closed to make room: with the cap taken by two, a request gets 503 CAPACITY_REACHED."""
    with RunningServer(ServeConfig(env_id=MOBILEPA, port=0, max_connections=2)) as server:
        ws_url = server.base_url.replace("http://", "ws://") + "/ws"
        with ws_connect(ws_url, open_timeout=10), contextlib.ExitStack() as second:
            second.enter_context(ws_connect(ws_url, open_timeout=10))
            reply = httpx.get(f"{server.base_url}/health", timeout=10)
            assert reply.status_code == 503
            assert reply.json()["error"]["code"] == "CAPACITY_REACHED"
            assert "--max-connections" in reply.json()["error"]["message"]
            second.close()
            assert httpx.get(f"{server.base_url}/health", timeout=10).status_code == 200  # a slot is free again


def test_a_websocket_that_sends_no_first_message_is_closed_after_the_request_timeout(
        quick_server: RunningServer) -> None:
    with ws_connect(quick_server.base_url.replace("http://", "ws://") + "/ws", open_timeout=10) as ws:
        started = time.monotonic()
        with pytest.raises(ConnectionClosed):  # the server's close ends the wait for a message
            ws.recv(timeout=10)
        assert time.monotonic() - started < 9


def test_bad_connection_limits_are_refused() -> None:
    for bad in ({"request_timeout_s": 0}, {"request_timeout_s": float("nan")}, {"request_timeout_s": float("inf")},
                {"max_connections": 0}, {"max_connections_per_client": True}, {"max_connections": 1.5}):
        with pytest.raises(ConfigError):
            ServeConfig(env_id=MOBILEPA, **bad)  # type: ignore[arg-type]
    for bad_args in (["--request-timeout", "0"], ["--request-timeout", "inf"], ["--max-connections", "0"],
                     ["--max-connections-per-client", "x"]):
        with pytest.raises(SystemExit):
            cli_main(["serve", *bad_args])


def _limit_open_files() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))


def test_a_server_limited_to_1024_files_answers_under_2000_hanging_connections(tmp_path: Path) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 2_300  # this process holds the 2,000 sockets
    if hard != resource.RLIM_INFINITY and hard < wanted:
        pytest.skip(f"this process may open at most {hard} files; the test holds {wanted}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, wanted), hard))
    server = subprocess.Popen([sys.executable, "-m", "mobility_env.cli", "serve", "--env", MOBILEPA, "--port", "0"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              preexec_fn=_limit_open_files)
    held: list[socket.socket] = []
    try:
        banner = server.stdout.readline() if server.stdout else ""
        assert " on http://" in banner, (banner, server.stderr.read() if server.stderr else "")
        base_url = banner.split(" on ", 1)[1].split(" ", 1)[0]
        for index in range(2_000):
            sock = connect(base_url)
            if index % 3 == 1:
                sock.sendall(HALF_HEADERS)
            elif index % 3 == 2:
                sock.sendall(HALF_BODY)
            held.append(sock)
        with httpx.Client(timeout=15) as client:
            assert client.get(f"{base_url}/health").status_code == 200
            assert client.post(f"{base_url}/reset", json={"seed": 1}).status_code == 200
            counts = client.get(f"{base_url}/sessions").json()["connections"]
        assert counts["open"] <= 128 + 1 and counts["evicted"] >= 2_000 - 128
    finally:
        for sock in held:
            sock.close()
        server.kill()
        server.communicate()
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
