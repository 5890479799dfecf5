"""The MobilePA rule agent (``mobility_agents.baselines.mobilepa.rule``): it plays from observations only (a sealed env,
decoy gold,
no privileged names in its code), is deterministic, stays inside the step limit, beats finishing at once, passes most
tasks of the bundled set and of an unseen seed, parses paraphrases the generator never writes, and its value parsers
read back every spelling the generator's phrase functions produce. Capability tasks (memory, skills, sub-agents):
per-dimension floors on the bundled set and on an unseen seed, the decoy gates change nothing, memory conflicts (the
newest record unless the request asks for an older one), dictated and forgotten records, a role looked up in memory,
the skill chosen by its words and used after the load, sub-agents chosen by words with their payloads, a missing
detail asked for first, a relative day dated by the earlier turn when no clock can be read."""

from __future__ import annotations

import ast
import datetime as dt
import inspect
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mobility_agents.baselines.mobilepa.capabilities as phone_capabilities
import mobility_agents.baselines.mobilepa.parse as phone_parse
import mobility_agents.baselines.mobilepa.rule as phone_rule
from mobility_agents.baselines.mobilepa.scripted import FinishAtOnceAgent, phone_scorecard
from mobility_agents.baselines.mobilepa.capabilities import record_kind, record_value
from mobility_agents.baselines.mobilepa.rule import PhoneRuleAgent, build_plan, extract, resolve_day
from mobility_env.mobilepa.catalogue import PHONE_TOOLS
from mobility_env.mobilepa.env import MobilePAEnv
from mobility_env.mobilepa.generate import BASE_TOOLS, DOMAIN_TOOLS, generate_tasks
from mobility_env.mobilepa.generate_phrases import say_clock, say_day, say_duration
from mobility_env.mobilepa.generate_reasoning import reasoning_family
from mobility_env.mobilepa.profile import UserProfile, build_profile, kind_of, with_profile
from mobility_env.mobilepa.skills import skill_action_space, skill_rows
from mobility_env.mobilepa.tasks import GoldBehaviour, GoldCall, HandoffGate, MemoryGate, PhoneTask, SkillGate
from mobility_rewards.mobilepa.verify import verify_phone_task

UNSEEN_SEED = 918_273  # a seed the bundled set (seed 0) and the generator tests do not use


def _results(agent: PhoneRuleAgent, env: Any, task_ids: list[str]) -> list[dict[str, Any]]:
    return [agent.run_episode(env, task_id)["result"] for task_id in task_ids]


def _success(results: list[dict[str, Any]]) -> float:
    return sum(r["metrics"]["success"] for r in results) / len(results)


def _ambiguous(task: PhoneTask) -> bool:
    """An ambiguous request of generator version 6 (two records fit: ask which), or a reasoning task of version 7 (a
    calendar → alarm → message chain, a refused permission): the rule agent has no rules for them; its score there
    is reported (docs/mobilepa.md), not asserted."""
    return any(o["kind"] == "ambiguous_request" for o in task.obstacles) or reasoning_family(task) is not None


def _base_only(env: MobilePAEnv) -> list[str]:
    """Tasks built from the generator's base tools only (no maps & travel tools; no ambiguous request)."""
    return [t for t in env.task_ids
            if set(env.tasks[t].action_space) <= set(BASE_TOOLS) and not _ambiguous(env.tasks[t])]


@pytest.fixture(scope="module")
def bundled() -> MobilePAEnv:
    return MobilePAEnv()


@pytest.fixture(scope="module")
def bundled_results(bundled: MobilePAEnv) -> list[dict[str, Any]]:
    return _results(PhoneRuleAgent(), bundled, bundled.task_ids)


@pytest.fixture(scope="module")
def unseen() -> MobilePAEnv:
    return MobilePAEnv(tasks=generate_tasks(150, seed=UNSEEN_SEED, verify=verify_phone_task))


