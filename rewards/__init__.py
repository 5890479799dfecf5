"""Verified multi-dimensional scoring for MobilityBench trajectories.

``compute_metrics(episode, trajectory)`` returns ``ID, IE, DEC_P, DEC_R, TS_P, TS_R, SC, PF,
DR, FPR`` (floats in [0, 1]); :mod:`mobility_rewards.shaping` turns the same definitions into
per-step RL rewards; :mod:`mobility_rewards.scorecard` aggregates results into the paper's table;
:mod:`mobility_rewards.audit` flags self-inconsistent gold; :mod:`mobility_rewards.commands` adds the
``eval``, ``report`` and ``audit`` CLI subcommands; :class:`DefaultScorer` (:mod:`mobility_rewards.scorer`)
is the scorer ``MobilityEnv`` uses unless given another. Nothing is loaded at import time.
"""

from .metrics import METRIC_KEYS, compute_metrics, score_episode, token_usage
from .reference import gold_trajectory, reference_finish
from .scorer import DefaultScorer
from .verdict import Check, Verdict
from .verify import verify_answer

__all__ = ["METRIC_KEYS", "compute_metrics", "score_episode", "token_usage", "gold_trajectory", "reference_finish",
           "Check", "Verdict", "verify_answer", "DefaultScorer"]
