"""LLM agents under faults, against a real OpenAI-compatible server on 127.0.0.1.

Every fault is real on the wire (``tests/openai_server.py``): a server that never answers,
one that trickles a byte at a time, non-JSON bodies, empty ``choices``, 5 MB replies, 500s,
TCP resets, rejected keys, replies cut at ``max_tokens``. Each must end as a recorded
failure of the right kind (or, for a dead endpoint, a typed error that stops the run), with
bounded storage. Deadlines are a fraction of a second; the only timing check is a generous
"it returned" guard, far longer than the deadline and far shorter than the fault would last
without one.
"""

from __future__ import annotations

import json
import pickle
import socket
import threading
from pathlib import Path
from typing import Any, Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mobility_agents.base import Agent, FatalAgentError
from mobility_agents.llm.client import (EndpointDown, EndpointError, EndpointProtocolError, EndpointRejected, LLMClient,
                                        LLMConfig, parse_text_actions)
from mobility_agents.baselines.mobilitybench.oracle import OracleAgent
from mobility_agents.llm.plan_execute import PlanExecuteAgent, parse_report, worker_note
from mobility_agents.llm.react import ReActAgent
from mobility_agents.baselines.mobilitybench.rule import RuleAgent
from mobility_env.mobilitybench.env import MobilityEnv
from mobility_env.errors import ConfigError, MobilityEnvError
from openai_server import (MODEL, ScriptedOpenAIServer, bad_request, connection_reset, cut_off, empty_choices,
                           finish_turn, garbage, gold_actions, hang, huge_reply, plan_execute_script, rate_limited,
                           raw_payload, react_script, server_error, text_turn, tool_call, trickle)

FAST = {"timeout_s": 2.0, "max_retries": 1, "backoff_s": 0.01, "backoff_max_s": 0.05, "preflight_timeout_s": 2.0}
GUARD_S = 20.0  # "it returned": each fault below would last 30 s or forever without its deadline
SECRET = "sk-test-0123456789-SECRET"


def config_for(server: ScriptedOpenAIServer | None, **changes: Any) -> LLMConfig:
    base_url = server.base_url if server is not None else changes.pop("base_url")
    return LLMConfig(**{"model": MODEL, "base_url": base_url, "api_key": "test-key", **FAST, **changes})


