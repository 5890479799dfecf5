"""``mobility-env export`` for trainers: chat messages with tool-call ids, per-message rewards, native types.

Real runs on bundled episodes of both envs (oracle and rule agents; ReAct and Plan-and-Execute
against the scripted OpenAI-compatible server on 127.0.0.1 in native tool mode, so the tool-call ids
are the server's), exported to Parquet, read back with ``datasets.load_dataset("parquet", ...)`` and
rendered with a ChatML-with-tools template through transformers' own chat-template renderer and a
tokenizer built here from a ``tokenizers`` word-level model (no download). Then hostile run files.
"""

from __future__ import annotations

import json
import math
import re
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from mobility_agents.llm.messages import chat_template_messages, split_by_agent_role
from mobility_agents.export import (EXPORT_FORMAT_VERSION, EXPORT_METADATA_KEY, RUN_METADATA_KEY, TRAJECTORY_SCHEMA,
                                    export_run, group_advantages)
from mobility_agents.llm.client import LLMConfig
from mobility_agents.baselines.mobilepa.scripted import PhoneOracleAgent
from mobility_agents.baselines.mobilitybench.oracle import OracleAgent
from mobility_agents.llm.plan_execute import PlanExecuteAgent
from mobility_agents.llm.react import ReActAgent
from mobility_agents.baselines.mobilitybench.rule import RuleAgent
from mobility_agents.runner import RunConfig, run_local
from mobility_agents.targets import MOBILEPA
from mobility_env.cli import main
from mobility_env.mobilitybench.env import MobilityEnv
from mobility_env.errors import DataFileError
from mobility_env.mobilepa.env import MobilePAEnv
from mobility_env.tools import openai_tools
from openai_server import (MODEL, ScriptedOpenAIServer, gold_actions, plan_execute_script, text_turn, tool_call,
                           tool_turn)

FAST = {"timeout_s": 5.0, "max_retries": 1, "backoff_s": 0.01, "backoff_max_s": 0.1}

CHATML_WITH_TOOLS = """
{%- if tools %}<|im_start|>system
{% if messages[0].role == 'system' %}{{ messages[0].content }}
{% endif %}# Tools
{% for tool in tools %}{{ tool | tojson }}
{% endfor %}<|im_end|>
{% elif messages[0].role == 'system' %}<|im_start|>system
{{ messages[0].content }}<|im_end|>
{% endif %}
{%- for message in messages %}
{%- if message.role == 'system' and loop.first %}
{%- elif message.role == 'assistant' %}<|im_start|>assistant
{% generation %}{{ message.content or '' }}
{%- for call in message.tool_calls or [] %}
<tool_call id="{{ call.id }}">{"name": {{ call.function.name | tojson }}, "arguments": {% if call.function.arguments is string %}{{ call.function.arguments }}{% else %}{{ call.function.arguments | tojson }}{% endif %}}</tool_call>
{%- endfor %}<|im_end|>{% endgeneration %}
{% elif message.role == 'tool' %}<|im_start|>tool
<tool_response id="{{ message.tool_call_id }}" name="{{ message.name }}">{{ message.content }}</tool_response><|im_end|>
{% else %}<|im_start|>{{ message.role }}
{{ message.content }}<|im_end|>
{% endif %}
{%- endfor %}
{%- if add_generation_prompt %}<|im_start|>assistant
{% endif %}"""  # noqa: E501


# --------------------------------------------------------------------------- runs
def _first_of_scenarios(env: MobilityEnv, scenarios: list[str]) -> list[str]:
    first: dict[str, str] = {}
    for episode_id in env.episode_ids:
        first.setdefault(env.store.get(episode_id).task_scenario, episode_id)
    return [first[s] for s in scenarios]


