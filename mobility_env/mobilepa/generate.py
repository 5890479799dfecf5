"""The seeded MobilePA task generator: tasks of the four capability dimensions in Chinese and English, each checked
before it ships.

:func:`generate_tasks` ``(n, seed, *, languages=("zh", "en"), dimensions=DIMENSIONS, verify)`` returns ``n`` tasks:

* **dimensions** by position (:func:`dimension_plan`): task ``i`` measures basic tool use, memory, skill
  or sub-agent use in the fixed proportions of :data:`DIMENSION_SHARES` (memory: the paper's 376 of 1,705;
  the others ours), each prefix of the plan as close to them as whole tasks allow. A capability task draws
  its family from :mod:`.generate_memory`, :mod:`.generate_skills` or :mod:`.generate_subagents` (by its
  category) and carries its dimension's gate; a basic task outside the later domains' blocks is generator version
  3's task at its position, byte for byte;
* **categories** in turn (basic task ``i`` exercises ``CATEGORIES[i % 5]``: grounding, conditional
  planning, state tracking, intent correction, error recovery; the ``k``-th task of a capability dimension
  ``CATEGORIES[k % 5]``, so each dimension covers every category alike), languages in turn within each
  category; the family of a task (brightness, a message to a contact, "if Wi-Fi is off …", a
  corrected alarm time …) is drawn from its category's families;
* **maps & travel**: basic task ``i`` is a maps task when its block of ``5 × len(languages)`` tasks is the
  second of every :data:`MAPS_EVERY` blocks; its family is drawn from :data:`.generate_maps.FAMILIES`
  (navigation, route facts, weather, rides … on places and routes the bundled MobilityBench set
  recorded). The other tasks draw exactly as they did before maps tasks existed;
* **the later domains** (generator version 5): basic task ``i`` is a task of messaging & social, shopping &
  payments, health & fitness, smart home or files & photos when its block is the fourth of every
  :data:`DOMAINS_EVERY` blocks (``(i // block) % 4 == 3``: one basic task in four, every category and language
  alike); its family is drawn from :data:`.generate_domains.FAMILIES`, which seeds the domain's rows (chats, a
  shop, health data, a home, a gallery) and its permission, and :func:`.generate_domains.blocker` plants the
  domain's state dependencies (airplane mode against a chat message, a checkout or a shared photo; Wi-Fi and
  Bluetooth off against a smart-home command; location off against an outdoor workout). Every other task is
  byte for byte version 4's;
* **ambiguous requests** (generator version 6): a basic grounding task whose block is the third of every
  :data:`AMBIGUITY_EVERY` blocks draws its family from :data:`.generate_ambiguity.FAMILIES` (two contacts with the
  request's name, two alarms at the request's time on the 12-hour dial): a ``behaviour`` task that must ask which
  record is meant. Every other task is version 5's, its ``user_replies`` now ``user_facts`` (the same replies);
* **reasoning** (generator version 7): in the first of every :data:`REASONING_EVERY` blocks (a block of the first
  catalogue's tools), a basic conditional task draws from :data:`.generate_reasoning.CHAIN` (read the day's first
  event, set an alarm before it, text the person it names: values only the phone knows) and a basic error-recovery
  task from :data:`.generate_reasoning.REFUSAL` (a withdrawn permission the user, asked first as the request demands,
  refuses: nothing may be granted or done — the one obstacle not to clear). Every other task is version 6's;
* **S0**: a realistic phone per task (:mod:`.generate_world`: contacts with Chinese and English names,
  a clock, several alarms and events) plus what the family adds and the **obstacles** planted against
  the calls it needs: a ``faults`` row with ``remaining`` 1–2 (runtime exception), the app's
  permission withdrawn (permission block), a setting that blocks the call — airplane mode, automatic
  brightness, a silent ringer, an alarm already there but off, location services off (state change).
  Error-recovery tasks always have one (sometimes two or three); others sometimes. Missing parameters are
  planted by the families themselves (the request leaves a value out, the user's fact supplies it, the
  task is a ``behaviour`` task that must ask);
* **gold** from the oracle played on ``S0`` through the sandbox (:mod:`.generate_oracle`): the
  successful state-changing calls (``tool_call``), the final delta (``state_change``; never written
  by hand), or must-ask / forbidden tools / facts the answer must name plus the delta (``behaviour``);
* **A0**: the tools the oracle used, the tools that clear their obstacles (offered whether or not
  one is planted, so ``A0`` does not give the obstacle away), and 1–3 distractors (same-domain where
  there are some; one always a state-changing tool, see :func:`_action_space`), shuffled; only the
  25 tools of :data:`BASE_TOOLS` are used (maps tasks: :data:`MAPS_TASK_TOOLS`; the later domains' tasks:
  :data:`DOMAIN_TASK_TOOLS`; capability tasks also :data:`CAPABILITY_TASK_TOOLS`), whatever else is registered.

Capability tasks build ``S_0`` and ``A_0`` the same way, plus what their draft adds: the user profile's
memories and the memory tools (memory), the offered skills' rows and ``load_skill`` with the skills' tools
kept out of ``A_0`` under skill-only routing (skill), the distractor sub-agents (sub-agent: a behaviour task
whose ``forbidden`` tools are the offered state-changing tools the oracle does not use).

Every task passes :func:`~.generate_checks.check_task` with the injected ``verify`` (normally
``mobility_rewards.mobilepa.verify.verify_phone_task``, which this layer may not import): the oracle
passes, finish-only, every-offered-tool and act-without-asking trajectories fail, and so do a capability
task's gate floors. A failing check raises :class:`~.generate_oracle.GenerationError`; no unchecked task is
returned.

Phrasing: ``phrasing="heldout"`` re-says the same tasks in the words of :mod:`.heldout_phrasing` (the held-out
phrasing split, ``datasets/mobilepa-heldout``; see :func:`generate_tasks`); the default ``standard`` is the above.

Determinism: one ``random.Random(seed)`` draws a 64-bit seed per task, in order, and task ``i``
draws only from its own generator, so the first ``k`` tasks of ``n > k`` are the ``k`` tasks, and
the same arguments give byte-identical files (:func:`write_task_set`). Example::

    from mobility_rewards.mobilepa.verify import verify_phone_task
    tasks = generate_tasks(20, seed=7, verify=verify_phone_task)
    write_task_set("out/mobilepa", 1705, seed=0, verify=verify_phone_task, workers=2)
    basic_only = generate_tasks(20, seed=7, dimensions=("basic",), verify=verify_phone_task)
"""

