"""The LLM agents: the OpenAI-compatible client (:mod:`.client`), its settings (:mod:`.config`), reply text and chat
messages (:mod:`.text`, :mod:`.messages`), ReAct (:mod:`.react`), Plan-and-Execute (:mod:`.plan_execute`) and
``mobility-env models check`` (:mod:`.check`). The prompts they render are ``mobility_agents/prompts``.

``from mobility_agents.llm import LLMClient`` (this package was one module before the suite folders) still works,
with a ``DeprecationWarning``: import from :mod:`mobility_agents.llm.client`.
"""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    import importlib
    import warnings

    client = importlib.import_module(f"{__name__}.client")
    if name.startswith("__") or not hasattr(client, name):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn(f"{__name__}.{name} moved to {__name__}.client.{name}", DeprecationWarning, stacklevel=2)
    return getattr(client, name)
