"""The LLM agents: the OpenAI-compatible client (:mod:`.client`), its settings (:mod:`.config`), reply text and chat
messages (:mod:`.text`, :mod:`.messages`), ReAct (:mod:`.react`), Plan-and-Execute (:mod:`.plan_execute`) and
``mobility-env models check`` (:mod:`.check`). The prompts they render are ``mobility_agents/prompts``.

``from mobility_agents.llm import LLMClient`` (this package was one module before the suite folders) still works,
with a ``DeprecationWarning``: import from :mod:`mobility_agents.llm.client`.
"""

from mobility_env.moved import names_moved_to

__getattr__ = names_moved_to(__name__, "client")
