"""One ``mobility-env serve`` session's env behind openenv-core's ``Environment`` interface, and what the
server validates before it reaches the env: the request bodies (:class:`ResetParams`, :class:`ResetBody`,
:class:`StepBody`) and the refusals (:class:`RequestError`, codes in
:data:`mobility_agents.adapters.openenv.server.HTTP_STATUS`). ``step`` also takes openenv-core's MCP actions
(``ListToolsAction``, ``CallToolAction``; :mod:`mobility_agents.adapters.openenv.mcp`), as its
``MCPEnvironment`` does.
"""

from __future__ import annotations

import importlib.metadata
import logging
import threading
from typing import Any, Callable, Dict, List, Optional, Union, overload

from fastapi.exceptions import RequestValidationError
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.mcp_types import CallToolAction, CallToolObservation, ListToolsAction, ListToolsObservation
from openenv.core.env_server.types import EnvironmentMetadata
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mobility_env.errors import MobilityEnvError
from mobility_env.runfiles import json_text
from mobility_env.suites import suite_of
from mobility_env.trajectory import as_record

from .client import MobilityAction, MobilityObservation, MobilityState
from .mcp import offered_tools, tool_observation, tool_specs
from ...targets import make_env

__all__ = ["MobilityEnvironment", "RequestError", "ResetBody", "ResetParams", "StepBody",
           "observation_payload", "reply_text", "shorten", "validation_error"]

log = logging.getLogger(__name__)

MAX_ERROR_CHARS = 1000  # an error message is cut to this (it may quote what the client sent)


class RequestError(Exception):
    """A request the server refuses (``code`` is one of :data:`~mobility_agents.adapters.openenv.server.HTTP_STATUS`);
    the session goes on."""

    def __init__(self, code: str, message: str, **details: Any):
        self.code = code
        self.message = message if len(message) <= MAX_ERROR_CHARS else message[:MAX_ERROR_CHARS] + " ..."
        self.details = details
        super().__init__(self.message)

    def data(self) -> Dict[str, Any]:
        return {"code": self.code, "message": self.message, **self.details}


def reply_text(reply: Dict[str, Any],
               as_error: Optional[Callable[[RequestError], Dict[str, Any]]] = None) -> str:
    """``reply`` as JSON text; a reply that cannot be written (a structure too deep) becomes an error reply, in the
    protocol's shape (``as_error``; default the WebSocket's ``{"type": "error", "data": ...}``)."""
    try:
        return json_text(reply)
    except (RecursionError, ValueError, TypeError) as exc:
        log.warning("a reply could not be serialized: %s", type(exc).__name__)
        error = RequestError("EXECUTION_ERROR", f"the reply could not be written as JSON ({type(exc).__name__})")
        return json_text(as_error(error) if as_error else {"type": "error", "data": error.data()})


def shorten(value: Any, limit: int = 64) -> str:
    """``str(value)``, cut to ``limit`` characters."""
    text = str(value)
    return text if len(text) <= limit else text[:limit] + "..."


def validation_error(exc: ValidationError | RequestValidationError, what: str) -> RequestError:
    """A :class:`RequestError` naming each bad field and why, not the value sent (it may be huge or unencodable)."""
    problems = [f"{'.'.join(shorten(part) for part in error.get('loc', ())) or what}: {error.get('msg', 'invalid')}"
                for error in exc.errors()[:10]]
    if any(error.get("type") == "json_invalid" for error in exc.errors()):
        return RequestError("INVALID_JSON", f"{what}: the body is not valid JSON")
    return RequestError("VALIDATION_ERROR", f"invalid {what}: " + "; ".join(problems))


