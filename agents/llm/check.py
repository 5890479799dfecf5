"""``mobility-env models check``: does a run's round trip work on this server, and in which tool mode?

Some OpenAI-compatible servers accept ``tools=`` and then never call one: the chat template
has no tool section (llama.cpp without a function-calling chat format), tool parsing is off
(vLLM without ``--enable-auto-tool-choice --tool-call-parser``), or the model is too small.
Others call tools but never show the model their results: llama-cpp-python's
``chatml-function-calling`` template has no branch for ``tool`` messages, so the model answers
without having read what the tool returned. A run against either fails every episode slowly;
this check costs two requests per tool mode.

:func:`check_endpoint` runs the client's preflight (reachable, key, model), then, for each tool
mode asked (``native``: ``tools`` + ``tool_choice``; ``json``: the text protocol), the round
trip a run makes (:func:`check_mode`):

1. the env's tools are offered for a weather question: the reply must call **the tool the
   question needs** (``weather_query``) with arguments its schema accepts
   (:func:`mobility_env.tools.validate_call`), not merely some schema-valid call;
2. the call is answered the way the agents answer it (a ``tool`` message; in json mode the
   observation as a user message) with a result holding a reference code no model can guess
   (:data:`TOKEN`), and the next reply must repeat it: a server that drops tool messages fails
   here, named as the likely cause, with the mode to use instead;
3. in native mode, whatever the model did: are tool results in the prompt at all? Two 1-token
   requests end with the result of a scripted ``weather_query`` call, the second result
   :data:`DELIVERY_PAD` longer; a server whose chat template renders tool messages counts more
   prompt tokens for the second (``usage.prompt_tokens``). The same count for both proves the
   template drops them — the model never sees a tool result, however good it is — and fails the
   mode for that reason (unknown when the server reports no usage). This tells a server fault
   from a model too small to read results, which step 2 alone cannot.

Each reply's latency is reported, with a warning when it takes more than half the request
timeout (``--timeout``: a run's requests would start timing out). The verdict is per mode, and
``recommended`` names the mode to run with (the asked one when it passes). With
``structured_output`` set it also asks once for a short schema-bounded JSON object
(``response_format``, the Plan-and-Execute reporter's last try after two cut-offs) and reports
whether the reply is one.
"""

from __future__ import annotations

import dataclasses
import json
import time
from typing import Any, Sequence

from mobility_env.tools import canonical_tool_name, openai_tools, validate_call

from ..base import AgentFailure
from .client import LLMClient, LLMConfig

QUESTIONS = {
    "zh": "北京市今天天气怎么样？请调用天气工具查询，不要直接回答；回答时写出工具结果里的查询编号。",
    "en": "What is the weather in Beijing today? Call the weather tool; do not answer from memory. In your answer, "
          "quote the reference code the tool result gives.",
}
SYSTEM = {
    "zh": "你是出行助手。需要信息时调用工具。",
    "en": "You are a mobility assistant. Call a tool when you need information.",
}
#: The tool the question needs.
NEEDED_TOOL = "weather_query"
#: A reference code in the tool result: an answer holding it has read the result.
TOKEN = "QZ-7316"
TOOL_RESULT = {"zh": f"北京市今天晴，3~12°C，北风2级。查询编号：{TOKEN}",
               "en": f"Beijing today: sunny, 3-12 °C, light north wind. Reference code: {TOKEN}"}
MODES = ("native", "json")
#: What the delivery probe adds to the tool result: dozens of tokens in any tokenizer, if the template shows it.
DELIVERY_PAD = {"zh": "风力和湿度正常，空气质量良好，适合出行。" * 5,
                "en": " Wind and humidity are normal; the air quality is good for travel." * 5}


