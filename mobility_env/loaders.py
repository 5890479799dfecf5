"""``load_episodes(path)``: official CSV / XLSX / JSONL, our Parquet, or a built directory.

Bad rows are never dropped silently: each one is listed in the :class:`LoadReport` with file,
row and column (rows are numbered from 1 over data rows, the header not counted: row N of a
CSV is its line N + 1, row N of a JSONL its line N) (``strict=True`` raises the first one instead). Repairs (truncated cells cut
back to their last complete path or transit) are counted in the report and recorded on the
episode itself.

Example::

    >>> eps = load_episodes("../shared/mobilitybench/sample_dev.csv")   # doctest: +SKIP
    >>> print(eps.report.summary())                                      # doctest: +SKIP
    81 loaded (8 repaired), 0 rejected from sample_dev.csv
"""

from __future__ import annotations

import csv
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator

import pyarrow.parquet as pq

from .build import EPISODES_FILE, EPISODES_SCHEMA, SANDBOX_FILE, episode_from_record
from .episode import Episode, RecordedCall, Repair
from .errors import DataFileError, RowError
from .official import CORE_COLUMNS, episode_from_row

SUPPORTED_SUFFIXES = (".csv", ".xlsx", ".jsonl", ".parquet")


@dataclass
class Rejection:
    file: str
    row: int | None
    column: str | None
    reason: str

    def __str__(self) -> str:
        where = f"{self.file}, row {self.row}" + (f", column {self.column!r}" if self.column else "")
        return f"{where}: {self.reason}"


@dataclass
class LoadReport:
    """What happened to every row of a load."""

    path: str
    loaded: int = 0
    repaired: int = 0
    rejected: list[Rejection] = field(default_factory=list)
    repairs_by_kind: dict[str, int] = field(default_factory=dict)

    def add_episode(self, episode: Episode) -> None:
        self.loaded += 1
        if any(r.kind == "truncated" for r in episode.repairs):
            self.repaired += 1
        for repair in episode.repairs:
            self.repairs_by_kind[repair.kind] = self.repairs_by_kind.get(repair.kind, 0) + 1

    def summary(self) -> str:
        text = f"{self.loaded} loaded ({self.repaired} repaired), {len(self.rejected)} rejected from {Path(self.path).name}"
        if self.repairs_by_kind:
            text += "; notes: " + ", ".join(f"{k}={v}" for k, v in sorted(self.repairs_by_kind.items()))
        return text

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "loaded": self.loaded, "repaired": self.repaired,
                "repairs_by_kind": dict(self.repairs_by_kind),
                "rejected": [vars(r) for r in self.rejected]}


class EpisodeList(list):
    """A plain list of episodes with the load report attached as ``.report``."""

    report: LoadReport


