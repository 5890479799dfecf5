"""Opening a built directory's derived files safely (:mod:`mobility_env.mobilitybench.replay_index` describes them):
checked against ``manifest.json`` before they are mapped, validated in full where no checksum
vouches for them, range-checked before a stored position is followed, and their format versions
compared with this code's. Also the zero-copy cell reader the store and the index share.
"""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path
from tokenize import TokenError
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc
import pyarrow.parquet as pq

from . import evidence, observation
from ..errors import CorruptDataError
from .index_format import FUZZY_TOOLS, INDEX_VERSION, META_FILE, parquet_fingerprint
from ..layout import (ARROW_FILE, EPISODES_ARROW_FILE, EPISODES_FILE, EPISODES_SCHEMA, INDEX_DIR, SANDBOX_FILE,
                      SANDBOX_SCHEMA, DerivedFileWarning, DirectoryCheck, FormatVersionWarning, check_built_directory,
                      warn_once)


def derived_usable(check: DirectoryCheck, names: list[str], what: str) -> bool:
    """Do the derived files ``names`` match the manifest? If not, say so once and why."""
    if check.derived_ok(names):
        return True
    problems = check.derived_problems(names)
    absent = [p for p in problems if p.endswith(": missing") or p.endswith("not listed in the manifest")]
    if check.verified and len(absent) == len(problems) == len(names):
        return False  # none of them written (e.g. removed to save space): the Sandbox says how to write them
    message = (f"{check.directory}: not using the {what}: {'; '.join(problems[:3])}"
               f"{f' (and {len(problems) - 3} more)' if len(problems) > 3 else ''}. Built in memory from the verified "
               f"Parquet files instead; run `mobility-env index {check.directory}` to write it again.")
    warn_once(check.directory, DerivedFileWarning, message)
    return False


def validated(table_or_batch: Any, path: Path) -> Any:
    """Full Arrow validation (offsets, UTF-8) for a file no checksum vouches for; ValueError if damaged."""
    try:
        table_or_batch.validate(full=True)
    except (pa.ArrowException, ValueError) as exc:
        raise ValueError(f"{path}: damaged Arrow data ({exc})") from exc
    return table_or_batch


def open_episodes_arrow(directory: str | os.PathLike, check: DirectoryCheck | None = None) -> pa.Table | None:
    """``episodes.arrow`` memory-mapped, if it matches the manifest (or, in an unverified older
    directory, was written from the current ``episodes.parquet`` and validates); else None.

    Raises :class:`CorruptDataError` when a Parquet file of the directory is damaged.
    """
    directory = Path(directory)
    check = check or check_built_directory(directory)
    arrow_path = directory / EPISODES_ARROW_FILE
    if check.verified:
        if not derived_usable(check, [EPISODES_ARROW_FILE], EPISODES_ARROW_FILE):
            return None
        return ipc.open_file(pa.memory_map(str(arrow_path), "r")).read_all()
    meta_path = directory / INDEX_DIR / META_FILE
    if not meta_path.exists() or not arrow_path.exists():
        return None
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        if not isinstance(meta, dict) or meta.get("index_version") != INDEX_VERSION or \
                meta.get("episodes_parquet") != parquet_fingerprint(directory / EPISODES_FILE):
            return None
        return validated(ipc.open_file(pa.memory_map(str(arrow_path), "r")).read_all(), arrow_path)
    except (OSError, ValueError, pa.ArrowException) as exc:
        warnings.warn(f"{arrow_path}: unreadable ({exc}); reading episodes.parquet instead", DerivedFileWarning,
                      stacklevel=2)
        return None


def cell_reader(array: pa.Array):
    """``row -> python value`` for one Arrow array: strings and numbers without a Scalar object per read."""
    if array.null_count == 0 and (pa.types.is_string(array.type) or pa.types.is_large_string(array.type)):
        width = np.int64 if pa.types.is_large_string(array.type) else np.int32
        # a memoryview over the (mapped) offsets: indexing it gives Python ints, no numpy scalar per read
        offsets = np.frombuffer(array.buffers()[1], dtype=width)[array.offset:array.offset + len(array) + 1].data
        data = array.buffers()[2]
        view = memoryview(data) if data is not None else memoryview(b"")

        def read_text(row: int) -> str:
            return str(view[offsets[row]:offsets[row + 1]], "utf-8")

        return read_text
    if array.null_count == 0 and (pa.types.is_integer(array.type) or pa.types.is_floating(array.type)):
        values = array.to_numpy(zero_copy_only=True).data  # a memoryview: Python ints and floats, as .item() gives
        return values.__getitem__
    return lambda row: array[row].as_py()


# what a damaged file can raise while it is read (np.load parses a .npy header with tokenize and ast)
LOAD_ERRORS = (OSError, ValueError, KeyError, TypeError, IndexError, EOFError, SyntaxError, TokenError,
               pa.ArrowException)


