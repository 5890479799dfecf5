"""MobilePA-v0's runtime part (:attr:`mobility_env.suites.Suite.runtime`): its tasks and its env.

A run's data is a task directory (``mobility-env synth --suite mobilepa``), its ``tasks.jsonl``, or the bundled tasks
(None); as a path or a URI (``file://``, ``s3://...``: :func:`mobility_env.datasource.localize` copies it to this node).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from mobility_env.errors import DataFileError

DATA_HELP = ("a MobilePA task directory (`mobility-env synth --suite mobilepa`) or its tasks.jsonl, as a path or a "
             "URI (file://, s3://bucket/prefix)")


class PhoneTaskSet:
    """The MobilePA tasks of a run, loaded once (the store of a ``MobilePA-v0`` run).

    ``ids`` in file order; ``task_scenario(id)`` is the task's category (what ``--scenario``
    selects by); ``tasks`` the :class:`~mobility_env.mobilepa.tasks.PhoneTask` list every env of
    the process shares (an env never changes a task).
    """

    env_id = "MobilePA-v0"

    def __init__(self, path: Path):
        from mobility_env.mobilepa.tasks import load_tasks

        self.path = path
        self.tasks = load_tasks(path)
        self.ids = [task.task_id for task in self.tasks]
        self._category = {task.task_id: task.category for task in self.tasks}

    def task_scenario(self, task_id: str) -> str:
        return self._category[task_id]


def data_path(data: str | os.PathLike | None) -> tuple[Path, str]:
    """The resolved data path and its kind (``bundled``, ``tasks``); a URI's is this node's copy."""
    from mobility_env.datasource import localize
    from mobility_env.mobilepa.env import BUNDLED_TASKS

    path = BUNDLED_TASKS if data is None else localize(data)
    if not path.exists():
        raise DataFileError(path, f"no such file or directory; --data takes {DATA_HELP}")
    return path.resolve(), "bundled" if data is None else "tasks"


def open_store(data: str | os.PathLike | None, lookup_config: Any = None) -> PhoneTaskSet:
    """The tasks of ``data`` (None: the bundled tasks)."""
    path, _ = data_path(data)
    if path.is_dir() and not (path / "tasks.jsonl").exists():
        raise DataFileError(path, "a directory without tasks.jsonl: not a MobilePA task directory; "
                                  "generate one with `mobility-env synth --suite mobilepa --out DIR`")
    return PhoneTaskSet(path)


def open_run(path: Path, lookup_config: Any = None) -> tuple[PhoneTaskSet, None]:
    """The tasks of a run's resolved data path (no load report: tasks are generated, not repaired)."""
    return open_store(path, lookup_config), None


def make_env(store: PhoneTaskSet, **options: Any) -> Any:
    """One env on the run's tasks."""
    from mobility_env.mobilepa.env import MobilePAEnv

    return MobilePAEnv(tasks=store.tasks, **options)


def fixed_tools() -> None:
    """None: each task offers its own tools (a trajectory records them)."""
    return None
