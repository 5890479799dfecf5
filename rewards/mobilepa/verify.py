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
  ``answer_mentions`` (the answer names each required item: one of its spellings, read by
  :func:`~mobility_env.mobilepa.answers.mentions` — at number and word boundaries, inflected
  forms included, a denied or conditional mention not counted; an item spelled as a quantity,
  ``25分钟`` / ``23.9 km`` / ``16℃``, is named when the answer states that amount in any spelling,
  :func:`~mobility_env.mobilepa.answers.stated_quantities`), ``no_other_records`` (it states
  no other value of the same column of ``S_0`` — no other contact's number, message or event: a
  stuffed answer fails), ``no_other_values`` (every amount it states in the unit kind of an asked
  quantity is the gold's, at the precision stated: ``24 km`` for 23 942 m passes; ``125 min``, a range
  ``25–30 min``, every route option's time, or a number standing alone, ``… or maybe 30``, read in the
  answer's unit, fail; amounts the user's own words state are allowed), ``no_excluded_words`` (it names
  none of ``answer_excludes``, the other choices of a fixed vocabulary, outside the gold's own
  spellings: ``sunny, cloudy, rain`` fails, ``sunny, no rain`` passes), ``no_other_conditions`` (no weather condition
  or traffic state of the kernel's vocabularies — the Amap phenomenon table, everyday traffic words — that the
  gold's contradicts: ``也会有冰雹``, ``路上车不多，很顺`` on a jammed road), ``no_other_times`` (where the gold is a
  time of day, every time the answer states is the gold's, the user's or one of the reference answer's records:
  ``08:00，也可能是10:00`` fails), ``no_other_identifiers`` (where the gold is a number of seven digits or more, no
  other number of that length: ``185…95 or 185…96`` fails), and the delta equals
  ``gold_delta`` when the task gives one. The user's words quoted back verbatim are no claim (they
  neither name the gold nor hedge).

