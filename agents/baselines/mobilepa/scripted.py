"""Agents and a scorecard for ``MobilePA-v0``.

* :class:`PhoneOracleAgent` replays the task's ``oracle_calls`` and answers with ``oracle_answer``
  (privileged: an upper bound and a self-check of the sandbox, tasks and verifier together; it must
  pass every task);
* :class:`FinishAtOnceAgent` answers without acting (a floor: it must pass nothing);
* the rule baseline, which plays from observations only, is
:class:`mobility_agents.baselines.mobilepa.rule.PhoneRuleAgent`;
* both are :class:`~mobility_agents.base.Agent` s (``mobility-env run --env MobilePA-v0 --agent oracle``)
  and also give their whole action list up front (``actions(env, task_id)``) for :func:`play_tasks`;
* :func:`play_tasks` plays tasks with such an agent directly on an env and returns one record per task;
* :func:`phone_scorecard` (from :mod:`mobility_rewards.mobilepa.scorecard`) aggregates records by bucket,
  category, obstacle and language.
"""

from __future__ import annotations

from typing import Any, Iterable

from mobility_env.mobilepa.env import MobilePAEnv
from mobility_env.mobilepa.labels import task_labels
from mobility_rewards.mobilepa.scorecard import format_phone_scorecard, phone_scorecard

from ...base import Agent, AgentFailure, EpisodeSession

__all__ = ["FinishAtOnceAgent", "PhoneOracleAgent", "format_phone_scorecard", "phone_scorecard", "play_tasks"]


class _ScriptedPhoneAgent(Agent):
    """Plays the list :meth:`actions` returns, through the session (so the runner records every step)."""

    def actions(self, env: MobilePAEnv, task_id: str) -> list[dict[str, Any]]:
        raise NotImplementedError

    def play(self, session: EpisodeSession) -> None:
        env = session.env.unwrapped
        if not isinstance(env, MobilePAEnv):
            raise AgentFailure("wrong_env", f"{self.name} plays MobilePA-v0 tasks, not {type(env).__name__}")
        for action in self.actions(env, session.info["task_id"]):
            session.step(action)
            if session.done:
                return


class PhoneOracleAgent(_ScriptedPhoneAgent):
    name = "oracle"

    def actions(self, env: MobilePAEnv, task_id: str) -> list[dict[str, Any]]:
        task = env.tasks[task_id]
        return [{"name": c.name, "arguments": dict(c.arguments)} for c in task.oracle_calls] + \
            [{"name": "finish", "arguments": {"answer": task.oracle_answer}}]


class FinishAtOnceAgent(_ScriptedPhoneAgent):
    name = "finish_at_once"

    def actions(self, env: MobilePAEnv, task_id: str) -> list[dict[str, Any]]:
        return [{"name": "finish", "arguments": {"answer": "好的，已完成。"}}]


def play_tasks(agent: Any, env: MobilePAEnv, task_ids: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """One record per task: ``task_id``, labels, ``metrics``, ``verdict``, ``return``, ``steps``, ``trajectory``."""
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
        records.append({"task_id": task_id, "agent": agent.name, **task_labels(env.tasks[task_id]),
                        "metrics": info.get("metrics", {}), "verdict": info.get("verdict"), "return": round(total, 6),
                        "steps": steps, "trajectory": info.get("trajectory")})
    return records
