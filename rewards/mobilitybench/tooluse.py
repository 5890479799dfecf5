"""Tool use: TS_P, TS_R (the paper's, over tool-name sets), CALL_NR (call level), SC, PF.

Definitions used by the metrics *and* by :mod:`mobility_rewards.mobilitybench.shaping` (one definition each):

* a call **selects** a tool when it names a registered tool and passes schema validation;
  a replay miss (``no_cached_result``) still counts as selecting the tool — TS is about
  choosing tools, PF and FPR judge what came back.
* a call's **identity** (:func:`call_identity`) is the sandbox's exact-match key: the tool
  plus :func:`mobility_env.canonical.canonical_request`'s ``key`` (cities without suffix,
  coordinates to 6 decimals, driving strategies as sorted canonical sets, bus codes as
  text, waypoints in order), so two calls the sandbox serves from the same exact entry are
  the same call. A schema-invalid call has no canonical key: its identity is the tool plus
  its arguments as sorted JSON.
* a call is **redundant** when its identity repeats an earlier call's, or it calls a tool
  the gold does not use (unknown tools and unparseable actions included).

Formulas (``T_gold`` = the set of the gold calls' tools, ``T_pred`` = the set of tools the
agent's calls selected):

* ``TS_P = |T_gold ∩ T_pred| / |T_gold|`` (the paper's tool-selection precision: the
  required tools that were chosen).
* ``TS_R = |T_gold ∩ T_pred| / |T_pred|`` (the paper's tool-selection recall: the chosen
  tools that were required).
* ``CALL_NR = 1 − redundant calls / all calls`` (extra, stricter than TS_R: every repeated
  call and every call to a tool the gold does not use counts, not just distinct tools).
* ``SC = mean over calls of [required present × types/ranges valid × no extra fields]``, a call
  scoring 1 when :func:`mobility_env.tools.validate_call` finds nothing, the env recorded no
  ``schema_errors`` and the action was a parseable call to a known tool.
* ``PF = matched / total`` over the *task arguments* of every gold call (the tool's required
  arguments plus ``strategy``, ``waypoints``, ``need_forecast`` and search ``keywords`` when the
  gold sets them; ``query_poi.city`` is left out because the data fills it with the user's
  city, not the place's). Each gold call is paired with the not-yet-paired agent call of the
  same tool that matches most of its arguments. Values match by :func:`argument_matches`:
  coordinates within :data:`COORDINATE_TOLERANCE_M`, names fuzzily, strategies as canonical
  sets, flags as booleans.

Edge cases (no free passes), when the gold has calls: no tool selected -> TS_P = TS_R = 0;
no calls at all -> also CALL_NR = SC = PF = 0. When the gold has no calls: TS_P = PF = 1,
TS_R = 1 if no tool was selected either, else 0; CALL_NR and SC by their formulas (1 for no
calls).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Iterable

from mobility_env.canonical import canonical_flag, canonical_request
from mobility_env.mobilitybench.episode import Episode
from mobility_env.geo import haversine_m
from mobility_env.tools import TOOLS, canonical_tool_name, validate_call
from mobility_env.mobilitybench.trajectory import CallRecord

from .slots import canonical_strategy_set, city_key, point_of, same_place_name

COORDINATE_TOLERANCE_M = 500.0
_TASK_OPTIONALS = {"strategy", "waypoints", "need_forecast"}


@dataclass(frozen=True)
class CallFacts:
    """What the tool-use metrics need from one call, computed once."""

    tool: str | None  # registered tool name (aliases resolved), None when unknown/unparseable
    schema_ok: bool
    key: str  # the call's identity (see call_identity)

    @property
    def selected(self) -> str | None:
        return self.tool if self.schema_ok else None


def call_tool(call: CallRecord) -> str | None:
    tool = canonical_tool_name(call.name)
    return None if tool == "finish" else tool


def call_schema_ok(call: CallRecord, *, arguments_valid: bool | None = None) -> bool:
    """The SC indicator of one call (see the module docstring); ``arguments_valid`` as in :func:`facts_of`."""
    tool = call_tool(call)
    if tool is None or not isinstance(call.arguments, dict) or call.schema_errors:
        return False
    kind = call.error_kind
    if kind is not None and kind.is_bad_action:
        return False
    return arguments_valid if arguments_valid is not None else not validate_call(tool, call.arguments)


def call_identity(tool: str | None, arguments: Any, *, valid: bool | None = None) -> str:
    """A call's identity (module docstring): ``tool|canonical key`` when the call is schema-valid,
    else ``tool|json:<sorted arguments>``. ``valid``: the caller's ``validate_call`` verdict, if known.

    >>> call_identity("weather_query", {"city": "北京市"}) == call_identity("weather_query", {"city": "北京"})
    True
    """
    tool = canonical_tool_name(tool) if isinstance(tool, str) else None
    if tool is not None and tool != "finish" and isinstance(arguments, dict):
        if valid is None:
            valid = not validate_call(tool, arguments)
        if valid:
            request = canonical_request(tool, arguments)
            return f"{request.tool}|{request.key}"
    return f"{tool}|json:{_json_text(arguments)}"


def facts_of(call: CallRecord, *, arguments_valid: bool | None = None) -> CallFacts:
    """Tool, schema verdict and identity (:func:`call_identity`) of a call.

    ``arguments_valid``: the verdict of ``validate_call(tool, call.arguments)`` when the caller
    already has it (the env validates every call before replaying it), so it is not run twice.
    """
    tool = call_tool(call)
    schema_ok = call_schema_ok(call, arguments_valid=arguments_valid)
    if schema_ok and call.canonical_key is not None:  # the env's sandbox canonicalized it already
        key = f"{tool}|{call.canonical_key}"
    elif schema_ok:
        key = call_identity(tool, call.arguments, valid=True)
    else:
        key = f"{tool or call.name}|json:{_json_text(call.arguments)}"
    return CallFacts(tool, schema_ok, key)


def _json_text(arguments: Any) -> str:
    try:
        return json.dumps(arguments, sort_keys=True, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(arguments)


def gold_tools(episode: Episode) -> frozenset[str]:
    """T_gold: the set of the gold calls' tools."""
    return frozenset(call.name for call in episode.gold_calls)


