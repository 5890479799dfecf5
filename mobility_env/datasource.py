"""Where a run's data comes from: a local path, a ``file://`` URI, or object storage (``s3://...``).

:func:`localize` turns what ``--data`` (or ``data=``) names into a local path the stores open as before:

* a local path, or a ``file://`` URI: that path itself (memory-mapped as always, nothing copied);
* any other URI :func:`pyarrow.fs.FileSystem.from_uri` understands (``s3://bucket/prefix``, ``gs://...``,
  ``hdfs://...``): the files under it (or the one file it names) are copied with streaming reads into this node's
  cache, and the local copy is returned, so the Arrow files are memory-mapped from local disk and every check of a
  built directory (``manifest.json`` sizes and checksums, format versions) runs on the copy.

S3 settings are pyarrow's: in the URI (``s3://KEY:SECRET@bucket/prefix?endpoint_override=http://host:9000&
scheme=http&region=eu-west-1``) or from the environment as the AWS SDK reads it (``AWS_ACCESS_KEY_ID``,
``AWS_SECRET_ACCESS_KEY``, ``AWS_PROFILE``, ``AWS_ENDPOINT_URL``, ``AWS_DEFAULT_REGION``); prefer the environment,
since the URI is recorded in ``run.json``. pyarrow's S3 client bounds connect and request times and retries
(three attempts), so an unreachable endpoint fails in seconds, not minutes.

The cache (per node; ``cache_dir=`` or ``$MOBILITY_ENV_CACHE_DIR/data``, else ``$XDG_CACHE_HOME/mobility-env/data``,
else ``~/.cache/mobility-env/data``) holds one folder per URI::

    <cache>/<name>-<hash of the URI and endpoint>/
        lock             held exclusively while one process checks or fetches (two processes never fetch at once)
        current.json     the remote listing (size, ETag, mtime of every file) the current copy was made from
        <version>/       a complete copy, written to tmp-* and renamed into place: a half-written copy is never used
        <version>.lock   held shared by every process that opened that copy; an old copy is deleted only when no
                         process holds it

Every :func:`localize` lists the remote files and compares them with ``current.json``: the same names, sizes and
modification times open the copy without reading any data; a changed, added or removed object fetches a new copy.
Modification times have whole seconds, so an object modified shortly before its copy was made (within
:data:`SETTLED_S`, which covers the clock skew S3 tolerates) is also compared by ETag (one HEAD request each): an
object rewritten within the same second with the same size is still seen. A half-written copy is never used: a
copy appears only by a rename, and ``current.json`` (written after it) names it.

A missing bucket or prefix, refused credentials and an unreachable endpoint raise
:class:`~mobility_env.errors.DataFileError` naming the URI (credentials hidden); a URI pyarrow cannot parse raises
:class:`~mobility_env.errors.ConfigError`.

>>> localize("datasets/default") == Path("datasets/default")
True
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import secrets
import shutil
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import IO, Any, Iterator
from urllib.parse import parse_qsl, urlsplit

from .errors import ConfigError, DataFileError
from .layout import cache_dir as project_cache_dir

try:
    import fcntl
except ImportError:  # Windows: no advisory locks; one process per node should fetch there
    fcntl = None  # type: ignore[assignment]

CACHE_SUBDIR = "data"
CURRENT_FILE = "current.json"
LOCK_FILE = "lock"
CHUNK_BYTES = 8 << 20
FETCH_THREADS = 4            # parallel object streams; each is one sequential GET
HEAD_THREADS = 16            # parallel HEAD requests (ETags) when checking a copy: latency-bound, not bandwidth
# An object whose mtime is this much older than the copy (S3 refuses clocks 15 min off) cannot have been rewritten
# unseen in its mtime's second before the copy was made, nor after it without a later mtime: size and mtime decide.
SETTLED_S = 16 * 60
ENDPOINT_VARS = ("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL")
_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]+://")  # two letters at least: C:\ is a path
_SECRET_QUERY = re.compile(r"(secret|token|password|key)", re.IGNORECASE)

_held: dict[str, IO[str]] = {}  # shared locks on the copies this process opened, kept for its life
_held_lock = threading.Lock()


def is_uri(data: str | os.PathLike | None) -> bool:
    """Whether ``data`` is a URI (``scheme://...``) rather than a local path."""
    return data is not None and bool(_URI.match(os.fspath(data)))


def redact(uri: str) -> str:
    """``uri`` with its secret (``KEY:SECRET@``) and secret-looking query values replaced by ``***``."""
    parts = urlsplit(uri)
    netloc = parts.netloc
    if "@" in netloc:
        user, host = netloc.rsplit("@", 1)
        netloc = f"{user.split(':', 1)[0]}:***@{host}" if ":" in user else f"***@{host}"
    query = "&".join(f"{k}={'***' if _SECRET_QUERY.search(k) else v}" for k, v in parse_qsl(parts.query))
    return parts._replace(netloc=netloc, query=query).geturl()


def data_label(data: str | os.PathLike | None) -> str | None:
    """A short name of ``data`` for default run folders: the last part of a URI's path (its bucket if none), at most
    64 characters, so a folder named after it stays within the filesystem's limit."""
    if data is None or not is_uri(data):
        return None if data is None else os.fspath(data)
    parts = urlsplit(os.fspath(data))
    name = parts.path.rstrip("/").rsplit("/", 1)[-1] or parts.netloc.rsplit("@", 1)[-1]
    return re.sub(r"[^A-Za-z0-9._-]", "_", name)[:64] or "data"


def data_cache_dir(cache_dir: str | os.PathLike | None = None) -> Path:
    """The folder remote data is copied into on this node (see module docstring)."""
    return Path(cache_dir) if cache_dir is not None else project_cache_dir() / CACHE_SUBDIR


def localize(data: str | os.PathLike, cache_dir: str | os.PathLike | None = None) -> Path:
    """The local path of ``data``: itself when local, else this node's up-to-date copy (see module docstring).

    ``data`` is a path, a ``file://`` URI, or a URI of a pyarrow filesystem (``s3://bucket/prefix``) naming a
    directory (every object under it is copied) or one file.
    """
    text = os.fspath(data)
    if not is_uri(text):
        return Path(text)
    filesystem, remote = _filesystem(text)
    from pyarrow.fs import LocalFileSystem

    if isinstance(filesystem, LocalFileSystem):
        return Path(remote)
    entry = data_cache_dir(cache_dir) / _cache_name(text)
    entry.mkdir(parents=True, exist_ok=True)
    with _exclusive(entry / LOCK_FILE):
        kind, listing = _remote_listing(filesystem, remote, text)
        base = remote if kind == "directory" else remote.rsplit("/", 1)[0]
        current = _read_current(entry)
        if current is not None and _unchanged(filesystem, base, text, current, listing) \
                and (entry / str(current.get("version"))).is_dir():
            version = str(current["version"])
        else:
            started = time.time()
            version, files = _fetch(filesystem, base, text, listing, entry)
            _write_current(entry, {"uri": redact(text), "kind": kind, "version": version, "files": files,
                                   "fetched": time.strftime("%Y-%m-%dT%H:%M:%S"), "fetched_unix": started})
        _hold_shared(entry / f"{version}.lock")
        _remove_unused_copies(entry, version)
    local = entry / version
    return local / next(iter(listing)) if kind == "file" else local


# --------------------------------------------------------------------------- the remote side
def _filesystem(uri: str) -> tuple[Any, str]:
    from pyarrow.fs import FileSystem

    try:
        filesystem, path = FileSystem.from_uri(uri)
    except ValueError as exc:  # ArrowInvalid: an unknown scheme, an unknown query key
        raise ConfigError(f"--data {redact(uri)}: not a URI pyarrow can open ({exc}); use a local path, "
                          "file:///abs/path, or s3://bucket/prefix[?endpoint_override=URL&scheme=http&region=R]"
                          ) from exc
    except OSError as exc:  # e.g. resolving the bucket's region
        raise _remote_error(uri, exc) from exc
    return filesystem, path.rstrip("/")


def _endpoint(uri: str) -> str | None:
    query = dict(parse_qsl(urlsplit(uri).query))
    return query.get("endpoint_override") or next((os.environ[v] for v in ENDPOINT_VARS if os.environ.get(v)), None)


def _remote_error(uri: str, exc: BaseException) -> DataFileError:
    """A typed error naming the URI for a failure of the object store (message kept, credentials hidden)."""
    detail = str(exc)
    shown = redact(uri)
    where = _endpoint(uri) or "the default endpoint"
    if re.search(r"NO_SUCH_BUCKET|NoSuchBucket", detail):
        message = "no such bucket; check the bucket name and the endpoint"
    elif re.search(r"ACCESS_DENIED|InvalidAccessKeyId|SignatureDoesNotMatch|INVALID_ACCESS_KEY|"
                   r"UNRECOGNIZED_CLIENT|Forbidden|HTTP response code: 403", detail):
        message = ("the object store refused the credentials; set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY "
                   "(or AWS_PROFILE) to a key allowed to read it")
    elif re.search(r"NETWORK_CONNECTION|curlCode|[Cc]ould not connect|[Cc]ouldn't connect|[Tt]imed? ?out|"
                   r"REQUEST_TIMEOUT|resolve host", detail):
        message = (f"cannot reach the object store at {where}; check endpoint_override in the URI or "
                   "AWS_ENDPOINT_URL, and that the server is running")
    else:
        message = "cannot copy it from the object store into this node's cache"
    return DataFileError(shown, f"{message} ({_redact_text(detail, uri)})")


def _redact_text(text: str, uri: str) -> str:
    netloc = urlsplit(uri).netloc
    if "@" in netloc and ":" in netloc.rsplit("@", 1)[0]:
        text = text.replace(netloc.rsplit("@", 1)[0].split(":", 1)[1], "***")
    return text


def _remote_listing(filesystem: Any, remote: str, uri: str) -> tuple[str, dict[str, dict[str, Any]]]:
    """``("directory" | "file", {relative path: {"bytes", "mtime_ns"}})`` of what ``uri`` names (one listing)."""
    from pyarrow.fs import FileSelector, FileType

    try:
        info = filesystem.get_file_info(remote)
        if info.type == FileType.NotFound:
            bucket = remote.split("/", 1)[0]
            if bucket != remote and filesystem.get_file_info(bucket).type == FileType.NotFound:
                where = _endpoint(uri) or "the default endpoint"
                raise DataFileError(redact(uri), f"no such bucket {bucket!r} at {where}; check the bucket name and "
                                                 "the endpoint")
            raise DataFileError(redact(uri), "nothing there (no object or prefix of that name); --data takes the "
                                             "URI of a built directory, a task directory or one data file")
        if info.type == FileType.File:
            kind, infos, base = "file", [info], remote.rsplit("/", 1)[0]
        else:
            kind, base = "directory", remote
            infos = [i for i in filesystem.get_file_info(FileSelector(remote, recursive=True))
                     if i.type == FileType.File]
        files: dict[str, dict[str, Any]] = {}
        for item in infos:
            relative = item.path[len(base):].lstrip("/")
            parts = relative.split("/")
            if not relative or any(part in ("", ".", "..") for part in parts):
                raise DataFileError(redact(uri), f"object {item.path!r} has no safe local name; refusing to copy")
            files[relative] = {"bytes": item.size, "mtime_ns": item.mtime_ns}
    except OSError as exc:
        raise _remote_error(uri, exc) from exc
    if not files:
        raise DataFileError(redact(uri), "an empty prefix: no objects under it")
    return kind, dict(sorted(files.items()))


def _unchanged(filesystem: Any, base: str, uri: str, current: dict[str, Any], listing: dict[str, Any]) -> bool:
    """Whether the copy ``current.json`` describes is of exactly the objects ``listing`` names (see module doc)."""
    recorded = current.get("files")
    if not isinstance(recorded, dict) or set(recorded) != set(listing):
        return False
    settled_before = float(current.get("fetched_unix") or 0) - SETTLED_S
    fresh = []
    for relative, entry in listing.items():
        old = recorded[relative]
        if not isinstance(old, dict) or (old.get("bytes"), old.get("mtime_ns")) != (entry["bytes"], entry["mtime_ns"]):
            return False
        if entry["mtime_ns"] is None or entry["mtime_ns"] / 1e9 >= settled_before:
            fresh.append(relative)
    if not fresh:
        return True
    try:
        with ThreadPoolExecutor(min(HEAD_THREADS, len(fresh))) as pool:
            etags = list(pool.map(lambda rel: _etag(filesystem, f"{base}/{rel}" if base else rel), fresh))
    except OSError as exc:
        raise _remote_error(uri, exc) from exc
    return all(etag is not None and etag == recorded[rel].get("etag") for rel, etag in zip(fresh, etags))


def _etag(filesystem: Any, path: str) -> str | None:
    """The object's ETag (one HEAD request); None where the store has none (then size and mtime decide)."""
    with filesystem.open_input_file(path) as handle:
        return _etag_of(handle.metadata())


def _etag_of(metadata: Any) -> str | None:
    for key in ("ETag", "etag", "Etag"):
        value = (metadata or {}).get(key)
        if value:
            return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
    return None


# --------------------------------------------------------------------------- the cache
def _cache_name(uri: str) -> str:
    """``<data_label>-<hash>``: the URI without its secret, and the endpoint the environment names (a folder name
    within the filesystem's limit however long the URI)."""
    parts = urlsplit(uri)
    user = parts.netloc.rsplit("@", 1)[0].split(":", 1)[0] if "@" in parts.netloc else ""
    identity = "\n".join([parts._replace(netloc=f"{user}@{parts.netloc.rsplit('@', 1)[-1]}").geturl(),
                          _endpoint(uri) or ""])
    digest = hashlib.blake2b(identity.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()
    return f"{data_label(uri) or 'data'}-{digest}"


def _read_current(entry: Path) -> dict[str, Any] | None:
    try:
        current = json.loads((entry / CURRENT_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None  # none yet, or damaged: fetch again
    return current if isinstance(current, dict) else None


def _write_current(entry: Path, current: dict[str, Any]) -> None:
    temporary = entry / f"{CURRENT_FILE}.{os.getpid()}.tmp"
    temporary.write_text(json.dumps(current, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(temporary, entry / CURRENT_FILE)


def _fetch(filesystem: Any, base: str, uri: str, listing: dict[str, dict[str, Any]],
           entry: Path) -> tuple[str, dict[str, dict[str, Any]]]:
    """Copy the listed objects into a new complete copy under ``entry`` (written aside, renamed into place): its
    name, and the listing with the ETag of each object copied."""
    for stale in entry.glob("tmp-*"):  # left by a process that died fetching (we hold the lock)
        shutil.rmtree(stale, ignore_errors=True)
    temporary = entry / f"tmp-{os.getpid()}-{secrets.token_hex(4)}"
    try:
        with ThreadPoolExecutor(min(FETCH_THREADS, len(listing))) as pool:
            etags = list(pool.map(lambda item: _copy(filesystem, f"{base}/{item[0]}" if base else item[0],
                                                     temporary / item[0], item[1], uri), listing.items()))
        files = {rel: {**entry_, "etag": etag} for (rel, entry_), etag in zip(listing.items(), etags)}
        version = hashlib.blake2b(json.dumps(files, sort_keys=True).encode("utf-8"), digest_size=8).hexdigest()
        if (entry / version).is_dir():  # a complete copy of exactly these objects is still here
            shutil.rmtree(temporary, ignore_errors=True)
        else:
            os.rename(temporary, entry / version)
    except OSError as exc:
        shutil.rmtree(temporary, ignore_errors=True)
        raise _remote_error(uri, exc) from exc
    except BaseException:
        shutil.rmtree(temporary, ignore_errors=True)
        raise
    return version, files


def _copy(filesystem: Any, source: str, destination: Path, expected: dict[str, Any], uri: str) -> str | None:
    """Stream one object to ``destination``; its ETag. A size other than the listing's is refused (the object
    is being replaced: a half-uploaded directory is not copied)."""
    destination.parent.mkdir(parents=True, exist_ok=True)
    written = 0
    with filesystem.open_input_stream(source) as stream, destination.open("wb") as out:
        etag = _etag_of(stream.metadata())
        while True:
            chunk = stream.read(CHUNK_BYTES)
            if not chunk:
                break
            out.write(chunk)
            written += len(chunk)
    if written != expected["bytes"]:
        raise DataFileError(redact(uri), f"object {source!r} changed while it was copied ({written} bytes, "
                                         f"{expected['bytes']} listed); run again once the upload is complete")
    return etag


@contextlib.contextmanager
def _exclusive(path: Path) -> Iterator[None]:
    with path.open("a+", encoding="utf-8") as handle:
        if fcntl is not None:
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            if fcntl is not None:
                fcntl.flock(handle, fcntl.LOCK_UN)


def _hold_shared(path: Path) -> None:
    """Keep a shared lock on a copy for this process's life, so no other process deletes it under the store."""
    with _held_lock:
        if str(path) in _held:
            return
        handle = path.open("a+", encoding="utf-8")
        if fcntl is not None:
            fcntl.flock(handle, fcntl.LOCK_SH)
        _held[str(path)] = handle


def _remove_unused_copies(entry: Path, keep: str) -> None:
    """Delete the older copies no process holds (a running store keeps its copy until it exits)."""
    if fcntl is None:
        return
    for lock in entry.glob("*.lock"):
        version = lock.name[:-len(".lock")]
        if version == keep or str(lock) in _held:
            continue
        with lock.open("a+", encoding="utf-8") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # another process still reads it
            shutil.rmtree(entry / version, ignore_errors=True)
            lock.unlink()
