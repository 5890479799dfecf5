"""Packaging: installed import names collide with no popular package; the wheel carries the bundled data.

The wheel itself is built, installed outside the checkout and run by `.ci/run` (too slow for the suite).
"""

import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parent.parent
CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_no_colliding_top_level_import_names():
    packages = CONFIG["tool"]["setuptools"]["packages"]
    top_level = {p.split(".")[0] for p in packages}
    assert top_level == {"mobility_env", "mobility_agents", "mobility_rewards"}
    assert not {"agents", "rewards", "datasets"} & top_level


def test_every_source_package_is_listed():
    mapping = CONFIG["tool"]["setuptools"]["package-dir"]
    listed = set(CONFIG["tool"]["setuptools"]["packages"])
    folders = {"mobility_env": "mobility_env", **mapping}
    for name, folder in folders.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            dotted = ".".join([name, *init.parent.relative_to(ROOT / folder).parts])
            assert dotted in listed, f"{init} is not packaged as {dotted}"


def test_bundled_data_is_package_data():
    data = CONFIG["tool"]["setuptools"]["package-data"]
    bundled = ROOT / "datasets" / "default"
    patterns = {"mobility_env._bundled.default": bundled, "mobility_env._bundled.default.sandbox_index":
                bundled / "sandbox_index"}
    for package, folder in patterns.items():
        shipped = {f for pattern in data[package] for f in folder.glob(pattern)}
        present = {f for f in folder.iterdir() if f.is_file()}
        assert shipped == present, f"{folder}: not shipped: {sorted(p.name for p in present - shipped)}"


def test_tomli_declared_for_python_310():
    assert any(d.startswith("tomli") and "python_version < '3.11'" in d for d in CONFIG["project"]["dependencies"])
