"""``MobilityBench-v0`` and ``MobilePA-v0`` as a verifiers environment (Prime Intellect's ``verifiers``, v1 API).

:func:`load_environment` returns a ``verifiers.v1`` env (:class:`VerifiersEnv`, verifiers' single-agent env) whose
rollouts are multi-turn native tool-calling episodes of our envs; prime-rl, ``vf-eval`` and the Environments Hub
drive it through verifiers' own rollout path (``env.serving()`` + ``env.run_episode`` / ``run_eval``). Its parts,
in verifiers' vocabulary:

* **taskset** (:class:`MobilityTaskset`): one task per episode (``MobilityBench-v0``: the episodes of the store;
  ``MobilePA-v0``: its tasks), in store order, the first ``limit``. Each task's ``system_prompt`` and ``prompt``
  are exactly the system and user messages :class:`~mobility_agents.llm.react.ReActAgent` sends (the ``react_system``
  and ``task`` prompts, built from the env's reset info: query, context, step limit), and its ``info``
  (:class:`EpisodeInfo`) names the env, the episode id, the data and the env options, so a rollout resets our env
  on that episode;
* **harness** (:class:`MobilityToolHarness`): runs in process (verifiers allows it as long as every model call goes
  through the rollout's interception endpoint, which records the trace), so the seat's runtime defaults to the
  local ``subprocess`` one (:class:`VerifiersEnvConfig`: no sandbox, no tunnel). Each rollout owns a fresh env made
  by :func:`mobility_agents.targets.make_env` on a store opened once per process (:func:`shared_store`); its steps
  run on the event loop (a step takes milliseconds). The loop: send the conversation with the env's
  ``info["tools"]`` as ``tools=`` (OpenAI function calling; a step whose info carries ``tools`` — a MobilePA skill
  loaded — changes them for the next request); pass each tool call to ``env.step`` unchanged (the OpenAI shape),
  in order when a reply holds several, so broken JSON arguments, an unknown tool, a bad or oversized argument, a
  lone surrogate or nesting past the env's limits come back as the env's typed error observation in the ``tool``
  message, never a crash; a reply without tool calls is the answer, sent as ``finish(answer=text)`` (``<think>``
  blocks dropped, as ReAct does; an empty reply is an empty answer, which the env refuses with a
  ``schema_error``), its observation a ``user`` message when the episode goes on. Every reply steps the env at
  least once, so the env's ``max_steps`` ends every rollout. The episode's outcome goes to
  ``trace.info["mobility"]`` (:func:`episode_outcome`): each reward term's score, per step and in total, each
  step's tool call id, tool and error type, the terminal metrics and the verdict; :func:`step_rewards` gives the
  env's per-step rewards under the rubric's weights;
* **rubric**: our reward terms as named, weighted verifiers rewards (the task config's plugged ``rewards``, one
  function per term of this module; :func:`rubric`). ``MobilityBench-v0``: ``tool_coverage``, ``decomposition``,
  ``schema_violation``, ``redundant_call``, ``error``, ``DR``, ``FPR``, ``ID``, ``IE``, ``PF`` with the weights of
  :class:`mobility_rewards.mobilitybench.shaping.RewardWeights`; ``MobilePA-v0``: ``progress``, ``invalid_call``,
  ``repeated_failure``, ``success``, ``delivered`` with :class:`mobility_rewards.mobilepa.verify.PhoneRewardWeights`.
  A term's score is its unweighted value — the potential reached (Φ, the sum of its shaped steps), a count for a
  penalty (so its weight is negative), a metric for a terminal term — so ``trace.reward`` = Σ weight × score is the
  env's episode return under those weights. The harness plays the env with unit weights (±1) to read each term's
  score; the weights live in the rubric only. The env's terminal metrics (``DR``, ``FPR``, ``ID``… for
  ``MobilityBench-v0``; ``DR``, ``success``, ``progress``… for ``MobilePA-v0``) are recorded as verifiers metrics
  (weight 0, :meth:`MobilityTask.env_metrics`).

**When a rollout cannot finish.** A model call that fails for good (the endpoint's error, after the OpenAI client's
two retries) is the trace's error (verifiers' ``ProviderError``; verifiers does not score an errored trace); a
verifiers limit that refuses the next call (``--env.agent.max-turns``, a token budget) ends the rollout normally,
with ``trace.stop_condition`` set. Either way the episode is abandoned (``env.abandon``: scored like a truncation,
DR = 0) and its outcome recorded, ``abandoned`` naming why (``"model_call_failed"``, ``"cancelled"`` or the stop
condition, e.g. ``"max_turns"``). A reply verifiers' interception cannot decode (a raw lone surrogate in the JSON,
tool-call arguments nested past Python's JSON recursion limit) never reaches the harness: the interception refuses
it and the client asks again.

**Plugin ids.** verifiers finds a taskset, its harness and its env by id, importing a top-level module named after
it that exports the classes in ``__all__``. This module is ``mobility_agents.adapters.verifiers``, which an id cannot
name, so :func:`load_environment` registers it under :data:`PLUGIN_MODULE` (id :data:`PLUGIN_ID`) in
``sys.modules`` when no such module is installed. That works in the process that called it (``run_eval``,
``env.run_episode``, prime-rl's in-process path); ``vf-eval mobility-verifiers`` from a shell, and worker processes
that import the plugin themselves, need a real top-level ``mobility_verifiers`` module re-exporting this one
(``from mobility_agents.adapters.verifiers import *`` and its ``__all__``).

Example (any OpenAI-compatible server)::

    from verifiers.v1 import ModelContext, EvalClientConfig
    from mobility_agents.adapters.verifiers import load_environment
    env = load_environment("MobilityBench-v0", limit=5)
    ctx = ModelContext(model="qwen3", client=EvalClientConfig(base_url="http://127.0.0.1:8000/v1",
                                                              api_key_var="VLLM_API_KEY"))
    async with env.serving():
        episode = await env.run_episode(next(iter(env.taskset)), ctx)
    trace = episode.traces[0]   # trace.reward, trace.rewards, trace.metrics, trace.info["mobility"]
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import sys
import threading
from collections.abc import Iterator, Mapping
from dataclasses import fields
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from mobility_env.errors import ConfigError
from mobility_env.suites import suite_of

from ..base import EpisodeSession
from ..llm.client import strip_thinking
from ..llm.config import LANGUAGES
from ..prompts import render_prompt
from ..llm.react import task_message
from ..targets import MOBILITYBENCH, check_env_id, data_path, default_env_options, make_env, open_store

try:
    import verifiers.v1 as vf
except ImportError as exc:  # the optional extra is missing
    raise ImportError("mobility_agents.adapters.verifiers needs the verifiers package (v0.4 or later): "
                      "pip install 'mobility-env[verifiers]'") from exc

__all__ = ["EpisodeInfo", "VerifiersEnv", "VerifiersEnvConfig", "MobilityTask", "MobilityTaskData", "MobilityTaskset",
           "MobilityTasksetConfig", "MobilityToolHarness", "MobilityHarnessConfig", "PLUGIN_ID", "PLUGIN_MODULE",
           "reward_terms", "episode_outcome", "load_environment", "reward_weights", "rubric", "shared_store",
           "step_rewards"]

#: The id verifiers knows the taskset, its harness and its env by, and the module name that id imports.
PLUGIN_ID = "mobility-verifiers"
PLUGIN_MODULE = "mobility_verifiers"
#: ``trace.info`` key of the episode outcome the harness records.
OUTCOME_KEY = "mobility"
#: The env ids a task can name (``mobility_agents.targets.ENV_IDS``, as a type).
EnvId = Literal["MobilityBench-v0", "MobilePA-v0"]


# --------------------------------------------------------------------------- weights and rubric
def _weights_class(env_id: str) -> type:
    return suite_of(env_id).part("scoring").weights()  # type: ignore[no-any-return]


def reward_terms(env_id: str) -> tuple[str, ...]:
    """The reward terms of ``env_id``, in the order the env's weights declare them."""
    return tuple(f.name for f in fields(_weights_class(env_id)))


