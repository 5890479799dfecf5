"""Tasks of the five later domains (``generate_domains.py``, generator version 5): every family makes checked tasks in
both languages; the bundled set holds them in every domain, category, language and obstacle kind, on the schedule
the generator states, without changing any other task; and the cheapest wrong plays fail every one of them.

The wrong plays, on each bundled task of the later domains (played through the sandbox, judged by the verifier):

* ``finish_only``: no call, the oracle's answer;
* ``skip_the_fix``: the oracle's calls without what cleared a state dependency or a permission (``set_airplane_mode``,
  ``set_wifi``, ``set_location_service``, ``grant_permission``) — the refused call is then retried unchanged;
* ``another_record``: the oracle's calls with the id of the record acted on (chat, product, order, reminder, device,
  scene, photo, album, contact) replaced by another id of the same table in ``S_0``;
* ``checkout_anyway`` (tasks that forbid ``checkout_cart``): the oracle's calls, then a checkout;
* ``pay_without_asking`` (checkouts that must ask): the oracle's calls without the question.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from typing import Any

import pytest

from mobility_env.mobilepa import generate, generate_domains
from mobility_env.mobilepa.catalogue import PHONE_TOOLS
from mobility_env.mobilepa.env import BUNDLED_TASKS
from mobility_env.mobilepa.episode import play
from mobility_env.mobilepa.generate import DOMAIN_TASK_TOOLS, DOMAIN_TOOLS, generate_tasks
from mobility_env.mobilepa.tasks import CATEGORIES, PhoneTask, load_tasks
from mobility_rewards.mobilepa.verify import verify_phone_task

DOMAINS = tuple(generate_domains.FAMILY_DOMAINS)
CASES = [(category, family.__name__) for category, families in generate_domains.FAMILIES.items()
         for family in families]
FIXES = ("set_airplane_mode", "set_wifi", "set_location_service", "grant_permission")
#: The argument naming the record a call acts on, and the table (and column) its other values come from.
RECORD_ARGUMENTS = {"chat_id": ("chats", "chat_id"), "product_id": ("products", "product_id"),
                    "order_id": ("orders", "order_id"), "medication_id": ("medications", "medication_id"),
                    "device_id": ("home_devices", "device_id"), "scene_id": ("home_scenes", "scene_id"),
                    "photo_id": ("photos", "photo_id"), "contact_id": ("contacts", "contact_id")}


def _domain_of(task: PhoneTask) -> str | None:
    """The later domain whose tools the task's oracle uses (None: a task of the first catalogue or of maps)."""
    used = {PHONE_TOOLS[c.name].domain for c in task.oracle_calls if c.name in PHONE_TOOLS}
    later = used & set(DOMAINS)
    assert len(later) <= 1, (task.task_id, later)
    return next(iter(later), None)


@pytest.fixture(scope="module")
def bundled() -> list[PhoneTask]:
    return load_tasks(BUNDLED_TASKS)


@pytest.fixture(scope="module")
def domain_tasks(bundled) -> list[PhoneTask]:
    return [t for t in bundled if _domain_of(t) is not None]


# ---------------------------------------------------------------------------------------------------- families
def test_the_families_cover_every_domain_in_every_category():
    family_domain = {name: domain for domain, names in generate_domains.FAMILY_DOMAINS.items() for name in names}
    assert {name for _, name in CASES} == set(family_domain)
    covered = {(family_domain[name], category) for category, name in CASES}
    assert covered == {(domain, category) for domain in DOMAINS for category in CATEGORIES}
    assert set(DOMAINS) == {PHONE_TOOLS[t].domain for t in DOMAIN_TOOLS}
    assert set(DOMAIN_TASK_TOOLS) == set(generate.BASE_TOOLS) | set(DOMAIN_TOOLS)


