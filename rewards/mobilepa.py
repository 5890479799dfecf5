"""The three MobilePA verification buckets, as one :class:`~mobility_rewards.verdict.Verdict` per episode.

``delivered`` (DR) is a non-empty final answer. ``passed`` (the task's success) needs every check
of the task's bucket (a missing or invalid prediction is a failure):

* **tool_call** — ``gold_calls``: the successful calls to the tools the gold names, in order, equal
  the gold calls (names and argument values, compared as canonical JSON); a successful
  state-changing call to any other tool is collateral damage (``no_collateral_calls``);
* **state_change** — ``gold_delta``: the final ``D_T − D_0`` equals the gold delta with generated
  ids left out (:func:`mobility_env.mobilepa.tasks.normalize_delta`): any path to the same state
  passes, any change nobody asked for fails;
* **behaviour** — ``gold_behaviour``: ``asked_first`` (the agent asked the user before any
  state-changing call succeeded), ``no_forbidden_call`` (no forbidden tool succeeded),
  ``answer_mentions`` (the answer names each required item: one of its spellings, case-folded),
  ``no_other_records`` (it states no other value of the same column of ``S_0`` — no other
  contact's number, message or event: a stuffed answer fails), and the delta equals
  ``gold_delta`` when the task gives one.

The cheapest answers a policy could try, and why they fail: finishing at once (no gold calls,
empty delta — and ``answer_mentions`` needs the facts), calling every tool (collateral calls and
a delta with extra changes), repeating a refused call (a refused call changes nothing, so the
delta or call sequence stays incomplete), acting before asking (``asked_first``), answering
with every record of the kind asked about (``no_other_records``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from mobility_env.errors import ConfigError
from mobility_env.mobilepa.catalogue import PHONE_TOOLS
from mobility_env.mobilepa.episode import PhoneCall, PhoneTrajectory
from mobility_env.mobilepa.state import PhoneState
from mobility_env.mobilepa.tasks import PhoneTask, normalize_delta
from mobility_env.scoring import EpisodeScore

from .verdict import Verdict


def _canonical(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def changes_state(name: str) -> bool:
    spec = PHONE_TOOLS.get(name)
    return spec is not None and bool(spec.writes)


def verify_phone_task(task: PhoneTask, trajectory: PhoneTrajectory) -> Verdict:
    """The verdict of one MobilePA episode (see the module docstring)."""
    answer = trajectory.answer if isinstance(trajectory.answer, str) else ""
    verdict = Verdict(delivered=bool(answer.strip()))
    if not verdict.delivered:
        verdict.reason = "truncated: no final answer" if trajectory.truncated else "no final answer"
    succeeded = [c for c in trajectory.calls if c.succeeded]
    if task.bucket == "tool_call":
        wanted = {g.name for g in task.gold_calls}
        made = [(c.name, _canonical(c.arguments)) for c in succeeded if c.name in wanted]
        gold = [(g.name, _canonical(g.arguments)) for g in task.gold_calls]
        verdict.add("gold_calls", made == gold, expected=gold, stated=made,
                    reason="" if made == gold else "the successful calls differ from the gold calls")
        extra = [c.name for c in succeeded if c.name not in wanted and changes_state(c.name)]
        verdict.add("no_collateral_calls", not extra, expected=[], stated=extra,
                    reason="" if not extra else "state changes nobody asked for")
    elif task.bucket == "state_change":
        _delta_check(verdict, task, trajectory)
    else:
        behaviour = task.gold_behaviour
        assert behaviour is not None  # PhoneTask validates it
        if behaviour.must_ask:
            first_change = next((i for i, c in enumerate(trajectory.calls) if c.succeeded and changes_state(c.name)),
                                None)
            asked = next((i for i, c in enumerate(trajectory.calls) if c.name == "ask_user" and c.succeeded), None)
            ok = asked is not None and (first_change is None or asked < first_change)
            verdict.add("asked_first", ok, expected="ask_user before any state change",
                        stated="no question" if asked is None else f"question at call {asked + 1}",
                        reason="" if ok else "acted without asking the user")
        if behaviour.forbidden:
            hit = [c.name for c in succeeded if c.name in behaviour.forbidden]
            verdict.add("no_forbidden_call", not hit, expected=f"none of {behaviour.forbidden}", stated=hit,
                        reason="" if not hit else "a forbidden tool was used")
        folded = answer.casefold()
        for group in behaviour.answer_mentions:
            ok = any(spelling.casefold() in folded for spelling in group)
            verdict.add("answer_mentions", ok, expected=group, stated=answer[:200],
                        reason="" if ok else f"the answer does not name {group[0]!r}")
        if behaviour.answer_mentions:
            stuffed = [value for value in answer_distractors(task) if value.casefold() in _digits_too(folded)]
            verdict.add("no_other_records", not stuffed, expected="only the asked record", stated=stuffed[:5],
                        reason="" if not stuffed else "the answer also states other records of the same kind")
        if task.gold_delta is not None:
            _delta_check(verdict, task, trajectory)
    if not verdict.checks:
        verdict.add("task_has_checks", False, reason="the task defines nothing to verify")
    return verdict


def answer_distractors(task: PhoneTask) -> list[str]:
    """What an answer stuffed with records would state: for each required mention that is a value of some
    column of ``S_0`` (a message text, a phone number, an event title), the other values of that column —
    except any the task's own known-good answer contains (they are not claims about other records)."""
    required = {spelling.casefold() for group in (task.gold_behaviour.answer_mentions if task.gold_behaviour
                                                  else []) for spelling in group}
    good = _digits_too(task.oracle_answer.casefold())
    out: list[str] = []
    for rows in task.initial_state.values():
        columns = {key for row in rows for key, value in row.items()
                   if isinstance(value, str) and value.casefold() in required}
        for column in sorted(columns):
            for row in rows:
                value = row.get(column)
                if (isinstance(value, str) and len(value) >= 2 and value.casefold() not in required
                        and value.casefold() not in good and value not in out):
                    out.append(value)
    return out


