"""Claim-complete verification of route answers against the replayed route evidence.

**The chosen route** is ``finish.route_index`` (0-based) into the response of the *last
successful route call* of the trajectory. When ``route_index`` is None it is inferred from
the answer: the first option whose total distance or duration the answer states (within
tolerance) or, for transit, whose lines it names. No successful route call, or an index
outside the response, delivers nothing (DR = 0). A response with no routes is answered
correctly only by saying so (``route_index`` None) when the gold response is empty too.

**Checks** (every one must pass; each lands in the verdict with expected/stated/reason):

* the call that served the route (its *recorded* arguments, so a fuzzy/nearest match cannot
  pass on the agent's own): ``mode``, ``origin``, ``destination`` (within
  :data:`mobility_rewards.mobilitybench.tooluse.COORDINATE_TOLERANCE_M`), ``waypoints`` (same number, in order),
  ``strategy`` (gold driving strategies among the call's; bus strategy code equal);
* ``states_route_fact``: a planning answer states the chosen route's total distance or
  duration; Route Property answers the asked property (distance for 多远/距离/公里, time for
  多久); Arrival/Departure states the computed clock time (or the duration when no target
  time can be computed); ``names_lines``: a transit plan names every line it rides;
* ``distances`` / ``durations``: *every* stated value agrees (5 %, :func:`mobility_rewards.units.within_tolerance`)
  with the chosen option's total — or, in a clause that describes a leg or a step (步行/先/沿/换乘/walk/
  first …, or any action or heading of the Amap route steps: 右转, 向东行驶, 进入匝道, turn left …:
  :func:`mobility_env.reading.vocabulary.step_cues`) and does not call itself the total
  (全程/总共/实际上/total …), with one of its legs or steps: step-by-step directions are checked step by step,
  never read as a competing total; ``hedge``: no value given as a range or as alternatives (``12到15公里``, ``12或20公里``);
* ``money`` (tolls, fares, taxi estimate; 免费 = 0) and ``traffic_lights`` (没有红绿灯 = 0) agree with the option;
* ``lines``: no transit line is named that the chosen option does not ride (unless negated:
  不坐/避开/avoid); ``excluded_lines``: the option avoids the excluded lines and the answer does
  not recommend one; ``strategy_stated``: the answer does not recommend the opposite of the
  asked strategy (走高速 when 不走高速 was asked, or the reverse) nor describe the route with what the strategy
  excludes (收费较多, 比较拥堵); ``keeps_waypoints``: it does not recommend skipping a stop; ``roads``: every road
  the answer says the route travels (沿X, 经X, 途经X、Y) is named in the chosen option's steps (an expressway on an
  avoid-highways route fails where the steps are not recorded); ``destination_stated``: a destination the answer
  names (前往Y, 从X到Y, 目的地是Y) is the asked one or a place the trajectory's searches returned for it;
* ``clock`` (Arrival/Departure): every stated clock time is the computed one (departure =
  target − duration, arrival = start + duration), the query's own time only where it is named
  as such (an arrival time for a departure query), compared on a 24-hour dial when both sides
  have a period (上午/下午/晚上/凌晨/AM/PM or a 24-hour time), else on a 12-hour dial, with a slack
  of max(5 % of the duration, 1 minute).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from mobility_env.mobilitybench.episode import Episode, ToolCall
from mobility_env.reading import vocabulary
from mobility_env.geo import haversine_m
from mobility_env.tools import TOOLS, canonical_tool_name
from mobility_env.mobilitybench.trajectory import CallRecord, Trajectory

from .claims import (ClockClaim, clock_claims, clock_matches, hedged_quantities, light_claims, money_claims,
                     mode_fits_route, normalize_answer, road_claims, says_no_result, skips_waypoint, stated_modes,
                     strategy_contradictions)
from mobility_env.mobilitybench.evidence import RouteOption, has_response, places, route_options, served, taxi_cost
from .slots import canonical_line, canonical_strategy_set, fold_text, point_of, same_place_name
from .tooluse import COORDINATE_TOLERANCE_M
from ..units import RELATIVE_TOLERANCE, Quantity, parse_distances, parse_durations, within_tolerance
from ..verdict import Verdict

_ASKS_DISTANCE = re.compile(r"多远|距离|公里|多少米|千米|里程|how far|distance")
_ASKS_TIME = re.compile(r"多久|多长时间|时间|几个小时|几小时|多少分钟|how long|duration")
_ASKS_ARRIVAL = re.compile(r"几点到|什么时候到|何时到|到达时间|能到|when .*arriv")
_TOTAL_CUE = re.compile(r"全程|总共|一共|总计|共计|总长|全长|总距离|总时长|整个|实际上|实际|其实|大约需要|需要|total|in all|overall|"
                        r"altogether|actually|whole|entire|takes? about|takes?", re.IGNORECASE)
_LEG_CUE = re.compile(r"步行|走路|先|然后|再|沿|经过|途经|换乘|乘坐|坐|骑行|第[一二三四五六七八九十\d]|首先|其中|接着|到达.{0,6}站|"
                      r"walk|first|then|along|via|ride|transfer|segment|leg|step|head|board", re.IGNORECASE)
_NEGATED_LINE = re.compile(r"(不要|不想|不坐|不乘坐?|别坐|别乘|避开|避免|绕开|除了|不用|不搭|不经过|"
                           r"avoid(?:ing)?|not?\s+(?:take|taking|use|using)|without)\s*"
                           r"(?:坐|乘坐?|搭乘?|地铁|公交|the\s+)?$", re.IGNORECASE)
_PLANNING = ("Point-to-Point Planning", "Multi-stop Planning", "Option-Constrained Route Planning",
             "Route-Constrained Planning", "Multimodal Transit Planning")


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
            options = route_options(served(call))
            if options is not None:
                return call, options
    return None


def _close(a: Any, b: Any) -> bool:
    pa, pb = point_of(a), point_of(b)
    return pa is not None and pb is not None and haversine_m(pa, pb) <= COORDINATE_TOLERANCE_M


def _recorded_args(call: CallRecord) -> dict[str, Any]:
    if isinstance(call.entry_arguments, dict):
        return call.entry_arguments
    return call.arguments if isinstance(call.arguments, dict) else {}


def call_constraint_checks(episode: Episode, call: CallRecord, gold: ToolCall, verdict: Verdict) -> None:
    """Mode, origin, destination, waypoints and strategy of the call that served the route."""
    tool = canonical_tool_name(call.name) or ""
    args = _recorded_args(call)
    verdict.add("mode", TOOLS[tool].mode == TOOLS[gold.name].mode, expected=TOOLS[gold.name].mode,
                stated=TOOLS[tool].mode, reason="the route was planned for another travel mode")
    for key in ("origin", "destination"):
        verdict.add(key, _close(args.get(key), gold.arguments.get(key)), expected=gold.arguments.get(key),
                    stated=args.get(key),
                    reason=f"the route's {key} is more than {COORDINATE_TOLERANCE_M:g} m from the gold")
    gold_waypoints = gold.arguments.get("waypoints") or []
    waypoints = args.get("waypoints") or []
    verdict.add("waypoints", isinstance(waypoints, list) and len(waypoints) == len(gold_waypoints) and all(
        _close(a, g) for a, g in zip(waypoints, gold_waypoints)), expected=gold_waypoints, stated=waypoints,
        reason="the route does not pass the asked stops in order")
    gold_strategy = gold.arguments.get("strategy")
    if gold.name == "bus_route":
        ok = gold_strategy in (None, "") or str(args.get("strategy", "0")).strip() == str(gold_strategy).strip()
        verdict.add("strategy", ok, expected=gold_strategy, stated=args.get("strategy"),
                    reason="the transit plan used another strategy")
    else:
        required = canonical_strategy_set(gold_strategy) | canonical_strategy_set(episode.gold_slots.get("strategy"))
        stated = canonical_strategy_set(args.get("strategy"))
        verdict.add("strategy", required <= stated, expected=sorted(required), stated=sorted(stated),
                    reason="the route was planned without the asked strategy")


def uses_excluded_line(option: RouteOption, excluded: list[str]) -> bool:
    from .slots import line_uses
    return any(line_uses(line, banned) for line in option.lines for banned in excluded)


def _folded_lines_text(answer: str) -> str:
    text = normalize_answer(answer).lower().replace(" ", "")
    return re.sub(r"(北京|上海|广州|深圳)?(地铁|轨道交通|轨交|城轨|metro|subway)", "", text)


def _line_key(line: str) -> str:
    return canonical_line(line)


def line_mentions(answer: str, line: str) -> list[int]:
    """Positions where the answer names ``line`` (digits may not run on: 1号线 is not 11号线)."""
    key = _line_key(line)
    if not key:
        return []
    text = _folded_lines_text(answer)
    positions = []
    start = text.find(key)
    while start >= 0:  # non-overlapping occurrences, as re.finditer of the literal (no regex per line name)
        end = start + len(key)
        before = text[start - 1] if start else ""
        after = text[end] if end < len(text) else ""
        if not (before.isdigit() or (key[-1].isdigit() and after.isdigit())):
            positions.append(start)
        start = text.find(key, end)
    return positions


def _negated_mention(answer: str, position: int) -> bool:
    text = _folded_lines_text(answer)
    return bool(_NEGATED_LINE.search(text[max(0, position - 12):position]))


def infer_route_index(answer: str, options: list[RouteOption]) -> int | None:
    """The option the answer describes, when ``route_index`` was not given (or None)."""
    distances, durations = parse_distances(normalize_answer(answer)), parse_durations(normalize_answer(answer))
    for option in options:
        if option.distance_m and any(within_tolerance(d, option.distance_m) for d in distances):
            return option.index
        if option.duration_s and any(within_tolerance(d, option.duration_s) for d in durations):
            return option.index
        if option.lines and all(line_mentions(answer, line) for line in option.lines):
            return option.index
    return None


_BREAKS = ("，", ",", "。", ";", "；", "!", "！", "?", "？", "\n", ". ")


def _clause(text: str, start: int) -> str:
    left = max(text.rfind(p, 0, start) + len(p) - 1 if text.rfind(p, 0, start) >= 0 else -1 for p in _BREAKS)
    rights = [i for i in (text.find(p, start) for p in _BREAKS) if i >= 0]
    return text[left + 1:min(rights) if rights else len(text)]


@lru_cache(maxsize=256)
def _normalized_roads(road_parts: tuple[tuple[str, float], ...]) -> tuple[tuple[str, float], ...]:
    """The steps' roads as the answer is read (normalized), with their lengths: once per route option."""
    return tuple((normalize_answer(road), metres) for road, metres in road_parts)


