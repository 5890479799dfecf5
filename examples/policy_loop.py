"""A minimal hand-written policy loop: the whole Gymnasium interaction, nothing hidden.

The policy looks up the place the query names, plans a driving route there, and finishes
with the first path's distance and duration. It is deliberately naive (every query is
treated as "drive to X"), so its scorecard shows what the verifier rejects.

    python examples/policy_loop.py --episodes 20 [--data PATH]
"""

from __future__ import annotations

import argparse
import json

import gymnasium as gym

import mobility_env  # noqa: F401  (registers MobilityBench-v0)


def naive_policy(query: str, context: dict, last_observation: dict | None, step: int) -> dict:
    if step == 0:
        place = query.replace("去", "").replace("怎么走", "").strip("？?。 ")
        return {"name": "query_poi",
                "arguments": {"keywords": place or query, **({"city": context["city"]} if context.get("city") else {})}}
    if step == 1 and last_observation and last_observation.get("location") and context.get("user_current_location"):
        return {"name": "driving_route", "arguments": {"origin": context["user_current_location"],
                                                       "destination": last_observation["location"]}}
    paths = (last_observation or {}).get("paths") or []
    if paths:
        first = paths[0]
        answer = f"全程{first['distance_m'] / 1000:.1f}公里，预计{round(first['duration_s'] / 60)}分钟。"
        return {"name": "finish",
                "arguments": {"answer": answer, "route_index": 0, "intent": "Point-to-Point Planning"}}
    return {"name": "finish", "arguments": {"answer": "抱歉，没有找到。"}}


def main() -> None:
    parser = argparse.ArgumentParser(description="Run a naive hand-written policy.")
    parser.add_argument("--episodes", type=int, default=20)
    parser.add_argument("--data", default=None, help="built directory or official file (default: bundled)")
    args = parser.parse_args()
    env = gym.make("MobilityBench-v0", data=args.data)
    passed = 0
    for index in range(args.episodes):
        obs, info = env.reset(seed=index)
        last, step, done = None, 0, False
        while not done:
            action = naive_policy(info["query"], info["context"], last, step)
            obs, reward, terminated, truncated, step_info = env.step(action)
            last = json.loads(obs) if obs.startswith("{") else None
            step, done = step + 1, terminated or truncated
        metrics = step_info["metrics"]
        passed += metrics["FPR"] == 1.0
        print(f"{info['episode_id']}  {step_info['task_scenario']:<36} "
              f"DR={metrics['DR']:.0f} FPR={metrics['FPR']:.0f}  {info['query']}")
    print(f"final pass rate: {passed}/{args.episodes}")


if __name__ == "__main__":
    main()
