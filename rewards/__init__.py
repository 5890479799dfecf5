"""Verified multi-dimensional scoring for MobilityBench trajectories.

``compute_metrics(episode, trajectory)`` returns ``ID, IE, DEC_P, DEC_R, TS_P, TS_R, SC, PF,
DR, FPR`` (floats in [0, 1]); :mod:`mobility_rewards.mobilitybench.shaping` turns the same definitions into
per-step RL rewards; :mod:`mobility_rewards.mobilitybench.scorecard` aggregates results into the paper's table;
:mod:`mobility_rewards.mobilitybench.audit` flags self-inconsistent gold; :mod:`mobility_rewards.commands` adds the
``eval``, ``report`` and ``audit`` CLI subcommands; :class:`DefaultScorer`
(:mod:`mobility_rewards.mobilitybench.scorer`)
is the scorer ``MobilityEnv`` uses unless given another. Nothing is loaded at import time.
"""

from .mobilitybench.metrics import METRIC_KEYS, compute_metrics, score_episode, token_usage
from .mobilitybench.reference import gold_trajectory, reference_finish
from .mobilitybench.scorer import DefaultScorer
from .verdict import Check, Verdict
from .mobilitybench.verify import verify_answer

from mobility_env.moved import alias_moved

__all__ = ["METRIC_KEYS", "compute_metrics", "score_episode", "token_usage", "gold_trajectory", "reference_finish",
           "Check", "Verdict", "verify_answer", "DefaultScorer"]


# Old paths of the modules that moved into the suite folders (mobility_env.moved): they import, with a warning.
MOVED = {"phone_report": "mobilepa.report", "phone_scorecard": "mobilepa.scorecard",
         "memory_gate": "mobilepa.memory_gate", "delegation_gates": "mobilepa.delegation_gates",
         "verify": "mobilitybench.verify", "verify_route": "mobilitybench.verify_route",
         "claims": "mobilitybench.claims", "evidence": "mobility_env.mobilitybench.evidence",
         "place_names": "mobilitybench.place_names", "intent": "mobilitybench.intent", "slots": "mobilitybench.slots",
         "tooluse": "mobilitybench.tooluse", "plan": "mobilitybench.plan", "reference": "mobilitybench.reference",
         "metrics": "mobilitybench.metrics", "shaping": "mobilitybench.shaping", "scorer": "mobilitybench.scorer",
         "audit": "mobilitybench.audit", "failures": "mobilitybench.failures", "scorecard": "mobilitybench.scorecard",
         "report": "mobilitybench.report"}
alias_moved(__name__, MOVED)
