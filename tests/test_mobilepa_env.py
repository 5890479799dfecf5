"""MobilePA-v0 end to end on hand-made tasks: the oracle passes every bucket, the cheapest tricks fail,
refused actions are feedback, truncation is scored, and the action space is the task's tools. The Gymnasium
contract both suites keep is tests/test_gym_contract.py's."""

from __future__ import annotations

import json

import pytest

import mobility_env  # noqa: F401  (registers the envs)
from mobility_env.mobilepa.env import BUNDLED_TASKS, MobilePAEnv
from mobility_env.mobilepa.episode import play
from mobility_env.mobilepa.tasks import PhoneTask, write_tasks

PHONE = {"settings": [{"key": "airplane_mode", "value": "on"}, {"key": "wifi", "value": "off"},
                      {"key": "clock", "value": "2026-12-01 08:00"}],
         "contacts": [{"contact_id": "c1", "name": "王芳", "phone": "13800000000", "relation": "妈妈"},
                      {"contact_id": "c2", "name": "Tom", "phone": "13900000000", "relation": "colleague"}],
         "permissions": [{"app": "messages", "permission": "sms", "granted": 0}],
         "alarms": [{"alarm_id": "alarm-0", "time": "07:00", "label": "起床", "repeat": "weekdays", "enabled": 0}]}


def _task(task_id: str, bucket: str, calls: list[tuple[str, dict]], answer: str, **fields) -> PhoneTask:
    base = PhoneTask(task_id=task_id, query=fields.pop("query", "x"), category=fields.pop("category", "grounding"),
                     bucket=bucket, initial_state=PHONE, action_space=fields.pop("action_space"),
                     oracle_calls=[{"name": n, "arguments": a} for n, a in calls], oracle_answer=answer,
                     gold_calls=[{"name": "x"}], gold_delta={}, **fields)
    if bucket == "state_change":  # the gold delta is computed by playing the oracle, never written by hand
        base = base.model_copy(update={"gold_delta": play(base).delta})
    return base


def tasks() -> list[PhoneTask]:
    wifi = [("set_wifi", {"on": True}), ("set_airplane_mode", {"on": False}), ("set_wifi", {"on": True})]
    message = [("search_contacts", {"query": "妈妈"}), ("send_message", {"contact_id": "c1", "text": "我晚点到"}),
               ("grant_permission", {"app": "messages", "permission": "sms"}),
               ("send_message", {"contact_id": "c1", "text": "我晚点到"})]
    return [
        _task("wifi", "state_change", wifi, "Wi-Fi 已打开", query="打开 Wi-Fi", category="error_recovery",
              action_space=["set_wifi", "set_airplane_mode", "set_bluetooth"],
              obstacles=[{"kind": "state_change", "note": "airplane mode on"}]),
        _task("message", "state_change", [("set_airplane_mode", {"on": False})] + message, "已发送",
              query="给妈妈发短信说我晚点到", category="error_recovery",
              action_space=["search_contacts", "send_message", "grant_permission", "set_airplane_mode"],
              obstacles=[{"kind": "permission_block", "note": "sms"}]),
        PhoneTask(task_id="alarm", query="enable my 7 o'clock alarm", language="en", category="state_tracking",
                  bucket="tool_call", initial_state=PHONE, action_space=["list_alarms", "set_alarm_enabled"],
                  gold_calls=[{"name": "set_alarm_enabled", "arguments": {"alarm_id": "alarm-0", "enabled": True}}],
                  oracle_calls=[{"name": "list_alarms", "arguments": {}},
                                {"name": "set_alarm_enabled", "arguments": {"alarm_id": "alarm-0", "enabled": True}}],
                  oracle_answer="done"),
        PhoneTask(task_id="ask", query="给同事发个消息", category="grounding", bucket="behaviour", initial_state=PHONE,
                  action_space=["search_contacts", "send_message"], user_replies=["说我明天请假"],
                  obstacles=[{"kind": "missing_parameter", "note": "no text"}],
                  gold_behaviour={"must_ask": True, "answer_mentions": [["Tom"]]},
                  oracle_calls=[{"name": "ask_user", "arguments": {"question": "要发什么内容？"}}],
                  oracle_answer="好的，我会告诉 Tom 你明天请假"),
    ]


@pytest.fixture()
def env(tmp_path):
    write_tasks(tmp_path / "tasks", tasks(), seed=0)
    return MobilePAEnv(tmp_path / "tasks")


