"""MobilePA tasks: ``(q, S0, H0, A0)`` plus the gold each verification bucket checks.

A :class:`PhoneTask` is what one episode of ``MobilePA-v0`` plays:

* ``query`` (``q``) in ``language`` (``zh`` or ``en``), ``history`` (``H0``: earlier dialogue turns,
  ``{"role": "user" | "assistant", "content"}``), ``initial_state`` (``S0``: rows per table of
  :data:`~mobility_env.mobilepa.state.TABLES`, planted obstacles included) and ``action_space``
  (``A0``: the tool names offered at the first step; ``finish`` and ``ask_user`` are always offered);
* ``category``: the behaviour it exercises (:data:`CATEGORIES`); ``obstacles``: what is planted in
  ``S0`` (:data:`OBSTACLES`, each with a short note for humans);
* ``bucket``: how it is verified (:data:`BUCKETS`), with its gold:

  - ``tool_call``: ``gold_calls``, the calls that must succeed, in this order, with these argument
    values (other successful state-changing calls are collateral damage and fail the task);
  - ``state_change``: ``gold_delta``, ``D_T − D_0`` in :func:`~mobility_env.mobilepa.state.diff`'s
    form, compared with generated ids (``alarm-1``…) left out (:func:`normalize_delta`), so any path
    that reaches the same state passes and any extra change fails;
  - ``behaviour``: ``gold_behaviour``: ``must_ask`` (the agent must ask the user, ``ask_user``,
    before any state change), ``forbidden`` (tools that must not succeed), ``answer_mentions``
    (texts the final answer must contain; each a list of accepted spellings), ``answer_excludes``
    (words the answer must not use: the other choices of a fixed vocabulary, such as the weather
    conditions other than the recorded one; see :class:`GoldBehaviour`);

* ``user_facts``: what the user wants but did not say (:class:`UserFact`: a slot kind, its value, the user's
  own words saying it, the other readings the request allows), which the simulated user
  (:mod:`~mobility_env.mobilepa.simulated_user`) answers ``ask_user`` from; written only when there are some;
* ``user_replies`` (older task files): replies to ``ask_user`` in order, whatever the question, for a task
  without ``user_facts`` (a task holds one or the other);
* ``oracle_calls`` and ``oracle_answer``: one known-good solution (the oracle agent replays it;
  the generator checks that it passes the task's own verifier).

Tasks are stored one JSON object per line (``tasks.jsonl``) in a task directory, with a
``manifest.json`` (``suite: "mobilepa"``, counts, the generator seed); :func:`load_tasks` reads
and validates them, naming the file and line of a bad one.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterable, Literal, get_args

from pydantic import BaseModel, Field, SerializerFunctionWrapHandler, ValidationError, model_serializer, model_validator

from ..errors import DataFileError
from .state import TABLES

CATEGORIES = ("grounding", "conditional", "state_tracking", "intent_correction", "error_recovery")
BUCKETS = ("tool_call", "state_change", "behaviour")
OBSTACLES = ("missing_parameter", "permission_block", "state_change", "runtime_exception", "ambiguous_request")
#: The kinds of what a user fact says (:class:`UserFact`): a level (a percentage), an audio stream, a time of day, a
#: span of time (``HH:MM-HH:MM``), a message's text, a contact, a place, any other value, a choice among records.
FactSlot = Literal["level", "stream", "time", "span", "text", "contact", "place", "value", "choice"]
FACT_SLOTS: tuple[str, ...] = get_args(FactSlot)
ALWAYS_OFFERED = ("finish", "ask_user")
TASKS_FILE = "tasks.jsonl"
#: Columns whose values the sandbox generates (``PhoneState.next_id``): ignored when deltas are compared.
#: Ids other tables refer to (:data:`COMPARED_ID_COLUMNS`) are compared: a message to the wrong contact fails. Every id
#: column of :data:`~mobility_env.mobilepa.state.ID_COLUMNS` is in one of the two (a test checks it).
GENERATED_COLUMNS = frozenset({"alarm_id", "event_id", "message_id", "call_id", "timer_id", "reminder_id",
                               "handoff_id", "memory_id", "note_id", "nav_id", "departure_id", "order_id",
                               "chat_message_id", "post_id", "refund_id", "workout_id", "share_id"})
#: Generated ids that are compared (most are what rows of other tables refer to: a chat's members and messages, an
#: album's photos, a medication's doses), so a row tied to the wrong record fails. (``order_id``, which ``refunds``
#: names, is generated for rides and shop orders and ignored; a refund of the wrong order still fails: that order's
#: status row differs.)
COMPARED_ID_COLUMNS = frozenset({"contact_id", "file_id", "playlist_id", "chat_id", "medication_id", "album_id"})


class GoldCall(BaseModel):
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class GoldBehaviour(BaseModel):
    """What a behaviour task checks (see the module docstring). ``answer_excludes`` (optional, written only when
    not empty, so task files without it load and stay byte for byte): the other answers of a fixed set of
    alternatives, none of which the answer may name (``mobility_env.mobilepa.generate_phrases.mentions``).
    ``declined`` (optional, likewise): the tools of the request the user declined when asked (a permission they
    would not grant): the request is not carried out, so the answer may not claim it was (the verifier's
    ``outcome_stated``, read by :mod:`~mobility_env.mobilepa.outcome_claims`; these tools are also ``forbidden``)."""

    must_ask: bool = False
    forbidden: list[str] = Field(default_factory=list)
    answer_mentions: list[list[str]] = Field(default_factory=list)
    answer_excludes: list[str] = Field(default_factory=list)
    declined: list[str] = Field(default_factory=list)

    @model_serializer(mode="wrap")
    def _without_empty_optionals(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        for name in ("answer_excludes", "declined"):
            if not data.get(name):
                data.pop(name, None)
        return data


#: The paper's four capability dimensions and the fixed weights of its overall score.
DIMENSIONS = ("basic", "subagent", "memory", "skill")
DIMENSION_WEIGHTS = {"basic": 0.5, "subagent": 0.1, "memory": 0.2, "skill": 0.2}


class MemoryGate(BaseModel):
    """A memory task passes only if every one of ``memory_ids`` was retrieved (returned by a successful memory
    read) **and** its bucket's checker passes; ``reasoning`` / ``operation`` / ``domain`` are its annotation axes."""

    memory_ids: list[str] = Field(min_length=1)
    reasoning: Literal["single_lookup", "conflict_resolution"] = "single_lookup"
    operation: Literal["phone_operation", "memory_modification"] = "phone_operation"
    domain: str = ""


