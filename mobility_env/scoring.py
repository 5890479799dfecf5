"""The ``Scorer`` protocol: what each suite's env (:class:`mobility_env.mobilitybench.env.MobilityEnv`,
:class:`mobility_env.mobilepa.env.MobilePAEnv`) asks of a scorer.

The env does not compute rewards or metrics itself; it takes a scorer (``MobilityEnv(scorer=...)``)
and calls it at three points of an episode:

1. ``reset`` → ``scorer.start(item, sandbox)``: the scorer's per-episode state, opaque to the env
   (``sandbox``: what the calls act on, read-only; None for a replay);
2. every tool call (including a refused one) → ``scorer.step(state, call, arguments_valid=...)``,
   exactly once per call record: named reward terms for that call; the step reward is their sum;
3. ``finish``, truncation or ``abandon`` → ``scorer.finish(state, trajectory)``: an
   :class:`EpisodeScore` with the terminal reward terms, the metrics (``info["metrics"]``) and
   the verdict behind them (``info["verdict"]`` is ``verdict.to_dict()``).

The protocol lives in the core so that scoring code implements it without importing the env
(layers: data/sandbox kernel ← scoring ← env ← agents and CLI; ``tests/test_layering.py``
enforces the direction). The default implementation is
:class:`mobility_rewards.mobilitybench.scorer.DefaultScorer` (shaped progress rewards, the paper's metrics and
the claim-by-claim verdict); ``MobilityEnv`` builds it when ``scorer`` is None.

A scorer that pays only for finishing with a delivered answer::

    from mobility_rewards import score_episode

    class DeliveredOnly:
        def start(self, episode, sandbox=None):
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
from typing import Any, Callable, Mapping, Protocol, TypeVar, runtime_checkable

from .errors import ConfigError
from .trajectory import ToolCallRecord

ItemT = TypeVar("ItemT", contravariant=True)
CallT = TypeVar("CallT", bound=ToolCallRecord, contravariant=True)
TrajectoryT = TypeVar("TrajectoryT", contravariant=True)


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
class Scorer(Protocol[ItemT, CallT, TrajectoryT]):
    """Scores one episode at a time for either suite's env (see the module docstring); generic over the suite's item
    (MobilityBench's :class:`~mobility_env.mobilitybench.episode.Episode`, MobilePA's ``PhoneTask``), call record
    (a :class:`~mobility_env.trajectory.ToolCallRecord`: MobilityBench's
    :class:`~mobility_env.mobilitybench.trajectory.CallRecord`, MobilePA's ``PhoneCall``) and trajectory.

    One scorer serves every episode of an env; per-episode data belongs in the state that
    ``start`` returns, which the env passes back to ``step`` and ``finish`` and drops at the
    next ``reset``. ``step`` is a function of the state and the call record: what the call did
    (its result, its error, the tables it wrote) is on the record, so nothing is drained from
    the env and calling it again cannot skew the episode.
    """

    def start(self, item: ItemT, sandbox: Any = None) -> Any:
        """A new episode begins: return its scoring state. ``sandbox``: a read-only view of the world the calls
        act on, for scorers that measure it (MobilePA: the phone's state; MobilityBench's replay has none)."""
        ...

    def step(self, state: Any, call: CallT, *, arguments_valid: bool | None = None) -> dict[str, float]:
        """Named reward terms for ``call``, the episode's next tool call (bad actions included:
        the record says what went wrong). ``arguments_valid`` is True when the env already
        checked the arguments against the tool schema (the call reached the sandbox), None when
        it did not."""
        ...

    def finish(self, state: Any, trajectory: TrajectoryT) -> EpisodeScore:
        """The episode ended (the trajectory holds the answer, or none and its truncation): the terminal terms,
        metrics and verdict."""
        ...


def checked_scorer(scorer: Any, reward_weights: Any, default: Callable[[Any], Any]) -> Any:
    """The scorer an env uses: ``default(reward_weights)`` when ``scorer`` is None (the one place each env chooses
    its default), else ``scorer`` itself once it implements :class:`Scorer`; weights with a scorer, a scorer class
    or an object without the protocol's methods are ConfigErrors."""
    if scorer is None:
        return default(reward_weights)
    if reward_weights is not None:
        raise ConfigError(f"reward_weights configure the default scorer; with scorer={scorer!r} "
                          "pass the weights to that scorer instead")
    if isinstance(scorer, type):
        raise ConfigError(f"scorer must be an instance, got the class {scorer.__name__}; pass {scorer.__name__}()")
    if not isinstance(scorer, Scorer):
        missing = [name for name in ("start", "step", "finish") if not callable(getattr(scorer, name, None))]
        raise ConfigError(f"scorer must implement mobility_env.scoring.Scorer (start, step, finish); "
                          f"{scorer!r} lacks {', '.join(missing)}")
    return scorer
