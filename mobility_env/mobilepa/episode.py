"""One MobilePA episode as the verifiers read it, and :class:`PhoneSession`, which plays calls on a task.

:class:`PhoneSession` is the one place a task's calls are executed: the env's ``step`` and the
oracle/generator checks all go through it, so they cannot disagree. ``ask_user(question)`` is
answered by the simulated user from the task's hidden ``user_facts``
(:func:`~mobility_env.mobilepa.simulated_user.answer`: a confirmation, a question for a slot, any other question;
the facts told are the session's), or, for a task without facts (older task files), from its ``user_replies`` in
order whatever the question (``"(no answer)"`` when they run out); it changes no state. Every other call goes
to :func:`~mobility_env.mobilepa.catalogue.execute`, except a tool outside the episode's action space, which is
refused as ``unknown_tool`` (logged, no effect).

The action space can grow during an episode: a successful ``load_skill`` (the skill dimension) adds the loaded
skill's tools (:data:`~mobility_env.mobilepa.skills.SKILLS`) to the offered tools, so they can be called
from the next call on; its feedback's payload gains ``added_tools`` (empty when every tool was offered
already, e.g. on a second load of the same skill: a harmless no-op). :meth:`PhoneSession.take_expansion`
tells the env that the offered tools changed, so that it shows the new list.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from ..trajectory import ErrorKind
from .catalogue import PHONE_TOOLS, Feedback, execute, failure, success
from .domains.maps_travel import use_maps_data
from .simulated_user import answer
from .skills import LOAD_SKILL, SKILLS
from .state import PhoneState, StateTemplate
from .tasks import ALWAYS_OFFERED, PhoneTask

NO_REPLY = "(no answer)"
_ERROR_KINDS = frozenset(kind.value for kind in ErrorKind)


@dataclass
class PhoneCall:
    """One executed call (a :class:`~mobility_env.trajectory.ToolCallRecord`): name, arguments (the env's copy), and
    the feedback's status, error type and payload."""

    step: int
    name: str
    arguments: Any
    status: str
    error_type: str | None
    payload: dict[str, Any] = field(default_factory=dict)
    # the state tables the call wrote (a refused call's writes were rolled back): what an incremental scorer
    # reads again; not part of the recorded trajectory (the state's delta is)
    touched: tuple[str, ...] = field(default=(), compare=False)

    @property
    def succeeded(self) -> bool:
        return self.status == "success"

    @property
    def error_kind(self) -> ErrorKind | None:
        return ErrorKind(self.error_type) if self.error_type in _ERROR_KINDS else None

    def to_dict(self) -> dict[str, Any]:
        return {"step": self.step, "name": self.name, "arguments": self.arguments, "status": self.status,
                "error_type": self.error_type, "payload": self.payload}


@dataclass
class PhoneTrajectory:
    """What the verifiers judge: the calls, the final ``D_T − D_0``, the answer (None: never finished)."""

    task_id: str
    calls: list[PhoneCall] = field(default_factory=list)
    delta: dict[str, Any] = field(default_factory=dict)
    answer: str | None = None
    truncated: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"task_id": self.task_id, "calls": [c.to_dict() for c in self.calls], "delta": self.delta,
                "answer": self.answer, "truncated": self.truncated}


_TEMPLATES: dict[str, tuple[PhoneTask, StateTemplate]] = {}
#: Templates kept per process: the whole bundled evaluation set (1,705 tasks) fits, so a second pass over it (or an RL
#: group revisiting a task) does not rebuild them (~45 KiB each: ~80 MiB for the bundled set).
TEMPLATES_KEPT = 2048


def template_of(task: PhoneTask) -> StateTemplate:
    """The task's ``S_0`` template, built once per task object and process (kept for the last
    :data:`TEMPLATES_KEPT` tasks)."""
    cached = _TEMPLATES.get(task.task_id)
    if cached is not None and cached[0] is task:
        return cached[1]
    template = StateTemplate(task.initial_state)
    if len(_TEMPLATES) >= TEMPLATES_KEPT:
        _TEMPLATES.pop(next(iter(_TEMPLATES)))
    _TEMPLATES[task.task_id] = (task, template)
    return template


