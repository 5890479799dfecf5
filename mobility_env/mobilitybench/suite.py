"""MobilityBench-v0's runtime part (:attr:`mobility_env.suites.Suite.runtime`): its data and its env.

A run's data is a built directory (``mobility-env build``), an official CSV/XLSX/JSONL file, or the bundled set
(None); :func:`open_run` also says what loading it reported, for ``run.json``. A URI (``file://``, ``s3://...``) is
opened through :func:`mobility_env.datasource.localize`: this node's local copy is what the store memory-maps.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from mobility_env.errors import DataFileError

DATA_HELP = ("a built directory (`mobility-env build`) or an official CSV/XLSX/JSONL file, as a path or a URI "
             "(file://, s3://bucket/prefix)")


def data_path(data: str | os.PathLike | None) -> tuple[Path, str]:
    """The resolved data path and its kind (``bundled``, ``built``, ``file``); a URI's is this node's copy."""
    from mobility_env.datasource import localize
    from mobility_env.mobilitybench.store import default_data_path

    path = default_data_path() if data is None else localize(data)
    if not path.exists():
        raise DataFileError(path, f"no such file or directory; --data takes {DATA_HELP}")
    return path.resolve(), "bundled" if data is None else ("built" if path.is_dir() else "file")


def open_store(data: str | os.PathLike | None, lookup_config: Any = None) -> Any:
    """The episodes of ``data`` (None: the bundled set; a URI: this node's copy), one store per process."""
    from mobility_env.mobilitybench.store import resolve_data

    return resolve_data(data, lookup_config)


def open_run(path: Path, lookup_config: Any = None) -> tuple[Any, dict[str, Any] | None]:
    """The store of a run's resolved data path and its load report (None when the data recorded none)."""
    from mobility_env.layout import EPISODES_FILE, read_manifest
    from mobility_env.mobilitybench.loaders import load_episodes
    from mobility_env.mobilitybench.sandbox import Sandbox
    from mobility_env.mobilitybench.store import EpisodeStore, resolve_data

    if path.is_dir():
        if not (path / EPISODES_FILE).exists():
            raise DataFileError(path, f"a directory without {EPISODES_FILE}: not a built directory; "
                                      "build one with `mobility-env build SRC --out DIR`")
        manifest = read_manifest(path) or {}
        report = manifest.get("load_report") if isinstance(manifest.get("load_report"), dict) else None
        return resolve_data(path, lookup_config), report
    episodes = load_episodes(path)
    if not episodes:
        raise DataFileError(path, f"no usable episodes ({episodes.report.summary()})")
    return EpisodeStore(Sandbox.from_episodes(episodes, lookup_config), episodes=list(episodes)), \
        episodes.report.to_dict()


def make_env(store: Any, **options: Any) -> Any:
    """One env on ``store``."""
    from mobility_env.mobilitybench.env import MobilityEnv

    return MobilityEnv(store=store, **options)


def fixed_tools() -> list[dict[str, Any]]:
    """The tools every episode offers (OpenAI schemas): an export reads them for a trajectory that did not record
    its own."""
    from mobility_env.tools import openai_tools

    return openai_tools()