class ResetParams(BaseModel):
    """What ``reset`` takes: ``seed`` and ``options`` as ``env.reset`` takes them; ``episode_id`` is short
    for ``options={"episode_id": ...}`` (MobilityBench-v0: an episode id; MobilePA-v0: a task id)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    seed: Optional[int] = Field(default=None, ge=0, description="seeds the env's np_random, as env.reset(seed=...)")
    episode_id: Optional[str] = Field(default=None, max_length=256, description="the episode (task) to play")
    options: Optional[Dict[str, Any]] = Field(default=None, description="env.reset(options=...)")


class ResetBody(ResetParams):
    """``POST /reset``: the reset parameters and the HTTP session to reset (none: open a new session)."""

    session_id: Optional[str] = Field(default=None, max_length=64, description="from an earlier POST /reset")


class StepBody(BaseModel):
    """``POST /step``: OpenEnv's step request (``action``, ``timeout_s``, ``request_id``) and the session."""

    model_config = ConfigDict(extra="forbid")

    action: MobilityAction
    session_id: str = Field(max_length=64, description="from the reply of POST /reset")
    timeout_s: Optional[float] = Field(default=None, description="accepted for OpenEnv compatibility; unused")
    request_id: Optional[str] = Field(default=None, max_length=255)


class MobilityEnvironment(Environment):
    """One session's env (``make_env`` on the server's shared store) behind openenv-core's interface.

    ``reset`` and ``step`` return :class:`MobilityObservation`; ``step`` on a finished episode, before
    ``reset`` or after ``close`` raises :class:`RequestError` (an in-process env would answer the first
    with an ``episode_over`` observation; over the wire it is the client's mistake, said as one).

    MCP, as openenv-core's ``MCPEnvironment`` routes it: ``step(ListToolsAction())`` (or :meth:`list_tools`)
    lists the tools the env offers now (after a reset, the episode's ``info["tools"]``, kept current when a
    MobilePA skill load adds tools; before one, :func:`~mobility_agents.adapters.openenv.mcp.offered_tools`),
    and ``step(CallToolAction(tool_name=..., arguments=...))`` (or :meth:`call_tool`) is exactly
    ``step(MobilityAction(tool_call={"name": ..., "arguments": ...}))``, answered as a ``CallToolObservation``.
    """

    SUPPORTS_CONCURRENT_SESSIONS = True  # each session owns its env; the store is only read

    def __init__(self, store: Any, env_id: str, env_kwargs: Dict[str, Any]):
        super().__init__()
        self.env_id = env_id
        self.env = make_env(store, env_kwargs)
        self._lock = threading.Lock()  # close() runs on the session's executor thread, the rest on the loop
        self._closed: Optional[str] = None
        self._episode_id: Optional[str] = None
        self._steps = 0
        self._done = True
        self._return = 0.0
        self._tools: List[Dict[str, Any]] = offered_tools(self.env)

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,  # type: ignore[override]
              **kwargs: Any) -> MobilityObservation:
        try:
            params = ResetParams(seed=seed, episode_id=episode_id, **kwargs)
        except ValidationError as exc:
            raise validation_error(exc, "reset parameters") from None
        return self.reset_with(params)

    def reset_with(self, params: ResetParams) -> MobilityObservation:
        """``reset`` with its parameters validated already (the server validates a message's ``data`` itself)."""
        options = dict(params.options or {})
        if params.episode_id is not None:
            picked = {options[k] for k in ("episode_id", "task_id") if k in options}
            if picked - {params.episode_id}:
                raise RequestError("VALIDATION_ERROR", f"episode_id {params.episode_id!r} and options "
                                                       f"{sorted(map(str, picked))!r} name different episodes")
            options[suite_of(self.env_id).id_key] = params.episode_id
        with self._lock:
            self._check_open()
            try:
                text, info = self.env.reset(seed=params.seed, options=options or None)
            except (MobilityEnvError, ValueError, TypeError, KeyError, IndexError) as exc:
                raise RequestError("VALIDATION_ERROR", f"reset refused: {exc}") from None
            self._episode_id = info.get("episode_id", info.get("task_id"))
            self._steps, self._done, self._return = 0, False, 0.0
            self._tools = list(info.get("tools") or self._tools)
        return MobilityObservation(text=text, info=info, reward=None, done=False)

    @overload  # type: ignore[override]
    def step(self, action: MobilityAction, timeout_s: Optional[float] = None, **kwargs: Any) -> MobilityObservation:
        ...

    @overload
    def step(self, action: Union[ListToolsAction, CallToolAction], timeout_s: Optional[float] = None,
             **kwargs: Any) -> Union[ListToolsObservation, CallToolObservation]:
        ...

    def step(self, action: Union[MobilityAction, ListToolsAction, CallToolAction], timeout_s: Optional[float] = None,
             **kwargs: Any) -> Union[MobilityObservation, ListToolsObservation, CallToolObservation]:
        if isinstance(action, ListToolsAction):
            return self.list_tools()
        if isinstance(action, CallToolAction):
            return self.call_tool(action)
        return self._step(action)

    def list_tools(self) -> ListToolsObservation:
        """The tools the env offers now, as MCP tools (name, description, JSON-schema input)."""
        with self._lock:
            self._check_open()
            tools = list(self._tools)
        return ListToolsObservation(tools=tool_specs(tools))

    def call_tool(self, action: CallToolAction) -> CallToolObservation:
        """One step with the call ``{"name": action.tool_name, "arguments": action.arguments}``, as MCP answers it
        (raises :class:`RequestError` where ``step`` does: no episode, the episode over, the session closed)."""
        call = MobilityAction(tool_call={"name": action.tool_name, "arguments": action.arguments})
        return tool_observation(action.tool_name, self._step(call))

    def _step(self, action: MobilityAction) -> MobilityObservation:
        with self._lock:
            self._check_open()
            if self._episode_id is None:
                raise RequestError("NO_EPISODE", "no episode to step: call reset first")
            if self._done:
                raise RequestError("EPISODE_OVER", f"episode {self._episode_id} has ended after {self._steps} "
                                                   "step(s); call reset to start a new one")
            text, reward, terminated, truncated, info = self.env.step(action.tool_call)
            self._steps += 1
            self._done = bool(terminated or truncated)
            self._return += float(reward)
            if info.get("tools"):  # a MobilePA skill load offers more tools from now on
                self._tools = list(info["tools"])
        if "trajectory" in info:  # the record goes over the wire as data (the env hands it out by reference)
            info = {**info, "trajectory": as_record(info["trajectory"])}
        return MobilityObservation(text=text, info=info, reward=float(reward), done=self._done,
                                   terminated=bool(terminated), truncated=bool(truncated))

    @property
    def state(self) -> MobilityState:
        with self._lock:
            self._check_open()
            return MobilityState(env_id=self.env_id, episode_id=self._episode_id, step_count=self._steps,
                                 done=self._done, total_reward=self._return,
                                 max_steps=getattr(self.env, "max_steps", None))

    def close(self, reason: str = "closed") -> None:
        with self._lock:
            if self._closed is None:
                self._closed = reason
                self.env.close()

    def _check_open(self) -> None:
        if self._closed is not None:
            raise RequestError("SESSION_CLOSED", f"this session is closed ({self._closed}); open a new one")

    def get_metadata(self) -> EnvironmentMetadata:
        return EnvironmentMetadata(name=self.env_id, version=_package_version(), author="mobility-env",
                                   description=f"{self.env_id} (mobility-env): a replayed route-planning / mobile "
                                               "assistant tool-use environment; one action is one tool call")


def _package_version() -> str:
    try:
        return importlib.metadata.version("mobility-env")
    except importlib.metadata.PackageNotFoundError:  # run from a checkout without installing
        return "unknown"


def observation_payload(observation: MobilityObservation) -> Dict[str, Any]:
    """What openenv-core's ``serialize_observation`` makes of it (``observation``, ``reward``, ``done``),
    read from the fields directly instead of through a pydantic dump of the whole info."""
    return {"observation": {"text": observation.text, "info": observation.info,
                            "terminated": observation.terminated, "truncated": observation.truncated},
            "reward": observation.reward, "done": observation.done}