from __future__ import annotations

import os
import random
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Sequence, overload

from ..errors import ConfigError
from . import (generate_ambiguity, generate_conditional, generate_correction, generate_domains, generate_grounding,
               generate_maps, generate_memory, generate_reasoning, generate_skills, generate_subagents,
               generate_tracking, heldout_phrasing)
from .catalogue import PHONE_TOOLS
from .domains.subagents import SUB_AGENTS
from .generate_checks import Verifier, check_task
from .generate_oracle import MISSING, PERMISSION, RUNTIME, STATE, Draft, GenerationError, OracleRun
from .answers import mentions
from .generate_world import World, build_world
from .profile import with_profile
from .skills import LOAD_SKILL, SKILLS, skill_action_space, skill_rows
from .tasks import CATEGORIES, DIMENSIONS, GoldBehaviour, GoldCall, PhoneTask, write_tasks

GENERATOR = "mobility_env.mobilepa.generate"
# The generator's version (recorded in each task set's manifest.json); history, one line per version (CHANGELOG.md):
# 1 — the first generated tasks.
# 2 — maps & travel tasks (one block of tasks in four).
# 3 — answer_excludes (weather, traffic).
# 4 — the memory, skill and sub-agent dimensions.
# 5 — tasks of the five later domains (one basic block in four); the bundled set at the paper's size (1,705).
# 6 — user facts and the simulated user; ambiguous requests that must be asked about (grounding, one block in four).
# 7 — reasoning: a calendar → alarm → message chain (conditional), a refused permission (error recovery), 1 block in 4.
GENERATOR_VERSION = 7
LANGUAGES = ("zh", "en")
#: The tools tasks are built from (a fixed list: tools registered later do not change generated tasks).
BASE_TOOLS = ("list_apps", "open_app", "close_app", "grant_permission", "search_contacts", "send_message",
              "call_contact", "list_messages", "set_brightness", "set_auto_brightness", "set_volume", "set_ringer_mode",
              "set_do_not_disturb", "set_wifi", "set_bluetooth", "set_mobile_data", "set_airplane_mode",
              "set_location_service", "get_device_status", "create_alarm", "list_alarms", "set_alarm_enabled",
              "delete_alarm", "create_event", "list_events")
#: The maps & travel tools maps tasks are built from (with BASE_TOOLS and update_alarm: :data:`MAPS_TASK_TOOLS`).
MAPS_TOOLS = ("maps_search_place", "maps_nearby", "maps_reverse_geocode", "maps_weather", "maps_traffic", "maps_route",
              "maps_current_location", "start_navigation", "stop_navigation", "get_navigation_status", "share_eta",
              "save_place", "list_saved_places", "delete_saved_place", "set_departure_reminder", "book_ride",
              "list_rides", "cancel_ride")
MAPS_TASK_TOOLS = BASE_TOOLS + MAPS_TOOLS + ("update_alarm",)
#: The tools of the five later domains (with BASE_TOOLS: :data:`DOMAIN_TASK_TOOLS`, what their tasks are built from).
DOMAIN_TOOLS = ("list_chats", "read_chat", "send_chat_message", "create_group_chat", "add_chat_member",
                "set_chat_muted", "list_social_feed", "publish_post", "like_post",
                "search_products", "add_to_cart", "remove_from_cart", "view_cart", "checkout_cart", "list_orders",
                "cancel_order", "request_refund", "list_payment_methods", "set_default_payment_method",
                "get_activity_summary", "get_health_trend", "set_step_goal", "start_workout", "end_workout",
                "add_medication_reminder", "list_medications", "log_medication_taken", "list_health_records",
                "list_home_devices", "set_device_power", "set_light_brightness", "set_thermostat", "set_lock",
                "set_room_lights", "list_home_scenes", "run_home_scene",
                "search_photos", "list_albums", "create_album", "add_photo_to_album", "set_photo_favorite",
                "delete_photo", "restore_photo", "share_photo", "share_file")