def _play(env, task_id, actions):
    obs, info = env.reset(options={"task_id": task_id})
    total, final = 0.0, info
    for action in actions:
        obs, reward, terminated, truncated, final = env.step(action)
        total += reward
        if terminated or truncated:
            break
    return total, final


def _oracle_actions(task):
    return [{"name": c.name, "arguments": c.arguments} for c in task.oracle_calls] + \
        [{"name": "finish", "arguments": {"answer": task.oracle_answer}}]


def test_the_oracle_passes_every_task_and_earns_the_most(env):
    for task in env.tasks.values():
        oracle_return, final = _play(env, task.task_id, _oracle_actions(task))
        assert final["metrics"]["success"] == 1.0, (task.task_id, final["verdict"])
        finish_only, cheap = _play(env, task.task_id, [{"name": "finish", "arguments": {"answer": "好的"}}])
        assert cheap["metrics"]["success"] == 0.0
        spam = [{"name": n, "arguments": {}} for n in task.action_space] + \
            [{"name": "finish", "arguments": {"answer": task.oracle_answer}}]
        spam_return, spammed = _play(env, task.task_id, spam)
        assert spammed["metrics"]["success"] == 0.0
        assert oracle_return > max(finish_only, spam_return)


def test_guessing_instead_of_asking_fails_a_must_ask_task(env):
    total, final = _play(env, "ask", [{"name": "search_contacts", "arguments": {"query": "colleague"}},
                                      {"name": "finish", "arguments": {"answer": "已告诉 Tom 你明天请假"}}])
    assert final["metrics"]["success"] == 0.0 and "asked_first" in final["verdict"]["reason"]
    total, final = _play(env, "ask", [{"name": "ask_user", "arguments": {"question": "发什么？"}},
                                      {"name": "finish", "arguments": {"answer": "好的"}}])
    assert final["metrics"]["success"] == 0.0 and "answer_mentions" in final["verdict"]["reason"]


def test_refused_actions_are_feedback_and_collateral_damage_costs_potential(env):
    env.reset(options={"task_id": "wifi"})
    obs, reward, _, _, info = env.step("not json")
    assert json.loads(obs)["error_type"] == "invalid_json" and info["error"]["type"] == "invalid_json" and reward < 0
    obs, reward, _, _, info = env.step({"name": "send_message", "arguments": {}})  # not offered in this task
    assert info["feedback"]["error_type"] == "unknown_tool"
    _, reward, _, _, info = env.step({"name": "set_bluetooth", "arguments": {"on": True}})  # airplane: conflict
    assert info["feedback"]["error_type"] == "state_conflict"
    env.step({"name": "set_airplane_mode", "arguments": {"on": False}})
    _, reward, _, _, info = env.step({"name": "set_bluetooth", "arguments": {"on": True}})  # nobody asked for it
    assert info["feedback"]["status"] == "success" and info["reward_components"]["progress"] < 0


def test_truncation_is_scored_without_an_answer(tmp_path):
    write_tasks(tmp_path / "t", tasks(), seed=0)
    env = MobilePAEnv(tmp_path / "t", max_steps=2)
    env.reset(options={"task_id": "wifi"})
    env.step({"name": "set_airplane_mode", "arguments": {"on": False}})
    _, _, terminated, truncated, info = env.step({"name": "set_wifi", "arguments": {"on": True}})
    assert truncated and not terminated and info["metrics"]["DR"] == 0.0 and info["metrics"]["success"] == 0.0
    assert info["trajectory"]["truncated"] and info["metrics"]["progress"] == 1.0


def test_the_action_space_is_the_offered_tools_and_grows_with_a_skill():
    """The Gymnasium contract is tests/test_gym_contract.py's (both suites); here what is MobilePA's own: the
    action space follows the task's tools (a loaded skill's too) and samples values in the tools' formats."""
    from mobility_env.mobilepa.catalogue import PHONE_TOOLS

    env = MobilePAEnv()
    assert env.action_space.tool_names == ("ask_user", "finish")  # before a task is drawn
    task = next(t for t in env.tasks.values() if t.oracle_calls and t.oracle_calls[0].name == "load_skill")
    _, info = env.reset(options={"task_id": task.task_id})
    names = [tool["function"]["name"] for tool in info["tools"]]
    assert list(env.action_space.tool_names) == names and "load_skill" in names
    load = task.oracle_calls[0]
    _, _, _, _, info = env.step({"name": load.name, "arguments": load.arguments})
    grown = [tool["function"]["name"] for tool in info["tools"]]
    assert list(env.action_space.tool_names) == grown and set(names) < set(grown)
    env.action_space.seed(0)
    skill_tools = [name for name in grown if name not in names]
    samples = [env.action_space.sample(mask=skill_tools) for _ in range(50)]
    assert {s["name"] for s in samples} == set(skill_tools)
    assert all(PHONE_TOOLS[s["name"]].validate(s["arguments"]) == [] for s in samples)
    env.reset(options={"task_id": task.task_id})
    assert list(env.action_space.tool_names) == names


