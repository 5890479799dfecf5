"""The suites this project serves, one registry entry each: what a runner, the CLI, export, the servers and the
trainer adapters need to know to drive a suite without naming it.

A :class:`Suite` is plain data plus the names of the modules that hold its parts, imported only when used, so each
layer attaches its own part and nothing above the kernel is imported by registering:

* ``runtime`` (env layer) — a module with ``data_path(data) -> (path, kind)``, ``open_store(data, lookup_config)``
  (the episodes or tasks of a run, loaded once per process), ``make_env(store, **options)``, ``open_run(path,
  lookup_config)`` (the store and the load report ``run.json`` records) and ``fixed_tools()`` (the tools every
  item offers, or None when each records its own); a store answers
  ``ids`` and ``task_scenario(id)`` (what ``--scenario`` selects by);
* ``scoring`` (scoring layer) — a :class:`mobility_rewards.suites.SuiteScoring`: the scorecard ``run`` prints, the
  rows and scores of ``--repeats``, the reward weights, and what ``eval`` and ``report`` do with a run;
* the baselines (composition layer) — :data:`mobility_agents.suites.BASELINES`, keyed by env id.

``mobility_env/__init__.py`` registers the entries (``MobilityBench-v0``, ``MobilePA-v0``) and, from each, its
Gymnasium id; a third suite is one folder per package and one :func:`register_suite` call.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from types import MappingProxyType, ModuleType
from typing import Any, Mapping

from .errors import ConfigError


@dataclass(frozen=True)
class Suite:
    """One suite: its Gymnasium id, its name (``info["suite"]`` and ``synth --suite``), what its items are called,
    its run defaults and the modules of its parts (see the module docstring)."""

    env_id: str
    name: str
    id_key: str  # the reset option naming an item: "episode_id" or "task_id"
    unit: str  # what its items are called in messages: "episodes" or "tasks"
    max_steps: int  # actions per episode (the registered max_episode_steps)
    entry_point: str  # the env class, "module:Class" (its Gymnasium entry point)
    runtime: str  # module path of the env-layer part
    scoring: str  # module path of the scoring-layer part
    default_options: Mapping[str, Any] = field(default_factory=dict)  # env options `mobility-env run` gives
    own_options: tuple[str, ...] = ()  # env options only this suite takes (a CLI flag per option)
    result_marks: tuple[str, ...] = ()  # result keys only this suite's results carry (runs that named no env)

    def part(self, layer: str) -> Any:
        """One part (``"runtime"`` or ``"scoring"``): the module named, or ``module:attribute``'s attribute, imported
        on first use."""
        module, _, attribute = getattr(self, layer).partition(":")
        found: ModuleType = importlib.import_module(module)
        return getattr(found, attribute) if attribute else found

    def options(self, given: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The env options of a run: the suite's defaults, then ``given``."""
        return {**self.default_options, **(given or {})}


_SUITES: dict[str, Suite] = {}
SUITES: Mapping[str, Suite] = MappingProxyType(_SUITES)


def register_suite(suite: Suite) -> Suite:
    """Add ``suite`` (again: the same entry is a no-op; another entry under a registered id is an error)."""
    known = _SUITES.get(suite.env_id)
    if known is not None and known != suite:
        raise ConfigError(f"suite {suite.env_id!r} is registered already with other parts")
    if any(s.name == suite.name and s.env_id != suite.env_id for s in _SUITES.values()):
        raise ConfigError(f"suite name {suite.name!r} is taken")
    _SUITES[suite.env_id] = suite
    return suite


def unregister_suite(env_id: str) -> None:
    """Remove a suite (tests that register one of their own)."""
    _SUITES.pop(env_id, None)


def env_ids() -> tuple[str, ...]:
    return tuple(_SUITES)


def suite_of(env_id: str) -> Suite:
    """The registered suite of ``env_id``; an unknown id is a ConfigError listing the registered ones."""
    try:
        return _SUITES[env_id]
    except (KeyError, TypeError):
        raise ConfigError(f"unknown env {env_id!r}; registered: {', '.join(_SUITES)}") from None


def suite_named(name: str) -> Suite:
    """The registered suite called ``name`` (``synth --suite``, ``info["suite"]``)."""
    for suite in _SUITES.values():
        if suite.name == name:
            return suite
    raise ConfigError(f"unknown suite {name!r}; registered: {', '.join(s.name for s in _SUITES.values())}")


def suite_of_run(run_info: Mapping[str, Any] | None) -> Suite:
    """The suite a run was made with (``run.json``'s ``env_id``; a run from before it recorded one: the first
    registered suite, which every such run used)."""
    env_id = run_info.get("env_id") if isinstance(run_info, Mapping) else None
    return _SUITES[env_id] if env_id in _SUITES else next(iter(_SUITES.values()))