def returns(fn: Callable[[], Any]) -> Any:
    """``fn()`` run on a thread that must finish within :data:`GUARD_S`; its value or error."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # handed to the test below
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(GUARD_S)
    assert not thread.is_alive(), f"still waiting after {GUARD_S} s: the deadline did not hold"
    if "error" in box:
        raise box["error"]
    return box["value"]


def closed_port_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"  # nothing listens there any more: connection refused


@pytest.fixture(scope="module")
def env(built_dir: Path) -> MobilityEnv:
    return MobilityEnv(data=built_dir)


@pytest.fixture(scope="module")
def weather(env: MobilityEnv) -> str:
    return next(e for e in env.episode_ids if env.store.get(e).task_scenario == "Weather Query")


@pytest.fixture(scope="module")
def weather_gold(env: MobilityEnv, weather: str) -> tuple[dict, list]:
    return OracleAgent().run_episode(env, weather)["result"], gold_actions(env, weather)


def result_of(record: dict) -> dict:
    return record["result"]


# --------------------------------------------------------------------------- 1. deadlines
FAULTS = [  # (name, turn, failure kind, counted as timeouts)
    ("hang", hang(), "llm_unavailable", True),
    ("trickle", trickle(text_turn("晴"), interval_s=0.1), "llm_unavailable", True),
    ("garbage", garbage(), "llm_bad_response", False),
    ("empty-choices", empty_choices(), "llm_bad_response", False),
    ("not-a-completion", raw_payload({"object": "list", "data": []}), "llm_bad_response", False),
    ("http-500", server_error(), "llm_unavailable", False),
    ("connection-reset", connection_reset(), "llm_unavailable", False),
    # a reply nested 200,000 levels deep: no JSON reader of it finishes; a bad reply, retried like the others
    ("nested-200k", garbage('{"a":' * 200_000 + "1" + "}" * 200_000), "llm_bad_response", False),
]


@pytest.mark.parametrize("agent_class", [ReActAgent, PlanExecuteAgent])
@pytest.mark.parametrize("name,turn,kind,timed_out", FAULTS, ids=[f[0] for f in FAULTS])
def test_each_server_fault_ends_as_a_recorded_failure(env, weather, agent_class, name, turn, kind, timed_out):
    # max_retries=1: the fault twice, then the episode's recorded failure
    with ScriptedOpenAIServer([turn, turn]) as server:
        agent = agent_class(config_for(server, timeout_s=0.6))
        record = returns(lambda: agent.run_episode(env, weather))
        assert server.remaining == 0 and server.overruns == 0
    result = result_of(record)
    assert result["failure"]["type"] == kind, result["failure"]
    assert result["steps"] == 0 and result["metrics"]["DR"] == 0.0 and result["truncated"]
    calls = result["model_calls"]
    assert (calls["requests"], calls["retries"], calls["timeouts"]) == (2, 1, 2 if timed_out else 0)
    if timed_out:
        assert "0.6 s request deadline" in result["failure"]["message"]


def test_a_trickle_is_cut_by_the_total_deadline_not_per_read(env, weather):
    # Every byte comes within 0.1 s, far inside any per-read timeout; the whole reply would
    # take ~40 s. Only the 0.5 s total deadline can stop it, and it must stop it.
    with ScriptedOpenAIServer([trickle(text_turn("晴" * 10), interval_s=0.1)]) as server:
        agent = ReActAgent(config_for(server, timeout_s=0.5, max_retries=0))
        result = result_of(returns(lambda: agent.run_episode(env, weather)))
    assert result["failure"]["type"] == "llm_unavailable" and result["model_calls"]["timeouts"] == 1


def test_after_a_timeout_the_next_request_works(env, weather, weather_gold):
    expected, actions = weather_gold
    with ScriptedOpenAIServer([trickle(interval_s=0.05)] + react_script(actions)) as server:
        agent = ReActAgent(config_for(server, timeout_s=0.5))
        result = result_of(returns(lambda: agent.run_episode(env, weather)))
        assert server.remaining == 0
    assert result["failure"] is None and result["metrics"] == expected["metrics"]
    assert result["model_calls"]["timeouts"] == 1 and result["model_calls"]["retries"] == 1


@pytest.mark.parametrize("agent_class", [ReActAgent, PlanExecuteAgent])
def test_the_episode_deadline_ends_the_episode_as_deadline(env, weather, weather_gold, agent_class):
    _, actions = weather_gold
    first = react_script(actions)[:1] if agent_class is ReActAgent else plan_execute_script(actions)[:2]
    with ScriptedOpenAIServer(first + [hang()]) as server:
        agent = agent_class(config_for(server, timeout_s=60, episode_timeout_s=0.8))
        result = result_of(returns(lambda: agent.run_episode(env, weather)))
    assert result["failure"]["type"] == "deadline" and "episode_timeout_s=0.8" in result["failure"]["message"]
    assert result["steps"] == len(actions) - 1 and result["metrics"]["DR"] == 0.0
    assert result["model_calls"]["timeouts"] == 0  # cut by the episode's deadline, not a request's
    assert result["input_tokens"] > 0  # the turns before the deadline still count


def test_the_episode_deadline_is_not_slept_through_on_backoff(env, weather):
    sleeps: list[float] = []
    with ScriptedOpenAIServer([server_error()]) as server:
        config = config_for(server, max_retries=3, backoff_s=30.0, backoff_max_s=30.0, episode_timeout_s=5.0)
        agent = ReActAgent(config, client=LLMClient(config, sleep=sleeps.append))
        result = result_of(agent.run_episode(env, weather))
    assert result["failure"]["type"] == "deadline" and sleeps == []  # 30 s of backoff would pass the deadline


def test_deadline_settings_are_validated():
    for bad in ({"timeout_s": 0}, {"connect_timeout_s": -1}, {"episode_timeout_s": 0}, {"breaker_failures": 0},
                {"max_reply_chars": 0}, {"tool_choice": "always"}, {"preflight_timeout_s": True}):
        with pytest.raises(ConfigError, match=next(iter(bad))):
            LLMConfig(**bad)
    assert LLMConfig(episode_timeout_s=None).episode_timeout_s is None  # no episode limit
    defaults = LLMConfig()
    assert (defaults.timeout_s, defaults.connect_timeout_s, defaults.episode_timeout_s, defaults.preflight_timeout_s,
            defaults.breaker_failures, defaults.max_reply_chars, defaults.tool_choice) == \
        (300.0, 10.0, 1800.0, 60.0, 8, 262_144, "auto")
    args = {"timeout": 12.5, "episode_timeout": 99, "tool_choice": "required", "breaker_failures": 3}
    config = LLMConfig.from_sources(args=args, environ={})
    assert (config.timeout_s, config.episode_timeout_s, config.tool_choice, config.breaker_failures) == \
        (12.5, 99, "required", 3)


# --------------------------------------------------------------------------- 2a. preflight
def test_preflight_sends_one_tiny_request_per_distinct_model():
    with ScriptedOpenAIServer([text_turn("p"), text_turn("p")]) as server:
        config = config_for(server, role_models={"planner": "big-model"}, tool_choice="required", seed=7)
        info = PlanExecuteAgent(config).preflight()
        assert server.remaining == 0 and server.protocol_errors == []
    assert info["models"] == {"planner": "big-model", "worker": MODEL, "reporter": MODEL}
    bodies = server.chat_bodies
    assert [b["model"] for b in bodies] == ["big-model", MODEL]
    for body in bodies:  # the run's request shape, 1 token
        assert body["max_tokens"] == 1 and body["tool_choice"] == "required" and body["seed"] == 7
        assert [t["function"]["name"] for t in body["tools"]] == ["ping"]


def test_preflight_discovers_the_served_model_and_passes_json_mode_without_tools():
    with ScriptedOpenAIServer([text_turn("p")]) as server:
        info = ReActAgent(config_for(server, model=None, tool_mode="json")).preflight()
    assert info["models"] == {"react": MODEL}
    assert [(r.method, r.path) for r in server.requests] == [("GET", "/v1/models"), ("POST", "/v1/chat/completions")]
    assert "tools" not in server.chat_bodies[0] and "tool_choice" not in server.chat_bodies[0]


def test_preflight_passes_a_rate_limited_endpoint():
    with ScriptedOpenAIServer([rate_limited(1.0)]) as server:
        assert ReActAgent(config_for(server)).preflight()["models"] == {"react": MODEL}


PREFLIGHT_FAULTS = [  # (name, turns, error type, message fragment)
    ("silent", [hang()], EndpointDown, "preflight_timeout_s"),
    ("trickle", [trickle(interval_s=0.05)], EndpointDown, "no answer"),
    ("http-503", [server_error(503)], EndpointDown, "HTTP 503"),
    ("reset", [connection_reset()], EndpointDown, "cannot connect"),
    ("garbage", [garbage()], EndpointProtocolError, "not JSON"),
    ("nested-200k", [garbage('{"a":' * 200_000 + "1" + "}" * 200_000)], EndpointProtocolError, "nested too deep"),
    ("not-a-completion", [raw_payload({"hello": "world"})], EndpointProtocolError, "no 'choices'"),
    ("empty-choices", [empty_choices()], EndpointProtocolError, "'choices' is empty"),
    ("tools-refused", [bad_request('"auto" tool choice requires --enable-auto-tool-choice')], EndpointRejected,
     "tool_mode='json'"),
]


@pytest.mark.parametrize("name,turns,error,fragment", PREFLIGHT_FAULTS, ids=[f[0] for f in PREFLIGHT_FAULTS])
def test_preflight_raises_a_typed_error(name, turns, error, fragment):
    with ScriptedOpenAIServer(turns) as server:
        agent = ReActAgent(config_for(server, preflight_timeout_s=0.5))
        with pytest.raises(error, match=fragment) as raised:
            returns(agent.preflight)
    assert isinstance(raised.value, FatalAgentError) and isinstance(raised.value, MobilityEnvError)
    assert raised.value.base_url == server.base_url


def test_preflight_on_an_unreachable_endpoint():
    agent = PlanExecuteAgent(config_for(None, base_url=closed_port_url()))
    with pytest.raises(EndpointDown, match="cannot connect.*(?i:refused)"):
        returns(agent.preflight)


def test_preflight_rejects_a_wrong_key_without_showing_it():
    with ScriptedOpenAIServer([text_turn("p")], api_key="right-key") as server:
        with pytest.raises(EndpointRejected, match="HTTP 401.*check the API key") as raised:
            ReActAgent(config_for(server, api_key=SECRET)).preflight()
        assert ReActAgent(config_for(server, api_key="right-key")).preflight()["models"] == {"react": MODEL}
    assert SECRET not in str(raised.value)


def test_agents_without_a_model_have_a_no_op_preflight():
    assert RuleAgent().preflight() is None and OracleAgent().preflight() is None and Agent().preflight() is None


# --------------------------------------------------------------------------- 2b. circuit breaker
def test_the_breaker_stops_the_run_instead_of_retrying(env, weather):
    with ScriptedOpenAIServer([server_error()] * 3) as server:
        agent = ReActAgent(config_for(server, max_retries=10, breaker_failures=3))
        with pytest.raises(EndpointDown, match="3 transport-level failures in a row.*HTTP 500"):
            agent.run_episode(env, weather)
        assert len(server.chat_requests) == 3 and server.overruns == 0  # not the 11 attempts retries allow
    obs, info = env.reset(options={"episode_id": weather})  # the abandoned episode left the env usable
    assert info["episode_id"] == weather and obs


def test_the_breaker_counts_across_episodes_and_resets_on_an_answer(env, weather, weather_gold):
    expected, actions = weather_gold
    with ScriptedOpenAIServer([connection_reset()] * 2 + [server_error()]) as server:
        agent = ReActAgent(config_for(server, max_retries=1, breaker_failures=3))
        first = result_of(agent.run_episode(env, weather))  # two failures: this episode's, counted 2
        assert first["failure"]["type"] == "llm_unavailable" and "reset by peer" in first["failure"]["message"]
        with pytest.raises(EndpointDown):  # the third in a row, in the next episode
            agent.run_episode(env, weather)
        assert server.remaining == 0
    with ScriptedOpenAIServer([server_error(), react_script(actions)[0], server_error()] + react_script(actions)[1:]) \
            as server:
        agent = ReActAgent(config_for(server, max_retries=1, breaker_failures=2))
        result = result_of(agent.run_episode(env, weather))  # every answer resets the count
    assert result["failure"] is None and result["metrics"] == expected["metrics"]


def test_rate_limits_do_not_open_the_breaker(env, weather, weather_gold):
    expected, actions = weather_gold
    with ScriptedOpenAIServer([rate_limited(0.0)] * 3 + react_script(actions)) as server:
        agent = ReActAgent(config_for(server, max_retries=3, breaker_failures=2))
        result = result_of(agent.run_episode(env, weather))
    assert result["failure"] is None and result["metrics"] == expected["metrics"]
    assert result["model_calls"]["retries"] == 3


def test_a_busy_server_is_not_called_down(env, weather, weather_gold):
    """Completions time out but GET /models answers: busy (generating), not down. The breaker (2) would have
    stopped the run at the second timeout; the timeouts are counted as busy, the episode fails saying so, and the
    next episode runs once the server answers again."""
    expected, actions = weather_gold
    with ScriptedOpenAIServer([hang()] * 3 + react_script(actions)) as server:
        agent = ReActAgent(config_for(server, timeout_s=0.4, max_retries=2, breaker_failures=2))
        first = result_of(returns(lambda: agent.run_episode(env, weather)))
        second = result_of(returns(lambda: agent.run_episode(env, weather)))
    assert first["failure"]["type"] == "llm_unavailable"
    assert "busy (generating), not down" in first["failure"]["message"]
    assert first["model_calls"]["timeouts"] == 3 and first["model_calls"]["busy"] == 3
    assert second["failure"] is None and second["metrics"] == expected["metrics"]


def test_a_server_that_answers_nothing_while_it_generates_is_busy_once_it_answers(
        env, weather, weather_gold, monkeypatch):
    """llama-cpp-python serves one request at a time: while it finishes a generation the client gave up on, even
    GET /models waits. The client asks again until the server answers: busy, not down; the retry then succeeds."""
    expected, actions = weather_gold
    import time

    from mobility_agents.llm import client as client_module

    monkeypatch.setattr(client_module, "PROBE_S", 0.3)  # each GET /models waits 0.3 s, then is asked again
    with ScriptedOpenAIServer([hang()] + react_script(actions)) as server:
        server.models_busy_until = time.monotonic() + 2.2  # the hang times out at 1.5 s; /models answers at 2.2 s
        agent = ReActAgent(config_for(server, timeout_s=1.5, busy_wait_s=1.5, max_retries=1, breaker_failures=1))
        result = result_of(returns(lambda: agent.run_episode(env, weather)))
    assert result["failure"] is None and result["metrics"] == expected["metrics"]
    assert result["model_calls"]["timeouts"] == 1 and result["model_calls"]["busy"] == 1


def test_a_silent_server_is_still_down(env, weather):
    """A port that accepts and never answers anything (GET /models included): the timeouts count, the breaker
    opens."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(16)  # connections queue; nothing ever answers
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/v1"
        agent = ReActAgent(config_for(None, base_url=url, timeout_s=0.3, connect_timeout_s=0.3, busy_wait_s=0.6,
                                      max_retries=5, breaker_failures=2))
        with pytest.raises(EndpointDown, match="2 transport-level failures in a row"):
            returns(lambda: agent.run_episode(env, weather))


