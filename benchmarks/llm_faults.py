"""LLM client under server faults, side by side with a plain ``openai`` client (not a test).

Measures, against the scripted server of ``tests/openai_server.py`` on 127.0.0.1:
when a silent and a trickling (1 byte / 3 s) server are given up (``timeout_s=5``); how long a
preflight takes on a silent server and on a refused port; the per-request overhead of the
guarded client over a plain ``openai.OpenAI`` client in the same run; the Python memory peak
while a 5 MB reply is refused (server in another process, so only the client is traced).

    python benchmarks/llm_faults.py
"""

from __future__ import annotations

import json
import multiprocessing as mp
import socket
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import openai  # noqa: E402
from openai_server import MODEL, ScriptedOpenAIServer, hang, huge_reply, text_turn, trickle  # noqa: E402

from mobility_agents.base import AgentFailure  # noqa: E402
from mobility_agents.llm.client import EndpointDown, LLMClient, LLMConfig  # noqa: E402

MESSAGES = [{"role": "user", "content": "hi"}]


def _config(server: ScriptedOpenAIServer, **overrides) -> LLMConfig:
    return LLMConfig(**{"model": MODEL, "base_url": server.base_url, "api_key": "k", "max_retries": 0, **overrides})


def _serve_huge(queue: mp.Queue, size: int) -> None:
    with ScriptedOpenAIServer([huge_reply(size)] * 2) as server:
        queue.put(server.base_url)
        time.sleep(60)


def main() -> int:
    out: dict[str, object] = {}
    for name, turn in (("silent", hang()), ("trickle_1_byte_per_3s", trickle(text_turn("ok"), interval_s=3.0))):
        with ScriptedOpenAIServer([turn]) as server:
            client = LLMClient(_config(server, timeout_s=5.0))
            start = time.monotonic()
            try:
                client.complete(MESSAGES, role="react")
            except AgentFailure as exc:
                out[f"{name}_failure"] = exc.kind
            out[f"{name}_given_up_after_s (timeout_s=5)"] = round(time.monotonic() - start, 3)
    with ScriptedOpenAIServer([hang()]) as server:
        client = LLMClient(_config(server, preflight_timeout_s=5.0))
        start = time.monotonic()
        try:
            client.preflight(("react",))
        except EndpointDown:
            pass
        out["preflight_silent_server_s (preflight_timeout_s=5)"] = round(time.monotonic() - start, 3)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = LLMClient(LLMConfig(model="m", base_url=f"http://127.0.0.1:{port}/v1"))
    start = time.monotonic()
    try:
        client.preflight(("react",))
    except EndpointDown:
        pass
    out["preflight_refused_port_s"] = round(time.monotonic() - start, 4)

    n = 300
    with ScriptedOpenAIServer([text_turn("ok")] * (2 * n)) as server:
        guarded = LLMClient(_config(server))
        guarded.complete(MESSAGES, role="react")
        plain = openai.OpenAI(base_url=server.base_url, api_key="k", max_retries=0)
        plain.chat.completions.create(model=MODEL, messages=MESSAGES)
        g, p = [], []
        for _ in range(n - 1):  # interleaved, so drift on the shared machine hits both alike
            start = time.perf_counter()
            guarded.complete(MESSAGES, role="react")
            g.append(time.perf_counter() - start)
            start = time.perf_counter()
            plain.chat.completions.create(model=MODEL, messages=MESSAGES, temperature=0.1, max_tokens=8192)
            p.append(time.perf_counter() - start)
    out["request_median_ms_guarded"] = round(statistics.median(g) * 1000, 3)
    out["request_median_ms_plain_openai"] = round(statistics.median(p) * 1000, 3)

    queue: mp.Queue = mp.Queue()
    server_process = mp.Process(target=_serve_huge, args=(queue, 5 * 2**20), daemon=True)
    server_process.start()
    url = queue.get()
    try:
        client = LLMClient(LLMConfig(model="m", base_url=url, max_retries=0))
        tracemalloc.start()
        try:
            client.complete(MESSAGES, role="react")
        except AgentFailure as exc:
            out["5MB_reply_failure"] = exc.kind
        out["5MB_reply_peak_MB_guarded"] = round(tracemalloc.get_traced_memory()[1] / 2**20, 2)
        tracemalloc.stop()
        plain = openai.OpenAI(base_url=url, api_key="k", max_retries=0)
        tracemalloc.start()
        plain.chat.completions.create(model="m", messages=MESSAGES)
        out["5MB_reply_peak_MB_plain_openai"] = round(tracemalloc.get_traced_memory()[1] / 2**20, 2)
        tracemalloc.stop()
    finally:
        server_process.kill()
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
