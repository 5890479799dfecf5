"""A third suite registered only by tests (tests/test_suites.py): everything a suite is, in one small module — its
runtime part (data, store, env), its scoring part and its baseline — to show that adding a suite is one folder per
package and one registry entry, with no branch elsewhere.

The toy: each item asks for the sum of two numbers; ``finish`` with the right sum scores 1.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any, Mapping

import gymnasium as gym

from mobility_agents.base import Agent, EpisodeSession
from mobility_rewards.runs import ScoreRow, ScoreTable
from mobility_rewards.suites import SuiteScoring

ITEMS = {"t1": (2, 3), "t2": (10, 20), "t3": (7, 8)}
FINISH = {"type": "function", "function": {"name": "finish", "parameters": {
    "type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}}}


class ToyStore:
    ids = list(ITEMS)

    def task_scenario(self, item_id: str) -> str:
        return "addition"


def data_path(data: str | os.PathLike | None) -> tuple[Path, str]:
    return Path(__file__).resolve(), "bundled"


def open_store(data: Any, lookup_config: Any = None) -> ToyStore:
    return ToyStore()


def open_run(path: Path, lookup_config: Any = None) -> tuple[ToyStore, None]:
    return ToyStore(), None


def fixed_tools() -> list[dict[str, Any]]:
    return [FINISH]


class ToyEnv(gym.Env[str, Any]):
    metadata = {"render_modes": []}
    observation_space = gym.spaces.Text(1000)
    action_space = gym.spaces.Text(1000)

    def __init__(self, store: ToyStore, max_steps: int = 3):
        self.store, self.max_steps, self.item = store, max_steps, "t1"

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        self.item = (options or {}).get("toy_id") or (options or {}).get("episode_id") or "t1"
        a, b = ITEMS[self.item]
        return f"{a}+{b}?", {"query": f"{a}+{b}?", "context": {}, "tools": [FINISH], "suite": "toy"}

    def step(self, action: Any) -> tuple[str, float, bool, bool, dict[str, Any]]:
        call = json.loads(action) if isinstance(action, str) else action
        right = str(sum(ITEMS[self.item])) == str(call["arguments"]["answer"])
        info = {"metrics": {"success": float(right)}, "verdict": {"passed": right}, "task_scenario": "addition"}
        return "done", float(right), True, False, info

    def abandon(self, reason: str = "") -> dict[str, Any]:
        return {"metrics": {"success": 0.0}, "verdict": {"passed": False, "reason": reason}}


def make_env(store: ToyStore, **options: Any) -> ToyEnv:
    return ToyEnv(store, **options)


class ToyAgent(Agent):
    name = "rule"

    def play(self, session: EpisodeSession) -> None:
        a, b = (int(x) for x in session.query.rstrip("?").split("+"))
        session.finish(str(a + b))


def _scorecard(records: list[Mapping[str, Any]]) -> str:
    wins = sum(r["metrics"].get("success", 0.0) for r in records)
    return f"toy: {wins:g}/{len(records)} right"


def _rows(records: list[Mapping[str, Any]]) -> dict[str, dict[str, float]]:
    return {"overall": {"success": sum(r["metrics"].get("success", 0.0) for r in records) / max(1, len(records))}}


def _evaluate(args: argparse.Namespace, run_dir: Path) -> int:
    return 0


def _report(run_dir: Path, run: dict[str, Any]) -> int:
    return 0


def _table(records: list[Mapping[str, Any]]) -> ScoreTable:
    return ScoreTable(rows=[ScoreRow("overall", "overall", len(records), _rows(records)["overall"])],
                      columns=["success"], headline="success", shares=frozenset({"success"}))


SCORING = SuiteScoring(scorecard=_scorecard, repeat_rows=_rows, repeat_columns=("success",), weights=lambda: dict,
                       evaluate=_evaluate, report=_report, format_versions=lambda: {"toy_version": 1},
                       table=_table, card=lambda records: {"overall": _rows(records)["overall"]})