def reward_weights(env_id: str, weights: Mapping[str, float] | Any = None) -> dict[str, float]:
    """The weight of each reward term of ``env_id``: the env's defaults, overridden by ``weights`` (a mapping or the
    env's weights object). Unknown terms and weights of the wrong sign are a ``ConfigError`` (the env's own checks)."""
    cls = _weights_class(env_id)
    if weights is None:
        chosen = cls()
    elif isinstance(weights, cls):
        chosen = weights
    elif isinstance(weights, Mapping):
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(weights) - known)
        if unknown:
            raise ConfigError(f"unknown reward weight(s) {', '.join(map(repr, unknown))} for {env_id}; "
                              f"known: {', '.join(sorted(known))}")
        for name, value in weights.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ConfigError(f"reward weight {name!r} must be a number, got {value!r}")
        chosen = cls(**{name: float(value) for name, value in weights.items()})
    else:
        raise ConfigError(f"reward_weights must be a mapping of term -> weight, got {type(weights).__name__}")
    return {f.name: float(getattr(chosen, f.name)) for f in fields(cls)}


def _unit_weights(env_id: str) -> Any:
    """The env's weights object with every weight ±1 (the sign of its default; penalties -1): played with them, the
    env's reward components are the terms' unweighted values."""
    cls = _weights_class(env_id)
    defaults = cls()
    return cls(**{f.name: -1.0 if getattr(defaults, f.name) < 0 else 1.0 for f in fields(cls)})


