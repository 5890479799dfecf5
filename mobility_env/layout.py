"""The format of a built directory: file names, Parquet schemas, ``manifest.json`` and its checks.

Layout of a built directory::

    DIR/episodes.parquet   one row per episode (EPISODES_SCHEMA), in load order
    DIR/sandbox.parquet    one row per recorded call (SANDBOX_SCHEMA); the entries of one
                           episode are contiguous: rows [sandbox_start, sandbox_stop)
    DIR/manifest.json      format version, counts, source, load report, ``files``: the size
                           and BLAKE2b-128 checksum of every other file, and the versions of
                           the derived files (``index_version``, ``observation_version``)
    DIR/sandbox.arrow, DIR/episodes.arrow, DIR/sandbox_index/
                           the same rows uncompressed for memory-mapping, and the replay index
                           (:mod:`mobility_env.mobilitybench.replay_index`); derived, optional, rebuilt from the
                           Parquet files by ``write_replay_index(DIR)``

This module is what every reader and writer of such a directory shares; it imports neither
the writer (:mod:`mobility_env.mobilitybench.build`, which also encodes and decodes the rows) nor the replay
index (:mod:`mobility_env.mobilitybench.replay_index`), which both import it.

Every file is checked against ``manifest.json`` before it is used
(:func:`check_built_directory`): a Parquet file that differs (size or checksum) or is missing
is refused with :class:`~mobility_env.errors.CorruptDataError`, since nothing can rebuild it;
a derived file that differs or is missing is not used (the replay index is then built in
memory from the verified Parquet files, with a :class:`DerivedFileWarning` saying how to write
it again). Directories written before checksums existed (``format_version`` 1) still open,
unverified, with an :class:`UnverifiedDataWarning`; ``mobility-env index DIR`` records the
checksums of their files as they are now.

Format versions: ``format_version`` is this layout's; the derived files carry their own,
``index_version`` (:data:`mobility_env.mobilitybench.index_format.INDEX_VERSION`) and
``observation_version`` (:data:`mobility_env.mobilitybench.observation.OBSERVATION_VERSION`, the compact
observations precomputed in ``sandbox.arrow``), written into the manifest and the index's
``meta.json``. A directory indexed by another observation version still opens: its
precomputed observations are not served, each is computed at its step (the same text a fresh
index would hold), and one :class:`FormatVersionWarning` names both versions and the command
that refreshes them (``mobility-env index DIR``).
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import pyarrow as pa
import pyarrow.parquet as pq

from .errors import CorruptDataError

FORMAT_VERSION = 2                 # 2: manifest.json records every file's size and checksum
EPISODES_FILE = "episodes.parquet"
SANDBOX_FILE = "sandbox.parquet"
MANIFEST_FILE = "manifest.json"
SOURCE_FILES = (EPISODES_FILE, SANDBOX_FILE)  # the contract; every other file is derived from them
CHECKSUM = "blake2b-128"
# the derived files (mobility_env.mobilitybench.index_build writes them; the manifest lists them)
ARROW_FILE = "sandbox.arrow"
EPISODES_ARROW_FILE = "episodes.arrow"
INDEX_DIR = "sandbox_index"

EPISODES_SCHEMA = pa.schema([
    ("episode_id", pa.string()),
    ("task_scenario", pa.string()),
    ("intent_family", pa.string()),
    ("query", pa.string()),
    ("context", pa.string()),          # JSON object
    ("gold_calls", pa.string()),       # JSON list of {"name", "arguments"}
    ("gold_slots", pa.string()),       # JSON object
    ("fields", pa.string()),           # JSON object: every other official column
    ("repairs", pa.string()),          # JSON list of {"column", "kind", "detail"}
    ("source", pa.string()),
    ("row", pa.int64()),
    ("sandbox_start", pa.int64()),
    ("sandbox_stop", pa.int64()),
])

SANDBOX_SCHEMA = pa.schema([
    ("episode_id", pa.string()),
    ("tool", pa.string()),
    ("arguments", pa.string()),        # JSON object, as recorded
    ("key", pa.string()),              # canonical exact-match key
    ("name", pa.string()),             # canonical name for fuzzy matching ('' if none)
    ("city", pa.string()),
    ("options", pa.string()),          # strategy / forecast options that must match exactly
    ("points", pa.string()),           # 'lng,lat;lng,lat' canonical points for nearest matching
    ("lng", pa.float64()),             # first point (NaN if none), indexed for the nearest stage
    ("lat", pa.float64()),
    ("response", pa.string()),         # JSON
    ("source_column", pa.string()),
    ("gold_index", pa.int32()),        # -1 for recorded alternatives
    ("truncated", pa.bool_()),
    ("valid", pa.bool_()),             # recorded arguments pass the tool schema
])


# --------------------------------------------------------------------------- manifest and checks
class UnverifiedDataWarning(UserWarning):
    """A built directory's manifest records no checksums (written before they existed)."""


