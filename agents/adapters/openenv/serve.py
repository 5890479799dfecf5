"""``mobility-env serve``: either registered env as an OpenEnv server, and its client.

    mobility-env serve --env MobilityBench-v0 [--data PATH] [--port 8000] [--max-sessions 32] [--idle-timeout 300]

The server (:mod:`mobility_agents.adapters.openenv.server`) opens the episodes or tasks once and gives each
session its own env on them (``mobility_agents.targets.make_env``, the options ``mobility-env
run`` uses). It speaks OpenEnv (openenv-core >= 0.3): a WebSocket ``/ws`` where one connection is
one session (``reset``/``step``/``state`` messages), HTTP ``POST /reset`` / ``POST /step`` /
``GET /state`` with a ``session_id``, and ``/health``, ``/metadata``, ``/schema``. A reset takes
``seed``, ``options`` and ``episode_id`` (the episode or MobilePA task to play), so a client picks
episodes as ``env.reset(seed=..., options=...)`` does in process; the same seed and actions give
the same observations, rewards and infos.

Limits: at most ``--max-sessions`` sessions at once (default 32; another is refused with
``CAPACITY_REACHED``); a session without a message for ``--idle-timeout`` seconds (default 300)
is closed and its slot freed. A connection has ``--request-timeout`` seconds (default 10) to send
a whole request, or a WebSocket its first message, and is closed otherwise; at most
``--max-connections`` (default 512) are open, ``--max-connections-per-client`` (128) from one
address, and one over a cap closes the oldest one still waiting for its request, or is answered
503 ``CAPACITY_REACHED`` when every one is busy (:mod:`mobility_agents.adapters.openenv.connections`);
a WebSocket message or HTTP body over ``--max-message-bytes`` (default
1 MiB) is refused (HTTP 413; the WebSocket is closed with code 1009). Every other bad request is
answered with a typed error and the session goes on (codes in :mod:`mobility_agents.adapters.openenv.server`).
The server binds 127.0.0.1 and has no authentication: another host needs ``--allow-remote`` (and
prints a warning). One process serves every session on one event loop: steps are CPU-bound
Python, so throughput is that of one core (``benchmarks/bench_serve.py``).

MCP: the env's tools (its OpenAI tool schemas, ``finish`` included) are MCP tools, one ``tools/call`` one
step: openenv-core's ``MCPToolClient(base_url=...)`` lists and calls them over ``/ws``, and ``POST /mcp`` and
the ``/mcp`` WebSocket answer MCP JSON-RPC (:mod:`mobility_agents.adapters.openenv.mcp`,
:mod:`mobility_agents.adapters.openenv.rpc`).

The client (:mod:`mobility_agents.adapters.openenv.client`): ``MobilityEnvClient(base_url=...)`` is an
openenv-core ``EnvClient`` (async; ``.sync()`` for blocking calls). Both are importable from here
(``from mobility_agents.adapters.openenv.serve import MobilityEnvClient``); nothing of openenv-core is imported
until one is used.

OpenEnv's layout (``openenv validate``, ``openenv build``): the repository's folder ``openenv-env/`` is an OpenEnv
environment (``openenv.yaml``, ``server/app.py``, ``server/Dockerfile``, its project and lock); :func:`main` is its
``server`` console script and :class:`LazyApp` the ASGI app ``server.app:app``.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, Awaitable, Callable, Dict, Optional, Sequence

from mobility_env.errors import ConfigError
from mobility_env.suites import suite_of

from .config import (DEFAULT_HOST, DEFAULT_IDLE_TIMEOUT_S, DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_CONNECTIONS_PER_CLIENT,
                     DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_MAX_SESSIONS, DEFAULT_PORT, DEFAULT_REQUEST_TIMEOUT_S,
                     ServeConfig, is_loopback)
from ...targets import ENV_IDS, MOBILITYBENCH

_CLIENT_NAMES = ("MobilityAction", "MobilityEnvClient", "MobilityObservation", "MobilityState", "ServerError")
_SERVER_NAMES = ("MobilityEnvServer", "MobilityEnvironment", "RunningServer", "create_app")
__all__ = ["LazyApp", "ServeConfig", "main", "register", *_CLIENT_NAMES, *_SERVER_NAMES]

MISSING_EXTRA = "mobility-env serve needs openenv-core: pip install 'mobility-env[serve]'"


def __getattr__(name: str) -> Any:
    """The client and server classes, imported when first named (they need openenv-core)."""
    if name in _CLIENT_NAMES:
        from . import client

        return getattr(client, name)
    if name in _SERVER_NAMES:
        from . import server

        return getattr(server, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main(argv: Optional[Sequence[str]] = None) -> int:
    """The ``server`` console script (OpenEnv's entry point, ``uv run server``): ``mobility-env serve`` with
    ``argv`` (default: the command line's), its options, limits and exit status."""
    from mobility_env.cli import main as cli_main

    return cli_main(["serve", *(sys.argv[1:] if argv is None else argv)])


class LazyApp:
    """An ASGI app serving ``config`` (default ``ServeConfig()``: MobilityBench-v0 on its bundled data), built
    at its first event (uvicorn's lifespan start-up), so importing it opens no data.

    For ``uvicorn server.app:app`` (``openenv.yaml``'s ``app``). It has the session limits but not the connection
    limits (request deadline, connection caps) that ``RunningServer`` adds: ``mobility-env serve`` / ``server``
    has both.
    """

    def __init__(self, config: Optional[ServeConfig] = None):
        self.config = config
        self._app: Any = None

    async def __call__(self, scope: Dict[str, Any], receive: Callable[[], Awaitable[Dict[str, Any]]],
                       send: Callable[[Dict[str, Any]], Awaitable[None]]) -> None:
        if self._app is None:
            from .server import create_app

            self._app = create_app(self.config or ServeConfig())
        await self._app(scope, receive, send)


def _cmd_serve(args: argparse.Namespace) -> int:
    from ...commands import env_options

    config = ServeConfig(env_id=args.env, data=args.data, env_kwargs=env_options(args), host=args.host,
                         port=args.port, max_sessions=args.max_sessions, idle_timeout_s=args.idle_timeout,
                         max_message_bytes=args.max_message_bytes, request_timeout_s=args.request_timeout,
                         max_connections=args.max_connections,
                         max_connections_per_client=args.max_connections_per_client, allow_remote=args.allow_remote)
    try:
        from .server import RunningServer
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.split(".")[0] in ("openenv", "fastapi", "uvicorn", "websockets"):
            raise ConfigError(f"{MISSING_EXTRA} (missing module {exc.name!r})") from None
        raise
    server = RunningServer(config)
    store = server.app.state.server.store
    count = len(getattr(store, "ids", ()))
    if not is_loopback(config.host):
        print(f"mobility-env serve: WARNING: serving on {config.host}, not the loopback: anyone who can reach port "
              f"{server.port} can open sessions (there is no authentication)", file=sys.stderr)
    timeout = f"{config.idle_timeout_s:g} s" if config.idle_timeout else "never"
    ws_url = server.base_url.replace("http://", "ws://", 1)
    print(f"mobility-env serve: {config.env_id} ({count} {suite_of(config.env_id).unit}) "
          f"on {server.base_url} (WebSocket {ws_url}/ws); at most {config.max_sessions} sessions, idle ones closed "
          f"after {timeout}; Ctrl-C stops", flush=True)
    try:
        server.run()
    except KeyboardInterrupt:
        pass
    print("mobility-env serve: stopped", file=sys.stderr)
    return 0


def _non_negative_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more: {text}")
    return value


def _positive_float(text: str) -> float:
    value = _non_negative_float(text)
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number: {text}")
    return value


def _port(text: str) -> int:
    if not text.isdigit() or int(text) > 65535:
        raise argparse.ArgumentTypeError(f"not a port number (0..65535): {text!r}")
    return int(text)


def _at_least(minimum: int) -> Any:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}: {value}")
        return value
    return parse


def register(subparsers: argparse._SubParsersAction) -> None:
    serve = subparsers.add_parser(
        "serve", help="serve an env over HTTP/WebSocket for OpenEnv clients (TRL and other trainers)",
        description="Serve MobilityBench-v0 or MobilePA-v0 as an OpenEnv environment server (openenv-core): "
                    "WebSocket /ws (one connection = one session = one env; messages reset/step/state/close) and "
                    "HTTP POST /reset (opens a session and returns its session_id), POST /step, GET /state "
                    "(?session_id=), GET /sessions, DELETE /sessions/ID, GET /health, /metadata, /schema. The data "
                    "is opened once; every session gets its own env on it. reset takes seed, options and "
                    "episode_id (an episode or task id) like env.reset in process. Client: "
                    "mobility_agents.adapters.openenv.serve.MobilityEnvClient(base_url=...).",
        epilog="Sessions: at most --max-sessions at once (one more is refused with CAPACITY_REACHED); a session "
               "with no message for --idle-timeout seconds is closed and its slot freed (a WebSocket is closed with "
               "code 4408 and the reason). Connections: one has --request-timeout seconds to send a whole request "
               "(a WebSocket its first message) or is closed; at most --max-connections are open, "
               "--max-connections-per-client from one address, and one over a cap closes the oldest connection still "
               "waiting for its request (idle or half sent), or gets 503 CAPACITY_REACHED when all are busy. "
               "Bad requests get typed errors ({\"type\": \"error\", \"data\": {\"code\", "
               "\"message\"}} on the WebSocket, {\"error\": {...}} and a 4xx status over HTTP) and the session goes "
               "on; a WebSocket message over --max-message-bytes closes its connection (code 1009). Exit status: 0 "
               "stopped by Ctrl-C/SIGTERM; 2 bad options, data or a port in use. Needs the serve extra: pip install "
               "'mobility-env[serve]'.")
    serve.add_argument("--env", choices=ENV_IDS, default=MOBILITYBENCH,
                       help=f"the environment (default {MOBILITYBENCH})")
    serve.add_argument("--data", help="built directory or official CSV/XLSX/JSONL; for MobilePA-v0 a task directory "
                                      "or tasks.jsonl (default: the env's bundled set)")
    serve.add_argument("--host", default=DEFAULT_HOST,
                       help=f"address to bind (default {DEFAULT_HOST}; another than the loopback needs --allow-remote)")
    serve.add_argument("--allow-remote", action="store_true",
                       help="allow --host other than the loopback (the server has no authentication; a warning is "
                            "printed)")
    serve.add_argument("--port", type=_port, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0: a free one)")
    serve.add_argument("--max-sessions", type=_at_least(1), default=DEFAULT_MAX_SESSIONS,
                       help=f"sessions open at once, WebSocket and HTTP together (default {DEFAULT_MAX_SESSIONS})")
    serve.add_argument("--idle-timeout", type=_non_negative_float, default=DEFAULT_IDLE_TIMEOUT_S, metavar="S",
                       help=f"close a session after S seconds without a message (default {DEFAULT_IDLE_TIMEOUT_S:g}; "
                            "0: never)")
    serve.add_argument("--max-message-bytes", type=_at_least(1024), default=DEFAULT_MAX_MESSAGE_BYTES,
                       help=f"largest WebSocket message or HTTP body accepted (default {DEFAULT_MAX_MESSAGE_BYTES:,})")
    serve.add_argument("--request-timeout", type=_positive_float, default=DEFAULT_REQUEST_TIMEOUT_S, metavar="S",
                       help="seconds a connection has to send a whole request, or a WebSocket its first message, "
                            f"before it is closed (default {DEFAULT_REQUEST_TIMEOUT_S:g})")
    serve.add_argument("--max-connections", type=_at_least(1), default=DEFAULT_MAX_CONNECTIONS,
                       help=f"connections open at once (default {DEFAULT_MAX_CONNECTIONS}; keep it under the "
                            "process's open-file limit, ulimit -n)")
    serve.add_argument("--max-connections-per-client", type=_at_least(1), default=DEFAULT_MAX_CONNECTIONS_PER_CLIENT,
                       help=f"connections open at once from one address (default {DEFAULT_MAX_CONNECTIONS_PER_CLIENT})")
    serve.add_argument("--max-steps", type=_at_least(1),
                       help="actions per episode (default: MobilityBench-v0 10, the paper's; MobilePA-v0 12)")
    serve.add_argument("--obs-format", choices=("compact", "raw"),
                       help="observation format of MobilityBench-v0 (default compact)")
    serve.add_argument("--maps-data",
                       help="MobilePA-v0: the built MobilityBench directory its maps & travel tools replay (default "
                            "the bundled set)")
    serve.set_defaults(func=_cmd_serve)
