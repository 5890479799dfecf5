"""What the model says, as the agents read it and as the server is sent it.

**Tool modes.** ``native`` sends the env's tool list as ``tools=`` with ``tool_choice``
(default ``"auto"``) and reads ``message.tool_calls``. ``json`` is for servers without
function calling: no ``tools=`` is sent; the tool list and a one-call-per-reply JSON protocol
are appended to the system prompt; the model writes ``{"name": ..., "arguments": {...}}`` in
its text, which the client turns into tool calls. Agents keep one conversation format either
way (assistant ``tool_calls`` + ``tool`` messages); the client renders it for the wire (tool
results become user "Observation" messages in ``json`` mode).

:class:`LLMReply` is one reply (message, tool calls, usage); :func:`parse_text_actions` reads the
``json`` protocol: only the top-level action object of a reply (fenced or not) is a call;
:func:`render_wire_messages` renders a conversation for the wire.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

# Keys a chat message may carry on the wire; anything else (our bookkeeping) is dropped.
_WIRE_KEYS = ("role", "content", "tool_calls", "tool_call_id", "name")
_THINK_BLOCK = re.compile(r"<think>.*?(?:</think>|$)", re.DOTALL | re.IGNORECASE)
_TOOL_CALL_TAG = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)
_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)


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
    """One model turn: ``message`` is ready to append to the conversation.

    ``discarded`` holds the messages of a cut-off first attempt (the reply, flagged
    ``"discarded": "cut_off"``, and the note that asked for a shorter one): agents record
    them before ``message``; :func:`render_wire_messages` never sends them back.
    """

    message: dict[str, Any]
    content: str
    calls: list[ToolCallRequest]
    input_tokens: int
    output_tokens: int
    finish_reason: str | None
    model: str
    attempts: int
    discarded: list[dict[str, Any]] = field(default_factory=list)


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


_OPENING = re.compile(r"[\[{]")
_PROSE_ATTEMPTS = 100  # JSON values tried in prose before giving up (bounds the work on junk)


def _top_level_action(text: str) -> tuple[Any, str] | None:
    """The first top-level ``{"name": …}`` object in prose, or None.

    Every complete JSON value (object or array) found is skipped whole, so an object nested
    inside it (a plan listing steps, a list of calls, a wrapper object) is never a call; so is
    every balanced bracket span that is not JSON, and an object that never closes (a reply cut
    off at ``max_tokens``) ends the search: whatever follows is inside it.
    """
    decoder = json.JSONDecoder()
    position = 0
    for _ in range(_PROSE_ATTEMPTS):
        match = _OPENING.search(text, position)
        if match is None:
            return None
        start = match.start()
        try:
            value, end = decoder.raw_decode(text, start)
        except (json.JSONDecodeError, RecursionError):
            closed = _balanced_end(text, start)
            if closed is None:  # cut off (max_tokens) or never closed: all that follows is inside it
                return None
            position = closed  # a brace in prose ("{116.4, 39.9}"): skip it whole, nested braces too
            continue
        if _is_action(value):
            return value, text[start:end]
        position = end
    return None


def _balanced_end(text: str, start: int) -> int | None:
    """The index after the bracket that closes ``text[start]`` (``{`` or ``[``), counting
    brackets outside double-quoted strings; None when it never closes."""
    depth, in_string, escaped = 0, False, False
    for index in range(start, len(text)):
        char = text[index]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
            if depth == 0:
                return index + 1
    return None


def _is_action(value: Any) -> bool:
    return isinstance(value, dict) and "name" in value


def parse_text_actions(text: str, *, first_id: int = 0) -> list[ToolCallRequest]:
    """Tool calls written in text (json tool mode, or a server that left them unparsed).

    Only the protocol's top-level action object counts, read in this order:
    ``<tool_call>…</tool_call>`` blocks (all of them); else the first fenced JSON block, or
    the whole reply when it starts with ``{``; else the first top-level JSON object in prose.
    An object counts as a call when it has a ``name`` (``parameters`` is accepted for
    ``arguments``); a ``{"name": …}`` nested inside another JSON value (a list, a wrapper
    object) is not a call. A block or reply that starts like JSON but does not parse becomes
    a call whose action is that text, so the env answers ``invalid_json`` and the model sees
    why; prose that merely contains braces is an answer, not a call.
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
            found = _top_level_action(text)
            if found is None:
                return []
            candidates = [found]
        value = candidates[0][0]
        if value is not None and not _is_action(value):
            return []
    calls = []
    for offset, (value, source) in enumerate(candidates):
        call_id = f"call_{first_id + offset}"
        if _is_action(value):
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


# --------------------------------------------------------------------------- wire
def render_wire_messages(messages: list[dict[str, Any]], json_tools: list[dict[str, Any]] | None,
                         language: str) -> list[dict[str, Any]]:
    """The conversation as sent: bookkeeping keys dropped; in json mode tools go to text.

    ``json_tools`` set means the json protocol: the protocol and tool list are appended to
    the system prompt, assistant tool calls stay as the text the model wrote, and tool
    results become (merged) user messages. Messages flagged ``discarded`` (a cut-off reply
    and the note that followed it) are records only and are never sent.
    """
    wire: list[dict[str, Any]] = []
    for message in messages:
        if message.get("discarded"):
            continue
        clean = {k: message[k] for k in _WIRE_KEYS if k in message}
        if json_tools is not None:
            if clean["role"] == "assistant":
                clean.pop("tool_calls", None)
            elif clean["role"] == "tool":
                from ..prompts import observation_label

                text = f"{observation_label(language)}\n{clean.get('content', '')}"
                if wire and wire[-1]["role"] == "user" and wire[-1].get("_observation"):
                    wire[-1]["content"] += "\n\n" + text
                    continue
                clean = {"role": "user", "content": text, "_observation": True}
        wire.append(clean)
    if json_tools is not None:
        from ..prompts import render_prompt

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
