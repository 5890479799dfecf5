"""The simulated user of MobilePA (``simulated_user.answer``), user facts in tasks, and the ambiguous-request families.

Expected replies are written out by hand; the wrong plays of the ambiguity families must score 0.
"""

from __future__ import annotations

import json
import random
from typing import Any, get_args

import pytest
from pydantic import ValidationError

from mobility_agents.baselines.mobilepa.rule import PhoneRuleAgent
from mobility_env.mobilepa.env import BUNDLED_TASKS, MobilePAEnv
from mobility_env.mobilepa.episode import NO_REPLY, PhoneSession, play
from mobility_env.mobilepa.generate import AMBIGUITY_BLOCK, AMBIGUITY_EVERY, _basic_kind, _generate_one, generate_tasks
from mobility_env.mobilepa.generate_ambiguity import FAMILIES as AMBIGUITY_FAMILIES
from mobility_env.mobilepa.generate_ambiguity import same_clock, same_name
from mobility_env.mobilepa.generate_checks import adversaries, other_readings
from mobility_env.mobilepa.generate_oracle import fact
from mobility_env.mobilepa.simulated_user import ALL_TOLD, answer
from mobility_env.mobilepa.tasks import FACT_SLOTS, FactSlot, PhoneTask, Reading, UserFact
from mobility_rewards.mobilepa.verify import verify_phone_task

LEVEL_ZH = fact("level", "40", "调到40%吧")
TIME_EN = fact("time", "07:30", "At 7:30 AM.")
CONTACT_ZH = fact("contact", "c101", "发给同事那个，尾号1234", ["同事", "1234"],
                  [Reading(value="c202", words=["朋友", "5678"], record="c202")], record="c101")
STREAM_EN = fact("stream", "ring", "The ringtone volume.", ["ringtone volume", "ring volume"],
                 [Reading(value="media", words=["media volume"]), Reading(value="alarm", words=["alarm volume"])])


def _reply(question: str, facts: list[UserFact], lang: str, told: set[int] | None = None) -> str:
    return answer(question, facts, set() if told is None else told, lang)


# ----------------------------------------------------------------------------------------------- the user's rules
@pytest.mark.parametrize("question, expected", [
    ("调到40%可以吗？", "对，调到40%吧"), ("百分之四十行吗？", "对，调到40%吧"),  # the fact's value: yes
    ("调到50%可以吗？", "不是，调到40%吧"), ("亮度设成100行不行？", "不是，调到40%吧"),  # another level: no
    ("要调到多少？", "调到40%吧"), ("现在是30%，要调到多少？", "调到40%吧"),  # a question for the level
])
def test_level_confirmations_and_questions_zh(question: str, expected: str) -> None:
    assert _reply(question, [LEVEL_ZH], "zh") == expected


@pytest.mark.parametrize("question, expected", [
    ("Should I set it to 7:30 AM?", "Yes — At 7:30 AM."), ("07:30, right?", "Yes — At 7:30 AM."),
    ("Should I set it for 7:30 PM?", "No — At 7:30 AM."), ("Is 8 am OK?", "No — At 7:30 AM."),
    ("What time should it ring?", "At 7:30 AM."), ("7:30 AM or 7:30 PM?", "At 7:30 AM."),
])
def test_time_confirmations_and_questions_en(question: str, expected: str) -> None:
    assert _reply(question, [TIME_EN], "en") == expected


@pytest.mark.parametrize("question, expected", [
    ("是同事张伟吗？", "对，发给同事那个，尾号1234"), ("尾号1234的那个？", "对，发给同事那个，尾号1234"),
    ("是朋友张伟吗？", "不是，发给同事那个，尾号1234"), ("发给尾号5678的吗？", "不是，发给同事那个，尾号1234"),
    ("有两位张伟：同事（尾号1234）和朋友（尾号5678），发给哪一位？", "发给同事那个，尾号1234"),  # both named: which?
    ("尾号12345的那个？", "发给同事那个，尾号1234"),  # (1234 inside another number is no proposal: rule c)
])
def test_contact_confirmations_zh(question: str, expected: str) -> None:
    assert _reply(question, [CONTACT_ZH], "zh") == expected