class DerivedFileWarning(UserWarning):
    """A derived file (Arrow copy, index array) does not match the manifest and is not used."""


class FormatVersionWarning(UserWarning):
    """A built directory's derived data was written by another format version of this code.

    Issued once per directory and process; the message names the directory, the version it
    records, the version of this code and the command that rewrites it. What that data held
    is computed by this code instead, so results are those of a fresh build, only slower.
    """


_digest_cache: dict[tuple, str] = {}
_digest_lock = threading.Lock()
_CHUNK = 1 << 20
#: Where checksums verified by earlier processes are remembered (``$MOBILITY_ENV_CACHE_DIR``, else
#: ``$XDG_CACHE_HOME/mobility-env``, else ``~/.cache/mobility-env``); ``MOBILITY_ENV_CHECKSUM_CACHE=0`` turns it off.
CACHE_DIR_VAR = "MOBILITY_ENV_CACHE_DIR"
CHECKSUM_CACHE_VAR = "MOBILITY_ENV_CHECKSUM_CACHE"
_CHECKSUM_CACHE_FILE = "checksums.json"
_CHECKSUM_CACHE_ENTRIES = 4096
_persistent: dict[str, str] | None = None


def cache_dir() -> Path:
    """This user's cache folder of the project (``$MOBILITY_ENV_CACHE_DIR``, else ``$XDG_CACHE_HOME/mobility-env``,
    else ``~/.cache/mobility-env``): remembered checksums, ``models check`` verdicts."""
    base = os.environ.get(CACHE_DIR_VAR)
    if not base:
        xdg = os.environ.get("XDG_CACHE_HOME")
        base = str(Path(xdg) / "mobility-env") if xdg else str(Path.home() / ".cache" / "mobility-env")
    return Path(base)


def _cache_file() -> Path | None:
    if os.environ.get(CHECKSUM_CACHE_VAR, "1").strip().lower() in ("0", "false", "no", "off"):
        return None
    return cache_dir() / _CHECKSUM_CACHE_FILE


def _persistent_cache() -> dict[str, str]:
    """The checksums other processes computed, keyed by the file's full stat identity (read once per process)."""
    global _persistent
    if _persistent is None:
        path = _cache_file()
        loaded: dict[str, str] = {}
        if path is not None:
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
                if isinstance(data, dict):
                    loaded = {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)}
            except (OSError, ValueError):
                pass  # no cache yet, or a damaged one: hash, and write a fresh one
        _persistent = loaded
    return _persistent


_dirty = False


def _remember(key: str, value: str) -> None:
    """Add a checksum to the cross-process cache (written by :func:`flush_checksum_cache`); call under the lock."""
    global _dirty
    if _cache_file() is None:
        return
    cache = _persistent_cache()
    cache[key] = value
    if len(cache) > _CHECKSUM_CACHE_ENTRIES:
        for old in list(cache)[: len(cache) - _CHECKSUM_CACHE_ENTRIES]:
            del cache[old]
    _dirty = True


