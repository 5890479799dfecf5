"""MobilePA sandbox costs: restoring a task's state (the heart of ``reset``) and steps that read or write it.

A phone-sized ``S_0`` (``--rows`` rows per table: settings, apps, permissions, alarms, events, contacts,
messages, calls) is built once; each round restores it ``--samples`` times and runs, on fresh states,
a write step (``set_wifi``, an UPDATE), an insert step (``create_alarm``: INSERT + id counter), a
read step (``list_alarms``), a refused step (permission denied) and ``delta()`` after two writes.
Then the same through ``MobilePA-v0`` on the bundled tasks (``reset`` at first visit and revisit, and each
task's first state-changing oracle call as an action text), overall and per verification bucket (``env.current``);
``--baseline REV`` times the revisit and the step again with the scorer of git revision ``REV``
(``env.baseline``), interleaved with the current one. MobilePA-v0's speed targets: a step with a database write
≤ 100 µs p50, ``reset`` ≤ 200 µs p50.

    python benchmarks/bench_mobilepa.py [--rows 40] [--samples 2000] [--rounds 3] [--baseline REV] [--out F]
"""

from __future__ import annotations

import argparse
import gc
import inspect
import json
import statistics
import subprocess
import sys
import time
import types
from collections import defaultdict
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


def scorer_at(revision: str) -> Any:
    """A ``PhoneScorer`` of MobilePA's verifier as it was at git ``revision`` (``rewards/mobilepa/verify.py``, before
    the suite folders ``rewards/mobilepa.py``), run on the current sandbox (its ``PhoneState`` and
    ``normalize_delta``): the old and the new scoring timed in the same run."""
    root = Path(__file__).resolve().parents[1]
    for file, package in (("rewards/mobilepa/verify.py", "mobility_rewards.mobilepa"),
                          ("rewards/mobilepa.py", "mobility_rewards")):
        shown = subprocess.run(["git", "-C", str(root), "show", f"{revision}:{file}"], capture_output=True, text=True)
        if shown.returncode == 0:
            source = shown.stdout
            break
    else:
        raise SystemExit(f"--baseline {revision}: no MobilePA verifier at that revision ({shown.stderr.strip()})")
    name = f"{package}._verify_at_{revision}"
    module = types.ModuleType(name)
    module.__package__ = package  # its relative imports (..verdict) resolve as in the package
    sys.modules[name] = module  # dataclasses look their module up
    exec(compile(source, f"{revision}:{file}", "exec"), module.__dict__)
    scorer = module.PhoneScorer()
    if "sandbox" in inspect.signature(scorer.start).parameters:
        return scorer
    return _BeforeOneProtocol(scorer)


class _BeforeOneProtocol:
    """A scorer from before the one scorer protocol (``step(scoring, call, calls, state)``, draining the state's
    touched tables itself) behind today's (``start(task, sandbox)``, ``step(scoring, call)``): the tables the call
    record says it wrote are handed back to the state for it to drain."""

    def __init__(self, scorer: Any):
        self.scorer, self.version = scorer, scorer.version

    def start(self, task: Any, sandbox: Any = None) -> Any:
        return (self.scorer.start(task), sandbox, [])

    def step(self, state: Any, call: Any, *, arguments_valid: bool | None = None) -> dict[str, float]:
        scoring, sandbox, calls = state
        calls.append(call)
        sandbox.touched = set(call.touched)
        return self.scorer.step(scoring, call, calls, sandbox)  # type: ignore[no-any-return]

    def finish(self, state: Any, trajectory: Any) -> Any:
        return self.scorer.finish(state[0], trajectory)


def _medians(per_round: list[dict[str, float]]) -> dict[str, float]:
    return {k: round(statistics.median(r[k] for r in per_round), 2) for k in ("p50_us", "p99_us")}


