"""mobility-env: a Gymnasium environment and replay sandbox for route-planning LLM agents.

``import mobility_env`` registers ``"MobilityBench-v0"``; nothing is loaded at import time.

>>> import gymnasium as gym, mobility_env                       # doctest: +SKIP
>>> env = gym.make("MobilityBench-v0")                           # doctest: +SKIP
>>> obs, info = env.reset(seed=0)                                # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

from .moved import alias_moved

__version__ = "0.1.0"
DEFAULT_MAX_STEPS = 10  # actions per episode (the paper's): the env's max_steps and the registered max_episode_steps

__all__ = [
    "Episode", "EpisodeList", "LoadReport", "LookupConfig", "LookupResult", "MobilityEnv", "Sandbox",
    "build_directory", "load_episodes", "__version__",
]

_LAZY = {
    "Episode": ("mobility_env.mobilitybench.episode", "Episode"),
    "EpisodeList": ("mobility_env.mobilitybench.loaders", "EpisodeList"),
    "LoadReport": ("mobility_env.mobilitybench.loaders", "LoadReport"),
    "load_episodes": ("mobility_env.mobilitybench.loaders", "load_episodes"),
    "build_directory": ("mobility_env.mobilitybench.build", "build_directory"),
    "Sandbox": ("mobility_env.mobilitybench.sandbox", "Sandbox"),
    "LookupConfig": ("mobility_env.mobilitybench.sandbox", "LookupConfig"),
    "LookupResult": ("mobility_env.mobilitybench.sandbox", "LookupResult"),
    "MobilityEnv": ("mobility_env.mobilitybench.env", "MobilityEnv"),
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        module_name, attr = _LAZY[name]
        return getattr(importlib.import_module(module_name), attr)
    raise AttributeError(f"module 'mobility_env' has no attribute {name!r}")


def _register() -> None:
    """Each suite once: its entry in :mod:`mobility_env.suites` (its data and env: ``runtime``, env layer; its
    scoring: ``scoring``, scoring layer; named, not imported — the baselines are the agents layer's,
    :data:`mobility_agents.suites.BASELINES`) and its Gymnasium id, with the env's own step limit and
    ``ScoreOnTimeLimit`` above ``TimeLimit`` so a time-limit truncation is scored too."""
    from gymnasium.envs.registration import WrapperSpec, register, registry

    from .suites import Suite, register_suite

    suites = (
        Suite(env_id="MobilityBench-v0", name="mobility", id_key="episode_id", unit="episodes",
              max_steps=DEFAULT_MAX_STEPS, entry_point="mobility_env.mobilitybench.env:MobilityEnv",
              runtime="mobility_env.mobilitybench.suite", scoring="mobility_rewards.suites:MOBILITYBENCH",
              default_options={"max_steps": DEFAULT_MAX_STEPS, "obs_format": "compact"}, own_options=("obs_format",)),
        Suite(env_id="MobilePA-v0", name="mobilepa", id_key="task_id", unit="tasks", max_steps=12,  # the env's own
              entry_point="mobility_env.mobilepa.env:MobilePAEnv", runtime="mobility_env.mobilepa.suite",
              scoring="mobility_rewards.suites:MOBILEPA", own_options=("maps_data",), result_marks=("bucket",)),
    )
    for suite in suites:
        register_suite(suite)
        if suite.env_id not in registry:
            register(id=suite.env_id, entry_point=suite.entry_point, max_episode_steps=suite.max_steps,
                     additional_wrappers=(WrapperSpec("ScoreOnTimeLimit", "mobility_env.wrappers:ScoreOnTimeLimit",
                                                      {}),))


_register()


# Old paths of the modules that moved into the suite folders (mobility_env.moved): they import, with a warning.
MOVED = {"env": "mobilitybench.env", "episode": "mobilitybench.episode", "build": "mobilitybench.build",
         "index_build": "mobilitybench.index_build", "index_format": "mobilitybench.index_format",
         "index_load": "mobilitybench.index_load", "replay_index": "mobilitybench.replay_index",
         "sandbox": "mobilitybench.sandbox", "store": "mobilitybench.store", "loaders": "mobilitybench.loaders",
         "observation": "mobilitybench.observation", "official": "mobilitybench.official",
         "official_sandbox": "mobilitybench.official_sandbox", "toolkinds": "mobilitybench.toolkinds",
         "tool_samples": "mobilitybench.tool_samples"}
alias_moved(__name__, MOVED)
