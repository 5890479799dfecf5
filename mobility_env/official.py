"""Mapping between one official MobilityBench row and an :class:`Episode`.

Official rows carry the gold tool calls in ``tool_list`` and the recorded responses in
scenario-specific columns. Which column answers which gold call:

==========================  ==================================================
gold call                   response column
==========================  ==================================================
query_poi                   std_start / std_transit / std_end (matched by the
                            keywords against query_start/transit/end_poi), else
                            poi_result
driving/walking/bicycling/  route_ans
bus_route
reverse_geocoding           location_ans
search_around_poi           near_poi_ans
weather_query               weather
traffic_status(_road_api)   ans
==========================  ==================================================

Synthetic sets add one column, ``sandbox_extra``: a list of ``{"name", "arguments",
"response"}`` alternatives recorded beside the gold calls.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from .episode import FAMILY_OF, SCENARIOS, Episode, RecordedCall, Repair, ToolCall, stable_episode_id
from .errors import RowError
from .literal import CellParseError, parse_cell
from .tools import TOOLS, canonical_tool_name

OFFICIAL_COLUMNS: tuple[str, ...] = (
    "query", "context", "task_scenario", "intent_family", "strategy_list", "query_start_poi",
    "query_transit_poi", "query_end_poi", "std_start", "std_transit", "std_end", "city", "tool_list",
    "route_ans", "user_loc", "road", "ans", "key_info", "location_ans", "formatted_address",
    "llm_ner_ans", "bus_lines_list", "matched_transit_index", "query_poi", "near_poi_info",
    "poi_result", "centre_loc", "near_poi_ans", "time", "weather", "weather_description",
    "ans_loc", "duration",
)
EXTRA_CALLS_COLUMN = "sandbox_extra"
CORE_COLUMNS = ("query", "context", "task_scenario", "intent_family", "tool_list")
RESPONSE_COLUMN_BY_TOOL = {
    "driving_route": "route_ans", "walking_route": "route_ans", "bicycling_route": "route_ans",
    "bus_route": "route_ans", "reverse_geocoding": "location_ans", "search_around_poi": "near_poi_ans",
    "weather_query": "weather", "traffic_status": "ans",
}
POI_COLUMNS = (("query_start_poi", "std_start"), ("query_transit_poi", "std_transit"), ("query_end_poi", "std_end"))
RESPONSE_COLUMNS = frozenset(RESPONSE_COLUMN_BY_TOOL.values()) | {"poi_result", "std_start", "std_transit", "std_end"}
MODE_OF_TOOL = {name: spec.mode for name, spec in TOOLS.items() if spec.mode}
_MODE_WORDS = {"驾车": "driving", "公交": "transit", "地铁": "transit", "步行": "walking", "骑行": "bicycling"}


def _parse(value: Any, column: str, repairs: list[Repair]) -> Any:
    """Parse a cell that may be a literal string or an already-parsed value."""
    if not isinstance(value, str):
        return None if _is_missing(value) else value
    try:
        parsed = parse_cell(value)
    except CellParseError as exc:
        repairs.append(Repair(column=column, kind="unparseable", detail=str(exc)))
        return value
    if parsed.repaired:
        repairs.append(Repair(column=column, kind="truncated", detail=parsed.detail))
    return parsed.value


def _is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and value != value) or (isinstance(value, str) and not value.strip())


def _excluded_lines(ner: Any) -> list[str]:
    """'不要1号线,不要八通线' (possibly after an echoed prompt and '输出:') -> ['1号线', '八通线']."""
    if not isinstance(ner, str) or not ner.strip():
        return []
    text = re.split(r"输出\s*[:：]", ner)[-1].strip().splitlines()[-1]
    lines = []
    for part in re.split(r"[,，、;；]", text):
        part = re.sub(r"^(不要|不想|不坐|不乘坐|不乘|避开|别坐)", "", part.strip()).strip()
        if part:
            lines.append(part)
    return lines


def _travel_mode(gold_calls: list[ToolCall], context: dict[str, Any]) -> str | None:
    for call in gold_calls:
        if call.name in MODE_OF_TOOL:
            return MODE_OF_TOOL[call.name]
    return _MODE_WORDS.get(str(context.get("travel_tool", "")))


def derive_gold_slots(scenario: str, fields: dict[str, Any], gold_calls: list[ToolCall], context: dict[str, Any]) -> dict[str, Any]:
    """The normalized constraint set that IE compares the agent's ``slots`` with."""
    slots: dict[str, Any] = {}
    city = fields.get("city") or context.get("city")
    calls_by_name = {c.name: c for c in gold_calls}
    if scenario == "POI Query" and "query_poi" in calls_by_name:
        slots["keyword"] = calls_by_name["query_poi"].arguments.get("keywords")
    elif scenario == "Geolocation Query":
        slots["location"] = context.get("user_current_location")
    elif scenario == "Nearby Query":
        slots["center"] = fields.get("query_poi")
        slots["keyword"] = fields.get("near_poi_info")
    elif scenario == "Weather Query":
        call = calls_by_name.get("weather_query")
        if call is not None:
            city = call.arguments.get("city") or city
            slots["forecast"] = bool(call.arguments.get("need_forecast", False))
        if fields.get("time"):
            slots["time"] = fields["time"]
    elif scenario == "Traffic Info Query":
        slots["road"] = fields.get("road") or (calls_by_name.get("traffic_status") or ToolCall(name="")).arguments.get("name")
    else:  # route scenarios
        slots["origin"] = fields.get("query_start_poi") or "current_location"
        if fields.get("query_end_poi"):
            slots["destination"] = fields["query_end_poi"]
        if fields.get("query_transit_poi"):
            slots["waypoints"] = [fields["query_transit_poi"]]
        mode = _travel_mode(gold_calls, context)
        if mode:
            slots["travel_mode"] = mode
        if fields.get("strategy_list"):
            slots["strategy"] = list(fields["strategy_list"])
        excluded = _excluded_lines(fields.get("llm_ner_ans"))
        if excluded:
            slots["excluded_lines"] = excluded
        if fields.get("time"):
            slots["time"] = fields["time"]
    if city:
        slots["city"] = city
    return {k: v for k, v in slots.items() if v not in (None, "", [])}


