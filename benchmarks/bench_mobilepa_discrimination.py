"""MobilePA discrimination: does the benchmark tell a template matcher from a model that reads the request?

Three agents — the oracle (:class:`~mobility_agents.baselines.mobilepa.scripted.PhoneOracleAgent`, privileged: it
replays the gold), the rule agent (:class:`~mobility_agents.baselines.mobilepa.rule.PhoneRuleAgent`, keywords and
regexes) and a trivial agent that finishes at once
(:class:`~mobility_agents.baselines.mobilepa.scripted.FinishAtOnceAgent`) — are scored
(:func:`~mobility_rewards.mobilepa.scorecard.phone_scorecard`: success, per dimension, category and domain, and the
paper's weighted score) on three task sets:

* ``in_distribution``: the bundled set (``--standard``, default ``datasets/mobilepa``), every task;
* ``heldout``: the held-out phrasing split (``--heldout``, default ``datasets/mobilepa-heldout``: the same tasks
  with the user's words re-rendered by :mod:`mobility_env.mobilepa.heldout_phrasing`);
* ``paired_standard``: the standard versions of exactly the held-out tasks (same ids, S0 and gold), so that
  ``paired_standard`` vs ``heldout`` differs in the words only.

Prints the JSON (``--out F`` writes it) and, on stderr, its Markdown tables (the data card's): success per
dimension and category of every agent and split, and the rule agent's per domain on the paired tasks.

    python benchmarks/bench_mobilepa_discrimination.py [--standard DIR] [--heldout DIR] [--limit N] [--out F]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import REPO, emit, machine  # noqa: E402

from mobility_agents.baselines.mobilepa.rule import PhoneRuleAgent  # noqa: E402
from mobility_agents.baselines.mobilepa.scripted import FinishAtOnceAgent, PhoneOracleAgent, play_tasks  # noqa: E402
from mobility_env.mobilepa.env import MobilePAEnv  # noqa: E402
from mobility_rewards.mobilepa.scorecard import phone_scorecard  # noqa: E402

AGENTS = ("oracle", "rule", "finish_at_once")
SPLITS = ("in_distribution", "paired_standard", "heldout")


def records(agent: str, env: MobilePAEnv, task_ids: list[str]) -> list[dict[str, Any]]:
    """One scorecard record per task of ``task_ids``, played by ``agent``."""
    if agent == "rule":
        rule = PhoneRuleAgent()
        return [rule.run_episode(env, task_id)["result"] for task_id in task_ids]
    return play_tasks(PhoneOracleAgent() if agent == "oracle" else FinishAtOnceAgent(), env, task_ids)


def summary(card: dict[str, Any]) -> dict[str, Any]:
    """What the discrimination tables show of a scorecard: success overall, per dimension, category and domain."""
    return {"tasks": card["overall"]["tasks"], "success": card["overall"]["success"],
            "weighted": card["overall"]["weighted"]["score"],
            **{group: {name: {"tasks": row["tasks"], "success": row["success"]}
                       for name, row in card.get(group, {}).items()} for group in ("dimension", "category", "domain")}}


def markdown(result: dict[str, Any]) -> str:
    """The success table: one row per agent and split, a column per dimension and category."""
    columns: list[tuple[str, str]] = []
    for group in ("dimension", "category"):
        names = sorted({name for split in result["splits"].values() for agent in split.values()
                        for name in agent[group]})
        columns += [(group, name) for name in names]
    head = "| split | agent | tasks | success | weighted | " + " | ".join(n for _, n in columns) + " |"
    lines = [head, "|" + "---|" * (5 + len(columns))]
    for split, agents in result["splits"].items():
        for agent, row in agents.items():
            cells = [f"{row[g][n]['success']:.1%} ({row[g][n]['tasks']})" if n in row[g] else "—" for g, n in columns]
            lines.append(f"| {split} | {agent} | {row['tasks']} | {row['success']:.1%} | {row['weighted']:.1%} | "
                         + " | ".join(cells) + " |")
    return "\n".join(lines)


def domain_markdown(result: dict[str, Any], agent: str = "rule") -> str:
    """``agent``'s success per domain on the paired standard tasks and on the held-out split (the same tasks)."""
    paired, held = result["splits"]["paired_standard"][agent]["domain"], result["splits"]["heldout"][agent]["domain"]
    lines = [f"| domain | tasks | {agent}: standard words | {agent}: held-out words |", "|---|---:|---:|---:|"]
    lines += [f"| {name} | {row['tasks']} | {row['success']:.1%} | {held[name]['success']:.1%} |"
              for name, row in sorted(paired.items())]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--standard", type=Path, default=REPO / "datasets" / "mobilepa")
    parser.add_argument("--heldout", type=Path, default=REPO / "datasets" / "mobilepa-heldout")
    parser.add_argument("--limit", type=int, default=None, help="score only the first N tasks of each set")
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    standard, heldout = MobilePAEnv(args.standard), MobilePAEnv(args.heldout)
    missing = [t for t in heldout.task_ids if t not in standard.tasks]
    if missing:
        raise SystemExit(f"{len(missing)} held-out tasks have no standard twin in {args.standard} (e.g. {missing[0]}):"
                         f" were both generated from the same seed and plan?")
    held_ids = heldout.task_ids[:args.limit]
    plays = {"in_distribution": (standard, standard.task_ids[:args.limit]),
             "paired_standard": (standard, held_ids), "heldout": (heldout, held_ids)}
    result: dict[str, Any] = {"benchmark": "mobilepa_discrimination", "machine": machine(),
                              "standard": str(args.standard), "heldout": str(args.heldout), "splits": {}}
    for split, (env, task_ids) in plays.items():
        result["splits"][split] = {agent: summary(phone_scorecard(records(agent, env, task_ids)))
                                   for agent in AGENTS}
    result["seconds"] = round(time.perf_counter() - started, 1)
    emit(result, args.out)
    print(markdown(result) + "\n\n" + domain_markdown(result), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