def test_the_gate_halves_on_busy_and_grows_back():
    from mobility_agents.llm.client import _Gate

    gate = _Gate()
    with gate, gate, gate, gate:
        gate.busy()
        assert gate.limit == 2  # half of the 4 in flight
    gate.answered()
    assert gate.limit == 3
    for _ in range(_Gate.CEILING):
        gate.answered()
    assert gate.limit is None  # lifted again


def test_a_key_rejected_mid_run_stops_the_run(env, weather):
    with ScriptedOpenAIServer([text_turn("x")], api_key="rotated") as server:
        with pytest.raises(EndpointRejected, match="HTTP 401"):
            ReActAgent(config_for(server)).run_episode(env, weather)


def test_endpoint_errors_survive_pickling_for_ray():
    for cls in (EndpointDown, EndpointRejected, EndpointProtocolError):
        copy = pickle.loads(pickle.dumps(cls("down", base_url="http://h/v1")))
        assert type(copy) is cls and str(copy) == "down" and copy.base_url == "http://h/v1"
        assert issubclass(cls, EndpointError) and issubclass(cls, FatalAgentError)


# --------------------------------------------------------------------------- 3. keys
def test_keys_never_show_in_reprs_records_or_errors(env, weather, weather_gold):
    _, actions = weather_gold
    config = config_for(None, base_url="http://127.0.0.1:9/v1", api_key=SECRET)
    client = LLMClient(config)
    for text in (repr(config), str(config), repr(client), json.dumps(config.redacted()),
                 repr(ReActAgent(config).config)):
        assert SECRET not in text
    assert "api_key='***'" in repr(config) and config.redacted()["api_key"] == "***"
    with ScriptedOpenAIServer([bad_request(f"Incorrect API key provided: {SECRET}")] + react_script(actions),
                              api_key=SECRET) as server:
        agent = ReActAgent(config_for(server, api_key=SECRET))
        failed = agent.run_episode(env, weather)
        played = agent.run_episode(env, weather)
        assert server.chat_requests[-1].headers["authorization"] == f"Bearer {SECRET}"
    assert failed["result"]["failure"]["type"] == "llm_request_rejected"
    assert "Incorrect API key provided: ***" in failed["result"]["failure"]["message"]
    for record in (failed, played):
        assert SECRET not in json.dumps(record, ensure_ascii=False)