def test_sampled_arguments_follow_the_phone_tools_formats():
    from mobility_env.mobilepa.catalogue import PHONE_TOOLS, openai_tools
    from mobility_env.mobilepa.env import _sample_argument
    from mobility_env.spaces import ToolCallSpace

    # clock times, phone numbers, radio frequencies, date-times, coordinates, waypoints, driving preferences
    formats = ["create_alarm", "set_dnd_schedule", "create_contact", "block_number", "tune_radio", "create_event",
               "create_reminder", "maps_route", "start_navigation", "save_place"]
    space = ToolCallSpace(openai_tools(formats), seed=0, values=_sample_argument)
    for _ in range(200):
        call = space.sample()
        assert PHONE_TOOLS[call["name"]].validate(call["arguments"]) == [], call


def test_oracle_and_floor_agents_and_the_scorecard(env):
    from mobility_agents.baselines.mobilepa.scripted import (FinishAtOnceAgent, PhoneOracleAgent, phone_scorecard,
                                                             play_tasks)

    oracle = phone_scorecard(play_tasks(PhoneOracleAgent(), env))
    floor = phone_scorecard(play_tasks(FinishAtOnceAgent(), env))
    assert oracle["overall"] == {**oracle["overall"], "tasks": 4, "success": 1.0, "DR": 1.0}
    assert floor["overall"]["success"] == 0.0 and floor["overall"]["DR"] == 1.0
    assert set(oracle["bucket"]) == {"state_change", "tool_call", "behaviour"}
    assert oracle["obstacle"]["permission_block"]["success"] == 1.0


class _SpamAgent:
    """Calls every offered tool with its schema's first example-like arguments, then answers like the oracle."""

    name = "spam"

    def actions(self, env, task_id):
        task = env.tasks[task_id]
        calls = [{"name": name, "arguments": {}} for name in task.action_space]
        calls += [{"name": c.name, "arguments": dict(c.arguments)} for c in task.oracle_calls] * 2  # repeat the gold
        return calls[: env.max_steps - 1] + [{"name": "finish", "arguments": {"answer": task.oracle_answer}}]


def test_on_the_bundled_set_the_oracle_passes_all_and_cheap_policies_never_beat_it():
    from mobility_agents.baselines.mobilepa.scripted import FinishAtOnceAgent, PhoneOracleAgent, play_tasks

    env = MobilePAEnv()
    # every fourth bundled task (a fixed sample: all 1,705 took ~36 s here; the oracle's 100 % and finishing at
    # once's 0 % on all of them: test_mobilepa_capability_tasks.py's run through gymnasium.make)
    sample = env.task_ids[::4]
    oracle = {r["task_id"]: r for r in play_tasks(PhoneOracleAgent(), env, sample)}
    assert len(oracle) >= 400 and all(r["metrics"]["success"] == 1.0 for r in oracle.values())
    for agent in (FinishAtOnceAgent(), _SpamAgent()):
        records = play_tasks(agent, env, sample)
        passed = [r["task_id"] for r in records if r["metrics"]["success"] == 1.0]
        beaten = [r["task_id"] for r in records if r["return"] > oracle[r["task_id"]]["return"] + 1e-9]
        assert not beaten, (agent.name, beaten[:5])
        if agent.name == "finish_at_once":
            assert not passed


def test_the_incremental_progress_equals_the_progress_of_the_final_delta():
    """The scorer keeps the delta per table and re-reads only the tables a call wrote; its potential must end
    where the progress of the whole final delta is (the shaping telescopes to w·Φ(final))."""
    env = MobilePAEnv()
    weight = env.scorer.weights.progress
    for task_id in env.task_ids[::3]:
        for actions in (_SpamAgent().actions(env, task_id), PhoneOracleAgentActions(env, task_id)):
            env.reset(options={"task_id": task_id})
            paid = 0.0
            for action in actions:
                _, _, terminated, truncated, info = env.step(action)
                paid += info["reward_components"].get("progress", 0.0)
                if terminated or truncated:
                    break
            if env.tasks[task_id].bucket != "behaviour" or env.tasks[task_id].gold_delta is not None:
                assert paid == pytest.approx(weight * info["metrics"]["progress"], abs=1e-6), task_id  # (rounded)


