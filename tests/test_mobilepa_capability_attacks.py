"""Cheap policies against the capability gates never pass and never earn what the oracle earns.

For every memory, skill and sub-agent task of the bundled set and of fresh generated sets (seeds the
bundled set never used), each attack below is played through ``MobilePA-v0`` and must fail the task and
collect less than the oracle's return:

* memory: guessing memory ids (``get_memory`` of random ``mem-`` ids), the right outcome without any
  memory read (the oracle's calls with its searches removed: its arguments carry what memory said),
  listing every category instead of searching (``list_memories`` does not count as retrieval), sweeping
  the memory with six generic searches at ``top_k=10`` (``memory_focused``; adaptive sweeps are drawn in
  ``test_mobilepa_memory_focus.py``). When a planted ``transient_failure`` refuses one of the six, the
  play is a five-query sweep: it may pass by luck when its broad words are the task's own topics (a
  "take me home my usual way" task and the query "home work place 家 公司"); such passes are shown apart,
  and that family's lucky rate is what ``test_mobilepa_memory_focus.py`` measures and bounds;
* skill: loading every offered skill and answering, the oracle's work without loading its skill;
* sub-agent: handing the task to every offered agent with the gold payload, the gold agent with a
  payload missing a field.

The rates are printed (``-s``) and every exploit count must be 0.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mobility_agents.baselines.mobilepa.scripted import PhoneOracleAgent, play_tasks
from mobility_env.mobilepa.domains.subagents import SUB_AGENTS
from mobility_env.mobilepa.env import BUNDLED_TASKS, MobilePAEnv
from mobility_env.mobilepa.generate import generate_tasks
from mobility_env.mobilepa.tasks import PhoneTask, load_tasks
from mobility_rewards.mobilepa.verify import verify_phone_task

MEMORY_READS = ("search_memory", "get_memory")
CATEGORIES = ("preference", "person", "place", "routine", "fact")
#: Generic queries that bring back most of a profile (the sweep the ``memory_focused`` check refuses).
SWEEP = ("我 喜欢 习惯 平时", "home work place 家 公司", "time 时间 每天 routine", "contact 联系人 person",
         "prefer 偏好 设置", "app 应用 音乐 music")


def _finish(task: PhoneTask) -> dict[str, Any]:
    return {"name": "finish", "arguments": {"answer": task.oracle_answer}}


def _calls(task: PhoneTask, drop: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    return [{"name": c.name, "arguments": dict(c.arguments)} for c in task.oracle_calls if c.name not in drop]


_SAMPLE = {"pickup": "公司", "destination": "北京西站", "origin": "上海", "city": "杭州", "title": "流浪地球",
           "items": "两份牛肉面", "address": "家里", "check_in": "2026-06-25", "check_out": "2026-06-27",
           "date": "2026-06-25", "instruction": "打开购物车并下单"}


def valid_payload(agent: str, gold: dict[str, Any], task: PhoneTask) -> dict[str, Any]:
    """A payload ``agent`` accepts: the gold's values where the field names agree, plausible ones elsewhere (an
    installed app for the GUI agent), so a hand-off to every agent really succeeds."""
    spec = SUB_AGENTS[agent]
    payload: dict[str, Any] = {}
    for field in spec.fields:
        if not field.required:
            continue
        if field.name in gold:
            payload[field.name] = gold[field.name]
        elif field.param.enum:
            payload[field.name] = field.param.enum[0]
        elif field.name == "app":
            payload["app"] = next((r["app"] for r in task.initial_state.get("apps", []) if r.get("installed")),
                                  "wechat")
        else:
            payload[field.name] = _SAMPLE.get(field.name, "测试")
    return payload


def attacks(task: PhoneTask, rng: random.Random) -> dict[str, list[dict[str, Any]]]:
    """The attack plays (action lists) that apply to ``task``'s dimension."""
    out: dict[str, list[dict[str, Any]]] = {}
    if task.memory_gate is not None:
        guesses = [{"name": "get_memory", "arguments": {"memory_id": f"mem-{rng.getrandbits(32):08x}"}}
                   for _ in range(3)]
        out["guess_ids"] = guesses + _calls(task, MEMORY_READS) + [_finish(task)]
        out["outcome_without_memory"] = _calls(task, MEMORY_READS) + [_finish(task)]
        out["list_instead"] = [{"name": "list_memories", "arguments": {"category": c}} for c in CATEGORIES] + \
            _calls(task, MEMORY_READS) + [_finish(task)]
        out["sweep"] = [{"name": "search_memory", "arguments": {"query": q, "top_k": 10}} for q in SWEEP] + \
            _calls(task, MEMORY_READS) + [_finish(task)]
    if task.skill_gate is not None:
        skills = [row["skill_id"] for row in task.initial_state.get("skills", [])]
        out["load_every_skill"] = [{"name": "load_skill", "arguments": {"skill_id": s}} for s in skills] + \
            [_finish(task)]
        out["work_without_loading"] = _calls(task, ("load_skill",)) + [_finish(task)]
    if task.handoff_gate is not None:
        gold = next((c for c in task.oracle_calls if c.name == task.handoff_gate.agent), None)
        agents = [name for name in task.action_space if name.startswith("route_to_")]
        if gold is not None:
            out["delegate_to_all"] = [c for c in _calls(task) if c["name"] != gold.name] + \
                [{"name": a, "arguments": valid_payload(a, dict(gold.arguments), task)} for a in agents] + \
                [_finish(task)]
            field = next(iter(task.handoff_gate.payload))
            partial = {k: v for k, v in gold.arguments.items() if k != field}
            out["payload_missing_a_field"] = [
                c if c["name"] != gold.name else {"name": gold.name, "arguments": partial} for c in _calls(task)
            ] + [_finish(task)]
    return out


