"""FPR/DR verification of route answers against the replayed route evidence.

**The chosen route** is ``finish.route_index`` (0-based) into the response of the *last
successful route call* of the trajectory (the last call to a route tool that was served and
whose response parses as a route response). When ``route_index`` is None the route is
inferred from the answer: the first option whose distance or duration the answer states
(within tolerance) or, for transit, whose line names the answer mentions; if none, no route
was delivered. An index outside the response, or no successful route call, delivers nothing
(DR = 0, FPR = 0). A response with no routes at all is answered correctly only by saying so
(with ``route_index`` None).

**FPR checks** (all must hold), each against ``entry_arguments`` — the recorded call that
actually produced the response — so a fuzzy or nearest sandbox match cannot pass on the
agent's own arguments:

1. ``mode``: the route tool's travel mode is the gold route call's;
2. ``origin`` and ``destination`` within :data:`rewards.tooluse.COORDINATE_TOLERANCE_M` of
   the gold route call's;
3. ``waypoints``: the same number, in order, each within tolerance;
4. ``strategy``: every gold driving strategy is among the call's (canonical labels);
   a gold bus strategy code must be equal;
5. ``excluded_lines``: for transit, no line of the chosen transit rides an excluded line
   (:func:`rewards.slots.line_uses`); choosing any transit that avoids them passes;
6. ``quantities``: the first distance and the first duration the answer states are within
   5 % of the chosen option's (:func:`rewards.units.within_tolerance`); Route Property
   queries must state the asked property (distance for 多远/距离/公里, time for 多久/时间);
7. ``clock``: Arrival/Departure queries must state the duration or a departure/arrival clock
   time; a stated clock time (other than an echo of the query's own time) must be within
   max(5 % of the duration, 1 minute) of the target time −/+ the chosen option's duration.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from mobility_env.episode import Episode, ToolCall
from mobility_env.geo import haversine_m
from mobility_env.tools import TOOLS, canonical_tool_name
from mobility_env.trajectory import CallRecord, Trajectory

from .evidence import RouteOption, route_options
from .slots import canonical_strategy_set, fold_text, line_uses, point_of
from .tooluse import COORDINATE_TOLERANCE_M
from .units import (RELATIVE_TOLERANCE, clock_difference, parse_clock_times, parse_distances,
                    parse_durations, within_tolerance)

NO_RESULT = re.compile(r"没有|没找到|未找到|找不到|暂无|无法|未能|没能|无可用|无结果|无公交|无路线|"
                       r"\bno\b|not found|none|unavailable|could ?n[o']t|cannot|can't", re.IGNORECASE)
_ASKS_DISTANCE = re.compile(r"多远|距离|公里|多少米|千米|里程|how far|distance")
_ASKS_TIME = re.compile(r"多久|多长时间|时间|几个小时|几小时|多少分钟|how long|duration")
_ASKS_ARRIVAL = re.compile(r"几点到|什么时候到|何时到|到达时间|能到|when .*arriv")


@dataclass
class RouteVerdict:
    delivered: bool
    passed: bool
    checks: dict[str, bool] = field(default_factory=dict)
    reason: str = ""
    option: RouteOption | None = None


def is_route_tool(name: str | None) -> bool:
    tool = canonical_tool_name(name)
    return tool is not None and TOOLS[tool].kind == "route"


def gold_route_call(episode: Episode) -> ToolCall | None:
    """The last gold call to a route tool (None for non-route scenarios)."""
    for call in reversed(episode.gold_calls):
        if is_route_tool(call.name):
            return call
    return None


def last_route_call(calls: list[CallRecord]) -> tuple[CallRecord, list[RouteOption]] | None:
    """The last successful route call and its parsed options."""
    for call in reversed(calls):
        if is_route_tool(call.name) and call.succeeded:
            options = route_options(call.response)
            if options is not None:
                return call, options
    return None


def _close(a: Any, b: Any) -> bool:
    pa, pb = point_of(a), point_of(b)
    return pa is not None and pb is not None and haversine_m(pa, pb) <= COORDINATE_TOLERANCE_M


def call_constraint_checks(episode: Episode, call: CallRecord, gold: ToolCall) -> dict[str, bool]:
    """Checks 1-4 of the module docstring on the call that served the chosen route."""
    tool = canonical_tool_name(call.name) or ""
    args = call.entry_arguments if isinstance(call.entry_arguments, dict) else (
        call.arguments if isinstance(call.arguments, dict) else {})
    checks = {"mode": TOOLS[tool].mode == TOOLS[gold.name].mode,
              "destination": _close(args.get("destination"), gold.arguments.get("destination")),
              "origin": _close(args.get("origin"), gold.arguments.get("origin"))}
    gold_waypoints = gold.arguments.get("waypoints") or []
    waypoints = args.get("waypoints") or []
    checks["waypoints"] = isinstance(waypoints, list) and len(waypoints) == len(gold_waypoints) and all(
        _close(a, g) for a, g in zip(waypoints, gold_waypoints))
    gold_strategy = gold.arguments.get("strategy")
    if gold.name == "bus_route":
        checks["strategy"] = gold_strategy in (None, "") or str(args.get("strategy", "0")).strip() == str(gold_strategy).strip()
    else:
        required = canonical_strategy_set(gold_strategy) | canonical_strategy_set(episode.gold_slots.get("strategy"))
        checks["strategy"] = required <= canonical_strategy_set(args.get("strategy"))
    return checks


def uses_excluded_line(option: RouteOption, excluded: list[str]) -> bool:
    return any(line_uses(line, banned) for line in option.lines for banned in excluded)


def _mentions_lines(answer: str, option: RouteOption) -> bool:
    folded = fold_text(answer)
    names = [fold_text(re.split(r"[(（]", line)[0]) for line in option.lines]
    return bool(names) and all(name and name in folded for name in names)


def infer_route_index(answer: str, options: list[RouteOption]) -> int | None:
    """The option the answer describes, when ``route_index`` was not given (or None)."""
    distances, durations = parse_distances(answer), parse_durations(answer)
    for option in options:
        if distances and option.distance_m and within_tolerance(distances[0], option.distance_m):
            return option.index
        if durations and option.duration_s and within_tolerance(durations[0], option.duration_s):
            return option.index
        if option.lines and _mentions_lines(answer, option):
            return option.index
    return None


def _quantity_checks(answer: str, option: RouteOption, scenario: str, query: str) -> dict[str, bool]:
    checks: dict[str, bool] = {}
    distances, durations = parse_distances(answer), parse_durations(answer)
    if distances:
        checks["distance"] = option.distance_m is not None and within_tolerance(distances[0], option.distance_m)
    if durations:
        checks["duration"] = option.duration_s is not None and within_tolerance(durations[0], option.duration_s)
    if scenario == "Route Property Query":
        asks_distance, asks_time = bool(_ASKS_DISTANCE.search(query)), bool(_ASKS_TIME.search(query))
        if asks_distance and not distances:
            checks["distance"] = False
        if asks_time and not asks_distance and not durations:
            checks["duration"] = False
        if not distances and not durations:
            checks["reports_property"] = False
    return checks


def _start_minutes(episode: Episode) -> float | None:
    start = str(episode.context.get("start_datetime") or "")
    match = re.search(r"(\d{1,2}):(\d{2})", start.split(" ")[-1])
    return int(match.group(1)) * 60 + int(match.group(2)) if match else None


def expected_clock_time(episode: Episode, duration_s: float) -> tuple[float, float] | None:
    """(expected clock minutes, the query's own time) for an arrival/departure query, if computable."""
    query_times = parse_clock_times(episode.query)
    minutes = duration_s / 60.0
    if _ASKS_ARRIVAL.search(episode.query):
        start = query_times[0][0] if query_times else _start_minutes(episode)
        return (start + minutes, start) if start is not None else None
    if query_times:
        target = query_times[0][0]
        return target - minutes, target
    return None


def _clock_checks(answer: str, episode: Episode, option: RouteOption, checks: dict[str, bool]) -> None:
    if option.duration_s is None:
        checks["clock"] = False
        return
    expected = expected_clock_time(episode, option.duration_s)
    stated = [t for t, _, _ in parse_clock_times(answer)]
    if expected is not None:
        value, echo = expected
        stated = [t for t in stated if clock_difference(t, echo) > 1.0 or clock_difference(value, echo) <= 1.0]
        if stated:
            slack = max(RELATIVE_TOLERANCE * option.duration_s / 60.0, 1.0)
            checks["clock"] = any(clock_difference(t, value) <= slack for t in stated)
    if "duration" not in checks and "clock" not in checks:
        checks["reports_time"] = False


def verify_route_answer(episode: Episode, trajectory: Trajectory) -> RouteVerdict:
    """DR and FPR of a route task; see the module docstring."""
    gold = gold_route_call(episode)
    finish = trajectory.finish
    if gold is None or finish is None or trajectory.truncated or not finish.answer.strip():
        return RouteVerdict(False, False, reason="no finished answer")
    served = last_route_call(trajectory.calls)
    if served is None:
        return RouteVerdict(False, False, reason="no successful route call")
    call, options = served
    answer = finish.answer
    checks = call_constraint_checks(episode, call, gold)
    if not options:
        delivered = finish.route_index is None and bool(NO_RESULT.search(answer))
        gold_record = next((r for r in episode.recorded if r.gold_index is not None and is_route_tool(r.name)), None)
        gold_empty = gold_record is not None and route_options(gold_record.response) == []
        checks["no_route_exists"] = gold_empty
        return RouteVerdict(delivered, delivered and all(checks.values()), checks, "the route response is empty")
    index = finish.route_index
    if index is None:
        index = infer_route_index(answer, options)
    if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(options):
        return RouteVerdict(False, False, checks, f"route_index {finish.route_index!r} does not exist "
                                                  f"(the response has {len(options)} routes)")
    option = options[index]
    excluded = list(episode.gold_slots.get("excluded_lines") or [])
    if excluded and TOOLS[canonical_tool_name(call.name) or ""].mode == "transit":
        checks["excluded_lines"] = not uses_excluded_line(option, excluded)
    checks.update(_quantity_checks(answer, option, episode.task_scenario, episode.query))
    if episode.task_scenario == "Arrival/Departure Time Query":
        _clock_checks(answer, episode, option, checks)
    failed = [name for name, ok in checks.items() if not ok]
    return RouteVerdict(True, not failed, checks, "failed: " + ", ".join(failed) if failed else "", option)

