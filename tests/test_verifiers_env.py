"""``mobility_agents.adapters.verifiers`` driven by verifiers' own rollout and evaluation code.

A scripted OpenAI-compatible server on 127.0.0.1 (``tests/openai_server.py``) plays the model; verifiers' eval
runner (``verifiers.v1.cli.eval.runner.run_eval``, in process), the ``vf-eval`` command itself (a subprocess) and
``Env.run_episode`` drive the rollouts through verifiers' interception server, which records each trace. Every
rollout is compared with the same actions played on an in-process env built by ``mobility_agents.targets.make_env``
with the env's own reward weights: the trace's reward (the rubric's weighted sum) equals the env's episode return,
its per-step rewards (``step_rewards``) the env's rewards step by step, its metrics and verdict the env's terminal
ones, its tool calls the actions and its tool messages the env's observations.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

vf = pytest.importorskip("verifiers.v1", reason="the verifiers extra is not installed")

from openai_server import (MODEL, ScriptedOpenAIServer, Turn, bad_request, react_script, text_turn,  # noqa: E402
                           tool_call, tool_turn)

from mobility_agents.baselines.mobilepa.scripted import PhoneOracleAgent  # noqa: E402
from mobility_agents.baselines.mobilitybench.oracle import OracleAgent  # noqa: E402
from mobility_agents.targets import MOBILEPA, MOBILITYBENCH, make_env, open_store  # noqa: E402
from mobility_agents.adapters.verifiers import (PLUGIN_ID, PLUGIN_MODULE, EpisodeInfo, episode_outcome,  # noqa: E402
                                                load_environment, reward_terms, reward_weights,
                                                step_rewards)
from mobility_env.actions import parse_action  # noqa: E402
from mobility_env.errors import ConfigError, DataFileError  # noqa: E402
from verifiers.v1.cli.eval.runner import run_eval  # noqa: E402
from verifiers.v1.configs.cli.eval import EvalConfig  # noqa: E402


class EpisodeRoutedServer(ScriptedOpenAIServer):
    """The scripted server, one script per episode: a request is answered from the script of its conversation's
    user message (the task prompt), at the index of the assistant turns it already holds, so rollouts running
    concurrently get their own episode's turns. A request beyond its script gets a 500 (counted in ``overruns``)."""

    def __init__(self, scripts: dict[str, list[Turn]]):
        super().__init__([])
        self.scripts = scripts

    def _take(self) -> Turn | None:
        return Turn()  # a placeholder: ``completion`` answers from the request's own script

    def completion(self, body: dict[str, Any], turn: Turn) -> dict[str, Any]:
        messages = body["messages"]
        prompt = next(m["content"] for m in messages if m["role"] == "user")
        index = sum(1 for m in messages if m["role"] == "assistant")
        script = self.scripts[prompt]
        if index >= len(script):
            with self._lock:
                self.overruns += 1
            raise RuntimeError("script exhausted")  # the handler thread dies; the client sees a dropped request
        return super().completion(body, script[index])


def client_config(server: ScriptedOpenAIServer) -> Any:
    return vf.EvalClientConfig(base_url=server.base_url, api_key_var="MOBILITY_ENV_TEST_NO_KEY")


@functools.lru_cache(maxsize=None)
def reference_store(env_id: str, data: str | None) -> Any:
    """The test's own store of the data (not the one the rollouts share), opened once."""
    return open_store(env_id, data)


def play_in_process(env_id: str, info: EpisodeInfo, actions: list[Any], weights: Any = None, *,
                    abandon: str | None = None) -> dict[str, Any]:
    """The same actions on a fresh in-process env (the test's own store, the env's own weights); with ``abandon``,
    an episode the actions leave running is then abandoned for that reason (what a runner does to a failed agent)."""
    store = reference_store(env_id, info.data)
    options = dict(info.env_options)
    if weights is not None:
        options["reward_weights"] = weights
    env = make_env(store, options)
    env.reset(options={"episode_id": info.episode_id})
    observations: list[str] = []
    rewards: list[float] = []
    components: dict[str, float] = {}
    final = None
    for action in actions:
        obs, reward, terminated, truncated, step_info = env.step(action)
        observations.append(obs)
        rewards.append(float(reward))
        for name, value in step_info["reward_components"].items():
            components[name] = components.get(name, 0.0) + value
        if terminated or truncated:
            final = step_info
            break
    if final is None and abandon is not None:
        final = env.abandon(abandon)
        closing = final["reward_components"]
        rewards[-1] += sum(closing.values())
        for name, value in closing.items():
            components[name] = components.get(name, 0.0) + value
    assert final is not None, "the actions did not end the episode"
    return {"return": sum(rewards), "rewards": rewards, "observations": observations, "metrics": final["metrics"],
            "verdict": final["verdict"], "steps": len(observations), "components": components}


