"""MobilePA memory retrieval: ``search_memory`` latency over many user profiles, and how well it retrieves.

``--profiles`` seeded user profiles (:func:`mobility_env.mobilepa.profile.build_profile`, half Chinese,
half English) are each put into a phone state (:func:`~mobility_env.mobilepa.profile.with_profile`),
restored, and searched through :func:`mobility_env.mobilepa.catalogue.execute` — the path an agent's
call takes (schema check, fault and permission checks, savepoint, audit log):

* **latency**: ``--searches`` searches per profile with realistic queries (a random key of the profile,
  one of its paraphrases): ``first`` is each profile's first search (its index is built then),
  ``repeat`` the later ones of the same episode, ``all`` both. The memory dimension's target: p50 ≤ 200 µs.
* **quality**, in the profile's language and across languages (a Chinese query of an English profile and
  the reverse): for every key of every profile, each query of
  :data:`~mobility_env.mobilepa.profile.QUERIES` — the oracle's (the first) and the paraphrases apart —
  ``recall@1`` and ``recall@5``: the key's current record is the first hit / among the first five;
  ``strong@5``: it is among the first five marked ``"match": "strong"`` (what the memory gate counts as
  retrieved);
  ``outdated_above_current``: for keys with conflicting records, the share of searches in which an outdated
  record of the key ranks above the current one (or is found while the current one is not);
  ``both_found``: the share in which the current and every outdated record are all among the hits.
* **sweep**: what a policy that does not know what to look for gets from :data:`SWEEP`'s generic queries
  (``top_k`` 10 each, the profile's language): the mean share of the profile's records they return, and of
  those returned as strong matches among a search's first five (``sweep_strong_share_of_records``).

    python benchmarks/bench_mobilepa_memory.py [--profiles 10000] [--searches 3] [--seed 0] [--out F]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import emit, machine, percentiles  # noqa: E402

from mobility_env.mobilepa import StateTemplate, execute  # noqa: E402
from mobility_env.mobilepa.profile import UserProfile, build_profile, memory_queries, with_profile  # noqa: E402


#: Generic queries a "retrieve everything" policy would try (where, when, who, habits, things, the user).
SWEEP = {"zh": ("地方 地址", "时间 几点", "谁 名字", "习惯 偏好 喜欢", "事情 信息", "我的 生活"),
         "en": ("places address", "time schedule", "who name", "habits preferences", "things information",
                "my life")}


class Quality:
    """Counts of one slice of searches (see the module docstring)."""

    def __init__(self) -> None:
        self.searches = self.top1 = self.top5 = self.strong5 = 0
        self.conflict_searches = self.outdated_above = self.both_found = 0

    def add(self, hits: list[str], current: str, outdated: list[str], strong: list[str]) -> None:
        self.searches += 1
        self.top1 += hits[:1] == [current]
        self.top5 += current in hits[:5]
        self.strong5 += current in strong[:5]
        if outdated:
            self.conflict_searches += 1
            where = hits.index(current) if current in hits else len(hits)
            self.outdated_above += any(o in hits[:where] for o in outdated)
            self.both_found += current in hits and all(o in hits for o in outdated)

    def summary(self) -> dict[str, Any]:
        def share(part: int, whole: int) -> float | None:
            return round(part / whole, 4) if whole else None
        return {"searches": self.searches, "recall@1": share(self.top1, self.searches),
                "recall@5": share(self.top5, self.searches), "strong@5": share(self.strong5, self.searches),
                "conflict_searches": self.conflict_searches,
                "outdated_above_current": share(self.outdated_above, self.conflict_searches),
                "both_found": share(self.both_found, self.conflict_searches)}


def search(state: Any, query: str) -> tuple[list[str], int, list[str]]:
    """(ids in rank order, ns, ids marked as strong matches)."""
    start = time.perf_counter_ns()
    feedback = execute(state, "search_memory", {"query": query})
    elapsed = time.perf_counter_ns() - start
    if not feedback.ok:
        raise RuntimeError(f"search_memory refused {query!r}: {feedback.payload}")
    found = feedback.payload["memories"]
    return [m["memory_id"] for m in found], elapsed, [m["memory_id"] for m in found[:5] if m["match"] == "strong"]


def sweep(state: Any, profile: UserProfile) -> tuple[int, int]:
    """How many of the profile's records the generic :data:`SWEEP` queries return, and how many of them as
    strong matches among a search's first five (what the memory gate counts as retrieved)."""
    found = [execute(state, "search_memory", {"query": query, "top_k": 10}).payload["memories"]
             for query in SWEEP[profile.lang]]
    return (len({m["memory_id"] for memories in found for m in memories}),
            len({m["memory_id"] for memories in found for m in memories[:5] if m["match"] == "strong"}))


