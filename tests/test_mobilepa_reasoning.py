"""The reasoning families of generator version 7 (:mod:`mobility_env.mobilepa.generate_reasoning`): a calendar →
alarm → message chain whose gold follows from what was read, and a permission the user refuses."""

from __future__ import annotations

import random
from typing import Any

import pytest

from mobility_agents.baselines.mobilepa.rule import PhoneRuleAgent
from mobility_env.mobilepa.env import MobilePAEnv
from mobility_env.mobilepa.episode import PhoneSession, play
from mobility_env.mobilepa.generate import (BASE_TOOLS, GENERATOR_VERSION, REASONING_BLOCK, REASONING_EVERY,
                                            _basic_kind, _generate_one, generate_tasks)
from mobility_env.mobilepa.generate_checks import adversaries, granted_anyway, guessed_times
from mobility_env.mobilepa.generate_oracle import OracleRun
from mobility_env.mobilepa.generate_phrases import shift_clock
from mobility_env.mobilepa.generate_reasoning import CHAIN, REFUSAL, meeting_chain, reasoning_family
from mobility_env.mobilepa.generate_world import build_world
from mobility_env.mobilepa.tasks import PhoneTask
from mobility_rewards.mobilepa.verify import verify_phone_task

Plan = list[tuple[str, dict[str, Any]]]


@pytest.fixture(scope="module")
def chain_tasks() -> list[PhoneTask]:
    """Checked chain tasks in both languages (``_generate_one`` runs the generator's checks)."""
    return [_generate_one(f"chain-{i}", random.Random(7_000 + i), "conditional", ("zh", "en")[i % 2],
                          verify_phone_task, "reasoning") for i in range(8)]


@pytest.fixture(scope="module")
def ask_first_tasks() -> list[PhoneTask]:
    """Checked tasks of the refusal family (the permission withheld, or granted: the contrast), both languages."""
    return [_generate_one(f"refuse-{i}", random.Random(8_000 + i), "error_recovery", ("zh", "en")[i % 2],
                          verify_phone_task, "reasoning") for i in range(20)]


@pytest.fixture(scope="module")
def refusal_tasks(ask_first_tasks: list[PhoneTask]) -> list[PhoneTask]:
    return [t for t in ask_first_tasks if reasoning_family(t) == "permission_refused"]


@pytest.fixture(scope="module")
def granted_tasks(ask_first_tasks: list[PhoneTask]) -> list[PhoneTask]:
    return [t for t in ask_first_tasks if reasoning_family(t) == "permission_granted"]


def _passes(task: PhoneTask, calls: Plan, answer_text: str) -> bool:
    return verify_phone_task(task, play(task, calls, answer_text)).passed


def _plan(task: PhoneTask) -> Plan:
    return [(c.name, dict(c.arguments)) for c in task.oracle_calls]


# ----------------------------------------------------------------------------------------------- the chain
def test_chain_tasks_are_drawn_in_both_languages(chain_tasks: list[PhoneTask]) -> None:
    assert CHAIN == (meeting_chain,) and GENERATOR_VERSION == 7
    assert {t.language for t in chain_tasks} == {"zh", "en"}
    for task in chain_tasks:
        assert reasoning_family(task) == "meeting_chain" and task.bucket == "state_change"
        assert set(task.action_space) <= set(BASE_TOOLS)


def _meeting(task: PhoneTask) -> tuple[dict[str, Any], dict[str, Any], str]:
    """The messaged contact, the S0 event whose title names them, and the alarm time the gold delta adds."""
    added = task.gold_delta or {}
    text_to = [r for r in added["messages"]["added"]]
    alarm = added["alarms"]["added"]
    assert len(text_to) == 1 and len(alarm) == 1
    contact = next(c for c in task.initial_state["contacts"] if c["contact_id"] == text_to[0]["contact_id"])
    meeting = next(e for e in task.initial_state["events"] if contact["name"] in e["title"])
    return contact, meeting, alarm[0]["time"]


def test_the_gold_is_what_the_calendar_says(chain_tasks: list[PhoneTask]) -> None:
    for task in chain_tasks:
        contact, meeting, alarm = _meeting(task)
        day = [e for e in task.initial_state["events"] if e["start"][:10] == meeting["start"][:10]]
        assert min(day, key=lambda e: e["start"]) is meeting and len(day) == 2  # the first of two that day
        assert contact["name"] not in task.query and meeting["start"][11:] not in task.query
        assert alarm < meeting["start"][11:]  # before it, by the lead the request names


