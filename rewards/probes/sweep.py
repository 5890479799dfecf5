"""The seeded sweep: a fixed number of answers per usable episode, exploits and denials counted, and its report.

Usable episodes are those the audit does not block whose reference answer passes (:func:`usable_facts`);
:func:`load_usable` reads them from episode files or built directories that the caller names (the real sample and
the bundled set, for the tests and the benchmarks: the package knows no data path).
"""

from __future__ import annotations

import random
from collections import defaultdict
from pathlib import Path
from typing import Any, Iterable, Sequence

from mobility_env.mobilitybench.episode import Episode
from mobility_env.mobilitybench.loaders import load_episodes
from mobility_rewards.mobilitybench.audit import audit_episodes, blocking_episode_ids

from .draw import RandomDraw
from .facts import EpisodeFacts, build_facts
from .registry import CORRECT, WRONG, Answer, applicable, score


# -- the usable episodes -----------------------------------------------------------------------------------------------


class FactsPool(list):
    """A list of :class:`EpisodeFacts` with a one-line repr (it is a test argument)."""

    def __repr__(self) -> str:
        return f"<{len(self)} usable episodes>"


def usable_facts(episodes: Sequence[Episode]) -> tuple[list[EpisodeFacts], dict[str, int]]:
    """Facts of non-blocking episodes whose reference answer passes, and why the rest were skipped."""
    episodes = list(episodes)
    blocked = blocking_episode_ids(audit_episodes(episodes))
    skipped = {"blocking_audit": 0, "no_usable_evidence": 0, "reference_fails": 0}
    candidates = []
    for episode in episodes:
        if episode.episode_id in blocked:
            skipped["blocking_audit"] += 1
        else:
            candidates.append(episode)
    facts_list = build_facts(candidates)
    skipped["no_usable_evidence"] = len(candidates) - len(facts_list)
    usable = FactsPool()
    for facts in facts_list:
        text, index = facts.reference
        if score(facts, Answer("reference", True, text, index)).fpr == 1.0:
            usable.append(facts)
        else:
            skipped["reference_fails"] += 1
    return usable, skipped


def load_usable(paths: Iterable[Path]) -> tuple[list[EpisodeFacts], dict[str, Any]]:
    """Usable facts of the episodes of ``paths`` (episode files or built directories; a missing one is skipped: the
    tests and benchmarks pass the real sample, which a fresh clone lacks, and the bundled synthetic set)."""
    episodes: list[Episode] = []
    sources = {}
    for path in paths:
        if Path(path).exists():
            loaded = list(load_episodes(path))
            episodes += loaded
            sources[str(path)] = len(loaded)
    usable, skipped = usable_facts(episodes)
    return usable, {"sources": sources, "episodes": len(episodes), "usable": len(usable), "skipped": skipped}


# -- the sweep ---------------------------------------------------------------------------------------------------------


def _tally() -> dict[str, Any]:
    return {"n": 0, "failed": 0}


def _rate(failed: int, n: int) -> float:
    return round(failed / n, 4) if n else 0.0


def sweep(facts_list: Sequence[EpisodeFacts], per_episode: int, seed: int = 0,
          examples_per_kind: int = 3) -> dict[str, Any]:
    """Score ``per_episode`` answers per episode (half correct, half wrong, kinds round-robin).

    A *denial* is a correct paraphrase scoring FPR 0; an *exploit* is a wrong variant scoring
    FPR 1. Deterministic: every answer is drawn from ``random.Random(f"{seed}:{episode}:{i}")``.
    """
    totals = {"correct": _tally(), "wrong": _tally()}
    by_scenario: dict[str, dict[str, dict[str, Any]]] = defaultdict(
        lambda: {"correct": _tally(), "wrong": _tally()})
    by_kind: dict[str, dict[str, dict[str, Any]]] = {"correct": defaultdict(_tally),
                                                     "wrong": defaultdict(_tally)}
    examples: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for facts in facts_list:
        kinds = {True: applicable(CORRECT, facts), False: applicable(WRONG, facts)}
        offset = sum(map(ord, facts.episode_id))
        for i in range(per_episode):
            correct = i % 2 == 0
            pool = kinds[correct]
            mutation = pool[(i // 2 + offset) % len(pool)]
            answer = mutation.make(facts, RandomDraw(random.Random(f"{seed}:{facts.episode_id}:{i}")))
            outcome = score(facts, answer)
            failed = outcome.leaked != correct  # a correct answer denied, or a wrong one passed
            side = "correct" if correct else "wrong"
            for tally in (totals[side], by_scenario[facts.scenario][side], by_kind[side][mutation.kind]):
                tally["n"] += 1
                tally["failed"] += failed
            if failed:
                kind_tally = by_kind[side][mutation.kind]
                kind_tally.setdefault("scenarios", defaultdict(int))[facts.scenario] += 1
                key = f"{side}:{mutation.kind}"
                if len(examples[key]) < examples_per_kind:
                    examples[key].append({"episode_id": facts.episode_id, "scenario": facts.scenario,
                                          "query": facts.episode.query, "answer": answer.text,
                                          "route_index": answer.route_index,
                                          "verdict": outcome.verdict["reason"]})

    def summary(tallies: dict[str, dict[str, Any]]) -> dict[str, Any]:
        c, w = tallies["correct"], tallies["wrong"]
        return {"correct": c["n"], "denied": c["failed"], "denial_rate": _rate(c["failed"], c["n"]),
                "wrong": w["n"], "leaked": w["failed"], "exploit_rate": _rate(w["failed"], w["n"])}

    kinds_out = {side: {kind: {"n": t["n"], "failed": t["failed"], "rate": _rate(t["failed"], t["n"]),
                               "scenarios": dict(t.get("scenarios", {}))}
                        for kind, t in sorted(tallies.items())} for side, tallies in by_kind.items()}
    return {"per_episode": per_episode, "seed": seed, "episodes": len(facts_list), "totals": summary(totals),
            "by_scenario": {s: summary(t) for s, t in sorted(by_scenario.items())}, "by_kind": kinds_out,
            "examples": dict(examples)}


def markdown_table(report: dict[str, Any]) -> str:
    """The sweep as Markdown: one row per scenario, then one per mutation kind that ran."""
    lines = ["| scenario | correct | denied | denial rate | wrong | exploits | exploit rate |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    rows = list(report["by_scenario"].items()) + [("**all**", report["totals"])]
    for name, s in rows:
        lines.append(f"| {name} | {s['correct']} | {s['denied']} | {s['denial_rate']:.1%} | {s['wrong']} | "
                     f"{s['leaked']} | {s['exploit_rate']:.1%} |")
    lines += ["", "| mutation kind | should | answers | failed | rate | where it failed |",
              "|---|---|---:|---:|---:|---|"]
    for side, label in (("correct", "pass"), ("wrong", "fail")):
        for kind, t in report["by_kind"][side].items():
            where = ", ".join(f"{s} {n}" for s, n in sorted(t["scenarios"].items(), key=lambda kv: -kv[1]))
            lines.append(f"| {kind} | {label} | {t['n']} | {t['failed']} | {t['rate']:.1%} | {where} |")
    return "\n".join(lines)
