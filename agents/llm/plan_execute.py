"""PlanExecuteAgent: a planner writes the plan, a worker calls the tools, a reporter answers.

1. **Planner** (one call, no tools): a JSON plan ``{"intent", "slots", "steps": [{"step",
   "goal", "tool"}]}``. A reply that is not such JSON is kept as data: the episode goes on
   with one generic step and no declared intent, slots or plan (and scores accordingly).
2. **Worker** (function calling with the map tools, ``finish`` withheld): one conversation
   across the steps; each step is announced in a user message, the worker calls tools (at
   most ``worker_turns_per_step`` model turns per step) and closes the step with a text
   summary. Every call goes to ``session.step`` unchanged, so malformed calls come back as
   env errors the worker sees. The worker never spends the env's last action: that one is
   kept for ``finish``, so Plan-and-Execute is bounded by the env's ``max_steps``.
3. **Reporter** (one call, no tools): reads every tool result and the worker's notes and
   answers ``{"answer", "route_index"}``; ``route_index`` points into the ``paths`` /
   ``transits`` of the last route result. A reporter that answers with a tool call anyway
   (``finish(answer=…)``, natively or as ``{"name": "finish", "arguments": {…}}`` text) is
   understood: its arguments are the report.

Every role's request starts with the same system message (:meth:`PlanExecuteAgent.team_prompt`:
the map tools and the task), its instructions following in its first user message, so a
server with prefix caching (vLLM, SGLang, llama.cpp) reads that prefix once per episode.

The episode ends with ``finish(answer, intent, slots, plan, route_index)``, the plan being
the planner's step labels. Messages are recorded in ``session.messages`` with an
``agent_role`` key; token usage is recorded per role (``planner``, ``worker``,
``reporter``), each role may use its own model (``LLMConfig.role_models``). A reply cut
off at ``max_tokens`` is never used (see :meth:`LLMClient.complete`; after two cut-offs the reporter
asks once more for :func:`report_schema` as structured output when ``structured_output`` is set); the episode deadline,
the circuit breaker and :meth:`PlanExecuteAgent.preflight` work as for ReAct.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from mobility_env.actions import parse_action
from mobility_env.tools import TOOLS

from ..base import Agent, AgentFailure, EpisodeSession
from .client import LLMClient, LLMConfig, LLMReply, describe_tools, find_json_object, models_label
from ..prompts import render_prompt
from .react import task_message

ROLES = ("planner", "worker", "reporter")
MAX_EVIDENCE_CHARS = 20_000  # per observation shown to the reporter


@dataclass(frozen=True)
class PlanStep:
    step: str
    goal: str
    tool: str | None = None


@dataclass
class Plan:
    """The planner's output; ``declared`` is False when its reply could not be read."""

    intent: str | None
    slots: dict[str, Any] | None
    steps: list[PlanStep]
    declared: bool

    @property
    def labels(self) -> list[str] | None:
        return [s.step for s in self.steps] if self.declared else None


def parse_plan(text: str, fallback_goal: str) -> Plan:
    """The planner's JSON plan; an unreadable reply gives one generic, undeclared step."""
    found = find_json_object(text or "")
    value = found[0] if found else None
    if isinstance(value, dict):
        raw_steps = value.get("steps", value.get("plan"))
        steps = []
        for item in raw_steps if isinstance(raw_steps, list) else []:
            if isinstance(item, dict):
                label = item.get("step") or item.get("label") or item.get("name")
                goal = item.get("goal") or item.get("description") or label
                tool = item.get("tool") if isinstance(item.get("tool"), str) else None
            else:
                label = goal = item
                tool = None
            if isinstance(label, str) and label.strip():
                steps.append(PlanStep(label.strip(), str(goal).strip(), tool))
        if steps:
            intent = value.get("intent")
            slots = value.get("slots")
            return Plan(intent=intent.strip() if isinstance(intent, str) and intent.strip() else None,
                        slots=slots if isinstance(slots, dict) else None, steps=steps, declared=True)
    return Plan(intent=None, slots=None, steps=[PlanStep("answer", fallback_goal)], declared=False)