def test_word_slots_confirm_by_their_words_and_others_en() -> None:
    assert _reply("The ring volume?", [STREAM_EN], "en") == "Yes — The ringtone volume."
    assert _reply("Should I change the media volume?", [STREAM_EN], "en") == "No — The ringtone volume."
    assert _reply("Which volume: media, ringtone, alarm or call?", [STREAM_EN], "en") == "The ringtone volume."
    text = fact("text", "我晚点到", "就说“我晚点到”吧")
    assert _reply("内容是“我晚点到”吗？", [text], "zh") == "对，就说“我晚点到”吧"
    assert _reply("内容是“马上到”吗？", [text], "zh") == "不是，就说“我晚点到”吧"


def test_a_span_is_confirmed_only_by_its_own_times() -> None:
    span = [fact("span", "09:00-10:30", "9点到10点半")]
    assert _reply("9点到10点半可以吗？", span, "zh") == "对，9点到10点半"
    assert _reply("9点到10点可以吗？", span, "zh") == "不是，9点到10点半"
    assert _reply("几点开始、几点结束？", span, "zh") == "9点到10点半"


def test_unclassified_questions_get_the_next_fact_in_order_then_that_is_all() -> None:
    facts = [fact("text", "我晚点到", "就说我晚点到"), fact("time", "18:00", "晚上6点发")]
    told: set[int] = set()
    assert answer("能说具体一点吗？", facts, told, "zh") == "就说我晚点到"  # no word list needed
    assert told == {0}
    assert answer("还有呢", facts, told, "zh") == "晚上6点发"
    assert answer("还有别的吗？", facts, told, "zh") == ALL_TOLD["zh"] == "就这些，没有别的了。"
    assert told == {0, 1}
    assert answer("18:00发对吗？", facts, told, "zh") == "对，晚上6点发"  # a confirmation checks a told fact again
    assert answer("Anything else?", facts, {0, 1}, "en") == ALL_TOLD["en"] == "That's all — nothing else."


def test_a_slot_question_gets_its_fact_before_earlier_ones() -> None:
    facts = [fact("text", "我晚点到", "就说我晚点到"), fact("time", "18:00", "晚上6点发")]
    told: set[int] = set()
    assert answer("几点发？", facts, told, "zh") == "晚上6点发"
    assert answer("几点发？", facts, told, "zh") == "就说我晚点到"  # not repeated: the next untold fact
    assert answer("几点发？", facts, told, "zh") == ALL_TOLD["zh"]


def test_replies_are_in_the_tasks_language_and_deterministic() -> None:
    assert _reply("Is it 50%?", [LEVEL_ZH], "zh") == "不是，调到40%吧"  # an English question, a Chinese task
    assert _reply("调到50%可以吗？", [fact("level", "40", "Make it 40%.")], "en") == "No — Make it 40%."
    assert [_reply("要调到多少？", [LEVEL_ZH], "zh") for _ in range(3)] == ["调到40%吧"] * 3


def test_fact_slots_are_declared_once() -> None:
    assert get_args(FactSlot) == FACT_SLOTS
    with pytest.raises(ValidationError):
        UserFact(slot="colour", value="red", reply="red")  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        UserFact(slot="level", value="40", reply="")


# ----------------------------------------------------------------------------------------------- tasks and sessions
def _old_task(**update: Any) -> PhoneTask:
    return PhoneTask.model_validate({
        "task_id": "old-1", "query": "把亮度调一下", "category": "grounding", "bucket": "behaviour",
        "gold_behaviour": {"must_ask": True}, "user_replies": ["调到40%吧", "就这样"],
        "initial_state": {"settings": [{"key": "brightness", "value": "50"}]}, **update})


def test_an_old_task_is_answered_from_its_replies_in_order_whatever_the_question() -> None:
    session = PhoneSession(_old_task())
    try:
        replies = [session.call("ask_user", {"question": q}, step).payload["reply"]
                   for step, q in enumerate(["调到50%可以吗？", "还有吗", "还有吗"], 1)]
    finally:
        session.close()
    assert replies == ["调到40%吧", "就这样", NO_REPLY]


def test_old_task_lines_load_and_write_back_byte_for_byte() -> None:
    line = _old_task().model_dump_json(exclude_none=True)
    assert "user_facts" not in line  # a task without facts is written as before the field existed
    assert PhoneTask.model_validate_json(line).model_dump_json(exclude_none=True) == line
    new = _old_task(user_replies=[], user_facts=[LEVEL_ZH.model_dump()])
    assert json.loads(new.model_dump_json())["user_facts"][0]["reply"] == "调到40%吧"


