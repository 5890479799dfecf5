"""ReActAgent: one model alternates tool calls and observations until it calls ``finish``.

The loop, per model turn (at most ``LLMConfig.max_steps`` turns):

1. send the conversation (system prompt, the query and context, every earlier turn) with
   the env's tool list (native function calling, or the JSON-in-text protocol);
2. pass every tool call the model made to ``session.step`` unchanged, so the env validates
   it: a call with broken JSON arguments, an unknown tool or a bad argument comes back as a
   ``tool`` message holding the env's typed error (``invalid_json``, ``unknown_tool``,
   ``schema_error``…) and the model gets to fix it. A rejected ``finish`` is fed back too;
3. stop when the episode ends (a valid ``finish``, or the env's step limit). A reply in
   plain text without a tool call is the model's answer: it is sent as ``finish(answer=text)``.
   A reply cut off at ``max_tokens`` is never executed or sent as the answer (the client
   asks once more for a shorter one; two in a row end the episode as ``truncated_reply``).

Every message is recorded in ``session.messages`` (a discarded cut-off reply too, flagged
``"discarded"``), every reply's token usage under the role ``react`` and the request counts
in ``session.model_calls``. Model-server problems raise ``AgentFailure`` from
:class:`LLMClient` (recorded as the episode's failure, scored DR = 0; ``deadline`` once
``LLMConfig.episode_timeout_s`` has passed) or :class:`~mobility_agents.llm.client.EndpointDown`,
which stops the run. :meth:`ReActAgent.preflight` checks the endpoint before a run.

Example::

    from mobility_agents.llm.client import LLMConfig
    from mobility_agents.llm.react import ReActAgent
    agent = ReActAgent(LLMConfig(model="qwen3", base_url="http://127.0.0.1:8000/v1"))
    record = agent.run_episode(env, env.episode_ids[0])
"""

from __future__ import annotations

from typing import Any

from ..base import Agent, AgentFailure, EpisodeSession
from .client import LLMClient, LLMConfig, LLMReply
from ..prompts import render_prompt, task_prompt

ROLE = "react"


def task_message(session: EpisodeSession, language: str) -> str:
    """The user turn: the request and the episode context (MobilePA: the earlier dialogue)."""
    return task_prompt(language, suite=session.suite, query=session.query, context=session.context)


def execute_tool_calls(session: EpisodeSession, reply: LLMReply, messages: list[dict[str, Any]]) -> None:
    """Step the env with each call of ``reply``; append one ``tool`` message per call."""
    for call in reply.calls:
        observation = session.step(call.action)
        messages.append({"role": "tool", "tool_call_id": call.id, "content": observation})
        if session.done:
            return


class ReActAgent(Agent):
    """ReAct over an OpenAI-compatible server; see the module docstring.

    Args:
        config: the :class:`LLMConfig` (model, endpoint, sampling, tool mode, language).
        client: an :class:`LLMClient` to share; by default one is built from ``config``.
    """

    name = "react"

    def __init__(self, config: LLMConfig, *, client: LLMClient | None = None):
        self.config = config
        self.client = client or LLMClient(config)
        self.model = config.model_for(ROLE)
        self.episode_timeout_s = config.episode_timeout_s

    def preflight(self) -> dict[str, Any]:
        """One 1-token request to the endpoint; raises ``EndpointError`` if it cannot serve the run."""
        return self.client.preflight((ROLE,))

    def play(self, session: EpisodeSession) -> None:
        language = self.config.language
        max_actions = int(session.info.get("max_steps") or self.config.max_steps)
        messages = session.messages
        system = render_prompt("react_system", language, suite=session.suite, max_steps=max_actions)
        messages.append({"role": "system", "content": system})
        messages.append({"role": "user", "content": task_message(session, language)})
        for _ in range(self.config.max_steps):
            reply = self.client.complete(messages, role=ROLE, tools=session.tools, session=session)
            self.model = reply.model or self.model
            messages.extend(reply.discarded)
            messages.append(reply.message)
            if reply.calls:
                execute_tool_calls(session, reply, messages)
                if session.done:
                    return
                continue
            if reply.content:
                observation = session.finish(reply.content)
                if session.done:
                    return
                messages.append({"role": "user", "content": observation})
                continue
            messages.append({"role": "user", "content": render_prompt("nudge", language)})
        raise AgentFailure("turn_limit", f"no finish after {self.config.max_steps} model turns")