def _match_poi_response(keywords: str, fields: dict[str, Any], used: set[str]) -> str | None:
    for query_col, std_col in POI_COLUMNS:
        if std_col not in used and fields.get(query_col) == keywords and fields.get(std_col) is not None:
            return std_col
    if fields.get("poi_result") is not None and "poi_result" not in used:
        return "poi_result"
    return None


def episode_from_row(row: Mapping[str, Any], *, source: str = "", row_number: int | None = None,
                     id_prefix: str = "mb") -> Episode:
    """Build an Episode from one official row (cells as literal strings or parsed values).

    Raises RowError (with file, row and column) when the row cannot be used at all.
    Repairs and unmatched responses are recorded in ``Episode.repairs``.
    """
    def fail(column: str, message: str) -> RowError:
        return RowError(source or "<rows>", message, row=row_number, column=column)

    for column in ("query", "task_scenario", "tool_list"):
        if _is_missing(row.get(column)):
            raise fail(column, "required cell is empty")
    repairs: list[Repair] = []
    scenario = str(row["task_scenario"]).strip()
    if scenario not in FAMILY_OF:
        raise fail("task_scenario", f"unknown task scenario {scenario!r}; expected one of {', '.join(SCENARIOS)}")
    context = _parse(row.get("context"), "context", repairs) or {}
    if not isinstance(context, dict):
        raise fail("context", f"expected a dict literal, got {type(context).__name__}")
    raw_tool_list = _parse(row["tool_list"], "tool_list", repairs)
    if not isinstance(raw_tool_list, list) or any(r.column == "tool_list" for r in repairs):
        raise fail("tool_list", "expected a complete list of {'name': ..., 'arguments': {...}} literals")
    gold_calls = []
    for i, item in enumerate(raw_tool_list):
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise fail("tool_list", f"item {i} is not a {{'name', 'arguments'}} dict: {item!r:.80}")
        name = canonical_tool_name(item["name"])
        if name is None or name == "finish":
            raise fail("tool_list", f"item {i} names unknown tool {item['name']!r}")
        arguments = item.get("arguments") or {}
        if not isinstance(arguments, dict):
            raise fail("tool_list", f"item {i} arguments are not a dict")
        gold_calls.append(ToolCall(name=name, arguments=arguments))

    fields: dict[str, Any] = {}
    for column, value in row.items():
        if column in CORE_COLUMNS or column == EXTRA_CALLS_COLUMN or _is_missing(value):
            continue
        fields[column] = _parse(value, column, repairs)
    fields["intent_family"] = row.get("intent_family")
    truncated_columns = {r.column for r in repairs if r.kind == "truncated"}

    recorded: list[RecordedCall] = []
    used: set[str] = set()
    for index, call in enumerate(gold_calls):
        if call.name == "query_poi":
            column = _match_poi_response(str(call.arguments.get("keywords", "")), fields, used)
        else:
            column = RESPONSE_COLUMN_BY_TOOL.get(call.name)
            column = column if column in fields and column not in used else None
        if column is None:
            repairs.append(Repair(column=RESPONSE_COLUMN_BY_TOOL.get(call.name, "poi_result"), kind="missing_response",
                                  detail=f"gold call {index} ({call.name}) has no recorded response"))
            continue
        used.add(column)
        recorded.append(RecordedCall(name=call.name, arguments=call.arguments, response=fields.pop(column),
                                     source_column=column, gold_index=index, truncated=column in truncated_columns))
    for column in RESPONSE_COLUMNS & fields.keys():
        repairs.append(Repair(column=column, kind="unmatched_response", detail="no gold call uses this response; kept in fields"))

    extra = _parse(row.get(EXTRA_CALLS_COLUMN), EXTRA_CALLS_COLUMN, repairs)
    for i, item in enumerate(extra or []):
        name = canonical_tool_name(item.get("name")) if isinstance(item, dict) else None
        if name is None or not isinstance(item.get("arguments"), dict):
            raise fail(EXTRA_CALLS_COLUMN, f"item {i} is not a {{'name', 'arguments', 'response'}} dict")
        recorded.append(RecordedCall(name=name, arguments=item["arguments"], response=item.get("response"),
                                     source_column=EXTRA_CALLS_COLUMN))

    intent_family = str(row.get("intent_family") or FAMILY_OF[scenario]).strip()
    fields.pop("intent_family", None)
    return Episode(
        episode_id=stable_episode_id(str(row["query"]), context, scenario,
                                     [c.model_dump() for c in gold_calls], id_prefix),
        query=str(row["query"]),
        context=context,
        task_scenario=scenario,
        intent_family=intent_family,
        gold_calls=gold_calls,
        recorded=recorded,
        gold_slots=derive_gold_slots(scenario, fields, gold_calls, context),
        fields=fields,
        repairs=repairs,
        source=source,
        row=row_number,
    )


def episode_to_row(episode: Episode) -> dict[str, Any]:
    """The official row of an episode (parsed values, not literal strings)."""
    row: dict[str, Any] = {col: None for col in OFFICIAL_COLUMNS}
    row.update(query=episode.query, context=episode.context, task_scenario=episode.task_scenario,
               intent_family=episode.intent_family,
               tool_list=[{"name": c.name, "arguments": c.arguments} for c in episode.gold_calls])
    row.update(episode.fields)
    extra = []
    for call in episode.recorded:
        if call.gold_index is None:
            extra.append({"name": call.name, "arguments": call.arguments, "response": call.response})
        else:
            row[call.source_column] = call.response
    if extra:
        row[EXTRA_CALLS_COLUMN] = extra
    return row
