"""MobilePA task generation: generate, check (oracle passes, cheap trajectories fail) and write N tasks.

MobilePA-v0's target: 10,000 tasks generated and built in under a minute on a 2-core machine. The run
times :func:`mobility_env.mobilepa.generate.write_task_set` end to end (generation, the per-task
checks against ``verify_phone_task``, ``tasks.jsonl`` + ``manifest.json``) with ``--workers``
processes, then, on a sample of the written tasks, the parts of one task's cost: building its
``S_0`` template (``StateTemplate``) and playing its oracle and the adversaries, so the total can be
read against them. Prints JSON.

    python benchmarks/bench_mobilepa_tasks.py [--n 10000] [--seed 0] [--workers 2] [--sample 300] [--out F]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import emit, machine, percentiles  # noqa: E402

from mobility_env.mobilepa.episode import play  # noqa: E402
from mobility_env.mobilepa.generate import write_task_set  # noqa: E402
from mobility_env.mobilepa.generate_checks import adversaries  # noqa: E402
from mobility_env.mobilepa.state import StateTemplate  # noqa: E402
from mobility_env.mobilepa.tasks import TASKS_FILE, load_tasks  # noqa: E402
from mobility_rewards.mobilepa.verify import verify_phone_task  # noqa: E402

TARGET_S = 60.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1, help="generator processes (the tasks are the same)")
    parser.add_argument("--sample", type=int, default=300, help="tasks timed part by part after the run")
    parser.add_argument("--out", default=None, help="also write the JSON here")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="bench-mobilepa-") as tmp:
        started = time.perf_counter()
        out = write_task_set(Path(tmp) / "tasks", args.n, args.seed, verify=verify_phone_task, workers=args.workers)
        total = time.perf_counter() - started
        size = (out / TASKS_FILE).stat().st_size
        loaded_at = time.perf_counter()
        tasks = load_tasks(out)
        load_s = time.perf_counter() - loaded_at

    sample = tasks[: args.sample]
    template_ns, oracle_ns, adversary_ns = [], [], []
    for task in sample:
        t0 = time.perf_counter_ns()
        StateTemplate(task.initial_state)
        t1 = time.perf_counter_ns()
        oracle = play(task)  # builds the task's template once more (a new process-wide cache entry)
        verify_phone_task(task, oracle)
        t2 = time.perf_counter_ns()
        for calls, answer in adversaries(task, oracle).values():
            verify_phone_task(task, play(task, calls, answer))
        t3 = time.perf_counter_ns()
        template_ns.append(t1 - t0)
        oracle_ns.append(t2 - t1)
        adversary_ns.append(t3 - t2)
    result = {
        "benchmark": "mobilepa_task_generation",
        "n": args.n, "seed": args.seed, "workers": args.workers,
        "total_s": round(total, 2), "tasks_per_s": round(args.n / total, 1) if total else None,
        "ms_per_task": round(1000 * total / args.n, 3) if args.n else None,
        "target": f"10,000 tasks in under {TARGET_S:.0f} s",
        "meets_target": (total < TARGET_S) if args.n >= 10_000 else None,  # (judged at 10,000 tasks only)
        "tasks_jsonl_bytes": size, "load_tasks_s": round(load_s, 2),
        "per_task_parts": {"state_template": percentiles(template_ns),
                           "oracle_play_and_verify": percentiles(oracle_ns),
                           "adversaries_play_and_verify": percentiles(adversary_ns), "sample": len(sample)},
        "machine": machine(),
    }
    emit(result, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
