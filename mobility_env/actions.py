"""Parsing an agent's action into a tool call, or a typed error. Never raises.

Accepted shapes (a JSON string of any of them, or the object itself):

* ``{"name": "query_poi", "arguments": {...}}`` (arguments may also be a JSON string);
* OpenAI's tool call ``{"type": "function", "function": {"name": ..., "arguments": "<json>"}}``
  (an ``id`` is ignored), or an ``openai`` ``ChatCompletionMessageToolCall`` object.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from .tools import TOOLS, canonical_tool_name

MAX_ACTION_CHARS = 20_000

ERROR_TYPES = ("invalid_json", "invalid_action", "unknown_tool", "schema_error", "no_cached_result", "episode_over")


@dataclass
class ParsedAction:
    """Either a call (``name`` canonical, ``arguments`` a dict) or an ``error``."""

    name: str | None = None
    arguments: Any = None
    raw_name: Any = None
    error: dict[str, str] | None = None


def _error(kind: str, message: str, **fields: Any) -> ParsedAction:
    return ParsedAction(error={"type": kind, "message": message}, **fields)


def _as_mapping(action: Any) -> Any:
    """Objects with ``model_dump`` (openai/pydantic) become dicts; others pass through."""
    dump = getattr(action, "model_dump", None)
    if callable(dump) and not isinstance(action, dict):
        try:
            return dump()
        except (TypeError, ValueError):
            return action
    return action


def parse_action(action: Any) -> ParsedAction:
    """Parse one action; see module docstring for the accepted shapes."""
    if isinstance(action, (bytes, bytearray)):
        try:
            action = action.decode("utf-8")
        except UnicodeDecodeError:
            return _error("invalid_json", "action bytes are not UTF-8")
    if isinstance(action, str):
        if len(action) > MAX_ACTION_CHARS:
            return _error("invalid_json", f"action is {len(action)} characters; the limit is {MAX_ACTION_CHARS}")
        try:
            action = json.loads(action)
        except (json.JSONDecodeError, RecursionError) as exc:
            return _error("invalid_json", f"action is not valid JSON ({exc}); send "
                                          '{"name": "<tool>", "arguments": {...}}')
    action = _as_mapping(action)
    if not isinstance(action, dict):
        return _error("invalid_action", f"action must be a JSON object, got {type(action).__name__}; send "
                                        '{"name": "<tool>", "arguments": {...}}')
    if isinstance(action.get("function"), dict) or action.get("type") == "function":
        action = _as_mapping(action.get("function"))
        if not isinstance(action, dict):
            return _error("invalid_action", "'function' must be an object with 'name' and 'arguments'")
    raw_name = action.get("name")
    if not isinstance(raw_name, str) or not raw_name.strip():
        return _error("invalid_action", "missing tool 'name' (a string)", raw_name=raw_name)
    arguments = action.get("arguments", {})
    if arguments is None:
        arguments = {}
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except (json.JSONDecodeError, RecursionError) as exc:
            return _error("invalid_json", f"'arguments' is not valid JSON ({exc})", raw_name=raw_name)
    name = canonical_tool_name(raw_name)
    if name is None:
        return _error("unknown_tool", f"unknown tool {raw_name[:60]!r}; available: {', '.join(TOOLS)}",
                      raw_name=raw_name, arguments=arguments)
    return ParsedAction(name=name, arguments=arguments, raw_name=raw_name)