DOMAIN_TASK_TOOLS = BASE_TOOLS + DOMAIN_TOOLS
#: Every tool a capability task may offer or use: the maps task tools, the memory tools, the skill loader and every
#: skill's tools, the sub-agent entry tools, and the do-not-disturb schedule.
CAPABILITY_TASK_TOOLS = tuple(dict.fromkeys(
    MAPS_TASK_TOOLS + generate_memory.READ_TOOLS + generate_memory.WRITE_TOOLS + ("set_dnd_schedule", LOAD_SKILL)
    + tuple(name for skill in SKILLS.values() for name in skill.tools) + tuple(SUB_AGENTS)))
#: Each dimension's share of a generated set, as whole parts of :data:`SHARE_UNITS` (34,100 = 1,705 × 20): memory
#: 376/1,705 — the paper's share (376 of its 1,705 tasks); sub-agent 10 % and skill 13 % — ours (the paper gives no
#: counts for them); basic tool use the rest (≈ 54.9 %).
SHARE_UNITS = 34_100
DIMENSION_SHARES = {"basic": SHARE_UNITS - 7_520 - 3_410 - 4_433, "subagent": 3_410, "memory": 7_520, "skill": 4_433}
#: Task ``i`` is a maps task when its block of ``len(CATEGORIES) * len(languages)`` tasks is the second of every
#: MAPS_EVERY blocks (every category and language gets its share; 20 tasks already hold some); the other tasks are
#: drawn as before.
MAPS_EVERY = 4
#: Task ``i`` is a task of the later domains when it is basic and its block is the fourth of every DOMAINS_EVERY
#: blocks (:data:`DOMAINS_BLOCK`); maps blocks are the second, so the two never meet.
DOMAINS_EVERY, DOMAINS_BLOCK = 4, 3
#: Task ``i`` is an ambiguous-request task (:mod:`.generate_ambiguity`) when it is a basic grounding task whose block is
#: the third of every AMBIGUITY_EVERY blocks (a block of the first catalogue's tools: never a maps or domains block).
AMBIGUITY_EVERY, AMBIGUITY_BLOCK = 4, 2
#: Task ``i`` is a reasoning task (:mod:`.generate_reasoning`) when it is a basic conditional (the chain) or error
#: recovery (the refused permission) task whose block is the first of every REASONING_EVERY blocks (never maps,
#: domains or ambiguity; the first catalogue's grounding and the rest keep blocks of their own).
REASONING_EVERY, REASONING_BLOCK = 4, 0
_LOCATED = ("grant_permission", "set_location_service")
#: Tools offered beside a needed one because they clear its obstacles or find its arguments.
COMPANIONS = {"send_message": ("search_contacts", "grant_permission", "set_airplane_mode"),
              "call_contact": ("search_contacts", "grant_permission", "set_airplane_mode"),
              "list_messages": ("search_contacts", "grant_permission"), "set_brightness": ("set_auto_brightness",),
              "set_volume": ("set_ringer_mode",), "create_alarm": ("list_alarms", "set_alarm_enabled"),
              "set_alarm_enabled": ("list_alarms",), "delete_alarm": ("list_alarms",), "create_event": ("list_events",),
              "set_wifi": ("set_airplane_mode",), "set_bluetooth": ("set_airplane_mode",),
              "set_mobile_data": ("set_airplane_mode",), "open_app": ("list_apps",), "close_app": ("list_apps",),
              "start_navigation": _LOCATED + ("stop_navigation",), "book_ride": _LOCATED + ("cancel_ride",),
              "set_departure_reminder": _LOCATED, "maps_current_location": _LOCATED,
              "share_eta": ("search_contacts", "grant_permission", "get_navigation_status"),
              "save_place": ("list_saved_places",), "update_alarm": ("list_alarms",),
              # the later domains: the reads that find ids, and what clears each state dependency
              "send_chat_message": ("list_chats", "search_contacts", "set_airplane_mode"),
              "create_group_chat": ("search_contacts", "grant_permission", "set_airplane_mode"),
              "set_chat_muted": ("list_chats",), "add_to_cart": ("search_products", "view_cart", "checkout_cart"),
              "checkout_cart": ("list_payment_methods", "grant_permission", "set_airplane_mode"),
              "cancel_order": ("list_orders", "search_products", "set_airplane_mode"),
              "start_workout": ("get_activity_summary", "set_location_service", "grant_permission", "end_workout"),
              "add_medication_reminder": ("list_medications", "grant_permission"),
              "log_medication_taken": ("list_medications", "grant_permission"),
              **dict.fromkeys(generate_domains.HOME_COMMANDS, ("list_home_devices", "set_wifi", "grant_permission")),
              "run_home_scene": ("list_home_scenes", "set_wifi", "grant_permission"),
              "set_photo_favorite": ("search_photos", "grant_permission"),
              "restore_photo": ("search_photos", "grant_permission"),
              "create_album": ("list_albums", "search_photos", "grant_permission"),
              "add_photo_to_album": ("search_photos",),
              "share_photo": ("search_photos", "search_contacts", "grant_permission", "set_airplane_mode")}