def test_bundled_task_lines_load_and_write_back_byte_for_byte() -> None:
    lines = (BUNDLED_TASKS / "tasks.jsonl").read_text(encoding="utf-8").splitlines()
    for line in lines[::7]:  # every seventh task: old (user_replies) and new (user_facts) lines alike
        task = PhoneTask.model_validate_json(line)
        assert not (task.user_facts and task.user_replies)
        assert task.model_dump_json(exclude_none=True, exclude={"dimension"} if task.dimension == "basic"
                                    else None) == line


def test_a_task_gives_facts_or_replies_not_both() -> None:
    with pytest.raises(ValidationError, match="not both"):
        _old_task(user_facts=[LEVEL_ZH.model_dump()])


def test_the_session_keeps_what_was_told_and_sessions_are_independent() -> None:
    task = _old_task(user_replies=[], user_facts=[LEVEL_ZH.model_dump()])
    first, second = PhoneSession(task), PhoneSession(task)
    try:
        assert first.call("ask_user", {"question": "多少？"}, 1).payload["reply"] == "调到40%吧"
        assert first.call("ask_user", {"question": "多少？"}, 2).payload["reply"] == ALL_TOLD["zh"]
        assert second.call("ask_user", {"question": "多少？"}, 1).payload["reply"] == "调到40%吧"
        assert first.call("ask_user", {"question": " "}, 3).error_type is not None  # still a schema error
    finally:
        first.close()
        second.close()


# ----------------------------------------------------------------------------------------------- ambiguity families
@pytest.fixture(scope="module")
def ambiguous_tasks() -> list[PhoneTask]:
    """Checked tasks of both families in both languages (``_generate_one`` runs the generator's checks)."""
    return [_generate_one(f"amb-{i}", random.Random(4_000 + i), "grounding", ("zh", "en")[i % 2], verify_phone_task,
                          "ambiguity") for i in range(12)]


def _family_of(task: PhoneTask) -> str:
    return "same_name" if "contacts are called" in task.obstacles[0]["note"] else "same_clock"


def test_the_families_are_drawn_in_both_languages(ambiguous_tasks: list[PhoneTask]) -> None:
    seen = {(_family_of(t), t.language) for t in ambiguous_tasks}
    assert seen == {(f, lang) for f in ("same_name", "same_clock") for lang in ("zh", "en")}
    assert AMBIGUITY_FAMILIES == (same_name, same_clock)
    for task in ambiguous_tasks:
        assert task.bucket == "behaviour" and task.gold_behaviour is not None and task.gold_behaviour.must_ask
        assert task.obstacles[0]["kind"] == "ambiguous_request" and task.gold_delta
        assert [f.slot for f in task.user_facts] == (["contact"] if _family_of(task) == "same_name" else ["time"])


def _passes(task: PhoneTask, calls: list[tuple[str, dict[str, Any]]], answer_text: str) -> bool:
    return verify_phone_task(task, play(task, calls, answer_text)).passed


def _first_match(task: PhoneTask) -> list[tuple[str, dict[str, Any]]]:
    """Act at once on the first record the read lists (the cheapest guess)."""
    plan = [(c.name, dict(c.arguments)) for c in task.oracle_calls if c.name != "ask_user"]
    meant = task.user_facts[0].record
    read = next(c for c in play(task).calls if c.succeeded and c.name in ("search_contacts", "list_alarms"))
    key = "contact_id" if read.name == "search_contacts" else "alarm_id"
    rows = read.payload["contacts" if key == "contact_id" else "alarms"]
    matching = [r[key] for r in rows if r[key] in {meant, *(o.record for o in task.user_facts[0].others)}]
    assert len(matching) == 2
    return [(n, {k: matching[0] if v == meant else v for k, v in a.items()}) for n, a in plan]


def test_the_oracle_passes_and_every_wrong_play_fails(ambiguous_tasks: list[PhoneTask]) -> None:
    for task in ambiguous_tasks:
        oracle = play(task)
        assert verify_phone_task(task, oracle).passed
        wrong = {**adversaries(task, oracle), **other_readings(task),
                 "first_match": (_first_match(task), task.oracle_answer)}
        assert {"act_without_asking", "guess_reading_1", "ask_then_reading_1"} <= set(wrong)
        assert set(other_readings(task)) == {"guess_reading_1", "ask_then_reading_1"}
        for name, (calls, answer_text) in wrong.items():
            assert not _passes(task, calls, answer_text), (task.task_id, name)


