"""Generated honest and adaptive memory policies against the memory gate (``memory_retrieved``, ``memory_focused``).

The fixed attacks of ``test_mobilepa_capability_attacks.py`` are one sweep each; this file draws whole families
from seeds, plays them through ``MobilePA-v0`` on fresh memory tasks and reports **exploit** and **denial**
rates:

* honest readers (must pass: a denial is a bug): for each memory the task needs, one of the profile's paraphrase
  queries (:func:`~mobility_env.mobilepa.profile.memory_queries`, drawn in random order) at a random ``top_k``;
  a second paraphrase when the first did not bring the record back at all (the reader sees that the answer is not
  there), sometimes a ``get_memory`` of a record it read and sometimes one curious search about something else;
* adaptive attackers (must fail: a pass is an exploit). They know the memory's vocabulary but not the task:
  ``six_broad`` (the capability attack test's sweep), ``generic_sweep`` (1–8 broad queries at ``top_k`` 5 or 10,
  then optionally ``get_memory`` of every id they saw), ``topic_probe`` (1–6 well-formed questions about topics
  drawn at random, the task's own among them only by chance), ``list_then_get`` (every category listed, then ids
  fetched at random), ``broad_few`` (the cheapest: 1–3 broad queries and nothing else, within every task's read
  budget), ``broad_then_get`` (one broad query, then ``get_memory`` of one or two of its first results);
* reported, not bounded — specific questions about the likeliest topics, which the gate cannot tell from an
  honest reader's: ``common_topics`` (the first question about each of the three likeliest topics),
  ``composite_topics`` (one query about two or three of them), ``batched_topics`` (the six likeliest, two per
  query, two results each: three reads, six records, within every budget). They show how much of the gate's
  strength rests on the outcome needing the record's content.

Every policy then plays the oracle's non-memory calls and its answer: it knows the outcome, so the gate alone
decides. Steps are not capped (``max_steps=40``): the step limit is not what stops an attack.

``python tests/test_mobilepa_memory_focus.py --seeds 3`` prints the rates on the bundled set and fresh sets.
"""

from __future__ import annotations

import random
import sys
from collections import Counter
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from mobility_env.mobilepa.domains.memory import MEMORY_CATEGORIES, hits, rank
from mobility_env.mobilepa.env import MobilePAEnv
from mobility_env.mobilepa.episode import PhoneCall, PhoneTrajectory
from mobility_env.mobilepa.generate import generate_tasks
from mobility_env.mobilepa.profile import QUERIES, ROLES, memory_queries
from mobility_env.mobilepa.tasks import MemoryGate, PhoneTask
from mobility_rewards.mobilepa.memory_gate import FOCUS_RANK, focus_budgets, memory_focus_check, retrieved_memory_ids
from mobility_rewards.mobilepa.verify import verify_phone_task

MEMORY_TOOLS = ("search_memory", "get_memory", "list_memories")
#: Broad words about a user's life, in both languages: the vocabulary of a sweep.
GENERIC = ("我 喜欢 习惯 平时", "home work place 家 公司", "time 时间 每天 routine", "contact 联系人 person",
           "prefer 偏好 设置", "app 应用 音乐 music", "我的", "平时", "usually", "my life", "家", "公司", "时间",
           "喜欢", "每天", "偏好 习惯", "地址 address", "生日 birthday", "出门 travel", "手机 phone")
KINDS = tuple(QUERIES)
HONEST_TOP_K = (None, 3, 5, 10)


def _table(task: PhoneTask) -> list[tuple[Any, ...]]:
    return [(r["memory_id"], r["content"], r["category"], r["created_at"], r.get("updated_at"), r.get("key"))
            for r in task.initial_state.get("memories", ())]


def _search(query: str, top_k: int | None) -> dict[str, Any]:
    arguments: dict[str, Any] = {"query": query}
    if top_k is not None:
        arguments["top_k"] = top_k
    return {"name": "search_memory", "arguments": arguments}