def oracle_actions(env_id: str, info: EpisodeInfo) -> list[dict[str, Any]]:
    env = make_env(reference_store(env_id, info.data), dict(info.env_options))
    if env_id == MOBILEPA:
        return PhoneOracleAgent().actions(env, info.episode_id)
    record = OracleAgent().run_episode(env, info.episode_id)
    actions = []
    for step in record["trajectory"]["steps"]:
        parsed = parse_action(step["action"])
        actions.append({"name": parsed.name, "arguments": parsed.arguments})
    return actions


def trace_calls(trace: Any) -> list[tuple[str, Any]]:
    return [(call.name, json.loads(call.arguments)) for message in trace.assistant_messages
            for call in message.tool_calls or []]


def assert_matches_in_process(trace: Any, env_id: str, actions: list[dict[str, Any]], expected: dict[str, Any]):
    assert trace.ok, trace.errors
    assert trace_calls(trace) == [(a["name"], a["arguments"]) for a in actions]
    # the model saw every observation but the last (the episode ended on that step)
    assert [m.content for m in trace.tool_messages] == expected["observations"][:-1]
    assert {name: r.weight for name, r in trace.rewards.items()} == reward_weights(env_id)
    assert_same_episode(trace, env_id, expected)


def assert_same_episode(trace: Any, env_id: str, expected: dict[str, Any]) -> None:
    """The trace pays what the in-process env paid, step by step and term by term, with its metrics and verdict."""
    outcome = episode_outcome(trace)
    assert len(outcome["steps"]) == expected["steps"]
    assert step_rewards(trace) == pytest.approx(expected["rewards"], abs=1e-9)
    assert trace.reward == pytest.approx(expected["return"], abs=1e-9)
    assert outcome["metrics"] == expected["metrics"] and outcome["verdict"] == expected["verdict"]
    for name, value in expected["metrics"].items():
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            assert trace.metrics[name] == pytest.approx(value), name
    assert_terms_match(trace, expected)


def assert_terms_match(trace: Any, expected: dict[str, Any]) -> None:
    """Term by term, the rubric pays what the env's reward components paid."""
    assert set(trace.rewards) == set(reward_terms(episode_outcome(trace)["env_id"]))
    for name, reward in trace.rewards.items():
        assert reward.score * reward.weight == pytest.approx(expected["components"].get(name, 0.0), abs=1e-9), name


def run_verifiers_eval(env: Any, server: ScriptedOpenAIServer, out: Path, episode_ids: list[str]) -> list[Any]:
    config = EvalConfig(env=env.config, model=MODEL, client=client_config(server), rich=None, push=False,
                        output_dir=out, run={"dir": "run"}, max_concurrent=4,
                        select={"include": {"ids": episode_ids}})
    episodes = asyncio.run(run_eval(config))
    return [trace for episode in episodes for trace in episode.traces]


# --------------------------------------------------------------------------- gold trajectories, both envs
@pytest.fixture(scope="module")
def mobility_ids(built_dir: Path) -> list[str]:
    """Episodes of the real sample with several calls: a multi-stop route, a traffic query (its gold query_poi has no
    recorded response: an unavoidable miss), an option-constrained route, and the first whose oracle fails FPR."""
    store = open_store(MOBILITYBENCH, built_dir)
    env = make_env(store, {"max_steps": 10, "obs_format": "compact"})
    wanted: dict[str, str | None] = {"Multi-stop Planning": None, "Traffic Info Query": None,
                                     "Option-Constrained Route Planning": None, "oracle fails FPR": None}
    for episode_id in store.ids:
        result = OracleAgent().run_episode(env, episode_id)["result"]
        kind = result["task_scenario"] if result["metrics"]["FPR"] == 1.0 else "oracle fails FPR"
        if kind in wanted and wanted[kind] is None:
            wanted[kind] = episode_id
            if all(wanted.values()):
                break
    chosen = [i for i in wanted.values() if i is not None]
    assert len(chosen) >= 3
    return chosen