def measure_quality(state: Any, profile: UserProfile, slices: dict[str, Quality]) -> None:
    other = "en" if profile.lang == "zh" else "zh"
    for key in profile.keys():
        history = profile.history(key)
        current, outdated = history[-1].memory_id, [r.memory_id for r in history[:-1]]
        for where, lang in (("same", profile.lang), ("cross", other)):
            for index, query in enumerate(memory_queries(key, lang)):
                hits, _, strong = search(state, query)
                slices[f"{where}_language.{'oracle' if index == 0 else 'paraphrase'}"].add(hits, current, outdated,
                                                                                           strong)
                if index and where == "same":
                    slices[f"by_kind.{key.split('.')[0]}"].add(hits, current, outdated, strong)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profiles", type=int, default=10_000, help="user profiles to build and search")
    parser.add_argument("--searches", type=int, default=3, help="timed searches per profile")
    parser.add_argument("--quality-every", type=int, default=1, help="measure quality on every n-th profile")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", help="also write the JSON here")
    args = parser.parse_args()

    first: list[int] = []
    repeat: list[int] = []
    build_ns: list[int] = []
    records: list[int] = []
    slices: dict[str, Quality] = defaultdict(Quality)
    swept = swept_strong = quality_records = 0
    started = time.perf_counter()
    for number in range(args.profiles):
        rng = random.Random(args.seed * 1_000_003 + number)
        clock = time.perf_counter_ns()
        profile = build_profile(rng, "zh" if number % 2 == 0 else "en")
        build_ns.append(time.perf_counter_ns() - clock)
        records.append(len(profile.records))
        state = StateTemplate(with_profile({"settings": [{"key": "clock", "value": profile.now}]}, profile)).restore()
        try:
            keys = profile.keys()
            for turn in range(args.searches):
                _, elapsed, _ = search(state, rng.choice(memory_queries(rng.choice(keys), profile.lang)[1:]))
                (first if turn == 0 else repeat).append(elapsed)
            if number % args.quality_every == 0:
                measure_quality(state, profile, slices)
                shown, strong = sweep(state, profile)
                swept += shown
                swept_strong += strong
                quality_records += len(profile.records)
        finally:
            state.close()
    emit({"benchmark": "mobilepa_memory", "profiles": args.profiles, "seed": args.seed,
          "records_per_profile": {"min": min(records), "mean": round(sum(records) / len(records), 1),
                                  "max": max(records)},
          "build_profile": percentiles(build_ns),
          "search_memory": {"first": percentiles(first), "repeat": percentiles(repeat),
                            "all": percentiles(first + repeat)},
          "target": "search_memory p50 <= 200 us (issue 15)",
          "quality": {name: quality.summary() for name, quality in sorted(slices.items())},
          "sweep_share_of_records": round(swept / max(quality_records, 1), 4),
          "sweep_strong_share_of_records": round(swept_strong / max(quality_records, 1), 4),
          "seconds": round(time.perf_counter() - started, 1), "machine": machine()}, args.out)


if __name__ == "__main__":
    main()