def _quantity_agrees(text: str, quantity: Quantity, total: float | None, parts: tuple[float, ...],
                     strict: bool = False, road_parts: tuple[tuple[str, float], ...] = ()) -> bool:
    """``quantity`` is the total (5 %; or a coarser rounding of it when it is the only value of its
    kind — two values for one quantity must both be within 5 %), or a leg in a leg clause; a step clause that names
    a road of the route's steps (沿北京东路向西北行驶161米) states a step on that road."""
    if total is not None and (within_tolerance(quantity, total, rounding=not strict)):
        return True
    clause = _clause(text, quantity.start)
    if _TOTAL_CUE.search(clause) or not (_LEG_CUE.search(clause) or vocabulary.step_cues().search(clause)):
        return False  # a leg clause, or a step clause: an action or heading of the Amap route steps
    named = [metres for road, metres in _normalized_roads(road_parts) if road in clause]
    if named:
        parts = tuple(named)
    return any(within_tolerance(quantity, part) for part in parts)


def _quantity_checks(answer: str, option: RouteOption, verdict: Verdict) -> tuple[bool, bool]:
    """Distances and durations: every one agrees; returns (total distance stated, total duration stated)."""
    text = normalize_answer(answer)
    distances, durations = parse_distances(text), parse_durations(text)
    stated = {"distance": False, "duration": False}
    for kind, values, total, parts, unit in (("distance", distances, option.distance_m, option.part_distances, "m"),
                                             ("duration", durations, option.duration_s, option.part_durations, "s")):
        if total is not None:
            stated[kind] = any(within_tolerance(v, total) for v in values)
        if not values:
            continue
        strict = len({round(v.value, 3) for v in values}) > 1
        roads = option.road_parts if kind == "distance" else ()
        wrong = [v for v in values if not _quantity_agrees(text, v, total, parts, strict, roads)]
        verdict.add(f"{kind}s", not wrong, expected=f"{total:g} {unit}" if total is not None else "unknown",
                    stated=", ".join(f"{v.value:g} {unit}" for v in values),
                    reason=f"stated {wrong[0].value:g} {unit}, which is neither the route's total nor one of its legs"
                    if wrong else "")
    hedges = hedged_quantities(answer)
    verdict.add("hedge", not hedges, expected="one value per quantity",
                stated="; ".join(f"{k}: {a:g} or {b:g}" for k, a, b in hedges),
                reason="a quantity is given as a range or as alternatives" if hedges else "")
    return stated["distance"], stated["duration"]