def test_models_file_names_where_the_key_is_never_the_key(tmp_path):
    (tmp_path / "keys").mkdir()
    (tmp_path / "keys" / "local.key").write_text(f"  {SECRET}\n", encoding="utf-8")
    models = tmp_path / "models.toml"
    models.write_text('[presets.local]\nmodel = "m"\napi_key_file = "keys/local.key"\n'
                      '[presets.env]\nmodel = "m"\napi_key_env = "MY_KEY"\n'
                      '[presets.both]\napi_key_env = "MY_KEY"\napi_key_file = "keys/local.key"\n'
                      '[presets.inline]\nmodel = "m"\napi_key = "sk-in-the-file"\n', encoding="utf-8")
    assert LLMConfig.from_sources(models_file=models, preset="local", environ={}).api_key == SECRET  # relative to file
    assert LLMConfig.from_sources(models_file=models, preset="env", environ={"MY_KEY": "k2"}).api_key == "k2"
    with pytest.raises(ConfigError, match="inline.*keep the key out of it: api_key_env"):
        LLMConfig.from_sources(models_file=models, preset="inline", environ={})
    with pytest.raises(ConfigError, match="not both"):
        LLMConfig.from_sources(models_file=models, preset="both", environ={"MY_KEY": "k"})
    with pytest.raises(ConfigError, match=r"\$MY_KEY, which is not set"):
        LLMConfig.from_sources(models_file=models, preset="env", environ={})
    # the command line names a file or a variable too (a key in argv shows in `ps`)
    key_file = tmp_path / "keys" / "local.key"
    assert LLMConfig.from_sources(args={"api_key_file": str(key_file)}, environ={}).api_key == SECRET
    assert LLMConfig.from_sources(args={"api_key_env": "K"}, environ={"K": "k3", "OPENAI_API_KEY": "o"}).api_key == "k3"
    (tmp_path / "empty.key").write_text("\n", encoding="utf-8")
    for bad, fragment in ((tmp_path / "empty.key", "exactly one non-empty line"), (tmp_path / "nope.key", "not found")):
        with pytest.raises(ConfigError, match=fragment) as raised:
            LLMConfig.from_sources(args={"api_key_file": str(bad)}, environ={})
        assert str(bad) in str(raised.value)


