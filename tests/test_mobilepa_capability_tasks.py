"""MobilePA capability tasks: the memory, skill and sub-agent families, the dimension mix by position, the
gates' floors, conflict resolution, memory modifications, and the bundled set played through ``MobilePA-v0``.

The gate helpers (``memory_gate_check``, ``skill_gate_check``, ``handoff_gate_check``) are called directly, beside
``verify_phone_task``: a floor must fail *because of its gate*, not by accident of its bucket.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from pathlib import Path
from typing import Any

import gymnasium
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mobility_env  # noqa: F401  (registers MobilePA-v0)
from mobility_agents.baselines.mobilepa.scripted import FinishAtOnceAgent, PhoneOracleAgent, phone_scorecard, play_tasks
from mobility_env.errors import ConfigError
from mobility_env.mobilepa import generate, generate_memory, generate_skills, generate_subagents
from mobility_env.mobilepa.episode import play
from mobility_env.mobilepa.generate import dimension_plan, generate_tasks
from mobility_env.mobilepa.generate_checks import adversaries, gate_floors
from mobility_env.mobilepa.skills import SKILLS, offered_skill_ids
from mobility_env.mobilepa.tasks import CATEGORIES, DIMENSIONS, PhoneTask, load_tasks
from mobility_rewards.mobilepa.delegation_gates import handoff_gate_check, skill_gate_check
from mobility_rewards.mobilepa.memory_gate import memory_gate_check
from mobility_rewards.mobilepa.verify import verify_phone_task

BUNDLED = Path(__file__).resolve().parents[1] / "datasets" / "mobilepa"
#: The shares the mix keeps: memory is the paper's (376 of 1,705 tasks); skill and sub-agent are the generator's.
SHARES = {"memory": 376 / 1705, "skill": 0.13, "subagent": 0.10}
USED_TO = re.compile(r"以前|used to")


@pytest.fixture(scope="module")
def bundled() -> list[PhoneTask]:
    return load_tasks(BUNDLED)


def _gate(task: PhoneTask, trajectory: Any) -> bool:
    if task.memory_gate is not None:
        return memory_gate_check(task.memory_gate, trajectory)[0]
    if task.skill_gate is not None:
        return skill_gate_check(task.skill_gate, trajectory)[0]
    assert task.handoff_gate is not None
    return handoff_gate_check(task.handoff_gate, trajectory)[0]


# ------------------------------------------------------------------------------------------------- the mix
def test_the_mix_by_position_at_100_and_at_the_papers_size():
    assert Counter(dimension_plan(100)) == {"basic": 55, "memory": 22, "skill": 13, "subagent": 10}
    paper = Counter(dimension_plan(1705))
    assert paper["memory"] == 376 and sum(paper.values()) == 1705
    assert paper == {"basic": 937, "memory": 376, "skill": 222, "subagent": 170}


def test_every_prefix_holds_each_dimension_within_one_task_of_its_share():
    counts: Counter[str] = Counter()
    shares = {**SHARES, "basic": 1 - sum(SHARES.values())}
    for size, dimension in enumerate(dimension_plan(20_000), 1):
        counts[dimension] += 1
        assert all(abs(counts[d] - shares[d] * size) < 1 for d in DIMENSIONS), (size, counts)


def test_a_choice_of_dimensions_renormalises_and_basic_alone_is_all_basic():
    assert set(dimension_plan(50, ("basic",))) == {"basic"}
    two = Counter(dimension_plan(1705, ("basic", "memory")))
    assert set(two) == {"basic", "memory"} and abs(two["memory"] / 1705 - (376 / 1705) / (1 - 0.23)) < 1 / 1705
    with pytest.raises(ConfigError):
        generate_tasks(3, 0, dimensions=("memory", "vision"), verify=verify_phone_task)
    with pytest.raises(ConfigError):
        generate_tasks(3, 0, dimensions=(), verify=verify_phone_task)


def _dumps(tasks: list[PhoneTask]) -> list[str]:
    return [t.model_dump_json(exclude_none=True) for t in tasks]


def test_same_seed_same_tasks_a_prefix_is_the_smaller_set_and_basic_positions_do_not_move():
    first = generate_tasks(24, 11, verify=verify_phone_task)
    assert _dumps(first) == _dumps(generate_tasks(24, 11, verify=verify_phone_task))
    assert _dumps(first[:9]) == _dumps(generate_tasks(9, 11, verify=verify_phone_task))
    assert {t.dimension for t in first} == set(DIMENSIONS)
    basic = generate_tasks(24, 11, dimensions=("basic",), verify=verify_phone_task)
    for mixed, alone in zip(first, basic):  # a basic task is the basic-only set's task at that position
        if mixed.dimension == "basic":
            assert _dumps([mixed]) == _dumps([alone])


def test_each_dimension_covers_every_category_and_language(bundled):
    seen = Counter((t.dimension, t.category, t.language) for t in bundled)
    assert set(seen) == {(d, c, lang) for d in DIMENSIONS for c in CATEGORIES for lang in ("zh", "en")}
    manifest = json.loads((BUNDLED / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["counts"]["dimension"] == dict(sorted(Counter(t.dimension for t in bundled).items()))
    assert manifest["dimensions"] == list(DIMENSIONS) and manifest["generator_version"] == generate.GENERATOR_VERSION


# ------------------------------------------------------------------------------------------------- every family
MODULES = {"memory": generate_memory, "skill": generate_skills, "subagent": generate_subagents}
CASES = [(dimension, category, family.__name__) for dimension, module in MODULES.items()
         for category, families in module.FAMILIES.items() for family in dict.fromkeys(families)]


@pytest.mark.parametrize("dimension, category, name", CASES)
def test_every_family_makes_checked_tasks_in_both_languages(monkeypatch, dimension, category, name):
    family = getattr(MODULES[dimension], name)
    monkeypatch.setitem(generate.CAPABILITY_FAMILIES, dimension, {category: (family,)})
    for language, seed in (("zh", 1), ("en", 2)):
        # _generate_one runs check_task: the oracle passes, the adversaries and the gate floors fail
        task = generate._generate_one(f"{name}-{language}", random.Random(seed), category, language,
                                      verify_phone_task, dimension)
        assert task.dimension == dimension and task.language == language and task.category == category
        if language == "zh":
            assert re.search(r"[\u4e00-\u9fff]{2}", task.query), task.query
        else:
            assert re.search(r"\b[A-Za-z]{3,}\b", task.query), task.query
        oracle = play(task)
        assert verify_phone_task(task, oracle).passed and _gate(task, oracle)


# ------------------------------------------------------------------------------------------------- the gates' floors
def _floors_fail(task: PhoneTask) -> list[str]:
    """The floors of a capability task that fail both its verifier and (for the gate floors) its gate."""
    oracle = play(task)
    assert verify_phone_task(task, oracle).passed and _gate(task, oracle), task.task_id
    failed = []
    for name, (calls, answer) in {**adversaries(task, oracle), **gate_floors(task, oracle)}.items():
        trajectory = play(task, calls, answer)
        assert not verify_phone_task(task, trajectory).passed, (task.task_id, name)
        if name in gate_floors(task, oracle):
            assert not _gate(task, trajectory), (task.task_id, name)
        failed.append(name)
    return failed


@settings(deadline=None, derandomize=True, max_examples=12)
@given(st.integers(0, 2 ** 32))
def test_the_gate_floors_fail_on_fresh_seeds(seed):
    tasks = [t for t in generate_tasks(10, seed, verify=verify_phone_task) if t.dimension != "basic"]
    assert {t.dimension for t in tasks} == {"memory", "skill", "subagent"}
    for task in tasks:
        failed = set(_floors_fail(task))
        assert {"finish_only", "every_offered_tool"} <= failed
        if task.memory_gate is not None:
            assert "without_memory_reads" in failed
        if task.skill_gate is not None:
            assert {"skill_tools_without_loading", "every_skill_loaded"} <= failed
        if task.handoff_gate is not None:
            assert "every_agent" in failed and {f"payload_without_{k}" for k in task.handoff_gate.payload} <= failed


def test_on_the_bundled_set_every_gate_floor_fails(bundled):
    tried: Counter[str] = Counter()
    for task in bundled:
        if task.dimension != "basic":
            tried.update(re.sub(r"_without_\w+$", "_without_field", name) for name in _floors_fail(task))
    assert tried["without_memory_reads"] == 376 and tried["every_skill_loaded"] == 222 and tried["every_agent"] == 170
    assert tried["payload_without_field"] >= 3 * 170


def test_skill_only_tasks_hide_the_skills_tools_and_their_floor_is_refused_as_unknown(bundled):
    skill_tasks = [t for t in bundled if t.skill_gate is not None]
    assert {t.skill_gate.routing for t in skill_tasks} == {"skill_only", "mixed"}
    for task in skill_tasks:
        offered = offered_skill_ids(task.initial_state)
        assert task.skill_gate.skill_id in offered and len(offered) >= 2 and "load_skill" in task.action_space
        gold_tools = set(SKILLS[task.skill_gate.skill_id].tools)
        direct = gold_tools & set(task.action_space)
        used = {c.name for c in task.oracle_calls} & gold_tools
        if task.skill_gate.routing == "skill_only":
            assert not direct
            calls, answer = gate_floors(task, play(task))["skill_tools_without_loading"]
            refused = [c for c in play(task, calls, answer).calls if c.name in gold_tools]
            assert refused and all(c.error_type == "unknown_tool" for c in refused)
        else:
            assert direct and used - direct, task.task_id  # some tools direct, never every one the task needs


def test_a_payload_in_any_accepted_spelling_passes_and_the_gate_lists_the_requests_values(bundled):
    for task in (t for t in bundled if t.handoff_gate is not None):
        gate = task.handoff_gate
        plan = [(c.name, dict(c.arguments)) for c in task.oracle_calls]
        index = max(i for i, (name, _) in enumerate(plan) if name == gate.agent)
        for field, accepted in gate.payload.items():
            said = str(plan[index][1][field])
            if field in ("instruction", "items"):  # free text: an accepted phrase inside it
                assert any(phrase in said for phrase in accepted), (task.task_id, field, said)
                continue
            assert said in accepted, (task.task_id, field, said)
            for spelling in accepted:
                args = {**plan[index][1], field: int(spelling) if spelling.isdigit() else spelling}
                trajectory = play(task, plan[:index] + [(gate.agent, args)] + plan[index + 1:], task.oracle_answer)
                assert verify_phone_task(task, trajectory).passed, (task.task_id, field, spelling)


# ------------------------------------------------------------------------------------------------- memory tasks
def _records(task: PhoneTask) -> dict[str, dict[str, Any]]:
    return {r["memory_id"]: r for r in task.initial_state["memories"]}


def test_conflict_resolution_golds_the_newest_record_unless_the_request_asks_for_an_older_one(bundled):
    checked = Counter()
    for task in (t for t in bundled if t.memory_gate is not None):
        records = _records(task)
        for memory_id in task.memory_gate.memory_ids:
            key = records[memory_id]["key"]
            history = sorted((r for r in records.values() if r["key"] == key), key=lambda r: r["created_at"])
            newest = history[-1]["memory_id"] == memory_id
            if len(history) > 1:
                assert task.memory_gate.reasoning == "conflict_resolution", task.task_id
            deleting = any(c.name == "delete_memory" for c in task.oracle_calls)
            if deleting:  # forgetting an outdated record: the request names it
                assert newest or len(history) > 1, task.task_id
            elif USED_TO.search(task.query):
                assert len(history) > 1 and history[-2]["memory_id"] == memory_id, task.task_id
                checked["older"] += 1
            else:
                assert newest, (task.task_id, task.query)
                checked["newest" if len(history) > 1 else "single"] += 1
    assert checked["older"] >= 5 and checked["newest"] >= 10 and checked["single"] >= 10, checked


def test_memory_modifications_change_exactly_the_gold_record(bundled):
    modifications = [t for t in bundled if t.memory_gate and t.memory_gate.operation == "memory_modification"]
    assert {c.name for t in modifications for c in t.oracle_calls} >= {"update_memory", "delete_memory"}
    for task in modifications:
        (gold,) = task.memory_gate.memory_ids
        memories = task.gold_delta["memories"]
        if any(c.name == "update_memory" for c in task.oracle_calls):
            (changed,) = memories["changed"]
            assert changed["key"] == {"memory_id": gold} and set(memories) == {"changed"}
            content = changed["after"]["content"]
            assert content in task.query and content != changed["before"]["content"]  # the user's own words
            extra = set(task.gold_delta) - {"memories"}
            assert extra <= {"saved_places"}, task.task_id  # a move is also saved in the maps app
        else:
            assert [r["memory_id"] for r in memories["removed"]] == [gold] and set(task.gold_delta) == {"memories"}


def test_a_request_that_omits_the_preference_needs_the_memory(bundled):
    """The value the memory decides is nowhere in the request (the usual alarm time, brightness, route mode)."""
    for task in (t for t in bundled if t.memory_gate and t.memory_gate.operation == "phone_operation"):
        for call in task.oracle_calls:
            if call.name in ("create_alarm", "set_brightness", "set_dnd_schedule", "update_alarm"):
                for value in (call.arguments.get("time"), call.arguments.get("level"), call.arguments.get("start")):
                    assert value is None or str(value) not in task.query, (task.task_id, value)
            if call.name in ("start_navigation", "book_ride"):
                assert not re.search(r"开车|坐地铁|走路|by car|metro|on foot|快车|comfort|XL", task.query), task.query


# ------------------------------------------------------------------------------------------------- through the env
def test_the_bundled_set_through_gymnasium_make_oracle_100_and_finishing_at_once_0(bundled):
    env = gymnasium.make("MobilePA-v0").unwrapped
    assert len(env.task_ids) == len(bundled) == 1705
    card = phone_scorecard(play_tasks(PhoneOracleAgent(), env))
    assert card["overall"]["success"] == 1.0 and card["overall"]["weighted"]["score"] == 1.0
    assert set(card["dimension"]) == set(DIMENSIONS)
    assert all(row["success"] == 1.0 for group in ("dimension", "memory_reasoning", "memory_operation", "domain")
               for row in card[group].values())
    assert card["dimension"]["memory"]["tasks"] == 376  # the paper's count
    assert set(card["memory_reasoning"]) == {"single_lookup", "conflict_resolution"}
    assert set(card["memory_operation"]) == {"phone_operation", "memory_modification"}
    floor = phone_scorecard(play_tasks(FinishAtOnceAgent(), env))
    assert floor["overall"]["success"] == 0.0 and all(row["success"] == 0.0 for row in floor["dimension"].values())
