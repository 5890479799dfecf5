"""The rule agent acts like any other policy: it sees only what ``reset`` and ``step`` return.

* It plays through :class:`PublicEnv`, a stand-in for the env that offers ``reset`` and
  ``step`` only and records (and refuses) any other attribute, and with reset info whose
  gold labels (``task_scenario``, ``intent_family``) are recorded when read: a dozen episodes
  of every scenario of the bundled set and every episode of the real sample, with no access
  recorded, and the same actions and metrics as through the real env.
* Agents that cheat (read the env's episode, or the info's scenario label) are caught, so
  the guard can fail.
* Its modules import nothing from ``mobility_rewards`` and name no env internal (read with ``ast``).
* It reads both observation formats: ``"raw"`` and ``"compact"`` give the same actions.
* Its own readers (clock times, transit lines, route choices) on hand-computed cases.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest

from mobility_agents.baselines.mobilitybench import observations as answers
from mobility_agents.base import Agent, EpisodeSession
from mobility_agents.baselines.mobilitybench.rule import RuleAgent
from mobility_env.mobilitybench.env import MobilityEnv
from mobility_env.mobilitybench.observation import format_response

REPO = Path(__file__).resolve().parents[1]
AGENT_FILES = (REPO / "agents" / "baselines" / "mobilitybench" / "rule.py",
               REPO / "agents" / "baselines" / "mobilitybench" / "observations.py")
PER_SCENARIO = 12
PUBLIC_ENV = frozenset({"reset", "step"})
PUBLIC_INFO = frozenset({"episode_id", "query", "context", "tools", "max_steps", "step"})


class GuardedInfo(dict):
    """Reset info that records every read of a key an agent must not use (the gold labels)."""

    def __init__(self, info: dict[str, Any], log: list[str]):
        super().__init__(info)
        self._log = log

    def _check(self, key: Any) -> None:
        if key not in PUBLIC_INFO:
            self._log.append(f"info[{key!r}]")

    def __getitem__(self, key: Any) -> Any:
        self._check(key)
        return super().__getitem__(key)

    def get(self, key: Any, default: Any = None) -> Any:
        self._check(key)
        return super().get(key, default)

    def __contains__(self, key: Any) -> bool:
        self._check(key)
        return super().__contains__(key)

    def _whole(self, what: str) -> None:
        self._log.append(f"info.{what}()")

    def items(self):  # type: ignore[override]
        self._whole("items")
        return super().items()

    def values(self):  # type: ignore[override]
        self._whole("values")
        return super().values()

    def __iter__(self):
        self._whole("__iter__")
        return super().__iter__()


class PublicEnv:
    """An env that offers ``reset`` and ``step`` only; any other attribute is recorded and refused."""

    def __init__(self, env: MobilityEnv):
        object.__setattr__(self, "_wrapped", env)
        object.__setattr__(self, "touched", [])

    def __getattribute__(self, name: str) -> Any:
        if name == "touched":
            return object.__getattribute__(self, "touched")
        if name not in PUBLIC_ENV:
            object.__getattribute__(self, "touched").append(f"env.{name}")
            raise AttributeError(f"the agent read env.{name}: only reset and step are public to a policy")
        return getattr(object.__getattribute__(self, "_wrapped"), name)

    def __setattr__(self, name: str, value: Any) -> None:
        object.__getattribute__(self, "touched").append(f"set env.{name}")
        raise AttributeError(f"the agent set env.{name}")


def play_guarded(agent: Agent, env: MobilityEnv, episode_id: str) -> tuple[EpisodeSession, list[str]]:
    """Play one episode through :class:`PublicEnv`; the session and every forbidden access."""
    public = PublicEnv(env)
    obs, info = public.reset(seed=0, options={"episode_id": episode_id})
    guarded = GuardedInfo(info, public.touched)
    session = EpisodeSession(env=public, observation=obs, info=guarded)  # type: ignore[arg-type]
    agent.play(session)
    return session, public.touched


def by_scenario(env: MobilityEnv, per_scenario: int) -> dict[str, list[str]]:
    groups: dict[str, list[str]] = {}
    for episode_id in env.store.ids:
        group = groups.setdefault(env.store.task_scenario(episode_id), [])
        if len(group) < per_scenario:
            group.append(episode_id)
    return groups


@pytest.fixture(scope="module")
def bundled_env() -> MobilityEnv:
    return MobilityEnv()


@pytest.fixture(scope="module")
def bundled_ids(bundled_env) -> list[str]:
    groups = by_scenario(bundled_env, PER_SCENARIO)
    assert len(groups) == 11 and all(len(ids) == PER_SCENARIO for ids in groups.values()), \
        {k: len(v) for k, v in groups.items()}
    return [episode_id for ids in groups.values() for episode_id in ids]


def _actions(session: EpisodeSession) -> list[Any]:
    return [step.action for step in session.steps]


def _check_public_play(env: MobilityEnv, ids: list[str]) -> list[float]:
    fprs = []
    for episode_id in ids:
        session, touched = play_guarded(RuleAgent(), env, episode_id)
        assert touched == [], (episode_id, touched)
        actions = _actions(session)
        assert session.terminated and actions[-1]["name"] == "finish", (episode_id, actions)
        plain = RuleAgent().run_episode(env, episode_id, seed=0)
        assert plain["result"]["failure"] is None, plain["result"]["failure"]
        assert [s["action"] for s in plain["trajectory"]["steps"]] == _actions(session), episode_id
        assert plain["result"]["metrics"] == session.final_info["metrics"], episode_id
        fprs.append(session.final_info["metrics"]["FPR"])
    return fprs


def test_rule_agent_plays_the_bundled_set_through_reset_and_step_only(bundled_env, bundled_ids):
    fprs = _check_public_play(bundled_env, bundled_ids)
    # a floor, far below the measured rate (docs/results.md), so the guard did not turn the agent into a no-op
    assert sum(fprs) / len(fprs) >= 0.4, sum(fprs) / len(fprs)


def test_rule_agent_plays_the_real_sample_through_reset_and_step_only(built_dir):
    env = MobilityEnv(built_dir)
    fprs = _check_public_play(env, list(env.store.ids))
    assert len(fprs) == 81 and sum(fprs) / len(fprs) >= 0.5, sum(fprs) / len(fprs)


class _ReadsTheGold(Agent):
    def play(self, session: EpisodeSession) -> None:
        episode = session.env.unwrapped.episode
        session.finish(str(episode.gold_calls))


class _ReadsTheScenarioLabel(Agent):
    def play(self, session: EpisodeSession) -> None:
        session.finish("答案", intent=session.info.get("task_scenario"))


class _ReadsTheStore(Agent):
    def play(self, session: EpisodeSession) -> None:
        session.finish(str(session.env.store.ids[:1]))


def test_the_guard_catches_agents_that_read_internals(bundled_env, bundled_ids):
    with pytest.raises(AttributeError, match="env.unwrapped"):
        play_guarded(_ReadsTheGold(), bundled_env, bundled_ids[0])
    with pytest.raises(AttributeError, match="env.store"):
        play_guarded(_ReadsTheStore(), bundled_env, bundled_ids[0])
    session, touched = play_guarded(_ReadsTheScenarioLabel(), bundled_env, bundled_ids[0])
    assert touched == ["info['task_scenario']"] and session.terminated


def _imports(tree: ast.AST) -> list[str]:
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
    return names


ALLOWED_KERNEL_IMPORTS = {"mobility_env.mobilitybench.observation", "mobility_env.tools"}
INTERNAL_ATTRIBUTES = {"unwrapped", "store", "sandbox", "state", "episode", "gold_calls", "gold_response",
                       "trajectory", "recorded", "scorer", "final_info"}


@pytest.mark.parametrize("path", AGENT_FILES, ids=lambda p: p.name)
def test_rule_agent_modules_import_no_scorer_and_name_no_env_internal(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    ours = [name for name in _imports(tree) if name.split(".")[0].startswith("mobility")]
    assert not [n for n in ours if n.startswith("mobility_rewards")], ours
    assert set(ours) <= ALLOWED_KERNEL_IMPORTS, set(ours) - ALLOWED_KERNEL_IMPORTS
    attributes = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    assert not attributes & INTERNAL_ATTRIBUTES, attributes & INTERNAL_ATTRIBUTES
    strings = [node.value for node in ast.walk(tree)
               if isinstance(node, ast.Constant) and isinstance(node.value, str)]
    gold_or_scorer = [s for s in strings if s in ("task_scenario", "intent_family") or s.startswith("mobility_rewards")]
    assert gold_or_scorer == []


def test_the_import_check_sees_a_deferred_scorer_import():
    tree = ast.parse("def f():\n    from mobility_rewards.mobilitybench.slots import line_uses\n    return line_uses\n")
    assert _imports(tree) == ["mobility_rewards.mobilitybench.slots"]


def test_raw_and_compact_observations_give_the_same_play(bundled_ids):
    compact, raw = MobilityEnv(obs_format="compact"), MobilityEnv(obs_format="raw")
    differing, observations_differ = [], 0
    for episode_id in bundled_ids:
        a, _ = play_guarded(RuleAgent(), compact, episode_id)
        b, _ = play_guarded(RuleAgent(), raw, episode_id)
        if _actions(a) != _actions(b):
            differing.append((episode_id, _actions(a)[-1], _actions(b)[-1]))
        observations_differ += any(x.observation != y.observation for x, y in zip(a.steps[:-1], b.steps[:-1]))
    assert differing == []
    # the two formats really differ on the wire, so the check above compares something
    assert observations_differ >= len(bundled_ids) // 2, observations_differ


# ------------------------------------------------------------------ the agent's own readers
@pytest.mark.parametrize(("query", "expected"), [
    ("明天上午九点要到达逸景路海珠区人民法院", [(9 * 60, True)]),
    ("我晚上7点半前要到融创八里新村", [(19 * 60 + 30, True)]),
    ("我11点15要到嵩山路万达广场", [(11 * 60 + 15, False)]),
    ("几点出发能两点到绿地凤凰花园", [(2 * 60, False)]),
    ("那个我下午三点要到沈阳市第30中学", [(15 * 60, True)]),
    ("晚上十二点到", [(0, True)]),
    ("中午一点到", [(13 * 60, True)]),
    ("十点一刻到", [(10 * 60 + 15, False)]),
    ("八点四十五分到", [(8 * 60 + 45, False)]),
    ("我想早一点出发去机场", []),
    ("离机场多远", []),
])
def test_query_times(query, expected):
    assert [(t.minutes, t.definite) for t in answers.query_times(query)] == expected


def test_travel_clock_departure_and_arrival():
    context = {"start_datetime": "2025-11-03 20:50:58.839"}
    assert answers.travel_clock("我12点前要到维也纳酒店。那我几点出发呢？", context, 17 * 60) == ("departure", 11 * 60 + 43)
    assert answers.travel_clock("凌晨一点要到车站，几点出发", context, 90 * 60) == ("departure", 23 * 60 + 30)
    assert answers.travel_clock("我现在出发几点到机场", context, 30 * 60) == ("arrival", 21 * 60 + 20)
    assert answers.travel_clock("明天我要去龙华苑，你看看我几点出发，是最快。", context, 600) is None


@pytest.mark.parametrize(("line", "excluded", "rides"), [
    ("地铁1号线(苹果园--古城)", "1号线", True),
    ("地铁一号线八通线", "1号线", True),
    ("地铁11号线(a--b)", "1号线", False),
    ("地铁10号线(雨山路--东麒路)", "1号线", False),
    ("1206路(东站--西站)", "206路", False),
    ("206路(东站--西站)", "206路", True),
    ("地铁2号线", "地铁二号线", True),
    ("Line 4", "4号线", True),
])
def test_rides_line(line, excluded, rides):
    assert answers.rides_line(line, excluded) is rides


RAW_BUS = {"status": "SUCCESS", "error": None, "data": {"route": {
    "origin": "1,1", "destination": "2,2", "transits": [
        {"duration": "1703", "cost": "2", "walking_distance": "318", "distance": "3606", "segments": [
            {"bus": {"buslines": [{"name": "地铁1号线(a--b)", "type": "地铁线路", "departure_stop": {"name": "甲"},
                                   "arrival_stop": {"name": "乙"}, "via_num": "4"}]}}]},
        {"duration": "2000", "cost": "3", "walking_distance": "500", "distance": "4000", "segments": [
            {"bus": {"buslines": [{"name": "37路(c--d)", "departure_stop": {"name": "丙"},
                                   "arrival_stop": {"name": "丁"}}]}},
            {"railway": {"name": "城际铁路", "departure_stop": {"name": "戊"}, "arrival_stop": {"name": "己"}}}]}]}}}
CYCLING = "有2种骑行路线：\n第1种：主要经过葛嘴线、长风路、淇山路，全程21.3公里，预计耗时1小时49分钟\n第2种：主要经过淇山路，全程800米，预计耗时5分钟"


def test_route_choices_read_raw_and_compact_alike():
    compact = json.loads(format_response("bus_route", RAW_BUS, "compact"))
    expected = [answers.RouteChoice(0, 3606.0, 1703.0, lines=("地铁1号线(a--b)",)),
                answers.RouteChoice(1, 4000.0, 2000.0, lines=("37路(c--d)", "城际铁路"))]
    assert answers.route_choices(RAW_BUS) == expected
    assert answers.route_choices(compact) == expected
    assert answers.describe_route(compact, 1) == "推荐第2条路线：全程4.0公里，预计耗时33分钟，乘坐37路(c--d)→城际铁路。"
    assert answers.route_choices({"error": {"type": "no_cached_result"}}) == []
    assert answers.route_choices(None) == []


def test_cycling_text_and_departure_answer():
    choices = answers.route_choices(json.loads(json.dumps(CYCLING)))
    assert choices == [answers.RouteChoice(0, 21300.0, 6540.0, roads=("葛嘴线", "长风路", "淇山路")),
                       answers.RouteChoice(1, 800.0, 300.0, roads=("淇山路",))]
    text = answers.describe_departure("我晚上7点半前要到融创八里新村。那我几点出发呢？", {}, CYCLING, 0)
    assert text == "全程21.3公里，路上预计需要1小时49分钟，建议17:41出发。"


def test_other_descriptions_read_compact_views():
    assert answers.describe_weather({"weather": "淮安市当前天气多云，气温-4℃，湿度39%。"}) == "淮安市当前天气多云，气温-4℃。"
    forecast = {"weather": "南宁市未来2天天气预报：\n2025-11-23（周日）：霾，气温16~27℃，东北风1-3级\n"
                           "2025-11-24（周一）：阵雨，气温16~26℃，东风1-3级\n"}
    assert answers.describe_weather(forecast) == "南宁市天气预报：2025-11-23霾，气温16~27℃；2025-11-24阵雨，气温16~26℃。"
    assert answers.describe_weather({"error": {"type": "x"}}) == "暂时查不到天气信息。"
    assert answers.describe_traffic({"description": "十里北路：双向拥堵。", "state": "拥堵"}, "十里北路") \
        == "十里北路目前路况：拥堵。十里北路：双向拥堵。"
    assert answers.describe_geocode({"formatted_address": "安徽省蚌埠市怀远县"}) == "您现在在安徽省蚌埠市怀远县附近。"
    pois = {"count": 2, "pois": [{"name": "甲店", "address": "A路1号", "location": "110.1,20.1"},
                                 {"name": "乙店", "location": "110.2,20.2"}]}
    assert answers.describe_nearby(pois) == "附近有：甲店（A路1号）；乙店。"
    assert answers.places(pois)[1] == answers.Place("乙店", "", (110.2, 20.2))
    assert answers.describe_poi({"name": "大石桥市", "address": "辽宁省", "location": "122.509006,40.644482"}) \
        == "大石桥市，地址：辽宁省，坐标122.509006,40.644482。"