def _server_id(episode: int, step: int) -> str:
    return f"toolu_{episode}x{step}Qz"  # unlike the synthesized call_<step>: proves the ids are the server's


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("runs")
    mobility = MobilityEnv()
    episodes = _first_of_scenarios(mobility, ["Route-Constrained Planning", "Weather Query", "Multi-stop Planning"])
    phone = MobilePAEnv()
    tasks = [t for t in phone.task_ids if len(phone.tasks[t].oracle_calls) <= 6][:3]
    out: dict[str, Path] = {}

    def run(name: str, factory, ids: list[str], env_id: str = "MobilityBench-v0") -> None:
        out[name] = root / name
        run_local(factory, RunConfig(out_dir=out[name], env_id=env_id, episode_ids=ids, progress=False))

    run("oracle", OracleAgent, episodes)
    run("rule", RuleAgent, episodes)
    from mobility_agents.baselines.mobilepa.rule import PhoneRuleAgent

    run("phone-oracle", PhoneOracleAgent, tasks, MOBILEPA)
    run("phone-rule", PhoneRuleAgent, tasks, MOBILEPA)

    pong = [text_turn("pong")]  # the runner's preflight request comes first
    script = pong + [tool_turn(tool_call(a["name"], a["arguments"], _server_id(e, i)))
                     for e, episode_id in enumerate(episodes) for i, a in enumerate(gold_actions(mobility, episode_id))]
    with ScriptedOpenAIServer(script) as server:
        config = LLMConfig(model=MODEL, base_url=server.base_url, api_key="k", **FAST)
        run("react", lambda: ReActAgent(config), episodes)
        assert server.protocol_errors == [] and server.remaining == 0
        out["react-wire"] = root / "react-wire.json"  # what the model was sent last, per episode
        (root / "react-wire.json").write_text(json.dumps(server.chat_bodies[1:]), encoding="utf-8")

    phone_oracle = PhoneOracleAgent()
    script = pong + [tool_turn(tool_call(a["name"], a["arguments"], _server_id(e, i)))
                     for e, task_id in enumerate(tasks) for i, a in enumerate(phone_oracle.actions(phone, task_id))]
    with ScriptedOpenAIServer(script) as server:
        languages = {phone.tasks[t].language for t in tasks}
        assert len(languages) == 1  # the synthesized prompts use the task's language: play in the same one
        config = LLMConfig(model=MODEL, base_url=server.base_url, api_key="k", language=languages.pop(), **FAST)
        run("phone-react", lambda: ReActAgent(config), tasks, MOBILEPA)
        assert server.protocol_errors == [] and server.remaining == 0

    with ScriptedOpenAIServer(pong + plan_execute_script(gold_actions(mobility, episodes[0]))) as server:
        config = LLMConfig(model=MODEL, base_url=server.base_url, api_key="k", **FAST)
        run("plan-execute", lambda: PlanExecuteAgent(config), episodes[:1])
        assert server.protocol_errors == [] and server.remaining == 0
    return out


@pytest.fixture(scope="module")
def exported(runs, tmp_path_factory) -> dict[str, list[dict]]:
    root = tmp_path_factory.mktemp("exports")
    return {name: pq.read_table(export_run(path, root / f"{name}.parquet")).to_pylist()
            for name, path in runs.items() if path.is_dir()}


# --------------------------------------------------------------------------- invariants of every row
def assert_trainer_ready(row: dict) -> None:
    """Tool calls pair with tool messages, and the assistant rewards are the episode's return."""
    messages, rewards = row["messages"], row["message_rewards"]
    assert len(rewards) == len(messages)
    open_calls: dict[str, str] = {}
    for message, reward in zip(messages, rewards):
        assert (reward is not None) == (message["role"] == "assistant")
        if message["role"] == "assistant":
            for call in message["tool_calls"] or []:
                assert call["type"] == "function" and call["id"] not in open_calls
                open_calls[call["id"]] = call["function"]["name"]
        elif message["role"] == "tool":  # answers an earlier call of this conversation, by id and name
            assert open_calls.pop(message["tool_call_id"]) == message["name"]
        elif message["role"] == "system":
            open_calls.clear()  # a new conversation (Plan-and-Execute's next role)
    assert math.fsum(r for r in rewards if r is not None) == pytest.approx(row["total_reward"], abs=1e-9)
    assert math.fsum(row["step_rewards"]) == pytest.approx(row["total_reward"], abs=1e-9)
    first = next(i for i, m in enumerate(messages) if m["role"] == "assistant")
    assert row["prompt"] == messages[:first] and [m["role"] for m in row["prompt"]] == ["system", "user"]