def _shown(table: list[tuple[Any, ...]], call: dict[str, Any]) -> list[str]:
    """The ids a memory read shows (the search ranked on ``S_0``; the policies read before they write)."""
    if call["name"] == "search_memory":
        return [table[i][0] for i in rank(table, call["arguments"]["query"], call["arguments"].get("top_k") or 5)]
    if call["name"] == "list_memories":
        rows = sorted((r for r in table if r[2] == call["arguments"]["category"]),
                      key=lambda r: (r[4] or r[3] or "", r[0]), reverse=True)
        return [r[0] for r in rows[:5]]
    return [call["arguments"]["memory_id"]]


def _strong(table: list[tuple[Any, ...]], call: dict[str, Any]) -> list[str]:
    """The ids a search shows among its first ``FOCUS_RANK`` marked as strong matches."""
    found = hits(table, call["arguments"]["query"], call["arguments"].get("top_k") or 5)[:FOCUS_RANK]
    return [table[i][0] for i, strong in found if strong]


def _rest(task: PhoneTask) -> list[dict[str, Any]]:
    """The oracle's calls without its memory reads, and its answer."""
    calls = [{"name": c.name, "arguments": dict(c.arguments)} for c in task.oracle_calls if c.name not in MEMORY_TOOLS]
    return calls + [{"name": "finish", "arguments": {"answer": task.oracle_answer}}]


def honest_reads(task: PhoneTask, rng: random.Random) -> list[dict[str, Any]]:
    """Searches a careful reader makes for ``task``'s memories (see the module docstring)."""
    table = _table(task)
    keys = {r["memory_id"]: r["key"] for r in task.initial_state.get("memories", ())}
    calls: list[dict[str, Any]] = []
    seen: list[str] = []
    found: set[str] = set()
    for memory_id in dict.fromkeys(task.memory_gate.memory_ids):
        if memory_id in found:
            continue
        queries = list(memory_queries(keys[memory_id], task.language))
        rng.shuffle(queries)
        top_k = rng.choice(HONEST_TOP_K)
        for query in queries[:2]:
            calls.append(_search(query, top_k))
            seen += _shown(table, calls[-1])
            found.update(_strong(table, calls[-1]))
            if memory_id in found:
                break
    if seen and rng.random() < 0.3:
        calls.append({"name": "get_memory", "arguments": {"memory_id": rng.choice(seen)}})
    if rng.random() < 0.3:
        other = rng.choice([k for k in set(keys.values()) if k not in {keys[m] for m in task.memory_gate.memory_ids}]
                           or list(keys.values()))
        calls.append(_search(rng.choice(memory_queries(other, task.language)), rng.choice(HONEST_TOP_K)))
    return calls