#: State-changing tools whose probe call (:func:`~.generate_checks.probe_arguments`) succeeds on every generated S0
#: whatever else the oracle changed, unless the oracle itself uses them (then they are no distractors).
SAFE_DISTRACTORS = ("create_alarm", "create_event", "set_do_not_disturb", "set_ringer_mode", "set_volume",
                    "set_location_service", "set_auto_brightness", "open_app", "close_app")
MAPS_SAFE_DISTRACTORS = SAFE_DISTRACTORS + ("save_place",)  # (its probe saves the gym, which no S0 has)
Family = Callable[[random.Random, World], Draft]
FAMILIES: dict[str, tuple[Family, ...]] = {
    "grounding": generate_grounding.FAMILIES,
    "conditional": generate_conditional.FAMILIES,
    "state_tracking": generate_tracking.FAMILIES,
    "intent_correction": generate_correction.CORRECTION,
    "error_recovery": generate_grounding.RECOVERABLE + generate_tracking.RECOVERABLE + generate_correction.RECOVERY,
}
#: The families of each capability dimension, by category.
CAPABILITY_FAMILIES: dict[str, dict[str, tuple[Family, ...]]] = {
    "memory": generate_memory.FAMILIES, "skill": generate_skills.FAMILIES, "subagent": generate_subagents.FAMILIES}
#: How the user's words are written: ``standard`` (the families' own words) or ``heldout`` (the same tasks re-said by
#: :mod:`.heldout_phrasing`, a grammar the rule agent may not import; tasks it cannot say are left out).
PHRASINGS = ("standard", "heldout")
#: Mixed into a task's seed for its held-out phrasing generator (the standard draws stay untouched).
HELDOUT_SALT = 0x4E1D07
OBSTACLE_RATE = 0.3  # share of tasks outside error recovery that get a planted obstacle
FAULT_MESSAGES = ("service temporarily unavailable; try again", "request timed out; try again",
                  "database is busy; try again")


def dimension_plan(n: int, dimensions: Sequence[str] = DIMENSIONS) -> list[str]:
    """The dimension of each of the first ``n`` positions: position ``i`` goes to the dimension furthest below its
    share of ``i + 1`` tasks (:data:`DIMENSION_SHARES`, renormalised over ``dimensions``; ties in
    :data:`~.tasks.DIMENSIONS` order). Every prefix keeps each dimension's count within one task of its share
    (no count runs a whole task ahead by construction; the tests check every prefix up to 20,000 tasks for falling
    behind), so the paper's size holds its memory count exactly: ``dimension_plan(1705).count("memory") == 376``."""
    shares = {d: DIMENSION_SHARES[d] for d in DIMENSIONS if d in dimensions}
    total = sum(shares.values())
    counts = dict.fromkeys(shares, 0)
    plan = []
    for size in range(1, n + 1):
        chosen = max(shares, key=lambda d: (shares[d] * size - counts[d] * total, -DIMENSIONS.index(d)))
        counts[chosen] += 1
        plan.append(chosen)
    return plan