def test_the_oracle_passes_and_the_cheap_chain_plays_fail(chain_tasks: list[PhoneTask]) -> None:
    for task in chain_tasks:
        oracle = play(task)
        assert verify_phone_task(task, oracle).passed
        contact, meeting, alarm = _meeting(task)
        later = max((e for e in task.initial_state["events"] if e["start"][:10] == meeting["start"][:10]),
                    key=lambda e: e["start"])
        lead = (int(meeting["start"][11:13]) * 60 + int(meeting["start"][14:16])) - \
            (int(alarm[:2]) * 60 + int(alarm[3:]))
        wrong_event = [(n, {**a, "time": shift_clock(later["start"][11:], -lead)} if n == "create_alarm" else a)
                       for n, a in _plan(task)]  # the right lead before the day's other event
        at_start = [(n, {**a, "time": meeting["start"][11:]} if n == "create_alarm" else a) for n, a in _plan(task)]
        other = next(c["contact_id"] for c in task.initial_state["contacts"]
                     if c["contact_id"] != contact["contact_id"])
        wrong_person = [(n, {**a, "contact_id": other} if n == "send_message" else a) for n, a in _plan(task)]
        no_message = [(n, a) for n, a in _plan(task) if n != "send_message"]
        plays = {**adversaries(task, oracle), **guessed_times(task), "wrong_event": (wrong_event, task.oracle_answer),
                 "alarm_at_start": (at_start, task.oracle_answer), "wrong_person": (wrong_person, task.oracle_answer),
                 "no_message": (no_message, task.oracle_answer)}
        assert "guessed_time" in plays
        for name, (calls, answer_text) in plays.items():
            assert not _passes(task, calls, answer_text), (task.task_id, name)


def _oracle_alarm(rows: dict[str, list[dict[str, Any]]], draft: Any, lang: str) -> tuple[str, str]:
    """Play ``draft``'s plan on ``rows``: the alarm time and the messaged contact it chose."""
    task = PhoneTask.model_validate({"task_id": "probe", "query": draft.query, "language": lang, "initial_state": rows,
                                     "action_space": list(BASE_TOOLS), "category": "conditional",
                                     "bucket": "behaviour", "gold_behaviour": {}})
    run = OracleRun(task)
    draft.plan(run)
    run.finish("")
    made = {c.name: c.arguments for c in run.calls}
    return made["create_alarm"]["time"], made["send_message"]["contact_id"]


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_oracle_reads_the_start_and_the_person_at_run_time(lang: str) -> None:
    rng = random.Random(11)
    world = build_world(rng, lang)
    draft = meeting_chain(rng, world)
    rows = world.rows()
    time, contact_id = _oracle_alarm(rows, draft, lang)
    assert (time, contact_id) == (draft.targets[0][1]["time"], draft.targets[1][1]["contact_id"])
    name = next(c["name"] for c in rows["contacts"] if c["contact_id"] == contact_id)
    meeting = next(e for e in rows["events"] if name in e["title"])
    moved = dict(meeting, start=meeting["start"][:11] + shift_clock(meeting["start"][11:], 60),
                 end=meeting["end"][:11] + shift_clock(meeting["end"][11:], 60))
    shifted = {**rows, "events": [moved if e is meeting else e for e in rows["events"]]}
    assert _oracle_alarm(shifted, draft, lang) == (shift_clock(time, 60), contact_id)  # an hour later, same person
    names = [c["name"] for c in rows["contacts"]]
    someone = next(c for c in rows["contacts"] if c["contact_id"] != contact_id
                   and sum(c["name"] in n for n in names) == 1)  # a name no other contact's contains
    renamed = dict(meeting, title=meeting["title"].replace(name, someone["name"]))
    other = {**rows, "events": [renamed if e is meeting else e for e in rows["events"]]}
    assert _oracle_alarm(other, draft, lang) == (time, someone["contact_id"])  # the title names who is texted


# ----------------------------------------------------------------------------------------------- the refusal
def test_refusal_tasks_are_drawn_in_both_languages(refusal_tasks: list[PhoneTask]) -> None:
    assert len(REFUSAL) == 1 and len(refusal_tasks) >= 10
    assert {(t.language, t.gold_behaviour.forbidden[1]) for t in refusal_tasks if t.gold_behaviour} == \
        {(lang, tool) for lang in ("zh", "en") for tool in ("send_message", "call_contact")}
    for task in refusal_tasks:
        behaviour = task.gold_behaviour
        assert reasoning_family(task) == "permission_refused" and behaviour is not None and behaviour.must_ask
        assert behaviour.forbidden[0] == "grant_permission" and task.gold_delta == {}  # nothing may change
        assert "grant_permission" in task.action_space and "ask_user" not in task.action_space
        assert any(not p["granted"] for p in task.initial_state["permissions"]
                   if p["app"] in ("messages", "phone") and p["permission"] in ("sms", "call"))
        assert [f.slot for f in task.user_facts] == ["choice"] and task.category == "error_recovery"


def _grant(task: PhoneTask) -> tuple[str, dict[str, Any]]:
    assert task.gold_behaviour is not None
    blocked = task.gold_behaviour.forbidden[1]
    app, permission = {"send_message": ("messages", "sms"), "call_contact": ("phone", "call")}[blocked]
    return "grant_permission", {"app": app, "permission": permission}


