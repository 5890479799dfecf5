"""``mobility-env run``: run an agent over episodes, write results, print the scorecard."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Callable

from mobility_env.errors import ConfigError
from mobility_env.suites import SUITES, suite_of

from .targets import ENV_IDS, MOBILITYBENCH

AGENTS = ("rule", "oracle", "react", "plan-execute")


#: LLMConfig fields that change what a run measures (compared on --resume); transport
#: settings (URL, key, timeouts, retries) may change between sessions of one run.
LLM_IDENTITY_FIELDS = ("model", "role_models", "temperature", "max_tokens", "max_steps", "language", "tool_mode",
                       "tool_choice", "seed", "extra_body")


def _llm_config(args: argparse.Namespace) -> Any:
    from .llm.client import LLMConfig

    return LLMConfig.from_sources(args=args, models_file=args.models_file, preset=args.preset)


def agent_factory(args: argparse.Namespace, llm_config: Any = None) -> Callable[[], Any]:
    """A zero-argument constructor for the chosen agent (each worker builds its own).

    ``rule`` and ``oracle`` are per suite (:data:`mobility_agents.suites.BASELINES`); the LLM agents are the same
    for every suite, and the agents of one run share one :class:`~mobility_agents.llm.client.LLMClient` (its
    circuit breaker and concurrency gate count every worker's requests; on Ray each actor gets a copy)."""
    if args.agent in ("rule", "oracle"):
        from .suites import baseline

        return baseline(getattr(args, "env", MOBILITYBENCH), args.agent)  # type: ignore[no-any-return]
    config = llm_config if llm_config is not None else _llm_config(args)
    from .llm.client import LLMClient

    client = LLMClient(config)  # one per run: its breaker and its concurrency gate see every worker's requests
    if args.agent == "react":
        from .llm.react import ReActAgent

        return lambda: ReActAgent(config, client=client)
    from .llm.plan_execute import PlanExecuteAgent

    return lambda: PlanExecuteAgent(config, client=client)


def run_identity_of(args: argparse.Namespace, llm_config: Any) -> dict[str, Any]:
    """The agent part of the run's identity (``run.json``): agent name and LLM settings, no secrets."""
    if llm_config is None:
        return {"agent": args.agent}
    llm = {name: getattr(llm_config, name) for name in LLM_IDENTITY_FIELDS if hasattr(llm_config, name)}
    if getattr(llm_config, "structured_output", "none") != "none":  # (absent when off: older runs still resume)
        llm["structured_output"] = llm_config.structured_output
    return {"agent": args.agent, "model": llm.get("model"), "llm": llm}


def env_options(args: argparse.Namespace) -> dict[str, Any]:
    """The env's options from the command line: its defaults (:data:`default_env_options`) and what was given."""
    suite = suite_of(args.env)
    options: dict[str, Any] = suite.options()
    if args.max_steps is not None:
        options["max_steps"] = args.max_steps
    given = {"obs_format": args.obs_format,
             "maps_data": None if getattr(args, "maps_data", None) is None else str(Path(args.maps_data).resolve())}
    for option, value in given.items():
        if value is None:
            continue
        if option not in suite.own_options:
            owners = [s.env_id for s in SUITES.values() if option in s.own_options]
            raise ConfigError(f"--{option.replace('_', '-')} is an option of {', '.join(owners)}; "
                              f"{args.env} does not take it")
        options[option] = value
    return options


def _cmd_run(args: argparse.Namespace) -> int:
    from mobility_env.datasource import data_label

    from .runner import RunConfig, default_out_dir, run_local

    for option in ("samples_per_episode", "repeats", "workers", "concurrency", "max_steps", "limit"):
        value = getattr(args, option)
        if value is not None and value < 1:
            raise ConfigError(f"--{option.replace('_', '-')} must be at least 1, got {value}")
    if args.repeats is not None:
        if args.samples_per_episode not in (1, args.repeats):
            raise ConfigError("--repeats K plays every episode K times as samples 0..K-1; it cannot be combined "
                              f"with --samples-per-episode {args.samples_per_episode}")
        args.samples_per_episode = args.repeats
    if args.resume and args.out is None:
        raise ConfigError("--resume needs the --out directory of the run to continue")
    if (args.retry_failed or args.force_resume) and not args.resume:
        raise ConfigError("--retry-failed and --force-resume only make sense with --resume")
    if args.address and args.backend != "ray":
        raise ConfigError("--address joins a Ray cluster: use it with --backend ray")
    env_kwargs = env_options(args)
    llm_config = None if args.agent in ("rule", "oracle") else _llm_config(args)
    if llm_config is not None:
        _heed_models_check(llm_config, args.ignore_check)
    factory = agent_factory(args, llm_config)
    out = args.out or default_out_dir(args.agent, data_label(args.data))  # s3://b/p?endpoint_override=...: "p"
    config = RunConfig(out_dir=Path(out), data=args.data, env_id=args.env, episode_ids=args.episode,
                       scenarios=args.scenario,
                       limit=args.limit, samples_per_episode=args.samples_per_episode, seed=args.seed,
                       resume=args.resume, retry_failed=args.retry_failed, force_resume=args.force_resume,
                       workers=args.workers, progress=not args.no_progress, env_kwargs=env_kwargs,
                       meta={"env_id": args.env, "agent": args.agent, "model": args.model, "backend": args.backend},
                       identity=run_identity_of(args, llm_config), log=lambda line: print(line, flush=True))
    if args.backend == "ray":
        from .ray_runner import run_ray

        records = run_ray(factory, config, address=args.address, concurrency=args.concurrency)
    else:
        records = run_local(factory, config)
    scoring = suite_of(args.env).part("scoring")
    print(scoring.scorecard(records))
    if records:
        from mobility_rewards.commands import write_run_scorecard

        write_run_scorecard(Path(out), args.env, records)
    if args.repeats is not None and args.repeats > 1:
        from mobility_env.runfiles import json_text, write_text_atomic
        from mobility_rewards.repeats import format_repeat_spread, repeat_spread

        spread = repeat_spread(records, scoring.repeat_rows)
        print()
        print(format_repeat_spread(spread, scoring.repeat_columns))
        write_text_atomic(Path(out) / "repeats.json", json_text(spread, indent=2) + "\n")
        print(f"mean and standard deviation of every score over the repeats in {out}/repeats.json")
    failures = sum(1 for r in records if r.get("failure"))
    print(f"\n{len(records)} episode result(s) in {out}/results.jsonl"
          + (f"; {failures} recorded failure(s)" if failures else "")
          + (f"; the scorecard in {out}/scorecard.json" if records else ""))
    return 0


def _heed_models_check(config: Any, ignore: bool) -> None:
    """A run in a tool mode that ``models check`` found failing on this server is refused (``--ignore-check`` runs it,
    with a warning); one never checked gets a note saying how."""
    from .llm.check import remembered

    verdict = remembered(config)
    if verdict is None:
        print(f"note: {config.base_url or 'this server'} was not checked in --tool-mode {config.tool_mode}: "
              "`mobility-env models check` (same options) tells whether the model calls the right tool and reads "
              "its result", file=sys.stderr)
        return
    if verdict.get("works"):
        return
    message = (f"`mobility-env models check` found --tool-mode {config.tool_mode} failing on "
               f"{config.base_url or 'this server'} ({verdict.get('checked')}): {verdict.get('advice')}")
    if not ignore:
        raise ConfigError(message + "; check again after a change, use the mode it recommends, or pass "
                                    "--ignore-check to run anyway")
    print(f"WARNING: {message}; running anyway (--ignore-check)", file=sys.stderr)


def add_llm_options(llm: Any) -> None:
    """The model/server options of `run` and `models check` (an argparse parser or group)."""
    llm.add_argument("--model", help="model name (or OPENAI_MODEL; default: the server's only model)")
    llm.add_argument("--base-url", help="OpenAI-compatible endpoint (or OPENAI_BASE_URL)")
    llm.add_argument("--api-key",
                     help="API key; visible in `ps`: prefer OPENAI_API_KEY, --api-key-env or --api-key-file")
    llm.add_argument("--api-key-env", metavar="VAR", help="read the API key from this environment variable")
    llm.add_argument("--api-key-file", type=Path, metavar="PATH", help="read the API key from this file")
    llm.add_argument("--models-file", type=Path, help="TOML file of named model presets")
    llm.add_argument("--preset", help="preset name in --models-file")
    llm.add_argument("--temperature", type=float, help="sampling temperature (default 0.1)")
    llm.add_argument("--max-tokens", type=int, help="max output tokens per call (default 8192)")
    llm.add_argument("--language", choices=("zh", "en"), help="prompt language (default zh)")
    llm.add_argument("--tool-mode", choices=("native", "json"),
                     help="native function calling (default) or JSON-in-text for servers without tool support")
    llm.add_argument("--timeout", type=float,
                     help="wall-clock deadline per model request: connect, headers and body (default 300)")
    llm.add_argument("--episode-timeout", type=float,
                     help="wall-clock deadline per episode; past it the episode fails as `deadline` (default 1800)")
    llm.add_argument("--busy-wait", type=float, metavar="S",
                     help="after a timed-out request, how long to wait for the server to answer GET /models before "
                          "counting it down (a server serving one request at a time is busy until the abandoned "
                          "generation ends; default 300)")
    llm.add_argument("--tool-choice", choices=("auto", "required", "none"),
                     help="tool_choice sent in native mode (default auto; some servers drop tools without it)")
    llm.add_argument("--structured-output", choices=("none", "json_schema", "json_object_schema"),
                     help="how the server takes a JSON schema (response_format): after two cut-off replies the "
                          "Plan-and-Execute reporter asks once more for its answer as schema-bounded JSON "
                          "(json_schema: OpenAI, vLLM, SGLang, llama-server, Ollama; json_object_schema: "
                          "llama-cpp-python; default none: no such try)")
    llm.add_argument("--max-retries", type=int,
                     help="retries on 429/5xx/timeouts, with exponential backoff (default 4)")
    for role in ("planner", "worker", "reporter"):
        llm.add_argument(f"--{role}-model", help=f"model of the Plan-and-Execute {role} (default: --model)")


def register(subparsers: argparse._SubParsersAction) -> None:
    run = subparsers.add_parser(
        "run", help="run an agent over episodes and print the scorecard (default: rule agent, bundled data)",
        description="Run an agent over episodes. Prints what was loaded (counts of loaded, repaired and rejected "
                    "rows, the first rejections), writes OUT/results.jsonl (one line per finished episode, flushed), "
                    "OUT/trajectories.jsonl (messages, tool calls, observations, rewards) and OUT/run.json (agent, "
                    "model, data and its fingerprint, load report, settings, sessions), then prints the paper's "
                    "scorecard and writes it to OUT/scorecard.json (eval replaces it with the rescored one). OUT is "
                    "locked while the run writes (a second run on it stops at once). With no "
                    "arguments: the rule agent on the bundled synthetic set, offline.",
        epilog="Exit status: 0 done; 2 bad input (paths, options, a --resume that would mix runs); 3 the run "
               "stopped because the model endpoint is down or refuses the run (results so far are kept: fix it "
               "and --resume); "
               "130/143 interrupted by Ctrl-C/SIGTERM (results so far are kept).")
    run.add_argument("--env", choices=ENV_IDS, default=MOBILITYBENCH,
                     help=f"the registered suite to play (default {MOBILITYBENCH}); every suite runs with the same "
                          "runner, agents, Ray backend, report and export")
    run.add_argument("--agent", choices=AGENTS, default="rule",
                     help="agent to run (default: rule; rule and oracle are per env, the LLM agents serve both)")
    run.add_argument("--data", help="built directory or official CSV/XLSX/JSONL; for MobilePA-v0 a task directory or "
                                    "tasks.jsonl (default: the env's bundled set); a path or a URI: file:///abs/path, "
                                    "or s3://bucket/prefix (endpoint and credentials from AWS_ENDPOINT_URL, "
                                    "AWS_ACCESS_KEY_ID, ... or ?endpoint_override=URL), copied once per node into "
                                    "$MOBILITY_ENV_CACHE_DIR/data")
    run.add_argument("--out", type=Path, help="run directory (default: runs/AGENT-DATA-TIMESTAMP)")
    run.add_argument("--resume", action="store_true",
                     help="continue the run in --out, skipping finished episodes (lines cut by a crash are repaired); "
                          "refused when the agent, model, data, seed or settings differ from the run's")
    run.add_argument("--force-resume", action="store_true",
                     help="with --resume: continue even though the agent, model, data, seed, settings or the code's "
                          "format versions differ from "
                          "the run's (refused otherwise, so two runs never mix silently); the session is recorded "
                          "in run.json")
    run.add_argument("--retry-failed", action="store_true",
                     help="with --resume: also re-run episodes whose result is a recorded failure (e.g. the model "
                          "server was down); the new line is appended and readers keep the last one")
    run.add_argument("--limit", type=int, help="run at most this many episodes")
    run.add_argument("--scenario", action="append",
                     help="only this task scenario (repeatable), e.g. 'Weather Query' (MobilePA-v0: a behaviour "
                          "category, e.g. error_recovery); an unknown name lists the valid ones")
    run.add_argument("--episode", action="append", help="only this episode (MobilePA-v0: task) id (repeatable)")
    run.add_argument("--samples-per-episode", type=int, default=1, help="samples per episode, for pass^k and RL groups")
    run.add_argument("--repeats", type=int,
                     help="evaluate K times (repeat k = sample k) and report every score's mean and standard "
                          "deviation over the repeats (written to OUT/repeats.json)")
    run.add_argument("--seed", type=int, default=0, help="run seed (per-episode seeds derive from it)")
    run.add_argument("--max-steps", type=int,
                     help="actions per episode (default: MobilityBench-v0 10, the paper's; MobilePA-v0 12)")
    run.add_argument("--obs-format", choices=("compact", "raw"),
                     help="observation format of MobilityBench-v0 (default compact)")
    run.add_argument("--maps-data", type=Path,
                     help="MobilePA-v0: the recorded MobilityBench set its maps & travel tools replay (a built "
                          "directory; default the bundled set, which the bundled tasks were made from)")
    run.add_argument("--backend", choices=("local", "ray"), default="local", help="where episodes run")
    run.add_argument("--workers", type=int, default=1, help="parallel workers (threads locally, actors on Ray)")
    run.add_argument("--address", help="Ray cluster address to join (default: start a local cluster for this run, "
                                       "bound to 127.0.0.1 and stopped when the run ends)")
    run.add_argument("--concurrency", type=int, default=1,
                     help="episodes in flight per Ray worker (threads; raise it for LLM-bound agents)")
    run.add_argument("--no-progress", action="store_true", help="no progress bar")
    run.add_argument("--ignore-check", action="store_true",
                     help="LLM agents: run even though `mobility-env models check` found this server failing in "
                          "this tool mode (refused otherwise)")
    add_llm_options(run.add_argument_group("LLM agents (react, plan-execute)"))
    run.set_defaults(func=_cmd_run)

    models = subparsers.add_parser("models", help="check a model server before a run",
                                   description="`mobility-env models check`: one tools request to the server; reports "
                                               "whether it answers with well-formed tool calls.")
    models_sub = models.add_subparsers(dest="models_command", metavar="ACTION", required=True)
    check = models_sub.add_parser(
        "check", help="check the round trip a run makes: the right tool called, its result read back",
        description="Preflight (reachable, key, model), then per tool mode (--tool-mode, or both native and "
                    "json) the round trip a run makes: the env's tools offered for a weather question, the reply "
                    "must call the weather tool with schema-valid arguments; the call is answered with a result "
                    "holding a reference code, and the next reply must repeat it (a server that never shows the "
                    "model tool results fails here). Each reply's latency is shown, with a warning past half "
                    "--timeout. Exit 0 when the mode a run would use (--tool-mode, default native) works, 1 when "
                    "it does not (the advice says why and `recommended` which mode to use), 3 when the server is "
                    "down or refuses.")
    add_llm_options(check)
    check.set_defaults(func=_cmd_models_check)

    export = subparsers.add_parser(
        "export", help="export a run's trajectories to Parquet for RL and SFT trainers",
        description="One row per (episode, sample): the episode as OpenAI chat messages (assistant tool_calls "
                    "with their ids, tool messages with tool_call_id and name), the reward each assistant "
                    "message earned, the prompt, the tool list when known, GRPO group-normalized advantages, and the "
                    "metrics, verdict and failure as native Arrow structs; loads with "
                    "datasets.load_dataset('parquet', ...) (schema in the README and in "
                    "mobility_agents.export). A corrupt or inconsistent record is an error naming its file "
                    "and row or episode; nothing is written then.")
    export.add_argument("run_dir", type=Path, help="a run directory with results.jsonl and trajectories.jsonl")
    export.add_argument("--out", type=Path, help="output .parquet (default RUN_DIR/trajectories.parquet)")
    export.set_defaults(func=_cmd_export)


def _cmd_export(args: argparse.Namespace) -> int:
    from mobility_env.runfiles import existing_run_dir

    from .export import export_run

    run_dir = existing_run_dir(args.run_dir)
    out = export_run(run_dir, args.out or run_dir / "trajectories.parquet")
    print(f"wrote {out}")
    return 0


def _cmd_models_check(args: argparse.Namespace) -> int:
    from .llm.client import EndpointError
    from .llm.check import MODES, check_endpoint, format_check, remember

    try:
        # --tool-mode given: that mode; else both, so the report says which one to use
        config = _llm_config(args)
        result = check_endpoint(config, modes=(args.tool_mode,) if args.tool_mode else MODES)
    except EndpointError as exc:
        print(f"mobility-env: {exc}", file=sys.stderr)
        return 3
    print(format_check(result))
    remember(result, config)
    return 0 if result["works"] and result.get("structured_output_works", True) else 1