def generate_tasks(n: int, seed: int, *, languages: Sequence[str] = LANGUAGES, dimensions: Sequence[str] = DIMENSIONS,
                   verify: Verifier, workers: int = 1, chunk: int = 500, phrasing: str = "standard") -> list[PhoneTask]:
    """``n`` checked tasks (see the module docstring); ``verify`` is the bucket verifier they are checked with;
    ``dimensions``: the capability dimensions to mix (:func:`dimension_plan`; ``("basic",)``: basic tool use only).

    ``phrasing="heldout"``: the held-out phrasing split — of the ``n`` planned tasks, those whose request
    :func:`.heldout_phrasing.render` can say, each the standard task at its position (same id, seed, ``S0``, gold)
    with the user's words re-rendered from its frame by a generator of its own (``task seed ^`` :data:`HELDOUT_SALT`),
    then checked like any task; fewer than ``n`` tasks come back.

    ``workers > 1`` generates chunks of ``chunk`` tasks in worker processes (``verify`` must then be
    picklable: a module-level function); the tasks are identical for any ``workers``.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ConfigError(f"n must be a whole number >= 0, got {n!r}")
    languages = tuple(languages)
    if not languages or any(lang not in LANGUAGES for lang in languages):
        raise ConfigError(f"languages must be a non-empty choice of {LANGUAGES}, got {languages!r}")
    if phrasing not in PHRASINGS:
        raise ConfigError(f"phrasing must be one of {PHRASINGS}, got {phrasing!r}")
    dimensions = tuple(dimensions)
    if not dimensions or any(d not in DIMENSIONS for d in dimensions) or len(set(dimensions)) != len(dimensions):
        raise ConfigError(f"dimensions must be a non-empty choice of {DIMENSIONS}, got {dimensions!r}")
    missing = [name for name in CAPABILITY_TASK_TOOLS + DOMAIN_TOOLS if name not in PHONE_TOOLS]
    if missing:
        raise ConfigError(f"the MobilePA catalogue lacks the generator's tools {missing}")
    master = random.Random(seed)
    block = len(CATEGORIES) * len(languages)
    jobs = []
    ordinal: Counter[str] = Counter()  # a capability task's place among its dimension's tasks
    for index, dimension in enumerate(dimension_plan(n, dimensions)):
        turn = index if dimension == "basic" else ordinal[dimension]
        ordinal[dimension] += 1
        kind = dimension if dimension != "basic" else _basic_kind(index, block)
        jobs.append((f"mobilepa-{seed}-{index:05d}", master.getrandbits(64), CATEGORIES[turn % len(CATEGORIES)],
                     languages[(turn // len(CATEGORIES)) % len(languages)], kind))
    if workers <= 1 or n <= chunk:
        return _generate_chunk(jobs, verify, phrasing)
    import multiprocessing

    with multiprocessing.get_context("spawn").Pool(workers) as pool:
        parts = pool.starmap(_generate_chunk, [(jobs[start:start + chunk], verify, phrasing)
                                               for start in range(0, n, chunk)])
    return [task for part in parts for task in part]


def _basic_kind(index: int, block: int) -> str:
    """What basic task ``index`` is: ``maps`` (the second block of every :data:`MAPS_EVERY`), ``domains`` (the
    fourth of every :data:`DOMAINS_EVERY`: the later domains), ``ambiguity`` (a grounding task of the third block of
    every :data:`AMBIGUITY_EVERY`: :mod:`.generate_ambiguity`), ``reasoning`` (a conditional or error-recovery task of
    the first block of every :data:`REASONING_EVERY`: :mod:`.generate_reasoning`) or ``basic`` (the first catalogue's
    tools)."""
    category = CATEGORIES[index % len(CATEGORIES)]
    if (index // block) % MAPS_EVERY == 1:
        return "maps"
    if (index // block) % AMBIGUITY_EVERY == AMBIGUITY_BLOCK and category == "grounding":
        return "ambiguity"
    if (index // block) % REASONING_EVERY == REASONING_BLOCK and category in ("conditional", "error_recovery"):
        return "reasoning"
    return "domains" if (index // block) % DOMAINS_EVERY == DOMAINS_BLOCK else "basic"


def _generate_chunk(jobs: list[tuple[str, int, str, str, str]], verify: Verifier,
                    phrasing: str = "standard") -> list[PhoneTask]:
    if phrasing == "standard":
        return [_generate_one(task_id, random.Random(task_seed), category, language, verify, kind)
                for task_id, task_seed, category, language, kind in jobs]
    tasks = [_generate_one(task_id, random.Random(task_seed), category, language, verify, kind,
                           heldout=random.Random(task_seed ^ HELDOUT_SALT))
             for task_id, task_seed, category, language, kind in jobs]
    return [task for task in tasks if task is not None]


def _family(rng: random.Random, category: str, kind: str) -> Family:
    if kind in CAPABILITY_FAMILIES:
        return rng.choice(CAPABILITY_FAMILIES[kind][category])
    if kind == "maps":
        return rng.choice(generate_maps.FAMILIES[category])
    if kind == "ambiguity":
        return rng.choice(generate_ambiguity.FAMILIES)
    if kind == "reasoning":
        return rng.choice(generate_reasoning.CHAIN if category == "conditional" else generate_reasoning.REFUSAL)
    return rng.choice(generate_domains.FAMILIES[category] if kind == "domains" else FAMILIES[category])


@overload
def _generate_one(task_id: str, rng: random.Random, category: str, language: str, verify: Verifier,
                  kind: str = ..., heldout: None = ...) -> PhoneTask: ...


@overload
def _generate_one(task_id: str, rng: random.Random, category: str, language: str, verify: Verifier,
                  kind: str = ..., *, heldout: random.Random) -> PhoneTask | None: ...


def _generate_one(task_id: str, rng: random.Random, category: str, language: str, verify: Verifier,
                  kind: str = "basic", heldout: random.Random | None = None) -> PhoneTask | None:
    """Task ``task_id``; ``kind``: its capability dimension, or for a basic task ``basic``, ``maps`` or
    ``domains`` (:func:`_basic_kind`); ``heldout``: the held-out phrasing's generator (the draft's words are
    re-rendered with it; None when :mod:`.heldout_phrasing` cannot say the task)."""
    dimension = kind if kind in CAPABILITY_FAMILIES else "basic"
    world = build_world(rng, language)
    draft = _family(rng, category, kind)(rng, world)
    if heldout is not None:
        rendered = heldout_phrasing.render(heldout, draft, world)
        if rendered is None:
            return None
        draft = rendered
    if draft.dimension != dimension:
        raise GenerationError(f"{task_id}: the {dimension} family {draft.family} drafted a {draft.dimension} task")
    if category == "error_recovery":
        count = int(not any(o["kind"] != MISSING for o in draft.obstacles)) + int(rng.random() < 0.3)
    else:
        count = int(rng.random() < OBSTACLE_RATE)
    planted = _plant(rng, draft, world, count)
    obstacles = draft.obstacles + planted
    if category == "error_recovery" and not any(o["kind"] != MISSING for o in obstacles):
        raise GenerationError(f"{task_id}: {draft.family} has no obstacle to recover from")
    task = PhoneTask.model_validate({  # a draft: every tool offered, gold filled in below from the oracle
        "task_id": task_id, "query": draft.query, "language": language, "history": draft.history,
        "initial_state": _initial_state(world, draft), "action_space": _play_space(draft, kind),
        "category": category, "obstacles": obstacles,
        "bucket": "behaviour", "gold_behaviour": {}, "user_facts": draft.user_facts,
        **_gate_fields(draft)})
    run = generate_domains.DomainOracleRun(task) if kind == "domains" else OracleRun(task)
    answer = draft.plan(run)
    trajectory = run.finish(answer)
    for obstacle in planted:  # a planted obstacle the oracle never ran into would be a label, not an obstacle
        if not any(c.error_type == obstacle["error_type"] and c.name == obstacle.get("tool", c.name)
                   for c in trajectory.calls):
            raise GenerationError(f"{task_id}: the oracle never met the planted obstacle {obstacle}")
    task.oracle_calls, task.oracle_answer = run.calls, answer
    task.bucket = draft.bucket  # type: ignore[assignment]
    task.gold_behaviour = None
    if draft.bucket == "tool_call":
        task.gold_calls = [GoldCall(name=c.name, arguments=c.arguments) for c in trajectory.calls
                           if c.succeeded and PHONE_TOOLS[c.name].writes]
        if not task.gold_calls:
            raise GenerationError(f"{task_id}: a tool_call task whose oracle changes nothing")
    elif draft.bucket == "state_change":
        if not trajectory.delta:
            raise GenerationError(f"{task_id}: a state_change task whose oracle changes nothing")
        task.gold_delta = trajectory.delta
    else:
        task.gold_behaviour = GoldBehaviour(must_ask=draft.must_ask, forbidden=draft.forbidden,
                                            answer_mentions=draft.answer_mentions,  # (a word the known-good answer
                                            answer_excludes=[w for w in draft.answer_excludes  # names is no other
                                                             if not mentions(answer, w)],  # choice)
                                            declined=draft.declined)
        # a sub-agent task's outcome is the handoff, whose free wording the gate judges: no row diff to match
        task.gold_delta = None if draft.dimension == "subagent" else trajectory.delta
    used = [c.name for c in run.calls if c.name != "ask_user"]
    if draft.dimension != "basic":
        task.action_space = _capability_space(rng, draft, used)
        if draft.dimension == "subagent" and task.gold_behaviour is not None:  # every other offered change is one
            task.gold_behaviour.forbidden = [t for t in task.action_space  # nobody asked for
                                             if PHONE_TOOLS[t].writes and t not in used]
    elif kind == "maps":
        task.action_space = _action_space(rng, used, MAPS_TASK_TOOLS, MAPS_SAFE_DISTRACTORS)
    elif kind == "domains":
        task.action_space = _action_space(rng, used, DOMAIN_TASK_TOOLS)
    else:
        task.action_space = _action_space(rng, used)
    shipped = PhoneTask.model_validate(task.model_dump())  # the validators, on the finished task
    if shipped != task:
        raise GenerationError(f"{task_id}: the task changes when validated")
    check_task(task, verify)  # (the same content; ``task`` keeps its cached S0 template)
    return shipped


def _initial_state(world: World, draft: Draft) -> dict[str, list[dict[str, Any]]]:
    """``S_0``: the world's rows, the profile's memories (memory tasks), the offered skills (skill tasks)."""
    rows = world.rows()
    if draft.profile is not None:
        rows = with_profile(rows, draft.profile)
    if draft.skills:
        rows["skills"] = skill_rows(draft.skills, world.lang)
    return rows


def _play_space(draft: Draft, kind: str) -> list[str]:
    """The tools offered while the oracle plays (a basic task's whole toolbox; a capability task's without the
    hidden skill tools, which only loading offers)."""
    if draft.dimension == "basic":
        return list({"maps": MAPS_TASK_TOOLS, "domains": DOMAIN_TASK_TOOLS}.get(kind, BASE_TOOLS))
    return [name for name in CAPABILITY_TASK_TOOLS if name not in draft.hidden]


def _gate_fields(draft: Draft) -> dict[str, Any]:
    field = {"memory": "memory_gate", "skill": "skill_gate", "subagent": "handoff_gate"}.get(draft.dimension)
    if field is None:
        return {}
    if draft.gate is None:
        raise GenerationError(f"the {draft.dimension} family {draft.family} set no gate")
    return {"dimension": draft.dimension, field: draft.gate}


def _capability_space(rng: random.Random, draft: Draft, used: list[str]) -> list[str]:
    """``A_0`` of a capability task: :func:`_action_space` over the visible tools plus the draft's ``offered``
    ones; a skill task's then goes through :func:`~.skills.skill_action_space` (hidden tools out, loader in)."""
    tools = tuple(t for t in MAPS_TASK_TOOLS if t not in draft.hidden)
    safe = tuple(t for t in MAPS_SAFE_DISTRACTORS if t not in draft.hidden and t not in draft.offered)
    chosen = _action_space(rng, [t for t in dict.fromkeys(used + list(draft.offered))], tools, safe)
    if draft.dimension == "skill":
        routing = (draft.gate or {}).get("routing", "skill_only")
        direct = [t for t in draft.offered if t != LOAD_SKILL]
        chosen = skill_action_space([t for t in chosen if t not in draft.hidden or t in direct], draft.skills,
                                    routing, direct)
    return [t for t in chosen if t not in draft.hidden]