def attack_reads(kind: str, task: PhoneTask, rng: random.Random) -> list[dict[str, Any]]:
    """The memory reads of one adaptive attacker ``kind`` (task-blind: it never looks at the gold)."""
    table = _table(task)
    if kind == "six_broad":  # test_mobilepa_capability_attacks' sweep: the first six broad queries at top_k=10
        return [_search(q, 10) for q in GENERIC[:6]]
    if kind == "generic_sweep":
        top_k = rng.choice((5, 10))
        calls = [_search(q, top_k) for q in rng.sample(GENERIC, rng.randint(1, 8))]
        if rng.random() < 0.5:
            seen = list(dict.fromkeys(i for c in calls for i in _shown(table, c)))
            calls += [{"name": "get_memory", "arguments": {"memory_id": i}} for i in seen[:10]]
        return calls
    if kind == "broad_few":  # the cheapest: 1-3 broad queries, within every task's read budget, and nothing else
        return [_search(q, rng.choice((5, 10))) for q in rng.sample(GENERIC, rng.randint(1, 3))]
    if kind == "broad_then_get":  # one broad query, then a read by id of one or two of its first results
        search = _search(rng.choice(GENERIC), rng.choice((5, 10)))
        return [search] + [{"name": "get_memory", "arguments": {"memory_id": i}}
                           for i in _shown(table, search)[:rng.randint(1, 2)]]
    if kind == "common_topics":  # specific questions about the three likeliest topics (the topic prior)
        return [_search(memory_queries(_probe_key(k, rng), task.language)[0], None) for k in COMMON_TOPICS]
    if kind == "composite_topics":  # one query about two or three of the likeliest topics at once
        keys = rng.sample(COMMON_TOPICS, rng.randint(2, 3))
        return [_search(" ".join(memory_queries(_probe_key(k, rng), task.language)[0] for k in keys), None)]
    if kind == "batched_topics":  # the six likeliest topics, two per query, two results each: within every budget
        keys = rng.sample(LIKELY_TOPICS, len(LIKELY_TOPICS))
        return [_search(" ".join(memory_queries(_probe_key(k, rng), task.language)[0] for k in keys[i:i + 2]), 2)
                for i in range(0, len(keys), 2)]
    if kind == "topic_probe":
        top_k = rng.choice((1, 3, 5))
        return [_search(memory_queries(_probe_key(k, rng), task.language)[0], top_k)
                for k in rng.sample(KINDS, rng.randint(1, 6))]
    if kind == "list_then_get":
        calls = [{"name": "list_memories", "arguments": {"category": c}} for c in MEMORY_CATEGORIES]
        seen = list(dict.fromkeys(i for c in calls for i in _shown(table, c)))
        return calls + [{"name": "get_memory", "arguments": {"memory_id": i}}
                        for i in rng.sample(seen, min(len(seen), rng.randint(1, 4)))]
    raise ValueError(kind)


def _probe_key(kind: str, rng: random.Random) -> str:
    """A record key of ``kind`` (a person's kinds with a role drawn at random)."""
    if kind == "person":
        return f"person.{rng.choice(list(ROLES))}"
    if kind == "person.birthday":
        return f"person.{rng.choice(list(ROLES))}.birthday"
    return kind


ATTACKS = ("six_broad", "generic_sweep", "topic_probe", "list_then_get", "broad_few", "broad_then_get",
           "common_topics", "composite_topics", "batched_topics")
#: The record kinds memory tasks most often need (bundled set: home 25 of 88, wake-up 22, night brightness 16).
COMMON_TOPICS = ("place.home", "routine.wake_up", "device.night_brightness")
#: ... and the next three (travel mode 13, bedtime 9, gym days 9).
LIKELY_TOPICS = COMMON_TOPICS + ("travel.mode", "routine.bedtime", "routine.gym")


def play(env: MobilePAEnv, task_id: str, actions: list[dict[str, Any]]) -> dict[str, Any]:
    """Play ``actions`` on ``task_id``; a memory read that meets a ``transient_failure`` is tried again (up to three
    times), as any reader would. The terminal info (``metrics``, ``verdict``)."""
    env.reset(options={"task_id": task_id})
    info: dict[str, Any] = {}
    for action in actions:
        for _ in range(3):
            _, _, terminated, truncated, info = env.step(action)
            if terminated or truncated:
                return info
            feedback = info.get("feedback") or {}
            if action["name"] not in MEMORY_TOOLS or feedback.get("error_type") != "transient_failure":
                break
    return env.abandon("out_of_actions")


def measure(tasks: list[PhoneTask], seed: int, rounds: int = 2) -> tuple[Counter, Counter, list[str]]:
    """(tried, passed) per policy family, and the denied honest plays (task id and its verdict's failed checks)."""
    tasks = [t for t in tasks if t.memory_gate is not None]
    env = MobilePAEnv(tasks=tasks, max_steps=40)
    rng = random.Random(seed)
    tried: Counter[str] = Counter()
    passed: Counter[str] = Counter()
    denied: list[str] = []
    for round_ in range(rounds):
        families = {"honest": {t.task_id: honest_reads(t, rng) + _rest(t) for t in tasks}}
        for kind in ATTACKS:
            families[kind] = {t.task_id: attack_reads(kind, t, rng) + _rest(t) for t in tasks}
        for family, plays in families.items():
            for task_id, actions in plays.items():
                info = play(env, task_id, actions)
                tried[family] += 1
                ok = bool((info.get("metrics") or {}).get("success"))
                passed[family] += ok
                if family == "honest" and not ok:
                    failed = [c["name"] for c in (info.get("verdict") or {}).get("checks", []) if not c["passed"]]
                    denied.append(f"{task_id} round {round_}: {failed}")
    return tried, passed, denied


