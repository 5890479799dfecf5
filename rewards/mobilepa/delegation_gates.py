"""The skill and sub-agent gates: pure checks of a :class:`~mobility_env.mobilepa.episode.PhoneTrajectory`.

A gate sits on top of a task's bucket checker: a skill or sub-agent task passes only if both pass. Each
function returns ``(passed, detail)``; ``detail["checks"]`` lists named checks
``{"name", "passed", "expected", "stated", "reason"}`` in :meth:`mobility_rewards.verdict.Verdict.add`'s
terms, so a verifier can add each one to the episode's verdict; ``detail["reason"]`` is the first failure.
Only successful calls count: a refused call changed nothing.

:func:`skill_gate_check` (:class:`~mobility_env.mobilepa.tasks.SkillGate`):

* ``skill_loaded`` — ``load_skill`` of the gold skill succeeded;
* ``skill_used`` — one of the skill's tools succeeded after that load (a load that is never acted on does
  not count as using the skill);
* ``skill_only`` routing also ``tools_after_load`` — none of the skill's tools succeeded before the load
  (with the skill's tools kept out of ``A_0`` this holds by construction; a task whose ``A_0`` leaks them
  fails here instead of passing unnoticed).
  Refused attempts before the load (``unknown_tool``) changed nothing and are left to the step penalties.

:func:`handoff_gate_check` (:class:`~mobility_env.mobilepa.tasks.HandoffGate`):

* ``routed`` — exactly one successful call to the gold entry tool (none: not delegated; two: the task was
  handed off twice, e.g. two rides);
* ``payload`` — in that call, every gold field is present and names one of its accepted values
  (:func:`payload_value_matches`);
* ``no_other_agent`` — no other sub-agent (:data:`~mobility_env.mobilepa.domains.subagents.SUB_AGENTS`)
  got a successful handoff: delegating everything fails.

**Matching** (decided here): values are compared after Unicode NFKC, case folding and whitespace
collapsing, numbers and booleans as their JSON text. A ``value`` field (a place, a date, an enum, a
count) must equal an accepted value as a whole, so ``"北京"`` does not match ``"北京西站"`` and a field
stuffed with several candidates (``"home or office"``) matches none. A ``text`` field (an instruction,
the items of an order) matches when an accepted phrase occurs in it at a boundary: an accepted phrase that
starts or ends with a Latin letter or digit must not continue into one (``"cat"`` is not found in
``"category"``), while a CJK edge needs none (Chinese has no spaces: ``"猫粮"`` is found in ``"买一袋猫粮"``).
"""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any

from mobility_env.mobilepa.domains.subagents import SUB_AGENTS
from mobility_env.mobilepa.episode import PhoneCall, PhoneTrajectory
from mobility_env.mobilepa.skills import LOAD_SKILL, SKILLS
from mobility_env.mobilepa.tasks import HandoffGate, SkillGate

GateResult = tuple[bool, dict[str, Any]]
_SPACES = re.compile(r"\s+")


def _check(name: str, passed: bool, expected: Any, stated: Any, reason: str) -> dict[str, Any]:
    return {"name": name, "passed": bool(passed), "expected": expected, "stated": stated,
            "reason": "" if passed else reason}


def _result(checks: list[dict[str, Any]], **extra: Any) -> GateResult:
    passed = bool(checks) and all(c["passed"] for c in checks)
    reason = next((c["reason"] for c in checks if not c["passed"]), "")
    return passed, {"checks": checks, "reason": reason, **extra}


def normalize_value(value: Any) -> str:
    """A payload value as compared: JSON text for non-strings, then NFKC, case-folded, whitespace collapsed."""
    raw = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return _SPACES.sub(" ", unicodedata.normalize("NFKC", raw).casefold()).strip()


def _latin(char: str) -> bool:
    return char.isascii() and char.isalnum()