class SkillGate(BaseModel):
    """A skill task passes only if ``skill_id`` was loaded (``load_skill``) and its bucket's checker passes;
    ``routing``: ``skill_only`` (the skill's tools are not in ``A_0``: loading is the only way) or ``mixed``."""

    skill_id: str
    routing: Literal["skill_only", "mixed"] = "skill_only"


class HandoffGate(BaseModel):
    """A sub-agent task passes only if ``agent`` (a sub-agent entry tool) was called successfully with a complete
    payload — each of ``payload``'s fields present and naming one of its accepted values — and no other sub-agent
    got the task."""

    agent: str
    payload: dict[str, list[str]] = Field(default_factory=dict)


class Reading(BaseModel):
    """One reading of what the user means: ``value`` (in its slot's form: ``40``, ``07:30``, ``07:30-08:30``, a
    stream, a text, a record's id), ``words`` (other spellings a question may name it by: a contact's relation or
    number, an alarm's label) and ``record`` (the id of the record it picks, where the request fits several)."""

    value: str
    words: list[str] = Field(default_factory=list)
    record: str = ""


class UserFact(Reading):
    """A fact the user holds and the request leaves out (or leaves open): its ``slot`` kind (:data:`FACT_SLOTS`),
    its value, ``reply`` (the user's own words saying it, in the task's language) and ``others``: the other readings
    of the request, which the user does not mean (a question proposing one is answered "no, …")."""

    slot: FactSlot
    reply: str = Field(min_length=1)
    others: list[Reading] = Field(default_factory=list)