# --------------------------------------------------------------------------- 4. output size cap
@pytest.mark.parametrize("as_tool_arguments", [False, True], ids=["content", "tool-arguments"])
def test_a_5mb_reply_is_neither_used_nor_stored(env, weather, as_tool_arguments):
    with ScriptedOpenAIServer([huge_reply(5 * 1024 * 1024, as_tool_arguments=as_tool_arguments)]) as server:
        record = ReActAgent(config_for(server)).run_episode(env, weather)
    result = result_of(record)
    assert result["failure"]["type"] == "reply_too_large" and "dropped unread" in result["failure"]["message"]
    assert result["steps"] == 0 and result["model_calls"]["retries"] == 0  # not executed, not retried
    assert len(json.dumps(record, ensure_ascii=False)) < 200_000


@pytest.mark.parametrize("as_tool_arguments", [False, True], ids=["content", "tool-arguments"])
def test_a_reply_over_the_cap_is_recorded_cut_and_not_used(env, weather, as_tool_arguments):
    with ScriptedOpenAIServer([huge_reply(5000, as_tool_arguments=as_tool_arguments)]) as server:
        record = ReActAgent(config_for(server, max_reply_chars=1000)).run_episode(env, weather)
    result = result_of(record)
    assert result["failure"]["type"] == "reply_too_large" and "max_reply_chars=1,000" in result["failure"]["message"]
    assert result["steps"] == 0  # the oversized tool call never reached the env
    kept = record["trajectory"]["messages"][-1]
    assert kept["discarded"] == "reply_too_large"
    stored = kept["tool_calls"][0]["function"]["arguments"] if as_tool_arguments else kept["content"]
    assert stored.startswith("x" * 100 if not as_tool_arguments else '{"keywords": "xxx')
    assert len(stored) <= 1000 + 40 and stored.endswith("characters in all]")
    assert result["input_tokens"] == 100  # its usage still counts


