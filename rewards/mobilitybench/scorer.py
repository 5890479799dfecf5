"""``DefaultScorer``: the scorer :class:`mobility_env.mobilitybench.env.MobilityEnv` uses unless given another.

It implements :class:`mobility_env.scoring.Scorer` with this package's definitions:

* ``start(episode)`` → a :class:`mobility_rewards.mobilitybench.shaping.ShapingState` (the gold targets reached
  so far, the call identities seen);
* ``step(state, call)`` → the shaped step terms of :class:`mobility_rewards.mobilitybench.shaping.RewardShaper`
  (``tool_coverage``, ``decomposition``, ``schema_violation``, ``redundant_call``, ``error``);
* ``finish(state, trajectory)`` → :func:`mobility_rewards.mobilitybench.metrics.score_episode` (the metrics and
  the :class:`mobility_rewards.verdict.Verdict` behind DR and FPR) and the terminal terms
  ``DR``, ``FPR``, ``ID``, ``IE``, ``PF`` (each ``weight × metric``).

Example::

    from mobility_env import MobilityEnv
    from mobility_rewards.mobilitybench.scorer import DefaultScorer

    env = MobilityEnv(scorer=DefaultScorer({"FPR": 2.0}))   # same as MobilityEnv(reward_weights={"FPR": 2.0})
"""

from __future__ import annotations

from typing import Any, Mapping

from mobility_env.mobilitybench.episode import Episode
from mobility_env.scoring import EpisodeScore
from mobility_env.mobilitybench.trajectory import CallRecord, Trajectory

from .metrics import score_episode
from .shaping import RewardShaper, RewardWeights, ShapingState


class DefaultScorer:
    """Shaped progress rewards, the paper's metrics and the verified verdict (see the module docstring).

    ``weights``: a :class:`RewardWeights`, a mapping of weight names to values (unknown names
    raise :class:`mobility_env.errors.ConfigError`), or None for the defaults.
    """

    def __init__(self, weights: RewardWeights | Mapping[str, float] | None = None):
        if not isinstance(weights, RewardWeights):
            weights = RewardWeights.from_mapping(weights or {})
        self.shaper = RewardShaper(weights)

    @property
    def weights(self) -> RewardWeights:
        return self.shaper.weights

    def start(self, episode: Episode, sandbox: Any = None) -> ShapingState:
        return self.shaper.start(episode)  # a replay: no world to read

    def step(self, state: ShapingState, call: CallRecord, *, arguments_valid: bool | None = None) -> dict[str, float]:
        return state.step(call, arguments_valid=arguments_valid)

    def finish(self, state: ShapingState, trajectory: Trajectory) -> EpisodeScore:
        metrics, verdict = score_episode(state.episode, trajectory, state.facts_for(trajectory.calls))
        return EpisodeScore(reward_components=self.shaper.terminal(metrics), metrics=metrics, verdict=verdict)

    def __repr__(self) -> str:
        changed: dict[str, Any] = {k: v for k, v in self.weights.to_dict().items()
                                   if v != getattr(RewardWeights, k)}
        return f"DefaultScorer({changed or ''})"
