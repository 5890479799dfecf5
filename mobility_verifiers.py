"""The verifiers plugin module: ``vf-eval mobility-verifiers`` and prime-rl import the taskset, harness and env
of ``mobility_agents.verifiers_env`` by this name (verifiers finds a plugin id as a top-level module)."""

from mobility_agents.verifiers_env import *  # noqa: F401,F403
from mobility_agents.verifiers_env import __all__  # noqa: F401
