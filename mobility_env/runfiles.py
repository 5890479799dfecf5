"""The files of a run directory, shared by the writer (``mobility_agents.runner``) and the readers
(``mobility-env eval/report/export``).

``results.jsonl`` and ``trajectories.jsonl`` are append-only: one JSON line per finished
(episode_id, sample_index), the trajectory line written before its result line. A line cut by
a crash can only be the last one; readers drop it, and ``repair_tail`` (called on every
``--resume``) removes it from each append-only file so the next line starts clean. A key may
appear more than once only when a failed episode was re-run (``mobility-env run --resume
--retry-failed``): the **last** line wins.

Every line is written by :func:`json_line`, which never fails on text a model produced: a
lone surrogate (a cut emoji such as ``"\\ud83d"``) is kept as a JSON ``\\uXXXX`` escape, so it
reads back unchanged; values JSON cannot hold are written as their ``repr``. Whole files
(``run.json``, ``scorecard.json``, ``eval_results.jsonl``, reports) are replaced atomically by
:func:`write_text_atomic`: a crash leaves the old file or the new one, never half of one.

``run.lock`` holds an exclusive ``fcntl.flock`` while a run writes (:class:`RunLock`); a
second run on the same directory fails fast naming the holder's pid. The kernel drops the
lock when the holder dies, however it dies; a run that ends removes the file.

A results line carries ``verdict`` (``mobility_rewards.verdict.Verdict.to_dict()``) since verdicts
were introduced; lines of older runs lack it (or hold ``null`` for a worker error) and read
the same: readers treat a missing verdict as "not recorded", never as a failure.
``mobility-env eval`` writes its recomputed lines to ``eval_results.jsonl`` (same format)
and never rewrites ``results.jsonl``. ``run.json`` records what the run was (agent, model,
data path and fingerprint, load report, seed, env options, and the ``observation_version``,
``reward_version`` and ``verdict_version`` of the code that made it, at the top level and in
its ``identity``) and each session that wrote to it. Readers meet runs from before versions
were recorded: a missing version means "not recorded", never "the current one".
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import tempfile
import time
from pathlib import Path
from typing import IO, Any, Iterator

from .errors import ConfigError, DataFileError
from .layout import file_checksum

try:  # POSIX; elsewhere a run directory is not locked
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

RESULTS_FILE = "results.jsonl"
TRAJECTORIES_FILE = "trajectories.jsonl"
RUN_FILE = "run.json"
EVAL_RESULTS_FILE = "eval_results.jsonl"
LOCK_FILE = "run.lock"
APPEND_ONLY_FILES = (TRAJECTORIES_FILE, RESULTS_FILE)

_SURROGATE = re.compile("[\ud800-\udfff]")


class RunLockedError(ConfigError):
    """Another live process holds the run directory's lock."""

    def __init__(self, out_dir: Path, holder: dict[str, Any]):
        self.out_dir = str(out_dir)
        self.holder = holder
        pid = holder.get("pid", "unknown")
        since = f" since {holder['started']}" if holder.get("started") else ""
        host = f" on {holder['host']}" if holder.get("host") else ""
        super().__init__(f"{out_dir} is in use by another run (pid {pid}{host}{since}); wait for it to finish, "
                         "stop it, or choose another --out")


# --------------------------------------------------------------------------- writing text safely
def clean_text(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (for Arrow, Markdown, terminals)."""
    return _SURROGATE.sub("\ufffd", text)


def clean_strings(value: Any) -> Any:
    """``value`` with :func:`clean_text` applied to every string inside it (keys included)."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        return {clean_strings(k) if isinstance(k, str) else k: clean_strings(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean_strings(v) for v in value]
    return value


def _jsonable(value: Any, seen: set[int] | None = None) -> Any:
    """A copy of ``value`` that ``json.dumps`` accepts: str keys, repr for foreign objects, no cycles."""
    seen = set() if seen is None else seen
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, (dict, list, tuple, set, frozenset)):
        if id(value) in seen:
            return "<cycle>"
        seen = seen | {id(value)}
        if isinstance(value, dict):
            return {k if isinstance(k, str) else repr(k): _jsonable(v, seen) for k, v in value.items()}
        return [_jsonable(v, seen) for v in value]
    made = _default(value)
    return made if isinstance(made, str) else _jsonable(made, seen)