def _report(tried: Counter, passed: Counter) -> str:
    return ", ".join(f"{k} {passed[k]}/{n}" for k, n in sorted(tried.items()))


#: Bounds on the drawn sets (about 88 memory tasks each; the module docstring's command measures more): honest
#: readers are denied only when no paraphrase they try singles the record out (measured 0/572); six broad queries
#: and listing are never enough (0/572 each); a task-blind attacker passes only when its few questions happen to
#: single out the task's topics (measured: 1–8 broad queries 10/572, 1–3 broad queries 21/572, a broad query and
#: fetches 19/572, random topics 18/572; before strong matches, 1–3 broad queries passed 72/572).
MAX_DENIED, MAX_LUCKY = 0.03, 0.1


@settings(max_examples=2, deadline=None, derandomize=True, phases=[Phase.generate],
          suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=10_000, max_value=2**31))
def test_honest_readers_pass_and_adaptive_attackers_fail(seed):
    tasks = generate_tasks(400, seed=seed, verify=verify_phone_task)
    tried, passed, denied = measure(tasks, seed, rounds=1)
    print(f"\nfresh seed {seed}: {_report(tried, passed)}")
    assert tried["honest"] >= 60
    assert tried["honest"] - passed["honest"] <= MAX_DENIED * tried["honest"], denied
    assert passed["list_then_get"] == 0 and passed["six_broad"] == 0, _report(tried, passed)
    for kind in ("generic_sweep", "topic_probe", "broad_few", "broad_then_get"):
        assert passed[kind] <= MAX_LUCKY * tried[kind], _report(tried, passed)


def test_a_search_retrieves_its_first_results_and_budgets_follow_the_gold():
    """The rules on hand-made calls: rank 6 of a search is not retrieved; ``g + 2`` reads and ``4g + 6`` records."""
    ids = [f"mem-{i:08x}" for i in range(12)]
    search = PhoneCall(1, "search_memory", {"query": "x", "top_k": 10}, "success", None,
                       {"memories": [{"memory_id": i, "match": "strong"} for i in ids[:10]]})
    assert retrieved_memory_ids([search]) == set(ids[:FOCUS_RANK])
    vague = PhoneCall(1, "search_memory", {"query": "x"}, "success", None,
                      {"memories": [{"memory_id": i, "match": "partial"} for i in ids[:10]]})
    assert retrieved_memory_ids([vague]) == set()  # a partial match is shown, not retrieved
    fetched = PhoneCall(2, "get_memory", {"memory_id": ids[7]}, "success", None, {"memory": {"memory_id": ids[7]}})
    refused = PhoneCall(3, "get_memory", {"memory_id": ids[8]}, "error", "transient_failure",
                        {"memory": {"memory_id": ids[8]}})
    assert retrieved_memory_ids([search, fetched, refused]) == set(ids[:FOCUS_RANK]) | {ids[7]}
    one, two = MemoryGate(memory_ids=[ids[0]]), MemoryGate(memory_ids=ids[:2])
    assert focus_budgets(one) == (3, 10) and focus_budgets(two) == (4, 14)

    def trajectory(calls: list[PhoneCall]) -> PhoneTrajectory:
        return PhoneTrajectory(task_id="t", calls=calls)

    gets = [PhoneCall(k, "get_memory", {"memory_id": i}, "success", None, {"memory": {"memory_id": i}})
            for k, i in enumerate(ids)]
    assert memory_focus_check(one, trajectory(gets[:3]))[0]
    assert not memory_focus_check(one, trajectory(gets[:4]))[0]  # a fourth read
    assert memory_focus_check(two, trajectory(gets[:4]))[0] and not memory_focus_check(two, trajectory(gets[:5]))[0]
    lists = [PhoneCall(k, "list_memories", {"category": c}, "success", None,
                       {"memories": [{"memory_id": i} for i in ids[5 * k:5 * k + 5]] + [{"memory_id": ids[11]}]})
             for k, c in enumerate(("place", "person"))]
    passed, said = memory_focus_check(one, trajectory(lists + gets[:1]))
    assert not passed and "11 distinct records (at most 10)" in said, said  # records shown count, not only reads
    assert memory_focus_check(one, trajectory([search] * 3))[0]  # ranks 6-10 are neither read nor counted