def flush_checksum_cache() -> None:
    """Write the checksums this process computed to the cache file, once (best effort: a read-only
    home only costs the next process a re-hash)."""
    global _dirty
    path = _cache_file()
    with _digest_lock:
        if not _dirty or path is None:
            return
        text = json.dumps(_persistent_cache())
        _dirty = False
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, path)  # atomic: a concurrent reader sees the old or the new file
    except OSError:
        pass


def file_checksum(path: str | os.PathLike) -> str:
    """BLAKE2b-128 of a file's bytes (hex), remembered while the file is unchanged.

    "Unchanged" is the same device, inode, size, modification and change time: rewriting a
    file, even keeping its size and mtime, changes its ctime (which no user tool can set back)
    and so is hashed again. Remembered per process, and across processes in a small cache file
    (:data:`CACHE_DIR_VAR`, :data:`CHECKSUM_CACHE_VAR`), so that opening a large directory hashes
    its files once per machine instead of once per process (1.8 GB for 100k episodes: ~1.8 s).
    """
    path = Path(path)
    st = path.stat()
    key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)  # the file itself, under any name
    with _digest_lock:
        cached = _digest_cache.get(key)
        if cached is None:
            cached = _persistent_cache().get(_stat_key(path, key))
            if cached is not None:
                _digest_cache[key] = cached
    if cached is not None:
        return cached
    digest = hashlib.blake2b(digest_size=16)
    buffer = bytearray(_CHUNK)
    view = memoryview(buffer)
    with open(path, "rb") as handle:
        while True:
            n = handle.readinto(buffer)
            if not n:
                break
            digest.update(view[:n])  # hashlib releases the GIL: files hash in parallel threads
    value = digest.hexdigest()
    if path.stat().st_ctime_ns != key[-1]:  # changed while it was read: do not remember a torn read
        return value
    with _digest_lock:
        if len(_digest_cache) > 4096:
            _digest_cache.clear()
        _digest_cache[key] = value
        _remember(_stat_key(path, key), value)
    return value


def _stat_key(path: Path, key: tuple) -> str:
    return f"{path.resolve()}|" + "|".join(map(str, key))


def file_entry(path: Path) -> dict[str, Any]:
    return {"bytes": path.stat().st_size, CHECKSUM: file_checksum(path)}


def read_manifest(directory: str | os.PathLike) -> dict[str, Any] | None:
    """The manifest of a built directory; None when it has none. A damaged one is refused."""
    path = Path(directory) / MANIFEST_FILE
    try:
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise CorruptDataError(path,
                               f"cannot read the manifest ({exc}); {_MANIFEST_FIX.format(dir=directory)}") from exc
    try:
        manifest = json.loads(text)
    except ValueError as exc:
        raise CorruptDataError(path, f"not JSON ({exc}); {_MANIFEST_FIX.format(dir=directory)}") from exc
    if not isinstance(manifest, dict):
        raise CorruptDataError(path, f"not a JSON object; {_MANIFEST_FIX.format(dir=directory)}")
    return manifest


_MANIFEST_FIX = ("rebuild the directory with `mobility-env build SRC --out {dir}`, or, if you trust its Parquet files, "
                 "delete manifest.json and run `mobility-env index {dir}` to record them as they are")


