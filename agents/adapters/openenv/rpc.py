"""The MCP JSON-RPC 2.0 of ``mobility-env serve``: ``POST /mcp``, the ``/mcp`` WebSocket and ``/ws`` ``mcp`` messages.

The wire format is openenv-core's (its ``HTTPEnvServer`` ``/mcp``, which ``MCPToolClient`` speaks in
production mode): a request ``{"jsonrpc": "2.0", "method", "params", "id"}``, a reply with ``result`` or
``error`` ``{"code", "message", "data"}``. Methods:

* ``tools/list`` — ``{"tools": [{"name", "description", "input_schema"}]}``: the tools the session's env
  offers now (without a session: those a new env offers before its first reset);
* ``tools/call`` ``{"name", "arguments"}`` — one step of the session's env with that call; the result is
  :func:`~mobility_agents.adapters.openenv.mcp.call_result`'s (the observation text as ``data``, the reward,
  ``done`` and info in ``structured_content``). A call the agent got wrong (an unknown tool, arguments the
  schema refuses) was still a step: it is an ``INVALID_PARAMS`` error whose ``data`` has ``code``
  (``TOOL_NOT_FOUND`` / ``INVALID_ARGS``) and the step's ``result``;
* ``openenv/session/create`` — over HTTP, opens a session and resets it (params: those of ``POST /reset``:
  ``seed``, ``episode_id``, ``options``; none: an episode drawn as ``env.reset()`` draws one); the result has
  ``session_id`` and the reset's ``observation``. On a WebSocket it names the connection's own session;
* ``openenv/session/reset`` — the next episode of the session (same params, and ``session_id`` over HTTP);
* ``openenv/session/close`` ``{"session_id"}`` — closes an HTTP session.

Over HTTP a session is named by ``params.session_id`` (from ``openenv/session/create`` or ``POST /reset``:
the HTTP sessions are one table); a WebSocket is its own session. Every refusal is a JSON-RPC error (over HTTP
with status 200) whose ``data`` holds the typed error (``code``, ``message``), never a traceback, and never
echoes what was sent (:data:`RPC_CODES`): ``INVALID_JSON``, ``TOO_DEEP`` → -32700; ``INVALID_REQUEST`` → -32600;
``UNKNOWN_METHOD`` → -32601; ``VALIDATION_ERROR``, ``UNKNOWN_SESSION``, ``TOOL_NOT_FOUND``, ``INVALID_ARGS`` →
-32602; ``EXECUTION_ERROR`` (a bug in the env) → -32603; the session's own (``NO_EPISODE``, ``EPISODE_OVER``,
``SESSION_CLOSED``, ``CAPACITY_REACHED``, ``FACTORY_ERROR``) → -32000. A body over ``--max-message-bytes`` is
refused before it is read, as on every route (HTTP 413 ``TOO_LARGE``; a WebSocket is closed with 1009).
"""

from __future__ import annotations

import json
import logging
from typing import Any, Dict, Optional, Protocol, Tuple

from openenv.core.env_server.mcp_types import CallToolAction, JsonRpcErrorCode, ListToolsObservation
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .client import MobilityObservation
from .environment import (MobilityEnvironment, RequestError, ResetParams, observation_payload, reply_text,
                          validation_error)

__all__ = ["McpRpc", "RPC_CODES", "rpc_error", "rpc_text"]

log = logging.getLogger(__name__)

Session = Tuple[str, MobilityEnvironment]

#: The server's error codes as JSON-RPC error codes (any other: SERVER_ERROR, -32000).
RPC_CODES = {"INVALID_JSON": JsonRpcErrorCode.PARSE_ERROR, "TOO_DEEP": JsonRpcErrorCode.PARSE_ERROR,
             "INVALID_REQUEST": JsonRpcErrorCode.INVALID_REQUEST, "UNKNOWN_METHOD": JsonRpcErrorCode.METHOD_NOT_FOUND,
             "VALIDATION_ERROR": JsonRpcErrorCode.INVALID_PARAMS, "UNKNOWN_SESSION": JsonRpcErrorCode.INVALID_PARAMS,
             "TOOL_NOT_FOUND": JsonRpcErrorCode.INVALID_PARAMS, "INVALID_ARGS": JsonRpcErrorCode.INVALID_PARAMS,
             "EXECUTION_ERROR": JsonRpcErrorCode.INTERNAL_ERROR}
