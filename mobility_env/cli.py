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
import re
import sys
from pathlib import Path
from typing import NoReturn, Sequence

from .errors import MobilityEnvError
from .literal import MAX_CELL_BYTES, MAX_DEPTH

# Modules that contribute subcommands; each exposes register(subparsers).
COMMAND_MODULES = ("mobility_env.cli", "mobility_env.synth.commands", "mobility_agents.commands",
                   "mobility_agents.adapters.openenv.serve", "mobility_rewards.commands", "mobility_rewards.compare")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive: {value}")
    return value


def _cmd_build(args: argparse.Namespace) -> int:
    from .mobilitybench.build import build_directory
    from .mobilitybench.loaders import load_episodes

    episodes = load_episodes(args.src, strict=args.strict, max_cell_bytes=args.max_cell_bytes, max_depth=args.max_depth,
                             max_row_bytes=args.max_row_bytes)
    report = episodes.report
    print(report.summary())
    for rejection in report.rejected[:50]:
        print(f"  rejected: {rejection}", file=sys.stderr)
    if len(report.rejected) > 50:
        print(f"  ... and {len(report.rejected) - 50} more (see manifest.json)", file=sys.stderr)
    imported = None
    if args.sandbox_dir is not None:
        from .mobilitybench.official_sandbox import OfficialSandboxImport

        imported = OfficialSandboxImport(args.sandbox_dir)
        imported.plan()  # a folder without official files fails now, before anything is written
    elif args.src.is_dir():
        from .layout import read_manifest

        if (read_manifest(args.src) or {}).get("sandbox_import"):
            print(f"note: {args.src} holds entries imported from an official sandbox folder; they belong to no "
                  f"episode and are not carried over: pass --sandbox-dir again to import them", file=sys.stderr)
    out = build_directory(episodes, args.out, source=str(args.src), report=report.to_dict(), global_rows=imported)
    if imported is not None:
        print(imported.report.summary())
        for problem in imported.report.problems[:20]:
            print(f"  skipped: {problem}", file=sys.stderr)
        if imported.report.problem_count > 20:
            print(f"  ... and {imported.report.problem_count - 20} more (see sandbox_import in manifest.json)",
                  file=sys.stderr)
    print(f"wrote {out / 'episodes.parquet'} and {out / 'sandbox.parquet'}")
    return 0


def _cmd_index(args: argparse.Namespace) -> int:
    from .mobilitybench.index_build import write_replay_index

    write_replay_index(args.dir, accept_changed_parquet=args.accept_changed_parquet)
    print(f"wrote the replay index of {args.dir} (sandbox.arrow, episodes.arrow, sandbox_index/)")
    return 0


def _cmd_tools(args: argparse.Namespace) -> int:
    import json

    from .tools import openai_tools, tools_markdown

    print(json.dumps(openai_tools(), ensure_ascii=False, indent=2) if args.json else tools_markdown())
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    build = subparsers.add_parser(
        "build", help="compile an official CSV/XLSX/JSONL (or Parquet) into a built directory",
        description="Load episodes (reporting repaired and rejected rows) and write "
                    "DIR/episodes.parquet, DIR/sandbox.parquet and DIR/manifest.json. With --sandbox-dir, "
                    "also import the official per-tool replay cache (driving_route_handle.json, ...) into "
                    "the global replay scope, streamed; entries that cannot be read are skipped and listed "
                    "in manifest.json (sandbox_import).")
    build.add_argument("src", type=Path, help="official .csv/.xlsx/.jsonl file, episodes .parquet, or built directory")
    build.add_argument("--out", type=Path, required=True, help="output directory")
    build.add_argument("--strict", action="store_true", help="fail on the first unusable row instead of reporting it")
    build.add_argument("--max-cell-bytes", type=_positive_int, default=MAX_CELL_BYTES,
                       help=f"reject a row with a cell over this many bytes (default {MAX_CELL_BYTES:,})")
    build.add_argument("--max-depth", type=_positive_int, default=MAX_DEPTH,
                       help=f"reject a row with a cell nested deeper than this (default {MAX_DEPTH})")
    build.add_argument("--max-row-bytes", type=_positive_int,
                       help="reject a row over this many bytes (default twice --max-cell-bytes)")
    build.add_argument("--sandbox-dir", type=Path, metavar="DIR2",
                       help="folder of the official per-tool sandbox JSON files (driving_route_handle.json, "
                            "walking_route_handle.json, reverse_geocoding_sandbox.json, ...): their entries are "
                            "added to the global replay scope (served to any episode after its own calls; never "
                            "in place of them); a file that is cut short or not a JSON object stops the build")
    build.set_defaults(func=_cmd_build)

    index = subparsers.add_parser(
        "index", help="write the replay index and record every file's size and checksum in "
                      "manifest.json",
        description="`build` and `synth` write it already; use this on a directory built by an "
                    "older version, after a DerivedFileWarning, or after a FormatVersionWarning.")
    index.add_argument("dir", type=Path, help="a built directory")
    index.add_argument("--accept-changed-parquet", action="store_true",
                       help="index Parquet files that no longer match manifest.json (you changed them on purpose)")
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


_INVALID_CHOICE = re.compile(r"argument (?P<what>[^:]+): invalid choice: '(?P<given>[^']*)' "
                             r"\(choose from (?P<choices>.*)\)$")


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors: a mistyped choice (a command, ``--env``, ``--agent`` ...) names the closest
    choice ("did you mean 'react'?") instead of printing the whole usage."""

    def error(self, message: str) -> NoReturn:
        import difflib

        found = _INVALID_CHOICE.match(message)
        if found is not None:
            choices = re.findall(r"'([^']*)'", found["choices"])
            close = difflib.get_close_matches(found["given"], choices, n=1, cutoff=0.5)
            message = (f"argument {found['what']}: invalid choice {found['given']!r}"
                       + (f"; did you mean {close[0]!r}?" if close else "") + f" (one of {', '.join(choices)})")
        self.exit(2, f"{self.prog}: error: {message}; see `{self.prog} --help`\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
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


def _error(message: str) -> None:
    from .runfiles import clean_text

    print(f"mobility-env: error: {clean_text(message)}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one subcommand; user mistakes print one line (no traceback) and return non-zero.

    Exit status: 0 done; 2 bad input (:class:`MobilityEnvError`, or a path the OS refused);
    an error's own ``exit_code`` when it has one (3: a run stopped because its model endpoint
    is down); 130 on Ctrl-C, 128 + N on a terminating signal N (SIGTERM: 143).
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except MobilityEnvError as exc:
        _error(str(exc))
        return int(getattr(exc, "exit_code", 2))
    except OSError as exc:  # a path the user gave: missing, a directory, no permission, disk full
        where = f"{exc.filename}: " if exc.filename else ""
        _error(f"{where}{exc.strerror or exc}")
        return 2
    except KeyboardInterrupt as exc:
        signum = getattr(exc, "signum", None)
        name = "interrupted" if signum is None else str(exc)
        print(f"mobility-env: {name}; everything written so far is kept (a run continues with --resume)",
              file=sys.stderr)
        return 130 if signum is None else 128 + int(signum)


if __name__ == "__main__":
    sys.exit(main())
