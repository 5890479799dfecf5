"""The OpenEnv server of ``mobility-env serve``: one store, one env per session, sessions bounded and reaped.

Built on openenv-core: :class:`~mobility_agents.adapters.openenv.environment.MobilityEnvironment` is its ``Environment``
(reset/step/state on one gymnasium env, and its tools as MCP tools; :mod:`mobility_agents.adapters.openenv.environment`
also holds the request bodies and :class:`~mobility_agents.adapters.openenv.environment.RequestError`),
:class:`MobilityEnvServer` its ``HTTPEnvServer`` (the session table, the capacity check, the idle reaper,
``/health``, ``/metadata``, ``/schema``). The server replaces six routes of the base, keeping their wire format
(``WSResetMessage`` ... ``WSErrorResponse``, openenv-core's MCP JSON-RPC, so openenv-core's ``EnvClient`` and
``MCPToolClient`` talk to it unchanged):

* ``/ws`` — one WebSocket is one session. The base handler keeps stepping an env the idle reaper
  has closed, echoes the raw input in its validation errors (a megabyte string comes back; a lone
  surrogate makes the error itself unserializable and ends the session) and answers a session
  limit before the client asked anything. Here the session starts with the first message (the
  limit error is the answer to it), errors name the field and never echo its value, and a session
  the reaper closes gets its socket closed with the reason (code 4408). A ``step`` also takes openenv-core's
  MCP actions (``{"type": "list_tools"}``, ``{"type": "call_tool", "tool_name", "arguments"}``: what
  ``MCPToolClient`` sends), and an ``{"type": "mcp", "data": <JSON-RPC>}`` message is answered
  ``{"type": "mcp", "data": <JSON-RPC reply>}`` (:mod:`~mobility_agents.adapters.openenv.rpc`);
* ``POST /reset``, ``POST /step``, ``GET /state`` — the base makes a fresh env per request, which
  cannot step an episode. Here HTTP has sessions too: ``/reset`` without ``session_id`` opens one
  and returns its id, ``/step`` and ``/state`` name it, ``DELETE /sessions/{id}`` closes it,
  ``GET /sessions`` lists them;
* ``POST /mcp`` and the ``/mcp`` WebSocket — the base answers "Environment does not support MCP" (it
  looks for a FastMCP server on the env). Here both answer MCP JSON-RPC on the env's own tools
  (:mod:`~mobility_agents.adapters.openenv.rpc`): over HTTP with the HTTP sessions' ids, and a ``/mcp``
  WebSocket is one session, opened, limited and reaped as a ``/ws`` one. JSON-RPC refusals are error
  replies (HTTP 200) whose ``data`` carries the typed error below.

Errors are ``{"type": "error", "data": {"code", "message", ...}}`` on the WebSocket (the session
stays usable, except after ``CAPACITY_REACHED`` and ``SESSION_CLOSED``) and
``{"error": {"code", "message"}}`` with a 4xx status over HTTP. Codes: ``INVALID_JSON``,
``UNKNOWN_TYPE``, ``VALIDATION_ERROR``, ``CAPACITY_REACHED``, ``FACTORY_ERROR``,
``EXECUTION_ERROR`` (OpenEnv's) and ``NO_EPISODE`` (step before reset), ``EPISODE_OVER`` (step
after the end), ``UNKNOWN_SESSION``, ``SESSION_CLOSED``, ``TOO_LARGE``, ``TOO_DEEP`` (JSON nested
deeper than the parser's recursion limit, about 1,000 levels), and over HTTP ``NOT_FOUND``,
``METHOD_NOT_ALLOWED``, ``BAD_REQUEST`` (FastAPI's own refusals, in the same shape; ``detail`` kept).
A WebSocket message over ``--max-message-bytes`` is not read: the connection is closed with code
1009 (the client raises ``TOO_LARGE``).

Peers that hang or vanish: a connection that does not send a whole request, or a WebSocket its first
message, within the request timeout is closed, and open connections are capped
(:mod:`~mobility_agents.adapters.openenv.connections`); a session whose peer stops sending is closed by the idle reaper,
which never waits on the peer (a peer that also stops reading gets its close frame from a
background task, given up after :data:`CLOSE_WAIT_S`); a peer that drops the connection frees its
session at once. Each session's replies wait only on its own socket, so none of these delays
another session.

Env calls run on the event loop thread: a step is ~0.1-2 ms of CPU-bound Python, which threads
would not run in parallel (the GIL) and a thread hop per step would only slow down.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import socket
import threading
import time
from typing import Any, Awaitable, Callable, Dict, Optional

import uvicorn
from fastapi import Body, FastAPI, Query, Request, WebSocket, WebSocketDisconnect
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.websockets import WebSocketState
from openenv.core.env_server.exceptions import EnvironmentFactoryError, SessionCapacityError
from openenv.core.env_server.http_server import HTTPEnvServer
from openenv.core.env_server.mcp_types import CallToolAction, ListToolsAction, WSMCPMessage
from openenv.core.env_server.serialization import serialize_observation
from openenv.core.env_server.types import ConcurrencyConfig, ServerMode, WSResetMessage, WSStepMessage
from pydantic import ValidationError

from mobility_env.runfiles import json_text

from .client import MobilityAction, MobilityObservation
from .config import ServeConfig
from .connections import ConnectionGuard
from .environment import (MobilityEnvironment, RequestError, ResetBody, ResetParams, StepBody,  # noqa: F401
                          shorten, observation_payload, reply_text, validation_error)
from .rpc import McpRpc, rpc_error
from ...targets import open_store

__all__ = ["MobilityEnvServer", "MobilityEnvironment", "RequestError", "RunningServer", "create_app"]

log = logging.getLogger(__name__)

IDLE_CLOSE_CODE = 4408  # WebSocket close code of a session the idle timeout ended ("408 Request Timeout")
#: Seconds a server-side close waits for a peer that does not read before it is given up.
CLOSE_WAIT_S = 5.0
HTTP_STATUS = {"INVALID_JSON": 400, "VALIDATION_ERROR": 422, "UNKNOWN_TYPE": 400, "NO_EPISODE": 409,
               "EPISODE_OVER": 409, "UNKNOWN_SESSION": 404, "SESSION_CLOSED": 410, "CAPACITY_REACHED": 503,
               "FACTORY_ERROR": 500, "EXECUTION_ERROR": 500, "TOO_LARGE": 413, "TOO_DEEP": 400,
               "BAD_REQUEST": 400, "NOT_FOUND": 404, "METHOD_NOT_ALLOWED": 405}
#: FastAPI's HTTPException statuses, as codes (the rest are BAD_REQUEST, or EXECUTION_ERROR from 500 up).
STATUS_CODES = {404: "NOT_FOUND", 405: "METHOD_NOT_ALLOWED", 413: "TOO_LARGE", 422: "VALIDATION_ERROR"}
TOO_DEEP_MESSAGE = "is nested too deeply for the JSON parser (about 1,000 levels at most; actions allow far fewer)"


class MobilityEnvServer(HTTPEnvServer):
    """openenv-core's ``HTTPEnvServer`` serving one :class:`~mobility_agents.adapters.openenv.config.ServeConfig` (see
    above)."""

    def __init__(self, config: ServeConfig, store: Any = None):
        self.config = config
        self.store = store if store is not None else open_store(config.env_id, config.data)
        factory = functools.partial(MobilityEnvironment, self.store, config.env_id, config.options)
        probe = factory()  # a bad env option fails here, at start-up, not in every session
        self.initial_tools = probe.list_tools()  # tools/list without a session: what a new session offers
        probe.close()
        super().__init__(factory, MobilityAction, MobilityObservation,
                         concurrency_config=ConcurrencyConfig(max_concurrent_envs=config.max_sessions,
                                                              session_timeout=config.idle_timeout))
        self._sockets: Dict[str, WebSocket] = {}
        self._http_sessions: set[str] = set()
        self._closing: set[asyncio.Future[None]] = set()  # background closes (kept referenced until done)
        self.rpc = McpRpc(self)

    # ------------------------------------------------------------------ sessions
    async def open_session(self) -> tuple[str, MobilityEnvironment]:
        try:
            session_id, env = await self._create_session()
        except SessionCapacityError as exc:
            raise RequestError("CAPACITY_REACHED", f"the server holds {exc.active_sessions}/{exc.max_sessions} "
                                                   "sessions (--max-sessions); close one, or wait for idle ones to "
                                                   f"time out ({self._timeout_text()})",
                               active_sessions=exc.active_sessions, max_sessions=exc.max_sessions) from None
        except EnvironmentFactoryError as exc:
            log.exception("making the env of a new session failed")
            raise RequestError("FACTORY_ERROR", f"could not make the session's env: {exc.__cause__}") from None
        return session_id, env

    async def open_http_session(self, params: ResetParams) -> tuple[str, MobilityObservation]:
        """Open an HTTP session and reset it (``POST /reset`` without ``session_id``, ``openenv/session/create``);
        a refused reset closes it again."""
        session_id, env = await self.open_session()
        self._http_sessions.add(session_id)
        try:
            observation = env.reset_with(params)
        except RequestError:
            await self.close_session(session_id, "its first reset was refused")
            raise
        return session_id, observation

    async def close_session(self, session_id: str, reason: str) -> None:
        env = self._sessions.get(session_id)
        if isinstance(env, MobilityEnvironment):
            env.close(reason)
        self._http_sessions.discard(session_id)
        websocket = self._sockets.pop(session_id, None)
        await self._destroy_session(session_id)
        if websocket is not None:  # in the background: a peer that does not read must not hold up the caller
            task = asyncio.ensure_future(self._close_socket(websocket, IDLE_CLOSE_CODE, reason[:120], CLOSE_WAIT_S))
            self._closing.add(task)
            task.add_done_callback(self._closing.discard)

    def _timeout_text(self) -> str:
        timeout = self._session_idle_timeout_s
        return "never" if timeout is None else f"after {timeout:g} s"

    async def _reap_idle_sessions(self) -> None:
        """Close sessions idle longer than the timeout (the base checks every 5 s at best; here a quarter of it)."""
        timeout = self._session_idle_timeout_s
        if timeout is None:
            return
        interval = min(max(timeout / 4, 0.05), 5.0)
        while True:
            await asyncio.sleep(interval)
            for session_id, info in list(self._session_info.items()):
                if time.time() - info.last_activity_at > timeout:  # checked again now: no await since
                    try:
                        await self.close_session(session_id, f"idle for more than {timeout:g} s (--idle-timeout)")
                    except Exception:  # a close that fails must not stop the reaper; the slot is freed anyway
                        log.exception("closing idle session %s failed", session_id)

    def _env_of(self, session_id: str) -> MobilityEnvironment:
        env = self._sessions.get(session_id) if session_id in self._http_sessions else None
        if not isinstance(env, MobilityEnvironment):
            raise RequestError("UNKNOWN_SESSION", f"no HTTP session {shorten(session_id)!r}: it was closed, timed out "
                                                  f"({self._timeout_text()} idle), or never existed; POST /reset "
                                                  "without session_id opens one")
        self._update_session_activity(session_id)
        return env

    # ------------------------------------------------------------------ WebSocket
    async def handle_message(self, session_id: str, env: MobilityEnvironment,
                             raw: str) -> tuple[Dict[str, Any], bool]:
        """The reply to one ``/ws`` message and whether to close the connection after it."""
        self._update_session_activity(session_id)
        try:
            try:
                message = json.loads(raw)
            except ValueError as exc:
                raise RequestError("INVALID_JSON", f"the message is not JSON: {exc}") from None
            except RecursionError:
                raise RequestError("TOO_DEEP", f"the message {TOO_DEEP_MESSAGE}") from None
            kind = message.get("type") if isinstance(message, dict) else None
            if kind == "step":
                step = WSStepMessage.model_validate(message)
                mcp_kind = step.data.get("type")
                try:
                    if mcp_kind == "list_tools":  # openenv-core's MCP actions (MCPToolClient), not a step
                        tools = env.step(ListToolsAction.model_validate(step.data))
                        return {"type": "observation", "data": serialize_observation(tools)}, False
                    if mcp_kind == "call_tool":
                        answer = env.step(CallToolAction.model_validate(step.data))
                        self._update_session_activity(session_id, increment_step=True)
                        return {"type": "observation", "data": serialize_observation(answer)}, False
                    action = MobilityAction.model_validate(step.data)
                except ValidationError as exc:
                    raise validation_error(exc, "action") from None
                observation = env.step(action)
                self._update_session_activity(session_id, increment_step=True)
                return {"type": "observation", "data": observation_payload(observation)}, False
            if kind == "reset":
                data = WSResetMessage.model_validate(message).data
                try:
                    params = ResetParams.model_validate(data)
                except ValidationError as exc:
                    raise validation_error(exc, "reset parameters") from None
                observation = env.reset_with(params)
                return {"type": "observation", "data": observation_payload(observation)}, False
            if kind == "state":
                return {"type": "state", "data": env.state.model_dump()}, False
            if kind == "close":
                return {}, True
            if kind == "mcp":
                request = WSMCPMessage.model_validate(message)
                return {"type": "mcp", "data": await self.rpc.answer(request.data, (session_id, env))}, False
            if not isinstance(message, dict):
                raise RequestError("VALIDATION_ERROR", 'a message is a JSON object {"type": "reset" | "step" | '
                                                       '"state" | "close" | "mcp", "data": {...}}')
            raise RequestError("UNKNOWN_TYPE", f"unknown message type {shorten(kind)!r}; the types are reset, step, "
                                               "state, mcp and close")
        except ValidationError as exc:
            error = validation_error(exc, "message")
        except RequestError as exc:
            error = exc
        except RecursionError:  # a parsed message deep enough to exhaust a validator's or the env's recursion
            error = RequestError("TOO_DEEP", f"the message {TOO_DEEP_MESSAGE}")
        except Exception as exc:  # a bug in the env: answer it, keep the server and the session
            log.exception("session %s: unexpected error", session_id)
            error = RequestError("EXECUTION_ERROR", f"{type(exc).__name__}: {exc}")
        return {"type": "error", "data": error.data()}, error.code == "SESSION_CLOSED"

    @staticmethod
    async def _receive(websocket: WebSocket) -> str:
        """The next message as text (a binary frame is decoded as UTF-8, as a text frame would be)."""
        message = await websocket.receive()
        if message["type"] == "websocket.disconnect":
            raise WebSocketDisconnect(message.get("code", 1000))
        if message.get("text") is not None:
            return message["text"]
        return (message.get("bytes") or b"").decode("utf-8", "surrogateescape")

    async def websocket_session(self, websocket: WebSocket) -> None:
        """``/ws``: one connection = one session, opened by the first message (see the module docstring)."""
        async def answer(session_id: str, env: MobilityEnvironment, raw: str) -> tuple[str, bool]:
            reply, close = await self.handle_message(session_id, env, raw)
            return (reply_text(reply) if reply else ""), close

        await self._socket_session(websocket, answer, lambda exc: json_text({"type": "error", "data": exc.data()}))

    async def mcp_websocket_session(self, websocket: WebSocket) -> None:
        """The ``/mcp`` WebSocket: MCP JSON-RPC, one connection = one session, opened by the first message."""
        async def answer(session_id: str, env: MobilityEnvironment, raw: str) -> tuple[str, bool]:
            self._update_session_activity(session_id)
            return await self.rpc.answer_text(raw, (session_id, env)), False

        await self._socket_session(websocket, answer, lambda exc: json_text(rpc_error(exc)))

    async def _socket_session(self, websocket: WebSocket,
                              answer: Callable[[str, MobilityEnvironment, str], Awaitable[tuple[str, bool]]],
                              refusal: Callable[[RequestError], str]) -> None:
        """Serve one WebSocket session: ``answer`` gives each message's reply text and whether to close after it;
        ``refusal`` the text that refuses a session the server cannot open."""
        await websocket.accept()
        session_id: Optional[str] = None
        try:
            raw = await asyncio.wait_for(self._receive(websocket), timeout=self.config.request_timeout_s)
            try:
                session_id, env = await self.open_session()
            except RequestError as exc:
                if await self._send_text(websocket, refusal(exc)):
                    await self._close_socket(websocket, 1013, exc.code, CLOSE_WAIT_S)  # 1013: try again later
                return
            self._sockets[session_id] = websocket
            while session_id in self._sessions:  # the reaper may have closed it meanwhile
                text, close = await answer(session_id, env, raw)
                if text and not await self._send_text(websocket, text):
                    break
                if close:
                    break
                raw = await self._receive(websocket)
        except (WebSocketDisconnect, asyncio.TimeoutError):
            pass
        finally:
            if session_id is not None and session_id in self._sessions:
                self._sockets.pop(session_id, None)
                await self._destroy_session(session_id)
            await self._close_socket(websocket, 1000, "", CLOSE_WAIT_S)

    @staticmethod
    async def _send_text(websocket: WebSocket, text: str) -> bool:
        """Send ``text``; False when the connection is gone (the peer left, or the reaper closed it)."""
        if websocket.application_state == WebSocketState.DISCONNECTED:
            return False
        try:
            await websocket.send_text(text)
        except (RuntimeError, WebSocketDisconnect):  # starlette's WebSocketDisconnected is a RuntimeError
            return False
        return True

    @staticmethod
    async def _close_socket(websocket: WebSocket, code: int, reason: str, wait_s: Optional[float] = None) -> None:
        """Close the connection, waiting at most ``wait_s`` for a peer whose receive buffer is full."""
        if websocket.application_state == WebSocketState.DISCONNECTED or \
                websocket.client_state == WebSocketState.DISCONNECTED:
            return
        try:
            await asyncio.wait_for(websocket.close(code=code, reason=reason), timeout=wait_s)
        except asyncio.TimeoutError:  # the peer reads nothing: its connection is left to the server's keepalive
            log.warning("a WebSocket peer did not take its close frame within %g s", wait_s)
        except (RuntimeError, WebSocketDisconnect):  # the peer went away meanwhile
            pass

    # ------------------------------------------------------------------ routes
    def register_routes(self, app: FastAPI, mode: ServerMode | str = ServerMode.SIMULATION) -> None:
        # The base registers /health, /metadata, /schema, /mcp (HTTP and WebSocket), the reaper's start and stop,
        # and its own /ws; production mode leaves out its stateless /reset, /step and /state. Its /ws and /mcp are
        # replaced.
        super().register_routes(app, ServerMode.PRODUCTION)
        app.router.routes[:] = [route for route in app.router.routes
                                if getattr(route, "path", None) not in ("/ws", "/mcp")]
        app.add_api_websocket_route("/ws", self.websocket_session)
        app.add_api_websocket_route("/mcp", self.mcp_websocket_session)
        app.add_exception_handler(RequestValidationError, self._http_validation_error)
        app.add_exception_handler(RequestError, self._http_request_error)
        app.add_exception_handler(StarletteHTTPException, self._http_exception)
        app.add_exception_handler(Exception, self._http_unexpected)
        self._add_http_session_routes(app)

    @staticmethod
    def _json(payload: Any, status: int = 200) -> Response:
        try:
            text = json_text(payload)
        except (RecursionError, ValueError, TypeError) as exc:  # see reply_text
            log.warning("a reply could not be serialized: %s", type(exc).__name__)
            error = RequestError("EXECUTION_ERROR", f"the reply could not be written as JSON ({type(exc).__name__})")
            text, status = json_text({"error": error.data()}), 500
        return Response(text, status_code=status, media_type="application/json")

    async def _http_validation_error(self, request: Request, exc: Exception) -> Response:
        assert isinstance(exc, RequestValidationError)
        return await self._http_request_error(request, validation_error(exc, f"{request.method} {request.url.path}"))

    async def _http_request_error(self, request: Request, exc: Exception) -> Response:
        assert isinstance(exc, RequestError)
        return self._json({"error": exc.data()}, HTTP_STATUS.get(exc.code, 400))

    async def _http_unexpected(self, request: Request, exc: Exception) -> Response:
        """Anything else a route raised (a bug in the env, a structure too deep for a validator): a JSON error.
        (Starlette logs the traceback and re-raises it to uvicorn after this reply; the server goes on.)"""
        where = f"{request.method} {shorten(request.url.path)}"
        if isinstance(exc, RecursionError):
            return await self._http_request_error(request, RequestError("TOO_DEEP", f"{where}: the body "
                                                                                    f"{TOO_DEEP_MESSAGE}"))
        return await self._http_request_error(request, RequestError("EXECUTION_ERROR",
                                                                    f"{where}: {type(exc).__name__}: {exc}"))

    async def _http_exception(self, request: Request, exc: Exception) -> Response:
        """FastAPI's own refusals (unknown path, wrong method, a body its parser gave up on) in this server's
        error shape, ``detail`` kept for clients of the base server."""
        assert isinstance(exc, StarletteHTTPException)
        where = f"{request.method} {shorten(request.url.path)}"
        if isinstance(exc.__cause__, RecursionError):
            error = RequestError("TOO_DEEP", f"{where}: the body {TOO_DEEP_MESSAGE}")
        elif exc.status_code == 400 and isinstance(exc.__cause__, ValueError):
            error = RequestError("INVALID_JSON", f"{where}: the body is not valid JSON ({shorten(exc.__cause__, 200)})")
        else:
            code = STATUS_CODES.get(exc.status_code, "EXECUTION_ERROR" if exc.status_code >= 500 else "BAD_REQUEST")
            error = RequestError(code, f"{where}: {shorten(exc.detail, 500)}")
        data = error.data()
        return Response(json_text({"detail": exc.detail, "error": data}), status_code=exc.status_code,
                        headers=getattr(exc, "headers", None), media_type="application/json")

    def _add_http_session_routes(self, app: FastAPI) -> None:
        server = self

        @app.post("/reset", tags=["Environment Control"], summary="Reset a session (a new one without session_id)")
        async def reset(body: ResetBody = Body(default_factory=ResetBody)) -> Response:
            params = body.model_dump(exclude={"session_id"}, exclude_unset=True)
            if body.session_id is not None:
                observation = server._env_of(body.session_id).reset(**params)
                return server._json({**observation_payload(observation), "session_id": body.session_id})
            session_id, observation = await server.open_http_session(ResetParams(**params))
            return server._json({**observation_payload(observation), "session_id": session_id})

        @app.post("/step", tags=["Environment Control"], summary="Step a session with one action")
        async def step(body: StepBody) -> Response:
            observation = server._env_of(body.session_id).step(body.action)
            server._update_session_activity(body.session_id, increment_step=True)
            return server._json({**observation_payload(observation), "session_id": body.session_id})

        @app.get("/state", tags=["State Management"], summary="A session's state")
        async def state(session_id: str = Query(description="from the reply of POST /reset")) -> Response:
            return server._json(server._env_of(session_id).state.model_dump())

        @app.post("/mcp", tags=["MCP"], summary="MCP JSON-RPC: tools/list, tools/call, openenv/session/*")
        async def mcp(request: Request) -> Response:
            text = await server.rpc.answer_text(await request.body())
            return Response(text, media_type="application/json")

        @app.get("/sessions", tags=["State Management"], summary="Open sessions, the limit and the idle timeout")
        async def sessions() -> Response:
            infos = [info.model_dump() for info in list(server._session_info.values())]
            guard = getattr(app.state, "connections", None)  # set by RunningServer (not by a bare create_app)
            return server._json({"active_sessions": server.active_sessions, "max_sessions": server.max_concurrent_envs,
                                 "idle_timeout_s": server._session_idle_timeout_s, "sessions": infos,
                                 "connections": guard.counts() if guard is not None else None})

        @app.delete("/sessions/{session_id}", tags=["State Management"], summary="Close an HTTP session")
        async def close(session_id: str) -> Response:
            server._env_of(session_id)
            await server.close_session(session_id, "closed by DELETE /sessions")
            return server._json({"session_id": session_id, "closed": True})


class BodyLimit:
    """ASGI middleware: an HTTP request body over ``limit`` bytes is answered 413 before the app reads it.

    (FastAPI's own ``max_body_size`` is recent; openenv-core asks only for fastapi >= 0.104.)
    """

    def __init__(self, app: Any, limit: int):
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Dict[str, Any], receive: Callable[[], Awaitable[Dict[str, Any]]],
                       send: Callable[[Dict[str, Any]], Awaitable[None]]) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        declared = dict(scope.get("headers") or ()).get(b"content-length", b"0")
        chunks: list[bytes] = []
        size = int(declared) if declared.isdigit() else 0
        more = size <= self.limit
        while more:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away
            chunks.append(message.get("body", b""))
            size = sum(map(len, chunks))
            more = message.get("more_body", False) and size <= self.limit
        if size > self.limit:
            error = RequestError("TOO_LARGE", f"the request body is over {self.limit:,} bytes (--max-message-bytes)")
            body = json_text({"error": error.data()}).encode()
            headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                       (b"connection", b"close")]
            await send({"type": "http.response.start", "status": 413, "headers": headers})
            await send({"type": "http.response.body", "body": body})
            return
        replay = [{"type": "http.request", "body": b"".join(chunks), "more_body": False}]

        async def replayed() -> Dict[str, Any]:
            return replay.pop() if replay else await receive()

        await self.app(scope, replayed, send)


def create_app(config: ServeConfig, store: Any = None) -> FastAPI:
    """The FastAPI app serving ``config``'s env (``store``: an already opened store, else ``open_store``)."""
    server = MobilityEnvServer(config, store)
    app = FastAPI(title=f"mobility-env serve: {config.env_id}", version="1.0.0",
                  description="OpenEnv-compatible server of a mobility-env environment: WebSocket /ws (one "
                              "connection = one session) and HTTP /reset, /step, /state with session ids.")
    server.register_routes(app)
    app.state.server = server
    app.add_middleware(BodyLimit, limit=config.max_message_bytes)
    return app


#: Connections the kernel queues for the server, and the most the event loop accepts in one turn (each takes a
#: file descriptor before the connection caps can close one: the caps plus this stay under ulimit -n 1024).
LISTEN_BACKLOG = 1024
ACCEPTS_PER_TURN = 128


class _Server(uvicorn.Server):
    """uvicorn's server with the kernel's queue of the listening socket set back to :data:`LISTEN_BACKLOG`
    after start-up (asyncio sets it to the accepts per turn)."""

    async def startup(self, sockets: Optional[list[socket.socket]] = None) -> None:
        await super().startup(sockets)
        for sock in sockets or ():
            sock.listen(LISTEN_BACKLOG)


class RunningServer:
    """uvicorn serving ``create_app(config)`` on a socket bound at construction (so ``port`` 0 is resolved).

    ``run()`` blocks (the CLI); ``start()`` serves from a thread and returns once it accepts
    connections, ``stop()`` ends it (tests, notebooks, a trainer that hosts its own env server).
    """

    def __init__(self, config: ServeConfig, store: Any = None, log_level: str = "warning"):
        self.app = create_app(config, store)
        family, kind, proto, _, address = socket.getaddrinfo(config.host, config.port, type=socket.SOCK_STREAM)[0]
        self.socket = socket.socket(family, kind, proto)
        self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self.socket.bind(address)
            self.socket.listen(LISTEN_BACKLOG)  # connections queue from now on, even before uvicorn accepts them
        except OSError:
            self.socket.close()
            raise
        self.host, self.port = self.socket.getsockname()[:2]
        self.guard = ConnectionGuard(config.max_connections, config.max_connections_per_client,
                                     config.request_timeout_s)
        self.app.state.connections = self.guard
        self.server = _Server(uvicorn.Config(
            self.app, log_level=log_level, access_log=False, lifespan="on", ws_max_size=config.max_message_bytes,
            http=self.guard.protocol(),  # uvicorn's h11 protocol with the request deadline and the caps
            backlog=ACCEPTS_PER_TURN,
            ws_per_message_deflate=False,  # compressing loopback traffic only costs CPU
            timeout_graceful_shutdown=int(CLOSE_WAIT_S)))  # a peer that reads nothing cannot hold up a stop
        self._thread: Optional[threading.Thread] = None

    @property
    def base_url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def run(self) -> None:
        self.server.run(sockets=[self.socket])

    def start(self, timeout_s: float = 30.0) -> "RunningServer":
        self._thread = threading.Thread(target=self.run, name="mobility-env-serve", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout_s
        while not self.server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the server on {self.base_url} did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        self.socket.close()

    def __enter__(self) -> "RunningServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
