"""Talking to an OpenAI-compatible chat-completions server: a guarded client.

:class:`LLMConfig` holds every knob of the LLM baselines (paper defaults: temperature 0.1,
max_tokens 8192, at most 10 steps) and is assembled by :meth:`LLMConfig.from_sources` from
command-line arguments, a TOML models file of named presets, and the ``OPENAI_*``
environment variables. :class:`LLMClient` sends one chat-completions request through the
``openai`` package and returns an :class:`LLMReply` (the assistant message, its tool calls
and the token usage). What a slow, dead or misbehaving server can do to a run is bounded:

* **deadlines.** Each request has a wall-clock deadline (``timeout_s``) covering connect,
  headers and body: at the deadline the client shuts the request's socket down, so a server
  that never answers or trickles one byte every few seconds is abandoned on time (a
  per-read timeout never fires on a trickle). Each episode has one too
  (``episode_timeout_s``): once it passes, the episode ends as a recorded ``deadline``
  failure. Connecting is bounded by ``connect_timeout_s``;
* **retries.** 408, 409, 429 (honouring ``Retry-After``), 5xx, timeouts, connection errors
  and replies that are not a chat completion (a non-JSON body, no ``choices``) are retried
  with exponential backoff (``backoff_s`` doubling, capped at ``backoff_max_s``); after
  ``max_retries`` retries the episode fails with ``llm_unavailable`` (``llm_bad_response``
  when the last reply was unreadable);
* **circuit breaker.** After ``breaker_failures`` consecutive transport-level failures
  (connection refused or reset, timeouts, 5xx, unreadable replies; across requests and
  episodes, reset by any answer) the client raises :class:`EndpointDown` instead of retrying:
  a :class:`~mobility_agents.base.FatalAgentError`, so the runner stops the run. 429s do not
  count (the server is up);
* **busy is not down.** A request abandoned at its deadline (its connection closed, so the
  server may drop the work) is followed by ``GET /models``, asked again every few seconds for up
  to ``busy_wait_s`` (a server that serves one request at a time, like llama-cpp-python, answers it
  only once the abandoned generation ends): a server that answers is busy, not down. That timeout
  does not count towards the breaker (``busy`` in the episode's ``model_calls``, the failure
  message says so), the retry goes to a server that is free again, and the client lowers how many
  requests it sends at once (:class:`_Gate`: halved, at least one, grown back by one per answer),
  so a server that keeps generating after a client gave up is not flooded with more. A refused
  connection, or no answer within the budget, counts as before;
* **rejections.** A 4xx whose message says the prompt is longer than the model's context
  fails the episode with ``context_overflow`` at once; 401 (bad key) raises
  :class:`EndpointRejected` (fatal: no episode can succeed); any other 4xx fails the episode
  with ``llm_request_rejected``;
* **size cap.** A reply whose content or tool-call arguments exceed ``max_reply_chars`` fails
  the episode with ``reply_too_large``; what is recorded is cut to the cap. The HTTP body is
  never read past ``8 * max_reply_chars + 64 KiB`` bytes, so a 5 MB reply is neither stored
  nor held whole;
* **cut-off replies.** A reply with ``finish_reason == "length"`` is never used (not
  executed, never the final answer): the request is sent once more with a note asking for a
  shorter reply; a second cut-off in a row ends the episode as ``truncated_reply``, unless the
  caller gave the reply's JSON schema (the Plan-and-Execute reporter does, its strings bounded
  by length) and ``structured_output`` says how this server takes one: then a last request asks
  for that schema as structured output (no tools), which a grammar-constrained server cannot run
  past. The discarded replies stay in the trajectory, flagged ``"discarded": "cut_off"``;
* **preflight.** :meth:`LLMClient.preflight` sends one 1-token request per model before a
  run and raises :class:`EndpointDown` (unreachable, silent, 5xx), :class:`EndpointRejected`
  (401/403, unknown model, tools refused) or :class:`EndpointProtocolError` (the reply is not
  an OpenAI chat completion).

Configuration (:class:`LLMConfig`, presets, keys) lives in :mod:`mobility_agents.llm.config`; the
reply types, the JSON-in-text protocol and the wire rendering in :mod:`mobility_agents.llm.text`. Both are
re-exported here.
"""

from __future__ import annotations

import email.utils
import functools
import json
import re
import socket
import threading
import time
import urllib.request
import weakref
from typing import Any, Callable, Iterator

from mobility_env.errors import ConfigError

from ..base import AgentFailure, FatalAgentError, ModelCallStats
from .config import (LANGUAGES, ROLES, STRUCTURED_OUTPUTS, TOOL_CHOICES, TOOL_MODES, LLMConfig,  # noqa: F401
                     load_preset, models_label, read_key_file)
from .text import (LLMReply, ToolCallRequest, describe_tools, find_json_object, parse_text_actions,  # noqa: F401
                   render_wire_messages, strip_thinking)

