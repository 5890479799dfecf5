"""The most frequent failing checks of a run, per task scenario, from its verdicts.

Each result record of a run (a ``results.jsonl`` line, or a line ``mobility-env eval`` wrote)
carries ``verdict``: :meth:`mobility_rewards.verdict.Verdict.to_dict` of the episode. This module
counts, per task scenario, in how many episodes each named check failed:

* a check counts **once per episode** when it failed in at least one of the episode's samples
  (``samples`` counts the failing samples); ``share`` = failing episodes / the scenario's
  episodes that have a verdict;
* a verdict that failed without a failing check is counted under a pseudo check:
  ``(not delivered)`` (no answer, truncation, an abandoned episode) or ``(nothing verified)``;
* each entry keeps one example: the reason of the first failing check in record order, and
  its episode id;
* records without a verdict (runs written before verdicts existed, or worker errors) are
  skipped and counted in ``without_verdict``; episode ids in ``exclude`` (the audit's blocking
  findings, as the scorecard lists them) are left out.

``failing_checks(records) -> dict`` returns plain JSON-safe data (it goes into
``report.json`` as ``failing_checks``); :func:`failing_checks_markdown` renders it as the
report's section "Most frequent failing checks".
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Iterable, Mapping

from mobility_env.mobilitybench.episode import SCENARIOS

TOP_CHECKS = 5
NOT_DELIVERED = "(not delivered)"
NOTHING_VERIFIED = "(nothing verified)"


def _failures_of(verdict: Mapping[str, Any]) -> dict[str, str]:
    """Failed check name -> reason of its first failure, for one sample's verdict dict."""
    failed: dict[str, str] = {}
    for check in verdict.get("checks") or []:
        if isinstance(check, Mapping) and not check.get("passed"):
            name = str(check.get("name") or "?")
            failed.setdefault(name, _reason(check))
    if not failed and not verdict.get("passed"):
        name = NOT_DELIVERED if not verdict.get("delivered") else NOTHING_VERIFIED
        failed[name] = str(verdict.get("reason") or "")
    return failed


def _reason(check: Mapping[str, Any]) -> str:
    if check.get("reason"):
        return str(check["reason"])
    if check.get("expected") or check.get("stated"):
        return f"expected {check.get('expected') or '-'}, stated {check.get('stated') or '-'}"
    return "failed"


def failing_checks(records: Iterable[Mapping[str, Any]], *, exclude: Iterable[str] = (),
                   top: int | None = TOP_CHECKS) -> dict[str, Any]:
    """Per task scenario, the ``top`` checks that failed in most episodes (``None``: all of them).

    Returns ``{"top", "scenarios": [{"scenario", "episodes", "failing_episodes", "checks":
    [{"check", "episodes", "samples", "share", "example", "example_episode"}]}],
    "without_verdict", "excluded"}``; scenarios in the paper's order, checks by descending
    episode count, then name.
    """
    excluded = set(exclude)
    episodes: dict[str, set[str]] = defaultdict(set)           # scenario -> episode ids with a verdict
    failing_episodes: dict[str, set[str]] = defaultdict(set)   # scenario -> episode ids with a failure
    by_check: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    samples: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    examples: dict[str, dict[str, tuple[str, str]]] = defaultdict(dict)
    without_verdict, skipped = 0, set()
    for record in records:
        episode_id = str(record.get("episode_id"))
        if episode_id in excluded:
            skipped.add(episode_id)
            continue
        verdict = record.get("verdict")
        if not isinstance(verdict, Mapping):
            without_verdict += 1
            continue
        scenario = str(record.get("task_scenario") or "?")
        episodes[scenario].add(episode_id)
        for name, reason in _failures_of(verdict).items():
            failing_episodes[scenario].add(episode_id)
            by_check[scenario][name].add(episode_id)
            samples[scenario][name] += 1
            examples[scenario].setdefault(name, (reason, episode_id))
    order = list(SCENARIOS) + sorted(set(episodes) - set(SCENARIOS))
    scenarios = []
    for scenario in order:
        if scenario not in episodes:
            continue
        n = len(episodes[scenario])
        ranked = sorted(by_check[scenario].items(), key=lambda item: (-len(item[1]), item[0]))
        ranked = ranked if top is None else ranked[:max(0, top)]
        scenarios.append({
            "scenario": scenario, "episodes": n, "failing_episodes": len(failing_episodes[scenario]),
            "checks": [{"check": name, "episodes": len(ids), "samples": samples[scenario][name],
                        "share": len(ids) / n, "example": examples[scenario][name][0],
                        "example_episode": examples[scenario][name][1]} for name, ids in ranked],
        })
    return {"top": top, "scenarios": scenarios, "without_verdict": without_verdict, "excluded": sorted(skipped)}


def _md(text: Any, limit: int = 160) -> str:
    value = " ".join(str(text).split())
    value = value if len(value) <= limit else value[:limit - 1] + "…"
    return value.replace("|", "\\|")


def failing_checks_markdown(section: Mapping[str, Any]) -> str:
    """The "Most frequent failing checks" section of ``report.md`` (a ``failing_checks`` result)."""
    top = section.get("top", TOP_CHECKS)
    which = "the checks" if top is None else f"the {top} checks"
    lines = ["## Most frequent failing checks", "",
             f"Per task scenario, {which} that failed in the most episodes: episodes with the check "
             "failed, their share of the scenario's episodes with a verdict (n), and one example reason.", ""]
    clean = []
    for row in section.get("scenarios") or []:
        if not row["checks"]:
            clean.append(f"{row['scenario']} (n = {row['episodes']})")
            continue
        lines += [f"### {row['scenario']}", "",
                  f"n = {row['episodes']}, {row['failing_episodes']} with a failing check.", "",
                  "| check | episodes | share | example |", "|---|---|---|---|"]
        lines += [f"| {_md(c['check'], 60)} | {c['episodes']} | {100 * c['share']:.1f}% | "
                  f"{_md(c['example'])} ({_md(c['example_episode'], 40)}) |" for c in row["checks"]]
        lines.append("")
    if clean:
        lines += ["Every check passed in: " + ", ".join(clean) + ".", ""]
    if not section.get("scenarios"):
        lines += ["No result has a verdict.", ""]
    if section.get("without_verdict"):
        lines += [f"_{section['without_verdict']} result(s) without a verdict (a run recorded before verdicts, or a "
                  "worker error) are skipped in this section; `mobility-env eval` recomputes them from the "
                  "trajectories._", ""]
    return "\n".join(lines)
