"""Read a run directory: per-scenario pass rate, failures, and the worst episodes.

    mobility-env run --agent rule --out runs/demo
    python examples/read_results.py runs/demo
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

from mobility_agents.runner import read_results
from mobility_rewards.mobilitybench.scorecard import format_scorecard


def main() -> None:
    parser = argparse.ArgumentParser(description="Summarize a run directory.")
    parser.add_argument("run_dir", type=Path)
    args = parser.parse_args()
    records = read_results(args.run_dir / "results.jsonl")
    if not records:
        raise SystemExit(f"{args.run_dir}: no results.jsonl records")
    print(format_scorecard(records))
    by_scenario = defaultdict(list)
    for record in records:
        by_scenario[record["task_scenario"]].append(record["metrics"].get("FPR", 0.0))
    print("\nFPR by scenario:")
    for scenario, values in sorted(by_scenario.items()):
        print(f"  {scenario:<38} {sum(values) / len(values):6.1%}  (n={len(values)})")
    failures = [r for r in records if r.get("failure")]
    print(f"\n{len(failures)} recorded failure(s)")
    for record in failures[:5]:
        print(f"  {record['episode_id']}: {json.dumps(record['failure'], ensure_ascii=False)[:160]}")
    worst = sorted(records, key=lambda r: (r["metrics"].get("FPR", 0.0), r.get("total_reward", 0.0)))[:5]
    print("\nlowest-return episodes:")
    for record in worst:
        print(f"  {record['episode_id']}  {record['task_scenario']:<36} return={record.get('total_reward', 0.0):.2f}")


if __name__ == "__main__":
    main()
