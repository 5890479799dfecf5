"""No sequence of actions earns more than the oracle: the shaped rewards cannot be farmed (MobilityBench-v0, then
MobilePA-v0's stateful phone, where the oracle's calls may also come in any order, repeated or dropped).

A policy maximizes the return, not FPR. The sequences here are generated (hypothesis), not
listed: up to ``max_steps`` moves drawn from the episode's gold calls (in any order, repeated,
dropped), gold calls with one argument nudged (a name one character off, a point 50-400 m away:
fuzzy and nearest replays), other episodes' gold calls, schema-breaking and unknown calls, raw
text, and a ``finish`` with the oracle's answer, a generic one, the query echoed, or none at all
(the episode then ends by truncation). Each sequence's return must not exceed the oracle's on
that episode (gold calls in order, then the reference answer): with potential-based progress
rewards the calls only telescope to the targets reached, and every deviation can only lose.

Complements ``tests/test_shaping_progress.py`` (mutations of the gold calls, always followed by the
correct finish): here the sequences also replay near misses, borrow other episodes' calls, finish
wrongly or never, and interleave all of it. Checked to catch a farming bug: with the progress
potential counting every hit instead of every target reached, a repeated gold call beat the oracle
in the first examples.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mobility_agents.baselines.mobilitybench.oracle import OracleAgent
from mobility_env.mobilitybench.env import MobilityEnv
from mobility_env.mobilitybench.trajectory import Trajectory
from mobility_rewards import compute_metrics
from mobility_rewards.mobilitybench.reference import reference_finish

SETTINGS = settings(max_examples=300, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def farm(sample_csv, sample_episodes):
    """The env on the real sample, its episodes and each episode's oracle return."""
    env = MobilityEnv(data=sample_csv)
    episodes = [e for e in sample_episodes if e.gold_calls]
    oracle = OracleAgent()
    returns = {e.episode_id: oracle.run_episode(env, e.episode_id)["result"]["total_reward"] for e in episodes}
    return env, episodes, returns


def _nudged_text(text: str, where: int, char: str) -> str:
    if not text:
        return char
    where %= len(text)
    return text[:where] + char + text[where + 1:] if where % 2 else text[:where] + char + text[where:]


def _nudged_point(text: str, metres: float, angle: float) -> str:
    try:
        lng, lat = (float(x) for x in text.split(","))
    except ValueError:
        return text
    dlat = metres * math.cos(angle) / 111_195.0
    dlng = metres * math.sin(angle) / (111_195.0 * max(0.1, math.cos(math.radians(lat))))
    return f"{lng + dlng:.6f},{lat + dlat:.6f}"


def _nudged(action: dict, key_index: int, where: int, char: str, metres: float, angle: float) -> dict:
    arguments = dict(action["arguments"])
    if not arguments:
        return action
    key = sorted(arguments)[key_index % len(arguments)]
    value = arguments[key]
    if isinstance(value, str) and "," in value and value.replace(",", "").replace(".", "").replace("-", "").isdigit():
        arguments[key] = _nudged_point(value, metres, angle)
    elif isinstance(value, str):
        arguments[key] = _nudged_text(value, where, char)
    elif isinstance(value, bool):
        arguments[key] = not value
    elif isinstance(value, list) and value and isinstance(value[0], str):
        arguments[key] = [_nudged_point(v, metres, angle) for v in value]
    return {"name": action["name"], "arguments": arguments}


moves = st.one_of(
    st.tuples(st.just("gold"), st.integers(0, 20)),
    st.tuples(st.just("nudged"), st.integers(0, 20), st.integers(0, 5), st.integers(0, 30),
              st.sampled_from("的市路站店A1"), st.floats(50, 400), st.floats(0, 6.28)),
    st.tuples(st.just("other"), st.integers(0, 10_000), st.integers(0, 20)),
    st.tuples(st.just("junk"), st.sampled_from([
        {"name": "driving_route", "arguments": {}}, {"name": "teleport", "arguments": {}}, "not json {",
        {"name": "query_poi", "arguments": {"keywords": 12}}, {"name": "finish", "arguments": {}},
        {"name": "weather_query", "arguments": {"city": "北京市"}}])),
    st.tuples(st.just("finish"), st.sampled_from(["oracle", "generic", "echo", "empty_plan"])),
)


def _action(move: tuple, episode, episodes) -> dict | str:
    gold = [{"name": c.name, "arguments": dict(c.arguments)} for c in episode.gold_calls]
    kind = move[0]
    if kind == "gold":
        return gold[move[1] % len(gold)]
    if kind == "nudged":
        return _nudged(gold[move[1] % len(gold)], *move[2:])
    if kind == "other":
        other = episodes[move[1] % len(episodes)]
        call = other.gold_calls[move[2] % len(other.gold_calls)]
        return {"name": call.name, "arguments": dict(call.arguments)}
    if kind == "junk":
        return move[1]
    finish = reference_finish(episode).model_dump(exclude_none=True)
    if move[1] == "generic":
        finish["answer"] = "已为您查询，请参考以上结果。"
    elif move[1] == "echo":
        finish["answer"] = episode.query
    elif move[1] == "empty_plan":
        finish["plan"] = []
    return {"name": "finish", "arguments": finish}


