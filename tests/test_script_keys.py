"""The Traditional-to-Simplified fast path (mobility_env.reading.script): a text in which no key of OpenCC's
``tw2s`` and ``hk2s`` dictionaries can match is returned without calling OpenCC. The keys are data
(``mobility_env/reading/vocab/opencc_keys.json``), read from the installed OpenCC's own dictionaries with its
``opencc_dict`` tool; this file checks them against the installed OpenCC and rewrites them:

    python tests/test_script_keys.py --write
"""

from __future__ import annotations

import importlib.metadata
import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from mobility_env.reading import script

KEYS_FILE = Path(script.__file__).resolve().parent / "vocab" / "opencc_keys.json"


def _opencc_dir() -> Path:
    import opencc

    return Path(opencc.__file__).resolve().parent / "clib"


def _config_dicts(config: str) -> list[str]:
    """Every dictionary file a configuration names (normalization, segmentation, conversion chain)."""
    text = (_opencc_dir() / "share" / "opencc" / f"{config}.json").read_text(encoding="utf-8")
    files: list[str] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if node.get("type") == "ocd2" and isinstance(node.get("file"), str):
                files.append(node["file"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)
    walk(json.loads(text))
    return sorted(set(files))


def read_keys() -> dict[str, object]:
    """The keys of every dictionary ``tw2s`` and ``hk2s`` use, from the installed OpenCC."""
    tool = _opencc_dir() / "bin" / "opencc_dict"
    characters: set[str] = set()
    phrases: set[str] = set()
    with tempfile.TemporaryDirectory() as tmp:
        for name in sorted(set(_config_dicts("tw2s")) | set(_config_dicts("hk2s"))):
            out = Path(tmp) / (name + ".txt")
            subprocess.run([str(tool), "-i", str(_opencc_dir() / "share" / "opencc" / name), "-o", str(out),
                            "-f", "ocd2", "-t", "text"], check=True, capture_output=True)
            for line in out.read_text(encoding="utf-8").splitlines():
                key = line.split("\t")[0]
                (characters if len(key) == 1 else phrases).add(key)
    return {"opencc": importlib.metadata.version("OpenCC"), "configs": ["tw2s", "hk2s"],
            "characters": "".join(sorted(characters)), "phrases": sorted(phrases)}


def _tool_available() -> bool:
    try:
        return (_opencc_dir() / "bin" / "opencc_dict").is_file()
    except ImportError:
        return False


@pytest.mark.skipif(not _tool_available(), reason="the installed OpenCC has no opencc_dict tool")
def test_the_stored_keys_are_the_installed_opencc_s():
    stored = json.loads(KEYS_FILE.read_text(encoding="utf-8"))
    if stored["opencc"] != importlib.metadata.version("OpenCC"):
        assert script._keys() is None  # another OpenCC: no fast path, every text is converted
        pytest.skip(f"keys of OpenCC {stored['opencc']}, installed {importlib.metadata.version('OpenCC')}")
    assert stored == read_keys(), "run: python tests/test_script_keys.py --write"


def _fast_path_keys() -> tuple:
    """The keys, or a skip: with another OpenCC than the keys file names there is no fast path (every text is
    converted, which the test above checks)."""
    keys = script._keys()
    if keys is None:
        stored = json.loads(KEYS_FILE.read_text(encoding="utf-8"))["opencc"]
        pytest.skip(f"keys of OpenCC {stored}, installed {importlib.metadata.version('OpenCC')}: no fast path")
    return keys


def test_a_text_the_fast_path_returns_is_what_opencc_returns():
    keys = _fast_path_keys()
    convert = script._converter()
    keyed = list(keys[0])[:400] + [p[0] for p in sorted(keys[1])[:200]] + ["乾", "著", "台", "干", "发", "么"]
    plain = list("北京市朝阳区路街道号店大厦一的了是在西湖公园站") + list("abc 12-(")
    rng = random.Random(0)
    fast = 0
    for _ in range(20_000):
        text = "".join(rng.choice(keyed if rng.random() < 0.1 else plain) for _ in range(rng.randint(1, 12)))
        if rng.random() < 0.2:  # a phrase key inside plain text
            text += rng.choice(sorted(keys[1]))
        if script._unchanged(text):
            fast += 1
            assert convert(text) == text, text
        if script._CJK.search(text):  # (characters beyond the BMP's CJK blocks are not converted: known)
            assert script.simplified(text) == convert(text), text
    assert fast > 1_000


def test_plain_simplified_names_take_the_fast_path():
    _fast_path_keys()
    names = ["北京市朝阳区建国路88号", "星巴克(国贸店)", "深圳宝安国际机场T3航站楼", "西湖风景名胜区", "人民公园地铁站"]
    assert all(script._unchanged(name) for name in names)
    assert not script._unchanged("臺北車站") and not script._unchanged("乾县")  # keys: converted


if __name__ == "__main__":
    if "--write" in sys.argv:
        KEYS_FILE.write_text(json.dumps(read_keys(), ensure_ascii=False, indent=0) + "\n", encoding="utf-8")
        print(f"wrote {KEYS_FILE}")