def _honest_play(task: PhoneTask, question: str) -> tuple[list[tuple[str, dict[str, Any]]], str]:
    """Another agent's wording: ask ``question``, then act on the record the reply's words name."""
    user_fact = task.user_facts[0]
    session = PhoneSession(task)
    try:
        reply = session.call("ask_user", {"question": question}, 1).payload["reply"]
    finally:
        session.close()
    named = [r for r in [user_fact, *user_fact.others] if any(w in reply for w in r.words)]
    assert len(named) == 1, reply
    plan = [(c.name, dict(c.arguments)) for c in task.oracle_calls if c.name != "ask_user"]
    swapped = [(n, {k: named[0].record if v == user_fact.record else v for k, v in a.items()}) for n, a in plan]
    return [("ask_user", {"question": question})] + swapped, task.oracle_answer


@pytest.mark.parametrize("wording", ["open", "confirm_other"])
def test_an_honest_agent_with_its_own_wording_passes(ambiguous_tasks: list[PhoneTask], wording: str) -> None:
    for task in ambiguous_tasks:
        other = task.user_facts[0].others[0]
        if wording == "open":
            question = "你指的是哪一个？" if task.language == "zh" else "Which one do you mean?"
        else:  # propose the reading the user does not mean: "no — <the meant one>"
            question = (f"是{other.words[0]}那个吗？" if task.language == "zh" else f"The {other.words[0]} one?")
        calls, answer_text = _honest_play(task, question)
        assert _passes(task, calls, answer_text), (task.task_id, question)


# ----------------------------------------------------------------------------------------------- schedule and agents
def test_the_schedule_takes_grounding_positions_of_one_block_in_four() -> None:
    block = 10
    kinds = [_basic_kind(i, block) for i in range(80)]
    expected = {i for i in range(80) if (i // block) % AMBIGUITY_EVERY == AMBIGUITY_BLOCK and i % 5 == 0}
    assert {i for i, k in enumerate(kinds) if k == "ambiguity"} == expected == {20, 25, 60, 65}
    assert kinds[:20].count("maps") == 10 and "ambiguity" not in kinds[30:60]


@pytest.fixture(scope="module")
def basic_tasks() -> list[PhoneTask]:
    return generate_tasks(100, seed=3, dimensions=("basic",), verify=verify_phone_task)


def test_generated_tasks_carry_facts_where_the_user_holds_one(basic_tasks: list[PhoneTask]) -> None:
    ambiguous = [t.task_id for t in basic_tasks if t.obstacles and t.obstacles[0]["kind"] == "ambiguous_request"]
    assert ambiguous == ["mobilepa-3-00020", "mobilepa-3-00025", "mobilepa-3-00060", "mobilepa-3-00065"]
    asking = [t for t in basic_tasks if t.gold_behaviour is not None and t.gold_behaviour.must_ask]
    assert asking and all(t.user_facts and not t.user_replies for t in asking)
    assert all(not t.user_facts for t in basic_tasks if t not in asking)


def _as_old(task: PhoneTask) -> PhoneTask:
    return task.model_copy(update={"user_facts": [], "user_replies": [f.reply for f in task.user_facts]})


def test_the_rule_agent_plays_fact_tasks_as_it_played_their_replies(basic_tasks: list[PhoneTask]) -> None:
    tasks = [t for t in basic_tasks if t.user_facts and t.obstacles[0]["kind"] == "missing_parameter"]
    assert len(tasks) >= 4
    new, old = MobilePAEnv(tasks=tasks), MobilePAEnv(tasks=[_as_old(t) for t in tasks])
    agent = PhoneRuleAgent()
    for task in tasks:
        played = [agent.run_episode(env, task.task_id) for env in (new, old)]
        assert played[0]["result"]["metrics"] == played[1]["result"]["metrics"]
        assert [s["action"] for s in played[0]["trajectory"]["steps"]] == \
            [s["action"] for s in played[1]["trajectory"]["steps"]]


def test_the_rule_agent_does_not_crash_on_ambiguous_tasks(ambiguous_tasks: list[PhoneTask]) -> None:
    env = MobilePAEnv(tasks=ambiguous_tasks)
    results = [PhoneRuleAgent().run_episode(env, t.task_id)["result"] for t in ambiguous_tasks]
    assert all(r["failure"] is None and r["metrics"]["DR"] == 1.0 for r in results)
    # (it acts on the first match without asking: its score there is reported in docs/mobilepa.md, not asserted)