def test_eval_of_mobilitybench_equals_the_in_process_env(built_dir, mobility_ids, tmp_path):
    env = load_environment(MOBILITYBENCH, data=str(built_dir))
    tasks = {t.data.id: t for t in env.taskset if t.data.id in mobility_ids}
    plan = {}
    for episode_id in mobility_ids:
        info = tasks[episode_id].data.info
        actions = oracle_actions(MOBILITYBENCH, info)
        plan[episode_id] = (actions, play_in_process(MOBILITYBENCH, info, actions))
    scripts = {tasks[i].data.prompt: react_script(actions) for i, (actions, _) in plan.items()}
    with EpisodeRoutedServer(scripts) as server:
        traces = run_verifiers_eval(env, server, tmp_path, mobility_ids)
    assert server.protocol_errors == [] and server.overruns == 0
    assert sorted(t.task.data.id for t in traces) == sorted(mobility_ids)
    returns = set()
    for trace in traces:
        actions, expected = plan[trace.task.data.id]
        assert_matches_in_process(trace, MOBILITYBENCH, actions, expected)
        returns.add(round(trace.reward, 6))
        assert episode_outcome(trace)["terminated"] is True
    assert len(returns) > 1, "the episodes chosen should not all pay the same"
    # the eval wrote its traces; each line carries the episode's rewards and outcome
    lines = [json.loads(line) for line in (tmp_path / "run" / "traces.jsonl").read_text().splitlines()]
    written = {t["task"]["data"]["id"]: t for line in lines for t in line["traces"]}
    for trace in traces:
        record = written[trace.task.data.id]
        assert record["info"]["mobility"]["episode_id"] == trace.task.data.id
        assert sum(r["score"] * r["weight"] for r in record["rewards"].values()) == pytest.approx(trace.reward)
        assert step_rewards(record) == pytest.approx(plan[trace.task.data.id][1]["rewards"], abs=1e-9)


def test_eval_of_mobilepa_equals_the_in_process_env(tmp_path):
    env = load_environment(MOBILEPA, limit=30)
    tasks = list(env.taskset)

    def first(predicate):
        return next(t for t in tasks if predicate([c.name for c in env_tasks[t.data.id].oracle_calls]))

    env_tasks = {task.task_id: task for task in reference_store(MOBILEPA, None).tasks}
    chosen = [first(lambda names: "load_skill" in names), first(lambda names: "ask_user" in names),
              first(lambda names: names and names[0] == "list_apps")]
    plan = {}
    for task in chosen:
        actions = oracle_actions(MOBILEPA, task.data.info)
        plan[task.data.id] = (actions, play_in_process(MOBILEPA, task.data.info, actions))
    scripts = {t.data.prompt: react_script(plan[t.data.id][0]) for t in chosen}
    with EpisodeRoutedServer(scripts) as server:
        traces = run_verifiers_eval(env, server, tmp_path, [t.data.id for t in chosen])
        bodies = server.chat_bodies
    assert server.protocol_errors == [] and server.overruns == 0
    assert len(traces) == len(chosen)
    for trace in traces:
        actions, expected = plan[trace.task.data.id]
        assert_matches_in_process(trace, MOBILEPA, actions, expected)
        assert trace.metrics["success"] == 1.0
    # a loaded skill's tools are offered from the next request on
    skill_task = chosen[0]
    offered = [{t["function"]["name"] for t in body["tools"]} for body in bodies
               if next(m["content"] for m in body["messages"] if m["role"] == "user") == skill_task.data.prompt]
    skill_tools = {a["name"] for a in plan[skill_task.data.id][0][1:-1]}
    assert not skill_tools <= offered[0] and skill_tools <= offered[-1]


# --------------------------------------------------------------------------- bad replies, limits, weights
def run_one(env: Any, task: Any, script: list[Turn]) -> tuple[Any, ScriptedOpenAIServer]:
    with ScriptedOpenAIServer(script) as server:
        ctx = vf.ModelContext(model=MODEL, client=client_config(server), sampling=vf.SamplingConfig())

        async def play():
            async with env.serving():
                return await env.run_episode(task, ctx)

        episode = asyncio.run(play())
    assert server.protocol_errors == [] and server.overruns == 0
    return episode.traces[0], server


