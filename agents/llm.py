"""Talking to an OpenAI-compatible chat-completions server: configuration and a retrying client.

:class:`LLMConfig` holds every knob of the LLM baselines (paper defaults: temperature 0.1,
max_tokens 8192, at most 10 steps) and is assembled by :meth:`LLMConfig.from_sources` from
command-line arguments, a TOML models file of named presets, and the ``OPENAI_*``
environment variables. :class:`LLMClient` sends one chat-completions request through the
``openai`` package and returns an :class:`LLMReply` (the assistant message, its tool calls
and the token usage), with our own retry loop:

* 408, 409, 429 (honouring ``Retry-After``), 5xx, timeouts and connection errors are retried
  with exponential backoff (``backoff_s`` doubling, capped at ``backoff_max_s``); after
  ``max_retries`` retries the episode fails with ``AgentFailure("llm_unavailable")``;
* a 4xx whose message says the prompt is longer than the model's context fails with
  ``AgentFailure("context_overflow")`` at once (retrying cannot help);
* any other 4xx (bad key, unknown model, tools unsupported) fails with
  ``AgentFailure("llm_request_rejected")``.

**Tool modes.** ``native`` sends the env's tool list as ``tools=`` and reads
``message.tool_calls``. ``json`` is for servers without function calling: no ``tools=`` is
sent; the tool list and a one-call-per-reply JSON protocol are appended to the system
prompt; the model writes ``{"name": ..., "arguments": {...}}`` in its text, which the client
turns into tool calls. Agents keep one conversation format either way (assistant
``tool_calls`` + ``tool`` messages); the client renders it for the wire (tool results become
user "Observation" messages in ``json`` mode).

Example models file (``--models-file models.toml --preset qwen-local``)::

    default = "qwen-local"

    [presets.qwen-local]
    model = "Qwen/Qwen3-32B"
    base_url = "http://127.0.0.1:8000/v1"
    api_key_env = "VLLM_API_KEY"          # the key stays in the environment, not in the file
    tool_mode = "native"
    extra_body = { chat_template_kwargs = { enable_thinking = false } }

    [presets.qwen-local.roles]            # per-role models for Plan-and-Execute
    planner = "Qwen/Qwen3-235B-A22B"
    worker = "Qwen/Qwen3-32B"
    reporter = "Qwen/Qwen3-32B"
"""

from __future__ import annotations

import email.utils
import json
import os
import re
import threading
import time
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Callable, Mapping

from mobility_env.errors import ConfigError

from .base import AgentFailure

LANGUAGES = ("zh", "en")
TOOL_MODES = ("native", "json")
ROLES = ("react", "planner", "worker", "reporter")
RETRYABLE_STATUS = frozenset({408, 409, 429})
# Keys a chat message may carry on the wire; anything else (our bookkeeping) is dropped.
_WIRE_KEYS = ("role", "content", "tool_calls", "tool_call_id", "name")
_CONTEXT_OVERFLOW = re.compile(
    r"context[ _-]?length|context[ _-]?window|maximum context|max(?:imum)?_?model_?len|too many tokens|"
    r"prompt is too long|input is too long|(?:longer|more) than the model'?s? (?:context|maximum)|"
    r"exceeds? (?:the )?(?:model'?s? )?(?:maximum |max )?(?:context|token limit|input length)",
    re.IGNORECASE)
_THINK_BLOCK = re.compile(r"<think>.*?(?:</think>|$)", re.DOTALL | re.IGNORECASE)
_TOOL_CALL_TAG = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)
_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)