def _plant(rng: random.Random, draft: Draft, world: World, count: int) -> list[dict[str, Any]]:
    """Plant ``count`` obstacles of distinct kinds against the draft's calls; their records."""
    planted: list[dict[str, Any]] = []
    for _ in range(count):
        options = _planters(draft, world, {o["kind"] for o in planted})
        if not options:
            break
        kind = rng.choice(sorted(options))
        planted.append(options[kind](rng))
    return planted


def _planters(draft: Draft, world: World, taken: set[str]) -> dict[str, Callable[[random.Random], dict[str, Any]]]:
    kinds = set(draft.obstacle_kinds) - taken
    tools = list(dict.fromkeys([name for name, _ in draft.targets] + list(draft.reads)))
    out: dict[str, Callable[[random.Random], dict[str, Any]]] = {}
    faulted = {f["tool"] for f in world.faults}
    if RUNTIME in kinds and any(t not in faulted for t in tools):
        def fault(rng: random.Random) -> dict[str, Any]:
            tool = rng.choice([t for t in tools if t not in faulted])
            remaining = rng.randint(1, 2)
            world.faults.append({"tool": tool, "error_type": "transient_failure", "remaining": remaining,
                                 "message": f"{tool}: {rng.choice(FAULT_MESSAGES)}"})
            return {"kind": RUNTIME, "tool": tool, "error_type": "transient_failure",
                    "note": f"{tool} fails {remaining} time(s) with a transient failure; a retry succeeds"}
        out[RUNTIME] = fault
    needs = {PHONE_TOOLS[t].permission for t in tools if PHONE_TOOLS[t].permission is not None}
    rows = [p for p in world.permissions if (p["app"], p["permission"]) in needs and p["granted"]]
    if PERMISSION in kinds and rows:
        def withdraw(rng: random.Random) -> dict[str, Any]:
            row = rng.choice(rows)
            row["granted"] = 0
            return {"kind": PERMISSION, "error_type": "permission_denied",
                    "note": f"{row['app']} lacks the {row['permission']} permission; grant_permission clears it"}
        out[PERMISSION] = withdraw
    blockers = [b for b in (_blocker(name, args, world) for name, args in draft.targets) if b is not None]
    if STATE in kinds and blockers:
        out[STATE] = lambda rng: rng.choice(blockers)()
    return out