def test_every_export_pairs_tool_calls_and_pays_the_return(exported):
    for name, rows in exported.items():
        assert rows, name
        for row in rows:
            assert_trainer_ready(row)
            source = "recorded" if name in ("react", "phone-react", "plan-execute") else "synthesized"
            assert row["messages_source"] == source, name
    # the ids are the model server's where a model played, call_<step> where none did
    react_ids = [c["id"] for m in exported["react"][0]["messages"] for c in m["tool_calls"] or []]
    assert react_ids == [_server_id(0, i) for i in range(len(react_ids))]
    oracle_ids = [c["id"] for m in exported["oracle"][0]["messages"] for c in m["tool_calls"] or []]
    assert oracle_ids == [f"call_{i}" for i in range(len(oracle_ids))]


def _ids_by_position(messages: list[dict]) -> list[dict]:
    """``messages`` with each tool-call id replaced by its order of appearance."""
    order: dict[str, str] = {}
    for message in messages:
        for call in message["tool_calls"] or []:
            order.setdefault(call["id"], f"#{len(order)}")
    renamed = []
    for message in messages:
        calls = [{**c, "id": order[c["id"]]} for c in message["tool_calls"]] if message["tool_calls"] else None
        call_id = order.get(message["tool_call_id"]) if message["tool_call_id"] else None
        renamed.append({**message, "tool_calls": calls, "tool_call_id": call_id})
    return renamed


@pytest.mark.parametrize("model_run, scripted_run", [("react", "oracle"), ("phone-react", "phone-oracle")])
def test_a_synthesized_conversation_is_what_react_exchanges_making_the_same_calls(exported, model_run, scripted_run):
    played, synthesized = exported[model_run], exported[scripted_run]
    assert [r["episode_id"] for r in played] == [r["episode_id"] for r in synthesized]
    for by_model, by_script in zip(played, synthesized):
        assert _ids_by_position(by_model["messages"]) == _ids_by_position(by_script["messages"])
        assert by_model["message_rewards"] == pytest.approx(by_script["message_rewards"])
        assert by_model["metrics"] == by_script["metrics"] and by_model["tools"] == by_script["tools"]


def test_recorded_messages_are_what_the_model_was_sent(exported, runs):
    bodies = json.loads(runs["react-wire"].read_text(encoding="utf-8"))
    first = 0
    for row in exported["react"]:
        turns = sum(1 for m in row["messages"] if m["role"] == "assistant")
        last_request = bodies[first + turns - 1]
        first += turns
        sent = last_request["messages"]
        # the exported conversation is the last request plus the reply and its tool result; the tool
        # message adds only the called function's name
        exported_prefix = [{k: v for k, v in m.items() if v is not None and not (m["role"] == "tool" and k == "name")}
                           for m in row["messages"][:len(sent)]]
        assert exported_prefix == sent
        assert json.loads(row["tools"]) == last_request["tools"] == openai_tools()


def test_plan_execute_keeps_each_roles_conversation(exported):
    (row,) = exported["plan-execute"]
    roles = row["message_agent_roles"]
    conversations = split_by_agent_role(row["messages"], roles)
    assert list(conversations) == ["planner", "worker", "reporter"]
    for messages in conversations.values():
        assert messages[0]["role"] == "system"
    paid = {role: 0.0 for role in conversations}
    for role, reward in zip(roles, row["message_rewards"]):
        paid[role] += reward or 0.0
    finish = row["step_rewards"][-1]
    assert paid["reporter"] == pytest.approx(finish)  # the reporter's answer was the finish
    assert paid["worker"] == pytest.approx(math.fsum(row["step_rewards"][:-1])) and paid["planner"] == 0.0
    assert exported["react"][0]["messages_source"] == "recorded" and exported["react"][0]["message_agent_roles"] is None


