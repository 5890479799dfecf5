"""Steps per second through ``mobility-env serve`` with N concurrent sessions, beside the in-process rate.

The workload is the oracle's episodes (MobilityBench-v0: the gold calls and the reference finish;
MobilePA-v0: the task's oracle calls and answer), each session cycling through them from its own
offset: a reset, then steps until the episode ends. Three ways to play it, in one run:

* ``in_process`` — one ``make_env`` env in this process (the ceiling a server is measured against);
* ``openenv`` — N openenv-core clients (``MobilityEnvClient``, async, one event loop) against the
  server in a subprocess (``mobility-env serve``), over loopback;
* ``raw_ws`` — N bare ``websockets`` connections sending pre-serialized messages and parsing the
  replies with ``json.loads``: what the protocol costs without the client library.

Steps (not resets) that complete inside the timed window count; every figure also has the CPU
seconds the server process and this process spent per step, so it shows where the time goes:
``server_cpu_share`` is how many cores the server kept busy (at most 1: one process, one event
loop), and ``steps_per_server_core_s`` = 1 / ``server_cpu_us_per_step`` is the rate the server
would reach with one core to itself (derived, not measured; on a shared machine the measured rate
is lower by the share other processes took). ``server_runqueue_share`` is the time the server was
ready to run but waited for a CPU (``/proc/PID/schedstat``), per second of the window: on an
otherwise idle machine it is near 0; well above 0 the figure measures the machine's other load as
much as the server. The load average is recorded before and after.
``target`` says whether openenv-core's client with 16 sessions reached 1,000 steps/s (the serving target).

    python benchmarks/bench_serve.py [--env MobilityBench-v0] [--sessions 1 4 16] [--seconds 5] [--data DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import emit, machine, percentiles  # noqa: E402

from mobility_agents.targets import default_env_options, MOBILEPA, MOBILITYBENCH, make_env, open_store  # noqa: E402


@dataclass
class Plan:
    episode_id: str
    actions: list[Any]
    reset_message: str = ""
    step_messages: list[str] = field(default_factory=list)


@dataclass
class Tally:
    steps: int = 0
    resets: int = 0
    episodes: int = 0
    latencies_ns: list[int] = field(default_factory=list)


def oracle_plans(env_id: str, data: str | None, limit: int) -> list[Plan]:
    from mobility_rewards.mobilitybench.reference import reference_finish

    env = make_env(open_store(env_id, data), default_env_options(env_id))
    ids = (env.task_ids if env_id == MOBILEPA else env.episode_ids)[:limit]
    plans = []
    for episode_id in ids:
        env.reset(options={"episode_id": episode_id})
        if env_id == MOBILEPA:
            task = env.tasks[episode_id]
            actions: list[Any] = [{"name": c.name, "arguments": dict(c.arguments)} for c in task.oracle_calls]
            actions.append({"name": "finish", "arguments": {"answer": task.oracle_answer}})
        else:
            episode = env.episode
            actions = [{"name": c.name, "arguments": dict(c.arguments)} for c in episode.gold_calls]
            finish = reference_finish(episode)
            actions.append({"name": "finish", "arguments": {"answer": finish.answer, "intent": finish.intent,
                                                            "slots": finish.slots, "plan": finish.plan,
                                                            "route_index": finish.route_index}})
        plans.append(Plan(episode_id, actions, json.dumps({"type": "reset", "data": {"episode_id": episode_id}}),
                          [json.dumps({"type": "step", "data": {"tool_call": a}}) for a in actions]))
    return plans


def summary(tally: Tally, seconds: float, server_cpu_s: float | None = None,
            client_cpu_s: float | None = None, server_wait_s: float | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"steps": tally.steps, "resets": tally.resets, "episodes": tally.episodes,
                           "steps_per_s": round(tally.steps / seconds, 1),
                           "resets_per_s": round(tally.resets / seconds, 1),
                           "step_latency": percentiles(tally.latencies_ns)}
    if server_cpu_s is not None and tally.steps:
        out["server_cpu_us_per_step"] = round(server_cpu_s / tally.steps * 1e6, 1)
        out["server_cpu_share"] = round(server_cpu_s / seconds, 2)  # cores the server kept busy
        out["steps_per_server_core_s"] = round(tally.steps / server_cpu_s, 1) if server_cpu_s else None
    if server_wait_s is not None:
        out["server_runqueue_share"] = round(server_wait_s / seconds, 2)
    if client_cpu_s is not None and tally.steps:
        out["client_cpu_us_per_step"] = round(client_cpu_s / tally.steps * 1e6, 1)
        out["client_cpu_share"] = round(client_cpu_s / seconds, 2)
    return out


def in_process(env_id: str, data: str | None, plans: list[Plan], seconds: float) -> dict[str, Any]:
    env = make_env(open_store(env_id, data), default_env_options(env_id))
    for plan in plans[:20]:  # warm the caches the server's envs have warmed too
        env.reset(options={"episode_id": plan.episode_id})
        for action in plan.actions:
            if env.step(action)[2]:
                break
    tally, clock = Tally(), time.perf_counter_ns
    cpu0, start = time.process_time(), time.perf_counter()
    stop_ns = clock() + int(seconds * 1e9)
    index = 0
    while clock() < stop_ns:
        plan = plans[index % len(plans)]
        index += 1
        env.reset(options={"episode_id": plan.episode_id})
        tally.resets += 1
        for action in plan.actions:
            begin = clock()
            done = env.step(action)[2]
            end = clock()
            if end > stop_ns:
                break
            tally.steps += 1
            tally.latencies_ns.append(end - begin)
            if done:
                tally.episodes += 1
                break
    elapsed = time.perf_counter() - start
    return summary(tally, elapsed, client_cpu_s=time.process_time() - cpu0)


@dataclass
class Window:
    """The timed window the workers share: opened once every session has connected and warmed up."""

    ready: asyncio.Event
    stop_ns: int = 0


async def _openenv_worker(base_url: str, plans: list[Plan], offset: int, window: Window, tally: Tally) -> None:
    from mobility_agents.adapters.openenv.serve import MobilityEnvClient

    client = MobilityEnvClient(base_url=base_url, message_timeout_s=120)
    clock = time.perf_counter_ns
    try:
        await client.reset(episode_id=plans[offset % len(plans)].episode_id)  # connect and warm up, not timed
        await window.ready.wait()
        index = offset
        while clock() < window.stop_ns:
            plan = plans[index % len(plans)]
            index += 1
            await client.reset(episode_id=plan.episode_id)
            tally.resets += 1
            for action in plan.actions:
                begin = clock()
                result = await client.step(action)
                end = clock()
                if end > window.stop_ns:
                    return
                tally.steps += 1
                tally.latencies_ns.append(end - begin)
                if result.done:
                    tally.episodes += 1
                    break
    finally:
        await client.close()


async def _raw_worker(ws_url: str, plans: list[Plan], offset: int, window: Window, tally: Tally) -> None:
    from websockets.asyncio.client import connect

    clock = time.perf_counter_ns
    async with connect(ws_url, max_size=None, compression=None) as ws:
        await ws.send(plans[offset % len(plans)].reset_message)
        await ws.recv()
        await window.ready.wait()
        index = offset
        while clock() < window.stop_ns:
            plan = plans[index % len(plans)]
            index += 1
            await ws.send(plan.reset_message)
            if json.loads(await ws.recv())["type"] != "observation":
                raise RuntimeError("reset refused")
            tally.resets += 1
            for message in plan.step_messages:
                begin = clock()
                await ws.send(message)
                reply = json.loads(await ws.recv())
                end = clock()
                if reply["type"] != "observation":
                    raise RuntimeError(f"step refused: {reply}")
                if end > window.stop_ns:
                    return
                tally.steps += 1
                tally.latencies_ns.append(end - begin)
                if reply["data"]["done"]:
                    tally.episodes += 1
                    break


def _runqueue_wait_s(pid: int) -> float | None:
    """Seconds ``pid`` has spent runnable but not running (None where the kernel does not say)."""
    try:
        return int(Path(f"/proc/{pid}/schedstat").read_text().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return None


def _process_cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def over_server(kind: str, base_url: str, server_pid: int, plans: list[Plan], sessions: int,
                seconds: float) -> dict[str, Any]:
    """``sessions`` clients of ``kind`` (openenv, raw_ws) in one event loop for ``seconds``."""
    async def run() -> tuple[Tally, float, float, float | None]:
        tally, window = Tally(), Window(asyncio.Event())
        worker = _openenv_worker if kind == "openenv" else _raw_worker
        url = base_url if kind == "openenv" else base_url.replace("http://", "ws://") + "/ws"
        tasks = [asyncio.ensure_future(worker(url, plans, index * 7, window, tally)) for index in range(sessions)]
        await asyncio.sleep(1.0 + 0.05 * sessions)  # every session connects and plays its warm-up reset
        client_cpu, server_cpu, wait = time.process_time(), _process_cpu_s(server_pid), _runqueue_wait_s(server_pid)
        window.stop_ns = time.perf_counter_ns() + int(seconds * 1e9)
        window.ready.set()
        await asyncio.gather(*tasks)
        wait_after = _runqueue_wait_s(server_pid)
        waited = None if wait is None or wait_after is None else wait_after - wait
        return tally, time.process_time() - client_cpu, _process_cpu_s(server_pid) - server_cpu, waited

    tally, client_cpu, server_cpu, waited = asyncio.run(run())
    return summary(tally, seconds, server_cpu, client_cpu, waited)


def start_server(env_id: str, data: str | None) -> tuple[subprocess.Popen, str]:
    command = [sys.executable, "-m", "mobility_env.cli", "serve", "--env", env_id, "--port", "0",
               "--max-sessions", "64", "--idle-timeout", "0"]
    if data:
        command += ["--data", data]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    banner = process.stdout.readline() if process.stdout else ""
    if " on http://" not in banner:
        process.kill()
        raise SystemExit(f"the server did not start: {banner!r}")
    return process, banner.split(" on ", 1)[1].split(" ", 1)[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--env", choices=(MOBILITYBENCH, MOBILEPA), default=MOBILITYBENCH)
    parser.add_argument("--data", help="built directory (MobilePA-v0: task directory); default the bundled set")
    parser.add_argument("--sessions", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument("--seconds", type=float, default=5.0, help="timed window per measurement")
    parser.add_argument("--episodes", type=int, default=200, help="distinct episodes in the workload")
    parser.add_argument("--no-raw", action="store_true", help="skip the bare-websocket measurements")
    parser.add_argument("--out", help="also write the JSON here")
    args = parser.parse_args()

    plans = oracle_plans(args.env, args.data, args.episodes)
    result: dict[str, Any] = {"bench": "serve", "env": args.env, "machine": machine(), "seconds": args.seconds,
                              "episodes": len(plans),
                              "steps_per_episode": round(sum(len(p.actions) for p in plans) / len(plans), 2),
                              "in_process": in_process(args.env, args.data, plans, args.seconds)}
    print(f"in process         : {result['in_process']['steps_per_s']:8.1f} steps/s", file=sys.stderr, flush=True)
    process, base_url = start_server(args.env, args.data)
    try:
        for sessions in args.sessions:
            for kind in ("openenv",) if args.no_raw else ("openenv", "raw_ws"):
                measured = over_server(kind, base_url, process.pid, plans, sessions, args.seconds)
                result.setdefault(kind, {})[str(sessions)] = measured
                print(f"{kind:8} {sessions:3} sessions: {measured['steps_per_s']:8.1f} steps/s (server "
                      f"{measured.get('server_cpu_us_per_step')} us CPU/step, {measured.get('server_cpu_share')} "
                      f"core, waited for a CPU {measured.get('server_runqueue_share')} s/s)", file=sys.stderr,
                      flush=True)
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=30)
    result["loadavg_after"] = list(os.getloadavg())
    sixteen = result.get("openenv", {}).get("16")
    if sixteen is not None:
        result["target"] = {"what": "openenv client, 16 sessions, >= 1000 steps/s",
                            "steps_per_s": sixteen["steps_per_s"], "met": sixteen["steps_per_s"] >= 1000}
    emit(result, args.out)


if __name__ == "__main__":
    main()
