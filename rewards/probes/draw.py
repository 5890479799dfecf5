"""Random choices: one interface, two engines (hypothesis for properties, :mod:`random` for seeded sweeps).

Every generator draws through a :class:`Draw`, so the same code runs as a hypothesis strategy and in the sweep.
hypothesis is a dev dependency: :class:`HypothesisDraw` imports it when built, not when this module is imported.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any, Callable, Sequence, TypeVar

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

T = TypeVar("T")


class Draw:
    """The random choices a generator may make."""

    def choice(self, options: Sequence[T]) -> T:
        raise NotImplementedError

    def integer(self, low: int, high: int) -> int:
        raise NotImplementedError

    def uniform(self, low: float, high: float) -> float:
        raise NotImplementedError

    def shuffled(self, items: Sequence[T]) -> list[T]:
        raise NotImplementedError

    def coin(self) -> bool:
        return self.choice((False, True))

    def subset(self, items: Sequence[T], low: int, high: int) -> list[T]:
        """Between ``low`` and ``high`` distinct items, in random order."""
        size = self.integer(min(low, len(items)), min(high, len(items)))
        return self.shuffled(items)[:size]


class HypothesisDraw(Draw):
    """Choices drawn by hypothesis (``data.draw``, or a composite strategy's ``draw``): shrunk and replayed by it."""

    def __init__(self, draw: Callable[[SearchStrategy[Any]], Any]):
        from hypothesis import strategies  # a dev dependency: imported only where a property test draws

        self._draw, self._st = draw, strategies

    def choice(self, options):
        return self._draw(self._st.sampled_from(list(options)))

    def integer(self, low, high):
        return self._draw(self._st.integers(low, high))

    def uniform(self, low, high):
        return self._draw(self._st.floats(low, high, allow_nan=False, allow_infinity=False))

    def shuffled(self, items):
        return list(self._draw(self._st.permutations(list(items)))) if items else []


class RandomDraw(Draw):
    """Choices from a seeded :class:`random.Random` (the sweeps: the same seed writes the same answers)."""

    def __init__(self, rng: random.Random):
        self._rng = rng

    def choice(self, options):
        options = list(options)
        return options[self._rng.randrange(len(options))]

    def integer(self, low, high):
        return self._rng.randint(low, high)

    def uniform(self, low, high):
        return self._rng.uniform(low, high)

    def shuffled(self, items):
        items = list(items)
        self._rng.shuffle(items)
        return items