def test_metrics_verdict_and_failure_are_native_structs(exported, runs):
    oracle = exported["oracle"][0]
    results = [json.loads(line) for line in (runs["oracle"] / "results.jsonl").read_text("utf-8").splitlines()]
    assert {k: v for k, v in oracle["metrics"].items() if v is not None} == results[0]["metrics"]
    assert oracle["verdict"] == results[0]["verdict"] and oracle["failure"] is None
    assert oracle["fpr"] == results[0]["metrics"]["FPR"] and oracle["extra_metrics"] == []
    phone = exported["phone-rule"][0]
    phone_result = json.loads((runs["phone-rule"] / "results.jsonl").read_text("utf-8").splitlines()[0])
    assert phone["metrics"]["success"] == phone_result["metrics"]["success"] == phone["fpr"]
    assert phone["metrics"]["FPR"] is None and phone["bucket"] == phone_result["bucket"]
    offered = [t["function"]["name"] for t in json.loads(phone["tools"])]  # the task's tools at reset
    assert "finish" in offered and "list_apps" in offered
    assert phone["failed_checks"] == [c["name"] for c in phone_result["verdict"]["checks"] if not c["passed"]]


# --------------------------------------------------------------------------- datasets and chat templates
@pytest.fixture(scope="module")
def loaded(runs, tmp_path_factory):
    from datasets import load_dataset

    root = tmp_path_factory.mktemp("hf")
    files = [str(export_run(runs[name], root / f"{name}.parquet")) for name in ("react", "oracle", "plan-execute")]
    table = pq.read_table(files[0])
    meta = table.schema.metadata
    assert json.loads(meta[EXPORT_METADATA_KEY]) == {"format_version": EXPORT_FORMAT_VERSION}
    run_json = json.loads((runs["react"] / "run.json").read_text(encoding="utf-8"))
    assert json.loads(meta[RUN_METADATA_KEY]) == run_json
    dataset = load_dataset("parquet", data_files=files, split="train", cache_dir=str(root / "cache"))
    return dataset, [row for f in files for row in pq.read_table(f).to_pylist()]


def test_datasets_loads_every_column_with_its_arrow_type(loaded):
    dataset, rows = loaded
    for field in TRAJECTORY_SCHEMA:
        assert dataset.data.schema.field(field.name).type.equals(field.type), field.name
    assert dataset.features["metrics"]["FPR"].dtype == "float64"
    assert [dataset[i] for i in range(len(dataset))] == rows


def _tokenizer(texts: list[str]):
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    model = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    model.pre_tokenizer = pre_tokenizers.Whitespace()
    model.train_from_iterator(texts, trainers.WordLevelTrainer(special_tokens=["[UNK]"]))
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=model, unk_token="[UNK]")
    tokenizer.chat_template = CHATML_WITH_TOOLS
    return tokenizer


def _paired(text: str) -> list[tuple[str, str]]:
    """(call id, response id) in order of the responses, from a rendered conversation."""
    calls = {m.group(1): m.group(2) for m in re.finditer(r'<tool_call id="([^"]+)">\{"name": "([^"]+)"', text)}
    pairs = []
    for match in re.finditer(r'<tool_response id="([^"]*)" name="([^"]*)">', text):
        assert calls.get(match.group(1)) == match.group(2), match.group(0)
        pairs.append((match.group(1), match.group(2)))
    return pairs