class PhoneSession:
    """A task being played: its live state, the calls so far, the facts the user told (or their remaining replies).

    ``maps_data``: the recorded MobilityBench set the maps & travel tools replay (a built directory or an
    official file; None: the bundled set), see :mod:`~mobility_env.mobilepa.domains.maps_travel`."""

    def __init__(self, task: PhoneTask, maps_data: str | os.PathLike | None = None):
        self.task = task
        self.state: PhoneState = template_of(task).restore()
        use_maps_data(self.state, maps_data)
        self.offered = frozenset(task.action_space) | frozenset(ALWAYS_OFFERED)
        # the offered phone tools in the order they are shown: A_0's, then each loaded skill's new ones
        self.tool_names: list[str] = [name for name in dict.fromkeys(task.action_space) if name in PHONE_TOOLS]
        self.loaded_skills: list[str] = []
        self._expanded = False
        self.calls: list[PhoneCall] = []
        self._replies = list(task.user_replies)
        self._told: set[int] = set()  # the indexes of the user facts told so far

    def take_expansion(self) -> bool:
        """Whether the offered tools grew since the last call (a skill was loaded), and forget it."""
        expanded, self._expanded = self._expanded, False
        return expanded

    def _load(self, feedback: Feedback) -> Feedback:
        """Offer a successfully loaded skill's tools from the next call on; ``added_tools`` in the payload."""
        skill = SKILLS[feedback.payload["skill_id"]]
        added = [name for name in skill.tools if name not in self.offered]
        if added:
            self.offered = self.offered | frozenset(added)
            self.tool_names += added
            self._expanded = True
        if skill.skill_id not in self.loaded_skills:
            self.loaded_skills.append(skill.skill_id)
        return Feedback(feedback.status, feedback.error_type, {**feedback.payload, "added_tools": added})

    def call(self, name: str, arguments: Any, step: int) -> Feedback:
        """Execute one non-``finish`` call (see the module docstring) and record it."""
        if name == "ask_user":
            question = arguments.get("question") if isinstance(arguments, dict) else None
            if not isinstance(question, str) or not question.strip():
                feedback = failure(ErrorKind.SCHEMA_ERROR, "ask_user: question: expected a non-empty string",
                                   fields=["question"])
            else:
                feedback = success(reply=self._reply(question))
            self.state.log(step, name, arguments, feedback.status,
                           None if feedback.error_type is None else feedback.error_type.value)
        elif name not in self.offered:
            feedback = failure(ErrorKind.UNKNOWN_TOOL, f"{str(name)[:60]!r} is not among this task's tools")
            self.state.log(step, str(name)[:100], arguments, feedback.status, ErrorKind.UNKNOWN_TOOL.value)
        else:
            feedback = execute(self.state, name, arguments, step=step)
            if name == LOAD_SKILL and feedback.ok:
                feedback = self._load(feedback)
        self.calls.append(PhoneCall(step, name, arguments, feedback.status,
                                    None if feedback.error_type is None else feedback.error_type.value,
                                    feedback.payload, tuple(self.state.take_touched())))
        return feedback

    def _reply(self, question: str) -> str:
        if self.task.user_facts:
            return answer(question, self.task.user_facts, self._told, self.task.language)
        return self._replies.pop(0) if self._replies else NO_REPLY

    def refuse(self, step: int, name: str, arguments: Any, kind: ErrorKind, message: str) -> Feedback:
        """Record an action refused before any tool ran (it did not parse, or broke the action's schema): logged in
        the state's audit log and kept as a call, like every other, by the session alone."""
        feedback = failure(kind, message)
        self.state.log(step, name, arguments, "error", kind.value)
        self.calls.append(PhoneCall(step, name, arguments, "error", kind.value, feedback.payload))
        return feedback

    def trajectory(self, answer: str | None, truncated: bool = False) -> PhoneTrajectory:
        return PhoneTrajectory(self.task.task_id, list(self.calls), self.state.delta(), answer, truncated)

    def close(self) -> None:
        self.state.close()


def play(task: PhoneTask, calls: list[tuple[str, dict[str, Any]]] | None = None,
         answer: str | None = None) -> PhoneTrajectory:
    """Play ``calls`` (default: the task's oracle calls) and ``answer`` (default: its oracle answer) on a fresh
    state; the trajectory the verifiers judge."""
    session = PhoneSession(task)
    try:
        plan = calls if calls is not None else [(c.name, c.arguments) for c in task.oracle_calls]
        for step, (name, arguments) in enumerate(plan, 1):
            session.call(name, arguments, step)
        return session.trajectory(task.oracle_answer if answer is None else answer)
    finally:
        session.close()