def validate_unverified_parquet(directory: Path) -> None:
    """Schema and full Arrow validation of the Parquet files of a directory without checksums.

    Raises CorruptDataError naming the file; a damaged file would otherwise fail deep inside
    a lookup (undecodable text, a renamed column).
    """
    for name, schema in ((SANDBOX_FILE, SANDBOX_SCHEMA), (EPISODES_FILE, EPISODES_SCHEMA)):
        path = directory / name
        try:
            table = pq.read_table(path)
            table.validate(full=True)
        except (OSError, ValueError, pa.ArrowException) as exc:
            raise CorruptDataError(path, f"damaged ({exc}); rebuild with `mobility-env build SRC --out {directory}`") \
                from exc
        for field in schema:
            if field.name not in table.column_names or not table.schema.field(field.name).type.equals(field.type):
                raise CorruptDataError(path, f"column {field.name!r} is missing or not {field.type}; rebuild with "
                                             f"`mobility-env build SRC --out {directory}`", column=field.name)


def check_shapes(arrays: dict[str, np.ndarray], meta: dict[str, Any], names: int, rows: int) -> None:
    """Range checks of unverified arrays (every stored position points inside what it indexes):
    ValueError when one cannot be right, so a damaged array is never followed out of bounds."""
    def within(name: str, upper: int) -> None:
        values = arrays[name]
        if values.ndim != 1:
            raise ValueError(f"{name}.npy is not one-dimensional")
        if len(values) and (int(values.min()) < 0 or int(values.max()) >= upper):
            raise ValueError(f"{name}.npy points outside 0..{upper - 1}")

    def offsets(name: str, length: int | None, total: int) -> None:
        values = arrays[name]
        if (length is not None and values.shape != (length,)) or not len(values) or int(values[0]) != 0 \
                or int(values[-1]) != total or bool((np.diff(values) < 0).any()):
            raise ValueError(f"{name}.npy is not an offset array over {total} items")

    for name in ("tool_code", "valid", "key_hash", "options_code", "city_code"):
        if arrays[name].shape != (rows,):
            raise ValueError(f"{name}.npy has shape {arrays[name].shape}, expected ({rows},)")
    within("options_code", len(meta["options_vocab"]))
    within("city_code", len(meta["city_vocab"]))
    offsets("pt_off", rows + 1, len(arrays["pt_lng"]))
    for name in ("exact_entry", "nn_entry"):
        within(name, rows)
    episodes = len(arrays["ep_start"])
    within("ep_row", episodes)
    within("ep_start", rows + 1)
    within("ep_stop", rows + 1)
    if episodes != len(arrays["ep_stop"]) or bool((arrays["ep_start"] > arrays["ep_stop"]).any()):
        raise ValueError("ep_start.npy and ep_stop.npy do not describe row spans")
    for tool in FUZZY_TOOLS:
        prefix = f"fz_{tool}_"
        count = len(arrays[prefix + "names"])
        within(prefix + "names", names)
        offsets(prefix + "grp_off", count + 1, len(arrays[prefix + "grp_entry"]))
        within(prefix + "grp_entry", rows)
        within(prefix + "len_order", max(count, 1))
        offsets(prefix + "len_off", len(arrays[prefix + "len_values"]) + 1, len(arrays[prefix + "len_order"]))
        for kind in ("tok", "uni"):
            offsets(f"{prefix}{kind}_off", len(arrays[f"{prefix}{kind}_keys"]) + 1, len(arrays[f"{prefix}{kind}_post"]))
            within(f"{prefix}{kind}_post", max(count, 1))


def evidence_version_ok(directory: Path, meta: dict[str, Any]) -> bool:
    """Were the ``evidence`` column's views written under this evidence schema? If not, say so once."""
    recorded, current = meta.get("evidence_version"), evidence.EVIDENCE_SCHEMA
    if recorded == current:
        return True
    shown = "none (written before evidence was stored)" if recorded is None else repr(recorded)
    warn_once(directory, FormatVersionWarning,
              f"{directory}: its stored evidence views ({ARROW_FILE}) are of schema {shown}, this mobility-env reads "
              f"schema {current!r}; they are not read, the verifier computes each view from the decoded response "
              f"instead (the same views, more slowly). Run `mobility-env index {directory}` to rewrite them.")
    return False


def compact_version_ok(directory: Path, meta: dict[str, Any]) -> bool:
    """Was the ``compact`` column written by this observation version? If not, say so once."""
    recorded, current = meta.get("observation_version"), observation.OBSERVATION_VERSION
    if recorded == current:
        return True
    if recorded is None:
        shown = "no observation version (written before versions were recorded)"
    elif isinstance(recorded, str):
        shown = f"observation version {recorded!r} (a source hash: written before versions were numbered)"
    else:
        shown = f"observation version {recorded!r}"
    warn_once(directory, FormatVersionWarning,
              f"{directory}: its precomputed compact observations ({ARROW_FILE}) are {shown}, this mobility-env "
              f"writes observation version {current}; they are not served, each compact observation is computed at "
              f"its step instead (the text a fresh index holds, more slowly). Run `mobility-env index {directory}` to "
              f"rewrite them.")
    return False
