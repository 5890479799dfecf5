"""mobility-env: a Gymnasium environment and replay sandbox for route-planning LLM agents.

``import mobility_env`` registers ``"MobilityBench-v0"``; nothing is loaded at import time.

>>> import gymnasium as gym, mobility_env                       # doctest: +SKIP
>>> env = gym.make("MobilityBench-v0")                           # doctest: +SKIP
>>> obs, info = env.reset(seed=0)                                # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"
DEFAULT_MAX_STEPS = 10  # actions per episode (the paper's): the env's max_steps and the registered max_episode_steps

__all__ = [
    "Episode", "EpisodeList", "LoadReport", "LookupConfig", "LookupResult", "MobilityEnv", "Sandbox",
    "build_directory", "load_episodes", "__version__",
]

_LAZY = {
    "Episode": ("mobility_env.episode", "Episode"),
    "EpisodeList": ("mobility_env.loaders", "EpisodeList"),
    "LoadReport": ("mobility_env.loaders", "LoadReport"),
    "load_episodes": ("mobility_env.loaders", "load_episodes"),
    "build_directory": ("mobility_env.build", "build_directory"),
    "Sandbox": ("mobility_env.sandbox", "Sandbox"),
    "LookupConfig": ("mobility_env.sandbox", "LookupConfig"),
    "LookupResult": ("mobility_env.sandbox", "LookupResult"),
    "MobilityEnv": ("mobility_env.env", "MobilityEnv"),
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        module_name, attr = _LAZY[name]
        return getattr(importlib.import_module(module_name), attr)
    raise AttributeError(f"module 'mobility_env' has no attribute {name!r}")


def _register() -> None:
    """``MobilityBench-v0`` with the env's own step limit; ``gymnasium.make`` puts
    ``ScoreOnTimeLimit`` above its ``TimeLimit`` so a time-limit truncation is scored too."""
    from gymnasium.envs.registration import WrapperSpec, register, registry

    if "MobilityBench-v0" not in registry:
        register(id="MobilityBench-v0", entry_point="mobility_env.env:MobilityEnv", max_episode_steps=DEFAULT_MAX_STEPS,
                 additional_wrappers=(WrapperSpec("ScoreOnTimeLimit", "mobility_env.env:ScoreOnTimeLimit", {}),))
    if "MobilePA-v0" not in registry:  # the env scores its own step limit (12); no TimeLimit above it
        register(id="MobilePA-v0", entry_point="mobility_env.mobilepa.env:MobilePAEnv")


_register()
