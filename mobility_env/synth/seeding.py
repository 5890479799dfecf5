"""Stable, order-independent randomness for the synthetic world.

Every random draw in :mod:`mobility_env.synth` comes from a :class:`random.Random` instance
seeded by :func:`stable_seed` over a tuple of *meaningful* parts (the world seed, a purpose
label, a city, a coordinate...). Consequences, all intended:

* the same seed gives byte-identical output on every run and platform (BLAKE2b, not
  Python's salted ``hash``);
* episode ``i`` depends only on ``(seed, i)``, not on how many episodes came before;
* a fact of the world (the traffic on a road, the shops around a corner, the route between
  two points under a strategy) is a function of *what* is asked, so two episodes that ask the
  same thing get the same answer.

No global random state is ever touched.
"""

from __future__ import annotations

import hashlib
import random


def stable_seed(*parts: object) -> int:
    """A 64-bit integer determined only by ``parts`` (their ``str`` forms, in order)."""
    text = "\x1f".join(str(part) for part in parts)
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "little")


def rng_for(*parts: object) -> random.Random:
    """A fresh generator seeded by :func:`stable_seed` over ``parts``."""
    return random.Random(stable_seed(*parts))


def unit_interval(*parts: object) -> float:
    """A deterministic float in [0, 1) from ``parts``, cheaper than building a generator."""
    return stable_seed(*parts) / 2**64