@pytest.mark.parametrize("category, name", CASES)
def test_every_family_makes_checked_tasks_in_both_languages(monkeypatch, category, name):
    family = getattr(generate_domains, name)
    monkeypatch.setitem(generate_domains.FAMILIES, category, (family,))
    domain = next(d for d, names in generate_domains.FAMILY_DOMAINS.items() if name in names)
    queries = set()
    for language in ("zh", "en"):
        for seed in range(3):
            # _generate_one runs check_task: the oracle passes; finishing at once, every offered tool and acting
            # without asking fail (a GenerationError otherwise)
            task = generate._generate_one(f"{name}-{language}-{seed}", random.Random(seed), category, language,
                                          verify_phone_task, "domains")
            assert task.language == language and task.category == category and task.dimension == "basic"
            assert _domain_of(task) == domain, (task.task_id, [c.name for c in task.oracle_calls])
            assert set(task.action_space) <= set(DOMAIN_TASK_TOOLS)
            if language == "zh":
                assert re.search(r"[\u4e00-\u9fff]{2}", task.query), task.query
            else:
                assert re.search(r"\b[A-Za-z]{2,}\b", task.query), task.query  # (it may name a Chinese contact)
            if category == "error_recovery":
                assert any(o["kind"] != "missing_parameter" for o in task.obstacles), task.task_id
            if category == "intent_correction":
                assert task.history and task.history[0]["role"] == "user"
            queries.add(task.query)
    assert len(queries) >= 3, queries  # several phrasings and values, not one template