def _unit_signs(env_id: str) -> dict[str, float]:
    unit = _unit_weights(env_id)
    return {f.name: float(getattr(unit, f.name)) for f in fields(type(unit))}


def rubric(env_id: str, weights: Mapping[str, float] | Any = None) -> dict[str, dict[str, Any]]:
    """The plugged-rewards config of ``env_id`` (``TaskConfig.rewards``): one entry per reward term, its function
    (this module's function of the same name) and its weight (:func:`reward_weights`)."""
    return {term: {"fn": f"{__name__}:{term}", "weight": weight}
            for term, weight in reward_weights(env_id, weights).items()}


# --------------------------------------------------------------------------- stores
_STORES: dict[tuple[str, str], Any] = {}
_STORES_LOCK = threading.Lock()


def shared_store(env_id: str, data: str | None) -> Any:
    """The store of ``data`` for ``env_id`` (:func:`mobility_agents.targets.open_store`), opened once per process and
    shared by every rollout's env (an env never changes its store)."""
    path, _ = data_path(check_env_id(env_id), data)
    key = (env_id, str(path))
    with _STORES_LOCK:
        store = _STORES.get(key)
        if store is None:
            store = _STORES[key] = open_store(env_id, None if data is None else path)
        return store


# --------------------------------------------------------------------------- task data
class EpisodeInfo(BaseModel):
    """What a rollout needs to play its task: the env, the episode (MobilePA: task) id, the data and the env options
    (JSON values, e.g. ``max_steps``, ``obs_format``)."""

    model_config = ConfigDict(frozen=True)

    env_id: EnvId
    episode_id: str
    data: str | None = None
    env_options: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def of(cls, task_data: Any) -> "EpisodeInfo":
        """The info of a task's data, typed (:class:`MobilityTaskData`) or as read back from a trace (a dict)."""
        info = getattr(task_data, "info", None)
        if info is None and isinstance(getattr(task_data, "model_extra", None), dict):
            info = task_data.model_extra.get("info")
        if info is None:
            raise ConfigError(f"task {getattr(task_data, 'id', None)!r} has no episode info; "
                              f"the {PLUGIN_ID} harness plays only {PLUGIN_ID} tasks")
        return info if isinstance(info, cls) else cls.model_validate(info)


class MobilityTaskData(vf.TaskData):
    """One episode as a verifiers task: ``id`` and ``name`` are the episode id, ``system_prompt`` and ``prompt`` the
    ReAct agent's system and user messages, ``info`` the :class:`EpisodeInfo`."""

    info: EpisodeInfo


class MobilityTask(vf.Task[MobilityTaskData]):
    """A task of :class:`MobilityTaskset`; its rewards are plugged by config (:func:`rubric`)."""

    @property
    def key(self) -> str:
        """``"{env_id}:{episode_id}"``: stable across runs (the default content hash includes the position)."""
        return f"{self.data.info.env_id}:{self.data.info.episode_id}"

    @vf.metric
    async def env_metrics(self, trace: vf.Trace) -> dict[str, float]:
        """The env's terminal ``metrics`` (MobilityBench: ID, IE, DEC_P, DEC_R, TS_P, TS_R, SC, PF, DR, FPR;
        MobilePA: DR, success, progress, calls, ...), recorded with weight 0."""
        return {name: float(value) for name, value in episode_outcome(trace)["metrics"].items()
                if isinstance(value, (int, float)) and not isinstance(value, bool)}


