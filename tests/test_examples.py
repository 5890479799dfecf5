"""The runnable examples, as subprocesses with a tiny budget (cleanrl-style smoke tests that can fail)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_reinforce_example_learns_on_held_out_episodes():
    proc = subprocess.run([sys.executable, str(ROOT / "examples" / "train_reinforce.py"), "--train", "150", "--test", "80",
                           "--epochs", "3"], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    curve = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert [point["epoch"] for point in curve] == [0, 1, 2, 3]
    assert curve[-1]["FPR"] >= curve[0]["FPR"] + 0.25
    assert curve[-1]["mean_return"] > curve[0]["mean_return"]