RETRYABLE_STATUS = frozenset({408, 409, 429})
_CONTEXT_OVERFLOW = re.compile(
    r"context[ _-]?length|context[ _-]?window|maximum context|max(?:imum)?_?model_?len|too many tokens|"
    r"prompt is too long|input is too long|(?:longer|more) than the model'?s? (?:context|maximum)|"
    r"exceeds? (?:the )?(?:model'?s? )?(?:maximum |max )?(?:context|token limit|input length)",
    re.IGNORECASE)
# The preflight's tool: proves the server takes ``tools`` + ``tool_choice`` (vLLM without a
# tool parser refuses them) at the cost of a few prompt tokens.
_PREFLIGHT_TOOL = {"type": "function", "function": {
    "name": "ping", "description": "Connectivity check; never needs to be called.",
    "parameters": {"type": "object", "properties": {}}}}


# --------------------------------------------------------------------------- errors
class EndpointError(FatalAgentError):
    """The model endpoint cannot serve this run (base of the three below); stops the run."""

    def __init__(self, message: str, *, base_url: str | None = None):
        self.base_url = base_url
        super().__init__(message)

    def __reduce__(self):  # keep ``base_url`` through pickling (Ray)
        return (_rebuild_endpoint_error, (type(self), str(self), self.base_url))


def _rebuild_endpoint_error(cls: type, message: str, base_url: str | None) -> "EndpointError":
    return cls(message, base_url=base_url)


class EndpointDown(EndpointError):
    """Unreachable, silent or failing (5xx) endpoint: preflight, or the circuit breaker opened."""


class EndpointRejected(EndpointError):
    """The endpoint refuses the run: bad key (401/403), unknown model, or options it does not take."""


class EndpointProtocolError(EndpointError):
    """The endpoint answered, but not with an OpenAI chat completion (found by preflight)."""


# --------------------------------------------------------------------------- transport
class _Expired(Exception):
    """A request's wall-clock deadline passed (its socket was shut down)."""


class _BodyTooLarge(Exception):
    """A reply body grew past the client's byte limit while it was being read."""


def _too_large(exc: BaseException) -> _BodyTooLarge | None:
    """The :class:`_BodyTooLarge` behind ``exc``: newer ``openai`` releases wrap an error raised while a
    body is read into ``APIConnectionError``."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, _BodyTooLarge):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def _proxy_for(url: Any) -> str | None:
    """The proxy the environment (``HTTPS_PROXY``, ``NO_PROXY``…) names for ``url``; never for loopback."""
    host = str(url.host)
    if host in ("127.0.0.1", "localhost", "::1"):
        return None
    proxies = urllib.request.getproxies()
    if not proxies or urllib.request.proxy_bypass(host):
        return None
    return proxies.get(str(url.scheme)) or proxies.get("all")


def _http_module() -> Any:
    """The HTTP library the installed ``openai`` is built on: ``httpx2`` (openai 3) or ``httpx``
    (openai 1 and 2); the same API, but its client must be the one openai checks for."""
    import importlib

    import openai

    for cls in openai.DefaultHttpxClient.__mro__[1:]:
        if cls.__name__ == "Client":
            return importlib.import_module(cls.__module__.split(".")[0])
    raise ImportError("cannot tell which httpx the installed openai package uses")  # pragma: no cover


@functools.lru_cache(maxsize=None)
def _guarded_transport_class() -> type:
    """The httpx transport that records its sockets and caps reply bodies (defined on first
    use: importing the HTTP stack costs time the rule agent should not pay)."""
    http = _http_module()

    class CappedStream(http.SyncByteStream):  # type: ignore[name-defined]  # httpx, found at run time
        def __init__(self, stream: Any, limit: int):
            self._stream, self._limit = stream, limit

        def __iter__(self) -> Iterator[bytes]:
            seen = 0
            for chunk in self._stream:
                seen += len(chunk)
                if seen > self._limit:
                    raise _BodyTooLarge(f"the reply body passed {self._limit:,} bytes and was dropped unread")
                yield chunk

        def close(self) -> None:
            self._stream.close()

    class GuardedTransport(http.BaseTransport):  # type: ignore[name-defined]  # httpx, found at run time
        """Remembers every socket it opens, so a deadline can shut them down and wake a
        blocked read (a per-read timeout never fires on a trickle); caps reply bodies.

        Its client belongs to one thread, so the sockets it holds are that thread's: the one
        in use and idle keep-alive ones (shutting those down only costs a reconnect).
        """

        def __init__(self, max_body_bytes: int):
            self._max_body_bytes = max_body_bytes
            self._inner: Any = None
            self._sockets: weakref.WeakSet[socket.socket] = weakref.WeakSet()
            self._lock = threading.Lock()

        def handle_request(self, request: Any) -> Any:
            if self._inner is None:
                self._inner = http.HTTPTransport(proxy=_proxy_for(request.url))
            previous = request.extensions.get("trace")

            def trace(event: str, info: dict[str, Any]) -> None:
                if event.endswith((".connect_tcp.complete", ".start_tls.complete")):
                    self._remember(info.get("return_value"))
                if previous is not None:
                    previous(event, info)

            request.extensions = {**request.extensions, "trace": trace}
            response = self._inner.handle_request(request)
            return http.Response(status_code=response.status_code, headers=response.headers,
                                 stream=CappedStream(response.stream, self._max_body_bytes),
                                 extensions=response.extensions)

        def _remember(self, stream: Any) -> None:
            sock = stream.get_extra_info("socket") if stream is not None else None
            if isinstance(sock, socket.socket):
                with self._lock:
                    self._sockets.add(sock)

        def abort(self) -> None:
            """Shut every socket down: a thread blocked reading one wakes with an error."""
            with self._lock:
                sockets = list(self._sockets)
            for sock in sockets:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:  # already closed
                    pass

        def close(self) -> None:
            if self._inner is not None:
                self._inner.close()

    return GuardedTransport


class _Channel:
    """One thread's way to the endpoint: an ``openai.OpenAI`` over a guarded transport."""

    def __init__(self, config: LLMConfig):
        import openai

        http = _http_module()
        self.transport = _guarded_transport_class()(config.max_body_bytes)
        # trust_env=False: the transport picks the proxy itself (a mounted proxy transport
        # would bypass the deadline and the size cap).
        http_client = http.Client(transport=self.transport, trust_env=False, follow_redirects=True,
                                  timeout=http.Timeout(config.timeout_s, connect=config.connect_timeout_s))
        # Local servers accept any key; retries are ours (deadlines, breaker), not the SDK's.
        self.openai = openai.OpenAI(base_url=config.base_url, api_key=config.api_key or "EMPTY",
                                    max_retries=0, http_client=http_client)