# ------------------------------------------------ 6. small models: tool_choice, cut-off replies, structured output
def test_native_mode_sends_tool_choice(env, weather, weather_gold):
    expected, actions = weather_gold
    with ScriptedOpenAIServer(react_script(actions)) as server:
        ReActAgent(config_for(server)).run_episode(env, weather)
    assert all(b["tool_choice"] == "auto" for b in server.chat_bodies)
    with ScriptedOpenAIServer(plan_execute_script(actions)) as server:
        PlanExecuteAgent(config_for(server, tool_choice="required")).run_episode(env, weather)
        assert server.protocol_errors == []
    bodies = server.chat_bodies
    assert "tool_choice" not in bodies[0] and "tool_choice" not in bodies[-1]  # planner, reporter: no tools
    assert all(b["tool_choice"] == "required" for b in bodies[1:-1])


def test_a_cut_off_reply_is_retried_once_and_never_used(env, weather, weather_gold):
    expected, actions = weather_gold
    first = actions[0]
    half_call = tool_call(first["name"], first["arguments"], "cut_0")
    script = [cut_off("The weather is", calls=(half_call,))] + react_script(actions)
    with ScriptedOpenAIServer(script) as server:
        record = ReActAgent(config_for(server, language="en")).run_episode(env, weather)
        assert server.remaining == 0 and server.protocol_errors == []
    result = result_of(record)
    assert result["failure"] is None and result["metrics"] == expected["metrics"]
    assert result["steps"] == len(actions)  # the cut-off reply's call was not executed
    calls = result["model_calls"]
    assert (calls["requests"], calls["cutoffs"]) == (len(actions) + 1, 1)
    assert result["usage_by_role"]["react"]["calls"] == len(actions) + 1  # its tokens count
    retry = server.chat_bodies[1]["messages"]
    assert retry[-1]["role"] == "user" and "output token limit" in retry[-1]["content"]
    assert len([m for m in retry if m["role"] == "user"]) == 1  # merged into the task turn
    assert all("The weather is" not in str(m.get("content")) for m in server.chat_bodies[-1]["messages"])
    discarded = [m for m in record["trajectory"]["messages"] if m.get("discarded")]
    assert [m["role"] for m in discarded] == ["assistant", "user"] and discarded[0]["content"] == "The weather is"


def test_two_cut_offs_end_the_episode_without_an_answer(env, weather):
    with ScriptedOpenAIServer([cut_off("今天晴，气温"), cut_off("今天晴")]) as server:
        record = ReActAgent(config_for(server)).run_episode(env, weather)
    result = result_of(record)
    assert result["failure"]["type"] == "truncated_reply" and result["steps"] == 0  # no finish submitted
    assert result["model_calls"]["cutoffs"] == 2
    assert [m["content"] for m in record["trajectory"]["messages"] if m.get("discarded") and m["role"] == "assistant"] \
        == ["今天晴，气温", "今天晴"]


def test_a_cut_off_reporter_never_delivers_its_answer(env, weather, weather_gold):
    _, actions = weather_gold
    script = plan_execute_script(actions)[:-1] + [cut_off('{"answer": "今天'), cut_off('{"answer": "今')]
    with ScriptedOpenAIServer(script) as server:
        record = PlanExecuteAgent(config_for(server)).run_episode(env, weather)
    result = result_of(record)
    assert result["failure"]["type"] == "truncated_reply"
    assert result["steps"] == len(actions) - 1  # the map calls, but no finish
    roles = {m.get("agent_role") for m in record["trajectory"]["messages"] if m.get("discarded")}
    assert roles == {"reporter"}


@pytest.mark.parametrize("structured", ["json_schema", "json_object_schema"])
def test_after_two_cut_offs_the_reporter_asks_for_bounded_structured_output(env, weather, weather_gold, structured):
    expected, actions = weather_gold
    script = plan_execute_script(actions)
    answer = script[-1]
    script = script[:-1] + [cut_off('{"answer": "今天'), cut_off('{"answer": "今'), answer]
    with ScriptedOpenAIServer(script) as server:
        record = PlanExecuteAgent(config_for(server, structured_output=structured, max_tokens=300)).run_episode(
            env, weather)
        assert server.remaining == 0 and server.protocol_errors == []
    result = result_of(record)
    assert result["failure"] is None and result["metrics"] == expected["metrics"]
    assert result["model_calls"]["cutoffs"] == 2
    last = server.chat_bodies[-1]
    assert "tools" not in last and "tool_choice" not in last
    form = last["response_format"]
    schema = form["json_schema"]["schema"] if structured == "json_schema" else form["schema"]
    assert form["type"] == ("json_schema" if structured == "json_schema" else "json_object")
    assert schema["properties"]["answer"]["maxLength"] == 150 and schema["required"] == ["answer", "route_index"]
    assert "输出长度上限" in last["messages"][-1]["content"]  # the cut-off note (Chinese prompts by default)
    discarded = [m for m in record["trajectory"]["messages"] if m.get("discarded")]
    assert [m["role"] for m in discarded] == ["assistant", "user", "assistant"]


