"""What a run plays: the registered env, its data, and how a worker builds an env on it.

``mobility-env run --env ENV_ID`` works the same for both registered environments; only the
three things here differ between them:

* :func:`open_store` — the episodes or tasks, loaded once per process (``MobilityBench-v0``: a
  built directory or an official file, :func:`mobility_env.store.resolve_data`; ``MobilePA-v0``: a
  task directory or ``tasks.jsonl``, :class:`PhoneTaskSet`);
* :func:`make_env` — one env per worker on that store (a bad env option is a ``ConfigError``);
* the scenario label ``--scenario`` selects by (``store.task_scenario(id)``: the MobilityBench
  task scenario; for MobilePA the task's behaviour category, e.g. ``error_recovery``).

Everything else — the lock, resume checks, Ray, the results and trajectory files, export — is
the runner's and does not know which env it drives.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from mobility_env.errors import ConfigError, DataFileError, MobilityEnvError

MOBILITYBENCH = "MobilityBench-v0"
MOBILEPA = "MobilePA-v0"
ENV_IDS = (MOBILITYBENCH, MOBILEPA)
#: Options ``mobility-env run`` gives each env when the user does not (``MobilityBench-v0``: the paper's
#: 10 actions and the compact observation; ``MobilePA-v0``: its own default of 12 actions).
DEFAULT_ENV_OPTIONS: dict[str, dict[str, Any]] = {MOBILITYBENCH: {"max_steps": 10, "obs_format": "compact"},
                                                  MOBILEPA: {}}


def check_env_id(env_id: str) -> str:
    if env_id not in ENV_IDS:
        raise ConfigError(f"unknown env {env_id!r}; registered: {', '.join(ENV_IDS)}")
    return env_id


class PhoneTaskSet:
    """The MobilePA tasks of a run, loaded once (the store of a ``MobilePA-v0`` run).

    ``ids`` in file order; ``task_scenario(id)`` is the task's category (what ``--scenario``
    selects by); ``tasks`` the :class:`~mobility_env.mobilepa.tasks.PhoneTask` list every env of
    the process shares (an env never changes a task).
    """

    env_id = MOBILEPA

    def __init__(self, path: Path):
        from mobility_env.mobilepa.tasks import load_tasks

        self.path = path
        self.tasks = load_tasks(path)
        self.ids = [task.task_id for task in self.tasks]
        self._category = {task.task_id: task.category for task in self.tasks}

    def task_scenario(self, task_id: str) -> str:
        return self._category[task_id]


def bundled_phone_tasks() -> Path:
    from mobility_env.mobilepa.env import BUNDLED_TASKS

    return BUNDLED_TASKS


def data_path(env_id: str, data: str | os.PathLike | None) -> tuple[Path, str]:
    """The resolved data path of a run and its kind (``bundled``, ``built``, ``file``, ``tasks``)."""
    if env_id == MOBILEPA:
        path = bundled_phone_tasks() if data is None else Path(data)
        if not path.exists():
            raise DataFileError(path, "no such file or directory; --data takes a MobilePA task directory "
                                      "(`mobility-env synth --suite mobilepa`) or its tasks.jsonl")
        return path.resolve(), "bundled" if data is None else "tasks"
    from mobility_env.store import default_data_path

    path = default_data_path() if data is None else Path(data)
    if not path.exists():
        raise DataFileError(path, "no such file or directory; --data takes a built directory "
                                  "(`mobility-env build`) or an official CSV/XLSX/JSONL file")
    return path.resolve(), "bundled" if data is None else ("built" if path.is_dir() else "file")


def open_store(env_id: str, data: str | os.PathLike | None, lookup_config: Any = None) -> Any:
    """The episodes (``MobilityBench-v0``) or tasks (``MobilePA-v0``) of ``data`` (None: the bundled set)."""
    if check_env_id(env_id) == MOBILEPA:
        path, _ = data_path(env_id, data)
        if path.is_dir() and not (path / "tasks.jsonl").exists():
            raise DataFileError(path, "a directory without tasks.jsonl: not a MobilePA task directory; "
                                      "generate one with `mobility-env synth --suite mobilepa --out DIR`")
        return PhoneTaskSet(path)
    from mobility_env.store import resolve_data

    return resolve_data(data, lookup_config)


def make_env(store: Any, env_kwargs: dict[str, Any]) -> Any:
    """One env on ``store`` (its env id decides which); a bad env option is a ConfigError."""
    try:
        if isinstance(store, PhoneTaskSet):
            from mobility_env.mobilepa.env import MobilePAEnv

            return MobilePAEnv(tasks=store.tasks, **env_kwargs)
        from mobility_env.env import MobilityEnv

        return MobilityEnv(store=store, **env_kwargs)
    except (TypeError, ValueError) as exc:
        if isinstance(exc, MobilityEnvError):
            raise
        raise ConfigError(f"invalid environment option: {exc}") from exc