def _default(value: Any) -> Any:
    """What ``json.dumps`` cannot write: a record object handed out by reference (a terminal info's ``trajectory``)
    as its data (:func:`~mobility_env.trajectory.as_record`), anything else as its ``repr``."""
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        try:
            return to_dict()
        except Exception:  # noqa: BLE001  (json_text never raises: a record that cannot be made data is its repr)
            pass
    return repr(value)


def _dumps(value: Any, escape: bool, indent: int | None) -> str:
    try:
        return json.dumps(value, ensure_ascii=escape, default=_default, indent=indent)
    except (TypeError, ValueError, RecursionError):  # non-str keys, cycles, absurd nesting
        try:
            return json.dumps(_jsonable(value), ensure_ascii=escape, indent=indent)
        except RecursionError:
            return json.dumps(repr(value)[:100_000], ensure_ascii=escape)


def json_text(value: Any, *, indent: int | None = None) -> str:
    """JSON of ``value`` that always encodes to UTF-8 (see module docstring); never raises."""
    text = _dumps(value, False, indent)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: \uXXXX escapes read back as the same string
        text = _dumps(value, True, indent)
    return text


def json_line(record: Any) -> str:
    """One JSONL line (with its newline) for ``record``; see :func:`json_text`."""
    return json_text(record) + "\n"


def write_text_atomic(path: Path, text: str) -> Path:
    """Replace ``path`` with ``text`` (UTF-8, lone surrogates replaced) in one rename."""
    path = Path(path)
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o644  # a temp file would be 0600
    handle = tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=path.parent, prefix=f".{path.name}.",
                                         suffix=".tmp", delete=False)
    try:
        with handle:
            handle.write(clean_text(text))
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(handle.name, mode)
        os.replace(handle.name, path)
    except BaseException:
        Path(handle.name).unlink(missing_ok=True)
        raise
    return path


# --------------------------------------------------------------------------- reading and repairing
def count_lines(path: Path) -> int:
    """Complete lines of ``path`` (0 when it does not exist)."""
    path = Path(path)
    if not path.exists():
        return 0
    count = 0
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            count += block.count(b"\n")
    return count


def _last_line_start(handle: Any, end: int) -> int:
    """Offset where the line ending at ``end`` (exclusive, after its newline) starts."""
    stop = end - 1  # skip that line's own newline
    while stop > 0:
        start = max(0, stop - 65536)
        handle.seek(start)
        newline = handle.read(stop - start).rfind(b"\n")
        if newline >= 0:
            return start + newline + 1
        stop = start
    return 0


def repair_tail(path: Path) -> int:
    """Cut the bytes after the last newline of ``path`` (a line cut by a crash); return how many."""
    path = Path(path)
    if not path.exists():
        return 0
    with path.open("r+b") as handle:
        size = handle.seek(0, os.SEEK_END)
        keep = _last_line_start(handle, size + 1)
        if keep != size:
            handle.truncate(keep)
        return size - keep


def drop_last_line(path: Path) -> None:
    """Remove the last complete line of ``path`` (whose tail is already repaired)."""
    with Path(path).open("r+b") as handle:
        size = handle.seek(0, os.SEEK_END)
        if size:
            handle.truncate(_last_line_start(handle, size))


