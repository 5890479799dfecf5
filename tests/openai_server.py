"""A real OpenAI-compatible HTTP server on 127.0.0.1 that plays a scripted model.

``ScriptedOpenAIServer(script)`` serves ``POST /v1/chat/completions`` and ``GET /v1/models``
in the OpenAI wire format from a ``ThreadingHTTPServer`` bound to an ephemeral port, in a
background thread. Each chat request consumes the next :class:`Turn` of the script:

* :func:`tool_turn` / :func:`text_turn`: a 200 ``chat.completion`` with an assistant message
  (``tool_calls`` whose ``arguments`` are JSON *strings*, as on the wire, or plain content)
  and a ``usage`` block (omitted when ``usage=None``);
* HTTP faults: :func:`rate_limited` (429 + ``Retry-After``), :func:`server_error` (500),
  :func:`context_overflow` (400 ``context_length_exceeded``), :func:`bad_request` (400);
  :func:`delayed` answers only after a delay (longer than the client's timeout);
* transport faults: :func:`hang` (reads the request, never answers), :func:`trickle` (the
  whole response, status line included, one byte every N seconds), :func:`garbage` (a 200
  whose body is not JSON), :func:`connection_reset` (a TCP RST instead of an answer);
* reply faults: :func:`empty_choices` (a completion with ``choices: []``),
  :func:`huge_reply` (a reply of N bytes, e.g. 5 MB), :func:`cut_off` (``finish_reason``
  ``"length"``), :func:`raw_payload` (any 200 JSON body);

malformed tool calls are plain tool turns with a broken ``arguments`` string or an unknown name.

Like a strict hosted API it checks the conversation it receives (roles, ``tool`` messages
answering the preceding assistant ``tool_calls``, the ``tools`` and ``tool_choice`` shapes)
and answers a violation with a 400; with ``api_key=...`` a request without that bearer key
gets a 401. Every received request body is recorded for assertions. A request after the
script ran out gets a 500 and is counted in ``overruns``. Faulty handlers end when the
client hangs up or the server stops, so an abandoned request leaves no thread behind.

:func:`react_script` and :func:`plan_execute_script` turn a list of actions (an episode's
gold trajectory, see :func:`gold_actions`) into the script that makes each agent play it.
"""

from __future__ import annotations

import json
import select
import socket
import struct
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Iterable

MODEL = "scripted-model"


@dataclass
class Turn:
    """One scripted answer to one chat-completions request."""

    status: int = 200
    message: dict[str, Any] | None = None
    usage: tuple[int, int] | None = (0, 0)
    finish_reason: str | None = None
    error: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    fault: str | None = None  # "hang", "trickle", "reset"
    trickle_interval_s: float = 3.0
    payload: Any = None  # a 200 JSON body sent as is instead of a completion built from ``message``
    raw_body: bytes | None = None  # a 200 body sent byte for byte (not JSON at all)


@dataclass
class ReceivedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    at: float


def tool_call(name: str, arguments: Any, call_id: str | None = None) -> dict[str, Any]:
    """A wire tool call; ``arguments`` dicts are JSON-encoded, strings are sent verbatim."""
    text = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": text}}


def tool_turn(*calls: dict[str, Any], content: str | None = None, usage: tuple[int, int] | None = (100, 10)) -> Turn:
    numbered = [{**c, "id": c.get("id") or f"call_{i}"} for i, c in enumerate(calls)]
    return Turn(message={"role": "assistant", "content": content, "tool_calls": numbered}, usage=usage,
                finish_reason="tool_calls")


def text_turn(content: str, usage: tuple[int, int] | None = (100, 10)) -> Turn:
    return Turn(message={"role": "assistant", "content": content}, usage=usage, finish_reason="stop")


def finish_turn(arguments: dict[str, Any], usage: tuple[int, int] | None = (100, 10)) -> Turn:
    return tool_turn(tool_call("finish", arguments), usage=usage)


