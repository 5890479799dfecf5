"""MobilePA shaped rewards (:class:`mobility_rewards.mobilepa.verify.PhoneScorer`).

* ``repeated_failure`` is fair: the oracle, which retries exactly as the feedback asks (after a planted
  transient failure, after clearing a permission or a blocking setting), pays it nowhere on the bundled
  set; a plain repeat (a schema error, a refusal nothing cleared, a transient failure beyond the planted
  ones) still pays.
* Thinking like the policy: generated spam, fake-finish and repeat policies over bundled and freshly
  generated tasks never pass and never reach the oracle's return; honest variants of the oracle (an extra
  read) pass with the oracle's return.
* The incremental potential (row counts kept per table, rows keyed without JSON) pays exactly what the
  previous computation paid — the whole delta re-read, one JSON text per normalized row — on every step of
  the oracle and of random trajectories.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from mobility_env.mobilepa.catalogue import PHONE_TOOLS
from mobility_env.mobilepa.env import MobilePAEnv
from mobility_env.mobilepa.episode import PhoneCall, PhoneSession
from mobility_env.mobilepa.generate import generate_tasks
from mobility_env.mobilepa.state import STATE_TABLES, StateTemplate
from mobility_env.mobilepa.tasks import PhoneTask, normalize_delta
from mobility_rewards.mobilepa.verify import (PHONE_REWARD_VERSION, PhoneScorer, answer_distractors, changes_state,
                                              delta_rows, gate_progress, gate_share, planted_transient_failures,
                                              progress, table_rows, verify_phone_task)

FAST = settings(deadline=None, derandomize=True, max_examples=60, suppress_health_check=list(HealthCheck))
GENERIC_ANSWERS = ("好的，已完成。", "Done.", "I have taken care of it.", "已处理")
INVALID = {"invalid_json", "invalid_action", "unknown_tool", "schema_error"}


@functools.lru_cache(maxsize=None)
def envs() -> dict[str, MobilePAEnv]:
    """The bundled set, and 30 tasks freshly generated with another seed."""
    fresh = generate_tasks(30, seed=20260614, verify=verify_phone_task)
    return {"bundled": MobilePAEnv(), "fresh": MobilePAEnv(tasks=fresh)}


def all_tasks() -> list[tuple[str, PhoneTask]]:
    return [(name, task) for name, env in envs().items() for task in env.tasks.values()]


TASKS = st.deferred(lambda: st.sampled_from(all_tasks()))  # built at the first draw, not at collection


def oracle_actions(task: PhoneTask) -> list[dict[str, Any]]:
    return [{"name": c.name, "arguments": dict(c.arguments)} for c in task.oracle_calls] + \
        [{"name": "finish", "arguments": {"answer": task.oracle_answer}}]


def play(env: MobilePAEnv, task_id: str, actions: list[Any]) -> tuple[float, list[dict[str, Any]]]:
    """The episode's return and every step's info (the last one is the terminal info)."""
    env.reset(options={"task_id": task_id})
    total, infos = 0.0, []
    for action in actions:
        _, reward, terminated, truncated, info = env.step(action)
        total += reward
        infos.append(info)
        if terminated or truncated:
            return total, infos
    info = env.abandon("out_of_actions")
    infos.append(info)
    return total + float(sum(info["reward_components"].values())), infos


@functools.lru_cache(maxsize=None)
def oracle_return(suite: str, task_id: str) -> float:
    env = envs()[suite]
    total, infos = play(env, task_id, oracle_actions(env.tasks[task_id]))
    assert infos[-1]["metrics"]["success"] == 1.0, task_id
    return total


# ------------------------------------------------------------------------------------ repeated_failure
def test_the_oracle_pays_no_repeated_failure_on_any_bundled_task_and_collects_the_most():
    env = envs()["bundled"]
    retried_transient = retried_after_clearing = 0
    for task in env.tasks.values():
        total, infos = play(env, task.task_id, oracle_actions(task))
        final = infos[-1]
        assert final["metrics"]["success"] == 1.0, task.task_id
        charged = [i["reward_components"].get("repeated_failure", 0.0) for i in infos]
        assert not any(charged), (task.task_id, charged)
        w = env.scorer.weights  # nothing is taken: success + delivered + the progress of the final delta
        assert abs(total - (w.success + w.delivered + w.progress * final["metrics"]["progress"])) < 1e-9
        last: dict[str, str] = {}
        for call in final["trajectory"]["calls"]:  # the retries the previous rule charged
            key = f"{call['name']}|{json.dumps(call['arguments'], sort_keys=True)}"
            if key in last:
                retried_transient += last[key] == "transient_failure"
                retried_after_clearing += last[key] != "transient_failure"
            if call["status"] != "success":
                last[key] = call["error_type"]
    assert retried_transient > 0 and retried_after_clearing > 0  # the set exercises both exemptions
    assert PHONE_REWARD_VERSION >= 2 and env.scorer.version == PHONE_REWARD_VERSION


PHONE = {"settings": [{"key": "airplane_mode", "value": "on"}, {"key": "wifi", "value": "off"}],
         "contacts": [{"contact_id": "c1", "name": "王芳", "phone": "13800000000", "relation": "妈妈"}],
         "permissions": [{"app": "messages", "permission": "sms", "granted": 0}],
         "faults": [{"tool": "set_wifi", "error_type": "transient_failure", "remaining": 2, "message": "busy"}]}


def test_plain_repeats_pay_and_the_retries_the_feedback_asks_for_do_not():
    task = PhoneTask(task_id="t", query="打开 Wi-Fi", category="error_recovery", bucket="state_change", gold_delta={},
                     initial_state=PHONE, action_space=["set_wifi", "set_airplane_mode", "send_message"])
    env = MobilePAEnv(tasks=[task], max_steps=20)
    wifi = {"name": "set_wifi", "arguments": {"on": True}}
    message = {"name": "send_message", "arguments": {"contact_id": "c1", "text": "hi"}}
    steps = [({"name": "set_wifi", "arguments": {"on": "yes"}}, "schema_error", 0),
             ({"name": "set_wifi", "arguments": {"on": "yes"}}, "schema_error", 1),  # a plain repeat
             (wifi, "transient_failure", 0), (wifi, "transient_failure", 0),  # planted: 2 retries excused
             (wifi, "state_conflict", 0),  # the second planted failure excuses this retry too
             (wifi, "state_conflict", 1),  # nothing cleared airplane mode: a plain repeat
             (message, "permission_denied", 0), (message, "permission_denied", 1),
             ({"name": "set_airplane_mode", "arguments": {"on": False}}, None, 0),
             (wifi, None, 0), (message, "permission_denied", 0),  # the state changed since: a new attempt
             (message, "permission_denied", 1)]
    _, infos = play(env, "t", [action for action, _, _ in steps])
    for (action, error, charged), info in zip(steps, infos):
        assert info["feedback"]["error_type"] == error, (action, info["feedback"])
        assert info["reward_components"]["repeated_failure"] == charged * env.scorer.weights.repeated_failure
    assert planted_transient_failures(task) == {"set_wifi": 2}


def test_transient_failures_beyond_the_planted_ones_pay():
    """A sandbox whose transient failures never run out (simulated calls): retries are excused as many times
    as ``S_0`` plants a transient failure for the tool, then every repeat pays."""
    for planted in (0, 1, 3):
        faults = [{"tool": "set_wifi", "error_type": None, "remaining": planted}] if planted else []
        task = PhoneTask(task_id="t", query="x", category="error_recovery", bucket="state_change", gold_delta={},
                         initial_state={"faults": faults}, action_space=["set_wifi"])
        scorer = PhoneScorer()
        state = StateTemplate({}).restore()
        scoring = scorer.start(task, sandbox=state)
        try:
            charged = []
            for step in range(1, 9):
                call = PhoneCall(step, "set_wifi", {"on": True}, "error", "transient_failure")
                charged.append(scorer.step(scoring, call)["repeated_failure"] != 0)
        finally:
            state.close()
        assert charged == [False] * (planted + 1) + [True] * (7 - planted), planted


# ------------------------------------------------------------------------------- thinking like the policy
def refused_forever(task: PhoneTask) -> list[dict[str, Any]]:
    """Calls that stay refused whatever is repeated: the oracle's refusals that are not planted transient
    failures (nothing clears them unless the policy acts), bad arguments, a tool the task does not offer."""
    session = PhoneSession(task)
    try:
        out: list[Any] = []
        seen: set[str] = set()
        for call in task.oracle_calls:
            feedback = session.call(call.name, dict(call.arguments), 1)
            key = json.dumps([call.name, call.arguments], sort_keys=True)
            if not feedback.ok and feedback.error_type is not None and \
                    feedback.error_type.value != "transient_failure" and key not in seen:
                seen.add(key)
                out.append({"name": call.name, "arguments": dict(call.arguments)})
    finally:
        session.close()
    tool = next(n for n in task.action_space if PHONE_TOOLS[n].required)
    unoffered = next(n for n in sorted(PHONE_TOOLS) if n not in task.action_space)
    return out + [{"name": tool, "arguments": {}}, {"name": unoffered, "arguments": {}}, "not json"]


def needs_action(task: PhoneTask) -> bool:
    behaviour = task.gold_behaviour
    return task.bucket == "tool_call" or bool(task.gold_delta) or bool(behaviour and behaviour.must_ask)


@st.composite
def adversaries(draw: Any) -> tuple[str, str, str, list[Any]]:
    """(suite, task id, kind, actions) of a policy that does not do the task: ``spam`` (offered and other tools
    with empty, junk or other tools' gold arguments, never one of the oracle's calls), ``fake_finish``
    (read-only gold calls, then an answer that claims success), ``repeat`` (calls that stay refused, repeated),
    each ending in a generic answer, a claim of success, or the right facts stuffed with every other record of
    the kind."""
    suite, task = draw(TASKS)
    kind = draw(st.sampled_from(("spam", "fake_finish", "repeat")))
    reads = [{"name": c.name, "arguments": dict(c.arguments)} for c in task.oracle_calls
             if c.name in PHONE_TOOLS and not changes_state(c.name)]
    if kind == "spam":
        tools = task.action_space + draw(st.lists(st.sampled_from(sorted(PHONE_TOOLS)), max_size=2))
        other_args = [dict(c.arguments) for c in task.oracle_calls]
        actions: list[Any] = []
        for _ in range(draw(st.integers(1, 10))):
            name = draw(st.sampled_from(tools))
            gold_args = [a for c, a in zip(task.oracle_calls, other_args) if c.name != name]
            arguments = draw(st.sampled_from([{}, {"on": True}, {"query": "*"}, {"level": 101}] + gold_args))
            if not any(c.name == name and c.arguments == arguments for c in task.oracle_calls):  # not a gold call
                actions.append({"name": name, "arguments": arguments})
    elif kind == "fake_finish":
        actions = reads[: draw(st.integers(0, len(reads)))]
    else:
        pool = refused_forever(task)
        picked = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=2))
        repeats = draw(st.integers(2, 5))
        actions = [action for action in picked for _ in range(repeats)][:10]
        actions += reads[: draw(st.integers(0, 1))]
    answers = list(GENERIC_ANSWERS)
    if needs_action(task):
        answers.append(task.oracle_answer)  # claims the work without doing it
    distractors = answer_distractors(task) if task.gold_behaviour and task.gold_behaviour.answer_mentions else []
    if distractors:
        answers.append(f"{task.oracle_answer} {' '.join(distractors)}")
    actions = actions[:11] + [{"name": "finish", "arguments": {"answer": draw(st.sampled_from(answers))}}]
    return suite, task.task_id, kind, actions


def outcome(suite: str, task_id: str, actions: list[Any]) -> tuple[bool, float, float]:
    """(passed, return, the oracle's return)."""
    total, infos = play(envs()[suite], task_id, actions)
    return infos[-1]["metrics"]["success"] == 1.0, total, oracle_return(suite, task_id)


@FAST
@given(adversaries())
def test_spam_fake_finish_and_repeat_policies_never_pass_nor_reach_the_oracle(policy):
    suite, task_id, kind, actions = policy
    passed, total, best = outcome(suite, task_id, actions)
    assert not passed, (suite, task_id, kind, actions)
    assert total < best - 1e-9, (suite, task_id, kind, total, best)


@FAST
@given(TASKS, st.data())
def test_an_honest_variant_passes_with_the_oracles_return(item, data):
    """The oracle with one of its successful read calls made twice: nothing to pay for, nothing lost (when the step
    limit leaves room for the extra call: an oracle of 11 calls and its finish fill the 12 steps)."""
    suite, task = item
    actions = oracle_actions(task)
    trajectory = play(envs()[suite], task.task_id, actions)[1][-1]["trajectory"]["calls"]
    reads = [i for i, c in enumerate(trajectory) if c["status"] == "success" and c["name"] in PHONE_TOOLS
             and not changes_state(c["name"])]
    if reads and len(actions) < envs()[suite].max_steps:
        at = data.draw(st.sampled_from(reads))
        actions.insert(at + 1, {"name": trajectory[at]["name"], "arguments": trajectory[at]["arguments"]})
    passed, total, best = outcome(suite, task.task_id, actions)
    assert passed and abs(total - best) < 1e-9, (suite, task.task_id)


# -------------------------------------------------------------------- the incremental potential's equivalence
def previous_rows(delta: dict[str, Any]) -> set[str]:
    """The previous computation's rows: one JSON text per normalized row, ``table/kind/text``."""
    return {f"{table}/{kind}/{row}" for table, kinds in normalize_delta(delta).items() for kind, rows in kinds.items()
            for row in rows}


def previous_potential(task: PhoneTask, calls: list[PhoneCall], delta: dict[str, Any]) -> float:
    if task.bucket == "tool_call" or task.gold_delta is None:
        return progress(task, calls, delta)  # these paths read no delta
    gold, got = previous_rows(task.gold_delta), previous_rows(delta)
    bucket = -min(1.0, float(len(got))) if not gold else max(-1.0, (len(gold & got) - len(got - gold)) / len(gold))
    share = gate_share(task)
    return bucket if share == 0.0 else (1 - share) * bucket + share * gate_progress(task, calls)


def check_against_previous(suite: str, task_id: str, actions: list[Any]) -> None:
    """Every step's terms and the terminal metrics equal the previous computation's (repeated_failure aside:
    its rule changed on purpose)."""
    env = envs()[suite]
    task = env.tasks[task_id]
    weight = env.scorer.weights
    env.reset(options={"task_id": task_id})
    potential = 0.0
    info: dict[str, Any] = {}
    for action in actions:
        _, _, terminated, truncated, info = env.step(action)
        if "feedback" not in info:  # finish: no call
            break
        session = env.session
        assert session is not None
        call, state = session.calls[-1], session.state
        moves = changes_state(call.name) or call.name in ("ask_user", "search_memory", "get_memory", "load_skill") \
            or task.bucket == "tool_call"
        before = potential
        if call.succeeded and moves:
            potential = previous_potential(task, session.calls, state.delta(full=True))
        assert info["reward_components"]["progress"] == weight.progress * (potential - before), (task_id, call)
        assert info["reward_components"]["invalid_call"] == weight.invalid_call * (call.error_type in INVALID)
        for table in STATE_TABLES:  # the per-table keys are the keys of the table's delta
            assert table_rows(table, state.table_changes(table)) == delta_rows({table: state.table_delta(table)})
        if terminated or truncated:
            break
    final = info if "metrics" in info else env.abandon("out_of_actions")
    calls = [PhoneCall(**c) for c in final["trajectory"]["calls"]]
    assert final["metrics"]["progress"] == round(previous_potential(task, calls, final["trajectory"]["delta"]), 6)


WRITES = [("UPDATE alarms SET enabled = 1 WHERE alarm_id = 'a2'", ()),  # in place
          ("INSERT INTO alarms (alarm_id, time) VALUES ('a9', '09:00')", ()),  # appended
          ("DELETE FROM alarms WHERE alarm_id = 'a1'", ()),
          ("INSERT INTO alarms (alarm_id, time) VALUES ('a1', '06:00')", ()),  # a removed key back, elsewhere
          ("REPLACE INTO alarms (alarm_id, time, enabled) VALUES ('a3', '07:00', 0)", ()),  # the row moves
          ("UPDATE alarms SET alarm_id = 'a7' WHERE alarm_id = 'a2'", ()),  # a key changed in place
          ("UPDATE alarms SET time = NULL", ()), ("DELETE FROM alarms", ())]


NULL_KEY = [("INSERT INTO alarms (alarm_id, time) VALUES (NULL, '10:00')", ())]  # SQLite lets a TEXT key be NULL


def test_the_per_table_changes_equal_the_keyed_diff_after_any_kind_of_write():
    rows = [{"alarm_id": f"a{i}", "time": f"0{i}:00", "label": "", "repeat": "once", "enabled": 0} for i in (1, 2, 3)]
    for initial, writes in ((rows, WRITES), (rows + [{"alarm_id": None, "time": "05:00"}], NULL_KEY)):
        template = StateTemplate({"alarms": initial})
        for end in range(1, len(writes) + 1):
            state = template.restore()
            try:
                for sql, parameters in writes[:end]:
                    state.execute(sql, parameters)
                expected = delta_rows({"alarms": state.table_delta("alarms")})
                assert table_rows("alarms", state.table_changes("alarms")) == expected == delta_rows(state.delta())
                assert expected, end  # every prefix of the writes leaves a change
            finally:
                state.close()


def test_the_oracle_is_paid_exactly_as_before_on_every_bundled_task():
    """On every third bundled task (a fixed sample: all 1,705 took ~32 s; every task's oracle is paid its best in
    test_the_oracle_pays_no_repeated_failure_on_any_bundled_task_and_collects_the_most)."""
    env = envs()["bundled"]
    for task in list(env.tasks.values())[::3]:
        check_against_previous("bundled", task.task_id, oracle_actions(task))


@st.composite
def random_trajectories(draw: Any) -> tuple[str, str, list[Any]]:
    """Gold calls shuffled, dropped and repeated, other offered tools with other calls' arguments, bad actions."""
    suite, task = draw(TASKS)
    gold = [{"name": c.name, "arguments": dict(c.arguments)} for c in task.oracle_calls]
    arguments = [dict(c.arguments) for c in task.oracle_calls] + [{}]
    other = [{"name": name, "arguments": args} for name in task.action_space for args in arguments]
    actions = draw(st.lists(st.sampled_from(gold + other + ["not json"]), max_size=11))
    if draw(st.booleans()):
        actions.append({"name": "finish", "arguments": {"answer": task.oracle_answer}})
    return suite, task.task_id, actions


@FAST
@given(random_trajectories())
def test_random_trajectories_are_paid_exactly_as_before(trajectory):
    check_against_previous(*trajectory)


CELLS = st.one_of(st.none(), st.booleans(), st.integers(0, 1), st.sampled_from([0.0, -0.0, 1.0, float("nan")]),
                  st.sampled_from(["1", "true"]), st.lists(st.integers(0, 1), max_size=1),
                  st.dictionaries(st.just("x"), st.integers(0, 1), max_size=1))
ROWS = st.dictionaries(st.sampled_from(["value", "alarm_id"]), CELLS, max_size=2)
CHANGED = st.fixed_dictionaries({"key": st.one_of(ROWS, CELLS), "before": ROWS, "after": ROWS})
DELTAS = st.dictionaries(st.sampled_from(["settings", "alarms"]), st.fixed_dictionaries(
    {}, optional={"added": st.lists(ROWS, max_size=6), "removed": st.lists(ROWS, max_size=3),
                  "changed": st.lists(CHANGED, max_size=3)}), max_size=2)
LOOKALIKES = [{"value": v} for v in (1, 1.0, True, "1", 0, 0.0, -0.0, False, None, float("nan"), [1], {"x": 1})]


@settings(deadline=None, derandomize=True, max_examples=300)
@given(DELTAS, DELTAS)
@example({"settings": {"added": LOOKALIKES, "changed": [{"key": {"key": 1}, "before": {}, "after": {}},
                                                        {"key": {"key": 1.0}, "before": {}, "after": {}}]}},
         {"settings": {"added": [{"value": 1, "alarm_id": "alarm-9"}], "removed": [{"value": 1.0}]}})
def test_row_keys_are_equal_exactly_when_the_normalized_json_texts_are(first, second):
    """1 vs 1.0 vs true vs "1", -0.0, NaN, nested values, generated ids: the keys count the rows the JSON texts
    count and find the same common rows."""
    assert len(delta_rows(first)) == len(previous_rows(first))
    assert len(delta_rows(first) & delta_rows(second)) == len(previous_rows(first) & previous_rows(second))


def test_every_generated_id_column_is_either_ignored_or_deliberately_compared():
    """A table whose ids ``next_id`` issues must say how deltas compare them: ignored (another path may create the
    same records in another order, or after a failed attempt used an id up) or compared (other rows refer to it)."""
    from mobility_env.mobilepa.state import ID_COLUMNS, TABLES
    from mobility_env.mobilepa.tasks import COMPARED_ID_COLUMNS, GENERATED_COLUMNS

    columns = {column for _, column in ID_COLUMNS.values()}
    assert columns <= GENERATED_COLUMNS | COMPARED_ID_COLUMNS, columns - GENERATED_COLUMNS - COMPARED_ID_COLUMNS
    assert not GENERATED_COLUMNS & COMPARED_ID_COLUMNS
    for table, column in ID_COLUMNS.values():
        assert column in TABLES[table].column_names, (table, column)
    # two paths that created the same workout and share in another order of ids compare equal
    first = {"workouts": {"added": [{"workout_id": "workout-1", "kind": "run", "status": "active"}]},
             "shares": {"added": [{"share_id": "share-2", "kind": "photo", "item_id": "p1", "contact_id": "c1"}]}}
    second = {"workouts": {"added": [{"workout_id": "workout-2", "kind": "run", "status": "active"}]},
              "shares": {"added": [{"share_id": "share-1", "kind": "photo", "item_id": "p1", "contact_id": "c1"}]}}
    assert normalize_delta(first) == normalize_delta(second)
    wrong_contact = {**second, "shares": {"added": [{**second["shares"]["added"][0], "contact_id": "c2"}]}}
    assert normalize_delta(first) != normalize_delta(wrong_contact)