# ------------------------------------------------------------------------------------------- rates
def _basic(env: MobilePAEnv, results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The results of basic-tool-use tasks on the first catalogue's domains (the rule agent does not know the memory,
    skill and sub-agent tasks, nor the later domains' tasks of generator version 5: a benchmark's template matcher is
    not tuned to new tasks; what it scores there is reported in docs/results.md, not asserted)."""
    return [r for r in results if env.tasks[r["episode_id"]].dimension == "basic"
            and not set(env.tasks[r["episode_id"]].action_space) & set(DOMAIN_TOOLS)
            and not _ambiguous(env.tasks[r["episode_id"]])]


def test_bundled_set_rates(bundled: MobilePAEnv, bundled_results: list[dict[str, Any]]) -> None:
    assert all(r["failure"] is None for r in bundled_results)
    assert all(r["metrics"]["DR"] == 1.0 for r in bundled_results)  # it always answers
    card = phone_scorecard(_basic(bundled, bundled_results))
    assert card["category"]["grounding"]["success"] >= 0.9
    assert card["overall"]["success"] >= 0.9
    assert min(row["success"] for row in card["category"].values()) >= 0.8
    base = set(_base_only(bundled))
    assert len(base) >= 100
    assert _success([r for r in bundled_results if r["episode_id"] in base]) >= 0.95


def test_unseen_seed_generalises(unseen: MobilePAEnv) -> None:
    results = _results(PhoneRuleAgent(), unseen, unseen.task_ids)
    assert all(r["failure"] is None for r in results)
    assert _success(_basic(unseen, results)) >= 0.9
    base = set(_base_only(unseen))
    assert _success([r for r in results if r["episode_id"] in base]) >= 0.93
    maps = [r for r in _basic(unseen, results) if r["episode_id"] not in base]  # the maps & travel families
    if len(maps) < 10:
        pytest.skip(f"only {len(maps)} maps & travel tasks in this generator's output")
    assert _success(maps) >= 0.85


def test_beats_finishing_at_once(bundled: MobilePAEnv, bundled_results: list[dict[str, Any]]) -> None:
    floor = _results(FinishAtOnceAgent(), bundled, bundled.task_ids)
    assert _success(floor) == 0.0
    assert _success(bundled_results) > 0.5
    assert sum(r["total_reward"] for r in bundled_results) > sum(r["total_reward"] for r in floor)


# ------------------------------------------------------------------------------------------- honesty
class _Sealed:
    """Only ``reset``, ``step`` and ``abandon`` of an env: anything else an agent reaches for through
    ``session.env`` (the task, its gold, the state database, ``unwrapped``) raises AttributeError, which
    ``run_episode`` records as the episode's failure."""

    __slots__ = ("reset", "step", "abandon")

    def __init__(self, env: MobilePAEnv):
        self.reset, self.step, self.abandon = env.reset, env.step, env.abandon


def _decoy(task: PhoneTask) -> PhoneTask:
    """The task with its gold and its known-good solution replaced by wrong ones (request, phone, replies kept); a
    capability task's gate names a memory, a skill and a sub-agent that do not exist."""
    gates = {"memory_gate": MemoryGate(memory_ids=["mem-00000000"], reasoning="conflict_resolution"),
             "skill_gate": SkillGate(skill_id="decoy_skill", routing="mixed"),
             "handoff_gate": HandoffGate(agent="route_to_decoy_agent", payload={"decoy": ["DECOY"]})}
    return task.model_copy(update={
        "oracle_calls": [GoldCall(name="set_wifi", arguments={"on": True})], "oracle_answer": "DECOY",
        "gold_calls": [GoldCall(name="delete_alarm", arguments={"alarm_id": "alarm-decoy"})],
        "gold_delta": {"settings": {"added": [{"key": "decoy", "value": "1"}]}},
        "gold_behaviour": GoldBehaviour(must_ask=True, forbidden=["set_wifi"], answer_mentions=[["DECOY"]]),
        **{name: gate for name, gate in gates.items() if getattr(task, name) is not None}})


def _actions(env: Any, task_ids: list[str]) -> list[list[Any]]:
    return [[s["action"] for s in PhoneRuleAgent().run_episode(env, t)["trajectory"]["steps"]] for t in task_ids]


def test_plays_from_observations_only(bundled: MobilePAEnv, bundled_results: list[dict[str, Any]]) -> None:
    sealed = _results(PhoneRuleAgent(), _Sealed(bundled), bundled.task_ids)
    assert all(r["failure"] is None for r in sealed)
    assert [r["metrics"] for r in sealed] == [r["metrics"] for r in bundled_results]
    decoys = MobilePAEnv(tasks=[_decoy(t) for t in bundled.tasks.values()])
    assert {t.dimension for t in decoys.tasks.values()} == {"basic", "memory", "skill", "subagent"}
    assert _actions(_Sealed(decoys), decoys.task_ids) == _actions(bundled, bundled.task_ids)