# --------------------------------------------------------------------------- configuration
@dataclass
class LLMConfig:
    """Everything the LLM baselines need to reach a model; paper defaults.

    ``model`` may be None: the client then asks the server's ``GET /models`` and uses its
    only model (vLLM and SGLang serve one). ``role_models`` overrides the model per role
    (``react``, ``planner``, ``worker``, ``reporter``). ``extra_body`` is merged into every
    request (server-specific options, e.g. vLLM's ``chat_template_kwargs``). ``max_steps``
    bounds the model turns of an episode; the env's own ``max_steps`` bounds its actions.
    """

    model: str | None = None
    base_url: str | None = None
    api_key: str | None = None
    temperature: float = 0.1
    max_tokens: int = 8192
    max_steps: int = 10
    timeout_s: float = 60.0
    max_retries: int = 4
    backoff_s: float = 0.5
    backoff_max_s: float = 30.0
    language: str = "zh"
    tool_mode: str = "native"
    role_models: dict[str, str] = field(default_factory=dict)
    seed: int | None = None
    extra_body: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        problems = []
        if self.language not in LANGUAGES:
            problems.append(f"language must be one of {LANGUAGES}, got {self.language!r}")
        if self.tool_mode not in TOOL_MODES:
            problems.append(f"tool_mode must be one of {TOOL_MODES}, got {self.tool_mode!r} "
                            "(use 'json' for servers without function calling)")
        if not (isinstance(self.temperature, (int, float)) and 0 <= self.temperature <= 2):
            problems.append(f"temperature must be a number in [0, 2], got {self.temperature!r}")
        for name in ("max_tokens", "max_steps"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                problems.append(f"{name} must be a positive integer, got {value!r}")
        if not isinstance(self.max_retries, int) or self.max_retries < 0:
            problems.append(f"max_retries must be an integer >= 0, got {self.max_retries!r}")
        for name in ("timeout_s", "backoff_s", "backoff_max_s"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or value < 0 or (name == "timeout_s" and value == 0):
                problems.append(f"{name} must be a positive number of seconds, got {value!r}")
        for name in ("model", "base_url", "api_key"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                problems.append(f"{name} must be a string, got {value!r}")
        if self.seed is not None and (not isinstance(self.seed, int) or isinstance(self.seed, bool)):
            problems.append(f"seed must be an integer or None, got {self.seed!r}")
        if not isinstance(self.extra_body, dict):
            problems.append(f"extra_body must be a table/dict of extra request fields, got {self.extra_body!r}")
        unknown_roles = sorted(set(self.role_models) - set(ROLES))
        if unknown_roles:
            problems.append(f"role_models has unknown role(s) {unknown_roles}; roles are {ROLES}")
        if problems:
            raise ConfigError("invalid LLM configuration: " + "; ".join(problems))

    def model_for(self, role: str) -> str | None:
        """The model a role talks to: its override, else ``model``."""
        return self.role_models.get(role) or self.model

    def models_label(self, roles: tuple[str, ...]) -> str | None:
        """``"m"`` when every role uses one model, else ``"planner=a,worker=b,..."``."""
        return models_label({role: self.model_for(role) for role in roles})

    @classmethod
    def from_sources(cls, args: Any = None, models_file: str | os.PathLike | None = None,
                     preset: str | None = None, environ: Mapping[str, str] | None = None) -> "LLMConfig":
        """Assemble a config; later sources override earlier ones.

        1. defaults (the paper's);
        2. environment: ``OPENAI_BASE_URL``, ``OPENAI_API_KEY``, ``OPENAI_MODEL``;
        3. the preset ``preset`` of the TOML ``models_file`` (or its ``default = "name"``);
        4. ``args`` (an ``argparse.Namespace`` or a mapping): every attribute that is not
           None among ``model, base_url, api_key, temperature, max_tokens, max_steps,
           timeout_s (or timeout), max_retries, backoff_s, language, tool_mode, seed`` and
           ``planner_model, worker_model, reporter_model, react_model``.

        Raises ``ConfigError`` for a missing file, unknown preset or key, or bad value.
        """
        environ = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for key, var in (("base_url", "OPENAI_BASE_URL"), ("api_key", "OPENAI_API_KEY"), ("model", "OPENAI_MODEL")):
            if environ.get(var):
                values[key] = environ[var]
        if preset is not None and models_file is None:
            raise ConfigError(f"preset {preset!r} given without a models file; pass --models-file FILE.toml")
        if models_file is not None:
            values.update(load_preset(models_file, preset, environ))
        values.update(_values_from_args(args))
        role_models = dict(values.pop("role_models", {}))
        role_models.update(values.pop("_arg_roles", {}))
        return cls(**values, role_models=role_models)


def models_label(model_of_role: Mapping[str, str | None]) -> str | None:
    """One name when all roles share a model, else ``"role=model,..."`` (for result records)."""
    if len(set(model_of_role.values())) <= 1:
        return next(iter(model_of_role.values()), None)
    return ",".join(f"{role}={model}" for role, model in model_of_role.items())


_FIELD_NAMES = {f.name for f in fields(LLMConfig)}
_PRESET_KEYS = (_FIELD_NAMES - {"role_models"}) | {"roles", "api_key_env", "description"}


def load_preset(models_file: str | os.PathLike, preset: str | None,
                environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The config values of one preset of a TOML models file (see module docstring)."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        try:
            import tomli as tomllib  # type: ignore[no-redef]
        except ModuleNotFoundError as exc:
            raise ConfigError("reading a TOML models file on Python 3.10 needs `pip install tomli`") from exc
    path = Path(models_file)
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError(f"{path}: models file not found") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc})") from exc
    presets = document.get("presets")
    if not isinstance(presets, dict) or not presets:
        raise ConfigError(f"{path}: no [presets.NAME] tables; see agents/llm.py for the format")
    name = preset or document.get("default")
    if name is None:
        if len(presets) != 1:
            raise ConfigError(f"{path}: several presets ({', '.join(presets)}); choose one with --preset "
                              "or set default = \"NAME\"")
        name = next(iter(presets))
    if name not in presets:
        raise ConfigError(f"{path}: unknown preset {name!r}; available: {', '.join(presets)}")
    table = dict(presets[name])
    unknown = sorted(set(table) - _PRESET_KEYS)
    if unknown:
        raise ConfigError(f"{path}: preset {name!r} has unknown key(s) {unknown}; allowed: {sorted(_PRESET_KEYS)}")
    table.pop("description", None)
    roles = table.pop("roles", {})
    if not isinstance(roles, dict) or not all(isinstance(v, str) for v in roles.values()):
        raise ConfigError(f"{path}: preset {name!r}: [roles] must map role names to model names")
    key_var = table.pop("api_key_env", None)
    if key_var is not None:
        environ = os.environ if environ is None else environ
        if not environ.get(key_var):
            raise ConfigError(f"{path}: preset {name!r} reads its API key from ${key_var}, which is not set")
        table["api_key"] = environ[key_var]
    if roles:
        table["role_models"] = roles
    return table


def _values_from_args(args: Any) -> dict[str, Any]:
    if args is None:
        return {}
    get = args.get if isinstance(args, Mapping) else (lambda key: getattr(args, key, None))
    values: dict[str, Any] = {}
    for key in ("model", "base_url", "api_key", "temperature", "max_tokens", "max_steps", "timeout_s",
                "max_retries", "backoff_s", "language", "tool_mode", "seed"):
        value = get(key)
        if value is not None:
            values[key] = value
    if values.get("timeout_s") is None and get("timeout") is not None:
        values["timeout_s"] = get("timeout")
    roles = {role: get(f"{role}_model") for role in ROLES if get(f"{role}_model")}
    if roles:
        values["_arg_roles"] = roles
    return values


# --------------------------------------------------------------------------- replies
@dataclass
class ToolCallRequest:
    """One tool call the model asked for.

    ``action`` is what the agent passes to ``session.step`` unchanged, so the env validates
    it: the OpenAI shape ``{"type": "function", "function": {"name", "arguments": "<json>"}}``
    in native mode, the model's raw JSON text in json mode. ``name`` is None when the text
    could not be read at all (the env then reports ``invalid_json``).
    """

    id: str
    name: str | None
    arguments: str
    action: Any


@dataclass
class LLMReply:
    """One model turn: ``message`` is ready to append to the conversation."""

    message: dict[str, Any]
    content: str
    calls: list[ToolCallRequest]
    input_tokens: int
    output_tokens: int
    finish_reason: str | None
    model: str
    attempts: int


def strip_thinking(text: str | None) -> str:
    """Content without ``<think>…</think>`` blocks (reasoning models put them in the text)."""
    return _THINK_BLOCK.sub("", text or "").strip()


def find_json_object(text: str) -> tuple[Any, str] | None:
    """The first JSON object in ``text`` (fenced, bare, or after prose) and its source text.

    Returns ``(value, source)`` where ``value`` is the parsed object or None when the
    object-looking text does not parse; None when there is no ``{`` at all.
    """
    for fenced in _FENCE.findall(text):
        fenced = fenced.strip()
        if fenced.startswith("{"):
            return _decode_prefix(fenced)
    start = text.find("{")
    if start < 0:
        return None
    return _decode_prefix(text[start:])


def _decode_prefix(text: str) -> tuple[Any, str]:
    try:
        value, end = json.JSONDecoder().raw_decode(text)
    except (json.JSONDecodeError, RecursionError):
        return None, text.strip()
    return value, text[:end]


def parse_text_actions(text: str, *, first_id: int = 0) -> list[ToolCallRequest]:
    """Tool calls written in text (json tool mode, or a server that left them unparsed).

    Read, in order: ``<tool_call>…</tool_call>`` blocks (all of them); else the first
    fenced JSON block, or the whole reply when it starts with ``{``; else a ``{"name": …}``
    object inside prose. An object counts as a call when it has a ``name`` (``parameters``
    is accepted for ``arguments``). A block or reply that starts like JSON but does not
    parse becomes a call whose action is that text, so the env answers ``invalid_json`` and
    the model sees why; prose that merely contains braces is an answer, not a call.
    """
    sources = [s for s in _TOOL_CALL_TAG.findall(text) if s.strip()]
    if sources:
        candidates = [_decode_prefix(s) for s in sources]
    else:
        stripped = text.strip()
        fenced = next((f.strip() for f in _FENCE.findall(text) if f.strip().startswith("{")), None)
        if fenced is not None or stripped.startswith("{"):
            candidates = [_decode_prefix(fenced if fenced is not None else stripped)]
        else:
            start = text.find('{"name"')
            if start < 0:
                return []
            candidates = [_decode_prefix(text[start:])]
            if candidates[0][0] is None:
                return []
        value = candidates[0][0]
        if value is not None and not (isinstance(value, dict) and "name" in value):
            return []
    calls = []
    for offset, (value, source) in enumerate(candidates):
        call_id = f"call_{first_id + offset}"
        if isinstance(value, dict) and "name" in value:
            if "arguments" not in value and "parameters" in value:
                value = {**value, "arguments": value["parameters"]}
                value.pop("parameters")
            arguments = value.get("arguments", {})
            arguments_text = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
            name = value["name"] if isinstance(value["name"], str) else None
            calls.append(ToolCallRequest(call_id, name, arguments_text, json.dumps(value, ensure_ascii=False)))
        else:
            calls.append(ToolCallRequest(call_id, None, source, source))
    return calls


# --------------------------------------------------------------------------- client
class LLMClient:
    """One OpenAI-compatible endpoint; :meth:`complete` is the only call agents make.

    The ``openai.OpenAI`` client is created lazily and never pickled, so an agent holding
    an ``LLMClient`` can be shipped to Ray workers. ``sleep`` is injectable for tests.
    """

    def __init__(self, config: LLMConfig, *, sleep: Callable[[float], None] = time.sleep):
        self.config = config
        self._sleep = sleep
        self._client: Any = None
        self._lock = threading.Lock()
        self._served_model: str | None = None
        self.requests = 0
        self.retries = 0

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_client"], state["_lock"] = None, None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    @property
    def openai(self) -> Any:
        with self._lock:
            if self._client is None:
                import openai

                api_key = self.config.api_key or "EMPTY"  # local servers accept any key
                self._client = openai.OpenAI(base_url=self.config.base_url, api_key=api_key,
                                             timeout=self.config.timeout_s, max_retries=0)
            return self._client

    # ------------------------------------------------------------------ public
    def model_for(self, role: str) -> str:
        """The model name for ``role``; asks the server when none is configured."""
        model = self.config.model_for(role)
        if model:
            return model
        if self._served_model is None:
            listing = self._with_retries(lambda: self.openai.models.list(), what="GET /models")[0]
            names = [m.id for m in getattr(listing, "data", []) or []]
            if len(names) != 1:
                raise AgentFailure("llm_request_rejected",
                                   f"no model configured and the server lists {len(names)} models "
                                   f"({', '.join(names[:5]) or 'none'}); pass --model")
            self._served_model = names[0]
        return self._served_model

    def complete(self, messages: list[dict[str, Any]], *, role: str,
                 tools: list[dict[str, Any]] | None = None) -> LLMReply:
        """One chat completion for ``role``; ``tools`` are offered per the config's tool mode."""
        model = self.model_for(role)
        json_mode = self.config.tool_mode == "json"
        request: dict[str, Any] = {
            "model": model,
            "messages": render_wire_messages(messages, tools if json_mode else None, self.config.language),
            "temperature": self.config.temperature,
            "max_tokens": self.config.max_tokens,
        }
        if tools and not json_mode:
            request["tools"] = tools
        if self.config.seed is not None:
            request["seed"] = self.config.seed
        if self.config.extra_body:
            request["extra_body"] = dict(self.config.extra_body)
        response, attempts = self._with_retries(lambda: self.openai.chat.completions.create(**request),
                                                what=f"chat completion ({role})")
        return self._reply(response, model, attempts, json_mode=json_mode and bool(tools), offered=bool(tools))

    # ------------------------------------------------------------------ internals
    def _with_retries(self, send: Callable[[], Any], *, what: str) -> tuple[Any, int]:
        import openai

        last = ""
        for attempt in range(self.config.max_retries + 1):
            if attempt:
                self.retries += 1
            self.requests += 1
            wait: float | None = None
            try:
                return send(), attempt + 1
            except openai.APIStatusError as exc:
                detail = _error_text(exc)
                status = exc.status_code
                if status != 429 and _CONTEXT_OVERFLOW.search(detail):
                    raise AgentFailure("context_overflow", f"{what}: HTTP {status}: {detail[:500]}") from None
                if status not in RETRYABLE_STATUS and status < 500:
                    hint = ""
                    if re.search(r"tool", detail, re.IGNORECASE):
                        hint = " (if the server has no function calling, use tool_mode='json')"
                    raise AgentFailure("llm_request_rejected", f"{what}: HTTP {status}: {detail[:500]}{hint}") from None
                wait = _retry_after(exc.response)
                last = f"HTTP {status}: {detail[:300]}"
            except openai.APITimeoutError:
                last = f"timed out after {self.config.timeout_s:g}s"
            except openai.APIConnectionError as exc:
                last = f"connection error: {exc}"
            if attempt < self.config.max_retries:
                delay = self.config.backoff_s * (2 ** attempt)
                if wait is not None:
                    delay = max(delay, wait)
                self._sleep(min(delay, self.config.backoff_max_s))
        raise AgentFailure("llm_unavailable",
                           f"{what}: gave up after {self.config.max_retries + 1} attempt(s) "
                           f"to {self.config.base_url or 'the default endpoint'}; last error: {last}")

    def _reply(self, response: Any, model: str, attempts: int, *, json_mode: bool, offered: bool) -> LLMReply:
        choices = getattr(response, "choices", None)
        if not choices:
            raise AgentFailure("llm_bad_response", f"the server answered without choices: {str(response)[:300]}")
        choice = choices[0]
        message = choice.message
        content = strip_thinking(getattr(message, "content", None))
        calls: list[ToolCallRequest] = []
        if not json_mode:
            for index, call in enumerate(getattr(message, "tool_calls", None) or []):
                function = getattr(call, "function", None)
                name = getattr(function, "name", None)
                arguments = getattr(function, "arguments", None)
                if not isinstance(arguments, str):  # some servers send an object
                    arguments = json.dumps(arguments if arguments is not None else {}, ensure_ascii=False)
                call_id = getattr(call, "id", None)
                if not isinstance(call_id, str) or not call_id or any(c.id == call_id for c in calls):
                    call_id = f"call_{index}"  # the id must match our tool message, so it must be unique
                action = {"type": "function", "function": {"name": name, "arguments": arguments}}
                calls.append(ToolCallRequest(call_id, name if isinstance(name, str) else None, arguments, action))
        if offered and not calls and content and (json_mode or "<tool_call>" in content
                                                  or re.match(r"\s*(```(json)?\s*)?\{\s*\"name\"", content)):
            # json mode, or a server that left the model's tool-call text unparsed
            calls = parse_text_actions(content)
        assistant: dict[str, Any] = {"role": "assistant", "content": content}
        if calls:
            assistant["tool_calls"] = [{"id": c.id, "type": "function",
                                        "function": {"name": c.name or "", "arguments": c.arguments}} for c in calls]
        usage = getattr(response, "usage", None)
        return LLMReply(message=assistant, content=content, calls=calls,
                        input_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
                        output_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
                        finish_reason=getattr(choice, "finish_reason", None),
                        model=str(getattr(response, "model", None) or model), attempts=attempts)


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
        parsed = email.utils.parsedate_to_datetime(value) if value else None
        if parsed is None:
            return None
        return max(0.0, parsed.timestamp() - time.time())


def render_wire_messages(messages: list[dict[str, Any]], json_tools: list[dict[str, Any]] | None,
                         language: str) -> list[dict[str, Any]]:
    """The conversation as sent: bookkeeping keys dropped; in json mode tools go to text.

    ``json_tools`` set means the json protocol: the protocol and tool list are appended to
    the system prompt, assistant tool calls stay as the text the model wrote, and tool
    results become (merged) user messages.
    """
    wire: list[dict[str, Any]] = []
    for message in messages:
        clean = {k: message[k] for k in _WIRE_KEYS if k in message}
        if json_tools is not None:
            if clean["role"] == "assistant":
                clean.pop("tool_calls", None)
            elif clean["role"] == "tool":
                from .prompts import observation_label

                text = f"{observation_label(language)}\n{clean.get('content', '')}"
                if wire and wire[-1]["role"] == "user" and wire[-1].get("_observation"):
                    wire[-1]["content"] += "\n\n" + text
                    continue
                clean = {"role": "user", "content": text, "_observation": True}
        wire.append(clean)
    if json_tools is not None:
        from .prompts import render_prompt

        protocol = render_prompt("tool_protocol", language, tools=describe_tools(json_tools))
        if wire and wire[0]["role"] == "system":
            wire[0] = {**wire[0], "content": f"{wire[0].get('content') or ''}\n\n{protocol}"}
        else:
            wire.insert(0, {"role": "system", "content": protocol})
        for item in wire:
            item.pop("_observation", None)
    return wire


def describe_tools(tools: list[dict[str, Any]]) -> str:
    """A plain-text tool reference derived from an OpenAI ``tools`` list (json mode)."""
    lines = []
    for tool in tools:
        function = tool.get("function", tool)
        params = function.get("parameters", {}) or {}
        required = set(params.get("required", []))
        args = []
        for name, schema in (params.get("properties") or {}).items():
            args.append(f"{name}{'' if name in required else '?'}: {schema.get('type', 'any')}")
        lines.append(f"- {function['name']}({', '.join(args)}): {function.get('description', '')}")
        for name, schema in (params.get("properties") or {}).items():
            if schema.get("description"):
                lines.append(f"    - {name}: {schema['description']}")
    return "\n".join(lines)