#: Seconds one ``GET /models`` of the busy-or-down probe waits before it is asked again.
PROBE_S = 5.0


class _Gate:
    """How many requests one client sends at once: unlimited until the server is found busy, then half of
    those in flight (at least one), grown back by one per answered request."""

    #: Past this many, the limit is lifted again.
    CEILING = 64

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self.limit: int | None = None
        self.in_flight = 0

    def __enter__(self) -> "_Gate":
        with self._cond:
            while self.limit is not None and self.in_flight >= self.limit:
                self._cond.wait()
            self.in_flight += 1
        return self

    def __exit__(self, *exc: Any) -> None:
        with self._cond:
            self.in_flight -= 1
            self._cond.notify()

    def busy(self) -> None:
        with self._cond:
            self.limit = max(1, self.in_flight // 2)

    def answered(self) -> None:
        with self._cond:
            if self.limit is not None:
                self.limit = None if self.limit + 1 >= self.CEILING else self.limit + 1
                self._cond.notify()


# --------------------------------------------------------------------------- client
class LLMClient:
    """One OpenAI-compatible endpoint; agents call :meth:`complete` (and :meth:`preflight`).

    Each thread gets its own ``openai.OpenAI`` client and connection pool, created lazily and
    never pickled, so an agent holding an ``LLMClient`` can be shipped to Ray workers and a
    deadline only ever shuts down the sockets of the request that passed it. The circuit
    breaker's count is shared by all threads. ``sleep`` is injectable for tests.
    """

    def __init__(self, config: LLMConfig, *, sleep: Callable[[float], None] = time.sleep):
        self.config = config
        self._sleep = sleep
        self._local = threading.local()
        self._lock = threading.Lock()
        self._gate = _Gate()
        self._served_model: str | None = None
        self._consecutive_failures = 0
        self.requests = 0
        self.retries = 0

    def __repr__(self) -> str:
        key = "'***'" if self.config.api_key else "None"
        return f"LLMClient(base_url={self.config.base_url!r}, model={self.config.model!r}, api_key={key})"

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_local"], state["_lock"], state["_gate"] = None, None, None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._local = threading.local()
        self._lock = threading.Lock()
        self._gate = _Gate()

    def _channel(self) -> _Channel:
        channel = getattr(self._local, "channel", None)
        if channel is None:
            channel = self._local.channel = _Channel(self.config)
        return channel

    @property
    def openai(self) -> Any:
        """This thread's ``openai.OpenAI`` client."""
        return self._channel().openai

    @property
    def endpoint(self) -> str:
        return self.config.base_url or "the default OpenAI endpoint"

    # ------------------------------------------------------------------ public
    def model_for(self, role: str, *, session: Any = None) -> str:
        """The model name for ``role``; asks the server (``GET /models``) when none is configured."""
        model = self.config.model_for(role)
        if model:
            return model
        if self._served_model is None:
            listing = self._request(lambda api, timeout: api.models.list(timeout=timeout), what="GET /models",
                                    session=session, check=_listing_problem)[0]
            self._served_model = _only_model(listing, AgentFailure, "llm_request_rejected")
        return self._served_model

    def complete(self, messages: list[dict[str, Any]], *, role: str, tools: list[dict[str, Any]] | None = None,
                 session: Any = None, schema: dict[str, Any] | None = None) -> LLMReply:
        """One chat completion for ``role``; ``tools`` are offered per the config's tool mode.

        ``schema``: the JSON schema of the reply the role is asked for (strings bounded by
        ``maxLength``), used only as the last try after two cut-offs when the config's
        ``structured_output`` is set (see the module docstring).

        ``session`` (an :class:`~mobility_agents.base.EpisodeSession`) gets the token usage
        of every reply under ``role`` and the call counts in ``session.model_calls``; its
        ``deadline`` bounds the requests. Raises ``AgentFailure`` (the episode's failure) or
        :class:`EndpointError` (the run's end); see the module docstring.
        """
        model = self.model_for(role, session=session)
        json_mode = self.config.tool_mode == "json"
        request = self._chat_request(model, messages, tools)
        reply = self._complete_once(request, role, model, session, json_mode=json_mode and bool(tools),
                                    offered=bool(tools))
        if reply.finish_reason != "length":
            return reply
        # Cut off at max_tokens: never act on it; ask once more for a shorter reply.
        from ..prompts import render_prompt

        stats = session.model_calls if session is not None else ModelCallStats()
        stats.cutoffs += 1
        note = render_prompt("cutoff", self.config.language)
        discarded = [_discarded(reply.message, "cut_off"), {"role": "user", "content": note, "discarded": "cut_off"}]
        retry = {**request, "messages": _with_user_note(request["messages"], note)}
        second = self._complete_once(retry, role, model, session, json_mode=json_mode and bool(tools),
                                     offered=bool(tools))
        if second.finish_reason != "length":
            second.discarded = discarded
            second.attempts += reply.attempts
            return second
        stats.cutoffs += 1
        discarded.append(_discarded(second.message, "cut_off"))
        tries = 2
        if schema is not None and self.config.structured_output != "none":
            tries += 1
            try:
                third = self._complete_once(self._structured(retry, schema), role, model, session, json_mode=False,
                                            offered=False, max_retries=0)
            except AgentFailure as exc:  # one attempt: a server that refuses structured output (some answer 500)
                if exc.kind not in ("llm_request_rejected", "llm_unavailable", "llm_bad_response"):
                    raise
                raise AgentFailure("truncated_reply", f"chat completion ({role}): two replies in a row stopped at "
                                   f"max_tokens={self.config.max_tokens}, and the structured-output retry failed "
                                   f"(structured_output={self.config.structured_output!r}; `mobility-env models "
                                   f"check` tests it): {exc}"[:1000], transcript=discarded) from None
            if third.finish_reason != "length":
                third.discarded = discarded
                third.attempts += reply.attempts + second.attempts
                return third
            stats.cutoffs += 1
            discarded.append(_discarded(third.message, "cut_off"))
        raise AgentFailure("truncated_reply",
                           f"chat completion ({role}): {tries} replies in a row stopped at max_tokens="
                           f"{self.config.max_tokens} (finish_reason 'length'); none was used",
                           transcript=discarded)

    def prompt_tokens(self, messages: list[dict[str, Any]], *, role: str,
                      tools: list[dict[str, Any]] | None = None) -> int | None:
        """The prompt tokens the server counts for ``messages`` (``tools`` offered per the tool mode, as a run
        offers them): ``usage.prompt_tokens`` of a 1-token completion; None when the server reports none.
        Raises as :meth:`complete` does."""
        model = self.model_for(role)
        request = {**self._chat_request(model, messages, tools), "max_tokens": 1}
        reply = self._complete_once(request, role, model, None, json_mode=False, offered=False)
        return reply.input_tokens or None

    def complete_structured(self, messages: list[dict[str, Any]], *, role: str, schema: dict[str, Any],
                            session: Any = None) -> LLMReply:
        """One chat completion asking for ``schema`` as structured output (the config's ``structured_output``,
        which must not be ``"none"``): one attempt (a server that cannot do it may answer 500, not worth
        retrying), no tools, no cut-off retry."""
        if self.config.structured_output == "none":
            raise ConfigError("structured output is off (structured_output = 'none')")
        model = self.model_for(role, session=session)
        request = self._structured(self._chat_request(model, messages, None), schema)
        return self._complete_once(request, role, model, session, json_mode=False, offered=False, max_retries=0)

    def _structured(self, request: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
        """``request`` asking for ``schema`` as structured output (``structured_output``), without tools."""
        structured = {key: value for key, value in request.items() if key not in ("tools", "tool_choice")}
        if self.config.structured_output == "json_schema":
            structured["response_format"] = {"type": "json_schema",
                                             "json_schema": {"name": "reply", "schema": schema}}
        else:
            structured["response_format"] = {"type": "json_object", "schema": schema}
        return structured

    def preflight(self, roles: tuple[str, ...]) -> dict[str, Any]:
        """Check the endpoint before a run: one 1-token chat completion per distinct model.

        The request has the run's shape (model, sampling, ``tools`` + ``tool_choice`` in
        native mode, ``extra_body``), so a server that would refuse every episode refuses
        here. Raises :class:`EndpointDown` (cannot connect, no answer within
        ``preflight_timeout_s``, 5xx), :class:`EndpointRejected` (401/403: the key; another
        4xx: unknown model, tools not enabled…) or :class:`EndpointProtocolError` (the answer
        is not an OpenAI chat completion). A 429 passes: the server is up and took the key.
        Returns ``{"base_url", "models": {role: model}, "tool_mode"}``.
        """
        if self.config.base_url is None and not self.config.api_key:
            raise ConfigError("no model server given: --base-url (or OPENAI_BASE_URL) and the API key (OPENAI_API_KEY, "
                              "--api-key-env, --api-key-file) are both unset, so the run would go to OpenAI's endpoint "
                              "without a key; set OPENAI_API_KEY for OpenAI, or --base-url http://127.0.0.1:PORT/v1 "
                              "for a local server (OPENAI_API_KEY=EMPTY when it needs no key)")
        deadline = time.monotonic() + self.config.preflight_timeout_s
        models: dict[str, str] = {}
        for role in roles:
            model = self.config.model_for(role)
            if model is None:
                if self._served_model is None:
                    listing = self._probe(lambda api, timeout: api.models.list(timeout=timeout), deadline,
                                          "GET /models")
                    if listing is None:
                        raise EndpointRejected(f"{self.endpoint}: GET /models was rate-limited, so the served model "
                                               "is unknown; pass --model", base_url=self.config.base_url)
                    problem = _listing_problem(listing)
                    if problem:
                        raise EndpointProtocolError(f"{self.endpoint}: GET /models is not an OpenAI model list "
                                                    f"({problem}); is base_url the server's /v1 address?",
                                                    base_url=self.config.base_url)
                    self._served_model = _only_model(listing, EndpointRejected, None, base_url=self.config.base_url)
                model = self._served_model
            models[role] = model
        for model in dict.fromkeys(models.values()):
            tools = [_PREFLIGHT_TOOL] if self.config.tool_mode == "native" else None
            request = {**self._chat_request(model, [{"role": "user", "content": "ping"}], tools), "max_tokens": 1}
            what = f"a 1-token chat completion with model {model!r}"
            response = self._probe(lambda api, timeout: api.chat.completions.create(**request, timeout=timeout),
                                   deadline, what)
            problem = None if response is None else _completion_problem(response)
            if problem:
                raise EndpointProtocolError(f"{self.endpoint}: answered {what} with something that is not an OpenAI "
                                            f"chat completion ({problem}); is base_url the server's /v1 address?",
                                            base_url=self.config.base_url)
        self._answered()
        return {"base_url": self.config.base_url, "models": models, "tool_mode": self.config.tool_mode}

    # ------------------------------------------------------------------ requests
    def _chat_request(self, model: str, messages: list[dict[str, Any]],
                      tools: list[dict[str, Any]] | None) -> dict[str, Any]:
        json_mode = self.config.tool_mode == "json"
        request: dict[str, Any] = {
            "model": model,
            "messages": render_wire_messages(messages, tools if json_mode else None, self.config.language),
            "temperature": self.config.temperature,
            "max_tokens": self.config.max_tokens,
        }
        if tools and not json_mode:
            request["tools"] = tools
            request["tool_choice"] = self.config.tool_choice
        if self.config.seed is not None:
            request["seed"] = self.config.seed
        if self.config.extra_body:
            request["extra_body"] = dict(self.config.extra_body)
        return request

    def _complete_once(self, request: dict[str, Any], role: str, model: str, session: Any, *,
                       json_mode: bool, offered: bool, max_retries: int | None = None) -> LLMReply:
        what = f"chat completion ({role})"
        response, attempts = self._request(
            lambda api, timeout: api.chat.completions.create(**request, timeout=timeout),
            what=what, session=session, check=_completion_problem, max_retries=max_retries)
        return self._reply(response, model, attempts, json_mode=json_mode, offered=offered, role=role,
                           session=session, what=what)

    def _send_before(self, send: Callable[[Any, Any], Any], deadline: float) -> Any:
        """``send(openai_client, timeout)``, abandoned at ``deadline`` (raises ``_Expired``)."""
        import openai

        http = _http_module()
        channel = self._channel()
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise _Expired()
        expired = threading.Event()

        def expire() -> None:
            expired.set()
            channel.transport.abort()

        timer = threading.Timer(remaining, expire)
        timer.daemon = True
        timer.start()
        try:
            # Per-read timeouts bounded by the deadline too: the timer is the guarantee, these the fast path.
            timeout = http.Timeout(remaining, connect=min(self.config.connect_timeout_s, remaining))
            return send(channel.openai, timeout)
        except openai.APIConnectionError:  # APITimeoutError included
            if expired.is_set() or time.monotonic() >= deadline:
                raise _Expired() from None
            raise
        finally:
            timer.cancel()

    def _request(self, send: Callable[[Any, Any], Any], *, what: str, session: Any,
                 check: Callable[[Any], str | None], max_retries: int | None = None) -> tuple[Any, int]:
        """Send with retries (``max_retries``, default the config's), deadlines and the circuit breaker;
        ``(response, attempts)``."""
        import openai

        config = self.config
        retries = config.max_retries if max_retries is None else max_retries
        stats = session.model_calls if session is not None else ModelCallStats()
        episode_deadline = session.deadline if session is not None else None
        last, kind = "", "llm_unavailable"
        for attempt in range(retries + 1):
            started = time.monotonic()
            if episode_deadline is not None and started >= episode_deadline:
                raise self._deadline_failure(what)
            deadline = started + config.timeout_s
            cut_by_episode = episode_deadline is not None and episode_deadline < deadline
            if cut_by_episode:
                assert episode_deadline is not None  # cut_by_episode says so
                deadline = episode_deadline
            stats.requests += 1
            self.requests += 1
            if attempt:
                stats.retries += 1
                self.retries += 1
            wait: float | None = None
            endpoint_fault = True
            try:
                with self._gate:
                    response = self._send_before(send, deadline)
            except _Expired:
                if cut_by_episode:
                    raise self._deadline_failure(what) from None
                stats.timeouts += 1
                last, kind = f"no complete reply within the {config.timeout_s:g} s request deadline", "llm_unavailable"
                budget = max(0.0, min(config.busy_wait_s, (episode_deadline or float("inf")) - time.monotonic()))
                if self._answers_within(budget):
                    endpoint_fault = False  # busy, not down: the breaker is for servers that are gone
                    stats.busy += 1
                    self._gate.busy()
                    last += ("; the server then answered GET /models, so it was busy (generating), not down: "
                             "raise --timeout, or lower --workers / --concurrency")
                else:
                    last += (f"; GET /models did not answer within {budget:.0f} s either: the server is down, "
                             "unreachable or hung")
            except _BodyTooLarge as exc:
                self._answered()
                raise AgentFailure("reply_too_large", f"{what}: {exc} (max_reply_chars={config.max_reply_chars:,})") \
                    from None
            except openai.APIStatusError as exc:
                status, detail = exc.status_code, self._redact(_error_text(exc))
                if status != 429 and _CONTEXT_OVERFLOW.search(detail):
                    self._answered()
                    raise AgentFailure("context_overflow", f"{what}: HTTP {status}: {detail[:500]}") from None
                if status == 401:
                    raise EndpointRejected(f"{self.endpoint}: {what}: HTTP 401 ({detail[:300]}); check the API key "
                                           "(OPENAI_API_KEY, api_key_env or api_key_file)",
                                           base_url=config.base_url) from None
                if status not in RETRYABLE_STATUS and status < 500:
                    self._answered()
                    hint = ""
                    if re.search(r"tool", detail, re.IGNORECASE):
                        hint = " (if the server has no function calling, use tool_mode='json')"
                    raise AgentFailure("llm_request_rejected", f"{what}: HTTP {status}: {detail[:500]}{hint}") from None
                endpoint_fault = status >= 500  # 408/409/429: the server is up, just busy
                wait = _retry_after(exc.response)
                last, kind = f"HTTP {status}: {detail[:300]}", "llm_unavailable"
            except openai.APIConnectionError as exc:
                too_large = _too_large(exc)
                if too_large is not None:
                    self._answered()
                    raise AgentFailure("reply_too_large", f"{what}: {too_large} "
                                                          f"(max_reply_chars={config.max_reply_chars:,})") from None
                last, kind = f"connection error: {_cause_text(exc)}", "llm_unavailable"
            except ValueError as exc:  # a 200 whose body is not JSON (a proxy's error page)
                last, kind = f"the reply body is not JSON ({exc})", "llm_bad_response"
            except RecursionError:  # a body nested deeper than any JSON reader goes: as bad as no JSON
                last, kind = "the reply body is nested too deep to read as JSON", "llm_bad_response"
            else:
                problem = check(response)
                if problem is None:
                    self._answered()
                    return response, attempt + 1
                last, kind = f"the reply is not a chat completion: {problem}", "llm_bad_response"
            finally:
                stats.wall_s += time.monotonic() - started
            if endpoint_fault:
                self._endpoint_failed(what, last)
            if attempt < retries:
                delay = config.backoff_s * (2 ** attempt)
                if wait is not None:
                    delay = max(delay, wait)
                delay = min(delay, config.backoff_max_s)
                if episode_deadline is not None and time.monotonic() + delay >= episode_deadline:
                    raise self._deadline_failure(what)
                self._sleep(delay)
                stats.wall_s += delay
        raise AgentFailure(kind, f"{what}: gave up after {retries + 1} attempt(s) to {self.endpoint}; "
                                 f"last error: {last}")

    def _probe(self, send: Callable[[Any, Any], Any], deadline: float, what: str) -> Any:
        """One preflight request; its failures as :class:`EndpointError`; None on a 429/408/409."""
        import openai

        base_url, where = self.config.base_url, self.endpoint
        try:
            return self._send_before(send, deadline)
        except _Expired:
            raise EndpointDown(f"{where}: no answer to {what} within {self.config.preflight_timeout_s:g} s "
                               "(preflight_timeout_s); is the server up and its model loaded?",
                               base_url=base_url) from None
        except _BodyTooLarge as exc:
            raise EndpointProtocolError(f"{where}: {what}: {exc}", base_url=base_url) from None
        except openai.APIStatusError as exc:
            status, detail = exc.status_code, self._redact(_error_text(exc))[:300]
            if status in (401, 403):
                raise EndpointRejected(f"{where}: {what}: HTTP {status} ({detail}); check the API key "
                                       "(OPENAI_API_KEY, api_key_env or api_key_file)", base_url=base_url) from None
            if status >= 500:
                raise EndpointDown(f"{where}: {what}: HTTP {status} ({detail})", base_url=base_url) from None
            if status in RETRYABLE_STATUS:
                return None
            hint = " (if the server has no function calling, use tool_mode='json')" \
                if re.search(r"tool", detail, re.IGNORECASE) else ""
            raise EndpointRejected(f"{where}: {what}: HTTP {status} ({detail}){hint}", base_url=base_url) from None
        except openai.APIConnectionError as exc:
            too_large = _too_large(exc)
            if too_large is not None:
                raise EndpointProtocolError(f"{where}: {what}: {too_large}", base_url=base_url) from None
            raise EndpointDown(f"{where}: cannot connect ({_cause_text(exc)})", base_url=base_url) from None
        except ValueError as exc:
            raise EndpointProtocolError(f"{where}: {what}: the reply body is not JSON ({exc}); is base_url the "
                                        "server's /v1 address?", base_url=base_url) from None
        except RecursionError:
            raise EndpointProtocolError(f"{where}: {what}: the reply body is nested too deep to read as JSON",
                                        base_url=base_url) from None

    def _answers_within(self, budget_s: float) -> bool:
        """After a timed-out request: does the server answer ``GET /models`` within ``budget_s`` (busy: a server
        that serves one request at a time answers it once the abandoned generation ends) or not (down, or hung)?
        Asked again every few seconds; a refused connection is down at once."""
        import openai

        end = time.monotonic() + budget_s
        while True:
            now = time.monotonic()
            if now >= end:
                return False
            try:
                self._send_before(lambda api, timeout: api.models.list(timeout=timeout), min(end, now + PROBE_S))
            except openai.APIStatusError as exc:
                return exc.status_code < 500
            except _Expired:
                continue  # no answer yet: still generating, or hung; ask again until the budget is spent
            except Exception:  # noqa: BLE001  (refused, reset, unreadable: not a server at work)
                return False
            return True

    # ------------------------------------------------------------------ circuit breaker
    def _answered(self) -> None:
        with self._lock:
            self._consecutive_failures = 0
        self._gate.answered()

    def _endpoint_failed(self, what: str, last: str) -> None:
        with self._lock:
            self._consecutive_failures += 1
            count = self._consecutive_failures
        if count >= self.config.breaker_failures:
            raise EndpointDown(f"{self.endpoint}: {count} transport-level failures in a row (breaker_failures="
                               f"{self.config.breaker_failures}); the last, on {what}: {last}. The run stops here; "
                               "continue it with --resume --retry-failed once the server is back",
                               base_url=self.config.base_url)

    def _deadline_failure(self, what: str) -> AgentFailure:
        limit = self.config.episode_timeout_s
        detail = f" (episode_timeout_s={limit:g})" if limit is not None else ""
        return AgentFailure("deadline", f"{what}: the episode passed its wall-clock deadline{detail}")

    def _redact(self, text: str) -> str:
        key = self.config.api_key
        return text.replace(key, "***") if key and len(key) >= 4 else text

    # ------------------------------------------------------------------ replies
    def _reply(self, response: Any, model: str, attempts: int, *, json_mode: bool, offered: bool, role: str,
               session: Any, what: str) -> LLMReply:
        choice = response.choices[0]
        message = choice.message
        raw = getattr(message, "content", None)
        raw = _unicode(raw if isinstance(raw, str) else
                       ("" if raw is None else json.dumps(raw, ensure_ascii=False, default=str)))
        usage = getattr(response, "usage", None)
        input_tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
        output_tokens = int(getattr(usage, "completion_tokens", 0) or 0)
        if session is not None:
            session.add_usage(role, input_tokens, output_tokens)
        calls: list[ToolCallRequest] = []
        if not json_mode:
            for index, call in enumerate(getattr(message, "tool_calls", None) or []):
                function = getattr(call, "function", None)
                name = getattr(function, "name", None)
                arguments = getattr(function, "arguments", None)
                if not isinstance(arguments, str):  # some servers send an object
                    arguments = json.dumps(arguments if arguments is not None else {}, ensure_ascii=False, default=str)
                arguments = _unicode(arguments)
                name = _unicode(name) if isinstance(name, str) else name
                call_id = getattr(call, "id", None)
                if not isinstance(call_id, str) or not call_id or any(c.id == call_id for c in calls):
                    call_id = f"call_{index}"  # the id must match our tool message, so it must be unique
                action = {"type": "function", "function": {"name": name, "arguments": arguments}}
                calls.append(ToolCallRequest(call_id, name if isinstance(name, str) else None, arguments, action))
        self._check_size(raw, calls, what)
        content = strip_thinking(raw)
        if offered and not calls and content and (json_mode or "<tool_call>" in content
                                                  or re.match(r"\s*(```(json)?\s*)?\{\s*\"name\"", content)):
            # json mode, or a server that left the model's tool-call text unparsed
            calls = parse_text_actions(content)
        if offered and session is not None:
            session.model_calls.tools_offered += 1
            session.model_calls.tool_calls += len(calls)
        assistant: dict[str, Any] = {"role": "assistant", "content": content}
        if calls:
            assistant["tool_calls"] = [{"id": c.id, "type": "function",
                                        "function": {"name": c.name or "", "arguments": c.arguments}} for c in calls]
        return LLMReply(message=assistant, content=content, calls=calls, input_tokens=input_tokens,
                        output_tokens=output_tokens, finish_reason=getattr(choice, "finish_reason", None),
                        model=str(getattr(response, "model", None) or model), attempts=attempts)

    def _check_size(self, content: str, calls: list[ToolCallRequest], what: str) -> None:
        """``reply_too_large`` when the content or a call's arguments pass ``max_reply_chars``."""
        cap = self.config.max_reply_chars
        over = [f"content ({len(content):,} characters)"] if len(content) > cap else []
        over += [f"arguments of {c.name or 'a tool call'} ({len(c.arguments):,} characters)"
                 for c in calls if len(c.arguments) > cap]
        if not over:
            return
        record: dict[str, Any] = {"role": "assistant", "content": _cut(content, cap), "discarded": "reply_too_large"}
        if calls:
            record["tool_calls"] = [{"id": c.id, "type": "function",
                                     "function": {"name": c.name or "", "arguments": _cut(c.arguments, cap)}}
                                    for c in calls]
        raise AgentFailure("reply_too_large", f"{what}: the reply's {' and '.join(over)} passed max_reply_chars="
                                              f"{cap:,}; it was not used and is recorded cut to that size",
                           transcript=[record])


def _unicode(text: str) -> str:
    """``text`` as valid Unicode: a lone surrogate (a JSON escape no UTF-8 encodes, sent by some servers) read as
    U+FFFD, as a UTF-8 decoder reads a broken sequence. Kept, it made the next request unsendable (the reply goes
    back in the history), retried as 'not JSON' until the episode was lost."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else f"{text[:limit]}…[cut: {len(text):,} characters in all]"


def _discarded(message: dict[str, Any], reason: str) -> dict[str, Any]:
    return {**message, "discarded": reason}


def _with_user_note(wire: list[dict[str, Any]], note: str) -> list[dict[str, Any]]:
    """``wire`` plus a user note, merged into a final user message (templates that demand
    alternating roles refuse two user turns in a row)."""
    if wire and wire[-1].get("role") == "user" and isinstance(wire[-1].get("content"), str):
        return wire[:-1] + [{**wire[-1], "content": f"{wire[-1]['content']}\n\n{note}"}]
    return wire + [{"role": "user", "content": note}]


def _completion_problem(response: Any) -> str | None:
    """Why ``response`` is not a usable chat completion, or None."""
    choices = getattr(response, "choices", None)
    if not isinstance(choices, list):
        return "no 'choices' list"
    if not choices:
        return "'choices' is empty"
    if getattr(choices[0], "message", None) is None:
        return "the first choice has no 'message'"
    return None


def _listing_problem(listing: Any) -> str | None:
    data = getattr(listing, "data", None)
    return None if isinstance(data, list) else "no 'data' list"


def _only_model(listing: Any, error: type, kind: str | None, *, base_url: str | None = None) -> str:
    names = [m.id for m in listing.data if isinstance(getattr(m, "id", None), str)]
    if len(names) == 1:
        return names[0]
    message = (f"no model configured and the server lists {len(names)} models "
               f"({', '.join(names[:5]) or 'none'}); pass --model")
    raise error(kind, message) if kind is not None else error(message, base_url=base_url)


def _cause_text(exc: BaseException) -> str:
    """What really failed under an ``openai.APIConnectionError`` ("Connection error." says little)."""
    cause = exc.__cause__ or exc.__context__
    return f"{type(cause).__name__}: {cause}" if cause is not None else str(exc)


def _error_text(exc: Any) -> str:
    body = getattr(exc, "body", None)
    parts = [str(getattr(exc, "message", "") or exc)]
    if body is not None:
        parts.append(json.dumps(body, ensure_ascii=False, default=str) if not isinstance(body, str) else body)
    return " ".join(parts)


def _retry_after(response: Any) -> float | None:
    """Seconds from ``retry-after-ms`` / ``Retry-After`` (seconds or an HTTP date), if any."""
    headers = getattr(response, "headers", None) or {}
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        try:
            parsed = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        return max(0.0, parsed.timestamp() - time.time())