def report_schema(max_tokens: int) -> dict[str, Any]:
    """The reporter's reply as a JSON schema, its answer at most half of ``max_tokens`` characters (at least
    40, at most 1,000): the last try after two cut-offs asks for it as structured output (``structured_output``),
    so a grammar-constrained server ends the reply within ``max_tokens``."""
    return {"type": "object", "required": ["answer", "route_index"],
            "properties": {"answer": {"type": "string", "minLength": 1,
                                      "maxLength": max(40, min(1000, max_tokens // 2))},
                           "route_index": {"anyOf": [{"type": "integer", "minimum": 0}, {"type": "null"}]}}}


def parse_report(text: str) -> tuple[str, int | None]:
    """``(answer, route_index)`` from the reporter's JSON; plain text is the answer itself.

    ``{"answer", "route_index"}`` is the asked-for shape; a tool call written as text,
    ``{"name": "finish", "arguments": {"answer", ...}}``, is read the same way.
    """
    found = find_json_object(text or "")
    value = found[0] if found else None
    report = _report_fields(value)
    if report is not None:
        return report
    return (text or "").strip(), None


def report_from_reply(reply: LLMReply) -> tuple[str, int | None]:
    """The reporter's ``(answer, route_index)``: from a tool call carrying an ``answer``
    argument if it made one (e.g. ``finish``), else from its text (:func:`parse_report`)."""
    for call in reply.calls:
        try:
            arguments = json.loads(call.arguments)
        except (TypeError, ValueError, RecursionError):
            continue
        report = _report_fields(arguments)
        if report is not None:
            return report
    return parse_report(reply.content)


def _report_fields(value: Any) -> tuple[str, int | None] | None:
    if isinstance(value, dict) and isinstance(value.get("name"), str) and "answer" not in value:
        arguments = value.get("arguments", value.get("parameters"))
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except (ValueError, RecursionError):
                return None
        value = arguments
    if isinstance(value, dict) and isinstance(value.get("answer"), str) and value["answer"].strip():
        return value["answer"].strip(), as_route_index(value.get("route_index"))
    return None


def worker_note(index: int, label: str, text: str) -> str:
    """``"{index}. {label}: {text}"`` without doubling a prefix the worker already wrote:
    ``"1. answer: …"``, ``"Step 1 (answer): …"``, ``"步骤1：…"`` or ``"answer: …"``."""
    step = rf"\(?\s*{re.escape(label)}\s*\)?"
    echo = re.compile(rf"^\s*(?:(?:step|步骤|第)\s*{index}\s*步?\s*(?:{step})?\s*[:：.、)]"
                      rf"|{index}\s*[.)、]?\s*{step}\s*[:：]|{step}\s*[:：])\s*", re.IGNORECASE)
    body = (text or "").strip()
    while body and (stripped := echo.sub("", body, count=1)) != body:
        body = stripped
    return f"{index}. {label}: {body or '-'}"


def _any_name(name: Any) -> str | None:
    """Tool names as written (the evidence shows every call, map tool or phone tool)."""
    return name.strip() or None if isinstance(name, str) else None


def as_route_index(value: Any) -> int | None:
    """An int route index from what a model wrote (``0``, ``"1"``, ``2.0``), else None."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, float) and value.is_integer() and value >= 0:
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


class PlanExecuteAgent(Agent):
    """Planner -> worker -> reporter over an OpenAI-compatible server; see module docstring.

    Args:
        config: the :class:`LLMConfig`; ``role_models`` may name a model per role.
        client: an :class:`LLMClient` to share; by default one is built from ``config``.
        worker_turns_per_step: model turns the worker may take on one plan step (default 3).
    """

    name = "plan-execute"

    def __init__(self, config: LLMConfig, *, client: LLMClient | None = None, worker_turns_per_step: int = 3):
        if worker_turns_per_step < 1:
            raise ValueError(f"worker_turns_per_step must be at least 1, got {worker_turns_per_step!r}")
        self.config = config
        self.client = client or LLMClient(config)
        self.worker_turns_per_step = worker_turns_per_step
        self.model = config.models_label(ROLES)
        self.episode_timeout_s = config.episode_timeout_s
        self._served: dict[str, str] = {}  # the model each role's server reported

    def preflight(self) -> dict[str, Any]:
        """One 1-token request per distinct role model.

        Raises ``EndpointError`` if the endpoint cannot serve the run."""
        return self.client.preflight(ROLES)

    # ------------------------------------------------------------------ episode
    def play(self, session: EpisodeSession) -> None:
        plan = self.make_plan(session)
        notes = self.execute(session, plan)
        if session.done:  # the env ended the episode (cannot happen while the budget holds)
            return
        answer, route_index = self.report(session, plan, notes)
        self.finish(session, plan, answer, route_index)

    def _ask(self, session: EpisodeSession, role: str, messages: list[dict[str, Any]],
             tools: list[dict[str, Any]] | None = None, schema: dict[str, Any] | None = None) -> LLMReply:
        try:
            reply = self.client.complete(messages, role=role, tools=tools, session=session, schema=schema)
        except AgentFailure as exc:
            exc.transcript = [{**m, "agent_role": role} for m in exc.transcript]
            raise
        session.messages.extend({**m, "agent_role": role} for m in reply.discarded)
        self._served[role] = reply.model
        self.model = models_label({r: self._served.get(r) or self.config.model_for(r) for r in ROLES})
        self._say(session, role, messages, reply.message)
        return reply

    @staticmethod
    def _say(session: EpisodeSession, role: str, messages: list[dict[str, Any]], message: dict[str, Any]) -> None:
        messages.append(message)
        session.messages.append({**message, "agent_role": role})

    def _max_actions(self, session: EpisodeSession) -> int:
        return int(session.info.get("max_steps") or self.config.max_steps)

    def team_prompt(self, session: EpisodeSession) -> str:
        """The first message of every role, the same text for planner, worker and reporter (the
        map tools and the task), so a server with prefix caching reads it once per episode;
        each role's instructions follow in its first user message."""
        map_tools = [t for t in session.tools if t["function"]["name"] != "finish"]
        return render_prompt("team", self.config.language, suite=session.suite, tools=describe_tools(map_tools),
                             task=task_message(session, self.config.language))

    # ------------------------------------------------------------------ planner
    def make_plan(self, session: EpisodeSession) -> Plan:
        language = self.config.language
        messages: list[dict[str, Any]] = []
        self._say(session, "planner", messages, {"role": "system", "content": self.team_prompt(session)})
        self._say(session, "planner", messages, {"role": "user", "content": render_prompt(
            "planner", language, suite=session.suite, max_steps=self._max_actions(session) - 1)})
        reply = self._ask(session, "planner", messages)
        return parse_plan(reply.content, session.query)

    # ------------------------------------------------------------------ worker
    def execute(self, session: EpisodeSession, plan: Plan) -> list[str]:
        """Run the plan's steps with the worker; return its per-step summaries."""
        language = self.config.language
        action_budget = self._max_actions(session) - 1  # the last action is finish's
        steps = plan.steps[: self.config.max_steps]
        plan_text = "\n".join(f"{i}. {s.step}: {s.goal}" for i, s in enumerate(plan.steps, 1))
        messages: list[dict[str, Any]] = []
        self._say(session, "worker", messages, {"role": "system", "content": self.team_prompt(session)})
        notes: list[str] = []
        exhausted = False
        for index, step in enumerate(steps, 1):
            announce = render_prompt("worker_step", language, index=index, total=len(steps), step=step.step,
                                     goal=step.goal)
            if index == 1:
                announce = f"{render_prompt('worker', language, suite=session.suite)}\n\n{plan_text}\n\n{announce}"
            self._say(session, "worker", messages, {"role": "user", "content": announce})
            step_calls: list[str] = []
            for _ in range(self.worker_turns_per_step):
                # read each turn: a MobilePA skill load adds tools from the next step on
                tools = [t for t in session.tools if t["function"]["name"] != "finish"]
                reply = self._ask(session, "worker", messages, tools)
                if not reply.calls:
                    notes.append(worker_note(index, step.step, reply.content))
                    break
                step_calls += [call.name or "?" for call in reply.calls]
                for call in reply.calls:
                    if call.name == "finish":
                        content = json.dumps({"error": {"type": "not_allowed", "message":
                                              "finish is the reporter's; end the step with a text summary"}})
                    elif len(session.steps) >= action_budget:
                        exhausted = True
                        content = json.dumps({"error": {"type": "budget_exhausted", "message":
                                              f"the {action_budget} tool calls of this episode are used up"}})
                    else:
                        content = session.step(call.action)
                    self._say(session, "worker", messages,
                              {"role": "tool", "tool_call_id": call.id, "content": content})
                    if session.done:
                        return notes
                if exhausted:
                    return notes
            else:  # every turn of the step was a tool call: note what was called, not nothing
                notes.append(worker_note(index, step.step, f"(no summary; called {', '.join(step_calls)})"))
        return notes

    # ------------------------------------------------------------------ reporter
    def report(self, session: EpisodeSession, plan: Plan, notes: list[str]) -> tuple[str, int | None]:
        language = self.config.language
        evidence, has_route = self.evidence(session)
        messages: list[dict[str, Any]] = []
        self._say(session, "reporter", messages, {"role": "system", "content": self.team_prompt(session)})
        self._say(session, "reporter", messages,
                  {"role": "user", "content": render_prompt("reporter", language, suite=session.suite) + "\n\n" +
                   render_prompt("reporter_input", language, plan=", ".join(s.step for s in plan.steps),
                                 evidence=evidence or "-", notes="\n".join(notes) or "-")})
        reply = self._ask(session, "reporter", messages, schema=report_schema(self.config.max_tokens))
        answer, route_index = report_from_reply(reply)
        return answer, route_index if has_route else None

    @staticmethod
    def evidence(session: EpisodeSession) -> tuple[str, bool]:
        """Every call of the episode with its observation; the last route result is marked."""
        lines = []
        route_steps = [i for i, s in enumerate(session.steps)  # MobilePA tools are not map tools: no route
                       if (name := parse_action(s.action).name) in TOOLS and TOOLS[name].kind == "route"
                       and s.error is None]
        for i, record in enumerate(session.steps):
            parsed = parse_action(record.action, resolve=_any_name)
            if parsed.name:
                call = f"{parsed.name}({json.dumps(parsed.arguments, ensure_ascii=False, default=str)})"
            else:
                call = str(record.action)[:200]
            marker = " [last route result]" if route_steps and i == route_steps[-1] else ""
            observation = record.observation
            if len(observation) > MAX_EVIDENCE_CHARS:
                observation = observation[:MAX_EVIDENCE_CHARS] + "…"
            lines.append(f"{i + 1}. {call}{marker}\n{observation}")
        return "\n\n".join(lines), bool(route_steps)

    # ------------------------------------------------------------------ finish
    def finish(self, session: EpisodeSession, plan: Plan, answer: str, route_index: int | None) -> None:
        if not answer:
            raise AgentFailure("empty_answer", "the reporter gave no answer")
        observation = session.finish(answer, intent=plan.intent, slots=plan.slots, plan=plan.labels,
                                     route_index=route_index)
        if session.done:
            return
        # The env rejected a declared field (e.g. an empty intent): deliver the answer alone.
        observation = session.finish(answer, route_index=route_index)
        if not session.done:
            raise AgentFailure("finish_rejected", f"the env rejected finish: {observation[:500]}")
