"""``mobility-env synth``: generate a synthetic set and build it into a directory.

``--suite mobility`` (the default) writes MobilityBench episodes (``episodes.parquet``,
``sandbox.parquet``); ``--suite mobilepa`` writes a MobilePA task directory (``tasks.jsonl``,
``manifest.json``) from :mod:`mobility_env.mobilepa.generate`, each task checked with the MobilePA
verifier before it is written.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from ..errors import ConfigError


def _parse_mix(text: str | None):
    if text is None or text in ("paper", "uniform"):
        return text
    try:
        mix = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"--mix must be 'paper', 'uniform' or a JSON object of scenario/family -> weight: "
                          f"{exc}") from exc
    return mix


def _parse_languages(text: str) -> tuple[str, ...]:
    languages = tuple(part.strip() for part in text.split(",") if part.strip())
    if not languages or any(lang not in ("zh", "en") for lang in languages):
        raise ConfigError(f"--languages must be a comma-separated choice of zh and en, got {text!r}")
    return languages


def _parse_dimensions(text: str) -> tuple[str, ...]:
    from ..mobilepa.tasks import DIMENSIONS

    dimensions = tuple(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))
    if not dimensions or any(d not in DIMENSIONS for d in dimensions):
        raise ConfigError(f"--dimensions must be a comma-separated choice of {', '.join(DIMENSIONS)}, got {text!r}")
    return dimensions


def _cmd_synth(args: argparse.Namespace) -> int:
    return SYNTHESIZERS[args.suite](args)


def _synth_mobility(args: argparse.Namespace) -> int:
    if args.languages is not None:
        raise ConfigError("--languages applies to --suite mobilepa only")
    if args.dimensions is not None:
        raise ConfigError("--dimensions applies to --suite mobilepa only")
    if args.phrasing != "standard":
        raise ConfigError("--phrasing applies to --suite mobilepa only")
    from .generate import synthesize

    out = synthesize(args.n, args.seed, args.out, mix=_parse_mix(args.mix), progress=not args.quiet,
                     workers=args.workers)
    print(f"wrote {out / 'episodes.parquet'} and {out / 'sandbox.parquet'}")
    return 0


def _synth_mobilepa(args: argparse.Namespace) -> int:
    if args.mix is not None:
        raise ConfigError("--mix applies to --suite mobility only (MobilePA tasks cycle through the five categories)")
    if args.n < 1:
        raise ConfigError(f"--n must be >= 1 (a task directory holds at least one task), got {args.n}")
    from mobility_rewards.mobilepa.verify import verify_phone_task

    from ..mobilepa.generate import write_task_set
    from ..mobilepa.tasks import TASKS_FILE

    languages = _parse_languages(args.languages or "zh,en")
    dimensions = _parse_dimensions(args.dimensions or "basic,subagent,memory,skill")
    workers = args.workers if args.workers is not None else ((os.cpu_count() or 1) if args.n >= 5000 else 1)
    started = time.monotonic()
    out = write_task_set(args.out, args.n, args.seed, languages=languages, dimensions=dimensions,
                         verify=verify_phone_task, workers=workers, phrasing=args.phrasing)
    if not args.quiet:
        kept = json.loads((out / "manifest.json").read_text(encoding="utf-8"))["tasks"]
        print(f"synth: generated and checked {kept} MobilePA tasks (of {args.n} planned, {args.phrasing} phrasing) "
              f"in {time.monotonic() - started:.1f}s", file=sys.stderr)
    print(f"wrote {out / TASKS_FILE} and {out / 'manifest.json'}")
    return 0


#: The synthesis part of each suite (composition layer), keyed by the suite's name (``synth --suite``).
SYNTHESIZERS = {"mobility": _synth_mobility, "mobilepa": _synth_mobilepa}
SUITES = tuple(SYNTHESIZERS)


def register(subparsers: argparse._SubParsersAction) -> None:
    synth = subparsers.add_parser("synth", help="generate N synthetic episodes (all 11 scenarios) or MobilePA tasks",
                                  description="Generate a deterministic synthetic set. --suite mobility (default): "
                                              "episodes over a seeded mobility world, written as DIR/episodes.parquet, "
                                              "DIR/sandbox.parquet and DIR/manifest.json. --suite mobilepa: MobilePA "
                                              "phone tasks, each checked by its verifier, written as DIR/tasks.jsonl "
                                              "and DIR/manifest.json.")
    synth.add_argument("--suite", choices=SUITES, default="mobility",
                       help="what to generate: MobilityBench episodes (default) or MobilePA tasks")
    synth.add_argument("--n", type=int, required=True, help="number of episodes (or tasks)")
    synth.add_argument("--seed", type=int, default=0, help="world and episode seed (same seed = same bytes)")
    synth.add_argument("--out", type=Path, required=True, help="output directory")
    synth.add_argument("--mix", default=None,
                       help="mobility only: 'paper' (default: intent families 36.6/9.6/42.5/11.3%%), 'uniform', or "
                            "JSON like '{\"Weather Query\": 2, \"Basic Route Planning\": 1}'")
    synth.add_argument("--languages", default=None,
                       help="mobilepa only: request languages, comma-separated (default: zh,en)")
    synth.add_argument("--dimensions", default=None,
                       help="mobilepa only: capability dimensions to mix, comma-separated (default: "
                            "basic,subagent,memory,skill in the generator's fixed shares; 'basic' for basic tool use "
                            "only)")
    synth.add_argument("--phrasing", choices=("standard", "heldout"), default="standard",
                       help="mobilepa only: the user's words: the families' own (default) or the held-out phrasing "
                            "split (the same tasks re-said by another grammar; tasks it cannot say are left out)")
    synth.add_argument("--workers", type=int, default=None,
                       help="generator processes (default: CPU count for n >= 5000)")
    synth.add_argument("--quiet", action="store_true", help="no progress on stderr")
    synth.set_defaults(func=_cmd_synth)
