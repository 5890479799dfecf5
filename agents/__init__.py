"""Agents, runs and trainer adapters for mobility-env.

The agents, importable from here (each loaded when first named): ``OracleAgent`` (gold replay, upper bound) and
``RuleAgent`` (LLM-free default) for MobilityBench-v0, ``PhoneOracleAgent`` and ``PhoneRuleAgent`` for MobilePA-v0,
``ReActAgent`` and ``PlanExecuteAgent`` (OpenAI-compatible chat completions) for every suite, all subclasses of
``mobility_agents.base.Agent``; ``MobilityEnvClient``, the OpenEnv client of ``mobility-env serve``.
``mobility_agents.runner`` drives any agent over many episodes.
"""

from typing import Any

from .base import Agent, AgentFailure, EpisodeSession

from mobility_env.moved import alias_moved

__all__ = ["Agent", "AgentFailure", "EpisodeSession", "MobilityEnvClient", "OracleAgent", "PhoneOracleAgent",
           "PhoneRuleAgent", "PlanExecuteAgent", "ReActAgent", "RuleAgent"]

_LAZY = {"RuleAgent": "baselines.mobilitybench.rule", "OracleAgent": "baselines.mobilitybench.oracle",
         "PhoneRuleAgent": "baselines.mobilepa.rule", "PhoneOracleAgent": "baselines.mobilepa.scripted",
         "ReActAgent": "llm.react", "PlanExecuteAgent": "llm.plan_execute",
         "MobilityEnvClient": "adapters.openenv.serve"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# Old paths of the modules that moved into the suite folders (mobility_env.moved): they import, with a warning.
MOVED = {"phone_rule": "baselines.mobilepa.rule", "phone_parse": "baselines.mobilepa.parse",
         "phone_capabilities": "baselines.mobilepa.capabilities", "mobilepa": "baselines.mobilepa.scripted",
         "rule": "baselines.mobilitybench.rule", "answers": "baselines.mobilitybench.observations",
         "oracle": "baselines.mobilitybench.oracle", "llm_config": "llm.config", "llm_text": "llm.text",
         "chat_messages": "llm.messages", "react": "llm.react", "plan_execute": "llm.plan_execute",
         "models_check": "llm.check", "serve": "adapters.openenv.serve", "serve_client": "adapters.openenv.client",
         "serve_config": "adapters.openenv.config", "serve_env": "adapters.openenv.environment",
         "serve_server": "adapters.openenv.server", "verifiers_env": "adapters.verifiers"}
alias_moved(__name__, MOVED)
