"""What a run plays: the registered suite (:mod:`mobility_env.suites`), its data, and how a worker builds an env on it.

``mobility-env run --env ENV_ID`` works the same for every registered suite; what differs lives in the suite's
registry entry and its runtime part (``MobilityBench-v0``: :mod:`mobility_env.mobilitybench.suite`; ``MobilePA-v0``:
:mod:`mobility_env.mobilepa.suite`):

* :func:`open_store` — the episodes or tasks, loaded once per process (a built directory or an official file; a
  task directory or ``tasks.jsonl``), by a local path or a URI (``file://``, ``s3://bucket/prefix``): a URI is copied
  once per node into a cache (:func:`mobility_env.datasource.localize`), so an actor on any node opens the same
  ``data`` string;
* :func:`make_env` — one env per worker on that store (a bad env option is a ``ConfigError``);
* the scenario label ``--scenario`` selects by (``store.task_scenario(id)``: the MobilityBench task scenario; for
  MobilePA the task's behaviour category, e.g. ``error_recovery``).

Everything else — the lock, resume checks, Ray, the results and trajectory files, export — is
the runner's and does not know which env it drives.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from mobility_env.errors import ConfigError, MobilityEnvError
from mobility_env.mobilepa.suite import PhoneTaskSet  # noqa: F401  (where it was imported from before the registry)
from mobility_env.suites import Suite, env_ids, suite_of

#: The two suites' ids, for defaults and for code that names one on purpose (tests, examples); branches on them
#: belong in the registry (tests/test_suites.py greps for them).
MOBILITYBENCH = "MobilityBench-v0"
MOBILEPA = "MobilePA-v0"
ENV_IDS = env_ids()


def check_env_id(env_id: str) -> str:
    return suite_of(env_id).env_id


def default_env_options(env_id: str) -> dict[str, Any]:
    """Options ``mobility-env run`` gives the env when the user does not (the suite's registry entry)."""
    return suite_of(env_id).options()


def data_path(env_id: str, data: str | os.PathLike | None) -> tuple[Path, str]:
    """The resolved data path of a run and its kind (``bundled``, ``built``, ``file``, ``tasks``); for a URI, this
    node's local copy."""
    path, kind = suite_of(env_id).part("runtime").data_path(data)
    return path, kind


def open_store(env_id: str, data: str | os.PathLike | None, lookup_config: Any = None) -> Any:
    """The episodes or tasks of ``data`` (None: the suite's bundled set), marked with their suite."""
    store = suite_of(env_id).part("runtime").open_store(data, lookup_config)
    store.env_id = env_id
    return store


def suite_of_store(store: Any) -> Suite:
    """The suite a store was opened for (a store opened without :func:`open_store` is the first suite's)."""
    return suite_of(getattr(store, "env_id", None) or env_ids()[0])


def make_env(store: Any, env_kwargs: dict[str, Any]) -> Any:
    """One env on ``store`` (its suite decides which); a bad env option is a ConfigError."""
    try:
        return suite_of_store(store).part("runtime").make_env(store, **env_kwargs)
    except (TypeError, ValueError) as exc:
        if isinstance(exc, MobilityEnvError):
            raise
        raise ConfigError(f"invalid environment option: {exc}") from exc