METHODS = ("tools/list", "tools/call", "openenv/session/create", "openenv/session/reset", "openenv/session/close")
MAX_ID_CHARS = 256


class SessionHost(Protocol):
    """What the dispatcher needs of the server (:class:`~mobility_agents.adapters.openenv.server.MobilityEnvServer`)."""

    initial_tools: ListToolsObservation

    async def open_http_session(self, params: ResetParams) -> Tuple[str, MobilityObservation]: ...

    async def close_session(self, session_id: str, reason: str) -> None: ...

    def _env_of(self, session_id: str) -> MobilityEnvironment: ...

    def _update_session_activity(self, session_id: str, increment_step: bool = False) -> None: ...


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    session_id: Optional[str] = Field(default=None, max_length=64, description="an HTTP session (not on a WebSocket)")
    meta: Optional[Dict[str, Any]] = Field(default=None, alias="_meta", description="MCP's request metadata; unused")


class ListParams(_Params):
    cursor: Optional[str] = Field(default=None, max_length=256, description="MCP pagination; every tool is listed")


class CallParams(_Params):
    name: str = Field(max_length=256, description="the tool")
    arguments: Dict[str, Any] = Field(default_factory=dict, description="its arguments")


class ResetRpcParams(_Params, ResetParams):
    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=True)


class CloseParams(_Params):
    session_id: str = Field(max_length=64, description="the HTTP session to close")


def rpc_error(error: RequestError, request_id: Any = None) -> Dict[str, Any]:
    """``error`` as a JSON-RPC error reply (its typed error in ``data``)."""
    code = RPC_CODES.get(error.code, JsonRpcErrorCode.SERVER_ERROR)
    body = {"code": code.value, "message": error.message, "data": error.data()}
    return {"jsonrpc": "2.0", "id": request_id, "error": body}


def rpc_text(reply: Dict[str, Any]) -> str:
    """``reply`` as JSON text; one that cannot be written (a structure too deep) becomes a JSON-RPC error reply."""
    return reply_text(reply, lambda error: rpc_error(error, reply.get("id")))


def _request_id(payload: Any) -> Any:
    """The request's ``id`` when it is a usable one (a string of at most 256 characters or an integer), else None."""
    value = payload.get("id") if isinstance(payload, dict) else None
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        return None
    return value if not isinstance(value, str) or len(value) <= MAX_ID_CHARS else None