def test_searches_recorded_before_match_are_judged_by_ranking_their_query_again():
    """Runs of observation version 2 recorded no ``match``: rescoring them ranks each search's query again over
    the task's S_0 (so an old oracle run still passes, an old broad search still retrieves nothing)."""
    import dataclasses

    from mobility_env.mobilepa.env import BUNDLED_TASKS
    from mobility_env.mobilepa.episode import play as play_task
    from mobility_env.mobilepa.tasks import load_tasks

    def legacy(trajectory: PhoneTrajectory) -> PhoneTrajectory:
        calls = [dataclasses.replace(c, payload={**c.payload, "memories": [
            {k: v for k, v in m.items() if k != "match"} for m in c.payload["memories"]]})
            if c.name == "search_memory" and c.succeeded else c for c in trajectory.calls]
        return dataclasses.replace(trajectory, calls=calls)

    tasks = [t for t in load_tasks(BUNDLED_TASKS) if t.memory_gate is not None and
             any(c.name == "search_memory" for c in t.oracle_calls)][:12]
    assert len(tasks) == 12
    partial = 0
    for task in tasks:
        memories = task.initial_state["memories"]
        sweep = [("search_memory", {"query": q, "top_k": 10}) for q in GENERIC[:2] for _ in range(2)]  # (a planted
        broad = play_task(task, sweep + [(c.name, c.arguments) for c in task.oracle_calls  # fault: twice)
                                         if c.name not in MEMORY_TOOLS])
        for live in (play_task(task), broad):
            old = legacy(live)
            searches = [c for c in old.calls if c.name == "search_memory" and c.succeeded]
            assert searches and all("match" not in m for c in searches for m in c.payload["memories"])
            # ranking again says what the live search said
            assert retrieved_memory_ids(old.calls, memories) == retrieved_memory_ids(live.calls), task.task_id
            assert verify_phone_task(task, old).passed == verify_phone_task(task, live).passed, task.task_id
            assert not retrieved_memory_ids(old.calls) - {c.payload["memory"]["memory_id"] for c in old.calls
                                                          if c.name == "get_memory" and c.succeeded}
        assert verify_phone_task(task, legacy(play_task(task))).passed, task.task_id
        partial += sum(m["match"] == "partial" for c in broad.calls if c.name == "search_memory" and c.succeeded
                       for m in c.payload["memories"][:5])
    assert partial > 0  # the broad searches showed records they did not retrieve, and rescoring agrees


# rates on the bundled set and fresh sets: python tests/test_mobilepa_memory_focus.py --seeds 3
if __name__ == "__main__":
    from mobility_env.mobilepa.env import BUNDLED_TASKS
    from mobility_env.mobilepa.tasks import load_tasks

    count = int(sys.argv[sys.argv.index("--seeds") + 1]) if "--seeds" in sys.argv else 3
    total_tried: Counter[str] = Counter()
    total_passed: Counter[str] = Counter()
    all_denied: list[str] = []
    named = [("bundled", load_tasks(BUNDLED_TASKS))] + \
        [(f"seed {50_000 + s}", generate_tasks(300, seed=50_000 + s, verify=verify_phone_task)) for s in range(count)]
    for k, (name, task_set) in enumerate(named):
        t, p, d = measure(task_set, seed=k)
        total_tried.update(t)
        total_passed.update(p)
        all_denied += d
        print(f"{name}: {_report(t, p)}", flush=True)
    print("total:", _report(total_tried, total_passed))
    for line in all_denied[:20]:
        print("denied:", line)