def check_endpoint(config: LLMConfig, modes: Sequence[str] | None = None) -> dict[str, Any]:
    """The preflight, then :func:`check_mode` for each of ``modes`` (default: the config's tool mode).

    ``works`` is the verdict of the config's own mode (what a run with these settings would use);
    ``recommended`` the mode to run with: the config's when it works, else the first that does, else
    None. Raises the client's :class:`~mobility_agents.llm.client.EndpointError` when the server is down,
    refuses the key or the model, or does not speak the chat-completions protocol.
    """
    client = LLMClient(config)
    served = client.preflight(("react",))
    language = config.language if config.language in QUESTIONS else "en"
    modes = list(dict.fromkeys(modes or (config.tool_mode,)))
    results = [check_mode(dataclasses.replace(config, tool_mode=mode), language) for mode in modes]
    working = [r["tool_mode"] for r in results if r["works"]]
    own = next((r for r in results if r["tool_mode"] == config.tool_mode), results[0])
    report: dict[str, Any] = {"base_url": config.base_url, "model": served["models"]["react"],
                              "tool_mode": config.tool_mode, "modes": results, "works": own["works"],
                              "recommended": config.tool_mode if own["works"] else (working[0] if working else None)}
    if config.structured_output != "none":
        report.update(_check_structured(client, language))
    return report


# --------------------------------------------------------------------------- remembered verdicts
#: ``models check`` verdicts, in the user's cache folder (:func:`mobility_env.layout.cache_dir`), read by ``run``.
CHECKS_FILE = "model_checks.json"


def _check_key(base_url: str | None, model: str | None, tool_mode: str) -> str:
    return f"{base_url or 'openai'}|{model or '(served)'}|{tool_mode}"


def remember(report: dict[str, Any], config: LLMConfig) -> None:
    """Keep each checked mode's verdict for ``run`` (keyed by server, the model as given, tool mode)."""
    from mobility_env.layout import cache_dir
    from mobility_env.runfiles import json_text, write_text_atomic

    path = cache_dir() / CHECKS_FILE
    try:
        known = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        known = {}
    if not isinstance(known, dict):
        known = {}
    for result in report["modes"]:
        known[_check_key(config.base_url, config.model, result["tool_mode"])] = {
            "works": result["works"], "advice": result["advice"], "served_model": report["model"],
            "checked": time.strftime("%Y-%m-%dT%H:%M:%S")}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(path, json_text(known, indent=2))
    except OSError:  # a read-only home: the check still printed its verdict
        pass


