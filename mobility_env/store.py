"""Where the env gets its episodes and sandbox from: ``resolve_data(data)``.

``data`` may be None (the bundled synthetic set), a built directory, or any file
``load_episodes`` reads (official CSV/XLSX/JSONL, our Parquet). A built directory is opened
lazily: episodes are materialized one at a time on ``reset`` from the two Parquet files, so
opening 100k episodes costs one column read, not 100k model validations.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

import pyarrow.parquet as pq

from .build import EPISODES_FILE, episode_from_record
from .episode import Episode, RecordedCall
from .errors import DataFileError
from .replay_index import open_episodes_arrow
from .sandbox import LookupConfig, Sandbox

DATA_ENV_VAR = "MOBILITY_ENV_DATA"
# A wheel installs the bundled set as package data (mobility_env/_bundled/default); a checkout or an editable
# install reads it from the repository's datasets/default.
_INSTALLED_DIR = Path(__file__).resolve().parent / "_bundled" / "default"
BUNDLED_DIR = _INSTALLED_DIR if (_INSTALLED_DIR / EPISODES_FILE).exists() else \
    Path(__file__).resolve().parent.parent / "datasets" / "default"


def default_data_path() -> Path:
    """``$MOBILITY_ENV_DATA`` if set, else the bundled ``datasets/default``."""
    override = os.environ.get(DATA_ENV_VAR)
    path = Path(override) if override else BUNDLED_DIR
    if not (path / EPISODES_FILE).exists():
        raise DataFileError(path, "bundled episodes not found; pass data=PATH (a built directory or an official file), "
                                  f"set ${DATA_ENV_VAR}, or generate a set with `mobility-env synth --out DIR`")
    return path


class EpisodeStore:
    """Episode ids in order, and ``get(episode_id)`` materializing one Episode."""

    def __init__(self, sandbox: Sandbox, *, episodes: list[Episode] | None = None, directory: Path | None = None):
        self.sandbox = sandbox
        self.directory = directory
        self._episodes = {e.episode_id: e for e in episodes} if episodes is not None else None
        self._table = None
        self._row_of: dict[str, int] | None = None
        self._scenarios: list[str] | None = None
        self.ids: list[str] = list(self._episodes) if self._episodes is not None else self._read_ids()
        self.get = lru_cache(maxsize=64)(self._get)  # type: ignore[method-assign]

    def _read_ids(self) -> list[str]:
        assert self.directory is not None
        # the memory-mapped Arrow copy is shared by every process; Parquet is decompressed per process
        self._table = open_episodes_arrow(self.directory)
        if self._table is None:
            self._table = pq.read_table(self.directory / EPISODES_FILE, memory_map=True)
        ids = self._table.column("episode_id").to_pylist()
        self._row_of = {eid: i for i, eid in enumerate(ids)}
        return ids

    def __len__(self) -> int:
        return len(self.ids)

    def task_scenario(self, episode_id: str) -> str:
        """The scenario of an episode without materializing it."""
        if self._episodes is not None:
            return self._episodes[episode_id].task_scenario
        assert self._table is not None and self._row_of is not None
        if self._scenarios is None:
            self._scenarios = self._table.column("task_scenario").to_pylist()
        return self._scenarios[self._row_of[episode_id]]

    def _get(self, episode_id: str) -> Episode:
        if self._episodes is not None:
            return self._episodes[episode_id]
        assert self._table is not None and self._row_of is not None
        record = self._table.slice(self._row_of[episode_id], 1).to_pylist()[0]
        box = self.sandbox
        recorded = []
        for entry in range(record["sandbox_start"], record["sandbox_stop"]):
            gold = box.entry_value("gold_index", entry)
            recorded.append(RecordedCall(
                name=box.entry_value("tool", entry), arguments=box.entry_arguments(entry), response=box.response(entry),
                source_column=box.entry_value("source_column", entry),
                gold_index=None if gold < 0 else gold, truncated=box.entry_value("truncated", entry)))
        return episode_from_record(record, recorded)


def resolve_data(data: str | os.PathLike | None, lookup_config: LookupConfig | None = None) -> EpisodeStore:
    """An EpisodeStore for ``data`` (see module docstring)."""
    from .loaders import load_episodes

    path = default_data_path() if data is None else Path(data)
    if path.is_dir() and (path / EPISODES_FILE).exists():
        return EpisodeStore(Sandbox.open(path, lookup_config), directory=path)
    episodes = load_episodes(path)
    if not episodes:
        raise DataFileError(path, f"no usable episodes ({episodes.report.summary()})")
    return EpisodeStore(Sandbox.from_episodes(episodes, lookup_config), episodes=list(episodes))
