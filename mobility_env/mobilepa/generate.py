"""The seeded MobilePA task generator: basic-tool-use tasks in Chinese and English, each checked before it ships.

:func:`generate_tasks` ``(n, seed, *, languages=("zh", "en"), verify)`` returns ``n`` tasks:

* **categories** in turn (task ``i`` exercises ``CATEGORIES[i % 5]``: grounding, conditional
  planning, state tracking, intent correction, error recovery), languages in turn within each
  category; the family of a task (brightness, a message to a contact, "if Wi-Fi is off …", a
  corrected alarm time …) is drawn from its category's families;
* **S0**: a realistic phone per task (:mod:`.generate_world`: contacts with Chinese and English names,
  a clock, several alarms and events) plus what the family adds and the **obstacles** planted against
  the calls it needs: a ``faults`` row with ``remaining`` 1–2 (runtime exception), the app's
  permission withdrawn (permission block), a setting that blocks the call — airplane mode, automatic
  brightness, a silent ringer, an alarm already there but off (state change). Error-recovery tasks
  always have one (sometimes two or three); others sometimes. Missing parameters are planted by the families
  themselves (the request leaves a value out, ``user_replies`` supplies it, the task is a
  ``behaviour`` task that must ask);
* **gold** from the oracle played on ``S0`` through the sandbox (:mod:`.generate_oracle`): the
  successful state-changing calls (``tool_call``), the final delta (``state_change``; never written
  by hand), or must-ask / forbidden tools / facts the answer must name plus the delta (``behaviour``);
* **A0**: the tools the oracle used, the tools that clear their obstacles (offered whether or not
  one is planted, so ``A0`` does not give the obstacle away), and 1–3 distractors (same-domain where
  there are some; one always a state-changing tool, see :func:`_action_space`), shuffled; only the
  25 tools of :data:`BASE_TOOLS` are used, whatever else is registered.

Every task passes :func:`~.generate_checks.check_task` with the injected ``verify`` (normally
``mobility_rewards.mobilepa.verify_phone_task``, which this layer may not import): the oracle
passes, finish-only, every-offered-tool and act-without-asking trajectories fail. A failing check
raises :class:`~.generate_oracle.GenerationError`; no unchecked task is returned.

Determinism: one ``random.Random(seed)`` draws a 64-bit seed per task, in order, and task ``i``
draws only from its own generator, so the first ``k`` tasks of ``n > k`` are the ``k`` tasks, and
the same arguments give byte-identical files (:func:`write_task_set`). Example::

    from mobility_rewards.mobilepa import verify_phone_task
    tasks = generate_tasks(20, seed=7, verify=verify_phone_task)
    write_task_set("out/mobilepa", 300, seed=0, verify=verify_phone_task)
"""

from __future__ import annotations

import os
import random
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Sequence

from ..errors import ConfigError
from . import generate_conditional, generate_correction, generate_grounding, generate_tracking
from .catalogue import PHONE_TOOLS
from .generate_checks import Verifier, check_task
from .generate_oracle import MISSING, PERMISSION, RUNTIME, STATE, Draft, GenerationError, OracleRun
from .generate_world import World, build_world
from .tasks import CATEGORIES, GoldBehaviour, GoldCall, PhoneTask, write_tasks

GENERATOR = "mobility_env.mobilepa.generate"
GENERATOR_VERSION = 1
LANGUAGES = ("zh", "en")
#: The tools tasks are built from (a fixed list: tools registered later do not change generated tasks).
BASE_TOOLS = ("list_apps", "open_app", "close_app", "grant_permission", "search_contacts", "send_message",
              "call_contact", "list_messages", "set_brightness", "set_auto_brightness", "set_volume", "set_ringer_mode",
              "set_do_not_disturb", "set_wifi", "set_bluetooth", "set_mobile_data", "set_airplane_mode",
              "set_location_service", "get_device_status", "create_alarm", "list_alarms", "set_alarm_enabled",
              "delete_alarm", "create_event", "list_events")