@pytest.fixture(scope="module")
def route_episode(built_dir: Path, mobility_ids: list[str]) -> tuple[Any, Any, list[dict[str, Any]]]:
    env = load_environment(MOBILITYBENCH, data=str(built_dir))
    task = next(t for t in env.taskset if t.data.id == mobility_ids[0])
    return env, task, oracle_actions(MOBILITYBENCH, task.data.info)


def wire_action(call: dict[str, Any]) -> dict[str, Any]:
    """A scripted wire tool call as the env's OpenAI-shape action (what the harness passes on)."""
    return {"type": "function", "function": call["function"]}


#: Malformed tool calls a model can send, each with the error type the env answers it with: broken JSON, an unknown
#: tool, a megabyte string, a lone surrogate (JSON-escaped, as a model's JSON carries it), arguments that are not an
#: object, nesting past the env's depth limit, a number out of the float range, a number of 5,000 digits.
MALFORMED = [
    ('{"keywords": "unterminated', "query_poi", "invalid_json"),
    ('{"to": "moon"}', "teleport", "unknown_tool"),
    (json.dumps({"keywords": "x" * 1_000_000}), "query_poi", "invalid_action"),
    ('{"keywords": "a\\ud800b"}', "query_poi", "invalid_action"),
    ("[1, 2]", "query_poi", "schema_error"),
    ("null", "query_poi", "schema_error"),
    ('{"keywords": ' + "[" * 300 + "]" * 300 + "}", "query_poi", "invalid_action"),
    ('{"keywords": 1e999999}', "query_poi", "invalid_action"),
    ('{"keywords": ' + "9" * 5000 + "}", "query_poi", "invalid_action"),
]


def test_malformed_tool_calls_become_error_observations(built_dir, route_episode):
    _, task, _ = route_episode
    env = load_environment(MOBILITYBENCH, data=str(built_dir), max_steps=12)
    task = next(t for t in env.taskset if t.data.id == task.data.id)
    calls = [tool_call(name, arguments, f"bad_{i}") for i, (arguments, name, _) in enumerate(MALFORMED)]
    # one call per turn, the last two together (parallel calls are stepped in order), then a text answer
    script = [tool_turn(call) for call in calls[:-2]]
    script += [tool_turn(*calls[-2:]), text_turn("<think>I am done</think>I cannot tell.")]
    assert len(script[2].message["tool_calls"][0]["function"]["arguments"]) > 1_000_000
    trace, server = run_one(env, task, script)
    expected = play_in_process(MOBILITYBENCH, task.data.info,
                               [wire_action(c) for c in calls] + [{"name": "finish",
                                                                   "arguments": {"answer": "I cannot tell."}}])
    assert trace.ok, trace.errors
    errors = [json.loads(m.content)["error"]["type"] for m in trace.tool_messages]
    assert errors == [error for _, _, error in MALFORMED]
    assert [m.content for m in trace.tool_messages] == expected["observations"][:-1]
    assert "lone surrogate" in trace.tool_messages[3].content and "max_depth" in trace.tool_messages[6].content
    assert all(len(m.content) < 1000 for m in trace.tool_messages)  # the megabyte string is not echoed back
    outcome = episode_outcome(trace)
    assert [s["error"] for s in outcome["steps"]] == errors + [None]
    assert [s["call_id"] for s in outcome["steps"]] == [c["id"] for c in calls] + [None]
    assert outcome["terminated"] is True
    assert_same_episode(trace, MOBILITYBENCH, expected)
    assert outcome["terms"]["error"] + outcome["terms"]["schema_violation"] >= len(MALFORMED)
    assert trace.metrics["FPR"] == 0.0