def _money_checks(answer: str, option: RouteOption, response: Any, verdict: Verdict) -> None:
    amounts = money_claims(answer)
    if not amounts:
        return
    known = [v for v in (option.tolls, option.fare, taxi_cost(response)) if v is not None]
    wrong = [a.value for a in amounts if not any(abs(a.value - k) <= max(RELATIVE_TOLERANCE * k, 0.5) for k in known)]
    verdict.add("money", not wrong, expected=", ".join(f"{k:g} 元" for k in known) or "no amount recorded",
                stated=", ".join(f"{a.value:g} 元" for a in amounts),
                reason=f"{wrong[0]:g} 元 is not the route's toll, fare or taxi estimate" if wrong else "")


def _light_checks(answer: str, option: RouteOption, verdict: Verdict) -> None:
    lights = light_claims(answer)
    if not lights:
        return
    actual = option.traffic_lights
    wrong = [c.value for c in lights if actual is None or abs(c.value - actual) > max(RELATIVE_TOLERANCE * actual, 0.5)]
    verdict.add("traffic_lights", not wrong, expected=actual, stated=", ".join(f"{c.value:g}" for c in lights),
                reason="the stated number of traffic lights is not the route's" if wrong else "")


def _line_checks(episode: Episode, answer: str, option: RouteOption, options: list[RouteOption], transit: bool,
                 verdict: Verdict) -> None:
    excluded = [str(x) for x in episode.gold_slots.get("excluded_lines") or []]
    if excluded and transit:
        verdict.add("excluded_lines", not uses_excluded_line(option, excluded), expected=f"avoid {excluded}",
                    stated=list(option.lines), reason="the chosen transit rides an excluded line")
    recommended = [line for line in excluded
                   if any(not _negated_mention(answer, p) for p in line_mentions(answer, line))]
    if excluded:
        verdict.add("recommends_excluded_line", not recommended, expected=f"avoid {excluded}", stated=recommended,
                    reason="the answer recommends an excluded line" if recommended else "")
    chosen = {_line_key(line) for line in option.lines}
    candidates = {line for other in options for line in other.lines}
    text = _folded_lines_text(answer)
    candidates |= {m.group(0) for m in re.finditer(r"(?<!\d)\d+号线", text)}
    foreign = sorted({_line_key(line) for line in candidates
                      if _line_key(line) and _line_key(line) not in chosen
                      and not any(_line_key(line) in c for c in chosen)
                      and any(not _negated_mention(answer, p) for p in line_mentions(answer, line))})
    if candidates:
        verdict.add("lines", not foreign, expected=list(option.lines), stated=foreign,
                    reason="the answer names a line the chosen route does not ride" if foreign else "")


