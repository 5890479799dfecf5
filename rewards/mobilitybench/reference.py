"""The reference (gold) trajectory of an episode and a correct answer built from its evidence.

Used by the tests (the gold trajectory must score FPR 1 and DR 1, and collect the maximum
shaped return) and available to an oracle agent: :func:`gold_trajectory` replays each gold
call once, exactly as the sandbox would serve it, then finishes with :func:`reference_finish`.

The reference answer states the facts the verifiers check — the route's distance and
duration (and transit lines, departure/arrival time), the weather condition and
temperature, the traffic state, the address or POI names — from the *recorded* responses.
The chosen route is option 0, or for transit with excluded lines the gold
``matched_transit_index`` when it exists and avoids them, else the first option that does.
"""

from __future__ import annotations

import re

from mobility_env.mobilitybench.episode import Episode
from mobility_env.trajectory import ErrorKind, MatchKind
from mobility_env.mobilitybench.trajectory import CallRecord, FinishRecord, Trajectory

from mobility_env.mobilitybench.evidence import (RouteOption, geocode_facts, nearby_pois, places, route_options,
                                                 served, traffic_facts, weather_facts)
from .plan import gold_plan_steps
from .verify import forecast_days_asked
from .verify_route import expected_clock_time, gold_route_call, is_route_tool, uses_excluded_line


def format_distance(metres: float) -> str:
    return f"{metres / 1000:.1f}公里" if metres >= 1000 else f"{round(metres)}米"


def format_duration(seconds: float) -> str:
    minutes = round(seconds / 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}小时{minutes}分钟" if hours else f"{minutes}分钟"


def format_clock(minutes: float) -> str:
    total = round(minutes) % 1440
    return f"{total // 60:02d}:{total % 60:02d}"


def format_clock_ambiguous(minutes: float) -> str:
    """A clock time without a period (``1点30分``), for a target the query gave without one."""
    total = round(minutes) % 720
    hour, minute = divmod(total, 60)
    return f"{hour or 12}点{minute:02d}分" if minute else f"{hour or 12}点"


def gold_calls_as_records(episode: Episode) -> list[CallRecord]:
    """Each gold call once, served exactly from the snapshot (a miss when nothing was recorded)."""
    records = []
    for index, call in enumerate(episode.gold_calls):
        recorded = episode.gold_response(index)
        if recorded is None:
            records.append(CallRecord(step=index, name=call.name, arguments=dict(call.arguments), match=MatchKind.MISS,
                                      error={"type": ErrorKind.NO_CACHED_RESULT,
                                             "message": "the snapshot recorded no response for this call"}))
        else:
            records.append(CallRecord(step=index, name=call.name, arguments=dict(call.arguments), match=MatchKind.EXACT,
                                      response=recorded.response, entry_episode_id=episode.episode_id,
                                      entry_gold_index=index, entry_arguments=dict(recorded.arguments)))
    return records


def reference_route_index(episode: Episode, options: list[RouteOption]) -> int | None:
    if not options:
        return None
    excluded = list(episode.gold_slots.get("excluded_lines") or [])
    if not excluded:
        return 0
    matched = episode.fields.get("matched_transit_index")
    try:
        matched_index = int(float(matched)) if matched is not None else None
    except (TypeError, ValueError):
        matched_index = None
    if matched_index is not None and 0 <= matched_index < len(options) and \
            not uses_excluded_line(options[matched_index], excluded):
        return matched_index
    return next((o.index for o in options if not uses_excluded_line(o, excluded)), 0)


def _route_answer(episode: Episode, options: list[RouteOption], index: int | None) -> str:
    if index is None:
        return "没有找到可用的路线。"
    option = options[index]
    parts = []
    if option.lines:
        parts.append("乘坐" + "转".join(re.split(r"[(（]", line)[0] for line in option.lines))
    if option.distance_m is not None:
        parts.append("全程" + format_distance(option.distance_m))
    if option.duration_s is not None:
        parts.append("预计用时" + format_duration(option.duration_s))
        expected = expected_clock_time(episode, option.duration_s)
        if episode.task_scenario == "Arrival/Departure Time Query" and expected is not None:
            value, _own, definite, role = expected
            clock = format_clock(value) if definite else format_clock_ambiguous(value)
            parts.append(f"建议{clock}出发" if role == "departure" else f"预计{clock}到达")
    return "，".join(parts) + "。"


def reference_answer(episode: Episode) -> tuple[str, int | None]:
    """(answer text, route_index) stating the recorded evidence the verifiers check."""
    responses = {i: episode.gold_response(i) for i in range(len(episode.gold_calls))}
    if gold_route_call(episode) is not None:
        record = next((r for i, r in responses.items() if r is not None and is_route_tool(r.name)), None)
        options = route_options(served(record)) if record is not None else None
        options = options or []
        index = reference_route_index(episode, options)
        return _route_answer(episode, options, index), index
    by_name = {r.name: r for r in responses.values() if r is not None}
    scenario = episode.task_scenario
    if scenario == "POI Query" and "query_poi" in by_name:
        found = places(served(by_name["query_poi"]))
        if found:
            return f"{found[0].name}，地址：{found[0].address}。", None
    if scenario == "Geolocation Query" and "reverse_geocoding" in by_name:
        facts = geocode_facts(served(by_name["reverse_geocoding"]))
        if facts is not None:
            return f"您当前位于{facts.formatted_address}。", None
    if scenario == "Nearby Query" and "search_around_poi" in by_name:
        pois = nearby_pois(served(by_name["search_around_poi"])) or []
        if not pois:
            return "附近没有找到相关地点。", None
        return "附近有：" + "、".join(f"{p.name}（{p.address}）" for p in pois[:3]) + "。", None
    if scenario == "Weather Query" and "weather_query" in by_name:
        weather = weather_facts(served(by_name["weather_query"]))
        if weather is not None and weather.is_empty:
            return "暂无该地的天气数据。", None
        if weather is not None and weather.is_forecast:
            days = [weather.days[i] for i in forecast_days_asked(episode, weather.days, weather.updated)]
            stated = "；".join(f"{day.date}：{day.condition}，气温{day.low:g}~{day.high:g}℃" for day in days)
            return f"{weather.city}{stated}。", None
        if weather is not None:
            return f"{weather.city}当前天气{weather.condition}，气温{weather.temperature:g}℃。", None
    if scenario == "Traffic Info Query" and "traffic_status" in by_name:
        traffic = traffic_facts(served(by_name["traffic_status"]))
        if traffic is not None:
            if traffic.state == "未知":
                return "暂无该道路的路况信息（未知）。", None
            return f"目前路况{traffic.state}。{traffic.description}", None
    return "", None


def reference_finish(episode: Episode) -> FinishRecord:
    """A correct finish: evidence-based answer, gold intent, gold slots, full gold plan."""
    answer, route_index = reference_answer(episode)
    return FinishRecord(answer=answer, intent=episode.task_scenario, slots=dict(episode.gold_slots),
                        plan=[step.replace("_", " ") for step in sorted(gold_plan_steps(episode))],
                        route_index=route_index)


def gold_trajectory(episode: Episode) -> Trajectory:
    """Every gold call once (served from the snapshot), then :func:`reference_finish`."""
    return Trajectory(episode_id=episode.episode_id, calls=gold_calls_as_records(episode),
                      finish=reference_finish(episode))