#: Tools offered beside a needed one because they clear its obstacles or find its arguments.
COMPANIONS = {"send_message": ("search_contacts", "grant_permission", "set_airplane_mode"),
              "call_contact": ("search_contacts", "grant_permission", "set_airplane_mode"),
              "list_messages": ("search_contacts", "grant_permission"), "set_brightness": ("set_auto_brightness",),
              "set_volume": ("set_ringer_mode",), "create_alarm": ("list_alarms", "set_alarm_enabled"),
              "set_alarm_enabled": ("list_alarms",), "delete_alarm": ("list_alarms",), "create_event": ("list_events",),
              "set_wifi": ("set_airplane_mode",), "set_bluetooth": ("set_airplane_mode",),
              "set_mobile_data": ("set_airplane_mode",), "open_app": ("list_apps",), "close_app": ("list_apps",)}
#: State-changing tools whose probe call (:func:`~.generate_checks.probe_arguments`) succeeds on every generated S0
#: whatever else the oracle changed, unless the oracle itself uses them (then they are no distractors).
SAFE_DISTRACTORS = ("create_alarm", "create_event", "set_do_not_disturb", "set_ringer_mode", "set_volume",
                    "set_location_service", "set_auto_brightness", "open_app", "close_app")
Family = Callable[[random.Random, World], Draft]
FAMILIES: dict[str, tuple[Family, ...]] = {
    "grounding": generate_grounding.FAMILIES,
    "conditional": generate_conditional.FAMILIES,
    "state_tracking": generate_tracking.FAMILIES,
    "intent_correction": generate_correction.CORRECTION,
    "error_recovery": generate_grounding.RECOVERABLE + generate_tracking.RECOVERABLE + generate_correction.RECOVERY,
}
OBSTACLE_RATE = 0.3  # share of tasks outside error recovery that get a planted obstacle
FAULT_MESSAGES = ("service temporarily unavailable; try again", "request timed out; try again",
                  "database is busy; try again")


