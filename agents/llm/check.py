"""``mobility-env models check``: does this server make tool calls?

Some OpenAI-compatible servers accept ``tools=`` and then never call one: the chat template
has no tool section (llama.cpp without a function-calling chat format), tool parsing is off
(vLLM without ``--enable-auto-tool-choice --tool-call-parser``), or the model is too small.
A run against such a server fails every episode slowly; this check costs one request.

:func:`check_endpoint` runs the client's preflight (reachable, key, model), then one chat
completion offering the env's tools for a question that needs one, in the config's tool mode
(``native``: ``tools`` + ``tool_choice``; ``json``: the text protocol), and checks every tool
call of the reply against the tool schemas (:func:`mobility_env.tools.validate_call`). With
``structured_output`` set it also asks once for a short schema-bounded JSON object (``response_format``, the
Plan-and-Execute reporter's last try after two cut-offs) and reports whether the reply is one.
"""

from __future__ import annotations

import json
import time
from typing import Any

from mobility_env.tools import canonical_tool_name, openai_tools, validate_call

from ..base import AgentFailure
from .client import LLMClient, LLMConfig

QUESTIONS = {
    "zh": "北京市今天天气怎么样？请调用天气工具查询，不要直接回答。",
    "en": "What is the weather in Beijing today? Call the weather tool; do not answer from memory.",
}
SYSTEM = {
    "zh": "你是出行助手。需要信息时调用工具。",
    "en": "You are a mobility assistant. Call a tool when you need information.",
}


def check_endpoint(config: LLMConfig) -> dict[str, Any]:
    """One preflight and one tools request; a report dict (``tool_calls_work`` is the verdict).

    Raises the client's :class:`~mobility_agents.llm.client.EndpointError` when the server is down,
    refuses the key or the model, or does not speak the chat-completions protocol.
    """
    client = LLMClient(config)
    served = client.preflight(("react",))
    language = config.language if config.language in QUESTIONS else "en"
    messages = [{"role": "system", "content": SYSTEM[language]}, {"role": "user", "content": QUESTIONS[language]}]
    report: dict[str, Any] = {"base_url": config.base_url, "model": served["models"]["react"],
                              "tool_mode": config.tool_mode,
                              "tool_choice": config.tool_choice if config.tool_mode == "native" else None}
    started = time.monotonic()
    try:
        reply = client.complete(messages, role="react", tools=openai_tools(include_finish=True))
    except AgentFailure as exc:
        report.update(seconds=round(time.monotonic() - started, 2), failure=exc.kind, message=str(exc)[:300],
                      calls=[], tool_calls_work=False)
        report["advice"] = _advice(report)
        return report
    calls = []
    for call in reply.calls:
        try:
            arguments = json.loads(call.arguments) if isinstance(call.arguments, str) else call.arguments
        except ValueError:
            arguments = None
        tool = canonical_tool_name(call.name) if call.name else None
        problems = ["no such tool"] if tool is None else ["arguments are not JSON"] if arguments is None else \
            [str(p) for p in validate_call(tool, arguments)]
        calls.append({"name": call.name, "arguments": call.arguments[:200] if isinstance(call.arguments, str) else
                      call.arguments, "valid": not problems, "problems": problems[:3]})
    report.update(seconds=round(time.monotonic() - started, 2), finish_reason=reply.finish_reason,
                  content=(reply.content or "")[:200], calls=calls, input_tokens=reply.input_tokens,
                  output_tokens=reply.output_tokens,
                  tool_calls_work=bool(calls) and all(c["valid"] for c in calls))
    report["advice"] = _advice(report)
    if config.structured_output != "none":
        report.update(_check_structured(client, language))
    return report


#: A short reply as structured output: an object whose one string field is bounded.
STRUCTURED_PROBE = {"type": "object", "required": ["answer"],
                    "properties": {"answer": {"type": "string", "minLength": 1, "maxLength": 40}}}
STRUCTURED_QUESTION = {"zh": "北京是哪个国家的首都？用 JSON 回答：{\"answer\": \"...\"}",
                       "en": 'Which country is Beijing the capital of? Answer in JSON: {"answer": "..."}'}


def _check_structured(client: LLMClient, language: str) -> dict[str, Any]:
    """Whether the server returns :data:`STRUCTURED_PROBE` when asked for it as structured output."""
    messages = [{"role": "user", "content": STRUCTURED_QUESTION[language]}]
    found: dict[str, Any] = {"structured_output": client.config.structured_output}
    try:
        reply = client.complete_structured(messages, role="reporter", schema=STRUCTURED_PROBE)
    except AgentFailure as exc:
        return {**found, "structured_output_works": False, "structured_reply": f"{exc.kind}: {str(exc)[:200]}"}
    try:
        value = json.loads(reply.content or "")
    except ValueError:
        value = None
    answer = value.get("answer") if isinstance(value, dict) else None
    works = reply.finish_reason != "length" and isinstance(answer, str) and 1 <= len(answer) <= 40
    return {**found, "structured_output_works": works, "structured_reply": (reply.content or "")[:200]}


def _advice(report: dict[str, Any]) -> str:
    if report["tool_calls_work"]:
        return "tool calls work: run with these settings"
    if report.get("failure"):
        return f"the request failed ({report['failure']}); fix that first"
    if report["calls"]:
        return ("the model calls tools but with arguments the schema refuses; a larger model, or --tool-mode json, "
                "may do better")
    if report["tool_mode"] == "native":
        return ("no tool call in the reply: the server may drop `tools` (llama.cpp: start it with a function-calling "
                "--chat_format; vLLM: --enable-auto-tool-choice --tool-call-parser NAME), or the model ignores them; "
                "try --tool-choice required, or --tool-mode json")
    return "no JSON action in the reply: the model does not follow the text protocol; try a larger model"


def format_check(report: dict[str, Any]) -> str:
    """The report as a few lines for the console."""
    lines = [f"server      {report['base_url']}", f"model       {report['model']}",
             f"tool mode   {report['tool_mode']}"
             + (f" (tool_choice={report['tool_choice']})" if report.get("tool_choice") else ""),
             f"reply       {report.get('seconds', 0):.2f} s, finish_reason={report.get('finish_reason')}"]
    if report.get("failure"):
        lines.append(f"failure     {report['failure']}: {report.get('message', '')}")
    for call in report["calls"]:
        state = "valid" if call["valid"] else "invalid: " + "; ".join(call["problems"])
        lines.append(f"tool call   {call['name']}({call['arguments']}) - {state}")
    if not report["calls"] and report.get("content"):
        lines.append(f"text        {report['content']!r}")
    lines.append(f"verdict     {'OK' if report['tool_calls_work'] else 'NO'}: {report['advice']}")
    if "structured_output_works" in report:
        state = "OK" if report["structured_output_works"] else \
            "NO: the reply is not the asked-for JSON object; set --structured-output to the server's kind, or none"
        lines.append(f"structured  {report['structured_output']}: {report['structured_reply']!r}")
        lines.append(f"            {state}")
    return "\n".join(lines)