def remembered(config: LLMConfig) -> dict[str, Any] | None:
    """The last ``models check`` verdict for this server, model and tool mode, or None (never checked)."""
    from mobility_env.layout import cache_dir

    try:
        known = json.loads((cache_dir() / CHECKS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    found = known.get(_check_key(config.base_url, config.model, config.tool_mode)) if isinstance(known, dict) else None
    return found if isinstance(found, dict) else None


def check_mode(config: LLMConfig, language: str) -> dict[str, Any]:
    """The two-turn round trip in ``config.tool_mode`` (see the module docstring); a report dict."""
    client = LLMClient(config)
    tools = openai_tools(include_finish=True)
    messages = [{"role": "system", "content": SYSTEM[language]}, {"role": "user", "content": QUESTIONS[language]}]
    result: dict[str, Any] = {"tool_mode": config.tool_mode,
                              "tool_choice": config.tool_choice if config.tool_mode == "native" else None,
                              "seconds": [], "calls": [], "tool_calls_work": False, "round_trip": False}
    reply = _timed(client, messages, tools, result)
    if reply is not None:
        result["calls"] = [_judged(call) for call in reply.calls]
        result.update(finish_reason=reply.finish_reason, content=(reply.content or "")[:200])
        needed = next((c for c, judged in zip(reply.calls, result["calls"])
                       if judged["valid"] and judged["tool"] == NEEDED_TOOL), None)
        result["tool_calls_work"] = bool(result["calls"]) and all(c["valid"] for c in result["calls"]) \
            and needed is not None
        if result["tool_calls_work"] and needed is not None:
            messages += [reply.message, {"role": "tool", "tool_call_id": needed.id, "name": needed.name,
                                         "content": TOOL_RESULT[language]}]
            second = _timed(client, messages, tools, result)
            if second is not None:
                said = (second.content or "") + "".join(call.arguments for call in second.calls)
                result["round_trip"] = TOKEN in said
                result["answer"] = said[:200]
    if config.tool_mode == "native" and not (result.get("failure") and not result["calls"]):
        result["tool_results_delivered"] = _tool_results_delivered(client, language, tools, result)
    result["works"] = result["tool_calls_work"] and result["round_trip"] \
        and result.get("tool_results_delivered") is not False
    slow = [s for s in result["seconds"] if s > config.timeout_s / 2]
    if slow:
        result["warning"] = (f"a reply took {max(slow):.1f} s, more than half the request timeout "
                             f"({config.timeout_s:g} s, --timeout): a run's requests would time out; raise --timeout "
                             "or use a faster server")
    result["advice"] = _advice(result)
    return result


def _timed(client: LLMClient, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
           result: dict[str, Any]) -> Any:
    """One request; its latency into ``result["seconds"]``; None (and the failure in ``result``) when it fails."""
    started = time.monotonic()
    try:
        return client.complete(messages, role="react", tools=tools)
    except AgentFailure as exc:
        result.update(failure=exc.kind, message=str(exc)[:300])
        return None
    finally:
        result["seconds"].append(round(time.monotonic() - started, 2))


def _tool_results_delivered(client: LLMClient, language: str, tools: list[dict[str, Any]],
                            result: dict[str, Any]) -> bool | None:
    """Step 3 of the module docstring: does the server put tool messages in the prompt? True when the longer
    tool result counts more prompt tokens, False when both count the same, None when unknown (no usage reported,
    or a request failed: then ``result["delivery_failure"]``). The counts go to ``result["prompt_tokens"]``."""
    call = {"id": "call_check", "type": "function",
            "function": {"name": NEEDED_TOOL, "arguments": json.dumps({"city": "北京市"}, ensure_ascii=False)}}
    counts: list[int | None] = []
    for text in (TOOL_RESULT[language], TOOL_RESULT[language] + DELIVERY_PAD[language]):
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": SYSTEM[language]}, {"role": "user", "content": QUESTIONS[language]},
            {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": call["id"], "name": NEEDED_TOOL, "content": text}]
        started = time.monotonic()
        try:
            counts.append(client.prompt_tokens(messages, role="react", tools=tools))
        except AgentFailure as exc:
            result["delivery_failure"] = f"{exc.kind}: {str(exc)[:200]}"
            return None
        finally:
            result["seconds"].append(round(time.monotonic() - started, 2))
    result["prompt_tokens"], result["delivery_pad_chars"] = counts, len(DELIVERY_PAD[language])
    short, long = counts
    return None if short is None or long is None else long > short


def _judged(call: Any) -> dict[str, Any]:
    """One tool call of a reply: its name, arguments, and what its schema says of them."""
    try:
        arguments = json.loads(call.arguments) if isinstance(call.arguments, str) else call.arguments
    except ValueError:
        arguments = None
    tool = canonical_tool_name(call.name) if call.name else None
    problems = ["no such tool"] if tool is None else ["arguments are not JSON"] if arguments is None else \
        [str(p) for p in validate_call(tool, arguments)]
    return {"name": call.name, "tool": tool, "valid": not problems, "problems": problems[:3],
            "arguments": call.arguments[:200] if isinstance(call.arguments, str) else call.arguments}


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


def _advice(result: dict[str, Any]) -> str:
    if result.get("tool_results_delivered") is False:
        short, long = result["prompt_tokens"]
        dropped = (f"the server drops tool messages: the prompt counts {short} tokens whether the tool result is "
                   f"short or {result['delivery_pad_chars']} characters longer "
                   f"({long}), so the model never sees what a tool returns (llama-cpp-python's "
                   "chatml-function-calling template has no branch for tool messages); use --tool-mode json, where "
                   "results come back as user messages")
        turn = None if result["tool_calls_work"] else _turn_advice(result)  # an unread result: explained above
        return dropped if turn is None else f"{dropped}. Also: {turn}"
    return _turn_advice(result) or "tool calls and tool results both work in this mode"


def _turn_advice(result: dict[str, Any]) -> str | None:
    """What the two turns (steps 1 and 2) found wrong; None when both worked."""
    mode = result["tool_mode"]
    other = "json" if mode == "native" else "native"
    if result["tool_calls_work"] and result["round_trip"]:
        return None
    if result.get("failure") and not result["calls"]:
        return f"the request failed ({result['failure']}); fix that first"
    if result["tool_calls_work"]:
        if result.get("failure"):
            return f"the second request, carrying the tool result, failed ({result['failure']})"
        if mode == "native" and result.get("tool_results_delivered"):
            return ("the answer does not repeat the tool result's reference code, which the server did put in the "
                    "prompt: the model ignores what tools return; try --tool-mode json or a larger model")
        if mode == "native":
            return ("the answer does not repeat the tool result's reference code: the server probably drops tool "
                    "messages (llama-cpp-python's chatml-function-calling template has no branch for them) or the "
                    "model ignores them; use --tool-mode json, where results come back as user messages")
        return "the answer does not repeat the tool result's reference code: the model ignores what tools return"
    if any(c["valid"] for c in result["calls"]):
        return (f"the model called {', '.join(c['tool'] or '?' for c in result['calls'])}, not {NEEDED_TOOL}, which "
                f"the question needs: it picks tools by name, not by what they do; try --tool-mode {other} or a "
                "larger model")
    if result["calls"]:
        return ("the model calls tools but with arguments the schema refuses; a larger model, or "
                f"--tool-mode {other}, may do better")
    if mode == "native":
        return ("no tool call in the reply: the server may drop `tools` (llama.cpp: start it with a function-calling "
                "--chat_format; vLLM: --enable-auto-tool-choice --tool-call-parser NAME), or the model ignores them; "
                "try --tool-choice required, or --tool-mode json")
    return "no JSON action in the reply: the model does not follow the text protocol; try a larger model"


def format_check(report: dict[str, Any]) -> str:
    """The report as a few lines per mode for the console, then the recommendation."""
    lines = [f"server      {report['base_url']}", f"model       {report['model']}"]
    for result in report["modes"]:
        choice = f" (tool_choice={result['tool_choice']})" if result.get("tool_choice") else ""
        lines += ["", f"tool mode   {result['tool_mode']}{choice}",
                  "replies     " + ", ".join(f"{s:.2f} s" for s in result["seconds"])
                  + f", finish_reason={result.get('finish_reason')}"]
        if result.get("failure"):
            lines.append(f"failure     {result['failure']}: {result.get('message', '')}")
        for call in result["calls"]:
            state = "valid" if call["valid"] else "invalid: " + "; ".join(call["problems"])
            lines.append(f"tool call   {call['name']}({call['arguments']}) - {state}")
        if not result["calls"] and result.get("content"):
            lines.append(f"text        {result['content']!r}")
        if result["tool_calls_work"]:
            lines.append(f"tool result {'read' if result['round_trip'] else 'NOT read'}: the answer "
                         f"{'repeats' if result['round_trip'] else 'lacks'} the reference code "
                         f"({result.get('answer', '')!r:.80})")
        delivered = result.get("tool_results_delivered", "n/a")
        if delivered != "n/a":
            counts = result.get("prompt_tokens")
            state = {True: "in the prompt", False: "DROPPED by the server", None: "unknown"}[delivered]
            why = f" (prompt tokens {counts[0]} vs {counts[1]} with a longer result)" if counts and None not in counts \
                else \
                f" ({result.get('delivery_failure') or 'the server reports no usage'})"
            lines.append(f"tool results {state}{why}")
        if result.get("warning"):
            lines.append(f"warning     {result['warning']}")
        lines.append(f"verdict     {'OK' if result['works'] else 'NO'}: {result['advice']}")
    recommended = report["recommended"]
    lines += ["", f"recommended {'--tool-mode ' + recommended if recommended else 'none of the checked modes works'}"
              + ("" if recommended in (None, report["tool_mode"]) else f" (not {report['tool_mode']})")]
    if "structured_output_works" in report:
        state = "OK" if report["structured_output_works"] else \
            "NO: the reply is not the asked-for JSON object; set --structured-output to the server's kind, or none"
        lines.append(f"structured  {report['structured_output']}: {report['structured_reply']!r}")
        lines.append(f"            {state}")
    return "\n".join(lines)