def generate_tasks(n: int, seed: int, *, languages: Sequence[str] = LANGUAGES, verify: Verifier, workers: int = 1,
                   chunk: int = 500) -> list[PhoneTask]:
    """``n`` checked tasks (see the module docstring); ``verify`` is the bucket verifier they are checked with.

    ``workers > 1`` generates chunks of ``chunk`` tasks in worker processes (``verify`` must then be
    picklable: a module-level function); the tasks are identical for any ``workers``.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ConfigError(f"n must be a whole number >= 0, got {n!r}")
    languages = tuple(languages)
    if not languages or any(lang not in LANGUAGES for lang in languages):
        raise ConfigError(f"languages must be a non-empty choice of {LANGUAGES}, got {languages!r}")
    missing = [name for name in BASE_TOOLS if name not in PHONE_TOOLS]
    if missing:
        raise ConfigError(f"the MobilePA catalogue lacks the generator's tools {missing}")
    master = random.Random(seed)
    jobs = [(f"mobilepa-{seed}-{index:05d}", master.getrandbits(64), CATEGORIES[index % len(CATEGORIES)],
             languages[(index // len(CATEGORIES)) % len(languages)]) for index in range(n)]
    if workers <= 1 or n <= chunk:
        return _generate_chunk(jobs, verify)
    import multiprocessing

    with multiprocessing.get_context("spawn").Pool(workers) as pool:
        parts = pool.starmap(_generate_chunk, [(jobs[start:start + chunk], verify) for start in range(0, n, chunk)])
    return [task for part in parts for task in part]


def _generate_chunk(jobs: list[tuple[str, int, str, str]], verify: Verifier) -> list[PhoneTask]:
    return [_generate_one(task_id, random.Random(task_seed), category, language, verify)
            for task_id, task_seed, category, language in jobs]


def _generate_one(task_id: str, rng: random.Random, category: str, language: str, verify: Verifier) -> PhoneTask:
    world = build_world(rng, language)
    draft = rng.choice(FAMILIES[category])(rng, world)
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
        "initial_state": world.rows(), "action_space": list(BASE_TOOLS), "category": category, "obstacles": obstacles,
        "bucket": "behaviour", "gold_behaviour": {}, "user_replies": draft.user_replies})
    run = OracleRun(task)
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
                                            answer_mentions=draft.answer_mentions)
        task.gold_delta = trajectory.delta
    task.action_space = _action_space(rng, [c.name for c in run.calls if c.name != "ask_user"])
    shipped = PhoneTask.model_validate(task.model_dump())  # the validators, on the finished task
    if shipped != task:
        raise GenerationError(f"{task_id}: the task changes when validated")
    check_task(task, verify)  # (the same content; ``task`` keeps its cached S0 template)
    return shipped


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
    if name == "create_alarm" and world.alarm_at(args["time"]) is None:
        def existing() -> dict[str, Any]:
            world.add_alarm(args["time"], args.get("label", ""), args.get("repeat", "once"), enabled=False)
            return {"kind": STATE, "tool": name, "error_type": "state_conflict",
                    "note": f"an alarm at {args['time']} already exists, switched off: turn it on instead"}
        return existing
    return None


def _action_space(rng: random.Random, used: list[str]) -> list[str]:
    """``A0``: the used tools, their companions and 1–3 distractors, same-domain where there are some.

    One distractor at least is a state-changing tool of :data:`SAFE_DISTRACTORS`, so that a policy calling
    every offered tool changes something nobody asked for whatever the order of its calls."""
    chosen = list(dict.fromkeys(used))
    for name in list(chosen):
        chosen += [c for c in COMPANIONS.get(name, ()) if c not in chosen]
    domains = {PHONE_TOOLS[name].domain for name in chosen}

    def near(candidates: list[str]) -> list[str]:
        return [t for t in candidates if PHONE_TOOLS[t].domain in domains] or candidates
    extra = [rng.choice(near([t for t in SAFE_DISTRACTORS if t not in chosen]))]
    writes = near([t for t in BASE_TOOLS if t not in chosen + extra and PHONE_TOOLS[t].writes])
    extra += rng.sample(writes, min(len(writes), rng.randint(0, 1)))
    reads = near([t for t in BASE_TOOLS if t not in chosen and not PHONE_TOOLS[t].writes])
    extra += rng.sample(reads, min(len(reads), rng.randint(0, 1)))
    chosen += extra
    rng.shuffle(chosen)
    return chosen


def task_counts(tasks: Sequence[PhoneTask]) -> dict[str, dict[str, int]]:
    """Tasks by category, bucket, language and obstacle kind (``none``: no obstacle), for the manifest."""
    obstacles: Counter[str] = Counter()
    for task in tasks:
        obstacles.update({o["kind"] for o in task.obstacles} or {"none"})
    return {"category": dict(sorted(Counter(t.category for t in tasks).items())),
            "bucket": dict(sorted(Counter(t.bucket for t in tasks).items())),
            "language": dict(sorted(Counter(t.language for t in tasks).items())),
            "obstacle": dict(sorted(obstacles.items()))}


def write_task_set(directory: str | os.PathLike, n: int, seed: int, *, languages: Sequence[str] = LANGUAGES,
                   verify: Verifier, workers: int = 1) -> Path:
    """Generate ``n`` tasks and write the task directory (``tasks.jsonl`` and ``manifest.json`` with the seed,
    the generator and the counts by category, bucket, language and obstacle)."""
    tasks = generate_tasks(n, seed, languages=languages, verify=verify, workers=workers)
    return write_tasks(directory, tasks, seed=seed, generator=GENERATOR, generator_version=GENERATOR_VERSION,
                       languages=list(languages), counts=task_counts(tasks))
