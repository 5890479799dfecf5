"""The Gymnasium conventions both suites' envs keep, in one place: a ``TimeLimit`` truncation is scored
(:class:`ScoreOnTimeLimit`, registered in ``additional_wrappers``), an unsupported ``render_mode`` is a
:class:`~mobility_env.errors.ConfigError` naming the supported ones (:func:`check_render_mode`), and ``reset``'s
options choose the episode the same way, every bad option a ``ConfigError`` (:func:`chosen_item`).

An env these serve has ``max_steps`` (actions per episode: the env truncates and scores the last one itself)
and ``abandon(reason) -> info``, which ends the running episode scored like a truncation and returns the final
info (``metrics``, ``verdict``, ``trajectory``, ``reward_components`` with the terminal terms, ...).
"""

from __future__ import annotations

from typing import Any, Mapping, SupportsFloat

import gymnasium as gym
from gymnasium import logger

from .errors import ConfigError

# final-info keys the wrapper does not copy into a truncated step's info: the reason (it is a truncation, not an
# abandoned run) and the reward terms (added to the step's own)
_NOT_COPIED = frozenset({"abandoned", "reward_components"})


def chosen_item(options: Any, ids: list[str], known: Any, *, id_keys: tuple[str, ...], index_key: str,
                draw: Any) -> str:
    """The item ``reset(options=...)`` asks for: the first of ``id_keys`` given (a string among ``known``), else
    ``index_key`` (an integer, taken modulo the number of items), else ``draw(len(ids))``. Options that are not a
    dict, an id that is no string or unknown, an index that is no finite integer: a ConfigError naming the option
    (over HTTP a validation error, never a 500)."""
    if options is None:
        options = {}
    if not isinstance(options, Mapping):
        raise ConfigError(f"reset options must be a dict, got {type(options).__name__}")
    for key in id_keys:
        value = options.get(key)
        if value is None:
            continue
        if not isinstance(value, str):
            raise ConfigError(f"reset option {key} must be a string id, got {type(value).__name__}")
        if value not in known:
            raise ConfigError(f"unknown {key} {value[:100]!r}; see env.unwrapped.{id_keys[0]}s")
        return value
    index = options.get(index_key)
    if index is None:
        return ids[int(draw(len(ids)))]
    try:
        if isinstance(index, bool) or not isinstance(index, (int, float, str)):
            raise TypeError(type(index).__name__)
        position = int(index)
    except (TypeError, ValueError, OverflowError) as exc:
        raise ConfigError(f"reset option {index_key} must be an integer, got {str(index)[:40]!r} ({exc})") from None
    return ids[position % len(ids)]


def check_render_mode(render_mode: str | None, metadata: Mapping[str, Any]) -> None:
    """Raise :class:`~mobility_env.errors.ConfigError` unless ``render_mode`` is None or one of
    ``metadata["render_modes"]``."""
    modes = list(metadata.get("render_modes", ()))
    if render_mode is not None and render_mode not in modes:
        raise ConfigError(f"render_mode must be None or one of {', '.join(map(repr, modes)) or 'none'}, "
                          f"got {render_mode!r}")


class ScoreOnTimeLimit(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Keeps ``metrics``, ``verdict`` and ``trajectory`` in the last info when a ``TimeLimit``
    beneath it, not the env, truncates the episode.

    ``gymnasium.make("MobilityBench-v0")`` and ``gymnasium.make("MobilePA-v0")`` apply it above ``TimeLimit``
    (it is registered in ``additional_wrappers``). On construction the env inside adopts the ``TimeLimit``'s
    ``max_episode_steps`` as its ``max_steps`` when that is lower, so both truncate at the same step and the
    env scores that step itself (a ``max_steps`` passed to ``gymnasium.make`` above the limit is capped, with a
    warning). Should a ``TimeLimit`` still truncate an unscored episode (its limit changed later, or another
    wrapper counts steps), the wrapper ends it with ``env.unwrapped.abandon("time_limit")``: scored like the
    env's own truncation, its terminal reward terms added to that step's reward and ``reward_components``, and
    the final info's other keys (``metrics``, ``verdict``, ``trajectory``, the labels) added to the step's.
    """

    def __init__(self, env: gym.Env):
        gym.utils.RecordConstructorArgs.__init__(self)
        gym.Wrapper.__init__(self, env)
        spec = env.spec
        limit = spec.max_episode_steps if spec is not None else None
        base = env.unwrapped
        steps = getattr(base, "max_steps", None)
        if isinstance(limit, int) and isinstance(steps, int) and 0 < limit < steps:
            asked = spec.kwargs.get("max_steps") if spec is not None else None
            if asked is not None:
                logger.warn(f"max_steps={steps} is above the TimeLimit's max_episode_steps={limit}: episodes end "
                            f"after {limit} steps; pass max_episode_steps={steps} to gymnasium.make to allow more")
            setattr(base, "max_steps", limit)

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        abandon = getattr(self.env.unwrapped, "abandon", None)
        if truncated and not terminated and "metrics" not in info and callable(abandon):
            final = abandon("time_limit")
            terminal = final.get("reward_components") or {}
            reward = float(reward) + float(sum(terminal.values()))
            info = dict(info)
            info["reward_components"] = {**info.get("reward_components", {}), **terminal}
            info.update({key: value for key, value in final.items()
                         if key not in info and key not in _NOT_COPIED and value is not None})
        return obs, reward, terminated, truncated, info
