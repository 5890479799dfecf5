"""The generator's oracle: a task family's plan, played on the task's ``S_0`` as a careful agent would.

A task family (``generate_families_*.py``) turns a drawn phone (:class:`~.generate_world.World`)
into a :class:`Draft`: the user's words, the dialogue history, the user's hidden facts (:func:`fact`), the bucket, and
a ``plan`` — a function of an :class:`OracleRun` that looks things up, acts, and returns the final
answer. The plan runs through a real :class:`~mobility_env.mobilepa.episode.PhoneSession`, so the
oracle's calls, the ids it reads from payloads and the gold delta all come from the sandbox itself,
never from the generator's own bookkeeping.

:meth:`OracleRun.act` and :meth:`OracleRun.read` recover from the obstacles the generator plants,
the way the sandbox's feedback says to: a transient failure is retried; ``permission_denied`` is
cleared with ``grant_permission``; a state conflict caused by airplane mode (also when a maps tool
finds no network), automatic brightness, a silent ringer or location services off is cleared by
switching that setting back; an alarm that already exists (disabled) is turned on instead of
created. Anything else is a generator bug (:class:`GenerationError`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from ..trajectory import ErrorKind
from .catalogue import Feedback
from .episode import NO_REPLY, PhoneSession, PhoneTrajectory
from .simulated_user import ALL_TOLD
from .tasks import FactSlot, GoldCall, PhoneTask, Reading, UserFact

MAX_ATTEMPTS = 4
_STATE_FIXES: dict[tuple[Any, Any], tuple[str, dict[str, Any]]] = {
    ("airplane_mode", "on"): ("set_airplane_mode", {"on": False}),
    ("auto_brightness", "on"): ("set_auto_brightness", {"on": False}),
    ("ringer_mode", "silent"): ("set_ringer_mode", {"mode": "normal"}),
    ("location", "off"): ("set_location_service", {"on": True}),
}


class GenerationError(RuntimeError):
    """A generated task failed one of its own checks: a bug in the generator, never shipped as a task."""


@dataclass
class Draft:
    """A task before its oracle has run (see the module docstring).

    ``targets``: the state-changing calls the plan means to make, as ``(tool, arguments)``; obstacles
    are planted against them (a fault on the tool, its app's permission withdrawn, a setting that
    blocks it). ``reads``: read tools the plan calls (a fault may be planted on them too).
    ``obstacle_kinds``: the planted kinds this family tolerates (its plan must not branch on what
    they change). ``obstacles``: what the family itself planted (a missing parameter, an ambiguous request).
    ``user_facts``: what the user knows and the request leaves out or open (:func:`fact`), which the simulated
    user answers ``ask_user`` from.
    ``answer_excludes``: the other choices of the vocabulary the answer picks from (the generator
    keeps those that neither the request nor the oracle's answer names).

    Capability tasks (:mod:`.generate_memory`, :mod:`.generate_skills`, :mod:`.generate_subagents`)
    also set ``dimension`` and ``gate`` (the fields of the task's
    :class:`~mobility_env.mobilepa.tasks.MemoryGate`, :class:`~mobility_env.mobilepa.tasks.SkillGate` or
    :class:`~mobility_env.mobilepa.tasks.HandoffGate`), and what they add to the task: ``profile`` (a
    :class:`~mobility_env.mobilepa.profile.UserProfile` whose memories ``S_0`` holds), ``skills`` (the skill
    ids ``S_0`` offers), ``offered`` (tools ``A_0`` always holds, used or not: the memory tools, the
    distractor sub-agents, a mixed routing's direct tools) and ``hidden`` (tools ``A_0`` never holds: the
    offered skills' tools under skill-only routing).
    """

    family: str
    bucket: str
    query: str
    plan: Callable[["OracleRun"], str]
    targets: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    reads: tuple[str, ...] = ()
    obstacle_kinds: tuple[str, ...] = ("runtime_exception",)
    history: list[dict[str, str]] = field(default_factory=list)
    user_facts: list[UserFact] = field(default_factory=list)
    obstacles: list[dict[str, str]] = field(default_factory=list)
    must_ask: bool = False
    forbidden: list[str] = field(default_factory=list)
    answer_mentions: list[list[str]] = field(default_factory=list)
    declined: list[str] = field(default_factory=list)  # GoldBehaviour.declined: the request the user declined
    answer_excludes: list[str] = field(default_factory=list)
    dimension: str = "basic"
    gate: dict[str, Any] | None = None
    profile: Any = None
    skills: tuple[str, ...] = ()
    offered: tuple[str, ...] = ()
    hidden: frozenset[str] = frozenset()


class OracleRun:
    """One play of a plan on a task; :attr:`calls` is what the oracle did, ask_user and failed calls included."""

    def __init__(self, task: PhoneTask):
        self.task = task
        self.session = PhoneSession(task)
        self.calls: list[GoldCall] = []

    def _call(self, name: str, arguments: dict[str, Any]) -> Feedback:
        self.calls.append(GoldCall(name=name, arguments=dict(arguments)))
        return self.session.call(name, dict(arguments), len(self.calls))

    def _until_done(self, name: str, arguments: dict[str, Any]) -> Feedback:
        for _ in range(MAX_ATTEMPTS):
            feedback = self._call(name, arguments)
            if feedback.ok:
                return feedback
            done = self._recover(name, feedback)
            if done is not None:
                return done
        raise GenerationError(f"{self.task.task_id}: {name} still fails after {MAX_ATTEMPTS} attempts")

    def _recover(self, name: str, feedback: Feedback) -> Feedback | None:
        """Clear the obstacle behind ``feedback``: None to retry the call, or a success that did its job."""
        kind, payload = feedback.error_type, feedback.payload
        if kind is ErrorKind.TRANSIENT_FAILURE:
            return None
        if kind is ErrorKind.PERMISSION_DENIED:
            self.act("grant_permission", {"app": payload["app"], "permission": payload["permission"]})
            return None
        if kind is ErrorKind.STATE_CONFLICT:
            if payload.get("setting") == "network":  # the maps tools are offline: airplane mode is what the
                payload = {"setting": "airplane_mode", "value": "on"}  # generator plants (mobile data stays on)
            fix = _STATE_FIXES.get((payload.get("setting"), payload.get("value")))
            if fix is not None and fix[0] != name:
                self.act(*fix)
                return None
            if name == "create_alarm" and "alarm_id" in payload:  # the alarm exists, switched off: turn it on
                return self.act("set_alarm_enabled", {"alarm_id": payload["alarm_id"], "enabled": True})
        raise GenerationError(f"{self.task.task_id}: the oracle cannot recover from {name}: {feedback.to_dict()}")

    def act(self, name: str, arguments: dict[str, Any]) -> Feedback:
        """A state-changing call, recovering from planted obstacles until it succeeds."""
        return self._until_done(name, arguments)

    def attempt(self, name: str, arguments: dict[str, Any]) -> Feedback:
        """A call the plan expects may be refused for a reason the user decides on (a withdrawn permission): retried
        through transient failures only, never recovered from (:meth:`act` would grant the permission); its last
        feedback."""
        for _ in range(MAX_ATTEMPTS):
            feedback = self._call(name, arguments)
            if feedback.error_type is not ErrorKind.TRANSIENT_FAILURE:
                return feedback
        raise GenerationError(f"{self.task.task_id}: {name} still fails after {MAX_ATTEMPTS} attempts")

    def read(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        """A read call's payload (retried through planted faults and permissions like :meth:`act`)."""
        return self._until_done(name, arguments or {}).payload

    def settings(self) -> dict[str, str]:
        return self.read("get_device_status")["settings"]

    def ask(self, question: str) -> str:
        """Ask the user; the task must have a fact (a reply) for it."""
        reply = self._call("ask_user", {"question": question}).payload.get("reply")
        if not isinstance(reply, str) or reply in (NO_REPLY, *ALL_TOLD.values()):
            raise GenerationError(f"{self.task.task_id}: the oracle asked {question!r} and got no reply")
        return reply

    def find_contact(self, query: str, *, name: str | None = None, relation: str | None = None) -> dict[str, Any]:
        """Search contacts and keep the one whose name (or relation) is exactly the one meant."""
        found = self.read("search_contacts", {"query": query})["contacts"]
        matches = [c for c in found if (name is not None and c["name"] == name)
                   or (relation is not None and c["relation"] == relation)]
        if len(matches) != 1:
            raise GenerationError(f"{self.task.task_id}: {query!r} does not name one contact: {found}")
        return matches[0]

    def finish(self, answer: str) -> PhoneTrajectory:
        """End the play: the trajectory (the gold delta comes from it); the session is closed."""
        try:
            return self.session.trajectory(answer)
        finally:
            self.session.close()


RUNTIME, PERMISSION, STATE, MISSING = "runtime_exception", "permission_block", "state_change", "missing_parameter"
AMBIGUOUS = "ambiguous_request"


def missing(note: str) -> dict[str, str]:
    """The obstacle record of a parameter the request leaves out (the user's reply supplies it)."""
    return {"kind": MISSING, "note": note}


def ambiguous(note: str) -> dict[str, str]:
    """The obstacle record of a request that fits two records (the user's reply says which)."""
    return {"kind": AMBIGUOUS, "note": note}


def fact(slot: FactSlot, value: str, reply: str, words: Sequence[str] = (), others: Sequence[Reading] = (),
         record: str = "") -> UserFact:
    """A user fact (:class:`~mobility_env.mobilepa.tasks.UserFact`): the ``slot`` kind, its value, the user's
    ``reply`` saying it, other ``words`` naming it, the ``others`` readings the user does not mean, the ``record``
    it picks."""
    return UserFact(slot=slot, value=value, reply=reply, words=list(dict.fromkeys(words)), others=list(others),
                    record=record)
