"""The ``Scorer`` protocol: what :class:`mobility_env.env.MobilityEnv` asks of a scorer.

The env does not compute rewards or metrics itself; it takes a scorer (``MobilityEnv(scorer=...)``)
and calls it at three points of an episode:

1. ``reset`` → ``scorer.start(episode)``: the scorer's per-episode state, opaque to the env;
2. every tool call (including a refused one) → ``scorer.step(state, call, arguments_valid=...)``:
   named reward terms for that call; the step reward is their sum;
3. ``finish``, truncation or ``abandon`` → ``scorer.finish(state, trajectory)``: an
   :class:`EpisodeScore` with the terminal reward terms, the metrics (``info["metrics"]``) and
   the verdict behind them (``info["verdict"]`` is ``verdict.to_dict()``).

The protocol lives in the core so that scoring code implements it without importing the env
(layers: data/sandbox kernel ← scoring ← env ← agents and CLI; ``tests/test_layering.py``
enforces the direction). The default implementation is
:class:`mobility_rewards.scorer.DefaultScorer` (shaped progress rewards, the paper's metrics and
the claim-by-claim verdict); ``MobilityEnv`` builds it when ``scorer`` is None.

A scorer that pays only for finishing with a delivered answer::

    from mobility_rewards import score_episode

    class DeliveredOnly:
        def start(self, episode):
            return episode
        def step(self, state, call, *, arguments_valid=None):
            return {}
        def finish(self, state, trajectory):
            metrics, verdict = score_episode(state, trajectory)
            return EpisodeScore({"DR": metrics["DR"]}, metrics, verdict)

    env = MobilityEnv(scorer=DeliveredOnly())
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Protocol, runtime_checkable

from .episode import Episode
from .trajectory import CallRecord, Trajectory


@runtime_checkable
class EpisodeVerdict(Protocol):
    """What the env reads of a verdict: ``to_dict()`` for ``info["verdict"]`` (JSON-safe), and
    ``passed`` and ``summary()`` for ``render``."""

    @property
    def passed(self) -> bool: ...

    def summary(self) -> str: ...

    def to_dict(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class EpisodeScore:
    """The end of an episode as a scorer judged it.

    ``reward_components``: named terminal reward terms (the env adds their sum to the last
    step's reward and merges them into that step's ``info["reward_components"]``);
    ``metrics``: ``info["metrics"]``; ``verdict``: the checks behind the metrics.
    """

    reward_components: Mapping[str, float]
    metrics: Mapping[str, float]
    verdict: EpisodeVerdict


@runtime_checkable
class Scorer(Protocol):
    """Scores one episode at a time for :class:`mobility_env.env.MobilityEnv` (see the module docstring).

    One scorer serves every episode of an env; per-episode data belongs in the state that
    ``start`` returns, which the env passes back to ``step`` and ``finish`` and drops at the
    next ``reset``.
    """

    def start(self, episode: Episode) -> Any:
        """A new episode begins: return its scoring state."""
        ...

    def step(self, state: Any, call: CallRecord, *, arguments_valid: bool | None = None) -> dict[str, float]:
        """Named reward terms for ``call``, the episode's next tool call (bad actions included:
        ``call.error`` says what went wrong). ``arguments_valid`` is True when the env already
        checked the arguments against the tool schema (the call reached the sandbox), None when
        it did not."""
        ...

    def finish(self, state: Any, trajectory: Trajectory) -> EpisodeScore:
        """The episode ended (``trajectory.finish`` is the answer, or None with
        ``trajectory.truncated`` set): the terminal terms, metrics and verdict."""
        ...
