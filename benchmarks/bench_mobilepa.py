"""MobilePA sandbox costs: restoring a task's state (the heart of ``reset``) and steps that read or write it.

A phone-sized ``S_0`` (``--rows`` rows per table: settings, apps, permissions, alarms, events, contacts,
messages, calls) is built once; each round restores it ``--samples`` times and runs, on fresh states,
a write step (``set_wifi``, an UPDATE), an insert step (``create_alarm``: INSERT + id counter), a
read step (``list_alarms``), a refused step (permission denied) and ``delta()`` after two writes.
Then the same through ``MobilePA-v0`` on the bundled tasks (``reset`` at first visit and revisit, and each
task's first state-changing oracle call as an action text). Issue 14's targets: a step with a database write
≤ 100 µs p50, ``reset`` ≤ 200 µs p50.

    python benchmarks/bench_mobilepa.py [--rows 40] [--samples 2000] [--rounds 3] [--out F]
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import emit, machine, percentiles  # noqa: E402


def template_rows(rows: int) -> dict[str, list[dict[str, Any]]]:
    return {
        "settings": [{"key": "wifi", "value": "off"}, {"key": "airplane_mode", "value": "off"}]
        + [{"key": f"pref_{i}", "value": str(i)} for i in range(rows)],
        "apps": [{"app": f"app{i}", "installed": 1, "running": i % 2} for i in range(rows)]
        + [{"app": "messages", "installed": 1, "running": 0}],
        "permissions": [{"app": "messages", "permission": "sms", "granted": 0}]
        + [{"app": f"app{i}", "permission": "storage", "granted": 1} for i in range(rows)],
        "alarms": [{"alarm_id": f"a{i}", "time": f"{i % 24:02d}:{(7 * i) % 60:02d}", "label": "", "repeat": "once",
                    "enabled": 1} for i in range(rows)],
        "events": [{"event_id": f"e{i}", "title": f"会议{i}", "start": f"2026-12-{1 + i % 28:02d} 09:00",
                    "end": f"2026-12-{1 + i % 28:02d} 10:00", "location": ""} for i in range(rows)],
        "contacts": [{"contact_id": f"c{i}", "name": f"联系人{i}", "phone": f"1380000{i:04d}", "relation": ""}
                     for i in range(rows)],
        "messages": [{"message_id": f"m{i}", "contact_id": f"c{i % max(rows, 1)}", "direction": "in",
                      "text": "你好" * 5, "sent_at": "2026-11-30 20:00"} for i in range(rows)],
        "calls": [{"call_id": f"k{i}", "contact_id": f"c{i % max(rows, 1)}", "direction": "in",
                   "at": "2026-11-30 20:00"} for i in range(rows)],
    }


def bench_env(rounds: int) -> dict[str, Any]:
    """Through ``MobilePA-v0`` on the bundled tasks: ``reset`` (first visit: the task's template is built;
    revisit: restored from the pool) and the step of each task's first state-changing oracle call."""
    from mobility_env.mobilepa.catalogue import PHONE_TOOLS
    from mobility_env.mobilepa.env import MobilePAEnv
    from mobility_env.mobilepa.episode import _TEMPLATES

    env = MobilePAEnv()
    plans = []
    for task_id, task in env.tasks.items():
        write = next((c for c in task.oracle_calls if c.name in PHONE_TOOLS and PHONE_TOOLS[c.name].writes), None)
        if write is not None:
            plans.append((task_id, json.dumps({"name": write.name, "arguments": write.arguments}, ensure_ascii=False)))
    clock = time.perf_counter_ns
    first: list[int] = []
    again: list[int] = []
    steps: list[int] = []
    per_round: dict[str, list[dict[str, float]]] = {"reset_first_visit": [], "reset_revisit": [], "write_step": []}
    for _ in range(rounds):
        _TEMPLATES.clear()  # every task's first reset builds its template again
        gc.collect()
        first, again, steps = [], [], []
        for task_id, action in plans:
            t0 = clock()
            env.reset(options={"task_id": task_id})
            first.append(clock() - t0)
        for task_id, action in plans:
            t0 = clock()
            env.reset(options={"task_id": task_id})
            t1 = clock()
            env.step(action)
            again.append(t1 - t0)
            steps.append(clock() - t1)
        per_round["reset_first_visit"].append(percentiles(first))
        per_round["reset_revisit"].append(percentiles(again))
        per_round["write_step"].append(percentiles(steps))
    out: dict[str, Any] = {name: {k: round(statistics.median(r[k] for r in per), 2) for k in ("p50_us", "p99_us")}
                           for name, per in per_round.items()}
    out["tasks"] = len(plans)
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=40, help="rows per table in S0")
    parser.add_argument("--samples", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out")
    args = parser.parse_args(argv)
    from mobility_env.mobilepa import StateTemplate, execute

    started = time.perf_counter()
    template = StateTemplate(template_rows(args.rows))
    build_ms = (time.perf_counter() - started) * 1000
    clock = time.perf_counter_ns
    cases = {"write (set_wifi)": ("set_wifi", {"on": True}),
             "insert (create_alarm)": ("create_alarm", {"time": "23:59"}),
             "read (list_alarms)": ("list_alarms", {}),
             "refused (permission)": ("send_message", {"contact_id": "c1", "text": "hi"})}
    rounds: dict[str, list[dict[str, float]]] = {name: [] for name in ["restore", *cases, "delta after 2 writes"]}
    for _ in range(args.rounds):
        gc.collect()
        samples: dict[str, list[int]] = {name: [] for name in rounds}
        for _ in range(args.samples):
            t0 = clock()
            state = template.restore()
            samples["restore"].append(clock() - t0)
            for name, (tool, arguments) in cases.items():
                t0 = clock()
                execute(state, tool, arguments, step=1)
                samples[name].append(clock() - t0)
            t0 = clock()
            state.delta()
            samples["delta after 2 writes"].append(clock() - t0)
            state.close()
        for name, values in samples.items():
            rounds[name].append(percentiles(values))
    result = {"machine": machine(), "rows_per_table": args.rows, "template_build_ms": round(build_ms, 2),
              "median_of_rounds": {name: {k: round(statistics.median(r[k] for r in per), 2)
                                          for k in ("p50_us", "p99_us")} for name, per in rounds.items()},
              "env": bench_env(args.rounds)}
    summary, env = result["median_of_rounds"], result["env"]
    result["targets"] = {"write_step_p50_us": {"sandbox": summary["write (set_wifi)"]["p50_us"],
                                               "env": env["write_step"]["p50_us"], "target": 100},
                         "reset_p50_us": {"sandbox_restore": summary["restore"]["p50_us"],
                                          "env_first_visit": env["reset_first_visit"]["p50_us"],
                                          "env_revisit": env["reset_revisit"]["p50_us"], "target": 200}}
    emit(result, args.out)
    return result


if __name__ == "__main__":
    main()