def test_a_third_cut_off_still_ends_the_episode_and_other_roles_get_no_third_try(env, weather, weather_gold):
    _, actions = weather_gold
    cut = [cut_off('{"answer": "今天'), cut_off('{"answer": "今'), cut_off('{"answer": "')]
    script = plan_execute_script(actions)[:-1] + cut
    with ScriptedOpenAIServer(script) as server:
        record = PlanExecuteAgent(config_for(server, structured_output="json_schema")).run_episode(env, weather)
    result = result_of(record)
    assert result["failure"]["type"] == "truncated_reply" and "3 replies in a row" in result["failure"]["message"]
    assert result["model_calls"]["cutoffs"] == 3 and result["steps"] == len(actions) - 1
    refused = plan_execute_script(actions)[:-1] + cut[:2] + [bad_request("response_format is not supported")]
    with ScriptedOpenAIServer(refused) as server:
        record = PlanExecuteAgent(config_for(server, structured_output="json_schema")).run_episode(env, weather)
    failure = result_of(record)["failure"]
    assert failure["type"] == "truncated_reply" and "structured-output retry failed" in failure["message"]
    erring = plan_execute_script(actions)[:-1] + cut[:2] + [server_error(500)]  # llama-cpp-python's answer
    with ScriptedOpenAIServer(erring) as server:  # one attempt, no retries: the script has nothing after it
        record = PlanExecuteAgent(config_for(server, structured_output="json_schema")).run_episode(env, weather)
        assert server.remaining == 0 and server.protocol_errors == []
    failure = result_of(record)["failure"]
    assert failure["type"] == "truncated_reply" and "HTTP 500" in failure["message"]
    assert result_of(record)["model_calls"]["retries"] == 0
    with ScriptedOpenAIServer([cut_off("今天晴，气温"), cut_off("今天晴")]) as server:  # ReAct: no schema, two tries
        record = ReActAgent(config_for(server, structured_output="json_schema")).run_episode(env, weather)
        assert server.remaining == 0
    assert result_of(record)["failure"]["type"] == "truncated_reply"
    assert all("response_format" not in body for body in server.chat_bodies)
    with pytest.raises(ConfigError, match="structured_output"):
        LLMConfig(structured_output="grammar")


def test_structured_output_is_part_of_a_runs_identity_only_when_set():
    from argparse import Namespace

    from mobility_agents.commands import run_identity_of

    off = run_identity_of(Namespace(agent="plan-execute"), LLMConfig(model=MODEL))
    on = run_identity_of(Namespace(agent="plan-execute"), LLMConfig(model=MODEL, structured_output="json_schema"))
    assert "structured_output" not in off["llm"]  # runs from before the setting resume unchanged
    assert on["llm"].pop("structured_output") == "json_schema" and on["llm"] == off["llm"]


def test_worker_notes_are_not_prefixed_twice(env, weather, weather_gold):
    _, actions = weather_gold
    script = plan_execute_script(actions)
    labels = actions[-1]["arguments"]["plan"]
    for offset, label in enumerate(labels):
        script[2 + offset] = text_turn(f"{offset + 1}. {label}: 北京晴 {offset}")
    with ScriptedOpenAIServer(script) as server:
        PlanExecuteAgent(config_for(server)).run_episode(env, weather)
    reporter_input = server.chat_bodies[-1]["messages"][-1]["content"]
    for offset, label in enumerate(labels):
        assert f"{offset + 1}. {label}: 北京晴 {offset}" in reporter_input
        assert f"{offset + 1}. {label}: {offset + 1}. {label}" not in reporter_input
    assert worker_note(2, "route", "Step 2 (route): 3 km") == "2. route: 3 km"
    assert worker_note(1, "route", "1.5 km by bike") == "1. route: 1.5 km by bike"  # a number, not a prefix


@pytest.mark.parametrize("tool_mode", ["native", "json"])
def test_a_reporter_that_answers_with_a_tool_call_is_understood(env, weather, weather_gold, tool_mode):
    expected, actions = weather_gold
    finish = actions[-1]["arguments"]
    report = {"name": "finish", "arguments": {"answer": finish["answer"], "route_index": None}}
    if tool_mode == "native":  # a finish tool call although the reporter was offered no tools
        script = plan_execute_script(actions)[:-1] + [finish_turn(report["arguments"])]
    else:  # the same call written as the json protocol's text
        plan = {"intent": finish["intent"], "slots": finish["slots"],
                "steps": [{"step": s, "goal": s} for s in finish["plan"]]}
        script = [text_turn(json.dumps(plan, ensure_ascii=False))]
        script += [text_turn(json.dumps(a, ensure_ascii=False)) for a in actions[:-1]]
        script += [text_turn("done") for _ in finish["plan"]]
        script.append(text_turn(json.dumps(report, ensure_ascii=False)))
    with ScriptedOpenAIServer(script) as server:
        record = PlanExecuteAgent(config_for(server, tool_mode=tool_mode)).run_episode(env, weather)
        assert server.remaining == 0
    assert record["trajectory"]["record"]["finish"]["answer"] == finish["answer"]
    assert result_of(record)["metrics"] == expected["metrics"]
    assert parse_report('{"name": "finish", "arguments": "{\\"answer\\": \\"晴\\", \\"route_index\\": 1}"}') \
        == ("晴", 1)


