"""A synthetic mobility world and MobilityBench-format episodes generated from it.

Public API:

* :func:`synthesize` ``(n, seed, out_dir, *, mix=None, progress=True)`` — generate and build a
  directory usable as ``data=`` (CLI: ``mobility-env synth --n N --seed S --out DIR``);
* :func:`generate_rows` ``(n, seed, mix=None)`` — the official rows (parsed values, official
  columns plus ``sandbox_extra``), for :func:`mobility_env.mobilitybench.official.episode_from_row`;
* :func:`resolve_mix` — scenario probabilities from a scenario/family weight dict;
  the default is the paper's intent-family mix 36.6 / 9.6 / 42.5 / 11.3 %.

Same seed, same bytes; episode ``i`` depends only on ``(seed, i)``.
"""

from .generate import PAPER_FAMILY_MIX, generate_rows, resolve_mix, synthesize
from .world import World

__all__ = ["PAPER_FAMILY_MIX", "World", "generate_rows", "resolve_mix", "synthesize"]