def _without_asked_places(episode: Episode, answer: str) -> str:
    """``answer`` with the places the user named blanked: their names state no mode (途经绿地铁塔家园: no 地铁)."""
    names: list[str] = []
    for key in ("origin", "destination", "waypoints"):
        value = episode.gold_slots.get(key)
        names += [v for v in (value if isinstance(value, list) else [value])
                  if isinstance(v, str) and len(v) >= 2 and v != "current_location"]
    for name in sorted(names, key=len, reverse=True):
        answer = answer.replace(name, " ")
    return answer


def _constraint_claims(episode: Episode, answer: str, mode: str, verdict: Verdict, lines: tuple[str, ...] = ()
                       ) -> None:
    strategies = canonical_strategy_set(episode.gold_slots.get("strategy")) | canonical_strategy_set(
        (gold_route_call(episode) or ToolCall(name="")).arguments.get("strategy"))
    opposite = strategy_contradictions(answer, strategies, mode)
    verdict.add("strategy_stated", not opposite, expected=sorted(strategies), stated=", ".join(opposite),
                reason="the answer recommends the opposite of the asked strategy" if opposite else "")
    text = _without_asked_places(episode, answer)
    for line in sorted(lines, key=len, reverse=True):  # a line's own name states no mode (527路快车, 地铁10号线)
        text = text.replace(line, " ")
    modes = stated_modes(text) - ({"walking"} if mode == "transit" else set())
    wrong_modes = sorted(m for m in modes if not mode_fits_route(m, mode))
    verdict.add("mode_stated", not wrong_modes, expected=mode, stated=", ".join(sorted(modes)),
                reason=f"the answer recommends {wrong_modes[0]}, the route is {mode}" if wrong_modes else "")
    if episode.gold_slots.get("waypoints"):
        skip = skips_waypoint(answer)
        verdict.add("keeps_waypoints", not skip, expected=episode.gold_slots.get("waypoints"),
                    stated="recommends skipping a stop" if skip else "",
                    reason="the answer recommends dropping a stop" if skip else "")


