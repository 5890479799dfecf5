"""Shaping pays only for real progress: no mutated trajectory out-earns the gold one.

Trajectories are played through the real env (real sandbox replay, so misses, fuzzy and
nearest matches, recorded alternatives and the global fallback all happen as for an agent),
on the real sample and on the bundled synthetic episodes. Each is the episode's gold calls
with some dropped, repeated or mutated (wrong strategy, wrong mode, junk arguments) plus
junk actions, then the reference (correct) finish — the best finish there is.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mobility_env.mobilitybench.env import MobilityEnv
from mobility_env.tools import TOOLS
from mobility_rewards.mobilitybench.audit import audit_episodes, blocking_episode_ids
from mobility_rewards.mobilitybench.reference import reference_finish
from mobility_rewards.mobilitybench.shaping import RewardWeights
from mobility_rewards.mobilitybench.tooluse import call_identity

KINDS = ("gold", "drop", "repeat", "wrong_strategy", "wrong_mode", "junk")
JUNK_ACTIONS = ("teleport", "{not json", "query_poi_without_keywords")
MODE_SWAP = {"driving_route": "walking_route", "walking_route": "bicycling_route",
             "bicycling_route": "driving_route", "bus_route": "driving_route"}
MAX_RETURN = RewardWeights().max_return


def _far(coordinate: str) -> str:
    lng, lat = (float(x) for x in coordinate.split(","))
    return f"{lng + 0.5:.6f},{lat + 0.5:.6f}"


def mutate(name: str, arguments: dict, kind: str) -> dict:
    """The gold call ``name(arguments)`` changed as ``kind`` says (see KINDS)."""
    args = dict(arguments)
    route = TOOLS[name].kind == "route"
    if kind == "wrong_strategy" and name == "driving_route":
        current = set(args.get("strategy") or [])
        return {"name": name, "arguments": {**args, "strategy": ["高速优先"] if "不走高速" in current else ["不走高速"]}}
    if kind == "wrong_strategy" and name == "bus_route":
        other = "2" if str(args.get("strategy") or "0") == "5" else "5"
        return {"name": name, "arguments": {**args, "strategy": other}}
    if kind == "wrong_mode" and route:
        return {"name": MODE_SWAP[name], "arguments": {"origin": args["origin"], "destination": args["destination"]}}
    if kind in ("wrong_strategy", "wrong_mode", "junk"):
        for param in TOOLS[name].params:
            value = args.get(param.name)
            if value is None:
                continue
            if param.role == "coordinate":
                args[param.name] = _far(value)
            elif param.role == "coordinate_list":
                args[param.name] = [_far(v) for v in value]
            elif param.role in ("name", "city", "text"):
                args[param.name] = "无此地方zzq"
            elif param.name in ("longitude", "latitude"):
                args[param.name] = str(float(value) + 0.5)
        return {"name": name, "arguments": args}
    return {"name": name, "arguments": args}


def junk_action(which: str):
    if which == "teleport":
        return {"name": "teleport", "arguments": {}}
    if which == "query_poi_without_keywords":
        return {"name": "query_poi", "arguments": {"city": "北京市"}}
    return which


def play(env: MobilityEnv, episode_id: str, actions: list) -> tuple[float, list[tuple[object, dict]]]:
    env.reset(options={"episode_id": episode_id})
    total, steps = 0.0, []
    for action in actions:
        _, reward, terminated, truncated, info = env.step(action)
        total += reward
        steps.append((action, info))
        if terminated or truncated:
            break
    return total, steps


def finish_action(episode) -> dict:
    return {"name": "finish", "arguments": reference_finish(episode).model_dump(exclude_none=True)}


@st.composite
def variants(draw, episode):
    """(actions, kinds): gold calls kept, dropped, repeated or mutated, with junk inserted."""
    actions, kinds = [], []
    for gold in episode.gold_calls:
        kind = draw(st.sampled_from(KINDS))
        if draw(st.booleans()):
            which = draw(st.sampled_from(JUNK_ACTIONS))
            actions.append(junk_action(which))
            kinds.append("junk_action")
        if kind == "drop":
            continue
        original = {"name": gold.name, "arguments": dict(gold.arguments)}
        if kind == "repeat":
            actions += [original, original]
            kinds += ["gold", "repeat"]
        else:
            actions.append(mutate(gold.name, gold.arguments, kind))
            kinds.append(kind)
    return actions, kinds


class Checker:
    """Plays the gold trajectory once per episode and checks variants against it."""

    def __init__(self, env: MobilityEnv):
        self.env = env
        episodes = [env.store.get(i) for i in env.episode_ids]
        blocked = blocking_episode_ids(audit_episodes(episodes))
        self.episodes = [e for e in episodes if e.episode_id not in blocked and e.gold_calls]
        self.gold_returns: dict[str, float] = {}

    def gold_return(self, episode) -> float:
        if episode.episode_id not in self.gold_returns:
            actions = [{"name": c.name, "arguments": dict(c.arguments)} for c in episode.gold_calls]
            self.gold_returns[episode.episode_id] = play(self.env, episode.episode_id,
                                                         actions + [finish_action(episode)])[0]
        return self.gold_returns[episode.episode_id]

    def check(self, episode, actions: list, kinds: list[str]) -> None:
        gold_identities = {call_identity(c.name, c.arguments) for c in episode.gold_calls}
        best = self.gold_return(episode)
        assert best == pytest.approx(MAX_RETURN), episode.episode_id
        total, steps = play(self.env, episode.episode_id, actions + [finish_action(episode)])
        assert total <= best + 1e-9, (episode.episode_id, episode.task_scenario, actions)
        for (action, info), kind in zip(steps, kinds):
            step_reward = sum(info["reward_components"].values())
            if "error" in info:  # an error observation never pays
                assert step_reward <= 1e-12, (kind, action, info["reward_components"])
            if kind in ("repeat", "junk_action"):
                assert step_reward <= 1e-12, (kind, action, info["reward_components"])
            if kind in ("wrong_strategy", "wrong_mode", "junk") and isinstance(action, dict) and \
                    call_identity(action["name"], action["arguments"]) not in gold_identities:
                assert step_reward <= 1e-12, (kind, action, info["reward_components"])


@pytest.fixture(scope="module")
def real_checker(built_dir):
    return Checker(MobilityEnv(data=built_dir, max_steps=40))


@pytest.fixture(scope="module")
def synthetic_checker():
    return Checker(MobilityEnv(max_steps=40))


_SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_SETTINGS
@given(data=st.data())
def test_no_mutation_of_the_gold_calls_beats_the_gold_trajectory_on_the_real_sample(real_checker, data):
    index = data.draw(st.integers(0, len(real_checker.episodes) - 1), label="episode index")
    episode = real_checker.episodes[index]
    actions, kinds = data.draw(variants(episode))
    real_checker.check(episode, actions, kinds)


@_SETTINGS
@given(data=st.data())
def test_no_mutation_of_the_gold_calls_beats_the_gold_trajectory_on_synthetic_episodes(synthetic_checker, data):
    index = data.draw(st.integers(0, len(synthetic_checker.episodes) - 1), label="episode index")
    episode = synthetic_checker.episodes[index]
    actions, kinds = data.draw(variants(episode))
    synthetic_checker.check(episode, actions, kinds)


def test_gold_trajectory_collects_the_maximum_on_every_synthetic_episode(synthetic_checker):
    for episode in synthetic_checker.episodes:
        assert synthetic_checker.gold_return(episode) == pytest.approx(MAX_RETURN), episode.episode_id


def test_finish_after_only_junk_earns_less_than_gold(real_checker):
    for episode in real_checker.episodes[::5]:
        junk = [mutate(c.name, c.arguments, "junk") for c in episode.gold_calls]
        junk += [junk_action(j) for j in JUNK_ACTIONS]
        total, steps = play(real_checker.env, episode.episode_id, junk + [finish_action(episode)])
        assert all(sum(info["reward_components"].values()) <= 1e-12 for _, info in steps[:-1]), episode.episode_id
        assert total < real_checker.gold_return(episode), episode.episode_id
