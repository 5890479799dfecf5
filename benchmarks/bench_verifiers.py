"""Oracle rollouts of every sample episode through verifiers' own eval runner, against a scripted server.

Each episode's gold calls are scripted as the model's native tool calls on an OpenAI-compatible server
on 127.0.0.1 (``tests/openai_server.py``); verifiers' ``run_eval`` drives ``load_environment()``'s
rollouts at ``--concurrency``. Prints rollouts/s, env steps/s and how many rollouts equal the same
actions played on an in-process env (per-step rewards and return).

    python benchmarks/bench_verifiers.py [--csv ../shared/mobilitybench/sample_dev.csv] [--concurrency 8]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import REPO  # noqa: E402

sys.path.insert(0, str(REPO / "tests"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--csv", type=Path, default=REPO.parent / "shared" / "mobilitybench" / "sample_dev.csv")
    parser.add_argument("--concurrency", type=int, default=8, help="verifiers max_concurrent (default 8)")
    args = parser.parse_args(argv)

    from openai_server import MODEL, react_script
    from test_verifiers_env import EpisodeRoutedServer, client_config, oracle_actions, play_in_process
    from verifiers.v1.cli.eval.runner import run_eval
    from verifiers.v1.configs.cli.eval import EvalConfig

    from mobility_agents.adapters.verifiers import load_environment, step_rewards
    from mobility_env.mobilitybench.build import build_directory
    from mobility_env.mobilitybench.loaders import load_episodes

    with tempfile.TemporaryDirectory() as tmp:
        built = build_directory(load_episodes(args.csv), Path(tmp) / "built", source=str(args.csv))
        env = load_environment("MobilityBench-v0", data=str(built))
        tasks = list(env.taskset)
        plans = {t.data.prompt: oracle_actions("MobilityBench-v0", t.data.info) for t in tasks}
        expected = {t.data.id: play_in_process("MobilityBench-v0", t.data.info, plans[t.data.prompt]) for t in tasks}
        with EpisodeRoutedServer({p: react_script(a) for p, a in plans.items()}) as server:
            config = EvalConfig(env=env.config, model=MODEL, client=client_config(server), rich=None, push=False,
                                output_dir=str(Path(tmp) / "eval"), run={"dir": "run"},
                                max_concurrent=args.concurrency)
            started = time.perf_counter()
            episodes = asyncio.run(run_eval(config))
            elapsed = time.perf_counter() - started
    traces = [t for e in episodes for t in e.traces]
    steps = sum(len(t.info["mobility"]["steps"]) for t in traces)

    def same(trace) -> bool:
        want = expected[trace.task.data.id]
        got = step_rewards(trace)
        return bool(trace.ok) and abs(trace.reward - want["return"]) < 1e-9 and len(got) == len(want["rewards"]) \
            and all(abs(a - b) < 1e-9 for a, b in zip(got, want["rewards"]))

    print(f"{len(traces)} rollouts, {steps} env steps in {elapsed:.2f} s: {len(traces) / elapsed:.1f} rollouts/s, "
          f"{steps / elapsed:.1f} steps/s (max_concurrent={args.concurrency}); identical to in-process: "
          f"{sum(map(same, traces))}/{len(traces)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