def _phrase_in(phrase: str, text: str) -> bool:
    start = text.find(phrase)
    while start != -1:
        end = start + len(phrase)
        left_ok = start == 0 or not (_latin(phrase[0]) and _latin(text[start - 1]))
        right_ok = end == len(text) or not (_latin(phrase[-1]) and _latin(text[end]))
        if left_ok and right_ok:
            return True
        start = text.find(phrase, start + 1)
    return False


def payload_value_matches(value: Any, accepted: list[str], match: str = "value") -> bool:
    """Whether ``value`` names one of ``accepted`` (see the module docstring's *Matching*); an absent value
    (None) or an empty accepted list never matches."""
    if value is None:
        return False
    given = normalize_value(value)
    for option in accepted:
        wanted = normalize_value(option)
        if wanted and (given == wanted or (match == "text" and _phrase_in(wanted, given))):
            return True
    return False


def skill_gate_check(gate: SkillGate, trajectory: PhoneTrajectory) -> GateResult:
    """Whether the trajectory loaded and used the gate's skill as its routing requires (module docstring)."""
    skill = SKILLS.get(gate.skill_id)
    if skill is None:
        return _result([_check("skill_loaded", False, gate.skill_id, "", f"the gate names unknown skill "
                               f"{gate.skill_id!r}")])
    calls = trajectory.calls
    loads = [i for i, c in enumerate(calls) if c.name == LOAD_SKILL and c.succeeded]
    loaded = [str(calls[i].payload.get("skill_id")) for i in loads]
    first = next((i for i in loads if calls[i].payload.get("skill_id") == skill.skill_id), None)
    checks = [_check("skill_loaded", first is not None, skill.skill_id, loaded,
                     f"the skill {skill.skill_id} was never loaded")]
    after = [c.name for c in calls[first + 1:] if c.succeeded and c.name in skill.tools] if first is not None else []
    checks.append(_check("skill_used", bool(after), f"one of {list(skill.tools)} after the load", after,
                         f"none of {skill.skill_id}'s tools succeeded after loading it"))
    if gate.routing == "skill_only":
        before = [c.name for c in calls[:len(calls) if first is None else first] if c.succeeded and
                  c.name in skill.tools]
        checks.append(_check("tools_after_load", not before, "the skill's tools only after loading it", before,
                             f"{skill.skill_id}'s tools were used without loading it first"))
    return _result(checks, skills_loaded=loaded)


def _arguments(call: PhoneCall) -> dict[str, Any]:
    return call.arguments if isinstance(call.arguments, dict) else {}


def handoff_gate_check(gate: HandoffGate, trajectory: PhoneTrajectory) -> GateResult:
    """Whether the gate's sub-agent, and no other, got the task once with a complete payload (module docstring)."""
    agent = SUB_AGENTS.get(gate.agent)
    if agent is None:
        return _result([_check("routed", False, gate.agent, "", f"the gate names unknown sub-agent "
                               f"{gate.agent!r}")])
    handoffs = [c for c in trajectory.calls if c.succeeded and c.name in SUB_AGENTS]
    mine = [c for c in handoffs if c.name == agent.tool]
    others = [c.name for c in handoffs if c.name != agent.tool]
    checks = [_check("routed", len(mine) == 1, f"one handoff to {agent.tool}", len(mine),
                     f"{agent.tool} got {len(mine)} handoffs, not one")]
    if mine:
        arguments = _arguments(mine[0])
        wrong: dict[str, Any] = {}
        for name, accepted in gate.payload.items():
            field = agent.field(name)
            match = field.match if field is not None else "value"
            if field is None or not payload_value_matches(arguments.get(name), accepted, match):
                wrong[name] = arguments.get(name)
        checks.append(_check("payload", not wrong, gate.payload, {k: arguments.get(k) for k in gate.payload},
                             "missing or wrong payload field(s): " + ", ".join(wrong)))
    else:
        checks.append(_check("payload", False, gate.payload, None, f"no handoff to {agent.tool} to check"))
    checks.append(_check("no_other_agent", not others, f"only {agent.tool}", others,
                         "the task was also handed to " + ", ".join(dict.fromkeys(others))))
    return _result(checks)
