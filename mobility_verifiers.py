"""The verifiers plugin module: ``vf-eval mobility-verifiers`` and prime-rl import the taskset, harness and env
of ``mobility_agents.adapters.verifiers`` by this name (verifiers finds a plugin id as a top-level module)."""

from mobility_agents.adapters.verifiers import *  # noqa: F401,F403
from mobility_agents.adapters.verifiers import __all__  # noqa: F401