def test_rows_render_with_a_chat_template_through_transformers(loaded):
    from transformers.utils.chat_template_utils import render_jinja_template

    dataset, _ = loaded
    rows = [dataset[i] for i in range(len(dataset))]
    texts = []
    for row in rows:
        tools = json.loads(row["tools"])
        # straight from datasets (None-valued keys, arguments as JSON text) and through the helper
        raw = render_jinja_template([row["messages"]], tools=tools, chat_template=CHATML_WITH_TOOLS)[0][0]
        clean = render_jinja_template([chat_template_messages(row["messages"])], tools=tools,
                                      chat_template=CHATML_WITH_TOOLS)[0][0]
        for text in (raw, clean):
            tool_messages = [m for m in row["messages"] if m["role"] == "tool"]
            assert _paired(text) == [(m["tool_call_id"], m["name"]) for m in tool_messages]
        texts.append(clean)
        prompt = render_jinja_template([row["prompt"]], tools=tools, chat_template=CHATML_WITH_TOOLS,
                                       add_generation_prompt=True)[0][0]
        assert clean.startswith(prompt.removesuffix("<|im_start|>assistant\n"))
        # arguments parse to the same objects either way
        for message in chat_template_messages(row["messages"]):
            for call in message.get("tool_calls", []):
                assert isinstance(call["function"]["arguments"], dict)
                assert "tool_calls" not in message or message["role"] == "assistant"

    tokenizer = _tokenizer(texts)
    for row, text in zip(rows, texts):
        tools = json.loads(row["tools"])
        messages = chat_template_messages(row["messages"])
        assert tokenizer.apply_chat_template(messages, tools=tools, tokenize=False) == text
        encoded = tokenizer.apply_chat_template(messages, tools=tools, return_dict=True,
                                                return_assistant_tokens_mask=True)
        masked = tokenizer.decode([t for t, m in zip(encoded["input_ids"], encoded["assistant_masks"]) if m])
        # the trainable tokens hold every tool call the policy made and none of the env's responses
        for message in messages:
            for call in message.get("tool_calls", []):
                assert call["id"] in masked.replace(" ", "")
        assert "tool_response" not in masked and "[UNK]" not in tokenizer.decode(encoded["input_ids"])


# --------------------------------------------------------------------------- the command
def test_cli_export_writes_the_file(runs, tmp_path, capsys):
    out = tmp_path / "cli.parquet"
    assert main(["export", str(runs["rule"]), "--out", str(out)]) == 0
    assert f"wrote {out}" in capsys.readouterr().out
    rows = pq.read_table(out).to_pylist()
    assert [r["episode_id"] for r in rows] == [r["episode_id"] for r in pq.read_table(
        export_run(runs["rule"], tmp_path / "api.parquet")).to_pylist()]