def test_replies_verifiers_cannot_decode_are_resampled_not_crashes(route_episode):
    """A reply with a raw lone surrogate (in its text or in a call's arguments) or nested past JSON decoding never
    reaches the env: verifiers' interception refuses it as a malformed upstream response and the harness's client
    asks again (the OpenAI client's two retries); the rollout goes on with the next reply. (verifiers keeps the
    too-deep reply among the trace's assistant messages, as it recorded it before failing: only the env's steps, in
    ``trace.info["mobility"]``, say what was played.)"""
    env, task, actions = route_episode

    def escaped(message: dict[str, Any]) -> Turn:  # JSON with \\u escapes: the raw surrogate survives the wire
        payload = {"id": "chatcmpl-escaped", "object": "chat.completion", "created": 1_700_000_000, "model": MODEL,
                   "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                   "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
        return Turn(raw_body=json.dumps(payload, ensure_ascii=True).encode("ascii"))

    surrogate_text = escaped({"role": "assistant", "content": "answer \udfff"})
    surrogate_call = escaped({"role": "assistant", "content": None, "tool_calls": [
        tool_call("query_poi", '{"keywords": "a\ud800b"}', "sur")]})
    too_deep = tool_turn(tool_call("query_poi", "[" * 5000 + "]" * 5000, "deep"))
    first = actions[0]
    script = [surrogate_text, too_deep, tool_turn(tool_call(first["name"], first["arguments"], "c1")),
              surrogate_call, text_turn("I cannot tell.")]
    trace, server = run_one(env, task, script)
    assert len(server.chat_requests) == len(script)
    assert trace.ok, trace.errors
    expected = play_in_process(MOBILITYBENCH, task.data.info,
                               [first, {"name": "finish", "arguments": {"answer": "I cannot tell."}}])
    # verifiers records each model call with what went wrong; the env saw only the replies the harness received
    # (ProviderError "malformed upstream response" for the surrogates, RecursionError for the nesting in verifiers 0.4)
    assert [c.error is not None for c in trace.calls] == [True, True, False, True, False]
    assert [s["call_id"] for s in episode_outcome(trace)["steps"]] == ["c1", None]
    assert_same_episode(trace, MOBILITYBENCH, expected)


def test_malformed_calls_on_mobilepa(tmp_path):
    env = load_environment(MOBILEPA, limit=3)
    task = next(iter(env.taskset))
    oracle = oracle_actions(MOBILEPA, task.data.info)
    tool = oracle[0]["name"]
    calls = [tool_call(tool, '{"app": ', "p0"), tool_call("rm_rf", {"path": "/"}, "p1"),
             tool_call(tool, '{"no_such_argument": "\\ud800\\ud800"}', "p2"), tool_call(tool, "x" * 200_000, "p3"),
             tool_call(tool, {"no_such_argument": 1}, "p4")]
    script = [tool_turn(call) for call in calls] + react_script(oracle)
    trace, _ = run_one(env, task, script)
    expected = play_in_process(MOBILEPA, task.data.info, [wire_action(c) for c in calls] + oracle)
    assert trace.ok, trace.errors
    # MobilePA's observation of a refused call: {"status": "error", "error_type": ..., "payload": {"message": ...}}
    errors = [json.loads(m.content)["error_type"] for m in trace.tool_messages[:len(calls)]]
    assert errors == ["invalid_json", "unknown_tool", "invalid_action", "invalid_action", "schema_error"]
    assert [m.content for m in trace.tool_messages] == expected["observations"][:-1]
    assert_same_episode(trace, MOBILEPA, expected)
    assert episode_outcome(trace)["terms"]["invalid_call"] == len(calls)


def test_parallel_tool_calls_step_in_order_and_a_finish_ends_the_turn(route_episode):
    env, task, actions = route_episode
    calls, finish = actions[:-1], actions[-1]
    assert len(calls) >= 2
    wire = [tool_call(a["name"], a["arguments"], f"p{i}") for i, a in enumerate(calls)]
    script = [tool_turn(*wire), tool_turn(tool_call(finish["name"], finish["arguments"], "fin"),
                                          tool_call(calls[0]["name"], calls[0]["arguments"], "after"))]
    trace, server = run_one(env, task, script)
    expected = play_in_process(MOBILITYBENCH, task.data.info, actions)
    assert trace.ok, trace.errors
    assert [m.tool_call_id for m in trace.tool_messages] == [c["id"] for c in wire]
    assert [m.content for m in trace.tool_messages] == expected["observations"][:-1]
    assert [s["call_id"] for s in episode_outcome(trace)["steps"]] == [c["id"] for c in wire] + ["fin"]
    assert len(server.chat_requests) == 2
    assert_same_episode(trace, MOBILITYBENCH, expected)


def test_a_failed_model_call_is_a_trace_error_and_the_episode_is_abandoned(route_episode):
    env, task, actions = route_episode
    first = actions[0]
    trace, server = run_one(env, task, [tool_turn(tool_call(first["name"], first["arguments"], "c1")),
                                        bad_request("the model is not loaded")])
    assert not trace.ok and "the model is not loaded" in trace.errors[0].message
    outcome = episode_outcome(trace)
    assert outcome["abandoned"] == "model_call_failed" and outcome["truncated"] is True
    expected = play_in_process(MOBILITYBENCH, task.data.info, [first], abandon="model_call_failed")
    assert outcome["metrics"] == expected["metrics"] and outcome["metrics"]["DR"] == 0.0
    assert outcome["verdict"] == expected["verdict"]
    assert [s["call_id"] for s in outcome["steps"]] == ["c1"]
    total = {name: value * reward_weights(MOBILITYBENCH)[name] for name, value in outcome["terms"].items()}
    assert total == pytest.approx(expected["components"], abs=1e-9)


def test_a_verifiers_turn_limit_ends_the_episode_like_a_truncation(route_episode):
    env, task, actions = route_episode
    config = env.config.model_dump()
    config["agent"]["max_turns"] = 2  # ``--env.agent.max-turns 2``
    limited = vf.load_environment(vf.resolve_env_config(config))
    played = actions[:2]
    assert played[-1]["name"] != "finish"
    trace, server = run_one(limited, task, react_script(actions))
    assert trace.ok and trace.stop_condition == "max_turns"
    assert len(server.chat_requests) == 2
    outcome = episode_outcome(trace)
    assert outcome["abandoned"] == "max_turns" and outcome["truncated"] is True
    assert_same_episode(trace, MOBILITYBENCH, play_in_process(MOBILITYBENCH, task.data.info, played,
                                                              abandon="max_turns"))
    assert trace.metrics["DR"] == 0.0


def test_refused_answer_is_fed_back_and_the_step_limit_ends_the_rollout(built_dir, route_episode):
    _, task, actions = route_episode
    env = load_environment(MOBILITYBENCH, data=str(built_dir), max_steps=3)
    task = next(t for t in env.taskset if t.data.id == task.data.id)
    assert "3" in task.data.system_prompt  # the prompt states the env's action limit
    call = actions[0]
    script = [text_turn(""), tool_turn(tool_call(call["name"], call["arguments"], "c1")),
              tool_turn(tool_call(call["name"], call["arguments"], "c2"))]
    trace, server = run_one(env, task, script)
    empty_finish = {"name": "finish", "arguments": {"answer": ""}}
    expected = play_in_process(MOBILITYBENCH, task.data.info, [empty_finish, call, call])
    assert trace.ok and trace.reward == pytest.approx(expected["return"], abs=1e-9)
    # the refused empty answer came back as a user message, and the model went on
    second = server.chat_bodies[1]["messages"]
    assert second[-1]["role"] == "user" and json.loads(second[-1]["content"])["error"]["type"] == "schema_error"
    outcome = episode_outcome(trace)
    assert outcome["truncated"] is True and outcome["terminated"] is False and len(outcome["steps"]) == 3
    assert_terms_match(trace, expected)
    # the refused answer is a schema violation; the repeated call is redundant (and so is the refused ``finish``, a
    # call to a tool the gold trajectory never calls)
    assert outcome["terms"]["schema_violation"] == 1.0 and outcome["terms"]["redundant_call"] == 2.0
    assert trace.metrics["DR"] == 0.0


def test_reward_weights_reweight_the_rubric_like_the_env(built_dir, route_episode):
    _, task, actions = route_episode
    weights = {"FPR": 2.0, "tool_coverage": 0.0, "error": -1.0}
    env = load_environment(MOBILITYBENCH, data=str(built_dir), reward_weights=weights)
    task = next(t for t in env.taskset if t.data.id == task.data.id)
    script = [tool_turn(tool_call("teleport", {}, "x"))] + react_script(actions)
    trace, _ = run_one(env, task, script)
    expected = play_in_process(MOBILITYBENCH, task.data.info,
                               [{"name": "teleport", "arguments": {}}] + actions, weights=weights)
    default = play_in_process(MOBILITYBENCH, task.data.info, [{"name": "teleport", "arguments": {}}] + actions)
    assert expected["return"] != pytest.approx(default["return"])
    assert trace.reward == pytest.approx(expected["return"], abs=1e-9)
    assert_terms_match(trace, expected)
    assert trace.rewards["FPR"].weight == 2.0 and trace.rewards["error"].weight == -1.0


@pytest.mark.parametrize("kwargs, message", [
    ({"env_id": "CartPole-v1"}, "unknown env"),
    ({"reward_weights": {"speed": 1.0}}, "unknown reward weight"),
    ({"reward_weights": {"error": 0.5}}, "penalty"),
    ({"language": "fr"}, "language"),
    ({"obs_format": "xml"}, "obs_format"),
    ({"limit": 0}, "limit"),
])
def test_bad_arguments_are_config_errors(kwargs, message):
    with pytest.raises(ConfigError, match=message):
        load_environment(**kwargs)


@pytest.mark.parametrize("env_id", [MOBILITYBENCH, MOBILEPA])
def test_missing_data_is_a_data_file_error(env_id, tmp_path):
    with pytest.raises(DataFileError, match="no such file"):
        load_environment(env_id, data=str(tmp_path / "missing"))


def test_a_trace_not_played_by_the_harness_cannot_be_scored():
    class Foreign:
        id, info, rewards = "t1", {}, {}

    for trace in (Foreign(), {"id": "t2", "info": {"judge_calls": []}, "rewards": {}}):
        with pytest.raises(ConfigError, match="not played by"):
            episode_outcome(trace)
        with pytest.raises(ConfigError, match="not played by"):
            step_rewards(trace)


# --------------------------------------------------------------------------- the vf-eval command
#: The top-level module ``vf-eval mobility-verifiers`` imports (verifiers finds a taskset by id: module
#: ``mobility_verifiers``, exporting the taskset, harness and env classes in ``__all__``).
PLUGIN_SHIM = """from mobility_agents.adapters.verifiers import *  # noqa: F401,F403
from mobility_agents.adapters.verifiers import __all__  # noqa: F401
"""


def test_the_vf_eval_command_plays_the_plugin(built_dir, tmp_path):
    """``vf-eval mobility-verifiers`` in a fresh process (verifiers' CLI, its default eval path): the module it
    imports is the two-line re-export above, the runtime defaults to the local one (no sandbox, no tunnel), and the
    run's traces.jsonl pays what the in-process env pays, step by step."""
    task = next(iter(load_environment(MOBILITYBENCH, data=str(built_dir), limit=1).taskset))
    actions = oracle_actions(MOBILITYBENCH, task.data.info)
    expected = play_in_process(MOBILITYBENCH, task.data.info, actions)
    plugin_dir = tmp_path / "plugin"
    plugin_dir.mkdir()
    (plugin_dir / f"{PLUGIN_MODULE}.py").write_text(PLUGIN_SHIM, encoding="utf-8")
    environ = {**os.environ, "PYTHONPATH": os.pathsep.join([str(plugin_dir), os.environ.get("PYTHONPATH", "")])}
    with EpisodeRoutedServer({task.data.prompt: react_script(actions)}) as server:
        command = [sys.executable, "-c", "from verifiers.v1.cli.eval.main import main; main()", PLUGIN_ID,
                   "--env.taskset.data", str(built_dir), "--env.taskset.limit", "1", "--model", MODEL,
                   "--client.base-url", server.base_url, "--client.api-key-var", "MOBILITY_ENV_TEST_NO_KEY",
                   "--no-push", "--no-rich", "--output-dir", str(tmp_path / "out"), "--run.dir", "run"]
        done = subprocess.run(command, cwd=tmp_path, env=environ, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert server.protocol_errors == [] and server.overruns == 0
    assert len(server.chat_requests) == len(actions)
    lines = (tmp_path / "out" / "run" / "traces.jsonl").read_text(encoding="utf-8").splitlines()
    [record] = [trace for line in lines for trace in json.loads(line)["traces"]]
    assert record["ok"] and record["task"]["data"]["id"] == task.data.id
    outcome = episode_outcome(record)
    assert outcome["metrics"] == expected["metrics"] and outcome["verdict"] == expected["verdict"]
    assert step_rewards(record) == pytest.approx(expected["rewards"], abs=1e-9)
    assert {name: r["weight"] for name, r in record["rewards"].items()} == reward_weights(MOBILITYBENCH)
    assert sum(r["score"] * r["weight"] for r in record["rewards"].values()) == pytest.approx(expected["return"])