def read_jsonl(path: Path, *, repair: bool = False) -> list[dict[str, Any]]:
    """Every complete line of ``path`` (missing file = no lines); a bad line elsewhere raises.

    Each line must be a JSON object; a cut last line is dropped (and removed with ``repair``).
    """
    path = Path(path)
    records, good_bytes = [], 0
    for offset, length, record in _scan_jsonl(path):
        good_bytes = offset + length
        if record is not None:
            records.append(record)
    if repair and path.exists() and good_bytes != path.stat().st_size:
        with path.open("r+b") as handle:
            handle.truncate(good_bytes)
    return records


def iter_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(byte offset, record)`` of every complete line of ``path``, as :func:`read_jsonl` reads them, one at a time
    (a run's trajectories need not fit in memory)."""
    for offset, _, record in _scan_jsonl(Path(path)):
        if record is not None:
            yield offset, record


def _decode_line(raw: bytes | str) -> Any:
    """A JSON text's value; ``ValueError`` for one that is not JSON or is nested deeper than the parser goes."""
    try:
        return json.loads(raw)
    except RecursionError:
        raise ValueError("nested too deeply") from None


def _scan_jsonl(path: Path) -> Iterator[tuple[int, int, dict[str, Any] | None]]:
    """``(offset, length, record)`` of each complete line (``record`` None for a blank one); stops at a last line
    cut by a crash; raises ``DataFileError`` (naming the line) for a complete line that is not a JSON object."""
    if not path.exists():
        return
    if path.is_dir():
        raise DataFileError(path, "is a directory, expected a JSON-lines file")
    offset = 0
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, 1):
            complete = raw.endswith(b"\n")
            try:
                record = _decode_line(raw) if raw.strip() else None
            except ValueError as exc:  # JSONDecodeError, bytes that are not UTF-8, or too deep
                if complete:
                    reason = exc.msg if isinstance(exc, json.JSONDecodeError) else \
                        "not UTF-8" if isinstance(exc, UnicodeDecodeError) else str(exc)
                    raise DataFileError(path, f"not JSON ({reason}); fix or remove the line", row=number) from None
                return  # the last line was cut by a crash
            if not complete:
                return
            if record is not None and not isinstance(record, dict):
                raise DataFileError(path, f"a line must be a JSON object, got {type(record).__name__}; "
                                          "fix or remove the line", row=number)
            yield offset, len(raw), record
            offset += len(raw)


def read_jsonl_line(path: Path, offset: int, handle: IO[bytes] | None = None) -> dict[str, Any]:
    """The JSON object of the line at byte ``offset`` of ``path`` (one :func:`iter_jsonl` gave), read through
    ``handle`` when given (an open binary file of ``path``). Raises ``DataFileError`` when it is no longer one (the
    file was rewritten since, e.g. repaired by a resume)."""
    try:
        if handle is None:
            with Path(path).open("rb") as own:
                own.seek(offset)
                raw = own.readline()
        else:
            handle.seek(offset)
            raw = handle.readline()
        record = _decode_line(raw)
    except (OSError, ValueError) as exc:
        raise DataFileError(path, f"the line at byte {offset:,} is no longer a complete JSON object ({exc}); the "
                                  "file changed while it was read: read it again") from None
    if not isinstance(record, dict) or not raw.endswith(b"\n"):
        raise DataFileError(path, f"the line at byte {offset:,} is no longer a complete JSON object; the file "
                                  "changed while it was read: read it again")
    return record


def record_key(record: dict[str, Any]) -> tuple[str, int]:
    return record["episode_id"], int(record.get("sample_index", 0))


def latest_by_key(records: list[dict[str, Any]], path: Path | None = None) -> list[dict[str, Any]]:
    """One record per (episode_id, sample_index): the last one, in first-seen order."""
    latest: dict[tuple[str, int], dict[str, Any]] = {}
    for number, record in enumerate(records, 1):
        try:
            key = record_key(record)
        except (KeyError, TypeError, ValueError) as exc:
            raise DataFileError(path or "<records>", "a result needs an episode_id and an integer sample_index",
                                row=number) from exc
        latest[key] = record  # a dict keeps a key's first position
    return list(latest.values())