# A destination the answer names: after 前往/去往/开往/目的地是, or the Y of 从X到Y; up to a clause end or the facts
_DESTINATION_END = r"(?=[，,。；;！!？?\s（(]|$|全程|的|需要|大约|约|预计|路程|距离|耗时|用时|共|总|后)"
_DESTINATION_STATED = re.compile(rf"(?:前往|去往|开往|目的地(?:是|为)[：:]?|目的地[：:])[ \t]*"
                                 rf"([^\s，,。；;！!？?、（(]{{2,24}}?){_DESTINATION_END}|"
                                 rf"从[ \t]*[^\s，,。；;]{{1,24}}?[ \t]*(?:出发[ \t]*)?(?:到|至)[ \t]*"
                                 rf"([^\s，,。；;！!？?、（(]{{2,24}}?){_DESTINATION_END}")
_NO_PLACE = re.compile(r"^(?:那里|那儿|那边|过去|目的地|终点|您的目的地|你的目的地|这里|该地|此地|对面|附近)$")


def _destination_checks(episode: Episode, answer: str, calls: list[CallRecord], verdict: Verdict) -> None:
    """``destination_stated``: a destination the answer names (前往Y, 从X到Y, 目的地是Y) is the asked one (the same
    place name, one inside the other) or a place the trajectory's searches returned for it."""
    gold = str(episode.gold_slots.get("destination") or episode.fields.get("query_end_poi") or "")
    if not gold or point_of(gold) is not None:
        return
    named = [m.group(1) or m.group(2) for m in _DESTINATION_STATED.finditer(normalize_answer(answer))]
    named = [n for n in named if n and not _NO_PLACE.match(n)]
    if not named:
        return
    searched = [call for call in calls if call.succeeded and has_response(call)
                and canonical_tool_name(call.name) in ("query_poi", "search_around_poi")]
    returned = [p.name for call in searched for p in (places(served(call)) or [])][:200]  # places searched for

    def agrees(name: str) -> bool:  # both sides read alike (五棵松 is read 5棵松 in the answer)
        key, asked = fold_text(name), fold_text(normalize_answer(gold))
        return bool(key) and (asked in key or key in asked or same_place_name(name, normalize_answer(gold))
                              or any(same_place_name(name, normalize_answer(known)) for known in returned))
    foreign = [n for n in named if not agrees(n)]
    verdict.add("destination_stated", not foreign, expected=gold, stated=", ".join(named),
                reason=f"{foreign[0]} is not the asked destination" if foreign else "")


_EXPRESSWAY = re.compile(r"高速|^[GS]\d+")
_ROAD_KEY_DROP = re.compile(r"^[GS]\d+|[()（）\s·]")
_ROAD_CORE = re.compile(r"(?:高速公路|高速|快速路|大道|大街|公路|国道|省道|辅路|主路|路|街|道|巷|线|桥)$")
_ROAD_DIRECTION = re.compile(r"(?<=.)[东西南北中]{1,2}$")


def _road_key(name: str) -> str:
    """A road name as compared: its core, normalized, without its national code, its road word and its direction
    (G4京港澳高速公路 is 京港澳; 四环路 is 四环, found in 东四环中路; 北京东路 is 北京)."""
    whole = _ROAD_KEY_DROP.sub("", normalize_answer(name))
    key = _ROAD_DIRECTION.sub("", _ROAD_CORE.sub("", whole))  # 东四环中路: 路, then 中
    return key if len(key) >= 2 else whole