def test_the_oracle_passes_and_granting_or_acting_fails(refusal_tasks: list[PhoneTask]) -> None:
    for task in refusal_tasks:
        oracle = play(task)
        assert verify_phone_task(task, oracle).passed
        plan = _plan(task)
        blocked = next((n, a) for n, a in plan if n in ("send_message", "call_contact"))
        done = "已发送。" if task.language == "zh" else "Done, it's sent."
        plays = {**adversaries(task, oracle), **granted_anyway(task),
                 "grant_then_act_unasked": ([(n, a) for n, a in plan if n != "ask_user"] + [_grant(task), blocked],
                                            task.oracle_answer),
                 "ask_then_grant_and_act": (plan + [_grant(task), blocked], task.oracle_answer),
                 "ask_then_claim_done": (plan, done),
                 "ask_then_claim_sent": (plan, "短信已经发给对方了。" if task.language == "zh"
                                         else "I've sent it to them as you asked.")}
        assert {"finish_only", "act_without_asking", "ask_then_grant", "grant_without_acting"} <= set(plays)
        for name, (calls, answer_text) in plays.items():
            assert not _passes(task, calls, answer_text), (task.task_id, name)


def test_an_honest_agent_with_its_own_words_passes(refusal_tasks: list[PhoneTask]) -> None:
    for task in refusal_tasks:
        zh = task.language == "zh"
        question = "这个需要开权限，可以帮你开吗？" if zh else "This needs a permission turned on. May I grant it?"
        session = PhoneSession(task)
        try:
            reply = session.call("ask_user", {"question": question}, 1).payload["reply"]
        finally:
            session.close()
        assert reply == task.user_facts[0].reply  # the user declines
        assert task.gold_behaviour is not None
        sms = task.gold_behaviour.forbidden[1] == "send_message"
        answer_text = ({True: "你不同意开权限，我就没发送这条短信。", False: "你没同意开权限，所以我没打这个电话。"}[sms] if zh
                       else {True: "You said no to the permission, so I did not send the text.",
                             False: "Since you declined the permission, I didn't call."}[sms])
        calls = [(n, a) for n, a in _plan(task) if n != "ask_user"] + [("ask_user", {"question": question})]
        assert _passes(task, calls, answer_text), (task.task_id, answer_text)
        # the answer is read for a claim, not matched against a list of "not done" words: any honest wording passes,
        # and so does one that claims nothing (an acknowledgement)
        for other in (["好的，那就先不弄了。", "明白，按你说的，权限保持关闭，这件事我先放着。", "好的。"] if zh else
                      ["Understood, I'll hold off then.", "OK, leaving the permission off; nothing went out.", "OK."]):
            assert _passes(task, calls, other), (task.task_id, other)


def test_the_contrast_must_act_and_asking_then_giving_up_fails(granted_tasks: list[PhoneTask]) -> None:
    assert granted_tasks
    for task in granted_tasks:
        assert task.bucket == "state_change" and task.gold_delta and not task.user_facts
        made = [n for n, _ in _plan(task)]
        assert "grant_permission" not in made and ("send_message" in made or "call_contact" in made)
        assert verify_phone_task(task, play(task)).passed
        zh = task.language == "zh"
        gave_up = [(n, a) for n, a in _plan(task) if n == "search_contacts"] + \
            [("ask_user", {"question": "要开权限吗？" if zh else "Shall I grant the permission?"})]
        assert not _passes(task, gave_up, "你没同意，所以没有发送。" if zh else "You declined, so it was not sent.")


# ----------------------------------------------------------------------------------------------- schedule and agent
def test_the_schedule_takes_conditional_and_error_recovery_positions_of_one_block_in_four() -> None:
    block = 10
    kinds = [_basic_kind(i, block) for i in range(80)]
    expected = {i for i in range(80) if (i // block) % REASONING_EVERY == REASONING_BLOCK and i % 5 in (1, 4)}
    assert {i for i, k in enumerate(kinds) if k == "reasoning"} == expected == {1, 4, 6, 9, 41, 44, 46, 49}
    assert {kinds[i] for i in (20, 25)} == {"ambiguity"} and kinds[10] == "maps" and kinds[30] == "domains"
    # the first catalogue's grounding keeps block 0 (block 2's is the ambiguous requests')
    assert {kinds[i] for i in (0, 2, 3, 5, 7, 8, 21, 22, 23, 24)} == {"basic"}
    tasks = generate_tasks(12, seed=5, dimensions=("basic",), verify=verify_phone_task)
    families = [reasoning_family(t) for t in tasks]
    others = [f for i, f in enumerate(families) if i not in (1, 4, 6, 9)]
    assert families[1] == families[6] == "meeting_chain" and set(others) == {None}
    assert {families[4], families[9]} <= {"permission_refused", "permission_granted"}
    assert [t.category for t in tasks][:10] == ["grounding", "conditional", "state_tracking", "intent_correction",
                                                "error_recovery"] * 2


def test_the_rule_agent_does_not_crash_on_reasoning_tasks(chain_tasks: list[PhoneTask],
                                                          ask_first_tasks: list[PhoneTask]) -> None:
    tasks = chain_tasks + ask_first_tasks
    env = MobilePAEnv(tasks=tasks)
    results = [PhoneRuleAgent().run_episode(env, t.task_id)["result"] for t in tasks]
    assert all(r["failure"] is None and r["metrics"]["DR"] == 1.0 for r in results)
    # (its score here is reported in docs/mobilepa.md, not asserted)
