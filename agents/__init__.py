"""Baseline agents and rollout runners for mobility-env.

``OracleAgent`` (gold replay, upper bound), ``RuleAgent`` (LLM-free default), ``ReActAgent``
and ``PlanExecuteAgent`` (OpenAI-compatible chat completions), all subclasses of
``mobility_agents.base.Agent``; ``mobility_agents.runner`` drives any of them over many episodes.
"""

from .base import Agent, AgentFailure, EpisodeSession

__all__ = ["Agent", "AgentFailure", "EpisodeSession"]