def rate_limited(retry_after: float = 0.0) -> Turn:
    return Turn(status=429, headers={"Retry-After": f"{retry_after:g}"},
                error={"message": "Rate limit reached, retry later", "type": "requests", "code": "rate_limit_exceeded"})


def server_error(status: int = 500) -> Turn:
    return Turn(status=status, error={"message": "The server had an error while processing your request.",
                                      "type": "server_error", "code": None})


def context_overflow(limit: int = 8192) -> Turn:
    return Turn(status=400, error={
        "message": f"This model's maximum context length is {limit} tokens. However, your messages resulted in "
                   f"{limit + 1234} tokens. Please reduce the length of the messages.",
        "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"})


def bad_request(message: str = "Invalid value for 'model'") -> Turn:
    return Turn(status=400, error={"message": message, "type": "invalid_request_error", "code": None})


def delayed(turn: Turn, seconds: float) -> Turn:
    return Turn(**{**turn.__dict__, "delay_s": seconds})


def hang() -> Turn:
    """Read the request, then say nothing until the client hangs up (or the server stops)."""
    return Turn(fault="hang")


def trickle(turn: Turn | None = None, interval_s: float = 3.0) -> Turn:
    """Send ``turn``'s whole HTTP response, status line included, one byte every ``interval_s``.

    No single read waits longer than ``interval_s``, so only a total deadline stops it.
    """
    base = turn or text_turn("slow answer")
    return Turn(**{**base.__dict__, "fault": "trickle", "trickle_interval_s": interval_s})


def garbage(body: str = "<html><body>502 Bad Gateway</body></html>") -> Turn:
    """A 200 with ``Content-Type: application/json`` whose body is not JSON (a broken proxy)."""
    return Turn(raw_body=body.encode("utf-8"))


def connection_reset() -> Turn:
    """Close the connection with a TCP RST instead of answering."""
    return Turn(fault="reset")


def raw_payload(payload: Any) -> Turn:
    """A 200 whose JSON body is ``payload`` exactly (not necessarily a chat completion)."""
    return Turn(payload=payload)


def empty_choices() -> Turn:
    return raw_payload({"id": "chatcmpl-empty", "object": "chat.completion", "created": 1_700_000_000,
                        "model": MODEL, "choices": [],
                        "usage": {"prompt_tokens": 5, "completion_tokens": 0, "total_tokens": 5}})


def huge_reply(size_bytes: int = 5 * 1024 * 1024, *, as_tool_arguments: bool = False) -> Turn:
    """A reply of about ``size_bytes`` of model output (content, or one tool call's arguments)."""
    if as_tool_arguments:
        return tool_turn(tool_call("query_poi", {"keywords": "x" * size_bytes}))
    return text_turn("x" * size_bytes)


def cut_off(content: str = "The answer is", *, calls: tuple[dict[str, Any], ...] = ()) -> Turn:
    """A reply stopped by ``max_tokens``: ``finish_reason`` is ``"length"``."""
    turn = tool_turn(*calls, content=content) if calls else text_turn(content)
    return Turn(**{**turn.__dict__, "finish_reason": "length"})


def chat_template(*, tool_messages: bool = True) -> Callable[[dict[str, Any]], str]:
    """A request's prompt as a ChatML-like template renders it (tool schemas, then each message); with
    ``tool_messages=False`` it has no branch for ``tool`` messages and drops them, as llama-cpp-python's
    ``chatml-function-calling`` does. For :class:`ScriptedOpenAIServer`'s ``template``."""
    def render(body: dict[str, Any]) -> str:
        parts = [json.dumps(body.get("tools") or [], ensure_ascii=False)]
        for message in body.get("messages") or []:
            if message.get("role") == "tool" and not tool_messages:
                continue
            parts.append(f"<|{message.get('role')}|>{message.get('content') or ''}"
                         f"{json.dumps(message.get('tool_calls') or '', ensure_ascii=False)}")
        return "".join(parts)

    return render


