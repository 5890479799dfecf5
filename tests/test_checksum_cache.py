"""Checksums verified by one process are remembered across processes, keyed by the file's full stat identity."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mobility_env.layout import SANDBOX_FILE

CHECK = ("import sys, json; from mobility_env.layout import check_built_directory, _digest_cache\n"
         "import mobility_env.layout as layout\n"
         "hashed = []\n"
         "original = layout.hashlib.blake2b\n"
         "layout.hashlib.blake2b = lambda *a, **k: (hashed.append(1), original(*a, **k))[1]\n"
         "check_built_directory(sys.argv[1])\n"
         "print(json.dumps({'hashed': len(hashed)}))\n")


def _check(directory: Path, cache: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "MOBILITY_ENV_CACHE_DIR": str(cache)}
    env.pop("MOBILITY_ENV_CHECKSUM_CACHE", None)
    return subprocess.run([sys.executable, "-c", CHECK, str(directory)], capture_output=True, text=True, env=env,
                          timeout=120)


@pytest.fixture()
def directory(tmp_path: Path) -> Path:
    bundled = Path(__file__).resolve().parents[1] / "datasets" / "default"
    target = tmp_path / "set"
    shutil.copytree(bundled, target)
    return target


def test_a_second_process_does_not_hash_again_and_a_changed_file_is_still_refused(directory, tmp_path):
    cache = tmp_path / "cache"
    first = _check(directory, cache)
    assert first.returncode == 0, first.stderr
    files = sum(1 for p in directory.rglob("*") if p.is_file() and p.name != "manifest.json")
    assert json.loads(first.stdout)["hashed"] == files
    remembered = json.loads((cache / "checksums.json").read_text())
    assert any(key.startswith(str((directory / SANDBOX_FILE).resolve()) + "|") for key in remembered)

    second = _check(directory, cache)
    assert second.returncode == 0 and json.loads(second.stdout)["hashed"] == 0  # stat only

    path = directory / SANDBOX_FILE  # same size, same mtime, one byte changed: its ctime moves
    data = bytearray(path.read_bytes())
    stat = path.stat()
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    third = _check(directory, cache)
    assert third.returncode != 0 and "CorruptDataError" in third.stderr and SANDBOX_FILE in third.stderr


def test_the_cache_can_be_turned_off_and_a_damaged_cache_file_is_ignored(directory, tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "checksums.json").write_text("{not json")
    result = _check(directory, cache)
    assert result.returncode == 0, result.stderr
    assert json.loads((cache / "checksums.json").read_text())  # rewritten whole
    env = {**os.environ, "MOBILITY_ENV_CACHE_DIR": str(tmp_path / "off"), "MOBILITY_ENV_CHECKSUM_CACHE": "0"}
    off = subprocess.run([sys.executable, "-c", CHECK, str(directory)], capture_output=True, text=True, env=env,
                         timeout=120)
    assert off.returncode == 0 and not (tmp_path / "off").exists()


def test_a_poisoned_cache_entry_makes_the_check_fail_not_pass(directory, tmp_path):
    cache = tmp_path / "cache"
    assert _check(directory, cache).returncode == 0
    remembered = json.loads((cache / "checksums.json").read_text())
    key = next(k for k in remembered if k.startswith(str((directory / SANDBOX_FILE).resolve()) + "|"))
    remembered[key] = "0" * 32
    (cache / "checksums.json").write_text(json.dumps(remembered))
    result = _check(directory, cache)
    assert result.returncode != 0 and "CorruptDataError" in result.stderr
