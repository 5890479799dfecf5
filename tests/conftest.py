"""Shared fixtures: the real MobilityBench sample, loaded once and built once per session.

The sample lives outside the checkout (``../shared/mobilitybench/sample_dev.csv``, beside the
repository in CI); it is read from there and never copied into the project.
"""

from __future__ import annotations

import atexit
import csv
import math
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Callable

import pytest
from hypothesis import settings

from mobility_env.mobilitybench.build import build_directory
from mobility_env.mobilitybench.loaders import EpisodeList, load_episodes
from mobility_env.mobilitybench.sandbox import Sandbox

# checksums verified by one test process are remembered in a cache file (read when first needed): keep it out
# of the user's home, and remove it when the test process ends (the processes tests start inherit it)
if "MOBILITY_ENV_CACHE_DIR" not in os.environ:
    os.environ["MOBILITY_ENV_CACHE_DIR"] = tempfile.mkdtemp(prefix="mobility-env-test-cache-")
    atexit.register(shutil.rmtree, os.environ["MOBILITY_ENV_CACHE_DIR"], ignore_errors=True)
pytest_plugins = ["plugin_reward_rates"]  # the reward sweep's rates in the terminal summary

# Property tests draw the same examples on every run by default ("ci"), so a test that passes passes again and a
# red run is reproducible; HYPOTHESIS_PROFILE=explore draws fresh examples each run to look for new failures (a
# failure it finds prints the seed to reproduce it with --hypothesis-seed)
settings.register_profile("ci", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

#: The real MobilityBench sample (81 episodes of the official release's format): MOBILITY_ENV_SAMPLE_DIR names its
#: folder; by default ../shared/mobilitybench/ beside the checkout (where this project's CI keeps it). Without it,
#: the tests that read real episodes skip and say so.
SAMPLE_DIR = Path(os.environ.get("MOBILITY_ENV_SAMPLE_DIR")
                  or Path(__file__).resolve().parents[1].parent / "shared" / "mobilitybench")
SAMPLE_CSV = SAMPLE_DIR / "sample_dev.csv"
NO_SAMPLE = (f"real MobilityBench sample not found at {SAMPLE_CSV}: set MOBILITY_ENV_SAMPLE_DIR to the folder holding "
             "sample_dev.csv (a CSV in the official release's format; see README, Data) to run the tests on real "
             "episodes")
BUNDLED = Path(__file__).resolve().parents[1] / "datasets" / "default"  # the bundled synthetic set, built
SAMPLE_ROWS = 81
SAMPLE_TRUNCATED = 8
METRES_PER_DEGREE = 111_195.0  # one degree of latitude on the mean-radius sphere


@pytest.fixture(scope="session")
def sample_csv() -> Path:
    if not SAMPLE_CSV.is_file():  # a fresh clone with nothing beside it: the real-data tests skip, saying why
        pytest.skip(NO_SAMPLE)
    return SAMPLE_CSV


@pytest.fixture(scope="session")
def bundled_dir() -> Path:
    """The bundled synthetic set (a built directory, in the checkout)."""
    return BUNDLED


@pytest.fixture(scope="session")
def sample_table(sample_csv: Path) -> tuple[list[str], list[dict[str, str]]]:
    """The raw CSV: header and rows as strings, read with the csv module (not our loader)."""
    csv.field_size_limit(2**31 - 1)
    with sample_csv.open(encoding="utf-8-sig", newline="") as handle:
        reader = csv.DictReader(handle)
        rows = list(reader)
        return list(reader.fieldnames or []), rows


@pytest.fixture(scope="session")
def sample_rows(sample_table) -> list[dict[str, str]]:
    return sample_table[1]


@pytest.fixture(scope="session")
def sample_episodes(sample_csv: Path) -> EpisodeList:
    return load_episodes(sample_csv)


@pytest.fixture(scope="session")
def episodes_by_id(sample_episodes) -> dict[str, Any]:
    return {e.episode_id: e for e in sample_episodes}


@pytest.fixture(scope="session")
def built_dir(sample_episodes, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("built") / "sample"
    return build_directory(sample_episodes, out, source=str(SAMPLE_CSV), report=sample_episodes.report.to_dict())


@pytest.fixture(scope="session")
def sandbox(built_dir: Path) -> Sandbox:
    """The sandbox opened from the built directory (the path the env takes)."""
    return Sandbox.open(built_dir)


@pytest.fixture(scope="session")
def write_csv() -> Callable[[Path, list[str], list[dict[str, Any]]], Path]:
    def write(path: Path, header: list[str], rows: list[dict[str, Any]]) -> Path:
        with path.open("w", encoding="utf-8", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=header, extrasaction="ignore")
            writer.writeheader()
            for row in rows:
                writer.writerow({h: row.get(h, "") for h in header})
        return path
    return write


def shift_coordinate(coord: str, north_m: float, east_m: float = 0.0) -> str:
    """Move a 'lng,lat' string by metres north and east (small offsets)."""
    lng, lat = (float(x) for x in coord.split(","))
    lat2 = lat + north_m / METRES_PER_DEGREE
    lng2 = lng + east_m / (METRES_PER_DEGREE * math.cos(math.radians(lat)))
    return f"{lng2:.6f},{lat2:.6f}"


@pytest.fixture(scope="session")
def shift() -> Callable[..., str]:
    return shift_coordinate
