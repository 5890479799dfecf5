"""``MobilePAEnv``: one MobilePA task as a Gymnasium environment (``MobilePA-v0``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from ..actions import MAX_ACTION_CHARS, ActionLimits, copy_arguments, parse_action
from ..datasource import localize
from ..errors import ConfigError
from ..scoring import Scorer, checked_scorer
from ..spaces import MAX_OBSERVATION_CHARS, ToolCallSpace, UnicodeText
from ..trajectory import ErrorKind
from ..wrappers import check_render_mode, chosen_item
from .catalogue import PHONE_TOOLS
from .domains.skills import load_skill_schema
from .episode import PhoneSession
from .labels import task_labels
from .params import sample_argument
from .skills import LOAD_SKILL, offered_skill_ids
from .tasks import ALWAYS_OFFERED, PhoneTask, load_tasks

from mobility_rewards.mobilepa.verify import PhoneRewardWeights, PhoneScorer

#: Actions per episode; ``MobilePA-v0`` is registered with it as ``max_episode_steps``.
DEFAULT_MAX_STEPS = 12
#: ``info["suite"]`` at reset: agents pick their prompts by it (``MobilityBench-v0`` has no such key).
SUITE = "mobilepa"
# a wheel installs the bundled tasks as package data (mobility_env/_bundled/mobilepa); a checkout reads
# datasets/mobilepa
_INSTALLED_TASKS = Path(__file__).resolve().parents[1] / "_bundled" / "mobilepa"
BUNDLED_TASKS = _INSTALLED_TASKS if (_INSTALLED_TASKS / "tasks.jsonl").exists() else \
    Path(__file__).resolve().parents[2] / "datasets" / "mobilepa"
#: The held-out phrasing split of the bundled tasks (``gym.make("MobilePA-v0", data=HELDOUT_TASKS)``; next to them).
HELDOUT_TASKS = BUNDLED_TASKS.parent / "mobilepa-heldout"
_ASK_USER = {"type": "function", "function": {
    "name": "ask_user", "description": "Ask the user a question (a missing detail, a confirmation); returns the reply.",
    "parameters": {"type": "object", "properties": {"question": {"type": "string", "description": "the question"}},
                   "required": ["question"], "additionalProperties": False}}}
_FINISH = {"type": "function", "function": {
    "name": "finish", "description": "End the task with the final answer to the user.",
    "parameters": {"type": "object", "properties": {"answer": {"type": "string", "description": "the answer"}},
                   "required": ["answer"], "additionalProperties": False}}}


def phone_context(task: PhoneTask) -> dict[str, Any]:
    """What the assistant knows without a tool call, as a phone assistant does: the phone's clock (``now``,
    ``"YYYY-MM-DD HH:MM"``, from ``S_0``'s ``clock`` setting; absent when the task plants none) and the earlier
    dialogue (``history``). A request that says "tomorrow" can be dated from it."""
    context: dict[str, Any] = {}
    clock = next((row.get("value") for row in task.initial_state.get("settings", []) if row.get("key") == "clock"),
                 None)
    if isinstance(clock, str) and clock:
        context["now"] = clock
    context["history"] = list(task.history)
    return context


def _sample_argument(tool: str, name: str, schema: Any, rng: np.random.Generator) -> Any:
    """The action space's sampler of argument values (:data:`mobility_env.spaces.ValueSampler`): the phone
    tools' format rules (:func:`~mobility_env.mobilepa.params.sample_argument`), else None (drawn from
    ``schema``)."""
    spec = PHONE_TOOLS.get(tool)
    param = next((p for p in spec.params if p.name == name), None) if spec is not None else None
    return sample_argument(param, rng) if param is not None else None


def _resolve(name: Any) -> str | None:
    if not isinstance(name, str):
        return None
    name = name.strip()
    return name if name in PHONE_TOOLS or name in ALWAYS_OFFERED else None


class MobilePAEnv(gym.Env[str, Any]):
    """A mobile-assistant task on a stateful phone sandbox (MobilePA-Bench's protocol).

    **Episode.** ``reset`` picks a task (``options={"task_id": ...}``, or ``"episode_id"`` as the
    runner names it, or ``"task_index"``; else one drawn with the reset's seed): the user's request,
    earlier dialogue and the phone's initial state ``S_0`` (restored into this episode's own SQLite
    state). The reset info has ``task_id``, ``query``, ``history``, ``context`` (``{"now", "history"}``: the
    phone's clock and the earlier dialogue, what the LLM agents show as the context, :func:`phone_context`),
    ``language``, ``tools``, ``max_steps`` and ``suite`` (``"mobilepa"``: agents pick their prompts by it).
    The agent calls the
    task's tools (``info["tools"]``: the action space ``A_0`` plus ``ask_user`` and ``finish``);
    each call is executed against the live state and answered with the feedback
    ``{"status", "error_type", "payload"}``. ``finish(answer)`` ends the episode.

    **Skills** (dynamic action space): a task that offers skills has ``load_skill`` in ``A_0``, its
    schema enumerating the task's skills. A successful load adds the skill's tools to the offered ones
    from the next step on, and that step's info carries ``tools``, the full new list (``ask_user`` and
    ``finish`` last); a step that changed nothing has no ``tools`` key. Calling a skill's tool before
    loading it is ``unknown_tool``.

    **Actions**: a JSON tool call ``{"name", "arguments"}`` as text or a dict, or an OpenAI
    tool call, checked against the same caps as ``MobilityBench-v0`` (``max_action_chars``, ...).
    ``action_space`` is a :class:`~mobility_env.spaces.ToolCallSpace` of the tools the current task offers
    (``info["tools"]``; before the first reset ``ask_user`` and ``finish``): ``reset`` and a skill load
    update it, so ``action_space.sample()`` draws a call of an offered tool (clock times, dates, phone
    numbers, frequencies and coordinates in their formats, other values from the schema). A vector env
    batches a copy of the space taken when it was built.

    **Observations**: on ``reset``, JSON ``{"query", "history"}``; after a call, JSON of the
    feedback (``info["feedback"]`` holds the same dict). A refused call is feedback too, never an
    exception: ``error_type`` is a :class:`~mobility_env.trajectory.ErrorKind` value —
    ``invalid_json``, ``invalid_action``, ``unknown_tool`` (not a tool, or not offered in this
    task), ``schema_error``, ``permission_denied``, ``state_conflict``, ``not_found``,
    ``missing_parameter``, ``transient_failure`` — and ``info["error"]`` is ``{"type", "message"}``.

    **Rewards** (:class:`mobility_rewards.mobilepa.verify.PhoneScorer`, weights ``reward_weights=``): per call
    ``progress`` (potential-based: the share of the gold reached, less changes nobody asked for),
    ``invalid_call`` and ``repeated_failure``; at the end ``success`` (the task's verification
    bucket passed: tool calls, state delta or behaviour) and ``delivered``. The terminal info has
    ``metrics`` (``DR``, ``success``, ``progress``, ``calls``, ...), ``verdict`` (the bucket's named
    checks), ``trajectory`` and the task's labels (``category``, ``bucket``, ``obstacles``; and
    ``labels``: :func:`~mobility_env.mobilepa.labels.task_labels` — those with ``language``, the obstacles as
    kinds, the capability ``dimension`` and tool ``domain``, which the runner copies into each result).

    **Episode end.** ``terminated`` after ``finish``; ``truncated`` after ``max_steps`` actions
    (default 12), scored with no answer: the truncating step's info has ``metrics``, ``verdict`` and the rest of
    the terminal info. ``MobilePA-v0`` is registered with ``max_episode_steps`` = 12, the env's own limit, and
    :class:`~mobility_env.wrappers.ScoreOnTimeLimit` above its ``TimeLimit``, as ``MobilityBench-v0`` is: a
    lower ``max_episode_steps`` becomes the env's ``max_steps`` and a truncation by the ``TimeLimit`` is scored
    too (``abandon("time_limit")``).

    Arguments: ``data`` (a task directory or ``tasks.jsonl``; default the bundled
    ``datasets/mobilepa``), ``tasks`` (PhoneTask objects instead), ``task_ids``, ``max_steps``,
    ``reward_weights`` (a :class:`~mobility_rewards.mobilepa.verify.PhoneRewardWeights`), ``max_action_chars``,
    ``render_mode`` (None or ``"ansi"``; another is a ``ConfigError`` naming the supported modes),
    ``maps_data`` (the recorded MobilityBench set the maps & travel tools replay: a built directory or an
    official file; default None, the bundled ``datasets/default`` the bundled tasks were generated against).

    **Version history.** v0: the initial version (issue 14); skill loading grows the action space within an
    episode, shown in the step's ``info["tools"]`` (issue 15); registered with its step limit (12) and a scored
    ``TimeLimit`` truncation, ``action_space`` the offered tools, a bad ``render_mode`` a ``ConfigError``.
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 1}
    action_space: ToolCallSpace

    def __init__(self, data: str | Path | None = None, *, tasks: list[PhoneTask] | None = None,
                 task_ids: list[str] | None = None, max_steps: int = DEFAULT_MAX_STEPS,
                 reward_weights: PhoneRewardWeights | None = None, max_action_chars: int = MAX_ACTION_CHARS,
                 render_mode: str | None = None, maps_data: str | Path | None = None, scorer: Any = None):
        check_render_mode(render_mode, self.metadata)
        if maps_data is not None and not Path(maps_data).exists():
            raise ConfigError(f"maps_data {str(maps_data)!r} does not exist; give a built MobilityBench directory "
                              f"or an official file, or None for the bundled set")
        self.maps_data = maps_data  # opened on the first maps call (domains.maps_travel.replay_for)
        if tasks is None:
            tasks = load_tasks(localize(data) if data is not None else BUNDLED_TASKS)  # a URI: this node's copy
        self.tasks = {task.task_id: task for task in tasks}
        if task_ids is not None:
            unknown = [t for t in task_ids if t not in self.tasks]
            if unknown:
                raise ConfigError(f"unknown task id(s): {unknown[:5]}")
        self.task_ids = list(task_ids) if task_ids is not None else list(self.tasks)
        if not self.task_ids:
            raise ConfigError("no tasks to sample from")
        if isinstance(max_steps, bool) or not isinstance(max_steps, int) or max_steps < 1:
            raise ConfigError(f"max_steps must be a positive integer, got {max_steps!r}")
        self.max_steps = max_steps
        self.limits = ActionLimits(max_action_chars=max_action_chars)
        self.scorer: Scorer = checked_scorer(scorer, reward_weights, PhoneScorer)
        self.render_mode = render_mode
        self.observation_space = UnicodeText(MAX_OBSERVATION_CHARS)
        # before a task is drawn: the tools every task offers; reset and skill loads offer the task's own
        self.action_space = ToolCallSpace([_ASK_USER, _FINISH], self.limits, values=_sample_argument)
        self.session: PhoneSession | None = None
        self._scoring: Any = None
        self._steps = 0
        self._done = False
        self._final: dict[str, Any] | None = None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        # ``episode_id`` is accepted too: the runner and the agents name what they play that way
        task_id = chosen_item(options, self.task_ids, self.tasks, id_keys=("task_id", "episode_id"),
                              index_key="task_index", draw=self.np_random.integers)
        if self.session is not None:
            self.session.close()
        task = self.tasks[task_id]
        self.session = PhoneSession(task, maps_data=self.maps_data)
        self._scoring = self.scorer.start(task, sandbox=self.session.state)
        self._steps, self._done, self._final = 0, False, None
        tools = self._tool_list(self.session)
        # the space's own fresh list (not the info's), kept uncopied
        self.action_space.offer(self._tool_list(self.session), copy_schemas=False)
        obs = json.dumps({"query": task.query, "history": task.history}, ensure_ascii=False)
        return obs, {"task_id": task_id, "suite": SUITE, "query": task.query, "history": list(task.history),
                     "context": phone_context(task), "language": task.language, "tools": tools,
                     "max_steps": self.max_steps, "step": 0}

    def step(self, action: Any) -> tuple[str, float, bool, bool, dict[str, Any]]:
        if self.session is None:
            raise gym.error.ResetNeeded("call reset() before step()")
        if self._done:
            error = {"type": "episode_over", "message": "the episode has ended; call reset() to start a new one"}
            return json.dumps({"error": error}), 0.0, True, False, {"step": self._steps, "error": error,
                                                                    "reward_components": {}}
        self._steps += 1
        session = self.session
        parsed = parse_action(action, self.limits, resolve=_resolve)
        if parsed.error is None and parsed.name == "finish":
            answer = parsed.arguments.get("answer") if isinstance(parsed.arguments, dict) else None
            if isinstance(answer, str) and answer.strip():
                return self._end(answer, truncated=False, components={})
            parsed.error = {"type": "schema_error", "message": "finish: answer: expected a non-empty string"}
        if parsed.error is not None:
            name = parsed.name or (parsed.raw_name[:100] if isinstance(parsed.raw_name, str) else "")
            feedback = session.refuse(self._steps, name, parsed.arguments, ErrorKind(parsed.error["type"]),
                                      parsed.error["message"])
        else:
            assert parsed.name is not None
            feedback = session.call(parsed.name, parsed.arguments, self._steps)
        call = session.calls[-1]
        components = self.scorer.step(self._scoring, call)  # once per call record, which says what the call did
        shown = feedback.to_dict()
        info: dict[str, Any] = {"task_id": session.task.task_id, "step": self._steps, "feedback": shown,
                                "call": {"name": call.name, "arguments": copy_arguments(call.arguments)}}
        if not feedback.ok:
            info["error"] = {"type": shown["error_type"], "message": str(feedback.payload.get("message", ""))}
        if session.take_expansion():  # a skill was loaded: the next step offers its tools
            info["tools"] = self._tool_list(session)
            self.action_space.offer(self._tool_list(session), copy_schemas=False)
        obs = json.dumps(shown, ensure_ascii=False, default=str)
        if self._steps >= self.max_steps:  # the last call's feedback is still what the agent sees
            _, reward, _, _, final = self._end(None, truncated=True, components=components)
            final.update({k: v for k, v in info.items() if k not in final})
            return obs, reward, False, True, final
        reward = float(sum(components.values()))
        info["reward_components"] = components
        return obs, reward, False, False, info

    @staticmethod
    def _tool_list(session: PhoneSession) -> list[dict[str, Any]]:
        """The OpenAI tool list the session offers now: its phone tools in order (``load_skill`` enumerating the
        task's skills), then ``ask_user`` and ``finish``."""
        task = session.task
        tools = [load_skill_schema(offered_skill_ids(task.initial_state), task.language) if name == LOAD_SKILL
                 else PHONE_TOOLS[name].openai_schema() for name in session.tool_names]
        return tools + [_ASK_USER, _FINISH]

    def _end(self, answer: str | None, *, truncated: bool,
             components: dict[str, float]) -> tuple[str, float, bool, bool, dict[str, Any]]:
        session = self.session
        assert session is not None
        trajectory = session.trajectory(answer, truncated=truncated)
        score = self.scorer.finish(self._scoring, trajectory)
        components = {**components, **score.reward_components}
        task = session.task
        self._done = True
        info = {"task_id": task.task_id, "step": self._steps, "reward_components": components,
                "reward_version": getattr(self.scorer, "version", None),  # a scorer of your own may have none
                "metrics": dict(score.metrics), "verdict": score.verdict.to_dict(), "trajectory": trajectory.to_dict(),
                "audit": session.state.audit(), "category": task.category, "bucket": task.bucket,
                "obstacles": [dict(o) for o in task.obstacles],
                "labels": task_labels(task)}
        self._final = info
        obs = json.dumps({"finished": True, "metrics": info["metrics"]}, ensure_ascii=False)
        return obs, float(sum(components.values())), not truncated, truncated, info

    def abandon(self, reason: str = "agent_stopped") -> dict[str, Any]:
        """End the running episode without an answer (an agent that ran out of actions or failed), scored
        like a truncation; returns the final info (the same one again if the episode had already ended)."""
        if self.session is None:
            raise gym.error.ResetNeeded("call reset() before abandon()")
        if self._final is None:
            self._end(None, truncated=True, components={})
        assert self._final is not None
        return {**self._final, "abandoned": reason}

    def render(self) -> str | None:
        if self.render_mode != "ansi" or self.session is None:
            return None
        lines = [f"[{self.session.task.task_id}] {self.session.task.query}"]
        lines += [f"  {c.step}. {c.name}({json.dumps(c.arguments, ensure_ascii=False, default=str)[:100]}) -> "
                  f"{c.status}{'' if c.error_type is None else ' ' + c.error_type}" for c in self.session.calls]
        return "\n".join(lines)

    def close(self) -> None:
        if self.session is not None:
            self.session.close()
            self.session = None