def test_the_sealed_env_catches_a_peeking_agent(bundled: MobilePAEnv) -> None:
    class Peeking(PhoneRuleAgent):
        def play(self, session: Any) -> None:
            session.env.tasks  # noqa: B018  (the cheat the guard must catch)
            super().play(session)
    result = Peeking().run_episode(_Sealed(bundled), bundled.task_ids[0])["result"]
    assert result["failure"]["type"] == "AttributeError"


@pytest.mark.parametrize("module", [phone_rule, phone_parse, phone_capabilities], ids=lambda m: m.__name__)
def test_its_code_names_nothing_privileged(module: Any) -> None:
    forbidden = {"env", "unwrapped", "tasks", "task", "gold_calls", "gold_delta", "gold_behaviour", "oracle_calls",
                 "oracle_answer", "initial_state", "user_replies", "user_facts", "state", "memory_gate", "skill_gate",
                 "handoff_gate", "memory_ids", "profile"}
    tree = ast.parse(inspect.getsource(module))
    used = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    assert not used & forbidden
    imported = {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    imported |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    assert not {m for m in imported if m.startswith(("mobility_env", "mobility_rewards"))}  # no env internals
    assert {"re", "Frame"} & {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}  # the scan sees code


# ------------------------------------------------------------------------------------------- contract
def test_deterministic(bundled: MobilePAEnv) -> None:
    def run() -> list[dict[str, Any]]:
        out = []
        for task_id in bundled.task_ids[:80]:
            record = PhoneRuleAgent().run_episode(bundled, task_id)
            record["result"].pop("elapsed_s")
            out.append(record)
        return out
    assert run() == run()


@pytest.mark.parametrize("max_steps", [1, 3, 5])
def test_stays_inside_the_step_limit_and_still_answers(bundled: MobilePAEnv, max_steps: int) -> None:
    env = MobilePAEnv(tasks=list(bundled.tasks.values()), max_steps=max_steps)
    results = _results(PhoneRuleAgent(), env, env.task_ids)
    assert all(r["failure"] is None and r["steps"] <= max_steps for r in results)
    assert all(r["metrics"]["DR"] == 1.0 and r["terminated"] for r in results)  # the last step is always finish


# ------------------------------------------------------------------------------------------- paraphrases
PHONE: dict[str, list[dict[str, Any]]] = {
    "settings": [{"key": "clock", "value": "2026-05-04 09:00"}, {"key": "wifi", "value": "off"},
                 {"key": "bluetooth", "value": "on"}, {"key": "airplane_mode", "value": "on"},
                 {"key": "brightness", "value": "40"}, {"key": "volume_media", "value": "30"}],
    "contacts": [{"contact_id": "c1", "name": "王芳", "phone": "13800000000", "relation": "妈妈"},
                 {"contact_id": "c2", "name": "王芳芳", "phone": "13900000000", "relation": "同事"},
                 {"contact_id": "c3", "name": "Tom Lee", "phone": "13700000000", "relation": "mom"}],
    "permissions": [{"app": "messages", "permission": "sms", "granted": 0}],
    "alarms": [{"alarm_id": "alarm-1", "time": "07:00", "label": "Gym", "repeat": "daily", "enabled": 1}],
    "faults": [{"tool": "set_volume", "error_type": "transient_failure", "remaining": 2, "message": "busy"}]}
TOOLS = ["get_device_status", "set_wifi", "set_bluetooth", "set_airplane_mode", "set_brightness", "set_volume",
         "set_ringer_mode", "create_alarm", "list_alarms", "set_alarm_enabled", "delete_alarm", "search_contacts",
         "send_message", "call_contact", "grant_permission"]


def _play(query: str, language: str = "en", replies: tuple[str, ...] = (), history: tuple[str, ...] = (),
          **state: list[dict[str, Any]]) -> list[tuple[str, Any, bool]]:
    """The calls the agent makes on a hand-written request, each with whether it succeeded (``ask_user`` and
    refused calls included)."""
    turns = [{"role": role, "content": text} for text in history for role in ("user", "assistant")]
    task = PhoneTask.model_validate({
        "task_id": "t", "query": query, "language": language, "history": turns, "initial_state": {**PHONE, **state},
        "action_space": TOOLS, "category": "grounding", "bucket": "behaviour", "gold_behaviour": {},
        "user_replies": list(replies)})
    steps = PhoneRuleAgent().run_episode(MobilePAEnv(tasks=[task]), "t")["trajectory"]["steps"]
    assert steps[-1]["action"]["name"] == "finish"
    return [(s["action"]["name"], s["action"]["arguments"], s["error"] is None) for s in steps[:-1]]


def _writes(calls: list[tuple[str, Any, bool]]) -> list[tuple[str, Any]]:
    """The successful state-changing calls."""
    return [(name, args) for name, args, ok in calls if ok and name in PHONE_TOOLS and PHONE_TOOLS[name].writes]


@pytest.mark.parametrize("query,language,expected", [
    ("Could you crank the brightness up to 75 percent?", "en", [("set_brightness", {"level": 75})]),
    ("请帮我把蓝牙关掉吧", "zh", [("set_bluetooth", {"on": False})]),
    ("明天早上7点20叫醒我，备注“晨跑”", "zh", [("create_alarm", {"time": "07:20", "label": "晨跑"})]),
    ("把亮度调到30%，不对，50%", "zh", [("set_brightness", {"level": 50})]),
    ("Please switch the 7 am alarm off.", "en", [("set_alarm_enabled", {"alarm_id": "alarm-1", "enabled": False})]),
    ("把7点的闹钟删掉", "zh", [("delete_alarm", {"alarm_id": "alarm-1"})]),
    ("Mute my phone.", "en", [("set_ringer_mode", {"mode": "silent"})]),
    ("把音乐声音开大到80", "zh", [("set_volume", {"stream": "media", "level": 80})]),
    ("帮我把屏幕亮度设置为六十", "zh", [("set_brightness", {"level": 60})]),
    ("Remind me to take my medicine at 9pm.", "en", [("create_alarm", {"time": "21:00"})]),
])
def test_paraphrases_the_generator_never_writes(query: str, language: str, expected: list[tuple[str, Any]]) -> None:
    assert _writes(_play(query, language)) == expected


@pytest.mark.parametrize("query", ['Text my mom: "Running late"', 'Send a message to Tom Lee saying "Running late"'])
def test_recovers_from_a_permission_block_and_a_blocking_setting(query: str) -> None:
    calls = _play(query)
    assert calls[0][0] == "search_contacts"
    assert _writes(calls) == [("grant_permission", {"app": "messages", "permission": "sms"}),
                              ("set_airplane_mode", {"on": False}),
                              ("send_message", {"contact_id": "c3", "text": "Running late"})]


@pytest.mark.parametrize("query,language,contact", [("Call mom.", "en", "c3"), ("给妈妈打电话", "zh", "c1")])
def test_a_relation_names_the_contact(query: str, language: str, contact: str) -> None:
    assert _writes(_play(query, language))[-1] == ("call_contact", {"contact_id": contact})


def test_picks_the_exact_name_among_lookalikes_and_retries_transient_failures() -> None:
    calls = _play("给王芳发短信说“到家了”", "zh")
    assert ("send_message", {"contact_id": "c1", "text": "到家了"}) in _writes(calls)
    volume = _play("Set the media volume to 60%.")
    assert volume == [("set_volume", {"stream": "media", "level": 60}, ok) for ok in (False, False, True)]


def test_asks_for_a_missing_value_before_acting() -> None:
    calls = _play('Set an alarm labelled "Nap".', replies=("2:30 PM",))
    assert calls[0][0] == "ask_user"
    assert _writes(calls) == [("create_alarm", {"time": "14:30", "label": "Nap"})]


def test_a_correction_without_a_value_asks_and_uses_the_reply() -> None:
    calls = _play("Wrong time, change it.", replies=("8:15 AM",), history=('Wake me at 6 am, label "Run".',))
    assert calls[0][0] == "ask_user"
    assert _writes(calls) == [("create_alarm", {"time": "08:15", "label": "Run"})]


def test_a_missing_parameter_error_is_asked_for_and_retried() -> None:
    # no current city on this phone: maps_weather says which field is missing; the user's reply fills it
    task = PhoneTask.model_validate({
        "task_id": "w", "query": "What's the weather like here right now?", "language": "en", "initial_state": PHONE,
        "action_space": ["maps_weather"], "category": "grounding", "bucket": "behaviour", "gold_behaviour": {},
        "user_replies": ["上海市"]})
    steps = PhoneRuleAgent().run_episode(MobilePAEnv(tasks=[task]), "w")["trajectory"]["steps"]
    names = [s["action"]["name"] for s in steps]
    assert names[:3] == ["maps_weather", "ask_user", "maps_weather"]
    assert steps[0]["error"]["type"] == "missing_parameter"
    assert steps[2]["action"]["arguments"]["city"] == "上海市"
    assert names[-1] == "finish"


@pytest.mark.parametrize("wifi,expected", [("off", [("set_wifi", {"on": True})]),
                                           ("on", [("set_bluetooth", {"on": False})])])
def test_a_condition_is_read_before_acting(wifi: str, expected: list[tuple[str, Any]]) -> None:
    settings_rows = [r for r in PHONE["settings"] if r["key"] not in ("wifi", "airplane_mode")]
    calls = _play("If Wi-Fi is off, switch it on; otherwise turn Bluetooth off.",
                  settings=settings_rows + [{"key": "wifi", "value": wifi}])
    assert calls[0] == ("get_device_status", {}, True)
    assert _writes(calls) == expected


def test_a_request_it_cannot_read_changes_nothing_and_says_so() -> None:
    calls = _play("Order me a pizza with extra cheese.")
    assert _writes(calls) == []


# ------------------------------------------------------------------------------------------- value parsers
def _values(text: str, kind: str) -> list[Any]:
    return [value for k, value, _ in extract(text)[1] if k == kind]


@settings(deadline=None, derandomize=True, max_examples=150)
@given(st.integers(0, 23), st.integers(0, 59), st.sampled_from(["zh", "en"]), st.integers(0, 2 ** 32))
def test_every_spelling_of_a_clock_time_reads_back(hour: int, minute: int, lang: str, seed: int) -> None:
    hhmm = f"{hour:02d}:{minute:02d}"
    said = say_clock(random.Random(seed), hhmm, lang)
    assert _values(f"提醒我{said}出门" if lang == "zh" else f"Remind me at {said} to leave.", "T") == [hhmm]


@settings(deadline=None, derandomize=True, max_examples=100)
@given(st.integers(0, 300), st.integers(0, 12), st.sampled_from(["zh", "en"]), st.integers(0, 2 ** 32))
def test_every_spelling_of_a_day_reads_back(start: int, offset: int, lang: str, seed: int) -> None:
    today = dt.date(2026, 1, 5) + dt.timedelta(days=start)
    day = today + dt.timedelta(days=offset)
    days = _values(say_day(random.Random(seed), day, today, lang), "D")
    assert len(days) == 1 and resolve_day(days[0], today) == day


@pytest.mark.parametrize("minutes", [30, 45, 60, 90, 120, 150])
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_durations_read_back(minutes: int, lang: str) -> None:
    assert _values(say_duration(minutes, lang), "M") == [minutes]


@settings(deadline=None, derandomize=True, max_examples=60)
@given(st.integers(0, 100), st.integers(0, 100))
def test_a_corrected_value_wins(first: int, second: int) -> None:
    plan = build_plan(f"Set the brightness to {first}%, no wait, {second}%.", [], "en")
    assert [(f.concept, f.value("number")) for f in plan.frames] == [("brightness", second)]


# ------------------------------------------------------------------------------------------- capabilities
CAPABILITY_SEED = 606_060  # unseen too: capability tasks only (memory, skill, sub-agent)
CAPABILITIES = ("memory", "skill", "subagent")
#: the profile's record keys by the kind the agent reads from a record's text
KINDS = {"place.home": "home", "place.work": "work", "place.school": "school", "place.gym": "gym",
         "routine.wake_up": "wake", "routine.bedtime": "bedtime", "routine.gym": "gym_days",
         "routine.commute": "commute",
         "app.music": "music", "device.night_brightness": "night_brightness", "device.dnd": "dnd",
         "travel.mode": "travel_mode", "travel.driving": "driving", "travel.ride": "ride", "fact.allergy": "allergy",
         "fact.car_plate": "plate", "person": "person", "person.birthday": "birthday"}


@pytest.fixture(scope="module")
def capability() -> MobilePAEnv:
    tasks = generate_tasks(300, seed=CAPABILITY_SEED, dimensions=CAPABILITIES, verify=verify_phone_task)
    return MobilePAEnv(tasks=tasks)


@pytest.fixture(scope="module")
def capability_results(capability: MobilePAEnv) -> list[dict[str, Any]]:
    return _results(PhoneRuleAgent(), capability, capability.task_ids)


def _rates(env: MobilePAEnv, results: list[dict[str, Any]], key: Any) -> dict[Any, float]:
    """Success by ``key(task)`` (None: left out)."""
    groups: dict[Any, list[dict[str, Any]]] = {}
    for result in results:
        group = key(env.tasks[result["episode_id"]])
        if group is not None:
            groups.setdefault(group, []).append(result)
    return {group: _success(rows) for group, rows in groups.items()}


def _capability_floors(env: MobilePAEnv, results: list[dict[str, Any]]) -> None:
    """Measured 100 % memory and skill on several unseen seeds; sub-agent 75–82 %: every miss is a date said
    relative to today ("明天", "the day after tomorrow") in a task that offers no tool to read the phone's clock
    (see test_subagent_handoffs_when_the_clock_can_be_read)."""
    assert all(r["failure"] is None and r["metrics"]["DR"] == 1.0 for r in results)
    rates = _rates(env, results, lambda t: t.dimension)
    assert rates["memory"] >= 0.95 and rates["skill"] >= 0.95 and rates["subagent"] >= 0.6
    axes = {**_rates(env, results, lambda t: t.memory_gate and t.memory_gate.reasoning),
            **_rates(env, results, lambda t: t.memory_gate and t.memory_gate.operation),
            **_rates(env, results, lambda t: t.skill_gate and t.skill_gate.routing)}
    assert set(axes) == {"single_lookup", "conflict_resolution", "phone_operation", "memory_modification",
                         "skill_only", "mixed"}
    assert min(axes.values()) >= 0.9
    categories = _rates(env, results, lambda t: (t.dimension, t.category) if t.dimension != "subagent" else None)
    assert len(categories) == 10 and min(categories.values()) >= 0.85


def test_capability_floors_on_an_unseen_seed(capability: MobilePAEnv,
                                             capability_results: list[dict[str, Any]]) -> None:
    assert {t.dimension for t in capability.tasks.values()} == set(CAPABILITIES)
    _capability_floors(capability, capability_results)
    assert _success(capability_results) > _success(_results(FinishAtOnceAgent(), capability, capability.task_ids))


def test_capability_floors_on_the_bundled_set(bundled: MobilePAEnv, bundled_results: list[dict[str, Any]]) -> None:
    _capability_floors(bundled, [r for r in bundled_results if bundled.tasks[r["episode_id"]].dimension != "basic"])


def test_subagent_handoffs_when_the_clock_can_be_read(capability: MobilePAEnv) -> None:
    tasks = [t.model_copy(update={"action_space": [*t.action_space, "get_device_status"]})
             for t in capability.tasks.values() if t.dimension == "subagent"]
    env = MobilePAEnv(tasks=tasks)
    assert len(tasks) >= 40 and _success(_results(PhoneRuleAgent(), env, env.task_ids)) >= 0.95


def test_capability_episodes_are_deterministic_and_stay_inside_the_step_limit(capability: MobilePAEnv) -> None:
    def run(env: MobilePAEnv) -> list[dict[str, Any]]:
        records = [PhoneRuleAgent().run_episode(env, task_id) for task_id in env.task_ids[:60]]
        for record in records:
            record["result"].pop("elapsed_s")
        return records
    assert run(capability) == run(capability)
    short = MobilePAEnv(tasks=list(capability.tasks.values())[:60], max_steps=4)
    assert all(r["result"]["steps"] <= 4 and r["result"]["terminated"] for r in run(short))


@pytest.mark.parametrize("seed", range(0, 40, 3))
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_it_reads_the_kind_and_the_values_of_every_record_a_profile_holds(seed: int, lang: str) -> None:
    profile = build_profile(random.Random(seed), lang)
    for record in profile.records:
        kind = KINDS[kind_of(record.key)]
        assert record_kind(record.content) == kind, record.content
        read = record_value(kind, record.content)
        expected = {"place": record.value["place"].name} if "place" in record.value else {}
        fields = (("time", "time"), ("mode", "mode"), ("preference", "preference"), ("ride_type", "ride"),
                  ("app", "app"), ("level", "level"))
        expected.update({field: record.value[key] for key, field in fields if key in record.value})
        if "start" in record.value:
            expected["times"] = [record.value["start"], record.value["end"]]
        if "days" in record.value:
            expected["days"] = list(record.value["days"])
        if kind == "person":
            expected["name"] = record.value["name"]
        assert {k: sorted(read[k]) if k == "days" else read.get(k) for k in expected} == expected, record.content


def _profile(key: str, lang: str, conflict: bool = True) -> UserProfile:
    """A drawn profile with ``key`` (with older records of it when ``conflict``)."""
    return next(p for seed in range(300) for p in [build_profile(random.Random(seed), lang)]
                if key in p.keys() and (not conflict or key in p.conflicting_keys()))


def _run(query: str, language: str, state: dict[str, list[dict[str, Any]]], tools: list[str],
         replies: tuple[str, ...] = (), history: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """The steps of the agent on a hand-made task (``finish`` left out)."""
    turns = [{"role": role, "content": text} for role, text in zip(("user", "assistant") * 4, history)]
    task = PhoneTask.model_validate({
        "task_id": "c", "query": query, "language": language, "history": turns, "initial_state": state,
        "action_space": tools, "category": "grounding", "bucket": "behaviour", "gold_behaviour": {},
        "user_replies": list(replies)})
    steps = PhoneRuleAgent().run_episode(MobilePAEnv(tasks=[task]), "c")["trajectory"]["steps"]
    assert steps[-1]["action"]["name"] == "finish"
    return steps[:-1]


def _done(steps: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    return [(s["action"]["name"], s["action"]["arguments"]) for s in steps if s["error"] is None]


MEMORY_TOOLS = ["search_memory", "get_memory", "list_memories", "update_memory", "delete_memory"]


@pytest.mark.parametrize("lang,query,older", [
    ("en", 'Wake me every day at my usual time, label it "Up".', False),
    ("en", 'Set a daily alarm for the time I used to get up, labelled "Up".', True),
    ("zh", "每天按我平常起床的点叫我，标签写“起床”", False),
    ("zh", "按我以前起床的时间定个每天的闹钟，标签写“起床”", True)])
def test_the_newest_record_holds_unless_the_request_asks_for_an_older_one(lang: str, query: str, older: bool) -> None:
    profile = _profile("routine.wake_up", lang)
    history = profile.history("routine.wake_up")
    wanted = history[-2] if older else history[-1]
    state = with_profile({"settings": [{"key": "clock", "value": "2026-05-04 09:00"}]}, profile)
    steps = _run(query, lang, state, MEMORY_TOOLS + ["create_alarm", "list_alarms"])
    assert steps[0]["action"]["name"] == "search_memory" and wanted.memory_id in steps[0]["observation"]
    assert _done(steps)[-1] == ("create_alarm", {"time": wanted.value["time"], "label": "Up" if lang == "en" else "起床",
                                                 "repeat": "daily"})


def test_a_dictated_record_updates_the_newest_of_its_kind_and_forget_deletes_the_named_one() -> None:
    profile = _profile("place.home", "en")
    state = with_profile({"settings": [{"key": "clock", "value": "2026-05-04 09:00"}]}, profile)
    content = "I've moved; I now live at 新华小区."
    steps = _run(f'I moved house. Please remember it as "{content}"', "en", state, MEMORY_TOOLS)
    assert _done(steps)[-1] == ("update_memory", {"memory_id": profile.current("place.home").memory_id,
                                                  "content": content})
    old = profile.history("place.home")[0]
    steps = _run(f"I haven't lived at {old.value['place'].name} for years; delete that old memory.", "en", state,
                 MEMORY_TOOLS)
    deleted = [call for call in _done(steps) if call[0] != "search_memory"]
    assert deleted == [("delete_memory", {"memory_id": old.memory_id})]


@pytest.mark.parametrize("query", ['Tell my boss "Stuck in traffic".', "text my boss Stuck in traffic"])
def test_a_role_is_looked_up_in_memory_before_the_contacts(query: str) -> None:
    profile = _profile("person.boss", "en", conflict=False)
    boss = profile.current("person.boss").value["name"]
    state = with_profile({"settings": [{"key": "clock", "value": "2026-05-04 09:00"}],
                          "contacts": [{"contact_id": "c9", "name": boss, "phone": "13600000000", "relation": ""}]},
                         profile)
    steps = _run(query, "en", state, MEMORY_TOOLS + ["search_contacts", "send_message"])
    assert [name for name, _ in _done(steps)] == ["search_memory", "search_contacts", "send_message"]
    assert _done(steps)[-1] == ("send_message", {"contact_id": "c9", "text": "Stuck in traffic"})


def test_the_skill_the_request_names_is_loaded_and_its_tools_used_after_the_load() -> None:
    skills = ["storage_cleanup", "bedtime_dnd", "travel_checkin"]
    state = {**PHONE, "skills": skill_rows(skills, "en")}
    space = skill_action_space(["list_apps"], skills)
    assert "set_do_not_disturb" not in space  # skill-only routing: the routine's tools come with the load
    steps = _run("Time to sleep: do not disturb on and brightness down to 10%.", "en", state, space)
    assert _done(steps) == [("load_skill", {"skill_id": "bedtime_dnd"}), ("set_do_not_disturb", {"on": True}),
                            ("set_brightness", {"level": 10})]
    nothing = _run("Tell me a joke.", "en", state, space)
    assert [s["action"]["name"] for s in nothing] == []  # no offered skill shares its words: nothing is loaded


HANDOFF_STATE: dict[str, list[dict[str, Any]]] = {
    "settings": [{"key": "clock", "value": "2026-05-04 09:00"}],
    "apps": [{"app": "Taobao", "installed": 1, "running": 0}],
    "permissions": [{"app": "assistant", "permission": "accessibility", "granted": 1}]}


@pytest.mark.parametrize("query,language,agent,payload", [
    ("Book me a flight to Beijing from Shanghai on June 3.", "en", "route_to_ticket_agent",
     {"kind": "flight", "destination": "Beijing", "origin": "Shanghai", "date": "2026-06-03"}),
    ("帮我订两张明天从杭州到深圳的高铁票", "zh", "route_to_ticket_agent",
     {"kind": "train", "origin": "杭州", "destination": "深圳", "passengers": 2, "date": "2026-05-05"}),
    ("Order 2 x pizza for delivery to Capital Airport Terminal 3.", "en", "route_to_food_agent",
     {"items": "2 x pizza", "address": "Capital Airport Terminal 3"}),
    ("帮我在上海订个酒店，5月29号入住，住三晚", "zh", "route_to_hotel_agent",
     {"city": "上海", "check_in": "2026-05-29", "check_out": "2026-06-01"}),
    ("Get me two tickets for Ne Zha 2 at 19:30 on May 30.", "en", "route_to_movie_agent",
     {"title": "Ne Zha 2", "date": "2026-05-30", "showtime": "19:30", "seats": 2}),
    ("在淘宝上把购物车里的猫粮下单", "zh", "route_to_gui_agent", {"app": "Taobao", "instruction": "在淘宝上把购物车里的猫粮下单"})])
def test_the_request_goes_to_the_sub_agent_its_words_name_with_its_payload(
        query: str, language: str, agent: str, payload: dict[str, Any]) -> None:
    others = [a for a in ("route_to_ride_agent", "route_to_ticket_agent", "route_to_hotel_agent") if a != agent]
    steps = _run(query, language, HANDOFF_STATE, [agent, *others, "get_device_status"])
    handoffs = [(name, args) for name, args in _done(steps) if name.startswith("route_to_")]
    assert handoffs == [(agent, payload)]


def test_a_missing_required_detail_is_asked_for_before_the_handoff() -> None:
    steps = _run("Book me a hotel in Chengdu, two nights.", "en", HANDOFF_STATE,
                 ["route_to_hotel_agent", "get_device_status"], replies=("Checking in on June 3.",))
    names = [s["action"]["name"] for s in steps]
    assert names.index("ask_user") < names.index("route_to_hotel_agent")
    assert _done(steps)[-1] == ("route_to_hotel_agent", {"city": "Chengdu", "check_in": "2026-06-03",
                                                         "check_out": "2026-06-05"})


def test_without_a_clock_the_earlier_turn_dates_a_relative_day() -> None:
    steps = _run("Change the date to the day after tomorrow; the rest stays.", "en", {}, ["route_to_ticket_agent"],
                 history=("Book a train ticket from Chengdu to Chongqing tomorrow.",
                          "A train ticket Chengdu → Chongqing on 2026-03-19: confirm?"))
    assert _done(steps) == [("route_to_ticket_agent", {"kind": "train", "origin": "Chengdu", "destination": "Chongqing",
                                                       "date": "2026-03-20"})]


@pytest.mark.parametrize("query,language", [("Open WeChat.", "en"), ("打开微信", "zh")])
def test_an_app_the_phone_opens_itself_is_not_handed_to_the_gui_agent(query: str, language: str) -> None:
    state = {**HANDOFF_STATE, "apps": [{"app": "WeChat", "installed": 1, "running": 0}]}
    steps = _run(query, language, state, ["open_app", "list_apps", "route_to_gui_agent"])
    assert [name for name, _ in _done(steps) if name != "list_apps"] == ["open_app"]