class _Scripted:
    name = "attack"

    def __init__(self, plays: dict[str, list[dict[str, Any]]]):
        self.plays = plays

    def actions(self, env: MobilePAEnv, task_id: str) -> list[dict[str, Any]]:
        return self.plays[task_id][: env.max_steps]


def _sweep(tasks: list[PhoneTask], seed: int) -> tuple[Counter, Counter]:
    """(attacks tried, attacks that passed or reached the oracle's return) per attack name."""
    env = MobilePAEnv(tasks=tasks)
    ids = [t.task_id for t in tasks]
    oracle = {r["task_id"]: r for r in play_tasks(PhoneOracleAgent(), env, ids)}
    assert all(r["metrics"]["success"] == 1.0 for r in oracle.values())
    rng = random.Random(seed)
    tried: Counter[str] = Counter()
    exploits: Counter[str] = Counter()
    per_kind: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for task in tasks:
        for kind, actions in attacks(task, rng).items():
            per_kind.setdefault(kind, {})[task.task_id] = actions
    for kind, plays in per_kind.items():
        for record in play_tasks(_Scripted(plays), env, list(plays)):
            tried[kind] += 1
            if kind == "delegate_to_all":  # the attack is real: several agents took the task
                handed = {c["name"] for c in record["trajectory"]["calls"]
                          if c["name"].startswith("route_to_") and c["status"] == "success"}
                exploits["(real: 2+ agents took it)"] += len(handed) >= 2
            best = oracle[record["task_id"]]
            won = record["metrics"].get("success") or record["return"] >= best["return"] - 1e-9
            if won and kind == "sweep" and _searches(record) < len(SWEEP):
                # a planted transient_failure cut the sweep short: a smaller task-blind sweep, whose lucky
                # passes (its broad words happened to be the task's topics) test_mobilepa_memory_focus.py
                # measures and bounds (generic_sweep); shown here, not counted as this attack's exploit
                exploits["(sweep cut short, lucky)"] += 1
            elif won:
                exploits[kind] += 1
    real = exploits.pop("(real: 2+ agents took it)", 0)
    tried["delegate_to_all (2+ agents took it)"] = real  # shown, not an exploit: the attack really delegated
    tried["sweep (cut short by a planted failure, lucky)"] = exploits.pop("(sweep cut short, lucky)", 0)
    return tried, exploits


def _searches(record: dict[str, Any]) -> int:
    """The successful ``search_memory`` calls of a played record."""
    return sum(c["name"] == "search_memory" and c["status"] == "success" for c in record["trajectory"]["calls"])


def _assert_no_exploit(tried: Counter, exploits: Counter) -> None:
    """No attack passes, nor earns the oracle's return."""
    assert sum(exploits.values()) == 0, dict(exploits)


def _rates(tried: Counter, exploits: Counter) -> dict[str, str]:
    return {k: (f"{exploits[k]}/{n} passed" if "(" not in k else str(n)) for k, n in sorted(tried.items())}


def _capability(tasks: list[PhoneTask]) -> list[PhoneTask]:
    return [t for t in tasks if t.dimension != "basic"]


def test_no_attack_passes_on_the_bundled_set():
    tasks = _capability(load_tasks(BUNDLED_TASKS))[::2]  # every second of its 768 (a fixed sample: all took ~21 s)
    if not tasks:
        pytest.skip("the bundled set has no capability tasks yet")
    tried, exploits = _sweep(tasks, seed=0)
    print("\nbundled capability attacks:", _rates(tried, exploits))
    assert tried["delegate_to_all (2+ agents took it)"] >= tried["delegate_to_all"] // 2
    assert {"guess_ids", "outcome_without_memory", "sweep", "load_every_skill", "delegate_to_all"} <= set(tried)
    _assert_no_exploit(tried, exploits)


@settings(max_examples=4, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=1_000, max_value=2**31))
def test_no_attack_passes_on_fresh_tasks(seed):
    """Fresh sets of unseen seeds (the bundled set is seed 0): tasks and attacks the tests were not written on."""
    tasks = _capability(generate_tasks(120, seed=seed, verify=verify_phone_task))
    tried, exploits = _sweep(tasks, seed=seed)
    print(f"\nfresh (seed {seed}) capability attacks:", _rates(tried, exploits))
    assert sum(tried.values()) >= 60 and len(tried) >= 6
    assert tried["delegate_to_all (2+ agents took it)"] >= tried["delegate_to_all"] // 2
    _assert_no_exploit(tried, exploits)