# --------------------------------------------------------------------------- text-mode parser
def test_only_a_top_level_action_object_is_a_call():
    nested = [
        '{"thought": "check", "action": {"name": "weather_query", "arguments": {"city": "北京"}}}',
        '[{"name": "weather_query", "arguments": {"city": "北京"}}]',
        'Plan: {"steps": [{"name": "weather_query", "arguments": {}}]} then I answer.',
        'The calls would be [{"name": "query_poi", "arguments": {"keywords": "x"}}].',
        '```json\n{"plan": {"name": "weather_query", "arguments": {}}}\n```',
    ]
    for text in nested:
        assert parse_text_actions(text) == [], text
    top = parse_text_actions('Sure. {"name": "weather_query", "arguments": {"city": "北京"}} and done')
    assert [(c.name, json.loads(c.arguments)) for c in top] == [("weather_query", {"city": "北京"})]
    after_braces = parse_text_actions('坐标 {116.4, 39.9} 然后 {"name": "query_poi", "arguments": {"keywords": "x"}}'
                                      )
    assert [c.name for c in after_braces] == ["query_poi"]


_PROSE = st.text(st.characters(blacklist_characters='{}[]"`<>\\', blacklist_categories=("Cs",)), max_size=30)
_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-1000, 1000), st.text(max_size=8))
_ACTION = st.builds(lambda name, args: {"name": name, "arguments": args},
                    st.sampled_from(["weather_query", "query_poi", "finish"]),
                    st.dictionaries(st.text(min_size=1, max_size=6), _SCALARS, max_size=3))
_KEYS = st.text(min_size=1, max_size=6).filter(lambda k: k not in ("name",))


def _wrapped(action: st.SearchStrategy) -> st.SearchStrategy:
    def extend(inner: st.SearchStrategy) -> st.SearchStrategy:
        return st.lists(inner, min_size=1, max_size=3) | st.dictionaries(_KEYS, inner, min_size=1, max_size=3)

    return st.recursive(action, extend, max_leaves=4).filter(lambda v: not _is_top(v))


def _is_top(value: Any) -> bool:
    return isinstance(value, dict) and "name" in value


@settings(deadline=None, derandomize=True, max_examples=150)
@given(prefix=_PROSE, wrapper=_wrapped(_ACTION), suffix=_PROSE, fenced=st.booleans())
def test_property_a_nested_action_is_never_a_call(prefix, wrapper, suffix, fenced):
    body = json.dumps(wrapper, ensure_ascii=False)
    text = f"{prefix}\n```json\n{body}\n```\n{suffix}" if fenced else f"{prefix} {body} {suffix}"
    assert parse_text_actions(text) == []


@settings(deadline=None, derandomize=True, max_examples=150)
@given(prefix=_PROSE, action=_ACTION, suffix=_PROSE)
def test_property_a_top_level_action_in_prose_is_one_call(prefix, action, suffix):
    calls = parse_text_actions(f"{prefix} {json.dumps(action, ensure_ascii=False)} {suffix}")
    assert [(c.name, json.loads(c.arguments)) for c in calls] == [(action["name"], action["arguments"])]


def test_a_lone_surrogate_in_a_reply_does_not_lose_the_episode(env, weather):
    """A reply whose text or tool arguments hold a lone surrogate (an escape no UTF-8 encodes) is read with U+FFFD in
    its place: the next request, which carries it back, can be sent (it was retried as 'not JSON' and lost)."""
    message = {"role": "assistant", "content": "先查一下\udc00天气", "tool_calls": [
        {"id": "call_0", "type": "function",
         "function": {"name": "query_weather", "arguments": '{"city": "北京\ud800"}'}}]}
    completion = {"id": "chatcmpl-1", "object": "chat.completion", "created": 1_700_000_000, "model": MODEL,
                  "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
                  "usage": {"prompt_tokens": 5, "completion_tokens": 5, "total_tokens": 10}}
    # the surrogates travel as JSON escapes (ASCII), as a server that emits them sends them
    turns = [garbage(json.dumps(completion)), finish_turn({"answer": "晴"})]
    with ScriptedOpenAIServer(turns) as server:
        record = returns(lambda: ReActAgent(config_for(server, timeout_s=5)).run_episode(env, weather))
        assert server.remaining == 0 and server.overruns == 0
    result = result_of(record)
    assert result["failure"] is None and result["steps"] == 2, result["failure"]
    text = json.dumps(record["trajectory"], ensure_ascii=False)
    assert "\ufffd" in text and text.encode("utf-8")  # what was recorded is valid Unicode
