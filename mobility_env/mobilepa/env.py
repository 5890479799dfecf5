"""``MobilePAEnv``: one MobilePA task as a Gymnasium environment (``MobilePA-v0``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import gymnasium as gym

from ..actions import MAX_ACTION_CHARS, ActionLimits, ToolCallSpace, copy_arguments, parse_action
from ..env import MAX_OBSERVATION_CHARS, UnicodeText
from ..errors import ConfigError
from ..trajectory import ErrorKind
from .catalogue import PHONE_TOOLS, failure, openai_tools
from .episode import PhoneCall, PhoneSession
from .tasks import ALWAYS_OFFERED, PhoneTask, load_tasks

from mobility_rewards.mobilepa import PhoneRewardWeights, PhoneScorer

DEFAULT_MAX_STEPS = 12
# a wheel installs the bundled tasks as package data (mobility_env/_bundled/mobilepa); a checkout reads
# datasets/mobilepa
_INSTALLED_TASKS = Path(__file__).resolve().parents[1] / "_bundled" / "mobilepa"
BUNDLED_TASKS = _INSTALLED_TASKS if (_INSTALLED_TASKS / "tasks.jsonl").exists() else \
    Path(__file__).resolve().parents[2] / "datasets" / "mobilepa"
_ASK_USER = {"type": "function", "function": {
    "name": "ask_user", "description": "Ask the user a question (a missing detail, a confirmation); returns the reply.",
    "parameters": {"type": "object", "properties": {"question": {"type": "string", "description": "the question"}},
                   "required": ["question"], "additionalProperties": False}}}
_FINISH = {"type": "function", "function": {
    "name": "finish", "description": "End the task with the final answer to the user.",
    "parameters": {"type": "object", "properties": {"answer": {"type": "string", "description": "the answer"}},
                   "required": ["answer"], "additionalProperties": False}}}


def _resolve(name: Any) -> str | None:
    if not isinstance(name, str):
        return None
    name = name.strip()
    return name if name in PHONE_TOOLS or name in ALWAYS_OFFERED else None


class MobilePAEnv(gym.Env[str, Any]):
    """A mobile-assistant task on a stateful phone sandbox (MobilePA-Bench's protocol).

    **Episode.** ``reset`` picks a task: the user's request, earlier dialogue and the phone's
    initial state ``S_0`` (restored into this episode's own SQLite state). The agent calls the
    task's tools (``info["tools"]``: the action space ``A_0`` plus ``ask_user`` and ``finish``);
    each call is executed against the live state and answered with the feedback
    ``{"status", "error_type", "payload"}``. ``finish(answer)`` ends the episode.

    **Actions**: a JSON tool call ``{"name", "arguments"}`` as text or a dict, or an OpenAI
    tool call, checked against the same caps as ``MobilityBench-v0`` (``max_action_chars``, ...).

    **Observations**: on ``reset``, JSON ``{"query", "history"}``; after a call, JSON of the
    feedback (``info["feedback"]`` holds the same dict). A refused call is feedback too, never an
    exception: ``error_type`` is a :class:`~mobility_env.trajectory.ErrorKind` value —
    ``invalid_json``, ``invalid_action``, ``unknown_tool`` (not a tool, or not offered in this
    task), ``schema_error``, ``permission_denied``, ``state_conflict``, ``not_found``,
    ``missing_parameter``, ``transient_failure`` — and ``info["error"]`` is ``{"type", "message"}``.

    **Rewards** (:class:`mobility_rewards.mobilepa.PhoneScorer`, weights ``reward_weights=``): per call
    ``progress`` (potential-based: the share of the gold reached, less changes nobody asked for),
    ``invalid_call`` and ``repeated_failure``; at the end ``success`` (the task's verification
    bucket passed: tool calls, state delta or behaviour) and ``delivered``. The terminal info has
    ``metrics`` (``DR``, ``success``, ``progress``, ``calls``, ...), ``verdict`` (the bucket's named
    checks), ``trajectory`` and the task's labels (``category``, ``bucket``, ``obstacles``).

    **Episode end.** ``terminated`` after ``finish``; ``truncated`` after ``max_steps`` actions
    (default 12), scored with no answer.

    Arguments: ``data`` (a task directory or ``tasks.jsonl``; default the bundled
    ``datasets/mobilepa``), ``tasks`` (PhoneTask objects instead), ``task_ids``, ``max_steps``,
    ``reward_weights`` (a :class:`~mobility_rewards.mobilepa.PhoneRewardWeights`), ``max_action_chars``.

    **Version history.** v0: the initial version (issue 14).
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 1}

    def __init__(self, data: str | Path | None = None, *, tasks: list[PhoneTask] | None = None,
                 task_ids: list[str] | None = None, max_steps: int = DEFAULT_MAX_STEPS,
                 reward_weights: PhoneRewardWeights | None = None, max_action_chars: int = MAX_ACTION_CHARS,
                 render_mode: str | None = None):
        if tasks is None:
            tasks = load_tasks(data if data is not None else BUNDLED_TASKS)
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
        self.scorer = PhoneScorer(reward_weights)
        self.render_mode = render_mode
        self.observation_space = UnicodeText(MAX_OBSERVATION_CHARS)
        self.action_space = ToolCallSpace(self.limits)
        self.session: PhoneSession | None = None
        self._scoring: Any = None
        self._steps = 0
        self._done = False
        self._final: dict[str, Any] | None = None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        options = options or {}
        task_id = options.get("task_id")
        if task_id is None:
            index = options.get("task_index")
            position = int(index) % len(self.task_ids) if index is not None else \
                int(self.np_random.integers(len(self.task_ids)))
            task_id = self.task_ids[position]
        elif task_id not in self.tasks:
            raise ConfigError(f"unknown task_id {task_id!r}; see env.unwrapped.task_ids")
        if self.session is not None:
            self.session.close()
        task = self.tasks[task_id]
        self.session = PhoneSession(task)
        self._scoring = self.scorer.start(task)
        self._steps, self._done, self._final = 0, False, None
        tools = openai_tools([n for n in task.action_space if n in PHONE_TOOLS]) + [_ASK_USER, _FINISH]
        obs = json.dumps({"query": task.query, "history": task.history}, ensure_ascii=False)
        return obs, {"task_id": task_id, "query": task.query, "history": list(task.history), "tools": tools,
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
            feedback = failure(ErrorKind(parsed.error["type"]), parsed.error["message"])
            session.state.log(self._steps, name, parsed.arguments, "error", parsed.error["type"])
            session.calls.append(PhoneCall(self._steps, name, parsed.arguments, "error", parsed.error["type"],
                                           feedback.payload))
        else:
            assert parsed.name is not None
            feedback = session.call(parsed.name, parsed.arguments, self._steps)
        call = session.calls[-1]
        components = self.scorer.step(self._scoring, call, session.calls, session.state)
        shown = feedback.to_dict()
        info: dict[str, Any] = {"task_id": session.task.task_id, "step": self._steps, "feedback": shown,
                                "call": {"name": call.name, "arguments": copy_arguments(call.arguments)}}
        if not feedback.ok:
            info["error"] = {"type": shown["error_type"], "message": str(feedback.payload.get("message", ""))}
        obs = json.dumps(shown, ensure_ascii=False, default=str)
        if self._steps >= self.max_steps:  # the last call's feedback is still what the agent sees
            _, reward, _, _, final = self._end(None, truncated=True, components=components)
            final.update({k: v for k, v in info.items() if k not in final})
            return obs, reward, False, True, final
        reward = float(sum(components.values()))
        info["reward_components"] = components
        return obs, reward, False, False, info

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
                "metrics": dict(score.metrics), "verdict": score.verdict.to_dict(), "trajectory": trajectory.to_dict(),
                "audit": session.state.audit(), "category": task.category, "bucket": task.bucket,
                "obstacles": [dict(o) for o in task.obstacles]}
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