**The outcome stated** (``outcome_stated``, any bucket): where the trajectory tells whether the requested change was
made — a task with a non-empty ``gold_delta`` (made: every gold delta row is in the final ``D_T − D_0``, the rows
``state_delta`` compares), a ``tool_call`` task whose gold calls change state (made: each gold call succeeded), a
sub-agent task (made: its agent's entry tool took the task) or a task whose request the user declined
(``gold_behaviour.declined``; made: one of those tools succeeded anyway) — the answer must not claim the opposite
(:func:`~mobility_env.mobilepa.outcome_claims.claimed_outcome`, the user's own words set aside): "sorry, it failed,
nothing was changed" after the change was made fails, and so does "done, I've updated it" when it was not. An answer
that claims neither passes.

**Capability gates** (the memory, skill and sub-agent dimensions) sit on top of the bucket: a memory task also
needs ``memory_retrieved`` (every gold memory came back among a successful ``search_memory``'s first five results or
from a ``get_memory``) and ``memory_focused`` (it did not sweep the memory: with ``g`` gold memories, at most
``g + 2`` memory reads showing at most ``4g + 6`` distinct records), a skill task
``skill_loaded``, ``skill_used`` and (skill-only routing) ``tools_after_load``, a sub-agent task ``routed``
(one successful call to the gold entry tool), ``payload`` (every gold field names an accepted value) and
``no_other_agent`` — the right outcome without the memory, the skill or the right hand-off fails.

The cheapest answers a policy could try, and why they fail: finishing at once (no gold calls,
empty delta — and ``answer_mentions`` needs the facts), calling every tool (collateral calls and
a delta with extra changes), repeating a refused call (a refused call changes nothing, so the
delta or call sequence stays incomplete), acting before asking (``asked_first``), answering
with every record of the kind asked about (``no_other_records``), with every number or range of
the asked unit (``no_other_values``; the gold inside a longer number is no mention), or with every
word of the vocabulary (``no_excluded_words``).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from typing import AbstractSet, Any, Mapping

from mobility_env.errors import ConfigError
from mobility_env.mobilepa.answers import (QUANTITY_KINDS, Quantity, mention_spans, normalized, quantity_of, read_in,
                                           stated_quantities, unasserted, unread_in)
from mobility_env.mobilepa.catalogue import PHONE_TOOLS
from mobility_env.mobilepa.domains.subagents import SUB_AGENTS
from mobility_env.mobilepa.episode import PhoneCall, PhoneTrajectory
from mobility_env.mobilepa.outcome_claims import FAILURE, SUCCESS, claimed_outcome
from mobility_env.mobilepa.state import TABLES, PhoneState, TableChanges
from mobility_env.reading import vocabulary
from mobility_env.reading.script import in_mainland_words
from mobility_env.reading.clock import ClockClaim, clock_claims, clock_matches
from mobility_env.reading.normalized import normalize_answer
from mobility_env.mobilepa.tasks import GENERATED_COLUMNS, GoldBehaviour, PhoneTask, normalize_delta
from mobility_env.scoring import EpisodeScore
from mobility_env.trajectory import ErrorKind

from .delegation_gates import handoff_gate_check, skill_gate_check
from .memory_gate import memory_focus_check, memory_gate_check, retrieved_memory_ids
from ..verdict import Verdict


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
        if behaviour.answer_mentions or behaviour.answer_excludes:
            _answer_checks(verdict, task, behaviour, answer)
        if task.gold_delta is not None:
            _delta_check(verdict, task, trajectory)
    if not verdict.checks:
        verdict.add("task_has_checks", False, reason="the task defines nothing to verify")
    _outcome_check(verdict, task, trajectory, answer)
    _gate_checks(verdict, task, trajectory)
    return verdict


def trajectory_outcome(task: PhoneTask, trajectory: PhoneTrajectory) -> str | None:
    """Whether the change the task asks for was made (``"success"``) or not (``"failure"``), as the trajectory
    shows it; None when the task asks for no change the trajectory can show. A task with a non-empty
    ``gold_delta``: made when every gold row is in the final delta (:func:`delta_rows`, the rows ``state_delta``
    compares; extra changes are that check's business). A ``tool_call`` task whose gold calls change state: made
    when each gold call succeeded, as often as the gold makes it. A sub-agent task (``handoff_gate``): made when its
    agent's entry tool took the task (a successful call; the payload is the gate's business). A task whose request
    the user declined (``gold_behaviour.declined``): made when one of those tools succeeded (``forbidden`` fails that
    too), else not made — so "done, I've texted her" after a refusal fails."""
    declined = task.gold_behaviour.declined if task.gold_behaviour is not None else []
    if declined:
        return SUCCESS if any(c.succeeded and c.name in declined for c in trajectory.calls) else FAILURE
    gold = delta_rows(task.gold_delta) if task.gold_delta else set()
    if gold:
        return SUCCESS if gold <= delta_rows(trajectory.delta) else FAILURE
    if task.bucket == "tool_call" and any(changes_state(g.name) for g in task.gold_calls):
        made = Counter((c.name, _canonical(c.arguments)) for c in trajectory.calls if c.succeeded)
        wanted = Counter((g.name, _canonical(g.arguments)) for g in task.gold_calls)
        return SUCCESS if not wanted - made else FAILURE
    agent = SUB_AGENTS.get(task.handoff_gate.agent) if task.handoff_gate is not None else None
    if agent is not None:
        return SUCCESS if any(c.succeeded and c.name == agent.tool for c in trajectory.calls) else FAILURE
    return None


def _outcome_check(verdict: Verdict, task: PhoneTask, trajectory: PhoneTrajectory, answer: str) -> None:
    """``outcome_stated`` (module docstring): the answer, the user's words set aside, claims no outcome opposite to
    :func:`trajectory_outcome`'s."""
    happened = trajectory_outcome(task, trajectory)
    if happened is None:
        return
    claim = claimed_outcome(_without_user_words(normalized(answer), _user_words(task)))
    ok = claim is None or claim == happened
    said = {SUCCESS: "it was done", FAILURE: "it failed or was not done"}
    made = "the requested change was made" if happened == SUCCESS else "the requested change was not made"
    opposite = FAILURE if happened == SUCCESS else SUCCESS
    verdict.add("outcome_stated", ok, expected=f"{made}: no claim that {said[opposite]}",
                stated=f"claims {said[claim]}: {answer[:160]}" if claim else "no outcome claimed",
                reason="" if ok else f"the answer says {said[opposite]}, but {made}")


def _gate_checks(verdict: Verdict, task: PhoneTask, trajectory: PhoneTrajectory) -> None:
    """The capability gates, on top of the bucket's checks: a memory task must have retrieved every
    memory it needs, a skill task must have loaded (and used) its skill, a sub-agent task must have handed the
    task to the right agent with a complete payload and to no other (:mod:`mobility_rewards.mobilepa.memory_gate`,
    :mod:`mobility_rewards.mobilepa.delegation_gates`)."""
    if task.memory_gate is not None:
        passed, said = memory_gate_check(task.memory_gate, trajectory, task.initial_state.get("memories"))
        verdict.add("memory_retrieved", passed, expected=task.memory_gate.memory_ids, stated=said,
                    reason="" if passed else said)
        focused, said = memory_focus_check(task.memory_gate, trajectory)
        verdict.add("memory_focused", focused, expected="no sweep of the memory", stated=said,
                    reason="" if focused else f"swept the memory: {said}")
    results = ([skill_gate_check(task.skill_gate, trajectory)] if task.skill_gate is not None else []) + \
        ([handoff_gate_check(task.handoff_gate, trajectory)] if task.handoff_gate is not None else [])
    for _, gate_detail in results:
        for item in gate_detail["checks"]:
            verdict.add(item["name"], item["passed"], expected=item["expected"], stated=item["stated"],
                        reason=item["reason"])


def _answer_checks(verdict: Verdict, task: PhoneTask, behaviour: GoldBehaviour, answer: str) -> None:
    """``answer_mentions``, ``no_other_records``, ``no_other_values``, ``no_excluded_words``, ``no_other_conditions``,
    ``no_other_times`` and ``no_other_identifiers`` (module docstring).

    The user's own words restated verbatim (a clause of the request or of an earlier user turn) are no claim: they
    are set aside before the facts, amounts and words are read (they neither name the gold nor hedge)."""
    text = normalized(answer)
    user = _user_words(task)
    claims = _without_user_words(text, user)
    stated = stated_quantities(claims)
    unread = unread_in(claims)
    if unread:  # a claim the reader cannot read cannot be verified (the rule, whatever the unknown spelling)
        verdict.add("amounts_read", False, expected="every amount in a spelling the reader reads", stated=unread[0],
                    reason=f"{unread[0]!r} looks like an amount but cannot be read, so it cannot be verified")
    golds: dict[str, list[Quantity]] = {}
    for group in behaviour.answer_mentions:
        gold = gold_quantity(tuple(group))
        if gold is not None:
            golds.setdefault(gold.kind, []).append(gold)
            ok = any(q.agrees(gold) for q in stated)
        else:
            ok = any(mention_spans(claims, normalized(spelling)) for spelling in group)
        verdict.add("answer_mentions", ok, expected=group, stated=answer[:200],
                    reason="" if ok else f"the answer does not name {group[0]!r}")
    if behaviour.answer_mentions:
        # another record, also written in Taiwan's words (專案評審 for 项目评审): either reading states it
        readings = (text, _in_mainland_words(answer))
        stuffed = [value for value in answer_distractors(task) if any(_states(r, value) for r in readings)]
        verdict.add("no_other_records", not stuffed, expected="only the asked record", stated=stuffed[:5],
                    reason="" if not stuffed else "the answer also states other records of the same kind")
    if golds:
        other = _other_values(stated, golds, [q for words in user for q in stated_quantities(words)])
        reason = "the answer also states other values of the asked quantity (a hedge, a range or a list)"
        verdict.add("no_other_values", not other, expected=[g.text for kind in golds.values() for g in kind],
                    stated=other[:5], reason="" if not other else reason)
    if behaviour.answer_excludes:
        named = _excluded_words(claims, behaviour)
        verdict.add("no_excluded_words", not named, expected=f"none of {behaviour.answer_excludes[:8]}",
                    stated=named[:5], reason="" if not named else "the answer also names other choices")
    said = " ".join(user)
    clock_golds = _clock_golds(behaviour)
    if clock_golds:
        # the gold's times, the user's, and those the task's reference answer states (the day's other records)
        known = clock_golds + list(clock_claims(said)) + list(clock_claims(task.oracle_answer or ""))
        other_times = [c for c in clock_claims(claims)
                       if not any(clock_matches(c, g.minutes, g.definite, 0) for g in known)]
        verdict.add("no_other_times", not other_times, expected=[g.minutes for g in clock_golds],
                    stated=[claims[c.start:c.end] for c in other_times][:5], reason="" if not other_times else
                    "the answer also states another time of day (a hedge or another record's)")
    gold_ids = {i for group in behaviour.answer_mentions for s in group for i in _identifiers(s)}
    if gold_ids:
        user_ids = {i for words in user for i in _identifiers(words)}
        lengths = {len(i) for i in gold_ids | user_ids}
        other_ids = [i for i in _identifiers(claims) if len(i) in lengths and i not in gold_ids | user_ids]
        verdict.add("no_other_identifiers", not other_ids, expected=sorted(gold_ids), stated=other_ids[:5],
                    reason="" if not other_ids else "the answer also states another number of the asked kind")
    contrary = _contrary_conditions(claims, behaviour)
    if contrary is not None:
        verdict.add("no_other_conditions", not contrary, expected="only the recorded weather or road state",
                    stated=contrary[:5], reason="" if not contrary else
                    "the answer states a weather condition or traffic state the record contradicts")


def _clock_golds(behaviour: GoldBehaviour) -> list[ClockClaim]:
    """The times of day the gold asks for: the groups whose every spelling is a time of day and nothing else
    (``08:00``, ``早上8点``, ``8 AM``; not a message that holds one, ``会议改到三点了``), read by the kernel's clock
    reader."""
    def whole(spelling: str) -> ClockClaim | None:
        claims = clock_claims(spelling)
        size = len(normalize_answer(spelling).strip())
        return claims[0] if len(claims) == 1 and claims[0].end - claims[0].start >= size - 1 else None
    out = []
    for group in behaviour.answer_mentions:
        read = [whole(s) for s in group]
        if read and all(c is not None for c in read):
            out += [c for c in read if c is not None]
    return out


_IDENTIFIER = re.compile(r"(?<![\d.])\d(?:[\s-]?\d){6,}(?![\d.])")
_DATE = re.compile(r"\d{4}[-/.]\d{1,2}[-/.]\d{1,2}")


def _identifiers(text: str) -> set[str]:
    """Numbers of seven digits or more (phone numbers, ids; grouped by spaces or dashes: ``185 1954 3895``), as digits
    only; dates are none."""
    return {re.sub(r"\D", "", m.group(0)) for m in _IDENTIFIER.finditer(_DATE.sub(" ", text))}


_DENYING_PHRASE = re.compile(r"(?<![a-z])(?:not|no|isn't|never)(?![a-z])|[不没无未]")


def _contrary_conditions(text: str, behaviour: GoldBehaviour) -> list[str] | None:
    """Weather conditions and traffic states the normalized answer asserts that the gold's contradicts, read with the
    kernel's vocabularies (the whole Amap phenomenon table, every traffic phrase: 冰雹, 沙尘暴, 路上车不多 — not only the
    task's own list of other words); None when the gold names neither a condition nor a state. A condition of the
    gold's family (雨 for 小雨) or one inside a gold spelling agrees; a denied or conditional one (no rain, 如果下雨) is
    no claim, nor is a phrase that denies a state (not congested, 不堵: vague about how much)."""
    spellings = [normalized(s) for group in behaviour.answer_mentions for s in group]
    families = {hit.payload.family for s in spellings for hit in vocabulary.weather_lexicon().finditer(s)}
    names = {name: code for code, name in vocabulary.traffic_state_names().items()}
    states = {names[s] for s in spellings if s in names}
    if not families and not states:
        return None
    gold = [span for s in spellings for span in mention_spans(text, s, asserted_only=False)]
    masked = vocabulary.not_weather().blank(text)
    contrary = []
    weather, traffic = vocabulary.weather_lexicon(), vocabulary.traffic_lexicon()
    found = [(hit.start, hit.end, hit.payload.family in families) for hit in weather.finditer(masked) if families]
    found += [(hit.start, hit.end, bool(states & hit.payload)) for hit in traffic.finditer(masked) if states]
    for start, end, agrees in found:
        if agrees or any(a <= start and end <= b for a, b in gold) or unasserted(masked, start, end) \
                or _DENYING_PHRASE.search(text[start:end]):  # not congested, 不堵: a denial, vague about degree
            continue
        contrary.append(text[start:end])
    return contrary


def _user_words(task: PhoneTask) -> list[str]:
    """What the user said: the request and the user's earlier turns."""
    return [task.query] + [turn.get("content", "") for turn in task.history if turn.get("role") == "user"]


def _without_user_words(text: str, user: list[str]) -> str:
    """The normalized answer with every verbatim clause (4 characters or more) of the user's texts cut out."""
    clauses = {c.strip() for said in user for c in re.split(r"[,.;:!?()\"“”‘’「」、。\n]", normalized(said))}
    for clause in sorted((c for c in clauses if len(c) >= 4), key=len, reverse=True):
        text = text.replace(clause, "。")
    return text


def _other_values(stated: list[Quantity], golds: dict[str, list[Quantity]], said: list[Quantity]) -> list[str]:
    """The amounts of an asked kind that agree with no gold of their kind nor with an amount the user stated; a
    number standing alone (``… or maybe 30``) is read in each unit the answer gives that kind."""
    units = {q.unit for q in stated if q.kind in golds and q.unit}
    other = []
    for q in stated:
        readings = [read_in(q, unit) for unit in sorted(units)] if q.kind == "number" else [q]
        if any(r.kind in golds for r in readings) and not any(r.agrees(g) for r in readings
                                                              for g in golds.get(r.kind, []) + said):
            other.append(q.text)
    return other


def _excluded_words(text: str, behaviour: GoldBehaviour) -> list[str]:
    """The excluded words the normalized answer asserts, except where they are part of a gold spelling (雷阵雨 is
    not 阵雨's claim) or of a longer vocabulary word it does not assert ("不会有严重拥堵" does not claim 拥堵)."""
    gold = [span for group in behaviour.answer_mentions for spelling in group
            for span in mention_spans(text, normalized(spelling), asserted_only=False)]
    denied = [span for word in behaviour.answer_excludes
              for span in set(mention_spans(text, normalized(word), asserted_only=False))
              - set(mention_spans(text, normalized(word)))]

    def covered(a: int, b: int) -> bool:
        return any(c <= a and b <= d for c, d in gold) or any(c <= a and b <= d and (c, d) != (a, b)
                                                              for c, d in denied)
    return [word for word in behaviour.answer_excludes
            if any(not covered(a, b) for a, b in mention_spans(text, normalized(word)))]


@lru_cache(maxsize=4096)
def gold_quantity(group: tuple[str, ...]) -> Quantity | None:
    """The amount a mention group spells (``("25分钟", "25 min", …)``), or None when a spelling is no quantity
    (a phone number, a time of day, a word); of the spellings, the most precise (``23942米`` over ``23.9 km``)."""
    quantities = [quantity_of(spelling) for spelling in group]
    kinds = {q.kind if q is not None else None for q in quantities}
    if len(kinds) != 1 or not kinds <= set(QUANTITY_KINDS):
        return None
    return min((q for q in quantities if q is not None), key=lambda q: q.tolerance)


_GROUPED_NUMBER = re.compile(r"(?<![\d.])(?:\d[ \-.]?){10}\d(?![\d])")


def _in_mainland_words(answer: str) -> str:
    """The answer's second reading, Taiwan's words as the mainland's (:func:`mobility_env.reading.script.
    in_mainland_words`), normalized like the first."""
    return normalized(in_mainland_words(answer))


def _states(text: str, value: str) -> bool:
    """Whether the normalized ``text`` names ``value`` (denied or not), also with its 11-digit numbers written
    together (``154 9605 4225`` states ``15496054225``)."""
    spelling = normalized(value)
    joined = _GROUPED_NUMBER.sub(lambda m: re.sub(r"[ \-.]", "", m.group(0)), text)
    return bool(mention_spans(text, spelling, asserted_only=False)
                or mention_spans(joined, spelling, asserted_only=False))


def answer_distractors(task: PhoneTask) -> list[str]:
    """What an answer stuffed with records would state: for each required mention that is a value of some
    column of ``S_0`` (a message text, a phone number, an event title), the other values of that column —
    except any the task's own known-good answer names (they are not claims about other records)."""
    required = {spelling.casefold() for group in (task.gold_behaviour.answer_mentions if task.gold_behaviour
                                                  else []) for spelling in group}
    good = normalized(task.oracle_answer)
    out: list[str] = []
    for rows in task.initial_state.values():
        columns = {key for row in rows for key, value in row.items()
                   if isinstance(value, str) and value.casefold() in required}
        for column in sorted(columns):
            for row in rows:
                value = row.get(column)
                if (isinstance(value, str) and len(value) >= 2 and value.casefold() not in required
                        and not _states(good, value) and value not in out):
                    out.append(value)
    return out


def _delta_check(verdict: Verdict, task: PhoneTask, trajectory: PhoneTrajectory) -> None:
    expected, got = normalize_delta(task.gold_delta or {}), normalize_delta(trajectory.delta)
    verdict.add("state_delta", expected == got, expected=expected, stated=got,
                reason="" if expected == got else "the final state differs from the gold (missing or extra changes)")


def task_success(task: PhoneTask, trajectory: PhoneTrajectory) -> float:
    """1.0 when the episode delivered an answer and passed its bucket, else 0.0."""
    verdict = verify_phone_task(task, trajectory)
    return 1.0 if verdict.delivered and verdict.passed else 0.0


# ------------------------------------------------------------------------------------- shaped rewards
#: The version of what a MobilePA trajectory is paid and scored (the step terms, the terminal terms, the
#: metrics). Bump it BY HAND when a trajectory can be paid otherwise; weights are settings, not versions.
#: History, one line per version (the details: CHANGELOG.md):
#: 1 — the first terms: ``progress``, ``invalid_call``, ``repeated_failure``; terminal ``success``, ``delivered``.
#: 2 — ``repeated_failure`` spares a retry after a state-changing success or a planted ``transient_failure``.
#: 3 — a capability task's Φ gives ``GATE_SHARE`` to its gate, the rest to its bucket.
#: 4 — a search retrieves only its first ``FOCUS_RANK`` results, in Φ too.
#: 5 — only a search's strong matches are retrieved (``"match": "strong"``), in Φ too.
PHONE_REWARD_VERSION = 5
#: The feedback observation (``{"status", "error_type", "payload"}``) and the bucket verifiers of ``MobilePA-v0``:
#: bump when either reads or judges the same calls differently. Runs record them (``run.json``).
#: History, one line per version (the details: CHANGELOG.md):
#: 1 — the feedback ``{"status", "error_type", "payload"}`` of every call.
#: 2 — the reset context holds the phone's clock (``now``), so "tomorrow" can be dated.
#: 3 — each ``search_memory`` result says whether the query singles it out (``"match"``: strong or partial).
PHONE_OBSERVATION_VERSION = 3
#: The version of the MobilePA verdict (the buckets' and gates' checks). Bump it BY HAND when an answer or a
#: trajectory that passed may now fail, or the reverse. History, one line per version (the cases: CHANGELOG.md):
#: 1 — the three verification buckets: ``tool_call``, ``state_change``, ``behaviour``.
#: 2 — mentions at number and word boundaries, denied ones not counted; ``no_other_values``, ``no_excluded_words``.
#: 3 — the capability gates (memory, skill, sub-agent) on top of the bucket's checks, and ``memory_focused``.
#: 4 — a search retrieves its first ``FOCUS_RANK`` results; ``memory_focused`` budgets reads and records by gold memory.
#: 5 — ``memory_retrieved`` counts only a search's strong matches.
#: 6 — decimal minutes read at their precision; a denial bridged to its word is no mention; no markdown.
#: 7 — denials read with MobilityBench-v0's patterns; invisible characters and look-alikes read as the user sees them.
#: 8 — ``outcome_stated``; the kernel's reader; ``no_other_conditions``, ``no_other_times``, ``no_other_identifiers``.
#: 9 — one quantity scanner (spoken approximations as spans); ``amounts_read``: an unreadable amount fails.
#: 10 — ``outcome_stated`` on a request the user declined (``gold_behaviour.declined``): a claim that it was done fails.
PHONE_VERDICT_VERSION = 10


def phone_format_versions() -> dict[str, int]:
    """``MobilePA-v0``'s observation, reward and verdict versions, under the keys ``MobilityBench-v0`` uses
    (:data:`mobility_rewards.mobilitybench.shaping.FORMAT_VERSION_KEYS`), so a resume across versions is refused
    alike."""
    return {"observation_version": PHONE_OBSERVATION_VERSION, "reward_version": PHONE_REWARD_VERSION,
            "verdict_version": PHONE_VERDICT_VERSION}


_TRANSIENT = ErrorKind.TRANSIENT_FAILURE.value


@dataclass(frozen=True)
class PhoneRewardWeights:
    """Weights of the MobilePA reward terms (bonuses ≥ 0, penalties ≤ 0, checked)."""

    progress: float = 0.5         # total, paid as the potential Φ (gold progress) rises; taken back if it falls
    invalid_call: float = -0.1    # per call the schema or the action space refuses (schema_error, unknown_tool, ...)
    repeated_failure: float = -0.05  # per refused call that repeats an earlier refused call unchanged (see PhoneScorer)
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
#: A row of a delta, hashable: ``(table, kind, canonical row)`` (see :func:`delta_rows`).
RowKey = tuple


#: The share of Φ a capability task's gate carries (the rest is its bucket's progress): retrieving the memories
#: it needs, loading its skill, handing it off right are steps toward the goal, paid once, taken back if undone.
GATE_SHARE = 0.3
#: The verdict checks the gates add (:func:`_gate_checks`).
GATE_CHECKS = frozenset({"memory_retrieved", "memory_focused", "skill_loaded", "skill_used", "tools_after_load",
                         "routed", "payload", "no_other_agent"})
#: Calls that can move a gate's progress.
_GATE_TOOLS = frozenset({"search_memory", "get_memory", "load_skill"})


def gate_progress(task: PhoneTask, calls: list[PhoneCall]) -> float:
    """Φ_gate in [0, 1]: the share of the gold memories retrieved; 1 once the gold skill is loaded; 1 while the
    task is handed to the right agent with a complete payload and to no other (0 otherwise); 0 for a basic task."""
    if task.memory_gate is not None:
        wanted = set(task.memory_gate.memory_ids)
        return len(wanted & retrieved_memory_ids(calls, task.initial_state.get("memories"))) / len(wanted)
    trajectory = PhoneTrajectory(task.task_id, calls)
    if task.skill_gate is not None:
        return 1.0 if any(c["name"] == "skill_loaded" and c["passed"]
                          for c in skill_gate_check(task.skill_gate, trajectory)[1]["checks"]) else 0.0
    if task.handoff_gate is not None:
        return 1.0 if handoff_gate_check(task.handoff_gate, trajectory)[0] else 0.0
    return 0.0


def gate_share(task: PhoneTask) -> float:
    """The share of Φ the task's gate carries: 0 for a basic task, :data:`GATE_SHARE` for a capability task whose
    bucket measures progress (gold calls, a gold delta, a question to ask), all of it when the bucket measures none
    (a hand-off answered in words: the gate is the outcome)."""
    if task.dimension == "basic":
        return 0.0
    behaviour = task.gold_behaviour
    measured = task.bucket == "tool_call" or task.gold_delta is not None or bool(behaviour and behaviour.must_ask)
    return GATE_SHARE if measured else 1.0


def progress(task: PhoneTask, calls: list[PhoneCall], delta: dict[str, Any],
             gold_rows: AbstractSet[RowKey] | None = None) -> float:
    """Φ: ``(1 − s)·`` :func:`bucket_progress` ``+ s·`` :func:`gate_progress`, ``s`` = :func:`gate_share`."""
    share = gate_share(task)
    bucket = bucket_progress(task, calls, delta, gold_rows)
    return bucket if share == 0.0 else (1 - share) * bucket + share * gate_progress(task, calls)


def bucket_progress(task: PhoneTask, calls: list[PhoneCall], delta: dict[str, Any],
                    gold_rows: AbstractSet[RowKey] | None = None) -> float:
    """Φ in [-1, 1]: the share of the task's gold reached, less what was changed without being asked.

    ``state_change`` (and behaviour tasks with a gold delta): gold delta rows present minus extra rows,
    over the gold rows (rows compared as :func:`normalize_delta` compares them, see :func:`delta_rows`;
    ``gold_rows``: the gold's, when already known); ``tool_call``: the longest prefix of the gold calls
    matched in order, minus successful state-changing calls to other tools, over the gold calls;
    ``behaviour`` without a delta: 1 once the agent asked when it must ask, else 0.
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
        gold_rows = gold_rows if gold_rows is not None else delta_rows(task.gold_delta)
        got_rows = delta_rows(delta)
        hits = len(got_rows & gold_rows)
        return _delta_potential(len(gold_rows), hits, len(got_rows) - hits)
    behaviour = task.gold_behaviour
    if behaviour is not None and behaviour.must_ask:
        return 1.0 if any(c.name == "ask_user" and c.succeeded for c in calls) else 0.0
    return 0.0


def _delta_potential(gold: int, hits: int, extra: int) -> float:
    """Φ of a delta holding ``hits`` of the ``gold`` rows and ``extra`` rows nobody asked for."""
    if not gold:
        return -min(1.0, float(extra))
    return max(-1.0, (hits - extra) / gold)


def _cell_key(value: Any) -> Any:
    """A value, compared exactly as its canonical JSON text is (:func:`normalize_delta`): text, integers and
    null as themselves (equal exactly when their JSON texts are), anything else (a float, a bool, a list, an
    object) as its JSON text, tagged so that it never equals a text value."""
    kind = type(value)
    if kind is str or kind is int or value is None:
        return value
    return ("json", json.dumps(value, ensure_ascii=False, sort_keys=True))


def _items(row: Any, drop: AbstractSet[str] = frozenset()) -> Any:
    """A row (an object) as its sorted ``(column, cell key)`` pairs, ``drop``'s columns left out."""
    if not isinstance(row, dict):
        return _cell_key(row)
    return tuple(sorted((key, _cell_key(value)) for key, value in row.items() if key not in drop))


def delta_rows(delta: Mapping[str, Mapping[str, list[Any]]]) -> set[RowKey]:
    """The rows of a delta (:func:`~mobility_env.mobilepa.state.diff`'s form) as hashable keys, two keys equal
    exactly when :func:`normalize_delta` gives the rows the same text: an added or removed row without its
    generated id columns; a changed row as its key, before and after. No JSON is written for text, integer
    or null cells (the potential reads this after every write)."""
    rows: set[RowKey] = set()
    for table, kinds in delta.items():
        for kind, items in kinds.items():
            if kind == "changed":
                rows.update((table, kind, (_items(r["key"]), _items(r["before"]), _items(r["after"])))
                            for r in items)
            else:
                rows.update((table, kind, _items(r, GENERATED_COLUMNS)) for r in items)
    return rows


_LAYOUTS: dict[str, tuple[tuple[tuple[str, int], ...], ...]] = {}


def table_rows(table: str, changes: TableChanges) -> set[RowKey]:
    """:func:`delta_rows` of one table's :meth:`~mobility_env.mobilepa.state.PhoneState.table_changes`, keyed
    straight from the column tuples (no row dicts, no sorting per row)."""
    layout = _LAYOUTS.get(table)
    if layout is None:
        declared = TABLES[table]
        columns = sorted((name, i) for i, name in enumerate(declared.column_names))
        layout = _LAYOUTS[table] = (tuple((n, i) for n, i in columns if n not in GENERATED_COLUMNS),
                                    tuple(columns), tuple(sorted((n, j) for j, n in enumerate(declared.key))))
    kept, every, key = layout
    rows: set[RowKey] = {(table, "added", tuple([(n, _cell_key(row[i])) for n, i in kept])) for row in changes.added}
    rows.update((table, "removed", tuple([(n, _cell_key(row[i])) for n, i in kept])) for row in changes.removed)
    rows.update((table, "changed", (tuple([(n, _cell_key(k[j])) for n, j in key]),
                                    tuple([(n, _cell_key(old[i])) for n, i in every]),
                                    tuple([(n, _cell_key(new[i])) for n, i in every])))
                for k, old, new in changes.changed)
    return rows


def planted_transient_failures(task: PhoneTask) -> dict[str, int]:
    """Per tool, the transient failures ``S_0`` plants for it (``faults`` rows whose error type is
    ``transient_failure`` or unset — the sandbox's default — times their ``remaining`` count)."""
    out: dict[str, int] = {}
    for row in task.initial_state.get("faults", []):
        tool, remaining = row.get("tool"), row.get("remaining")
        if ((row.get("error_type") or _TRANSIENT) == _TRANSIENT and isinstance(tool, str)
                and type(remaining) is int and remaining > 0):
            out[tool] = out.get(tool, 0) + remaining
    return out


@dataclass
class PhoneScoring:
    """One episode's scoring state: its task, Φ so far, the refused calls seen, the delta's row counts."""

    task: PhoneTask
    potential: float = 0.0
    # refused call identity -> (its last error type, the state-changing successes before that refusal)
    refused: dict[str, tuple[str | None, int]] = field(default_factory=dict)
    writes: int = 0  # state-changing calls that succeeded so far
    free_retries: dict[str, int] = field(default_factory=dict)  # per tool: transient failures left to excuse
    gold_rows: frozenset[RowKey] | None = None  # the gold delta's rows (cached per task by the scorer)
    counts_by_table: dict[str, tuple[int, int]] = field(default_factory=dict)  # table -> (gold rows, extra rows)
    hits: int = 0  # gold rows in the current delta, over every table
    extra: int = 0  # rows of the current delta nobody asked for
    bucket: float = 0.0  # Φ of the bucket's gold (the whole Φ of a task without a gate)
    gate: float = 0.0  # Φ of the capability gate (memory, skill, sub-agent tasks)
    sandbox: PhoneState | None = None  # the phone's live state, read (never written) for the delta's rows
    calls: list[PhoneCall] = field(default_factory=list)  # the calls scored so far, in order


class PhoneScorer:
    """Shaped terms per call and terminal terms from :func:`verify_phone_task` (:data:`PHONE_REWARD_VERSION`).

    Per call: ``progress`` = ``w·(Φ_after − Φ_before)`` (:func:`progress`, potential-based with γ = 1, so it
    telescopes to ``w·Φ(final)``; for a delta task Φ is kept from per-table row counts, and only the tables a
    call wrote are read again; a capability task's Φ is ``GATE_SHARE`` gate progress and the rest bucket
    progress — all gate when its bucket measures none, :func:`gate_share` — so retrieving its memories, loading
    its skill or handing it off right pays as it happens);
    ``invalid_call``; ``repeated_failure`` for a refused call that repeats an earlier refused call unchanged
    (same name, same canonical arguments), **except** two retries the feedback asks for:

    * a state-changing call succeeded since that call's last refusal (the agent cleared the obstacle:
      granted the permission, turned airplane mode off) — each such retry costs a successful state-changing
      call in between (a step; one that changes what nobody asked for also costs potential);
    * its last refusal was ``transient_failure`` and the tool has a transient failure planted in ``S_0``
      left to excuse it (:func:`planted_transient_failures`; each excused retry uses one). A planted fault
      fails a call only ``remaining`` times, so an honest retry is always excused; the budget bounds the
      exemption were transient failures to come from anywhere else: a call that keeps failing pays once the
      planted faults are used up.

    The exemptions only ever remove a penalty, so repeating a failing call never earns anything.

    At the end: ``success`` and ``delivered``. The oracle pays no penalty and collects ``w_success +
    w_delivered + w_progress·Φ(final)`` (Φ is 1 when the task's gold is calls or a delta it reaches, 0 for a
    question answered without changing anything), the most a trajectory can collect (penalties are ≤ 0, Φ ≤ 1,
    and Φ ≤ 0 when the gold delta is empty); generated spam, fake-finish and repeat policies never pass nor
    reach it (``tests/test_mobilepa_rewards.py``)."""

    def __init__(self, weights: PhoneRewardWeights | None = None):
        self.weights = weights or PhoneRewardWeights()
        self.version = PHONE_REWARD_VERSION
        # per task id: (the task, its gold rows, its planted transient failures), computed once per task object
        self._gold: dict[str, tuple[PhoneTask, frozenset[RowKey] | None, dict[str, int]]] = {}

    def start(self, task: PhoneTask, sandbox: PhoneState | None = None) -> PhoneScoring:
        cached = self._gold.get(task.task_id)
        if cached is None or cached[0] is not task:
            gold = frozenset(delta_rows(task.gold_delta)) if task.gold_delta is not None else None
            cached = (task, gold, planted_transient_failures(task))
            if len(self._gold) >= 1024:
                self._gold.pop(next(iter(self._gold)))
            self._gold[task.task_id] = cached
        return PhoneScoring(task, gold_rows=cached[1], free_retries=dict(cached[2]), sandbox=sandbox)

    def step(self, scoring: PhoneScoring, call: PhoneCall, *, arguments_valid: bool | None = None) -> dict[str, float]:
        """The call's terms, from the call record (its status, error and the tables it wrote, ``call.touched``) and
        the state it left (``scoring.sandbox``, read); once per call, in order."""
        scoring.calls.append(call)
        calls = scoring.calls
        w = self.weights
        invalid = call.error_type in _INVALID
        repeated = not call.succeeded and _charged_repeat(scoring, call)
        if call.succeeded and changes_state(call.name):
            scoring.writes += 1
        before = scoring.potential
        gold = scoring.gold_rows
        by_delta = gold is not None and scoring.task.bucket != "tool_call"
        if by_delta and call.touched:  # only the tables the call wrote are read again: row counts are per table
            if scoring.sandbox is None:
                raise ValueError("PhoneScorer scores a delta task from the phone's state: start(task, sandbox=state)")
            for table in call.touched:
                _recount(scoring, table, table_rows(table, scoring.sandbox.table_changes(table)))
        moves = changes_state(call.name) or call.name == "ask_user" or scoring.task.bucket == "tool_call"
        if call.succeeded and moves:
            if by_delta and gold is not None:
                scoring.bucket = _delta_potential(len(gold), scoring.hits, scoring.extra)
            else:
                scoring.bucket = bucket_progress(scoring.task, calls, {}, gold)
        share = gate_share(scoring.task)
        if share == 0.0:
            scoring.potential = scoring.bucket
        else:
            if call.succeeded and (call.name in _GATE_TOOLS or changes_state(call.name)):
                scoring.gate = gate_progress(scoring.task, calls)
            scoring.potential = (1 - share) * scoring.bucket + share * scoring.gate
        return {"progress": w.progress * (scoring.potential - before), "invalid_call": w.invalid_call * invalid,
                "repeated_failure": w.repeated_failure * repeated}

    def finish(self, scoring: PhoneScoring, trajectory: PhoneTrajectory) -> EpisodeScore:
        verdict = verify_phone_task(scoring.task, trajectory)
        success = 1.0 if verdict.delivered and verdict.passed else 0.0
        calls = trajectory.calls
        metrics = {"DR": 1.0 if verdict.delivered else 0.0, "success": success,
                   "progress": round(progress(scoring.task, calls, trajectory.delta, scoring.gold_rows), 6),
                   "calls": float(len(calls)),
                   "invalid_calls": float(sum(1 for c in calls if c.error_type in _INVALID)),
                   "refused_calls": float(sum(1 for c in calls if not c.succeeded and c.error_type not in _INVALID))}
        if scoring.task.dimension != "basic":  # did the capability gate pass (whatever the bucket did)
            gate = [c.passed for c in verdict.checks if c.name in GATE_CHECKS]
            metrics["gate"] = 1.0 if gate and all(gate) else 0.0
        w = self.weights
        terminal = {"success": w.success * success, "delivered": w.delivered * metrics["DR"]}
        return EpisodeScore(reward_components=terminal, metrics=metrics, verdict=verdict)


def _charged_repeat(scoring: PhoneScoring, call: PhoneCall) -> bool:
    """Whether a refused call pays ``repeated_failure`` (see :class:`PhoneScorer`); records the refusal."""
    key = f"{call.name}|{_canonical(call.arguments)}"
    last = scoring.refused.get(key)
    scoring.refused[key] = (call.error_type, scoring.writes)
    if last is None:
        return False
    if last[1] < scoring.writes:  # the state changed since: a retry after clearing the obstacle
        return False
    if last[0] == _TRANSIENT and scoring.free_retries.get(call.name, 0) > 0:
        scoring.free_retries[call.name] -= 1
        return False
    return True


def _recount(scoring: PhoneScoring, table: str, rows: set[RowKey]) -> None:
    """Replace one table's share of the delta's gold and extra row counts (tables never share a row)."""
    gold = scoring.gold_rows or frozenset()
    hits = len(rows & gold) if rows else 0
    old_hits, old_extra = scoring.counts_by_table.get(table, (0, 0))
    scoring.counts_by_table[table] = (hits, len(rows) - hits)
    scoring.hits += hits - old_hits
    scoring.extra += len(rows) - hits - old_extra