# --------------------------------------------------------------------------- hostile run files
@pytest.fixture
def run_copy(runs, tmp_path) -> Path:
    target = tmp_path / "run"
    shutil.copytree(runs["react"], target)
    return target


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _write(path: Path, records: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")  # ensure_ascii: \ud83d kept


def test_lone_surrogates_become_replacement_characters(run_copy, tmp_path):
    trajectories = _lines(run_copy / "trajectories.jsonl")
    results = _lines(run_copy / "results.jsonl")
    message = next(m for m in trajectories[0]["messages"] if m["role"] == "tool")
    step = next(s for s in trajectories[0]["steps"] if s["observation"] == message["content"])
    message["content"] = step["observation"] = "cut emoji \ud83d here"
    results[0]["metrics"]["weird\udc00"] = 0.5
    results[0]["task_scenario"] = "scenario \ud800"
    _write(run_copy / "trajectories.jsonl", trajectories)
    _write(run_copy / "results.jsonl", results)
    row = pq.read_table(export_run(run_copy, tmp_path / "x.parquet")).to_pylist()[0]
    assert "cut emoji \ufffd here" in [m["content"] for m in row["messages"]]
    assert row["extra_metrics"] == [{"name": "weird\ufffd", "value": 0.5}]
    assert row["task_scenario"] == "scenario \ufffd"
    assert_trainer_ready(row)


def test_a_lone_surrogate_in_synthesized_call_arguments_is_replaced_not_escaped(runs, tmp_path):
    run = tmp_path / "oracle"
    shutil.copytree(runs["oracle"], run)
    trajectories = _lines(run / "trajectories.jsonl")
    finish = trajectories[0]["steps"][-1]["action"]
    finish["arguments"]["answer"] += "\ud83d"
    trajectories[0]["tools"] = [{"type": "function", "function": {"name": "only_\udc00"}}]  # a recorded list wins
    _write(run / "trajectories.jsonl", trajectories)
    row = pq.read_table(export_run(run, tmp_path / "x.parquet")).to_pylist()[0]
    arguments = row["messages"][-2]["tool_calls"][0]["function"]["arguments"]
    assert "\ufffd" in arguments and "\\ud83d" not in arguments
    assert json.loads(arguments)["answer"].endswith("\ufffd")  # decodes to valid text, encodable as UTF-8
    assert json.loads(row["tools"]) == [{"type": "function", "function": {"name": "only_\ufffd"}}]


def test_nan_and_huge_metrics_are_null_not_nan(run_copy, tmp_path):
    results = _lines(run_copy / "results.jsonl")
    results[0]["metrics"].update({"FPR": float("nan"), "SC": 1e400, "PF": 1e300, "DR": None})
    _write(run_copy / "results.jsonl", results)  # json writes NaN and Infinity tokens
    row = pq.read_table(export_run(run_copy, tmp_path / "x.parquet")).to_pylist()[0]
    assert row["metrics"]["FPR"] is None and row["fpr"] is None and row["metrics"]["SC"] is None
    assert row["metrics"]["PF"] == 1e300 and row["metrics"]["DR"] is None and row["dr"] is None


@pytest.mark.parametrize("field, value, expected", [
    ("input_tokens", 10 ** 30, "input_tokens 1000000000000000000000000000000 is outside the 64-bit"),
    ("input_tokens", "many", "input_tokens is not an integer"),
    ("sample_index", 2 ** 40, "outside the 32-bit integer range"),
    ("total_reward", float("inf"), "total_reward is inf, not a finite number"),
    ("total_reward", 10 ** 400, "total_reward (401 digits) is beyond the range of a double"),
    ("metrics", {"FPR": "high"}, "metric 'FPR' is not a number"),
    ("metrics", [1, 2], "'metrics' must be an object"),
    ("verdict", {"checks": "none"}, "verdict 'checks' must be a list of objects"),
], ids=["tokens-huge", "tokens-text", "index-huge", "reward-inf", "reward-huge-int", "metric-text",
        "metrics-list", "checks-text"])
def test_unrepresentable_result_values_are_named(run_copy, tmp_path, field, value, expected):
    results = _lines(run_copy / "results.jsonl")
    trajectories = _lines(run_copy / "trajectories.jsonl")
    results[0][field] = value
    if field == "sample_index":  # keep the pair
        trajectories[0][field] = value
        _write(run_copy / "trajectories.jsonl", trajectories)
    _write(run_copy / "results.jsonl", results)
    out = tmp_path / "x.parquet"
    with pytest.raises(DataFileError) as error:
        export_run(run_copy, out)
    assert "results.jsonl" in str(error.value) and expected in str(error.value)
    assert repr(results[0]["episode_id"]) in str(error.value)
    assert not out.exists() and list(tmp_path.glob(".x.parquet*")) == []


def test_huge_finite_rewards_normalize_without_overflow():
    advantages = group_advantages({("a", 0): 1e300, ("a", 1): -1e300, ("b", 0): 3.0})
    assert advantages[("a", 0)] == pytest.approx(1.0) and advantages[("a", 1)] == pytest.approx(-1.0)
    assert advantages[("b", 0)] == 0.0
    small = group_advantages({("a", 0): 2.0, ("a", 1): 0.0})  # the formula, unscaled
    assert small[("a", 0)] == (2.0 - 1.0) / (1.0 + 1e-6)


def test_a_missing_trajectory_exports_null_messages(run_copy, tmp_path):
    trajectories = _lines(run_copy / "trajectories.jsonl")
    _write(run_copy / "trajectories.jsonl", trajectories[1:])
    rows = pq.read_table(export_run(run_copy, tmp_path / "x.parquet")).to_pylist()
    missing = rows[0]
    assert missing["episode_id"] == trajectories[0]["episode_id"]
    for column in ("messages", "prompt", "message_rewards", "messages_source", "tools", "step_rewards"):
        assert missing[column] is None, column
    assert missing["metrics"]["FPR"] is not None and missing["verdict"] is not None
    for row in rows[1:]:
        assert_trainer_ready(row)


def test_the_last_trajectory_line_of_an_episode_wins_and_a_cut_last_line_is_dropped(run_copy, tmp_path):
    """Trajectories are read by byte offset, one line at a time: a rerun's later line is the one exported (its
    multi-byte text at the right place), and a line cut by a crash is left out."""
    path = run_copy / "trajectories.jsonl"
    trajectories = _lines(path)
    rerun = json.loads(json.dumps(trajectories[0]))
    rerun["messages"][0]["content"] = "重跑的系统提示 ✓"
    _write(path, trajectories + [rerun])
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(trajectories[1])[:50])  # cut mid-line, no newline
    rows = pq.read_table(export_run(run_copy, tmp_path / "x.parquet")).to_pylist()
    assert len(rows) == len(trajectories)
    first = next(r for r in rows if r["episode_id"] == trajectories[0]["episode_id"])
    assert first["messages"][0]["content"] == "重跑的系统提示 ✓"
    for row in rows:
        assert_trainer_ready(row)