@SETTINGS
@given(pick=st.integers(0, 10_000), plan=st.lists(moves, min_size=0, max_size=12))
def test_no_sequence_earns_more_than_the_oracle(farm, pick, plan):
    env, episodes, returns = farm
    episode = episodes[pick % len(episodes)]
    env.reset(options={"episode_id": episode.episode_id})
    total, ended, played = 0.0, False, []
    for move in plan:
        action = _action(move, episode, episodes)
        played.append(action)
        _, reward, terminated, truncated, info = env.step(action)
        assert math.isfinite(reward)
        total += reward
        if terminated or truncated:
            ended = True
            # the env scores with what its steps computed; rescoring the trajectory it hands out agrees
            assert info["metrics"] == compute_metrics(episode, Trajectory.model_validate(info["trajectory"]))
            break
    best = returns[episode.episode_id]
    assert total <= best + 1e-9, (episode.episode_id, episode.task_scenario, total, best, played, ended)


def test_the_oracle_return_is_reached_by_the_oracle(farm):
    """The bound above is not vacuous: replaying the oracle's own sequence earns exactly its return."""
    env, episodes, returns = farm
    for episode in episodes[:20]:
        env.reset(options={"episode_id": episode.episode_id})
        total = 0.0
        for call in episode.gold_calls:
            total += env.step({"name": call.name, "arguments": dict(call.arguments)})[1]
        total += env.step({"name": "finish", "arguments": reference_finish(episode).model_dump(exclude_none=True)})[1]
        assert total == pytest.approx(returns[episode.episode_id])
        assert returns[episode.episode_id] > 0


# ------------------------------------------------------------------------------------------- MobilePA-v0
@pytest.fixture(scope="module")
def phone_farm():
    """MobilePA's bundled tasks plus fresh ones of an unseen seed, and each task's oracle return."""
    from mobility_env.mobilepa.env import MobilePAEnv
    from mobility_env.mobilepa.generate import generate_tasks
    from mobility_rewards.mobilepa.verify import verify_phone_task

    envs = [MobilePAEnv(), MobilePAEnv(tasks=generate_tasks(40, seed=20261202, verify=verify_phone_task))]
    tasks = [(env, task) for env in envs for task in env.tasks.values()]
    returns = {}
    for env, task in tasks:
        total, success = _phone_play(env, task.task_id, _phone_oracle(task))
        assert success, task.task_id
        returns[task.task_id] = total
    return tasks, returns


def _phone_oracle(task) -> list[dict]:
    return [{"name": c.name, "arguments": dict(c.arguments)} for c in task.oracle_calls] + \
        [{"name": "finish", "arguments": {"answer": task.oracle_answer}}]


def _phone_play(env, task_id: str, actions: list) -> tuple[float, bool]:
    """(return, success): to the end of the actions, or an abandon when they run out (its terminal terms count)."""
    env.reset(options={"task_id": task_id})
    total = 0.0
    for action in actions:
        _, reward, terminated, truncated, info = env.step(action)
        assert math.isfinite(reward)
        total += reward
        if terminated or truncated:
            return total, info["metrics"]["success"] == 1.0
    info = env.abandon("out_of_actions")
    return total + float(sum(info["reward_components"].values())), info["metrics"]["success"] == 1.0


phone_moves = st.one_of(
    st.tuples(st.just("oracle_all")),  # every oracle call in order: the sequences reach the oracle's return too
    st.tuples(st.just("oracle"), st.integers(0, 30)),
    st.tuples(st.just("other"), st.integers(0, 10_000), st.integers(0, 30)),
    st.tuples(st.just("junk"), st.sampled_from([
        {"name": "search_memory", "arguments": {"query": "*", "top_k": 50}}, {"name": "teleport", "arguments": {}},
        "{oops", {"name": "set_wifi", "arguments": {"on": "yes"}}, {"name": "list_memories", "arguments": {}}])),
    st.tuples(st.just("finish"), st.sampled_from(["oracle", "generic", "oracle_plus_other"])),
)


@SETTINGS
@given(pick=st.integers(0, 10_000), plan=st.lists(phone_moves, min_size=0, max_size=14))
def test_no_phone_sequence_earns_more_than_the_oracle(phone_farm, pick, plan):
    """The same property on MobilePA-v0's stateful phone: oracle calls in any order, repeated or dropped,
    other tasks' calls, junk, and a right, generic or padded finish (or none) never out-earn the oracle."""
    tasks, returns = phone_farm
    env, task = tasks[pick % len(tasks)]
    actions: list = []
    for move in plan:
        if move[0] == "oracle_all":
            actions += [{"name": c.name, "arguments": dict(c.arguments)} for c in task.oracle_calls]
        elif move[0] == "oracle" and task.oracle_calls:
            call = task.oracle_calls[move[1] % len(task.oracle_calls)]
            actions.append({"name": call.name, "arguments": dict(call.arguments)})
        elif move[0] == "other":
            _, other = tasks[move[1] % len(tasks)]
            if other.oracle_calls:
                call = other.oracle_calls[move[2] % len(other.oracle_calls)]
                actions.append({"name": call.name, "arguments": dict(call.arguments)})
        elif move[0] == "junk":
            actions.append(move[1])
        elif move[0] == "finish":
            answer = {"oracle": task.oracle_answer, "generic": "好的，已完成。",
                      "oracle_plus_other": f"{task.oracle_answer} 也可能是明天。"}[move[1]]
            actions.append({"name": "finish", "arguments": {"answer": answer}})
    total, _ = _phone_play(env, task.task_id, actions)
    assert total <= returns[task.task_id] + 1e-9, (task.task_id, total, returns[task.task_id], actions)


def test_phone_sequences_do_reach_the_oracles_return(phone_farm):
    """The bound is not vacuous: replaying the oracle's own sequence succeeds and earns exactly its return."""
    tasks, returns = phone_farm
    for env, task in tasks[:30]:
        total, success = _phone_play(env, task.task_id, _phone_oracle(task))
        assert success and total == pytest.approx(returns[task.task_id])