def _blocker(name: str, args: dict[str, Any], world: World) -> Callable[[], dict[str, Any]] | None:
    """A change of ``S0`` that makes the call ``name(args)`` fail with a state conflict, or None."""
    settings = world.settings

    def setting(key: str, value: str, note: str) -> Callable[[], dict[str, Any]]:
        def apply() -> dict[str, Any]:
            settings[key] = value
            return {"kind": STATE, "tool": name, "error_type": "state_conflict", "note": note}
        return apply
    if name == "set_brightness" and settings.get("auto_brightness") != "on":
        return setting("auto_brightness", "on", "automatic brightness is on: set_brightness is refused until it is off")
    loud_ring = name == "set_volume" and args["stream"] == "ring" and args["level"] > 0
    if loud_ring and settings.get("ringer_mode") != "silent":
        return setting("ringer_mode", "silent", "the ringer is silent: the ring volume cannot be raised until it is "
                                                "normal")
    radio = name in ("set_wifi", "set_bluetooth", "set_mobile_data") and args.get("on")
    if (radio or name in ("send_message", "call_contact")) and settings.get("airplane_mode") != "on":
        return setting("airplane_mode", "on", f"airplane mode is on: {name} fails until it is turned off")
    if name in ("start_navigation", "book_ride", "set_departure_reminder") and settings.get("location") == "on":
        def location_off() -> dict[str, Any]:  # no "tool": the first call that needs the position meets it
            settings["location"] = "off"
            return {"kind": STATE, "error_type": "state_conflict",
                    "note": f"location services are off: {name} (and any call needing the position) fails until "
                            f"they are turned on"}
        return location_off
    later = generate_domains.blocker(name, args, world)  # (the later domains' tools: no earlier task targets them)
    if later is not None:
        return later
    if name == "create_alarm" and world.alarm_at(args["time"]) is None:
        def existing() -> dict[str, Any]:
            world.add_alarm(args["time"], args.get("label", ""), args.get("repeat", "once"), enabled=False)
            return {"kind": STATE, "tool": name, "error_type": "state_conflict",
                    "note": f"an alarm at {args['time']} already exists, switched off: turn it on instead"}
        return existing
    return None