class MobilityTasksetConfig(vf.TasksetConfig):
    """Which episodes, how they are played and how they are paid (``--env.taskset.*`` on the verifiers CLI)."""

    id: str = PLUGIN_ID
    env_id: EnvId = "MobilityBench-v0"
    data: str | None = None
    """A built directory or an official file (``MobilityBench-v0``), a task directory or ``tasks.jsonl``
    (``MobilePA-v0``); None: the bundled set."""
    limit: int | None = Field(None, ge=1)
    """The first ``limit`` episodes of the store (None: all)."""
    max_steps: int | None = Field(None, ge=1)
    """The env's action limit (None: the env's default as ``mobility-env run`` plays it: 10 / 12)."""
    env_options: dict[str, Any] = Field(default_factory=dict)
    """Other env options (``obs_format``, ``maps_data``, ...), JSON values."""
    language: Literal["zh", "en"] = "zh"
    """The language of the system and user prompts (the ReAct agent's default)."""
    reward_weights: dict[str, float] | None = None
    """Overrides of the env's reward weights; the rubric is built from them when ``task.rewards`` is empty."""
    if TYPE_CHECKING:  # verifiers ships no type information: the inherited field, declared for mypy only
        task: Any

    @model_validator(mode="after")
    def _default_rubric(self) -> "MobilityTasksetConfig":
        try:
            json.dumps(self.env_options)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"env_options must be JSON values (they travel with each task): {exc}") from exc
        if not self.task.rewards:
            try:
                plugged = rubric(self.env_id, self.reward_weights)
            except ConfigError as exc:
                raise ValueError(str(exc)) from exc
            self.task = self.task.model_copy(update={"rewards": vf.TaskConfig(rewards=plugged).rewards})
        return self

    def resolved_env_options(self) -> dict[str, Any]:
        options = {**default_env_options(self.env_id), **self.env_options}
        if self.max_steps is not None:
            options["max_steps"] = self.max_steps
        return options


class MobilityTaskset(vf.Taskset[MobilityTask, MobilityTasksetConfig]):
    """The episodes of the store as tasks (see the module docstring); built lazily, one env reset per task."""

    def load(self) -> Iterator[MobilityTask]:
        config = self.config
        options = config.resolved_env_options()
        store = shared_store(config.env_id, config.data)
        env = make_env(store, options)
        try:
            ids = list(store.ids)[: config.limit]
            for episode_id in ids:
                obs, info = env.reset(options={"episode_id": episode_id})
                system, user = prompt_messages(EpisodeSession(env=env, observation=obs, info=info), config.language)
                yield MobilityTask(MobilityTaskData(
                    id=episode_id, name=episode_id, system_prompt=system, prompt=user,
                    info=EpisodeInfo(env_id=config.env_id, episode_id=episode_id, data=config.data,
                                     env_options=options)), config.task)
        finally:
            close = getattr(env, "close", None)
            if close is not None:
                close()


def prompt_messages(session: EpisodeSession, language: str) -> tuple[str, str]:
    """The ReAct agent's system and user messages for the episode ``session`` has just reset."""
    max_actions = int(session.info.get("max_steps") or 10)
    system = render_prompt("react_system", language, suite=session.suite, max_steps=max_actions)
    return system, task_message(session, language)