class ScriptedOpenAIServer:
    """See module docstring. Use as a context manager; ``base_url`` ends in ``/v1``."""

    def __init__(self, script: Iterable[Turn] = (), *, model: str = MODEL, strict: bool = True,
                 api_key: str | None = None, template: Callable[[dict[str, Any]], str] | None = None):
        self.script = list(script)
        #: renders a request's messages as a server's chat template would; when set, a reply's prompt_tokens is
        #: the rendered prompt's length in characters (a tokenizer of one token per character), not the turn's
        self.template = template
        self.model = model
        self.strict = strict
        self.api_key = api_key
        self.requests: list[ReceivedRequest] = []
        self.protocol_errors: list[str] = []
        self.overruns = 0
        #: GET /models waits until this time.monotonic() (a server busy with one generation answers nothing else)
        self.models_busy_until = 0.0
        self._next = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ lifecycle
    def __enter__(self) -> "ScriptedOpenAIServer":
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body are two writes: no 40 ms delayed-ACK stall

            def log_message(self, format: str, *args: Any) -> None:  # keep pytest output clean
                pass

            def handle(self) -> None:
                try:
                    super().handle()
                except OSError:  # the client reset the connection (a deadline shut its socket down)
                    self.close_connection = True

            def do_GET(self) -> None:
                server._record(self, None)
                if not self._authorized():
                    return
                if self.path.rstrip("/") == "/v1/models":
                    if self._wait(server.models_busy_until - time.monotonic()):  # True: the client hung up
                        return
                    self._send(200, {"object": "list", "data": [
                        {"id": server.model, "object": "model", "created": 0, "owned_by": "tests"}]})
                else:
                    self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    server._record(self, raw.decode("utf-8", "replace"))
                    self._send(400, {"error": {"message": "request body is not JSON", "type": "invalid_request_error"}})
                    return
                server._record(self, body)
                if not self._authorized():
                    return
                if self.path.rstrip("/") != "/v1/chat/completions":
                    self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
                    return
                problem = server.check_request(body) if server.strict else None
                if problem:
                    server.protocol_errors.append(problem)
                    self._send(400, {"error": {"message": problem, "type": "invalid_request_error"}})
                    return
                turn = server._take()
                if turn is None:
                    self._send(500, {"error": {"message": "script exhausted", "type": "server_error"}})
                    return
                if turn.delay_s and self._wait(turn.delay_s):
                    return
                if turn.fault == "hang":
                    self._wait(None)
                    self.close_connection = True
                    return
                if turn.fault == "reset":
                    self._reset()
                    return
                if turn.raw_body is not None:
                    self._send_bytes(200, turn.raw_body, turn.headers)
                    return
                if turn.status != 200:
                    self._send(turn.status, {"error": turn.error or {"message": "error"}}, turn.headers)
                    return
                payload = turn.payload if turn.payload is not None else server.completion(body, turn)
                if turn.fault == "trickle":
                    self._trickle(payload, turn.trickle_interval_s)
                    return
                self._send(200, payload, turn.headers)

            def _authorized(self) -> bool:
                if server.api_key is None or self.headers.get("Authorization") == f"Bearer {server.api_key}":
                    return True
                self._send(401, {"error": {"message": "Incorrect API key provided.", "type": "invalid_request_error",
                                           "code": "invalid_api_key"}})
                return False

            def _wait(self, seconds: float | None) -> bool:
                """Wait ``seconds`` (None: forever); True when the client hung up or the server stops."""
                end = None if seconds is None else time.monotonic() + seconds
                while not server._stop.is_set():
                    left = 0.05 if end is None else min(0.05, end - time.monotonic())
                    if left <= 0:
                        return False
                    try:
                        readable, _, _ = select.select([self.connection], [], [], left)
                        if readable:
                            if not self.connection.recv(1, socket.MSG_PEEK):
                                return True  # EOF: the client closed the connection
                            time.sleep(left)  # bytes of a next request: not a hang-up, keep waiting
                    except OSError:
                        return True
                return True

            def _reset(self) -> None:
                self.close_connection = True
                try:
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    self.connection.close()  # linger 0: the kernel sends RST, not FIN
                except OSError:
                    pass

            def _trickle(self, payload: Any, interval_s: float) -> None:
                data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
                head = (f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                        f"Content-Length: {len(data)}\r\n\r\n").encode("ascii")
                self.close_connection = True
                raw = head + data
                for index in range(len(raw)):
                    byte = raw[index:index + 1]
                    try:
                        self.wfile.write(byte)
                        self.wfile.flush()
                    except OSError:  # the client gave up
                        return
                    if self._wait(interval_s):
                        return

            def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
                self._send_bytes(status, json.dumps(payload, ensure_ascii=False).encode("utf-8"), headers)

            def _send_bytes(self, status: int, data: bytes, headers: dict[str, str] | None = None) -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for key, value in (headers or {}).items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:  # the client gave up (a timeout or size-cap test)
                    self.close_connection = True

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="scripted-openai", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    @property
    def base_url(self) -> str:
        assert self._httpd is not None, "start the server first (use it as a context manager)"
        return f"http://127.0.0.1:{self._httpd.server_port}/v1"

    # ------------------------------------------------------------------ script
    def _take(self) -> Turn | None:
        with self._lock:
            if self._next >= len(self.script):
                self.overruns += 1
                return None
            turn = self.script[self._next]
            self._next += 1
            return turn

    @property
    def remaining(self) -> int:
        return len(self.script) - self._next

    def _record(self, handler: BaseHTTPRequestHandler, body: Any) -> None:
        with self._lock:
            self.requests.append(ReceivedRequest(handler.command, handler.path,
                                                 {k.lower(): v for k, v in handler.headers.items()},
                                                 body, time.monotonic()))

    @property
    def chat_requests(self) -> list[ReceivedRequest]:
        return [r for r in self.requests if r.method == "POST" and r.path.rstrip("/") == "/v1/chat/completions"]

    @property
    def chat_bodies(self) -> list[dict[str, Any]]:
        return [r.body for r in self.chat_requests]

    def completion(self, body: dict[str, Any], turn: Turn) -> dict[str, Any]:
        with self._lock:
            index = len(self.requests)
        message = dict(turn.message or {"role": "assistant", "content": ""})
        if not message.get("tool_calls"):
            message.pop("tool_calls", None)
        payload: dict[str, Any] = {
            "id": f"chatcmpl-scripted-{index}", "object": "chat.completion", "created": 1_700_000_000,
            "model": body.get("model", self.model),
            "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason":
                         turn.finish_reason or ("tool_calls" if message.get("tool_calls") else "stop")}],
        }
        if turn.usage is not None:
            prompt, completion = turn.usage
            if self.template is not None:
                prompt = len(self.template(body))
            payload["usage"] = {"prompt_tokens": prompt, "completion_tokens": completion,
                                "total_tokens": prompt + completion}
        return payload

    # ------------------------------------------------------------------ protocol checks
    @staticmethod
    def check_request(body: Any) -> str | None:
        """The first way ``body`` breaks the chat-completions protocol, or None."""
        if not isinstance(body, dict):
            return "body must be a JSON object"
        if not isinstance(body.get("model"), str) or not body["model"]:
            return "'model' is required"
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            return "'messages' must be a non-empty array"
        tools = body.get("tools")
        if tools is not None:
            if not isinstance(tools, list) or not tools:
                return "'tools' must be a non-empty array"
            for tool in tools:
                function = tool.get("function") if isinstance(tool, dict) else None
                if tool.get("type") != "function" or not isinstance(function, dict) or not function.get("name") \
                        or not isinstance(function.get("parameters"), dict):
                    return f"invalid tool {str(tool)[:80]}"
        if "tool_choice" in body:
            choice = body["tool_choice"]
            if tools is None:
                return "'tool_choice' is only allowed when 'tools' are specified"
            named = isinstance(choice, dict) and choice.get("type") == "function" \
                and choice.get("function", {}).get("name") in {t["function"]["name"] for t in tools}
            if choice not in ("auto", "none", "required") and not named:
                return f"invalid 'tool_choice' {choice!r}"
        open_calls: list[str] = []
        for i, message in enumerate(messages):
            role = message.get("role") if isinstance(message, dict) else None
            if role not in ("system", "user", "assistant", "tool"):
                return f"messages[{i}]: invalid role {role!r}"
            extra = set(message) - {"role", "content", "tool_calls", "tool_call_id", "name"}
            if extra:
                return f"messages[{i}]: unexpected keys {sorted(extra)}"
            if role == "tool":
                if message.get("tool_call_id") not in open_calls:
                    return (f"messages[{i}]: a 'tool' message must answer a preceding assistant tool call "
                            f"(got tool_call_id {message.get('tool_call_id')!r})")
                open_calls.remove(message["tool_call_id"])
                if not isinstance(message.get("content"), str):
                    return f"messages[{i}]: tool content must be a string"
                continue
            if open_calls:
                return f"messages[{i}]: tool calls {open_calls} were not answered before a {role} message"
            if role == "assistant" and message.get("tool_calls"):
                if tools is None:
                    return f"messages[{i}]: assistant tool_calls in a request without tools"
                for call in message["tool_calls"]:
                    if not call.get("id") or call.get("type") != "function" \
                            or not isinstance(call.get("function", {}).get("arguments"), str):
                        return f"messages[{i}]: malformed tool call {str(call)[:80]}"
                    open_calls.append(call["id"])
            elif not isinstance(message.get("content"), str):
                return f"messages[{i}]: {role} content must be a string"
        return None


