"""The wire models of ``mobility-env serve`` and its OpenEnv client.

Models (pydantic, subclasses of openenv-core's):

* :class:`MobilityAction` — one agent action exactly as ``env.step`` takes it: ``tool_call`` is
  a JSON tool-call object (``{"name": ..., "arguments": {...}}`` or the OpenAI
  ``{"type": "function", "function": {...}}`` shape) or any text (the env parses it; text that is
  not a tool call comes back as an ``invalid_json`` observation, as in process);
* :class:`MobilityObservation` — ``text`` (the env's observation string), ``info`` (the env's
  info dict as JSON: ``episode_id``/``task_id``, ``tools`` on reset, ``error``,
  ``reward_components`` on every step, ``metrics``, ``verdict`` and ``trajectory`` at the end),
  ``terminated``, ``truncated``, and OpenEnv's ``reward`` (None after reset) and ``done``;
* :class:`MobilityState` — the session's env id, episode id, steps, ``done`` and return so far.

:class:`MobilityEnvClient` is an openenv-core ``EnvClient`` (async, one WebSocket = one
server-side session = one env); ``.sync()`` gives the blocking client:

>>> client = MobilityEnvClient(base_url="http://127.0.0.1:8000").sync()  # doctest: +SKIP
>>> with client:  # doctest: +SKIP
...     result = client.reset(seed=0)            # or reset(episode_id=..., options={...})
...     result = client.step({"name": "weather_query", "arguments": {"city": "北京"}})
...     result.observation.text, result.reward, result.done, result.observation.info["error"]

``step`` takes a :class:`MobilityAction` or the raw action (dict or text). A server error
(session limit, bad input, step after the end, an idle session closed by the server) raises
:class:`ServerError` with the server's ``code`` and message; after ``CAPACITY_REACHED``,
``SESSION_CLOSED`` and ``TOO_LARGE`` (a message over the server's ``--max-message-bytes``; the
server closes the connection) the next call opens a new connection, i.e. a new session.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Union

from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient
from openenv.core.env_server.types import Action, Observation, State
from pydantic import Field
from websockets.exceptions import ConnectionClosed

__all__ = ["MobilityAction", "MobilityEnvClient", "MobilityObservation", "MobilityState", "ServerError"]


class MobilityAction(Action):
    """One action for ``env.step``: a tool-call object or text, passed to the env unchanged."""

    tool_call: Union[Dict[str, Any], str] = Field(
        description='the action as env.step takes it: {"name": tool, "arguments": {...}}, the OpenAI '
                    '{"type": "function", "function": {"name": ..., "arguments": "<json>"}} shape, or JSON text')


class MobilityObservation(Observation):
    """What ``reset`` and ``step`` return: the observation text, the info dict and how the episode stands."""

    text: str = Field(description="the env's observation (a str, as gymnasium returns it)")
    info: Dict[str, Any] = Field(default_factory=dict, description="the env's info dict (JSON)")
    terminated: bool = Field(default=False, description="the episode ended with finish")
    truncated: bool = Field(default=False, description="the episode hit max_steps without finishing")


class MobilityState(State):
    """A session's state: ``episode_id`` (MobilePA: the task id) and ``step_count`` of the current episode."""

    env_id: str = Field(description="MobilityBench-v0 or MobilePA-v0")
    done: bool = Field(default=False, description="the current episode has ended (or none was started)")
    total_reward: float = Field(default=0.0, description="sum of the step rewards of the current episode")
    max_steps: Optional[int] = Field(default=None, description="actions per episode before truncation")


class ServerError(RuntimeError):
    """The server answered with an error (``code``: ``CAPACITY_REACHED``, ``EPISODE_OVER``, ...) or closed the
    session (``SESSION_CLOSED``)."""

    def __init__(self, code: str, message: str, details: Optional[Dict[str, Any]] = None):
        self.code = code
        self.details = dict(details or {})
        super().__init__(f"{message} (code: {code})")


#: Error codes after which the server closes the connection (the session is gone).
CLOSING_CODES = ("CAPACITY_REACHED", "FACTORY_ERROR", "SESSION_CLOSED")
MESSAGE_TOO_BIG = 1009  # the WebSocket close code of a message over the server's --max-message-bytes


def _as_action(action: Any) -> MobilityAction:
    return action if isinstance(action, MobilityAction) else MobilityAction(tool_call=action)


class MobilityEnvClient(EnvClient[MobilityAction, MobilityObservation, MobilityState]):
    """OpenEnv client of ``mobility-env serve`` (either env); see the module docstring."""

    def _step_payload(self, action: Any) -> Dict[str, Any]:
        return _as_action(action).model_dump(exclude_defaults=True)

    def _parse_result(self, payload: Dict[str, Any]) -> StepResult[MobilityObservation]:
        reward, done = payload.get("reward"), bool(payload.get("done", False))
        observation = MobilityObservation(**payload.get("observation", {}), reward=reward, done=done)
        return StepResult(observation=observation, reward=reward, done=done)

    def _parse_state(self, payload: Dict[str, Any]) -> MobilityState:
        return MobilityState(**payload)

    async def _send_and_receive(self, message: Dict[str, Any]) -> Dict[str, Any]:
        try:
            await self._send(message)
            response = await self._receive()
        except ConnectionClosed as exc:
            await self._drop_connection()
            reason = exc.rcvd.reason if exc.rcvd is not None and exc.rcvd.reason else str(exc)
            if exc.rcvd is not None and exc.rcvd.code == MESSAGE_TOO_BIG:
                raise ServerError("TOO_LARGE", f"the server refused a message over its --max-message-bytes and "
                                               f"closed this session: {reason}") from exc
            raise ServerError("SESSION_CLOSED", f"the server closed this session: {reason}") from exc
        if response.get("type") == "error":
            data = response.get("data") or {}
            if data.get("code") in CLOSING_CODES:  # the server closes the connection after these
                await self._drop_connection()
            raise ServerError(str(data.get("code", "UNKNOWN")), str(data.get("message", "unknown error")),
                              {k: v for k, v in data.items() if k not in ("code", "message")})
        return response

    async def _drop_connection(self) -> None:
        """Forget a connection the server has closed: the next call opens a new one (a new session)."""
        connection: Any = getattr(self, "_ws", None)  # the base declares it untyped
        self._ws = None
        if connection is not None:
            try:
                await connection.close()
            except (ConnectionClosed, OSError):  # already dead: gone either way
                pass