def _read_csv(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    csv.field_size_limit(2**31 - 1)
    with path.open(encoding="utf-8-sig", newline="") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in CORE_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise DataFileError(path, f"not an official MobilityBench CSV: missing column(s) {', '.join(missing)}; "
                                      f"header is {reader.fieldnames!r:.200}")
        for index, row in enumerate(reader):
            yield index, row


def _read_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    with path.open(encoding="utf-8") as handle:
        for index, line in enumerate(handle):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                yield index, RowError(path, f"invalid JSON: {exc}", row=index + 1)
                continue
            if not isinstance(row, dict):
                yield index, RowError(path, "a line must be a JSON object of official columns", row=index + 1)
                continue
            yield index, row


def _read_xlsx(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        import openpyxl
    except ImportError as exc:
        raise DataFileError(path, "reading .xlsx needs openpyxl: pip install 'mobility-env[xlsx]'") from exc
    workbook = openpyxl.load_workbook(path, read_only=True, data_only=True)
    try:
        rows = workbook.worksheets[0].iter_rows(values_only=True)
        header = [str(c) if c is not None else "" for c in next(rows, [])]
        missing = [c for c in CORE_COLUMNS if c not in header]
        if missing:
            raise DataFileError(path, f"not an official MobilityBench sheet: missing column(s) {', '.join(missing)}")
        for index, values in enumerate(rows):
            yield index, {name: ("" if value is None else value) for name, value in zip(header, values) if name}
    finally:
        workbook.close()


def _rows_to_episodes(path: Path, rows: Iterable[tuple[int, Any]], strict: bool) -> EpisodeList:
    episodes = EpisodeList()
    report = LoadReport(str(path))
    seen: dict[str, int] = {}
    for index, row in rows:
        try:
            if isinstance(row, RowError):
                raise row
            episode = episode_from_row(row, source=str(path), row_number=index + 1)
        except RowError as exc:
            if strict:
                raise
            report.rejected.append(Rejection(str(path), exc.row, exc.column, str(exc).split(": ", 1)[-1]))
            continue
        if episode.episode_id in seen:  # identical rows: keep both, ids stay stable by order
            seen[episode.episode_id] += 1
            new_id = f"{episode.episode_id}-{seen[episode.episode_id]}"
            episode.repairs.append(Repair(column="", kind="duplicate_row", detail=f"same content as an earlier row; id {new_id}"))
            episode.episode_id = new_id
        else:
            seen[episode.episode_id] = 1
        report.add_episode(episode)
        episodes.append(episode)
    episodes.report = report
    return episodes


def episodes_from_parquet(path: Path, *, with_responses: bool = True) -> EpisodeList:
    """Episodes of a built directory (or its episodes.parquet), responses joined back in."""
    directory = path if path.is_dir() else path.parent
    episodes_path = directory / EPISODES_FILE if path.is_dir() else path
    try:
        table = pq.read_table(episodes_path)
    except (OSError, ValueError) as exc:
        raise DataFileError(episodes_path, f"cannot read Parquet: {exc}") from exc
    missing = [n for n in EPISODES_SCHEMA.names if n not in table.column_names]
    if missing:
        raise DataFileError(episodes_path, f"not a mobility-env episodes file: missing column(s) {', '.join(missing)}")
    recorded_by_row: list[list[RecordedCall]] | None = None
    if with_responses:
        sandbox_path = directory / SANDBOX_FILE
        if not sandbox_path.exists():
            raise DataFileError(sandbox_path, "missing: an episodes.parquet needs its sandbox.parquet beside it "
                                              "(rebuild with `mobility-env build SRC --out DIR`)")
        try:
            sandbox = pq.read_table(sandbox_path, columns=["tool", "arguments", "response", "source_column",
                                                           "gold_index", "truncated"]).to_pylist()
        except (OSError, ValueError) as exc:  # ArrowInvalid is a ValueError
            raise DataFileError(sandbox_path, f"cannot read Parquet: {exc} (rebuild with `mobility-env build SRC --out DIR`)") from exc
        recorded_by_row = []
        for start, stop in zip(table.column("sandbox_start").to_pylist(), table.column("sandbox_stop").to_pylist()):
            recorded_by_row.append([RecordedCall(
                name=e["tool"], arguments=json.loads(e["arguments"]), response=json.loads(e["response"]),
                source_column=e["source_column"], gold_index=None if e["gold_index"] < 0 else e["gold_index"],
                truncated=e["truncated"]) for e in sandbox[start:stop]])
    episodes = EpisodeList()
    report = LoadReport(str(episodes_path))
    for i, rec in enumerate(table.to_pylist()):
        episode = episode_from_record(rec, recorded_by_row[i] if recorded_by_row is not None else [])
        report.add_episode(episode)
        episodes.append(episode)
    episodes.report = report
    return episodes


def load_episodes(path: str | os.PathLike, *, strict: bool = False) -> EpisodeList:
    """Load episodes from an official CSV/XLSX/JSONL file, our Parquet, or a built directory.

    Returns a list of :class:`Episode` with ``.report`` (a :class:`LoadReport`). Rows that
    cannot be used are listed in ``report.rejected`` (file, row, column, reason); with
    ``strict=True`` the first one raises :class:`RowError` instead. A missing or unsupported
    file raises :class:`DataFileError`.
    """
    path = Path(path)
    if not path.exists():
        raise DataFileError(path, "no such file or directory")
    if path.is_dir():
        if not (path / EPISODES_FILE).exists():
            raise DataFileError(path, f"not a built directory: no {EPISODES_FILE} (build one with `mobility-env build SRC --out DIR`)")
        return episodes_from_parquet(path)
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        return episodes_from_parquet(path)
    readers = {".csv": _read_csv, ".jsonl": _read_jsonl, ".xlsx": _read_xlsx}
    if suffix not in readers:
        raise DataFileError(path, f"unsupported file type {suffix!r}; expected one of {', '.join(SUPPORTED_SUFFIXES)} or a built directory")
    return _rows_to_episodes(path, readers[suffix](path), strict)