# --------------------------------------------------------------------------- gold scripts
def gold_actions(env: Any, episode_id: str) -> list[dict[str, Any]]:
    """The oracle's actions on ``episode_id``: its gold tool calls, then its ``finish``.

    Played by a scripted model, these must earn exactly the oracle's score.
    """
    from mobility_agents.baselines.mobilitybench.oracle import OracleAgent
    from mobility_env.actions import parse_action

    record = OracleAgent().run_episode(env, episode_id)
    actions = []
    for step in record["trajectory"]["steps"]:
        parsed = parse_action(step["action"])
        actions.append({"name": parsed.name, "arguments": parsed.arguments})
    assert actions and actions[-1]["name"] == "finish", "the oracle did not finish"
    return actions


def react_script(actions: list[dict[str, Any]], usage: tuple[int, int] = (100, 10)) -> list[Turn]:
    """One assistant turn per action, each a single tool call (the last one ``finish``)."""
    return [tool_turn(tool_call(a["name"], a["arguments"], f"call_{i}"), usage=usage) for i, a in enumerate(actions)]


def plan_execute_script(actions: list[dict[str, Any]], *,
                        usage: dict[str, tuple[int, int]] | None = None) -> list[Turn]:
    """Planner, worker and reporter turns that make ``PlanExecuteAgent`` play ``actions``.

    The plan's steps are the finish's ``plan`` labels (one step per call when it has none);
    the worker makes every map call in step 1 (as parallel tool calls), then closes each
    step with a summary; the reporter answers the finish's ``answer`` and ``route_index``.
    """
    usage = {"planner": (300, 30), "worker": (200, 20), "reporter": (400, 40), **(usage or {})}
    calls, finish = actions[:-1], actions[-1]["arguments"]
    labels = list(finish.get("plan") or [c["name"] for c in calls] or ["answer"])
    plan = {"intent": finish.get("intent"), "slots": finish.get("slots"),
            "steps": [{"step": label, "goal": f"do {label}"} for label in labels]}
    script = [text_turn(json.dumps(plan, ensure_ascii=False), usage=usage["planner"])]
    if calls:
        script.append(tool_turn(*(tool_call(c["name"], c["arguments"], f"call_{i}") for i, c in enumerate(calls)),
                                usage=usage["worker"]))
    script += [text_turn(f"step {label} done", usage=usage["worker"]) for label in labels]
    report = {"answer": finish["answer"], "route_index": finish.get("route_index")}
    script.append(text_turn(json.dumps(report, ensure_ascii=False), usage=usage["reporter"]))
    return script