def test_the_schedule_changes_no_other_task(monkeypatch):
    """Tasks outside the later domains' blocks are drawn as if those blocks did not exist (as version 4 drew them)."""
    with_domains = generate_tasks(80, 3, verify=verify_phone_task)
    every, fourth, block = generate.DOMAINS_EVERY, generate.DOMAINS_BLOCK, len(CATEGORIES) * 2
    assert (every, fourth) == (4, 3)  # the rule the module docstring and the data card state
    monkeypatch.setattr(generate, "DOMAINS_BLOCK", 99)  # no block is the later domains'
    without = generate_tasks(80, 3, verify=verify_phone_task)
    for index, (new, old) in enumerate(zip(with_domains, without)):
        scheduled = new.dimension == "basic" and (index // block) % every == fourth
        assert (new == old) != scheduled, index
        assert (_domain_of(new) is not None) == scheduled, index


# ---------------------------------------------------------------------------------------------------- bundled set
def test_the_bundled_set_holds_the_later_domains_on_schedule(bundled, domain_tasks):
    block = len(CATEGORIES) * 2
    scheduled = [t for i, t in enumerate(bundled) if t.dimension == "basic" and generate._basic_kind(i, block) ==
                 "domains"]
    assert scheduled == domain_tasks and len(domain_tasks) == 231
    by_domain = Counter(_domain_of(t) for t in domain_tasks)
    assert set(by_domain) == set(DOMAINS) and min(by_domain.values()) >= 35, by_domain
    assert {(_domain_of(t), t.category) for t in domain_tasks} == {(d, c) for d in DOMAINS for c in CATEGORIES}
    assert {(_domain_of(t), t.language) for t in domain_tasks} == {(d, lang) for d in DOMAINS for lang in ("zh", "en")}
    assert {t.bucket for t in domain_tasks} == {"tool_call", "state_change", "behaviour"}
    kinds = Counter(o["kind"] for t in domain_tasks for o in t.obstacles)
    assert set(kinds) == {"runtime_exception", "permission_block", "state_change", "missing_parameter"}, kinds


def _settings(task: PhoneTask) -> dict[str, str]:
    return {r["key"]: r["value"] for r in task.initial_state["settings"]}


def test_the_domains_state_dependencies_are_planted_and_cleared(domain_tasks):
    """Airplane mode against the network, Wi-Fi and Bluetooth off against the home hub, location off against an
    outdoor workout, a withdrawn permission: each is in some ``S_0``, and the oracle clears what it meets."""
    seen = Counter()
    for task in domain_tasks:
        settings, calls = _settings(task), [(c.name, c.arguments) for c in task.oracle_calls]
        if any(o["kind"] == "state_change" for o in task.obstacles):
            if settings["airplane_mode"] == "on":
                seen["network"] += ("set_airplane_mode", {"on": False}) in calls
            elif settings["wifi"] == settings["bluetooth"] == "off" and "home_devices" in task.initial_state:
                seen["hub"] += ("set_wifi", {"on": True}) in calls
            elif settings.get("location") == "off":
                seen["location"] += ("set_location_service", {"on": True}) in calls
        if any(o["kind"] == "permission_block" for o in task.obstacles):
            withdrawn = [(p["app"], p["permission"]) for p in task.initial_state["permissions"] if not p["granted"]]
            seen["permission"] += any(name == "grant_permission" and (args["app"], args["permission"]) in withdrawn
                                      and args["app"] in ("chat", "payments", "health", "home", "gallery")
                                      for name, args in calls)
        if task.gold_behaviour is not None and task.gold_behaviour.must_ask and "payment_methods" in task.initial_state:
            assert not any(m["is_default"] for m in task.initial_state["payment_methods"])
            seen["no_default_payment"] += 1
    assert set(seen) == {"network", "hub", "location", "permission", "no_default_payment"}, seen
    assert min(seen.values()) >= 2, seen


# ---------------------------------------------------------------------------------------------------- wrong plays
def _other_ids(task: PhoneTask, argument: str, value: Any) -> list[Any]:
    table, column = RECORD_ARGUMENTS[argument]
    return [r[column] for r in task.initial_state.get(table, []) if r[column] != value]


def wrong_plays(task: PhoneTask) -> dict[str, tuple[list[tuple[str, dict[str, Any]]], str]]:
    """The cheap plays of the module docstring that apply to ``task``, by name."""
    plan = [(c.name, dict(c.arguments)) for c in task.oracle_calls]
    answer = task.oracle_answer
    out = {"finish_only": ([], answer)}
    if any(name in FIXES for name, _ in plan):
        out["skip_the_fix"] = ([c for c in plan if c[0] not in FIXES], answer)
    made = play(task).calls  # (a call refused by a planted obstacle and retried is no record choice)
    writes = [i for i, (name, _) in enumerate(plan) if name in DOMAIN_TOOLS and PHONE_TOOLS[name].writes
              and made[i].succeeded]
    for index in writes:
        name, args = plan[index]
        argument = next((a for a in RECORD_ARGUMENTS if a in args and _other_ids(task, a, args[a])), None)
        if argument is not None:
            changed = {**args, argument: _other_ids(task, argument, args[argument])[0]}
            out["another_record"] = (plan[:index] + [(name, changed)] + plan[index + 1:], answer)
            break
    if task.gold_behaviour is not None and "checkout_cart" in task.gold_behaviour.forbidden:
        out["checkout_anyway"] = (plan + [("checkout_cart", {})], answer)
    if task.gold_behaviour is not None and task.gold_behaviour.must_ask:
        out["act_without_asking"] = ([c for c in plan if c[0] != "ask_user"], answer)
    return out


def test_the_cheapest_wrong_plays_fail_every_domain_task(domain_tasks):
    tried: Counter[str] = Counter()
    passed: Counter[str] = Counter()
    for task in domain_tasks:
        assert verify_phone_task(task, play(task)).passed, task.task_id
        for name, (calls, answer) in wrong_plays(task).items():
            tried[name] += 1
            passed[name] += verify_phone_task(task, play(task, calls, answer)).passed
    print("\nwrong plays on the later domains' tasks (tried, passed):", {k: (tried[k], passed[k]) for k in tried})
    assert sum(passed.values()) == 0, passed
    assert tried["finish_only"] == len(domain_tasks)
    assert tried["skip_the_fix"] >= 50 and tried["another_record"] >= 150, tried
    assert tried["checkout_anyway"] >= 5 and tried["act_without_asking"] >= 5, tried
