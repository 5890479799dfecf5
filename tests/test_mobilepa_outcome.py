"""An answer must not say the opposite of what happened (MobilePA verdict version 8, ``outcome_stated``).

Before version 8, replaying the oracle's calls and answering ``抱歉，操作失败了，什么都没有改。`` passed 377 of the 400
tasks then bundled (212 of the 217 whose gold delta the oracle applied); now it passes none. Two parts:

* :func:`~mobility_env.mobilepa.outcome_claims.claimed_outcome` read as a claim with polarity: failure, success or
  neither, in Simplified and Traditional Chinese and in English, negations included (``没有失败`` and ``nothing went
  wrong`` claim no failure; ``没有改好`` and ``nothing was changed`` claim one);
* end to end over the bundled tasks, each played by its oracle (:func:`mobility_env.mobilepa.episode.play`, as
  ``test_mobilepa_answers.py`` does): the oracle still passes every task; a failure claim in place of its answer
  fails every task whose change the trajectory shows was made; a success claim after no call at all fails every task
  whose change was not made; an honest report of either outcome is no contradiction.
"""

from __future__ import annotations

import dataclasses
from functools import lru_cache

import pytest

from mobility_env.mobilepa import outcome_claims
from mobility_env.mobilepa.env import BUNDLED_TASKS
from mobility_env.mobilepa.episode import PhoneTrajectory, play
from mobility_env.mobilepa.outcome_claims import FAILURE, SUCCESS, claimed_outcome
from mobility_env.mobilepa.tasks import PhoneTask, load_tasks
from mobility_rewards.mobilepa.verify import PHONE_VERDICT_VERSION, delta_rows, trajectory_outcome, verify_phone_task

FAILURE_CLAIMS = ("抱歉，操作失败了，什么都没有改。", "抱歉，操作失敗了，什麼都沒有改。",
                  "Sorry, the operation failed; nothing was changed.", "I couldn't do that, sorry.")
SUCCESS_CLAIMS = ("已经帮您改好了", "已經幫您改好了", "Done, I've updated it.")


# ------------------------------------------------------------------------------------------ the claim reader
@pytest.mark.parametrize("answer", [
    *FAILURE_CLAIMS, "操作失败", "无法设置闹钟", "闹钟没有设置成功", "还没完成", "并没有成功", "没能成功", "出了点问题，没有发出去",
    "沒辦法，系統出錯了", "無法設定鬧鐘", "操作未生效", "什么也没改",
    "The alarm wasn't set.", "The alarm has not been set.", "Nothing has been changed.", "I didn't change anything.",
    "No changes were made.", "I failed to set the alarm.", "I wasn't able to send it.", "An error occurred.",
    "Unfortunately the request was rejected.", "Something went wrong and nothing was saved.",
    "The route service timed out, so navigation didn't start.",
    "I set the alarm, but I wasn't able to add the label.",  # part of the action failed: the last claim
    "已设置闹钟，但是标签没能保存。",
])
def test_failure_claims(answer):
    assert claimed_outcome(answer) == FAILURE


@pytest.mark.parametrize("answer", [
    *SUCCESS_CLAIMS, "Done, I’ve updated it.", "已把家设为淮安文化国际机场。", "这次创建成功了。", "這次創建成功了。",
    "已为您设置好闹钟", "搞定了", "没有设置新闹钟，而是把原来的闹钟打开了。",
    "Deleted the 13:30 alarm and set one for 17:00.", "Moved the alarm to 06:15.", "Calling 马勇.",
    "Memory updated, and home in the maps app now points to the new address.",
    "It failed at first, but I retried and it's done now.", "第一次失败了，重试后已经成功。",  # the last claim counts
    "I'm unable to make calls, but I texted him instead.",
    # negators that deny something else, or nothing
    "Tomorrow is not a gym day: alarm set for 06:45 (Wake up).", "明天不是健身日，已定07:00的闹钟（起床）。",
    "Since it's not raining I set the alarm for 7.", "No call; I texted: See you tomorrow", "没有打电话，已发短信：明天见",
    "电量还有75%，不用急救，亮度已调到10%。", "不好意思让您久等了，已完成。", "Don't worry, it's done.",
    "The 8:00 alarm is no longer set.", "Do Not Disturb was on; I turned it off.", "勿扰模式已关闭。",
    # side remarks: other things, lookups, possibilities
    "I've set the alarm. Nothing else was changed.", "已设置闹钟，其他闹钟没有改动。",
    "Navigation started. Note: I couldn't get live traffic data.",
    "I've turned off location services. Note that some apps may not work properly without location.",
    "已开启省电模式。注意：省电模式下部分功能可能无法使用。", "没有出现任何错误，已完成。",
    "Replied to 刘子涵: No problem", "Texted your wife: Won't be home for dinner", "I've corrected the error: it's at 7.",
])
def test_success_claims(answer):
    assert claimed_outcome(answer) == SUCCESS


@pytest.mark.parametrize("answer", [
    # denied failures claim nothing
    "没有失败", "沒有失敗。", "It did not fail.", "not failed", "Nothing went wrong.", "No errors.", "并没有出错",
    # neutral answers: facts, states, questions, conditions, plans, lookups
    "", "晴，20℃", "后天有1个安排：16:00 周会。", "Wi-Fi was off; it is on now.", "Do Not Disturb is on.",
    "Gallery wasn't running; brightness is 25%.", "勿扰没开。", "备忘录没有在运行。",
    "成功了吗？", "Did it fail?", "要我再试一次吗", "Should I try again?", "If it fails, let me know.", "如果失败了请告诉我",
    "I'll set it for you.", "I'm not sure it went through.", "Sorry, I couldn't find that contact.", "没找到这个联系人。",
    "Her message: “Sorry, it failed.”", "她说「没办法，来不了了」",  # quoted words are someone else's
])
def test_no_outcome_claim(answer):
    assert claimed_outcome(answer) is None