def bench_env(rounds: int, baseline: str | None = None) -> dict[str, Any]:
    """Through ``MobilePA-v0`` on the bundled tasks: ``reset`` (first visit: the task's template is built;
    revisit: restored from the pool) and the step of each task's first state-changing oracle call, overall and
    per verification bucket; with ``baseline`` (a git revision), the revisit and the step again with that
    revision's scorer, in the same rounds (the order of the two alternates from round to round)."""
    from mobility_env.mobilepa.catalogue import PHONE_TOOLS
    from mobility_env.mobilepa.env import MobilePAEnv
    from mobility_env.mobilepa.episode import _TEMPLATES
    from mobility_rewards.mobilepa.verify import PhoneScorer

    env = MobilePAEnv()
    plans = []
    for task_id, task in env.tasks.items():
        write = next((c for c in task.oracle_calls if c.name in PHONE_TOOLS and PHONE_TOOLS[c.name].writes), None)
        if write is not None:
            action = json.dumps({"name": write.name, "arguments": write.arguments}, ensure_ascii=False)
            plans.append((task_id, task.bucket, action))
    buckets = sorted({bucket for _, bucket, _ in plans})
    clock = time.perf_counter_ns
    variants = ["current"] + (["baseline"] * (baseline is not None))
    old = scorer_at(baseline) if baseline is not None else None
    per_round: dict[str, list[dict[str, float]]] = defaultdict(list)
    for number in range(rounds):
        _TEMPLATES.clear()  # every task's first reset builds its template again
        env.scorer = PhoneScorer()  # and its scorer meets the task for the first time
        gc.collect()
        first = []
        for task_id, _, _ in plans:
            t0 = clock()
            env.reset(options={"task_id": task_id})
            first.append(clock() - t0)
        per_round["current/reset_first_visit"].append(percentiles(first))
        for variant in (variants if number % 2 == 0 else variants[::-1]):
            env.scorer = old if variant == "baseline" else PhoneScorer()
            again: dict[str, list[int]] = defaultdict(list)
            steps: dict[str, list[int]] = defaultdict(list)
            for task_id, _, _ in plans:  # warm: the scorer has met every task once
                env.reset(options={"task_id": task_id})
            for task_id, task_bucket, action in plans:
                t0 = clock()
                env.reset(options={"task_id": task_id})
                t1 = clock()
                env.step(action)
                again[task_bucket].append(t1 - t0)
                steps[task_bucket].append(clock() - t1)
            for only in [None, *buckets]:
                where = variant if only is None else f"{variant}/{only}"
                per_round[f"{where}/reset_revisit"].append(
                    percentiles([t for b in buckets if only in (None, b) for t in again[b]]))
                per_round[f"{where}/write_step"].append(
                    percentiles([t for b in buckets if only in (None, b) for t in steps[b]]))
    medians = {key: _medians(value) for key, value in per_round.items()}
    out: dict[str, Any] = {}
    for variant in variants:
        entry = out[variant] = {name.split("/")[-1]: value for name, value in medians.items()
                                if name.count("/") == 1 and name.startswith(variant + "/")}
        entry["by_bucket"] = {bucket: {"steps": sum(1 for _, b, _ in plans if b == bucket),
                                       **{name.split("/")[-1]: value for name, value in medians.items()
                                          if name.startswith(f"{variant}/{bucket}/")}} for bucket in buckets}
    if baseline is not None:
        out["baseline"]["revision"] = baseline
    out["tasks"] = len(plans)
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=40, help="rows per table in S0")
    parser.add_argument("--samples", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--baseline", metavar="REV",
                        help="also time reset and the write step with MobilePA's scorer of this git "
                             "revision, in the same rounds (e.g. 80f0eb6, the scoring before issue 14's speed-up)")
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
              "env": bench_env(args.rounds, args.baseline)}
    summary, env = result["median_of_rounds"], result["env"]["current"]
    result["targets"] = {"write_step_p50_us": {"sandbox": summary["write (set_wifi)"]["p50_us"],
                                               "env": env["write_step"]["p50_us"],
                                               **{f"env_{bucket}": row["write_step"]["p50_us"]
                                                  for bucket, row in env["by_bucket"].items()}, "target": 100},
                         "reset_p50_us": {"sandbox_restore": summary["restore"]["p50_us"],
                                          "env_first_visit": env["reset_first_visit"]["p50_us"],
                                          "env_revisit": env["reset_revisit"]["p50_us"], "target": 200}}
    emit(result, args.out)
    return result


if __name__ == "__main__":
    main()