def is_redundant(facts: CallFacts, earlier_keys: set[str], needed_tools: frozenset[str]) -> bool:
    """A repeat of an earlier call's identity, or a tool the gold does not need."""
    return facts.tool is None or facts.tool not in needed_tools or facts.key in earlier_keys


def _facts(calls: list[CallRecord], facts: list[CallFacts] | None) -> list[CallFacts]:
    return facts if facts is not None else [facts_of(call) for call in calls]


def selected_tools(facts: Iterable[CallFacts]) -> frozenset[str]:
    """T_pred: the set of tools the calls selected."""
    return frozenset(f.selected for f in facts if f.selected)


def tool_selection_precision(episode: Episode, calls: list[CallRecord], facts: list[CallFacts] | None = None) -> float:
    """TS_P = |T_gold ∩ T_pred| / |T_gold| (1 when the gold uses no tool)."""
    gold = gold_tools(episode)
    if not gold:
        return 1.0
    return len(gold & selected_tools(_facts(calls, facts))) / len(gold)


def tool_selection_recall(episode: Episode, calls: list[CallRecord], facts: list[CallFacts] | None = None) -> float:
    """TS_R = |T_gold ∩ T_pred| / |T_pred| (no tool selected: 1 when the gold uses none, else 0)."""
    gold, selected = gold_tools(episode), selected_tools(_facts(calls, facts))
    if not selected:
        return 0.0 if gold else 1.0
    return len(gold & selected) / len(selected)


def call_non_redundancy(episode: Episode, calls: list[CallRecord], facts: list[CallFacts] | None = None) -> float:
    """CALL_NR = 1 − redundant calls / all calls (no calls: 0 when the gold has calls, else 1)."""
    if not calls:
        return 0.0 if episode.gold_calls else 1.0
    needed = gold_tools(episode)
    seen: set[str] = set()
    redundant = 0
    for fact in _facts(calls, facts):
        redundant += is_redundant(fact, seen, needed)
        seen.add(fact.key)
    return 1.0 - redundant / len(calls)