def PhoneOracleAgentActions(env, task_id):
    from mobility_agents.baselines.mobilepa.scripted import PhoneOracleAgent

    return PhoneOracleAgent().actions(env, task_id)


def test_answers_stuffed_with_other_records_fail_and_the_honest_answer_passes():
    """"What did X last text me?" / "What is Y's number?" / "What is on day D?": naming every message, number or
    event of the phone next to the right one must not pass. Maps questions ("How far is Z?", "What's the weather?",
    "Will it rain tomorrow?", "Is road R jammed?") have their own records: the other route options and the other
    days of the forecast the maps tools showed the oracle, and the other road states; naming them next to the
    right answer must not pass either."""
    import random
    from collections import Counter

    from mobility_env.mobilepa.domains.maps_travel import travel_minutes
    from mobility_env.mobilepa.generate_phrases import CONDITION_WORDS, TRAFFIC_WORDS, distance_text, minutes_text
    from mobility_env.mobilepa.tasks import load_tasks
    from mobility_rewards.mobilepa.verify import answer_distractors, verify_phone_task

    def shown_alternatives(task, trajectory):
        """The other route options' amounts of the asked unit and the other weather words of the forecasts the maps
        tools showed, and the other choices of an asked weather condition or road state: none inside a gold
        spelling."""
        spellings = [s for group in task.gold_behaviour.answer_mentions for s in group]
        minutes, metres = any(s.endswith("分钟") for s in spellings), any(s.endswith("米") for s in spellings)
        out = [word for table in (CONDITION_WORDS, TRAFFIC_WORDS) if any(g[0] in table for g in
                                                                         task.gold_behaviour.answer_mentions)
               for key, renderings in table.items() for word in (key, *renderings)]
        for call in (c for c in trajectory.calls if c.succeeded):
            result = call.payload.get("result") or {}
            for option in result.get("paths") or result.get("transits") or []:
                out += [minutes_text(travel_minutes(option["duration_s"]), task.language)] if minutes else []
                out += [distance_text(int(option["distance_m"]), task.language)] if metres else []
            out += [word for word in CONDITION_WORDS if word in str(result.get("weather", ""))]
        return [o for o in dict.fromkeys(out) if not any(o in s for s in spellings)]

    rng = random.Random(0)
    checked: Counter[str] = Counter()
    for task in load_tasks(BUNDLED_TASKS):
        if task.bucket != "behaviour" or not task.gold_behaviour.answer_mentions:
            continue
        honest = play(task)
        assert verify_phone_task(task, honest).passed
        records, shown = answer_distractors(task), shown_alternatives(task, honest)
        others = records + shown
        if not others:  # a route question whose only recorded option is the gold (a walk of one path): nothing to add
            assert "maps_route" in {c.name for c in task.oracle_calls}, task.task_id
            checked["nothing_to_add"] += 1
            continue
        for _ in range(5):
            picked = rng.sample(others, rng.randint(1, len(others)))
            stuffed = play(task, answer=f"{task.oracle_answer} Also: {', '.join(picked)}")
            verdict = verify_phone_task(task, stuffed)
            assert not verdict.passed, (task.task_id, picked)
            assert {"no_other_records", "no_other_values", "no_excluded_words"} & set(verdict.failed_checks)
        checked["maps" if shown else "phone"] += 1
    assert checked["phone"] >= 5 and checked["maps"] >= 10 and checked["nothing_to_add"] <= 5, checked


def test_an_agent_that_runs_out_of_actions_is_scored_like_a_truncation(env):
    from mobility_agents.baselines.mobilepa.scripted import play_tasks

    class Quiet:
        name = "quiet"

        def actions(self, env, task_id):
            return [{"name": "set_airplane_mode", "arguments": {"on": False}}]

    record = play_tasks(Quiet(), env, ["wifi"])[0]
    assert record["metrics"]["DR"] == 0.0 and record["metrics"]["success"] == 0.0
    assert record["verdict"]["reason"].startswith("truncated")
