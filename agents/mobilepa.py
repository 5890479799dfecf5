"""Agents and a scorecard for ``MobilePA-v0``.

* :class:`PhoneOracleAgent` replays the task's ``oracle_calls`` and answers with ``oracle_answer``
  (privileged: an upper bound and a self-check of the sandbox, tasks and verifier together; it must
  pass every task);
* :class:`FinishAtOnceAgent` answers without acting (a floor: it must pass nothing);
* :func:`play_tasks` plays tasks with an agent and returns one record per task;
* :func:`phone_scorecard` aggregates records by bucket, category, obstacle and language.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Iterable

from mobility_env.mobilepa.env import MobilePAEnv


class PhoneOracleAgent:
    name = "oracle"

    def actions(self, env: MobilePAEnv, task_id: str) -> list[dict[str, Any]]:
        task = env.tasks[task_id]
        return [{"name": c.name, "arguments": dict(c.arguments)} for c in task.oracle_calls] + \
            [{"name": "finish", "arguments": {"answer": task.oracle_answer}}]


class FinishAtOnceAgent:
    name = "finish_at_once"

    def actions(self, env: MobilePAEnv, task_id: str) -> list[dict[str, Any]]:
        return [{"name": "finish", "arguments": {"answer": "好的，已完成。"}}]


def play_tasks(agent: Any, env: MobilePAEnv, task_ids: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """One record per task: ``task_id``, labels, ``metrics``, ``verdict``, ``return``, ``steps``."""
    records = []
    for task_id in (task_ids if task_ids is not None else env.task_ids):
        env.reset(options={"task_id": task_id})
        total, steps = 0.0, 0
        info: dict[str, Any] = {}
        for action in agent.actions(env, task_id):
            _, reward, terminated, truncated, info = env.step(action)
            total, steps = total + float(reward), steps + 1
            if terminated or truncated:
                break
        else:  # the agent ran out of actions: end it like a truncation
            info = env.abandon("out_of_actions")
            total += float(sum(info["reward_components"].values()))
        task = env.tasks[task_id]
        records.append({"task_id": task_id, "agent": agent.name, "bucket": task.bucket, "category": task.category,
                        "obstacles": sorted({o["kind"] for o in task.obstacles}), "language": task.language,
                        "metrics": info.get("metrics", {}), "verdict": info.get("verdict"), "return": round(total, 6),
                        "steps": steps})
    return records


def phone_scorecard(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Success rate (and mean DR, progress, return) overall and per bucket, category, obstacle and language."""
    def summary(group: list[dict[str, Any]]) -> dict[str, Any]:
        n = len(group)
        mean = (lambda key: round(sum(float(r["metrics"].get(key, 0.0)) for r in group) / n, 4)) if n else None
        return {"tasks": n, "success": mean("success") if mean else 0.0, "DR": mean("DR") if mean else 0.0,
                "progress": mean("progress") if mean else 0.0,
                "return": round(sum(r["return"] for r in group) / n, 4) if n else 0.0}

    by: dict[str, dict[str, list[dict[str, Any]]]] = {key: defaultdict(list) for key in
                                                      ("bucket", "category", "obstacle", "language")}
    for record in records:
        by["bucket"][record["bucket"]].append(record)
        by["category"][record["category"]].append(record)
        by["language"][record["language"]].append(record)
        for obstacle in record["obstacles"] or ["none"]:
            by["obstacle"][obstacle].append(record)
    return {"overall": summary(records),
            **{key: {name: summary(group) for name, group in sorted(groups.items())} for key, groups in by.items()}}