class PhoneTask(BaseModel):
    task_id: str
    query: str
    language: Literal["zh", "en"] = "zh"
    history: list[dict[str, str]] = Field(default_factory=list)
    initial_state: dict[str, list[dict[str, Any]]] = Field(default_factory=dict)
    action_space: list[str] = Field(default_factory=list)
    category: Literal["grounding", "conditional", "state_tracking", "intent_correction", "error_recovery"]
    obstacles: list[dict[str, str]] = Field(default_factory=list)
    bucket: Literal["tool_call", "state_change", "behaviour"]
    gold_calls: list[GoldCall] = Field(default_factory=list)
    gold_delta: dict[str, dict[str, list[dict[str, Any]]]] | None = None
    gold_behaviour: GoldBehaviour | None = None
    user_replies: list[str] = Field(default_factory=list)
    user_facts: list[UserFact] = Field(default_factory=list)
    # one known-good way to solve it (the oracle replays it): calls, ``ask_user`` included, then the answer
    oracle_calls: list[GoldCall] = Field(default_factory=list)
    oracle_answer: str = ""
    # the capability dimension the task measures and the gate on top of its bucket's checker
    dimension: Literal["basic", "subagent", "memory", "skill"] = "basic"
    memory_gate: MemoryGate | None = None
    skill_gate: SkillGate | None = None
    handoff_gate: HandoffGate | None = None

    @model_serializer(mode="wrap")
    def _without_empty_facts(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)  # (tasks without facts are written as before the field existed)
        if not data.get("user_facts"):
            data.pop("user_facts", None)
        return data

    @model_validator(mode="after")
    def _gold_matches_bucket(self) -> "PhoneTask":
        unknown = set(self.initial_state) - set(TABLES)
        if unknown:
            raise ValueError(f"initial_state names unknown table(s) {sorted(unknown)}")
        if self.bucket == "tool_call" and not self.gold_calls:
            raise ValueError("a tool_call task needs gold_calls")
        if self.bucket == "state_change" and self.gold_delta is None:
            raise ValueError("a state_change task needs gold_delta")
        if self.bucket == "behaviour" and self.gold_behaviour is None:
            raise ValueError("a behaviour task needs gold_behaviour")
        gates = {"memory": self.memory_gate, "skill": self.skill_gate, "subagent": self.handoff_gate}
        for dimension, gate in gates.items():
            if (gate is not None) != (self.dimension == dimension):
                raise ValueError(f"a {self.dimension} task must have exactly the gate of its dimension "
                                 f"(found {dimension} gate: {gate is not None})")
        if self.user_facts and self.user_replies:
            raise ValueError("a task gives user_facts or user_replies (older files), not both: the simulated user "
                             "answers from the facts; move the replies into them")
        for item in self.obstacles:
            if item.get("kind") not in OBSTACLES:
                raise ValueError(f"unknown obstacle kind {item.get('kind')!r}; kinds: {', '.join(OBSTACLES)}")
        return self


def normalize_delta(delta: dict[str, dict[str, list[dict[str, Any]]]]) -> dict[str, Any]:
    """A delta with generated id columns dropped and rows sorted, for comparing paths that created the
    same records in another order (or after a failed attempt that used up an id)."""
    out: dict[str, Any] = {}
    for table, kinds in sorted(delta.items()):
        entry: dict[str, Any] = {}
        for kind, rows in sorted(kinds.items()):
            cleaned = []
            for row in rows:
                if kind == "changed":
                    row = {"key": row["key"], "before": row["before"], "after": row["after"]}
                    cleaned.append(json.dumps(row, ensure_ascii=False, sort_keys=True))
                else:
                    cleaned.append(json.dumps({k: v for k, v in row.items() if k not in GENERATED_COLUMNS},
                                              ensure_ascii=False, sort_keys=True))
            entry[kind] = sorted(cleaned)
        out[table] = entry
    return out


def write_tasks(directory: str | os.PathLike, tasks: Iterable[PhoneTask], **manifest: Any) -> Path:
    """Write ``tasks.jsonl`` and ``manifest.json`` (``suite: "mobilepa"``, ``tasks``, and ``manifest``'s keys)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    count = 0
    with open(directory / TASKS_FILE, "w", encoding="utf-8") as handle:
        for task in tasks:
            # a basic task's dimension is left out (the default), so basic-only files read as they always did
            handle.write(task.model_dump_json(exclude_none=True,
                                              exclude={"dimension"} if task.dimension == "basic" else None) + "\n")
            count += 1
    (directory / "manifest.json").write_text(json.dumps({"suite": "mobilepa", "tasks": count, **manifest},
                                                        ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return directory


def load_tasks(directory: str | os.PathLike) -> list[PhoneTask]:
    """The tasks of a task directory (or of a ``tasks.jsonl`` file); a bad line raises
    :class:`~mobility_env.errors.DataFileError` naming the file and line."""
    path = Path(directory)
    if path.is_dir():
        path = path / TASKS_FILE
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise DataFileError(path, f"cannot read MobilePA tasks ({exc})") from exc
    lines = []
    for number, raw in enumerate(data.split(b"\n"), 1):
        try:
            lines.append(raw.decode("utf-8"))
        except UnicodeDecodeError as exc:  # a cut or foreign file: name the line, never a traceback
            raise DataFileError(path, f"not UTF-8 text ({exc.reason} at byte {exc.start})", row=number) from exc
    tasks, seen = [], set()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            task = PhoneTask.model_validate_json(line)
        except ValidationError as exc:
            raise DataFileError(path, f"not a MobilePA task ({exc.errors()[0]['msg']})", row=number) from exc
        if task.task_id in seen:
            raise DataFileError(path, f"duplicate task_id {task.task_id!r}", row=number, column="task_id")
        seen.add(task.task_id)
        tasks.append(task)
    if not tasks:
        raise DataFileError(path, "no tasks")
    return tasks
