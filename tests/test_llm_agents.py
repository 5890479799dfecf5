"""ReAct and Plan-and-Execute against a real OpenAI-compatible HTTP server on 127.0.0.1.

The server (``tests/openai_server.py``) plays a scripted model over real HTTP through the
``openai`` package; the env replays the real MobilityBench sample. Nothing leaves loopback.
Timeouts and backoffs are tiny so the fault tests stay fast.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mobility_agents.llm.client import LLMClient, LLMConfig, parse_text_actions
from mobility_agents.baselines.mobilitybench.oracle import OracleAgent
from mobility_agents.llm.plan_execute import PlanExecuteAgent
from mobility_agents.prompts import PROMPT_NAMES, render_prompt
from mobility_agents.llm.react import ReActAgent
from mobility_agents.runner import RunConfig, read_results, run_local
from mobility_env.mobilitybench.env import MobilityEnv
from mobility_env.mobilitybench.episode import SCENARIOS
from mobility_env.errors import ConfigError
from openai_server import (MODEL, ScriptedOpenAIServer, bad_request, context_overflow, delayed, finish_turn,
                           gold_actions, plan_execute_script, rate_limited, react_script, server_error, text_turn,
                           tool_call, tool_turn)
from mobility_rewards.mobilitybench.plan import ATOMIC_STEPS

FAST = {"timeout_s": 2.0, "max_retries": 2, "backoff_s": 0.01, "backoff_max_s": 0.5}


def config_for(server: ScriptedOpenAIServer, **changes) -> LLMConfig:
    return LLMConfig(**{"model": MODEL, "base_url": server.base_url, "api_key": "test-key", **FAST, **changes})


@pytest.fixture(scope="module")
def env(built_dir: Path) -> MobilityEnv:
    return MobilityEnv(data=built_dir)


@pytest.fixture(scope="module")
def by_scenario(env: MobilityEnv) -> dict[str, str]:
    """The first sample episode of each scenario."""
    first: dict[str, str] = {}
    for episode_id in env.episode_ids:
        first.setdefault(env.store.get(episode_id).task_scenario, episode_id)
    return first


@pytest.fixture(scope="module")
def oracle(env: MobilityEnv):
    cache: dict[str, tuple[dict, list]] = {}

    def run(episode_id: str) -> tuple[dict, list]:
        if episode_id not in cache:
            result = OracleAgent().run_episode(env, episode_id)["result"]
            cache[episode_id] = (result, gold_actions(env, episode_id))
        return cache[episode_id]
    return run


def finish_record(record: dict) -> dict:
    return record["trajectory"]["record"]["finish"]


def error_types(record: dict) -> list[str | None]:
    return [(s["error"] or {}).get("type") for s in record["trajectory"]["steps"]]


def assert_clean(server: ScriptedOpenAIServer) -> None:
    assert server.protocol_errors == []
    assert server.remaining == 0 and server.overruns == 0


# --------------------------------------------------------------------------- happy paths
@pytest.mark.parametrize("scenario", ["Route-Constrained Planning", "Multi-stop Planning", "Weather Query"])
def test_react_playing_the_gold_trajectory_scores_like_the_oracle(env, by_scenario, oracle, scenario):
    episode_id = by_scenario[scenario]
    expected, actions = oracle(episode_id)
    with ScriptedOpenAIServer(react_script(actions, usage=(123, 7))) as server:
        record = ReActAgent(config_for(server)).run_episode(env, episode_id)
        assert_clean(server)
    result = record["result"]
    assert result["failure"] is None and result["terminated"] and not result["truncated"]
    assert result["metrics"] == expected["metrics"] and result["metrics"]["DR"] == 1.0
    n = len(actions)
    assert result["usage_by_role"] == {"react": {"input_tokens": 123 * n, "output_tokens": 7 * n, "calls": n}}
    assert (result["input_tokens"], result["output_tokens"]) == (123 * n, 7 * n)
    assert finish_record(record)["route_index"] == actions[-1]["arguments"].get("route_index")

    bodies = server.chat_bodies
    assert len(bodies) == n
    for body in bodies:  # paper defaults on every request
        assert body["temperature"] == 0.1 and body["max_tokens"] == 8192 and body["model"] == MODEL
        assert [t["function"]["name"] for t in body["tools"]] == [t["function"]["name"] for t in env.tools]
    assert server.chat_requests[0].headers["authorization"] == "Bearer test-key"
    first = bodies[0]["messages"]
    assert [m["role"] for m in first] == ["system", "user"] and env.store.get(episode_id).query in first[1]["content"]
    # every observation went back to the model as the tool message of its call
    tool_messages = [m for m in bodies[-1]["messages"] if m["role"] == "tool"]
    assert [m["content"] for m in tool_messages] == [s["observation"] for s in record["trajectory"]["steps"][:-1]]
    assert [m["tool_call_id"] for m in tool_messages] == [f"call_{i}" for i in range(n - 1)]


@pytest.mark.parametrize("scenario", ["Route-Constrained Planning", "Arrival/Departure Time Query", "Nearby Query"])
def test_plan_execute_playing_the_gold_trajectory_scores_like_the_oracle(env, by_scenario, oracle, scenario):
    episode_id = by_scenario[scenario]
    expected, actions = oracle(episode_id)
    with ScriptedOpenAIServer(plan_execute_script(actions)) as server:
        config = config_for(server, role_models={"planner": "planner-model", "reporter": "reporter-model"})
        agent = PlanExecuteAgent(config)
        record = agent.run_episode(env, episode_id)
        assert_clean(server)
    result = record["result"]
    assert result["failure"] is None and result["terminated"]
    assert result["metrics"] == expected["metrics"]
    labels = actions[-1]["arguments"]["plan"]
    worker_calls = 1 + len(labels)
    assert result["usage_by_role"] == {
        "planner": {"input_tokens": 300, "output_tokens": 30, "calls": 1},
        "worker": {"input_tokens": 200 * worker_calls, "output_tokens": 20 * worker_calls, "calls": worker_calls},
        "reporter": {"input_tokens": 400, "output_tokens": 40, "calls": 1}}
    assert result["input_tokens"] == 300 + 200 * worker_calls + 400
    assert result["model"] == "planner=planner-model,worker=scripted-model,reporter=reporter-model"
    finish = finish_record(record)
    oracle_finish = actions[-1]["arguments"]
    for key in ("answer", "intent", "slots", "plan", "route_index"):
        assert finish[key] == oracle_finish.get(key), key

    bodies = server.chat_bodies
    assert [b["model"] for b in bodies] == ["planner-model"] + [MODEL] * worker_calls + ["reporter-model"]
    assert "tools" not in bodies[0] and "tools" not in bodies[-1]
    worker_tools = {t["function"]["name"] for t in bodies[1]["tools"]}
    assert "finish" not in worker_tools and "driving_route" in worker_tools
    # the reporter saw every observation
    for step in record["trajectory"]["steps"][:-1]:
        assert step["observation"][:200] in bodies[-1]["messages"][-1]["content"]
    roles = {m.get("agent_role") for m in record["trajectory"]["messages"]}
    assert roles == {"planner", "worker", "reporter"}
    # one shared first message (map tools and the task) for every role: a prefix cache reads it once
    firsts = {json.dumps(b["messages"][0], ensure_ascii=False) for b in bodies}
    assert len(firsts) == 1 and bodies[0]["messages"][0]["role"] == "system"
    assert env.store.get(episode_id).query in bodies[0]["messages"][0]["content"]
    assert "$" not in "".join(m["content"] for b in bodies for m in b["messages"] if isinstance(m.get("content"), str))


# --------------------------------------------------------------------------- malformed tool calls
MALFORMED = [
    (tool_call("query_poi", '{"keywords": "大石'), "invalid_json"),
    (tool_call("driving_route", {"origin": "somewhere", "destination": "116.4,39.9"}), "schema_error"),
    (tool_call("teleport", {"to": "home"}), "unknown_tool"),
]


@pytest.mark.parametrize("bad_call,error_type", MALFORMED, ids=[e for _, e in MALFORMED])
def test_react_feeds_malformed_calls_back_and_continues(env, by_scenario, oracle, bad_call, error_type):
    episode_id = by_scenario["Point-to-Point Planning"]
    expected, actions = oracle(episode_id)
    script = [tool_turn({**bad_call, "id": "bad_0"})] + react_script(actions)
    with ScriptedOpenAIServer(script) as server:
        record = ReActAgent(config_for(server)).run_episode(env, episode_id)
        assert_clean(server)
    result = record["result"]
    assert result["failure"] is None and result["terminated"]
    assert error_types(record)[0] == error_type and error_types(record)[1:] == [None] * len(actions)
    fed_back = server.chat_bodies[1]["messages"][-1]
    assert fed_back["role"] == "tool" and fed_back["tool_call_id"] == "bad_0"
    assert json.loads(fed_back["content"])["error"]["type"] == error_type
    assert result["metrics"]["DR"] == 1.0 and result["metrics"]["FPR"] == expected["metrics"]["FPR"]
    assert result["steps"] == len(actions) + 1


@pytest.mark.parametrize("bad_call,error_type", MALFORMED, ids=[e for _, e in MALFORMED])
def test_plan_execute_worker_sees_malformed_calls_as_errors(env, by_scenario, oracle, bad_call, error_type):
    episode_id = by_scenario["Point-to-Point Planning"]
    expected, actions = oracle(episode_id)
    script = plan_execute_script(actions)
    script.insert(1, tool_turn({**bad_call, "id": "bad_0"}))  # the worker's first turn goes wrong
    with ScriptedOpenAIServer(script) as server:
        record = PlanExecuteAgent(config_for(server)).run_episode(env, episode_id)
        assert_clean(server)
    assert record["result"]["failure"] is None and record["result"]["terminated"]
    assert error_types(record)[0] == error_type
    fed_back = server.chat_bodies[2]["messages"][-1]
    assert fed_back["tool_call_id"] == "bad_0" and json.loads(fed_back["content"])["error"]["type"] == error_type
    assert record["result"]["metrics"]["FPR"] == expected["metrics"]["FPR"]


def test_rejected_finish_is_fed_back_and_the_model_can_retry(env, by_scenario, oracle):
    episode_id = by_scenario["Weather Query"]
    _, actions = oracle(episode_id)
    bad_finish = finish_turn({"answer": "晴", "route_index": "first"})  # route_index must be an integer
    script = react_script(actions[:-1]) + [bad_finish] + react_script(actions[-1:])
    with ScriptedOpenAIServer(script) as server:
        record = ReActAgent(config_for(server)).run_episode(env, episode_id)
        assert_clean(server)
    assert error_types(record)[-2] == "schema_error" and record["result"]["terminated"]


def test_plain_text_reply_becomes_the_answer(env, by_scenario):
    episode_id = by_scenario["Weather Query"]
    with ScriptedOpenAIServer([text_turn("<think>no tools needed</think>今天晴，气温20℃。")]) as server:
        record = ReActAgent(config_for(server)).run_episode(env, episode_id)
        assert_clean(server)
    assert record["result"]["terminated"] and record["result"]["steps"] == 1
    assert finish_record(record)["answer"] == "今天晴，气温20℃。"
    assert record["result"]["metrics"]["TS_P"] == 0.0  # no tool was called


def test_worker_finish_is_intercepted_and_last_action_kept_for_finish(built_dir, by_scenario, oracle):
    small = MobilityEnv(data=built_dir, max_steps=4)
    episode_id = by_scenario["Multi-stop Planning"]
    _, actions = oracle(episode_id)
    calls = [tool_call(a["name"], a["arguments"], f"c{i}") for i, a in enumerate(actions[:-1])]
    plan = {"intent": "Multi-stop Planning", "slots": {}, "steps": [{"step": "locate", "goal": "all"}]}
    script = [text_turn(json.dumps(plan)),
              tool_turn(tool_call("finish", {"answer": "too early"}, "f0")),
              tool_turn(*calls, tool_call(actions[0]["name"], actions[0]["arguments"], "extra")),
              text_turn(json.dumps({"answer": "路线如下", "route_index": 0}))]
    assert len(calls) + 1 > 3  # more calls than the 3 actions the worker may spend
    with ScriptedOpenAIServer(script) as server:
        record = PlanExecuteAgent(config_for(server)).run_episode(small, episode_id)
        assert_clean(server)
    result = record["result"]
    assert result["terminated"] and not result["truncated"] and result["steps"] == 4
    assert finish_record(record)["answer"] == "路线如下"
    worker_messages = [m for m in record["trajectory"]["messages"] if m.get("agent_role") == "worker"]
    tool_errors = [json.loads(m["content"]).get("error", {}).get("type")
                   for m in worker_messages if m["role"] == "tool"]
    assert tool_errors[0] == "not_allowed" and tool_errors[-1] == "budget_exhausted"


def test_unreadable_plan_goes_on_without_declared_plan(env, by_scenario, oracle):
    episode_id = by_scenario["Weather Query"]
    _, actions = oracle(episode_id)
    script = [text_turn("I would check the weather."),
              tool_turn(*(tool_call(a["name"], a["arguments"], f"c{i}") for i, a in enumerate(actions[:-1]))),
              text_turn("done"), text_turn("今天多云")]
    with ScriptedOpenAIServer(script) as server:
        record = PlanExecuteAgent(config_for(server)).run_episode(env, episode_id)
        assert_clean(server)
    finish = finish_record(record)
    assert record["result"]["terminated"] and finish["answer"] == "今天多云"
    assert finish["intent"] is None and finish["plan"] is None and finish["slots"] is None


# --------------------------------------------------------------------------- server faults
def test_429_is_retried_after_retry_after(env, by_scenario, oracle):
    episode_id = by_scenario["Weather Query"]
    expected, actions = oracle(episode_id)
    with ScriptedOpenAIServer([rate_limited(retry_after=0.3)] + react_script(actions)) as server:
        record = ReActAgent(config_for(server)).run_episode(env, episode_id)
        assert_clean(server)
    assert record["result"]["failure"] is None and record["result"]["metrics"] == expected["metrics"]
    requests = server.chat_requests
    assert len(requests) == len(actions) + 1
    assert requests[1].at - requests[0].at >= 0.3  # waited as told, not just the 0.01 s backoff
    assert requests[1].body == requests[0].body  # the same request was resent
    assert record["result"]["usage_by_role"]["react"]["calls"] == len(actions)


def test_repeated_500s_fail_the_episode_not_the_run(tmp_path, built_dir, by_scenario, oracle):
    failing, fine = by_scenario["Weather Query"], by_scenario["POI Query"]
    expected, actions = oracle(fine)
    script = [text_turn("pong")] + [server_error()] * 3 + react_script(actions)  # the runner's preflight first
    with ScriptedOpenAIServer(script) as server:
        config = config_for(server)  # max_retries=2: three attempts, then give up (the breaker needs 8)
        run = RunConfig(out_dir=tmp_path / "run", data=str(built_dir), episode_ids=[failing, fine], progress=False)
        run_local(lambda: ReActAgent(config), run)
        assert_clean(server)
    results = {r["episode_id"]: r for r in read_results(tmp_path / "run" / "results.jsonl")}
    broken = results[failing]
    assert broken["failure"]["type"] == "llm_unavailable" and "HTTP 500" in broken["failure"]["message"]
    assert broken["metrics"]["DR"] == 0.0 and broken["truncated"] and not broken["terminated"]
    assert broken["input_tokens"] == 0
    assert results[fine]["failure"] is None and results[fine]["metrics"] == expected["metrics"]
    assert len(server.chat_requests) == 1 + 3 + len(actions)
    assert server.chat_bodies[0]["max_tokens"] == 1  # the preflight's 1-token request
    assert broken["model_calls"] == {"requests": 3, "retries": 2, "timeouts": 0, "busy": 0, "cutoffs": 0,
                                     "wall_s": broken["model_calls"]["wall_s"], "tools_offered": 0, "tool_calls": 0}


def test_a_timeout_is_retried(env, by_scenario, oracle):
    episode_id = by_scenario["Weather Query"]
    expected, actions = oracle(episode_id)
    script = [delayed(text_turn("too late"), 2.0)] + react_script(actions)
    with ScriptedOpenAIServer(script) as server:
        record = ReActAgent(config_for(server, timeout_s=0.3)).run_episode(env, episode_id)
        assert_clean(server)
    assert record["result"]["failure"] is None and record["result"]["metrics"] == expected["metrics"]
    assert len(server.chat_requests) == len(actions) + 1


def test_timeouts_every_time_fail_with_llm_unavailable(env, by_scenario):
    episode_id = by_scenario["Weather Query"]
    with ScriptedOpenAIServer([delayed(text_turn("too late"), 2.0)] * 2) as server:
        record = PlanExecuteAgent(config_for(server, timeout_s=0.3, max_retries=1)).run_episode(env, episode_id)
        assert_clean(server)
    failure = record["result"]["failure"]
    assert failure["type"] == "llm_unavailable" and "0.3 s request deadline" in failure["message"]
    assert record["result"]["metrics"]["DR"] == 0.0 and record["result"]["steps"] == 0
    assert record["result"]["model_calls"]["timeouts"] == 2


@pytest.mark.parametrize("agent_class", [ReActAgent, PlanExecuteAgent])
def test_context_overflow_fails_at_once(env, by_scenario, oracle, agent_class):
    episode_id = by_scenario["Point-to-Point Planning"]
    _, actions = oracle(episode_id)
    if agent_class is ReActAgent:
        script = react_script(actions[:1]) + [context_overflow()]
    else:
        script = plan_execute_script(actions)[:2] + [context_overflow()]
    with ScriptedOpenAIServer(script) as server:
        record = agent_class(config_for(server)).run_episode(env, episode_id)
        assert_clean(server)
    result = record["result"]
    assert result["failure"]["type"] == "context_overflow" and "maximum context length" in result["failure"]["message"]
    assert len(server.chat_requests) == len(script)  # not retried
    assert result["metrics"]["DR"] == 0.0
    assert result["steps"] == (1 if agent_class is ReActAgent else len(actions) - 1)
    assert result["input_tokens"] > 0  # the turns before the overflow are still counted


def test_other_client_errors_are_rejections_not_retried(env, by_scenario):
    with ScriptedOpenAIServer([bad_request("tools are not supported by this model")]) as server:
        record = ReActAgent(config_for(server)).run_episode(env, by_scenario["POI Query"])
        assert_clean(server)
    failure = record["result"]["failure"]
    assert failure["type"] == "llm_request_rejected" and "tool_mode='json'" in failure["message"]
    assert len(server.chat_requests) == 1


# --------------------------------------------------------------------------- json mode, usage, config
@pytest.mark.parametrize("language,label", [("en", "Observation:"), ("zh", "工具结果：")])
def test_json_in_text_mode(env, by_scenario, oracle, language, label):
    episode_id = by_scenario["Nearby Query"]
    expected, actions = oracle(episode_id)
    first = actions[0]
    script = [text_turn('{"name": "query_poi", "arguments": {"keywords": "飞来'),  # cut off: invalid_json
              text_turn("```json\n" + json.dumps(first, ensure_ascii=False) + "\n```")]
    script += [text_turn(json.dumps(a, ensure_ascii=False)) for a in actions[1:]]
    with ScriptedOpenAIServer(script) as server:
        record = ReActAgent(config_for(server, tool_mode="json", language=language)).run_episode(env, episode_id)
        assert_clean(server)
    result = record["result"]
    assert result["failure"] is None and result["terminated"]
    assert error_types(record) == ["invalid_json"] + [None] * len(actions)
    assert result["metrics"]["FPR"] == expected["metrics"]["FPR"] and result["metrics"]["DR"] == 1.0
    bodies = server.chat_bodies
    assert all("tools" not in b for b in bodies)
    system = bodies[0]["messages"][0]["content"]
    assert all(f"- {t['function']['name']}(" in system for t in env.tools)
    assert {m["role"] for b in bodies for m in b["messages"]} <= {"system", "user", "assistant"}
    observation = bodies[2]["messages"][-1]
    assert observation["role"] == "user" and observation["content"].startswith(label)
    assert record["trajectory"]["steps"][1]["observation"] in observation["content"]


def test_plan_execute_in_json_mode(env, by_scenario, oracle):
    episode_id = by_scenario["Weather Query"]
    expected, actions = oracle(episode_id)
    finish = actions[-1]["arguments"]
    plan = {"intent": finish["intent"], "slots": finish["slots"],
            "steps": [{"step": s, "goal": s} for s in finish["plan"]]}
    script = [text_turn(json.dumps(plan, ensure_ascii=False))]
    script += [text_turn(json.dumps(a, ensure_ascii=False)) for a in actions[:-1]]
    script += [text_turn("done") for _ in finish["plan"]]
    script.append(text_turn(json.dumps({"answer": finish["answer"], "route_index": None}, ensure_ascii=False)))
    with ScriptedOpenAIServer(script) as server:
        record = PlanExecuteAgent(config_for(server, tool_mode="json")).run_episode(env, episode_id)
        assert_clean(server)
    assert record["result"]["metrics"] == expected["metrics"]
    bodies = server.chat_bodies
    assert all("tools" not in b for b in bodies)
    worker_system = bodies[1]["messages"][0]["content"]
    assert "- weather_query(" in worker_system and "- finish(" not in worker_system


def test_missing_usage_counts_zero_tokens(env, by_scenario, oracle):
    episode_id = by_scenario["Weather Query"]
    _, actions = oracle(episode_id)
    script = [tool_turn(tool_call(a["name"], a["arguments"], f"c{i}"), usage=None) for i, a in enumerate(actions)]
    with ScriptedOpenAIServer(script) as server:
        result = ReActAgent(config_for(server)).run_episode(env, episode_id)["result"]
    assert result["usage_by_role"] == {"react": {"input_tokens": 0, "output_tokens": 0, "calls": len(actions)}}


def test_sampling_settings_and_model_discovery(env, by_scenario):
    with ScriptedOpenAIServer([text_turn("好的")]) as server:
        config = config_for(server, model=None, temperature=0.7, max_tokens=256, seed=3,
                            extra_body={"chat_template_kwargs": {"enable_thinking": False}})
        agent = ReActAgent(config)
        record = agent.run_episode(env, by_scenario["POI Query"])
    assert [(r.method, r.path) for r in server.requests] == [("GET", "/v1/models"), ("POST", "/v1/chat/completions")]
    body = server.chat_bodies[0]
    assert (body["model"], body["temperature"], body["max_tokens"], body["seed"]) == (MODEL, 0.7, 256, 3)
    assert body["chat_template_kwargs"] == {"enable_thinking": False}
    assert record["result"]["model"] == MODEL


def test_config_sources_and_presets(tmp_path):
    models = tmp_path / "models.toml"
    models.write_text(
        'default = "local"\n'
        '[presets.local]\nmodel = "qwen3"\nbase_url = "http://127.0.0.1:9/v1"\ntool_mode = "json"\n'
        '[presets.local.roles]\nplanner = "qwen3-big"\n'
        '[presets.hosted]\nmodel = "gpt-x"\napi_key_env = "HOSTED_KEY"\ntemperature = 0.0\n', encoding="utf-8")
    environ = {"OPENAI_BASE_URL": "http://env/v1", "OPENAI_API_KEY": "env-key", "HOSTED_KEY": "secret"}

    defaults = LLMConfig.from_sources(environ={})
    assert (defaults.temperature, defaults.max_tokens, defaults.max_steps, defaults.language,
            defaults.tool_mode) == (0.1, 8192, 10, "zh", "native")
    env_only = LLMConfig.from_sources(environ=environ)
    assert (env_only.base_url, env_only.api_key) == ("http://env/v1", "env-key")
    local = LLMConfig.from_sources(models_file=models, environ=environ)  # the file's default preset
    assert (local.model, local.base_url, local.api_key, local.tool_mode) == \
        ("qwen3", "http://127.0.0.1:9/v1", "env-key", "json")
    assert local.model_for("planner") == "qwen3-big" and local.model_for("worker") == "qwen3"
    hosted = LLMConfig.from_sources(models_file=models, preset="hosted", environ=environ)
    assert (hosted.api_key, hosted.temperature, hosted.base_url) == ("secret", 0.0, "http://env/v1")
    args = {"model": "cli-model", "base_url": None, "temperature": 0.2, "worker_model": "w", "max_steps": 10}
    cli = LLMConfig.from_sources(args=args, models_file=models, preset="local", environ=environ)
    assert (cli.model, cli.base_url, cli.temperature) == ("cli-model", "http://127.0.0.1:9/v1", 0.2)
    assert cli.role_models == {"planner": "qwen3-big", "worker": "w"}

    with pytest.raises(ConfigError, match="unknown preset 'nope'.*local, hosted"):
        LLMConfig.from_sources(models_file=models, preset="nope", environ=environ)
    with pytest.raises(ConfigError, match=r"\$HOSTED_KEY"):
        LLMConfig.from_sources(models_file=models, preset="hosted", environ={})
    (tmp_path / "bad.toml").write_text('[presets.a]\nmodle = "x"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="unknown key.*modle"):
        LLMConfig.from_sources(models_file=tmp_path / "bad.toml", environ={})
    with pytest.raises(ConfigError, match="not found"):
        LLMConfig.from_sources(models_file=tmp_path / "missing.toml", environ={})
    with pytest.raises(ConfigError, match="tool_mode"):
        LLMConfig(tool_mode="xml")


def test_client_survives_pickling_for_ray_workers():
    import pickle

    client = LLMClient(LLMConfig(model="m", base_url="http://127.0.0.1:9/v1"))
    _ = client.openai  # build the openai client, which holds sockets and locks
    copy = pickle.loads(pickle.dumps(ReActAgent(LLMConfig(model="m"), client=client)))
    assert copy.client.config.model == "m" and copy.client.openai is not None


# --------------------------------------------------------------------------- prompts and parsing
@pytest.mark.parametrize("language", ["en", "zh"])
def test_prompts_render_with_every_scenario_and_step_label(language):
    values = {"max_steps": 10, "tools": "TOOLS", "query": "Q", "context": "C", "index": 1, "total": 2, "step": "s",
              "goal": "g", "task": "T", "plan": "P", "evidence": "E", "notes": "N"}
    for name in PROMPT_NAMES:
        text = render_prompt(name, language, **values)
        assert "$" not in text and text
    for name in ("react_system", "planner"):
        text = render_prompt(name, language, **values)
        assert all(s in text for s in SCENARIOS) and all(step in text for step in ATOMIC_STEPS)
        assert "route_index" in text or name == "planner"


def test_text_actions_are_read_from_tags_fences_and_bare_json():
    tagged = parse_text_actions('<tool_call>{"name": "weather_query", "arguments": {"city": "北京市"}}</tool_call>')
    assert [(c.name, json.loads(c.arguments)) for c in tagged] == [("weather_query", {"city": "北京市"})]
    fenced = parse_text_actions('I will look.\n```json\n{"name": "query_poi", "parameters": {"keywords": "x"}}\n```')
    assert fenced[0].name == "query_poi" and json.loads(fenced[0].action)["arguments"] == {"keywords": "x"}
    broken = parse_text_actions('{"name": "query_poi", "arguments": {"keywords": "飞来')
    assert broken[0].name is None and broken[0].action.startswith('{"name"')  # the env will say invalid_json
    assert parse_text_actions("坐标是 {116.4, 39.9}，全程 3 公里。") == []  # braces in prose are no call
    assert parse_text_actions('Calling {"name": "weather_query", "arguments": {"city": "x"}} now')[0].name \
        == "weather_query"
    assert parse_text_actions("今天晴，记得带伞。") == []
    assert parse_text_actions('{"answer": "晴"}') == []  # JSON without a tool name is not a call


def test_a_step_spent_only_on_tool_calls_still_leaves_a_note(env, by_scenario):
    """A worker that uses every turn of a step on tool calls gets a note naming them, not "-"."""
    episode_id = by_scenario["Weather Query"]
    plan = {"intent": "Weather Query", "slots": {}, "steps": [{"step": "weather_query", "goal": "the weather"}]}
    calls = [tool_turn(tool_call("weather_query", {"city": f"城市{i}"}, f"c{i}")) for i in range(3)]
    report = text_turn(json.dumps({"answer": "不知道", "route_index": None}, ensure_ascii=False))
    with ScriptedOpenAIServer([text_turn(json.dumps(plan))] + calls + [report]) as server:
        record = PlanExecuteAgent(config_for(server), worker_turns_per_step=3).run_episode(env, episode_id)
        assert_clean(server)
    reporter_input = server.chat_bodies[-1]["messages"][-1]["content"]
    assert "1. weather_query: (no summary; called weather_query, weather_query, weather_query)" in reporter_input
    assert record["result"]["failure"] is None


def test_a_run_records_the_model_the_server_reported(tmp_path, built_dir, by_scenario, oracle):
    """No --model: the preflight asks GET /models and run.json records what the server serves (not null); the
    identity keeps None (the server's only model), so a resume against the same server compares as before."""
    episode_id = by_scenario["POI Query"]
    _, actions = oracle(episode_id)
    with ScriptedOpenAIServer([text_turn("pong")] + react_script(actions)) as server:
        config = config_for(server, model=None)
        run = RunConfig(out_dir=tmp_path / "run", data=str(built_dir), episode_ids=[episode_id], progress=False,
                        meta={"agent": "react", "model": None},
                        identity={"agent": "react", "model": None})  # as the CLI gives it (run_identity_of)
        run_local(lambda: ReActAgent(config), run)
    info = json.loads((tmp_path / "run" / "run.json").read_text(encoding="utf-8"))
    assert info["model"] == MODEL and info["model_source"] == "server"
    assert info["identity"]["model"] is None


def test_no_server_and_no_key_is_one_clear_error():
    client = LLMClient(LLMConfig(model="m", base_url=None, api_key=None))
    with pytest.raises(ConfigError, match="OPENAI_BASE_URL.*OPENAI_API_KEY"):
        client.preflight(("react",))