def schema_compliance(episode: Episode, calls: list[CallRecord], facts: list[CallFacts] | None = None) -> float:
    """SC."""
    if not calls:
        return 0.0 if episode.gold_calls else 1.0
    return sum(f.schema_ok for f in _facts(calls, facts)) / len(calls)


def task_arguments(tool: str, gold_arguments: dict[str, Any]) -> list[str]:
    """The gold call's arguments PF checks (see the module docstring)."""
    spec = TOOLS[tool]
    names = [p for p in spec.required]
    for name in _TASK_OPTIONALS:
        if gold_arguments.get(name) not in (None, "", []):
            names.append(name)
    if tool == "search_around_poi" and gold_arguments.get("keywords"):
        names.append("keywords")
    return [n for n in dict.fromkeys(names) if n in gold_arguments or n in spec.required]


def _coordinate_close(a: Any, b: Any, tolerance_m: float) -> bool:
    pa, pb = point_of(a), point_of(b)
    return pa is not None and pb is not None and haversine_m(pa, pb) <= tolerance_m


def argument_matches(tool: str, name: str, agent_value: Any, gold_value: Any,
                     tolerance_m: float = COORDINATE_TOLERANCE_M) -> bool:
    """Does one agent argument value match the gold value? (rules in the module docstring)."""
    if agent_value is None:
        return False
    param = TOOLS[tool].param_map.get(name)
    role = param.role if param else "text"
    if role == "coordinate":
        return _coordinate_close(agent_value, gold_value, tolerance_m)
    if role == "coordinate_list":
        if not isinstance(agent_value, list) or not isinstance(gold_value, list) or len(agent_value) != len(gold_value):
            return False
        return all(_coordinate_close(a, g, tolerance_m) for a, g in zip(agent_value, gold_value))
    if tool == "reverse_geocoding" and name in ("longitude", "latitude"):
        try:
            delta = abs(float(agent_value) - float(gold_value))
        except (TypeError, ValueError):
            return False
        return delta * 111_000 <= tolerance_m
    if name == "strategy":
        if tool == "bus_route":
            return str(agent_value).strip() == str(gold_value).strip()
        return canonical_strategy_set(agent_value) == canonical_strategy_set(gold_value)
    if role == "flag":
        return canonical_flag(agent_value) == canonical_flag(gold_value)
    if role == "city":
        return city_key(agent_value) == city_key(gold_value)
    return same_place_name(str(agent_value), str(gold_value))


def _matched_arguments(tool: str, names: list[str], agent_args: dict[str, Any], gold_args: dict[str, Any]) -> int:
    return sum(argument_matches(tool, n, agent_args.get(n), gold_args.get(n)) for n in names)


def pair_gold_calls(episode: Episode, calls: Iterable[CallRecord]) -> list[tuple[int, CallRecord | None, int, int]]:
    """For each gold call: (gold index, paired agent call or None, matched args, task args)."""
    available = [(c, tool) for c in calls if (tool := call_tool(c)) and isinstance(c.arguments, dict)]
    used: set[int] = set()
    pairs: list[tuple[int, CallRecord | None, int, int]] = []
    for index, gold in enumerate(episode.gold_calls):
        names = task_arguments(gold.name, gold.arguments)
        best, best_score = None, -1
        for position, (call, tool) in enumerate(available):
            if position in used or tool != gold.name:
                continue
            score = _matched_arguments(gold.name, names, call.arguments, gold.arguments)
            if score > best_score:
                best, best_score = position, score
        if best is None:
            pairs.append((index, None, 0, len(names)))
        else:
            used.add(best)
            pairs.append((index, available[best][0], best_score, len(names)))
    return pairs


def parameter_fidelity(episode: Episode, calls: list[CallRecord]) -> float:
    """PF."""
    if not episode.gold_calls:
        return 1.0
    pairs = pair_gold_calls(episode, calls)
    total = sum(n for _, _, _, n in pairs)
    if total == 0:
        return 1.0 if calls else 0.0
    return sum(m for _, _, m, _ in pairs) / total