def test_traditional_chinese_reads_as_simplified():
    """Through the kernel's one reader (mobility_env.reading): no converter of its own."""
    assert claimed_outcome("無法完成，什麼都沒有改") == claimed_outcome("无法完成，什么都没有改") == FAILURE
    assert claimed_outcome("已經幫您設定好了") == SUCCESS
    assert not hasattr(outcome_claims, "_to_simplified")


def test_the_vocabulary_is_data():
    for table in (outcome_claims.FAILURE_CUES, outcome_claims.SUCCESS_CUES, outcome_claims.NO_CLAIM,
                  outcome_claims.QUOTED, outcome_claims.CONDITIONS, outcome_claims.CLAUSE_BREAKS,
                  outcome_claims.OTHER_THINGS, outcome_claims.EN_NEGATORS, outcome_claims.ZH_NOT_NEGATING):
        assert isinstance(table, tuple) and table and all(isinstance(item, str) and item for item in table)


# ------------------------------------------------------------------------------- end to end: the bundled tasks
@lru_cache(maxsize=None)
def bundled() -> tuple[tuple[PhoneTask, PhoneTrajectory], ...]:
    """Each bundled task with its oracle's trajectory."""
    return tuple((task, play(task)) for task in load_tasks(BUNDLED_TASKS))


@lru_cache(maxsize=None)
def unplayed() -> tuple[tuple[PhoneTask, PhoneTrajectory], ...]:
    """Each bundled task with the trajectory of a policy that calls nothing (no change made)."""
    return tuple((task, play(task, calls=[])) for task in load_tasks(BUNDLED_TASKS))


def _checks(task: PhoneTask, trajectory: PhoneTrajectory, answer: str) -> dict[str, bool]:
    verdict = verify_phone_task(task, dataclasses.replace(trajectory, answer=answer))
    return {c.name: c.passed for c in verdict.checks} | {"passed": verdict.passed}


def test_the_oracle_passes_every_bundled_task_and_states_no_opposite_outcome():
    assert PHONE_VERDICT_VERSION == 10
    tasks = bundled()
    passed = [task.task_id for task, oracle in tasks if verify_phone_task(task, oracle).passed]
    assert len(passed) == len(tasks) == 1705
    for task, oracle in tasks:
        checks = _checks(task, oracle, task.oracle_answer)
        assert checks.get("outcome_stated", True), task.task_id
        assert ("outcome_stated" in checks) == (trajectory_outcome(task, oracle) is not None), task.task_id


@pytest.mark.parametrize("claim", FAILURE_CLAIMS)
def test_a_failure_claim_fails_every_task_whose_change_was_made(claim):
    tasks = bundled()
    applied = [(task, oracle) for task, oracle in tasks
               if task.gold_delta and delta_rows(task.gold_delta) <= delta_rows(oracle.delta)]
    knowable = [(task, oracle) for task, oracle in tasks if trajectory_outcome(task, oracle) == SUCCESS]
    failed_applied = sum(not _checks(task, oracle, claim)["passed"] for task, oracle in applied)
    missed = [task.task_id for task, oracle in knowable if _checks(task, oracle, claim).get("outcome_stated", True)]
    print(f"\n{claim!r}: fails {failed_applied} of {len(applied)} tasks whose gold delta the oracle applied; "
          f"outcome_stated fails {len(knowable) - len(missed)} of {len(knowable)} tasks whose change was made")
    assert 0 < len(applied) == failed_applied == sum(1 for task, _ in tasks if task.gold_delta
                                                     and delta_rows(task.gold_delta))
    assert not missed
    assert len(knowable) > len(applied)  # the state-changing tool_call and hand-off tasks too


@pytest.mark.parametrize("claim", SUCCESS_CLAIMS)
def test_a_success_claim_fails_every_task_whose_change_was_not_made(claim):
    knowable = [(task, nothing) for task, nothing in unplayed() if trajectory_outcome(task, nothing) is not None]
    assert knowable and all(trajectory_outcome(task, nothing) == FAILURE for task, nothing in knowable)
    contradicted = [task.task_id for task, nothing in knowable
                    if not _checks(task, nothing, claim).get("outcome_stated", True)]
    assert len(contradicted) == len(knowable)
    assert not any(_checks(task, nothing, claim)["passed"] for task, nothing in unplayed())


def test_an_honest_report_of_either_outcome_is_no_contradiction():
    honest = {SUCCESS: "Done.", FAILURE: "抱歉，操作失败了，什么都没有改。"}
    declined = 0
    for (task, oracle), (_, nothing) in zip(bundled(), unplayed()):
        for trajectory in (oracle, nothing):
            happened = trajectory_outcome(task, trajectory)
            if happened is not None:
                assert _checks(task, trajectory, honest[happened])["outcome_stated"], task.task_id
        # a request the user declined: the oracle does not carry it out, so its honest report is the failure one
        if task.gold_behaviour is not None and task.gold_behaviour.declined:
            declined += 1
            assert trajectory_outcome(task, oracle) == FAILURE, task.task_id
            assert not _checks(task, oracle, "Done.")["outcome_stated"], task.task_id
    assert declined > 0