# --------------------------------------------------------------------------- playing an episode
class EpisodePlay:
    """One rollout's env and what it recorded: the env (fresh, on the shared store, played with unit weights so each
    reward component is its term's unweighted value, :func:`_unit_weights`), its tools, and each step's scores."""

    def __init__(self, info: EpisodeInfo):
        self.info = info
        self.signs = _unit_signs(info.env_id)
        self.env = make_env(shared_store(info.env_id, info.data),
                            {**info.env_options, "reward_weights": _unit_weights(info.env_id)})
        _, reset_info = self.env.reset(options={"episode_id": info.episode_id})
        self.tools: list[Any] = list(reset_info["tools"])
        self.step_terms: list[dict[str, float]] = []
        self.steps: list[dict[str, Any]] = []
        self.final: dict[str, Any] | None = None
        self.terminated = self.truncated = False
        self.abandoned: str | None = None

    @property
    def done(self) -> bool:
        return self.final is not None

    def step(self, action: Any, *, call_id: str | None = None) -> str:
        """Step the env with ``action`` (passed as is: the env validates it); return the observation."""
        obs, _, terminated, truncated, info = self.env.step(action)
        self._score(info.get("reward_components") or {})
        error = info.get("error")
        call = info.get("call")
        self.steps.append({"call_id": call_id, "name": call.get("name") if isinstance(call, dict) else None,
                           "error": None if error is None else str(error.get("type"))})
        if "tools" in info:  # the action space grew (a MobilePA skill was loaded): the next request offers it
            self.tools = list(info["tools"])
        if terminated or truncated:
            self.terminated, self.truncated, self.final = bool(terminated), bool(truncated), info
        return obs

    def abandon(self, reason: str) -> None:
        """End an unfinished episode without an answer (the model call failed, the rollout was stopped), scored
        like a truncation (DR = 0)."""
        if self.done:
            return
        final = self.env.abandon(reason)
        self._score(final.get("reward_components") or {}, new_step=False)
        self.final, self.truncated, self.abandoned = final, True, reason

    def _score(self, components: Mapping[str, float], *, new_step: bool = True) -> None:
        scores = {name: self.signs.get(name, 1.0) * float(value) for name, value in components.items()}
        if new_step or not self.step_terms:
            self.step_terms.append(scores)
        else:  # terminal terms of an abandoned episode belong to its last step
            for name, value in scores.items():
                self.step_terms[-1][name] = self.step_terms[-1].get(name, 0.0) + value

    def outcome(self) -> dict[str, Any]:
        """``trace.info["mobility"]`` (see :func:`episode_outcome`)."""
        terms = dict.fromkeys(reward_terms(self.info.env_id), 0.0)
        for scores in self.step_terms:
            for name, value in scores.items():
                terms[name] = terms.get(name, 0.0) + value
        final = self.final or {}
        return {"env_id": self.info.env_id, "episode_id": self.info.episode_id, "terms": terms,
                "step_terms": self.step_terms, "steps": self.steps, "terminated": self.terminated,
                "truncated": self.truncated, "abandoned": self.abandoned, "metrics": dict(final.get("metrics") or {}),
                "verdict": final.get("verdict")}

    def close(self) -> None:
        close = getattr(self.env, "close", None)
        if close is not None:
            close()


def episode_outcome(trace: Any) -> dict[str, Any]:
    """What the harness recorded of a rollout's episode, ``trace.info["mobility"]``: ``env_id``, ``episode_id``,
    ``terms`` (each reward term's unweighted score over the episode), ``step_terms`` (per env step), ``steps`` (per
    env step: the tool call id, the tool name, the error type), ``terminated``, ``truncated``, ``abandoned`` (why an
    unfinished episode was ended, else None), ``metrics`` and ``verdict`` (the env's terminal ones).

    ``trace`` may be a :class:`verifiers.v1.Trace` or a trace read back from ``traces.jsonl`` (a dict). Raises
    ``ConfigError`` for a trace without one (not played by :class:`MobilityToolHarness`)."""
    record = trace if isinstance(trace, dict) else None
    info = record.get("info") if record is not None else getattr(trace, "info", None)
    outcome = info.get(OUTCOME_KEY) if isinstance(info, dict) else None
    if not isinstance(outcome, dict):
        trace_id = record.get("id", "?") if record is not None else getattr(trace, "id", "?")
        raise ConfigError(f"trace {trace_id} has no {OUTCOME_KEY!r} outcome: it was not played by "
                          f"the {PLUGIN_ID} harness, so the MobilityBench/MobilePA rubric cannot score it")
    return outcome


def step_rewards(trace: Any) -> list[float]:
    """The env's reward at each step of a rollout under the rubric's weights (``trace.rewards``): for each step,
    Σ weight × the step's term scores (``step_terms`` of :func:`episode_outcome`). They are the rewards the in-process
    env pays for the same actions under the same weights, and they add up to ``trace.reward``. The closing terms of
    an episode abandoned after its last step count in that step (alone, when no step was played). ``trace`` may be
    a :class:`verifiers.v1.Trace` or a trace read back from ``traces.jsonl`` (a dict)."""
    outcome = episode_outcome(trace)
    rewards = (trace.get("rewards") or {}) if isinstance(trace, dict) else trace.rewards
    weights = {name: float(r["weight"] if isinstance(r, dict) else r.weight) for name, r in rewards.items()}
    return [sum(weights.get(name, 0.0) * value for name, value in scores.items())
            for scores in outcome["step_terms"]]


