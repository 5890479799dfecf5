"""A recorded episode as OpenAI chat ``messages``, each assistant message paid the env reward it caused.

:func:`conversation_of` turns one ``trajectories.jsonl`` line (see :mod:`mobility_agents.base`) into a
:class:`Conversation`:

* **recorded** — the LLM agents (ReAct, Plan-and-Execute) record every message they sent and received,
  so those are used as they are: the system and user prompts, each assistant message with the
  ``tool_calls`` ids the model produced, each ``tool`` message with the ``tool_call_id`` it answered.
  Messages flagged ``discarded`` (a reply cut off at ``max_tokens`` and the note asking for a shorter
  one, an over-long reply) were never part of the conversation the model continued, and are left out.
  ``tool`` messages get the ``name`` of the function they answer (the wire message carried only its
  id). Calls after the one that ended the episode (several calls in one reply, ``finish`` first) were
  never executed and have no ``tool`` message. In ``json`` tool mode an assistant message keeps the
  text the model wrote (which holds its call) and ``tool_calls`` the call the client read from it:
  train on one of the two. Plan-and-Execute records three conversations (planner, worker, reporter),
  one after the other, each starting with its own system message; :attr:`Conversation.agent_roles`
  says which is which.
* **synthesized** — agents without a model (rule, oracle, the MobilePA rule agent) record only their
  actions. Their conversation is what the ReAct agent would have exchanged in native tool mode had it
  made the same calls: its system and task prompts (:func:`mobility_agents.prompts.render_prompt`, in
  :attr:`SynthesisSettings.language`), one assistant message per action with the stable id
  ``call_<i>`` (``i`` = the 0-based step index) and empty content, and one ``tool`` message with the
  observation. An action that is not a named tool call (text that does not parse) becomes an
  assistant message holding that text, answered by a ``user`` message with the observation (as in the
  JSON tool protocol).

**Rewards.** Every env step is charged to the assistant message that caused it: a ``tool`` message
whose content is the step's observation charges its call's assistant message; a ``user`` message
carrying the observation right after an assistant message without calls (ReAct: a plain-text reply
is sent as ``finish``) charges that message; steps left at the end (the final ``finish``, which ends
the episode with no message after it) charge the last assistant message. So the assistant rewards
sum to the episode's ``total_reward`` exactly, and every other message's reward is None.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from mobility_env.runfiles import clean_strings, json_text

from ..prompts import render_prompt, task_prompt

RECORDED, SYNTHESIZED = "recorded", "synthesized"


class BadTrajectory(ValueError):
    """A trajectory line whose shape is not what the runner writes (the caller names file and key)."""


@dataclass(frozen=True)
class SynthesisSettings:
    """How a conversation is synthesized for an agent that recorded none (see module docstring)."""

    language: str  # a prompt language (``mobility_agents.llm.client.LANGUAGES``)
    suite: str | None  # ``info["suite"]`` of the env: "mobilepa" for MobilePA-v0, None for MobilityBench-v0
    max_steps: int  # the env's action limit, stated in the system prompt


@dataclass
class Conversation:
    """``messages`` with a parallel ``rewards`` (assistant: float; others: None) and ``agent_roles``
    (the recording agent's role of each message, or None when the agent has one conversation)."""

    messages: list[dict[str, Any]]
    rewards: list[float | None]
    agent_roles: list[str | None] | None
    source: str


def _text(value: Any) -> str | None:
    """``value`` as text: strings as they are, anything else as JSON. A lone surrogate inside becomes U+FFFD
    first, so the JSON holds the character itself, not a ``\\ud83d`` escape that decodes back to it."""
    if value is None or isinstance(value, str):
        return value
    return json_text(clean_strings(value))


def _message(role: str, content: str | None, *, tool_calls: list[dict[str, Any]] | None = None,
             tool_call_id: str | None = None, name: str | None = None) -> dict[str, Any]:
    return {"role": role, "content": content, "tool_calls": tool_calls, "tool_call_id": tool_call_id, "name": name}


def _tool_call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


# --------------------------------------------------------------------------- steps
@dataclass(frozen=True)
class _Step:
    action: Any
    observation: str
    reward: float


def _steps(trajectory: dict[str, Any]) -> list[_Step]:
    raw = trajectory.get("steps")
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise BadTrajectory(f"'steps' must be a list, got {type(raw).__name__}")
    steps = []
    for index, step in enumerate(raw):
        if not isinstance(step, dict):
            raise BadTrajectory(f"step {index} must be an object, got {type(step).__name__}")
        reward = step.get("reward", 0.0)
        if isinstance(reward, bool) or not isinstance(reward, (int, float)):
            raise BadTrajectory(f"step {index}: reward is not a number ({reward!r:.60})")
        try:
            number = float(reward)
        except OverflowError:
            raise BadTrajectory(f"step {index}: reward ({len(str(reward))} digits) is beyond the range of a double"
                                ) from None
        steps.append(_Step(step.get("action"), _text(step.get("observation")) or "", number))
    return steps


def step_rewards(trajectory: dict[str, Any]) -> list[float]:
    """The env reward of each recorded step, in order."""
    return [step.reward for step in _steps(trajectory)]


# --------------------------------------------------------------------------- recorded
def _recorded_message(raw: Any, index: int) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise BadTrajectory(f"message {index} must be an object, got {type(raw).__name__}")
    role = raw.get("role")
    if not isinstance(role, str) or not role:
        raise BadTrajectory(f"message {index} has no role")
    calls = raw.get("tool_calls")
    tool_calls = None
    if calls:
        if not isinstance(calls, list):
            raise BadTrajectory(f"message {index}: 'tool_calls' must be a list")
        tool_calls = []
        for number, call in enumerate(calls):
            function = call.get("function") if isinstance(call, dict) else None
            if not isinstance(function, dict) or not isinstance(call.get("id"), str):
                raise BadTrajectory(f"message {index}: tool call {number} needs an 'id' and a 'function' object")
            tool_calls.append(_tool_call(call["id"], _text(function.get("name")) or "",
                                         _text(function.get("arguments")) or ""))
    call_id = raw.get("tool_call_id")
    return _message(role, _text(raw.get("content")), tool_calls=tool_calls,
                    tool_call_id=call_id if isinstance(call_id, str) else None, name=_text(raw.get("name")))


def _recorded(raw_messages: list[Any], steps: list[_Step]) -> Conversation | None:
    messages: list[dict[str, Any]] = []
    rewards: list[float | None] = []
    roles: list[str | None] = []
    owner_of_call: dict[str, int] = {}  # tool_call_id -> index of the assistant message that made it
    next_step = 0
    for index, raw in enumerate(raw_messages):
        if isinstance(raw, dict) and raw.get("discarded"):
            continue
        message = _recorded_message(raw, index)
        position = len(messages)
        previous = messages[-1] if messages else None
        messages.append(message)
        roles.append(_text(raw.get("agent_role")))
        rewards.append(0.0 if message["role"] == "assistant" else None)
        pending = steps[next_step] if next_step < len(steps) else None
        if message["role"] == "assistant":
            for call in message["tool_calls"] or []:
                owner_of_call[call["id"]] = position
        elif message["role"] == "tool":
            owner = owner_of_call.get(message["tool_call_id"] or "")
            if owner is not None:
                if message["name"] is None:
                    message["name"] = next(c["function"]["name"] for c in messages[owner]["tool_calls"]
                                           if c["id"] == message["tool_call_id"])
                if pending is not None and message["content"] == pending.observation:
                    rewards[owner] = (rewards[owner] or 0.0) + pending.reward
                    next_step += 1
        elif (message["role"] == "user" and pending is not None and previous is not None
              and previous["role"] == "assistant" and not previous["tool_calls"]
              and message["content"] == pending.observation):
            rewards[position - 1] = (rewards[position - 1] or 0.0) + pending.reward
            next_step += 1
    if next_step < len(steps):
        last = max((i for i, m in enumerate(messages) if m["role"] == "assistant"), default=None)
        if last is None:
            return None  # steps no recorded message caused: not a conversation we can pay
        rewards[last] = (rewards[last] or 0.0) + sum(step.reward for step in steps[next_step:])
    return Conversation(messages, rewards, roles if any(r is not None for r in roles) else None, RECORDED)


# --------------------------------------------------------------------------- synthesized
def _named_call(action: Any) -> tuple[str, str] | None:
    """``(name, arguments JSON text)`` of an action in any shape ``env.step`` takes; None for other text."""
    if isinstance(action, str):
        try:
            action = json.loads(action)
        except ValueError:
            return None
    if not isinstance(action, dict):
        return None
    if isinstance(action.get("function"), dict):
        action = action["function"]
    name = action.get("name")
    if not isinstance(name, str) or not name:
        return None
    arguments = action.get("arguments", {})
    return name, arguments if isinstance(arguments, str) else _text(arguments) or ""


def _synthesized(trajectory: dict[str, Any], steps: list[_Step], settings: SynthesisSettings) -> Conversation:
    messages = [
        _message("system", render_prompt("react_system", settings.language, suite=settings.suite,
                                         max_steps=settings.max_steps)),
        _message("user", task_prompt(settings.language, suite=settings.suite,
                                     query=_text(trajectory.get("query")) or "", context=trajectory.get("context"))),
    ]
    rewards: list[float | None] = [None, None]
    for index, step in enumerate(steps):
        call = _named_call(step.action)
        if call is None:
            messages.append(_message("assistant", _text(step.action) or ""))
            messages.append(_message("user", step.observation))
        else:
            call_id = f"call_{index}"
            messages.append(_message("assistant", "", tool_calls=[_tool_call(call_id, *call)]))
            messages.append(_message("tool", step.observation, tool_call_id=call_id, name=call[0]))
        rewards += [step.reward, None]
    return Conversation(messages, rewards, None, SYNTHESIZED)


def conversation_of(trajectory: dict[str, Any], settings: SynthesisSettings) -> Conversation | None:
    """The conversation of one trajectory line (see module docstring); None when it holds none.

    None: a trajectory with neither recorded messages nor a query (a worker failure, which played
    nothing). Raises :class:`BadTrajectory` for a line whose steps or messages are malformed.
    """
    steps = _steps(trajectory)
    raw_messages = trajectory.get("messages")
    if raw_messages is not None and not isinstance(raw_messages, list):
        raise BadTrajectory(f"'messages' must be a list, got {type(raw_messages).__name__}")
    if raw_messages:
        recorded = _recorded(raw_messages, steps)
        if recorded is not None:
            return recorded
    if trajectory.get("query") is None:
        return None
    return _synthesized(trajectory, steps, settings)


# --------------------------------------------------------------------------- for chat templates
def chat_template_messages(messages: list[dict[str, Any]], *, parse_arguments: bool = True) -> list[dict[str, Any]]:
    """``messages`` as exported (or as ``datasets`` reads them) ready for ``apply_chat_template``.

    An Arrow struct has every field in every row, so a user message reads back with
    ``tool_calls=None``; templates that test ``'tool_calls' in message`` need the key gone, so keys
    whose value is None are dropped. With ``parse_arguments`` each call's ``arguments`` JSON text
    becomes the object most Hugging Face templates expect (``arguments | tojson``); text that is
    not a JSON object stays as it is.
    """
    out = []
    for message in messages:
        clean = {k: v for k, v in message.items() if v is not None}
        if clean.get("tool_calls"):
            calls = []
            for call in clean["tool_calls"]:
                function = {k: v for k, v in call["function"].items() if v is not None}
                arguments = function.get("arguments")
                if parse_arguments and isinstance(arguments, str):
                    try:
                        parsed = json.loads(arguments)
                    except ValueError:
                        parsed = None
                    if isinstance(parsed, dict):
                        function["arguments"] = parsed
                calls.append({**{k: v for k, v in call.items() if v is not None}, "function": function})
            clean["tool_calls"] = calls
        out.append(clean)
    return out


def split_by_agent_role(messages: list[dict[str, Any]],
                        agent_roles: list[str | None] | None) -> dict[str | None, list[dict[str, Any]]]:
    """The conversation of each agent role (Plan-and-Execute: planner, worker, reporter), in order;
    ``{None: messages}`` for an agent with one conversation."""
    if not agent_roles:
        return {None: list(messages)}
    by_role: dict[str | None, list[dict[str, Any]]] = {}
    for message, role in zip(messages, agent_roles):
        by_role.setdefault(role, []).append(message)
    return by_role
