"""The baseline part of each suite (composition layer): the agents ``--agent rule`` and ``--agent oracle`` play,
keyed by env id (:mod:`mobility_env.suites` holds the rest of each entry). The LLM agents (ReAct,
Plan-and-Execute) play every suite.
"""

from __future__ import annotations

import importlib
from typing import Any

from mobility_env.errors import ConfigError
from mobility_env.suites import suite_of

#: env id -> {agent name: "module:class"}
BASELINES: dict[str, dict[str, str]] = {
    "MobilityBench-v0": {"rule": "mobility_agents.baselines.mobilitybench.rule:RuleAgent",
                         "oracle": "mobility_agents.baselines.mobilitybench.oracle:OracleAgent"},
    "MobilePA-v0": {"rule": "mobility_agents.baselines.mobilepa.rule:PhoneRuleAgent",
                    "oracle": "mobility_agents.baselines.mobilepa.scripted:PhoneOracleAgent"},
}


def baseline(env_id: str, name: str) -> Any:
    """The class of a suite's baseline agent ``name`` (``rule``, ``oracle``)."""
    path = BASELINES.get(suite_of(env_id).env_id, {}).get(name)
    if path is None:
        raise ConfigError(f"{env_id} has no {name!r} agent")
    module, _, attribute = path.partition(":")
    return getattr(importlib.import_module(module), attribute)