def _wire_message(message: Any) -> dict[str, Any]:
    if isinstance(message, dict):
        return message
    from verifiers.v1.dialects.chat import message_to_wire

    return message_to_wire(message)


def _assistant_wire(message: Any) -> dict[str, Any]:
    """The assistant reply as the next request carries it (only the keys the chat protocol defines)."""
    calls = list(message.tool_calls or [])
    if not calls:
        return {"role": "assistant", "content": message.content or ""}
    return {"role": "assistant", "content": message.content,
            "tool_calls": [call.model_dump(mode="json", exclude_none=True) for call in calls]}


def _tool_action(call: Any) -> dict[str, Any]:
    """A reply's tool call as the env's OpenAI-shape action; a non-function call goes as dumped (the env refuses it
    with ``invalid_action``)."""
    function = getattr(call, "function", None)
    if function is None:
        return call.model_dump(mode="json", exclude_none=True)
    return {"type": "function", "function": {"name": function.name, "arguments": function.arguments}}


class MobilityHarnessConfig(vf.HarnessConfig):
    """The harness's config (``--env.agent.harness.*``); it has no knobs of its own."""

    id: str = PLUGIN_ID


class MobilityToolHarness(vf.Harness[MobilityHarnessConfig]):
    """Plays one episode in process with native OpenAI tool calls (see the module docstring)."""

    APPENDS_SYSTEM_PROMPT = True
    SUPPORTS_MCP = False
    SUPPORTS_RESUME = False
    EXECUTES_CODE = False
    NEEDS_CONTAINER = False

    async def launch(self, ctx: Any, trace: Any, runtime: Any, endpoint: str, secret: str, mcp_urls: dict[str, str],
                     data: Any, tool_interception_url: str | None = None) -> Any:
        from openai import AsyncOpenAI

        info = EpisodeInfo.of(data)
        system, prompt = self.resolve_prompt(data)
        messages: list[Any] = [{"role": "system", "content": system}] if system else []
        if isinstance(prompt, str):
            messages.append({"role": "user", "content": prompt})
        else:
            messages.extend(_wire_message(m) for m in prompt or [])
        play = EpisodePlay(info)
        client = AsyncOpenAI(base_url=endpoint, api_key=secret)
        ended = "model_call_failed"  # why an unfinished episode ends (see :meth:`EpisodePlay.abandon`)
        try:
            while not play.done:
                completion = await client.chat.completions.create(model=ctx.model, messages=messages,
                                                                  tools=play.tools)
                if not completion.choices:
                    raise RuntimeError(f"the model endpoint answered without a choice (episode {info.episode_id})")
                reply = completion.choices[0].message
                messages.append(_assistant_wire(reply))
                if reply.tool_calls:
                    for call in reply.tool_calls:
                        observation = play.step(_tool_action(call), call_id=call.id)
                        messages.append({"role": "tool", "tool_call_id": call.id, "content": observation})
                        if play.done:
                            break
                    continue
                observation = play.step({"name": "finish", "arguments": {"answer": strip_thinking(reply.content)}})
                if not play.done:
                    messages.append({"role": "user", "content": observation})
        except asyncio.CancelledError:  # verifiers' rollout timeout, or the run was stopped
            ended = "cancelled"
            raise
        except Exception:
            stop = getattr(trace, "stop_condition", None)
            if stop is None:
                raise
            # a verifiers limit (``max_turns``, a token budget, a @stop) refused the next model call: an expected
            # end, which verifiers records on the trace; the episode ends there, scored like a truncation
            ended = str(stop)
        finally:
            if not play.done:  # score what was played
                play.abandon(ended)
            trace.info[OUTCOME_KEY] = play.outcome()
            play.close()
            await client.close()
        return vf.ProgramResult(exit_code=0, stdout="", stderr="")


class VerifiersEnvConfig(vf.SingleAgentEnvConfig):
    """The single-agent env's config with the seat's runtime defaulting to the local ``subprocess`` one: the harness
    runs in process, so there is no sandbox to provision (verifiers' default runtime is a remote Prime sandbox,
    reached through a tunnel). ``--env.agent.runtime.*`` still overrides it."""

    agent: vf.AgentConfig = vf.AgentConfig(runtime=vf.SubprocessConfig())