def write_manifest(directory: str | os.PathLike, manifest: dict[str, Any]) -> Path:
    """Write ``manifest.json`` atomically (temporary name, then rename)."""
    path = Path(directory) / MANIFEST_FILE
    tmp = path.with_name(MANIFEST_FILE + ".tmp")
    tmp.write_text(json.dumps(manifest, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path


def _entry_problem(directory: Path, name: str, entry: Any) -> str | None:
    """What is wrong with one listed file (``missing``, sizes, checksums), or None when it matches."""
    if (not isinstance(entry, dict) or not isinstance(entry.get("bytes"), int)
            or not isinstance(entry.get(CHECKSUM), str)):
        return f"the manifest entry is malformed ({entry!r:.80})"
    path = directory / name
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return "missing"
    except OSError as exc:
        return f"cannot read ({exc})"
    if size != entry["bytes"]:
        return f"{size:,} bytes, the manifest says {entry['bytes']:,}"
    try:
        checksum = file_checksum(path)
    except OSError as exc:
        return f"cannot read ({exc})"
    if checksum != entry[CHECKSUM]:
        return f"content changed (checksum {checksum[:12]}…, the manifest says {entry[CHECKSUM][:12]}…)"
    return None


@dataclass
class DirectoryCheck:
    """What :func:`check_built_directory` found. ``verified`` is False for old manifests."""

    directory: Path
    verified: bool
    derived: dict[str, str | None] = field(default_factory=dict)  # derived file -> problem (None: matches)

    def derived_ok(self, names: Iterable[str] | None = None) -> bool:
        """Do these derived files (default: all listed) match the manifest?"""
        if not self.verified:
            return True
        chosen = self.derived.keys() if names is None else names
        return all(name in self.derived and self.derived[name] is None for name in chosen)

    def derived_problems(self, names: Iterable[str] | None = None) -> list[str]:
        """``"file: what is wrong"`` for each of these derived files that does not match."""
        chosen = list(self.derived) if names is None else list(names)
        return [f"{name}: {self.derived.get(name) or 'not listed in the manifest'}" for name in chosen
                if self.derived.get(name) is not None or name not in self.derived]


_warned: set[tuple[str, str]] = set()


def warn_once(directory: Path, category: type[Warning], message: str) -> None:
    """Warn about a directory once per process (every worker opening it would repeat it)."""
    key = (str(directory.resolve()), message)
    if key not in _warned:
        _warned.add(key)
        warnings.warn(message, category, stacklevel=4)


def check_built_directory(directory: str | os.PathLike) -> DirectoryCheck:
    """Check every file of a built directory against ``manifest.json``.

    Raises :class:`CorruptDataError` (naming the file and what differs) when a Parquet file
    is missing, resized or changed, or the manifest is damaged. Derived files are checked too
    and reported in the result; callers do not use the ones that differ. A manifest without
    checksums (``format_version`` 1, or none at all) gives ``verified=False`` and one
    :class:`UnverifiedDataWarning` per directory and process.

    Cost: one read of every file the first time in a process (BLAKE2b, about 1 GB/s; 5 ms
    for the bundled 4.6 MB set), then a ``stat`` per file while the files stay unchanged.
    """
    directory = Path(directory)
    manifest = read_manifest(directory)
    files = manifest.get("files") if manifest is not None else None
    if not isinstance(files, dict):
        why = (f"has no {MANIFEST_FILE} (deleted, or never written)" if manifest is None else
               f"{MANIFEST_FILE} records no checksums (written by an older mobility-env)")
        warn_once(directory, UnverifiedDataWarning,
                  f"{directory}: {why}; its files are used unverified. "
                  f"Run `mobility-env index {directory}` once to check them from now on.")
        return DirectoryCheck(directory, verified=False)
    for name in SOURCE_FILES:
        if name not in files:
            raise CorruptDataError(directory / MANIFEST_FILE, f"lists no {name}; rebuild the directory with "
                                                              f"`mobility-env build SRC --out {directory}`")
    names = sorted(files)
    problems = _check_entries(directory, names, files)
    flush_checksum_cache()
    for name in SOURCE_FILES:
        if problems[name] is not None:
            raise CorruptDataError(directory / name, f"does not match {MANIFEST_FILE}: {problems[name]}. It cannot be "
                                                     f"rebuilt from this directory: restore it or rebuild with "
                                                     f"`mobility-env build SRC --out {directory}`")
    return DirectoryCheck(directory, verified=True,
                          derived={name: problems[name] for name in names if name not in SOURCE_FILES})


def _check_entries(directory: Path, names: list[str], files: dict[str, Any]) -> dict[str, str | None]:
    for name in names:
        if not isinstance(name, str) or Path(name).is_absolute() or ".." in Path(name).parts:
            raise CorruptDataError(directory / MANIFEST_FILE, f"lists a file outside the directory: {name!r:.80}")
    big = sum(e.get("bytes", 0) for e in files.values() if isinstance(e, dict) and isinstance(e.get("bytes"), int))
    if big < (64 << 20) or len(names) < 2:
        return {name: _entry_problem(directory, name, files[name]) for name in names}
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=min(4, os.cpu_count() or 1)) as pool:
        results = pool.map(lambda name: _entry_problem(directory, name, files[name]), names)
        return dict(zip(names, results))


def record_files(directory: str | os.PathLike, *, accept_changed_parquet: bool = False,
                 versions: dict[str, int | str] | None = None) -> dict[str, Any]:
    """Record the size and checksum of every file of a built directory in its manifest.

    The Parquet files are checked first when the manifest already lists them: a changed one
    is refused (:class:`CorruptDataError`) unless ``accept_changed_parquet`` (you changed it
    on purpose). A directory without a manifest gets a minimal one. ``versions`` (e.g.
    ``{"index_version": 1, "observation_version": 1}``) are written into the manifest with the
    files they describe. Returns the manifest.
    """
    directory = Path(directory)
    manifest = read_manifest(directory)
    if manifest is None:
        manifest = {"format_version": FORMAT_VERSION, "source": "", "load_report": {}}
        try:
            manifest["episodes"] = pq.ParquetFile(directory / EPISODES_FILE).metadata.num_rows
            manifest["sandbox_entries"] = pq.ParquetFile(directory / SANDBOX_FILE).metadata.num_rows
        except (OSError, ValueError) as exc:
            raise CorruptDataError(directory, f"not a readable built directory ({exc})") from exc
    files = manifest.get("files")
    if isinstance(files, dict) and not accept_changed_parquet:
        for name in SOURCE_FILES:
            problem = _entry_problem(directory, name, files.get(name))
            if problem is not None:
                raise CorruptDataError(directory / name,
                                       f"does not match {MANIFEST_FILE}: {problem}; the derived files "
                                       f"are not rewritten from it (rebuild the directory with "
                                       f"`mobility-env build SRC --out {directory}`)")
    listed: dict[str, Any] = {}
    for path in sorted(_directory_files(directory)):
        listed[path.relative_to(directory).as_posix()] = file_entry(path)
    for name in SOURCE_FILES:
        if name not in listed:
            raise CorruptDataError(directory / name, "missing; rebuild with `mobility-env build SRC --out DIR`")
    manifest = {key: value for key, value in manifest.items() if key not in ("checksum", "files")}
    manifest.update({"format_version": FORMAT_VERSION, **(versions or {}), "checksum": CHECKSUM, "files": listed})
    write_manifest(directory, manifest)
    flush_checksum_cache()
    return manifest


def derived_paths(directory: str | os.PathLike) -> list[Path]:
    """The derived files present in a built directory (what ``manifest.json`` lists besides the Parquet files)."""
    directory = Path(directory)
    paths = [directory / ARROW_FILE, directory / EPISODES_ARROW_FILE]
    index_dir = directory / INDEX_DIR
    if index_dir.is_dir():
        paths += sorted(p for p in index_dir.iterdir() if p.is_file() and p.suffix in (".npy", ".json", ".arrow"))
    return [p for p in paths if p.is_file()]


def _directory_files(directory: Path) -> list[Path]:
    """The files a built directory consists of: the Parquet files and the replay index."""
    return [p for p in [directory / EPISODES_FILE, directory / SANDBOX_FILE, *derived_paths(directory)] if p.is_file()]
