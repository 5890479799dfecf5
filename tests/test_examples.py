"""The runnable examples, as subprocesses with a tiny budget (cleanrl-style smoke tests that can fail)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_reinforce_example_learns_on_held_out_episodes():
    proc = subprocess.run([sys.executable, str(ROOT / "examples" / "train_reinforce.py"), "--train", "150",
                           "--test", "80", "--epochs", "3"], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    curve = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert [point["epoch"] for point in curve] == [0, 1, 2, 3]
    assert curve[-1]["FPR"] >= curve[0]["FPR"] + 0.25
    assert curve[-1]["mean_return"] > curve[0]["mean_return"]


def test_policy_loop_and_read_results(tmp_path, sample_csv):
    proc = subprocess.run([sys.executable, str(ROOT / "examples" / "policy_loop.py"), "--episodes", "6",
                           "--data", str(sample_csv)], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    assert len([line for line in lines if line.startswith("mb-")]) == 6
    assert lines[-1].startswith("final pass rate: ") and lines[-1].endswith("/6")

    run_dir = tmp_path / "run"
    proc = subprocess.run([sys.executable, "-m", "mobility_env.cli", "run", "--agent", "oracle",
                           "--data", str(sample_csv), "--limit", "5", "--out", str(run_dir), "--no-progress"],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    proc = subprocess.run([sys.executable, str(ROOT / "examples" / "read_results.py"), str(run_dir)],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "0 recorded failure(s)" in proc.stdout and "overall" in proc.stdout