def _as_list(value: object) -> list[object]:
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _road_checks(episode: Episode, answer: str, option: RouteOption, verdict: Verdict) -> None:
    """``roads``: every road the answer says the route travels (沿X, 经X, 途经X、Y) is named in the option's steps
    (a place of the trip itself, 经过济南瑞丰天街 for a stop the user named, is no road);
    on an avoid-highways route an expressway it names (X高速, G4) is a recommendation to take highways."""
    # the trip's own places (the asked origin, stops and destination: 经过济南瑞丰天街 names a stop) are no roads
    places = [normalize_answer(str(p)) for key in ("origin", "destination", "waypoints")
              for p in _as_list(episode.gold_slots.get(key)) if p]
    named = [name for name in road_claims(answer) if not any(place and place in name for place in places)]
    if not named:
        return
    if option.road_text:
        known = normalize_answer(option.road_text)
        foreign = [name for name in named if _road_key(name) and _road_key(name) not in known]
        verdict.add("roads", not foreign, expected="roads of the chosen route", stated=", ".join(named),
                    reason=f"{foreign[0]} is not a road of the chosen route" if foreign else "")
        return
    strategies = canonical_strategy_set(episode.gold_slots.get("strategy"))
    expressways = [name for name in named if _EXPRESSWAY.search(name)]
    if "不走高速" in strategies and expressways:
        verdict.add("roads", False, expected="no expressway (avoid highways)", stated=", ".join(expressways),
                    reason=f"{expressways[0]} is an expressway on an avoid-highways route")


def _start_minutes(episode: Episode) -> float | None:
    start = str(episode.context.get("start_datetime") or "")
    match = re.search(r"(\d{1,2}):(\d{2})", start.split(" ")[-1])
    return int(match.group(1)) * 60 + int(match.group(2)) if match else None


def expected_clock_time(episode: Episode, duration_s: float) -> tuple[float, float, bool, str] | None:
    """``(expected minutes, the query's own time, definite, role)`` for an arrival/departure query.

    ``role`` is what the expected time is: ``"departure"`` (target arrival − duration) or
    ``"arrival"`` (start + duration). ``definite`` is False when the query's time has no period
    (``两点``), so it is compared on a 12-hour dial.
    """
    query_times = clock_claims(episode.query)
    minutes = duration_s / 60.0
    if _ASKS_ARRIVAL.search(episode.query):
        start: float | None
        if query_times:
            start, definite = query_times[0].minutes, query_times[0].definite
        else:
            start, definite = _start_minutes(episode), True
        return ((start + minutes) % 1440, start, definite, "arrival") if start is not None else None
    if query_times:
        target = query_times[0]
        return (target.minutes - minutes) % 1440, target.minutes, target.definite, "departure"
    return None


def _clock_checks(episode: Episode, answer: str, option: RouteOption, verdict: Verdict, duration_stated: bool) -> None:
    if option.duration_s is None:
        verdict.add("clock", False, reason="the chosen route has no duration to compute a time from")
        return
    expected = expected_clock_time(episode, option.duration_s)
    claims = clock_claims(answer)
    if expected is None:
        verdict.add("states_route_fact", duration_stated, expected=f"{option.duration_s:g} s", stated="",
                    reason=("no target time in the query: the answer must state the travel time"
                            if not duration_stated else ""))
        return
    value, own, definite, role = expected
    other_role = "arrival" if role == "departure" else "departure"
    slack = max(RELATIVE_TOLERANCE * option.duration_s / 60.0, 1.0)

    def agrees(claim: ClockClaim) -> bool:
        computed = clock_matches(claim, value, definite, slack)
        echo = clock_matches(claim, own, definite, 1.0)
        if claim.role == role:
            return computed
        if claim.role == other_role:
            return echo
        return computed or echo

    wrong = [c for c in claims if not agrees(c)]
    states = any(clock_matches(c, value, definite, slack) and c.role != other_role for c in claims)
    fmt = f"{int(value) // 60:02d}:{int(value) % 60:02d}"
    verdict.add("states_route_fact", states, expected=f"{role} {fmt}",
                stated=", ".join(f"{c.minutes // 60:02d}:{c.minutes % 60:02d} {c.role}".strip() for c in claims),
                reason="" if states else f"the answer does not state the {role} time")
    if claims:
        verdict.add("clock", not wrong, expected=f"{role} {fmt}",
                    stated=", ".join(f"{c.minutes // 60:02d}:{c.minutes % 60:02d} {c.role}".strip() for c in claims),
                    reason=f"{wrong[0].minutes // 60:02d}:{wrong[0].minutes % 60:02d} is not the computed time"
                    if wrong else "")