def _digits_too(text: str) -> str:
    """The text, then its digits alone (``154 9605 4225`` states ``15496054225``)."""
    return text + "\n" + "".join(ch for ch in text if ch.isdigit())


def _delta_check(verdict: Verdict, task: PhoneTask, trajectory: PhoneTrajectory) -> None:
    expected, got = normalize_delta(task.gold_delta or {}), normalize_delta(trajectory.delta)
    verdict.add("state_delta", expected == got, expected=expected, stated=got,
                reason="" if expected == got else "the final state differs from the gold (missing or extra changes)")


def task_success(task: PhoneTask, trajectory: PhoneTrajectory) -> float:
    """1.0 when the episode delivered an answer and passed its bucket, else 0.0."""
    verdict = verify_phone_task(task, trajectory)
    return 1.0 if verdict.delivered and verdict.passed else 0.0


# ------------------------------------------------------------------------------------- shaped rewards
@dataclass(frozen=True)
class PhoneRewardWeights:
    """Weights of the MobilePA reward terms (bonuses ≥ 0, penalties ≤ 0, checked)."""

    progress: float = 0.5         # total, paid as the potential Φ (gold progress) rises; taken back if it falls
    invalid_call: float = -0.1    # per call the schema or the action space refuses (schema_error, unknown_tool, ...)
    repeated_failure: float = -0.05  # per call that repeats an earlier refused call unchanged
    success: float = 1.0          # terminal: the task's bucket passed
    delivered: float = 0.1        # terminal: a final answer was given

    def __post_init__(self) -> None:
        for name in ("progress", "success", "delivered"):
            if getattr(self, name) < 0:
                raise ConfigError(f"reward weight {name!r} is a bonus and must be >= 0")
        for name in ("invalid_call", "repeated_failure"):
            if getattr(self, name) > 0:
                raise ConfigError(f"reward weight {name!r} is a penalty and must be <= 0")


_INVALID = frozenset({"invalid_json", "invalid_action", "unknown_tool", "schema_error"})


def progress(task: PhoneTask, calls: list[PhoneCall], delta: dict[str, Any],
             gold_rows: set[str] | None = None) -> float:
    """Φ in [-1, 1]: the share of the task's gold reached, less what was changed without being asked.

    ``state_change`` (and behaviour tasks with a gold delta): gold delta rows present minus extra rows,
    over the gold rows; ``tool_call``: the longest prefix of the gold calls matched in order, minus
    successful state-changing calls to other tools, over the gold calls; ``behaviour`` without a delta:
    1 once the agent asked when it must ask, else 0.
    """
    if task.bucket == "tool_call":
        wanted = {g.name for g in task.gold_calls}
        made = [(c.name, _canonical(c.arguments)) for c in calls if c.succeeded and c.name in wanted]
        gold = [(g.name, _canonical(g.arguments)) for g in task.gold_calls]
        prefix = 0
        for got, expected in zip(made, gold):
            if got != expected:
                break
            prefix += 1
        extra = sum(1 for c in calls if c.succeeded and c.name not in wanted and changes_state(c.name))
        return max(-1.0, (prefix - extra) / len(gold))
    if task.gold_delta is not None:
        gold_rows = gold_rows if gold_rows is not None else _rows(normalize_delta(task.gold_delta))
        return _delta_progress(gold_rows, _rows(normalize_delta(delta)))
    behaviour = task.gold_behaviour
    if behaviour is not None and behaviour.must_ask:
        return 1.0 if any(c.name == "ask_user" and c.succeeded for c in calls) else 0.0
    return 0.0