def read_results(path: Path, *, repair: bool = False) -> list[dict[str, Any]]:
    """The results of a run: ``read_jsonl`` then ``latest_by_key``."""
    return latest_by_key(read_jsonl(path, repair=repair), path)


def read_json_file(path: Path) -> Any:
    """A whole JSON file, or None when it does not exist; a corrupt one raises DataFileError."""
    path = Path(path)
    if not path.exists():
        return None
    try:
        return _decode_line(path.read_bytes())
    except ValueError as exc:
        raise DataFileError(path, f"not valid JSON ({exc}); restore or delete the file") from exc


def read_run_info(run_dir: Path) -> dict[str, Any] | None:
    """``run.json`` of ``run_dir`` (None for a run written before it existed)."""
    info = read_json_file(Path(run_dir) / RUN_FILE)
    if info is not None and not isinstance(info, dict):
        raise DataFileError(Path(run_dir) / RUN_FILE, "must be a JSON object")
    return info


def existing_run_dir(run_dir: str | os.PathLike) -> Path:
    """``run_dir`` as a Path, or a typed error saying why it is not a run directory."""
    path = Path(run_dir)
    if not path.exists():
        raise ConfigError(f"{path}: no such run directory")
    if not path.is_dir():
        raise ConfigError(f"{path}: not a directory (pass the run directory, not a file in it)")
    if not (path / RESULTS_FILE).exists():
        raise ConfigError(f"{path}: no {RESULTS_FILE} here; is this the --out directory of a `mobility-env run`?")
    return path


# --------------------------------------------------------------------------- data identity
def data_fingerprint(path: Path) -> str:
    """``blake2b:...`` of a data file, of a built directory's ``episodes.parquet`` (its gold) or of a
    MobilePA task directory's ``tasks.jsonl``: :func:`mobility_env.layout.file_checksum`, the digest
    the manifest records, so a directory just opened (and checked) is not hashed again."""
    path = Path(path)
    target = path
    if path.is_dir():
        target = path / "tasks.jsonl" if (path / "tasks.jsonl").exists() else path / "episodes.parquet"
    return "blake2b:" + file_checksum(target)


# --------------------------------------------------------------------------- the lock
class RunLock:
    """Exclusive lock of a run directory for the life of one run (see module docstring).

    >>> with RunLock(out_dir):                                           # doctest: +SKIP
    ...     ...  # write results
    """

    def __init__(self, out_dir: Path):
        self.out_dir = Path(out_dir)
        self.path = self.out_dir / LOCK_FILE
        self._handle: IO[str] | None = None

    def acquire(self) -> "RunLock":
        if fcntl is None or self._handle is not None:
            return self
        self.out_dir.mkdir(parents=True, exist_ok=True)
        while True:
            handle = self.path.open("a+", encoding="utf-8")
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                handle.seek(0)
                text = handle.read()
                handle.close()
                try:
                    holder = _decode_line(text) if text.strip() else {}
                except ValueError:
                    holder = {}
                raise RunLockedError(self.out_dir, holder if isinstance(holder, dict) else {}) from None
            try:  # the file we locked must still be the one at the path (a holder may remove it)
                if os.stat(self.path).st_ino == os.fstat(handle.fileno()).st_ino:
                    break
            except FileNotFoundError:
                pass
            handle.close()
        handle.seek(0)
        handle.truncate()
        handle.write(json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                                 "started": time.strftime("%Y-%m-%dT%H:%M:%S")}) + "\n")
        handle.flush()
        self._handle = handle
        return self

    def release(self) -> None:
        """Remove the lock file while still holding it (a process that opened it meanwhile finds it gone and
        retries, see :meth:`acquire`), then unlock: a finished run leaves no ``run.lock`` behind."""
        if self._handle is not None:
            handle, self._handle = self._handle, None
            with contextlib.suppress(OSError):
                self.path.unlink()
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
            handle.close()

    def __enter__(self) -> "RunLock":
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()
