"""The env's tool calls as openenv-core's MCP types: what ``tools/list`` and ``tools/call`` answer.

openenv-core's MCP design (``MCPEnvironment``, RFC 003) routes two actions through ``step``:
``ListToolsAction`` → ``ListToolsObservation`` (the tools: name, description, JSON-schema input) and
``CallToolAction`` → ``CallToolObservation`` (the tool's result, or a ``ToolError``). Here the tools are
the env's own OpenAI function schemas (``info["tools"]``, declared once by each suite), and one tool call
is one ``env.step({"name": ..., "arguments": {...}})``: the same observation, reward and info as in
process, ``finish`` included. The result has openenv-core's shape (that of FastMCP's ``CallToolResult``,
which ``MCPToolClient.call_tool`` reads ``data`` from):

* ``content`` — ``[{"type": "text", "text": <the observation>}]``;
* ``data`` — the observation text (what ``call_tool`` returns);
* ``structured_content`` — ``reward``, ``done``, ``terminated``, ``truncated`` and the step's ``info``;
* ``is_error`` — the env answered with an error (``info["error"]``: a refused call, a state that refused it).

A call the agent got wrong — a tool the env does not offer (``unknown_tool``) or arguments its schema
refuses (``schema_error``, ``invalid_action``, ``invalid_json``) — also carries a ``ToolError``
(``tool_not_found`` / ``invalid_args``, the env's message). It is still a step, as in process: it costs the
step and its penalty, and the result says so.
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, List, Mapping, Optional

from openenv.core.env_server.mcp_types import CallToolObservation, Tool, ToolError, ToolErrorType

from .client import MobilityObservation

__all__ = ["TOOL_ERROR_TYPES", "call_result", "offered_tools", "tool_error", "tool_observation", "tool_specs"]

#: The env's error types (``info["error"]["type"]``) that mean the call itself was wrong, as MCP tool errors.
TOOL_ERROR_TYPES = {"unknown_tool": ToolErrorType.TOOL_NOT_FOUND, "schema_error": ToolErrorType.INVALID_ARGS,
                    "invalid_action": ToolErrorType.INVALID_ARGS, "invalid_json": ToolErrorType.INVALID_ARGS}


def tool_specs(openai_tools: Iterable[Mapping[str, Any]]) -> List[Tool]:
    """OpenAI function schemas (``{"type": "function", "function": {...}}`` or bare ``{"name", ...}``) as MCP
    tools: the same name, description and parameters schema (the ``input_schema``)."""
    specs = []
    for tool in openai_tools:
        function = tool.get("function", tool)
        specs.append(Tool(name=function["name"], description=function.get("description") or "",
                          input_schema=dict(function.get("parameters") or {"type": "object", "properties": {}})))
    return specs


def offered_tools(env: Any) -> List[Dict[str, Any]]:
    """The OpenAI tools ``env`` offers before its first reset: its ``tools`` (MobilityBench-v0: always the same),
    else its action space's (MobilePA-v0: ``ask_user`` and ``finish``; a task offers its own at reset)."""
    tools = getattr(env.unwrapped, "tools", None)
    if tools:
        return [dict(tool) for tool in tools]
    space = env.action_space
    return [{"type": "function", "function": {"name": name, "description": "", "parameters": space.parameters(name)}}
            for name in space.tool_names]


def call_result(observation: MobilityObservation) -> Dict[str, Any]:
    """One step's observation as a tool result (the module docstring says what each field holds)."""
    return {"content": [{"type": "text", "text": observation.text}], "data": observation.text,
            "structured_content": {"reward": observation.reward, "done": observation.done,
                                   "terminated": observation.terminated, "truncated": observation.truncated,
                                   "info": observation.info},
            "is_error": bool(observation.info.get("error"))}


def tool_error(observation: MobilityObservation) -> Optional[ToolError]:
    """The MCP tool error of a call the agent got wrong (:data:`TOOL_ERROR_TYPES`), else None."""
    error = observation.info.get("error")
    name = error.get("type") if isinstance(error, dict) else None
    kind = TOOL_ERROR_TYPES.get(name) if isinstance(name, str) else None
    if kind is None or not isinstance(error, dict):  # (the second test only narrows the type)
        return None
    return ToolError(error_type=kind, message=str(error.get("message") or name))


def tool_observation(tool_name: str, observation: MobilityObservation) -> CallToolObservation:
    """A step's observation as openenv-core's ``CallToolObservation``, with the step's reward and ``done``."""
    return CallToolObservation(tool_name=tool_name, result=call_result(observation), error=tool_error(observation),
                               reward=observation.reward, done=observation.done)