def _action_space(rng: random.Random, used: list[str], tools: tuple[str, ...] = BASE_TOOLS,
                  safe: tuple[str, ...] = SAFE_DISTRACTORS) -> list[str]:
    """``A0``: the used tools, their companions and 1–3 distractors (from ``tools``, the first from ``safe``),
    same-domain where there are some.

    One distractor at least is a state-changing tool of :data:`SAFE_DISTRACTORS`, so that a policy calling
    every offered tool changes something nobody asked for whatever the order of its calls."""
    chosen = list(dict.fromkeys(used))
    for name in list(chosen):
        chosen += [c for c in COMPANIONS.get(name, ()) if c not in chosen]
    domains = {PHONE_TOOLS[name].domain for name in chosen}

    def near(candidates: list[str]) -> list[str]:
        return [t for t in candidates if PHONE_TOOLS[t].domain in domains] or candidates
    extra = [rng.choice(near([t for t in safe if t not in chosen]))]
    writes = near([t for t in tools if t not in chosen + extra and PHONE_TOOLS[t].writes])
    extra += rng.sample(writes, min(len(writes), rng.randint(0, 1)))
    reads = near([t for t in tools if t not in chosen and not PHONE_TOOLS[t].writes])
    extra += rng.sample(reads, min(len(reads), rng.randint(0, 1)))
    chosen += extra
    rng.shuffle(chosen)
    return chosen


def task_counts(tasks: Sequence[PhoneTask]) -> dict[str, dict[str, int]]:
    """Tasks by dimension, category, bucket, language, obstacle kind (``none``: no obstacle) and tool domain (each
    domain whose tools the task's oracle calls), and the memory tasks by reasoning, operation and (outcome) domain,
    for the manifest."""
    obstacles: Counter[str] = Counter()
    domains: Counter[str] = Counter()
    for task in tasks:
        obstacles.update({o["kind"] for o in task.obstacles} or {"none"})
        domains.update({PHONE_TOOLS[c.name].domain for c in task.oracle_calls if c.name in PHONE_TOOLS})
    gates = [t.memory_gate for t in tasks if t.memory_gate is not None]

    def counted(values: Any) -> dict[str, int]:
        return dict(sorted(Counter(values).items()))
    return {"dimension": counted(t.dimension for t in tasks), "category": counted(t.category for t in tasks),
            "bucket": counted(t.bucket for t in tasks), "language": counted(t.language for t in tasks),
            "obstacle": dict(sorted(obstacles.items())), "domain": dict(sorted(domains.items())),
            "memory_reasoning": counted(g.reasoning for g in gates),
            "memory_operation": counted(g.operation for g in gates),
            "memory_domain": counted(g.domain for g in gates),
            "skill_routing": counted(t.skill_gate.routing for t in tasks if t.skill_gate is not None),
            "subagent": counted(t.handoff_gate.agent for t in tasks if t.handoff_gate is not None)}


def write_task_set(directory: str | os.PathLike, n: int, seed: int, *, languages: Sequence[str] = LANGUAGES,
                   dimensions: Sequence[str] = DIMENSIONS, verify: Verifier, workers: int = 1,
                   phrasing: str = "standard") -> Path:
    """Generate ``n`` tasks and write the task directory (``tasks.jsonl`` and ``manifest.json`` with the seed,
    the generator, the languages and dimensions, and :func:`task_counts`). A held-out phrasing set's manifest also
    records ``phrasing: "heldout"`` and ``planned`` (``n``: the plan its tasks were drawn from); a standard set's
    has no ``phrasing`` key, so its bytes are what they were before the option existed."""
    tasks = generate_tasks(n, seed, languages=languages, dimensions=dimensions, verify=verify, workers=workers,
                           phrasing=phrasing)
    marked = {} if phrasing == "standard" else {"phrasing": phrasing, "planned": n}
    return write_tasks(directory, tasks, seed=seed, generator=GENERATOR, generator_version=GENERATOR_VERSION,
                       languages=list(languages), dimensions=[d for d in DIMENSIONS if d in dimensions],
                       **marked, counts=task_counts(tasks))
