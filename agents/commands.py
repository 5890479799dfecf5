"""``mobility-env run``: run an agent over episodes, write results, print the scorecard."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Callable

from mobility_env.errors import ConfigError

AGENTS = ("rule", "oracle", "react", "plan-execute")


def agent_factory(args: argparse.Namespace) -> Callable[[], Any]:
    """A zero-argument constructor for the chosen agent (each worker builds its own)."""
    if args.agent == "rule":
        from .rule import RuleAgent

        return RuleAgent
    if args.agent == "oracle":
        from .oracle import OracleAgent

        return OracleAgent
    from .llm import LLMConfig

    config = LLMConfig.from_sources(args=args, models_file=args.models_file, preset=args.preset)
    if args.agent == "react":
        from .react import ReActAgent

        return lambda: ReActAgent(config)
    from .plan_execute import PlanExecuteAgent

    return lambda: PlanExecuteAgent(config)


def _cmd_run(args: argparse.Namespace) -> int:
    from mobility_rewards.scorecard import format_scorecard

    from .runner import RunConfig, default_out_dir, run_local

    if args.samples_per_episode < 1 or args.workers < 1 or args.concurrency < 1:
        raise ConfigError("--samples-per-episode, --workers and --concurrency must be at least 1")
    if args.resume and args.out is None:
        raise ConfigError("--resume needs the --out directory of the run to continue")
    if args.retry_failed and not args.resume:
        raise ConfigError("--retry-failed only makes sense with --resume")
    out = args.out or default_out_dir(args.agent, args.data)
    env_kwargs: dict[str, Any] = {"max_steps": args.max_steps, "obs_format": args.obs_format}
    config = RunConfig(out_dir=Path(out), data=args.data, episode_ids=args.episode, scenarios=args.scenario,
                       limit=args.limit, samples_per_episode=args.samples_per_episode, seed=args.seed,
                       resume=args.resume, retry_failed=args.retry_failed, workers=args.workers, progress=not args.no_progress,
                       env_kwargs=env_kwargs, meta={"agent": args.agent, "model": args.model, "backend": args.backend})
    factory = agent_factory(args)
    if args.backend == "ray":
        from .ray_runner import run_ray

        records = run_ray(factory, config, address=args.address, concurrency=args.concurrency)
    else:
        records = run_local(factory, config)
    print(format_scorecard(records))
    failures = sum(1 for r in records if r.get("failure"))
    print(f"\n{len(records)} episode result(s) in {out}/results.jsonl" + (f"; {failures} recorded failure(s)" if failures else ""))
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    run = subparsers.add_parser(
        "run", help="run an agent over episodes and print the scorecard (default: rule agent, bundled data)",
        description="Run an agent over episodes. Writes OUT/results.jsonl (one line per finished episode, flushed), "
                    "OUT/trajectories.jsonl (messages, tool calls, observations, rewards) and OUT/run.json, then "
                    "prints the paper's scorecard. With no arguments: the rule agent on the bundled synthetic set, offline.")
    run.add_argument("--agent", choices=AGENTS, default="rule", help="agent to run (default: rule)")
    run.add_argument("--data", help="built directory or official CSV/XLSX/JSONL (default: bundled synthetic set)")
    run.add_argument("--out", type=Path, help="run directory (default: runs/AGENT-DATA-TIMESTAMP)")
    run.add_argument("--resume", action="store_true", help="continue the run in --out, skipping finished episodes")
    run.add_argument("--retry-failed", action="store_true",
                     help="with --resume: also re-run episodes whose result is a recorded failure (e.g. the model "
                          "server was down); the new line is appended and readers keep the last one")
    run.add_argument("--limit", type=int, help="run at most this many episodes")
    run.add_argument("--scenario", action="append", help="only this task scenario (repeatable), e.g. 'Weather Query'")
    run.add_argument("--episode", action="append", help="only this episode id (repeatable)")
    run.add_argument("--samples-per-episode", type=int, default=1, help="samples per episode, for pass^k and RL groups")
    run.add_argument("--seed", type=int, default=0, help="run seed (per-episode seeds derive from it)")
    run.add_argument("--max-steps", type=int, default=10, help="actions per episode (default 10, the paper's)")
    run.add_argument("--obs-format", choices=("compact", "raw"), default="compact", help="observation format")
    run.add_argument("--backend", choices=("local", "ray"), default="local", help="where episodes run")
    run.add_argument("--workers", type=int, default=1, help="parallel workers (threads locally, actors on Ray)")
    run.add_argument("--address", help="Ray cluster address to join (default: start a local one)")
    run.add_argument("--concurrency", type=int, default=1,
                     help="episodes in flight per Ray worker (threads; raise it for LLM-bound agents)")
    run.add_argument("--no-progress", action="store_true", help="no progress bar")
    llm = run.add_argument_group("LLM agents (react, plan-execute)")
    llm.add_argument("--model", help="model name (or OPENAI_MODEL; default: the server's only model)")
    llm.add_argument("--base-url", help="OpenAI-compatible endpoint (or OPENAI_BASE_URL)")
    llm.add_argument("--api-key", help="API key (or OPENAI_API_KEY)")
    llm.add_argument("--models-file", type=Path, help="TOML file of named model presets")
    llm.add_argument("--preset", help="preset name in --models-file")
    llm.add_argument("--temperature", type=float, help="sampling temperature (default 0.1)")
    llm.add_argument("--max-tokens", type=int, help="max output tokens per call (default 8192)")
    llm.add_argument("--language", choices=("zh", "en"), help="prompt language (default zh)")
    llm.add_argument("--tool-mode", choices=("native", "json"),
                     help="native function calling (default) or JSON-in-text for servers without tool support")
    llm.add_argument("--timeout", type=float, help="seconds per model request (default 60)")
    llm.add_argument("--max-retries", type=int, help="retries on 429/5xx/timeouts, with exponential backoff (default 4)")
    for role in ("planner", "worker", "reporter"):
        llm.add_argument(f"--{role}-model", help=f"model of the Plan-and-Execute {role} (default: --model)")
    run.set_defaults(func=_cmd_run)

    export = subparsers.add_parser("export", help="export a run's trajectories to Parquet for RL trainers",
                                   description="One row per (episode, sample): prompt, turns, per-step rewards, "
                                               "GRPO group-normalized advantages, metrics, tokens (schema in the README).")
    export.add_argument("run_dir", type=Path, help="a run directory with results.jsonl and trajectories.jsonl")
    export.add_argument("--out", type=Path, help="output .parquet (default RUN_DIR/trajectories.parquet)")
    export.set_defaults(func=_cmd_export)


def _cmd_export(args: argparse.Namespace) -> int:
    from .export import export_run

    out = export_run(args.run_dir, args.out or args.run_dir / "trajectories.parquet")
    print(f"wrote {out}")
    return 0