class VerifiersEnv(vf.SingleAgentEnv, vf.Env[VerifiersEnvConfig]):
    """verifiers' single-agent env (one seat playing each task) with :class:`VerifiersEnvConfig`; verifiers picks it
    for the :data:`PLUGIN_ID` taskset (the env a taskset's module exports)."""


# --------------------------------------------------------------------------- the rubric's functions
def _term_reward(term: str) -> Any:
    async def reward(trace: Any) -> float:
        return float(episode_outcome(trace)["terms"].get(term, 0.0))

    reward.__name__ = reward.__qualname__ = term
    reward.__doc__ = f"The unweighted score of the reward term {term!r} (see :func:`episode_outcome`)."
    return reward


# MobilityBench-v0 (mobility_rewards.mobilitybench.shaping.RewardWeights)
schema_violation = _term_reward("schema_violation")
redundant_call = _term_reward("redundant_call")
error = _term_reward("error")
tool_coverage = _term_reward("tool_coverage")
decomposition = _term_reward("decomposition")
DR = _term_reward("DR")
FPR = _term_reward("FPR")
ID = _term_reward("ID")
IE = _term_reward("IE")
PF = _term_reward("PF")
# MobilePA-v0 (mobility_rewards.mobilepa.verify.PhoneRewardWeights)
progress = _term_reward("progress")
invalid_call = _term_reward("invalid_call")
repeated_failure = _term_reward("repeated_failure")
success = _term_reward("success")
delivered = _term_reward("delivered")


# --------------------------------------------------------------------------- entry point
def register_plugin() -> str:
    """Make :data:`PLUGIN_ID` resolve to this module in this process (see the module docstring); return the id."""
    if PLUGIN_MODULE not in sys.modules and importlib.util.find_spec(PLUGIN_MODULE) is None:
        sys.modules[PLUGIN_MODULE] = sys.modules[__name__]
    return PLUGIN_ID


def load_environment(env_id: str = MOBILITYBENCH, data: str | None = None, limit: int | None = None,
                     max_steps: int | None = None, *, language: str = "zh",
                     reward_weights: Mapping[str, float] | None = None, **env_options: Any) -> Any:
    """The verifiers env over ``env_id``'s episodes (see the module docstring).

    Args:
        env_id: ``"MobilityBench-v0"`` or ``"MobilePA-v0"``.
        data: the env's data (a built directory or official file; a MobilePA task directory or ``tasks.jsonl``);
            None: the bundled set.
        limit: only the first ``limit`` episodes of the store.
        max_steps: the env's action limit (None: 10 for MobilityBench-v0, 12 for MobilePA-v0).
        language: ``"zh"`` or ``"en"``, the prompts' language.
        reward_weights: overrides of the env's reward weights (the rubric's weights).
        **env_options: other env options, JSON values (``obs_format="raw"``, ``maps_data=...``).

    Returns a :class:`VerifiersEnv` (a ``verifiers.v1.SingleAgentEnv``) whose one seat plays
    :class:`MobilityToolHarness` in the local ``subprocess`` runtime (nothing is launched: the harness runs in
    process). Bad arguments are a ``ConfigError``;
    the data is opened (once per process) and one env is built on it before returning, so a bad path or env option
    fails here, not in a rollout.
    """
    check_env_id(env_id)
    if language not in LANGUAGES:
        raise ConfigError(f"language must be one of {LANGUAGES}, got {language!r}")
    register_plugin()
    try:
        taskset = MobilityTasksetConfig(env_id=env_id, data=None if data is None else str(data), limit=limit,
                                        max_steps=max_steps, env_options=env_options, language=language,
                                        reward_weights=None if reward_weights is None else dict(reward_weights))
    except ValueError as exc:  # pydantic's ValidationError
        raise ConfigError(f"invalid verifiers environment option: {exc}") from exc
    probe = make_env(shared_store(env_id, taskset.data), taskset.resolved_env_options())
    close = getattr(probe, "close", None)
    if close is not None:
        close()
    config = vf.resolve_env_config({"taskset": taskset.model_dump()})
    return vf.load_environment(config)
