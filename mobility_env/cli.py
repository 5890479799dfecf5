"""The ``mobility-env`` command line.

Subcommands: ``build`` (compile a dataset), ``index`` (write the replay index of an older
built directory), ``synth`` (generate a synthetic set), ``run``
(run an agent over episodes), ``eval`` / ``report`` (score a run), ``audit`` (flag bad gold),
``tools`` (print the tool reference). Each subcommand lives with the code it drives and adds
itself here through a ``register(subparsers)`` function.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path
from typing import Sequence

from .errors import MobilityEnvError

# Modules that contribute subcommands; each exposes register(subparsers).
COMMAND_MODULES = ("mobility_env.cli", "mobility_env.synth.commands", "mobility_agents.commands", "mobility_rewards.commands")


def _cmd_build(args: argparse.Namespace) -> int:
    from .build import build_directory
    from .loaders import load_episodes

    episodes = load_episodes(args.src, strict=args.strict)
    report = episodes.report
    print(report.summary())
    for rejection in report.rejected[:50]:
        print(f"  rejected: {rejection}", file=sys.stderr)
    if len(report.rejected) > 50:
        print(f"  ... and {len(report.rejected) - 50} more (see manifest.json)", file=sys.stderr)
    out = build_directory(episodes, args.out, source=str(args.src), report=report.to_dict())
    print(f"wrote {out / 'episodes.parquet'} and {out / 'sandbox.parquet'}")
    return 0


def _cmd_index(args: argparse.Namespace) -> int:
    from .replay_index import write_replay_index

    write_replay_index(args.dir)
    print(f"wrote the replay index of {args.dir} (sandbox.arrow, episodes.arrow, sandbox_index/)")
    return 0


def _cmd_tools(args: argparse.Namespace) -> int:
    import json

    from .tools import openai_tools, tools_markdown

    print(json.dumps(openai_tools(), ensure_ascii=False, indent=2) if args.json else tools_markdown())
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    build = subparsers.add_parser("build", help="compile an official CSV/XLSX/JSONL (or Parquet) into a built directory",
                                  description="Load episodes (reporting repaired and rejected rows) and write "
                                              "DIR/episodes.parquet, DIR/sandbox.parquet and DIR/manifest.json.")
    build.add_argument("src", type=Path, help="official .csv/.xlsx/.jsonl file, episodes .parquet, or built directory")
    build.add_argument("--out", type=Path, required=True, help="output directory")
    build.add_argument("--strict", action="store_true", help="fail on the first unusable row instead of reporting it")
    build.set_defaults(func=_cmd_build)

    index = subparsers.add_parser("index", help="write the memory-mapped replay index of a built directory",
                                  description="`build` and `synth` write it already; use this on a directory built by an "
                                              "older version (it still opens without, building the index in memory).")
    index.add_argument("dir", type=Path, help="a built directory")
    index.set_defaults(func=_cmd_index)

    tools = subparsers.add_parser("tools", help="print the tool reference (markdown, or OpenAI JSON with --json)")
    tools.add_argument("--json", action="store_true", help="print the OpenAI function-calling list")
    tools.set_defaults(func=_cmd_tools)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("mobility-env")
    except PackageNotFoundError:  # run from a checkout without installing
        return "unknown (not installed)"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mobility-env",
        description="Replay sandbox, Gymnasium env, scoring and baselines for route-planning LLM agents "
                    "(MobilityBench protocol).")
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module_name in COMMAND_MODULES:
        try:
            module = sys.modules[__name__] if module_name == __name__ else importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name and module_name.startswith(exc.name):
                continue  # that part of the project is not installed
            raise
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except MobilityEnvError as exc:
        print(f"mobility-env: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("mobility-env: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