class McpRpc:
    """Answers JSON-RPC requests for ``host``'s sessions (see the module docstring)."""

    def __init__(self, host: SessionHost):
        self.host = host

    async def answer_text(self, raw: str | bytes, session: Optional[Session] = None) -> str:
        """The reply to one request as text (``raw``: the HTTP body or the WebSocket message)."""
        try:
            payload = json.loads(raw)
        except RecursionError:
            return rpc_text(rpc_error(RequestError("TOO_DEEP", "the request is nested too deeply for the JSON "
                                                               "parser (about 1,000 levels at most)")))
        except ValueError as exc:  # not JSON, or not UTF-8
            return rpc_text(rpc_error(RequestError("INVALID_JSON", f"the request is not JSON: {type(exc).__name__}")))
        return rpc_text(await self.answer(payload, session))

    async def answer(self, payload: Any, session: Optional[Session] = None) -> Dict[str, Any]:
        """The reply to one parsed request, on the connection's ``session`` (None: HTTP)."""
        request_id = _request_id(payload)
        try:
            if not isinstance(payload, dict):
                raise RequestError("INVALID_REQUEST", "a request is one JSON object {\"jsonrpc\": \"2.0\", \"method\", "
                                                      "\"params\", \"id\"} (batches are not supported)")
            if payload.get("jsonrpc") != "2.0" or not isinstance(payload.get("method"), str):
                raise RequestError("INVALID_REQUEST", 'a request needs "jsonrpc": "2.0" and a "method" string')
            if "id" in payload and payload["id"] is not None and request_id is None:
                raise RequestError("INVALID_REQUEST", f'"id" must be a string of at most {MAX_ID_CHARS} characters '
                                                      'or an integer')
            unknown = set(payload) - {"jsonrpc", "method", "params", "id"}
            if unknown:
                raise RequestError("INVALID_REQUEST", f"unknown request member(s): {sorted(unknown)[:5]}"[:200])
            params = payload.get("params", {})
            if not isinstance(params, dict):
                raise RequestError("INVALID_REQUEST", '"params" must be an object')
            result = await self._call(payload["method"], params, session)
        except RequestError as exc:
            return rpc_error(exc, request_id)
        except RecursionError:  # arguments deep enough to exhaust a validator's or the env's recursion
            return rpc_error(RequestError("TOO_DEEP", "the request is nested too deeply"), request_id)
        except Exception as exc:  # a bug in the env: answer it, keep the server and the session
            log.exception("an MCP request failed")
            return rpc_error(RequestError("EXECUTION_ERROR", f"{type(exc).__name__}: {exc}"), request_id)
        return {"jsonrpc": "2.0", "id": request_id, "result": result}

    async def _call(self, method: str, raw: Dict[str, Any], session: Optional[Session]) -> Dict[str, Any]:
        if method == "tools/list":
            params = _parse(ListParams, raw, method)
            if session is None and params.session_id is None:
                observation = self.host.initial_tools
            else:
                observation = self._session(params.session_id, session)[1].list_tools()
            return {"tools": [tool.model_dump() for tool in observation.tools]}
        if method == "tools/call":
            call = _parse(CallParams, raw, method)
            if session is None and call.session_id is None:
                raise RequestError("VALIDATION_ERROR", "tools/call needs a session: pass params.session_id (from "
                                                       "openenv/session/create or POST /reset), or use a WebSocket")
            session_id, env = self._session(call.session_id, session)
            answer = env.call_tool(CallToolAction(tool_name=call.name, arguments=call.arguments))
            self.host._update_session_activity(session_id, increment_step=True)
            if answer.error is not None:  # the step was taken: its result goes with the error
                raise RequestError(answer.error.error_type.name, answer.error.message, result=answer.result)
            return dict(answer.result)
        if method == "openenv/session/create":
            if session is not None:
                _parse(_Params, raw, method)
                return {"session_id": session[0]}
            reset = _parse(ResetParams, raw, method)
            session_id, first = await self.host.open_http_session(reset)
            return {"session_id": session_id, **observation_payload(first)}
        if method == "openenv/session/reset":
            params = _parse(ResetRpcParams, raw, method)
            session_id, env = self._session(params.session_id, session)
            reset = ResetParams.model_validate(params.model_dump(include={"seed", "episode_id", "options"},
                                                                 exclude_unset=True))
            return {"session_id": session_id, **observation_payload(env.reset_with(reset))}
        if method == "openenv/session/close":
            close = _parse(CloseParams, raw, method)
            if session is not None and close.session_id == session[0]:
                raise RequestError("INVALID_REQUEST", "a WebSocket's own session ends when the WebSocket closes")
            self.host._env_of(close.session_id)
            await self.host.close_session(close.session_id, "closed by openenv/session/close")
            return {"session_id": close.session_id, "closed": True}
        raise RequestError("UNKNOWN_METHOD", f"unknown method {method[:64]!r}; the methods are {', '.join(METHODS)}")

    def _session(self, session_id: Optional[str], session: Optional[Session]) -> Session:
        """The connection's session, or the HTTP session ``session_id`` names."""
        if session is not None:
            if session_id is not None and session_id != session[0]:
                raise RequestError("VALIDATION_ERROR", "params.session_id names another session than this "
                                                       "WebSocket's; leave it out")
            return session
        if session_id is None:
            raise RequestError("VALIDATION_ERROR", "params.session_id is missing: openenv/session/create or POST "
                                                   "/reset opens a session and returns it")
        return session_id, self.host._env_of(session_id)


def _parse(model: type[BaseModel], params: Dict[str, Any], method: str) -> Any:
    try:
        return model.model_validate(params)
    except ValidationError as exc:
        raise validation_error(exc, f"{method} params") from None