def _delta_progress(gold_rows: set[str], got_rows: set[str]) -> float:
    if not gold_rows:
        return -min(1.0, float(len(got_rows)))
    return max(-1.0, (len(gold_rows & got_rows) - len(got_rows - gold_rows)) / len(gold_rows))


def _rows(normalized: dict[str, Any]) -> set[str]:
    return {f"{table}/{kind}/{row}" for table, kinds in normalized.items() for kind, rows in kinds.items()
            for row in rows}


@dataclass
class PhoneScoring:
    """One episode's scoring state: its task, Φ so far, the refused calls seen."""

    task: PhoneTask
    potential: float = 0.0
    refused: set[str] = field(default_factory=set)
    gold_rows: set[str] | None = None  # the gold delta's rows, normalized once per episode
    rows_by_table: dict[str, set[str]] = field(default_factory=dict)  # the current delta's rows, kept per table


class PhoneScorer:
    """Shaped terms per call (``progress`` = ``w·(Φ_after − Φ_before)``, potential-based with γ = 1, so it
    telescopes to ``w·Φ(final)``; ``invalid_call``; ``repeated_failure``) and terminal ``success`` and
    ``delivered`` from :func:`verify_phone_task`. The oracle collects ``w_success + w_delivered +
    w_progress·Φ(final)`` (Φ is 1 when the task's gold is calls or a delta it reaches, 0 for a question
    answered without changing anything), less ``repeated_failure`` where it retries a transient failure
    unchanged, as the feedback tells it to (55 calls on the bundled set: a known defect of this term,
    which should exempt such retries)."""

    def __init__(self, weights: PhoneRewardWeights | None = None):
        self.weights = weights or PhoneRewardWeights()

    def start(self, task: PhoneTask) -> PhoneScoring:
        gold = _rows(normalize_delta(task.gold_delta)) if task.gold_delta is not None else None
        return PhoneScoring(task, gold_rows=gold)

    def step(self, scoring: PhoneScoring, call: PhoneCall, calls: list[PhoneCall],
             state: PhoneState) -> dict[str, float]:
        w = self.weights
        invalid = call.error_type in _INVALID
        repeated = False
        if not call.succeeded:  # only refused calls need their identity
            key = f"{call.name}|{_canonical(call.arguments)}"
            repeated = key in scoring.refused
            scoring.refused.add(key)
        before = scoring.potential
        touched = state.take_touched()  # tables written since the last call (a refused call's were rolled back)
        by_delta = scoring.gold_rows is not None and scoring.task.bucket != "tool_call"
        for table in touched if by_delta else ():  # only those are read again: the delta is kept per table
            scoring.rows_by_table[table] = _rows(normalize_delta({table: state.table_delta(table)}))
        moves = changes_state(call.name) or call.name == "ask_user" or scoring.task.bucket == "tool_call"
        if call.succeeded and moves:
            if by_delta and scoring.gold_rows is not None:
                scoring.potential = _delta_progress(scoring.gold_rows,
                                                    set().union(*scoring.rows_by_table.values()))
            else:
                scoring.potential = progress(scoring.task, calls, {}, scoring.gold_rows)
        return {"progress": w.progress * (scoring.potential - before), "invalid_call": w.invalid_call * invalid,
                "repeated_failure": w.repeated_failure * repeated}

    def finish(self, scoring: PhoneScoring, trajectory: PhoneTrajectory) -> EpisodeScore:
        verdict = verify_phone_task(scoring.task, trajectory)
        success = 1.0 if verdict.delivered and verdict.passed else 0.0
        calls = trajectory.calls
        metrics = {"DR": 1.0 if verdict.delivered else 0.0, "success": success,
                   "progress": round(progress(scoring.task, calls, trajectory.delta), 6),
                   "calls": float(len(calls)),
                   "invalid_calls": float(sum(1 for c in calls if c.error_type in _INVALID)),
                   "refused_calls": float(sum(1 for c in calls if not c.succeeded and c.error_type not in _INVALID))}
        w = self.weights
        terminal = {"success": w.success * success, "delivered": w.delivered * metrics["DR"]}
        return EpisodeScore(reward_components=terminal, metrics=metrics, verdict=verdict)