def test_a_trajectories_file_rewritten_during_the_export_is_a_typed_error(run_copy, tmp_path, monkeypatch):
    """The export reads trajectories twice (offsets, then lines): a file cut in between (a resume repairing it)
    is a DataFileError naming it, and no file is left behind."""
    import mobility_agents.export as export_module

    path = run_copy / "trajectories.jsonl"
    real = export_module.iter_jsonl

    def then_cut(target):
        yield from real(target)
        with target.open("r+b") as handle:
            handle.truncate(target.stat().st_size // 2)

    monkeypatch.setattr(export_module, "iter_jsonl", then_cut)
    out = tmp_path / "x.parquet"
    with pytest.raises(DataFileError, match="changed while it was read") as caught:
        export_run(run_copy, out)
    assert caught.value.path == str(path) and not out.exists()
    assert not list(tmp_path.glob(".x.parquet.*"))  # nor a partial file


@pytest.mark.parametrize("corruption, expected", [
    (lambda lines: lines[:1] + ["{not json"] + lines[1:], "trajectories.jsonl, row 2: not JSON"),
    (lambda lines: lines[:1] + ['{"a": ' + "[" * 5_000 + "]" * 5_000 + "}"] + lines[1:],
     "trajectories.jsonl, row 2: not JSON (nested too deeply)"),
    (lambda lines: [json.dumps({**json.loads(lines[0]), "steps": "oops"})] + lines[1:], "'steps' must be a list"),
    (lambda lines: [json.dumps({**json.loads(lines[0]), "messages": [{"content": "x"}]})] + lines[1:],
     "message 0 has no role"),
    (lambda lines: [json.dumps({**json.loads(lines[0]), "steps": [{"reward": "lots"}]})] + lines[1:],
     "step 0: reward is not a number"),
    (lambda lines: [json.dumps({**json.loads(lines[0]), "steps": json.loads(lines[0])["steps"][1:]})] + lines[1:],
     "the two files disagree"),
])
def test_a_corrupt_trajectory_is_named_by_the_command(run_copy, tmp_path, capsys, corruption, expected):
    path = run_copy / "trajectories.jsonl"
    path.write_text("\n".join(corruption(path.read_text(encoding="utf-8").splitlines())) + "\n", encoding="utf-8")
    out = tmp_path / "x.parquet"
    assert main(["export", str(run_copy), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "trajectories.jsonl" in err and expected in err
    assert not out.exists()
