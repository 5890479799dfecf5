"""``benchmarks/fuzz_step.py`` runs every registered env with every class of hostile action, and counts what
escapes ``step`` (a short run keeps the benchmark from rotting; the 1,000,000-action runs are in docs/results.md)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import mobility_env  # noqa: F401  (registers the suites)
from mobility_env.suites import env_ids

BENCHMARK = Path(__file__).resolve().parents[1] / "benchmarks" / "fuzz_step.py"


def test_fuzz_step_runs_both_envs_with_every_class(tmp_path: Path) -> None:
    out = tmp_path / "fuzz.json"
    done = subprocess.run([sys.executable, str(BENCHMARK), "--n", "600", "--checkpoints", "1", "--seed", "3",
                           "--out", str(out)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    results = json.loads(out.read_text(encoding="utf-8"))["envs"]
    assert [r["env_id"] for r in results] == list(env_ids())
    for result in results:
        assert result["exceptions"] == {} and result["violations"] == {}, result
        assert {"hostile_object", "plain_text_answer", "gold", "megabyte"} <= set(result["categories"]), result
        assert sum(result["categories"].values()) == 600