def _required_facts(episode: Episode, answer: str, option: RouteOption, transit: bool, verdict: Verdict,
                    distance_stated: bool, duration_stated: bool) -> None:
    scenario = episode.task_scenario
    if scenario == "Route Property Query":
        asks_distance, asks_time = bool(_ASKS_DISTANCE.search(episode.query)), bool(_ASKS_TIME.search(episode.query))
        if asks_distance:
            ok, what = distance_stated, f"distance {option.distance_m:g} m"
        elif asks_time:
            ok, what = duration_stated, f"duration {option.duration_s:g} s"
        else:
            ok, what = distance_stated or duration_stated, "the route's distance or duration"
        verdict.add("states_route_fact", ok, expected=what, reason="" if ok else "the asked property is not stated")
    elif scenario != "Arrival/Departure Time Query":
        ok = distance_stated or duration_stated
        verdict.add("states_route_fact", ok,
                    expected=f"distance {option.distance_m} m or duration {option.duration_s} s",
                    reason="" if ok else "the answer states neither the route's distance nor its duration")
    if transit and option.lines and scenario in _PLANNING:
        missing = [line for line in option.lines if not line_mentions(answer, line)]
        verdict.add("names_lines", not missing, expected=list(option.lines),
                    stated="" if missing else list(option.lines),
                    reason=f"the answer does not name {missing[0]}" if missing else "")


def verify_route_answer(episode: Episode, trajectory: Trajectory, verdict: Verdict) -> None:
    """Fill ``verdict`` for a route task (see the module docstring); sets ``verdict.delivered``."""
    gold = gold_route_call(episode)
    finish = trajectory.finish
    assert gold is not None and finish is not None
    last = last_route_call(trajectory.calls)
    if last is None:
        verdict.delivered = False
        verdict.reason = "no successful route call"
        return
    call, options = last
    answer = finish.answer
    call_constraint_checks(episode, call, gold, verdict)
    if not options:
        says = finish.route_index is None and says_no_result(answer)
        gold_record = next((r for r in episode.recorded if r.gold_index is not None and is_route_tool(r.name)), None)
        gold_empty = gold_record is not None and route_options(served(gold_record)) == []
        verdict.add("no_route_exists", gold_empty, expected="the gold route response is empty",
                    reason="" if gold_empty else "the gold has routes: this call was not the right one")
        verdict.add("says_no_route", says,
                    reason="" if says else "the route response is empty: say that no route exists")
        verdict.delivered = verdict.delivered and says
        return
    index = finish.route_index if finish.route_index is not None else infer_route_index(answer, options)
    if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(options):
        verdict.delivered = False
        verdict.reason = (f"route_index {finish.route_index!r} does not exist (the response has {len(options)} routes)"
                          if finish.route_index is not None else "the answer describes none of the returned routes")
        return
    option = options[index]
    transit = TOOLS[canonical_tool_name(call.name) or ""].mode == "transit"
    distance_stated, duration_stated = _quantity_checks(answer, option, verdict)
    _required_facts(episode, answer, option, transit, verdict, distance_stated, duration_stated)
    if episode.task_scenario == "Arrival/Departure Time Query":
        _clock_checks(episode, answer, option, verdict, duration_stated)
    _money_checks(answer, option, served(call), verdict)
    _light_checks(answer, option, verdict)
    _line_checks(episode, answer, option, options, transit, verdict)
    _constraint_claims(episode, answer, TOOLS[canonical_tool_name(call.name) or ""].mode or "", verdict,
                       tuple(line for other in options for line in other.lines))
    _road_checks(episode, answer, option, verdict)
    _destination_checks(episode, answer, trajectory.calls, verdict)
