"""Where the env gets its episodes and sandbox from: ``resolve_data(data)``.

``data`` may be None (the bundled synthetic set), a built directory, or any file
``load_episodes`` reads (official CSV/XLSX/JSONL, our Parquet). A built directory is opened
lazily: episodes are materialized one at a time on ``reset`` from the two Parquet files, so
opening 100k episodes costs one column read, not 100k model validations. Its files are first
checked against ``manifest.json`` (:func:`mobility_env.layout.check_built_directory`): a damaged
Parquet file raises :class:`~mobility_env.errors.CorruptDataError`, a damaged derived file is
not used.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from .build import RecordDecodeError, episode_from_record, recorded_call_from_entry
from .episode import Episode
from ..errors import CorruptDataError, DataFileError
from ..layout import (EPISODES_ARROW_FILE, EPISODES_FILE, EPISODES_SCHEMA, SANDBOX_FILE, DirectoryCheck,
                      check_built_directory)
from .index_load import cell_reader, open_episodes_arrow
from .sandbox import LookupConfig, Sandbox

DATA_ENV_VAR = "MOBILITY_ENV_DATA"
# A wheel installs the bundled set as package data (mobility_env/_bundled/default); a checkout or an editable
# install reads it from the repository's datasets/default.
_INSTALLED_DIR = Path(__file__).resolve().parents[1] / "_bundled" / "default"
BUNDLED_DIR = _INSTALLED_DIR if (_INSTALLED_DIR / EPISODES_FILE).exists() else \
    Path(__file__).resolve().parents[2] / "datasets" / "default"


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

    def __init__(self, sandbox: Sandbox, *, episodes: list[Episode] | None = None, directory: Path | None = None,
                 check: DirectoryCheck | None = None):
        self.sandbox = sandbox
        self.directory = directory
        self._check = check
        self._episodes = {e.episode_id: e for e in episodes} if episodes is not None else None
        self._table = None
        self._table_path: Path | None = None  # the file the episode rows are read from
        self._row_of: dict[str, int] | None = None
        self._readers: dict[str, tuple[Any, list[Callable[[int], Any]]]] | None = None
        self._scenarios: list[str] | None = None
        self.ids: list[str] = list(self._episodes) if self._episodes is not None else self._read_ids()
        self.get = lru_cache(maxsize=64)(self._get)  # type: ignore[method-assign]

    def _read_ids(self) -> list[str]:
        assert self.directory is not None
        path = self.directory / EPISODES_FILE
        check = self._check or check_built_directory(self.directory)
        # the memory-mapped Arrow copy is shared by every process; Parquet is decompressed per process
        self._table = open_episodes_arrow(self.directory, check)
        if self._table is not None:
            self._table_path = self.directory / EPISODES_ARROW_FILE
        else:
            self._table_path = path
            try:
                self._table = pq.read_table(path, memory_map=True)
            except (OSError, ValueError, pa.ArrowException) as exc:
                raise CorruptDataError(path, f"cannot read Parquet ({exc}); rebuild with "
                                             f"`mobility-env build SRC --out {self.directory}`") from exc
        assert self._table is not None  # set by both branches above
        if not check.verified:  # no checksum vouches for it: validate in full
            try:
                self._table.validate(full=True)
            except (ValueError, pa.ArrowException) as exc:
                raise CorruptDataError(self._table_path, f"damaged ({exc}); rebuild with "
                                                         f"`mobility-env build SRC --out {self.directory}`") from exc
        for name in EPISODES_SCHEMA.names:
            if name not in self._table.column_names:
                raise CorruptDataError(self._table_path, f"not a mobility-env episodes file: no column {name!r}")
            got, expected = self._table.schema.field(name).type, EPISODES_SCHEMA.field(name).type
            if not got.equals(expected) and not (pa.types.is_large_string(got) and expected == pa.string()):
                raise CorruptDataError(self._table_path, f"column has type {got}, expected {expected}", column=name)
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

    def _record(self, row: int) -> dict[str, Any]:
        """One episodes row as a dict, read cell by cell from the (memory-mapped) Arrow buffers."""
        all_readers = self._readers
        if all_readers is None:  # built whole, then published: threads of one actor share the store
            assert self._table is not None
            all_readers = {}
            for name in self._table.column_names:
                column = self._table.column(name)
                starts = np.cumsum([0] + [len(chunk) for chunk in column.chunks])
                all_readers[name] = (starts, [cell_reader(chunk) for chunk in column.chunks])
            self._readers = all_readers
        record = {}
        for name, (starts, readers) in all_readers.items():
            if len(readers) == 1:
                record[name] = readers[0](row)
            else:
                chunk = int(np.searchsorted(starts, row, side="right")) - 1
                record[name] = readers[chunk](row - int(starts[chunk]))
        return record

    def _get(self, episode_id: str) -> Episode:
        if self._episodes is not None:
            return self._episodes[episode_id]
        assert self._table is not None and self._row_of is not None and self._table_path is not None
        row = self._row_of[episode_id]
        record = self._record(row)
        box = self.sandbox
        start, stop = record["sandbox_start"], record["sandbox_stop"]
        if not (isinstance(start, int) and isinstance(stop, int) and 0 <= start <= stop <= len(box)):
            raise CorruptDataError(self._table_path, f"sandbox rows [{start}, {stop}) are not within the "
                                   f"{len(box)} sandbox rows", row=row + 1, column="sandbox_start")
        box.note_span(episode_id, start, stop)
        recorded = []
        source = box.index.source or (box.directory / SANDBOX_FILE if box.directory else self._table_path)
        read = box.index.value
        for entry in range(start, stop):
            values = {name: read(name, entry) for name in ("tool", "arguments", "source_column", "gold_index",
                                                           "truncated")}
            values["response"] = box.stored("response", entry)  # read and decoded when a scorer needs it
            try:
                recorded.append(recorded_call_from_entry(values, (source, entry + 1)))
            except RecordDecodeError as exc:
                raise CorruptDataError(source, str(exc), row=entry + 1, column=exc.column) from exc
        try:
            return episode_from_record(record, recorded)
        except RecordDecodeError as exc:
            raise CorruptDataError(self._table_path, str(exc), row=row + 1, column=exc.column) from exc


def resolve_data(data: str | os.PathLike | None, lookup_config: LookupConfig | None = None) -> EpisodeStore:
    """An EpisodeStore for ``data`` (see module docstring); a URI (``s3://...``) opens this node's copy
    (:func:`mobility_env.datasource.localize`)."""
    from ..datasource import localize
    from .loaders import load_episodes

    path = default_data_path() if data is None else localize(data)
    if path.is_dir() and (path / EPISODES_FILE).exists():
        check = check_built_directory(path)  # refuses damaged Parquet files now, not at the first reset
        return EpisodeStore(Sandbox.open(path, lookup_config), directory=path, check=check)
    episodes = load_episodes(path)
    if not episodes:
        raise DataFileError(path, f"no usable episodes ({episodes.report.summary()})")
    return EpisodeStore(Sandbox.from_episodes(episodes, lookup_config), episodes=list(episodes))
