"""``mobility-env synth``: generate a synthetic set and build it into a directory."""

from __future__ import annotations

import argparse
import json
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


def _cmd_synth(args: argparse.Namespace) -> int:
    from .generate import synthesize

    out = synthesize(args.n, args.seed, args.out, mix=_parse_mix(args.mix), progress=not args.quiet,
                     workers=args.workers)
    print(f"wrote {out / 'episodes.parquet'} and {out / 'sandbox.parquet'}")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    synth = subparsers.add_parser("synth", help="generate N synthetic episodes (all 11 scenarios) and build them",
                                  description="Generate a deterministic synthetic set over a seeded mobility world and "
                                              "write DIR/episodes.parquet, DIR/sandbox.parquet and DIR/manifest.json.")
    synth.add_argument("--n", type=int, required=True, help="number of episodes")
    synth.add_argument("--seed", type=int, default=0, help="world and episode seed (same seed = same bytes)")
    synth.add_argument("--out", type=Path, required=True, help="output directory")
    synth.add_argument("--mix", default=None,
                       help="'paper' (default: intent families 36.6/9.6/42.5/11.3%%), 'uniform', or JSON like "
                            "'{\"Weather Query\": 2, \"Basic Route Planning\": 1}'")
    synth.add_argument("--workers", type=int, default=None,
                       help="generator processes (default: CPU count for n >= 5000)")
    synth.add_argument("--quiet", action="store_true", help="no progress on stderr")
    synth.set_defaults(func=_cmd_synth)
